/* replid.h - the replication ID this server reports (INFO replication's
 * master_replid). HotKV has no replication link yet; the ID is random at
 * start and replaced by DEBUG CHANGE-REPL-ID, as Redis's is. */
#ifndef HK_REPLID_H
#define HK_REPLID_H

#define REPLID_LEN 40

/* Copy the current ID (REPLID_LEN hex digits and a NUL) into out. */
void replid_get(char out[REPLID_LEN + 1]);
/* Replace the ID with a new random one. */
void replid_change(void);

#endif
