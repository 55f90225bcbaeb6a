"""rdb_changes_since_last_save (INFO persistence), the count of changes the
save points act on, against Debian's redis-server 7.0: the same commands
run on both servers and the counter must move by the same amount on each,
command by command. Only deltas are compared (the counter's absolute value
depends on what ran before, and on saves).

Redis counts what a command changed, not that it wrote: one per element a
multi-element write adds, removes or updates (RPUSH of 3 counts 3, ZADD
only the members added or moved, SADD only the new ones), one per key for
MSET and DEL, one per element stored by SORT STORE and GEORADIUS STORE,
nothing for a write that changed nothing (SETBIT to the same value, SREM
of absent members, LTRIM that keeps everything), nothing for the deletion
of a key its last element left, nothing for expiry, and the keys removed
for FLUSHALL/FLUSHDB. MULTI/EXEC and scripts count what their commands
count.

Sections:
  - hand-picked cases per command family, edge cases included;
  - every write-command template of test_notify_diff (which must name every
    write command HotKV has), so no command is left out;
  - the same templates and cases inside MULTI/EXEC and EVAL;
  - blocking pops served by a later push, lazy and active expiry, hash
    field expiry;
  - RESTORE and the FUNCTION registry;
  - commands Redis 7.0 lacks (hash-field TTLs, DELEX, MSETEX, XDELEX,
    XACKDEL, vector sets): counts read from Redis 8's source, HotKV only;
  - writes that count nothing propagate nothing (DEBUG JOURNAL), and no-op
    writes raise the keyspace events Redis raises for them, no others;
  - a seeded random command stream (HOTKV_DIRTY_SEED to change the seed)
    whose per-command deltas must agree.

Where Redis 7.2+ counts differently from 7.0 (HotKV follows the newer
servers), OVERRIDES holds both numbers: the test checks that Redis 7.0
gives the old one and HotKV the new one.
"""
import os
import random
import time

import pytest

from conftest import real_redis, start_server
from resp import Error, RespConn, encode, parse_commands
import test_notify_diff as notify_diff


def dirty_of(info):
    for line in info.decode().split("\r\n"):
        if line.startswith("rdb_changes_since_last_save:"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no rdb_changes_since_last_save in INFO persistence")


def dirty(c):
    return dirty_of(c.cmd("INFO", "persistence"))


def run_counted(c, cmd):
    """Run cmd on connection c; returns (reply, counter delta). The INFO
    after it goes in the same write as the command."""
    before = dirty(c)
    c.send(encode(*cmd) + encode("INFO", "persistence"))
    reply = c.read()
    return reply, dirty_of(c.read()) - before


@pytest.fixture(scope="module")
def pair(request):
    """HotKV (own server, 2 threads) and a stock Redis, neither saving."""
    srv = start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes", "--save", "",
                       threads=2)
    with real_redis("--enable-debug-command", "yes") as ref:
        if ref is None:
            srv.stop()
            pytest.skip("redis-server not installed")
        yield srv.port, ref
    srv.stop()


def C(name, setup, run, wrap=True):
    """A case: `setup` then `run`, each run command's delta compared;
    `wrap` False keeps it out of the MULTI/EVAL comparison."""
    return dict(name=name, setup=setup, run=run, wrap=wrap)


L3 = ["RPUSH", "l", "a", "b", "c"]
S3 = ["SADD", "s", "a", "b", "c"]
Z5 = ["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]
H3 = ["HSET", "h", "a", "1", "b", "2", "c", "3"]
X3 = [["XADD", "x", "1-1", "f", "v"], ["XADD", "x", "2-1", "f", "v"], ["XADD", "x", "3-1", "f", "v"]]
GEO3 = ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania",
        "13.583333", "37.316667", "Agrigento"]

CASES = [
    # ---- strings ----
    C("set", [], [["SET", "k", "v"], ["SET", "k", "v"], ["SET", "k", "w", "NX"], ["SET", "n", "w", "XX"],
                  ["SET", "k", "w", "XX", "GET"], ["SET", "k", "x", "EX", "100"], ["SET", "k", "y", "KEEPTTL"],
                  ["SET", "k", "z", "PX", "100000", "GET"], ["SETNX", "k", "a"], ["SETNX", "k2", "a"],
                  ["SETEX", "k", "100", "b"], ["PSETEX", "k", "100000", "c"], ["GETSET", "k", "d"],
                  ["GETSET", "k3", "d"]]),
    C("mset", [["SET", "b", "1"]], [["MSET", "a", "1", "b", "2", "c", "3"], ["MSET", "a", "1", "a", "2"],
                                    ["MSETNX", "a", "1", "x", "2"], ["MSETNX", "x", "1", "y", "2", "w", "3"]]),
    C("append/setrange", [["SET", "s", "hello"]],
      [["APPEND", "s", "!"], ["APPEND", "s", ""], ["APPEND", "n", "ab"], ["SETRANGE", "s", "1", "EE"],
       ["SETRANGE", "s", "0", ""], ["SETRANGE", "m", "0", ""], ["SETRANGE", "s", "20", "x"], ["SETRANGE", "o", "2", "x"]]),
    C("incr", [["SET", "f", "1.5"]], [["INCR", "i"], ["DECR", "i"], ["INCRBY", "i", "0"], ["DECRBY", "i", "7"],
                                      ["INCRBY", "f", "1"], ["INCRBYFLOAT", "f", "0"], ["INCRBYFLOAT", "g", "2.5"]]),
    C("getdel/getex", [["SET", "k", "v"], ["SET", "t", "v", "EX", "100"]],
      [["GETDEL", "k"], ["GETDEL", "k"], ["GETEX", "t"], ["GETEX", "t", "PERSIST"], ["GETEX", "t", "PERSIST"],
       ["GETEX", "t", "EX", "50"], ["GETEX", "t", "PXAT", "1"], ["GETEX", "nokey", "EX", "5"]]),
    C("setbit", [], [["SETBIT", "b", "7", "1"], ["SETBIT", "b", "7", "1"], ["SETBIT", "b", "7", "0"],
                     ["SETBIT", "b", "7", "0"], ["SETBIT", "b", "100", "0"], ["SETBIT", "c", "0", "0"]]),
    C("bitfield", [], [["BITFIELD", "f", "SET", "u8", "0", "255", "SET", "u8", "8", "1", "GET", "u8", "0"],
                       ["BITFIELD", "f", "SET", "u8", "0", "255"], ["BITFIELD", "f", "SET", "u8", "0", "255", "SET", "u8", "8", "2"],
                       ["BITFIELD", "f", "INCRBY", "u8", "8", "0"], ["BITFIELD", "f", "INCRBY", "u8", "8", "1", "INCRBY", "u8", "16", "0"],
                       ["BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1"], ["BITFIELD", "f", "GET", "u8", "0"],
                       ["BITFIELD", "g", "SET", "u8", "0", "0", "SET", "u8", "0", "0"], ["BITFIELD", "h", "GET", "u8", "0"],
                       ["BITFIELD", "f", "SET", "u4", "100", "0", "SET", "u4", "0", "15"]]),
    C("bitop", [["SET", "a", "ab"], ["SET", "b", "cd"], ["SET", "d", "x"]],
      [["BITOP", "AND", "d", "a", "b"], ["BITOP", "OR", "e", "a", "nosuch"], ["BITOP", "XOR", "d", "n1", "n2"],
       ["BITOP", "XOR", "d", "n1", "n2"], ["BITOP", "NOT", "e", "e"]]),
    # ---- keys ----
    C("del", [["SET", "a", "1"], ["SET", "b", "1"], L3, ["SET", "c", "1"]],
      [["DEL", "a", "nosuch", "l", "a"], ["DEL", "a"], ["UNLINK", "b", "c", "zz"], ["UNLINK", "b"]]),
    C("rename", [["SET", "a", "1"], ["SET", "b", "2"], ["SET", "c", "3"], L3],
      [["RENAME", "a", "b"], ["RENAME", "b", "b"], ["RENAME", "l", "nl"], ["RENAMENX", "c", "b"],
       ["RENAMENX", "c", "d"], ["RENAMENX", "d", "d"]]),
    C("copy", [["SET", "a", "1"], ["SET", "b", "2"], H3],
      [["COPY", "a", "b"], ["COPY", "a", "b", "REPLACE"], ["COPY", "h", "h2"], ["COPY", "h", "h2"],
       ["COPY", "a", "a", "DB", "3"], ["COPY", "nosuch", "z"]]),
    C("move", [["SET", "a", "1"], ["SET", "b", "1"], ["SELECT", "1"], ["SET", "b", "x"], ["SELECT", "0"], L3],
      [["MOVE", "a", "1"], ["MOVE", "b", "1"], ["MOVE", "nosuch", "1"], ["MOVE", "l", "2"]]),
    C("swapdb", [["SET", "a", "1"]], [["SWAPDB", "0", "1"], ["SWAPDB", "0", "0"], ["SWAPDB", "1", "0"]]),
    C("flush", [["SET", "a", "1"], ["SET", "b", "1"], L3, ["SELECT", "1"], ["SET", "c", "1"], ["SELECT", "0"]],
      [["FLUSHDB"], ["FLUSHDB"], ["SET", "d", "1"], ["FLUSHALL"], ["FLUSHALL"], ["SET", "d", "1"], ["FLUSHALL", "ASYNC"],
       ["FLUSHDB", "ASYNC"], ["SET", "e", "1"], ["FLUSHDB", "SYNC"]]),
    C("expire", [["SET", "a", "1"], ["SET", "b", "1"], ["SET", "c", "1"], L3],
      [["EXPIRE", "a", "100"], ["EXPIRE", "a", "100"], ["PEXPIRE", "a", "100000", "XX"], ["EXPIRE", "a", "10", "NX"],
       ["EXPIRE", "b", "10", "XX"], ["EXPIREAT", "b", "99999999999"], ["PEXPIREAT", "b", "99999999999000", "GT"],
       ["PEXPIREAT", "b", "99999999990000", "LT"], ["EXPIRE", "nosuch", "10"], ["PEXPIREAT", "c", "1"],
       ["EXPIRE", "a", "-5"], ["EXPIRE", "l", "0"]]),
    C("persist", [["SET", "a", "1", "EX", "100"], ["SET", "b", "1"]],
      [["PERSIST", "a"], ["PERSIST", "a"], ["PERSIST", "b"], ["PERSIST", "nosuch"]]),
    C("sort", [["RPUSH", "l", "3", "1", "2"], ["SET", "d", "x"], ["SET", "w_1", "10"], ["SET", "w_2", "5"],
               ["SET", "o_1", "one"]],
      [["SORT", "l", "STORE", "d"], ["SORT", "l", "STORE", "d"], ["SORT", "nosuch", "STORE", "d"],
       ["SORT", "nosuch", "STORE", "d"], ["SORT", "l", "GET", "#", "GET", "o_*", "STORE", "e"],
       ["SORT", "l", "BY", "w_*", "LIMIT", "0", "2", "STORE", "e"], ["SORT", "l", "LIMIT", "5", "2", "STORE", "e"],
       ["SORT", "l"]]),
    # ---- lists ----
    C("push", [], [["RPUSH", "l", "a", "b", "c"], ["LPUSH", "l", "x", "y"], ["LPUSHX", "l", "1", "2", "3"],
                   ["RPUSHX", "l", "4"], ["RPUSHX", "n", "1", "2"], ["LPUSHX", "n", "1"]]),
    C("pop", [["RPUSH", "l", "1", "2", "3", "4", "5", "6"], ["RPUSH", "m", "a"]],
      [["LPOP", "l", "2"], ["RPOP", "l", "1"], ["LPOP", "l", "0"], ["RPOP", "l", "10"], ["LPOP", "l"], ["LPOP", "l", "3"],
       ["RPOP", "m"], ["RPOP", "m"]]),
    C("lmpop", [["RPUSH", "l", "1", "2", "3", "4"]],
      [["LMPOP", "2", "nosuch", "l", "LEFT", "COUNT", "3"], ["LMPOP", "1", "l", "RIGHT"], ["LMPOP", "1", "l", "LEFT"],
       ["LMPOP", "1", "l", "LEFT", "COUNT", "9"]]),
    C("lrem/ltrim", [["RPUSH", "l", "a", "b", "a", "c", "a", "d", "e"], ["RPUSH", "m", "x", "x"]],
      [["LREM", "l", "0", "a"], ["LREM", "l", "0", "zz"], ["LREM", "l", "-1", "e"], ["LTRIM", "l", "0", "-1"],
       ["LTRIM", "l", "1", "-2"], ["LTRIM", "l", "0", "0"], ["LTRIM", "nosuch", "0", "1"], ["LREM", "m", "0", "x"],
       ["LTRIM", "l", "5", "10"]]),
    C("lset/linsert", [L3], [["LSET", "l", "0", "q"], ["LSET", "l", "0", "q"], ["LINSERT", "l", "BEFORE", "q", "w"],
                             ["LINSERT", "l", "AFTER", "nope", "w"], ["LINSERT", "n", "AFTER", "a", "w"]]),
    C("lmove", [L3, ["RPUSH", "one", "x"], ["RPUSH", "two", "y"]],
      [["LMOVE", "l", "d", "LEFT", "RIGHT"], ["LMOVE", "l", "l", "LEFT", "RIGHT"], ["RPOPLPUSH", "l", "l"],
       ["LMOVE", "one", "d", "RIGHT", "LEFT"], ["RPOPLPUSH", "two", "two"], ["RPOPLPUSH", "nosuch", "d"]]),
    C("blocking pops served at once", [L3, ["RPUSH", "m", "q"], ["RPUSH", "n", "1", "2", "3"],
                                       ["ZADD", "z", "1", "a", "2", "b"]],
      [["BLPOP", "nosuch", "l", "0"], ["BRPOP", "m", "0"], ["BLMOVE", "l", "d", "LEFT", "LEFT", "0"],
       ["BRPOPLPUSH", "l", "d", "0"], ["BLMPOP", "0", "1", "n", "RIGHT", "COUNT", "5"],
       ["BZPOPMIN", "z", "0"], ["BZMPOP", "0", "1", "z", "MAX", "COUNT", "3"]]),
    # ---- sets ----
    C("sadd/srem", [], [["SADD", "s", "a", "b", "c"], ["SADD", "s", "a", "d", "e"], ["SADD", "s", "a"],
                        ["SADD", "i", "1", "2", "3"], ["SREM", "s", "a", "zz", "b"], ["SREM", "s", "zz"],
                        ["SREM", "s", "c", "d", "e"], ["SREM", "s", "c"], ["SREM", "i", "1", "2", "3", "4"]]),
    C("spop", [["SADD", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"], ["SADD", "t", "1", "2"],
               ["SADD", "u", "x"]],
      [["SPOP", "s", "0"], ["SPOP", "s", "1"], ["SPOP", "s", "3"], ["SPOP", "s", "7"], ["SPOP", "s"], ["SPOP", "t", "5"],
       ["SPOP", "u"], ["SPOP", "u"], ["SPOP", "nosuch", "2"]]),
    C("smove", [S3, ["SADD", "d", "z", "a"], ["SADD", "one", "q"]],
      [["SMOVE", "s", "d", "a"], ["SMOVE", "s", "d", "b"], ["SMOVE", "s", "d", "zz"], ["SMOVE", "s", "s", "c"],
       ["SMOVE", "one", "d", "q"], ["SMOVE", "one", "e", "q"], ["SMOVE", "d", "e", "q"]]),
    C("setstore", [S3, ["SADD", "t", "b", "c", "z"], ["SET", "str", "x"]],
      [["SINTERSTORE", "d", "s", "t"], ["SUNIONSTORE", "d", "s", "t"], ["SDIFFSTORE", "e", "s", "t"],
       ["SINTERSTORE", "d", "s", "nosuch"], ["SINTERSTORE", "d", "s", "nosuch"], ["SDIFFSTORE", "str", "nosuch"],
       ["SUNIONSTORE", "f", "nosuch"]]),
    # ---- hashes ----
    C("hset", [], [["HSET", "h", "a", "1", "b", "2", "c", "3"], ["HSET", "h", "a", "1", "d", "4"], ["HSET", "h", "a", "1"],
                   ["HMSET", "h", "a", "9", "z", "2"], ["HSETNX", "h", "a", "1"], ["HSETNX", "h", "n", "1"],
                   ["HSETNX", "nh", "n", "1"]]),
    C("hdel", [H3, ["HSET", "g", "x", "1"]],
      [["HDEL", "h", "a", "b", "zz"], ["HDEL", "h", "zz"], ["HDEL", "h", "c", "c"], ["HDEL", "h", "c"],
       ["HDEL", "g", "x", "y"], ["HDEL", "nosuch", "x"]]),
    C("hincr", [H3], [["HINCRBY", "h", "a", "5"], ["HINCRBY", "h", "a", "0"], ["HINCRBY", "h", "new", "1"],
                      ["HINCRBYFLOAT", "h", "b", "1.5"], ["HINCRBYFLOAT", "h", "b", "0"], ["HINCRBY", "nh", "f", "1"]]),
    # ---- sorted sets ----
    C("zadd", [], [["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZADD", "z", "1", "a", "5", "b", "9", "d"],
                   ["ZADD", "z", "CH", "1", "a", "6", "b", "10", "e"], ["ZADD", "z", "XX", "1", "a", "7", "q"],
                   ["ZADD", "z", "NX", "1", "a", "7", "q"], ["ZADD", "z", "GT", "0", "a", "20", "b"],
                   ["ZADD", "z", "LT", "0", "a", "30", "b"], ["ZADD", "z", "INCR", "1", "a"], ["ZADD", "z", "INCR", "0", "a"],
                   ["ZADD", "z", "XX", "INCR", "1", "nope"], ["ZADD", "n", "XX", "1", "a"]]),
    C("zincrby/zrem", [Z5], [["ZINCRBY", "z", "0", "a"], ["ZINCRBY", "z", "1", "a"], ["ZINCRBY", "y", "1", "a"],
                             ["ZREM", "z", "a", "b", "zz"], ["ZREM", "z", "zz"], ["ZREM", "z", "c", "d", "e"],
                             ["ZREM", "y", "a"]]),
    C("zremrange", [Z5, ["ZADD", "w", "0", "a", "0", "b", "0", "c", "0", "d"]],
      [["ZREMRANGEBYRANK", "z", "0", "1"], ["ZREMRANGEBYSCORE", "z", "10", "20"], ["ZREMRANGEBYSCORE", "z", "3", "4"],
       ["ZREMRANGEBYRANK", "z", "5", "9"], ["ZREMRANGEBYLEX", "w", "[a", "[b"], ["ZREMRANGEBYLEX", "w", "-", "+"],
       ["ZREMRANGEBYSCORE", "z", "-inf", "+inf"], ["ZREMRANGEBYRANK", "n", "0", "1"]]),
    C("zpop", [Z5], [["ZPOPMIN", "z"], ["ZPOPMAX", "z", "2"], ["ZPOPMIN", "z", "0"], ["ZPOPMIN", "z", "9"],
                     ["ZPOPMIN", "z"], ["ZMPOP", "1", "nosuch", "MIN"]]),
    C("zmpop", [Z5], [["ZMPOP", "2", "nosuch", "z", "MIN", "COUNT", "2"], ["ZMPOP", "1", "z", "MAX"],
                      ["ZMPOP", "1", "z", "MAX", "COUNT", "9"]]),
    C("zstore", [["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZADD", "y", "5", "b", "6", "q"], ["SADD", "s", "a", "k"]],
      [["ZUNIONSTORE", "d", "2", "z", "y"], ["ZINTERSTORE", "d", "2", "z", "y", "WEIGHTS", "1", "2"],
       ["ZDIFFSTORE", "e", "2", "z", "y"], ["ZUNIONSTORE", "e", "2", "z", "s"], ["ZINTERSTORE", "d", "2", "z", "nosuch"],
       ["ZINTERSTORE", "d", "2", "z", "nosuch"], ["ZRANGESTORE", "f", "z", "0", "-1"], ["ZRANGESTORE", "f", "z", "5", "10"],
       ["ZRANGESTORE", "f", "z", "5", "10"], ["ZRANGESTORE", "f", "z", "(1", "3", "BYSCORE"]]),
    # ---- geo ----
    C("geoadd", [], [GEO3, ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
                     ["GEOADD", "g", "CH", "1", "1", "Palermo", "2", "2", "Catania", "3", "3", "New"],
                     ["GEOADD", "g", "XX", "4", "4", "Palermo", "5", "5", "Nope"], ["GEOADD", "g", "NX", "4", "4", "Palermo"],
                     ["GEOADD", "h", "XX", "1", "1", "a"]]),
    C("geostore", [GEO3, ["SET", "e", "x"]],
      [["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d"],
       ["GEORADIUSBYMEMBER", "g", "Palermo", "500", "km", "STOREDIST", "e"],
       ["GEOSEARCHSTORE", "f", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "300", "km"],
       ["GEOSEARCHSTORE", "f", "g", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "COUNT", "2", "STOREDIST"],
       ["GEOSEARCHSTORE", "f", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
       ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d"], ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d"]]),
    # ---- hyperloglog ----
    C("pfadd", [], [["PFADD", "p", "a", "b", "c"], ["PFADD", "p", "a"], ["PFADD", "p", "a", "d"], ["PFADD", "q"],
                    ["PFADD", "q"], ["PFCOUNT", "p"], ["PFCOUNT", "p"], ["PFCOUNT", "p", "q"], ["PFADD", "p", "e"],
                    ["PFCOUNT", "p"]]),
    C("pfmerge", [["PFADD", "p", "a"], ["PFADD", "q", "b"]],
      [["PFMERGE", "d", "p", "q"], ["PFMERGE", "d", "p"], ["PFMERGE", "e"], ["PFMERGE", "p"]]),
    # ---- streams ----
    C("xadd", [], [["XADD", "x", "1-1", "f", "v"], ["XADD", "x", "2-1", "f", "v", "g", "w"],
                   ["XADD", "x", "MAXLEN", "1", "3-1", "f", "v"], ["XADD", "n", "NOMKSTREAM", "*", "f", "v"],
                   ["XADD", "x", "MINID", "10", "5-1", "f", "v"], ["XADD", "x", "1-1", "f", "v"]]),
    C("xdel/xtrim", list(X3) + [["XADD", "x", "4-1", "f", "v"], ["XADD", "x", "5-1", "f", "v"], ["XADD", "x", "6-1", "f", "v"]],
      [["XDEL", "x", "1-1", "2-1", "9-9"], ["XDEL", "x", "9-9"], ["XDEL", "x", "1-1"], ["XTRIM", "x", "MAXLEN", "1"],
       ["XTRIM", "x", "MAXLEN", "5"], ["XADD", "x", "7-1", "f", "v"], ["XTRIM", "x", "MINID", "10"],
       ["XTRIM", "nosuch", "MAXLEN", "0"]]),
    C("xsetid", list(X3), [["XSETID", "x", "10-1"], ["XSETID", "x", "10-1"], ["XSETID", "x", "20-1", "ENTRIESADDED", "5"]]),
    C("xgroup", list(X3),
      [["XGROUP", "CREATE", "x", "g", "0"], ["XGROUP", "CREATE", "y", "g", "$", "MKSTREAM"],
       ["XGROUP", "CREATECONSUMER", "x", "g", "c1"], ["XGROUP", "CREATECONSUMER", "x", "g", "c1"],
       ["XGROUP", "SETID", "x", "g", "1-1"], ["XGROUP", "DELCONSUMER", "x", "g", "c1"],
       ["XGROUP", "DELCONSUMER", "x", "g", "c1"], ["XGROUP", "DESTROY", "x", "g"], ["XGROUP", "DESTROY", "x", "g"]]),
    C("xreadgroup", list(X3) + [["XADD", "y", "1-1", "f", "v"], ["XGROUP", "CREATE", "x", "g", "0"],
                                ["XGROUP", "CREATE", "y", "g", "0"], ["XGROUP", "CREATECONSUMER", "x", "g", "c0"]],
      [["XREADGROUP", "GROUP", "g", "c0", "COUNT", "1", "STREAMS", "x", ">"],
       ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "x", ">"],
       ["XREADGROUP", "GROUP", "g", "c0", "STREAMS", "x", "y", ">", ">"],
       ["XREADGROUP", "GROUP", "g", "c0", "STREAMS", "x", ">"],
       ["XREADGROUP", "GROUP", "g", "c1", "NOACK", "STREAMS", "x", ">"],
       ["XREADGROUP", "GROUP", "g", "c5", "NOACK", "STREAMS", "x", ">"]]),
    C("xack/xclaim", list(X3) + [["XADD", "x", "4-1", "f", "v"], ["XGROUP", "CREATE", "x", "g", "0"],
                                 ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "x", ">"], ["XDEL", "x", "2-1"]],
      [["XACK", "x", "g", "1-1", "9-9"], ["XACK", "x", "g", "1-1"], ["XCLAIM", "x", "g", "c2", "0", "2-1", "3-1", "9-9"],
       ["XCLAIM", "x", "g", "c2", "0", "3-1", "JUSTID"], ["XAUTOCLAIM", "x", "g", "c3", "0", "0-0"],
       ["XAUTOCLAIM", "x", "g", "c3", "0", "0-0", "JUSTID"], ["XACK", "x", "g", "3-1", "4-1"]]),
]

# Redis 7.0 and the newer servers HotKV follows count these differently:
# command -> (Redis 7.0's count, Redis 7.2+/8.x's, why).
OVERRIDES = {
    # 7.0 counts a change for every stream XREADGROUP serves synchronously;
    # 7.2+ only for one that delivered (or moved the group), plus one for
    # a consumer it creates. A history read delivers nothing new.
    ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "x", "0"): (1, 0, "history read"),
    # 7.0 creates the consumer only when it serves; 7.2+ creates it (a
    # change) before looking for entries.
    ("XREADGROUP", "GROUP", "g", "c5", "NOACK", "STREAMS", "x", ">"): (0, 1, "consumer created, nothing new"),
}


def expected(cmd, redis_delta):
    o = OVERRIDES.get(tuple(cmd))
    if o is None:
        return redis_delta, None
    return o[1], o[0]


def all_cases():
    return CASES + [C("notify:" + notify_diff.case_id(t), t["setup"], t["run"], t["wrap"]) for t in notify_diff.CASES]


def setup_on(port, case):
    c = RespConn("127.0.0.1", port)
    assert c.cmd("FLUSHALL") == "OK"
    assert c.cmd("SELECT", "0") == "OK"
    for s in case["setup"]:
        r = c.cmd(*s)
        assert not isinstance(r, Error), (s, r)
    return c


def plain_deltas(port, case):
    c = setup_on(port, case)
    try:
        return [run_counted(c, cmd) for cmd in case["run"]]
    finally:
        c.close()


# Write commands with a test of their own here (RESTORE: a DUMP payload is
# the server's own), or none: MIGRATE needs a second server.
OWN_TESTS = {"restore", "migrate"}


def test_every_write_command_is_covered(pair):
    """The notification templates this file reuses name every write
    command HotKV has (test_notify_diff checks the same from its side)."""
    hk, _ = pair
    missing = sorted(notify_diff.write_commands(hk) - notify_diff.covered() - notify_diff.NO_KEYS - OWN_TESTS)
    assert not missing, missing


def test_restore(pair):
    """RESTORE counts one change; refused (BUSYKEY) none."""
    results = []
    for port in pair:
        c = RespConn("127.0.0.1", port)
        c.cmd("FLUSHALL")
        c.cmd("RPUSH", "l", "a", "b", "c")
        payload = c.cmd("DUMP", "l")
        if isinstance(payload, Error):
            c.close()
            pytest.skip("no DUMP/RESTORE: %s" % payload)
        out = [run_counted(c, cmd)[1] for cmd in (["RESTORE", "m", "0", payload], ["RESTORE", "m", "0", payload],
                                                   ["RESTORE", "m", "0", payload, "REPLACE"],
                                                   ["RESTORE", "n", "0", payload, "ABSTTL", "IDLETIME", "5"])]
        results.append(out)
        c.close()
    assert results[0] == results[1] == [1, 0, 1, 1]


def test_deltas_match_redis(pair):
    hk, ref = pair
    failures = []
    for case in all_cases():
        want = plain_deltas(ref, case)
        got = plain_deltas(hk, case)
        for cmd, (wr, wd), (gr, gd) in zip(case["run"], want, got):
            exp, old = expected(cmd, wd)
            if old is not None and wd != old:
                failures.append("%s: %s: Redis 7.0 counted %d, the override says %d" % (case["name"], cmd, wd, old))
            if gd != exp:
                failures.append("%s: %s: want %d, got %d (replies %r / %r)" % (case["name"], " ".join(cmd), exp, gd,
                                                                                 wr, gr))
    assert not failures, "\n".join(failures)


SCRIPT = "return redis.call(unpack(ARGV))"


def wrapped_delta(port, case, mode):
    c = setup_on(port, case)
    try:
        before = dirty(c)
        if mode == "multi":
            assert c.cmd("MULTI") == "OK"
            for cmd in case["run"]:
                assert c.cmd(*cmd) == "QUEUED", cmd
            replies = c.cmd("EXEC")
            assert isinstance(replies, list), replies
        else:
            for cmd in case["run"]:
                c.cmd("EVAL", SCRIPT, "0", *cmd)
        return dirty(c) - before
    finally:
        c.close()


@pytest.mark.parametrize("mode", ["multi", "eval"])
def test_wrapped_deltas_are_the_sum(pair, mode):
    """Inside MULTI/EXEC or EVAL the commands count what they count alone:
    EXEC and the script add nothing of their own."""
    hk, ref = pair
    failures = []
    for case in all_cases():
        if not case["wrap"]:
            continue
        # Blocking commands are not allowed in scripts.
        if mode == "eval" and any(cmd[0].lower() in notify_diff.BLOCKING for cmd in case["run"]):
            continue
        plain = sum(d for _, d in plain_deltas(hk, case))
        got = wrapped_delta(hk, case, mode)
        if got != plain:
            failures.append("%s (%s): alone %d, wrapped %d" % (case["name"], mode, plain, got))
        if not any(tuple(cmd) in OVERRIDES for cmd in case["run"]):
            want = wrapped_delta(ref, case, mode)
            if got != want:
                failures.append("%s (%s): redis %d, hotkv %d" % (case["name"], mode, want, got))
    assert not failures, "\n".join(failures)


def test_function_registry_changes(pair):
    """FUNCTION LOAD, DELETE, FLUSH and RESTORE count one change each; a
    function's calls count what they do."""
    lib = ("#!lua name=dirtylib\n"
           "redis.register_function('f', function(k, a) return redis.call('hset', k[1], 'a', 1, 'b', 2) end)")
    results = []
    for port in pair:
        c = RespConn("127.0.0.1", port)
        c.cmd("FUNCTION", "FLUSH")
        c.cmd("FLUSHALL")
        out = [run_counted(c, ["FUNCTION", "LOAD", lib])[1], run_counted(c, ["FCALL", "f", "1", "h"])[1]]
        dump = c.cmd("FUNCTION", "DUMP")
        out.append(run_counted(c, ["FUNCTION", "DELETE", "dirtylib"])[1])
        out.append(run_counted(c, ["FUNCTION", "RESTORE", dump])[1])
        out.append(run_counted(c, ["FUNCTION", "FLUSH"])[1])
        results.append(out)
        c.close()
    assert results[0] == results[1] == [1, 2, 1, 1, 1]


# ---- blocking pops served by a later push -----------------------------------

# (blocked command, push, Redis 7.0's count for the push and the serving,
# Redis 7.2+'s). Since 7.2 a served client re-runs its command, which
# counts as it would alone; 7.0 served BLPOP, BRPOP, BLMOVE, BRPOPLPUSH
# and XREADGROUP without counting the pop (or the delivery).
BLOCKED = [
    (["BLPOP", "l1", "0"], ["RPUSH", "l1", "a", "b"], 2, 3),
    (["BRPOP", "l2", "0"], ["RPUSH", "l2", "a"], 1, 2),
    (["BRPOPLPUSH", "l3", "d", "0"], ["LPUSH", "l3", "x"], 1, 2),
    (["BLMOVE", "l4", "d", "LEFT", "RIGHT", "0"], ["RPUSH", "l4", "x", "y"], 2, 3),
    (["BLMPOP", "0", "1", "l5", "LEFT", "COUNT", "5"], ["RPUSH", "l5", "x", "y"], 4, 4),
    (["BLMPOP", "0", "1", "l6", "LEFT", "COUNT", "2"], ["RPUSH", "l6", "x", "y", "z"], 5, 5),
    (["BZPOPMIN", "z1", "0"], ["ZADD", "z1", "1", "a"], 2, 2),
    (["BZMPOP", "0", "1", "z2", "MAX", "COUNT", "1"], ["ZADD", "z2", "1", "a", "2", "b"], 3, 3),
    (["BZMPOP", "0", "1", "z3", "MAX", "COUNT", "5"], ["ZADD", "z3", "1", "a", "2", "b"], 4, 4),
    (["XREAD", "BLOCK", "0", "STREAMS", "x1", "$"], ["XADD", "x1", "1-1", "f", "v"], 1, 1),
    (["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "x2", ">"], ["XADD", "x2", "5-1", "f", "v"], 1, 2),
]


def served_deltas(port):
    w = RespConn("127.0.0.1", port)
    w.cmd("FLUSHALL")
    w.cmd("XGROUP", "CREATE", "x2", "g", "$", "MKSTREAM")
    w.cmd("XGROUP", "CREATECONSUMER", "x2", "g", "c")
    out = []
    for block, push, _, _ in BLOCKED:
        b = RespConn("127.0.0.1", port)
        b.send(encode(*block))
        deadline = time.time() + 5
        while "blocked_clients:1" not in w.cmd("INFO", "clients").decode():
            assert time.time() < deadline, block
            time.sleep(0.005)
        before = dirty(w)
        w.cmd(*push)
        assert not isinstance(b.read(), Error)
        b.close()
        out.append(dirty(w) - before)
    w.close()
    return out


def test_served_blocking_pops(pair):
    hk, ref = pair
    assert served_deltas(ref) == [b[2] for b in BLOCKED]
    assert served_deltas(hk) == [b[3] for b in BLOCKED]


# ---- expiry -------------------------------------------------------------------


def test_expiry_counts_nothing(pair):
    """Keys deleted by lazy or active expiry are not changes; a write that
    meets an expired key counts its own change only."""
    results = []
    for port in pair:
        c = RespConn("127.0.0.1", port)
        c.cmd("FLUSHALL")
        assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
        c.cmd("SET", "k", "v", "PX", "20")
        c.cmd("RPUSH", "l", "a", "b")
        c.cmd("PEXPIRE", "l", "20")
        c.cmd("SADD", "s", "a")
        c.cmd("PEXPIRE", "s", "20")
        time.sleep(0.1)
        out = [run_counted(c, cmd)[1] for cmd in (["GET", "k"], ["EXISTS", "k"], ["RPUSH", "l", "x", "y", "z"],
                                                   ["SREM", "s", "a"], ["DEL", "s"])]
        assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"
        c.cmd("SET", "a", "v", "PX", "10")
        c.cmd("SET", "b", "v", "PX", "10")
        before = dirty(c)
        deadline = time.time() + 5
        while c.cmd("DBSIZE") != 1:  # l is left
            assert time.time() < deadline
            time.sleep(0.02)
        out.append(dirty(c) - before)
        results.append(out)
        c.close()
    assert results[0] == results[1] == [0, 0, 3, 0, 0, 0]


def test_hash_field_expiry_counts_nothing(pair):
    """Redis 7.4+: fields deleted by lazy or active field expiry (and the
    hash their last one takes along) are not changes."""
    hk, _ = pair
    c = RespConn("127.0.0.1", hk)
    try:
        c.cmd("FLUSHALL")
        assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
        c.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
        assert run_counted(c, ["HPEXPIRE", "h", "20", "FIELDS", "2", "a", "b"])[1] == 2
        time.sleep(0.1)
        assert run_counted(c, ["HGET", "h", "a"]) == (None, 0)
        assert run_counted(c, ["HGETALL", "h"])[1] == 0
        assert run_counted(c, ["HSET", "h", "a", "9"])[1] == 1
        c.cmd("HSET", "g", "a", "1")
        c.cmd("HPEXPIRE", "g", "20", "FIELDS", "1", "a")
        time.sleep(0.1)
        assert run_counted(c, ["HDEL", "g", "a"]) == (0, 0)
        assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"
        c.cmd("HSET", "f", "a", "1", "b", "1")
        c.cmd("HPEXPIRE", "f", "10", "FIELDS", "2", "a", "b")
        before = dirty(c)
        deadline = time.time() + 5
        while c.cmd("EXISTS", "f"):
            assert time.time() < deadline
            time.sleep(0.02)
        assert dirty(c) == before
    finally:
        c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.close()


# ---- commands newer than Redis 7.0 ------------------------------------------

# (setup, [(command, count)]): counts from Redis 8's source (t_hash.c,
# t_string.c, t_stream.c, and the vector-set module, whose replication of a
# write is one change).
NEW = [
    # HEXPIRE family: a change per field given a deadline or deleted by a
    # past one; none when no condition was met.
    ([["HSET", "h", "a", "1", "b", "2", "c", "3"]],
     [(["HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "zz"], 2), (["HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"], 0),
      (["HPEXPIRE", "h", "200000", "GT", "FIELDS", "1", "a"], 1), (["HPEXPIREAT", "h", "1", "FIELDS", "2", "a", "c"], 2),
      (["HEXPIRE", "nosuch", "100", "FIELDS", "1", "a"], 0), (["HEXPIREAT", "h", "1", "FIELDS", "1", "b"], 1)]),
    # HPERSIST: one change whatever the number of fields.
    ([["HSET", "h", "a", "1", "b", "2", "c", "3"], ["HEXPIRE", "h", "100", "FIELDS", "2", "a", "b"]],
     [(["HPERSIST", "h", "FIELDS", "3", "a", "b", "c"], 1), (["HPERSIST", "h", "FIELDS", "1", "a"], 0)]),
    # HGETDEL: a change per field deleted; none for the hash it empties.
    ([["HSET", "h", "a", "1", "b", "2", "c", "3"]],
     [(["HGETDEL", "h", "FIELDS", "2", "a", "zz"], 1), (["HGETDEL", "h", "FIELDS", "1", "zz"], 0),
      (["HGETDEL", "h", "FIELDS", "2", "b", "c"], 2), (["HGETDEL", "h", "FIELDS", "1", "b"], 0)]),
    # HGETEX: a change per field given a deadline, persisted or deleted.
    ([["HSET", "h", "a", "1", "b", "2", "c", "3"]],
     [(["HGETEX", "h", "EX", "100", "FIELDS", "3", "a", "b", "zz"], 2), (["HGETEX", "h", "PERSIST", "FIELDS", "2", "a", "c"], 1),
      (["HGETEX", "h", "FIELDS", "1", "a"], 0), (["HGETEX", "h", "PERSIST", "FIELDS", "1", "a"], 0),
      (["HGETEX", "h", "PXAT", "1", "FIELDS", "3", "a", "b", "c"], 3)]),
    # HSETEX: a change per field set (even when a past deadline deletes
    # them); none when FNX/FXX stops it.
    ([],
     [(["HSETEX", "h", "FIELDS", "2", "a", "1", "b", "2"], 2), (["HSETEX", "h", "EX", "100", "FIELDS", "1", "c", "3"], 1),
      (["HSETEX", "h", "FNX", "FIELDS", "1", "a", "9"], 0), (["HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "2", "a", "9", "c", "9"], 2),
      (["HSETEX", "h", "PXAT", "1", "FIELDS", "2", "a", "1", "b", "1"], 2)]),
    # SET with a deadline already past deletes the key (Redis PR 14784):
    # a change when there was one to delete.
    ([["SET", "k", "v"]], [(["SET", "k", "w", "PXAT", "1"], 1), (["SET", "k2", "w", "EXAT", "1"], 0)]),
    # SET IFEQ/IFNE and DELEX: one change when they write.
    ([["SET", "a", "v"], ["SET", "b", "v"]],
     [(["SET", "a", "w", "IFEQ", "v"], 1), (["SET", "a", "x", "IFEQ", "v"], 0), (["SET", "a", "y", "IFNE", "q", "EX", "100"], 1),
      (["DELEX", "b", "IFEQ", "w"], 0), (["DELEX", "b", "IFEQ", "v"], 1), (["DELEX", "a"], 1), (["DELEX", "a"], 0)]),
    # MSETEX: a change per key, as MSET.
    ([["SET", "b", "1"]],
     [(["MSETEX", "2", "a", "1", "b", "2", "EX", "100"], 2), (["MSETEX", "1", "c", "1", "NX"], 1),
      (["MSETEX", "1", "c", "1", "NX"], 0), (["MSETEX", "3", "a", "1", "b", "2", "c", "3", "XX", "KEEPTTL"], 3)]),
    # XDELEX deletes as XDEL counts; XACKDEL acknowledges as XACK and
    # deletes as XDEL.
    (list(X3) + [["XADD", "x", "4-1", "f", "v"]],
     [(["XDELEX", "x", "IDS", "3", "1-1", "2-1", "9-9"], 2), (["XDELEX", "x", "IDS", "1", "9-9"], 0)]),
    (list(X3) + [["XGROUP", "CREATE", "x", "g", "0"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"]],
     [(["XACKDEL", "x", "g", "IDS", "3", "1-1", "2-1", "9-9"], 4), (["XACKDEL", "x", "g", "IDS", "1", "1-1"], 0)]),
    # Vector sets: one change per write command (the module replicates it
    # once), also when VREM takes the emptied key along.
    ([],
     [(["VADD", "v", "VALUES", "2", "1", "2", "a"], 1), (["VADD", "v", "VALUES", "2", "3", "4", "b"], 1),
      (["VSETATTR", "v", "a", '{"x":1}'], 1), (["VREM", "v", "a"], 1), (["VREM", "v", "a"], 0), (["VREM", "v", "b"], 1)]),
]


def test_newer_commands(pair):
    hk, _ = pair
    failures = []
    for setup, runs in NEW:
        case = C("new", setup, [r[0] for r in runs])
        for (cmd, want), (reply, got) in zip(runs, plain_deltas(hk, case)):
            assert not isinstance(reply, Error), (cmd, reply)
            if got != want:
                failures.append("%s: want %d, got %d" % (" ".join(cmd), want, got))
        if all(r[0][0] not in ("VADD", "VREM", "VSETATTR") for r in runs):
            for mode in ("multi", "eval"):
                got = wrapped_delta(hk, case, mode)
                if got != sum(r[1] for r in runs):
                    failures.append("%s (%s): want %d, got %d" % (runs[0][0], mode, sum(r[1] for r in runs), got))
    assert not failures, "\n".join(failures)


# ---- propagation ----------------------------------------------------------------


def test_uncounted_writes_propagate_nothing(pair):
    """A write command that counts no change changes nothing, and (as in
    Redis, which propagates only what counts) leaves the journal empty; one
    that counts propagates. FLUSHALL and FLUSHDB propagate even when they
    removed nothing, as Redis forces them to."""
    hk, _ = pair
    c = RespConn("127.0.0.1", hk)
    assert c.cmd("DEBUG", "JOURNAL", "START") == "OK"
    failures = []
    try:
        for case in all_cases():
            c.cmd("FLUSHALL")
            c.cmd("SELECT", "0")
            for s in case["setup"]:
                c.cmd(*s)
            c.cmd("DEBUG", "JOURNAL", "READ")
            for cmd in case["run"]:
                _, delta = run_counted(c, cmd)
                recs = [r for r in parse_commands(c.cmd("DEBUG", "JOURNAL", "READ")) if r[0].upper() != b"SELECT"]
                # HotKV also propagates a history read's redeliveries (as
                # the XCLAIMs that record them, so a replay keeps the
                # delivery counts) though, as in Redis, they count nothing.
                forced = cmd[0].upper() in ("FLUSHALL", "FLUSHDB") or (cmd[0].upper() == "XREADGROUP" and
                                                                        cmd[-1] != ">")
                if delta == 0 and recs and not forced:
                    failures.append("%s: counted nothing but propagated %r" % (" ".join(cmd), recs))
                if delta > 0 and not recs:
                    failures.append("%s: counted %d but propagated nothing" % (" ".join(cmd), delta))
    finally:
        c.cmd("DEBUG", "JOURNAL", "STOP")
        c.close()
    assert not failures, "\n".join(failures)


# Writes that change nothing: Redis raises the events it raises for them
# anyway (LTRIM's "ltrim") and no others, as HotKV must.
NOOPS = [
    C("noop", [["SET", "b", "\x80"], ["BITFIELD", "f", "SET", "u8", "0", "7"], L3, S3, H3, Z5, ["PFADD", "p", "a"],
               ["SET", "str", "v"], list(X3[0])],
      [["SETBIT", "b", "0", "1"], ["BITFIELD", "f", "SET", "u8", "0", "7"], ["BITFIELD", "f", "INCRBY", "u8", "0", "0"],
       ["BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "255"], ["LTRIM", "l", "0", "-1"], ["LREM", "l", "0", "zz"],
       ["LINSERT", "l", "BEFORE", "zz", "x"], ["LPOP", "l", "0"], ["SADD", "s", "a", "b"], ["SREM", "s", "zz"],
       ["SMOVE", "s", "t", "zz"], ["SPOP", "s", "0"], ["HDEL", "h", "zz"], ["HSETNX", "h", "a", "9"], ["ZADD", "z", "1", "a"],
       ["ZADD", "z", "NX", "9", "a"], ["ZREM", "z", "zz"], ["ZREMRANGEBYSCORE", "z", "10", "20"], ["PFADD", "p", "a"],
       ["EXPIRE", "str", "10", "XX"], ["PERSIST", "str"], ["SETRANGE", "str", "0", ""], ["GETEX", "str"], ["XDEL", "x", "9-9"],
       ["XTRIM", "x", "MAXLEN", "5"], ["SINTERSTORE", "d", "nosuch"], ["DEL", "nosuch"]]),
]


def test_noop_writes_notify_as_redis(pair):
    hk, ref = pair
    for port in pair:
        notify_diff.set_flags(port, "KEA")
    lh, lr = notify_diff.Listener(hk), notify_diff.Listener(ref)
    try:
        for case in NOOPS:
            nc = dict(covers=[], setup=case["setup"], run=case["run"], expect=None, wrap=True)
            assert notify_diff.run_case(hk, lh, nc) == notify_diff.run_case(ref, lr, nc)
            assert all(d == 0 for _, d in plain_deltas(hk, case))
    finally:
        lh.close()
        lr.close()
        for port in pair:
            notify_diff.set_flags(port, "")


# ---- random command stream --------------------------------------------------------

SEED = int(os.environ.get("HOTKV_DIRTY_SEED", "20240607"))
STEPS = 8000


class Stream:
    """Random commands over a small keyspace of every type. Each command's
    effect is deterministic (no SPOP, no random reads that write), so both
    servers go through the same states."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.xid = {}

    def key(self, prefix, n=3):
        return "%s%d" % (prefix, self.r.randrange(n))

    def mem(self, n=6):
        return "m%d" % self.r.randrange(n)

    def mems(self, lo=1, hi=4, n=6):
        return [self.mem(n) for _ in range(self.r.randint(lo, hi))]

    def num(self, lo=-3, hi=10):
        return str(self.r.randint(lo, hi))

    def next_xid(self, k):
        self.xid[k] = self.xid.get(k, 0) + 1
        return "%d-1" % self.xid[k]

    def command(self):
        r = self.r
        kind = r.choice("sslltthhzzpxgk")
        if kind == "s":
            k = self.key("s")
            return r.choice([
                ["SET", k, self.num()], ["SET", k, self.num(), "NX"], ["SET", k, self.num(), "XX", "EX", "1000"],
                ["SETNX", k, "v"], ["GETSET", k, self.num()], ["APPEND", k, r.choice(["", "ab"])], ["INCR", k],
                ["INCRBY", k, self.num()], ["DECRBY", k, self.num()], ["SETRANGE", k, str(r.randrange(6)), r.choice(["", "xy"])],
                ["SETBIT", self.key("b"), str(r.randrange(40)), str(r.randrange(2))],
                ["BITFIELD", self.key("b"), "SET", "u4", str(r.randrange(4) * 4), str(r.randrange(3)), "INCRBY", "u4", "0",
                 str(r.randrange(2))],
                ["GETDEL", k], ["MSET", k, "1", self.key("s"), "2"], ["MSETNX", k, "1", self.key("s"), "2"],
                r.choice([["GETEX", k], ["GETEX", k, "PERSIST"], ["GETEX", k, "EX", "1000"]]),
                ["BITOP", "OR", self.key("b"), self.key("b"), self.key("b")]])
        if kind == "l":
            k = self.key("l")
            return r.choice([
                ["RPUSH", k] + self.mems(), ["LPUSH", k] + self.mems(), ["LPUSHX", k] + self.mems(),
                ["LPOP", k], ["RPOP", k, str(r.randrange(5))], ["LREM", k, self.num(-2, 2), self.mem()],
                ["LTRIM", k, self.num(-3, 3), self.num(-3, 5)], ["LSET", k, self.num(-2, 3), self.mem()],
                ["LINSERT", k, r.choice(["BEFORE", "AFTER"]), self.mem(), self.mem()],
                ["LMOVE", k, self.key("l"), r.choice(["LEFT", "RIGHT"]), r.choice(["LEFT", "RIGHT"])],
                ["LMPOP", "2", k, self.key("l"), "LEFT", "COUNT", str(r.randint(1, 4))],
                ["SORT", k, "ALPHA", "STORE", self.key("l")]])
        if kind == "t":
            k = self.key("t")
            return r.choice([
                ["SADD", k] + self.mems(), ["SREM", k] + self.mems(), ["SMOVE", k, self.key("t"), self.mem()],
                ["SINTERSTORE", self.key("t"), k, self.key("t")], ["SUNIONSTORE", self.key("t"), k, self.key("t")],
                ["SDIFFSTORE", self.key("t"), k, self.key("t")]])
        if kind == "h":
            k = self.key("h")
            pairs = []
            for m in self.mems():
                pairs += [m, self.num()]
            return r.choice([
                ["HSET", k] + pairs, ["HSETNX", k, self.mem(), "1"], ["HDEL", k] + self.mems(),
                ["HINCRBY", k, self.mem(), self.num()], ["HINCRBYFLOAT", k, self.mem(), "0.5"]])
        if kind == "z":
            k = self.key("z")
            pairs = []
            for m in self.mems():
                pairs += [self.num(0, 5), m]
            flags = r.choice([[], ["NX"], ["XX"], ["GT"], ["LT"], ["CH"], ["XX", "CH"]])
            return r.choice([
                ["ZADD", k] + flags + pairs, ["ZINCRBY", k, self.num(0, 2), self.mem()], ["ZREM", k] + self.mems(),
                ["ZREMRANGEBYSCORE", k, self.num(0, 3), self.num(2, 6)], ["ZREMRANGEBYRANK", k, "0", self.num(-2, 2)],
                ["ZPOPMIN", k, str(r.randint(1, 3))], ["ZPOPMAX", k],
                ["ZUNIONSTORE", self.key("z"), "2", k, self.key("z")], ["ZINTERSTORE", self.key("z"), "2", k, self.key("z")],
                ["ZRANGESTORE", self.key("z"), k, "0", self.num(-1, 3)]])
        if kind == "p":
            k = self.key("p", 2)
            return r.choice([["PFADD", k] + self.mems(0, 3, 40), ["PFMERGE", k, self.key("p", 2)], ["PFCOUNT", k]])
        if kind == "x":
            k = self.key("x", 2)
            top = self.xid.get(k, 0)
            return r.choice([
                ["XADD", k, self.next_xid(k), "f", "v"], ["XADD", k, "MAXLEN", str(r.randint(1, 5)), self.next_xid(k), "f", "v"],
                ["XDEL", k] + ["%d-1" % r.randint(1, top + 1) for _ in range(r.randint(1, 3))],
                ["XTRIM", k, "MAXLEN", str(r.randint(0, 6))]])
        if kind == "g":
            return ["GEOADD", "geo", str(r.randint(1, 5)), str(r.randint(1, 5)), self.mem()]
        return r.choice([
            ["DEL", self.key("s"), self.key("l"), self.key("z")], ["EXPIRE", self.key(r.choice("slth")), "1000"],
            ["PERSIST", self.key(r.choice("slth"))], ["RENAME", self.key("s"), self.key("s")],
            ["COPY", self.key("h"), self.key("h"), "REPLACE"], ["EXISTS", self.key("s")]])


def test_random_stream_matches_redis(pair):
    hk, ref = pair
    conns = []
    for port in (hk, ref):
        c = RespConn("127.0.0.1", port)
        assert c.cmd("FLUSHALL") == "OK"
        conns.append(c)
    gen = Stream(SEED)
    totals = [0, 0]
    try:
        for step in range(STEPS):
            cmd = gen.command()
            deltas = []
            for i, c in enumerate(conns):
                _, d = run_counted(c, cmd)
                totals[i] += d
                deltas.append(d)
            assert deltas[0] == deltas[1], "seed %d step %d: %s: redis %d, hotkv %d" % (
                SEED, step, " ".join(cmd), deltas[1], deltas[0])
            if step % 500 == 499:
                assert conns[0].cmd("DBSIZE") == conns[1].cmd("DBSIZE"), "seed %d step %d" % (SEED, step)
        assert totals[0] == totals[1]
    finally:
        for c in conns:
            c.close()
