"""Where vector-set commands hold locks: a long VSIM searches with the set
shared and the key's shard released, so other keys of that shard (and
writes to the set's own key) are served while it runs; VSIM NOTHREAD
searches under the shard lock instead, as Redis runs it on its main thread.

The long search is made deterministic rather than big: every element has a
large JSON attribute object whose field the filter reads comes last, and
no element matches, so a FILTER TRUTH scan reads every element's JSON.
"""
import struct
import threading
import time

from resp import RespConn, encode

N = 400
PAD = 40000  # bytes of JSON before the field the filter reads


def vec(i):
    return struct.pack("<4f", 1.0, (i % 7) / 7.0, (i % 11) / 11.0, (i % 13) / 13.0)


def load(port):
    c = RespConn("127.0.0.1", port, timeout=60)
    # Thousands of small fields: each is a key the scan must compare.
    filler = ",".join('"f%d":[%d,"%d"]' % (j, j, j) for j in range(PAD // 16))
    cmds = [encode("VADD", "{v}set", "FP32", vec(i), "e%d" % i, "SETATTR", '{%s,"n":%d}' % (filler, i))
            for i in range(N)]
    c.send(b"".join(cmds))
    for _ in cmds:
        assert c.read() == 1
    return c


def io_thread(c):
    info = c.cmd("CLIENT", "INFO")
    info = info.decode() if isinstance(info, bytes) else info
    return int(info.split("io-thread=")[1].split()[0])


def conn_beside(port, other):
    """A connection served by another worker thread than `other`'s, so
    what it measures is locks, not a busy thread."""
    spare = []
    while True:
        c = RespConn("127.0.0.1", port, timeout=300)
        if io_thread(c) != io_thread(other):
            for x in spare:
                x.close()
            return c
        spare.append(c)
        assert len(spare) < 64, "every connection lands on one thread"


def long_searches(port, n, extra=()):
    """Start n pipelined slow VSIMs on their own connection; returns the
    thread, a dict that gets 'done' (time) when the last reply is in, and
    a connection on another worker thread."""
    state = {}
    c = RespConn("127.0.0.1", port, timeout=300)
    beside = conn_beside(port, c)
    q = encode("VSIM", "{v}set", "FP32", vec(1), "COUNT", 5, "TRUTH", "FILTER", ".n < 0", *extra)

    def run():
        c.send(q * n)
        for _ in range(n):
            rep = c.read()
            assert rep == [], rep
        state["done"] = time.monotonic()
        c.close()

    t = threading.Thread(target=run)
    t.start()
    return t, state, beside


def one_search_seconds(port):
    c = RespConn("127.0.0.1", port, timeout=300)
    t0 = time.monotonic()
    c.cmd("VSIM", "{v}set", "FP32", vec(1), "COUNT", 5, "TRUTH", "FILTER", ".n < 0")
    c.close()
    return time.monotonic() - t0


def probe_latencies(c, until, rounds=40):
    """GET/SET a key in the set's shard and VCARD the set itself while the
    searches run; returns the worst round trip and how many rounds ended
    before the searches did."""
    worst, during = 0.0, 0
    for i in range(rounds):
        t0 = time.monotonic()
        assert c.cmd("SET", "{v}other", i) == "OK"
        assert c.cmd("GET", "{v}other") == str(i).encode()
        assert c.cmd("VCARD", "{v}set") == N
        if "done" in until:
            break
        worst = max(worst, time.monotonic() - t0)
        during += 1
    c.close()
    return worst, during


def test_long_vsim_does_not_hold_the_shard(new_server):
    srv = new_server(threads=2)
    load(srv.port).close()
    one = one_search_seconds(srv.port)
    t, state, beside = long_searches(srv.port, 8)
    time.sleep(min(one / 2, 0.2))
    worst, during = probe_latencies(beside, state)
    t.join(300)
    assert during >= 5, "the searches ended before the probes: make them longer"
    # A probe never waits for a search: each round trip is far below the
    # length of one search.
    assert worst < one / 2, (worst, one)


def test_vadd_and_vrem_go_on_beside_long_searches(new_server):
    """Writers of the searched set itself are not held back by searches for
    the whole run either: their candidate search shares the set, and only
    the short link step waits for the readers in flight."""
    srv = new_server(threads=2)
    load(srv.port).close()
    one = one_search_seconds(srv.port)
    t, state, c = long_searches(srv.port, 8)
    time.sleep(min(one / 2, 0.2))
    t0 = time.monotonic()
    assert c.cmd("VADD", "{v}set", "FP32", vec(5), "new") == 1
    assert c.cmd("VREM", "{v}set", "new") == 1
    took = time.monotonic() - t0
    running = "done" not in state
    c.close()
    t.join(300)
    assert running
    # Each write waits at most for the searches already running to finish
    # one query (a writer-preferring lock), never for all eight.
    assert took < one * 4, (took, one)


def test_nothread_searches_under_the_shard_lock(new_server):
    srv = new_server(threads=2)
    load(srv.port).close()
    one = one_search_seconds(srv.port)
    t, state, c = long_searches(srv.port, 4, extra=("NOTHREAD",))
    # Probe until the searches end: some GET of another key of the shard
    # must have waited for a search holding the shard.
    worst, probes = 0.0, 0
    while "done" not in state:
        t0 = time.monotonic()
        assert c.cmd("GET", "{v}other") is None
        worst = max(worst, time.monotonic() - t0)
        probes += 1
    c.close()
    t.join(300)
    assert probes >= 1
    assert worst > one / 4, (worst, one, probes)
