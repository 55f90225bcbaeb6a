/* acl.h - ACL users, their rules, and the permission check.
 *
 * Users as Redis 7 has them: on/off, SHA-256 password hashes or nopass,
 * and selectors (the root one and any number of "(...)" ones), each a
 * bitmap of the command table's ids plus key patterns (with read/write
 * flags) and channel patterns. A command is allowed when one selector
 * allows the command, every key (with the access its key spec implies)
 * and every channel it names.
 *
 * Publication. A user's permissions are an immutable snapshot (struct
 * acl_user), reference-counted. A name (struct acl_ident) points at the
 * current snapshot and has a generation number bumped on every change.
 * Every connection keeps a counted reference to the snapshot it checks
 * against and the generation it took it at; before each command it
 * compares that generation with its name's (one load of a read-mostly
 * word): only after a change does it take acl_lock to pick up the new
 * snapshot. A snapshot is freed when the last connection drops it, so a
 * command never sees one freed under it. A user allowed everything
 * (every command, key and channel: the default user out of the box) is
 * flagged so that admission skips the check entirely. docs/threads.md
 * has the locking; docs/acl.md the behaviour. */
#ifndef HK_ACL_H
#define HK_ACL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "exec.h"

struct client;
struct command;

/* struct acl_user.flags */
#define USER_ON (1u << 0)
#define USER_NOPASS (1u << 1)
#define USER_SANITIZE (1u << 2)      /* sanitize-payload */
#define USER_SKIP_SANITIZE (1u << 3) /* skip-sanitize-payload */
#define USER_ALLPERM (1u << 4)       /* derived: every command, key and channel */

/* Check results, ordered as Redis ranks them when no selector allows a
 * command (the highest is reported). */
enum { ACL_OK = 0, ACL_DENIED_CMD = 1, ACL_DENIED_KEY = 2, ACL_DENIED_AUTH = 3, ACL_DENIED_CHANNEL = 4 };
/* ACL LOG contexts. */
enum { ACL_CTX_TOPLEVEL = 0, ACL_CTX_MULTI, ACL_CTX_LUA };

struct acl_sel;
/* An immutable snapshot of one user's rules. */
struct acl_user {
    _Atomic long refs;
    char *name;
    unsigned flags;
    char (*pw)[65]; /* SHA-256 hex of each password */
    int npw;
    struct acl_sel *sels; /* sels[0] is the root selector */
    int nsels;
};

/* A user's name, stable while anything refers to it. */
struct acl_ident {
    char *name;
    /* Bumped (release) after cur changes; connections compare it (acquire). */
    _Atomic unsigned long gen;
    struct acl_user *cur; /* under acl_lock */
    long refs;            /* under acl_lock: the registry's and each connection's */
    int deleted;          /* under acl_lock */
    struct acl_ident *next;
};

/* The default user's name: connections with c->user == NULL are it. */
extern struct acl_ident acl_default_ident;

/* Start-up, after the command table and the configuration: the default
 * user (requirepass), then the config file's user lines or the aclfile.
 * Exits with a message on an error, as Redis does. */
void acl_init(void);
/* The configuration file's "user" lines, kept until acl_init. */
void acl_config_user_line(const char *source, int lineno, int argc, char **argv);
/* requirepass changed (CONFIG SET, config file). */
void acl_requirepass_changed(void);

/* The snapshot a connection's commands are checked against: its cached
 * one while its user has not changed, else the current one. */
struct acl_user *acl_client_refresh(struct client *c);
static inline struct acl_user *acl_client_user(struct client *c, struct acl_ident *id, struct acl_user *cached,
                                               unsigned long gen) {
    if (cached && atomic_load_explicit(&id->gen, memory_order_acquire) == gen) return cached;
    return acl_client_refresh(c);
}
/* A connection closes: drop its references. */
void acl_client_free(struct client *c);
/* RESET: back to the default user. */
void acl_client_reset(struct client *c);

/* Check cmd with argv against user u. On a refusal *errpos is the argv
 * index of the key or channel that was refused (0 for the command). */
int acl_check(const struct acl_user *u, const struct command *cmd, const hk_slice *argv, int argc, int *errpos);
/* Refusal text without the NOPERM prefix: the terse one clients get
 * (verbose 0) or the one naming the key or channel (ACL DRYRUN). */
void acl_denied_text(char *buf, size_t size, int res, const char *user, const struct command *cmd,
                     const hk_slice *arg, int verbose);
/* Record a refusal in ACL LOG. cl may be NULL. object: the command name,
 * key, channel or "auth". */
void acl_log_add(struct client *cl, int reason, int context, const char *object, size_t olen, const char *user);
/* The admission step's check of the context's connection: replies the
 * refusal (NOPERM, or the script text for ADMIT_SCRIPT), logs it, and
 * returns 0; 1 when allowed. */
int acl_admit(struct cmd_ctx *c, int policy);

/* AUTH and HELLO AUTH: 1 and the connection authenticated as the user,
 * or 0 (logged as an auth failure). */
int acl_authenticate(struct client *c, const char *user, size_t ulen, const char *pass, size_t plen);
/* Whether the default user has nopass (AUTH <password> is then refused). */
int acl_default_nopass(void);

/* The name a connection is authenticated as (CLIENT LIST user=...). */
const char *acl_client_name(const struct client *c);
/* Whether a user of that name exists (CLIENT KILL USER). */
int acl_user_exists(const char *name, size_t len);

/* ---- ACL command support (src/cmd/acl_cmd.c) ------------------------- */

/* Apply SETUSER arguments to a user (created when missing): all or
 * nothing. Returns 1, or 0 with Redis's error text in err. */
int acl_setuser(const hk_slice *args, int nargs, const char *name, size_t nlen, char *err, size_t errsize);
/* Delete users; returns how many existed. The default user cannot be
 * deleted (-1, nothing deleted). */
int acl_deluser(const hk_slice *names, int n);
/* A counted reference to the current snapshot of a user, or NULL. */
struct acl_user *acl_user_get(const char *name, size_t len);
void acl_user_release(struct acl_user *u);
/* All current snapshots, sorted by name (each counted; release them and
 * free the array). */
struct acl_user **acl_users_all(int *n);
/* One user as ACL LIST describes it ("user name on ..."), malloc'ed. */
char *acl_describe_user(const struct acl_user *u);
/* The GETUSER parts: flags, the root selector's or selector i's
 * commands, keys and channels (malloc'ed strings). */
int acl_user_flag_names(const struct acl_user *u, const char **names, int max);
char *acl_sel_commands(const struct acl_user *u, int i);
char *acl_sel_keys(const struct acl_user *u, int i);
char *acl_sel_channels(const struct acl_user *u, int i);
/* Category names in ACL CAT order, and the commands of one (fullnames). */
int acl_category_count(void);
const char *acl_category_name(int i);
uint64_t acl_category_bit(int i);
int acl_category_by_name(const char *name, size_t len, uint64_t *bit);
/* ACL SAVE / ACL LOAD: 1, or 0 with the error text. */
int acl_save(char *err, size_t errsize);
int acl_load(char **err);

/* GENPASS: n random bytes from the kernel; 0 on failure. */
int acl_random_bytes(unsigned char *p, size_t n);

/* ACL LOG */
struct acl_log_view {
    long long count;
    const char *reason, *context;
    char *object, *username, *client_info;
    long long entry_id, created_ms, updated_ms;
};
/* Copy of the newest n entries (n < 0: all); free with acl_log_free. */
int acl_log_get(long n, struct acl_log_view **out);
void acl_log_free(struct acl_log_view *v, int n);
void acl_log_reset(void);
/* Refusals since start (INFO stats acl_access_denied_*): auth, cmd, key,
 * channel. */
void acl_denied_counts(unsigned long long out[4]);

#endif
