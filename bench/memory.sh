#!/usr/bin/env bash
# Bytes per key: HotKV vs redis-server for the same data.
#
# Loads N string keys (10-byte names "key:NNNNNN", 16-byte values) into each
# server with `redis-cli --pipe`, with and without a TTL, and reports the
# growth of used_memory (INFO memory: each server's own allocator
# accounting) and of the process RSS, divided by N. Both servers run with one
# worker thread, pinned to CPU 0.
#
# usage: bench/memory.sh [-n keys]        (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
N=1000000
while getopts "n:" o; do case $o in n) N=$OPTARG ;; *) exit 2 ;; esac; done

scripts/deps.sh bench >/dev/null
make -s build/hotkv-server >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
used_memory() { redis-cli -p "$1" info memory | awk -F: '/^used_memory:/ {gsub("\r",""); print $2}'; }

gen() { # $1 = extra SET options
    awk -v n="$N" -v extra="$1" 'BEGIN {
        for (i = 0; i < n; i++) {
            k = sprintf("key:%06d", i); v = sprintf("val:%012d", i);
            if (extra == "") printf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v);
            else printf("*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nEX\r\n$6\r\n100000\r\n", length(k), k, length(v), v);
        }
    }'
}

measure() { # name, start command...
    local name=$1; shift
    for ttl in "" "EX"; do
        # A fresh server per row, so RSS growth is not hidden by reused pages.
        local port; port=$(free_port)
        taskset -c 0 "$@" --port "$port" >/dev/null 2>&1 &
        local pid=$!
        for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
        sleep 0.5
        local m0 r0 m1 r1
        m0=$(used_memory "$port"); r0=$(rss_kb "$pid")
        gen "$ttl" | redis-cli -p "$port" --pipe >/dev/null
        sleep 0.5
        m1=$(used_memory "$port"); r1=$(rss_kb "$pid")
        local keys; keys=$(redis-cli -p "$port" dbsize)
        printf '| %s | %s | %s | %.1f | %.1f |\n' "$name" "$([ -n "$ttl" ] && echo "with TTL" || echo "no TTL")" "$keys" \
            "$(echo "($m1 - $m0) / $N" | bc -l)" "$(echo "($r1 - $r0) * 1024 / $N" | bc -l)"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
}

echo "| server | keys | count | used_memory B/key | RSS B/key |"
echo "|---|---|---|---|---|"
measure hotkv ./build/hotkv-server --threads 1 --save "" --appendonly no --bind 127.0.0.1
measure redis redis-server --save "" --appendonly no --bind 127.0.0.1
