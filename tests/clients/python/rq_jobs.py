"""Job functions for test_rq.py. RQ stores a job's function by its dotted
name, so they live in a module the worker (and a forked work horse) can
import."""
import os
import time

from rq import get_current_job
from rq.registry import StartedJobRegistry


def add(a, b):
    return a + b


def fail(message):
    raise ValueError(message)


def count_and_fail(counter_key):
    """Counts its runs in `counter_key`, then fails."""
    job = get_current_job()
    job.connection.incr(counter_key)
    raise RuntimeError("failing on purpose")


def report_state():
    """What the job sees of itself while it runs."""
    job = get_current_job()
    started = StartedJobRegistry(job.origin, connection=job.connection)
    return {
        "status": job.get_status(refresh=True),
        "in_started_registry": job.id in started.get_job_ids(),
        "pid": os.getpid(),
    }


def record(list_key, item):
    """Appends `item` to the list `list_key` (to see the order jobs ran in)."""
    get_current_job().connection.rpush(list_key, item)
    return item


def sleep_for(seconds):
    time.sleep(seconds)
    return seconds
