#!/usr/bin/env python3
"""datasets.py - vector data sets for bench/vector/run.py, as .fvecs/.ivecs.

Two sources:

  fashion-mnist  the Debian package dataset-fashion-mnist (the ann-benchmarks
                 set): the 60,000 training images (784 pixels each, as
                 float32 0..255) are the base, the first --queries of the
                 10,000 test images are the queries;
  clustered      a generated Gaussian-mixture set of any size and dimension,
                 deterministic: the same arguments give the same bytes.

Each data set goes into its own folder under --out (default
bench/vector/data/, git-ignored), named after it:

  base.fvecs          the vectors to index
  query.fvecs         the queries
  groundtruth.ivecs   per query, the ids (0-based row numbers of base.fvecs)
                      of its --k nearest base vectors by cosine distance,
                      nearest first, found by brute force
  meta.json           how the set was made, sizes and the files' SHA-256

.fvecs / .ivecs: every vector is an int32 little-endian dimension d followed
by d float32 (fvecs) or int32 (ivecs) values. The ground truth is exact:
candidates from hnswlib's brute-force index (float32) are re-ranked in
float64 with ties broken by the smaller id, and a query whose candidate cut
is too close to call is redone in float64 over the whole base (see
ground_truth), so it depends neither on the BLAS library nor on block
sizes. The base is written and read back (memory-mapped) a block at a time.

    bench/vector/datasets.py fashion-mnist --queries 200
    bench/vector/datasets.py clustered --n 20000 --dim 64 --clusters 50 --seed 1

A measuring aid, not a test.
"""
import argparse
import gzip
import hashlib
import json
import os
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "data")
FMNIST_DIR = "/usr/share/datasets/fashion-mnist"

# Rows generated per block of a clustered set. Fixed, so that the bytes of a
# set depend only on its arguments and never on how much memory there is.
GEN_BLOCK = 8192


def log(msg):
    print("datasets: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- file formats

def vecs_header_dtype(kind, dim):
    """The numpy record of one .fvecs/.ivecs row: int32 dim, then dim values."""
    val = "<f4" if kind == "f" else "<i4"
    return np.dtype([("d", "<i4"), ("v", val, (dim,))])


def read_vecs(path, kind, mmap=True):
    """An (n, dim) array view of a .fvecs (kind 'f') or .ivecs (kind 'i') file.

    Checks that every row carries the same dimension; with mmap the data
    stays in the file and pages in as it is read."""
    with open(path, "rb") as f:
        head = f.read(4)
    if len(head) < 4:
        raise ValueError("%s: empty file" % path)
    dim = struct.unpack("<i", head)[0]
    if dim <= 0:
        raise ValueError("%s: bad dimension %d" % (path, dim))
    rec = vecs_header_dtype(kind, dim)
    size = os.path.getsize(path)
    if size % rec.itemsize:
        raise ValueError("%s: size %d is not a multiple of the row size %d" % (path, size, rec.itemsize))
    if mmap:
        arr = np.memmap(path, dtype=rec, mode="r")
    else:
        arr = np.fromfile(path, dtype=rec)
    if not np.all(arr["d"] == dim):
        raise ValueError("%s: rows of different dimensions" % path)
    return arr["v"]


class VecsWriter:
    """Appends blocks of rows to a .fvecs/.ivecs file."""

    def __init__(self, path, kind, dim):
        self.kind, self.dim = kind, dim
        self.rec = vecs_header_dtype(kind, dim)
        self.f = open(path, "wb")
        self.rows = 0

    def write(self, block):
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[1] != self.dim:
            raise ValueError("block shape %r, dim %d" % (block.shape, self.dim))
        out = np.empty(block.shape[0], dtype=self.rec)
        out["d"] = self.dim
        out["v"] = block
        out.tofile(self.f)
        self.rows += block.shape[0]

    def close(self):
        self.f.close()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------- ground truth

def normalise64(block):
    """Rows as float64 unit vectors; an all-zero row stays zero (cosine
    similarity 0 to everything, as a server that refuses nothing sees it)."""
    x = np.asarray(block, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    norms[norms == 0] = 1.0
    return x / norms[:, None]


def top_k_merge(best_sim, best_id, sim, base_off, k):
    """Merges a (q, b) block of similarities into the running top k.

    Order: higher similarity first, then the smaller id, so the result is a
    pure function of the similarities."""
    q, b = sim.shape
    ids = np.broadcast_to(np.arange(base_off, base_off + b, dtype=np.int64), (q, b))
    if b > k:
        # Keep every candidate tied with the k-th so the tie-break can see them.
        part = np.argpartition(-sim, k - 1, axis=1)[:, :k]
        kth = np.min(np.take_along_axis(sim, part, axis=1), axis=1)
        cand_sims, cand_ids = [], []
        for i in range(q):
            sel = np.nonzero(sim[i] >= kth[i])[0]
            cand_sims.append(sim[i, sel])
            cand_ids.append(ids[i, sel])
    else:
        cand_sims = list(sim)
        cand_ids = list(ids)
    out_sim = np.empty((q, k))
    out_id = np.empty((q, k), dtype=np.int64)
    for i in range(q):
        s = np.concatenate([best_sim[i], cand_sims[i]])
        d = np.concatenate([best_id[i], cand_ids[i]])
        order = np.lexsort((d, -s))[:k]
        out_sim[i] = s[order]
        out_id[i] = d[order]
    return out_sim, out_id


def ground_truth_exact(base, queries, k, qblock=256, bblock=16384):
    """Exact top-k ids by cosine similarity, (nq, k) int32, all in float64
    with numpy; base and queries are (n, dim) arrays (memory maps welcome).
    Slow where numpy has only the reference BLAS (about 1 GFLOP/s)."""
    n, nq = base.shape[0], queries.shape[0]
    gt = np.empty((nq, k), dtype=np.int32)
    t0 = time.time()
    single_block = n <= bblock
    base_n = normalise64(base) if single_block else None
    for q0 in range(0, nq, qblock):
        qn = normalise64(queries[q0:q0 + qblock])
        best_sim = np.full((qn.shape[0], k), -np.inf)
        best_id = np.full((qn.shape[0], k), np.iinfo(np.int64).max, dtype=np.int64)
        for b0 in range(0, n, bblock):
            bn = base_n if single_block else normalise64(base[b0:b0 + bblock])
            best_sim, best_id = top_k_merge(best_sim, best_id, qn @ bn.T, b0, k)
        gt[q0:q0 + qn.shape[0]] = best_id
        done = q0 + qn.shape[0]
        if done == nq or time.time() - t0 > 10:
            log("exact ground truth %d/%d queries" % (done, nq))
            t0 = time.time()
    return gt


def ground_truth(base, queries, k, extra=32, block_bytes=16 << 20):
    """Exact top-k ids by cosine similarity, (nq, k) int32.

    Fast path (hnswlib installed): hnswlib's brute-force index (SIMD float32
    inner products on unit vectors, one thread) picks the k + extra best
    candidates per query, base block by base block; they are re-ranked in
    float64 with ties broken by the smaller id, as ground_truth_exact does.
    The result is proven exact per query: every vector left out has a
    float32 similarity at most the worst candidate's, so a float64
    similarity at most that plus the float32 error bound; when the k-th
    re-ranked similarity is not above that, the query is redone by
    ground_truth_exact. Without hnswlib, everything goes that way."""
    n, nq = base.shape[0], queries.shape[0]
    if k > n:
        raise ValueError("k=%d is more than the %d base vectors" % (k, n))
    try:
        import hnswlib
    except ImportError:
        log("no hnswlib (python3-hnswlib): numpy brute force in float64, slow for big sets")
        return ground_truth_exact(base, queries, k)
    dim = base.shape[1]
    kc = min(n, k + extra)
    # Base blocks of about block_bytes of float32: each query scans a block
    # that stays in cache while the next queries scan it too.
    bblock = max(1024, block_bytes // (4 * dim))
    q32 = normalise64(queries).astype(np.float32)
    cand_id = np.empty((nq, 0), dtype=np.int64)
    cand_sim = np.empty((nq, 0), dtype=np.float32)
    t0 = time.time()
    for b0 in range(0, n, bblock):
        block = normalise64(base[b0:b0 + bblock]).astype(np.float32)
        bf = hnswlib.BFIndex(space="ip", dim=dim)
        bf.init_index(max_elements=block.shape[0])
        bf.add_items(block, np.arange(b0, b0 + block.shape[0]))
        kb = min(kc, block.shape[0])
        ids = np.empty((nq, kb), dtype=np.int64)
        sims = np.empty((nq, kb), dtype=np.float32)
        for q0 in range(0, nq, 500):
            lab, dist = bf.knn_query(q32[q0:q0 + 500], k=kb)
            ids[q0:q0 + 500] = lab
            sims[q0:q0 + 500] = 1.0 - dist
            if time.time() - t0 > 10:
                log("candidates: base %d/%d, queries %d/%d" % (b0, n, min(q0 + 500, nq), nq))
                t0 = time.time()
        del bf, block
        cand_id = np.concatenate([cand_id, ids], axis=1)
        cand_sim = np.concatenate([cand_sim, sims], axis=1)
        if cand_id.shape[1] > kc:
            keep = np.argsort(-cand_sim, axis=1, kind="stable")[:, :kc]
            cand_id = np.take_along_axis(cand_id, keep, axis=1)
            cand_sim = np.take_along_axis(cand_sim, keep, axis=1)
    # Float32 error of a dot product of two unit vectors rounded to float32:
    # at most (dim + 2) * 2^-24 for the sum, and 2 * 2^-24 for the rounding
    # of the inputs; doubled for margin.
    eps = 2 * (dim + 4) * 2.0 ** -24
    gt = np.empty((nq, k), dtype=np.int32)
    redo = []
    for i in range(nq):
        ids = cand_id[i]
        qv = normalise64(queries[i:i + 1])[0]
        sims = normalise64(base[np.sort(ids)]) @ qv
        ids = np.sort(ids)
        order = np.lexsort((ids, -sims))[:k]
        gt[i] = ids[order]
        if kc < n and not sims[order[-1]] > float(cand_sim[i].min()) + eps:
            redo.append(i)
    if redo:
        log("%d of %d queries have near-ties at the candidate cut: redone exactly" % (len(redo), nq))
        gt[redo] = ground_truth_exact(base, queries[redo], k)
    return gt


# ---------------------------------------------------------------- data sets

def finish(folder, meta, base_path, query_path, k):
    base = read_vecs(base_path, "f")
    queries = read_vecs(query_path, "f")
    log("%s: %d base x %d dims, %d queries; brute-force top-%d" % (
        os.path.basename(folder), base.shape[0], base.shape[1], queries.shape[0], k))
    gt = ground_truth(base, queries, k)
    gt_path = os.path.join(folder, "groundtruth.ivecs")
    w = VecsWriter(gt_path, "i", k)
    w.write(gt)
    w.close()
    meta.update({
        "metric": "cosine",
        "n": int(base.shape[0]),
        "dim": int(base.shape[1]),
        "queries": int(queries.shape[0]),
        "k": k,
        "files": {os.path.basename(p): sha256(p) for p in (base_path, query_path, gt_path)},
    })
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
        f.write("\n")
    log("wrote %s" % folder)
    print(folder)


def read_idx_images(path):
    """The uint8 (count, rows*cols) array of a gzipped IDX3 image file."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count, rows, cols = struct.unpack(">iiii", data[:16])
    if magic != 2051:
        raise ValueError("%s: not an IDX3 image file (magic %d)" % (path, magic))
    arr = np.frombuffer(data, dtype=np.uint8, offset=16)
    if arr.size != count * rows * cols:
        raise ValueError("%s: truncated" % path)
    return arr.reshape(count, rows * cols)


def make_fashion_mnist(args):
    src = args.source
    train_p = os.path.join(src, "train-images-idx3-ubyte.gz")
    test_p = os.path.join(src, "t10k-images-idx3-ubyte.gz")
    for p in (train_p, test_p):
        if not os.path.exists(p):
            sys.exit("datasets: %s missing: apt-get install dataset-fashion-mnist (or --source DIR)" % p)
    train = read_idx_images(train_p)
    test = read_idx_images(test_p)
    nq = test.shape[0] if args.queries is None else args.queries
    if not 1 <= nq <= test.shape[0]:
        sys.exit("datasets: --queries must be 1..%d" % test.shape[0])
    name = "fashion-mnist" if nq == test.shape[0] else "fashion-mnist-q%d" % nq
    folder = os.path.join(args.out, name)
    os.makedirs(folder, exist_ok=True)
    base_path = os.path.join(folder, "base.fvecs")
    query_path = os.path.join(folder, "query.fvecs")
    dim = train.shape[1]
    w = VecsWriter(base_path, "f", dim)
    w.write(train.astype(np.float32))
    w.close()
    w = VecsWriter(query_path, "f", dim)
    w.write(test[:nq].astype(np.float32))
    w.close()
    finish(folder, {"name": name, "source": "Debian dataset-fashion-mnist: train images (base), "
                    "first %d test images (queries), pixels as float32 0..255" % nq},
           base_path, query_path, args.k)


def make_clustered(args):
    """A Gaussian mixture: --clusters centres drawn N(0, 1) per coordinate,
    each point = a uniformly chosen centre + N(0, spread^2) noise per
    coordinate. Base and queries come from the same mixture, from separate
    random streams (so --queries does not change the base)."""
    n, dim, nc, nq = args.n, args.dim, args.clusters, args.queries
    if n < args.k or dim < 1 or nc < 1 or nq < 1 or args.spread < 0:
        sys.exit("datasets: need --n >= --k, --dim >= 1, --clusters >= 1, --queries >= 1, --spread >= 0")
    name = "clustered-n%d-d%d-c%d-s%d" % (n, dim, nc, args.seed)
    if args.spread != 1.0:
        name += "-sp%g" % args.spread
    folder = os.path.join(args.out, name)
    os.makedirs(folder, exist_ok=True)
    seeds = np.random.SeedSequence(args.seed).spawn(3)
    centres = np.random.Generator(np.random.PCG64(seeds[0])).standard_normal((nc, dim))

    def write(path, rows, seed):
        rng = np.random.Generator(np.random.PCG64(seed))
        w = VecsWriter(path, "f", dim)
        for r0 in range(0, rows, GEN_BLOCK):
            m = min(GEN_BLOCK, rows - r0)
            which = rng.integers(0, nc, size=m)
            pts = centres[which] + args.spread * rng.standard_normal((m, dim))
            w.write(pts.astype(np.float32))
        w.close()

    base_path = os.path.join(folder, "base.fvecs")
    query_path = os.path.join(folder, "query.fvecs")
    log("generating %s" % name)
    write(base_path, n, seeds[1])
    write(query_path, nq, seeds[2])
    finish(folder, {"name": name, "source": "generated Gaussian mixture",
                    "clusters": nc, "seed": args.seed, "spread": args.spread,
                    "generator": "numpy PCG64, SeedSequence(seed).spawn(3): centres, base, queries; "
                                 "%d rows per block" % GEN_BLOCK},
           base_path, query_path, args.k)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="set", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", default=DEFAULT_OUT,
                        help="parent folder; the set goes into OUT/<name>/ (default %(default)s)")
    common.add_argument("--k", type=int, default=10, help="ground-truth neighbours per query (default 10)")

    fm = sub.add_parser("fashion-mnist", parents=[common], help="Fashion-MNIST from the Debian package")
    fm.add_argument("--queries", type=int, default=None, help="use the first N test images (default all 10000)")
    fm.add_argument("--source", default=FMNIST_DIR, help="folder of the IDX .gz files (default %(default)s)")

    cl = sub.add_parser("clustered", parents=[common], help="generated Gaussian-mixture set")
    cl.add_argument("--n", type=int, default=20000, help="base vectors (default 20000)")
    cl.add_argument("--dim", type=int, default=64, help="dimension (default 64)")
    cl.add_argument("--clusters", type=int, default=50, help="mixture components (default 50)")
    cl.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    cl.add_argument("--queries", type=int, default=1000, help="queries (default 1000)")
    cl.add_argument("--spread", type=float, default=1.0,
                    help="noise standard deviation per coordinate; centres have 1 (default 1.0)")

    args = ap.parse_args()
    if args.k < 1:
        sys.exit("datasets: --k must be >= 1")
    if args.set == "fashion-mnist":
        make_fashion_mnist(args)
    else:
        make_clustered(args)


if __name__ == "__main__":
    main()
