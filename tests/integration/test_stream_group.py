"""Stream consumer groups: XGROUP, XREADGROUP (COUNT, BLOCK, NOACK, CLAIM),
XACK, XACKDEL, XPENDING, XCLAIM, XAUTOCLAIM and XINFO, with Redis 8.4's
replies and error texts in RESP2 and RESP3; blocking group readers across
threads; what the group commands propagate.

Every test that uses only what Redis 7.0 has also passes against a stock
redis-server (--host/--port); the 8.2-8.4 additions (XACKDEL, XREADGROUP
CLAIM, the '+' id text) are skipped on a server without XACKDEL.
"""
import threading
import time

import pytest
import redis

from resp import Error, Map, encode
from test_exec import debug_server, journal, journal_cmds

NOKEY_CREATE = ("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use "
                "the MKSTREAM option to create an empty stream automatically.")
BAD_ID = "ERR Invalid stream ID specified as stream command argument"


@pytest.fixture
def v84(server, r):
    """Skip unless the server has the Redis 8 stream commands and behaviour."""
    c = server.conn()
    known = c.cmd("COMMAND", "INFO", "xackdel") != [None]
    c.close()
    if not known:
        pytest.skip("needs Redis 8 streams")


def setup_stream(c, key="s", n=3, group="g", start="0"):
    for i in range(1, n + 1):
        assert c.cmd("XADD", key, "%d-0" % i, "f", "v%d" % i) == b"%d-0" % i
    if group:
        assert c.cmd("XGROUP", "CREATE", key, group, start) == "OK"


def wait_blocked(r, n, timeout=5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if int(r.info("clients")["blocked_clients"]) == n:
            return
        time.sleep(0.005)
    raise AssertionError("blocked_clients never reached %d" % n)


def entry(i):
    return [b"%d-0" % i, [b"f", b"v%d" % i]]


# ---- XGROUP -----------------------------------------------------------------


def test_xgroup_create(conn, r):
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "$") == Error(NOKEY_CREATE)
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == "OK"
    assert conn.cmd("TYPE", "s") == "stream"
    assert conn.cmd("XLEN", "s") == 0
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "$") == Error("BUSYGROUP Consumer Group name already exists")
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == Error("BUSYGROUP Consumer Group name already exists")
    conn.cmd("XADD", "s", "5-1", "a", "1")
    assert conn.cmd("XGROUP", "CREATE", "s", "g2", "$") == "OK"
    assert conn.cmd("XGROUP", "CREATE", "s", "g3", "3") == "OK"
    assert conn.cmd("XGROUP", "CREATE", "s", "g4", "0-0") == "OK"
    groups = {g[1]: g for g in conn.cmd("XINFO", "GROUPS", "s")}
    assert groups[b"g2"][7] == b"5-1"
    assert groups[b"g3"][7] == b"3-0"
    assert groups[b"g4"][7] == b"0-0"
    # The strict form: '-' and '+' are no ids here.
    assert conn.cmd("XGROUP", "CREATE", "s", "g5", "-") == Error(BAD_ID)
    assert conn.cmd("XGROUP", "CREATE", "s", "g5", "+") == Error(BAD_ID)
    assert conn.cmd("XGROUP", "CREATE", "s", "g5", "abc") == Error(BAD_ID)
    r.set("str", "x")
    assert conn.cmd("XGROUP", "CREATE", "str", "g", "$").startswith("WRONGTYPE")
    assert conn.cmd("XGROUP", "CREATE", "str", "g", "$", "MKSTREAM").startswith("WRONGTYPE")


def test_xgroup_create_options(conn):
    setup_stream(conn, group=None, n=4)
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", -3) == \
        Error("ERR value for ENTRIESREAD must be positive or -1")
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "x") == \
        Error("ERR value is not an integer or out of range")
    # Options come before the key: an unknown one is the subcommand's error.
    assert conn.cmd("XGROUP", "CREATE", "nokey", "g", "$", "FOO") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.")
    assert conn.cmd("XGROUP", "create", "s", "g", "$", "ENTRIESREAD") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.")
    assert conn.cmd("XGROUP", "CREATE", "s", "g0", "$", "ENTRIESREAD", 0) == "OK"
    assert conn.cmd("XGROUP", "CREATE", "s", "g1", "$", "ENTRIESREAD", -1) == "OK"
    assert conn.cmd("XGROUP", "CREATE", "s", "g3", "$", "ENTRIESREAD", 3) == "OK"
    read = {g[1]: (g[9], g[11]) for g in conn.cmd("XINFO", "GROUPS", "s")}
    assert read == {b"g0": (0, 4), b"g1": (None, 0), b"g3": (3, 1)}
    assert conn.cmd("XGROUP", "CREATE", "s") == Error("ERR wrong number of arguments for 'xgroup|create' command")
    assert conn.cmd("XGROUP", "FOO") == Error("ERR unknown subcommand 'FOO'. Try XGROUP HELP.")


def test_xgroup_entriesread_is_capped(conn, v84):
    setup_stream(conn, group=None, n=4)
    # More than the stream ever had is capped (Redis 8).
    assert conn.cmd("XGROUP", "CREATE", "s", "g9", "$", "ENTRIESREAD", 9999, "MKSTREAM") == "OK"
    g = conn.cmd("XINFO", "GROUPS", "s")[0]
    assert (g[9], g[11]) == (4, 0)
    assert conn.cmd("XGROUP", "SETID", "s", "g9", "$", "ENTRIESREAD", 9999) == "OK"
    g = conn.cmd("XINFO", "GROUPS", "s")[0]
    assert (g[9], g[11]) == (4, 0)


def test_xgroup_setid(conn):
    setup_stream(conn)
    assert conn.cmd("XGROUP", "SETID", "s", "g", "$") == "OK"
    assert conn.cmd("XINFO", "GROUPS", "s")[0][7] == b"3-0"
    assert conn.cmd("XGROUP", "SETID", "s", "g", "2") == "OK"
    assert conn.cmd("XINFO", "GROUPS", "s")[0][7] == b"2-0"
    # Not the strict form: '-' is 0-0 here.
    assert conn.cmd("XGROUP", "SETID", "s", "g", "-") == "OK"
    assert conn.cmd("XINFO", "GROUPS", "s")[0][7] == b"0-0"
    assert conn.cmd("XGROUP", "SETID", "s", "g", "1-0", "ENTRIESREAD", 1) == "OK"
    g = conn.cmd("XINFO", "GROUPS", "s")[0]
    assert (g[7], g[9], g[11]) == (b"1-0", 1, 2)
    assert conn.cmd("XGROUP", "SETID", "s", "nog", "0") == Error("NOGROUP No such consumer group 'nog' for key name 's'")
    assert conn.cmd("XGROUP", "SETID", "nokey", "g", "0") == Error(NOKEY_CREATE)
    assert conn.cmd("XGROUP", "SETID", "s", "g", "0", "MKSTREAM") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.")
    assert conn.cmd("XGROUP", "SETID", "s", "g", "x") == Error(BAD_ID)
    assert conn.cmd("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", -2) == \
        Error("ERR value for ENTRIESREAD must be positive or -1")


def test_xgroup_destroy_and_consumers(conn):
    setup_stream(conn)
    assert conn.cmd("XGROUP", "DESTROY", "nokey", "g") == Error(NOKEY_CREATE)
    assert conn.cmd("XGROUP", "CREATECONSUMER", "s", "nog", "c") == \
        Error("NOGROUP No such consumer group 'nog' for key name 's'")
    assert conn.cmd("XGROUP", "DELCONSUMER", "s", "nog", "c") == \
        Error("NOGROUP No such consumer group 'nog' for key name 's'")
    assert conn.cmd("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 1
    assert conn.cmd("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 0
    assert conn.cmd("XGROUP", "CREATECONSUMER", "s", "g", "bob") == 1
    conn.cmd("XREADGROUP", "GROUP", "g", "bob", "COUNT", 2, "STREAMS", "s", ">")
    cons = conn.cmd("XINFO", "CONSUMERS", "s", "g")
    assert [(c[1], c[3]) for c in cons] == [(b"alice", 0), (b"bob", 2)]
    assert conn.cmd("XGROUP", "DELCONSUMER", "s", "g", "nobody") == 0
    assert conn.cmd("XGROUP", "DELCONSUMER", "s", "g", "bob") == 2
    assert conn.cmd("XPENDING", "s", "g") == [0, None, None, None]
    assert [c[1] for c in conn.cmd("XINFO", "CONSUMERS", "s", "g")] == [b"alice"]
    assert conn.cmd("XGROUP", "DESTROY", "s", "nog") == 0
    assert conn.cmd("XGROUP", "DESTROY", "s", "g") == 1
    assert conn.cmd("XGROUP", "DESTROY", "s", "g") == 0
    assert conn.cmd("XINFO", "GROUPS", "s") == []
    assert conn.cmd("XGROUP", "DESTROY", "s") == Error("ERR wrong number of arguments for 'xgroup|destroy' command")
    assert conn.cmd("XGROUP", "CREATECONSUMER", "s", "g") == \
        Error("ERR wrong number of arguments for 'xgroup|createconsumer' command")


def test_xgroup_and_xinfo_help(conn):
    assert conn.cmd("XGROUP", "HELP") == [
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    ]
    assert conn.cmd("XINFO", "HELP") == [
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    ]


# ---- XREADGROUP -------------------------------------------------------------


def test_xreadgroup_new_entries_and_history(conn):
    setup_stream(conn, n=4)
    assert conn.cmd("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">") == [[b"s", [entry(1)]]]
    assert conn.cmd("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") == [[b"s", [entry(2), entry(3), entry(4)]]]
    # Nothing new: a null array.
    assert conn.cmd_raw("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") == b"*-1\r\n"
    # History: each consumer sees its own pending entries after the id.
    assert conn.cmd("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0") == [[b"s", [entry(1)]]]
    assert conn.cmd("XREADGROUP", "GROUP", "g", "bob", "COUNT", 2, "STREAMS", "s", "0") == [[b"s", [entry(2), entry(3)]]]
    assert conn.cmd("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "3-0") == [[b"s", [entry(4)]]]
    assert conn.cmd("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "4") == [[b"s", []]]
    # A history read delivers again.
    p = {e[0]: e[3] for e in conn.cmd("XPENDING", "s", "g", "-", "+", 10)}
    assert p == {b"1-0": 2, b"2-0": 2, b"3-0": 2, b"4-0": 2}
    # An acknowledged entry leaves the history; a deleted one shows as nil.
    assert conn.cmd("XACK", "s", "g", "2-0") == 1
    assert conn.cmd("XDEL", "s", "3-0") == 1
    assert conn.cmd("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0") == [[b"s", [[b"3-0", None], entry(4)]]]
    assert conn.cmd_raw("XREADGROUP", "GROUP", "g", "bob", "COUNT", 1, "STREAMS", "s", "0") == \
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*-1\r\n"
    # A consumer that never read: an empty history, created all the same.
    assert conn.cmd("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0") == [[b"s", []]]
    assert [c[1] for c in conn.cmd("XINFO", "CONSUMERS", "s", "g")] == [b"alice", b"bob", b"carol"]


def test_xreadgroup_resp3(conn3):
    setup_stream(conn3, n=2)
    rep = conn3.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert isinstance(rep, Map) and rep == [(b"s", [entry(1), entry(2)])]
    assert conn3.cmd_raw("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == b"_\r\n"
    conn3.cmd("XDEL", "s", "1-0")
    assert conn3.cmd_raw("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", "0") == \
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n_\r\n"


def test_xreadgroup_several_streams(conn):
    setup_stream(conn, key="{t}a", n=2)
    setup_stream(conn, key="{t}b", n=3)
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 2, "STREAMS", "{t}a", "{t}b", ">", ">")
    assert rep == [[b"{t}a", [entry(1), entry(2)]], [b"{t}b", [entry(1), entry(2)]]]
    # Only the streams with something to give are in the reply.
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "{t}a", "{t}b", ">", ">") == [[b"{t}b", [entry(3)]]]
    # History and '>' mixed.
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "{t}a", "{t}b", "1", ">")
    assert rep == [[b"{t}a", [entry(2)]]]


def test_xreadgroup_errors(conn, r):
    setup_stream(conn)
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", ">", ">") == \
        Error("NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option")
    assert conn.cmd("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">") == \
        Error("NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option")
    assert conn.cmd("XREADGROUP", "GROUP", "", "c", "STREAMS", "s", ">").startswith("NOGROUP")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$") == Error(
        "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by "
        "specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "abc") == Error(BAD_ID)
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "-") == Error(BAD_ID)
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s") == \
        Error("ERR wrong number of arguments for 'xreadgroup' command")
    assert conn.cmd("XREADGROUP", "COUNT", 1, "BLOCK", 1, "STREAMS", "s", ">") == \
        Error("ERR Missing GROUP option for XREADGROUP")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", "s", ">") == Error("ERR syntax error")
    assert conn.cmd("XREADGROUP", "GROUPS", "g", "c", "STREAMS", "s", ">") == Error("ERR syntax error")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">") == \
        Error("ERR value is not an integer or out of range")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", "x", "STREAMS", "s", ">") == \
        Error("ERR timeout is not an integer or out of range")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", -1, "STREAMS", "s", ">") == \
        Error("ERR timeout is negative")
    r.set("str", "x")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">").startswith("WRONGTYPE")
    # The errors come before any change: no consumer was created.
    assert conn.cmd("XINFO", "CONSUMERS", "s", "g") == []
    # COUNT below zero is no limit.
    assert len(conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", -5, "STREAMS", "s", ">")[0][1]) == 3


def test_xreadgroup_plus_id_and_unbalanced(conn, v84):
    setup_stream(conn)
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s") == \
        Error("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", ">", "s") == \
        Error("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+") == Error(
        "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by "
        "specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.")


def test_xreadgroup_noack_and_setid(conn):
    setup_stream(conn, n=5)
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c1", "NOACK", "COUNT", 2, "STREAMS", "s", ">") == \
        [[b"s", [entry(1), entry(2)]]]
    assert conn.cmd("XPENDING", "s", "g") == [0, None, None, None]
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", ">") == [[b"s", [entry(3)]]]
    # Moving the group back hands pending entries to whoever reads them.
    assert conn.cmd("XGROUP", "SETID", "s", "g", "0") == "OK"
    conn.cmd("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">")
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in p] == [(b"%d-0" % i, b"c2", 1) for i in range(1, 6)]
    g = conn.cmd("XINFO", "GROUPS", "s")[0]
    assert (g[7], g[9], g[11]) == (b"5-0", 5, 0)


def test_xreadgroup_entries_read_and_lag(conn):
    for i in range(1, 6):
        conn.cmd("XADD", "x", "%d-0" % i, "data", i)
    conn.cmd("XGROUP", "CREATE", "x", "g1", "0")
    info = lambda: {k: v for k, v in zip(*[iter(conn.cmd("XINFO", "GROUPS", "x")[0])] * 2)}
    assert (info()[b"entries-read"], info()[b"lag"]) == (None, 5)
    conn.cmd("XREADGROUP", "GROUP", "g1", "c", "COUNT", 1, "STREAMS", "x", ">")
    assert (info()[b"entries-read"], info()[b"lag"]) == (1, 4)
    conn.cmd("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "x", ">")
    assert (info()[b"entries-read"], info()[b"lag"]) == (5, 0)
    conn.cmd("XADD", "x", "6-0", "data", 6)
    assert (info()[b"entries-read"], info()[b"lag"]) == (5, 1)


def group_info(c, key, name="g"):
    for g in c.cmd("XINFO", "GROUPS", key):
        d = dict(zip(*[iter(g)] * 2))
        if d[b"name"] == name.encode():
            return d
    return None


def test_lag_after_trims_and_deletes(conn, v84):
    """Redis 8's rules: an emptied stream has no lag; a tombstone behind the
    group leaves its counter exact, one ahead makes the lag unknown; a
    group a trim passed has the rest of the stream to read."""
    setup_stream(conn, "s", n=10)
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 9, "STREAMS", "s", ">")
    assert (group_info(conn, "s")[b"entries-read"], group_info(conn, "s")[b"lag"]) == (9, 1)
    assert conn.cmd("XTRIM", "s", "MAXLEN", 0) == 10
    assert group_info(conn, "s")[b"lag"] == 0
    # The next entry is all there is to read.
    conn.cmd("XADD", "s", "11-0", "f", "v11")
    assert group_info(conn, "s")[b"lag"] == 1
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert (group_info(conn, "s")[b"entries-read"], group_info(conn, "s")[b"lag"]) == (11, 0)

    setup_stream(conn, "t", n=10)
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 4, "STREAMS", "t", ">")
    conn.cmd("XDEL", "t", "2-0")
    assert group_info(conn, "t")[b"lag"] == 6
    conn.cmd("XDEL", "t", "7-0")
    assert group_info(conn, "t")[b"lag"] is None
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", ">")
    assert (group_info(conn, "t")[b"entries-read"], group_info(conn, "t")[b"lag"]) == (10, 0)

    # A trim past the group: the lag is what is left, and the next read
    # counts from the first entry.
    setup_stream(conn, "u", n=10)
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 2, "STREAMS", "u", ">")
    conn.cmd("XDEL", "u", "3-0")
    assert group_info(conn, "u")[b"lag"] is None
    assert conn.cmd("XTRIM", "u", "MINID", "5-0") == 3
    assert group_info(conn, "u")[b"lag"] == 6
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "u", ">")
    assert (group_info(conn, "u")[b"entries-read"], group_info(conn, "u")[b"lag"]) == (5, 5)


def test_xreadgroup_seen_and_active_time(conn, v84):
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    conn.cmd("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")
    time.sleep(0.1)
    c = dict(zip(*[iter(conn.cmd("XINFO", "CONSUMERS", "s", "g")[0])] * 2))
    assert c[b"idle"] >= 100 and c[b"inactive"] == -1
    conn.cmd("XADD", "s", "*", "f", "v")
    conn.cmd("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")
    c = dict(zip(*[iter(conn.cmd("XINFO", "CONSUMERS", "s", "g")[0])] * 2))
    assert c[b"idle"] < 80 and c[b"inactive"] < 80
    time.sleep(0.1)
    conn.cmd("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")
    c = dict(zip(*[iter(conn.cmd("XINFO", "CONSUMERS", "s", "g")[0])] * 2))
    assert c[b"idle"] < 80 and c[b"inactive"] >= 100


# ---- XREADGROUP BLOCK --------------------------------------------------------


def test_xreadgroup_block_served_by_xadd(server, r):
    r.xgroup_create("s", "g", "$", mkstream=True)
    c = server.conn()
    c.send(b"*9\r\n$10\r\nXREADGROUP\r\n$5\r\nGROUP\r\n$1\r\ng\r\n$1\r\nc\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n"
           b"$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n>\r\n")
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="7-0")
    assert c.read() == [[b"s", [[b"7-0", [b"f", b"v"]]]]]
    assert r.xpending("s", "g")["pending"] == 1
    c.close()


def test_xreadgroup_block_timeout_and_nonblocking_cases(conn, r):
    setup_stream(conn, n=1)
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    t = time.time()
    assert conn.cmd_raw("XREADGROUP", "GROUP", "g", "c", "BLOCK", 100, "STREAMS", "s", ">") == b"*-1\r\n"
    assert time.time() - t >= 0.09
    # A history id never blocks, even when there is nothing.
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", "9") == [[b"s", []]]
    # An entry added and deleted leaves nothing to give: it blocks, then nil.
    conn.cmd("XADD", "s", "5-0", "f", "v")
    conn.cmd("XDEL", "s", "5-0")
    assert conn.cmd_raw("XREADGROUP", "GROUP", "g", "c", "BLOCK", 50, "STREAMS", "s", ">") == b"*-1\r\n"
    # Inside MULTI it answers as the non-blocking form.
    assert conn.cmd("MULTI") == "OK"
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">") == "QUEUED"
    assert conn.cmd("EXEC") == [None]


def test_xreadgroup_block_in_a_script(conn, v84):
    setup_stream(conn, n=1)
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert conn.cmd("EVAL", "return redis.pcall('XREADGROUP','GROUP','g','c','BLOCK',0,'STREAMS',KEYS[1],'>')",
                    1, "s") is None


def blocked_reader(server, *args):
    c = server.conn(timeout=20)
    c.send(encode("XREADGROUP", *args))
    return c


@pytest.mark.parametrize("how", ["del", "destroy", "flushall", "unlink", "expire", "rename"])
def test_xreadgroup_block_woken_by_removal(server, r, how, v84):
    r.xgroup_create("s", "g", "$", mkstream=True)
    c = blocked_reader(server, "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
    wait_blocked(r, 1)
    if how == "del":
        r.delete("s")
    elif how == "unlink":
        r.unlink("s")
    elif how == "destroy":
        assert r.xgroup_destroy("s", "g") == 1
    elif how == "flushall":
        r.flushall()
    elif how == "expire":
        r.pexpire("s", 1)
    elif how == "rename":
        r.rename("s", "s2")
    rep = c.read()
    assert isinstance(rep, Error) and rep == \
        "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"
    wait_blocked(r, 0)
    c.close()


def test_xreadgroup_block_wrongtype_and_rename_with_data(server, r, v84):
    r.xgroup_create("s", "g", "$", mkstream=True)
    c = blocked_reader(server, "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.set("s", "v")
    assert c.read().startswith("WRONGTYPE")
    c.close()
    r.delete("s")
    r.xgroup_create("{t}a", "g", "$", mkstream=True)
    c = blocked_reader(server, "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "{t}a", ">")
    wait_blocked(r, 1)
    r.xgroup_create("{t}b", "g", "$", mkstream=True)
    r.xadd("{t}b", {"f1": "v1"}, id="100-0")
    r.rename("{t}b", "{t}a")
    assert c.read() == [[b"{t}a", [[b"100-0", [b"f1", b"v1"]]]]]
    c.close()


def test_xreadgroup_block_client_unblock(server, r):
    r.xgroup_create("s", "g", "$", mkstream=True)
    c = server.conn()
    cid = c.cmd("CLIENT", "ID")
    c.send(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">"))
    wait_blocked(r, 1)
    assert r.client_unblock(cid) == 1
    assert c.read() is None
    c.send(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">"))
    wait_blocked(r, 1)
    assert r.client_unblock(cid, error=True) == 1
    assert c.read() == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
    c.close()


def test_xreadgroup_block_waiters_served_in_order(server, r):
    """Group readers blocked on one key get new entries in the order they
    blocked, one entry each when COUNT 1."""
    r.xgroup_create("s", "g", "$", mkstream=True)
    readers = []
    for i in range(4):
        readers.append(blocked_reader(server, "GROUP", "g", "c%d" % i, "COUNT", 1, "BLOCK", 0, "STREAMS", "s", ">"))
        wait_blocked(r, i + 1)
    for i in range(4):
        r.xadd("s", {"n": str(i)}, id="%d-1" % (i + 1))
        rep = readers[i].read()
        assert rep == [[b"s", [[b"%d-1" % (i + 1), [b"n", str(i).encode()]]]]], (i, rep)
        wait_blocked(r, 3 - i)
    owners = {e["message_id"]: e["consumer"] for e in r.xpending_range("s", "g", "-", "+", 10)}
    assert owners == {b"%d-1" % (i + 1): b"c%d" % i for i in range(4)}
    for c in readers:
        c.close()


def test_xreadgroup_block_one_xadd_of_two_entries_serves_two(server, r):
    r.xgroup_create("s", "g", "$", mkstream=True)
    a = blocked_reader(server, "GROUP", "g", "a", "COUNT", 1, "BLOCK", 0, "STREAMS", "s", ">")
    wait_blocked(r, 1)
    b = blocked_reader(server, "GROUP", "g", "b", "COUNT", 1, "BLOCK", 0, "STREAMS", "s", ">")
    wait_blocked(r, 2)
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "1"}, id="1-0")
    p.xadd("s", {"f": "2"}, id="2-0")
    p.execute()
    assert a.read() == [[b"s", [[b"1-0", [b"f", b"1"]]]]]
    assert b.read() == [[b"s", [[b"2-0", [b"f", b"2"]]]]]
    a.close()
    b.close()


def test_xreadgroup_block_other_group_and_xread_all_served(server, r):
    r.xgroup_create("s", "g1", "$", mkstream=True)
    r.xgroup_create("s", "g2", "$")
    a = blocked_reader(server, "GROUP", "g1", "a", "BLOCK", 0, "STREAMS", "s", ">")
    b = blocked_reader(server, "GROUP", "g2", "b", "BLOCK", 0, "STREAMS", "s", ">")
    x = server.conn()
    x.send(encode("XREAD", "BLOCK", 0, "STREAMS", "s", "$"))
    wait_blocked(r, 3)
    r.xadd("s", {"f": "v"}, id="3-0")
    want = [[b"s", [[b"3-0", [b"f", b"v"]]]]]
    assert a.read() == want and b.read() == want and x.read() == want
    for c in (a, b, x):
        c.close()


def test_cross_thread_group_readers_exactly_once(new_server):
    """16 consumers blocked in XREADGROUP on a 4-thread server, 2000 entries
    from 4 producers: each entry delivered exactly once, none lost."""
    srv = new_server(threads=4)
    r = srv.client()
    r.xgroup_create("s", "g", "$", mkstream=True)
    total, nprod, ncons = 2000, 4, 16
    got = [[] for _ in range(ncons)]
    done = threading.Event()
    errors = []

    def consume(i):
        c = srv.client(socket_timeout=30)
        try:
            while True:
                rep = c.execute_command("XREADGROUP", "GROUP", "g", "c%d" % i, "COUNT", 3, "BLOCK", 1000,
                                        "STREAMS", "s", ">")
                if rep:
                    for _, entries in rep:
                        got[i].extend(e[0] for e in entries)
                elif done.is_set():
                    return
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def produce(p):
        c = srv.client()
        for j in range(total // nprod):
            c.xadd("s", {"p": str(p), "j": str(j)})

    consumers = [threading.Thread(target=consume, args=(i,)) for i in range(ncons)]
    for t in consumers:
        t.start()
    wait_blocked(r, ncons, timeout=10)
    producers = [threading.Thread(target=produce, args=(p,)) for p in range(nprod)]
    for t in producers:
        t.start()
    for t in producers:
        t.join()
    deadline = time.time() + 30
    while sum(len(g) for g in got) < total and time.time() < deadline:
        time.sleep(0.05)
    done.set()
    for t in consumers:
        t.join()
    assert not errors, errors
    ids = [i for g in got for i in g]
    assert len(ids) == total and len(set(ids)) == total
    assert set(ids) == {e[0] for e in r.xrange("s")}
    pend = r.xpending("s", "g")
    assert pend["pending"] == total
    per = {c["name"]: c["pending"] for c in pend["consumers"]}
    assert per == {b"c%d" % i: len(got[i]) for i in range(ncons) if got[i]}
    assert sum(1 for g in got if g) > 1  # the work was shared


def test_cross_thread_group_readers_removed_while_blocked(new_server):
    srv = new_server(threads=4)
    r = srv.client()
    for how in ("del", "destroy"):
        r.xgroup_create("s", "g", "$", mkstream=True)
        readers = [blocked_reader(srv, "GROUP", "g", "c%d" % i, "BLOCK", 0, "STREAMS", "s", ">") for i in range(8)]
        wait_blocked(r, 8)
        if how == "del":
            r.delete("s")
        else:
            r.xgroup_destroy("s", "g")
        for c in readers:
            assert c.read() == "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"
            c.close()
        wait_blocked(r, 0)
        r.delete("s")


# ---- XREADGROUP CLAIM (8.4) --------------------------------------------------


def test_xreadgroup_claim(conn, v84):
    setup_stream(conn, n=3)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "COUNT", 2, "STREAMS", "s", ">")
    time.sleep(0.06)
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 50, "STREAMS", "s", ">")
    assert rep[0][0] == b"s"
    msgs = rep[0][1]
    assert [m[0] for m in msgs] == [b"1-0", b"2-0", b"3-0"]
    assert [m[1] for m in msgs] == [[b"f", b"v1"], [b"f", b"v2"], [b"f", b"v3"]]
    # Claimed: idle time and deliveries so far; new ones: 0 and 0.
    assert msgs[0][2] >= 50 and msgs[0][3] == 1 and msgs[1][3] == 1
    assert msgs[2][2:] == [0, 0]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in p] == [(b"1-0", b"c2", 2), (b"2-0", b"c2", 2), (b"3-0", b"c2", 1)]
    # Not idle enough: nothing to claim, nothing new.
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c3", "CLAIM", 100000, "STREAMS", "s", ">") is None
    # min-idle-time 0 claims everything pending.
    time.sleep(0.005)
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c3", "CLAIM", 0, "COUNT", 2, "STREAMS", "s", ">")
    assert [m[0] for m in rep[0][1]] == [b"1-0", b"2-0"]
    assert conn.cmd_raw("XREADGROUP", "GROUP", "g", "c3", "CLAIM", 0, "COUNT", 1, "STREAMS", "s", ">").startswith(
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:")


def test_xreadgroup_claim_ties_by_id(conn, v84):
    """Records delivered in the same millisecond are claimed in id order,
    whatever order they got that time in."""
    setup_stream(conn, n=4)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    for i in (3, 1, 4, 2):
        assert conn.cmd("XCLAIM", "s", "g", "c1", 0, "%d-0" % i, "TIME", 1000, "JUSTID") == [b"%d-0" % i]
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 0, "COUNT", 3, "STREAMS", "s", ">")
    assert [m[0] for m in rep[0][1]] == [b"1-0", b"2-0", b"3-0"]
    # Claimed again in the same millisecond, the same order holds.
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c3", "CLAIM", 0, "COUNT", 4, "STREAMS", "s", ">")
    assert [m[0] for m in rep[0][1]] == [b"4-0", b"1-0", b"2-0", b"3-0"]


def test_xreadgroup_claim_count_budget_and_noack(conn, v84):
    setup_stream(conn, n=4)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "COUNT", 2, "STREAMS", "s", ">")
    # One COUNT for both: two claimed, then one new.
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 0, "COUNT", 3, "STREAMS", "s", ">")
    assert [(m[0], m[3]) for m in rep[0][1]] == [(b"1-0", 1), (b"2-0", 1), (b"3-0", 0)]
    # NOACK leaves claims pending (their owner changes) and new ones out.
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c3", "NOACK", "CLAIM", 0, "STREAMS", "s", ">")
    assert [m[0] for m in rep[0][1]] == [b"1-0", b"2-0", b"3-0", b"4-0"]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1]) for e in p] == [(b"1-0", b"c3"), (b"2-0", b"c3"), (b"3-0", b"c3")]


def test_xreadgroup_claim_skips_deleted_and_history(conn, v84):
    setup_stream(conn, n=3)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    conn.cmd("XDEL", "s", "1-0")
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 0, "STREAMS", "s", ">")
    assert [m[0] for m in rep[0][1]] == [b"2-0", b"3-0"]
    # The deleted one stays pending with its owner.
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1]) for e in p] == [(b"1-0", b"c1"), (b"2-0", b"c2"), (b"3-0", b"c2")]
    # With a history id, CLAIM is ignored.
    rep = conn.cmd("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 0, "STREAMS", "s", "0")
    assert rep == [[b"s", [entry(2), entry(3)]]]
    # Errors.
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "CLAIM", "x", "STREAMS", "s", ">") == \
        Error("ERR min-idle-time is not an integer or out of range")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "CLAIM", "-0", "STREAMS", "s", ">") == \
        Error("ERR min-idle-time is not an integer or out of range")
    assert conn.cmd("XREADGROUP", "GROUP", "g", "c", "CLAIM", -10, "STREAMS", "s", ">") == \
        Error("ERR min-idle-time must be a positive integer")


def test_xreadgroup_claim_block_woken_when_idle_enough(server, r, v84):
    r.xadd("s", {"f": "v1"}, id="1-0")
    r.xgroup_create("s", "g", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    t = time.time()
    c = blocked_reader(server, "GROUP", "g", "c2", "BLOCK", 5000, "CLAIM", 150, "STREAMS", "s", ">")
    rep = c.read()
    assert 0.1 < time.time() - t < 2
    assert rep[0][1][0][0] == b"1-0" and rep[0][1][0][3] == 1
    # A new entry wakes it before min-idle-time.
    c.send(encode("XREADGROUP", "GROUP", "g", "c2", "BLOCK", 5000, "CLAIM", 10000, "STREAMS", "s", ">"))
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v2"}, id="2-0")
    rep = c.read()
    assert rep == [[b"s", [[b"2-0", [b"f", b"v2"], 0, 0]]]]
    c.close()


# ---- XACK, XACKDEL -----------------------------------------------------------


def test_xack(conn, r):
    assert conn.cmd("XACK", "nokey", "g", "1-0") == 0
    setup_stream(conn)
    assert conn.cmd("XACK", "s", "nog", "1-0") == 0
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert conn.cmd("XACK", "s", "g", "1-0", "1-0", "9-0") == 1
    assert conn.cmd("XACK", "s", "g", "1-0") == 0
    # All or nothing: one bad id and nothing is acknowledged.
    assert conn.cmd("XACK", "s", "g", "2-0", "bad") == Error(BAD_ID)
    assert conn.cmd("XACK", "s", "g", "2", "3") == 2
    r.set("str", "v")
    assert conn.cmd("XACK", "str", "g", "1").startswith("WRONGTYPE")


def test_xackdel(conn, v84):
    assert conn.cmd("XACKDEL", "s", "g") == Error("ERR wrong number of arguments for 'xackdel' command")
    assert conn.cmd("XACKDEL", "s", "g", "IDS", 2, "1-1", "2-2") == [-1, -1]
    conn.cmd("XADD", "s", "1-0", "f", "v")
    assert conn.cmd("XACKDEL", "s", "g", "IDS", 2, "1-1", "2-2") == [-1, -1]
    conn.cmd("XGROUP", "CREATE", "s", "g", "0")
    for bad in ("abc", 0, -5):
        assert conn.cmd("XACKDEL", "s", "g", "IDS", bad, "1-1") == Error("ERR Number of IDs must be a positive integer")
    assert conn.cmd("XACKDEL", "s", "g", "IDS", 3, "1-1", "2-2") == \
        Error("ERR The `numids` parameter must match the number of arguments")
    assert conn.cmd("XACKDEL", "s", "g", "IDS", 1, "1-1", "2-2") == Error("ERR syntax error")
    assert conn.cmd("XACKDEL", "s", "g", "KEEPREF", "DELREF", "IDS", 1, "1-1") == Error("ERR syntax error")
    assert conn.cmd("XACKDEL", "s", "g", "ACKED", "ACKED", "IDS", 1, "1-1") == Error("ERR syntax error")
    assert conn.cmd("XACKDEL", "s", "g", "KEEPREF", "x", "y") == Error("ERR syntax error")
    assert conn.cmd("XACKDEL", "s", "g", "KEEPREF", "DELREF", "x") == Error("ERR syntax error")
    assert conn.cmd("XACKDEL", "s", "g", "IDS", 1, "bad") == Error(BAD_ID)
    # The policy may follow the ids.
    assert conn.cmd("XACKDEL", "s", "g", "IDS", 1, "1-0", "DELREF") == [-1]


def two_groups(conn):
    conn.cmd("DEL", "m")
    conn.cmd("XADD", "m", "1-0", "f", "v")
    conn.cmd("XADD", "m", "2-0", "f", "v")
    conn.cmd("XGROUP", "CREATE", "m", "g1", "0")
    conn.cmd("XGROUP", "CREATE", "m", "g2", "0")
    conn.cmd("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", "m", ">")
    conn.cmd("XREADGROUP", "GROUP", "g2", "c2", "STREAMS", "m", ">")


def test_xackdel_policies(conn, v84):
    two_groups(conn)
    assert conn.cmd("XACKDEL", "m", "g1", "DELREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert conn.cmd("XLEN", "m") == 0
    assert conn.cmd("XPENDING", "m", "g1") == [0, None, None, None]
    assert conn.cmd("XPENDING", "m", "g2") == [0, None, None, None]
    assert conn.cmd("XACKDEL", "m", "g2", "DELREF", "IDS", 2, "1-0", "2-0") == [-1, -1]
    two_groups(conn)
    assert conn.cmd("XACKDEL", "m", "g1", "ACKED", "IDS", 2, "1-0", "2-0") == [2, 2]
    assert conn.cmd("XLEN", "m") == 2
    assert conn.cmd("XPENDING", "m", "g1") == [0, None, None, None]
    assert conn.cmd("XPENDING", "m", "g2") == [2, b"1-0", b"2-0", [[b"c2", b"2"]]]
    assert conn.cmd("XACKDEL", "m", "g2", "ACKED", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert conn.cmd("XLEN", "m") == 0
    two_groups(conn)
    assert conn.cmd("XACKDEL", "m", "g1", "KEEPREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert conn.cmd("XLEN", "m") == 0
    assert conn.cmd("XPENDING", "m", "g2") == [2, b"1-0", b"2-0", [[b"c2", b"2"]]]
    # Pending but no longer in the stream: still acknowledged and "deleted".
    assert conn.cmd("XACKDEL", "m", "g2", "IDS", 2, "1-0", "2-0") == [1, 1]
    info = dict(zip(*[iter(conn.cmd("XINFO", "STREAM", "m"))] * 2))
    assert info[b"max-deleted-entry-id"] == b"2-0" and info[b"recorded-first-entry-id"] == b"0-0"


# ---- XPENDING -----------------------------------------------------------------


def test_xpending(conn, r):
    setup_stream(conn, n=4)
    assert conn.cmd("XPENDING", "s", "g") == [0, None, None, None]
    assert conn.cmd("XPENDING", "s", "g", "-", "+", 10) == []
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "COUNT", 2, "STREAMS", "s", ">")
    conn.cmd("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">")
    assert conn.cmd("XPENDING", "s", "g") == [4, b"1-0", b"4-0", [[b"c1", b"2"], [b"c2", b"2"]]]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in p] == [(b"1-0", b"c1", 1), (b"2-0", b"c1", 1), (b"3-0", b"c2", 1),
                                                (b"4-0", b"c2", 1)]
    assert all(isinstance(e[2], int) and e[2] >= 0 for e in p)
    assert [e[0] for e in conn.cmd("XPENDING", "s", "g", "-", "+", 10, "c2")] == [b"3-0", b"4-0"]
    assert conn.cmd("XPENDING", "s", "g", "-", "+", 10, "nobody") == []
    assert [e[0] for e in conn.cmd("XPENDING", "s", "g", "(1-0", "(4-0", 10)] == [b"2-0", b"3-0"]
    assert [e[0] for e in conn.cmd("XPENDING", "s", "g", "2", "3", 10)] == [b"2-0", b"3-0"]
    assert [e[0] for e in conn.cmd("XPENDING", "s", "g", "-", "+", 1)] == [b"1-0"]
    assert conn.cmd("XPENDING", "s", "g", "-", "+", 0) == []
    assert conn.cmd("XPENDING", "s", "g", "-", "+", -3) == []
    # IDLE: a filter on time since the last delivery.
    conn.cmd("XCLAIM", "s", "g", "c1", 0, "1-0", "IDLE", 100000)
    assert [e[0] for e in conn.cmd("XPENDING", "s", "g", "IDLE", 50000, "-", "+", 10)] == [b"1-0"]
    assert [e[0] for e in conn.cmd("XPENDING", "s", "g", "IDLE", 50000, "-", "+", 10, "c2")] == []
    assert conn.cmd("XPENDING", "s", "g", "IDLE", 99999999, "-", "+", 10) == []
    # Errors: argument counts first, then values, then the key and group.
    assert conn.cmd("XPENDING", "s", "g", "-") == Error("ERR syntax error")
    assert conn.cmd("XPENDING", "s", "g", "-", "+") == Error("ERR syntax error")
    assert conn.cmd("XPENDING", "s", "g", "IDLE", 10, "-", "+") == Error("ERR syntax error")
    assert conn.cmd("XPENDING", "s", "g", "IDLE", "x", "-", "+", 10) == \
        Error("ERR value is not an integer or out of range")
    assert conn.cmd("XPENDING", "s", "g", "-", "+", "x") == Error("ERR value is not an integer or out of range")
    assert conn.cmd("XPENDING", "s", "g", "x", "+", 10) == Error(BAD_ID)
    assert conn.cmd("XPENDING", "s", "g", "(18446744073709551615-18446744073709551615", "+", 10) == \
        Error("ERR invalid start ID for the interval")
    assert conn.cmd("XPENDING", "s", "g", "-", "(0-0", 10) == Error("ERR invalid end ID for the interval")
    assert conn.cmd("XPENDING", "s", "nog") == Error("NOGROUP No such key 's' or consumer group 'nog'")
    assert conn.cmd("XPENDING", "nokey", "g", "-", "+", 10) == Error("NOGROUP No such key 'nokey' or consumer group 'g'")
    r.set("str", "v")
    assert conn.cmd("XPENDING", "str", "g").startswith("WRONGTYPE")


def test_xpending_resp3_nulls(conn3):
    setup_stream(conn3)
    assert conn3.cmd_raw("XPENDING", "s", "g") == b"*4\r\n:0\r\n_\r\n_\r\n_\r\n"


def test_xpending_resp2_nulls(conn):
    setup_stream(conn)
    assert conn.cmd_raw("XPENDING", "s", "g") == b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"


# ---- XCLAIM -------------------------------------------------------------------


def test_xclaim(conn):
    setup_stream(conn, n=3)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    # Not idle long enough.
    assert conn.cmd("XCLAIM", "s", "g", "c2", 100000, "1-0") == []
    assert conn.cmd("XCLAIM", "s", "g", "c2", 0, "1-0") == [entry(1)]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in p] == [(b"1-0", b"c2", 2), (b"2-0", b"c1", 1), (b"3-0", b"c1", 1)]
    # JUSTID: ids only, the delivery count stays.
    assert conn.cmd("XCLAIM", "s", "g", "c3", 0, "1-0", "2-0", "JUSTID") == [b"1-0", b"2-0"]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in p][:2] == [(b"1-0", b"c3", 2), (b"2-0", b"c3", 1)]
    # RETRYCOUNT and IDLE.
    conn.cmd("XCLAIM", "s", "g", "c1", 0, "3-0", "RETRYCOUNT", 7, "IDLE", 5000)
    e = conn.cmd("XPENDING", "s", "g", "3-0", "3-0", 1)[0]
    assert e[1] == b"c1" and e[3] == 7 and 5000 <= e[2] < 6000
    # TIME: an absolute delivery time; one ahead of ours means now.
    conn.cmd("XCLAIM", "s", "g", "c1", 0, "3-0", "TIME", 1000)
    assert conn.cmd("XPENDING", "s", "g", "3-0", "3-0", 1)[0][2] > 10 ** 9
    conn.cmd("XCLAIM", "s", "g", "c1", 0, "3-0", "TIME", 2 ** 62)
    assert conn.cmd("XPENDING", "s", "g", "3-0", "3-0", 1)[0][2] < 1000
    # Unknown ids (not pending) are ignored, unless FORCE.
    conn.cmd("XADD", "s", "4-0", "f", "v4")
    assert conn.cmd("XCLAIM", "s", "g", "c4", 0, "4-0", "9-0") == []
    assert conn.cmd("XCLAIM", "s", "g", "c4", 0, "4-0", "9-0", "FORCE", "JUSTID") == [b"4-0"]
    e = conn.cmd("XPENDING", "s", "g", "4-0", "4-0", 1)[0]
    assert (e[1], e[3]) == (b"c4", 1)


def test_xclaim_creates_the_consumer(conn, v84):
    setup_stream(conn, n=1)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    # Redis 8 creates the consumer even when nothing is claimed.
    assert conn.cmd("XCLAIM", "s", "g", "c5", 100000, "1-0") == []
    assert [c[1] for c in conn.cmd("XINFO", "CONSUMERS", "s", "g")] == [b"c1", b"c5"]


def test_xclaim_lastid_and_deleted_entries(conn):
    setup_stream(conn, n=3)
    conn.cmd("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    conn.cmd("XGROUP", "SETID", "s", "g", "0")
    assert conn.cmd("XCLAIM", "s", "g", "bob", 0, "2-0", "LASTID", "3-0", "JUSTID") == [b"2-0"]
    assert conn.cmd("XINFO", "GROUPS", "s")[0][7] == b"3-0"
    # LASTID never moves the group back.
    conn.cmd("XCLAIM", "s", "g", "bob", 0, "2-0", "LASTID", "1-0")
    assert conn.cmd("XINFO", "GROUPS", "s")[0][7] == b"3-0"
    # An entry gone from the stream leaves the PEL when claimed.
    conn.cmd("XDEL", "s", "1-0")
    assert conn.cmd("XCLAIM", "s", "g", "bob", 0, "1-0", "3-0") == [entry(3)]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1]) for e in p] == [(b"2-0", b"bob"), (b"3-0", b"bob")]


def test_xclaim_errors(conn, r):
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0") == Error("NOGROUP No such key 's' or consumer group 'g'")
    setup_stream(conn)
    assert conn.cmd("XCLAIM", "s", "nog", "c", 0, "1-0") == Error("NOGROUP No such key 's' or consumer group 'nog'")
    assert conn.cmd("XCLAIM", "s", "g", "c", "x", "1-0") == Error("ERR Invalid min-idle-time argument for XCLAIM")
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "IDLE", "x") == \
        Error("ERR Invalid IDLE option argument for XCLAIM")
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "TIME", "x") == \
        Error("ERR Invalid TIME option argument for XCLAIM")
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "RETRYCOUNT", "x") == \
        Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "LASTID", "x") == Error(BAD_ID)
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "FOO") == Error("ERR Unrecognized XCLAIM option 'FOO'")
    # Ids end at the first argument that is not one.
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "JUSTID", "2-0") == Error("ERR Unrecognized XCLAIM option '2-0'")
    assert conn.cmd("XCLAIM", "s", "g", "c", 0, "1-0", "IDLE") == Error("ERR Unrecognized XCLAIM option 'IDLE'")
    assert conn.cmd("XCLAIM", "s", "g", "c", 0) == Error("ERR wrong number of arguments for 'xclaim' command")
    r.set("str", "v")
    assert conn.cmd("XCLAIM", "str", "g", "c", 0, "1-0").startswith("WRONGTYPE")


# ---- XAUTOCLAIM ---------------------------------------------------------------


def test_xautoclaim_iterates(conn):
    setup_stream(conn, n=5)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    assert conn.cmd("XAUTOCLAIM", "s", "g", "c2", 0, "-", "COUNT", 2) == [b"3-0", [entry(1), entry(2)], []]
    assert conn.cmd("XAUTOCLAIM", "s", "g", "c2", 0, "3-0", "COUNT", 2) == [b"5-0", [entry(3), entry(4)], []]
    assert conn.cmd("XAUTOCLAIM", "s", "g", "c2", 0, "5-0", "COUNT", 2) == [b"0-0", [entry(5)], []]
    # Exclusive start.
    assert conn.cmd("XAUTOCLAIM", "s", "g", "c3", 0, "(3-0", "JUSTID") == [b"0-0", [b"4-0", b"5-0"], []]
    p = conn.cmd("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in p] == [(b"1-0", b"c2", 2), (b"2-0", b"c2", 2), (b"3-0", b"c2", 2),
                                                (b"4-0", b"c3", 2), (b"5-0", b"c3", 2)]
    # Nothing idle enough: the cursor still advances, COUNT*10 at a time.
    assert conn.cmd("XAUTOCLAIM", "s", "g", "c4", 100000, "0", "COUNT", 1) == [b"0-0", [], []]


def test_xautoclaim_deleted_entries(conn):
    for i in (1, 2, 3):
        conn.cmd("XADD", "x", "%d-0" % i, "f", "v")
    conn.cmd("XGROUP", "CREATE", "x", "grp", "0")
    conn.cmd("XREADGROUP", "GROUP", "grp", "Alice", "STREAMS", "x", ">")
    conn.cmd("XDEL", "x", "1-0")
    conn.cmd("XDEL", "x", "2-0")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "0-0", "COUNT", 1) == [b"2-0", [], [b"1-0"]]
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "2-0", "COUNT", 1) == [b"3-0", [], [b"2-0"]]
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "3-0", "COUNT", 1) == [b"0-0", [[b"3-0", [b"f", b"v"]]], []]
    assert conn.cmd("XPENDING", "x", "grp", "-", "+", 10, "Alice") == []


def test_xautoclaim_errors(conn, r):
    assert conn.cmd("XAUTOCLAIM", "key", "group", "consumer", 1, 1, "COUNT", 0) == Error("ERR COUNT must be > 0")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "3-0", "COUNT", 8070450532247928833) == \
        Error("ERR COUNT must be > 0")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "3-0", "COUNT", "x") == Error("ERR COUNT must be > 0")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", "x", "0") == \
        Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "bad") == Error(BAD_ID)
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "(18446744073709551615-18446744073709551615") == \
        Error("ERR invalid start ID for the interval")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "0", "FOO") == Error("ERR syntax error")
    assert conn.cmd("XAUTOCLAIM", "x", "grp", "Bob", 0, "0") == Error("NOGROUP No such key 'x' or consumer group 'grp'")
    r.set("str", "v")
    assert conn.cmd("XAUTOCLAIM", "str", "grp", "Bob", 0, "0").startswith("WRONGTYPE")


# ---- XINFO --------------------------------------------------------------------


def pairs(rep):
    return dict(zip(rep[::2], rep[1::2]))


def test_xinfo_stream(conn):
    assert conn.cmd("XINFO", "STREAM", "s") == Error("ERR no such key")
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    info = conn.cmd("XINFO", "STREAM", "s")
    assert info == [b"length", 0, b"radix-tree-keys", 0, b"radix-tree-nodes", 1, b"last-generated-id", b"0-0",
                    b"max-deleted-entry-id", b"0-0", b"entries-added", 0, b"recorded-first-entry-id", b"0-0",
                    b"groups", 1, b"first-entry", None, b"last-entry", None]
    for i in range(1, 4):
        conn.cmd("XADD", "s", "%d-0" % i, "f", "v%d" % i)
    conn.cmd("XDEL", "s", "2-0")
    info = pairs(conn.cmd("XINFO", "STREAM", "s"))
    assert info[b"length"] == 2 and info[b"radix-tree-keys"] == 1 and info[b"radix-tree-nodes"] == 2
    assert info[b"last-generated-id"] == b"3-0" and info[b"max-deleted-entry-id"] == b"2-0"
    assert info[b"entries-added"] == 3 and info[b"recorded-first-entry-id"] == b"1-0"
    assert info[b"first-entry"] == entry(1) and info[b"last-entry"] == entry(3)
    assert conn.cmd("XINFO", "STREAM", "s", "FULL", "COUNT") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")
    assert conn.cmd("XINFO", "STREAM", "s", "FULLER") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")
    assert conn.cmd("XINFO", "STREAM", "s", "FULL", "LIMIT", 1) == \
        Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")
    assert conn.cmd("XINFO", "STREAM", "s", "FULL", "COUNT", "x") == \
        Error("ERR value is not an integer or out of range")
    assert conn.cmd("XINFO", "STREAM", "nokey", "FULL", "x") == Error("ERR no such key")


def test_xinfo_stream_full(conn, v84):
    for i, f in ((100, "a"), (101, "b"), (102, "c"), (103, "e"), (104, "f")):
        conn.cmd("XADD", "x", i, f, 1)
    conn.cmd("XGROUP", "CREATE", "x", "g1", "0")
    conn.cmd("XGROUP", "CREATE", "x", "g2", "0")
    conn.cmd("XREADGROUP", "GROUP", "g1", "Alice", "COUNT", 1, "STREAMS", "x", ">")
    conn.cmd("XREADGROUP", "GROUP", "g1", "Bob", "COUNT", 1, "STREAMS", "x", ">")
    conn.cmd("XREADGROUP", "GROUP", "g1", "Bob", "NOACK", "COUNT", 1, "STREAMS", "x", ">")
    conn.cmd("XREADGROUP", "GROUP", "g2", "Charlie", "COUNT", 4, "STREAMS", "x", ">")
    conn.cmd("XDEL", "x", "103")
    full = conn.cmd("XINFO", "STREAM", "x", "FULL")
    assert len(full) == 18
    assert full[::2] == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                         b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id", b"entries", b"groups"]
    info = pairs(full)
    assert info[b"length"] == 4
    assert info[b"entries"] == [[b"100-0", [b"a", b"1"]], [b"101-0", [b"b", b"1"]], [b"102-0", [b"c", b"1"]],
                                [b"104-0", [b"f", b"1"]]]
    g1, g2 = [pairs(g) for g in info[b"groups"]]
    assert list(pairs(info[b"groups"][0]).keys()) == [b"name", b"last-delivered-id", b"entries-read", b"lag",
                                                      b"pel-count", b"pending", b"consumers"]
    assert (g1[b"name"], g1[b"last-delivered-id"], g1[b"entries-read"], g1[b"pel-count"]) == \
        (b"g1", b"102-0", 3, 2)
    assert [(p[0], p[1], p[3]) for p in g1[b"pending"]] == [(b"100-0", b"Alice", 1), (b"101-0", b"Bob", 1)]
    assert all(p[2] > 10 ** 12 for p in g1[b"pending"])
    alice = pairs(g1[b"consumers"][0])
    assert list(alice.keys()) == [b"name", b"seen-time", b"active-time", b"pel-count", b"pending"]
    assert alice[b"name"] == b"Alice" and alice[b"pel-count"] == 1 and alice[b"pending"][0][0] == b"100-0"
    assert alice[b"pending"][0][2] == 1 and len(alice[b"pending"][0]) == 3
    charlie = pairs(g2[b"consumers"][0])
    assert [p[0] for p in charlie[b"pending"]] == [b"100-0", b"101-0", b"102-0", b"103-0"]
    small = pairs(conn.cmd("XINFO", "STREAM", "x", "FULL", "COUNT", 1))
    assert small[b"entries"] == [[b"100-0", [b"a", b"1"]]]
    assert len(pairs(small[b"groups"][1])[b"pending"]) == 1
    assert len(pairs(pairs(small[b"groups"][1])[b"consumers"][0])[b"pending"]) == 1
    # COUNT 0 is everything.
    everything = pairs(conn.cmd("XINFO", "STREAM", "x", "FULL", "COUNT", 0))
    assert len(everything[b"entries"]) == 4 and len(pairs(everything[b"groups"][1])[b"pending"]) == 4


def test_xinfo_groups_and_consumers(conn, r):
    setup_stream(conn, n=3)
    conn.cmd("XGROUP", "CREATE", "s", "a", "$")
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", ">")
    groups = conn.cmd("XINFO", "GROUPS", "s")
    assert groups == [
        [b"name", b"a", b"consumers", 0, b"pending", 0, b"last-delivered-id", b"3-0", b"entries-read", None,
         b"lag", 0],
        [b"name", b"g", b"consumers", 1, b"pending", 1, b"last-delivered-id", b"1-0", b"entries-read", 1, b"lag", 2],
    ]
    cons = conn.cmd("XINFO", "CONSUMERS", "s", "g")
    assert cons[0][:4] == [b"name", b"c1", b"pending", 1]
    assert conn.cmd("XINFO", "CONSUMERS", "s", "nog") == Error("NOGROUP No such consumer group 'nog' for key name 's'")
    assert conn.cmd("XINFO", "GROUPS", "nokey") == Error("ERR no such key")
    assert conn.cmd("XINFO", "CONSUMERS", "nokey", "g") == Error("ERR no such key")
    r.set("str", "v")
    assert conn.cmd("XINFO", "GROUPS", "str").startswith("WRONGTYPE")
    assert conn.cmd("XINFO", "STREAM") == Error("ERR wrong number of arguments for 'xinfo|stream' command")
    assert conn.cmd("XINFO", "FOO", "s") == Error("ERR unknown subcommand 'FOO'. Try XINFO HELP.")


def test_xinfo_consumers_fields(conn, v84):
    setup_stream(conn, n=1)
    conn.cmd("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    cons = conn.cmd("XINFO", "CONSUMERS", "s", "g")
    assert [c[::2] for c in cons] == [[b"name", b"pending", b"idle", b"inactive"]]


def test_xinfo_resp3(conn3):
    setup_stream(conn3, n=2)
    conn3.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", ">")
    info = conn3.cmd("XINFO", "STREAM", "s")
    assert isinstance(info, Map)
    d = info.dict()
    assert d[b"length"] == 2 and d[b"first-entry"] == entry(1) and d[b"last-entry"] == entry(2)
    full = conn3.cmd("XINFO", "STREAM", "s", "FULL").dict()
    g = full[b"groups"][0]
    assert isinstance(g, Map) and g.dict()[b"lag"] == 1 and g.dict()[b"entries-read"] == 1
    assert isinstance(g.dict()[b"consumers"][0], Map)
    groups = conn3.cmd("XINFO", "GROUPS", "s")
    assert isinstance(groups[0], Map) and groups[0].dict()[b"name"] == b"g"
    cons = conn3.cmd("XINFO", "CONSUMERS", "s", "g")
    assert isinstance(cons[0], Map) and cons[0].dict()[b"pending"] == 1
    conn3.cmd("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    assert conn3.cmd_raw("XINFO", "GROUPS", "e").endswith(b"$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n:0\r\n")


# ---- propagation (HotKV's journal) -------------------------------------------


@pytest.fixture
def jr(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def cmds_of(r):
    return [[a for a in c] for c in journal_cmds(r)]


def test_xreadgroup_propagates_xclaims_and_setid(jr):
    jr.execute_command("XADD", "s", "1-0", "f", "v")
    jr.execute_command("XADD", "s", "2-0", "f", "v")
    jr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    journal(jr)
    jr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    cmds = cmds_of(jr)
    assert [c[:6] for c in cmds[:2]] == [[b"XCLAIM", b"s", b"g", b"alice", b"0", b"1-0"],
                                         [b"XCLAIM", b"s", b"g", b"alice", b"0", b"2-0"]]
    for c in cmds[:2]:
        assert c[6] == b"TIME" and c[8:] == [b"RETRYCOUNT", b"1", b"FORCE", b"JUSTID", b"LASTID", b"0-0"]
    assert cmds[2] == [b"XGROUP", b"SETID", b"s", b"g", b"2-0", b"ENTRIESREAD", b"2"]
    assert len(cmds) == 3
    # Nothing new: nothing propagates.
    jr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    assert cmds_of(jr) == []
    # NOACK: the consumer's creation and where the group moved.
    jr.execute_command("XADD", "s", "3-0", "f", "v")
    journal(jr)
    jr.execute_command("XREADGROUP", "GROUP", "g", "bob", "NOACK", "STREAMS", "s", ">")
    assert cmds_of(jr) == [[b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"bob"],
                           [b"XGROUP", b"SETID", b"s", b"g", b"3-0", b"ENTRIESREAD", b"3"]]


def test_group_commands_propagate(jr):
    jr.execute_command("XADD", "s", "1-0", "f", "v")
    jr.execute_command("XADD", "s", "2-0", "f", "v")
    jr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    jr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    journal(jr)
    # XCLAIM: one XCLAIM per claimed entry, with its text id.
    jr.execute_command("XCLAIM", "s", "g", "bob", 0, "1", "RETRYCOUNT", 5)
    (c,) = cmds_of(jr)
    assert c[:6] == [b"XCLAIM", b"s", b"g", b"bob", b"0", b"1"] and c[9] == b"5"
    # An entry gone from the stream: the XCLAIM that drops it (old owner).
    jr.execute_command("XDEL", "s", "2-0")
    journal(jr)
    rep = jr.execute_command("XAUTOCLAIM", "s", "g", "carol", 0, "0")
    assert rep[0] == b"0-0" and [e[0] for e in rep[1]] == [b"1-0"] and rep[2] == [b"2-0"]
    cmds = cmds_of(jr)
    assert [c[:6] for c in cmds] == [[b"XCLAIM", b"s", b"g", b"carol", b"0", b"1-0"],
                                     [b"XCLAIM", b"s", b"g", b"alice", b"0", b"2-0"]]
    # XCLAIM ... LASTID alone: the group's new position.
    journal(jr)
    jr.execute_command("XCLAIM", "s", "g", "bob", 0, "9-0", "LASTID", "5-0")
    assert cmds_of(jr) == [[b"XGROUP", b"SETID", b"s", b"g", b"5-0", b"ENTRIESREAD", b"2"]]
    # XACK and the XGROUP subcommands: their argv; nothing when nothing changed.
    jr.execute_command("XACK", "s", "g", "1-0")
    jr.execute_command("XACK", "s", "g", "1-0")
    jr.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "dave")
    jr.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "dave")
    jr.execute_command("XGROUP", "DELCONSUMER", "s", "g", "dave")
    jr.execute_command("XGROUP", "DESTROY", "s", "nog")
    jr.execute_command("XGROUP", "DESTROY", "s", "g")
    assert cmds_of(jr) == [[b"XACK", b"s", b"g", b"1-0"], [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"dave"],
                           [b"XGROUP", b"DELCONSUMER", b"s", b"g", b"dave"], [b"XGROUP", b"DESTROY", b"s", b"g"]]
    # Reads propagate nothing.
    jr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    journal(jr)
    jr.execute_command("XPENDING", "s", "g")
    jr.execute_command("XINFO", "STREAM", "s", "FULL")
    assert cmds_of(jr) == []


def test_history_and_empty_claims_replay_to_the_same_state(jr, new_server):
    """What Redis leaves out of propagation (a history read's new delivery
    count, a consumer created by a read or claim that got nothing) is
    propagated here, so a replay ends with the same groups."""
    jr.execute_command("XADD", "s", "1-0", "f", "v")
    jr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    jr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    jr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    jr.execute_command("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")
    jr.execute_command("XCLAIM", "s", "g", "carol", 100000, "1-0")
    jr.execute_command("XAUTOCLAIM", "s", "g", "dave", 100000, "0")
    data = journal(jr)
    from test_exec import replay
    dst = debug_server(new_server)
    assert replay(dst.port, data) == []
    d = dst.client()
    for cli in (jr, d):
        p = cli.xpending_range("s", "g", "-", "+", 10)
        assert [(e["message_id"], e["consumer"], e["times_delivered"]) for e in p] == [(b"1-0", b"alice", 2)]
        assert [c["name"] for c in cli.xinfo_consumers("s", "g")] == [b"alice", b"bob", b"carol", b"dave"]
    assert d.execute_command("DEBUG", "DIGEST") == jr.execute_command("DEBUG", "DIGEST")
