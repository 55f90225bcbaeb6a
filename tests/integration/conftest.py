"""Fixtures for the black-box tests.

By default each test session starts its own hotkv-server (--server-bin) on
a free port. With --host/--port the same tests run against a server that is
already running (any Redis-like server), so they double as a compatibility
check; tests that must start servers with special settings are skipped then.

Fixtures:
  server        the session's server (host, port, unix socket path)
  r             redis.Redis (RESP2, bytes) on db 0, flushed before the test
  conn          RespConn speaking RESP2, typed replies
  conn3         RespConn after HELLO 3
  new_server    factory: new_server("--requirepass", "x") starts a private
                server with extra options and returns its handle
"""
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest
import redis

sys.path.insert(0, os.path.dirname(__file__))
from resp import RespConn  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# TSan's deadlock detector tracks at most 64 mutexes held at once and hangs
# the thread past that (a CHECK failure); FLUSHALL, KEYS and friends lock
# every shard in ascending order. Lock order is checked by design instead.
# Set here so every server a test starts inherits it.
os.environ.setdefault("TSAN_OPTIONS", "detect_deadlocks=0")


def pytest_addoption(parser):
    parser.addoption("--server-bin", default=os.path.join(ROOT, "build", "hotkv-server"))
    parser.addoption("--host", default=None, help="test an already running server")
    parser.addoption("--port", type=int, default=6379)
    parser.addoption("--server-threads", type=int, default=2)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@contextlib.contextmanager
def real_redis(*extra):
    """A stock redis-server (Debian's, the reference HotKV is compared with)
    on a free port, without persistence; yields its port, or None when it
    is not installed. Fails when it does not start."""
    exe = shutil.which("redis-server")
    if not exe:
        yield None
        return
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis-ref-")
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", workdir, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(20)
        shutil.rmtree(workdir, ignore_errors=True)


class Server:
    def __init__(self, host, port, proc=None, unix=None, workdir=None, logfile=None, args=()):
        self.host, self.port, self.proc, self.unix = host, port, proc, unix
        self.workdir, self.logfile, self.args = workdir, logfile, list(args)
        self.died_of = None  # exit status if the server exited before stop()
        self.stopped = False
        self.stderr_text = ""  # stderr as read by stop(), before the work dir goes

    def client(self, **kw):
        kw.setdefault("socket_timeout", 20)
        return redis.Redis(host=self.host, port=self.port, **kw)

    def conn(self, **kw):
        return RespConn(self.host, self.port, **kw)

    def alive(self):
        return self.proc is None or self.proc.poll() is None

    def log(self):
        if self.logfile and os.path.exists(self.logfile):
            with open(self.logfile, errors="replace") as f:
                return f.read()
        return ""

    def stop(self):
        # A server that is already gone when the test ends died on its own;
        # a signal (SIGSEGV, SIGABRT...) there is a crash to report.
        if self.proc and not self.stopped and self.proc.poll() is not None:
            self.died_of = self.proc.returncode
        self.stopped = True
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # The server's stderr lives in the work dir: keep its text for
        # sanitizer_report, which runs after this.
        err = (self.logfile or "") + ".err"
        if os.path.exists(err):
            with open(err, errors="replace") as f:
                self.stderr_text = f.read()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def start_server(binary, *extra, threads=2, wait=True):
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="hotkv-test-")
    unix = os.path.join(workdir, "hotkv.sock")
    logfile = os.path.join(workdir, "server.log")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--threads", str(threads),
            "--unixsocket", unix, "--logfile", logfile, "--dir", workdir, "--save", ""] + list(extra)
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(logfile + ".err", "w"), env=env)
    srv = Server("127.0.0.1", port, proc, unix, workdir, logfile, args)
    if wait:
        deadline = time.time() + 30
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("server exited: %s" % open(logfile + ".err").read())
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("server did not start")
    return srv


def sanitizer_report(srv):
    """Text of any sanitizer report the server wrote to stderr, or of a
    crash (death by a signal before the test stopped it)."""
    path = (srv.logfile or "") + ".err"
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            text = f.read()
    else:
        text = getattr(srv, "stderr_text", "")
    died = getattr(srv, "died_of", None)
    if died is not None and died < 0:
        return "server died from signal %d before the test stopped it\n%s" % (-died, text)
    marks = ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "runtime error:", "ERROR: LeakSanitizer")
    return text if any(m in text for m in marks) else ""


def stop_checked(srv):
    """Stop a server a test started and fail on any sanitizer report or
    crash it left."""
    srv.stop()
    report = sanitizer_report(srv)
    assert not report, report


@pytest.fixture(scope="module")
def ref_port(request):
    """A module's reference redis-server (plain settings); a module that
    needs other settings defines its own."""
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server not installed")
        yield port


@pytest.fixture(scope="session")
def server(request):
    host = request.config.getoption("--host")
    if host:
        yield Server(host, request.config.getoption("--port"))
        return
    srv = start_server(request.config.getoption("--server-bin"),
                       threads=request.config.getoption("--server-threads"))
    yield srv
    srv.stop()
    report = sanitizer_report(srv)
    assert not report, report


@pytest.fixture
def external(request):
    return request.config.getoption("--host") is not None


@pytest.fixture
def new_server(request):
    """Start private servers with extra options; skipped on --host runs."""
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    started = []

    def make(*extra, threads=2):
        srv = start_server(request.config.getoption("--server-bin"), *extra, threads=threads)
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()
    for srv in started:
        report = sanitizer_report(srv)
        assert not report, report


@pytest.fixture
def r(server):
    c = server.client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def conn(server, r):
    c = server.conn()
    yield c
    c.close()


@pytest.fixture
def conn3(server, r):
    c = server.conn()
    hello = c.cmd("HELLO", "3")
    assert not isinstance(hello, Exception)
    yield c
    c.close()


@pytest.fixture(scope="module")
def redis_ref():
    """A real Redis on a free port, or None when not installed."""
    with real_redis() as port:
        yield port


def ref_conn(port, resp3=False):
    c = RespConn("127.0.0.1", port)
    if resp3:
        c.cmd("HELLO", "3")
    return c
