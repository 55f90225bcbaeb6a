/* net.c - socket helpers; see net.h. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int net_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) return -1;
    return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* A TCP socket bound to addr:port, listening unless backlog < 0. */
static int bind_tcp(const char *addr, int port, int backlog, int reuseport, char *err, size_t errsize) {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    const char *host = addr;
    if (!strcmp(addr, "*")) {
        hints.ai_family = AF_INET;
        host = NULL;
    } else if (!strcmp(addr, "::*")) {
        hints.ai_family = AF_INET6;
        host = NULL;
    } else {
        hints.ai_family = strchr(addr, ':') ? AF_INET6 : AF_INET;
    }
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0) {
        snprintf(err, errsize, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errsize, "socket: %s", strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (res->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || (backlog >= 0 && listen(fd, backlog) < 0)) {
        snprintf(err, errsize, "%s", strerror(errno));
        close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    return fd;
}

int net_listen_tcp(const char *addr, int port, int backlog, int reuseport, char *err, size_t errsize) {
    return bind_tcp(addr, port, backlog < 0 ? 0 : backlog, reuseport, err, errsize);
}

int net_bind_probe(const char *addr, int port, char *err, size_t errsize) {
    int fd = bind_tcp(addr, port, -1, 0, err, errsize);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

int net_listen_unix(const char *path, unsigned perm, int backlog, char *err, size_t errsize) {
    struct sockaddr_un sa;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errsize, "unix socket path too long");
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errsize, "socket: %s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, backlog) < 0) {
        snprintf(err, errsize, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (perm) chmod(path, perm);
    return fd;
}

int net_is_loopback_sockaddr(const void *p) {
    const struct sockaddr *sa = p;
    if (sa->sa_family == AF_UNIX) return 1;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = p;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = p;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return 1;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
    }
    return 0;
}

static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t size) {
    char ip[INET6_ADDRSTRLEN];
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)ss;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
        snprintf(buf, size, "%s:%d", ip, ntohs(in->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        snprintf(buf, size, "%s:%d", ip, ntohs(in6->sin6_port));
    } else {
        const struct sockaddr_un *un = (const void *)ss;
        snprintf(buf, size, "%s:0", un->sun_path[0] ? un->sun_path : "/unixsocket");
    }
}

int net_accept(int lfd, char *addr, size_t addrsize, int *is_local) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return -1;
    /* An unnamed unix peer fills only sun_family: its sun_path is
     * uninitialised stack, not to be read by format_addr. */
    if (ss.ss_family == AF_UNIX) snprintf(addr, addrsize, "/unixsocket:0");
    else format_addr(&ss, addr, addrsize);
    *is_local = net_is_loopback_sockaddr(&ss);
    return fd;
}

void net_tcp_options(int fd, int keepalive_s) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (keepalive_s > 0) {
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        int idle = keepalive_s, intvl = keepalive_s / 3 ? keepalive_s / 3 : 1, cnt = 3;
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    }
}

void net_local_addr(int fd, char *buf, size_t size) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        snprintf(buf, size, "?:0");
        return;
    }
    format_addr(&ss, buf, size);
}
