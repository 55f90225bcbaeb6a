/* tlsio.h - hotkv-bench's connection I/O: plain sockets, or TLS (OpenSSL)
 * when --tls is given. A descriptor with no TLS session reads and writes
 * with read(2)/write(2); one with a session goes through OpenSSL, its
 * "would block" answers reported as EAGAIN, as a non-blocking socket's. */
#ifndef HKB_TLSIO_H
#define HKB_TLSIO_H

#include <stddef.h>
#include <sys/types.h>

/* Set up the client context once, before any connection. ca: file to
 * verify the server with (NULL: no verification); cert/key: a client
 * certificate (both or neither). Returns 0, or -1 with err filled. */
int tlsio_init(const char *ca, const char *cert, const char *key, char *err, size_t errsize);
/* Handshake on a connected, still blocking socket (sni: the server name
 * sent, may be NULL). Returns 0, or -1 with err filled. */
int tlsio_connect(int fd, const char *sni, char *err, size_t errsize);
ssize_t tlsio_read(int fd, void *buf, size_t n);
ssize_t tlsio_write(int fd, const void *buf, size_t n);
/* Decrypted bytes a TLS session holds that no readiness event reports. */
int tlsio_pending(int fd);

#endif
