"""Streams without consumer groups: XADD, XRANGE, XREVRANGE, XLEN, XDEL,
XDELEX, XTRIM, XREAD (BLOCK included) and XSETID, with Redis 8.4's replies
and error texts in RESP2 and RESP3, how blocked readers are woken on any
worker thread, how the type works with the rest of the keyspace, and what
the stream writes propagate.

Replies are checked with RespConn (typed values, or the exact wire bytes
where the reply type is the point). A test named *_both runs once on a
RESP2 and once on a RESP3 connection.
"""
import threading
import time

import pytest
import redis

from poll import wait_until
from resp import Error, Map, encode
from test_exec import debug_server, journal, journal_cmds

SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
BAD_ID = Error("ERR Invalid stream ID specified as stream command argument")
SMALL = Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
MAXID = "18446744073709551615-18446744073709551615"


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request):
    return request.getfixturevalue("conn" if request.param == 2 else "conn3")


def blocked(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n):
    wait_until(lambda: blocked(r), lambda v: v == n, what="blocked_clients == %d" % n)


def block(server, r, *cmd, already=0, resp3=False):
    c = server.conn()
    if resp3:
        c.cmd("HELLO", "3")
    c.send(encode(*cmd))
    wait_blocked(r, already + 1)
    return c


def entries(c, key):
    return c.cmd("XRANGE", key, "-", "+")


def fill(c, key, n, start=1):
    for i in range(start, start + n):
        assert c.cmd("XADD", key, "%d-1" % i, "f", str(i)) == b"%d-1" % i


# ---- XADD -------------------------------------------------------------------


def test_xadd_explicit_and_auto_ids_both(c):
    assert c.cmd("XADD", "s", "1-1", "a", "1") == b"1-1"
    assert c.cmd("XADD", "s", "1-2", "a", "2", "b", "3") == b"1-2"
    assert c.cmd("XADD", "s", "5", "a", "3") == b"5-0"    # missing sequence: 0
    assert c.cmd("XADD", "s", "5-*", "a", "4") == b"5-1"  # same ms: next sequence
    assert c.cmd("XADD", "s", "7-*", "a", "5") == b"7-0"  # new ms: sequence 0
    before = int(time.time() * 1000)
    auto = c.cmd("XADD", "s", "*", "a", "6")
    ms, seq = map(int, auto.split(b"-"))
    assert abs(ms - before) < 5000 and seq == 0
    assert c.cmd("XLEN", "s") == 6
    assert entries(c, "s")[:2] == [[b"1-1", [b"a", b"1"]], [b"1-2", [b"a", b"2", b"b", b"3"]]]


def test_xadd_auto_id_after_a_future_top(conn):
    assert conn.cmd("XADD", "s", "99999999999999-5", "f", "v") == b"99999999999999-5"
    assert conn.cmd("XADD", "s", "*", "f", "v") == b"99999999999999-6"
    assert conn.cmd("XADD", "x", "2577343934890-18446744073709551615", "f", "v")
    assert conn.cmd("XADD", "x", "*", "f", "v") == b"2577343934891-0"


def test_xadd_id_errors_both(c):
    assert c.cmd("XADD", "s", "0-0", "f", "v") == Error("ERR The ID specified in XADD must be greater than 0-0")
    assert c.cmd("XADD", "s", "0", "f", "v") == Error("ERR The ID specified in XADD must be greater than 0-0")
    assert c.cmd("EXISTS", "s") == 0
    assert c.cmd("XADD", "s", "0-*", "f", "v") == b"0-1"
    assert c.cmd("XADD", "s", "5-5", "f", "v") == b"5-5"
    assert c.cmd("XADD", "s", "5-5", "f", "v") == SMALL
    assert c.cmd("XADD", "s", "5-4", "f", "v") == SMALL
    assert c.cmd("XADD", "s", "4-*", "f", "v") == SMALL
    assert c.cmd("XADD", "s", "4", "f", "v") == SMALL
    for bad in ["abc", "1-abc", "-", "+", "1-", "-1", "1-2-3", "1--1", "(1", "1-**", "18446744073709551616",
                "1-18446744073709551616", "*-1"]:
        assert c.cmd("XADD", "s", bad, "f", "v") == BAD_ID, bad
    assert c.cmd("XLEN", "s") == 2


def test_xadd_id_parsing_quirks_like_redis(conn):
    # Redis reads each half with strtoull once a strict parse fails.
    assert conn.cmd("XADD", "s", " 5", "f", "v") == b"5-0"
    assert conn.cmd("XADD", "s", "+6-1", "f", "v") == b"6-1"
    assert conn.cmd("XADD", "s", "18446744073709551615-0", "f", "v") == b"18446744073709551615-0"


def test_xadd_exhausted_stream(conn):
    assert conn.cmd("XADD", "s", MAXID, "f", "v") == MAXID.encode()
    err = Error("ERR The stream has exhausted the last possible ID, unable to add more items")
    assert conn.cmd("XADD", "s", "*", "f", "v") == err
    assert conn.cmd("XADD", "s", "1-1", "f", "v") == err
    assert conn.cmd("XADD", "t", "5-18446744073709551615", "f", "v")
    # The automatic sequence cannot overflow (Redis 7.0 words this one
    # differently; Redis 8 reports the id as too small).
    assert isinstance(conn.cmd("XADD", "t", "5-*", "f", "v"), Error)
    assert conn.cmd("XADD", "t", "*", "f", "v") != SMALL


def test_xadd_arity_and_syntax(conn):
    arity = Error("ERR wrong number of arguments for 'xadd' command")
    assert conn.cmd("XADD", "s", "*", "f") == arity
    assert conn.cmd("XADD", "s", "*", "f", "v", "g") == arity
    assert conn.cmd("XADD", "s", "NOMKSTREAM", "*", "f") == arity
    assert conn.cmd("XADD", "s", "MAXLEN", "5", "*") == arity
    assert conn.cmd("XADD", "s", "NOMKSTREAM", "NOMKSTREAM", "NOMKSTREAM") == arity
    assert conn.cmd("XADD", "s", "*") == arity
    assert conn.cmd("XADD", "s", "MAXLEN", "5", "f") == BAD_ID
    assert conn.cmd("XADD", "s", "BOGUS", "*", "f", "v") == BAD_ID
    assert conn.cmd("EXISTS", "s") == 0


def test_xadd_nomkstream_both(c):
    raw = c.cmd_raw("XADD", "s", "NOMKSTREAM", "*", "f", "v")
    assert raw in (b"$-1\r\n", b"_\r\n")
    assert c.cmd("EXISTS", "s") == 0
    assert c.cmd("XADD", "s", "1-1", "f", "v") == b"1-1"
    assert c.cmd("XADD", "s", "NOMKSTREAM", "2-1", "f", "v") == b"2-1"
    assert c.cmd("XLEN", "s") == 2


def test_xadd_nomkstream_null_reply_types(conn, conn3):
    assert conn.cmd_raw("XADD", "s", "NOMKSTREAM", "*", "f", "v") == b"$-1\r\n"
    assert conn3.cmd_raw("XADD", "s", "NOMKSTREAM", "*", "f", "v") == b"_\r\n"


def test_xadd_wrongtype(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("XADD", "k", "*", "f", "v") == WRONGTYPE
    assert conn.cmd("XADD", "k", "NOMKSTREAM", "*", "f", "v") == WRONGTYPE


def test_xadd_binary_and_empty_fields(conn):
    assert conn.cmd("XADD", "s", "1", b"\x00bin\xff", b"", b"", b"12345678901234567890") == b"1-0"
    assert conn.cmd("XADD", "s", "2", "n", "-17") == b"2-0"
    assert entries(conn, "s") == [[b"1-0", [b"\x00bin\xff", b"", b"", b"12345678901234567890"]],
                                  [b"2-0", [b"n", b"-17"]]]


def test_xadd_many_entries_and_field_layouts(conn):
    # Same fields as the first entry of a node, different ones, more and
    # fewer, across many nodes.
    expected = []
    for i in range(1, 1201):
        if i % 7 == 0:
            fields = [b"other", b"%d" % i]
        elif i % 11 == 0:
            fields = [b"item", b"%d" % i, b"extra", b"x" * (i % 50)]
        else:
            fields = [b"item", b"%d" % i]
        conn.cmd("XADD", "s", "%d-0" % i, *fields)
        expected.append([b"%d-0" % i, fields])
    assert conn.cmd("XLEN", "s") == 1200
    assert entries(conn, "s") == expected
    assert conn.cmd("XREVRANGE", "s", "+", "-") == expected[::-1]


def test_xadd_maxlen_and_minid(conn):
    for i in range(1, 11):
        conn.cmd("XADD", "s", "MAXLEN", "5", "%d-1" % i, "f", str(i))
    assert conn.cmd("XLEN", "s") == 5
    assert [e[0] for e in entries(conn, "s")] == [b"%d-1" % i for i in range(6, 11)]
    conn.cmd("XADD", "s", "MAXLEN", "=", "2", "11-1", "f", "v")
    assert [e[0] for e in entries(conn, "s")] == [b"10-1", b"11-1"]
    conn.cmd("XADD", "s", "MINID", "11", "12-1", "f", "v")
    assert [e[0] for e in entries(conn, "s")] == [b"11-1", b"12-1"]
    conn.cmd("XADD", "s", "MINID", "=", "12-1", "13-1", "f", "v")
    assert [e[0] for e in entries(conn, "s")] == [b"12-1", b"13-1"]
    # MAXLEN 0 keeps the key, empty.
    assert conn.cmd("XADD", "z", "MAXLEN", "0", "*", "f", "v")
    assert conn.cmd("XLEN", "z") == 0
    assert conn.cmd("EXISTS", "z") == 1
    # MAXLEN above the length trims nothing.
    assert conn.cmd("XADD", "s", "MAXLEN", "200", "14-1", "f", "v") == b"14-1"
    assert conn.cmd("XLEN", "s") == 3


def test_xadd_trim_option_errors(conn):
    assert conn.cmd("XADD", "s", "MAXLEN", "-1", "*", "f", "v") == Error("ERR The MAXLEN argument must be >= 0.")
    assert conn.cmd("XADD", "s", "MAXLEN", "abc", "*", "f", "v") == NOT_INT
    assert conn.cmd("XADD", "s", "MAXLEN", "~", "x", "*", "f", "v") == NOT_INT
    assert conn.cmd("XADD", "s", "MINID", "abc", "*", "f", "v") == BAD_ID
    assert conn.cmd("XADD", "s", "MINID", "-", "*", "f", "v") == BAD_ID
    assert conn.cmd("XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v") == Error(
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    assert conn.cmd("XADD", "s", "MINID", "1", "MAXLEN", "1", "*", "f", "v") == Error(
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    assert conn.cmd("XADD", "s", "MAXLEN", "5", "LIMIT", "10", "*", "f", "v") == Error(
        "ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert conn.cmd("XADD", "s", "MAXLEN", "=", "5", "LIMIT", "10", "*", "f", "v") == Error(
        "ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert conn.cmd("XADD", "s", "LIMIT", "10", "*", "f", "v") == Error(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    # LIMIT 0 without a strategy passes the first check, not the second.
    assert conn.cmd("XADD", "s", "LIMIT", "0", "*", "f", "v") == Error(
        "ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert conn.cmd("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "f", "v") == Error(
        "ERR The LIMIT argument must be >= 0.")
    assert conn.cmd("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "x", "*", "f", "v") == NOT_INT
    assert conn.cmd("EXISTS", "s") == 0


def test_xadd_approx_trim_removes_whole_nodes(conn):
    assert conn.cmd("CONFIG", "SET", "stream-node-max-entries", "10") == "OK"
    try:
        for i in range(1, 101):
            conn.cmd("XADD", "s", "%d-1" % i, "f", "v")
        assert conn.cmd("XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "101-1", "f", "v") == b"101-1"
        assert conn.cmd("XLEN", "s") == 71
        assert conn.cmd("XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "102-1", "f", "v") == b"102-1"
        assert conn.cmd("XLEN", "s") == 62
        # Removing another whole node would go below the threshold.
        assert conn.cmd("XADD", "s", "MAXLEN", "~", "55", "103-1", "f", "v") == b"103-1"
        assert conn.cmd("XLEN", "s") == 63
    finally:
        conn.cmd("CONFIG", "SET", "stream-node-max-entries", "100")


def test_xadd_policy_options_parse(conn):
    assert conn.cmd("XADD", "s", "KEEPREF", "1-1", "f", "v") == b"1-1"
    assert conn.cmd("XADD", "s", "DELREF", "MAXLEN", "1", "2-1", "f", "v") == b"2-1"
    assert conn.cmd("XADD", "s", "MAXLEN", "1", "ACKED", "3-1", "f", "v") == b"3-1"
    assert conn.cmd("XADD", "s", "NOMKSTREAM", "acked", "4-1", "f", "v") == b"4-1"
    assert conn.cmd("XADD", "s", "KEEPREF", "DELREF", "5-1", "f", "v") == SYNTAX
    assert [e[0] for e in entries(conn, "s")] == [b"3-1", b"4-1"]


# ---- XRANGE / XREVRANGE -----------------------------------------------------


def test_xrange_bounds_both(c):
    fill(c, "s", 5)
    ids = [b"%d-1" % i for i in range(1, 6)]
    assert [e[0] for e in c.cmd("XRANGE", "s", "-", "+")] == ids
    assert [e[0] for e in c.cmd("XRANGE", "s", "2", "4")] == ids[1:4]
    assert [e[0] for e in c.cmd("XRANGE", "s", "2-1", "4-1")] == ids[1:4]
    assert [e[0] for e in c.cmd("XRANGE", "s", "2-2", "4-0")] == ids[2:3]
    assert [e[0] for e in c.cmd("XRANGE", "s", "(2-1", "(4-1")] == ids[2:3]
    assert [e[0] for e in c.cmd("XRANGE", "s", "(1-1", "+")] == ids[1:]
    assert [e[0] for e in c.cmd("XRANGE", "s", "-", "(5-1")] == ids[:4]
    assert [e[0] for e in c.cmd("XRANGE", "s", "-", "+", "COUNT", "2")] == ids[:2]
    assert c.cmd("XRANGE", "s", "-", "+", "count", "-3") is None   # a negative COUNT is COUNT 0
    assert c.cmd("XRANGE", "s", "4", "2") == []
    assert [e[0] for e in c.cmd("XREVRANGE", "s", "+", "-")] == ids[::-1]
    assert [e[0] for e in c.cmd("XREVRANGE", "s", "4", "2")] == ids[3:0:-1]
    assert [e[0] for e in c.cmd("XREVRANGE", "s", "(4-1", "(1-1")] == [ids[2], ids[1]]
    assert [e[0] for e in c.cmd("XREVRANGE", "s", "+", "-", "COUNT", "1")] == [ids[4]]
    assert c.cmd("XRANGE", "missing", "-", "+") == []
    assert c.cmd("XREVRANGE", "missing", "+", "-") == []
    assert c.cmd("XRANGE", "s", "-", "+", "COUNT", "1") == [[b"1-1", [b"f", b"1"]]]


def test_xrange_count_zero_is_a_null_array(conn, conn3):
    conn.cmd("XADD", "s", "1", "f", "v")
    conn.cmd("SET", "str", "x")
    assert conn.cmd_raw("XRANGE", "s", "-", "+", "COUNT", "0") == b"*-1\r\n"
    assert conn3.cmd_raw("XRANGE", "s", "-", "+", "COUNT", "0") == b"_\r\n"
    assert conn.cmd_raw("XRANGE", "s", "-", "+", "COUNT", "-1") == b"*-1\r\n"
    # The key is looked at first.
    assert conn.cmd_raw("XREVRANGE", "missing", "+", "-", "COUNT", "0") == b"*0\r\n"
    assert conn.cmd("XRANGE", "str", "-", "+", "COUNT", "0") == WRONGTYPE
    assert conn.cmd_raw("XRANGE", "missing", "-", "+") == b"*0\r\n"


def test_xrange_errors(conn):
    conn.cmd("XADD", "s", "1", "f", "v")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XRANGE", "s", "x", "+") == BAD_ID
    assert conn.cmd("XRANGE", "s", "-", "x") == BAD_ID
    assert conn.cmd("XRANGE", "s", "(-", "+") == BAD_ID
    assert conn.cmd("XRANGE", "s", "-", "(+") == BAD_ID
    assert conn.cmd("XRANGE", "s", "(", "+") == BAD_ID
    assert conn.cmd("XRANGE", "s", "(" + MAXID, "+") == Error("ERR invalid start ID for the interval")
    assert conn.cmd("XRANGE", "s", "-", "(0-0") == Error("ERR invalid end ID for the interval")
    assert conn.cmd("XREVRANGE", "s", "(0-0", "-") == Error("ERR invalid end ID for the interval")
    assert conn.cmd("XREVRANGE", "s", "+", "(" + MAXID) == Error("ERR invalid start ID for the interval")
    assert conn.cmd("XRANGE", "s", "-", "+", "COUNT") == SYNTAX
    assert conn.cmd("XRANGE", "s", "-", "+", "LIMIT", "1") == SYNTAX
    assert conn.cmd("XRANGE", "s", "-", "+", "COUNT", "x") == NOT_INT
    assert conn.cmd("XRANGE", "str", "-", "+") == WRONGTYPE
    assert conn.cmd("XRANGE", "s", "-") == Error("ERR wrong number of arguments for 'xrange' command")
    # The ids are read before the key.
    assert conn.cmd("XRANGE", "str", "x", "+") == BAD_ID


def test_xrange_exclusive_edges(conn):
    conn.cmd("XADD", "s", "1-18446744073709551615", "f", "a")
    conn.cmd("XADD", "s", "2-0", "f", "b")
    conn.cmd("XADD", "s", "2-1", "f", "c")
    assert [e[0] for e in conn.cmd("XRANGE", "s", "(1-18446744073709551615", "+")] == [b"2-0", b"2-1"]
    assert [e[0] for e in conn.cmd("XRANGE", "s", "-", "(2-0")] == [b"1-18446744073709551615"]
    # A missing sequence is 0 for a start and the greatest for an end,
    # exclusive or not.
    assert [e[0] for e in conn.cmd("XRANGE", "s", "(1", "(2")] == [b"1-18446744073709551615", b"2-0", b"2-1"]
    assert [e[0] for e in conn.cmd("XRANGE", "s", "(1", "(2-1")] == [b"1-18446744073709551615", b"2-0"]
    assert [e[0] for e in conn.cmd("XRANGE", "s", "2", "2")] == [b"2-0", b"2-1"]
    assert [e[0] for e in conn.cmd("XREVRANGE", "s", "2", "1")] == [b"2-1", b"2-0", b"1-18446744073709551615"]


# ---- XLEN / XDEL / XDELEX ---------------------------------------------------


def test_xlen(conn):
    assert conn.cmd("XLEN", "missing") == 0
    fill(conn, "s", 3)
    assert conn.cmd("XLEN", "s") == 3
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XLEN", "str") == WRONGTYPE


def test_xdel_both(c):
    fill(c, "s", 5)
    assert c.cmd("XDEL", "s", "1-1", "4-1", "5-1", "9-1") == 3
    assert [e[0] for e in entries(c, "s")] == [b"2-1", b"3-1"]
    assert c.cmd("XDEL", "s", "1-1") == 0
    assert c.cmd("XDEL", "s", "2-1", "2-1") == 1
    assert c.cmd("XLEN", "s") == 1
    assert c.cmd("XDEL", "s", "3") == 0            # missing sequence: 0
    assert c.cmd("XDEL", "s", "3-1") == 1
    assert c.cmd("EXISTS", "s") == 1                # an empty stream stays
    assert c.cmd("XLEN", "s") == 0


def test_xdel_errors(conn):
    # A missing key answers 0 before the ids are read.
    assert conn.cmd("XDEL", "missing", "bad") == 0
    fill(conn, "s", 2)
    assert conn.cmd("XDEL", "s", "1-1", "bad") == BAD_ID
    assert conn.cmd("XLEN", "s") == 2               # all or nothing
    assert conn.cmd("XDEL", "s", "-") == BAD_ID
    assert conn.cmd("XDEL", "s", "+") == BAD_ID
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XDEL", "str", "1-1") == WRONGTYPE
    assert conn.cmd("XDEL", "s") == Error("ERR wrong number of arguments for 'xdel' command")


def test_xdel_last_entry_keeps_last_id(conn):
    fill(conn, "s", 2)
    assert conn.cmd("XDEL", "s", "2-1") == 1
    assert conn.cmd("XADD", "s", "2-1", "f", "v") == SMALL
    assert conn.cmd("XADD", "s", "*", "f", "v") != SMALL


def test_xdelex_codes_both(c):
    fill(c, "s", 4)
    assert c.cmd("XDELEX", "s", "IDS", "3", "1-1", "9-9", "1-1") == [1, -1, -1]
    assert c.cmd("XDELEX", "s", "KEEPREF", "IDS", "1", "2-1") == [1]
    assert c.cmd("XDELEX", "s", "IDS", "1", "3-1", "DELREF") == [1]
    # Without groups every entry counts as acknowledged.
    assert c.cmd("XDELEX", "s", "ACKED", "IDS", "2", "4-1", "4-1") == [1, -1]
    assert c.cmd("XLEN", "s") == 0
    assert c.cmd("XDELEX", "missing", "IDS", "2", "1-1", "2-2") == [-1, -1]


def test_xdelex_errors(conn):
    positive = Error("ERR Number of IDs must be a positive integer")
    mismatch = Error("ERR The `numids` parameter must match the number of arguments")
    assert conn.cmd("XDELEX", "s", "IDS", "0", "1-1") == positive
    assert conn.cmd("XDELEX", "s", "IDS", "-5", "1-1") == positive
    assert conn.cmd("XDELEX", "s", "IDS", "abc", "1-1") == positive
    assert conn.cmd("XDELEX", "s", "IDS", "3", "1-1") == mismatch
    assert conn.cmd("XDELEX", "s", "IDS", "3", "1-1", "2-2") == mismatch
    assert conn.cmd("XDELEX", "s", "IDS", "1", "1-1", "2-2") == SYNTAX
    assert conn.cmd("XDELEX", "s", "BOGUS", "IDS", "1", "1-1") == SYNTAX
    assert conn.cmd("XDELEX", "s", "KEEPREF", "DELREF", "IDS", "1", "1-1") == SYNTAX
    assert conn.cmd("XDELEX", "s", "DELREF", "ACKED", "IDS", "1", "1-1") == SYNTAX
    assert conn.cmd("XDELEX", "s", "IDS", "1", "not-an-id") == BAD_ID
    assert conn.cmd("XDELEX", "s", "IDS", "1", "-") == BAD_ID
    assert conn.cmd("XDELEX", "s", "IDS", "1") == Error("ERR wrong number of arguments for 'xdelex' command")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XDELEX", "str", "IDS", "1", "1-1") == WRONGTYPE


def group_commands(conn):
    return not isinstance(conn.cmd("XGROUP", "HELP"), Error)


def test_xdelex_and_trim_policies_with_groups(conn):
    if not group_commands(conn):
        pytest.skip("consumer groups are not available")
    fill(conn, "s", 5)
    assert conn.cmd("XGROUP", "CREATE", "s", "g", "0") == "OK"
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">")
    assert conn.cmd("XACK", "s", "g", "1-1") == 1
    # 1-1 read and acknowledged; 2-1 and 3-1 pending; 4-1 and 5-1 unread.
    assert conn.cmd("XDELEX", "s", "ACKED", "IDS", "3", "1-1", "2-1", "4-1") == [1, 2, 2]
    assert conn.cmd("XDELEX", "s", "KEEPREF", "IDS", "2-1") == Error("ERR Number of IDs must be a positive integer")
    assert conn.cmd("XDELEX", "s", "KEEPREF", "IDS", "1", "2-1") == [1]
    assert conn.cmd("XPENDING", "s", "g")[0] == 2          # reference kept
    assert conn.cmd("XDELEX", "s", "DELREF", "IDS", "2", "3-1", "2-1") == [1, -1]
    assert conn.cmd("XPENDING", "s", "g")[0] == 0          # both references gone
    # XTRIM ACKED keeps what the group has not read.
    assert conn.cmd("XTRIM", "s", "MAXLEN", "0", "ACKED") == 0
    assert conn.cmd("XLEN", "s") == 2
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "0", "ACKED") == 0
    assert conn.cmd("XTRIM", "s", "MAXLEN", "1", "DELREF") == 1
    assert conn.cmd("XPENDING", "s", "g")[0] == 1
    assert conn.cmd("XTRIM", "s", "MAXLEN", "0", "KEEPREF") == 1
    assert conn.cmd("XPENDING", "s", "g")[0] == 1


# ---- XTRIM ------------------------------------------------------------------


def test_xtrim_both(c):
    fill(c, "s", 10)
    assert c.cmd("XTRIM", "s", "MAXLEN", "8") == 2
    assert c.cmd("XTRIM", "s", "MAXLEN", "=", "6") == 2
    assert c.cmd("XTRIM", "s", "MAXLEN", "6") == 0
    assert c.cmd("XTRIM", "s", "MINID", "7") == 2
    assert c.cmd("XTRIM", "s", "MINID", "=", "8-1") == 1
    assert c.cmd("XTRIM", "s", "minid", "8-1") == 0
    assert [e[0] for e in entries(c, "s")] == [b"8-1", b"9-1", b"10-1"]
    assert c.cmd("XTRIM", "s", "MAXLEN", "0") == 3
    assert c.cmd("EXISTS", "s") == 1
    assert c.cmd("XTRIM", "missing", "MAXLEN", "0") == 0


def test_xtrim_errors(conn):
    assert conn.cmd("XTRIM", "s", "MAXLEN") == Error("ERR wrong number of arguments for 'xtrim' command")
    assert conn.cmd("XTRIM", "s", "LIMIT", "10") == Error(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    assert conn.cmd("XTRIM", "s", "KEEPREF", "ACKED") == SYNTAX
    assert conn.cmd("XTRIM", "s", "DELREF", "x") == SYNTAX
    assert conn.cmd("XTRIM", "s", "KEEPREF", "DELREF") == SYNTAX
    assert conn.cmd("XTRIM", "s", "ACKED", "LIMIT", "0") == Error(
        "ERR syntax error, XTRIM must be called with a trimming strategy")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "1", "LIMIT", "5") == Error(
        "ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "-1") == Error("ERR The MAXLEN argument must be >= 0.")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "x") == NOT_INT
    assert conn.cmd("XTRIM", "s", "MINID", "x") == BAD_ID
    assert conn.cmd("XTRIM", "s", "MAXLEN", "1", "MINID", "1") == Error(
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "-1") == Error("ERR The LIMIT argument must be >= 0.")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "1", "bogus") == SYNTAX
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XTRIM", "str", "MAXLEN", "1") == WRONGTYPE
    # Options are read before the key is.
    assert conn.cmd("XTRIM", "str", "MAXLEN", "x") == NOT_INT


def test_xtrim_approx_and_limit(conn):
    conn.cmd("CONFIG", "SET", "stream-node-max-entries", "100")
    for i in range(1, 1001):
        conn.cmd("XADD", "s", "%d-1" % i, "f", str(i))
    assert conn.cmd("XTRIM", "s", "MAXLEN", "666") == 334
    assert conn.cmd("XTRIM", "s", "MAXLEN", "=", "555") == 111
    assert conn.cmd("XTRIM", "s", "MAXLEN", "~", "444") == 55
    assert conn.cmd("XLEN", "s") == 500
    assert conn.cmd("XTRIM", "s", "MAXLEN", "~", "400") == 100
    assert conn.cmd("XLEN", "s") == 400
    assert conn.cmd("XTRIM", "s", "MINID", "~", "650") == 0
    assert conn.cmd("XTRIM", "s", "MINID", "~", "701") == 100
    assert conn.cmd("XRANGE", "s", "-", "+", "COUNT", "1")[0][0] == b"701-1"


def test_xtrim_limits(conn):
    assert conn.cmd("CONFIG", "SET", "stream-node-max-entries", "1") == "OK"
    try:
        for i in range(102):
            conn.cmd("XADD", "a", "*", "x", "v")
            conn.cmd("XADD", "b", "*", "x", "v")
        assert conn.cmd("XTRIM", "a", "MAXLEN", "~", "1") == 100   # the default LIMIT: 100 nodes' worth
        assert conn.cmd("XLEN", "a") == 2
        assert conn.cmd("XTRIM", "b", "MAXLEN", "1") == 101       # exact: no limit
        conn.cmd("CONFIG", "SET", "stream-node-max-entries", "2")
        conn.cmd("DEL", "c")
        for i in range(3):
            conn.cmd("XADD", "c", "*", "x", "v")
        assert conn.cmd("XTRIM", "c", "MAXLEN", "~", "0", "LIMIT", "1") == 0
        assert conn.cmd("XTRIM", "c", "MAXLEN", "~", "0", "LIMIT", "2") == 2
    finally:
        conn.cmd("CONFIG", "SET", "stream-node-max-entries", "100")


# ---- XSETID -----------------------------------------------------------------


def test_xsetid(conn):
    assert conn.cmd("XSETID", "s", "1-1") == Error("ERR no such key")
    conn.cmd("XADD", "s", "5-5", "f", "v")
    assert conn.cmd("XSETID", "s", "5-4") == Error(
        "ERR The ID specified in XSETID is smaller than the target stream top item")
    assert conn.cmd("XSETID", "s", "5-5") == "OK"
    assert conn.cmd("XSETID", "s", "10-0") == "OK"
    assert conn.cmd("XADD", "s", "9-9", "f", "v") == SMALL
    assert conn.cmd("XADD", "s", "*", "f", "v") != SMALL
    assert conn.cmd("XSETID", "s", "6", "ENTRIESADDED", "1") == Error(
        "ERR The ID specified in XSETID is smaller than the target stream top item")
    top = entries(conn, "s")[-1][0].decode()
    assert conn.cmd("XSETID", "s", top, "ENTRIESADDED", "1") == Error(
        "ERR The entries_added specified in XSETID is smaller than the target stream length")
    assert conn.cmd("XSETID", "s", top, "ENTRIESADDED", "-1") == Error("ERR entries_added must be positive")
    assert conn.cmd("XSETID", "s", top, "ENTRIESADDED", "x") == NOT_INT
    assert conn.cmd("XSETID", "s", "1-1", "MAXDELETEDID", "2-2") == Error(
        "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
    assert conn.cmd("XSETID", "s", top, "MAXDELETEDID", "x") == BAD_ID
    assert conn.cmd("XSETID", "s", "x") == BAD_ID
    assert conn.cmd("XSETID", "s", "+") == BAD_ID
    assert conn.cmd("XSETID", "s", top, "BOGUS") == SYNTAX
    assert conn.cmd("XSETID", "s", top, "ENTRIESADDED") == SYNTAX
    assert conn.cmd("XSETID", "s", "99999999999999-0", "ENTRIESADDED", "100", "MAXDELETEDID", "5-0") == "OK"
    assert conn.cmd("XSETID", "s", "4-0") == Error(
        "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XSETID", "str", "1-1") == WRONGTYPE


def test_xsetid_on_empty_stream_may_go_back(conn):
    conn.cmd("XADD", "s", "MAXLEN", "0", "5-0", "f", "v")
    assert conn.cmd("XLEN", "s") == 0
    # Trimming does not move max-deleted-entry-id; XDEL does.
    assert conn.cmd("XSETID", "s", "3-0") == "OK"
    assert conn.cmd("XADD", "s", "3-0", "f", "v") == SMALL
    assert conn.cmd("XADD", "s", "3-1", "f", "v") == b"3-1"
    assert conn.cmd("XDEL", "s", "3-1") == 1
    assert conn.cmd("XSETID", "s", "3-0") == Error(
        "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")
    # A given MAXDELETEDID replaces the current one.
    assert conn.cmd("XSETID", "s", "3-0", "MAXDELETEDID", "2-0") == "OK"
    assert conn.cmd("XSETID", "s", "2-0") == "OK"


# ---- XREAD (not blocking) ---------------------------------------------------


def test_xread_both(c):
    fill(c, "a", 3)
    fill(c, "b", 2)
    rep = c.cmd("XREAD", "STREAMS", "a", "b", "1-1", "0")
    pairs = list(rep) if isinstance(rep, Map) else [tuple(x) for x in rep]
    assert pairs == [(b"a", [[b"2-1", [b"f", b"2"]], [b"3-1", [b"f", b"3"]]]),
                     (b"b", [[b"1-1", [b"f", b"1"]], [b"2-1", [b"f", b"2"]]])]
    rep = c.cmd("XREAD", "COUNT", "1", "STREAMS", "missing", "b", "0", "1")
    pairs = list(rep) if isinstance(rep, Map) else [tuple(x) for x in rep]
    assert pairs == [(b"b", [[b"1-1", [b"f", b"1"]]])]   # "1" is 1-0
    assert c.cmd("XREAD", "STREAMS", "a", "b", "$", "$") is None
    assert c.cmd("XREAD", "STREAMS", "a", "3-1") is None
    assert c.cmd("XREAD", "count", "-5", "STREAMS", "a", "0")  # negative COUNT: everything
    rep = c.cmd("XREAD", "STREAMS", "a", "a", "2", "1-1")
    assert len(rep) == 2


def test_xread_reply_types(conn, conn3):
    conn.cmd("XADD", "s", "1-1", "f", "v")
    assert conn.cmd_raw("XREAD", "STREAMS", "s", "0") == (
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert conn3.cmd_raw("XREAD", "STREAMS", "s", "0") == (
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert conn.cmd_raw("XREAD", "STREAMS", "s", "$") == b"*-1\r\n"
    assert conn3.cmd_raw("XREAD", "STREAMS", "s", "$") == b"_\r\n"
    assert conn3.cmd_raw("XRANGE", "s", "-", "+") == b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


def test_xread_plus_reads_the_last_entry(conn):
    assert conn.cmd("XREAD", "STREAMS", "s", "+") is None
    fill(conn, "s", 3)
    assert conn.cmd("XREAD", "STREAMS", "s", "+") == [[b"s", [[b"3-1", [b"f", b"3"]]]]]
    assert conn.cmd("XREAD", "COUNT", "3", "STREAMS", "s", "+") == [[b"s", [[b"3-1", [b"f", b"3"]]]]]
    conn.cmd("XADD", "s", "3-18446744073709551615", "f", "m")
    assert conn.cmd("XREAD", "STREAMS", "s", "+") == [[b"s", [[b"3-18446744073709551615", [b"f", b"m"]]]]]
    conn.cmd("XDEL", "s", "3-18446744073709551615")
    assert conn.cmd("XREAD", "STREAMS", "s", "+") == [[b"s", [[b"3-1", [b"f", b"3"]]]]]
    assert conn.cmd("XREAD", "BLOCK", "100000", "STREAMS", "s", "+") == [[b"s", [[b"3-1", [b"f", b"3"]]]]]
    assert conn.cmd("XREAD", "STREAMS", "s", "nope", "s", "+", "+", "+") == [
        [b"s", [[b"3-1", [b"f", b"3"]]]], [b"s", [[b"3-1", [b"f", b"3"]]]]]
    conn.cmd("XADD", "e", "1-0", "k", "v")
    conn.cmd("XDEL", "e", "1-0")
    assert conn.cmd("XREAD", "STREAMS", "e", "+") is None
    assert conn.cmd("XREAD", "STREAMS", "{x}1", "{x}2", "{x}3", "+", "+", "+") is None


def test_xread_errors(conn):
    conn.cmd("XADD", "s", "1-1", "f", "v")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("XREAD", "STREAMS", "s") == Error("ERR wrong number of arguments for 'xread' command")
    assert conn.cmd("XREAD", "STREAMS", "s", "t", "0") == Error(
        "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
    assert conn.cmd("XREAD", "COUNT", "1", "s", "0") == SYNTAX
    assert conn.cmd("XREAD", "COUNT", "x", "STREAMS", "s", "0") == NOT_INT
    assert conn.cmd("XREAD", "BLOCK", "x", "STREAMS", "s", "0") == Error(
        "ERR timeout is not an integer or out of range")
    assert conn.cmd("XREAD", "BLOCK", "-1", "STREAMS", "s", "0") == Error("ERR timeout is negative")
    assert conn.cmd("XREAD", "BLOCK", "1.5", "STREAMS", "s", "0") == Error(
        "ERR timeout is not an integer or out of range")
    assert conn.cmd("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0") == Error(
        "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
    assert conn.cmd("XREAD", "NOACK", "STREAMS", "s", "0") == Error(
        "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
    assert conn.cmd("XREAD", "STREAMS", "s", ">") == Error(
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
    assert conn.cmd("XREAD", "STREAMS", "s", "x") == BAD_ID
    assert conn.cmd("XREAD", "STREAMS", "s", "-") == BAD_ID
    assert conn.cmd("XREAD", "STREAMS", "str", "0") == WRONGTYPE
    assert conn.cmd("XREAD", "STREAMS", "s", "str", "0", "0") == WRONGTYPE
    # Keys are checked in order, each before its id.
    assert conn.cmd("XREAD", "STREAMS", "str", "s", "0", "bad") == WRONGTYPE
    assert conn.cmd("XREAD", "STREAMS", "s", "str", "bad", "0") == BAD_ID
    assert conn.cmd("XREAD", "BLOCK", "0", "STREAMS", "str", "0") == WRONGTYPE


def test_xread_keys_for_command_getkeys(conn):
    assert conn.cmd("COMMAND", "GETKEYS", "XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0") == [b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "XREAD", "BLOCK", "0", "STREAMS", "streams", "0") == [b"streams"]
    assert conn.cmd("COMMAND", "GETKEYS", "XADD", "s", "*", "f", "v") == [b"s"]
    info = conn.cmd("COMMAND", "INFO", "XREAD")[0]
    assert info[:6] == [b"xread", -4, ["readonly", "blocking", "movablekeys"], 0, 0, 0]


def test_xread_in_a_script(conn):
    conn.cmd("XADD", "s", "1-1", "f", "v")
    rep = conn.cmd("EVAL", "return redis.call('xread','block','0','streams','s','$')", "0")
    assert isinstance(rep, Error) and rep.startswith(
        "ERR xread command is not allowed with BLOCK option from scripts")
    assert conn.cmd("EVAL", "return redis.call('XREAD','STREAMS','s','0')", "0") == [
        [b"s", [[b"1-1", [b"f", b"v"]]]]]


# ---- XREAD BLOCK ------------------------------------------------------------


def test_xread_block_woken_by_xadd(server, r):
    r.xadd("s2", {"old": "x"}, id="1-1")
    c = block(server, r, "XREAD", "BLOCK", "20000", "STREAMS", "s1", "s2", "s3", "$", "$", "$")
    r.xadd("s2", {"new": "y"}, id="2-1")
    assert c.read() == [[b"s2", [[b"2-1", [b"new", b"y"]]]]]
    wait_blocked(r, 0)
    c.close()


def test_xread_block_old_data_served_at_once(server, r, conn):
    r.xadd("s2", {"old": "x"}, id="1-1")
    assert conn.cmd("XREAD", "BLOCK", "20000", "STREAMS", "s1", "s2", "$", "0-0") == [
        [b"s2", [[b"1-1", [b"old", b"x"]]]]]


def test_xread_block_resp3_map(server, r):
    c = block(server, r, "XREAD", "BLOCK", "0", "STREAMS", "s", "$", resp3=True)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert c.read() == Map([(b"s", [[b"1-1", [b"f", b"v"]]])])
    c.close()


def test_xread_block_dollar_is_resolved_when_blocking(server, r):
    """'$' names the last id when the command blocked, not when it runs
    again: two entries added in a transaction are both delivered."""
    r.xadd("s", {"f": "0"}, id="1-1")
    c = block(server, r, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "1"}, id="2-1")
    p.xadd("s", {"f": "2"}, id="3-1")
    p.execute()
    assert c.read() == [[b"s", [[b"2-1", [b"f", b"1"]], [b"3-1", [b"f", b"2"]]]]]
    c.close()


def test_xread_block_count(server, r):
    c = block(server, r, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "$")
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "1"}, id="2-1")
    p.xadd("s", {"f": "2"}, id="3-1")
    p.execute()
    assert c.read() == [[b"s", [[b"2-1", [b"f", b"1"]]]]]
    c.close()


def test_xread_block_multiple_streams_and_ids(server, r):
    r.xadd("{t}a", {"f": "1"}, id="5-1")
    c = block(server, r, "XREAD", "BLOCK", "0", "STREAMS", "{t}a", "{t}b", "5-1", "0")
    r.xadd("{t}b", {"f": "2"}, id="1-1")
    assert c.read() == [[b"{t}b", [[b"1-1", [b"f", b"2"]]]]]
    c.close()


def test_xread_block_explicit_id_edge(server, r):
    c = block(server, r, "XREAD", "BLOCK", "0", "STREAMS", "x", "1-18446744073709551615")
    r.xadd("x", {"f": "v"}, id="1-1")
    r.xadd("x", {"f": "v"}, id="1-18446744073709551615")
    r.xadd("x", {"f": "v"}, id="2-1")
    assert c.read()[0][1][0] == [b"2-1", [b"f", b"v"]]
    c.close()


def test_xread_block_timeout(server, r, conn, conn3):
    t = time.time()
    assert conn.cmd_raw("XREAD", "BLOCK", "100", "STREAMS", "s", "$") == b"*-1\r\n"
    assert time.time() - t >= 0.09
    assert conn3.cmd_raw("XREAD", "BLOCK", "50", "STREAMS", "s", "$") == b"_\r\n"
    # An id below last_id with nothing after it waits too.
    r.xadd("d", {"k": "v"}, id="666-0")
    r.xdel("d", "666-0")
    assert conn.cmd_raw("XREAD", "BLOCK", "50", "STREAMS", "d", "665") == b"*-1\r\n"


def test_xread_block_client_unblock(server, r):
    c = server.conn()
    cid = c.cmd("CLIENT", "ID")
    c.send(encode("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.raw() == b"*-1\r\n"
    c.send(encode("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert c.read() == Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    wait_blocked(r, 0)
    c.close()


def test_xread_block_in_multi_answers_at_once(conn, conn3):
    assert conn.cmd("MULTI") == "OK"
    assert conn.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$") == "QUEUED"
    assert conn.cmd("XADD", "s", "1-1", "f", "v") == "QUEUED"
    assert conn.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "0") == "QUEUED"
    assert conn.cmd("EXEC") == [None, b"1-1", [[b"s", [[b"1-1", [b"f", b"v"]]]]]]
    conn3.cmd("MULTI")
    conn3.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    assert conn3.cmd_raw("EXEC") == b"*1\r\n_\r\n"


def test_xread_block_del_and_type_change_keep_waiting(server, r):
    c = block(server, r, "XREAD", "BLOCK", "20000", "STREAMS", "s1", "$")
    p = r.pipeline(transaction=True)
    p.xadd("s1", {"old": "x"})
    p.delete("s1")
    p.execute()
    p = r.pipeline(transaction=True)
    p.xadd("s1", {"old": "x"})
    p.delete("s1")
    p.lpush("s1", "foo", "bar")
    p.execute()
    r.set("s1", "string")
    time.sleep(0.05)
    assert blocked(r) == 1
    r.delete("s1")
    r.xadd("s1", {"new": "y"}, id="9-9")
    assert c.read() == [[b"s1", [[b"9-9", [b"new", b"y"]]]]]
    c.close()


def test_xread_block_deleted_entry_does_not_wake(server, r):
    r.xadd("s", {"f": "v"}, id="666-0")
    c = block(server, r, "XREAD", "BLOCK", "0", "STREAMS", "s", "666")
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "v"}, id="667-0")
    p.xdel("s", "667-0")
    p.execute()
    time.sleep(0.05)
    assert blocked(r) == 1
    r.xadd("s", {"f": "w"}, id="668-0")
    assert c.read() == [[b"s", [[b"668-0", [b"f", b"w"]]]]]
    c.close()


def test_xread_block_plus_on_missing_stream(server, r):
    c = block(server, r, "XREAD", "BLOCK", "20000", "STREAMS", "le", "+")
    r.xadd("le", {"k1": "v1"}, id="1-0")
    assert c.read() == [[b"le", [[b"1-0", [b"k1", b"v1"]]]]]
    c.close()


def test_xread_block_same_stream_many_times(server, r):
    r.xadd("s2", {"old": "x"}, id="1-1")
    c = block(server, r, "XREAD", "BLOCK", "20000", "STREAMS", "s2", "s2", "s2", "$", "$", "$")
    r.xadd("s2", {"new": "y"}, id="2-1")
    rep = c.read()
    assert rep[0] == [b"s2", [[b"2-1", [b"new", b"y"]]]]
    c.close()


def test_xread_block_other_database(server, r):
    c = server.conn()
    assert c.cmd("SELECT", "3") == "OK"
    c.send(encode("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(r, 1)
    r.xadd("s", {"f": "db0"}, id="1-1")
    time.sleep(0.05)
    assert blocked(r) == 1
    r.execute_command("SELECT", "3")
    r.xadd("s", {"f": "db3"}, id="1-1")
    assert c.read() == [[b"s", [[b"1-1", [b"f", b"db3"]]]]]
    r.execute_command("SELECT", "0")
    c.close()


def test_xread_block_woken_by_rename(server, r):
    r.xadd("src", {"f": "v"}, id="1-1")
    c = block(server, r, "XREAD", "BLOCK", "0", "STREAMS", "dst", "0")
    r.rename("src", "dst")
    assert c.read() == [[b"dst", [[b"1-1", [b"f", b"v"]]]]]
    c.close()


def test_xread_many_readers_on_four_threads(new_server):
    srv = new_server(threads=4)
    r = srv.client()
    n = 40
    readers = []
    for i in range(n):
        c = srv.conn()
        c.send(encode("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
        readers.append(c)
    wait_blocked(r, n)
    r.xadd("s", {"f": "v"}, id="1-1")
    for c in readers:
        assert c.read() == [[b"s", [[b"1-1", [b"f", b"v"]]]]]
    wait_blocked(r, 0)
    for c in readers:
        c.close()


def test_xread_readers_keep_up_with_concurrent_writers(new_server):
    """Readers on four threads follow a stream written by four writers:
    each reader sees every entry exactly once and in order."""
    srv = new_server(threads=4)
    r = srv.client()
    writers, per_writer, nreaders = 4, 150, 6
    total = writers * per_writer
    seen = [[] for _ in range(nreaders)]
    errors = []

    def reader(i):
        try:
            c = srv.client(socket_timeout=30)
            last = "0-0"
            while len(seen[i]) < total:
                rep = c.execute_command("XREAD", "COUNT", "50", "BLOCK", "5000", "STREAMS", "s", last)
                if not rep:
                    continue
                for eid, _ in rep[0][1]:
                    seen[i].append(eid)
                last = rep[0][1][-1][0]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def writer(w):
        c = srv.client()
        for j in range(per_writer):
            c.xadd("s", {"w": w, "j": j})

    ts = [threading.Thread(target=reader, args=(i,)) for i in range(nreaders)]
    for t in ts:
        t.start()
    ws = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in ws:
        t.start()
    for t in ws + ts:
        t.join(60)
    assert not errors
    want = [e[0] for e in r.xrange("s", "-", "+")]
    assert len(want) == total
    for s in seen:
        assert s == want


# ---- the rest of the keyspace -----------------------------------------------


def test_stream_with_the_keyspace(r):
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xadd("s", {"g": "w"}, id="2-1")
    assert r.type("s") == b"stream"
    assert r.object("encoding", "s") == b"stream"
    assert r.memory_usage("s") > 0
    assert r.execute_command("COPY", "s", "c") == 1
    r.xadd("c", {"h": "x"}, id="3-1")
    assert r.xlen("s") == 2 and r.xlen("c") == 3
    assert r.xrange("c", "-", "+")[:2] == r.xrange("s", "-", "+")
    r.rename("c", "d")
    assert r.exists("c") == 0 and r.xlen("d") == 3
    assert r.move("d", 2)
    r.execute_command("SELECT", 2)
    assert r.xlen("d") == 3
    r.execute_command("SELECT", 0)
    r.set("str", "x")
    r.rpush("l", "x")
    assert sorted(r.scan(0, _type="stream")[1]) == [b"s"]
    cur, keys = 0, []
    while True:
        cur, ks = r.scan(cur, _type="STREAM", count=100)
        keys += ks
        if cur == 0:
            break
    assert keys == [b"s"]
    assert r.unlink("s") == 1
    assert r.delete("s") == 0
    r.xadd("big", {"f": "v"})
    for i in range(2000):
        r.xadd("big", {"f": "v" * 10})
    assert r.delete("big") == 1


def test_copy_is_deep(r):
    r.xadd("s", {"f": "v"}, id="1-1")
    r.execute_command("COPY", "s", "c")
    r.xdel("s", "1-1")
    r.execute_command("XSETID", "s", "9-9")
    assert r.xrange("c", "-", "+") == [(b"1-1", {b"f": b"v"})]
    assert r.xadd("c", {"f": "v"}, id="2-1") == b"2-1"


def test_digest_value_and_debug(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    r.xadd("a", {"f": "v"}, id="1-1")
    r.execute_command("COPY", "a", "b")
    da, db = r.execute_command("DEBUG", "DIGEST-VALUE", "a", "b")
    assert da == db and da != b"0" * 40
    r.xadd("b", {"f": "v"}, id="2-1")
    da, db = r.execute_command("DEBUG", "DIGEST-VALUE", "a", "b")
    assert da != db


def test_digest_matches_redis(new_server):
    from conftest import real_redis
    with real_redis("--enable-debug-command", "yes") as port:
        if port is None:
            pytest.skip("redis-server is not installed")
        ref = redis.Redis(port=port)
        srv = debug_server(new_server)
        r = srv.client()
        for cli in (r, ref):
            cli.xadd("s", {"a": "1", "b": "2"}, id="1-1")
            cli.xadd("s", {"a": "3"}, id="2-1")
            cli.xadd("s", {"n": "123"}, id="5-5")
            cli.xdel("s", "2-1")
            cli.execute_command("XADD", "e", "MAXLEN", "0", "1-1", "a", "1")
        assert r.execute_command("DEBUG", "DIGEST") == ref.execute_command("DEBUG", "DIGEST")


# ---- propagation ------------------------------------------------------------


@pytest.fixture
def jr(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def test_xadd_propagates_the_generated_id(jr):
    eid = jr.xadd("s", {"f": "v"})
    eid2 = jr.execute_command("XADD", "s", "99999999999999-*", "f", "v")
    jr.execute_command("XADD", "s", "99999999999999-9", "f", "v")
    eid4 = jr.execute_command("XADD", "s", "NOMKSTREAM", "*", "f", "v")
    assert journal_cmds(jr) == [[b"XADD", b"s", eid, b"f", b"v"], [b"XADD", b"s", eid2, b"f", b"v"],
                                [b"XADD", b"s", b"99999999999999-9", b"f", b"v"],
                                [b"XADD", b"s", b"NOMKSTREAM", eid4, b"f", b"v"]]
    assert eid4 == b"99999999999999-10"
    assert jr.execute_command("XADD", "none", "NOMKSTREAM", "*", "f", "v") is None
    with pytest.raises(redis.ResponseError):
        jr.execute_command("XADD", "s", "1-1", "f", "v")   # an error: nothing
    assert journal_cmds(jr) == []


def test_approx_trims_propagate_exactly(jr):
    jr.config_set("stream-node-max-entries", 10)
    for i in range(1, 101):
        jr.xadd("s", {"f": "v"}, id="%d-1" % i)
    journal(jr)
    jr.execute_command("XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "*", "f", "v")
    cmd = journal_cmds(jr)[0]
    assert cmd[:6] == [b"XADD", b"s", b"MAXLEN", b"=", b"71", b"LIMIT"]
    assert cmd[7] != b"*"
    assert jr.execute_command("XTRIM", "s", "MINID", "~", "35") == 0   # no whole node below 35
    assert jr.execute_command("XTRIM", "s", "MINID", "~", "45") == 10
    assert journal_cmds(jr) == [[b"XTRIM", b"s", b"MINID", b"=", b"41-1"]]
    jr.execute_command("XTRIM", "s", "MINID", "~", "45")   # nothing removed
    jr.execute_command("XTRIM", "s", "MAXLEN", "1000")
    jr.execute_command("XDEL", "s", "1-1")
    jr.execute_command("XTRIM", "missing", "MAXLEN", "0")
    assert journal_cmds(jr) == []
    jr.execute_command("XTRIM", "s", "MAXLEN", "60")
    jr.execute_command("XADD", "s", "MAXLEN", "=", "5", "99999999999999-1", "f", "v")
    assert journal_cmds(jr) == [[b"XTRIM", b"s", b"MAXLEN", b"60"],
                                [b"XADD", b"s", b"MAXLEN", b"=", b"5", b"99999999999999-1", b"f", b"v"]]


def test_reads_propagate_nothing(jr):
    jr.xadd("s", {"f": "v"}, id="1-1")
    journal(jr)
    jr.xrange("s")
    jr.xrevrange("s")
    jr.xlen("s")
    jr.execute_command("XREAD", "STREAMS", "s", "0")
    jr.execute_command("XREAD", "BLOCK", "10", "STREAMS", "s", "$")
    jr.execute_command("XDELEX", "s", "IDS", "1", "9-9")
    assert journal_cmds(jr) == []
    jr.execute_command("XSETID", "s", "5-5")
    jr.execute_command("XDELEX", "s", "IDS", "1", "1-1")
    assert journal_cmds(jr) == [[b"XSETID", b"s", b"5-5"], [b"XDELEX", b"s", b"IDS", b"1", b"1-1"]]


def test_journal_replays_to_the_same_digest(new_server):
    from conftest import real_redis
    from test_exec import replay
    srv = debug_server(new_server)
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    r.config_set("stream-node-max-entries", 7)
    for i in range(300):
        r.xadd("s%d" % (i % 3), {"f": str(i), "g": "x" * (i % 5)}, maxlen=50 + i % 10, approximate=bool(i % 2))
        if i % 17 == 0:
            r.execute_command("XTRIM", "s%d" % (i % 3), "MINID", "~", "0-0")
            r.execute_command("XTRIM", "s1", "MAXLEN", "~", "20")
        if i % 23 == 0:
            first = r.xrange("s2", count=2)
            if first:
                r.xdel("s2", first[-1][0])
    r.execute_command("XSETID", "s0", "99999999999999-0", "ENTRIESADDED", "100000")
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    fresh = debug_server(new_server)
    replay(fresh.port, data)
    assert fresh.client().execute_command("DEBUG", "DIGEST") == want
    with real_redis("--enable-debug-command", "yes") as port:
        if port is None:
            return
        replay(port, data, apply=False)
        assert redis.Redis(port=port).execute_command("DEBUG", "DIGEST") == want
