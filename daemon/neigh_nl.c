// SPDX-License-Identifier: MIT
/*
 * The rtnetlink side of neighbour resolution (neigh.h): the messages, two
 * NETLINK_ROUTE sockets and their place in the libev loop.
 *
 * Queries (RTM_GETROUTE, RTM_GETNEIGH, RTM_NEWNEIGH+NTF_USE) go over one
 * non-blocking socket. The kernel handles an rtnetlink request inside the
 * sendmsg() that carries it and queues the answer before sendmsg returns,
 * so the answer is read at once with MSG_DONTWAIT: nothing waits, and a
 * local destination is sent with no added loop iteration. (Should an
 * answer be missing all the same, the query fails with -EAGAIN and the
 * send with it, as a lost MAD: the engine retransmits.)
 *
 * Verdicts arrive on a second socket bound to RTNLGRP_NEIGH, watched by an
 * ev_io; the cap (NEIGH_CAP_NS) is one ev_timer.
 */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "neigh.h"

#define container_of(ptr, type, member)                                        \
	((type *)((char *)(ptr)-offsetof(type, member)))

#define NEIGH_NL_BUF 8192
/* Event socket receive buffer: room for bursts of neighbour churn. */
#define NEIGH_NL_RCVBUF (256 * 1024)

struct neigh_nl {
	struct ev_loop *loop;
	struct neigh *core;
	int qfd, efd;
	uint32_t seq;
	ev_io eio;
	ev_timer cap;
	neigh_release_fn release;
	void *ctx;
	uint8_t buf[NEIGH_NL_BUF];
};

/* Messages: pure functions over caller buffers. */

struct neigh_nl_req {
	struct nlmsghdr *h;
	size_t cap;
};

static void *neigh_nl_start(struct neigh_nl_req *r, void *buf, size_t cap,
			    uint16_t type, uint16_t flags, uint32_t seq,
			    size_t body)
{
	if (cap < NLMSG_SPACE(body))
		return NULL;
	memset(buf, 0, NLMSG_SPACE(body));
	r->h = buf;
	r->cap = cap;
	r->h->nlmsg_len = (uint32_t)NLMSG_LENGTH(body);
	r->h->nlmsg_type = type;
	r->h->nlmsg_flags = flags;
	r->h->nlmsg_seq = seq;
	return NLMSG_DATA(r->h);
}

static bool neigh_nl_attr(struct neigh_nl_req *r, uint16_t type,
			  const void *data, size_t len)
{
	size_t at = NLMSG_ALIGN(r->h->nlmsg_len);
	struct rtattr *a;

	if (!r->h || at + RTA_SPACE(len) > r->cap)
		return false;
	a = (struct rtattr *)((uint8_t *)r->h + at);
	memset(a, 0, RTA_SPACE(len));
	a->rta_type = type;
	a->rta_len = (uint16_t)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->h->nlmsg_len = (uint32_t)(at + RTA_SPACE(len));
	return true;
}

static size_t neigh_nl_alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

size_t neigh_nl_getroute(void *buf, size_t cap, uint32_t seq,
			 const struct neigh_dst *d)
{
	struct neigh_nl_req r = { 0 };
	size_t n = neigh_nl_alen(d->family);
	struct rtmsg *rt;
	uint32_t oif = (uint32_t)d->ifindex;

	rt = neigh_nl_start(&r, buf, cap, RTM_GETROUTE, NLM_F_REQUEST, seq,
			    sizeof(*rt));
	if (!rt)
		return 0;
	/*
	 * The lookup the kernel's RoCE address resolution makes: to the
	 * destination, from the source GID's address, out of its netdev.
	 */
	rt->rtm_family = d->family;
	rt->rtm_dst_len = (uint8_t)(n * 8);
	rt->rtm_src_len = (uint8_t)(n * 8);
	if (!neigh_nl_attr(&r, RTA_DST, d->dst, n) ||
	    !neigh_nl_attr(&r, RTA_SRC, d->src, n) ||
	    (d->ifindex && !neigh_nl_attr(&r, RTA_OIF, &oif, sizeof(oif))))
		return 0;
	return r.h->nlmsg_len;
}

static size_t neigh_nl_ndmsg(void *buf, size_t cap, uint16_t type,
			     uint16_t flags, uint32_t seq, int family,
			     int ifindex, const uint8_t addr[16],
			     uint8_t ndm_flags)
{
	struct neigh_nl_req r = { 0 };
	struct ndmsg *nd;

	nd = neigh_nl_start(&r, buf, cap, type, flags, seq, sizeof(*nd));
	if (!nd)
		return 0;
	nd->ndm_family = (uint8_t)family;
	nd->ndm_ifindex = ifindex;
	nd->ndm_flags = ndm_flags;
	if (!neigh_nl_attr(&r, NDA_DST, addr, neigh_nl_alen(family)))
		return 0;
	return r.h->nlmsg_len;
}

size_t neigh_nl_getneigh(void *buf, size_t cap, uint32_t seq, int family,
			 int ifindex, const uint8_t addr[16])
{
	return neigh_nl_ndmsg(buf, cap, RTM_GETNEIGH, NLM_F_REQUEST, seq,
			      family, ifindex, addr, 0);
}

size_t neigh_nl_use(void *buf, size_t cap, uint32_t seq, int family,
		    int ifindex, const uint8_t addr[16])
{
	/*
	 * NTF_USE: the kernel runs neigh_event_send() on the entry (created
	 * if missing, NLM_F_CREATE), which starts ARP/ND as a packet waiting
	 * for the neighbour would, and returns at once. The entry's state
	 * is not ours to set (NUD_NONE). NLM_F_ACK: the answer says if the
	 * kernel took it.
	 */
	return neigh_nl_ndmsg(buf, cap, RTM_NEWNEIGH,
			      NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, seq,
			      family, ifindex, addr, NTF_USE);
}

/* The first message of buf answering seq, or NULL (ENOMSG/EBADMSG). */
static const struct nlmsghdr *neigh_nl_find(const void *buf, size_t len,
					    uint32_t seq, int *err)
{
	const struct nlmsghdr *h = buf;
	int n = (int)len;

	*err = -ENOMSG;
	for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_seq != seq)
			continue;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
				*err = -EBADMSG;
				return NULL;
			}
			/* error is -errno, or 0 for an ACK. */
			*err = e->error;
			return NULL;
		}
		*err = 0;
		return h;
	}
	if (n && n != (int)len)
		*err = -EBADMSG;
	return NULL;
}

int neigh_nl_parse_route(const void *buf, size_t len, uint32_t seq, int family,
			 const uint8_t dst[16], struct neigh_route *out)
{
	const struct nlmsghdr *h;
	const struct rtmsg *rt;
	const struct rtattr *a;
	bool gw = false;
	int err, n;

	h = neigh_nl_find(buf, len, seq, &err);
	if (!h)
		return err ? err : -EBADMSG;
	if (h->nlmsg_type != RTM_NEWROUTE ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return -EBADMSG;
	rt = NLMSG_DATA(h);
	memset(out, 0, sizeof(*out));
	memcpy(out->nexthop, dst, neigh_nl_alen(family));
	n = (int)RTM_PAYLOAD(h);
	for (a = RTM_RTA(rt); RTA_OK(a, n); a = RTA_NEXT(a, n)) {
		if (a->rta_type == RTA_OIF &&
		    RTA_PAYLOAD(a) >= sizeof(uint32_t))
			memcpy(&out->oif, RTA_DATA(a), sizeof(uint32_t));
		else if (a->rta_type == RTA_GATEWAY &&
			 RTA_PAYLOAD(a) == neigh_nl_alen(family)) {
			memcpy(out->nexthop, RTA_DATA(a), RTA_PAYLOAD(a));
			gw = true;
		}
	}
	switch (rt->rtm_type) {
	case RTN_LOCAL:
		/* The kernel loops it back (rxe on lo): no neighbour. */
		out->local = true;
		memset(out->nexthop, 0, sizeof(out->nexthop));
		return 0;
	case RTN_UNICAST:
		(void)gw;
		return 0;
	default:
		/* unreachable, blackhole, prohibit, ...: no way there */
		return -ENETUNREACH;
	}
}

int neigh_nl_parse_event(const void *msg, size_t len, int *family, int *ifindex,
			 uint8_t addr[16], int *state, bool *deleted)
{
	const struct nlmsghdr *h = msg;
	const struct ndmsg *nd;
	const struct rtattr *a;
	bool have = false;
	int n;

	if (len < sizeof(*h) || h->nlmsg_len > len ||
	    (h->nlmsg_type != RTM_NEWNEIGH && h->nlmsg_type != RTM_DELNEIGH) ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)))
		return -ENOMSG;
	nd = NLMSG_DATA(h);
	if (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6)
		return -ENOMSG;
	memset(addr, 0, 16);
	n = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (a = (const struct rtattr *)((const uint8_t *)nd +
					 NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, n); a = RTA_NEXT(a, n))
		if (a->rta_type == NDA_DST &&
		    RTA_PAYLOAD(a) == neigh_nl_alen(nd->ndm_family)) {
			memcpy(addr, RTA_DATA(a), RTA_PAYLOAD(a));
			have = true;
		}
	if (!have)
		return -ENOMSG;
	*family = nd->ndm_family;
	*ifindex = nd->ndm_ifindex;
	*state = nd->ndm_state;
	*deleted = h->nlmsg_type == RTM_DELNEIGH;
	return 0;
}

int neigh_nl_parse_neigh(const void *buf, size_t len, uint32_t seq, int *state)
{
	const struct nlmsghdr *h;
	uint8_t addr[16];
	int err, family, ifindex;
	bool deleted;

	h = neigh_nl_find(buf, len, seq, &err);
	if (!h)
		return err ? err : -EBADMSG;
	err = neigh_nl_parse_event(h, h->nlmsg_len, &family, &ifindex, addr,
				   state, &deleted);
	return err ? -EBADMSG : 0;
}

/* The sockets. */

static uint64_t neigh_nl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Send one request and read its answer, which the kernel queued during
 * sendto() (see the top of the file). Returns the bytes read or -errno.
 */
static int neigh_nl_ask(struct neigh_nl *nl, size_t len, uint32_t seq)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	int err;

	if (!len)
		return -EMSGSIZE;
	if (sendto(nl->qfd, nl->buf, len, 0, (struct sockaddr *)&to,
		   sizeof(to)) < 0)
		return -errno;
	for (;;) {
		ssize_t r =
			recv(nl->qfd, nl->buf, sizeof(nl->buf), MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* Skip what an earlier, abandoned query left behind. */
		neigh_nl_find(nl->buf, (size_t)r, seq, &err);
		if (err != -ENOMSG)
			return (int)r;
	}
}

static int neigh_nl_route(void *ctx, const struct neigh_dst *d,
			  struct neigh_route *out)
{
	struct neigh_nl *nl = ctx;
	uint32_t seq = ++nl->seq;
	int r = neigh_nl_ask(
		nl, neigh_nl_getroute(nl->buf, sizeof(nl->buf), seq, d), seq);

	if (r < 0)
		return r;
	return neigh_nl_parse_route(nl->buf, (size_t)r, seq, d->family, d->dst,
				    out);
}

static int neigh_nl_state(void *ctx, int family, int ifindex,
			  const uint8_t addr[16])
{
	struct neigh_nl *nl = ctx;
	uint32_t seq = ++nl->seq;
	int state = 0, r;

	r = neigh_nl_ask(nl,
			 neigh_nl_getneigh(nl->buf, sizeof(nl->buf), seq,
					   family, ifindex, addr),
			 seq);
	if (r < 0)
		return r;
	r = neigh_nl_parse_neigh(nl->buf, (size_t)r, seq, &state);
	/* No entry at all: nobody has asked for this neighbour yet. */
	if (r == -ENOENT)
		return 0;
	return r ? r : state;
}

static int neigh_nl_solicit(void *ctx, int family, int ifindex,
			    const uint8_t addr[16])
{
	struct neigh_nl *nl = ctx;
	uint32_t seq = ++nl->seq;
	int r, err;

	r = neigh_nl_ask(nl,
			 neigh_nl_use(nl->buf, sizeof(nl->buf), seq, family,
				      ifindex, addr),
			 seq);
	if (r < 0)
		return r;
	/* The ACK: 0, or why the kernel refused. */
	neigh_nl_find(nl->buf, (size_t)r, seq, &err);
	return err;
}

static void neigh_nl_release(void *ctx, uint32_t tag, const void *item,
			     size_t len, int err)
{
	struct neigh_nl *nl = ctx;

	nl->release(nl->ctx, tag, item, len, err);
}

static void neigh_nl_arm(void *ctx, uint64_t at)
{
	struct neigh_nl *nl = ctx;
	uint64_t now;

	ev_timer_stop(nl->loop, &nl->cap);
	if (at == NEIGH_NEVER)
		return;
	now = neigh_nl_now();
	ev_timer_set(&nl->cap, at > now ? (double)(at - now) / 1e9 : 0., 0.);
	ev_timer_start(nl->loop, &nl->cap);
}

static void neigh_nl_cap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct neigh_nl *nl = container_of(w, struct neigh_nl, cap);

	neigh_run_timers(nl->core, neigh_nl_now());
}

static void neigh_nl_event_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct neigh_nl *nl = container_of(w, struct neigh_nl, eio);

	for (;;) {
		ssize_t r =
			recv(nl->efd, nl->buf, sizeof(nl->buf), MSG_DONTWAIT);
		const struct nlmsghdr *h = (const void *)nl->buf;
		int n;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS)
				neigh_on_overrun(nl->core, neigh_nl_now());
			return;
		}
		n = (int)r;
		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			int family, ifindex, state;
			uint8_t addr[16];
			bool deleted;

			if (!neigh_nl_parse_event(h, h->nlmsg_len, &family,
						  &ifindex, addr, &state,
						  &deleted))
				neigh_on_event(nl->core, family, ifindex, addr,
					       state, deleted, neigh_nl_now());
		}
	}
}

static int neigh_nl_socket(uint32_t groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = groups };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_ROUTE);
	int sz = NEIGH_NL_RCVBUF;

	if (fd < 0)
		return -1;
	if (groups)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

struct neigh *neigh_open(struct ev_loop *loop, neigh_release_fn release,
			 void *ctx)
{
	static const struct neigh_ops ops = {
		.route = neigh_nl_route,
		.state = neigh_nl_state,
		.solicit = neigh_nl_solicit,
		.release = neigh_nl_release,
		.arm = neigh_nl_arm,
	};
	struct neigh_nl *nl = calloc(1, sizeof(*nl));
	int e;

	if (!nl)
		return NULL;
	nl->loop = loop;
	nl->release = release;
	nl->ctx = ctx;
	nl->qfd = neigh_nl_socket(0);
	nl->efd = neigh_nl_socket(RTMGRP_NEIGH);
	nl->core = neigh_core_new(&ops, nl);
	if (nl->qfd < 0 || nl->efd < 0 || !nl->core) {
		e = nl->core ? errno : ENOMEM;
		if (nl->qfd >= 0)
			close(nl->qfd);
		if (nl->efd >= 0)
			close(nl->efd);
		neigh_core_free(nl->core);
		free(nl);
		errno = e;
		return NULL;
	}
	ev_io_init(&nl->eio, neigh_nl_event_cb, nl->efd, EV_READ);
	ev_io_start(loop, &nl->eio);
	ev_timer_init(&nl->cap, neigh_nl_cap_cb, 0., 0.);
	return nl->core;
}

void neigh_close(struct neigh *nb)
{
	struct neigh_nl *nl;

	if (!nb)
		return;
	nl = neigh_core_ctx(nb);
	ev_io_stop(nl->loop, &nl->eio);
	ev_timer_stop(nl->loop, &nl->cap);
	neigh_core_free(nb);
	close(nl->qfd);
	close(nl->efd);
	free(nl);
}
