#!/usr/bin/env bash
# churn.sh - memory stays bounded under a long write churn, HotKV vs redis-server.
#
# For each server in turn (hotkv-server --threads N and redis-server, pinned
# to the server CPUs; hotkv-bench and the sampler to the client CPUs), a
# fresh server gets CONFIG SET maxmemory (256mb) and maxmemory-policy
# allkeys-lru, then hotkv-bench writes at full speed (closed loop,
# pipelined, several connections) for --seconds (600; --quick 60) over a
# keyspace several times what maxmemory holds: SETs of values of nine sizes
# (16 B to 16 KB, a key's next value of any size, so the allocator reuses
# memory across size classes), with DELs, SET ... EX and EXPIREs. The mix
# of small and large values alternates every --phase seconds (--mix), so
# the memory held moves between many small values and few large ones.
# A sampler reads INFO memory/stats/keyspace and /proc/PID/status VmRSS
# every second. Reported per server: the peak used_memory against
# maxmemory, RSS at 1 min, 5 min and the end, the RSS slope over the second
# half, mem_fragmentation_ratio, commands/s, evictions/s; and whether
# used_memory <= maxmemory x 1.02 + 1 MiB and the RSS slope <= 1% of
# maxmemory per minute ("met"/"not met"). Writes results.md (table with
# HotKV/Redis ratios, machine, versions, server command lines), raw.csv,
# the timelines (CSV) and, with gnuplot, a PNG per server. A server whose
# used_memory or RSS passes four times maxmemory is stopped there. It
# measures; it never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="hotkv redis"
maxmemory=256mb
policy=allkeys-lru
dur=600
phase=
mixes="16:1 1:4"
keys=auto
conns=8
pipeline=16
hotkv_threads=2
guard_factor=4

usage() {
    cat <<EOF
usage: bench/churn.sh [options]

Memory stays bounded: used_memory and RSS of HotKV and redis-server under
maxmemory + allkeys-lru while writers churn values of many sizes at full
speed for 10 minutes each (see bench/README.md). The default run takes
about 21 minutes; --quick about 2.5.

  --servers LIST       hotkv,redis (default both)
  --maxmemory SIZE     CONFIG SET maxmemory, Redis units: 64mb, 500000kb, 1gb (default $maxmemory)
  --policy P           maxmemory-policy (default $policy)
  --seconds SEC        churn time per server (default $dur)
  --quick              --seconds 60
  --phase SEC          seconds of each mix before the next (default 30, or --seconds / 12
                       when that is under 240: 5 with --quick)
  --mix LIST           ratios small:large of the two templates, cycled every --phase
                       (default ${mixes// /,}; one ratio: one steady mix)
  --keys N             keyspace (default: 4 x what maxmemory holds with the mix that
                       holds the most keys, estimated at value + 90 bytes a key)
  --connections N      connections in total (default $conns)
  --pipeline P         hotkv-bench -P (default $pipeline)
  --hotkv-threads N    hotkv-server --threads (default $hotkv_threads)
$(lib_common_usage churn)
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --maxmemory) maxmemory=$2; shift 2 ;;
        --policy) policy=$2; shift 2 ;;
        --seconds) dur=$2; shift 2 ;;
        --quick) dur=60; shift ;;
        --phase) phase=$2; shift 2 ;;
        --mix) mixes=${2//,/ }; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --connections) conns=$2; shift 2 ;;
        --pipeline) pipeline=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis
[[ $dur =~ ^[0-9]+$ ]] && [ "$dur" -ge 4 ] || { echo "--seconds must be a whole number, at least 4" >&2; exit 2; }
if [ -z "$phase" ]; then
    if [ "$dur" -ge 240 ]; then phase=30; else phase=$(( dur / 12 )); fi
    [ "$phase" -ge 1 ] || phase=1
fi
[[ $phase =~ ^[0-9]+$ ]] && [ "$phase" -ge 1 ] || { echo "--phase must be a whole number of seconds, at least 1" >&2; exit 2; }
for m in $mixes; do
    [[ $m =~ ^[0-9]+:[0-9]+$ ]] && [ "${m%:*}" -gt 0 ] && [ "${m#*:}" -gt 0 ] ||
        { echo "bad --mix ratio $m (A:B, both above 0)" >&2; exit 2; }
done
read -r -a mix_list <<< "$mixes"
nmix=${#mix_list[@]}
[ "$nmix" -ge 1 ] || { echo "no --mix" >&2; exit 2; }
[ "$nmix" -gt 1 ] || phase=$dur

maxmem_bytes=$(lib_mem_bytes "$maxmemory") || exit 2
[ "$maxmem_bytes" -gt 0 ] || { echo "--maxmemory must be above 0 (0 means no limit)" >&2; exit 2; }
limit_bytes=$(( maxmem_bytes * 102 / 100 + 1048576 ))
slope_limit_mib=$(awk -v m="$maxmem_bytes" 'BEGIN { printf "%.2f", m / 1048576 / 100 }')

# The two templates. Template 1: six small and medium SETs (16 B to 1000 B),
# a DEL, a SET with EX 5 and an EXPIRE 5; template 2: three large SETs
# (4 KB to 16 KB). Every key of the one keyspace gets values of any size in
# turn, so a freed value's memory is wanted back by a value of another size.
small_sizes="16 40 64 200 500 1000"
large_sizes="4096 9000 16000"
ex_size=300
# Estimated bytes a key holds with mix A:B: the mean size of the values SET
# (each key holds its last one) + 90 bytes of overhead.
key_bytes() {
    local a=${1%:*} b=${1#*:}
    awk -v a="$a" -v b="$b" -v s="$small_sizes $ex_size" -v l="$large_sizes" 'BEGIN {
        ns = split(s, S, " "); nl = split(l, L, " ")
        for (i = 1; i <= ns; i++) ss += S[i]
        for (i = 1; i <= nl; i++) ls += L[i]
        printf "%d\n", (a * ss + b * ls) / (a * ns + b * nl) + 90 }'
}
keys_note="set with --keys"
if [ "$keys" = auto ]; then
    kb_min=
    for m in "${mix_list[@]}"; do
        k=$(key_bytes "$m")
        if [ -z "$kb_min" ] || [ "$k" -lt "$kb_min" ]; then kb_min=$k; fi
    done
    keys=$(( 4 * maxmem_bytes / kb_min ))
    keys_note="4 x maxmemory / $kb_min bytes a key (the mean value SET + 90 bytes, with the mix of smallest values)"
fi
[[ $keys =~ ^[0-9]+$ ]] && [ "$keys" -gt 0 ] || { echo "--keys must be a number above 0" >&2; exit 2; }
t1=""
for v in $small_sizes; do t1+="SET {key uniform $keys} {value $v} ; "; done
t1+="DEL {key uniform $keys} ; SET {key uniform $keys} {value $ex_size} EX 5 ; EXPIRE {key uniform $keys} 5"
t2=""
for v in $large_sizes; do t2+="${t2:+ ; }SET {key uniform $keys} {value $v}"; done

# The RSS slope over the second half of the run. With one mix, a
# least-squares line through the 1 s samples. With several, an RSS that
# rises and falls with the mix would read as a slope (a line through a
# square wave of amplitude A over n cycles of length P leans by about
# 3A/(n^2 P)), so the line goes through the mean RSS of each whole cycle
# (cycles start at 0, cycle, 2 cycle, ... s) in the second half, at its
# middle, when there are two or more; with fewer, through the 1 s samples
# of the second half.
cycle=$(( nmix * phase ))
fit_cycles=0
fit_from=$(( dur - dur / 2 ))
fit_to=$dur
if [ "$nmix" -gt 1 ]; then
    first=$(( (fit_from + cycle - 1) / cycle ))
    if [ $(( dur / cycle - first )) -ge 2 ]; then
        fit_cycles=$(( dur / cycle - first ))
        fit_from=$(( first * cycle ))
        fit_to=$(( (first + fit_cycles) * cycle ))
    fi
fi
if [ "$fit_cycles" -gt 0 ]; then
    fit_how="a least-squares line through the mean VmRSS of each whole cycle of the mixes in the second half ($fit_cycles cycles of $cycle s, ${fit_from}–${fit_to} s)"
else
    fit_how="a least-squares line through the 1 s VmRSS samples of ${fit_from}–${fit_to} s"
fi
# "After the first minute": the first minute, or the first half of a run of
# two minutes or less.
if [ "$dur" -ge 120 ]; then warm=60; else warm=$(( dur / 2 )); fi

lib_init churn
raw="$RESULTS/raw.csv"
echo "server,metric,value" > "$raw"
declare -A R=()
# record SERVER METRIC VALUE: into raw.csv and R[server,metric].
record() {
    echo "$1,$2,\"${3//\"/\"\"}\"" >> "$raw"
    R[$1,$2]=$3
}

num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }

# The sampler: from epoch T0, every second until T0 + SECONDS, one pipelined
# INFO memory, INFO stats, INFO keyspace, and VmRSS from /proc/PID/status.
# A row per sample to the timeline CSV (flushed, so a crash leaves the rows
# before it). Exits 3 when used_memory or VmRSS passes GUARD bytes, 4 when
# the server is gone, 0 otherwise.
cat > "$RESULTS/sampler.py" <<'EOF'
import socket, sys, time

port, pid, t0, seconds, out, guard = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                      int(sys.argv[4]), sys.argv[5], int(sys.argv[6]))
sock = socket.create_connection(("127.0.0.1", port))
buf = b""


def reply():
    global buf
    while b"\r\n" not in buf:
        d = sock.recv(65536)
        if not d:
            raise OSError("connection closed")
        buf += d
    line, rest = buf.split(b"\r\n", 1)
    if line[:1] != b"$":
        buf = rest
        return line.decode(errors="replace")
    n = int(line[1:])
    if n < 0:
        buf = rest
        return ""
    while len(rest) < n + 2:
        d = sock.recv(65536)
        if not d:
            raise OSError("connection closed")
        rest += d
    buf = rest[n + 2:]
    return rest[:n].decode(errors="replace")


def info():
    sock.sendall(b"".join(b"*2\r\n$4\r\nINFO\r\n$%d\r\n%s\r\n" % (len(s), s)
                          for s in (b"memory", b"stats", b"keyspace")))
    d = {}
    for _ in range(3):
        for l in reply().split("\r\n"):
            if ":" in l and not l.startswith("#"):
                k, v = l.split(":", 1)
                d[k] = v
    keys = 0
    for k, v in d.items():
        if k.startswith("db") and "keys=" in v:
            keys += int(v.split("keys=")[1].split(",")[0])
    d["_keys"] = keys
    return d


def vmrss():
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


cols = ["used_memory", "used_memory_rss", "mem_fragmentation_ratio", "maxmemory", "evicted_keys",
        "expired_keys", "total_commands_processed", "used_memory_peak"]
tl = open(out, "w")
tl.write("t_s,vmrss," + ",".join(cols) + ",keys,commands_per_s,evicted_per_s,info_ms\n")
prev = None
k = 0
rc = 0
while k <= seconds:
    now = time.time()
    if t0 + k > now:
        time.sleep(t0 + k - now)
    try:
        rss = vmrss()
        a = time.time()
        d = info()
        b = time.time()
    except (OSError, ValueError) as e:
        sys.stderr.write("sampler: server gone at t=%.1f s: %s\n" % (time.time() - t0, e))
        rc = 4
        break
    t = a - t0
    vals = [d.get(c, "") for c in cols]
    cps = eps = ""
    try:
        if prev is not None and t > prev[0]:
            cps = "%.1f" % ((int(d["total_commands_processed"]) - prev[1]) / (t - prev[0]))
            eps = "%.1f" % ((int(d["evicted_keys"]) - prev[2]) / (t - prev[0]))
        prev = (t, int(d["total_commands_processed"]), int(d["evicted_keys"]))
    except (KeyError, ValueError):
        pass
    tl.write("%.3f,%d,%s,%d,%s,%s,%.1f\n" % (t, rss, ",".join(vals), d["_keys"], cps, eps, (b - a) * 1000))
    tl.flush()
    try:
        used = int(d.get("used_memory", "0"))
    except ValueError:
        used = 0
    if used > guard or rss > guard:
        sys.stderr.write("sampler: used_memory %d, VmRSS %d at t=%.1f s: above the guard of %d\n"
                         % (used, rss, t, guard))
        rc = 3
        break
    # The next second; a tick already past (a slow INFO) is skipped.
    k = max(k + 1, min(int(time.time() - t0), seconds))
sys.exit(rc)
EOF

# The analysis of a timeline: prints "metric value" lines.
cat > "$RESULTS/analyze.py" <<'EOF'
import csv, json, sys

tl, maxmem, dur, fit_from, warm = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
cycle, fit_cycles = float(sys.argv[6]), int(sys.argv[7])
jsons = sys.argv[8:]
MiB = 1048576.0
rows = []
with open(tl) as f:
    for r in csv.DictReader(f):
        try:
            rows.append({k: float(v) if v not in ("", None) else None for k, v in r.items()})
        except ValueError:
            pass
out = {}


def put(k, v, fmt="%s"):
    out[k] = "n/a" if v is None else (fmt % v)


def at(t):
    """The last sample at or before t (within 2 s), or None."""
    best = None
    for r in rows:
        if r["t_s"] <= t + 0.5:
            best = r
    if best is None or best["t_s"] < t - 2:
        return None
    return best


def field(r, k):
    return None if r is None else r.get(k)


put("samples", len(rows), "%d")
if rows:
    last = rows[-1]
    used = [r for r in rows if r["used_memory"] is not None]
    peak = max(used, key=lambda r: r["used_memory"]) if used else None
    if peak:
        put("peak_used", peak["used_memory"], "%d")
        put("peak_over_max", peak["used_memory"] / maxmem, "%.4f")
        put("peak_minus_max", peak["used_memory"] - maxmem, "%d")
        put("peak_t", peak["t_s"], "%.0f")
    put("sampled_s", last["t_s"], "%.1f")
    put("used_end_over_max", None if last["used_memory"] is None else last["used_memory"] / maxmem, "%.4f")
    pk = last.get("used_memory_peak")
    put("info_peak_over_max", None if pk is None else pk / maxmem, "%.4f")
    put("info_peak_minus_max", None if pk is None else pk - maxmem, "%d")
    full = next((r["t_s"] for r in rows if (r["evicted_keys"] or 0) > 0), None)
    put("full_s", full, "%.0f")
    for name, t in (("rss_1min", 60), ("rss_5min", 300)):
        r = at(t) if dur >= t else None
        put(name + "_mib", field(r, "vmrss") / MiB if r else None, "%.1f")
    put("rss_end_mib", last["vmrss"] / MiB, "%.1f")
    put("rss_max_mib", max(r["vmrss"] for r in rows) / MiB, "%.1f")
    put("info_rss_end_mib", None if last["used_memory_rss"] is None else last["used_memory_rss"] / MiB, "%.1f")
    if fit_cycles > 0:
        # One point per whole cycle: its mean RSS, at its middle. A cycle
        # without samples (the run was stopped) is left out.
        pts = []
        for j in range(fit_cycles):
            a = fit_from + j * cycle
            b = a + cycle
            c = [r["vmrss"] for r in rows if a - 0.5 <= r["t_s"] < b - 0.5]
            if c and last["t_s"] >= b - 1.5:
                pts.append(((a + b) / 2 / 60.0, sum(c) / len(c) / MiB))
        need = 2
    else:
        pts = [(r["t_s"] / 60.0, r["vmrss"] / MiB) for r in rows if r["t_s"] >= fit_from - 0.5]
        need = 3
    if cycle > 0 and dur >= cycle:
        b = int(dur // cycle) * cycle
        c = [r["vmrss"] for r in rows if b - cycle - 0.5 <= r["t_s"] < b - 0.5]
        put("rss_last_cycle_mean_mib", sum(c) / len(c) / MiB if c and last["t_s"] >= b - 1.5 else None, "%.1f")
    if len(pts) >= need:
        n = len(pts)
        mx = sum(p[0] for p in pts) / n
        my = sum(p[1] for p in pts) / n
        sxx = sum((p[0] - mx) ** 2 for p in pts)
        sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
        put("rss_slope_mib_per_min", sxy / sxx if sxx > 0 else None, "%.3f")
        put("rss_fit_points", n, "%d")
    else:
        put("rss_slope_mib_per_min", None)
    put("frag_end", last["mem_fragmentation_ratio"], "%.3f")
    fr = [r["mem_fragmentation_ratio"] for r in rows
          if r["t_s"] >= warm and r["mem_fragmentation_ratio"] is not None]
    put("frag_max_after_warm", max(fr) if fr else None, "%.3f")
    put("rss_over_used_end", last["vmrss"] / last["used_memory"] if last["used_memory"] else None, "%.3f")
    rr = [r["vmrss"] / r["used_memory"] for r in rows if r["t_s"] >= warm and r["used_memory"]]
    put("rss_over_used_max_after_warm", max(rr) if rr else None, "%.3f")
    first = rows[0]
    span = last["t_s"] - first["t_s"]
    if span > 0 and last["total_commands_processed"] is not None and first["total_commands_processed"] is not None:
        put("commands_per_s", (last["total_commands_processed"] - first["total_commands_processed"]) / span, "%.1f")
    else:
        put("commands_per_s", None)
    if span > 0 and last["evicted_keys"] is not None and first["evicted_keys"] is not None:
        put("evictions_per_s", (last["evicted_keys"] - first["evicted_keys"]) / span, "%.1f")
    else:
        put("evictions_per_s", None)
    put("evicted_keys", last["evicted_keys"], "%d")
    put("expired_keys", last["expired_keys"], "%d")
    put("keys_end", last["keys"], "%d")
    put("info_ms_max", max(r["info_ms"] for r in rows), "%.1f")
    over = [r for r in rows if r["used_memory"] is not None and r["used_memory"] > maxmem * 1.02 + MiB]
    put("samples_over_limit", len(over), "%d")
req = cmds = errs = 0
win = 0.0
first_error = None
for j in jsons:
    try:
        d = json.load(open(j))
    except Exception:
        continue
    for p in d.get("per_template") or []:
        req += p.get("requests", 0)
        cmds += p.get("requests", 0) * p.get("commands", 1)
    errs += d.get("errors_total", 0) or 0
    win += d.get("duration_s", 0) or 0
    if first_error is None and d.get("first_error"):
        first_error = d["first_error"]
put("bench_requests", req, "%d")
put("bench_commands", cmds, "%d")
put("bench_commands_per_s", cmds / win if win > 0 else None, "%.1f")
put("bench_errors", errs, "%d")
put("bench_first_error", (first_error or "").replace("\n", " ")[:200] or None)
for k, v in out.items():
    print("%s\t%s" % (k, v))
EOF

# run_one SERVER: a fresh server, maxmemory, the churn with the sampler.
run_one() {
    local s=$1 name=$1 out im ip t0 spid lpid src=0 tl stop pid
    lib_start_sweep_server "$s"
    local what=maxmemory
    out=$(lib_cli "$name" CONFIG SET maxmemory "$maxmemory" 2>&1 || true)
    if [ "$out" = OK ]; then
        what="maxmemory-policy $policy"
        out=$(lib_cli "$name" CONFIG SET maxmemory-policy "$policy" 2>&1 || true)
    fi
    if [ "$out" != OK ]; then
        record "$s" skipped "skipped: $what unavailable ($(echo "$out" | tr -d '\r' | head -1))"
        lib_log "$(label_of "$s"): ${R[$s,skipped]}"
        lib_stop_server "$name"
        return
    fi
    im=$(lib_info "$name" memory maxmemory)
    ip=$(lib_info "$name" memory maxmemory_policy)
    if { num "$im" && [ "$im" != "$maxmem_bytes" ]; } || { [ "$ip" != n/a ] && [ "$ip" != "$policy" ]; }; then
        record "$s" skipped "skipped: maxmemory unavailable (CONFIG SET answered OK, but INFO says maxmemory:$im maxmemory_policy:$ip)"
        lib_log "$(label_of "$s"): ${R[$s,skipped]}"
        lib_stop_server "$name"
        return
    fi
    lib_cli "$name" CONFIG GET 'maxmemory*' 2>&1 | awk 'NR % 2 { k = $0; next } { print k " " $0 }' \
        > "$RESULTS/$name.maxmemory"
    record "$s" maxmemory "$im"

    tl="$RESULTS/timeline-$s.csv"
    stop="$RESULTS/raw/$s.stop"
    rm -f "$stop"
    echo "segment,mix,t_start_s,t_end_s,rc" > "$RESULTS/segments-$s.csv"
    t0=$(awk -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + 1 }')
    taskset -c "$CLIENT_CPUS" "$PY" "$RESULTS/sampler.py" "${SRV_PORT[$name]}" "${SRV_PID[$name]}" "$t0" "$dur" \
        "$tl" "$(( guard_factor * maxmem_bytes ))" 2> "$RESULTS/raw/$s-sampler.err" &
    spid=$!
    lib_log "$(label_of "$s"): churn for $dur s (mixes ${mixes// /, } every $phase s), sampling every second"
    # The load: one hotkv-bench run per phase, each ending at its deadline
    # from t0 (so the starts and ends of the runs do not add up to drift).
    (
        set +e
        sleep "$(awk -v t="$t0" -v n="$(date +%s.%N)" 'BEGIN { d = t - n; printf "%.3f", (d > 0 ? d : 0) }')"
        i=0
        while [ ! -e "$stop" ]; do
            end=$(( (i + 1) * phase )); [ "$end" -le "$dur" ] || end=$dur
            d=$(awk -v t="$t0" -v e="$end" -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + e - n }')
            [ "$(awk -v d="$d" 'BEGIN { print (d >= 0.5) }')" = 1 ] || break
            mix=${mix_list[$(( i % nmix ))]}
            ts=$(awk -v t="$t0" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - t }')
            lib_bench "$name" "$RESULTS/raw/$s-seg$i.json" -d "$d" -c "$(lib_conns_per_thread "$conns")" \
                -P "$pipeline" --seed "$(( i + 1 ))" --ratio "$mix" "$t1" "$t2"
            rc=$?
            echo "$i,$mix,$ts,$(awk -v t="$t0" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - t }'),$rc" \
                >> "$RESULTS/segments-$s.csv"
            if [ "$rc" -ne 0 ] && ! kill -0 "${SRV_PID[$name]}" 2>/dev/null; then break; fi
            [ "$end" -lt "$dur" ] || break
            i=$(( i + 1 ))
        done
    ) &
    lpid=$!
    wait "$spid" || src=$?
    if [ "$src" -ne 0 ]; then
        # The guard passed or the server is gone: stop the load now.
        touch "$stop"
        for pid in $(ps -o pid= --ppid "$lpid" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    fi
    wait "$lpid" || true
    [ ! -s "$RESULTS/raw/$s-sampler.err" ] || sed "s/^/  $s: /" "$RESULTS/raw/$s-sampler.err" >&2
    case $src in
        0) ;;
        3) record "$s" stopped "stopped: memory not bounded ($(sed -n 's/^sampler: //p' "$RESULTS/raw/$s-sampler.err" | head -1), $guard_factor × maxmemory)" ;;
        4) record "$s" stopped "stopped: the server went away ($(sed -n 's/^sampler: //p' "$RESULTS/raw/$s-sampler.err" | head -1))" ;;
        *) record "$s" stopped "stopped: the sampler failed (exit $src; see raw/$s-sampler.err)" ;;
    esac

    local line k v
    local -a segs
    mapfile -t segs < <(printf '%s\n' "$RESULTS/raw/$s-seg"*.json | sort -V)
    while IFS=$'\t' read -r k v; do
        record "$s" "$k" "$v"
    done < <("$PY" "$RESULTS/analyze.py" "$tl" "$maxmem_bytes" "$dur" "$fit_from" "$warm" \
                 "$([ "$nmix" -gt 1 ] && echo "$cycle" || echo 0)" "$fit_cycles" \
                 "${segs[@]}")
    if kill -0 "${SRV_PID[$name]}" 2>/dev/null; then
        lib_cli "$name" INFO memory 2>/dev/null | tr -d '\r' > "$RESULTS/$name.info-memory" || true
        lib_cli "$name" INFO stats 2>/dev/null | tr -d '\r' > "$RESULTS/$name.info-stats" || true
    fi
    line="peak used_memory/maxmemory ${R[$s,peak_over_max]:-n/a}, RSS end ${R[$s,rss_end_mib]:-n/a} MiB"
    line+=", RSS slope ${R[$s,rss_slope_mib_per_min]:-n/a} MiB/min, frag end ${R[$s,frag_end]:-n/a}"
    line+=", ${R[$s,commands_per_s]:-n/a} commands/s, ${R[$s,evictions_per_s]:-n/a} evictions/s, errors ${R[$s,bench_errors]:-n/a}"
    lib_log "$(label_of "$s"): $line"
    lib_stop_server "$name"
}

for s in $servers; do run_one "$s"; done

# ---- plots ---------------------------------------------------------------------
plots=""
if lib_have_gnuplot; then
    limit_mib=$(awk -v b="$limit_bytes" 'BEGIN { printf "%.3f", b / 1048576 }')
    max_mib=$(awk -v b="$maxmem_bytes" 'BEGIN { printf "%.3f", b / 1048576 }')
    for s in $servers; do
        tl="$RESULTS/timeline-$s.csv"
        [ -n "${R[$s,skipped]:-}" ] || [ ! -s "$tl" ] || [ "$(wc -l < "$tl")" -lt 3 ] && continue
        arrows=""
        while IFS=, read -r _ _ ts _ _; do
            arrows+="set arrow from $ts, graph 0 to $ts, graph 1 nohead back lc rgb \"#9999dd\" dt 2"$'\n'
        done < <(tail -n +3 "$RESULTS/segments-$s.csv")
        if gnuplot <<GP 2> "$RESULTS/gnuplot.err"; then plots+=" churn-$s.png"; else cat "$RESULTS/gnuplot.err" >&2; fi
set terminal pngcairo noenhanced size 1100,600 font ",10"
set output "$RESULTS/churn-$s.png"
set datafile separator ","
set title "$(label_of "$s"): memory under churn (maxmemory $maxmemory, $policy; dashed blue lines: mix changes)"
set xlabel "time, s"
set ylabel "MiB"
set y2label "mem_fragmentation_ratio"
set ytics nomirror
set y2tics
set grid
set key bottom right
set xrange [0:$dur]
set yrange [0:*]
$arrows
plot "$tl" using 1:(\$3/1048576) with lines lw 2 title "used_memory", \
     "$tl" using 1:(\$2/1048576) with lines lw 2 title "RSS (VmRSS)", \
     $max_mib with lines dt 2 lc rgb "black" title "maxmemory", \
     $limit_mib with lines dt 3 lc rgb "red" title "maxmemory x 1.02 + 1 MiB", \
     "$tl" using 1:(\$3 > $maxmem_bytes / 10 ? \$5 : 1/0) axes x1y2 with lines lc rgb "#888888" title "mem_fragmentation_ratio (right; once used_memory > maxmemory / 10)"
GP
    done
fi

# ---- report -------------------------------------------------------------------
v() { echo "${R[$1,$2]:-n/a}"; }
has() { [[ " $servers " == *" $1 "* ]]; }
cell() { # server metric decimals
    if ! has "$1" || [ -n "${R[$1,skipped]:-}" ]; then echo "–"; else lib_fmt "$(v "$1" "$2")" "$3"; fi
}
row() { # label metric decimals [noratio]
    local h r ratio
    h=$(cell hotkv "$2" "$3")
    r=$(cell redis "$2" "$3")
    if [ -n "${4:-}" ]; then ratio=""; else ratio=$(lib_ratio "$h" "$r"); fi
    echo "| $1 | $h | $r | $ratio |"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
tables="$RESULTS/tables.md"
{
    echo "| | $(label_of hotkv) | $(label_of redis) | HotKV/Redis |"
    echo "|---|---:|---:|---:|"
    h=$(cell hotkv samples 0); r=$(cell redis samples 0)
    has hotkv || h="not run"; has redis || r="not run"
    for s in hotkv redis; do
        t=${R[$s,skipped]:-${R[$s,stopped]:-}}
        [ -z "${R[$s,stopped]:-}" ] || t="$(cell "$s" samples 0) (stopped, see below)"
        [ -z "$t" ] || { if [ "$s" = hotkv ]; then h=$t; else r=$t; fi; }
    done
    echo "| samples (1 a second) | $h | $r | |"
    row "maxmemory, bytes" maxmemory 0 noratio
    row "peak used_memory / maxmemory (1 s samples)" peak_over_max 4
    row "peak used_memory − maxmemory, bytes" peak_minus_max 0 noratio
    row "peak used_memory at, s" peak_t 0 noratio
    row "samples with used_memory > maxmemory × 1.02 + 1 MiB" samples_over_limit 0 noratio
    row "used_memory_peak (INFO, at the end) / maxmemory" info_peak_over_max 4
    row "used_memory / maxmemory at the end" used_end_over_max 4
    row "memory full (first eviction) after, s" full_s 0 noratio
    row "RSS (VmRSS) at 1 min, MiB" rss_1min_mib 1
    row "RSS (VmRSS) at 5 min, MiB" rss_5min_mib 1
    row "RSS (VmRSS) at the end, MiB" rss_end_mib 1
    row "RSS (VmRSS) max, MiB" rss_max_mib 1
    [ "$nmix" -le 1 ] || row "RSS (VmRSS), mean over the last whole cycle of the mixes ($cycle s), MiB" rss_last_cycle_mean_mib 1
    row "RSS slope, ${fit_from}–${fit_to} s$([ "$fit_cycles" -eq 0 ] || echo ", through $fit_cycles cycle means"), MiB/min" rss_slope_mib_per_min 3 noratio
    row "used_memory_rss (INFO) at the end, MiB" info_rss_end_mib 1
    row "mem_fragmentation_ratio (INFO) at the end" frag_end 3
    row "mem_fragmentation_ratio (INFO) max after ${warm} s" frag_max_after_warm 3
    row "VmRSS / used_memory at the end" rss_over_used_end 3
    row "VmRSS / used_memory max after ${warm} s" rss_over_used_max_after_warm 3
    row "commands/s (server's total_commands_processed)" commands_per_s 0
    row "commands/s (hotkv-bench)" bench_commands_per_s 0
    row "evictions/s" evictions_per_s 0
    row "evicted_keys (whole run)" evicted_keys 0
    row "expired_keys (whole run)" expired_keys 0
    row "keys held at the end" keys_end 0
    row "hotkv-bench error replies" bench_errors 0 noratio
    row "slowest INFO of the sampler, ms" info_ms_max 1
    echo
    for s in $servers; do
        [ -z "${R[$s,skipped]:-}" ] || { echo "- $(label_of "$s"): ${R[$s,skipped]}"; continue; }
        pk=$(v "$s" peak_used)
        ipk=$(v "$s" info_peak_over_max)
        if num "$pk"; then
            m=$([ "$pk" -le "$limit_bytes" ] && echo met || echo "not met")
            echo "- $(label_of "$s"): used_memory ≤ maxmemory × 1.02 + 1 MB ($(mib "$limit_bytes") MiB): **$m** (peak of the 1 s samples $(mib "$pk") MiB, $(v "$s" peak_over_max) × maxmemory; used_memory_peak from INFO $ipk × maxmemory)"
        else
            echo "- $(label_of "$s"): used_memory ≤ maxmemory × 1.02 + 1 MB: n/a (no samples)"
        fi
        sl=$(v "$s" rss_slope_mib_per_min)
        if num "$sl"; then
            m=$(awk -v a="$sl" -v b="$slope_limit_mib" 'BEGIN { print (a <= b ? "met" : "not met") }')
            echo "- $(label_of "$s"): RSS slope over the second half ≤ 1% of maxmemory per minute ($slope_limit_mib MiB/min): **$m** ($sl MiB/min: $fit_how)"
        else
            echo "- $(label_of "$s"): RSS slope over the second half ≤ 1% of maxmemory per minute: n/a (too few samples)"
        fi
        [ -z "${R[$s,stopped]:-}" ] || echo "- ⚠ $(label_of "$s"): ${R[$s,stopped]}"
        ev=$(v "$s" evicted_keys)
        if num "$ev" && [ "$ev" = 0 ]; then
            if [ "$(awk -v p="$(v "$s" peak_over_max)" 'BEGIN { print (p + 0 < 0.9) }')" = 1 ]; then
                echo "- ⚠ $(label_of "$s"): no key was evicted: the memory never filled, so the run says little about eviction (more --seconds or a smaller --maxmemory)"
            else
                echo "- ⚠ $(label_of "$s"): no key was evicted (maxmemory-policy $policy): writes past maxmemory were refused, not made room for"
            fi
        fi
        e=$(v "$s" bench_errors)
        if num "$e" && [ "$e" != 0 ]; then
            echo "- ⚠ $(label_of "$s"): $e error replies; the first: \`$(v "$s" bench_first_error)\`"
        fi
    done
} > "$tables"

plot_lines=""
for p in $plots; do plot_lines+=$'\n'"![$p]($p)"$'\n'; done
{
    lib_header "Churn: memory stays bounded under maxmemory, HotKV vs Redis" \
        "maxmemory $maxmemory ($maxmem_bytes bytes), maxmemory-policy $policy, set with \`CONFIG SET\` on a fresh server (other settings at their defaults)" \
        "churn: $dur s per server, closed loop at full speed, $conns connections, pipeline $pipeline; keyspace $keys keys ($keys_note); hotkv-bench \`--ratio A:B\` of template 1 \`$t1\` (6 SETs of 16–1000 B, a DEL, a SET with EX, an EXPIRE) and template 2 \`$t2\` (3 SETs of 4–16 KB); the ratio cycles through ${mixes// /, } every $phase s (one hotkv-bench run per phase, \`segments-*.csv\`)" \
        "sampler: every second, INFO memory, stats and keyspace and \`/proc/PID/status\` VmRSS (\`timeline-*.csv\`); a server whose used_memory or VmRSS passes $guard_factor × maxmemory is stopped there. RSS is VmRSS (the same for both); mem_fragmentation_ratio is each server's own INFO field; the RSS slope is $fit_how; commands/s and evictions/s from the counters of the first and last samples"
    echo
    echo "## Results"
    echo
    cat "$tables"
    [ -z "$plot_lines" ] || { echo; echo "## Timelines"; echo "$plot_lines"; }
    lib_server_section
} > "$RESULTS/results.md"
lib_show_table "$tables"
