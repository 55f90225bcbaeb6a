/* tlsio.c - plain or TLS reads and writes for hotkv-bench; see tlsio.h.
 * Sessions are found by descriptor in a table that only the main thread
 * fills, before the worker threads start; each worker then uses only the
 * sessions of its own connections. */
#include "tlsio.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static SSL_CTX *ctx;
static SSL **by_fd;
static int by_fd_cap;

int tlsio_init(const char *ca, const char *cert, const char *key, char *err, size_t errsize) {
    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) goto fail;
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (ca) {
        if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) goto fail;
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    if (cert && (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
                 SSL_CTX_use_PrivateKey_file(ctx, key ? key : cert, SSL_FILETYPE_PEM) != 1))
        goto fail;
    return 0;
fail:
    snprintf(err, errsize, "%s", ERR_reason_error_string(ERR_get_error()) ?: "TLS setup failed");
    return -1;
}

int tlsio_connect(int fd, const char *sni, char *err, size_t errsize) {
    SSL *ssl = SSL_new(ctx);
    if (!ssl || !SSL_set_fd(ssl, fd)) goto fail;
    if (sni) SSL_set_tlsext_host_name(ssl, sni);
    if (SSL_connect(ssl) != 1) goto fail;
    if (fd >= by_fd_cap) {
        int cap = fd * 2 + 64;
        SSL **n = realloc(by_fd, (size_t)cap * sizeof(*n));
        if (!n) goto fail;
        for (int i = by_fd_cap; i < cap; i++) n[i] = NULL;
        by_fd = n;
        by_fd_cap = cap;
    }
    by_fd[fd] = ssl;
    return 0;
fail:
    snprintf(err, errsize, "%s", ERR_reason_error_string(ERR_get_error()) ?: "handshake failed");
    if (ssl) SSL_free(ssl);
    return -1;
}

static SSL *ssl_of(int fd) { return fd < by_fd_cap ? by_fd[fd] : NULL; }

/* errno for an SSL call that returned r <= 0. */
static ssize_t failed(SSL *ssl, int r) {
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) errno = EAGAIN;
    else if (e == SSL_ERROR_ZERO_RETURN) return 0;
    else if (e != SSL_ERROR_SYSCALL || !errno) errno = EPROTO;
    ERR_clear_error();
    return -1;
}

ssize_t tlsio_read(int fd, void *buf, size_t n) {
    SSL *ssl = ssl_of(fd);
    if (!ssl) return read(fd, buf, n);
    int r = SSL_read(ssl, buf, n > 0x7fffffff ? 0x7fffffff : (int)n);
    return r > 0 ? r : failed(ssl, r);
}

ssize_t tlsio_write(int fd, const void *buf, size_t n) {
    SSL *ssl = ssl_of(fd);
    if (!ssl) return write(fd, buf, n);
    int r = SSL_write(ssl, buf, n > 0x7fffffff ? 0x7fffffff : (int)n);
    if (r > 0) return r;
    /* A write never returns 0 (that would look like progress): the
     * peer's close is an error here. */
    if (failed(ssl, r) == 0) errno = EPIPE;
    return -1;
}

int tlsio_pending(int fd) {
    SSL *ssl = ssl_of(fd);
    return ssl ? SSL_pending(ssl) > 0 : 0;
}
