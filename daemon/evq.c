// SPDX-License-Identifier: MIT
/*
 * Per-id serialized events (DESIGN lesson 2): at most one event per id is
 * out with the client; the next waits for eng_ack. A REJ that races a REQ is
 * thus seen after the REQ. The context is stamped at delivery, so an event
 * queued before eng_set_context still carries the context the client set
 * while handling the previous one.
 *
 * Every event is an item that lives from push to ack, and a busy daemon
 * pushes several per connection. Acked items go back to a per-engine
 * spare list (proto/spare.h) instead of to free(), so steady traffic
 * allocates nothing here. The list is bounded (EVQ_SPARE_MAX, conn.h) so
 * that the memory of a burst (every id with an event out at once) is
 * returned after it: items live only while their event is out with a
 * client, so what the list must absorb is the churn between an ack and the
 * next push, not the number of events in flight.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"

void evq_init(struct eng *eng)
{
	spare_init(&eng->evq_spare, EVQ_SPARE_MAX, sizeof(struct evq_item),
		   &eng->cnt.spare_bytes);
}

void evq_fini(struct eng *eng)
{
	spare_drain(&eng->evq_spare);
}

static struct evq_item *evq_item_get(struct eng *eng)
{
	struct evq_item *it = spare_take(&eng->evq_spare);

	return it ? it : malloc(sizeof(*it));
}

static void evq_deliver_head(struct conn *c)
{
	struct eng *eng = c->eng;
	struct evq_item *it = STAILQ_FIRST(&c->evq.items);
	bool was_busy = eng->busy;

	if (!it)
		return;
	c->evq.unacked = true;
	it->ev.context = c->context;
	it->ev.owner = c->owner;
	eng->busy = true;
	eng->ops.deliver(eng->ctx, &it->ev);
	eng->busy = was_busy;
}

void evq_push(struct conn *c, enum eng_event_type type, int status,
	      const struct cm_msg *msg)
{
	struct evq_item *it;

	/* Destroy is final; a held REQ has no client yet. */
	if (c->destroyed || c->held)
		return;
	it = evq_item_get(c->eng);
	if (!it) {
		log_err("conn %08x: no memory for event %s", c->local_id,
			eng_event_name(type));
		return;
	}
	/* A reused item must not show the last event's fields. */
	memset(&it->ev, 0, offsetof(struct eng_event, msg));
	it->ev.type = type;
	it->ev.id = c->local_id;
	it->ev.status = status;
	it->ev.addr = c->addr;
	if (c->lis &&
	    (type == ENG_EV_REQ_RECEIVED || type == ENG_EV_SIDR_REQ_RECEIVED)) {
		it->ev.listen_id = c->lis->conn->local_id;
		it->ev.listen_context = c->lis->conn->context;
	}
	if (msg) {
		it->ev.has_msg = true;
		it->ev.msg = *msg;
	} else {
		memset(&it->ev.msg, 0, sizeof(it->ev.msg));
	}
	/* The state after the transition that made it (conn_event). */
	it->ev.state = c->evq.next_state < ENG_STATE__COUNT ?
			       (enum eng_state)c->evq.next_state :
			       c->state;
	it->ev.lap = conn_lap_in(c, it->ev.state);
	STAILQ_INSERT_TAIL(&c->evq.items, it, link);
	if (!c->evq.unacked)
		evq_deliver_head(c);
}

int evq_ack(struct conn *c)
{
	struct evq_item *it = STAILQ_FIRST(&c->evq.items);

	if (!c->evq.unacked || !it)
		return -EINVAL;
	STAILQ_REMOVE_HEAD(&c->evq.items, link);
	spare_give(&c->eng->evq_spare, it);
	c->evq.unacked = false;
	evq_deliver_head(c);
	return 0;
}

void evq_clear(struct conn *c)
{
	struct evq_item *it;

	while ((it = STAILQ_FIRST(&c->evq.items))) {
		STAILQ_REMOVE_HEAD(&c->evq.items, link);
		spare_give(&c->eng->evq_spare, it);
	}
	c->evq.unacked = false;
}
