"""redis-py through its own API: transactional pipelines, WATCH retries with
r.transaction(), Lock (Lua release/extend/reacquire) across clients, and
register_script (EVALSHA with NOSCRIPT fallback)."""
import hashlib
import threading
import time

import pytest
import redis
from redis.exceptions import LockError, LockNotOwnedError, NoScriptError, ResponseError, WatchError


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


# ---------------------------------------------------------------- pipelines


class TestTransactionPipeline:
    def test_set_incr_get(self, r):
        with r.pipeline(transaction=True) as p:
            p.set("k", "10").incr("k").get("k")
            assert p.execute() == [True, 11, b"11"]

    def test_queued_commands_do_not_run_before_exec(self, r, r2):
        with r.pipeline(transaction=True) as p:
            p.set("k", "v")
            # Buffered client side, then sent as MULTI ... EXEC in one go.
            assert r2.exists("k") == 0
            assert p.execute() == [True]
        assert r2.get("k") == b"v"

    def test_runtime_error_does_not_abort_the_rest(self, r):
        with r.pipeline(transaction=True) as p:
            p.set("s", "abc").incr("s").append("s", "d").get("s")
            with pytest.raises(ResponseError, match="not an integer"):
                p.execute()
        assert r.get("s") == b"abcd"

        with r.pipeline(transaction=True) as p:
            p.set("s", "abc").incr("s").get("s")
            res = p.execute(raise_on_error=False)
        assert res[0] is True
        assert isinstance(res[1], ResponseError)
        assert res[2] == b"abc"

    def test_queueing_error_discards_the_transaction(self, r):
        with r.pipeline(transaction=True) as p:
            p.set("a", "1")
            p.execute_command("SET", "a")  # wrong number of arguments
            p.set("b", "2")
            with pytest.raises(ResponseError, match="wrong number of arguments"):
                p.execute()
        assert r.exists("a", "b") == 0
        # The connection is usable afterwards (not left inside MULTI).
        assert r.set("a", "ok") is True

    def test_non_transactional_pipeline(self, r):
        with r.pipeline(transaction=False) as p:
            p.rpush("l", "a", "b").lrange("l", 0, -1).llen("l")
            assert p.execute() == [2, [b"a", b"b"], 2]

    def test_decoded_responses_and_hash_replies(self, new_client):
        c = new_client(decode_responses=True)
        c.flushdb()
        with c.pipeline() as p:
            p.hset("h", mapping={"a": "1", "b": "2"}).hgetall("h").hincrby("h", "a", 5)
            assert p.execute() == [2, {"a": "1", "b": "2"}, 6]

    def test_large_transaction(self, r):
        with r.pipeline(transaction=True) as p:
            for i in range(1000):
                p.set(f"key:{i}", i)
            p.dbsize()
            res = p.execute()
        assert res[:-1] == [True] * 1000
        assert res[-1] == 1000

    def test_transactions_over_many_keys_are_atomic(self, r, new_client):
        """Writers set 32 keys (spread over the keyspace) to one value in a
        MULTI; readers must never see a mix of old and new values."""
        keys = [f"atomic:{i}" for i in range(32)]
        r.mset({k: 0 for k in keys})
        stop = threading.Event()
        errors = []

        def writer(c, base):
            try:
                for i in range(100):
                    with c.pipeline(transaction=True) as p:
                        for k in keys:
                            p.set(k, base + i)
                        p.execute()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def reader(c):
            try:
                while not stop.is_set():
                    vals = set(c.mget(keys))
                    if len(vals) != 1:
                        errors.append(AssertionError(f"MGET saw a partial transaction: {sorted(vals)}"))
                        return
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        writers = [threading.Thread(target=writer, args=(new_client(), n * 1000)) for n in range(2)]
        readers = [threading.Thread(target=reader, args=(new_client(),)) for _ in range(2)]
        for t in readers + writers:
            t.start()
        for t in writers:
            t.join(60)
        stop.set()
        for t in readers:
            t.join(60)
        assert not errors, errors[0]

    def test_blocking_pop_inside_multi_answers_at_once(self, r):
        t0 = time.monotonic()
        with r.pipeline() as p:
            p.blpop("empty", timeout=2).rpush("empty", "x")
            assert p.execute() == [None, 1]
        assert time.monotonic() - t0 < 1.5


# ---------------------------------------------------------------- WATCH


class TestWatch:
    def test_watch_error_when_another_client_writes(self, r, r2):
        r.set("k", "1")
        with r.pipeline() as p:
            p.watch("k")
            assert p.get("k") == b"1"  # immediate mode after WATCH
            r2.set("k", "changed")
            p.multi()
            p.set("k", "mine")
            with pytest.raises(WatchError):
                p.execute()
        assert r.get("k") == b"changed"

    def test_script_write_aborts_a_watching_transaction(self, r, r2):
        r.set("k", "1")
        with r.pipeline() as p:
            p.watch("k")
            r2.eval("return redis.call('INCR', KEYS[1])", 1, "k")
            p.multi()
            p.set("k", "mine")
            with pytest.raises(WatchError):
                p.execute()
        assert r.get("k") == b"2"

    def test_transaction_helper_retries_on_conflict(self, r, r2):
        r.set("k", "5")
        calls = []

        def incr(pipe):
            calls.append(1)
            cur = int(pipe.get("k"))
            if len(calls) == 1:
                r2.incrby("k", 10)  # conflicting write: first EXEC must fail
            pipe.multi()
            pipe.set("k", cur + 1)

        assert r.transaction(incr, "k") == [True]
        assert len(calls) == 2
        assert r.get("k") == b"16"

    def test_transaction_value_from_callable(self, r):
        r.rpush("src", "a", "b", "c")

        def move(pipe):
            items = pipe.lrange("src", 0, -1)
            pipe.multi()
            pipe.delete("src")
            pipe.rpush("dst", *items)
            return len(items)

        assert r.transaction(move, "src", "dst", value_from_callable=True) == 3
        assert r.lrange("dst", 0, -1) == [b"a", b"b", b"c"]
        assert r.exists("src") == 0

    def test_unwatch(self, r, r2):
        with r.pipeline() as p:
            p.watch("k")
            p.unwatch()
            r2.set("k", "x")
            p.multi()
            p.set("k", "y")
            assert p.execute() == [True]
        assert r.get("k") == b"y"

    def test_concurrent_transactions_lose_no_update(self, r, new_client):
        workers, each = 4, 25
        clients = [new_client() for _ in range(workers)]
        errors = []

        def incr(pipe):
            cur = int(pipe.get("counter") or 0)
            pipe.multi()
            pipe.set("counter", cur + 1)

        def work(c):
            try:
                for _ in range(each):
                    c.transaction(incr, "counter")
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert r.get("counter") == str(workers * each).encode()


# ---------------------------------------------------------------- Lock


class TestLock:
    def test_acquire_release_across_two_clients(self, r, r2):
        a = r.lock("lk", timeout=5)
        b = r2.lock("lk", timeout=5)
        assert a.acquire(blocking=False)
        assert 4000 < r.pttl("lk") <= 5000
        assert b.acquire(blocking=False) is False
        assert b.locked() and not b.owned()
        assert a.owned()
        a.release()
        assert not a.locked()
        assert b.acquire(blocking=False)
        assert b.owned()
        b.release()
        assert r.exists("lk") == 0

    def test_blocking_timeout_gives_up(self, r, r2):
        a = r.lock("lk", timeout=10)
        assert a.acquire()
        b = r2.lock("lk", timeout=10, sleep=0.05)
        t0 = time.monotonic()
        assert b.acquire(blocking_timeout=0.3) is False
        elapsed = time.monotonic() - t0
        assert 0.2 <= elapsed < 2, elapsed
        a.release()

    def test_blocking_acquire_waits_for_release(self, r, r2):
        # thread_local=False: the token must be visible to the releasing thread.
        a = r.lock("lk", timeout=10, thread_local=False)
        assert a.acquire()
        releaser = threading.Timer(0.3, a.release)
        releaser.start()
        b = r2.lock("lk", timeout=10, sleep=0.05)
        t0 = time.monotonic()
        try:
            assert b.acquire(blocking_timeout=5)
        finally:
            releaser.join()
        elapsed = time.monotonic() - t0
        assert 0.25 <= elapsed < 4, elapsed
        assert b.owned()
        b.release()

    def test_extend_and_reacquire(self, r):
        a = r.lock("lk", timeout=1)
        assert a.acquire()
        assert a.extend(5)  # adds to the remaining TTL
        assert 5000 < r.pttl("lk") <= 6000
        assert a.extend(2, replace_ttl=True)
        assert 1000 < r.pttl("lk") <= 2000
        assert a.reacquire()  # back to the lock's own timeout
        assert 0 < r.pttl("lk") <= 1000
        a.release()

    def test_expired_lock_is_taken_over(self, r, r2):
        a = r.lock("lk", timeout=0.3)
        assert a.acquire()
        time.sleep(0.5)
        b = r2.lock("lk", timeout=5)
        assert b.acquire(blocking=False)
        with pytest.raises(LockNotOwnedError):
            a.extend(1)
        with pytest.raises(LockNotOwnedError):
            a.reacquire()
        with pytest.raises(LockNotOwnedError):
            a.release()
        assert b.owned()  # a's failed release did not delete b's lock
        b.release()

    def test_context_manager(self, r, r2):
        with r.lock("lk", timeout=5, blocking_timeout=1) as held:
            assert held.owned()
            with pytest.raises(LockError):
                with r2.lock("lk", timeout=5, blocking_timeout=0.2):
                    pass
        assert r.exists("lk") == 0

    def test_release_after_script_flush(self, r):
        a = r.lock("lk", timeout=5)
        assert a.acquire()
        r.script_flush()
        a.extend(1)  # EVALSHA -> NOSCRIPT -> SCRIPT LOAD -> EVALSHA
        a.release()
        assert r.exists("lk") == 0

    def test_mutual_exclusion_between_threads(self, r, new_client):
        workers, each = 4, 10
        clients = [new_client() for _ in range(workers)]
        errors = []

        def work(c):
            try:
                for _ in range(each):
                    with c.lock("lk", timeout=5, sleep=0.01, blocking_timeout=20):
                        # A read-modify-write that is only safe under the lock.
                        v = int(c.get("counter") or 0)
                        time.sleep(0.001)
                        c.set("counter", v + 1)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert r.get("counter") == str(workers * each).encode()
        assert r.exists("lk") == 0


# ---------------------------------------------------------------- scripts


INCRBY = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


class TestScripts:
    def test_register_script_and_noscript_fallback(self, r):
        r.script_flush()
        s = r.register_script(INCRBY)
        assert s.sha == sha1(INCRBY)
        assert r.script_exists(s.sha) == [False]
        assert s(keys=["k"], args=[5]) == 5  # NOSCRIPT -> SCRIPT LOAD -> EVALSHA
        assert r.script_exists(s.sha) == [True]
        assert s(keys=["k"], args=[5]) == 10
        r.script_flush()
        assert r.script_exists(s.sha) == [False]
        assert s(keys=["k"], args=[5]) == 15

    def test_script_on_another_client(self, r, r2):
        s = r.register_script(INCRBY)
        assert s(keys=["k"], args=[1], client=r2) == 1

    @pytest.mark.parametrize("transaction", [True, False])
    def test_script_in_pipeline_after_flush(self, r, transaction):
        s = r.register_script(INCRBY)
        r.script_flush()
        with r.pipeline(transaction=transaction) as p:
            p.set("k", 1)
            s(keys=["k"], args=[2], client=p)
            s(keys=["k"], args=[3], client=p)
            p.get("k")
            assert p.execute() == [True, 3, 6, b"6"]

    def test_eval_evalsha_script_load(self, r):
        lua = "return {KEYS[1], ARGV[1], tonumber(ARGV[2]) + 1, {ok = 'x'}}"
        assert r.eval(lua, 1, "key", "a", "41") == [b"key", b"a", 42, b"x"]
        sha = r.script_load(lua)
        assert sha == sha1(lua)
        assert r.script_exists(sha, "f" * 40) == [True, False]
        assert r.evalsha(sha, 1, "key", "b", "1") == [b"key", b"b", 2, b"x"]
        with pytest.raises(NoScriptError):
            r.evalsha("0" * 40, 0)

    def test_script_touching_undeclared_keys(self, r):
        # Outside cluster mode Redis lets a script use keys it did not
        # declare in KEYS (RQ's Queue.empty does).
        lua = "for i = 1, #ARGV do redis.call('SET', ARGV[i], i) end; return redis.call('MGET', unpack(ARGV))"
        names = [f"undeclared:{i}" for i in range(20)]
        assert r.eval(lua, 0, *names) == [str(i).encode() for i in range(1, 21)]
        assert r.get("undeclared:19") == b"20"

    def test_scripts_over_many_keys_are_atomic(self, r, new_client):
        keys = [f"atomic:{i}" for i in range(32)]
        r.mset({k: 0 for k in keys})
        bump = r.register_script("for _, k in ipairs(KEYS) do redis.call('SET', k, ARGV[1]) end")
        check = r.register_script(
            "local v = redis.call('GET', KEYS[1]); "
            "for _, k in ipairs(KEYS) do if redis.call('GET', k) ~= v then return 0 end end; return 1"
        )
        stop = threading.Event()
        errors = []

        def writer(c, base):
            try:
                for i in range(100):
                    bump(keys=keys, args=[base + i], client=c)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def reader(c):
            try:
                while not stop.is_set():
                    if len(set(c.mget(keys))) != 1 or check(keys=keys, client=c) != 1:
                        errors.append(AssertionError("saw a partially applied script"))
                        return
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        writers = [threading.Thread(target=writer, args=(new_client(), n * 1000)) for n in range(2)]
        readers = [threading.Thread(target=reader, args=(new_client(),)) for _ in range(2)]
        for t in readers + writers:
            t.start()
        for t in writers:
            t.join(60)
        stop.set()
        for t in readers:
            t.join(60)
        assert not errors, errors[0]

    def test_script_libraries(self, r):
        assert r.eval("return cjson.encode(cjson.decode(ARGV[1]))", 0, '{"a":[1,2]}') == b'{"a":[1,2]}'
        assert r.eval("return redis.sha1hex(ARGV[1])", 0, "abc") == sha1("abc").encode()
        assert r.eval("return {cmsgpack.unpack(cmsgpack.pack({1, 2, 'x'}))}", 0) == [[1, 2, b"x"]]
        assert r.eval("return bit.band(0xff, 0x0f)", 0) == 15
        assert r.eval("return struct.unpack('>I', struct.pack('>I', 4242))", 0) == 4242
        big = r.eval("local t = {} for i = 1, 10000 do t[i] = i end return t", 0)
        assert big == list(range(1, 10001))

    def test_binary_safe_arguments(self, r):
        blob = bytes(range(256))
        assert r.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])", 1, "bin", blob) == blob
        assert r.get("bin") == blob

    def test_script_errors(self, r):
        with pytest.raises(ResponseError) as e:
            r.eval("return redis.error_reply('MYERR something went wrong')", 0)
        assert str(e.value) == "MYERR something went wrong"
        with pytest.raises(ResponseError) as e:
            r.eval("return {err = 'OTHERERR table form'}", 0)
        assert str(e.value) == "OTHERERR table form"
        r.rpush("list", "x")
        with pytest.raises(ResponseError, match="^WRONGTYPE"):
            r.eval("return redis.call('GET', KEYS[1])", 1, "list")
        with pytest.raises(ResponseError, match="boom"):
            r.eval("error('boom')", 0)
        r.set("nan", "x")
        res = r.eval(
            "local res = redis.pcall('INCR', KEYS[1]); "
            "if type(res) == 'table' and res.err then return 'caught: ' .. res.err end; return res",
            1,
            "nan",
        )
        assert res.startswith(b"caught: ERR value is not an integer")

    def test_registered_script_error_in_transaction(self, r):
        s = r.register_script(
            "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('KEYEXISTS ' .. KEYS[1]) end; "
            "return redis.call('SET', KEYS[1], ARGV[1])"
        )
        assert s(keys=["k"], args=["v"]) == b"OK"
        with pytest.raises(ResponseError, match="KEYEXISTS k"):
            s(keys=["k"], args=["w"])
        with r.pipeline(transaction=True) as p:
            s(keys=["k"], args=["w"], client=p)
            p.append("k", "x")
            res = p.execute(raise_on_error=False)
        assert isinstance(res[0], ResponseError) and "KEYEXISTS k" in str(res[0])
        assert res[1] == 2
        assert r.get("k") == b"vx"

    def test_concurrent_scripts_are_atomic(self, r, new_client):
        s = r.register_script(
            "local v = tonumber(redis.call('GET', KEYS[1]) or '0'); redis.call('SET', KEYS[1], v + 1); return v + 1"
        )
        clients = [new_client() for _ in range(4)]
        errors = []

        def work(c):
            try:
                for _ in range(50):
                    s(keys=["counter"], client=c)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert r.get("counter") == b"200"
