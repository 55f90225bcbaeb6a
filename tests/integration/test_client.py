"""The CLIENT command family: ID, SETNAME, GETNAME, INFO, LIST, KILL,
SETINFO, NO-EVICT, NO-TOUCH, PAUSE, UNPAUSE, REPLY, HELP.

Clients live on different worker threads; LIST and KILL must see and act
on all of them, so several tests open many connections."""
import re
import socket
import threading
import time

import pytest
from poll import wait_probe_gone
from resp import Error, RespConn, Simple, Verbatim

SYNTAX = Error("ERR syntax error")
BAD_NAME = Error("ERR Client names cannot contain spaces, newlines or special characters.")

FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub", "multi",
          "watch", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem", "events",
          "cmd", "user", "redir", "resp", "lib-name", "lib-ver", "io-thread", "tot-net-in", "tot-net-out", "tot-cmds"]
NUMERIC = {"id", "fd", "age", "idle", "db", "sub", "psub", "ssub", "multi", "qbuf", "qbuf-free", "argv-mem",
           "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem", "redir", "resp", "watch", "io-thread",
           "tot-net-in", "tot-net-out", "tot-cmds"}


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def parse_line(line):
    """One CLIENT LIST line -> dict, checking Redis 8.0's field order."""
    parts = line.split(" ")
    keys = [p.split("=", 1)[0] for p in parts]
    assert keys == FIELDS, line
    d = dict(p.split("=", 1) for p in parts)
    for k in NUMERIC:
        assert re.fullmatch(r"-?\d+", d[k]), (k, line)
    assert re.fullmatch(r"[A-Za-z]+", d["flags"]), line
    assert re.fullmatch(r"r?w?", d["events"]), line
    return d


def parse_list(text):
    if isinstance(text, bytes):
        text = text.decode()
    assert text == "" or text.endswith("\n")
    return [parse_line(ln) for ln in text.split("\n") if ln]


def client_list(conn, *args):
    reply = conn.cmd("CLIENT", "LIST", *args)
    assert isinstance(reply, bytes), reply
    return parse_list(reply)


def wait_for(cond, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def is_closed(c, timeout=3.0):
    """True when the server closed c's connection."""
    c.sock.settimeout(timeout)
    try:
        return c.sock.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


# ---- ID, SETNAME, GETNAME --------------------------------------------------

def test_client_id(server, conn):
    cid = conn.cmd("CLIENT", "ID")
    assert isinstance(cid, int) and cid > 0
    assert conn.cmd("CLIENT", "ID") == cid
    other = server.conn()
    try:
        assert other.cmd("CLIENT", "ID") > cid
        assert other.cmd("HELLO", "2")[7] == other.cmd("CLIENT", "ID")
    finally:
        other.close()
    assert conn.cmd("CLIENT", "ID", "x") == arity("client|id")


def test_setname_getname(conn):
    assert conn.cmd("CLIENT", "GETNAME") is None
    assert conn.cmd("CLIENT", "SETNAME", "myname") == Simple("OK")
    assert conn.cmd("CLIENT", "GETNAME") == b"myname"
    assert conn.cmd("CLIENT", "SETNAME", "other~!{}") == Simple("OK")
    assert conn.cmd("CLIENT", "GETNAME") == b"other~!{}"
    for bad in ("a b", "a\nb", "tab\there", "\x7f", "caf\xe9", "x\x00y"):
        assert conn.cmd("CLIENT", "SETNAME", bad) == BAD_NAME
    assert conn.cmd("CLIENT", "GETNAME") == b"other~!{}"
    # The empty name removes the name.
    assert conn.cmd("CLIENT", "SETNAME", "") == Simple("OK")
    assert conn.cmd("CLIENT", "GETNAME") is None
    assert conn.cmd("CLIENT", "SETNAME") == arity("client|setname")
    assert conn.cmd("CLIENT", "SETNAME", "a", "b") == arity("client|setname")
    assert conn.cmd("CLIENT", "GETNAME", "x") == arity("client|getname")


def test_getname_resp3(conn3):
    assert conn3.cmd_raw("CLIENT", "GETNAME") == b"_\r\n"
    conn3.cmd("CLIENT", "SETNAME", "n3")
    assert conn3.cmd_raw("CLIENT", "GETNAME") == b"$2\r\nn3\r\n"


def test_hello_setname_shows_in_getname(conn):
    conn.cmd("HELLO", "2", "SETNAME", "viahello")
    assert conn.cmd("CLIENT", "GETNAME") == b"viahello"


# ---- INFO -------------------------------------------------------------------

def test_client_info_format(conn):
    conn.cmd("SELECT", "3")
    conn.cmd("CLIENT", "SETNAME", "infotest")
    reply = conn.cmd("CLIENT", "INFO")
    assert isinstance(reply, bytes) and reply.endswith(b"\n") and reply.count(b"\n") == 1
    d = parse_line(reply.decode()[:-1])
    assert int(d["id"]) == conn.cmd("CLIENT", "ID")
    assert d["name"] == "infotest"
    assert d["db"] == "3"
    assert d["flags"] == "N"
    assert d["cmd"] == "client|info"
    assert d["user"] == "default"
    assert d["redir"] == "-1"
    assert d["resp"] == "2"
    assert (d["sub"], d["psub"], d["ssub"], d["multi"]) == ("0", "0", "0", "-1")
    assert d["lib-name"] == "" and d["lib-ver"] == ""
    assert d["events"] == "r"
    assert d["addr"] == "%s:%d" % conn.sock.getsockname()
    assert d["laddr"] == "%s:%d" % conn.sock.getpeername()
    assert int(d["age"]) >= 0 and int(d["idle"]) >= 0
    assert conn.cmd("CLIENT", "INFO", "x") == arity("client|info")


def test_client_info_resp3_verbatim(conn3):
    raw = conn3.cmd_raw("CLIENT", "INFO")
    assert raw.startswith(b"=")
    header, rest = raw.split(b"\r\n", 1)
    assert int(header[1:]) == len(rest) - 2
    assert rest.startswith(b"txt:id=")
    reply = conn3.cmd("CLIENT", "INFO")
    assert isinstance(reply, Verbatim) and reply.fmt == b"txt"
    assert parse_line(reply.decode()[:-1])["resp"] == "3"


def test_client_info_age_and_idle(server):
    c = server.conn()
    try:
        c.cmd("PING")
        time.sleep(2.1)
        d = parse_line(c.cmd("CLIENT", "INFO").decode()[:-1])
        assert int(d["age"]) >= 2
        # Reading the CLIENT INFO request counts as activity.
        assert int(d["idle"]) == 0
    finally:
        c.close()


def test_client_info_unix_socket(server):
    if not server.unix:
        pytest.skip("no unix socket")
    c = RespConn(unix=server.unix)
    try:
        d = parse_line(c.cmd("CLIENT", "INFO").decode()[:-1])
        assert d["addr"] == server.unix + ":0"
        assert d["laddr"] == server.unix + ":0"
        assert d["flags"] == "U"
    finally:
        c.close()


# ---- LIST -------------------------------------------------------------------

def test_client_list_self(conn):
    lines = client_list(conn)
    me = conn.cmd("CLIENT", "ID")
    mine = [d for d in lines if int(d["id"]) == me]
    assert len(mine) == 1
    assert mine[0]["cmd"] == "client|list"
    assert mine[0]["flags"] == "N"
    ids = [int(d["id"]) for d in lines]
    assert ids == sorted(ids)


def test_client_list_sees_every_worker(server, conn):
    conns = [server.conn() for _ in range(12)]
    try:
        for i, c in enumerate(conns):
            assert c.cmd("CLIENT", "SETNAME", "w%d" % i) == Simple("OK")
        c3 = conns[5]
        c3.cmd("SELECT", "7")
        lines = client_list(conn)
        names = {d["name"]: d for d in lines}
        for i, c in enumerate(conns):
            d = names["w%d" % i]
            assert d["addr"] == "%s:%d" % c.sock.getsockname()
            assert d["cmd"] == ("select" if i == 5 else "client|setname")
        assert names["w5"]["db"] == "7"
    finally:
        for c in conns:
            c.close()
    # Closed connections leave the list.
    assert wait_for(lambda: not any(d["name"].startswith("w") for d in client_list(conn)))


def test_client_list_type(conn):
    me = conn.cmd("CLIENT", "ID")
    assert me in [int(d["id"]) for d in client_list(conn, "TYPE", "normal")]
    assert me in [int(d["id"]) for d in client_list(conn, "type", "NORMAL")]
    for t in ("master", "replica", "slave", "pubsub"):
        assert conn.cmd("CLIENT", "LIST", "TYPE", t) == b""
    assert conn.cmd("CLIENT", "LIST", "TYPE", "foo") == Error("ERR Unknown client type 'foo'")


def test_client_list_ids(server, conn):
    a, b = server.conn(), server.conn()
    try:
        ia, ib = a.cmd("CLIENT", "ID"), b.cmd("CLIENT", "ID")
        # Request order, repeats kept, unknown ids skipped.
        lines = client_list(conn, "ID", ib, 999999999, ia, ib, 0, -3)
        assert [int(d["id"]) for d in lines] == [ib, ia, ib]
        assert conn.cmd("CLIENT", "LIST", "ID", 999999999) == b""
        assert conn.cmd("CLIENT", "LIST", "ID", ia, "x") == Error("ERR Invalid client ID")
    finally:
        a.close()
        b.close()


def test_client_list_syntax(conn):
    assert conn.cmd("CLIENT", "LIST", "ID") == SYNTAX
    assert conn.cmd("CLIENT", "LIST", "foo") == SYNTAX
    assert conn.cmd("CLIENT", "LIST", "TYPE") == SYNTAX
    assert conn.cmd("CLIENT", "LIST", "TYPE", "normal", "x") == SYNTAX


def test_client_list_resp3(conn3):
    reply = conn3.cmd("CLIENT", "LIST")
    assert isinstance(reply, Verbatim) and reply.fmt == b"txt"
    assert parse_list(bytes(reply))


def test_client_list_pipelined_order(conn):
    """Commands after CLIENT LIST wait for its answer."""
    conn.send(b"CLIENT SETNAME before\r\nCLIENT LIST\r\nCLIENT SETNAME after\r\nCLIENT LIST\r\nPING\r\n")
    assert conn.read() == Simple("OK")
    first = parse_list(conn.read())
    assert conn.read() == Simple("OK")
    second = parse_list(conn.read())
    assert conn.read() == Simple("PONG")
    me = conn.cmd("CLIENT", "ID")
    assert [d["name"] for d in first if int(d["id"]) == me] == ["before"]
    assert [d["name"] for d in second if int(d["id"]) == me] == ["after"]


def test_client_list_while_clients_come_and_go(server, conn):
    stop = threading.Event()
    errors = []

    def churn():
        try:
            while not stop.is_set():
                c = server.conn()
                c.send(b"CLIENT SETNAME churn\r\nPING\r\n")
                c.close()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(100):
            lines = client_list(conn)
            assert conn.cmd("CLIENT", "ID") in [int(d["id"]) for d in lines]
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert conn.cmd("PING") == Simple("PONG")


# ---- KILL -------------------------------------------------------------------

def test_kill_old_form(server, conn):
    victim = server.conn()
    victim.cmd("PING")
    addr = "%s:%d" % victim.sock.getsockname()
    assert conn.cmd("CLIENT", "KILL", addr) == Simple("OK")
    assert is_closed(victim)
    assert conn.cmd("CLIENT", "KILL", addr) == Error("ERR No such client")
    assert conn.cmd("CLIENT", "KILL", "1.2.3.4:5") == Error("ERR No such client")
    # "ID" alone is the old form with an address that matches nobody.
    assert conn.cmd("CLIENT", "KILL", "ID") == Error("ERR No such client")
    assert conn.cmd("PING") == Simple("PONG")


def test_kill_old_form_self(server):
    c = server.conn()
    addr = "%s:%d" % c.sock.getsockname()
    c.send(b"*3\r\n$6\r\nCLIENT\r\n$4\r\nKILL\r\n$%d\r\n%s\r\nPING\r\n" % (len(addr), addr.encode()))
    assert c.read() == Simple("OK")
    assert is_closed(c)
    c.close()


def test_kill_by_id(server, conn):
    victims = [server.conn() for _ in range(6)]
    try:
        ids = [v.cmd("CLIENT", "ID") for v in victims]
        for v, i in zip(victims, ids):
            assert conn.cmd("CLIENT", "KILL", "ID", i) == 1
            assert is_closed(v)
        assert conn.cmd("CLIENT", "KILL", "ID", ids[0]) == 0
        assert conn.cmd("CLIENT", "KILL", "ID", 999999999) == 0
        listed = [int(d["id"]) for d in client_list(conn)]
        assert not set(ids) & set(listed)
    finally:
        for v in victims:
            v.close()


def test_kill_self_skipme(server):
    c = server.conn()
    me = c.cmd("CLIENT", "ID")
    assert c.cmd("CLIENT", "KILL", "ID", me) == 0
    assert c.cmd("CLIENT", "KILL", "ID", me, "SKIPME", "yes") == 0
    c.send(b"CLIENT KILL ID %d SKIPME no\r\nPING\r\n" % me)
    assert c.read() == 1
    assert is_closed(c)
    c.close()


def test_kill_filters(server, conn):
    a, b = server.conn(), server.conn()
    try:
        ia = a.cmd("CLIENT", "ID")
        b.cmd("PING")
        addr_a = "%s:%d" % a.sock.getsockname()
        laddr = "%s:%d" % a.sock.getpeername()
        # Filters are ANDed.
        assert conn.cmd("CLIENT", "KILL", "ADDR", addr_a, "ID", ia + 1000000) == 0
        assert conn.cmd("CLIENT", "KILL", "ADDR", addr_a, "TYPE", "pubsub") == 0
        assert conn.cmd("CLIENT", "KILL", "LADDR", "127.0.0.1:1", "ID", ia) == 0
        assert conn.cmd("CLIENT", "KILL", "USER", "default", "LADDR", laddr, "ADDR", addr_a,
                        "TYPE", "normal", "ID", ia, "SKIPME", "yes") == 1
        assert is_closed(a)
        assert b.cmd("PING") == Simple("PONG")
    finally:
        a.close()
        b.close()


def test_kill_errors(conn):
    assert conn.cmd("CLIENT", "KILL") == arity("client|kill")
    for bad in ("0", "-5", "x", "1.5"):
        assert conn.cmd("CLIENT", "KILL", "ID", bad) == Error("ERR client-id should be greater than 0")
    assert conn.cmd("CLIENT", "KILL", "TYPE", "foo") == Error("ERR Unknown client type 'foo'")
    assert conn.cmd("CLIENT", "KILL", "USER", "nobody") == Error("ERR No such user 'nobody'")
    assert conn.cmd("CLIENT", "KILL", "SKIPME", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "KILL", "FOO", "bar") == SYNTAX
    assert conn.cmd("CLIENT", "KILL", "ID", "1", "TYPE") == SYNTAX
    assert conn.cmd("CLIENT", "KILL", "MAXAGE", "x") == Error("ERR maxage is not an integer or out of range")
    assert conn.cmd("CLIENT", "KILL", "MAXAGE", "0") == Error("ERR maxage should be greater than 0")
    assert conn.cmd("CLIENT", "KILL", "MAXAGE", "-1") == Error("ERR maxage should be greater than 0")
    assert conn.cmd("PING") == Simple("PONG")


def test_kill_type_normal_and_maxage(new_server):
    srv = new_server(threads=3)
    old = [srv.conn()]
    wait_probe_gone(old[0])  # else the fixture's probe may count as old
    old += [srv.conn() for _ in range(4)]
    for c in old:
        c.cmd("PING")
    time.sleep(2.1)
    young = [srv.conn() for _ in range(3)]
    for c in young:
        c.cmd("PING")
    admin = young[0]
    # Connections at least 2 s old: the five old ones.
    assert admin.cmd("CLIENT", "KILL", "MAXAGE", "2") == 5
    for c in old:
        assert is_closed(c)
    for c in young:
        assert c.cmd("PING") == Simple("PONG")
    # TYPE normal kills everyone else but the caller.
    assert admin.cmd("CLIENT", "KILL", "TYPE", "normal") == 2
    for c in young[1:]:
        assert is_closed(c)
    assert [int(d["id"]) for d in client_list(admin)] == [admin.cmd("CLIENT", "ID")]
    for c in old + young:
        c.close()


def test_kill_type_normal_skipme(new_server):
    srv = new_server()
    admin = srv.conn()
    wait_probe_gone(admin)  # else the fixture's probe may count as a victim
    victims = [srv.conn() for _ in range(4)]
    for v in victims:
        v.cmd("PING")
    assert admin.cmd("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == 4
    assert len(client_list(admin)) == 1
    # Everyone, the caller included: it gets the reply, then is closed.
    other = srv.conn()
    other.cmd("PING")
    admin.send(b"CLIENT KILL TYPE normal SKIPME no\r\nPING\r\n")
    assert admin.read() == 2
    assert is_closed(admin)
    assert is_closed(other)
    fresh = srv.conn()
    assert fresh.cmd("PING") == Simple("PONG")
    for c in victims + [admin, other, fresh]:
        c.close()


# ---- SETINFO ----------------------------------------------------------------

def test_setinfo(conn):
    assert conn.cmd("CLIENT", "SETINFO", "LIB-NAME", "redis-py(x_y)") == Simple("OK")
    assert conn.cmd("CLIENT", "SETINFO", "lib-ver", "4.3.4") == Simple("OK")
    d = parse_line(conn.cmd("CLIENT", "INFO").decode()[:-1])
    assert d["lib-name"] == "redis-py(x_y)" and d["lib-ver"] == "4.3.4"
    assert conn.cmd("CLIENT", "SETINFO", "lib-name", "a b") == Error(
        "ERR lib-name cannot contain spaces, newlines or special characters.")
    assert conn.cmd("CLIENT", "SETINFO", "LIB-VER", "1\n2") == Error(
        "ERR LIB-VER cannot contain spaces, newlines or special characters.")
    assert conn.cmd("CLIENT", "SETINFO", "lib-foo", "x") == Error("ERR Unrecognized option 'lib-foo'")
    assert conn.cmd("CLIENT", "SETINFO", "lib-name") == arity("client|setinfo")
    # Empty clears.
    assert conn.cmd("CLIENT", "SETINFO", "lib-name", "") == Simple("OK")
    d = parse_line(conn.cmd("CLIENT", "INFO").decode()[:-1])
    assert d["lib-name"] == "" and d["lib-ver"] == "4.3.4"


def test_setinfo_shown_to_others(server, conn):
    other = server.conn()
    try:
        other.cmd("CLIENT", "SETINFO", "lib-name", "otherlib")
        oid = other.cmd("CLIENT", "ID")
        (d,) = client_list(conn, "ID", oid)
        assert d["lib-name"] == "otherlib"
    finally:
        other.close()


# ---- NO-EVICT, NO-TOUCH -----------------------------------------------------

def test_no_evict_no_touch_flags(conn):
    def flags():
        return parse_line(conn.cmd("CLIENT", "INFO").decode()[:-1])["flags"]

    assert conn.cmd("CLIENT", "NO-EVICT", "on") == Simple("OK")
    assert flags() == "e"
    assert conn.cmd("CLIENT", "NO-TOUCH", "ON") == Simple("OK")
    assert flags() == "eT"
    assert conn.cmd("CLIENT", "NO-EVICT", "OFF") == Simple("OK")
    assert flags() == "T"
    assert conn.cmd("CLIENT", "NO-TOUCH", "off") == Simple("OK")
    assert flags() == "N"
    assert conn.cmd("CLIENT", "NO-EVICT", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "NO-TOUCH", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "NO-TOUCH") == arity("client|no-touch")
    assert conn.cmd("CLIENT", "NO-EVICT", "on", "x") == arity("client|no-evict")


def test_no_touch_keeps_idle_time(conn):
    conn.cmd("SET", "nt", "v")
    time.sleep(1.2)
    assert conn.cmd("CLIENT", "NO-TOUCH", "on") == Simple("OK")
    conn.cmd("GET", "nt")
    assert conn.cmd("OBJECT", "IDLETIME", "nt") >= 1
    # TOUCH still touches.
    assert conn.cmd("TOUCH", "nt") == 1
    assert conn.cmd("OBJECT", "IDLETIME", "nt") == 0
    time.sleep(1.2)
    assert conn.cmd("CLIENT", "NO-TOUCH", "off") == Simple("OK")
    conn.cmd("GET", "nt")
    assert conn.cmd("OBJECT", "IDLETIME", "nt") == 0


# ---- REPLY ------------------------------------------------------------------

def test_reply_off_on(conn):
    conn.send(b"CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nNOSUCHCMD\r\nCLIENT REPLY ON\r\nGET a\r\n")
    assert conn.read() == Simple("OK")
    assert conn.read() == b"1"


def test_reply_skip(conn):
    conn.send(b"CLIENT REPLY SKIP\r\nSET b 2\r\nGET b\r\n")
    assert conn.read() == b"2"
    # A rejected command consumes the skip too.
    conn.send(b"CLIENT REPLY SKIP\r\nNOSUCHCMD\r\nPING\r\n")
    assert conn.read() == Simple("PONG")
    conn.send(b"CLIENT REPLY SKIP\r\nGET\r\nPING\r\n")
    assert conn.read() == Simple("PONG")
    # SKIP while OFF leaves replies off.
    conn.send(b"CLIENT REPLY OFF\r\nCLIENT REPLY SKIP\r\nPING\r\nPING\r\nCLIENT REPLY ON\r\nECHO x\r\n")
    assert conn.read() == Simple("OK")
    assert conn.read() == b"x"


def test_reply_skip_then_list(conn):
    """A muted CLIENT LIST stays muted although its answer comes later."""
    conn.send(b"CLIENT REPLY SKIP\r\nCLIENT LIST\r\nECHO after\r\n")
    assert conn.read() == b"after"


def test_reply_errors(conn):
    assert conn.cmd("CLIENT", "REPLY", "maybe") == SYNTAX
    assert conn.cmd("CLIENT", "REPLY") == arity("client|reply")
    assert conn.cmd("PING") == Simple("PONG")


# ---- PAUSE / UNPAUSE --------------------------------------------------------

# The server keeps time in milliseconds, read at the start of its loop turn.
PAUSE_SLACK = -0.02


def timed(c, *args):
    t0 = time.time()
    reply = c.cmd(*args)
    return reply, time.time() - t0


def test_pause_write(new_server):
    srv = new_server(threads=3)
    admin = srv.conn()
    others = [srv.conn() for _ in range(6)]
    assert admin.cmd("CLIENT", "PAUSE", "60000", "WRITE") == Simple("OK")
    # Reads run; writes wait.
    for c in others:
        assert c.cmd("GET", "k") is None
        c.send(b"SET k v\r\nGET k\r\n")
    time.sleep(0.3)
    for c in others:
        c.sock.settimeout(0.05)
        with pytest.raises(socket.timeout):
            c.sock.recv(1)
        c.sock.settimeout(10)
    me = admin.cmd("CLIENT", "ID")
    # Postponed clients show as blocked, as in Redis.
    assert wait_for(lambda: [x["flags"] for x in client_list(admin) if int(x["id"]) != me] == ["b"] * 6)
    # UNPAUSE wakes every worker at once, not at the end of the pause.
    assert admin.cmd("CLIENT", "UNPAUSE") == Simple("OK")
    for c in others:
        assert c.read() == Simple("OK")
        assert c.read() == b"v"
    for c in others + [admin]:
        c.close()


def test_pause_all_blocks_everything(new_server):
    srv = new_server()
    admin, other = srv.conn(), srv.conn()
    # Durations count from before the PAUSE is sent: the pause cannot end
    # earlier than that plus its length, however late the next command is.
    t0 = time.time()
    assert admin.cmd("CLIENT", "PAUSE", "500", "ALL") == Simple("OK")
    reply, _ = timed(other, "GET", "k")
    assert reply is None and time.time() - t0 >= PAUSE_SLACK + 0.5
    # The pause also holds the client that asked for it.
    t0 = time.time()
    assert admin.cmd("CLIENT", "PAUSE", "400") == Simple("OK")
    reply, _ = timed(admin, "CLIENT", "UNPAUSE")
    assert reply == Simple("OK") and time.time() - t0 >= PAUSE_SLACK + 0.4
    reply, dt = timed(other, "SET", "k", "v")
    assert reply == Simple("OK") and dt < 1.0
    admin.close()
    other.close()


def test_pause_keeps_stricter_and_later(new_server):
    srv = new_server()
    admin, other = srv.conn(), srv.conn()
    # A shorter pause does not end a longer one early (durations count
    # from before the first PAUSE is sent, as above).
    t0 = time.time()
    assert admin.cmd("CLIENT", "PAUSE", "1200", "WRITE") == Simple("OK")
    assert admin.cmd("CLIENT", "PAUSE", "50", "WRITE") == Simple("OK")
    reply, _ = timed(other, "SET", "k", "v")
    assert reply == Simple("OK") and time.time() - t0 >= PAUSE_SLACK + 1.2
    # ALL over a running WRITE pause: all commands wait until the later end.
    t0 = time.time()
    assert admin.cmd("CLIENT", "PAUSE", "1200", "WRITE") == Simple("OK")
    assert admin.cmd("CLIENT", "PAUSE", "50", "ALL") == Simple("OK")
    reply, _ = timed(other, "GET", "k")
    assert reply == b"v" and time.time() - t0 >= PAUSE_SLACK + 1.2
    admin.close()
    other.close()


def test_pause_errors(conn):
    assert conn.cmd("CLIENT", "PAUSE", "x") == Error("ERR timeout is not an integer or out of range")
    assert conn.cmd("CLIENT", "PAUSE", "-1") == Error("ERR timeout is negative")
    assert conn.cmd("CLIENT", "PAUSE", "9223372036854775807") == Error("ERR timeout is out of range")
    assert conn.cmd("CLIENT", "PAUSE", "10", "foo") == Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert conn.cmd("CLIENT", "PAUSE", "10", "write", "x") == Error(
        "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.")
    assert conn.cmd("CLIENT", "PAUSE") == arity("client|pause")
    assert conn.cmd("CLIENT", "UNPAUSE", "x") == arity("client|unpause")
    # A zero timeout pauses nothing.
    assert conn.cmd("CLIENT", "PAUSE", "0") == Simple("OK")
    reply, dt = timed(conn, "SET", "p0", "v")
    assert reply == Simple("OK") and dt < 2.0
    assert conn.cmd("CLIENT", "UNPAUSE") == Simple("OK")


def test_pause_errors_answered_while_paused(new_server):
    srv = new_server()
    admin, other = srv.conn(), srv.conn()
    admin.cmd("CLIENT", "PAUSE", "60000", "WRITE")
    # Arity errors do not wait for the pause.
    reply, dt = timed(other, "SET", "k")
    assert reply == arity("set") and dt < 3
    admin.cmd("CLIENT", "UNPAUSE")
    admin.close()
    other.close()


# ---- HELP and errors ----------------------------------------------------------

def test_help(conn):
    reply = conn.cmd("CLIENT", "HELP")
    assert reply[0] == Simple("CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    assert all(isinstance(x, Simple) for x in reply)
    for line in ("ID", "SETINFO <option> <value>", "NO-TOUCH (ON|OFF)", "PAUSE <timeout> [WRITE|ALL]",
                 "    * MAXAGE <maxage>"):
        assert Simple(line) in reply
    assert reply[-2:] == [Simple("HELP"), Simple("    Prints this help.")]
    assert conn.cmd("CLIENT", "HELP", "x") == arity("client|help")


def test_unknown_subcommand(conn):
    assert conn.cmd("CLIENT", "FOO") == Error("ERR unknown subcommand 'FOO'. Try CLIENT HELP.")
    assert conn.cmd("CLIENT") == Error("ERR wrong number of arguments for 'client' command")


def test_redis_py_client_calls(r):
    """redis-py's own helpers parse our replies."""
    assert r.client_setname("pyname")
    assert r.client_getname() in ("pyname", b"pyname")
    info = r.client_info()
    assert info["name"] == "pyname" and info["cmd"] == "client|info"
    listed = r.client_list()
    assert any(c["name"] == "pyname" for c in listed)
    assert isinstance(r.client_id(), int)
