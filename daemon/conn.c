// SPDX-License-Identifier: MIT
/*
 * The connection state machine of IBTA Vol 1 chapter 12 (Figures 147-150,
 * 12.9) as one table: conn_table[state][event] -> {next state, action}.
 * conn_event() is the only way a connection changes state; it runs the
 * action, and only if the action succeeds moves to the next state through
 * conn_set_state(), which logs "old -> new on event".
 *
 * Timers: a state owns at most one deadline. When a cell changes state the
 * old state's deadline is cancelled; the action asks for the new one through
 * ctx->arm. Cells that keep the state keep the deadline unless the action
 * replaces it.
 *
 * Empty cells go to conn_unexpected(): API calls fail with -EINVAL and
 * change nothing (DESIGN lesson 3), messages and timers are counted per
 * (state, event) and logged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "refuse.h"

uint64_t conn_exp_ns(uint8_t x)
{
	/* IBTA 12.7.x: timeouts are 4.096 us * 2^x, x a 5-bit value. */
	return 4096ULL << (x & 31);
}

/* A call's name as the client knows it: "RTU", not "API_RTU". */
static const char *conn_api_name(enum conn_event ev)
{
	const char *n = conn_event_name(ev);

	return strncmp(n, "API_", 4) ? n : n + 4;
}

/* A message built from the client's values that the peer would drop. */
static int conn_refuse_fault(const char *what, const struct cm_fault *f)
{
	if (f->field)
		return refuse(-EINVAL, "%s %s %llu: %s", what, f->field,
			      (unsigned long long)f->value,
			      cm_fault_str(f->code));
	return refuse(-EINVAL, "%s: %s", what, cm_fault_str(f->code));
}
static uint32_t conn_psn(struct eng *eng)
{
	uint32_t psn = conn_random(eng) & 0xffffff;

	return psn ? psn : 1;
}

static bool conn_awaits_app_req(enum eng_state s)
{
	return s == ENG_STATE_REQ_RCVD || s == ENG_STATE_MRA_REQ_SENT;
}

/*
 * The LAP sub-state of ESTABLISHED (IBTA 12.8) changes here only, logged
 * like the main state. It has no meaning outside ESTABLISHED.
 */
static void conn_set_lap(struct conn *c, enum eng_lap_state next,
			 enum conn_event ev)
{
	if (c->lap == next)
		return;
	log_debug("conn %08x/%08x: LAP %s -> %s on %s", c->local_id,
		  c->remote_id, eng_lap_state_name(c->lap),
		  eng_lap_state_name(next), conn_event_name(ev));
	c->lap = next;
}

static void conn_set_state(struct conn *c, enum eng_state next,
			   enum conn_event ev, uint64_t now)
{
	enum eng_state old = c->state;

	log_debug("conn %08x/%08x: %s -> %s on %s", c->local_id, c->remote_id,
		  eng_state_name(old), eng_state_name(next),
		  conn_event_name(ev));
	c->state = next;
	/* A LAP exchange dies with the connection it was for. */
	if (next != ENG_STATE_ESTABLISHED)
		conn_set_lap(c, ENG_LAP_IDLE, ev);
	/* DESIGN lesson 1: an answered (or dead) REQ returns its credit. */
	if (conn_awaits_app_req(old) && !conn_awaits_app_req(next))
		listen_release(c, now);
	switch (next) {
	case ENG_STATE_IDLE:
		timer_cancel(c);
		conn_remote_unlink(c);
		break;
	case ENG_STATE_TIMEWAIT:
		/*
		 * IBTA 12.9.4: stay in timewait long enough for packets of
		 * the old connection to drain: 2 x packet life time plus the
		 * peer's ACK delay.
		 */
		timer_arm(c, CONN_TIMER_TIMEWAIT,
			  now + 2 * conn_exp_ns(c->plt) +
				  conn_exp_ns(c->ack_delay));
		break;
	case ENG_STATE_LISTEN:
	case ENG_STATE_REQ_SENT:
	case ENG_STATE_REQ_RCVD:
	case ENG_STATE_MRA_REQ_SENT:
	case ENG_STATE_MRA_REQ_RCVD:
	case ENG_STATE_REP_SENT:
	case ENG_STATE_REP_RCVD:
	case ENG_STATE_MRA_REP_SENT:
	case ENG_STATE_MRA_REP_RCVD:
	case ENG_STATE_ESTABLISHED:
	case ENG_STATE_DREQ_SENT:
	case ENG_STATE_DREQ_RCVD:
	case ENG_STATE_SIDR_REQ_SENT:
	case ENG_STATE_SIDR_REQ_RCVD:
	case ENG_STATE__COUNT:
		break;
	}
}

static void conn_arm(struct conn_ctx *x, enum conn_timer kind, uint64_t at)
{
	x->arm = kind;
	x->arm_at = at;
}

static void conn_arm_rtx(struct conn *c, struct conn_ctx *x)
{
	conn_arm(x, CONN_TIMER_RETRANSMIT, x->now + c->rtx_ns);
}

static enum cm_msg_ref conn_rej_ref(enum eng_state s)
{
	switch (s) {
	case ENG_STATE_REQ_RCVD:
	case ENG_STATE_MRA_REQ_SENT:
		return CM_MSG_REF_REQ;
	case ENG_STATE_REP_RCVD:
	case ENG_STATE_MRA_REP_SENT:
		return CM_MSG_REF_REP;
	case ENG_STATE_IDLE:
	case ENG_STATE_LISTEN:
	case ENG_STATE_REQ_SENT:
	case ENG_STATE_MRA_REQ_RCVD:
	case ENG_STATE_REP_SENT:
	case ENG_STATE_MRA_REP_RCVD:
	case ENG_STATE_ESTABLISHED:
	case ENG_STATE_DREQ_SENT:
	case ENG_STATE_DREQ_RCVD:
	case ENG_STATE_TIMEWAIT:
	case ENG_STATE_SIDR_REQ_SENT:
	case ENG_STATE_SIDR_REQ_RCVD:
	case ENG_STATE__COUNT:
		break;
	}
	return CM_MSG_REF_OTHER;
}

static bool conn_roce(const struct conn *c)
{
	return c->eng->ports[c->addr.port].roce;
}

static void conn_send_rej(struct conn *c, enum cm_rej_reason reason)
{
	struct cm_msg m;

	conn_build_rej(c, &m, reason, conn_rej_ref(c->state));
	conn_send(c, &m, true);
}

static void conn_send_dreq(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	conn_build_dreq(c, &m, x->pd, x->pd_len);
	conn_send(c, &m, true);
	c->retries_left = c->max_retries;
	conn_arm_rtx(c, x);
}

static void conn_send_drep(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	conn_build_drep(c, &m, x->pd, x->pd_len);
	conn_send(c, &m, true);
}

/* Take the peer's identity and timing from its REQ (passive side). */
static void conn_from_req(struct conn *c, struct conn_ctx *x)
{
	const struct cm_req *req = &x->msg->req;

	c->addr = *x->from;
	c->tid = x->msg->hdr.tid;
	c->remote_id = req->local_comm_id;
	c->remote_guid = req->local_ca_guid;
	c->remote_qpn = req->local_qpn;
	c->service_id = req->service_id;
	c->plt = cm_req_packet_life_time(req);
	c->max_retries = c->retries_left = req->max_cm_retries;
	/* IBTA 12.7.26: the active side answers our REP within its local
	 * CM response timeout; we answer its REQ within the remote one. */
	c->rtx_ns = 2 * conn_exp_ns(c->plt) +
		    conn_exp_ns(req->local_cm_resp_timeout);
	c->peer_wait_ns = conn_exp_ns(req->remote_cm_resp_timeout);
	conn_remote_link(c, true);
}

/* Actions. Each returns 0, or -errno with nothing changed. */

static int conn_act_listen(struct conn *c, struct conn_ctx *x)
{
	return listen_start(c, x->service_id, x->mask, x->backlog, x->sel);
}

static int conn_act_connect(struct conn *c, struct conn_ctx *x)
{
	struct eng *eng = c->eng;
	struct eng_connect_param *p = x->connect;
	struct cm_req *req = &p->req;
	struct cm_fault f;
	struct cm_msg m;

	if (p->dest.port >= ENG_MAX_PORTS || !eng->ports[p->dest.port].valid)
		return refuse(-ENODEV, "CONNECT: the path's port is gone");
	req->local_comm_id = c->local_id;
	req->local_ca_guid = eng->ports[p->dest.port].ca_guid;
	if (!req->starting_psn)
		req->starting_psn = conn_psn(eng);
	/* A REQ the peer's decoder would drop is the client's error. */
	cm_msg_init(&m, CM_MSG_REQ, 0);
	m.req = *req;
	if (cm_msg_validate(&m, &f))
		return conn_refuse_fault("REQ", &f);
	c->addr = p->dest;
	c->active = true;
	c->tid = ((uint64_t)conn_random(eng) << 32) | c->local_id;
	m.hdr.tid = c->tid;
	c->local_qpn = req->local_qpn;
	c->service_id = req->service_id;
	c->plt = p->packet_life_time & 31;
	c->max_retries = c->retries_left = req->max_cm_retries;
	/* IBTA 12.7.26: wait 2 x PLT + the remote CM response time. */
	c->rtx_ns = 2 * conn_exp_ns(c->plt) +
		    conn_exp_ns(req->remote_cm_resp_timeout);
	c->peer_wait_ns = conn_exp_ns(req->local_cm_resp_timeout);
	conn_send(c, &m, true);
	conn_arm_rtx(c, x);
	return 0;
}

static int conn_act_req_new(struct conn *c, struct conn_ctx *x)
{
	conn_from_req(c, x);
	listen_take_credit(x->lis, c);
	evq_push(c, ENG_EV_REQ_RECEIVED, 0, x->msg);
	/* Answer, or send an MRA, before the peer's wait runs out. */
	conn_arm(x, CONN_TIMER_MRA_DUE, x->now + c->peer_wait_ns / 2);
	return 0;
}

static int conn_act_req_hold(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	c->held_req = malloc(sizeof(*c->held_req));
	if (!c->held_req)
		return -ENOMEM;
	*c->held_req = *x->msg;
	conn_from_req(c, x);
	listen_hold(x->lis, c);
	/* DESIGN lesson 1: the peer keeps waiting while we hold its REQ. */
	conn_build_mra(c, &m, CM_MSG_REF_REQ, c->eng->cfg.mra_service_timeout,
		       NULL, 0);
	conn_send(c, &m, true);
	return 0;
}

/* IBTA 12.9.7: a duplicate is answered by what we sent last, if needed. */
static int conn_act_dup(struct conn *c, struct conn_ctx *x)
{
	cnt_duplicate(c->eng, x->from->port, x->msg->type);
	return 0;
}

static int conn_act_dup_resend(struct conn *c, struct conn_ctx *x)
{
	cnt_duplicate(c->eng, x->from->port, x->msg->type);
	conn_resend_last(c);
	return 0;
}

static int conn_act_dup_rtu(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/* IBTA 12.9.7: a duplicate REP means our RTU was lost. */
	cnt_duplicate(c->eng, x->from->port, x->msg->type);
	if (c->last.type == CM_MSG_RTU) {
		conn_resend_last(c);
		return 0;
	}
	conn_build_rtu(c, &m);
	conn_send(c, &m, false);
	return 0;
}

static int conn_act_dup_drep(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/* IBTA 12.9.7: a DREQ in timewait means our DREP was lost. */
	cnt_duplicate(c->eng, x->from->port, x->msg->type);
	if (c->last.type == CM_MSG_DREP) {
		conn_resend_last(c);
		return 0;
	}
	conn_build_drep(c, &m, NULL, 0);
	conn_send(c, &m, false);
	return 0;
}

static int conn_act_dup_rtu_timewait(struct conn *c, struct conn_ctx *x)
{
	/*
	 * We rejected the REP (or gave up on it) and the peer answers with
	 * an RTU: our REJ was lost, and REJ is never retransmitted by its
	 * sender. Repeat it, so that the peer does not stay established
	 * alone; a REJ that crossed the RTU is merely a duplicate there.
	 */
	cnt_duplicate(c->eng, x->from->port, x->msg->type);
	if (c->last.type == CM_MSG_REJ)
		conn_resend_last(c);
	return 0;
}

static int conn_act_dup_req_timewait(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/* IBTA 12.9.8.3.1: a REQ for a connection in timewait is stale. */
	cnt_duplicate(c->eng, x->from->port, x->msg->type);
	c->eng->cnt.stale_rejected++;
	conn_build_rej(c, &m, CM_REJ_STALE_CONN, CM_MSG_REF_REQ);
	conn_send(c, &m, false);
	return 0;
}

static int conn_act_accept(struct conn *c, struct conn_ctx *x)
{
	struct eng *eng = c->eng;
	struct cm_rep *rep = x->rep;
	struct cm_msg m;

	rep->local_comm_id = c->local_id;
	rep->remote_comm_id = c->remote_id;
	rep->local_ca_guid = eng->ports[c->addr.port].ca_guid;
	if (!rep->starting_psn)
		rep->starting_psn = conn_psn(eng);
	c->local_qpn = rep->local_qpn;
	c->ack_delay = rep->target_ack_delay;
	c->retries_left = c->max_retries;
	cm_msg_init(&m, CM_MSG_REP, c->tid);
	m.rep = *rep;
	conn_send(c, &m, true);
	conn_arm_rtx(c, x);
	return 0;
}

static int conn_act_reject(struct conn *c, struct conn_ctx *x)
{
	struct cm_fault f;
	struct cm_msg m;

	cm_msg_init(&m, CM_MSG_REJ, c->tid);
	m.rej = *x->rej;
	m.rej.local_comm_id = c->local_id;
	m.rej.remote_comm_id = c->remote_id;
	m.rej.message_rejected = conn_rej_ref(c->state);
	/* Reason 1..35 and an ARI that fits (IBTA Table 108/109). */
	if (cm_msg_validate(&m, &f))
		return conn_refuse_fault("REJ", &f);
	conn_send(c, &m, true);
	return 0;
}

static int conn_act_mra(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;
	enum cm_msg_ref ref = conn_rej_ref(c->state);

	conn_build_mra(c, &m, ref, x->u8, x->pd, x->pd_len);
	conn_send(c, &m, true);
	return 0;
}

static int conn_act_mra_due(struct conn *c, struct conn_ctx *x)
{
	x->u8 = c->eng->cfg.mra_service_timeout;
	return conn_act_mra(c, x);
}

static int conn_act_rtu(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	conn_build_rtu(c, &m);
	if (x->rtu)
		memcpy(m.rtu.private_data, x->rtu->private_data,
		       sizeof(m.rtu.private_data));
	conn_send(c, &m, true);
	return 0;
}

static int conn_act_rep(struct conn *c, struct conn_ctx *x)
{
	const struct cm_rep *rep = &x->msg->rep;

	c->remote_id = rep->local_comm_id;
	c->remote_guid = rep->local_ca_guid;
	c->remote_qpn = rep->local_qpn;
	c->ack_delay = rep->target_ack_delay;
	conn_remote_link(c, true);
	evq_push(c, ENG_EV_REP_RECEIVED, 0, x->msg);
	conn_arm(x, CONN_TIMER_MRA_DUE, x->now + c->peer_wait_ns / 2);
	return 0;
}

static int conn_act_rep_stale(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/*
	 * IBTA 12.9.8.3.2: the REP names a QP we still know (or are in
	 * timewait with): reject it as stale and end the old connection.
	 */
	c->remote_id = x->msg->rep.local_comm_id;
	conn_build_rej(c, &m, CM_REJ_STALE_CONN, CM_MSG_REF_REP);
	conn_send(c, &m, true);
	c->eng->cnt.stale_rejected++;
	evq_push(c, ENG_EV_REQ_ERROR, -ESTALE, x->msg);
	if (x->other) {
		struct conn_ctx ox = { .now = x->now };

		conn_event(x->other, CONN_EV_STALE, &ox);
	}
	return 0;
}

/* IBTA 12.6.6: wait the MRA's service timeout plus the round trip. */
static void conn_mra_wait(struct conn *c, struct conn_ctx *x)
{
	conn_arm(x, CONN_TIMER_RETRANSMIT,
		 x->now + conn_exp_ns(x->msg->mra.service_timeout) +
			 2 * conn_exp_ns(c->plt));
}

static int conn_act_mra_rcvd(struct conn *c, struct conn_ctx *x)
{
	/* The owner hears of a message's first MRA; another one only
	 * extends the wait (the kernel's cm_mra_handler counts it). */
	if (c->state == ENG_STATE_REQ_SENT || c->state == ENG_STATE_REP_SENT)
		evq_push(c, ENG_EV_MRA_RECEIVED, 0, x->msg);
	conn_mra_wait(c, x);
	return 0;
}

static int conn_act_rej(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_REJ_RECEIVED, 0, x->msg);
	return 0;
}

static int conn_act_rtu_rcvd(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_RTU_RECEIVED, 0, x->msg);
	return 0;
}

static int conn_act_dreq_rcvd(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_DREQ_RECEIVED, 0, x->msg);
	return 0;
}

static int conn_act_disconnect(struct conn *c, struct conn_ctx *x)
{
	conn_send_dreq(c, x);
	return 0;
}

static int conn_act_stale(struct conn *c, struct conn_ctx *x)
{
	log_debug("conn %08x: QP reused by a new connection, disconnecting",
		  c->local_id);
	conn_send_dreq(c, x);
	return 0;
}

static int conn_act_stale_ignore(struct conn *c, struct conn_ctx *x)
{
	return 0;
}

static int conn_act_drep(struct conn *c, struct conn_ctx *x)
{
	conn_send_drep(c, x);
	return 0;
}

/*
 * A held REQ whose listener went away was never seen by a client: answer
 * it with REJ "invalid service id" (IBTA Table 109 code 8), as a REQ
 * arriving now would be, and end the record (it has no owner).
 */
static int conn_act_listener_gone(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	c->destroyed = true;
	conn_build_rej(c, &m, CM_REJ_INVALID_SERVICE_ID, CM_MSG_REF_REQ);
	conn_send(c, &m, false);
	return 0;
}

/*
 * A disconnect with nothing left to do: our DREQ is already out, or the
 * peer's DREQ crossed ours (IBTA 12.9.6) or came first and was answered.
 * The connection is going down as asked, so the call succeeds, as
 * librdmacm's rdma_disconnect does in those states; nothing is sent.
 */
static int conn_act_disconnect_done(struct conn *c, struct conn_ctx *x)
{
	return 0;
}

static int conn_act_drep_unknown(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/* IBTA 12.9.6: a DREQ for no live connection still gets a DREP. */
	conn_build_drep(c, &m, NULL, 0);
	m.drep.local_comm_id = x->msg->dreq.remote_comm_id;
	m.drep.remote_comm_id = x->msg->dreq.local_comm_id;
	m.hdr.tid = x->msg->hdr.tid;
	eng_send_raw(c->eng, &m, x->from);
	return 0;
}

static int conn_act_dreq_collision(struct conn *c, struct conn_ctx *x)
{
	/*
	 * IBTA 12.9.6: both sides sent DREQ. Answer theirs; ours is answered
	 * by the same token, so the disconnect is complete.
	 */
	conn_send_drep(c, x);
	evq_push(c, ENG_EV_DREP_RECEIVED, 0, x->msg);
	return 0;
}

static int conn_act_drep_rcvd(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_DREP_RECEIVED, 0, x->msg);
	return 0;
}

/* Our LAP waits for its APR (IBTA 12.8: LAP_SENT or MRA_LAP_RCVD). */
static bool conn_lap_waits(const struct conn *c)
{
	return c->lap == ENG_LAP_SENT || c->lap == ENG_LAP_MRA_RCVD;
}

/* The peer's LAP waits for our APR (IBTA 12.8: LAP_RCVD or MRA_LAP_SENT). */
static bool conn_lap_owed(const struct conn *c)
{
	return c->lap == ENG_LAP_RCVD || c->lap == ENG_LAP_MRA_SENT;
}

/*
 * A LAP call its sub-state does not allow is refused like a call in an
 * empty cell: -EINVAL, counted, nothing changed.
 */
static int conn_lap_refuse(struct conn *c, struct conn_ctx *x)
{
	c->eng->cnt.unexpected_api++;
	log_debug("conn %08x: %s not allowed in LAP %s", c->local_id,
		  conn_event_name(x->ev), eng_lap_state_name(c->lap));
	return refuse(
		-EINVAL, "%s not allowed in LAP state %s (comm id %#010x)",
		conn_api_name(x->ev), eng_lap_state_name(c->lap), c->local_id);
}

static int conn_act_resend(struct conn *c, struct conn_ctx *x)
{
	if (c->state == ENG_STATE_ESTABLISHED && !conn_lap_waits(c))
		return 0;
	/*
	 * The message has not left yet (the transport resolves its
	 * destination): a copy would only queue behind it, and the peer
	 * cannot have lost what it never got. Wait again, retry kept; the
	 * transport's verdict (eng_send_done) restarts or ends the wait.
	 */
	if (c->last_deferred) {
		conn_arm_rtx(c, x);
		return 0;
	}
	c->retries_left--;
	conn_resend_last(c);
	conn_arm_rtx(c, x);
	return 0;
}

static int conn_act_req_timeout(struct conn *c, struct conn_ctx *x)
{
	/* IBTA 12.9.7.1: give up, and tell the peer why (ARI: our GUID). */
	c->eng->cnt.timeouts++;
	conn_send_rej(c, CM_REJ_TIMEOUT);
	evq_push(c, ENG_EV_REQ_ERROR, -ETIMEDOUT, NULL);
	return 0;
}

static int conn_act_rep_timeout(struct conn *c, struct conn_ctx *x)
{
	c->eng->cnt.timeouts++;
	conn_send_rej(c, CM_REJ_TIMEOUT);
	evq_push(c, ENG_EV_REP_ERROR, -ETIMEDOUT, NULL);
	return 0;
}

static int conn_act_dreq_timeout(struct conn *c, struct conn_ctx *x)
{
	c->eng->cnt.timeouts++;
	evq_push(c, ENG_EV_DREQ_ERROR, -ETIMEDOUT, NULL);
	return 0;
}

static int conn_act_lap_timeout(struct conn *c, struct conn_ctx *x)
{
	if (!conn_lap_waits(c))
		return 0;
	c->eng->cnt.timeouts++;
	conn_set_lap(c, ENG_LAP_IDLE, x->ev);
	evq_push(c, ENG_EV_LAP_ERROR, -ETIMEDOUT, NULL);
	return 0;
}

static int conn_act_sidr_timeout(struct conn *c, struct conn_ctx *x)
{
	c->eng->cnt.timeouts++;
	evq_push(c, ENG_EV_SIDR_REQ_ERROR, -ETIMEDOUT, NULL);
	return 0;
}

static int conn_act_timewait_done(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_TIMEWAIT_EXIT, 0, NULL);
	return 0;
}

static int conn_act_lap(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/* RoCE has no alternate path to load (IBTA A16/A17). */
	if (conn_roce(c))
		return -EOPNOTSUPP;
	if (c->lap != ENG_LAP_IDLE)
		return conn_lap_refuse(c, x);
	cm_msg_init(&m, CM_MSG_LAP, c->tid);
	m.lap = *x->lap;
	m.lap.local_comm_id = c->local_id;
	m.lap.remote_comm_id = c->remote_id;
	m.lap.remote_qpn = c->remote_qpn;
	conn_send(c, &m, true);
	conn_set_lap(c, ENG_LAP_SENT, x->ev);
	c->retries_left = c->max_retries;
	conn_arm_rtx(c, x);
	return 0;
}

/* IBTA Table 116; info and pd as the client gave them, or NULL. */
static void conn_send_apr(struct conn *c, uint8_t status,
			  const struct conn_ctx *x)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_MSG_APR, c->tid);
	m.apr.local_comm_id = c->local_id;
	m.apr.remote_comm_id = c->remote_id;
	m.apr.status = status;
	if (x && x->info_len) {
		memcpy(m.apr.info, x->info, x->info_len);
		m.apr.info_length = (uint8_t)x->info_len;
	}
	if (x && x->pd_len)
		memcpy(m.apr.private_data, x->pd, x->pd_len);
	conn_send(c, &m, false);
}

/*
 * IBTA 12.6.6 / Table 107: an MRA for a LAP says "message MRAed" 2. It is
 * rebuilt rather than remembered: c->last keeps what a duplicate REQ or REP
 * must get in ESTABLISHED. So the client's private data (pd) goes with the
 * first one; one resent for a duplicate LAP carries none.
 */
static void conn_send_mra_lap(struct conn *c, const uint8_t *pd, size_t pd_len)
{
	struct cm_msg m;

	conn_build_mra(c, &m, CM_MSG_REF_OTHER, c->lap_mra_timeout, pd, pd_len);
	conn_send(c, &m, false);
}

static int conn_act_lap_rcvd(struct conn *c, struct conn_ctx *x)
{
	/*
	 * RoCE ports cannot load an alternate path: answer at once with APR
	 * "not supported" (IBTA Table 117 code 2) rather than let the peer
	 * retry into a silence. (The kernel's CM drops such LAPs without an
	 * answer; the peer then times out, which is what we avoid.)
	 */
	if (conn_roce(c)) {
		conn_send_apr(c, CM_APR_UNSUPPORTED, NULL);
		return 0;
	}
	switch (c->lap) {
	case ENG_LAP_IDLE:
		conn_set_lap(c, ENG_LAP_RCVD, x->ev);
		evq_push(c, ENG_EV_LAP_RECEIVED, 0, x->msg);
		/*
		 * As for a REQ or REP: answer, or send an MRA, before half
		 * the time the peer waits for our answer is gone.
		 */
		conn_arm(x, CONN_TIMER_MRA_DUE, x->now + c->peer_wait_ns / 2);
		break;
	case ENG_LAP_RCVD:
		cnt_duplicate(c->eng, x->from->port, CM_MSG_LAP);
		break;
	case ENG_LAP_MRA_SENT:
		/* IBTA 12.9.7: a duplicate LAP in MRA_LAP_SENT: the MRA again. */
		cnt_duplicate(c->eng, x->from->port, CM_MSG_LAP);
		cnt_retransmitted(c->eng, c->addr.port, CM_MSG_MRA);
		conn_send_mra_lap(c, NULL, 0);
		break;
	case ENG_LAP_SENT:
	case ENG_LAP_MRA_RCVD:
		/* Both sides loaded a path at once: refuse theirs. */
		conn_send_apr(c, CM_APR_REJECTED, NULL);
		break;
	}
	return 0;
}

/* eng_mra, or the MRA_DUE timer, while we owe the peer an APR. */
static int conn_act_lap_mra(struct conn *c, struct conn_ctx *x)
{
	if (!conn_lap_owed(c))
		return conn_lap_refuse(c, x);
	if (c->timer == CONN_TIMER_MRA_DUE)
		timer_cancel(c);
	c->lap_mra_timeout = x->u8 & 31;
	conn_send_mra_lap(c, x->pd, x->pd_len);
	conn_set_lap(c, ENG_LAP_MRA_SENT, x->ev);
	return 0;
}

static int conn_act_lap_mra_due(struct conn *c, struct conn_ctx *x)
{
	/* The only deadline of an ESTABLISHED id in LAP_RCVD is this one. */
	if (c->lap != ENG_LAP_RCVD)
		return 0;
	x->u8 = c->eng->cfg.mra_service_timeout;
	return conn_act_lap_mra(c, x);
}

static int conn_act_apr(struct conn *c, struct conn_ctx *x)
{
	if (!conn_lap_owed(c))
		return conn_lap_refuse(c, x);
	if (c->timer == CONN_TIMER_MRA_DUE)
		timer_cancel(c);
	conn_send_apr(c, x->u8, x);
	conn_set_lap(c, ENG_LAP_IDLE, x->ev);
	return 0;
}

static int conn_act_apr_rcvd(struct conn *c, struct conn_ctx *x)
{
	if (!conn_lap_waits(c)) {
		cnt_duplicate(c->eng, x->from->port, CM_MSG_APR);
		return 0;
	}
	timer_cancel(c);
	conn_set_lap(c, ENG_LAP_IDLE, x->ev);
	evq_push(c, ENG_EV_APR_RECEIVED, 0, x->msg);
	return 0;
}

static int conn_act_mra_lap(struct conn *c, struct conn_ctx *x)
{
	/*
	 * IBTA 12.8: an MRA for our LAP moves LAP_SENT to MRA_LAP_RCVD and
	 * extends the wait, as an MRA for a REQ does; another one in
	 * MRA_LAP_RCVD extends it again.
	 */
	if (c->lap == ENG_LAP_SENT) {
		conn_set_lap(c, ENG_LAP_MRA_RCVD, x->ev);
		evq_push(c, ENG_EV_MRA_RECEIVED, 0, x->msg);
	}
	if (conn_lap_waits(c)) {
		conn_mra_wait(c, x);
		return 0;
	}
	cnt_duplicate(c->eng, x->from->port, CM_MSG_MRA);
	return 0;
}

/*
 * The client saw IBV_EVENT_COMM_EST on its QP: data arrived before the RTU,
 * so the RTU was lost or is late. The passive side's state diagram (IBTA
 * ch. 12) leaves REP_SENT / MRA_REP_RCVD for ESTABLISHED on the RTU or on
 * this "communication established" event of the QP (ch. 11 affiliated
 * asynchronous events), as the kernel's ib_cm_notify() does. The REP's
 * retransmission stops with the state change; the late RTU is a duplicate.
 */
static int conn_act_establish(struct conn *c, struct conn_ctx *x)
{
	c->eng->cnt.established_early++;
	evq_push(c, ENG_EV_RTU_RECEIVED, 0, NULL);
	return 0;
}

/*
 * An open exchange fails with x->err, sending nothing: eng_port_down()
 * (-ENETDOWN: the port is gone, so its MADs can neither leave nor arrive)
 * and eng_send_done() with an error (UNREACHABLE: the message this record
 * waits on never left, its RoCE neighbour unresolved, -EHOSTUNREACH).
 * Retrying cannot help, so the exchange ends now as exhausted retries
 * would end it, without the REJ timeout that nothing would carry. The
 * kernel's CM gets there through the port's flushed sends
 * (IB_WC_WR_FLUSH_ERR -> the *_ERROR events); its rdma_cm reports the
 * unresolved neighbour as RDMA_CM_EVENT_UNREACHABLE.
 */
static int conn_act_fail_req(struct conn *c, struct conn_ctx *x)
{
	/*
	 * Active side. In REQ_SENT/MRA_REQ_RCVD this is the connect's one
	 * first outcome; in REP_RCVD/MRA_REP_SENT it follows REP_RECEIVED,
	 * as a REJ_RECEIVED can: the connect has failed after all.
	 */
	evq_push(c, ENG_EV_REQ_ERROR, x->err, NULL);
	return 0;
}

static int conn_act_fail_rep(struct conn *c, struct conn_ctx *x)
{
	/*
	 * Passive side, REQ_RCVD/MRA_REQ_SENT: the client has not answered.
	 * End REJ-less in IDLE; the credit comes back in conn_set_state(),
	 * and a held REQ that never had a client is freed without a word.
	 * Should the port come back in time, the peer's next REQ retry is a
	 * new request.
	 */
	evq_push(c, ENG_EV_REP_ERROR, x->err, NULL);
	return 0;
}

static int conn_act_fail_rep_sent(struct conn *c, struct conn_ctx *x)
{
	struct cm_msg m;

	/*
	 * Passive side, REP_SENT/MRA_REP_RCVD: timewait, as after the REP's
	 * last retry. The REJ timeout that retry would have sent is kept as
	 * the last message but not sent: should the port come back and the
	 * peer's RTU reach us in timewait, it gets this REJ (as after a lost
	 * REJ) rather than stay established alone.
	 */
	conn_build_rej(c, &m, CM_REJ_TIMEOUT, conn_rej_ref(c->state));
	conn_last_set(c, &m);
	evq_push(c, ENG_EV_REP_ERROR, x->err, NULL);
	return 0;
}

static int conn_act_fail_dreq(struct conn *c, struct conn_ctx *x)
{
	/*
	 * The DREP cannot come back: timewait now rather than after the last
	 * retry. A destroyed record's tail ends the same way, silently.
	 */
	evq_push(c, ENG_EV_DREQ_ERROR, x->err, NULL);
	return 0;
}

static int conn_act_fail_sidr(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_SIDR_REQ_ERROR, x->err, NULL);
	return 0;
}

static int conn_act_port_down_est(struct conn *c, struct conn_ctx *x)
{
	/*
	 * The connection stays: the client decides (its QP may migrate to an
	 * alternate path on another port). A LAP of ours dies first. An APR
	 * we owe the client may still send; our own MRA for it would only go
	 * into the void, so its deadline goes.
	 */
	if (conn_lap_waits(c)) {
		timer_cancel(c);
		conn_set_lap(c, ENG_LAP_IDLE, x->ev);
		evq_push(c, ENG_EV_LAP_ERROR, -ENETDOWN, NULL);
	} else if (c->timer == CONN_TIMER_MRA_DUE) {
		timer_cancel(c);
	}
	evq_push(c, ENG_EV_PORT_ERROR, -ENETDOWN, NULL);
	return 0;
}

/*
 * eng_device_removed(): the device is gone for good, and every CM id on it
 * with it (the kernel's cma tells each id on a removed device with
 * RDMA_CM_EVENT_DEVICE_REMOVAL and leaves it to the program to destroy).
 * Whatever the state, nothing can be sent or received for this id again:
 * no REJ, DREQ or DREP, no retransmission, no timewait (no stray MAD can
 * arrive on a device that is no more). The cell goes to IDLE, which
 * stops the timer, unlinks the remote ids and returns a credit; the client
 * is told once, -ENODEV, and destroys the id. A destroyed record (a DREQ
 * or timewait tail) is freed in IDLE without a word, a held REQ likewise.
 */
static int conn_act_device_gone(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_DEVICE_REMOVAL, -ENODEV, NULL);
	return 0;
}

static int conn_act_sidr_req(struct conn *c, struct conn_ctx *x)
{
	struct eng *eng = c->eng;
	const struct eng_sidr_param *p = x->sidr;
	struct cm_msg m;

	if (p->dest.port >= ENG_MAX_PORTS || !eng->ports[p->dest.port].valid)
		return -ENODEV;
	c->addr = p->dest;
	c->active = true;
	c->tid = ((uint64_t)conn_random(eng) << 32) | c->local_id;
	c->service_id = p->service_id;
	c->rtx_ns = conn_exp_ns(p->timeout);
	c->max_retries = c->retries_left = p->max_retries;
	cm_msg_init(&m, CM_MSG_SIDR_REQ, c->tid);
	m.sidr_req.request_id = c->local_id;
	m.sidr_req.pkey = p->pkey;
	m.sidr_req.service_id = p->service_id;
	memcpy(m.sidr_req.private_data, p->private_data,
	       sizeof(m.sidr_req.private_data));
	conn_send(c, &m, true);
	conn_arm_rtx(c, x);
	return 0;
}

static int conn_act_sidr_req_new(struct conn *c, struct conn_ctx *x)
{
	c->addr = *x->from;
	c->tid = x->msg->hdr.tid;
	c->remote_id = x->msg->sidr_req.request_id;
	c->remote_guid = conn_addr_key(x->from);
	c->service_id = x->msg->sidr_req.service_id;
	c->lis = x->lis;
	c->owner = x->lis->conn->owner;
	conn_remote_link(c, false);
	evq_push(c, ENG_EV_SIDR_REQ_RECEIVED, 0, x->msg);
	return 0;
}

static void conn_send_sidr_rep(struct conn *c, const struct cm_sidr_rep *t,
			       uint8_t status)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_MSG_SIDR_REP, c->tid);
	if (t)
		m.sidr_rep = *t;
	else
		m.sidr_rep.status = status;
	m.sidr_rep.request_id = c->remote_id;
	m.sidr_rep.service_id = c->service_id;
	conn_send(c, &m, true);
}

static int conn_act_sidr_rep(struct conn *c, struct conn_ctx *x)
{
	conn_send_sidr_rep(c, x->sidr_rep, 0);
	return 0;
}

static int conn_act_sidr_rep_rcvd(struct conn *c, struct conn_ctx *x)
{
	evq_push(c, ENG_EV_SIDR_REP_RECEIVED, 0, x->msg);
	return 0;
}

/* Destroy (DESIGN lesson 3): from here on the client hears nothing. */
static void conn_orphan(struct conn *c)
{
	c->destroyed = true;
	evq_clear(c);
}

static int conn_act_destroy(struct conn *c, struct conn_ctx *x)
{
	conn_orphan(c);
	return 0;
}

static int conn_act_destroy_listen(struct conn *c, struct conn_ctx *x)
{
	conn_orphan(c);
	listen_stop(c, x->now);
	return 0;
}

static int conn_act_destroy_req_sent(struct conn *c, struct conn_ctx *x)
{
	/*
	 * We may not know the peer's comm id yet: a REJ "timeout" carries our
	 * CA GUID so the peer finds its record anyway (as the kernel does).
	 */
	conn_orphan(c);
	conn_send_rej(c, CM_REJ_TIMEOUT);
	return 0;
}

static int conn_act_destroy_rej(struct conn *c, struct conn_ctx *x)
{
	conn_orphan(c);
	conn_send_rej(c, CM_REJ_CONSUMER_DEFINED);
	return 0;
}

static int conn_act_destroy_dreq(struct conn *c, struct conn_ctx *x)
{
	conn_orphan(c);
	conn_send_dreq(c, x);
	return 0;
}

static int conn_act_destroy_drep(struct conn *c, struct conn_ctx *x)
{
	conn_orphan(c);
	conn_send_drep(c, x);
	return 0;
}

static int conn_act_destroy_sidr(struct conn *c, struct conn_ctx *x)
{
	conn_orphan(c);
	conn_send_sidr_rep(c, NULL, CM_SIDR_REJECT);
	return 0;
}

struct conn_cell {
	int (*act)(struct conn *c, struct conn_ctx *x);
	enum eng_state next;
	bool stay;
};

#define GO(state, fn)                                                          \
	{                                                                      \
		conn_act_##fn, ENG_STATE_##state, false                        \
	}
#define STAY(fn)                                                               \
	{                                                                      \
		conn_act_##fn, ENG_STATE_IDLE, true                            \
	}
#define S(state) [ENG_STATE_##state]
#define E(ev) [CONN_EV_##ev]

/* Destroy: what the protocol requires in each state (ENGINE.md). */
static const struct conn_cell conn_table[ENG_STATE__COUNT][CONN_EV__COUNT] = {
	S(IDLE) = {
		E(API_LISTEN) = GO(LISTEN, listen),
		E(API_CONNECT) = GO(REQ_SENT, connect),
		E(API_SIDR_REQ) = GO(SIDR_REQ_SENT, sidr_req),
		E(API_DESTROY) = GO(IDLE, destroy),
		E(RX_REQ_NEW) = GO(REQ_RCVD, req_new),
		E(RX_REQ_HOLD) = GO(MRA_REQ_SENT, req_hold),
		E(RX_SIDR_REQ_NEW) = GO(SIDR_REQ_RCVD, sidr_req_new),
		E(RX_DREQ) = STAY(drep_unknown),
	},
	S(LISTEN) = {
		E(API_DESTROY) = GO(IDLE, destroy_listen),
	},
	S(REQ_SENT) = {
		E(RX_REP) = GO(REP_RCVD, rep),
		E(RX_REP_STALE) = GO(IDLE, rep_stale),
		E(RX_MRA_REQ) = GO(MRA_REQ_RCVD, mra_rcvd),
		E(RX_REJ) = GO(IDLE, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = GO(IDLE, req_timeout),
		E(PORT_DOWN) = GO(IDLE, fail_req),
		E(UNREACHABLE) = GO(IDLE, fail_req),
		E(API_DESTROY) = GO(IDLE, destroy_req_sent),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(MRA_REQ_RCVD) = {
		E(RX_REP) = GO(REP_RCVD, rep),
		E(RX_REP_STALE) = GO(IDLE, rep_stale),
		E(RX_MRA_REQ) = STAY(mra_rcvd),
		E(RX_REJ) = GO(IDLE, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = GO(IDLE, req_timeout),
		E(PORT_DOWN) = GO(IDLE, fail_req),
		E(UNREACHABLE) = GO(IDLE, fail_req),
		E(API_DESTROY) = GO(IDLE, destroy_req_sent),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(REQ_RCVD) = {
		E(API_ACCEPT) = GO(REP_SENT, accept),
		E(API_REJECT) = GO(IDLE, reject),
		E(API_MRA) = GO(MRA_REQ_SENT, mra),
		E(MRA_DUE) = GO(MRA_REQ_SENT, mra_due),
		E(RX_REQ) = STAY(dup),
		E(RX_REJ) = GO(IDLE, rej),
		E(RX_REJ_STALE) = GO(IDLE, rej),
		E(STALE) = STAY(stale_ignore),
		E(PORT_DOWN) = GO(IDLE, fail_rep),
		E(API_DESTROY) = GO(IDLE, destroy_rej),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(MRA_REQ_SENT) = {
		E(API_ACCEPT) = GO(REP_SENT, accept),
		E(API_REJECT) = GO(IDLE, reject),
		E(API_MRA) = STAY(mra),
		E(RX_REQ) = STAY(dup_resend),
		E(RX_REJ) = GO(IDLE, rej),
		E(RX_REJ_STALE) = GO(IDLE, rej),
		E(STALE) = STAY(stale_ignore),
		E(PORT_DOWN) = GO(IDLE, fail_rep),
		E(LISTENER_GONE) = GO(IDLE, listener_gone),
		E(API_DESTROY) = GO(IDLE, destroy_rej),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(REP_SENT) = {
		E(RX_RTU) = GO(ESTABLISHED, rtu_rcvd),
		E(RX_REQ) = STAY(dup_resend),
		E(RX_MRA_REP) = GO(MRA_REP_RCVD, mra_rcvd),
		E(RX_REJ) = GO(IDLE, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(RX_DREQ) = GO(DREQ_RCVD, dreq_rcvd),
		E(STALE) = STAY(stale_ignore),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = GO(TIMEWAIT, rep_timeout),
		E(API_ESTABLISH) = GO(ESTABLISHED, establish),
		E(PORT_DOWN) = GO(TIMEWAIT, fail_rep_sent),
		E(UNREACHABLE) = GO(TIMEWAIT, fail_rep_sent),
		E(API_DESTROY) = GO(TIMEWAIT, destroy_rej),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(MRA_REP_RCVD) = {
		E(RX_RTU) = GO(ESTABLISHED, rtu_rcvd),
		E(RX_REQ) = STAY(dup_resend),
		E(RX_MRA_REP) = STAY(mra_rcvd),
		E(RX_REJ) = GO(IDLE, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(RX_DREQ) = GO(DREQ_RCVD, dreq_rcvd),
		E(STALE) = STAY(stale_ignore),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = GO(TIMEWAIT, rep_timeout),
		E(API_ESTABLISH) = GO(ESTABLISHED, establish),
		E(PORT_DOWN) = GO(TIMEWAIT, fail_rep_sent),
		E(UNREACHABLE) = GO(TIMEWAIT, fail_rep_sent),
		E(API_DESTROY) = GO(TIMEWAIT, destroy_rej),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(REP_RCVD) = {
		E(API_RTU) = GO(ESTABLISHED, rtu),
		E(API_REJECT) = GO(IDLE, reject),
		E(API_MRA) = GO(MRA_REP_SENT, mra),
		E(MRA_DUE) = GO(MRA_REP_SENT, mra_due),
		E(RX_REP) = STAY(dup),
		E(RX_REJ) = GO(TIMEWAIT, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(STALE) = STAY(stale_ignore),
		E(PORT_DOWN) = GO(IDLE, fail_req),
		E(API_DESTROY) = GO(IDLE, destroy_rej),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(MRA_REP_SENT) = {
		E(API_RTU) = GO(ESTABLISHED, rtu),
		E(API_REJECT) = GO(IDLE, reject),
		E(API_MRA) = STAY(mra),
		E(RX_REP) = STAY(dup_resend),
		E(RX_REJ) = GO(TIMEWAIT, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(STALE) = STAY(stale_ignore),
		E(PORT_DOWN) = GO(IDLE, fail_req),
		E(API_DESTROY) = GO(IDLE, destroy_rej),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(ESTABLISHED) = {
		E(API_DISCONNECT) = GO(DREQ_SENT, disconnect),
		E(API_LAP) = STAY(lap),
		E(API_APR) = STAY(apr),
		E(API_MRA) = STAY(lap_mra),
		E(MRA_DUE) = STAY(lap_mra_due),
		E(PORT_DOWN) = STAY(port_down_est),
		E(RX_REQ) = STAY(dup),
		E(RX_REP) = STAY(dup_rtu),
		E(RX_RTU) = STAY(dup),
		E(RX_REJ) = GO(TIMEWAIT, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(RX_DREQ) = GO(DREQ_RCVD, dreq_rcvd),
		E(RX_LAP) = STAY(lap_rcvd),
		E(RX_APR) = STAY(apr_rcvd),
		E(RX_MRA_LAP) = STAY(mra_lap),
		E(STALE) = GO(DREQ_SENT, stale),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = STAY(lap_timeout),
		E(API_DESTROY) = GO(DREQ_SENT, destroy_dreq),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(DREQ_SENT) = {
		E(API_DISCONNECT) = STAY(disconnect_done),
		E(RX_DREP) = GO(TIMEWAIT, drep_rcvd),
		E(RX_DREQ) = GO(TIMEWAIT, dreq_collision),
		E(RX_REJ) = GO(TIMEWAIT, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(RX_REQ) = STAY(dup),
		E(RX_REP) = STAY(dup),
		E(RX_RTU) = STAY(dup),
		E(STALE) = STAY(stale_ignore),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = GO(TIMEWAIT, dreq_timeout),
		E(PORT_DOWN) = GO(TIMEWAIT, fail_dreq),
		E(UNREACHABLE) = GO(TIMEWAIT, fail_dreq),
		E(API_DESTROY) = STAY(destroy),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(DREQ_RCVD) = {
		E(API_DISCONNECT) = GO(TIMEWAIT, drep),
		E(RX_DREQ) = STAY(dup),
		E(RX_REQ) = STAY(dup),
		E(RX_REP) = STAY(dup),
		E(RX_RTU) = STAY(dup),
		E(RX_REJ) = GO(TIMEWAIT, rej),
		E(RX_REJ_STALE) = GO(TIMEWAIT, rej),
		E(STALE) = STAY(stale_ignore),
		E(API_DESTROY) = GO(TIMEWAIT, destroy_drep),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(TIMEWAIT) = {
		E(API_DISCONNECT) = STAY(disconnect_done),
		E(TIMEWAIT_DONE) = GO(IDLE, timewait_done),
		E(RX_DREQ) = STAY(dup_drep),
		E(RX_REQ) = STAY(dup_req_timewait),
		E(RX_REP) = STAY(dup),
		E(RX_RTU) = STAY(dup_rtu_timewait),
		E(RX_DREP) = STAY(dup),
		E(RX_REJ) = STAY(dup),
		E(RX_REJ_STALE) = STAY(dup),
		E(STALE) = STAY(stale_ignore),
		E(API_DESTROY) = STAY(destroy),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(SIDR_REQ_SENT) = {
		E(RX_SIDR_REP) = GO(IDLE, sidr_rep_rcvd),
		E(TIMEOUT) = STAY(resend),
		E(TIMEOUT_LAST) = GO(IDLE, sidr_timeout),
		E(PORT_DOWN) = GO(IDLE, fail_sidr),
		E(UNREACHABLE) = GO(IDLE, fail_sidr),
		E(API_DESTROY) = GO(IDLE, destroy),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
	S(SIDR_REQ_RCVD) = {
		E(API_SIDR_REP) = GO(IDLE, sidr_rep),
		E(RX_SIDR_REQ) = STAY(dup),
		E(API_DESTROY) = GO(IDLE, destroy_sidr),
		E(DEVICE_GONE) = GO(IDLE, device_gone),
	},
};

static bool conn_event_is_api(enum conn_event ev)
{
	return ev <= CONN_EV_API_DESTROY;
}

static int conn_unexpected(struct conn *c, enum conn_event ev,
			   struct conn_ctx *x)
{
	struct eng *eng = c->eng;

	eng->unexpected[c->state][ev]++;
	if (conn_event_is_api(ev)) {
		eng->cnt.unexpected_api++;
		log_debug("conn %08x: %s not allowed in %s", c->local_id,
			  conn_event_name(ev), eng_state_name(c->state));
		return refuse(-EINVAL,
			      "%s not allowed in state %s (comm id %#010x)",
			      conn_api_name(ev), eng_state_name(c->state),
			      c->local_id);
	}
	if (x->msg)
		cnt_unexpected(eng, x->from->port, x->msg->type);
	log_debug("conn %08x/%08x: unexpected %s in %s", c->local_id,
		  c->remote_id, conn_event_name(ev), eng_state_name(c->state));
	return -EPROTO;
}

int conn_event(struct conn *c, enum conn_event ev, struct conn_ctx *x)
{
	const struct conn_cell *cell = &conn_table[c->state][ev];
	int ret;

	if (!cell->act)
		return conn_unexpected(c, ev, x);
	c->eng->hits[c->state][ev]++;
	x->ev = ev;
	x->arm = CONN_TIMER_NONE;
	/* Events the action pushes carry the state it leads to (evq.c). */
	c->evq.next_state = (uint8_t)(cell->stay ? c->state : cell->next);
	ret = cell->act(c, x);
	c->evq.next_state = ENG_STATE__COUNT;
	if (ret < 0)
		return ret;
	if (conn_event_learns(ev))
		conn_learn(c, x->msg, false);
	if (!cell->stay) {
		timer_cancel(c);
		conn_set_state(c, cell->next, ev, x->now);
	}
	if (x->arm != CONN_TIMER_NONE)
		timer_arm(c, x->arm, x->arm_at);
	conn_reap(c);
	return 0;
}

int conn_table_cells(void)
{
	int s, e, n = 0;

	for (s = 0; s < ENG_STATE__COUNT; s++)
		for (e = 0; e < CONN_EV__COUNT; e++)
			n += conn_table[s][e].act != NULL;
	return n;
}

bool conn_table_cell(enum eng_state s, enum conn_event ev)
{
	return conn_table[s][ev].act != NULL;
}
