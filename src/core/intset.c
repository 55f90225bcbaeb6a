/* intset.c - the sorted packed integer array described in intset.h.
 *
 * Elements are read and written with memcpy at the set's width, so the
 * buffer needs no alignment. Width upgrades rewrite the elements from the
 * last to the first in place after growing the allocation, which is safe
 * because every element moves to an offset at or beyond its old one. */
#include "intset.h"

#include "alloc.h"

#include <string.h>

static uint32_t width_for(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

static int64_t get_w(const unsigned char *data, uint32_t w, uint32_t pos) {
    if (w == 2) {
        int16_t x;
        memcpy(&x, data + (size_t)pos * 2, 2);
        return x;
    }
    if (w == 4) {
        int32_t x;
        memcpy(&x, data + (size_t)pos * 4, 4);
        return x;
    }
    int64_t x;
    memcpy(&x, data + (size_t)pos * 8, 8);
    return x;
}

static void set_w(unsigned char *data, uint32_t w, uint32_t pos, int64_t v) {
    if (w == 2) {
        int16_t x = (int16_t)v;
        memcpy(data + (size_t)pos * 2, &x, 2);
    } else if (w == 4) {
        int32_t x = (int32_t)v;
        memcpy(data + (size_t)pos * 4, &x, 4);
    } else {
        memcpy(data + (size_t)pos * 8, &v, 8);
    }
}

struct intset *intset_new(void) {
    struct intset *s = hk_malloc(sizeof(*s));
    s->width = 2;
    s->len = 0;
    return s;
}

void intset_free(struct intset *s) { hk_free(s); }

size_t intset_bytes(const struct intset *s) { return sizeof(*s) + (size_t)s->width * s->len; }

int64_t intset_get(const struct intset *s, uint32_t pos) { return get_w(s->data, s->width, pos); }

int intset_find(const struct intset *s, int64_t v, uint32_t *pos) {
    uint32_t lo = 0, hi = s->len;
    /* Values wider than the set's width cannot be members; their insertion
     * point is one end. */
    if (width_for(v) > s->width) {
        if (pos) *pos = v < 0 ? 0 : s->len;
        return 0;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t x = get_w(s->data, s->width, mid);
        if (x == v) {
            if (pos) *pos = mid;
            return 1;
        }
        if (x < v) lo = mid + 1;
        else hi = mid;
    }
    if (pos) *pos = lo;
    return 0;
}

static struct intset *resize(struct intset *s, uint32_t width, uint32_t len) {
    return hk_realloc(s, sizeof(*s) + (size_t)width * len);
}

/* Widen every element to `width` and insert v, which does not fit the old
 * width and so is either below every member or above every member. */
static struct intset *upgrade_and_add(struct intset *s, int64_t v) {
    uint32_t old = s->width, nw = width_for(v), n = s->len;
    int front = v < 0;
    s = resize(s, nw, n + 1);
    for (uint32_t i = n; i-- > 0;) set_w(s->data, nw, i + (uint32_t)front, get_w(s->data, old, i));
    set_w(s->data, nw, front ? 0 : n, v);
    s->width = nw;
    s->len = n + 1;
    return s;
}

struct intset *intset_add(struct intset *s, int64_t v, int *added) {
    if (width_for(v) > s->width) {
        *added = 1;
        return upgrade_and_add(s, v);
    }
    uint32_t pos;
    if (intset_find(s, v, &pos)) {
        *added = 0;
        return s;
    }
    s = resize(s, s->width, s->len + 1);
    memmove(s->data + (size_t)(pos + 1) * s->width, s->data + (size_t)pos * s->width,
            (size_t)(s->len - pos) * s->width);
    set_w(s->data, s->width, pos, v);
    s->len++;
    *added = 1;
    return s;
}

struct intset *intset_remove_at(struct intset *s, uint32_t pos) {
    memmove(s->data + (size_t)pos * s->width, s->data + (size_t)(pos + 1) * s->width,
            (size_t)(s->len - pos - 1) * s->width);
    s->len--;
    return resize(s, s->width, s->len);
}

struct intset *intset_remove(struct intset *s, int64_t v, int *removed) {
    uint32_t pos;
    if (!intset_find(s, v, &pos)) {
        *removed = 0;
        return s;
    }
    *removed = 1;
    return intset_remove_at(s, pos);
}

struct intset *intset_dup(const struct intset *s) {
    size_t n = intset_bytes(s);
    struct intset *d = hk_malloc(n);
    memcpy(d, s, n);
    return d;
}
