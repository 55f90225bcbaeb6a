#!/usr/bin/env bash
# all.sh - run every sweep (throughput, latency, pub/sub, cross-check) into one results folder.
#
# A convenience wrapper: runs bench/throughput.sh, lat_sweep.sh, ps_sweep.sh,
# ps_fanout.sh and crosscheck.sh one after the other with a shared --out folder
# (bench/results/<UTC date>-<host>/, one subfolder per script) and passes
# the options given here to every script that knows them. It measures
# nothing itself. --published passes --published to the scripts that have it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
    cat <<EOF
usage: bench/all.sh [--published] [--only LIST] [common options]

Runs throughput.sh, lat_sweep.sh, ps_sweep.sh, ps_fanout.sh and crosscheck.sh into one
results folder. Common options passed to each script:
  --hotkv PATH --redis PATH --bench PATH --server-cpus LIST --client-cpus LIST
  --bench-threads N --hotkv-threads N --out DIR
  --published          the published sizes (not passed to crosscheck.sh)
  --only LIST          comma separated subset of throughput,lat_sweep,ps_sweep,ps_fanout,crosscheck
  -h, --help           this text
EOF
}

common=()
published=()
only="throughput lat_sweep ps_sweep ps_fanout crosscheck"
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --hotkv|--redis|--bench|--server-cpus|--client-cpus|--bench-threads|--hotkv-threads)
            common+=("$1" "$2"); shift 2 ;;
        --out) out=$2; shift 2 ;;
        --published) published=(--published); shift ;;
        --only) only=${2//,/ }; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out="$here/results/$(date -u +%Y%m%d-%H%M%S)-$(hostname -s 2>/dev/null || hostname)"

for s in $only; do
    case $s in
        throughput|lat_sweep|ps_sweep|ps_fanout) "$here/$s.sh" --out "$out" "${common[@]}" "${published[@]}" ;;
        crosscheck) "$here/$s.sh" --out "$out" "${common[@]}" ;;
        *) echo "unknown script $s" >&2; exit 2 ;;
    esac
done
echo "results: $out" >&2
