"""COMMAND parity with Redis 8: key specs (several per command, keyword
and keynum searches, notes), COMMAND GETKEYSANDFLAGS per key, the
movablekeys flag, COMMAND LIST FILTERBY and COMMAND DOCS argument trees.

Where Debian's redis-server (7.0) is installed, replies are compared with
it for the commands whose specs and docs did not change between 7.0 and
8.0."""

import shutil
import subprocess

import pytest
from conftest import ref_conn
from resp import Error, Map, Set

SYNTAX = Error("ERR syntax error")
INVALID_ARGS = Error("ERR Invalid arguments specified for command")


def pairs(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def info(conn, name):
    return conn.cmd("COMMAND", "INFO", name)[0]


# ---- GETKEYSANDFLAGS ----------------------------------------------------------

RW_ACCESS_DELETE = ["RW", "access", "delete"]
GETKEYSANDFLAGS = [
    (["SET", "k", "v"], [[b"k", ["OW", "update"]]]),
    (["SET", "k", "v", "EX", "10", "GET"], [[b"k", ["RW", "access", "update"]]]),
    (["SET", "k", "v", "get"], [[b"k", ["RW", "access", "update"]]]),
    (["GET", "k"], [[b"k", ["RO", "access"]]]),
    (["GETDEL", "k"], [[b"k", RW_ACCESS_DELETE]]),
    (["GETEX", "k", "EX", "5"], [[b"k", ["RW", "access", "update"]]]),
    (["MSET", "a", "1", "b", "2"], [[b"a", ["OW", "update"]], [b"b", ["OW", "update"]]]),
    (["MGET", "a", "b"], [[b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["DEL", "a", "b"], [[b"a", ["RM", "delete"]], [b"b", ["RM", "delete"]]]),
    (["EXISTS", "a"], [[b"a", ["RO"]]]),
    (["EXPIRE", "k", "10"], [[b"k", ["RW", "update"]]]),
    (["LMOVE", "a", "b", "LEFT", "RIGHT"], [[b"a", RW_ACCESS_DELETE], [b"b", ["RW", "insert"]]]),
    (["RPOPLPUSH", "a", "b"], [[b"a", RW_ACCESS_DELETE], [b"b", ["RW", "insert"]]]),
    (["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"], [[b"a", RW_ACCESS_DELETE], [b"b", ["RW", "insert"]]]),
    (["BRPOPLPUSH", "a", "b", "0"], [[b"a", RW_ACCESS_DELETE], [b"b", ["RW", "insert"]]]),
    (["SMOVE", "a", "b", "m"], [[b"a", RW_ACCESS_DELETE], [b"b", ["RW", "insert"]]]),
    (["RENAME", "a", "b"], [[b"a", RW_ACCESS_DELETE], [b"b", ["OW", "update"]]]),
    (["RENAMENX", "a", "b"], [[b"a", RW_ACCESS_DELETE], [b"b", ["OW", "insert"]]]),
    (["COPY", "a", "b"], [[b"a", ["RO", "access"]], [b"b", ["OW", "update"]]]),
    (["ZUNIONSTORE", "d", "2", "a", "b"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["ZINTERSTORE", "d", "1", "a", "WEIGHTS", "2"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]]]),
    (["ZDIFFSTORE", "d", "2", "a", "b"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["ZRANGESTORE", "d", "s", "0", "-1"], [[b"d", ["OW", "update"]], [b"s", ["RO", "access"]]]),
    (["ZUNION", "2", "a", "b"], [[b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["ZINCRBY", "z", "1", "m"], [[b"z", ["RW", "access", "update"]]]),
    (["ZMPOP", "2", "a", "b", "MIN"], [[b"a", RW_ACCESS_DELETE], [b"b", RW_ACCESS_DELETE]]),
    (["BZMPOP", "0", "1", "a", "MAX"], [[b"a", RW_ACCESS_DELETE]]),
    (["LMPOP", "2", "a", "b", "LEFT"], [[b"a", RW_ACCESS_DELETE], [b"b", RW_ACCESS_DELETE]]),
    (["BLMPOP", "0", "1", "a", "LEFT"], [[b"a", RW_ACCESS_DELETE]]),
    (["SINTERCARD", "2", "a", "b", "LIMIT", "1"], [[b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["ZINTERCARD", "1", "a"], [[b"a", ["RO", "access"]]]),
    (["SINTERSTORE", "d", "a", "b"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["SUNIONSTORE", "d", "a"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]]]),
    (["SDIFFSTORE", "d", "a"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]]]),
    (["SMISMEMBER", "s", "a"], [[b"s", ["RO", "access"]]]),
    (["LPOS", "l", "a"], [[b"l", ["RO", "access"]]]),
    (["BITOP", "AND", "d", "a", "b"], [[b"d", ["OW", "update"]], [b"a", ["RO", "access"]], [b"b", ["RO", "access"]]]),
    (["BITFIELD", "k", "GET", "u8", "0"], [[b"k", ["RO", "access"]]]),
    (["BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "SAT"], [[b"k", ["RO", "access"]]]),
    (["BITFIELD", "k", "SET", "u8", "0", "1"], [[b"k", ["RW", "access", "update"]]]),
    (["BITFIELD", "k", "INCRBY", "u8", "0", "1"], [[b"k", ["RW", "access", "update"]]]),
    (["BITFIELD", "k"], [[b"k", ["RO", "access"]]]),
    (["GEORADIUS", "k", "0", "0", "1", "m"], [[b"k", ["RO", "access"]]]),
    (["GEORADIUS", "k", "0", "0", "1", "m", "STORE", "d"], [[b"k", ["RO", "access"]], [b"d", ["OW", "update"]]]),
    (["GEORADIUS", "k", "0", "0", "1", "m", "storedist", "d"], [[b"k", ["RO", "access"]], [b"d", ["OW", "update"]]]),
    (["GEORADIUSBYMEMBER", "k", "m", "1", "km", "STORE", "d"], [[b"k", ["RO", "access"]], [b"d", ["OW", "update"]]]),
    (["GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"],
     [[b"d", ["OW", "update"]], [b"s", ["RO", "access"]]]),
    (["PFCOUNT", "a", "b"], [[b"a", ["RW", "access"]], [b"b", ["RW", "access"]]]),
    (["PFMERGE", "d", "a"], [[b"d", ["RW", "access", "insert"]], [b"a", ["RO", "access"]]]),
    (["OBJECT", "ENCODING", "k"], [[b"k", ["RO"]]]),
    (["MEMORY", "USAGE", "k"], [[b"k", ["RO"]]]),
    (["BLPOP", "a", "b", "0"], [[b"a", RW_ACCESS_DELETE], [b"b", RW_ACCESS_DELETE]]),
]


def test_getkeysandflags_matrix(conn):
    for args, expected in GETKEYSANDFLAGS:
        assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", *args) == expected, args
        assert conn.cmd("COMMAND", "GETKEYS", *args) == [k for k, _ in expected], args


def test_getkeysandflags_resp3(conn3):
    assert conn3.cmd("COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "LEFT") == \
        [[b"a", Set(["RW", "access", "delete"])], [b"b", Set(["RW", "insert"])]]
    raw = conn3.cmd_raw("COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v")
    assert raw == b"*1\r\n*2\r\n$1\r\nk\r\n~2\r\n+OW\r\n+update\r\n"


def test_getkeysandflags_same_as_redis(conn, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref)
    for args, _ in GETKEYSANDFLAGS:
        if args[0] == "SINTERSTORE":
            continue  # 7.0 called SINTERSTORE's destination RW; 7.2 on call it OW like the others
        assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", *args) == ref.cmd("COMMAND", "GETKEYSANDFLAGS", *args), args
    ref.close()


def test_getkeys_errors(conn):
    assert conn.cmd("COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "5", "a") == INVALID_ARGS
    # PFMERGE without sources: the source spec does not fit, so no keys at all.
    assert conn.cmd("COMMAND", "GETKEYS", "PFMERGE", "d") == INVALID_ARGS
    assert conn.cmd("COMMAND", "GETKEYS", "ZUNION", "x", "a") == INVALID_ARGS
    assert conn.cmd("COMMAND", "GETKEYS", "ZUNION", "0", "a") == INVALID_ARGS
    assert conn.cmd("COMMAND", "GETKEYS", "LMPOP", "-1", "a", "LEFT") == INVALID_ARGS
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "ZUNION", "3", "a", "b") == INVALID_ARGS
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "PING") == Error("ERR The command has no key arguments")
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "NOSUCH", "k") == Error("ERR Invalid command specified")
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "GET") == \
        Error("ERR Invalid number of arguments specified for command")
    # A keyword as the last argument has no key after it.
    assert conn.cmd("COMMAND", "GETKEYS", "GEORADIUS", "k", "0", "0", "1", "m", "COUNT", "STORE") == [b"k"]


# ---- key specs and movablekeys ------------------------------------------------

def spec(flags, bs, fk, notes=None):
    head = [b"notes", notes] if notes else []
    return head + [b"flags", flags, b"begin_search", bs, b"find_keys", fk]


def index(i):
    return [b"type", b"index", b"spec", [b"index", i]]


def rng(last, step=1, limit=0):
    return [b"type", b"range", b"spec", [b"lastkey", last, b"keystep", step, b"limit", limit]]


def test_key_specs_exact(conn):
    assert info(conn, "lmove")[8] == [spec(["RW", "access", "delete"], index(1), rng(0)),
                                      spec(["RW", "insert"], index(2), rng(0))]
    assert info(conn, "set")[8] == [spec(["RW", "access", "update", "variable_flags"], index(1), rng(0),
                                         b"RW and ACCESS due to the optional `GET` argument")]
    assert info(conn, "bitop")[8] == [spec(["OW", "update"], index(2), rng(0)),
                                      spec(["RO", "access"], index(3), rng(-1))]
    assert info(conn, "zunionstore")[8] == [
        spec(["OW", "update"], index(1), rng(0)),
        spec(["RO", "access"], index(2), [b"type", b"keynum", b"spec", [b"keynumidx", 0, b"firstkey", 1, b"keystep", 1]])]
    kw = [b"type", b"keyword", b"spec", [b"keyword", b"STOREDIST", b"startfrom", 5]]
    assert info(conn, "georadiusbymember")[8][2] == spec(["OW", "update"], kw, rng(0))
    assert info(conn, "mset")[8] == [spec(["OW", "update"], index(1), rng(-1, 2))]
    assert info(conn, "ping")[8] == []
    assert info(conn, "config|get")[8] == []


def test_key_specs_resp3_maps(conn3):
    lm = conn3.cmd("COMMAND", "INFO", "lmove")[0][8]
    assert isinstance(lm, Set) and len(lm) == 2
    first = lm[0]
    assert isinstance(first, Map)
    d = first.dict()
    assert d[b"flags"] == Set(["RW", "access", "delete"])
    assert d[b"begin_search"] == Map([(b"type", b"index"), (b"spec", Map([(b"index", 1)]))])
    assert d[b"find_keys"] == Map([(b"type", b"range"),
                                   (b"spec", Map([(b"lastkey", 0), (b"keystep", 1), (b"limit", 0)]))])


# Redis 8 sets movablekeys on exactly these of HotKV's commands (SORT and
# SORT_RO too, where the server has them).
MOVABLE = {b"zunion", b"zinter", b"zdiff", b"zunionstore", b"zinterstore", b"zdiffstore", b"zintercard",
           b"zmpop", b"bzmpop", b"sintercard", b"lmpop", b"blmpop", b"georadius", b"georadiusbymember",
           b"sort", b"sort_ro", b"eval", b"evalsha", b"eval_ro", b"evalsha_ro", b"fcall", b"fcall_ro"}
MOVABLE |= {b"msetex"}  # Redis 8.4: a keynum spec whose keys are every other argument
MOVABLE |= {b"xread", b"xreadgroup"}  # keys after the STREAMS keyword
MOVABLE |= {b"migrate"}  # one key, or those after KEYS


def test_movablekeys_exact(conn):
    everything = conn.cmd("COMMAND")
    movable = set()
    for e in everything:
        if "movablekeys" in e[2]:
            movable.add(e[0])
        for sub in e[9]:
            assert "movablekeys" not in sub[2], sub[0]
    names = {e[0] for e in everything}
    assert movable == MOVABLE & names
    for name in (b"set", b"bitfield", b"get", b"mset", b"lmove", b"georadius_ro", b"geosearchstore", b"bitop"):
        assert "movablekeys" not in info(conn, name)[2], name
    # The legacy key range stays Redis's for movable-key commands.
    assert info(conn, "zunionstore")[3:6] == [1, 1, 1]
    assert info(conn, "zunion")[3:6] == [0, 0, 0]


def test_key_specs_same_as_redis(conn, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref)
    changed = {b"sinterstore"}  # destination RW in 7.0, OW since 7.2
    flags_changed = {b"echo", b"blpop", b"brpop", b"brpoplpush", b"blmove", b"bzpopmin", b"bzpopmax"}
    compared = 0
    for e in conn.cmd("COMMAND"):
        for mine in [e] + list(e[9]):
            theirs = ref.cmd("COMMAND", "INFO", mine[0])[0]
            if theirs is None or mine[0] in changed:
                continue
            assert mine[8] == theirs[8], mine[0]
            assert mine[3:6] == theirs[3:6], mine[0]
            if mine[0] not in flags_changed:
                assert sorted(mine[2]) == sorted(theirs[2]), mine[0]
            compared += 1
    assert compared > 150
    ref.close()


# ---- COMMAND LIST, COUNT, INFO --------------------------------------------------

def test_list_filterby(conn):
    everything = conn.cmd("COMMAND", "LIST")
    assert len(everything) == len(set(everything))
    top = conn.cmd("COMMAND", "COUNT")
    assert len([n for n in everything if b"|" not in n]) == top
    assert sorted(conn.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "object|*")) == \
        [b"object|encoding", b"object|freq", b"object|help", b"object|idletime", b"object|refcount"]
    assert sorted(conn.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "z*store")) == \
        [b"zdiffstore", b"zinterstore", b"zrangestore", b"zunionstore"]
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "nomatch*") == []
    geo = conn.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "GEO")
    assert set(geo) == {b"geoadd", b"geodist", b"geohash", b"geopos", b"georadius", b"georadiusbymember",
                        b"georadius_ro", b"georadiusbymember_ro", b"geosearch", b"geosearchstore"}
    # Subcommands are listed by their own categories.
    admin = conn.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "admin")
    assert b"config|set" in admin and b"config" not in admin and b"get" not in admin
    blocking = set(conn.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "blocking"))
    assert {b"blpop", b"brpop", b"blmove", b"bzmpop"} <= blocking and b"lpop" not in blocking
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch") == []
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch") == []
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN") == SYNTAX
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "a", "b") == SYNTAX
    assert conn.cmd("COMMAND", "LIST", "FILTERBY", "NOSUCH", "a") == SYNTAX
    assert conn.cmd("COMMAND", "LIST", "PATTERN", "a") == SYNTAX


def test_list_filterby_same_as_redis(conn, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref)
    for args in (["FILTERBY", "PATTERN"], ["FILTERBY", "X", "y"], ["FILTERBY", "MODULE", "m"], ["x"],
                 ["FILTERBY", "ACLCAT", "nosuch"]):
        assert conn.cmd("COMMAND", "LIST", *args) == ref.cmd("COMMAND", "LIST", *args), args
    mine = set(conn.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog"))
    assert mine == set(ref.cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog")) - {b"pfselftest", b"pfdebug"}
    ref.close()


def test_info_and_count(conn):
    n = conn.cmd("COMMAND", "COUNT")
    assert conn.cmd("COMMAND", "INFO") == conn.cmd("COMMAND")
    assert len(conn.cmd("COMMAND", "INFO")) == n
    got = conn.cmd("COMMAND", "INFO", "object|freq", "nosuch", "OBJECT|FREQ", "get|x")
    assert got[0][0] == b"object|freq" and got[1] is None and got[2][0] == b"object|freq" and got[3] is None


# ---- DOCS ---------------------------------------------------------------------

def test_docs_get_exact(conn):
    reply = conn.cmd("COMMAND", "DOCS", "get")
    assert reply[0] == b"get"
    doc = pairs(reply[1])
    assert list(doc) == [b"summary", b"since", b"group", b"complexity", b"arguments"]
    assert doc[b"arguments"] == [[b"name", b"key", b"type", b"key", b"display_text", b"key", b"key_spec_index", 0]]


def test_docs_set_tree(conn):
    doc = pairs(conn.cmd("COMMAND", "DOCS", "set")[1])
    assert [h[0] for h in doc[b"history"]] == [b"2.6.12", b"6.0.0", b"6.2.0", b"7.0.0", b"8.4.0"]
    args = [pairs(a) for a in doc[b"arguments"]]
    assert [a[b"name"] for a in args] == [b"key", b"value", b"condition", b"get", b"expiration"]
    cond = args[2]
    assert cond[b"type"] == b"oneof" and cond[b"flags"] == ["optional"] and cond[b"since"] == b"2.6.12"
    assert b"display_text" not in cond
    assert cond[b"arguments"][:2] == [
        [b"name", b"nx", b"type", b"pure-token", b"display_text", b"nx", b"token", b"NX"],
        [b"name", b"xx", b"type", b"pure-token", b"display_text", b"xx", b"token", b"XX"]]
    # Redis 8.4's compare-and-set conditions.
    assert [(a[b"name"], a[b"token"], a[b"since"]) for a in map(pairs, cond[b"arguments"][2:])] == [
        (b"ifeq-value", b"IFEQ", b"8.4.0"), (b"ifne-value", b"IFNE", b"8.4.0"),
        (b"ifdeq-digest", b"IFDEQ", b"8.4.0"), (b"ifdne-digest", b"IFDNE", b"8.4.0")]
    exp = [pairs(a) for a in args[4][b"arguments"]]
    assert [(a[b"name"], a.get(b"token")) for a in exp] == [
        (b"seconds", b"EX"), (b"milliseconds", b"PX"), (b"unix-time-seconds", b"EXAT"),
        (b"unix-time-milliseconds", b"PXAT"), (b"keepttl", b"KEEPTTL")]
    assert exp[2][b"type"] == b"unix-time" and exp[2][b"since"] == b"6.2.0"


def test_docs_deprecated_and_keys(conn):
    doc = pairs(conn.cmd("COMMAND", "DOCS", "georadius")[1])
    assert doc[b"doc_flags"] == ["deprecated"]
    assert doc[b"deprecated_since"] == b"6.2.0"
    assert doc[b"replaced_by"] == b"`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument"
    store = pairs(doc[b"arguments"][-1])
    assert store[b"name"] == b"store" and store[b"type"] == b"oneof"
    assert [pairs(a)[b"key_spec_index"] for a in store[b"arguments"]] == [1, 2]
    assert [pairs(a)[b"display_text"] for a in store[b"arguments"]] == [b"key", b"key"]
    dbg = pairs(conn.cmd("COMMAND", "DOCS", "debug")[1])
    assert dbg[b"doc_flags"] == ["syscmd"]
    # multiple_token: the token repeats with each value.
    kill = pairs(conn.cmd("COMMAND", "DOCS", "client|kill")[1])
    old = pairs(pairs(kill[b"arguments"][0])[b"arguments"][0])
    assert old[b"name"] == b"old-format" and old[b"display_text"] == b"ip:port"
    assert old[b"deprecated_since"] == b"2.8.12"


def test_docs_resp3_maps(conn3):
    m = conn3.cmd("COMMAND", "DOCS", "lmove", "nosuch", "config|get")
    assert isinstance(m, Map) and [k for k, _ in m] == [b"lmove", b"config|get"]
    lm = m.dict()[b"lmove"]
    assert isinstance(lm, Map)
    d = lm.dict()
    assert d[b"group"] == b"list" and d[b"since"] == b"6.2.0"
    args = d[b"arguments"]
    assert isinstance(args, list) and isinstance(args[0], Map)
    assert args[0].dict() == {b"name": b"source", b"type": b"key", b"display_text": b"source",
                              b"key_spec_index": 0}
    where = args[2].dict()
    assert where[b"type"] == b"oneof" and isinstance(where[b"arguments"][0], Map)
    cfg = m.dict()[b"config|get"].dict()
    parameter = cfg[b"arguments"][0].dict()
    assert parameter[b"flags"] == Set(["multiple"])
    # Subcommands nest under their container.
    obj = conn3.cmd("COMMAND", "DOCS", "object").dict()[b"object"].dict()
    assert obj[b"complexity"] == b"Depends on subcommand."
    assert sorted(obj[b"subcommands"].dict()) == [b"object|encoding", b"object|freq", b"object|help",
                                                  b"object|idletime", b"object|refcount"]


def walk_key_indexes(args, out):
    for a in args:
        d = pairs(a)
        if b"key_spec_index" in d:
            out.add(d[b"key_spec_index"])
        if b"arguments" in d:
            walk_key_indexes(d[b"arguments"], out)


def test_every_command_has_docs_matching_its_key_specs(conn):
    everything = conn.cmd("COMMAND")
    docs = pairs(conn.cmd("COMMAND", "DOCS"))
    assert len(docs) == len(everything)
    for e in everything:
        for cmd in [e] + list(e[9]):
            doc = conn.cmd("COMMAND", "DOCS", cmd[0])
            assert doc and doc[0] == cmd[0], cmd[0]
            d = pairs(doc[1])
            assert d[b"group"] and d[b"since"], cmd[0]
            used = set()
            walk_key_indexes(d.get(b"arguments", []), used)
            # Every key spec is some argument's, and no argument names a
            # spec the command lacks.
            assert used == set(range(len(cmd[8]))), cmd[0]


# Commands whose argument trees are the same in Redis 7.0 and 8.0 (7.2
# renamed compound argument names such as ZADD's score_member to data and
# added display_text, which 7.0 does not send). SET is not: 8.4 added its
# IF* conditions.
SAME_DOCS = ["get", "getex", "append", "lpush", "lpos", "lmove", "blmpop", "lmpop", "zunion",
             "zinterstore", "zpopmin", "sintercard", "srandmember", "expire", "scan", "copy", "object|freq",
             "memory|usage", "config|get", "geopos", "geohash", "pfcount", "hrandfield", "hincrbyfloat",
             "lcs", "info", "flushall", "auth", "select", "swapdb", "debug", "getset",
             "zrevrange", "substr", "rpoplpush", "brpoplpush"]


def strip_display(args):
    out = []
    for a in args:
        flat = []
        for k, v in zip(a[::2], a[1::2]):
            if k == b"display_text":
                continue
            flat += [k, strip_display(v) if k == b"arguments" else v]
        out.append(flat)
    return out


def test_docs_same_as_redis(conn, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref)
    have = set(conn.cmd("COMMAND", "LIST"))
    compared = 0
    for name in SAME_DOCS:
        if name.encode() not in have:
            continue
        mine = pairs(conn.cmd("COMMAND", "DOCS", name)[1])
        theirs = pairs(ref.cmd("COMMAND", "DOCS", name)[1])
        # Summaries are our own words; the rest is Redis's.
        assert [k for k in mine if k != b"summary"] == [k for k in theirs if k != b"summary"], name
        for k in (b"group", b"history", b"doc_flags", b"deprecated_since", b"replaced_by"):
            assert mine.get(k) == theirs.get(k), (name, k)
        assert strip_display(mine.get(b"arguments", [])) == theirs.get(b"arguments", []), name
        compared += 1
    assert compared >= 35
    ref.close()


def test_docs_wire_same_shape_as_redis_resp3(conn3, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref, resp3=True)
    mine = conn3.cmd("COMMAND", "DOCS", "zpopmin").dict()[b"zpopmin"].dict()
    theirs = ref.cmd("COMMAND", "DOCS", "zpopmin").dict()[b"zpopmin"].dict()
    assert type(mine[b"arguments"]) is type(theirs[b"arguments"])
    for a, b in zip(mine[b"arguments"], theirs[b"arguments"]):
        a = a.dict()
        assert a.pop(b"display_text") == a[b"name"]
        assert a == b.dict()
    ref.close()


def test_redis_cli_reads_docs(server):
    cli = shutil.which("redis-cli")
    if not cli or not server.proc:
        pytest.skip("redis-cli not installed")
    out = subprocess.run([cli, "-h", server.host, "-p", str(server.port), "--no-raw", "COMMAND", "DOCS", "get"],
                         capture_output=True, timeout=20)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert '"get"' in text and '"arguments"' in text and '"key_spec_index"' in text
    # The whole table through redis-cli's reply printer, then plain use.
    out = subprocess.run([cli, "-h", server.host, "-p", str(server.port), "--no-raw", "COMMAND", "DOCS"],
                         capture_output=True, timeout=20)
    assert out.returncode == 0 and b'"display_text"' in out.stdout, out.stderr
    out = subprocess.run([cli, "-h", server.host, "-p", str(server.port)], input=b"SET k v\nGET k\n",
                         capture_output=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [b"OK", b"v"]
