/* vexpr.h - the filter expressions of VSIM ... FILTER, compiled once and
 * evaluated against the JSON attributes of each candidate element.
 *
 * The language and its results are Redis 8's vector-set filter language:
 *
 *   values     .field (letters, digits, '_' and '-' after the dot: a
 *              top-level field of the attribute object), numbers (1, -2,
 *              3.5, 1e3; no '+' in an exponent), 'strings' and "strings"
 *              (backslash escapes: \n \r \t, any other escaped character
 *              stands for itself), null, and tuples [1, "a", -2.5] of
 *              numbers and strings for "in". There are no true/false
 *              literals: JSON true and false read as the numbers 1 and 0.
 *              A dot that ends the expression is a selector with an empty
 *              name: it compiles, and then nothing matches (as in Redis).
 *   operators  by precedence, highest first:
 *                ( )
 *                ! not                  (unary)
 *                **                     (right associative)
 *                * / %
 *                + -
 *                > >= < <= == != in
 *                and &&
 *                or ||
 *              binary operators of equal precedence group left to right.
 *   types      arithmetic and ordering read both sides as numbers (a
 *              string that is a whole number reads as it, any other string,
 *              null or array as 0); == and != compare strings with strings
 *              byte for byte, numbers with numbers, null equals only null,
 *              and any other mix compares as numbers; "x in [..]" is
 *              membership by ==, "s in t" with two strings is substring;
 *              false is 0, null and the empty string; every other string
 *              and every array is true. Division by zero gives IEEE
 *              infinities or NaN, never an error.
 *   matching   an element matches when the expression's value is true. An
 *              element without attributes, a field that is absent, or a
 *              field whose JSON value the language cannot hold (an object,
 *              an array holding an object, a malformed value) makes the
 *              element not match, whatever the rest of the expression
 *              says. Only the top-level object is searched, and JSON is
 *              read lazily: only as far as the named fields, so text after
 *              them is never checked.
 *
 * Only a malformed expression is an error. vexpr_compile() then writes
 * Redis's reply text, "ERR syntax error in FILTER expression near: <rest>",
 * where <rest> is the expression from the first byte the tokenizer could
 * not read (or the whole expression when the fault is in its structure,
 * an unbalanced parenthesis or a missing operand), with CR/LF mapped to
 * spaces and trailing CR/LF dropped as Redis's error replies do. The
 * command replies "-" followed by that text, unchanged. An expression that
 * nests operators or parentheses deeper than VEXPR_MAX_NESTING is refused
 * with the same text.
 *
 * Two behaviours follow Redis's later fixes rather than the 8.0.0 code, as
 * its tests filter_string_escape.py and filter_double_not.py require:
 * escapes in expression strings are decoded (8.0.0 compared the raw text),
 * and consecutive prefix operators ("!!x", "not not x") compile (8.0.0
 * refused them). The nesting limit is HotKV's own; Redis has none.
 *
 * This file knows nothing of the server: no keys, no replies, no locks. */
#ifndef HK_VEXPR_H
#define HK_VEXPR_H

#include <stddef.h>

/* The fixed part of the error text; the whole message is at most
 * VEXPR_ERR_PREFIX_LEN + len bytes (plus its NUL). */
#define VEXPR_ERR_PREFIX "ERR syntax error in FILTER expression near: "
#define VEXPR_ERR_PREFIX_LEN (sizeof(VEXPR_ERR_PREFIX) - 1)

/* Most operators (open parentheses and pending unary or binary operators)
 * an expression may hold pending at once. */
#define VEXPR_MAX_NESTING 1024

/* A compiled expression. Immutable after vexpr_compile(): any number of
 * threads may evaluate one at the same time, each with its own scratch. */
struct vexpr;

/* Compile s[0..len). The expression ends at its first NUL byte, if any, as
 * in Redis. Returns the compiled expression, or NULL on a syntax error
 * after writing the reply text above (NUL-terminated, cut to errsize - 1
 * bytes; pass errsize >= VEXPR_ERR_PREFIX_LEN + len + 1 for all of it) into
 * err when err is not NULL and errsize > 0. The caller owns the result and
 * frees it with vexpr_free(). */
struct vexpr *vexpr_compile(const char *s, size_t len, char *err, size_t errsize);
void vexpr_free(struct vexpr *e);

/* Bytes held by a compiled expression (allocator usable sizes). */
size_t vexpr_memory(const struct vexpr *e);

/* Per-thread evaluation state: value stack, field table and room for
 * unescaped strings. It grows to the largest expression and attribute
 * string it has served and is then reused without allocating. One scratch
 * must not be used by two threads at once; it may serve any expression. */
struct vexpr_scratch;
struct vexpr_scratch *vexpr_scratch_new(void);
void vexpr_scratch_free(struct vexpr_scratch *s);

/* Evaluate e against the attribute string json[0..len). json == NULL or
 * len == 0 stands for an element without attributes and never matches.
 * Returns 1 when the element matches, 0 when it does not. Never fails. */
int vexpr_eval(const struct vexpr *e, const char *json, size_t len, struct vexpr_scratch *s);

#endif
