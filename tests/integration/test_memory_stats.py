"""INFO memory, MEMORY STATS / DOCTOR / MALLOC-STATS / PURGE, and the
accounting behind them (docs/memory.md): field names and order as Redis
7.0 gives them (compared with a real redis-server when one is installed),
the overhead and dataset adding up to used_memory, and MEMORY USAGE of
every key adding up to used_memory_dataset within 5%."""
import socket
import time

import pytest

from conftest import real_redis, start_server, stop_checked
from resp import RespConn


@pytest.fixture(scope="module")
def hk_srv(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"))
    yield srv
    stop_checked(srv)


@pytest.fixture
def hk(hk_srv):
    c = RespConn("127.0.0.1", hk_srv.port)
    c.cmd("FLUSHALL")
    yield c
    c.cmd("FLUSHALL")
    c.close()


@pytest.fixture(scope="module")
def rd():
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server not installed")
        c = RespConn("127.0.0.1", port)
        yield c
        c.close()


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def info_memory(c):
    return [l.split(":", 1) for l in text(c.cmd("INFO", "memory")).splitlines() if ":" in l]


def pairs(reply):
    """MEMORY STATS as (name, value) pairs in reply order, RESP2 or RESP3."""
    if isinstance(reply, dict):
        return [(text(k), v) for k, v in reply.items()]
    return [(text(reply[i]), reply[i + 1]) for i in range(0, len(reply), 2)]


def load(port, n, vsize, prefix=b"key:"):
    """n keys of vsize-byte values, pipelined a thousand at a time."""
    s = socket.create_connection(("127.0.0.1", port))
    v = b"x" * vsize
    for i in range(0, n, 1000):
        cmds = [b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v)
                for k in (prefix + b"%07d" % j for j in range(i, min(n, i + 1000)))]
        s.sendall(b"".join(cmds))
        got = b""
        while got.count(b"+OK\r\n") < len(cmds):
            got += s.recv(1 << 20)
    s.close()


def usage_sum(port, n, prefix=b"key:"):
    s = socket.create_connection(("127.0.0.1", port))
    total = 0
    for i in range(0, n, 1000):
        keys = [prefix + b"%07d" % j for j in range(i, min(n, i + 1000))]
        s.sendall(b"".join(b"*3\r\n$6\r\nMEMORY\r\n$5\r\nUSAGE\r\n$%d\r\n%s\r\n" % (len(k), k) for k in keys))
        got = b""
        while got.count(b"\r\n") < len(keys):
            got += s.recv(1 << 20)
        lines = got.split(b"\r\n")[:len(keys)]
        assert all(l.startswith(b":") for l in lines), lines[:3]
        total += sum(int(l[1:]) for l in lines)
    s.close()
    return total


def test_info_memory_fields_as_redis(hk, rd):
    mine = [k for k, _ in info_memory(hk)]
    theirs = [k for k, _ in info_memory(rd)]
    assert mine == theirs


def test_info_memory_adds_up(hk):
    m = dict(info_memory(hk))
    used, overhead, dataset = int(m["used_memory"]), int(m["used_memory_overhead"]), int(m["used_memory_dataset"])
    assert overhead + dataset == used
    assert 0 < int(m["used_memory_startup"]) <= overhead
    assert int(m["allocator_allocated"]) > 0 and int(m["allocator_resident"]) <= int(m["used_memory_rss"])
    assert m["mem_allocator"] in ("mimalloc", "libc")


def test_memory_stats_names_as_redis(hk, rd, hk_srv):
    load(hk_srv.port, 2000, 16)
    rd.cmd("FLUSHALL")
    rd.cmd("SET", "a", "b")
    mine = pairs(hk.cmd("MEMORY", "STATS"))
    theirs = pairs(rd.cmd("MEMORY", "STATS"))
    assert [k for k, _ in mine] == [k for k, _ in theirs]
    d = dict(mine)
    assert d["keys.count"] == 2000
    db0 = dict(pairs(d["db.0"]))
    assert set(db0) == {"overhead.hashtable.main", "overhead.hashtable.expires"}
    info = dict(info_memory(hk))
    # Gathered one after the other, so they may differ by a few allocations.
    assert abs(d["total.allocated"] - int(info["used_memory"])) < 64 * 1024
    assert d["overhead.total"] + d["dataset.bytes"] == d["total.allocated"]
    assert d["startup.allocated"] == int(info["used_memory_startup"])
    rd.cmd("FLUSHALL")


@pytest.mark.parametrize("vsize,n", [(16, 100000), (256, 20000)])
def test_memory_usage_sums_to_dataset(hk, hk_srv, vsize, n):
    load(hk_srv.port, n, vsize)
    total = usage_sum(hk_srv.port, n)
    # The buffers of the connections just closed count as client memory in
    # the figure the cron publishes (as Redis's clientsCron does): wait
    # for a few cron periods so they are not counted as data.
    time.sleep(0.35)
    dataset = int(dict(info_memory(hk))["used_memory_dataset"])
    assert abs(total - dataset) <= 0.05 * dataset, (total, dataset)


def test_memory_doctor_purge_malloc_stats(hk, rd):
    # A fresh, nearly empty instance: both servers give the same verdict.
    assert text(hk.cmd("MEMORY", "DOCTOR")) == text(rd.cmd("MEMORY", "DOCTOR"))
    assert text(hk.cmd("MEMORY", "DOCTOR")).startswith("Hi Sam, this instance is empty")
    assert hk.cmd("MEMORY", "PURGE") == "OK"
    assert len(text(hk.cmd("MEMORY", "MALLOC-STATS"))) > 0
    assert text(hk.cmd("MEMORY", "STATS", "X")).startswith("ERR wrong number of arguments")


def test_memory_help_lists_subcommands(hk):
    lines = [text(l) for l in hk.cmd("MEMORY", "HELP")]
    for sub in ("DOCTOR", "MALLOC-STATS", "PURGE", "STATS", "USAGE <key> [SAMPLES <count>]"):
        assert sub in lines
