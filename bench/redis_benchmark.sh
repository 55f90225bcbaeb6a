#!/usr/bin/env bash
# redis_benchmark.sh - compare hotkv-server and redis-server with redis-benchmark.
#
# Runs redis-benchmark (Debian redis-tools) for PING, SET, GET, MSET, MGET,
# INCR and EVALSHA (a script loaded with SCRIPT LOAD that SETs its key), and
# hotkv-bench (bench/gen) for a MULTI/EXEC transaction of three commands and
# for streams (XADD of a 5-field entry with an auto id, XRANGE of 10
# entries, and 10 consumers each looping XACK + XREADGROUP COUNT 1), at
# pipeline 1 and 16 against `hotkv-server --threads 1` and a stock
# redis-server, each server pinned to one CPU and the client to another, runs
# alternating between the two servers, median of N runs. Besides throughput it
# reports the server's CPU time per request (user+sys of all its threads, read
# from /proc/PID/stat around each run), because on a small machine the client
# saturates its core first and throughput alone says little about the server.
# It is a measuring tool, not a test: it never fails on a slow result.
# See bench/README.md for the flags and how to read the table.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

hotkv_bin="$root/build/hotkv-server"
redis_bin=$(command -v redis-server || echo /usr/bin/redis-server)
bench_bin=$(command -v redis-benchmark || echo /usr/bin/redis-benchmark)
cli_bin=$(command -v redis-cli || echo /usr/bin/redis-cli)
hkbench_bin="$root/build/hotkv-bench"
tests="ping,set,get,mset,mget,incr,evalsha,multi,xadd,xrange,xreadgroup"
pipelines="1 16"
clients=50
datasize=64
keyspace=1000000
runs=3
n_p1=100000
n_pn=1000000
server_cpu=0
client_cpu=1
outdir=""
servers="hotkv redis"

usage() {
    cat <<EOF
usage: $0 [options]
  --hotkv PATH        hotkv-server binary (default $hotkv_bin)
  --redis PATH        redis-server binary (default $redis_bin)
  --bench PATH        hotkv-bench binary, for the multi and stream rows (default $hkbench_bin)
  --servers LIST      which servers, space or comma separated (default "hotkv redis")
  --tests LIST        comma separated subset of $tests (default all)
  --pipelines LIST    pipeline depths, comma separated (default 1,16)
  -n N                requests per run at pipeline 1 (default $n_p1)
  --n-pipelined N     requests per run at pipeline > 1 (default $n_pn; a quarter for MSET/MGET/MULTI/XRANGE/XREADGROUP)
  --runs N            runs per row and server, the median is reported (default $runs)
  --clients N         parallel connections (default $clients; the XREADGROUP row has its 10 consumers)
  --keyspace N        random keys over 0..N-1 (default $keyspace)
  --server-cpu N      CPU the servers are pinned to (default $server_cpu)
  --client-cpu N      CPU redis-benchmark is pinned to (default $client_cpu)
  --out DIR           result folder (default bench/results/<date>-<host>)
  --big               larger run: -n 500000 --n-pipelined 5000000 --runs 5
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --hotkv) hotkv_bin=$2; shift 2 ;;
        --redis) redis_bin=$2; shift 2 ;;
        --bench) hkbench_bin=$2; shift 2 ;;
        --servers) servers=${2//,/ }; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --pipelines) pipelines=${2//,/ }; shift 2 ;;
        -n) n_p1=$2; shift 2 ;;
        --n-pipelined) n_pn=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --keyspace) keyspace=$2; shift 2 ;;
        --server-cpu) server_cpu=$2; shift 2 ;;
        --client-cpu) client_cpu=$2; shift 2 ;;
        --out) outdir=$2; shift 2 ;;
        --big) n_p1=500000; n_pn=5000000; runs=5; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
done

for b in "$bench_bin" "$cli_bin" taskset python3; do
    command -v "$b" >/dev/null || { echo "missing $b (scripts/deps.sh bench)" >&2; exit 1; }
done
for t in ${tests//,/ }; do
    case $t in
        ping|set|get|mset|mget|incr|evalsha) ;;
        multi|xadd|xrange|xreadgroup)
            [ -x "$hkbench_bin" ] || { echo "no hotkv-bench at $hkbench_bin (make first, or --bench PATH)" >&2; exit 1; } ;;
        *) echo "unknown test $t" >&2; exit 2 ;;
    esac
done
for s in $servers; do
    case $s in
        hotkv) [ -x "$hotkv_bin" ] || { echo "no hotkv-server at $hotkv_bin (make first)" >&2; exit 1; } ;;
        redis) [ -x "$redis_bin" ] || { echo "no redis-server at $redis_bin (scripts/deps.sh bench)" >&2; exit 1; } ;;
        *) echo "unknown server $s" >&2; exit 2 ;;
    esac
done

clk_tck=$(getconf CLK_TCK)
host=$(hostname -s 2>/dev/null || hostname)
[ -n "$outdir" ] || outdir="$here/results/$(date -u +%Y%m%d-%H%M%S)-$host"
mkdir -p "$outdir"
raw="$outdir/raw.csv"
echo "server,test,pipeline,run,requests,rps,cpu_ticks,user_ticks,sys_ticks,us_per_req" > "$raw"

tmp=$(mktemp -d)
declare -A pid port cmdline sha

# EVALSHA runs this script, loaded with SCRIPT LOAD on each server before its
# rows, with a value of the -d size (redis-benchmark sends a custom command
# line as given, so the value is spelled out, x repeated like its SET's).
eval_script="return redis.call('SET', KEYS[1], ARGV[1])"
eval_value=$(printf 'x%.0s' $(seq "$datasize"))
# MULTI/EXEC of three commands, sent by hotkv-bench as one request of five
# commands (";" separates them) that completes with EXEC's reply; the GET
# reads the key the SET wrote ({key last}). -P counts transactions.
multi_tmpl="MULTI ; SET {key uniform $keyspace} {value $datasize} ; INCR counter:{rand $keyspace} ; GET {key last} ; EXEC"
# Streams. An entry is 5 fields of 16-byte values (80 bytes of values, the
# same field names in every entry, as an application writes them).
stream_fields="f1 {value 16} f2 {value 16} f3 {value 16} f4 {value 16} f5 {value 16}"
# XADD: auto ids into one stream, emptied (DEL, then the server left to
# settle) before every run so it does not grow from run to run.
xadd_tmpl="XADD bench:xadd * $stream_fields"
# XRANGE: a stream of xrange_len entries with ids 1-0 .. <xrange_len>-0,
# loaded once per server; each request reads the 10 entries from a random
# start id.
xrange_len=100000
xrange_tmpl="XRANGE bench:xrange {rand $(( xrange_len - 10 ))} + COUNT 10"
# XREADGROUP + XACK: a stream loaded once per server with more entries than
# a run reads, and a group g made afresh (XGROUP DESTROY + CREATE at 0)
# before every run. Each of xgroup_consumers connections is consumer c<n>; a
# request is "ack the entry this connection read last, read the next one":
# {reply id} is the id from that connection's earlier XREADGROUP reply
# (hotkv-bench keeps them in order; 0-0 before the first). So every entry
# is read once and acknowledged once, and a request costs the server one
# XREADGROUP and one XACK.
xgroup_consumers=10
xgroup_tmpl="XACK bench:xgroup g {reply id} ; XREADGROUP GROUP g c{conn} COUNT 1 STREAMS bench:xgroup >"
cleanup() {
    for s in $servers; do
        if [ -n "${pid[$s]:-}" ] && kill -0 "${pid[$s]}" 2>/dev/null; then
            kill "${pid[$s]}" 2>/dev/null || true
            wait "${pid[$s]}" 2>/dev/null || true
        fi
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port nobody listens on now (the kernel picks it; a race with another
# program grabbing it in between is possible but harmless: start-up fails).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# "user sys" CPU ticks of the whole process (all threads, live and exited).
# The command name in field 2 may hold spaces, so cut after its ')'.
cpu_ticks() {
    local s
    s=$(< "/proc/$1/stat")
    s=${s##*) }
    local -a f
    read -r -a f <<< "$s"
    echo "${f[11]} ${f[12]}"
}

start_server() {
    local s=$1 p
    p=$(free_port)
    case $s in
        hotkv) cmdline[$s]="taskset -c $server_cpu $hotkv_bin --port $p --threads 1 --bind 127.0.0.1 --save \"\" --appendonly no" ;;
        redis) cmdline[$s]="taskset -c $server_cpu $redis_bin --port $p --bind 127.0.0.1 --save \"\" --appendonly no" ;;
    esac
    case $s in
        hotkv) taskset -c "$server_cpu" "$hotkv_bin" --port "$p" --threads 1 --bind 127.0.0.1 --save "" --appendonly no \
                   > "$outdir/$s.log" 2>&1 & ;;
        redis) taskset -c "$server_cpu" "$redis_bin" --port "$p" --bind 127.0.0.1 --save "" --appendonly no \
                   > "$outdir/$s.log" 2>&1 & ;;
    esac
    pid[$s]=$!
    port[$s]=$p
    local i
    for i in $(seq 100); do
        if "$cli_bin" -p "$p" ping 2>/dev/null | grep -q PONG; then return 0; fi
        kill -0 "${pid[$s]}" 2>/dev/null || break
        sleep 0.1
    done
    echo "$s did not start; see $outdir/$s.log" >&2
    exit 1
}

# The redis-benchmark arguments after the common ones for test $1 against
# server $2. MGET has no built-in test, so it is a command line of 10 keys
# like the built-in MSET; EVALSHA is a command line with the server's sha.
test_args() {
    case $1 in
        ping) echo "-t ping_mbulk" ;;
        mget) echo "MGET$(printf ' key:__rand_int__%.0s' {1..10})" ;;
        evalsha) echo "EVALSHA ${sha[$2]} 1 key:__rand_int__ $eval_value" ;;
        *) echo "-t $1" ;;
    esac
}

# The row's name in the table.
test_label() {
    case $1 in
        multi) echo "MULTI/EXEC (SET+INCR+GET)" ;;
        xadd) echo "XADD (5 fields, auto id)" ;;
        xrange) echo "XRANGE (10 entries)" ;;
        xreadgroup) echo "XREADGROUP+XACK (10 consumers)" ;;
        *) echo "${1^^}" ;;
    esac
}

# Requests per run: pipelined runs are much faster, so they need more requests
# for the CPU time to span enough clock ticks; the 10-key MSET/MGET and the
# five-command transactions are slow enough at depth 16 to make do with a quarter.
requests_for() {
    if [ "$2" -le 1 ]; then echo "$n_p1"
    else case $1 in mset|mget|multi|xrange|xreadgroup) echo $(( n_pn / 4 )) ;; *) echo "$n_pn" ;; esac
    fi
}

# Whether the server knows the command at all: missing ones get n/a rows.
supports() {
    local out
    case $2 in
        ping) out=$("$cli_bin" -p "${port[$1]}" PING 2>&1) ;;
        set|mset) out=$("$cli_bin" -p "${port[$1]}" "${2^^}" bench:probe 1 2>&1) ;;
        get|mget|incr) out=$("$cli_bin" -p "${port[$1]}" "${2^^}" bench:probe:n 2>&1) ;;
        evalsha)
            # SCRIPT LOAD is the probe, and loads the script the rows run.
            out=$("$cli_bin" -p "${port[$1]}" SCRIPT LOAD "$eval_script" 2>&1) || true
            [[ $out =~ ^[0-9a-f]{40}$ ]] || return 1
            sha[$1]=$out
            out=$("$cli_bin" -p "${port[$1]}" EVALSHA "${sha[$1]}" 1 bench:probe:e v 2>&1) || true
            [ "$out" = OK ] || echo "  $1: EVALSHA probe answered '$out', not OK" >&2 ;;
        multi)
            # One transaction on one connection (redis-cli reads stdin).
            out=$(printf 'MULTI\nSET bench:probe:m 1\nINCR bench:probe:c\nGET bench:probe:m\nEXEC\n' |
                  "$cli_bin" -p "${port[$1]}" 2>&1) || true ;;
        xadd) out=$("$cli_bin" -p "${port[$1]}" XADD bench:probe:x '*' f v 2>&1) || true ;;
        xrange) out=$("$cli_bin" -p "${port[$1]}" XRANGE bench:probe:x - + COUNT 1 2>&1) || true ;;
        xreadgroup)
            out=$(printf 'XGROUP CREATE bench:probe:g g 0 MKSTREAM\nXREADGROUP GROUP g c COUNT 1 STREAMS bench:probe:g >\nXACK bench:probe:g g 0-1\n' |
                  "$cli_bin" -p "${port[$1]}" 2>&1) || true ;;
    esac
    ! grep -qi "unknown command" <<< "$out"
}

# Entries the XREADGROUP stream needs: the most any run reads, plus what
# the consumers can have in flight.
xgroup_len() {
    local most=$n_p1 P
    for P in $pipelines; do
        [ "$(requests_for xreadgroup "$P")" -le "$most" ] || most=$(requests_for xreadgroup "$P")
    done
    local maxp=1
    for P in $pipelines; do [ "$P" -le "$maxp" ] || maxp=$P; done
    echo $(( most + xgroup_consumers * maxp + 1000 ))
}

# Wait until server $1 is idle (its CPU time grows by at most one tick in
# 0.2 s; 5 s at most), so work left over from loading or a DEL (freed in
# the background, say) is not charged to the next run.
settle() {
    local a b t0 t1
    for _ in $(seq 25); do
        read -r a b <<< "$(cpu_ticks "${pid[$1]}")"; t0=$(( a + b ))
        sleep 0.2
        read -r a b <<< "$(cpu_ticks "${pid[$1]}")"; t1=$(( a + b ))
        [ $(( t1 - t0 )) -gt 1 ] || return 0
    done
}

declare -A loaded=()
# Data a stream row reads, loaded once per server (outside any measurement).
load_stream_data() {
    local s=$1 t=$2
    [ -z "${loaded[$s,$t]:-}" ] || return 0
    loaded[$s,$t]=1
    case $t in
        xrange)
            "$cli_bin" -p "${port[$s]}" DEL bench:xrange > /dev/null
            awk -v n="$xrange_len" 'BEGIN {
                for (i = 1; i <= n; i++) {
                    printf("*13\r\n$4\r\nXADD\r\n$12\r\nbench:xrange\r\n")
                    id = i "-0"; printf("$%d\r\n%s\r\n", length(id), id)
                    for (f = 1; f <= 5; f++) { v = sprintf("v%d:%013d", f, i); printf("$2\r\nf%d\r\n$%d\r\n%s\r\n", f, length(v), v) }
                }
            }' | "$cli_bin" -p "${port[$s]}" --pipe > "$tmp/load.out" 2>&1 || true
            local got
            got=$("$cli_bin" -p "${port[$s]}" XLEN bench:xrange 2>&1)
            [ "$got" = "$xrange_len" ] || echo "$s xrange: the stream holds '$got' entries after loading $xrange_len" >> "$tmp/errors" ;;
        xreadgroup)
            local len
            len=$(xgroup_len)
            "$cli_bin" -p "${port[$s]}" DEL bench:xgroup > /dev/null
            taskset -c "$client_cpu" "$hkbench_bin" -h 127.0.0.1 -p "${port[$s]}" -c 4 --load -n "$len" -q \
                "XADD bench:xgroup * $stream_fields" > "$tmp/load.out" 2>&1 || true
            local got
            got=$("$cli_bin" -p "${port[$s]}" XLEN bench:xgroup 2>&1)
            [ "$got" = "$len" ] || echo "$s xreadgroup: the stream holds '$got' entries after loading $len" >> "$tmp/errors" ;;
    esac
    settle "$s"
}

# Before each measured run of a stream row (outside the measurement).
prepare_run() {
    local s=$1 t=$2
    case $t in
        xadd) "$cli_bin" -p "${port[$s]}" DEL bench:xadd > /dev/null ;;
        xreadgroup)
            "$cli_bin" -p "${port[$s]}" XGROUP DESTROY bench:xgroup g > /dev/null 2>&1 || true
            "$cli_bin" -p "${port[$s]}" XGROUP CREATE bench:xgroup g 0 > /dev/null ;;
        *) return 0 ;;
    esac
    settle "$s"
}

# After an XREADGROUP run of n requests at depth P: the group must have
# delivered exactly n entries and have the last read of each pipeline slot
# of each consumer still pending (everything before was acknowledged).
check_xgroup() {
    local s=$1 P=$2 n=$3 read pending want
    read=$("$cli_bin" -p "${port[$s]}" XINFO GROUPS bench:xgroup 2>/dev/null |
           awk 'prev == "entries-read" {print; exit} {prev = $0}')
    pending=$("$cli_bin" -p "${port[$s]}" XPENDING bench:xgroup g 2>/dev/null | head -1)
    want=$(( xgroup_consumers * P < n ? xgroup_consumers * P : n ))
    if [ "$read" != "$n" ] || [ "$pending" != "$want" ]; then
        echo "$s xreadgroup P$P: the group delivered '$read' entries with '$pending' pending, expected $n and $want" >> "$tmp/errors"
    fi
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# One hotkv-bench run of test t (MULTI/EXEC or a stream row): exactly n
# requests over $clients connections (the XREADGROUP row: its consumers), P
# in flight per connection. Prints the achieved requests/s; errors (error
# replies, EXEC's included) go to $tmp/errors.
run_hkbench() {
    local s=$1 t=$2 P=$3 n=$4 line rps err ferr tmpl conns=$clients
    case $t in
        multi) tmpl=$multi_tmpl ;;
        xadd) tmpl=$xadd_tmpl ;;
        xrange) tmpl=$xrange_tmpl ;;
        xreadgroup) tmpl=$xgroup_tmpl; conns=$xgroup_consumers ;;
    esac
    taskset -c "$client_cpu" "$hkbench_bin" -h 127.0.0.1 -p "${port[$s]}" -t 1 -c "$conns" -n "$n" \
        -P "$P" -q --json "$tmp/hb.json" "$tmpl" > "$tmp/out" 2> "$tmp/err" || true
    line=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["achieved_rate"], d["errors"], d["first_error"] or "")' "$tmp/hb.json" 2> /dev/null) || line=""
    if [ -z "$line" ]; then
        echo "hotkv-bench failed for $s $t P$P:" >&2; cat "$tmp/err" "$tmp/out" >&2; echo 0; return
    fi
    read -r rps err ferr <<< "$line"
    if [ "$err" != 0 ]; then echo "$s $t P$P: $err errors, first: $ferr" >> "$tmp/errors"; fi
    echo "$rps"
}

# Whether test t is run with hotkv-bench (else redis-benchmark).
hk_test() { case $1 in multi|xadd|xrange|xreadgroup) return 0 ;; *) return 1 ;; esac; }

# One run (redis-benchmark, or hotkv-bench for multi and the stream rows);
# prints "rps us/req user%" and appends to raw.csv.
run_one() {
    local s=$1 t=$2 P=$3 r=$4 n=$5 u0 s0 u1 s1 rps
    local -a args
    hk_test "$t" || read -r -a args <<< "$(test_args "$t" "$s")"
    prepare_run "$s" "$t"
    read -r u0 s0 <<< "$(cpu_ticks "${pid[$s]}")"
    if hk_test "$t"; then
        rps=$(run_hkbench "$s" "$t" "$P" "$n")
    else
        taskset -c "$client_cpu" "$bench_bin" -p "${port[$s]}" -c "$clients" -n "$n" -d "$datasize" \
            -r "$keyspace" -P "$P" --csv "${args[@]}" > "$tmp/out" 2> "$tmp/err" || true
        rps=$(awk -F'","' 'NR==2 {print $2}' "$tmp/out")
    fi
    if ! kill -0 "${pid[$s]}" 2>/dev/null; then
        # The server died: its remaining rows are n/a, the other server goes on.
        dead[$s]=1
        echo "$s exited during $t P$P run $r; the end of its log:" >&2
        tail -n 20 "$outdir/$s.log" >&2
        echo "$s exited during $t P$P (see $outdir/$s.log)" >> "$tmp/errors"
        echo "0 n/a 0"
        return
    fi
    read -r u1 s1 <<< "$(cpu_ticks "${pid[$s]}")"
    [ "$t" != xreadgroup ] || check_xgroup "$s" "$P" "$n"
    if [ -z "$rps" ]; then
        echo "redis-benchmark failed for $s $t P$P:" >&2; cat "$tmp/err" "$tmp/out" >&2; rps=0
    fi
    local ticks=$(( u1 - u0 + s1 - s0 ))
    local us
    us=$(awk -v t="$ticks" -v hz="$clk_tck" -v n="$n" 'BEGIN {printf "%.3f", t * 1e6 / hz / n}')
    echo "$s,$t,$P,$r,$n,$rps,$ticks,$(( u1 - u0 )),$(( s1 - s0 )),$us" >> "$raw"
    echo "$rps $us $(( (u1 - u0) * 100 / (ticks > 0 ? ticks : 1) ))"
}

for s in $servers; do start_server "$s"; done

{
    echo "# redis-benchmark: HotKV vs Redis"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), host: $host, $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- hotkv: $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$root" && git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)'), $hotkv_bin"
    echo "- redis: $("$redis_bin" --version 2>/dev/null | head -1)"
    for s in $servers; do echo "- server ($s): \`${cmdline[$s]}\`"; done
    echo "- client: \`taskset -c $client_cpu redis-benchmark -c $clients -d $datasize -r $keyspace -P <P> -n <N> --csv <test>\`, N = $n_p1 at P1, $n_pn pipelined ($(( n_pn / 4 )) for MSET/MGET/MULTI); median of $runs alternating runs"
    if [[ ",$tests," == *,evalsha,* ]]; then
        echo "- EVALSHA: \`SCRIPT LOAD \"$eval_script\"\` on each server (redis-cli) before its rows, then redis-benchmark with the command line \`EVALSHA <sha> 1 key:__rand_int__ <$datasize x>\`"
    fi
    if [[ ",$tests," == *,multi,* ]]; then
        echo "- MULTI/EXEC: \`taskset -c $client_cpu $hkbench_bin -t 1 -c $clients -P <P> -n <N> '$multi_tmpl'\`: a request is one transaction (five commands written together, done at EXEC's reply), P transactions in flight per connection; its µs/req is server CPU per transaction"
    fi
    if [[ ",$tests," =~ ,x(add|range|readgroup), ]]; then
        echo "- streams: \`taskset -c $client_cpu $hkbench_bin -t 1 -c <C> -P <P> -n <N> <template>\`, C = $clients, $xgroup_consumers for XREADGROUP; N = $n_p1 at P1, $n_pn pipelined for XADD, $(( n_pn / 4 )) for XRANGE and XREADGROUP"
        echo "  - XADD: \`$xadd_tmpl\` (the stream emptied with DEL before each run)"
        echo "  - XRANGE: \`$xrange_tmpl\` over $xrange_len entries with ids 1-0 .. $xrange_len-0 and the same 5 fields (loaded once per server with redis-cli --pipe)"
        echo "  - XREADGROUP+XACK: \`$xgroup_tmpl\` over a stream of $(xgroup_len) such entries (auto ids, loaded once per server with hotkv-bench --load); group g made afresh (XGROUP DESTROY, XGROUP CREATE ... 0) before each run; {reply id} is the entry id the same connection's previous XREADGROUP returned, so a request acknowledges the entry read before and reads the next: µs/req is server CPU per entry consumed (one XREADGROUP + one XACK); after each run XINFO GROUPS entries-read must equal N and XPENDING hold one entry per consumer and pipeline slot"
    fi
    echo "- CPU/req = (utime+stime of the server process, all threads, from /proc/PID/stat) / N; clock tick = $(( 1000 / clk_tck )) ms"
    echo
} > "$outdir/results.md"
cat "$outdir/results.md"

declare -A med_rps med_us dead=()
for t in ${tests//,/ }; do
    for P in $pipelines; do
        n=$(requests_for "$t" "$P")
        declare -A ok=()
        for s in $servers; do
            [ -z "${dead[$s]:-}" ] || continue
            if supports "$s" "$t"; then ok[$s]=1; load_stream_data "$s" "$t"; fi
        done
        : > "$tmp/rps.hotkv"; : > "$tmp/rps.redis"; : > "$tmp/us.hotkv"; : > "$tmp/us.redis"
        for r in $(seq "$runs"); do
            for s in $servers; do
                if [ -z "${ok[$s]:-}" ] || [ -n "${dead[$s]:-}" ]; then continue; fi
                run_one "$s" "$t" "$P" "$r" "$n" > "$tmp/one"
                read -r rps us upct < "$tmp/one"
                if [ "$us" = n/a ]; then dead[$s]=1; continue; fi
                echo "$rps" >> "$tmp/rps.$s"; echo "$us" >> "$tmp/us.$s"
                printf '  %-5s %-5s P%-3s run %s: %10s req/s %8s us/req (%s%% user)\n' \
                    "$s" "$t" "$P" "$r" "$rps" "$us" "$upct" >&2
            done
        done
        for s in hotkv redis; do
            if [ -n "${ok[$s]:-}" ] && [ -s "$tmp/rps.$s" ]; then
                med_rps[$s,$t,$P]=$(median < "$tmp/rps.$s")
                med_us[$s,$t,$P]=$(median < "$tmp/us.$s")
            else
                med_rps[$s,$t,$P]="n/a"; med_us[$s,$t,$P]="n/a"
            fi
        done
        unset ok
    done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a=="n/a" || b=="n/a" || b+0==0) print "n/a"; else printf "%.2f", a/b}'; }
fmt() { awk -v a="$1" -v d="$2" 'BEGIN {if (a=="n/a") print a; else printf "%.*f", d, a}'; }

{
    echo "| test | P | HotKV µs/req | Redis µs/req | CPU ratio H/R | HotKV req/s | Redis req/s | req/s ratio H/R |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for t in ${tests//,/ }; do
        for P in $pipelines; do
            hu=${med_us[hotkv,$t,$P]}; ru=${med_us[redis,$t,$P]}
            hr=${med_rps[hotkv,$t,$P]}; rr=${med_rps[redis,$t,$P]}
            echo "| $(test_label "$t") | $P | $(fmt "$hu" 2) | $(fmt "$ru" 2) | $(ratio "$hu" "$ru") | $(fmt "$hr" 0) | $(fmt "$rr" 0) | $(ratio "$hr" "$rr") |"
        done
    done
    if [[ ",$tests," == *,multi,* ]]; then
        echo
        echo "MULTI/EXEC: one request = one transaction (MULTI, SET, INCR, GET, EXEC), sent by hotkv-bench; µs/req is server CPU per transaction, req/s transactions per second."
    fi
    if [[ ",$tests," == *,xreadgroup,* ]]; then
        echo
        echo "XREADGROUP+XACK: one request = one entry consumed (XACK of the entry read before, XREADGROUP COUNT 1 of the next, written together), 10 consumers, sent by hotkv-bench."
    fi
    if [ -s "$tmp/errors" ]; then
        echo
        echo "⚠ runs with error replies:"
        echo
        sed 's/^/- /' "$tmp/errors"
    fi
} > "$tmp/table"
echo >> "$outdir/results.md"
cat "$tmp/table" >> "$outdir/results.md"
echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$outdir/results.md"
echo
cat "$tmp/table"
echo
echo "results: $outdir" >&2
