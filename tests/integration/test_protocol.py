"""The wire protocol and connection-level behaviour: inline commands,
pipelining, every protocol error (reply, then close; other clients go on),
unauthenticated limits, oversized and half-sent requests, maxclients, idle
timeout, RESP3 reply shapes, the unix socket and protected mode."""
import os
import random
import shutil
import socket
import subprocess
import time

import pytest
from poll import wait_probe_gone
from resp import Error, Map, RespConn, Simple, Verbatim, encode


def raw_exchange(server, data, quiet=None, expect_len=0):
    """Send data on a fresh connection; return (bytes received, closed).

    By default reads until the server closes (10 s at most: a loaded
    sanitizer build may take a while to answer). With quiet=t, once
    expect_len bytes have come, a silence of t seconds ends the read with
    the connection still open."""
    s = socket.create_connection((server.host, server.port), timeout=5)
    try:
        s.sendall(data)
        out = b""
        deadline = time.time() + 10
        while time.time() < deadline:
            waiting_for_quiet = quiet is not None and len(out) >= expect_len
            s.settimeout(quiet if waiting_for_quiet else max(0.01, deadline - time.time()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                if waiting_for_quiet:
                    return out, False
                continue
            except ConnectionResetError:
                # Closed with our bytes unread: a reset after the reply.
                return out, True
            if not chunk:
                return out, True
            out += chunk
        return out, False
    finally:
        s.close()


def assert_alive(server):
    c = server.conn()
    try:
        assert c.cmd("PING") == Simple("PONG")
    finally:
        c.close()


# ---- inline commands ------------------------------------------------------------

def test_inline_basic(conn):
    conn.send(b"PING\r\n")
    assert conn.raw() == b"+PONG\r\n"
    conn.send(b"ping\n")
    assert conn.raw() == b"+PONG\r\n"
    conn.send(b"  ECHO   \t spaced  \r\n")
    assert conn.read() == b"spaced"
    # Empty lines are skipped.
    conn.send(b"\r\n\n\r\nPING\r\n")
    assert conn.read() == Simple("PONG")


def test_inline_quotes(conn):
    conn.send(b'set k "a b"\r\nget k\r\n')
    assert conn.read() == Simple("OK")
    assert conn.read() == b"a b"
    conn.send(b"set k 'single \\' quote'\r\nget k\r\n")
    assert conn.read() == Simple("OK")
    assert conn.read() == b"single ' quote"
    conn.send(b'set k "\\x41\\x00\\n\\t\\"z"\r\nget k\r\n')
    assert conn.read() == Simple("OK")
    assert conn.read() == b'A\x00\n\t"z'
    conn.send(b'set k ""\r\nstrlen k\r\n')
    assert conn.read() == Simple("OK")
    assert conn.read() == 0


@pytest.mark.parametrize("line", [b'set k "a b\r\n', b'set k "a"b\r\n', b"set k 'abc\r\n", b"set k 'a'b\r\n"])
def test_inline_unbalanced_quotes(server, line):
    out, closed = raw_exchange(server, line + b"PING\r\n")
    assert out == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    assert closed
    assert_alive(server)


def test_inline_too_big(server):
    out, closed = raw_exchange(server, b"a" * 70000)
    assert out == b"-ERR Protocol error: too big inline request\r\n"
    assert closed
    assert_alive(server)


def test_inline_large_but_complete(conn):
    value = "v" * 50000
    conn.send(b"SET big " + value.encode() + b"\r\nSTRLEN big\r\n")
    assert conn.read() == Simple("OK")
    assert conn.read() == 50000


# ---- pipelining -----------------------------------------------------------------

def test_pipeline_replies_in_order(conn):
    n = 5000
    parts = []
    for i in range(n):
        parts.append(encode("SET", "p%d" % i, "v%d" % i))
        parts.append(b"GET p%d\r\n" % i)
        parts.append(encode("INCR", "counter"))
    conn.send(b"".join(parts))
    for i in range(n):
        assert conn.read() == Simple("OK")
        assert conn.read() == b"v%d" % i
        assert conn.read() == i + 1


def test_pipeline_mixed_with_errors(conn):
    conn.send(encode("SET", "a", "1") + b"NOSUCH x\r\n" + encode("GET") + b"GET a\r\n" + encode("PING"))
    assert conn.read() == Simple("OK")
    assert conn.read() == Error("ERR unknown command 'NOSUCH', with args beginning with: 'x' ")
    assert conn.read() == Error("ERR wrong number of arguments for 'get' command")
    assert conn.read() == b"1"
    assert conn.read() == Simple("PONG")


def test_request_split_byte_by_byte(conn):
    data = encode("SET", "slow", "value") + encode("GET", "slow") + b"PING\r\n"
    for i in range(len(data)):
        conn.send(data[i:i + 1])
        if i % 7 == 0:
            time.sleep(0.001)
    assert conn.read() == Simple("OK")
    assert conn.read() == b"value"
    assert conn.read() == Simple("PONG")


def test_big_bulk_value(conn):
    value = os.urandom(8 * 1024 * 1024)
    conn.send(encode("SET", "bigv", value))
    assert conn.read() == Simple("OK")
    assert conn.cmd("STRLEN", "bigv") == len(value)
    assert conn.cmd("GET", "bigv") == value


def test_empty_and_negative_multibulk_are_skipped(conn):
    conn.send(b"*0\r\n*-1\r\nPING\r\n")
    assert conn.read() == Simple("PONG")


# ---- protocol errors ------------------------------------------------------------

PROTOCOL_ERRORS = [
    (b"*abc\r\n", "invalid multibulk length"),
    (b"*3000000000\r\n", "invalid multibulk length"),
    (b"*2\r\n$x\r\n", "invalid bulk length"),
    (b"*2\r\n$-1\r\n", "invalid bulk length"),
    (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$-5\r\n", "invalid bulk length"),
    (b"*1\r\n$4294967296\r\n", "invalid bulk length"),
    (b"*2\r\nx3\r\n", "expected '$', got 'x'"),
    (b"*2\r\n$3\r\nGET\r\n:1\r\n", "expected '$', got ':'"),
]


@pytest.mark.parametrize("data,msg", PROTOCOL_ERRORS)
def test_protocol_errors_close_connection(server, r, data, msg):
    r.set("survivor", "yes")
    bystander = server.conn()
    try:
        assert bystander.cmd("PING") == Simple("PONG")
        out, closed = raw_exchange(server, data + b"PING\r\n")
        assert out == b"-ERR Protocol error: " + msg.encode() + b"\r\n"
        assert closed
        # Other clients are unaffected, in the middle of their session too.
        assert bystander.cmd("GET", "survivor") == b"yes"
    finally:
        bystander.close()


def test_protocol_error_after_good_commands(server):
    out, closed = raw_exchange(server, b"PING\r\n" + encode("ECHO", "x") + b"*1\r\n$z\r\nPING\r\n")
    assert out == b"+PONG\r\n$1\r\nx\r\n-ERR Protocol error: invalid bulk length\r\n"
    assert closed


def test_four_gigabyte_bulk_is_rejected_quickly(server):
    t0 = time.time()
    out, closed = raw_exchange(server, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4294967296\r\n")
    assert out == b"-ERR Protocol error: invalid bulk length\r\n" and closed
    assert time.time() - t0 < 3
    assert_alive(server)


def test_half_sent_command_then_disconnect(server, r):
    for data in (b"*3\r\n$3\r\nSET\r\n$5\r\nhalfk\r\n$100\r\nabc",
                 b"*3\r\n$3\r\nSET\r\n$5\r\nhalfk\r\n$1000000\r\n" + b"x" * 300000,
                 b"*3\r\n$3\r\nSET\r\n$5\r\nha",
                 b"*3\r\n",
                 b"SET halfk inline-without-newline"):
        s = socket.create_connection((server.host, server.port))
        s.sendall(data)
        time.sleep(0.05)
        s.close()
    time.sleep(0.1)
    assert r.exists("halfk") == 0
    assert_alive(server)


def test_garbage_does_not_hurt_others(server, r):
    rnd = random.Random(1234)
    r.set("g", "1")
    for _ in range(30):
        junk = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 3000)))
        s = socket.create_connection((server.host, server.port))
        try:
            s.sendall(junk)
        except OSError:
            pass
        s.close()
    assert r.get("g") == b"1"
    assert_alive(server)


# ---- unauthenticated limits -------------------------------------------------------

def test_unauthenticated_limits(new_server):
    srv = new_server("--requirepass", "pw")
    out, closed = raw_exchange(srv, b"*11\r\n")
    assert out == b"-ERR Protocol error: unauthenticated multibulk length\r\n" and closed
    out, closed = raw_exchange(srv, b"*2\r\n$16385\r\n")
    assert out == b"-ERR Protocol error: unauthenticated bulk length\r\n" and closed
    # At the limits: nothing wrong yet, the server waits for the rest.
    out, closed = raw_exchange(srv, b"*10\r\n$16384\r\n", quiet=0.3)
    assert out == b"" and not closed
    noauth = b"-NOAUTH Authentication required.\r\n"
    out, closed = raw_exchange(srv, b"PING\r\n", quiet=0.3, expect_len=len(noauth))
    assert out == noauth and not closed
    # After AUTH the limits are the normal ones.
    c = srv.conn()
    assert c.cmd("AUTH", "pw") == Simple("OK")
    big = "x" * 20000
    assert c.cmd("SET", "k", big) == Simple("OK")
    assert c.cmd("MSET", *["k%d" % i for i in range(12)]) == Simple("OK")
    c.close()


# ---- maxclients and timeout ---------------------------------------------------------

def test_maxclients(new_server):
    srv = new_server("--maxclients", "5")
    conns = []
    for i in range(5):
        c = srv.conn()
        assert c.cmd("PING") == Simple("PONG")
        if i == 0:
            # The fixture's readiness probe counts until its close is processed.
            wait_probe_gone(c)
        conns.append(c)
    extra = srv.conn()
    assert extra.read() == Error("ERR max number of clients reached")
    with pytest.raises(ConnectionError):
        extra.read()
    extra.close()
    for c in conns:
        assert c.cmd("PING") == Simple("PONG")
    conns.pop().close()

    def slot_free():
        c = srv.conn()
        try:
            return c.cmd("PING") == Simple("PONG")
        except (ConnectionError, OSError):
            return False
        finally:
            c.close()

    deadline = time.time() + 5
    while not slot_free():
        assert time.time() < deadline
        time.sleep(0.05)
    for c in conns:
        c.close()


def test_idle_timeout(new_server):
    srv = new_server("--timeout", "1")
    idle, busy = srv.conn(), srv.conn()
    assert idle.cmd("PING") == Simple("PONG")
    t0 = time.time()
    while time.time() - t0 < 2.5:
        assert busy.cmd("PING") == Simple("PONG")
        time.sleep(0.2)
    idle.sock.settimeout(3)
    assert idle.sock.recv(1) == b""
    assert busy.cmd("PING") == Simple("PONG")
    idle.close()
    busy.close()


# ---- RESP3 shapes ---------------------------------------------------------------

def test_resp3_shapes(conn3):
    assert conn3.cmd_raw("PING") == b"+PONG\r\n"
    assert conn3.cmd_raw("GET", "missing") == b"_\r\n"
    assert conn3.cmd_raw("ECHO", "hi") == b"$2\r\nhi\r\n"
    assert conn3.cmd_raw("CLIENT", "GETNAME") == b"_\r\n"
    cid = conn3.cmd("CLIENT", "ID")
    assert conn3.cmd_raw("CLIENT", "ID") == b":%d\r\n" % cid
    assert conn3.cmd_raw("NOSUCH").startswith(b"-ERR unknown command 'NOSUCH'")
    info = conn3.cmd("CLIENT", "INFO")
    assert isinstance(info, Verbatim) and info.fmt == b"txt" and b" resp=3" in info
    hello = conn3.cmd("HELLO")
    assert isinstance(hello, Map) and hello.dict()[b"proto"] == 3
    # Back to RESP2: the same replies in RESP2 form.
    assert isinstance(conn3.cmd("HELLO", "2"), list)
    assert conn3.cmd_raw("GET", "missing") == b"$-1\r\n"
    assert conn3.cmd_raw("CLIENT", "INFO").startswith(b"$")


# ---- unix socket ----------------------------------------------------------------

def test_unix_socket(server, r):
    if not server.unix or not os.path.exists(server.unix):
        pytest.skip("no unix socket")
    c = RespConn(unix=server.unix)
    try:
        assert c.cmd("PING") == Simple("PONG")
        assert c.cmd("SET", "via-unix", "1") == Simple("OK")
        assert r.get("via-unix") == b"1"
        c.send(b"GET via-unix\r\n" * 100)
        for _ in range(100):
            assert c.read() == b"1"
    finally:
        c.close()


# ---- protected mode ---------------------------------------------------------------

DENIED_PREFIX = b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set"


class NetNs:
    """A network namespace joined to this one by a veth pair; only the
    addresses assigned here are used, and everything is deleted after."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.ns = "hkv-%d" % tag
        self.host_if, self.ns_if = "hkv%da" % tag, "hkv%db" % tag
        base = (os.getpid() % 16000) * 4
        prefix = "10.213.%d." % (base >> 8)
        self.host_ip, self.ns_ip = prefix + str((base & 255) + 1), prefix + str((base & 255) + 2)

    def sh(self, *args):
        subprocess.run(args, check=True, capture_output=True, timeout=20)

    def up(self):
        self.sh("ip", "netns", "add", self.ns)
        self.sh("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
        self.sh("ip", "link", "set", self.ns_if, "netns", self.ns)
        self.sh("ip", "addr", "add", self.host_ip + "/30", "dev", self.host_if)
        self.sh("ip", "link", "set", self.host_if, "up")
        self.sh("ip", "netns", "exec", self.ns, "ip", "addr", "add", self.ns_ip + "/30", "dev", self.ns_if)
        self.sh("ip", "netns", "exec", self.ns, "ip", "link", "set", self.ns_if, "up")
        self.sh("ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up")

    def down(self):
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True, timeout=20)
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, timeout=20)

    def exchange(self, port, data, lines=1):
        """Connect from inside the namespace, send data, return the reply:
        everything up to the close, or the first `lines` CRLF-ended lines
        and whatever follows within a short quiet period."""
        # Read before sending: a refused client gets its error unasked, and
        # once our bytes lie unread there the close comes as a reset. A
        # loaded sanitizer build may be slow to accept, so the reply is
        # awaited with a deadline, and a failed send still reads what came.
        code = ("import socket,sys,time\n"
                "s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=10)\n"
                "want=int(sys.argv[4])\n"
                "deadline=time.time()+10\n"
                "out=b''\n"
                "def drain(quiet,need):\n"
                "    global out\n"
                "    while time.time()<deadline:\n"
                "        done=out.count(b'\\r\\n')>=need\n"
                "        s.settimeout(quiet if done else max(0.01,deadline-time.time()))\n"
                "        try:\n"
                "            d=s.recv(65536)\n"
                "        except socket.timeout:\n"
                "            if done: return True\n"
                "            continue\n"
                "        except OSError: return False\n"
                "        if not d: return False\n"
                "        out+=d\n"
                "    return True\n"
                "if drain(0.5,0):\n"
                "    try:\n"
                "        s.sendall(bytes.fromhex(sys.argv[3]))\n"
                "    except OSError: pass\n"
                "    drain(0.2,want)\n"
                "sys.stdout.write(out.hex())\n")
        res = subprocess.run(["ip", "netns", "exec", self.ns, "/usr/bin/python3", "-c", code, self.host_ip,
                              str(port), data.hex(), str(lines)], capture_output=True, timeout=30, check=True)
        return bytes.fromhex(res.stdout.decode().strip())


@pytest.fixture
def netns():
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("needs root and iproute2 to build a network namespace")
    ns = NetNs()
    try:
        ns.up()
    except (subprocess.CalledProcessError, OSError) as e:
        ns.down()
        pytest.skip("cannot build a network namespace here: %s" % e)
    yield ns
    ns.down()


def test_protected_mode(new_server, netns):
    srv = new_server("--bind", "127.0.0.1 " + netns.host_ip)
    out = netns.exchange(srv.port, b"PING\r\n")
    assert out.startswith(DENIED_PREFIX) and out.endswith(b"\r\n") and out.count(b"\r\n") == 1
    # Loopback clients are still served, and may lift protected mode.
    local = srv.conn()
    assert local.cmd("PING") == Simple("PONG")
    assert local.cmd("CONFIG", "SET", "protected-mode", "no") == Simple("OK")
    assert netns.exchange(srv.port, b"PING\r\n") == b"+PONG\r\n"
    assert local.cmd("CONFIG", "SET", "protected-mode", "yes") == Simple("OK")
    assert netns.exchange(srv.port, b"PING\r\n").startswith(DENIED_PREFIX)
    # A password lifts it too: the remote client must authenticate.
    assert local.cmd("CONFIG", "SET", "requirepass", "pw") == Simple("OK")
    assert netns.exchange(srv.port, b"PING\r\nAUTH pw\r\nPING\r\n", lines=3) == (
        b"-NOAUTH Authentication required.\r\n+OK\r\n+PONG\r\n")
    local.close()


def test_protected_mode_off_at_start(new_server, netns):
    srv = new_server("--bind", "127.0.0.1 " + netns.host_ip, "--protected-mode", "no")
    assert netns.exchange(srv.port, b"PING\r\n") == b"+PONG\r\n"
