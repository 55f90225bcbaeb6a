#!/usr/bin/env bash
# lat_sweep.sh - fixed-rate latency sweep, HotKV vs redis-server.
#
# For each server (HotKV, redis-server single-threaded, redis-server with
# --io-threads N), one after the other and pinned to the server CPUs,
# preloads a keyspace of 256-byte strings and runs hotkv-bench in open loop
# (--rate: latency from the scheduled send time) at fixed rates stepping up,
# for two workloads (GET only; 1 SET : 10 GET) and two connection counts. A
# step is held when the achieved rate is >= 97% of the requested one;
# otherwise the cell shows "NS (achieved)" and the sweep stops there for that
# server, workload and connection count. Writes results.md (p50/p99 per
# step side by side, the highest held rate, machine, versions, server
# command lines and CONFIG GET *), raw JSON of every step, raw.csv and a
# p99-vs-rate plot per workload and connection count. It is a measuring
# tool: it never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="hotkv redis redis-io"
workloads="get mix"
rates="10000,50000,100000,200000,300000,400000,600000,800000"
connections="8,64"
keys=100000
value=256
step=2
warmup=1
io_threads=2
redis_io_cpus=""
hotkv_threads=1
held_pct=97
retries=0

usage() {
    cat <<EOF
usage: bench/lat_sweep.sh [options]

Open-loop fixed-rate latency sweep, HotKV vs redis-server (see bench/README.md).

  --servers LIST       hotkv,redis,redis-io (default all three)
  --workloads LIST     get (GET only), mix (1 SET : 10 GET) (default both)
  --rates LIST         requested rates in req/s, ascending, comma separated
                       (default $rates)
  --connections LIST   total connection counts, comma separated (default $connections)
  --keys N             preloaded keys (default $keys)
  --value N            value size in bytes (default $value)
  --step-seconds SEC   measured seconds per step (default $step)
  --warmup SEC         unrecorded seconds before each step (default $warmup)
  --retries N          run a step that is not held again up to N times before
                       calling it NS (default $retries: the first miss stops the sweep)
  --io-threads N       redis-server --io-threads of the redis-io server (default $io_threads)
  --redis-io-cpus LIST taskset -c list for the redis-io server (default: --server-cpus)
  --hotkv-threads N    hotkv-server --threads (default $hotkv_threads)
$(lib_common_usage lat_sweep)
  --published          the published sizes: --keys 1000000 --connections 16,816
                       --step-seconds 20 --warmup 5
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --workloads) workloads=${2//,/ }; shift 2 ;;
        --rates) rates=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --value) value=$2; shift 2 ;;
        --step-seconds) step=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --retries) retries=$2; shift 2 ;;
        --io-threads) io_threads=$2; shift 2 ;;
        --redis-io-cpus) redis_io_cpus=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        --published) keys=1000000; connections="16,816"; step=20; warmup=5; shift ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis redis-io
[ -n "$redis_io_cpus" ] || redis_io_cpus=$SERVER_CPUS
for w in $workloads; do
    case $w in get|mix) ;; *) echo "unknown workload $w" >&2; exit 2 ;; esac
done
rates=${rates//,/ }
connections=${connections//,/ }

lib_init lat_sweep

wl_title() {
    case $1 in
        get) echo "GET" ;;
        mix) echo "1 SET : 10 GET" ;;
    esac
}
# hotkv-bench arguments of a workload: the template(s) and the ratio.
wl_args() {
    case $1 in
        get) printf '%s\n' "GET {key uniform $keys}" ;;
        mix) printf '%s\n' --ratio 1:10 "SET {key uniform $keys} {value $value}" "GET {key uniform $keys}" ;;
    esac
}

raw="$RESULTS/raw.csv"
echo "server,workload,connections,requested_rate,achieved_rate,held,p50_us,p90_us,p99_us,p999_us,max_us,errors,retry,send_lag_p99_us" > "$raw"
# CELL[server,workload,conns,rate] = "p50 p99" when held, "NS achieved"
# when not held, "FAIL reason" when hotkv-bench failed.
declare -A CELL MAXHELD
error_notes=""

sweep_server() {
    local s=$1 w c r json line ach p50 p90 p99 p999 max err ferr held cpt
    local -a args extra
    lib_start_sweep_server "$s"
    lib_preload "$s" strings "$keys" "SET {key sequence $keys} {value $value}"
    extra=()
    [ "$warmup" = 0 ] || extra=(--warmup "$warmup")
    for w in $workloads; do
        mapfile -t args < <(wl_args "$w")
        for c in $connections; do
            cpt=$(lib_conns_per_thread "$c")
            MAXHELD[$s,$w,$c]="-"
            for r in $rates; do
                # a step that is not held is run again up to --retries times
                # (a stall of the machine, not of the server, can sink one)
                for a in $(seq 0 "$retries"); do
                    lib_settle "$s"
                    json="$RESULTS/raw/$s-$w-c$c-r$r.json"
                    [ "$a" = 0 ] || json="$RESULTS/raw/$s-$w-c$c-r$r-retry$a.json"
                    if ! lib_bench "$s" "$json" -c "$cpt" --rate "$r" -d "$step" "${extra[@]}" "${args[@]}"; then
                        CELL[$s,$w,$c,$r]="FAIL"
                        kill -0 "${SRV_PID[$s]}" 2>/dev/null || { lib_log "$(label_of "$s") died"; break 4; }
                        break 2
                    fi
                    line=$(lib_json "$json" achieved_rate latency_us.p50 latency_us.p90 latency_us.p99 \
                               latency_us.p999 latency_us.max errors send_lag_us.p99 first_error)
                    IFS=$'\t' read -r ach p50 p90 p99 p999 max err lag99 ferr <<< "$line"
                    held=$(awk -v a="$ach" -v q="$r" -v p="$held_pct" 'BEGIN { print (a + 0 >= p / 100 * q) ? 1 : 0 }')
                    echo "$s,$w,$c,$r,$ach,$held,$p50,$p90,$p99,$p999,$max,$err,$a,$lag99" >> "$raw"
                    lib_log "$(label_of "$s") $(wl_title "$w") c$c rate $r$([ "$a" = 0 ] || echo " (retry $a)"): achieved $(lib_fmt "$ach" 0) p50 $p50 p99 $p99 us errors $err"
                    if [ "$err" != 0 ]; then
                        error_notes+="- $(label_of "$s"), $(wl_title "$w"), $c connections, $r req/s: $err errors, first: \`$ferr\`"$'\n'
                    fi
                    [ "$held" = 1 ] && break
                done
                if [ "$held" = 1 ]; then
                    CELL[$s,$w,$c,$r]="$p50 $p99 $lag99"
                    MAXHELD[$s,$w,$c]=$r
                else
                    CELL[$s,$w,$c,$r]="NS $ach"
                    break
                fi
            done
        done
    done
    lib_stop_server "$s"
}

for s in $servers; do sweep_server "$s"; done

# Markdown cells of one step: "p50 | p99", or "NS (achieved) | ", or "-" when not run.
cells() {
    local v=${CELL[$1]:-}
    case $v in
        "") echo "- | -" ;;
        FAIL) echo "failed | -" ;;
        NS\ *) echo "NS ($(lib_fmt "${v#NS }" 0)) | -" ;;
        *) read -r a b g <<< "$v"
           # Mark a step where the generator's own send lag is a large part
           # of the measured p99: the 1-core generator is then part of it.
           mark=$(awk -v l="${g:-0}" -v p="$b" 'BEGIN { print (l + 0 > 0.25 * p) ? " †" : "" }')
           echo "$(lib_fmt "$a" 1) | $(lib_fmt "$b" 1)$mark" ;;
    esac
}

tables="$RESULTS/tables.md"
plots=""
: > "$tables"
have_gp=0
lib_have_gnuplot && have_gp=1
for w in $workloads; do
    for c in $connections; do
        {
            echo "### $(wl_title "$w"), $c connections"
            echo
            hdr="| requested req/s |"; sep="|---:|"
            for s in $servers; do hdr+=" $(label_of "$s") p50 µs | p99 µs |"; sep+="---:|---:|"; done
            echo "$hdr"; echo "$sep"
            for r in $rates; do
                any=0
                for s in $servers; do [ -z "${CELL[$s,$w,$c,$r]:-}" ] || any=1; done
                [ "$any" = 1 ] || continue
                row="| $r |"
                for s in $servers; do row+=" $(cells "$s,$w,$c,$r") |"; done
                echo "$row"
            done
            echo
        } >> "$tables"
        if [ "$have_gp" = 1 ] && lib_plot_p99 "lat-$w-c$c" "$w,$c" \
               "p99 latency vs requested rate: $(wl_title "$w"), $c connections, ${value}-byte values, held steps only" \
               "requested rate (req/s)" "p99 latency (µs)"; then
            plots+=" lat-$w-c$c.png"
        fi
    done
done

{
    echo "### Highest held rate (req/s)"
    echo
    hdr="| workload | connections |"; sep="|---|---:|"
    for s in $servers; do hdr+=" $(label_of "$s") |"; sep+="---:|"; done
    echo "$hdr"; echo "$sep"
    for w in $workloads; do
        for c in $connections; do
            row="| $(wl_title "$w") | $c |"
            for s in $servers; do row+=" $(lib_top_mark "${MAXHELD[$s,$w,$c]:--}") |"; done
            echo "$row"
        done
    done
} > "$RESULTS/maxheld.md"

[ -s "$RESULTS/gnuplot.err" ] || rm -f "$RESULTS/gnuplot.err"

lib_sweep_report "Fixed-rate latency sweep: HotKV vs Redis" \
    "open loop (\`--rate\`, latency from the scheduled send time), steps of $step s after $warmup s warmup, rates: $rates req/s" \
    "keyspace: $keys keys \`key_%010d\` preloaded with $value-byte values (\`SET {key sequence $keys} {value $value}\`, --load); GET: \`GET {key uniform $keys}\`; 1:10: \`--ratio 1:10 \"SET {key uniform $keys} {value $value}\" \"GET {key uniform $keys}\"\`" \
    "connections (total over $BENCH_THREADS generator thread(s)): $connections" \
    "a step is held when achieved >= $held_pct% of requested; otherwise \`NS (achieved req/s)\` and the sweep stops for that server, workload and connection count (after $retries retries of the step); \`-\`: not run" \
    "plots (p99 of held steps vs rate):${plots:- none}" \
    "†: hotkv-bench's own send lag (how late it wrote requests against their schedule, p99, \`send_lag_us\` in the JSON) exceeded a quarter of the measured p99, so at that step the generator's CPU is part of what is measured; more client CPUs (\`--client-cpus\`) remove it" \
    "$(lib_io_note)"
