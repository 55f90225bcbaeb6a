"""CONFIG GET / SET / RESETSTAT / REWRITE / HELP.

Settings changed on the shared server are put back by each test."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
from conftest import Server, free_port, sanitizer_report
from poll import wait_probe_gone
from resp import Error, Map

SYNTAX = Error("ERR syntax error")


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def failed(name, why):
    return Error("ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (name, why))


def unknown(name):
    return Error("ERR Unknown option or number of arguments for CONFIG SET - '%s'" % name)


def cget(conn, *patterns):
    reply = conn.cmd("CONFIG", "GET", *patterns)
    assert isinstance(reply, list) and len(reply) % 2 == 0
    return {reply[i].decode(): reply[i + 1].decode() for i in range(0, len(reply), 2)}


@pytest.fixture
def restore(conn):
    """Remember settings and put them back after the test."""
    saved = {}

    def keep(*names):
        for n in names:
            saved.update(cget(conn, n))

    yield keep
    for k, v in saved.items():
        assert conn.cmd("CONFIG", "SET", k, v) == "OK"


# ---- GET ------------------------------------------------------------------

def test_get_single_and_multiple(server, conn):
    assert cget(conn, "port") == {"port": str(server.port)}
    got = cget(conn, "port", "databases", "nosuchsetting")
    assert got == {"port": str(server.port), "databases": "16"}
    assert conn.cmd("CONFIG", "GET", "nosuchsetting") == []


def test_get_glob_and_case(server, conn):
    got = cget(conn, "max*")
    assert "maxclients" in got and "maxmemory" in got and "maxmemory-policy" in got
    assert all(k.startswith("max") for k in got)
    # Names are case-insensitive; a plain name is answered as it was asked.
    assert cget(conn, "PORT") == {"PORT": str(server.port)}
    assert cget(conn, "P?RT") == {"port": str(server.port)}
    # Overlapping patterns list a setting once.
    reply = conn.cmd("CONFIG", "GET", "port", "po*", "p?rt")
    assert len(reply) == 2


def test_get_everything(conn):
    got = cget(conn, "*")
    for name in ("bind", "port", "timeout", "tcp-keepalive", "maxclients", "databases", "hz", "save", "appendonly",
                 "loglevel", "protected-mode", "client-output-buffer-limit", "proto-max-bulk-len", "maxmemory",
                 "maxmemory-policy"):
        assert name in got, name


def test_get_values_clients_read(conn):
    # redis-benchmark and many clients read these at start-up.
    assert cget(conn, "save") == {"save": ""}
    assert cget(conn, "appendonly") == {"appendonly": "no"}
    assert cget(conn, "maxmemory", "maxmemory-policy") == {"maxmemory": "0", "maxmemory-policy": "noeviction"}
    assert cget(conn, "cluster-enabled") == {"cluster-enabled": "no"}


def test_get_resp3_map(server, conn3):
    reply = conn3.cmd("CONFIG", "GET", "port")
    assert isinstance(reply, Map)
    assert reply == [(b"port", str(server.port).encode())]
    assert conn3.cmd_raw("CONFIG", "GET", "nosuch") == b"%0\r\n"


def test_get_arity(conn):
    assert conn.cmd("CONFIG", "GET") == arity("config|get")
    assert conn.cmd("CONFIG") == arity("config")
    assert conn.cmd("CONFIG", "NOSUCH") == Error("ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.")


# ---- SET ------------------------------------------------------------------

def test_set_round_trip(conn, restore):
    restore("hz", "timeout", "maxclients", "loglevel", "protected-mode", "proto-max-bulk-len")
    assert conn.cmd("CONFIG", "SET", "hz", "20") == "OK"
    assert cget(conn, "hz") == {"hz": "20"}
    assert conn.cmd("CONFIG", "SET", "TIMEOUT", "300") == "OK"
    assert cget(conn, "timeout") == {"timeout": "300"}
    assert conn.cmd("CONFIG", "SET", "loglevel", "WARNING") == "OK"
    assert cget(conn, "loglevel") == {"loglevel": "warning"}
    assert conn.cmd("CONFIG", "SET", "protected-mode", "no") == "OK"
    assert cget(conn, "protected-mode") == {"protected-mode": "no"}
    # Memory units.
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "2mb") == "OK"
    assert cget(conn, "proto-max-bulk-len") == {"proto-max-bulk-len": str(2 * 1024 * 1024)}


def test_set_several_pairs(conn, restore):
    restore("hz", "maxclients")
    assert conn.cmd("CONFIG", "SET", "hz", "15", "maxclients", "999") == "OK"
    assert cget(conn, "hz", "maxclients") == {"hz": "15", "maxclients": "999"}


def test_set_is_all_or_nothing(conn, restore):
    restore("hz", "maxclients", "timeout")
    before = cget(conn, "hz", "maxclients", "timeout")
    # The third value is bad: the first two are rolled back.
    assert conn.cmd("CONFIG", "SET", "hz", "33", "timeout", "77", "maxclients", "abc") == \
        failed("maxclients", "argument couldn't be parsed into an integer")
    assert cget(conn, "hz", "maxclients", "timeout") == before


def test_set_errors(server, conn, restore):
    restore("hz")
    assert conn.cmd("CONFIG", "SET", "io-threads", "1") == failed("io-threads", "can't set immutable config")
    assert conn.cmd("CONFIG", "SET", "databases", "4") == failed("databases", "can't set immutable config")
    assert conn.cmd("CONFIG", "SET", "nosuch", "1") == unknown("nosuch")
    # An unknown name wins over other problems, wherever it is.
    # The first bad name in argument order decides the error.
    assert conn.cmd("CONFIG", "SET", "hz", "11", "nosuch", "1", "databases", "5") == unknown("nosuch")
    assert conn.cmd("CONFIG", "SET", "hz", "11", "databases", "5", "nosuch", "1") == \
        failed("databases", "can't set immutable config")
    assert conn.cmd("CONFIG", "SET", "hz", "11", "hz", "12") == failed("hz", "duplicate parameter")
    assert conn.cmd("CONFIG", "SET", "maxclients", "abc") == \
        failed("maxclients", "argument couldn't be parsed into an integer")
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "10") == \
        failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")
    assert conn.cmd("CONFIG", "SET", "protected-mode", "maybe") == \
        failed("protected-mode", "argument must be 'yes' or 'no'")
    assert conn.cmd("CONFIG", "SET", "loglevel", "loud") == \
        failed("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning")
    assert conn.cmd("CONFIG", "SET", "client-output-buffer-limit", "foo") == \
        failed("client-output-buffer-limit", "Wrong number of arguments in buffer limit configuration.")
    # Odd number of arguments after the first pair.
    assert conn.cmd("CONFIG", "SET", "hz", "11", "maxclients") == SYNTAX
    assert conn.cmd("CONFIG", "SET", "hz") == arity("config|set")
    assert cget(conn, "hz")["hz"] != "11"


def test_memory_settings_take_effect(server, conn):
    """maxmemory and its policy are acted on (tests/integration/test_eviction.py):
    what CONFIG SET stores, INFO reports."""
    try:
        assert conn.cmd("CONFIG", "SET", "maxmemory", "100mb", "maxmemory-policy", "allkeys-lru") == "OK"
        assert cget(conn, "maxmemory", "maxmemory-policy") == {"maxmemory": "104857600",
                                                                "maxmemory-policy": "allkeys-lru"}
        mem = dict(l.split(":", 1) for l in conn.cmd("INFO", "memory").decode().splitlines() if ":" in l)
        assert (mem["maxmemory"], mem["maxmemory_human"], mem["maxmemory_policy"]) == ("104857600", "100.00M",
                                                                                       "allkeys-lru")
    finally:
        assert conn.cmd("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction") == "OK"
    assert cget(conn, "maxmemory", "maxmemory-policy") == {"maxmemory": "0", "maxmemory-policy": "noeviction"}


def test_set_takes_effect(new_server):
    srv = new_server()
    c = srv.conn()
    # The fixture's readiness probe counts until its close is processed.
    wait_probe_gone(c)
    assert c.cmd("CONFIG", "SET", "maxclients", "2") == "OK"
    other = srv.conn()  # second connection: allowed
    assert other.cmd("PING") == "PONG"
    third = socket.create_connection((srv.host, srv.port), timeout=5)
    assert third.recv(100) == b"-ERR max number of clients reached\r\n"
    third.close()
    other.close()
    c.close()


# ---- RESETSTAT, HELP --------------------------------------------------------

def test_resetstat_arity_and_reply(new_server):
    srv = new_server()
    c = srv.conn()
    assert c.cmd("CONFIG", "RESETSTAT", "x") == arity("config|resetstat")
    c.cmd("GET", "x")
    # Pipelined behind RESETSTAT: runs after the reset is complete.
    c.send(b"*2\r\n$6\r\nCONFIG\r\n$9\r\nRESETSTAT\r\n*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
    assert c.read() == "OK"
    stats = c.read().decode()
    assert "\r\nkeyspace_misses:0\r\n" in stats
    assert "\r\ntotal_error_replies:0\r\n" in stats
    c.close()


def test_resetstat_with_concurrent_clients(new_server):
    """Every worker zeroes its own counters while others keep working."""
    srv = new_server(threads=4)
    conns = [srv.conn() for _ in range(8)]
    for i, c in enumerate(conns):
        c.send(b"*2\r\n$3\r\nGET\r\n$4\r\nmiss\r\n" * 100)
    admin = srv.conn()
    assert admin.cmd("CONFIG", "RESETSTAT") == "OK"
    for c in conns:
        for _ in range(100):
            assert c.read() is None
    misses = int(admin.cmd("INFO", "stats").decode().split("keyspace_misses:")[1].split("\r\n")[0])
    assert 0 <= misses <= 800
    for c in conns + [admin]:
        c.close()


def test_help(conn):
    lines = conn.cmd("CONFIG", "HELP")
    assert lines[0] == "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "RESETSTAT" in lines and "REWRITE" in lines
    assert lines[-2:] == ["HELP", "    Prints this help."]


# ---- REWRITE ----------------------------------------------------------------

def test_rewrite_without_config_file(server, conn):
    if not server.proc:
        pytest.skip("depends on how the external server was started")
    assert conn.cmd("CONFIG", "REWRITE") == Error("ERR The server is running without a config file")


def start_with_file(binary, path, workdir):
    port = free_port()
    log = os.path.join(workdir, "server.log")
    args = [os.path.abspath(binary), os.path.abspath(path), "--port", str(port), "--bind", "127.0.0.1", "--threads",
            "2", "--logfile", log]
    # Run in the test's directory: a save at shutdown lands there.
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(log + ".err", "w"), cwd=workdir)
    srv = Server("127.0.0.1", port, proc, None, None, log, args)
    deadline = time.time() + 30
    while time.time() < deadline:
        assert proc.poll() is None, open(log + ".err").read()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return srv
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


CONF = """# HotKV test configuration
# a comment that must survive

hz 15
   # indented comment
timeout 0
loglevel notice
requirepass ""
hz 16
"""


def test_rewrite_preserves_comments(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    workdir = tempfile.mkdtemp(prefix="hotkv-conf-")
    path = os.path.join(workdir, "hotkv.conf")
    with open(path, "w") as f:
        f.write(CONF)
    binary = request.config.getoption("--server-bin")
    srv = start_with_file(binary, path, workdir)
    try:
        c = srv.conn()
        assert cget(c, "hz") == {"hz": "16"}  # the last line wins when loading
        info = c.cmd("INFO", "server").decode()
        assert "\r\nconfig_file:%s\r\n" % os.path.realpath(path) in info
        assert c.cmd("CONFIG", "SET", "hz", "20", "maxclients", "321", "timeout", "5") == "OK"
        assert c.cmd("CONFIG", "REWRITE") == "OK"
        text = open(path).read()
        lines = text.split("\n")
        # Comments and blank lines stay where they were; known settings are
        # rewritten in place; the duplicate hz line is dropped.
        assert lines[:4] == ["# HotKV test configuration", "# a comment that must survive", "", "hz 20"]
        assert lines[4] == "   # indented comment"
        assert lines[5] == "timeout 5"
        assert lines[6] == "loglevel notice"
        assert lines[7] == 'requirepass ""'
        assert text.count("\nhz ") == 1
        # Changed settings that were not in the file are appended.
        tail = lines[lines.index("# Generated by CONFIG REWRITE"):]
        assert "maxclients 321" in tail
        c.close()
        srv.stop()
        # The rewritten file loads and gives the same values.
        srv = start_with_file(binary, path, workdir)
        c = srv.conn()
        assert cget(c, "hz", "maxclients", "timeout") == {"hz": "20", "maxclients": "321", "timeout": "5"}
        c.close()
    finally:
        srv.stop()
        report = sanitizer_report(srv)
        shutil.rmtree(workdir, ignore_errors=True)
        assert not report, report


def test_redis_benchmark_reads_config_without_warning(server):
    exe = shutil.which("redis-benchmark")
    if not exe:
        pytest.skip("redis-benchmark not installed")
    out = subprocess.run([exe, "-h", server.host, "-p", str(server.port), "-n", "200", "-c", "2", "-t", "ping", "-q"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    text = out.stdout + out.stderr
    assert "WARN" not in text.upper() and "ERROR" not in text.upper(), text
    assert "PING" in text
