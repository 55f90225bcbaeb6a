"""Vector sets under concurrent clients on a server with 4 worker threads:
VADD / VSIM / VREM / VSETATTR / VEMB / DEL from many connections at once.

Consistency checks: no command fails; VCARD ends at adds - removes; a VSIM
never returns an element whose VREM had been answered before the VSIM was
sent, nor a name that was never added; after the storm the set answers
exactly (VSIM TRUTH = brute force) and the graph search still finds the
true neighbours."""
import random
import threading

import numpy as np

from vset_util import brute_topk, check_exact, fp32, load, rand_vectors, recall

DIM = 16


def run_threads(targets):
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))
        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "a client thread hung"
    return errors


def test_concurrent_vadd_vsim_vrem(new_server):
    srv = new_server(threads=4)
    main = srv.client(socket_timeout=60)
    n_init, adders, per_adder, removers, per_remover = 1000, 4, 400, 2, 300
    init = rand_vectors(n_init, DIM, 11)
    init_names = ["i%d" % i for i in range(n_init)]
    assert load(main, "vs", init, init_names, "NOQUANT") == [1] * n_init

    extra = rand_vectors(adders * per_adder, DIM, 12)
    add_names = ["a%d-%d" % (t, j) for t in range(adders) for j in range(per_adder)]
    universe = {n.encode() for n in init_names + add_names}
    to_remove = [init_names[t * per_remover:(t + 1) * per_remover] for t in range(removers)]
    stable = init_names[removers * per_remover:]          # never removed

    lock = threading.Lock()
    removed_done = set()
    stop = threading.Event()
    vsim_count = [0]

    def adder(t):
        def run():
            c = srv.client(socket_timeout=60)
            for j in range(per_adder):
                i = t * per_adder + j
                opts = ["NOQUANT"]
                if j % 3 == 0:
                    opts.append("CAS")
                if j % 5 == 0:
                    opts += ["SETATTR", '{"t":%d,"j":%d}' % (t, j)]
                assert c.execute_command("VADD", "vs", *fp32(extra[i]), add_names[i], *opts) == 1
            c.close()
        return run

    def remover(t):
        def run():
            c = srv.client(socket_timeout=60)
            for n in to_remove[t]:
                assert c.execute_command("VREM", "vs", n) == 1
                with lock:
                    removed_done.add(n.encode())
            c.close()
        return run

    def searcher(seed):
        def run():
            rng = random.Random(seed)
            c = srv.client(socket_timeout=60)
            queries = rand_vectors(50, DIM, 100 + seed)
            k = 0
            while not stop.is_set():
                with lock:
                    gone = set(removed_done)
                if k % 3 == 0:
                    res = c.execute_command("VSIM", "vs", "ELE", rng.choice(stable), "COUNT", "10")
                elif k % 3 == 1:
                    res = c.execute_command("VSIM", "vs", *fp32(queries[k % 50]), "COUNT", "10",
                                            "WITHSCORES", "EF", "50")
                    res = res[0::2]
                else:
                    res = c.execute_command("VSIM", "vs", *fp32(queries[k % 50]), "COUNT", "5",
                                            "FILTER", ".j >= 0", "NOTHREAD")
                assert len(res) <= 10
                assert len(set(res)) == len(res), res
                bad = [x for x in res if x in gone or x not in universe]
                assert not bad, bad
                k += 1
            with lock:
                vsim_count[0] += k
            c.close()
        return run

    def reader():
        c = srv.client(socket_timeout=60)
        rng = random.Random(5)
        while not stop.is_set():
            n = rng.choice(stable)
            assert c.execute_command("VISMEMBER", "vs", n) == 1
            assert len(c.execute_command("VEMB", "vs", n)) == DIM
            card = c.execute_command("VCARD", "vs")
            assert n_init - removers * per_remover <= card <= n_init + adders * per_adder
            for x in c.execute_command("VRANDMEMBER", "vs", "-5"):
                assert x in universe
            assert c.execute_command("VDIM", "vs") == DIM
        c.close()

    writers = [adder(t) for t in range(adders)] + [remover(t) for t in range(removers)]
    readers = [searcher(s) for s in range(4)] + [reader]

    def writers_then_stop():
        errs = run_threads(writers)
        errors.extend(errs)
        stop.set()

    errors = []
    all_errors = run_threads([writers_then_stop] + readers)
    assert not errors and not all_errors, errors + all_errors
    assert vsim_count[0] >= 40, vsim_count

    final_card = n_init + adders * per_adder - removers * per_remover
    assert main.execute_command("VCARD", "vs") == final_card
    gone = {n for part in to_remove for n in part}
    p = main.pipeline(transaction=False)
    for n in init_names + add_names:
        p.execute_command("VISMEMBER", "vs", n)
    member = p.execute()
    for n, m in zip(init_names + add_names, member):
        assert m == (0 if n in gone else 1), n
    for t in range(adders):
        assert main.execute_command("VGETATTR", "vs", "a%d-0" % t) == b'{"t":%d,"j":0}' % t
    info = dict(zip(*[iter(main.execute_command("VINFO", "vs"))] * 2))
    assert info[b"size"] == final_card
    assert info[b"attributes-count"] == adders * len(range(0, per_adder, 5))

    names = [n for n in init_names if n not in gone] + add_names
    vecs = np.concatenate([init[[i for i, n in enumerate(init_names) if n not in gone]], extra])
    queries = rand_vectors(20, DIM, 99)
    rec = []
    for q in queries:
        truth, _ = brute_topk(vecs, names, q, 10)
        got = main.execute_command("VSIM", "vs", *fp32(q), "COUNT", "10", "TRUTH", "WITHSCORES")
        check_exact([(n.decode(), float(s)) for n, s in zip(got[0::2], got[1::2])], vecs, names, q, 10, 2e-6)
        found = [x.decode() for x in main.execute_command("VSIM", "vs", *fp32(q), "COUNT", "10", "EF", "200")]
        rec.append(recall(found, truth))
    assert np.mean(rec) >= 0.95, rec
    main.close()


def test_concurrent_updates_attrs_and_key_deletion(new_server):
    """Updates of the same elements, attribute changes and FILTER searches
    race each other; another client deletes and recreates a second key
    that searchers are using. Only the documented replies may come back."""
    srv = new_server(threads=4)
    main = srv.client(socket_timeout=60)
    base = rand_vectors(200, DIM, 21)
    names = ["e%d" % i for i in range(200)]
    load(main, "u", base, names)
    load(main, "tmp", base[:50], names[:50])
    stop = threading.Event()

    def updater(seed):
        def run():
            rng = np.random.default_rng(seed)
            c = srv.client(socket_timeout=60)
            for _ in range(150):
                i = int(rng.integers(0, 200))
                v = rng.standard_normal(DIM).astype(np.float32)
                assert c.execute_command("VADD", "u", *fp32(v), names[i], "SETATTR", '{"v":%d}' % seed) == 0
                assert c.execute_command("VSETATTR", "u", names[int(rng.integers(0, 200))],
                                         '{"v":%d}' % (seed + 10)) == 1
            c.close()
        return run

    def recreator():
        c = srv.client(socket_timeout=60)
        for k in range(30):
            assert c.execute_command("DEL", "tmp") == 1
            load(c, "tmp", base[:50], names[:50], *(["NOQUANT"] if k % 2 else []))
        c.close()

    def searcher(seed):
        def run():
            c = srv.client(socket_timeout=60)
            q = base[seed]
            while not stop.is_set():
                res = c.execute_command("VSIM", "u", *fp32(q), "COUNT", "10", "FILTER", ".v >= 0",
                                        "WITHATTRIBS")
                for name, attr in zip(res[0::2], res[1::2]):
                    assert name.decode() in names and attr is not None and attr.startswith(b'{"v":')
                res = c.execute_command("VSIM", "tmp", *fp32(q), "COUNT", "5")
                assert len(res) <= 5 and all(x.decode() in names[:50] for x in res)
                card = c.execute_command("VCARD", "tmp")
                assert 0 <= card <= 50
            c.close()
        return run

    writers = [updater(s) for s in (1, 2, 3)] + [recreator]

    def writers_then_stop():
        errs = run_threads(writers)
        stop.set()
        assert not errs, errs

    errors = run_threads([writers_then_stop] + [searcher(s) for s in (0, 1, 2)])
    assert not errors, errors
    assert main.execute_command("VCARD", "u") == 200
    assert main.execute_command("VCARD", "tmp") == 50
    q = base[7]
    got = main.execute_command("VSIM", "u", *fp32(q), "COUNT", "10", "EF", "300")
    truth = main.execute_command("VSIM", "u", *fp32(q), "COUNT", "10", "TRUTH")
    assert recall(got, truth) >= 0.9
    main.close()
