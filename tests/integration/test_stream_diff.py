"""Streams against Debian's redis-server 7.0: the same seeded random
command stream goes to HotKV and to a stock Redis, and every reply must
be the same bytes, over RESP2 and RESP3 connections.

Only what Redis 7.0 has is sent: XADD with explicit ids and the ms-* form
(generated ids are time-dependent), NOMKSTREAM, exact MAXLEN/MINID trims,
XRANGE/XREVRANGE with '-', '+', exclusive bounds and COUNT, XLEN, XDEL,
exact XTRIM, non-blocking XREAD, XSETID above every id used so far (7.0
does not yet refuse ids below max-deleted-entry-id), and keys of other
types for WRONGTYPE. Malformed ids and options are mixed in so the error
texts are compared too.
"""
import random

import pytest

from conftest import real_redis
from resp import RespConn

KEYS = ["s1", "s2", "{t}s3"]
SEEDS = [1, 7, 42, 1234]


def rand_id(rnd, top):
    ms = rnd.randint(0, top)
    roll = rnd.random()
    if roll < 0.1:
        return str(ms)
    if roll < 0.15:
        return "%d-18446744073709551615" % ms
    return "%d-%d" % (ms, rnd.randint(0, 3))


def bad_id(rnd):
    return rnd.choice(["abc", "1-x", "-1", "1-", "--", "1-2-3", "18446744073709551616-0", "(", "1.5"])


def bound(rnd, top, start):
    roll = rnd.random()
    if roll < 0.15:
        return "-" if start else "+"
    if roll < 0.2:
        return "+" if start else "-"
    if roll < 0.35:
        return "(" + rand_id(rnd, top)
    if roll < 0.38:
        return bad_id(rnd)
    if roll < 0.4:
        return "(0-0" if not start else "(18446744073709551615-18446744073709551615"
    return rand_id(rnd, top)


class Gen:
    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.top = 60          # ids are drawn below this; XSETID goes above it
        self.fields = ["a", "b", "c", "name", "12345"]

    def values(self):
        rnd = self.rnd
        out = []
        n = rnd.choice([1, 1, 1, 2, 3])
        same = rnd.random() < 0.5
        for i in range(n):
            f = self.fields[i] if same else rnd.choice(self.fields)
            v = rnd.choice([str(rnd.randint(-1000, 10 ** rnd.randint(1, 19))), "x" * rnd.randint(0, 70), "v"])
            out += [f, v]
        return out

    def op(self):
        rnd = self.rnd
        k = rnd.choice(KEYS + ["str"] if rnd.random() < 0.05 else KEYS)
        roll = rnd.random()
        if roll < 0.38:
            args = ["XADD", k]
            if rnd.random() < 0.1:
                args.append("NOMKSTREAM")
            t = rnd.random()
            if t < 0.1:
                args += ["MAXLEN", rnd.randint(0, 12)]
            elif t < 0.15:
                args += ["MAXLEN", "=", rnd.randint(0, 12)]
            elif t < 0.22:
                args += ["MINID", rand_id(rnd, self.top)]
            elif t < 0.23:
                args += ["MAXLEN", "-1"]
            idr = rnd.random()
            if idr < 0.15:
                args.append("%d-*" % rnd.randint(0, self.top))
            elif idr < 0.18:
                args.append(bad_id(rnd))
            elif idr < 0.19:
                args.append("0-0")
            else:
                # Mostly increasing, sometimes equal or smaller.
                self.top += rnd.choice([0, 0, 1, 1, 2])
                args.append(rand_id(rnd, self.top))
            args += self.values()
            if rnd.random() < 0.02:
                args.append("odd")
            return args
        if roll < 0.55:
            rev = rnd.random() < 0.4
            a, b = bound(rnd, self.top, True), bound(rnd, self.top, False)
            args = ["XREVRANGE", k, b, a] if rev else ["XRANGE", k, a, b]
            c = rnd.random()
            if c < 0.3:
                args += ["COUNT", rnd.randint(-1, 6)]
            elif c < 0.32:
                args += ["COUNT"]
            return args
        if roll < 0.62:
            return ["XLEN", k]
        if roll < 0.72:
            ids = [rand_id(rnd, self.top) for _ in range(rnd.randint(1, 4))]
            if rnd.random() < 0.05:
                ids.append(bad_id(rnd))
            return ["XDEL", k] + ids
        if roll < 0.8:
            t = rnd.random()
            if t < 0.45:
                args = ["XTRIM", k, "MAXLEN", rnd.randint(0, 15)]
            elif t < 0.6:
                args = ["XTRIM", k, "MAXLEN", "=", rnd.randint(0, 15)]
            elif t < 0.95:
                args = ["XTRIM", k, "MINID", rand_id(rnd, self.top)]
            else:
                args = ["XTRIM", k, rnd.choice(["MAXLEN", "MINID", "LIMIT"]), rnd.choice(["x", "-1", "5"])]
            return args
        if roll < 0.9:
            n = rnd.randint(1, 3)
            ks = [rnd.choice(KEYS) for _ in range(n)]
            ids = [rnd.choice(["$", "0", "0-0", rand_id(rnd, self.top)]) for _ in range(n)]
            args = ["XREAD"]
            if rnd.random() < 0.4:
                args += ["COUNT", rnd.randint(0, 4)]
            return args + ["STREAMS"] + ks + ids
        if roll < 0.93:
            # Above every id used so far, with the options now and then.
            self.top += 5
            args = ["XSETID", k, "%d-%d" % (self.top, rnd.randint(0, 3))]
            if rnd.random() < 0.3:
                args += ["ENTRIESADDED", rnd.choice([0, 5, 1000])]
            if rnd.random() < 0.2:
                args += ["MAXDELETEDID", "%d-0" % rnd.randint(0, self.top - 5)]
            self.top += 5
            return args
        if roll < 0.95:
            return ["DEL", k]
        if roll < 0.97:
            return ["TYPE", k]
        if roll < 0.98:
            return ["SET", "str", "x"]
        return ["EXISTS", k]


def conns(port, n=2):
    out = []
    for i in range(n):
        c = RespConn("127.0.0.1", port)
        if i % 2:
            c.cmd("HELLO", "3")
        out.append(c)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_random_streams_match_redis(server, r, seed):
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server is not installed")
        ours = conns(server.port)
        theirs = conns(port)
        gen = Gen(seed)
        rnd = random.Random(seed * 31 + 1)
        for step in range(3000):
            cmd = gen.op()
            which = rnd.randrange(2)
            a = ours[which].cmd_raw(*cmd)
            b = theirs[which].cmd_raw(*cmd)
            assert a == b, "step %d (%s): %r\n hotkv: %r\n redis: %r" % (
                step, "resp3" if which else "resp2", cmd, a, b)
        for k in KEYS:
            for which in range(2):
                assert ours[which].cmd_raw("XRANGE", k, "-", "+") == theirs[which].cmd_raw("XRANGE", k, "-", "+")
        for c in ours + theirs:
            c.close()
