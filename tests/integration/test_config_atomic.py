"""CONFIG SET of several parameters is all or nothing, with Redis 8.0's
checks in its order: names first (unknown, immutable, duplicate), then the
values in argument order, then the apply step; any failure puts every
setting back and names the one to blame."""
import re
import threading

import pytest
from resp import Error, RespConn


def failed(name, why=None):
    if why is None:
        return Error("ERR CONFIG SET failed (possibly related to argument '%s')" % name)
    return Error("ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (name, why))


def unknown(name):
    return Error("ERR Unknown option or number of arguments for CONFIG SET - '%s'" % name)


def get(conn, name):
    reply = conn.cmd("CONFIG", "GET", name)
    assert len(reply) == 2, reply
    return reply[1].decode()


@pytest.fixture
def cfg(server, conn):
    """conn, with the settings these tests change put back afterwards."""
    names = ["timeout", "tcp-keepalive", "hz", "maxclients", "hash-max-listpack-entries", "loglevel",
             "proto-max-bulk-len", "hash-max-listpack-value", "requirepass"]
    saved = {n: get(conn, n) for n in names}
    yield conn
    c = server.conn()
    for n, v in saved.items():
        assert c.cmd("CONFIG", "SET", n, v) == "OK", n
    c.close()


def test_several_at_once(cfg):
    assert cfg.cmd("CONFIG", "SET", "timeout", "5", "tcp-keepalive", "100", "loglevel", "warning") == "OK"
    assert (get(cfg, "timeout"), get(cfg, "tcp-keepalive"), get(cfg, "loglevel")) == ("5", "100", "warning")


def test_a_bad_value_restores_the_earlier_ones(cfg):
    assert cfg.cmd("CONFIG", "SET", "timeout", "7", "tcp-keepalive", "9", "hz", "x") == failed(
        "hz", "argument couldn't be parsed into an integer")
    assert (get(cfg, "timeout"), get(cfg, "tcp-keepalive"), get(cfg, "hz")) == ("0", "300", "10")
    assert cfg.cmd("CONFIG", "SET", "timeout", "7", "loglevel", "loud") == failed(
        "loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning")
    assert get(cfg, "timeout") == "0"


def test_a_failed_apply_restores_everything(cfg):
    """maxclients must fit the open-file limit; when the system refuses, the
    apply step fails after every value was stored, and all are restored."""
    reply = cfg.cmd("CONFIG", "SET", "timeout", "9", "maxclients", "2000000000", "tcp-keepalive", "11")
    assert isinstance(reply, Error)
    m = re.fullmatch(r"ERR CONFIG SET failed \(possibly related to argument 'maxclients'\) - The operating system "
                     r"is not able to handle the specified number of clients, try with (\d+)", reply)
    assert m, reply
    assert 0 < int(m.group(1)) < 2000000000
    assert (get(cfg, "timeout"), get(cfg, "maxclients"), get(cfg, "tcp-keepalive")) == ("0", "10000", "300")
    # The number offered does fit.
    assert cfg.cmd("CONFIG", "SET", "maxclients", m.group(1)) == "OK"
    assert get(cfg, "maxclients") == m.group(1)


def test_names_are_checked_before_any_value(cfg):
    assert cfg.cmd("CONFIG", "SET", "timeout", "1", "nosuch", "2") == unknown("nosuch")
    assert cfg.cmd("CONFIG", "SET", "nosuch", "2", "port", "1") == unknown("nosuch")
    assert cfg.cmd("CONFIG", "SET", "timeout", "1", "databases", "4") == failed("databases",
                                                                            "can't set immutable config")
    assert cfg.cmd("CONFIG", "SET", "daemonize", "yes", "nosuch", "1") == failed(
        "daemonize", "can't set immutable config")
    # A bad value before a bad name: the name wins, as names are checked first.
    assert cfg.cmd("CONFIG", "SET", "timeout", "x", "nosuch", "1") == unknown("nosuch")
    assert get(cfg, "timeout") == "0"


def test_duplicates(cfg):
    assert cfg.cmd("CONFIG", "SET", "timeout", "1", "timeout", "2") == failed("timeout", "duplicate parameter")
    assert cfg.cmd("CONFIG", "SET", "timeout", "1", "TIMEOUT", "2") == failed("TIMEOUT", "duplicate parameter")
    assert get(cfg, "timeout") == "0"
    # An alias is a setting of its own, as in Redis: set in order, the last wins.
    assert cfg.cmd("CONFIG", "SET", "hash-max-ziplist-entries", "1", "hash-max-listpack-entries", "2") == "OK"
    assert get(cfg, "hash-max-listpack-entries") == "2"
    assert cfg.cmd("CONFIG", "SET", "hash-max-ziplist-entries", "1", "HASH-MAX-ZIPLIST-ENTRIES", "2") == failed(
        "HASH-MAX-ZIPLIST-ENTRIES", "duplicate parameter")


def test_value_errors_name_the_setting_as_the_table_spells_it(cfg):
    assert cfg.cmd("CONFIG", "SET", "TIMEOUT", "x") == failed("timeout", "argument couldn't be parsed into an integer")
    assert cfg.cmd("CONFIG", "SET", "HASH-MAX-ZIPLIST-ENTRIES", "x") == failed(
        "hash-max-ziplist-entries", "argument couldn't be parsed into an integer")


def test_value_texts(cfg):
    mem = "argument must be a memory value"
    assert cfg.cmd("CONFIG", "SET", "proto-max-bulk-len", "abc") == failed("proto-max-bulk-len", mem)
    assert cfg.cmd("CONFIG", "SET", "proto-max-bulk-len", "-1") == failed("proto-max-bulk-len", mem)
    assert cfg.cmd("CONFIG", "SET", "hash-max-listpack-value", "-1") == failed("hash-max-listpack-value", mem)
    assert cfg.cmd("CONFIG", "SET", "proto-max-bulk-len", "10") == failed(
        "proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")
    assert cfg.cmd("CONFIG", "SET", "proto-max-bulk-len", "2mb") == "OK"
    assert get(cfg, "proto-max-bulk-len") == str(2 << 20)
    assert cfg.cmd("CONFIG", "SET", "timeout", "-1") == failed(
        "timeout", "argument must be between 0 and 2147483647 inclusive")


def test_hz_is_clamped(cfg):
    assert cfg.cmd("CONFIG", "SET", "hz", "1000") == "OK"
    assert get(cfg, "hz") == "500"
    assert cfg.cmd("CONFIG", "SET", "hz", "0") == "OK"
    assert get(cfg, "hz") == "1"
    assert cfg.cmd("CONFIG", "SET", "hz", "-1") == failed("hz", "argument must be between 0 and 2147483647 inclusive")


def test_shape_errors(cfg):
    assert cfg.cmd("CONFIG", "SET", "timeout") == Error("ERR wrong number of arguments for 'config|set' command")
    assert cfg.cmd("CONFIG", "SET", "timeout", "1", "hz") == Error("ERR syntax error")
    assert get(cfg, "timeout") == "0"


def test_requirepass_applies_with_the_rest(server, cfg):
    """A string setting's apply step (requirepass's mirror) runs after all
    values are stored; a failure elsewhere leaves the password unset."""
    assert cfg.cmd("CONFIG", "SET", "requirepass", "secret", "hz", "x") == failed(
        "hz", "argument couldn't be parsed into an integer")
    fresh = server.conn()
    assert fresh.cmd("PING") == "PONG"
    fresh.close()
    assert cfg.cmd("CONFIG", "SET", "requirepass", "secret", "timeout", "3") == "OK"
    fresh = server.conn()
    assert fresh.cmd("PING") == Error("NOAUTH Authentication required.")
    assert fresh.cmd("AUTH", "secret") == "OK"
    assert fresh.cmd("CONFIG", "SET", "requirepass", "", "timeout", "0") == "OK"
    fresh.close()


def test_concurrent_sets_never_mix(server, cfg):
    """CONFIG SETs are serialised: a failing one's rollback never undoes a
    concurrent successful one, so the pair written together stays equal."""
    stop = threading.Event()
    errors = []

    def writer(seed):
        c = server.conn()
        i = 0
        while not stop.is_set() and i < 300:
            v = str(seed * 1000 + i)
            if c.cmd("CONFIG", "SET", "timeout", v, "tcp-keepalive", v) != "OK":
                errors.append("set failed")
            bad = c.cmd("CONFIG", "SET", "tcp-keepalive", "1", "timeout", "1", "hz", "x")
            if not isinstance(bad, Error):
                errors.append(bad)
            i += 1
        c.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    assert not errors
    assert get(cfg, "timeout") == get(cfg, "tcp-keepalive")
    assert get(cfg, "timeout") != "1"


def test_same_replies_as_redis(server, cfg):
    """Error texts and rollbacks where Redis 7.0 and 8.0 agree."""
    from conftest import real_redis
    cases = [("timeout", "x"), ("TIMEOUT", "x"), ("maxclients", "abc"), ("protected-mode", "maybe"),
             ("loglevel", "x"), ("timeout", "-1"), ("proto-max-bulk-len", "abc"), ("proto-max-bulk-len", "10"),
             ("hash-max-listpack-value", "-1"), ("hll-sparse-max-bytes", "-1"), ("maxmemory", "-1"),
             ("hash-max-ziplist-entries", "abc"), ("foo", "1"), ("timeout", "1", "timeout", "2"),
             ("timeout", "1", "TIMEOUT", "2"), ("foo", "1", "timeout", "2"), ("timeout", "1", "foo", "2"),
             ("daemonize", "yes", "foo", "2"), ("timeout", "5", "tcp-keepalive", "x"),
             ("client-output-buffer-limit", "x"), ("client-output-buffer-limit", "normal"),
             ("unixsocketperm", "1"), ("timeout", "1", "hz"), ("active-expire-effort", "11"),
             ("timeout", "5", "maxclients", "30000")]
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        for args in cases:
            assert cfg.cmd("CONFIG", "SET", *args) == ref.cmd("CONFIG", "SET", *args), args
            for name in ("timeout", "tcp-keepalive", "maxclients"):
                assert get(cfg, name) == get(ref, name), (args, name)
        ref.close()
