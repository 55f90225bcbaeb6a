"""VSIM ... FILTER at the command level.

- Hybrid search: VSIM TRUTH FILTER equals brute force over the elements
  whose attributes pass the expression (computed here in Python); the
  graph search with FILTER only returns matching elements, best first.
- FILTER-EF, WITHATTRIBS with FILTER, elements without attributes.
- The expression cases of tests/integration/vexpr_cases.py (CASES and
  ERRORS, worked out from Redis's expr.c) replayed through VSIM, one
  single-element set per case."""
import importlib.util
import json
import os

import numpy as np
import pytest

from resp import Error, Map
from vset_util import check_exact, fp32, load, normalise, rand_vectors, recall, values

N, DIM = 300, 8
GENRES = ["drama", "comedy", "action", "horror"]


@pytest.fixture
def movies(r):
    data = rand_vectors(N, DIM, 31)
    rng = np.random.default_rng(32)
    attrs, meta = [], []
    for i in range(N):
        if i % 10 == 9:
            attrs.append(None)            # no attributes: never matches
            meta.append(None)
            continue
        m = {"year": int(rng.integers(1950, 2025)), "genre": GENRES[i % 4],
             "rating": float(np.round(rng.uniform(0, 5), 1)), "tags": ["t%d" % (i % 3)]}
        if i % 7 == 0:
            del m["rating"]               # a missing field: no match where it is used
        meta.append(m)
        attrs.append(json.dumps(m))
    names = ["m%d" % i for i in range(N)]
    load(r, "mv", data, names, "NOQUANT", attrs=attrs)
    return data, names, meta


EXPRS = [
    ('.year > 1990', lambda m: m["year"] > 1990),
    ('.year >= 1970 and .year < 1980', lambda m: 1970 <= m["year"] < 1980),
    ('.genre == "drama"', lambda m: m["genre"] == "drama"),
    ('.genre == "drama" || .genre == \'horror\'', lambda m: m["genre"] in ("drama", "horror")),
    ('.genre in ["comedy", "action"]', lambda m: m["genre"] in ("comedy", "action")),
    ('not (.year < 2000)', lambda m: not m["year"] < 2000),
    ('!(.genre == "drama") && .year % 2 == 0', lambda m: m["genre"] != "drama" and m["year"] % 2 == 0),
    ('.rating >= 4', lambda m: "rating" in m and m["rating"] >= 4),
    # a missing field fails the element whatever the rest of the expression says
    ('.rating * 2 > 8 or .year == 2000', lambda m: "rating" in m and (m["rating"] * 2 > 8 or m["year"] == 2000)),
    ('"t1" in .tags', lambda m: "t1" in m["tags"]),
    ('(.year - 1950) / 10 < 2', lambda m: (m["year"] - 1950) / 10 < 2),
    ('.nosuch == 1', lambda m: False),
    ('1', lambda m: True),
]


def vsim(r, *args):
    return r.execute_command("VSIM", "mv", *args)


@pytest.mark.parametrize("expr,pred", EXPRS, ids=[e for e, _ in EXPRS])
def test_filter_truth_is_brute_force(r, movies, expr, pred):
    data, names, meta = movies
    keep = [i for i in range(N) if meta[i] is not None and pred(meta[i])]
    for q in rand_vectors(5, DIM, 33):
        got = vsim(r, *fp32(q), "FILTER", expr, "TRUTH", "COUNT", "20", "WITHSCORES")
        res = [(n.decode(), float(s)) for n, s in zip(got[0::2], got[1::2])]
        if not keep:
            assert res == []
            continue
        k = min(20, len(keep))
        check_exact(res, data[keep], [names[i] for i in keep], q, k, 2e-6)


@pytest.mark.parametrize("expr,pred", EXPRS, ids=[e for e, _ in EXPRS])
def test_filter_graph_search(r, movies, expr, pred):
    data, names, meta = movies
    keep = {names[i] for i in range(N) if meta[i] is not None and pred(meta[i])}
    recs = []
    for q in rand_vectors(5, DIM, 34):
        got = [n.decode() for n in vsim(r, *fp32(q), "FILTER", expr, "COUNT", "10", "EF", "200")]
        assert set(got) <= keep, set(got) - keep
        truth = [n.decode() for n in vsim(r, *fp32(q), "FILTER", expr, "COUNT", "10", "TRUTH")]
        assert len(got) <= len(truth)
        if truth:
            recs.append(recall(got, truth))
        # ordered best first
        sims = normalise(data) @ normalise(q)
        idx = [int(n[1:]) for n in got]
        assert all(sims[a] >= sims[b] - 1e-6 for a, b in zip(idx, idx[1:]))
    if recs:
        assert np.mean(recs) >= 0.9, recs


def test_filter_with_attribs_and_count(r, conn3, movies):
    data, names, meta = movies
    q = data[0]
    got = vsim(r, *fp32(q), "FILTER", '.genre == "comedy"', "WITHATTRIBS", "COUNT", "5")
    assert len(got) == 10
    for n, a in zip(got[0::2], got[1::2]):
        m = json.loads(a)
        assert m["genre"] == "comedy" and m == meta[int(n[1:])]
    m3 = conn3.cmd("VSIM", "mv", *fp32(q), "FILTER", '.genre == "comedy"', "WITHATTRIBS", "WITHSCORES",
                   "COUNT", "5")
    assert isinstance(m3, Map) and [k for k, _ in m3] == got[0::2]
    for _, (score, attr) in m3:
        assert 0 <= score <= 1 and json.loads(attr)["genre"] == "comedy"


def test_filter_ef_bounds_the_effort(r, movies):
    data, names, meta = movies
    rare = [names[i] for i in range(N) if meta[i] is not None and meta[i]["year"] == 2000]
    q = data[5]
    full = [n.decode() for n in vsim(r, *fp32(q), "FILTER", ".year == 2000", "COUNT", "50", "FILTER-EF", "100000")]
    assert set(full) <= set(rare)
    assert recall(full, rare) >= 0.9 if rare else full == []
    small = [n.decode() for n in vsim(r, *fp32(q), "FILTER", ".year == 2000", "COUNT", "50", "FILTER-EF", "1")]
    assert set(small) <= set(rare) and len(small) <= len(full)


def test_filter_elements_without_attributes(r):
    r.execute_command("VADD", "k", *values([1, 0]), "plain")
    r.execute_command("VADD", "k", *values([0, 1]), "attr", "SETATTR", '{"a":1}')
    assert r.execute_command("VSIM", "k", *values([1, 0]), "FILTER", "1") == [b"attr"]
    assert r.execute_command("VSIM", "k", *values([1, 0]), "FILTER", "1", "TRUTH") == [b"attr"]
    assert r.execute_command("VSETATTR", "k", "attr", "") == 1
    assert r.execute_command("VSIM", "k", *values([1, 0]), "FILTER", "1") == []
    assert r.execute_command("VSETATTR", "k", "plain", '{"a":2}') == 1
    assert r.execute_command("VSIM", "k", *values([1, 0]), "FILTER", ".a == 2") == [b"plain"]


def test_filter_error_text(conn):
    conn.cmd("VADD", "k", *values([1, 0]), "e", "SETATTR", '{"a":1}')
    near = "ERR syntax error in FILTER expression near: "
    assert conn.cmd("VSIM", "k", *values([1, 0]), "FILTER", ".a @ 1") == Error(near + "@ 1")
    assert conn.cmd("VSIM", "k", *values([1, 0]), "FILTER", '.a == "x') == Error(near + '.a == "x')
    assert conn.cmd("VSIM", "k", *values([1, 0]), "FILTER", "(1") == Error(near + "(1")
    # a later bad FILTER is still an error; a good one later does not undo it
    assert conn.cmd("VSIM", "k", *values([1, 0]), "FILTER", "1", "FILTER", ".a @ 1") == Error(near + "@ 1")
    assert conn.cmd("VSIM", "k", *values([1, 0]), "FILTER", ".a @ 1", "FILTER", "1") == Error(near + "@ 1")
    # no key: empty result, the expression is not even compiled
    assert conn.cmd("VSIM", "nokey", *values([1, 0]), "FILTER", ".a @ 1") == []


# ---- the shared expression cases --------------------------------------------

def load_cases():
    path = os.path.join(os.path.dirname(__file__), "vexpr_cases.py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("vexpr_cases", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES_MOD = load_cases()
needs_cases = pytest.mark.skipif(CASES_MOD is None, reason="tests/integration/vexpr_cases.py not present")


@needs_cases
def test_vexpr_cases(conn):
    failures = []
    for i, (attrs, expr, want) in enumerate(CASES_MOD.CASES):
        conn.cmd("DEL", "fk")
        extra = [] if attrs is None else ["SETATTR", attrs]
        assert conn.cmd("VADD", "fk", *values([1, 0]), "e", *extra) == 1
        got = conn.cmd("VSIM", "fk", *values([1, 0]), "FILTER", expr)
        if isinstance(got, Error) or got != ([b"e"] if want else []):
            failures.append((i, attrs, expr, want, got))
        # the same through the exact scan
        got = conn.cmd("VSIM", "fk", *values([1, 0]), "FILTER", expr, "TRUTH")
        if isinstance(got, Error) or got != ([b"e"] if want else []):
            failures.append((i, attrs, expr, want, "TRUTH", got))
    assert not failures, "%d of %d cases differ:\n%s" % (
        len(failures), len(CASES_MOD.CASES), "\n".join(map(repr, failures[:40])))


@needs_cases
def test_vexpr_errors(conn, conn3):
    conn.cmd("VADD", "fk", *values([1, 0]), "e", "SETATTR", '{"a":1}')
    failures = []
    for expr, want in CASES_MOD.ERRORS:
        got = conn.cmd("VSIM", "fk", *values([1, 0]), "FILTER", expr)
        if got != Error(want) or not isinstance(got, Error):
            failures.append((expr, want, got))
        got3 = conn3.cmd("VSIM", "fk", *values([1, 0]), "FILTER", expr, "WITHSCORES")
        if got3 != Error(want) or not isinstance(got3, Error):
            failures.append((expr, want, "RESP3", got3))
    assert not failures, "\n".join(map(repr, failures))
    # the connection is still in step after all those errors
    assert conn.cmd("PING") == "PONG"
