"""Robustness: the server survives hostile or broken clients.

Garbage bytes, absurd lengths, half-sent requests, thousands of idle
connections, clients that never read their replies and clients that send
oversized requests. Each test checks the exact reaction the offending
client gets (an error and a close, or a disconnect) and that the server
and its other clients go on working.
"""
import random
import resource
import socket
import time

import pytest


def raw_conn(srv, timeout=10):
    s = socket.create_connection((srv.host, srv.port), timeout=timeout)
    return s


def read_until_close(sock, limit=1 << 20, timeout=10):
    """All bytes until the peer closes; fails if it does not within timeout."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
        assert len(data) <= limit, "server kept sending"
    raise AssertionError("connection was not closed; got %r" % data[:200])


def assert_alive(srv):
    c = srv.client(socket_timeout=10)
    try:
        assert c.ping() is True
        c.set("robust:alive", "1")
        assert c.get("robust:alive") == b"1"
    finally:
        c.close()


def test_protocol_error_replies_then_closes(server, r):
    cases = [
        (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
        (b"*1\r\n+PING\r\n", b"-ERR Protocol error: expected '$', got '+'\r\n"),
        (b"*1\r\n$x\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
        (b'SET k "unterminated\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ]
    for req, want in cases:
        s = raw_conn(server)
        s.sendall(req)
        assert read_until_close(s) == want, req
        s.close()
    assert_alive(server)


def test_replies_before_a_protocol_error_are_sent(server, r):
    s = raw_conn(server)
    s.sendall(b"PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$-5\r\nPING\r\n")
    assert read_until_close(s) == b"+PONG\r\n+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"
    s.close()


def test_huge_bulk_length(server, r):
    # 2^32 is past proto-max-bulk-len (512mb): refused before any allocation.
    s = raw_conn(server)
    s.sendall(b"*1\r\n$4294967296\r\n")
    assert read_until_close(s) == b"-ERR Protocol error: invalid bulk length\r\n"
    s.close()
    s = raw_conn(server)
    s.sendall(b"*1\r\n$99999999999999999999999\r\n")
    assert read_until_close(s) == b"-ERR Protocol error: invalid bulk length\r\n"
    s.close()
    s = raw_conn(server)
    s.sendall(b"*9999999999\r\n")
    assert read_until_close(s) == b"-ERR Protocol error: invalid multibulk length\r\n"
    s.close()
    assert_alive(server)


def test_random_garbage(server, r):
    rnd = random.Random(1234)
    for i in range(60):
        s = raw_conn(server)
        n = rnd.choice([1, 10, 100, 1000, 20000])
        data = bytes(rnd.getrandbits(8) for _ in range(n))
        if i % 3 == 0:
            data = b"*" + data  # looks like a multibulk
        elif i % 3 == 1:
            data = b"*2\r\n$3\r\nGET\r\n" + data
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(10)
            while s.recv(65536):
                pass
        except OSError:
            pass  # closed by the server mid-send: fine
        s.close()
    assert_alive(server)


def test_half_sent_command_then_disconnect(server, r):
    r.set("half", "old")
    s = raw_conn(server)
    s.sendall(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$10\r\nabc")
    time.sleep(0.1)
    s.close()
    # A half-sent large bulk: the server has sized its buffer for it.
    s = raw_conn(server)
    s.sendall(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$50000000\r\n" + b"x" * 100000)
    time.sleep(0.1)
    s.close()
    # A half-sent inline command.
    s = raw_conn(server)
    s.sendall(b"SET half new")
    time.sleep(0.1)
    s.close()
    time.sleep(0.2)
    assert r.get("half") == b"old"
    assert_alive(server)


def test_reset_while_replies_pending(server, r):
    r.set("big", b"v" * 200000)
    for _ in range(5):
        s = raw_conn(server)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(b"GET big\r\n" * 200)
        time.sleep(0.05)
        s.close()  # RST with unsent replies queued
    assert_alive(server)


def test_ten_thousand_idle_connections(new_server):
    want = 10000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = want + 200
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip("RLIMIT_NOFILE hard limit %d is below %d" % (hard, need))
    new_soft = need if hard == resource.RLIM_INFINITY else hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, new_soft), hard))
    socks = []
    try:
        # The server inherits the raised limit.
        srv = new_server("--maxclients", "20000")
        for i in range(want):
            socks.append(socket.create_connection((srv.host, srv.port), timeout=30))
        # Idle connections cost the server nothing per request: it answers
        # new clients and some of the old ones promptly.
        t0 = time.time()
        assert_alive(srv)
        for s in random.Random(7).sample(socks, 50):
            s.sendall(b"PING\r\n")
            s.settimeout(10)
            assert s.recv(100) == b"+PONG\r\n"
        assert time.time() - t0 < 10
        c = srv.client()
        info = c.execute_command("INFO", "clients") if _has_info(c) else None
        if info is not None:
            assert int(info["connected_clients"]) >= want
        c.close()
    finally:
        for s in socks:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert_alive(srv)


def _has_info(c):
    try:
        return "connected_clients" in c.info("clients")
    except Exception:
        return False


VALUE_SIZE = 100 * 1024
REPLY_SIZE = len(b"$%d\r\n" % VALUE_SIZE) + VALUE_SIZE + 2


def slow_reader(srv, ngets):
    s = socket.create_connection((srv.host, srv.port), timeout=30)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * ngets)
    return s


def test_output_buffer_hard_limit_disconnects(new_server):
    srv = new_server("--client-output-buffer-limit", "normal 1mb 512kb 1")
    c = srv.client()
    assert c.config_get("client-output-buffer-limit")["client-output-buffer-limit"].startswith(
        "normal 1048576 524288 1 ")
    c.set("big", b"x" * VALUE_SIZE)
    s = slow_reader(srv, 1000)
    time.sleep(1)
    assert c.ping() is True  # other clients unaffected
    got = 0
    s.settimeout(15)
    while True:
        try:
            chunk = s.recv(1 << 20)
        except ConnectionResetError:
            break
        if not chunk:
            break
        got += len(chunk)
    # Disconnected long before the 100 MB of replies it asked for.
    assert got < 20 * REPLY_SIZE, got
    s.close()
    assert c.get("big") == b"x" * VALUE_SIZE
    c.close()
    assert_alive(srv)


def test_output_buffer_soft_limit_disconnects(new_server):
    # Soft limit 512kb for 1 second; the hard limit is far away. A reader
    # that stays above the soft limit is closed by the cron after ~1 s.
    srv = new_server("--client-output-buffer-limit", "normal 100mb 512kb 1")
    c = srv.client()
    c.set("big", b"x" * VALUE_SIZE)
    s = slow_reader(srv, 200)
    time.sleep(3)
    got = 0
    s.settimeout(15)
    while True:
        try:
            chunk = s.recv(1 << 20)
        except ConnectionResetError:
            break
        if not chunk:
            break
        got += len(chunk)
    assert got < 200 * REPLY_SIZE, got
    s.close()
    assert c.ping() is True
    c.close()


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_slow_reader_without_limit_keeps_memory_bounded(new_server):
    srv = new_server()  # normal 0 0 0: no limit, only backpressure
    c = srv.client()
    c.set("big", b"x" * VALUE_SIZE)
    before = rss_bytes(srv.proc.pid)
    ngets = 2000  # 200 MB of replies if the server buffered them all
    s = slow_reader(srv, ngets)
    time.sleep(1.5)
    grown = rss_bytes(srv.proc.pid) - before
    # The server stopped reading past ~1 MB of unsent output.
    assert grown < 64 * 1024 * 1024, grown
    t0 = time.time()
    for _ in range(20):
        assert c.ping() is True
        assert c.get("big") == b"x" * VALUE_SIZE
    assert time.time() - t0 < 5
    # When the reader finally reads, every reply arrives, in full.
    total = ngets * REPLY_SIZE
    got = 0
    s.settimeout(30)
    while got < total:
        chunk = s.recv(1 << 20)
        assert chunk, "closed after %d of %d bytes" % (got, total)
        got += len(chunk)
    assert got == total
    s.sendall(b"PING\r\n")
    assert s.recv(100) == b"+PONG\r\n"
    s.close()
    c.close()


def test_query_buffer_limit(new_server):
    srv = new_server("--client-query-buffer-limit", "1mb")
    c = srv.client()
    s = raw_conn(srv)
    payload = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (2 << 20) + b"y" * (2 << 20) + b"\r\n"
    try:
        s.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass
    read_until_close(s, limit=1000)
    s.close()
    assert c.exists("k") == 0
    # Under the limit is fine.
    c.set("k", b"z" * (512 * 1024))
    assert len(c.get("k")) == 512 * 1024
    # Many small pipelined commands never count as one big request.
    s = raw_conn(srv)
    s.sendall(b"*1\r\n$4\r\nPING\r\n" * 100000)
    want = b"+PONG\r\n" * 100000
    got = b""
    s.settimeout(20)
    while len(got) < len(want):
        chunk = s.recv(1 << 20)
        assert chunk
        got += chunk
    assert got == want
    s.close()
    c.close()
    assert_alive(srv)
