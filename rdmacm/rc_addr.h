/* SPDX-License-Identifier: MIT */
/*
 * librdmacm's address resolution, done as the kernel's rdma_cm does it on
 * RoCE (drivers/infiniband/core/cma.c and addr.c): which device port and GID
 * table entry carry a local IP address (rdma_bind_addr), and where traffic to
 * a destination leaves (rdma_resolve_addr), by asking the kernel's routing
 * table over rtnetlink and the devices' GID tables over verbs.
 *
 * Neighbour (ARP/ND) resolution is not done here: the daemon resolves the
 * destination MAC when it sends the REQ. Every call costs at most one
 * rtnetlink round trip (the kernel answers a route query inside the
 * sendmsg() that carries it), keeps no state between calls and is safe to
 * call from any thread.
 */
#ifndef CMD_RDMACM_RC_ADDR_H
#define CMD_RDMACM_RC_ADDR_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * librdmacm.so.1 is built with hidden visibility; the functions of its ABI
 * are marked with this (and listed in its version script).
 */
#ifndef RC_EXPORT
#define RC_EXPORT __attribute__((visibility("default")))
#endif

/*
 * Where a local address lives: the RDMA device port and GID table entry
 * that carry it.
 */
struct rc_where {
	struct ibv_context *ctx; /* one of the contexts the caller passed */
	uint8_t port_num; /* 1-based */
	uint16_t gid_index;
	uint32_t gid_type; /* enum ibv_gid_type (IB, ROCE_V1, ROCE_V2) */
	union ibv_gid sgid;
	int ifindex; /* the netdev carrying the GID (0 on IB) */
	/* The local address (port copied from the input, or 0). */
	struct sockaddr_storage src;
};

/*
 * The RoCE GID of an IP address: IPv4 a.b.c.d -> ::ffff:a.b.c.d; IPv6 as
 * is. -EAFNOSUPPORT for other families.
 */
int rc_addr_to_gid(const struct sockaddr *sa, union ibv_gid *gid);

/*
 * Back: a GID that is an IPv4-mapped address -> AF_INET, else AF_INET6
 * (link-local with scope_id as given); port (network order) copied in.
 */
void rc_gid_to_addr(const union ibv_gid *gid, uint16_t port_be,
		    uint32_t scope_id, struct sockaddr_storage *out);

/*
 * Length of a sockaddr of AF_INET/AF_INET6/AF_IB (sizeof struct
 * sockaddr_ib), 0 otherwise.
 */
socklen_t rc_addr_len(const struct sockaddr *sa);

/* Wildcard (INADDR_ANY / in6addr_any / an all-zero AF_IB address)? */
bool rc_addr_any(const struct sockaddr *sa);

/*
 * rdma_bind_addr: the device port owning local address sa (not a wildcard:
 * -EINVAL) among ctxs[0..n): the GID entry equal to sa's GID whose netdev
 * holds sa (for IPv6 link-local: the netdev of sa's sin6_scope_id, which
 * must be set or unambiguous, else -EINVAL). Prefers RoCE v2 over v1 for
 * the same address (the kernel's default_roce_mode). Searches the whole GID
 * table of every port (ibv_query_gid_table, ibv_query_gid_ex where that
 * fails). -EADDRNOTAVAIL when no device port holds it (the address may
 * still be a plain netdev address of a non-RDMA interface).
 */
int rc_addr_local(struct ibv_context *const *ctxs, int n,
		  const struct sockaddr *sa, struct rc_where *w);

/* Read the GID tables of ctxs[0..n) into the cache now, so that the first
 * rc_addr_local() finds them there. Failures are left for it to report. */
void rc_addr_warm(struct ibv_context *const *ctxs, int n);

/*
 * rdma_resolve_addr: where traffic from src (NULL or wildcard: the kernel
 * picks) to dst leaves, as rdma_cm does it: a route lookup in the kernel's
 * routing table (RTM_GETROUTE with dst, and src/oif when given; honours
 * policy routing, since it is the kernel answering), giving the output
 * interface and preferred source; a local dst (the lookup says RTN_LOCAL)
 * resolves to the device holding dst itself (loopback connections); then
 * rc_addr_local() of that source on that interface. dst's GID goes to
 * *dgid. A pinned src is bound first (rc_addr_local) and the lookup is made
 * from its netdev, as the kernel's bound_dev_if does; the answer is the
 * bound port.
 * IPv6 link-local dst: the scope id names the interface (required unless
 * src pins one); the source is that interface's link-local address.
 * A wildcard dst is rdma_cm's loopback: the bound port, or the first active
 * port of ctxs (else the first device's port 1) with its GID index 0 and the
 * loopback address as source (-ENODEV with no device); *dgid is then the
 * source GID.
 * Errors: -ENETUNREACH (no route; also a route through a gateway from a
 * port that has only a RoCE v1 GID, which cannot cross a router), the
 * kernel's other route errors as it gives them (-EHOSTUNREACH for an
 * unreachable route, -EACCES for prohibit, -EINVAL for blackhole),
 * -EADDRNOTAVAIL (the route's interface carries no RDMA GID: e.g. a plain
 * Ethernet NIC, or lo), -EAFNOSUPPORT, -EINVAL (a NULL dst, src and dst of
 * different families, a link-local dst with no interface). On an error *w
 * and *dgid are unspecified.
 */
int rc_addr_route(struct ibv_context *const *ctxs, int n,
		  const struct sockaddr *src, const struct sockaddr *dst,
		  struct rc_where *w, union ibv_gid *dgid);

/*
 * The text of an address for log lines ("10.0.0.1:7174",
 * "[fe80::1%veth0]:0"); always NUL-terminated, truncated to len.
 */
const char *rc_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/*
 * Below: rc_addr.c's internals, declared here for its unit tests only (not
 * part of the library's interface).
 */

/*
 * The entry of tab[0..n) that carries gid for rc_addr_local: RoCE entries
 * only, on netdev ifindex unless it is 0; the first RoCE v2 one, else the
 * first v1. With ifindex 0, an IPv6 link-local gid on two different netdevs
 * is ambiguous. Returns the index, -EADDRNOTAVAIL or -EINVAL (ambiguous).
 */
int rc_addr_pick(const struct ibv_gid_entry *tab, size_t n,
		 const union ibv_gid *gid, uint32_t ifindex);

/* What the kernel's routing table answered (RTM_NEWROUTE). */
struct rc_route {
	uint8_t type; /* RTN_* */
	bool gateway; /* RTA_GATEWAY or RTA_VIA: the route leaves via a router */
	int oif;
	struct sockaddr_storage prefsrc; /* ss_family 0: none given */
};

/*
 * The RTM_GETROUTE request for dst (from src and out of oif when they are
 * not NULL/0) into buf[0..cap), which is aligned as a struct nlmsghdr.
 * Returns its length, -EAFNOSUPPORT or -ENOBUFS. It asks as uid 0, as the
 * kernel's rdma_cm lookup does (its flow carries no uid).
 */
int rc_addr_route_req(void *buf, size_t cap, uint32_t seq,
		      const struct sockaddr *dst, const struct sockaddr *src,
		      int oif);

/*
 * The answer to request seq of family af in buf[0..len): 0 with *r filled,
 * the kernel's error (NLMSG_ERROR) as -errno, the error of an unusable route
 * type, -EAGAIN when buf holds no message of seq, or -EBADMSG.
 */
int rc_addr_route_parse(const void *buf, size_t len, uint32_t seq, int af,
			struct rc_route *r);

/*
 * For an unbound id: the entry of tab[0..n) that rc_addr_route answers for
 * the kernel's route rt to dst, and the source address (rt's preferred
 * source, a link-local one with its scope). A local route (RTN_LOCAL, or out
 * of lo) is the entry of dst's own GID; any other the entry of the source's
 * GID on the route's interface, RoCE v2 through a gateway. Returns the
 * index or -errno as rc_addr_route does.
 */
int rc_addr_route_pick(const struct ibv_gid_entry *tab, size_t n,
		       const struct sockaddr *dst, const struct rc_route *rt,
		       struct sockaddr_storage *src);

/* The kernel's route for dst: one RTM_GETROUTE round trip. */
int rc_addr_route_lookup(const struct sockaddr *dst, const struct sockaddr *src,
			 int oif, struct rc_route *r);

#endif
