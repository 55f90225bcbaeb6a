"""Vector sets: differences found by running Redis's own vector-set test
suite (modules/vector-sets/tests) against HotKV, reduced to minimal
black-box reproductions, with the neighbouring cases that already behave.

test_vrandmember_llong_min_count_is_refused fails against main today (a
malformed reply); test_vrandmember_llong_min_count_missing_key fails too
(Redis's later fix, where 8.0 answered an empty array)."""
import pytest

from resp import Error, encode

LLONG_MIN = "-9223372036854775808"


@pytest.mark.parametrize("proto", [2, 3])
def test_vrandmember_llong_min_count_is_refused(new_server, proto):
    """VRANDMEMBER with COUNT -9223372036854775808 on a non-empty set.

    The count means "|count| elements, repetitions allowed", and |LLONG_MIN|
    is not a representable array length. Redis 8.0 crashed here (a negative
    reply length, issue #15384); Redis now refuses the count with an
    "ERR COUNT value is out of range" (checked right after COUNT 0, before
    the key is opened) and keeps serving. HotKV writes the array header
    "*-9223372036854775808", which is not valid RESP: a negative length other
    than -1 breaks every client parser (redis-cli: "Multi-bulk length out of
    range"). A private server, so a broken connection stays here."""
    srv = new_server()
    c = srv.conn()
    if proto == 3:
        assert isinstance(c.cmd("HELLO", "3"), list)
    assert c.cmd("VADD", "k", "VALUES", "2", "1", "0", "a") in (1, True)
    assert c.cmd("VADD", "k", "VALUES", "2", "0", "1", "b") in (1, True)
    c.send(encode("VRANDMEMBER", "k", LLONG_MIN))
    first = c._line()
    # Never a negative array length (only *-1 is a valid null array).
    assert not (first.startswith(b"*-") and first != b"*-1"), first
    assert first == b"-ERR COUNT value is out of range"
    # The connection stays usable and the set is untouched.
    assert c.cmd("VCARD", "k") == 2
    assert sorted(c.cmd("VRANDMEMBER", "k", "5")) == [b"a", b"b"]
    c.close()
    probe = srv.client(socket_timeout=5)
    assert probe.ping()
    probe.close()


def test_vrandmember_llong_min_count_missing_key(conn):
    """Redis's fix refuses the count before looking at the key, so a missing
    key (and a key of another type) answers the same error. Redis 8.0 itself
    answered an empty array for a missing key (it never looked at the
    count); HotKV still does."""
    assert conn.cmd("VRANDMEMBER", "nokey", LLONG_MIN) == Error("ERR COUNT value is out of range")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("VRANDMEMBER", "str", LLONG_MIN) == Error("ERR COUNT value is out of range")


def test_vrandmember_llong_min_plus_one_has_valid_header(new_server):
    """The neighbouring count -9223372036854775807 is representable: whatever
    HotKV does with it (it streams until its reply ceiling, then closes the
    client), the header it writes is the exact positive length."""
    srv = new_server()
    c = srv.conn()
    assert c.cmd("VADD", "k", "VALUES", "2", "1", "0", "a") == 1
    c.send(encode("VRANDMEMBER", "k", "-9223372036854775807"))
    assert c._line() == b"*9223372036854775807"
    c.close()
    probe = srv.client(socket_timeout=10)
    assert probe.ping()
    assert probe.execute_command("VCARD", "k") == 1
    probe.close()


def test_vrandmember_count_errors_exact(conn):
    """Counts that are not integers keep Redis's text (unchanged behaviour,
    next to the LLONG_MIN case above)."""
    conn.cmd("VADD", "k", "VALUES", "2", "1", "0", "a")
    assert conn.cmd("VRANDMEMBER", "k", "x") == Error("ERR COUNT value is not an integer")
    assert conn.cmd("VRANDMEMBER", "k", "9223372036854775808") == Error("ERR COUNT value is not an integer")
