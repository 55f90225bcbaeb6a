"""Uniform random sampling: HRANDFIELD, SRANDMEMBER, ZRANDMEMBER (with and
without a count) and SPOP with a count, for every encoding (listpack,
intset, hashtable, skiplist).

Each test draws enough samples for a chi-square goodness-of-fit test
against the uniform distribution and compares the statistic with the
critical value for a false-alarm rate of 1e-4, so a correct server fails
one of these checks about once in ten thousand runs. The distinctness and
count rules of positive counts and the member/value pairing of
WITHVALUES / WITHSCORES are checked exactly."""
import math
from collections import Counter

import pytest
from resp import encode

ALPHA = 1e-4
Z_ALPHA = 3.719  # upper 1e-4 quantile of the standard normal


def chi2_critical(dof):
    """Upper ALPHA quantile of chi-square with dof degrees of freedom
    (Wilson-Hilferty; within 1% of the exact value for dof >= 5)."""
    k = float(dof)
    return k * (1 - 2 / (9 * k) + Z_ALPHA * math.sqrt(2 / (9 * k))) ** 3


def chi2(counts, categories, total):
    exp = total / len(categories)
    return sum((counts.get(c, 0) - exp) ** 2 / exp for c in categories)


def assert_uniform(samples, categories, what):
    counts = Counter(samples)
    assert set(counts) <= set(categories), (what, set(counts) - set(categories))
    stat = chi2(counts, categories, len(samples))
    crit = chi2_critical(len(categories) - 1)
    assert stat < crit, "%s: chi-square %.1f >= %.1f (%d categories, %d samples)" % (
        what, stat, crit, len(categories), len(samples))


def pipeline(conn, cmds):
    conn.send(b"".join(encode(*c) for c in cmds))
    return [conn.read() for _ in cmds]


def enc(conn, key):
    return conn.cmd("OBJECT", "ENCODING", key).decode()


FIELDS = ["f%d" % i for i in range(10)]
BFIELDS = [f.encode() for f in FIELDS]


# ---- HRANDFIELD -------------------------------------------------------------------

@pytest.fixture(params=["listpack", "hashtable"])
def hash10(request, conn):
    if request.param == "hashtable":
        conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "0")
    try:
        conn.cmd("HSET", "h", *[x for f in FIELDS for x in (f, "v" + f)])
        assert enc(conn, "h") == request.param
        yield request.param
    finally:
        conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "128")


def test_hrandfield_negative_count_uniform(conn, hash10):
    for _ in range(3):
        got = conn.cmd("HRANDFIELD", "h", "-20000")
        assert len(got) == 20000
        assert_uniform(got, BFIELDS, "HRANDFIELD -20000 " + hash10)


def test_hrandfield_single_uniform(conn, hash10):
    got = pipeline(conn, [("HRANDFIELD", "h")] * 10000)
    assert_uniform(got, BFIELDS, "HRANDFIELD " + hash10)


def test_hrandfield_positive_count_distinct_uniform(conn, hash10):
    samples = []
    for reply in pipeline(conn, [("HRANDFIELD", "h", "3")] * 4000):
        assert len(reply) == 3 and len(set(reply)) == 3
        samples += reply
    assert_uniform(samples, BFIELDS, "HRANDFIELD 3 " + hash10)
    # Most of the hash (the copy-and-shuffle path).
    samples = []
    for reply in pipeline(conn, [("HRANDFIELD", "h", "8")] * 2000):
        assert len(reply) == 8 and len(set(reply)) == 8
        samples += [f for f in BFIELDS if f not in reply]  # the two left out
    assert_uniform(samples, BFIELDS, "HRANDFIELD 8 " + hash10)
    assert sorted(conn.cmd("HRANDFIELD", "h", "10")) == sorted(BFIELDS)
    assert sorted(conn.cmd("HRANDFIELD", "h", "1000")) == sorted(BFIELDS)


def test_hrandfield_withvalues_pairing(conn, hash10):
    for count in ("-500", "5", "500"):
        flat = conn.cmd("HRANDFIELD", "h", count, "WITHVALUES")
        assert len(flat) == 2 * min(abs(int(count)), 10 if int(count) > 0 else abs(int(count)))
        for f, v in zip(flat[::2], flat[1::2]):
            assert v == b"v" + f


def test_hrandfield_big_table_uniform(conn):
    """A table past the exact-bound size: single picks use the fixed chain
    bound. Fields are grouped into 50 bins for the test."""
    conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "0")
    try:
        n = 6000
        for i in range(0, n, 1000):
            conn.cmd("HSET", "big", *[x for j in range(i, i + 1000) for x in ("x%d" % j, "1")])
        got = pipeline(conn, [("HRANDFIELD", "big")] * 25000)
        bins = [int(f[1:]) % 50 for f in got]
        assert_uniform(bins, list(range(50)), "HRANDFIELD on %d fields" % n)
        got = conn.cmd("HRANDFIELD", "big", "-60000")
        assert_uniform([int(f[1:]) for f in got], list(range(n)), "HRANDFIELD -60000 on %d fields" % n)
    finally:
        conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "128")


# ---- SRANDMEMBER / SPOP ------------------------------------------------------------

SET_CASES = {
    "intset": ([str(i * 7) for i in range(10)], []),
    "listpack": (["m%d" % i for i in range(10)], []),
    "hashtable": (["m%d" % i for i in range(10)], [("set-max-listpack-entries", "0")]),
    "hashtable-int": ([str(i * 7) for i in range(10)], [("set-max-intset-entries", "0"),
                                                         ("set-max-listpack-entries", "0")]),
}
SET_DEFAULTS = [("set-max-intset-entries", "512"), ("set-max-listpack-entries", "128")]


@pytest.fixture(params=list(SET_CASES))
def set10(request, conn):
    members, cfg = SET_CASES[request.param]
    for k, v in cfg:
        conn.cmd("CONFIG", "SET", k, v)
    try:
        conn.cmd("SADD", "s", *members)
        want = request.param.split("-")[0]
        assert enc(conn, "s") == want
        yield request.param, [m.encode() for m in members]
    finally:
        for k, v in SET_DEFAULTS:
            conn.cmd("CONFIG", "SET", k, v)


def test_srandmember_uniform(conn, set10):
    name, members = set10
    got = conn.cmd("SRANDMEMBER", "s", "-20000")
    assert len(got) == 20000
    assert_uniform(got, members, "SRANDMEMBER -20000 " + name)
    got = pipeline(conn, [("SRANDMEMBER", "s")] * 10000)
    assert_uniform(got, members, "SRANDMEMBER " + name)
    samples = []
    for reply in pipeline(conn, [("SRANDMEMBER", "s", "3")] * 4000):
        assert len(reply) == 3 and len(set(reply)) == 3
        samples += reply
    assert_uniform(samples, members, "SRANDMEMBER 3 " + name)
    samples = []
    for reply in pipeline(conn, [("SRANDMEMBER", "s", "7")] * 2000):
        assert len(reply) == 7 and len(set(reply)) == 7
        samples += reply
    assert_uniform(samples, members, "SRANDMEMBER 7 " + name)
    assert sorted(conn.cmd("SRANDMEMBER", "s", "10")) == sorted(members)
    assert sorted(conn.cmd("SRANDMEMBER", "s", "99")) == sorted(members)


def spop_trials(conn, members, count, trials):
    """Rebuild the set and SPOP count from it, trials times (pipelined);
    returns the popped members and the members left."""
    popped, left = [], []
    cmds = []
    for _ in range(trials):
        cmds += [("DEL", "p"), ("SADD", "p", *members), ("SPOP", "p", str(count)), ("SMEMBERS", "p")]
    replies = pipeline(conn, cmds)
    for i in range(trials):
        got, rest = replies[4 * i + 2], replies[4 * i + 3]
        assert len(got) == min(count, len(members)) and len(set(got)) == len(got)
        assert sorted(got + rest) == sorted(m.encode() for m in members)
        popped += got
        left += rest
    return popped, left


def test_spop_count_uniform(conn, set10):
    name, members = set10
    strs = [m.decode() for m in members]
    popped, _ = spop_trials(conn, strs, 3, 3000)
    assert_uniform(popped, members, "SPOP 3 " + name)
    # Most of the set goes (the path that keeps the few that stay).
    _, left = spop_trials(conn, strs, 9, 6000)
    assert_uniform(left, members, "SPOP 9 (the one left) " + name)
    popped, left = spop_trials(conn, strs, 10, 20)
    assert left == []


def test_spop_big_hashtable_uniform(conn):
    members = ["k%d" % i for i in range(300)]
    conn.cmd("SADD", "q", *members)
    assert enc(conn, "q") == "hashtable"  # what each trial's set is
    popped, _ = spop_trials(conn, members, 20, 1200)
    assert_uniform(popped, [m.encode() for m in members], "SPOP 20 of 300")


# ---- ZRANDMEMBER -------------------------------------------------------------------

@pytest.fixture(params=["listpack", "skiplist"])
def zset10(request, conn):
    if request.param == "skiplist":
        conn.cmd("CONFIG", "SET", "zset-max-listpack-entries", "0")
    try:
        conn.cmd("ZADD", "z", *[x for i, f in enumerate(FIELDS) for x in (str(i * 1.5), f)])
        assert enc(conn, "z") == request.param
        yield request.param
    finally:
        conn.cmd("CONFIG", "SET", "zset-max-listpack-entries", "128")


def test_zrandmember_uniform(conn, zset10):
    got = conn.cmd("ZRANDMEMBER", "z", "-20000")
    assert len(got) == 20000
    assert_uniform(got, BFIELDS, "ZRANDMEMBER -20000 " + zset10)
    got = pipeline(conn, [("ZRANDMEMBER", "z")] * 10000)
    assert_uniform(got, BFIELDS, "ZRANDMEMBER " + zset10)
    for count, trials in ((3, 4000), (7, 2000)):
        samples = []
        for reply in pipeline(conn, [("ZRANDMEMBER", "z", str(count))] * trials):
            assert len(reply) == count and len(set(reply)) == count
            samples += reply
        assert_uniform(samples, BFIELDS, "ZRANDMEMBER %d %s" % (count, zset10))
    assert sorted(conn.cmd("ZRANDMEMBER", "z", "10")) == sorted(BFIELDS)
    assert sorted(conn.cmd("ZRANDMEMBER", "z", "50")) == sorted(BFIELDS)


def test_zrandmember_order_is_random(conn, zset10):
    """Distinct picks come back in random order, not rank order."""
    firsts = [reply[0] for reply in pipeline(conn, [("ZRANDMEMBER", "z", "2")] * 5000)]
    assert_uniform(firsts, BFIELDS, "first of ZRANDMEMBER 2 " + zset10)


def test_zrandmember_withscores_pairing(conn, zset10, conn3):
    scores = {f: i * 1.5 for i, f in enumerate(BFIELDS)}
    for count in ("-300", "4", "300"):
        flat = conn.cmd("ZRANDMEMBER", "z", count, "WITHSCORES")
        for m, s in zip(flat[::2], flat[1::2]):
            assert float(s) == scores[m]
        nested = conn3.cmd("ZRANDMEMBER", "z", count, "WITHSCORES")
        for m, s in nested:
            assert s == scores[m]


def test_zrandmember_big_skiplist_few_picks(conn):
    """Few distinct picks out of a big sorted set: uniform (Floyd's
    sampling), without reading the whole set per call."""
    conn.cmd("CONFIG", "SET", "zset-max-listpack-entries", "0")
    try:
        n = 20000
        for i in range(0, n, 2000):
            conn.cmd("ZADD", "bz", *[x for j in range(i, i + 2000) for x in (str(j), "e%d" % j)])
        samples = []
        for reply in pipeline(conn, [("ZRANDMEMBER", "bz", "5")] * 6000):
            assert len(set(reply)) == 5
            samples += [int(m[1:]) % 40 for m in reply]
        assert_uniform(samples, list(range(40)), "ZRANDMEMBER 5 of %d" % n)
    finally:
        conn.cmd("CONFIG", "SET", "zset-max-listpack-entries", "128")
