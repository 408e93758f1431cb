// SPDX-License-Identifier: MIT
/*
 * The engine's entry points (cm_engine.h): they find the id, turn the call
 * into a table event and hand it to conn_event(). Nothing here decides
 * protocol; that is conn.c's table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "refuse.h"

struct eng *eng_new(const struct eng_ops *ops, void *ctx,
		    const struct eng_config *cfg)
{
	struct eng *eng = calloc(1, sizeof(*eng));

	if (!eng)
		return NULL;
	eng->ops = *ops;
	eng->ctx = ctx;
	eng->cfg = *cfg;
	LIST_INIT(&eng->all);
	evq_init(eng);
	if (ctab_init(eng) || ltab_init(&eng->listeners)) {
		ctab_fini(eng);
		free(eng);
		return NULL;
	}
	conn_rec_init(eng);
	return eng;
}

void eng_free(struct eng *eng)
{
	struct conn *c;

	if (!eng)
		return;
	while ((c = LIST_FIRST(&eng->all))) {
		LIST_REMOVE(c, all_link);
		evq_clear(c);
		free(c->held_req);
		conn_last_drop(c);
		free(c);
	}
	conn_rec_fini(eng);
	ctab_fini(eng);
	ltab_fini(&eng->listeners);
	evq_fini(eng);
	free(eng->heap);
	free(eng);
}

int eng_port_set(struct eng *eng, uint16_t port, uint64_t ca_guid, bool roce)
{
	if (port >= ENG_MAX_PORTS)
		return -EINVAL;
	eng->ports[port].valid = true;
	eng->ports[port].ca_guid = ca_guid;
	eng->ports[port].roce = roce;
	return 0;
}

/*
 * Feed 'ev' (PORT_DOWN, DEVICE_GONE) to every record on the port whose
 * state has a cell for it (the table decides who is touched: for
 * PORT_DOWN open exchanges and established connections, not listeners,
 * idle ids or timewait; for DEVICE_GONE everything but idle ids and
 * listeners). Held REQs go first, so that a credit given back by a dying
 * id on this port never delivers a held REQ from the same dead port. A
 * record can only free itself in conn_event() (reaped in IDLE), so
 * walking with 'next' saved is safe.
 */
static int eng_port_pass(struct eng *eng, uint16_t port, enum conn_event ev,
			 bool held, uint64_t now)
{
	struct conn *c, *next;
	int told = 0;

	for (c = LIST_FIRST(&eng->all); c; c = next) {
		/* PORT_DOWN fails open exchanges with it (conn_act_fail_*). */
		struct conn_ctx x = { .now = now, .err = -ENETDOWN };
		bool tells = !c->destroyed && !c->held;

		next = LIST_NEXT(c, all_link);
		if (c->addr.port != port || c->held != held ||
		    !conn_table_cell(c->state, ev))
			continue;
		if (conn_event(c, ev, &x) == 0 && tells)
			told++;
	}
	return told;
}

/*
 * Both passes of ev over the port, held REQs first: the ids told, or
 * -EBUSY (called from a callback) / -EINVAL (no such port).
 */
static int eng_port_gone(struct eng *eng, uint16_t port, enum conn_event ev,
			 uint64_t now)
{
	int told;

	if (eng->busy)
		return -EBUSY;
	if (port >= ENG_MAX_PORTS)
		return -EINVAL;
	told = eng_port_pass(eng, port, ev, true, now);
	told += eng_port_pass(eng, port, ev, false, now);
	return told;
}

int eng_port_down(struct eng *eng, uint16_t port, uint64_t now)
{
	int told = eng_port_gone(eng, port, CONN_EV_PORT_DOWN, now);

	if (told < 0)
		return told;
	eng->cnt.port_down++;
	eng->cnt.port_down_ids += (uint64_t)told;
	log_info("port %u down: %d ids told", port, told);
	return told;
}

int eng_device_removed(struct eng *eng, uint16_t port, uint64_t now)
{
	int told = eng_port_gone(eng, port, CONN_EV_DEVICE_GONE, now);

	if (told < 0)
		return told;
	/* Nothing can be sent on it again: a connect there fails now. */
	eng->ports[port].valid = false;
	eng->cnt.device_removed++;
	eng->cnt.device_removed_ids += (uint64_t)told;
	log_info("port %u removed: %d ids told", port, told);
	return told;
}

/*
 * The comm id a message we sent carries as its sender's (ours): how an
 * outcome finds its record. SIDR_REP names the requester's id, not ours,
 * and nothing waits on it.
 */
static bool eng_msg_local_id(const struct cm_msg *m, uint32_t *id)
{
	switch (m->type) {
	case CM_MSG_REQ:
		*id = m->req.local_comm_id;
		return true;
	case CM_MSG_MRA:
		*id = m->mra.local_comm_id;
		return true;
	case CM_MSG_REJ:
		*id = m->rej.local_comm_id;
		return true;
	case CM_MSG_REP:
		*id = m->rep.local_comm_id;
		return true;
	case CM_MSG_RTU:
		*id = m->rtu.local_comm_id;
		return true;
	case CM_MSG_DREQ:
		*id = m->dreq.local_comm_id;
		return true;
	case CM_MSG_DREP:
		*id = m->drep.local_comm_id;
		return true;
	case CM_MSG_LAP:
		*id = m->lap.local_comm_id;
		return true;
	case CM_MSG_APR:
		*id = m->apr.local_comm_id;
		return true;
	case CM_MSG_SIDR_REQ:
		*id = m->sidr_req.request_id;
		return true;
	case CM_MSG_SIDR_REP:
	case CM_MSG__COUNT:
		break;
	}
	return false;
}

void eng_send_done(struct eng *eng, uint16_t port, const struct cm_msg *msg,
		   int err, uint64_t now)
{
	struct conn_ctx x = { .now = now, .err = err };
	struct conn *c;
	uint32_t id;

	if (eng->busy) {
		log_err("eng_send_done: called from a callback");
		return;
	}
	c = eng_msg_local_id(msg, &id) ? ctab_local_find(&eng->by_local, id) :
					 NULL;
	/*
	 * Only the record's outstanding message counts: an outcome for one
	 * it has moved past (a REQ after the REP came, a retransmission
	 * after the first copy left) changes nothing.
	 */
	if (!c || c->addr.port != port || c->last.type != msg->type ||
	    !c->last_deferred) {
		eng->cnt.send_done_stale++;
		return;
	}
	c->last_deferred = false;
	if (!err) {
		/* IBTA 12.7.26: the wait counts from when the MAD left. */
		if (c->timer == CONN_TIMER_RETRANSMIT)
			timer_arm(c, CONN_TIMER_RETRANSMIT, now + c->rtx_ns);
		return;
	}
	if (conn_event(c, CONN_EV_UNREACHABLE, &x) == 0)
		eng->cnt.unreachable++;
}

void eng_recv(struct eng *eng, const struct eng_addr *from,
	      const struct cm_msg *msg, uint64_t now)
{
	if (eng->busy || (unsigned int)msg->type >= CM_MSG__COUNT ||
	    from->port >= ENG_MAX_PORTS) {
		log_err("eng_recv: %s", eng->busy ? "called from a callback" :
					from->port >= ENG_MAX_PORTS ?
						    "port out of range" :
						    "bad message type");
		return;
	}
	cnt_received(eng, from->port, msg->type);
	rx_dispatch(eng, from, msg, now);
}

uint64_t eng_next_deadline(const struct eng *eng)
{
	return timer_next(eng);
}

void eng_run_timers(struct eng *eng, uint64_t now)
{
	enum conn_timer kind;
	enum conn_event ev = CONN_EV_TIMEOUT;
	struct conn *c;

	if (eng->busy)
		return;
	while ((c = timer_pop_due(eng, now, &kind))) {
		struct conn_ctx x = { .now = now };

		switch (kind) {
		case CONN_TIMER_RETRANSMIT:
			/* A message not yet out uses no retry (resend). */
			ev = c->retries_left || c->last_deferred ?
				     CONN_EV_TIMEOUT :
				     CONN_EV_TIMEOUT_LAST;
			break;
		case CONN_TIMER_MRA_DUE:
			ev = CONN_EV_MRA_DUE;
			break;
		case CONN_TIMER_TIMEWAIT:
			ev = CONN_EV_TIMEWAIT_DONE;
			break;
		case CONN_TIMER_NONE:
			continue;
		}
		conn_event(c, ev, &x);
	}
}

/* The id as a client sees it: destroyed and held records are not ids. */
static struct conn *eng_find(const struct eng *eng, uint32_t id)
{
	struct conn *c = ctab_local_find(&eng->by_local, id);

	if (!c || c->destroyed || c->held)
		return NULL;
	return c;
}

static int eng_call(struct eng *eng, uint32_t id, enum conn_event ev,
		    struct conn_ctx *x)
{
	struct conn *c;

	if (eng->busy)
		return -EBUSY;
	c = eng_find(eng, id);
	if (!c)
		return -ENOENT;
	return conn_event(c, ev, x);
}

int eng_create_id(struct eng *eng, uint64_t owner, uint64_t context,
		  uint32_t *id)
{
	struct conn *c;

	if (eng->busy)
		return -EBUSY;
	c = conn_new(eng);
	if (!c)
		return -ENOMEM;
	c->owner = owner;
	c->context = context;
	*id = c->local_id;
	return 0;
}

int eng_set_context(struct eng *eng, uint32_t id, uint64_t context)
{
	struct conn *c;

	if (eng->busy)
		return -EBUSY;
	c = eng_find(eng, id);
	if (!c)
		return -ENOENT;
	c->context = context;
	return 0;
}

int eng_ack(struct eng *eng, uint32_t id, uint64_t now)
{
	struct conn *c;

	if (eng->busy)
		return -EBUSY;
	c = eng_find(eng, id);
	if (!c)
		return -ENOENT;
	(void)now;
	return evq_ack(c);
}

int eng_destroy(struct eng *eng, uint32_t id, uint64_t now)
{
	struct conn_ctx x = { .now = now };

	return eng_call(eng, id, CONN_EV_API_DESTROY, &x);
}

int eng_destroy_owner(struct eng *eng, uint64_t owner, uint64_t now)
{
	uint32_t *ids;
	size_t n = 0, i;
	struct conn *c;
	int done = 0;

	if (eng->busy)
		return -EBUSY;
	/*
	 * Collect first: destroying a listener frees its held records, so
	 * walking the list while destroying would step on freed memory.
	 */
	ids = malloc((eng->nconn + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	/*
	 * Listeners first: destroying an undecided passive id returns its
	 * credit, and a listener still alive would hand a held REQ to a new
	 * id of the owner that is going away. With the listeners gone, held
	 * REQs are answered (REJ 8) instead.
	 */
	LIST_FOREACH(c, &eng->all, all_link)
	{
		if (c->owner == owner && !c->destroyed && !c->held &&
		    c->state == ENG_STATE_LISTEN)
			ids[n++] = c->local_id;
	}
	LIST_FOREACH(c, &eng->all, all_link)
	{
		if (c->owner == owner && !c->destroyed && !c->held &&
		    c->state != ENG_STATE_LISTEN)
			ids[n++] = c->local_id;
	}
	for (i = 0; i < n; i++)
		done += eng_destroy(eng, ids[i], now) == 0;
	free(ids);
	return done;
}

int eng_listen(struct eng *eng, uint32_t id, uint64_t service_id, uint64_t mask,
	       unsigned int backlog, const struct eng_listen_sel *sel,
	       uint64_t now)
{
	struct conn_ctx x = { .now = now,
			      .service_id = service_id,
			      .mask = mask,
			      .backlog = backlog,
			      .sel = sel };

	return eng_call(eng, id, CONN_EV_API_LISTEN, &x);
}

/*
 * The API calls whose one argument the table's action takes as it is:
 * each is one CONN_EV_API_* event with that argument in the context.
 */
#define ENG_API_CALL(name, EV, type, member)                                   \
	int eng_##name(struct eng *eng, uint32_t id, type arg, uint64_t now)   \
	{                                                                      \
		struct conn_ctx x = { .now = now, .member = arg };             \
                                                                               \
		return eng_call(eng, id, CONN_EV_API_##EV, &x);                \
	}

ENG_API_CALL(connect, CONNECT, struct eng_connect_param *, connect)
ENG_API_CALL(accept, ACCEPT, struct cm_rep *, rep)
ENG_API_CALL(reject, REJECT, const struct cm_rej *, rej)
ENG_API_CALL(rtu, RTU, const struct cm_rtu *, rtu)
ENG_API_CALL(lap, LAP, const struct cm_lap *, lap)
ENG_API_CALL(sidr_req, SIDR_REQ, const struct eng_sidr_param *, sidr)

int eng_mra(struct eng *eng, uint32_t id, uint8_t service_timeout,
	    const uint8_t *pd, size_t pd_len, uint64_t now)
{
	struct conn_ctx x = {
		.now = now, .u8 = service_timeout, .pd = pd, .pd_len = pd_len
	};

	if (service_timeout > 31)
		return refuse(-EINVAL, "MRA service timeout %u above 31",
			      service_timeout);
	if (pd_len > CM_MRA_PRIVATE_DATA_SIZE)
		return refuse(-EINVAL,
			      "MRA private data of %zu bytes, at most "
			      "%d",
			      (size_t)pd_len, CM_MRA_PRIVATE_DATA_SIZE);
	return eng_call(eng, id, CONN_EV_API_MRA, &x);
}

int eng_establish(struct eng *eng, uint32_t id, uint64_t now)
{
	struct conn_ctx x = { .now = now };

	return eng_call(eng, id, CONN_EV_API_ESTABLISH, &x);
}

int eng_disconnect(struct eng *eng, uint32_t id, const uint8_t *pd,
		   size_t pd_len, uint64_t now)
{
	struct conn_ctx x = { .now = now, .pd = pd, .pd_len = pd_len };

	return eng_call(eng, id, CONN_EV_API_DISCONNECT, &x);
}

int eng_apr(struct eng *eng, uint32_t id, uint8_t status, const uint8_t *info,
	    size_t info_len, const uint8_t *pd, size_t pd_len, uint64_t now)
{
	struct conn_ctx x = { .now = now,
			      .u8 = status,
			      .info = info,
			      .info_len = info_len,
			      .pd = pd,
			      .pd_len = pd_len };

	/* IBTA Table 116: the info length field counts the info bytes. */
	if (status > CM_APR_STATUS_MAX || info_len > CM_APR_INFO_SIZE ||
	    pd_len > CM_APR_PRIVATE_DATA_SIZE)
		return refuse(-EINVAL,
			      "APR status %u, info of %zu bytes or "
			      "private data of %zu bytes out of range",
			      status, (size_t)info_len, (size_t)pd_len);
	return eng_call(eng, id, CONN_EV_API_APR, &x);
}

int eng_sidr_rep(struct eng *eng, uint32_t id, const struct cm_sidr_rep *rep,
		 uint64_t now)
{
	struct conn_ctx x = { .now = now, .sidr_rep = rep };

	/* IBTA Table 120: additional information is at most 72 bytes; a
	 * longer claim would make a SIDR_REP no receiver accepts. */
	if (rep->status > CM_SIDR_STATUS_MAX ||
	    rep->info_length > CM_SIDR_REP_INFO_SIZE)
		return refuse(-EINVAL,
			      "SIDR_REP status %u or info of %u bytes "
			      "out of range",
			      rep->status, rep->info_length);
	return eng_call(eng, id, CONN_EV_API_SIDR_REP, &x);
}

int eng_id_state(const struct eng *eng, uint32_t id, enum eng_state *state)
{
	struct conn *c = eng_find(eng, id);

	if (!c)
		return -ENOENT;
	*state = c->state;
	return 0;
}

int eng_id_info(const struct eng *eng, uint32_t id, struct eng_id_info *info)
{
	struct conn *c = eng_find(eng, id);
	const struct eng_terms *t;

	if (!c)
		return -ENOENT;
	t = &c->terms;
	memset(info, 0, sizeof(*info));
	info->state = c->state;
	info->lap = conn_lap_in(c, c->state);
	info->active = c->active;
	info->context = c->context;
	info->local_comm_id = c->local_id;
	info->remote_comm_id = t->sidr ? 0 : c->remote_id;
	info->local_qpn = c->local_qpn;
	info->remote_qpn = t->sidr ? t->sidr_qpn : c->remote_qpn;
	info->service_id = c->service_id;
	info->remote_ca_guid = t->sidr ? 0 : c->remote_guid;
	info->packet_life_time = c->plt;
	info->terms = *t;
	if (c->state == ENG_STATE_LISTEN && c->lis) {
		info->service_id = c->lis->service_id;
		info->service_mask = c->lis->mask;
		info->backlog = c->lis->backlog;
		info->credits_used = c->lis->used;
		info->held = c->lis->nheld;
	}
	return 0;
}

size_t eng_record_count(const struct eng *eng)
{
	return eng->nconn;
}

int eng_walk(const struct eng *eng,
	     int (*fn)(void *arg, const struct eng_conn_info *info), void *arg)
{
	struct eng_conn_info info;
	struct evq_item *it;
	struct conn *c;
	int ret;

	LIST_FOREACH(c, &eng->all, all_link)
	{
		memset(&info, 0, sizeof(info));
		info.id = c->local_id;
		info.remote_id = c->remote_id;
		info.remote_guid = c->remote_guid;
		info.local_qpn = c->local_qpn;
		info.remote_qpn = c->remote_qpn;
		info.service_id = c->service_id;
		info.owner = c->owner;
		info.state = c->state;
		info.lap = c->lap;
		info.active = c->active;
		info.destroyed = c->destroyed;
		info.held = c->held;
		info.unacked = c->evq.unacked;
		STAILQ_FOREACH(it, &c->evq.items, link)
		info.queued++;
		if (info.unacked)
			info.queued--;
		info.deadline = c->timer != CONN_TIMER_NONE ? c->deadline :
							      ENG_NO_DEADLINE;
		ret = fn(arg, &info);
		if (ret)
			return ret;
	}
	return 0;
}

int eng_listen_info(const struct eng *eng, uint32_t id,
		    struct eng_listen_info *info)
{
	struct conn *c = eng_find(eng, id);
	struct listener *l;

	if (!c)
		return -ENOENT;
	l = c->lis;
	if (c->state != ENG_STATE_LISTEN || !l)
		return -EINVAL;
	info->service_id = l->service_id;
	info->mask = l->mask;
	info->sel = l->sel;
	info->backlog = l->backlog;
	info->credits_used = l->used;
	info->held = l->nheld;
	info->delivered = l->delivered;
	info->held_total = l->held_total;
	info->rejected_backlog = l->rejected_backlog;
	return 0;
}
