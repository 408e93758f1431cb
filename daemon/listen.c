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

#define LTAB_INITIAL 256

static uint64_t ltab_hash(uint64_t sid)
{
	sid ^= sid >> 31;
	sid *= 0x9e3779b97f4a7c15ULL;
	return sid ^ (sid >> 29);
}

int ltab_init(struct ltab *t)
{
	t->b = calloc(LTAB_INITIAL, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->mask = LTAB_INITIAL - 1;
	t->n = 0;
	LIST_INIT(&t->masked);
	return 0;
}

static void ltab_add(struct ltab *t, struct listener *l)
{
	size_t h;

	if (t->n >= t->mask + 1) {
		size_t nsize = (t->mask + 1) * 2, i;
		struct listener **nb = calloc(nsize, sizeof(*nb));

		if (nb) {
			for (i = 0; i <= t->mask; i++) {
				struct listener *x = t->b[i], *next;

				for (; x; x = next) {
					next = x->h_next;
					h = ltab_hash(x->service_id) &
					    (nsize - 1);
					x->h_next = nb[h];
					nb[h] = x;
				}
			}
			free(t->b);
			t->b = nb;
			t->mask = nsize - 1;
		}
	}
	h = ltab_hash(l->service_id) & t->mask;
	l->h_next = t->b[h];
	t->b[h] = l;
	t->n++;
}

static void ltab_del(struct ltab *t, struct listener *l)
{
	struct listener **pp = &t->b[ltab_hash(l->service_id) & t->mask];

	for (; *pp; pp = &(*pp)->h_next) {
		if (*pp == l) {
			*pp = l->h_next;
			t->n--;
			return;
		}
	}
}

static struct listener *ltab_exact(const struct ltab *t, uint64_t sid)
{
	struct listener *l;

	l = t->b[ltab_hash(sid) & t->mask];
	while (l && l->service_id != sid)
		l = l->h_next;
	return l;
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
		ltab_add(t, l);
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
		ltab_del(&c->eng->listeners, l);
	else
		LIST_REMOVE(l, mlink);
	free(l);
	c->lis = NULL;
}

void ltab_fini(struct ltab *t)
{
	size_t i;
	struct listener *l;

	if (!t->b)
		return;
	for (i = 0; i <= t->mask; i++) {
		while ((l = t->b[i])) {
			t->b[i] = l->h_next;
			free(l);
		}
	}
	while ((l = LIST_FIRST(&t->masked))) {
		LIST_REMOVE(l, mlink);
		free(l);
	}
	free(t->b);
	t->b = NULL;
}
