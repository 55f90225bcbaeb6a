"""Keyspace notifications: the notify-keyspace-events setting (parsing, the
string CONFIG GET shows, errors), class filtering, the keyspace and
keyevent channel forms, database numbers in channel names, and delivery
across workers. test_notify_diff.py compares every write command's events
with Redis."""
import time

import pytest

from conftest import real_redis
from resp import Error, RespConn, encode
from test_notify_diff import Listener, expand

ERR = ("ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
       "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")

# (set, read back) pairs, as Redis 7.0 through 8.4 answer.
ROUND_TRIP = [
    ("", ""), ("KEA", "AKE"), ("KEg$", "g$KE"), ("Kx", "xK"), ("AKEnm", "AKEm"), ("KEAn", "AKE"), ("Em", "Em"),
    ("n", "n"), ("gn", "gn"), ("A", "A"), ("KEAd", "AKE"), ("g$lshzxetd", "A"), ("g$lshzxet", "g$lshzxet"),
    ("KEd", "dKE"), ("EKhh", "hKE"), ("tzsl$gKxe", "g$lszxetK"), ("mK", "Km"), ("Ke", "eK"), ("KEAm", "AKEm"),
]
# Redis 8.2's classes (Redis 7.0 refuses them): 'A' hides them too.
ROUND_TRIP_82 = [("KEo", "oKE"), ("c", "c"), ("cnoKm", "nocKm"), ("KEAoc", "AKE"), ("g$lshzxetdoc", "A"),
                 ("g$lshzxetoc", "g$lshzxetoc")]
BAD = ["Z", "KEAw", "KE ", "a", "k", "!", "r", "S"]


@pytest.fixture(scope="module")
def srv(request):
    """A server of this module's own: DEBUG allowed (SET-ACTIVE-EXPIRE)."""
    from conftest import start_server
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    s = start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes")
    yield s
    s.stop()


@pytest.fixture
def notify_off(srv):
    r = srv.client()
    r.flushall()
    yield r
    r.config_set("notify-keyspace-events", "")
    r.close()


@pytest.mark.parametrize("value,back", ROUND_TRIP + ROUND_TRIP_82)
def test_config_round_trip(notify_off, value, back):
    r = notify_off
    assert r.config_set("notify-keyspace-events", value)
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": back}


def test_config_round_trip_matches_redis(srv, notify_off):
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server not installed")
        ref = RespConn("127.0.0.1", port)
        hk = srv.conn()
        for value, _ in ROUND_TRIP:
            for c in (ref, hk):
                assert c.cmd("CONFIG", "SET", "notify-keyspace-events", value) == "OK"
            want = ref.cmd("CONFIG", "GET", "notify-keyspace-events")
            assert hk.cmd("CONFIG", "GET", "notify-keyspace-events") == want, value
        for value in BAD:
            want = ref.cmd("CONFIG", "SET", "notify-keyspace-events", value)
            got = hk.cmd("CONFIG", "SET", "notify-keyspace-events", value)
            assert isinstance(want, Error) and got == want, value
        ref.close()
        hk.close()


@pytest.mark.parametrize("value", BAD)
def test_config_errors_keep_the_old_value(srv, notify_off, value):
    c = srv.conn()
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEg") == "OK"
    reply = c.cmd("CONFIG", "SET", "notify-keyspace-events", value)
    assert isinstance(reply, Error) and reply == ERR
    assert c.cmd("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b"gKE"]
    c.close()


def test_startup_option(new_server):
    srv = new_server("--notify-keyspace-events", "KEx")
    r = srv.client()
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "xKE"}
    lst = Listener(srv.port)
    w = srv.conn()
    w.cmd("SET", "k", "v", "PX", "1")
    time.sleep(0.05)
    w.cmd("GET", "k")
    assert lst.collect(w) == expand([("expired", "k")])
    lst.close()
    w.close()
    r.close()


def workload(w):
    """One command of every class, plus expiry, new keys and misses."""
    cmds = [
        ["SET", "s", "1"], ["INCR", "s"], ["APPEND", "s", "x"], ["LPUSH", "l", "a", "b"], ["RPOP", "l"],
        ["SADD", "st", "a"], ["SREM", "st", "a"], ["HSET", "h", "f", "v"], ["HDEL", "h", "f"],
        ["ZADD", "z", "1", "a"], ["ZINCRBY", "z", "1", "a"], ["XADD", "x", "1-1", "f", "v"], ["XDEL", "x", "1-1"],
        ["EXPIRE", "s", "100"], ["PERSIST", "s"], ["RENAME", "s", "s2"], ["DEL", "l"], ["GET", "nosuch"],
        ["SET", "e", "1", "PX", "1"],
    ]
    for c in cmds:
        assert not isinstance(w.cmd(*c), Error), c
    time.sleep(0.02)
    w.cmd("GET", "e")


CLASS = {"set": "$", "incrby": "$", "append": "$", "lpush": "l", "rpop": "l", "sadd": "s", "srem": "s",
         "hset": "h", "hdel": "h", "zadd": "z", "zincr": "z", "xadd": "t", "xdel": "t", "expire": "g",
         "persist": "g", "rename_from": "g", "rename_to": "g", "del": "g", "keymiss": "m", "expired": "x",
         "new": "n"}


def run_workload(srv, flags):
    c = srv.conn()
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", flags) == "OK"
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    c.cmd("FLUSHALL")
    lst = Listener(srv.port)
    try:
        workload(c)
        return lst.collect(c)
    finally:
        c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
        lst.close()
        c.close()


def keyspace_events(events):
    return [(ch.split(":", 1)[1], msg) for ch, msg in events if ch.startswith("__keyspace@")]


def test_each_class_alone(srv, notify_off):
    full = keyspace_events(run_workload(srv, "KAnm"))
    assert {CLASS[e] for _, e in full} == set("$lszhtgmxn"), full
    for cls in "g$lshzxtmn":
        got = keyspace_events(run_workload(srv, "K" + cls))
        assert got == [(k, e) for k, e in full if CLASS[e] == cls], cls
    # 'A' leaves out new and keymiss.
    got = keyspace_events(run_workload(srv, "KA"))
    assert got == [(k, e) for k, e in full if CLASS[e] not in "nm"]


def test_channel_forms(srv, notify_off):
    ks = run_workload(srv, "K$")
    ke = run_workload(srv, "E$")
    both = run_workload(srv, "KE$")
    assert ks and all(ch.startswith("__keyspace@0__:") for ch, _ in ks)
    assert ke and all(ch.startswith("__keyevent@0__:") for ch, _ in ke)
    assert [(ch.split(":", 1)[1], m) for ch, m in ks] == [(m, ch.split(":", 1)[1]) for ch, m in ke]
    # Keyspace message first, then keyevent, per event.
    assert both == [x for pair in zip(ks, ke) for x in pair]
    # Classes without a channel kind, or a kind without classes: nothing.
    assert run_workload(srv, "A") == []
    assert run_workload(srv, "KE") == []


def test_database_number_in_channel(srv, notify_off):
    c = srv.conn()
    c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
    lst = Listener(srv.port)
    try:
        c.cmd("SELECT", "3")
        c.cmd("SET", "k", "v")
        c.cmd("MOVE", "k", "5")
        c.cmd("SELECT", "5")
        c.cmd("COPY", "k", "k", "DB", "12")
        c.cmd("DEL", "k")
        assert lst.collect(c) == expand([("set", "k", 3), ("move_from", "k", 3), ("move_to", "k", 5),
                                         ("copy_to", "k", 12), ("del", "k", 5)])
    finally:
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
        c.cmd("FLUSHALL")
        lst.close()
        c.close()


def test_binary_and_long_keys(srv, notify_off):
    c = srv.conn()
    c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
    lst = Listener(srv.port)
    try:
        long_key = "k" * 5000
        c.cmd("SET", long_key, "v")
        c.cmd("SET", "a:b c", "v")
        got = lst.collect(c)
        assert got == expand([("set", long_key), ("set", "a:b c")])
    finally:
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
        lst.close()
        c.close()


def test_keymiss_and_new(srv, notify_off):
    c = srv.conn()
    c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEnm")
    lst = Listener(srv.port)
    try:
        c.cmd("GET", "a")             # keymiss
        c.cmd("SET", "a", "1")        # new
        c.cmd("SET", "a", "2")        # nothing: overwrite
        c.cmd("MGET", "a", "b", "c")  # keymiss b, c
        c.cmd("EXISTS", "zz")         # keymiss, as in Redis
        c.cmd("LPUSH", "l", "x")      # new
        c.cmd("HGET", "l2", "f")      # keymiss
        assert lst.collect(c) == expand([("keymiss", "a"), ("new", "a"), ("keymiss", "b"), ("keymiss", "c"),
                                         ("keymiss", "zz"), ("new", "l"), ("keymiss", "l2")], "KEnm")
    finally:
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
        lst.close()
        c.close()


def test_nothing_without_subscribers(srv, notify_off):
    """Notifications on and nobody listening: commands work as usual."""
    c = srv.conn()
    c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEAnm")
    try:
        for i in range(200):
            assert c.cmd("SET", "k%d" % i, "v") == "OK"
            assert c.cmd("GET", "nosuch") is None
        assert c.cmd("DBSIZE") == 200
    finally:
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
        c.close()


def test_across_workers(new_server):
    """Writers on every worker, one subscriber: each writer's events arrive,
    in that writer's order."""
    srv = new_server("--notify-keyspace-events", "KEA", threads=4)
    lst = Listener(srv.port, patterns=("__keyevent@0__:*",))
    writers = [srv.conn() for _ in range(8)]
    try:
        for round_ in range(20):
            for i, w in enumerate(writers):
                w.send(encode("SET", "w%d:%d" % (i, round_), "v"))
            for w in writers:
                assert w.read() == "OK"
        seen = {i: [] for i in range(len(writers))}
        for i, w in enumerate(writers):
            for ch, key in lst.collect(w):
                assert ch == "__keyevent@0__:set"
                seen[int(key[1:].split(":")[0])].append(int(key.split(":")[1]))
        total = sum(len(v) for v in seen.values())
        assert total == 20 * len(writers)
        for i, rounds in seen.items():
            assert rounds == list(range(20)), i
    finally:
        for w in writers:
            w.close()
        lst.close()
