#!/usr/bin/env bash
# Install the Debian/Ubuntu packages HotKV needs to build and test, skipping
# what is already there. Uses sudo only when not root.
set -euo pipefail

want_build="gcc make pkg-config libmimalloc-dev libluajit-5.1-dev libssl-dev openssl"
want_test="clang libclang-rt-14-dev python3 python3-redis python3-pytest python3-numpy python3-hnswlib python3-rq redis-tools redis-server"
case "${1:-build}" in
  build) want="$want_build" ;;
  test)  want="$want_build $want_test" ;;
  bench) want="$want_build $want_test redis-server gnuplot-nox valgrind bc g++ libhnswlib-dev dataset-fashion-mnist" ;;
  *) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
# libclang-rt-14-dev only exists on Debian 12-era releases; elsewhere clang
# ships its runtime itself.
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "deps: installing$missing"
  $SUDO apt-get update -qq
  for p in $missing; do
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$p" >/dev/null; then
      case "$p" in
        libclang-rt-*) echo "deps: $p not available, continuing" ;;
        *) echo "deps: failed to install $p" >&2; exit 1 ;;
      esac
    fi
  done
fi
