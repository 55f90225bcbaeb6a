/* tls.h - TLS over a non-blocking socket with OpenSSL: building a server
 * context from settings, and a connection's handshake, reads and writes
 * that never block (they report what the socket must become ready for).
 * Knows nothing of clients, configuration tables or the event loop; the
 * worker decides what to wait for from the codes returned here. */
#ifndef HK_TLS_H
#define HK_TLS_H

#include <stddef.h>
#include <sys/types.h>

enum { TLS_AUTH_NO = 0, TLS_AUTH_YES = 1, TLS_AUTH_OPTIONAL = 2 };

/* What a context is built from (strings NULL or "" when unset). */
struct tls_settings {
    const char *cert_file, *key_file, *key_pass;
    const char *client_cert_file, *client_key_file, *client_key_pass;
    const char *ca_file, *ca_dir, *dh_file;
    const char *protocols, *ciphers, *ciphersuites;
    int auth_clients; /* TLS_AUTH_* */
    int prefer_server_ciphers, session_caching;
    long long session_cache_size, session_cache_timeout;
};

/* A server context: reference counted, shared by any number of threads
 * (OpenSSL's contexts are thread-safe); every connection made from it
 * holds a reference of its own. */
struct tls_ctx;
struct tls_conn;

/* Build a context; NULL with the reason in err (OpenSSL's text) when a
 * file does not load or a value is not accepted. Returns with one
 * reference, the caller's. */
struct tls_ctx *tls_ctx_new(const struct tls_settings *s, char *err, size_t errsize);
void tls_ctx_ref(struct tls_ctx *ctx);
void tls_ctx_unref(struct tls_ctx *ctx);

/* Results of the calls below besides a byte count. */
#define TLS_DONE 1        /* handshake complete */
#define TLS_WANT_READ (-2)  /* retry once the socket is readable */
#define TLS_WANT_WRITE (-3) /* retry once the socket is writable */
#define TLS_ERROR (-1)      /* the connection is unusable: close it */
#define TLS_CLOSED 0        /* the peer closed (reads only) */

/* A server-side connection on fd (not owned: the caller closes it after
 * tls_conn_free). NULL when OpenSSL cannot allocate it. */
struct tls_conn *tls_conn_new(struct tls_ctx *ctx, int fd);
/* Free t, first sending a close_notify (one try) when it is established. */
void tls_conn_free(struct tls_conn *t);
/* One step of the server handshake. */
int tls_handshake(struct tls_conn *t);
/* Up to n plaintext bytes, or TLS_WANT_*, TLS_CLOSED, TLS_ERROR. */
ssize_t tls_read(struct tls_conn *t, void *buf, size_t n);
/* Write up to n bytes (a partial write returns fewer); on TLS_WANT_* the
 * retry must offer at least the same bytes again (they may have moved). */
ssize_t tls_write(struct tls_conn *t, const void *buf, size_t n);
/* Room a read needs for what OpenSSL holds already: the plaintext
 * decrypted and waiting, or a record's worth when it holds bytes not
 * decrypted yet; 0 when it holds nothing (only then may the caller wait
 * for the socket). */
size_t tls_pending(struct tls_conn *t);
/* The last error's text for a log line ("" when none). */
const char *tls_last_error(struct tls_conn *t, char *buf, size_t size);

#endif
