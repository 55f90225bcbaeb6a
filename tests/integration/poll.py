"""Waiting for server state that settles asynchronously, with a deadline.

The server applies some things after the reply that caused them has been
sent: a connection the client closed is counted until its worker reads the
EOF, a freed block is returned on the worker's next loop turn. On a loaded
machine (sanitizer builds, two cores shared with the test) that can take
far longer than any fixed sleep a test could afford, so tests poll for the
state they need instead. This is no retry of a failing assertion: the
condition polled for is the exact state the test then relies on, and a
state that never comes fails the test at the deadline with what was seen.
"""
import time

DEFAULT_TIMEOUT = 10.0


def wait_until(probe, ok, timeout=DEFAULT_TIMEOUT, interval=0.02, what="condition"):
    """Call probe() until ok(value) holds; return that value. Fails with
    the last value seen once timeout seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if ok(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1fs waiting for %s; last seen: %r" % (timeout, what, value))
        time.sleep(interval)


def info_field(conn, section, field):
    """One INFO field as text, through a RespConn or a redis.Redis."""
    if hasattr(conn, "cmd"):
        text = conn.cmd("INFO", section)
    else:
        text = conn.execute_command("INFO", section)
    if isinstance(text, bytes):
        text = text.decode()
    for line in text.split("\r\n"):
        if line.startswith(field + ":"):
            return line[len(field) + 1:]
    raise AssertionError("INFO %s has no %s field" % (section, field))


def connected_clients(conn):
    return int(info_field(conn, "clients", "connected_clients"))


def wait_connected_clients(conn, n, timeout=DEFAULT_TIMEOUT):
    """Wait until INFO clients reports exactly n connections (the asking
    one included): connections closed earlier have all been processed."""
    return wait_until(lambda: connected_clients(conn), lambda v: v == n, timeout,
                      what="connected_clients == %d" % n)


def wait_probe_gone(conn, timeout=DEFAULT_TIMEOUT):
    """On a server the fixtures just started, with conn its only client:
    wait until the readiness probe's connection has been accepted and its
    close processed. Each worker accepts from its own SO_REUSEPORT socket,
    so the probe may still wait in another worker's backlog after conn was
    served: connected_clients == 1 alone does not prove it gone, the
    accept counter having seen both connections first does."""
    def probe():
        accepted = int(info_field(conn, "stats", "total_connections_received"))
        return accepted, connected_clients(conn)

    return wait_until(probe, lambda v: v[0] >= 2 and v[1] == 1, timeout,
                      what="(total_connections_received >= 2, connected_clients == 1)")
