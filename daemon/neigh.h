/* SPDX-License-Identifier: MIT */
/*
 * Neighbour resolution for RoCE sends, so that no umad write ever waits.
 *
 * On RoCE the kernel resolves the destination's MAC inside the umad write
 * (ib_mad -> rdma_create_ah -> ib_resolve_eth_dmac ->
 * rdma_addr_find_l2_eth_by_grh), and when the neighbour entry is not
 * NUD_VALID it waits for the resolution: up to ~1 s in which the daemon's
 * one thread serves nobody. This module asks the kernel first, over
 * rtnetlink, the way the kernel's own address resolution would: the route
 * from the source GID's netdev to the destination (RTM_GETROUTE), then the
 * next hop's neighbour entry (RTM_GETNEIGH). A local route, or a neighbour
 * in a NUD_VALID state, means the write will not wait: send now. Anything
 * else: the kernel is told to resolve (RTM_NEWNEIGH with NTF_USE, which
 * runs neigh_event_send() as an outgoing packet would) and the MAD waits
 * in its destination's queue until RTNLGRP_NEIGH says the entry became
 * valid (the queue is released in order) or failed, or NEIGH_CAP_NS passed
 * (every MAD held fails).
 *
 * Two halves:
 *   - the core (neigh.c): destinations, their queues, the verdicts and the
 *     one log line per failed destination. No I/O: it asks and tells
 *     through struct neigh_ops, so tests drive it with a fake kernel;
 *   - the rtnetlink side (neigh_nl.c): the messages (pure build/parse
 *     functions, unit tested), two non-blocking NETLINK_ROUTE sockets and
 *     the libev watchers. Raw netlink rather than libnl: four message
 *     types, and libnl's synchronous helpers would wait on the socket.
 *
 * Released or failed MADs are handed back through ops->release from the
 * loop (the event socket's watcher or the cap timer), never from inside
 * neigh_submit(): a caller inside the engine's send callback is never
 * called back.
 */
#ifndef CMD_NEIGH_H
#define CMD_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev_loop;

/*
 * How long a destination may stay unresolved before its MADs fail. The
 * kernel's own verdict normally comes first: ARP and ND give up after
 * mcast_solicit (3) probes retrans_time (1 s) apart, ~3 s, and report
 * NUD_FAILED on RTNLGRP_NEIGH. The cap only catches a verdict we missed
 * (an event socket overrun, a kernel tuned to probe for longer), so it is
 * generous: 5 s, still below the ~4-16 s a REQ announces it will wait.
 */
#define NEIGH_CAP_NS 5000000000ull
/*
 * A valid or local verdict is trusted for this long without asking again
 * (events that say an entry went bad drop it at once). Bounded so that a
 * missed event costs at most one such period of blocking risk.
 */
#define NEIGH_FRESH_NS 1000000000ull
/* MADs one destination holds, at most; beyond: -ENOBUFS. */
#define NEIGH_QUEUE_MAX 256
/* Destinations remembered at once (pending, or valid and fresh). */
#define NEIGH_MAX_DESTS 1024
#define NEIGH_LABEL_MAX 80 /* "<dev> port <n>" */
#define NEIGH_ITEM_MAX 512 /* bytes of one held item (a umad buffer) */

/* Returned by neigh_submit(): the item was copied and waits. */
#define NEIGH_HELD 1

/* linux/neighbour.h NUD_* states, as the kernel reports them. */
#define NEIGH_NUD_INCOMPLETE 0x01
#define NEIGH_NUD_REACHABLE 0x02
#define NEIGH_NUD_STALE 0x04
#define NEIGH_NUD_DELAY 0x08
#define NEIGH_NUD_PROBE 0x10
#define NEIGH_NUD_FAILED 0x20
#define NEIGH_NUD_NOARP 0x40
#define NEIGH_NUD_PERMANENT 0x80
#define NEIGH_NUD_VALID                                                        \
	(NEIGH_NUD_PERMANENT | NEIGH_NUD_NOARP | NEIGH_NUD_REACHABLE |         \
	 NEIGH_NUD_PROBE | NEIGH_NUD_STALE | NEIGH_NUD_DELAY)

/* Where a MAD goes, as IP sees it. Addresses in network order. */
struct neigh_dst {
	int ifindex; /* the source GID's netdev */
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t src[16]; /* 4 bytes used for AF_INET */
	uint8_t dst[16];
	char label[NEIGH_LABEL_MAX]; /* for the log: "rxe0 port 1" */
};

/* The route to a destination (RTM_GETROUTE's answer). */
struct neigh_route {
	bool local; /* RTN_LOCAL: the kernel loops it back, no neighbour */
	int oif;
	uint8_t nexthop[16]; /* the gateway, or the destination itself */
};

struct neigh_ops {
	/* The route from d->src out of d->ifindex to d->dst: 0 or -errno. */
	int (*route)(void *ctx, const struct neigh_dst *d,
		     struct neigh_route *out);
	/* The neighbour's NUD state (0: no entry), or -errno. */
	int (*state)(void *ctx, int family, int ifindex,
		     const uint8_t addr[16]);
	/* Make the kernel resolve it without waiting: 0 or -errno. */
	int (*solicit)(void *ctx, int family, int ifindex,
		       const uint8_t addr[16]);
	/*
	 * A held item's outcome: err 0, write it now; else it failed
	 * (-EHOSTUNREACH, ...). Called from the loop, in submit order per
	 * destination.
	 */
	void (*release)(void *ctx, uint32_t tag, const void *item, size_t len,
			int err);
	/* Re-arm the caller's timer for 'at' (NEIGH_NEVER: stop it). */
	void (*arm)(void *ctx, uint64_t at);
};

#define NEIGH_NEVER UINT64_MAX

struct neigh_counters {
	uint64_t checks; /* sends asked about */
	uint64_t local; /* sent at once: a local route */
	uint64_t valid; /* sent at once: a valid neighbour */
	uint64_t held; /* MADs held for a resolution */
	uint64_t resolutions; /* resolutions started */
	uint64_t resolved; /* ... that became valid */
	uint64_t failed; /* ... that failed (kernel verdict or cap) */
	uint64_t released; /* held MADs released */
	uint64_t dropped; /* held MADs failed */
	uint64_t overruns; /* event socket overruns (every cache dropped) */
	uint64_t unroutable; /* destinations found without a route */
};

struct neigh;

/* The core, on any ops (tests). */
struct neigh *neigh_core_new(const struct neigh_ops *ops, void *ctx);
/* Frees held items without calling release. */
void neigh_core_free(struct neigh *nb);
/* The ctx the core was made with. */
void *neigh_core_ctx(const struct neigh *nb);

/*
 * Before writing an item to d: 0 (write it now), NEIGH_HELD (copied, its
 * outcome comes through ops->release with 'tag': also when the kernel has
 * no route to d, then with the route's error), or -errno (the queue is
 * full: -ENOBUFS, too long: -EMSGSIZE).
 */
int neigh_submit(struct neigh *nb, const struct neigh_dst *d, const void *item,
		 size_t len, uint32_t tag, uint64_t now);

/* The kernel reported a neighbour entry (RTM_NEWNEIGH / RTM_DELNEIGH). */
void neigh_on_event(struct neigh *nb, int family, int ifindex,
		    const uint8_t addr[16], int state, bool deleted,
		    uint64_t now);
/* Events were lost: nothing cached can be trusted. */
void neigh_on_overrun(struct neigh *nb, uint64_t now);
/* The cap timer: fail what waited too long. */
void neigh_run_timers(struct neigh *nb, uint64_t now);
/* Fail every item with this tag (its port went away) with err. */
void neigh_fail_tag(struct neigh *nb, uint32_t tag, int err);
/* Destinations waiting for a verdict. */
unsigned int neigh_pending(const struct neigh *nb);
const struct neigh_counters *neigh_counters(const struct neigh *nb);

/*
 * The rtnetlink side (neigh_nl.c): the core over the kernel, in 'loop'.
 * release/ctx as in neigh_ops. NULL with errno when the sockets cannot be
 * opened.
 */
typedef void (*neigh_release_fn)(void *ctx, uint32_t tag, const void *item,
				 size_t len, int err);
struct neigh *neigh_open(struct ev_loop *loop, neigh_release_fn release,
			 void *ctx);
void neigh_close(struct neigh *nb);

/* Pure rtnetlink messages (neigh_nl.c), for the tests. */
size_t neigh_nl_getroute(void *buf, size_t cap, uint32_t seq,
			 const struct neigh_dst *d);
size_t neigh_nl_getneigh(void *buf, size_t cap, uint32_t seq, int family,
			 int ifindex, const uint8_t addr[16]);
size_t neigh_nl_use(void *buf, size_t cap, uint32_t seq, int family,
		    int ifindex, const uint8_t addr[16]);
/* Parse one answer to a request with 'seq': 0, -errno from the kernel,
 * -EBADMSG (not an answer), -ENOMSG (someone else's message). */
int neigh_nl_parse_route(const void *buf, size_t len, uint32_t seq, int family,
			 const uint8_t dst[16], struct neigh_route *out);
int neigh_nl_parse_neigh(const void *buf, size_t len, uint32_t seq, int *state);
/*
 * One neighbour message (an answer or an RTNLGRP_NEIGH event): 0 and its
 * fields, or -ENOMSG when it is not about a neighbour.
 */
int neigh_nl_parse_event(const void *msg, size_t len, int *family, int *ifindex,
			 uint8_t addr[16], int *state, bool *deleted);

#endif
