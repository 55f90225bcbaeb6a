#!/usr/bin/env python3
"""hash_memory.py - bytes per small hash, with and without field TTLs, for
one or more hotkv-server binaries (say this branch and main).

For each binary it starts a fresh server (--threads 1), creates K hashes
of E fields each with pipelined HSET, and reports the growth of INFO memory
used_memory per hash; then gives one field of every hash a TTL (HEXPIRE)
and reports the growth again, and the OBJECT ENCODING of a sample. A
binary without HEXPIRE reports only the first number. A measuring tool,
not a test: it never fails on a bad number.

    bench/hash_memory.py --hotkv build/hotkv-server --hotkv /path/to/main/hotkv-server
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from resp import Error, RespConn  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def used_memory(c):
    info = c.cmd("INFO", "memory").decode()
    for line in info.split("\r\n"):
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory")


def pipeline(c, cmds, batch=1000):
    for i in range(0, len(cmds), batch):
        part = cmds[i:i + batch]
        c.send(b"".join(encode(*x) for x in part))
        for _ in part:
            rep = c.read()
            if isinstance(rep, Error):
                return rep
    return None


def encode(*args):
    from resp import encode as enc
    return enc(*args)


def measure(binary, keys, elems):
    port = free_port()
    work = tempfile.mkdtemp(prefix="hotkv-hashmem-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--threads", "1", "--save", "",
                             "--logfile", os.path.join(work, "log")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                c = RespConn("127.0.0.1", port, timeout=60)
                break
            except OSError:
                time.sleep(0.02)
        else:
            raise RuntimeError("server did not start")
        base = used_memory(c)
        cmds = []
        for k in range(keys):
            args = ["HSET", "hash:%d" % k]
            for f in range(elems):
                args += ["field:%d" % f, "value:%d" % f]
            cmds.append(args)
        pipeline(c, cmds)
        plain = used_memory(c)
        row = {"plain": (plain - base) / keys, "enc": c.cmd("OBJECT", "ENCODING", "hash:0").decode()}
        err = pipeline(c, [["HEXPIRE", "hash:%d" % k, 100000, "FIELDS", 1, "field:0"] for k in range(keys)])
        if err is None:
            row["ttl"] = (used_memory(c) - plain) / keys
            row["enc_ttl"] = c.cmd("OBJECT", "ENCODING", "hash:0").decode()
        c.close()
        return row
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hotkv", action="append", help="hotkv-server binary (repeatable)")
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--elems", type=int, default=10)
    a = ap.parse_args()
    bins = a.hotkv or ["build/hotkv-server"]
    print("| binary | bytes/hash (no TTL) | encoding | + bytes/hash with 1 field TTL | encoding |")
    print("|---|---|---|---|---|")
    for b in bins:
        row = measure(b, a.keys, a.elems)
        print("| %s | %.1f | %s | %s | %s |" % (b, row["plain"], row["enc"],
                                              "%.1f" % row["ttl"] if "ttl" in row else "-",
                                              row.get("enc_ttl", "-")))


if __name__ == "__main__":
    main()
