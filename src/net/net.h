/* net.h - sockets and the epoll wrapper: listeners (TCP with SO_REUSEPORT,
 * unix), accept, socket options and address formatting. Knows nothing of
 * clients, commands or the keyspace. */
#ifndef HK_NET_H
#define HK_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

/* Listen on addr:port; addr "*" is every IPv4 address, "::*" every IPv6
 * one. Returns the fd or -1 with err filled. */
int net_listen_tcp(const char *addr, int port, int backlog, int reuseport, char *err, size_t errsize);
/* Whether addr:port can be bound without SO_REUSEPORT (no other socket
 * listens there): binds and closes, never listening, so no connection can
 * land in it. 0, or -1 with err filled. */
int net_bind_probe(const char *addr, int port, char *err, size_t errsize);
int net_listen_unix(const char *path, unsigned perm, int backlog, char *err, size_t errsize);
/* Accept one connection (non-blocking); -1 with errno EAGAIN when none. */
int net_accept(int lfd, char *addr, size_t addrsize, int *is_local);
int net_nonblock(int fd);
void net_tcp_options(int fd, int keepalive_s);
/* "ip:port" of the local end. */
void net_local_addr(int fd, char *buf, size_t size);
/* 1 when the peer address is loopback (or a unix socket). */
int net_is_loopback_sockaddr(const void *sa);

static inline int ev_add(int epfd, int fd, uint32_t events, void *ptr) {
    struct epoll_event ev = {.events = events, .data.ptr = ptr};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}
static inline int ev_mod(int epfd, int fd, uint32_t events, void *ptr) {
    struct epoll_event ev = {.events = events, .data.ptr = ptr};
    return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
}
static inline int ev_del(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }

#endif
