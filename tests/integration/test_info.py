"""INFO: sections, field names and formats, and counters that move.

Counters on the shared server are checked as deltas; tests that reset or
need exact totals start a private server."""
import os
import re
import time

import pytest
from poll import wait_probe_gone, wait_until
from resp import Verbatim

DEFAULT_ORDER = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
                 "Errorstats", "Cluster", "Keyspace"]


def parse(text):
    """INFO text -> ({section: {field: value}}, [section order])."""
    if isinstance(text, bytes):
        text = text.decode()
    sections, order, cur = {}, [], None
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            cur = line[2:]
            order.append(cur)
            sections[cur] = {}
            continue
        assert cur is not None, line
        k, _, v = line.partition(":")
        sections[cur][k] = v
    return sections, order


def info(conn, *sections):
    return parse(conn.cmd("INFO", *sections))[0]


def test_default_sections_and_wire_format(conn):
    raw = conn.cmd("INFO")
    assert isinstance(raw, bytes)
    text = raw.decode()
    assert text.startswith("# Server\r\nredis_version:")
    assert text.endswith("\r\n") and not text.endswith("\r\n\r\n")
    # Sections are separated by exactly one blank line.
    assert "\r\n\r\n# Clients\r\n" in text
    assert "\n" not in text.replace("\r\n", "")
    _, order = parse(text)
    assert order == DEFAULT_ORDER


def test_sections_all_and_everything(conn):
    _, order = parse(conn.cmd("INFO", "all"))
    order = [o for o in order if o != "Latencystats"]  # Redis's latency histograms: not in HotKV
    assert order == DEFAULT_ORDER[:8] + ["Commandstats"] + DEFAULT_ORDER[8:]
    _, order = parse(conn.cmd("INFO", "everything"))
    assert "Commandstats" in order
    _, order = parse(conn.cmd("INFO", "default"))
    assert order == DEFAULT_ORDER


def test_section_selection(conn):
    # Case-insensitive, several at once, output in Redis's fixed order.
    _, order = parse(conn.cmd("INFO", "KEYSPACE", "server", "cpu"))
    assert order == ["Server", "CPU", "Keyspace"]
    assert conn.cmd("INFO", "nosuchsection") == b""
    assert conn.cmd("INFO", "keyspace", "keyspace") == b"# Keyspace\r\n"


def test_resp3_verbatim(conn3):
    v = conn3.cmd("INFO", "cpu")
    assert isinstance(v, Verbatim)
    assert v.fmt == b"txt"
    assert v.startswith(b"# CPU\r\nused_cpu_sys:")
    raw = conn3.cmd_raw("INFO", "nosuchsection")
    assert raw == b"=4\r\ntxt:\r\n"


def test_server_section(server, conn):
    s = info(conn, "server")["Server"]
    assert re.fullmatch(r"8\.\d+\.\d+", s["redis_version"])
    assert s["redis_mode"] == "standalone"
    assert s["multiplexing_api"] == "epoll"
    assert s["arch_bits"] in ("32", "64")
    assert s["io_threads_active"] == "0"
    assert re.fullmatch(r"[0-9a-f]{40}", s["run_id"])
    assert int(s["tcp_port"]) == server.port
    assert abs(int(s["server_time_usec"]) / 1e6 - time.time()) < 60
    assert int(s["uptime_in_days"]) == int(s["uptime_in_seconds"]) // 86400
    assert s["hz"] == s["configured_hz"]
    if server.proc:
        assert s["redis_version"] == "8.0.0"
        assert re.fullmatch(r"\d+\.\d+\.\d+", s["hotkv_version"])
        assert int(s["process_id"]) == server.proc.pid
        assert os.path.samefile(s["executable"], server.args[0])
        assert s["config_file"] == ""
        assert s["listener0"] == "name=tcp,bind=127.0.0.1,port=%d" % server.port
        assert s["listener1"] == "name=unix,bind=%s" % server.unix


def client_ids(conn):
    return {int(f[3:]) for line in conn.cmd("CLIENT", "LIST").decode().splitlines()
            for f in line.split() if f.startswith("id=")}


def settled_clients(conn):
    """(connected_clients, ids in CLIENT LIST) once both agree: connections
    that earlier tests closed may still be on their way out, and one that
    goes between the two reads would make them differ."""
    def probe():
        ids = client_ids(conn)
        c = info(conn, "clients")["Clients"]
        return int(c["connected_clients"]), ids, client_ids(conn), c

    n, ids, _, c = wait_until(probe, lambda v: v[1] == v[2] and v[0] == len(v[1]),
                              what="connected_clients == len(CLIENT LIST)")
    return n, ids, c


def test_clients_section(server, conn):
    _, ids0, _ = settled_clients(conn)
    extra = [server.conn() for _ in range(3)]
    mine = {e.cmd("CLIENT", "ID") for e in extra}
    n1, ids1, c = settled_clients(conn)
    # Exactly the connections there are: ours added, others only gone.
    assert mine <= ids1 and ids1 - mine <= ids0
    assert n1 == len(ids0 & ids1) + 3 and n1 >= 4
    assert c["blocked_clients"] == "0"
    assert int(c["maxclients"]) > 0
    # Each close is counted off once the server has seen it.
    extra.pop().close()
    n2, ids2, _ = settled_clients(conn)
    assert ids2 <= ids1 and n2 == len(ids1 & ids2) and n2 < n1
    for e in extra:
        e.close()


def human(n):
    for unit in "KMGTP":
        n /= 1024
        if n < 1024:
            return "%.2f%s" % (n, unit)


def test_memory_section(conn):
    m = info(conn, "memory")["Memory"]
    used, peak = int(m["used_memory"]), int(m["used_memory_peak"])
    assert used > 0 and int(m["used_memory_rss"]) > 0
    assert peak >= used
    assert m["used_memory_human"] == (human(used) if used >= 1024 else "%dB" % used)
    assert m["used_memory_peak_perc"].endswith("%")
    assert m["maxmemory"] == "0" and m["maxmemory_human"] == "0B"
    assert m["maxmemory_policy"] == "noeviction"
    assert m["mem_allocator"]
    assert float(m["mem_fragmentation_ratio"]) > 0


# used_memory counts the whole server: between two readings, buffers of
# other connections (a client that an earlier test closed, freed on its
# worker's next turn; a query buffer shrunk) may come and go. That noise is
# kilobytes; the 2 MB value must show nearly whole.
MEMORY_NOISE = 64 * 1024


def test_memory_grows_with_data_and_peak_is_kept(conn):
    settled_clients(conn)
    used0 = int(info(conn, "memory")["Memory"]["used_memory"])
    assert conn.cmd("SET", "big", "x" * 2_000_000) == "OK"
    m = info(conn, "memory")["Memory"]
    assert int(m["used_memory"]) >= used0 + 2_000_000 - MEMORY_NOISE
    peak = int(m["used_memory_peak"])
    conn.cmd("DEL", "big")
    m = info(conn, "memory")["Memory"]
    assert int(m["used_memory"]) < peak
    assert int(m["used_memory_peak"]) >= peak


def test_stats_counters(server, conn):
    s0 = info(conn, "stats")["Stats"]
    conn.cmd("SET", "k", "v")
    conn.cmd("GET", "k")
    conn.cmd("GET", "k")
    conn.cmd("GET", "nokey")
    other = server.conn()
    other.cmd("PING")
    other.close()
    s1 = info(conn, "stats")["Stats"]

    def d(f):
        return int(s1[f]) - int(s0[f])

    assert d("keyspace_hits") == 2
    assert d("keyspace_misses") == 1
    # SET, 3x GET, PING on the other connection, the first INFO.
    assert d("total_commands_processed") == 6
    assert d("total_connections_received") == 1
    assert d("total_net_input_bytes") > 0 and d("total_net_output_bytes") > 0
    assert s1["rejected_connections"] == s0["rejected_connections"]
    assert s1["instantaneous_input_kbps"].count(".") == 1


def test_expired_keys_counter(conn):
    e0 = int(info(conn, "stats")["Stats"]["expired_keys"])
    conn.cmd("SET", "t", "v", "PX", "1")
    time.sleep(0.02)
    assert conn.cmd("GET", "t") is None
    assert int(info(conn, "stats")["Stats"]["expired_keys"]) == e0 + 1


def test_error_replies_counter_and_errorstats(conn):
    st0 = info(conn, "stats", "errorstats")
    conn.cmd("NOSUCHCOMMAND")
    conn.cmd("SET", "s", "v")
    conn.cmd("INCR", "s")
    st1 = info(conn, "stats", "errorstats")
    assert int(st1["Stats"]["total_error_replies"]) == int(st0["Stats"]["total_error_replies"]) + 2

    def count(st):
        v = st["Errorstats"].get("errorstat_ERR")
        return int(v.split("=")[1]) if v else 0

    assert count(st1) == count(st0) + 2
    assert re.fullmatch(r"count=\d+", st1["Errorstats"]["errorstat_ERR"])


def cmdstat(conn, name):
    v = info(conn, "commandstats")["Commandstats"].get("cmdstat_" + name)
    if v is None:
        return None
    return dict((k, float(x) if "." in x else int(x)) for k, x in (p.split("=") for p in v.split(",")))


def test_commandstats(conn):
    before = cmdstat(conn, "get") or {"calls": 0, "failed_calls": 0, "rejected_calls": 0}
    conn.cmd("SET", "s", "v")
    conn.cmd("GET", "s")
    conn.cmd("GET", "s")
    conn.cmd("GET")  # wrong arity: rejected
    st = cmdstat(conn, "get")
    assert st["calls"] == before["calls"] + 2
    assert st["rejected_calls"] == before["rejected_calls"] + 1
    assert st["usec_per_call"] == pytest.approx(st["usec"] / st["calls"], abs=0.01)
    # Subcommands are named parent|child.
    conn.cmd("CONFIG", "GET", "port")
    assert cmdstat(conn, "config|get")["calls"] >= 1
    raw = conn.cmd("INFO", "commandstats").decode()
    assert re.search(r"\r\ncmdstat_get:calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,"
                     r"failed_calls=\d+\r\n", raw)


def test_failed_calls(conn):
    conn.cmd("SET", "s", "notanumber")
    before = cmdstat(conn, "incr") or {"failed_calls": 0, "calls": 0}
    assert str(conn.cmd("INCR", "s")).startswith("ERR")
    st = cmdstat(conn, "incr")
    assert st["failed_calls"] == before["failed_calls"] + 1
    assert st["calls"] == before["calls"] + 1


def test_keyspace(conn):
    assert info(conn, "keyspace")["Keyspace"] == {}
    for i in range(5):
        conn.cmd("SET", "k%d" % i, "v")
    conn.cmd("SET", "e", "v", "EX", "100")
    conn.cmd("SELECT", "3")
    conn.cmd("SET", "x", "v")
    conn.cmd("SELECT", "0")
    ks = info(conn, "keyspace")["Keyspace"]
    assert ks == {"db0": "keys=6,expires=1,avg_ttl=0,subexpiry=0", "db3": "keys=1,expires=0,avg_ttl=0,subexpiry=0"}
    conn.cmd("FLUSHALL")
    assert info(conn, "keyspace")["Keyspace"] == {}


def test_persistence_and_replication(conn):
    st = info(conn, "persistence", "replication")
    p, r = st["Persistence"], st["Replication"]
    assert p["loading"] == "0" and p["aof_enabled"] == "0"
    assert abs(int(p["rdb_last_save_time"]) - conn.cmd("LASTSAVE")) == 0
    c0 = int(p["rdb_changes_since_last_save"])
    conn.cmd("SET", "a", "1")
    conn.cmd("SET", "b", "1")
    assert int(info(conn, "persistence")["Persistence"]["rdb_changes_since_last_save"]) == c0 + 2
    assert r["role"] == "master"
    assert r["connected_slaves"] == "0"
    assert re.fullmatch(r"[0-9a-f]{40}", r["master_replid"])
    assert r["master_repl_offset"] == "0"


def test_cpu_and_cluster(conn):
    st = info(conn, "cpu", "cluster")
    for f in ("used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children",
              "used_cpu_sys_main_thread", "used_cpu_user_main_thread"):
        assert re.fullmatch(r"\d+\.\d{6}", st["CPU"][f]), f
    assert st["Cluster"] == {"cluster_enabled": "0"}


def test_instantaneous_ops(new_server):
    srv = new_server()
    c = srv.conn()
    deadline = time.time() + 1.5
    n = 0
    while time.time() < deadline:
        c.send(b"*1\r\n$4\r\nPING\r\n" * 50)
        for _ in range(50):
            c.read()
        n += 50
    ops = int(parse(c.cmd("INFO", "stats"))[0]["Stats"]["instantaneous_ops_per_sec"])
    assert ops > 0
    c.close()


def test_resetstat_zeroes_counters(new_server):
    srv = new_server()
    c = srv.conn()
    wait_probe_gone(c)  # else its late accept may count after the reset
    c.cmd("SET", "k", "v")
    c.cmd("GET", "k")
    c.cmd("GET", "nokey")
    c.cmd("NOSUCH")
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    st = parse(c.cmd("INFO", "stats", "commandstats", "errorstats", "persistence"))[0]
    s = st["Stats"]
    assert s["keyspace_hits"] == "0" and s["keyspace_misses"] == "0"
    assert s["total_error_replies"] == "0"
    assert s["total_connections_received"] == "0"
    assert st["Errorstats"] == {}
    # Only what ran after the reset: the INFO itself is counted when it ends.
    assert "cmdstat_get" not in st["Commandstats"]
    # Redis keeps the dirty counter across RESETSTAT.
    assert st["Persistence"]["rdb_changes_since_last_save"] == "1"
    c.close()


def test_counters_summed_across_workers_under_load(new_server):
    """Per-worker counters read while every worker is busy: the sums only
    grow and end exact."""
    import threading
    srv = new_server(threads=4)
    n_clients, per = 8, 500

    def work():
        c = srv.conn()
        for _ in range(per // 50):
            c.send(b"*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n" * 50)
            for _ in range(50):
                c.read()
        c.close()

    threads = [threading.Thread(target=work) for _ in range(n_clients)]
    admin = srv.conn()
    for t in threads:
        t.start()
    last = 0
    while any(t.is_alive() for t in threads):
        st = parse(admin.cmd("INFO", "stats", "commandstats"))[0]
        total = int(st["Stats"]["total_commands_processed"])
        assert total >= last
        last = total
    for t in threads:
        t.join()
    st = parse(admin.cmd("INFO", "commandstats", "persistence"))[0]
    assert st["Commandstats"]["cmdstat_incr"].startswith("calls=%d," % (n_clients * per))
    assert int(st["Persistence"]["rdb_changes_since_last_save"]) == n_clients * per
    assert admin.cmd("GET", "ctr") == str(n_clients * per).encode()
    admin.close()


def test_redis_py_parses_info(r):
    r.set("a", "1")
    i = r.info()
    assert i["redis_version"].startswith("8.")
    assert i["db0"] == {"keys": 1, "expires": 0, "avg_ttl": 0, "subexpiry": 0}
    assert i["connected_clients"] >= 1
    st = r.info("commandstats")["cmdstat_set"]
    assert st["calls"] >= 1 and "usec_per_call" in st
    assert "used_memory" in r.info("memory")
