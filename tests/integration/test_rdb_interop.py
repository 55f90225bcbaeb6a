"""RDB files between HotKV and Debian's Redis 7.0, both ways.

- HotKV's dump.rdb of every type Redis 7.0 has passes Debian's
  redis-check-rdb ("RDB looks OK!", every key counted);
- redis-server 7.0 started on a copy of HotKV's file holds the same data:
  every key's type, value (streams with their groups, consumers and
  PELs) and PEXPIRETIME, DEBUG DIGEST-VALUE per key and DEBUG DIGEST of
  the whole dataset, the function libraries;
- HotKV started on a file redis-server 7.0 wrote (default encoding limits,
  larger ones so that its listpacks exceed HotKV's defaults, and zero ones
  so that everything is a hash table / skiplist) holds the same data, and
  converts what exceeds its own limits as Redis does (OBJECT ENCODING of
  hashes and sorted sets as Redis 7.0 gives after loading that file);
- files written with rdbcompression no and with rdbchecksum no go both
  ways too;
- files in the encodings of older Redis versions (RDB 9: zipmap and
  ziplist hashes, ziplist lists and sorted sets, quicklists of ziplists,
  string-scored sorted sets, intsets, expiry in seconds), written here
  byte by byte, load on both servers to the values they were built from.

The dataset is test_persistence.gen_dataset with redis7=True (no hash
field TTLs, no vector sets: Redis 7.0 cannot read those). Every test
starts its own servers (skipped with --host).
"""
import os
import shutil
import struct
import subprocess

import pytest

from resp import RespConn, encode
from test_persistence import (  # noqa: F401 - fixtures used by name
    FAR_MS, RdbFile, assert_same_views, copy_rdb, dataset_view, datadir, function_libs, gen_dataset, info,
    load_dataset, rdb_len, rdb_str, redis_on, servers, tmpdirs, wait_bgsave)

# (rdbcompression, rdbchecksum)
FILE_OPTIONS = [("yes", "yes"), ("no", "yes"), ("yes", "no")]
FILE_IDS = ["default", "rdbcompression-no", "rdbchecksum-no"]


def file_args(opts):
    comp, ck = opts
    return ("--rdbcompression", comp, "--rdbchecksum", ck)


def check_rdb(path):
    exe = shutil.which("redis-check-rdb")
    if not exe:
        pytest.skip("redis-check-rdb is not installed")
    p = subprocess.run([exe, path], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def cross_view(c, skip_dbs=()):
    """dataset_view without what Redis 7.0 lacks or lays out its own way:
    encodings (7.0 has no listpack sets or lists), hash field TTLs and
    consumers' active-time."""
    return dataset_view(c, encodings=False, hfe=False, active_time=False, skip_dbs=skip_dbs)


def keyspace(c):
    """INFO keyspace's keys= and expires= per database (avg_ttl is an
    estimate, subexpiry is 7.4's)."""
    out = {}
    for k, v in info(c, "keyspace").items():
        if k.startswith("db"):
            fields = dict(part.split("=") for part in v.split(","))
            out[k] = (fields["keys"], fields["expires"])
    return out


def checksum_of(path):
    with open(path, "rb") as f:
        data = f.read()
    return data[-8:]


# ---- HotKV writes, Redis reads ------------------------------------------------


@pytest.mark.parametrize("opts", FILE_OPTIONS, ids=FILE_IDS)
def test_redis_check_rdb_accepts_hotkv_file(servers, datadir, opts):
    c = servers(datadir, *file_args(opts)).conn()
    load_dataset(c, gen_dataset(11, redis7=True))
    assert c.cmd("SAVE") == "OK"
    path = os.path.join(datadir, "dump.rdb")
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0010"
    if opts[1] == "no":
        assert checksum_of(path) == bytes(8)
    rc, out = check_rdb(path)
    assert rc == 0, out[-3000:]
    assert "RDB looks OK!" in out, out[-3000:]
    total = sum(int(keys) for keys, _ in keyspace(c).values())
    assert "[info] %d keys read" % total in out, out[-3000:]


@pytest.mark.parametrize("opts", FILE_OPTIONS, ids=FILE_IDS)
def test_redis_loads_hotkv_file(servers, datadir, tmpdirs, opts):
    srv = servers(datadir, *file_args(opts))
    c = srv.conn()
    load_dataset(c, gen_dataset(12, redis7=True))
    assert c.cmd("SAVE") == "OK"
    mine = cross_view(c)
    rdir = tmpdirs()
    copy_rdb(datadir, rdir)
    with redis_on(rdir) as (port, _, log):
        ref = RespConn("127.0.0.1", port)
        theirs = cross_view(ref)
        assert keyspace(ref) == keyspace(c)
        with open(log) as f:
            text = f.read()
    assert "Done loading RDB" in text
    assert_same_views(mine, theirs, "in redis")


def test_redis_loads_hotkv_file_after_writes_during_bgsave(servers, datadir, tmpdirs):
    """A BGSAVE file whose entries were partly written ahead by clients
    (the side buffers) reads in Redis like any other. The 150,000 bulk keys
    of database 7 are compared through DEBUG DIGEST."""
    srv = servers(datadir, threads=4)
    c = srv.conn(timeout=60)
    load_dataset(c, gen_dataset(13, redis7=True))
    c.cmd("SELECT", 7)
    c.cmd("EVAL", "for i = 1, 150000 do redis.call('SET', 'k:' .. i, 'v:' .. i) end return 1", 0)
    c.cmd("SELECT", 0)
    before = cross_view(c, skip_dbs=(7,))
    writes = [["SELECT", 7]] + [["SET", "k:%d" % i, "changed"] for i in range(1, 150000, 3)] + [["SELECT", 0]]
    writes += [["DEL", "str:emb:%d" % i] for i in range(16)] + [["RPUSH", "list:ql", "more"]]
    writes += [["XADD", "stream:a", "*", "late", "1"], ["HSET", "hash:ht", "field:1", "late"]]
    c.send(encode("BGSAVE") + b"".join(encode(*cmd) for cmd in writes))
    assert c.read() == "Background saving started"
    for _ in writes:
        c.read()
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    assert c.cmd("EXISTS", "str:emb:0") == 0
    rdir = tmpdirs()
    copy_rdb(datadir, rdir)
    rc, out = check_rdb(os.path.join(rdir, "dump.rdb"))
    assert rc == 0, out[-3000:]
    with redis_on(rdir) as (port, _, _):
        theirs = cross_view(RespConn("127.0.0.1", port, timeout=60), skip_dbs=(7,))
    assert_same_views(before, theirs, "in redis")


# ---- Redis writes, HotKV reads ------------------------------------------------

# Encoding limits redis-server 7.0 writes with (the old ziplist names
# where Redis 7.0 still takes them).
REDIS_LIMITS = {
    "default": (),
    "big-listpacks": ("--hash-max-ziplist-entries", "2000", "--hash-max-ziplist-value", "4096",
                      "--zset-max-ziplist-entries", "1000", "--zset-max-ziplist-value", "200",
                      "--set-max-intset-entries", "5000", "--list-max-ziplist-size", "1000",
                      "--list-compress-depth", "2"),
    "no-listpacks": ("--hash-max-listpack-entries", "0", "--zset-max-listpack-entries", "0",
                     "--set-max-intset-entries", "0", "--list-max-listpack-size", "1"),
}


def object_encodings(c, types=(b"hash", b"zset", b"set")):
    """OBJECT ENCODING of the hashes, sorted sets and intsets (the
    encodings Redis 7.0 and 8.4 choose alike)."""
    out = {}
    ndb = int(c.cmd("CONFIG", "GET", "databases")[1])
    for db in range(ndb):
        c.cmd("SELECT", db)
        cur = b"0"
        while True:
            cur, keys = c.cmd("SCAN", cur, "COUNT", 1000)
            for k in keys:
                t = c.cmd("TYPE", k).encode()
                if t in types:
                    enc = c.cmd("OBJECT", "ENCODING", k)
                    if t != b"set" or enc == b"intset":
                        out[(db, k)] = enc
            if cur == b"0":
                break
    c.cmd("SELECT", 0)
    return out


@pytest.mark.parametrize("limits", sorted(REDIS_LIMITS))
def test_hotkv_loads_redis_file(servers, datadir, tmpdirs, limits):
    """Redis 7.0 writes the dataset with its encoding limits; HotKV loads the
    file to the same data, with the encodings Redis gives the same file under
    the default limits."""
    rdir = tmpdirs()
    with redis_on(rdir, *REDIS_LIMITS[limits]) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        load_dataset(ref, gen_dataset(14, redis7=True))
        assert ref.cmd("SAVE") == "OK"
        theirs = cross_view(ref)
        space = keyspace(ref)
    copy_rdb(rdir, datadir)
    # Redis with its default limits on the same file: what it converts.
    edir = tmpdirs()
    copy_rdb(rdir, edir)
    with redis_on(edir) as (port, _, _):
        expected_enc = object_encodings(RespConn("127.0.0.1", port))
    srv = servers(datadir)
    c = srv.conn()
    assert "Loading RDB produced by version 7.0" in srv.log()
    assert keyspace(c) == space
    assert_same_views(theirs, cross_view(c), "in hotkv")
    assert object_encodings(c) == expected_enc
    # What was loaded is live: it changes, saves and loads again.
    c.cmd("HSET", "hash:ht", "new", "field")
    c.cmd("ZADD", "zset:sl", "5", "new")
    again = cross_view(c)
    assert c.cmd("DEBUG", "RELOAD") == "OK"
    assert_same_views(again, cross_view(c), "after DEBUG RELOAD")


@pytest.mark.parametrize("opts", FILE_OPTIONS[1:], ids=FILE_IDS[1:])
def test_hotkv_loads_redis_file_written_without(servers, datadir, tmpdirs, opts):
    rdir = tmpdirs()
    with redis_on(rdir, *file_args(opts)) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        load_dataset(ref, gen_dataset(15, redis7=True))
        assert ref.cmd("SAVE") == "OK"
        theirs = cross_view(ref)
    if opts[1] == "no":
        assert checksum_of(os.path.join(rdir, "dump.rdb")) == bytes(8)
    copy_rdb(rdir, datadir)
    c = servers(datadir).conn()
    assert_same_views(theirs, cross_view(c), "in hotkv")


def test_redis_function_dump_restores_in_hotkv(servers, datadir, tmpdirs):
    """A FUNCTION DUMP payload of Redis 7.0 (libraries in RDB encoding,
    version 10) restores in HotKV. (The other way is not expected: 8.x
    payloads carry RDB version 12, which 7.0 refuses.)"""
    c = servers(datadir).conn()
    with redis_on(tmpdirs()) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        for db, argv in gen_dataset(16, redis7=True):
            if argv[0] == "FUNCTION":
                ref.cmd(*argv)
        assert c.cmd("FUNCTION", "RESTORE", ref.cmd("FUNCTION", "DUMP")) == "OK"
        assert function_libs(c) == function_libs(ref)
        assert len(function_libs(c)) == 2


# ---- older encodings -------------------------------------------------------------


def _zl_entry(value, prevlen):
    head = bytes([prevlen]) if prevlen < 254 else b"\xfe" + prevlen.to_bytes(4, "little")
    if isinstance(value, int):
        v = value
        if 0 <= v <= 12:
            enc = bytes([0xf1 + v])
        elif -128 <= v <= 127:
            enc = b"\xfe" + v.to_bytes(1, "little", signed=True)
        elif -2 ** 15 <= v < 2 ** 15:
            enc = b"\xc0" + v.to_bytes(2, "little", signed=True)
        elif -2 ** 23 <= v < 2 ** 23:
            enc = b"\xf0" + v.to_bytes(3, "little", signed=True)
        elif -2 ** 31 <= v < 2 ** 31:
            enc = b"\xd0" + v.to_bytes(4, "little", signed=True)
        else:
            enc = b"\xe0" + v.to_bytes(8, "little", signed=True)
    else:
        n = len(value)
        if n <= 63:
            enc = bytes([n]) + value
        elif n <= 16383:
            enc = bytes([0x40 | (n >> 8), n & 0xff]) + value
        else:
            enc = b"\x80" + n.to_bytes(4, "big") + value
    return head + enc


def zl_value(x):
    """A ziplist entry's value: an int when x is the canonical decimal form
    of a 64-bit integer (as Redis stored it), else the bytes."""
    if isinstance(x, str):
        x = x.encode()
    try:
        v = int(x)
        if str(v).encode() == x and -2 ** 63 <= v < 2 ** 63:
            return v
    except ValueError:
        pass
    return x


def ziplist(values):
    body, prev, tail = b"", 0, 10
    for x in values:
        e = _zl_entry(zl_value(x), prev)
        tail = 10 + len(body)
        body += e
        prev = len(e)
    total = 10 + len(body) + 1
    return (total.to_bytes(4, "little") + tail.to_bytes(4, "little") + min(len(values), 65535).to_bytes(2, "little")
            + body + b"\xff")


def zipmap(pairs):
    def zlen(n):
        return bytes([n]) if n < 254 else b"\xfe" + n.to_bytes(4, "little")

    out = bytes([min(len(pairs), 254)])
    for k, v in pairs:
        out += zlen(len(k)) + k + zlen(len(v)) + b"\x00" + v
    return out + b"\xff"


def intset(values):
    values = sorted(values)
    width = 2 if all(-2 ** 15 <= v < 2 ** 15 for v in values) else 4 if all(
        -2 ** 31 <= v < 2 ** 31 for v in values) else 8
    return (width.to_bytes(4, "little") + len(values).to_bytes(4, "little")
            + b"".join(v.to_bytes(width, "little", signed=True) for v in values))


def old_double(s):
    return bytes([len(s)]) + s


def old_file():
    """An RDB 9 file of the encodings Redis 5 and 6 wrote, and what each key
    must read back as: {(db, key): (type, value, pexpiretime)}."""
    f = RdbFile(9).aux("redis-ver", "5.0.14").aux("redis-bits", "64").aux("ctime", "1600000000")
    expect = {}
    f.select(0).resize(20, 2)
    pairs = [(b"name", b"zipmap"), (b"n", b"42"), (b"long", b"v" * 300)]
    f.key(9, "old:zipmap", rdb_str(zipmap(pairs)))
    expect[(0, b"old:zipmap")] = (b"hash", sorted(pairs), -1)
    h = [(b"f%d" % i, b"%d" % (i * 1000 - 7) if i % 2 else b"val-%d" % i) for i in range(40)]
    f.key(13, "old:hash:zl", rdb_str(ziplist([x for p in h for x in p])))
    expect[(0, b"old:hash:zl")] = (b"hash", sorted(h), -1)
    big = [(b"field:%d" % i, b"x" * 10) for i in range(700)]  # past hash-max-listpack-entries: converts
    f.key(13, "old:hash:big", rdb_str(ziplist([x for p in big for x in p])))
    expect[(0, b"old:hash:big")] = (b"hash", sorted(big), -1)
    items = [b"a", b"12", b"-5", b"300", b"70000", b"-9000000", b"5000000000", b"9223372036854775807", b"0",
             b"007", b"x" * 100, b"y" * 20000]
    f.key(10, "old:list:zl", rdb_str(ziplist(items)))
    expect[(0, b"old:list:zl")] = (b"list", items, -1)
    nodes = [[b"item-%d" % (n * 50 + i) for i in range(50)] for n in range(4)]
    body = rdb_len(len(nodes)) + b"".join(rdb_str(ziplist(node)) for node in nodes)
    f.key(14, "old:list:ql", body)
    expect[(0, b"old:list:ql")] = (b"list", [x for node in nodes for x in node], -1)
    z = [(b"m1", b"1.5"), (b"m2", b"-3"), (b"m3", b"100"), (b"m0", b"-inf"), (b"m9", b"inf")]
    f.key(12, "old:zset:zl", rdb_str(ziplist([x for p in sorted(z, key=lambda p: float(p[1])) for x in p])))
    expect[(0, b"old:zset:zl")] = (b"zset", sorted(z, key=lambda p: float(p[1])), -1)
    z3 = [(b"a", b"0.25"), (b"b", b"2"), (b"c", b"-1e+20")]
    body = rdb_len(len(z3)) + b"".join(rdb_str(m) + old_double(s) for m, s in z3)
    f.key(3, "old:zset:strscores", body)
    expect[(0, b"old:zset:strscores")] = (b"zset", sorted(z3, key=lambda p: float(p[1])), -1)
    body = rdb_len(2) + rdb_str("inf") + b"\xfe" + rdb_str("ninf") + b"\xff"
    f.key(3, "old:zset:infs", body)
    expect[(0, b"old:zset:infs")] = (b"zset", [(b"ninf", b"-inf"), (b"inf", b"inf")], -1)
    for name, vals in (("old:intset16", [5, -3, 300, 1]), ("old:intset32", [70000, -2, 1]),
                       ("old:intset64", [2 ** 40, -(2 ** 50), 7])):
        f.key(11, name, rdb_str(intset(vals)))
        expect[(0, name.encode())] = (b"set", sorted(str(v).encode() for v in vals), -1)
    f.key(1, "old:list:plain", rdb_len(3) + rdb_str("p") + rdb_str("q") + rdb_str("r"))
    expect[(0, b"old:list:plain")] = (b"list", [b"p", b"q", b"r"], -1)
    f.key(4, "old:hash:plain", rdb_len(2) + rdb_str("k1") + rdb_str("v1") + rdb_str("k2") + rdb_str("v2"))
    expect[(0, b"old:hash:plain")] = (b"hash", [(b"k1", b"v1"), (b"k2", b"v2")], -1)
    # Strings: integer encodings, an LZF one, expiry in seconds (opcode 253) and in ms.
    f.b += b"\x00" + rdb_str("old:int8") + b"\xc0\x85"  # -123
    expect[(0, b"old:int8")] = (b"string", b"-123", -1)
    f.b += b"\x00" + rdb_str("old:int16") + b"\xc1" + struct.pack("<h", -31000)
    expect[(0, b"old:int16")] = (b"string", b"-31000", -1)
    f.b += b"\x00" + rdb_str("old:int32") + b"\xc2" + struct.pack("<i", 2000000000)
    expect[(0, b"old:int32")] = (b"string", b"2000000000", -1)
    raw = b"abcabcabcabcabcabcabcabcabcabc"
    # LZF: a literal run of 3, then a back-reference of length 27 at distance 3.
    lzf = b"\x02abc" + bytes([(7 << 5) | 0, 27 - 9, 2])
    f.b += b"\x00" + rdb_str("old:lzf") + b"\xc3" + rdb_len(len(lzf)) + rdb_len(len(raw)) + lzf
    expect[(0, b"old:lzf")] = (b"string", raw, -1)
    secs = 2100000000  # the opcode holds a signed 32-bit count of seconds
    f.b += b"\xfd" + struct.pack("<i", secs) + b"\x00" + rdb_str("old:expire:sec") + rdb_str("v")
    expect[(0, b"old:expire:sec")] = (b"string", b"v", secs * 1000)
    f.string("old:expire:ms", "w", expire_ms=FAR_MS + 77)
    expect[(0, b"old:expire:ms")] = (b"string", b"w", FAR_MS + 77)
    f.select(2).resize(1, 0)
    f.string("old:db2", "in db 2")
    expect[(2, b"old:db2")] = (b"string", b"in db 2", -1)
    return f.finish(), expect


def read_back(c, db, key, typ):
    c.cmd("SELECT", db)
    if typ == b"string":
        v = c.cmd("GET", key)
    elif typ == b"list":
        v = c.cmd("LRANGE", key, 0, -1)
    elif typ == b"set":
        v = sorted(c.cmd("SMEMBERS", key))
    elif typ == b"hash":
        flat = c.cmd("HGETALL", key)
        v = sorted((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))
    else:
        flat = c.cmd("ZRANGE", key, 0, -1, "WITHSCORES")
        v = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
    out = (c.cmd("TYPE", key).encode(), v, c.cmd("PEXPIRETIME", key))
    c.cmd("SELECT", 0)
    return out


def normal_scores(v):
    return [(m, repr(float(s)).encode()) for m, s in v]


def test_old_encodings_load_on_both(servers, datadir, tmpdirs):
    data, expect = old_file()
    with open(os.path.join(datadir, "dump.rdb"), "wb") as f:
        f.write(data)
    rdir = tmpdirs()
    copy_rdb(datadir, rdir)
    with redis_on(rdir) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        theirs = {k: read_back(ref, k[0], k[1], expect[k][0]) for k in expect}
        their_view = cross_view(ref)
        their_enc = object_encodings(ref)
    c = servers(datadir).conn()
    mine = {k: read_back(c, k[0], k[1], expect[k][0]) for k in expect}

    def canon(d):
        return {k: (t, normal_scores(v) if t == b"zset" else v, e) for k, (t, v, e) in d.items()}

    assert canon(theirs) == canon(expect), "redis-server 7.0 reads the crafted file differently: the file is wrong"
    assert canon(mine) == canon(expect)
    assert_same_views(their_view, cross_view(c), "in hotkv")
    assert object_encodings(c) == their_enc
