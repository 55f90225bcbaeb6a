#!/usr/bin/env bash
# throughput.sh - closed-loop throughput per command, HotKV vs redis-server.
#
# For each command of the published list (PING SET GET MGET MSET SETNX APPEND
# INCR LPUSH RPUSH LINDEX SADD SISMEMBER HSET HGET ZADD ZSCORE EVALSHA), a
# MULTI/EXEC transaction of SET, INCR and GET sent as one request, streams
# (XADD, XRANGE of 10 entries, XREADGROUP+XACK with 10 consumers), and for
# each pipeline depth, runs hotkv-bench in closed loop against
# `hotkv-server --threads 1` and then against `redis-server --save ""
# --appendonly no` (one server at a time, pinned to its own CPU, the
# generator to the others), median of N runs, over resp-benchmark/Tair style
# keyspaces: reads go over data preloaded with hotkv-bench --load, writes
# start each run from an empty server. Writes results.md (machine, versions,
# keyspaces, the table with ratios and p99s, server command lines and CONFIG
# GET *), raw JSON of every run, raw.csv and a bar chart per pipeline depth.
# A command a server does not serve (probe: "ERR unknown command") shows n/a.
# It is a measuring tool: it never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

ALL_COMMANDS="PING SET GET MGET MSET SETNX APPEND INCR LPUSH RPUSH LINDEX SADD SISMEMBER HSET HGET ZADD ZSCORE EVALSHA MULTI XADD XRANGE XREADGROUP"
commands=$ALL_COMMANDS
servers="hotkv redis"
keys=100000
coll_keys=1000
coll_len=100
value=64
connections=50
pipelines="1 16"
runs=3
duration=1
warmup=0
hotkv_threads=1

usage() {
    cat <<EOF
usage: bench/throughput.sh [options]

Closed-loop throughput per command, HotKV vs redis-server (see bench/README.md).

  --commands LIST      comma separated subset of:
                       ${ALL_COMMANDS// /,}
  --servers LIST       hotkv,redis (default both)
  --keys N             string keyspace (SET/GET/MGET/MSET/SETNX/APPEND/INCR/EVALSHA/MULTI) (default $keys)
  --coll-keys N        list/set/hash/zset keys (default $coll_keys)
  --coll-len N         elements per preloaded collection for LINDEX/SISMEMBER/HGET/ZSCORE;
                       members/fields are drawn from [0, 2N) (default $coll_len)
  --value N            value size in bytes (default $value)
  --connections N      total connections (default $connections)
  --pipelines LIST     pipeline depths, comma separated (default 1,16)
  --runs N             runs per cell; the run with the median throughput is reported (default $runs)
  --duration SEC       seconds per run (default $duration)
  --warmup SEC         unrecorded seconds before each run (default $warmup)
  --hotkv-threads N    hotkv-server --threads (default $hotkv_threads)
$(lib_common_usage throughput)
  --published          the published sizes: --keys 1000000 --coll-len 10000
                       --duration 20 --warmup 2
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --commands) commands=$(tr ',a-z' ' A-Z' <<< "$2"); shift 2 ;;
        --servers) servers=${2//,/ }; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --coll-keys) coll_keys=$2; shift 2 ;;
        --coll-len) coll_len=$2; shift 2 ;;
        --value) value=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --pipelines) pipelines=${2//,/ }; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        --published) keys=1000000; coll_len=10000; duration=20; warmup=2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
for c in $commands; do
    [[ " $ALL_COMMANDS " == *" $c "* ]] || { echo "unknown command $c" >&2; exit 2; }
done
lib_check_servers hotkv redis

lib_init throughput
members=$(( 2 * coll_len ))
conns_pt=$(lib_conns_per_thread "$connections")
K=$keys C=$coll_keys M=$members V=$value
EVAL_SCRIPT="return redis.call('GET', KEYS[1])"
# Stream entries: 5 fields of 16-byte values.
SF="f1 {value 16} f2 {value 16} f3 {value 16} f4 {value 16} f5 {value 16}"
XRANGE_LEN=100000
XGROUP_CONSUMERS=10
# Entries for XREADGROUP: more than consumers read in a run at up to 300k
# entries/s (a run that drains it anyway is flagged).
XGROUP_LEN=$(awk -v d="$duration" -v w="$warmup" 'BEGIN { n = int(300000 * (d + w)); print (n < 500000 ? 500000 : n) }')

# The keyspace a command reads, preloaded before its runs ("" = none; the
# command then starts every run from an empty server). Sets PRE_N, PRE_TMPL.
preload_for() {
    case $1 in
        GET|MGET|EVALSHA) PRE_N=$K; PRE_TMPL="SET {key sequence $K} {value $V}" ;;
        LINDEX) PRE_N=$(( C * coll_len )); PRE_TMPL="RPUSH {key sequence $C} {value $V}" ;;
        SISMEMBER) PRE_N=$(( C * coll_len )); PRE_TMPL="SADD {key sequence $C} {rand $M}" ;;
        HGET) PRE_N=$(( C * coll_len )); PRE_TMPL="HSET {key sequence $C} {rand $M} {value $V}" ;;
        ZSCORE) PRE_N=$(( C * coll_len )); PRE_TMPL="ZADD {key sequence $C} {rand 70000} {key uniform $M}" ;;
        # ids 1-0 .. N-0, loaded by load_xrange (hotkv-bench cannot count ids)
        XRANGE) PRE_N=$XRANGE_LEN; PRE_TMPL="XADD bench:xrange <i>-0 $SF" ;;
        XREADGROUP) PRE_N=$XGROUP_LEN; PRE_TMPL="XADD bench:xgroup * $SF" ;;
        *) PRE_N=0; PRE_TMPL="" ;;
    esac
}

# XRANGE's preload: ids 1-0 .. N-0, so a random start id addresses 10 entries.
load_xrange() {
    local s=$1 got
    awk -v n="$XRANGE_LEN" 'BEGIN {
        for (i = 1; i <= n; i++) {
            printf("*13\r\n$4\r\nXADD\r\n$12\r\nbench:xrange\r\n")
            id = i "-0"; printf("$%d\r\n%s\r\n", length(id), id)
            for (f = 1; f <= 5; f++) { v = sprintf("v%d:%013d", f, i); printf("$2\r\nf%d\r\n$%d\r\n%s\r\n", f, length(v), v) }
        }
    }' | lib_cli "$s" --pipe > "$RESULTS/raw/$s-load-XRANGE.txt" 2>&1 || true
    got=$(lib_cli "$s" XLEN bench:xrange 2>&1)
    [ "$got" = "$XRANGE_LEN" ] || lib_die "preload of XRANGE into $(label_of "$s") left '$got' entries, not $XRANGE_LEN"
}

# The measured template of a command ($2 = EVALSHA's script sha).
template_for() {
    local s
    case $1 in
        PING) echo "PING" ;;
        SET) echo "SET {key uniform $K} {value $V}" ;;
        GET) echo "GET {key uniform $K}" ;;
        MGET) s="MGET"; for _ in $(seq 10); do s+=" {key uniform $K}"; done; echo "$s" ;;
        MSET) s="MSET"; for _ in $(seq 10); do s+=" {key uniform $K} {value $V}"; done; echo "$s" ;;
        SETNX) echo "SETNX {key uniform $K} {value $V}" ;;
        APPEND) echo "APPEND {key uniform $K} {value $V}" ;;
        INCR) echo "INCR {key uniform $K}" ;;
        LPUSH) echo "LPUSH {key uniform $C} {value $V}" ;;
        RPUSH) echo "RPUSH {key uniform $C} {value $V}" ;;
        LINDEX) echo "LINDEX {key uniform $C} {rand $coll_len}" ;;
        SADD) echo "SADD {key uniform $C} {rand $M}" ;;
        SISMEMBER) echo "SISMEMBER {key uniform $C} {rand $M}" ;;
        HSET) echo "HSET {key uniform $C} {rand $M} {value $V}" ;;
        HGET) echo "HGET {key uniform $C} {rand $M}" ;;
        ZADD) echo "ZADD {key uniform $C} {rand 70000} {key uniform $M}" ;;
        ZSCORE) echo "ZSCORE {key uniform $C} {key uniform $M}" ;;
        EVALSHA) echo "EVALSHA $2 1 {key uniform $K}" ;;
        # one request of five commands, done at EXEC's reply; the GET reads
        # the key the SET wrote
        MULTI) echo "MULTI ; SET {key uniform $K} {value $V} ; INCR counter:{rand $K} ; GET {key last} ; EXEC" ;;
        XADD) echo "XADD bench:xadd * $SF" ;;
        XRANGE) echo "XRANGE bench:xrange {rand $(( XRANGE_LEN - 10 ))} + COUNT 10" ;;
        # a consumer per connection; each request acknowledges the entry the
        # connection read last ({reply id}) and reads the next
        XREADGROUP) echo "XACK bench:xgroup g {reply id} ; XREADGROUP GROUP g c{conn} COUNT 1 STREAMS bench:xgroup >" ;;
    esac
}

# Whether server $1 serves command $2 (EVALSHA: whether SCRIPT LOAD works;
# prints the sha then). The probe key is flushed before the runs.
probe() {
    local s=$1 c=$2 out
    case $c in
        PING) lib_probe "$s" PING ;;
        GET|INCR) lib_probe "$s" "$c" bench:probe ;;
        MGET) lib_probe "$s" MGET bench:probe bench:probe2 ;;
        SET|SETNX|APPEND|LPUSH|RPUSH|SADD|SISMEMBER|HGET) lib_probe "$s" "$c" "bench:probe:$c" 1 ;;
        MSET|HSET) lib_probe "$s" "$c" "bench:probe:$c" 1 2 ;;
        LINDEX) lib_probe "$s" LINDEX bench:probe 0 ;;
        ZADD) lib_probe "$s" ZADD bench:probe:z 1 m ;;
        ZSCORE) lib_probe "$s" ZSCORE bench:probe:z m ;;
        EVALSHA)
            out=$(lib_cli "$s" SCRIPT LOAD "$EVAL_SCRIPT" 2>&1) || true
            [[ $out =~ ^[0-9a-f]{40}$ ]] || return 1
            echo "$out" ;;
        MULTI)
            # a whole transaction on one connection (redis-cli reads stdin)
            out=$(printf 'MULTI\nSET bench:probe 1\nINCR bench:probe:n\nGET bench:probe\nEXEC\n' | lib_cli "$s" 2>&1) || true
            ! grep -qi "unknown command" <<< "$out" ;;
        XADD) lib_probe "$s" XADD bench:probe:x '*' f v ;;
        XRANGE) lib_probe "$s" XRANGE bench:probe:x - + COUNT 1 ;;
        XREADGROUP)
            out=$(printf 'XGROUP CREATE bench:probe:g g 0 MKSTREAM\nXREADGROUP GROUP g c COUNT 1 STREAMS bench:probe:g >\nXACK bench:probe:g g 0-1\n' |
                  lib_cli "$s" 2>&1) || true
            ! grep -qi "unknown command" <<< "$out" ;;
    esac
}

raw="$RESULTS/raw.csv"
echo "server,command,pipeline,run,achieved_rate,p50_us,p99_us,requests,errors" > "$raw"
declare -A RATE P99 NOTE
first_errors=""

# All runs of command $2 on server $1: a fresh server (so each row starts
# from the same empty state and the two servers of a row are measured close
# in time, one after the other), the probe, the preload, the runs.
measure() {
    local s=$1 c=$2 P r sha tmpl pre json line rate p50 p99 req err ferr label
    label=$(label_of "$s")
    lib_start_sweep_server "$s"
    if ! sha=$(probe "$s" "$c"); then
        lib_log "$label: $c not served (n/a)"
        for P in $pipelines; do RATE[$s,$c,$P]="n/a"; P99[$s,$c,$P]="n/a"; done
        lib_stop_server "$s"
        return 0
    fi
    tmpl=$(template_for "$c" "$sha")
    preload_for "$c"
    lib_cli "$s" FLUSHALL > /dev/null
    case $c in
        XRANGE) load_xrange "$s" ;;
        *) if [ -n "$PRE_TMPL" ]; then lib_preload "$s" "$c" "$PRE_N" "$PRE_TMPL"; fi ;;
    esac
    local cpt=$conns_pt
    [ "$c" != XREADGROUP ] || cpt=$(lib_conns_per_thread "$XGROUP_CONSUMERS")
    pre=()
    [ "$warmup" = 0 ] || pre=(--warmup "$warmup")
    for P in $pipelines; do
        : > "$RESULTS/runs.tmp"
        for r in $(seq "$runs"); do
            # writes start from an empty server every run (lists and
            # appended strings would otherwise grow run after run)
            if [ -z "$PRE_TMPL" ] && [ "$c" != PING ]; then lib_cli "$s" FLUSHALL > /dev/null; fi
            if [ "$c" = XREADGROUP ]; then
                # a fresh group at the start of the stream every run
                lib_cli "$s" XGROUP DESTROY bench:xgroup g > /dev/null 2>&1 || true
                lib_cli "$s" XGROUP CREATE bench:xgroup g 0 > /dev/null
            fi
            # a big stream emptied or a group dropped may be freed in the background
            case $c in X*) lib_settle "$s" ;; esac
            json="$RESULTS/raw/$s-$c-P$P-run$r.json"
            if lib_bench "$s" "$json" -c "$cpt" -P "$P" -d "$duration" "${pre[@]}" "$tmpl"; then
                line=$(lib_json "$json" achieved_rate latency_us.p50 latency_us.p99 requests errors first_error)
                IFS=$'\t' read -r rate p50 p99 req err ferr <<< "$line"
            else
                rate=0 p50="n/a" p99="n/a" req=0 err="?" ferr="hotkv-bench failed (see ${json%.json}.err)"
            fi
            if [ "$c" = XREADGROUP ] && [ "$(lib_cli "$s" XINFO GROUPS bench:xgroup 2>/dev/null |
                    awk 'prev == "lag" {print; exit} {prev = $0}')" = 0 ]; then
                # the consumers read every entry: part of the run read nothing
                err="dry"; ferr="the stream ran dry ($XGROUP_LEN entries): raise XGROUP_LEN"
            fi
            echo "$s,$c,$P,$r,$rate,$p50,$p99,$req,$err" >> "$raw"
            echo "$rate $p50 $p99 $err" >> "$RESULTS/runs.tmp"
            lib_log "$label $c P$P run $r: $(lib_fmt "$rate" 0) req/s p99 $p99 us errors $err"
            if [ "$err" != 0 ] && [ -z "${NOTE[$s,$c,$P]:-}" ]; then
                NOTE[$s,$c,$P]=1
                first_errors+="- $label $c P$P: $err errors in run $r, first: \`$ferr\`"$'\n'
            fi
        done
        # the run with the median throughput (lower middle for even N)
        read -r rate p50 p99 err <<< "$(sort -g -k1,1 "$RESULTS/runs.tmp" | sed -n "$(( (runs + 1) / 2 ))p")"
        RATE[$s,$c,$P]=$rate; P99[$s,$c,$P]=$p99
    done
    rm -f "$RESULTS/runs.tmp"
    lib_stop_server "$s"
}

for c in $commands; do
    for s in $servers; do measure "$s" "$c"; done
done

cell() { # server command P field
    local v
    case $4 in
        rate) v=${RATE[$1,$2,$3]:--} ;;
        p99) v=${P99[$1,$2,$3]:--} ;;
    esac
    case $v in n/a|-) echo "$v" ;; *)
        v=$(lib_fmt "$v" 0)
        [ -z "${NOTE[$1,$2,$3]:-}" ] || v="$v ⚠"
        echo "$v" ;;
    esac
}

# Expected share of [0, M) present after coll_len uniform draws: 1 - (1 - 1/M)^L.
hit_pct() { awk -v m="$M" -v l="$coll_len" 'BEGIN { printf "%.0f", 100 * (1 - exp(l * log(1 - 1 / m))) }'; }

table="$RESULTS/table.md"
{
    echo "| command | P | HotKV req/s | Redis req/s | HotKV/Redis | HotKV p99 µs | Redis p99 µs |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for c in $commands; do
        for P in $pipelines; do
            echo "| $c | $P | $(cell hotkv "$c" "$P" rate) | $(cell redis "$c" "$P" rate) | $(lib_ratio "${RATE[hotkv,$c,$P]:-}" "${RATE[redis,$c,$P]:-}") | $(cell hotkv "$c" "$P" p99) | $(cell redis "$c" "$P" p99) |"
        done
    done
} > "$table"

# One bar chart per pipeline depth: req/s per command, HotKV and Redis side by side.
plots=""
if lib_have_gnuplot; then
    for P in $pipelines; do
        dat="$RESULTS/throughput-P$P.dat"
        labels=""
        i=0
        {
            echo "command HotKV Redis"
            for c in $commands; do
                h=${RATE[hotkv,$c,$P]:-n/a} r=${RATE[redis,$c,$P]:-n/a}
                echo "$c $h $r"
                # a clustered pair of boxes sits at i -/+ 1/6 (2 series, gap 1)
                [ "${RATE[hotkv,$c,$P]:-}" != n/a ] || labels+="set label \"n/a\" at $i - 0.167, graph 0.02 center front"$'\n'
                [ "${RATE[redis,$c,$P]:-}" != n/a ] || labels+="set label \"n/a\" at $i + 0.167, graph 0.02 center front"$'\n'
                i=$(( i + 1 ))
            done
        } > "$dat"
        gnuplot <<EOF 2> "$RESULTS/gnuplot.err" || cat "$RESULTS/gnuplot.err" >&2
set terminal pngcairo size 1200,600 font ",10"
set output "$RESULTS/throughput-P$P.png"
set title "Closed-loop throughput per command, pipeline $P, $connections connections ($(date -u +%Y-%m-%d), $(hostname -s 2>/dev/null || hostname))"
set datafile missing "n/a"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "requests/s (thousands)"
$labels
set yrange [0:*]
set grid ytics
set xtics rotate by -45 scale 0
set key top right
plot "$dat" using (\$2/1000):xtic(1) title columnheader(2) lc rgb "#d62728", \
     "" using (\$3/1000) title columnheader(3) lc rgb "#1f77b4"
EOF
        plots+=" throughput-P$P.png"
    done
fi

[ -s "$RESULTS/gnuplot.err" ] || rm -f "$RESULTS/gnuplot.err"

{
    lib_header "Throughput per command: HotKV vs Redis" \
        "closed loop, $connections connections ($BENCH_THREADS thread(s) x $conns_pt), pipelines: $pipelines, $duration s per run (+ $warmup s warmup), $runs runs per cell: the run with the median throughput is reported (its p99 too)" \
        "keyspaces: strings \`key_%010d\` over $K keys, $V-byte values; collections over $C keys; preloaded lists hold $coll_len elements each (LINDEX indexes are always in range); sets, hashes and zsets got $coll_len adds each of members/fields drawn from [0, $M), so about $(hit_pct)% of SISMEMBER/HGET/ZSCORE lookups hit" \
        "each command runs on a fresh server, HotKV then Redis (never both at once); reads run over a preload (\`hotkv-bench --load\`), writes start every run from FLUSHALL" \
        "plots:${plots:- none}"
    echo
    echo "## Templates"
    echo
    echo "| command | preload (-n) | measured template |"
    echo "|---|---|---|"
    for c in $commands; do
        preload_for "$c"
        echo "| $c | ${PRE_TMPL:+\`$PRE_TMPL\` ($PRE_N)} | \`$(template_for "$c" "<sha of $EVAL_SCRIPT>")\` |"
    done
    echo
    echo "## Results"
    echo
    cat "$table"
    echo
    echo "n/a: the server does not serve the command (\"ERR unknown command\" to a probe; EVALSHA: to SCRIPT LOAD)."
    if [[ " $commands " == *" MULTI "* ]]; then
        echo
        echo "MULTI: one request is one transaction (MULTI, SET, INCR, GET, EXEC written together, complete at EXEC's reply): req/s are transactions per second, P transactions in flight per connection."
    fi
    if [[ " $commands " == *" XREADGROUP "* ]]; then
        echo
        echo "XREADGROUP: $XGROUP_CONSUMERS connections, consumer c<n> each, group g made afresh at the start of the stream every run; one request acknowledges the entry the connection read last ({reply id}: hotkv-bench feeds the id from that connection's earlier reply) and reads the next, written together: req/s are entries consumed per second. XRANGE's preload has ids 1-0 .. $XRANGE_LEN-0 (redis-cli --pipe), so {rand} picks the start id of the 10 entries read."
    fi
    if [ -n "$first_errors" ]; then
        echo
        echo "⚠ runs with error replies (the rate counts them as completed requests):"
        echo
        printf '%s' "$first_errors"
    fi
    lib_server_section
} > "$RESULTS/results.md"

lib_show_table "$table"
