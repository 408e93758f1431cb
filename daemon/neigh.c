// SPDX-License-Identifier: MIT
/*
 * The core of neighbour resolution (see neigh.h): destinations, their
 * bounded queues of held MADs, and the verdicts. It asks the kernel and
 * hears from it only through struct neigh_ops.
 *
 * A destination is (source netdev, family, source, destination address).
 * It is READY (a local route, or a valid neighbour, checked less than
 * NEIGH_FRESH_NS ago: sends go at once), PENDING (its next hop is being
 * resolved: sends join its queue, in order) or UNROUTABLE (the kernel has
 * no route to it, checked less than NEIGH_FRESH_NS ago). A pending
 * destination ends on the first event that says its next hop is valid
 * (its queue is released) or failed, or at NEIGH_CAP_NS (its queue fails,
 * -EHOSTUNREACH, and one line is logged at notice: why, for whom). An
 * unroutable one fails what is sent to it with the route's error, from
 * the loop on its next turn (so the engine hears of it as of any deferred
 * send, never inside its own send call), with one notice line when the
 * route is first found missing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "log.h"
#include "neigh.h"

struct neigh_item {
	STAILQ_ENTRY(neigh_item) link;
	uint32_t tag;
	size_t len;
	uint8_t buf[];
};

struct neigh_dest {
	LIST_ENTRY(neigh_dest) link;
	struct neigh_dst d;
	bool pending;
	bool local; /* READY by a local route */
	bool flushing; /* releasing its queue: later sends queue behind */
	int unroutable; /* -errno of the route lookup, 0 if it had one */
	int nh_ifindex;
	uint8_t nexthop[16];
	uint64_t since; /* PENDING: resolution started; READY: checked */
	unsigned int n;
	STAILQ_HEAD(, neigh_item) q;
};

struct neigh {
	struct neigh_ops ops;
	void *ctx;
	LIST_HEAD(, neigh_dest) dests;
	unsigned int n_dests;
	unsigned int n_pending;
	struct neigh_counters cnt;
};

struct neigh *neigh_core_new(const struct neigh_ops *ops, void *ctx)
{
	struct neigh *nb = calloc(1, sizeof(*nb));

	if (!nb)
		return NULL;
	nb->ops = *ops;
	nb->ctx = ctx;
	LIST_INIT(&nb->dests);
	return nb;
}

static void neigh_dest_free(struct neigh *nb, struct neigh_dest *e)
{
	struct neigh_item *it;

	while ((it = STAILQ_FIRST(&e->q))) {
		STAILQ_REMOVE_HEAD(&e->q, link);
		free(it);
	}
	if (e->pending)
		nb->n_pending--;
	LIST_REMOVE(e, link);
	nb->n_dests--;
	free(e);
}

void neigh_core_free(struct neigh *nb)
{
	if (!nb)
		return;
	while (!LIST_EMPTY(&nb->dests))
		neigh_dest_free(nb, LIST_FIRST(&nb->dests));
	free(nb);
}

static size_t neigh_alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static bool neigh_same_dst(const struct neigh_dst *a, const struct neigh_dst *b)
{
	size_t n = neigh_alen(a->family);

	return a->ifindex == b->ifindex && a->family == b->family &&
	       !memcmp(a->src, b->src, n) && !memcmp(a->dst, b->dst, n);
}

static struct neigh_dest *neigh_find(struct neigh *nb,
				     const struct neigh_dst *d)
{
	struct neigh_dest *e;

	LIST_FOREACH(e, &nb->dests, link)
	if (neigh_same_dst(&e->d, d))
		return e;
	return NULL;
}

/*
 * The caller's timer: the earliest cap of a pending destination, or at
 * once for an unroutable one that holds MADs.
 */
static void neigh_rearm(struct neigh *nb)
{
	uint64_t at = NEIGH_NEVER;
	struct neigh_dest *e;

	LIST_FOREACH(e, &nb->dests, link)
	{
		if (e->pending && e->since + NEIGH_CAP_NS < at)
			at = e->since + NEIGH_CAP_NS;
		if (e->unroutable && e->n && e->since < at)
			at = e->since;
	}
	if (nb->ops.arm)
		nb->ops.arm(nb->ctx, at);
}

/* Room for one more destination: forget READY ones that are not fresh. */
static bool neigh_make_room(struct neigh *nb, uint64_t now)
{
	struct neigh_dest *e, *next;

	if (nb->n_dests < NEIGH_MAX_DESTS)
		return true;
	for (e = LIST_FIRST(&nb->dests); e; e = next) {
		next = LIST_NEXT(e, link);
		if (!e->pending && !e->flushing && !e->n &&
		    (now - e->since >= NEIGH_FRESH_NS ||
		     nb->n_dests >= NEIGH_MAX_DESTS))
			neigh_dest_free(nb, e);
	}
	return nb->n_dests < NEIGH_MAX_DESTS;
}

static int neigh_hold(struct neigh *nb, struct neigh_dest *e, const void *item,
		      size_t len, uint32_t tag)
{
	struct neigh_item *it;

	if (e->n >= NEIGH_QUEUE_MAX)
		return -ENOBUFS;
	it = malloc(sizeof(*it) + len);
	if (!it)
		return -ENOMEM;
	it->tag = tag;
	it->len = len;
	memcpy(it->buf, item, len);
	STAILQ_INSERT_TAIL(&e->q, it, link);
	e->n++;
	nb->cnt.held++;
	return NEIGH_HELD;
}

/*
 * Ask the kernel about d: fills e's verdict. 0 (READY), 1 (resolution
 * needed) or -errno (no route).
 */
static int neigh_ask(struct neigh *nb, struct neigh_dest *e, uint64_t now)
{
	struct neigh_route r;
	int err, st;

	memset(&r, 0, sizeof(r));
	err = nb->ops.route(nb->ctx, &e->d, &r);
	if (err)
		return err;
	e->since = now;
	e->local = r.local;
	if (r.local) {
		nb->cnt.local++;
		return 0;
	}
	e->nh_ifindex = r.oif ? r.oif : e->d.ifindex;
	memcpy(e->nexthop, r.nexthop, sizeof(e->nexthop));
	st = nb->ops.state(nb->ctx, e->d.family, e->nh_ifindex, e->nexthop);
	if (st > 0 && (st & NEIGH_NUD_VALID)) {
		nb->cnt.valid++;
		return 0;
	}
	return 1;
}

static void neigh_addr_str(int family, const uint8_t *a, char *s, size_t n)
{
	if (!inet_ntop(family, a, s, (socklen_t)n))
		snprintf(s, n, "?");
}

/*
 * The kernel has no route to d (-ENETUNREACH, ...): hold the item, to be
 * failed with that error from the loop (neigh_run_timers), and keep the
 * verdict NEIGH_FRESH_NS so that retransmissions and other connections to
 * it fail the same way without asking again. ops: one line, at notice,
 * when the route is first found missing.
 */
static int neigh_unroutable(struct neigh *nb, struct neigh_dest *e, int err,
			    const void *item, size_t len, uint32_t tag,
			    uint64_t now)
{
	char dst[INET6_ADDRSTRLEN];
	int rc;

	neigh_addr_str(e->d.family, e->d.dst, dst, sizeof(dst));
	log_notice("%s: no route to %s (%s): its MADs fail", e->d.label, dst,
		   strerror(-err));
	nb->cnt.unroutable++;
	e->unroutable = err;
	e->since = now;
	rc = neigh_hold(nb, e, item, len, tag);
	neigh_rearm(nb);
	return rc;
}

int neigh_submit(struct neigh *nb, const struct neigh_dst *d, const void *item,
		 size_t len, uint32_t tag, uint64_t now)
{
	struct neigh_dest *e;
	int err;

	nb->cnt.checks++;
	if (len > NEIGH_ITEM_MAX)
		return -EMSGSIZE;
	e = neigh_find(nb, d);
	if (e && (e->pending || e->flushing))
		return neigh_hold(nb, e, item, len, tag);
	if (e && e->unroutable && now - e->since < NEIGH_FRESH_NS) {
		err = neigh_hold(nb, e, item, len, tag);
		neigh_rearm(nb);
		return err;
	}
	if (e && !e->unroutable && now - e->since < NEIGH_FRESH_NS) {
		if (e->local)
			nb->cnt.local++;
		else
			nb->cnt.valid++;
		return 0;
	}
	if (!e) {
		if (!neigh_make_room(nb, now))
			return -ENOBUFS;
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->d = *d;
		STAILQ_INIT(&e->q);
		LIST_INSERT_HEAD(&nb->dests, e, link);
		nb->n_dests++;
	}
	err = neigh_ask(nb, e, now);
	if (err < 0)
		return neigh_unroutable(nb, e, err, item, len, tag, now);
	e->unroutable = 0;
	if (!err)
		return 0;
	/*
	 * Not resolved: have the kernel resolve it as an outgoing packet
	 * would, and wait for its verdict. Should the kick fail (a kernel
	 * without NTF_USE), the cap still ends the wait: a MAD is held and
	 * fails cleanly rather than blocking the loop in the write.
	 */
	err = nb->ops.solicit(nb->ctx, e->d.family, e->nh_ifindex, e->nexthop);
	if (err)
		log_debug("neighbour resolution on ifindex %d: %s",
			  e->nh_ifindex, strerror(-err));
	e->pending = true;
	e->since = now;
	nb->n_pending++;
	nb->cnt.resolutions++;
	err = neigh_hold(nb, e, item, len, tag);
	neigh_rearm(nb);
	return err;
}

/* Hand every held item of e back with err, in order. */
static void neigh_release_all(struct neigh *nb, struct neigh_dest *e, int err)
{
	struct neigh_item *it;

	e->flushing = true;
	while ((it = STAILQ_FIRST(&e->q))) {
		STAILQ_REMOVE_HEAD(&e->q, link);
		e->n--;
		if (err)
			nb->cnt.dropped++;
		else
			nb->cnt.released++;
		nb->ops.release(nb->ctx, it->tag, it->buf, it->len, err);
		free(it);
	}
	e->flushing = false;
}

/*
 * ops: one line per failed destination, at notice, whatever the number of
 * MADs it held: the address, where from, after how long and why.
 */
static void neigh_fail(struct neigh *nb, struct neigh_dest *e, uint64_t now,
		       const char *why)
{
	char dst[INET6_ADDRSTRLEN], nh[INET6_ADDRSTRLEN], via[80] = "";
	char ifname[IF_NAMESIZE] = "?";

	neigh_addr_str(e->d.family, e->d.dst, dst, sizeof(dst));
	neigh_addr_str(e->d.family, e->nexthop, nh, sizeof(nh));
	if (memcmp(e->d.dst, e->nexthop, neigh_alen(e->d.family)))
		snprintf(via, sizeof(via), " (via gateway %s)", nh);
	if (!if_indextoname((unsigned int)e->nh_ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "%d", e->nh_ifindex);
	log_notice("%s: neighbour %s%s on %s unresolved after %.1f s (%s): "
		   "%u MAD(s) failed, -EHOSTUNREACH",
		   e->d.label, dst, via, ifname, (double)(now - e->since) / 1e9,
		   why, e->n);
	nb->cnt.failed++;
	e->pending = false;
	nb->n_pending--;
	neigh_release_all(nb, e, -EHOSTUNREACH);
	neigh_dest_free(nb, e);
}

static bool neigh_is_nexthop(const struct neigh_dest *e, int family,
			     int ifindex, const uint8_t addr[16])
{
	return !e->local && e->d.family == family && e->nh_ifindex == ifindex &&
	       !memcmp(e->nexthop, addr, neigh_alen(family));
}

void neigh_on_event(struct neigh *nb, int family, int ifindex,
		    const uint8_t addr[16], int state, bool deleted,
		    uint64_t now)
{
	struct neigh_dest *e, *next;
	bool valid = !deleted && (state & NEIGH_NUD_VALID);

	for (e = LIST_FIRST(&nb->dests); e; e = next) {
		next = LIST_NEXT(e, link);
		if (e->unroutable || e->flushing ||
		    !neigh_is_nexthop(e, family, ifindex, addr))
			continue;
		if (!e->pending) {
			/* A valid verdict no longer holds: ask next time. */
			if (!valid)
				neigh_dest_free(nb, e);
			continue;
		}
		if (valid) {
			nb->cnt.resolved++;
			e->pending = false;
			nb->n_pending--;
			e->since = now;
			neigh_release_all(nb, e, 0);
		} else if (!deleted && (state & NEIGH_NUD_FAILED)) {
			neigh_fail(nb, e, now,
				   "the kernel's resolution failed: no answer");
		}
		/* INCOMPLETE, or deleted while resolving: the cap decides. */
	}
	neigh_rearm(nb);
}

void neigh_on_overrun(struct neigh *nb, uint64_t now)
{
	struct neigh_dest *e, *next;

	/*
	 * Some verdict may be lost: forget every READY one (they are asked
	 * again on the next send). Pending ones keep waiting; their cap ends
	 * a wait whose event was lost.
	 */
	nb->cnt.overruns++;
	for (e = LIST_FIRST(&nb->dests); e; e = next) {
		next = LIST_NEXT(e, link);
		if (!e->pending && !e->flushing)
			neigh_dest_free(nb, e);
	}
}

void neigh_run_timers(struct neigh *nb, uint64_t now)
{
	struct neigh_dest *e, *next;

	for (e = LIST_FIRST(&nb->dests); e; e = next) {
		next = LIST_NEXT(e, link);
		if (e->unroutable && !e->flushing)
			neigh_release_all(nb, e, e->unroutable);
		if (e->pending && now - e->since >= NEIGH_CAP_NS)
			neigh_fail(nb, e, now, "no verdict from the kernel");
		else if (!e->pending && !e->flushing &&
			 now - e->since >= NEIGH_FRESH_NS)
			neigh_dest_free(nb, e);
	}
	neigh_rearm(nb);
}

void neigh_fail_tag(struct neigh *nb, uint32_t tag, int err)
{
	struct neigh_dest *e;

	LIST_FOREACH(e, &nb->dests, link)
	{
		struct neigh_item *it, *next;

		for (it = STAILQ_FIRST(&e->q); it; it = next) {
			next = STAILQ_NEXT(it, link);
			if (it->tag != tag)
				continue;
			STAILQ_REMOVE(&e->q, it, neigh_item, link);
			e->n--;
			nb->cnt.dropped++;
			nb->ops.release(nb->ctx, it->tag, it->buf, it->len,
					err);
			free(it);
		}
	}
}

unsigned int neigh_pending(const struct neigh *nb)
{
	return nb->n_pending;
}

const struct neigh_counters *neigh_counters(const struct neigh *nb)
{
	return &nb->cnt;
}

void *neigh_core_ctx(const struct neigh *nb)
{
	return nb->ctx;
}
