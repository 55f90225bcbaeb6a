'use strict';
// ioredis through its own API: MULTI/EXEC (pipelined and not), WATCH with
// retries, EVAL/EVALSHA, defineCommand (EVALSHA with EVAL fallback),
// script errors and pipelines with inline transactions.

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Redis, ReplyError } = require('ioredis');
const { HOST, PORT, keyPrefix, sha1, sleep } = require('./common');

const clients = [];
function connect(opts = {}) {
  const c = new Redis({
    host: HOST,
    port: PORT,
    // Fail fast instead of reconnecting forever when the server is gone.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    ...opts,
  });
  c.on('error', () => {});
  clients.push(c);
  return c;
}

// Increment `key` by one with WATCH/GET/MULTI/SET/EXEC, retrying when
// EXEC reports a conflict (null). `interfere(attempt)` runs between the
// read and EXEC. Returns the number of attempts used.
async function watchedIncr(client, key, interfere) {
  for (let attempt = 1; attempt <= 200; attempt++) {
    await client.watch(key);
    const cur = Number((await client.get(key)) || 0);
    if (interfere) await interfere(attempt);
    const res = await client.multi().set(key, String(cur + 1)).exec();
    if (res !== null) {
      assert.deepEqual(res, [[null, 'OK']]);
      return attempt;
    }
  }
  throw new Error(`watchedIncr: no success on ${key} after 200 attempts`);
}

describe('ioredis', { timeout: 60000 }, () => {
  let r;
  let other;

  before(async () => {
    r = connect();
    other = connect();
    assert.equal(await r.ping(), 'PONG');
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  });

  describe('MULTI/EXEC', () => {
    it('multi().set().incr().get().exec() gives [err, result] pairs', async () => {
      const k = keyPrefix('ioredis') + 'counter';
      const res = await r.multi().set(k, '10').incr(k).get(k).exec();
      assert.deepEqual(res, [[null, 'OK'], [null, 11], [null, '11']]);
    });

    it('a command failing at run time does not abort the others', async () => {
      const k = keyPrefix('ioredis') + 'str';
      const res = await r.multi().set(k, 'abc').incr(k).append(k, 'd').get(k).exec();
      assert.equal(res.length, 4);
      assert.deepEqual(res[0], [null, 'OK']);
      assert.ok(res[1][0] instanceof ReplyError, `expected ReplyError, got ${res[1]}`);
      assert.match(res[1][0].message, /not an integer/);
      assert.deepEqual(res[2], [null, 4]);
      assert.deepEqual(res[3], [null, 'abcd']);
    });

    it('a command rejected while queueing discards the transaction (EXECABORT)', async () => {
      const k = keyPrefix('ioredis') + 'aborted';
      await assert.rejects(r.multi().set(k, 'v').set(k).get(k).exec(), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.match(err.message, /^EXECABORT/);
        assert.ok(Array.isArray(err.previousErrors) && err.previousErrors.length === 1);
        assert.match(err.previousErrors[0].message, /wrong number of arguments/);
        return true;
      });
      assert.equal(await r.exists(k), 0);
    });

    it('multi with a batch of commands', async () => {
      const k = keyPrefix('ioredis') + 'batch';
      const res = await r.multi([['rpush', k, 'a', 'b', 'c'], ['lrange', k, 0, -1], ['llen', k]]).exec();
      assert.deepEqual(res, [[null, 3], [null, ['a', 'b', 'c']], [null, 3]]);
    });

    it('multi({ pipeline: false }) queues each command on the server', async () => {
      const k = keyPrefix('ioredis') + 'nopipe';
      const c = connect();
      assert.equal(await c.multi({ pipeline: false }), 'OK');
      assert.equal(await c.set(k, '1'), 'QUEUED');
      assert.equal(await c.incrby(k, 41), 'QUEUED');
      assert.equal(await other.exists(k), 0, 'queued commands must not run before EXEC');
      assert.deepEqual(await c.exec(), [[null, 'OK'], [null, 42]]);
      assert.equal(await other.get(k), '42');
    });

    it('DISCARD drops the queued commands', async () => {
      const k = keyPrefix('ioredis') + 'discard';
      const c = connect();
      await c.set(k, 'before');
      await c.multi({ pipeline: false });
      await c.set(k, 'after');
      assert.equal(await c.discard(), 'OK');
      assert.equal(await c.get(k), 'before');
    });

    it('a blocking pop inside MULTI does not block', async () => {
      const k = keyPrefix('ioredis') + 'emptylist';
      const t0 = Date.now();
      const res = await r.multi().blpop(k, 2).rpush(k, 'x').exec();
      assert.deepEqual(res, [[null, null], [null, 1]]);
      assert.ok(Date.now() - t0 < 1500, 'BLPOP in MULTI must answer at once');
    });
  });

  describe('WATCH', () => {
    it('exec() resolves to null when another connection writes a watched key', async () => {
      const k = keyPrefix('ioredis') + 'watched';
      await r.set(k, '1');
      assert.equal(await r.watch(k), 'OK');
      assert.equal(await r.get(k), '1');
      await other.set(k, 'changed');
      const res = await r.multi().set(k, 'mine').exec();
      assert.equal(res, null);
      assert.equal(await r.get(k), 'changed');
    });

    it('a write from a script on another connection also aborts the transaction', async () => {
      const k = keyPrefix('ioredis') + 'watched-script';
      await r.set(k, '1');
      await r.watch(k);
      await other.eval("return redis.call('INCR', KEYS[1])", 1, k);
      assert.equal(await r.multi().set(k, 'mine').exec(), null);
      assert.equal(await r.get(k), '2');
    });

    it('watching a key that does not exist yet, then another client creates it', async () => {
      const k = keyPrefix('ioredis') + 'watched-missing';
      await r.watch(k);
      await other.set(k, 'created');
      assert.equal(await r.multi().set(k, 'mine').exec(), null);
      assert.equal(await r.get(k), 'created');
    });

    it('retry loop succeeds on the second attempt after a conflict', async () => {
      const k = keyPrefix('ioredis') + 'retry';
      await r.set(k, '5');
      const attempts = await watchedIncr(r, k, async (attempt) => {
        if (attempt === 1) await other.incrby(k, 10);
      });
      assert.equal(attempts, 2);
      assert.equal(await r.get(k), '16');
    });

    it('UNWATCH forgets the watched keys', async () => {
      const k = keyPrefix('ioredis') + 'unwatch';
      await r.watch(k);
      assert.equal(await r.unwatch(), 'OK');
      await other.set(k, 'x');
      assert.deepEqual(await r.multi().set(k, 'y').exec(), [[null, 'OK']]);
      assert.equal(await r.get(k), 'y');
    });

    it('concurrent WATCH/MULTI increments from several connections lose no update', async () => {
      const k = keyPrefix('ioredis') + 'contended';
      const workers = 4;
      const each = 25;
      const conns = Array.from({ length: workers }, () => connect());
      await Promise.all(
        conns.map(async (c) => {
          for (let i = 0; i < each; i++) await watchedIncr(c, k);
        }),
      );
      assert.equal(await r.get(k), String(workers * each));
    });
  });

  describe('EVAL / EVALSHA', () => {
    it('eval passes KEYS and ARGV and converts replies', async () => {
      const k = keyPrefix('ioredis') + 'evalkey';
      assert.deepEqual(await r.eval('return {KEYS[1], ARGV[1], ARGV[2]}', 1, k, 'a', 'b'), [k, 'a', 'b']);
      assert.equal(await r.eval('return 42', 0), 42);
      assert.equal(await r.eval('return 3.99', 0), 3);
      assert.equal(await r.eval("return 'text'", 0), 'text');
      assert.equal(await r.eval('return true', 0), 1);
      assert.equal(await r.eval('return false', 0), null);
      assert.equal(await r.eval('return nil', 0), null);
      assert.deepEqual(await r.eval("return {1, 2, {3, 'x'}}", 0), [1, 2, [3, 'x']]);
      assert.deepEqual(await r.eval('return {1, nil, 3}', 0), [1]);
      assert.equal(await r.eval("return {ok = 'FINE'}", 0), 'FINE');
      assert.equal(await r.eval("return redis.status_reply('FINE')", 0), 'FINE');
    });

    it('eval writes keys with redis.call and reads them back', async () => {
      const k = keyPrefix('ioredis') + 'hash';
      const lua = "redis.call('HSET', KEYS[1], 'f1', ARGV[1], 'f2', ARGV[2]); return redis.call('HGETALL', KEYS[1])";
      assert.deepEqual(await r.eval(lua, 1, k, 'v1', 'v2'), ['f1', 'v1', 'f2', 'v2']);
      assert.deepEqual(await r.hgetall(k), { f1: 'v1', f2: 'v2' });
    });

    it('script load / exists / evalsha', async () => {
      const k = keyPrefix('ioredis') + 'evalsha';
      const lua = `-- ${k}\nreturn redis.call('SET', KEYS[1], ARGV[1])`;
      const sha = await r.script('LOAD', lua);
      assert.equal(sha, sha1(lua));
      assert.deepEqual(await r.script('EXISTS', sha, 'f'.repeat(40)), [1, 0]);
      assert.equal(await r.evalsha(sha, 1, k, 'v'), 'OK');
      assert.equal(await r.get(k), 'v');
      assert.equal(await r.evalsha(sha.toUpperCase(), 1, k, 'w'), 'OK');
      assert.equal(await r.get(k), 'w');
    });

    it('evalsha of an unknown script rejects with NOSCRIPT', async () => {
      await assert.rejects(r.evalsha('0'.repeat(40), 0), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.match(err.message, /^NOSCRIPT/);
        return true;
      });
    });

    it('scripts run atomically under concurrent callers', async () => {
      const k = keyPrefix('ioredis') + 'atomic';
      const lua = "local v = tonumber(redis.call('GET', KEYS[1]) or '0'); redis.call('SET', KEYS[1], v + 1); return v + 1";
      const conns = Array.from({ length: 4 }, () => connect());
      await Promise.all(
        conns.map(async (c) => {
          for (let i = 0; i < 50; i++) await c.eval(lua, 1, k);
        }),
      );
      assert.equal(await r.get(k), '200');
    });
  });

  describe('script errors', () => {
    it('redis.error_reply rejects with a ReplyError carrying the message', async () => {
      await assert.rejects(r.eval("return redis.error_reply('MYERR something went wrong')", 0), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.equal(err.message, 'MYERR something went wrong');
        return true;
      });
      await assert.rejects(r.eval("return {err = 'OTHERERR table form'}", 0), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.equal(err.message, 'OTHERERR table form');
        return true;
      });
    });

    it('an error raised by redis.call propagates', async () => {
      const k = keyPrefix('ioredis') + 'wrongtype';
      await r.rpush(k, 'x');
      await assert.rejects(r.eval("return redis.call('GET', KEYS[1])", 1, k), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.match(err.message, /^WRONGTYPE/);
        return true;
      });
    });

    it('redis.pcall returns the error as a table the script can inspect', async () => {
      const k = keyPrefix('ioredis') + 'pcall';
      await r.set(k, 'notanumber');
      const lua = "local res = redis.pcall('INCR', KEYS[1]); if type(res) == 'table' and res.err then return 'caught: ' .. res.err end; return res";
      const res = await r.eval(lua, 1, k);
      assert.match(res, /^caught: ERR value is not an integer/);
    });

    it('a Lua runtime error rejects with a ReplyError', async () => {
      await assert.rejects(r.eval("error('boom')", 0), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.match(err.message, /boom/);
        return true;
      });
    });
  });

  describe('defineCommand', () => {
    // Calls the script twice, flushes the script cache, calls it twice more.
    // ioredis sends EVAL on a connection's first use, EVALSHA after that,
    // and resends as EVAL when EVALSHA answers NOSCRIPT.
    async function fallbackSequence(k) {
      const lua = `-- ${k}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
      const sha = sha1(lua);
      const c = connect();
      c.defineCommand('incrByScript', { numberOfKeys: 1, lua });
      assert.deepEqual(await r.script('EXISTS', sha), [0]);
      assert.equal(await c.incrByScript(k, 5), 5);
      assert.deepEqual(await r.script('EXISTS', sha), [1], 'EVAL caches the script');
      assert.equal(await c.incrByScript(k, 5), 10);
      assert.equal(await r.script('FLUSH'), 'OK');
      assert.deepEqual(await r.script('EXISTS', sha), [0]);
      assert.equal(await c.incrByScript(k, 5), 15); // EVALSHA -> NOSCRIPT -> EVAL
      assert.equal(await c.incrByScript(k, 5), 20);
      assert.deepEqual(await r.script('EXISTS', sha), [1]);
    }

    it('EVAL first, then EVALSHA, and EVAL again after NOSCRIPT', async () => {
      await fallbackSequence(keyPrefix('ioredis') + 'defcmd');
    });

    it('MONITOR shows the EVAL / EVALSHA calls ioredis makes', async () => {
      const k = keyPrefix('ioredis') + 'defcmd-monitor';
      // The base connection finishes its own ready check (INFO) first:
      // ioredis mistakes a monitor line that arrives in the same read as
      // MONITOR's +OK for a reply, whichever server it talks to.
      const base = connect();
      await base.ping();
      const mon = await base.monitor();
      clients.push(mon);
      const seen = [];
      mon.on('monitor', (_time, args) => {
        if (args.includes(k) && ['evalsha', 'eval'].includes(String(args[0]).toLowerCase())) {
          seen.push(String(args[0]).toLowerCase());
        }
      });
      // MONITOR starts with the next command; make sure it is in place.
      await sleep(100);
      await fallbackSequence(k);
      // The NOSCRIPT EVALSHA is shown too, as Redis shows every command it ran.
      const want = ['eval', 'evalsha', 'evalsha', 'eval', 'evalsha'];
      const deadline = Date.now() + 3000;
      while (seen.length < want.length && Date.now() < deadline) await sleep(20);
      mon.disconnect();
      assert.deepEqual(seen, want);
    });

    it('keeps working after SCRIPT FLUSH', async () => {
      const k = keyPrefix('ioredis') + 'defcmd-flush';
      const lua = `-- ${k}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
      r.defineCommand('incrByFlush', { numberOfKeys: 1, lua });
      assert.equal(await r.incrByFlush(k, 2), 2);
      assert.equal(await r.script('FLUSH'), 'OK');
      assert.deepEqual(await r.script('EXISTS', sha1(lua)), [0]);
      assert.equal(await r.incrByFlush(k, 2), 4);
    });

    it('dynamic key count and the Buffer variant', async () => {
      const k1 = keyPrefix('ioredis') + 'dyn1';
      const k2 = keyPrefix('ioredis') + 'dyn2';
      r.defineCommand('echoAll', { lua: 'return {KEYS[1], KEYS[2], ARGV[1]}' });
      assert.deepEqual(await r.echoAll(2, k1, k2, 'arg'), [k1, k2, 'arg']);
      const bufs = await r.echoAllBuffer(2, k1, k2, 'arg');
      assert.ok(bufs.every((b) => Buffer.isBuffer(b)));
      assert.deepEqual(bufs.map(String), [k1, k2, 'arg']);
    });

    it('works in a pipeline and in a transaction (EVAL then EVALSHA in one MULTI)', async () => {
      const k = keyPrefix('ioredis') + 'defcmd-pipe';
      const lua = `-- ${k}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
      const c = connect();
      c.defineCommand('incrByPipe', { numberOfKeys: 1, lua });
      await c.script('FLUSH');
      const res = await c.pipeline().set(k, '1').incrByPipe(k, 2).get(k).exec();
      assert.deepEqual(res, [[null, 'OK'], [null, 3], [null, '3']]);

      // ioredis remembers per connection that a script was sent; a fresh
      // connection after the flush sends EVAL, then EVALSHA, in one MULTI.
      await c.script('FLUSH');
      const c2 = connect();
      c2.defineCommand('incrByPipe', { numberOfKeys: 1, lua });
      const tx = await c2.multi().incrByPipe(k, 10).incrByPipe(k, 10).get(k).exec();
      assert.deepEqual(tx, [[null, 13], [null, 23], [null, '23']]);
    });

    it('a script error is a ReplyError, in a pipeline and in a transaction too', async () => {
      const k = keyPrefix('ioredis') + 'defcmd-err';
      r.defineCommand('failIfSet', {
        numberOfKeys: 1,
        lua: "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('KEYEXISTS ' .. KEYS[1]) end; return redis.call('SET', KEYS[1], ARGV[1])",
      });
      assert.equal(await r.failIfSet(k, 'v'), 'OK');
      await assert.rejects(r.failIfSet(k, 'v'), (err) => {
        assert.ok(err instanceof ReplyError);
        assert.equal(err.message, `KEYEXISTS ${k}`);
        return true;
      });

      const res = await r.pipeline().get(k).failIfSet(k, 'w').set(k, 'x').exec();
      assert.deepEqual(res[0], [null, 'v']);
      assert.ok(res[1][0] instanceof ReplyError);
      assert.equal(res[1][0].message, `KEYEXISTS ${k}`);
      assert.deepEqual(res[2], [null, 'OK']);

      const tx = await r.multi().failIfSet(k, 'y').append(k, 'z').exec();
      assert.ok(tx[0][0] instanceof ReplyError);
      assert.equal(tx[0][0].message, `KEYEXISTS ${k}`);
      assert.deepEqual(tx[1], [null, 2]);
      assert.equal(await r.get(k), 'xz');
    });
  });

  describe('pipelines with transactions', () => {
    it('an inline MULTI/EXEC inside a pipeline', async () => {
      const k = keyPrefix('ioredis') + 'inline';
      const res = await r.pipeline().set(k, '0').multi().incr(k).incr(k).exec().get(k).exec();
      assert.deepEqual(res, [
        [null, 'OK'],
        [null, 'OK'],
        [null, 'QUEUED'],
        [null, 'QUEUED'],
        [null, [1, 2]],
        [null, '2'],
      ]);
    });

    it('a pipeline of eval and evalsha', async () => {
      const k = keyPrefix('ioredis') + 'pipe-eval';
      const lua = `-- ${k}\nreturn redis.call('RPUSH', KEYS[1], ARGV[1])`;
      const sha = await r.script('LOAD', lua);
      const res = await r.pipeline().eval(lua, 1, k, 'a').evalsha(sha, 1, k, 'b').evalsha('0'.repeat(40), 0).lrange(k, 0, -1).exec();
      assert.deepEqual(res[0], [null, 1]);
      assert.deepEqual(res[1], [null, 2]);
      assert.ok(res[2][0] instanceof ReplyError);
      assert.match(res[2][0].message, /^NOSCRIPT/);
      assert.deepEqual(res[3], [null, ['a', 'b']]);
    });

    it('many transactions pipelined back to back keep their own results', async () => {
      const k = keyPrefix('ioredis') + 'many';
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => r.multi().incr(k).eval('return ARGV[1]', 0, String(i)).exec()),
      );
      results.forEach((res, i) => {
        assert.equal(res[1][1], String(i));
      });
      const counts = results.map((res) => res[0][1]).sort((a, b) => a - b);
      assert.deepEqual(counts, Array.from({ length: 50 }, (_, i) => i + 1));
    });
  });
});
