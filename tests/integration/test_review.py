"""Regression tests for connection-level bugs found by the foundation review.

Each test names the bug it pins down. Parser-only cases live in
tests/unit/test_review.c.
"""
import os
import socket
import subprocess
import tempfile
import threading
import time

import pytest


def raw(server):
    s = socket.create_connection((server.host, server.port))
    s.settimeout(10)
    return s


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        d = s.recv(min(1 << 20, n - len(buf)))
        if not d:
            break
        buf += d
    return buf


def test_backpressure_resumes_when_flush_drains_everything(server, r):
    # A pipeline whose replies pass the backpressure mark stops the client's
    # input. When the end-of-turn flush wrote every byte at once, no EPOLLOUT
    # came to resume it and the rest of the pipeline was never run.
    val = b"x" * 300000
    r.set("bp", val)
    s = raw(server)
    try:
        n = 10
        s.sendall(b"*2\r\n$3\r\nGET\r\n$2\r\nbp\r\n" * n + b"*1\r\n$4\r\nPING\r\n")
        one = b"$%d\r\n%s\r\n" % (len(val), val)
        got = read_exact(s, n * len(one) + 7)
        assert len(got) == n * len(one) + 7
        assert got == one * n + b"+PONG\r\n"
    finally:
        s.close()


def test_inline_quoted_args_survive_client_pause(server, r):
    # A request held back by CLIENT PAUSE is parsed again when the pause
    # ends; inline requests were unescaped twice and failed with
    # "unbalanced quotes".
    a, b = raw(server), raw(server)
    try:
        a.sendall(b"CLIENT PAUSE 300 WRITE\r\n")
        assert a.recv(100) == b"+OK\r\n"
        b.sendall(b'SET pq "hello world"\r\nSET pq2 "a\\\\x41"\r\nGET pq\r\n')
        want = b"+OK\r\n+OK\r\n$11\r\nhello world\r\n"
        assert read_exact(b, len(want)) == want
        assert r.get("pq2") == b"a\\x41"
    finally:
        a.sendall(b"CLIENT UNPAUSE\r\n")
        a.recv(100)
        a.close()
        b.close()


def test_not_listening_anywhere_exits(request):
    # "--port 0" without a unix socket: Redis logs "Configured to not listen
    # anywhere, exiting." and exits 1. HotKV read the freed socket path for
    # the check (heap-use-after-free) and then kept running with no listener.
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    binary = request.config.getoption("--server-bin")
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "server.log")
        p = subprocess.run([binary, "--port", "0", "--bind", "127.0.0.1", "--logfile", log],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=20)
        err = p.stderr.decode(errors="replace")
        assert "Sanitizer" not in err and "runtime error" not in err, err
        assert p.returncode == 1
        assert "Configured to not listen anywhere, exiting." in open(log).read()


def test_unknown_command_args_cut_at_128_bytes(server, conn):
    # Redis quotes arguments until their text reaches 128 bytes, each one
    # cut to what is left; HotKV cut each argument to 128 on its own and
    # went on for ~880 bytes.
    a, b = "a" * 200, "b" * 10
    assert conn.cmd("NOSUCHCMD", a, b) == "ERR unknown command 'NOSUCHCMD', with args beginning with: '%s' " % ("a" * 128)
    assert conn.cmd("NOSUCHCMD", "x" * 100, "y" * 100, "z") == ("ERR unknown command 'NOSUCHCMD', with args beginning with: '%s' '%s' "
                           % ("x" * 100, "y" * 25))


def test_concurrent_config_set_requirepass(new_server):
    # CONFIG SET requirepass on several workers at once: the "password set"
    # mirror was computed from the string without the config lock (a data
    # race, and a read of a string another thread was freeing). Meant for the
    # TSan/ASan builds; the final state is checked on every build.
    srv = new_server(threads=4)
    stop = time.time() + 1.5
    errors = []

    clients = [srv.client() for _ in range(6)]
    for c in clients:
        c.ping()  # connected (and so authenticated) before any password is set

    def hammer(k):
        try:
            c = clients[k]
            i = 0
            while time.time() < stop:
                c.config_set("requirepass", "" if (i + k) % 2 else "pw%d" % k)
                i += 1
            c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=hammer, args=(k,)) for k in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    c = clients[0]
    c.config_set("requirepass", "final")
    s = raw(srv)
    s.sendall(b"PING\r\n")
    assert s.recv(100).startswith(b"-NOAUTH")
    s.close()
    c.config_set("requirepass", "")
    s = raw(srv)
    s.sendall(b"PING\r\n")
    assert s.recv(100) == b"+PONG\r\n"
    s.close()


def used_memory(c):
    return int(c.info("memory")["used_memory"])


def test_deferred_replies_do_not_bypass_backpressure(new_server):
    # Every deferred aggregate header (KEYS, CONFIG GET, COMMAND ...) ends
    # the output block it would have appended to, so the next reply starts a
    # fresh 16 KB block: ~16 KB of memory per 11 bytes of "KEYS nomatch" +
    # "PING" output. Backpressure looked at unsent bytes only, so a client
    # that pipelines such commands and does not read made the server
    # allocate gigabytes before its input was stopped. The test stops
    # sending as soon as the server stops reading (send would block) or its
    # memory passes the bound.
    srv = new_server("--shards", "16", threads=1)  # KEYS visits every shard
    mon = srv.client()
    base = used_memory(mon)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((srv.host, srv.port))
    s.settimeout(2)
    batch = b"*2\r\n$4\r\nKEYS\r\n$7\r\nnomatch\r\n*1\r\n$4\r\nPING\r\n" * 5000
    peak = 0
    try:
        for _ in range(400):
            try:
                s.sendall(batch)
            except socket.timeout:
                break  # the server stopped reading: backpressure held
            peak = max(peak, used_memory(mon) - base)
            if peak > 256 * 1024 * 1024:
                break
        time.sleep(0.2)
        peak = max(peak, used_memory(mon) - base)
        assert peak < 256 * 1024 * 1024, "server grew by %d bytes" % peak
    finally:
        s.close()
    assert mon.ping()



def test_config_rewrite_escapes_control_characters(request):
    # CONFIG REWRITE quoted string settings but wrote a newline in the value
    # raw, so the rewritten file no longer loaded ("Unbalanced quotes").
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    from test_config import start_with_file
    from conftest import sanitizer_report
    binary = request.config.getoption("--server-bin")
    with tempfile.TemporaryDirectory(prefix="hotkv-rev-") as workdir:
        path = os.path.join(workdir, "hotkv.conf")
        with open(path, "w") as f:
            f.write("hz 10\n")
        pw = 'a\nb\r\t"\\\x01z'
        srv = start_with_file(binary, path, workdir)
        try:
            c = srv.conn()
            assert c.cmd("CONFIG", "SET", "requirepass", pw) == "OK"
            assert c.cmd("CONFIG", "REWRITE") == "OK"
            c.close()
            srv.stop()
            srv = start_with_file(binary, path, workdir)
            c = srv.conn()
            assert c.cmd("PING").startswith("NOAUTH")
            assert c.cmd("AUTH", pw) == "OK"
            c.close()
        finally:
            srv.stop()
            report = sanitizer_report(srv)
            assert not report, report
