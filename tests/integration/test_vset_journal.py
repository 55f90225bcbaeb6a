"""Vector sets through the execution core: every VADD, VREM and VSETATTR
is a write the journal records in order, so a replay rebuilds the same
elements, vectors and attributes (DEBUG DIGEST covers all three), even when
many clients change the same sets at once on several threads; a COPY is an
independent set with the same graph.

Servers are private (new_server) with enable-debug-command yes.
"""
import random
import struct

from resp import Error, parse_commands
from test_exec import debug_server, journal, replay, run_clients

DIM = 8


def blob(vec):
    return struct.pack("<%df" % len(vec), *vec)


def rand_vec(rnd):
    return [rnd.uniform(-1, 1) for _ in range(DIM)]


def vset_op(rnd, keys):
    k = rnd.choice(keys)
    e = "e%d" % rnd.randint(0, 40)
    roll = rnd.random()
    if roll < 0.55:
        args = ["VADD", k, "FP32", blob(rand_vec(rnd)), e]
        if rnd.random() < 0.3:
            args += ["SETATTR", '{"n":%d}' % rnd.randint(0, 9)]
        if rnd.random() < 0.2:
            args.append("CAS")
        return args
    if roll < 0.75:
        return ["VREM", k, e]
    if roll < 0.85:
        return ["VSETATTR", k, e, rnd.choice(['{"n":1}', '', '{"tag":"x"}'])]
    if roll < 0.95:
        return ["VSIM", k, "FP32", blob(rand_vec(rnd)), "COUNT", 5, "WITHSCORES"]
    return rnd.choice([["DEL", k], ["RENAME", k, rnd.choice(keys)], ["VCARD", k]])


def run_load(port, seconds, clients, seed):
    keys = ["v%d" % i for i in range(4)] + ["{t}v%d" % i for i in range(2)]

    def check(op, rep):
        # RENAME of a missing key is the only expected error.
        if isinstance(rep, Error) and not (op[0] == "RENAME" and "no such key" in str(rep)):
            return (op[0], rep)
        return None

    run_clients(port, seconds, clients, seed, lambda rnd: [vset_op(rnd, keys) for _ in range(16)], check)


def test_vset_writes_propagate_their_argv(new_server):
    r = debug_server(new_server).client()
    r.execute_command("DEBUG", "JOURNAL", "START")
    r.execute_command("VADD", "k", "VALUES", 2, 1, 0, "a")
    r.execute_command("VADD", "k", "VALUES", 2, 0, 1, "a", "SETATTR", '{"x":1}')  # update
    r.execute_command("VSIM", "k", "ELE", "a")  # a read: nothing
    r.execute_command("VREM", "k", "missing")  # nothing removed: nothing
    r.execute_command("VSETATTR", "k", "missing", "{}")  # nothing
    r.execute_command("VSETATTR", "k", "a", "")
    r.execute_command("VREM", "k", "a")
    cmds = [c for c in parse_commands(journal(r)) if c[0].upper() != b"SELECT"]
    assert [c[0].upper() for c in cmds] == [b"VADD", b"VADD", b"VSETATTR", b"VREM"]
    assert cmds[1][-2:] == [b"SETATTR", b'{"x":1}']
    assert r.exists("k") == 0


def test_concurrent_vset_writes_replay_to_the_same_sets(new_server):
    """8 clients on a 4-thread server add, update, remove, re-attribute,
    search, rename and delete in 6 sets: the merged journal replayed into a
    fresh server gives the same DEBUG DIGEST (names, stored vectors,
    norms, attributes) and the same VCARDs."""
    src = debug_server(new_server, 4)
    r = src.client()
    r.execute_command("DEBUG", "JOURNAL", "START")
    seed = random.randint(1, 10 ** 6)
    run_load(src.port, 4, 8, seed)
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    assert len(parse_commands(data)) > 500, seed
    keys = sorted(r.keys("*"))
    cards = {k: r.execute_command("VCARD", k) for k in keys}
    dst = debug_server(new_server, 2)
    d = dst.client()
    errors = replay(dst.port, data)
    assert not errors, (seed, errors[:5])
    assert d.execute_command("DEBUG", "DIGEST") == want, seed
    assert sorted(d.keys("*")) == keys
    for k in keys:
        assert d.execute_command("VCARD", k) == cards[k], (seed, k)
        # The replayed graph answers searches over the same members.
        e = r.execute_command("VRANDMEMBER", k)
        assert d.execute_command("VEMB", k, e, "RAW") == r.execute_command("VEMB", k, e, "RAW")
        assert set(d.execute_command("VSIM", k, "ELE", e, "COUNT", 1000, "TRUTH")) == set(
            r.execute_command("VSIM", k, "ELE", e, "COUNT", 1000, "TRUTH"))


def test_copy_is_an_independent_set_with_the_same_graph(new_server):
    r = debug_server(new_server).client()
    rnd = random.Random(3)
    for i in range(300):
        r.execute_command("VADD", "src", "FP32", blob(rand_vec(rnd)), "e%d" % i, "SETATTR", '{"i":%d}' % i)
    assert r.execute_command("COPY", "src", "dst") == 1
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "src") == r.execute_command("DEBUG", "DIGEST-VALUE", "dst")
    for e in ("e0", "e7", "e299"):
        assert r.execute_command("VLINKS", "dst", e) == r.execute_command("VLINKS", "src", e)
        assert r.execute_command("VGETATTR", "dst", e) == r.execute_command("VGETATTR", "src", e)
    assert r.execute_command("VINFO", "dst")[:14] == r.execute_command("VINFO", "src")[:14]
    # Changing one leaves the other alone.
    for i in range(150):
        r.execute_command("VREM", "src", "e%d" % i)
    r.execute_command("VSETATTR", "dst", "e200", '{"i":-1}')
    assert r.execute_command("VCARD", "src") == 150
    assert r.execute_command("VCARD", "dst") == 300
    assert r.execute_command("VGETATTR", "src", "e200") == b'{"i":200}'
    q = blob(rand_vec(rnd))
    got = r.execute_command("VSIM", "dst", "FP32", q, "COUNT", 10, "EF", 300)
    assert got == r.execute_command("VSIM", "dst", "FP32", q, "COUNT", 10, "TRUTH")
    r.execute_command("DEL", "src")
    assert r.execute_command("VCARD", "dst") == 300
