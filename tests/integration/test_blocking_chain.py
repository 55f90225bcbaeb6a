"""A write that wakes blocked clients replies only once every re-run it
caused has finished, transitively and on any worker: no client can see an
element in transit between two blocked clients, as with Redis.

Each scenario runs on a private server with four workers. Connections are
spread over the workers by the kernel (SO_REUSEPORT), so the tests open
fresh connections for every round and repeat it: the waiters, the writer
and the observer land on the same worker in some rounds and on different
ones in others.
"""
import socket

import pytest

from poll import wait_until
from resp import encode

THREADS = 4


def blocked(c):
    return int(c.info("clients")["blocked_clients"])


def wait_blocked(c, n):
    wait_until(lambda: blocked(c), lambda v: v == n, what="blocked_clients == %d" % n)


def block(srv, admin, *cmd, already=0):
    """A fresh connection blocked in cmd (INFO says so)."""
    c = srv.conn()
    c.send(encode(*cmd))
    wait_blocked(admin, already + 1)
    return c


def pipeline(conn, *cmds):
    """Send cmds in one write and read every reply."""
    conn.send(b"".join(encode(*c) for c in cmds))
    return [conn.read() for _ in cmds]


@pytest.fixture
def srv(new_server):
    return new_server("--enable-debug-command", "yes", threads=THREADS)


@pytest.fixture
def admin(srv):
    c = srv.client()
    yield c
    c.close()


def test_blmove_chain_never_seen_in_transit(srv, admin):
    """The issue's scenario: l1 -> (BLMOVE) -> l2 -> (BLMOVE) -> l3. Once
    RPUSH l1 answers, the element is in l3, seen from the writer's own
    connection (pipelined) and from a third one."""
    for _ in range(60):
        a = block(srv, admin, "BLMOVE", "l1", "l2", "RIGHT", "LEFT", "0")
        b = block(srv, admin, "BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0", already=1)
        w, o = srv.conn(), srv.conn()
        assert w.cmd("RPUSH", "l1", "foo") == 1
        assert pipeline(o, ("LRANGE", "l1", "0", "-1"), ("LRANGE", "l2", "0", "-1"),
                        ("LRANGE", "l3", "0", "-1")) == [[], [], [b"foo"]]
        assert a.read() == b"foo" and b.read() == b"foo"
        # The writer's later commands, pipelined behind the write, see
        # the end of the chain too.
        a.send(encode("BLMOVE", "l1", "l2", "RIGHT", "LEFT", "0"))
        b.send(encode("BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0"))
        wait_blocked(admin, 2)
        assert pipeline(w, ("RPUSH", "l1", "bar"), ("LRANGE", "l1", "0", "-1"), ("LRANGE", "l2", "0", "-1"),
                        ("LRANGE", "l3", "0", "-1")) == [1, [], [], [b"foo", b"bar"]]
        assert a.read() == b"bar" and b.read() == b"bar"
        for c in (a, b, w, o):
            c.close()
        admin.delete("l3")
    wait_blocked(admin, 0)


def test_chain_on_one_worker(new_server):
    """Writer, waiters and observer on the same worker: the re-runs are
    mail to the writer's own worker, which holds the writer meanwhile."""
    srv = new_server(threads=1)
    admin = srv.client()
    for _ in range(20):
        a = block(srv, admin, "BLMOVE", "l1", "l2", "RIGHT", "LEFT", "0")
        b = block(srv, admin, "BRPOPLPUSH", "l2", "l3", "0", already=1)
        w = srv.conn()
        assert pipeline(w, ("RPUSH", "l1", "x"), ("LRANGE", "l1", "0", "-1"), ("LRANGE", "l2", "0", "-1"),
                        ("LRANGE", "l3", "0", "-1")) == [1, [], [], [b"x"]]
        assert a.read() == b"x" and b.read() == b"x"
        for c in (a, b, w):
            c.close()
        admin.delete("l3")
    admin.close()


def test_longer_chain_of_brpoplpush(srv, admin):
    """k0 -> k1 -> ... -> k5: five hops, the last list holds the element
    when the push answers."""
    for _ in range(20):
        waiters = [block(srv, admin, "BRPOPLPUSH", "k%d" % i, "k%d" % (i + 1), "0", already=i)
                   for i in range(5)]
        w = srv.conn()
        assert w.cmd("LPUSH", "k0", "x") == 1
        assert [w.cmd("LLEN", "k%d" % i) for i in range(6)] == [0, 0, 0, 0, 0, 1]
        for c in waiters:
            assert c.read() == b"x"
            c.close()
        w.close()
        admin.delete("k5")


def test_brpoplpush_circle_terminates(srv, admin):
    """BRPOPLPUSH a b and BRPOPLPUSH b a: the element goes round once and
    stops in a, as in Redis; the push answers after both moves."""
    for _ in range(30):
        x = block(srv, admin, "BRPOPLPUSH", "a", "b", "0")
        y = block(srv, admin, "BRPOPLPUSH", "b", "a", "0", already=1)
        w = srv.conn()
        # The end looks like the start: that both were served when the
        # push answered tells them apart.
        replies = pipeline(w, ("RPUSH", "a", "v"), ("LRANGE", "a", "0", "-1"), ("LRANGE", "b", "0", "-1"),
                           ("INFO", "clients"))
        assert replies[:3] == [1, [b"v"], []]
        assert b"\r\nblocked_clients:0\r\n" in replies[3]
        assert x.read() == b"v" and y.read() == b"v"
        for c in (x, y, w):
            c.close()
        admin.delete("a")


def test_served_client_sees_the_rest_of_its_chain(srv, admin):
    """A client served in the middle of a chain sees the end of it after
    its own reply (Redis serves the whole chain before any reply)."""
    for _ in range(30):
        a = block(srv, admin, "BLMOVE", "l1", "l2", "RIGHT", "LEFT", "0")
        b = block(srv, admin, "BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0", already=1)
        # a's next command is already in its query buffer: it runs after
        # a's reply is due, and must see the element past b.
        a.send(encode("LRANGE", "l3", "0", "-1"))
        w = srv.conn()
        assert w.cmd("RPUSH", "l1", "z") == 1
        assert a.read() == b"z"
        assert a.read() == [b"z"]
        assert b.read() == b"z"
        for c in (a, b, w):
            c.close()
        admin.delete("l3")


def test_zset_pops_served_before_exec_and_script_reply(srv, admin):
    """A transaction and a script that feed several BZPOPMIN/BZPOPMAX/
    BZMPOP waiters answer once every waiter has taken its member."""
    script = ("for i, k in ipairs(KEYS) do redis.call('zadd', k, i, 'm' .. i) end "
              "return redis.call('rpush', 'plain', 'p')")
    for round_ in range(20):
        keys = ["z%d" % i for i in range(4)]
        waiters = [
            block(srv, admin, "BZPOPMIN", keys[0], "0"),
            block(srv, admin, "BZPOPMAX", keys[1], "0", already=1),
            block(srv, admin, "BZMPOP", "0", "1", keys[2], "MIN", already=2),
            block(srv, admin, "BLPOP", "plain", "0", already=3),
        ]
        w = srv.conn()
        if round_ % 2:
            replies = pipeline(w, ("MULTI",), ("ZADD", keys[0], "1", "m1"), ("ZADD", keys[1], "2", "m2"),
                               ("ZADD", keys[2], "3", "m3"), ("RPUSH", "plain", "p"), ("EXEC",),
                               ("EXISTS", *keys, "plain"))
            assert replies[-2] == [1, 1, 1, 1]
        else:
            replies = pipeline(w, ("EVAL", script, "3", *keys[:3]),
                               ("EXISTS", *keys, "plain"))
        assert replies[-1] == 0
        assert waiters[0].read()[:2] == [b"z0", b"m1"]
        assert waiters[1].read()[:2] == [b"z1", b"m2"]
        assert waiters[2].read() == [b"z2", [[b"m3", b"3"]]]
        assert waiters[3].read() == [b"plain", b"p"]
        for c in waiters + [w]:
            c.close()


def test_chain_of_zset_pop_and_list_moves_through_a_script(srv, admin):
    """A link that is not a move: a script's ZADD wakes a BZPOPMIN while a
    BLMOVE chain runs from the same script's push; both end before the
    script's reply."""
    for _ in range(20):
        z = block(srv, admin, "BZPOPMIN", "zz", "0")
        a = block(srv, admin, "BLMOVE", "q1", "q2", "LEFT", "LEFT", "0", already=1)
        b = block(srv, admin, "BLMOVE", "q2", "q3", "LEFT", "LEFT", "0", already=2)
        w = srv.conn()
        res = pipeline(w, ("EVAL", "redis.call('zadd', KEYS[1], 5, 'm') return redis.call('lpush', KEYS[2], 'e')",
                           "2", "zz", "q1"),
                       ("EXISTS", "zz", "q1", "q2"), ("LRANGE", "q3", "0", "-1"))
        assert res == [1, 0, [b"e"]]
        assert z.read() == [b"zz", b"m", b"5"]
        assert a.read() == b"e" and b.read() == b"e"
        for c in (z, a, b, w):
            c.close()
        admin.delete("q3")


def test_writer_disconnects_right_after_writing(srv, admin):
    """The writer is gone before its chain ends: the chain still finishes,
    nothing waits for the writer, and the server carries on."""
    for _ in range(30):
        a = block(srv, admin, "BLMOVE", "d1", "d2", "RIGHT", "LEFT", "0")
        b = block(srv, admin, "BLMOVE", "d2", "d3", "LEFT", "RIGHT", "0", already=1)
        s = socket.create_connection((srv.host, srv.port))
        s.sendall(encode("RPUSH", "d1", "gone") + encode("GET", "x"))
        s.close()
        assert a.read() == b"gone" and b.read() == b"gone"
        wait_until(lambda: admin.lrange("d3", 0, -1), lambda v: v == [b"gone"], what="d3 == [gone]")
        for c in (a, b):
            c.close()
        admin.delete("d3")
    wait_blocked(admin, 0)
    assert admin.ping()


def slow_exec(conn, *cmds, sleep="0.3"):
    """Send MULTI, DEBUG SLEEP, cmds..., EXEC; return nothing (the caller
    reads the replies): the transaction holds its shards while it sleeps,
    so the writes' wake-ups stay pending meanwhile."""
    conn.send(encode("MULTI") + encode("DEBUG", "SLEEP", sleep) + b"".join(encode(*c) for c in cmds) + encode("EXEC"))


def read_exec(conn, n):
    replies = [conn.read() for _ in range(n + 3)]
    assert replies[0] == "OK" and all(r == "QUEUED" for r in replies[1:-1])
    return replies[-1]


@pytest.mark.parametrize("how", ["timeout", "unblock", "unblock-error", "disconnect"])
def test_waiter_leaves_while_its_wakeup_is_pending(srv, admin, how):
    """The first waiter goes away (times out, is unblocked, disconnects)
    while the write that woke it still holds the shard: its turn passes
    to the next waiter, and the write answers once the element has
    arrived wherever it went (to y, unless the machine is so slow that x
    was served before it could leave)."""
    # x's timeout ends while the transaction sleeps holding p1's shard.
    rounds, timeout, sleep = (2, "1.5", "2.5") if how == "timeout" else (4, "0", "0.3")
    inherited = 0
    for _ in range(rounds):
        x = srv.conn()
        xid = x.cmd("CLIENT", "ID")
        x.send(encode("BLMOVE", "p1", "p2", "LEFT", "LEFT", timeout))
        wait_blocked(admin, 1)
        y = block(srv, admin, "BLMOVE", "p1", "p3", "LEFT", "LEFT", "0", already=1)
        w = srv.conn(timeout=30)
        slow_exec(w, ("RPUSH", "p1", "e"), sleep=sleep)
        u = None
        if how.startswith("unblock"):
            u = srv.conn()
            u.send(encode("CLIENT", "UNBLOCK", xid, *(("ERROR",) if how == "unblock-error" else ())))
        elif how == "disconnect":
            x.close()
        assert read_exec(w, 1) == ["OK", 1]
        state = pipeline(w, ("LLEN", "p1"), ("LLEN", "p2"), ("LLEN", "p3"))
        assert state[0] == 0 and state[1] + state[2] == 1, state
        inherited += state[2]
        if u:
            assert u.read() in (0, 1)
            u.close()
        # Whoever did not get the element still waits: let it go.
        for c in admin.client_list():
            if c["cmd"] == "blmove" and "b" in c["flags"]:
                admin.client_unblock(int(c["id"]))
        if how != "disconnect":
            rx = x.read()
            assert rx == b"e" or rx is None or str(rx).startswith("UNBLOCKED"), rx
            x.close()
        assert y.read() == (b"e" if state[2] else None)
        y.close()
        w.close()
        admin.delete("p1", "p2", "p3")
        wait_blocked(admin, 0)
    if not inherited and how == "timeout":
        # Every round's element arrived and nothing was left in transit
        # (checked above); only the interleaving aimed at did not happen:
        # a slow (sanitizer) build handled the wake-up before the timeout.
        pytest.skip("the timeout never fired before the wake-up was handled")
    assert inherited, "x never left before its wake-up was handled"


def test_many_writers_hit_woken_waiters(srv, admin):
    """Several writers push while the first waiter's wake-up is pending:
    each write waits for the re-runs that serve it, every write answers,
    no element is lost or left in transit."""
    n = 8
    waiters = [block(srv, admin, "BLMOVE", "m1", "m2", "LEFT", "LEFT", "0", already=i) for i in range(n)]
    fwd = [block(srv, admin, "BLMOVE", "m2", "m3", "LEFT", "LEFT", "0", already=n + i) for i in range(n)]
    writers = [srv.conn() for _ in range(n)]
    for i, c in enumerate(writers):
        c.send(encode("RPUSH", "m1", "e%d" % i) + encode("LLEN", "m3"))
    for c in writers:
        assert c.read() >= 1
        assert c.read() >= 1
    assert sorted(admin.lrange("m3", 0, -1)) == sorted(b"e%d" % i for i in range(n))
    for c in waiters + fwd:
        assert c.read().startswith(b"e")
    for c in waiters + fwd + writers:
        c.close()
    wait_blocked(admin, 0)


def test_rerun_refused_by_a_busy_script_is_tried_again(new_server):
    """A script past busy-reply-threshold wakes waiters on other workers
    and goes on running: their re-runs cannot take the shard and are tried
    again later (no -BUSY for a blocked client), and the script answers
    once its chain has been served."""
    srv = new_server("--busy-reply-threshold", "50", threads=THREADS)
    admin = srv.client()
    body = "redis.call('rpush', KEYS[1], 'v') local t0 = os.clock() while os.clock() - t0 < 0.3 do end return 1"
    for _ in range(4):
        a = block(srv, admin, "BLMOVE", "b1", "b2", "RIGHT", "LEFT", "0")
        b = block(srv, admin, "BLMOVE", "b2", "b3", "LEFT", "RIGHT", "0", already=1)
        w = srv.conn(timeout=30)
        assert pipeline(w, ("EVAL", body, "1", "b1"), ("LRANGE", "b1", "0", "-1"), ("LRANGE", "b2", "0", "-1"),
                        ("LRANGE", "b3", "0", "-1")) == [1, [], [], [b"v"]]
        assert a.read() == b"v" and b.read() == b"v"
        for c in (a, b, w):
            c.close()
        admin.delete("b3")
    admin.close()
