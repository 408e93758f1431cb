// SPDX-License-Identifier: MIT
/*
 * Address resolution as the kernel's rdma_cm does it on RoCE (rc_addr.h).
 *
 * Two sources of truth:
 *   - the devices' GID tables (verbs): the kernel fills a RoCE port's table
 *     from the IP addresses of the netdevs on it, and each entry names the
 *     netdev it came from, so "which port holds address A on netdev N" is
 *     a search of the tables for GID(A) with ndev_ifindex N. Reading them
 *     costs a few system calls per port, so the tables are kept between
 *     calls and read again when the kernel announces an address or link
 *     change (an rtnetlink group socket, drained without blocking on each
 *     call), and once more before a search answers "not found" (the
 *     kernel fills GID tables a moment after the address event);
 *   - the kernel's routing table (one RTM_GETROUTE): the output interface
 *     and preferred source that the kernel's own ip_route_output_key()
 *     lookup in rdma_resolve_addr would find, rules and all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>

#include <infiniband/ib.h>

#include "rc_addr.h"
#include "rdmacm.h"

/* The kernel gives lo this index in every network namespace. */
#define RC_LOOPBACK_IFINDEX 1
/* Room for one route answer (a few hundred bytes) or an error. */
#define RC_NL_BUF 4096
/* A guard only: the kernel queues its answer before sendmsg() returns. */
#define RC_NL_WAIT_S 1
#define RC_NL_TRIES 8

/* ------------------------------------------------------------------ */
/* Socket addresses and GIDs */

static const struct sockaddr_in6 *as_in6(const struct sockaddr *sa)
{
	return (const struct sockaddr_in6 *)(const void *)sa;
}

static const struct sockaddr_in *as_in4(const struct sockaddr *sa)
{
	return (const struct sockaddr_in *)(const void *)sa;
}

/* An IPv6 link-local address, whose scope id names its interface. */
static bool addr_is_ll(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LINKLOCAL(&as_in6(sa)->sin6_addr);
}

static bool gid_is_ll(const union ibv_gid *g)
{
	return g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80;
}

static uint16_t addr_port(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return as_in4(sa)->sin_port;
	case AF_INET6:
		return as_in6(sa)->sin6_port;
	}
	return 0;
}

int rc_addr_to_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	if (!sa || !gid)
		return -EINVAL;
	/* proto/rdmacm.c owns the IP <-> GID mapping (the CMA header's). */
	return rdmacm_gid_from_addr(gid->raw, sa);
}

void rc_gid_to_addr(const union ibv_gid *gid, uint16_t port_be,
		    uint32_t scope_id, struct sockaddr_storage *out)
{
	rdmacm_addr_from_gid(gid->raw, out);
	if (out->ss_family == AF_INET) {
		((struct sockaddr_in *)out)->sin_port = port_be;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

		in6->sin6_port = port_be;
		if (gid_is_ll(gid))
			in6->sin6_scope_id = scope_id;
	}
}

socklen_t rc_addr_len(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	}
	return 0;
}

bool rc_addr_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];

	if (!sa)
		return false;
	switch (sa->sa_family) {
	case AF_INET:
		return as_in4(sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	case AF_INET6:
		return IN6_IS_ADDR_UNSPECIFIED(&as_in6(sa)->sin6_addr);
	case AF_IB:
		return !memcmp(&((const struct sockaddr_ib *)(const void *)sa)
					->sib_addr,
			       zero, sizeof(zero));
	}
	return false;
}

const char *rc_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];

	if (!buf || !len)
		return buf;
	if (!sa) {
		snprintf(buf, len, "(none)");
		return buf;
	}
	switch (sa->sa_family) {
	case AF_INET:
		inet_ntop(AF_INET, &as_in4(sa)->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(as_in4(sa)->sin_port));
		return buf;
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = as_in6(sa);

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		if (!in6->sin6_scope_id)
			snprintf(buf, len, "[%s]:%u", host,
				 ntohs(in6->sin6_port));
		else if (if_indextoname(in6->sin6_scope_id, ifname))
			snprintf(buf, len, "[%s%%%s]:%u", host, ifname,
				 ntohs(in6->sin6_port));
		else
			snprintf(buf, len, "[%s%%%u]:%u", host,
				 in6->sin6_scope_id, ntohs(in6->sin6_port));
		return buf;
	}
	case AF_IB: {
		const struct sockaddr_ib *ib =
			(const struct sockaddr_ib *)(const void *)sa;

		inet_ntop(AF_INET6, &ib->sib_addr, host, sizeof(host));
		snprintf(buf, len, "ib[%s] sid 0x%016llx", host,
			 (unsigned long long)be64toh(ib->sib_sid));
		return buf;
	}
	}
	snprintf(buf, len, "(family %u)", sa->sa_family);
	return buf;
}

/* ------------------------------------------------------------------ */
/* GID tables */

/* The valid GID entries of every port of ctxs[0..n), in order. */
struct gid_set {
	struct ibv_gid_entry *e;
	size_t n;
	size_t *end; /* end[k]: one past the last entry of ctxs[k] */
};

static void gid_set_free(struct gid_set *s)
{
	free(s->e);
	free(s->end);
}

/* How many GID entries ctx can have: the sum of its ports' table sizes. */
static size_t ctx_gid_cap(struct ibv_context *ctx)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	size_t cap = 0;

	if (!ctx || ibv_query_device(ctx, &da))
		return 0;
	for (unsigned int p = 1; p <= da.phys_port_cnt; p++)
		if (!ibv_query_port(ctx, (uint8_t)p, &pa) && pa.gid_tbl_len > 0)
			cap += (size_t)pa.gid_tbl_len;
	return cap;
}

/*
 * ctx's table entry by entry, where ibv_query_gid_table fails (a provider
 * or kernel without it and without libibverbs' own sysfs fallback).
 */
static size_t ctx_gids_one_by_one(struct ibv_context *ctx,
				  struct ibv_gid_entry *e, size_t cap)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	size_t k = 0;

	if (ibv_query_device(ctx, &da))
		return 0;
	for (unsigned int p = 1; p <= da.phys_port_cnt; p++) {
		if (ibv_query_port(ctx, (uint8_t)p, &pa))
			continue;
		for (int i = 0; i < pa.gid_tbl_len && k < cap; i++) {
			static const union ibv_gid zero;

			/* ENODATA: an empty slot; other errors: skip it too. */
			if (ibv_query_gid_ex(ctx, p, (uint32_t)i, &e[k], 0))
				continue;
			if (memcmp(&e[k].gid, &zero, sizeof(zero)))
				k++;
		}
	}
	return k;
}

/*
 * A device that cannot be queried (being removed, say) holds no address:
 * it adds no entries rather than failing the search.
 */
static int gid_set_read(struct gid_set *s, struct ibv_context *const *ctxs,
			int n)
{
	size_t cap = 0, *caps;

	memset(s, 0, sizeof(*s));
	if (n <= 0)
		return 0;
	caps = calloc((size_t)n, sizeof(*caps));
	s->end = calloc((size_t)n, sizeof(*s->end));
	if (!caps || !s->end)
		goto nomem;
	for (int k = 0; k < n; k++)
		cap += caps[k] = ctx_gid_cap(ctxs[k]);
	if (cap) {
		s->e = calloc(cap, sizeof(*s->e));
		if (!s->e)
			goto nomem;
	}
	for (int k = 0; k < n; k++) {
		ssize_t got = 0;

		if (caps[k]) {
			got = ibv_query_gid_table(ctxs[k], s->e + s->n, caps[k],
						  0);
			if (got < 0)
				got = (ssize_t)ctx_gids_one_by_one(
					ctxs[k], s->e + s->n, caps[k]);
		}
		s->n += (size_t)got;
		s->end[k] = s->n;
	}
	free(caps);
	return 0;
nomem:
	free(caps);
	gid_set_free(s);
	return -ENOMEM;
}

/*
 * What the kernel announced: one rtnetlink socket in the address, link,
 * route and rule groups, drained without blocking when a cache is asked;
 * any message (or an overrun) is a change and moves the generation on,
 * which makes every kept answer (GID tables, routes) stale. Without the
 * socket every call is a change: nothing is kept.
 */
static struct {
	pthread_mutex_t mu;
	int fd; /* or -1 */
	bool tried;
	uint64_t gen;
} watch = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

#define RC_GRP(g) (1u << ((g)-1))

/* The generation now; 0 never comes back (0: "nothing kept"). */
static uint64_t net_gen(void)
{
	char buf[4096];
	uint64_t g;

	pthread_mutex_lock(&watch.mu);
	if (!watch.tried) {
		struct sockaddr_nl sa = {
			.nl_family = AF_NETLINK,
			.nl_groups = RC_GRP(RTNLGRP_LINK) |
				     RC_GRP(RTNLGRP_IPV4_IFADDR) |
				     RC_GRP(RTNLGRP_IPV6_IFADDR) |
				     RC_GRP(RTNLGRP_IPV4_ROUTE) |
				     RC_GRP(RTNLGRP_IPV6_ROUTE) |
				     RC_GRP(RTNLGRP_IPV4_RULE) |
				     RC_GRP(RTNLGRP_IPV6_RULE),
		};

		watch.tried = true;
		watch.fd = socket(AF_NETLINK,
				  SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
				  NETLINK_ROUTE);
		if (watch.fd >= 0 &&
		    bind(watch.fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(watch.fd);
			watch.fd = -1;
		}
		watch.gen++;
	} else if (watch.fd < 0) {
		watch.gen++;
	} else {
		/* ENOBUFS (overrun) counts as a change too. */
		for (;;) {
			ssize_t r =
				recv(watch.fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (r > 0 || (r < 0 && errno == ENOBUFS)) {
				watch.gen++;
				continue;
			}
			break;
		}
	}
	g = watch.gen;
	pthread_mutex_unlock(&watch.mu);
	return g;
}

/* The tables as last read, for the same contexts, until a change. */
static struct {
	pthread_mutex_t mu;
	struct gid_set s;
	struct ibv_context *ctxs[64];
	int n; /* -1: nothing kept */
	uint64_t gen; /* net_gen() when read */
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER, .n = -1 };

/*
 * The tables of ctxs, lent under cache.mu until gid_set_put(): the kept
 * ones, or read afresh when fresh, on a change or for other contexts.
 * Nothing is copied (the tables of two rxe devices are 64 kB, and a copy
 * per rdma_resolve_addr was most of its cost). NULL (and the lock not
 * held) on failure, with *err.
 */
static const struct gid_set *gid_set_get(struct ibv_context *const *ctxs, int n,
					 bool fresh, int *err)
{
	uint64_t gen = net_gen();
	int max = (int)(sizeof(cache.ctxs) / sizeof(cache.ctxs[0]));

	pthread_mutex_lock(&cache.mu);
	if (gen != cache.gen || fresh || n != cache.n || n > max ||
	    (n && memcmp(cache.ctxs, ctxs, (size_t)n * sizeof(*ctxs)))) {
		if (cache.n >= 0)
			gid_set_free(&cache.s);
		cache.n = -1;
		*err = gid_set_read(&cache.s, ctxs, n);
		if (*err) {
			pthread_mutex_unlock(&cache.mu);
			return NULL;
		}
		if (n <= max) {
			if (n)
				memcpy(cache.ctxs, ctxs,
				       (size_t)n * sizeof(*ctxs));
			cache.n = n;
			cache.gen = gen;
		}
	}
	return &cache.s;
}

static void gid_set_put(void)
{
	if (cache.n < 0) {
		/* Not kept (too many contexts): the lent set was the read. */
		gid_set_free(&cache.s);
		memset(&cache.s, 0, sizeof(cache.s));
	}
	pthread_mutex_unlock(&cache.mu);
}

static struct ibv_context *gid_set_ctx(const struct gid_set *s,
				       struct ibv_context *const *ctxs, int n,
				       size_t i)
{
	for (int k = 0; k < n; k++)
		if (i < s->end[k])
			return ctxs[k];
	return NULL;
}

void rc_addr_warm(struct ibv_context *const *ctxs, int n)
{
	int err;

	if (gid_set_get(ctxs, n, false, &err))
		gid_set_put();
}

static bool gid_type_roce(uint32_t t)
{
	return t == IBV_GID_TYPE_ROCE_V1 || t == IBV_GID_TYPE_ROCE_V2;
}

int rc_addr_pick(const struct ibv_gid_entry *tab, size_t n,
		 const union ibv_gid *gid, uint32_t ifindex)
{
	bool must_be_one = !ifindex && gid_is_ll(gid);
	uint32_t seen_ndev = 0;
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		const struct ibv_gid_entry *e = &tab[i];

		if (!gid_type_roce(e->gid_type) ||
		    memcmp(&e->gid, gid, sizeof(*gid)) ||
		    (ifindex && e->ndev_ifindex != ifindex))
			continue;
		/* The same link-local address on two links: which one? */
		if (must_be_one) {
			if (best >= 0 && e->ndev_ifindex != seen_ndev)
				return -EINVAL;
			seen_ndev = e->ndev_ifindex;
		}
		/*
		 * rdma_cm looks for the GID of the port's default_roce_mode,
		 * RoCE v2 wherever the port has it: v2 first, v1 otherwise.
		 */
		if (best < 0 || (tab[best].gid_type != IBV_GID_TYPE_ROCE_V2 &&
				 e->gid_type == IBV_GID_TYPE_ROCE_V2))
			best = (long)i;
	}
	return best < 0 ? -EADDRNOTAVAIL : (int)best;
}

/*
 * *w from entry i of s, for local address addr (its port replaced by
 * port_be; a link-local one gets the entry's netdev as scope id if it has
 * none).
 */
static void where_fill(struct rc_where *w, const struct gid_set *s, size_t i,
		       struct ibv_context *const *ctxs, int n,
		       const struct sockaddr *addr, uint16_t port_be)
{
	const struct ibv_gid_entry *e = &s->e[i];

	memset(w, 0, sizeof(*w));
	w->ctx = gid_set_ctx(s, ctxs, n, i);
	w->port_num = (uint8_t)e->port_num;
	w->gid_index = (uint16_t)e->gid_index;
	w->gid_type = e->gid_type;
	w->sgid = e->gid;
	w->ifindex = (int)e->ndev_ifindex;
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&w->src;

		in4->sin_family = AF_INET;
		in4->sin_addr = as_in4(addr)->sin_addr;
		in4->sin_port = port_be;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&w->src;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = as_in6(addr)->sin6_addr;
		in6->sin6_port = port_be;
		in6->sin6_flowinfo = as_in6(addr)->sin6_flowinfo;
		if (addr_is_ll(addr))
			in6->sin6_scope_id =
				as_in6(addr)->sin6_scope_id ?
					as_in6(addr)->sin6_scope_id :
					e->ndev_ifindex;
	}
}

/* The entry for GID(addr) on netdev ifindex (0: any), into *w. */
static int where_find(struct ibv_context *const *ctxs, int n,
		      const struct sockaddr *addr, uint32_t ifindex,
		      uint16_t port_be, struct rc_where *w)
{
	const struct gid_set *s;
	union ibv_gid gid;
	int ret = rc_addr_to_gid(addr, &gid);

	if (ret)
		return ret;
	for (int fresh = 0; fresh < 2; fresh++) {
		s = gid_set_get(ctxs, n, fresh, &ret);
		if (!s)
			return ret;
		ret = rc_addr_pick(s->e, s->n, &gid, ifindex);
		if (ret >= 0 || fresh)
			break;
		gid_set_put();
	}
	if (ret >= 0) {
		where_fill(w, s, (size_t)ret, ctxs, n, addr, port_be);
		ret = 0;
	}
	gid_set_put();
	return ret;
}

int rc_addr_local(struct ibv_context *const *ctxs, int n,
		  const struct sockaddr *sa, struct rc_where *w)
{
	if (!sa || !w || n < 0 || (n && !ctxs))
		return -EINVAL;
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (rc_addr_any(sa))
		return -EINVAL;
	/*
	 * rdma_cm translates the address to its netdev (ip_dev_find,
	 * ipv6_chk_addr) and looks for the GID on that netdev; the GID
	 * tables already say which netdev each address came from. A
	 * link-local address is on the netdev its scope id names.
	 */
	return where_find(ctxs, n, sa,
			  addr_is_ll(sa) ? as_in6(sa)->sin6_scope_id : 0,
			  addr_port(sa), w);
}

/* ------------------------------------------------------------------ */
/* The routing table */

/* The address bytes of an AF_INET/AF_INET6 address, and their length. */
static size_t addr_bytes(const struct sockaddr *sa, const void **p)
{
	switch (sa->sa_family) {
	case AF_INET:
		*p = &as_in4(sa)->sin_addr;
		return 4;
	case AF_INET6:
		*p = &as_in6(sa)->sin6_addr;
		return 16;
	}
	return 0;
}

static bool req_attr(uint8_t *buf, size_t cap, uint16_t type, const void *data,
		     size_t len)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(void *)buf;
	size_t at = NLMSG_ALIGN(nh->nlmsg_len);
	struct rtattr a = { .rta_len = (unsigned short)RTA_LENGTH(len),
			    .rta_type = type };

	if (at + RTA_SPACE(len) > cap)
		return false;
	memset(buf + at, 0, RTA_SPACE(len));
	memcpy(buf + at, &a, sizeof(a));
	memcpy(buf + at + RTA_LENGTH(0), data, len);
	nh->nlmsg_len = (uint32_t)(at + RTA_SPACE(len));
	return true;
}

int rc_addr_route_req(void *buf, size_t cap, uint32_t seq,
		      const struct sockaddr *dst, const struct sockaddr *src,
		      int oif)
{
	struct nlmsghdr *nh = buf;
	struct rtmsg *rtm;
	const void *d, *s = NULL;
	size_t dlen = addr_bytes(dst, &d);
	/*
	 * rdma_cm's own lookup carries no uid (root's): ask with uid 0, so
	 * that uidrange rules answer for this process as they do for it.
	 */
	uint32_t uid = 0, ifx = (uint32_t)oif;

	if (!dlen ||
	    (src && (src->sa_family != dst->sa_family || !addr_bytes(src, &s))))
		return -EAFNOSUPPORT;
	if (cap < NLMSG_SPACE(sizeof(*rtm)))
		return -ENOBUFS;
	memset(buf, 0, NLMSG_SPACE(sizeof(*rtm)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*rtm));
	nh->nlmsg_type = RTM_GETROUTE;
	nh->nlmsg_flags = NLM_F_REQUEST;
	nh->nlmsg_seq = seq;
	rtm = NLMSG_DATA(nh);
	rtm->rtm_family = (uint8_t)dst->sa_family;
	rtm->rtm_dst_len = (uint8_t)(dlen * 8);
	if (!req_attr(buf, cap, RTA_DST, d, dlen))
		return -ENOBUFS;
	if (s) {
		rtm->rtm_src_len = (uint8_t)(dlen * 8);
		if (!req_attr(buf, cap, RTA_SRC, s, dlen))
			return -ENOBUFS;
	}
	if (oif && !req_attr(buf, cap, RTA_OIF, &ifx, sizeof(ifx)))
		return -ENOBUFS;
	if (!req_attr(buf, cap, RTA_UID, &uid, sizeof(uid)))
		return -ENOBUFS;
	return (int)nh->nlmsg_len;
}

/*
 * The route types that the kernel's lookup turns into errors (fib_props[]
 * in net/ipv4/fib_semantics.c): should one ever come back as an answer,
 * the route is as unusable as the error says.
 */
static int route_type_error(uint8_t type)
{
	switch (type) {
	case RTN_UNREACHABLE:
		return -EHOSTUNREACH;
	case RTN_PROHIBIT:
		return -EACCES;
	case RTN_BLACKHOLE:
		return -EINVAL;
	case RTN_THROW:
		return -ENETUNREACH;
	}
	return 0;
}

/* The attributes of one RTM_NEWROUTE (body at p, len bytes after its rtmsg). */
static int route_attrs(const uint8_t *p, size_t len, int af, struct rc_route *r)
{
	size_t alen = af == AF_INET ? 4 : 16;

	while (len >= sizeof(struct rtattr)) {
		struct rtattr a;
		const uint8_t *v = p + RTA_LENGTH(0);
		size_t vlen;

		memcpy(&a, p, sizeof(a));
		if (a.rta_len < sizeof(a) || a.rta_len > len)
			return -EBADMSG;
		vlen = a.rta_len - RTA_LENGTH(0);
		switch (a.rta_type) {
		case RTA_OIF:
			if (vlen < sizeof(uint32_t))
				return -EBADMSG;
			memcpy(&r->oif, v, sizeof(uint32_t));
			break;
		case RTA_PREFSRC:
			if (vlen != alen)
				return -EBADMSG;
			r->prefsrc.ss_family = (sa_family_t)af;
			if (af == AF_INET)
				memcpy(&((struct sockaddr_in *)&r->prefsrc)
						->sin_addr,
				       v, alen);
			else
				memcpy(&((struct sockaddr_in6 *)&r->prefsrc)
						->sin6_addr,
				       v, alen);
			break;
		case RTA_GATEWAY:
		case RTA_VIA:
			r->gateway = true;
			break;
		}
		if (RTA_ALIGN(a.rta_len) >= len)
			break;
		p += RTA_ALIGN(a.rta_len);
		len -= RTA_ALIGN(a.rta_len);
	}
	return 0;
}

int rc_addr_route_parse(const void *buf, size_t len, uint32_t seq, int af,
			struct rc_route *r)
{
	const uint8_t *p = buf;
	size_t off = 0;

	while (len - off >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr h;
		struct rtmsg rtm;
		struct nlmsgerr err;

		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len - off)
			return -EBADMSG;
		if (h.nlmsg_seq != seq) {
			off += NLMSG_ALIGN(h.nlmsg_len);
			if (off > len)
				break;
			continue;
		}
		if (h.nlmsg_type == NLMSG_ERROR) {
			if (h.nlmsg_len < NLMSG_LENGTH(sizeof(err)))
				return -EBADMSG;
			memcpy(&err, p + off + NLMSG_HDRLEN, sizeof(err));
			/* error 0 is an ACK, which was not asked for. */
			return err.error < 0 ? err.error : -EBADMSG;
		}
		if (h.nlmsg_type != RTM_NEWROUTE ||
		    h.nlmsg_len < NLMSG_LENGTH(sizeof(rtm)))
			return -EBADMSG;
		memcpy(&rtm, p + off + NLMSG_HDRLEN, sizeof(rtm));
		if (rtm.rtm_family != af)
			return -EBADMSG;
		memset(r, 0, sizeof(*r));
		r->type = rtm.rtm_type;
		if (route_type_error(r->type))
			return route_type_error(r->type);
		return route_attrs(p + off + NLMSG_SPACE(sizeof(rtm)),
				   h.nlmsg_len - NLMSG_SPACE(sizeof(rtm)), af,
				   r);
	}
	return -EAGAIN;
}

/* One rtnetlink socket for the lookups, kept (a socket and its close
 * per lookup were most of rdma_resolve_addr's cost); each request has its
 * own sequence number, so an answer that came too late for an earlier
 * call is skipped. A forked child opens its own. */
static struct {
	pthread_mutex_t mu;
	int fd;
	pid_t pid;
	uint32_t seq;
} nl = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static int nl_socket(void)
{
	struct timeval wait = { .tv_sec = RC_NL_WAIT_S };

	if (nl.fd >= 0 && nl.pid == getpid())
		return nl.fd;
	nl.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl.fd < 0)
		return -errno;
	if (setsockopt(nl.fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait))) {
		int e = errno;

		close(nl.fd);
		nl.fd = -1;
		return -e;
	}
	nl.pid = getpid();
	return nl.fd;
}

static int route_lookup(int fd, uint32_t seq, const struct sockaddr *dst,
			const struct sockaddr *src, int oif,
			struct rc_route *r);

/*
 * The kernel's answers, kept until net_gen() says the routes, rules,
 * addresses or links changed: cmtime resolves the same destination for
 * every id, and an RTM_GETROUTE round trip per call was, with the GID
 * table copy, what made rdma_resolve_addr five times the kernel's. Only
 * successful answers are kept; a key is the lookup's inputs.
 */
#define RC_ROUTES 16

struct route_key {
	sa_family_t af;
	uint8_t dst[16], src[16];
	bool has_src;
	uint32_t scope; /* a link-local destination's */
	int oif;
};

static struct {
	struct route_key k[RC_ROUTES];
	struct rc_route r[RC_ROUTES];
	uint64_t gen; /* of every kept answer; 0: none kept */
	unsigned int n, next;
} routes;

static void route_key_make(struct route_key *k, const struct sockaddr *dst,
			   const struct sockaddr *src, int oif)
{
	const void *p = NULL;
	size_t len;

	memset(k, 0, sizeof(*k));
	k->af = dst->sa_family;
	len = addr_bytes(dst, &p);
	memcpy(k->dst, p, len);
	if (addr_is_ll(dst))
		k->scope = as_in6(dst)->sin6_scope_id;
	if (src) {
		len = addr_bytes(src, &p);
		memcpy(k->src, p, len);
		k->has_src = true;
	}
	k->oif = oif;
}

/* Under nl.mu. */
static bool route_cached(const struct route_key *k, uint64_t gen,
			 struct rc_route *r)
{
	if (routes.gen != gen) {
		routes.n = 0;
		routes.next = 0;
		routes.gen = gen;
		return false;
	}
	for (unsigned int i = 0; i < routes.n; i++)
		if (!memcmp(&routes.k[i], k, sizeof(*k))) {
			*r = routes.r[i];
			return true;
		}
	return false;
}

static void route_keep(const struct route_key *k, const struct rc_route *r)
{
	unsigned int i = routes.next;

	routes.next = (routes.next + 1) % RC_ROUTES;
	if (routes.n < RC_ROUTES)
		routes.n++;
	routes.k[i] = *k;
	routes.r[i] = *r;
}

int rc_addr_route_lookup(const struct sockaddr *dst, const struct sockaddr *src,
			 int oif, struct rc_route *r)
{
	struct route_key k;
	uint64_t gen;
	int fd, ret;

	/* rc_addr_route_req's refusal, before a key is made of them. */
	if ((dst->sa_family != AF_INET && dst->sa_family != AF_INET6) ||
	    (src && src->sa_family != dst->sa_family))
		return -EAFNOSUPPORT;
	route_key_make(&k, dst, src, oif);
	gen = net_gen();
	pthread_mutex_lock(&nl.mu);
	if (route_cached(&k, gen, r)) {
		pthread_mutex_unlock(&nl.mu);
		return 0;
	}
	fd = nl_socket();
	ret = fd < 0 ? fd : route_lookup(fd, ++nl.seq, dst, src, oif, r);
	if (fd >= 0 && ret < 0 && ret != -ETIMEDOUT && ret != -ENETUNREACH &&
	    ret != -EHOSTUNREACH && ret != -EACCES && ret != -EINVAL &&
	    ret != -EAFNOSUPPORT) {
		/* The socket itself failed: a new one next time. */
		close(fd);
		nl.fd = -1;
	}
	if (!ret)
		route_keep(&k, r);
	pthread_mutex_unlock(&nl.mu);
	return ret;
}

static int route_lookup(int fd, uint32_t seq, const struct sockaddr *dst,
			const struct sockaddr *src, int oif, struct rc_route *r)
{
	union {
		struct nlmsghdr h; /* aligns the buffer for the kernel's */
		uint8_t b[RC_NL_BUF];
	} u;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int len, ret = -ETIMEDOUT;

	len = rc_addr_route_req(u.b, sizeof(u.b), seq, dst, src, oif);
	if (len < 0)
		return len;
	if (sendto(fd, u.b, (size_t)len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) != len)
		return -errno;
	for (int tries = 0; tries < RC_NL_TRIES; tries++) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = u.b, .iov_len = sizeof(u.b) };
		struct msghdr m = { .msg_name = &from,
				    .msg_namelen = sizeof(from),
				    .msg_iov = &iov,
				    .msg_iovlen = 1 };
		ssize_t got = recvmsg(fd, &m, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = errno == EAGAIN || errno == EWOULDBLOCK ?
				      -ETIMEDOUT :
				      -errno;
			break;
		}
		if (m.msg_flags & MSG_TRUNC) {
			ret = -EMSGSIZE;
			break;
		}
		if (from.nl_pid != 0) /* not from the kernel */
			continue;
		ret = rc_addr_route_parse(u.b, (size_t)got, seq, dst->sa_family,
					  r);
		if (ret != -EAGAIN)
			break;
		ret = -ETIMEDOUT;
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* rdma_resolve_addr */

/*
 * A wildcard destination: rdma_cm's loopback (cma_resolve_loopback). An
 * unbound id takes the first active port (else the first device's port 1),
 * its GID index 0, and the loopback address as its source; the destination
 * GID is the source GID.
 */
static int route_loopback(struct ibv_context *const *ctxs, int n,
			  const struct sockaddr *dst, uint16_t port_be,
			  struct rc_where *w)
{
	struct ibv_context *ctx = n > 0 ? ctxs[0] : NULL;
	struct ibv_gid_entry e;
	uint8_t port = 1;
	int ret;

	for (int k = 0; k < n; k++) {
		struct ibv_device_attr da;
		struct ibv_port_attr pa;

		if (!ctxs[k] || ibv_query_device(ctxs[k], &da))
			continue;
		for (unsigned int p = 1; p <= da.phys_port_cnt; p++)
			if (!ibv_query_port(ctxs[k], (uint8_t)p, &pa) &&
			    pa.state == IBV_PORT_ACTIVE) {
				ctx = ctxs[k];
				port = (uint8_t)p;
				goto found;
			}
	}
found:
	if (!ctx)
		return -ENODEV;
	ret = ibv_query_gid_ex(ctx, port, 0, &e, 0);
	if (ret)
		return -ret;
	memset(w, 0, sizeof(*w));
	w->ctx = ctx;
	w->port_num = port;
	w->gid_index = 0;
	w->gid_type = e.gid_type;
	w->sgid = e.gid;
	w->ifindex = (int)e.ndev_ifindex;
	if (dst->sa_family == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&w->src;

		in4->sin_family = AF_INET;
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		in4->sin_port = port_be;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&w->src;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		in6->sin6_port = port_be;
	}
	return 0;
}

int rc_addr_route_pick(const struct ibv_gid_entry *tab, size_t n,
		       const struct sockaddr *dst, const struct rc_route *rt,
		       struct sockaddr_storage *src)
{
	union ibv_gid dg, sg;
	int i;

	if (!rt->prefsrc.ss_family)
		return -EADDRNOTAVAIL; /* the kernel found no source */
	if (rc_addr_to_gid(dst, &dg) ||
	    rc_addr_to_gid((const struct sockaddr *)&rt->prefsrc, &sg))
		return -EAFNOSUPPORT;
	*src = rt->prefsrc;
	if (rt->type == RTN_LOCAL || rt->oif == RC_LOOPBACK_IFINDEX) {
		/*
		 * rdma_cm does not run RDMA over lo: a route to a local
		 * address is a loopback connection on the device whose
		 * netdev holds dst. The source is normally dst itself; else
		 * it is on dst's netdev too (the kernel acquires the device
		 * of the source on that bound_dev_if).
		 */
		i = rc_addr_pick(tab, n, &dg,
				 addr_is_ll(dst) ? as_in6(dst)->sin6_scope_id :
						   0);
		if (i >= 0 && memcmp(&dg, &sg, sizeof(sg)))
			i = rc_addr_pick(tab, n, &sg, tab[i].ndev_ifindex);
		return i;
	}
	if (rt->oif <= 0)
		return -ENETUNREACH;
	i = rc_addr_pick(tab, n, &sg, (uint32_t)rt->oif);
	if (i >= 0 && rt->gateway && tab[i].gid_type != IBV_GID_TYPE_ROCE_V2)
		return -ENETUNREACH; /* RoCE v1 does not cross routers */
	/* The answer's link-local source is on the route's link. */
	if (src->ss_family == AF_INET6)
		((struct sockaddr_in6 *)src)->sin6_scope_id = (uint32_t)rt->oif;
	return i;
}

/* rc_addr_route_pick over the tables of ctxs, into *w. */
static int route_where(struct ibv_context *const *ctxs, int n,
		       const struct sockaddr *dst, const struct rc_route *rt,
		       uint16_t port_be, struct rc_where *w)
{
	const struct gid_set *s;
	struct sockaddr_storage a;
	int i;

	for (int fresh = 0; fresh < 2; fresh++) {
		s = gid_set_get(ctxs, n, fresh, &i);
		if (!s)
			return i;
		i = rc_addr_route_pick(s->e, s->n, dst, rt, &a);
		if (i >= 0 || fresh)
			break;
		gid_set_put();
	}
	if (i >= 0) {
		where_fill(w, s, (size_t)i, ctxs, n, (struct sockaddr *)&a,
			   port_be);
		i = 0;
	}
	gid_set_put();
	return i;
}

int rc_addr_route(struct ibv_context *const *ctxs, int n,
		  const struct sockaddr *src, const struct sockaddr *dst,
		  struct rc_where *w, union ibv_gid *dgid)
{
	struct rc_route rt;
	union ibv_gid dg;
	bool bound;
	int oif = 0, ret = 0;

	if (!dst || !w || !dgid || n < 0 || (n && !ctxs))
		return -EINVAL;
	if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (src && src->sa_family == AF_UNSPEC)
		src = NULL;
	/* rdma_resolve_addr: the id's family must be the destination's. */
	if (src && src->sa_family != dst->sa_family)
		return -EINVAL;
	bound = src && !rc_addr_any(src);
	if (bound) {
		/*
		 * A source is bound first (rdma_bind_addr), and its netdev
		 * becomes the id's bound_dev_if: the lookup is made out of
		 * it, and the answer is the bound port.
		 */
		ret = rc_addr_local(ctxs, n, src, w);
		if (ret)
			return ret;
		oif = w->ifindex;
	} else if (addr_is_ll(dst)) {
		/* cma_bind_addr: the destination's scope is the link. */
		oif = (int)as_in6(dst)->sin6_scope_id;
		if (!oif)
			return -EINVAL;
	}
	if (rc_addr_any(dst)) {
		if (!bound)
			ret = route_loopback(ctxs, n, dst, addr_port(src), w);
		if (!ret)
			*dgid = w->sgid;
		return ret;
	}
	rc_addr_to_gid(dst, &dg);
	ret = rc_addr_route_lookup(dst, bound ? src : NULL, oif, &rt);
	if (ret)
		return ret;
	if (bound) {
		if (rt.gateway && w->gid_type != IBV_GID_TYPE_ROCE_V2)
			return -ENETUNREACH;
	} else {
		ret = route_where(ctxs, n, dst, &rt, addr_port(src), w);
		if (ret)
			return ret;
	}
	*dgid = dg;
	return 0;
}
