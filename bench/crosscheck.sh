#!/usr/bin/env bash
# crosscheck.sh - hotkv-bench's closed-loop GET throughput vs redis-benchmark's.
#
# Checks that our load generator is not the bottleneck: against one
# redis-server (pinned to the server CPUs) it runs, alternating and N times
# each, hotkv-bench `GET {key uniform K}` in closed loop and redis-benchmark
# `-t get -r K` with the same connections, pipeline depth, request count,
# generator threads and CPUs, over the same keyspace size and value size (both
# key namings, hotkv-bench's key_%010d and redis-benchmark's key:%012d, are
# preloaded, so every GET of either tool hits a value of the same size), and
# reports both median throughputs, their ratio and whether they agree within
# 10% (the issue's requirement). Writes results.md, raw JSON and redis-benchmark
# CSV of every run, raw.csv. It never fails on a number; the verdict is in the
# table.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="redis"
connections=50
pipelines="1 16"
keys=100000
value=64
n_p1=200000
n_pn=2000000
runs=3
hotkv_threads=1
RB_BIN=$(command -v redis-benchmark || echo /usr/bin/redis-benchmark)

usage() {
    cat <<EOF
usage: bench/crosscheck.sh [options]

hotkv-bench vs redis-benchmark, closed-loop GET throughput on the same
settings against redis-server (see bench/README.md).

  --servers LIST       redis and/or hotkv (default $servers)
  --connections N      total connections (default $connections)
  --pipelines LIST     pipeline depths, comma separated (default 1,16)
  --keys N             keyspace (default $keys)
  --value N            value size in bytes (default $value)
  -n N                 requests per run at pipeline 1 (default $n_p1)
  --n-pipelined N      requests per run at pipeline > 1 (default $n_pn)
  --runs N             runs per tool and cell, the median is reported (default $runs)
  --hotkv-threads N    hotkv-server --threads when hotkv is in --servers (default $hotkv_threads)
  --redis-benchmark PATH  redis-benchmark binary (default $RB_BIN)
$(lib_common_usage crosscheck)
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --pipelines) pipelines=${2//,/ }; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --value) value=$2; shift 2 ;;
        -n) n_p1=$2; shift 2 ;;
        --n-pipelined) n_pn=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        --redis-benchmark) RB_BIN=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis
[ -x "$RB_BIN" ] || { echo "no redis-benchmark at $RB_BIN (scripts/deps.sh bench)" >&2; exit 1; }

lib_init crosscheck
cpt=$(lib_conns_per_thread "$connections")
total_conns=$(( cpt * BENCH_THREADS ))
[ "$total_conns" = "$connections" ] ||
    lib_log "note: $connections connections do not divide over $BENCH_THREADS threads; both tools use $total_conns"
rb_threads=()
[ "$BENCH_THREADS" -le 1 ] || rb_threads=(--threads "$BENCH_THREADS")

# redis-benchmark's keys for -r K are key:%012d; load all K of them with
# the same value size through redis-cli --pipe.
preload_rb_keys() {
    local s=$1
    "$PY" - "$keys" "$value" <<'EOF' | lib_cli "$s" --pipe > "$RESULTS/raw/$s-load-rb.txt"
import sys
n, size = int(sys.argv[1]), int(sys.argv[2])
val = b"x" * size
out = sys.stdout.buffer
for i in range(n):
    k = b"key:%012d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(val), val))
EOF
    grep -q "errors: 0" "$RESULTS/raw/$s-load-rb.txt" ||
        lib_die "preload of key:%012d into $(label_of "$s") failed: $(cat "$RESULTS/raw/$s-load-rb.txt")"
}

# One redis-benchmark run; prints "rps p50_us p99_us" (0 n/a n/a on failure).
run_rb() {
    local s=$1 P=$2 n=$3 csv=$4 rc=0
    local -a cmd=(taskset -c "$CLIENT_CPUS" "$RB_BIN" -h 127.0.0.1 -p "${SRV_PORT[$s]}"
                  -c "$total_conns" -P "$P" -n "$n" -r "$keys" -d "$value" "${rb_threads[@]}"
                  --csv -t get)
    lib_quote "${cmd[@]}" >> "$RESULTS/commands.log"
    "${cmd[@]}" > "$csv" 2> "${csv%.csv}.err" || rc=$?
    # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    awk -F, -v rc="$rc" 'NR == 2 && rc == 0 { gsub(/"/, ""); print $2, $5 * 1000, $7 * 1000; ok = 1 }
        END { if (!ok) print "0 n/a n/a" }' "$csv"
}

# Run a command (or function) and write the user and system CPU seconds of
# it and its children to file $1 (bash's time keyword; the command's own
# stderr goes there too, before the last line).
timed() {
    local tfile=$1 TIMEFORMAT='%3U %3S'
    shift
    { time "$@"; } 2> "$tfile"
}
# CPU microseconds per request from a timed file and a request count.
cpu_us() { tail -1 "$1" | awk -v n="$2" '{ printf "%.2f", ($1 + $2) * 1e6 / n }'; }

raw="$RESULTS/raw.csv"
echo "server,pipeline,run,tool,requests,rate,p50_us,p99_us,cpu_us_per_req" > "$raw"
declare -A HB RB HB99 RB99 HBCPU RBCPU
for s in $servers; do
    lib_start_sweep_server "$s"
    lib_preload "$s" strings "$keys" "SET {key sequence $keys} {value $value}"
    preload_rb_keys "$s"
    lib_log "$(label_of "$s"): dbsize $(lib_cli "$s" DBSIZE)"
    for P in $pipelines; do
        if [ "$P" -le 1 ]; then n=$n_p1; else n=$n_pn; fi
        : > "$RESULTS/hb.tmp"; : > "$RESULTS/rb.tmp"
        for r in $(seq "$runs"); do
            json="$RESULTS/raw/$s-hotkv-bench-P$P-run$r.json"
            if timed "$RESULTS/time.tmp" lib_bench "$s" "$json" -c "$cpt" -P "$P" -n "$n" "GET {key uniform $keys}"; then
                IFS=$'\t' read -r hrate hp50 hp99 herr <<< "$(lib_json "$json" achieved_rate latency_us.p50 latency_us.p99 errors)"
                [ "$herr" = 0 ] || lib_log "hotkv-bench reported $herr errors (see $json)"
            else
                hrate=0 hp50="n/a" hp99="n/a"
            fi
            hcpu=$(cpu_us "$RESULTS/time.tmp" "$n")
            csv="$RESULTS/raw/$s-redis-benchmark-P$P-run$r.csv"
            timed "$RESULTS/time.tmp" run_rb "$s" "$P" "$n" "$csv" > "$RESULTS/rb.out"
            read -r rrate rp50 rp99 < "$RESULTS/rb.out"
            rcpu=$(cpu_us "$RESULTS/time.tmp" "$n")
            echo "$s,$P,$r,hotkv-bench,$n,$hrate,$hp50,$hp99,$hcpu" >> "$raw"
            echo "$s,$P,$r,redis-benchmark,$n,$rrate,$rp50,$rp99,$rcpu" >> "$raw"
            echo "$hrate $hp99 $hcpu" >> "$RESULTS/hb.tmp"
            echo "$rrate $rp99 $rcpu" >> "$RESULTS/rb.tmp"
            lib_log "$(label_of "$s") P$P run $r: hotkv-bench $(lib_fmt "$hrate" 0) req/s (p99 $hp99 us, $hcpu CPU us/req), redis-benchmark $(lib_fmt "$rrate" 0) req/s (p99 $rp99 us, $rcpu CPU us/req)"
        done
        mid=$(( (runs + 1) / 2 ))
        read -r a b c <<< "$(sort -g -k1,1 "$RESULTS/hb.tmp" | sed -n "${mid}p")"
        HB[$s,$P]=$a; HB99[$s,$P]=$b
        read -r a b c <<< "$(sort -g -k1,1 "$RESULTS/rb.tmp" | sed -n "${mid}p")"
        RB[$s,$P]=$a; RB99[$s,$P]=$b
        # CPU per request: the median over the runs of each tool
        HBCPU[$s,$P]=$(awk '{ print $3 }' "$RESULTS/hb.tmp" | lib_median)
        RBCPU[$s,$P]=$(awk '{ print $3 }' "$RESULTS/rb.tmp" | lib_median)
    done
    rm -f "$RESULTS/hb.tmp" "$RESULTS/rb.tmp" "$RESULTS/time.tmp" "$RESULTS/rb.out"
    lib_stop_server "$s"
done

table="$RESULTS/table.md"
{
    echo "| server | P | hotkv-bench req/s | redis-benchmark req/s | ratio hb/rb | within 10% | hb >= 90% of rb | hotkv-bench p99 µs | redis-benchmark p99 µs | hotkv-bench CPU µs/req | redis-benchmark CPU µs/req |"
    echo "|---|---:|---:|---:|---:|:---:|:---:|---:|---:|---:|---:|"
    for s in $servers; do
        for P in $pipelines; do
            ratio=$(lib_ratio "${HB[$s,$P]}" "${RB[$s,$P]}")
            ok=$(awk -v q="$ratio" 'BEGIN { if (q == "n/a") print "n/a"; else print (q >= 0.9 && q <= 1.1) ? "yes" : "NO" }')
            ge=$(awk -v q="$ratio" 'BEGIN { if (q == "n/a") print "n/a"; else print (q >= 0.9) ? "yes" : "NO" }')
            echo "| $(label_of "$s") | $P | $(lib_fmt "${HB[$s,$P]}" 0) | $(lib_fmt "${RB[$s,$P]}" 0) | $ratio | $ok | $ge | $(lib_fmt "${HB99[$s,$P]}" 0) | $(lib_fmt "${RB99[$s,$P]}" 0) | ${HBCPU[$s,$P]} | ${RBCPU[$s,$P]} |"
        done
    done
} > "$table"

{
    lib_header "Cross-check: hotkv-bench vs redis-benchmark, closed-loop GET" \
        "both tools: $total_conns connections, $BENCH_THREADS thread(s), pinned with \`taskset -c $CLIENT_CPUS\`, $n_p1 requests per run at P1 and $n_pn when pipelined, $runs alternating runs each: the median run is reported" \
        "hotkv-bench: \`GET {key uniform $keys}\` over $keys keys \`key_%010d\` preloaded with $value-byte values; redis-benchmark: \`-t get -r $keys\` over $keys keys \`key:%012d\` preloaded with $value-byte values (every GET of either tool hits)" \
        "redis-benchmark reports latency in ms with 1 µs resolution (CSV); its p99 is converted to µs" \
        "within 10%: the hotkv-bench/redis-benchmark ratio is in [0.9, 1.1]; hb >= 90% of rb: hotkv-bench is not more than 10% slower (a generator that is faster than redis-benchmark is not the bottleneck either)" \
        "CPU µs/req: user+system CPU time of the generator process (bash \`time\`) divided by the requests, median over the runs: how much of its client CPU each tool needs per request, which on a loaded machine is steadier than req/s"
    echo
    echo "## Results"
    echo
    cat "$table"
    lib_server_section
} > "$RESULTS/results.md"

lib_show_table "$table"
