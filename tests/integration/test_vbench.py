"""bench/vector: the data sets are well formed, deterministic and have exact
ground truth; run.py measures hnswlib and, where the server has vector
sets, loads and queries it end to end on a tiny set."""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VEC = os.path.join(ROOT, "bench", "vector")
PY = sys.executable
FMNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"

sys.path.insert(0, VEC)
import datasets  # noqa: E402


def have_hnswlib():
    try:
        import hnswlib  # noqa: F401
        return True
    except ImportError:
        return False


def make(tmp_path, *args):
    p = subprocess.run([PY, os.path.join(VEC, "datasets.py"), *args, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def brute_force(base, queries, k):
    """Cosine top k by a plain float64 sort (ties: smaller id), independent
    of datasets.py."""
    b = base.astype(np.float64)
    q = queries.astype(np.float64)
    for m in (b, q):
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        m /= np.where(norms == 0, 1, norms)
    sims = q @ b.T
    return np.array([np.lexsort((np.arange(len(b)), -row))[:k] for row in sims])


def read_rows(path, fmt):
    """(dims, values) of every row of an .fvecs ('f') / .ivecs ('i') file."""
    rows = []
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        (d,) = struct.unpack_from("<i", data, off)
        rows.append(struct.unpack_from("<%d%s" % (d, fmt), data, off + 4))
        off += 4 + 4 * d
    return rows


def test_clustered_format_and_ground_truth(tmp_path):
    folder = make(tmp_path, "clustered", "--n", "1500", "--dim", "12", "--clusters", "7", "--seed", "5",
                  "--queries", "40")
    assert os.path.basename(folder) == "clustered-n1500-d12-c7-s5"
    base_rows = read_rows(os.path.join(folder, "base.fvecs"), "f")
    query_rows = read_rows(os.path.join(folder, "query.fvecs"), "f")
    gt_rows = read_rows(os.path.join(folder, "groundtruth.ivecs"), "i")
    assert len(base_rows) == 1500 and all(len(r) == 12 for r in base_rows)
    assert len(query_rows) == 40 and all(len(r) == 12 for r in query_rows)
    assert len(gt_rows) == 40 and all(len(r) == 10 for r in gt_rows)
    base = np.array(base_rows, dtype=np.float32)
    queries = np.array(query_rows, dtype=np.float32)
    assert not any((queries[i] == base).all(axis=1).any() for i in range(40))
    assert (np.array(gt_rows) == brute_force(base, queries, 10)).all()
    meta = json.load(open(os.path.join(folder, "meta.json")))
    assert (meta["n"], meta["dim"], meta["queries"], meta["k"], meta["metric"]) == (1500, 12, 40, 10, "cosine")
    assert set(meta["files"]) == {"base.fvecs", "query.fvecs", "groundtruth.ivecs"}


def test_clustered_is_deterministic(tmp_path):
    a = make(tmp_path / "a", "clustered", "--n", "9000", "--dim", "8", "--clusters", "3", "--seed", "9",
             "--queries", "5")
    b = make(tmp_path / "b", "clustered", "--n", "9000", "--dim", "8", "--clusters", "3", "--seed", "9",
             "--queries", "5")
    c = make(tmp_path / "c", "clustered", "--n", "9000", "--dim", "8", "--clusters", "3", "--seed", "10",
             "--queries", "5")
    d = make(tmp_path / "d", "clustered", "--n", "9000", "--dim", "8", "--clusters", "3", "--seed", "9",
             "--queries", "7")
    for fn in ("base.fvecs", "query.fvecs", "groundtruth.ivecs"):
        assert open(os.path.join(a, fn), "rb").read() == open(os.path.join(b, fn), "rb").read()
    assert open(os.path.join(a, "base.fvecs"), "rb").read() != open(os.path.join(c, "base.fvecs"), "rb").read()
    # The number of queries leaves the base alone.
    assert open(os.path.join(a, "base.fvecs"), "rb").read() == open(os.path.join(d, "base.fvecs"), "rb").read()
    assert os.path.getsize(os.path.join(d, "query.fvecs")) == 7 * (4 + 8 * 4)


def test_ground_truth_ties_and_zero_vectors():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((3000, 16)).astype(np.float32)
    base[100:160] = base[5]          # 61 identical vectors: ties across the candidate cut
    base[300] = 0
    queries = np.concatenate([base[5:6], np.zeros((1, 16), np.float32),
                              rng.standard_normal((20, 16)).astype(np.float32)])
    gt = datasets.ground_truth(base, queries, 10)
    assert gt[0].tolist() == [5] + list(range(100, 109))
    assert gt[1].tolist() == list(range(10))  # a zero query: all similarities 0, smallest ids
    exact = datasets.ground_truth_exact(base, queries, 10)
    assert (gt == exact).all()
    assert (gt[2:] == brute_force(base, queries[2:], 10)).all()


def test_ground_truth_in_blocks_matches():
    rng = np.random.default_rng(4)
    base = rng.standard_normal((5000, 24)).astype(np.float32)
    queries = rng.standard_normal((30, 24)).astype(np.float32)
    whole = datasets.ground_truth(base, queries, 10)
    assert (datasets.ground_truth(base, queries, 10, block_bytes=1) == whole).all()
    assert (datasets.ground_truth_exact(base, queries, 10, qblock=7, bblock=999) == whole).all()


def test_bad_arguments(tmp_path):
    script = os.path.join(VEC, "datasets.py")
    for args in (["clustered", "--n", "5"], ["clustered", "--dim", "0"], ["clustered", "--k", "0"],
                 ["fashion-mnist", "--queries", "0"], ["fashion-mnist", "--queries", "10001"]):
        p = subprocess.run([PY, script, *args, "--out", str(tmp_path)], capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and "datasets:" in p.stderr, (args, p.stderr)
    p = subprocess.run([PY, os.path.join(VEC, "run.py"), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "not a data set folder" in p.stderr


@pytest.mark.skipif(not os.path.exists(FMNIST), reason="dataset-fashion-mnist not installed")
def test_fashion_mnist(tmp_path):
    folder = make(tmp_path, "fashion-mnist", "--queries", "3")
    assert os.path.basename(folder) == "fashion-mnist-q3"
    base = datasets.read_vecs(os.path.join(folder, "base.fvecs"), "f")
    queries = datasets.read_vecs(os.path.join(folder, "query.fvecs"), "f")
    gt = datasets.read_vecs(os.path.join(folder, "groundtruth.ivecs"), "i")
    assert base.shape == (60000, 784) and queries.shape == (3, 784) and gt.shape == (3, 10)
    assert base.min() == 0 and base.max() == 255 and (base == np.round(base)).all()
    assert (gt == brute_force(np.asarray(base), np.asarray(queries), 10)).all()


def run_bench(tmp_path, folder, *args):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    p = subprocess.run([PY, os.path.join(VEC, "run.py"), folder, "--min-seconds", "0.05", "--load-conns", "2",
                        "--conns", "2", "--efs", "10,500", "--server-cpus", "0", "--client-cpus", "0",
                        "--out", str(out), *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    for fn in os.listdir(out):
        if fn.endswith(".stderr"):
            text = open(out / fn, errors="replace").read()
            for mark in ("AddressSanitizer", "ThreadSanitizer", "LeakSanitizer", "runtime error:"):
                assert mark not in text, text[:3000]
    return json.load(open(out / "results.json")), p.stdout


@pytest.mark.skipif(not have_hnswlib(), reason="python3-hnswlib not installed")
def test_run_hnswlib_side(tmp_path):
    folder = make(tmp_path, "clustered", "--n", "800", "--dim", "16", "--clusters", "4", "--queries", "30")
    res, md = run_bench(tmp_path, folder, "--no-hotkv")
    hn = res["hnswlib"]
    assert [q["ef"] for q in hn["queries"]] == [10, 500]
    assert hn["queries"][1]["recall"] >= 0.99          # ef 500 on 800 vectors is all but exhaustive
    assert all(q["queries"] >= 30 and q["cpu_us_per_query"] > 0 for q in hn["queries"])
    assert hn["load"]["vectors"] == 800 and hn["memory"]["rss_per_vector"] > 0
    assert res["hotkv"] is None
    assert "| 500 | - | " in md


def server_has_vector_sets(binary):
    sys.path.insert(0, VEC)
    import run  # noqa: E402
    import tempfile
    srv = run.Server("probe", [binary, "--threads", "2"], "0", tempfile.mkdtemp(prefix="vbench-probe-"))
    try:
        return not isinstance(run.Conn(srv.port).cmd("VCARD", "x"), run.ReplyError)
    finally:
        srv.stop()


@pytest.mark.skipif(not have_hnswlib(), reason="python3-hnswlib not installed")
def test_run_against_server(tmp_path, request):
    binary = request.config.getoption("--server-bin")
    folder = make(tmp_path, "clustered", "--n", "1000", "--dim", "16", "--clusters", "4", "--queries", "40")
    if not server_has_vector_sets(binary):
        res, md = run_bench(tmp_path, folder, "--hotkv", binary, "--hotkv-threads", "2", "--no-hnswlib")
        assert res["hotkv"]["skipped"].startswith("VCARD: ERR unknown command")
        pytest.skip("the server has no vector sets yet (the run skipped it, as it should)")
    # Two workers: VSIM from the two connections may run in parallel.
    res, md = run_bench(tmp_path, folder, "--hotkv", binary, "--hotkv-threads", "2")
    hk = res["hotkv"]
    assert "skipped" not in hk and hk["exit_code"] == 0
    assert hk["load"]["vectors"] == 1000 and hk["load"]["vadd_per_s"] > 0
    assert hk["memory"]["memory_usage_per_vector"] >= 16 * 4
    assert hk["memory"]["used_memory_per_vector"] >= 16 * 4
    steps = hk["queries"]
    assert [q["ef"] for q in steps] == [10, 500]
    assert all(q["short_replies"] == 0 and q["queries"] >= 40 for q in steps)
    assert steps[1]["recall"] >= 0.99
    assert steps[1]["recall"] >= res["hnswlib"]["queries"][1]["recall"] - 0.01
