/* aof_cmd.c - BGREWRITEAOF and the aof_* lines of INFO persistence; the
 * append-only file itself is src/server/aof.c. */
#include "../server/aof.h"
#include "../server/config.h"
#include "../server/creply.h"
#include "cmds.h"
#include "srvcmd.h"

/* BGREWRITEAOF. The rewrite is started by the journal thread, which owns
 * the files; inside EXEC (where shards are held) or while another
 * snapshot runs it is scheduled instead, as Redis schedules it behind a
 * transaction or another child. */
void cmd_bgrewriteaof(struct cmd_ctx *c) {
    int nested = (c->flags & CTX_NESTED) || (c->ls && c->ls->held);
    switch (aof_bgrewrite(nested)) {
    case AOF_RW_STARTED: reply_simple(c, "Background append only file rewriting started"); break;
    case AOF_RW_SCHEDULED: reply_simple(c, "Background append only file rewriting scheduled"); break;
    case AOF_RW_IN_PROGRESS: reply_error(c, "ERR Background append only file rewriting already in progress"); break;
    default:
        reply_error(c, "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
                       "information.");
    }
}

void aof_info(struct sbuf *b) {
    struct aof_stats s;
    aof_stats_get(&s);
    int enabled = CFG(appendonly) != 0;
    sb_catf(b,
            "aof_enabled:%d\r\n"
            "aof_rewrite_in_progress:%d\r\n"
            "aof_rewrite_scheduled:%d\r\n"
            "aof_last_rewrite_time_sec:%lld\r\n"
            "aof_current_rewrite_time_sec:%lld\r\n"
            "aof_last_bgrewrite_status:%s\r\n"
            "aof_rewrites:%lld\r\n"
            "aof_rewrites_consecutive_failures:%lld\r\n"
            "aof_last_write_status:%s\r\n"
            "aof_last_cow_size:%llu\r\n"
            "module_fork_in_progress:0\r\n"
            "module_fork_last_cow_size:0\r\n",
            enabled, s.rewrite_in_progress, s.rewrite_scheduled, s.last_rewrite_time_sec,
            s.current_rewrite_time_sec, s.last_bgrewrite_ok ? "ok" : "err", s.rewrites,
            s.rewrites_consecutive_failures, s.last_write_ok ? "ok" : "err", s.last_cow_size);
    if (enabled)
        sb_catf(b,
                "aof_current_size:%lld\r\n"
                "aof_base_size:%lld\r\n"
                "aof_pending_rewrite:%d\r\n"
                "aof_buffer_length:%llu\r\n"
                "aof_pending_bio_fsync:%llu\r\n"
                "aof_delayed_fsync:%llu\r\n",
                s.current_size, s.base_size, s.rewrite_scheduled, s.buffer_length, s.pending_bio_fsync,
                s.delayed_fsync);
}
