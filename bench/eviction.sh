#!/usr/bin/env bash
# eviction.sh - a cache under maxmemory, HotKV vs redis-server.
#
# For each server (hotkv-server --threads N and redis-server, pinned to the
# server CPUs, hotkv-bench to the client CPUs) and each eviction policy
# (allkeys-lru, allkeys-lfu by default), a fresh server gets
# CONFIG SET maxmemory and maxmemory-policy, then hotkv-bench runs the cache
# workload: GET {key zipfian N 0.99}, and on a miss (a nil reply) SET of
# that key on the same connection (hotkv-bench --miss), over a keyspace ten
# times what maxmemory holds. It warms up in steps until the memory is full
# (keys evicted) and the hit ratio of two steps in a row differs by at most
# --settle, then measures a closed-loop run (hit ratio, GET/s, GET and SET
# p99) and an open-loop run at a fixed GET rate (hit ratio, p99), and reads
# evicted_keys, used_memory and DBSIZE at the end. A server that refuses
# CONFIG SET maxmemory (or the policy), or takes it while INFO still shows
# another maxmemory or policy, is reported as "skipped: maxmemory
# unavailable (<error>)" in the table; one whose used_memory passes four
# times maxmemory during the warmup as "stopped: maxmemory not enforced". Writes results.md (a table per
# policy with HotKV/Redis ratios and the hit ratio difference, machine,
# versions, server command lines), raw.csv and every hotkv-bench JSON
# report. It measures; it never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="hotkv redis"
policies="allkeys-lru allkeys-lfu"
maxmemory=64mb
keys=auto
value=100
zipf=0.99
conns=8
dur=15
rate=10000
step=5
warmup_pipeline=16
warmup_max=90
settle=0.005
hotkv_threads=1

usage() {
    cat <<EOF
usage: bench/eviction.sh [options]

Hit ratio, throughput and p99 of a cache (zipfian GET, SET on miss) under
maxmemory with LRU and LFU eviction, HotKV vs redis-server (see
bench/README.md). The default run takes 3 to 5 minutes on 2 cores.

  --servers LIST       hotkv,redis (default both)
  --policies LIST      maxmemory-policy values (default allkeys-lru,allkeys-lfu)
  --maxmemory SIZE     CONFIG SET maxmemory, Redis units: 64mb, 500000kb, 1gb (default $maxmemory)
  --keys N             keyspace (default: 10 x what maxmemory holds, estimated at
                       value + 90 bytes a key, what Redis 7.0 takes; results.md
                       gives the real keyspace / keys-held ratio per server)
  --value N            value size in bytes (default $value)
  --zipf S             exponent of the key distribution (default $zipf)
  --connections N      connections in total (default $conns)
  --seconds SEC        measured seconds of the closed-loop and of the open-loop run (default $dur)
  --rate R             GET/s of the open-loop run, 0 for none (default $rate; keep it
                       well below both servers' closed-loop GET/s)
  --warmup-step SEC    length of a warmup step (default $step)
  --warmup-pipeline P  hotkv-bench -P of the warmup steps: the same requests, sooner (default $warmup_pipeline)
  --warmup-max SEC     warmup ends after this even when not settled (default $warmup_max)
  --settle D           settled: hit ratio of two steps in a row within D, with keys evicted (default $settle)
  --hotkv-threads N    hotkv-server --threads (default $hotkv_threads)
$(lib_common_usage eviction)
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --policies) policies=${2//,/ }; shift 2 ;;
        --maxmemory) maxmemory=$2; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --value) value=$2; shift 2 ;;
        --zipf) zipf=$2; shift 2 ;;
        --connections) conns=$2; shift 2 ;;
        --seconds) dur=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --warmup-step) step=$2; shift 2 ;;
        --warmup-max) warmup_max=$2; shift 2 ;;
        --warmup-pipeline) warmup_pipeline=$2; shift 2 ;;
        --settle) settle=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis
[ -n "$policies" ] || { echo "no policies" >&2; exit 2; }

maxmem_bytes=$(lib_mem_bytes "$maxmemory") || exit 2
[ "$maxmem_bytes" -gt 0 ] || { echo "--maxmemory must be above 0 (0 means no limit)" >&2; exit 2; }
keys_note="set with --keys"
if [ "$keys" = auto ]; then
    keys=$(( 10 * maxmem_bytes / (value + 90) ))
    keys_note="10 x maxmemory / (value + 90 bytes a key)"
fi

lib_init eviction
raw="$RESULTS/raw.csv"
echo "server,policy,metric,value" > "$raw"
declare -A R=()
# record SERVER POLICY METRIC VALUE: into raw.csv and R[server,policy,metric].
record() {
    echo "$1,$2,$3,\"${4//\"/\"\"}\"" >> "$raw"
    R[$1,$2,$3]=$4
}

label_of() {
    case $1 in
        hotkv) echo "HotKV (--threads $hotkv_threads)" ;;
        redis) echo "Redis" ;;
    esac
}


# Whether $1 is a number; calc EXPR FORMAT A B...: printf FORMAT of the
# awk expression EXPR over a, b, ... when all are numbers, else "n/a".
num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }
calc() {
    local expr=$1 fmt=$2 x
    shift 2
    for x in "$@"; do num "$x" || { echo n/a; return; }; done
    awk -v fmt="$fmt" -v a="${1:-0}" -v b="${2:-0}" -v c="${3:-0}" "BEGIN { v = $expr; if (v \"\" ~ /^(n\\/a|[-+]?nan|[-+]?inf)/) print \"n/a\"; else printf fmt \"\\n\", v }"
}

# The cache workload: GET of a zipfian key, SET of the same key on a miss.
get_tmpl="GET {key zipfian $keys $zipf}"
miss_tmpl="SET {key last} {value $value}"
cpt=$(lib_conns_per_thread "$conns")
workload=(-c "$cpt" --miss "$miss_tmpl" "$get_tmpl")
# Every hotkv-bench run gets a seed of its own (the same for each server at
# the same point of its run): with one seed each run would draw the same
# keys as the last, and a warmup step would only hit what the one before
# it had filled in.

# run_one SERVER POLICY: a fresh server, maxmemory, warmup, the measured runs.
run_one() {
    local s=$1 pol=$2 name="$1-$2" out json i hr prev="" ev used settled=no t0 full
    case $s in
        hotkv) lib_start_server "$name" hotkv "$(label_of hotkv)" --threads "$hotkv_threads" ;;
        redis) lib_start_server "$name" redis "$(label_of redis)" ;;
    esac
    out=$(lib_cli "$name" CONFIG SET maxmemory "$maxmemory" 2>&1 || true)
    if [ "$out" != OK ]; then
        record "$s" "$pol" skipped "skipped: maxmemory unavailable ($(echo "$out" | tr -d '\r' | head -1))"
        lib_log "$(label_of "$s") $pol: ${R[$s,$pol,skipped]}"
        lib_stop_server "$name"
        return
    fi
    out=$(lib_cli "$name" CONFIG SET maxmemory-policy "$pol" 2>&1 || true)
    if [ "$out" != OK ]; then
        record "$s" "$pol" skipped "skipped: maxmemory-policy $pol unavailable ($(echo "$out" | tr -d '\r' | head -1))"
        lib_log "$(label_of "$s") $pol: ${R[$s,$pol,skipped]}"
        lib_stop_server "$name"
        return
    fi
    # A server may take the setting without acting on it: INFO tells.
    local im ip
    im=$(lib_info "$name" memory maxmemory)
    ip=$(lib_info "$name" memory maxmemory_policy)
    if { num "$im" && [ "$im" != "$maxmem_bytes" ]; } || { [ "$ip" != n/a ] && [ "$ip" != "$pol" ]; }; then
        record "$s" "$pol" skipped "skipped: maxmemory unavailable (CONFIG SET answered OK, but INFO says maxmemory:$im maxmemory_policy:$ip)"
        lib_log "$(label_of "$s") $pol: ${R[$s,$pol,skipped]}"
        lib_stop_server "$name"
        return
    fi
    lib_cli "$name" CONFIG GET 'maxmemory*' 2>&1 | awk 'NR % 2 { k = $0; next } { print k " " $0 }' \
        > "$RESULTS/$name.maxmemory"
    record "$s" "$pol" maxmemory "$(lib_info "$name" memory maxmemory)"

    # Warmup: steps of --warmup-step seconds until keys are evicted (or
    # used_memory reaches 90% of maxmemory, for a server without the
    # evicted_keys field) and the hit ratio has settled, or --warmup-max.
    # Pipelined (--warmup-pipeline): the same GETs and SETs on miss, in
    # batches, so the memory fills in seconds rather than minutes.
    t0=$SECONDS
    i=0
    while :; do
        i=$((i + 1))
        json="$RESULTS/raw/$name-warmup$i.json"
        lib_bench "$name" "$json" -d "$step" -P "$warmup_pipeline" --seed "$i" "${workload[@]}" || true
        hr=$(lib_json "$json" miss.hit_ratio)
        ev=$(lib_info "$name" stats evicted_keys)
        used=$(lib_info "$name" memory used_memory)
        echo "$s,$pol,warmup_step_$i,\"hit_ratio=$hr used_memory=$used evicted_keys=$ev\"" >> "$raw"
        lib_log "$(label_of "$s") $pol warmup $i: hit ratio $hr, used_memory $used, evicted_keys $ev"
        if num "$used" && [ "$used" -gt $((4 * maxmem_bytes)) ]; then
            record "$s" "$pol" skipped "stopped: maxmemory not enforced (used_memory $used after $((SECONDS - t0)) s of warmup, maxmemory $maxmem_bytes)"
            lib_log "$(label_of "$s") $pol: ${R[$s,$pol,skipped]}"
            lib_stop_server "$name"
            return
        fi
        full=0
        if num "$ev"; then
            if [ "$ev" -gt 0 ]; then full=1; fi
        elif num "$used" && [ "$used" -ge $((maxmem_bytes * 9 / 10)) ]; then
            full=1
        fi
        if [ "$full" = 1 ] && num "$hr" && num "$prev" &&
            [ "$(calc 'a - b <= c && b - a <= c' '%d' "$hr" "$prev" "$settle")" = 1 ]; then
            settled=yes
            break
        fi
        if [ "$full" = 1 ]; then prev=$hr; fi
        [ $((SECONDS - t0 + step)) -le "$warmup_max" ] || break
    done
    record "$s" "$pol" warmup_s "$((SECONDS - t0))"
    record "$s" "$pol" warmup_settled "$settled"
    record "$s" "$pol" warmup_last_hit_ratio "$hr"

    # Closed loop: the most the server does with --connections connections.
    local ev0 ev1 line
    ev0=$(lib_info "$name" stats evicted_keys)
    json="$RESULTS/raw/$name-closed.json"
    lib_bench "$name" "$json" -d "$dur" --seed 1001 "${workload[@]}" || true
    ev1=$(lib_info "$name" stats evicted_keys)
    line=$(lib_json "$json" miss.hit_ratio achieved_rate miss.rate per_template.0.latency_us.p50 \
               per_template.0.latency_us.p99 miss.latency_us.p99 errors miss.errors duration_s)
    local hrc get_rps set_rps gp50 gp99 sp99 gerr serr win
    IFS=$'\t' read -r hrc get_rps set_rps gp50 gp99 sp99 gerr serr win <<< "$line"
    record "$s" "$pol" hit_ratio_closed "$hrc"
    record "$s" "$pol" get_rps "$get_rps"
    record "$s" "$pol" set_rps "$set_rps"
    record "$s" "$pol" total_rps "$(calc 'a + b' '%.1f' "$get_rps" "$set_rps")"
    record "$s" "$pol" get_p50_closed "$gp50"
    record "$s" "$pol" get_p99_closed "$gp99"
    record "$s" "$pol" set_p99_closed "$sp99"
    record "$s" "$pol" errors_closed "$gerr + $serr"
    record "$s" "$pol" evictions_per_s "$(calc '(b - a) / c' '%.1f' "$ev0" "$ev1" "$win")"
    lib_log "$(label_of "$s") $pol closed loop: hit ratio $hrc, $(lib_fmt "$get_rps" 0) GET/s, GET p99 $gp99 us, SET p99 $sp99 us, errors $gerr + $serr"

    # Open loop at a fixed GET rate: p99 without coordinated omission.
    if [ "$rate" != 0 ]; then
        lib_settle "$name"
        json="$RESULTS/raw/$name-open.json"
        lib_bench "$name" "$json" -d "$dur" --rate "$rate" --seed 1002 "${workload[@]}" || true
        line=$(lib_json "$json" miss.hit_ratio achieved_rate per_template.0.latency_us.p99 miss.latency_us.p99 \
                   errors miss.errors send_lag_us.p99)
        local hro ach lag
        IFS=$'\t' read -r hro ach gp99 sp99 gerr serr lag <<< "$line"
        record "$s" "$pol" send_lag_p99_open "$lag"
        record "$s" "$pol" hit_ratio_open "$hro"
        record "$s" "$pol" achieved_open "$ach"
        record "$s" "$pol" get_p99_open "$gp99"
        record "$s" "$pol" set_p99_open "$sp99"
        record "$s" "$pol" errors_open "$gerr + $serr"
        lib_log "$(label_of "$s") $pol open loop at $rate GET/s: hit ratio $hro, achieved $(lib_fmt "$ach" 0), GET p99 $gp99 us, SET p99 $sp99 us"
    fi

    # The state at the end.
    local mm dbs
    used=$(lib_info "$name" memory used_memory)
    mm=$(lib_info "$name" memory maxmemory)
    dbs=$(lib_cli "$name" DBSIZE 2>/dev/null | tr -d '\r') || dbs=n/a
    record "$s" "$pol" evicted_keys "$(lib_info "$name" stats evicted_keys)"
    record "$s" "$pol" used_memory_mib "$(calc 'a / 1048576' '%.1f' "$used")"
    record "$s" "$pol" used_over_max "$(calc 'b > 0 ? a / b : "n/a"' '%.3f' "$used" "$mm")"
    record "$s" "$pol" keys_held "$dbs"
    record "$s" "$pol" keyspace_over_held "$(calc 'b > 0 ? a / b : "n/a"' '%.1f' "$keys" "$dbs")"
    lib_cli "$name" INFO memory 2>/dev/null | tr -d '\r' > "$RESULTS/$name.info-memory" || true
    lib_cli "$name" INFO stats 2>/dev/null | tr -d '\r' > "$RESULTS/$name.info-stats" || true
    lib_log "$(label_of "$s") $pol end: used_memory $used of $mm, evicted_keys ${R[$s,$pol,evicted_keys]}, keys $dbs"
    lib_stop_server "$name"
}

for pol in $policies; do
    for s in $servers; do run_one "$s" "$pol"; done
done

# ---- report -------------------------------------------------------------------
v() { echo "${R[$1,$2,$3]:-n/a}"; }
has() { [[ " $servers " == *" $1 "* ]]; }
cell() { # server policy metric decimals
    if [ -n "${R[$1,$2,skipped]:-}" ] || ! has "$1"; then echo "–"; else lib_fmt "$(v "$1" "$2" "$3")" "$4"; fi
}
row() { # label policy metric decimals [noratio]
    local h r ratio="n/a"
    h=$(cell hotkv "$2" "$3" "$4")
    r=$(cell redis "$2" "$3" "$4")
    [ -n "${5:-}" ] || ratio=$(lib_ratio "$h" "$r")
    [ -z "${5:-}" ] || ratio=""
    echo "| $1 | $h | $r | $ratio |"
}
tables="$RESULTS/tables.md"
{
    for pol in $policies; do
        echo "### $pol"
        echo
        echo "| | $(label_of hotkv) | $(label_of redis) | HotKV/Redis |"
        echo "|---|---:|---:|---:|"
        # The first row carries a skip in place of the number.
        h=$(cell hotkv "$pol" hit_ratio_closed 4); r=$(cell redis "$pol" hit_ratio_closed 4)
        has hotkv || h="not run"; has redis || r="not run"
        [ -z "${R[hotkv,$pol,skipped]:-}" ] || h=${R[hotkv,$pol,skipped]}
        [ -z "${R[redis,$pol,skipped]:-}" ] || r=${R[redis,$pol,skipped]}
        echo "| hit ratio, closed loop (GET hits / GETs) | $h | $r | $(lib_ratio "$h" "$r") |"
        [ "$rate" = 0 ] || row "hit ratio, open loop at $rate GET/s" "$pol" hit_ratio_open 4
        row "GET/s, closed loop" "$pol" get_rps 0
        row "SET/s on miss, closed loop" "$pol" set_rps 0
        row "GET p50, closed loop, µs" "$pol" get_p50_closed 1
        row "GET p99, closed loop, µs" "$pol" get_p99_closed 1
        row "SET-on-miss p99, closed loop, µs" "$pol" set_p99_closed 1
        if [ "$rate" != 0 ]; then
            row "GET/s achieved, open loop (requested $rate)" "$pol" achieved_open 0
            row "GET p99, open loop, µs" "$pol" get_p99_open 1
            row "SET-on-miss p99, open loop, µs" "$pol" set_p99_open 1
            row "generator send lag p99, open loop, µs" "$pol" send_lag_p99_open 1
        fi
        row "evictions/s during the closed loop" "$pol" evictions_per_s 0
        row "evicted_keys at the end (whole run)" "$pol" evicted_keys 0
        row "used_memory at the end, MiB" "$pol" used_memory_mib 1
        row "used_memory / maxmemory at the end" "$pol" used_over_max 3
        row "keys held at the end (DBSIZE)" "$pol" keys_held 0
        row "keyspace / keys held" "$pol" keyspace_over_held 1
        row "warmup, s" "$pol" warmup_s 0 noratio
        echo "| warmup settled | $(cell hotkv "$pol" warmup_settled 0) | $(cell redis "$pol" warmup_settled 0) | |"
        echo "| errors, closed loop (GET + SET) | $(cell hotkv "$pol" errors_closed 0) | $(cell redis "$pol" errors_closed 0) | |"
        [ "$rate" = 0 ] ||
            echo "| errors, open loop (GET + SET) | $(cell hotkv "$pol" errors_open 0) | $(cell redis "$pol" errors_open 0) | |"
        echo
        h=$(v hotkv "$pol" hit_ratio_closed); r=$(v redis "$pol" hit_ratio_closed)
        if [[ $h =~ ^[0-9.]+$ && $r =~ ^[0-9.]+$ ]] && [ -z "${R[hotkv,$pol,skipped]:-}${R[redis,$pol,skipped]:-}" ]; then
            awk -v a="$h" -v b="$r" 'BEGIN { d = a - b; printf "Hit ratio HotKV − Redis (closed loop): %+.4f; the expectation is ≥ −0.01: %s.\n", d, (d >= -0.01 ? "met" : "not met") }'
        else
            echo "Hit ratio HotKV − Redis: n/a (a server was skipped or not run)."
        fi
        for s in $servers; do
            if [ "$rate" != 0 ] && [ "$(calc 'a < 1.5 * b' '%d' "$(v "$s" "$pol" get_rps)" "$rate")" = 1 ]; then
                echo
                echo "⚠ $(label_of "$s"): the open-loop rate ($rate GET/s, plus the SETs on miss) is not well below its closed-loop $(lib_fmt "$(v "$s" "$pol" get_rps)" 0) GET/s: its open-loop p99 is mostly the queue of a saturated server (lower --rate)."
            fi
            if [ "$(v "$s" "$pol" warmup_settled)" = no ]; then
                echo
                echo "⚠ $(label_of "$s"): the warmup did not settle in $warmup_max s (evicted_keys $(v "$s" "$pol" evicted_keys) at the end); its numbers may be those of a cache still filling or changing (raise --warmup-max)."
            fi
        done
        echo
    done
} > "$tables"

{
    lib_header "Eviction: HotKV vs Redis" \
        "maxmemory $maxmemory ($maxmem_bytes bytes), set with \`CONFIG SET maxmemory\` and \`CONFIG SET maxmemory-policy\` on a fresh server per policy (other settings at their defaults: Redis's maxmemory-samples 5)" \
        "keyspace: $keys keys ($keys_note), $value-byte values; workload \`hotkv-bench --miss \"$miss_tmpl\" \"$get_tmpl\"\`: GET of a Zipf-distributed key (exponent $zipf, key 0 the hottest), and when the reply is nil a SET of the same key next on that connection; $conns connections; the hit ratio is GET hits / GETs in the measured window" \
        "warmup: closed-loop steps of $step s (pipeline $warmup_pipeline: a batch leads with the SETs for the last batch's misses) until keys are evicted and the hit ratio of two steps in a row is within $settle, at most $warmup_max s; then $dur s closed loop (-P 1)$([ "$rate" = 0 ] || echo ", then $dur s open loop at $rate GET/s (SETs on miss come on top, sent at once on the nil reply)")" \
        "GET/s is the GETs completed per second; SET/s the SETs that followed misses; p99 of GETs and of SETs separately; evicted_keys, used_memory and maxmemory from INFO, keys held from DBSIZE"
    echo
    echo "## Results"
    echo
    cat "$tables"
    lib_server_section
} > "$RESULTS/results.md"
lib_show_table "$tables"
