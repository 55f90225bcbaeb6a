"""Client eviction (Redis 7's maxmemory-clients): the setting (bytes with
units, a percentage of maxmemory, CONFIG GET's rendering, CONFIG SET's
error texts) and its enforcement: when the memory of all normal clients
(query buffers, output buffers and the rest of CLIENT LIST's tot-mem)
reaches the limit, the biggest clients are disconnected until the total is
under it; CLIENT NO-EVICT clients are never picked but still count;
subscribers and MONITOR clients are picked like any other; each eviction
counts in INFO's evicted_clients and logs "Evicting client: <CLIENT LIST
line>".

How this compares HotKV with Redis
----------------------------------
The behaviour tests take the `target` fixture, parametrized over a stock
redis-server (Debian's 7.0, id `redis7`) and HotKV (id `hotkv`, two worker
threads, so a client's memory and its eviction may be on either worker):
the same body runs against each, so every expectation written here is
checked against Redis on every run. test_config_set_errors_match_redis
sends the same CONFIG SET values to both servers and compares the raw
replies and CONFIG GET's rendering byte for byte. HotKV-only checks: the
log line (Redis's log is not kept here), a limit given on the command
line, and exact biggest-first order across four workers (Redis orders
only by power-of-two buckets, so it may pick either of two clients of
3 MB and 3.5 MB).

Sizes are chosen so both servers decide the same way: the first 64 KB of
a bulk string of N bytes make both allocate its whole buffer (Redis on the
header for arguments past 32 KB, HotKV on the read after it), and limits are well above one idle
connection. A client that pipelines GETs without reading holds about 1 MB
of output in HotKV (reading stops past that: backpressure) where Redis
keeps growing, so the output test uses a limit under that.

Every server here is private (skipped with --host); each test leaves
maxmemory-clients and maxmemory at 0 and the database empty.
"""
import socket
import time

import pytest

from conftest import start_server, stop_checked
from resp import RespConn, encode

KB = 1024
MB = 1024 * 1024

DEFAULTS = [("maxmemory-clients", "0"), ("maxmemory", "0")]


# ---- servers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hk_srv(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"), threads=2)
    yield srv
    stop_checked(srv)


class Target:
    def __init__(self, name, port, srv=None):
        self.name, self.port, self.srv = name, port, srv
        self.socks = []

    def conn(self):
        return RespConn("127.0.0.1", self.port, timeout=20.0)

    def ctl(self):
        """A control connection that eviction must never pick."""
        c = self.conn()
        assert c.cmd("CLIENT", "NO-EVICT", "on") == "OK"
        self.socks.append(c)
        return c

    def client(self):
        """A raw connection and its id; closed by the fixture."""
        c = self.conn()
        cid = c.cmd("CLIENT", "ID")
        assert isinstance(cid, int), cid
        self.socks.append(c)
        return c, cid


def reset(t):
    c = t.conn()
    try:
        for name, value in DEFAULTS:
            assert c.cmd("CONFIG", "SET", name, value) == "OK"
        assert c.cmd("FLUSHALL") == "OK"
    finally:
        c.close()


@pytest.fixture(params=["redis7", "hotkv"])
def target(request):
    if request.param == "redis7":
        t = Target("redis7", request.getfixturevalue("ref_port"))
    else:
        srv = request.getfixturevalue("hk_srv")
        t = Target("hotkv", srv.port, srv)
    reset(t)
    yield t
    for c in t.socks:
        c.close()
    reset(t)


# ---- helpers -------------------------------------------------------------------------


def info_field(c, section, name, missing=KeyError):
    text = c.cmd("INFO", section).decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    if missing is KeyError:
        raise AssertionError("no %s in INFO %s" % (name, section))
    return missing


def evicted(c):
    return int(info_field(c, "stats", "evicted_clients"))


def clients(c):
    """id -> CLIENT LIST fields."""
    out = {}
    for line in c.cmd("CLIENT", "LIST").decode().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        out[int(f["id"])] = f
    return out


def wait_for(cond, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def gone(ctl, *ids):
    return wait_for(lambda: not set(ids) & set(clients(ctl)))


def still_there(ctl, *ids, settle=0.4):
    """After a few of HotKV's cron periods, every id is still connected."""
    time.sleep(settle)
    return set(ids) <= set(clients(ctl))


def config_set(c, name, value):
    rep = c.cmd("CONFIG", "SET", name, value)
    assert rep == "OK", (name, value, rep)


def bulk_start(size):
    return b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % size + b"x" * (64 * KB)


def partial_bulk(t, ctl, size):
    """A client that started SET k <size bytes> and sent only 64 KB of
    them: the server holds a query buffer of about `size` (HotKV sizes it
    on the read after the header, Redis on the header). Returns its id once
    the server has (or has already evicted it)."""
    c, cid = t.client()
    c.send(bulk_start(size))

    def seen():
        f = clients(ctl).get(cid)
        return f is None or int(f["tot-mem"]) >= size
    assert wait_for(seen), "the server never took the bulk header in"
    return cid


# ---- the setting ----------------------------------------------------------------------


VALUES = ["0", "10%", "100%", "101%", "0%", "-1", "-5%", "1k", "1kb", "10mb", "abc", "", "5%%", " 5", "5 ",
          "1.5mb", "1G", "1MB", "0b", "+5", "05", "007%", "00%", "+5%", "1e3", "k", "100%x", "%", "-0%",
          "9223372036854775807", "9223372036854775808", "9007199254740992kb", "10000000000gb", "131072", "50%"]


def test_config_set_errors_match_redis(hk_srv, ref_port):
    """Every value gets Redis's reply byte for byte, and CONFIG GET renders
    what was stored as Redis does ("10%" for a percentage, bytes else)."""
    hk, rd = RespConn("127.0.0.1", hk_srv.port), RespConn("127.0.0.1", ref_port)
    try:
        for v in VALUES:
            a = hk.cmd_raw("CONFIG", "SET", "maxmemory-clients", v)
            b = rd.cmd_raw("CONFIG", "SET", "maxmemory-clients", v)
            assert a == b, (v, a, b)
            a = hk.cmd_raw("CONFIG", "GET", "maxmemory-clients")
            b = rd.cmd_raw("CONFIG", "GET", "maxmemory-clients")
            assert a == b, (v, a, b)
        # The texts themselves, so a change on both sides is noticed too.
        assert hk.cmd("CONFIG", "SET", "maxmemory-clients", "abc") == (
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - "
            "argument must be a memory or percent value")
        assert hk.cmd("CONFIG", "SET", "maxmemory-clients", "101%") == (
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - "
            "percentage argument must be less or equal to 100")
        # A failed multi-setting CONFIG SET leaves the old value.
        for c in (hk, rd):
            assert c.cmd("CONFIG", "SET", "maxmemory-clients", "7%") == "OK"
            assert c.cmd("CONFIG", "SET", "maxmemory-clients", "1mb", "maxmemory", "x").startswith("ERR")
            assert c.cmd("CONFIG", "GET", "maxmemory-clients") == [b"maxmemory-clients", b"7%"]
            assert c.cmd("CONFIG", "SET", "maxmemory-clients", "0") == "OK"
    finally:
        hk.close()
        rd.close()


def test_command_line_and_default(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"), "--maxmemory-clients", "10%")
    try:
        c = srv.conn()
        assert c.cmd("CONFIG", "GET", "maxmemory-clients") == [b"maxmemory-clients", b"10%"]
        assert c.cmd("CONFIG", "GET", "maxmemory-c*") == [b"maxmemory-clients", b"10%"]
        c.close()
    finally:
        stop_checked(srv)


def test_off_by_default(target):
    ctl = target.ctl()
    assert ctl.cmd("CONFIG", "GET", "maxmemory-clients") == [b"maxmemory-clients", b"0"]
    before = evicted(ctl)
    big = partial_bulk(target, ctl, 20 * MB)
    assert still_there(ctl, big)
    assert evicted(ctl) == before


# ---- enforcement ------------------------------------------------------------------------


def test_query_buffer(target):
    """A client holding a big partial request goes; a smaller one stays
    (eviction stops once under the limit); the log names the client."""
    ctl = target.ctl()
    config_set(ctl, "maxmemory-clients", "3mb")
    before = evicted(ctl)
    small = partial_bulk(target, ctl, 1 * MB)
    assert still_there(ctl, small)
    big = partial_bulk(target, ctl, 5 * MB)
    assert gone(ctl, big)
    assert still_there(ctl, small)
    assert evicted(ctl) == before + 1
    if target.srv:
        log = target.srv.log()
        assert "Evicting client: id=%d addr=" % big in log
        assert "Evicting client: id=%d " % small not in log


def test_biggest_first(target):
    """The biggest client goes first, not the one whose growth crossed the
    limit: 2.5 MB + 0.5 MB is under 4 MB, the 1.5 MB client crosses it, and
    only the 2.5 MB one is evicted (the rest is then under the limit)."""
    ctl = target.ctl()
    config_set(ctl, "maxmemory-clients", "4mb")
    before = evicted(ctl)
    a = partial_bulk(target, ctl, 2 * MB + 512 * KB)
    b = partial_bulk(target, ctl, 512 * KB)
    assert still_there(ctl, a, b)
    c = partial_bulk(target, ctl, 1 * MB + 512 * KB)
    assert gone(ctl, a)
    assert still_there(ctl, b, c)
    assert evicted(ctl) == before + 1


def test_lowering_the_limit_evicts(target):
    ctl = target.ctl()
    config_set(ctl, "maxmemory-clients", "10mb")
    a = partial_bulk(target, ctl, 3 * MB)
    b = partial_bulk(target, ctl, 2 * MB)
    assert still_there(ctl, a, b)
    before = evicted(ctl)
    config_set(ctl, "maxmemory-clients", "4mb")
    assert gone(ctl, a)
    assert still_there(ctl, b)
    assert evicted(ctl) == before + 1


def test_output_buffer(target):
    """A client that pipelines GETs of a 100 KB value and never reads."""
    ctl = target.ctl()
    assert ctl.cmd("SET", "v", "x" * (100 * KB)) == "OK"
    config_set(ctl, "maxmemory-clients", "768kb")
    before = evicted(ctl)
    idle, idle_id = target.client()
    greedy, gid = target.client()
    greedy.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * KB)
    greedy.send(encode("GET", "v") * 400)
    assert gone(ctl, gid)
    assert still_there(ctl, idle_id)
    assert idle.cmd("PING") == "PONG"
    assert evicted(ctl) == before + 1


def test_no_evict(target):
    """A NO-EVICT client is never picked, but its memory counts: with it
    over the limit every other evictable client goes. NO-EVICT off makes a
    client evictable again."""
    ctl = target.ctl()
    config_set(ctl, "maxmemory-clients", "1mb")
    before = evicted(ctl)
    keeper, kid = target.client()
    assert keeper.cmd("CLIENT", "NO-EVICT", "on") == "OK"
    flip, fid = target.client()
    assert flip.cmd("CLIENT", "NO-EVICT", "on") == "OK"
    _, other = target.client()
    keeper.send(bulk_start(3 * MB))
    assert gone(ctl, other)
    assert int(clients(ctl)[kid]["tot-mem"]) >= 3 * MB
    assert "e" in clients(ctl)[kid]["flags"]
    assert still_there(ctl, kid, fid)
    assert evicted(ctl) == before + 1
    # Still over the limit: the reply to OFF may not arrive before the
    # close, on either server.
    flip.send(encode("CLIENT", "NO-EVICT", "off"))
    assert gone(ctl, fid)
    assert still_there(ctl, kid)
    assert evicted(ctl) == before + 2


def test_percentage_of_maxmemory(target):
    """5% of maxmemory 100mb is 5 MB; with maxmemory 0 a percentage is no
    limit, and setting maxmemory again brings it back."""
    ctl = target.ctl()
    config_set(ctl, "maxmemory", "100mb")
    config_set(ctl, "maxmemory-clients", "5%")
    assert ctl.cmd("CONFIG", "GET", "maxmemory-clients") == [b"maxmemory-clients", b"5%"]
    before = evicted(ctl)
    small = partial_bulk(target, ctl, 2 * MB)
    big = partial_bulk(target, ctl, 8 * MB)
    assert gone(ctl, big)
    assert still_there(ctl, small)
    assert evicted(ctl) == before + 1
    config_set(ctl, "maxmemory", "0")
    big2 = partial_bulk(target, ctl, 8 * MB)
    assert still_there(ctl, small, big2)
    assert evicted(ctl) == before + 1
    config_set(ctl, "maxmemory", "100mb")
    assert gone(ctl, big2)
    assert still_there(ctl, small)
    assert evicted(ctl) == before + 2


def test_subscriber(target):
    """A subscriber that stops reading is evicted like a normal client
    (the pub/sub output limit, 32 MB, is far away)."""
    ctl = target.ctl()
    config_set(ctl, "maxmemory-clients", "1mb")
    before = evicted(ctl)
    # Redis 7.2's counter (7.0 has none): an eviction is not an output
    # limit disconnection.
    obl = "client_output_buffer_limit_disconnections"
    obl_before = info_field(ctl, "stats", obl, None)
    sub, sid = target.client()
    sub.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * KB)
    assert sub.cmd("SUBSCRIBE", "ch") == [b"subscribe", b"ch", 1]
    payload = b"m" * (100 * KB)
    ctl.send(encode("PUBLISH", "ch", payload) * 100)
    for _ in range(100):
        assert ctl.read() in (0, 1)
    assert gone(ctl, sid)
    assert evicted(ctl) == before + 1
    assert info_field(ctl, "stats", obl, None) == obl_before


def test_monitor(target):
    ctl = target.ctl()
    config_set(ctl, "maxmemory-clients", "1mb")
    before = evicted(ctl)
    mon, mid = target.client()
    mon.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * KB)
    assert mon.cmd("MONITOR") == "OK"
    value = b"z" * (100 * KB)
    ctl.send(encode("SET", "k", value) * 100)
    for _ in range(100):
        assert ctl.read() == "OK"
    assert gone(ctl, mid)
    assert evicted(ctl) == before + 1


def test_biggest_first_across_workers(request):
    """HotKV with four workers: whichever workers hold them, exactly the two
    biggest of six clients go when the limit drops under their total (Redis
    only orders by power-of-two buckets, so this one is HotKV's alone)."""
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"), threads=4)
    t = Target("hotkv", srv.port, srv)
    try:
        ctl = t.ctl()
        for order in ([1, 3.5, 2, 3, 1.5, 2.5], [3.5, 3, 2.5, 2, 1.5, 1]):
            ids = {sz: partial_bulk(t, ctl, int(sz * MB)) for sz in order}
            before = evicted(ctl)
            config_set(ctl, "maxmemory-clients", "8mb")
            assert gone(ctl, ids[3.5], ids[3])
            assert still_there(ctl, *(ids[sz] for sz in (1, 1.5, 2, 2.5)))
            assert evicted(ctl) == before + 2
            config_set(ctl, "maxmemory-clients", "0")
            for c in t.socks[1:]:
                c.close()
            del t.socks[1:]
        log = srv.log()
        assert log.count("Evicting client: ") == 4
    finally:
        for c in t.socks:
            c.close()
        stop_checked(srv)
