#!/usr/bin/env bash
# Bytes per key: HotKV vs redis-server for the same data.
#
# Loads N string keys (10-byte names "key:NNNNNN") into each server with
# `redis-cli --pipe`: 16-byte values without and with a TTL, and 256-byte
# values. Reports the growth of used_memory (INFO memory: each server's own
# allocator accounting) and of the process RSS, divided by N, and how far
# the used_memory growth is from the RSS growth (the accounting's accuracy).
# Both servers run with one worker thread, pinned to CPU 0.
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

gen() { # $1 = extra SET options, $2 = value size
    awk -v n="$N" -v extra="$1" -v vs="$2" 'BEGIN {
        pad = sprintf("%*s", vs - 16, ""); gsub(/ /, "v", pad)
        for (i = 0; i < n; i++) {
            k = sprintf("key:%06d", i); v = sprintf("val:%012d", i) pad;
            if (extra == "") printf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v);
            else printf("*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nEX\r\n$6\r\n100000\r\n", length(k), k, length(v), v);
        }
    }'
}

measure() { # name, start command...
    local name=$1; shift
    for row in "16 " "16 EX" "256 "; do
        local vsize=${row% *} ttl=${row#* }
        # A fresh server per row, so RSS growth is not hidden by reused pages.
        local port; port=$(free_port)
        taskset -c 0 "$@" --port "$port" >/dev/null 2>&1 &
        local pid=$!
        for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
        sleep 0.5
        local m0 r0 m1 r1
        m0=$(used_memory "$port"); r0=$(rss_kb "$pid")
        gen "$ttl" "$vsize" | redis-cli -p "$port" --pipe >/dev/null
        sleep 0.5
        m1=$(used_memory "$port"); r1=$(rss_kb "$pid")
        local keys; keys=$(redis-cli -p "$port" dbsize)
        printf '| %s | %s B%s | %s | %.1f | %.1f | %+.1f%% |\n' "$name" "$vsize" "$([ -n "$ttl" ] && echo ", with TTL")" \
            "$keys" "$(echo "($m1 - $m0) / $N" | bc -l)" "$(echo "($r1 - $r0) * 1024 / $N" | bc -l)" \
            "$(echo "(($m1 - $m0) - ($r1 - $r0) * 1024) * 100 / (($r1 - $r0) * 1024)" | bc -l)"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
}

echo "| server | values | count | used_memory B/key | RSS B/key | used_memory vs RSS growth |"
echo "|---|---|---|---|---|---:|"
measure hotkv ./build/hotkv-server --threads 1 --save "" --appendonly no --bind 127.0.0.1
measure redis redis-server --save "" --appendonly no --bind 127.0.0.1
