"""Commands run inside EXEC or a script write into a reply that is part of
another one: a handler must never cut its reply short or act on the
connection as it may when it runs alone. These are the cases that could,
each checked for a well-formed reply and a connection that goes on."""
import pytest

from resp import Error


@pytest.fixture
def c(new_server):
    srv = new_server(threads=2)
    conn = srv.conn(timeout=30)
    yield conn
    conn.close()


def vset(c, n=8):
    for i in range(n):
        assert c.cmd("VADD", "vs", "VALUES", 2, i, i + 1, "e%d" % i) in (1, True)


def test_vrandmember_with_repetitions_inside_exec(c):
    vset(c)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("VRANDMEMBER", "vs", -20) == "QUEUED"
    assert c.cmd("PING") == "QUEUED"
    rep = c.cmd("EXEC")
    assert len(rep) == 2 and len(rep[0]) == 20 and rep[1] == "PONG"
    assert all(m.startswith(b"e") for m in rep[0])


def test_vrandmember_with_repetitions_inside_a_script(c):
    vset(c)
    rep = c.cmd("EVAL", "return redis.call('VRANDMEMBER', KEYS[1], -30)", 1, "vs")
    assert len(rep) == 30
    assert c.cmd("PING") == "PONG"


def test_vrandmember_too_large_for_a_nested_reply_is_refused_in_place(c):
    """Alone, such a count is served until an output ceiling and the
    connection is then closed; nested it cannot be cut short, so it is
    refused before anything is written, and the rest runs."""
    vset(c, 2)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("VRANDMEMBER", "vs", -(1 << 40)) == "QUEUED"
    assert c.cmd("SET", "after", "1") == "QUEUED"
    rep = c.cmd("EXEC")
    assert isinstance(rep[0], Error) and rep[0].startswith("ERR VRANDMEMBER count is too large")
    assert rep[1] == "OK"
    rep = c.cmd("EVAL", "return redis.pcall('VRANDMEMBER', KEYS[1], -1099511627776)", 1, "vs")
    assert isinstance(rep, Error) and rep.startswith("ERR VRANDMEMBER count is too large")
    assert c.cmd("GET", "after") == b"1"


@pytest.mark.parametrize("cmd", [("CLIENT", "LIST"), ("CLIENT", "KILL", "ID", "999999"),
                                 ("CLIENT", "UNBLOCK", "999999"), ("CONFIG", "RESETSTAT")])
def test_commands_answered_by_every_worker_are_not_queued(c, cmd):
    """Their reply is gathered from every worker after they return, so it
    could not take its place inside EXEC's array: MULTI refuses them
    (HotKV's one difference from Redis here) and the transaction aborts."""
    assert c.cmd("MULTI") == "OK"
    rep = c.cmd(*cmd)
    assert isinstance(rep, Error) and rep == "ERR Command not allowed inside a transaction"
    assert c.cmd("EXEC") == Error("EXECABORT Transaction discarded because of previous errors.")
    # Outside a transaction they answer as usual.
    assert not isinstance(c.cmd(*cmd), Error) or cmd[1] == "KILL"


def test_monitor_inside_exec_is_refused_in_place(c):
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("MONITOR") == "QUEUED"
    assert c.cmd("PING") == "QUEUED"
    rep = c.cmd("EXEC")
    assert rep[0] == Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
    assert rep[1] == "PONG"
