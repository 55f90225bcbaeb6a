#!/usr/bin/env python3
"""run.py - vector-set benchmark: HotKV's VADD/VSIM against hnswlib in-process
(and optionally a real Redis 8), on a data set made by datasets.py.

For each server (HotKV; Redis when --redis is given and it has vector sets)
it starts a private server on a free port, pinned with taskset to
--server-cpus, and from client processes pinned to --client-cpus:

  load     VADD key FP32 <blob> <id> NOQUANT|Q8|BIN M <m> EF <efc> for every
           base vector (ids are the decimal row numbers), pipelined over
           --load-conns connections; reports wall time, VADD/s, server CPU
           per VADD and memory per vector (INFO used_memory growth, MEMORY
           USAGE of the key, server RSS growth);
  queries  for each ef of --efs, VSIM key FP32 <blob> COUNT <k> EF <ef> over
           --conns connections, one request in flight per connection; every
           connection repeats its share of the queries until --min-seconds
           have passed, the first pass gives recall@k against the ground
           truth; reports queries/s and server CPU per query (utime+stime
           of /proc/<pid>/stat, all threads, before and after the step).

hnswlib (Debian python3-hnswlib) runs in this process, pinned to
--hnswlib-cpus: same M, ef_construction, space 'cosine' and data. Its index
is built first, single-threaded (timed), with memory per vector as the
process's RSS growth over init_index + add_items (plus an estimate from
hnswlib's memory layout, for reference); its query step for an EF runs
right after HotKV's step for that EF (so both see the same machine load),
single-threaded (set_num_threads(1), one batch knn_query per pass) with
CPU per query from time.process_time.

Output: markdown tables on stdout and in results.md, every raw number in
results.json, and the server logs, in --out (default
bench/results/<UTC date>-<host>/vector/<data set>/). A measuring tool: it
never fails on a slow number, only on a server that answers wrongly.

    bench/vector/datasets.py clustered --n 20000 --dim 64
    bench/vector/run.py bench/vector/data/clustered-n20000-d64-c50-s1 --hotkv build/hotkv-server
"""
import argparse
import atexit
import json
import multiprocessing as mp
import os
import platform
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import datasets  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
KEY = b"vbench"


def log(msg):
    print("run: " + msg, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


# ---------------------------------------------------------------- RESP client

class ReplyError(str):
    pass


class Conn:
    """A minimal RESP2 client: pipelined sends, typed replies (bytes, int,
    list, ReplyError, None; RESP3 types are read too, for robustness)."""

    def __init__(self, port, timeout=600):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise BenchError("server closed the connection")
        if self.pos:
            del self.buf[:self.pos]
            self.pos = 0
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        data = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n + 2
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest
        if t == b"-":
            return ReplyError(rest.decode(errors="replace"))
        if t == b":":
            return int(rest)
        if t in (b"$", b"="):
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"%":
            return [(self.read(), self.read()) for _ in range(int(rest))]
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"#":
            return rest == b"t"
        raise BenchError("bad reply line %r" % line[:80])

    def cmd(self, *args):
        self.send(encode(*args))
        return self.read()


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = b"%d" % a
        out.append(b"$%d\r\n" % len(a))
        out.append(a)
        out.append(b"\r\n")
    return b"".join(out)


# ---------------------------------------------------------------- processes

def parse_cpus(spec):
    """The CPU numbers of a taskset -c list such as '0', '2-3', '1,3,5-6'."""
    cpus = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    if not cpus:
        raise argparse.ArgumentTypeError("empty CPU list %r" % spec)
    return sorted(cpus)


def proc_cpu_ticks(pid):
    """utime + stime of a process (all its threads), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def proc_sched_ns(pid):
    """Run time of all live threads of a process in ns (schedstat), or None."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total


def proc_rss(pid):
    """Resident anonymous memory of a process in bytes (RssAnon of
    /proc/<pid>/status): the heap, without file-backed pages such as the
    memory-mapped data set files, which the kernel may drop and re-read at
    any time and would make a difference of two readings meaningless."""
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise BenchError("no RssAnon for %s" % pid)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """One private server process, stopped on exit, error or signal."""

    live = []

    def __init__(self, name, argv, cpus, workdir):
        self.name = name
        self.port = free_port()
        self.logpath = os.path.join(workdir, name + ".log")
        self.cmdline = ["taskset", "-c", cpus] + [argv[0], "--port", str(self.port), "--bind", "127.0.0.1"] + argv[1:]
        # Both keep their files (none: no save points) in the run's directory.
        self.cmdline += ["--dir", workdir, "--save", ""]
        self.cmdline += ["--logfile", self.logpath]
        log("starting %s: %s" % (name, shlex.join(self.cmdline)))
        self.proc = subprocess.Popen(self.cmdline, stdout=subprocess.DEVNULL, stderr=open(self.logpath + ".stderr", "w"))
        Server.live.append(self)
        self.pid = self.proc.pid  # taskset execs the server: same pid
        deadline = time.time() + 30
        while True:
            if self.proc.poll() is not None:
                raise BenchError("%s exited at start (rc %s); see %s" % (name, self.proc.returncode, self.logpath))
            try:
                c = Conn(self.port, timeout=5)
                if c.cmd("PING") == b"PONG":
                    c.close()
                    break
                c.close()
            except OSError:
                pass
            if time.time() > deadline:
                raise BenchError("%s did not answer PING in 30s" % name)
            time.sleep(0.05)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self not in Server.live:
            return
        Server.live.remove(self)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        log("stopped %s (rc %s)" % (self.name, self.proc.returncode))


def stop_all_servers():
    for s in list(Server.live):
        try:
            s.stop()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass


def on_signal(signum, frame):
    stop_all_servers()
    sys.exit(128 + signum)


def info_field(conn, section, field):
    info = conn.cmd("INFO", section)
    if isinstance(info, ReplyError):
        raise BenchError("INFO %s: %s" % (section, info))
    for line in info.decode().split("\r\n"):
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise BenchError("INFO %s has no %s" % (section, field))


# ---------------------------------------------------------------- client workers
# Run in forked children: the data set arrays are inherited, not copied.

DATA = {}


def load_worker(port, ids, m, efc, quant, pipeline, barrier, out):
    try:
        base = DATA["base"]
        c = Conn(port)
        opts = [b"$%d\r\n%s\r\n" % (len(quant), quant), b"$1\r\nM\r\n", b"$%d\r\n%d\r\n" % (len(str(m)), m),
                b"$2\r\nEF\r\n", b"$%d\r\n%d\r\n" % (len(str(efc)), efc)]
        head = b"*%d\r\n$4\r\nVADD\r\n$%d\r\n%s\r\n$4\r\nFP32\r\n" % (5 + len(opts), len(KEY), KEY)
        tail = b"".join(opts)

        def batch(lo, hi):
            parts = []
            for i in ids[lo:hi]:
                blob = base[i].astype("<f4").tobytes()
                name = b"%d" % i
                parts += [head, b"$%d\r\n" % len(blob), blob, b"\r\n$%d\r\n%s\r\n" % (len(name), name), tail]
            return b"".join(parts)

        barrier.wait()
        t0 = time.perf_counter()
        pending = 0
        lo = 0
        bad = None
        while lo < len(ids) or pending:
            sent = 0
            if lo < len(ids):
                hi = min(lo + pipeline, len(ids))
                c.send(batch(lo, hi))
                sent = hi - lo
                lo = hi
            # Read the previous batch's replies while the server works on this one.
            for _ in range(pending):
                r = c.read()
                if r != 1 and bad is None:
                    bad = r
            pending = sent
        t1 = time.perf_counter()
        out.send({"t0": t0, "t1": t1, "n": len(ids), "bad": None if bad is None else repr(bad)})
    except Exception as e:  # noqa: BLE001 - reported to the parent
        out.send({"error": "%s: %s" % (type(e).__name__, e)})


def query_worker(port, qids, k, ef, extra, min_seconds, depth, ping, barrier, out):
    """VSIM (or, with ping, PING) for the queries qids, depth requests in
    flight, repeated until min_seconds have passed; the first pass's
    replies come back for recall."""
    try:
        queries = DATA["queries"]
        c = Conn(port)
        if ping:
            reqs = [encode(b"PING")] * len(qids)
        else:
            args_tail = [b"COUNT", b"%d" % k, b"EF", b"%d" % ef] + extra
            reqs = [encode(b"VSIM", KEY, b"FP32", queries[i].astype("<f4").tobytes(), *args_tail) for i in qids]
        groups = [b"".join(reqs[i:i + depth]) for i in range(0, len(reqs), depth)]
        sizes = [len(reqs[i:i + depth]) for i in range(0, len(reqs), depth)]
        first = []
        done = 0
        barrier.wait()
        t0 = time.perf_counter()
        deadline = t0 + min_seconds
        passes = 0
        while True:
            for g, m in zip(groups, sizes):
                c.send(g)
                for _ in range(m):
                    r = c.read()
                    if passes == 0:
                        first.append(r)
                    elif isinstance(r, ReplyError):
                        raise BenchError("%s replied %r" % ("PING" if ping else "VSIM", r))
            done += len(reqs)
            passes += 1
            if time.perf_counter() >= deadline:
                break
        t1 = time.perf_counter()
        results = []
        for r in first:
            if ping:
                if r != b"PONG":
                    raise BenchError("PING replied %r" % (r,))
                continue
            if not isinstance(r, list):
                raise BenchError("VSIM replied %r" % (r,))
            results.append([int(x) for x in r])
        out.send({"t0": t0, "t1": t1, "n": done, "passes": passes, "results": results})
    except Exception as e:  # noqa: BLE001 - reported to the parent
        out.send({"error": "%s: %s" % (type(e).__name__, e)})


def run_workers(target, per_worker, server, client_cpus):
    """Starts one forked process per argument tuple, pinned to client_cpus,
    releases them together, and returns (their reports, server CPU ticks,
    server schedstat ns, wall seconds from release to the last finish)."""
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(len(per_worker) + 1)
    procs, pipes = [], []
    for args in per_worker:
        rd, wr = ctx.Pipe(duplex=False)
        p = ctx.Process(target=pinned, args=(client_cpus, target, args + (barrier, wr)))
        p.start()
        procs.append(p)
        pipes.append(rd)
    try:
        barrier.wait(timeout=600)
    except Exception:
        for p in procs:
            p.kill()
        raise BenchError("client processes did not start")
    ticks0 = proc_cpu_ticks(server.pid)
    ns0 = proc_sched_ns(server.pid)
    reports = [rd.recv() for rd in pipes]
    ticks1 = proc_cpu_ticks(server.pid)
    ns1 = proc_sched_ns(server.pid)
    for p in procs:
        p.join()
    for r in reports:
        if "error" in r:
            raise BenchError("client: " + r["error"])
    wall = max(r["t1"] for r in reports) - min(r["t0"] for r in reports)
    sched = None if ns0 is None or ns1 is None else ns1 - ns0
    return reports, ticks1 - ticks0, sched, wall


def pinned(cpus, target, args):
    # A client process never stops servers: that is the parent's job.
    Server.live = []
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.sched_setaffinity(0, cpus)
    target(*args)


# ---------------------------------------------------------------- measurements

def recall_at_k(results, gt, k):
    """Mean over queries of |returned ∩ true top k| / k."""
    hit = 0
    for row, truth in zip(results, gt):
        hit += len(set(row[:k]) & set(truth[:k].tolist()))
    return hit / (k * len(gt))


def bench_server(name, binary, extra_argv, args, workdir, after_step=None):
    """Loads and queries one server; after_step(ef), when given, runs after
    each EF step (the hnswlib step of the same EF, alternating)."""
    base, queries, gt = DATA["base"], DATA["queries"], DATA["gt"]
    n, dim = base.shape
    res = {"server": name, "binary": binary}
    srv = Server(name, [binary] + extra_argv, args.server_cpus, workdir)
    res["cmdline"] = shlex.join(srv.cmdline)
    try:
        c = Conn(srv.port)
        probe = c.cmd("VCARD", KEY)
        if isinstance(probe, ReplyError):
            log("%s: VCARD answers %r: no vector sets, skipped" % (name, str(probe)))
            res["skipped"] = "VCARD: %s" % probe
            return res
        version = c.cmd("INFO", "server")
        for line in version.decode().split("\r\n"):
            if line.startswith(("redis_version:", "hotkv_version:", "hotkv_git_sha1:", "redis_git_sha1:")):
                res[line.split(":")[0]] = line.split(":", 1)[1]
        c.cmd("DEL", KEY)
        mem0 = info_field(c, "memory", "used_memory")
        rss0 = proc_rss(srv.pid)

        # Load.
        quant = {"noquant": b"NOQUANT", "q8": b"Q8", "bin": b"BIN"}[args.quant]
        ids = np.arange(n)
        shares = [ids[i::args.load_conns] for i in range(args.load_conns)]
        log("%s: loading %d vectors of %d dims (VADD %s M %d EF %d, %d connections, pipeline %d)" % (
            name, n, dim, quant.decode(), args.m, args.ef_construction, args.load_conns, args.pipeline))
        reps, ticks, sched, wall = run_workers(
            load_worker, [(srv.port, s, args.m, args.ef_construction, quant, args.pipeline) for s in shares],
            srv, args.client_cpus)
        bad = [r["bad"] for r in reps if r["bad"]]
        if bad:
            raise BenchError("%s: VADD replied %s (expected 1 for a new element)" % (name, bad[0]))
        card = c.cmd("VCARD", KEY)
        if card != n:
            raise BenchError("%s: VCARD %r after loading %d vectors" % (name, card, n))
        mem1 = info_field(c, "memory", "used_memory")
        rss1 = proc_rss(srv.pid)
        usage = c.cmd("MEMORY", "USAGE", KEY)
        vinfo = c.cmd("VINFO", KEY)
        res["load"] = {
            "vectors": n, "seconds": wall, "vadd_per_s": n / wall,
            "server_cpu_ticks": ticks, "server_cpu_us_per_vadd": ticks * 1e6 / CLK_TCK / n,
            "server_sched_us_per_vadd": None if sched is None else sched / 1e3 / n,
        }
        res["memory"] = {
            "used_memory_before": mem0, "used_memory_after": mem1,
            "used_memory_per_vector": (mem1 - mem0) / n,
            "memory_usage_key": usage if isinstance(usage, int) else str(usage),
            "memory_usage_per_vector": usage / n if isinstance(usage, int) else None,
            "rss_before": rss0, "rss_after": rss1, "rss_per_vector": (rss1 - rss0) / n,
        }
        res["vinfo"] = flat_pairs(vinfo)
        log("%s: loaded in %.2fs (%.0f VADD/s, %.1f us server CPU per VADD); %.0f B/vector used_memory, "
            "MEMORY USAGE %s, %.0f B/vector RSS" % (
                name, wall, n / wall, res["load"]["server_cpu_us_per_vadd"], res["memory"]["used_memory_per_vector"],
                usage, res["memory"]["rss_per_vector"]))

        # Queries.
        extra = [b"NOTHREAD"] if args.nothread else []
        qids = np.arange(len(queries))
        qshares = [qids[i::args.conns] for i in range(args.conns) if len(qids[i::args.conns])]
        res["queries"] = []
        depth = args.query_pipeline
        if args.warmup:
            run_workers(query_worker, [(srv.port, s, args.k, args.efs[0], extra, 0.0, depth, False) for s in qshares],
                        srv, args.client_cpus)
        # The protocol floor: PING from the same connections at the same depth.
        reps, ticks, sched, wall = run_workers(
            query_worker, [(srv.port, s, args.k, 0, extra, args.min_seconds, depth, True) for s in qshares],
            srv, args.client_cpus)
        total = sum(r["n"] for r in reps)
        res["ping"] = {"requests": total, "seconds": wall, "rps": total / wall, "server_cpu_ticks": ticks,
                       "server_cpu_us_per_request": ticks * 1e6 / CLK_TCK / total,
                       "server_sched_us_per_request": None if sched is None else sched / 1e3 / total}
        log("%s: PING: %.0f req/s, %.1f us server CPU per request (the protocol floor of one VSIM)" % (
            name, res["ping"]["rps"], res["ping"]["server_cpu_us_per_request"]))
        for ef in args.efs:
            reps, ticks, sched, wall = run_workers(
                query_worker, [(srv.port, s, args.k, ef, extra, args.min_seconds, depth, False) for s in qshares],
                srv, args.client_cpus)
            total = sum(r["n"] for r in reps)
            results = [None] * len(queries)
            for s, r in zip(qshares, reps):
                for qi, row in zip(s, r["results"]):
                    results[qi] = row
            short = sum(1 for row in results if len(row) != args.k)
            step = {
                "ef": ef, "queries": total, "passes": min(r["passes"] for r in reps), "seconds": wall,
                "qps": total / wall, "recall": recall_at_k(results, gt, args.k),
                "server_cpu_ticks": ticks, "server_cpu_us_per_query": ticks * 1e6 / CLK_TCK / total,
                "server_sched_us_per_query": None if sched is None else sched / 1e3 / total,
                "short_replies": short,
            }
            res["queries"].append(step)
            log("%s: ef %d: recall %.4f, %.0f q/s, %.1f us server CPU per query (%d ticks, schedstat %s us)%s" % (
                name, ef, step["recall"], step["qps"], step["server_cpu_us_per_query"], ticks,
                "-" if sched is None else "%.1f" % step["server_sched_us_per_query"],
                "; %d replies with fewer than %d elements" % (short, args.k) if short else ""))
            if after_step is not None:
                after_step(ef)
        if not srv.alive():
            raise BenchError("%s exited during the run; see %s" % (name, srv.logpath))
        c.close()
    finally:
        srv.stop()
        res["exit_code"] = srv.proc.returncode
        if srv.proc.returncode != 0:
            log("%s: exit code %s after SIGTERM; see %s" % (name, srv.proc.returncode, srv.logpath))
    return res


def flat_pairs(reply):
    """VINFO's reply (flat name/value array in RESP2) as a JSON-friendly dict."""
    if isinstance(reply, ReplyError) or not isinstance(reply, list):
        return {"reply": str(reply)}
    out = {}
    for i in range(0, len(reply) - 1, 2):
        k = reply[i].decode(errors="replace") if isinstance(reply[i], bytes) else str(reply[i])
        v = reply[i + 1]
        out[k] = v.decode(errors="replace") if isinstance(v, bytes) else v
    return out


def hnswlib_layout_bytes(n, dim, m):
    """Bytes per element that hnswlib 0.6 allocates for an index of n
    elements (hnswalg.h): the level-0 block (2M links + count, the vector,
    the label), the level pointer, the level number, the per-element mutex,
    the label map entry (~40 B: node + bucket), the upper-level link blocks
    (M links + count, 1/(M-1) levels per element on average, + 16 B malloc
    header), the 2-byte visited-list slot of one thread, plus the fixed
    65536 update mutexes spread over n."""
    level0 = (2 * m) * 4 + 4 + dim * 4 + 8
    upper = (m * 4 + 4 + 16) / (m - 1)
    return level0 + 8 + 4 + 40 + 40 + upper + 2 + HNSWLIB_FIXED_BYTES / n


# hnswlib's link_list_update_locks_: 65536 std::mutex of 40 bytes, whatever n.
HNSWLIB_FIXED_BYTES = 65536 * 40


class HnswRun:
    """hnswlib in this process: build() once, then query(ef) per step, so
    its steps can alternate with a server's (both then see the same
    machine load). Runs pinned to --hnswlib-cpus, restoring the process's
    affinity after each call."""

    def __init__(self, args):
        import hnswlib
        self.hnswlib = hnswlib
        self.args = args
        self.res = {"hnswlib_file": hnswlib.__file__, "cpus": args.hnswlib_cpus, "queries": []}
        self.index = None

    def _pinned(self, fn):
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, self.args.hnswlib_cpus)
        try:
            return fn()
        finally:
            os.sched_setaffinity(0, saved)

    def build(self):
        self._pinned(self._build)

    def _build(self):
        args = self.args
        base = DATA["base"]
        n, dim = base.shape
        labels = np.arange(n)
        self.qdata = np.ascontiguousarray(DATA["queries"], dtype=np.float32)
        rss0 = proc_rss("self")
        index = self.hnswlib.Index(space="cosine", dim=dim)
        index.init_index(max_elements=n, M=args.m, ef_construction=args.ef_construction, random_seed=100)
        index.set_num_threads(1)
        log("hnswlib: inserting %d vectors single-threaded (M %d, ef_construction %d)" % (
            n, args.m, args.ef_construction))
        w0, c0 = time.perf_counter(), time.process_time()
        index.add_items(base, labels, num_threads=1)
        w1, c1 = time.perf_counter(), time.process_time()
        rss1 = proc_rss("self")
        self.index = index
        self.res["load"] = {"vectors": n, "seconds": w1 - w0, "inserts_per_s": n / (w1 - w0),
                            "cpu_us_per_insert": (c1 - c0) * 1e6 / n}
        self.res["memory"] = {"rss_before": rss0, "rss_after": rss1, "rss_per_vector": (rss1 - rss0) / n,
                              "layout_estimate_per_vector": hnswlib_layout_bytes(n, dim, args.m),
                              "layout_fixed_per_vector": HNSWLIB_FIXED_BYTES / n}
        log("hnswlib: inserted in %.2fs (%.0f/s); %.0f B/vector RSS growth, %.0f B/vector by layout" % (
            w1 - w0, n / (w1 - w0), self.res["memory"]["rss_per_vector"],
            self.res["memory"]["layout_estimate_per_vector"]))

    def query(self, ef):
        if any(q["ef"] == ef for q in self.res["queries"]):
            return
        self._pinned(lambda: self._query(ef))

    def _query(self, ef):
        args = self.args
        self.index.set_ef(max(ef, args.k))
        labels_out = None
        done = 0
        w0, c0 = time.perf_counter(), time.process_time()
        while True:
            lab, _ = self.index.knn_query(self.qdata, k=args.k, num_threads=1)
            if labels_out is None:
                labels_out = lab
            done += len(self.qdata)
            if time.process_time() - c0 >= args.min_seconds:
                break
        w1, c1 = time.perf_counter(), time.process_time()
        step = {"ef": ef, "queries": done, "seconds": w1 - w0, "qps": done / (w1 - w0),
                "recall": recall_at_k(labels_out.tolist(), DATA["gt"], args.k),
                "cpu_us_per_query": (c1 - c0) * 1e6 / done}
        self.res["queries"].append(step)
        log("hnswlib: ef %d: recall %.4f, %.0f q/s, %.1f us CPU per query" % (
            ef, step["recall"], step["qps"], step["cpu_us_per_query"]))

    def finish(self):
        """Runs the steps no server run asked for; returns the results."""
        for ef in self.args.efs:
            self.query(ef)
        self.res["queries"].sort(key=lambda q: self.args.efs.index(q["ef"]))
        self.index = None
        return self.res


# ---------------------------------------------------------------- report

def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def verdict(ok):
    return "-" if ok is None else ("yes" if ok else "**no**")


def report(meta, args, hk, hn, rd):
    """The markdown tables; hk/hn/rd are the result dicts (or None)."""
    ok_hk = hk is not None and "skipped" not in hk
    ok_rd = rd is not None and "skipped" not in rd
    lines = []
    cols = ["ef", "recall HotKV", "recall hnswlib"]
    if ok_rd:
        cols.append("recall Redis")
    cols += ["CPU µs/query HotKV (server)", "CPU µs/query hnswlib"]
    if ok_rd:
        cols.append("CPU µs/query Redis (server)")
    cols += ["q/s HotKV (%d conns)" % args.conns, "q/s hnswlib (1 thread)"]
    if ok_rd:
        cols.append("q/s Redis")
    cols += ["recall ≥ hnswlib − 0.01", "CPU ≤ hnswlib"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for i, ef in enumerate(args.efs):
        a = hk["queries"][i] if ok_hk else None
        b = hn["queries"][i] if hn else None
        r = rd["queries"][i] if ok_rd else None
        row = [str(ef), fmt(a and a["recall"], ".4f"), fmt(b and b["recall"], ".4f")]
        if ok_rd:
            row.append(fmt(r["recall"], ".4f"))
        row += [fmt(a and a["server_cpu_us_per_query"], ".1f"), fmt(b and b["cpu_us_per_query"], ".1f")]
        if ok_rd:
            row.append(fmt(r["server_cpu_us_per_query"], ".1f"))
        row += [fmt(a and a["qps"], ".0f"), fmt(b and b["qps"], ".0f")]
        if ok_rd:
            row.append(fmt(r["qps"], ".0f"))
        both = a is not None and b is not None
        row += [verdict(a["recall"] >= b["recall"] - 0.01 if both else None),
                verdict(a["server_cpu_us_per_query"] <= b["cpu_us_per_query"] if both else None)]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")

    cols = ["", "HotKV", "hnswlib"] + (["Redis"] if ok_rd else []) + ["expected", "met"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))

    def g(res, *path):
        if res is None or "skipped" in res:
            return None
        for p in path:
            res = res.get(p) if isinstance(res, dict) else None
            if res is None:
                return None
        return res

    def row(label, hkv, hnv, rdv, spec, expected="", ok=None):
        cells = [label, fmt(hkv, spec), fmt(hnv, spec)] + ([fmt(rdv, spec)] if ok_rd else []) + [expected, verdict(ok)]
        lines.append("| " + " | ".join(cells) + " |")

    row("server CPU µs per PING, same connections (protocol floor of a VSIM)", g(hk, "ping", "server_cpu_us_per_request"),
        None, g(rd, "ping", "server_cpu_us_per_request"), ".1f")
    hk_rate, hn_rate = g(hk, "load", "vadd_per_s"), g(hn, "load", "inserts_per_s")
    row("load: seconds", g(hk, "load", "seconds"), g(hn, "load", "seconds"), g(rd, "load", "seconds"), ".2f")
    row("load: vectors/s (HotKV: VADD over %d conns; hnswlib: 1 thread)" % args.load_conns,
        hk_rate, hn_rate, g(rd, "load", "vadd_per_s"), ".0f", "HotKV ≥ hnswlib",
        None if hk_rate is None or hn_rate is None else hk_rate >= hn_rate)
    row("load: CPU µs per vector (server / in-process)", g(hk, "load", "server_cpu_us_per_vadd"),
        g(hn, "load", "cpu_us_per_insert"), g(rd, "load", "server_cpu_us_per_vadd"), ".1f")
    hn_mem = g(hn, "memory", "rss_per_vector")
    hk_used = g(hk, "memory", "used_memory_per_vector")
    hk_rss = g(hk, "memory", "rss_per_vector")
    row("memory B/vector: HotKV used_memory growth; hnswlib RSS growth", hk_used, hn_mem,
        g(rd, "memory", "used_memory_per_vector"), ".0f", "≤ hnswlib + 10%",
        None if hk_used is None or hn_mem is None else hk_used <= 1.1 * hn_mem)
    row("memory B/vector: RSS growth (both)", hk_rss, hn_mem, g(rd, "memory", "rss_per_vector"), ".0f",
        "≤ hnswlib + 10%", None if hk_rss is None or hn_mem is None else hk_rss <= 1.1 * hn_mem)
    row("memory B/vector: MEMORY USAGE key / n; hnswlib layout estimate", g(hk, "memory", "memory_usage_per_vector"),
        g(hn, "memory", "layout_estimate_per_vector"), g(rd, "memory", "memory_usage_per_vector"), ".0f")
    fixed = g(hn, "memory", "layout_fixed_per_vector")
    row("hnswlib: of its B/vector, the fixed 2.6 MB of update locks", None, fixed, None, ".0f")
    row("raw float32 vector bytes", meta["dim"] * 4, meta["dim"] * 4, meta["dim"] * 4 if ok_rd else None, ".0f")
    return "\n".join(lines) + "\n"


def machine_lines():
    out = []
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        model = "?"
    out.append("- machine: %s, %d CPUs (%s), kernel %s, load average %s" % (
        platform.node(), os.cpu_count(), model, platform.release(),
        " ".join("%.2f" % x for x in os.getloadavg())))
    try:
        rev = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        rev = "?"
    out.append("- HotKV revision: %s" % (rev or "?"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("dataset", help="a folder made by datasets.py (base.fvecs, query.fvecs, groundtruth.ivecs)")
    ap.add_argument("--hotkv", default=os.path.join(REPO, "build", "hotkv-server"), help="HotKV binary (default %(default)s)")
    ap.add_argument("--hotkv-threads", type=int, default=None,
                    help="HotKV --threads (default: the number of --server-cpus)")
    ap.add_argument("--redis", default=None, help="also run a redis-server with vector sets (Redis 8); skipped without VADD")
    ap.add_argument("--no-hotkv", action="store_true", help="skip the HotKV run")
    ap.add_argument("--no-hnswlib", action="store_true", help="skip the hnswlib run")
    ap.add_argument("--server-cpus", default="0", help="taskset -c list of the servers (default %(default)s)")
    ap.add_argument("--client-cpus", default=None, help="CPU list of the client processes (default: 1, or 0 on a 1-CPU machine)")
    ap.add_argument("--hnswlib-cpus", default=None, help="CPU list of the hnswlib run (default: the first server CPU)")
    ap.add_argument("--load-conns", type=int, default=4, help="VADD connections (default %(default)s)")
    ap.add_argument("--pipeline", type=int, default=64, help="VADDs per pipelined batch and connection (default %(default)s)")
    ap.add_argument("--conns", type=int, default=8, help="VSIM connections (default %(default)s)")
    ap.add_argument("--query-pipeline", type=int, default=1,
                    help="VSIM requests in flight per connection (default %(default)s: closed loop)")
    ap.add_argument("--quant", choices=["noquant", "q8", "bin"], default="noquant", help="VADD quantisation (default %(default)s)")
    ap.add_argument("--m", "--M", dest="m", type=int, default=16, help="HNSW M (default %(default)s)")
    ap.add_argument("--ef-construction", type=int, default=200, help="VADD EF / hnswlib ef_construction (default %(default)s)")
    ap.add_argument("--efs", default="10,20,40,80,150,300,500", help="VSIM EF values (default %(default)s)")
    ap.add_argument("--k", type=int, default=10, help="COUNT and recall@k (default %(default)s; at most the ground truth's k)")
    ap.add_argument("--queries", type=int, default=None, help="use only the first N queries")
    ap.add_argument("--min-seconds", type=float, default=2.0,
                    help="each ef step repeats the queries until this long (default %(default)s)")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false", help="skip the untimed first pass")
    ap.add_argument("--nothread", action="store_true", help="add NOTHREAD to VSIM (Redis 8: no per-query threads)")
    ap.add_argument("--out", default=None, help="result folder (default bench/results/<date>-<host>/vector/<set>)")
    args = ap.parse_args()

    try:
        args.efs = [int(x) for x in args.efs.split(",") if x.strip()]
        server_cpus = parse_cpus(args.server_cpus)
        if args.client_cpus is None:
            args.client_cpus = "1" if os.cpu_count() > 1 else "0"
        args.client_cpus = parse_cpus(args.client_cpus)
        args.hnswlib_cpus = parse_cpus(args.hnswlib_cpus) if args.hnswlib_cpus else server_cpus[:1]
    except (ValueError, argparse.ArgumentTypeError) as e:
        ap.error(str(e))
    if not args.efs or min(args.efs) < 1 or args.k < 1 or args.load_conns < 1 or args.conns < 1 or args.pipeline < 1 \
            or args.query_pipeline < 1:
        ap.error("--efs, --k, --load-conns, --conns, --pipeline and --query-pipeline must be positive")
    if args.hotkv_threads is None:
        args.hotkv_threads = len(server_cpus)

    meta_path = os.path.join(args.dataset, "meta.json")
    if not os.path.exists(meta_path):
        sys.exit("run: %s is not a data set folder (no meta.json); make one with bench/vector/datasets.py" % args.dataset)
    with open(meta_path) as f:
        meta = json.load(f)
    base = datasets.read_vecs(os.path.join(args.dataset, "base.fvecs"), "f")
    queries = datasets.read_vecs(os.path.join(args.dataset, "query.fvecs"), "f")
    gt = datasets.read_vecs(os.path.join(args.dataset, "groundtruth.ivecs"), "i")
    if args.queries is not None:
        if not 1 <= args.queries <= len(queries):
            sys.exit("run: --queries must be 1..%d" % len(queries))
        queries, gt = queries[:args.queries], gt[:args.queries]
    if args.k > gt.shape[1]:
        sys.exit("run: --k %d is more than the ground truth's %d" % (args.k, gt.shape[1]))
    DATA["base"] = np.ascontiguousarray(base, dtype=np.float32)
    DATA["queries"] = np.ascontiguousarray(queries, dtype=np.float32)
    DATA["gt"] = np.ascontiguousarray(gt)
    meta["dim"] = base.shape[1]
    name = meta.get("name", os.path.basename(os.path.normpath(args.dataset)))
    log("data set %s: %d x %d, %d queries, top-%d ground truth" % (name, base.shape[0], base.shape[1], len(queries), gt.shape[1]))

    out = args.out or os.path.join(REPO, "bench", "results", "%s-%s" % (
        time.strftime("%Y%m%d-%H%M%S", time.gmtime()), platform.node().split(".")[0]), "vector", name)
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="hotkv-vbench-")

    atexit.register(stop_all_servers)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    hk = hn = rd = None
    hrun = None
    try:
        if not args.no_hnswlib:
            try:
                hrun = HnswRun(args)
            except ImportError:
                log("hnswlib is not installed (apt-get install python3-hnswlib): skipped")
        if hrun is not None:
            hrun.build()
        if not args.no_hotkv:
            if not os.access(args.hotkv, os.X_OK):
                sys.exit("run: no HotKV binary at %s (make, or --hotkv PATH)" % args.hotkv)
            hk = bench_server("hotkv", os.path.abspath(args.hotkv), ["--threads", str(args.hotkv_threads)], args,
                              workdir, after_step=hrun.query if hrun is not None else None)
        if args.redis:
            exe = shutil.which(args.redis) or args.redis
            if not os.access(exe, os.X_OK):
                sys.exit("run: no redis-server at %s" % args.redis)
            rd = bench_server("redis", exe, ["--save", "", "--appendonly", "no"], args, workdir)
        if hrun is not None:
            hn = hrun.finish()
    except BenchError as e:
        stop_all_servers()
        copy_logs(workdir, out)
        sys.exit("run: %s" % e)
    finally:
        stop_all_servers()

    copy_logs(workdir, out)
    table = report(meta, args, hk, hn, rd)
    head = ["# Vector sets: %s" % name, ""] + machine_lines() + [
        "- data set: %s: %d base vectors x %d dims, %d queries, recall@%d against exact cosine top-%d" % (
            name, base.shape[0], base.shape[1], len(queries), args.k, gt.shape[1]),
        "- HNSW: M %d, ef_construction (VADD EF) %d, VADD %s, VSIM FP32 COUNT %d EF <ef>%s; %d VSIM "
        "connections, %d in flight each; %d VADD connections, batches of %d" % (
            args.m, args.ef_construction, args.quant.upper(), args.k, " NOTHREAD" if args.nothread else "",
            args.conns, args.query_pipeline, args.load_conns, args.pipeline),
        "- servers pinned with `taskset -c %s`; clients (Python, one process per connection) on CPUs %s; "
        "hnswlib on CPUs %s" % (args.server_cpus, ",".join(map(str, args.client_cpus)),
                                ",".join(map(str, args.hnswlib_cpus))),
        "- each ef step repeats the queries for at least %.1fs; recall from the first pass; server CPU = "
        "utime+stime of /proc/<pid>/stat (all threads, %d ticks/s) over the step / queries" % (args.min_seconds, CLK_TCK),
    ]
    for res in (hk, rd):
        if res is not None:
            head.append("- %s: `%s`%s" % (res["server"], res.get("cmdline", "?"),
                                           " (skipped: %s)" % res["skipped"] if "skipped" in res else ""))
    text = "\n".join(head) + "\n\n" + table
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"dataset": meta, "dataset_dir": os.path.abspath(args.dataset),
                   "args": {k: v for k, v in vars(args).items()}, "clk_tck": CLK_TCK,
                   "hotkv": hk, "hnswlib": hn, "redis": rd}, f, indent=2, default=str)
        f.write("\n")
    print(text)
    log("results: %s" % out)


def copy_logs(workdir, out):
    for fn in os.listdir(workdir):
        if fn.endswith((".log", ".stderr")):
            try:
                shutil.copy(os.path.join(workdir, fn), os.path.join(out, fn))
            except OSError:
                pass
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
