"""Vector sets: corner cases and races of the command layer.

Each test here names the behaviour it checks; a failure is a bug in the
server, not in the test (see the docstrings for what goes wrong)."""
import select
import struct
import threading
import time

from resp import Error, RespConn, encode


def conn_of(srv, timeout=60):
    return RespConn("127.0.0.1", srv.port, timeout=timeout)


def f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


# ---- readers racing an update of the element they name -------------------

def run_until(srv, seconds, workers):
    """Run each worker(stop_time) in its own thread; a worker ends when the
    time is up or the server goes away. Returns the first exception seen."""
    stop = time.monotonic() + seconds
    errors = []

    def wrap(fn):
        try:
            fn(stop)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in ts:
        t.start()
    for t in ts:
        t.join(seconds + 60)
    return errors


def test_readers_of_an_element_being_updated_do_not_crash(new_server):
    """VEMB, VLINKS and VSIM ELE check that the element's node exists
    (el_settle) and then take the set's lock a second time to read it. An
    update (VADD of an existing element) that unlinks the old node between
    the two leaves the reader with HNSW_NONE as the node id, and it reads
    the graph at that id: out of bounds (SIGSEGV)."""
    srv = new_server(threads=4)
    c = conn_of(srv)
    for i in range(50):
        assert c.cmd("VADD", "s", "VALUES", "4", "1", str(i % 7), str(i % 5), "1", "e%d" % i) == 1

    def writer(seed):
        def run(stop):
            w = conn_of(srv)
            k = 0
            while time.monotonic() < stop:
                cmds = [encode("VADD", "s", "VALUES", "4", "1", str((k + j) % 9), str(seed), "2", "e1")
                        for j in range(50)]
                k += 50
                w.send(b"".join(cmds))
                for _ in cmds:
                    assert w.read() == 0
            w.close()
        return run

    def reader(cmd, check):
        def run(stop):
            rc = conn_of(srv)
            while time.monotonic() < stop:
                cmds = [encode(*cmd)] * 200
                rc.send(b"".join(cmds))
                for _ in cmds:
                    check(rc.read())
            rc.close()
        return run

    def emb(rep):
        assert isinstance(rep, list) and len(rep) == 4, rep

    def links(rep):
        assert isinstance(rep, list) and len(rep) >= 1, rep

    def sim(rep):
        # The query is e1's vector of the moment; e1 itself may have moved.
        assert isinstance(rep, list) and len(rep) == 3, rep

    workers = [writer(1), writer(2),
               reader(("VEMB", "s", "e1"), emb), reader(("VEMB", "s", "e1"), emb),
               reader(("VLINKS", "s", "e1"), links),
               reader(("VSIM", "s", "ELE", "e1", "COUNT", "3"), sim)]
    errors = run_until(srv, 12, workers)
    assert srv.alive(), "server died (signal %s): a reader used the node id of an unlinked node" % (
        srv.proc.poll(),)
    assert not errors, errors
    assert c.cmd("VCARD", "s") == 50
    c.close()


# ---- REDUCE ------------------------------------------------------------------

def test_copy_of_a_set_with_a_large_projection(new_server):
    """REDUCE 32769 of a 65536-component vector: hnsw_proj_new refuses a
    matrix of more than 2^31 entries and returns NULL, but vset_new keeps
    the reduced dimension, so the set has dim 32769, in_dim 65536 and no
    projection (the vector is silently truncated, not projected). Its
    serialised form is then rejected by vset_load ("bad vector set
    header") and COPY aborts the server. Either VADD refuses the
    projection with an error, or the set is a projected one and COPY
    copies it."""
    srv = new_server()
    c = conn_of(srv)
    blob = f32([1.0] * 65536)
    rep = c.cmd("VADD", "big", "REDUCE", "32769", "FP32", blob, "a")
    if isinstance(rep, Error):
        assert c.cmd("EXISTS", "big") == 0
    else:
        assert rep == 1
        try:
            copied = c.cmd("COPY", "big", "big2")
        except ConnectionError:
            copied = None
            deadline = time.monotonic() + 5
            while srv.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
        assert srv.alive(), "COPY killed the server"
        assert copied == 1
        assert c.cmd("VCARD", "big2") == 1
        info = c.cmd("VINFO", "big")
        info = dict(zip(info[::2], info[1::2]))
        assert info["vector-dim"] == 32769
        assert info["projection-input-dim"] == 65536, info
    assert c.cmd("PING") == "PONG"
    c.close()
    assert srv.alive()


def test_reduce_to_the_same_dimension_still_projects(r, conn):
    """Redis accepts REDUCE equal to the input dimension (parseVector only
    refuses reduce > dim) and builds a dim x dim projection: the set
    reports its projection input, stores projected vectors, and refuses a
    later VADD without REDUCE. HotKV's hnsw_proj_new returns NULL for
    out_dim >= in_dim, so the set silently has no projection."""
    assert conn.cmd("VADD", "k", "REDUCE", "3", "VALUES", "3", "1", "0", "0", "a", "NOQUANT") == 1
    info = conn.cmd("VINFO", "k")
    info = dict(zip(info[::2], info[1::2]))
    assert info["projection-input-dim"] == 3, info
    # Row i of the matrix is (+-1)/sqrt(3) with sign by popcount(i & j):
    # column 0 is +1/sqrt(3) on every row.
    emb = [float(x) for x in conn.cmd("VEMB", "k", "a")]
    assert all(abs(x - 3 ** -0.5) < 1e-5 for x in emb), emb
    assert conn.cmd("VADD", "k", "VALUES", "3", "1", "0", "0", "b", "NOQUANT") == Error(
        "ERR Vector dimension mismatch - got 3 but set has 3")


# ---- a long search, a waiting writer, and short readers --------------------

N_LONG = 400
PAD = 200000  # bytes of JSON before the field the filter reads


def lvec(i):
    return f32([1.0, (i % 7) / 7.0, (i % 11) / 11.0, (i % 13) / 13.0])


def load_long(srv):
    """A set whose FILTER TRUTH search reads every element's large JSON:
    a search that lasts, with no element matching."""
    c = conn_of(srv, timeout=120)
    filler = ",".join('"f%d":[%d,"%d"]' % (j, j, j) for j in range(PAD // 16))
    for base in range(0, N_LONG, 50):
        cmds = [encode("VADD", "{v}set", "FP32", lvec(i), "e%d" % i, "SETATTR", '{%s,"n":%d}' % (filler, i))
                for i in range(base, min(base + 50, N_LONG))]
        c.send(b"".join(cmds))
        for _ in cmds:
            assert c.read() == 1
    return c


# Each term looks up a field that is not there: a scan of the whole JSON.
LONG_Q = ("VSIM", "{v}set", "FP32", lvec(1), "COUNT", 5, "TRUTH", "FILTER",
          " or ".join(".m%d > 0" % i for i in range(12)) + " or .n < 0")


def io_thread(c):
    info = c.cmd("CLIENT", "INFO")
    info = info.decode() if isinstance(info, bytes) else info
    return int(info.split("io-thread=")[1].split()[0])


def conns_on_distinct_threads(srv, n):
    """n connections, each served by a different worker thread."""
    got, seen, spare = [], set(), []
    while len(got) < n:
        c = conn_of(srv, timeout=120)
        t = io_thread(c)
        if t in seen:
            spare.append(c)
            assert len(spare) < 64, "connections do not spread over the workers"
            continue
        seen.add(t)
        got.append(c)
    for c in spare:
        c.close()
    return got


def search_seconds(c):
    t0 = time.monotonic()
    assert c.cmd(*LONG_Q) == []
    return time.monotonic() - t0


def start_long_search(c):
    """One long VSIM on c in the background; returns its thread and a dict
    that gets 'done' when it ends."""
    state = {}

    def run():
        assert c.cmd(*LONG_Q) == []
        state["done"] = time.monotonic()

    t = threading.Thread(target=run)
    t.start()
    return t, state


def pending(c):
    """No reply has come back on c yet."""
    return not c.buf and not select.select([c.sock], [], [], 0)[0]


def test_short_reader_behind_a_waiting_writer_does_not_hold_the_shard(new_server):
    """A long VSIM searches with the set shared and no shard lock, and
    other keys of its shard are meant to be served meanwhile. But a graph
    writer of the same set (here VSETATTR) then waits for the exclusive
    lock, and the lock prefers writers: a short reader of the set (VGETATTR,
    VEMB, VLINKS, VINFO, MEMORY USAGE) takes the key's shard lock and then
    waits for the shared lock behind that writer, for the rest of the
    search, with the shard held. A GET of an unrelated key of the shard
    waits as long."""
    srv = new_server(threads=4)
    load_long(srv).close()
    ls, wa, rd, pr = conns_on_distinct_threads(srv, 4)
    one = search_seconds(ls)
    assert one > 0.1, "the search is too short to measure: %.3fs" % one
    t, state = start_long_search(ls)
    time.sleep(one * 0.1)
    wa.send(encode("VSETATTR", "{v}set", "e0", '{"n":0}'))   # waits for the exclusive lock
    time.sleep(one * 0.05)
    rd.send(encode("VGETATTR", "{v}set", "e3"))              # waits behind it, shard held
    time.sleep(one * 0.05)
    running = "done" not in state
    t0 = time.monotonic()
    assert pr.cmd("GET", "{v}other") is None
    waited = time.monotonic() - t0
    t.join(120)
    assert wa.read() == 1
    assert rd.read() is not None
    for c in (ls, wa, rd, pr):
        c.close()
    assert running, "the search ended before the probe: make it longer"
    assert waited < one / 4, "GET of another key waited %.3fs of a %.3fs search" % (waited, one)


PROBES = 3


def in_flight_rounds(srv, setup, probe, check, rounds=10, budget=14.0):
    """Rounds of: a long search; an update (VADD of e0) that waits for the
    exclusive lock behind it; then setup(i) sends the writer under test, which waits
    for its turn behind the VSETATTR, and returns what shows that it went
    through the name table (a command and its answer); setup runs before
    the search starts, so what it does itself is not held up. Then PROBES
    connections each send probe(i) at once. Whether a probe reads the
    graph before the writer under test commits is up to the scheduler, so
    rounds go on (up to `rounds`, within `budget` seconds) until one
    sees the bug; returns every round's probe answers, each one checked
    by check(i, answer) -> bool."""
    load_long(srv).close()
    ls, wa, wb, rd, *probes = conns_on_distinct_threads(srv, 4 + PROBES)
    one = search_seconds(ls)
    assert one > 0.1, "the search is too short to measure: %.3fs" % one
    seen = []
    end = time.monotonic() + budget
    for rnd in range(rounds * 2):
        (cmd, want), writer_cmd = setup(rnd, rd)
        t, state = start_long_search(ls)
        time.sleep(one * 0.1)
        # The blocker: an update of e0 with the widest candidate search. Its
        # first step (unlinking the old node) waits for the search; its
        # second (finding candidates) then runs with the turn held and the
        # set not locked: the writer under test waits its turn meanwhile.
        wa.send(encode("VADD", "{v}set", "FP32", lvec(rnd), "e0", "EF", 1000000))
        time.sleep(one * 0.05)
        wb.send(encode(*writer_cmd))
        deadline = time.monotonic() + one
        while rd.cmd(*cmd) != want:
            assert time.monotonic() < deadline, "the writer did not reach the name table"
        # The round counts only if the update is still held up by the
        # search (so the writer under test waits behind it).
        valid = "done" not in state and pending(wa) and pending(wb)
        for p in probes:
            p.send(encode(*probe(rnd)))
        answers = [p.read() for p in probes]
        t.join(120)
        assert wa.read() == 0
        assert wb.read() == 1
        if valid:
            seen.append(answers)
            if not all(check(rnd, a) for a in answers):
                break
        if len(seen) >= rounds or time.monotonic() > end:
            break
    assert seen, "no round had the writers held up by the search: make it longer"
    for c in [ls, wa, wb, rd] + probes:
        c.close()
    return seen


def test_attributes_of_a_new_element_are_there_once_it_is_a_member(new_server):
    """VADD ... SETATTR is one command: once VISMEMBER sees the element, its
    attributes must be there too. The name goes into the table under the
    shard lock, the attributes only when the insert commits; a VADD that
    waits behind another writer (here a VSETATTR waiting for a long search)
    leaves a window where VGETATTR answers nil for a member that was added
    with attributes. The writer ahead of it here is an update of another
    element, held up by a long search."""
    srv = new_server(threads=4 + PROBES)

    def setup(i, rd):
        name = "fresh%d" % i
        return (("VISMEMBER", "{v}set", name), 1), ("VADD", "{v}set", "FP32", lvec(3), name, "SETATTR", '{"n":-1}')

    def check(i, a):
        return a == b'{"n":-1}'

    seen = in_flight_rounds(srv, setup, lambda i: ("VGETATTR", "{v}set", "fresh%d" % i), check)
    assert all(check(i, a) for i, answers in enumerate(seen) for a in answers), seen


def test_removed_element_is_not_found_once_it_is_not_a_member(new_server):
    """VREM takes the element out of the name table under the shard lock
    (VISMEMBER answers 0 from then on) but out of the graph only at its
    turn. A VSIM that comes after the VREM, in keyspace order, searches
    the graph meanwhile and still returns the removed element when the
    VREM waits behind another writer (an update held up by a long
    search)."""
    srv = new_server(threads=4 + PROBES)

    def far(i):
        # Every element of the long set starts with +1: this one is nearest
        # to itself by far.
        return f32([-1.0, -1.0, -1.0, -1.0 - i])

    def setup(i, rd):
        name = "gone%d" % i
        assert rd.cmd("VADD", "{v}set", "FP32", far(i), name) == 1
        return (("VISMEMBER", "{v}set", name), 0), ("VREM", "{v}set", name)

    def check(i, hits):
        return b"gone%d" % i not in hits

    seen = in_flight_rounds(srv, setup, lambda i: ("VSIM", "{v}set", "FP32", far(i), "COUNT", 1, "TRUTH"), check)
    assert all(check(i, a) for i, answers in enumerate(seen) for a in answers), seen
