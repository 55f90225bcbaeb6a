"""Behaviour Redis's own test suite checks and HotKV once answered
differently: SORT ... STORE's encoding, the query-buffer fields of CLIENT
LIST / CLIENT INFO, CONFIG SET of bind and port at run time and the
settings CONFIG GET * lists (Redis's `CONFIG sanity`), CONFIG RESETSTAT
counting itself, FLUSHALL / FLUSHDB SYNC as a waited-for lazy flush (Redis
7.4), score parsing of any valid double, and MODULE LIST / HELP.

Tests that change listeners or counters run on private servers."""
import re
import select
import socket

import pytest
from conftest import free_port, real_redis
from poll import info_field, wait_probe_gone, wait_until
from resp import Error, Map, RespConn, encode


def cget(c, *names):
    reply = c.cmd("CONFIG", "GET", *names)
    return {reply[i].decode(): reply[i + 1].decode() for i in range(0, len(reply), 2)}


def failed(name, why):
    return Error("ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (name, why))


def refused(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def client_fields(line):
    return dict(f.split("=", 1) for f in line.split(" "))


def client_lines(c):
    reply = c.cmd("CLIENT", "LIST")
    return [client_fields(l) for l in reply.decode().strip("\n").split("\n")]


def client_line(c, cid):
    for f in client_lines(c):
        if int(f["id"]) == cid:
            return f
    raise AssertionError("client %d not listed" % cid)


# ---- SORT ... STORE ------------------------------------------------------------


def test_sort_store_listpack_at_full_limit(new_server):
    # Redis's sort.tcl runs with list-max-listpack-size 16 and expects a
    # stored result of 16 elements to be a listpack: the stored list is
    # converted at the full limit, not at the half a shrinking list uses.
    c = new_server("--list-max-listpack-size", "16").conn()
    for n, enc in ((9, b"listpack"), (16, b"listpack"), (17, b"quicklist")):
        c.cmd("DEL", "src", "dst")
        c.cmd("RPUSH", "src", *[str(i) for i in range(n, 0, -1)])
        assert c.cmd("SORT", "src", "STORE", "dst") == n
        assert c.cmd("OBJECT", "ENCODING", "dst") == enc, n
        assert c.cmd("LRANGE", "dst", 0, -1) == [str(i).encode() for i in range(1, n + 1)]
    # GET projections count as elements too.
    c.cmd("DEL", "src", "dst")
    c.cmd("RPUSH", "src", *[str(i) for i in range(8)])
    assert c.cmd("SORT", "src", "GET", "#", "GET", "nokey_*", "STORE", "dst") == 16
    assert c.cmd("OBJECT", "ENCODING", "dst") == b"listpack"
    # A list shrinking under the limit by pops still uses half of it.
    c.cmd("DEL", "l")
    c.cmd("RPUSH", "l", *[str(i) for i in range(17)])
    assert c.cmd("OBJECT", "ENCODING", "l") == b"quicklist"
    c.cmd("RPOP", "l", 5)
    assert c.cmd("OBJECT", "ENCODING", "l") == b"quicklist"
    # Size limits (negative fill) too: 100 small elements fit in 8 kB.
    assert c.cmd("CONFIG", "SET", "list-max-listpack-size", "-2") == "OK"
    c.cmd("DEL", "src", "dst")
    c.cmd("RPUSH", "src", *[str(i) for i in range(100)])
    assert c.cmd("SORT", "src", "STORE", "dst") == 100
    assert c.cmd("OBJECT", "ENCODING", "dst") == b"listpack"
    c.close()


# ---- CLIENT LIST / CLIENT INFO query buffer --------------------------------------


def test_client_list_shows_running_request_and_idle_clients_hold_no_buffer(new_server):
    srv = new_server()
    c = srv.conn()
    wait_probe_gone(c)
    idle = srv.conn()
    idle_id = idle.cmd("CLIENT", "ID")
    assert idle.cmd("PING") == "PONG"
    my_id = c.cmd("CLIENT", "ID")
    mine = client_line(c, my_id)
    # The asking connection: its own request, as Redis's introspection.tcl
    # expects ("qbuf=26" for CLIENT LIST), and the rest of the buffer free.
    assert mine["qbuf"] == str(len(encode("client", "list"))) == "26"
    assert int(mine["qbuf-free"]) > 0
    assert mine["argv-mem"] == "10"
    assert mine["cmd"] == "client|list"
    # An idle connection holds no query buffer (Redis 8's reusable one).
    other = client_line(c, idle_id)
    assert other["qbuf"] == "0" and other["qbuf-free"] == "0"
    info = client_fields(c.cmd("CLIENT", "INFO").decode().strip("\n"))
    assert info["qbuf"] == "26" and int(info["qbuf-free"]) > 0
    # Pipelined: the buffer holds what was read with the running request.
    c.send(encode("PING") + encode("CLIENT", "INFO"))
    assert c.read() == "PONG"
    info = client_fields(c.read().decode().strip("\n"))
    assert info["qbuf"] == str(len(encode("PING") + encode("CLIENT", "INFO")))
    idle.close()
    c.close()


def test_partial_request_keeps_its_buffer_until_idle(new_server):
    # Redis's querybuf.tcl "query buffer resized correctly".
    srv = new_server()
    c = srv.conn()
    rd = srv.conn()
    assert rd.cmd("CLIENT", "SETNAME", "test_client") == "OK"

    def qb():
        for f in client_lines(c):
            if f["name"] == "test_client":
                return int(f["qbuf"]) + int(f["qbuf-free"])
        raise AssertionError("test_client not listed")

    assert qb() == 0
    rd.send(b"*3\r\n$3\r\nset\r\n$2\r\na")
    wait_until(qb, lambda v: v > 0, what="partial request read")
    rd.send(b"a\r\n$1\r\nb\r\n")
    assert rd.read() == "OK"
    # A buffer that held a partial request stays the connection's own...
    assert 16384 <= qb() <= 32770
    # ...until it has been idle for a while.
    wait_until(qb, lambda v: v == 0, timeout=15, what="buffer given back")
    assert rd.cmd("GET", "aa") == b"b"
    rd.close()
    c.close()


# ---- CONFIG: CONFIG GET * as Redis's CONFIG sanity sees it --------------------------

# The settings Redis 8's introspection.tcl "CONFIG sanity" leaves alone.
SANITY_SKIP = set("""rdbchecksum daemonize tcp-backlog always-show-logo syslog-enabled cluster-enabled disable-thp
aclfile unixsocket pidfile syslog-ident appendfilename appenddirname supervised syslog-facility databases io-threads
logfile unixsocketperm replicaof slaveof requirepass server-cpulist bio-cpulist aof-rewrite-cpulist bgsave-cpulist
server_cpulist bio_cpulist aof_rewrite_cpulist bgsave_cpulist set-proc-title cluster-config-file cluster-port
oom-score-adj oom-score-adj-values enable-protected-configs enable-debug-command enable-module-command dbfilename
dir socket-mark-id req-res-logfile client-default-resp vset-force-single-threaded-execution""".split())


def test_config_sanity(new_server):
    srv = new_server()
    c = srv.conn()
    before = cget(c, "*")
    for k, v in before.items():
        if k in SANITY_SKIP:
            continue
        assert c.cmd("CONFIG", "SET", k, v) == "OK", k
    after = cget(c, "*")
    for k, v in before.items():
        if k not in SANITY_SKIP:
            assert after[k] == v, k
    # Setting bind and port to what they are disturbs nothing.
    assert c.cmd("PING") == "PONG"
    other = srv.conn()
    assert other.cmd("PING") == "PONG"
    other.close()
    c.close()


def test_hotkv_settings_hidden_but_answered(new_server):
    srv = new_server("--shards", "64", threads=3)
    c = srv.conn()
    everything = cget(c, "*")
    assert "threads" not in everything and "shards" not in everything
    assert "threads" not in cget(c, "thr*") and "shards" not in cget(c, "*ards")
    # Named, they answer (under the spelling asked).
    assert cget(c, "threads") == {"threads": "3"}
    assert cget(c, "SHARDS") == {"SHARDS": "64"}
    assert cget(c, "threads", "shards", "port") == {"threads": "3", "shards": "64", "port": str(srv.port)}
    # Redis's io-threads is listed and names the workers; immutable, as in Redis.
    assert everything["io-threads"] == "3"
    assert c.cmd("CONFIG", "SET", "io-threads", "2") == failed("io-threads", "can't set immutable config")
    c.close()


def test_io_threads_sets_the_worker_count(new_server, tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text("# a redis.conf\nio-threads 3\n")
    srv = new_server("--include", str(conf), threads=1)  # the file comes later: it wins
    c = srv.conn()
    assert cget(c, "io-threads", "threads") == {"io-threads": "3", "threads": "3"}
    # Every worker takes connections: CLIENT LIST names the one that owns each.
    conns = [srv.conn() for _ in range(24)]
    for x in conns:
        assert x.cmd("PING") == "PONG"
    owners = {int(f["io-thread"]) for f in client_lines(c)}
    assert owners <= {0, 1, 2} and len(owners) > 1
    for x in conns:
        x.close()
    c.close()
    for bad, why in (("0", "argument must be between 1 and 256 inclusive"),
                     ("x", "argument couldn't be parsed into an integer")):
        with pytest.raises(RuntimeError) as e:
            new_server("--io-threads", bad)
        assert why in str(e.value)


# ---- CONFIG SET port / bind ----------------------------------------------------------


def test_config_set_port_moves_every_worker(new_server):
    srv = new_server(threads=4)
    c = srv.conn()
    old = srv.port
    new = free_port()
    assert c.cmd("CONFIG", "SET", "port", str(new)) == "OK"
    # When CONFIG SET answers, every worker listens on the new port and
    # none on the old one; connections made before stay.
    assert refused(srv.host, old)
    assert c.cmd("PING") == "PONG"
    assert cget(c, "port") == {"port": str(new)}
    assert info_field(c, "server", "tcp_port") == str(new)
    conns = [RespConn(srv.host, new) for _ in range(24)]
    for x in conns:
        assert x.cmd("PING") == "PONG"
    owners = {int(f["io-thread"]) for f in client_lines(conns[0])}
    assert len(owners) > 1
    for x in conns:
        x.close()
    # Back to the first port.
    assert c.cmd("CONFIG", "SET", "port", str(old)) == "OK"
    assert RespConn(srv.host, old).cmd("PING") == "PONG"
    assert refused(srv.host, new)
    c.close()


def test_config_set_port_in_use_keeps_the_old_one(new_server):
    # Redis's networking.tcl "CONFIG SET port number" and introspection.tcl
    # "CONFIG SET rollback on apply error".
    srv = new_server()
    c = srv.conn()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    used = busy.getsockname()[1]
    hz = cget(c, "hz")["hz"]
    assert c.cmd("CONFIG", "SET", "hz", "77", "port", str(used), "timeout", "5") == \
        failed("port", "Unable to listen on this port")
    assert cget(c, "port", "hz", "timeout") == {"port": str(srv.port), "hz": hz, "timeout": "0"}
    assert RespConn(srv.host, srv.port).cmd("PING") == "PONG"
    busy.close()
    # The port was opened, then another setting failed to apply: the new
    # port is closed again and the old one stays.
    new = free_port()
    reply = c.cmd("CONFIG", "SET", "port", str(new), "maxclients", "2000000000")
    assert str(reply).startswith("ERR CONFIG SET failed (possibly related to argument 'maxclients')")
    assert cget(c, "port") == {"port": str(srv.port)}
    assert refused(srv.host, new)
    assert RespConn(srv.host, srv.port).cmd("PING") == "PONG"
    c.close()


def test_config_set_bind(new_server):
    srv = new_server()
    c = srv.conn()
    # networking.tcl "CONFIG SET bind address".
    assert c.cmd("CONFIG", "SET", "bind", "999.999.999.999") == \
        failed("bind", "Failed to bind to specified addresses.")
    assert cget(c, "bind") == {"bind": "127.0.0.1"}
    assert RespConn(srv.host, srv.port).cmd("PING") == "PONG"
    # An optional address that cannot be bound is skipped, as at start.
    assert c.cmd("CONFIG", "SET", "bind", "127.0.0.1 -999.1.1.1") == "OK"
    assert RespConn(srv.host, srv.port).cmd("PING") == "PONG"
    # networking.tcl "Default bind address configuration handling": no
    # address, no TCP; the unix socket still answers and can bring it back.
    assert c.cmd("CONFIG", "SET", "bind", "") == "OK"
    assert cget(c, "bind") == {"bind": ""}
    assert refused(srv.host, srv.port)
    assert c.cmd("PING") == "PONG"
    u = RespConn(unix=srv.unix)
    assert u.cmd("CONFIG", "SET", "bind", "*") == "OK"
    assert RespConn(srv.host, srv.port).cmd("PING") == "PONG"
    assert c.cmd("CONFIG", "SET", "bind", "127.0.0.1", "port", str(srv.port)) == "OK"
    assert RespConn(srv.host, srv.port).cmd("PING") == "PONG"
    u.close()
    c.close()


def test_config_set_port_inside_multi(new_server):
    srv = new_server()
    c = srv.conn()
    new = free_port()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("CONFIG", "SET", "port", str(new)) == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]
    wait_until(lambda: refused(srv.host, srv.port), lambda v: v, what="old port closed")
    assert RespConn(srv.host, new).cmd("PING") == "PONG"
    c.close()


# ---- CONFIG RESETSTAT ------------------------------------------------------------------


def commandstats(c):
    text = c.cmd("INFO", "commandstats").decode()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"cmdstat_(\S+?):calls=(\d+),", text)}


def test_resetstat_counts_itself(new_server):
    srv = new_server(threads=3)
    c = srv.conn()
    wait_probe_gone(c)
    c.cmd("SET", "k", "v")
    c.cmd("GET", "k")
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    assert commandstats(c) == {"config|resetstat": 1}
    assert info_field(c, "stats", "total_commands_processed") == "2"  # RESETSTAT, the INFO before
    lat = c.cmd("INFO", "latencystats").decode()
    assert "latency_percentiles_usec_config|resetstat:" in lat
    assert "latency_percentiles_usec_get:" not in lat
    hist = c.cmd("LATENCY", "HISTOGRAM", "config|resetstat")
    assert hist[0] == b"config|resetstat" and hist[1][1] == 1
    # The connection's own count is not reset.
    assert int(client_fields(c.cmd("CLIENT", "INFO").decode().strip())["tot-cmds"]) >= 7
    c.close()


def test_resetstat_matches_redis(new_server):
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        c = new_server().conn()
        for x in (ref, c):
            x.cmd("SET", "a", "1")
            assert x.cmd("CONFIG", "RESETSTAT") == "OK"
        assert commandstats(c) == commandstats(ref)
        ref.close()
        c.close()


# ---- FLUSHALL / FLUSHDB SYNC ---------------------------------------------------------


def lazyfreed(c):
    return int(info_field(c, "memory", "lazyfreed_objects"))


def pending(c):
    return int(info_field(c, "memory", "lazyfree_pending_objects"))


def test_flush_sync_runs_as_waited_lazy_flush(new_server):
    # Redis's lazyfree.tcl "FLUSHALL SYNC optimized to run in bg as
    # blocking FLUSHALL ASYNC".
    c = new_server().conn()
    c.send(b"".join(encode("SET", "k%d" % i, "v") for i in range(1000)))
    for _ in range(1000):
        assert c.read() == "OK"
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    assert c.cmd("FLUSHALL", "SYNC") == "OK"
    assert c.cmd("DBSIZE") == 0
    # Answered once the keys were freed, by the lazy free thread.
    assert pending(c) == 0 and lazyfreed(c) == 1000
    c.cmd("SELECT", "2")
    c.cmd("MSET", "a", "1", "b", "2")
    assert c.cmd("FLUSHDB", "SYNC") == "OK"
    assert lazyfreed(c) == 1002
    # Without an argument, lazyfree-lazy-user-flush no means SYNC: the same.
    c.cmd("SET", "x", "1")
    assert c.cmd("FLUSHALL") == "OK"
    assert lazyfreed(c) == 1003
    # Pipelined: each waits for the one before, and what follows runs after.
    c.cmd("SET", "y", "1")
    c.send(encode("FLUSHALL", "SYNC") + encode("FLUSHALL", "SYNC") + encode("SET", "z", "1") + encode("DBSIZE"))
    assert [c.read() for _ in range(4)] == ["OK", "OK", "OK", 1]
    assert lazyfreed(c) == 1004
    c.close()


def test_flush_sync_inside_multi_or_script_frees_in_place(new_server):
    c = new_server().conn()
    c.cmd("SET", "x", "1")
    c.cmd("MULTI")
    c.cmd("FLUSHALL", "SYNC")
    assert c.cmd("EXEC") == ["OK"]
    assert c.cmd("DBSIZE") == 0 and lazyfreed(c) == 0
    c.cmd("SET", "x", "1")
    assert c.cmd("EVAL", "return redis.call('flushall', 'sync')", 0) == "OK"
    assert c.cmd("DBSIZE") == 0 and lazyfreed(c) == 0
    # ASYNC is unchanged: it answers at once.
    c.cmd("SET", "x", "1")
    assert c.cmd("FLUSHALL", "ASYNC") == "OK"
    wait_until(lambda: lazyfreed(c), lambda v: v == 1, what="async flush freed")
    c.close()


def test_flush_sync_waits_while_its_worker_serves_others(new_server):
    srv = new_server(threads=1)
    a = RespConn(srv.host, srv.port, timeout=60)
    b = srv.conn()
    n = 0
    for k in range(4):
        for start in range(0, 50_000, 5000):
            a.send(encode("SADD", "big%d" % k, *["m%d" % i for i in range(start, start + 5000)]))
            n += 1
    for _ in range(n):
        assert a.read() == 5000
    a.send(encode("FLUSHALL", "SYNC"))
    # The one worker goes on serving: b is answered while a's 200,000
    # members are being freed (a few hundred milliseconds), a after.
    assert b.cmd("PING") == "PONG"
    assert b.cmd("DBSIZE") == 0
    assert not select.select([a.sock], [], [], 0)[0], "FLUSHALL SYNC answered before the other client"
    assert a.read() == "OK"
    assert pending(b) == 0 and lazyfreed(b) == 4
    a.close()
    b.close()


def test_flush_sync_client_gone_before_the_answer(new_server):
    srv = new_server()
    a = srv.conn()
    a.send(b"".join(encode("SADD", "s", *["m%d" % i for i in range(j, j + 1000)]) for j in range(0, 200_000, 1000)))
    for _ in range(200):
        a.read()
    a.send(encode("FLUSHALL", "SYNC"))
    a.close()
    b = srv.conn()
    wait_until(lambda: lazyfreed(b), lambda v: v == 1, what="flush done")
    assert b.cmd("PING") == "PONG"
    b.close()


# ---- score parsing --------------------------------------------------------------------

DBL_MAX_FULL = ("179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878"
                "171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075"
                "868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026"
                "184124858368.00000000000000000")


def test_scores_of_any_length(conn):
    assert len(DBL_MAX_FULL) == 327
    # Redis's zset.tcl "zset score double range".
    assert conn.cmd("ZADD", "zz", DBL_MAX_FULL, "dblmax") == 1
    assert conn.cmd("ZSCORE", "zz", "dblmax") == b"1.7976931348623157e+308"
    assert conn.cmd("ZINCRBY", "zz", "-" + DBL_MAX_FULL, "dblmax") == b"0"
    assert conn.cmd("ZADD", "zz", "1" + "0" * 400, "huge") == Error("ERR value is not a valid float")
    assert conn.cmd("ZADD", "zz", "1" * 300 + "x", "bad") == Error("ERR value is not a valid float")
    padded = "0" * 500 + "2.5"
    assert conn.cmd("ZADD", "zz", padded, "p") == 1
    assert conn.cmd("ZSCORE", "zz", "p") == b"2.5"
    assert conn.cmd("ZRANGEBYSCORE", "zz", padded, DBL_MAX_FULL) == [b"p"]


def test_scores_match_redis(conn):
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        for args in (("ZADD", "z", DBL_MAX_FULL, "a"), ("ZSCORE", "z", "a"), ("ZADD", "z", "1" + "0" * 400, "b"),
                     ("ZADD", "z", "0" * 300 + "7", "c"), ("ZRANGE", "z", 0, -1, "WITHSCORES")):
            assert conn.cmd(*args) == ref.cmd(*args), args
        ref.close()


# ---- MODULE ----------------------------------------------------------------------------


def test_module_list(conn, conn3):
    # Redis 8 lists its bundled vector sets this way.
    assert conn.cmd("MODULE", "LIST") == [[b"name", b"vectorset", b"ver", 1, b"path", b"", b"args", []]]
    assert conn3.cmd("MODULE", "LIST") == [Map([(b"name", b"vectorset"), (b"ver", 1), (b"path", b""),
                                                (b"args", [])])]
    assert conn.cmd("MODULE", "LIST", "x") == Error("ERR wrong number of arguments for 'module|list' command")


def test_module_help_and_table(conn):
    lines = conn.cmd("MODULE", "HELP")
    assert lines[0] == "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[-2:] == ["HELP", "    Prints this help."]
    assert conn.cmd("MODULE") == Error("ERR wrong number of arguments for 'module' command")
    info = conn.cmd("COMMAND", "INFO", "module")[0]
    assert info[0] == b"module" and info[1] == -2
    assert sorted(s[0] for s in info[9]) == [b"module|help", b"module|list"]
    assert conn.cmd("COMMAND", "DOCS", "module|list")[0] == b"module|list"
    with real_redis() as port:
        if port is None:
            return
        ref = RespConn(port=port)
        assert conn.cmd("MODULE", "HELP") == ref.cmd("MODULE", "HELP")
        ref.close()
