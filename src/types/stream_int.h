/* stream_int.h - what stream.c (entries, nodes, trimming, the type's
 * lifecycle) and stream_cg.c (consumer groups, consumers, pending entries)
 * share and nobody else sees. Not part of the stream contract: include
 * stream.h instead. */
#ifndef HK_TYPES_STREAM_INT_H
#define HK_TYPES_STREAM_INT_H

#include "stream.h"

/* Free every group of s (their consumers and pending entries too). */
void stream_groups_free(struct stream *s);
/* Give dst (a fresh stream with no groups) a deep copy of src's groups,
 * consumers and pending entries, delivery-time order included. */
void stream_groups_dup(struct stream *dst, const struct stream *src);
/* Bytes held by s's groups, consumers and pending entries. */
size_t stream_groups_usage(const struct stream *s);
/* DELREF: drop id's pending record from every group; returns how many. */
size_t stream_groups_unref(struct stream *s, const streamid *id);

#endif
