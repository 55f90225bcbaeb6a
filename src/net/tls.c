/* tls.c - OpenSSL contexts and non-blocking TLS connections; see tls.h.
 *
 * Read-ahead is on: one read(2) takes whatever the socket has (a request
 * and its record header together), not a header and then a body. Bytes
 * OpenSSL holds, decrypted or not, are invisible to the event loop, so the
 * caller reads on while tls_pending says there are any, before it waits
 * again; what remains then is at most a partial record whose rest has not
 * arrived, and its arrival wakes the loop. */
#include "tls.h"

#include <openssl/dh.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct tls_conn {
    SSL *ssl;
};

static int set(const char *s) { return s && s[0]; }

/* The error queue's first entry as text, then the queue is cleared. */
static void err_text(char *buf, size_t size) {
    unsigned long e = ERR_get_error();
    if (e) ERR_error_string_n(e, buf, size);
    else snprintf(buf, size, "unknown error");
    ERR_clear_error();
}

/* The key file's passphrase, handed to OpenSSL while a key loads. */
static int pass_cb(char *buf, int size, int rwflag, void *u) {
    (void)rwflag;
    const char *pass = u;
    if (!pass) return 0;
    size_t n = strlen(pass);
    if (n > (size_t)size) n = (size_t)size;
    memcpy(buf, pass, n);
    return (int)n;
}

/* tls-protocols: a space separated list of TLSv1, TLSv1.1, TLSv1.2 and
 * TLSv1.3 (any case); empty means TLSv1.2 and TLSv1.3, as in Redis.
 * Returns the SSL_OP_NO_* options that exclude the others, or -1. */
static long protocol_options(const char *list) {
    enum { P10 = 1, P11 = 2, P12 = 4, P13 = 8 };
    int want = 0;
    if (set(list)) {
        char copy[256], *save = NULL;
        snprintf(copy, sizeof(copy), "%s", list);
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            if (!strcasecmp(t, "tlsv1")) want |= P10;
            else if (!strcasecmp(t, "tlsv1.1")) want |= P11;
            else if (!strcasecmp(t, "tlsv1.2")) want |= P12;
            else if (!strcasecmp(t, "tlsv1.3")) want |= P13;
            else return -1;
        }
    }
    if (!want) want = P12 | P13;
    long opts = 0;
    if (!(want & P10)) opts |= SSL_OP_NO_TLSv1;
    if (!(want & P11)) opts |= SSL_OP_NO_TLSv1_1;
    if (!(want & P12)) opts |= SSL_OP_NO_TLSv1_2;
    if (!(want & P13)) opts |= SSL_OP_NO_TLSv1_3;
    return opts;
}

/* Load cert and key into ctx and check that they match. */
static int load_pair(SSL_CTX *ctx, const char *cert, const char *key, const char *pass, char *err, size_t errsize) {
    char why[256];
    SSL_CTX_set_default_passwd_cb(ctx, pass_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)pass);
    int ok = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to load certificate: %s: %s", cert, why);
    } else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to load private key: %s: %s", key, why);
    } else if (SSL_CTX_check_private_key(ctx) <= 0) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Private key %s does not match certificate %s: %s", key, cert, why);
    } else {
        ok = 1;
    }
    /* The passphrase is the caller's string: nothing may keep it. */
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    return ok;
}

static int load_dh(SSL_CTX *ctx, const char *file, char *err, size_t errsize) {
    char why[256];
    BIO *bio = BIO_new_file(file, "r");
    if (!bio) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to load %s: %s", file, why);
        return 0;
    }
    EVP_PKEY *pk = PEM_read_bio_Parameters(bio, NULL);
    BIO_free(bio);
    if (!pk) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to load DH params file %s: %s", file, why);
        return 0;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, pk) <= 0) {
        EVP_PKEY_free(pk);
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to load DH params file %s: %s", file, why);
        return 0;
    }
    return 1;
}

struct tls_ctx *tls_ctx_new(const struct tls_settings *s, char *err, size_t errsize) {
    char why[256];
    ERR_clear_error();
    if (!set(s->cert_file)) {
        snprintf(err, errsize, "No tls-cert-file configured!");
        return NULL;
    }
    if (!set(s->key_file)) {
        snprintf(err, errsize, "No tls-key-file configured!");
        return NULL;
    }
    if (s->auth_clients != TLS_AUTH_NO && !set(s->ca_file) && !set(s->ca_dir)) {
        snprintf(err, errsize, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
                               "tls-replication or tls-auth-clients are enabled!");
        return NULL;
    }
    long proto = protocol_options(s->protocols);
    if (proto < 0) {
        snprintf(err, errsize, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
                               "'TLSv1.2' and 'TLSv1.3'.");
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to create TLS context: %s", why);
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_DH_USE |
                                 SSL_OP_NO_RENEGOTIATION | (unsigned long)proto);
    if (s->prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    /* Partial writes: a reply bigger than the socket takes goes out in
     * pieces; moving buffer: the retry may present the same bytes from a
     * buffer that grew meanwhile. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
    SSL_CTX_set_read_ahead(ctx, 1);
    if (s->session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, s->session_cache_size);
        SSL_CTX_set_timeout(ctx, s->session_cache_timeout);
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"hotkv", 5);
    } else {
        /* Only the server's session cache goes, as in Redis: stateless
         * tickets, which need no server state, still resume. */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    int verify = s->auth_clients == TLS_AUTH_YES        ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                 : s->auth_clients == TLS_AUTH_OPTIONAL ? SSL_VERIFY_PEER
                                                        : SSL_VERIFY_NONE;
    SSL_CTX_set_verify(ctx, verify, NULL);
    if (!load_pair(ctx, s->cert_file, s->key_file, s->key_pass, err, errsize)) goto fail;
    if ((set(s->ca_file) || set(s->ca_dir)) &&
        SSL_CTX_load_verify_locations(ctx, set(s->ca_file) ? s->ca_file : NULL, set(s->ca_dir) ? s->ca_dir : NULL) <=
            0) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to configure CA certificate(s) file/directory: %s", why);
        goto fail;
    }
    if (set(s->ca_file)) {
        /* Name the accepted CAs in the certificate request, as clients
         * choosing among several certificates expect. */
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(s->ca_file);
        if (names) SSL_CTX_set_client_CA_list(ctx, names);
        ERR_clear_error();
    }
    if (set(s->dh_file)) {
        if (!load_dh(ctx, s->dh_file, err, errsize)) goto fail;
    } else {
        SSL_CTX_set_dh_auto(ctx, 1);
    }
    if (set(s->ciphers) && !SSL_CTX_set_cipher_list(ctx, s->ciphers)) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to configure ciphers: %s", why);
        goto fail;
    }
    if (set(s->ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, s->ciphersuites)) {
        err_text(why, sizeof(why));
        snprintf(err, errsize, "Failed to configure ciphersuites: %s", why);
        goto fail;
    }
    /* The client certificate is for connections this server makes; it
     * must load like the server's (Redis checks it the same way). */
    if (set(s->client_cert_file)) {
        SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
        if (!cctx) {
            err_text(why, sizeof(why));
            snprintf(err, errsize, "Failed to create TLS context: %s", why);
            goto fail;
        }
        int ok = load_pair(cctx, s->client_cert_file, s->client_key_file ? s->client_key_file : "",
                           s->client_key_pass, err, errsize);
        SSL_CTX_free(cctx);
        if (!ok) goto fail;
    }
    ERR_clear_error();
    return (struct tls_ctx *)ctx;
fail:
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

void tls_ctx_ref(struct tls_ctx *ctx) { SSL_CTX_up_ref((SSL_CTX *)ctx); }
void tls_ctx_unref(struct tls_ctx *ctx) {
    if (ctx) SSL_CTX_free((SSL_CTX *)ctx);
}

struct tls_conn *tls_conn_new(struct tls_ctx *ctx, int fd) {
    SSL *ssl = SSL_new((SSL_CTX *)ctx);
    if (!ssl) {
        ERR_clear_error();
        return NULL;
    }
    if (!SSL_set_fd(ssl, fd)) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    SSL_set_accept_state(ssl);
    struct tls_conn *t = OPENSSL_malloc(sizeof(*t));
    if (!t) {
        SSL_free(ssl);
        return NULL;
    }
    t->ssl = ssl;
    return t;
}

void tls_conn_free(struct tls_conn *t) {
    if (!t) return;
    /* One non-blocking close_notify for a connection that completed its
     * handshake: besides telling the peer, it keeps the session in the
     * cache (OpenSSL drops the session of a connection freed without it).
     * After a fatal error OpenSSL sends nothing and the session goes. */
    if (SSL_is_init_finished(t->ssl)) {
        ERR_clear_error();
        SSL_shutdown(t->ssl);
        ERR_clear_error();
    }
    SSL_free(t->ssl);
    OPENSSL_free(t);
}

/* The result of an SSL call that returned r <= 0, as a TLS_* code. The
 * thread's error queue is left empty for the next call. */
static int outcome(struct tls_conn *t, int r, int reading) {
    int e = SSL_get_error(t->ssl, r);
    switch (e) {
    case SSL_ERROR_WANT_READ: return TLS_WANT_READ;
    case SSL_ERROR_WANT_WRITE: return TLS_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN: return reading ? TLS_CLOSED : TLS_ERROR;
    case SSL_ERROR_SYSCALL:
        /* A peer that went away without close_notify: end of stream. */
        ERR_clear_error();
        return reading ? TLS_CLOSED : TLS_ERROR;
    default: return TLS_ERROR;
    }
}

int tls_handshake(struct tls_conn *t) {
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) return TLS_DONE;
    int o = outcome(t, r, 0);
    return o == TLS_CLOSED ? TLS_ERROR : o;
}

ssize_t tls_read(struct tls_conn *t, void *buf, size_t n) {
    ERR_clear_error();
    if (n > 0x7fffffff) n = 0x7fffffff;
    int r = SSL_read(t->ssl, buf, (int)n);
    if (r > 0) return r;
    return outcome(t, r, 1);
}

ssize_t tls_write(struct tls_conn *t, const void *buf, size_t n) {
    ERR_clear_error();
    if (n > 0x7fffffff) n = 0x7fffffff;
    int r = SSL_write(t->ssl, buf, (int)n);
    if (r > 0) return r;
    return outcome(t, r, 0);
}

size_t tls_pending(struct tls_conn *t) {
    int n = SSL_pending(t->ssl);
    if (n > 0) return (size_t)n;
    /* Raw bytes not decrypted yet: at most a record's plaintext. */
    return SSL_has_pending(t->ssl) ? 16384 : 0;
}

const char *tls_last_error(struct tls_conn *t, char *buf, size_t size) {
    (void)t;
    unsigned long e = ERR_peek_last_error();
    if (e) ERR_error_string_n(e, buf, size);
    else snprintf(buf, size, "%s", "");
    ERR_clear_error();
    return buf;
}
