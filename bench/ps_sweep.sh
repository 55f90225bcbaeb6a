#!/usr/bin/env bash
# ps_sweep.sh - pub/sub delivery latency at fixed publish rates, HotKV vs redis-server.
#
# For each server (HotKV, redis-server single-threaded, redis-server with
# --io-threads N), one after the other and pinned to the server CPUs, runs
# `hotkv-bench --pubsub` at fixed total publish rates stepping up, for each
# subscriber count. By default every subscriber has a channel of its own
# and the publishers go round the channels, so each message reaches exactly
# one subscriber (--channels N shares channels instead). Publishers send
# PUBLISH on a fixed schedule with the
# scheduled send time in the payload, subscribers record receive time minus
# that time. A step is held when the achieved publish rate is >= 97% of the
# requested one and >= 97% of the expected messages were delivered;
# otherwise "NS (achieved)" and the sweep stops for that server and
# subscriber count. A server without pub/sub ("ERR unknown command" to
# PUBLISH) shows n/a (HotKV until pub/sub lands). Writes results.md (p50/p99
# per step side by side, machine, versions, server command lines and CONFIG
# GET *), raw JSON of every step, raw.csv and a p99-vs-rate plot per
# subscriber count. It is a measuring tool: it never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="hotkv redis redis-io"
rates="1000,2000,5000,10000,20000,40000,60000,80000,100000,150000,200000"
subscribers="10,100"
publishers=10
channels=per-subscriber
payload=128
step=2
warmup=1
io_threads=2
redis_io_cpus=""
hotkv_threads=""
held_pct=97
retries=0

usage() {
    cat <<EOF
usage: bench/ps_sweep.sh [options]

Pub/sub delivery latency at fixed publish rates, HotKV vs redis-server (see bench/README.md).

  --servers LIST       hotkv,redis,redis-io (default all three)
  --rates LIST         total publish rates in messages/s, ascending, comma separated
                       (default $rates)
  --subscribers LIST   subscriber counts, comma separated (default $subscribers)
  --publishers N       publisher connections (default $publishers)
  --channels N         channels shared by the subscribers (default $channels: as many
                       channels as subscribers, each message to one subscriber)
  --payload N          message size in bytes (default $payload)
  --step-seconds SEC   measured seconds per step (default $step)
  --warmup SEC         unrecorded seconds before each step (default $warmup)
  --retries N          run a step that is not held again up to N times before
                       calling it NS (default $retries: the first miss stops the sweep)
  --io-threads N       redis-server --io-threads of the redis-io server (default $io_threads)
  --redis-io-cpus LIST taskset -c list for the redis-io server (default: --server-cpus)
  --hotkv-threads N    hotkv-server --threads (default: number of server CPUs)
$(lib_common_usage ps_sweep)
  --published          the published sizes: --subscribers 100,1000 --publishers 50
                       --step-seconds 20 --warmup 5
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --rates) rates=$2; shift 2 ;;
        --subscribers) subscribers=$2; shift 2 ;;
        --publishers) publishers=$2; shift 2 ;;
        --channels) channels=$2; shift 2 ;;
        --payload) payload=$2; shift 2 ;;
        --step-seconds) step=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --retries) retries=$2; shift 2 ;;
        --io-threads) io_threads=$2; shift 2 ;;
        --redis-io-cpus) redis_io_cpus=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        --published) subscribers="100,1000"; publishers=50; step=20; warmup=5; shift ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis redis-io
[ -n "$redis_io_cpus" ] || redis_io_cpus=$SERVER_CPUS
[ -n "$hotkv_threads" ] || hotkv_threads=$(lib_cpu_count "$SERVER_CPUS")
case $channels in per-subscriber|[1-9]*) ;; *) echo "bad --channels $channels" >&2; exit 2 ;; esac
rates=${rates//,/ }
subscribers=${subscribers//,/ }

lib_init ps_sweep


raw="$RESULTS/raw.csv"
echo "server,subscribers,requested_rate,achieved_rate,published,delivered,expected,held,p50_us,p90_us,p99_us,p999_us,max_us,errors,retry" > "$raw"
# CELL[server,subs,rate] = "p50 p99" (held), "NS achieved", "FAIL";
# NA[server] set when the server has no pub/sub.
declare -A CELL MAXHELD NA
error_notes=""

sweep_server() {
    local s=$1 m r json line ach pub del exp p50 p90 p99 p999 max err ferr held k
    local -a extra
    lib_start_sweep_server "$s"
    if ! lib_probe "$s" PUBLISH bench:probe x; then
        lib_log "$(label_of "$s"): no PUBLISH (n/a)"
        NA[$s]=1
        lib_stop_server "$s"
        return 0
    fi
    extra=()
    [ "$warmup" = 0 ] || extra=(--warmup "$warmup")
    for m in $subscribers; do
        MAXHELD[$s,$m]="-"
        k=$(chans_for "$m")
        for r in $rates; do
            # a step that is not held is run again up to --retries times
            for a in $(seq 0 "$retries"); do
                lib_settle "$s"
                json="$RESULTS/raw/$s-s$m-r$r.json"
                [ "$a" = 0 ] || json="$RESULTS/raw/$s-s$m-r$r-retry$a.json"
                if ! lib_bench "$s" "$json" --pubsub --rate "$r" -d "$step" "${extra[@]}" \
                         --publishers "$publishers" --subscribers "$m" --channels "$k" \
                         --payload "$payload"; then
                    CELL[$s,$m,$r]="FAIL"
                    kill -0 "${SRV_PID[$s]}" 2>/dev/null || { lib_log "$(label_of "$s") died"; break 3; }
                    break 2
                fi
                line=$(lib_json "$json" achieved_rate pubsub.published pubsub.delivered pubsub.expected \
                           latency_us.p50 latency_us.p90 latency_us.p99 latency_us.p999 latency_us.max errors first_error)
                IFS=$'\t' read -r ach pub del exp p50 p90 p99 p999 max err ferr <<< "$line"
                held=$(awk -v a="$ach" -v q="$r" -v d="$del" -v e="$exp" -v p="$held_pct" 'BEGIN {
                    ok = (a + 0 >= p / 100 * q);
                    if (e ~ /^[0-9]+$/ && e + 0 > 0 && d + 0 < p / 100 * e) ok = 0;
                    print ok ? 1 : 0 }')
                echo "$s,$m,$r,$ach,$pub,$del,$exp,$held,$p50,$p90,$p99,$p999,$max,$err,$a" >> "$raw"
                lib_log "$(label_of "$s") $m subscribers rate $r$([ "$a" = 0 ] || echo " (retry $a)"): achieved $(lib_fmt "$ach" 0) delivered $del/$exp p50 $p50 p99 $p99 us"
                if [ "$err" != 0 ]; then
                    error_notes+="- $(label_of "$s"), $m subscribers, $r msg/s: $err errors, first: \`$ferr\`"$'\n'
                fi
                [ "$held" = 1 ] && break
            done
            if [ "$held" = 1 ]; then
                CELL[$s,$m,$r]="$p50 $p99"
                MAXHELD[$s,$m]=$r
            else
                CELL[$s,$m,$r]="NS $ach"
                break
            fi
        done
    done
    lib_stop_server "$s"
}

# Channels for m subscribers: one each, or the --channels count.
chans_for() {
    if [ "$channels" = per-subscriber ]; then echo "$1"; else echo "$channels"; fi
}

# Subscribers need descriptors in the generator; the servers inherit it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

for s in $servers; do sweep_server "$s"; done

# Markdown cells of one step: "p50 | p99", "NS (achieved) | -", "n/a | n/a", "-" when not run.
cells() {
    local s=$1 v
    if [ -n "${NA[$s]:-}" ]; then echo "n/a | n/a"; return; fi
    v=${CELL[$2]:-}
    case $v in
        "") echo "- | -" ;;
        FAIL) echo "failed | -" ;;
        NS\ *) echo "NS ($(lib_fmt "${v#NS }" 0)) | -" ;;
        *) read -r a b <<< "$v"; echo "$(lib_fmt "$a" 1) | $(lib_fmt "$b" 1)" ;;
    esac
}

tables="$RESULTS/tables.md"
plots=""
: > "$tables"
have_gp=0
lib_have_gnuplot && have_gp=1
for m in $subscribers; do
    {
        echo "### $m subscriber(s), $publishers publisher(s), $(chans_for "$m") channel(s), ${payload}-byte payloads"
        echo
        hdr="| publish rate msg/s |"; sep="|---:|"
        for s in $servers; do hdr+=" $(label_of "$s") p50 µs | p99 µs |"; sep+="---:|---:|"; done
        echo "$hdr"; echo "$sep"
        for r in $rates; do
            any=0
            for s in $servers; do [ -z "${CELL[$s,$m,$r]:-}" ] || any=1; done
            [ "$any" = 1 ] || continue
            row="| $r |"
            for s in $servers; do row+=" $(cells "$s" "$s,$m,$r") |"; done
            echo "$row"
        done
        echo
    } >> "$tables"
    if [ "$have_gp" = 1 ] && lib_plot_p99 "ps-s$m" "$m" \
           "pub/sub delivery p99 vs publish rate: $m subscriber(s), $publishers publisher(s), $(chans_for "$m") channel(s), ${payload}-byte messages, held steps only" \
           "publish rate (messages/s)" "p99 delivery latency (µs)"; then
        plots+=" ps-s$m.png"
    fi
done

{
    echo "### Highest held publish rate (msg/s)"
    echo
    hdr="| subscribers |"; sep="|---:|"
    for s in $servers; do hdr+=" $(label_of "$s") |"; sep+="---:|"; done
    echo "$hdr"; echo "$sep"
    for m in $subscribers; do
        row="| $m |"
        for s in $servers; do
            if [ -n "${NA[$s]:-}" ]; then row+=" n/a |"; else row+=" $(lib_top_mark "${MAXHELD[$s,$m]:--}") |"; fi
        done
        echo "$row"
    done
} > "$RESULTS/maxheld.md"

[ -s "$RESULTS/gnuplot.err" ] || rm -f "$RESULTS/gnuplot.err"

lib_sweep_report "Pub/sub delivery latency: HotKV vs Redis" \
    "\`hotkv-bench --pubsub\`: $publishers publisher(s) at a fixed total publish rate, channels: $([ "$channels" = per-subscriber ] && echo "one per subscriber (each message to one subscriber)" || echo "$channels shared"), $payload-byte payloads carrying the scheduled send time; latency = receive time - scheduled publish time; steps of $step s after $warmup s warmup; rates: $rates msg/s" \
    "subscriber counts: $subscribers" \
    "a step is held when the achieved publish rate is >= $held_pct% of requested and >= $held_pct% of the expected deliveries arrived; otherwise \`NS (achieved msg/s)\` and the sweep stops for that server and subscriber count (after $retries retries of the step); \`-\`: not run; n/a: no pub/sub (\"ERR unknown command\" to PUBLISH)" \
    "plots (p99 of held steps vs rate):${plots:- none}" \
    "$(lib_io_note)"
