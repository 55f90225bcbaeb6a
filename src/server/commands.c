/* commands.c - the command table: built at start-up from rows it is
 * handed, then only read.
 *
 * The rows come from the .def files of src/cmd/, the only place a command
 * is described; src/app/cmdtable.c turns them into arrays and passes them
 * to commands_init, so this file knows no handler and no row. It links
 * subcommands to their containers, numbers the commands for the
 * statistics arrays, writes the "parent|child" full names, adds the ACL
 * categories implied by flags (as Redis derives them), attaches key specs
 * (the listed ones, or derived from the row), the COMMAND DOCS rows
 * (cmddocs.c), and builds a case-insensitive name index. */
#include "../core/alloc.h"
#include "../core/hash.h"
#include "server.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_SIZE 1024

static struct command_rows rows;
static struct command *index_tab[INDEX_SIZE];
static struct command **by_id; /* indexed by id */
static int ntotal;              /* ids given: commands and subcommands */

static uint64_t derive_acl(const struct command *c) {
    uint64_t a = c->acl;
    if (c->flags & CMD_WRITE) a |= ACL_WRITE;
    /* Scripts are not @read, read-only or not (Redis's rule). */
    if ((c->flags & CMD_READONLY) && !(a & ACL_SCRIPTING)) a |= ACL_READ;
    if (c->flags & CMD_ADMIN) a |= ACL_ADMIN | ACL_DANGEROUS;
    if (c->flags & CMD_PUBSUB) a |= ACL_PUBSUB;
    if (c->flags & CMD_FAST) a |= ACL_FAST;
    if (c->flags & CMD_BLOCKING) a |= ACL_BLOCKING;
    if (!(a & ACL_FAST)) a |= ACL_SLOW;
    return a;
}

static unsigned char key_kind(const struct command *c) {
    if (c->flags & CMD_ALL_SHARDS) return KEYS_ALL;
    if (c->flags & CMD_SHARDWISE) return KEYS_NONE;
    /* The one-key shape the execution core resolves without a loop. */
    if (!c->getkeys && !c->numkeys_at && c->first > 0 && c->last == c->first) return KEYS_SINGLE;
    if (c->first > 0 || c->numkeys_at || c->getkeys) return KEYS_SPEC;
    return KEYS_NONE;
}

/* The specs a row's key columns describe: a range from first_key and a
 * keynum spec at numkeys, both with the row's KS_* flags (or those its
 * READONLY/WRITE flag implies). A custom finder alone gives one spec that
 * says the positions are found by code. */
static void derive_specs(struct command *c) {
    uint64_t fl = c->flags & KS_MASK;
    if (!fl) fl = (c->flags & CMD_WRITE) ? KS_RW | KS_UPDATE : KS_RO | KS_ACCESS;
    struct keyspec *sp = hk_calloc(2, sizeof(*sp));
    int n = 0;
    if (c->first > 0) {
        sp[n] = (struct keyspec){c->fullname, fl, BS_INDEX(c->first),
                                 FK_RANGE(c->last < 0 ? c->last : c->last - c->first, c->step, 0), NULL};
        n++;
    }
    if (c->numkeys_at > 0) {
        sp[n] = (struct keyspec){c->fullname, fl, BS_INDEX(c->numkeys_at), FK_KEYNUM(0, 1, 1), NULL};
        n++;
    }
    if (!n && c->getkeys) {
        sp[n] = (struct keyspec){c->fullname, fl, BS_UNKNOWN, FK_UNKNOWN, NULL};
        n++;
    }
    if (!n) {
        hk_free(sp);
        sp = NULL;
    }
    c->specs = sp;
    c->nspecs = n;
}

/* A command's key specs: its rows of keyspecs.def (they must be adjacent),
 * else derived from the row. A row's KS_* bits, when it has any, must be
 * those of its first listed spec, so the two never tell different stories. */
static void attach_specs(struct command *c) {
    const struct keyspec *listed = rows.specs;
    size_t n = rows.nspecs;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(listed[i].command, c->fullname)) continue;
        size_t j = i;
        while (j < n && !strcmp(listed[j].command, c->fullname)) j++;
        for (size_t k = j; k < n; k++)
            if (!strcmp(listed[k].command, c->fullname)) {
                fprintf(stderr, "keyspecs.def: the rows of %s are not adjacent\n", c->fullname);
                exit(1);
            }
        uint64_t row = c->flags & KS_MASK;
        if (row && row != listed[i].flags) {
            fprintf(stderr, "keyspecs.def: %s: the row's KS_* flags differ from its first key spec\n", c->fullname);
            exit(1);
        }
        c->specs = &listed[i];
        c->nspecs = (int)(j - i);
        return;
    }
    derive_specs(c);
}

static unsigned name_slot(const char *lower, size_t len) { return (unsigned)(hk_hash(lower, len) & (INDEX_SIZE - 1)); }

void commands_init(const struct command_rows *r) {
    rows = *r;
    if (rows.ntop >= INDEX_SIZE) {
        fprintf(stderr, "command table: %zu commands do not fit the name index\n", rows.ntop);
        exit(1);
    }
    by_id = hk_calloc(rows.ntop + rows.nsubs, sizeof(*by_id));
    int id = 0;
    for (size_t i = 0; i < rows.ntop; i++) {
        struct command *c = &rows.top[i];
        c->id = id;
        by_id[id++] = c;
        snprintf(c->fullname, sizeof(c->fullname), "%s", c->name);
        /* Redis keeps a module command's declared name: "VADD". */
        if (c->flags & CMD_MODULE)
            for (char *p = c->fullname; *p; p++) *p = (char)toupper((unsigned char)*p);
        c->acl = derive_acl(c); /* containers too: CONFIG is @slow, as in Redis */
        c->key_kind = key_kind(c);
        unsigned s = name_slot(c->name, strlen(c->name));
        while (index_tab[s]) s = (s + 1) & (INDEX_SIZE - 1);
        index_tab[s] = c;
    }
    for (size_t i = 0; i < rows.nsubs; i++) {
        struct command *sc = &rows.subs[i].cmd;
        struct command *p = NULL;
        for (size_t j = 0; j < rows.ntop; j++)
            if (!strcmp(rows.top[j].name, rows.subs[i].parent)) p = &rows.top[j];
        if (!p) {
            fprintf(stderr, "command table: subcommand %s has no parent %s\n", sc->name, rows.subs[i].parent);
            continue;
        }
        sc->parent = p;
        sc->group = p->group;
        sc->acl = derive_acl(sc);
        sc->key_kind = key_kind(sc);
        sc->id = id;
        by_id[id++] = sc;
        snprintf(sc->fullname, sizeof(sc->fullname), "%s|%s", p->name, sc->name);
        p->subs = hk_realloc(p->subs, (size_t)(p->nsubs + 1) * sizeof(*p->subs));
        p->subs[p->nsubs++] = sc;
    }
    ntotal = id;
    for (int i = 0; i < id; i++) {
        struct command *c = by_id[i];
        attach_specs(c);
        /* Redis documents every container's complexity the same way. */
        if (c->nsubs && !c->proc && !c->complexity) c->complexity = "Depends on subcommand.";
    }
    cmddocs_init(rows.docs, rows.ndocs);
}

int commands_count(void) { return (int)rows.ntop; }
int commands_total(void) { return ntotal; }
struct command *command_by_id(int id) { return (id >= 0 && id < ntotal) ? by_id[id] : NULL; }

static int lower_into(char *buf, size_t size, const char *name, size_t len) {
    if (len >= size) return 0;
    for (size_t i = 0; i < len; i++) buf[i] = (char)tolower((unsigned char)name[i]);
    buf[len] = '\0';
    return 1;
}

struct command *cmd_lookup(const char *name, size_t len) {
    char buf[64];
    if (!lower_into(buf, sizeof(buf), name, len)) return NULL;
    unsigned s = name_slot(buf, len);
    while (index_tab[s]) {
        if (!strcmp(index_tab[s]->name, buf)) return index_tab[s];
        s = (s + 1) & (INDEX_SIZE - 1);
    }
    return NULL;
}

struct command *cmd_lookup_sub(struct command *parent, const char *name, size_t len) {
    char buf[64];
    if (!lower_into(buf, sizeof(buf), name, len)) return NULL;
    for (int i = 0; i < parent->nsubs; i++)
        if (!strcmp(parent->subs[i]->name, buf)) return parent->subs[i];
    return NULL;
}

/* ---- keys with their key-spec flags (COMMAND GETKEYSANDFLAGS, ACL) ---- */

/* Keys found by following the key specs, Redis's way: each spec adds its
 * keys with its flags. Returns the count, -1 when a spec cannot be
 * followed (unknown or incomplete), -2 when the arguments do not fit a
 * spec; keyword specs whose keyword is absent add nothing. pos and flags hold
 * nspecs * argc entries. */
static int keys_from_specs(const struct command *cmd, const hk_slice *argv, int argc, int *pos, uint64_t *flags) {
    int n = 0;
    for (int s = 0; s < cmd->nspecs; s++) {
        const struct keyspec *ks = &cmd->specs[s];
        if (ks->flags & KS_NOT_KEY) continue; /* a channel, not a key (SPUBLISH) */
        if (ks->flags & KS_INCOMPLETE) return -1;
        int first = 0;
        if (ks->bs == KSB_INDEX) first = ks->bs_pos;
        else if (ks->bs == KSB_KEYWORD) {
            /* From startfrom towards the end (or, when negative, from that
             * far from the end towards the start); a keyword in the last
             * argument has no key after it. */
            int from = ks->bs_pos > 0 ? ks->bs_pos : argc + ks->bs_pos;
            int forward = ks->bs_pos > 0;
            for (int i = from; forward ? i < argc - 1 : i > 1; i += forward ? 1 : -1) {
                if (i < 1 || i >= argc) break;
                if (hk_eqi(argv[i].ptr, argv[i].len, ks->keyword)) {
                    first = i + 1;
                    break;
                }
            }
            if (!first) continue;
        } else return -1;
        int last, step;
        if (ks->fk == KSF_RANGE) {
            step = ks->fk_b;
            if (ks->fk_a >= 0) last = first + ks->fk_a;
            else if (!ks->fk_c) last = argc + ks->fk_a;
            else last = first + ((argc - first) / ks->fk_c + ks->fk_a);
        } else if (ks->fk == KSF_KEYNUM) {
            step = ks->fk_c;
            long long nk;
            int at = first + ks->fk_a;
            if (at >= argc || !hk_str2ll(argv[at].ptr, argv[at].len, &nk) || nk < 0 || nk > argc) return -2;
            first += ks->fk_b;
            last = first + ((int)nk - 1) * step;
        } else return -1;
        if (last >= argc || last < first || first >= argc || step <= 0) return -2;
        for (int i = first; i <= last; i += step) {
            pos[n] = i;
            flags[n] = ks->flags;
            n++;
        }
    }
    return n;
}

/* SET: the key is read and updated when GET is given, overwritten else. */
static uint64_t set_key_flags(const hk_slice *argv, int argc) {
    for (int i = 3; i < argc; i++)
        if (hk_eqi(argv[i].ptr, argv[i].len, "get")) return KS_RW | KS_ACCESS | KS_UPDATE;
    return KS_OW | KS_UPDATE;
}

/* BITFIELD: only read while every operation is a GET (with its
 * arguments) or an OVERFLOW; anything else may write. */
static uint64_t bitfield_key_flags(const hk_slice *argv, int argc) {
    for (int i = 2; i < argc; i++) {
        int left = argc - i - 1;
        if (hk_eqi(argv[i].ptr, argv[i].len, "get") && left >= 2) i += 2;
        else if (hk_eqi(argv[i].ptr, argv[i].len, "overflow") && left >= 1) i += 1;
        else return KS_RW | KS_ACCESS | KS_UPDATE;
    }
    return KS_RO | KS_ACCESS;
}

/* The flags of a key a finder located (the specs could not be followed):
 * those of the index/range spec that covers it, else of the last spec the
 * specs cannot place (SORT's STORE), else of the first spec. */
static uint64_t flags_at(const struct command *cmd, int argc, int p) {
    uint64_t unplaced = 0;
    for (int s = 0; s < cmd->nspecs; s++) {
        const struct keyspec *ks = &cmd->specs[s];
        if (ks->bs == KSB_INDEX && ks->fk == KSF_RANGE && ks->fk_b > 0) {
            int last = ks->fk_a >= 0 ? ks->bs_pos + ks->fk_a : argc + ks->fk_a;
            if (p >= ks->bs_pos && p <= last && (p - ks->bs_pos) % ks->fk_b == 0) return ks->flags;
        } else if (ks->bs != KSB_INDEX && ks->bs != KSB_KEYWORD) unplaced = ks->flags;
    }
    if (unplaced) return unplaced;
    return cmd->nspecs ? cmd->specs[0].flags : 0;
}


size_t command_keys_flags_cap(const struct command *cmd, int argc) {
    return (size_t)(argc > 0 ? argc : 1) * (size_t)(cmd->nspecs ? cmd->nspecs : 1);
}

int command_keys_flags(const struct command *cmd, const hk_slice *argv, int argc, int *pos, uint64_t *flags) {
    int varflags = 0;
    for (int s = 0; s < cmd->nspecs; s++)
        if (cmd->specs[s].flags & KS_VARIABLE_FLAGS) varflags = 1;
    int n = varflags ? -1 : keys_from_specs(cmd, argv, argc, pos, flags);
    /* Arguments that do not fit the specs have no keys, unless a finder
     * knows better (as Redis asks a command's getkeys function). */
    if (n == -2 && !cmd->getkeys) n = 0;
    if (n < 0) {
        /* The key finders read argv alone. */
        n = command_keys(cmd, argv, argc, pos);
        /* Flags that depend on the arguments are the same for every key. */
        uint64_t whole = 0;
        if (varflags && !strcmp(cmd->fullname, "set")) whole = set_key_flags(argv, argc);
        else if (varflags && !strcmp(cmd->fullname, "bitfield")) whole = bitfield_key_flags(argv, argc);
        for (int i = 0; i < n; i++) flags[i] = whole ? whole : flags_at(cmd, argc, pos[i]);
    }
    return n;
}
