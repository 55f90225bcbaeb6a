"""Fixtures for the Python client tests.

run.sh starts the server and passes its address in SERVER_HOST and
SERVER_PORT (default 127.0.0.1:6379).

  r          redis.Redis on db 0, flushed before each test
  r2         a second, independent client (its own connection pool)
  new_client factory for more independent clients
"""
import os
import sys

import pytest
import redis

# rq_jobs must be importable by workers (and by forked work horses).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

HOST = os.environ.get("SERVER_HOST", "127.0.0.1")
PORT = int(os.environ.get("SERVER_PORT", "6379"))


@pytest.fixture
def new_client():
    made = []

    def make(**kw):
        c = redis.Redis(host=HOST, port=PORT, socket_timeout=15, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def r(new_client):
    c = new_client()
    c.flushdb()
    return c


@pytest.fixture
def r2(new_client, r):
    return new_client()
