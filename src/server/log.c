/* log.c - leveled logging to stdout or the logfile.
 *
 * Each line is formatted into a local buffer and written with one write(2),
 * so lines from different threads never interleave. */
#include "config.h"
#include "server.h"

#include "../core/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic int log_fd = 1;

void log_reopen(void) {
    char *path = cfg_get_string(&cfg.logfile);
    if (path[0]) {
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd >= 0) {
            int old = atomic_exchange(&log_fd, fd);
            if (old > 2) close(old);
        } else {
            fprintf(stderr, "Can't open the log file '%s': %s\n", path, strerror(errno));
        }
    }
    hk_free(path);
}

void hk_log(int level, const char *fmt, ...) {
    if (level < CFG(loglevel)) return;
    char buf[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    static const char marks[] = ".-*#";
    int role = current_worker ? 'W' : 'M';
    int off = snprintf(buf, sizeof(buf), "%d:%c ", (int)getpid(), role);
    off += (int)strftime(buf + off, sizeof(buf) - (size_t)off, "%d %b %Y %H:%M:%S", &tm);
    off += snprintf(buf + off, sizeof(buf) - (size_t)off, ".%03d %c ", (int)(tv.tv_usec / 1000), marks[level & 3]);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + off, sizeof(buf) - (size_t)off - 1, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    off += n;
    if ((size_t)off > sizeof(buf) - 2) off = (int)sizeof(buf) - 2;
    buf[off++] = '\n';
    ssize_t w = write(atomic_load(&log_fd), buf, (size_t)off);
    (void)w;
}
