"""Pub/sub over the wire: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their
UNSUBSCRIBE forms, PUBLISH and SPUBLISH, PUBSUB's subcommands, the RESP2
subscribed mode and RESP3 push frames, byte for byte as Redis 8.4 answers.

Glob patterns are checked against a stock redis-server when one is
installed (the same pattern/channel pairs, the same PUBLISH counts and the
same pmessage frames). Load, ordering across worker threads and the output
buffer limits live in test_pubsub_load.py.

Where Redis 7.0 (Debian's redis-server) and 8.4 differ, the test follows
8.4 and is skipped on a server that reports an older version (--host runs).
"""
import pytest

from conftest import real_redis
from poll import wait_until
from resp import Error, Push, RespConn, Simple, encode
from test_exec import debug_server, journal_cmds

NOT_ALLOWED = ("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
               "are allowed in this context")


def version(r):
    v = r.info("server")["redis_version"]
    return tuple(int(x) for x in str(v).split(".")[:2])


def need(r, ver, why):
    if version(r) < ver:
        pytest.skip("server older than %d.%d: %s" % (ver + (why,)))


def frames(c, n):
    return [c.raw() for _ in range(n)]


def arr(*items):
    """A RESP2 array of bulk strings and integers (None: null bulk)."""
    out = [b"*%d\r\n" % len(items)]
    for it in items:
        if it is None:
            out.append(b"$-1\r\n")
        elif isinstance(it, int):
            out.append(b":%d\r\n" % it)
        else:
            it = it.encode() if isinstance(it, str) else it
            out.append(b"$%d\r\n%s\r\n" % (len(it), it))
    return b"".join(out)


def push(*items):
    """The RESP3 push frame of the same items (None: RESP3 null)."""
    out = [b">%d\r\n" % len(items)]
    for it in items:
        if it is None:
            out.append(b"_\r\n")
        elif isinstance(it, int):
            out.append(b":%d\r\n" % it)
        else:
            it = it.encode() if isinstance(it, str) else it
            out.append(b"$%d\r\n%s\r\n" % (len(it), it))
    return b"".join(out)


@pytest.fixture
def sub(server, r):
    """Factory of fresh RESP2/RESP3 connections, closed after the test."""
    made = []

    def make(resp3=False):
        c = server.conn()
        if resp3:
            assert not isinstance(c.cmd("HELLO", "3"), Error)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def numsub(r, ch):
    return r.execute_command("PUBSUB", "NUMSUB", ch)[1]


# ---- subscribe / unsubscribe replies ----

@pytest.mark.parametrize("resp3", [False, True])
def test_subscribe_unsubscribe_replies(sub, resp3):
    f = push if resp3 else arr
    c = sub(resp3)
    c.send(encode("SUBSCRIBE", "a", "b", "a"))
    assert frames(c, 3) == [f("subscribe", "a", 1), f("subscribe", "b", 2), f("subscribe", "a", 2)]
    c.send(encode("PSUBSCRIBE", "p*", "q?"))
    assert frames(c, 2) == [f("psubscribe", "p*", 3), f("psubscribe", "q?", 4)]
    c.send(encode("SSUBSCRIBE", "s1", "s2"))
    # shard channels have their own count
    assert frames(c, 2) == [f("ssubscribe", "s1", 1), f("ssubscribe", "s2", 2)]
    c.send(encode("UNSUBSCRIBE", "b", "nosuch"))
    assert frames(c, 2) == [f("unsubscribe", "b", 3), f("unsubscribe", "nosuch", 3)]
    c.send(encode("PUNSUBSCRIBE", "q?"))
    assert frames(c, 1) == [f("punsubscribe", "q?", 2)]
    c.send(encode("SUNSUBSCRIBE", "s2"))
    assert frames(c, 1) == [f("sunsubscribe", "s2", 1)]
    c.send(encode("SUNSUBSCRIBE"))
    assert frames(c, 1) == [f("sunsubscribe", "s1", 0)]
    c.send(encode("UNSUBSCRIBE"))
    assert frames(c, 1) == [f("unsubscribe", "a", 1)]
    c.send(encode("PUNSUBSCRIBE"))
    assert frames(c, 1) == [f("punsubscribe", "p*", 0)]
    # out of subscribed mode again: an ordinary command answers normally
    assert c.cmd_raw("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("resp3", [False, True])
def test_unsubscribe_all_when_subscribed_to_nothing(sub, resp3):
    f = push if resp3 else arr
    c = sub(resp3)
    assert c.cmd_raw("UNSUBSCRIBE") == f("unsubscribe", None, 0)
    assert c.cmd_raw("PUNSUBSCRIBE") == f("punsubscribe", None, 0)
    assert c.cmd_raw("SUNSUBSCRIBE") == f("sunsubscribe", None, 0)
    # the client never entered subscribed mode
    assert c.cmd_raw("PING") == b"+PONG\r\n"


def test_unsubscribe_all_lists_every_channel(sub, r):
    c = sub()
    c.send(encode("SUBSCRIBE", "c1", "c2", "c3"))
    frames(c, 3)
    c.send(encode("UNSUBSCRIBE"))
    got = [c.read() for _ in range(3)]
    assert sorted(g[1] for g in got) == [b"c1", b"c2", b"c3"]
    assert [g[0] for g in got] == [b"unsubscribe"] * 3
    assert sorted(g[2] for g in got) == [0, 1, 2]
    assert [numsub(r, ch) for ch in ("c1", "c2", "c3")] == [0, 0, 0]


def test_unsubscribe_unknown_while_not_subscribed(sub):
    c = sub()
    c.send(encode("UNSUBSCRIBE", "x", "y"))
    assert frames(c, 2) == [arr("unsubscribe", "x", 0), arr("unsubscribe", "y", 0)]
    c.send(encode("PUNSUBSCRIBE", "x*"))
    assert frames(c, 1) == [arr("punsubscribe", "x*", 0)]
    c.send(encode("SUNSUBSCRIBE", "x"))
    assert frames(c, 1) == [arr("sunsubscribe", "x", 0)]
    assert c.cmd_raw("PING") == b"+PONG\r\n"


def test_subscribe_arity(sub):
    c = sub()
    for name in ("subscribe", "psubscribe", "ssubscribe"):
        assert c.cmd_raw(name.upper()) == b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()
    assert c.cmd_raw("PUBLISH", "a") == b"-ERR wrong number of arguments for 'publish' command\r\n"
    assert c.cmd_raw("SPUBLISH", "a") == b"-ERR wrong number of arguments for 'spublish' command\r\n"
    assert c.cmd_raw("PUBLISH", "a", "b", "c") == b"-ERR wrong number of arguments for 'publish' command\r\n"


# ---- RESP2 subscribed mode ----

def test_resp2_ping_in_subscribed_mode(sub):
    c = sub()
    c.cmd("SUBSCRIBE", "a")
    assert c.cmd_raw("PING") == arr("pong", "")
    assert c.cmd_raw("PING", "hello") == arr("pong", "hello")
    assert c.cmd_raw("PING", "a", "b") == b"-ERR wrong number of arguments for 'ping' command\r\n"


def test_resp2_subscribed_mode_rejects_other_commands(sub, r):
    c = sub()
    c.cmd("PSUBSCRIBE", "x*")
    for args, name in ((("GET", "k"), "get"), (("Set", "k", "v"), "set"), (("PUBLISH", "x1", "m"), "publish"),
                       (("SPUBLISH", "x1", "m"), "spublish"), (("MULTI",), "multi"),
                       (("PUBSUB", "NUMSUB"), "pubsub|numsub"), (("CONFIG", "GET", "x"), "config|get"),
                       (("HELLO", "2"), "hello"), (("CLIENT", "ID"), "client|id")):
        assert c.cmd_raw(*args) == b"-" + (NOT_ALLOWED % name).encode() + b"\r\n", args
    assert r.get("k") is None
    # an unknown command and a wrong arity are reported as such first
    assert c.cmd_raw("NOSUCHCMD").startswith(b"-ERR unknown command 'NOSUCHCMD'")
    assert c.cmd_raw("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    # shard-channel subscriptions alone also count
    s = sub()
    s.cmd("SSUBSCRIBE", "sh")
    assert s.cmd_raw("GET", "k") == b"-" + (NOT_ALLOWED % "get").encode() + b"\r\n"


def test_resp2_leaving_subscribed_mode(sub):
    c = sub()
    c.send(encode("SUBSCRIBE", "a"))
    c.read()
    c.send(encode("SSUBSCRIBE", "b"))
    c.read()
    c.cmd("UNSUBSCRIBE")
    # still subscribed to a shard channel
    assert c.cmd_raw("GET", "k").startswith(b"-ERR Can't execute 'get'")
    assert c.cmd_raw("SUNSUBSCRIBE", "b") == arr("sunsubscribe", "b", 0)
    assert c.cmd_raw("GET", "k") == b"$-1\r\n"


def test_reset_leaves_subscriptions(sub, r):
    c = sub()
    c.send(encode("SUBSCRIBE", "ra", "rb"))
    frames(c, 2)
    c.cmd("PSUBSCRIBE", "rp*")
    c.cmd("SSUBSCRIBE", "rs")
    assert numsub(r, "ra") == 1
    assert c.cmd_raw("RESET") == b"+RESET\r\n"
    assert numsub(r, "ra") == 0 and numsub(r, "rb") == 0
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "rs") == [b"rs", 0]
    assert r.publish("rpx", "m") == 0
    assert c.cmd_raw("GET", "k") == b"$-1\r\n"


def test_reset_resp3_back_to_resp2(sub, r):
    c = sub(resp3=True)
    c.cmd("SUBSCRIBE", "r3")
    assert c.cmd_raw("RESET") == b"+RESET\r\n"
    assert numsub(r, "r3") == 0
    # RESET also returns the connection to RESP2
    assert c.cmd_raw("UNSUBSCRIBE") == arr("unsubscribe", None, 0)


def test_quit_leaves_subscriptions(sub, r):
    c = sub()
    c.send(encode("SUBSCRIBE", "qa"))
    c.read()
    c.send(encode("PSUBSCRIBE", "qp*"))
    c.read()
    assert c.cmd_raw("QUIT") == b"+OK\r\n"
    wait_until(lambda: (numsub(r, "qa"), r.execute_command("PUBSUB", "NUMPAT")),
               lambda v: v == (0, 0), what="QUIT to drop the subscriptions")


def test_close_leaves_subscriptions(sub, r):
    c = sub()
    c.cmd("SUBSCRIBE", "gone")
    assert numsub(r, "gone") == 1
    c.close()
    wait_until(lambda: numsub(r, "gone"), lambda v: v == 0, what="a closed subscriber to be dropped")
    assert r.publish("gone", "m") == 0


# ---- RESP3 ----

def test_resp3_subscribed_client_runs_commands(sub, r):
    c = sub(resp3=True)
    assert c.cmd_raw("SUBSCRIBE", "n3") == push("subscribe", "n3", 1)
    assert c.cmd_raw("SET", "k", "v") == b"+OK\r\n"
    assert c.cmd_raw("GET", "k") == b"$1\r\nv\r\n"
    assert c.cmd_raw("PING") == b"+PONG\r\n"
    assert c.cmd_raw("PING", "x") == b"$1\r\nx\r\n"
    assert c.cmd_raw("PUBSUB", "NUMSUB", "n3") == arr("n3", 1)
    assert r.publish("n3", "hello") == 1
    # the push and the reply of the next command, in either order
    c.send(encode("GET", "k"))
    got = sorted(frames(c, 2))
    assert got == sorted([push("message", "n3", "hello"), b"$1\r\nv\r\n"])
    # a burst of messages interleaved with a pipeline of commands: every
    # reply comes in command order, every push in publish order
    c.send(b"".join(encode("INCR", "ctr") for _ in range(20)))
    for i in range(20):
        r.publish("n3", "m%d" % i)
    replies, pushes = [], []
    while len(replies) < 20 or len(pushes) < 20:
        v = c.read()
        (pushes if isinstance(v, Push) else replies).append(v)
    assert replies == list(range(1, 21))
    assert pushes == [[b"message", b"n3", b"m%d" % i] for i in range(20)]


def test_resp3_publish_to_self_reply_first(sub, r):
    need(r, (7, 2), "7.0 wrote the push before the PUBLISH reply")
    c = sub(resp3=True)
    c.cmd("SUBSCRIBE", "me")
    assert c.cmd_raw("PUBLISH", "me", "hi") == b":1\r\n"
    assert c.raw() == push("message", "me", "hi")


def test_resp3_publish_to_self_inside_multi(sub, r):
    need(r, (7, 2), "7.0 wrote pushes inside the EXEC reply")
    c = sub(resp3=True)
    c.cmd("SUBSCRIBE", "foo")
    for args in (("MULTI",), ("PING", "abc"), ("PUBLISH", "foo", "bar"), ("PUBLISH", "foo", "vaz"), ("PING", "def")):
        c.cmd(*args)
    assert c.cmd("EXEC") == [b"abc", 1, 1, b"def"]
    assert c.raw() == push("message", "foo", "bar")
    assert c.raw() == push("message", "foo", "vaz")


def test_resp3_publish_to_self_inside_script(sub, r):
    need(r, (7, 2), "7.0 wrote the pushes before the EVAL reply")
    c = sub(resp3=True)
    c.cmd("SUBSCRIBE", "foo")
    script = "redis.call('publish','foo','bar') redis.call('publish','foo','vaz') return 'bla'"
    assert c.cmd_raw("EVAL", script, "0") == b"$3\r\nbla\r\n"
    assert frames(c, 2) == [push("message", "foo", "bar"), push("message", "foo", "vaz")]


# ---- messages ----

@pytest.mark.parametrize("resp3", [False, True])
def test_message_frames(sub, r, resp3):
    f = push if resp3 else arr
    c = sub(resp3)
    c.cmd("SUBSCRIBE", "news")
    c.cmd("PSUBSCRIBE", "ne*")
    c.cmd("SSUBSCRIBE", "shard")
    assert r.publish("news", b"bin\x00\r\nary") == 2
    assert frames(c, 2) == [f("message", "news", b"bin\x00\r\nary"), f("pmessage", "ne*", "news", b"bin\x00\r\nary")]
    assert r.execute_command("SPUBLISH", "shard", "s") == 1
    assert c.raw() == f("smessage", "shard", "s")
    # SPUBLISH reaches shard subscribers only, PUBLISH channel subscribers only
    assert r.execute_command("SPUBLISH", "news", "x") == 0
    assert r.publish("shard", "x") == 0
    assert r.publish("", "empty") == 0
    assert r.publish("news", "") == 2
    assert frames(c, 2) == [f("message", "news", ""), f("pmessage", "ne*", "news", "")]


def test_channel_and_two_patterns_get_three_messages(sub, r):
    c = sub()
    c.cmd("SUBSCRIBE", "a.b")
    c.cmd("PSUBSCRIBE", "a.*")
    c.cmd("PSUBSCRIBE", "*.b")
    assert r.publish("a.b", "m") == 3
    got = [c.read() for _ in range(3)]
    assert got[0] == [b"message", b"a.b", b"m"]
    assert sorted(got[1:]) == [[b"pmessage", b"*.b", b"a.b", b"m"], [b"pmessage", b"a.*", b"a.b", b"m"]]
    # the same pattern twice on one client counts once
    c.cmd("PSUBSCRIBE", "a.*")
    assert r.publish("a.b", "n") == 3
    frames(c, 3)
    # and the count adds up over clients
    d = sub()
    d.cmd("PSUBSCRIBE", "a.*")
    assert r.publish("a.b", "o") == 4
    assert r.execute_command("PUBSUB", "NUMPAT") == 2


def test_publish_order_one_connection(sub, r):
    c = sub()
    c.cmd("SUBSCRIBE", "ord")
    p = sub()
    p.send(b"".join(encode("PUBLISH", "ord", str(i)) for i in range(500)))
    assert [p.read() for _ in range(500)] == [1] * 500
    assert [c.read()[2] for _ in range(500)] == [str(i).encode() for i in range(500)]


def test_large_message(sub, r):
    c = sub()
    c.cmd("SUBSCRIBE", "big")
    payload = bytes(range(256)) * 4096  # 1 MiB
    assert r.publish("big", payload) == 1
    assert c.read() == [b"message", b"big", payload]


def test_many_channels_one_call(sub, r):
    c = sub()
    chans = ["m%d" % i for i in range(300)]
    c.send(encode("SUBSCRIBE", *chans))
    assert [c.read()[2] for _ in chans] == list(range(1, 301))
    assert len(r.execute_command("PUBSUB", "CHANNELS", "m*")) == 300
    assert r.publish("m299", "x") == 1
    assert c.read() == [b"message", b"m299", b"x"]


def test_empty_channel_name(sub, r):
    c = sub()
    assert c.cmd_raw("SUBSCRIBE", "") == arr("subscribe", "", 1)
    assert r.execute_command("PUBSUB", "NUMSUB", "") == [b"", 1]
    assert r.execute_command("PUBSUB", "CHANNELS") == [b""]
    assert r.publish("", "x") == 1
    assert c.raw() == arr("message", "", "x")
    # the empty pattern matches the empty channel only
    assert c.cmd_raw("PSUBSCRIBE", "") == arr("psubscribe", "", 2)
    assert r.publish("", "y") == 2
    assert frames(c, 2) == [arr("message", "", "y"), arr("pmessage", "", "", "y")]
    assert r.publish("a", "z") == 0
    assert c.cmd_raw("SSUBSCRIBE", "") == arr("ssubscribe", "", 1)
    assert r.execute_command("PUBSUB", "SHARDCHANNELS") == [b""]
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "") == [b"", 1]
    assert r.execute_command("SPUBLISH", "", "s") == 1
    assert c.raw() == arr("smessage", "", "s")
    assert c.cmd_raw("UNSUBSCRIBE", "") == arr("unsubscribe", "", 1)
    assert r.publish("", "w") == 1


# ---- glob patterns ----

PATTERNS = [
    "*", "**", "?", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[!e]llo", "h[a-b]llo", "h[z-a]llo",
    "h\\*llo", "h\\?llo", "h\\[llo", "h\\ello", "h[", "h[a", "h[a-", "[", "\\", "h\\", "*\\", "[]]", "[]a]",
    "[\\]]", "[a\\-z]", "[-a]", "[a-]", "*?*", "a*b*c", "[[]", "[*]", "[?]", "*[", "h[a-z", "[^]", "[^a-",
    "\\a", "h[x-]llo", "[\\", "?*?", "*llo", "h*", "*e*", "[a-z][a-z]", "h[^a-f]llo", "h[\\^]llo", "x*y*z*",
    "*a*a*a*a*a*a*a*b", "h??llo", "h\x00*", "[\x00-a]*",
]
CHANNELS = [
    "hello", "hallo", "hbllo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "h[llo", "h!llo", "h-llo", "h^llo",
    "h[", "h", "", "[", "]", "\\", "h\\", "x\\", "a", "-", "z", "abc", "aXbYc", "*", "?", "^", "!", "ab",
    "xyz", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", "aaaaab", "hello world", "h\x00llo", "h\u00e9llo",
]
# (pattern, channel) pairs whose outcome is fixed here, checked even
# without a reference server.
KNOWN = {
    ("h?llo", "hello"): True, ("h?llo", "hllo"): False, ("h[ae]llo", "hallo"): True, ("h[ae]llo", "hbllo"): False,
    ("h[^e]llo", "hallo"): True, ("h[^e]llo", "hello"): False, ("h[!e]llo", "h!llo"): True,
    ("h[!e]llo", "hallo"): False, ("h[z-a]llo", "hello"): True, ("h\\*llo", "h*llo"): True,
    ("h\\*llo", "hello"): False, ("h\\?llo", "h?llo"): True, ("h\\?llo", "hello"): False, ("*", ""): False,
    ("?", ""): False, ("h[a-b]llo", "hbllo"): True, ("h[a-b]llo", "hello"): False, ("a*b*c", "aXbYc"): True,
    ("*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac"): False,
    ("*a*a*a*a*a*a*a*b", "aaaaab"): False, ("[a-z][a-z]", "ab"): True, ("h?llo", "h\x00llo"): True,
    ("h\x00*", "h\x00llo"): True, ("h?llo", "h\u00e9llo"): False, ("h??llo", "h\u00e9llo"): True,
}


def glob_matches(port, resp3=False):
    """{(pattern, channel): matched} on the server at port, as seen by
    PUBLISH counts and the pmessage frames of one pattern subscriber."""
    s = RespConn("127.0.0.1", port)
    p = RespConn("127.0.0.1", port)
    try:
        if resp3:
            s.cmd("HELLO", "3")
        s.send(encode("PSUBSCRIBE", *PATTERNS))
        for _ in PATTERNS:
            s.read()
        out = {}
        for ch in CHANNELS:
            n = p.cmd("PUBLISH", ch, "x")
            hit = set()
            for _ in range(n):
                m = s.read()
                assert m[0] == b"pmessage" and m[2] == ch.encode(), m
                hit.add(m[1].decode())
            assert len(hit) == n
            for pat in PATTERNS:
                out[(pat, ch)] = pat in hit
        return out
    finally:
        s.close()
        p.close()


def test_glob_patterns(server, r):
    got = glob_matches(server.port)
    for key, want in KNOWN.items():
        assert got[key] == want, key
    with real_redis() as port:
        if port is None:
            pytest.skip("no redis-server to compare with")
        ref = glob_matches(port)
    diff = {k: (got[k], ref[k]) for k in ref if got[k] != ref[k]}
    assert not diff, "(pattern, channel): (server, redis-server) %r" % diff


def test_glob_pubsub_channels(server, r, sub):
    chans = ["ch.one", "ch.two", "ch*", "ch?x", "other", "[x]"]
    c = sub()
    c.send(encode("SUBSCRIBE", *chans))
    frames(c, len(chans))
    for pat, want in (("ch.*", {"ch.one", "ch.two"}), ("ch\\*", {"ch*"}), ("ch?x", {"ch?x"}), ("*", set(chans)),
                      ("\\[x\\]", {"[x]"}), ("[[]x]", {"[x]"}), ("ch.[^o]*", {"ch.two"}), ("nomatch*", set())):
        got = {x.decode() for x in r.execute_command("PUBSUB", "CHANNELS", pat)}
        assert got == want, pat


# ---- PUBSUB ----

def test_pubsub_channels_numsub_numpat(r, sub):
    assert r.execute_command("PUBSUB", "CHANNELS") == []
    assert r.execute_command("PUBSUB", "NUMPAT") == 0
    assert r.execute_command("PUBSUB", "NUMSUB") == []
    a, b = sub(), sub(resp3=True)
    a.send(encode("SUBSCRIBE", "x1", "x2"))
    frames(a, 2)
    b.send(encode("SUBSCRIBE", "x1"))
    b.read()
    a.send(encode("PSUBSCRIBE", "x*", "y*"))
    frames(a, 2)
    b.send(encode("PSUBSCRIBE", "x*"))
    b.read()
    a.send(encode("SSUBSCRIBE", "sx"))
    a.read()
    assert sorted(r.execute_command("PUBSUB", "CHANNELS")) == [b"x1", b"x2"]
    assert r.execute_command("PUBSUB", "CHANNELS", "*2") == [b"x2"]
    assert r.execute_command("PUBSUB", "NUMSUB", "x1", "x2", "nope", "x1") == [b"x1", 2, b"x2", 1, b"nope", 0,
                                                                                b"x1", 2]
    # NUMPAT counts distinct patterns, not subscriptions
    assert r.execute_command("PUBSUB", "NUMPAT") == 2
    # shard channels are separate
    assert r.execute_command("PUBSUB", "SHARDCHANNELS") == [b"sx"]
    assert r.execute_command("PUBSUB", "SHARDCHANNELS", "s?") == [b"sx"]
    assert r.execute_command("PUBSUB", "SHARDCHANNELS", "x*") == []
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "sx", "x1") == [b"sx", 1, b"x1", 0]
    assert r.execute_command("PUBSUB", "SHARDNUMSUB") == []
    b.cmd("UNSUBSCRIBE", "x1")
    assert r.execute_command("PUBSUB", "NUMSUB", "x1") == [b"x1", 1]
    a.send(encode("UNSUBSCRIBE"))
    frames(a, 2)
    assert r.execute_command("PUBSUB", "CHANNELS") == []
    a.cmd("PUNSUBSCRIBE", "y*")
    assert r.execute_command("PUBSUB", "NUMPAT") == 1


def test_pubsub_resp3_shapes(sub):
    c = sub(resp3=True)
    c.send(encode("SUBSCRIBE", "z1"))
    c.read()
    assert c.cmd_raw("PUBSUB", "NUMSUB", "z1", "z2") == arr("z1", 1, "z2", 0)
    assert c.cmd_raw("PUBSUB", "SHARDNUMSUB", "z1") == arr("z1", 0)
    assert c.cmd_raw("PUBSUB", "CHANNELS", "z*") == arr("z1")
    assert c.cmd_raw("PUBSUB", "NUMPAT") == b":0\r\n"


def test_pubsub_errors(conn):
    c = conn
    assert c.cmd_raw("PUBSUB") == b"-ERR wrong number of arguments for 'pubsub' command\r\n"
    assert c.cmd_raw("PUBSUB", "FOO") == b"-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n"
    assert c.cmd_raw("PUBSUB", "NUMPAT", "x") == b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"
    assert c.cmd_raw("PUBSUB", "HELP", "x") == b"-ERR wrong number of arguments for 'pubsub|help' command\r\n"
    for sc in ("CHANNELS", "SHARDCHANNELS"):
        assert c.cmd_raw("PUBSUB", sc, "a", "b") == \
            b"-ERR unknown subcommand or wrong number of arguments for '%s'. Try PUBSUB HELP.\r\n" % sc.encode()
    # subcommand names are case-insensitive
    assert c.cmd_raw("pubsub", "numpat") == b":0\r\n"
    assert c.cmd_raw("PUBSUB", "channels") == b"*0\r\n"


def test_pubsub_help(conn):
    got = conn.cmd("PUBSUB", "HELP")
    assert got == [
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
    ]
    assert all(isinstance(x, Simple) for x in got)


def test_ssubscribe_several_slots(sub, r):
    # Outside cluster mode channels of different slots may share one call.
    c = sub()
    c.send(encode("SSUBSCRIBE", "a", "b", "{t}c"))
    assert frames(c, 3) == [arr("ssubscribe", "a", 1), arr("ssubscribe", "b", 2), arr("ssubscribe", "{t}c", 3)]
    assert r.execute_command("SPUBLISH", "b", "m") == 1
    assert c.raw() == arr("smessage", "b", "m")


# ---- transactions, scripts ----

def test_publish_in_multi_and_script(sub, r):
    c = sub()
    c.cmd("SUBSCRIBE", "tx")
    c.cmd("SSUBSCRIBE", "stx")
    p = sub()
    for args in (("MULTI",), ("PUBLISH", "tx", "one"), ("SET", "k", "v"), ("PUBLISH", "tx", "two"),
                 ("SPUBLISH", "stx", "three")):
        p.cmd(*args)
    assert p.cmd("EXEC") == [1, "OK", 1, 1]
    assert [c.read() for _ in range(3)] == [[b"message", b"tx", b"one"], [b"message", b"tx", b"two"],
                                            [b"smessage", b"stx", b"three"]]
    assert p.cmd("EVAL", "return {redis.call('publish', KEYS[1], ARGV[1]), redis.call('publish', 'none', 'x')}",
                 "1", "tx", "fromlua") == [1, 0]
    assert c.read() == [b"message", b"tx", b"fromlua"]
    assert p.cmd("EVAL", "return redis.call('spublish', KEYS[1], ARGV[1])", "1", "stx", "slua") == 1
    assert c.read() == [b"smessage", b"stx", b"slua"]
    # a discarded transaction publishes nothing
    p.cmd("MULTI")
    p.cmd("PUBLISH", "tx", "never")
    p.cmd("DISCARD")
    assert r.publish("tx", "after") == 1
    assert c.read() == [b"message", b"tx", b"after"]


def test_subscribe_inside_multi(sub, r):
    c = sub()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SUBSCRIBE", "inmulti") == "QUEUED"
    assert c.cmd_raw("EXEC") == b"*1\r\n" + arr("subscribe", "inmulti", 1)
    assert numsub(r, "inmulti") == 1
    # the client is in subscribed mode now
    assert c.cmd_raw("GET", "k").startswith(b"-ERR Can't execute 'get'")
    assert r.publish("inmulti", "m") == 1
    assert c.raw() == arr("message", "inmulti", "m")
    d = sub()
    d.cmd("MULTI")
    d.cmd("PSUBSCRIBE", "pm*")
    assert d.cmd_raw("EXEC") == b"*1\r\n" + arr("psubscribe", "pm*", 1)
    # SSUBSCRIBE has no such leave in a transaction
    e = sub()
    e.cmd("MULTI")
    e.cmd("SSUBSCRIBE", "sm")
    assert e.cmd_raw("EXEC") == b"*1\r\n-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n"
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "sm") == [b"sm", 0]
    assert e.cmd_raw("GET", "k") == b"$-1\r\n"


def test_subscribe_from_script_refused(conn):
    for cmd in ("subscribe", "psubscribe", "ssubscribe"):
        rep = conn.cmd("EVAL", "return redis.call('%s', 'x')" % cmd, "0")
        assert isinstance(rep, Error) and "This Redis command is not allowed from script" in rep, rep


# ---- CLIENT LIST, INFO ----

def client_line(r, name):
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        if fields.get("name") == name:
            return fields
    return None


@pytest.mark.parametrize("resp3", [False, True])
def test_client_list_fields(sub, r, resp3):
    c = sub(resp3)
    c.cmd("CLIENT", "SETNAME", "pslist")
    f = client_line(r, "pslist")
    assert (f["sub"], f["psub"], f["ssub"]) == ("0", "0", "0") and "P" not in f["flags"]
    c.send(encode("SUBSCRIBE", "a", "b"))
    frames(c, 2)
    f = client_line(r, "pslist")
    assert (f["sub"], f["psub"], f["ssub"]) == ("2", "0", "0") and "P" in f["flags"]
    c.send(encode("PSUBSCRIBE", "p*"))
    c.read()
    c.send(encode("SSUBSCRIBE", "s1", "s2", "s3"))
    frames(c, 3)
    f = client_line(r, "pslist")
    assert (f["sub"], f["psub"], f["ssub"]) == ("2", "1", "3")
    for args, n in ((("UNSUBSCRIBE",), 2), (("PUNSUBSCRIBE",), 1)):
        c.send(encode(*args))
        frames(c, n)
    f = client_line(r, "pslist")
    assert (f["sub"], f["psub"], f["ssub"]) == ("0", "0", "3") and "P" in f["flags"]
    c.send(encode("SUNSUBSCRIBE"))
    frames(c, 3)
    f = client_line(r, "pslist")
    assert (f["sub"], f["psub"], f["ssub"]) == ("0", "0", "0") and "P" not in f["flags"]


def test_client_type_pubsub(sub, r):
    names = {"ps-chan": (False, "SUBSCRIBE", "c"), "ps-resp3": (True, "SUBSCRIBE", "c"),
             "ps-pat": (False, "PSUBSCRIBE", "c*"), "ps-shard": (False, "SSUBSCRIBE", "s")}
    for name, (resp3, cmd, ch) in names.items():
        c = sub(resp3)
        c.cmd("CLIENT", "SETNAME", name)
        c.cmd(cmd, ch)
    plain = sub()
    plain.cmd("CLIENT", "SETNAME", "ps-plain")

    def listed(kind):
        text = r.execute_command("CLIENT", "LIST", "TYPE", kind).decode()
        return {dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)["name"] for line in text.splitlines()}
    assert listed("pubsub") == set(names)
    assert "ps-plain" in listed("normal") and not listed("normal") & set(names)
    assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == len(names)
    wait_until(lambda: (r.execute_command("PUBSUB", "NUMSUB", "c")[1], r.execute_command("PUBSUB", "NUMPAT"),
                        r.execute_command("PUBSUB", "SHARDNUMSUB", "s")[1]),
               lambda v: v == (0, 0, 0), what="the killed subscribers' subscriptions to go")
    assert plain.cmd("PING") == "PONG"


def test_info_pubsub_fields(sub, r):
    def stats():
        i = r.info("stats")
        return tuple(int(i[k]) for k in ("pubsub_channels", "pubsub_patterns", "pubsubshard_channels"))
    # connections of earlier tests may still be closing
    wait_until(stats, lambda v: v == (0, 0, 0), what="no subscriptions")
    a, b = sub(), sub(resp3=True)
    a.send(encode("SUBSCRIBE", "i1", "i2"))
    frames(a, 2)
    b.send(encode("SUBSCRIBE", "i2", "i3"))
    frames(b, 2)
    a.cmd("PSUBSCRIBE", "i*")
    b.cmd("PSUBSCRIBE", "i*")
    b.cmd("PSUBSCRIBE", "j*")
    b.cmd("SSUBSCRIBE", "s")
    assert stats() == (3, 2, 1)
    a.close()
    wait_until(stats, lambda v: v == (2, 2, 1), what="the closed client's channels to go")


def test_info_pubsub_clients(sub, r):
    need(r, (7, 4), "pubsub_clients came in 7.4")

    def clients():
        return int(r.info("clients")["pubsub_clients"])
    wait_until(clients, lambda v: v == 0, what="no pubsub clients")
    a, b, c = sub(), sub(resp3=True), sub()
    a.cmd("SUBSCRIBE", "x")
    b.cmd("PSUBSCRIBE", "x*")
    c.cmd("SSUBSCRIBE", "x")
    assert clients() == 3
    a.cmd("UNSUBSCRIBE")
    assert clients() == 2
    b.cmd("RESET")
    assert clients() == 1
    c.close()
    wait_until(clients, lambda v: v == 0, what="pubsub_clients to drop")


# ---- the journal (HotKV) ----

def test_publish_in_journal(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    c = srv.conn()
    c.cmd("SUBSCRIBE", "j")
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    assert r.publish("j", "plain") == 1
    assert r.execute_command("SPUBLISH", "sj", "shard") == 0
    assert r.publish("nobody", "x") == 0
    p = r.pipeline(transaction=True)
    p.publish("j", "in-multi")
    p.set("k", "v")
    p.execute()
    r.eval("redis.call('publish', 'j', 'lua') return 1", 0)
    cmds = journal_cmds(r)
    pub = [x for x in cmds if x[0] in (b"PUBLISH", b"SPUBLISH", b"MULTI", b"EXEC", b"SET")]
    assert pub[:7] == [[b"PUBLISH", b"j", b"plain"], [b"SPUBLISH", b"sj", b"shard"], [b"PUBLISH", b"nobody", b"x"],
                       [b"MULTI"], [b"PUBLISH", b"j", b"in-multi"], [b"SET", b"k", b"v"], [b"EXEC"]], pub
    # the script's effect, on its own or wrapped in MULTI/EXEC
    assert [x for x in pub[7:] if x[0] == b"PUBLISH"] == [[b"PUBLISH", b"j", b"lua"]], pub
    c.close()
    r.close()
