"""Vector sets: corner cases and races of the command layer.

Each test here names the behaviour it checks; a failure is a bug in the
server, not in the test (see the docstrings for what goes wrong)."""
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
