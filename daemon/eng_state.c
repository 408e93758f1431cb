// SPDX-License-Identifier: MIT
/*
 * The engine's part of the handoff state (state.h, state_fields.def):
 * every record, with its timer's deadline, retries left, last message and
 * queued events, the listeners with their credits and held REQs, the comm
 * id generator and the counters. Saving reads the engine; restoring builds
 * records in a fresh engine that sends nothing and delivers nothing: the
 * events were delivered by the predecessor, and the wire never learns that
 * the process changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "eng_state.h"
#include "log.h"

/* ------------------------------------------------------------------ */
/* Saving */

static void put_mad(struct state_w *w, const struct cm_msg *m)
{
	uint8_t mad[CM_MAD_SIZE];

	if (!m || cm_mad_encode(m, mad)) {
		sw_var(w, NULL, 0);
		return;
	}
	sw_var(w, mad, sizeof(mad));
}

static void st_put_lis(struct state_w *w, const struct conn *o)
{
	/* A record its listener's queues hold; a listener's own follows
	 * as its LISTENER record, and any other c->lis is only the origin
	 * of a credit given back, unused. */
	bool linked = o->lis && (o->held || o->credit);

	sw_u32(w, linked ? o->lis->conn->local_id : 0);
}

static void st_put_last(struct state_w *w, const struct conn *o)
{
	struct cm_msg m;

	if (!o->last.len) {
		sw_var(w, NULL, 0);
		return;
	}
	conn_last_get(o, &m);
	put_mad(w, &m);
}

static void st_put_held_req(struct state_w *w, const struct conn *o)
{
	put_mad(w, o->held_req);
}

static void st_put_msg(struct state_w *w, const struct eng_event *o)
{
	put_mad(w, o->has_msg ? &o->msg : NULL);
}

/*
 * c->lis is only valid for a listener itself and for a record its queues
 * hold (held, credit): any other's may name a listener long gone (the
 * origin of a credit given back), so it is never read.
 */
static bool is_listener(const struct conn *c)
{
	return c->state == ENG_STATE_LISTEN && c->lis && c->lis->conn == c;
}

static void save_listener(struct state_w *w, const struct listener *o)
{
	sw_rec_begin(w, STATE_REC_LISTENER);
#define STATE_LISTENER(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
	sw_rec_end(w);
}

static void save_event(struct state_w *w, const struct eng_event *o)
{
	sw_rec_begin(w, STATE_REC_EVENT);
#define STATE_EVENT(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
	sw_rec_end(w);
}

static void save_conn(struct state_w *w, const struct conn *o)
{
	const struct evq_item *it;

	sw_rec_begin(w, STATE_REC_CONN);
#define STATE_CONN(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
	sw_rec_end(w);
	if (is_listener(o))
		save_listener(w, o->lis);
	STAILQ_FOREACH(it, &o->evq.items, link)
	save_event(w, &it->ev);
}

void eng_state_save(const struct eng *eng, struct state_w *w)
{
	const struct eng *o = eng;
	const struct conn *c;

	sw_rec_begin(w, STATE_REC_ENG);
#define STATE_ENG(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
	sw_rec_end(w);
	for (unsigned int i = 0; i < ENG_MAX_PORTS; i++) {
		const struct eng_port *p = &eng->ports[i];

		if (!p->valid)
			continue;
		sw_rec_begin(w, STATE_REC_PORT);
		sw_u16(w, (uint16_t)i);
		sw_u64(w, p->ca_guid);
		sw_u8(w, p->roce);
		sw_rec_end(w);
	}
	/* Listeners first, each followed by its queues in order, so that
	 * the successor rebuilds them as they were (state_fields.def). */
	LIST_FOREACH(c, &eng->all, all_link)
	{
		const struct conn *h;

		if (!is_listener(c))
			continue;
		save_conn(w, c);
		TAILQ_FOREACH(h, &c->lis->held, lis_link)
		save_conn(w, h);
		TAILQ_FOREACH(h, &c->lis->credited, lis_link)
		save_conn(w, h);
	}
	LIST_FOREACH(c, &eng->all, all_link)
	if (!is_listener(c) && !c->held && !c->credit)
		save_conn(w, c);
	sw_counters(w, STATE_CNT_ENG, 0, &eng->cnt, sizeof(eng->cnt));
	sw_counters(w, STATE_CNT_ENG_UNEXPECTED, 0, eng->unexpected,
		    sizeof(eng->unexpected));
	sw_counters(w, STATE_CNT_ENG_HITS, 0, eng->hits, sizeof(eng->hits));
	for (unsigned int i = 0; i < ENG_MAX_PORTS; i++)
		if (eng->ports[i].valid)
			sw_counters(w, STATE_CNT_ENG_PORT, (uint16_t)i,
				    &eng->ports[i].cnt,
				    sizeof(eng->ports[i].cnt));
}

/* ------------------------------------------------------------------ */
/* Restoring */

static bool get_mad(struct state_r *r, struct cm_msg *m)
{
	struct cm_fault fault;
	size_t n;
	const uint8_t *p = sr_var(r, &n, CM_MAD_SIZE);

	if (!n)
		return false;
	if (n != CM_MAD_SIZE || cm_mad_decode(p, n, 0, m, &fault)) {
		sr_fail(r, "a stored MAD does not decode");
		return false;
	}
	return true;
}

/* What restoring keeps between records. */
struct eng_restore {
	struct conn *cur; /* the last CONN, which EVENTs follow */
	unsigned int cur_events;
	bool ports_seen;
	size_t nconn;
};

/* The listener st_get_lis read, until restore_conn links the record (the
 * loop is one thread). */
static uint32_t restore_lis_id;

static void st_get_lis(struct state_r *r, struct conn *o)
{
	restore_lis_id = sr_u32(r);
}

static void st_get_last(struct state_r *r, struct conn *o)
{
	struct cm_msg m;

	if (get_mad(r, &m))
		conn_last_set(o, &m);
}

static void st_get_held_req(struct state_r *r, struct conn *o)
{
	struct cm_msg m;

	if (!get_mad(r, &m))
		return;
	o->held_req = malloc(sizeof(*o->held_req));
	if (!o->held_req) {
		sr_fail(r, "no memory for a held REQ");
		return;
	}
	*o->held_req = m;
}

static void st_get_msg(struct state_r *r, struct eng_event *o)
{
	o->has_msg = get_mad(r, &o->msg);
}

#define REFUSE(text)                                                           \
	do {                                                                   \
		*why = text;                                                   \
		return -EINVAL;                                                \
	} while (0)

/* The previous CONN's events are all there. */
static int close_conn(struct eng_restore *x, const char **why)
{
	if (x->cur && x->cur->evq.unacked && !x->cur_events)
		REFUSE("a connection has an unacknowledged event but no "
		       "event");
	x->cur = NULL;
	x->cur_events = 0;
	return 0;
}

static int restore_conn(struct eng *eng, struct eng_restore *x,
			struct state_r *r, const char **why)
{
	struct conn *o = calloc(1, sizeof(*o));
	struct listener *l = NULL;
	int rc;

	if (!o)
		REFUSE("no memory for a connection");
	restore_lis_id = 0;
	o->eng = eng;
	STAILQ_INIT(&o->evq.items);
	o->evq.next_state = ENG_STATE__COUNT;
#define STATE_CONN(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
	rc = sr_end(r, why);
	if (!rc &&
	    (!o->local_id || ctab_local_find(&eng->by_local, o->local_id))) {
		*why = "a connection's comm id is zero or used twice";
		rc = -EINVAL;
	}
	if (!rc && (o->state >= ENG_STATE__COUNT || o->lap > ENG_LAP_MRA_RCVD ||
		    o->timer > CONN_TIMER_TIMEWAIT)) {
		*why = "a connection's state, LAP state or timer is out of "
		       "range";
		rc = -EINVAL;
	}
	if (!rc && o->state != ENG_STATE_IDLE && o->state != ENG_STATE_LISTEN &&
	    (o->addr.port >= ENG_MAX_PORTS ||
	     !eng->ports[o->addr.port].valid)) {
		*why = "a connection is on a port not served now";
		rc = -EINVAL;
	}
	if (!rc && (o->held + o->credit > 1 || o->held != !!o->held_req)) {
		*why = "a connection is both held and credited, or held "
		       "without its REQ";
		rc = -EINVAL;
	}
	if (!rc && restore_lis_id) {
		struct conn *lc =
			ctab_local_find(&eng->by_local, restore_lis_id);

		l = lc ? lc->lis : NULL;
		if (!l || l->conn != lc || (!o->held && !o->credit)) {
			*why = "a connection names a listener that is not "
			       "one";
			rc = -EINVAL;
		}
	} else if (!rc && (o->held || o->credit)) {
		*why = "a held or credited connection has no listener";
		rc = -EINVAL;
	}
	if (!rc && o->in_remote_id &&
	    ctab_rid_find(&eng->by_rid, o->remote_id, o->remote_guid)) {
		*why = "two connections share a remote comm id";
		rc = -EINVAL;
	}
	if (rc) {
		free(o->held_req);
		conn_last_drop(o);
		free(o);
		return rc;
	}
	ctab_local_add(&eng->by_local, o);
	LIST_INSERT_HEAD(&eng->all, o, all_link);
	eng->nconn++;
	x->nconn++;
	if (o->in_remote_id || o->in_remote_qpn) {
		bool qpn = o->in_remote_qpn;

		o->in_remote_id = o->in_remote_qpn = false;
		conn_remote_link(o, qpn);
	}
	if (l) {
		o->lis = l;
		if (o->held) {
			TAILQ_INSERT_TAIL(&l->held, o, lis_link);
			l->nheld++;
		} else {
			TAILQ_INSERT_TAIL(&l->credited, o, lis_link);
			l->used++;
		}
	}
	if (o->timer != CONN_TIMER_NONE) {
		enum conn_timer kind = o->timer;

		o->timer = CONN_TIMER_NONE;
		timer_arm(o, kind, o->deadline);
	}
	x->cur = o;
	return 0;
}

static int restore_listener(struct eng *eng, struct eng_restore *x,
			    struct state_r *r, const char **why)
{
	struct listener tmp = { 0 }, *o = &tmp;
	struct conn *c = x->cur;
	int rc;

#define STATE_LISTENER(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
	rc = sr_end(r, why);
	if (rc)
		return rc;
	if (!c || c->state != ENG_STATE_LISTEN || c->lis || x->cur_events)
		REFUSE("a LISTENER record does not follow its listening "
		       "connection");
	if (tmp.sel.kind > ENG_SEL_GID)
		REFUSE("a listener's selector is out of range");
	rc = listen_start(c, tmp.service_id, tmp.mask, tmp.backlog, &tmp.sel);
	if (rc == -EADDRINUSE)
		REFUSE("two listeners claim the same service ids");
	if (rc)
		REFUSE("a listener's service id, mask or backlog is invalid");
	c->lis->delivered = tmp.delivered;
	c->lis->held_total = tmp.held_total;
	c->lis->rejected_backlog = tmp.rejected_backlog;
	return 0;
}

static int restore_event(struct eng *eng, struct eng_restore *x,
			 struct state_r *r, const char **why)
{
	struct evq_item *it = calloc(1, sizeof(*it));
	struct eng_event *o;
	int rc;

	if (!it)
		REFUSE("no memory for an event");
	o = &it->ev;
#define STATE_EVENT(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
	rc = sr_end(r, why);
	if (!rc && (!x->cur || x->cur->held)) {
		*why = "an EVENT record follows no connection that may have "
		       "one";
		rc = -EINVAL;
	}
	if (!rc && (o->type >= ENG_EV__COUNT || o->state >= ENG_STATE__COUNT ||
		    o->lap > ENG_LAP_MRA_RCVD)) {
		*why = "an event's type or state is out of range";
		rc = -EINVAL;
	}
	if (rc) {
		free(it);
		return rc;
	}
	o->id = x->cur->local_id;
	o->owner = x->cur->owner;
	STAILQ_INSERT_TAIL(&x->cur->evq.items, it, link);
	x->cur_events++;
	return 0;
}

int eng_restore_counters(struct eng *eng, const struct state_counters_rec *c,
			 const char **why)
{
	uint64_t spare = eng->cnt.spare_bytes;

	switch (c->which) {
	case STATE_CNT_ENG:
		state_counters_copy(&eng->cnt, sizeof(eng->cnt), c);
		/* A gauge of this process's memory, not a count. */
		eng->cnt.spare_bytes = spare;
		return 0;
	case STATE_CNT_ENG_UNEXPECTED:
		state_counters_copy(eng->unexpected, sizeof(eng->unexpected),
				    c);
		return 0;
	case STATE_CNT_ENG_HITS:
		state_counters_copy(eng->hits, sizeof(eng->hits), c);
		return 0;
	case STATE_CNT_ENG_PORT:
		if (c->port >= ENG_MAX_PORTS || !eng->ports[c->port].valid)
			REFUSE("counters of a port not served now");
		state_counters_copy(&eng->ports[c->port].cnt,
				    sizeof(eng->ports[c->port].cnt), c);
		return 0;
	default:
		return 1; /* not the engine's */
	}
}

struct eng_restore *eng_restore_begin(struct eng *eng)
{
	return calloc(1, sizeof(struct eng_restore));
}

int eng_restore_rec(struct eng *eng, struct eng_restore *x, uint16_t type,
		    struct state_r *r, const char **why)
{
	int rc;

	if (type != STATE_REC_EVENT && type != STATE_REC_LISTENER) {
		rc = close_conn(x, why);
		if (rc)
			return rc;
	}
	switch (type) {
	case STATE_REC_ENG: {
		struct eng *o = eng;

#define STATE_ENG(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
		return sr_end(r, why);
	}
	case STATE_REC_PORT: {
		uint16_t port = sr_u16(r);
		uint64_t guid = sr_u64(r);
		bool roce = sr_bool(r);

		rc = sr_end(r, why);
		if (rc)
			return rc;
		if (port >= ENG_MAX_PORTS || !eng->ports[port].valid ||
		    eng->ports[port].ca_guid != guid ||
		    eng->ports[port].roce != roce)
			REFUSE("a port of the saved state is not served now "
			       "(other devices or configuration?)");
		x->ports_seen = true;
		return 0;
	}
	case STATE_REC_CONN:
		return restore_conn(eng, x, r, why);
	case STATE_REC_LISTENER:
		return restore_listener(eng, x, r, why);
	case STATE_REC_EVENT:
		return restore_event(eng, x, r, why);
	case STATE_REC_COUNTERS: {
		struct state_counters_rec c;

		rc = sr_counters(r, &c, why);
		return rc ? rc : eng_restore_counters(eng, &c, why);
	}
	}
	return 1; /* not the engine's */
}

int eng_restore_end(struct eng *eng, struct eng_restore *x, uint64_t now,
		    const char **why)
{
	struct conn *c;
	int rc = close_conn(x, why);

	free(x);
	if (rc)
		return rc;
	/*
	 * A message the predecessor's transport still held (its neighbour
	 * being resolved) never left: send it now. Its timer restarts when
	 * it leaves, as before.
	 */
	LIST_FOREACH(c, &eng->all, all_link)
	if (c->last_deferred)
		conn_resend_last(c);
	(void)now;
	return 0;
}

void eng_restore_abort(struct eng_restore *x)
{
	free(x);
}

#undef REFUSE
