#!/usr/bin/env bash
# persistence.sh - what persistence costs, HotKV vs redis-server.
#
# Each server in turn, pinned to the server CPUs (the load generator and the
# samplers to the client CPUs), in three parts:
#  1. BGSAVE of N keys (default 1,000,000 strings of 100 bytes) while
#     hotkv-bench sends SET and GET at a fixed rate (open loop): the save's
#     wall time, the extra memory while it runs (the PSS of the server plus
#     that of its children, i.e. Redis's forked child, sampled every 20 ms,
#     and the child's private dirty pages: the copy-on-write), and the GET
#     p99 while saving back to back against the same load with no save;
#  2. restart on the file: the load time the server logs ("DB loaded from
#     disk: X seconds");
#  3. SET throughput with the append-only file on (appendfsync everysec and
#     always), 50 connections, pipeline 1 and 16; "skipped: AOF unavailable"
#     for a server whose CONFIG SET appendonly yes fails.
# Writes results.md (the tables with HotKV/Redis ratios, machine, versions,
# server command lines), raw.csv, every hotkv-bench JSON report and the
# memory timelines. It measures; it never fails on a slow number.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

servers="hotkv redis"
keys=1000000
value=100
rate=10000
conns=8
dur=5
warmup=1
loads=1
aof_dur=5
aof_conns=50
pipelines="1 16"
fsyncs="everysec always"
hotkv_threads=1
keep_data=0
data_root=
parts="save load aof"

usage() {
    cat <<EOF
usage: bench/persistence.sh [options]

BGSAVE, restart and AOF costs, HotKV vs redis-server (see bench/README.md).
The default run takes 2 to 3 minutes on 2 cores.

  --servers LIST       hotkv,redis (default both)
  --parts LIST         save,load,aof (default all three)
  --keys N             keys saved and loaded (default $keys)
  --value N            value size in bytes (default $value)
  --rate R             SET/s and as many GET/s during part 1 (default $rate)
  --connections N      connections of part 1's load (default $conns)
  --seconds SEC        measured seconds of part 1, idle and saving (default $dur)
  --loads N            restarts timed in part 2, the median is reported (default $loads)
  --aof-seconds SEC    measured seconds of each AOF row (default $aof_dur)
  --aof-connections N  connections of part 3 (default $aof_conns)
  --hotkv-threads N    hotkv-server --threads (default $hotkv_threads)
  --data-dir DIR       where the servers keep their files (default the results folder;
                       a tmpfs such as /dev/shm takes the disk out of the picture)
  --keep-data          keep the data folders (dump.rdb, appendonlydir) in the results
$(lib_common_usage persistence)
  --full               the big version: --keys 5000000 --seconds 15 --loads 3 --aof-seconds 15
  -h, --help           this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=${2//,/ }; shift 2 ;;
        --parts) parts=${2//,/ }; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --value) value=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --connections) conns=$2; shift 2 ;;
        --seconds) dur=$2; shift 2 ;;
        --loads) loads=$2; shift 2 ;;
        --aof-seconds) aof_dur=$2; shift 2 ;;
        --aof-connections) aof_conns=$2; shift 2 ;;
        --hotkv-threads) hotkv_threads=$2; shift 2 ;;
        --data-dir) data_root=$2; shift 2 ;;
        --keep-data) keep_data=1; shift ;;
        --full) keys=5000000; dur=15; loads=3; aof_dur=15; shift ;;
        -h|--help) usage; exit 0 ;;
        *) if lib_common_opt "$1" "${2:-}"; then shift 2
           else echo "unknown option: $1" >&2; usage >&2; exit 2; fi ;;
    esac
done
lib_check_servers hotkv redis
for p in $parts; do
    case $p in save|load|aof) ;; *) echo "unknown part $p" >&2; exit 2 ;; esac
done
has_part() { [[ " $parts " == *" $1 "* ]]; }

lib_init persistence
if [ -z "$data_root" ]; then data_root=$RESULTS; else data_root=$(mktemp -d "$data_root/hotkv-persistence.XXXXXX"); fi
raw="$RESULTS/raw.csv"
echo "server,part,metric,value" > "$raw"
declare -A R=()
# record SERVER PART METRIC VALUE: into raw.csv and R[server,metric].
record() {
    echo "$1,$2,$3,$4" >> "$raw"
    R[$1,$3]=$4
}

label_of() {
    case $1 in
        hotkv) echo "HotKV (--threads $hotkv_threads)" ;;
        redis) echo "Redis" ;;
    esac
}

# start NAME SERVER DATADIR: a server of kind SERVER on DATADIR.
start() {
    local name=$1 s=$2 dir=$3
    mkdir -p "$dir"
    case $s in
        hotkv) lib_start_server "$name" hotkv "$(label_of hotkv)" --threads "$hotkv_threads" --dir "$dir" ;;
        redis) lib_start_server "$name" redis "$(label_of redis)" --dir "$dir" ;;
    esac
}

# The save driver: from its start waits WARMUP seconds, samples the memory
# of the server and its children for a baseline, then for SECONDS keeps a
# BGSAVE running (the next one as soon as the last is over), sampling every
# 20 ms: the sum of Pss and of Rss over the server and its children
# (/proc/PID/smaps_rollup), the children's Private_Dirty. A save is over
# when the server says so (INFO) or, for a forked child, when the child has
# exited (Redis reaps it up to 100 ms later, which INFO would add).
# Writes a JSON summary and a timeline CSV. With a seventh argument "idle"
# it samples and polls INFO at the same pace without saving, so that the
# idle latency is measured beside the same sampler as the saving one.
cat > "$RESULTS/save_driver.py" <<'EOF'
import json, os, socket, sys, time

port, pid, warmup, seconds, out, timeline = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                            float(sys.argv[4]), sys.argv[5], sys.argv[6])
idle = len(sys.argv) > 7 and sys.argv[7] == "idle"
sock = socket.create_connection(("127.0.0.1", port))
buf = b""


def command(*args):
    global buf
    sock.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in
                                                    (x.encode() for x in args)))
    while b"\r\n" not in buf:
        buf += sock.recv(65536)
    line, rest = buf.split(b"\r\n", 1)
    if line[:1] != b"$":
        buf = rest
        return line.decode()
    n = int(line[1:])
    while len(rest) < n + 2:
        rest += sock.recv(65536)
    buf = rest[n + 2:]
    return rest[:n].decode()


def info():
    return dict(l.split(":", 1) for l in command("INFO", "persistence").split("\r\n") if ":" in l)


def children():
    kids = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                    kids += [int(x) for x in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return kids


def rollup(p):
    d = {}
    try:
        with open("/proc/%d/smaps_rollup" % p) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    d[parts[0][:-1]] = int(parts[1])
    except OSError:
        pass
    return d


def alive(p):
    try:
        with open("/proc/%d/stat" % p) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


t_start = time.time()
tl = open(timeline, "w")
tl.write("t_s,pss_kb,rss_kb,child_pss_kb,child_private_dirty_kb,saving\n")


def sample(saving):
    main = rollup(pid)
    kids = [rollup(k) for k in children()]
    s = {"pss": main.get("Pss", 0) + sum(k.get("Pss", 0) for k in kids),
         "rss": main.get("Rss", 0) + sum(k.get("Rss", 0) for k in kids),
         "child_pss": sum(k.get("Pss", 0) for k in kids),
         "child_dirty": sum(k.get("Private_Dirty", 0) for k in kids)}
    tl.write("%.3f,%d,%d,%d,%d,%d\n" % (time.time() - t_start, s["pss"], s["rss"], s["child_pss"],
                                        s["child_dirty"], saving))
    return s


time.sleep(max(0.0, warmup - 0.3))
base = []
for _ in range(10):
    base.append(sample(0)["pss"])
    time.sleep(0.02)
baseline = sorted(base)[len(base) // 2]
end = time.time() + seconds
saves, statuses, peaks = [], [], {"pss": 0, "rss": 0, "child_pss": 0, "child_dirty": 0}
while idle and time.time() < end:
    sample(0)
    info()
    time.sleep(0.02)
while not idle and time.time() < end:
    t0 = time.time()
    reply = command("BGSAVE")
    if not reply.startswith("+"):
        statuses.append(reply)
        time.sleep(0.05)
        continue
    child = None
    done_at = None
    while True:
        s = sample(1)
        for k in peaks:
            peaks[k] = max(peaks[k], s[k])
        kids = children()
        if child is None and kids:
            child = kids[0]
        if child is not None and done_at is None and not alive(child):
            done_at = time.time()
        i = info()
        if i["rdb_bgsave_in_progress"] == "0":
            done_at = done_at or time.time()
            statuses.append(i["rdb_last_bgsave_status"])
            break
        time.sleep(0.02)
    saves.append(done_at - t0)
i = info()
json.dump({"saves_s": saves, "statuses": statuses, "baseline_pss_kb": baseline, "peak_pss_kb": peaks["pss"],
           "peak_rss_kb": peaks["rss"], "peak_child_pss_kb": peaks["child_pss"],
           "peak_child_private_dirty_kb": peaks["child_dirty"], "rdb_last_cow_size": int(i["rdb_last_cow_size"])},
          open(out, "w"))
EOF

median() { tr ' ' '\n' | grep -v '^$' | lib_median; }

# ---- part 1: BGSAVE under a fixed-rate load -----------------------------------
part_save() {
    local s=$1 name=$1 dir="$data_root/data-$1" cpt json line
    local -a load
    start "$name" "$s" "$dir"
    lib_preload "$name" strings "$keys" "SET {key sequence $keys} {value $value}"
    lib_settle "$name"
    cpt=$(lib_conns_per_thread "$conns")
    load=(-c "$cpt" --rate "$((2 * rate))" --warmup "$warmup" -d "$dur" --ratio 1:1
          "SET {key uniform $keys} {value $value}" "GET {key uniform $keys}")
    for phase in idle saving; do
        lib_settle "$name"
        json="$RESULTS/raw/$s-$phase.json"
        if [ "$phase" = saving ]; then
            taskset -c "$CLIENT_CPUS" "$PY" "$RESULTS/save_driver.py" "${SRV_PORT[$name]}" "${SRV_PID[$name]}" \
                "$warmup" "$dur" "$RESULTS/raw/$s-saves.json" "$RESULTS/raw/$s-memory.csv" &
        else
            taskset -c "$CLIENT_CPUS" "$PY" "$RESULTS/save_driver.py" "${SRV_PORT[$name]}" "${SRV_PID[$name]}" \
                "$warmup" "$dur" "$RESULTS/raw/$s-idle-sampler.json" "$RESULTS/raw/$s-memory-idle.csv" idle &
        fi
        local driver=$!
        lib_bench "$name" "$json" "${load[@]}" || true
        wait "$driver" || lib_log "save driver failed for $(label_of "$s") ($phase)"
        line=$(lib_json "$json" achieved_rate per_template.1.latency_us.p50 per_template.1.latency_us.p99 \
                   per_template.0.latency_us.p99 errors)
        IFS=$'\t' read -r ach gp50 gp99 sp99 err <<< "$line"
        record "$s" save "achieved_rate_$phase" "$ach"
        record "$s" save "get_p50_us_$phase" "$gp50"
        record "$s" save "get_p99_us_$phase" "$gp99"
        record "$s" save "set_p99_us_$phase" "$sp99"
        record "$s" save "errors_$phase" "$err"
        lib_log "$(label_of "$s") $phase: achieved $(lib_fmt "$ach" 0) req/s, GET p99 $gp99 us, SET p99 $sp99 us"
    done
    json="$RESULTS/raw/$s-saves.json"
    if [ -s "$json" ]; then
        local saves
        saves=$("$PY" -c 'import json,sys; print(" ".join("%.3f" % x for x in json.load(open(sys.argv[1]))["saves_s"]))' "$json")
        record "$s" save saves "$(echo "$saves" | wc -w)"
        record "$s" save save_wall_s "$(echo "$saves" | median)"
        line=$(lib_json "$json" baseline_pss_kb peak_pss_kb peak_child_private_dirty_kb rdb_last_cow_size)
        IFS=$'\t' read -r base peak dirty cow <<< "$line"
        record "$s" save extra_peak_mib "$(awk -v a="$peak" -v b="$base" 'BEGIN { printf "%.1f", (a - b) / 1024 }')"
        record "$s" save baseline_mib "$(awk -v b="$base" 'BEGIN { printf "%.1f", b / 1024 }')"
        record "$s" save child_private_dirty_mib "$(awk -v a="$dirty" 'BEGIN { printf "%.1f", a / 1024 }')"
        record "$s" save rdb_last_cow_size_mib "$(awk -v a="$cow" 'BEGIN { printf "%.1f", a / 1048576 }')"
        if grep -q '"err"\|ERR' "$json"; then lib_log "$(label_of "$s"): a save failed (see $json)"; fi
        lib_log "$(label_of "$s") saves: $saves s; extra peak ${R[$s,extra_peak_mib]} MiB"
    fi
    # The file part 2 loads: every key, saved in the foreground.
    lib_cli "$name" SAVE > /dev/null
    record "$s" load file_mib "$(awk -v a="$(stat -c %s "$dir/dump.rdb")" 'BEGIN { printf "%.1f", a / 1048576 }')"
    lib_stop_server "$name"
}

# ---- part 2: restart on the file -----------------------------------------------
part_load() {
    local s=$1 dir="$data_root/data-$1" i name secs all=""
    if [ ! -s "$dir/dump.rdb" ]; then
        start "$s-fill" "$s" "$dir"
        lib_preload "$s-fill" strings "$keys" "SET {key sequence $keys} {value $value}"
        lib_cli "$s-fill" SAVE > /dev/null
        record "$s" load file_mib "$(awk -v a="$(stat -c %s "$dir/dump.rdb")" 'BEGIN { printf "%.1f", a / 1048576 }')"
        lib_stop_server "$s-fill"
    fi
    for i in $(seq "$loads"); do
        name="$s-load$i"
        start "$name" "$s" "$dir"
        secs=$(grep -o 'DB loaded from disk: [0-9.]* seconds' "$RESULTS/$name.log" | awk '{ print $5 }' | tail -1)
        [ -n "$secs" ] || secs="n/a"
        [ "$(lib_cli "$name" DBSIZE)" = "$keys" ] || lib_log "$(label_of "$s") loaded $(lib_cli "$name" DBSIZE) keys, not $keys"
        lib_stop_server "$name"
        all+=" $secs"
        lib_log "$(label_of "$s") load $i: $secs s"
    done
    record "$s" load load_s "$(echo "$all" | median)"
}

# ---- part 3: SET throughput with the AOF ------------------------------------
part_aof() {
    local s=$1 name="$1-aof" dir="$data_root/data-$1-aof" out f p json ach err
    start "$name" "$s" "$dir"
    out=$(lib_cli "$name" CONFIG SET appendonly yes 2>&1 || true)
    if [ "$out" != OK ]; then
        echo "skipped: AOF unavailable ($(label_of "$s"): $out)"
        record "$s" aof skipped "$out"
        lib_stop_server "$name"
        return
    fi
    for _ in $(seq 300); do
        lib_cli "$name" INFO persistence | tr -d '\r' | grep -q '^aof_rewrite_in_progress:0' && break
        sleep 0.1
    done
    for f in $fsyncs; do
        lib_cli "$name" CONFIG SET appendfsync "$f" > /dev/null
        for p in $pipelines; do
            lib_settle "$name"
            json="$RESULTS/raw/$s-aof-$f-p$p.json"
            lib_bench "$name" "$json" -c "$(lib_conns_per_thread "$aof_conns")" -P "$p" --warmup 1 -d "$aof_dur" \
                "SET {key uniform $keys} {value $value}" || true
            IFS=$'\t' read -r ach err <<< "$(lib_json "$json" achieved_rate errors)"
            record "$s" aof "set_rps_${f}_p$p" "$ach"
            lib_log "$(label_of "$s") AOF appendfsync $f P$p: $(lib_fmt "$ach" 0) SET/s, errors $err"
        done
    done
    lib_cli "$name" INFO persistence | tr -d '\r' | grep '^aof_' > "$RESULTS/$name.aof-info" || true
    lib_stop_server "$name"
}

for s in $servers; do
    if has_part save; then part_save "$s"; fi
    if has_part load; then part_load "$s"; fi
    if has_part aof; then part_aof "$s"; fi
done
fs=$(df -T "$data_root" 2>/dev/null | awk 'NR == 2 { print $2 " (" $1 ")" }')
[ "$keep_data" = 1 ] || rm -rf "$data_root"/data-*
[ "$data_root" = "$RESULTS" ] || [ "$keep_data" = 1 ] || rmdir "$data_root"

# ---- report -------------------------------------------------------------------
v() { echo "${R[$1,$2]:-n/a}"; }
ratio() { lib_ratio "$(v hotkv "$1")" "$(v redis "$1")"; }
row() { # label metric decimals
    echo "| $1 | $(lib_fmt "$(v hotkv "$2")" "$3") | $(lib_fmt "$(v redis "$2")" "$3") | $(ratio "$2") |"
}
tables="$RESULTS/tables.md"
{
    if has_part save; then
        echo "### BGSAVE of $keys keys under load"
        echo
        echo "| | $(label_of hotkv) | $(label_of redis) | HotKV/Redis |"
        echo "|---|---:|---:|---:|"
        row "save wall time, s (median of the back-to-back saves)" save_wall_s 3
        row "saves during the ${dur} s window" saves 0
        row "memory before the saves (PSS), MiB" baseline_mib 1
        row "extra peak memory during the saves (PSS of server + children), MiB" extra_peak_mib 1
        row "of which the child's private dirty pages (copy-on-write), MiB" child_private_dirty_mib 1
        row "INFO rdb_last_cow_size, MiB" rdb_last_cow_size_mib 1
        row "GET p99 idle, µs" get_p99_us_idle 0
        row "GET p99 while saving, µs" get_p99_us_saving 0
        row "SET p99 idle, µs" set_p99_us_idle 0
        row "SET p99 while saving, µs" set_p99_us_saving 0
        row "achieved req/s idle (requested $((2 * rate)))" achieved_rate_idle 0
        row "achieved req/s while saving" achieved_rate_saving 0
        echo
    fi
    if has_part load; then
        echo "### Restart on the file"
        echo
        echo "| | $(label_of hotkv) | $(label_of redis) | HotKV/Redis |"
        echo "|---|---:|---:|---:|"
        row "dump.rdb, MiB" file_mib 1
        row "load time (\"DB loaded from disk\"), s, median of $loads" load_s 3
        echo
    fi
    if has_part aof; then
        echo "### SET throughput with appendonly yes ($aof_conns connections, $value-byte values)"
        echo
        echo "| appendfsync | pipeline | $(label_of hotkv) SET/s | $(label_of redis) SET/s | HotKV/Redis |"
        echo "|---|---:|---:|---:|---:|"
        for f in $fsyncs; do
            for p in $pipelines; do
                echo "| $f | $p | $(lib_fmt "$(v hotkv "set_rps_${f}_p$p")" 0) | $(lib_fmt "$(v redis "set_rps_${f}_p$p")" 0) | $(ratio "set_rps_${f}_p$p") |"
            done
        done
        for s in $servers; do
            [ -z "${R[$s,skipped]:-}" ] || echo "- $(label_of "$s"): skipped: AOF unavailable (\`${R[$s,skipped]}\`)"
        done
        echo
    fi
} > "$tables"

{
    lib_header "Persistence: HotKV vs Redis" \
        "data: $keys keys \`key_%010d\` of $value-byte values (\`SET {key sequence $keys} {value $value}\`, --load); files on $fs" \
        "part 1: open loop \`--ratio 1:1 \"SET {key uniform $keys} {value $value}\" \"GET {key uniform $keys}\"\` at $((2 * rate)) req/s over $conns connections, $warmup s warmup + $dur s measured, first without saving (the memory sampler and INFO polling running as in the saving phase), then with a BGSAVE always running (the next started when the last ended); memory sampled every 20 ms from /proc/PID/smaps_rollup of the server and its children (Redis's forked child), extra = peak - median before the first save; a save ends when the child exits (Redis) or INFO says so (HotKV)" \
        "part 2: SAVE, stop, start on the file, the server's own \"DB loaded from disk\" line" \
        "part 3: \`CONFIG SET appendonly yes\` on an empty server, then closed loop \`SET {key uniform $keys} {value $value}\`, $aof_conns connections, $aof_dur s after 1 s warmup per row"
    echo
    echo "## Results"
    echo
    cat "$tables"
    lib_server_section
} > "$RESULTS/results.md"
lib_show_table "$tables"
