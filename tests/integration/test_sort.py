"""SORT and SORT_RO: a matrix of value types and encodings x options (BY,
LIMIT, GET, ASC/DESC, ALPHA, STORE) compared with the reference
redis-server where Redis 7.0 and 8.0 agree, plus exact replies for the
errors, RESP3, the key finders and the cross-shard pattern lookups."""
import threading
import time

import pytest
from conftest import real_redis
from resp import Error, RespConn, encode, parse_commands

SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
BADSCORE = Error("ERR One or more scores can't be converted into double")

NUMS = [5, 3, 10, -2, 7, 0, 42, 1, 8, 13]
WORDS = ["pear", "apple", "fig", "kiwi", "banana", "cherry", "date", "lime", "mango", "grape"]


def enc(conn, key):
    return conn.cmd("OBJECT", "ENCODING", key).decode()


# Each case: the commands that build key "src" (and weight/data keys), the
# encoding HotKV must have chosen, and the config that forces it.
def load_cmds(kind, elems):
    if kind == "list":
        return [("RPUSH", "src", *elems)]
    if kind == "set":
        return [("SADD", "src", *elems)]
    return [("ZADD", "src", *[x for i, e in enumerate(elems) for x in (str((i * 7) % 10), e)])]


ENCODINGS = [
    ("list", "listpack", []),
    ("list", "quicklist", [("CONFIG", "SET", "list-max-listpack-size", "2")]),
    ("set", "intset", []),
    ("set", "listpack", []),
    ("set", "hashtable", [("CONFIG", "SET", "set-max-listpack-entries", "2"),
                          ("CONFIG", "SET", "set-max-intset-entries", "2")]),
    ("zset", "listpack", []),
    ("zset", "skiplist", [("CONFIG", "SET", "zset-max-listpack-entries", "2")]),
]

DEFAULTS = [("CONFIG", "SET", "list-max-listpack-size", "-2"),
            ("CONFIG", "SET", "set-max-listpack-entries", "128"),
            ("CONFIG", "SET", "set-max-intset-entries", "512"),
            ("CONFIG", "SET", "zset-max-listpack-entries", "128")]


def weights_cmds(elems):
    out = []
    for i, e in enumerate(elems):
        out.append(("SET", "w_%s" % e, str((i * 37) % 101 - 50)))
        out.append(("SET", "a_%s" % e, "alpha%03d" % ((i * 53) % 97)))
        out.append(("SET", "d_%s" % e, "data-%s" % e))
        out.append(("HSET", "h_%s" % e, "f", str(i * 3 + 1), "g", "g-%s" % e))
    return out


QUERIES = [
    (),
    ("DESC",),
    ("LIMIT", "0", "3"),
    ("LIMIT", "2", "4", "DESC"),
    ("LIMIT", "8", "100"),
    ("LIMIT", "-5", "3"),
    ("LIMIT", "3", "-1"),
    ("LIMIT", "3", "0"),
    ("LIMIT", "100", "5"),
    ("BY", "w_*"),
    ("BY", "w_*", "DESC", "LIMIT", "1", "4"),
    ("BY", "h_*->f"),
    ("BY", "h_*->f", "DESC"),
    ("BY", "a_*", "ALPHA"),
    ("BY", "a_*", "ALPHA", "DESC", "LIMIT", "2", "3"),
    ("BY", "w_*", "GET", "#", "GET", "d_*", "GET", "h_*->g", "GET", "missing_*", "GET", "h_*->nofield"),
    ("GET", "d_*", "LIMIT", "1", "2"),
    ("GET", "#", "GET", "w_*", "DESC"),
    ("GET", "nostar"),
    ("BY", "nosort", "GET", "#"),
    ("BY", "nosort", "BY", "w_*", "LIMIT", "1", "3"),
    ("BY", "nosort", "DESC", "LIMIT", "2", "5", "GET", "d_*"),
]


def run_both(cmds, ours, ref):
    for c in cmds:
        a, b = ours.cmd(*c), ref.cmd(*c)
        assert not isinstance(a, Error), (c, a)
        assert not isinstance(b, Error), (c, b)


@pytest.mark.parametrize("kind,encoding,config", ENCODINGS, ids=["%s-%s" % (k, e) for k, e, _ in ENCODINGS])
def test_sort_matrix_against_reference(conn, kind, encoding, config):
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        try:
            for c in config:
                assert conn.cmd(*c) == b"OK" or conn.cmd(*c) == "OK"
            elems = [str(x) for x in NUMS] if encoding == "intset" else None
            numeric = elems is not None or kind != "set"
            if elems is None:
                elems = [str(x) for x in NUMS] if kind == "list" else WORDS
            if kind == "set" and encoding == "hashtable":
                elems = WORDS
                numeric = False
            if kind == "zset":
                elems = WORDS
                numeric = False
            run_both(load_cmds(kind, elems) + weights_cmds(elems), conn, ref)
            assert enc(conn, "src") == encoding
            for q in QUERIES:
                for ro in ("SORT", "SORT_RO"):
                    plain = not any(w in q for w in ("BY", "GET"))
                    cmd = (ro, "src", *q)
                    if not numeric and plain:
                        cmd = cmd + ("ALPHA",)
                    if kind == "set" and "nosort" in q:
                        # A set's own order: only its content is comparable,
                        # and with LIMIT only how much of it came back.
                        got, want = conn.cmd(*cmd), ref.cmd(*cmd)
                        if "LIMIT" in q:
                            assert len(got) == len(want), cmd
                        else:
                            assert sorted(got) == sorted(want), cmd
                        continue
                    got, want = conn.cmd(*cmd), ref.cmd(*cmd)
                    assert got == want, cmd
                # STORE: the stored list and the count.
                cmd = ("SORT", "src", *q, "STORE", "dst")
                if not numeric and not any(w in q for w in ("BY", "GET")):
                    cmd = cmd + ("ALPHA",)
                got, want = conn.cmd(*cmd), ref.cmd(*cmd)
                assert got == want, cmd
                assert conn.cmd("LRANGE", "dst", "0", "-1") == ref.cmd("LRANGE", "dst", "0", "-1"), cmd
                assert conn.cmd("EXISTS", "dst") == ref.cmd("EXISTS", "dst")
        finally:
            ref.close()
            for c in DEFAULTS:
                conn.cmd(*c)


def test_sort_numeric_and_alpha(r, conn):
    r.rpush("l", "3", "1", "2", "10", "-1.5", "1e2")
    assert conn.cmd("SORT", "l") == [b"-1.5", b"1", b"2", b"3", b"10", b"1e2"]
    assert conn.cmd("SORT", "l", "ALPHA") == [b"-1.5", b"1", b"10", b"1e2", b"2", b"3"]
    assert conn.cmd("SORT", "l", "DESC", "ALPHA") == [b"3", b"2", b"1e2", b"10", b"1", b"-1.5"]
    r.rpush("bad", "1", "x", "2")
    assert conn.cmd("SORT", "bad") == BADSCORE
    assert conn.cmd("SORT", "bad", "ALPHA") == [b"1", b"2", b"x"]
    assert conn.cmd("SORT", "bad", "STORE", "d") == BADSCORE
    assert r.exists("d") == 0
    # Equal weights are ordered by the element bytes.
    r.rpush("t", "b", "a", "c")
    r.mset({"w_a": "1", "w_b": "1", "w_c": "0"})
    assert conn.cmd("SORT", "t", "BY", "w_*") == [b"c", b"a", b"b"]
    # A weight that is not a number, missing weights read as 0.
    r.set("w_b", "nope")
    assert conn.cmd("SORT", "t", "BY", "w_*") == BADSCORE
    r.delete("w_b")
    assert conn.cmd("SORT", "t", "BY", "w_*") == [b"b", b"c", b"a"]
    # inf is a number; nan is not.
    r.rpush("inf", "inf", "-inf", "0")
    assert conn.cmd("SORT", "inf") == [b"-inf", b"0", b"inf"]
    r.rpush("nan", "nan", "1")
    assert conn.cmd("SORT", "nan") == BADSCORE


def test_sort_nosort_orders(r, conn):
    r.rpush("l", "c", "a", "b", "d")
    assert conn.cmd("SORT", "l", "BY", "nosort") == [b"c", b"a", b"b", b"d"]
    assert conn.cmd("SORT", "l", "BY", "nosort", "DESC") == [b"d", b"b", b"a", b"c"]
    assert conn.cmd("SORT", "l", "BY", "nosort", "LIMIT", "1", "2") == [b"a", b"b"]
    assert conn.cmd("SORT", "l", "BY", "nosort", "LIMIT", "1", "2", "DESC") == [b"b", b"a"]
    r.zadd("z", {"x": 3, "y": 1, "w": 2, "v": 0})
    assert conn.cmd("SORT", "z", "BY", "nosort") == [b"v", b"y", b"w", b"x"]
    assert conn.cmd("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2") == [b"w", b"y"]
    assert conn.cmd("SORT", "z", "BY", "nosort", "LIMIT", "3", "10") == [b"x"]
    # A set sorted by nothing and stored is sorted by its members.
    r.sadd("s", "b", "c", "a", "10", "9")
    assert conn.cmd("SORT", "s", "BY", "nosort", "STORE", "d") == 5
    assert r.lrange("d", 0, -1) == [b"10", b"9", b"a", b"b", b"c"]
    assert sorted(conn.cmd("SORT", "s", "BY", "nosort")) == sorted([b"a", b"b", b"c", b"10", b"9"])


def test_sort_store(r, conn):
    r.rpush("l", "3", "1", "2")
    r.set("dst", "a string")
    assert conn.cmd("SORT", "l", "STORE", "dst") == 3
    assert r.type("dst") == b"list"
    assert r.lrange("dst", 0, -1) == [b"1", b"2", b"3"]
    assert enc(conn, "dst") == "listpack"
    # GET values stored; a missing one is stored as "".
    r.set("v_1", "one")
    assert conn.cmd("SORT", "l", "GET", "v_*", "GET", "#", "STORE", "dst") == 6
    assert r.lrange("dst", 0, -1) == [b"one", b"1", b"", b"2", b"", b"3"]
    # The source itself as destination.
    assert conn.cmd("SORT", "l", "DESC", "STORE", "l") == 3
    assert r.lrange("l", 0, -1) == [b"3", b"2", b"1"]
    # An empty result deletes the destination.
    assert conn.cmd("SORT", "l", "LIMIT", "0", "0", "STORE", "dst") == 0
    assert r.exists("dst") == 0
    assert conn.cmd("SORT", "missing", "STORE", "dst2") == 0
    assert r.exists("dst2") == 0
    # The last STORE wins.
    assert conn.cmd("SORT", "l", "STORE", "x1", "STORE", "x2") == 3
    assert r.exists("x1") == 0 and r.llen("x2") == 3
    # A big result is a quicklist, as Redis stores it.
    r.rpush("big", *["item-%06d" % i for i in range(1000)])
    assert conn.cmd("SORT", "big", "ALPHA", "STORE", "bigd") == 1000
    assert enc(conn, "bigd") == "quicklist"
    assert r.lrange("bigd", 0, 1) == [b"item-000000", b"item-000001"]


def test_sort_errors(r, conn):
    r.rpush("l", "1")
    r.set("str", "x")
    r.hset("h", "a", "1")
    assert conn.cmd("SORT") == Error("ERR wrong number of arguments for 'sort' command")
    assert conn.cmd("SORT_RO") == Error("ERR wrong number of arguments for 'sort_ro' command")
    assert conn.cmd("SORT", "str") == WRONGTYPE
    assert conn.cmd("SORT", "h") == WRONGTYPE
    assert conn.cmd("SORT", "l", "foo") == SYNTAX
    assert conn.cmd("SORT", "l", "LIMIT", "1") == SYNTAX
    assert conn.cmd("SORT", "l", "LIMIT", "a", "1") == NOT_INT
    assert conn.cmd("SORT", "l", "LIMIT", "1", "1.5") == NOT_INT
    assert conn.cmd("SORT", "l", "BY") == SYNTAX
    assert conn.cmd("SORT", "l", "GET") == SYNTAX
    assert conn.cmd("SORT", "l", "STORE") == SYNTAX
    assert conn.cmd("SORT_RO", "l", "STORE", "d") == SYNTAX
    # Options are checked before the key's type.
    assert conn.cmd("SORT", "str", "foo") == SYNTAX
    assert conn.cmd("SORT", "missing") == []
    assert conn.cmd("SORT", "missing", "GET", "#") == []


def test_sort_resp3(r, conn3):
    r.rpush("l", "2", "1")
    r.set("v_1", "one")
    assert conn3.cmd("SORT", "l", "GET", "v_*") == [b"one", None]
    assert conn3.cmd_raw("SORT", "l", "GET", "v_*") == b"*2\r\n$3\r\none\r\n_\r\n"
    assert conn3.cmd("SORT", "l", "STORE", "d") == 2


def test_sort_getkeys_and_info(conn):
    assert conn.cmd("COMMAND", "GETKEYS", "SORT", "k") == [b"k"]
    assert conn.cmd("COMMAND", "GETKEYS", "SORT", "k", "STORE", "d") == [b"k", b"d"]
    assert conn.cmd("COMMAND", "GETKEYS", "SORT", "k", "GET", "store", "BY", "store", "LIMIT", "0", "1",
                    "STORE", "d1", "STORE", "d2") == [b"k", b"d2"]
    assert conn.cmd("COMMAND", "GETKEYS", "SORT_RO", "k", "GET", "x") == [b"k"]
    info = conn.cmd("COMMAND", "INFO", "sort", "sort_ro")
    assert info[0][0] == b"sort" and info[0][1] == -2
    assert "write" in info[0][2] and "movablekeys" in info[0][2]
    assert info[1][0] == b"sort_ro" and "readonly" in info[1][2]


def test_sort_hash_tag_patterns(r, conn):
    # Patterns whose tag is the sorted key's slot read keys of that slot.
    r.rpush("{u}list", "a", "b", "c")
    r.mset({"{u}w_a": "3", "{u}w_b": "1", "{u}w_c": "2", "{u}v_a": "A", "{u}v_b": "B", "{u}v_c": "C"})
    assert conn.cmd("SORT", "{u}list", "BY", "{u}w_*", "GET", "{u}v_*") == [b"B", b"C", b"A"]
    assert conn.cmd("SORT", "{u}list", "BY", "{u}w_*", "GET", "{u}v_*", "STORE", "{u}out") == 3
    assert r.lrange("{u}out", 0, -1) == [b"B", b"C", b"A"]
    # Tags of another slot, and keys without a tag, are read too.
    r.mset({"{other}w_a": "1", "{other}w_b": "3", "{other}w_c": "2"})
    assert conn.cmd("SORT", "{u}list", "BY", "{other}w_*") == [b"a", b"c", b"b"]
    r.mset({"wa": "2", "wb": "3", "wc": "1"})
    assert conn.cmd("SORT", "{u}list", "BY", "w*", "GET", "{other}w_*") == [b"2", b"1", b"3"]


def test_sort_pattern_details(r, conn):
    r.rpush("l", "x", "y")
    r.mset({"p_x_s": "1", "p_y_s": "0"})
    # Only the first '*' is substituted.
    r.set("k_x*", "kx")
    assert conn.cmd("SORT", "l", "BY", "p_*_s") == [b"y", b"x"]
    assert conn.cmd("SORT", "l", "BY", "nosort", "GET", "k_**") == [b"kx", None]
    # "->" with nothing after it is part of the key name.
    r.set("s_x->", "sx")
    assert conn.cmd("SORT", "l", "BY", "nosort", "GET", "s_*->") == [b"sx", None]
    # A "->field" lookup of a string key, a plain lookup of a hash: nil.
    r.hset("hh_x", "f", "1")
    r.set("ss_x", "1")
    assert conn.cmd("SORT", "l", "BY", "nosort", "GET", "hh_*", "GET", "ss_*->f") == [None, None, None, None]
    # Integer-encoded values are read as their digits.
    r.set("n_x", "12")
    r.set("n_y", "-7")
    assert conn.cmd("SORT", "l", "BY", "n_*", "GET", "n_*") == [b"-7", b"12"]


def crc16(data):
    crc = 0
    for ch in data:
        crc ^= ch << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def test_sort_cross_shard_atomic(new_server):
    """SORT BY/GET over keys of many shards, with writers changing all the
    weights and values in one MSET each: every SORT sees one MSET's state,
    never a mix. The weight and value keys avoid the sorted key's shard,
    so only the command's own locking can make it atomic."""
    srv = new_server("--shards", "1024", threads=4)
    c = srv.conn()
    src_shard = crc16(b"src") % 16384 % 1024
    elems = [str(i) for i in range(120)
             if crc16(b"w_%d" % i) % 16384 % 1024 != src_shard and crc16(b"v_%d" % i) % 16384 % 1024 != src_shard]
    c.cmd("RPUSH", "src", *elems)
    stop = threading.Event()
    errors = []

    def payload(n):
        args = []
        for e in elems:
            args += ["w_" + e, str((int(e) * n) % 97), "v_" + e, str(n)]
        return encode("MSET", *args)

    def writer(seed):
        w = srv.conn()
        batch = [payload(seed + i) for i in range(8)] * 8
        data = b"".join(batch)
        while not stop.is_set():
            # Pipelined, so the server runs the MSETs back to back.
            w.send(data)
            for _ in batch:
                if w.read() != "OK":
                    errors.append("mset")
        w.close()

    threads = [threading.Thread(target=writer, args=(s * 1000,)) for s in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(150):
            got = c.cmd("SORT", "src", "BY", "w_*", "GET", "v_*")
            assert len(set(got)) == 1, got
            n = c.cmd("SORT", "src", "BY", "w_*", "GET", "v_*", "STORE", "{src}out")
            assert n == len(elems)
            vals = c.cmd("LRANGE", "{src}out", "0", "-1")
            assert len(set(vals)) == 1, vals
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    c.close()


def test_sort_store_propagation_and_replay(new_server):
    """SORT ... STORE propagates itself (an empty result too, when it
    deleted the destination); a SORT that wrote nothing propagates nothing.
    Replayed into a fresh server, the journal gives the same dataset."""
    srv = new_server("--enable-debug-command", "yes")
    c = srv.conn()
    assert c.cmd("DEBUG", "JOURNAL", "START") == "OK"
    c.cmd("RPUSH", "src", "a", "b", "c")
    c.cmd("MSET", "w_a", "3", "w_b", "1", "w_c", "2", "v_a", "A", "v_b", "B")
    c.cmd("SADD", "set", "z", "y", "x")
    assert c.cmd("SORT", "src", "BY", "w_*", "GET", "v_*", "GET", "#", "STORE", "dst") == 6
    assert c.cmd("SORT", "set", "BY", "nosort", "STORE", "sdst") == 3
    assert c.cmd("SORT", "src", "ALPHA", "LIMIT", "0", "0", "STORE", "dst") == 0
    assert c.cmd("SORT", "src", "ALPHA", "LIMIT", "0", "0", "STORE", "never") == 0
    assert c.cmd("SORT_RO", "src", "BY", "w_*") == [b"b", b"c", b"a"]
    assert c.cmd("SORT", "src", "ALPHA", "DESC", "STORE", "dst2") == 3
    cmds = [x for x in parse_commands(c.cmd("DEBUG", "JOURNAL", "READ")) if x[0].upper() != b"SELECT"]
    sorts = [x for x in cmds if x[0].upper() in (b"SORT", b"SORT_RO")]
    assert sorts == [
        [b"SORT", b"src", b"BY", b"w_*", b"GET", b"v_*", b"GET", b"#", b"STORE", b"dst"],
        [b"SORT", b"set", b"BY", b"nosort", b"STORE", b"sdst"],
        [b"SORT", b"src", b"ALPHA", b"LIMIT", b"0", b"0", b"STORE", b"dst"],
        [b"SORT", b"src", b"ALPHA", b"DESC", b"STORE", b"dst2"],
    ]
    want = c.cmd("DEBUG", "DIGEST")
    c.cmd("DEBUG", "JOURNAL", "STOP")
    fresh = new_server("--enable-debug-command", "yes")
    f = fresh.conn()
    assert f.cmd("DEBUG", "JOURNAL", "APPLY", "ON") == "OK"
    for x in cmds:
        rep = f.cmd(*x)
        assert not isinstance(rep, Error), (x, rep)
    assert f.cmd("DEBUG", "DIGEST") == want
    assert f.cmd("LRANGE", "dst2", "0", "-1") == [b"c", b"b", b"a"]
    assert f.cmd("LRANGE", "sdst", "0", "-1") == [b"x", b"y", b"z"]
    assert f.cmd("EXISTS", "dst") == 0
    c.close()
    f.close()


def test_sort_alpha_ties(r, conn):
    # A list keeps its order among equal ALPHA weights (a stable sort).
    r.rpush("l", "c", "a", "d", "b")
    r.mset({"w_a": "x", "w_b": "x", "w_c": "x", "w_d": "a"})
    assert conn.cmd("SORT", "l", "BY", "w_*", "ALPHA") == [b"d", b"c", b"a", b"b"]
    assert conn.cmd("SORT", "l", "BY", "w_*", "ALPHA", "DESC") == [b"c", b"a", b"b", b"d"]
    # Missing weights sort first, also in the list's order.
    r.delete("w_c", "w_b")
    assert conn.cmd("SORT", "l", "BY", "w_*", "ALPHA") == [b"c", b"b", b"d", b"a"]
    # A set has no order of its own: ties go by the members.
    r.sadd("s", "c", "a", "d", "b")
    assert conn.cmd("SORT", "s", "BY", "w_*", "ALPHA") == [b"b", b"c", b"d", b"a"]
    assert conn.cmd("SORT", "s", "BY", "nokey_*", "ALPHA", "STORE", "out") == 4
    assert r.lrange("out", 0, -1) == [b"a", b"b", b"c", b"d"]


def test_sort_pattern_starting_with_star(new_server):
    # A pattern whose '*' comes first adds an empty prefix to the empty key
    # buffer; that used to offset a null pointer (a UBSan abort).
    srv = new_server()
    c = srv.conn()
    c.cmd("RPUSH", "l", "b", "a")
    c.cmd("HSET", "a", "f", "2")
    c.cmd("HSET", "b", "f", "1")
    assert c.cmd("SORT", "l", "BY", "*->f") == [b"b", b"a"]
    assert c.cmd("SORT_RO", "l", "BY", "nosort", "GET", "*->f", "GET", "*") == [b"1", None, b"2", None]
    assert c.cmd("PING") == "PONG"
    c.close()


def test_sort_empty_elements_and_weights(new_server):
    # Elements and weights that are all empty leave the copy arena empty;
    # reading an element or weight from it offset a null pointer.
    srv = new_server()
    c = srv.conn()
    c.cmd("RPUSH", "l", "", "")
    c.cmd("SET", "w_", "1")
    assert c.cmd("SORT", "l", "BY", "w_*") == [b"", b""]
    assert c.cmd("SORT_RO", "l", "BY", "w_*", "GET", "#", "GET", "w_*") == [b"", b"1", b"", b"1"]
    c.cmd("SET", "w_", "")
    assert c.cmd("SORT", "l", "BY", "w_*", "ALPHA") == [b"", b""]
    assert c.cmd("SORT", "l", "BY", "w_*", "ALPHA", "DESC", "STORE", "l") == 2
    assert c.cmd("LRANGE", "l", "0", "-1") == [b"", b""]
    assert c.cmd("PING") == "PONG"
    c.close()


def test_sort_patterns_skip_expired_hash_fields(new_server):
    # A "->field" lookup of a field past its deadline finds nothing and
    # deletes it, as HGET would (active expiry off so only the lookup can).
    srv = new_server("--enable-debug-command", "yes")
    c = srv.conn()
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    c.cmd("RPUSH", "l", "x", "y")
    c.cmd("HSET", "wx", "a", "5", "b", "1")
    c.cmd("HSET", "wy", "a", "3")
    assert c.cmd("HPEXPIRE", "wx", "1", "FIELDS", "1", "a") == [1]
    assert c.cmd("HPEXPIRE", "wy", "1", "FIELDS", "1", "a") == [1]
    time.sleep(0.05)
    assert c.cmd("HLEN", "wx") == 2
    assert c.cmd("SORT_RO", "l", "BY", "nosort", "GET", "#", "GET", "w*->a", "GET", "w*->b") == \
        [b"x", None, b"1", b"y", None, None]
    assert c.cmd("HLEN", "wx") == 1
    assert c.cmd("EXISTS", "wy") == 0
    c.cmd("HSET", "wx", "a", "7")
    c.cmd("HSET", "wy", "a", "2")
    c.cmd("HPEXPIRE", "wy", "1", "FIELDS", "1", "a")
    time.sleep(0.05)
    # The expired weight sorts as a missing one (0), before x's 7.
    assert c.cmd("SORT", "l", "BY", "w*->a", "GET", "w*->a") == [None, b"7"]
    assert c.cmd("EXISTS", "wy") == 0
    c.close()
