"""Keyspace notifications against Debian's redis-server 7.0: every write
command of HotKV's command table runs from a template on both servers with
notify-keyspace-events set, a PSUBSCRIBE '__key*__:*' listener on each, and
the ordered streams of (channel, message) must be the same.

The table must name every command COMMAND flags `write` (subcommands as
`container|sub`): a write command without a template fails the test, so
a new command cannot forget its events. Commands Redis 7.0 lacks (the 7.4
hash-field TTLs, the 8.x additions, vector sets, and the overwritten and
type_changed classes) carry hand-written expectations taken from Redis's
source and are checked on HotKV only.

Each template also runs inside MULTI/EXEC and inside EVAL, which must raise
the same events as the commands run alone. Blocking pops served by a later
push, lazy and active expiry and hash-field expiry have tests of their own.
"""
import time

import pytest

from conftest import real_redis
from resp import Error, RespConn, encode

SYNC = "notify-test-sync"
PATTERN = "__key*__:*"


class Listener:
    """A connection subscribed to every keyspace channel and to a sync
    channel; collect() returns the events published before a sync token
    that the writer publishes last (one publisher's messages arrive in
    order)."""

    def __init__(self, port, patterns=(PATTERN,)):
        self.c = RespConn("127.0.0.1", port)
        self.c.send(encode("PSUBSCRIBE", *patterns))
        for _ in patterns:
            assert self.c.read()[0] == b"psubscribe"
        self.c.send(encode("SUBSCRIBE", SYNC))
        assert self.c.read()[0] == b"subscribe"
        self.n = 0

    def next_message(self):
        m = self.c.read()
        if m[0] == b"pmessage":
            return m[2], m[3]
        assert m[0] == b"message", m
        return m[1], m[2]

    def collect(self, writer):
        self.n += 1
        token = str(self.n).encode()
        assert writer.cmd("PUBLISH", SYNC, token) >= 1
        out = []
        while True:
            ch, msg = self.next_message()
            if ch == SYNC.encode():
                if msg == token:
                    return out
                continue
            out.append((ch.decode(), msg.decode()))

    def wait_for(self, count, timeout=5.0):
        """The next `count` keyspace messages, arriving on their own
        (expiry); fails after `timeout` seconds."""
        out = []
        self.c.sock.settimeout(timeout)
        try:
            while len(out) < count:
                ch, msg = self.next_message()
                if ch != SYNC.encode():
                    out.append((ch.decode(), msg.decode()))
        finally:
            self.c.sock.settimeout(10.0)
        return out

    def close(self):
        self.c.close()


def expand(events, flags="KEA", db=0):
    """Hand-written events [(name, key)] as the channel messages Redis
    publishes for them: keyspace, then keyevent, each when enabled; new
    and keymiss only when their class is."""
    out = []
    for ev in events:
        name, key = ev[0], ev[1]
        d = ev[2] if len(ev) > 2 else db
        if name == "new" and "n" not in flags:
            continue
        if name == "keymiss" and "m" not in flags:
            continue
        if (name == "overwritten" and "o" not in flags) or (name == "type_changed" and "c" not in flags):
            continue
        if "K" in flags:
            out.append(("__keyspace@%d__:%s" % (d, key), name))
        if "E" in flags:
            out.append(("__keyevent@%d__:%s" % (d, name), key))
    return out


def C(covers, setup, run, expect=None, wrap=True):
    """A template: `covers` the command names it exercises, `setup` and
    `run` lists of commands; `expect` hand-written events for HotKV alone
    (the command is newer than Redis 7.0); `wrap` False: not inside
    MULTI/EXEC or EVAL."""
    if isinstance(covers, str):
        covers = [covers]
    return dict(covers=covers, setup=setup, run=run, expect=expect, wrap=wrap)


L3 = ["RPUSH", "l", "a", "b", "c"]
S3 = ["SADD", "s", "a", "b", "c"]
Z3 = ["ZADD", "z", "1", "a", "2", "b", "3", "c"]
H2 = ["HSET", "h", "f1", "1", "f2", "2"]
X3 = ["XADD", "x", "1-1", "f", "v"], ["XADD", "x", "2-1", "f", "v"], ["XADD", "x", "3-1", "f", "v"]
GEO = ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]

# The DUMP payload of the string "v" (RDB 10), for RESTORE.
DUMP_V = b"\x00\x01v\x0a\x00" + bytes.fromhex("9108ceb219388ace")

CASES = [
    # ---- strings ----
    C("set", [], [["SET", "k", "v"], ["SET", "k", "w", "EX", "100"], ["SET", "k", "x", "KEEPTTL"],
                  ["SET", "k", "y", "NX"], ["SET", "m", "y", "XX"], ["SET", "k", "z", "GET"],
                  ["SET", "k", "1", "PX", "100000", "GET"], ["SET", "n", "1", "NX", "GET"]]),
    C("restore", [["SET", "old", "x"], ["SET", "gone", "x"]],
      [["RESTORE", "a", "0", DUMP_V], ["RESTORE", "old", "0", DUMP_V, "REPLACE"], ["RESTORE", "t", "100000", DUMP_V],
       ["RESTORE", "b", "1", DUMP_V, "ABSTTL"], ["RESTORE", "gone", "1", DUMP_V, "ABSTTL", "REPLACE"]]),
    C("migrate", [], [["MIGRATE", "127.0.0.1", "1", "nokey", "0", "100"]]),
    C("setnx", [["SET", "k", "v"]], [["SETNX", "k", "w"], ["SETNX", "k2", "w"]]),
    C("setex", [], [["SETEX", "k", "100", "v"], ["SETEX", "k", "10", "w"]]),
    C("psetex", [], [["PSETEX", "k", "100000", "v"]]),
    C("getset", [["SET", "k", "v"]], [["GETSET", "k", "w"], ["GETSET", "new", "w"]]),
    C("getdel", [["SET", "k", "v"]], [["GETDEL", "k"], ["GETDEL", "k"]]),
    C("getex", [["SET", "k", "v"]], [["GETEX", "k"], ["GETEX", "k", "EX", "100"], ["GETEX", "k", "PERSIST"],
                                      ["GETEX", "k", "PERSIST"], ["GETEX", "k", "PXAT", "1"], ["GETEX", "nokey", "EX", "5"]]),
    C("mset", [["SET", "b", "1"]], [["MSET", "a", "1", "b", "2", "a", "3"]]),
    C("msetnx", [["SET", "b", "1"]], [["MSETNX", "a", "1", "c", "2"], ["MSETNX", "d", "1", "b", "2"]]),
    C("append", [], [["APPEND", "k", "ab"], ["APPEND", "k", "cd"]]),
    C(["incr", "decr", "incrby", "decrby"], [],
      [["INCR", "k"], ["DECR", "k"], ["INCRBY", "k", "5"], ["DECRBY", "k2", "3"]]),
    C("incrbyfloat", [], [["INCRBYFLOAT", "k", "1.5"], ["INCRBYFLOAT", "k", "2"]]),
    C("setrange", [["SET", "k", "hello"]],
      [["SETRANGE", "k", "1", "EE"], ["SETRANGE", "k2", "2", "x"], ["SETRANGE", "k3", "0", ""], ["SETRANGE", "k", "0", ""]]),
    C("setbit", [], [["SETBIT", "k", "7", "1"], ["SETBIT", "k", "7", "1"], ["SETBIT", "k", "100", "0"]]),
    C("bitop", [["SET", "a", "ab"], ["SET", "b", "cd"], ["SET", "d", "x"]],
      [["BITOP", "AND", "d", "a", "b"], ["BITOP", "OR", "e", "a", "nosuch"], ["BITOP", "XOR", "d", "n1", "n2"]]),
    C("bitfield", [], [["BITFIELD", "k", "SET", "u8", "0", "255", "GET", "u8", "0"],
                       ["BITFIELD", "k", "INCRBY", "u8", "0", "1"], ["BITFIELD", "k2", "GET", "u8", "0"],
                       ["BITFIELD", "k3", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5"]]),
    # ---- keys ----
    C(["del", "unlink"], [["SET", "a", "1"], ["SET", "b", "1"], L3],
      [["DEL", "a", "nosuch", "l"], ["UNLINK", "b", "nosuch"]]),
    C("rename", [["SET", "a", "1"], ["SET", "b", "2"], ["SET", "c", "3"]],
      [["RENAME", "a", "b"], ["RENAME", "c", "fresh"], ["RENAME", "b", "b"]]),
    C("renamenx", [["SET", "a", "1"], ["SET", "b", "2"]], [["RENAMENX", "a", "b"], ["RENAMENX", "a", "c"]]),
    C("copy", [["SET", "a", "1"], ["SET", "b", "2"], H2],
      [["COPY", "a", "b"], ["COPY", "a", "b", "REPLACE"], ["COPY", "h", "h2"], ["COPY", "a", "a", "DB", "2"],
       ["COPY", "nosuch", "z"]]),
    C("move", [["SET", "a", "1"], ["SET", "b", "1"], ["SELECT", "1"], ["SET", "b", "x"], ["SELECT", "0"]],
      [["MOVE", "a", "1"], ["MOVE", "b", "1"], ["MOVE", "nosuch", "1"]]),
    C("swapdb", [["SET", "a", "1"]], [["SWAPDB", "0", "1"], ["SWAPDB", "0", "1"]]),
    C(["flushall", "flushdb"], [["SET", "a", "1"]], [["FLUSHDB"], ["SET", "b", "1"], ["FLUSHALL"]]),
    C(["expire", "pexpire", "expireat", "pexpireat"], [["SET", "a", "1"], ["SET", "b", "1"], ["SET", "c", "1"]],
      [["EXPIRE", "a", "100"], ["PEXPIRE", "a", "100000", "XX"], ["EXPIRE", "a", "10", "NX"],
       ["EXPIREAT", "b", "99999999999"], ["PEXPIREAT", "b", "99999999999000", "GT"], ["EXPIRE", "nosuch", "10"],
       ["PEXPIREAT", "c", "1"], ["EXPIRE", "a", "-5"]]),
    C("persist", [["SET", "a", "1", "EX", "100"], ["SET", "b", "1"]], [["PERSIST", "a"], ["PERSIST", "a"], ["PERSIST", "b"]]),
    # ---- lists ----
    C(["lpush", "rpush"], [], [["LPUSH", "l", "a", "b"], ["RPUSH", "l", "c"], ["RPUSH", "l2", "x"]]),
    C(["lpushx", "rpushx"], [L3], [["LPUSHX", "l", "z"], ["RPUSHX", "l", "y"], ["LPUSHX", "n", "z"], ["RPUSHX", "n", "y"]]),
    C(["lpop", "rpop"], [L3], [["LPOP", "l"], ["RPOP", "l", "1"], ["LPOP", "l", "5"], ["LPOP", "l"], ["RPOP", "nosuch"]]),
    C("lset", [L3], [["LSET", "l", "1", "X"]]),
    C("linsert", [L3], [["LINSERT", "l", "BEFORE", "b", "x"], ["LINSERT", "l", "AFTER", "nope", "y"]]),
    C("lrem", [L3 + ["a", "a"]], [["LREM", "l", "0", "a"], ["LREM", "l", "0", "zz"], ["LREM", "l", "0", "b"],
                                  ["LREM", "l", "0", "c"]]),
    C("ltrim", [L3], [["LTRIM", "l", "0", "1"], ["LTRIM", "l", "0", "-1"], ["LTRIM", "l", "5", "10"], ["LTRIM", "n", "0", "1"]]),
    C(["rpoplpush", "lmove"], [L3, ["RPUSH", "one", "x"]],
      [["RPOPLPUSH", "l", "d"], ["LMOVE", "l", "d", "LEFT", "RIGHT"], ["LMOVE", "one", "one", "LEFT", "LEFT"],
       ["LMOVE", "one", "d", "RIGHT", "LEFT"], ["RPOPLPUSH", "nosuch", "d"], ["LMOVE", "l", "l", "LEFT", "RIGHT"]]),
    C("lmpop", [L3], [["LMPOP", "2", "nosuch", "l", "LEFT", "COUNT", "2"], ["LMPOP", "1", "l", "RIGHT", "COUNT", "5"]]),
    C(["blpop", "brpop"], [L3, ["RPUSH", "m", "q"]], [["BLPOP", "nosuch", "l", "0"], ["BRPOP", "l", "0"], ["BLPOP", "m", "0"]]),
    C(["brpoplpush", "blmove"], [L3],
      [["BRPOPLPUSH", "l", "d", "0"], ["BLMOVE", "l", "d", "LEFT", "LEFT", "0"], ["BLMOVE", "l", "l", "LEFT", "LEFT", "0"]]),
    C("blmpop", [L3], [["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "3"]]),
    C("sort", [["RPUSH", "l", "3", "1", "2"], ["SET", "d", "x"]],
      [["SORT", "l", "STORE", "d"], ["SORT", "nosuch", "STORE", "d"], ["SORT", "l", "STORE", "e"], ["SORT", "l"]]),
    # ---- sets ----
    C("sadd", [], [["SADD", "s", "a", "b"], ["SADD", "s", "a"], ["SADD", "s", "c"]]),
    C("srem", [S3], [["SREM", "s", "a", "zz"], ["SREM", "s", "zz"], ["SREM", "s", "b", "c"]]),
    C("spop", [S3, ["SADD", "t", "1"]], [["SPOP", "s", "1"], ["SPOP", "s", "0"], ["SPOP", "s", "5"], ["SPOP", "t"],
                                         ["SPOP", "nosuch"]]),
    C("smove", [S3, ["SADD", "d", "z"], ["SADD", "one", "q"]],
      [["SMOVE", "s", "d", "a"], ["SMOVE", "s", "d", "zz"], ["SMOVE", "one", "d", "q"], ["SMOVE", "s", "s", "b"]]),
    C(["sinterstore", "sunionstore", "sdiffstore"], [S3, ["SADD", "t", "b", "z"], ["SET", "str", "x"]],
      [["SINTERSTORE", "d", "s", "t"], ["SUNIONSTORE", "d", "s", "t"], ["SDIFFSTORE", "e", "s", "t"],
       ["SINTERSTORE", "d", "s", "nosuch"], ["SDIFFSTORE", "str", "nosuch"], ["SUNIONSTORE", "f", "nosuch"]]),
    # ---- sorted sets ----
    C("zadd", [], [["ZADD", "z", "1", "a", "2", "b"], ["ZADD", "z", "1", "a"], ["ZADD", "z", "XX", "5", "c"],
                   ["ZADD", "z", "INCR", "3", "a"], ["ZADD", "z", "NX", "INCR", "3", "a"]]),
    C("zincrby", [], [["ZINCRBY", "z", "2", "a"], ["ZINCRBY", "z", "2", "a"]]),
    C("zrem", [Z3], [["ZREM", "z", "a", "zz"], ["ZREM", "z", "zz"], ["ZREM", "z", "b", "c"]]),
    C(["zremrangebyrank", "zremrangebyscore", "zremrangebylex"],
      [Z3, ["ZADD", "w", "0", "a", "0", "b", "0", "c"]],
      [["ZREMRANGEBYRANK", "z", "0", "0"], ["ZREMRANGEBYSCORE", "z", "10", "20"], ["ZREMRANGEBYSCORE", "z", "-inf", "+inf"],
       ["ZREMRANGEBYLEX", "w", "[a", "[b"], ["ZREMRANGEBYLEX", "w", "-", "+"], ["ZREMRANGEBYRANK", "n", "0", "1"]]),
    C(["zpopmin", "zpopmax"], [Z3], [["ZPOPMIN", "z"], ["ZPOPMAX", "z", "5"], ["ZPOPMIN", "z"]]),
    C(["zunionstore", "zinterstore", "zdiffstore", "zrangestore"], [Z3, ["ZADD", "y", "5", "b", "6", "q"]],
      [["ZUNIONSTORE", "d", "2", "z", "y"], ["ZINTERSTORE", "d", "2", "z", "y", "WEIGHTS", "1", "2"],
       ["ZDIFFSTORE", "e", "2", "z", "y"], ["ZINTERSTORE", "d", "2", "z", "nosuch"], ["ZRANGESTORE", "f", "z", "0", "1"],
       ["ZRANGESTORE", "f", "z", "5", "10"], ["ZDIFFSTORE", "g", "1", "nosuch"]]),
    C("zmpop", [Z3], [["ZMPOP", "2", "nosuch", "z", "MIN", "COUNT", "2"], ["ZMPOP", "1", "z", "MAX", "COUNT", "9"]]),
    C(["bzpopmin", "bzpopmax"], [Z3, ["ZADD", "one", "1", "x"]],
      [["BZPOPMIN", "nosuch", "z", "0"], ["BZPOPMAX", "z", "0"], ["BZPOPMAX", "one", "0"]]),
    C("bzmpop", [Z3], [["BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"]]),
    # ---- geo ----
    C("geoadd", [], [GEO, ["GEOADD", "g", "XX", "13.361389", "38.115556", "Palermo"], ["GEOADD", "g", "NX", "1", "1", "Palermo"]]),
    C(["georadius", "georadiusbymember", "geosearchstore"], [GEO, ["SET", "e", "x"]],
      [["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d"],
       ["GEORADIUSBYMEMBER", "g", "Palermo", "500", "km", "STOREDIST", "e"],
       ["GEOSEARCHSTORE", "f", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "300", "km"],
       ["GEOSEARCHSTORE", "f", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
       ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d"]]),
    # ---- hashes ----
    C(["hset", "hmset"], [], [["HSET", "h", "a", "1", "b", "2"], ["HSET", "h", "a", "1"], ["HMSET", "h", "c", "3"]]),
    C("hsetnx", [H2], [["HSETNX", "h", "f1", "x"], ["HSETNX", "h", "f3", "x"], ["HSETNX", "n", "f", "x"]]),
    C("hdel", [H2], [["HDEL", "h", "f1", "zz"], ["HDEL", "h", "zz"], ["HDEL", "h", "f2"], ["HDEL", "h", "f2"]]),
    C(["hincrby", "hincrbyfloat"], [H2], [["HINCRBY", "h", "f1", "5"], ["HINCRBYFLOAT", "h", "f3", "1.5"],
                                          ["HINCRBY", "n", "f", "1"]]),
    # ---- hyperloglog ----
    C("pfadd", [], [["PFADD", "p", "a", "b"], ["PFADD", "p", "a"], ["PFADD", "q"], ["PFADD", "q"]]),
    C("pfmerge", [["PFADD", "p", "a"], ["PFADD", "q", "b"]], [["PFMERGE", "d", "p", "q"], ["PFMERGE", "d", "p"],
                                                              ["PFMERGE", "e"]]),
    # ---- streams ----
    C("xadd", [], [X3[0], ["XADD", "x", "MAXLEN", "1", "4-1", "f", "v"], ["XADD", "n", "NOMKSTREAM", "*", "f", "v"],
                   ["XADD", "x", "MINID", "10", "5-1", "f", "v"]]),
    C("xdel", list(X3), [["XDEL", "x", "1-1", "9-9"], ["XDEL", "x", "9-9"], ["XDEL", "x", "2-1", "3-1"]]),
    C("xtrim", list(X3), [["XTRIM", "x", "MAXLEN", "2"], ["XTRIM", "x", "MAXLEN", "5"], ["XTRIM", "x", "MINID", "9"]]),
    C("xsetid", list(X3), [["XSETID", "x", "10-1"]]),
    C(["xgroup|create", "xgroup|createconsumer", "xgroup|delconsumer", "xgroup|setid", "xgroup|destroy"], list(X3),
      [["XGROUP", "CREATE", "x", "g", "0"], ["XGROUP", "CREATE", "y", "g", "$", "MKSTREAM"],
       ["XGROUP", "CREATECONSUMER", "x", "g", "c1"], ["XGROUP", "CREATECONSUMER", "x", "g", "c1"],
       ["XGROUP", "SETID", "x", "g", "1-1"], ["XGROUP", "DELCONSUMER", "x", "g", "c1"],
       ["XGROUP", "DESTROY", "x", "g"], ["XGROUP", "DESTROY", "x", "g"]]),
    C(["xreadgroup", "xack", "xclaim", "xautoclaim"], list(X3) + [["XGROUP", "CREATE", "x", "g", "0"]],
      [["XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "x", ">"],
       ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "x", "0"],
       ["XACK", "x", "g", "1-1"], ["XCLAIM", "x", "g", "c2", "0", "2-1"],
       ["XAUTOCLAIM", "x", "g", "c3", "0", "0-0"], ["XCLAIM", "x", "g", "c2", "0", "2-1", "JUSTID"]]),
]

# Newer than Redis 7.0: events from Redis 8.4's source, checked on HotKV.
NEW_CASES = [
    # A SET whose deadline has passed stores nothing and deletes the old key
    # (as Redis does since its PR 14784; 7.0 through 8.4 store the key and
    # report set and expire, leaving it to expire lazily).
    C("set", [["SET", "k", "v"]], [["SET", "k", "v", "PXAT", "1"], ["SET", "k2", "v", "EXAT", "1"]],
      expect=[("del", "k")]),
    C("hexpire", [H2], [["HEXPIRE", "h", "100", "FIELDS", "2", "f1", "zz"], ["HEXPIRE", "h", "100", "NX", "FIELDS", "1", "f1"]],
      expect=[("hexpire", "h")]),
    C(["hpexpire", "hexpireat", "hpexpireat"], [H2],
      [["HPEXPIRE", "h", "100000", "FIELDS", "1", "f1"], ["HEXPIREAT", "h", "9999999999", "FIELDS", "1", "f2"],
       ["HPEXPIREAT", "h", "1", "FIELDS", "1", "f1"], ["HPEXPIREAT", "h", "1", "FIELDS", "1", "f2"]],
      expect=[("hexpire", "h"), ("hexpire", "h"), ("hdel", "h"), ("hdel", "h"), ("del", "h")]),
    C("hpersist", [H2, ["HEXPIRE", "h", "100", "FIELDS", "1", "f1"]],
      [["HPERSIST", "h", "FIELDS", "1", "f1"], ["HPERSIST", "h", "FIELDS", "1", "f1"]],
      expect=[("hpersist", "h")]),
    C("hgetdel", [H2], [["HGETDEL", "h", "FIELDS", "1", "f1"], ["HGETDEL", "h", "FIELDS", "1", "zz"],
                        ["HGETDEL", "h", "FIELDS", "2", "f2", "f1"], ["HGETDEL", "h", "FIELDS", "1", "f2"]],
      expect=[("hdel", "h"), ("hdel", "h"), ("del", "h")]),
    C("hgetex", [H2], [["HGETEX", "h", "EX", "100", "FIELDS", "1", "f1"], ["HGETEX", "h", "PERSIST", "FIELDS", "1", "f1"],
                       ["HGETEX", "h", "FIELDS", "1", "f1"], ["HGETEX", "h", "PXAT", "1", "FIELDS", "2", "f1", "f2"]],
      expect=[("hexpire", "h"), ("hpersist", "h"), ("hdel", "h"), ("del", "h")]),
    C("hsetex", [], [["HSETEX", "h", "FIELDS", "1", "a", "1"], ["HSETEX", "h", "EX", "100", "FIELDS", "1", "b", "2"],
                     ["HSETEX", "h", "FNX", "FIELDS", "1", "a", "9"], ["HSETEX", "h", "KEEPTTL", "FIELDS", "1", "b", "3"],
                     ["HSETEX", "h", "PXAT", "1", "FIELDS", "1", "c", "1"]],
      expect=[("new", "h"), ("hset", "h"), ("hset", "h"), ("hexpire", "h"), ("hset", "h"), ("hset", "h"),
              ("hdel", "h")]),
    C("delex", [["SET", "a", "v"], ["SET", "b", "v"]],
      [["DELEX", "a"], ["DELEX", "b", "IFEQ", "w"], ["DELEX", "b", "IFEQ", "v"], ["DELEX", "nosuch"]],
      expect=[("del", "a"), ("del", "b")]),
    C("set", [["SET", "a", "v"]], [["SET", "a", "w", "IFEQ", "v"], ["SET", "a", "x", "IFEQ", "v"], ["SET", "a", "y", "IFNE", "q"]],
      expect=[("overwritten", "a"), ("set", "a"), ("overwritten", "a"), ("set", "a")]),
    C("msetex", [["SET", "b", "1"]], [["MSETEX", "2", "a", "1", "b", "2", "EX", "100"], ["MSETEX", "1", "c", "1", "NX"],
                                      ["MSETEX", "1", "c", "1", "NX"]],
      expect=[("new", "a"), ("set", "a"), ("expire", "a"), ("overwritten", "b"), ("set", "b"), ("expire", "b"),
              ("new", "c"), ("set", "c")]),
    C("xdelex", list(X3), [["XDELEX", "x", "IDS", "2", "1-1", "9-9"], ["XDELEX", "x", "IDS", "1", "9-9"]],
      expect=[("xdel", "x")]),
    C("xackdel", list(X3) + [["XGROUP", "CREATE", "x", "g", "0"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"]],
      [["XACKDEL", "x", "g", "IDS", "2", "1-1", "9-9"], ["XACKDEL", "x", "g", "IDS", "1", "9-9"]],
      expect=[("xdel", "x")]),
    # Redis 8.2's overwritten and type_changed (classes o and c, not in A):
    # raised where Redis's setKey replaces a value (before the command's
    # event), and after rename_to / copy_to for a replaced destination.
    C("set", [["SET", "a", "1"], ["HSET", "h", "f", "v"], ["SET", "i", "1"]],
      [["SET", "a", "2"], ["SET", "h", "x"], ["INCR", "i"], ["MSET", "a", "3", "m", "1"], ["GETSET", "a", "4"],
       ["SETEX", "a", "100", "5"]],
      expect=[("overwritten", "a"), ("set", "a"), ("overwritten", "h"), ("type_changed", "h"), ("set", "h"),
              ("incrby", "i"), ("overwritten", "a"), ("set", "a"), ("new", "m"), ("set", "m"),
              ("overwritten", "a"), ("set", "a"), ("overwritten", "a"), ("set", "a"), ("expire", "a")]),
    C(["sort", "sunionstore", "zunionstore", "bitop"], [["RPUSH", "l", "2", "1"], ["SET", "d", "x"], ["SADD", "s", "a"],
                                                       ["ZADD", "z", "1", "a"], ["SET", "b", "ab"]],
      [["SORT", "l", "STORE", "d"], ["SORT", "l", "STORE", "d"], ["SUNIONSTORE", "d", "s"], ["ZUNIONSTORE", "d", "1", "z"],
       ["BITOP", "NOT", "d", "b"]],
      expect=[("overwritten", "d"), ("type_changed", "d"), ("sortstore", "d"), ("overwritten", "d"), ("sortstore", "d"),
              ("overwritten", "d"), ("type_changed", "d"), ("sunionstore", "d"),
              ("overwritten", "d"), ("type_changed", "d"), ("zunionstore", "d"),
              ("overwritten", "d"), ("type_changed", "d"), ("set", "d")]),
    C(["rename", "copy"], [["SET", "a", "1"], ["HSET", "h", "f", "v"], ["SET", "s", "x"]],
      [["RENAME", "a", "h"], ["COPY", "h", "s", "REPLACE"], ["COPY", "h", "t"], ["RENAME", "t", "u"]],
      expect=[("new", "h"), ("rename_from", "a"), ("rename_to", "h"), ("overwritten", "h"), ("type_changed", "h"),
              ("new", "s"), ("copy_to", "s"), ("overwritten", "s"),
              ("new", "t"), ("copy_to", "t"), ("new", "u"), ("rename_from", "t"), ("rename_to", "u")]),
    C(["VADD", "VREM", "VSETATTR"], [],
      [["VADD", "v", "VALUES", "2", "1", "2", "a"], ["VSETATTR", "v", "a", '{"x":1}'], ["VREM", "v", "a"]],
      expect=[("new", "v")]),
]


def covered():
    out = set()
    for case in CASES + NEW_CASES:
        out.update(case["covers"])
    return out


def write_commands(port):
    c = RespConn("127.0.0.1", port)
    try:
        names = set()
        for row in c.cmd("COMMAND"):
            if "write" in row[2]:
                names.add(row[0].decode())
            for sub in (row[9] if len(row) > 9 else None) or []:
                if "write" in sub[2]:
                    names.add(sub[0].decode())
        return names
    finally:
        c.close()


# Write commands whose only effects are outside the keyspace.
NO_KEYS = {"function|delete", "function|flush", "function|load", "function|restore"}


def test_every_write_command_has_a_template(server):
    missing = sorted(write_commands(server.port) - covered() - NO_KEYS)
    assert not missing, "write commands without a notification template: %s" % missing


SCRIPT = "return redis.call(unpack(ARGV))"
# Not allowed in scripts (Redis flags them noscript).
BLOCKING = {"blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"}


def run_cmds(w, cmds, mode):
    """Run cmds on w alone, in one MULTI/EXEC or each through EVAL; returns
    the replies."""
    if mode == "plain":
        return [w.cmd(*c) for c in cmds]
    if mode == "multi":
        assert w.cmd("MULTI") == "OK"
        for c in cmds:
            assert w.cmd(*c) == "QUEUED", c
        return w.cmd("EXEC")
    return [w.cmd("EVAL", SCRIPT, "0", *c) for c in cmds]


def run_case(port, listener, case, mode="plain"):
    w = RespConn("127.0.0.1", port)
    try:
        assert w.cmd("FLUSHALL") == "OK"
        for c in case["setup"]:
            r = w.cmd(*c)
            assert not isinstance(r, Error), (c, r)
        listener.collect(w)
        replies = run_cmds(w, case["run"], mode)
        assert not any(isinstance(r, Error) for r in replies), list(zip(case["run"], replies))
        return listener.collect(w)
    finally:
        w.close()


def case_id(case):
    return "+".join(case["covers"]) + ":" + " ".join(case["run"][0][:2])


@pytest.fixture(scope="module")
def pair(request):
    """HotKV (own server, 2 threads) and a stock Redis, both with listeners."""
    from conftest import start_server
    srv = start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes", threads=2)
    with real_redis("--enable-debug-command", "yes") as ref:
        if ref is None:
            srv.stop()
            pytest.skip("redis-server not installed")
        yield srv.port, ref
    srv.stop()


def set_flags(port, flags):
    c = RespConn("127.0.0.1", port)
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", flags) == "OK"
    c.close()


@pytest.mark.parametrize("flags", ["KEA", "KEAnm"])
def test_events_match_redis(pair, flags):
    hk, ref = pair
    set_flags(hk, flags)
    set_flags(ref, flags)
    lh, lr = Listener(hk), Listener(ref)
    failures = []
    try:
        for case in CASES:
            want = run_case(ref, lr, case)
            got = run_case(hk, lh, case)
            if got != want:
                failures.append((case_id(case), want, got))
    finally:
        lh.close()
        lr.close()
    assert not failures, "\n".join("%s\n  redis: %s\n  hotkv: %s" % f for f in failures)


@pytest.mark.parametrize("flags", ["KEA", "KEAnm", "Kh", "Eg", "KEAnmoc", "Ko", "Ec"])
def test_new_commands_events(pair, flags):
    hk, _ = pair
    set_flags(hk, flags)
    lh = Listener(hk)
    failures = []
    try:
        for case in NEW_CASES:
            want = expand([e for e in case["expect"] if flags_has(flags, e[0])], flags)
            got = run_case(hk, lh, case)
            if got != want:
                failures.append((case_id(case), want, got))
    finally:
        lh.close()
    assert not failures, "\n".join("%s\n  want: %s\n  got:  %s" % f for f in failures)


CLASS_OF = {"hexpire": "h", "hpersist": "h", "hdel": "h", "hset": "h", "hexpired": "h", "del": "g", "set": "$",
            "expire": "g", "xdel": "t", "new": "n", "keymiss": "m", "expired": "x", "overwritten": "o",
            "type_changed": "c", "incrby": "$", "sortstore": "l", "sunionstore": "s", "zunionstore": "z",
            "rename_from": "g", "rename_to": "g", "copy_to": "g"}


def flags_has(flags, name):
    cls = CLASS_OF[name]
    if cls in flags:
        return True
    return "A" in flags and cls not in "nmoc"


@pytest.mark.parametrize("mode", ["multi", "eval"])
def test_wrapped_events_match_plain(pair, mode):
    """Inside MULTI/EXEC and EVAL a command raises the same events as run
    alone (and Redis agrees for the commands it has)."""
    hk, ref = pair
    set_flags(hk, "KEAnm")
    set_flags(ref, "KEAnm")
    lh, lr = Listener(hk), Listener(ref)
    failures = []
    try:
        for case in CASES + NEW_CASES:
            if not case["wrap"] or (mode == "eval" and BLOCKING & set(case["covers"])):
                continue
            plain = run_case(hk, lh, case)
            got = run_case(hk, lh, case, mode)
            if got != plain:
                failures.append((case_id(case), plain, got))
            if case["expect"] is None:
                want = run_case(ref, lr, case, mode)
                if got != want:
                    failures.append((case_id(case) + " (redis)", want, got))
    finally:
        lh.close()
        lr.close()
    assert not failures, "\n".join("%s\n  want: %s\n  got:  %s" % f for f in failures)


def both(pair, flags="KEA"):
    hk, ref = pair
    set_flags(hk, flags)
    set_flags(ref, flags)
    return (hk, ref)


# Read commands on a missing key (and one present of each type): keymiss
# where Redis counts a keyspace miss. Left out: XREAD, whose keys Redis
# looks up twice (two keymiss events for a missing one; HotKV raises one).
READS = [
    ["GET", "q"], ["MGET", "q", "s", "r"], ["EXISTS", "q", "s"], ["TYPE", "q"], ["TTL", "q"], ["PTTL", "q"],
    ["EXPIRETIME", "q"], ["STRLEN", "q"], ["GETRANGE", "q", "0", "1"], ["SUBSTR", "q", "0", "1"], ["GETBIT", "q", "1"],
    ["BITCOUNT", "q"], ["BITPOS", "q", "1"], ["BITFIELD_RO", "q", "GET", "u8", "0"], ["LCS", "q", "s"],
    ["OBJECT", "ENCODING", "q"], ["TOUCH", "q", "s"], ["RANDOMKEY"], ["DBSIZE"],
    ["LLEN", "q"], ["LRANGE", "q", "0", "1"], ["LINDEX", "q", "0"], ["LPOS", "q", "a"],
    ["SCARD", "q"], ["SMEMBERS", "q"], ["SISMEMBER", "q", "a"], ["SMISMEMBER", "q", "a"], ["SRANDMEMBER", "q"],
    ["SINTER", "q", "l"], ["SINTERCARD", "2", "q", "l"], ["SUNION", "q", "r"], ["SDIFF", "q", "r"],
    ["ZCARD", "q"], ["ZSCORE", "q", "a"], ["ZMSCORE", "q", "a"], ["ZRANK", "q", "a"], ["ZRANGE", "q", "0", "1"],
    ["ZRANGEBYSCORE", "q", "0", "1"], ["ZCOUNT", "q", "0", "1"], ["ZLEXCOUNT", "q", "-", "+"], ["ZRANDMEMBER", "q"],
    ["ZUNION", "2", "q", "r"], ["ZINTER", "2", "q", "z"], ["ZDIFF", "2", "q", "r"], ["ZINTERCARD", "2", "q", "z"],
    ["HGET", "q", "f"], ["HMGET", "q", "f", "g"], ["HGETALL", "q"], ["HKEYS", "q"], ["HLEN", "q"], ["HEXISTS", "q", "f"],
    ["HSTRLEN", "q", "f"], ["HRANDFIELD", "q"], ["HSCAN", "q", "0"], ["SSCAN", "q", "0"], ["ZSCAN", "q", "0"],
    ["XLEN", "q"], ["XRANGE", "q", "-", "+"], ["XREVRANGE", "q", "+", "-"],
    ["XINFO", "STREAM", "q"], ["XPENDING", "q", "g"], ["PFCOUNT", "q"], ["PFCOUNT", "q", "p"],
    ["GEOPOS", "q", "a"], ["GEODIST", "q", "a", "b"], ["GEOHASH", "q", "a"], ["GEOSEARCH", "q", "FROMLONLAT", "0", "0",
                                                                            "BYRADIUS", "1", "km"],
    ["SORT", "q"], ["SORT_RO", "q"], ["GET", "s"], ["LRANGE", "l", "0", "-1"], ["SMEMBERS", "st"], ["HGET", "h", "zz"],
    ["ZSCORE", "z", "zz"], ["XRANGE", "x", "-", "+"], ["PFCOUNT", "p"], ["SORT", "l", "BY", "w_*", "GET", "o_*"],
]


def test_read_keymiss_matches_redis(pair):
    results = []
    for port in both(pair, "KEnm"):
        lst = Listener(port)
        w = RespConn("127.0.0.1", port)
        w.cmd("FLUSHALL")
        for c in (["SET", "s", "v"], ["RPUSH", "l", "1", "2"], ["SADD", "st", "a"], ["HSET", "h", "f", "v"],
                  ["ZADD", "z", "1", "a"], ["XADD", "x", "1-1", "f", "v"], ["PFADD", "p", "a"]):
            w.cmd(*c)
        lst.collect(w)
        got = []
        for c in READS:
            w.cmd(*c)
            got.append((c, lst.collect(w)))
        results.append(got)
        lst.close()
        w.close()
    bad = [(c, a, b) for (c, a), (_, b) in zip(results[0], results[1]) if a != b]
    assert not bad, "\n".join("%s\n  redis: %s\n  hotkv: %s" % (c, b, a) for c, a, b in bad)


@pytest.fixture(scope="module")
def hk_one_worker(request):
    from conftest import start_server
    srv = start_server(request.config.getoption("--server-bin"), threads=1)
    yield srv.port
    srv.stop()


BLOCKED = [
    (["BLPOP", "l", "0"], ["RPUSH", "l", "a", "b"]),
    (["BRPOPLPUSH", "l2", "d", "0"], ["LPUSH", "l2", "x"]),
    (["BLMOVE", "l3", "d", "LEFT", "RIGHT", "0"], ["RPUSH", "l3", "x"]),
    (["BLMPOP", "0", "1", "l4", "LEFT", "COUNT", "5"], ["RPUSH", "l4", "x", "y"]),
    (["BZPOPMIN", "z", "0"], ["ZADD", "z", "1", "a"]),
    (["BZMPOP", "0", "1", "z2", "MAX", "COUNT", "1"], ["ZADD", "z2", "1", "a", "2", "b"]),
]


def served_events(port):
    """Per case: the events of a push that serves a pop blocked on its key."""
    lst = Listener(port)
    w = RespConn("127.0.0.1", port)
    w.cmd("FLUSHALL")
    lst.collect(w)
    streams = []
    for block, push in BLOCKED:
        b = RespConn("127.0.0.1", port)
        b.send(encode(*block))
        deadline = time.time() + 5
        while time.time() < deadline:
            if "blocked_clients:1" in w.cmd("INFO", "clients").decode():
                break
            time.sleep(0.01)
        w.cmd(*push)
        assert not isinstance(b.read(), Error)
        b.close()
        streams.append(lst.collect(w))
    lst.close()
    w.close()
    return streams


def test_served_blocking_pops_match_redis(pair, hk_one_worker):
    """A pop that blocked and is served by a later push: the push's event,
    then the pop's (and del when the key empties), as Redis. One worker:
    the pusher, the served client and the listener share it."""
    _, ref = both(pair, "KEAn")
    set_flags(hk_one_worker, "KEAn")
    assert served_events(hk_one_worker) == served_events(ref)


def test_served_blocking_pops_across_workers(pair):
    hk, ref = both(pair, "KEAn")
    want = served_events(ref)
    for _ in range(5):
        assert served_events(hk) == want


def test_lazy_expiry_matches_redis(pair):
    results = []
    for port in both(pair, "KEAnm"):
        lst = Listener(port)
        w = RespConn("127.0.0.1", port)
        assert w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
        w.cmd("FLUSHALL")
        w.cmd("SET", "k", "v", "PX", "20")
        w.cmd("RPUSH", "l", "a")
        w.cmd("PEXPIRE", "l", "20")
        # Writes that replace a value over keys past their deadline.
        for key in ("s1", "s2", "s3", "d1", "d2", "d3"):
            w.cmd("SET", key, "12345", "PX", "20")
        w.cmd("RPUSH", "src", "1")
        w.cmd("SADD", "ss", "a")
        lst.collect(w)
        time.sleep(0.1)
        w.cmd("GET", "k")
        w.cmd("LPUSH", "l", "b")
        w.cmd("GET", "k")
        w.cmd("SET", "s1", "12345")
        w.cmd("SET", "s2", "x" * 40)
        w.cmd("MSET", "s3", "1")
        w.cmd("SORT", "src", "STORE", "d1")
        w.cmd("BITOP", "NOT", "d2", "s1")
        w.cmd("SUNIONSTORE", "d3", "ss")
        results.append(lst.collect(w))
        w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        lst.close()
        w.close()
    assert results[0] == results[1]
    assert ("__keyevent@0__:expired", "k") in results[0]


def test_expiry_met_by_scans_matches_redis(pair):
    """Keys past their deadline met by SCAN, RANDOMKEY, EXISTS, TYPE (deleted:
    expired) and by KEYS or DBSIZE (left alone)."""
    results = []
    for port in both(pair, "KEA"):
        lst = Listener(port)
        w = RespConn("127.0.0.1", port)
        assert w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
        out = []
        for probe in (["SCAN", "0"], ["KEYS", "*"], ["RANDOMKEY"], ["EXISTS", "k"], ["TYPE", "k"], ["DBSIZE"],
                      ["SCAN", "0", "TYPE", "string"]):
            w.cmd("FLUSHALL")
            w.cmd("SET", "k", "v", "PX", "1")
            lst.collect(w)
            time.sleep(0.01)
            w.cmd(*probe)
            out.append((probe, lst.collect(w)))
        w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        results.append(out)
        lst.close()
        w.close()
    assert results[0] == results[1]


def test_active_expiry_matches_redis(pair):
    results = []
    for port in both(pair, "KEA"):
        lst = Listener(port)
        w = RespConn("127.0.0.1", port)
        w.cmd("FLUSHALL")
        w.cmd("SET", "k", "v", "PX", "30")
        lst.collect(w)
        results.append(lst.wait_for(2))
        lst.close()
        w.close()
    assert results[0] == results[1] == [("__keyspace@0__:k", "expired"), ("__keyevent@0__:expired", "k")]


def test_hash_field_expiry(pair):
    """Redis 7.4+: a field past its deadline raises hexpired; a hash that
    loses its last field that way raises del after it (active and lazy)."""
    hk, _ = pair
    set_flags(hk, "KEA")
    lst = Listener(hk)
    w = RespConn("127.0.0.1", hk)
    try:
        w.cmd("FLUSHALL")
        w.cmd("HSET", "h", "a", "1", "b", "2")
        w.cmd("HPEXPIRE", "h", "30", "FIELDS", "2", "a", "b")
        lst.collect(w)
        got = lst.wait_for(4)
        assert got == expand([("hexpired", "h"), ("del", "h")])
        # One field of two: hexpired only.
        w.cmd("HSET", "h2", "a", "1", "b", "2")
        w.cmd("HPEXPIRE", "h2", "30", "FIELDS", "1", "a")
        lst.collect(w)
        assert lst.wait_for(2) == expand([("hexpired", "h2")])
        # Lazily, met by a command.
        assert w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
        w.cmd("HSET", "h3", "a", "1")
        w.cmd("HPEXPIRE", "h3", "20", "FIELDS", "1", "a")
        lst.collect(w)
        time.sleep(0.1)
        w.cmd("HGET", "h3", "a")
        assert lst.collect(w) == expand([("hexpired", "h3"), ("del", "h3")])
    finally:
        w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        lst.close()
        w.close()
