"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
BITFIELD_RO. Bit 0 is the most significant bit of the first byte.

Replies and error strings are Redis 7.2's, byte for byte."""
import random
import threading

import pytest
from resp import Error, Simple

OK = Simple("OK")
SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
BIT_OFFSET = Error("ERR bit offset is not an integer or out of range")
BIT_VALUE = Error("ERR bit is not an integer or out of range")
BAD_TYPE = Error("ERR Invalid bitfield type. Use something like i16 u8. "
                 "Note that u64 is not supported but i64 is.")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def need(conn, *args):
    reply = conn.cmd(*args)
    if isinstance(reply, Error) and reply.startswith("ERR unknown command"):
        pytest.skip("%s not available yet" % args[0])
    return reply


@pytest.fixture
def other_type(conn):
    for args in (("LPUSH", "otherkey", "x"), ("SADD", "otherkey", "x"),
                 ("HSET", "otherkey", "f", "v"), ("ZADD", "otherkey", "1", "x")):
        if not isinstance(conn.cmd(*args), Error):
            return "otherkey"
    pytest.skip("no non-string type available yet")


def field(data, off, bits, signed):
    """Integer of `bits` bits at bit offset off of data (zero padded)."""
    v = 0
    for i in range(bits):
        byte = (off + i) // 8
        b = (data[byte] >> (7 - (off + i) % 8)) & 1 if byte < len(data) else 0
        v = v << 1 | b
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def bits_of(data):
    return [(b >> (7 - i)) & 1 for b in data for i in range(8)]


# ---- SETBIT / GETBIT -------------------------------------------------------------

def test_setbit_getbit(conn):
    assert conn.cmd("SETBIT", "k", "7", "1") == 0
    assert conn.cmd("GET", "k") == b"\x01"
    assert conn.cmd("SETBIT", "k", "7", "1") == 1
    assert conn.cmd("SETBIT", "k", "0", "1") == 0
    assert conn.cmd("GET", "k") == b"\x81"
    assert conn.cmd("SETBIT", "k", "7", "0") == 1
    assert conn.cmd("GET", "k") == b"\x80"
    assert conn.cmd("SETBIT", "k", "20", "1") == 0
    assert conn.cmd("GET", "k") == b"\x80\x00\x08"
    assert conn.cmd("GETBIT", "k", "0") == 1
    assert conn.cmd("GETBIT", "k", "1") == 0
    assert conn.cmd("GETBIT", "k", "20") == 1
    assert conn.cmd("GETBIT", "k", "24") == 0
    assert conn.cmd("GETBIT", "k", "1000000") == 0
    assert conn.cmd("GETBIT", "nokey", "0") == 0
    # Clearing a bit past the end still grows the string.
    assert conn.cmd("SETBIT", "z", "15", "0") == 0
    assert conn.cmd("GET", "z") == b"\x00\x00"
    assert conn.cmd("SETBIT", "k", "1") == arity("setbit")
    assert conn.cmd("GETBIT", "k") == arity("getbit")


def test_setbit_on_strings_and_ints(conn):
    conn.cmd("SET", "s", "`")  # 0x60
    assert conn.cmd("SETBIT", "s", "1", "0") == 1
    assert conn.cmd("SETBIT", "s", "2", "0") == 1
    assert conn.cmd("SETBIT", "s", "7", "1") == 0
    assert conn.cmd("GET", "s") == b"\x01"
    conn.cmd("SET", "i", "1")  # the byte "1" is 0x31
    assert conn.cmd("GETBIT", "i", "2") == 1
    assert conn.cmd("GETBIT", "i", "3") == 1
    assert conn.cmd("GETBIT", "i", "7") == 1
    assert conn.cmd("GETBIT", "i", "6") == 0
    assert conn.cmd("SETBIT", "i", "6", "1") == 0
    assert conn.cmd("GET", "i") == b"3"
    assert need(conn, "OBJECT", "ENCODING", "i") == b"raw"


def test_setbit_keeps_ttl_and_encoding(conn):
    conn.cmd("SET", "k", "abc", "EX", "100")
    conn.cmd("SETBIT", "k", "100", "1")
    assert 99 <= need(conn, "TTL", "k") <= 100
    assert need(conn, "OBJECT", "ENCODING", "k") == b"raw"
    conn.cmd("SETBIT", "n", "0", "1")
    assert need(conn, "OBJECT", "ENCODING", "n") == b"raw"
    # Even a SETBIT that changes nothing makes the value raw, as in Redis.
    conn.cmd("SET", "e", "abc")
    assert conn.cmd("SETBIT", "e", "0", "0") == 0
    assert need(conn, "OBJECT", "ENCODING", "e") == b"raw"


def test_setbit_errors(conn):
    for bad in ("2", "-1", "a", "", "1.0", "10"):
        assert conn.cmd("SETBIT", "k", "0", bad) == BIT_VALUE, bad
    for bad in ("-1", "a", "", "1.5", str(4 * 1024 * 1024 * 1024), str(LLONG_MAX)):
        assert conn.cmd("SETBIT", "k", bad, "1") == BIT_OFFSET, bad
        assert conn.cmd("GETBIT", "k", bad) == BIT_OFFSET, bad
    # The last bit that fits in 512MB is fine to read.
    assert conn.cmd("GETBIT", "k", str(4 * 1024 * 1024 * 1024 - 1)) == 0
    assert conn.cmd("EXISTS", "k") == 0


def test_setbit_size_limit(new_server):
    srv = new_server("--proto-max-bulk-len", "1mb")
    c = srv.conn()
    last = 8 * 1024 * 1024 - 1
    assert c.cmd("SETBIT", "k", str(last + 1), "1") == BIT_OFFSET
    assert c.cmd("SETBIT", "k", str(last), "1") == 0
    assert c.cmd("STRLEN", "k") == 1024 * 1024
    assert c.cmd("GETBIT", "k", str(last)) == 1
    assert c.cmd("BITCOUNT", "k") == 1
    assert c.cmd("BITPOS", "k", "1") == last
    c.close()


def test_setbit_concurrent(server, r):
    """Clients setting disjoint bits of one key concurrently lose none."""
    def work(n):
        c = server.client()
        p = c.pipeline(transaction=False)
        for i in range(n, 8000, 8):
            p.setbit("bits", i, 1)
        p.execute()
        c.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.bitcount("bits") == 8000
    assert r.get("bits") == b"\xff" * 1000


def test_bit_wrongtype(conn, other_type):
    assert conn.cmd("SETBIT", other_type, "0", "1") == WRONGTYPE
    assert conn.cmd("GETBIT", other_type, "0") == WRONGTYPE
    assert conn.cmd("BITCOUNT", other_type) == WRONGTYPE
    assert conn.cmd("BITCOUNT", other_type, "0", "1") == WRONGTYPE
    assert conn.cmd("BITPOS", other_type, "1") == WRONGTYPE
    # The arguments are checked before the type (Redis 8).
    assert conn.cmd("BITPOS", other_type, "1", "a", "b") == NOT_INT
    assert conn.cmd("BITCOUNT", other_type, "a") == SYNTAX
    assert conn.cmd("BITCOUNT", other_type, "-1", "-2") == WRONGTYPE
    assert conn.cmd("BITPOS", other_type, "2") == Error("ERR The bit argument must be 1 or 0.")
    assert conn.cmd("BITFIELD", other_type, "GET", "u8", "0") == WRONGTYPE
    assert conn.cmd("BITFIELD", other_type, "SET", "u8", "0", "1") == WRONGTYPE
    assert conn.cmd("BITFIELD_RO", other_type, "GET", "u8", "0") == WRONGTYPE
    conn.cmd("SET", "s", "x")
    assert conn.cmd("BITOP", "AND", "dest", "s", other_type) == WRONGTYPE
    assert conn.cmd("EXISTS", "dest") == 0
    # BITOP's destination may hold any type: it is replaced.
    assert conn.cmd("BITOP", "NOT", other_type, "s") == 1
    assert conn.cmd("GET", other_type) == bytes([~ord("x") & 0xff])


# ---- BITCOUNT ---------------------------------------------------------------------

def test_bitcount(conn):
    conn.cmd("SET", "k", "foobar")
    assert conn.cmd("BITCOUNT", "k") == 26
    assert conn.cmd("BITCOUNT", "k", "0", "0") == 4
    assert conn.cmd("BITCOUNT", "k", "1", "1") == 6
    assert conn.cmd("BITCOUNT", "k", "1", "1", "BYTE") == 6
    assert conn.cmd("BITCOUNT", "k", "5", "30", "BIT") == 17
    assert conn.cmd("BITCOUNT", "k", "5", "30", "bit") == 17
    assert conn.cmd("BITCOUNT", "k", "0", "-1") == 26
    assert conn.cmd("BITCOUNT", "k", "-2", "-1") == 7
    assert conn.cmd("BITCOUNT", "k", "-100", "100") == 26
    assert conn.cmd("BITCOUNT", "k", "3", "1") == 0
    assert conn.cmd("BITCOUNT", "k", "-1", "-2") == 0
    assert conn.cmd("BITCOUNT", "k", "6", "10") == 0
    assert conn.cmd("BITCOUNT", "k", "0", "-1", "BIT") == 26
    assert conn.cmd("BITCOUNT", "k", "-8", "-1", "BIT") == 4
    assert conn.cmd("BITCOUNT", "k", "3", "3", "BIT") == 0
    assert conn.cmd("BITCOUNT", "k", "1", "1", "BIT") == 1
    assert conn.cmd("BITCOUNT", "k", LLONG_MIN, LLONG_MAX, "BIT") == 26
    assert conn.cmd("BITCOUNT", "nokey") == 0
    assert conn.cmd("BITCOUNT", "nokey", "0", "-1") == 0
    conn.cmd("SET", "e", "")
    assert conn.cmd("BITCOUNT", "e") == 0
    assert conn.cmd("BITCOUNT", "e", "0", "-1") == 0
    assert conn.cmd("BITCOUNT", "e", "0", "-1", "BIT") == 0
    conn.cmd("SET", "i", "7")  # 0x37
    assert conn.cmd("BITCOUNT", "i") == 5


def test_bitcount_matches_python(conn):
    rnd = random.Random(7)
    data = bytes(rnd.randrange(256) for _ in range(1000))
    conn.cmd("SET", "k", data)
    bits = bits_of(data)
    n = len(data)
    assert conn.cmd("BITCOUNT", "k") == sum(bits)
    for _ in range(200):
        s, e = rnd.randrange(-n - 5, n + 5), rnd.randrange(-n - 5, n + 5)
        ss, ee = (s + n if s < 0 else s), (e + n if e < 0 else e)
        ss, ee = max(ss, 0), min(max(ee, 0), n - 1)
        want = 0 if (s < 0 and e < 0 and s > e) else sum(bits[ss * 8:ee * 8 + 8]) if ss <= ee else 0
        assert conn.cmd("BITCOUNT", "k", s, e) == want, (s, e)
        nb = n * 8
        s, e = rnd.randrange(-nb - 5, nb + 5), rnd.randrange(-nb - 5, nb + 5)
        ss, ee = (s + nb if s < 0 else s), (e + nb if e < 0 else e)
        ss, ee = max(ss, 0), min(max(ee, 0), nb - 1)
        want = 0 if (s < 0 and e < 0 and s > e) else sum(bits[ss:ee + 1]) if ss <= ee else 0
        assert conn.cmd("BITCOUNT", "k", s, e, "BIT") == want, (s, e)


def test_bitcount_errors(conn):
    conn.cmd("SET", "k", "foobar")
    assert conn.cmd("BITCOUNT", "k", "0") == SYNTAX
    assert conn.cmd("BITCOUNT", "k", "0", "1", "BITS") == SYNTAX
    assert conn.cmd("BITCOUNT", "k", "0", "1", "BIT", "x") == SYNTAX
    assert conn.cmd("BITCOUNT", "k", "a", "1") == NOT_INT
    assert conn.cmd("BITCOUNT", "k", "0", "b") == NOT_INT
    assert conn.cmd("BITCOUNT") == arity("bitcount")
    assert conn.cmd("BITCOUNT", "k", "0", "1", "2", "3") == SYNTAX
    # Redis 8 checks the arguments before it looks the key up: the unit
    # too, and a missing key gets the errors.
    assert conn.cmd("BITCOUNT", "k", "-1", "-2", "FOO") == SYNTAX
    assert conn.cmd("BITCOUNT", "k", "-1", "-2") == 0
    assert conn.cmd("BITCOUNT", "nokey", "0") == SYNTAX
    assert conn.cmd("BITCOUNT", "nokey", "a", "1") == NOT_INT
    assert conn.cmd("BITCOUNT", "nokey", "0", "1", "FOO") == SYNTAX
    assert conn.cmd("BITCOUNT", "nokey", "0", "1", "BIT") == 0


# ---- BITPOS -------------------------------------------------------------------------

def test_bitpos(conn):
    conn.cmd("SET", "k", b"\xff\xf0\x00")
    assert conn.cmd("BITPOS", "k", "0") == 12
    assert conn.cmd("BITPOS", "k", "1") == 0
    assert conn.cmd("BITPOS", "k", "0", "2") == 16
    assert conn.cmd("BITPOS", "k", "1", "2") == -1
    assert conn.cmd("BITPOS", "k", "1", "1") == 8
    assert conn.cmd("BITPOS", "k", "0", "-1") == 16
    assert conn.cmd("BITPOS", "k", "0", "0", "0") == -1
    assert conn.cmd("BITPOS", "k", "0", "0", "1") == 12
    assert conn.cmd("BITPOS", "k", "1", "2", "-1") == -1
    assert conn.cmd("BITPOS", "k", "1", "7", "15", "BIT") == 7
    assert conn.cmd("BITPOS", "k", "0", "7", "15", "BIT") == 12
    assert conn.cmd("BITPOS", "k", "0", "7", "11", "BIT") == -1
    assert conn.cmd("BITPOS", "k", "1", "12", "23", "BIT") == -1
    assert conn.cmd("BITPOS", "k", "0", "12", "12", "BIT") == 12
    assert conn.cmd("BITPOS", "k", "1", "-12", "-1", "BIT") == -1
    assert conn.cmd("BITPOS", "k", "0", "5", "2") == -1
    assert conn.cmd("BITPOS", "k", "1", "0", "-1", "byte") == 0
    conn.cmd("SET", "ones", b"\xff\xff\xff")
    # No end given: the string is padded with zeros on the right.
    assert conn.cmd("BITPOS", "ones", "0") == 24
    assert conn.cmd("BITPOS", "ones", "0", "1") == 24
    # An explicit end: no zero in the range.
    assert conn.cmd("BITPOS", "ones", "0", "0", "-1") == -1
    assert conn.cmd("BITPOS", "ones", "0", "0", "-1", "BIT") == -1
    assert conn.cmd("BITPOS", "ones", "0", "3") == -1
    conn.cmd("SET", "zeros", b"\x00\x00\x00")
    assert conn.cmd("BITPOS", "zeros", "1") == -1
    assert conn.cmd("BITPOS", "zeros", "0") == 0
    assert conn.cmd("BITPOS", "nokey", "0") == 0
    assert conn.cmd("BITPOS", "nokey", "1") == -1
    assert conn.cmd("BITPOS", "nokey", "0", "5", "10", "BIT") == 0
    conn.cmd("SET", "e", "")
    assert conn.cmd("BITPOS", "e", "0") == -1
    assert conn.cmd("BITPOS", "e", "1") == -1


def test_bitpos_matches_python(conn):
    rnd = random.Random(11)
    for trial in range(30):
        n = rnd.randrange(1, 40)
        fill = rnd.choice([0x00, 0xff, None])
        data = bytearray(fill if fill is not None else rnd.randrange(256) for _ in range(n))
        if fill is not None and rnd.random() < 0.7:
            data[rnd.randrange(n)] ^= 1 << rnd.randrange(8)
        data = bytes(data)
        conn.cmd("SET", "k", data)
        bits = bits_of(data)
        for bit in (0, 1):
            for _ in range(20):
                unit_bit = rnd.random() < 0.5
                total = n * 8 if unit_bit else n
                s, e = rnd.randrange(-total - 3, total + 3), rnd.randrange(-total - 3, total + 3)
                ss, ee = (s + total if s < 0 else s), (e + total if e < 0 else e)
                ss, ee = max(ss, 0), min(max(ee, 0), total - 1)
                if ss > ee:
                    want = -1
                else:
                    lo, hi = (ss, ee) if unit_bit else (ss * 8, ee * 8 + 7)
                    want = next((i for i in range(lo, hi + 1) if bits[i] == bit), -1)
                args = [s, e, "BIT"] if unit_bit else [s, e]
                assert conn.cmd("BITPOS", "k", bit, *args) == want, (data, bit, args)
            want = next((i for i in range(n * 8) if bits[i] == bit), -1)
            if want == -1 and bit == 0:
                want = n * 8
            assert conn.cmd("BITPOS", "k", bit) == want


def test_bitpos_long_runs(conn):
    # Long runs exercise the word-at-a-time skipping.
    for size in (1, 7, 8, 9, 63, 64, 65, 1000):
        for pos in sorted({0, size * 8 // 2, size * 8 - 1}):
            data = bytearray(size)
            data[pos // 8] |= 0x80 >> (pos % 8)
            conn.cmd("SET", "k", bytes(data))
            assert conn.cmd("BITPOS", "k", "1") == pos
            assert conn.cmd("BITPOS", "k", "1", "0", "-1", "BIT") == pos
            inv = bytes(~b & 0xff for b in data)
            conn.cmd("SET", "k", inv)
            assert conn.cmd("BITPOS", "k", "0") == pos
            assert conn.cmd("BITPOS", "k", "0", "0", "-1") == pos


def test_bitpos_errors(conn):
    conn.cmd("SET", "k", "abc")
    err = Error("ERR The bit argument must be 1 or 0.")
    assert conn.cmd("BITPOS", "k", "2") == err
    assert conn.cmd("BITPOS", "k", "-1") == err
    assert conn.cmd("BITPOS", "nokey", "2") == err
    assert conn.cmd("BITPOS", "k", "x") == NOT_INT
    assert conn.cmd("BITPOS", "k", "1", "x") == NOT_INT
    assert conn.cmd("BITPOS", "k", "1", "0", "x") == NOT_INT
    assert conn.cmd("BITPOS", "k", "1", "0", "1", "FOO") == SYNTAX
    # The unit is checked before the end value.
    assert conn.cmd("BITPOS", "k", "1", "0", "x", "FOO") == SYNTAX
    assert conn.cmd("BITPOS", "k", "1", "x", "1", "FOO") == NOT_INT
    assert conn.cmd("BITPOS", "k", "1", "0", "1", "BIT", "x") == SYNTAX
    assert conn.cmd("BITPOS", "k") == arity("bitpos")
    assert conn.cmd("BITPOS", "k", "1", "0", "1", "BIT", "x", "y") == SYNTAX
    # Redis 8 parses the range before it looks the key up.
    assert conn.cmd("BITPOS", "nokey", "1", "0", "1", "FOO") == SYNTAX
    assert conn.cmd("BITPOS", "nokey", "0", "x") == NOT_INT
    assert conn.cmd("BITPOS", "nokey", "0", "1", "2", "3", "4") == SYNTAX
    assert conn.cmd("BITPOS", "nokey", "1", "0", "1", "BIT") == -1


# ---- BITOP ----------------------------------------------------------------------------

def test_bitop(conn):
    conn.cmd("MSET", "{b}a", b"\xff\x0f\xaa", "{b}b", b"\x0f\xff", "{b}c", b"\x01")
    assert conn.cmd("BITOP", "AND", "{b}d", "{b}a", "{b}b") == 3
    assert conn.cmd("GET", "{b}d") == b"\x0f\x0f\x00"
    assert conn.cmd("BITOP", "OR", "{b}d", "{b}a", "{b}b") == 3
    assert conn.cmd("GET", "{b}d") == b"\xff\xff\xaa"
    assert conn.cmd("BITOP", "XOR", "{b}d", "{b}a", "{b}b") == 3
    assert conn.cmd("GET", "{b}d") == b"\xf0\xf0\xaa"
    assert conn.cmd("BITOP", "XOR", "{b}d", "{b}a", "{b}b", "{b}c") == 3
    assert conn.cmd("GET", "{b}d") == b"\xf1\xf0\xaa"
    assert conn.cmd("BITOP", "NOT", "{b}d", "{b}a") == 3
    assert conn.cmd("GET", "{b}d") == b"\x00\xf0\x55"
    assert conn.cmd("BITOP", "and", "{b}d", "{b}a") == 3
    assert conn.cmd("GET", "{b}d") == b"\xff\x0f\xaa"
    # Missing keys are empty strings.
    assert conn.cmd("BITOP", "AND", "{b}d", "{b}a", "{b}nokey") == 3
    assert conn.cmd("GET", "{b}d") == b"\x00\x00\x00"
    assert conn.cmd("BITOP", "OR", "{b}d", "{b}nokey", "{b}c") == 1
    assert conn.cmd("GET", "{b}d") == b"\x01"
    # Integers are their digits.
    conn.cmd("SET", "{b}i", "12")
    assert conn.cmd("BITOP", "NOT", "{b}d", "{b}i") == 2
    assert conn.cmd("GET", "{b}d") == b"\xce\xcd"


def test_bitop_empty_result_deletes(conn):
    conn.cmd("SET", "{b}d", "old")
    assert conn.cmd("BITOP", "OR", "{b}d", "{b}x", "{b}y") == 0
    assert conn.cmd("EXISTS", "{b}d") == 0
    conn.cmd("SET", "{b}e", "")
    conn.cmd("SET", "{b}d", "old")
    assert conn.cmd("BITOP", "NOT", "{b}d", "{b}e") == 0
    assert conn.cmd("EXISTS", "{b}d") == 0


def test_bitop_dest_is_source_and_ttl(conn):
    conn.cmd("SET", "{b}a", b"\x0f", "EX", "100")
    assert conn.cmd("BITOP", "NOT", "{b}a", "{b}a") == 1
    assert conn.cmd("GET", "{b}a") == b"\xf0"
    assert need(conn, "TTL", "{b}a") == -1
    assert need(conn, "OBJECT", "ENCODING", "{b}a") == b"raw"


def test_bitop_matches_python(conn):
    rnd = random.Random(3)
    for _ in range(20):
        n = rnd.randrange(1, 6)
        vals = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 80))) for _ in range(n)]
        keys = ["{b}s%d" % i for i in range(n)]
        conn.cmd("MSET", *[x for kv in zip(keys, vals) for x in kv])
        m = max(len(v) for v in vals)
        padded = [v + b"\x00" * (m - len(v)) for v in vals]
        for op in ("AND", "OR", "XOR"):
            want = bytearray(padded[0])
            for v in padded[1:]:
                for i in range(m):
                    if op == "AND":
                        want[i] &= v[i]
                    elif op == "OR":
                        want[i] |= v[i]
                    else:
                        want[i] ^= v[i]
            assert conn.cmd("BITOP", op, "{b}dst", *keys) == m
            assert conn.cmd("GET", "{b}dst") == (bytes(want) if m else None)


def test_bitop_multi_shard(conn):
    keys = ["bitop:%d" % i for i in range(12)]
    for i, k in enumerate(keys):
        conn.cmd("SETBIT", k, str(i), "1")
    assert conn.cmd("BITOP", "OR", "bitop:dest", *keys) == 2
    assert conn.cmd("GET", "bitop:dest") == b"\xff\xf0"


def test_bitop_errors(conn):
    assert conn.cmd("BITOP", "NOT", "d", "a", "b") == Error(
        "ERR BITOP NOT must be called with a single source key.")
    assert conn.cmd("BITOP", "FOO", "d", "a") == SYNTAX
    assert conn.cmd("BITOP", "AND", "d") == arity("bitop")


# ---- BITFIELD ---------------------------------------------------------------------------

def test_bitfield_basic(conn):
    assert conn.cmd("BITFIELD", "k", "SET", "i8", "0", "100", "GET", "i8", "0") == [0, 100]
    assert conn.cmd("GET", "k") == b"d"
    assert conn.cmd("BITFIELD", "k", "INCRBY", "i8", "0", "10", "GET", "u4", "0") == [110, 6]
    assert conn.cmd("BITFIELD", "k", "SET", "u8", "#1", "255", "GET", "u8", "8") == [0, 255]
    assert conn.cmd("BITFIELD", "k", "GET", "i8", "#1") == [-1]
    assert conn.cmd("BITFIELD", "k", "get", "u16", "0") == [110 * 256 + 255]
    assert conn.cmd("BITFIELD", "k") == []
    assert conn.cmd("BITFIELD", "nokey", "GET", "u8", "0", "GET", "i64", "100") == [0, 0]
    assert conn.cmd("EXISTS", "nokey") == 0
    assert conn.cmd("BITFIELD") == arity("bitfield")


def test_bitfield_unaligned(conn):
    # The example of Redis's documentation: 5-bit unsigned 23 at offset 7.
    assert conn.cmd("BITFIELD", "k", "SET", "u5", "7", "23") == [0]
    assert conn.cmd("GET", "k") == b"\x01\x70"
    assert conn.cmd("BITFIELD", "k", "GET", "u5", "7", "GET", "i5", "7", "GET", "u1", "7") == [23, -9, 1]
    data = b"\x12\x34\x56\x78\x9a\xbc\xde\xf0\x12"
    conn.cmd("SET", "s", data)
    assert conn.cmd("BITFIELD", "s", "GET", "u63", "3", "GET", "i64", "4", "GET", "i64", "0",
                    "GET", "i13", "50") == [
        field(data, 3, 63, False), field(data, 4, 64, True), field(data, 0, 64, True),
        field(data, 50, 13, True)]
    assert conn.cmd("BITFIELD", "s", "GET", "u8", "68", "GET", "u8", "72") == [0x20, 0]


def test_bitfield_i64(conn):
    assert conn.cmd("BITFIELD", "k", "SET", "i64", "0", str(LLONG_MIN)) == [0]
    assert conn.cmd("BITFIELD", "k", "GET", "i64", "0", "GET", "u63", "1") == [LLONG_MIN, 0]
    assert conn.cmd("BITFIELD", "k", "SET", "i64", "0", str(LLONG_MAX), "INCRBY", "i64", "0", "1") == [
        LLONG_MIN, LLONG_MIN]
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1") == [LLONG_MIN]
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i64", "0", "-1") == [None]
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i64", "0", str(LLONG_MAX),
                    "INCRBY", "i64", "0", str(LLONG_MAX)) == [-1, LLONG_MAX - 1]


def test_bitfield_overflow_wrap(conn):
    assert conn.cmd("BITFIELD", "k", "SET", "u8", "0", "255", "INCRBY", "u8", "0", "1") == [0, 0]
    assert conn.cmd("BITFIELD", "k", "INCRBY", "u8", "0", "-1") == [255]
    assert conn.cmd("BITFIELD", "k", "INCRBY", "u8", "0", "258") == [1]
    assert conn.cmd("BITFIELD", "k", "SET", "i8", "0", "127", "INCRBY", "i8", "0", "1") == [1, -128]
    assert conn.cmd("BITFIELD", "k", "INCRBY", "i8", "0", "-1") == [127]
    assert conn.cmd("BITFIELD", "k", "SET", "i8", "0", "200") == [127]
    assert conn.cmd("BITFIELD", "k", "GET", "i8", "0") == [-56]
    assert conn.cmd("BITFIELD", "k", "SET", "u2", "0", "-1", "GET", "u2", "0") == [3, 3]
    assert conn.cmd("BITFIELD", "k", "SET", "i1", "0", "1", "GET", "i1", "0") == [-1, -1]


def test_bitfield_overflow_sat(conn):
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "u8", "0", "300",
                    "GET", "u8", "0") == [0, 255]
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "10") == [255]
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "-1000") == [0]
    # A negative SET value on an unsigned field saturates to the maximum.
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "u8", "0", "-5") == [0]
    assert conn.cmd("BITFIELD", "k", "GET", "u8", "0") == [255]
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "i8", "0", "1000",
                    "INCRBY", "i8", "0", "-1000", "SET", "i8", "0", "-1000") == [-1, -128, -128]
    assert conn.cmd("BITFIELD", "k", "GET", "i8", "0") == [-128]


def test_bitfield_overflow_fail(conn):
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", "0", "256",
                    "SET", "u8", "0", "10", "INCRBY", "u8", "0", "250", "INCRBY", "u8", "0", "245",
                    "INCRBY", "u8", "0", "-256", "GET", "u8", "0") == [None, 0, None, 255, None, 255]
    # The policy applies to the operations after it, until changed.
    assert conn.cmd("BITFIELD", "k", "INCRBY", "u8", "0", "1", "OVERFLOW", "FAIL",
                    "INCRBY", "u8", "0", "256", "OVERFLOW", "WRAP", "INCRBY", "u8", "0", "256") == [
        0, None, 0]


def test_bitfield_fail_still_creates_key(conn):
    # As in Redis, the key is sized for the writes before they are tried.
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "4") == [None]
    assert conn.cmd("GET", "k") == b"\x00" * 13


def test_bitfield_resp3_null(conn3):
    assert conn3.cmd_raw("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u2", "0", "4") == b"*1\r\n_\r\n"


def test_bitfield_keeps_ttl_and_encoding(conn):
    conn.cmd("SET", "k", "10", "EX", "100")
    assert conn.cmd("BITFIELD", "k", "GET", "u8", "0") == [ord("1")]
    assert need(conn, "OBJECT", "ENCODING", "k") == b"int"
    assert conn.cmd("BITFIELD", "k", "SET", "u8", "0", str(ord("2"))) == [ord("1")]
    assert conn.cmd("GET", "k") == b"20"
    assert need(conn, "OBJECT", "ENCODING", "k") == b"raw"
    assert 99 <= need(conn, "TTL", "k") <= 100


def test_bitfield_errors(conn):
    for t in ("u64", "i65", "i0", "u0", "x8", "I8", "U8", "8", "i", "u-1", "i08", ""):
        assert conn.cmd("BITFIELD", "k", "GET", t, "0") == BAD_TYPE, t
    for off in ("-1", "x", "#x", "#-1", "1.5", "##1", str(4 * 1024 * 1024 * 1024), ""):
        assert conn.cmd("BITFIELD", "k", "GET", "u8", off) == BIT_OFFSET, off
    assert conn.cmd("BITFIELD", "k", "GET", "u8", "#%d" % (512 * 1024 * 1024)) == BIT_OFFSET
    assert conn.cmd("BITFIELD", "k", "GET", "u8", "#%d" % (LLONG_MAX // 4)) == BIT_OFFSET
    assert conn.cmd("BITFIELD", "k", "GET", "u8", "#%d" % (512 * 1024 * 1024 - 1)) == [0]
    assert conn.cmd("BITFIELD", "k", "SET", "u8", "0", "x") == NOT_INT
    assert conn.cmd("BITFIELD", "k", "INCRBY", "u8", "0", "1.5") == NOT_INT
    assert conn.cmd("BITFIELD", "k", "GET", "u8") == SYNTAX
    assert conn.cmd("BITFIELD", "k", "SET", "u8", "0") == SYNTAX
    assert conn.cmd("BITFIELD", "k", "FOO", "u8", "0") == SYNTAX
    assert conn.cmd("BITFIELD", "k", "OVERFLOW") == SYNTAX
    assert conn.cmd("BITFIELD", "k", "OVERFLOW", "FOO") == Error("ERR Invalid OVERFLOW type specified")
    # An error anywhere means nothing runs.
    assert conn.cmd("BITFIELD", "k", "SET", "u8", "0", "1", "GET", "u64", "0") == BAD_TYPE
    assert conn.cmd("EXISTS", "k") == 0


def test_bitfield_ro(conn):
    conn.cmd("SET", "k", b"\xff\x00")
    assert conn.cmd("BITFIELD_RO", "k", "GET", "u4", "0", "GET", "i8", "4") == [15, -16]
    assert conn.cmd("BITFIELD_RO", "k") == []
    assert conn.cmd("BITFIELD_RO", "nokey", "GET", "u8", "0") == [0]
    assert conn.cmd("BITFIELD_RO", "k", "OVERFLOW", "SAT", "GET", "u8", "0") == [255]
    ro_err = Error("ERR BITFIELD_RO only supports the GET subcommand")
    assert conn.cmd("BITFIELD_RO", "k", "SET", "u8", "0", "1") == ro_err
    assert conn.cmd("BITFIELD_RO", "k", "GET", "u8", "0", "INCRBY", "u8", "0", "1") == ro_err
    # Parse errors come first.
    assert conn.cmd("BITFIELD_RO", "k", "SET", "u64", "0", "1") == BAD_TYPE
    assert conn.cmd("GET", "k") == b"\xff\x00"
    assert conn.cmd("BITFIELD_RO") == arity("bitfield_ro")


def test_bitfield_matches_model(conn):
    """Random SET/INCRBY/GET against a Python model of the bit string."""
    rnd = random.Random(5)
    model = bytearray()

    def get(off, bits, signed):
        return field(model, off, bits, signed)

    def put(off, bits, v):
        need_len = (off + bits - 1) // 8 + 1
        if len(model) < need_len:
            model.extend(b"\x00" * (need_len - len(model)))
        v &= (1 << bits) - 1
        for i in range(bits):
            byte, sh = (off + i) // 8, 7 - (off + i) % 8
            if (v >> (bits - 1 - i)) & 1:
                model[byte] |= 1 << sh
            else:
                model[byte] &= ~(1 << sh) & 0xff

    for _ in range(300):
        signed = rnd.random() < 0.5
        bits = rnd.randrange(1, 65 if signed else 64)
        off = rnd.randrange(0, 200)
        t = ("i" if signed else "u") + str(bits)
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        op = rnd.choice(["GET", "SET", "INCRBY"])
        if op == "GET":
            assert conn.cmd("BITFIELD", "k", "GET", t, off) == [get(off, bits, signed)]
        elif op == "SET":
            v = rnd.randrange(lo, hi + 1)
            old = get(off, bits, signed)
            assert conn.cmd("BITFIELD", "k", "SET", t, off, v) == [old]
            put(off, bits, v)
        else:
            inc = rnd.randrange(-(1 << min(bits, 62)), 1 << min(bits, 62))
            old = get(off, bits, signed)
            new = old + inc
            span = 1 << bits
            wrapped = (new - lo) % span + lo
            assert conn.cmd("BITFIELD", "k", "INCRBY", t, off, inc) == [wrapped]
            put(off, bits, wrapped)
        assert conn.cmd("GET", "k") == (bytes(model) if model else None)
