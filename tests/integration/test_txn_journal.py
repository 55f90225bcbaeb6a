"""Transactions, scripts and functions through the journal: what EXEC, EVAL
and FCALL write propagates as one unit (MULTI ... EXEC when there are
several commands, the effects rather than the EVAL or FCALL), FUNCTION
LOAD / DELETE / FLUSH / RESTORE propagate themselves, and a mixed MULTI /
EVAL / EVALSHA / FCALL workload from many clients on several threads
replays into a fresh HotKV and into a real redis-server to the same DEBUG
DIGEST."""
import random
import shutil

import pytest
import redis

from conftest import real_redis
from resp import Error, parse_commands
from test_exec import debug_server, journal, journal_cmds, random_op, replay, run_clients

ZERO_DIGEST = b"0" * 40


@pytest.fixture
def jr(new_server):
    srv = debug_server(new_server, 2)
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def test_exec_propagates_multi_exec(jr):
    p = jr.pipeline(transaction=True)
    p.set("a", 1).incr("a").get("a").lpush("l", "x")
    assert p.execute() == [True, 2, b"2", 1]
    assert journal_cmds(jr) == [[b"MULTI"], [b"SET", b"a", b"1"], [b"INCRBY", b"a", b"1"], [b"LPUSH", b"l", b"x"],
                                [b"EXEC"]]


def test_exec_of_one_write_is_not_wrapped(jr):
    p = jr.pipeline(transaction=True)
    p.get("a").set("a", 1).get("a")
    p.execute()
    assert journal_cmds(jr) == [[b"SET", b"a", b"1"]]


def test_exec_of_reads_propagates_nothing(jr):
    p = jr.pipeline(transaction=True)
    p.get("a").exists("b")
    p.execute()
    assert journal_cmds(jr) == []


def test_exec_propagates_rewritten_forms(jr):
    jr.sadd("s", "a")
    journal(jr)
    p = jr.pipeline(transaction=True)
    p.spop("s").expire("k", 100).incrbyfloat("f", 1.5)
    p.execute()
    cmds = journal_cmds(jr)
    assert cmds[0] == [b"MULTI"] and cmds[-1] == [b"EXEC"]
    assert cmds[1] == [b"SREM", b"s", b"a"] or cmds[1] == [b"DEL", b"s"]
    assert cmds[2][0] == b"SET" and cmds[2][1:3] == [b"f", b"1.5"]


def test_script_propagates_its_effects(jr):
    jr.sadd("s", "m")
    journal(jr)
    body = "redis.call('SET', KEYS[1], 'v'); redis.call('SPOP', KEYS[2]); return redis.call('INCR', KEYS[3])"
    assert jr.eval(body, 3, "k", "s", "n") == 1
    assert journal_cmds(jr) == [[b"MULTI"], [b"SET", b"k", b"v"], [b"SREM", b"s", b"m"], [b"INCR", b"n"], [b"EXEC"]]


def test_script_of_one_write_and_of_none(jr):
    assert jr.eval("return redis.call('SET', KEYS[1], 'x')", 1, "k") == b"OK"
    assert jr.eval("return redis.call('GET', KEYS[1])", 1, "k") == b"x"
    assert journal_cmds(jr) == [[b"SET", b"k", b"x"]]


def test_script_with_repl_none_propagates_nothing(jr):
    body = "redis.set_repl(redis.REPL_NONE); redis.call('SET', KEYS[1], 'x'); return 1"
    assert jr.eval(body, 1, "k") == 1
    assert jr.get("k") == b"x"
    assert journal_cmds(jr) == []


def test_script_reaching_undeclared_keys_propagates_them(jr):
    body = "redis.call('SET', ARGV[1], '1'); redis.call('SET', ARGV[2], '2'); return 1"
    for i in range(3):
        assert jr.eval(body, 0, "u%d" % i, "w%d" % i) == 1
    cmds = journal_cmds(jr)
    for i in range(3):
        assert [b"SET", b"u%d" % i, b"1"] in cmds and [b"SET", b"w%d" % i, b"2"] in cmds
    assert cmds.count([b"MULTI"]) == 3


FUNCTIONS = ("#!lua name=mixlib\n"
             "redis.register_function('mix_declared', function(keys, args)\n"
             "  redis.call('INCR', keys[1]); redis.call('RPUSH', keys[2], args[1])\n"
             "  return redis.call('GET', keys[1])\n"
             "end)\n"
             "redis.register_function('mix_undeclared', function(keys, args)\n"
             "  local v = redis.call('GET', args[1]); redis.call('SET', args[2], (v or ''):sub(1, 16) .. 'y')\n"
             "  return 1\n"
             "end)\n"
             "redis.register_function('mix_effects', function(keys, args)\n"
             "  redis.call('SADD', keys[1], args[1], 'z'); redis.call('SPOP', keys[1])\n"
             "  redis.call('EXPIRE', keys[2], 100); return redis.call('INCRBYFLOAT', keys[3], '0.5')\n"
             "end)\n"
             "redis.register_function{function_name='mix_read', callback=function(keys)\n"
             "  return redis.call('GET', keys[1]) end, flags={'no-writes'}}\n")


def test_function_commands_and_fcall_propagate(jr):
    assert jr.execute_command("FUNCTION", "LOAD", FUNCTIONS) == b"mixlib"
    assert journal_cmds(jr) == [[b"FUNCTION", b"LOAD", FUNCTIONS.encode()]]
    jr.sadd("s", "m")
    journal(jr)
    body = ("#!lua name=three\nredis.register_function('three', function(keys)\n"
            "redis.call('SET', keys[1], 'v'); redis.call('SPOP', keys[2]); return redis.call('INCR', keys[3]) end)")
    assert jr.execute_command("FUNCTION", "LOAD", body) == b"three"
    journal(jr)
    assert jr.execute_command("FCALL", "three", 3, "k", "s", "n") == 1
    assert journal_cmds(jr) == [[b"MULTI"], [b"SET", b"k", b"v"], [b"SREM", b"s", b"m"], [b"INCR", b"n"],
                                [b"EXEC"]]
    assert jr.execute_command("FCALL", "mix_undeclared", 0, "k", "k2") == 1
    assert journal_cmds(jr) == [[b"SET", b"k2", b"vy"]]
    assert jr.execute_command("FCALL_RO", "mix_read", 1, "k") == b"v"
    assert jr.execute_command("FCALL", "mix_read", 1, "nokey") is None
    assert journal_cmds(jr) == []
    payload = jr.execute_command("FUNCTION", "DUMP")
    assert journal_cmds(jr) == []
    assert jr.execute_command("FUNCTION", "DELETE", "three") == b"OK"
    with pytest.raises(redis.ResponseError):
        jr.execute_command("FUNCTION", "DELETE", "three")
    assert journal_cmds(jr) == [[b"FUNCTION", b"DELETE", b"three"]]
    assert jr.execute_command("FUNCTION", "FLUSH", "SYNC") == b"OK"
    assert jr.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
    assert journal_cmds(jr) == [[b"FUNCTION", b"FLUSH", b"SYNC"], [b"FUNCTION", b"RESTORE", payload]]


# ---- replay of a concurrent mixed workload ----------------------------------------

SCRIPTS = [
    # declared keys only
    "redis.call('INCR', KEYS[1]); redis.call('RPUSH', KEYS[2], ARGV[1]); return redis.call('GET', KEYS[1])",
    # undeclared keys, read then written
    "local v = redis.call('GET', ARGV[1]); redis.call('SET', ARGV[2], (v or '') .. 'x'); return 1",
    # effects that must not replay as the script: SPOP, relative TTLs, floats
    "redis.call('SADD', KEYS[1], ARGV[1], 'z'); redis.call('SPOP', KEYS[1]); "
    "redis.call('EXPIRE', KEYS[2], 100); return redis.call('INCRBYFLOAT', KEYS[3], '0.5')",
    # a data-dependent branch on a key it did not declare
    "if redis.call('EXISTS', ARGV[1]) == 1 then redis.call('DEL', ARGV[1]) "
    "else redis.call('HSET', ARGV[1], 'f', ARGV[2]) end; return 1",
]


def fcall_op(rnd, k, k2):
    """A call of one of FUNCTIONS' functions."""
    v = str(rnd.randint(0, 9))
    return rnd.choice([("FCALL", "mix_declared", 2, "n:" + k, "l:" + k2, v),
                       ("FCALL", "mix_undeclared", 0, "s:" + k, "s:" + k2),
                       ("FCALL", "mix_effects", 3, "t:" + k, "s:" + k2, "f:" + k, v),
                       ("FCALL_RO", "mix_read", 1, "s:" + k)])


def mixed_batch(rnd, keys, shas):
    ops = []
    for _ in range(10):
        x = rnd.random()
        k, k2 = rnd.choice(keys), rnd.choice(keys)
        if x < 0.25:
            ops.append(("MULTI",))
            for _ in range(rnd.randint(1, 4)):
                op = random_op(rnd, keys) if rnd.random() < 0.9 else fcall_op(rnd, k, k2)
                if op[0] not in ("SELECT", "SCAN"):
                    ops.append(op)
            ops.append(("EXEC",) if rnd.random() < 0.9 else ("DISCARD",))
        elif x < 0.3:
            ops.append(fcall_op(rnd, k, k2))
        elif x < 0.5:
            i = rnd.randrange(len(SCRIPTS))
            v = str(rnd.randint(0, 9))
            args = [["n:" + k, "l:" + k2, v], ["s:" + k, "s:" + k2], ["t:" + k, "s:" + k2, "f:" + k, v],
                    ["h:" + k, v]][i]
            nkeys = [2, 0, 3, 0][i]
            if rnd.random() < 0.5:
                ops.append(("EVALSHA", shas[i], nkeys, *args))
            else:
                ops.append(("EVAL", SCRIPTS[i], nkeys, *args))
        else:
            op = random_op(rnd, keys)
            if op[0] != "SELECT":
                ops.append(op)
    return ops


def test_mixed_workload_replays_to_the_same_dataset(new_server):
    src = debug_server(new_server, 4)
    r = src.client()
    shas = [r.script_load(s) for s in SCRIPTS]
    assert r.execute_command("FUNCTION", "LOAD", FUNCTIONS) == b"mixlib"
    # A record of a command holding every shard (a transaction or a call
    # that may reach undeclared keys) carries a tag per shard: room for
    # two seconds of them.
    r.execute_command("DEBUG", "JOURNAL", "START", 256 << 20)
    keys = ["k%d" % i for i in range(10)] + ["{t}%d" % i for i in range(4)]
    seed = random.randint(1, 10 ** 6)
    def check(op, reply):
        if op[0].startswith("FCALL") and isinstance(reply, Error):
            return "%r -> %r" % (op, reply)
        return None

    run_clients(src.port, 2, 8, seed, lambda rnd: mixed_batch(rnd, keys, shas), check)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    cmds = parse_commands(data)
    assert len(cmds) > 1000
    assert any(c[0].upper() == b"MULTI" for c in cmds)
    # Scripts and functions propagate their effects, never themselves.
    assert not any(c[0].upper() in (b"EVAL", b"EVALSHA", b"FCALL", b"FCALL_RO") for c in cmds)
    assert want != ZERO_DIGEST
    dst = debug_server(new_server, 2)
    d = dst.client()
    d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    errors = replay(dst.port, data)
    assert not errors, (seed, errors[:5])
    assert d.execute_command("DEBUG", "DIGEST") == want, seed


def test_mixed_workload_replays_into_redis(new_server):
    """Deterministic (so that Redis 7.0's digest formatting agrees), but
    every shape: transactions, scripts and functions with declared and
    undeclared keys, rewritten effects, SELECT inside a transaction. The
    library is loaded after the journal starts: Redis loads it from the
    stream."""
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is needed (scripts/deps.sh test installs it)")
    srv = debug_server(new_server, 2)
    r = srv.client()
    shas = [r.script_load(s) for s in SCRIPTS]
    r.execute_command("DEBUG", "JOURNAL", "START")
    assert r.execute_command("FUNCTION", "LOAD", FUNCTIONS) == b"mixlib"
    rnd = random.Random(11)
    for i in range(200):
        k, k2 = "k%d" % rnd.randint(0, 20), "k%d" % rnd.randint(0, 20)
        p = r.pipeline(transaction=True)
        p.incr("n:" + k).rpush("l:" + k2, i).hset("h:" + k, "f%d" % (i % 7), i).zadd("z:" + k, {"m%d" % i: i / 4})
        p.execute()
        v = str(i % 5)
        r.evalsha(shas[0], 2, "n:" + k, "l:" + k2, v)
        r.evalsha(shas[1], 0, "s:" + k, "s:" + k2)
        r.eval(SCRIPTS[2], 3, "t:" + k, "s:" + k2, "f:" + k, v)
        r.evalsha(shas[3], 0, "hh:" + k, v)
        r.execute_command("FCALL", "mix_declared", 2, "fn:" + k, "fl:" + k2, v)
        r.execute_command("FCALL", "mix_undeclared", 0, "s:" + k2, "fs:" + k)
        r.execute_command("FCALL", "mix_effects", 3, "ft:" + k, "s:" + k2, "ff:" + k, v)
        if i % 10 == 0:
            p = r.pipeline(transaction=True)
            p.execute_command("FCALL", "mix_declared", 2, "fn:" + k2, "fl:" + k, v).incr("n:" + k)
            p.execute()
    c = r.connection_pool.get_connection("x")
    for cmd in (("MULTI",), ("SELECT", 3), ("SET", "in-db3", "v"), ("EXEC",), ("SELECT", 0)):
        c.send_command(*cmd)
        c.read_response()
    r.connection_pool.release(c)
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    with real_redis("--enable-debug-command", "yes") as port:
        errors = replay(port, data, apply=False)
        assert not errors, errors[:5]
        red = redis.Redis(port=port)
        assert red.execute_command("DEBUG", "DIGEST") == want
        red.close()
