"""Vector sets: VADD VSIM VREM VCARD VDIM VEMB VINFO VLINKS VSETATTR
VGETATTR VRANDMEMBER VISMEMBER — replies and error strings as Redis 8's
vector-set module gives them, RESP2 and RESP3, and the key's behaviour with
the generic key commands.

Most exact-value checks use a small NOQUANT set of axis-aligned vectors, on
which cosine similarities are exactly 1, 0 and -1 and the scores exactly
1, 0.5 and 0."""
import json
import math
import struct

import pytest

from resp import Double, Error, Map, Simple
from vset_util import INVALID_VEC, WRONGTYPE, arity, fp32, load, rand_vectors, values

SQRT_HALF = struct.unpack("<f", struct.pack("<f", math.sqrt(0.5)))[0]
SCORE_B = 1 - (1 - SQRT_HALF) / 2  # [1,1,0] against [1,0,0]


def basic(c):
    """key v, NOQUANT, dim 3: a=[1,0,0] b=[1,1,0] c=[0,1,0] d=[-1,0,0];
    a and c carry attributes."""
    assert c.cmd("VADD", "v", *values([1, 0, 0]), "a", "NOQUANT", "SETATTR", '{"x":1}') in (1, True)
    assert c.cmd("VADD", "v", *values([1, 1, 0]), "b", "NOQUANT") in (1, True)
    assert c.cmd("VADD", "v", *values([0, 1, 0]), "c", "NOQUANT", "SETATTR", '{"x":3}') in (1, True)
    assert c.cmd("VADD", "v", *values([-1, 0, 0]), "d", "NOQUANT") in (1, True)


# ---- VADD -----------------------------------------------------------------

def test_vadd_new_and_update_replies(conn, conn3):
    r1 = conn.cmd("VADD", "k", *values([1, 0, 0]), "e1")
    assert r1 == 1 and type(r1) is int
    r0 = conn.cmd("VADD", "k", *values([0, 1, 0]), "e1")
    assert r0 == 0 and type(r0) is int
    assert conn3.cmd("VADD", "k", *values([0, 0, 1]), "e2") is True
    assert conn3.cmd("VADD", "k", *values([0, 0, 1]), "e2") is False
    assert conn.cmd_raw("VADD", "k", *values([1, 1, 1]), "e3") == b":1\r\n"
    assert conn3.cmd_raw("VADD", "k", *values([1, 1, 1]), "e3") == b"#f\r\n"
    assert conn.cmd("VCARD", "k") == 3


def test_vadd_fp32_and_values_are_the_same(conn):
    assert conn.cmd("VADD", "k", *fp32([0.25, -1.5, 3.0]), "x", "NOQUANT") == 1
    assert conn.cmd("VADD", "k", *values([0.25, -1.5, 3.0]), "y", "NOQUANT") == 1
    ex = [float(v) for v in conn.cmd("VEMB", "k", "x")]
    ey = [float(v) for v in conn.cmd("VEMB", "k", "y")]
    assert ex == ey
    for got, want in zip(ex, [0.25, -1.5, 3.0]):
        assert abs(got - want) < 1e-5
    reply = conn.cmd("VSIM", "k", "ELE", "x", "WITHSCORES", "COUNT", "2")
    assert len(reply) == 4 and {reply[0], reply[2]} == {b"x", b"y"}
    assert abs(float(reply[1]) - 1) < 1e-6 and abs(float(reply[3]) - 1) < 1e-6


def test_vadd_update_replaces_the_vector(conn):
    assert conn.cmd("VADD", "k", *values([1, 0, 0]), "a", "NOQUANT") == 1
    assert conn.cmd("VADD", "k", *values([0, 0, 1]), "b", "NOQUANT") == 1
    assert conn.cmd("VADD", "k", *values([0, 1, 0]), "a", "NOQUANT") == 0
    assert conn.cmd("VEMB", "k", "a") == [b"0", b"1", b"0"]
    assert conn.cmd("VCARD", "k") == 2
    assert conn.cmd("VSIM", "k", *values([0, 1, 0]), "COUNT", "1") == [b"a"]


def test_vadd_update_attributes(conn):
    assert conn.cmd("VADD", "k", *values([1, 0]), "a", "SETATTR", '{"x":1}') == 1
    assert conn.cmd("VGETATTR", "k", "a") == b'{"x":1}'
    # No SETATTR on update: the attributes stay.
    assert conn.cmd("VADD", "k", *values([0, 1]), "a") == 0
    assert conn.cmd("VGETATTR", "k", "a") == b'{"x":1}'
    assert conn.cmd("VADD", "k", *values([0, 1]), "a", "SETATTR", '{"x":2}') == 0
    assert conn.cmd("VGETATTR", "k", "a") == b'{"x":2}'
    info = conn.cmd("VINFO", "k")
    assert dict(zip(info[::2], info[1::2]))["attributes-count"] == 1
    # SETATTR "" on update removes them.
    assert conn.cmd("VADD", "k", *values([0, 1]), "a", "SETATTR", "") == 0
    assert conn.cmd("VGETATTR", "k", "a") is None
    info = conn.cmd("VINFO", "k")
    assert dict(zip(info[::2], info[1::2]))["attributes-count"] == 0


def test_vadd_cas(conn, conn3):
    assert conn.cmd("VADD", "k", *values([1, 0, 0]), "a", "CAS") == 1   # creates the key
    assert conn.cmd("VADD", "k", *values([0, 1, 0]), "b", "CAS") == 1   # new element
    assert conn.cmd("VADD", "k", *values([0, 0, 1]), "b", "CAS") == 0   # update
    assert conn3.cmd("VADD", "k", *values([1, 1, 0]), "c", "CAS", "SETATTR", '{"y":1}') is True
    assert conn.cmd("VCARD", "k") == 3
    assert conn.cmd("VGETATTR", "k", "c") == b'{"y":1}'
    assert conn.cmd("VISMEMBER", "k", "c") == 1


def test_vadd_arity(conn):
    assert conn.cmd("VADD") == arity("VADD")
    assert conn.cmd("VADD", "k") == arity("VADD")
    assert conn.cmd("VADD", "k", "VALUES", "1") == arity("VADD")
    assert conn.cmd("VADD", "k", "VALUES", "1", "1") == arity("VADD")   # no element
    assert conn.cmd("VADD", "k", "VALUES", "3", "1", "2", "3") == arity("VADD")
    assert conn.cmd("VADD", "k", *fp32([1, 2])) == arity("VADD")
    assert conn.cmd("VADD", "k", "REDUCE", "2", "VALUES", "3", "1", "2", "3") == arity("VADD")
    assert conn.cmd("EXISTS", "k") == 0


@pytest.mark.parametrize("args", [
    ["FOO", "1", "e"],
    ["VALUES", "x", "1", "e"],
    ["VALUES", "0", "e", "f"],
    ["VALUES", "-1", "1", "e"],
    ["VALUES", "2", "1", "abc", "e"],
    ["VALUES", "3", "1", "2", "e"],            # the element is read as the 3rd value
    ["VALUES", "2", "1", "nan", "e"],
    ["VALUES", "2", "1", "1x", "e"],
    ["VALUES", "65537", "1", "e"],
    ["VALUES", "9223372036854775807", "0", "e"],
    ["VALUES", "99999999999999999999", "0", "e"],
    ["FP32", b"\x00\x00\x80?\x00", "e"],       # 5 bytes
    ["FP32", b"", "e"],
    ["REDUCE", "0", "VALUES", "2", "1", "2", "e"],
    ["REDUCE", "-1", "VALUES", "2", "1", "2", "e"],
    ["REDUCE", "x", "VALUES", "2", "1", "2", "e"],
    ["REDUCE", "3", "VALUES", "2", "1", "2", "e"],   # reduce > dim
    ["REDUCE", "2", "FOO", "2", "1", "2", "e"],
    ["REDUCE", "1", "VALUES", "e"],
    ["CAS", "VALUES", "2", "1", "2", "e"],      # options only after the element
])
def test_vadd_invalid_vector(conn, args):
    assert conn.cmd("VADD", "k", *args) == INVALID_VEC
    assert conn.cmd("EXISTS", "k") == 0


def test_vadd_dimension_limit(conn):
    big = [0.0] * 65536
    big[7] = 1.0
    assert conn.cmd("VADD", "big", *fp32(big), "e", "NOQUANT") == 1
    assert conn.cmd("VDIM", "big") == 65536
    assert conn.cmd("VADD", "big2", *fp32(big + [1.0]), "e") == INVALID_VEC


@pytest.mark.parametrize("opts,err", [
    (["FOO"], "ERR invalid option after element"),
    (["EF"], "ERR invalid option after element"),
    (["M"], "ERR invalid option after element"),
    (["SETATTR"], "ERR invalid option after element"),
    (["CAS", "NOQUANT", "BAR"], "ERR invalid option after element"),
    (["REDUCE", "2"], "ERR invalid option after element"),
    (["EF", "0"], "ERR invalid EF"),
    (["EF", "-5"], "ERR invalid EF"),
    (["EF", "1000001"], "ERR invalid EF"),
    (["EF", "abc"], "ERR invalid EF"),
    (["EF", "1.5"], "ERR invalid EF"),
    (["M", "3"], "ERR invalid M"),
    (["M", "4097"], "ERR invalid M"),
    (["M", "x"], "ERR invalid M"),
    (["M", "-16"], "ERR invalid M"),
    (["EF", "0", "FOO"], "ERR invalid EF"),          # first bad option wins
    (["FOO", "EF", "0"], "ERR invalid option after element"),
    (["M", "2", "EF", "0"], "ERR invalid M"),
])
def test_vadd_bad_options(conn, opts, err):
    assert conn.cmd("VADD", "k", *values([1, 2]), "e", *opts) == Error(err)
    assert conn.cmd("EXISTS", "k") == 0


def test_vadd_option_limits_accepted(conn):
    assert conn.cmd("VADD", "k1", *values([1, 2]), "e", "EF", "1", "M", "4") == 1
    assert conn.cmd("VADD", "k2", *values([1, 2]), "e", "EF", "1000000", "M", "4096") == 1
    assert conn.cmd("VADD", "k3", *values([1, 2]), "e", "cas", "noquant", "ef", "10", "m", "8",
                    "setattr", "{}") == 1
    assert conn.cmd("VADD", "k4", *values([1, 2]), "e", "NOQUANT", "BIN", "Q8") == 1  # last wins
    info = conn.cmd("VINFO", "k4")
    assert info[1] == "int8"
    info = conn.cmd("VINFO", "k2")
    assert dict(zip(info[::2], info[1::2]))["hnsw-m"] == 4096


def test_vadd_wrongtype_and_error_precedence(conn):
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VADD", "str", *values([1, 2]), "e") == WRONGTYPE
    # Vector and option errors are found before the key is looked at.
    assert conn.cmd("VADD", "str", "VALUES", "2", "1", "x", "e") == INVALID_VEC
    assert conn.cmd("VADD", "str", *values([1, 2]), "e", "EF", "0") == Error("ERR invalid EF")
    assert conn.cmd("VADD", "str", *values([1, 2]), "e", "FOO") == Error("ERR invalid option after element")
    assert conn.cmd("GET", "str") == b"x"


def test_vadd_mismatch_with_existing_set(conn):
    assert conn.cmd("VADD", "k", *values([1, 2, 3]), "a") == 1   # Q8, M 16
    assert conn.cmd("VADD", "k", *values([1, 2, 3]), "b", "NOQUANT") == \
        Error("ERR asked quantization mismatch with existing vector set")
    assert conn.cmd("VADD", "k", *values([1, 2, 3]), "b", "BIN") == \
        Error("ERR asked quantization mismatch with existing vector set")
    assert conn.cmd("VADD", "k", *values([1, 2, 3]), "b", "Q8") == 1
    assert conn.cmd("VADD", "k", *values([1, 2, 3]), "c", "M", "32") == \
        Error("ERR asked M value mismatch with existing vector set")
    assert conn.cmd("VADD", "k", *values([1, 2, 3]), "c", "M", "16") == 1
    assert conn.cmd("VADD", "k", *values([1, 2]), "d") == \
        Error("ERR Vector dimension mismatch - got 2 but set has 3")
    assert conn.cmd("VADD", "k", *fp32([1, 2, 3, 4]), "d") == \
        Error("ERR Vector dimension mismatch - got 4 but set has 3")
    # quantisation is checked before M, M before the dimension
    assert conn.cmd("VADD", "k", *values([1, 2]), "d", "NOQUANT", "M", "8") == \
        Error("ERR asked quantization mismatch with existing vector set")
    assert conn.cmd("VADD", "k", *values([1, 2]), "d", "M", "8") == \
        Error("ERR asked M value mismatch with existing vector set")
    assert conn.cmd("VADD", "k", "REDUCE", "2", *values([1, 2, 3]), "d") == \
        Error("ERR cannot add projection to existing set without projection")
    assert conn.cmd("VADD", "k", "REDUCE", "2", *values([1, 2, 3, 4]), "d") == \
        Error("ERR Vector dimension mismatch - got 4 but set has 3")
    assert conn.cmd("VCARD", "k") == 3

    assert conn.cmd("VADD", "n", *values([1, 0]), "a", "NOQUANT") == 1
    assert conn.cmd("VADD", "n", *values([0, 1]), "b") == \
        Error("ERR asked quantization mismatch with existing vector set")
    assert conn.cmd("VADD", "n", *values([0, 1]), "b", "NOQUANT") == 1
    assert conn.cmd("VADD", "m", *values([1, 0]), "a", "M", "8") == 1
    assert conn.cmd("VADD", "m", *values([0, 1]), "b") == \
        Error("ERR asked M value mismatch with existing vector set")
    assert conn.cmd("VADD", "m", *values([0, 1]), "b", "M", "8") == 1


def test_vadd_reduce(conn):
    assert conn.cmd("VADD", "r", "REDUCE", "2", *values([1, 2, 3, 4]), "a", "NOQUANT") == 1
    assert conn.cmd("VDIM", "r") == 2
    info = conn.cmd("VINFO", "r")
    d = dict(zip(info[::2], info[1::2]))
    assert d["vector-dim"] == 2 and d["projection-input-dim"] == 4
    # The projection is Redis's deterministic +-1/sqrt(n) matrix:
    # [1,2,3,4] -> [(1+2+3+4)/2, (1-2+3-4)/2] = [5, -1].
    emb = [float(x) for x in conn.cmd("VEMB", "r", "a")]
    assert len(emb) == 2
    assert abs(emb[0] - 5) < 1e-4 and abs(emb[1] + 1) < 1e-4
    assert conn.cmd("VADD", "r", "REDUCE", "2", *values([4, 3, 2, 1]), "b", "NOQUANT") == 1
    emb = [float(x) for x in conn.cmd("VEMB", "r", "b")]
    assert abs(emb[0] - 5) < 1e-4 and abs(emb[1] - 1) < 1e-4
    assert conn.cmd("VADD", "r", *values([4, 3, 2, 1]), "c", "NOQUANT") == \
        Error("ERR Vector dimension mismatch - got 4 but set has 2")
    assert conn.cmd("VADD", "r", *values([4, 3]), "c", "NOQUANT") == \
        Error("ERR Vector dimension mismatch - got 2 but set has 2")
    assert conn.cmd("VADD", "r", "REDUCE", "3", *values([4, 3, 2, 1]), "c", "NOQUANT") == \
        Error("ERR Vector dimension mismatch - got 4 but set has 2")
    assert conn.cmd("VADD", "r", "REDUCE", "2", *values([4, 3, 2]), "c", "NOQUANT") == \
        Error("ERR Input dimension mismatch for projection - got 3 but projection expects 4")
    assert conn.cmd("VADD", "r", "REDUCE", "2", *values([4, 3, 2, 1, 0]), "c", "NOQUANT") == \
        Error("ERR Input dimension mismatch for projection - got 5 but projection expects 4")
    # VSIM takes full-size queries (projected) and reduced ones as they are.
    assert conn.cmd("VSIM", "r", *values([1, 2, 3, 4]), "COUNT", "1") == [b"a"]
    assert conn.cmd("VSIM", "r", *values([5, 1]), "COUNT", "1") == [b"b"]
    assert conn.cmd("VSIM", "r", *values([1, 2, 3]), "COUNT", "1") == \
        Error("ERR Input dimension mismatch for projection - got 3 but projection expects 4")
    assert conn.cmd("VSIM", "r", "ELE", "a", "COUNT", "1") == [b"a"]


def test_vadd_zero_vector(conn):
    assert conn.cmd("VADD", "z", *values([0, 0, 0]), "zero", "NOQUANT") == 1
    assert conn.cmd("VADD", "z", *values([1, 0, 0]), "x", "NOQUANT") == 1
    assert conn.cmd("VEMB", "z", "zero") == [b"0", b"0", b"0"]
    # A zero vector is at distance 1 (score 0.5) from everything.
    reply = conn.cmd("VSIM", "z", *values([1, 0, 0]), "WITHSCORES")
    assert reply == [b"x", b"1", b"zero", b"0.5"]
    assert conn.cmd("VADD", "zq", *values([0, 0]), "zero") == 1
    assert conn.cmd("VSIM", "zq", *values([0, 0]), "WITHSCORES") == [b"zero", b"0.5"]


# ---- VSIM -----------------------------------------------------------------

def test_vsim_plain_and_count(conn, conn3):
    basic(conn)
    assert conn.cmd("VSIM", "v", *values([1, 0, 0])) == [b"a", b"b", b"c", b"d"]
    assert conn3.cmd("VSIM", "v", *values([1, 0, 0])) == [b"a", b"b", b"c", b"d"]
    assert conn.cmd("VSIM", "v", *fp32([1, 0, 0]), "COUNT", "2") == [b"a", b"b"]
    assert conn.cmd("VSIM", "v", "ELE", "d", "COUNT", "1") == [b"d"]
    assert conn.cmd("VSIM", "v", "ele", "c", "count", "2") == [b"c", b"b"]
    assert conn.cmd("VSIM", "v", *values([2, 0, 0]), "COUNT", "1000000") == [b"a", b"b", b"c", b"d"]
    assert conn.cmd_raw("VSIM", "v", *values([1, 0, 0]), "COUNT", "1") == b"*1\r\n$1\r\na\r\n"


def test_vsim_withscores(conn, conn3):
    basic(conn)
    reply = conn.cmd("VSIM", "v", *values([1, 0, 0]), "WITHSCORES")
    assert reply[0::2] == [b"a", b"b", b"c", b"d"]
    assert reply[1] == b"1" and reply[5] == b"0.5" and reply[7] == b"0"
    assert abs(float(reply[3]) - SCORE_B) < 1e-6
    m = conn3.cmd("VSIM", "v", *values([1, 0, 0]), "WITHSCORES")
    assert isinstance(m, Map)
    assert [k for k, _ in m] == [b"a", b"b", b"c", b"d"]
    assert all(isinstance(s, Double) for _, s in m)
    assert m[0][1] == 1.0 and m[2][1] == 0.5 and m[3][1] == 0.0
    assert abs(m[1][1] - SCORE_B) < 1e-6
    assert conn.cmd_raw("VSIM", "v", "ELE", "a", "WITHSCORES", "COUNT", "1") == b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert conn3.cmd_raw("VSIM", "v", "ELE", "a", "WITHSCORES", "COUNT", "1") == b"%1\r\n$1\r\na\r\n,1\r\n"


def test_vsim_withattribs(conn, conn3):
    basic(conn)
    reply = conn.cmd("VSIM", "v", *values([1, 0, 0]), "WITHATTRIBS")
    assert reply == [b"a", b'{"x":1}', b"b", None, b"c", b'{"x":3}', b"d", None]
    m = conn3.cmd("VSIM", "v", *values([1, 0, 0]), "WITHATTRIBS")
    assert isinstance(m, Map)
    assert list(m) == [(b"a", b'{"x":1}'), (b"b", None), (b"c", b'{"x":3}'), (b"d", None)]
    assert conn3.cmd_raw("VSIM", "v", "ELE", "b", "WITHATTRIBS", "COUNT", "1") == b"%1\r\n$1\r\nb\r\n_\r\n"
    assert conn.cmd_raw("VSIM", "v", "ELE", "b", "WITHATTRIBS", "COUNT", "1") == b"*2\r\n$1\r\nb\r\n$-1\r\n"


@pytest.mark.parametrize("order", [("WITHSCORES", "WITHATTRIBS"), ("WITHATTRIBS", "WITHSCORES")])
def test_vsim_withscores_withattribs(conn, conn3, order):
    basic(conn)
    reply = conn.cmd("VSIM", "v", *values([1, 0, 0]), *order)
    assert len(reply) == 12
    assert reply[0::3] == [b"a", b"b", b"c", b"d"]
    assert [reply[1], reply[7], reply[10]] == [b"1", b"0.5", b"0"]
    assert reply[2::3] == [b'{"x":1}', None, b'{"x":3}', None]
    m = conn3.cmd("VSIM", "v", *values([1, 0, 0]), *order)
    assert isinstance(m, Map) and len(m) == 4
    assert m[0] == (b"a", [1.0, b'{"x":1}'])
    assert isinstance(m[0][1][0], Double)
    assert m[2] == (b"c", [0.5, b'{"x":3}'])
    assert m[3] == (b"d", [0.0, None])
    assert conn3.cmd_raw("VSIM", "v", "ELE", "a", *order, "COUNT", "1") == \
        b'%1\r\n$1\r\na\r\n*2\r\n,1\r\n$7\r\n{"x":1}\r\n'
    assert conn.cmd_raw("VSIM", "v", "ELE", "a", *order, "COUNT", "1") == \
        b'*3\r\n$1\r\na\r\n$1\r\n1\r\n$7\r\n{"x":1}\r\n'


def test_vsim_epsilon(conn):
    basic(conn)
    # EPSILON e keeps the elements with 1 - score <= e.
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "0.1") == [b"a"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "0.2") == [b"a", b"b"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "0.6") == [b"a", b"b", b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "1.5") == [b"a", b"b", b"c", b"d"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "1e-9") == [b"a"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "0.6", "COUNT", "2") == [b"a", b"b"]
    assert conn.cmd("VSIM", "v", *values([0, 0, 1]), "EPSILON", "0.4") == []


def test_vsim_ef_truth_nothread(conn):
    basic(conn)
    want = [b"a", b"b", b"c", b"d"]
    for opts in (["EF", "1"], ["EF", "1000000"], ["TRUTH"], ["NOTHREAD"], ["TRUTH", "NOTHREAD", "EF", "5"],
                 ["FILTER-EF", "1"], ["truth"]):
        assert conn.cmd("VSIM", "v", *values([1, 0, 0]), *opts) == want, opts


def test_vsim_repeated_options_last_wins(conn):
    basic(conn)
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "COUNT", "1", "COUNT", "3") == [b"a", b"b", b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x == 1", "FILTER", ".x == 3") == [b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "WITHSCORES", "WITHSCORES", "COUNT", "1") == [b"a", b"1"]


def test_vsim_huge_counts_are_capped(new_server):
    """COUNT, EF and FILTER-EF far above the set size neither fail nor
    allocate for the asked size: the search is bounded by the set. (A
    private server: an overflow found by the sanitizers here stays here.)"""
    srv = new_server()
    conn = srv.conn()
    basic(conn)
    want = [b"a", b"b", b"c", b"d"]
    big = "9223372036854775807"
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "COUNT", big) == want
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "COUNT", big, "TRUTH") == want
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "COUNT", big, "EF", "1000000", "FILTER-EF", big,
                    "FILTER", ".x > 0") == [b"a", b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "EPSILON", "1e308") == want
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "COUNT", "9223372036854775808") == Error("ERR invalid COUNT")
    assert conn.cmd("PING") == "PONG"
    conn.close()


def test_resp3_integer_and_bulk_forms(conn, conn3):
    basic(conn)
    assert conn3.cmd_raw("VCARD", "v") == b":4\r\n"
    assert conn3.cmd_raw("VDIM", "v") == b":3\r\n"
    assert conn3.cmd_raw("VGETATTR", "v", "a") == b'$7\r\n{"x":1}\r\n'
    assert conn3.cmd_raw("VSETATTR", "v", "b", "{}") == b"#t\r\n"
    assert conn3.cmd_raw("VSETATTR", "v", "zz", "{}") == b"#f\r\n"
    assert conn3.cmd_raw("VREM", "v", "b") == b"#t\r\n"
    assert conn3.cmd_raw("VRANDMEMBER", "v", "0") == b"*0\r\n"
    reply = conn3.cmd("VRANDMEMBER", "v", "-3")
    assert type(reply) is list and len(reply) == 3
    assert conn3.cmd_raw("VDIM", "nokey") == b"-ERR key does not exist\r\n"
    assert conn.cmd_raw("VDIM", "nokey") == b"-ERR key does not exist\r\n"
    assert conn3.cmd_raw("VSIM", "v", "ELE", "nosuch") == b"-ERR element not found in set\r\n"


def test_vsim_missing_key_is_empty(conn, conn3):
    assert conn.cmd_raw("VSIM", "nokey", *values([1, 0])) == b"*0\r\n"
    assert conn3.cmd_raw("VSIM", "nokey", *values([1, 0]), "WITHSCORES") == b"*0\r\n"
    # before anything else is validated
    assert conn.cmd("VSIM", "nokey", "ELE", "x") == []
    assert conn.cmd("VSIM", "nokey", "FOO", "x") == []
    assert conn.cmd("VSIM", "nokey", *values([1, 0]), "COUNT", "-1", "BAR") == []
    assert conn.cmd("VSIM", "nokey", *values([1, 0]), "FILTER", "((((") == []


def test_vsim_arity_and_wrongtype(conn):
    assert conn.cmd("VSIM") == arity("VSIM")
    assert conn.cmd("VSIM", "k") == arity("VSIM")
    assert conn.cmd("VSIM", "k", "ELE") == arity("VSIM")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VSIM", "str", *values([1, 0])) == WRONGTYPE
    assert conn.cmd("VSIM", "str", "FOO", "bar") == WRONGTYPE
    conn.cmd("LPUSH", "list", "x")
    assert conn.cmd("VSIM", "list", "ELE", "x") == WRONGTYPE


def test_vsim_query_errors(conn):
    basic(conn)
    assert conn.cmd("VSIM", "v", "ELE", "nosuch") == Error("ERR element not found in set")
    assert conn.cmd("VSIM", "v", "ELE", "nosuch", "COUNT", "0") == Error("ERR element not found in set")
    assert conn.cmd("VSIM", "v", "FOO", "1") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "VALUES", "3", "1", "x", "0") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "VALUES", "3", "1", "0") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "VALUES", "0", "1") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "VALUES", "x", "1") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "VALUES", "65537", "1") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "FP32", b"\x00\x00\x00") == INVALID_VEC
    assert conn.cmd("VSIM", "v", "REDUCE", "2", *values([1, 0, 0])) == INVALID_VEC
    assert conn.cmd("VSIM", "v", *values([1, 0])) == \
        Error("ERR Vector dimension mismatch - got 2 but set has 3")
    assert conn.cmd("VSIM", "v", *fp32([1, 0, 0, 0])) == \
        Error("ERR Vector dimension mismatch - got 4 but set has 3")
    # vector errors come before option errors
    assert conn.cmd("VSIM", "v", *values([1, 0]), "COUNT", "0") == \
        Error("ERR Vector dimension mismatch - got 2 but set has 3")
    assert conn.cmd("VSIM", "v", "VALUES", "3", "1", "x", "0", "FOO") == INVALID_VEC


@pytest.mark.parametrize("opts,err", [
    (["COUNT", "0"], "ERR invalid COUNT"),
    (["COUNT", "-1"], "ERR invalid COUNT"),
    (["COUNT", "x"], "ERR invalid COUNT"),
    (["COUNT", "1.5"], "ERR invalid COUNT"),
    (["EPSILON", "0"], "ERR invalid EPSILON"),
    (["EPSILON", "-0.5"], "ERR invalid EPSILON"),
    (["EPSILON", "abc"], "ERR invalid EPSILON"),
    (["EPSILON", "nan"], "ERR invalid EPSILON"),
    (["EF", "0"], "ERR invalid EF"),
    (["EF", "-1"], "ERR invalid EF"),
    (["EF", "1000001"], "ERR invalid EF"),
    (["EF", "ten"], "ERR invalid EF"),
    (["FILTER-EF", "0"], "ERR invalid FILTER-EF"),
    (["FILTER-EF", "-3"], "ERR invalid FILTER-EF"),
    (["FILTER-EF", "x"], "ERR invalid FILTER-EF"),
    (["FOO"], "ERR syntax error in VSIM command"),
    (["COUNT"], "ERR syntax error in VSIM command"),
    (["EPSILON"], "ERR syntax error in VSIM command"),
    (["EF"], "ERR syntax error in VSIM command"),
    (["FILTER"], "ERR syntax error in VSIM command"),
    (["FILTER-EF"], "ERR syntax error in VSIM command"),
    (["WITHSCORES", "COUNT"], "ERR syntax error in VSIM command"),
    (["CAS"], "ERR syntax error in VSIM command"),
    (["NOQUANT"], "ERR syntax error in VSIM command"),
    (["COUNT", "0", "EF", "0"], "ERR invalid COUNT"),
    (["EF", "0", "COUNT", "0"], "ERR invalid EF"),
    (["FOO", "COUNT", "0"], "ERR syntax error in VSIM command"),
    (["COUNT", "2", "EPSILON", "0", "FOO"], "ERR invalid EPSILON"),
    (["FILTER", ".x == 1 $"], "ERR syntax error in FILTER expression near: $"),
    (["FILTER", '.x == "abc'], 'ERR syntax error in FILTER expression near: .x == "abc'),
    (["FILTER", ".x == 1 $", "COUNT", "0"], "ERR syntax error in FILTER expression near: $"),
    (["COUNT", "0", "FILTER", ".x == 1 $"], "ERR invalid COUNT"),
])
def test_vsim_bad_options(conn, conn3, opts, err):
    basic(conn)
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), *opts) == Error(err)
    assert conn3.cmd("VSIM", "v", "ELE", "a", *opts) == Error(err)


def test_vsim_filter_basic(conn, conn3):
    basic(conn)
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x > 0") == [b"a", b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x > 2") == [b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x > 5") == []
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".nosuch == 1") == []
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x >= 1", "WITHSCORES") == \
        [b"a", b"1", b"c", b"0.5"]
    assert conn3.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x == 3", "WITHATTRIBS") == \
        Map([(b"c", b'{"x":3}')])
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x >= 1", "TRUTH") == [b"a", b"c"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x >= 1", "COUNT", "1") == [b"a"]
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x >= 1", "FILTER-EF", "1000") == [b"a", b"c"]
    # an attribute that is not JSON never matches
    assert conn.cmd("VSETATTR", "v", "b", "not json") == 1
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x > 0") == [b"a", b"c"]


# ---- VREM -----------------------------------------------------------------

def test_vrem(conn, conn3):
    basic(conn)
    r = conn.cmd("VREM", "v", "b")
    assert r == 1 and type(r) is int
    assert conn.cmd("VREM", "v", "b") == 0
    assert conn3.cmd("VREM", "v", "c") is True
    assert conn3.cmd("VREM", "v", "c") is False
    assert conn3.cmd("VREM", "nokey", "c") is False
    assert conn.cmd_raw("VREM", "nokey", "c") == b":0\r\n"
    assert conn.cmd("VCARD", "v") == 2
    assert conn.cmd("VSIM", "v", *values([1, 0, 0])) == [b"a", b"d"]
    assert conn.cmd("VISMEMBER", "v", "b") == 0
    assert conn.cmd("VEMB", "v", "b") is None
    assert conn.cmd("VREM", "v", "a") == 1
    assert conn.cmd("VREM", "v", "d") == 1
    # the last VREM deletes the key
    assert conn.cmd("EXISTS", "v") == 0
    assert conn.cmd("TYPE", "v") == "none"
    assert conn.cmd("VCARD", "v") == 0
    # a new VADD creates a fresh set (any dimension, any quantisation)
    assert conn.cmd("VADD", "v", *values([1, 2]), "n", "BIN") == 1
    assert conn.cmd("VDIM", "v") == 2


def test_vrem_arity_wrongtype(conn):
    assert conn.cmd("VREM", "k") == arity("VREM")
    assert conn.cmd("VREM", "k", "a", "b") == arity("VREM")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VREM", "str", "a") == WRONGTYPE


# ---- VCARD VDIM VISMEMBER ------------------------------------------------------

def test_vcard_vdim_vismember(conn, conn3):
    basic(conn)
    assert conn.cmd("VCARD", "v") == 4
    assert conn.cmd("VCARD", "nokey") == 0
    assert conn.cmd("VDIM", "v") == 3
    assert conn.cmd("VDIM", "nokey") == Error("ERR key does not exist")
    assert conn.cmd("VISMEMBER", "v", "a") == 1
    assert conn.cmd("VISMEMBER", "v", "zz") == 0
    assert conn.cmd("VISMEMBER", "nokey", "a") == 0
    assert conn3.cmd("VISMEMBER", "v", "a") is True
    assert conn3.cmd("VISMEMBER", "v", "zz") is False
    assert conn3.cmd_raw("VISMEMBER", "nokey", "a") == b"#f\r\n"
    conn.cmd("SET", "str", "x")
    for c in (("VCARD", "str"), ("VDIM", "str"), ("VISMEMBER", "str", "a")):
        assert conn.cmd(*c) == WRONGTYPE, c
    assert conn.cmd("VCARD") == arity("VCARD")
    assert conn.cmd("VCARD", "a", "b") == arity("VCARD")
    assert conn.cmd("VDIM") == arity("VDIM")
    assert conn.cmd("VDIM", "a", "b") == arity("VDIM")
    assert conn.cmd("VISMEMBER", "v") == arity("VISMEMBER")
    assert conn.cmd("VISMEMBER", "v", "a", "b") == arity("VISMEMBER")


# ---- VEMB -----------------------------------------------------------------

def test_vemb_plain(conn, conn3):
    basic(conn)
    assert conn.cmd("VEMB", "v", "a") == [b"1", b"0", b"0"]
    assert conn.cmd("VEMB", "v", "d") == [b"-1", b"0", b"0"]
    emb = conn3.cmd("VEMB", "v", "c")
    assert emb == [0.0, 1.0, 0.0] and all(isinstance(x, Double) for x in emb)
    assert conn3.cmd_raw("VEMB", "v", "a") == b"*3\r\n,1\r\n,0\r\n,0\r\n"
    assert conn.cmd_raw("VEMB", "v", "nosuch") == b"$-1\r\n"
    assert conn.cmd_raw("VEMB", "nokey", "a") == b"$-1\r\n"
    assert conn3.cmd_raw("VEMB", "nokey", "a") == b"_\r\n"
    assert conn3.cmd_raw("VEMB", "v", "nosuch", "RAW") == b"_\r\n"


def test_vemb_raw_f32(conn, conn3):
    assert conn.cmd("VADD", "k", *values([3, 0, 4]), "a", "NOQUANT") == 1
    reply = conn.cmd("VEMB", "k", "a", "RAW")
    assert len(reply) == 3
    assert reply[0] == Simple("f32") and isinstance(reply[0], Simple)
    assert len(reply[1]) == 12   # the normalised vector as float32
    got = struct.unpack("<3f", reply[1])
    assert abs(got[0] - 0.6) < 1e-7 and got[1] == 0 and abs(got[2] - 0.8) < 1e-7
    assert reply[2] == b"5"
    reply3 = conn3.cmd("VEMB", "k", "a", "raw")
    assert reply3[0] == "f32" and reply3[2] == 5.0 and isinstance(reply3[2], Double)


def test_vemb_raw_int8(conn, conn3):
    assert conn.cmd("VADD", "k", *values([-2, 0, 0]), "a") == 1
    assert conn.cmd("VADD", "k", *values([0, 3, 0]), "b") == 1
    reply = conn.cmd("VEMB", "k", "a", "RAW")
    assert reply == [Simple("int8"), b"\x81\x00\x00", b"2", b"1"]
    assert isinstance(reply[0], Simple)
    assert conn.cmd_raw("VEMB", "k", "b", "RAW") == b"*4\r\n+int8\r\n$3\r\n\x00\x7f\x00\r\n$1\r\n3\r\n$1\r\n1\r\n"
    assert conn3.cmd_raw("VEMB", "k", "b", "RAW") == b"*4\r\n+int8\r\n$3\r\n\x00\x7f\x00\r\n,3\r\n,1\r\n"
    emb = [float(x) for x in conn.cmd("VEMB", "k", "a")]
    assert abs(emb[0] + 2) < 1e-6 and emb[1:] == [0, 0]
    # the Q8 range is the largest |component| of the normalised vector
    assert conn.cmd("VADD", "k", *values([1, 1, 0]), "c") == 1
    reply = conn.cmd("VEMB", "k", "c", "RAW")
    assert reply[1] == b"\x7f\x7f\x00"
    assert abs(float(reply[2]) - math.sqrt(2)) < 1e-6
    assert abs(float(reply[3]) - math.sqrt(0.5)) < 1e-6


def test_vemb_raw_bin(conn, conn3):
    assert conn.cmd("VADD", "k", *values([1, -1, 0.5, 0]), "a", "BIN") == 1
    reply = conn.cmd("VEMB", "k", "a", "RAW")
    # one bit per component, set when the component is > 0, in 64-bit words
    assert reply == [Simple("bin"), struct.pack("<Q", 0b0101), b"1.5"]
    assert conn.cmd("VEMB", "k", "a") == [b"1", b"-1", b"1", b"-1"]
    vec = [1.0 if i % 3 == 0 else -1.0 for i in range(70)]
    assert conn.cmd("VADD", "k2", *fp32(vec), "a", "BIN") == 1
    reply = conn3.cmd("VEMB", "k2", "a", "RAW")
    bits = sum(1 << i for i in range(70) if i % 3 == 0)
    assert reply[0] == "bin"
    assert reply[1] == struct.pack("<QQ", bits & (2**64 - 1), bits >> 64)
    assert abs(reply[2] - math.sqrt(70)) < 1e-5


def test_vemb_errors(conn):
    basic(conn)
    assert conn.cmd("VEMB", "v") == arity("VEMB")
    assert conn.cmd("VEMB", "v", "a", "FOO") == Error("ERR invalid option")
    assert conn.cmd("VEMB", "v", "a", "RAW", "FOO") == Error("ERR invalid option")
    assert conn.cmd("VEMB", "nokey", "a", "FOO") == Error("ERR invalid option")
    assert len(conn.cmd("VEMB", "v", "a", "RAW", "RAW")) == 3
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VEMB", "str", "a") == WRONGTYPE
    assert conn.cmd("VEMB", "str", "a", "RAW") == WRONGTYPE
    assert conn.cmd("VEMB", "str", "a", "BAD") == Error("ERR invalid option")


# ---- VLINKS ---------------------------------------------------------------

def test_vlinks(conn, conn3):
    basic(conn)
    want = {b"a": 1.0, b"b": SCORE_B, b"c": 0.5, b"d": 0.0}   # scores against a
    links = conn.cmd("VLINKS", "v", "a")
    assert isinstance(links, list) and len(links) >= 1
    assert links[-1], "level 0 of a connected graph has links"
    for level in links:
        assert len(set(level)) == len(level) and set(level) <= {b"b", b"c", b"d"}, links
    ws = conn.cmd("VLINKS", "v", "a", "WITHSCORES")
    assert [lv[0::2] for lv in ws] == links
    for lv in ws:
        for name, score in zip(lv[0::2], lv[1::2]):
            assert abs(float(score) - want[name]) < 1e-6, (name, score)
    ws3 = conn3.cmd("VLINKS", "v", "a", "withscores")
    assert all(isinstance(level, Map) for level in ws3)
    assert [[k for k, _ in lv] for lv in ws3] == links
    for lv in ws3:
        for name, score in lv:
            assert isinstance(score, Double) and abs(score - want[name]) < 1e-6
    plain3 = conn3.cmd("VLINKS", "v", "a")
    assert plain3 == links and all(type(level) is list for level in plain3)
    # links are symmetric enough that every element is someone's neighbour
    linked = set()
    for e in (b"a", b"b", b"c", b"d"):
        for level in conn.cmd("VLINKS", "v", e):
            linked |= set(level)
    assert linked == {b"a", b"b", b"c", b"d"}


def test_vlinks_single_and_errors(conn, conn3):
    assert conn.cmd("VADD", "one", *values([1, 0]), "x") == 1
    links = conn.cmd("VLINKS", "one", "x")
    assert len(links) >= 1 and all(level == [] for level in links)
    assert conn.cmd_raw("VLINKS", "one", "nosuch") == b"$-1\r\n"
    assert conn.cmd_raw("VLINKS", "nokey", "x") == b"$-1\r\n"
    assert conn3.cmd_raw("VLINKS", "nokey", "x") == b"_\r\n"
    assert conn.cmd("VLINKS", "one") == arity("VLINKS")
    assert conn.cmd("VLINKS", "one", "x", "FOO") == arity("VLINKS")
    assert conn.cmd("VLINKS", "one", "x", "WITHSCORES", "x") == arity("VLINKS")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VLINKS", "str", "x") == WRONGTYPE


# ---- VINFO ----------------------------------------------------------------

# Redis's nine fields, in its order; HotKV may report more after them
# (memory figures), which clients reading by name ignore.
VINFO_KEYS = ["quant-type", "hnsw-m", "vector-dim", "projection-input-dim", "size", "max-level",
              "attributes-count", "vset-uid", "hnsw-max-node-uid"]


def test_vinfo_resp2(conn):
    basic(conn)
    info = conn.cmd("VINFO", "v")
    assert len(info) >= 18 and len(info) % 2 == 0
    assert info[0:18:2] == VINFO_KEYS
    assert all(isinstance(k, Simple) for k in info[0::2])
    d = dict(zip(info[0::2], info[1::2]))
    assert d["quant-type"] == "f32" and isinstance(d["quant-type"], Simple)
    assert d["hnsw-m"] == 16
    assert d["vector-dim"] == 3
    assert d["projection-input-dim"] == 0
    assert d["size"] == 4
    assert type(d["max-level"]) is int and 0 <= d["max-level"] <= 16
    assert d["attributes-count"] == 2
    assert type(d["vset-uid"]) is int
    assert type(d["hnsw-max-node-uid"]) is int and d["hnsw-max-node-uid"] >= 4
    raw = conn.cmd_raw("VINFO", "v")
    assert raw.startswith(b"*%d\r\n+quant-type\r\n+f32\r\n+hnsw-m\r\n:16\r\n" % len(info))


def test_vinfo_resp3_and_fields(conn, conn3):
    assert conn.cmd("VADD", "q", *values([1, 0]), "a") == 1
    assert conn.cmd("VADD", "b", *values([1, 0]), "a", "BIN", "M", "8") == 1
    m = conn3.cmd("VINFO", "q")
    assert isinstance(m, Map)
    assert [k for k, _ in m][:9] == VINFO_KEYS
    d = m.dict()
    assert d["quant-type"] == "int8" and d["size"] == 1 and d["hnsw-m"] == 16
    assert conn3.cmd_raw("VINFO", "q").startswith(b"%%%d\r\n+quant-type\r\n+int8\r\n" % len(m))
    d2 = conn3.cmd("VINFO", "b").dict()
    assert d2["quant-type"] == "bin" and d2["hnsw-m"] == 8
    assert d2["vset-uid"] != d["vset-uid"]
    assert conn.cmd_raw("VINFO", "nokey") == b"*-1\r\n"
    assert conn3.cmd_raw("VINFO", "nokey") == b"_\r\n"
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VINFO", "str") == WRONGTYPE
    assert conn.cmd("VINFO") == arity("VINFO")
    assert conn.cmd("VINFO", "a", "b") == arity("VINFO")


def test_vinfo_counts_follow_changes(conn):
    for i in range(10):
        assert conn.cmd("VADD", "k", *values([i + 1, 1]), "e%d" % i) == 1
    d = dict(zip(*[iter(conn.cmd("VINFO", "k"))] * 2))
    assert d["size"] == 10 and d["attributes-count"] == 0
    top = d["hnsw-max-node-uid"]
    assert conn.cmd("VSETATTR", "k", "e1", '{"a":1}') == 1
    assert conn.cmd("VSETATTR", "k", "e2", '{"a":2}') == 1
    assert conn.cmd("VREM", "k", "e2") == 1
    assert conn.cmd("VREM", "k", "e3") == 1
    d = dict(zip(*[iter(conn.cmd("VINFO", "k"))] * 2))
    assert d["size"] == 8 and d["attributes-count"] == 1
    assert d["hnsw-max-node-uid"] >= top  # never goes down


# ---- VSETATTR / VGETATTR -------------------------------------------------------

def test_vsetattr_vgetattr(conn, conn3):
    basic(conn)
    r = conn.cmd("VSETATTR", "v", "b", '{"y":"z"}')
    assert r == 1 and type(r) is int
    assert conn.cmd("VGETATTR", "v", "b") == b'{"y":"z"}'
    assert conn3.cmd("VSETATTR", "v", "b", '{"y":2}') is True
    assert conn3.cmd("VGETATTR", "v", "b") == b'{"y":2}'
    assert conn.cmd("VSETATTR", "v", "nosuch", "{}") == 0
    assert conn3.cmd("VSETATTR", "v", "nosuch", "{}") is False
    assert conn.cmd("VSETATTR", "nokey", "b", "{}") == 0
    assert conn.cmd("EXISTS", "nokey") == 0
    # the empty string removes the attributes (and answers 1 even when none)
    assert conn.cmd("VSETATTR", "v", "b", "") == 1
    assert conn.cmd_raw("VGETATTR", "v", "b") == b"$-1\r\n"
    assert conn3.cmd_raw("VGETATTR", "v", "b") == b"_\r\n"
    assert conn.cmd("VSETATTR", "v", "b", "") == 1
    # no JSON validation
    assert conn.cmd("VSETATTR", "v", "d", "not json at all") == 1
    assert conn.cmd("VGETATTR", "v", "d") == b"not json at all"
    blob = bytes(range(256))
    assert conn.cmd("VSETATTR", "v", "d", blob) == 1
    assert conn.cmd("VGETATTR", "v", "d") == blob
    assert conn.cmd("VGETATTR", "v", "nosuch") is None
    assert conn.cmd("VGETATTR", "nokey", "a") is None
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VSETATTR", "str", "a", "{}") == WRONGTYPE
    assert conn.cmd("VGETATTR", "str", "a") == WRONGTYPE
    assert conn.cmd("VSETATTR", "v", "a") == arity("VSETATTR")
    assert conn.cmd("VSETATTR", "v", "a", "{}", "x") == arity("VSETATTR")
    assert conn.cmd("VGETATTR", "v") == arity("VGETATTR")
    assert conn.cmd("VGETATTR", "v", "a", "b") == arity("VGETATTR")


def test_vsetattr_used_by_filter(conn):
    basic(conn)
    assert conn.cmd("VSETATTR", "v", "d", json.dumps({"x": 10})) == 1
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x > 2") == [b"c", b"d"]
    assert conn.cmd("VSETATTR", "v", "d", "") == 1
    assert conn.cmd("VSIM", "v", *values([1, 0, 0]), "FILTER", ".x > 2") == [b"c"]


# ---- VRANDMEMBER ----------------------------------------------------------

def test_vrandmember(conn, conn3):
    basic(conn)
    names = {b"a", b"b", b"c", b"d"}
    assert conn.cmd("VRANDMEMBER", "v") in names
    seen = {conn.cmd("VRANDMEMBER", "v") for _ in range(200)}
    assert seen == names
    two = conn.cmd("VRANDMEMBER", "v", "2")
    assert len(two) == 2 and len(set(two)) == 2 and set(two) <= names
    assert sorted(conn.cmd("VRANDMEMBER", "v", "4")) == sorted(names)
    assert sorted(conn.cmd("VRANDMEMBER", "v", "100")) == sorted(names)
    rep = conn.cmd("VRANDMEMBER", "v", "-10")
    assert len(rep) == 10 and set(rep) <= names
    rep = conn.cmd("VRANDMEMBER", "v", "-1000")
    assert len(rep) == 1000 and set(rep) == names
    assert conn.cmd("VRANDMEMBER", "v", "-1")[0] in names
    assert conn.cmd_raw("VRANDMEMBER", "v", "0") == b"*0\r\n"
    assert conn3.cmd("VRANDMEMBER", "v") in names
    assert conn3.cmd_raw("VRANDMEMBER", "nokey") == b"_\r\n"


def test_vrandmember_many_distinct(conn):
    for i in range(50):
        conn.cmd("VADD", "k", *values([i + 1, 50 - i]), "e%d" % i)
    for count in (5, 9, 10, 11, 30, 49, 50):
        got = conn.cmd("VRANDMEMBER", "k", str(count))
        assert len(got) == count and len(set(got)) == count, count


def test_vrandmember_edges(conn):
    assert conn.cmd_raw("VRANDMEMBER", "nokey") == b"$-1\r\n"
    assert conn.cmd_raw("VRANDMEMBER", "nokey", "3") == b"*0\r\n"
    assert conn.cmd_raw("VRANDMEMBER", "nokey", "-3") == b"*0\r\n"
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VRANDMEMBER", "str") == WRONGTYPE
    assert conn.cmd("VRANDMEMBER", "str", "2") == WRONGTYPE
    # COUNT is parsed, and 0 answered, before the key is looked at
    assert conn.cmd("VRANDMEMBER", "str", "0") == []
    assert conn.cmd("VRANDMEMBER", "str", "x") == Error("ERR COUNT value is not an integer")
    assert conn.cmd("VRANDMEMBER", "nokey", "1.5") == Error("ERR COUNT value is not an integer")
    assert conn.cmd("VRANDMEMBER", "nokey", "99999999999999999999") == Error("ERR COUNT value is not an integer")
    assert conn.cmd("VRANDMEMBER") == arity("VRANDMEMBER")
    assert conn.cmd("VRANDMEMBER", "k", "1", "2") == arity("VRANDMEMBER")


@pytest.mark.parametrize("count", ["-9223372036854775808", "-9223372036854775807", "-4611686018427387904"])
def test_vrandmember_huge_negative_count_is_safe(new_server, count):
    """Redis would try to build a reply of |count| elements. Whatever HotKV
    does (refuse it with an error, or stream it to a client that goes
    away), the server must not hang or grow without bound. A private
    server, so that a failure here does not take the other tests with it."""
    import time
    srv = new_server()
    r = srv.client(socket_timeout=10)
    r.execute_command("VADD", "k", *values([1, 0]), "a")
    before = r.info("memory")["used_memory"]
    c = srv.conn()
    c.send(b"*3\r\n$11\r\nVRANDMEMBER\r\n$1\r\nk\r\n$%d\r\n%s\r\n" % (len(count), count.encode()))
    first = c._line()
    assert first[:1] in (b"*", b"-"), first
    c.close()
    time.sleep(0.5)
    probe = srv.client(socket_timeout=5)
    assert probe.ping()
    assert probe.execute_command("VRANDMEMBER", "k", "9223372036854775807") == [b"a"]
    assert probe.info("memory")["used_memory"] < before + (256 << 20)
    probe.close()
    r.close()


# ---- the key with generic commands ---------------------------------------------

def test_type_encoding_scan(r, conn):
    basic(conn)
    r.set("s", "x")
    r.sadd("set", "m")
    assert conn.cmd("TYPE", "v") == "vectorset"
    assert conn.cmd("OBJECT", "ENCODING", "v") == b"raw"
    cursor, keys = 0, []
    while True:
        cursor, batch = r.scan(cursor, _type="vectorset")
        keys += batch
        if cursor == 0:
            break
    assert keys == [b"v"]
    assert sorted(r.scan_iter(_type="VECTORSET")) == [b"v"]
    assert conn.cmd("EXISTS", "v") == 1
    assert conn.cmd("DBSIZE") == 3


def test_del_unlink_flush(r, conn):
    basic(conn)
    assert conn.cmd("DEL", "v") == 1
    assert conn.cmd("VCARD", "v") == 0
    basic(conn)
    assert conn.cmd("UNLINK", "v") == 1
    assert conn.cmd("VSIM", "v", *values([1, 0, 0])) == []
    basic(conn)
    assert conn.cmd("FLUSHALL") == "OK"
    assert conn.cmd("EXISTS", "v") == 0
    basic(conn)
    assert conn.cmd("FLUSHDB") == "OK"
    assert conn.cmd("VINFO", "v") is None


def test_rename_and_move(r, conn):
    basic(conn)
    assert conn.cmd("RENAME", "v", "w") == "OK"
    assert conn.cmd("EXISTS", "v") == 0
    assert conn.cmd("VSIM", "w", *values([1, 0, 0])) == [b"a", b"b", b"c", b"d"]
    assert conn.cmd("VGETATTR", "w", "a") == b'{"x":1}'
    assert conn.cmd("VADD", "w", *values([0, 0, 1]), "e", "NOQUANT") == 1
    assert conn.cmd("RENAMENX", "w", "v") == 1
    assert conn.cmd("VCARD", "v") == 5
    assert conn.cmd("MOVE", "v", "1") == 1
    assert conn.cmd("EXISTS", "v") == 0
    assert conn.cmd("SELECT", "1") == "OK"
    assert conn.cmd("TYPE", "v") == "vectorset"
    assert conn.cmd("VSIM", "v", "ELE", "e", "COUNT", "1") == [b"e"]
    assert conn.cmd("VREM", "v", "e") == 1
    assert conn.cmd("VCARD", "v") == 4
    conn.cmd("FLUSHDB")
    conn.cmd("SELECT", "0")


def test_copy_is_independent(r, conn):
    basic(conn)
    assert conn.cmd("COPY", "v", "w") == 1
    assert conn.cmd("TYPE", "w") == "vectorset"
    assert conn.cmd("VSIM", "w", *values([1, 0, 0]), "WITHSCORES") == \
        conn.cmd("VSIM", "v", *values([1, 0, 0]), "WITHSCORES")
    assert conn.cmd("VGETATTR", "w", "c") == b'{"x":3}'
    assert conn.cmd("VREM", "w", "a") == 1
    assert conn.cmd("VSETATTR", "w", "c", '{"x":4}') == 1
    assert conn.cmd("VADD", "w", *values([0, 0, 1]), "new", "NOQUANT") == 1
    assert conn.cmd("VCARD", "v") == 4 and conn.cmd("VCARD", "w") == 4
    assert conn.cmd("VISMEMBER", "v", "a") == 1 and conn.cmd("VISMEMBER", "v", "new") == 0
    assert conn.cmd("VGETATTR", "v", "c") == b'{"x":3}'
    assert conn.cmd("VSIM", "v", *values([1, 0, 0])) == [b"a", b"b", b"c", b"d"]
    assert conn.cmd("DEL", "v") == 1
    assert conn.cmd("VSIM", "w", *values([1, 0, 0]), "COUNT", "1") == [b"b"]
    assert conn.cmd("COPY", "w", "x", "DB", "2") == 1
    assert conn.cmd("COPY", "w", "x", "DB", "2") == 0
    assert conn.cmd("VADD", "y", *values([1, 2]), "q") == 1
    assert conn.cmd("COPY", "y", "w", "REPLACE") == 1
    assert conn.cmd("VDIM", "w") == 2
    conn.cmd("SELECT", "2")
    assert conn.cmd("VCARD", "x") == 4
    conn.cmd("FLUSHDB")
    conn.cmd("SELECT", "0")


def test_expire(r, conn):
    import time
    basic(conn)
    assert conn.cmd("EXPIRE", "v", "100") == 1
    assert 0 < conn.cmd("TTL", "v") <= 100
    assert conn.cmd("VADD", "v", *values([0, 0, 1]), "e", "NOQUANT") == 1
    assert conn.cmd("TTL", "v") > 0   # VADD keeps the TTL
    assert conn.cmd("PERSIST", "v") == 1
    assert conn.cmd("PEXPIRE", "v", "50") == 1
    time.sleep(0.2)
    assert conn.cmd("EXISTS", "v") == 0
    assert conn.cmd("VCARD", "v") == 0
    assert conn.cmd("VSIM", "v", *values([1, 0, 0])) == []
    assert conn.cmd("VADD", "v", *values([1, 0]), "n") == 1
    assert conn.cmd("TTL", "v") == -1


def test_memory_usage_grows(r, conn):
    assert conn.cmd("VADD", "k", *fp32(rand_vectors(300, 64, 5)[0]), "element-0") == 1
    small = conn.cmd("MEMORY", "USAGE", "k")
    assert isinstance(small, int) and small > 0
    data = rand_vectors(300, 64, 5)
    load(r, "k", data[1:], ["element-%d" % i for i in range(1, 300)])
    big = conn.cmd("MEMORY", "USAGE", "k")
    # 299 more elements: at least their 64-byte int8 vectors and names
    assert big > small + 299 * (64 + 9)
    load(r, "n", data, ["element-%d" % i for i in range(300)], "NOQUANT")
    # float32 vectors take 192 bytes more per element than int8 ones
    assert conn.cmd("MEMORY", "USAGE", "n") > big + 300 * 150


def test_vector_commands_on_other_types(r, conn):
    r.set("s", "x")
    r.hset("h", "f", "v")
    r.zadd("z", {"m": 1})
    for key in ("s", "h", "z"):
        for c in (("VADD", key, *values([1, 0]), "e"), ("VSIM", key, "ELE", "e"), ("VREM", key, "e"),
                  ("VCARD", key), ("VDIM", key), ("VEMB", key, "e"), ("VLINKS", key, "e"),
                  ("VINFO", key), ("VSETATTR", key, "e", "{}"), ("VGETATTR", key, "e"),
                  ("VRANDMEMBER", key), ("VISMEMBER", key, "e")):
            assert conn.cmd(*c) == WRONGTYPE, c
    basic(conn)
    for c in (("GET", "v"), ("SADD", "v", "x"), ("HGET", "v", "f"), ("LPUSH", "v", "x"), ("ZCARD", "v"),
              ("INCR", "v"), ("APPEND", "v", "x")):
        assert conn.cmd(*c) == WRONGTYPE, c
    assert conn.cmd("SET", "v", "plain") == "OK"   # SET overwrites any type
    assert conn.cmd("TYPE", "v") == "string"


def test_big_names_and_binary_elements(conn):
    name = b"\x00\xff" * 5000
    assert conn.cmd("VADD", "k", *values([1, 0]), name) == 1
    assert conn.cmd("VADD", "k", *values([0, 1]), b"") == 1
    assert conn.cmd("VISMEMBER", "k", name) == 1
    assert conn.cmd("VISMEMBER", "k", b"") == 1
    assert conn.cmd("VSIM", "k", *values([1, 0.1])) == [name, b""]
    assert conn.cmd("VREM", "k", b"") == 1
    assert conn.cmd("VRANDMEMBER", "k") == name


# ---- COMMAND metadata -----------------------------------------------------

CMDS = {
    # name: (arity, flags that must be there, summary, since)
    "vadd": (-5, {"write", "denyoom"},
             "Add one or more elements to a vector set, or update its vector if it already exists", "8.0.0"),
    "vrem": (3, {"write"}, "Remove an element from a vector set", "8.0.0"),
    "vsim": (-4, {"readonly"}, "Return elements by vector similarity", "8.0.0"),
    "vdim": (2, {"readonly", "fast"}, "Return the dimension of vectors in the vector set", "8.0.0"),
    "vcard": (2, {"readonly", "fast"}, "Return the number of elements in a vector set", "8.0.0"),
    "vemb": (-3, {"readonly", "fast"}, "Return the vector associated with an element", "8.0.0"),
    "vlinks": (-3, {"readonly", "fast"}, "Return the neighbors of an element at each layer in the HNSW graph",
               "8.0.0"),
    "vinfo": (2, {"readonly", "fast"}, "Return information about a vector set", "8.0.0"),
    "vsetattr": (4, {"write", "fast"}, "Associate or remove the JSON attributes of elements", "8.0.0"),
    "vgetattr": (3, {"readonly", "fast"}, "Retrieve the JSON attributes of elements", "8.0.0"),
    "vrandmember": (-2, {"readonly"}, "Return one or multiple random members from a vector set", "8.0.0"),
    "vismember": (3, {"readonly"}, "Check if an element exists in a vector set", "8.2.0"),
}


@pytest.mark.parametrize("name", sorted(CMDS))
def test_command_info(conn, name):
    arity_, flags, _, _ = CMDS[name]
    for asked in (name, name.upper()):
        info = conn.cmd("COMMAND", "INFO", asked)
        assert len(info) == 1 and info[0] is not None, asked
        entry = info[0]
        assert entry[0].lower() == name.encode()
        assert entry[1] == arity_
        assert flags <= set(entry[2]), entry[2]
        assert entry[3:6] == [1, 1, 1]
        specs = entry[8]
        assert len(specs) == 1
        spec = dict(zip(specs[0][0::2], specs[0][1::2]))
        assert spec[b"begin_search"] == [b"type", b"index", b"spec", [b"index", 1]]
        assert spec[b"find_keys"] == [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]
    args = ["mykey"] + ["a"] * (abs(arity_) - 2)
    assert conn.cmd("COMMAND", "GETKEYS", name, *args) == [b"mykey"]


@pytest.mark.parametrize("name", sorted(CMDS))
def test_command_docs(conn, name):
    _, _, summary, since = CMDS[name]
    docs = conn.cmd("COMMAND", "DOCS", name)
    assert len(docs) == 2 and docs[0].lower() == name.encode()
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d[b"since"] == since.encode()
    assert d[b"summary"] == summary.encode()
    assert b"arguments" in d


def test_command_list_has_them(conn):
    names = {n.lower() for n in conn.cmd("COMMAND", "LIST")}
    assert {n.encode() for n in CMDS} <= names
