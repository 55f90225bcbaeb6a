/* main.c - start-up and shutdown of hotkv-server.
 *
 * The main thread loads the configuration, builds the command table and the
 * keyspace, opens the listeners, starts the workers and then only waits for
 * SIGTERM/SIGINT (SHUTDOWN raises SIGTERM too). Everything else happens on
 * the workers. It sits above the server and the command handlers, which
 * it wires together (cmdtable.h); neither includes anything from here. */
#include "../core/alloc.h"
#include "../core/hash.h"
#include "../server/memstats.h"
#include "../server/blocking.h"
#include "../server/config.h"
#include "../server/journal.h"
#include "../server/pubsub.h"
#include "../server/lazyfree.h"
#include "../server/server.h"
#include "../server/snapshot.h"
#include "../server/aof.h"
#include "../server/acl.h"
#include "../store/db.h"
#include "../server/tlsconf.h"
#include "../server/txn.h"
#include "cmdtable.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define HK_FREE_KEYSPACE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HK_FREE_KEYSPACE_AT_EXIT 1
#endif
#endif

static void usage(void) {
    fprintf(stderr,
            "Usage: ./hotkv-server [/path/to/hotkv.conf] [options] [-]\n"
            "       ./hotkv-server - (read config from stdin is not supported)\n"
            "       ./hotkv-server -v or --version\n"
            "       ./hotkv-server -h or --help\n\n"
            "Examples:\n"
            "       ./hotkv-server (run the server with default conf)\n"
            "       ./hotkv-server /etc/hotkv/6379.conf\n"
            "       ./hotkv-server --port 7777\n"
            "       ./hotkv-server --port 7777 --threads 4 --bind 127.0.0.1 ::1\n"
            "       ./hotkv-server /etc/myhotkv.conf --loglevel verbose\n\n"
            "Options take the names of redis.conf settings; see README.md for the list.\n");
}

static void write_pidfile(void) {
    char *path = cfg_get_string(&cfg.pidfile);
    if (path[0]) {
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        } else {
            hk_log(LL_WARNING, "Failed to write PID file %s", path);
        }
    }
    hk_free(path);
}

static void remove_pidfile(void) {
    char *path = cfg_get_string(&cfg.pidfile);
    if (path[0]) unlink(path);
    hk_free(path);
}

/* Values behind a pointer are referenced from unaligned offsets inside
 * the packed key entries, where LeakSanitizer's scan of live memory does
 * not look: free them, or every large value left at exit is reported as a
 * leak. Release builds skip the cost. */
static void free_keyspace(void) {
#ifdef HK_FREE_KEYSPACE_AT_EXIT
    struct lockset all;
    ls_init(&all);
    ls_add_all(&all);
    ls_acquire(&all);
    struct flushed *f = ks_flush(-1);
    ls_release(&all);
    ks_flushed_free(f);
#endif
}

/* A dataset that cannot be loaded stops the server, as in Redis. */
static void __attribute__((noreturn)) load_failed(void) {
    free_keyspace();
    exit(1);
}

/* Load the AOF (appendonly yes) or the RDB file at start-up; a file that
 * cannot be loaded stops the server, as in Redis. */
static void load_dataset(void) {
    long long t0 = hk_mstime();
    char err[1024];
    atomic_store(&load_progress.start_ms, t0);
    store_now_ms = t0;
    if (CFG(appendonly)) {
        if (aof_load_at_start(err, sizeof(err)) < 0) {
            hk_log(LL_WARNING, "%s", err);
            load_failed();
        }
        return;
    }
    char path[1024];
    snapshot_path(path, sizeof(path));
    struct stat st;
    if (stat(path, &st) == 0) atomic_store(&load_progress.total_bytes, (long long)st.st_size);
    struct rdb_load_result res;
    int rc = rdb_load_file(path, &res, err, sizeof(err));
    if (rc < 0) {
        hk_log(LL_WARNING, "Fatal error loading the DB: %s. Exiting.", err);
        load_failed();
    }
    if (rc == 0) {
        atomic_store(&load_progress.keys_loaded, res.keys_loaded);
        atomic_store(&load_progress.keys_expired, res.keys_expired);
        hk_log(LL_NOTICE, "Done loading RDB, keys loaded: %llu, keys expired: %llu.", res.keys_loaded,
               res.keys_expired);
        hk_log(LL_NOTICE, "DB loaded from disk: %.3f seconds", (double)(hk_mstime() - t0) / 1000);
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("HotKV server v=%s redis_compat=%s bits=%d malloc=%s\n", HOTKV_VERSION, HK_REDIS_COMPAT_VERSION,
               (int)(sizeof(long) * 8), hk_allocator_name());
        return 0;
    }
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage();
        return 0;
    }
    server.executable = argv[0];
    server.start_ms = hk_mstime();
    server.start_mono_us = hk_monotonic_us();
    atomic_store(&server.next_client_id, 1);
    atomic_store(&server.lastsave, server.start_ms / 1000);
    hk_random_hex(server.run_id, 40);
    uint64_t seed;
    hk_random_bytes(&seed, sizeof(seed));
    hk_hash_init(seed);

    /* Signals are handled by sigwait on this thread; block them before any
     * thread starts so workers inherit the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    config_load(argc, argv);
    log_reopen();
    if (server.config_file == NULL && argc == 1)
        hk_log(LL_WARNING, "Warning: no config file specified, using the default config. In order to specify a "
                           "config file use %s /path/to/hotkv.conf",
               argv[0]);

    int threads = (int)CFG(threads);
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads <= 0) threads = 1;
    if (threads > HK_MAX_THREADS) threads = HK_MAX_THREADS;
    server.nworkers = threads;
    unsigned shards = 1;
    while (shards < (unsigned)CFG(shards)) shards <<= 1;

    hk_clock_init();
    cmdtable_init();
    acl_init();
    block_init();
    txn_init();
    atomic_store(&server.active_expire_enabled, 1);
    ks_init((int)CFG(databases), shards);
    journal_init(threads);
    pubsub_init(threads);

    struct utsname un;
    uname(&un);
    hk_log(LL_NOTICE, "HotKV %s (Redis %s compatible) starting, pid=%d, %d worker thread%s, %u shards, %s %s",
           HOTKV_VERSION, HK_REDIS_COMPAT_VERSION, (int)getpid(), threads, threads == 1 ? "" : "s", shards,
           un.sysname, un.machine);
    lazyfree_start();
    /* Clients connecting while the dataset loads are answered -LOADING.
     * Without a file to load there is no loading state, as in Redis (the
     * AOF still opens its files before the first write is admitted). */
    char rdb_path[1024];
    struct stat rdb_st;
    snapshot_path(rdb_path, sizeof(rdb_path));
    if (CFG(appendonly) || stat(rdb_path, &rdb_st) == 0) {
        atomic_store(&server_loading, 1);
        admit_gate_set(ADMIT_GATE_LOADING, 1);
    }
    atomic_store(&load_progress.start_ms, hk_mstime());
    workers_start();
    memstats_startup();
    write_pidfile();
    hk_log(LL_NOTICE, "Ready to accept connections on port %lld", CFG(port));
    load_dataset();
    /* The AOF takes writes from here on: before the first one is admitted. */
    if (CFG(appendonly)) {
        char err[512];
        if (aof_start(err, sizeof(err)) < 0) {
            hk_log(LL_WARNING, "Can't open the append-only file: %s", err);
            load_failed();
        }
    }
    atomic_store(&server_loading, 0);
    admit_gate_set(ADMIT_GATE_LOADING, 0);
    snapshot_init();

    int sig = 0;
    for (;;) {
        while (!atomic_load(&server.shutdown_asap)) {
            if (sigwait(&set, &sig) == 0) {
                if (sig == SIGTERM || sig == SIGINT) break;
            }
        }
        if (atomic_load(&server.shutdown_asap)) break; /* SHUTDOWN prepared it */
        if (sig == SIGINT) hk_log(LL_WARNING, "Received SIGINT scheduling shutdown...");
        else hk_log(LL_WARNING, "Received SIGTERM scheduling shutdown...");
        if (shutdown_prepare(SHUTDOWN_DEFAULT, 0) == 0) break;
        hk_log(LL_WARNING, "SIGTERM received but errors trying to shut down the server, check the logs for more "
                           "information");
    }
    hk_log(LL_WARNING, "User requested shutdown...");
    workers_stop();
    workers_join();
    tlsconf_shutdown();
    snapshot_shutdown();
    snapshot_wait();
    aof_shutdown();
    lazyfree_stop();
    remove_pidfile();
    if (server.unix_fd > 0) {
        char *us = cfg_get_string(&cfg.unixsocket);
        if (us[0]) unlink(us);
        hk_free(us);
    }
    free_keyspace();
    hk_log(LL_WARNING, "HotKV is now ready to exit, bye bye...");
    return atomic_load(&server.shutdown_exit_code);
}
