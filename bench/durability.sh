#!/usr/bin/env bash
# appendfsync always, crash after crash: every acknowledged write survives.
#
# Each cycle starts hotkv-server (4 worker threads, appendonly yes,
# appendfsync always) on the same data directory, lets 8 writers write
# their own sequence of keys (w<i>:<n> = n, some pipelined) for a random
# 0.2-1.5 s, kills the server with SIGKILL while they write, restarts it
# and checks that, for every writer, every key up to the last one whose
# reply arrived is there. Between cycles the AOF keeps growing (a rewrite
# is asked for now and then, so cycles also crash in the middle of one).
# Prints one line per cycle and a summary; exits 1 on the first loss.
#
# usage: bench/durability.sh [-n cycles] [-b hotkv-server]   (default 100, build/hotkv-server)
set -euo pipefail
cd "$(dirname "$0")/.."
CYCLES=100
BIN=build/hotkv-server
while getopts "n:b:" o; do case $o in n) CYCLES=$OPTARG ;; b) BIN=$OPTARG ;; *) exit 2 ;; esac; done
[ "$BIN" != build/hotkv-server ] || make -s build/hotkv-server >/dev/null
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

exec "$PY" - "$BIN" "$CYCLES" <<'PYEOF'
import os, random, shutil, socket, subprocess, sys, tempfile, threading, time

binary, cycles = os.path.abspath(sys.argv[1]), int(sys.argv[2])
data = tempfile.mkdtemp(prefix="hotkv-durability-")
WRITERS = 8


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start():
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--threads", "4", "--dir", data,
                             "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                             "--logfile", os.path.join(data, "server.log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                s.close()
                break
            s.close()
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            sys.exit("server did not start; see %s/server.log" % data)
        time.sleep(0.05)
    return proc, port


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Reader:
    def __init__(self, sock):
        self.s, self.buf = sock, b""

    def reply(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise OSError("closed")
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line


def writer(port, prefix, start_n, acked, stop):
    try:
        s = socket.create_connection(("127.0.0.1", port))
        r = Reader(s)
        n = start_n
        depth = random.choice([1, 1, 4, 16])
        while not stop.is_set():
            s.sendall(b"".join(cmd("SET", "%s:%d" % (prefix, n + i), n + i) for i in range(depth)))
            for i in range(depth):
                if r.reply() != b"+OK":
                    raise OSError("unexpected reply")
                acked[0] = n + i
            n += depth
    except OSError:
        pass


def check(port, prefix, first, last):
    s = socket.create_connection(("127.0.0.1", port))
    r = Reader(s)
    missing = []
    for lo in range(first, last + 1, 500):
        hi = min(last, lo + 499)
        s.sendall(b"".join(cmd("EXISTS", "%s:%d" % (prefix, n)) for n in range(lo, hi + 1)))
        for n in range(lo, hi + 1):
            if r.reply() != b":1":
                missing.append(n)
    s.close()
    return missing


next_n = [0] * WRITERS
cycle_start = [0] * WRITERS
total = 0
t0 = time.time()
try:
    for cycle in range(1, cycles + 1):
        proc, port = start()
        if cycle > 1:
            # What the previous cycle acknowledged is all there.
            for w in range(WRITERS):
                if next_n[w] > 0:
                    miss = check(port, "w%d" % w, cycle_start[w], next_n[w] - 1)
                    if miss:
                        print("cycle %d: writer %d lost %d acknowledged writes (first %d)" % (cycle, w, len(miss),
                                                                                           miss[0]))
                        sys.exit(1)
        cycle_start = list(next_n)
        stop = threading.Event()
        acked = [[next_n[w] - 1] for w in range(WRITERS)]
        ts = [threading.Thread(target=writer, args=(port, "w%d" % w, next_n[w], acked[w], stop))
              for w in range(WRITERS)]
        for t in ts:
            t.start()
        if random.random() < 0.2:
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(cmd("BGREWRITEAOF"))
            s.close()
        time.sleep(random.uniform(0.2, 1.5))
        proc.kill()
        proc.wait()
        stop.set()
        for t in ts:
            t.join(30)
        wrote = sum(acked[w][0] + 1 - next_n[w] for w in range(WRITERS))
        total += wrote
        for w in range(WRITERS):
            next_n[w] = acked[w][0] + 1
        print("cycle %d: %d acknowledged writes, then SIGKILL" % (cycle, wrote), flush=True)
    proc, port = start()
    for w in range(WRITERS):
        miss = check(port, "w%d" % w, cycle_start[w], next_n[w] - 1)
        if miss:
            print("final check: writer %d lost %d acknowledged writes (first %d)" % (w, len(miss), miss[0]))
            sys.exit(1)
    proc.terminate()
    proc.wait()
    print("%d cycles, %d acknowledged writes, none lost (%.0f s)" % (cycles, total, time.time() - t0))
finally:
    shutil.rmtree(data, ignore_errors=True)
PYEOF
