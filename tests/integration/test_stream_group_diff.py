"""HotKV against Debian's redis-server 7.0, command by command, on the
consumer-group commands Redis 7.0 has: one seeded sequence of XADD, XDEL,
XTRIM, XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO
(valid and invalid calls, RESP2 and RESP3) runs on both, and every reply
must be the same.

What depends on the clock is compared by its shape only: idle times,
delivery times, consumers' seen and active times. What Redis changed
after 7.0 stays out: consumers are created up front (Redis 8 creates one
on any read or claim, 7.0 only when it gets something), lag and
entries-read are left out (Redis 8 computes them by newer rules: see
test_stream_model.py), and so are the fields 7.2 added (XINFO CONSUMERS
inactive, XINFO STREAM FULL active-time).
"""
import random

import pytest

from conftest import real_redis
from resp import Error, Map, RespConn

KEYS = ["{x}a", "{x}b"]
GROUPS = ["g1", "g2"]
CONSUMERS = ["c1", "c2", "c3"]


def norm(cmd, rep):
    """The reply with clock-dependent values blanked and post-7.0 fields
    dropped."""
    name = cmd[0].upper()
    sub = cmd[1].upper() if len(cmd) > 1 and isinstance(cmd[1], str) else ""
    if isinstance(rep, Map):
        rep = [x for kv in rep for x in kv]
    if name == "XPENDING" and len(cmd) > 3 and isinstance(rep, list):
        return [[e[0], e[1], "idle", e[3]] for e in rep]
    if name == "XINFO" and sub == "CONSUMERS" and isinstance(rep, list):
        out = []
        for c in rep:
            c = [x for kv in c for x in kv] if isinstance(c, Map) else c
            d = dict(zip(c[::2], c[1::2]))
            out.append([d[b"name"], d[b"pending"]])
        return out
    if name == "XINFO" and sub == "GROUPS" and isinstance(rep, list):
        out = []
        for g in rep:
            g = [x for kv in g for x in kv] if isinstance(g, Map) else g
            d = dict(zip(g[::2], g[1::2]))
            out.append([d[b"name"], d[b"consumers"], d[b"pending"], d[b"last-delivered-id"]])
        return out
    if name == "XINFO" and sub == "STREAM" and isinstance(rep, list):
        d = dict(zip(rep[::2], rep[1::2]))
        if b"groups" in d and isinstance(d[b"groups"], list):
            groups = []
            for g in d[b"groups"]:
                g = [x for kv in g for x in kv] if isinstance(g, Map) else g
                gd = dict(zip(g[::2], g[1::2]))
                cons = []
                for c in gd[b"consumers"]:
                    c = [x for kv in c for x in kv] if isinstance(c, Map) else c
                    cd = dict(zip(c[::2], c[1::2]))
                    cons.append([cd[b"name"], cd[b"pel-count"], [[p[0], p[2]] for p in cd[b"pending"]]])
                groups.append([gd[b"name"], gd[b"last-delivered-id"], gd[b"pel-count"],
                               [[p[0], p[1], p[3]] for p in gd[b"pending"]], cons])
            d[b"groups"] = groups
        return sorted(d.items())
    if name == "XREADGROUP" and isinstance(rep, list):
        return rep
    return rep


class Gen:
    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.ms = {k: 1 for k in KEYS}
        self.added = {k: [] for k in KEYS}  # ids XADD gave, deleted or not

    def ids(self, key, n=3):
        """Mostly ids that were added (some since deleted), a few never."""
        out = []
        for _ in range(n):
            if self.added[key] and self.rnd.random() < 0.8:
                out.append("%d-%d" % self.rnd.choice(self.added[key][-15:]))
            else:
                out.append("%d-%d" % (self.rnd.randint(1, self.ms[key]), self.rnd.randint(0, 3)))
        return out

    def op(self):
        rnd = self.rnd
        k = rnd.choice(KEYS)
        g = rnd.choice(GROUPS)
        c = rnd.choice(CONSUMERS)
        r = rnd.random()
        if r < 0.25:
            step = rnd.randint(0, 1)
            last = self.added[k][-1] if self.added[k] else (0, 0)
            self.ms[k] = max(self.ms[k] + step, last[0])
            self.added[k].append((self.ms[k], last[1] + 1 if self.ms[k] == last[0] else 0))
            fields = []
            for i in range(rnd.randint(1, 3)):
                fields += ["f%d" % i, str(rnd.randint(0, 1000))]
            cmd = ["XADD", k]
            if rnd.random() < 0.1:
                cmd += ["MAXLEN", rnd.randint(3, 30)]
            return [cmd + ["%d-*" % self.ms[k]] + fields]
        if r < 0.30:
            start = rnd.choice(["0", "$"] + self.ids(k, 1))
            return [["XGROUP", "CREATE", k, g, start, "MKSTREAM"]] + \
                [["XGROUP", "CREATECONSUMER", k, g, x] for x in CONSUMERS]
        if r < 0.48:
            cmd = ["XREADGROUP", "GROUP", g, c]
            if rnd.random() < 0.8:
                cmd += ["COUNT", rnd.randint(1, 5)]
            if rnd.random() < 0.1:
                cmd += ["NOACK"]
            keys = [k] if rnd.random() < 0.7 else KEYS
            cmd += ["STREAMS"] + keys + [rnd.choice([">", ">", ">", "0", "$", "bad"] + self.ids(k, 1))
                                         for _ in keys]
            return [cmd]
        if r < 0.56:
            return [["XACK", k, g] + self.ids(k, rnd.randint(1, 3))]
        if r < 0.63:
            cmd = ["XCLAIM", k, g, c, rnd.choice([0, 0, 100000])] + self.ids(k, rnd.randint(1, 3))
            for opt in (["JUSTID"], ["FORCE"], ["RETRYCOUNT", rnd.randint(0, 5)], ["IDLE", 1000000],
                        ["LASTID", self.ids(k, 1)[0]], ["BOGUS"]):
                if rnd.random() < 0.15:
                    cmd += opt
            return [cmd]
        if r < 0.70:
            cmd = ["XAUTOCLAIM", k, g, c, rnd.choice([0, 0, 100000]), rnd.choice(["0", "-"] + self.ids(k, 1))]
            if rnd.random() < 0.6:
                cmd += ["COUNT", rnd.choice([1, 2, 5, 0])]
            if rnd.random() < 0.3:
                cmd += ["JUSTID"]
            return [cmd]
        if r < 0.76:
            return [["XDEL", k] + self.ids(k, 2)]
        if r < 0.79:
            return [["XTRIM", k, "MAXLEN", rnd.choice(["=", "~"]), rnd.randint(5, 40)]]
        if r < 0.85:
            cmd = ["XPENDING", k, g]
            if rnd.random() < 0.6:
                if rnd.random() < 0.2:
                    cmd += ["IDLE", rnd.choice([0, 100000])]
                cmd += [rnd.choice(["-", "(1-0"]), "+", rnd.randint(0, 10)]
                if rnd.random() < 0.3:
                    cmd += [c]
            return [cmd]
        if r < 0.93:
            which = rnd.random()
            if which < 0.35:
                return [["XINFO", "STREAM", k] + rnd.choice([[], ["FULL"], ["FULL", "COUNT", rnd.randint(0, 3)]])]
            if which < 0.7:
                return [["XINFO", "GROUPS", k]]
            return [["XINFO", "CONSUMERS", k, g]]
        if r < 0.96:
            return [["XGROUP", "SETID", k, g, rnd.choice(["0", "$"] + self.ids(k, 1))]]
        if r < 0.995:
            return [["XGROUP", "DELCONSUMER", k, g, c], ["XGROUP", "CREATECONSUMER", k, g, c]]
        return [["XGROUP", "DESTROY", k, g]]


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("resp3", [False, True])
def test_group_commands_match_redis(new_server, seed, resp3):
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server is not installed")
        srv = new_server()
        a = RespConn("127.0.0.1", srv.port)
        b = RespConn("127.0.0.1", port)
        if resp3:
            a.cmd("HELLO", "3")
            b.cmd("HELLO", "3")
        gen = Gen(seed)
        for n in range(1500):
            for cmd in gen.op():
                ra, rb = a.cmd(*cmd), b.cmd(*cmd)
                if isinstance(rb, Error) or isinstance(ra, Error):
                    assert (type(ra), ra) == (type(rb), rb), (seed, n, cmd)
                    continue
                assert norm(cmd, ra) == norm(cmd, rb), (seed, n, cmd, ra, rb)
        for k in KEYS:
            assert a.cmd("XRANGE", k, "-", "+") == b.cmd("XRANGE", k, "-", "+")
        a.close()
        b.close()
