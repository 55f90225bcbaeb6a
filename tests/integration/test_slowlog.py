"""SLOWLOG GET/LEN/RESET/HELP and its two settings, against Redis 8's
documented behaviour: entries of six fields, newest first with unique
increasing ids, arguments trimmed as Redis trims them, secrets redacted."""
import threading
import time

from resp import Error, Map, RespConn


def slow_server(new_server, *extra):
    return new_server("--enable-debug-command", "yes", *extra)


def entries(c, *count):
    return c.cmd("SLOWLOG", "GET", *count)


def test_defaults_and_config(new_server):
    srv = slow_server(new_server)
    c = srv.conn()
    assert c.cmd("CONFIG", "GET", "slowlog-log-slower-than") == [b"slowlog-log-slower-than", b"10000"]
    assert c.cmd("CONFIG", "GET", "slowlog-max-len") == [b"slowlog-max-len", b"128"]
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-2") == Error(
        "ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be "
        "between -1 and 9223372036854775807 inclusive")
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "-1").startswith("ERR CONFIG SET failed")
    # Fast commands stay out under the default 10 ms threshold.
    c.cmd("SET", "a", "b")
    assert c.cmd("SLOWLOG", "LEN") == 0
    assert entries(c) == []
    c.close()


def test_entry_shape(new_server):
    srv = slow_server(new_server)
    c = srv.conn()
    c.cmd("CLIENT", "SETNAME", "slowpoke")
    assert c.cmd("DEBUG", "SLEEP", "0.02") == "OK"
    e = entries(c)
    assert len(e) == 1
    eid, ts, dur, argv, peer, name = e[0]
    assert eid == 0
    assert abs(ts - time.time()) < 5
    assert 20000 <= dur < 2000000
    assert argv == [b"DEBUG", b"SLEEP", b"0.02"]
    local = c.sock.getsockname()
    assert peer == ("%s:%d" % local).encode()
    assert name == b"slowpoke"
    assert c.cmd("SLOWLOG", "LEN") == 1
    c.close()


def test_log_all_newest_first_and_count(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "0")
    c = srv.conn()
    for i in range(5):
        c.cmd("SET", "k%d" % i, "v")
    got = entries(c, "-1")
    # The SET calls, and nothing after them yet (GET is logged after it ran).
    assert [x[3] for x in got] == [[b"SET", b"k%d" % i, b"v"] for i in range(4, -1, -1)]
    ids = [x[0] for x in got]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 5
    # The GET itself is logged now.
    assert entries(c, "1")[0][3] == [b"SLOWLOG", b"GET", b"-1"]
    assert len(entries(c, "3")) == 3
    assert entries(c, "0") == []
    # Five SETs and four GETs so far; the default count is 10.
    assert len(entries(c)) == 9
    assert len(entries(c)) == 10
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    # RESET itself is logged after it ran.
    assert c.cmd("SLOWLOG", "LEN") == 1
    assert [x[3] for x in entries(c)] == [[b"SLOWLOG", b"LEN"], [b"SLOWLOG", b"RESET"]]
    c.close()


def test_disabled_and_max_len(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "0", "--slowlog-max-len", "3")
    c = srv.conn()
    for i in range(10):
        c.cmd("SET", "k", i)
    assert c.cmd("SLOWLOG", "LEN") == 3
    got = entries(c, "-1")
    assert [x[3] for x in got] == [[b"SLOWLOG", b"LEN"], [b"SET", b"k", b"9"], [b"SET", b"k", b"8"]]
    # Lowering the length trims at once.
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "1") == "OK"
    assert c.cmd("SLOWLOG", "LEN") == 1
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "0") == "OK"
    assert c.cmd("SLOWLOG", "LEN") == 0
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "128") == "OK"
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
    c.cmd("SLOWLOG", "RESET")
    c.cmd("DEBUG", "SLEEP", "0.02")
    assert c.cmd("SLOWLOG", "LEN") == 0
    c.close()


def test_ids_keep_growing_after_reset(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "0")
    c = srv.conn()
    c.cmd("PING")
    first = entries(c, "1")[0][0]
    c.cmd("SLOWLOG", "RESET")
    c.cmd("PING")
    assert entries(c, "1")[0][0] > first
    c.close()


def test_argument_trimming(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "0")
    c = srv.conn()
    c.cmd("SLOWLOG", "RESET")
    c.cmd("SADD", "s", *["m%d" % i for i in range(40)])
    argv = entries(c, "-1")[0][3]
    assert len(argv) == 32
    assert argv[:31] == [b"SADD", b"s"] + [b"m%d" % i for i in range(29)]
    assert argv[31] == b"... (11 more arguments)"
    c.cmd("SLOWLOG", "RESET")
    c.cmd("SET", "k", "x" * 200)
    argv = entries(c, "-1")[0][3]
    assert argv == [b"SET", b"k", b"x" * 128 + b"... (72 more bytes)"]
    c.cmd("SLOWLOG", "RESET")
    # Exactly 32 arguments and exactly 128 bytes are kept whole.
    c.cmd("SADD", "s", *["n%d" % i for i in range(30)])
    c.cmd("SET", "k", "y" * 128)
    got = entries(c, "-1")
    assert got[0][3] == [b"SET", b"k", b"y" * 128]
    assert len(got[1][3]) == 32 and got[1][3][-1] == b"n29"
    c.close()


def test_auth_and_hello_redacted(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "0", "--requirepass", "sekret")
    c = srv.conn()
    assert c.cmd("AUTH", "wrong") == Error("WRONGPASS invalid username-password pair or user is disabled.")
    assert c.cmd("AUTH", "sekret") == "OK"
    assert c.cmd("AUTH", "default", "sekret") == "OK"
    assert isinstance(c.cmd("HELLO", "2", "AUTH", "default", "sekret", "SETNAME", "n1"), list)
    got = [x[3] for x in entries(c, "-1")]
    assert got[:4] == [
        [b"HELLO", b"2", b"AUTH", b"(redacted)", b"(redacted)", b"SETNAME", b"n1"],
        [b"AUTH", b"(redacted)", b"(redacted)"],
        [b"AUTH", b"(redacted)"],
        [b"AUTH", b"(redacted)"],
    ]
    assert b"sekret" not in repr(entries(c, "-1")).encode()
    # A sensitive setting's value too, even when CONFIG SET fails.
    assert c.cmd("CONFIG", "SET", "requirepass", "sekret", "hz", "11") == "OK"
    assert c.cmd("CONFIG", "SET", "hz", "abc", "requirepass", "other").startswith("ERR CONFIG SET failed")
    got = [x[3] for x in entries(c, "2")]
    assert got == [[b"CONFIG", b"SET", b"hz", b"abc", b"requirepass", b"(redacted)"],
                   [b"CONFIG", b"SET", b"requirepass", b"(redacted)", b"hz", b"11"]]
    c.close()


def test_errors_and_help(new_server):
    srv = slow_server(new_server)
    c = srv.conn()
    bad = Error("ERR count should be greater than or equal to -1")
    assert c.cmd("SLOWLOG", "GET", "-2") == bad
    assert c.cmd("SLOWLOG", "GET", "abc") == bad
    assert c.cmd("SLOWLOG", "GET", "9223372036854775808") == bad
    assert c.cmd("SLOWLOG", "GET", "1", "2") == Error(
        "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.")
    assert c.cmd("SLOWLOG", "LEN", "x") == Error("ERR wrong number of arguments for 'slowlog|len' command")
    assert c.cmd("SLOWLOG", "RESET", "x") == Error("ERR wrong number of arguments for 'slowlog|reset' command")
    assert c.cmd("SLOWLOG", "NOPE") == Error("ERR unknown subcommand 'NOPE'. Try SLOWLOG HELP.")
    assert c.cmd("SLOWLOG") == Error("ERR wrong number of arguments for 'slowlog' command")
    help_ = c.cmd("SLOWLOG", "HELP")
    assert help_[0] == "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_[1] == "GET [<count>]"
    assert help_[-2:] == ["HELP", "    Prints this help."]
    assert len(help_) == 12
    c.close()


def test_resp3_shape(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "0")
    c = srv.conn()
    assert isinstance(c.cmd("HELLO", "3"), Map)
    c.cmd("SLOWLOG", "RESET")
    c.cmd("ECHO", "hi")
    raw = c.cmd_raw("SLOWLOG", "GET", "1")
    assert raw.startswith(b"*1\r\n*6\r\n:")
    assert b"*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n" in raw
    assert c.cmd("SLOWLOG", "LEN") == 3
    c.close()


def test_blocking_command_logs_execution_time_only(new_server):
    srv = slow_server(new_server, "--slowlog-log-slower-than", "100000")
    c = srv.conn()
    other = srv.conn()
    # Blocked for 0.3 s, but its execution took microseconds: not slow.
    c.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n")
    time.sleep(0.3)
    assert other.cmd("RPUSH", "q", "x") == 1
    assert c.read() == [b"q", b"x"]
    assert c.cmd("BLPOP", "q", "0.2") is None
    assert other.cmd("SLOWLOG", "LEN") == 0
    # With everything logged, the served BLPOP appears once, with its args.
    other.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0")
    other.cmd("SLOWLOG", "RESET")
    c.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n")
    time.sleep(0.1)
    other.cmd("RPUSH", "q", "y")
    assert c.read() == [b"q", b"y"]
    time.sleep(0.05)
    got = [x[3] for x in entries(other, "-1")]
    assert got.count([b"BLPOP", b"q", b"0"]) == 1
    # A timed-out one is logged once too, with its arguments, in microseconds.
    assert c.cmd("BLPOP", "q", "0.1") is None
    time.sleep(0.05)
    got = [x for x in entries(other, "-1") if x[3][0] == b"BLPOP"]
    assert got[0][3] == [b"BLPOP", b"q", b"0.1"] and got[0][2] < 100000
    assert len(got) == 2
    c.close()
    other.close()


def test_many_threads_unique_ids(new_server):
    srv = new_server("--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000", threads=4)
    n_clients, per = 8, 200

    def work(i):
        c = RespConn(srv.host, srv.port)
        for j in range(per):
            c.cmd("SET", "t%d" % i, j)
        c.close()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(n_clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c = srv.conn()
    got = entries(c, "-1")
    sets = [x for x in got if x[3][:1] == [b"SET"]]
    assert len(sets) == n_clients * per
    ids = [x[0] for x in got]
    assert ids == sorted(ids, reverse=True)
    assert len(set(ids)) == len(ids)
    # Each client's own commands appear in its order (newest first).
    for i in range(n_clients):
        vals = [int(x[3][2]) for x in sets if x[3][1] == b"t%d" % i]
        assert vals == list(range(per - 1, -1, -1))
    c.close()


def test_command_table(new_server):
    srv = new_server()
    c = srv.conn()
    info = c.cmd("COMMAND", "INFO", "slowlog")[0]
    assert info[0] == b"slowlog" and info[1] == -2
    subs = sorted(x[0] for x in info[9])
    assert subs == [b"slowlog|get", b"slowlog|help", b"slowlog|len", b"slowlog|reset"]
    c.close()
