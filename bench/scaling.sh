#!/usr/bin/env bash
# scaling.sh - how HotKV scales with worker threads.
#
# On an N-CPU machine, runs hotkv-server with 1, 2, 4, ... N/2 threads (or
# --threads), pinned to CPUs 0..T-1, with hotkv-bench on the CPUs left over.
# For each thread count and each workload (GET and SET over uniform keys and
# over zipfian keys of skew 0.99), it measures:
#   - the peak: closed loop, pipelined, median of --runs runs; throughput and
#     server CPU per request (utime+stime of all its threads / requests);
#   - p99 at a fixed fraction of that peak (open loop, --fraction);
#   - shard-lock contention, on a second binary built with -DHK_LOCK_STATS
#     (build-lockstats/, made when missing): how many shard_lock calls found
#     the lock taken and how long they waited, per request. The default build
#     counts nothing on its hot path.
# Writes results.md (machine, versions, command lines, the table), raw JSON of
# every run and raw.csv into bench/results/<date>-<host>/scaling/. It is a
# measuring tool: it never fails on a slow number. Speedups are against the
# first thread count of the same run.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

ncpu=$(nproc)
threads_list=""
keys=1000000
value=64
pipeline=1
conns_per_server_thread=16
duration=5
runs=3
fraction=0.8
skew=0.99
workloads="get-uniform set-uniform get-zipf set-zipf"
lockstats_bin="$ROOT_DIR/build-lockstats/hotkv-server"
hotkv_threads=1 # for label_of

usage() {
    cat <<EOF
usage: bench/scaling.sh [options]

Throughput, CPU per request, p99 at a fraction of the peak and shard-lock
contention for 1, 2, 4, ... N/2 server threads (see bench/README.md).

  --threads LIST       server thread counts, comma separated (default 1,2,4,...,N/2; here: $(default_threads))
  --workloads LIST     of get-uniform,set-uniform,get-zipf,set-zipf (default all)
  --keys N             keyspace, preloaded (default $keys)
  --value N            value size (default $value)
  --pipeline P         closed-loop pipeline depth for the peak (default $pipeline)
  --conns N            connections per server thread (default $conns_per_server_thread)
  --duration SEC       seconds per run (default $duration)
  --runs N             peak runs per cell, median reported (default $runs)
  --fraction F         open-loop rate as a fraction of the peak (default $fraction)
  --skew S             zipf exponent of the zipf workloads (default $skew)
  --lockstats PATH     server built with -DHK_LOCK_STATS (default build-lockstats/hotkv-server)
  --hotkv PATH         hotkv-server binary (default build/hotkv-server)
  --bench PATH         hotkv-bench binary (default build/hotkv-bench)
  --out DIR            results folder; this script writes DIR/scaling/
  -h, --help           this text
EOF
}

default_threads() {
    local t=1 out="1" half=$(( ncpu / 2 ))
    [ "$half" -ge 1 ] || half=1
    while [ $(( t * 2 )) -le "$half" ]; do t=$(( t * 2 )); out+=" $t"; done
    echo "$out"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --threads) threads_list=${2//,/ }; shift 2 ;;
        --workloads) workloads=${2//,/ }; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --value) value=$2; shift 2 ;;
        --pipeline) pipeline=$2; shift 2 ;;
        --conns) conns_per_server_thread=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --fraction) fraction=$2; shift 2 ;;
        --skew) skew=$2; shift 2 ;;
        --lockstats) lockstats_bin=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
[ -n "$threads_list" ] || threads_list=$(default_threads)
for w in $workloads; do
    case $w in get-uniform|set-uniform|get-zipf|set-zipf) ;; *) echo "unknown workload $w" >&2; exit 2 ;; esac
done

if [ ! -x "$lockstats_bin" ]; then
    lib_log "building the lock-statistics server (make BUILD=build-lockstats EXTRA_CFLAGS=-DHK_LOCK_STATS)"
    make -C "$ROOT_DIR" --no-print-directory BUILD=build-lockstats EXTRA_CFLAGS=-DHK_LOCK_STATS \
        build-lockstats/hotkv-server > /dev/null
fi

# The CPUs of a thread count: the server on 0..T-1, the generator on the
# rest, or on every CPU (shared, noted in the table) when none is left.
cpus_for() {
    local t=$1
    SERVER_CPUS="0-$(( t - 1 ))"
    [ "$t" -gt 1 ] || SERVER_CPUS=0
    if [ "$t" -lt "$ncpu" ]; then
        CLIENT_CPUS="$t-$(( ncpu - 1 ))"
        [ $(( ncpu - 1 )) -gt "$t" ] || CLIENT_CPUS=$t
        SHARED=""
    else
        CLIENT_CPUS="0-$(( ncpu - 1 ))"
        SHARED=" (shared CPUs)"
    fi
    BENCH_THREADS=$(lib_cpu_count "$CLIENT_CPUS")
}

template_of() {
    case $1 in
        get-uniform) echo "GET {key uniform $keys}" ;;
        set-uniform) echo "SET {key uniform $keys} {value $value}" ;;
        get-zipf) echo "GET {key zipfian $keys $skew}" ;;
        set-zipf) echo "SET {key zipfian $keys $skew} {value $value}" ;;
    esac
}

# INFO stats field $2 of server $1 (0 when absent).
info_field() {
    lib_cli "$1" INFO stats | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }'
}

cpus_for 1
lib_init scaling
raw="$RESULTS/raw.csv"
echo "threads,workload,run,kind,achieved_rate,requests,cpu_ticks,p99_us,lock_contended,lock_wait_us" > "$raw"
clk_tck=$(getconf CLK_TCK)
declare -A PEAK CPU P99 ACH WAITS WAITNS NOTE

for t in $threads_list; do
    cpus_for "$t"
    conns=$(( t * conns_per_server_thread ))
    conns_pt=$(lib_conns_per_thread "$conns")
    # -- the default build: peak, CPU per request, p99 at a fraction --
    hotkv_threads=$t
    lib_start_server hotkv hotkv "HotKV --threads $t" --threads "$t"
    lib_preload hotkv "t$t" "$keys" "SET {key sequence $keys} {value $value}"
    for w in $workloads; do
        tmpl=$(template_of "$w")
        : > "$RESULTS/runs.tmp"
        for r in $(seq "$runs"); do
            json="$RESULTS/raw/t$t-$w-peak$r.json"
            c0=$(lib_cpu_ticks "${SRV_PID[hotkv]}")
            lib_bench hotkv "$json" -c "$conns_pt" -P "$pipeline" -d "$duration" "$tmpl" || true
            c1=$(lib_cpu_ticks "${SRV_PID[hotkv]}")
            IFS=$'\t' read -r rate req <<< "$(lib_json "$json" achieved_rate requests)"
            echo "$t,$w,$r,peak,$rate,$req,$(( c1 - c0 )),,," >> "$raw"
            us=$(awk -v c=$(( c1 - c0 )) -v hz="$clk_tck" -v n="$req" 'BEGIN { if (n > 0) printf "%.3f", c * 1e6 / hz / n; else print "n/a" }')
            echo "$rate $us" >> "$RESULTS/runs.tmp"
            lib_log "T$t $w peak run $r: $(lib_fmt "$rate" 0) req/s, $us us CPU/req"
        done
        read -r rate us <<< "$(sort -g -k1,1 "$RESULTS/runs.tmp" | sed -n "$(( (runs + 1) / 2 ))p")"
        PEAK[$t,$w]=$rate; CPU[$t,$w]=$us
        target=$(awk -v r="$rate" -v f="$fraction" 'BEGIN { printf "%d", r * f }')
        json="$RESULTS/raw/t$t-$w-rate.json"
        lib_settle hotkv
        lib_bench hotkv "$json" -c "$conns_pt" -d "$duration" --rate "$target" "$tmpl" || true
        IFS=$'\t' read -r ach req p99 <<< "$(lib_json "$json" achieved_rate requests latency_us.p99)"
        echo "$t,$w,1,rate,$ach,$req,,$p99,," >> "$raw"
        P99[$t,$w]=$p99
        ACH[$t,$w]=$(awk -v a="$ach" -v r="$target" 'BEGIN { if (r > 0) printf "%.0f", 100 * a / r; else print "n/a" }')
        lib_log "T$t $w at $target req/s: p99 $p99 us (achieved ${ACH[$t,$w]}%)"
        lib_settle hotkv
    done
    lib_stop_server hotkv
    # -- the instrumented build: shard-lock contention at the peak --
    HOTKV_BIN_SAVED=$HOTKV_BIN
    HOTKV_BIN=$lockstats_bin
    lib_start_server locks hotkv "HotKV --threads $t (HK_LOCK_STATS)" --threads "$t"
    HOTKV_BIN=$HOTKV_BIN_SAVED
    lib_preload locks "t$t" "$keys" "SET {key sequence $keys} {value $value}"
    for w in $workloads; do
        tmpl=$(template_of "$w")
        n0=$(info_field locks shard_lock_contended)
        u0=$(info_field locks shard_lock_wait_us)
        json="$RESULTS/raw/t$t-$w-locks.json"
        lib_bench locks "$json" -c "$conns_pt" -P "$pipeline" -d "$duration" "$tmpl" || true
        n1=$(info_field locks shard_lock_contended)
        u1=$(info_field locks shard_lock_wait_us)
        IFS=$'\t' read -r rate req <<< "$(lib_json "$json" achieved_rate requests)"
        echo "$t,$w,1,locks,$rate,$req,,,$(( n1 - n0 )),$(( u1 - u0 ))" >> "$raw"
        WAITS[$t,$w]=$(awk -v n=$(( n1 - n0 )) -v r="$req" 'BEGIN { if (r > 0) printf "%.2f", 1000 * n / r; else print "n/a" }')
        WAITNS[$t,$w]=$(awk -v u=$(( u1 - u0 )) -v r="$req" 'BEGIN { if (r > 0) printf "%.1f", 1000 * u / r; else print "n/a" }')
        NOTE[$t]=$SHARED
        lib_log "T$t $w: ${WAITS[$t,$w]} contended locks per 1k requests, ${WAITNS[$t,$w]} ns waited per request"
    done
    lib_stop_server locks
done
rm -f "$RESULTS/runs.tmp"

first=${threads_list%% *}
table="$RESULTS/table.md"
{
    echo "| threads | workload | peak req/s | × $first thread(s) | server CPU µs/req | p99 µs at ${fraction}×peak (achieved) | contended locks /1k req | lock wait ns/req |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|"
    for w in $workloads; do
        for t in $threads_list; do
            echo "| $t${NOTE[$t]:-} | $w | $(lib_fmt "${PEAK[$t,$w]}" 0) | $(lib_ratio "${PEAK[$t,$w]}" "${PEAK[$first,$w]}") | ${CPU[$t,$w]} | $(lib_fmt "${P99[$t,$w]}" 0) (${ACH[$t,$w]}%) | ${WAITS[$t,$w]} | ${WAITNS[$t,$w]} |"
        done
    done
} > "$table"

{
    lib_header "Scaling with worker threads" \
        "thread counts: $threads_list; server on CPUs 0..T-1, hotkv-bench on the others (\"shared CPUs\": none left, both share all $ncpu)" \
        "keyspace: $keys keys \`key_%010d\` preloaded with $value-byte values; zipf workloads use \`{key zipfian $keys $skew}\` (rank 0 hottest)" \
        "peak: closed loop, $conns_per_server_thread connections per server thread, pipeline $pipeline, $duration s, median of $runs runs; CPU/req = utime+stime of the server (all threads) / requests" \
        "p99: open loop at $fraction × the peak for $duration s; achieved = achieved / requested rate" \
        "contention: the same peak run against $lockstats_bin (built with -DHK_LOCK_STATS), INFO shard_lock_contended and shard_lock_wait_us before and after"
    echo
    echo "## Results"
    echo
    cat "$table"
    lib_server_section
} > "$RESULTS/results.md"

lib_show_table "$table"
