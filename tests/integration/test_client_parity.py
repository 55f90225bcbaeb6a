"""CLIENT parity with Redis 8.0: every CLIENT LIST / CLIENT INFO field, in
Redis's order, with real values; CLIENT LIST filters; NO-TOUCH and NO-EVICT;
the tracking subcommands of a server without client-side caching; argument
errors in Redis's order (the subcommand's arity before its arguments); the
Redis version HELLO and INFO report."""
import re
import socket
import time

import pytest
from resp import Error, Map, RespConn, Verbatim

FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub", "multi",
          "watch", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
          "events", "cmd", "user", "redir", "resp", "lib-name", "lib-ver", "io-thread", "tot-net-in", "tot-net-out",
          "tot-cmds"]
TEXT = {"addr", "laddr", "name", "flags", "events", "cmd", "user", "lib-name", "lib-ver"}

SYNTAX = Error("ERR syntax error")
NOT_TRACKING = Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                     "OPTOUT mode enabled")


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def fields(line):
    if isinstance(line, bytes):
        line = line.decode()
    line = line.rstrip("\n")
    parts = line.split(" ")
    assert [p.split("=", 1)[0] for p in parts] == FIELDS, line
    d = dict(p.split("=", 1) for p in parts)
    for k, v in d.items():
        if k not in TEXT:
            assert re.fullmatch(r"-?\d+", v), (k, line)
            d[k] = int(v)
    return d


def info(conn):
    reply = conn.cmd("CLIENT", "INFO")
    assert isinstance(reply, bytes), reply
    assert reply.endswith(b"\n") and reply.count(b"\n") == 1
    return fields(reply)


def listing(conn, *args):
    reply = conn.cmd("CLIENT", "LIST", *args)
    assert isinstance(reply, bytes), reply
    return [fields(ln) for ln in reply.decode().split("\n") if ln]


def line_of(conn, cid):
    rows = listing(conn, "ID", str(cid))
    assert len(rows) == 1, rows
    return rows[0]


# ---- the fields ----------------------------------------------------------------

def test_client_info_fields(server, conn):
    cid = conn.cmd("CLIENT", "ID")
    d = info(conn)
    assert d["id"] == cid
    assert d["addr"] == "%s:%d" % conn.sock.getsockname()
    assert d["laddr"] == "%s:%d" % conn.sock.getpeername()
    assert d["fd"] > 2
    assert d["name"] == "" and d["flags"] == "N" and d["db"] == 0
    assert (d["sub"], d["psub"], d["ssub"], d["multi"], d["watch"]) == (0, 0, 0, -1, 0)
    # The request being answered is still in the query buffer, as in Redis.
    assert d["qbuf"] == len(b"*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n") == 26
    assert d["qbuf-free"] >= 0
    assert d["argv-mem"] == len("CLIENT") + len("INFO")
    assert d["multi-mem"] == 0
    assert (d["obl"], d["oll"], d["omem"]) == (0, 0, 0)
    assert d["tot-mem"] > d["qbuf"] + d["qbuf-free"]
    assert d["events"] == "r"
    assert d["cmd"] == "client|info"
    assert d["user"] == "default" and d["redir"] == -1 and d["resp"] == 2
    assert d["lib-name"] == "" and d["lib-ver"] == ""
    assert 0 <= d["io-thread"] < 2


def test_client_info_resp3_is_verbatim(server, conn3):
    reply = conn3.cmd("CLIENT", "INFO")
    assert isinstance(reply, Verbatim) and reply.fmt == b"txt"
    d = fields(bytes(reply))
    assert d["resp"] == 3 and d["cmd"] == "client|info"
    listed = conn3.cmd("CLIENT", "LIST", "ID", str(d["id"]))
    assert isinstance(listed, Verbatim) and listed.fmt == b"txt"
    assert fields(bytes(listed))["id"] == d["id"]


def test_client_list_line_matches_client_info(server, conn):
    cid = conn.cmd("CLIENT", "ID")
    conn.cmd("CLIENT", "SETNAME", "parity")
    conn.cmd("CLIENT", "SETINFO", "lib-name", "mylib")
    conn.cmd("CLIENT", "SETINFO", "lib-ver", "1.2")
    conn.cmd("SELECT", "3")
    d = line_of(conn, cid)
    assert (d["name"], d["lib-name"], d["lib-ver"], d["db"]) == ("parity", "mylib", "1.2", 3)
    assert d["cmd"] == "client|list"
    other = server.conn()
    o = line_of(other, cid)
    # Seen from another connection: the last command it ran.
    assert o["cmd"] == "client|list" and o["name"] == "parity" and o["db"] == 3
    other.close()


def test_net_counters_and_commands(server, conn):
    """tot-net-in counts request bytes, tot-net-out reply bytes, tot-cmds the
    commands run (the CLIENT INFO that reports them not yet included)."""
    req = b"*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n"
    conn.send(req)
    raw1 = conn.raw()
    d1 = fields(raw1[raw1.index(b"\r\n") + 2:-2])
    conn.cmd("SET", "k", "v" * 100)
    raw2_req = b"*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n"
    conn.send(raw2_req)
    raw2 = conn.raw()
    d2 = fields(raw2[raw2.index(b"\r\n") + 2:-2])
    set_req = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\n" + b"v" * 100 + b"\r\n"
    assert d2["tot-net-in"] - d1["tot-net-in"] == len(set_req) + len(raw2_req)
    assert d2["tot-net-out"] - d1["tot-net-out"] == len(raw1) + len(b"+OK\r\n")
    assert d2["tot-cmds"] - d1["tot-cmds"] == 2


def test_counters_of_a_blocked_command(server, conn):
    """A blocked command counts its input at once, its reply and itself
    only when it is served (as Redis's tests expect)."""
    waiter = server.conn()
    wid = waiter.cmd("CLIENT", "ID")
    before = line_of(conn, wid)
    req = b"*3\r\n$5\r\nBLPOP\r\n$6\r\nmylist\r\n$1\r\n0\r\n"
    waiter.send(req)
    deadline = time.time() + 5
    while time.time() < deadline and line_of(conn, wid)["flags"] != "b":
        time.sleep(0.02)
    blocked = line_of(conn, wid)
    assert blocked["flags"] == "b" and blocked["cmd"] == "blpop"
    assert blocked["tot-net-in"] == before["tot-net-in"] + len(req)
    assert blocked["tot-net-out"] == before["tot-net-out"]
    assert blocked["tot-cmds"] == before["tot-cmds"]
    assert conn.cmd("LPUSH", "mylist", "a") == 1
    assert waiter.read() == [b"mylist", b"a"]
    served = line_of(conn, wid)
    assert served["tot-cmds"] == before["tot-cmds"] + 1
    assert served["tot-net-out"] == before["tot-net-out"] + len(b"*2\r\n$6\r\nmylist\r\n$1\r\na\r\n")
    assert served["cmd"] == "blpop" and served["flags"] == "N"
    waiter.close()


def test_cmd_field_after_refused_and_unknown_commands(server, conn):
    cid = conn.cmd("CLIENT", "ID")
    other = server.conn()
    assert conn.cmd("GET") == arity("get")
    assert line_of(other, cid)["cmd"] == "get"
    assert isinstance(conn.cmd("NOSUCHCOMMAND"), Error)
    assert line_of(other, cid)["cmd"] == "NULL"
    assert conn.cmd("CONFIG", "NOSUCH") == Error("ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.")
    assert line_of(other, cid)["cmd"] == "NULL"
    conn.cmd("CONFIG", "GET", "port")
    assert line_of(other, cid)["cmd"] == "config|get"
    other.close()


def test_io_thread_is_the_owning_worker(server):
    conns = [server.conn() for _ in range(16)]
    threads = {}
    for c in conns:
        d = info(c)
        threads[d["id"]] = d["io-thread"]
        assert info(c)["io-thread"] == d["io-thread"]  # a connection never moves
    assert set(threads.values()) == {0, 1}  # 16 connections over 2 workers
    listed = {d["id"]: d["io-thread"] for d in listing(conns[0])}
    for cid, t in threads.items():
        assert listed[cid] == t
    for c in conns:
        c.close()


def test_reply_buffer_peak(server, conn):
    """rbp: the most the first output block held (Redis's fixed reply
    buffer) over the last 5 seconds; a big reply fills it."""
    assert info(conn)["rbp"] < 1000
    conn.cmd("SET", "big", "x" * 6000)
    assert len(conn.cmd("GET", "big")) == 6000
    assert info(conn)["rbp"] >= 1000
    deadline = time.time() + 12
    while time.time() < deadline and info(conn)["rbp"] >= 1000:
        time.sleep(0.5)
    assert info(conn)["rbp"] < 1000


def test_pending_output_is_reported(server, r):
    """A client that does not read its replies: its output waits in the
    server, which CLIENT LIST shows (omem/obl/oll, events=rw)."""
    r.set("huge", "z" * (4 << 20))
    slow = socket.create_connection((server.host, server.port))
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.sendall(b"CLIENT ID\r\n")
    time.sleep(0.1)
    slow.sendall(b"GET huge\r\n" * 4)
    watcher = server.conn()
    deadline = time.time() + 5
    rows = []
    while time.time() < deadline:
        rows = [d for d in listing(watcher) if d["cmd"] == "get"]
        if rows and "w" in rows[0]["events"]:
            break
        time.sleep(0.05)
    assert rows, "the slow client is not listed"
    d = rows[0]
    # Reading stops while that much output waits (back-pressure).
    assert d["events"] in ("w", "rw")
    assert d["obl"] + d["omem"] > 0
    assert d["tot-mem"] > d["obl"] + d["omem"]
    slow.close()
    watcher.close()


# ---- CLIENT LIST filters ------------------------------------------------------------

def test_client_list_type_and_id(server, conn):
    others = [server.conn() for _ in range(3)]
    ids = [c.cmd("CLIENT", "ID") for c in others]
    normal = listing(conn, "TYPE", "normal")
    assert set(ids) <= {d["id"] for d in normal}
    for t in ("pubsub", "master", "replica", "slave", "PUBSUB"):
        assert conn.cmd("CLIENT", "LIST", "TYPE", t) == b""
    assert conn.cmd("CLIENT", "LIST", "TYPE", "x") == Error("ERR Unknown client type 'x'")
    # In the order asked, repeats included, unknown ids skipped.
    asked = [ids[2], ids[0], 999999, ids[2]]
    assert [d["id"] for d in listing(conn, "ID", *map(str, asked))] == [ids[2], ids[0], ids[2]]
    assert conn.cmd("CLIENT", "LIST", "ID", "0") == b""
    assert conn.cmd("CLIENT", "LIST", "ID", "abc") == Error("ERR Invalid client ID")
    assert conn.cmd("CLIENT", "LIST", "ID") == SYNTAX
    assert conn.cmd("CLIENT", "LIST", "TYPE") == SYNTAX
    assert conn.cmd("CLIENT", "LIST", "foo") == SYNTAX
    assert conn.cmd("CLIENT", "LIST", "TYPE", "normal", "x") == SYNTAX
    for c in others:
        c.close()


# ---- NO-TOUCH / NO-EVICT --------------------------------------------------------------

def test_no_touch_keeps_access_time(server, conn):
    conn.cmd("SET", "k", "v")
    conn.cmd("SET", "k2", "v")
    time.sleep(1.2)
    assert conn.cmd("CLIENT", "NO-TOUCH", "on") == "OK"
    assert info(conn)["flags"] == "T"
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("STRLEN", "k") == 1
    assert conn.cmd("OBJECT", "IDLETIME", "k") >= 1
    # TOUCH always updates the access time.
    assert conn.cmd("TOUCH", "k2") == 1
    assert conn.cmd("OBJECT", "IDLETIME", "k2") == 0
    assert conn.cmd("OBJECT", "IDLETIME", "k") >= 1
    assert conn.cmd("CLIENT", "NO-TOUCH", "off") == "OK"
    assert info(conn)["flags"] == "N"
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("OBJECT", "IDLETIME", "k") == 0


def test_no_evict_and_no_touch_flags(server, conn):
    assert conn.cmd("CLIENT", "NO-EVICT", "on") == "OK"
    assert info(conn)["flags"] == "e"
    assert conn.cmd("CLIENT", "NO-TOUCH", "ON") == "OK"
    assert info(conn)["flags"] == "eT"
    assert conn.cmd("CLIENT", "NO-EVICT", "OFF") == "OK"
    assert info(conn)["flags"] == "T"
    assert conn.cmd("RESET") == "RESET"
    assert info(conn)["flags"] == "N"
    assert conn.cmd("CLIENT", "NO-EVICT", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "NO-TOUCH", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "NO-EVICT") == arity("client|no-evict")
    assert conn.cmd("CLIENT", "NO-TOUCH") == arity("client|no-touch")
    assert conn.cmd("CLIENT", "NO-TOUCH", "on", "x") == arity("client|no-touch")


# ---- tracking subcommands (tests/integration/test_tracking.py covers the rest) ------------

def test_tracking_state_of_a_connection(server, conn, conn3):
    assert conn.cmd("CLIENT", "GETREDIR") == -1
    assert conn.cmd("CLIENT", "TRACKINGINFO") == [b"flags", [b"off"], b"redirect", -1, b"prefixes", []]
    assert conn3.cmd_raw("CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n")
    assert conn.cmd_raw("CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n")
    assert conn.cmd("CLIENT", "CACHING", "yes") == NOT_TRACKING
    assert conn.cmd("CLIENT", "CACHING", "no") == NOT_TRACKING
    # Redis refuses before reading the argument.
    assert conn.cmd("CLIENT", "CACHING", "maybe") == NOT_TRACKING
    assert conn.cmd("CLIENT", "TRACKING", "off") == "OK"
    assert conn.cmd("CLIENT", "TRACKING", "OFF", "BCAST", "PREFIX", "a", "NOLOOP") == "OK"
    assert conn.cmd("CLIENT", "TRACKING", "on") == "OK"
    assert conn.cmd("CLIENT", "GETREDIR") == 0
    assert info(conn)["flags"] == "t"
    assert conn.cmd("CLIENT", "TRACKING", "on", "optin") == "OK"
    assert conn.cmd("CLIENT", "TRACKINGINFO") == [b"flags", [b"on", b"optin"], b"redirect", 0, b"prefixes", []]
    assert conn.cmd("CLIENT", "TRACKING", "off") == "OK"
    assert conn.cmd("CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "b") == "OK"
    assert info(conn)["flags"] == "tB"
    assert conn.cmd("CLIENT", "TRACKING", "off") == "OK"
    assert conn.cmd("CLIENT", "GETREDIR") == -1
    assert info(conn)["flags"] == "N"


def test_tracking_argument_errors(server, conn):
    assert conn.cmd("CLIENT", "TRACKING", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "TRACKING", "on", "wrong") == SYNTAX
    assert conn.cmd("CLIENT", "TRACKING", "off", "prefix") == SYNTAX
    assert conn.cmd("CLIENT", "TRACKING", "on", "prefix", "a") == Error(
        "ERR PREFIX option requires BCAST mode to be enabled")
    assert conn.cmd("CLIENT", "TRACKING", "on", "bcast", "optin") == Error(
        "ERR OPTIN and OPTOUT are not compatible with BCAST")
    assert conn.cmd("CLIENT", "TRACKING", "on", "optin", "optout") == Error(
        "ERR You can't specify both OPTIN mode and OPTOUT mode")
    assert conn.cmd("CLIENT", "TRACKING", "off", "redirect", "abc") == Error(
        "ERR value is not an integer or out of range")
    me = str(conn.cmd("CLIENT", "ID"))
    assert conn.cmd("CLIENT", "TRACKING", "off", "redirect", me, "redirect", me) == Error(
        "ERR A client can only redirect to a single other client")


@pytest.mark.parametrize("sub, n", [("caching", 3), ("getredir", 2), ("trackinginfo", 2), ("tracking", -3),
                                    ("getname", 2), ("id", 2), ("info", 2), ("kill", -3),
                                    ("no-evict", 3), ("no-touch", 3), ("pause", -3), ("reply", 3),
                                    ("setinfo", 4), ("setname", 3), ("unblock", -3), ("unpause", 2), ("help", 2)])
def test_subcommand_arity_first(server, conn, sub, n):
    """The subcommand's arity is checked before anything else about it."""
    wrong = abs(n) - 1 if n < 0 else n + 1
    args = ["x"] * (wrong - 2)
    assert conn.cmd("CLIENT", sub, *args) == arity("client|" + sub)
    if n > 0 and n > 2:
        assert conn.cmd("CLIENT", sub, *(["x"] * (n - 3))) == arity("client|" + sub)


def test_unknown_subcommand_and_bare_container(server, conn):
    assert conn.cmd("CLIENT") == arity("client")
    assert conn.cmd("CLIENT", "nosuch") == Error("ERR unknown subcommand 'nosuch'. Try CLIENT HELP.")
    assert conn.cmd("CLIENT", "nosuch", "a", "b") == Error("ERR unknown subcommand 'nosuch'. Try CLIENT HELP.")


def test_help_lists_the_tracking_subcommands(server, conn):
    help_ = conn.cmd("CLIENT", "HELP")
    assert help_[0] == "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    for line in ("CACHING (YES|NO)", "GETREDIR", "TRACKINGINFO",
                 "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]"):
        assert line in help_
    assert help_[-2:] == ["HELP", "    Prints this help."]


def test_command_info_has_the_rows(server, conn):
    rows = conn.cmd("COMMAND", "INFO", "client|caching", "client|getredir", "client|tracking",
                    "client|trackinginfo")
    assert [(row[0], row[1]) for row in rows] == [(b"client|caching", 3), (b"client|getredir", 2),
                                                   (b"client|tracking", -3), (b"client|trackinginfo", 2)]


def test_same_errors_as_redis(server, conn):
    """Errors where Redis 7.0 and 8.0 agree, compared with the reference."""
    from conftest import real_redis
    cases = [("CLIENT", "CACHING"), ("CLIENT", "CACHING", "maybe"), ("CLIENT", "GETREDIR"),
             ("CLIENT", "TRACKING"), ("CLIENT", "TRACKING", "x"), ("CLIENT", "TRACKING", "on", "x"),
             ("CLIENT", "TRACKING", "off"), ("CLIENT", "TRACKING", "on", "prefix", "a"),
             ("CLIENT", "TRACKING", "on", "bcast", "optout"), ("CLIENT", "TRACKING", "on", "optin", "optout"),
             ("CLIENT", "TRACKING", "off", "redirect", "x"), ("CLIENT", "TRACKINGINFO", "x"),
             ("CLIENT", "LIST", "TYPE"), ("CLIENT", "LIST", "ID", "abc"), ("CLIENT", "LIST", "TYPE", "x"),
             ("CLIENT", "LIST", "x"), ("CLIENT", "NO-EVICT", "x"), ("CLIENT", "nosuch"), ("CLIENT",),
             ("CLIENT", "SETNAME", "a b"), ("CLIENT", "KILL", "ID", "0"), ("CLIENT", "REPLY", "x")]
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        for args in cases:
            assert conn.cmd(*args) == ref.cmd(*args), args
        ref.close()


# ---- HELLO and INFO report the Redis version HotKV follows ------------------------

def test_hello_reports_redis_8(server, conn):
    cid = conn.cmd("CLIENT", "ID")
    assert conn.cmd("HELLO", "3") == Map([(b"server", b"redis"), (b"version", b"8.0.0"), (b"proto", 3),
                                          (b"id", cid), (b"mode", b"standalone"), (b"role", b"master"),
                                          (b"modules", [])])
    assert conn.cmd_raw("HELLO", "2") == (
        b"*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n8.0.0\r\n$5\r\nproto\r\n:2\r\n"
        b"$2\r\nid\r\n:%d\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        b"$7\r\nmodules\r\n*0\r\n" % cid)


def test_info_reports_redis_8(server, conn):
    text = conn.cmd("INFO", "server").decode()
    fields_ = dict(ln.split(":", 1) for ln in text.split("\r\n") if ":" in ln)
    assert fields_["redis_version"] == "8.0.0"
    assert re.fullmatch(r"\d+\.\d+\.\d+", fields_["hotkv_version"])
    assert fields_["hotkv_version"] != fields_["redis_version"]
