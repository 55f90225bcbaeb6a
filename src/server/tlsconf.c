/* tlsconf.c - the TLS context in force and its reload; see tlsconf.h.
 *
 * Ownership: `cur` (the newest context) and `gen` (bumped with every
 * swap) change under `mu`, a leaf mutex; `cur` holds one reference. Each
 * worker keeps a reference of its own to the context it accepts with
 * (struct worker.tls_ctx) and compares `gen` (one relaxed load) before
 * each TLS accept: when it moved, it takes a reference to `cur` under
 * `mu` and drops its old one. Connections hold a reference each (OpenSSL's
 * SSL_new takes it), so the last user of a replaced context frees it, on
 * whichever thread that is. */
#include "tlsconf.h"

#include "../core/alloc.h"
#include "../net/tls.h"
#include "config.h"
#include "server.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct tls_ctx *cur;
static _Atomic unsigned gen;

int tlsconf_reload(char *err, size_t errsize) {
    char *f[12];
    char **src[12] = {&cfg.tls_cert_file,        &cfg.tls_key_file,         &cfg.tls_key_file_pass,
                      &cfg.tls_client_cert_file, &cfg.tls_client_key_file,  &cfg.tls_client_key_file_pass,
                      &cfg.tls_ca_cert_file,     &cfg.tls_ca_cert_dir,      &cfg.tls_dh_params_file,
                      &cfg.tls_protocols,        &cfg.tls_ciphers,          &cfg.tls_ciphersuites};
    for (int i = 0; i < 12; i++) f[i] = cfg_get_string(src[i]);
    struct tls_settings s = {
        .cert_file = f[0],
        .key_file = f[1],
        .key_pass = f[2],
        .client_cert_file = f[3],
        .client_key_file = f[4],
        .client_key_pass = f[5],
        .ca_file = f[6],
        .ca_dir = f[7],
        .dh_file = f[8],
        .protocols = f[9],
        .ciphers = f[10],
        .ciphersuites = f[11],
        .auth_clients = (int)CFG(tls_auth_clients),
        .prefer_server_ciphers = (int)CFG(tls_prefer_server_ciphers),
        .session_caching = (int)CFG(tls_session_caching),
        .session_cache_size = CFG(tls_session_cache_size),
        .session_cache_timeout = CFG(tls_session_cache_timeout),
    };
    char why[512];
    struct tls_ctx *ctx = tls_ctx_new(&s, why, sizeof(why));
    for (int i = 0; i < 12; i++) hk_free(f[i]);
    if (!ctx) {
        hk_log(LL_WARNING, "%s", why);
        snprintf(err, errsize, "Unable to update TLS configuration. Check server logs.");
        return 0;
    }
    pthread_mutex_lock(&mu);
    struct tls_ctx *old = cur;
    cur = ctx;
    atomic_fetch_add_explicit(&gen, 1, memory_order_relaxed);
    pthread_mutex_unlock(&mu);
    tls_ctx_unref(old);
    return 1;
}

int tlsconf_ready(void) {
    pthread_mutex_lock(&mu);
    int r = cur != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

struct tls_ctx *tlsconf_worker_ctx(struct worker *w) {
    unsigned g = atomic_load_explicit(&gen, memory_order_relaxed);
    if (w->tls_ctx && g == w->tls_gen) return w->tls_ctx;
    pthread_mutex_lock(&mu);
    struct tls_ctx *old = w->tls_ctx;
    w->tls_ctx = cur;
    if (cur) tls_ctx_ref(cur);
    w->tls_gen = atomic_load_explicit(&gen, memory_order_relaxed);
    pthread_mutex_unlock(&mu);
    tls_ctx_unref(old);
    return w->tls_ctx;
}

void tlsconf_worker_release(struct worker *w) {
    tls_ctx_unref(w->tls_ctx);
    w->tls_ctx = NULL;
}

void tlsconf_shutdown(void) {
    pthread_mutex_lock(&mu);
    struct tls_ctx *old = cur;
    cur = NULL;
    pthread_mutex_unlock(&mu);
    tls_ctx_unref(old);
}
