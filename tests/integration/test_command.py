"""COMMAND and its subcommands: COUNT, INFO, DOCS, LIST, GETKEYS,
GETKEYSANDFLAGS, HELP. Everything comes from the one command table.

Where Debian's redis-server is installed, a few replies are compared with
a real Redis started for the purpose (Redis 7.0 there; the rows compared are
the same in 7.2)."""

import pytest
from conftest import ref_conn
from resp import Error, Map, Set

SYNTAX = Error("ERR syntax error")

GET_INFO = [b"get", 2, ["readonly", "fast"], 1, 1, 1, ["@read", "@string", "@fast"], [],
            [[b"flags", ["RO", "access"],
              b"begin_search", [b"type", b"index", b"spec", [b"index", 1]],
              b"find_keys", [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]],
            []]


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


# ---- COMMAND, COUNT, INFO ---------------------------------------------------

def test_command_info_get_exact(conn):
    assert conn.cmd("COMMAND", "INFO", "get") == [GET_INFO]
    assert conn.cmd("COMMAND", "INFO", "GET") == [GET_INFO]


def test_command_info_get_resp3_wire(conn3):
    raw = conn3.cmd_raw("COMMAND", "INFO", "get")
    assert raw == (b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
                   b"~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n"
                   b"$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n"
                   b"$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n"
                   b"$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n")


def test_command_info_same_as_redis(conn, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref)
    for name in ("get", "set", "time", "lastsave", "dbsize", "flushall", "flushdb", "info", "shutdown", "ping",
                 "debug"):
        mine, theirs = conn.cmd("COMMAND", "INFO", name)[0], ref.cmd("COMMAND", "INFO", name)[0]
        # Same shape and the same name, arity, flags, key range and ACL categories.
        assert len(mine) == len(theirs) == 10, name
        assert mine[:7] == theirs[:7], name
        assert [type(x) for x in mine] == [type(x) for x in theirs], name
        if name in ("get", "time", "lastsave", "dbsize", "flushall", "flushdb", "info", "shutdown", "debug"):
            assert mine == theirs, name
    # Containers: the same subcommands with the same properties (Redis
    # lists them in hash order). Tips aside: 7.2 added cluster routing tips
    # to CONFIG RESETSTAT and REWRITE that 7.0 lacks.
    mine = {e[0]: e[:7] + e[8:] for e in conn.cmd("COMMAND", "INFO", "config")[0][9]}
    theirs = {e[0]: e[:7] + e[8:] for e in ref.cmd("COMMAND", "INFO", "config")[0][9]}
    assert mine == theirs
    assert conn.cmd("COMMAND", "INFO", "config")[0][:9] == ref.cmd("COMMAND", "INFO", "config")[0][:9]
    ref.close()


def test_command_info_resp3_same_as_redis(conn3, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref, resp3=True)
    for name in ("get", "time", "flushall", "info"):
        assert conn3.cmd_raw("COMMAND", "INFO", name) == ref.cmd_raw("COMMAND", "INFO", name), name
    assert conn3.cmd_raw("COMMAND", "INFO", "nosuch") == ref.cmd_raw("COMMAND", "INFO", "nosuch")
    ref.close()


def test_command_info_several_and_unknown(conn):
    reply = conn.cmd("COMMAND", "INFO", "nosuch", "get")
    assert reply == [None, GET_INFO]
    assert conn.cmd_raw("COMMAND", "INFO", "nosuch") == b"*1\r\n$-1\r\n"
    # Subcommands by their full name.
    sub = conn.cmd("COMMAND", "INFO", "config|get")[0]
    assert sub[:7] == [b"config|get", -3, ["admin", "noscript", "loading", "stale"], 0, 0, 0,
                       ["@admin", "@slow", "@dangerous"]]


def test_command_info_container(conn):
    cfg = conn.cmd("COMMAND", "INFO", "config")[0]
    assert cfg[:9] == [b"config", -2, [], 0, 0, 0, ["@slow"], [], []]
    names = sorted(e[0] for e in cfg[9])
    assert names == [b"config|get", b"config|help", b"config|resetstat", b"config|rewrite", b"config|set"]
    cset = [e for e in cfg[9] if e[0] == b"config|set"][0]
    assert cset[7] == [b"request_policy:all_nodes", b"response_policy:all_succeeded"]


def test_command_key_specs(conn):
    mset = conn.cmd("COMMAND", "INFO", "mset")[0]
    assert mset[1] == -3 and mset[3:6] == [1, -1, 2]
    assert mset[8][0][5] == [b"type", b"range", b"spec", [b"lastkey", -1, b"keystep", 2, b"limit", 0]]
    mu = conn.cmd("COMMAND", "INFO", "memory|usage")[0]
    assert mu[3:6] == [2, 2, 1]
    assert mu[8][0][:2] == [b"flags", ["RO"]]
    # numkeys forms: a keynum spec after the range spec of the destination.
    zus = conn.cmd("COMMAND", "INFO", "zunionstore")[0]
    assert [spec[5][1] for spec in zus[8]] == [b"range", b"keynum"]
    assert zus[8][1][3] == [b"type", b"index", b"spec", [b"index", 2]]
    assert zus[8][1][5][3] == [b"keynumidx", 0, b"firstkey", 1, b"keystep", 1]
    # Keys after a keyword: the key, then STORE and STOREDIST destinations.
    gr = conn.cmd("COMMAND", "INFO", "georadius")[0]
    assert [spec[3] for spec in gr[8]] == [[b"type", b"index", b"spec", [b"index", 1]],
                                          [b"type", b"keyword", b"spec", [b"keyword", b"STORE", b"startfrom", 6]],
                                          [b"type", b"keyword", b"spec", [b"keyword", b"STOREDIST", b"startfrom", 6]]]
    # Keyless commands have no key specs.
    assert conn.cmd("COMMAND", "INFO", "ping")[0][8] == []


def test_command_all_and_count(conn, conn3):
    n = conn.cmd("COMMAND", "COUNT")
    assert isinstance(n, int) and n > 20
    everything = conn.cmd("COMMAND")
    assert len(everything) == n
    assert conn.cmd("COMMAND", "INFO") == everything
    names = {e[0] for e in everything}
    for name in (b"get", b"set", b"info", b"config", b"command", b"time", b"shutdown", b"memory"):
        assert name in names
    for e in everything:
        assert len(e) == 10
        assert isinstance(e[1], int) and e[1] != 0
    # RESP3: flags and categories are sets.
    one = conn3.cmd("COMMAND", "INFO", "get")[0]
    assert isinstance(one[2], Set) and isinstance(one[6], Set)
    assert conn.cmd("COMMAND", "COUNT", "x") == arity("command|count")
    assert conn.cmd("COMMAND", "NOSUCH") == Error("ERR unknown subcommand 'NOSUCH'. Try COMMAND HELP.")


# ---- DOCS -------------------------------------------------------------------

def pairs(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def test_docs(conn, conn3):
    reply = conn.cmd("COMMAND", "DOCS", "get")
    assert reply[0] == b"get"
    doc = pairs(reply[1])
    assert doc[b"since"] == b"1.0.0" and doc[b"group"] == b"string" and doc[b"complexity"] == b"O(1)"
    assert doc[b"summary"]
    assert conn.cmd("COMMAND", "DOCS", "nosuch") == []
    m = conn3.cmd("COMMAND", "DOCS", "config", "nosuch")
    assert isinstance(m, Map) and len(m) == 1
    cfg = dict(m[0][1])
    assert cfg[b"group"] == b"server" and cfg[b"since"] == b"2.0.0"
    subs = dict(cfg[b"subcommands"])
    assert set(subs) == {b"config|get", b"config|set", b"config|resetstat", b"config|rewrite", b"config|help"}
    assert dict(subs[b"config|set"])[b"since"] == b"2.0.0"
    alldocs = conn3.cmd("COMMAND", "DOCS")
    assert len(alldocs) == conn.cmd("COMMAND", "COUNT")


# ---- LIST -------------------------------------------------------------------

def test_list(conn):
    everything = conn.cmd("COMMAND", "LIST")
    assert b"get" in everything and b"config|get" in everything and b"command|list" in everything
    assert len(everything) == len(set(everything))
    got = conn.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "conf*")
    assert sorted(got) == [b"config", b"config|get", b"config|help", b"config|resetstat", b"config|rewrite",
                           b"config|set"]
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "pattern", "CONFIG|G*") == [b"config|get"]
    strings = conn.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "string")
    assert b"get" in strings and b"set" in strings and b"config" not in strings
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "aclcat", "nosuch") == []
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "MODULE", "x") == []
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "foo", "x") == SYNTAX
    assert conn.cmd("COMMAND", "LIST", "FILTERBY") == SYNTAX
    assert conn.cmd("COMMAND", "LIST", "foo") == SYNTAX


# ---- GETKEYS ----------------------------------------------------------------

def test_getkeys(server, conn):
    assert conn.cmd("COMMAND", "GETKEYS", "set", "a", "b") == [b"a"]
    assert conn.cmd("COMMAND", "GETKEYS", "SET", "a", "b", "EX", "10") == [b"a"]
    assert conn.cmd("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2") == [b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "memory", "usage", "k") == [b"k"]
    assert conn.cmd("COMMAND", "GETKEYS", "nosuch", "a") == Error("ERR Invalid command specified")
    assert conn.cmd("COMMAND", "GETKEYS", "config", "foo") == Error("ERR Invalid command specified")
    assert conn.cmd("COMMAND", "GETKEYS", "get", "a", "b") == \
        Error("ERR Invalid number of arguments specified for command")
    if server.proc:  # Redis 7.2's arity (-3); 7.0 wanted at least 4 arguments
        assert conn.cmd("COMMAND", "GETKEYS", "ping") == Error("ERR The command has no key arguments")
    assert conn.cmd("COMMAND", "GETKEYS", "config", "get", "x") == Error("ERR The command has no key arguments")
    assert conn.cmd("COMMAND", "GETKEYS") == arity("command|getkeys")


def test_getkeysandflags(server, conn, conn3):
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "get", "k") == [[b"k", ["RO", "access"]]]
    reply = conn.cmd("COMMAND", "GETKEYSANDFLAGS", "mset", "a", "1", "b", "2")
    assert [k for k, _ in reply] == [b"a", b"b"]
    assert conn3.cmd_raw("COMMAND", "GETKEYSANDFLAGS", "get", "k") == \
        b"*1\r\n*2\r\n$1\r\nk\r\n~2\r\n+RO\r\n+access\r\n"
    if server.proc:
        assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "ping") == Error("ERR The command has no key arguments")
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "dbsize", "x") == Error("ERR The command has no key arguments")


def test_help(conn):
    lines = conn.cmd("COMMAND", "HELP")
    assert lines[0] == "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "GETKEYS <full-command>" in lines
    assert lines[-2:] == ["HELP", "    Prints this help."]


def test_redis_py_helpers(r):
    cmds = r.command()
    assert cmds["get"]["arity"] == 2 and cmds["get"]["flags"] == ["readonly", "fast"]
    assert r.command_count() == len(cmds)
    assert r.command_getkeys("MSET", "a", 1, "b", 2) == ["a", "b"]
