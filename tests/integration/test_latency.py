"""LATENCY LATEST/HISTORY/RESET/GRAPH/DOCTOR/HISTOGRAM/HELP, the
latency-monitor-threshold, latency-tracking and
latency-tracking-info-percentiles settings, and INFO latencystats, as
Redis 8 documents them (RESP2 and RESP3)."""
import re
import threading
import time

from resp import Error, Map, RespConn, Verbatim, encode


def lat_server(new_server, *extra, threads=2):
    """A server whose only latency events are the test's own: active
    expiry (its "expire-cycle" event) is off."""
    srv = new_server("--enable-debug-command", "yes", *extra, threads=threads)
    c = srv.conn()
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    c.cmd("LATENCY", "RESET")
    c.close()
    return srv


def info_section(c, name):
    text = c.cmd("INFO", name)
    return bytes(text).decode()


def latencystats(c):
    out = {}
    for line in info_section(c, "latencystats").split("\r\n"):
        m = re.match(r"latency_percentiles_usec_(.+?):(.*)$", line)
        if m:
            out[m.group(1)] = dict(kv.split("=") for kv in m.group(2).split(",")) if m.group(2) else {}
    return out


# HdrHistogram with two significant digits: the highest value (ns) of the
# bucket holding v.
def highest_equivalent(v):
    bucket = max(0, v.bit_length() - 8)
    return ((v >> bucket) << bucket) + (1 << bucket) - 1


ROW_LABELS = [highest_equivalent(1024 << k) // 1000 for k in range(21)]


def test_row_labels_are_redis_ones():
    # Redis's LATENCY HISTOGRAM rows: 1, 2, 4, 8, 16, 33, 66, ... usec.
    assert ROW_LABELS[:8] == [1, 2, 4, 8, 16, 33, 66, 132]


def test_monitor_off_by_default(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    assert c.cmd("CONFIG", "GET", "latency-monitor-threshold") == [b"latency-monitor-threshold", b"0"]
    c.cmd("DEBUG", "SLEEP", "0.02")
    assert c.cmd("LATENCY", "LATEST") == []
    assert c.cmd("LATENCY", "HISTORY", "command") == []
    assert c.cmd("LATENCY", "GRAPH", "command") == Error("ERR No samples available for event 'command'")
    doc = c.cmd("LATENCY", "DOCTOR")
    assert doc.startswith(b"I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance.")
    c.close()


def test_command_event(new_server):
    srv = lat_server(new_server, "--latency-monitor-threshold", "10")
    c = srv.conn()
    c.cmd("DEBUG", "SLEEP", "0.001")  # under the threshold
    assert c.cmd("LATENCY", "LATEST") == []
    t0 = int(time.time())
    c.cmd("DEBUG", "SLEEP", "0.03")
    latest = c.cmd("LATENCY", "LATEST")
    assert len(latest) == 1
    name, ts, ms, mx = latest[0]
    assert name == b"command" and abs(ts - t0) <= 2 and 30 <= ms < 2000 and mx == ms
    hist = c.cmd("LATENCY", "HISTORY", "command")
    assert hist == [[ts, ms]]
    # Same second: one sample, raised to the worst.
    c.cmd("DEBUG", "SLEEP", "0.06")
    hist = c.cmd("LATENCY", "HISTORY", "command")
    if len(hist) == 1:
        assert hist[0][1] >= 60
    else:
        assert len(hist) == 2 and hist[1][1] >= 60
    latest = c.cmd("LATENCY", "LATEST")
    assert latest[0][3] >= 60
    # Unknown events: empty history, the graph's error.
    assert c.cmd("LATENCY", "HISTORY", "nosuch") == []
    assert c.cmd("LATENCY", "GRAPH", "nosuch") == Error("ERR No samples available for event 'nosuch'")
    # Event names are matched exactly by HISTORY, case-insensitively by RESET.
    assert c.cmd("LATENCY", "HISTORY", "COMMAND") == []
    assert c.cmd("LATENCY", "RESET", "nosuch") == 0
    assert c.cmd("LATENCY", "RESET", "COMMAND") == 1
    assert c.cmd("LATENCY", "LATEST") == []
    c.close()


def test_fast_command_event(new_server):
    srv = lat_server(new_server, "--latency-monitor-threshold", "1")
    c = srv.conn()
    # SADD is a fast command; 200k members take well over a millisecond.
    members = ["m%d" % i for i in range(200000)]
    assert c.cmd("SADD", "big", *members) == 200000
    events = {e[0]: e for e in c.cmd("LATENCY", "LATEST")}
    assert b"fast-command" in events
    assert c.cmd("LATENCY", "RESET") >= 1
    assert c.cmd("LATENCY", "LATEST") == []
    c.close()


def test_reset_all_and_several(new_server):
    srv = lat_server(new_server, "--latency-monitor-threshold", "1")
    c = srv.conn()
    c.cmd("DEBUG", "SLEEP", "0.01")
    c.cmd("SADD", "big", *["m%d" % i for i in range(200000)])
    names = sorted(e[0] for e in c.cmd("LATENCY", "LATEST"))
    assert names == [b"command", b"fast-command"]
    assert c.cmd("LATENCY", "RESET", "command", "fast-command", "command") == 2
    c.cmd("DEBUG", "SLEEP", "0.01")
    assert c.cmd("LATENCY", "RESET") == 1
    assert c.cmd("LATENCY", "RESET") == 0
    c.close()


def test_expire_cycle_event(new_server):
    srv = new_server("--enable-debug-command", "yes", "--latency-monitor-threshold", "1")
    c = srv.conn()
    c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    n = 200000
    for base in range(0, n, 10000):
        c.send(b"".join(encode("SET", "e%d" % i, "v", "PX", "1") for i in range(base, base + 10000)))
        for _ in range(10000):
            c.read()
    time.sleep(0.05)
    c.cmd("LATENCY", "RESET")
    c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    deadline = time.time() + 20
    while c.cmd("DBSIZE") and time.time() < deadline:
        time.sleep(0.05)
    assert c.cmd("DBSIZE") == 0
    events = {e[0]: e for e in c.cmd("LATENCY", "LATEST")}
    assert b"expire-cycle" in events and events[b"expire-cycle"][2] >= 1
    c.close()


def test_graph(new_server):
    srv = lat_server(new_server, "--latency-monitor-threshold", "5")
    c = srv.conn()
    c.cmd("DEBUG", "SLEEP", "0.01")
    time.sleep(1.05)
    c.cmd("DEBUG", "SLEEP", "0.05")
    g = c.cmd("LATENCY", "GRAPH", "command")
    lines = g.decode().split("\n")
    m = re.match(r"command - high (\d+) ms, low (\d+) ms \(all time high (\d+) ms\)$", lines[0])
    assert m and int(m.group(1)) >= 50 and 10 <= int(m.group(2)) < 50 and m.group(3) == m.group(1)
    assert lines[1] == "-" * 80
    # Four rows of bars: the low sample is a '_' at the bottom, the high one
    # reaches the top row; then a blank line and the labels, downwards.
    bars = lines[2:6]
    assert all(len(x) == 2 for x in bars)
    assert bars[3][0] == "_"
    assert bars[0][1] in "_o#" and [b[1] for b in bars[1:]] == ["|", "|", "|"]
    assert lines[6] == "  "
    assert lines[7][1] == "0" and lines[7][0] in "12"
    assert lines[8] == "ss" and lines[9] == ""
    c3 = srv.conn()
    c3.cmd("HELLO", "3")
    v = c3.cmd("LATENCY", "GRAPH", "command")
    assert isinstance(v, Verbatim) and v.fmt == b"txt"
    c3.close()
    c.close()


def test_doctor(new_server):
    srv = lat_server(new_server, "--latency-monitor-threshold", "5")
    c = srv.conn()
    doc = c.cmd("LATENCY", "DOCTOR")
    assert doc.startswith(b"Dave, no latency spike was observed") or doc.startswith(b"\nI have a few advices")
    c.cmd("DEBUG", "SLEEP", "0.02")
    doc = c.cmd("LATENCY", "DOCTOR").decode()
    assert doc.startswith("Dave, I have observed latency spikes in this Redis instance. "
                          "You don't mind talking about it, do you Dave?\n\n1. command: 1 latency spikes (average ")
    assert re.search(r"1\. command: 1 latency spikes \(average \d+ms, mean deviation 0ms, period 1\.00 sec\)\. "
                     r"Worst all time event \d+ms\.\n", doc)
    assert "I have a few advices for you:" in doc
    assert "- Check your Slow Log" in doc
    # The slow log logs above 10 ms while the monitor is at 5 ms: tuning advice.
    c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    doc = c.cmd("LATENCY", "DOCTOR").decode()
    assert "CONFIG SET slowlog-log-slower-than 5000" in doc
    c3 = srv.conn()
    c3.cmd("HELLO", "3")
    v = c3.cmd("LATENCY", "DOCTOR")
    assert isinstance(v, Verbatim) and v.fmt == b"txt" and bytes(v).startswith(b"Dave, I have observed")
    c3.close()
    c.close()


def test_errors_and_help(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    assert c.cmd("LATENCY") == Error("ERR wrong number of arguments for 'latency' command")
    assert c.cmd("LATENCY", "NOPE") == Error("ERR unknown subcommand 'NOPE'. Try LATENCY HELP.")
    assert c.cmd("LATENCY", "GRAPH") == Error("ERR wrong number of arguments for 'latency|graph' command")
    assert c.cmd("LATENCY", "HISTORY", "a", "b") == Error(
        "ERR wrong number of arguments for 'latency|history' command")
    assert c.cmd("LATENCY", "LATEST", "x") == Error("ERR wrong number of arguments for 'latency|latest' command")
    assert c.cmd("LATENCY", "DOCTOR", "x") == Error("ERR wrong number of arguments for 'latency|doctor' command")
    h = c.cmd("LATENCY", "HELP")
    assert h[0] == "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "HISTOGRAM [COMMAND ...]" in h
    assert h[-2:] == ["HELP", "    Prints this help."]
    assert c.cmd("CONFIG", "SET", "latency-monitor-threshold", "-1").startswith("ERR CONFIG SET failed")
    c.close()


# ---- LATENCY HISTOGRAM ----------------------------------------------------------

def check_cdf(rows, calls):
    labels = [k for k, _ in rows]
    counts = [v for _, v in rows]
    assert all(k in ROW_LABELS for k in labels)
    assert labels == sorted(labels) and len(set(labels)) == len(labels)
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert counts[-1] == calls


def test_histogram_resp2(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    for i in range(100):
        c.cmd("SET", "k", i)
    c.cmd("GET", "k")
    rep = c.cmd("LATENCY", "HISTOGRAM", "set", "get", "nosuchcmd")
    assert len(rep) == 4
    d = dict(zip(rep[0::2], rep[1::2]))
    assert set(d) == {b"set", b"get"}
    s = d[b"set"]
    assert s[0] == b"calls" and s[1] == 100 and s[2] == b"histogram_usec"
    rows = list(zip(s[3][0::2], s[3][1::2]))
    check_cdf(rows, 100)
    g = d[b"get"]
    assert g[1] == 1 and len(g[3]) == 2 and g[3][1] == 1
    # A command that was never called is left out.
    assert c.cmd("LATENCY", "HISTOGRAM", "lpush") == []
    # Everything: at least set, get and the histogram calls themselves.
    allrep = c.cmd("LATENCY", "HISTOGRAM")
    names = allrep[0::2]
    assert {b"set", b"get", b"latency|histogram"} <= set(names)
    c.close()


def test_histogram_resp3_and_subcommands(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    assert isinstance(c.cmd("HELLO", "3"), Map)
    c.cmd("CONFIG", "GET", "port")
    c.cmd("CONFIG", "GET", "port")
    c.cmd("CONFIG", "SET", "hz", "10")
    rep = c.cmd("LATENCY", "HISTOGRAM", "config")
    assert isinstance(rep, Map)
    d = rep.dict()
    assert set(d) == {b"config|get", b"config|set"}
    get = d[b"config|get"]
    assert isinstance(get, Map)
    assert get.dict()[b"calls"] == 2
    h = get.dict()[b"histogram_usec"]
    assert isinstance(h, Map)
    check_cdf(list(h), 2)
    rep = c.cmd("LATENCY", "HISTOGRAM", "config|set", "CONFIG|GET")
    assert [k for k, _ in rep] == [b"config|set", b"config|get"]
    assert c.cmd("LATENCY", "HISTOGRAM", "config|nosuch", "get|x") == Map()
    c.close()


def test_histogram_buckets_follow_time(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    c.cmd("CONFIG", "RESETSTAT")
    c.cmd("DEBUG", "SLEEP", "0.005")
    rep = c.cmd("LATENCY", "HISTOGRAM", "debug")
    rows = list(zip(rep[1][3][0::2], rep[1][3][1::2]))
    # One call of 5+ ms: a single row, the first power-of-two row above it.
    assert len(rows) == 1 and rows[0][1] == 1
    assert rows[0][0] in ROW_LABELS and rows[0][0] >= 5000
    c.close()


# ---- INFO latencystats -------------------------------------------------------------

def test_info_latencystats(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    assert c.cmd("CONFIG", "GET", "latency-tracking") == [b"latency-tracking", b"yes"]
    assert c.cmd("CONFIG", "GET", "latency-tracking-info-percentiles") == [
        b"latency-tracking-info-percentiles", b"50 99 99.9"]
    for i in range(50):
        c.cmd("SET", "k", i)
    text = info_section(c, "latencystats")
    assert text.startswith("# Latencystats\r\n")
    m = re.search(r"latency_percentiles_usec_set:p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3})\r\n", text)
    assert m
    p50, p99, p999 = map(float, m.groups())
    assert 0 < p50 <= p99 <= p999 < 1000000
    # Not in the default INFO, but in "all" and "everything".
    assert "# Latencystats" not in bytes(c.cmd("INFO")).decode()
    assert "# Latencystats" in bytes(c.cmd("INFO", "all")).decode()
    assert "# Latencystats" in bytes(c.cmd("INFO", "everything")).decode()
    c.close()


def test_info_percentiles_config(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    c.cmd("CONFIG", "RESETSTAT")
    c.cmd("DEBUG", "SLEEP", "0.002")
    bad = "ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - "
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "50 abc") == Error(
        bad + "Invalid latency-tracking-info-percentiles parameters")
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "50 101") == Error(
        bad + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "-1") == Error(
        bad + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
    # Out of a double's range is not a number (as Redis's string2d): not
    # "should sit between" for an overflow, not 0 for an underflow.
    for v in ("1e400", "50 1e-400", "-1e400"):
        assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", v) == Error(
            bad + "Invalid latency-tracking-info-percentiles parameters"), v
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "inf") == Error(
        bad + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
    assert c.cmd("CONFIG", "GET", "latency-tracking-info-percentiles")[1] == b"50 99 99.9"
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "50.50 99.990 0 100") == "OK"
    assert c.cmd("CONFIG", "GET", "latency-tracking-info-percentiles")[1] == b"50.5 99.99 0 100"
    stats = latencystats(c)
    assert list(stats["debug"]) == ["p50.5", "p99.99", "p0", "p100"]
    d = {k: float(v) for k, v in stats["debug"].items()}
    # One DEBUG SLEEP of 2 ms: its bucket's low end for p0, high end else.
    assert 2000 <= d["p0"] <= d["p50.5"] == d["p100"] <= 2000 * 1.01 + 1000
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "") == "OK"
    assert c.cmd("CONFIG", "GET", "latency-tracking-info-percentiles")[1] == b""
    assert "latency_percentiles_usec_debug:\r\n" in info_section(c, "latencystats")
    c.close()


def test_tracking_off_and_resetstat(new_server):
    srv = lat_server(new_server)
    c = srv.conn()
    c.cmd("SET", "a", "1")
    assert "set" in latencystats(c)
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    stats = latencystats(c)
    assert "set" not in stats
    assert c.cmd("LATENCY", "HISTOGRAM", "set") == []
    assert c.cmd("CONFIG", "SET", "latency-tracking", "no") == "OK"
    c.cmd("SET", "a", "2")
    c.cmd("GET", "a")
    stats = latencystats(c)
    assert "set" not in stats and "get" not in stats
    # INFO commandstats still counts them.
    cs = info_section(c, "commandstats")
    assert re.search(r"cmdstat_set:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0", cs)
    assert re.search(r"cmdstat_get:calls=1,", cs)
    assert c.cmd("CONFIG", "SET", "latency-tracking", "yes") == "OK"
    c.cmd("GET", "a")
    assert "get" in latencystats(c)
    c.close()


def test_histograms_merge_over_threads(new_server):
    srv = new_server(threads=4)
    n_clients, per = 8, 100

    def work():
        c = RespConn(srv.host, srv.port)
        for j in range(per):
            c.cmd("INCR", "ctr")
        c.close()

    ts = [threading.Thread(target=work) for _ in range(n_clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c = srv.conn()
    rep = c.cmd("LATENCY", "HISTOGRAM", "incr")
    assert rep[0] == b"incr" and rep[1][1] == n_clients * per
    rows = list(zip(rep[1][3][0::2], rep[1][3][1::2]))
    check_cdf(rows, n_clients * per)
    cs = info_section(c, "commandstats")
    assert re.search(r"cmdstat_incr:calls=%d," % (n_clients * per), cs)
    assert c.cmd("GET", "ctr") == str(n_clients * per).encode()
    c.close()
