"""Generic keyspace commands: DEL, UNLINK, EXISTS, TYPE, TOUCH, RENAME,
RENAMENX, COPY, MOVE, SWAPDB, KEYS, RANDOMKEY, OBJECT.

Expiry commands are in test_expire.py, SCAN in test_scan.py."""
import threading
import time

import pytest
from resp import Error, Simple

SAME = Error("ERR source and destination objects are the same")
NOT_INT = Error("ERR value is not an integer or out of range")
INT_RANGE = Error("ERR value is out of range, value must between -2147483648 and 2147483647")
DB_RANGE = Error("ERR DB index is out of range")
SYNTAX = Error("ERR syntax error")


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


# ---- DEL, UNLINK, EXISTS, TOUCH, TYPE ------------------------------------

@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_unlink(conn, cmd):
    for k in ("a", "b", "c"):
        conn.cmd("SET", k, "v")
    assert conn.cmd(cmd, "a", "b", "nokey") == 2
    assert conn.cmd("EXISTS", "a", "b", "c") == 1
    # A key named twice is deleted once.
    assert conn.cmd(cmd, "c", "c") == 1
    assert conn.cmd(cmd, "c") == 0
    assert conn.cmd(cmd) == arity(cmd.lower())


def test_del_expired_key_counts_as_absent(conn):
    conn.cmd("SET", "k", "v", "PX", "1")
    time.sleep(0.01)
    assert conn.cmd("DEL", "k") == 0


def test_exists(conn):
    conn.cmd("SET", "a", "1")
    assert conn.cmd("EXISTS", "a") == 1
    assert conn.cmd("EXISTS", "nokey") == 0
    # Every mention counts.
    assert conn.cmd("EXISTS", "a", "a", "nokey", "a") == 3
    assert conn.cmd("EXISTS") == arity("exists")


def test_touch(conn):
    conn.cmd("SET", "a", "1")
    conn.cmd("SET", "b", "1")
    assert conn.cmd("TOUCH", "a", "b", "nokey") == 2
    assert conn.cmd("TOUCH") == arity("touch")


def test_type(conn, conn3):
    conn.cmd("SET", "s", "hello")
    conn.cmd("SET", "i", "12")
    assert conn.cmd("TYPE", "s") == Simple("string")
    assert conn.cmd("TYPE", "i") == Simple("string")
    assert conn.cmd("TYPE", "nokey") == Simple("none")
    assert conn.cmd_raw("TYPE", "s") == b"+string\r\n"
    assert conn3.cmd_raw("TYPE", "nokey") == b"+none\r\n"
    assert conn.cmd("TYPE") == arity("type")
    assert conn.cmd("TYPE", "a", "b") == arity("type")


# ---- RENAME, RENAMENX -----------------------------------------------------

def test_rename(conn):
    conn.cmd("SET", "src", "value")
    assert conn.cmd("RENAME", "src", "dst") == Simple("OK")
    assert conn.cmd("GET", "src") is None
    assert conn.cmd("GET", "dst") == b"value"
    # Overwrites the destination, whatever it held.
    conn.cmd("SET", "other", "x", "EX", "100")
    assert conn.cmd("RENAME", "dst", "other") == Simple("OK")
    assert conn.cmd("GET", "other") == b"value"
    assert conn.cmd("TTL", "other") == -1
    assert conn.cmd("EXISTS", "dst") == 0


def test_rename_keeps_ttl_and_encoding(conn):
    long = "x" * 100
    for name, value, enc in (("i", "12345", b"int"), ("e", "short", b"embstr"), ("r", long, b"raw")):
        conn.cmd("SET", name, value, "PX", "100000")
        assert conn.cmd("RENAME", name, name + "2") == Simple("OK")
        assert conn.cmd("GET", name + "2") == value.encode()
        assert 99000 < conn.cmd("PTTL", name + "2") <= 100000
        assert conn.cmd("OBJECT", "ENCODING", name + "2") == enc


def test_rename_long_key_names(conn):
    a, b = "k" * 300, "j" * 1000
    conn.cmd("SET", a, "v")
    assert conn.cmd("RENAME", a, b) == Simple("OK")
    assert conn.cmd("GET", b) == b"v"
    assert conn.cmd("RENAME", b, "short") == Simple("OK")
    assert conn.cmd("GET", "short") == b"v"


def test_rename_errors(conn):
    assert conn.cmd("RENAME", "nokey", "x") == Error("ERR no such key")
    # Even a rename onto itself needs the key.
    assert conn.cmd("RENAME", "nokey", "nokey") == Error("ERR no such key")
    assert conn.cmd("RENAMENX", "nokey", "x") == Error("ERR no such key")
    assert conn.cmd("RENAME", "a") == arity("rename")
    assert conn.cmd("RENAMENX", "a", "b", "c") == arity("renamenx")


def test_rename_same_key(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("RENAME", "k", "k") == Simple("OK")
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("TTL", "k") > 0
    assert conn.cmd("RENAMENX", "k", "k") == 0
    assert conn.cmd("GET", "k") == b"v"


def test_rename_expired_source(conn):
    conn.cmd("SET", "k", "v", "PX", "1")
    time.sleep(0.01)
    assert conn.cmd("RENAME", "k", "d") == Error("ERR no such key")
    assert conn.cmd("EXISTS", "d") == 0


def test_renamenx(conn):
    conn.cmd("SET", "a", "1")
    conn.cmd("SET", "b", "2")
    assert conn.cmd("RENAMENX", "a", "b") == 0
    assert conn.cmd("GET", "a") == b"1"
    assert conn.cmd("GET", "b") == b"2"
    assert conn.cmd("RENAMENX", "a", "c") == 1
    assert conn.cmd("GET", "c") == b"1"
    assert conn.cmd("EXISTS", "a") == 0
    # An expired destination does not block RENAMENX.
    conn.cmd("SET", "d", "old", "PX", "1")
    time.sleep(0.01)
    assert conn.cmd("RENAMENX", "c", "d") == 1
    assert conn.cmd("GET", "d") == b"1"


def test_rename_is_atomic_across_shards(server, r):
    """Two keys in (almost surely) different shards: renaming back and forth
    while others check both at once must always see exactly one of them."""
    a, b = "rename:left", "rename:right"
    r.set(a, "v")
    stop = threading.Event()
    errors = []

    def renamer():
        c = server.conn()
        try:
            while not stop.is_set():
                # Whichever name the key has now, move it to the other.
                if c.cmd("RENAME", a, b) != Simple("OK"):
                    c.cmd("RENAME", b, a)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            c.close()

    def checker():
        c = server.conn()
        try:
            for _ in range(3000):
                n = c.cmd("EXISTS", a, b)
                if n != 1:
                    errors.append("EXISTS saw %r" % (n,))
                    return
        finally:
            c.close()

    ts = [threading.Thread(target=renamer) for _ in range(2)]
    cs = [threading.Thread(target=checker) for _ in range(2)]
    for t in ts + cs:
        t.start()
    for t in cs:
        t.join()
    stop.set()
    for t in ts:
        t.join()
    assert not errors, errors[:3]
    assert r.exists(a, b) == 1


# ---- COPY -------------------------------------------------------------------

def test_copy(conn):
    conn.cmd("SET", "src", "hello", "PX", "100000")
    assert conn.cmd("COPY", "src", "dst") == 1
    assert conn.cmd("GET", "dst") == b"hello"
    assert conn.cmd("GET", "src") == b"hello"
    assert 99000 < conn.cmd("PTTL", "dst") <= 100000
    # The copy is independent of the source.
    conn.cmd("SET", "src", "changed")
    assert conn.cmd("GET", "dst") == b"hello"
    # Existing destination: refused without REPLACE.
    assert conn.cmd("COPY", "src", "dst") == 0
    assert conn.cmd("GET", "dst") == b"hello"
    assert conn.cmd("COPY", "src", "dst", "REPLACE") == 1
    assert conn.cmd("GET", "dst") == b"changed"
    # The source had no TTL: neither has the replaced copy.
    assert conn.cmd("TTL", "dst") == -1
    assert conn.cmd("COPY", "nokey", "dst") == 0
    assert conn.cmd("COPY", "nokey", "dst", "REPLACE") == 0
    assert conn.cmd("GET", "dst") == b"changed"


def test_copy_encodings(conn):
    long = "y" * 200
    for name, value, enc in (("i", "-42", b"int"), ("e", "abc", b"embstr"), ("r", long, b"raw")):
        conn.cmd("SET", name, value)
        assert conn.cmd("COPY", name, name + "c") == 1
        assert conn.cmd("GET", name + "c") == value.encode()
        assert conn.cmd("OBJECT", "ENCODING", name + "c") == enc


def test_copy_db(conn):
    conn.cmd("SET", "k", "v", "EX", "1000")
    assert conn.cmd("COPY", "k", "k", "DB", "1") == 1
    assert conn.cmd("COPY", "k", "k", "DB", "1") == 0
    assert conn.cmd("COPY", "k", "k2", "db", "2", "replace") == 1
    conn.cmd("SELECT", "1")
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("TTL", "k") > 990
    conn.cmd("SET", "k", "db1")
    conn.cmd("SELECT", "2")
    assert conn.cmd("GET", "k2") == b"v"
    conn.cmd("SELECT", "0")
    assert conn.cmd("COPY", "k", "k", "DB", "1", "REPLACE") == 1
    conn.cmd("SELECT", "1")
    assert conn.cmd("GET", "k") == b"v"
    # Copying within the selected db given explicitly by number.
    assert conn.cmd("COPY", "k", "k3", "DB", "1") == 1
    assert conn.cmd("GET", "k3") == b"v"
    conn.cmd("SELECT", "0")


def test_copy_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("COPY", "k", "k") == SAME
    # Checked before the key is looked up.
    assert conn.cmd("COPY", "nokey", "nokey") == SAME
    assert conn.cmd("COPY", "k", "k", "DB", "0") == SAME
    assert conn.cmd("COPY", "k", "x", "DB", "x") == NOT_INT
    assert conn.cmd("COPY", "k", "x", "DB", "99999999999") == INT_RANGE
    assert conn.cmd("COPY", "k", "x", "DB", "16") == DB_RANGE
    assert conn.cmd("COPY", "k", "x", "DB", "-1") == DB_RANGE
    assert conn.cmd("COPY", "k", "x", "DB") == SYNTAX
    assert conn.cmd("COPY", "k", "x", "FOO") == SYNTAX
    assert conn.cmd("COPY", "k", "x", "REPLACE", "FOO") == SYNTAX
    # Options are checked in order: the bad one first wins.
    assert conn.cmd("COPY", "k", "x", "DB", "16", "FOO") == DB_RANGE
    assert conn.cmd("COPY", "k") == arity("copy")
    assert conn.cmd("EXISTS", "x") == 0


def test_copy_expired_source(conn):
    conn.cmd("SET", "k", "v", "PX", "1")
    time.sleep(0.01)
    assert conn.cmd("COPY", "k", "d") == 0
    assert conn.cmd("EXISTS", "d") == 0


# ---- MOVE -------------------------------------------------------------------

def test_move(conn):
    conn.cmd("SET", "k", "v", "EX", "1000")
    assert conn.cmd("MOVE", "k", "1") == 1
    assert conn.cmd("EXISTS", "k") == 0
    conn.cmd("SELECT", "1")
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("TTL", "k") > 990
    # Back again; the target already holding the key refuses.
    conn.cmd("SELECT", "0")
    conn.cmd("SET", "k", "db0")
    conn.cmd("SELECT", "1")
    assert conn.cmd("MOVE", "k", "0") == 0
    assert conn.cmd("GET", "k") == b"v"
    conn.cmd("SELECT", "0")
    assert conn.cmd("GET", "k") == b"db0"
    assert conn.cmd("MOVE", "nokey", "1") == 0


def test_move_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("MOVE", "k", "0") == SAME
    assert conn.cmd("MOVE", "nokey", "0") == SAME
    assert conn.cmd("MOVE", "k", "16") == DB_RANGE
    assert conn.cmd("MOVE", "k", "-1") == DB_RANGE
    assert conn.cmd("MOVE", "k", "x") == NOT_INT
    assert conn.cmd("MOVE", "k", "99999999999") == INT_RANGE
    assert conn.cmd("MOVE", "k") == arity("move")
    assert conn.cmd("GET", "k") == b"v"


def test_move_expired(conn):
    conn.cmd("SET", "k", "v", "PX", "1")
    conn.cmd("SELECT", "1")
    conn.cmd("SET", "k", "target", "PX", "1")
    conn.cmd("SELECT", "0")
    time.sleep(0.01)
    assert conn.cmd("MOVE", "k", "1") == 0
    conn.cmd("SET", "k", "fresh")
    # The expired key in the target does not block the move.
    assert conn.cmd("MOVE", "k", "1") == 1
    conn.cmd("SELECT", "1")
    assert conn.cmd("GET", "k") == b"fresh"
    conn.cmd("SELECT", "0")


# ---- SWAPDB -----------------------------------------------------------------

def test_swapdb(server, conn):
    conn.cmd("SET", "a", "in0")
    conn.cmd("SELECT", "1")
    conn.cmd("SET", "b", "in1", "EX", "1000")
    other = server.conn()
    try:
        other.cmd("SELECT", "1")
        assert conn.cmd("SWAPDB", "0", "1") == Simple("OK")
        # Clients keep their index and see the other data.
        assert other.cmd("GET", "a") == b"in0"
        assert other.cmd("GET", "b") is None
        assert conn.cmd("GET", "a") == b"in0"
        conn.cmd("SELECT", "0")
        assert conn.cmd("GET", "b") == b"in1"
        assert conn.cmd("TTL", "b") > 990
        assert conn.cmd("DBSIZE") == 1
        assert conn.cmd("SWAPDB", "1", "0") == Simple("OK")
        assert conn.cmd("GET", "a") == b"in0"
        assert conn.cmd("SWAPDB", "3", "3") == Simple("OK")
        assert conn.cmd("GET", "a") == b"in0"
    finally:
        other.close()


def test_swapdb_errors(conn):
    assert conn.cmd("SWAPDB", "x", "0") == Error("ERR invalid first DB index")
    assert conn.cmd("SWAPDB", "0", "x") == Error("ERR invalid second DB index")
    assert conn.cmd("SWAPDB", "x", "y") == Error("ERR invalid first DB index")
    assert conn.cmd("SWAPDB", "99999999999", "0") == Error("ERR invalid first DB index")
    assert conn.cmd("SWAPDB", "0", "99999999999") == Error("ERR invalid second DB index")
    assert conn.cmd("SWAPDB", "0", "16") == DB_RANGE
    assert conn.cmd("SWAPDB", "-1", "0") == DB_RANGE
    assert conn.cmd("SWAPDB", "0") == arity("swapdb")


def test_swapdb_many_keys(server, r):
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.set("k%d" % i, i)
    p.execute()
    assert r.swapdb(0, 5)
    assert r.dbsize() == 0
    r5 = server.client(db=5)
    try:
        assert r5.dbsize() == 2000
        assert r5.get("k1999") == b"1999"
    finally:
        r5.close()


# ---- KEYS -------------------------------------------------------------------

def test_keys(conn):
    for k in ("foo", "foobar", "bar", "f?x", "hello world"):
        conn.cmd("SET", k, "1")
    assert sorted(conn.cmd("KEYS", "*")) == [b"bar", b"f?x", b"foo", b"foobar", b"hello world"]
    assert sorted(conn.cmd("KEYS", "foo*")) == [b"foo", b"foobar"]
    assert sorted(conn.cmd("KEYS", "f??")) == [b"f?x", b"foo"]
    assert conn.cmd("KEYS", "f\\?x") == [b"f?x"]
    assert sorted(conn.cmd("KEYS", "[bh]*")) == [b"bar", b"hello world"]
    assert conn.cmd("KEYS", "nomatch*") == []
    assert conn.cmd("KEYS", "foo") == [b"foo"]
    assert conn.cmd("KEYS") == arity("keys")
    assert conn.cmd_raw("KEYS", "zzz*") == b"*0\r\n"


def test_keys_skips_expired_and_other_dbs(conn):
    conn.cmd("SET", "live", "1")
    conn.cmd("SET", "dead", "1", "PX", "1")
    conn.cmd("SELECT", "1")
    conn.cmd("SET", "elsewhere", "1")
    conn.cmd("SELECT", "0")
    time.sleep(0.01)
    assert conn.cmd("KEYS", "*") == [b"live"]


def test_keys_many(r):
    p = r.pipeline(transaction=False)
    for i in range(5000):
        p.set("key:%d" % i, "v")
    p.execute()
    keys = r.keys("*")
    assert len(keys) == 5000
    assert set(keys) == {b"key:%d" % i for i in range(5000)}
    assert sorted(r.keys("key:1?")) == sorted(b"key:1%d" % i for i in range(10))


# ---- RANDOMKEY --------------------------------------------------------------

def test_randomkey(conn, conn3):
    assert conn.cmd("RANDOMKEY") is None
    assert conn.cmd_raw("RANDOMKEY") == b"$-1\r\n"
    assert conn3.cmd_raw("RANDOMKEY") == b"_\r\n"
    conn.cmd("SET", "only", "1")
    assert conn.cmd("RANDOMKEY") == b"only"
    keys = {b"k%d" % i for i in range(50)}
    for k in keys:
        conn.cmd("SET", k, "1")
    seen = {conn.cmd("RANDOMKEY") for _ in range(200)}
    assert seen <= keys | {b"only"}
    assert len(seen) > 10
    assert conn.cmd("RANDOMKEY", "x") == arity("randomkey")


def test_randomkey_expired(conn):
    for i in range(20):
        conn.cmd("SET", "v%d" % i, "1", "PX", "1")
    time.sleep(0.01)
    # Only expired keys: RANDOMKEY deletes what it meets and finds nothing.
    assert conn.cmd("RANDOMKEY") is None
    conn.cmd("SET", "live", "1")
    assert conn.cmd("RANDOMKEY") == b"live"


def test_randomkey_other_db(conn):
    conn.cmd("SET", "in0", "1")
    conn.cmd("SELECT", "3")
    assert conn.cmd("RANDOMKEY") is None
    conn.cmd("SET", "in3", "1")
    assert conn.cmd("RANDOMKEY") == b"in3"
    conn.cmd("SELECT", "0")


# ---- OBJECT -----------------------------------------------------------------

def test_object_encoding(conn, conn3):
    conn.cmd("SET", "i", "12345")
    conn.cmd("SET", "neg", "-9223372036854775808")
    conn.cmd("SET", "big", "123456789012345678901")
    conn.cmd("SET", "e", "")
    conn.cmd("SET", "e44", "x" * 44)
    conn.cmd("SET", "r45", "x" * 45)
    conn.cmd("SET", "lead0", "012")
    assert conn.cmd("OBJECT", "ENCODING", "i") == b"int"
    assert conn.cmd("OBJECT", "ENCODING", "neg") == b"int"
    assert conn.cmd("OBJECT", "ENCODING", "big") == b"embstr"
    assert conn.cmd("OBJECT", "ENCODING", "e") == b"embstr"
    assert conn.cmd("OBJECT", "ENCODING", "e44") == b"embstr"
    assert conn.cmd("OBJECT", "ENCODING", "r45") == b"raw"
    assert conn.cmd("OBJECT", "ENCODING", "lead0") == b"embstr"
    assert conn.cmd("object", "encoding", "i") == b"int"
    assert conn.cmd_raw("OBJECT", "ENCODING", "nokey") == b"$-1\r\n"
    assert conn3.cmd_raw("OBJECT", "ENCODING", "nokey") == b"_\r\n"


def test_object_refcount(conn, external):
    conn.cmd("SET", "e", "hello")
    conn.cmd("SET", "r", "x" * 100)
    assert conn.cmd("OBJECT", "REFCOUNT", "e") == 1
    assert conn.cmd("OBJECT", "REFCOUNT", "r") == 1
    assert conn.cmd("OBJECT", "REFCOUNT", "nokey") is None
    if not external:
        # Redis shares small integers (and answers INT_MAX); HotKV stores
        # them inline in each key, so each has one reference.
        conn.cmd("SET", "i", "5")
        assert conn.cmd("OBJECT", "REFCOUNT", "i") == 1


def test_object_freq(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("OBJECT", "FREQ", "k") == Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.")
    # The key is looked up first.
    assert conn.cmd("OBJECT", "FREQ", "nokey") is None


def test_object_idletime(conn):
    conn.cmd("SET", "k", "v")
    conn.cmd("SET", "other", "v")
    assert conn.cmd("OBJECT", "IDLETIME", "k") == 0
    assert conn.cmd("OBJECT", "IDLETIME", "nokey") is None
    time.sleep(2.2)
    # OBJECT, TYPE, TTL, EXISTS do not count as accesses...
    assert conn.cmd("TYPE", "k") == Simple("string")
    assert conn.cmd("TTL", "k") == -1
    assert conn.cmd("EXISTS", "k") == 1
    idle = conn.cmd("OBJECT", "IDLETIME", "k")
    assert 1 <= idle <= 4
    assert conn.cmd("OBJECT", "IDLETIME", "k") >= 1
    # ...reads and TOUCH do.
    conn.cmd("GET", "k")
    assert conn.cmd("OBJECT", "IDLETIME", "k") == 0
    assert conn.cmd("OBJECT", "IDLETIME", "other") >= 1
    conn.cmd("TOUCH", "other")
    assert conn.cmd("OBJECT", "IDLETIME", "other") == 0


def test_object_idletime_no_touch_client(conn):
    conn.cmd("SET", "k", "v")
    on = conn.cmd("CLIENT", "NO-TOUCH", "ON")
    if isinstance(on, Error) and on.startswith("ERR unknown"):
        pytest.skip("server without CLIENT NO-TOUCH (Redis < 7.2, or CLIENT not built yet)")
    assert on == Simple("OK")
    conn.cmd("CLIENT", "NO-TOUCH", "OFF")
    time.sleep(2.2)
    assert conn.cmd("CLIENT", "NO-TOUCH", "ON") == Simple("OK")
    conn.cmd("GET", "k")
    assert conn.cmd("OBJECT", "IDLETIME", "k") >= 1
    # TOUCH still touches for a NO-TOUCH client.
    conn.cmd("TOUCH", "k")
    assert conn.cmd("OBJECT", "IDLETIME", "k") == 0
    conn.cmd("CLIENT", "NO-TOUCH", "OFF")


OBJECT_HELP = [
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
]


def test_object_help(conn, conn3):
    reply = conn.cmd("OBJECT", "HELP")
    assert reply == OBJECT_HELP
    assert all(isinstance(line, Simple) for line in reply)
    assert conn.cmd("object", "help") == OBJECT_HELP
    raw = conn3.cmd_raw("OBJECT", "HELP")
    assert raw.startswith(b"*15\r\n+OBJECT <subcommand>")


def test_object_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("OBJECT") == arity("object")
    assert conn.cmd("OBJECT", "FOO", "k") == Error("ERR unknown subcommand 'FOO'. Try OBJECT HELP.")
    assert conn.cmd("OBJECT", "ENCODING") == arity("object|encoding")
    assert conn.cmd("OBJECT", "ENCODING", "a", "b") == arity("object|encoding")
    assert conn.cmd("OBJECT", "REFCOUNT") == arity("object|refcount")
    assert conn.cmd("OBJECT", "IDLETIME") == arity("object|idletime")
    assert conn.cmd("OBJECT", "FREQ") == arity("object|freq")
    assert conn.cmd("OBJECT", "HELP", "x") == arity("object|help")
