#!/usr/bin/env bash
# tls.sh - HotKV (--threads 1) against redis-server, both over TLS, in the
# same run: GET and SET throughput and server CPU per request with 1 KB
# values at pipeline 1 and 50 (hotkv-bench --tls, closed loop, 50
# connections), and new TLS connections per second with a full handshake
# and with a resumed session (openssl s_time -new / -reuse). Each server is
# pinned to its CPU and the clients to another; rows alternate between the
# servers; the median of --runs runs is reported. Server CPU is utime+stime
# of the whole process (/proc/PID/stat) around each run. It is a measuring
# tool, not a test: it never fails on a slow result.
#
# The certificates (a CA and an RSA 2048 server certificate) are made in
# the results folder with the openssl command line. Clients do not present
# certificates (tls-auth-clients no) and verify the server.
# See bench/README.md (tls.sh) for how to read the table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

servers="hotkv redis"
tests="set get"
pipelines="1 50"
duration=5
runs=3
clients=50
keyspace=100000
handshakes=1

usage() {
    cat <<EOF
usage: $0 [options]
  --servers LIST       hotkv and/or redis (default "$servers")
  --tests LIST         set and/or get (default "$tests")
  --pipelines LIST     pipeline depths (default "$pipelines")
  --duration S         seconds per throughput run and per s_time run (default $duration)
  --runs N             runs per row and server, the median is reported (default $runs)
  --clients N          connections of the throughput rows (default $clients)
  --no-handshakes      skip the connection rows
$(lib_common_usage tls)
EOF
}

while [ $# -gt 0 ]; do
    if lib_common_opt "$1" "${2:-}"; then shift 2; continue; fi
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --tests) tests=${2//,/ }; shift 2 ;;
        --pipelines) pipelines=${2//,/ }; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --no-handshakes) handshakes=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
done
lib_check_servers hotkv redis
command -v openssl >/dev/null || lib_die "no openssl command (scripts/deps.sh build)"
lib_init tls

certs="$RESULTS/certs"
mkdir -p "$certs"
(
    cd "$certs"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj /CN=bench-ca 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 30 \
        -extfile server.ext 2>/dev/null
)

declare -A TPORT=()
start() {
    local s=$1 tport
    tport=$(lib_free_port)
    local -a tls=(--tls-port "$tport" --tls-cert-file "$certs/server.crt" --tls-key-file "$certs/server.key"
                  --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients no)
    case $s in
        hotkv) lib_start_server hotkv hotkv "HotKV (--threads 1)" --threads 1 "${tls[@]}" ;;
        redis) lib_start_server redis redis "Redis" "${tls[@]}" ;;
    esac
    TPORT[$s]=$tport
}

# hotkv-bench over TLS against server $1; the rest are its arguments.
tbench() {
    local s=$1 json=$2 rc=0; shift 2
    local -a cmd=(taskset -c "$CLIENT_CPUS" "$BENCH_BIN" -h 127.0.0.1 -p "${TPORT[$s]}" --tls
                  --cacert "$certs/ca.crt" --sni localhost -t "$BENCH_THREADS" -q --json "$json" "$@")
    lib_quote "${cmd[@]}" >> "$RESULTS/commands.log"
    "${cmd[@]}" > "${json%.json}.txt" 2> "${json%.json}.err" || rc=$?
    [ -s "${json%.json}.err" ] || rm -f "${json%.json}.err"
    return "$rc"
}

for s in $servers; do start "$s"; done
for s in $servers; do
    tbench "$s" "$RESULTS/raw/$s-load.json" --load -n "$keyspace" -c 4 -P 50 \
        "SET {key sequence $keyspace} {value 1024}" || lib_die "preload of ${SRV_LABEL[$s]} failed"
done

declare -A RPS=() CPU=()
conns=$(lib_conns_per_thread "$clients")
for t in $tests; do
    case $t in
        set) tmpl="SET {key uniform $keyspace} {value 1024}" ;;
        get) tmpl="GET {key uniform $keyspace}" ;;
        *) lib_die "unknown test $t" ;;
    esac
    for p in $pipelines; do
        for run in $(seq "$runs"); do
            for s in $servers; do
                lib_settle "$s"
                json="$RESULTS/raw/$s-$t-p$p-$run.json"
                t0=$(lib_cpu_ticks "${SRV_PID[$s]}")
                if ! tbench "$s" "$json" -c "$conns" -P "$p" -d "$duration" "$tmpl"; then
                    lib_log "run failed: $s $t pipeline $p"
                    continue
                fi
                t1=$(lib_cpu_ticks "${SRV_PID[$s]}")
                read -r nreq secs < <(lib_json "$json" completed_total duration_s)
                echo "$nreq $secs" | awk '{ printf "%.0f\n", $1 / $2 }' >> "$RESULTS/raw/$s-$t-p$p.rps"
                echo "$t0 $t1 $nreq $(getconf CLK_TCK)" |
                    awk '{ printf "%.3f\n", ($2 - $1) * 1e6 / $4 / $3 }' >> "$RESULTS/raw/$s-$t-p$p.cpu"
                lib_log "$s $t P=$p run $run: $(tail -1 "$RESULTS/raw/$s-$t-p$p.rps") req/s, $(tail -1 "$RESULTS/raw/$s-$t-p$p.cpu") us CPU/req"
            done
        done
        for s in $servers; do
            RPS[$s,$t,$p]=$(lib_median < "$RESULTS/raw/$s-$t-p$p.rps" 2>/dev/null || echo n/a)
            CPU[$s,$t,$p]=$(lib_median < "$RESULTS/raw/$s-$t-p$p.cpu" 2>/dev/null || echo n/a)
        done
    done
done

# New connections: openssl s_time (pinned to the client CPUs) connects,
# handshakes and closes in a loop for $duration seconds; -reuse resumes the
# first session (TLS 1.2 session ids: s_time reads no TLS 1.3 ticket).
declare -A HS=() HSCPU=()
if [ "$handshakes" = 1 ]; then
    for kind in new reuse; do
        for run in $(seq "$runs"); do
            for s in $servers; do
                lib_settle "$s"
                args=(-connect "127.0.0.1:${TPORT[$s]}" -CAfile "$certs/ca.crt" -time "$duration")
                [ "$kind" = new ] && args+=(-new) || args+=(-reuse -tls1_2)
                echo "taskset -c $CLIENT_CPUS openssl s_time $(lib_quote "${args[@]}")" >> "$RESULTS/commands.log"
                t0=$(lib_cpu_ticks "${SRV_PID[$s]}")
                w0=$(date +%s.%N)
                out=$(taskset -c "$CLIENT_CPUS" openssl s_time "${args[@]}" 2>&1 | grep -a "connections in") || true
                w1=$(date +%s.%N)
                t1=$(lib_cpu_ticks "${SRV_PID[$s]}")
                echo "$out" > "$RESULTS/raw/$s-hs-$kind-$run.txt"
                n=$(awk '/connections in .* real seconds/ { print $1 }' <<< "$out" | tail -1)
                [ -n "$n" ] || { lib_log "s_time failed against $s"; continue; }
                echo "$n $w0 $w1" | awk '{ printf "%.0f\n", $1 / ($3 - $2) }' >> "$RESULTS/raw/$s-hs-$kind.rate"
                echo "$t0 $t1 $n $(getconf CLK_TCK)" |
                    awk '{ printf "%.1f\n", ($2 - $1) * 1e6 / $4 / $3 }' >> "$RESULTS/raw/$s-hs-$kind.cpu"
                lib_log "$s handshakes ($kind) run $run: $(tail -1 "$RESULTS/raw/$s-hs-$kind.rate")/s, $(tail -1 "$RESULTS/raw/$s-hs-$kind.cpu") us CPU each"
            done
        done
        for s in $servers; do
            HS[$s,$kind]=$(lib_median < "$RESULTS/raw/$s-hs-$kind.rate" 2>/dev/null || echo n/a)
            HSCPU[$s,$kind]=$(lib_median < "$RESULTS/raw/$s-hs-$kind.cpu" 2>/dev/null || echo n/a)
        done
    done
fi

table="$RESULTS/results.md"
{
    lib_header "TLS: HotKV vs Redis" \
        "TLS on both servers (RSA 2048 certificate, TLS 1.3 unless noted, tls-auth-clients no); $clients connections, 1 KB values, random keys over $keyspace preloaded; ${duration}s per run, median of $runs"
    echo
    echo "| test | pipeline | HotKV req/s | HotKV CPU µs/req | Redis req/s | Redis CPU µs/req | CPU/req HotKV/Redis |"
    echo "|---|---|---|---|---|---|---|"
    for t in $tests; do
        for p in $pipelines; do
            echo "| ${t^^} | $p | $(lib_fmt "${RPS[hotkv,$t,$p]:-n/a}") | $(lib_fmt "${CPU[hotkv,$t,$p]:-n/a}" 2) | $(lib_fmt "${RPS[redis,$t,$p]:-n/a}") | $(lib_fmt "${CPU[redis,$t,$p]:-n/a}" 2) | $(lib_ratio "${CPU[hotkv,$t,$p]:-n/a}" "${CPU[redis,$t,$p]:-n/a}") |"
        done
    done
    if [ "$handshakes" = 1 ]; then
        echo
        echo "| new connections | HotKV conn/s | HotKV CPU µs/conn | Redis conn/s | Redis CPU µs/conn | CPU/conn HotKV/Redis |"
        echo "|---|---|---|---|---|---|"
        for kind in new reuse; do
            label="full handshake (TLS 1.3)"
            [ "$kind" = reuse ] && label="resumed session (TLS 1.2)"
            echo "| $label | $(lib_fmt "${HS[hotkv,$kind]:-n/a}") | $(lib_fmt "${HSCPU[hotkv,$kind]:-n/a}" 1) | $(lib_fmt "${HS[redis,$kind]:-n/a}") | $(lib_fmt "${HSCPU[redis,$kind]:-n/a}" 1) | $(lib_ratio "${HSCPU[hotkv,$kind]:-n/a}" "${HSCPU[redis,$kind]:-n/a}") |"
        done
    fi
    lib_server_section
} > "$table"
lib_show_table "$table"
