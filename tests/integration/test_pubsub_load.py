"""Pub/sub under load: delivery across worker threads and the pubsub
class of client-output-buffer-limit.

- 40 subscribers on their own connections (spread over the workers of a
  4-thread server) and 4 publishers publishing at once: every subscriber
  gets every message exactly once, and the messages of each publisher in
  the order it published them (each publisher numbers its messages).
- A subscription counts for every PUBLISH sent after its confirmation,
  whichever worker serves the publisher, and no longer after the
  unsubscribe confirmation.
- Connections subscribing, unsubscribing and closing at random while
  others publish: counts in every confirmation, no message after its
  unsubscribe confirmation, nothing left over at the end.
- A subscriber that never reads, behind a small receive buffer, is cut off
  at the hard limit while the others keep receiving everything; INFO's
  client_output_buffer_limit_disconnections counts it. With only a soft
  limit it is cut off once it has stayed above it for the limit's seconds,
  not before.

Runs against a private 4-thread server (new_server), or the --host server.
"""
import random
import socket
import threading
import time

import pytest

from poll import wait_until
from resp import RespConn, encode


@pytest.fixture
def srv(request, server):
    """A private 4-thread server, or the --host server."""
    if request.config.getoption("--host"):
        return server
    nf = request.getfixturevalue("new_server")
    return nf(threads=4)


def version(r):
    v = r.info("server")["redis_version"]
    return tuple(int(x) for x in str(v).split(".")[:2])


def subscriber(srv, *cmds):
    c = RespConn(srv.host, srv.port, timeout=30)
    for args in cmds:
        c.send(encode(*args))
        for _ in args[1:]:
            c.read()
    return c


def test_cross_thread_delivery_and_order(srv):
    r = srv.client()
    nsubs, npubs, per_pub = 40, 4, 250
    subs = []
    for i in range(nsubs):
        # half on the channel, half on a pattern that matches it
        subs.append(subscriber(srv, ("SUBSCRIBE", "load") if i % 2 == 0 else ("PSUBSCRIBE", "lo*")))
    wait_until(lambda: (r.execute_command("PUBSUB", "NUMSUB", "load")[1], r.execute_command("PUBSUB", "NUMPAT")),
               lambda v: v == (nsubs // 2, 1), what="all subscriptions")
    received = [[] for _ in range(nsubs)]
    errors = []

    def read_all(i):
        try:
            for _ in range(npubs * per_pub):
                m = subs[i].read()
                received[i].append(m[-1])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("subscriber %d after %d messages: %r" % (i, len(received[i]), e))

    counts = [[] for _ in range(npubs)]

    def publish(p):
        c = RespConn(srv.host, srv.port, timeout=30)
        try:
            for start in range(0, per_pub, 50):
                c.send(b"".join(encode("PUBLISH", "load", "p%d:%d" % (p, n)) for n in range(start, start + 50)))
                counts[p].extend(c.read() for _ in range(50))
        except Exception as e:  # noqa: BLE001
            errors.append("publisher %d: %r" % (p, e))
        finally:
            c.close()

    readers = [threading.Thread(target=read_all, args=(i,)) for i in range(nsubs)]
    pubs = [threading.Thread(target=publish, args=(p,)) for p in range(npubs)]
    for t in readers + pubs:
        t.start()
    for t in pubs + readers:
        t.join(120)
    for c in subs:
        c.close()
    assert not errors, errors[:5]
    assert all(counts[p] == [nsubs] * per_pub for p in range(npubs)), [set(x) for x in counts]
    for i, got in enumerate(received):
        assert len(got) == npubs * per_pub, (i, len(got))
        for p in range(npubs):
            mine = [int(m.split(b":")[1]) for m in got if m.startswith(b"p%d:" % p)]
            assert mine == list(range(per_pub)), "subscriber %d, publisher %d: %r" % (i, p, mine[:20])
    r.close()


def slow_subscriber(srv, channel, name, resp3=False):
    """A subscriber whose socket takes in little and which never reads."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect((srv.host, srv.port))
    c = RespConn.__new__(RespConn)
    c.sock, c.buf = s, b""
    if resp3:
        c.cmd("HELLO", "3")
    assert c.cmd("CLIENT", "SETNAME", name) == "OK"
    c.cmd("SUBSCRIBE", channel)
    return c


def client_names(r):
    return {dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv).get("name")
            for line in r.execute_command("CLIENT", "LIST").decode().splitlines()}


def obl_disconnections(r):
    v = r.info("stats").get("client_output_buffer_limit_disconnections")
    if v is None and version(r) < (7, 2):
        return None  # Redis 7.0 does not count them
    assert v is not None, "INFO stats has no client_output_buffer_limit_disconnections"
    return int(v)


@pytest.fixture
def obuf_limit(srv):
    r = srv.client()
    old = r.config_get("client-output-buffer-limit")["client-output-buffer-limit"]

    def set_limit(v):
        assert r.config_set("client-output-buffer-limit", v)
    yield r, set_limit
    r.config_set("client-output-buffer-limit", old)
    r.close()


def client_field(r, name, field):
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        if f.get("name") == name:
            return f[field]
    return None


# The kernel takes in a good deal of what is written to a loopback socket
# whatever its receive buffer (a megabyte and more), so the tests publish
# until the server's own buffer for the slow client passes the limit,
# never more than MAX_FLOOD bytes.
MAX_FLOOD = 64 << 20


@pytest.mark.parametrize("resp3", [False, True])
def test_slow_subscriber_hard_limit(srv, obuf_limit, resp3):
    # a RESP3 subscriber is a pubsub client for the limits too
    r, set_limit = obuf_limit
    set_limit("pubsub 1mb 256kb 1")
    before = obl_disconnections(r)
    slow = slow_subscriber(srv, "flood", "slowsub", resp3)
    fast = [subscriber(srv, ("SUBSCRIBE", "flood")) for _ in range(3)]
    payload = b"x" * 65536
    got = [[] for _ in fast]
    errors = []

    def drain(i):
        try:
            while True:
                m = fast[i].read()
                if m[2] == b"end":
                    return
                assert m[:2] == [b"message", b"flood"] and m[2].endswith(payload), (i, m[:2])
                got[i].append(int(m[2].split(b":")[0]))
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e)[:300])

    readers = [threading.Thread(target=drain, args=(i,)) for i in range(len(fast))]
    for t in readers:
        t.start()
    counts = []

    def publish(n):
        # The readers may lag by 4 messages at most (256 KiB, far below the
        # limits): only the slow one ever gets near them.
        deadline = time.monotonic() + 30
        while min(len(g) for g in got) < n - 4 and not errors:
            assert time.monotonic() < deadline, "the readers stopped at %r" % [len(g) for g in got]
            time.sleep(0.001)
        counts.append(r.publish("flood", b"%d:" % n + payload))

    n = 0
    while n * len(payload) < MAX_FLOOD and (not counts or counts[-1] == 4 or len(counts) < 8) and not errors:
        publish(n)
        n += 1
    for k in range(8):
        publish(n)
        n += 1
    r.publish("flood", "end")
    for t in readers:
        t.join(60)
    assert not errors, errors
    assert got == [list(range(n))] * len(fast)
    # the slow one was counted while it lasted, then dropped for good
    assert counts[0] == 4 and counts[-1] == 3, counts
    assert counts == sorted(counts, reverse=True)
    wait_until(lambda: "slowsub" in client_names(r), lambda v: not v, what="the slow subscriber to be cut off")
    assert r.execute_command("PUBSUB", "NUMSUB", "flood") == [b"flood", 3]
    if before is not None:
        wait_until(lambda: obl_disconnections(r), lambda v: v == before + 1, what="the disconnection to be counted")
    # its socket ends after what was already sent
    slow.sock.settimeout(10)
    total = 0
    while True:
        chunk = slow.sock.recv(1 << 16)
        if not chunk:
            break
        total += len(chunk)
    assert total < n * len(payload)
    slow.close()
    for c in fast:
        c.close()


def test_slow_subscriber_soft_limit(srv, obuf_limit):
    r, set_limit = obuf_limit
    set_limit("pubsub 0 256kb 1")
    before = obl_disconnections(r)
    slow = slow_subscriber(srv, "soft", "softsub")
    fast = subscriber(srv, ("SUBSCRIBE", "soft"))
    # publish until the server holds more than the soft limit for the slow
    # one (no hard limit); t0 is taken before the publish that crossed it
    sent = 0
    while True:
        t0 = time.monotonic()
        assert r.publish("soft", b"y" * 65536) >= 1
        assert len(fast.read()[2]) == 65536
        sent += 65536
        omem = client_field(r, "softsub", "omem")
        assert omem is not None, "cut off before passing the soft limit (%d bytes published)" % sent
        if int(omem) > 256 * 1024:
            break
        assert sent < MAX_FLOOD, "omem of a client that never reads stays %s" % omem
    gone = None
    deadline = t0 + 20
    n = 0
    while time.monotonic() < deadline:
        # a stream of big messages keeps the buffer above the soft limit
        # once the kernel's send buffer (which TCP autotuning may grow to
        # megabytes) has filled, and gives the server a write to check the
        # limit on
        msg = b"tick%d:" % n + b"z" * 65536
        r.publish("soft", msg)
        assert fast.read()[2] == msg
        n += 1
        if "softsub" not in client_names(r):
            gone = time.monotonic()
            break
        time.sleep(0.05)
    assert gone is not None, "a subscriber above the soft limit for 20 s was not cut off"
    assert gone - t0 >= 1.0, "cut off after %.2f s, before the soft limit's 1 s" % (gone - t0)
    if before is not None:
        wait_until(lambda: obl_disconnections(r), lambda v: v == before + 1, what="the disconnection to be counted")
    slow.close()
    fast.close()


def test_below_soft_limit_stays(srv, obuf_limit):
    r, set_limit = obuf_limit
    set_limit("pubsub 1mb 256kb 1")
    slow = slow_subscriber(srv, "calm", "calmsub")
    for n in range(20):  # 20 KiB in all, far below the limits
        r.publish("calm", b"z" * 1024)
    # stays past the soft limit's seconds with more small writes
    end = time.monotonic() + 2.5
    while time.monotonic() < end:
        r.publish("calm", "t")
        time.sleep(0.1)
    assert "calmsub" in client_names(r)
    slow.sock.settimeout(10)
    first = slow.read()
    assert first == [b"message", b"calm", b"z" * 1024]
    slow.close()


def test_subscription_churn(srv):
    """Connections subscribe, unsubscribe and vanish at random while
    publishers publish to the same channels from other connections. Each
    confirmation's count matches the connection's own model of its
    subscriptions; every message a connection reads is for a channel,
    pattern or shard channel it holds at that moment (Redis writes a
    message before an UNSUBSCRIBE confirmation or not at all); at the end
    the server holds no subscription."""
    r = srv.client()
    seconds, nchan = 2.0, 6
    errors = []
    seen = [0] * 8  # messages each churning connection read
    stop = time.monotonic() + seconds

    def churn(i):
        rnd = random.Random(i)
        c = None
        model = None
        try:
            while time.monotonic() < stop and not errors:
                if c is None or rnd.random() < 0.02:
                    if c is not None:
                        c.close()  # abruptly, subscriptions and all
                    c = RespConn(srv.host, srv.port, timeout=30)
                    if i % 2:
                        c.cmd("HELLO", "3")
                    model = {"ch": set(), "pat": set(), "sh": set()}
                k = rnd.randrange(nchan)
                op = rnd.choice(["SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE", "SSUBSCRIBE",
                                 "SUNSUBSCRIBE", "UNSUBSCRIBE-ALL"])
                if op == "SUBSCRIBE":
                    args, kind, name, key = ("SUBSCRIBE", "c%d" % k), "subscribe", "c%d" % k, "ch"
                elif op == "UNSUBSCRIBE":
                    args, kind, name, key = ("UNSUBSCRIBE", "c%d" % k), "unsubscribe", "c%d" % k, "ch"
                elif op == "PSUBSCRIBE":
                    args, kind, name, key = ("PSUBSCRIBE", "c%d*" % k), "psubscribe", "c%d*" % k, "pat"
                elif op == "PUNSUBSCRIBE":
                    args, kind, name, key = ("PUNSUBSCRIBE", "c%d*" % k), "punsubscribe", "c%d*" % k, "pat"
                elif op == "SSUBSCRIBE":
                    args, kind, name, key = ("SSUBSCRIBE", "s%d" % k), "ssubscribe", "s%d" % k, "sh"
                elif op == "SUNSUBSCRIBE":
                    args, kind, name, key = ("SUNSUBSCRIBE", "s%d" % k), "sunsubscribe", "s%d" % k, "sh"
                else:
                    if not model["ch"]:
                        continue
                    args, kind, name, key = ("UNSUBSCRIBE",), "unsubscribe", None, "ch"
                c.send(encode(*args))
                want = len(model["ch"]) if name is None else 1
                while want:
                    f = c.read()
                    assert isinstance(f, list) and f, f
                    what = f[0].decode()
                    if what == "message":
                        assert f[1].decode() in model["ch"], ("message after unsubscribe", i, f[:2], model)
                        seen[i] += 1
                        continue
                    if what == "pmessage":
                        assert f[1].decode() in model["pat"], ("pmessage after punsubscribe", i, f[:3], model)
                        seen[i] += 1
                        continue
                    if what == "smessage":
                        assert f[1].decode() in model["sh"], ("smessage after sunsubscribe", i, f[:2], model)
                        seen[i] += 1
                        continue
                    assert what == kind, (i, args, f)
                    ch = f[1].decode()
                    if kind.endswith("unsubscribe"):
                        model[key].discard(ch)
                    else:
                        model[key].add(ch)
                    count = len(model["sh"]) if key == "sh" else len(model["ch"]) + len(model["pat"])
                    assert f[2] == count, (i, args, f, model)
                    want -= 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e)[:400])
        finally:
            if c is not None:
                c.close()

    def publisher(i):
        rnd = random.Random(1000 + i)
        p = RespConn(srv.host, srv.port, timeout=30)
        try:
            while time.monotonic() < stop and not errors:
                batch = [("PUBLISH" if rnd.random() < 0.7 else "SPUBLISH",
                          ("c%d" if rnd.random() < 0.7 else "s%d") % rnd.randrange(nchan), "m") for _ in range(20)]
                p.send(b"".join(encode(*b) for b in batch))
                for _ in batch:
                    n = p.read()
                    assert isinstance(n, int) and n >= 0, n
        except Exception as e:  # noqa: BLE001
            errors.append("publisher: " + repr(e)[:300])
        finally:
            p.close()

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(8)]
    threads += [threading.Thread(target=publisher, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]
    assert sum(seen) > 100, seen

    def state():
        return (r.execute_command("PUBSUB", "CHANNELS"), r.execute_command("PUBSUB", "NUMPAT"),
                r.execute_command("PUBSUB", "SHARDCHANNELS"),
                r.execute_command("PUBSUB", "NUMSUB", *["c%d" % k for k in range(nchan)]))
    clean = ([], 0, [], [x for k in range(nchan) for x in (b"c%d" % k, 0)])
    wait_until(state, lambda v: v == clean, what="every subscription to be gone")
    stats = r.info("stats")
    assert (stats["pubsub_channels"], stats["pubsub_patterns"], stats["pubsubshard_channels"]) == (0, 0, 0)
    if "pubsub_clients" in r.info("clients"):
        wait_until(lambda: r.info("clients")["pubsub_clients"], lambda v: v == 0, what="pubsub_clients 0")
    r.close()


@pytest.mark.parametrize("kind", ["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"])
def test_subscription_visible_once_confirmed(srv, kind):
    """Once a connection has its subscribe confirmation, a PUBLISH sent
    after it from any other connection (whichever worker serves it) counts
    and delivers the message; once it has its unsubscribe confirmation,
    none does. Fresh connection pairs land on every worker in turn."""
    pub = "SPUBLISH" if kind == "SSUBSCRIBE" else "PUBLISH"
    unsub = {"SUBSCRIBE": "UNSUBSCRIBE", "PSUBSCRIBE": "PUNSUBSCRIBE", "SSUBSCRIBE": "SUNSUBSCRIBE"}[kind]
    misses = []
    for i in range(40):
        ch = "vis%d" % i
        target = ch + "*" if kind == "PSUBSCRIBE" else ch
        s = RespConn(srv.host, srv.port, timeout=20)
        p = RespConn(srv.host, srv.port, timeout=20)
        try:
            s.cmd(kind, target)
            n = p.cmd(pub, ch, "m%d" % i)
            if n != 1:
                misses.append((i, "PUBLISH after the confirmation counted %r" % n))
                continue
            got = s.read()
            assert got[-1] == b"m%d" % i, got
            s.cmd(unsub, target)
            n = p.cmd(pub, ch, "late")
            if n != 0:
                misses.append((i, "PUBLISH after the unsubscribe confirmation counted %r" % n))
        finally:
            s.close()
            p.close()
    assert not misses, "%d of 40: %r" % (len(misses), misses[:5])
