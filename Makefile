# HotKV build. `make` builds build/hotkv-server; `make run` and `make test`
# also install what is missing (scripts/deps.sh).
#
#   make                      optimised build in build/
#   make SANITIZER=address    ASan+UBSan build in build-address/
#   make SANITIZER=thread     TSan build in build-thread/
#   make run                  build and start the server on 127.0.0.1:6379
#   make test                 unit tests, integration tests, and the ASan run
#   make test-tsan            the integration tests against the TSan build
#   make check-layers         every include in src/ (and symbol of the build) points down the layers
#   make fuzz                 the RESP parser fuzzer for FUZZ_SECONDS
#   make fuzz-rdb             the RDB value decoder (RESTORE) fuzzer for FUZZ_SECONDS
#   make bench                every benchmark study, HotKV vs redis-server (bench/all.sh; BENCH_ARGS)
#   make BUILD=dir ...        build somewhere else (parallel work trees)

CC ?= cc
SANITIZER ?=
FUZZ_SECONDS ?= 60
PYTHON ?= /usr/bin/python3
TEST_PREFIX ?=

ifeq ($(SANITIZER),)
BUILD ?= build
OPT := -O2
ALLOC_DEFS := -DHK_MIMALLOC
ALLOC_LIBS := -lmimalloc
else
BUILD ?= build-$(SANITIZER)
CC := clang
OPT := -O1 -fno-omit-frame-pointer
ALLOC_DEFS :=
ALLOC_LIBS :=
ifeq ($(SANITIZER),address)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
SANFLAGS := -fsanitize=$(SANITIZER)
endif
# Sanitizer builds also check invariants: every keyspace access happens
# with its shard locked (HK_ASSERT_HELD), deferred replies are filled.
SANFLAGS += -DHK_DEBUG
endif

WARN := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
ifdef CI
WARN += -Werror
endif
CFLAGS := -std=gnu11 -g $(OPT) $(WARN) -pthread -D_GNU_SOURCE $(ALLOC_DEFS) $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := -pthread $(SANFLAGS) $(EXTRA_LDFLAGS)
# LuaJIT (Lua 5.1 semantics) for EVAL and FUNCTION; found with pkg-config,
# installed by scripts/deps.sh.
LUA_CFLAGS := $(shell pkg-config --cflags luajit 2>/dev/null)
LUA_LIBS := $(shell pkg-config --libs luajit 2>/dev/null || echo -lluajit-5.1)
CFLAGS += $(LUA_CFLAGS)
# OpenSSL 3 for TLS (libssl-dev).
SSL_CFLAGS := $(shell pkg-config --cflags openssl 2>/dev/null)
SSL_LIBS := $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto)
CFLAGS += $(SSL_CFLAGS)
LIBS := $(ALLOC_LIBS) $(LUA_LIBS) $(SSL_LIBS) -lm

# Layers, from the bottom: core (src/core, src/proto, src/net, src/lua:
# data structures, protocol, sockets; no server knowledge), types (key
# entries and value encodings: no client, no replies, no keyspace), store
# (the keyspace), server (workers, execution, the command table's
# machinery), cmd (the handlers and their .def rows), and app (the command
# table built from those rows, and main: the one place server and cmd
# meet). A folder includes only from its own layer and the ones below;
# scripts/check-layers.sh holds the tree to it (make check-layers, run by
# test-unit). Unit tests of a layer link only that layer and the ones
# below it; the server's link everything but main.
CORE_SRC := $(wildcard src/core/*.c) $(wildcard src/proto/*.c) $(wildcard src/net/*.c) $(wildcard src/lua/*.c)
TYPES_SRC := $(wildcard src/types/*.c)
SERVER_SRC := $(wildcard src/store/*.c) $(wildcard src/server/*.c) $(wildcard src/cmd/*.c)
APP_SRC := $(wildcard src/app/*.c)
CORE_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(CORE_SRC))
TYPES_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(TYPES_SRC))
SERVER_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SERVER_SRC))
APP_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(APP_SRC))
MAIN_OBJ := $(BUILD)/obj/app/main.o
CORE_TESTS := geohash hnsw htable intset listpack lualibs lzf rdbstr reply resp skiplist slab util vexpr xxh3
TYPES_TESTS := hashval listval quicklist rdb rdb_types setval stream strval vsetval zsetval
# The objects a unit test links: its layer and the layers below.
test_objs = $(if $(filter $1,$(CORE_TESTS)),$(CORE_OBJ),$(if $(filter $1,$(TYPES_TESTS)),$(CORE_OBJ) $(TYPES_OBJ),\
	$(CORE_OBJ) $(TYPES_OBJ) $(SERVER_OBJ) $(filter-out $(MAIN_OBJ),$(APP_OBJ))))
UNIT_SRC := $(filter-out tests/unit/test_bench.c,$(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC)) $(BUILD)/tests/test_bench
# The load generator (bench/gen) stands alone: no server code; libc, and
# OpenSSL for --tls.
BENCH_SRC := $(wildcard bench/gen/*.c)
BENCH_OBJ := $(patsubst bench/gen/%.c,$(BUILD)/obj/bench/%.o,$(BENCH_SRC))

.PHONY: all deps run test test-unit test-integration test-clients test-asan test-tsan check-layers fuzz fuzz-rdb bench clean format

all: $(BUILD)/hotkv-server $(BUILD)/hotkv-bench $(UNIT_BIN)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/hotkv-server: $(CORE_OBJ) $(TYPES_OBJ) $(SERVER_OBJ) $(APP_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj/bench/%.o: bench/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/hotkv-bench: $(BENCH_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(SSL_LIBS) -lm

$(BUILD)/tests/test_bench: tests/unit/test_bench.c $(filter-out $(BUILD)/obj/bench/main.o,$(BENCH_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ibench/gen -o $@ $^ $(LDFLAGS) $(SSL_LIBS) -lm

$(BUILD)/tests/test_%: tests/unit/test_%.c $(CORE_OBJ) $(TYPES_OBJ) $(SERVER_OBJ) $(APP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -DHK_UNIT_TEST -o $@ $< $(call test_objs,$*) $(LDFLAGS) $(LIBS)

-include $(CORE_OBJ:.o=.d) $(TYPES_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)

deps:
	@scripts/deps.sh build

run: deps
	@$(MAKE) --no-print-directory $(BUILD)/hotkv-server
	./$(BUILD)/hotkv-server --bind 127.0.0.1 --port 6379

# Every include of src/ points down the layers; with the objects built, so
# does every symbol they use.
check-layers:
	@scripts/check-layers.sh $(BUILD)

test-unit: $(UNIT_BIN)
	@scripts/check-layers.sh $(BUILD)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

test-integration: $(BUILD)/hotkv-server $(BUILD)/hotkv-bench
	$(TEST_PREFIX) $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration --server-bin=$(BUILD)/hotkv-server

test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory test-unit
	@$(MAKE) --no-print-directory test-integration
	@$(MAKE) --no-print-directory test-clients
	@$(MAKE) --no-print-directory SANITIZER=address all
	@$(MAKE) --no-print-directory SANITIZER=address test-unit
	@$(MAKE) --no-print-directory SANITIZER=address test-integration

# Real client libraries (ioredis, node-redis, redis-py, python-rq, bullmq) through
# their own APIs; installs what they need (apt-get, npm ci).
test-clients: $(BUILD)/hotkv-server
	tests/clients/run.sh $(BUILD)/hotkv-server

test-tsan:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory SANITIZER=thread all
	@# TSan (clang 14) cannot map its shadow memory under the high ASLR
	@# entropy of recent kernels; setarch -R turns ASLR off for the run.
	@$(MAKE) --no-print-directory SANITIZER=thread \
		TEST_PREFIX="$$(command -v setarch >/dev/null && echo setarch $$(uname -m) -R)" test-integration

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory BUILD=build build/hotkv-server build/hotkv-bench
	bench/all.sh $(BENCH_ARGS)

fuzz:
	@scripts/deps.sh test
	@mkdir -p build-fuzz
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz_resp \
		fuzz/fuzz_resp.c src/proto/resp.c src/core/alloc.c src/core/util.c
	mkdir -p build-fuzz/corpus && cp -n fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true
	./build-fuzz/fuzz_resp -max_total_time=$(FUZZ_SECONDS) -max_len=4096 build-fuzz/corpus

# RESTORE's decoder: the RDB value reader and the types' load slots, which
# need the core and types layers only.
fuzz-rdb:
	@scripts/deps.sh test
	@mkdir -p build-fuzz
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o build-fuzz/fuzz_rdb fuzz/fuzz_rdb.c $(wildcard src/core/*.c) $(TYPES_SRC) -lm -pthread
	mkdir -p build-fuzz/corpus-rdb && cp -n fuzz/corpus-rdb/* build-fuzz/corpus-rdb/ 2>/dev/null || true
	./build-fuzz/fuzz_rdb -max_total_time=$(FUZZ_SECONDS) -max_len=4096 build-fuzz/corpus-rdb

format:
	clang-format -i $$(find src tests/unit fuzz bench -name '*.[ch]')

clean:
	rm -rf build build-address build-thread build-fuzz
