/* tlsconf.h - the server's TLS context: built from the tls-* settings,
 * swapped in whole by CONFIG SET, and handed to each worker for the
 * connections it accepts on the TLS port (docs/tls.md). */
#ifndef HK_TLSCONF_H
#define HK_TLSCONF_H

#include <stddef.h>

struct worker;
struct tls_ctx;

/* Build a context from the settings in force; on success it replaces the
 * current one for new connections (those already made keep theirs). On
 * failure the reason is logged, err holds Redis's CONFIG SET text and the
 * current context stays. Called by main before the workers start and by
 * CONFIG SET (under config_set_lock). */
int tlsconf_reload(char *err, size_t errsize);
/* Whether a context has been built. */
int tlsconf_ready(void);
/* The context worker w makes its next TLS connection from (on w's own
 * thread): its cached reference, refreshed when a newer one was built.
 * NULL when none exists. */
struct tls_ctx *tlsconf_worker_ctx(struct worker *w);
/* Drop w's cached reference (at the worker's exit). */
void tlsconf_worker_release(struct worker *w);
/* Drop the current context (at shutdown, after the workers are joined). */
void tlsconf_shutdown(void);

#endif
