/* htable_undef.h - forget the HT_* definitions of a table instance
 * (htable_tmpl.h), so another instance may define its own. */
#undef HT_
#undef HT_TABLE
#undef HT_ITER
#undef HT_NODE
#undef HT_LINK
#undef HT_NIL
#undef HT_DEREF
#undef HT_REF
