#!/usr/bin/env bash
# instructions.sh - user-space instructions per request, counted exactly.
#
# Runs each given hotkv-server binary (--threads 1) under valgrind's
# callgrind and, for each test and pipeline depth of redis_benchmark.sh
# (PING, SET, GET, MSET, MGET, INCR at pipeline 1 and 16, the same
# redis-benchmark arguments), zeroes the counters, sends N requests with
# redis-benchmark, dumps, and divides the instructions executed by N.
# Unlike CPU time on a shared machine the count is repeatable: the same
# binary and inputs give the same number whatever else runs, so two builds
# can be compared to a fraction of a percent. It counts user-space
# instructions only (system calls appear as one instruction each), so it
# complements redis_benchmark.sh's CPU time rather than replacing it. A
# measuring tool: it never fails on a number.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
tests="ping,set,get,mset,mget,incr"
pipelines="1 16"
n=20000
clients=50
datasize=64
keyspace=1000000
binaries=()
labels=()

usage() {
    cat <<EOF
usage: $0 [options] [--hotkv PATH [--label NAME]]...
  --hotkv PATH      a hotkv-server binary to measure (repeatable; default build/hotkv-server)
  --label NAME      column name for the preceding --hotkv (default its path)
  --tests LIST      comma separated subset of $tests
  --pipelines LIST  pipeline depths, comma separated (default 1,16)
  -n N              requests per measurement (default $n)
  --out DIR         result folder (default bench/results/<date>-<host>/instructions)
EOF
}

out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --hotkv) binaries+=("$2"); labels+=("$2"); shift 2 ;;
        --label) labels[${#labels[@]}-1]=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --pipelines) pipelines=${2//,/ }; shift 2 ;;
        -n) n=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ ${#binaries[@]} -gt 0 ] || { binaries=("$root/build/hotkv-server"); labels=(HotKV); }
for b in valgrind callgrind_control redis-benchmark redis-cli python3; do
    command -v "$b" >/dev/null || { echo "missing $b (scripts/deps.sh bench)" >&2; exit 1; }
done
host=$(hostname -s 2>/dev/null || hostname)
[ -n "$out" ] || out="$here/results/$(date -u +%Y%m%d-%H%M%S)-$host/instructions"
mkdir -p "$out"
tmp=$(mktemp -d)
vg_pid=""
cleanup() {
    if [ -n "$vg_pid" ] && kill -0 "$vg_pid" 2>/dev/null; then kill "$vg_pid"; wait "$vg_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

test_args() {
    case $1 in
        ping) echo "-t ping_mbulk" ;;
        mget) echo "MGET$(printf ' key:__rand_int__%.0s' {1..10})" ;;
        *) echo "-t $1" ;;
    esac
}

# Instructions (Ir) of the newest callgrind dump of pid $1.
last_ir() {
    local f
    f=$(ls -t "$tmp"/cg."$1".out* 2>/dev/null | head -1)
    awk '/^summary:/ { print $2; exit } /^totals:/ { t = $2 } END { if (t) print t }' "$f" | head -1
}

declare -A IPR
for i in "${!binaries[@]}"; do
    bin=${binaries[$i]}
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p.out" "$bin" --port "$port" --threads 1 --save "" \
        --bind 127.0.0.1 > "$out/server-$i.log" 2>&1 &
    vg_pid=$!
    for _ in $(seq 300); do
        redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break
        sleep 0.1
    done
    for t in ${tests//,/ }; do
        for P in $pipelines; do
            read -r -a args <<< "$(test_args "$t")"
            callgrind_control -z "$vg_pid" > /dev/null
            redis-benchmark -p "$port" -c "$clients" -n "$n" -d "$datasize" -r "$keyspace" -P "$P" -q "${args[@]}" \
                > /dev/null 2>&1
            callgrind_control -d "$vg_pid" > /dev/null
            ir=$(last_ir "$vg_pid")
            IPR[$i,$t,$P]=$(awk -v ir="$ir" -v n="$n" 'BEGIN { printf "%.0f", ir / n }')
            echo "  ${labels[$i]} $t P$P: ${IPR[$i,$t,$P]} instructions/request" >&2
        done
    done
    kill "$vg_pid"
    wait "$vg_pid" 2>/dev/null || true
    vg_pid=""
done

{
    echo "# Instructions per request (callgrind, user space)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), host: $host"
    echo "- server: \`valgrind --tool=callgrind <bin> --threads 1\`; client: \`redis-benchmark -c $clients -n $n -d $datasize -r $keyspace -P <P> <test>\` (as bench/redis_benchmark.sh)"
    for i in "${!binaries[@]}"; do echo "- ${labels[$i]}: ${binaries[$i]}"; done
    echo
    hdr="| test | P |"
    sep="|---|---:|"
    for i in "${!binaries[@]}"; do hdr+=" ${labels[$i]} |"; sep+="---:|"; done
    [ ${#binaries[@]} -lt 2 ] || { hdr+=" ratio (last/first) |"; sep+="---:|"; }
    echo "$hdr"
    echo "$sep"
    for t in ${tests//,/ }; do
        for P in $pipelines; do
            row="| ${t^^} | $P |"
            for i in "${!binaries[@]}"; do row+=" ${IPR[$i,$t,$P]} |"; done
            if [ ${#binaries[@]} -ge 2 ]; then
                last=$(( ${#binaries[@]} - 1 ))
                row+=" $(awk -v a="${IPR[$last,$t,$P]}" -v b="${IPR[0,$t,$P]}" 'BEGIN { printf "%.3f", a / b }') |"
            fi
            echo "$row"
        done
    done
} > "$out/results.md"
cat "$out/results.md"
