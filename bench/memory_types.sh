#!/usr/bin/env bash
# memory_types.sh - bytes per element of lists, hashes, sets, sorted sets
# and streams: HotKV vs redis-server for the same data.
#
# For each aggregate type it loads, with `redis-cli --pipe` from generated
# RESP, (a) one key holding N elements (the big encodings: quicklist,
# hashtable, skiplist) and (b) K keys of E elements each (the compact
# encodings: listpack, intset), into a fresh server per row (one worker
# thread, pinned with taskset), and reports the growth of INFO memory
# used_memory and of the process RSS divided by the number of elements, the
# OBJECT ENCODING of a sample key on both servers, and the HotKV/Redis ratios.
# A server that does not know a type's command (ERR unknown command) gets
# n/a in that row; the other server is still measured.
# It is a measuring tool, not a test: it never fails on a bad number.
# See bench/README.md for the flags and the exact data.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

hotkv_bin=""
redis_bin=$(command -v redis-server || echo /usr/bin/redis-server)
cli_bin=$(command -v redis-cli || echo /usr/bin/redis-cli)
big_n=1000000
small_keys=100000
small_elems=10
types="list,hash,set-int,set-str,zset,stream"
shapes="big,small"
cpu=0

usage() {
    cat <<EOF
usage: $0 [options]
  --hotkv PATH     hotkv-server binary (default: build/hotkv-server, built with make)
  --redis PATH     redis-server binary (default $redis_bin)
  -n N             elements in the single big key (default $big_n)
  --keys K         number of small keys (default $small_keys)
  --elems E        elements per small key (default $small_elems)
  --types LIST     comma separated subset of $types
  --shapes LIST    big, small or both (default $shapes)
  --cpu N          CPU the servers are pinned to (default $cpu)
  --small          quick run: -n 100000 --keys 10000
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --hotkv) hotkv_bin=$2; shift 2 ;;
        --redis) redis_bin=$2; shift 2 ;;
        -n) big_n=$2; shift 2 ;;
        --keys) small_keys=$2; shift 2 ;;
        --elems) small_elems=$2; shift 2 ;;
        --types) types=$2; shift 2 ;;
        --shapes) shapes=$2; shift 2 ;;
        --cpu) cpu=$2; shift 2 ;;
        --small) big_n=100000; small_keys=10000; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done

"$root/scripts/deps.sh" bench >/dev/null
if [ -z "$hotkv_bin" ]; then
    make -s -C "$root" build/hotkv-server >/dev/null
    hotkv_bin="$root/build/hotkv-server"
fi

# The server being measured, stopped on exit however the script ends.
cur_pid=""
trap '[ -z "$cur_pid" ] || kill "$cur_pid" 2>/dev/null || true' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
used_memory() { "$cli_bin" -p "$1" info memory | awk -F: '/^used_memory:/ {gsub("\r",""); print $2}'; }

# gen TYPE SHAPE: the RESP commands that build the data set on stdout.
# Members: strings "member:NNNNNNNNN" (16 bytes); integers 0..N-1 for
# set-int (small sets: key*E+j, so they fit an intset of 32-bit values);
# hash fields "field:NNNNNNNNNN" with values "value:NNNNNNNNNN" (16 + 16
# bytes, one element = one field/value pair); zset scores = the member's
# index. The big key is filled by commands of 1000 elements each.
# Streams: an element is an entry of 5 fields f1..f5 with 16-byte values
# "v<f>:NNNNNNNNNNNNN", added one XADD per entry with explicit ids one
# millisecond apart, (1700000000000 + i)-0, so both servers get the same
# ids (auto ids would depend on each server's loading speed).
gen() {
    awk -v type="$1" -v shape="$2" -v n="$big_n" -v nk="$small_keys" -v ne="$small_elems" '
    function bulk(s) { return sprintf("$%d\r\n%s\r\n", length(s), s) }
    function elem(i,    m) {
        if (type == "set-int") return bulk(i "")
        m = sprintf("member:%09d", i)
        if (type == "hash") return bulk(sprintf("field:%010d", i)) bulk(sprintf("value:%010d", i))
        if (type == "zset") return bulk(i "") bulk(m)
        return bulk(m)
    }
    function xadd(key, i,    s, f, v) {
        s = "*13\r\n" bulk("XADD") bulk(key) bulk(sprintf("%.0f-0", 1700000000000 + i))
        for (f = 1; f <= 5; f++) { v = sprintf("v%d:%013d", f, i); s = s bulk("f" f) bulk(v) }
        printf("%s", s)
    }
    function cmd(key, first, count,    s, i, w) {
        if (type == "stream") { for (i = first; i < first + count; i++) xadd(key, i); return }
        w = (type == "hash" || type == "zset") ? 2 : 1
        s = sprintf("*%d\r\n", 2 + w * count) bulk(verb) bulk(key)
        for (i = first; i < first + count; i++) s = s elem(i)
        printf("%s", s)
    }
    BEGIN {
        verb = type == "list" ? "RPUSH" : type == "hash" ? "HSET" : type == "zset" ? "ZADD" : "SADD"
        if (shape == "big") {
            for (i = 0; i < n; i += 1000) cmd("big", i, (n - i < 1000) ? n - i : 1000)
        } else {
            for (k = 0; k < nk; k++) cmd(sprintf("key:%06d", k), k * ne, ne)
        }
    }'
}

card() { # port type key
    case "$2" in
        list) "$cli_bin" -p "$1" llen "$3" ;;
        stream) "$cli_bin" -p "$1" xlen "$3" ;;
        hash) "$cli_bin" -p "$1" hlen "$3" ;;
        zset) "$cli_bin" -p "$1" zcard "$3" ;;
        *) "$cli_bin" -p "$1" scard "$3" ;;
    esac
}

# The command that adds elements of TYPE, and a probe for it.
probe_args() {
    case "$1" in
        list) echo "RPUSH bench:probe x" ;;
        hash) echo "HSET bench:probe f v" ;;
        zset) echo "ZADD bench:probe 1 x" ;;
        stream) echo "XADD bench:probe * f v" ;;
        *) echo "SADD bench:probe x" ;;
    esac
}

# measure TYPE SHAPE server-command...: sets m_used, m_rss (bytes per
# element), m_enc (OBJECT ENCODING of the sample key) and m_count (elements
# actually present, so a failed load shows up in the table); all n/a when
# the server does not know the type's command.
measure() {
    local type=$1 shape=$2; shift 2
    local port; port=$(free_port)
    # A fresh server per row, so RSS growth is not hidden by reused pages.
    taskset -c "$cpu" "$@" --port "$port" >/dev/null 2>&1 &
    local pid=$!
    cur_pid=$pid
    for _ in $(seq 100); do "$cli_bin" -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    sleep 0.5
    local m0 r0 m1 r1 total sample probe
    # shellcheck disable=SC2046 # the probe is words
    probe=$("$cli_bin" -p "$port" $(probe_args "$type") 2>&1) || true
    if grep -qi "unknown command" <<< "$probe" || ! kill -0 "$pid" 2>/dev/null; then
        m_used=n/a m_rss=n/a m_enc=n/a m_count=n/a
        kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
        return
    fi
    "$cli_bin" -p "$port" del bench:probe >/dev/null
    m0=$(used_memory "$port"); r0=$(rss_kb "$pid")
    gen "$type" "$shape" | "$cli_bin" -p "$port" --pipe >/dev/null
    sleep 0.5
    m1=$(used_memory "$port"); r1=$(rss_kb "$pid")
    if [ "$shape" = big ]; then
        total=$big_n; sample=big
        m_count=$(card "$port" "$type" big)
    else
        total=$((small_keys * small_elems)); sample=key:000000
        local keys per
        keys=$("$cli_bin" -p "$port" dbsize 2>&1); per=$(card "$port" "$type" "$sample" 2>&1)
        if [[ $keys =~ ^[0-9]+$ && $per =~ ^[0-9]+$ ]]; then m_count=$(( keys * per )); else m_count="? ($per)"; fi
    fi
    m_enc=$("$cli_bin" -p "$port" object encoding "$sample")
    m_used=$(echo "($m1 - $m0) / $total" | bc -l)
    m_rss=$(echo "($r1 - $r0) * 1024 / $total" | bc -l)
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

# num VALUE DIGITS: the value rounded, or n/a. quot A B: A/B to 2 digits, or n/a.
num() { if [ "$1" = n/a ]; then echo n/a; else printf '%.*f' "$2" "$1"; fi; }
quot() {
    if [ "$1" = n/a ] || [ "$2" = n/a ] || [ "$(echo "$2 == 0" | bc)" = 1 ]; then echo n/a
    else printf '%.2f' "$(echo "$1 / $2" | bc -l)"; fi
}

echo "HotKV: $hotkv_bin --threads 1; Redis: $("$redis_bin" --version | cut -d' ' -f1-3)"
echo "big = 1 key x $big_n elements; small = $small_keys keys x $small_elems elements; B/elem = growth / elements"
echo
echo "| type | shape | elements | HotKV enc | Redis enc | HotKV used B/elem | Redis used B/elem | used ratio | HotKV RSS B/elem | Redis RSS B/elem | RSS ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for type in ${types//,/ }; do
    for shape in ${shapes//,/ }; do
        measure "$type" "$shape" "$hotkv_bin" --threads 1 --save "" --appendonly no --bind 127.0.0.1
        h_used=$m_used h_rss=$m_rss h_enc=$m_enc h_count=$m_count
        measure "$type" "$shape" "$redis_bin" --save "" --appendonly no --bind 127.0.0.1
        count=$h_count
        [ "$h_count" = "$m_count" ] || count="$h_count / $m_count"
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
            "$type" "$shape" "$count" "$h_enc" "$m_enc" "$(num "$h_used" 1)" "$(num "$m_used" 1)" \
            "$(quot "$h_used" "$m_used")" "$(num "$h_rss" 1)" "$(num "$m_rss" 1)" "$(quot "$h_rss" "$m_rss")"
    done
done
