/* aofman.c - the AOF manifest: Redis 7's list of the files that make the
 * append-only file (`file <name> seq <n> type b|h|i`, one a line, a name
 * quoted when it holds spaces, quotes or unprintable bytes), parsed with
 * Redis's checks and messages and written atomically. It knows nothing of
 * the files' contents or of the journal (aof.c). */
#include "../core/alloc.h"
#include "../core/buf.h"
#include "aof.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define AOF_PATH_MAX (AOF_NAME_MAX * 2 + 64)

/* A file name as Redis writes it in the manifest: plain, or quoted with
 * escapes when it holds spaces, quotes or bytes that are not printable. */
static void name_repr(char *out, size_t size, const char *s) {
    int plain = *s != 0;
    for (const char *p = s; *p; p++)
        if (*p == '\\' || *p == '"' || (unsigned char)*p <= ' ' || (unsigned char)*p >= 127) plain = 0;
    if (plain) {
        snprintf(out, size, "%s", s);
        return;
    }
    size_t o = 0;
    out[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 6 < size; p++) {
        switch (*p) {
        case '\\': o += (size_t)snprintf(out + o, size - o, "\\\\"); break;
        case '"': o += (size_t)snprintf(out + o, size - o, "\\\""); break;
        case '\n': o += (size_t)snprintf(out + o, size - o, "\\n"); break;
        case '\r': o += (size_t)snprintf(out + o, size - o, "\\r"); break;
        case '\t': o += (size_t)snprintf(out + o, size - o, "\\t"); break;
        case '\a': o += (size_t)snprintf(out + o, size - o, "\\a"); break;
        case '\b': o += (size_t)snprintf(out + o, size - o, "\\b"); break;
        default:
            if (*p > ' ' && *p < 127) out[o++] = (char)*p;
            else o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
        }
    }
    out[o++] = '"';
    out[o] = 0;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Split a manifest line into at most max arguments, quoted ones unescaped
 * (the quoting rules of Redis's configuration lines). Returns the count,
 * or -1 when a quote is unbalanced. */
static int split_args(char *line, char **argv, int max) {
    int argc = 0;
    char *p = line, *o;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p) return argc;
        if (argc == max) return -1;
        argv[argc++] = o = p;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            for (;;) {
                if (!*p) return -1;
                if (q == '"' && *p == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
                    *o++ = (char)(hexval(p[2]) * 16 + hexval(p[3]));
                    p += 4;
                } else if (*p == '\\' && p[1]) {
                    char c = p[1];
                    if (q == '"') c = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'b' ? '\b' : c == 'a' ? '\a' : c;
                    else if (c != '\'') c = '\\', p--;
                    *o++ = c;
                    p += 2;
                } else if (*p == q) {
                    p++;
                    if (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') return -1;
                    break;
                } else {
                    *o++ = *p++;
                }
            }
            char *next = p;
            *o = 0;
            p = next;
            if (*p) p++;
        } else {
            while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
            if (*p) *p++ = 0;
        }
    }
}

static void minfo_push(struct aof_minfo **a, int *n, int *cap, const struct aof_minfo *i) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *a = hk_realloc(*a, (size_t)*cap * sizeof(**a));
    }
    (*a)[(*n)++] = *i;
}

void aof_manifest_add(struct aof_manifest *m, const struct aof_minfo *i) {
    if (i->type == 'h') minfo_push(&m->hist, &m->nhist, &m->hist_cap, i);
    else minfo_push(&m->incr, &m->nincr, &m->incr_cap, i);
}

void aof_manifest_free(struct aof_manifest *m) {
    hk_free(m->incr);
    hk_free(m->hist);
    memset(m, 0, sizeof(*m));
}

void aof_manifest_copy(struct aof_manifest *dst, const struct aof_manifest *src) {
    *dst = *src;
    dst->incr = NULL;
    dst->hist = NULL;
    dst->nincr = dst->incr_cap = dst->nhist = dst->hist_cap = 0;
    for (int i = 0; i < src->nincr; i++) minfo_push(&dst->incr, &dst->nincr, &dst->incr_cap, &src->incr[i]);
    for (int i = 0; i < src->nhist; i++) minfo_push(&dst->hist, &dst->nhist, &dst->hist_cap, &src->hist[i]);
}

#define MANIFEST_MAX_LINE 1024

int aof_manifest_load(struct aof_manifest *m, const char *path, char *err, size_t errlen) {
    memset(m, 0, sizeof(*m));
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "Fatal error: can't open the AOF manifest file %s for reading: %s", path,
                 strerror(errno));
        return -1;
    }
    char buf[MANIFEST_MAX_LINE + 1], line[MANIFEST_MAX_LINE + 1];
    const char *why = NULL;
    int linenum = 0;
    long long maxseq = 0;
    line[0] = 0;
    for (;;) {
        if (!fgets(buf, sizeof(buf), f)) {
            if (feof(f)) {
                if (linenum == 0) why = "Found an empty AOF manifest";
            } else {
                why = "Read AOF manifest failed";
            }
            break;
        }
        linenum++;
        if (buf[0] == '#') continue;
        snprintf(line, sizeof(line), "%s", buf);
        size_t ll = strlen(line);
        while (ll && (line[ll - 1] == '\n' || line[ll - 1] == '\r' || line[ll - 1] == ' ' || line[ll - 1] == '\t'))
            line[--ll] = 0;
        if (!strchr(buf, '\n')) {
            why = "The AOF manifest file contains too long line";
            break;
        }
        char *argv[32];
        char tmp[MANIFEST_MAX_LINE + 1];
        snprintf(tmp, sizeof(tmp), "%s", line);
        int argc = ll ? split_args(tmp, argv, 32) : 0;
        if (argc < 6 || argc % 2) {
            why = "Invalid AOF manifest file format";
            break;
        }
        struct aof_minfo ai = {{0}, 0, 0};
        for (int i = 0; i < argc; i += 2) {
            if (!strcasecmp(argv[i], "file")) {
                if (strchr(argv[i + 1], '/')) {
                    why = "File can't be a path, just a filename";
                    break;
                }
                snprintf(ai.name, sizeof(ai.name), "%s", argv[i + 1]);
            } else if (!strcasecmp(argv[i], "seq")) {
                ai.seq = atoll(argv[i + 1]);
            } else if (!strcasecmp(argv[i], "type")) {
                ai.type = argv[i + 1][0];
            }
        }
        if (why) break;
        if (!ai.name[0] || !ai.seq || !ai.type) {
            why = "Invalid AOF manifest file format";
            break;
        }
        if (ai.type == 'b') {
            if (m->base.name[0]) {
                why = "Found duplicate base file information";
                break;
            }
            m->base = ai;
            m->base_seq = ai.seq;
        } else if (ai.type == 'h') {
            minfo_push(&m->hist, &m->nhist, &m->hist_cap, &ai);
        } else if (ai.type == 'i') {
            if (ai.seq <= maxseq) {
                why = "Found a non-monotonic sequence number";
                break;
            }
            minfo_push(&m->incr, &m->nincr, &m->incr_cap, &ai);
            m->incr_seq = maxseq = ai.seq;
        } else {
            why = "Unknown AOF file type";
            break;
        }
        line[0] = 0;
    }
    fclose(f);
    if (!why) return 1;
    hk_log(LL_WARNING, "*** FATAL AOF MANIFEST FILE ERROR ***");
    if (line[0]) {
        hk_log(LL_WARNING, "Reading the manifest file, at line %d", linenum);
        hk_log(LL_WARNING, ">>> '%s'", line);
    }
    hk_log(LL_WARNING, "%s", why);
    snprintf(err, errlen, "%s (manifest %s, line %d)", why, path, linenum);
    aof_manifest_free(m);
    return -1;
}

static void manifest_line(struct hk_buf *b, const struct aof_minfo *i) {
    char repr[AOF_NAME_MAX * 4 + 8], line[AOF_NAME_MAX * 4 + 64];
    name_repr(repr, sizeof(repr), i->name);
    int n = snprintf(line, sizeof(line), "file %s seq %lld type %c\n", repr, i->seq, i->type);
    hk_buf_add(b, line, (size_t)n, 256);
}

static int fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

int aof_manifest_persist(const char *dir, const char *fname, const struct aof_manifest *m) {
    struct hk_buf b = {0};
    if (m->base.name[0]) manifest_line(&b, &m->base);
    for (int i = 0; i < m->nhist; i++) manifest_line(&b, &m->hist[i]);
    for (int i = 0; i < m->nincr; i++) manifest_line(&b, &m->incr[i]);
    char name[AOF_NAME_MAX + 32], tmpname[AOF_NAME_MAX + 32], path[AOF_PATH_MAX], tmp[AOF_PATH_MAX];
    snprintf(name, sizeof(name), "%s.manifest", fname);
    snprintf(tmpname, sizeof(tmpname), "temp-%s.manifest", fname);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/%s", dir, tmpname);
    int ret = -1;
    int fd = open(tmp, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        hk_log(LL_WARNING, "Can't open the AOF manifest file %s: %s", tmpname, strerror(errno));
        goto out;
    }
    size_t off = 0;
    while (off < b.len) {
        ssize_t n = write(fd, b.p + off, b.len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            hk_log(LL_WARNING, "Error trying to write the temporary AOF manifest file %s: %s", tmpname,
                   strerror(errno));
            goto out;
        }
        off += (size_t)n;
    }
    if (fsync(fd) < 0) {
        hk_log(LL_WARNING, "Fail to fsync the temp AOF file %s: %s.", tmpname, strerror(errno));
        goto out;
    }
    if (rename(tmp, path) != 0) {
        hk_log(LL_WARNING, "Error trying to rename the temporary AOF manifest file %s into %s: %s", tmpname, name,
               strerror(errno));
        goto out;
    }
    if (fsync_dir(dir) < 0) {
        hk_log(LL_WARNING, "Fail to fsync AOF directory %s: %s.", path, strerror(errno));
        goto out;
    }
    ret = 0;
out:
    if (fd >= 0) close(fd);
    hk_free(b.p);
    return ret;
}
