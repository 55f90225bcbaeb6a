"""A long consumer-group scenario against a model.

A seeded sequence of XADD, XREADGROUP (new entries, NOACK, history), XACK,
XACKDEL, XCLAIM, XAUTOCLAIM, XDEL, XTRIM and XGROUP subcommands runs
against the server and against a Python model of Redis's stream and group
rules; every reply is checked, and after each step everything XINFO
STREAM, XINFO GROUPS, XINFO CONSUMERS and XPENDING expose (but idle and
delivery times) must equal the model: lengths and ids, entries-added, the
greatest deleted id, each group's last delivered id, entries-read and lag,
its consumers and their pending counts, every pending entry's owner and
delivery count.

The entries-read and lag rules are Redis 8's (a group behind the first
entry with the tombstones also behind it has the remaining entries as its
lag; an id before the greatest tombstone has no known read counter).
"""
import random

import pytest

from resp import Error

ZERO = (0, 0)
MAXID = (2 ** 64 - 1, 2 ** 64 - 1)
INVALID = -1


def fmt(i):
    return b"%d-%d" % i


def parse(b):
    ms, seq = b.split(b"-")
    return int(ms), int(seq)


class Group:
    def __init__(self, last, entries_read=INVALID):
        self.last = last
        self.entries_read = entries_read
        self.pel = {}        # id -> [consumer, deliveries]
        self.consumers = set()


class Model:
    """Redis's stream and consumer-group rules, as far as replies show them."""

    def __init__(self):
        self.entries = {}    # id -> field list
        self.last = ZERO
        self.added = 0
        self.max_deleted = ZERO
        self.groups = {}

    # -- the stream --
    def first(self):
        return min(self.entries) if self.entries else ZERO

    def delete(self, i):
        if i not in self.entries:
            return False
        del self.entries[i]
        self.max_deleted = max(self.max_deleted, i)
        return True

    def tombstones(self, start):
        if not self.entries or self.max_deleted == ZERO:
            return False
        return start <= self.max_deleted

    def estimate(self, i):
        if not self.added:
            return 0
        if not self.entries and i <= self.last:
            return self.added
        if i != ZERO and i < self.max_deleted:
            return INVALID
        if i == self.last:
            return self.added
        if i > self.last:
            return INVALID
        first = self.first()
        if self.max_deleted == ZERO or self.max_deleted < first:
            if i < first:
                return self.added - len(self.entries)
            if i == first:
                return self.added - len(self.entries) + 1
        return INVALID

    def lag(self, g):
        if not self.added or not self.entries:
            return 0
        first = self.first()
        if g.last < first and self.max_deleted < first:
            return len(self.entries)
        if g.entries_read != INVALID and not self.tombstones(g.last):
            return self.added - g.entries_read
        er = self.estimate(g.last)
        return None if er == INVALID else self.added - er

    def deliver(self, g, i):
        if i <= g.last:
            return
        if g.entries_read != INVALID and g.last >= self.first() and not self.tombstones(g.last):
            g.entries_read += 1
        elif self.added:
            g.entries_read = self.estimate(i)
        g.last = i

    def referenced(self, i):
        return any(i > g.last or i in g.pel for g in self.groups.values())


def xinfo(c, key):
    rep = c.cmd("XINFO", "STREAM", key)
    return dict(zip(rep[::2], rep[1::2]))


def check_state(c, m, key, lag=True):
    info = xinfo(c, key)
    ids = sorted(m.entries)
    assert info[b"length"] == len(ids)
    assert info[b"last-generated-id"] == fmt(m.last)
    assert info[b"entries-added"] == m.added
    assert info[b"max-deleted-entry-id"] == fmt(m.max_deleted)
    assert info[b"recorded-first-entry-id"] == fmt(m.first())
    assert info[b"groups"] == len(m.groups)
    assert info[b"first-entry"] == ([fmt(ids[0]), m.entries[ids[0]]] if ids else None)
    assert info[b"last-entry"] == ([fmt(ids[-1]), m.entries[ids[-1]]] if ids else None)
    groups = c.cmd("XINFO", "GROUPS", key)
    assert [g[1] for g in groups] == sorted(m.groups)
    for g in groups:
        d = dict(zip(g[::2], g[1::2]))
        mg = m.groups[d[b"name"]]
        assert d[b"consumers"] == len(mg.consumers)
        assert d[b"pending"] == len(mg.pel)
        assert d[b"last-delivered-id"] == fmt(mg.last)
        if lag:
            assert (d[b"entries-read"], d[b"lag"]) == (None if mg.entries_read == INVALID else mg.entries_read,
                                                       m.lag(mg)), d[b"name"]
        cons = c.cmd("XINFO", "CONSUMERS", key, d[b"name"])
        want = sorted((n, sum(1 for o, _ in mg.pel.values() if o == n)) for n in mg.consumers)
        assert [(x[1], x[3]) for x in cons] == want
        pend = c.cmd("XPENDING", key, d[b"name"], "-", "+", 1 << 20)
        assert [(p[0], p[1], p[3]) for p in pend] == [(fmt(i), o, n) for i, (o, n) in sorted(mg.pel.items())]
        summary = c.cmd("XPENDING", key, d[b"name"])
        if mg.pel:
            per = {}
            for o, _ in mg.pel.values():
                per[o] = per.get(o, 0) + 1
            assert summary == [len(mg.pel), fmt(min(mg.pel)), fmt(max(mg.pel)),
                               [[o, b"%d" % n] for o, n in sorted(per.items())]]
        else:
            assert summary == [0, None, None, None]


CONSUMERS = [b"c%d" % i for i in range(5)]
GROUPS = [b"g1", b"g2", b"g3"]


def pick_ids(rnd, m, g=None, n=3):
    """Some ids: pending ones, live ones, and ones that never were."""
    pool = list(m.entries)
    if g is not None:
        pool += list(g.pel)
    out = [rnd.choice(pool) for _ in range(min(n, len(pool)))] if pool else []
    if rnd.random() < 0.3:
        out.append((m.last[0] + 5, 0))
    return out


def step(c, m, rnd, key, v8):
    r = rnd.random()
    if r < 0.22:
        ms = m.last[0] + rnd.randint(0, 2)
        i = (ms, m.last[1] + 1) if ms == m.last[0] else (ms, rnd.randint(0, 3))
        fields = [b"f", b"%d" % rnd.randint(0, 99)]
        assert c.cmd("XADD", key, fmt(i), *fields) == fmt(i)
        m.entries[i] = fields
        m.last = i
        m.added += 1
        return
    if not m.groups or r < 0.25:
        name = rnd.choice(GROUPS)
        start = rnd.choice([b"0", b"$"] + [fmt(i) for i in list(m.entries)[:3]])
        rep = c.cmd("XGROUP", "CREATE", key, name, start)
        if name in m.groups:
            assert rep == Error("BUSYGROUP Consumer Group name already exists")
        else:
            assert rep == "OK"
            m.groups[name] = Group(m.last if start == b"$" else parse(start if b"-" in start else start + b"-0"))
        return
    gname = rnd.choice(sorted(m.groups))
    g = m.groups[gname]
    cons = rnd.choice(CONSUMERS)
    if r < 0.45:
        count = rnd.randint(1, 4)
        noack = rnd.random() < 0.15
        rep = c.cmd("XREADGROUP", "GROUP", gname, cons, "COUNT", count, *(["NOACK"] if noack else []),
                    "STREAMS", key, ">")
        new = [i for i in sorted(m.entries) if i > g.last][:count]
        # Redis 8 creates the consumer even when there is nothing to read.
        if v8 or new:
            g.consumers.add(cons)
        if not new:
            assert rep is None
            return
        assert rep == [[key.encode(), [[fmt(i), m.entries[i]] for i in new]]]
        for i in new:
            m.deliver(g, i)
            if not noack:
                g.pel[i] = [cons, 1]
        return
    if r < 0.52:
        count = rnd.randint(1, 4)
        rep = c.cmd("XREADGROUP", "GROUP", gname, cons, "COUNT", count, "STREAMS", key, "0")
        g.consumers.add(cons)
        mine = sorted(i for i, (o, _) in g.pel.items() if o == cons)[:count]
        want = []
        for i in mine:
            if i in m.entries:
                want.append([fmt(i), m.entries[i]])
                g.pel[i][1] += 1
            else:
                want.append([fmt(i), None])
        assert rep == [[key.encode(), want]]
        return
    if r < 0.62:
        ids = pick_ids(rnd, m, g)
        if not ids:
            return
        rep = c.cmd("XACK", key, gname, *[fmt(i) for i in ids])
        n = 0
        for i in ids:
            if i in g.pel:
                del g.pel[i]
                n += 1
        assert rep == n
        return
    if r < 0.70:
        ids = pick_ids(rnd, m, g)
        if not ids:
            return
        justid = rnd.random() < 0.3
        force = rnd.random() < 0.2
        retry = rnd.randint(0, 9) if rnd.random() < 0.2 else None
        args = ["XCLAIM", key, gname, cons, 0] + [fmt(i) for i in ids]
        args += (["JUSTID"] if justid else []) + (["FORCE"] if force else [])
        args += (["RETRYCOUNT", retry] if retry is not None else [])
        rep = c.cmd(*args)
        want = []
        for i in ids:
            if i not in m.entries:
                g.pel.pop(i, None)
                continue
            if i not in g.pel:
                if not force:
                    continue
                g.pel[i] = [cons, 1]
            p = g.pel[i]
            p[0] = cons
            if retry is not None:
                p[1] = retry
            elif not justid:
                p[1] += 1
            want.append(fmt(i) if justid else [fmt(i), m.entries[i]])
        # Redis 8 creates the consumer up front, 7.0 when it claims.
        if v8 or want:
            g.consumers.add(cons)
        assert rep == want
        return
    if r < 0.77:
        count = rnd.randint(1, 4)
        justid = rnd.random() < 0.3
        start = rnd.choice([ZERO] + sorted(g.pel)[:4])
        rep = c.cmd("XAUTOCLAIM", key, gname, cons, 0, fmt(start), "COUNT", count, *(["JUSTID"] if justid else []))
        ids = [i for i in sorted(g.pel) if i >= start]
        attempts, left, k = count * 10, count, 0
        claimed, deleted = [], []
        while attempts and left and k < len(ids):
            attempts -= 1
            i = ids[k]
            k += 1
            if i not in m.entries:
                del g.pel[i]
                deleted.append(fmt(i))
            else:
                g.pel[i][0] = cons
                if not justid:
                    g.pel[i][1] += 1
                claimed.append(fmt(i) if justid else [fmt(i), m.entries[i]])
            left -= 1
        cursor = fmt(ids[k]) if k < len(ids) else b"0-0"
        if v8 or claimed:
            g.consumers.add(cons)
        assert rep == [cursor, claimed, deleted]
        return
    if r < 0.83:
        ids = pick_ids(rnd, m, g, 2)
        if not ids:
            return
        assert c.cmd("XDEL", key, *[fmt(i) for i in ids]) == sum(m.delete(i) for i in set(ids))
        return
    if r < 0.86:
        keep = rnd.randint(0, max(0, len(m.entries) - 1))
        gone = sorted(m.entries)[:max(0, len(m.entries) - keep)]
        assert c.cmd("XTRIM", key, "MAXLEN", "=", keep) == len(gone)
        for i in gone:
            del m.entries[i]
        return
    if r < 0.89 and v8:
        ids = pick_ids(rnd, m, g)
        if not ids:
            return
        policy = rnd.choice(["KEEPREF", "DELREF", "ACKED"])
        rep = c.cmd("XACKDEL", key, gname, policy, "IDS", len(ids), *[fmt(i) for i in ids])
        want = []
        for i in ids:
            if i not in g.pel:
                want.append(-1)
                continue
            del g.pel[i]
            if policy == "ACKED" and m.referenced(i):
                want.append(2)
                continue
            if policy == "DELREF":
                for og in m.groups.values():
                    og.pel.pop(i, None)
            m.delete(i)
            want.append(1)
        assert rep == want
        return
    if r < 0.92:
        assert c.cmd("XGROUP", "CREATECONSUMER", key, gname, cons) == (0 if cons in g.consumers else 1)
        g.consumers.add(cons)
        return
    if r < 0.95:
        rep = c.cmd("XGROUP", "DELCONSUMER", key, gname, cons)
        mine = [i for i, (o, _) in g.pel.items() if o == cons]
        assert rep == (len(mine) if cons in g.consumers else 0)
        for i in mine:
            del g.pel[i]
        g.consumers.discard(cons)
        return
    if r < 0.985:
        target = rnd.choice([ZERO, m.last] + sorted(m.entries)[:2])
        er = rnd.choice([None, None, 0, len(m.entries)])
        args = ["XGROUP", "SETID", key, gname, fmt(target)] + (["ENTRIESREAD", er] if er is not None else [])
        assert c.cmd(*args) == "OK"
        g.last = target
        g.entries_read = INVALID if er is None else min(er, m.added)
        return
    assert c.cmd("XGROUP", "DESTROY", key, gname) == 1
    del m.groups[gname]


def run(c, seed, steps, v8, lag=True):
    rnd = random.Random(seed)
    m = Model()
    key = "s"
    c.cmd("DEL", key)
    m.entries[(1, 0)] = [b"f", b"0"]
    c.cmd("XADD", key, "1-0", "f", "0")
    m.last, m.added = (1, 0), 1
    for n in range(steps):
        try:
            step(c, m, rnd, key, v8)
            check_state(c, m, key, lag)
        except AssertionError as e:
            raise AssertionError("seed %d step %d: %s" % (seed, n, e)) from e


def has_v8(c):
    return c.cmd("COMMAND", "INFO", "xackdel") != [None]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_consumer_group_scenario(conn, seed):
    """Every reply and every invariant, lag and entries-read excluded."""
    run(conn, seed, 1500, has_v8(conn), lag=False)


@pytest.mark.parametrize("seed", [4, 5])
def test_consumer_group_scenario_lag(conn, seed):
    """The same with entries-read and lag, by Redis 8's rules."""
    if not has_v8(conn):
        pytest.skip("Redis 7.0 computes lag by other rules")
    run(conn, seed, 1500, True, lag=True)
