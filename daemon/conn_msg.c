// SPDX-License-Identifier: MIT
/*
 * Outgoing MADs built from a connection's state, and the one path every MAD
 * leaves the engine by (so the sent counters are exact). All messages of one
 * connection carry its TID: the active side picks it, the passive side
 * reuses the REQ's.
 */
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"

/* 0, ENG_SEND_DEFERRED, or the transport's -errno (counted here). */
int eng_send_raw(struct eng *eng, const struct cm_msg *msg,
		 const struct eng_addr *to)
{
	bool was_busy = eng->busy;
	int ret;

	eng->busy = true;
	ret = eng->ops.send(eng->ctx, to, msg);
	eng->busy = was_busy;
	if (ret < 0) {
		eng->cnt.send_errors++;
		log_debug("send %s failed: %d", cm_msg_type_name(msg->type),
			  ret);
		return ret;
	}
	if (ret == ENG_SEND_DEFERRED)
		eng->cnt.send_deferred++;
	cnt_sent(eng, to->port, msg->type);
	return ret;
}

void conn_send(struct conn *c, const struct cm_msg *msg, bool remember)
{
	int ret = eng_send_raw(c->eng, msg, &c->addr);

	conn_learn(c, msg, true);
	if (!remember)
		return;
	conn_last_set(c, msg);
	c->last_deferred = ret == ENG_SEND_DEFERRED;
}

void conn_last_drop(struct conn *c)
{
	if (c->last.len == CONN_LAST_BLOCK)
		spare_give(&c->eng->last_spare, c->last.block);
	c->last.len = 0;
}

void conn_last_set(struct conn *c, const struct cm_msg *m)
{
	const uint8_t *b = (const uint8_t *)m;
	size_t len = sizeof(*m);
	struct cm_msg *blk;

	/* The trailing zeros 32 bytes at a time (most of a message is its
	 * zero private data), then a word, then byte by byte. */
	static const uint8_t zero[32];

	while (len >= sizeof(zero) &&
	       !memcmp(b + len - sizeof(zero), zero, sizeof(zero)))
		len -= sizeof(zero);
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, b + len - 8, sizeof(w));
		if (w)
			break;
		len -= 8;
	}
	while (len && !b[len - 1])
		len--;
	c->last.type = (uint8_t)m->type;
	if (len <= CONN_LAST_INLINE) {
		conn_last_drop(c);
		memcpy(c->last.bytes, m, len);
		/* len 0 would read as "nothing sent": keep one byte. */
		c->last.len = len ? (uint8_t)len : 1;
		return;
	}
	if (c->last.len == CONN_LAST_BLOCK) {
		*c->last.block = *m;
		return;
	}
	blk = spare_take(&c->eng->last_spare);
	if (!blk)
		blk = malloc(sizeof(*blk));
	if (!blk) {
		/*
		 * Without memory the message is not remembered: its
		 * retransmissions and the answers to duplicates are lost,
		 * and the peer's own timers end the exchange. Say so.
		 */
		log_err("conn %08x: no memory for its last %s", c->local_id,
			cm_msg_type_name(m->type));
		c->last.len = 0;
		return;
	}
	*blk = *m;
	c->last.block = blk;
	c->last.len = CONN_LAST_BLOCK;
}

void conn_last_get(const struct conn *c, struct cm_msg *m)
{
	if (c->last.len == CONN_LAST_BLOCK) {
		*m = *c->last.block;
		return;
	}
	memset(m, 0, sizeof(*m));
	memcpy(m, c->last.bytes, c->last.len);
}

/*
 * What a REQ or REP offers, from this side: the PSN of its sender's QP and
 * its sender's responder resources and initiator depth, which bound ours
 * the other way round when the peer sent it.
 */
static void conn_learn_offer(struct eng_terms *f, bool sent, uint32_t psn,
			     uint8_t resources, uint8_t depth)
{
	if (sent)
		f->local_psn = psn;
	else
		f->remote_psn = psn;
	f->responder_resources = sent ? resources : depth;
	f->initiator_depth = sent ? depth : resources;
}

/* The REQ's terms, sent or received. */
static void conn_learn_req(struct eng_terms *f, const struct cm_req *q,
			   bool sent)
{
	conn_learn_offer(f, sent, q->starting_psn, q->responder_resources,
			 q->initiator_depth);
	f->transport = q->transport_type;
	f->flow_control = q->flow_control;
	f->retry_count = q->retry_count;
	f->rnr_retry_count = q->rnr_retry_count;
	f->srq = q->srq;
	f->max_cm_retries = q->max_cm_retries;
	f->local_cm_response_timeout = q->local_cm_resp_timeout;
	f->remote_cm_response_timeout = q->remote_cm_resp_timeout;
}

/* The REP's answer: what the passive side's QP does from now on. */
static void conn_learn_rep(struct eng_terms *f, const struct cm_rep *r,
			   bool sent)
{
	conn_learn_offer(f, sent, r->starting_psn, r->responder_resources,
			 r->initiator_depth);
	f->rnr_retry_count = r->rnr_retry_count;
	f->target_ack_delay = r->target_ack_delay;
	f->failover = r->failover_accepted;
}

void conn_learn(struct conn *c, const struct cm_msg *m, bool sent)
{
	struct eng_terms *f = &c->terms;

	switch (m->type) {
	case CM_MSG_REQ:
		conn_learn_req(f, &m->req, sent);
		if (!sent && c->lis && c->lis->conn)
			f->listen_id = c->lis->conn->local_id;
		break;
	case CM_MSG_REP:
		conn_learn_rep(f, &m->rep, sent);
		break;
	case CM_MSG_SIDR_REQ:
		f->sidr = true;
		if (!sent && c->lis && c->lis->conn)
			f->listen_id = c->lis->conn->local_id;
		break;
	case CM_MSG_SIDR_REP:
		f->sidr = true;
		if (!sent) {
			f->sidr_qpn = m->sidr_rep.qpn;
			f->qkey = m->sidr_rep.qkey;
		}
		break;
	case CM_MSG_MRA:
	case CM_MSG_REJ:
	case CM_MSG_RTU:
	case CM_MSG_DREQ:
	case CM_MSG_DREP:
	case CM_MSG_LAP:
	case CM_MSG_APR:
	case CM_MSG__COUNT:
		break;
	}
}

void conn_resend_last(struct conn *c)
{
	struct cm_msg m;

	if (!c->last.len)
		return; /* never sent, or not remembered (conn_last_set) */
	conn_last_get(c, &m);
	cnt_retransmitted(c->eng, c->addr.port, m.type);
	c->last_deferred =
		eng_send_raw(c->eng, &m, &c->addr) == ENG_SEND_DEFERRED;
}

static uint64_t conn_ca_guid(const struct conn *c)
{
	return c->eng->ports[c->addr.port].ca_guid;
}

void conn_build_rej(const struct conn *c, struct cm_msg *m,
		    enum cm_rej_reason reason, enum cm_msg_ref ref)
{
	uint64_t guid = conn_ca_guid(c);
	int i;

	cm_msg_init(m, CM_MSG_REJ, c->tid);
	m->rej.local_comm_id = c->local_id;
	m->rej.remote_comm_id = c->remote_id;
	m->rej.message_rejected = ref;
	m->rej.reason = reason;
	/*
	 * IBTA 12.6.7.2 / Table 109: a REJ for "timeout" carries the sender's
	 * CA GUID as ARI, so that a peer that never learnt our comm id can
	 * still find the connection by (remote comm id, remote CA GUID).
	 */
	if (reason == CM_REJ_TIMEOUT) {
		m->rej.ari_length = 8;
		for (i = 0; i < 8; i++)
			m->rej.ari[i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

static void conn_copy_pd(uint8_t *dst, size_t size, const uint8_t *pd,
			 size_t len);

void conn_build_mra(const struct conn *c, struct cm_msg *m, enum cm_msg_ref ref,
		    uint8_t service_timeout, const uint8_t *pd, size_t pd_len)
{
	cm_msg_init(m, CM_MSG_MRA, c->tid);
	m->mra.local_comm_id = c->local_id;
	m->mra.remote_comm_id = c->remote_id;
	m->mra.message_mraed = ref;
	m->mra.service_timeout = service_timeout & 0x1f;
	conn_copy_pd(m->mra.private_data, sizeof(m->mra.private_data), pd,
		     pd_len);
}

void conn_build_rtu(const struct conn *c, struct cm_msg *m)
{
	cm_msg_init(m, CM_MSG_RTU, c->tid);
	m->rtu.local_comm_id = c->local_id;
	m->rtu.remote_comm_id = c->remote_id;
}

static void conn_copy_pd(uint8_t *dst, size_t size, const uint8_t *pd,
			 size_t len)
{
	if (pd)
		memcpy(dst, pd, len < size ? len : size);
}

void conn_build_dreq(const struct conn *c, struct cm_msg *m, const uint8_t *pd,
		     size_t pd_len)
{
	cm_msg_init(m, CM_MSG_DREQ, c->tid);
	m->dreq.local_comm_id = c->local_id;
	m->dreq.remote_comm_id = c->remote_id;
	m->dreq.remote_qpn = c->remote_qpn;
	conn_copy_pd(m->dreq.private_data, sizeof(m->dreq.private_data), pd,
		     pd_len);
}

void conn_build_drep(const struct conn *c, struct cm_msg *m, const uint8_t *pd,
		     size_t pd_len)
{
	cm_msg_init(m, CM_MSG_DREP, c->tid);
	m->drep.local_comm_id = c->local_id;
	m->drep.remote_comm_id = c->remote_id;
	conn_copy_pd(m->drep.private_data, sizeof(m->drep.private_data), pd,
		     pd_len);
}
