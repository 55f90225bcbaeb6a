"""Vector sets: search quality on small random sets, checked against brute
force computed here.

- VSIM TRUTH is the exact cosine top-k; VSIM with a large EF finds it with
  recall >= 0.95; scores are (1 + cos) / 2.
- Quantisation: VEMB error bounds for Q8, BIN and NOQUANT, RAW contents,
  Q8 and BIN scores.
- REDUCE: the projection matches Redis's deterministic matrix.
- Deletion: after VREM of half the set, results never contain removed
  elements and recall stays within 0.02 of a fresh index of the rest."""
import struct

import numpy as np
import pytest

from vset_util import brute_topk, check_exact, fp32, load, normalise, pairs, rand_vectors, recall

N, DIM, NQ = 500, 16, 30


@pytest.fixture(scope="module")
def data():
    return rand_vectors(N, DIM, 1)


@pytest.fixture(scope="module")
def queries():
    return rand_vectors(NQ, DIM, 2)


def names(n, prefix="e"):
    return ["%s%d" % (prefix, i) for i in range(n)]


def vsim(r, key, q, *opts):
    return r.execute_command("VSIM", key, *fp32(q), *opts)


def scored(r, key, q, *opts):
    return [(n.decode(), float(s)) for n, s in pairs(vsim(r, key, q, "WITHSCORES", *opts))]


def test_truth_is_brute_force_noquant(r, data, queries):
    nm = names(N)
    assert all(x == 1 for x in load(r, "k", data, nm, "NOQUANT"))
    assert r.execute_command("VCARD", "k") == N
    for q in queries:
        check_exact(scored(r, "k", q, "TRUTH", "COUNT", "10"), data, nm, q, 10, 2e-6)
        check_exact(scored(r, "k", q, "TRUTH", "COUNT", "25", "NOTHREAD"), data, nm, q, 25, 2e-6)


def test_hnsw_recall_noquant(r, data, queries):
    nm = names(N)
    load(r, "k", data, nm, "NOQUANT")
    rec_500, rec_default = [], []
    for q in queries:
        truth, _ = brute_topk(data, nm, q, 10)
        found = [n.decode() for n in vsim(r, "k", q, "COUNT", "10", "EF", "500")]
        rec_500.append(recall(found, truth))
        found = [n.decode() for n in vsim(r, "k", q, "COUNT", "10")]
        rec_default.append(recall(found, truth))
    assert np.mean(rec_500) >= 0.95, rec_500
    assert np.mean(rec_default) >= 0.9, rec_default
    # the scores of an HNSW answer are exact cosine scores too
    for q in queries[:5]:
        sims = normalise(data) @ normalise(q)
        for n, s in scored(r, "k", q, "COUNT", "10", "EF", "200"):
            assert abs(s - (1 + sims[int(n[1:])]) / 2) < 2e-6


def test_each_element_finds_itself(r, data):
    nm = names(N)
    load(r, "k", data, nm, "NOQUANT")
    hits = sum(r.execute_command("VSIM", "k", "ELE", n, "COUNT", "1")[0] == n.encode() for n in nm[:200])
    assert hits >= 198
    hits = sum(vsim(r, "k", data[i], "COUNT", "1")[0] == nm[i].encode() for i in range(200, 400))
    assert hits >= 198


def test_q8_scores_and_recall(r, data, queries):
    nm = names(N)
    load(r, "k", data, nm)
    info = r.execute_command("VINFO", "k")
    assert info[1] == b"int8"
    rec_truth, rec_hnsw = [], []
    for q in queries:
        truth, _ = brute_topk(data, nm, q, 10)
        res = scored(r, "k", q, "TRUTH", "COUNT", "10")
        sims = normalise(data) @ normalise(q)
        for n, s in res:
            assert abs(s - (1 + sims[int(n[1:])]) / 2) < 0.02, (n, s)
        q8_truth = [n for n, _ in res]
        rec_truth.append(recall(q8_truth, truth))
        found = [n.decode() for n in vsim(r, "k", q, "COUNT", "10", "EF", "500")]
        rec_hnsw.append(recall(found, q8_truth))
    assert np.mean(rec_truth) >= 0.85, rec_truth
    assert np.mean(rec_hnsw) >= 0.95, rec_hnsw


def bits(v):
    return np.asarray(v) > 0


def test_bin_scores_are_hamming(r, data, queries):
    nm = names(N)
    load(r, "k", data, nm, "BIN")
    signs = bits(data)
    for q in queries[:10]:
        ham = (signs != bits(q)).sum(axis=1)
        want = 1 - ham / DIM
        res = scored(r, "k", q, "TRUTH", "COUNT", "10")
        assert len(res) == 10
        for n, s in res:
            assert abs(s - want[int(n[1:])]) < 1e-6, (n, s)
        got = sorted((s for _, s in res), reverse=True)
        assert abs(got[0] - want.max()) < 1e-6
        assert abs(got[-1] - np.sort(want)[::-1][9]) < 1e-6
        for n, s in scored(r, "k", q, "COUNT", "10", "EF", "500"):
            assert abs(s - want[int(n[1:])]) < 1e-6


def test_vemb_noquant_bounds(r, data):
    nm = names(100)
    load(r, "k", data[:100], nm, "NOQUANT")
    for i in range(100):
        emb = np.array([float(x) for x in r.execute_command("VEMB", "k", nm[i])])
        v = data[i].astype(np.float64)
        assert np.max(np.abs(emb - v)) <= 1e-6 * np.max(np.abs(v)) + 1e-6
        raw = r.execute_command("VEMB", "k", nm[i], "RAW")
        assert raw[0] == b"f32" and len(raw) == 3
        stored = np.frombuffer(raw[1], dtype="<f4")
        assert np.allclose(stored, v / np.linalg.norm(v), atol=1e-6)
        assert abs(float(raw[2]) - np.linalg.norm(v)) <= 1e-5 * np.linalg.norm(v)


def test_vemb_q8_bounds(r, data):
    nm = names(100)
    load(r, "k", data[:100], nm, "Q8")
    for i in range(100):
        v = data[i].astype(np.float64)
        l2 = np.linalg.norm(v)
        emb = np.array([float(x) for x in r.execute_command("VEMB", "k", nm[i])])
        assert np.max(np.abs(emb - v)) <= np.max(np.abs(v)) / 254 * 1.01 + 1e-6, (emb, v)
        raw = r.execute_command("VEMB", "k", nm[i], "RAW")
        assert raw[0] == b"int8" and len(raw) == 4
        q = np.frombuffer(raw[1], dtype=np.int8).astype(np.float64)
        assert len(q) == DIM
        norm, rng = float(raw[2]), float(raw[3])
        assert abs(norm - l2) <= 1e-5 * l2
        assert abs(rng - np.max(np.abs(v)) / l2) <= 1e-6
        assert np.max(np.abs(q)) == 127
        assert np.max(np.abs(q - np.round(v / l2 / rng * 127))) <= 1
        # VEMB is the dequantised, de-normalised RAW data
        assert np.allclose(emb, q * rng / 127 * norm, atol=1e-5)


def test_vemb_bin(r, data):
    nm = names(50)
    load(r, "k", data[:50], nm, "BIN")
    for i in range(50):
        emb = [float(x) for x in r.execute_command("VEMB", "k", nm[i])]
        assert emb == [1.0 if x > 0 else -1.0 for x in data[i]]
        raw = r.execute_command("VEMB", "k", nm[i], "RAW")
        assert raw[0] == b"bin" and len(raw) == 3 and len(raw[1]) == 8
        word = struct.unpack("<Q", raw[1])[0]
        assert word == sum(1 << j for j, x in enumerate(data[i]) if x > 0)
        assert abs(float(raw[2]) - np.linalg.norm(data[i].astype(np.float64))) < 1e-4


def hadamard_projection(n_in, n_out):
    m = np.empty((n_out, n_in))
    for i in range(n_out):
        for j in range(n_in):
            m[i, j] = 1 if bin(i & j).count("1") % 2 == 0 else -1
    return m / np.sqrt(n_in)


@pytest.mark.parametrize("quant", ["NOQUANT", "Q8"])
def test_reduce_projection(r, quant):
    big = rand_vectors(300, 64, 7)
    nm = names(300)
    p = r.pipeline(transaction=False)
    for v, n in zip(big, nm):
        p.execute_command("VADD", "k", "REDUCE", "32", *fp32(v), n, quant)
    assert all(x == 1 for x in p.execute())
    assert r.execute_command("VDIM", "k") == 32
    info = dict(zip(*[iter(r.execute_command("VINFO", "k"))] * 2))
    assert info[b"vector-dim"] == 32 and info[b"projection-input-dim"] == 64
    proj = big.astype(np.float64) @ hadamard_projection(64, 32).T
    tol = 1e-4 if quant == "NOQUANT" else None
    for i in range(0, 300, 30):
        emb = np.array([float(x) for x in r.execute_command("VEMB", "k", nm[i])])
        assert len(emb) == 32
        if tol:
            assert np.allclose(emb, proj[i], atol=tol * np.max(np.abs(proj[i])) + 1e-5)
        else:
            assert np.max(np.abs(emb - proj[i])) <= np.max(np.abs(proj[i])) / 254 * 1.01 + 1e-4
    for qi in range(10):
        q = rand_vectors(10, 64, 8)[qi]
        pq = hadamard_projection(64, 32) @ q.astype(np.float64)
        res = [(n.decode(), float(s)) for n, s in pairs(vsim(r, "k", q, "TRUTH", "COUNT", "10", "WITHSCORES"))]
        if quant == "NOQUANT":
            check_exact(res, proj, nm, pq, 10, 1e-5)
        else:
            truth, _ = brute_topk(proj, nm, pq, 10)
            assert recall([n for n, _ in res], truth) >= 0.7
        # a 32-dimensional query is taken as already projected
        res32 = [(n.decode(), float(s)) for n, s in
                 pairs(vsim(r, "k", pq.astype(np.float32), "TRUTH", "COUNT", "10", "WITHSCORES"))]
        assert [n for n, _ in res32] == [n for n, _ in res] or recall([n for n, _ in res32],
                                                                        [n for n, _ in res]) >= 0.9


def test_delete_half_keeps_recall(r, data, queries):
    nm = names(N)
    load(r, "k", data, nm, "NOQUANT")
    removed = set(nm[1::2])
    p = r.pipeline(transaction=False)
    for n in sorted(removed):
        p.execute_command("VREM", "k", n)
    assert all(x == 1 for x in p.execute())
    assert r.execute_command("VCARD", "k") == N - len(removed)
    kept_idx = [i for i in range(N) if nm[i] not in removed]
    kept = data[kept_idx]
    kept_names = [nm[i] for i in kept_idx]
    load(r, "fresh", kept, kept_names, "NOQUANT")
    rec_del, rec_fresh = [], []
    for ef in ("10", "40", "100"):
        for q in queries:
            truth, _ = brute_topk(kept, kept_names, q, 10)
            got = [n.decode() for n in vsim(r, "k", q, "COUNT", "10", "EF", ef)]
            assert not set(got) & removed
            assert len(got) == 10
            rec_del.append(recall(got, truth))
            got = [n.decode() for n in vsim(r, "fresh", q, "COUNT", "10", "EF", ef)]
            rec_fresh.append(recall(got, truth))
        assert np.mean(rec_del) >= np.mean(rec_fresh) - 0.02, (ef, np.mean(rec_del), np.mean(rec_fresh))
    assert np.mean(rec_del[-NQ:]) >= 0.95
    # the TRUTH scan and the graph agree on what is left
    for q in queries[:5]:
        check_exact(scored(r, "k", q, "TRUTH", "COUNT", "10"), kept, kept_names, q, 10, 2e-6)
    # removed elements are gone everywhere
    assert r.execute_command("VISMEMBER", "k", nm[1]) == 0
    assert r.execute_command("VEMB", "k", nm[1]) is None
    assert not {x.decode() for x in r.execute_command("VRANDMEMBER", "k", "-500")} & removed
    assert sorted(x.decode() for x in r.execute_command("VRANDMEMBER", "k", str(N))) == sorted(kept_names)
    for n in kept_names[:50]:
        for level in r.execute_command("VLINKS", "k", n):
            assert not {x.decode() for x in level} & removed, n


def test_delete_almost_all_then_all(r, data):
    nm = names(200)
    load(r, "k", data[:200], nm)
    p = r.pipeline(transaction=False)
    for n in nm[5:]:
        p.execute_command("VREM", "k", n)
    p.execute()
    assert r.execute_command("VCARD", "k") == 5
    for q in data[:10]:
        got = sorted(x.decode() for x in vsim(r, "k", q, "COUNT", "10"))
        assert got == sorted(nm[:5])
    for i, n in enumerate(nm[:5]):
        assert r.execute_command("VSIM", "k", "ELE", n, "COUNT", "1") == [n.encode()]
    for n in nm[:4]:
        assert r.execute_command("VREM", "k", n) == 1
    assert r.execute_command("VSIM", "k", *fp32(data[0])) == [nm[4].encode()]
    assert r.execute_command("VREM", "k", nm[4]) == 1
    assert r.exists("k") == 0


def test_updates_move_elements(r, data, queries):
    nm = names(N)
    load(r, "k", data, nm, "NOQUANT")
    new = rand_vectors(100, DIM, 3)
    replies = load(r, "k", new, nm[:100], "NOQUANT")
    assert replies == [0] * 100
    assert r.execute_command("VCARD", "k") == N
    current = data.copy()
    current[:100] = new
    rec = []
    for q in queries:
        check_exact(scored(r, "k", q, "TRUTH", "COUNT", "10"), current, nm, q, 10, 2e-6)
        truth, _ = brute_topk(current, nm, q, 10)
        rec.append(recall([n.decode() for n in vsim(r, "k", q, "COUNT", "10", "EF", "200")], truth))
    assert np.mean(rec) >= 0.95
    for i in range(0, 100, 10):
        emb = np.array([float(x) for x in r.execute_command("VEMB", "k", nm[i])])
        assert np.allclose(emb, new[i], atol=1e-5)


def test_vlinks_degree_bounds(r, data):
    nm = names(N)
    load(r, "k", data, nm, "M", "8")
    for n in nm[::25]:
        levels = r.execute_command("VLINKS", "k", n)
        assert 1 <= len(levels) <= 17
        assert 1 <= len(levels[-1]) <= 16          # level 0: up to 2*M
        for level in levels[:-1]:
            assert len(level) <= 8                  # upper levels: up to M
        for level in levels:
            assert n.encode() not in level
    info = dict(zip(*[iter(r.execute_command("VINFO", "k"))] * 2))
    assert info[b"hnsw-m"] == 8
    assert max(len(r.execute_command("VLINKS", "k", n)) for n in nm) - 1 == info[b"max-level"]


def test_vsim_count_larger_than_ef_and_set(r, data):
    nm = names(N)
    load(r, "k", data, nm, "NOQUANT")
    q = data[0]
    res = vsim(r, "k", q, "COUNT", "300")
    assert len(res) == 300 and len(set(res)) == 300
    res = vsim(r, "k", q, "COUNT", "1000", "EF", "10")
    assert len(res) == N
    res = scored(r, "k", q, "COUNT", "1000", "TRUTH")
    assert len(res) == N
    check_exact(res, data, nm, q, N, 2e-6)
