// SPDX-License-Identifier: MIT
/*
 * Listeners and backlog credits (DESIGN lesson 1). A listener may have at
 * most 'backlog' REQ_RECEIVED events out whose ids have not answered yet.
 * A REQ beyond that is held: it has a record (so duplicates are recognised
 * and answered with the MRA already sent) but no client until a credit comes
 * back. Beyond max_held the REQ is rejected with "no resources", IBTA
 * Table 109 code 3: the condition is transient and the consumer never saw
 * the request, so "consumer defined" (28) would be a lie.
 *
 * Listeners with an all-ones mask are found by hash; masked listeners, which
 * are few (rdma_cm port spaces), by a list scanned after the hash. A
 * listener may also be narrowed to some ports or to one GID of ours (its
 * selector, cm_engine.h): listeners of one service id on selectors that do
 * not overlap share it, as rdma_cm listeners bound to different addresses
 * share a port, and a request goes to the most specific one that takes it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "refuse.h"
#include "util.h"

#define LTAB_INITIAL 256

static uint64_t ltab_node_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct listener, h_exact)->service_id);
}

int ltab_init(struct ltab *t)
{
	LIST_INIT(&t->masked);
	/* Out of memory later on: longer chains, lookups stay correct. */
	return htable_init(&t->exact, LTAB_INITIAL, ltab_node_hash);
}

static bool sel_has_port(const struct eng_listen_sel *s, uint16_t port)
{
	return port < ENG_MAX_PORTS && (s->ports[port / 64] >> (port % 64)) & 1;
}

static bool sel_takes(const struct eng_listen_sel *s, uint16_t port,
		      const uint8_t gid[CM_GID_SIZE])
{
	switch (s->kind) {
	case ENG_SEL_ANY:
		return true;
	case ENG_SEL_PORTS:
		return sel_has_port(s, port);
	case ENG_SEL_GID:
		return !memcmp(s->gid, gid, CM_GID_SIZE);
	}
	return false;
}

/*
 * Could one request go to both? What the kernel's rdma_cm refuses for two
 * binds of one port: the wildcard overlaps everything, an address itself.
 * A port and a GID selector coexist: the GID one is asked first.
 */
static bool sel_overlap(const struct eng_listen_sel *a,
			const struct eng_listen_sel *b)
{
	if (a->kind == ENG_SEL_ANY || b->kind == ENG_SEL_ANY)
		return true;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ENG_SEL_ANY:
		return true;
	case ENG_SEL_PORTS:
		for (unsigned int i = 0; i < ENG_PORT_WORDS; i++)
			if (a->ports[i] & b->ports[i])
				return true;
		return false;
	case ENG_SEL_GID:
		return !memcmp(a->gid, b->gid, CM_GID_SIZE);
	}
	return true;
}

static bool sel_valid(const struct eng_listen_sel *s)
{
	static const uint8_t zero[CM_GID_SIZE];

	switch (s->kind) {
	case ENG_SEL_ANY:
		return true;
	case ENG_SEL_PORTS:
		for (unsigned int i = 0; i < ENG_PORT_WORDS; i++)
			if (s->ports[i])
				return true;
		return false;
	case ENG_SEL_GID:
		/* Zero is what an unknown destination GID reads as. */
		return memcmp(s->gid, zero, CM_GID_SIZE) != 0;
	}
	return false;
}

/* The first listener of the exact table's chain for sid (then ->next). */
static struct hnode *ltab_chain(const struct ltab *t, uint64_t sid)
{
	return htable_bucket(&t->exact, hash_u64(sid));
}

/* Of 'best' and l, the one a request should go to (l only if it takes it). */
static struct listener *better(struct listener *best, struct listener *l,
			       uint16_t port, const uint8_t gid[CM_GID_SIZE])
{
	if (!sel_takes(&l->sel, port, gid))
		return best;
	/* The kinds are numbered by specificity (cm_engine.h). */
	return !best || l->sel.kind > best->sel.kind ? l : best;
}

struct listener *listen_find(const struct eng *eng, uint64_t sid, uint16_t port,
			     const uint8_t gid[CM_GID_SIZE])
{
	const struct ltab *t = &eng->listeners;
	struct listener *best = NULL, *l;
	struct hnode *n;

	for (n = ltab_chain(t, sid); n; n = n->next) {
		l = container_of(n, struct listener, h_exact);
		if (l->service_id == sid)
			best = better(best, l, port, gid);
	}
	if (best && best->sel.kind == ENG_SEL_GID)
		return best; /* nothing is more specific */
	LIST_FOREACH(l, &t->masked, mlink)
	{
		if ((sid & l->mask) == l->service_id)
			best = better(best, l, port, gid);
	}
	return best;
}

/* Is (sid, mask) on a selector overlapping sel claimed already? */
static bool ltab_claimed(const struct ltab *t, uint64_t sid, uint64_t mask,
			 const struct eng_listen_sel *sel)
{
	struct listener *x;
	struct hnode *n;

	if (mask == UINT64_MAX) {
		for (n = ltab_chain(t, sid); n; n = n->next) {
			x = container_of(n, struct listener, h_exact);
			if (x->service_id == sid && sel_overlap(&x->sel, sel))
				return true;
		}
		return false;
	}
	LIST_FOREACH(x, &t->masked, mlink)
	{
		if (x->mask == mask && x->service_id == sid &&
		    sel_overlap(&x->sel, sel))
			return true;
	}
	return false;
}

int listen_start(struct conn *c, uint64_t sid, uint64_t mask,
		 unsigned int backlog, const struct eng_listen_sel *sel)
{
	static const struct eng_listen_sel any = { .kind = ENG_SEL_ANY };
	struct ltab *t = &c->eng->listeners;
	struct listener *l;

	if (!sel)
		sel = &any;
	if (!backlog)
		return refuse(-EINVAL, "LISTEN with a backlog of 0");
	if (!mask)
		return refuse(-EINVAL, "LISTEN with a service mask of 0");
	if (!sel_valid(sel))
		return refuse(-EINVAL, "LISTEN port selector not valid");
	sid &= mask;
	/* Two listeners that could both take a REQ is a client bug. */
	if (ltab_claimed(t, sid, mask, sel))
		return refuse(-EADDRINUSE,
			      "service id %#018llx (mask %#018llx) is claimed "
			      "by another listener on the same ports",
			      (unsigned long long)sid,
			      (unsigned long long)mask);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->conn = c;
	l->service_id = sid;
	l->mask = mask;
	l->sel = *sel;
	l->backlog = backlog;
	TAILQ_INIT(&l->held);
	TAILQ_INIT(&l->credited);
	if (mask == UINT64_MAX)
		htable_insert(&t->exact, &l->h_exact);
	else
		LIST_INSERT_HEAD(&t->masked, l, mlink);
	c->lis = l;
	c->service_id = sid;
	return 0;
}

/*
 * A REQ may go to the listener's client now: a credit is free and the
 * client may hold one more id (eng_ops.owner_has_room).
 */
bool listen_has_credit(const struct listener *l)
{
	const struct eng *eng = l->conn->eng;

	if (l->used >= l->backlog)
		return false;
	return !eng->ops.owner_has_room ||
	       eng->ops.owner_has_room(eng->ctx, l->conn->owner);
}

bool listen_take_credit(struct listener *l, struct conn *c)
{
	if (l->used >= l->backlog)
		return false;
	l->used++;
	l->delivered++;
	c->eng->cnt.req_delivered++;
	c->credit = true;
	c->lis = l;
	c->owner = l->conn->owner;
	TAILQ_INSERT_TAIL(&l->credited, c, lis_link);
	return true;
}

void listen_hold(struct listener *l, struct conn *c)
{
	c->held = true;
	c->lis = l;
	l->nheld++;
	l->held_total++;
	c->eng->cnt.req_held++;
	TAILQ_INSERT_TAIL(&l->held, c, lis_link);
}

/*
 * 'c' no longer waits for its client's answer: give its credit back and
 * hand the oldest held REQ to the client. A held record that ends here
 * (the peer gave up) never had a client: the engine owns it and frees it.
 */
void listen_release(struct conn *c, uint64_t now)
{
	struct listener *l = c->lis;
	struct conn *h;

	if (!l)
		return;
	if (c->held) {
		TAILQ_REMOVE(&l->held, c, lis_link);
		c->held = false;
		c->destroyed = true;
		l->nheld--;
		free(c->held_req);
		c->held_req = NULL;
		return;
	}
	if (!c->credit)
		return;
	TAILQ_REMOVE(&l->credited, c, lis_link);
	c->credit = false;
	l->used--;
	h = TAILQ_FIRST(&l->held);
	if (!h || !listen_has_credit(l))
		return;
	TAILQ_REMOVE(&l->held, h, lis_link);
	h->held = false;
	l->nheld--;
	listen_take_credit(l, h);
	log_debug("conn %08x: held REQ delivered", h->local_id);
	evq_push(h, ENG_EV_REQ_RECEIVED, 0, h->held_req);
	free(h->held_req);
	h->held_req = NULL;
	(void)now;
}

/*
 * The listener goes away. Held REQs were never seen by a client: answer them
 * with REJ "invalid service id" (IBTA Table 109 code 8), as a REQ arriving
 * now would be. Delivered ones belong to their ids already.
 */
void listen_stop(struct conn *c, uint64_t now)
{
	struct listener *l = c->lis;
	struct conn *h;

	if (!l)
		return;
	while ((h = TAILQ_FIRST(&l->credited))) {
		TAILQ_REMOVE(&l->credited, h, lis_link);
		h->credit = false;
		h->lis = NULL;
	}
	while ((h = TAILQ_FIRST(&l->held))) {
		struct conn_ctx x = { .now = now };

		TAILQ_REMOVE(&l->held, h, lis_link);
		h->held = false;
		h->lis = NULL;
		free(h->held_req);
		h->held_req = NULL;
		/* The table answers it and ends the record (LISTENER_GONE). */
		conn_event(h, CONN_EV_LISTENER_GONE, &x);
	}
	if (l->mask == UINT64_MAX)
		htable_remove(&c->eng->listeners.exact, &l->h_exact);
	else
		LIST_REMOVE(l, mlink);
	free(l);
	c->lis = NULL;
}

void ltab_fini(struct ltab *t)
{
	struct hnode *n, *next;
	struct listener *l;

	HTABLE_FOREACH_SAFE(n, next, &t->exact)
		free(container_of(n, struct listener, h_exact));
	htable_fini(&t->exact);
	while ((l = LIST_FIRST(&t->masked))) {
		LIST_REMOVE(l, mlink);
		free(l);
	}
}
