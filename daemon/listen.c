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
 * are few (rdma_cm port spaces), by a list scanned after the hash misses.
 */
#include <errno.h>
#include <stdlib.h>

#include "conn.h"
#include "log.h"
#include "util.h"

#define LTAB_INITIAL 256

static uint64_t ltab_node_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct listener, h_exact)->service_id);
}

static bool ltab_eq(const struct hnode *n, const void *sid)
{
	return container_of(n, struct listener, h_exact)->service_id ==
	       *(const uint64_t *)sid;
}

int ltab_init(struct ltab *t)
{
	LIST_INIT(&t->masked);
	/* Out of memory later on: longer chains, lookups stay correct. */
	return htable_init(&t->exact, LTAB_INITIAL, ltab_node_hash);
}

static struct listener *ltab_exact(const struct ltab *t, uint64_t sid)
{
	return htable_entry(
		htable_find(&t->exact, hash_u64(sid), ltab_eq, &sid),
		struct listener, h_exact);
}

struct listener *listen_find(const struct eng *eng, uint64_t sid)
{
	const struct ltab *t = &eng->listeners;
	struct listener *l = ltab_exact(t, sid);

	if (l)
		return l;
	LIST_FOREACH(l, &t->masked, mlink)
	{
		if ((sid & l->mask) == l->service_id)
			return l;
	}
	return NULL;
}

int listen_start(struct conn *c, uint64_t sid, uint64_t mask,
		 unsigned int backlog)
{
	struct ltab *t = &c->eng->listeners;
	struct listener *l, *x;

	if (!backlog || !mask)
		return -EINVAL;
	sid &= mask;
	/* Two listeners on the same (service id, mask) is a client bug. */
	if (mask == UINT64_MAX) {
		if (ltab_exact(t, sid))
			return -EADDRINUSE;
	} else {
		LIST_FOREACH(x, &t->masked, mlink)
		{
			if (x->mask == mask && x->service_id == sid)
				return -EADDRINUSE;
		}
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->conn = c;
	l->service_id = sid;
	l->mask = mask;
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
