"""Helpers shared by the vector-set tests (test_vset*.py)."""
import struct

import numpy as np

from resp import Error

WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
INVALID_VEC = Error("ERR invalid vector specification")


def arity(name):
    # Redis registers the vector-set commands under their upper-case names
    # and its arity error quotes that name.
    return Error("ERR wrong number of arguments for '%s' command" % name)


def values(vec):
    """VALUES n v1 .. vn, each value written so that it reads back as the
    same float32."""
    return ["VALUES", str(len(vec))] + [repr(float(x)) for x in vec]


def fp32(vec):
    return ["FP32", struct.pack("<%df" % len(vec), *[float(x) for x in vec])]


def rand_vectors(n, dim, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dim)).astype(np.float32)


def normalise(m):
    m = np.asarray(m, dtype=np.float64)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1
    return m / norms


def brute_topk(data, names, query, k):
    """Names of the k vectors most cosine-similar to query, best first,
    and their scores (1 + cos) / 2."""
    sims = normalise(data) @ normalise(query)
    order = np.argsort(-sims, kind="stable")[:k]
    return [names[i] for i in order], [(1 + sims[i]) / 2 for i in order]


def load(r, key, data, names, *opts, attrs=None):
    """VADD every row of data through a pipeline (FP32 blobs); returns the
    replies."""
    p = r.pipeline(transaction=False)
    for i, (v, n) in enumerate(zip(data, names)):
        extra = list(opts)
        if attrs is not None and attrs[i] is not None:
            extra += ["SETATTR", attrs[i]]
        p.execute_command("VADD", key, *fp32(v), n, *extra)
    return p.execute()


def pairs(flat, width=2):
    """A RESP2 flat VSIM reply as tuples of `width`."""
    assert len(flat) % width == 0, flat
    return [tuple(flat[i:i + width]) for i in range(0, len(flat), width)]


def recall(found, truth):
    return len(set(found) & set(truth)) / len(truth)


def check_exact(result, data, nm, q, k, tol):
    """result: [(name, score)] claimed to be the exact top k."""
    assert len(result) == k
    sims = normalise(data) @ normalise(q)
    exact = {n: (1 + s) / 2 for n, s in zip(nm, sims)}
    got = [s for _, s in result]
    assert all(a >= b - 1e-7 for a, b in zip(got, got[1:])), got
    for n, s in result:
        assert abs(s - exact[n]) <= tol, (n, s, exact[n])
    returned = {n for n, _ in result}
    worst = min(got)
    for n, s in exact.items():
        if n not in returned:
            assert s <= worst + tol, (n, s, worst)
