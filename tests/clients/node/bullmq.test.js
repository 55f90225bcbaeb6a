'use strict';
// BullMQ (job queues on Lua scripts, sorted sets and streams) through its
// own API: add, process and complete; retries with exponential and fixed
// backoff; delayed jobs; job schedulers (repeatable jobs); flows (a parent
// that waits for its children); QueueEvents, which reads the queue's event
// stream with XREAD BLOCK; and several workers with concurrency sharing 500
// jobs, each completed exactly once. run.sh starts the server with
// --threads 4 for this suite, so the workers' connections land on
// different server threads.

const { describe, it: nodeIt, before, after, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { Queue, Worker, QueueEvents, FlowProducer, UnrecoverableError } = require('bullmq');
const { Redis } = require('ioredis');
const { HOST, PORT, sha1, sleep } = require('./common');

// Keys live under clients:bullmq:<queue>:...; each test has its own queues.
const PREFIX = 'clients:bullmq';
// BullMQ wants maxRetriesPerRequest: null on the connections of workers
// and QueueEvents (their blocking commands must not be retried by ioredis).
const connection = { host: HOST, port: PORT, maxRetriesPerRequest: null, retryStrategy: () => null };

let seq = 0;
function queueName(label) {
  seq += 1;
  return `${label}-${process.pid}-${seq}`;
}

// BullMQ's Lua scripts by SHA1, as ioredis sends them (EVALSHA, or EVAL
// of the same text).
let scriptsBySha;
function bullmqScript(sha) {
  if (!scriptsBySha) {
    scriptsBySha = new Map();
    try {
      for (const sc of Object.values(require('bullmq/dist/cjs/scripts'))) {
        if (sc && typeof sc.content === 'string') scriptsBySha.set(sha1(sc.content), sc);
      }
    } catch {
      // A BullMQ without that module: errors are shown as they come.
    }
  }
  return scriptsBySha.get(sha);
}

// A server error from inside one of BullMQ's scripts names the script's
// SHA1 and a line; quote that line, which shows the command the server
// refused, and leave out the whole script ioredis attaches to the error.
function explain(e) {
  if (!e || typeof e.message !== 'string' || (!e.command && e.name !== 'ReplyError')) return e;
  const m = /script: ([0-9a-f]{40}), on @user_script:(\d+)/.exec(e.message);
  let where = '';
  const sc = m && bullmqScript(m[1]);
  if (sc) {
    const line = sc.content.split('\n')[Number(m[2]) - 1];
    if (line) where = ` [${sc.name}, line ${m[2]}: ${line.trim()}]`;
  }
  const via = e.command && e.command.name ? ` (sent as ${e.command.name.toUpperCase()})` : '';
  return new Error(`${e.message}${where}${via}`);
}

// node:test's it, with server errors shown short (explain) rather than with
// the whole script the command carried.
function it(name, fn) {
  return nodeIt(name, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      throw explain(e);
    }
  });
}

// Everything a test opens, closed after it (also when it fails), and every
// 'error' any of them emitted: a server that rejects a command BullMQ sends
// shows up here with the server's own error text.
let open = [];
let errors = [];
function track(obj, what) {
  obj.on('error', (e) => {
    const x = explain(e);
    errors.push(new Error(`${what}: ${x && x.message ? x.message : x}`));
  });
  open.push(obj);
  return obj;
}

const makeQueue = (name, opts = {}) => track(new Queue(name, { connection, prefix: PREFIX, ...opts }), `Queue ${name}`);
// The queues are new, so the listener reads their event stream from the
// start (lastEventId 0-0) and then blocks for more: it cannot miss an event
// that was written before its first XREAD reached the server.
const makeEvents = async (name) => {
  const ev = track(
    new QueueEvents(name, { connection, prefix: PREFIX, blockingTimeout: 5000, lastEventId: '0-0' }),
    `QueueEvents ${name}`,
  );
  await ev.waitUntilReady();
  return ev;
};
// drainDelay (seconds): how long an idle worker blocks waiting for a job;
// short, so close() never waits long.
const makeWorker = (name, fn, opts = {}) =>
  track(new Worker(name, fn, { connection, prefix: PREFIX, drainDelay: 1, ...opts }), `Worker ${name}`);

// Poll `pred` until it holds; fail with what was awaited, the errors seen
// and `detail()` when it does not within `ms`, or at once when BullMQ
// reported an error (a job whose script failed may never finish).
async function until(what, pred, ms = 10000, detail = () => '') {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (errors.length || Date.now() > end) {
      await sleep(200); // let the errors of the same moment arrive too
      const errs = errors.map((e) => e.message);
      const extra = await detail();
      throw new Error(
        (errs.length ? `error while waiting for ${what}` : `timed out after ${ms} ms waiting for ${what}`) +
          (extra ? `; ${extra}` : '') +
          (errs.length ? `; errors: ${errs.slice(0, 5).join(' | ')}` : ''),
      );
    }
    await sleep(20);
  }
}

function assertNoErrors() {
  assert.deepEqual(errors.map((e) => e.message), [], 'no errors from BullMQ or the server');
}

describe('bullmq', { timeout: 60000 }, () => {
  let admin;

  before(async () => {
    admin = new Redis({ host: HOST, port: PORT, maxRetriesPerRequest: 0, retryStrategy: () => null });
    admin.on('error', () => {});
    assert.equal(await admin.ping(), 'PONG');
  });

  afterEach(async () => {
    const objs = open.reverse();
    open = [];
    errors = [];
    // Workers first (they stop taking jobs), then queues and listeners.
    await Promise.all(objs.filter((o) => o instanceof Worker).map((o) => o.close().catch(() => {})));
    await Promise.all(objs.filter((o) => !(o instanceof Worker)).map((o) => o.close().catch(() => {})));
  });

  after(async () => {
    const keys = [];
    let cursor = '0';
    do {
      const [next, batch] = await admin.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    for (let i = 0; i < keys.length; i += 500) await admin.del(...keys.slice(i, i + 500));
    await admin.quit().catch(() => admin.disconnect());
  });

  it('adds a job, a worker processes it, and it completes with its return value', async () => {
    const name = queueName('basic');
    const queue = makeQueue(name);
    const added = await queue.add('sum', { a: 2, b: 3 }, { removeOnComplete: false });
    assert.equal(await added.getState(), 'waiting');
    assert.deepEqual(await queue.getJobCounts('waiting', 'active', 'completed'), { waiting: 1, active: 0, completed: 0 });

    const seen = [];
    const worker = makeWorker(name, async (job) => {
      seen.push(job.id);
      assert.equal(job.name, 'sum');
      return job.data.a + job.data.b;
    });
    const done = new Promise((resolve) => worker.on('completed', (job, result) => resolve([job.id, result])));
    assert.deepEqual(await done, [added.id, 5]);

    const job = await queue.getJob(added.id);
    assert.equal(await job.getState(), 'completed');
    assert.equal(job.returnvalue, 5);
    assert.equal(job.attemptsMade, 1);
    assert.ok(job.processedOn >= job.timestamp && job.finishedOn >= job.processedOn);
    assert.deepEqual(seen, [added.id]);
    assert.deepEqual(await queue.getJobCounts('waiting', 'active', 'completed', 'failed'), {
      waiting: 0,
      active: 0,
      completed: 1,
      failed: 0,
    });
    assertNoErrors();
  });

  it('retries a failing job with exponential backoff until it completes', async () => {
    const name = queueName('exp');
    const queue = makeQueue(name);
    const delay = 100;
    const starts = [];
    const worker = makeWorker(name, async (job) => {
      starts.push(Date.now());
      if (job.attemptsStarted < 3) throw new Error(`attempt ${job.attemptsStarted} fails`);
      return 'third time lucky';
    });
    const failures = [];
    worker.on('failed', (job, err) => failures.push(err.message));
    const added = await queue.add('flaky', {}, { attempts: 3, backoff: { type: 'exponential', delay } });

    await until('the job to complete after two failures', async () => (await added.getState()) === 'completed');
    const job = await queue.getJob(added.id);
    assert.equal(job.returnvalue, 'third time lucky');
    assert.equal(job.attemptsStarted, 3);
    assert.equal(starts.length, 3);
    assert.deepEqual(failures, ['attempt 1 fails', 'attempt 2 fails']);
    // Exponential: the retries wait delay * 2^(n-1), 100 then 200 ms (the
    // clock of the server and this process are the same machine's).
    assert.ok(starts[1] - starts[0] >= delay - 5, `first retry after ${starts[1] - starts[0]} ms, want >= ${delay}`);
    assert.ok(starts[2] - starts[1] >= 2 * delay - 5, `second retry after ${starts[2] - starts[1]} ms, want >= ${2 * delay}`);
    assert.deepEqual(await queue.getJobCounts('completed', 'failed', 'delayed'), { completed: 1, failed: 0, delayed: 0 });
    assertNoErrors();
  });

  it('a job that keeps failing with fixed backoff ends failed after its attempts', async () => {
    const name = queueName('fixed');
    const queue = makeQueue(name);
    // Long enough for the poll below to see the job waiting out its backoff
    // on a busy machine.
    const delay = 400;
    const starts = [];
    const worker = makeWorker(name, async () => {
      starts.push(Date.now());
      throw new Error('always broken');
    });
    const added = await queue.add('doomed', { x: 1 }, { attempts: 3, backoff: { type: 'fixed', delay } });
    // While it waits for a retry it is delayed.
    await until('the first failure', () => starts.length >= 1);
    await until('the job to be delayed for a retry', async () => (await added.getState()) === 'delayed');

    await until('the job to fail for good', async () => (await added.getState()) === 'failed');
    const job = await queue.getJob(added.id);
    assert.equal(job.failedReason, 'always broken');
    assert.equal(job.attemptsMade, 3);
    assert.equal(starts.length, 3);
    assert.ok(Array.isArray(job.stacktrace) && job.stacktrace.length >= 1);
    for (let i = 1; i < starts.length; i++) {
      const gap = starts[i] - starts[i - 1];
      assert.ok(gap >= delay - 5, `retry ${i} after ${gap} ms, want >= ${delay}`);
    }
    assert.deepEqual(await queue.getJobCounts('completed', 'failed', 'delayed', 'waiting'), {
      completed: 0,
      failed: 1,
      delayed: 0,
      waiting: 0,
    });
    // An UnrecoverableError fails at once, whatever attempts are left.
    await worker.close();
    const fatal = await queue.add('fatal', {}, { attempts: 5, backoff: { type: 'fixed', delay } });
    const w2 = makeWorker(name, async () => {
      throw new UnrecoverableError('give up');
    });
    await until('the unrecoverable job to fail', async () => (await fatal.getState()) === 'failed');
    const f = await queue.getJob(fatal.id);
    assert.equal(f.failedReason, 'give up');
    assert.equal(f.attemptsMade, 1);
    await w2.close();
    assertNoErrors();
  });

  it('a delayed job waits for its delay, then runs', async () => {
    const name = queueName('delayed');
    const queue = makeQueue(name);
    const ran = [];
    makeWorker(name, async (job) => {
      ran.push({ id: job.id, at: Date.now() });
      return 'late';
    });
    const delay = 600;
    const t0 = Date.now();
    const later = await queue.add('later', {}, { delay });
    const now = await queue.add('now', {});
    assert.equal(await later.getState(), 'delayed');
    await until('the immediate job', async () => (await now.getState()) === 'completed');
    // (On a machine too busy to get here well within the delay, the job
    // may rightly be due already.)
    if (Date.now() - t0 < delay - 100) {
      assert.equal(await later.getState(), 'delayed', 'the delayed job must not run before its delay');
      assert.equal((await queue.getJobCounts('delayed')).delayed, 1);
    }

    await until('the delayed job', async () => (await later.getState()) === 'completed');
    const job = await queue.getJob(later.id);
    assert.ok(job.processedOn - job.timestamp >= delay, `ran ${job.processedOn - job.timestamp} ms after it was added`);
    const entry = ran.find((r) => r.id === later.id);
    assert.ok(entry.at - t0 >= delay - 5, `ran ${entry.at - t0} ms after add`);
    assert.deepEqual(ran.map((r) => r.id), [now.id, later.id]);
    assertNoErrors();
  });

  it('a job scheduler repeats a job every N ms until it is removed', async () => {
    const name = queueName('repeat');
    const queue = makeQueue(name);
    const every = 250;
    const runs = [];
    makeWorker(name, async (job) => {
      runs.push({ at: Date.now(), name: job.name, data: job.data, id: job.id });
      return runs.length;
    });
    await queue.upsertJobScheduler('tick', { every }, { name: 'tick', data: { kind: 'heartbeat' } });
    const schedulers = await queue.getJobSchedulers();
    assert.equal(schedulers.length, 1);
    assert.equal(schedulers[0].key, 'tick');
    assert.equal(Number(schedulers[0].every), every);

    await until('three repetitions', () => runs.length >= 3, 10000, () => `${runs.length} runs`);
    assert.ok(runs.every((r) => r.name === 'tick' && r.data.kind === 'heartbeat'));
    assert.equal(new Set(runs.map((r) => r.id)).size, runs.length, 'every repetition is its own job');
    // Repetitions sit on the every-N-ms grid: never two in one period.
    for (let i = 1; i < runs.length; i++) {
      const gap = runs[i].at - runs[i - 1].at;
      assert.ok(gap >= every / 2, `repetitions ${i - 1} and ${i} only ${gap} ms apart`);
    }

    assert.equal(await queue.removeJobScheduler('tick'), true);
    assert.deepEqual(await queue.getJobSchedulers(), []);
    const after = runs.length;
    await sleep(3 * every);
    assert.ok(runs.length <= after + 1, `${runs.length - after} runs after the scheduler was removed`);
    assert.equal((await queue.getJobCounts('delayed')).delayed, 0);
    assertNoErrors();
  });

  it('a flow: the parent runs after its children and sees their results', async () => {
    const parentQ = queueName('flow-parent');
    const childQ = queueName('flow-child');
    const parents = makeQueue(parentQ);
    makeQueue(childQ);
    const flows = track(new FlowProducer({ connection, prefix: PREFIX }), 'FlowProducer');
    const finished = [];
    makeWorker(childQ, async (job) => {
      await sleep(20 * job.data.n);
      finished.push({ name: job.name, at: Date.now() });
      return job.data.n * 10;
    });
    let parentSaw;
    makeWorker(parentQ, async (job) => {
      parentSaw = { at: Date.now(), values: await job.getChildrenValues() };
      return Object.values(parentSaw.values).reduce((a, b) => a + b, 0);
    });

    const tree = await flows.add({
      name: 'report',
      queueName: parentQ,
      data: {},
      children: [1, 2, 3, 4].map((n) => ({ name: `part-${n}`, queueName: childQ, data: { n } })),
    });
    assert.equal(tree.children.length, 4);
    const state = await tree.job.getState();
    assert.ok(['waiting-children', 'waiting', 'active', 'completed'].includes(state), state);

    await until('the parent to complete', async () => (await tree.job.getState()) === 'completed');
    const parent = await parents.getJob(tree.job.id);
    assert.equal(parent.returnvalue, 100);
    assert.equal(finished.length, 4);
    assert.ok(parentSaw.at >= Math.max(...finished.map((f) => f.at)), 'the parent ran after every child finished');
    assert.deepEqual(Object.values(parentSaw.values).sort((a, b) => a - b), [10, 20, 30, 40]);
    for (const child of tree.children) {
      assert.equal(await child.job.getState(), 'completed');
    }
    const deps = await parent.getDependenciesCount();
    assert.equal(deps.processed, 4);
    assert.equal(deps.unprocessed, 0);
    assertNoErrors();
  });

  it('QueueEvents receives added, active, progress, completed and failed events', async () => {
    const name = queueName('events');
    const queue = makeQueue(name);
    const events = await makeEvents(name);
    const got = { added: [], active: [], progress: [], completed: [], failed: [] };
    for (const kind of Object.keys(got)) events.on(kind, (args) => got[kind].push(args));

    makeWorker(name, async (job) => {
      await job.updateProgress(50);
      await job.updateProgress({ step: 'done' });
      if (job.data.fail) throw new Error('meant to fail');
      return { doubled: job.data.v * 2 };
    });
    const ok = await queue.add('ok', { v: 21 });
    const bad = await queue.add('bad', { fail: true });
    // waitUntilFinished rides on the same event stream.
    assert.deepEqual(await ok.waitUntilFinished(events, 10000), { doubled: 42 });
    await assert.rejects(bad.waitUntilFinished(events, 10000), /meant to fail/);

    await until('all events', () => got.completed.length >= 1 && got.failed.length >= 1 && got.progress.length >= 4);
    assert.deepEqual(got.added.map((a) => a.jobId), [ok.id, bad.id]);
    assert.deepEqual(new Set(got.active.map((a) => a.jobId)), new Set([ok.id, bad.id]));
    assert.deepEqual(got.completed, [{ jobId: ok.id, returnvalue: { doubled: 42 }, prev: 'active' }]);
    assert.equal(got.failed.length, 1);
    assert.equal(got.failed[0].jobId, bad.id);
    assert.equal(got.failed[0].failedReason, 'meant to fail');
    const okProgress = got.progress.filter((p) => p.jobId === ok.id).map((p) => p.data);
    assert.deepEqual(okProgress, [50, { step: 'done' }]);
    assertNoErrors();
  });

  it('four workers with concurrency share 500 jobs: each completes exactly once, and the events arrive', async () => {
    const name = queueName('many');
    const queue = makeQueue(name);
    const events = await makeEvents(name);
    const completedEvents = new Map();
    events.on('completed', ({ jobId }) => completedEvents.set(jobId, (completedEvents.get(jobId) || 0) + 1));
    const failedEvents = [];
    events.on('failed', (args) => failedEvents.push(args));

    const N = 500;
    const processed = new Map(); // job id -> times its processor ran
    const byN = new Map(); // data.n -> times
    const perWorker = [0, 0, 0, 0];
    const workers = perWorker.map((_, w) => {
      const worker = makeWorker(
        name,
        async (job) => {
          processed.set(job.id, (processed.get(job.id) || 0) + 1);
          byN.set(job.data.n, (byN.get(job.data.n) || 0) + 1);
          perWorker[w] += 1;
          if (job.data.n % 7 === 0) await sleep(1 + (job.data.n % 5));
          return job.data.n;
        },
        { concurrency: 8 },
      );
      return worker;
    });
    const completedByWorkers = new Map();
    for (const worker of workers) {
      worker.on('completed', (job, result) => {
        assert.equal(result, job.data.n);
        completedByWorkers.set(job.id, (completedByWorkers.get(job.id) || 0) + 1);
      });
    }
    await Promise.all(workers.map((w) => w.waitUntilReady()));

    // Half in one addBulk (one MULTI), half one by one, concurrently.
    const bulk = await queue.addBulk(Array.from({ length: N / 2 }, (_, i) => ({ name: 'job', data: { n: i } })));
    const single = await Promise.all(Array.from({ length: N / 2 }, (_, i) => queue.add('job', { n: N / 2 + i })));
    const ids = [...bulk, ...single].map((j) => j.id);
    assert.equal(new Set(ids).size, N, 'every job got its own id');

    const progress = () =>
      `${processed.size} processed, ${completedByWorkers.size} completed by workers, ${completedEvents.size} completed events`;
    await until('every job to complete', () => completedByWorkers.size >= N, 40000, progress);
    await until('every completed event', () => completedEvents.size >= N, 10000, progress);

    const twice = [...processed].filter(([, n]) => n !== 1);
    assert.deepEqual(twice, [], 'no job ran twice');
    assert.equal(processed.size, N);
    assert.deepEqual(
      [...byN.keys()].sort((a, b) => a - b),
      Array.from({ length: N }, (_, i) => i),
    );
    assert.ok([...byN.values()].every((n) => n === 1));
    assert.deepEqual([...completedByWorkers.values()].filter((n) => n !== 1), []);
    assert.deepEqual([...completedEvents.values()].filter((n) => n !== 1), [], 'one completed event per job');
    assert.deepEqual(new Set(completedEvents.keys()), new Set(ids));
    assert.deepEqual(failedEvents, []);
    assert.equal(perWorker.reduce((a, b) => a + b, 0), N);
    assert.ok(perWorker.filter((n) => n > 0).length >= 2, `jobs per worker: ${perWorker.join(', ')}`);
    assert.deepEqual(await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'), {
      waiting: 0,
      active: 0,
      delayed: 0,
      completed: N,
      failed: 0,
    });
    assertNoErrors();
  });
});
