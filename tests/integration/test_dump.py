"""DUMP, RESTORE and MIGRATE against Debian's redis-server 7.0.

Payloads cross both ways for every type and encoding the two servers
share: a value DUMPed by Redis restores into HotKV with the same contents
(DEBUG DIGEST-VALUE, Redis's own fingerprint) and the encoding HotKV gives
the same data built by commands, and a HotKV payload restores into Redis
the same way. Values Redis 7.0 cannot read (hash field TTLs, RDB 12; vector
sets) round-trip within HotKV, one of them from a payload built by hand.

Every error RESTORE, DUMP and MIGRATE can answer is compared byte for byte
with Redis; payloads cut short or with bytes flipped (the checksum
recomputed so they reach the decoder) get an error and never take the
server down. MIGRATE moves keys to redis-server and to a second HotKV:
COPY, REPLACE, KEYS, AUTH, AUTH2, another database, errors from the
target, a target that never answers, a cached connection the target
closed. What RESTORE and MIGRATE propagate is read from DEBUG JOURNAL and
their keyspace events are compared with Redis's.

The servers are private (enable-debug-command yes), so these tests are
skipped with --host; those needing redis-server skip without it."""
import random
import socket
import struct
import threading
import time

import pytest

from conftest import free_port, real_redis, start_server, stop_checked
from resp import Error, RespConn, encode, parse_commands

OK = "OK"
BAD_FORMAT = Error("ERR Bad data format")
BAD_PAYLOAD = Error("ERR DUMP payload version or checksum are wrong")
BUSYKEY = Error("BUSYKEY Target key name already exists.")


# ---- CRC-64 and payload helpers ----------------------------------------------

def _crc_table():
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 reflected
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
        table.append(crc)
    return table


CRC_TABLE = _crc_table()


def crc64(data):
    crc = 0
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def payload(body, version=10):
    """A DUMP payload: the body, the version, the CRC-64 of both."""
    head = body + struct.pack("<H", version)
    return head + struct.pack("<Q", crc64(head))


def body_of(p):
    return p[:-10]


def version_of(p):
    return struct.unpack("<H", p[-10:-8])[0]


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rdb_str(s):
    if isinstance(s, str):
        s = s.encode()
    return rdb_len(len(s)) + s


def now_ms():
    return int(time.time() * 1000)


# ---- servers -----------------------------------------------------------------

@pytest.fixture(scope="module")
def hk_srv(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes")
    yield srv
    stop_checked(srv)


@pytest.fixture(scope="module")
def ref_port():
    with real_redis("--enable-debug-command", "yes") as port:
        if port is None:
            pytest.skip("redis-server not installed")
        yield port


@pytest.fixture
def hk(hk_srv):
    c = RespConn("127.0.0.1", hk_srv.port)
    assert c.cmd("FLUSHALL") == OK
    yield c
    c.close()


@pytest.fixture
def rd(ref_port):
    c = RespConn("127.0.0.1", ref_port)
    assert c.cmd("FLUSHALL") == OK
    yield c
    c.close()


def run_all(c, cmds):
    for cmd in cmds:
        rep = c.cmd(*cmd)
        assert not isinstance(rep, Error), (cmd, rep)


def digest(c, key):
    return c.cmd("DEBUG", "DIGEST-VALUE", key)[0]


# ---- every type and encoding, both ways -----------------------------------------

def members(prefix, n):
    return ["%s%d" % (prefix, i) for i in range(n)]


def pairs(prefix, n, score=lambda i: str(i)):
    out = []
    for i in range(n):
        out += [score(i), "%s%d" % (prefix, i)]
    return out


def fields(n, value=lambda i: "v%d" % i):
    out = []
    for i in range(n):
        out += ["f%d" % i, value(i)]
    return out


STREAM = [["XADD", "k", "1-1", "a", "1", "b", "2"], ["XADD", "k", "2-1", "a", "3", "b", "4"],
          ["XADD", "k", "3-1", "c", "x"], ["XADD", "k", "4-1", "a", "5", "b", "6"], ["XDEL", "k", "2-1"],
          ["XGROUP", "CREATE", "k", "g1", "0"], ["XGROUP", "CREATE", "k", "g2", "$"],
          ["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "k", ">"],
          ["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "1", "STREAMS", "k", ">"],
          ["XACK", "k", "g1", "1-1"], ["XGROUP", "CREATECONSUMER", "k", "g2", "carol"]]

# (name, commands building key "k", whether Redis 7.0 gives the encoding
# HotKV gives: 7.2 brought listpack lists and sets, which 7.0 keeps as
# quicklist and hashtable).
CASES = [
    ("int", [["SET", "k", "12345"]], True),
    ("negative-int", [["SET", "k", "-2147483648"]], True),
    ("int64", [["SET", "k", "9223372036854775807"]], True),
    ("zero", [["SET", "k", "0"]], True),
    ("not-canonical-int", [["SET", "k", "007"]], True),
    ("embstr", [["SET", "k", "hello world"]], True),
    ("raw", [["SET", "k", "x" * 100]], True),
    ("compressible", [["SET", "k", "abcd" * 500]], True),
    ("binary", [["SET", "k", bytes(range(256))]], True),
    ("empty-string", [["SET", "k", ""]], True),
    ("appended", [["SET", "k", "ab"], ["APPEND", "k", "cd"]], True),
    ("list-small", [["RPUSH", "k", "a", "1", "-5", "xyz"]], False),
    ("list-big", [["RPUSH", "k"] + members("element-", 2000)], True),
    ("list-long-items", [["RPUSH", "k", "y" * 9000, "z" * 70]], True),
    ("set-intset", [["SADD", "k", "1", "-7", "300", "70000", "-2147483649"]], True),
    ("set-intset-big", [["SADD", "k"] + [str(i) for i in range(600)]], True),
    ("set-small", [["SADD", "k", "a", "b", "c"]], False),
    ("set-big", [["SADD", "k"] + members("m", 300)], True),
    ("set-long-member", [["SADD", "k", "a", "q" * 100]], True),
    ("zset-small", [["ZADD", "k", "1", "a", "2.5", "b", "-3", "c", "inf", "d", "-inf", "e"]], True),
    ("zset-big", [["ZADD", "k"] + pairs("m", 300)], True),
    ("zset-long-member", [["ZADD", "k", "1", "a", "2", "w" * 100]], True),
    ("hash-small", [["HSET", "k"] + fields(5)], True),
    ("hash-big", [["HSET", "k"] + fields(600)], True),
    ("hash-long-value", [["HSET", "k", "f", "v" * 100, "g", "1"]], True),
    ("hash-ints", [["HSET", "k", "1", "2", "300", "-4"]], True),
    ("stream", STREAM, True),
    ("stream-big", [["XADD", "k", "%d-1" % i, "f", "v%d" % i] for i in range(1, 400)] +
     [["XTRIM", "k", "MAXLEN", "350"], ["XGROUP", "CREATE", "k", "g", "0"],
      ["XREADGROUP", "GROUP", "g", "c", "COUNT", "20", "STREAMS", "k", ">"]], True),
    ("stream-empty", [["XADD", "k", "5-5", "f", "v"], ["XDEL", "k", "5-5"]], True),
]


# Built by commands these have an encoding a load does not give: APPEND
# leaves a raw string, which loads as embstr when short (in Redis too).
LOADS_DIFFERENTLY = {"appended"}


def case_ids():
    return [c[0] for c in CASES]


@pytest.mark.parametrize("name,cmds,shared", CASES, ids=case_ids())
def test_redis_payload_restores_into_hotkv(hk, rd, name, cmds, shared):
    run_all(rd, cmds)
    dump = rd.cmd("DUMP", "k")
    assert hk.cmd("RESTORE", "k", "0", dump) == OK
    assert hk.cmd("TYPE", "k") == rd.cmd("TYPE", "k")
    assert digest(hk, "k") == digest(rd, "k")
    # The encoding is the one HotKV gives the same data built by commands.
    run_all(hk, [[a if a != "k" else "native" for a in cmd] for cmd in cmds])
    if name not in LOADS_DIFFERENTLY:
        assert hk.cmd("OBJECT", "ENCODING", "k") == hk.cmd("OBJECT", "ENCODING", "native")
    if shared and name not in LOADS_DIFFERENTLY:
        assert hk.cmd("OBJECT", "ENCODING", "k") == rd.cmd("OBJECT", "ENCODING", "k")


@pytest.mark.parametrize("name,cmds,shared", CASES, ids=case_ids())
def test_hotkv_payload_restores_into_redis(hk, rd, name, cmds, shared):
    run_all(hk, cmds)
    dump = hk.cmd("DUMP", "k")
    assert version_of(dump) == 10
    assert crc64(dump[:-8]) == struct.unpack("<Q", dump[-8:])[0]
    assert rd.cmd("RESTORE", "k", "0", dump) == OK
    assert rd.cmd("TYPE", "k") == hk.cmd("TYPE", "k")
    assert digest(rd, "k") == digest(hk, "k")
    run_all(rd, [[a if a != "k" else "native" for a in cmd] for cmd in cmds])
    if name not in LOADS_DIFFERENTLY:
        assert rd.cmd("OBJECT", "ENCODING", "k") == rd.cmd("OBJECT", "ENCODING", "native")
    # And back: HotKV reads its own payload to the same value.
    assert hk.cmd("RESTORE", "k2", "0", dump) == OK
    assert digest(hk, "k2") == digest(hk, "k")
    if name not in LOADS_DIFFERENTLY:
        assert hk.cmd("OBJECT", "ENCODING", "k2") == hk.cmd("OBJECT", "ENCODING", "k")


# Values whose serialisation has one form: without compression (LZF output
# is the compressor's choice; both servers read each other's) the payloads
# are the very bytes Redis 7.0 writes. Streams are not here: their pending
# entries and consumers carry the times they were delivered and seen.
SAME_BYTES = ["int", "negative-int", "int64", "zero", "not-canonical-int", "embstr", "raw", "compressible",
              "binary", "empty-string", "appended", "set-intset", "zset-small", "hash-small", "hash-ints",
              "list-small", "stream-empty"]


@pytest.mark.parametrize("name", SAME_BYTES)
def test_payload_bytes_same_as_redis(hk, rd, name):
    cmds = dict((c[0], c[1]) for c in CASES)[name]
    run_all(hk, cmds)
    run_all(rd, cmds)
    for c in (hk, rd):
        assert c.cmd("CONFIG", "SET", "rdbcompression", "no") == OK
    try:
        assert hk.cmd("DUMP", "k") == rd.cmd("DUMP", "k")
    finally:
        for c in (hk, rd):
            c.cmd("CONFIG", "SET", "rdbcompression", "yes")


def test_stream_groups_survive(hk, rd):
    run_all(rd, STREAM)
    assert hk.cmd("RESTORE", "k", "0", rd.cmd("DUMP", "k")) == OK
    for args in (["XRANGE", "k", "-", "+"], ["XPENDING", "k", "g1"], ["XPENDING", "k", "g1", "-", "+", "10"],
                 ["XLEN", "k"]):
        mine, theirs = hk.cmd(*args), rd.cmd(*args)
        if args[0] == "XPENDING" and len(args) > 3:
            # Idle times differ by the time between the two calls.
            mine = [[e[0], e[1], e[3]] for e in mine]
            theirs = [[e[0], e[1], e[3]] for e in theirs]
        assert mine == theirs, args
    keep = (b"name", b"consumers", b"pending", b"last-delivered-id", b"entries-read", b"lag")

    def groups(c):
        out = []
        for g in c.cmd("XINFO", "GROUPS", "k"):
            d = dict(zip(g[::2], g[1::2]))
            out.append({k: d.get(k) for k in keep})
        return out

    assert groups(hk) == groups(rd)
    info = dict(zip(*[iter(hk.cmd("XINFO", "STREAM", "k"))] * 2))
    ref = dict(zip(*[iter(rd.cmd("XINFO", "STREAM", "k"))] * 2))
    for k in (b"length", b"last-generated-id", b"max-deleted-entry-id", b"entries-added", b"groups"):
        assert info[k] == ref[k], k
    # Consumers keep their names and pending counts.
    cons = [[c[1], c[3]] for c in hk.cmd("XINFO", "CONSUMERS", "k", "g1")]
    assert cons == [[c[1], c[3]] for c in rd.cmd("XINFO", "CONSUMERS", "k", "g1")]


def test_dump_missing_key_and_wrong_arity(hk, rd):
    assert hk.cmd_raw("DUMP", "nokey") == rd.cmd_raw("DUMP", "nokey") == b"$-1\r\n"
    for args in (["DUMP"], ["DUMP", "a", "b"]):
        assert hk.cmd_raw(*args) == rd.cmd_raw(*args)


def test_dump_counts_hits_and_misses(hk):
    def stats():
        text = hk.cmd("INFO", "stats").decode()
        d = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
        return int(d["keyspace_hits"]), int(d["keyspace_misses"])

    hk.cmd("SET", "k", "v")
    h0, m0 = stats()
    hk.cmd("DUMP", "k")
    hk.cmd("DUMP", "nokey")
    h1, m1 = stats()
    assert (h1 - h0, m1 - m0) == (1, 1)


def test_rdbcompression_off_writes_plain_strings(hk, rd):
    hk.cmd("SET", "k", "abcd" * 500)
    compressed = hk.cmd("DUMP", "k")
    assert hk.cmd("CONFIG", "SET", "rdbcompression", "no") == OK
    try:
        plain = hk.cmd("DUMP", "k")
    finally:
        hk.cmd("CONFIG", "SET", "rdbcompression", "yes")
    assert len(plain) > len(compressed)
    assert b"abcd" * 500 in plain
    rd.cmd("CONFIG", "SET", "rdbcompression", "no")
    try:
        rd.cmd("SET", "k", "abcd" * 500)
        assert rd.cmd("DUMP", "k") == plain
    finally:
        rd.cmd("CONFIG", "SET", "rdbcompression", "yes")
    assert rd.cmd("RESTORE", "k2", "0", plain) == OK
    assert rd.cmd("GET", "k2") == b"abcd" * 500


# ---- RESTORE: options, TTLs, clocks -----------------------------------------------

def test_restore_ttl_relative_and_absolute(hk, rd):
    hk.cmd("SET", "src", "v")
    p = hk.cmd("DUMP", "src")
    for c in (hk, rd):
        assert c.cmd("RESTORE", "a", "50000", p) == OK
        assert 49000 <= c.cmd("PTTL", "a") <= 50000
        at = now_ms() + 100000
        assert c.cmd("RESTORE", "b", str(at), p, "ABSTTL") == OK
        assert c.cmd("PEXPIRETIME", "b") == at
        assert c.cmd("RESTORE", "c", "0", p) == OK
        assert c.cmd("PTTL", "c") == -1
        # A time already past stores nothing and answers OK.
        assert c.cmd("RESTORE", "d", "1", p, "ABSTTL") == OK
        assert c.cmd("EXISTS", "d") == 0
        # ... and, with REPLACE, removes what was there.
        c.cmd("SET", "e", "old")
        assert c.cmd("RESTORE", "e", "1", p, "ABSTTL", "REPLACE") == OK
        assert c.cmd("EXISTS", "e") == 0


def test_restore_replace(hk, rd):
    for c in (hk, rd):
        c.cmd("RPUSH", "src", "a", "b")
        p = c.cmd("DUMP", "src")
        c.cmd("SET", "k", "old", "EX", "100")
        assert c.cmd("RESTORE", "k", "0", p) == BUSYKEY
        assert c.cmd("RESTORE", "k", "0", p, "REPLACE") == OK
        assert c.cmd("LRANGE", "k", "0", "-1") == [b"a", b"b"]
        assert c.cmd("TTL", "k") == -1
        assert c.cmd("RESTORE", "k", "0", p, "replace", "absttl") == OK


def test_restore_over_an_expired_key(hk, rd):
    for c in (hk, rd):
        c.cmd("SET", "src", "new")
        p = c.cmd("DUMP", "src")
        c.cmd("SET", "k", "old", "PX", "1")
        time.sleep(0.01)
        assert c.cmd("RESTORE", "k", "0", p) == OK
        assert c.cmd("GET", "k") == b"new"


def test_restore_idletime_and_freq(hk, rd):
    for c in (hk, rd):
        c.cmd("SET", "src", "v")
        p = c.cmd("DUMP", "src")
        assert c.cmd("RESTORE", "a", "0", p, "IDLETIME", "1000") == OK
        assert 1000 <= c.cmd("OBJECT", "IDLETIME", "a") <= 1002
        assert c.cmd("RESTORE", "b", "0", p, "IDLETIME", "0") == OK
        assert c.cmd("OBJECT", "IDLETIME", "b") <= 1
        # Accepted and checked; without an LFU policy there is no counter.
        assert c.cmd("RESTORE", "f", "0", p, "FREQ", "100") == OK
    assert hk.cmd_raw("OBJECT", "FREQ", "f") == rd.cmd_raw("OBJECT", "FREQ", "f")
    # Spans longer than the 24-bit clock wrap the same way.
    for idle in ("100000000", "16777215", "16777216"):
        hk.cmd("DEL", "w")
        rd.cmd("DEL", "w")
        assert hk.cmd("RESTORE", "w", "0", p, "IDLETIME", idle) == OK
        assert rd.cmd("RESTORE", "w", "0", p, "IDLETIME", idle) == OK
        assert abs(hk.cmd("OBJECT", "IDLETIME", "w") - rd.cmd("OBJECT", "IDLETIME", "w")) <= 2, idle


def test_restore_errors_same_as_redis(hk, rd):
    hk.cmd("SET", "src", "v")
    good = hk.cmd("DUMP", "src")
    bad_crc = good[:-1] + bytes([good[-1] ^ 1])
    newer = payload(body_of(good), 13)
    unknown_type = payload(b"\xc8" + body_of(good)[1:])
    cut = payload(body_of(good)[:-1])
    cases = [
        ["RESTORE"], ["RESTORE", "k"], ["RESTORE", "k", "0"],
        ["RESTORE", "k", "abc", good], ["RESTORE", "k", "-1", good], ["RESTORE", "k", "1.5", good],
        ["RESTORE", "k", "0", good, "BADOPT"], ["RESTORE", "k", "0", good, "IDLETIME"],
        ["RESTORE", "k", "0", good, "FREQ"], ["RESTORE", "k", "0", good, "IDLETIME", "-1"],
        ["RESTORE", "k", "0", good, "IDLETIME", "x"], ["RESTORE", "k", "0", good, "FREQ", "256"],
        ["RESTORE", "k", "0", good, "FREQ", "-1"], ["RESTORE", "k", "0", good, "FREQ", "1.5"],
        ["RESTORE", "k", "0", good, "IDLETIME", "1", "FREQ", "1"],
        ["RESTORE", "k", "0", good, "FREQ", "1", "IDLETIME", "1"],
        ["RESTORE", "k", "0", good, "IDLETIME", "-1", "BADOPT"], ["RESTORE", "k", "0", good, "BADOPT", "IDLETIME", "-1"],
        ["RESTORE", "k", "0", ""], ["RESTORE", "k", "0", "short"], ["RESTORE", "k", "0", bad_crc],
        ["RESTORE", "k", "0", newer], ["RESTORE", "k", "0", unknown_type], ["RESTORE", "k", "0", cut],
        ["RESTORE", "k", "0", payload(b"")], ["RESTORE", "k", "-1", "short"],
        # An existing key is refused before the TTL and the payload are looked at.
        ["RESTORE", "exists", "-1", "short"], ["RESTORE", "exists", "abc", good],
        ["RESTORE", "exists", "0", good, "IDLETIME", "-1"],
        ["RESTORE", "exists", "-1", "short", "REPLACE"],
    ]
    for c in (hk, rd):
        c.cmd("SET", "exists", "x")
    for args in cases:
        assert hk.cmd_raw(*args) == rd.cmd_raw(*args), args
        assert hk.cmd("GET", "k") == rd.cmd("GET", "k"), args
        hk.cmd("DEL", "k")
        rd.cmd("DEL", "k")


def test_restore_in_multi_and_scripts(hk):
    hk.cmd("SET", "src", "v")
    p = hk.cmd("DUMP", "src")
    assert hk.cmd("MULTI") == OK
    assert hk.cmd("RESTORE", "a", "0", p) == "QUEUED"
    assert hk.cmd("DUMP", "a") == "QUEUED"
    assert hk.cmd("EXEC") == [OK, p]
    assert hk.cmd("EVAL", "return redis.call('RESTORE', KEYS[1], 0, ARGV[1])", "1", "b", p) == OK
    assert hk.cmd("EVAL", "return redis.call('DUMP', KEYS[1])", "1", "b") == p


# ---- RDB 12: hashes with field TTLs, built by us and by hand -----------------------

def test_hash_field_ttl_round_trip(hk):
    hk.cmd("HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3")
    assert hk.cmd("HPEXPIRE", "h", "100000", "FIELDS", "2", "f1", "f3") == [1, 1]
    p = hk.cmd("DUMP", "h")
    assert version_of(p) == 12 and p[0] == 25  # RDB_TYPE_HASH_LISTPACK_EX
    deadlines = hk.cmd("HPEXPIRETIME", "h", "FIELDS", "3", "f1", "f2", "f3")
    assert hk.cmd("RESTORE", "h2", "0", p) == OK
    assert hk.cmd("HPEXPIRETIME", "h2", "FIELDS", "3", "f1", "f2", "f3") == deadlines

    def as_dict(c, key):
        flat = c.cmd("HGETALL", key)
        return dict(zip(flat[::2], flat[1::2]))

    assert as_dict(hk, "h2") == as_dict(hk, "h")
    assert hk.cmd("OBJECT", "ENCODING", "h2") == b"listpackex"
    assert digest(hk, "h2") == digest(hk, "h")
    # A hash past the listpack limits: RDB_TYPE_HASH_METADATA.
    hk.cmd("HSET", "big", *fields(600))
    hk.cmd("HPEXPIRE", "big", "100000", "FIELDS", "1", "f7")
    p = hk.cmd("DUMP", "big")
    assert version_of(p) == 12 and p[0] == 24
    assert hk.cmd("RESTORE", "big2", "0", p) == OK
    assert hk.cmd("OBJECT", "ENCODING", "big2") == b"hashtable"
    assert digest(hk, "big2") == digest(hk, "big")
    assert hk.cmd("HPEXPIRETIME", "big2", "FIELDS", "2", "f7", "f8") == \
        hk.cmd("HPEXPIRETIME", "big", "FIELDS", "2", "f7", "f8")
    # Version 12 only for the encodings that carry TTLs.
    hk.cmd("HPERSIST", "h", "FIELDS", "2", "f1", "f3")
    p = hk.cmd("DUMP", "h")
    assert version_of(p) == (12 if p[0] in (24, 25) else 10)
    hk.cmd("HSET", "plain", "f", "v")
    assert version_of(hk.cmd("DUMP", "plain")) == 10


def test_redis_refuses_rdb12_payload(hk, rd):
    hk.cmd("HSET", "h", "f", "v")
    hk.cmd("HEXPIRE", "h", "100", "FIELDS", "1", "f")
    assert rd.cmd("RESTORE", "h", "0", hk.cmd("DUMP", "h")) == BAD_PAYLOAD


def hash_metadata_payload(fields_ttls, min_expire):
    """RDB_TYPE_HASH_METADATA as Redis 7.4+ writes it: the smallest
    deadline (8 bytes, little-endian), the field count, then per field its
    deadline relative to the smallest plus one (0: none), name, value."""
    body = bytes([24]) + struct.pack("<Q", min_expire) + rdb_len(len(fields_ttls))
    for f, v, at in fields_ttls:
        body += rdb_len(0 if at is None else at - min_expire + 1) + rdb_str(f) + rdb_str(v)
    return payload(body, 12)


def test_hand_built_rdb12_hash(hk):
    base = now_ms() + 200000
    p = hash_metadata_payload([("a", "1", base), ("b", "2", None), ("c", "3", base + 5000)], base)
    assert hk.cmd("RESTORE", "h", "0", p) == OK
    assert sorted(hk.cmd("HGETALL", "h")) == sorted([b"a", b"1", b"b", b"2", b"c", b"3"])
    assert hk.cmd("HPEXPIRETIME", "h", "FIELDS", "3", "a", "b", "c") == [base, -1, base + 5000]
    # Small enough for a listpack: the loader picks Redis's encoding.
    assert hk.cmd("OBJECT", "ENCODING", "h") == b"listpackex"
    # A field already past its deadline is dropped on load.
    past = now_ms() - 1000
    p = hash_metadata_payload([("old", "x", past), ("new", "y", None)], past)
    assert hk.cmd("RESTORE", "h2", "0", p) == OK
    assert hk.cmd("HGETALL", "h2") == [b"new", b"y"]


# ---- vector sets (no Redis 7.0 counterpart) -------------------------------------

def test_vector_set_round_trip(hk):
    for i in range(20):
        hk.cmd("VADD", "v", "VALUES", "3", str(i), str(i * 2 % 7), "1", "e%d" % i)
    hk.cmd("VSETATTR", "v", "e3", '{"n":3}')
    p = hk.cmd("DUMP", "v")
    assert p[0] == 7  # RDB_TYPE_MODULE_2
    assert hk.cmd("RESTORE", "v2", "0", p) == OK
    assert hk.cmd("VCARD", "v2") == 20
    assert hk.cmd("VGETATTR", "v2", "e3") == b'{"n":3}'
    assert hk.cmd("VSIM", "v2", "ELE", "e5", "COUNT", "5") == hk.cmd("VSIM", "v", "ELE", "e5", "COUNT", "5")
    assert digest(hk, "v2") == digest(hk, "v")


# ---- corrupt payloads ------------------------------------------------------------

CORRUPT_SOURCES = [c for c in CASES if c[0] in ("raw", "compressible", "list-small", "list-big", "set-intset",
                                                 "set-small", "set-big", "zset-small", "zset-big", "hash-small",
                                                 "hash-big", "stream", "stream-big")]


def readback(c, key):
    """Touch every element of key the way clients would."""
    t = c.cmd("TYPE", key)
    if isinstance(t, Error) or t == "none":
        return
    reads = {"string": [["GET", key], ["STRLEN", key]], "list": [["LRANGE", key, "0", "-1"], ["LLEN", key]],
             "set": [["SMEMBERS", key], ["SCARD", key]], "zset": [["ZRANGE", key, "0", "-1", "WITHSCORES"]],
             "hash": [["HGETALL", key], ["HLEN", key]],
             "stream": [["XRANGE", key, "-", "+"], ["XINFO", "STREAM", key, "FULL"]]}
    for args in reads.get(t, []) + [["OBJECT", "ENCODING", key], ["DEBUG", "DIGEST-VALUE", key], ["DUMP", key]]:
        c.cmd(*args)


@pytest.mark.parametrize("sanitize", ["no", "yes"])
def test_truncated_payloads_same_as_redis(hk, rd, sanitize):
    """Bodies cut short, the footer recomputed: Redis reads on into the
    footer (a cut string may end in its bytes and load), so the verdict is
    compared with Redis's, and what loads must read back the same."""
    for c in (hk, rd):
        c.cmd("CONFIG", "SET", "sanitize-dump-payload", sanitize)
    try:
        for name, cmds, _ in CORRUPT_SOURCES:
            rd.cmd("FLUSHALL")
            run_all(rd, cmds)
            body = body_of(rd.cmd("DUMP", "k"))
            cuts = range(len(body)) if len(body) < 300 else sorted(random.Random(1).sample(range(len(body)), 300))
            for n in cuts:
                p = payload(body[:n])
                mine = hk.cmd("RESTORE", "t", "0", p, "REPLACE")
                theirs = rd.cmd("RESTORE", "t", "0", p, "REPLACE")
                assert mine == theirs, (name, n, mine, theirs)
                assert mine in (OK, BAD_FORMAT), (name, n, mine)
                if mine == OK:
                    assert digest(hk, "t") == digest(rd, "t"), (name, n)
        assert hk.cmd("PING") == "PONG"
    finally:
        for c in (hk, rd):
            c.cmd("CONFIG", "SET", "sanitize-dump-payload", "no")


def test_flipped_payloads_never_crash(hk_srv, hk):
    """With sanitize-dump-payload yes, any body that reaches the decoder
    (the CRC recomputed) is refused or makes a value that reads back."""
    hk.cmd("CONFIG", "SET", "sanitize-dump-payload", "yes")
    rnd = random.Random(7)
    accepted = refused = 0
    try:
        for name, cmds, _ in CORRUPT_SOURCES:
            hk.cmd("FLUSHALL")
            run_all(hk, cmds)
            body = bytearray(body_of(hk.cmd("DUMP", "k")))
            for _ in range(150):
                b = bytearray(body)
                for _ in range(rnd.choice((1, 1, 2, 4))):
                    i = rnd.randrange(len(b))
                    b[i] = rnd.randrange(256) if rnd.random() < 0.5 else b[i] ^ (1 << rnd.randrange(8))
                rep = hk.cmd("RESTORE", "t", "0", payload(bytes(b)), "REPLACE")
                if rep == OK:
                    accepted += 1
                    readback(hk, "t")
                else:
                    assert isinstance(rep, Error), rep
                    refused += 1
        assert hk.cmd("PING") == "PONG"
        assert refused > 0
    finally:
        hk.cmd("CONFIG", "SET", "sanitize-dump-payload", "no")
    assert hk_srv.alive()


def test_sanitize_payload_setting(hk):
    assert hk.cmd("CONFIG", "GET", "sanitize-dump-payload") == [b"sanitize-dump-payload", b"no"]
    for v in ("yes", "clients", "no"):
        assert hk.cmd("CONFIG", "SET", "sanitize-dump-payload", v) == OK
        hk.cmd("SET", "s", "v")
        assert hk.cmd("RESTORE", "s2", "0", hk.cmd("DUMP", "s"), "REPLACE") == OK


# ---- propagation and keyspace events ------------------------------------------------

def journal_cmds(c):
    cmds = parse_commands(c.cmd("DEBUG", "JOURNAL", "READ"))
    return [[a.upper() if i == 0 else a for i, a in enumerate(cmd)] for cmd in cmds
            if cmd[0].upper() != b"SELECT"]


def test_restore_propagation(hk):
    hk.cmd("SET", "src", "v")
    p = hk.cmd("DUMP", "src")
    hk.cmd("SET", "old", "x")
    assert hk.cmd("DEBUG", "JOURNAL", "START") == OK
    try:
        t0 = now_ms()
        assert hk.cmd("RESTORE", "a", "60000", p, "IDLETIME", "5") == OK
        assert hk.cmd("RESTORE", "b", "0", p) == OK
        assert hk.cmd("RESTORE", "c", "99999999999999", p, "ABSTTL") == OK
        assert hk.cmd("RESTORE", "d", "1", p, "ABSTTL") == OK
        assert hk.cmd("RESTORE", "old", "1", p, "ABSTTL", "REPLACE") == OK
        assert hk.cmd("RESTORE", "b", "0", p) == BUSYKEY
        got = journal_cmds(hk)
    finally:
        hk.cmd("DEBUG", "JOURNAL", "STOP")
    assert len(got) == 4, got
    a = got[0]
    assert a[:2] == [b"RESTORE", b"a"] and a[3:] == [p, b"IDLETIME", b"5", b"ABSTTL"]
    assert t0 + 60000 <= int(a[2]) <= now_ms() + 60000
    assert got[1] == [b"RESTORE", b"b", b"0", p]
    assert got[2] == [b"RESTORE", b"c", b"99999999999999", p, b"ABSTTL"]
    assert got[3] == [b"DEL", b"old"]


class Listener:
    def __init__(self, port):
        self.c = RespConn("127.0.0.1", port)
        self.c.send(encode("PSUBSCRIBE", "__key*__:*"))
        assert self.c.read()[0] == b"psubscribe"
        self.c.send(encode("SUBSCRIBE", "sync"))
        assert self.c.read()[0] == b"subscribe"
        self.n = 0

    def collect(self, writer):
        self.n += 1
        token = str(self.n).encode()
        writer.cmd("PUBLISH", "sync", token)
        out = []
        while True:
            m = self.c.read()
            if m[0] == b"message":
                if m[2] == token:
                    return out
                continue
            out.append((m[2].decode(), m[3].decode()))

    def close(self):
        self.c.close()


def test_events_same_as_redis(hk_srv, ref_port, hk, rd):
    hk.cmd("SET", "src", "v")
    p = hk.cmd("DUMP", "src")
    got = {}
    for name, c, port in (("hk", hk, hk_srv.port), ("rd", rd, ref_port)):
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEAn")
        c.cmd("SET", "old", "x")
        c.cmd("SET", "gone", "x")
        lst = Listener(port)
        try:
            lst.collect(c)
            for args in (["RESTORE", "a", "0", p], ["RESTORE", "a", "0", p, "REPLACE"],
                         ["RESTORE", "old", "0", p, "REPLACE"], ["RESTORE", "gone", "1", p, "ABSTTL", "REPLACE"],
                         ["RESTORE", "never", "1", p, "ABSTTL"], ["RESTORE", "b", "5000", p],
                         ["RESTORE", "a", "0", p], ["DUMP", "a"], ["DUMP", "nokey"]):
                c.cmd(*args)
            got[name] = lst.collect(c)
        finally:
            lst.close()
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
    assert got["hk"] == got["rd"]
    assert ("__keyevent@0__:restore", "a") in got["hk"]


# ---- MIGRATE -------------------------------------------------------------------

@pytest.fixture(scope="module")
def hk_target(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes")
    yield srv
    stop_checked(srv)


@pytest.fixture
def targets(hk_target, ref_port):
    """(name, port, connection) of a HotKV and a Redis target, flushed."""
    out = []
    for name, port in (("hotkv", hk_target.port), ("redis", ref_port)):
        c = RespConn("127.0.0.1", port)
        c.cmd("SELECT", "0")
        assert c.cmd("FLUSHALL") == OK
        out.append((name, port, c))
    yield out
    for _, _, c in out:
        c.close()


def test_migrate_one_key(hk, targets):
    for name, port, t in targets:
        hk.cmd("RPUSH", "l", "a", "b", "c")
        hk.cmd("PEXPIRE", "l", "100000")
        d = digest(hk, "l")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "l", "0", "5000") == OK, name
        assert hk.cmd("EXISTS", "l") == 0
        assert digest(t, "l") == d
        assert 90000 < t.cmd("PTTL", "l") <= 100000
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "l", "0", "5000") == "NOKEY"


def test_migrate_copy_replace_and_busy(hk, targets):
    for name, port, t in targets:
        hk.cmd("SET", "k", "mine")
        t.cmd("SET", "k", "theirs")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000") == \
            Error("ERR Target instance replied with error: BUSYKEY Target key name already exists."), name
        assert hk.cmd("GET", "k") == b"mine" and t.cmd("GET", "k") == b"theirs"
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000", "COPY") == \
            Error("ERR Target instance replied with error: BUSYKEY Target key name already exists.")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000", "COPY", "REPLACE") == OK
        assert hk.cmd("GET", "k") == b"mine" and t.cmd("GET", "k") == b"mine"
        hk.cmd("SET", "k", "again")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000", "REPLACE") == OK
        assert hk.cmd("EXISTS", "k") == 0 and t.cmd("GET", "k") == b"again"


def test_migrate_keys_and_database(hk, targets):
    for name, port, t in targets:
        hk.cmd("FLUSHALL")
        hk.cmd("SET", "a", "1")
        hk.cmd("HSET", "{x}b", "f", "v")
        hk.cmd("ZADD", "c", "1", "m")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "", "3", "5000", "KEYS", "a", "nokey", "{x}b", "c") == OK
        assert hk.cmd("DBSIZE") == 0
        t.cmd("SELECT", "3")
        assert t.cmd("DBSIZE") == 3
        assert t.cmd("HGET", "{x}b", "f") == b"v"
        # The cached connection is on database 3 now; back to 0.
        hk.cmd("SET", "z", "0")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "z", "0", "5000") == OK
        t.cmd("SELECT", "0")
        assert t.cmd("GET", "z") == b"0"
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "", "0", "5000", "KEYS", "n1", "n2") == "NOKEY"
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "", "99", "5000", "KEYS", "n1") == "NOKEY"
        hk.cmd("SET", "q", "1")
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "q", "99", "5000") == \
            Error("ERR Target instance replied with error: ERR DB index is out of range")
        assert hk.cmd("GET", "q") == b"1"


def test_migrate_auth(hk, targets):
    for name, port, t in targets:
        assert t.cmd("CONFIG", "SET", "requirepass", "sekret") == OK
        try:
            assert t.cmd("AUTH", "sekret") == OK
            # Connections made before the password (MIGRATE's cached one)
            # would stay authenticated.
            t.cmd("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
            hk.cmd("SET", "k", "v")
            rep = hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000")
            assert rep == Error("ERR Target instance replied with error: NOAUTH Authentication required."), name
            rep = hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000", "AUTH", "wrong")
            assert rep.startswith("ERR Target instance replied with error: WRONGPASS"), (name, rep)
            assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000", "AUTH", "sekret") == OK
            assert t.cmd("GET", "k") == b"v"
            hk.cmd("SET", "k2", "v2")
            assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "", "0", "5000", "AUTH2", "default", "sekret",
                          "KEYS", "k2") == OK
            assert t.cmd("GET", "k2") == b"v2"
        finally:
            t.cmd("CONFIG", "SET", "requirepass", "")


def test_migrate_argument_errors_same_as_redis(hk, rd, ref_port):
    closed = free_port()
    for c in (hk, rd):
        c.cmd("SET", "k", "v")
    cases = [
        ["MIGRATE", "h", "1", "k", "0"],
        ["MIGRATE", "127.0.0.1", "1", "k", "0", "100", "BADOPT"],
        ["MIGRATE", "127.0.0.1", "1", "k", "0", "100", "AUTH"],
        ["MIGRATE", "127.0.0.1", "1", "k", "0", "100", "AUTH2", "u"],
        ["MIGRATE", "127.0.0.1", "1", "k", "0", "100", "KEYS", "k"],
        ["MIGRATE", "127.0.0.1", "1", "k", "0", "x"],
        ["MIGRATE", "127.0.0.1", "1", "k", "x", "100"],
        ["MIGRATE", "127.0.0.1", "1", "k", "x", "y"],
        ["MIGRATE", "127.0.0.1", "1", "nokey", "0", "100"],
        ["MIGRATE", "127.0.0.1", "1", "", "0", "100"],
        ["MIGRATE", "127.0.0.1", "1", "", "0", "100", "KEYS"],
        ["MIGRATE", "127.0.0.1", "1", "", "0", "100", "COPY", "KEYS", "nokey"],
        ["MIGRATE", "127.0.0.1", str(closed), "k", "0", "200"],
        ["MIGRATE", "127.0.0.1", "notaport", "k", "0", "200"],
        ["MIGRATE", "host.invalid", "6379", "k", "0", "200"],
    ]
    for args in cases:
        assert hk.cmd_raw(*args) == rd.cmd_raw(*args), args
    assert hk.cmd("GET", "k") == b"v"


def test_migrate_to_a_silent_target_times_out(hk):
    """A target that accepts and never answers: the reply wait is bounded
    by the timeout, the key stays, the next MIGRATE connects afresh."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    port = lsock.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def serve():
        lsock.settimeout(0.2)
        while not stop.is_set():
            try:
                s, _ = lsock.accept()
                accepted.append(s)
            except OSError:
                pass

    th = threading.Thread(target=serve)
    th.start()
    try:
        hk.cmd("SET", "k", "v")
        t0 = time.time()
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "300") == \
            Error("IOERR error or timeout reading to target instance")
        assert 0.25 <= time.time() - t0 < 3
        assert hk.cmd("GET", "k") == b"v"
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "300") == \
            Error("IOERR error or timeout reading to target instance")
        assert len(accepted) == 2  # a timed-out connection is not reused
    finally:
        stop.set()
        th.join()
        for s in accepted:
            s.close()
        lsock.close()


def test_migrate_reuses_and_renews_connections(hk, hk_target, targets):
    t = targets[0][2]
    port = hk_target.port

    def received():
        text = t.cmd("INFO", "stats").decode()
        return int(dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)[
            "total_connections_received"])

    hk.cmd("SET", "a", "1")
    assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "a", "0", "5000", "COPY", "REPLACE") == OK
    before = received()
    for _ in range(5):
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "a", "0", "5000", "COPY", "REPLACE") == OK
    assert received() == before
    # The target drops the cached connection: the next MIGRATE notices and
    # retries once on a new one.
    t.cmd("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    time.sleep(0.1)
    hk.cmd("SET", "b", "2")
    assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "b", "0", "5000") == OK
    assert t.cmd("GET", "b") == b"2"


def test_migrate_propagation_and_events(hk, hk_target, targets):
    port = hk_target.port
    hk.cmd("SET", "a", "1")
    hk.cmd("SET", "b", "2")
    hk.cmd("SET", "c", "3")
    assert hk.cmd("DEBUG", "JOURNAL", "START") == OK
    try:
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "", "0", "5000", "KEYS", "a", "nokey", "b") == OK
        assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "c", "0", "5000", "COPY") == OK
        got = journal_cmds(hk)
    finally:
        hk.cmd("DEBUG", "JOURNAL", "STOP")
    assert got == [[b"DEL", b"a", b"b"]]


def test_migrate_events_same_as_redis(hk_srv, ref_port, hk, rd, hk_target, targets):
    got = {}
    for name, c, port in (("hk", hk, hk_srv.port), ("rd", rd, ref_port)):
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
        c.cmd("SET", "a", "1")
        c.cmd("SET", "b", "2")
        lst = Listener(port)
        try:
            lst.collect(c)
            c.cmd("MIGRATE", "127.0.0.1", str(hk_target.port), "", "5", "5000", "REPLACE", "KEYS", "a", "b")
            c.cmd("MIGRATE", "127.0.0.1", str(hk_target.port), "a", "5", "5000")
            got[name] = lst.collect(c)
        finally:
            lst.close()
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
    assert got["hk"] == got["rd"] == [("__keyspace@0__:a", "del"), ("__keyevent@0__:del", "a"),
                                      ("__keyspace@0__:b", "del"), ("__keyevent@0__:del", "b")]


def test_migrate_between_hotkv_and_redis_every_type(hk, targets):
    """Every case's value crosses to both targets and reads the same there."""
    for name, port, t in targets:
        for case, cmds, _ in CASES:
            hk.cmd("FLUSHALL")
            t.cmd("FLUSHALL")
            run_all(hk, cmds)
            d = digest(hk, "k")
            assert hk.cmd("MIGRATE", "127.0.0.1", str(port), "k", "0", "5000") == OK, (name, case)
            assert digest(t, "k") == d, (name, case)


def test_migrate_in_multi(hk, hk_target, targets):
    t = targets[0][2]
    hk.cmd("SET", "a", "1")
    assert hk.cmd("MULTI") == OK
    assert hk.cmd("MIGRATE", "127.0.0.1", str(hk_target.port), "a", "0", "5000") == "QUEUED"
    assert hk.cmd("EXISTS", "a") == "QUEUED"
    assert hk.cmd("EXEC") == [OK, 0]
    assert t.cmd("GET", "a") == b"1"


def test_command_getkeys(hk, rd):
    for args in (["MIGRATE", "h", "1", "k", "0", "5"],
                 ["MIGRATE", "h", "1", "", "0", "5", "KEYS", "a", "b"],
                 ["MIGRATE", "h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "a"],
                 ["MIGRATE", "h", "1", "", "0", "5", "AUTH2", "keys", "keys", "KEYS", "a", "b"],
                 ["DUMP", "k"], ["RESTORE", "k", "0", "x"]):
        assert hk.cmd("COMMAND", "GETKEYS", *args) == rd.cmd("COMMAND", "GETKEYS", *args), args
    for name in ("dump", "restore", "migrate"):
        mine = hk.cmd("COMMAND", "INFO", name)[0]
        theirs = rd.cmd("COMMAND", "INFO", name)[0]
        assert mine[1] == theirs[1] and mine[3:6] == theirs[3:6] and mine[8] == theirs[8], name
        assert sorted(mine[2]) == sorted(theirs[2]), name
