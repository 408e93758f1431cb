// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: event channels and events.
 *
 * A channel's fd is an eventfd that is readable exactly while its queue
 * holds an event: it is written when the queue goes from empty to one
 * event and read (to zero) when the last one is taken or dropped, always
 * under rc.mu, so poll() on it tells the truth, and rdma_get_cm_event()
 * on a channel the application made O_NONBLOCK fails with EAGAIN exactly
 * when poll() would say "not readable".
 *
 * Lesson 3 of DESIGN.md over librdmacm's rule: rdma_destroy_id() never
 * waits for the application to ack the id's events. An event the
 * application holds keeps the id's memory (not the id) alive until it is
 * acked, so event->id stays readable; queued events of a destroyed id are
 * dropped.
 */
#include "rc_int.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct rc_chan *rc_chan_new(bool sync)
{
	struct rc_chan *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pub.fd = eventfd(0, EFD_CLOEXEC);
	if (c->pub.fd < 0) {
		free(c);
		return NULL;
	}
	c->tail = &c->head;
	c->sync = sync;
	c->knext = rc.chans;
	rc.chans = c;
	return c;
}

void rc_ev_free(struct rc_ev *ev)
{
	if (ev->listen)
		rc_id_unref(ev->listen);
	rc_id_unref(ev->id);
	free(ev);
}

void rc_chan_free(struct rc_chan *c)
{
	struct rc_chan **pp;

	while (c->head) {
		struct rc_ev *ev = c->head;

		c->head = ev->next;
		rc_ev_free(ev);
	}
	for (pp = &rc.chans; *pp; pp = &(*pp)->knext)
		if (*pp == c) {
			*pp = c->knext;
			break;
		}
	rc_kern_chan_free(c);
	close(c->pub.fd);
	free(c);
}

/*
 * Make the fd readable or not. c->lit is the counter's state (only we
 * write or read it, under rc.mu), so each change is one system call and
 * no poll() is needed to learn whether a read would block.
 */
static void rc_chan_signal(struct rc_chan *c, bool readable)
{
	eventfd_t v;

	if (readable == c->lit)
		return;
	if (readable)
		eventfd_write(c->pub.fd, 1);
	else
		eventfd_read(c->pub.fd, &v);
	c->lit = readable;
}

struct rc_ev *rc_ev_new(struct rc_id *id, enum rdma_cm_event_type type,
			int status)
{
	struct rc_ev *ev = calloc(1, sizeof(*ev));

	if (!ev) {
		rc_log(1, "out of memory: %s of an id dropped",
		       rdma_event_str(type));
		return NULL;
	}
	ev->pub.id = &id->pub;
	ev->pub.event = type;
	ev->pub.status = status;
	ev->id = id;
	rc_id_ref(id);
	return ev;
}

/* The event's private data: copied into it (the source's memory is not
 * ours to keep), len bytes at most as much as it holds, NULL when none. */
void rc_ev_set_pd(struct rc_ev *ev, const void *pd, size_t len, bool ud)
{
	if (len > sizeof(ev->pd))
		len = sizeof(ev->pd);
	if (len)
		memcpy(ev->pd, pd, len);
	if (ud) {
		ev->pub.param.ud.private_data = len ? ev->pd : NULL;
		ev->pub.param.ud.private_data_len = (uint8_t)len;
	} else {
		ev->pub.param.conn.private_data = len ? ev->pd : NULL;
		ev->pub.param.conn.private_data_len = (uint8_t)len;
	}
}

/* A CONNECT_REQUEST's listener, held while the event lives. */
void rc_ev_set_listener(struct rc_ev *ev, struct rc_id *lst)
{
	ev->pub.listen_id = &lst->pub;
	ev->listen = lst;
	rc_id_ref(lst);
}

void rc_ev_queue(struct rc_ev *ev)
{
	/* A CONNECT_REQUEST goes where its listener's events go, even when
	 * the new id has a channel of its own (a synchronous listener's):
	 * rdma_get_request() and the application wait there for it. */
	struct rc_chan *c = ev->listen ? ev->listen->ch : ev->id->ch;

	ev->next = NULL;
	*c->tail = ev;
	c->tail = &ev->next;
	c->queued++;
	rc_chan_signal(c, true);
}

static struct rc_ev *rc_ev_pop(struct rc_chan *c)
{
	struct rc_ev *ev = c->head;

	if (!ev)
		return NULL;
	c->head = ev->next;
	if (!c->head)
		c->tail = &c->head;
	if (--c->queued == 0)
		rc_chan_signal(c, false);
	return ev;
}

/* Drop the queued events of id (destroyed, or migrated away), and the
 * connection requests of a destroyed listener together with their new
 * ids (the application never saw them). */
void rc_ev_drop_id(struct rc_chan *c, const struct rc_id *id)
{
	struct rc_ev **pp = &c->head;

	while (*pp) {
		struct rc_ev *ev = *pp;

		if (ev->id == id || (id && ev->listen == id && id->destroyed)) {
			*pp = ev->next;
			c->queued--;
			if (ev->listen == id)
				rc_id_destroy_child(ev->id);
			rc_ev_free(ev);
			continue;
		}
		pp = &ev->next;
	}
	c->tail = &c->head;
	while (*c->tail)
		c->tail = &(*c->tail)->next;
	/* Whoever took the events (rdma_migrate_id too) left the fd to us:
	 * an empty queue must not poll readable. */
	if (!c->queued)
		rc_chan_signal(c, false);
}

/* ------------------------------------------------------------------ */
/* Which pointers are live: ids not destroyed, events not acked */

static uint64_t rc_ptr_hash(const void *p)
{
	return hash_u64((uint64_t)(uintptr_t)p);
}

static uint64_t rc_id_hash(const struct hnode *n)
{
	return rc_ptr_hash(htable_entry(n, struct rc_id, live));
}

static bool rc_id_eq(const struct hnode *n, const void *key)
{
	return &htable_entry(n, struct rc_id, live)->pub == key;
}

static uint64_t rc_ev_hash(const struct hnode *n)
{
	return rc_ptr_hash(htable_entry(n, struct rc_ev, held));
}

static bool rc_ev_eq(const struct hnode *n, const void *key)
{
	return &htable_entry(n, struct rc_ev, held)->pub == key;
}

static void rc_tables(void)
{
	if (!rc.ids.b)
		htable_init(&rc.ids, 64, rc_id_hash);
	if (!rc.held.b)
		htable_init(&rc.held, 64, rc_ev_hash);
}

void rc_id_track(struct rc_id *id, bool on)
{
	rc_tables();
	if (on)
		htable_insert(&rc.ids, &id->live);
	else
		htable_remove(&rc.ids, &id->live);
}

struct rc_id *rc_id_live(struct rdma_cm_id *pub, const char *call)
{
	struct hnode *n = NULL;

	if (pub)
		n = htable_find(&rc.ids, rc_ptr_hash(pub), rc_id_eq, pub);
	if (!n) {
		rc_log(1, "%s: %s", call,
		       pub ? "not a live rdma_cm_id (destroyed, or not made by "
			     "rdma_create_id)" :
			     "the id is NULL");
		errno = EINVAL;
		return NULL;
	}
	return htable_entry(n, struct rc_id, live);
}

void rc_id_ref(struct rc_id *id)
{
	id->refs++;
}

void rc_id_unref(struct rc_id *id)
{
	if (--id->refs == 0)
		rc_id_free(id);
}

/* ------------------------------------------------------------------ */
/* API */

RC_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rc_chan *c;

	RC_LOCK();
	c = rc_chan_new(false);
	/* What the first call would otherwise pay (~150-220 ms under TCG):
	 * the daemon's channel and port list, the devices, their GID
	 * tables. librdmacm opens its devices here too (ucma_init). Best
	 * effort: a failure is the first call's to report. */
	if (c)
		rc_warm();
	RC_UNLOCK();
	return c ? &c->pub : NULL;
}

RC_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rc_chan *c = (struct rc_chan *)channel;

	if (!c)
		return;
	RC_LOCK();
	if (c->ids)
		/* librdmacm would close an fd its ids still use; we keep the
		 * channel (and say so) rather than leave them dangling. */
		rc_log(1,
		       "rdma_destroy_event_channel: %u ids still use the "
		       "channel: destroy them first; channel kept",
		       c->ids);
	else
		rc_chan_free(c);
	RC_UNLOCK();
}

static int rc_get_event(struct rc_chan *c, struct rc_ev **evp)
{
	for (;;) {
		struct pollfd p = { .fd = c->pub.fd, .events = POLLIN };
		int fl;

		RC_LOCK();
		*evp = rc_ev_pop(c);
		if (*evp) {
			rc_tables();
			htable_insert(&rc.held, &(*evp)->held);
		}
		RC_UNLOCK();
		if (*evp)
			return 0;
		fl = fcntl(c->pub.fd, F_GETFL);
		if (fl >= 0 && (fl & O_NONBLOCK))
			return rc_err(EAGAIN);
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

RC_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				struct rdma_cm_event **event)
{
	struct rc_ev *ev;

	if (!channel || !event)
		return rc_err(EINVAL);
	if (rc_get_event((struct rc_chan *)channel, &ev))
		return -1;
	*event = &ev->pub;
	return 0;
}

/* Free a delivered event (under rc.mu); false when event is none that
 * rdma_get_cm_event returned and nobody freed yet. */
bool rc_ev_release(struct rdma_cm_event *event)
{
	struct hnode *n =
		htable_find(&rc.held, rc_ptr_hash(event), rc_ev_eq, event);

	if (!n)
		return false;
	htable_remove(&rc.held, n);
	rc_ev_free(htable_entry(n, struct rc_ev, held));
	return true;
}

RC_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	bool ok;

	if (!event)
		return rc_err(EINVAL);
	RC_LOCK();
	ok = rc_ev_release(event);
	RC_UNLOCK();
	if (!ok) {
		rc_log(1, "rdma_ack_cm_event: not an event rdma_get_cm_event "
			  "returned, or acked already");
		return rc_err(EINVAL);
	}
	return 0;
}

/* As librdmacm's synchronous ids: after a call, wait for its event on
 * the id's private channel, keep it in id->event, and fail as it says. */
int rc_complete(struct rc_id *id)
{
	struct rc_ev *ev;
	struct rdma_cm_event *e;

	if (!id->sync)
		return 0;
	if (id->pub.event) {
		rdma_ack_cm_event(id->pub.event);
		id->pub.event = NULL;
	}
	if (rc_get_event(id->ch, &ev))
		return -1;
	e = &ev->pub;
	id->pub.event = e;
	if (!e->status)
		return 0;
	if (e->event == RDMA_CM_EVENT_REJECTED)
		return rc_err(ECONNREFUSED);
	return rc_err(e->status < 0 ? -e->status : e->status);
}

RC_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] =
			"RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] =
			"RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] =
			"RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) &&
	    names[event])
		return names[event];
	return "UNKNOWN EVENT";
}
