#!/usr/bin/env bash
# ps_fanout.sh - pub/sub fan-out: one channel, many subscribers, HotKV vs redis-server.
#
# For each subscriber count (default 1, 100, 1000, 10000) and each server
# (HotKV with --threads = the number of server CPUs, redis-server), one after
# the other and pinned to the server CPUs, runs `hotkv-bench --pubsub` with
# every subscriber on one channel and the publishers at a fixed publish
# rate, stepping the *delivery* rate up (publish rate = delivery rate /
# subscribers). A step is held when the achieved publish rate is >= 97% of
# the requested one and >= 97% of the expected deliveries arrived;
# the first step that is not held (after --retries reruns) ends the sweep
# for that server and subscriber count. Reports, per subscriber count and server, the highest
# held delivery rate (deliveries/s measured) with its p50/p99 delivery
# latency, and the p99 at the lightest step. Writes results.md, raw.csv and
# every step's JSON. A server without pub/sub shows n/a. It measures; it
# never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="hotkv redis"
subscribers="1,100,1000,10000"
drates="10000,25000,50000,100000,200000,400000,800000,1600000"
publishers=1
payload=128
step=2
warmup=1
hotkv_threads=""
held_pct=97
retries=1
maxclients=20000

usage() {
    cat <<EOF
usage: bench/ps_fanout.sh [options]

Pub/sub fan-out on one channel, HotKV vs redis-server (see bench/README.md).

  --servers LIST       hotkv,redis (default both)
  --subscribers LIST   subscriber counts on the one channel (default $subscribers)
  --delivery-rates LIST  delivery rates to step through, deliveries/s, ascending
                       (default $drates); publish rate = rate / subscribers
  --publishers N       publisher connections (default $publishers)
  --payload N          message size in bytes (default $payload)
  --step-seconds SEC   measured seconds per step (default $step)
  --warmup SEC         unrecorded seconds before each step (default $warmup)
  --retries N          run a step that is not held again up to N times before
                       ending the sweep there (default $retries)
  --hotkv-threads N    hotkv-server --threads (default: number of server CPUs)
  --maxclients N       both servers' maxclients (default $maxclients)
$(lib_common_usage ps_fanout)
  --published          the published sizes: --step-seconds 20 --warmup 5
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --subscribers) subscribers=$2; shift 2 ;;
        --delivery-rates) drates=$2; shift 2 ;;
        --publishers) publishers=$2; shift 2 ;;
        --payload) payload=$2; shift 2 ;;
        --step-seconds) step=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        --retries) retries=$2; shift 2 ;;
        --maxclients) maxclients=$2; shift 2 ;;
        --published) step=20; warmup=5; shift ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis
[ -n "$hotkv_threads" ] || hotkv_threads=$(lib_cpu_count "$SERVER_CPUS")
drates=${drates//,/ }
subscribers=${subscribers//,/ }

# Ten thousand subscribers need as many descriptors in the generator and
# in the server; both inherit this.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
max_sub=0
for m in $subscribers; do [ "$m" -le "$max_sub" ] || max_sub=$m; done
if [ $(( max_sub + publishers + 64 )) -gt "$(ulimit -n)" ]; then
    echo "ps_fanout.sh: $max_sub subscribers need more file descriptors than ulimit -Hn ($(ulimit -Hn)) allows" >&2
    exit 2
fi

lib_init ps_fanout

label_of() {
    case $1 in
        hotkv) echo "HotKV (--threads $hotkv_threads)" ;;
        redis) echo "Redis" ;;
    esac
}

start() {
    case $1 in
        hotkv) lib_start_server hotkv hotkv "$(label_of hotkv)" --threads "$hotkv_threads" --maxclients "$maxclients" ;;
        redis) lib_start_server redis redis "$(label_of redis)" --maxclients "$maxclients" ;;
    esac
}

raw="$RESULTS/raw.csv"
echo "server,subscribers,delivery_rate,publish_rate,achieved_publish_rate,published,delivered,expected,deliveries_per_s,held,p50_us,p99_us,max_us,errors,retry" > "$raw"
# BEST[s,m] = "deliveries/s p50 p99 rate" of the highest held step;
# FIRST[s,m] = "p50 p99 deliveries/s" of the lightest step when held;
# STOP[s,m] = what ended the sweep; NA[s] when the server has no pub/sub.
declare -A BEST FIRST STOP NA
error_notes=""

for s in $servers; do
    start "$s"
    if ! lib_probe "$s" PUBLISH bench:probe x; then
        lib_log "$(label_of "$s"): no PUBLISH (n/a)"
        NA[$s]=1
        lib_stop_server "$s"
        continue
    fi
    for m in $subscribers; do
        first=1
        for d in $drates; do
            # publish rate for this delivery rate, at least 1 msg/s
            pr=$(awk -v d="$d" -v m="$m" 'BEGIN { r = d / m; if (r < 1) r = 1; printf "%.3f\n", r }')
            stopped=""
            for a in $(seq 0 "$retries"); do
                stopped=""
                lib_settle "$s"
                json="$RESULTS/raw/$s-s$m-d$d.json"
                [ "$a" = 0 ] || json="$RESULTS/raw/$s-s$m-d$d-retry$a.json"
                if ! lib_bench "$s" "$json" --pubsub --rate "$pr" -d "$step" --warmup "$warmup" \
                         --publishers "$publishers" --subscribers "$m" --channels 1 --payload "$payload"; then
                    stopped="failed at $d/s"
                    kill -0 "${SRV_PID[$s]}" 2>/dev/null || { lib_log "$(label_of "$s") died"; start "$s"; }
                    continue
                fi
                line=$(lib_json "$json" achieved_rate pubsub.published pubsub.delivered pubsub.expected \
                           pubsub.deliveries_per_s latency_us.p50 latency_us.p99 latency_us.max errors first_error)
                IFS=$'\t' read -r ach pub del exp dps p50 p99 max err ferr <<< "$line"
                # one message short over the whole step still holds (at a few
                # publishes a second a window edge is a large share)
                held=$(awk -v a="$ach" -v q="$pr" -v d="$del" -v e="$exp" -v p="$held_pct" -v st="$step" 'BEGIN {
                    ok = (a * st + 1 >= p / 100 * q * st);
                    if (e ~ /^[0-9]+$/ && e + 0 > 0 && d + 0 < p / 100 * e) ok = 0;
                    print ok ? 1 : 0 }')
                echo "$s,$m,$d,$pr,$ach,$pub,$del,$exp,$dps,$held,$p50,$p99,$max,$err,$a" >> "$raw"
                lib_log "$(label_of "$s") $m subscribers, $d deliveries/s ($pr publishes/s)$([ "$a" = 0 ] || echo " (retry $a)"): achieved $(lib_fmt "$ach" 1)/s, delivered $del/$exp ($(lib_fmt "$dps" 0)/s), p50 $p50 p99 $p99 us"
                if [ "$err" != 0 ]; then
                    error_notes+="- $(label_of "$s"), $m subscribers, $d deliveries/s: $err errors, first: \`$ferr\`"$'\n'
                fi
                [ "$held" = 1 ] && break
                stopped="not held at $d/s (delivered $(lib_fmt "$dps" 0)/s)"
            done
            if [ -n "$stopped" ]; then
                STOP[$s,$m]=$stopped
                break
            fi
            BEST[$s,$m]="$dps $p50 $p99 $d"
            if [ "$first" = 1 ]; then FIRST[$s,$m]="$p50 $p99 $dps"; first=0; fi
        done
        [ -n "${STOP[$s,$m]:-}" ] || STOP[$s,$m]="held up to the last rate"
    done
    lib_stop_server "$s"
done

tables="$RESULTS/tables.md"
{
    echo "### Highest held delivery rate, one channel"
    echo
    hdr="| subscribers |"; sep="|---:|"
    for s in $servers; do hdr+=" $(label_of "$s") deliveries/s | p50 µs | p99 µs |"; sep+="---:|---:|---:|"; done
    echo "$hdr"; echo "$sep"
    for m in $subscribers; do
        row="| $m |"
        for s in $servers; do
            if [ -n "${NA[$s]:-}" ]; then row+=" n/a | n/a | n/a |"; continue; fi
            v=${BEST[$s,$m]:-}
            if [ -z "$v" ]; then row+=" none held | - | - |"; continue; fi
            read -r a b c _ <<< "$v"
            row+=" $(lib_fmt "$a" 0) | $(lib_fmt "$b" 1) | $(lib_fmt "$c" 1) |"
        done
        echo "$row"
    done
    echo
    echo "### Lightest step (${drates%% *} deliveries/s requested)"
    echo
    hdr="| subscribers |"; sep="|---:|"
    for s in $servers; do hdr+=" $(label_of "$s") p50 µs | p99 µs |"; sep+="---:|---:|"; done
    echo "$hdr"; echo "$sep"
    for m in $subscribers; do
        row="| $m |"
        for s in $servers; do
            if [ -n "${NA[$s]:-}" ]; then row+=" n/a | n/a |"; continue; fi
            v=${FIRST[$s,$m]:-}
            if [ -z "$v" ]; then row+=" NS | - |"; continue; fi
            read -r a b _ <<< "$v"
            row+=" $(lib_fmt "$a" 1) | $(lib_fmt "$b" 1) |"
        done
        echo "$row"
    done
    echo
    echo "### Where each sweep stopped"
    echo
    for m in $subscribers; do
        for s in $servers; do
            [ -n "${NA[$s]:-}" ] || echo "- $(label_of "$s"), $m subscribers: ${STOP[$s,$m]}"
        done
    done
    echo
} > "$tables"

{
    lib_header "Pub/sub fan-out: HotKV vs Redis" \
        "\`hotkv-bench --pubsub --channels 1\`: all subscribers on one channel, $publishers publisher(s), $payload-byte payloads carrying the scheduled send time; latency = receive time - scheduled publish time; steps of $step s after $warmup s warmup" \
        "delivery rates stepped: $drates deliveries/s (publish rate = delivery rate / subscribers, at least 1/s); subscriber counts: $subscribers" \
        "a step is held when the achieved publish rate is >= $held_pct% of requested (one message short over the step allowed) and >= $held_pct% of the expected deliveries arrived; a step not held is run again up to $retries time(s); deliveries/s = deliveries of the messages published in the measured window / window" \
        "the generator reads every subscriber socket on its own CPUs: at high delivery rates it may be the limit (compare the two servers, not the absolute numbers)"
    echo
    echo "## Results"
    echo
    cat "$tables"
    if [ -n "$error_notes" ]; then
        echo "⚠ steps with error replies:"
        echo
        printf '%s' "$error_notes"
    fi
    lib_server_section
} > "$RESULTS/results.md"
lib_show_table "$tables"
