#!/bin/sh
# engine_bench.sh - HotKV's graph engine against hnswlib, in-process, one
# thread each, on generated clustered sets.
#
#   bench/vector/engine_bench.sh [N] [DIMS] [NQ]     defaults: 20000 "64 768" 500
#
# Builds build/engine_bench (against the optimised core objects; run
# `make` first) and build/hnswlib_bench (g++ -O2 -march=native against
# /usr/include/hnswlib: hnswlib picks its SIMD at compile time, so it gets
# the host's best), writes the data under build/engine-data-DIM/, then
# prints every line of both.
set -e
cd "$(dirname "$0")/../.."
N=${1:-20000}
DIMS=${2:-"64 768"}
NQ=${3:-500}
[ -f /usr/include/hnswlib/hnswlib.h ] || { echo "needs libhnswlib-dev (apt-get install -y libhnswlib-dev)" >&2; exit 1; }
make -s build/obj/core/hnsw.o build/obj/core/vdist.o build/obj/core/alloc.o build/obj/core/buf.o
cc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -Ibench/vector -o build/engine_bench bench/vector/engine_bench.c \
    build/obj/core/hnsw.o build/obj/core/vdist.o build/obj/core/alloc.o build/obj/core/buf.o -lmimalloc -lm -pthread
g++ -std=c++17 -O2 -march=native -Ibench/vector -o build/hnswlib_bench bench/vector/hnswlib_bench.cc -pthread
for d in $DIMS; do
    dir=build/engine-data-$d
    mkdir -p "$dir"
    [ -f "$dir/gt.ivecs" ] && [ "$(cat "$dir/params" 2>/dev/null)" = "$N $d $NQ" ] || {
        build/engine_bench gen "$dir" "$N" "$d" "$NQ"
        echo "$N $d $NQ" > "$dir/params"
    }
    build/hnswlib_bench "$dir"
    build/engine_bench run "$dir" NOQUANT
    build/engine_bench run "$dir" Q8
done
