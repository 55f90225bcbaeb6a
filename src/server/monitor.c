/* monitor.c - the MONITOR feed: every command any worker runs, shown to
 * every client in MONITOR mode as Redis prints it:
 *
 *   +1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"
 *
 * A monitor client is owned by its worker like any client, and other
 * workers never touch it. What they share is a struct monitor per
 * monitoring client: its pending lines, behind monitor_lock. A worker that
 * ran a command formats the line once, appends it to every monitor's
 * pending lines under the lock, and posts one drain mail to a monitor's
 * worker when its pending lines were empty; that worker moves them into
 * the client's output buffer and applies client-output-buffer-limit (a
 * monitor is of the normal class, as in Redis). A feeder refuses to queue
 * past the class's hard limit and marks the monitor for closing, so memory
 * stays bounded even while its worker is busy. Lines of one client's
 * commands are appended by one thread in execution order, so a pipeline
 * shows in order.
 *
 * Lock order: monitor_lock -> mbox_lock (posting the drain mail). No
 * shard lock is held while feeding (dispatch feeds after exec_command). */
#include "observe.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "config.h"
#include "configtab.h"
#include "server.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

struct monitor {
    struct monitor *next;
    struct client *cl; /* the owner worker's only */
    struct worker *w;
    /* Under monitor_lock. */
    struct hk_buf pend;
    int posted;   /* a drain mail is on its way to w */
    int dead;     /* the client left: the drain mail frees this */
    int overflow; /* past the hard output limit: close the client */
};

static pthread_mutex_t monitor_lock = PTHREAD_MUTEX_INITIALIZER;
static struct monitor *monitors;
_Atomic int monitor_count;

/* ---- redaction ---------------------------------------------------------- */

int observe_redacted(const struct command *cmd, const hk_slice *argv, int argc, int i) {
    if (i < 1) return 0;
    if (!cmd->parent && !strcmp(cmd->name, "auth")) return argc <= 3;
    /* ACL SETUSER: the user name and every rule (passwords among them). */
    if (cmd->parent && !strcmp(cmd->fullname, "acl|setuser")) return i >= 2;
    if (cmd->parent && !strcmp(cmd->fullname, "config|set")) {
        /* The value of every sensitive setting (requirepass...), whatever
         * happens to the rest of the command. */
        if (argc < 4 || (argc & 1) || i < 3 || !(i & 1)) return 0;
        const struct cfg_entry *e = cfg_find(argv[i - 1].ptr, argv[i - 1].len);
        return e && (e->flags & CFG_SENSITIVE);
    }
    if (!cmd->parent && !strcmp(cmd->name, "migrate")) {
        /* AUTH's password, AUTH2's user name and password (before KEYS). */
        for (int j = 6; j < argc; j++) {
            if (hk_eqi(argv[j].ptr, argv[j].len, "auth") && j + 1 < argc) {
                if (i == j + 1) return 1;
                j++;
            } else if (hk_eqi(argv[j].ptr, argv[j].len, "auth2") && j + 2 < argc) {
                if (i == j + 1 || i == j + 2) return 1;
                j += 2;
            } else if (hk_eqi(argv[j].ptr, argv[j].len, "keys")) {
                break;
            }
        }
        return 0;
    }
    if (!cmd->parent && !strcmp(cmd->name, "hello")) {
        /* Only once HELLO got as far as reading its options. */
        long long ver;
        if (argc < 2 || !hk_str2ll(argv[1].ptr, argv[1].len, &ver) || ver < 2 || ver > 3) return 0;
        for (int j = 2; j < argc; j++) {
            int more = argc - 1 - j;
            if (hk_eqi(argv[j].ptr, argv[j].len, "auth") && more >= 2) {
                if (i == j + 1 || i == j + 2) return 1;
                j += 2;
            } else if (hk_eqi(argv[j].ptr, argv[j].len, "setname") && more >= 1) {
                j++;
            } else {
                break;
            }
        }
    }
    return 0;
}

/* ---- attaching ---------------------------------------------------------- */

void monitor_attach(struct client *c) {
    struct monitor *m = hk_calloc(1, sizeof(*m));
    m->cl = c;
    m->w = c->w;
    pthread_mutex_lock(&monitor_lock);
    m->next = monitors;
    monitors = m;
    pthread_mutex_unlock(&monitor_lock);
    atomic_fetch_add(&monitor_count, 1);
    c->monitor = m;
    c->flags |= CLIENT_MONITOR;
}

void monitor_detach(struct client *c) {
    struct monitor *m = c->monitor;
    if (!m) return;
    pthread_mutex_lock(&monitor_lock);
    for (struct monitor **p = &monitors; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    int posted = m->posted;
    if (posted) m->dead = 1;
    pthread_mutex_unlock(&monitor_lock);
    if (!posted) {
        hk_free(m->pend.p);
        hk_free(m);
    }
    atomic_fetch_sub(&monitor_count, 1);
    c->monitor = NULL;
    c->flags &= ~CLIENT_MONITOR;
}

/* On the monitor's worker: move its pending lines to its output. */
static void drain_mail(struct worker *w, void *arg) {
    struct monitor *m = arg;
    pthread_mutex_lock(&monitor_lock);
    m->posted = 0;
    int dead = m->dead, overflow = m->overflow;
    struct hk_buf b = m->pend;
    m->pend = (struct hk_buf){0};
    pthread_mutex_unlock(&monitor_lock);
    if (dead) {
        hk_free(b.p);
        hk_free(m);
        return;
    }
    struct client *c = m->cl;
    if (!(c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP))) {
        if (overflow) {
            hk_log(LL_WARNING,
                   "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
                   (unsigned long long)c->id, c->addr);
            stat_add(&w->stats.client_outbuf_limit_disconnections, 1);
            client_close(c);
        } else if (b.len) {
            ob_append(&c->out, b.p, b.len);
            client_check_output_limits(c);
            if (c->flags & CLIENT_CLOSE_ASAP) client_close(c);
            else client_queue_write(c);
        }
    }
    hk_free(b.p);
}

/* ---- feeding -------------------------------------------------------------- */

static void buf_cat(struct hk_buf *b, const void *p, size_t n) { hk_buf_add(b, p, n, 256); }

/* An argument quoted as Redis's sdscatrepr quotes it. */
static void buf_repr(struct hk_buf *b, const char *p, size_t len) {
    buf_cat(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        char esc[8];
        switch (ch) {
        case '\\': buf_cat(b, "\\\\", 2); break;
        case '"': buf_cat(b, "\\\"", 2); break;
        case '\n': buf_cat(b, "\\n", 2); break;
        case '\r': buf_cat(b, "\\r", 2); break;
        case '\t': buf_cat(b, "\\t", 2); break;
        case '\a': buf_cat(b, "\\a", 2); break;
        case '\b': buf_cat(b, "\\b", 2); break;
        default:
            if (ch >= 0x20 && ch < 0x7f) {
                buf_cat(b, &p[i], 1);
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", ch);
                buf_cat(b, esc, 4);
            }
        }
    }
    buf_cat(b, "\"", 1);
}

void monitor_feed(struct client *c, const struct command *cmd, const hk_slice *argv, int argc, int db) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    char head[320];
    int n;
    if (!c) {
        /* A command a script ran: Redis names its source "lua". */
        n = snprintf(head, sizeof(head), "+%ld.%06ld [%d lua] ", (long)tv.tv_sec, (long)tv.tv_usec, db);
    } else if (c->flags & CLIENT_UNIX_SOCKET) {
        /* addr is "<path>:0" for a unix socket; Redis prints unix:<path>. */
        size_t al = strlen(c->addr);
        if (al >= 2 && !strcmp(c->addr + al - 2, ":0")) al -= 2;
        n = snprintf(head, sizeof(head), "+%ld.%06ld [%d unix:%.*s] ", (long)tv.tv_sec, (long)tv.tv_usec, db,
                     (int)al, c->addr);
    } else {
        n = snprintf(head, sizeof(head), "+%ld.%06ld [%d %s] ", (long)tv.tv_sec, (long)tv.tv_usec, db, c->addr);
    }
    struct hk_buf line = {0};
    buf_cat(&line, head, (size_t)n);
    for (int j = 0; j < argc; j++) {
        if (observe_redacted(cmd, argv, argc, j)) buf_repr(&line, "(redacted)", 10);
        else buf_repr(&line, argv[j].ptr, argv[j].len);
        if (j != argc - 1) buf_cat(&line, " ", 1);
    }
    buf_cat(&line, "\r\n", 2);
    long long hard = CFG(obl[OBL_NORMAL][0]);
    pthread_mutex_lock(&monitor_lock);
    for (struct monitor *m = monitors; m; m = m->next) {
        if (m->overflow) continue;
        if (hard && (long long)(m->pend.len + line.len) > hard) {
            m->overflow = 1;
            hk_free(m->pend.p);
            m->pend = (struct hk_buf){0};
        } else {
            hk_buf_add(&m->pend, line.p, line.len, 4096);
        }
        if (!m->posted) {
            m->posted = 1;
            worker_post(m->w, drain_mail, m);
        }
    }
    pthread_mutex_unlock(&monitor_lock);
    hk_free(line.p);
}
