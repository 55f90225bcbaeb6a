"""HyperLogLog commands: PFADD, PFCOUNT, PFMERGE.

Sketches are plain strings in Redis's exact representation, so besides the
replies the bytes GET returns must be Redis's. Expected counts and SHA-256
digests below were measured on redis-server 7.0.15 (same HyperLogLog code as
7.2); when a redis-server binary is installed, test_same_as_redis also runs
a randomised workload against a real one and compares every reply and
value."""
import fcntl
import hashlib
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis
from resp import Error, Simple

OK = Simple("OK")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
NOT_HLL = Error("WRONGTYPE Key is not a valid HyperLogLog string value.")
CORRUPT = Error("INVALIDOBJ Corrupted HLL object detected")
DENSE_SIZE = 16 + 16384 * 6 // 8
REDIS_PORT = 7398


def sha(b):
    return hashlib.sha256(b).hexdigest()


def add_range(r, key, lo, hi, batch=1000):
    for i in range(lo, hi, batch):
        r.pfadd(key, *["e%d" % j for j in range(i, min(hi, i + batch))])


def header(conn_or_r, key):
    v = conn_or_r.get(key)
    return v[:4], v[4], v[8:16]


# ---- values identical to Redis's -------------------------------------------------


def test_small_sparse_bytes(r):
    assert r.pfadd("k", "a", "b", "c") == 1
    # Sparse encoding, stale cache bit set in byte 15.
    assert r.get("k").hex() == "48594c4c01000000000000000000008060f38050b1844bfb80425a"
    assert r.pfcount("k") == 3
    # PFCOUNT stores the cardinality, little endian, cache now valid.
    assert r.get("k").hex() == "48594c4c01000000030000000000000060f38050b1844bfb80425a"
    assert r.pfadd("k", "a", "b") == 0
    assert r.get("k")[15] == 0  # an add that changes nothing keeps the cache
    assert r.pfadd("k", "d") == 1
    assert r.get("k")[15] & 0x80
    assert r.pfcount("k") == 4


@pytest.mark.parametrize("n,raw_len,before,count,after", [
    (100, 285, "53986fa020104b2d94c131f7d7b840674634568242921d84d01b767289a56a1d", 100,
     "aebee27e50c672722325ed27d2acb1011cc7138f9a0f43d52abc23308a822a44"),
    (1000, 1906, "519a7f0764d633e025ff9f8cdeb30cd2f452e2ad37f729f6b9ea7a4699791162", 1008,
     "ab6313e24c05ff993730105e09ef76d5c0c4fcde58406d6a29d1889220a056e4"),
    (5000, DENSE_SIZE, "0a4b61a05c269540574e1293e6e18e69a4e9cb96ade9ecb5b7ff490debf31722", 4968,
     "bd470063c39f632ff0572b22d3ae558cdc523a5ae6f47e7324ed636dcc84e2ec"),
    (100000, DENSE_SIZE, "db44442a96c3ca475b58a386c4e1263c33d76900a2a9f2a934e50769c36644f9", 100853,
     "548dba672576d8a299d51943c2728e21beda0aea57391bd87567dba08eed8e4e"),
])
def test_known_values(r, n, raw_len, before, count, after):
    add_range(r, "x", 0, n)
    v = r.get("x")
    assert len(v) == raw_len
    assert v[4] == (1 if raw_len < DENSE_SIZE else 0)
    assert sha(v) == before
    assert r.pfcount("x") == count
    assert sha(r.get("x")) == after
    assert abs(count - n) <= 0.02 * n


def test_long_elements(r):
    r.pfadd("L", *[("element-%d-" % i) * (i % 5 + 1) for i in range(500)])
    assert r.pfcount("L") == 497
    assert sha(r.get("L")) == "2dbb6658f46027b6b52cfea8ef769f15b519030162c0517c20ec8f6bcb6b7745"


def test_error_bound_100k(r):
    add_range(r, "big", 0, 100000, batch=5000)
    est = r.pfcount("big")
    assert abs(est - 100000) <= 2000
    # Adding the same elements again changes nothing.
    assert r.pfadd("big", *["e%d" % j for j in range(0, 1000)]) == 0
    assert r.pfcount("big") == est


def test_empty_and_new_keys(r):
    assert r.pfcount("nokey") == 0
    assert r.pfcount("nokey", "nokey2") == 0
    assert not r.exists("nokey")
    assert r.pfadd("e") == 1  # creating the key counts as a change
    assert r.pfadd("e") == 0
    empty = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7
    assert r.get("e") == empty + b"\x80" + b"\x7f\xff"  # one XZERO of 16384
    assert r.type("e") == b"string"
    assert r.object("encoding", "e") == b"raw"
    assert r.pfcount("e") == 0
    assert r.get("e") == empty + b"\x00" + b"\x7f\xff"


def test_sparse_to_dense(r):
    # Elements one by one: the value stays sparse while it fits in
    # hll-sparse-max-bytes (3000) and turns dense on the edit that would not.
    last = None
    for i in range(3000):
        r.pfadd("s", "e%d" % i)
        v = r.get("s")
        if v[4] == 0:
            assert len(v) == DENSE_SIZE
            assert last is not None and len(last) > 2990
            break
        assert len(v) <= 3000
        last = v
    else:
        pytest.fail("never turned dense")
    dense_at = i
    assert r.pfcount("s") == pytest.approx(dense_at + 1, rel=0.02)


def test_sparse_max_bytes_config(r):
    old = r.config_get("hll-sparse-max-bytes")["hll-sparse-max-bytes"]
    assert old == "3000"
    try:
        r.config_set("hll-sparse-max-bytes", 100)
        add_range(r, "c", 0, 20)
        assert r.get("c")[4] == 1 and len(r.get("c")) <= 100
        add_range(r, "c", 20, 100)
        assert r.get("c")[4] == 0 and len(r.get("c")) == DENSE_SIZE
        assert r.pfcount("c") == 100
        r.config_set("hll-sparse-max-bytes", 0)
        r.pfadd("z", "one")  # any growth passes 0 bytes: dense at once
        assert len(r.get("z")) == DENSE_SIZE
        assert r.pfcount("z") == 1
    finally:
        r.config_set("hll-sparse-max-bytes", old)


def test_keeps_ttl_and_accepts_copied_values(r):
    r.pfadd("src", "a", "b", "c")
    r.set("copy", r.get("src"))  # a short value: stored inline, still a sketch
    assert r.pfcount("copy") == 3
    assert r.object("encoding", "copy") == b"raw"  # PFCOUNT unshares, as Redis
    r.expire("copy", 1000)
    assert r.pfadd("copy", "x", "y") == 1
    assert 0 < r.ttl("copy") <= 1000
    assert r.pfcount("copy") == 5


# ---- PFCOUNT of several keys and PFMERGE ----------------------------------------------


def test_union_and_merge(r):
    add_range(r, "u1", 0, 3000)
    add_range(r, "u2", 2000, 5000)
    add_range(r, "u3", 0, 100)
    before = [r.get(k) for k in ("u1", "u2", "u3")]
    assert r.pfcount("u1", "u2", "u3") == 4968
    assert r.pfcount("u1", "u2", "u3", "missing") == 4968
    # A union count never writes the sources (not even their caches).
    assert [r.get(k) for k in ("u1", "u2", "u3")] == before
    assert r.pfmerge("m", "u1", "u2", "u3")
    assert r.pfcount("m") == 4968
    assert sha(r.get("m")) == "bd470063c39f632ff0572b22d3ae558cdc523a5ae6f47e7324ed636dcc84e2ec"


def test_merge_sparse_bytes(r):
    add_range(r, "s1", 0, 50)
    add_range(r, "s2", 25, 90)
    assert r.pfmerge("sm", "s1", "s2")
    v = r.get("sm")
    assert v[4] == 1
    assert sha(v) == sha(bytes.fromhex(
        "48594c4c01000000000000000000008036843c8040a9a40e88409084406c9c048840e28041358840d380411d88408980"
        "41168c419080098040e080409480415784412784405d8440e1844199844081804085840780404e80408f84098440798441"
        "258440d38042638040a280404b8c406f80420b8c41798041478041638040668440f98c018421881180418284409488407"
        "984228041b388405188420090118440c184419c8c3a8040a88440e180422a84410384168041178441658c414e802680058"
        "040598040ec882e88413c880380405b841b803f80409b80415188408f90407e80408480415f8033844079844193844058"
        "902e80406a840d8039801380409a882880408c"))
    assert r.pfcount("sm") == 90


def test_merge_destination_is_a_source(r):
    r.pfadd("d", "a", "b")
    r.pfadd("o", "c")
    assert r.pfmerge("d", "o")
    assert r.pfcount("d") == 3
    assert r.pfmerge("fresh")  # no sources: an empty sketch
    assert r.pfcount("fresh") == 0
    assert r.get("fresh")[4] == 1
    add_range(r, "dense", 0, 5000)
    r.pfadd("sp", "zz")
    assert r.pfmerge("sp", "dense")  # a dense source makes the target dense
    assert len(r.get("sp")) == DENSE_SIZE
    assert r.pfcount("sp") == r.pfcount("dense", "sp")


# ---- errors ---------------------------------------------------------------------------


def test_arity(conn):
    for name in ("pfadd", "pfcount", "pfmerge"):
        assert conn.cmd(name) == Error("ERR wrong number of arguments for '%s' command" % name)


def test_wrongtype(conn):
    conn.cmd("LPUSH", "list", "x")
    conn.cmd("SET", "str", "hello")
    conn.cmd("SET", "int", "12345")
    conn.cmd("SET", "dense_bad_len", b"HYLL\x00" + b"\x00" * 111)
    conn.cmd("SET", "bad_enc", b"HYLL\x02" + b"\x00" * 11)
    conn.cmd("SET", "bad_magic", b"HYLX\x01" + b"\x00" * 11 + b"\x7f\xff")
    conn.cmd("PFADD", "ok", "a")
    for key in ("str", "int", "dense_bad_len", "bad_enc", "bad_magic"):
        assert conn.cmd("PFADD", key, "a") == NOT_HLL
        assert conn.cmd("PFCOUNT", key) == NOT_HLL
        assert conn.cmd("PFCOUNT", "ok", key) == NOT_HLL
        assert conn.cmd("PFMERGE", key, "ok") == NOT_HLL
        assert conn.cmd("PFMERGE", "dst", key) == NOT_HLL
    assert conn.cmd("PFADD", "list", "a") == WRONGTYPE
    assert conn.cmd("PFCOUNT", "list") == WRONGTYPE
    assert conn.cmd("PFCOUNT", "list", "str") == WRONGTYPE
    assert conn.cmd("PFCOUNT", "str", "list") == NOT_HLL
    assert conn.cmd("PFMERGE", "dst", "list") == WRONGTYPE
    assert conn.cmd("EXISTS", "dst") == 0
    assert conn.cmd("GET", "str") == b"hello"


def test_corrupted(conn):
    stale = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"
    conn.cmd("SET", "short", stale + b"\x7f\xfe")  # runs cover 16383 registers
    conn.cmd("SET", "long", stale + b"\x7f\xff\x00")  # 16385 registers
    conn.cmd("PFADD", "ok", "a")
    for key in ("short", "long"):
        assert conn.cmd("PFCOUNT", key) == CORRUPT
        assert conn.cmd("PFCOUNT", "ok", key) == CORRUPT
        assert conn.cmd("PFMERGE", "dst", key) == CORRUPT
    assert conn.cmd("EXISTS", "dst") == 0
    # A corrupt value with a valid cached count answers from the cache, as
    # Redis does.
    conn.cmd("SET", "cached", b"HYLL\x01\x00\x00\x00\x07" + b"\x00" * 7 + b"\x7f\xfe")
    assert conn.cmd("PFCOUNT", "cached") == 7
    # A sparse stream that ends before the register an element maps to.
    conn.cmd("SET", "trunc", stale + b"\x00")
    assert conn.cmd("PFADD", "trunc", "a") == CORRUPT


def test_resp3(conn3):
    assert conn3.cmd("PFADD", "h", "a", "b") == 1
    assert conn3.cmd("PFADD", "h", "a") == 0
    assert conn3.cmd("PFCOUNT", "h") == 2
    assert conn3.cmd("PFCOUNT", "h", "nokey") == 2
    assert conn3.cmd("PFMERGE", "m", "h") == OK
    assert conn3.cmd("PFCOUNT", "m") == 2
    conn3.cmd("SET", "s", "plain")
    assert conn3.cmd("PFCOUNT", "s") == NOT_HLL
    raw = conn3.cmd_raw("PFCOUNT", "h")
    assert raw == b":2\r\n"


# ---- the same answers as a real Redis ----------------------------------------------------


@pytest.fixture
def real_redis():
    binary = shutil.which("redis-server")
    if not binary:
        pytest.skip("redis-server not installed")
    # Test runs in parallel (several checkouts, several sessions) would share
    # the fixed port: take turns through a lock file held for the test.
    lock = open(os.path.join(tempfile.gettempdir(), "hotkv-hll-redis-%d.lock" % REDIS_PORT), "w")
    deadline = time.time() + 60
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.time() > deadline:
                lock.close()
                pytest.skip("port %d in use by another test run" % REDIS_PORT)
            time.sleep(0.1)
    try:
        yield from _start_real_redis(binary)
    finally:
        lock.close()


def _start_real_redis(binary):
    if _port_open():
        pytest.skip("port %d is busy" % REDIS_PORT)
    subprocess.run([binary, "--port", str(REDIS_PORT), "--save", "", "--daemonize", "yes",
                    "--bind", "127.0.0.1"], check=True, stdout=subprocess.DEVNULL)
    c = redis.Redis(port=REDIS_PORT)
    pid = None
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            pid = c.info("server")["process_id"]
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    try:
        assert pid, "redis-server did not start"
        c.flushall()
        yield c
    finally:
        try:
            c.execute_command("SHUTDOWN", "NOSAVE")
        except redis.RedisError:
            pass  # the connection closes as the server exits
        c.close()
        # Release the port before the next run takes the lock.
        deadline = time.time() + 5
        while _port_open() and time.time() < deadline:
            time.sleep(0.05)
        if pid and _port_open():
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def _port_open():
    s = socket.socket()
    try:
        return s.connect_ex(("127.0.0.1", REDIS_PORT)) == 0
    finally:
        s.close()


def test_same_as_redis(r, real_redis):
    rnd = random.Random(1234)

    def both(*args):
        out = []
        for c in (r, real_redis):
            try:
                out.append(c.execute_command(*args))
            except redis.ResponseError as e:
                out.append(("error", str(e)))
        assert out[0] == out[1], args
        return out[0]

    keys = ["k%d" % i for i in range(8)]
    for step in range(600):
        op = rnd.random()
        key = rnd.choice(keys)
        if op < 0.8:
            n = rnd.choice((1, 1, 2, 5, 50, 400))
            els = [bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 24))) for _ in range(n)]
            both("PFADD", key, *els)
        elif op < 0.9:
            both("PFCOUNT", *rnd.sample(keys, rnd.randint(1, 3)))
        elif op < 0.97:
            both("PFMERGE", key, *rnd.sample(keys, rnd.randint(0, 3)))
        else:
            both("PFCOUNT", key)
        if step % 25 == 0:
            for k in keys:
                assert r.get(k) == real_redis.get(k), (step, k)
    for k in keys:
        assert r.get(k) == real_redis.get(k)
        both("PFCOUNT", k)
        assert r.get(k) == real_redis.get(k)
    # Corrupt and foreign values answer alike.
    stale = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"
    for i, v in enumerate([stale + b"\x7f", stale + b"\x7f\xfe", stale + b"\x7f\xfe\x80",
                           stale + b"\x40\x00\x7f\xfd", stale + b"\x00", b"HYLL", b"nothing here at all"]):
        for c in (r, real_redis):
            c.set("bad%d" % i, v)
        both("PFADD", "bad%d" % i, "a", "b", "c")
        both("PFCOUNT", "bad%d" % i)
        both("PFCOUNT", "bad%d" % i, keys[0])
        both("PFMERGE", "dst%d" % i, "bad%d" % i)
        assert r.get("bad%d" % i) == real_redis.get("bad%d" % i)
