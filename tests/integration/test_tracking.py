"""Client-side caching: CLIENT TRACKING, CACHING, TRACKINGINFO, GETREDIR.

Invalidation messages cross workers (the server runs with 4 threads and
the tests place the reader and the writer on different workers), so they
arrive asynchronously: `pushes()` reads what arrives within a short wait.
Replies and error texts are compared with a real redis-server where one is
installed; the expected texts are also spelled out.
"""
import os
import socket
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import ref_conn, sanitizer_report, start_server  # noqa: E402
from resp import Error, Push, encode  # noqa: E402

INV = b"invalidate"
CHAN = b"__redis__:invalidate"


@pytest.fixture(scope="module")
def srv(request):
    host = request.config.getoption("--host")
    if host:
        pytest.skip("starts its own 4-thread server")
    s = start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes", threads=4)
    yield s
    s.stop()
    report = sanitizer_report(s)
    assert not report, report


@pytest.fixture
def fresh(srv):
    c = srv.conn()
    c.cmd("FLUSHALL")
    c.cmd("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    c.close()
    opened = []

    def make(resp3=False, other_than=None):
        """A connection (HELLO 3 when resp3), on another worker than the
        connection other_than when given."""
        for _ in range(64):
            c = srv.conn()
            opened.append(c)
            c.worker = worker(c)
            if other_than is None or c.worker != other_than.worker:
                break
        if resp3:
            assert not isinstance(c.cmd("HELLO", "3"), Error)
        return c

    yield make
    for c in opened:
        c.close()


def worker(c):
    info = c.cmd("CLIENT", "INFO")
    for f in bytes(info).split():
        if f.startswith(b"io-thread="):
            return int(f[10:])
    raise AssertionError(info)


def call(c, *args):
    """A command's reply; pushes that arrive before it are kept for pushes()."""
    c.send(encode(*args))
    while True:
        r = c.read()
        if not isinstance(r, Push):
            return r
        c.__dict__.setdefault("held", []).append(r)


def pushes(c, wait=0.5, until=None):
    """Messages that arrive within `wait` seconds (or until `until` of them came)."""
    got = c.__dict__.pop("held", [])
    deadline = time.time() + wait
    while until is None or len(got) < until:
        left = deadline - time.time()
        if left <= 0:
            break
        c.sock.settimeout(left)
        try:
            got.append(c.read())
        except socket.timeout:
            break
        finally:
            c.sock.settimeout(10)
    return got


def one_push(c, wait=3.0):
    got = pushes(c, wait, until=1)
    assert got, "no invalidation arrived"
    return got[0]


def inv_keys(msgs):
    """Keys of RESP3 invalidation pushes, in order (None for a flush)."""
    out = []
    for m in msgs:
        assert isinstance(m, Push) and m[0] == INV, m
        if m[1] is None:
            out.append(None)
        else:
            out.extend(m[1])
    return out


# ---- default mode -------------------------------------------------------------


def test_resp3_push_for_write_on_other_worker(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    assert a.cmd("CLIENT", "TRACKING", "on") == "OK"
    assert a.cmd("GET", "k") is None
    assert b.cmd("SET", "k", "v") == "OK"
    assert one_push(a) == Push([INV, [b"k"]])
    # The key left the table: a second write sends nothing until it is read again.
    b.cmd("SET", "k", "w")
    assert pushes(a, 0.3) == []
    assert a.cmd("GET", "k") == b"w"
    b.cmd("DEL", "k")
    assert one_push(a) == Push([INV, [b"k"]])


def test_exact_push_frame(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("MGET", "x", "yy")
    b.cmd("SET", "yy", "1")
    assert a.raw() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nyy\r\n"


def test_own_write_push_follows_reply(fresh):
    a = fresh(resp3=True)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("GET", "k")
    assert a.cmd_raw("SET", "k", "v") == b"+OK\r\n"
    assert one_push(a) == Push([INV, [b"k"]])


def test_noloop(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "NOLOOP")
    a.cmd("GET", "k")
    a.cmd("SET", "k", "mine")
    assert pushes(a, 0.4) == []
    a.cmd("GET", "k")
    b.cmd("SET", "k", "theirs")
    assert one_push(a) == Push([INV, [b"k"]])


def test_every_kind_of_write_invalidates(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    b.cmd("RPUSH", "l", "x")
    b.cmd("HSET", "h", "f", "v")
    b.cmd("SADD", "s", "m")
    b.cmd("ZADD", "z", "1", "m")
    b.cmd("SET", "n", "1")
    a.cmd("CLIENT", "TRACKING", "on")
    for cmd in (("LRANGE", "l", "0", "-1"), ("HGET", "h", "f"), ("SMEMBERS", "s"), ("ZSCORE", "z", "m"),
                ("GET", "n"), ("EXISTS", "gone")):
        a.cmd(*cmd)
    for cmd in (("LPUSH", "l", "y"), ("HDEL", "h", "f"), ("SREM", "s", "m"), ("ZINCRBY", "z", "1", "m"),
                ("INCR", "n"), ("SET", "gone", "1")):
        b.cmd(*cmd)
    got = inv_keys(pushes(a, 2.0, until=6))
    assert sorted(got) == [b"gone", b"h", b"l", b"n", b"s", b"z"]


def test_rename_invalidates_both_names(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    b.cmd("SET", "src", "1")
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("MGET", "src", "dst")
    b.cmd("RENAME", "src", "dst")
    assert sorted(inv_keys(pushes(a, 2.0, until=2))) == [b"dst", b"src"]


def test_tracking_off_stops_messages(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("GET", "k")
    assert a.cmd("CLIENT", "TRACKING", "off") == "OK"
    b.cmd("SET", "k", "v")
    assert pushes(a, 0.4) == []
    # Reads while off are not remembered either.
    a.cmd("GET", "k2")
    b.cmd("SET", "k2", "v")
    assert pushes(a, 0.3) == []


def test_resp2_without_redirect_gets_nothing(fresh):
    a = fresh()
    b = fresh(other_than=a)
    assert a.cmd("CLIENT", "TRACKING", "on") == "OK"
    a.cmd("GET", "k")
    b.cmd("SET", "k", "v")
    assert a.cmd("PING") == "PONG"
    assert pushes(a, 0.3) == []


# ---- redirect -------------------------------------------------------------------


def test_resp2_redirect_to_subscriber(fresh):
    sub = fresh()
    sid = sub.cmd("CLIENT", "ID")
    assert sub.cmd("SUBSCRIBE", "__redis__:invalidate") == [b"subscribe", CHAN, 1]
    a = fresh(other_than=sub)
    b = fresh(other_than=a)
    assert a.cmd("CLIENT", "TRACKING", "on", "REDIRECT", sid) == "OK"
    assert a.cmd("CLIENT", "GETREDIR") == sid
    a.cmd("GET", "k")
    b.cmd("SET", "k", "v")
    assert sub.raw() == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n"
    # FLUSHALL: the null, in the tracking client's protocol (RESP2: $-1).
    b.cmd("FLUSHALL")
    assert sub.raw() == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n"
    assert pushes(a, 0.2) == []


def test_redirect_to_unsubscribed_resp2_sends_nothing(fresh):
    t = fresh()
    tid = t.cmd("CLIENT", "ID")
    a = fresh(other_than=t)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    a.cmd("GET", "k")
    b.cmd("SET", "k", "v")
    assert t.cmd("PING") == "PONG"
    assert pushes(t, 0.3) == []


def test_redirect_to_resp3_target(fresh):
    t = fresh(resp3=True)
    tid = t.cmd("CLIENT", "ID")
    a = fresh(other_than=t)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    a.cmd("GET", "k")
    b.cmd("SET", "k", "v")
    assert one_push(t) == Push([INV, [b"k"]])
    assert pushes(a, 0.2) == []


def test_redirect_inside_multi(fresh):
    t = fresh(resp3=True)
    tid = t.cmd("CLIENT", "ID")
    a = fresh(other_than=t)
    b = fresh(other_than=a)
    a.cmd("MULTI")
    a.cmd("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    a.cmd("GET", "k")
    assert a.cmd("EXEC") == ["OK", None]
    b.cmd("SET", "k", "v")
    assert one_push(t) == Push([INV, [b"k"]])


def test_broken_redirect(fresh):
    t = fresh()
    tid = t.cmd("CLIENT", "ID")
    a = fresh(resp3=True, other_than=t)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    t.close()
    time.sleep(0.2)
    a.cmd("GET", "k")
    b.cmd("SET", "k", "v")
    assert one_push(a) == Push([b"tracking-redir-broken", tid])
    info = a.cmd("CLIENT", "TRACKINGINFO").dict()
    assert info[b"flags"] == [b"on", b"broken_redirect"]
    assert info[b"redirect"] == tid
    line = bytes(a.cmd("CLIENT", "INFO"))
    assert b" flags=tR " in line and b" redir=%d " % tid in line
    # Enabling again clears the mark.
    a.cmd("CLIENT", "TRACKING", "on")
    assert a.cmd("CLIENT", "TRACKINGINFO").dict()[b"flags"] == [b"on"]


# ---- BCAST -------------------------------------------------------------------------


def test_bcast_prefixes(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    assert a.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "item:") == "OK"
    b.cmd("SET", "user:1", "x")
    b.cmd("SET", "other", "x")
    b.cmd("SET", "item:7", "x")
    b.cmd("SET", "user", "x")
    assert inv_keys(pushes(a, 2.0, until=2)) == [b"user:1", b"item:7"]
    assert pushes(a, 0.3) == []
    # Reads are not what counts in BCAST mode.
    a.cmd("GET", "other")
    b.cmd("SET", "other", "y")
    assert pushes(a, 0.3) == []


def test_bcast_without_prefix_is_every_key(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "BCAST")
    b.cmd("MSET", "q", "1", "p", "2")
    assert pushes(a, 1.0) == [Push([INV, [b"p", b"q"]])]


def test_bcast_one_message_per_command(fresh, redis_ref):
    """A command's keys come in one message, each once, in byte order."""
    def run(a, b):
        a.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "k")
        b.cmd("MSET", "k3", "1", "k1", "2", "x", "3", "k2", "4")
        b.cmd("MULTI")
        b.cmd("SET", "k9", "1")
        b.cmd("DEL", "k9")
        b.cmd("SET", "k8", "1")
        b.cmd("EXEC")
        b.cmd("EVAL", "redis.call('set', 'k7', 1) redis.call('set', 'k6', 1)", "0")
        return [a.raw() for _ in range(3)]

    a = fresh(resp3=True)
    got = run(a, fresh(other_than=a))
    assert got == [b">2\r\n$10\r\ninvalidate\r\n*3\r\n$2\r\nk1\r\n$2\r\nk2\r\n$2\r\nk3\r\n",
                   b">2\r\n$10\r\ninvalidate\r\n*2\r\n$2\r\nk8\r\n$2\r\nk9\r\n",
                   b">2\r\n$10\r\ninvalidate\r\n*2\r\n$2\r\nk6\r\n$2\r\nk7\r\n"]
    if redis_ref:
        ra, rb = ref_conn(redis_ref, resp3=True), ref_conn(redis_ref)
        try:
            assert run(ra, rb) == got
        finally:
            ra.close()
            rb.close()


def test_bcast_noloop(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP", "PREFIX", "k")
    a.cmd("SET", "k1", "mine")
    b.cmd("SET", "k2", "theirs")
    assert inv_keys(pushes(a, 1.0)) == [b"k2"]


def test_bcast_off_unregisters(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "k")
    a.cmd("CLIENT", "TRACKING", "off")
    b.cmd("SET", "k1", "x")
    assert pushes(a, 0.4) == []


# ---- OPTIN / OPTOUT -------------------------------------------------------------------


def test_optin_tracks_only_after_caching_yes(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "OPTIN")
    a.cmd("GET", "plain")
    assert a.cmd("CLIENT", "CACHING", "yes") == "OK"
    a.cmd("GET", "cached")
    a.cmd("GET", "after")  # CACHING covered only the command before this one
    b.cmd("MSET", "plain", "1", "cached", "1", "after", "1")
    assert inv_keys(pushes(a, 1.0)) == [b"cached"]


def test_optin_caching_survives_client_commands_and_multi(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "OPTIN")
    a.cmd("CLIENT", "CACHING", "yes")
    a.cmd("CLIENT", "ID")
    a.cmd("MULTI")
    a.cmd("GET", "m1")
    a.cmd("GET", "m2")
    a.cmd("EXEC")
    a.cmd("GET", "m3")
    b.cmd("MSET", "m1", "1", "m2", "1", "m3", "1")
    assert sorted(inv_keys(pushes(a, 1.0))) == [b"m1", b"m2"]


def test_optout_caching_no_skips_next(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on", "OPTOUT")
    a.cmd("GET", "t1")
    assert a.cmd("CLIENT", "CACHING", "no") == "OK"
    a.cmd("GET", "skipped")
    a.cmd("GET", "t2")
    b.cmd("MSET", "t1", "1", "skipped", "1", "t2", "1")
    assert sorted(inv_keys(pushes(a, 1.0))) == [b"t1", b"t2"]


# ---- flushes, expiry, transactions, scripts --------------------------------------------


def test_flushall_and_flushdb_send_null(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    bc = fresh(resp3=True)
    a.cmd("CLIENT", "TRACKING", "on")
    bc.cmd("CLIENT", "TRACKING", "on", "BCAST")
    a.cmd("GET", "k")
    b.cmd("FLUSHALL")
    assert a.raw() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert one_push(bc) == Push([INV, None])
    b.cmd("FLUSHDB")
    assert one_push(a) == Push([INV, None])
    assert one_push(bc) == Push([INV, None])
    # The table was emptied: k is not invalidated again.
    b.cmd("SET", "k", "v")
    assert pushes(a, 0.3) == []
    assert inv_keys(pushes(bc, 1.0)) == [b"k"]


def test_swapdb_sends_nothing(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("GET", "k")
    b.cmd("SWAPDB", "0", "1")
    assert pushes(a, 0.4) == []


def test_active_expiry_invalidates(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    b.cmd("SET", "e", "v", "PX", "100")
    a.cmd("CLIENT", "TRACKING", "on")
    assert a.cmd("GET", "e") == b"v"
    assert one_push(a, wait=5.0) == Push([INV, [b"e"]])


def test_lazy_expiry_invalidates(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    b.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        b.cmd("SET", "e", "v", "PX", "50")
        a.cmd("CLIENT", "TRACKING", "on")
        assert a.cmd("GET", "e") == b"v"
        time.sleep(0.15)
        assert b.cmd("EXISTS", "e") == 0
        assert one_push(a) == Push([INV, [b"e"]])
    finally:
        b.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_write_in_multi_invalidates(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("MGET", "x", "y")
    b.cmd("MULTI")
    b.cmd("SET", "x", "1")
    b.cmd("INCR", "y")
    assert b.cmd("EXEC") == ["OK", 1]
    assert sorted(inv_keys(pushes(a, 2.0, until=2))) == [b"x", b"y"]


def test_read_in_multi_is_tracked(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("MULTI")
    a.cmd("GET", "q")
    a.cmd("EXEC")
    b.cmd("SET", "q", "1")
    assert one_push(a) == Push([INV, [b"q"]])


def test_script_write_invalidates(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("GET", "sk")
    b.cmd("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "sk")
    assert one_push(a) == Push([INV, [b"sk"]])


def test_script_write_noloop(fresh):
    a = fresh(resp3=True)
    a.cmd("CLIENT", "TRACKING", "on", "NOLOOP")
    a.cmd("GET", "sk")
    a.cmd("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "sk")
    assert pushes(a, 0.4) == []


def test_script_read_is_tracked(fresh):
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    assert a.cmd("EVAL", "return redis.call('get', KEYS[1])", "1", "sk") is None
    b.cmd("SET", "sk", "x")
    assert one_push(a) == Push([INV, [b"sk"]])


# ---- the table's limit ------------------------------------------------------------------


def test_tracking_table_max_keys_evicts(fresh):
    a = fresh(resp3=True)
    c = fresh()
    assert c.cmd("CONFIG", "SET", "tracking-table-max-keys", "5") == "OK"
    a.cmd("CLIENT", "TRACKING", "on")
    keys = ["mk%d" % i for i in range(20)]
    for k in keys:
        assert call(a, "GET", k) is None
    evicted = inv_keys(pushes(a, 3.0, until=15))
    assert len(evicted) == 15 and len(set(evicted)) == 15
    assert set(evicted) <= {k.encode() for k in keys}
    # What is left is still tracked, and only that.
    b = fresh(other_than=a)
    b.cmd("MSET", *[x for k in keys for x in (k, "1")])
    rest = inv_keys(pushes(a, 3.0, until=5))
    assert sorted(rest + evicted) == sorted(k.encode() for k in keys)
    assert info_tracking(c)["tracking_total_keys"] == 0


def info_tracking(c):
    text = c.cmd("INFO", "everything")
    out = {}
    for line in bytes(text).decode().splitlines():
        if line.startswith(("tracking_clients:", "tracking_total_")):
            k, v = line.split(":")
            out[k] = int(v)
    return out


def test_info_counts(fresh):
    a = fresh()
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    a.cmd("MGET", "i1", "i2", "i3")
    b.cmd("CLIENT", "TRACKING", "on")
    b.cmd("GET", "i1")
    c = fresh()
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p1", "PREFIX", "p2")
    assert info_tracking(a) == {"tracking_clients": 3, "tracking_total_keys": 3, "tracking_total_items": 4,
                                "tracking_total_prefixes": 2}
    c.cmd("CLIENT", "TRACKING", "off")
    b.cmd("SET", "i1", "x")
    got = info_tracking(a)
    assert got == {"tracking_clients": 2, "tracking_total_keys": 2, "tracking_total_items": 2,
                   "tracking_total_prefixes": 0}
    # Closing and RESET stop tracking.
    b.close()
    assert a.cmd("RESET") == "RESET"
    deadline = time.time() + 3
    while info_tracking(c)["tracking_clients"] and time.time() < deadline:
        time.sleep(0.05)
    assert info_tracking(c)["tracking_clients"] == 0
    assert c.cmd("CLIENT", "TRACKINGINFO")[1] == [b"off"]


# ---- state replies ---------------------------------------------------------------------------


def test_trackinginfo_and_getredir(fresh):
    a = fresh(resp3=True)
    t = fresh()
    tid = t.cmd("CLIENT", "ID")
    info = lambda: a.cmd("CLIENT", "TRACKINGINFO").dict()  # noqa: E731
    assert info() == {b"flags": [b"off"], b"redirect": -1, b"prefixes": []}
    assert a.cmd("CLIENT", "GETREDIR") == -1
    a.cmd("CLIENT", "TRACKING", "on")
    assert info() == {b"flags": [b"on"], b"redirect": 0, b"prefixes": []}
    assert a.cmd("CLIENT", "GETREDIR") == 0
    a.cmd("CLIENT", "TRACKING", "on", "REDIRECT", tid, "OPTIN", "NOLOOP")
    a.cmd("CLIENT", "CACHING", "yes")
    assert info() == {b"flags": [b"on", b"optin", b"caching-yes", b"noloop"], b"redirect": tid, b"prefixes": []}
    assert a.cmd("CLIENT", "GETREDIR") == tid
    a.cmd("PING")
    assert info()[b"flags"] == [b"on", b"optin", b"noloop"]
    a.cmd("CLIENT", "TRACKING", "off")
    a.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a")
    a.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c")
    assert info() == {b"flags": [b"on", b"bcast"], b"redirect": 0, b"prefixes": [b"a", b"b", b"c"]}
    line = bytes(a.cmd("CLIENT", "INFO"))
    assert b" flags=tB " in line and b" redir=0 " in line
    a.cmd("CLIENT", "TRACKING", "off")
    line = bytes(a.cmd("CLIENT", "INFO"))
    assert b" flags=N " in line and b" redir=-1 " in line


def test_client_list_sub_counts(fresh):
    s = fresh()
    sid = s.cmd("CLIENT", "ID")
    s.cmd("SUBSCRIBE", "c1", "c2")
    s.cmd("PSUBSCRIBE", "p*")
    a = fresh()
    line = bytes(a.cmd("CLIENT", "LIST", "ID", sid))
    assert b" sub=2 psub=1 ssub=0 " in line
    assert b" flags=P " in line


ERROR_CASES = [
    (("CLIENT", "TRACKING", "on", "REDIRECT", "99999999"), "ERR The client ID you want redirect to does not exist"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "0"), "ERR The client ID you want redirect to does not exist"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "-3"), "ERR The client ID you want redirect to does not exist"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "abc"), "ERR value is not an integer or out of range"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "99999999", "bogus"),
     "ERR The client ID you want redirect to does not exist"),
    (("CLIENT", "TRACKING", "on", "bogus", "REDIRECT", "99999999"), "ERR syntax error"),
    (("CLIENT", "TRACKING", "off", "REDIRECT", "99999999"), "ERR The client ID you want redirect to does not exist"),
    (("CLIENT", "TRACKING", "maybe"), "ERR syntax error"),
    (("CLIENT", "TRACKING", "on", "PREFIX"), "ERR syntax error"),
    (("CLIENT", "TRACKING", "on", "PREFIX", "a"), "ERR PREFIX option requires BCAST mode to be enabled"),
    (("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"), "ERR OPTIN and OPTOUT are not compatible with BCAST"),
    (("CLIENT", "TRACKING", "on", "BCAST", "OPTOUT"), "ERR OPTIN and OPTOUT are not compatible with BCAST"),
    (("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"), "ERR You can't specify both OPTIN mode and OPTOUT mode"),
    (("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
     "ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap."),
    (("CLIENT", "CACHING", "yes"),
     "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"),
    (("CLIENT", "CACHING", "maybe"),
     "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"),
    (("CLIENT", "CACHING"), "ERR wrong number of arguments for 'client|caching' command"),
    (("CLIENT", "TRACKING"), "ERR wrong number of arguments for 'client|tracking' command"),
    (("CLIENT", "GETREDIR", "x"), "ERR wrong number of arguments for 'client|getredir' command"),
    (("CLIENT", "TRACKINGINFO", "x"), "ERR wrong number of arguments for 'client|trackinginfo' command"),
]

# Errors that depend on the state tracking is in: (setup, command, error).
STATE_ERROR_CASES = [
    ((("CLIENT", "TRACKING", "on", "BCAST"),), ("CLIENT", "TRACKING", "on"),
     "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it "
     "with a different mode."),
    ((("CLIENT", "TRACKING", "on"),), ("CLIENT", "TRACKING", "on", "BCAST"),
     "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it "
     "with a different mode."),
    ((("CLIENT", "TRACKING", "on", "OPTIN"),), ("CLIENT", "TRACKING", "on", "OPTOUT"),
     "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it "
     "with a different mode."),
    ((("CLIENT", "TRACKING", "on", "OPTIN"),), ("CLIENT", "CACHING", "no"),
     "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."),
    ((("CLIENT", "TRACKING", "on", "OPTOUT"),), ("CLIENT", "CACHING", "yes"),
     "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."),
    ((("CLIENT", "TRACKING", "on"),), ("CLIENT", "CACHING", "yes"),
     "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."),
    ((("CLIENT", "TRACKING", "on", "OPTIN"),), ("CLIENT", "CACHING", "maybe"), "ERR syntax error"),
    ((("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x"),), ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "xy"),
     "ERR Prefix 'xy' overlaps with an existing prefix 'x'. Prefixes for a single client must not overlap."),
    ((("CLIENT", "TRACKING", "on", "BCAST"),), ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "q"),
     "ERR Prefix 'q' overlaps with an existing prefix ''. Prefixes for a single client must not overlap."),
]


def test_error_texts(fresh, redis_ref):
    a = fresh()
    ref = ref_conn(redis_ref) if redis_ref else None
    for cmd, text in ERROR_CASES:
        got = a.cmd(*cmd)
        assert isinstance(got, Error) and got == text, (cmd, got)
        if ref:
            assert ref.cmd(*cmd) == text, cmd
    for setup, cmd, text in STATE_ERROR_CASES:
        for c in filter(None, (a, ref)):
            c.cmd("CLIENT", "TRACKING", "off")
            for s in setup:
                assert c.cmd(*s) == "OK"
            got = c.cmd(*cmd)
            assert isinstance(got, Error) and got == text, (c is ref, setup, cmd, got)
            c.cmd("CLIENT", "TRACKING", "off")
    if ref:
        ref.close()


def test_state_replies_match_redis(fresh, redis_ref):
    if not redis_ref:
        pytest.skip("redis-server not installed")

    def run(c, other_id):
        seq = [("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR"),
               ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a"), ("CLIENT", "TRACKINGINFO"),
               ("CLIENT", "TRACKING", "on", "BCAST"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "TRACKING", "off"),
               ("CLIENT", "TRACKING", "on", "OPTOUT", "NOLOOP", "REDIRECT", other_id), ("CLIENT", "CACHING", "no"),
               ("CLIENT", "TRACKINGINFO"), ("GET", "x"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR"),
               ("CLIENT", "TRACKING", "off"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR")]
        c.cmd("DEL", "x")
        out = []
        for cmd in seq:
            r = c.cmd(*cmd)
            if isinstance(r, list) and b"redirect" in r:
                i = r.index(b"redirect") + 1
                if r[i] not in (-1, 0):
                    r[i] = "ID"
            elif cmd[1:] == ("GETREDIR",) and r not in (-1, 0):
                r = "ID"
            out.append(r)
        return out

    mine, other = fresh(), fresh()
    ref, ref_other = ref_conn(redis_ref), ref_conn(redis_ref)
    try:
        assert run(mine, other.cmd("CLIENT", "ID")) == run(ref, ref_other.cmd("CLIENT", "ID"))
    finally:
        ref.close()
        ref_other.close()


def test_many_readers_one_writer(fresh):
    """Every reader on every worker hears about the write, exactly once."""
    readers = [fresh(resp3=True) for _ in range(12)]
    for r in readers:
        r.cmd("CLIENT", "TRACKING", "on")
        r.cmd("GET", "hot")
    w = fresh()
    w.cmd("SET", "hot", "1")
    for r in readers:
        assert one_push(r) == Push([INV, [b"hot"]])
    w.cmd("SET", "hot", "2")
    for r in readers:
        assert pushes(r, 0.1) == []


def test_churn_across_workers(srv, fresh):
    """Readers, writers, BCAST listeners and redirects on every worker, with
    clients coming and going: the server stays up, and once writes stop
    each default-mode reader has been told about every key it read and a
    later write changed."""
    import random
    import threading

    stop = time.time() + 1.5
    errors = []
    keys = ["ck%d" % i for i in range(40)]

    def reader(seed):
        rnd = random.Random(seed)
        try:
            while time.time() < stop:
                c = srv.conn()
                c.cmd("HELLO", "3")
                mode = rnd.choice([(), ("BCAST", "PREFIX", "ck1"), ("NOLOOP",), ("OPTOUT",)])
                assert call(c, "CLIENT", "TRACKING", "on", *mode) == "OK"
                for _ in range(rnd.randint(5, 60)):
                    k = rnd.choice(keys)
                    if rnd.random() < 0.2:
                        call(c, "SET", k, "r")
                    else:
                        call(c, "GET", k)
                if rnd.random() < 0.5:
                    call(c, "CLIENT", "TRACKING", "off")
                c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def writer(seed):
        rnd = random.Random(seed)
        try:
            c = srv.conn()
            while time.time() < stop:
                k = rnd.choice(keys)
                op = rnd.random()
                if op < 0.7:
                    c.cmd("SET", k, "w")
                elif op < 0.9:
                    c.cmd("MSET", k, "1", rnd.choice(keys), "2")
                else:
                    c.cmd("DEL", k)
            c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(6)]
    threads += [threading.Thread(target=writer, args=(100 + i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    # A last, orderly round: every key read is invalidated by the next write.
    a = fresh(resp3=True)
    b = fresh(other_than=a)
    a.cmd("CLIENT", "TRACKING", "on")
    for k in keys:
        call(a, "GET", k)
    b.cmd("MSET", *[x for k in keys for x in (k, "end")])
    assert sorted(inv_keys(pushes(a, 3.0, until=len(keys)))) == sorted(k.encode() for k in keys)
