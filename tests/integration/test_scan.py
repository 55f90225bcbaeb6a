"""SCAN: cursor, MATCH, COUNT, TYPE, and the guarantee that every key present
for the whole iteration is returned, even while other clients write and the
tables grow and shrink underneath."""
import threading
import time

import pytest
from resp import Error

SYNTAX = Error("ERR syntax error")
BAD_CURSOR = Error("ERR invalid cursor")


def scan_all(conn, *opts, cursor=b"0"):
    """Run a whole iteration; returns (keys as a list, number of calls)."""
    keys, calls = [], 0
    while True:
        reply = conn.cmd("SCAN", cursor, *opts)
        assert isinstance(reply, list) and len(reply) == 2, reply
        cursor, page = reply
        assert isinstance(cursor, bytes) and cursor.isdigit()
        keys.extend(page)
        calls += 1
        if cursor == b"0":
            return keys, calls
        assert calls < 1000000


def fill(r, n, prefix="key:", value="v", **kw):
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.set("%s%d" % (prefix, i), value, **kw)
        if i % 5000 == 4999:
            p.execute()
    p.execute()


def test_scan_empty(conn, conn3):
    assert conn.cmd_raw("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    assert conn3.cmd_raw("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_few_keys(conn):
    for k in ("a", "b", "c"):
        conn.cmd("SET", k, "1")
    keys, _ = scan_all(conn)
    assert sorted(keys) == [b"a", b"b", b"c"]


def test_scan_all_10k(r, conn):
    fill(r, 10000)
    keys, calls = scan_all(conn)
    assert set(keys) == {b"key:%d" % i for i in range(10000)}
    # COUNT defaults to 10: many calls, none wildly larger than the hint.
    assert calls > 100
    keys, calls_big = scan_all(conn, "COUNT", "1000")
    assert set(keys) == {b"key:%d" % i for i in range(10000)}
    assert calls_big < calls


def test_scan_count_is_a_hint(r, conn):
    fill(r, 1000)
    cursor, page = conn.cmd("SCAN", "0", "COUNT", "100")
    # Keys come a bucket at a time, so a page may exceed COUNT a little.
    assert 100 <= len(page) < 200
    assert cursor != b"0"
    cursor, page = conn.cmd("SCAN", "0", "COUNT", "100000")
    assert cursor == b"0"
    assert len(page) == 1000
    cursor, page = conn.cmd("SCAN", "0", "COUNT", "9223372036854775807")
    assert cursor == b"0"
    assert len(page) == 1000


def test_scan_count_errors(conn):
    assert conn.cmd("SCAN", "0", "COUNT", "0") == SYNTAX
    assert conn.cmd("SCAN", "0", "COUNT", "-1") == SYNTAX
    assert conn.cmd("SCAN", "0", "COUNT", "x") == Error("ERR value is not an integer or out of range")
    assert conn.cmd("SCAN", "0", "COUNT") == SYNTAX
    assert conn.cmd("SCAN", "0", "MATCH") == SYNTAX
    assert conn.cmd("SCAN", "0", "TYPE") == SYNTAX
    assert conn.cmd("SCAN", "0", "FOO", "bar") == SYNTAX
    assert conn.cmd("SCAN", "0", "COUNT", "10", "junk") == SYNTAX
    assert conn.cmd("SCAN") == Error("ERR wrong number of arguments for 'scan' command")


@pytest.mark.parametrize("cursor", ["x", "1x", " 1", "\t1", "1 ", "18446744073709551616", "1.5", "0x10"])
def test_scan_invalid_cursor(conn, cursor):
    assert conn.cmd("SCAN", cursor) == BAD_CURSOR


def test_scan_odd_but_valid_cursors(conn):
    conn.cmd("SET", "k", "v")
    # Redis 7.2 parses with strtoul: an empty cursor is 0.
    assert conn.cmd("SCAN", "") == conn.cmd("SCAN", "0") == [b"0", [b"k"]]
    # Any 64-bit value is accepted (a made-up cursor gives some page, never an error).
    reply = conn.cmd("SCAN", "18446744073709551615")
    assert isinstance(reply, list) and reply[0].isdigit()
    reply = conn.cmd("SCAN", "123456789")
    assert isinstance(reply, list) and reply[0].isdigit()


def test_scan_match(r, conn):
    fill(r, 1000)
    r.set("other", "1")
    r.set("f*o", "1")
    keys, _ = scan_all(conn, "MATCH", "key:1??")
    assert sorted(keys) == sorted(b"key:%d" % i for i in range(100, 200))
    keys, _ = scan_all(conn, "MATCH", "*")
    assert len(set(keys)) == 1002
    keys, _ = scan_all(conn, "MATCH", "nothing*")
    assert keys == []
    keys, _ = scan_all(conn, "MATCH", "f\\*o")
    assert keys == [b"f*o"]
    # MATCH filters after fetching: COUNT still bounds the work per call.
    cursor, page = conn.cmd("SCAN", "0", "MATCH", "other", "COUNT", "5")
    assert len(page) <= 1


def test_scan_type(r, conn):
    fill(r, 300)
    keys, _ = scan_all(conn, "TYPE", "string")
    assert len(set(keys)) == 300
    keys, _ = scan_all(conn, "TYPE", "STRING")
    assert len(set(keys)) == 300
    keys, _ = scan_all(conn, "TYPE", "hash")
    assert keys == []
    # Unknown type names match nothing (Redis 7.2; an error from Redis 8).
    keys, _ = scan_all(conn, "TYPE", "nosuchtype")
    assert keys == []
    keys, _ = scan_all(conn, "TYPE", "string", "MATCH", "key:2?", "COUNT", "7")
    assert sorted(keys) == sorted(b"key:2%d" % i for i in range(10))
    # Options may repeat; the last one wins.
    keys, _ = scan_all(conn, "MATCH", "nothing", "MATCH", "key:5")
    assert keys == [b"key:5"]


def test_scan_skips_expired(r, conn):
    fill(r, 100, prefix="live:")
    fill(r, 100, prefix="dead:", px=1)
    time.sleep(0.02)
    keys, _ = scan_all(conn)
    assert set(keys) == {b"live:%d" % i for i in range(100)}


def test_scan_selected_db(server, r):
    r.set("db0key", "1")
    c = server.conn()
    try:
        c.cmd("SELECT", "4")
        c.cmd("SET", "db4key", "1")
        keys, _ = scan_all(c)
        assert keys == [b"db4key"]
    finally:
        c.close()


def test_scan_survives_growth_and_shrink(r, conn):
    """Keys present from start to end are all returned although the tables
    are resized between calls (first grown, then shrunk)."""
    stable = {b"stable:%d" % i for i in range(3000)}
    fill(r, 3000, prefix="stable:")
    seen = set()
    cursor = b"0"
    calls = 0
    while True:
        cursor, page = conn.cmd("SCAN", cursor, "COUNT", "20")
        seen.update(page)
        calls += 1
        if calls == 20:
            fill(r, 30000, prefix="grow:")
        if calls == 60:
            p = r.pipeline(transaction=False)
            for i in range(30000):
                p.delete("grow:%d" % i)
            p.execute()
        if cursor == b"0":
            break
    assert stable <= seen
    # Nothing that never existed comes back.
    assert all(k.startswith(b"stable:") or k.startswith(b"grow:") for k in seen)


@pytest.mark.parametrize("shards", [None, "4"])
def test_scan_under_concurrent_writes(request, shards):
    """A writer keeps adding and deleting other keys while SCAN runs; every
    key present for the whole scan must be returned. The churn is ten
    times the stable set, so tables keep growing and shrinking (with 4
    shards, between ~1k and ~8k buckets each) while the cursor moves."""
    if shards is None:
        server = request.getfixturevalue("server")
        request.getfixturevalue("r")  # flushed
    else:
        server = request.getfixturevalue("new_server")("--shards", shards)
    r = server.client()
    stable = {b"stable:%d" % i for i in range(2000)}
    fill(r, 2000, prefix="stable:")
    stop = threading.Event()
    errors = []

    def writer(wid):
        c = server.client()
        try:
            gen = 0
            while not stop.is_set():
                p = c.pipeline(transaction=False)
                for i in range(10000):
                    p.set("churn:%d:%d:%d" % (wid, gen, i), "x")
                p.execute()
                p = c.pipeline(transaction=False)
                for i in range(10000):
                    p.delete("churn:%d:%d:%d" % (wid, gen, i))
                p.execute()
                gen += 1
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            c.close()

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    for t in writers:
        t.start()
    try:
        c = server.conn()
        try:
            for count in ("100", "10"):
                seen = set()
                cursor = b"0"
                while True:
                    cursor, page = c.cmd("SCAN", cursor, "COUNT", count)
                    seen.update(page)
                    if cursor == b"0":
                        break
                missing = stable - seen
                assert not missing, "%d stable keys missing, e.g. %r" % (len(missing), sorted(missing)[:5])
                assert all(k.startswith(b"stable:") or k.startswith(b"churn:") for k in seen)
        finally:
            c.close()
    finally:
        stop.set()
        for t in writers:
            t.join()
        r.close()
    assert not errors, errors[:3]


def test_scan_match_type_with_concurrent_writes(server, r):
    """The same guarantee with MATCH and TYPE filtering."""
    fill(r, 2000, prefix="m:")
    stop = threading.Event()

    def writer():
        c = server.client()
        try:
            i = 0
            while not stop.is_set():
                c.set("m:new:%d" % i, "x")
                c.delete("m:new:%d" % (i - 50))
                i += 1
        finally:
            c.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        c = server.conn()
        try:
            keys, _ = scan_all(c, "MATCH", "m:1*", "TYPE", "string", "COUNT", "50")
        finally:
            c.close()
    finally:
        stop.set()
        t.join()
    want = {b"m:%d" % i for i in range(2000) if str(i).startswith("1")}
    assert want <= set(keys)
    assert all(k.startswith(b"m:1") for k in keys)
