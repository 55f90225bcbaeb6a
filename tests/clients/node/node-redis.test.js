'use strict';
// node-redis (package `redis`, v4) through its own API: multi().exec(),
// execAsPipeline, WATCH with executeIsolated and WatchError retries,
// scripts declared with defineScript in createClient({ scripts }) (EVALSHA
// with EVAL fallback), eval/evalSha helpers, sendCommand, and script errors.

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { createClient, defineScript, ErrorReply, WatchError, MultiErrorReply } = require('redis');
const { HOST, PORT, keyPrefix, sha1 } = require('./common');

// A unique tag makes the scripts' SHA1s unique to this run, so whether the
// server has them cached is known.
const TAG = `${process.pid}-${Date.now()}`;

const scripts = {
  incrByScript: defineScript({
    NUMBER_OF_KEYS: 1,
    SCRIPT: `-- incrByScript ${TAG}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`,
    transformArguments(key, by) {
      return [key, String(by)];
    },
    transformReply(reply) {
      return reply;
    },
  }),
  setIfAbsent: defineScript({
    NUMBER_OF_KEYS: 1,
    SCRIPT:
      `-- setIfAbsent ${TAG}\n` +
      "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('KEYEXISTS ' .. KEYS[1]) end\n" +
      "return redis.call('SET', KEYS[1], ARGV[1])",
    transformArguments(key, value) {
      return [key, value];
    },
    transformReply(reply) {
      return reply;
    },
  }),
  hashPairs: defineScript({
    NUMBER_OF_KEYS: 1,
    SCRIPT: `-- hashPairs ${TAG}\nredis.call('HSET', KEYS[1], unpack(ARGV))\nreturn redis.call('HGETALL', KEYS[1])`,
    transformArguments(key, obj) {
      return [key, ...Object.entries(obj).flat()];
    },
    // Turn the flat HGETALL reply into an object, as node-redis does.
    transformReply(reply) {
      const out = {};
      for (let i = 0; i < reply.length; i += 2) out[reply[i]] = reply[i + 1];
      return out;
    },
  }),
};

const clients = [];
async function connect() {
  const c = createClient({
    socket: { host: HOST, port: PORT, reconnectStrategy: false },
    scripts,
  });
  c.on('error', () => {});
  await c.connect();
  clients.push(c);
  return c;
}

// Increment `key` by one with WATCH/GET/MULTI/SET/EXEC on an isolated
// connection, retrying on WatchError. Returns the number of attempts.
async function watchedIncr(client, key, interfere) {
  for (let attempt = 1; attempt <= 200; attempt++) {
    try {
      await client.executeIsolated(async (iso) => {
        await iso.watch(key);
        const cur = Number((await iso.get(key)) || 0);
        if (interfere) await interfere(attempt);
        const res = await iso.multi().set(key, String(cur + 1)).exec();
        assert.deepEqual(res, ['OK']);
      });
      return attempt;
    } catch (err) {
      if (!(err instanceof WatchError)) throw err;
    }
  }
  throw new Error(`watchedIncr: no success on ${key} after 200 attempts`);
}

describe('node-redis', { timeout: 60000 }, () => {
  let r;
  let other;

  before(async () => {
    r = await connect();
    other = await connect();
    assert.equal(await r.ping(), 'PONG');
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  });

  describe('MULTI/EXEC', () => {
    it('multi().set().incr().get().exec() gives the plain replies', async () => {
      const k = keyPrefix('node-redis') + 'counter';
      const res = await r.multi().set(k, '10').incr(k).get(k).exec();
      assert.deepEqual(res, ['OK', 11, '11']);
    });

    it('a command failing at run time rejects with MultiErrorReply, the rest ran', async () => {
      const k = keyPrefix('node-redis') + 'str';
      await assert.rejects(r.multi().set(k, 'abc').incr(k).append(k, 'd').get(k).exec(), (err) => {
        assert.ok(err instanceof MultiErrorReply, `expected MultiErrorReply, got ${err}`);
        assert.deepEqual(err.errorIndexes, [1]);
        assert.equal(err.replies[0], 'OK');
        assert.ok(err.replies[1] instanceof ErrorReply);
        assert.match(err.replies[1].message, /not an integer/);
        assert.equal(err.replies[2], 4);
        assert.equal(err.replies[3], 'abcd');
        return true;
      });
      assert.equal(await r.get(k), 'abcd');
    });

    it('a command rejected while queueing discards the whole transaction', async () => {
      const k = keyPrefix('node-redis') + 'aborted';
      await assert.rejects(r.multi().set(k, 'v').addCommand(['SET', k]).get(k).exec(), (err) => {
        assert.ok(err instanceof ErrorReply, `expected ErrorReply, got ${err}`);
        assert.match(err.message, /wrong number of arguments|EXECABORT/);
        return true;
      });
      assert.equal(await r.exists(k), 0);
      // The connection is still usable and not left inside MULTI.
      assert.equal(await r.set(k, 'after'), 'OK');
      assert.equal(await r.get(k), 'after');
    });

    it('addCommand, hash replies and a blocking pop inside MULTI', async () => {
      const k = keyPrefix('node-redis') + 'mixed';
      const res = await r
        .multi()
        .hSet(k + ':h', { a: '1', b: '2' })
        .hGetAll(k + ':h')
        .addCommand(['BLPOP', k + ':l', '2'])
        .exec();
      assert.deepEqual(res[0], 2);
      assert.deepEqual({ ...res[1] }, { a: '1', b: '2' });
      assert.equal(res[2], null);
    });

    it('execAsPipeline sends the commands without MULTI', async () => {
      const k = keyPrefix('node-redis') + 'pipe';
      const res = await r.multi().set(k, '1').incrBy(k, 4).get(k).execAsPipeline();
      assert.deepEqual(res, ['OK', 5, '5']);
    });

    it('commands issued in the same tick are pipelined and answered in order', async () => {
      const k = keyPrefix('node-redis') + 'auto';
      const replies = await Promise.all(Array.from({ length: 100 }, () => r.incr(k)));
      assert.deepEqual(replies, Array.from({ length: 100 }, (_, i) => i + 1));
    });
  });

  describe('WATCH', () => {
    it('exec() rejects with WatchError when another client writes the key', async () => {
      const k = keyPrefix('node-redis') + 'watched';
      await r.set(k, '1');
      await r.executeIsolated(async (iso) => {
        assert.equal(await iso.watch(k), 'OK');
        assert.equal(await iso.get(k), '1');
        await other.set(k, 'changed');
        await assert.rejects(iso.multi().set(k, 'mine').exec(), WatchError);
      });
      assert.equal(await r.get(k), 'changed');
    });

    it('a script run by another client also aborts the transaction', async () => {
      const k = keyPrefix('node-redis') + 'watched-script';
      await r.set(k, '1');
      await r.executeIsolated(async (iso) => {
        await iso.watch(k);
        assert.equal(await other.incrByScript(k, 1), 2);
        await assert.rejects(iso.multi().set(k, 'mine').exec(), WatchError);
      });
      assert.equal(await r.get(k), '2');
    });

    it('retry loop succeeds on the second attempt after a conflict', async () => {
      const k = keyPrefix('node-redis') + 'retry';
      await r.set(k, '5');
      const attempts = await watchedIncr(r, k, async (attempt) => {
        if (attempt === 1) await other.incrBy(k, 10);
      });
      assert.equal(attempts, 2);
      assert.equal(await r.get(k), '16');
    });

    it('UNWATCH forgets the watched keys', async () => {
      const k = keyPrefix('node-redis') + 'unwatch';
      await r.executeIsolated(async (iso) => {
        await iso.watch(k);
        assert.equal(await iso.unwatch(), 'OK');
        await other.set(k, 'x');
        assert.deepEqual(await iso.multi().set(k, 'y').exec(), ['OK']);
      });
      assert.equal(await r.get(k), 'y');
    });

    it('concurrent WATCH/MULTI increments from several clients lose no update', async () => {
      const k = keyPrefix('node-redis') + 'contended';
      const workers = 4;
      const each = 25;
      const conns = await Promise.all(Array.from({ length: workers }, () => connect()));
      await Promise.all(
        conns.map(async (c) => {
          for (let i = 0; i < each; i++) await watchedIncr(c, k);
        }),
      );
      assert.equal(await r.get(k), String(workers * each));
    });
  });

  describe('scripts from createClient({ scripts })', () => {
    it('EVALSHA falls back to EVAL on NOSCRIPT, then the script is cached', async () => {
      const k = keyPrefix('node-redis') + 'defscript';
      const sha = scripts.incrByScript.SHA1;
      assert.equal(sha, sha1(scripts.incrByScript.SCRIPT));
      await r.scriptFlush();
      assert.deepEqual(await r.scriptExists(sha), [false]);
      assert.equal(await r.incrByScript(k, 5), 5);
      assert.deepEqual(await r.scriptExists(sha), [true]);
      assert.equal(await r.incrByScript(k, 5), 10);
      await r.scriptFlush();
      assert.equal(await r.incrByScript(k, 5), 15);
    });

    it('transformArguments / transformReply are applied', async () => {
      const k = keyPrefix('node-redis') + 'hash';
      assert.deepEqual(await r.hashPairs(k, { f1: 'v1', f2: 'v2' }), { f1: 'v1', f2: 'v2' });
    });

    it('scripts inside multi(): EVAL first, EVALSHA for the repeat, in one transaction', async () => {
      const k = keyPrefix('node-redis') + 'multi-script';
      await r.scriptFlush();
      const res = await r.multi().incrByScript(k, 10).incrByScript(k, 10).get(k).exec();
      assert.deepEqual(res, [10, 20, '20']);
    });

    it('scripts in execAsPipeline', async () => {
      const k = keyPrefix('node-redis') + 'pipe-script';
      const res = await r.multi().set(k, '1').incrByScript(k, 2).get(k).execAsPipeline();
      assert.deepEqual(res, ['OK', 3, '3']);
    });

    it('an error_reply from the script rejects with ErrorReply', async () => {
      const k = keyPrefix('node-redis') + 'setifabsent';
      assert.equal(await r.setIfAbsent(k, 'v'), 'OK');
      await assert.rejects(r.setIfAbsent(k, 'w'), (err) => {
        assert.ok(err instanceof ErrorReply, `expected ErrorReply, got ${err}`);
        assert.equal(err.message, `KEYEXISTS ${k}`);
        return true;
      });
      assert.equal(await r.get(k), 'v');
    });

    it('an error_reply inside multi() is reported through MultiErrorReply', async () => {
      const k = keyPrefix('node-redis') + 'setifabsent-multi';
      await r.set(k, 'v');
      await assert.rejects(r.multi().setIfAbsent(k, 'w').append(k, 'x').exec(), (err) => {
        assert.ok(err instanceof MultiErrorReply);
        assert.deepEqual(err.errorIndexes, [0]);
        assert.equal(err.replies[0].message, `KEYEXISTS ${k}`);
        assert.equal(err.replies[1], 2);
        return true;
      });
      assert.equal(await r.get(k), 'vx');
    });
  });

  describe('eval helpers and sendCommand', () => {
    it('eval / evalSha / scriptLoad / scriptExists', async () => {
      const k = keyPrefix('node-redis') + 'helpers';
      const lua = `-- ${k}\nreturn {KEYS[1], ARGV[1], tonumber(ARGV[2]) * 2}`;
      assert.deepEqual(await r.eval(lua, { keys: [k], arguments: ['a', '21'] }), [k, 'a', 42]);
      const sha = await r.scriptLoad(lua);
      assert.equal(sha, sha1(lua));
      assert.deepEqual(await r.scriptExists([sha, 'f'.repeat(40)]), [true, false]);
      assert.deepEqual(await r.evalSha(sha, { keys: [k], arguments: ['b', '1'] }), [k, 'b', 2]);
    });

    it('sendCommand with EVAL, SCRIPT LOAD and EVALSHA', async () => {
      const k = keyPrefix('node-redis') + 'send';
      const lua = `-- ${k}\nreturn redis.call('SET', KEYS[1], ARGV[1])`;
      assert.equal(await r.sendCommand(['EVAL', lua, '1', k, 'one']), 'OK');
      assert.equal(await r.get(k), 'one');
      const sha = await r.sendCommand(['SCRIPT', 'LOAD', lua]);
      assert.equal(sha, sha1(lua));
      assert.equal(await r.sendCommand(['EVALSHA', sha, '1', k, 'two']), 'OK');
      assert.equal(await r.get(k), 'two');
      assert.deepEqual(await r.sendCommand(['EVAL', "return {1, 'two', {3}}", '0']), [1, 'two', [3]]);
    });

    it('EVALSHA of an unknown script rejects with a NOSCRIPT ErrorReply', async () => {
      await assert.rejects(r.sendCommand(['EVALSHA', '0'.repeat(40), '0']), (err) => {
        assert.ok(err instanceof ErrorReply);
        assert.match(err.message, /^NOSCRIPT/);
        return true;
      });
    });

    it('error replies from scripts: error_reply, {err=...}, redis.call errors, Lua errors', async () => {
      const k = keyPrefix('node-redis') + 'errors';
      await r.rPush(k, 'x');
      const cases = [
        [["return redis.error_reply('MYERR custom failure')", '0'], /^MYERR custom failure$/],
        [["return {err = 'OTHERERR table form'}", '0'], /^OTHERERR table form$/],
        [["return redis.call('GET', KEYS[1])", '1', k], /^WRONGTYPE/],
        [["error('boom')", '0'], /boom/],
      ];
      for (const [args, re] of cases) {
        await assert.rejects(r.sendCommand(['EVAL', ...args]), (err) => {
          assert.ok(err instanceof ErrorReply, `expected ErrorReply for ${args[0]}, got ${err}`);
          assert.match(err.message, re);
          return true;
        });
      }
      // The connection is still fine afterwards.
      assert.equal(await r.ping(), 'PONG');
    });

    it('redis.pcall hands the error to the script', async () => {
      const k = keyPrefix('node-redis') + 'pcall';
      await r.set(k, 'nan');
      const lua = "local res = redis.pcall('INCR', KEYS[1]); if type(res) == 'table' and res.err then return 'caught: ' .. res.err end; return res";
      assert.match(await r.eval(lua, { keys: [k] }), /^caught: ERR value is not an integer/);
    });
  });
});
