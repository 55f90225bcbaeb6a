/* acl.c - ACL users: the rules language, the registry of users, the
 * permission check every command passes, and the ACL file.
 *
 * What it is not: ACL LOG (acl_log.c), the ACL command's replies
 * (src/cmd/acl_cmd.c) and the
 * admission step itself (exec.c calls acl_admit). acl.h explains how a
 * user's permissions are published to the workers. The registry's lock
 * is acl_lock; under it only cfg_lock is taken (reading requirepass), and
 * the disconnect broadcast is posted after it is released. */
#include "acl.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/sha256.h"
#include "../core/util.h"
#include "clientmem.h"
#include "config.h"
#include "creply.h"
#include "pubsub.h"
#include "server.h"
#include "txn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

/* ---- selectors --------------------------------------------------------- */

#define SEL_ALLKEYS (1u << 0)
#define SEL_ALLCHANNELS (1u << 1)
#define SEL_ALLCMDS (1u << 2) /* started from +@all: commands added later are allowed */
#define PERM_R 1u
#define PERM_W 2u

struct acl_pat {
    char *p;
    size_t len;
    unsigned fl; /* PERM_* for key patterns */
};

struct acl_sel {
    unsigned flags;
    uint64_t *bits; /* one bit per command id */
    struct acl_pat *keys;
    int nkeys;
    struct acl_pat *chans;
    int nchans;
    char *rules; /* the command rules after the +@all / -@all base, "" when none */
    /* "+cmd|arg" for a command without subcommands: argv[1] values that
     * let an otherwise refused command run (Redis's first-args). */
    struct firstarg {
        int id;
        char *arg;
    } *fa;
    int nfa;
};

static pthread_mutex_t acl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct acl_ident *registry; /* sorted by name; acl_default_ident is in it */
struct acl_ident acl_default_ident;
static int nwords; /* words of a command bitmap */
static int ready;  /* acl_init ran */
static const struct command *c_publish, *c_spublish, *c_subscribe, *c_ssubscribe, *c_psubscribe;

static const struct {
    uint64_t bit;
    const char *name;
} categories[] = {
    {ACL_KEYSPACE, "keyspace"},     {ACL_READ, "read"},         {ACL_WRITE, "write"},
    {ACL_SET, "set"},               {ACL_SORTEDSET, "sortedset"}, {ACL_LIST, "list"},
    {ACL_HASH, "hash"},             {ACL_STRING, "string"},     {ACL_BITMAP, "bitmap"},
    {ACL_HYPERLOGLOG, "hyperloglog"}, {ACL_GEO, "geo"},         {ACL_STREAM, "stream"},
    {ACL_PUBSUB, "pubsub"},         {ACL_ADMIN, "admin"},       {ACL_FAST, "fast"},
    {ACL_SLOW, "slow"},             {ACL_BLOCKING, "blocking"}, {ACL_DANGEROUS, "dangerous"},
    {ACL_CONNECTION, "connection"}, {ACL_TRANSACTION, "transaction"}, {ACL_SCRIPTING, "scripting"},
    {ACL_VECTORSET, "vectorset"},
};
#define NCATS ((int)(sizeof(categories) / sizeof(categories[0])))

int acl_category_count(void) { return NCATS; }
const char *acl_category_name(int i) { return categories[i].name; }
uint64_t acl_category_bit(int i) { return categories[i].bit; }
int acl_category_by_name(const char *name, size_t len, uint64_t *bit) {
    for (int i = 0; i < NCATS; i++)
        if (strlen(categories[i].name) == len && !strncasecmp(categories[i].name, name, len)) {
            *bit = categories[i].bit;
            return 1;
        }
    return 0;
}

static unsigned default_channel_flag(void) { return CFG(acl_pubsub_default) ? SEL_ALLCHANNELS : 0; }

static struct acl_sel sel_new(unsigned flags) {
    struct acl_sel s = {0};
    s.flags = flags;
    s.bits = hk_calloc((size_t)nwords, sizeof(uint64_t));
    s.rules = hk_strdup("");
    return s;
}

static void pats_free(struct acl_pat *p, int n) {
    for (int i = 0; i < n; i++) hk_free(p[i].p);
    hk_free(p);
}

static struct acl_pat *pats_dup(const struct acl_pat *p, int n) {
    if (!n) return NULL;
    struct acl_pat *q = hk_malloc((size_t)n * sizeof(*q));
    for (int i = 0; i < n; i++) {
        q[i] = p[i];
        q[i].p = hk_strndup(p[i].p, p[i].len);
    }
    return q;
}

static void fa_reset(struct acl_sel *s, int id) {
    int j = 0;
    for (int i = 0; i < s->nfa; i++) {
        if (id < 0 || s->fa[i].id == id) hk_free(s->fa[i].arg);
        else s->fa[j++] = s->fa[i];
    }
    s->nfa = j;
}

static void sel_free(struct acl_sel *s) {
    fa_reset(s, -1);
    hk_free(s->fa);
    hk_free(s->bits);
    pats_free(s->keys, s->nkeys);
    pats_free(s->chans, s->nchans);
    hk_free(s->rules);
}

static struct acl_sel sel_dup(const struct acl_sel *s) {
    struct acl_sel d = *s;
    d.bits = hk_malloc((size_t)nwords * sizeof(uint64_t));
    memcpy(d.bits, s->bits, (size_t)nwords * sizeof(uint64_t));
    d.keys = pats_dup(s->keys, s->nkeys);
    d.chans = pats_dup(s->chans, s->nchans);
    d.rules = hk_strdup(s->rules);
    d.fa = s->nfa ? hk_malloc((size_t)s->nfa * sizeof(*d.fa)) : NULL;
    for (int i = 0; i < s->nfa; i++) d.fa[i] = (struct firstarg){s->fa[i].id, hk_strdup(s->fa[i].arg)};
    return d;
}

static void bit_set(struct acl_sel *s, int id, int on) {
    if (on) s->bits[id / 64] |= 1ULL << (id % 64);
    else s->bits[id / 64] &= ~(1ULL << (id % 64));
}
static int bit_get(const struct acl_sel *s, int id) { return (s->bits[id / 64] >> (id % 64)) & 1; }

static int sel_all_bits(const struct acl_sel *s) {
    int n = commands_total();
    for (int i = 0; i < n; i++)
        if (!bit_get(s, i)) return 0;
    return 1;
}

/* Drop the earlier occurrences of a rule on the same command, subcommand
 * or category ("+x" or "-x"), and of a command's subcommand rules when
 * the rule names the whole command; then append the new one. */
static void rules_update(struct acl_sel *s, const char *rule) {
    const char *name = rule + 1;
    size_t nlen = strlen(name);
    int whole_cmd = name[0] != '@' && !strchr(name, '|');
    struct hk_buf out = {0};
    const char *p = s->rules;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *e = strchr(p, ' ');
        size_t tl = e ? (size_t)(e - p) : strlen(p);
        const char *tn = p + 1;
        size_t tnl = tl - 1;
        int drop = (tnl == nlen && !strncasecmp(tn, name, nlen)) ||
                   (whole_cmd && tnl > nlen && tn[nlen] == '|' && !strncasecmp(tn, name, nlen));
        if (!drop) {
            if (out.len) hk_buf_add(&out, " ", 1, 64);
            hk_buf_add(&out, p, tl, 64);
        }
        p += tl;
    }
    if (out.len) hk_buf_add(&out, " ", 1, 64);
    hk_buf_add(&out, rule, strlen(rule), 64);
    hk_buf_add(&out, "", 1, 64);
    for (char *q = out.p; *q; q++)
        if (*q >= 'A' && *q <= 'Z') *q = (char)(*q - 'A' + 'a');
    hk_free(s->rules);
    s->rules = out.p;
}

static void set_cmd_bits(struct acl_sel *s, const struct command *cmd, int on) {
    bit_set(s, cmd->id, on);
    fa_reset(s, cmd->id);
    for (int i = 0; i < cmd->nsubs; i++) bit_set(s, cmd->subs[i]->id, on);
}

static int has_space(const char *p, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r' || p[i] == '\0') return 1;
    return 0;
}

#define E_SYNTAX "Syntax error"
#define E_UNKNOWN "Unknown command or category name in ACL"

/* Apply one selector rule. Returns NULL, or the error text. */
static const char *sel_apply(struct acl_sel *s, const char *op, size_t len) {
    if ((len == 7 && !strncasecmp(op, "allkeys", 7)) || (len == 2 && !memcmp(op, "~*", 2))) {
        s->flags |= SEL_ALLKEYS;
        pats_free(s->keys, s->nkeys);
        s->keys = NULL;
        s->nkeys = 0;
        return NULL;
    }
    if (len == 9 && !strncasecmp(op, "resetkeys", 9)) {
        s->flags &= ~SEL_ALLKEYS;
        pats_free(s->keys, s->nkeys);
        s->keys = NULL;
        s->nkeys = 0;
        return NULL;
    }
    if ((len == 11 && !strncasecmp(op, "allchannels", 11)) || (len == 2 && !memcmp(op, "&*", 2))) {
        s->flags |= SEL_ALLCHANNELS;
        pats_free(s->chans, s->nchans);
        s->chans = NULL;
        s->nchans = 0;
        return NULL;
    }
    if (len == 13 && !strncasecmp(op, "resetchannels", 13)) {
        s->flags &= ~SEL_ALLCHANNELS;
        pats_free(s->chans, s->nchans);
        s->chans = NULL;
        s->nchans = 0;
        return NULL;
    }
    if ((len == 11 && !strncasecmp(op, "allcommands", 11)) || (len == 5 && !strncasecmp(op, "+@all", 5))) {
        memset(s->bits, 0xff, (size_t)nwords * sizeof(uint64_t));
        s->flags |= SEL_ALLCMDS;
        s->rules[0] = '\0';
        fa_reset(s, -1);
        return NULL;
    }
    if ((len == 10 && !strncasecmp(op, "nocommands", 10)) || (len == 5 && !strncasecmp(op, "-@all", 5))) {
        memset(s->bits, 0, (size_t)nwords * sizeof(uint64_t));
        s->flags &= ~SEL_ALLCMDS;
        s->rules[0] = '\0';
        fa_reset(s, -1);
        return NULL;
    }
    if (op[0] == '~' || op[0] == '%') {
        if (s->flags & SEL_ALLKEYS)
            return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
                   "effect. Try 'resetkeys' to start with an empty list of patterns";
        unsigned fl = 0;
        size_t off = 1;
        if (op[0] == '%') {
            for (; off < len; off++) {
                if ((op[off] == 'R' || op[off] == 'r') && !(fl & PERM_R)) fl |= PERM_R;
                else if ((op[off] == 'W' || op[off] == 'w') && !(fl & PERM_W)) fl |= PERM_W;
                else if (op[off] == '~') {
                    off++;
                    break;
                } else return E_SYNTAX;
            }
        } else {
            fl = PERM_R | PERM_W;
        }
        const char *pat = op + off;
        size_t plen = len - off;
        if (has_space(pat, plen)) return E_SYNTAX;
        for (int k = 0; k < s->nkeys; k++)
            if (s->keys[k].len == plen && !memcmp(s->keys[k].p, pat, plen)) {
                s->keys[k].fl |= fl;
                return NULL;
            }
        s->keys = hk_realloc(s->keys, (size_t)(s->nkeys + 1) * sizeof(*s->keys));
        s->keys[s->nkeys++] = (struct acl_pat){hk_strndup(pat, plen), plen, fl};
        return NULL;
    }
    if (op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS)
            return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have "
                   "any effect. Try 'resetchannels' to start with an empty list of channels";
        const char *pat = op + 1;
        size_t plen = len - 1;
        if (has_space(pat, plen)) return E_SYNTAX;
        for (int k = 0; k < s->nchans; k++)
            if (s->chans[k].len == plen && !memcmp(s->chans[k].p, pat, plen)) return NULL;
        s->chans = hk_realloc(s->chans, (size_t)(s->nchans + 1) * sizeof(*s->chans));
        s->chans[s->nchans++] = (struct acl_pat){hk_strndup(pat, plen), plen, 0};
        return NULL;
    }
    if ((op[0] == '+' || op[0] == '-') && len > 1) {
        int on = op[0] == '+';
        char rule[256];
        if (len >= sizeof(rule)) return E_UNKNOWN;
        memcpy(rule, op, len);
        rule[len] = '\0';
        if (op[1] == '@') {
            uint64_t bit;
            if (!acl_category_by_name(op + 2, len - 2, &bit)) return E_UNKNOWN;
            int n = commands_total();
            for (int id = 0; id < n; id++) {
                const struct command *c = command_by_id(id);
                if (c && (c->acl & bit)) {
                    bit_set(s, id, on);
                    fa_reset(s, id);
                }
            }
            if (!on) s->flags &= ~SEL_ALLCMDS;
            rules_update(s, rule);
            return NULL;
        }
        const char *bar = memchr(op + 1, '|', len - 1);
        struct command *cmd;
        if (bar) {
            /* The last '|' splits: "config|get", "select|0" (a first
             * argument, only to allow), "config|get|x" (refused). */
            const char *last = op + len - 1;
            while (*last != '|') last--;
            const char *sub = last + 1;
            size_t sublen = len - (size_t)(sub - op);
            struct command *parent = cmd_lookup(op + 1, (size_t)(bar - op - 1));
            if (!on) {
                if (!parent || !parent->nsubs || last != bar) return E_UNKNOWN;
                cmd = cmd_lookup_sub(parent, sub, sublen);
                if (!cmd) return E_UNKNOWN;
            } else if (last != bar) {
                struct command *mid = parent && parent->nsubs ? cmd_lookup_sub(parent, bar + 1, (size_t)(last - bar - 1))
                                                              : NULL;
                return mid ? "Allowing first-arg of a subcommand is not supported" : E_UNKNOWN;
            } else if (!parent) {
                return E_UNKNOWN;
            } else if (!sublen) {
                return E_SYNTAX;
            } else if (parent->nsubs) {
                cmd = cmd_lookup_sub(parent, sub, sublen);
                if (!cmd) return E_UNKNOWN;
            } else {
                for (int k = 0; k < s->nfa; k++)
                    if (s->fa[k].id == parent->id && strlen(s->fa[k].arg) == sublen &&
                        !strncasecmp(s->fa[k].arg, sub, sublen)) {
                        rules_update(s, rule);
                        return NULL;
                    }
                s->fa = hk_realloc(s->fa, (size_t)(s->nfa + 1) * sizeof(*s->fa));
                s->fa[s->nfa++] = (struct firstarg){parent->id, hk_strndup(sub, sublen)};
                rules_update(s, rule);
                return NULL;
            }
        } else {
            cmd = cmd_lookup(op + 1, len - 1);
            if (!cmd) return E_UNKNOWN;
        }
        set_cmd_bits(s, cmd, on);
        if (!on) s->flags &= ~SEL_ALLCMDS;
        rules_update(s, rule);
        return NULL;
    }
    return E_SYNTAX;
}

/* ---- users ------------------------------------------------------------- */

static struct acl_user *user_new(const char *name, size_t len) {
    struct acl_user *u = hk_calloc(1, sizeof(*u));
    atomic_init(&u->refs, 1);
    u->name = hk_strndup(name, len);
    u->nsels = 1;
    u->sels = hk_malloc(sizeof(struct acl_sel));
    u->sels[0] = sel_new(default_channel_flag());
    return u;
}

static void user_free(struct acl_user *u) {
    for (int i = 0; i < u->nsels; i++) sel_free(&u->sels[i]);
    hk_free(u->sels);
    hk_free(u->pw);
    hk_free(u->name);
    hk_free(u);
}

void acl_user_release(struct acl_user *u) {
    if (u && atomic_fetch_sub_explicit(&u->refs, 1, memory_order_acq_rel) == 1) user_free(u);
}

static struct acl_user *user_dup(const struct acl_user *s) {
    struct acl_user *u = hk_calloc(1, sizeof(*u));
    atomic_init(&u->refs, 1);
    u->name = hk_strdup(s->name);
    u->flags = s->flags & ~USER_ALLPERM;
    u->npw = s->npw;
    if (s->npw) {
        u->pw = hk_malloc((size_t)s->npw * 65);
        memcpy(u->pw, s->pw, (size_t)s->npw * 65);
    }
    u->nsels = s->nsels;
    u->sels = hk_malloc((size_t)s->nsels * sizeof(struct acl_sel));
    for (int i = 0; i < s->nsels; i++) u->sels[i] = sel_dup(&s->sels[i]);
    return u;
}

/* Derived flags, once the rules are final (before publication). */
static void user_seal(struct acl_user *u) {
    const struct acl_sel *r = &u->sels[0];
    u->flags &= ~USER_ALLPERM;
    if ((r->flags & SEL_ALLKEYS) && (r->flags & SEL_ALLCHANNELS) && sel_all_bits(r)) u->flags |= USER_ALLPERM;
}

static int is_hash(const char *p, size_t len) {
    if (len != 64) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static void pw_add(struct acl_user *u, const char *h) {
    for (int i = 0; i < u->npw; i++)
        if (!memcmp(u->pw[i], h, 64)) return;
    u->pw = hk_realloc(u->pw, (size_t)(u->npw + 1) * 65);
    memcpy(u->pw[u->npw++], h, 65);
}

static int pw_del(struct acl_user *u, const char *h) {
    for (int i = 0; i < u->npw; i++)
        if (!memcmp(u->pw[i], h, 64)) {
            memmove(u->pw[i], u->pw[i + 1], (size_t)(u->npw - i - 1) * 65);
            u->npw--;
            return 1;
        }
    return 0;
}

static void clear_selectors(struct acl_user *u) {
    for (int i = 1; i < u->nsels; i++) sel_free(&u->sels[i]);
    u->nsels = 1;
}

static const char *user_apply(struct acl_user *u, const char *op, size_t len);

/* "(rule rule ...)": a new selector. */
static const char *user_add_selector(struct acl_user *u, const char *op, size_t len) {
    struct acl_sel s = sel_new(default_channel_flag());
    const char *p = op + 1, *end = op + len - 1;
    while (p < end) {
        while (p < end && *p == ' ') p++;
        if (p >= end) break;
        const char *q = p;
        while (q < end && *q != ' ') q++;
        const char *e = sel_apply(&s, p, (size_t)(q - p));
        if (e) {
            sel_free(&s);
            return e;
        }
        p = q;
    }
    u->sels = hk_realloc(u->sels, (size_t)(u->nsels + 1) * sizeof(struct acl_sel));
    u->sels[u->nsels++] = s;
    return NULL;
}

static const char *user_apply(struct acl_user *u, const char *op, size_t len) {
    if (len == 0) return NULL;
    if (len == 2 && !strncasecmp(op, "on", 2)) u->flags |= USER_ON;
    else if (len == 3 && !strncasecmp(op, "off", 3)) u->flags &= ~USER_ON;
    else if (len == 16 && !strncasecmp(op, "sanitize-payload", 16)) {
        u->flags &= ~USER_SKIP_SANITIZE;
        u->flags |= USER_SANITIZE;
    } else if (len == 21 && !strncasecmp(op, "skip-sanitize-payload", 21)) {
        u->flags &= ~USER_SANITIZE;
        u->flags |= USER_SKIP_SANITIZE;
    } else if (len == 6 && !strncasecmp(op, "nopass", 6)) {
        u->flags |= USER_NOPASS;
        u->npw = 0;
    } else if (len == 9 && !strncasecmp(op, "resetpass", 9)) {
        u->flags &= ~USER_NOPASS;
        u->npw = 0;
    } else if (op[0] == '>' || op[0] == '<') {
        char h[65];
        sha256_hex(op + 1, len - 1, h);
        if (op[0] == '>') {
            pw_add(u, h);
            u->flags &= ~USER_NOPASS;
        } else if (!pw_del(u, h)) {
            return "The password you are trying to remove from the user does not exist";
        }
    } else if (op[0] == '#' || op[0] == '!') {
        if (!is_hash(op + 1, len - 1))
            return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
        char h[65];
        memcpy(h, op + 1, 64);
        h[64] = '\0';
        if (op[0] == '#') {
            pw_add(u, h);
            u->flags &= ~USER_NOPASS;
        } else if (!pw_del(u, h)) {
            return "The password you are trying to remove from the user does not exist";
        }
    } else if (len == 14 && !strncasecmp(op, "clearselectors", 14)) {
        clear_selectors(u);
    } else if (len == 5 && !strncasecmp(op, "reset", 5)) {
        user_apply(u, "resetpass", 9);
        sel_apply(&u->sels[0], "resetkeys", 9);
        sel_apply(&u->sels[0], "resetchannels", 13);
        if (default_channel_flag()) sel_apply(&u->sels[0], "allchannels", 11);
        u->flags &= ~(USER_ON | USER_SKIP_SANITIZE);
        u->flags |= USER_SANITIZE;
        clear_selectors(u);
        sel_apply(&u->sels[0], "-@all", 5);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        return user_add_selector(u, op, len);
    } else {
        return sel_apply(&u->sels[0], op, len);
    }
    return NULL;
}

/* SETUSER arguments with selectors split over several ("(+get", "~x)")
 * joined back. Returns the count, or -1 with the unmatched one in *bad. */
static int merge_args(const hk_slice *in, int n, char ***out, int *bad) {
    char **v = hk_malloc((size_t)(n ? n : 1) * sizeof(char *));
    int m = 0;
    for (int i = 0; i < n; i++) {
        const hk_slice *a = &in[i];
        if (a->len && a->ptr[0] == '(' && a->ptr[a->len - 1] != ')') {
            struct hk_buf b = {0};
            int j = i;
            for (; j < n; j++) {
                if (j > i) hk_buf_add(&b, " ", 1, 64);
                hk_buf_add(&b, in[j].ptr, in[j].len, 64);
                if (in[j].len && in[j].ptr[in[j].len - 1] == ')') break;
            }
            if (j == n) {
                hk_free(b.p);
                for (int k = 0; k < m; k++) hk_free(v[k]);
                hk_free(v);
                *bad = i;
                return -1;
            }
            hk_buf_add(&b, "", 1, 64);
            v[m++] = b.p;
            i = j;
        } else {
            v[m++] = hk_strndup(a->ptr, a->len);
        }
    }
    *out = v;
    return m;
}

/* Apply argument list to u; 1, or 0 with Redis's SETUSER text in err. */
static int user_apply_args(struct acl_user *u, const hk_slice *args, int n, char *err, size_t errsize) {
    char **v;
    int bad;
    int m = merge_args(args, n, &v, &bad);
    if (m < 0) {
        snprintf(err, errsize, "Unmatched parenthesis in acl selector starting at '%.*s'.", (int)args[bad].len,
                 args[bad].ptr);
        return 0;
    }
    int ok = 1;
    for (int i = 0; i < m && ok; i++) {
        const char *e = user_apply(u, v[i], strlen(v[i]));
        if (e) {
            snprintf(err, errsize, "Error in ACL SETUSER modifier '%s': %s", v[i], e);
            ok = 0;
        }
    }
    for (int i = 0; i < m; i++) hk_free(v[i]);
    hk_free(v);
    return ok;
}

/* ---- description ------------------------------------------------------- */

static void buf_cat(struct hk_buf *b, const char *s) { hk_buf_add(b, s, strlen(s), 64); }
static void buf_sep(struct hk_buf *b) {
    if (b->len) hk_buf_add(b, " ", 1, 64);
}
static char *buf_done(struct hk_buf *b) {
    hk_buf_add(b, "", 1, 64);
    return b->p;
}

static void desc_keys(struct hk_buf *b, const struct acl_sel *s) {
    if (s->flags & SEL_ALLKEYS) {
        buf_sep(b);
        buf_cat(b, "~*");
        return;
    }
    for (int i = 0; i < s->nkeys; i++) {
        buf_sep(b);
        if (s->keys[i].fl == PERM_R) buf_cat(b, "%R");
        else if (s->keys[i].fl == PERM_W) buf_cat(b, "%W");
        hk_buf_add(b, "~", 1, 64);
        hk_buf_add(b, s->keys[i].p, s->keys[i].len, 64);
    }
}

static void desc_chans(struct hk_buf *b, const struct acl_sel *s, int with_reset) {
    if (s->flags & SEL_ALLCHANNELS) {
        buf_sep(b);
        buf_cat(b, "&*");
        return;
    }
    if (with_reset) {
        buf_sep(b);
        buf_cat(b, "resetchannels");
    }
    for (int i = 0; i < s->nchans; i++) {
        buf_sep(b);
        hk_buf_add(b, "&", 1, 64);
        hk_buf_add(b, s->chans[i].p, s->chans[i].len, 64);
    }
}

static void desc_cmds(struct hk_buf *b, const struct acl_sel *s) {
    buf_sep(b);
    buf_cat(b, (s->flags & SEL_ALLCMDS) ? "+@all" : "-@all");
    if (s->rules[0]) {
        buf_sep(b);
        buf_cat(b, s->rules);
    }
}

char *acl_sel_commands(const struct acl_user *u, int i) {
    struct hk_buf b = {0};
    desc_cmds(&b, &u->sels[i]);
    return buf_done(&b);
}
char *acl_sel_keys(const struct acl_user *u, int i) {
    struct hk_buf b = {0};
    desc_keys(&b, &u->sels[i]);
    return buf_done(&b);
}
char *acl_sel_channels(const struct acl_user *u, int i) {
    struct hk_buf b = {0};
    desc_chans(&b, &u->sels[i], 0);
    return buf_done(&b);
}

int acl_user_flag_names(const struct acl_user *u, const char **names, int max) {
    int n = 0;
    if (n < max) names[n++] = (u->flags & USER_ON) ? "on" : "off";
    if ((u->flags & USER_NOPASS) && n < max) names[n++] = "nopass";
    if ((u->flags & USER_SKIP_SANITIZE) && n < max) names[n++] = "skip-sanitize-payload";
    if ((u->flags & USER_SANITIZE) && n < max) names[n++] = "sanitize-payload";
    return n;
}

static void desc_sel(struct hk_buf *b, const struct acl_sel *s) {
    desc_keys(b, s);
    desc_chans(b, s, 1);
    desc_cmds(b, s);
}

char *acl_describe_user(const struct acl_user *u) {
    struct hk_buf b = {0};
    buf_cat(&b, "user ");
    buf_cat(&b, u->name);
    const char *fl[4];
    int nf = acl_user_flag_names(u, fl, 4);
    for (int i = 0; i < nf; i++) {
        buf_sep(&b);
        buf_cat(&b, fl[i]);
    }
    for (int i = 0; i < u->npw; i++) {
        buf_sep(&b);
        hk_buf_add(&b, "#", 1, 64);
        hk_buf_add(&b, u->pw[i], 64, 64);
    }
    desc_sel(&b, &u->sels[0]);
    for (int i = 1; i < u->nsels; i++) {
        struct hk_buf s = {0};
        desc_sel(&s, &u->sels[i]);
        buf_sep(&b);
        hk_buf_add(&b, "(", 1, 64);
        hk_buf_add(&b, s.p, s.len, 64);
        hk_buf_add(&b, ")", 1, 64);
        hk_free(s.p);
    }
    return buf_done(&b);
}

/* ---- the registry ------------------------------------------------------ */

static struct acl_ident *find_locked(const char *name, size_t len) {
    for (struct acl_ident *i = registry; i; i = i->next)
        if (strlen(i->name) == len && !memcmp(i->name, name, len)) return i;
    return NULL;
}

static void insert_locked(struct acl_ident *id) {
    struct acl_ident **pp = &registry;
    while (*pp && strcmp((*pp)->name, id->name) < 0) pp = &(*pp)->next;
    id->next = *pp;
    *pp = id;
}

static void unlink_locked(struct acl_ident *id) {
    for (struct acl_ident **pp = &registry; *pp; pp = &(*pp)->next)
        if (*pp == id) {
            *pp = id->next;
            return;
        }
}

/* Replace id's snapshot (under acl_lock); the old one is returned for the
 * caller to release outside the lock. */
static struct acl_user *publish_locked(struct acl_ident *id, struct acl_user *u) {
    user_seal(u);
    struct acl_user *old = id->cur;
    id->cur = u;
    atomic_fetch_add_explicit(&id->gen, 1, memory_order_release);
    if (id == &acl_default_ident) {
        /* New connections start authenticated while the default user
         * needs no password; protected mode reads the same flag. */
        atomic_store(&cfg.requirepass_set, !((u->flags & USER_NOPASS) && (u->flags & USER_ON)));
    }
    return old;
}

static void ident_release_locked(struct acl_ident *id) {
    if (id == &acl_default_ident) return;
    if (--id->refs == 0) {
        acl_user_release(id->cur);
        hk_free(id->name);
        hk_free(id);
    }
}

static struct acl_ident *ident_new(struct acl_user *u) {
    struct acl_ident *id = hk_calloc(1, sizeof(*id));
    id->name = hk_strdup(u->name);
    id->refs = 1;
    user_seal(u);
    id->cur = u;
    return id;
}

struct acl_user *acl_user_get(const char *name, size_t len) {
    pthread_mutex_lock(&acl_lock);
    struct acl_ident *id = find_locked(name, len);
    struct acl_user *u = NULL;
    if (id) {
        u = id->cur;
        atomic_fetch_add(&u->refs, 1);
    }
    pthread_mutex_unlock(&acl_lock);
    return u;
}

int acl_user_exists(const char *name, size_t len) {
    pthread_mutex_lock(&acl_lock);
    int r = find_locked(name, len) != NULL;
    pthread_mutex_unlock(&acl_lock);
    return r;
}

struct acl_user **acl_users_all(int *n) {
    pthread_mutex_lock(&acl_lock);
    int cnt = 0;
    for (struct acl_ident *i = registry; i; i = i->next) cnt++;
    struct acl_user **v = hk_malloc((size_t)(cnt ? cnt : 1) * sizeof(*v));
    cnt = 0;
    for (struct acl_ident *i = registry; i; i = i->next) {
        v[cnt] = i->cur;
        atomic_fetch_add(&v[cnt]->refs, 1);
        cnt++;
    }
    pthread_mutex_unlock(&acl_lock);
    *n = cnt;
    return v;
}

int acl_default_nopass(void) {
    pthread_mutex_lock(&acl_lock);
    int r = (acl_default_ident.cur->flags & USER_NOPASS) != 0;
    pthread_mutex_unlock(&acl_lock);
    return r;
}

/* ---- connections ------------------------------------------------------- */

struct acl_user *acl_client_refresh(struct client *c) {
    struct acl_ident *id = c->user ? c->user : &acl_default_ident;
    pthread_mutex_lock(&acl_lock);
    struct acl_user *u = id->cur;
    atomic_fetch_add_explicit(&u->refs, 1, memory_order_relaxed);
    unsigned long g = atomic_load_explicit(&id->gen, memory_order_relaxed);
    pthread_mutex_unlock(&acl_lock);
    acl_user_release(c->acl);
    c->acl = u;
    c->acl_gen = g;
    return u;
}

static void client_set_user(struct client *c, struct acl_ident *id) {
    acl_user_release(c->acl);
    c->acl = NULL;
    pthread_mutex_lock(&acl_lock);
    if (c->user) ident_release_locked(c->user);
    c->user = id == &acl_default_ident ? NULL : id;
    pthread_mutex_unlock(&acl_lock);
}

void acl_client_free(struct client *c) {
    if (c->acl || c->user) client_set_user(c, &acl_default_ident);
}

void acl_client_reset(struct client *c) {
    client_set_user(c, &acl_default_ident);
    struct acl_user *u = acl_client_refresh(c);
    if ((u->flags & USER_NOPASS) && (u->flags & USER_ON)) c->flags |= CLIENT_AUTHENTICATED;
    else c->flags &= ~CLIENT_AUTHENTICATED;
}

const char *acl_client_name(const struct client *c) { return c->user ? c->user->name : "default"; }

static int pw_matches(const struct acl_user *u, const char *pass, size_t plen) {
    if (u->flags & USER_NOPASS) return 1;
    char h[65];
    sha256_hex(pass, plen, h);
    int found = 0;
    for (int i = 0; i < u->npw; i++) {
        unsigned char d = 0;
        for (int j = 0; j < 64; j++) d |= (unsigned char)(u->pw[i][j] ^ h[j]);
        found |= d == 0;
    }
    return found;
}

int acl_authenticate(struct client *c, const char *user, size_t ulen, const char *pass, size_t plen) {
    pthread_mutex_lock(&acl_lock);
    struct acl_ident *id = find_locked(user, ulen);
    int ok = id && (id->cur->flags & USER_ON) && pw_matches(id->cur, pass, plen);
    if (ok && id != &acl_default_ident) id->refs++;
    pthread_mutex_unlock(&acl_lock);
    if (!ok) {
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(ulen > 255 ? 255 : ulen), user);
        acl_log_add(c, ACL_DENIED_AUTH, (c->txn && c->txn->active) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, "auth", 4,
                    name);
        return 0;
    }
    client_set_user(c, id);
    c->flags |= CLIENT_AUTHENTICATED;
    return 1;
}

/* ---- the check --------------------------------------------------------- */

static int chan_allowed(const struct acl_sel *s, const char *ch, size_t len, int is_pattern) {
    for (int i = 0; i < s->nchans; i++) {
        const struct acl_pat *p = &s->chans[i];
        if (is_pattern) {
            if (p->len == len && !memcmp(p->p, ch, len)) return 1;
        } else if (hk_globmatch(p->p, p->len, ch, len, 0)) {
            return 1;
        }
    }
    return 0;
}

static int key_allowed(const struct acl_sel *s, const char *k, size_t len, uint64_t ksflags) {
    unsigned need = 0;
    if (ksflags & KS_ACCESS) need |= PERM_R;
    if (ksflags & (KS_INSERT | KS_DELETE | KS_UPDATE)) need |= PERM_W;
    for (int i = 0; i < s->nkeys; i++) {
        const struct acl_pat *p = &s->keys[i];
        if ((p->fl & need) != need) continue;
        if (hk_globmatch(p->p, p->len, k, len, 0)) return 1;
    }
    return 0;
}

struct keycache {
    int n; /* -2: not computed */
    int *pos;
    uint64_t *fl;
    int pos_inl[32];
    uint64_t fl_inl[32];
};

static int sel_check(const struct acl_sel *s, const struct command *cmd, const hk_slice *argv, int argc,
                     struct keycache *kc, int *errpos) {
    if (!(cmd->flags & CMD_NO_AUTH) && !bit_get(s, cmd->id)) {
        int ok = 0;
        for (int i = 0; i < s->nfa && argc > 1 && !ok; i++)
            ok = s->fa[i].id == cmd->id && strlen(s->fa[i].arg) == argv[1].len &&
                 !strncasecmp(s->fa[i].arg, argv[1].ptr, argv[1].len);
        if (!ok) {
            *errpos = 0;
            return ACL_DENIED_CMD;
        }
    }
    if (!(s->flags & SEL_ALLKEYS) && cmd->nspecs) {
        if (kc->n == -2) {
            size_t cap = command_keys_flags_cap(cmd, argc);
            if (cap > 32) {
                kc->pos = hk_malloc(cap * sizeof(int));
                kc->fl = hk_malloc(cap * sizeof(uint64_t));
            }
            kc->n = command_keys_flags(cmd, argv, argc, kc->pos, kc->fl);
        }
        for (int i = 0; i < kc->n; i++) {
            const hk_slice *k = &argv[kc->pos[i]];
            if (!key_allowed(s, k->ptr, k->len, kc->fl[i])) {
                *errpos = kc->pos[i];
                return ACL_DENIED_KEY;
            }
        }
    }
    if (!(s->flags & SEL_ALLCHANNELS) && (cmd->flags & CMD_PUBSUB)) {
        int from = 0, to = 0, pattern = 0;
        if (cmd == c_publish || cmd == c_spublish) from = to = 1;
        else if (cmd == c_subscribe || cmd == c_ssubscribe) from = 1, to = argc - 1;
        else if (cmd == c_psubscribe) from = 1, to = argc - 1, pattern = 1;
        for (int i = from; from && i <= to && i < argc; i++)
            if (!chan_allowed(s, argv[i].ptr, argv[i].len, pattern)) {
                *errpos = i;
                return ACL_DENIED_CHANNEL;
            }
    }
    return ACL_OK;
}

int acl_check(const struct acl_user *u, const struct command *cmd, const hk_slice *argv, int argc, int *errpos) {
    if (u->flags & USER_ALLPERM) return ACL_OK;
    struct keycache kc;
    kc.n = -2;
    kc.pos = kc.pos_inl;
    kc.fl = kc.fl_inl;
    int best = ACL_OK, best_pos = -1;
    for (int i = 0; i < u->nsels; i++) {
        int pos = 0;
        int r = sel_check(&u->sels[i], cmd, argv, argc, &kc, &pos);
        if (r == ACL_OK) {
            best = ACL_OK;
            break;
        }
        if (r > best || (r == best && pos > best_pos)) {
            best = r;
            best_pos = pos;
        }
    }
    if (kc.pos != kc.pos_inl) {
        hk_free(kc.pos);
        hk_free(kc.fl);
    }
    *errpos = best_pos < 0 ? 0 : best_pos;
    return best;
}

void acl_denied_text(char *buf, size_t size, int res, const char *user, const struct command *cmd,
                     const hk_slice *arg, int verbose) {
    if (res == ACL_DENIED_CMD)
        snprintf(buf, size, "User %s has no permissions to run the '%s' command", user, cmd->fullname);
    else if (res == ACL_DENIED_KEY && verbose)
        snprintf(buf, size, "User %s has no permissions to access the '%.*s' key", user, (int)arg->len, arg->ptr);
    else if (res == ACL_DENIED_KEY) snprintf(buf, size, "No permissions to access a key");
    else if (verbose)
        snprintf(buf, size, "User %s has no permissions to access the '%.*s' channel", user, (int)arg->len,
                 arg->ptr);
    else snprintf(buf, size, "No permissions to access a channel");
}

int acl_admit(struct cmd_ctx *c, int policy) {
    struct client *cl = c->cl ? c->cl : c->acl_of;
    if (!cl) return 1;
    struct acl_ident *id = cl->user ? cl->user : &acl_default_ident;
    struct acl_user *u = acl_client_user(cl, id, cl->acl, cl->acl_gen);
    int pos;
    int r = acl_check(u, c->cmd, c->argv, c->argc, &pos);
    if (r == ACL_OK) return 1;
    int ctx = policy == ADMIT_SCRIPT ? ACL_CTX_LUA : (cl->txn && cl->txn->active) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL;
    if (r == ACL_DENIED_CMD) acl_log_add(cl, r, ctx, c->cmd->fullname, strlen(c->cmd->fullname), u->name);
    else acl_log_add(cl, r, ctx, c->argv[pos].ptr, c->argv[pos].len, u->name);
    char msg[512];
    acl_denied_text(msg, sizeof(msg), r, u->name, c->cmd, &c->argv[pos], 0);
    if (policy == ADMIT_SCRIPT) reply_errorf(c, "ERR ACL failure in script: %s", msg);
    else reply_errorf(c, "NOPERM %s", msg);
    return 0;
}

/* ---- live connections of changed users -------------------------------- */

/* Sent to every worker after a change: the connections of `ids[i]` are
 * closed when `snaps[i]` is NULL (deleted), or when they are subscribed to
 * a channel or pattern snaps[i] no longer allows. */
struct kick {
    int n;
    struct acl_ident **ids;
    struct acl_user **snaps;
};

struct subs_ctx {
    const struct acl_user *u;
    int denied;
};

static void sub_check(int kind, const char *name, size_t len, void *arg) {
    struct subs_ctx *x = arg;
    if (x->denied) return;
    for (int i = 0; i < x->u->nsels; i++) {
        const struct acl_sel *s = &x->u->sels[i];
        if ((s->flags & SEL_ALLCHANNELS) || chan_allowed(s, name, len, kind == PS_PATTERN_KIND)) return;
    }
    x->denied = 1;
}

static void kick_each(struct worker *w, void *arg) {
    struct kick *k = arg;
    for (struct client *c = w->clients; c; c = c->next) {
        if (c->flags & CLIENT_CLOSE_ASAP) continue;
        struct acl_ident *id = c->user ? c->user : &acl_default_ident;
        for (int i = 0; i < k->n; i++) {
            if (k->ids[i] != id) continue;
            int close = !k->snaps[i];
            if (!close && c->ps) {
                struct subs_ctx x = {k->snaps[i], 0};
                pubsub_client_each(c, sub_check, &x);
                close = x.denied;
            }
            if (close) {
                c->flags |= CLIENT_CLOSE_ASAP;
                client_queue_write(c);
            }
            break;
        }
    }
}

static void kick_free(struct kick *k) {
    pthread_mutex_lock(&acl_lock);
    for (int i = 0; i < k->n; i++) ident_release_locked(k->ids[i]);
    pthread_mutex_unlock(&acl_lock);
    for (int i = 0; i < k->n; i++) acl_user_release(k->snaps[i]);
    hk_free(k->ids);
    hk_free(k->snaps);
    hk_free(k);
}

static void kick_done(struct worker *w, void *arg) {
    (void)w;
    struct gather *g = arg;
    kick_free(g->arg);
    hk_free(g);
}

/* Add (id, snap) to a kick (acl_lock held): references taken. */
static void kick_add_locked(struct kick *k, struct acl_ident *id, struct acl_user *snap) {
    k->ids = hk_realloc(k->ids, (size_t)(k->n + 1) * sizeof(*k->ids));
    k->snaps = hk_realloc(k->snaps, (size_t)(k->n + 1) * sizeof(*k->snaps));
    if (id != &acl_default_ident) id->refs++;
    if (snap) atomic_fetch_add(&snap->refs, 1);
    k->ids[k->n] = id;
    k->snaps[k->n] = snap;
    k->n++;
}

static void kick_send(struct kick *k) {
    if (!k->n || !server.workers || !current_worker) {
        kick_free(k);
        return;
    }
    worker_broadcast(kick_each, kick_done, k);
}

/* Whether u allows every channel the old snapshot allowed: no
 * subscription needs checking then. */
static int chans_widened(const struct acl_user *old, const struct acl_user *u) {
    if (u->sels[0].flags & SEL_ALLCHANNELS) return 1;
    if (old->nsels != u->nsels) return 0;
    for (int i = 0; i < u->nsels; i++) {
        const struct acl_sel *a = &old->sels[i], *b = &u->sels[i];
        if ((a->flags & SEL_ALLCHANNELS) != (b->flags & SEL_ALLCHANNELS) || a->nchans > b->nchans) return 0;
        for (int j = 0; j < a->nchans; j++)
            if (a->chans[j].len != b->chans[j].len || memcmp(a->chans[j].p, b->chans[j].p, a->chans[j].len)) return 0;
    }
    return 1;
}

/* ---- SETUSER, DELUSER -------------------------------------------------- */

static int valid_name(const char *p, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t' || p[i] == '\0') return 0;
    return len > 0;
}

int acl_setuser(const hk_slice *args, int nargs, const char *name, size_t nlen, char *err, size_t errsize) {
    if (!valid_name(name, nlen)) {
        snprintf(err, errsize, "Usernames can't contain spaces or null characters");
        return 0;
    }
    pthread_mutex_lock(&acl_lock);
    struct acl_ident *id = find_locked(name, nlen);
    struct acl_user *u = id ? user_dup(id->cur) : user_new(name, nlen);
    if (!user_apply_args(u, args, nargs, err, errsize)) {
        pthread_mutex_unlock(&acl_lock);
        user_free(u);
        return 0;
    }
    struct acl_user *old = NULL;
    struct kick *k = hk_calloc(1, sizeof(*k));
    if (id) {
        int narrowed = !chans_widened(id->cur, u);
        old = publish_locked(id, u);
        if (narrowed) kick_add_locked(k, id, u);
    } else {
        insert_locked(ident_new(u));
    }
    pthread_mutex_unlock(&acl_lock);
    acl_user_release(old);
    kick_send(k);
    return 1;
}

int acl_deluser(const hk_slice *names, int n) {
    for (int i = 0; i < n; i++)
        if (names[i].len == 7 && !memcmp(names[i].ptr, "default", 7)) return -1;
    int deleted = 0;
    struct kick *k = hk_calloc(1, sizeof(*k));
    pthread_mutex_lock(&acl_lock);
    for (int i = 0; i < n; i++) {
        struct acl_ident *id = find_locked(names[i].ptr, names[i].len);
        if (!id) continue;
        unlink_locked(id);
        id->deleted = 1;
        kick_add_locked(k, id, NULL);
        ident_release_locked(id); /* the registry's reference */
        deleted++;
    }
    pthread_mutex_unlock(&acl_lock);
    kick_send(k);
    return deleted;
}

/* ---- configuration, ACL file ------------------------------------------- */

struct pending_line {
    char *source;
    int lineno;
    int argc;
    char **argv;
};
static struct pending_line *pending;
static int npending;

void acl_config_user_line(const char *source, int lineno, int argc, char **argv) {
    pending = hk_realloc(pending, (size_t)(npending + 1) * sizeof(*pending));
    struct pending_line *p = &pending[npending++];
    p->source = hk_strdup(source);
    p->lineno = lineno;
    p->argc = argc;
    p->argv = hk_malloc((size_t)(argc ? argc : 1) * sizeof(char *));
    for (int i = 0; i < argc; i++) p->argv[i] = hk_strdup(argv[i]);
}

static struct acl_user *default_user_fresh(void) {
    struct acl_user *u = user_new("default", 7);
    user_apply(u, "+@all", 5);
    user_apply(u, "~*", 2);
    user_apply(u, "&*", 2);
    user_apply(u, "on", 2);
    user_apply(u, "nopass", 6);
    return u;
}

/* requirepass as the default user's password: "nopass" when empty,
 * else its only password, as Redis does. */
static void apply_requirepass_to(struct acl_user *u) {
    char *pw = cfg_get_string(&cfg.requirepass);
    if (pw[0]) {
        user_apply(u, "resetpass", 9);
        char h[65];
        sha256_hex(pw, strlen(pw), h);
        pw_add(u, h);
    } else {
        user_apply(u, "nopass", 6);
    }
    hk_free(pw);
}

void acl_requirepass_changed(void) {
    if (!ready) return;
    pthread_mutex_lock(&acl_lock);
    struct acl_user *u = user_dup(acl_default_ident.cur);
    apply_requirepass_to(u);
    struct acl_user *old = publish_locked(&acl_default_ident, u);
    pthread_mutex_unlock(&acl_lock);
    acl_user_release(old);
}

/* Split one ACL file line into arguments (as the config file does). */
struct splitv {
    const char *base;
    hk_slice v[512];
    int n;
};
static void split_cb(void *ctx, size_t off, size_t len) {
    struct splitv *s = ctx;
    if (s->n < 512) s->v[s->n++] = (hk_slice){s->base + off, len};
}

/* Parse an ACL file's text into users (each "user name rules..."). On an
 * error returns NULL with Redis's text (all errors, each "file:line: msg. ")
 * in *err. */
static struct acl_user **parse_file(const char *path, char *text, int *nout, char **err) {
    struct hk_buf errs = {0};
    struct acl_user **v = NULL;
    int n = 0, lineno = 0;
    char *p = text;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        lineno++;
        size_t len = strlen(p);
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t')) p[--len] = '\0';
        size_t s = 0;
        while (s < len && (p[s] == ' ' || p[s] == '\t')) s++;
        char line_err[1024];
        line_err[0] = '\0';
        if (s < len && p[s] != '#') {
            struct splitv sv = {.base = p, .n = 0};
            if (!resp_split_line(p, s, len, split_cb, &sv)) {
                snprintf(line_err, sizeof(line_err), "%s:%d: unbalanced quotes in acl line. ", path, lineno);
            } else if (sv.n < 2 || sv.v[0].len != 4 || memcmp(sv.v[0].ptr, "user", 4)) {
                snprintf(line_err, sizeof(line_err), "%s:%d should start with user keyword. ", path, lineno);
            } else if (!valid_name(sv.v[1].ptr, sv.v[1].len)) {
                snprintf(line_err, sizeof(line_err), "'%s:%d: username '%.*s' contains invalid characters. ", path,
                         lineno, (int)sv.v[1].len, sv.v[1].ptr);
            } else {
                int dup = 0;
                for (int i = 0; i < n; i++)
                    if (strlen(v[i]->name) == sv.v[1].len && !memcmp(v[i]->name, sv.v[1].ptr, sv.v[1].len)) dup = 1;
                if (dup) {
                    snprintf(line_err, sizeof(line_err), "%s:%d: Duplicate user '%.*s' found. ", path, lineno,
                             (int)sv.v[1].len, sv.v[1].ptr);
                } else {
                    struct acl_user *u = user_new(sv.v[1].ptr, sv.v[1].len);
                    char e[600];
                    if (!user_apply_args(u, sv.v + 2, sv.n - 2, e, sizeof(e))) {
                        /* The bare reason, as Redis reports it for a file. */
                        const char *why = strstr(e, "': ");
                        snprintf(line_err, sizeof(line_err), "%s:%d: %s. ", path, lineno, why ? why + 3 : e);
                        user_free(u);
                    } else {
                        v = hk_realloc(v, (size_t)(n + 1) * sizeof(*v));
                        v[n++] = u;
                    }
                }
            }
        }
        if (line_err[0]) buf_cat(&errs, line_err);
        p = nl ? nl + 1 : NULL;
    }
    if (errs.len) {
        for (int i = 0; i < n; i++) user_free(v[i]);
        hk_free(v);
        *err = buf_done(&errs);
        return NULL;
    }
    *nout = n;
    *err = NULL;
    return v ? v : hk_malloc(sizeof(*v));
}

static char *read_file(const char *path, char **err) {
    FILE *f = fopen(path, "r");
    if (!f) {
        char e[600];
        snprintf(e, sizeof(e), "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        *err = hk_strdup(e);
        return NULL;
    }
    struct hk_buf b = {0};
    char chunk[4096];
    size_t r;
    while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) hk_buf_add(&b, chunk, r, 4096);
    fclose(f);
    return buf_done(&b);
}

/* Make the parsed users the registry (acl_lock held): users that exist
 * get a new snapshot (their connections follow; those whose channels
 * narrowed, or whose rules changed, are closed), users not in the list
 * are deleted and their connections closed. A list without "default"
 * resets the default user to everything and nopass. */
static void install_locked(struct acl_user **v, int n, struct kick *k, struct acl_user ***olds, int *nolds) {
    int have_default = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i]->name, "default")) have_default = 1;
    if (!have_default) {
        v = hk_realloc(v, (size_t)(n + 1) * sizeof(*v));
        v[n++] = default_user_fresh();
    }
    *olds = hk_malloc((size_t)(n + 1) * sizeof(struct acl_user *));
    *nolds = 0;
    /* Delete the users that are gone. */
    for (struct acl_ident *id = registry, *next; id; id = next) {
        next = id->next;
        int keep = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(v[i]->name, id->name)) keep = 1;
        if (keep || id == &acl_default_ident) continue;
        unlink_locked(id);
        id->deleted = 1;
        kick_add_locked(k, id, NULL);
        ident_release_locked(id);
    }
    for (int i = 0; i < n; i++) {
        struct acl_ident *id = find_locked(v[i]->name, strlen(v[i]->name));
        if (!id) {
            insert_locked(ident_new(v[i]));
            continue;
        }
        char *a = acl_describe_user(id->cur), *b = acl_describe_user(v[i]);
        int changed = strcmp(a, b) != 0;
        hk_free(a);
        hk_free(b);
        struct acl_user *snap = v[i];
        (*olds)[(*nolds)++] = publish_locked(id, snap);
        if (changed && id != &acl_default_ident) kick_add_locked(k, id, NULL);
        else if (changed) kick_add_locked(k, id, snap);
    }
    hk_free(v);
}

int acl_load(char **err) {
    char *path = cfg_get_string(&cfg.aclfile);
    if (!path[0]) {
        hk_free(path);
        *err = hk_strdup("This Redis instance is not configured to use an ACL file. You may want to specify users "
                         "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
                         "configuration file set) in order to store users in the Redis configuration.");
        return 0;
    }
    char *text = read_file(path, err);
    if (!text) {
        hk_free(path);
        return 0;
    }
    int n;
    char *perr;
    struct acl_user **v = parse_file(path, text, &n, &perr);
    hk_free(text);
    hk_free(path);
    if (!v) {
        size_t l = strlen(perr) + 128;
        *err = hk_malloc(l);
        snprintf(*err, l, "%sWARNING: ACL errors detected, no change to the previously active ACL rules was performed",
                 perr);
        hk_free(perr);
        return 0;
    }
    struct kick *k = hk_calloc(1, sizeof(*k));
    struct acl_user **olds;
    int nolds;
    pthread_mutex_lock(&acl_lock);
    install_locked(v, n, k, &olds, &nolds);
    pthread_mutex_unlock(&acl_lock);
    for (int i = 0; i < nolds; i++) acl_user_release(olds[i]);
    hk_free(olds);
    kick_send(k);
    return 1;
}

int acl_save(char *err, size_t errsize) {
    char *path = cfg_get_string(&cfg.aclfile);
    if (!path[0]) {
        hk_free(path);
        snprintf(err, errsize, "This Redis instance is not configured to use an ACL file. You may want to specify "
                               "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have "
                               "a Redis configuration file set) in order to store users in the Redis configuration.");
        return 0;
    }
    int n;
    struct acl_user **v = acl_users_all(&n);
    struct hk_buf b = {0};
    for (int i = 0; i < n; i++) {
        char *d = acl_describe_user(v[i]);
        buf_cat(&b, d);
        hk_buf_add(&b, "\n", 1, 64);
        hk_free(d);
        acl_user_release(v[i]);
    }
    hk_free(v);
    size_t tl = strlen(path) + 32;
    char *tmp = hk_malloc(tl);
    snprintf(tmp, tl, "%s.tmp-%d", path, (int)getpid());
    int ok = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        size_t off = 0;
        while (off < b.len) {
            ssize_t w = write(fd, b.p + off, b.len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        ok = off == b.len && fsync(fd) == 0;
        close(fd);
        if (ok && rename(tmp, path) != 0) ok = 0;
        if (!ok) unlink(tmp);
    }
    if (!ok) snprintf(err, errsize, "There was an error trying to save the ACLs. Please check the server logs for more information");
    if (!ok) hk_log(LL_WARNING, "Saving the ACL file '%s': %s", path, strerror(errno));
    hk_free(tmp);
    hk_free(path);
    hk_free(b.p);
    return ok;
}

void acl_init(void) {
    nwords = (commands_total() + 63) / 64;
    c_publish = cmd_lookup("publish", 7);
    c_spublish = cmd_lookup("spublish", 8);
    c_subscribe = cmd_lookup("subscribe", 9);
    c_ssubscribe = cmd_lookup("ssubscribe", 10);
    c_psubscribe = cmd_lookup("psubscribe", 10);
    struct acl_user *d = default_user_fresh();
    apply_requirepass_to(d);
    acl_default_ident.name = "default";
    acl_default_ident.refs = 1;
    pthread_mutex_lock(&acl_lock);
    publish_locked(&acl_default_ident, d);
    insert_locked(&acl_default_ident);
    pthread_mutex_unlock(&acl_lock);
    ready = 1;
    char *path = cfg_get_string(&cfg.aclfile);
    if (npending && path[0]) {
        fprintf(stderr, "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
                        "path is invalid. This setup is very likely to lead to configuration errors and security "
                        "holes, please define either an ACL file or declare users directly in your redis.conf, but "
                        "not both.\n");
        exit(1);
    }
    for (int i = 0; i < npending; i++) {
        struct pending_line *p = &pending[i];
        hk_slice a[512];
        int n = p->argc < 512 ? p->argc : 512;
        for (int j = 0; j < n; j++) a[j] = (hk_slice){p->argv[j], strlen(p->argv[j])};
        char err[600];
        if (n < 1 || !acl_setuser(a + 1, n - 1, a[0].ptr, a[0].len, err, sizeof(err))) {
            fprintf(stderr, "Error in user declaration '%s' at %s:%d: %s\n", n ? p->argv[0] : "", p->source,
                    p->lineno, n ? err : "missing user name");
            exit(1);
        }
        for (int j = 0; j < p->argc; j++) hk_free(p->argv[j]);
        hk_free(p->argv);
        hk_free(p->source);
    }
    hk_free(pending);
    pending = NULL;
    npending = 0;
    if (path[0]) {
        char *err = NULL;
        if (!acl_load(&err)) {
            fprintf(stderr, "Aborting Redis startup because of ACL errors: %s\n", err);
            exit(1);
        }
    }
    hk_free(path);
}

/* GENPASS's bytes. */
int acl_random_bytes(unsigned char *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            return 0;
        }
        got += (size_t)r;
    }
    return 1;
}
