"""The append-only file: Redis 7's multi-part layout (manifest, base, incr
files), what it holds, restarts that replay it, its compatibility with
Redis 7.0 in both directions (redis-check-aof, redis-server), truncated
and corrupt files, appendfsync always (acknowledged writes survive kill -9)
and everysec, BGREWRITEAOF and automatic rewrites, turning it on and off
while serving, INFO persistence, and writes refused while it cannot be
written.

Every server here has its own data directory (--dir) and `--save ''`, so
nothing is left behind. The 100-cycle kill -9 check is bench/durability.sh.
"""
import contextlib
import os
import random
import resource
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import free_port, start_server
from poll import wait_until
from resp import RespConn, encode, parse_commands
from test_exec import run_random_load

MANIFEST = "appendonly.aof.manifest"


# ---- helpers ----------------------------------------------------------------------


class DataDir:
    """A data directory that outlives the servers started on it."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="hotkv-aof-")

    def aofdir(self):
        return os.path.join(self.path, "appendonlydir")

    def files(self):
        d = self.aofdir()
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def manifest(self):
        with open(os.path.join(self.aofdir(), MANIFEST)) as f:
            return f.read()

    def manifest_entries(self):
        out = []
        for line in self.manifest().splitlines():
            parts = line.split()
            assert parts[0] == "file" and parts[2] == "seq" and parts[4] == "type", line
            out.append((parts[1], int(parts[3]), parts[5]))
        return out

    def incr_files(self):
        return [os.path.join(self.aofdir(), n) for n, _, t in self.manifest_entries() if t == "i"]

    def read(self, name):
        with open(os.path.join(self.aofdir(), name), "rb") as f:
            return f.read()

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


@pytest.fixture
def datadir():
    d = DataDir()
    yield d
    d.cleanup()


def aof_server(new_server, d, *extra, threads=2, appendonly="yes"):
    srv = new_server("--dir", d.path, "--save", "", "--appendonly", appendonly, "--enable-debug-command", "yes",
                     *extra, threads=threads)
    if appendonly == "yes":
        # Writes count from the moment the AOF records them.
        wait_until(srv.log, lambda t: "AOF incr file" in t and "on server start" in t, what="the AOF to open")
    # The file is open before loading ends; commands run once it has.
    c = srv.conn()
    wait_until(lambda: c.cmd("PING"), lambda v: v == "PONG", what="the load to end")
    c.close()
    return srv


def kill9(srv):
    """SIGKILL, as a crash: the fixture must not report the death."""
    srv.stopped = True
    srv.proc.kill()
    srv.proc.wait()


def info_field(r, section, field):
    """One INFO field as text (redis-py parses INFO into a dict)."""
    v = r.info(section)[field]
    return v if isinstance(v, str) else str(v)


def digest(r):
    return r.execute_command("DEBUG", "DIGEST")


def wait_rewrite_done(r, timeout=30):
    wait_until(lambda: (info_field(r, "persistence", "aof_rewrite_in_progress"),
                        info_field(r, "persistence", "aof_rewrite_scheduled")),
               lambda v: v == ("0", "0"), timeout=timeout, what="the AOF rewrite to end")


def fill_all_types(r, prefix="", db_extra=True):
    """Every type in several encodings, TTLs, other databases: what Redis
    7.0 knows too (so the same data set can cross to it)."""
    p = prefix
    r.set(p + "str", "hello")
    r.set(p + "int", 12345)
    r.set(p + "big", "x" * 5000)
    r.set(p + "bin key\r\n\x00", b"\x00\x01\xff")
    r.set(p + "ttl", "v", ex=1000)
    r.rpush(p + "list", *["e%d" % i for i in range(10)])
    r.rpush(p + "biglist", *["%d" % i for i in range(3000)] + ["long" * 50])
    r.hset(p + "hash", mapping={"a": "1", "b": "two"})
    r.hset(p + "bighash", mapping={"f%d" % i: "v%d" % i for i in range(700)})
    r.sadd(p + "iset", *range(20))
    r.sadd(p + "lpset", "a", "b", "c")
    r.sadd(p + "bigset", *["m%d" % i for i in range(1000)])
    r.zadd(p + "zset", {"a": 1.5, "b": -2, "c": 3})
    r.zadd(p + "bigzset", {"z%d" % i: i / 4 for i in range(600)})
    r.xadd(p + "stream", {"f": "v1"}, id="1-1")
    r.xadd(p + "stream", {"f": "v2", "g": "w"}, id="2-0")
    r.xadd(p + "stream", {"f": "v3"}, id="3-5")
    r.xgroup_create(p + "stream", "g1", id="0")
    r.xreadgroup("g1", "alice", {p + "stream": ">"}, count=2)
    r.xgroup_create(p + "stream", "g2", id="$")
    r.execute_command("XGROUP", "CREATECONSUMER", p + "stream", "g2", "bob")
    r.pfadd(p + "hll", *["h%d" % i for i in range(200)])
    r.setbit(p + "bits", 1000, 1)
    r.geoadd(p + "geo", (13.361389, 38.115556, "Palermo"))
    r.incrbyfloat(p + "float", "2.5")
    r.pexpire(p + "list", 500000)
    if db_extra:
        kw = r.connection_pool.connection_kwargs
        c3 = redis.Redis(host=kw.get("host", "127.0.0.1"), port=kw["port"], db=3)
        c3.set(p + "db3key", "three")
        c3.hset(p + "db3hash", "x", "y")
        c3.close()


def populate(r, n, prefix, size):
    """n string keys of size bytes (DEBUG POPULATE's shape)."""
    val = "v" * size
    pipe = r.pipeline(transaction=False)
    for i in range(0, n, 1000):
        pipe.mset({"%s:%d" % (prefix, j): val for j in range(i, min(n, i + 1000))})
    pipe.execute()


def dump_values(port, dbs=range(16)):
    """Every key of every database with its type, value and whether it has
    a TTL, through the plain commands (comparable across servers)."""
    out = {}
    for db in dbs:
        c = redis.Redis(port=port, db=db, socket_timeout=30)
        for k in c.scan_iter(count=1000):
            t = c.type(k).decode()
            if t == "string":
                v = c.get(k)
            elif t == "list":
                v = c.lrange(k, 0, -1)
            elif t == "hash":
                v = sorted(c.hgetall(k).items())
            elif t == "set":
                v = sorted(c.smembers(k))
            elif t == "zset":
                v = c.zrange(k, 0, -1, withscores=True)
            elif t == "stream":
                groups = []
                for g in c.xinfo_groups(k):
                    groups.append((g["name"], g["last-delivered-id"], g["pending"],
                                   sorted((x["name"], x["pending"]) for x in c.xinfo_consumers(k, g["name"]))))
                v = (c.xrange(k), sorted(groups), c.xinfo_stream(k)["last-generated-id"])
            else:
                v = None
            out[(db, k)] = (t, v, c.pttl(k) > 0)
        c.close()
    return out


@contextlib.contextmanager
def redis7(workdir, *extra):
    """Debian's redis-server (7.0) on workdir with the given options."""
    exe = shutil.which("redis-server")
    if not exe:
        pytest.fail("redis-server is needed (scripts/deps.sh test installs it)")
    port = free_port()
    log = os.path.join(workdir, "redis.log")
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir,
                             "--logfile", log, "--enable-debug-command", "yes", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                c = redis.Redis(port=port, socket_timeout=5)
                if c.info("persistence")["loading"] == 0:
                    c.close()
                    break
                c.close()
            except (OSError, redis.ConnectionError, redis.BusyLoadingError):
                pass
            if time.time() > deadline or proc.poll() is not None:
                text = open(log).read() if os.path.exists(log) else ""
                pytest.fail("redis-server did not start:\n" + text)
            time.sleep(0.05)
        yield port
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)


def start_expecting_exit(binary, d, *extra, timeout=30):
    """Start hotkv-server on d and wait for it to exit (a load it refuses);
    returns (exit status, log text)."""
    srv = start_server(binary, "--dir", d.path, "--save", "", "--appendonly", "yes", *extra, wait=False)
    try:
        srv.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        srv.stop()
        pytest.fail("the server started although its AOF is corrupt")
    text = srv.log()
    srv.stopped = True
    srv.stop()
    return srv.proc.returncode, text


# ---- the layout ------------------------------------------------------------------


def test_layout_and_manifest(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    r.set("a", "1")
    assert datadir.manifest() == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                                  "file appendonly.aof.1.incr.aof seq 1 type i\n")
    assert datadir.files() == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", MANIFEST]
    assert datadir.read("appendonly.aof.1.base.rdb").startswith(b"REDIS")
    # The incremental file starts with the database, then the command as
    # propagated.
    wait_until(lambda: datadir.read("appendonly.aof.1.incr.aof"), lambda v: b"$1\r\na\r\n" in v)
    cmds = parse_commands(datadir.read("appendonly.aof.1.incr.aof"))
    assert [[c[0].upper()] + c[1:] for c in cmds] == [[b"SELECT", b"0"], [b"SET", b"a", b"1"]]


def test_info_persistence_lines(new_server, datadir):
    srv = aof_server(new_server, datadir)
    c = srv.conn()
    text = c.cmd("INFO", "persistence")
    text = text.decode() if isinstance(text, bytes) else str(text)
    c.close()
    names = [line.split(":")[0] for line in text.split("\r\n") if line.startswith(("aof_", "module_fork"))]
    assert names == ["aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_last_rewrite_time_sec",
                     "aof_current_rewrite_time_sec", "aof_last_bgrewrite_status", "aof_rewrites",
                     "aof_rewrites_consecutive_failures", "aof_last_write_status", "aof_last_cow_size",
                     "module_fork_in_progress", "module_fork_last_cow_size", "aof_current_size", "aof_base_size",
                     "aof_pending_rewrite", "aof_buffer_length", "aof_pending_bio_fsync", "aof_delayed_fsync"]
    r = srv.client()
    assert info_field(r, "persistence", "aof_enabled") == "1"
    assert info_field(r, "persistence", "aof_last_write_status") == "ok"
    base = int(info_field(r, "persistence", "aof_current_size"))
    r.set("k", "v" * 100)
    wait_until(lambda: int(info_field(r, "persistence", "aof_current_size")), lambda v: v > base + 100)


def test_info_without_aof(new_server, datadir):
    srv = aof_server(new_server, datadir, appendonly="no")
    c = srv.conn()
    text = c.cmd("INFO", "persistence")
    text = text.decode() if isinstance(text, bytes) else str(text)
    c.close()
    assert "aof_enabled:0\r\n" in text
    assert "aof_current_size" not in text
    assert datadir.files() == []


# ---- restarts ----------------------------------------------------------------------


def test_restart_keeps_every_type(new_server, datadir):
    """Data written before and after a rewrite (so in the base and in the
    incremental file), every type, several databases: the same DEBUG
    DIGEST after a restart, and the same values."""
    srv = aof_server(new_server, datadir)
    r = srv.client()
    fill_all_types(r, "a:")
    r.bgrewriteaof()
    wait_rewrite_done(r)
    fill_all_types(r, "b:")
    r.delete("a:str")
    r.lpop("a:biglist", 10)
    r.hdel("a:bighash", "f1")
    r.execute_command("HSET", "b:hfe", "f1", "v1", "f2", "v2")
    r.execute_command("HEXPIRE", "b:hfe", 100000, "FIELDS", 1, "f1")
    r.zincrby("b:zset", 2, "a")
    r.xack("b:stream", "g1", "1-1")
    r.execute_command("SELECT", 0)
    want = digest(r)
    values = dump_values(srv.port)
    srv.stop()
    srv2 = aof_server(new_server, datadir)
    r2 = srv2.client()
    assert digest(r2) == want
    assert dump_values(srv2.port) == values
    assert r2.ttl("a:ttl") > 900
    assert r2.execute_command("HTTL", "b:hfe", "FIELDS", 2, "f1", "f2")[1] == -1


def test_restart_twice_appends_to_the_same_incr(new_server, datadir):
    srv = aof_server(new_server, datadir)
    srv.client().set("one", 1)
    srv.stop()
    srv = aof_server(new_server, datadir)
    srv.client().set("two", 2)
    srv.stop()
    assert [e[0] for e in datadir.manifest_entries()] == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof"]
    srv = aof_server(new_server, datadir)
    r = srv.client()
    assert r.get("one") == b"1" and r.get("two") == b"2"


def test_four_threads_replay_to_the_same_digest(new_server, datadir):
    """8 clients on a 4-thread server (every family, TTLs, FLUSHDB, SWAPDB,
    blocking pops), appendfsync always, then kill -9: the AOF replays to
    the same dataset."""
    srv = aof_server(new_server, datadir, "--appendfsync", "always", threads=4)
    r = srv.client()
    seed = random.randint(1, 10 ** 6)
    run_random_load(srv.port, 4, 8, seed=seed)
    # Keys past their deadline are reaped now (their DELs are journaled),
    # so both sides hold exactly the keys that have not expired.
    time.sleep(1.2)
    for db in range(4):
        c = redis.Redis(port=srv.port, db=db)
        for k in list(c.scan_iter(count=1000)):
            c.exists(k)
        c.close()
    want = digest(r)
    assert want != b"0" * 40
    keyspace = r.info("keyspace")
    values = dump_values(srv.port, range(4))
    kill9(srv)
    srv2 = aof_server(new_server, datadir, threads=2)
    r2 = srv2.client()
    r2.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    got = dump_values(srv2.port, range(4))
    diff = [(k, values.get(k), got.get(k)) for k in sorted(set(values) | set(got), key=repr)
            if values.get(k) != got.get(k)]
    assert not diff, (seed, diff[:6])
    assert digest(r2) == want, seed
    assert r2.info("keyspace") == keyspace, seed


def test_transactions_stay_whole_and_publish_is_left_out(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    pipe = r.pipeline(transaction=True)
    pipe.set("t1", "a")
    pipe.publish("chan", "m1")
    pipe.rpush("t2", "x")
    pipe.execute()
    r.publish("chan", "alone")
    r.eval("redis.call('set', KEYS[1], 'x'); redis.call('publish', 'chan', 'in-script'); return 1", 1, "s1")
    r.eval("redis.call('publish', 'chan', 'only'); redis.call('get', KEYS[1]); return 1", 1, "s1")
    r.set("last", "1")
    srv.stop()
    cmds = [[a.upper() if i == 0 else a for i, a in enumerate(c)]
            for c in parse_commands(datadir.read("appendonly.aof.1.incr.aof"))]
    names = [c[0] for c in cmds]
    assert b"PUBLISH" not in names
    i = names.index(b"MULTI")
    assert names[i:i + 4] == [b"MULTI", b"SET", b"RPUSH", b"EXEC"]
    assert [b"SET", b"s1", b"x"] in cmds
    assert cmds[-1] == [b"SET", b"last", b"1"]


def test_timestamp_annotations(new_server, datadir):
    srv = aof_server(new_server, datadir, "--aof-timestamp-enabled", "yes")
    r = srv.client()
    r.set("a", 1)
    time.sleep(1.1)
    r.set("b", 2)
    srv.stop()
    data = datadir.read("appendonly.aof.1.incr.aof")
    lines = [line for line in data.split(b"\r\n") if line.startswith(b"#TS:")]
    assert len(lines) >= 2, data
    assert all(int(line[4:]) > 1600000000 for line in lines)
    check = subprocess.run(["redis-check-aof", os.path.join(datadir.aofdir(), MANIFEST)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    srv = aof_server(new_server, datadir)
    r = srv.client()
    assert r.get("a") == b"1" and r.get("b") == b"2"


# ---- Redis 7.0 --------------------------------------------------------------------------


def test_redis_check_aof_accepts_the_directory(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    fill_all_types(r)
    r.bgrewriteaof()
    wait_rewrite_done(r)
    fill_all_types(r, "x:")
    srv.stop()
    check = subprocess.run(["redis-check-aof", os.path.join(datadir.aofdir(), MANIFEST)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All AOF files and manifest are valid" in check.stdout


def assert_redis_loads(datadir, values):
    """Redis 7.0, started on a copy of the AOF directory, holds `values`."""
    copy = tempfile.mkdtemp(prefix="redis-aof-")
    try:
        shutil.copytree(datadir.aofdir(), os.path.join(copy, "appendonlydir"))
        with redis7(copy, "--appendonly", "yes") as port:
            assert dump_values(port) == values
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def test_redis_loads_hotkv_aof(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    fill_all_types(r, "a:")
    r.bgrewriteaof()
    wait_rewrite_done(r)
    fill_all_types(r, "b:")
    r.delete("b:hash")
    values = dump_values(srv.port)
    srv.stop()
    assert_redis_loads(datadir, values)


def test_base_without_rdb_preamble(new_server, datadir):
    """aof-use-rdb-preamble no: the base is Redis protocol (RESTORE of each
    key's DUMP payload, FUNCTION LOAD, SELECT), named .base.aof; HotKV and
    Redis 7.0 both replay it to the same data, and redis-check-aof accepts
    it."""
    srv = aof_server(new_server, datadir, "--aof-use-rdb-preamble", "no")
    r = srv.client()
    fill_all_types(r, "a:")
    r.execute_command("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 7 end)")
    r.bgrewriteaof()
    wait_rewrite_done(r)
    fill_all_types(r, "b:")
    base = [e for e in datadir.manifest_entries() if e[-1] == "b"]
    assert len(base) == 1 and base[0][0].endswith(".base.aof"), base
    assert datadir.read(base[0][0]).startswith(b"*")
    want = digest(r)
    values = dump_values(srv.port)
    srv.stop()
    check = subprocess.run(["redis-check-aof", os.path.join(datadir.aofdir(), MANIFEST)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    srv2 = aof_server(new_server, datadir, "--aof-use-rdb-preamble", "no")
    r2 = srv2.client()
    assert digest(r2) == want
    assert dump_values(srv2.port) == values
    assert r2.execute_command("FCALL", "f1", 0) == 7
    srv2.stop()
    assert_redis_loads(datadir, values)


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_hotkv_loads_redis_aof(new_server, datadir, preamble):
    """A Redis 7.0 AOF directory: a base (RDB, or commands without the
    preamble) and incremental files."""
    with redis7(datadir.path, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble) as port:
        r = redis.Redis(port=port)
        fill_all_types(r, "a:")
        r.bgrewriteaof()
        wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"], lambda v: v == 0)
        fill_all_types(r, "b:")
        r.srem("b:bigset", "m1")
        values = dump_values(port)
        r.close()
    files = datadir.files()
    assert ("appendonly.aof.2.base.rdb" if preamble == "yes" else "appendonly.aof.2.base.aof") in files
    srv = aof_server(new_server, datadir)
    assert dump_values(srv.port) == values


def resp_of(*cmds):
    return b"".join(encode(*c) for c in cmds)


@pytest.mark.parametrize("with_preamble", [False, True])
def test_hotkv_loads_redis6_single_file(new_server, datadir, with_preamble):
    """A Redis 6 appendonly.aof in dir (commands, or an RDB preamble then
    commands) is loaded and moved into the directory, as Redis 7 does."""
    tail = resp_of(("SELECT", "0"), ("SET", "k1", "v1"), ("RPUSH", "l", "a", "b"), ("SELECT", "2"),
                   ("SADD", "s", "x"))
    head = b""
    want = {(0, b"k1"): ("string", b"v1", False), (0, b"l"): ("list", [b"a", b"b"], False),
            (2, b"s"): ("set", [b"x"], False)}
    if with_preamble:
        # An RDB from a HotKV snapshot serves as the preamble.
        src = DataDir()
        try:
            s = new_server("--dir", src.path, "--save", "", "--appendonly", "no")
            c = s.client()
            c.hset("fromrdb", "f", "v")
            c.save()
            s.stop()
            with open(os.path.join(src.path, "dump.rdb"), "rb") as f:
                head = f.read()
        finally:
            src.cleanup()
        want[(0, b"fromrdb")] = ("hash", [(b"f", b"v")], False)
    with open(os.path.join(datadir.path, "appendonly.aof"), "wb") as f:
        f.write(head + tail)
    srv = aof_server(new_server, datadir)
    assert dump_values(srv.port) == want
    assert not os.path.exists(os.path.join(datadir.path, "appendonly.aof"))
    entries = datadir.manifest_entries()
    assert entries[0] == ("appendonly.aof", 1, "b")
    assert entries[1][2] == "i"
    srv.client().set("after", "1")
    srv.stop()
    srv = aof_server(new_server, datadir)
    assert srv.client().get("after") == b"1"
    assert srv.client().get("k1") == b"v1"


# ---- damaged files -------------------------------------------------------------------


def write_incr(d, data):
    """Make d an AOF directory whose incremental file holds data."""
    os.makedirs(d.aofdir(), exist_ok=True)
    with open(os.path.join(d.aofdir(), MANIFEST), "w") as f:
        f.write("file appendonly.aof.1.incr.aof seq 1 type i\n")
    with open(os.path.join(d.aofdir(), "appendonly.aof.1.incr.aof"), "wb") as f:
        f.write(data)


def test_replay_keeps_keys_past_their_deadline_for_later_commands(new_server, datadir):
    """A key whose deadline has passed since it was written is still there
    for the commands that follow it in the file (Redis expires nothing
    while loading)."""
    past = int(time.time() * 1000) - 60000
    filler = [("SET", "f%d" % i, "x") for i in range(20000)]
    write_incr(datadir, resp_of(("SELECT", "0"), ("SET", "k", "v", "PXAT", past), *filler, ("PERSIST", "k"),
                                ("SET", "gone", "v", "PXAT", past)))
    srv = aof_server(new_server, datadir)
    r = srv.client()
    assert r.get("k") == b"v" and r.ttl("k") == -1
    assert r.get("gone") is None


def test_truncated_tail_loads_with_aof_load_truncated(new_server, datadir, request):
    good = resp_of(("SELECT", "0"), ("SET", "a", "1"), ("SET", "b", "2"))
    cut = resp_of(("SET", "c", "3"))[:-5]
    write_incr(datadir, good + cut)
    srv = aof_server(new_server, datadir, "--aof-load-truncated", "yes")
    r = srv.client()
    assert r.get("a") == b"1" and r.get("b") == b"2" and r.get("c") is None
    log = srv.log()
    assert "!!! Warning: short read while loading the AOF file appendonly.aof.1.incr.aof!!!" in log
    assert "!!! Truncating the AOF appendonly.aof.1.incr.aof at offset %d !!!" % len(good) in log
    # The file was cut back to its last whole command; new writes follow it.
    assert os.path.getsize(datadir.incr_files()[0]) == len(good)
    r.set("d", "4")
    srv.stop()
    srv = aof_server(new_server, datadir)
    assert srv.client().mget("a", "b", "c", "d") == [b"1", b"2", None, b"4"]


def test_truncated_tail_refused_without_aof_load_truncated(request, datadir):
    good = resp_of(("SELECT", "0"), ("SET", "a", "1"))
    write_incr(datadir, good + b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1")
    status, log = start_expecting_exit(request.config.getoption("--server-bin"), datadir, "--aof-load-truncated",
                                       "no")
    assert status != 0
    assert "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof" in log


def test_unfinished_transaction_is_dropped(new_server, datadir):
    good = resp_of(("SELECT", "0"), ("SET", "a", "1"))
    tx = resp_of(("MULTI",), ("SET", "b", "2"), ("SET", "c", "3"))
    write_incr(datadir, good + tx)
    srv = aof_server(new_server, datadir)
    r = srv.client()
    assert r.mget("a", "b", "c") == [b"1", None, None]
    assert "Revert incomplete MULTI/EXEC transaction in AOF file appendonly.aof.1.incr.aof" in srv.log()
    assert os.path.getsize(datadir.incr_files()[0]) == len(good)


def test_corrupt_middle_fails_naming_file_and_offset(request, datadir):
    good = resp_of(("SELECT", "0"), ("SET", "a", "1"))
    write_incr(datadir, good + b"garbage\r\n" + resp_of(("SET", "b", "2")))
    status, log = start_expecting_exit(request.config.getoption("--server-bin"), datadir)
    assert status != 0
    assert "Bad file format reading the append only file appendonly.aof.1.incr.aof" in log
    assert "offset %d" % len(good) in log


def test_unknown_command_fails(request, datadir):
    write_incr(datadir, resp_of(("SELECT", "0"), ("NOSUCHCMD", "x")))
    status, log = start_expecting_exit(request.config.getoption("--server-bin"), datadir)
    assert status != 0
    assert "Unknown command 'NOSUCHCMD' reading the append only file appendonly.aof.1.incr.aof" in log


def test_missing_file_in_manifest_fails(request, datadir):
    write_incr(datadir, resp_of(("SET", "a", "1")))
    os.unlink(datadir.incr_files()[0])
    with open(os.path.join(datadir.aofdir(), MANIFEST), "a") as f:
        f.write("file appendonly.aof.2.incr.aof seq 2 type i\n")
    status, log = start_expecting_exit(request.config.getoption("--server-bin"), datadir)
    assert status != 0


def test_bad_manifest_fails(request, datadir):
    os.makedirs(datadir.aofdir())
    with open(os.path.join(datadir.aofdir(), MANIFEST), "w") as f:
        f.write("file appendonly.aof.2.incr.aof seq 2 type i\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    status, log = start_expecting_exit(request.config.getoption("--server-bin"), datadir)
    assert status != 0
    assert "Found a non-monotonic sequence number" in log


# ---- fsync policies ------------------------------------------------------------------


def acked_writer(port, stop, acked, key_prefix, pipeline=1):
    """Write key_prefix:N = N in order; acked[0] is the highest N whose
    reply arrived. Stops on stop or on a lost connection."""
    try:
        c = RespConn("127.0.0.1", port, timeout=10)
        n = 0
        while not stop.is_set():
            c.send(b"".join(encode("SET", "%s:%d" % (key_prefix, n + i), n + i) for i in range(pipeline)))
            for i in range(pipeline):
                c.read()
                acked[0] = n + i
            n += pipeline
    except Exception:
        pass


def test_appendfsync_always_keeps_acknowledged_writes(new_server, datadir):
    """Several writers on a 4-thread server, kill -9 while they write: every
    write that was acknowledged is there after the restart (a few cycles;
    bench/durability.sh runs 100)."""
    for cycle in range(3):
        srv = aof_server(new_server, datadir, "--appendfsync", "always", threads=4)
        stop = threading.Event()
        acked = [[-1] for _ in range(6)]
        ts = [threading.Thread(target=acked_writer, args=(srv.port, stop, acked[i], "c%d:w%d" % (cycle, i), 1 + i % 3))
              for i in range(6)]
        for t in ts:
            t.start()
        time.sleep(0.5 + random.random())
        kill9(srv)
        stop.set()
        for t in ts:
            t.join(10)
        srv = aof_server(new_server, datadir, threads=2)
        r = srv.client()
        for i in range(6):
            n = acked[i][0]
            assert n > 0, "writer %d made no progress" % i
            got = r.get("c%d:w%d:%d" % (cycle, i, n))
            assert got == str(n).encode(), (cycle, i, n, got)
            # And nothing before it is missing.
            assert r.exists(*["c%d:w%d:%d" % (cycle, i, j) for j in range(n + 1)]) == n + 1
        srv.stop()


def test_appendfsync_everysec_loses_at_most_two_seconds(new_server, datadir):
    """A SIGKILL keeps the page cache, so this checks the writes reach the
    file promptly (the writer thread does not wait for the fsync); what an
    OS crash may lose is bounded by the once-a-second fsync."""
    srv = aof_server(new_server, datadir, "--appendfsync", "everysec")
    progress = []
    c = RespConn("127.0.0.1", srv.port, timeout=10)
    t0 = time.time()
    n = 0
    while time.time() - t0 < 3:
        c.cmd("SET", "n", n)
        progress.append((time.time(), n))
        n += 1
    kill9(srv)
    killed_at = time.time()
    srv = aof_server(new_server, datadir)
    got = int(srv.client().get("n"))
    # What was acknowledged more than ~2 s before the kill is there.
    floor = max([v for ts, v in progress if ts < killed_at - 2.2] or [0])
    assert got >= floor, (got, floor, n)


def test_appendfsync_no_writes_without_fsync(new_server, datadir):
    srv = aof_server(new_server, datadir, "--appendfsync", "no")
    r = srv.client()
    r.set("a", "1")
    wait_until(lambda: datadir.read("appendonly.aof.1.incr.aof"), lambda v: b"$1\r\na\r\n" in v)
    srv.stop()
    assert aof_server(new_server, datadir).client().get("a") == b"1"


def test_switching_fsync_policy_while_writing(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    for i, pol in enumerate(["always", "no", "everysec", "always"]):
        r.config_set("appendfsync", pol)
        for j in range(50):
            r.set("k%d:%d" % (i, j), j)
    kill9(srv)
    r = aof_server(new_server, datadir).client()
    # The last writes were under always: all of them are there.
    assert r.exists(*["k3:%d" % j for j in range(50)]) == 50


# ---- rewrites ------------------------------------------------------------------------


def test_bgrewriteaof_shrinks_and_keeps_data(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    for round_ in range(20):
        pipe = r.pipeline(transaction=False)
        for i in range(500):
            pipe.set("key:%d" % i, "%d-%d" % (round_, i))
        pipe.execute()
    r.rpush("list", *range(100))
    # The journal thread writes what the replies acknowledged within a
    # second (appendfsync everysec): the 10,000 SETs reach the file.
    wait_until(lambda: os.path.getsize(datadir.incr_files()[0]), lambda v: v > 300000,
               what="the SETs to reach the incremental file")
    want = digest(r)
    assert r.bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite_done(r)
    entries = datadir.manifest_entries()
    assert [(n, t) for n, _, t in entries] == [("appendonly.aof.2.base.rdb", "b"), ("appendonly.aof.2.incr.aof", "i")]
    assert datadir.files() == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof", MANIFEST]
    assert os.path.getsize(datadir.incr_files()[0]) < 1000
    assert info_field(r, "persistence", "aof_rewrites") == "1"
    assert info_field(r, "persistence", "aof_last_bgrewrite_status") == "ok"
    r.set("after", "x")
    want_after = digest(r)
    srv.stop()
    r2 = aof_server(new_server, datadir).client()
    assert digest(r2) == want_after != want


def test_bgrewriteaof_replies(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    # A data set big enough for the rewrite to last a moment.
    for i in range(20):
        populate(r, 20000, "p%d" % i, 100)
    c = srv.conn()
    assert c.cmd("BGREWRITEAOF") == "Background append only file rewriting started"
    second = c.cmd("BGREWRITEAOF")
    assert str(second) in ("ERR Background append only file rewriting already in progress",
                           "Background append only file rewriting started")
    wait_rewrite_done(r, 60)
    # Inside a transaction it is scheduled, and runs once EXEC is done.
    c.cmd("MULTI")
    assert c.cmd("BGREWRITEAOF") == "QUEUED"
    assert c.cmd("EXEC") == ["Background append only file rewriting scheduled"]
    wait_until(lambda: info_field(r, "persistence", "aof_rewrites"), lambda v: int(v) >= 2, timeout=60)
    wait_rewrite_done(r, 60)
    c.close()


def test_writes_during_rewrite_are_kept(new_server, datadir):
    """Writers keep going while the base is written: whatever was written
    before the cut is in the base, what came after in the new incr."""
    srv = aof_server(new_server, datadir, threads=4)
    r = srv.client()
    for i in range(10):
        populate(r, 20000, "p%d" % i, 50)
    stop = threading.Event()
    acked = [[-1] for _ in range(4)]
    ts = [threading.Thread(target=acked_writer, args=(srv.port, stop, acked[i], "w%d" % i, 4)) for i in range(4)]
    for t in ts:
        t.start()
    for _ in range(3):
        r.bgrewriteaof()
        wait_rewrite_done(r, 60)
    stop.set()
    for t in ts:
        t.join(10)
    want = digest(r)
    srv.stop()
    r2 = aof_server(new_server, datadir).client()
    assert digest(r2) == want
    assert len(datadir.incr_files()) == 1


def test_automatic_rewrite(new_server, datadir):
    srv = aof_server(new_server, datadir, "--auto-aof-rewrite-min-size", "64kb", "--auto-aof-rewrite-percentage",
                     "100")
    r = srv.client()
    for i in range(3000):
        r.set("k%d" % (i % 100), "x" * 50)
    wait_until(lambda: int(info_field(r, "persistence", "aof_rewrites")), lambda v: v >= 1, timeout=30)
    wait_rewrite_done(r)
    assert "Starting automatic rewriting of AOF on" in srv.log()
    assert int(info_field(r, "persistence", "aof_base_size")) > 0
    want = digest(r)
    srv.stop()
    assert digest(aof_server(new_server, datadir).client()) == want


def test_bgrewriteaof_with_aof_off_writes_a_base(new_server, datadir):
    srv = aof_server(new_server, datadir, appendonly="no")
    r = srv.client()
    r.set("a", "1")
    assert r.bgrewriteaof()
    wait_rewrite_done(r)
    assert datadir.manifest_entries() == [("appendonly.aof.1.base.rdb", 1, "b")]


# ---- turning it on and off ----------------------------------------------------------------


def test_config_set_appendonly_at_runtime(new_server, datadir):
    srv = aof_server(new_server, datadir, appendonly="no", threads=4)
    r = srv.client()
    fill_all_types(r, "before:")
    stop = threading.Event()
    acked = [[-1] for _ in range(3)]
    ts = [threading.Thread(target=acked_writer, args=(srv.port, stop, acked[i], "w%d" % i, 3)) for i in range(3)]
    for t in ts:
        t.start()
    assert r.config_set("appendonly", "yes")
    assert info_field(r, "persistence", "aof_enabled") == "1"
    wait_until(lambda: datadir.files(), lambda v: MANIFEST in v, timeout=30)
    wait_rewrite_done(r)
    time.sleep(0.3)
    stop.set()
    for t in ts:
        t.join(10)
    fill_all_types(r, "after:")
    assert [(t) for _, _, t in datadir.manifest_entries()] == ["b", "i"]
    assert not [f for f in datadir.files() if f.startswith("temp-")]
    want = digest(r)
    srv.stop()
    srv = aof_server(new_server, datadir)
    r = srv.client()
    assert digest(r) == want
    # Off: what follows is not written.
    r.config_set("appendonly", "no")
    assert info_field(r, "persistence", "aof_enabled") == "0"
    r.set("not-in-aof", "1")
    time.sleep(0.3)
    srv.stop()
    srv = aof_server(new_server, datadir)
    r = srv.client()
    assert r.get("not-in-aof") is None
    assert digest(r) == want


def test_on_off_on(new_server, datadir):
    srv = aof_server(new_server, datadir, appendonly="no")
    r = srv.client()
    for i in range(3):
        r.config_set("appendonly", "yes")
        r.set("k%d" % i, i)
        wait_rewrite_done(r)
        r.config_set("appendonly", "no")
        wait_until(lambda: info_field(r, "persistence", "aof_enabled"), lambda v: v == "0")
    r.config_set("appendonly", "yes")
    wait_rewrite_done(r)
    r.set("last", 1)
    want = digest(r)
    values = dump_values(srv.port)
    srv.stop()
    r2 = aof_server(new_server, datadir).client()
    assert dump_values(r2.connection_pool.connection_kwargs["port"]) == values
    assert digest(r2) == want


def test_shutdown_while_turning_on_keeps_the_data(new_server, datadir):
    """SIGTERM right after CONFIG SET appendonly yes: the first base is
    written before the server exits (Redis refuses to exit instead)."""
    srv = aof_server(new_server, datadir, appendonly="no")
    r = srv.client()
    populate(r, 50000, "k", 20)
    r.config_set("appendonly", "yes")
    r.set("last", "1")
    want = digest(r)
    srv.stop()
    r2 = aof_server(new_server, datadir).client()
    assert digest(r2) == want


# ---- DEBUG JOURNAL beside the AOF ---------------------------------------------------------------


def test_debug_journal_beside_the_aof(new_server, datadir):
    srv = aof_server(new_server, datadir)
    r = srv.client()
    r.set("before", "1")
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    r.set("x", "1")
    r.rpush("y", "1")
    cmds = [c for c in parse_commands(r.execute_command("DEBUG", "JOURNAL", "READ")) if c[0].upper() != b"SELECT"]
    assert [[c[0].upper()] + c[1:] for c in cmds] == [[b"SET", b"x", b"1"], [b"RPUSH", b"y", b"1"]]
    r.execute_command("DEBUG", "JOURNAL", "STOP")
    r.set("z", "1")
    srv.stop()
    r2 = aof_server(new_server, datadir).client()
    assert r2.mget("before", "x", "z") == [b"1", b"1", b"1"]
    assert r2.lrange("y", 0, -1) == [b"1"]


# ---- write errors ------------------------------------------------------------------------------


def test_write_error_refuses_writes_until_it_clears(new_server, datadir):
    """The AOF cannot grow (a file size limit stands in for a full disk):
    INFO says err, writes get -MISCONF, reads work; once it can grow again
    writes succeed and nothing acknowledged is lost."""
    srv = aof_server(new_server, datadir, "--appendfsync", "everysec")
    r = srv.client()
    r.set("ok", "1")
    wait_until(lambda: os.path.getsize(datadir.incr_files()[0]), lambda v: v > 0)
    size = os.path.getsize(datadir.incr_files()[0])
    resource.prlimit(srv.proc.pid, resource.RLIMIT_FSIZE, (size + 10, resource.RLIM_INFINITY))
    try:
        r.set("big", "x" * 1000)
        wait_until(lambda: info_field(r, "persistence", "aof_last_write_status"), lambda v: v == "err")
        with pytest.raises(redis.ResponseError, match="MISCONF Errors writing to the AOF file"):
            r.set("refused", "1")
        assert r.get("ok") == b"1"
    finally:
        resource.prlimit(srv.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    wait_until(lambda: info_field(r, "persistence", "aof_last_write_status"), lambda v: v == "ok", timeout=15)
    assert "AOF write error looks solved, Redis can write again." in srv.log()
    r.set("again", "1")
    srv.stop()
    r2 = aof_server(new_server, datadir).client()
    assert r2.mget("ok", "big", "refused", "again") == [b"1", b"x" * 1000, None, b"1"]
