"""RDB persistence: SAVE, BGSAVE (SCHEDULE, one save at a time), LASTSAVE
and INFO persistence; restarts that keep every type and encoding (strings,
lists, sets, sorted sets, hashes with and without field TTLs, streams with
consumer groups, vector sets, key TTLs, several databases, function
libraries); point-in-time BGSAVE while other clients overwrite, delete and
add keys, FLUSHALL and SWAPDB; DEBUG RELOAD; SHUTDOWN and SIGTERM; save
points; CONFIG save / dbfilename / dir; a save that cannot write (-MISCONF
and the recovery); -LOADING while a big file loads; corrupt files at
start-up.

Where Debian's redis-server 7.0 behaves like Redis 8.4 the same commands
run on both servers side by side and the replies must be the same bytes;
where the versions differ, Redis 8.4 is the reference (written down at
the test). Every test starts its own servers (skipped with --host) on
data directories of its own, removed at the end.

gen_dataset / load_dataset / dataset_view, the seeded dataset of every
type and encoding and the view two servers (or one server before and
after a restart) must agree on, are shared with test_rdb_interop.py.
"""
import contextlib
import os
import random
import shutil
import signal
import socket
import string
import struct
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import Server, free_port, sanitizer_report, start_server, stop_checked
from resp import Error, RespConn, encode

DEBUG = ("--enable-debug-command", "yes")
# 2100-01-01 in ms: absolute expiry times no test outlives, the same on
# every server the dataset is built on.
FAR_MS = 4102444800000
LOADING = Error("LOADING Redis is loading the dataset in memory")
MISCONF = Error("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
                "Commands that may modify the data set are disabled, because this instance is configured to "
                "report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). "
                "Please check the Redis logs for details about the RDB error.")
IN_PROGRESS = Error("ERR Background save already in progress")


# ---- servers ---------------------------------------------------------------


@pytest.fixture
def tmpdirs():
    """mk(): a new temporary directory, removed at the end."""
    made = []

    def mk():
        d = tempfile.mkdtemp(prefix="hotkv-rdb-")
        made.append(d)
        return d

    yield mk
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def servers(request, tmpdirs):
    """start(datadir, *extra, threads=2, wait=True): a hotkv-server with
    DEBUG enabled whose --dir is `datadir` (which outlives it, so another
    server can start on the same files), once it has loaded its file
    (`wait`). Every server is stopped and checked for sanitizer reports at
    the end, before their directories go (with save points a server
    that cannot save does not exit)."""
    if request.config.getoption("--host"):
        pytest.skip("needs its own servers")
    binary = request.config.getoption("--server-bin")
    started = []

    def start(datadir, *extra, threads=2, wait=True):
        srv = start_server(binary, "--dir", datadir, *DEBUG, *extra, threads=threads, wait=wait)
        started.append(srv)
        if wait:
            # Connections are accepted while the file loads.
            c = srv.conn(timeout=60)
            wait_until(lambda: info(c)["loading"] == "0", 60, "the server to load its file")
            c.close()
        return srv

    yield start
    for srv in started:
        srv.stop()
    for srv in started:
        report = sanitizer_report(srv)
        assert not report, report


@pytest.fixture
def datadir(tmpdirs):
    return tmpdirs()


def redis_bin():
    exe = shutil.which("redis-server")
    if not exe:
        pytest.skip("redis-server is not installed")
    return exe


def wait_port(port, proc, timeout=30):
    deadline = time.time() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("server exited with %s" % proc.returncode)
            if time.time() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.02)


@contextlib.contextmanager
def redis_on(datadir, *extra, wait=True):
    """Debian's redis-server on `datadir` (persistence off unless `extra`
    says otherwise, DEBUG and protected configs allowed); yields
    (port, proc, logfile). The directory is the caller's."""
    exe = redis_bin()
    port = free_port()
    log = os.path.join(datadir, "redis-%d.log" % port)
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", datadir, "--save", "",
                             "--appendonly", "no", "--logfile", log, "--enable-debug-command", "yes",
                             "--enable-protected-configs", "yes", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if wait:
            wait_port(port, proc)
            c = RespConn("127.0.0.1", port, timeout=60)
            wait_until(lambda: info(c)["loading"] == "0", 60, "redis-server to load its file")
            c.close()
        yield port, proc, log
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def protected_ok(request):
    """The option that lets CONFIG SET change dir and dbfilename, when the
    server under test knows it (Redis 7.0+ refuse by default)."""
    if request.config.getoption("--host"):
        return ()
    srv = start_server(request.config.getoption("--server-bin"))
    try:
        c = srv.conn()
        known = c.cmd("CONFIG", "GET", "enable-protected-configs")
        c.close()
    finally:
        srv.stop()
    return ("--enable-protected-configs", "yes") if known else ()


# ---- small helpers -----------------------------------------------------------


def info(c, section="persistence"):
    out = {}
    for line in c.cmd("INFO", section).decode().split("\r\n"):
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def wait_until(cond, timeout=10.0, what="condition"):
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def wait_bgsave(c, timeout=60.0):
    """Wait until no background save runs; returns INFO persistence."""
    last = {}

    def done():
        last.update(info(c))
        return last["rdb_bgsave_in_progress"] == "0"

    wait_until(done, timeout, "the background save to finish")
    return last


def pipe(c, cmds, batch=1000):
    """Send the commands in batches and return every reply."""
    out = []
    for i in range(0, len(cmds), batch):
        part = cmds[i:i + batch]
        c.send(b"".join(encode(*cmd) for cmd in part))
        out.extend(c.read() for _ in part)
    return out


def pipe_ok(c, cmds, batch=1000):
    replies = pipe(c, cmds, batch)
    errors = [(cmd[:3], r) for cmd, r in zip(cmds, replies) if isinstance(r, Error)]
    assert not errors, errors[:5]
    return replies


def closed_by_server(c, *cmd):
    """Send a command that makes the server exit: the connection must close
    without a reply."""
    c.send(encode(*cmd))
    try:
        reply = c.read()
    except (ConnectionError, OSError):
        return True
    raise AssertionError("%r replied %r instead of closing the connection" % (cmd, reply))


def wait_exit(srv, timeout=30):
    return srv.proc.wait(timeout)


def load_outcome(srv, timeout=60):
    """The exit status of a server started on a file, or None when it
    loaded the file and serves (INFO says loading:0)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        rc = srv.proc.poll()
        if rc is not None:
            return rc
        try:
            conn = RespConn(srv.host, srv.port, timeout=5)
            try:
                if info(conn)["loading"] == "0":
                    return None
            finally:
                conn.close()
        except (OSError, ConnectionError, KeyError, ValueError):
            pass
        time.sleep(0.02)
    raise AssertionError("the server neither exited nor finished loading")


def populate_members(c, sets=20, members=50000, strings=0):
    """A dataset that is quick to build and slow to save and load: `sets`
    hash-table sets of `members` members, and `strings` string keys, built
    by a script on the server itself."""
    c.cmd("EVAL", "for k = 1, tonumber(ARGV[1]) do for i = 0, tonumber(ARGV[2]) - 1, 1000 do local t = {} "
                  "for j = 1, 1000 do t[j] = 'member:' .. (i + j) end redis.call('SADD', 'bigset:' .. k, unpack(t)) "
                  "end end for i = 1, tonumber(ARGV[3]) do redis.call('SET', 'str:' .. i, 'value:' .. i) end "
                  "return 1", 0, sets, members, strings)


def copy_rdb(src_dir, dst_dir, name="dump.rdb"):
    shutil.copyfile(os.path.join(src_dir, name), os.path.join(dst_dir, "dump.rdb"))


# ---- RDB files byte by byte ---------------------------------------------------

def _rev64(x):
    return int(format(x, "064b")[::-1], 2)


_CRC_POLY = _rev64(0xad93d23594c935a9)  # Jones polynomial, reflected (Redis's crc64)
_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _CRC_POLY if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc64(data, crc=0):
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc


def rdb_len(n):
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return bytes([0x40 | (n >> 8), n & 0xff])
    if n < 1 << 32:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + n.to_bytes(8, "big")


def rdb_str(s):
    if isinstance(s, str):
        s = s.encode()
    return rdb_len(len(s)) + s


class RdbFile:
    """An RDB file written record by record, for files no server writes
    (corrupt ones, old encodings)."""

    def __init__(self, version=10):
        self.b = bytearray(b"REDIS%04d" % version)

    def aux(self, k, v):
        self.b += b"\xfa" + rdb_str(k) + rdb_str(v)
        return self

    def select(self, db):
        self.b += b"\xfe" + rdb_len(db)
        return self

    def resize(self, keys, expires):
        self.b += b"\xfb" + rdb_len(keys) + rdb_len(expires)
        return self

    def key(self, type_byte, name, body, expire_ms=None):
        if expire_ms is not None:
            self.b += b"\xfc" + expire_ms.to_bytes(8, "little")
        self.b += bytes([type_byte]) + rdb_str(name) + body
        return self

    def string(self, name, value, expire_ms=None):
        return self.key(0, name, rdb_str(value), expire_ms)

    def finish(self, checksum=True):
        data = bytes(self.b) + b"\xff"
        return data + (crc64(data) if checksum else 0).to_bytes(8, "little")


def fix_checksum(data):
    """The same file with its trailing checksum recomputed."""
    return data[:-8] + crc64(data[:-8]).to_bytes(8, "little")


# ---- the dataset -------------------------------------------------------------

LIB_TEXT = ("#!lua name=%s\n"
            "redis.register_function('%s_echo', function(keys, args) return args[1] end)\n"
            "redis.register_function{function_name='%s_get', callback=function(keys, args) "
            "return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads a key'}\n")


def gen_dataset(seed, redis7=False, big=True):
    """The commands that build a dataset of every type and encoding, seeded:
    [(db, argv)], db None for commands that are not about one database.

    Strings (shared and large integers, embstr, raw binary, a large
    incompressible one, an LZF-compressible one, HyperLogLogs, a bitmap),
    lists (listpack, quicklists of small and of wide elements, one built
    with list-compress-depth 1), sets (intset of 16/32/64-bit members,
    listpack, hash table by size and by member length), sorted sets
    (listpack, skiplist by size and by member length, infinities, geo),
    hashes (listpack, hash table by size and by value length), streams
    (deleted entries, consumer groups with PELs, an empty consumer, an
    emptied stream, a stream made by MKSTREAM), key TTLs, keys in databases
    1, 3 and 15 (one name in several of them) and two function libraries.
    Without `redis7`, also what Redis 7.0 lacks: hashes with field TTLs
    (listpack and hash table) and vector sets (default int8, NOQUANT, BIN,
    with attributes, REDUCE). `big` adds the large values."""
    rng = random.Random(seed)
    out = []

    def add(db, *argv):
        out.append((db, [a if isinstance(a, bytes) else str(a) for a in argv]))

    def word(lo=3, hi=12):
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(lo, hi)))

    def num():
        return rng.choice([rng.randint(0, 10000), rng.randint(-2 ** 15, 2 ** 15), rng.randint(-2 ** 31, 2 ** 31),
                           rng.randint(-2 ** 63, 2 ** 63 - 1)])

    def score():
        if redis7:
            # Redis 7.0 prints scores with %.17g, 7.2+ with the shortest
            # form, in replies and in DEBUG DIGEST: quarters print alike.
            return rng.choice([str(rng.randint(-1000, 1000)), str(rng.randint(-4 * 10 ** 6, 4 * 10 ** 6) / 4),
                               "0.25", "-0.5"])
        return rng.choice([str(rng.randint(-1000, 1000)), repr(rng.uniform(-1e6, 1e6)), "0.1", "-0.5",
                           repr(rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300))])

    # strings
    for i in range(24):
        add(0, "SET", "str:int:%d" % i, num())
    for i in range(16):
        add(0, "SET", "str:emb:%d" % i, word(1, 44))
    for i in range(8):
        add(0, "SET", "str:raw:%d" % i, rng.randbytes(rng.randint(45, 600)))
    add(0, "SET", "str:empty", "")
    add(0, "SET", "str:float", "3.14159265358979")
    add(0, "SET", "str:notint", "007")
    add(0, "SET", "str:minus0", "-0")
    add(0, "SET", "str:lzf", "abcdefgh" * 500 + word())
    add(0, "SETBIT", "str:bitmap", 70001, 1)
    add(0, "PFADD", "hll:sparse", *[word() for _ in range(40)])
    if big:
        add(0, "SET", "str:big", rng.randbytes(300000))
        add(0, "SET", "str:biglzf", ("0123456789" * 20000) + word())
        add(0, "PFADD", "hll:dense", *["m%d" % j for j in range(3000)])
    # lists
    for i in range(10):
        add(0, "RPUSH", "list:lp:%d" % i, *[rng.choice([word(), str(num())]) for _ in range(rng.randint(1, 20))])
    add(0, "RPUSH", "list:ql", *[word(1, 30) for _ in range(3000)])
    add(0, "RPUSH", "list:ints", *[num() for _ in range(800)])
    add(None, "CONFIG", "SET", "list-compress-depth", "1")
    add(0, "RPUSH", "list:compressed", *[("item-%d-" % (j % 7)) * 6 for j in range(2500)])
    add(None, "CONFIG", "SET", "list-compress-depth", "0")
    if big:
        add(0, "RPUSH", "list:wide", *[rng.randbytes(rng.randint(2000, 20000)) for _ in range(16)])
    # sets
    for i in range(8):
        add(0, "SADD", "set:int:%d" % i, *rng.sample(range(-30000, 30000), rng.randint(1, 60)))
    add(0, "SADD", "set:int32", *[rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(100)])
    add(0, "SADD", "set:int64", *[rng.randint(-2 ** 63, 2 ** 63 - 1) for _ in range(100)])
    add(0, "SADD", "set:intmany", *range(0, 1500))
    for i in range(8):
        add(0, "SADD", "set:lp:%d" % i, *sorted({word() for _ in range(rng.randint(1, 60))}))
    add(0, "SADD", "set:ht", *sorted({word(5, 20) for _ in range(700)}))
    add(0, "SADD", "set:long", "a", "b", "x" * 100)
    # sorted sets
    for i in range(8):
        args = []
        for _ in range(rng.randint(1, 30)):
            args += [score(), word()]
        add(0, "ZADD", "zset:lp:%d" % i, *args)
    add(0, "ZADD", "zset:inf", "inf", "top", "-inf", "bottom", "0", "zero", "0.25" if redis7 else "1e-300", "tiny")
    args = []
    for j in range(400):
        args += [score(), "member:%d:%s" % (j, word())]
    add(0, "ZADD", "zset:sl", *args)
    add(0, "ZADD", "zset:long", "1", "a", "2", "m" * 100)
    add(0, "GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania",
        "-122.27652", "37.805186", "Oakland")
    # hashes
    for i in range(10):
        args = []
        for j in range(rng.randint(1, 30)):
            args += ["f%d" % j, rng.choice([word(), str(num())])]
        add(0, "HSET", "hash:lp:%d" % i, *args)
    args = []
    for j in range(800):
        args += ["field:%d" % j, word(0, 30)]
    add(0, "HSET", "hash:ht", *args)
    add(0, "HSET", "hash:long", "f", "v", "big", "v" * 100)
    add(0, "HSET", "hash:longfield", "f" * 80, "v")
    # streams
    base = 1700000000000
    for j in range(260):
        fields = ["name", word(), "n", str(j)] if j % 25 else ["other", word(), "x", str(num()), "y", word()]
        add(0, "XADD", "stream:a", "%d-%d" % (base + j // 3, j % 3), *fields)
    for j in rng.sample(range(260), 12):
        add(0, "XDEL", "stream:a", "%d-%d" % (base + j // 3, j % 3))
    add(0, "XGROUP", "CREATE", "stream:a", "g1", "0")
    add(0, "XGROUP", "CREATE", "stream:a", "g2", "$")
    add(0, "XGROUP", "CREATE", "stream:a", "g3", "%d-0" % (base + 40), "ENTRIESREAD", "100")
    add(0, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "30", "STREAMS", "stream:a", ">")
    add(0, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "20", "STREAMS", "stream:a", ">")
    add(0, "XREADGROUP", "GROUP", "g3", "carol", "COUNT", "5", "STREAMS", "stream:a", ">")
    add(0, "XACK", "stream:a", "g1", *["%d-%d" % (base + j // 3, j % 3) for j in range(0, 30, 4)])
    add(0, "XCLAIM", "stream:a", "g1", "dave", "0", "%d-%d" % (base + 11, 1), "RETRYCOUNT", "7")
    add(0, "XGROUP", "CREATECONSUMER", "stream:a", "g1", "erin")
    for j in range(5):
        add(0, "XADD", "stream:small", "%d-1" % (base + j), "k", str(j))
    add(0, "XADD", "stream:emptied", "5-1", "a", "b")
    add(0, "XDEL", "stream:emptied", "5-1")
    add(0, "XGROUP", "CREATE", "stream:mk", "grp", "$", "MKSTREAM")
    # key TTLs (absolute, far away: the same on every server)
    for i in range(16):
        add(0, "SET", "ttl:str:%d" % i, word(), "PXAT", FAR_MS + rng.randint(0, 10 ** 9))
    add(0, "RPUSH", "ttl:list", "a", "b", "c")
    add(0, "PEXPIREAT", "ttl:list", FAR_MS + 123)
    add(0, "HSET", "ttl:hash", "a", "1")
    add(0, "PEXPIREAT", "ttl:hash", FAR_MS + 456)
    add(0, "SADD", "ttl:set", "1", "2")
    add(0, "PEXPIREAT", "ttl:set", FAR_MS + 789)
    # other databases
    for db in (1, 3, 15):
        for i in range(12):
            add(db, "SET", "db%d:str:%d" % (db, i), word())
        add(db, "SET", "shared:name", "in db %d" % db)
        add(db, "HSET", "db%d:hash" % db, "a", "1", "b", word())
        add(db, "ZADD", "db%d:zset" % db, "1", "x", "2", "y")
        add(db, "SET", "db%d:ttl" % db, "v", "PXAT", FAR_MS + db)
    add(0, "SET", "shared:name", "in db 0")
    # functions
    for lib in ("libone", "libtwo"):
        add(None, "FUNCTION", "LOAD", LIB_TEXT % (lib, lib, lib))
    if redis7:
        return out
    # hash field TTLs (Redis 7.4)
    add(0, "HSET", "hfe:lp", *[x for j in range(8) for x in ("f%d" % j, "v%d" % j)])
    add(0, "HPEXPIREAT", "hfe:lp", FAR_MS + 5, "FIELDS", "3", "f1", "f2", "f5")
    args = []
    for j in range(600):
        args += ["field:%d" % j, word(0, 20)]
    add(0, "HSET", "hfe:ht", *args)
    add(0, "HPEXPIREAT", "hfe:ht", FAR_MS + 7, "FIELDS", "40", *["field:%d" % j for j in range(0, 400, 10)])
    add(0, "HSET", "hfe:keyttl", "a", "1", "b", "2")
    add(0, "HPEXPIREAT", "hfe:keyttl", FAR_MS + 9, "FIELDS", "1", "a")
    add(0, "PEXPIREAT", "hfe:keyttl", FAR_MS + 10)
    add(3, "HSET", "hfe:db3", "x", "1", "y", "2")
    add(3, "HPEXPIREAT", "hfe:db3", FAR_MS + 11, "FIELDS", "1", "y")
    # vector sets (Redis 8)
    for key, opts, dim in (("vset:q8", [], 4), ("vset:noquant", ["NOQUANT"], 4), ("vset:bin", ["BIN"], 8),
                           ("vset:m", ["M", "8"], 3)):
        for j in range(30):
            vec = [repr(round(rng.uniform(-1, 1), 4)) for _ in range(dim)]
            add(0, "VADD", key, "VALUES", dim, *vec, "e%d" % j, *opts)
    for j in range(20):
        vec = [repr(round(rng.uniform(-1, 1), 4)) for _ in range(3)]
        attr = '{"year": %d, "genre": "%s"}' % (1950 + j, rng.choice(["a", "b", "c"]))
        add(0, "VADD", "vset:attr", "VALUES", 3, *vec, "item:%d" % j, *(["SETATTR", attr] if j % 4 else []))
    for j in range(20):
        vec = [repr(round(rng.uniform(-1, 1), 4)) for _ in range(8)]
        add(0, "VADD", "vset:reduce", "REDUCE", 4, "VALUES", 8, *vec, "r%d" % j)
    add(1, "VADD", "vset:db1", "VALUES", 2, "0.5", "0.25", "only")
    return out


def load_dataset(c, cmds):
    """Run gen_dataset's commands on connection c (left on database 0)."""
    cur = 0
    batch = []

    def flush():
        if batch:
            pipe_ok(c, batch, batch=200)
            batch.clear()

    for db, argv in cmds:
        if db is None:
            flush()
            r = c.cmd(*argv)
            assert not isinstance(r, Error), (argv[:3], r)
            continue
        if db != cur:
            flush()
            assert c.cmd("SELECT", db) == "OK"
            cur = db
        batch.append(argv)
    flush()
    c.cmd("SELECT", 0)


def pairs(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


CONSUMER_FIELDS = (b"name", b"seen-time", b"active-time", b"pel-count", b"pending")
GROUP_FIELDS = (b"name", b"last-delivered-id", b"entries-read", b"lag", b"pel-count", b"pending")
STREAM_FIELDS = (b"length", b"last-generated-id", b"max-deleted-entry-id", b"entries-added",
                 b"recorded-first-entry-id", b"entries")


def stream_view(full, active_time=True):
    """XINFO STREAM FULL reduced to what an RDB file carries (no radix-tree
    sizes, which depend on how the nodes were built); consumers' active-time
    only when `active_time` (Redis 7.0 has none)."""
    d = dict(pairs(full))
    out = {k: d.get(k) for k in STREAM_FIELDS}
    groups = []
    for g in d.get(b"groups") or []:
        gd = dict(pairs(g))
        gv = {k: gd.get(k) for k in GROUP_FIELDS}
        cons = []
        for cns in gd.get(b"consumers") or []:
            cd = dict(pairs(cns))
            cons.append({k: cd.get(k) for k in CONSUMER_FIELDS if k != b"active-time" or active_time})
        gv[b"consumers"] = cons
        groups.append(gv)
    out[b"groups"] = groups
    return out


def value_view(c, key, typ, hfe=True, active_time=True):
    """Everything about one value that a save and a load must keep."""
    if typ == b"string":
        return c.cmd("GET", key)
    if typ == b"list":
        return c.cmd("LRANGE", key, 0, -1)
    if typ == b"set":
        return sorted(c.cmd("SMEMBERS", key))
    if typ == b"zset":
        return c.cmd("ZRANGE", key, 0, -1, "WITHSCORES")
    if typ == b"hash":
        fields = sorted(pairs(c.cmd("HGETALL", key)))
        if not hfe:
            return fields
        ttls = c.cmd("HPEXPIRETIME", key, "FIELDS", len(fields), *[f for f, _ in fields]) if fields else []
        return [(f, v, t) for (f, v), t in zip(fields, ttls)]
    if typ == b"stream":
        return stream_view(c.cmd("XINFO", "STREAM", key, "FULL"), active_time)
    if typ == b"vectorset":
        card = c.cmd("VCARD", key)
        names = sorted(c.cmd("VRANDMEMBER", key, card))
        elems = {n: (c.cmd("VEMB", key, n, "RAW"), c.cmd("VGETATTR", key, n)) for n in names}
        first = c.cmd("VEMB", key, names[0])
        near = c.cmd("VSIM", key, "VALUES", len(first), *first, "COUNT", 5, "EF", 500, "WITHSCORES")
        # vset-uid numbers the sets of one process; memory use is not data.
        vinfo = [kv for kv in pairs(c.cmd("VINFO", key))
                 if kv[0] not in ("vset-uid", "memory-usage", "memory-per-element")]
        return {"card": card, "dim": c.cmd("VDIM", key), "info": vinfo, "elems": elems, "near": near}
    raise AssertionError("no view for type %r" % typ)


def function_libs(c):
    """FUNCTION LIST WITHCODE, libraries and their functions sorted by name
    (a server lists them in the order of its own tables)."""
    libs = []
    for lib in c.cmd("FUNCTION", "LIST", "WITHCODE"):
        d = dict(pairs(lib))
        d[b"functions"] = sorted(d[b"functions"], key=lambda f: dict(pairs(f))[b"name"])
        libs.append(sorted(d.items()))
    return sorted(libs)


def scan_keys(c):
    keys, cur = [], b"0"
    while True:
        cur, part = c.cmd("SCAN", cur, "COUNT", 1000)
        keys += part
        if cur == b"0":
            return sorted(set(keys))


def dataset_view(c, encodings=True, digests=True, hfe=True, active_time=True, skip_dbs=()):
    """What a server holds, as one comparable value: per non-empty database
    (but `skip_dbs`) and key: type, PEXPIRETIME, the value (value_view),
    OBJECT ENCODING (`encodings`) and DEBUG DIGEST-VALUE (`digests`); the
    function libraries with their code; DEBUG DIGEST of everything
    (`digests`)."""
    dbs = {}
    ndb = int(c.cmd("CONFIG", "GET", "databases")[1])
    for db in range(ndb):
        if db in skip_dbs:
            continue
        assert c.cmd("SELECT", db) == "OK"
        keys = scan_keys(c)
        if not keys:
            continue
        view = {}
        for k in keys:
            typ = c.cmd("TYPE", k)
            typ = typ.encode() if isinstance(typ, str) else typ
            kv = {"type": typ, "expire": c.cmd("PEXPIRETIME", k),
                  "value": value_view(c, k, typ, hfe=hfe, active_time=active_time)}
            if encodings:
                kv["encoding"] = c.cmd("OBJECT", "ENCODING", k)
            if digests:
                kv["digest"] = c.cmd("DEBUG", "DIGEST-VALUE", k)
            view[k] = kv
        dbs[db] = view
    c.cmd("SELECT", 0)
    out = {"dbs": dbs, "functions": function_libs(c)}
    if digests:
        out["digest"] = c.cmd("DEBUG", "DIGEST")
    return out


def diff_views(a, b, what="after"):
    """Readable differences between two dataset_view results (empty when
    equal)."""
    lines = []
    for db in sorted(set(a["dbs"]) | set(b["dbs"])):
        ka, kb = a["dbs"].get(db, {}), b["dbs"].get(db, {})
        for k in sorted(set(ka) | set(kb)):
            if k not in ka:
                lines.append("db%d %r: only %s" % (db, k, what))
            elif k not in kb:
                lines.append("db%d %r: missing %s" % (db, k, what))
            else:
                for field in ka[k]:
                    if ka[k][field] != kb[k].get(field):
                        lines.append("db%d %r %s: %.300r != %.300r" % (db, k, field, ka[k][field],
                                                                        kb[k].get(field)))
    for field in ("functions", "digest"):
        if a.get(field) != b.get(field):
            lines.append("%s: %.300r != %.300r" % (field, a.get(field), b.get(field)))
    return lines


def assert_same_views(a, b, what="after"):
    lines = diff_views(a, b, what)
    assert not lines, "\n".join(lines)


# ---- SAVE, BGSAVE, LASTSAVE, INFO persistence ----------------------------------

RDB_INFO_FIELDS = ("loading", "async_loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
                   "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec", "rdb_current_bgsave_time_sec",
                   "rdb_saves", "rdb_last_load_keys_expired", "rdb_last_load_keys_loaded")


def test_info_persistence_of_a_fresh_server(servers, datadir, tmpdirs):
    """Every INFO persistence field Redis 7.0 has (the aof_* ones belong to
    the AOF's tests), and the same starting values (Redis 8.4 starts
    rdb_last_bgsave_time_sec at -1 as well)."""
    srv = servers(datadir)
    c = srv.conn()
    mine = info(c)
    with redis_on(tmpdirs()) as (port, _, _):
        ref = info(RespConn("127.0.0.1", port))
    assert sorted(k for k in set(ref) - set(mine) if not k.startswith("aof_")) == []
    assert {k: mine[k] for k in RDB_INFO_FIELDS} == {k: ref[k] for k in RDB_INFO_FIELDS}


def changes(c):
    return int(info(c)["rdb_changes_since_last_save"])


DIRTY_STEPS = [
    ["SET", "a", "1"], ["MSET", "b", "1", "c", "2", "d", "3"], ["RPUSH", "l", "x", "y", "z"],
    ["DEL", "b", "c", "nosuch"], ["INCR", "a"], ["SADD", "s", "m1", "m2"], ["SADD", "s", "m1"],
    ["HSET", "h", "f1", "1", "f2", "2"], ["GET", "a"], ["EXPIRE", "a", "1000"], ["PERSIST", "a"],
    ["ZADD", "z", "1", "a", "2", "b"], ["ZINCRBY", "z", "1", "a"], ["LPOP", "l"], ["LTRIM", "l", "0", "0"],
    ["APPEND", "a2", "xyz"], ["SETRANGE", "a2", "1", "QQ"], ["INCRBYFLOAT", "f", "1.5"], ["HINCRBY", "h", "f1", "3"],
    ["SREM", "s", "m1", "zz"], ["SINTERSTORE", "s2", "s", "s"], ["RENAME", "s2", "s3"], ["COPY", "s3", "s4"],
    ["MOVE", "s4", "1"], ["XADD", "x", "1-1", "f", "v"], ["XADD", "x", "2-1", "f", "v"], ["XTRIM", "x", "MAXLEN", "1"],
    ["GETDEL", "f"], ["SET", "a", "1", "NX"], ["FLUSHDB"], ["FLUSHDB"], ["SET", "after", "1"], ["SELECT", "1"],
    ["FLUSHALL"], ["SELECT", "0"], ["SET", "last", "1"],
]


def test_save_bgsave_lastsave_and_counters(servers, datadir, tmpdirs):
    """The same commands on HotKV and Redis 7.0 give the same replies and the
    same rdb_changes_since_last_save after every step; SAVE and BGSAVE reset
    it, count in rdb_saves, move LASTSAVE and write the file."""
    srv = servers(datadir)
    c = srv.conn()
    rdir = tmpdirs()
    with redis_on(rdir) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        deltas = []
        mine0, theirs0 = changes(c), changes(ref)
        for step in DIRTY_STEPS:
            assert c.cmd(*step) == ref.cmd(*step), step
            mine1, theirs1 = changes(c), changes(ref)
            deltas.append((" ".join(step), mine1 - mine0, theirs1 - theirs0))
            mine0, theirs0 = mine1, theirs1
        bad = ["%s: hotkv +%d, redis +%d" % d for d in deltas if d[1] != d[2]]
        assert not bad, "rdb_changes_since_last_save per command:\n" + "\n".join(bad)
        for cmd in (["BGSAVE", "foo"], ["BGSAVE", "SCHEDULE", "x"], ["SAVE", "x"], ["LASTSAVE", "x"]):
            assert c.cmd(*cmd) == ref.cmd(*cmd), cmd
        before = c.cmd("LASTSAVE")
        assert isinstance(before, int) and abs(before - time.time()) < 5
        # The next save falls in a later second than the server's start.
        time.sleep(max(0.0, before + 1.05 - time.time()))
        assert c.cmd("SAVE") == ref.cmd("SAVE") == "OK"
        wait_bgsave(c)  # (test_save_then_bgsave_at_once has the race this avoids)
        mine, theirs = info(c), info(ref)
        for k in ("rdb_changes_since_last_save", "rdb_last_bgsave_status", "rdb_saves", "rdb_bgsave_in_progress"):
            assert mine[k] == theirs[k], k
        assert mine["rdb_changes_since_last_save"] == "0" and mine["rdb_saves"] == "1"
        last = c.cmd("LASTSAVE")
        assert last > before and str(last) == mine["rdb_last_save_time"]
        assert os.path.exists(os.path.join(datadir, "dump.rdb"))
        os.unlink(os.path.join(datadir, "dump.rdb"))
        c.cmd("SET", "x", "1")
        ref.cmd("SET", "x", "1")
        assert c.cmd("BGSAVE") == ref.cmd("BGSAVE") == "Background saving started"
        mine, theirs = wait_bgsave(c), wait_bgsave(ref)
        for k in ("rdb_changes_since_last_save", "rdb_last_bgsave_status", "rdb_saves", "rdb_last_bgsave_time_sec"):
            assert mine[k] == theirs[k], k
        assert mine["rdb_last_bgsave_status"] == "ok" and mine["rdb_saves"] == "2"
        assert os.path.exists(os.path.join(datadir, "dump.rdb"))
        # SCHEDULE with nothing running starts one at once.
        assert c.cmd("BGSAVE", "SCHEDULE") == ref.cmd("BGSAVE", "SCHEDULE") == "Background saving started"
        wait_bgsave(c)
        wait_bgsave(ref)
        assert info(c)["rdb_saves"] == "3"


def test_bgsave_while_one_runs(servers, datadir, tmpdirs):
    """A second BGSAVE, BGSAVE SCHEDULE and SAVE while a background save
    runs are refused alike; INFO shows it running; writes during the save
    count toward the next one."""
    srv = servers(datadir)
    c = srv.conn()
    populate_members(c, sets=20, members=30000)
    rdir = tmpdirs()
    with redis_on(rdir) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        populate_members(ref, sets=20, members=30000)
        seq = [["BGSAVE"], ["BGSAVE"], ["BGSAVE", "SCHEDULE"], ["SAVE"], ["SET", "w1", "1"], ["SET", "w2", "2"]]
        mine, theirs = pipe(c, seq), pipe(ref, seq)
        assert mine == theirs
        assert mine[:4] == ["Background saving started", IN_PROGRESS, IN_PROGRESS, IN_PROGRESS]
        i = info(c)
        assert i["rdb_bgsave_in_progress"] == "1", "the save ended before the test could look at it"
        assert int(i["rdb_current_bgsave_time_sec"]) >= 0
        mine, theirs = wait_bgsave(c), wait_bgsave(ref)
        assert mine["rdb_current_bgsave_time_sec"] == "-1"
        for k in ("rdb_changes_since_last_save", "rdb_last_bgsave_status", "rdb_saves"):
            assert mine[k] == theirs[k], k
        assert mine["rdb_changes_since_last_save"] == "2"


def test_bgsave_inside_multi_is_scheduled(servers, datadir, tmpdirs):
    """Redis answers BGSAVE inside MULTI/EXEC "Background saving scheduled"
    and starts it from its cron afterwards (7.0 and 8.4 alike)."""
    srv = servers(datadir)
    c = srv.conn()
    c.cmd("SET", "k", "v")
    with redis_on(tmpdirs()) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        ref.cmd("SET", "k", "v")
        seq = [["MULTI"], ["BGSAVE"], ["EXEC"]]
        theirs = pipe(ref, seq)
        mine = pipe(c, seq)
        assert theirs[2] == ["Background saving scheduled"]
        assert mine == theirs
        wait_until(lambda: info(c)["rdb_saves"] == "1", 10, "the scheduled save")
        wait_bgsave(c)
        assert info(c)["rdb_last_bgsave_status"] == "ok"


def test_save_then_bgsave_at_once(servers, datadir):
    """SAVE answers once the save is over: a BGSAVE sent right behind it
    starts (Redis's SAVE runs in the foreground, so it always does)."""
    c = servers(datadir).conn()
    populate_members(c, sets=2, members=20000)
    got = []
    for _ in range(20):
        got.append(tuple(pipe(c, [["SAVE"], ["BGSAVE"]])))
        wait_bgsave(c)
    assert set(got) == {("OK", "Background saving started")}


# ---- restarts keep everything -------------------------------------------------


@pytest.mark.parametrize("second", [(), ("--list-compress-depth", "1")], ids=["same-config", "compress-depth-1"])
def test_restart_keeps_every_type_and_encoding(servers, datadir, second):
    """gen_dataset's dataset, SAVE, a new server on the file: the same view
    (values, TTLs, encodings, digests, functions); the second time loaded
    into compressed quicklists."""
    srv = servers(datadir)
    c = srv.conn()
    cmds = gen_dataset(1)
    load_dataset(c, cmds)
    before = dataset_view(c)
    assert c.cmd("SAVE") == "OK"
    nkeys = sum(len(keys) for keys in before["dbs"].values())
    stop_checked(srv)
    srv2 = servers(datadir, *second)
    c2 = srv2.conn()
    after = dataset_view(c2)
    assert_same_views(before, after)
    i = info(c2)
    assert (i["rdb_last_load_keys_loaded"], i["rdb_last_load_keys_expired"]) == (str(nkeys), "0")
    assert "DB loaded from disk" in srv2.log()
    # The loaded values are live ones: they change and save again.
    assert c2.cmd("RPUSH", "list:ql", "tail") == 3001
    assert c2.cmd("XADD", "stream:a", "*", "k", "v").startswith(b"1")
    assert c2.cmd("HSET", "hfe:lp", "f1", "new") == 0
    assert c2.cmd("BGSAVE") == "Background saving started"
    assert wait_bgsave(c2)["rdb_last_bgsave_status"] == "ok"


def test_restart_consumer_active_time_follows_rdb_10(servers, datadir):
    """HotKV writes RDB 10 so that Redis 7.0 loads its files, and RDB 10's
    stream record (RDB_TYPE_STREAM_LISTPACKS_2) has no active-time: after a
    restart it is the seen-time, as Redis 7.2+ sets it when loading such a
    record. Everything else about the stream survives."""
    srv = servers(datadir)
    c = srv.conn()
    c.cmd("XADD", "s", "1-1", "a", "b")
    c.cmd("XADD", "s", "2-1", "a", "b")
    c.cmd("XGROUP", "CREATE", "s", "g", "0")
    c.cmd("XREADGROUP", "GROUP", "g", "worker", "COUNT", "1", "STREAMS", "s", ">")
    time.sleep(0.05)
    c.cmd("XREADGROUP", "GROUP", "g", "worker", "COUNT", "1", "STREAMS", "s", "0")  # seen, not active
    before = stream_view(c.cmd("XINFO", "STREAM", "s", "FULL"))
    cons = before[b"groups"][0][b"consumers"][0]
    assert cons[b"seen-time"] != cons[b"active-time"]
    c.cmd("SAVE")
    stop_checked(srv)
    c2 = servers(datadir).conn()
    after = stream_view(c2.cmd("XINFO", "STREAM", "s", "FULL"))
    cons[b"active-time"] = cons[b"seen-time"]
    assert after == before


@pytest.mark.parametrize("how", ["bgsave", "shutdown", "shutdown-save", "sigterm"])
def test_restart_after_each_way_of_saving(servers, datadir, how):
    """BGSAVE, SHUTDOWN with save points, SHUTDOWN SAVE without, and SIGTERM
    with save points all write a file a restart loads back."""
    points = () if how == "shutdown-save" else ("--save", "3600 1")
    srv = servers(datadir, *points)
    c = srv.conn()
    cmds = gen_dataset(2, big=False)
    load_dataset(c, cmds)
    before = dataset_view(c)
    if how == "bgsave":
        assert c.cmd("BGSAVE") == "Background saving started"
        assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
        srv.proc.kill()
    elif how == "shutdown":
        assert closed_by_server(c, "SHUTDOWN")
    elif how == "shutdown-save":
        assert closed_by_server(c, "SHUTDOWN", "SAVE")
    else:
        srv.proc.send_signal(signal.SIGTERM)
    rc = wait_exit(srv)
    assert rc == (-9 if how == "bgsave" else 0)
    if how != "bgsave":
        assert "Saving the final RDB snapshot before exiting" in srv.log()
    srv.stopped = True
    after = dataset_view(servers(datadir).conn())
    assert_same_views(before, after)


def test_restart_drops_keys_that_expired_meanwhile(servers, datadir):
    """Keys saved with a TTL that ran out before the restart are not
    loaded, and INFO counts them apart."""
    srv = servers(datadir)
    c = srv.conn()
    pipe_ok(c, [["SET", "keep:%d" % i, "v"] for i in range(50)])
    t0 = time.time()
    pipe_ok(c, [["SET", "gone:%d" % i, "v", "PX", "1000"] for i in range(7)])
    pipe_ok(c, [["SET", "later:%d" % i, "v", "EX", "100000"] for i in range(3)])
    assert c.cmd("SAVE") == "OK"
    assert time.time() - t0 < 1, "too slow to test: the keys expired before the save"
    stop_checked(srv)
    time.sleep(max(0.0, t0 + 1.2 - time.time()))
    c2 = servers(datadir).conn()
    i = info(c2)
    assert (i["rdb_last_load_keys_loaded"], i["rdb_last_load_keys_expired"]) == ("53", "7")
    assert c2.cmd("DBSIZE") == 53
    assert 99000 < c2.cmd("TTL", "later:0") <= 100000


# ---- point-in-time snapshots ---------------------------------------------------

PIT_KEYS = 200000


def pit_value(i):
    return b"old:%d:" % i + b"x" * (40 + i % 60)


def pit_load(c, n, prefix=b"key:", value=pit_value):
    cmds = []
    for start in range(0, n, 500):
        args = ["MSET"]
        for i in range(start, min(n, start + 500)):
            args += [prefix + b"%d" % i, value(i)]
        cmds.append(args)
    pipe_ok(c, cmds, batch=20)


def pit_check(c, n, prefix=b"key:", value=pit_value, db=0):
    """Every key prefix0..prefix<n-1> of database db holds value(i)."""
    c.cmd("SELECT", db)
    bad = []
    for start in range(0, n, 1000):
        idx = list(range(start, min(n, start + 1000)))
        got = c.cmd("MGET", *[prefix + b"%d" % i for i in idx])
        bad += [(i, g) for i, g in zip(idx, got) if g != value(i)]
    c.cmd("SELECT", 0)
    return bad[:10], len(bad)


class Writers:
    """Clients that overwrite, delete and add keys as fast as they can from
    the moment go() is called; their commands are encoded beforehand so
    that they start at once."""

    def __init__(self, srv, nthreads, n, per_thread=30000):
        self.go_ev = threading.Event()
        self.errors = []
        self.threads = []
        self.saw_saving = []
        self.fresh = []  # a key each client adds
        self.srv = srv
        for t in range(nthreads):
            rng = random.Random(100 + t)
            cmds = []
            for j in range(per_thread):
                i = rng.randrange(n)
                r = rng.random()
                if r < 0.6:
                    cmds.append(["SET", b"key:%d" % i, b"new:%d:%d" % (t, j)])
                elif r < 0.8:
                    cmds.append(["DEL", b"key:%d" % i])
                else:
                    cmds.append(["SET", b"fresh:%d:%d" % (t, j), b"x"])
            self.fresh.append(next(cmd[1] for cmd in cmds if cmd[1].startswith(b"fresh:")))
            batches = [(b"".join(encode(*cmd) for cmd in cmds[k:k + 2000]), len(cmds[k:k + 2000]))
                       for k in range(0, len(cmds), 2000)]
            conn = srv.conn(timeout=60)
            th = threading.Thread(target=self._run, args=(conn, batches), daemon=True)
            self.threads.append(th)
            th.start()

    def _run(self, conn, batches):
        try:
            self.go_ev.wait()
            for i, (data, count) in enumerate(batches):
                conn.send(data)
                for _ in range(count):
                    r = conn.read()
                    if isinstance(r, Error):
                        self.errors.append(r)
                if i == 0:
                    probe = RespConn(self.srv.host, self.srv.port)
                    self.saw_saving.append(info(probe)["rdb_bgsave_in_progress"] == "1")
                    probe.close()
        except Exception as e:  # noqa: BLE001 - reported by join()
            self.errors.append(e)
        finally:
            conn.close()

    def go(self):
        self.go_ev.set()

    def join(self):
        for th in self.threads:
            th.join(120)
        assert not self.errors, self.errors[:3]


def test_bgsave_is_a_point_in_time_snapshot(servers, datadir, tmpdirs):
    """200k keys on a 4-thread server; as soon as BGSAVE answers, four
    clients overwrite, delete and add keys. The file must load to exactly
    the keys and values of the moment BGSAVE answered."""
    srv = servers(datadir, threads=4)
    c = srv.conn(timeout=60)
    pit_load(c, PIT_KEYS)
    assert c.cmd("DBSIZE") == PIT_KEYS
    w = Writers(srv, 4, PIT_KEYS)
    assert c.cmd("BGSAVE") == "Background saving started"
    w.go()
    w.join()
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    assert any(w.saw_saving), "the save was over before the writers started: nothing was tested"
    # The live dataset did change.
    assert c.cmd("EXISTS", *w.fresh) == len(w.fresh)
    other = tmpdirs()
    copy_rdb(datadir, other)
    c2 = servers(other).conn(timeout=60)
    assert c2.cmd("DBSIZE") == PIT_KEYS
    assert pit_check(c2, PIT_KEYS) == ([], 0)
    assert c2.cmd("SCAN", 0, "MATCH", "fresh:*", "COUNT", 1000000)[1] == []


def test_bgsave_then_flushall(servers, datadir, tmpdirs):
    """FLUSHALL right after BGSAVE answers (without save points): the file
    still holds every database as it was at the BGSAVE."""
    srv = servers(datadir)
    c = srv.conn(timeout=60)
    pit_load(c, 100000)
    c.cmd("SELECT", 2)
    pit_load(c, 50000, prefix=b"two:")
    c.cmd("SELECT", 0)
    digest = c.cmd("DEBUG", "DIGEST")
    replies = pipe(c, [["BGSAVE"], ["FLUSHALL"], ["SET", "after", "1"], ["SELECT", 2], ["SET", "two:1", "new"],
                       ["SELECT", 0]])
    assert replies[:3] == ["Background saving started", "OK", "OK"]
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    assert c.cmd("DBSIZE") == 1
    other = tmpdirs()
    copy_rdb(datadir, other)
    c2 = servers(other).conn(timeout=60)
    assert c2.cmd("DEBUG", "DIGEST") == digest
    assert c2.cmd("EXISTS", "after") == 0


def test_bgsave_then_swapdb(servers, datadir, tmpdirs):
    """SWAPDB right after BGSAVE answers, then writes to both databases: the
    file holds the databases as they were (not swapped)."""
    srv = servers(datadir, threads=4)
    c = srv.conn(timeout=60)
    pit_load(c, 100000)
    c.cmd("SELECT", 1)
    pit_load(c, 60000, prefix=b"one:", value=lambda i: b"db1:%d" % i)
    c.cmd("SELECT", 0)
    digest = c.cmd("DEBUG", "DIGEST")
    w = Writers(srv, 2, 100000, per_thread=20000)
    replies = pipe(c, [["BGSAVE"], ["SWAPDB", 0, 1]])
    w.go()
    pipe_ok(c, [["SET", b"one:%d" % i, b"changed"] for i in range(0, 60000, 7)])
    w.join()
    assert replies == ["Background saving started", "OK"]
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    other = tmpdirs()
    copy_rdb(datadir, other)
    c2 = servers(other).conn(timeout=60)
    assert c2.cmd("DEBUG", "DIGEST") == digest
    assert pit_check(c2, 100000) == ([], 0)
    assert pit_check(c2, 60000, prefix=b"one:", value=lambda i: b"db1:%d" % i, db=1) == ([], 0)


def crash_after_flushall(conn, kill, during_bgsave):
    """Fill, SAVE, (BGSAVE,) FLUSHALL, wait for any save, then SIGKILL."""
    populate_members(conn, sets=10, members=40000, strings=1000)
    assert conn.cmd("SAVE") == "OK"
    wait_bgsave(conn)  # (test_save_then_bgsave_at_once has the race this avoids)
    replies = pipe(conn, ([["BGSAVE"]] if during_bgsave else []) + [["FLUSHALL"]])
    wait_bgsave(conn)
    time.sleep(0.2)
    kill()
    return replies


@pytest.mark.parametrize("during_bgsave", [False, True], ids=["idle", "during-bgsave"])
def test_flushall_with_save_points_saves_the_empty_dataset(servers, datadir, tmpdirs, during_bgsave):
    """With save points, Redis saves the emptied dataset at FLUSHALL (a
    BGSAVE that was running is killed first), so a crash right after it
    does not bring the flushed keys back (7.0 and 8.4 alike)."""
    rdir = tmpdirs()
    with redis_on(rdir, "--save", "3600 1") as (port, proc, _):
        theirs = crash_after_flushall(RespConn("127.0.0.1", port, timeout=60), proc.kill, during_bgsave)
        proc.wait()
    with redis_on(rdir) as (port, _, _):
        theirs_after = RespConn("127.0.0.1", port).cmd("DBSIZE")
    srv = servers(datadir, "--save", "3600 1")
    mine = crash_after_flushall(srv.conn(timeout=60), srv.proc.kill, during_bgsave)
    srv.proc.wait()
    srv.stopped = True
    mine_after = servers(datadir).conn().cmd("DBSIZE")
    assert theirs_after == 0
    assert (mine, mine_after) == (theirs, theirs_after)


# ---- DEBUG RELOAD --------------------------------------------------------------


def test_debug_reload_keeps_everything(servers, datadir):
    """DEBUG RELOAD and DEBUG RELOAD NOSAVE give back the same dataset:
    values, TTLs, encodings, digests, functions."""
    srv = servers(datadir)
    c = srv.conn()
    load_dataset(c, gen_dataset(3))
    before = dataset_view(c)
    assert c.cmd("DEBUG", "RELOAD") == "OK"
    assert_same_views(before, dataset_view(c))
    assert c.cmd("DEBUG", "RELOAD", "NOSAVE") == "OK"
    assert_same_views(before, dataset_view(c))
    assert "DB reloaded by DEBUG RELOAD" in srv.log()


def test_debug_reload_options_like_redis(servers, datadir, tmpdirs):
    """NOSAVE loads the file as it is, NOFLUSH MERGE lays it over what is in
    memory, a bad option and a missing file fail alike."""
    srv = servers(datadir)
    c = srv.conn()
    rdir = tmpdirs()
    with redis_on(rdir) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        steps = [
            ["SET", "a", "1"], ["SET", "b", "2"], ["RPUSH", "l", "x", "y"], ["SAVE"],
            ["SET", "a", "changed"], ["DEL", "b"], ["SET", "c", "3"],
            ["DEBUG", "RELOAD", "NOSAVE"], ["MGET", "a", "b", "c"], ["LRANGE", "l", 0, -1],
            ["SET", "a", "again"], ["SET", "d", "4"],
            ["DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE"], ["MGET", "a", "b", "c", "d"], ["DBSIZE"],
            ["DEBUG", "RELOAD", "BADOPT"], ["DEBUG", "RELOAD", "NOSAVE", "FOO"],
            ["DEBUG", "RELOAD"], ["MGET", "a", "b", "c", "d"], ["DBSIZE"],
        ]
        for step in steps:
            assert c.cmd(*step) == ref.cmd(*step), step
        os.unlink(os.path.join(datadir, "dump.rdb"))
        os.unlink(os.path.join(rdir, "dump.rdb"))
        # A missing file: the dataset is flushed first and the load fails (the
        # text is 8.x's; 7.0 says only "Error trying to load the RDB dump").
        last = [["DEBUG", "RELOAD", "NOSAVE"], ["DBSIZE"]]
        mine, theirs = pipe(c, last), pipe(ref, last)
        assert mine[1] == theirs[1] == 0
        assert mine[0] == Error("ERR Error trying to load the RDB dump, check server logs.")


# ---- SHUTDOWN and SIGTERM -------------------------------------------------------


def test_shutdown_errors_like_redis(servers, datadir, tmpdirs):
    """SHUTDOWN's refusals: ABORT with no shutdown in progress, bad or
    conflicting options."""
    c = servers(datadir).conn()
    with redis_on(tmpdirs()) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        for cmd in (["SHUTDOWN", "ABORT"], ["SHUTDOWN", "NOSAVE", "SAVE"], ["SHUTDOWN", "FOO"],
                    ["SHUTDOWN", "ABORT", "NOW"], ["SHUTDOWN", "ABORT", "NOSAVE"], ["SHUTDOWN", "SAVE", "ABORT"]):
            assert c.cmd(*cmd) == ref.cmd(*cmd), cmd
        assert c.cmd("SHUTDOWN", "ABORT") == Error("ERR No shutdown in progress.")


def test_shutdown_nosave_keeps_the_old_file(servers, datadir):
    """SHUTDOWN NOSAVE exits without saving even with save points: the
    restart finds the last SAVE."""
    srv = servers(datadir, "--save", "3600 1")
    c = srv.conn()
    c.cmd("SET", "a", "saved")
    assert c.cmd("SAVE") == "OK"
    c.cmd("SET", "a", "unsaved")
    c.cmd("SET", "b", "unsaved")
    assert closed_by_server(c, "SHUTDOWN", "NOSAVE")
    assert wait_exit(srv) == 0
    srv.stopped = True
    c2 = servers(datadir).conn()
    assert c2.cmd("MGET", "a", "b") == [b"saved", None]


def test_sigterm_saves_only_with_save_points(servers, datadir, tmpdirs):
    """SIGTERM saves before exiting when save points are set, and only then."""
    srv = servers(datadir, "--save", "3600 1")
    srv.conn().cmd("SET", "a", "1")
    srv.proc.send_signal(signal.SIGTERM)
    assert wait_exit(srv) == 0
    assert os.path.exists(os.path.join(datadir, "dump.rdb"))
    log = srv.log()
    assert "Received SIGTERM scheduling shutdown" in log and "Saving the final RDB snapshot" in log
    srv.stopped = True
    other = tmpdirs()
    srv2 = servers(other)
    srv2.conn().cmd("SET", "a", "1")
    srv2.proc.send_signal(signal.SIGTERM)
    assert wait_exit(srv2) == 0
    assert not os.path.exists(os.path.join(other, "dump.rdb"))
    assert "Saving the final RDB snapshot" not in srv2.log()
    srv2.stopped = True


def test_shutdown_during_bgsave(servers, datadir):
    """SHUTDOWN while a BGSAVE runs stops it and saves anew before exiting;
    the file is whole."""
    srv = servers(datadir, "--save", "3600 1")
    c = srv.conn(timeout=60)
    populate_members(c, sets=10, members=30000, strings=500)
    digest = c.cmd("DEBUG", "DIGEST")
    c.send(encode("BGSAVE") + encode("SHUTDOWN"))
    assert c.read() == "Background saving started"
    with pytest.raises((ConnectionError, OSError)):
        c.read()
    assert wait_exit(srv, 60) == 0
    srv.stopped = True
    assert servers(datadir).conn().cmd("DEBUG", "DIGEST") == digest


# ---- save points and CONFIG ------------------------------------------------------


def test_save_lines_accumulate_at_startup(servers, datadir, tmpdirs):
    """Several `save` lines (the stock redis.conf has three) add up; "" clears."""
    extra = ("--save", "3600 1", "--save", "300 100", "--save", "60 10000")
    c = servers(datadir, *extra).conn()
    with redis_on(tmpdirs(), *extra) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        assert ref.cmd("CONFIG", "GET", "save") == [b"save", b"3600 1 300 100 60 10000"]
        assert c.cmd("CONFIG", "GET", "save") == ref.cmd("CONFIG", "GET", "save")


SAVE_VALUES = ["", "1 1", "3600 1 300 100 60 10000", "100 0", "  5   7  ", "1", "0 1", "a b", "1 -1", "1 1 2",
               "10 x", "9223372036854775807 1"]


def test_config_set_save_like_redis(servers, datadir, tmpdirs):
    """CONFIG SET save: what is accepted, what is refused, what CONFIG GET
    shows afterwards (each value from a known state)."""
    c = servers(datadir).conn()
    with redis_on(tmpdirs()) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        bad = []
        for v in SAVE_VALUES:
            c.cmd("CONFIG", "SET", "save", "1 1")
            ref.cmd("CONFIG", "SET", "save", "1 1")
            for cmd in (["CONFIG", "SET", "save", v], ["CONFIG", "GET", "save"]):
                mine, theirs = c.cmd(*cmd), ref.cmd(*cmd)
                if mine != theirs:
                    bad.append("%r: hotkv %r, redis %r" % (cmd, mine, theirs))
        assert not bad, "\n".join(bad)


def test_config_save_dbfilename_dir(servers, datadir, tmpdirs, protected_ok):
    """dbfilename refuses paths (Redis's text); a missing dir is refused; the
    file goes where dir and dbfilename say, and a server started with them
    loads it."""
    srv = servers(datadir, *protected_ok)
    c = srv.conn()
    rdir = tmpdirs()
    with redis_on(rdir) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        c.cmd("CONFIG", "SET", "save", "")
        for v in ("a/b", "/abs.rdb", "../up.rdb", "other.rdb"):
            assert c.cmd("CONFIG", "SET", "dbfilename", v) == ref.cmd("CONFIG", "SET", "dbfilename", v), v
            assert c.cmd("CONFIG", "GET", "dbfilename") == ref.cmd("CONFIG", "GET", "dbfilename"), v
        assert c.cmd("CONFIG", "SET", "dbfilename", "a/b") == Error(
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, "
            "just a filename")
        missing = os.path.join(rdir, "no", "such", "dir")
        assert c.cmd("CONFIG", "SET", "dir", missing) == ref.cmd("CONFIG", "SET", "dir", missing)
        assert c.cmd("CONFIG", "GET", "dir") == [b"dir", datadir.encode()]
    c.cmd("SET", "k", "v")
    assert c.cmd("SAVE") == "OK"
    wait_bgsave(c)  # (test_save_then_bgsave_at_once has the race this avoids)
    assert os.path.exists(os.path.join(datadir, "other.rdb"))
    assert not os.path.exists(os.path.join(datadir, "dump.rdb"))
    moved = tmpdirs()
    assert c.cmd("CONFIG", "SET", "dir", moved) == "OK"
    assert c.cmd("CONFIG", "GET", "dir") == [b"dir", moved.encode()]
    assert c.cmd("BGSAVE") == "Background saving started"
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    assert sorted(f for f in os.listdir(moved) if f.endswith(".rdb")) == ["other.rdb"]
    # A server started with that file name loads it.
    c2 = servers(moved, "--dbfilename", "other.rdb").conn()
    assert c2.cmd("GET", "k") == b"v"


def test_dir_and_dbfilename_are_protected_configs(servers, datadir, tmpdirs):
    """Redis 7.0 and 8.4 refuse CONFIG SET dir / dbfilename unless
    enable-protected-configs allows it."""
    c = servers(datadir).conn()
    rdir, elsewhere = tmpdirs(), tmpdirs()
    exe = redis_bin()
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", rdir, "--save", ""],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        ref = RespConn("127.0.0.1", port)
        for cmd in (["CONFIG", "SET", "dir", elsewhere], ["CONFIG", "SET", "dbfilename", "x.rdb"],
                    ["CONFIG", "GET", "enable-protected-configs"]):
            assert c.cmd(*cmd) == ref.cmd(*cmd), cmd
    finally:
        proc.terminate()
        proc.wait(20)


def test_save_point_starts_a_bgsave(servers, datadir):
    """save "1 1": a write starts a BGSAVE once more than a second passed
    since the last save, and nothing more happens without changes or
    without save points."""
    srv = servers(datadir)
    c = srv.conn()
    assert c.cmd("CONFIG", "SET", "save", "1 1") == "OK"
    assert c.cmd("CONFIG", "GET", "save") == [b"save", b"1 1"]
    time.sleep(0.5)
    assert info(c)["rdb_saves"] == "0", "saved with nothing changed"
    c.cmd("SET", "k", "v")
    wait_until(lambda: info(c)["rdb_saves"] == "1", 4, "the save point's BGSAVE")
    i = wait_bgsave(c)
    assert i["rdb_last_bgsave_status"] == "ok" and i["rdb_changes_since_last_save"] == "0"
    assert "1 changes in 1 seconds. Saving..." in srv.log()
    time.sleep(2.2)
    assert info(c)["rdb_saves"] == "1", "saved again with nothing changed"
    assert c.cmd("CONFIG", "SET", "save", "") == "OK"
    c.cmd("SET", "k2", "v")
    time.sleep(2.2)
    assert info(c)["rdb_saves"] == "1", "saved without save points"


# ---- a save that cannot write ------------------------------------------------------


def test_failed_bgsave_stops_writes_until_a_save_works(servers, datadir, tmpdirs, protected_ok):
    """The data directory disappears (root ignores permissions, so it is
    removed rather than made read-only). Every step runs on HotKV and Redis
    7.0 alike; all differences are reported together."""
    srv = servers(datadir, "--save", "3600 1", *protected_ok)
    c = srv.conn()
    diffs = []
    rdir = tmpdirs()
    with redis_on(rdir, "--save", "3600 1") as (port, _, _):
        ref = RespConn("127.0.0.1", port)

        def same(*cmd, expect=None):
            mine, theirs = c.cmd(*cmd), ref.cmd(*cmd)
            if mine != theirs:
                diffs.append("%r: hotkv %r, redis %r" % (cmd, mine, theirs))
            if expect is not None and theirs != expect:
                diffs.append("%r: redis answered %r, the test expected %r" % (cmd, theirs, expect))
            return mine

        for conn, base in ((c, datadir), (ref, rdir)):
            gone = os.path.join(base, "gone")
            os.mkdir(gone)
            assert conn.cmd("CONFIG", "SET", "dir", gone) == "OK"
            os.rmdir(gone)
        same("SET", "a", "1")
        same("BGSAVE", expect="Background saving started")
        mine, theirs = wait_bgsave(c), wait_bgsave(ref)
        if mine["rdb_last_bgsave_status"] != theirs["rdb_last_bgsave_status"]:
            diffs.append("rdb_last_bgsave_status: %s / %s" % (mine["rdb_last_bgsave_status"],
                                                                theirs["rdb_last_bgsave_status"]))
        same("SET", "b", "2", expect=MISCONF)
        same("PING", expect=MISCONF)
        same("GET", "a", expect=b"1")
        same("EVAL", "return redis.call('GET', 'a')", 0, expect=b"1")
        same("EVAL", "return redis.call('SET', 'x', '1')", 0)
        # A script declared writable (a shebang without no-writes) is refused
        # before it runs, as a write command.
        same("EVAL", "#!lua\nreturn redis.call('SET', 'x', '1')", 0, expect=MISCONF)
        same("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'a')", 0, expect=b"1")
        same("SAVE", expect=Error("ERR"))
        same("DEBUG", "RELOAD", expect=Error("ERR"))
        same("SHUTDOWN", expect=Error("ERR Errors trying to SHUTDOWN. Check logs."))
        same("CONFIG", "SET", "stop-writes-on-bgsave-error", "no", expect="OK")
        same("SET", "b", "2", expect="OK")
        same("PING", expect="PONG")
        same("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes", expect="OK")
        same("SET", "b", "3", expect=MISCONF)
        same("CONFIG", "SET", "save", "", expect="OK")
        same("SET", "b", "4", expect="OK")
        same("CONFIG", "SET", "save", "3600 1", expect="OK")
        same("SET", "b", "5", expect=MISCONF)
        assert c.cmd("CONFIG", "SET", "dir", datadir) == "OK"
        assert ref.cmd("CONFIG", "SET", "dir", rdir) == "OK"
        same("BGSAVE", expect="Background saving started")
        wait_bgsave(c)
        wait_bgsave(ref)
        same("SET", "b", "6", expect="OK")
        same("PING", expect="PONG")
        same("MGET", "a", "b", "x")
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    assert not diffs, "\n".join(diffs)


# ---- -LOADING ----------------------------------------------------------------------


def test_loading_replies_while_a_big_file_loads(servers, datadir, tmpdirs):
    """A server started on a big file answers -LOADING to data commands and
    INFO with loading:1 and the loading_* fields until the file is in, as
    Redis 7.0 does on the same file (both start on it together)."""
    srv = servers(datadir)
    c = srv.conn(timeout=120)
    populate_members(c, sets=30, members=50000, strings=150000)
    total = c.cmd("DBSIZE")
    cards = pipe(c, [["SCARD", "bigset:%d" % k] for k in range(1, 31)])
    assert c.cmd("SAVE") == "OK"
    stop_checked(srv)
    size = os.path.getsize(os.path.join(datadir, "dump.rdb"))
    probe = [["GET", "str:1"], ["SET", "x", "1"], ["DBSIZE"], ["PING"], ["INFO", "persistence"]]

    def early(port, proc):
        deadline = time.time() + 30
        while True:
            try:
                conn = RespConn("127.0.0.1", port, timeout=60)
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline
                time.sleep(0.001)
        replies = pipe(conn, probe)
        text = replies[-1].decode()
        fields = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
        return conn, replies[:-1], fields

    rdir = tmpdirs()
    copy_rdb(datadir, rdir)
    with redis_on(rdir, wait=False) as (port, proc, _):
        srv2 = servers(datadir, wait=False)
        rc, theirs, rfields = early(port, proc)
        conn, mine, first = early(srv2.port, srv2.proc)
        assert first["loading"] == "1", "the load was over before the first command: nothing was tested"
        assert mine[0] == LOADING
        if rfields["loading"] == "1":
            assert mine == theirs
        samples = []
        while True:
            i = info(conn)
            if i["loading"] == "0":
                break
            samples.append(i)
            time.sleep(0.05)
        wait_until(lambda: info(rc)["loading"] == "0", 60, "redis to load")
        assert rc.cmd("DBSIZE") == total
    assert samples, "the load was over before INFO was sampled"
    for k in ("loading_start_time", "loading_total_bytes", "loading_loaded_bytes", "loading_loaded_perc",
              "loading_eta_seconds"):
        assert k in samples[-1], k
    assert int(samples[-1]["loading_total_bytes"]) == size
    assert abs(int(samples[-1]["loading_start_time"]) - time.time()) < 60
    assert conn.cmd("DBSIZE") == total
    assert pipe(conn, [["SCARD", "bigset:%d" % k] for k in range(1, 31)]) == cards
    assert conn.cmd("GET", "str:1") == b"value:1"
    assert info(conn)["rdb_last_load_keys_loaded"] == str(total)
    assert "DB loaded from disk" in srv2.log()


# ---- corrupt files at start-up -------------------------------------------------------


def sample_rdb(checksum=True):
    """A small valid file of a few types, written here byte by byte."""
    f = RdbFile(10).aux("redis-ver", "7.0.15").aux("redis-bits", "64")
    f.select(0).resize(4, 1)
    f.string("alpha", "one")
    f.string("beta", "two" * 30, expire_ms=FAR_MS)
    f.key(1, "list", rdb_len(3) + rdb_str("a") + rdb_str("b") + rdb_str("c"))  # RDB_TYPE_LIST
    f.key(2, "set", rdb_len(2) + rdb_str("x") + rdb_str("y"))  # RDB_TYPE_SET
    return f.finish(checksum)


def corrupt_files():
    good = sample_rdb()
    mid = len(good) // 2
    out = {
        "empty": b"",
        "header-only": good[:9],
        "truncated-half": good[:mid],
        "no-checksum": good[:-8],
        "last-byte-missing": good[:-1],
        "flipped-byte": good[:mid] + bytes([good[mid] ^ 0x5a]) + good[mid + 1:],
        "bad-checksum": good[:-8] + bytes(8 * [0x11]),
        "bad-magic": b"REDIX" + good[5:],
        "bad-version": fix_checksum(b"REDIS0099" + good[9:]),
        "version-zero": fix_checksum(b"REDIS0000" + good[9:]),
        "unknown-type": RdbFile(10).select(0).key(100, "k", rdb_str("v")).finish(),
        "module-type-no-module": RdbFile(10).select(0).key(7, "k", rdb_len(12345) + b"\x00" * 16).finish(),
        "huge-string-length": RdbFile(10).select(0).key(0, "k", rdb_len(1 << 40) + b"abc").finish(),
        "huge-list-length": RdbFile(10).select(0).key(1, "k", rdb_len(1 << 40) + rdb_str("a")).finish(),
        "bad-listpack-header": RdbFile(10).select(0).key(16, "h", rdb_str(b"\xff\x00\x00\x00\x02\x00"
                                                                          + b"\x81a\x02\x81b\x02\xff")).finish(),
        "bad-intset": RdbFile(10).select(0).key(11, "s", rdb_str(b"\x03\x00\x00\x00\x05\x00\x00\x00\x01")).finish(),
        "bad-opcode-after-select": RdbFile(10).select(0).finish()[:-9] + b"\xf0\xff" + bytes(8),
        "select-beyond-databases": RdbFile(10).select(5000).string("k", "v").finish(),
        "bad-lzf": RdbFile(10).select(0).key(0, "k", b"\xc3" + rdb_len(4) + rdb_len(100) + b"\x1f\x00\x00\x00")
                                   .finish(),
        "nan-zset-score": RdbFile(10).select(0).key(5, "z", rdb_len(1) + rdb_str("m")
                                                     + struct.pack("<d", float("nan"))).finish(),
    }
    return out


CORRUPT = corrupt_files()
# What the log line must name, for the files with one clear cause.
CORRUPT_WHY = {
    "bad-checksum": "Wrong RDB checksum", "flipped-byte": "Wrong RDB checksum", "bad-magic": "Wrong signature",
    "bad-version": "RDB format version 99", "version-zero": "RDB format version 0", "unknown-type": "type 100",
    "module-type-no-module": "module", "select-beyond-databases": "databases", "nan-zset-score": "NAN",
    "bad-lzf": "LZF", "bad-intset": "ntset", "bad-listpack-header": "istpack",
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_file_stops_the_server(servers, tmpdirs, name):
    """The server exits with status 1 and says why in its log, as Redis
    7.0 refuses the same file; it never dies of a signal."""
    data = CORRUPT[name]
    rd = tmpdirs()
    with open(os.path.join(rd, "dump.rdb"), "wb") as f:
        f.write(data)
    with redis_on(rd, wait=False) as (port, proc, _):
        # (Redis 7.0 may exit 0 when its checker, run after the failed load,
        # passes the file; what matters is that it does not serve it.)
        redis_rc = load_outcome(Server("127.0.0.1", port, proc))
    assert redis_rc is not None, "redis-server 7.0 loads this file: the test file is not corrupt"
    d = tmpdirs()
    with open(os.path.join(d, "dump.rdb"), "wb") as f:
        f.write(data)
    srv = servers(d, wait=False)
    rc = load_outcome(srv)
    log = srv.log()
    assert rc == 1, "exit status %r; log:\n%s" % (rc, log[-2000:])
    assert "Fatal error loading the DB" in log, log[-2000:]
    assert CORRUPT_WHY.get(name, "") in log, log[-2000:]


def test_sample_file_is_valid(servers, tmpdirs):
    """The file the corrupt ones are made from loads on both servers."""
    d = tmpdirs()
    with open(os.path.join(d, "dump.rdb"), "wb") as f:
        f.write(sample_rdb())
    c = servers(d).conn()
    rd = tmpdirs()
    shutil.copyfile(os.path.join(d, "dump.rdb"), os.path.join(rd, "dump.rdb"))
    with redis_on(rd) as (port, _, _):
        ref = RespConn("127.0.0.1", port)
        for cmd in (["DBSIZE"], ["DEBUG", "DIGEST"], ["PEXPIRETIME", "beta"], ["LRANGE", "list", 0, -1]):
            assert c.cmd(*cmd) == ref.cmd(*cmd), cmd
    assert c.cmd("DBSIZE") == 4


def test_random_damage_never_crashes(servers, tmpdirs):
    """Seeded random damage to a file of every type (written without a
    checksum, so the loader's own checks are what stops it): the server
    either loads it and serves, or exits with status 1; never a signal,
    never a hang."""
    d = tmpdirs()
    srv = servers(d, "--rdbchecksum", "no")
    c = srv.conn()
    load_dataset(c, gen_dataset(9, big=False))
    assert c.cmd("SAVE") == "OK"
    stop_checked(srv)
    with open(os.path.join(d, "dump.rdb"), "rb") as f:
        good = f.read()
    assert good[-8:] == bytes(8)
    rng = random.Random(77)
    outcomes, problems = [], []
    for trial in range(24):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(9, len(data) - 9)
            kind = rng.random()
            if kind < 0.5:
                data[pos] ^= 1 << rng.randrange(8)
            elif kind < 0.8:
                data[pos] = rng.randrange(256)
            else:
                del data[pos:pos + rng.randint(1, 40)]
        td = tmpdirs()
        with open(os.path.join(td, "dump.rdb"), "wb") as f:
            f.write(bytes(data))
        s = servers(td, wait=False)
        rc = load_outcome(s)
        if rc is None:
            conn = RespConn(s.host, s.port)
            if conn.cmd("PING") != "PONG":
                problems.append("trial %d: loaded, but PING fails" % trial)
            conn.cmd("DEBUG", "DIGEST")
            conn.close()
        elif rc != 1:
            problems.append("trial %d: exit status %r\n%s" % (trial, rc, s.log()[-1500:]))
        s.stop()
        report = sanitizer_report(s)
        if report:
            problems.append("trial %d (%s): %s" % (trial, "loaded" if rc is None else "refused",
                                                   report.strip()[:1500]))
        outcomes.append(rc)
    assert not problems, "\n".join(problems)
    assert 1 in outcomes and None in outcomes, outcomes
