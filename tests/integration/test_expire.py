"""Expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX, XX, GT, LT), TTL, PTTL,
EXPIRETIME, PEXPIRETIME, PERSIST, lazy and active expiry."""
import time

import pytest
from resp import Error

NOT_INT = Error("ERR value is not an integer or out of range")
NX_ERR = Error("ERR NX and XX, GT or LT options at the same time are not compatible")
GTLT_ERR = Error("ERR GT and LT options at the same time are not compatible")
LLONG_MAX = 9223372036854775807


def invalid(cmd):
    return Error("ERR invalid expire time in '%s' command" % cmd)


def now_ms():
    return int(time.time() * 1000)


def test_expire_basic(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("TTL", "k") == -1
    assert conn.cmd("PTTL", "k") == -1
    assert conn.cmd("EXPIRE", "k", "100") == 1
    assert conn.cmd("TTL", "k") == 100
    assert 99000 < conn.cmd("PTTL", "k") <= 100000
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("PEXPIRE", "k", "50000") == 1
    assert conn.cmd("TTL", "k") == 50
    assert conn.cmd("EXPIRE", "nokey", "100") == 0
    assert conn.cmd("TTL", "nokey") == -2
    assert conn.cmd("PTTL", "nokey") == -2


def test_expireat(conn):
    conn.cmd("SET", "k", "v")
    t = int(time.time()) + 1000
    assert conn.cmd("EXPIREAT", "k", str(t)) == 1
    assert conn.cmd("EXPIRETIME", "k") == t
    assert conn.cmd("PEXPIRETIME", "k") == t * 1000
    assert 990 <= conn.cmd("TTL", "k") <= 1000
    tm = now_ms() + 500000
    assert conn.cmd("PEXPIREAT", "k", str(tm)) == 1
    assert conn.cmd("PEXPIRETIME", "k") == tm
    # EXPIRETIME rounds to the nearest second.
    assert conn.cmd("EXPIRETIME", "k") == (tm + 500) // 1000


def test_expiretime(conn):
    assert conn.cmd("EXPIRETIME", "nokey") == -2
    assert conn.cmd("PEXPIRETIME", "nokey") == -2
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRETIME", "k") == -1
    assert conn.cmd("PEXPIRETIME", "k") == -1
    assert conn.cmd("PEXPIREAT", "k", "4102444800499") == 1
    assert conn.cmd("EXPIRETIME", "k") == 4102444800
    assert conn.cmd("PEXPIREAT", "k", "4102444800500") == 1
    assert conn.cmd("EXPIRETIME", "k") == 4102444801
    assert conn.cmd("PEXPIRETIME", "k") == 4102444800500


def test_ttl_rounding(conn):
    conn.cmd("SET", "k", "v")
    conn.cmd("PEXPIRE", "k", "1900")
    assert conn.cmd("TTL", "k") == 2
    conn.cmd("PEXPIRE", "k", "1300")
    assert conn.cmd("TTL", "k") == 1
    conn.cmd("PEXPIRE", "k", "400")
    assert conn.cmd("TTL", "k") == 0


@pytest.mark.parametrize("cmd,arg", [("EXPIRE", "0"), ("EXPIRE", "-10"), ("PEXPIRE", "0"), ("PEXPIRE", "-1"),
                                     ("EXPIREAT", "0"), ("EXPIREAT", "1"), ("PEXPIREAT", "1000"),
                                     ("EXPIREAT", "-5"), ("EXPIRE", "-9223372036854775")])
def test_time_in_the_past_deletes(conn, cmd, arg):
    conn.cmd("SET", "k", "v")
    assert conn.cmd(cmd, "k", arg) == 1
    assert conn.cmd("EXISTS", "k") == 0
    assert conn.cmd("TTL", "k") == -2
    # And on a missing key it is just 0.
    assert conn.cmd(cmd, "k", arg) == 0


def test_past_absolute_now(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("PEXPIREAT", "k", str(now_ms() - 1)) == 1
    assert conn.cmd("EXISTS", "k") == 0


def test_overflow(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "9223372036854776") == invalid("expire")
    assert conn.cmd("EXPIRE", "k", "-9223372036854776") == invalid("expire")
    assert conn.cmd("EXPIRE", "k", str(LLONG_MAX)) == invalid("expire")
    assert conn.cmd("PEXPIRE", "k", str(LLONG_MAX)) == invalid("pexpire")
    assert conn.cmd("PEXPIRE", "k", str(LLONG_MAX - 1000)) == invalid("pexpire")
    assert conn.cmd("EXPIREAT", "k", "9223372036854776") == invalid("expireat")
    # The error does not depend on the key existing.
    assert conn.cmd("EXPIRE", "nokey", "9223372036854776") == invalid("expire")
    assert conn.cmd("TTL", "k") == -1
    # The largest values that fit are accepted.
    assert conn.cmd("EXPIREAT", "k", "9223372036854775") == 1
    assert conn.cmd("EXPIRETIME", "k") == 9223372036854775
    assert conn.cmd("PEXPIREAT", "k", str(LLONG_MAX)) == 1
    assert conn.cmd("PEXPIRETIME", "k") == LLONG_MAX
    assert conn.cmd("GET", "k") == b"v"


def test_not_an_integer(conn):
    conn.cmd("SET", "k", "v")
    for bad in ("abc", "1.5", "", " 1", "1 ", "99999999999999999999"):
        assert conn.cmd("EXPIRE", "k", bad) == NOT_INT
        assert conn.cmd("PEXPIREAT", "k", bad) == NOT_INT
    assert conn.cmd("TTL", "k") == -1


def test_options_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "10", "foo") == Error("ERR Unsupported option foo")
    # Options are checked before the number.
    assert conn.cmd("EXPIRE", "k", "abc", "bar") == Error("ERR Unsupported option bar")
    assert conn.cmd("EXPIRE", "k", "abc", "NX") == NOT_INT
    for combo in (("NX", "XX"), ("NX", "GT"), ("NX", "LT"), ("XX", "NX"), ("LT", "NX"), ("NX", "XX", "GT")):
        assert conn.cmd("EXPIRE", "k", "10", *combo) == NX_ERR
        assert conn.cmd("PEXPIREAT", "k", "10", *combo) == NX_ERR
    assert conn.cmd("EXPIRE", "k", "10", "GT", "LT") == GTLT_ERR
    assert conn.cmd("PEXPIRE", "k", "10", "lt", "gt") == GTLT_ERR
    assert conn.cmd("EXPIRE", "k", "10", "XX", "GT", "LT") == GTLT_ERR
    # NX XX is reported even with GT LT also present.
    assert conn.cmd("EXPIRE", "k", "10", "NX", "GT", "LT") == NX_ERR
    assert conn.cmd("TTL", "k") == -1
    assert conn.cmd("EXPIRE", "k") == Error("ERR wrong number of arguments for 'expire' command")
    assert conn.cmd("TTL") == Error("ERR wrong number of arguments for 'ttl' command")
    assert conn.cmd("PERSIST", "a", "b") == Error("ERR wrong number of arguments for 'persist' command")


def test_nx_xx(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "100", "XX") == 0
    assert conn.cmd("TTL", "k") == -1
    assert conn.cmd("EXPIRE", "k", "100", "NX") == 1
    assert conn.cmd("TTL", "k") == 100
    assert conn.cmd("EXPIRE", "k", "200", "NX") == 0
    assert conn.cmd("TTL", "k") == 100
    assert conn.cmd("EXPIRE", "k", "200", "xx") == 1
    assert conn.cmd("TTL", "k") == 200
    assert conn.cmd("EXPIRE", "nokey", "200", "NX") == 0
    # Repeating an option is fine.
    assert conn.cmd("EXPIRE", "k", "300", "XX", "XX") == 1


def test_gt_lt(conn):
    conn.cmd("SET", "k", "v")
    # No TTL counts as infinite: GT never passes, LT always does.
    assert conn.cmd("EXPIRE", "k", "100", "GT") == 0
    assert conn.cmd("TTL", "k") == -1
    assert conn.cmd("EXPIRE", "k", "100", "LT") == 1
    assert conn.cmd("TTL", "k") == 100
    assert conn.cmd("EXPIRE", "k", "50", "GT") == 0
    assert conn.cmd("EXPIRE", "k", "200", "GT") == 1
    assert conn.cmd("TTL", "k") == 200
    assert conn.cmd("EXPIRE", "k", "300", "LT") == 0
    assert conn.cmd("EXPIRE", "k", "150", "LT") == 1
    assert conn.cmd("TTL", "k") == 150
    # Equal is neither greater nor less.
    t = conn.cmd("PEXPIRETIME", "k")
    assert conn.cmd("PEXPIREAT", "k", str(t), "GT") == 0
    assert conn.cmd("PEXPIREAT", "k", str(t), "LT") == 0
    assert conn.cmd("PEXPIREAT", "k", str(t + 1), "GT", "XX") == 1
    assert conn.cmd("PEXPIRETIME", "k") == t + 1
    assert conn.cmd("PEXPIREAT", "k", str(t), "LT", "XX") == 1
    assert conn.cmd("PEXPIRETIME", "k") == t
    # XX with LT on a key without TTL: XX fails first.
    conn.cmd("SET", "p", "v")
    assert conn.cmd("EXPIRE", "p", "10", "XX", "LT") == 0
    assert conn.cmd("TTL", "p") == -1


def test_gt_lt_past_time(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    # A past time passes LT and deletes the key.
    assert conn.cmd("EXPIRE", "k", "-1", "LT") == 1
    assert conn.cmd("EXISTS", "k") == 0
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "-1", "GT") == 0
    assert conn.cmd("EXISTS", "k") == 1
    assert conn.cmd("EXPIRE", "k", "-1", "NX") == 1
    assert conn.cmd("EXISTS", "k") == 0


def test_persist(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("PERSIST", "k") == 1
    assert conn.cmd("TTL", "k") == -1
    assert conn.cmd("PERSIST", "k") == 0
    assert conn.cmd("PERSIST", "nokey") == 0
    assert conn.cmd("GET", "k") == b"v"
    # Long values and long keys survive the entry being rebuilt.
    big, name = "z" * 1000, "n" * 400
    conn.cmd("SET", name, big)
    assert conn.cmd("EXPIRE", name, "100") == 1
    assert conn.cmd("GET", name) == big.encode()
    assert conn.cmd("PERSIST", name) == 1
    assert conn.cmd("GET", name) == big.encode()
    assert conn.cmd("OBJECT", "ENCODING", name) == b"raw"


def test_expire_keeps_value_and_encoding(conn):
    for name, value, enc in (("i", "77", b"int"), ("e", "abc", b"embstr"), ("r", "q" * 64, b"raw")):
        conn.cmd("SET", name, value)
        assert conn.cmd("PEXPIRE", name, "100000") == 1
        assert conn.cmd("GET", name) == value.encode()
        assert conn.cmd("OBJECT", "ENCODING", name) == enc


def test_millisecond_precision(conn):
    conn.cmd("SET", "k", "v")
    t0 = time.time()
    assert conn.cmd("PEXPIRE", "k", "100") == 1
    # Still there unless 100 ms did pass (a loaded machine may stall us).
    assert conn.cmd("EXISTS", "k") == 1 or time.time() - t0 >= 0.1
    pttl = conn.cmd("PTTL", "k")
    assert 0 < pttl <= 100 or (pttl == -2 and time.time() - t0 >= 0.1)
    time.sleep(0.15)
    assert conn.cmd("EXISTS", "k") == 0
    assert conn.cmd("GET", "k") is None
    assert conn.cmd("PTTL", "k") == -2


def test_expired_key_is_absent_for_expire(conn):
    conn.cmd("SET", "k", "v", "PX", "1")
    time.sleep(0.01)
    assert conn.cmd("EXPIRE", "k", "100") == 0
    assert conn.cmd("PERSIST", "k") == 0
    assert conn.cmd("TTL", "k") == -2


def test_lazy_expiry_deletes(conn):
    """An expired key read is deleted: DBSIZE drops right after the read."""
    conn.cmd("SET", "k", "v", "PX", "50")
    conn.cmd("SET", "keep", "v")
    time.sleep(0.08)
    assert conn.cmd("GET", "k") is None
    assert conn.cmd("DBSIZE") == 1


def wait_dbsize(conn, want, timeout):
    deadline = time.time() + timeout
    n = conn.cmd("DBSIZE")
    while n != want and time.time() < deadline:
        time.sleep(0.05)
        n = conn.cmd("DBSIZE")
    return n


def test_active_expiry(r, conn):
    """Keys with short TTLs disappear from DBSIZE without being accessed."""
    t0 = time.time()
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.set("vol:%d" % i, "v", px=100 + i % 100)
    for i in range(10):
        p.set("keep:%d" % i, "v")
    p.execute()
    # All there, unless 100 ms passed already (a loaded sanitizer build).
    assert conn.cmd("DBSIZE") == 2010 or time.time() - t0 >= 0.1
    assert wait_dbsize(conn, 10, 5.0) == 10
    assert sorted(conn.cmd("KEYS", "*")) == sorted(b"keep:%d" % i for i in range(10))


def test_active_expiry_other_db(server, r):
    c = server.conn()
    try:
        c.cmd("SELECT", "7")
        for i in range(300):
            c.cmd("SET", "x%d" % i, "v", "PX", "50")
        c.cmd("SET", "stay", "v")
        assert wait_dbsize(c, 1, 5.0) == 1
    finally:
        c.close()


def test_active_expiry_long_ttls_untouched(conn):
    for i in range(200):
        conn.cmd("SET", "long:%d" % i, "v", "EX", "1000")
    for i in range(200):
        conn.cmd("SET", "short:%d" % i, "v", "PX", "30")
    assert wait_dbsize(conn, 200, 5.0) == 200
    assert conn.cmd("TTL", "long:0") > 990


def test_resp3_replies(conn3):
    conn3.cmd("SET", "k", "v")
    assert conn3.cmd_raw("TTL", "k") == b":-1\r\n"
    assert conn3.cmd_raw("EXPIRE", "k", "10") == b":1\r\n"
    assert conn3.cmd_raw("PTTL", "nokey") == b":-2\r\n"
    assert conn3.cmd_raw("PERSIST", "k") == b":1\r\n"
