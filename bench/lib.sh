# bench/lib.sh - helpers shared by the sweep scripts (sourced, not run).
#
# Starts and stops hotkv-server and redis-server on free ports, pinned with
# taskset; waits for PING; records each server's exact command line and its
# CONFIG GET * into the results folder; runs hotkv-bench pinned to the client
# CPUs with --json; reads fields out of its JSON reports with python3; writes
# the machine/version header of results.md; draws nothing itself (each script
# owns its gnuplot script). It measures nothing on its own and never decides
# whether a number is good.
#
# Globals a script sets before calling lib_init (all have defaults here):
#   HOTKV_BIN REDIS_BIN BENCH_BIN CLI_BIN  binaries
#   SERVER_CPUS CLIENT_CPUS                taskset -c lists ("0", "2-3", "1,3")
#   BENCH_THREADS                          hotkv-bench -t (default: number of client CPUs)
#   OUT_DIR                                results folder (default below)
# lib_init SCRIPT creates RESULTS=bench/results/<UTC date>-<host>/<SCRIPT>/.
# shellcheck shell=bash

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT_DIR=$(cd "$BENCH_DIR/.." && pwd)

HOTKV_BIN=${HOTKV_BIN:-$ROOT_DIR/build/hotkv-server}
REDIS_BIN=${REDIS_BIN:-$(command -v redis-server || echo /usr/bin/redis-server)}
BENCH_BIN=${BENCH_BIN:-$ROOT_DIR/build/hotkv-bench}
CLI_BIN=${CLI_BIN:-$(command -v redis-cli || echo /usr/bin/redis-cli)}
SERVER_CPUS=${SERVER_CPUS:-0}
CLIENT_CPUS=${CLIENT_CPUS:-1}
BENCH_THREADS=${BENCH_THREADS:-}
OUT_DIR=${OUT_DIR:-}
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

declare -A SRV_PID=() SRV_PORT=() SRV_CMD=() SRV_LABEL=()
SRV_ORDER=()
RESULTS=""

lib_die() { echo "${0##*/}: $*" >&2; exit 1; }
lib_log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# Number of CPUs in a taskset -c list such as "1", "0-3" or "1,3,5-6".
lib_cpu_count() {
    local n=0 part a b
    local IFS=,
    for part in $1; do
        if [[ $part == *-* ]]; then a=${part%-*}; b=${part#*-}; n=$(( n + b - a + 1 ))
        else n=$(( n + 1 )); fi
    done
    echo "$n"
}

# Check the tools, create the results folder, install the cleanup trap.
# $1 = script name (the last folder level of the results path).
lib_init() {
    local script=$1 host
    [ -x "$BENCH_BIN" ] || lib_die "no hotkv-bench at $BENCH_BIN (run make, or pass --bench PATH)"
    [ -x "$CLI_BIN" ] || lib_die "no redis-cli (scripts/deps.sh bench)"
    command -v taskset >/dev/null || lib_die "no taskset (util-linux)"
    [ -n "$BENCH_THREADS" ] || BENCH_THREADS=$(lib_cpu_count "$CLIENT_CPUS")
    host=$(hostname -s 2>/dev/null || hostname)
    if [ -z "$OUT_DIR" ]; then
        OUT_DIR="$BENCH_DIR/results/$(date -u +%Y%m%d-%H%M%S)-$host"
    fi
    RESULTS="$OUT_DIR/$script"
    mkdir -p "$RESULTS/raw"
    : > "$RESULTS/commands.log"
    trap lib_cleanup EXIT
    trap 'exit 130' INT TERM
}

# Stop every server this script started (the EXIT trap).
lib_cleanup() {
    local name
    for name in "${!SRV_PID[@]}"; do lib_stop_server "$name"; done
}

# A TCP port nobody listens on now (the kernel picks it; another program
# grabbing it before the server binds makes start-up fail, not mismeasure).
lib_free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The arguments as one shell-quoted line: plain words bare, others in
# single quotes (easier to read than printf %q, and still pastable).
lib_quote() {
    local w out=""
    for w in "$@"; do
        if [[ $w =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then out+=" $w"
        else out+=" '${w//\'/\'\\\'\'}'"; fi
    done
    echo "${out# }"
}

# redis-cli against server NAME; prints the reply (raw mode).
lib_cli() {
    local name=$1; shift
    "$CLI_BIN" -h 127.0.0.1 -p "${SRV_PORT[$name]}" "$@"
}

# Whether server NAME serves the command given as arguments: false when
# the reply is "ERR unknown command" (any other reply, errors included,
# means the command exists).
lib_probe() {
    local name=$1 out; shift
    out=$(lib_cli "$name" "$@" 2>&1) || true
    ! grep -qi "unknown command" <<< "$out"
}

# lib_start_server NAME KIND LABEL [extra server args...]
# KIND is hotkv or redis. Starts the server on a free port pinned to
# SERVER_CPUS (or START_CPUS when set, e.g. as a prefix of the call), waits until it answers PING (10 s at most), and writes
# RESULTS/NAME.cmdline, NAME.log and NAME.config (CONFIG GET *, "name value"
# per line, sorted). Sets SRV_PORT[NAME] and SRV_PID[NAME].
lib_start_server() {
    local name=$1 kind=$2 label=$3 port cpus=${START_CPUS:-$SERVER_CPUS}
    shift 3
    local -a cmd
    port=$(lib_free_port)
    case $kind in
        hotkv)
            [ -x "$HOTKV_BIN" ] || lib_die "no hotkv-server at $HOTKV_BIN (run make, or pass --hotkv PATH)"
            cmd=(taskset -c "$cpus" "$HOTKV_BIN" --port "$port" --bind 127.0.0.1 --save "" --appendonly no "$@") ;;
        redis)
            [ -x "$REDIS_BIN" ] || lib_die "no redis-server at $REDIS_BIN (scripts/deps.sh bench, or pass --redis PATH)"
            cmd=(taskset -c "$cpus" "$REDIS_BIN" --port "$port" --bind 127.0.0.1
                 --save "" --appendonly no "$@") ;;
        *) lib_die "unknown server kind $kind" ;;
    esac
    SRV_CMD[$name]=$(lib_quote "${cmd[@]}")
    SRV_LABEL[$name]=$label
    [[ " ${SRV_ORDER[*]} " == *" $name "* ]] || SRV_ORDER+=("$name")
    echo "${SRV_CMD[$name]}" > "$RESULTS/$name.cmdline"
    echo "# server $name: ${SRV_CMD[$name]}" >> "$RESULTS/commands.log"
    "${cmd[@]}" > "$RESULTS/$name.log" 2>&1 &
    SRV_PID[$name]=$!
    SRV_PORT[$name]=$port
    for _ in $(seq 100); do
        if "$CLI_BIN" -h 127.0.0.1 -p "$port" PING 2>/dev/null | grep -q PONG; then
            lib_cli "$name" CONFIG GET '*' 2>&1 |
                awk 'NR % 2 { k = $0; next } { print k " " $0 }' | sort > "$RESULTS/$name.config"
            lib_log "started $label: ${SRV_CMD[$name]}"
            return 0
        fi
        kill -0 "${SRV_PID[$name]}" 2>/dev/null || break
        sleep 0.1
    done
    lib_die "$label did not start; see $RESULTS/$name.log"
}

# Stop server NAME (TERM, then KILL after 5 s) and forget its pid.
lib_stop_server() {
    local name=$1 pid
    pid=${SRV_PID[$name]:-}
    [ -n "$pid" ] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
    fi
    unset "SRV_PID[$name]"
}

# CPU clock ticks (utime + stime, all threads) of process $1. The command
# name in field 2 may hold spaces, so the fields are cut after its ')'.
lib_cpu_ticks() {
    local s
    s=$(< "/proc/$1/stat") || return 1
    s=${s##*) }
    local -a f
    read -r -a f <<< "$s"
    echo $(( f[11] + f[12] ))
}

# Wait until server NAME is idle: its CPU time grows by at most one clock
# tick over 0.2 s, 5 s at most. An open-loop step the server did not keep up
# with leaves requests queued in its sockets; without this the next step
# would measure that backlog.
lib_settle() {
    local pid=${SRV_PID[$1]:-} t0 t1
    [ -n "$pid" ] || return 0
    for _ in $(seq 25); do
        t0=$(lib_cpu_ticks "$pid") || return 0
        sleep 0.2
        t1=$(lib_cpu_ticks "$pid") || return 0
        [ $(( t1 - t0 )) -gt 1 ] || return 0
    done
}

# Connections per hotkv-bench thread for a total of $1 connections (at
# least one; rounded up, so the total may exceed $1 by less than a thread's
# share when it does not divide evenly).
lib_conns_per_thread() {
    local c=$(( ($1 + BENCH_THREADS - 1) / BENCH_THREADS ))
    [ "$c" -ge 1 ] || c=1
    echo "$c"
}

# lib_bench NAME JSON [hotkv-bench args...]
# Runs hotkv-bench against server NAME, pinned to CLIENT_CPUS, quiet, with
# the JSON report in JSON, its text report in JSON%.json.txt and stderr in
# JSON%.json.err; appends the exact command line to RESULTS/commands.log.
# Returns hotkv-bench's exit status (and prints its stderr on failure).
lib_bench() {
    local name=$1 json=$2 rc=0; shift 2
    local -a cmd=(taskset -c "$CLIENT_CPUS" "$BENCH_BIN" -h 127.0.0.1 -p "${SRV_PORT[$name]}"
                  -t "$BENCH_THREADS" -q --json "$json" "$@")
    lib_quote "${cmd[@]}" >> "$RESULTS/commands.log"
    "${cmd[@]}" > "${json%.json}.txt" 2> "${json%.json}.err" || rc=$?
    [ -s "${json%.json}.err" ] || rm -f "${json%.json}.err"
    if [ "$rc" -ne 0 ]; then
        echo "hotkv-bench exited $rc against ${SRV_LABEL[$name]}: $(lib_quote "$@")" >&2
        [ ! -s "${json%.json}.err" ] || sed 's/^/  /' "${json%.json}.err" >&2
    fi
    return "$rc"
}

# Preload with hotkv-bench --load: lib_preload NAME TAG N TEMPLATE.
lib_preload() {
    local name=$1 tag=$2 n=$3 tmpl=$4
    lib_bench "$name" "$RESULTS/raw/$name-load-$tag.json" --load -n "$n" \
        -c "$(lib_conns_per_thread 4)" "$tmpl" ||
        lib_die "preload '$tmpl' into ${SRV_LABEL[$name]} failed"
}

# lib_json FILE PATH... prints the values at the dotted PATHs of the JSON
# object in FILE, tab separated, on one line ("null" for null, "MISSING" and
# a warning on stderr for an absent field, whole objects as JSON).
lib_json() {
    "$PY" - "$@" <<'EOF'
import json, sys
try:
    with open(sys.argv[1]) as f:
        d = json.load(f)
except Exception as e:
    sys.stderr.write("lib_json: %s: %s\n" % (sys.argv[1], e))
    d = None
out = []
for path in sys.argv[2:]:
    v, ok = d, d is not None
    for part in path.split("."):
        if isinstance(v, dict) and part in v:
            v = v[part]
        elif isinstance(v, list) and part.isdigit() and int(part) < len(v):
            v = v[int(part)]
        else:
            ok = False
            break
    if not ok:
        if d is not None:
            sys.stderr.write("lib_json: %s: no field %s\n" % (sys.argv[1], path))
        out.append("MISSING")
    elif v is None:
        out.append("null")
    elif isinstance(v, (dict, list)):
        out.append(json.dumps(v))
    elif isinstance(v, float):
        out.append("%.6g" % v if abs(v) < 1e6 else "%.1f" % v)
    else:
        out.append(str(v))
print("\t".join(out))
EOF
}

# Median of the numbers on stdin ("n/a" when none).
# lib_check_servers ALLOWED... : exit 2 unless every name in $servers is
# one of ALLOWED.
lib_check_servers() {
    local s a ok
    for s in $servers; do
        ok=0
        for a in "$@"; do [ "$s" = "$a" ] && ok=1; done
        [ "$ok" = 1 ] || { echo "unknown server $s" >&2; exit 2; }
    done
}

# lib_info NAME SECTION FIELD: a field of the server's INFO SECTION, "n/a"
# when absent.
lib_info() {
    local v
    v=$(lib_cli "$1" INFO "$2" 2>/dev/null | tr -d '\r' | awk -F: -v f="$3" '$1 == f { print $2; exit }') || true
    echo "${v:-n/a}"
}

# lib_mem_bytes SIZE: bytes of a memory size in Redis's units (k = 1000,
# kb = 1024, m, mb, g, gb; case-insensitive); fails on anything else.
lib_mem_bytes() {
    local v=${1,,} n u
    [[ $v =~ ^([0-9]+)([kmg]b?|b)?$ ]] || { echo "bad size: $1" >&2; return 1; }
    n=${BASH_REMATCH[1]}; u=${BASH_REMATCH[2]}
    case $u in
        ""|b) echo "$n" ;;
        k) echo $(( n * 1000 )) ;;       kb) echo $(( n * 1024 )) ;;
        m) echo $(( n * 1000000 )) ;;    mb) echo $(( n * 1048576 )) ;;
        g) echo $(( n * 1000000000 )) ;; gb) echo $(( n * 1073741824 )) ;;
    esac
}

lib_median() {
    sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a";
        else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# Format a number with $2 decimals; anything not numeric passes through.
lib_fmt() {
    awk -v a="$1" -v d="${2:-0}" 'BEGIN { if (a ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) printf "%.*f\n", d, a; else print a }'
}

# a / b with 2 decimals, "n/a" unless both are positive numbers.
lib_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9.eE+-]+$/ || b !~ /^[0-9.eE+-]+$/ || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'
}

# The header of results.md: title, machine, versions, pinning.
# $1 = title; the rest are extra "- ..." lines.
lib_header() {
    local title=$1 rev dirty
    shift
    rev=$(cd "$ROOT_DIR" && git rev-parse --short HEAD 2>/dev/null || echo '?')
    dirty=$(cd "$ROOT_DIR" && { git diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes)'; })
    echo "# $title"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), host: $(hostname -s 2>/dev/null || hostname)"
    echo "- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- hotkv: $rev$dirty, $HOTKV_BIN ($("$HOTKV_BIN" --version 2>/dev/null | head -1 || echo '?'))"
    echo "- redis: $REDIS_BIN ($("$REDIS_BIN" --version 2>/dev/null | head -1 || echo '?'))"
    echo "- generator: $BENCH_BIN, $BENCH_THREADS thread(s), pinned with \`taskset -c $CLIENT_CPUS\`; servers pinned with \`taskset -c $SERVER_CPUS\`, run one after the other"
    local line
    for line in "$@"; do echo "- $line"; done
}

# The servers' command lines and CONFIG GET * as a results.md section.
lib_server_section() {
    local name
    echo
    echo "## Servers"
    echo
    for name in "${SRV_ORDER[@]}"; do
        echo "- ${SRV_LABEL[$name]}: \`${SRV_CMD[$name]}\`"
    done
    echo
    echo "(The last start of each; \`commands.log\` lists every server start, with its port, and every"
    echo "hotkv-bench command line in order; \`raw/\` holds every JSON report.)"
    for name in "${SRV_ORDER[@]}"; do
        echo
        echo "<details><summary>CONFIG GET * of ${SRV_LABEL[$name]} ($name.config)</summary>"
        echo
        echo '```'
        cat "$RESULTS/$name.config" 2>/dev/null
        echo '```'
        echo "</details>"
    done
}

# Prints a finished table to stdout and where the results went to stderr.
lib_show_table() {
    echo
    cat "$1"
    echo
    echo "results: $RESULTS" >&2
}

# Whether gnuplot is there; warns once when not (tables are still written).
lib_have_gnuplot() {
    if command -v gnuplot >/dev/null; then return 0; fi
    echo "${0##*/}: gnuplot not found (scripts/deps.sh bench): no plots" >&2
    return 1
}

# The options every sweep script takes alike. Sets the matching global and
# returns 0 when $1 is one of them (the caller then shifts 2), else 1.
lib_common_opt() {
    case "$1" in
        --hotkv) HOTKV_BIN=$2 ;;
        --redis) REDIS_BIN=$2 ;;
        --bench) BENCH_BIN=$2 ;;
        --server-cpus) SERVER_CPUS=$2 ;;
        --client-cpus) CLIENT_CPUS=$2 ;;
        --bench-threads) BENCH_THREADS=$2 ;;
        --out) OUT_DIR=$2 ;;
        *) return 1 ;;
    esac
}

# Usage lines of lib_common_opt's options; $1 = the script's results subfolder.
lib_common_usage() {
    cat <<EOF
  --hotkv PATH         hotkv-server binary (default build/hotkv-server)
  --redis PATH         redis-server binary (default redis-server in PATH)
  --bench PATH         hotkv-bench binary (default build/hotkv-bench)
  --server-cpus LIST   taskset -c list for the servers (default $SERVER_CPUS)
  --client-cpus LIST   taskset -c list for the load generators (default $CLIENT_CPUS)
  --bench-threads N    generator threads (default: number of client CPUs)
  --out DIR            results folder; this script writes DIR/$1/
                       (default bench/results/<UTC date>-<host>)
EOF
}

# A sweep's highest held rate, "≥ R (last step)" when it is the last of
# $rates (the sweep did not reach the server's limit).
# shellcheck disable=SC2154  # rates is the calling script's
lib_top_mark() {
    local last=${rates##* }
    if [ "$1" = "$last" ]; then echo "≥ $1 (last step)"; else echo "$1"; fi
}

# Plot the p99 of the held steps of a sweep against the rate, one line per
# server of $servers, from the script's CELL["server,KEY,rate"] = "p50 p99 ..."
# (cells starting with NS or FAIL are skipped) and its label_of function.
# $1 = file base name (BASE.png, BASE-server.dat), $2 = KEY, $3 = title,
# $4 = x label, $5 = y label. Returns 0 when a PNG was drawn.
# shellcheck disable=SC2154  # servers, rates and CELL are the calling script's
lib_plot_p99() {
    local base=$1 key=$2 s r v a b dat plotcmd=""
    for s in $servers; do
        dat="$RESULTS/$base-$s.dat"
        : > "$dat"
        for r in $rates; do
            v=${CELL[$s,$key,$r]:-}
            case $v in ""|FAIL|NS\ *) ;; *) read -r a b _ <<< "$v"; echo "$r $a $b" >> "$dat" ;; esac
        done
        [ -s "$dat" ] || continue
        plotcmd+="${plotcmd:+, }\"$dat\" using 1:3 with linespoints lw 2 pt 7 title \"$(label_of "$s") p99\""
    done
    [ -n "$plotcmd" ] || return 1
    gnuplot <<GP 2> "$RESULTS/gnuplot.err" || cat "$RESULTS/gnuplot.err" >&2
set terminal pngcairo size 1000,600 font ",10"
set output "$RESULTS/$base.png"
set title "$3"
set xlabel "$4"
set ylabel "$5"
set format x "%.0s%c"
set logscale y
set format y "%.0f"
set grid
set key top left
plot $plotcmd
GP
}

# The servers the scripts compare: hotkv (--threads $hotkv_threads), redis,
# and redis-io (redis-server --io-threads $io_threads, pinned to
# $redis_io_cpus); the variables are the calling script's.
# shellcheck disable=SC2154
label_of() {
    case $1 in
        hotkv) echo "HotKV (--threads $hotkv_threads)" ;;
        redis) echo "Redis" ;;
        redis-io) echo "Redis --io-threads $io_threads" ;;
    esac
}

# Start server $1 (hotkv, redis or redis-io) with the settings label_of names.
# shellcheck disable=SC2154
lib_start_sweep_server() {
    case $1 in
        hotkv) lib_start_server hotkv hotkv "$(label_of hotkv)" --threads "$hotkv_threads" ;;
        redis) lib_start_server redis redis "$(label_of redis)" ;;
        redis-io) START_CPUS=$redis_io_cpus lib_start_server redis-io redis "$(label_of redis-io)" \
                      --io-threads "$io_threads" --io-threads-do-reads yes ;;
    esac
}

# A caveat for results.md when the io-threads server has fewer CPUs than
# threads: Redis's I/O threads busy-poll for work, so on shared CPUs they
# take time from the main thread instead of adding to it.
# shellcheck disable=SC2154
lib_io_note() {
    local n
    n=$(lib_cpu_count "$redis_io_cpus")
    if [[ " $servers " == *" redis-io "* ]] && [ "$n" -lt "$io_threads" ]; then
        echo "caveat: Redis --io-threads $io_threads runs on $n CPU(s) (\`taskset -c $redis_io_cpus\`): its I/O threads busy-poll and share the CPU with the main thread, so its numbers here say little about io-threads on a machine with CPUs to spare (use --redis-io-cpus)"
    else
        echo "Redis --io-threads $io_threads pinned to \`taskset -c $redis_io_cpus\`"
    fi
}

# Write a sweep's results.md and print its tables: lib_header with the
# arguments given, then $RESULTS/maxheld.md, the script's $tables file, its
# $error_notes and the server section.
# shellcheck disable=SC2154
lib_sweep_report() {
    {
        lib_header "$@"
        echo
        echo "## Results"
        echo
        cat "$RESULTS/maxheld.md"
        echo
        cat "$tables"
        if [ -n "$error_notes" ]; then
            echo "⚠ steps with error replies:"
            echo
            printf '%s' "$error_notes"
        fi
        lib_server_section
    } > "$RESULTS/results.md"
    echo
    cat "$RESULTS/maxheld.md"
    echo
    cat "$tables"
    echo "results: $RESULTS" >&2
}
