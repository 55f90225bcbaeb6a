"""List node compression: list-compress-depth, DEBUG QUICKLIST-PACKED-THRESHOLD.

With list-compress-depth N > 0 a quicklist keeps N nodes at each end raw and
LZF-compresses the interior ones where that pays. Nothing about the replies
may change: a randomized run of every list command against a compressed
server and an uncompressed one (same node size, small, so lists have many
nodes) compares the exact reply bytes, RESP2 and RESP3, and the values'
DEBUG DIGEST-VALUE; a run against the reference redis-server with the same
settings does the same where Redis 7.0 and 8.0 agree. MEMORY USAGE shows
compressed sizes; the depth is read when a list becomes a quicklist, as in
Redis, so CONFIG SET changes new lists only. Servers here are private."""
import random
import re

import pytest
from conftest import real_redis
from resp import Error, RespConn, Simple

OK = Simple("OK")
THRESHOLD_ERR = Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
KEYS = ["la", "lb", "lc", "{t}x"]


def start(new_server, depth, fill, *extra):
    return new_server("--enable-debug-command", "yes", "--list-compress-depth", str(depth),
                      "--list-max-listpack-size", str(fill), *extra)


def push_many(conn, key, items, cmd="RPUSH"):
    for i in range(0, len(items), 1000):
        conn.cmd(cmd, key, *items[i:i + 1000])


def memory(conn, key):
    return conn.cmd("MEMORY", "USAGE", key, "SAMPLES", 0)


def digests(conn):
    return conn.cmd("DEBUG", "DIGEST-VALUE", *KEYS)


# ---- the randomized comparison --------------------------------------------

class Gen:
    """Random list commands over KEYS with values that compress well (runs
    of a pattern), values that do not (random bytes), integers, and now and
    then an element large enough for a plain node of its own."""

    def __init__(self, seed, big=True):
        self.rnd = random.Random(seed)
        self.big = big
        self.seen = []  # values pushed, to pick pivots and LREM targets from

    def value(self):
        r = self.rnd
        k = r.random()
        if k < 0.45:
            unit = r.choice([b"abc", b"node-", b"payload:", b"x"])
            v = unit * r.randint(1, 40) + str(r.randint(0, 9)).encode()
        elif k < 0.65:
            v = str(r.randint(-300, 300)).encode()
        elif k < 0.8:
            v = bytes(r.getrandbits(8) for _ in range(r.randint(1, 300)))
        elif k < 0.97 or not self.big:
            v = b"item-%d" % r.randint(0, 20)
        else:
            v = r.choice([b"Z", b"plain-", b"\x00\x01"]) * r.randint(3000, 12000)
        self.seen.append(v)
        if len(self.seen) > 200:
            self.seen.pop(0)
        return v

    def known(self):
        return self.rnd.choice(self.seen) if self.seen and self.rnd.random() < 0.85 else self.value()

    def index(self):
        r = self.rnd
        return r.choice([0, -1, 1, -2, r.randint(-400, 400), r.randint(-30, 30)])

    def command(self):
        r = self.rnd
        k = r.choice(KEYS)
        other = r.choice(KEYS)
        side = lambda: r.choice(["LEFT", "RIGHT"])
        op = r.randint(0, 21)
        if op <= 3:
            return [r.choice(["LPUSH", "RPUSH"]), k] + [self.value() for _ in range(r.randint(1, 12))]
        if op == 4:
            return [r.choice(["LPUSHX", "RPUSHX"]), k, self.value()]
        if op == 5:
            c = [r.choice(["LPOP", "RPOP"]), k]
            return c + ([r.randint(0, 12)] if r.random() < 0.5 else [])
        if op == 6:
            return ["LINDEX", k, self.index()]
        if op == 7:
            return ["LSET", k, self.index(), self.value()]
        if op == 8:
            return ["LRANGE", k, self.index(), self.index()]
        if op == 9:
            return ["LRANGE", k, 0, -1]
        if op == 10:
            return ["LINSERT", k, r.choice(["BEFORE", "AFTER"]), self.known(), self.value()]
        if op == 11:
            return ["LREM", k, r.randint(-3, 3), self.known()]
        if op == 12:
            # Mostly trims that keep most of the list, sometimes deep ones.
            if r.random() < 0.8:
                return ["LTRIM", k, r.randint(0, 3), -r.randint(1, 4)]
            return ["LTRIM", k, self.index(), self.index()]
        if op == 13:
            c = ["LPOS", k, self.known()]
            if r.random() < 0.5:
                c += ["RANK", r.choice([1, -1, 2, -2, 3])]
            if r.random() < 0.5:
                c += ["COUNT", r.randint(0, 5)]
            if r.random() < 0.3:
                c += ["MAXLEN", r.randint(0, 50)]
            return c
        if op == 14:
            return ["LMOVE", k, other, side(), side()]
        if op == 15:
            return ["RPOPLPUSH", k, other]
        if op == 16:
            c = ["LMPOP", 2, k, other, side()]
            return c + (["COUNT", r.randint(1, 8)] if r.random() < 0.5 else [])
        if op == 17:
            return ["LLEN", k]
        if op == 18:
            return ["LINSERT", k, r.choice(["BEFORE", "AFTER"]), self.known(),
                    r.choice([b"Q" * r.randint(3000, 10000), self.value()])]
        if op == 19:
            return ["LSET", k, self.index(), b"S" * r.randint(2000, 9000) if self.big else self.value()]
        if op == 20:
            return ["OBJECT", "ENCODING", k]
        return ["LREM", k, 0, self.known()]


def compare(conns, gen, steps, check_every=100):
    """Send each generated command to every connection; the reply bytes must
    be identical. Every check_every steps, and at the end, the whole lists
    and their digests must be too."""
    for step in range(steps):
        cmd = gen.command()
        replies = [c.cmd_raw(*cmd) for c in conns]
        assert all(x == replies[0] for x in replies), (step, cmd[:4], [x[:200] for x in replies])
        if step % check_every == check_every - 1 or step == steps - 1:
            for k in KEYS:
                whole = [c.cmd_raw("LRANGE", k, 0, -1) for c in conns]
                assert all(x == whole[0] for x in whole), (step, k)
            d = [digests(c) for c in conns]
            assert all(x == d[0] for x in d), (step, d)


CONFIGS = [
    pytest.param(1, 4, None, id="depth1-fill4"),
    pytest.param(2, 4, None, id="depth2-fill4"),
    pytest.param(3, -1, None, id="depth3-fill-1"),
    pytest.param(1, 3, "100b", id="depth1-fill3-plain100b"),
]


@pytest.mark.parametrize("depth,fill,threshold", CONFIGS)
def test_compressed_matches_uncompressed(new_server, depth, fill, threshold):
    srv_c = start(new_server, depth, fill)
    srv_u = start(new_server, 0, fill)
    conns = [srv_c.conn(), srv_u.conn()]
    if threshold:
        for c in conns:
            assert c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", threshold) == OK
    compare(conns, Gen(1000 + depth * 10 + fill), 2500)
    # The compressed server did compress: its lists take less memory.
    total = [sum(memory(c, k) or 0 for k in KEYS) for c in conns]
    assert total[0] < total[1], total
    assert conns[0].cmd("DEBUG", "DIGEST") == conns[1].cmd("DEBUG", "DIGEST")
    for c in conns:
        c.close()


@pytest.mark.parametrize("depth", [1, 2])
def test_compressed_matches_uncompressed_resp3(new_server, depth):
    srv_c = start(new_server, depth, 4)
    srv_u = start(new_server, 0, 4)
    conns = [srv_c.conn(), srv_u.conn()]
    for c in conns:
        assert not isinstance(c.cmd("HELLO", "3"), Error)
    compare(conns, Gen(77 + depth), 1500)
    for c in conns:
        c.close()


@pytest.mark.parametrize("depth", [1, 2])
def test_compressed_matches_reference_redis(new_server, depth):
    """Against Debian's redis-server with the same settings: the same reply
    bytes and DEBUG DIGEST-VALUE for every command. OBJECT ENCODING is left
    out (7.0 never converts a quicklist back to a listpack, 8.0 does)."""
    settings = ["--list-compress-depth", str(depth), "--list-max-listpack-size", "4"]
    with real_redis("--enable-debug-command", "yes", *settings) as port:
        if port is None:
            pytest.skip("redis-server is not installed")
        srv = start(new_server, depth, 4)
        conns = [srv.conn(), RespConn("127.0.0.1", port)]
        gen = Gen(4242 + depth)
        plain_cmd = gen.command

        def no_encoding():
            while True:
                cmd = plain_cmd()
                if cmd[0] != "OBJECT":
                    return cmd

        gen.command = no_encoding
        compare(conns, gen, 2000)
        for c in conns:
            c.close()


def test_blocking_pops_on_compressed_lists(new_server):
    """BLPOP, BRPOP, BLMOVE and BLMPOP served at once from compressed lists
    give what the uncompressed server gives."""
    srv_c = start(new_server, 1, 4)
    srv_u = start(new_server, 0, 4)
    conns = [srv_c.conn(), srv_u.conn()]
    items = [b"blocking-item-%d-" % i * 5 for i in range(300)]
    for c in conns:
        push_many(c, "bl", items)
    rnd = random.Random(5)
    for _ in range(200):
        cmd = rnd.choice([["BLPOP", "bl", "0"], ["BRPOP", "bl", "0"],
                          ["BLMOVE", "bl", "bl", rnd.choice(["LEFT", "RIGHT"]), rnd.choice(["LEFT", "RIGHT"]), "0"],
                          ["BLMPOP", "0", "1", "bl", rnd.choice(["LEFT", "RIGHT"]), "COUNT", "2"],
                          ["LINDEX", "bl", rnd.randint(-150, 150)]])
        replies = [c.cmd_raw(*cmd) for c in conns]
        assert replies[0] == replies[1], cmd
    assert [c.cmd_raw("LRANGE", "bl", 0, -1) for c in conns][0] == conns[1].cmd_raw("LRANGE", "bl", 0, -1)
    for c in conns:
        c.close()


# ---- memory and the depth's lifetime ---------------------------------------

def test_memory_drops_for_compressible_data(new_server):
    srv_c = start(new_server, 1, -2)
    srv_u = start(new_server, 0, -2)
    c, u = srv_c.conn(), srv_u.conn()
    items = [b"user:%06d:session-state=active;region=eu-west;plan=basic" % i for i in range(20000)]
    for conn in (c, u):
        push_many(conn, "big", items)
        assert conn.cmd("OBJECT", "ENCODING", "big") == b"quicklist"
    mc, mu = memory(c, "big"), memory(u, "big")
    assert mc * 3 < mu, (mc, mu)
    assert c.cmd("LRANGE", "big", 0, -1) == items
    assert c.cmd("LINDEX", "big", 10000) == items[10000]
    # Reading does not leave the list decompressed.
    assert memory(c, "big") == mc
    # Nor does SORT, which reads the nodes through the same views.
    assert c.cmd("SORT", "big", "ALPHA", "LIMIT", 10000, 1) == [items[10000]]
    assert c.cmd("SORT_RO", "big", "BY", "nosort", "LIMIT", 10000, 1) == [items[10000]]
    assert memory(c, "big") == mc
    # Random bytes do not compress: about the same size either way.
    rnd = random.Random(3)
    noise = [bytes(rnd.getrandbits(8) for _ in range(100)) for _ in range(3000)]
    for conn in (c, u):
        push_many(conn, "noise", noise)
    nc, nu = memory(c, "noise"), memory(u, "noise")
    assert abs(nc - nu) <= nu // 50, (nc, nu)
    assert c.cmd("LRANGE", "noise", 0, -1) == noise
    assert c.cmd("DEBUG", "DIGEST-VALUE", "big", "noise") == u.cmd("DEBUG", "DIGEST-VALUE", "big", "noise")
    c.close()
    u.close()


def test_depth_is_read_when_the_quicklist_is_made(new_server):
    srv = start(new_server, 0, -2)
    c = srv.conn()
    items = [b"entry-%05d-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" % i for i in range(10000)]
    push_many(c, "old", items)
    before = memory(c, "old")
    assert c.cmd("CONFIG", "SET", "list-compress-depth", "1") == OK
    assert c.cmd("CONFIG", "GET", "list-compress-depth") == [b"list-compress-depth", b"1"]
    # The existing quicklist keeps depth 0, even as it grows...
    push_many(c, "old", items)
    assert memory(c, "old") > before * 3 // 2
    # ...while a new one is compressed.
    push_many(c, "new", items + items)
    assert memory(c, "new") * 3 < memory(c, "old")
    # And keeps its depth after the setting goes back to 0.
    assert c.cmd("CONFIG", "SET", "list-compress-depth", "0") == OK
    push_many(c, "new", items)
    push_many(c, "old", items)
    assert memory(c, "new") * 3 < memory(c, "old")
    assert c.cmd("LRANGE", "new", 0, -1) == c.cmd("LRANGE", "old", 0, -1)
    # A list that shrinks to a listpack and grows again takes the depth in
    # force then (0 now): uncompressed.
    assert c.cmd("LTRIM", "new", 0, 1) == OK
    assert c.cmd("OBJECT", "ENCODING", "new") == b"listpack"
    push_many(c, "new", items)
    assert c.cmd("OBJECT", "ENCODING", "new") == b"quicklist"
    assert memory(c, "new") > before * 9 // 10
    c.close()


def test_config_range(new_server):
    srv = start(new_server, 0, -2)
    c = srv.conn()
    for v in ["0", "5", "2147483647"]:
        assert c.cmd("CONFIG", "SET", "list-compress-depth", v) == OK
        assert c.cmd("CONFIG", "GET", "list-compress-depth") == [b"list-compress-depth", v.encode()]
    for v in ["-1", "2147483648", "abc"]:
        assert isinstance(c.cmd("CONFIG", "SET", "list-compress-depth", v), Error)
    assert c.cmd("CONFIG", "GET", "list-compress-depth") == [b"list-compress-depth", b"2147483647"]
    # A depth past any list's length compresses nothing and breaks nothing.
    items = [b"deep-%d-" % i * 8 for i in range(3000)]
    push_many(c, "deep", items)
    assert c.cmd("LRANGE", "deep", 0, -1) == items
    assert c.cmd("LINSERT", "deep", "BEFORE", items[1500], b"mid") == 3001
    assert c.cmd("LINDEX", "deep", 1500) == b"mid"
    c.close()


def test_config_range_matches_reference_redis(new_server):
    srv = start(new_server, 0, -2)
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server is not installed")
        conns = [srv.conn(), RespConn("127.0.0.1", port)]
        for v in ["0", "7", "2147483647", "-1", "2147483648", "abc", "1.5"]:
            replies = [c.cmd_raw("CONFIG", "SET", "list-compress-depth", v) for c in conns]
            assert replies[0] == replies[1], (v, replies)
        for c in conns:
            c.close()


# ---- introspection -----------------------------------------------------------

def test_encoding_stays_quicklist(new_server):
    srv = start(new_server, 1, 4)
    c = srv.conn()
    push_many(c, "q", [b"v%d" % i * 20 for i in range(200)])
    assert c.cmd("OBJECT", "ENCODING", "q") == b"quicklist"
    assert c.cmd("RPUSH", "small", "a", "b") == 2
    assert c.cmd("OBJECT", "ENCODING", "small") == b"listpack"
    c.close()


QL_FIELDS = re.compile(rb" ql_nodes:(\d+) ql_avg_node:(\d+\.\d\d) ql_listpack_max:(-?\d+) ql_compressed:([01]) "
                       rb"ql_uncompressed_size:(\d+)$")


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_debug_object_ql_fields(new_server, depth):
    srv = start(new_server, depth, 4)
    c = srv.conn()
    items = [b"debug-object-%d-" % i * 6 for i in range(400)]
    push_many(c, "q", items)
    reply = c.cmd("DEBUG", "OBJECT", "q")
    if isinstance(reply, Error) and "subcommand" in reply.lower():
        pytest.skip("this build has no DEBUG OBJECT")
    assert isinstance(reply, Simple) and reply.startswith("Value at:"), reply
    assert "encoding:quicklist" in reply
    m = QL_FIELDS.search(reply.encode())
    assert m, reply
    nodes, avg, lmax, compressed, size = m.groups()
    assert int(nodes) == 100 and avg == b"4.00" and int(lmax) == 4
    assert int(compressed) == (depth != 0)
    assert int(size) > sum(len(x) for x in items)
    # A listpack-encoded list has no ql_ fields.
    c.cmd("RPUSH", "small", "a")
    small = c.cmd("DEBUG", "OBJECT", "small")
    assert "encoding:listpack" in small and "ql_" not in small
    c.close()


# ---- DEBUG QUICKLIST-PACKED-THRESHOLD ------------------------------------------

def test_packed_threshold_replies(new_server):
    srv = start(new_server, 1, -2)
    for proto in (2, 3):
        c = srv.conn()
        if proto == 3:
            c.cmd("HELLO", "3")
        for v in ["1mb", "100", "1k", "1KB", "4000mb", "0", "100b", "1g", "4095mb"]:
            assert c.cmd_raw("DEBUG", "QUICKLIST-PACKED-THRESHOLD", v) == b"+OK\r\n", v
        for v in ["-1", "abc", "5gb", "4gb", "4294967296", "1.5k", "10x", "18446744073709551616"]:
            assert c.cmd_raw("DEBUG", "QUICKLIST-PACKED-THRESHOLD", v) == \
                b"-ERR argument must be a memory value bigger than 1 and smaller than 4gb\r\n", v
        assert isinstance(c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD"), Error)
        assert c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == OK
        c.close()


def test_packed_threshold_matches_reference_redis(new_server):
    srv = start(new_server, 0, -2)
    with real_redis("--enable-debug-command", "yes") as port:
        if port is None:
            pytest.skip("redis-server is not installed")
        conns = [srv.conn(), RespConn("127.0.0.1", port)]
        for v in ["1mb", "0", "100b", "1k", "-1", "abc", "5gb", "4gb", "4095mb", "4096mb", "10x", "1.5k"]:
            replies = [c.cmd_raw("DEBUG", "QUICKLIST-PACKED-THRESHOLD", v) for c in conns]
            assert replies[0] == replies[1], (v, replies)
        for c in conns:
            c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0")
            c.close()


def test_packed_threshold_makes_plain_nodes(new_server):
    """Under a small threshold every element at or above it is a node of its
    own: a compressed list of such elements holds the same values, and its
    memory is per-element nodes, compressed."""
    srv_c = start(new_server, 1, -2)
    srv_u = start(new_server, 0, -2)
    conns = [srv_c.conn(), srv_u.conn()]
    items = [b"plain-%03d-" % i * 20 for i in range(300)]
    for c in conns:
        assert c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "64b") == OK
        push_many(c, "p", items)
        assert c.cmd("LRANGE", "p", 0, -1) == items
    assert memory(conns[0], "p") < memory(conns[1], "p")
    rnd = random.Random(9)
    for _ in range(300):
        i = rnd.randint(-300, 299)
        cmd = rnd.choice([["LINDEX", "p", i], ["LSET", "p", i, b"small"], ["LSET", "p", i, b"B" * 300],
                          ["LINSERT", "p", "AFTER", items[rnd.randint(0, 299)], b"C" * rnd.choice([5, 500])],
                          ["LREM", "p", 1, b"small"], ["LPOP", "p"], ["RPUSH", "p", items[rnd.randint(0, 299)]]])
        replies = [c.cmd_raw(*cmd) for c in conns]
        assert replies[0] == replies[1], cmd
    assert conns[0].cmd_raw("LRANGE", "p", 0, -1) == conns[1].cmd_raw("LRANGE", "p", 0, -1)
    assert digests_of(conns[0], "p") == digests_of(conns[1], "p")
    for c in conns:
        c.close()


def digests_of(conn, *keys):
    return conn.cmd("DEBUG", "DIGEST-VALUE", *keys)
