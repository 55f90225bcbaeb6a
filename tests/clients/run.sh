#!/usr/bin/env bash
# Run real client libraries (ioredis, node-redis, BullMQ, redis-py,
# python-rq) against a server this script starts: a fresh one per suite, on
# a free loopback port.
#
#   tests/clients/run.sh [SERVER_BIN]   test hotkv-server (default build/hotkv-server)
#   tests/clients/run.sh --redis        run the same suites against redis-server
#
# It builds nothing. It installs what the suites need when missing:
# nodejs/npm and python3-redis, python3-rq, python3-pytest (apt-get, via
# sudo when not root), and the node packages (npm ci in tests/clients/node).
# When the npm registry cannot be reached the node suites are SKIPPED and
# the Python suites still run.
#
# CLIENT_SUITES="ioredis rq" limits the run to some of the suites:
# ioredis, node-redis, bullmq, redis-py, rq.
#
# HotKV runs with --threads 2, except for the suites listed in
# suite_threads below (bullmq: 4, so its workers' connections are served by
# several threads).
#
# Exit status: 0 when every suite that ran passed (and at least one ran),
# 1 otherwise, 2 on bad usage or a missing server binary.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
SUITE_TIMEOUT=${SUITE_TIMEOUT:-120}
ALL_SUITES="ioredis node-redis bullmq redis-py rq"
SUITES=${CLIENT_SUITES:-$ALL_SUITES}

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

target=hotkv
bin=""
for arg in "$@"; do
  case "$arg" in
    --redis) target=redis ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option $arg" >&2; usage >&2; exit 2 ;;
    *) bin=$arg ;;
  esac
done
for s in $SUITES; do
  case " $ALL_SUITES " in *" $s "*) ;; *) echo "run.sh: unknown suite '$s' (have: $ALL_SUITES)" >&2; exit 2 ;; esac
done
wants() { case " $SUITES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
suite_threads() { # HotKV's --threads for suite $1
  case "$1" in
    bullmq) echo 4 ;;
    *) echo 2 ;;
  esac
}

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hotkv-clients.XXXXXX")
SERVER_PID=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  [ -n "$SERVER_PID" ] && kill -KILL "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -a RESULTS=()
passed=0 failed=0 skipped=0
record() { # record STATUS SUITE WHY
  RESULTS+=("$(printf '%-8s %-11s %s' "$1" "$2" "$3")")
  case "$1" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    SKIPPED) skipped=$((skipped + 1)); echo "SKIPPED: $2: $3" ;;
  esac
}

# ------------------------------------------------------------ the server

if [ "$target" = hotkv ]; then
  bin=${bin:-$ROOT/build/hotkv-server}
  if [ ! -x "$bin" ]; then
    echo "run.sh: no server binary at $bin (build it first, e.g. make)" >&2
    exit 2
  fi
  server_desc="hotkv-server ($bin)"
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
fi

apt_updated=""
apt_install() { # apt_install PKG...; returns apt-get's status
  if ! command -v apt-get >/dev/null; then
    echo "run.sh: apt-get not found, cannot install $*" >&2
    return 1
  fi
  echo "run.sh: installing $* with apt-get" >&2
  if [ -z "$apt_updated" ]; then
    $SUDO apt-get update -qq || return 1
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

have_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

if [ "$target" = redis ]; then
  if ! command -v redis-server >/dev/null; then
    apt_install redis-server || { echo "run.sh: redis-server is not installed and could not be installed" >&2; exit 2; }
  fi
  bin=$(command -v redis-server)
  server_desc="$("$bin" --version | sed 's/ sha=.*//')"
fi

free_port() { # a port the kernel just gave out and took back: free, and not one it hands out again soon
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ping_server() ( # ping_server PORT: true when it answers +PONG
  exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'PING\r\n' >&3
  IFS= read -r -t 2 line <&3
  [[ "$line" == +PONG* ]]
)

start_server() { # start_server NAME: sets SERVER_PORT, SERVER_PID, SERVER_LOG
  SERVER_PORT=$(free_port) || { echo "run.sh: no free port" >&2; return 1; }
  SERVER_LOG="$WORK/$1.server.log"
  local dir="$WORK/$1.data"
  mkdir -p "$dir"
  if [ "$target" = redis ]; then
    (cd "$dir" && exec "$bin" --port "$SERVER_PORT" --bind 127.0.0.1 --save "" --appendonly no \
      --dir "$dir" --daemonize no) >"$SERVER_LOG" 2>&1 &
  else
    (cd "$dir" && exec "$bin" --port "$SERVER_PORT" --bind 127.0.0.1 --save "" --threads "$(suite_threads "$1")") \
      >"$SERVER_LOG" 2>&1 &
  fi
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "run.sh: the server exited at start-up; its log:" >&2
      tail -n 20 "$SERVER_LOG" >&2
      SERVER_PID=""
      return 1
    fi
    ping_server "$SERVER_PORT" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "run.sh: the server did not answer PING on port $SERVER_PORT within 10s" >&2
  return 1
}

stop_server() {
  [ -z "$SERVER_PID" ] && return 0
  kill -TERM "$SERVER_PID" 2>/dev/null
  for _ in $(seq 1 50); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
}

run_suite() { # run_suite NAME DIR CMD...: a fresh server, the command, the verdict
  local name=$1 dir=$2
  shift 2
  echo
  local how=""
  [ "$target" = hotkv ] && how=", --threads $(suite_threads "$name")"
  echo "=== $name against $server_desc$how ==="
  # A port taken between choosing it and binding it: try another.
  local tries=0
  until start_server "$name"; do
    stop_server
    tries=$((tries + 1))
    [ "$tries" -ge 3 ] && break
  done
  if [ "$tries" -ge 3 ]; then
    record FAIL "$name" "server did not start"
    stop_server
    return
  fi
  local rc=0
  (cd "$dir" && SERVER_HOST=127.0.0.1 SERVER_PORT=$SERVER_PORT \
    timeout --kill-after=5 "$SUITE_TIMEOUT" "$@") || rc=$?
  local died=""
  kill -0 "$SERVER_PID" 2>/dev/null || died=1
  stop_server
  if [ -n "$died" ]; then
    echo "run.sh: the server exited during $name; the end of its log:"
    tail -n 30 "$SERVER_LOG"
    record FAIL "$name" "server exited during the suite (test exit status $rc)"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    record FAIL "$name" "timed out after ${SUITE_TIMEOUT}s"
  elif [ "$rc" -ne 0 ]; then
    record FAIL "$name" "test exit status $rc"
  else
    record PASS "$name" ""
  fi
}

# ------------------------------------------------------------ node suites

node_suites=""
for s in ioredis node-redis bullmq; do wants "$s" && node_suites="$node_suites $s"; done

prepare_node() { # prints a reason and returns 1 to skip, 2 to fail
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    if ! apt_install nodejs npm; then
      echo "nodejs/npm are not installed and apt-get could not install them"
      return 1
    fi
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 18 ]; then
    echo "node $(node --version 2>/dev/null) is too old: node --test needs node 18 or newer"
    return 1
  fi
  local nm="$HERE/node/node_modules"
  if [ ! -f "$nm/.package-lock.json" ] || [ "$HERE/node/package-lock.json" -nt "$nm/.package-lock.json" ]; then
    echo "run.sh: npm ci in tests/clients/node" >&2
    local log="$WORK/npm-ci.log"
    if ! (cd "$HERE/node" && timeout 300 npm ci --no-audit --no-fund --fetch-retries=1 \
      --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=10000 --fetch-timeout=60000) >"$log" 2>&1; then
      tail -n 15 "$log" >&2
      if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|socket hang up|proxy' "$log"; then
        echo "npm ci could not reach the npm registry"
        return 1
      fi
      echo "npm ci failed (see its output above)"
      return 2
    fi
  fi
  return 0
}

if [ -n "$node_suites" ]; then
  reason=$(prepare_node)
  st=$?
  if [ "$st" -eq 0 ]; then
    reporter=()
    node --help 2>/dev/null | grep -q -- '--test-reporter' && reporter=(--test-reporter=spec)
    for s in $node_suites; do
      run_suite "$s" "$HERE/node" node --test "${reporter[@]}" "$s.test.js"
    done
  else
    for s in $node_suites; do
      if [ "$st" -eq 1 ]; then record SKIPPED "$s" "$reason"; else record FAIL "$s" "$reason"; fi
    done
  fi
fi

# ------------------------------------------------------------ python suites

py_suites=""
for s in redis-py rq; do wants "$s" && py_suites="$py_suites $s"; done

if [ -n "$py_suites" ]; then
  missing=""
  for p in python3-redis python3-rq python3-pytest; do
    have_deb "$p" || missing="$missing $p"
  done
  py_ok=1
  if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    apt_install $missing || py_ok=""
  fi
  if [ -n "$py_ok" ] && ! "$PY" -c 'import redis, rq, pytest' 2>/dev/null; then
    py_ok=""
  fi
  for s in $py_suites; do
    if [ -z "$py_ok" ]; then
      record SKIPPED "$s" "python3-redis, python3-rq or python3-pytest could not be installed for $PY"
      continue
    fi
    case "$s" in
      redis-py) file=test_redis_py.py ;;
      rq) file=test_rq.py ;;
    esac
    run_suite "$s" "$HERE/python" env PYTHONDONTWRITEBYTECODE=1 \
      "$PY" -m pytest -p no:cacheprovider -q -rfEs "$file"
  done
fi

# ------------------------------------------------------------ summary

echo
echo "=== client suites against $server_desc ==="
for line in "${RESULTS[@]}"; do echo "$line"; done
echo "suites: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ] || [ "$passed" -eq 0 ]; then
  exit 1
fi
exit 0
