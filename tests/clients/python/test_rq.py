"""python-rq against the server: enqueue, burst workers (in-process and
forking), results, the failed-job registry, status transitions,
dependencies, retries, timeouts, scheduling. RQ drives the server with
MULTI/EXEC pipelines, WATCH, and a Lua script (Queue.empty)."""
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from conftest import HOST, PORT
from rq import Queue, Retry, SimpleWorker, Worker
from rq.command import send_shutdown_command
from rq.job import Job, JobStatus
from rq.results import Result

import rq_jobs


@pytest.fixture
def q(r):
    return Queue("clients-test", connection=r)


def server_has(*probe):
    """Whether the server under test knows the command `probe` starts with
    (sent as is; anything but an unknown-command error counts)."""
    import redis
    c = redis.Redis(host=HOST, port=PORT, socket_timeout=15)
    try:
        c.execute_command(*probe)
        return True
    except redis.exceptions.ResponseError as e:
        return "unknown command" not in str(e)
    finally:
        c.close()


# RQ (1.13) stores every job's result in a stream (XADD, read back with
# XREVRANGE) when the server reports version 5 or later, inside the same
# MULTI as the job's status: on a server without streams a worker's first
# finished job aborts that transaction. Those tests wait for streams; they
# say so instead of failing, and run as soon as the server has XADD.
needs_streams = pytest.mark.skipif(not server_has("XLEN", "rq-clients:probe"),
                                   reason="the server has no streams (XADD): RQ keeps job results in streams")
# RQ's worker commands (shutdown, kill-horse) travel over pub/sub.
needs_pubsub = pytest.mark.skipif(not server_has("PUBLISH", "rq-clients:probe", "x"),
                                  reason="the server has no pub/sub (PUBLISH): RQ sends worker commands over it")


HERE = os.path.dirname(os.path.abspath(__file__))
URL = f"redis://{HOST}:{PORT}/0"


def rq_cli(*args):
    """The `rq` command line, as a user would run it."""
    return [sys.executable, "-m", "rq.cli", *args]


def burst(r, *queues, worker_class=SimpleWorker, **kw):
    w = worker_class(list(queues), connection=r)
    worked = w.work(burst=True, logging_level="WARNING", **kw)
    return w, worked


@needs_streams
def test_enqueue_and_run_in_a_burst_worker(r, q):
    job = q.enqueue(rq_jobs.add, 2, 3)
    assert job.get_status() == JobStatus.QUEUED
    assert q.count == 1 and q.job_ids == [job.id]

    w, worked = burst(r, q)
    assert worked is True
    w.refresh()  # the counters live in the worker's hash on the server
    assert w.successful_job_count == 1
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value(refresh=True) == 5
    assert q.count == 0
    assert job.id in q.finished_job_registry.get_job_ids()

    fetched = Job.fetch(job.id, connection=r)
    assert fetched.is_finished
    assert fetched.return_value() == 5


@needs_streams
def test_status_transitions(r, q):
    job = q.enqueue(rq_jobs.report_state)
    assert job.get_status() == JobStatus.QUEUED
    assert job.enqueued_at is not None and job.started_at is None

    burst(r, q)

    seen = job.return_value(refresh=True)
    # While it ran, the job saw itself as started and in the started registry.
    assert seen["status"] == JobStatus.STARTED
    assert seen["in_started_registry"] is True
    assert seen["pid"] == os.getpid()  # SimpleWorker runs jobs in-process
    job.refresh()
    assert job.get_status() == JobStatus.FINISHED
    assert job.enqueued_at <= job.started_at <= job.ended_at
    assert job.id not in q.started_job_registry.get_job_ids()
    assert job.id in q.finished_job_registry.get_job_ids()


@needs_streams
def test_forking_worker(r, q):
    job = q.enqueue(rq_jobs.report_state)
    w, worked = burst(r, q, worker_class=Worker)
    assert worked is True
    seen = job.return_value(refresh=True)
    assert seen["status"] == JobStatus.STARTED
    assert seen["pid"] != os.getpid()  # ran in the forked work horse
    assert job.get_status() == JobStatus.FINISHED


@needs_streams
def test_failing_job_lands_in_failed_registry(r, q):
    job = q.enqueue(rq_jobs.fail, "bad input")
    w, _ = burst(r, q)
    w.refresh()
    assert w.failed_job_count == 1
    assert job.get_status() == JobStatus.FAILED
    assert job.is_failed
    assert job.id in q.failed_job_registry.get_job_ids()
    assert q.failed_job_registry.count == 1
    res = job.latest_result()
    assert res.type == Result.Type.FAILED
    assert "ValueError: bad input" in res.exc_string
    assert job.return_value(refresh=True) is None

    # Requeue from the failed registry, and it fails again.
    q.failed_job_registry.requeue(job.id)
    assert job.get_status() == JobStatus.QUEUED
    assert job.id not in q.failed_job_registry.get_job_ids()
    assert q.count == 1
    burst(r, q)
    assert job.get_status() == JobStatus.FAILED
    assert len(job.results()) == 2


@needs_streams
def test_dependent_job_is_deferred_until_its_parent_finishes(r, q):
    parent = q.enqueue(rq_jobs.record, "order", "parent")
    child = q.enqueue(rq_jobs.record, "order", "child", depends_on=parent)
    assert child.get_status() == JobStatus.DEFERRED
    assert child.id in q.deferred_job_registry.get_job_ids()
    assert q.job_ids == [parent.id]

    burst(r, q)
    assert parent.get_status() == JobStatus.FINISHED
    assert child.get_status() == JobStatus.FINISHED
    assert r.lrange("order", 0, -1) == [b"parent", b"child"]
    assert q.deferred_job_registry.count == 0


@needs_streams
def test_retry_then_fail(r, q):
    job = q.enqueue(rq_jobs.count_and_fail, "runs", retry=Retry(max=2))
    burst(r, q)
    assert r.get("runs") == b"3"
    job.refresh()
    assert job.retries_left == 0
    assert job.get_status() == JobStatus.FAILED
    assert job.id in q.failed_job_registry.get_job_ids()


@needs_streams
def test_job_timeout(r, q):
    job = q.enqueue(rq_jobs.sleep_for, 10, job_timeout=1)
    t0 = time.monotonic()
    burst(r, q)
    assert time.monotonic() - t0 < 6
    assert job.get_status() == JobStatus.FAILED
    assert "JobTimeoutException" in job.latest_result().exc_string


@needs_streams
def test_queues_are_served_in_priority_order(r):
    high = Queue("clients-high", connection=r)
    low = Queue("clients-low", connection=r)
    low.enqueue(rq_jobs.record, "order", "low-1")
    low.enqueue(rq_jobs.record, "order", "low-2")
    high.enqueue(rq_jobs.record, "order", "high")
    burst(r, high, low)
    assert r.lrange("order", 0, -1) == [b"high", b"low-1", b"low-2"]


def test_cancel(r, q):
    job = q.enqueue(rq_jobs.add, 1, 1)
    job.cancel()
    assert job.get_status() == JobStatus.CANCELED
    assert q.count == 0
    assert job.id in q.canceled_job_registry.get_job_ids()
    _, worked = burst(r, q)
    assert worked is False


def test_empty_queue_runs_a_lua_script(r, q):
    jobs = [q.enqueue(rq_jobs.add, i, i) for i in range(3)]
    assert q.empty() == 3
    assert q.count == 0
    assert not any(Job.exists(j.id, connection=r) for j in jobs)


@needs_streams
def test_enqueue_many_and_meta(r, q):
    jobs = q.enqueue_many([Queue.prepare_data(rq_jobs.add, (i, 1), job_id=f"many-{i}") for i in range(5)])
    assert [j.id for j in jobs] == [f"many-{i}" for i in range(5)]
    assert q.count == 5
    jobs[0].meta["progress"] = 50
    jobs[0].save_meta()
    assert Job.fetch("many-0", connection=r).meta == {"progress": 50}

    burst(r, q)
    assert [Job.fetch(f"many-{i}", connection=r).return_value() for i in range(5)] == [1, 2, 3, 4, 5]


@needs_streams
def test_scheduled_job_runs_when_due(r, q):
    job = q.enqueue_at(datetime.now(timezone.utc) - timedelta(seconds=1), rq_jobs.add, 4, 4)
    assert job.get_status() == JobStatus.SCHEDULED
    assert job.id in q.scheduled_job_registry.get_job_ids()
    assert q.count == 0

    burst(r, q, with_scheduler=True)
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value(refresh=True) == 8


@needs_streams
def test_rq_worker_command_line_in_burst_mode(r, q):
    job = q.enqueue(rq_jobs.add, 20, 22)
    bad = q.enqueue(rq_jobs.fail, "from the cli")
    proc = subprocess.run(
        rq_cli("worker", "--burst", "--url", URL, "--path", HERE, "--logging_level", "WARNING", q.name),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value(refresh=True) == 42
    assert bad.get_status() == JobStatus.FAILED
    assert bad.id in q.failed_job_registry.get_job_ids()


@needs_streams
@needs_pubsub
def test_shutdown_command_stops_a_running_worker(r, q):
    """`send_shutdown_command` PUBLISHes to the worker's pubsub channel; the
    worker (no --burst: it waits for jobs) must exit."""
    name = f"clients-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        rq_cli("worker", "--url", URL, "--path", HERE, "--name", name, "--logging_level", "WARNING", q.name),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while name not in [w.name for w in Worker.all(connection=r)]:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "the worker did not register"
            time.sleep(0.05)
        time.sleep(0.5)  # let its pubsub listener subscribe
        send_shutdown_command(r, name)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("the worker ignored the shutdown command")
        assert proc.returncode == 0, proc.stdout.read()
        assert name not in [w.name for w in Worker.all(connection=r)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
