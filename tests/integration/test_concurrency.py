"""Concurrency: many clients at once, each test with an invariant that any
lost update, torn multi-key write or missed key would break.

The server runs with several workers (the session default is 2 threads);
clients are Python threads with redis-py, pipelining in batches so the
whole file stays fast on a small machine.
"""
import binascii
import random
import threading
import time



def run_threads(n, target, *args):
    errors = []

    def wrap(i):
        try:
            target(i, *args)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts), "threads hung"
    if errors:
        raise errors[0]


def crc16_slot(key):
    k = key.encode() if isinstance(key, str) else key
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return binascii.crc_hqx(k, 0) % 16384


def keys_in_distinct_slots(prefix, n):
    keys, slots = [], set()
    i = 0
    while len(keys) < n:
        k = "%s%d" % (prefix, i)
        sl = crc16_slot(k)
        # Slots distinct modulo 16 are in different shards for any
        # power-of-two shard count of 16 or more (shard = slot % S).
        if sl % 16 not in slots:
            keys.append(k)
            slots.add(sl % 16)
        i += 1
    return keys


def test_crc16_slot_helper_matches_server_rules():
    assert crc16_slot("foo") == 12182
    assert crc16_slot("{user1000}.following") == crc16_slot("{user1000}.followers")


def test_incr_from_many_clients_is_exact(server, r):
    clients, per_client, batch = 50, 10000, 1000

    def worker(i):
        c = server.client()
        for _ in range(per_client // batch):
            p = c.pipeline(transaction=False)
            for _ in range(batch):
                p.incr("counter")
            res = p.execute()
            assert all(isinstance(x, int) and x > 0 for x in res)
        c.close()

    t0 = time.time()
    run_threads(clients, worker)
    assert int(r.get("counter")) == clients * per_client
    assert time.time() - t0 < 60


def test_incrby_on_many_keys_sums_exactly(server, r):
    # Different keys on different shards, updated in one pipeline each time:
    # every key ends at its exact total.
    keys = keys_in_distinct_slots("sum:", 16)

    def worker(i):
        c = server.client()
        rnd = random.Random(i)
        for _ in range(20):
            p = c.pipeline(transaction=False)
            for _ in range(200):
                p.incrby(rnd.choice(keys), 3)
            p.execute()
        c.close()

    run_threads(10, worker)
    total = sum(int(r.get(k) or 0) for k in keys)
    assert total == 10 * 20 * 200 * 3


def test_mset_is_never_seen_half_applied(server, r):
    keys = keys_in_distinct_slots("atom:", 10)
    r.mset({k: "0" for k in keys})
    stop = time.time() + 3
    torn = []
    reads = [0]

    def writer(i):
        c = server.client()
        n = 0
        while time.time() < stop:
            p = c.pipeline(transaction=False)
            for _ in range(20):
                n += 1
                p.mset({k: "%d-%d" % (i, n) for k in keys})
            p.execute()
        c.close()

    def reader(i):
        c = server.client()
        while time.time() < stop:
            p = c.pipeline(transaction=False)
            for _ in range(20):
                p.mget(keys)
            for vals in p.execute():
                reads[0] += 1
                if len(set(vals)) != 1:
                    torn.append(vals)
        c.close()

    def both(i):
        (writer if i < 4 else reader)(i)

    run_threads(8, both)
    assert not torn, torn[:3]
    assert reads[0] > 100
    assert len(set(r.mget(keys))) == 1


def test_del_and_set_race_leaves_consistent_keyspace(server, r):
    # SET and DEL of the same keys from many clients: every key ends either
    # absent or holding a value some client wrote, and DBSIZE agrees with
    # what EXISTS sees.
    keys = ["race:%d" % i for i in range(200)]

    def worker(i):
        c = server.client()
        rnd = random.Random(i)
        for _ in range(10):
            p = c.pipeline(transaction=False)
            for _ in range(200):
                k = rnd.choice(keys)
                if rnd.random() < 0.5:
                    p.set(k, "v%d" % i)
                else:
                    p.delete(k)
            p.execute()
        c.close()

    run_threads(8, worker)
    present = 0
    for k in keys:
        v = r.get(k)
        if v is not None:
            present += 1
            assert v.startswith(b"v")
    assert r.dbsize() == present


def test_scan_under_concurrent_writes_returns_every_stable_key(server, r):
    stable = ["stable:%d" % i for i in range(3000)]
    for i in range(0, len(stable), 500):
        r.mset({k: "1" for k in stable[i:i + 500]})
    stop = threading.Event()

    def churn(i):
        c = server.client()
        rnd = random.Random(i)
        n = 0
        while not stop.is_set():
            p = c.pipeline(transaction=False)
            base = rnd.randrange(1000000)
            # Bursts of inserts then deletes make shard tables grow and shrink.
            for j in range(300):
                p.set("churn:%d:%d" % (i, base + j), "x")
            p.execute()
            p = c.pipeline(transaction=False)
            for j in range(300):
                p.delete("churn:%d:%d" % (i, base + j))
            p.execute()
            n += 1
        c.close()

    ts = [threading.Thread(target=churn, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    try:
        c = server.client()
        for rnd in range(3):
            seen = set()
            cursor = 0
            calls = 0
            while True:
                cursor, batch = c.scan(cursor=cursor, count=20)
                seen.update(batch)
                calls += 1
                if cursor == 0:
                    break
                assert calls < 1000000
            missing = [k for k in stable if k.encode() not in seen]
            assert not missing, "SCAN missed %d stable keys, e.g. %s" % (len(missing), missing[:5])
        # MATCH filters but still guarantees the stable keys.
        seen = set()
        cursor = 0
        while True:
            cursor, batch = c.scan(cursor=cursor, match="stable:1*", count=100)
            seen.update(batch)
            if cursor == 0:
                break
        assert seen == {k.encode() for k in stable if k.startswith("stable:1")}
        c.close()
    finally:
        stop.set()
        for t in ts:
            t.join(30)
