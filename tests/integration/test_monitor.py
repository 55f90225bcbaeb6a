"""MONITOR: Redis's line format, what is shown and what is not, secrets
redacted, a monitor's own restrictions, ordering over pipelines and
threads, and the output-buffer limit that bounds a slow monitor."""
import re
import socket
import threading
import time

from resp import Error, Map, RespConn, encode

LINE = re.compile(rb"^\+(\d{10})\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$")


def start_monitor(srv, unix=False):
    m = RespConn(unix=srv.unix) if unix else RespConn(srv.host, srv.port)
    assert m.cmd("MONITOR") == "OK"
    return m


def read_lines(m, n, timeout=10):
    """n feed lines as (db, addr, args-text)."""
    out = []
    m.sock.settimeout(timeout)
    while len(out) < n:
        raw = m.raw()
        assert raw.endswith(b"\r\n"), raw
        mt = LINE.match(raw[:-2])
        assert mt, raw
        assert abs(int(mt.group(1)) - time.time()) < 10
        out.append((int(mt.group(3)), mt.group(4).decode(), mt.group(5)))
    return out


def nothing_more(m, wait=0.2):
    """No further feed line arrives within `wait` seconds."""
    if m.buf:
        return False
    m.sock.settimeout(wait)
    try:
        m.sock.recv(65536)
    except socket.timeout:
        return True
    finally:
        m.sock.settimeout(10)
    return False


def addr_of(c):
    return "%s:%d" % c.sock.getsockname()


def test_format_and_quoting(new_server):
    srv = new_server()
    m = start_monitor(srv)
    c = srv.conn()
    assert c.cmd("SET", "k", "v") == "OK"
    assert c.cmd("set", b"we\"ird\\", b"a\nb\r\t\x07\x08\x00\xff ~") == "OK"
    assert c.cmd("SELECT", "5") == "OK"
    assert c.cmd("GET", "k") is None
    got = read_lines(m, 4)
    a = addr_of(c)
    assert got == [
        (0, a, b'"SET" "k" "v"'),
        (0, a, b'"set" "we\\"ird\\\\" "a\\nb\\r\\t\\a\\b\\x00\\xff ~"'),
        (5, a, b'"SELECT" "5"'),
        (5, a, b'"GET" "k"'),
    ]
    assert nothing_more(m)
    c.close()
    m.close()


def test_unix_socket_address(new_server):
    srv = new_server()
    m = start_monitor(srv)
    u = RespConn(unix=srv.unix)
    assert u.cmd("PING") == "PONG"
    assert read_lines(m, 1) == [(0, "unix:" + srv.unix, b'"PING"')]
    u.close()
    m.close()


def test_admin_commands_and_monitor_itself_hidden(new_server):
    srv = new_server("--enable-debug-command", "yes")
    m = start_monitor(srv)
    c = srv.conn()
    c.cmd("CONFIG", "GET", "port")
    c.cmd("DEBUG", "SLEEP", "0")
    c.cmd("SLOWLOG", "LEN")
    c.cmd("CLIENT", "LIST")
    c.cmd("LATENCY", "LATEST")
    c.cmd("CLIENT", "ID")  # not an admin subcommand: shown
    c.cmd("NOSUCHCOMMAND")  # rejected before running: not shown
    c.cmd("GET")  # wrong arity: not shown
    m2 = start_monitor(srv)  # MONITOR is admin: not shown
    c.cmd("ECHO", "last")
    got = read_lines(m, 2)
    assert [g[2] for g in got] == [b'"CLIENT" "ID"', b'"ECHO" "last"']
    assert [g[2] for g in read_lines(m2, 1)] == [b'"ECHO" "last"']
    assert nothing_more(m)
    c.close()
    m.close()
    m2.close()


def test_auth_and_hello_redacted(new_server):
    srv = new_server("--requirepass", "sekret")
    m = RespConn(srv.host, srv.port)
    assert m.cmd("AUTH", "sekret") == "OK"
    assert m.cmd("MONITOR") == "OK"
    c = srv.conn()
    assert c.cmd("AUTH", "bad").startswith("WRONGPASS")
    assert c.cmd("AUTH", "sekret") == "OK"
    assert c.cmd("AUTH", "default", "sekret") == "OK"
    assert isinstance(c.cmd("HELLO", "3", "SETNAME", "x", "AUTH", "default", "sekret"), Map)
    # Too many arguments: a syntax error, and nothing was read as a secret.
    assert c.cmd("AUTH", "a", "b", "c") == Error("ERR syntax error")
    got = [g[2] for g in read_lines(m, 5)]
    assert got == [
        b'"AUTH" "(redacted)"',
        b'"AUTH" "(redacted)"',
        b'"AUTH" "(redacted)" "(redacted)"',
        b'"HELLO" "3" "SETNAME" "x" "AUTH" "(redacted)" "(redacted)"',
        b'"AUTH" "a" "b" "c"',
    ]
    c.close()
    m.close()


def test_monitor_connection_rules(new_server):
    srv = new_server()
    m = start_monitor(srv)
    # Keyspace commands are refused (a monitor is a replica to Redis).
    assert m.cmd("GET", "x") == Error("ERR Replica can't interact with the keyspace")
    assert m.cmd("SET", "x", "1") == Error("ERR Replica can't interact with the keyspace")
    # Others run, and show in the feed like anyone's.
    assert m.cmd("PING") == "PONG"
    assert read_lines(m, 1)[0][2] == b'"PING"'
    # CLIENT LIST shows the monitor with flag O, and its last command.
    c = srv.conn()
    line = [x for x in c.cmd("CLIENT", "LIST").split(b"\n") if b"cmd=ping" in x]
    assert len(line) == 1 and b" flags=O " in line[0]
    c.close()
    # A second MONITOR answers nothing at all.
    m.send(encode("MONITOR") + encode("ECHO", "after"))
    assert m.read() == b"after"
    assert read_lines(m, 1)[0][2] == b'"ECHO" "after"'
    # RESET ends monitoring.
    assert m.cmd("RESET") == "RESET"
    c = srv.conn()
    c.cmd("SET", "after", "1")
    assert m.cmd("GET", "after") == b"1"
    c.close()
    m.close()


def test_pipeline_order(new_server):
    srv = new_server()
    m = start_monitor(srv)
    c = srv.conn()
    n = 2000
    c.send(b"".join(encode("SET", "k", i) for i in range(n)))
    for _ in range(n):
        assert c.read() == "OK"
    got = read_lines(m, n)
    assert [g[2] for g in got] == [b'"SET" "k" "%d"' % i for i in range(n)]
    c.close()
    m.close()


def test_many_threads_many_monitors(new_server):
    srv = new_server(threads=4)
    monitors = [start_monitor(srv) for _ in range(3)]
    n_clients, per = 8, 300
    addrs = {}

    def work(i):
        c = RespConn(srv.host, srv.port)
        addrs[i] = addr_of(c)
        payload = b"".join(encode("RPUSH", "l%d" % i, j) for j in range(per))
        c.send(payload)
        for _ in range(per):
            c.read()
        c.close()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(n_clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for m in monitors:
        got = read_lines(m, n_clients * per)
        for i in range(n_clients):
            mine = [g[2] for g in got if g[1] == addrs[i]]
            assert mine == [b'"RPUSH" "l%d" "%d"' % (i, j) for j in range(per)]
        assert nothing_more(m)
        m.close()


def test_resp3_monitor(new_server):
    srv = new_server()
    m = RespConn(srv.host, srv.port)
    assert isinstance(m.cmd("HELLO", "3"), Map)
    assert m.cmd("MONITOR") == "OK"
    c = srv.conn()
    c.cmd("INCR", "n")
    raw = m.raw()
    assert re.match(rb'^\+\d+\.\d{6} \[0 [0-9.:]+\] "INCR" "n"\r\n$', raw)
    c.close()
    m.close()


def test_blocking_command_shown_once(new_server):
    srv = new_server()
    m = start_monitor(srv)
    c = srv.conn()
    p = srv.conn()
    c.send(encode("BLPOP", "q", "0"))
    time.sleep(0.2)
    assert p.cmd("LPUSH", "q", "x") == 1
    assert c.read() == [b"q", b"x"]
    got = [g[2] for g in read_lines(m, 2)]
    assert got == [b'"BLPOP" "q" "0"', b'"LPUSH" "q" "x"']
    assert nothing_more(m)
    c.close()
    p.close()
    m.close()


def test_slow_monitor_disconnected(new_server):
    srv = new_server("--client-output-buffer-limit", "normal 256kb 0 0")
    m = socket.create_connection((srv.host, srv.port))
    m.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    m.sendall(encode("MONITOR"))
    time.sleep(0.1)
    c = srv.conn()
    big = b"x" * 100000
    # ~60 MB of feed the monitor never reads.
    for i in range(30):
        c.send(b"".join(encode("SET", "k", big) for _ in range(20)))
        for _ in range(20):
            assert c.read() == "OK"
    deadline = time.time() + 10
    closed = False
    while time.time() < deadline and not closed:
        stats = bytes(c.cmd("INFO", "stats")).decode()
        closed = "client_output_buffer_limit_disconnections:0\r\n" not in stats
        if not closed:
            time.sleep(0.1)
    assert closed
    # The monitor is gone; the server serves on.
    assert c.cmd("PING") == "PONG"
    clients = c.cmd("CLIENT", "LIST")
    assert clients.count(b"\n") == 1
    c.close()
    m.close()


def test_nobody_monitors_after_disconnect(new_server):
    srv = new_server()
    m = start_monitor(srv)
    m.close()
    c = srv.conn()
    for i in range(100):
        c.cmd("SET", "k", i)
    m2 = start_monitor(srv)
    c.cmd("SET", "k", "last")
    assert [g[2] for g in read_lines(m2, 1)] == [b'"SET" "k" "last"']
    c.close()
    m2.close()
