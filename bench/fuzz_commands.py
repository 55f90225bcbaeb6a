#!/usr/bin/python3
"""Adversarial command soak for hotkv-server.

Starts a server (ideally the ASan build), drives it from several threads with
random but seeded commands aimed at edge cases (SORT, hash field expiration,
SLOWLOG/LATENCY, MONITOR, CLIENT, CONFIG SET, DEBUG, COMMAND, compressed
lists, KEYS/SCAN patterns), and fails when the server crashes, hangs, prints a
sanitizer report, sends a malformed reply or stops answering PING.

    /usr/bin/python3 bench/fuzz_commands.py --server-bin build-address/hotkv-server \
        --seconds 180 --threads 4 --seed 1

Exit status 0 when nothing was found; 1 otherwise (the report names the seed,
the thread and the last commands each thread sent).
"""

import argparse
import collections
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

# ---------------------------------------------------------------- RESP client

class ProtocolError(Exception):
    pass

class Conn:
    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, int):
                a = str(a).encode()
            elif isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def send_raw(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, tail = self.buf[:n], self.buf[n:n + 2]
        if tail != b"\r\n":
            raise ProtocolError("bulk not terminated by CRLF")
        self.buf = self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        if not line:
            raise ProtocolError("empty reply line")
        t, rest = line[:1], line[1:]
        if t == b"+":
            return ("status", rest)
        if t == b"-":
            return ("error", rest)
        if t == b":":
            return ("int", int(rest))
        if t == b"$":
            n = int(rest)
            if n == -1:
                return None
            if n < 0:
                raise ProtocolError("bad bulk length %r" % rest)
            return self._exact(n)
        if t == b"*":
            n = int(rest)
            if n == -1:
                return None
            if n < 0:
                raise ProtocolError("bad array length %r" % rest)
            return [self.read() for _ in range(n)]
        if t in (b"%",):
            n = int(rest)
            return dict_pairs([self.read() for _ in range(2 * n)])
        if t == b"~":
            n = int(rest)
            return [self.read() for _ in range(n)]
        if t == b">":
            # out-of-band (tracking invalidation, DEBUG PROTOCOL push): skip it
            [self.read() for _ in range(int(rest))]
            return self.read()
        if t == b"_":
            return None
        if t == b"#":
            if rest not in (b"t", b"f"):
                raise ProtocolError("bad boolean %r" % rest)
            return rest == b"t"
        if t == b",":
            float(rest.replace(b"inf", b"1e999"))
            return ("double", rest)
        if t == b"(":
            int(rest)
            return ("big", rest)
        if t in (b"=", b"!"):
            return self._exact(int(rest))
        if t == b"|":
            n = int(rest)
            [self.read() for _ in range(2 * n)]
            return self.read()
        raise ProtocolError("unknown reply type byte %r in %r" % (t, line[:80]))

    def call(self, *args):
        self.send(args)
        return self.read()

def dict_pairs(items):
    return list(zip(items[0::2], items[1::2]))

def is_err(rep):
    return isinstance(rep, tuple) and rep[0] == "error"

# ---------------------------------------------------------------- generators

INTS = [0, 1, -1, 2, 3, 5, 10, 100, -100, 2**31 - 1, 2**31, -2**31, 2**32,
        2**53, 2**62, 2**63 - 1, -2**63, 2**63, 2**64, 2**64 - 1, -2**63 - 1,
        10**18, 10**19, "99999999999999999999999", "-0", "+1", "1.5", "abc",
        "", " 1", "1 ", "0x10", "1e3", "nan", "inf", "-inf"]

class Gen:
    def __init__(self, rng, prefix):
        self.rng = rng
        self.p = prefix   # the thread's own keys; shared keys use "s:"

    def num(self):
        r = self.rng
        if r.random() < 0.6:
            return r.choice(INTS)
        return r.randint(-1000, 100000)

    def small(self):
        return self.rng.randint(-3, 20)

    def key(self, kind=None):
        r = self.rng
        base = r.choice(["s:", self.p]) + (kind or r.choice("lshzxk")) + str(r.randint(0, 7))
        if r.random() < 0.05:
            base = "{tag}" + base
        return base

    def field(self):
        return "f%d" % self.rng.randint(0, 9)

    def val(self):
        r = self.rng
        c = r.random()
        if c < 0.4:
            return str(r.randint(-50, 50))
        if c < 0.6:
            return "%g" % r.uniform(-100, 100)
        if c < 0.7:
            return "x" * r.choice([0, 1, 60, 64, 65, 300, 5000])
        if c < 0.8:
            return r.choice(["", "nan", "inf", "-inf", "1e400", "a*b", "->", "#"])
        return "v%d" % r.randint(0, 30)

    def pattern(self):
        r = self.rng
        pats = ["*", "?", "[", "[a-", "[^", "\\", "*\\", "[]]", "[!a]", "a[b-a]",
                "*" * r.randint(1, 200) + "x", "?" * 50, "*[" * 30, "[a-z" * 20,
                "s:*", self.p + "*", "{tag}*", "*1", "[\\", "\\\\*", "[^]]*"]
        return r.choice(pats)

    # -- families --------------------------------------------------------

    def sort(self):
        r = self.rng
        cmd = [r.choice(["SORT", "SORT_RO", "sort"]), self.key(r.choice("lszl"))]
        for _ in range(r.randint(0, 6)):
            c = r.randint(0, 7)
            if c == 0:
                cmd += ["BY", r.choice(["nosort", "w_*", "s:h*->f1", "w_*->", "*->f", "->",
                                        "s:k*", self.p + "h*->f2", "x", "*", "**", "*->*"])]
            elif c == 1:
                cmd += ["LIMIT", self.num(), self.num()]
            elif c == 2:
                cmd += ["GET", r.choice(["#", "*", "s:k*", "s:h*->f1", "*->", "->f", "#->f",
                                         self.p + "k*", "s:x*->", "s:l*", "s:s*"])]
            elif c == 3:
                cmd.append(r.choice(["ASC", "DESC", "ALPHA", "alpha"]))
            elif c == 4 and cmd[0] != "SORT_RO":
                cmd += ["STORE", r.choice([cmd[1], self.key(), "s:k1", "s:h1"])]
            elif c == 5:
                cmd.append(r.choice(["LIMIT", "BY", "GET", "STORE", "bogus"]))
            elif c == 6:
                cmd += ["LIMIT", r.choice([0, -1, 2**63 - 1, -2**63]),
                        r.choice([-1, 0, 2**63 - 1, 2**62, "x"])]
            else:
                pass
        return cmd

    def sort_setup(self):
        r = self.rng
        k = self.key(r.choice("ls"))
        vals = [self.val() for _ in range(r.randint(1, 12))]
        if r.random() < 0.3:
            return [r.choice(["SET", "HSET"]), "w_" + r.choice(vals)] + \
                   ([self.val()] if r.random() < 0.5 else ["f", self.val()])
        return [("RPUSH" if "l" in k[-2:] else "SADD"), k] + vals

    def hfe(self):
        r = self.rng
        k = self.key("h")
        nf = r.choice([1, 2, 3, 0, -1, 5, 2**31, 2**63, "x"])
        fields = [self.field() for _ in range(r.randint(0, 4))]
        if r.random() < 0.2 and fields:
            fields.append(fields[0])
        tail = (["FIELDS", nf] if r.random() < 0.9 else [nf]) + fields
        if r.random() < 0.1:
            tail = fields
        t = r.choice([1, 2, 0, -1, 100, 1000, 2**31, 2**32, 2**47, 2**48, 2**62, 2**63 - 1,
                      -2**63, 2**63, 10**15, int(time.time()) + 2, int(time.time() * 1000) + 300,
                      "x", "1.5"])
        c = r.randint(0, 13)
        if c < 4:
            name = ["HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"][c]
            flags = [r.choice(["NX", "XX", "GT", "LT", "nx", "BAD"])] if r.random() < 0.3 else []
            if r.random() < 0.05:
                flags *= 2
            return [name, k, t] + flags + tail
        if c < 8:
            name = ["HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME"][c - 4]
            return [name, k] + tail
        if c == 8:
            return ["HPERSIST", k] + tail
        if c == 9:
            return ["HGETDEL", k] + tail
        if c == 10:
            opt = r.choice([["EX", t], ["PX", t], ["EXAT", t], ["PXAT", t], ["PERSIST"], [],
                            ["EX"], ["EX", 1, "PX", 1]])
            return ["HGETEX", k] + opt + tail
        if c == 11:
            opt = r.choice([["FNX"], ["FXX"], [], ["FNX", "FXX"]]) + \
                  r.choice([["EX", t], ["PX", t], ["KEEPTTL"], ["EXAT", t], [], ["PX", 1, "KEEPTTL"]])
            flds = []
            for f in fields:
                flds += [f, self.val()]
            if r.random() < 0.1 and flds:
                flds.pop()
            return ["HSETEX", k] + opt + ["FIELDS", nf] + flds
        if c == 12:
            flds = []
            for _ in range(r.randint(1, 6)):
                flds += [self.field(), self.val()]
            return ["HSET", k] + flds
        return ["HPEXPIRE", k, r.randint(1, 40), "FIELDS", len(fields)] + fields

    def keyops(self):
        r = self.rng
        a, b = self.key(), self.key()
        c = r.randint(0, 12)
        return [
            ["RENAME", a, b], ["RENAMENX", a, b], ["MOVE", a, r.choice([0, 1, 15, 16, -1])],
            ["COPY", a, b] + r.choice([[], ["REPLACE"], ["DB", 1], ["DB", 1, "REPLACE"], ["DB", 99]]),
            ["UNLINK", a, b], ["DEL", a], ["HDEL", a, self.field(), self.field()],
            ["TYPE", a], ["OBJECT", "ENCODING", a], ["DUMP", a], ["HGETALL", a],
            ["PEXPIRE", a, r.randint(1, 50)], ["TTL", a],
        ][c]

    def rare(self):
        r = self.rng
        c = r.randint(0, 9)
        if c == 0:
            return ["SWAPDB", r.choice([0, 1]), r.choice([0, 1, 2])]
        if c == 1:
            return ["FLUSHALL", "ASYNC"] if r.random() < 0.5 else ["FLUSHDB", r.choice(["ASYNC", "SYNC"])]
        if c == 2:
            return ["DEBUG", "SET-ACTIVE-EXPIRE", r.choice([0, 1, 2, "x"])]
        if c == 3:
            return ["SELECT", r.choice([0, 1])]
        if c == 4:
            return ["DEBUG", "SLEEP", r.choice([0, "0.01", "-1", "x"])]
        return ["PING"]

    def slowlog(self):
        r = self.rng
        c = r.randint(0, 10)
        if c == 0:
            return ["SLOWLOG", "GET"] + r.choice([[], [self.num()], ["1", "2"]])
        if c == 1:
            return ["SLOWLOG", r.choice(["LEN", "RESET", "HELP", "len"])] + r.choice([[], ["x"]])
        if c == 2:
            return ["SLOWLOG", r.choice(["", "BOGUS"])]
        if c == 3:
            return ["CONFIG", "SET", "slowlog-max-len", r.choice([0, 1, 2, 128, 10**6, -1, 2**31, 2**63, "x"])]
        if c == 4:
            return ["CONFIG", "SET", "slowlog-log-slower-than", r.choice([0, -1, 1, 10**9, 2**63, "x", -2])]
        if c == 5:
            return ["LATENCY", r.choice(["LATEST", "RESET", "HELP", "DOCTOR", "GRAPH", "HISTORY",
                                         "HISTOGRAM", "BOGUS"])] + \
                   [r.choice(["command", "get", "set", "fast-command", "x", "", "*"]) for _ in range(r.randint(0, 3))]
        if c == 6:
            v = r.choice(["50 99 99.9", "", "0", "100", "100.1", "-1", "abc", "1 2 3 4 5 6 7 8 9 10 11 12",
                          "99.9999999", "1e2", "nan", "inf", " ", "50  99", "0.0001"])
            return ["CONFIG", "SET", "latency-tracking-info-percentiles", v]
        if c == 7:
            return ["INFO", r.choice(["latencystats", "commandstats", "all", "everything", "errorstats"])]
        if c == 8:
            return ["CONFIG", "SET", "latency-monitor-threshold", r.choice([0, 1, -1, 2**63, "x"])]
        if c == 9:
            return ["CONFIG", "SET", "latency-tracking", r.choice(["yes", "no", "maybe"])]
        return ["CONFIG", "RESETSTAT"]

    def client(self):
        r = self.rng
        subs = ["ID", "INFO", "LIST", "GETNAME", "SETNAME", "KILL", "PAUSE", "UNPAUSE", "REPLY",
                "NO-EVICT", "NO-TOUCH", "TRACKING", "TRACKINGINFO", "GETREDIR", "CACHING",
                "UNBLOCK", "SETINFO", "HELP", "BOGUS"]
        s = r.choice(subs)
        extra = [r.choice(["ON", "OFF", "SKIP", "x", "", "TYPE", "normal", "pubsub", "master",
                           "ID", "0", "-1", "ADDR", "1.2.3.4:5", "LADDR", "USER", "default",
                           "SKIPME", "yes", "no", "MAXAGE", "LIB-NAME", "LIB-VER", "a b", "ñ",
                           "PREFIX", "BCAST", "REDIRECT", "OPTIN", "OPTOUT", "NOLOOP", "ERROR",
                           "TIMEOUT", "WRITE", "ALL", str(r.randint(0, 50))])
                 for _ in range(r.randint(0, 5))]
        if s == "PAUSE":
            extra = [r.choice([0, 1, 5, -1, "x", 2**63])] + (["WRITE"] if r.random() < 0.5 else [])
        if s == "REPLY" and r.random() < 0.7:
            extra = ["ON"]
        if s == "KILL" and "SKIPME" not in extra and r.random() < 0.8:
            extra = ["ID", r.randint(10**6, 10**7)]
        return ["CLIENT", s] + extra

    def config(self):
        r = self.rng
        params = [("maxmemory-policy", ["noeviction", "allkeys-lru", "bogus"]),
                  ("hz", [1, 10, 500, 0, -1, 1000]),
                  ("list-compress-depth", [0, 1, 2, 3, -1, 2**31]),
                  ("list-max-listpack-size", [-1, -2, -5, -6, 0, 1, 2, 4, 128, 2**31]),
                  ("hash-max-listpack-entries", [0, 1, 2, 128, -1]),
                  ("hash-max-listpack-value", [0, 1, 64, -1]),
                  ("set-max-intset-entries", [0, 1, 512]),
                  ("set-max-listpack-entries", [0, 1, 128]),
                  ("zset-max-listpack-entries", [0, 1, 128]),
                  ("slowlog-max-len", [0, 1, 5000]),
                  ("maxclients", [64, 10000, 0, -1]),
                  ("timeout", [0, 1, -1]),
                  ("bogus-param", [1]),
                  ("port", [0, 1]),
                  ("lazyfree-lazy-user-del", ["yes", "no", "x"]),
                  ("active-expire-effort", [1, 10, 0, 11])]
        args = ["CONFIG", "SET"]
        for _ in range(r.randint(1, 4)):
            name, vals = r.choice(params)
            if name in ("maxclients", "timeout", "port") and r.random() < 0.9:
                continue
            args += [name, r.choice(vals)]
        if len(args) == 2:
            args += ["hz", 10]
        if r.random() < 0.1:
            args.pop()
        if r.random() < 0.15:
            return ["CONFIG", "GET", r.choice(["*", "*max*", "[", "list-*", "slowlog*", "latency*"])]
        return args

    def debug(self):
        r = self.rng
        c = r.randint(0, 9)
        if c == 0:
            return ["DEBUG", "PROTOCOL", r.choice(["string", "integer", "double", "bignum", "null",
                                                    "array", "set", "map", "attrib", "push",
                                                    "verbatim", "true", "false", "bogus"])]
        if c in (1, 2):
            return ["DEBUG", "OBJECT", self.key()]
        if c == 3:
            return ["DEBUG", "LISTPACK", self.key()]
        if c == 4:
            return ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", r.choice([0, 1, -1, 100, "1k", "1g", "4gb",
                                                                       2**31, 2**63, "x", "1b", "100mb"])]
        if c == 5:
            return ["DEBUG", "STRINGMATCH-LEN"] + r.choice([[], [self.pattern()], ["a", "b"]])
        if c == 6:
            return ["DEBUG", "SLEEP", 0]
        if c == 7:
            return ["DEBUG", r.choice(["CHANGE-REPL-ID", "JMAP", "BOGUS", "HELP", "DIGEST",
                                       "DIGEST-VALUE", "LOG", "QUICKLIST", "SET-ACTIVE-EXPIRE"])] + \
                   [self.key() for _ in range(r.randint(0, 2))]
        if c == 8:
            return ["OBJECT", r.choice(["ENCODING", "FREQ", "IDLETIME", "REFCOUNT", "HELP", "X"]), self.key()]
        return ["DEBUG", "DIGEST-VALUE", self.key(), self.key()]

    def command(self, names):
        r = self.rng
        c = r.randint(0, 4)
        name = r.choice(names) if names else "get"
        garbage = [r.choice([self.key(), "FIELDS", "1", "-1", "0", "STORE", "BY", "x", "", "->",
                             "NUMKEYS", "2", "99999999999"]) for _ in range(r.randint(0, 7))]
        if c == 0:
            return ["COMMAND", "DOCS"] + [name for _ in range(r.randint(0, 2))] + (["nosuch"] if r.random() < 0.2 else [])
        if c == 1:
            return ["COMMAND", "GETKEYS", name] + garbage
        if c == 2:
            return ["COMMAND", "GETKEYSANDFLAGS", name] + garbage
        if c == 3:
            return ["COMMAND", r.choice(["INFO", "COUNT", "LIST", "HELP", "BOGUS"])] + \
                   r.choice([[], [name], ["FILTERBY", "PATTERN", self.pattern()],
                             ["FILTERBY", "ACLCAT", "x"], ["FILTERBY"]])
        # run the command itself with garbage
        if name.lower() in ("shutdown", "debug", "monitor", "subscribe", "psubscribe", "ssubscribe",
                            "quit", "reset", "client", "config", "flushall", "flushdb", "sync",
                            "psync", "replicaof", "slaveof", "hello", "auth", "failover", "save",
                            "bgsave", "bgrewriteaof", "multi", "exec", "watch", "blpop", "brpop",
                            "blmove", "brpoplpush", "bzpopmin", "bzpopmax", "blmpop", "bzmpop",
                            "xread", "xreadgroup", "wait", "waitaof", "swapdb", "select",
                            "unsubscribe", "punsubscribe", "sunsubscribe", "eval", "evalsha",
                            "script", "function", "fcall", "fcall_ro", "cluster", "readonly",
                            "asking", "lastsave", "restore", "migrate", "module", "acl", "latency",
                            "slowlog", "monitor", "discard", "keys", "scan"):
            return ["PING"]
        return [name] + garbage

    def lists(self):
        r = self.rng
        k = self.key("l")
        c = r.randint(0, 12)
        if c == 0:
            return [r.choice(["LPUSH", "RPUSH"]), k] + [self.val() for _ in range(r.randint(1, 30))]
        if c == 1:
            return ["LINSERT", k, r.choice(["BEFORE", "AFTER", "x"]), self.val(), self.val()]
        if c == 2:
            return ["LSET", k, self.num() if r.random() < 0.3 else r.randint(-40, 40), self.val()]
        if c == 3:
            return ["LREM", k, r.randint(-5, 5), self.val()]
        if c == 4:
            return ["LTRIM", k, r.randint(-50, 50), r.randint(-50, 50)]
        if c == 5:
            return ["LMOVE", k, self.key("l"), r.choice(["LEFT", "RIGHT"]), r.choice(["LEFT", "RIGHT", "UP"])]
        if c == 6:
            opts = []
            for _ in range(r.randint(0, 3)):
                opts += [r.choice(["RANK", "COUNT", "MAXLEN"]), r.choice([0, 1, -1, 2, -2**63, 2**63 - 1, "x"])]
            return ["LPOS", k, self.val()] + opts
        if c == 7:
            return ["LRANGE", k, r.randint(-60, 60), r.choice([r.randint(-60, 60), 2**63 - 1, -2**63])]
        if c == 8:
            return ["CONFIG", "SET", "list-compress-depth", r.choice([0, 1, 2, 3])]
        if c == 9:
            return ["LINDEX", k, r.randint(-40, 40)]
        if c == 10:
            return [r.choice(["LPOP", "RPOP"]), k] + r.choice([[], [r.randint(0, 10)], [-1]])
        if c == 11:
            return ["LMPOP", 2, k, self.key("l"), r.choice(["LEFT", "RIGHT"]), "COUNT", r.randint(1, 5)]
        return ["CONFIG", "SET", "list-max-listpack-size", r.choice([-1, -2, 1, 2, 3, 4])]

    def scans(self):
        r = self.rng
        c = r.randint(0, 4)
        if c == 0:
            return ["KEYS", self.pattern()]
        if c == 1:
            return ["SCAN", r.choice([0, 1, 2**63, 2**64 - 1, 2**64, -1, "x"]), "MATCH", self.pattern(),
                    "COUNT", r.choice([1, 10, 1000, 0, -1])] + r.choice([[], ["TYPE", "hash"], ["TYPE", "x"]])
        if c == 2:
            return [r.choice(["HSCAN", "SSCAN", "ZSCAN"]), self.key(), 0, "MATCH", self.pattern(),
                    "COUNT", r.choice([1, 100])] + r.choice([[], ["NOVALUES"]])
        if c == 3:
            return ["ZADD", self.key("z")] + sum([[str(r.randint(-5, 5)), self.val()] for _ in range(r.randint(1, 8))], [])
        return ["SET", self.key("k"), self.val()]

    def any(self, names):
        r = self.rng
        fam = r.choices(
            [self.sort, self.sort_setup, self.hfe, self.keyops, self.rare, self.slowlog,
             self.client, self.config, self.debug, lambda: self.command(names), self.lists,
             self.scans],
            weights=[14, 8, 20, 8, 1, 5, 4, 3, 5, 6, 14, 6])[0]
        return fam()

# ---------------------------------------------------------------- checks

def check_reply(cmd, rep):
    """Replies whose type is fixed regardless of arguments."""
    if is_err(rep):
        e = rep[1]
        if not e or b"\r" in e or b"\n" in e:
            return "error reply with CR/LF or empty"
        return None
    name = str(cmd[0]).upper()
    sub = str(cmd[1]).upper() if len(cmd) > 1 else ""
    int_cmds = {"HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT", "HTTL", "HPTTL",
                "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"}
    if name in int_cmds:
        if rep is None:
            return None  # missing key may be an empty/nil reply on some versions
        if not isinstance(rep, list) or any(not (isinstance(x, tuple) and x[0] == "int") for x in rep):
            return "expected array of integers, got %r" % (rep,)
    if name == "PING" and len(cmd) == 1 and rep != ("status", b"PONG"):
        return "PING answered %r" % (rep,)
    if name in ("SORT", "SORT_RO") and not (isinstance(rep, list) or (isinstance(rep, tuple) and rep[0] == "int")):
        return "SORT answered %r" % (rep,)
    if name == "SLOWLOG" and sub == "LEN" and len(cmd) == 2 and not (isinstance(rep, tuple) and rep[0] == "int"):
        return "SLOWLOG LEN answered %r" % (rep,)
    if name == "KEYS" and not isinstance(rep, list):
        return "KEYS answered %r" % (rep,)
    return None

# ---------------------------------------------------------------- workers

class Shared:
    def __init__(self, args):
        self.args = args
        self.stop = threading.Event()
        self.failures = []
        self.lock = threading.Lock()
        self.count = 0
        self.names = []

    def fail(self, msg):
        with self.lock:
            self.failures.append(msg)
        self.stop.set()

def worker(sh, idx, seed):
    rng = random.Random(seed * 1000 + idx)
    gen = Gen(rng, "t%d:" % idx)
    hist = collections.deque(maxlen=12)
    conn = None
    try:
        conn = Conn(sh.args.port, timeout=sh.args.reply_timeout)

        n = 0
        while not sh.stop.is_set():
            cmd = gen.any(sh.names)
            if rng.random() < 0.01:
                proto = rng.choice([2, 3])
                cmd = ["HELLO", proto]

            hist.append(cmd)
            try:
                rep = conn.call(*cmd)
            except socket.timeout:
                sh.fail("thread %d: no reply within %ss to %r; last: %r" %
                        (idx, sh.args.reply_timeout, cmd, list(hist)))
                return
            except (ConnectionError, OSError) as e:
                # Another thread's CLIENT KILL (or maxclients) may close us:
                # carry on if the server still answers.
                conn.close()
                conn = alive_or_fail(sh, "thread %d after %r (last: %r)" % (idx, cmd, list(hist)), e)
                if conn is None:
                    return
                continue
            except (ProtocolError, ValueError) as e:
                sh.fail("thread %d: malformed reply (%s) to %r; last: %r" % (idx, e, cmd, list(hist)))
                return
            bad = check_reply(cmd, rep)
            if bad:
                sh.fail("thread %d: %s for %r; last: %r" % (idx, bad, cmd, list(hist)))
                return
            # CLIENT REPLY OFF/SKIP: restore replies
            if str(cmd[0]).upper() == "CLIENT" and len(cmd) > 2 and str(cmd[1]).upper() == "REPLY" \
                    and str(cmd[2]).upper() in ("OFF", "SKIP"):
                conn.close()
                conn = Conn(sh.args.port, timeout=sh.args.reply_timeout)
            if str(cmd[0]).upper() == "CLIENT" and len(cmd) > 1 and str(cmd[1]).upper() == "PAUSE":
                conn.call("CLIENT", "UNPAUSE")
            n += 1
            if n % 500 == 0:
                conn.call("CLIENT", "UNPAUSE")
                conn.call("CONFIG", "SET", "maxclients", "10000")
        with sh.lock:
            sh.count += n
    except Exception as e:  # noqa: BLE001
        sh.fail("thread %d: %s: %s; last: %r" % (idx, type(e).__name__, e, list(hist)))
    finally:
        if conn:
            conn.close()

def monitors(sh, seed):
    """Monitors that read, one that stops reading, ones killed or RESET mid-stream."""
    rng = random.Random(seed + 77)
    while not sh.stop.is_set():
        try:
            ms = []
            for _ in range(rng.randint(1, 4)):
                c = Conn(sh.args.port, timeout=5)
                rep = c.call("MONITOR")
                if is_err(rep) and rep[1].startswith(b"ERR max number of clients"):
                    c.close()
                    continue
                if rep != ("status", b"OK"):
                    sh.fail("MONITOR answered %r" % (rep,))
                    return
                ms.append(c)
            stall = Conn(sh.args.port, timeout=5)
            stall.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stall.call("MONITOR")          # never read again
            t_end = time.time() + rng.uniform(0.5, 3)
            while time.time() < t_end and not sh.stop.is_set():
                for c in ms:
                    c.sock.settimeout(0.05)
                    try:
                        c._fill()
                        c.buf = c.buf[-4096:]
                    except socket.timeout:
                        pass
            ctl = Conn(sh.args.port, timeout=5)
            for c in ms:
                act = rng.randint(0, 2)
                if act == 0:
                    c.sock.settimeout(5)
                    c.buf = b""
                    c.send(["RESET"])
                    # drain until +RESET
                    end = time.time() + 5
                    while b"+RESET\r\n" not in c.buf:
                        if time.time() > end:
                            sh.fail("RESET on a monitor never answered")
                            return
                        c._fill()
                    c.buf = c.buf[c.buf.index(b"+RESET\r\n") + 8:]
                    if c.call("PING") != ("status", b"PONG"):
                        sh.fail("monitor after RESET does not answer PING")
                        return
                elif act == 1:
                    if rng.random() < 0.3:
                        ctl.call("CLIENT", "KILL", "TYPE", "monitor", "SKIPME", "yes")
                    c.close()
                else:
                    c.close()
            ctl.call("CLIENT", "KILL", "TYPE", "monitor")
            ctl.close()
            stall.close()
        except (ConnectionError, OSError, socket.timeout) as e:
            if sh.stop.is_set():
                return
            p = alive_or_fail(sh, "monitors", e)
            if p is None:
                return
            p.close()

def alive_or_fail(sh, who, err):
    """After a lost connection (another thread's CLIENT KILL): a new one,
    or None (and a failure) when the server no longer answers."""
    for _ in range(20):
        try:
            c = Conn(sh.args.port, timeout=sh.args.reply_timeout)
            if c.call("PING") == ("status", b"PONG"):
                return c
            c.close()
        except (ConnectionError, OSError):
            pass
        time.sleep(0.25)
    if not sh.stop.is_set():
        sh.fail("%s: connection lost (%s) and the server no longer answers" % (who, err))
    return None


def slowlog_storm(sh, seed):
    rng = random.Random(seed + 99)
    c = Conn(sh.args.port, timeout=sh.args.reply_timeout)
    try:
        while not sh.stop.is_set():
            try:
                slowlog_round(sh, c, rng)
            except (ConnectionError, BrokenPipeError) as e:
                c.close()
                c = alive_or_fail(sh, "slowlog storm", e)
                if c is None:
                    return
    except Exception as e:  # noqa: BLE001
        if not sh.stop.is_set():
            sh.fail("slowlog storm: %s: %s" % (type(e).__name__, e))
    finally:
        if c:
            c.close()


def slowlog_round(sh, c, rng):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", 0)
    c.call("CONFIG", "SET", "slowlog-max-len", rng.choice([0, 1, 3, 1000, 100000]))
    for _ in range(rng.randint(1, 30)):
        rep = c.call("SLOWLOG", "GET", rng.choice([-1, 0, 1, 5, 1000]))
        if not isinstance(rep, list):
            sh.fail("SLOWLOG GET answered %r" % (rep,))
            return
    time.sleep(0.01)


def hfe_active(sh, seed):
    """Many short field TTLs so the active cycle runs beside the workers."""
    rng = random.Random(seed + 5)
    c = Conn(sh.args.port, timeout=sh.args.reply_timeout)
    try:
        while not sh.stop.is_set():
            try:
                hfe_round(c, rng)
            except (ConnectionError, BrokenPipeError) as e:
                c.close()
                c = alive_or_fail(sh, "hfe active", e)
                if c is None:
                    return
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    except Exception as e:  # noqa: BLE001
        if not sh.stop.is_set():
            sh.fail("hfe active: %s: %s" % (type(e).__name__, e))
    finally:
        if c:
            c.close()


def hfe_round(c, rng):
    k = "s:h%d" % rng.randint(0, 7)
    flds = []
    for i in range(rng.randint(1, 40)):
        flds += ["f%d" % i, "v"]
    c.call("HSET", k, *flds)
    n = len(flds) // 2
    c.call("HPEXPIRE", k, rng.randint(1, 30), "FIELDS", n, *["f%d" % i for i in range(n)])
    if rng.random() < 0.05:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", rng.choice([0, 1]))
    time.sleep(0.005)


def raw_garbage(sh, seed):
    """Malformed frames on throw-away connections."""
    rng = random.Random(seed + 3)
    frames = [b"*-1\r\n", b"*3\r\n$4\r\nSORT\r\n", b"$-1\r\n", b"*1\r\n$-5\r\n",
              b"*99999999999\r\n", b"*1\r\n$99999999999\r\n", b"\r\n\r\n", b"PING\r\n",
              b"SORT s:l1 LIMIT 0 -1\r\n", b"\"unterminated\r\n", b"*2\r\n$4\r\nPING\r\n:1\r\n",
              b"HEXPIRE s:h1 10 FIELDS 1 f1\r\n", b"*0\r\n"]
    while not sh.stop.is_set():
        try:
            c = Conn(sh.args.port, timeout=2)
            c.send_raw(rng.choice(frames) * rng.randint(1, 3))
            try:
                c.sock.recv(4096)
            except socket.timeout:
                pass
            c.close()
        except OSError:
            pass
        time.sleep(0.02)

def list_model_phase(port, seed, ops):
    """Single client, before the chaos: random list edits under changing
    compression depth, node size and packed threshold, each reply checked
    against a Python list. Returns a failure text or None."""
    rng = random.Random(seed + 11)
    c = Conn(port)
    model = []
    key = "model:list"
    c.call("DEL", key)
    vals = ["a", "b", "1", "-7", "x" * 70, "y" * 300, "", "z" * 5000, "12345678901234567890"]
    hist = collections.deque(maxlen=10)

    def norm(x):
        return x if isinstance(x, list) else [x]

    try:
        for _ in range(ops):
            op = rng.choices(range(14), weights=[1, 1, 1, 8, 8, 6, 5, 4, 1, 3, 3, 3, 3, 2])[0]
            v = rng.choice(vals)
            n = len(model)
            if op == 0:
                cmd, want = ["CONFIG", "SET", "list-compress-depth", rng.choice([0, 1, 2, 3])], ("status", b"OK")
            elif op == 1:
                cmd = ["CONFIG", "SET", "list-max-listpack-size", rng.choice([-1, -2, 1, 2, 3, 5])]
                want = ("status", b"OK")
            elif op == 2:
                cmd = ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", rng.choice([2, 10, 100, 1000, "1k", 1073741824])]
                want = ("status", b"OK")
            elif op in (3, 4):
                items = [rng.choice(vals) for _ in range(rng.randint(1, 6))]
                if op == 3:
                    cmd = ["LPUSH", key] + items
                    model[:0] = list(reversed(items))
                else:
                    cmd = ["RPUSH", key] + items
                    model.extend(items)
                want = ("int", len(model))
            elif op == 5:
                pivot = rng.choice(model) if model and rng.random() < 0.8 else rng.choice(vals)
                where = rng.choice(["BEFORE", "AFTER"])
                cmd = ["LINSERT", key, where, pivot, v]
                if not model:
                    want = ("int", 0)
                elif pivot in model:
                    i = model.index(pivot) + (where == "AFTER")
                    model.insert(i, v)
                    want = ("int", len(model))
                else:
                    want = ("int", -1)
            elif op == 6:
                i = rng.randint(-n - 2, n + 1)
                cmd = ["LSET", key, i, v]
                if not model:
                    want = ("error", b"ERR no such key")
                elif -n <= i < n:
                    model[i] = v
                    want = ("status", b"OK")
                else:
                    want = ("error", b"ERR index out of range")
            elif op == 7:
                cnt = rng.randint(-3, 3)
                target = rng.choice(model) if model and rng.random() < 0.8 else v
                cmd = ["LREM", key, cnt, target]
                idx = [i for i, x in enumerate(model) if x == target]
                if cnt < 0:
                    idx = idx[::-1][:-cnt]
                elif cnt > 0:
                    idx = idx[:cnt]
                for i in sorted(idx, reverse=True):
                    del model[i]
                want = ("int", len(idx))
            elif op == 8:
                a, b = rng.randint(-n - 2, n + 2), rng.randint(-n - 2, n + 2)
                cmd = ["LTRIM", key, a, b]
                s0 = a + n if a < 0 else a
                e0 = b + n if b < 0 else b
                s0 = max(s0, 0)
                if s0 > e0 or s0 >= n:
                    model = []
                else:
                    model = model[s0:min(e0, n - 1) + 1]
                want = ("status", b"OK")
            elif op == 9:
                a, b = rng.randint(-n - 2, n + 2), rng.randint(-n - 2, n + 2)
                cmd = ["LRANGE", key, a, b]
                s0 = a + n if a < 0 else a
                e0 = b + n if b < 0 else b
                s0 = max(s0, 0)
                want = [] if s0 > e0 or s0 >= n else [x.encode() for x in model[s0:min(e0, n - 1) + 1]]
            elif op == 10:
                target = rng.choice(model) if model and rng.random() < 0.8 else v
                rank = rng.choice([1, 2, -1, -2])
                cmd = ["LPOS", key, target, "RANK", rank, "COUNT", 0]
                idx = [i for i, x in enumerate(model) if x == target]
                want = [("int", i) for i in (idx if rank > 0 else idx[::-1])[abs(rank) - 1:]]
            elif op == 11:
                cmd = ["LMOVE", key, key, rng.choice(["LEFT", "RIGHT"]), rng.choice(["LEFT", "RIGHT"])]
                if not model:
                    want = None
                else:
                    x = model.pop(0) if cmd[3] == "LEFT" else model.pop()
                    if cmd[4] == "LEFT":
                        model.insert(0, x)
                    else:
                        model.append(x)
                    want = x.encode()
            elif op == 12:
                i = rng.randint(-n - 1, n)
                cmd = ["LINDEX", key, i]
                want = model[i].encode() if -n <= i < n else None
            else:
                k = rng.randint(1, 4)
                cmd = [rng.choice(["LPOP", "RPOP"]), key, k]
                if not model:
                    want = None
                elif cmd[0] == "LPOP":
                    want, model = [x.encode() for x in model[:k]], model[k:]
                else:
                    want = [x.encode() for x in model[::-1][:k]]
                    model = model[:-k] if k < len(model) else []
            hist.append(cmd)
            got = c.call(*cmd)
            if got != want:
                return "list model: %r answered %r, expected %r; model %d long; last: %r" % (
                    cmd, str(got)[:300], str(want)[:300], len(model), list(hist))
            if rng.random() < 0.02:
                got = c.call("LRANGE", key, 0, -1)
                if norm(got) != [x.encode() for x in model]:
                    return "list model: contents differ after %r" % (list(hist),)
        return None
    finally:
        c.call("DEL", key)
        c.call("CONFIG", "SET", "list-compress-depth", 0)
        c.call("CONFIG", "SET", "list-max-listpack-size", -2)
        c.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", 1073741824)
        c.close()


# ---------------------------------------------------------------- driver

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server-bin", default="build-address/hotkv-server")
    ap.add_argument("--port", type=int, default=0, help="use a running server instead of starting one")
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--server-threads", type=int, default=2)
    ap.add_argument("--reply-timeout", type=float, default=20)
    ap.add_argument("--no-monitor", action="store_true")
    ap.add_argument("--model-ops", type=int, default=20000,
                    help="list edits checked against a model before the threads start (0: none)")
    args = ap.parse_args()

    proc = None
    errpath = None
    if not args.port:
        args.port = free_port()
        errf = tempfile.NamedTemporaryFile(prefix="fuzz-stderr-", suffix=".log", delete=False)
        errpath = errf.name
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        # SORT and other all-shard commands hold more locks than its
        # deadlock detector can track.
        env.setdefault("TSAN_OPTIONS", "detect_deadlocks=0")
        proc = subprocess.Popen([args.server_bin, "--port", str(args.port), "--bind", "127.0.0.1",
                                 "--threads", str(args.server_threads), "--enable-debug-command", "yes",
                                 "--save", ""],
                                stdout=errf, stderr=errf, env=env)
        for _ in range(200):
            try:
                Conn(args.port, timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)

    sh = Shared(args)
    if args.model_ops:
        bad = list_model_phase(args.port, args.seed, args.model_ops)
        if bad:
            sh.failures.append(bad)
            sh.stop.set()
    c = Conn(args.port)
    rep = c.call("COMMAND", "LIST")
    sh.names = [x.decode() for x in rep] if isinstance(rep, list) else ["get", "set"]
    c.close()

    ths = [threading.Thread(target=worker, args=(sh, i, args.seed), daemon=True) for i in range(args.threads)]
    ths += [threading.Thread(target=slowlog_storm, args=(sh, args.seed), daemon=True),
            threading.Thread(target=hfe_active, args=(sh, args.seed), daemon=True),
            threading.Thread(target=raw_garbage, args=(sh, args.seed), daemon=True)]
    if not args.no_monitor:
        ths.append(threading.Thread(target=monitors, args=(sh, args.seed), daemon=True))
    t0 = time.time()
    for t in ths:
        t.start()
    while time.time() - t0 < args.seconds and not sh.stop.is_set():
        time.sleep(0.5)
        if proc and proc.poll() is not None:
            sh.fail("server exited with status %s" % proc.returncode)
    sh.stop.set()
    for t in ths:
        t.join(timeout=args.reply_timeout + 5)
    alive = [t for t in ths if t.is_alive()]
    if alive:
        sh.failures.append("threads still blocked after stop: %d" % len(alive))

    try:
        c = Conn(args.port, timeout=10)
        c.call("CLIENT", "UNPAUSE")
        if c.call("PING") != ("status", b"PONG"):
            sh.failures.append("final PING failed")
        c.close()
    except Exception as e:  # noqa: BLE001
        sh.failures.append("final PING: %s" % e)

    if proc:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with open(errpath, "rb") as f:
            log = f.read().decode("utf-8", "replace")
        for marker in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
                       "WARNING: ThreadSanitizer", "Assertion", "SIGSEGV", "panic"):
            if marker in log:
                i = log.index(marker)
                sh.failures.append("server stderr has %r:\n%s" % (marker, log[max(0, i - 200):i + 6000]))
                break
        if not sh.failures:
            os.unlink(errpath)
        else:
            sh.failures.append("server stderr kept in %s" % errpath)

    print("seed %d, %d client threads, %.0fs, %d commands" %
          (args.seed, args.threads, time.time() - t0, sh.count))
    if sh.failures:
        for f in sh.failures:
            print("FAIL:", f)
        return 1
    print("OK")
    return 0

if __name__ == "__main__":
    sys.exit(main())
