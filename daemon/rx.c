// SPDX-License-Identifier: MIT
/*
 * A received MAD becomes (connection, event): the lookups of IBTA 12.9.8
 * (duplicates, stale connections, unknown comm ids) happen here, once,
 * so that the state table sees only what the message means for a record.
 * Messages for no record are answered statelessly where IBTA asks for it.
 */
#include <errno.h>

#include "conn.h"
#include "log.h"

/* Reply to a message we keep no record for, from its own ids and TID. */
static void rx_rej_as(struct eng *eng, const struct eng_addr *from,
		      const struct cm_msg *msg, uint32_t local_id,
		      uint32_t remote_id, enum cm_rej_reason reason,
		      enum cm_msg_ref ref)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_MSG_REJ, msg->hdr.tid);
	m.rej.local_comm_id = local_id;
	m.rej.remote_comm_id = remote_id;
	m.rej.message_rejected = ref;
	m.rej.reason = reason;
	eng_send_raw(eng, &m, from);
}

static void rx_rej_stateless(struct eng *eng, const struct eng_addr *from,
			     const struct cm_msg *msg, uint32_t remote_id,
			     enum cm_rej_reason reason, enum cm_msg_ref ref)
{
	rx_rej_as(eng, from, msg, 0, remote_id, reason, ref);
}

static void rx_event(struct conn *c, enum conn_event ev,
		     const struct eng_addr *from, const struct cm_msg *msg,
		     uint64_t now)
{
	struct conn_ctx x = { .now = now, .msg = msg, .from = from };

	conn_event(c, ev, &x);
}

/* The record a reply is for: its remote comm id names us. */
static struct conn *rx_find(struct eng *eng, uint32_t our_id, uint32_t their_id)
{
	struct conn *c = ctab_local_find(&eng->by_local, our_id);

	/* Before the REP we do not know their id; afterwards it must match. */
	if (c && c->remote_id && c->remote_id != their_id)
		return NULL;
	return c;
}

static void rx_req(struct eng *eng, uint16_t port, const struct eng_addr *from,
		   const struct cm_msg *msg, uint64_t now)
{
	const struct cm_req *req = &msg->req;
	struct conn_ctx x = { .now = now, .msg = msg, .from = from };
	struct listener *l;
	bool credit;
	struct conn *c;

	/* IBTA 12.9.8.1: the same REQ again. */
	c = ctab_rid_find(&eng->by_rid, req->local_comm_id, req->local_ca_guid);
	if (c) {
		conn_event(c, CONN_EV_RX_REQ, &x);
		return;
	}
	/*
	 * IBTA 12.9.8.3.1: a new REQ from a QP we still hold a connection
	 * with (live or in timewait) is stale: reject it, and end the old
	 * connection, which the peer has evidently forgotten.
	 */
	c = ctab_rqpn_find(&eng->by_rqpn, req->local_qpn, req->local_ca_guid);
	if (c) {
		struct conn_ctx ox = { .now = now };

		eng->cnt.stale_rejected++;
		rx_rej_stateless(eng, from, msg, req->local_comm_id,
				 CM_REJ_STALE_CONN, CM_MSG_REF_REQ);
		conn_event(c, CONN_EV_STALE, &ox);
		return;
	}
	/* The GID the peer addressed is our side of its primary path. */
	l = listen_find(eng, req->service_id, port, req->primary_remote_gid);
	if (!l) {
		eng->cnt.req_no_listener++;
		rx_rej_stateless(eng, from, msg, req->local_comm_id,
				 CM_REJ_INVALID_SERVICE_ID, CM_MSG_REF_REQ);
		return;
	}
	credit = listen_has_credit(l);
	if (!credit && l->nheld >= eng->cfg.max_held) {
		/* Documented in listen.c: "no resources", code 3. */
		l->rejected_backlog++;
		eng->cnt.req_rejected_backlog++;
		rx_rej_stateless(eng, from, msg, req->local_comm_id,
				 CM_REJ_NO_RESOURCES, CM_MSG_REF_REQ);
		return;
	}
	c = conn_new(eng);
	if (!c) {
		rx_rej_stateless(eng, from, msg, req->local_comm_id,
				 CM_REJ_NO_RESOURCES, CM_MSG_REF_REQ);
		return;
	}
	x.lis = l;
	if (conn_event(c, credit ? CONN_EV_RX_REQ_NEW : CONN_EV_RX_REQ_HOLD,
		       &x) < 0) {
		rx_rej_stateless(eng, from, msg, req->local_comm_id,
				 CM_REJ_NO_RESOURCES, CM_MSG_REF_REQ);
		conn_free(c);
	}
}

static void rx_rep(struct eng *eng, const struct eng_addr *from,
		   const struct cm_msg *msg, uint64_t now)
{
	const struct cm_rep *rep = &msg->rep;
	struct conn_ctx x = { .now = now, .msg = msg, .from = from };
	struct conn *c, *o;

	c = rx_find(eng, rep->remote_comm_id, rep->local_comm_id);
	if (!c) {
		/*
		 * IBTA 12.9.8.2: a REP for no connection of ours. The REJ
		 * names the comm id the REP was addressed to as ours, so the
		 * sender can match it (it knows both ids by now).
		 */
		cnt_unexpected(eng, from->port, CM_MSG_REP);
		rx_rej_as(eng, from, msg, rep->remote_comm_id,
			  rep->local_comm_id, CM_REJ_INVALID_COMM_ID,
			  CM_MSG_REF_REP);
		return;
	}
	if (c->state != ENG_STATE_REQ_SENT &&
	    c->state != ENG_STATE_MRA_REQ_RCVD) {
		conn_event(c, CONN_EV_RX_REP, &x);
		return;
	}
	/*
	 * First REP: the peer's (comm id, GUID) or (QPN, GUID) must not belong
	 * to another record (IBTA 12.9.8.3.2).
	 */
	o = ctab_rqpn_find(&eng->by_rqpn, rep->local_qpn, rep->local_ca_guid);
	if (o || ctab_rid_find(&eng->by_rid, rep->local_comm_id,
			       rep->local_ca_guid)) {
		x.other = o;
		conn_event(c, CONN_EV_RX_REP_STALE, &x);
		return;
	}
	conn_event(c, CONN_EV_RX_REP, &x);
}

static void rx_rej(struct eng *eng, const struct eng_addr *from,
		   const struct cm_msg *msg, uint64_t now)
{
	const struct cm_rej *rej = &msg->rej;
	struct conn *c = NULL;
	uint64_t guid = 0;
	int i;

	if (rej->remote_comm_id) {
		c = rx_find(eng, rej->remote_comm_id, rej->local_comm_id);
	} else if (rej->reason == CM_REJ_TIMEOUT && rej->ari_length >= 8) {
		/* IBTA Table 109: the ARI of "timeout" is the CA GUID. */
		for (i = 0; i < 8; i++)
			guid = (guid << 8) | rej->ari[i];
		c = ctab_rid_find(&eng->by_rid, rej->local_comm_id, guid);
	}
	if (!c) {
		cnt_unexpected(eng, from->port, CM_MSG_REJ);
		return;
	}
	rx_event(c,
		 rej->reason == CM_REJ_STALE_CONN ? CONN_EV_RX_REJ_STALE :
						    CONN_EV_RX_REJ,
		 from, msg, now);
}

static void rx_mra(struct eng *eng, const struct eng_addr *from,
		   const struct cm_msg *msg, uint64_t now)
{
	const struct cm_mra *mra = &msg->mra;
	struct conn *c = rx_find(eng, mra->remote_comm_id, mra->local_comm_id);
	enum conn_event ev;

	if (!c) {
		cnt_unexpected(eng, from->port, CM_MSG_MRA);
		return;
	}
	/* IBTA Table 107: a wire value, so 3 is possible (and invalid). */
	if (mra->message_mraed == CM_MSG_REF_REQ) {
		ev = CONN_EV_RX_MRA_REQ;
	} else if (mra->message_mraed == CM_MSG_REF_REP) {
		ev = CONN_EV_RX_MRA_REP;
	} else if (mra->message_mraed == CM_MSG_REF_OTHER) {
		ev = CONN_EV_RX_MRA_LAP;
	} else {
		cnt_unexpected(eng, from->port, CM_MSG_MRA);
		return;
	}
	rx_event(c, ev, from, msg, now);
}

static void rx_dreq(struct eng *eng, const struct eng_addr *from,
		    const struct cm_msg *msg, uint64_t now)
{
	const struct cm_dreq *dreq = &msg->dreq;
	struct conn *c =
		rx_find(eng, dreq->remote_comm_id, dreq->local_comm_id);
	struct cm_msg m;

	if (c && c->remote_id && c->local_qpn == dreq->remote_qpn) {
		rx_event(c, CONN_EV_RX_DREQ, from, msg, now);
		return;
	}
	/* IBTA 12.9.6: no such connection; the DREP lets the peer finish. */
	cnt_unexpected(eng, from->port, CM_MSG_DREQ);
	cm_msg_init(&m, CM_MSG_DREP, msg->hdr.tid);
	m.drep.local_comm_id = dreq->remote_comm_id;
	m.drep.remote_comm_id = dreq->local_comm_id;
	eng_send_raw(eng, &m, from);
}

static void rx_reply(struct eng *eng, const struct eng_addr *from,
		     const struct cm_msg *msg, uint32_t our_id,
		     uint32_t their_id, enum conn_event ev, uint64_t now)
{
	struct conn *c = rx_find(eng, our_id, their_id);

	if (!c) {
		cnt_unexpected(eng, from->port, msg->type);
		return;
	}
	rx_event(c, ev, from, msg, now);
}

static void rx_rtu(struct eng *eng, const struct eng_addr *from,
		   const struct cm_msg *msg, uint64_t now)
{
	const struct cm_rtu *rtu = &msg->rtu;
	struct conn *c = rx_find(eng, rtu->remote_comm_id, rtu->local_comm_id);

	if (c) {
		rx_event(c, CONN_EV_RX_RTU, from, msg, now);
		return;
	}
	/*
	 * The peer thinks it is connected to a record we no longer have
	 * (our REJ was lost and timewait is over). REJ is never
	 * retransmitted by its sender, so answer again, in our old name so
	 * that the peer's record matches it: a half-open connection closes
	 * now instead of when the peer next speaks. We never answer a REJ,
	 * so this cannot ping-pong.
	 */
	cnt_unexpected(eng, from->port, CM_MSG_RTU);
	rx_rej_as(eng, from, msg, rtu->remote_comm_id, rtu->local_comm_id,
		  CM_REJ_INVALID_COMM_ID, CM_MSG_REF_OTHER);
}

static void rx_sidr_req(struct eng *eng, const struct eng_addr *from,
			const struct cm_msg *msg, uint64_t now)
{
	const struct cm_sidr_req *sr = &msg->sidr_req;
	struct conn_ctx x = { .now = now, .msg = msg, .from = from };
	struct listener *l;
	struct conn *c;
	struct cm_msg m;

	c = ctab_rid_find(&eng->by_rid, sr->request_id, conn_addr_key(from));
	if (c) {
		conn_event(c, CONN_EV_RX_SIDR_REQ, &x);
		return;
	}
	/* No path in a SIDR_REQ (Table 119): the GRH says whom it was for. */
	l = listen_find(eng, sr->service_id, from->port, from->local_gid);
	c = l ? conn_new(eng) : NULL;
	if (c) {
		x.lis = l;
		conn_event(c, CONN_EV_RX_SIDR_REQ_NEW, &x);
		return;
	}
	/* IBTA Table 121: status 1, "service id not supported". */
	eng->cnt.req_no_listener++;
	cm_msg_init(&m, CM_MSG_SIDR_REP, msg->hdr.tid);
	m.sidr_rep.request_id = sr->request_id;
	m.sidr_rep.service_id = sr->service_id;
	m.sidr_rep.status = CM_SIDR_UNSUPPORTED;
	eng_send_raw(eng, &m, from);
}

void rx_dispatch(struct eng *eng, const struct eng_addr *in,
		 const struct cm_msg *msg, uint64_t now)
{
	struct eng_addr from = *in;

	switch (msg->type) {
	case CM_MSG_REQ:
		rx_req(eng, from.port, &from, msg, now);
		break;
	case CM_MSG_MRA:
		rx_mra(eng, &from, msg, now);
		break;
	case CM_MSG_REJ:
		rx_rej(eng, &from, msg, now);
		break;
	case CM_MSG_REP:
		rx_rep(eng, &from, msg, now);
		break;
	case CM_MSG_RTU:
		rx_rtu(eng, &from, msg, now);
		break;
	case CM_MSG_DREQ:
		rx_dreq(eng, &from, msg, now);
		break;
	case CM_MSG_DREP:
		rx_reply(eng, &from, msg, msg->drep.remote_comm_id,
			 msg->drep.local_comm_id, CONN_EV_RX_DREP, now);
		break;
	case CM_MSG_LAP:
		rx_reply(eng, &from, msg, msg->lap.remote_comm_id,
			 msg->lap.local_comm_id, CONN_EV_RX_LAP, now);
		break;
	case CM_MSG_APR:
		rx_reply(eng, &from, msg, msg->apr.remote_comm_id,
			 msg->apr.local_comm_id, CONN_EV_RX_APR, now);
		break;
	case CM_MSG_SIDR_REQ:
		rx_sidr_req(eng, &from, msg, now);
		break;
	case CM_MSG_SIDR_REP:
		rx_reply(eng, &from, msg, msg->sidr_rep.request_id, 0,
			 CONN_EV_RX_SIDR_REP, now);
		break;
	case CM_MSG__COUNT:
		log_debug("rx: message type %d", msg->type);
		break;
	}
}
