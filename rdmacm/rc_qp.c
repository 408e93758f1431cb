// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: QPs, CQs and SRQs on an id, and the QP attributes of a
 * connection (rdma_init_qp_attr). The QP's moves follow librdmacm:
 * INIT when created (UD QPs straight on to RTS), RTR and RTS during the
 * handshake (the active side on the REP, the passive side in
 * rdma_accept), ERR on rdma_disconnect, REJECTED and failed handshakes.
 * The attributes of RTR and RTS come from libcmclient, which has what
 * the handshake negotiated (cmc_init_qp_attr).
 */
#include "rc_int.h"

#include <string.h>

/* INIT as librdmacm sets it when the QP is created: the id's port and
 * P_Key index, and for connected QPs no remote access yet (the handshake's
 * INIT->INIT adds it); UD QPs get the port space's Q_Key. */
static int rc_init_attr_local(const struct rc_id *id, struct ibv_qp_attr *a,
			      int *mask)
{
	uint16_t pkey = id->pub.route.addr.addr.ibaddr.pkey;
	struct rc_dev *d = id->dev;
	int pkey_index = 0;

	if (!id->pub.verbs || !id->pub.port_num)
		return -EINVAL;
	if (pkey && d && d->pkey_known && d->pkey_port == id->pub.port_num &&
	    d->pkey == pkey) {
		pkey_index = d->pkey_index;
	} else if (pkey) {
		/* A sysfs read per call: 0.3-0.5 ms per QP under TCG, where
		 * librdmacm on the kernel asks rdma_init_qp_attr(). */
		pkey_index = ibv_get_pkey_index(id->pub.verbs, id->pub.port_num,
						pkey);
		if (pkey_index >= 0 && d &&
		    rc_port_is_roce(d->name, id->pub.port_num)) {
			d->pkey_known = true;
			d->pkey_port = id->pub.port_num;
			d->pkey = pkey;
			d->pkey_index = (uint16_t)pkey_index;
		}
	}
	if (pkey_index < 0)
		pkey_index = 0;
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = (uint16_t)pkey_index;
	a->port_num = id->pub.port_num;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (id->pub.qp_type == IBV_QPT_UD) {
		a->qkey = id->qkey;
		*mask |= IBV_QP_QKEY;
	} else {
		*mask |= IBV_QP_ACCESS_FLAGS;
	}
	return 0;
}

static int rc_qp_attr(struct rc_id *id, enum ibv_qp_state target,
		      struct ibv_qp_attr *a, int *mask)
{
	if (id->pub.qp_type == IBV_QPT_UD) {
		if (target == IBV_QPS_INIT)
			return rc_init_attr_local(id, a, mask);
		memset(a, 0, sizeof(*a));
		a->qp_state = target;
		*mask = IBV_QP_STATE;
		if (target == IBV_QPS_RTS) {
			a->sq_psn = 0;
			*mask |= IBV_QP_SQ_PSN;
		}
		return target == IBV_QPS_RTR || target == IBV_QPS_RTS ? 0 :
									-EINVAL;
	}
	/* Before the handshake has begun only INIT is known, locally. */
	if (!id->cid || (id->st != RC_CONNECT && id->st != RC_ESTABLISHED)) {
		if (target == IBV_QPS_INIT)
			return rc_init_attr_local(id, a, mask);
		return -EINVAL;
	}
	return cmc_init_qp_attr(id->cid, target, a, mask);
}

/* Move the id's QP to target. override, when not 0 or 0xff, replaces
 * the negotiated max_dest_rd_atomic (RTR) or max_rd_atomic (RTS), as
 * librdmacm's rdma_accept does with its responder resources and
 * initiator depth. RTR first refreshes INIT (the access flags the
 * handshake allows). */
int rc_qp_move(struct rc_id *id, enum ibv_qp_state target, int override)
{
	struct ibv_qp_attr a;
	int mask, r;

	if (!id->pub.qp)
		return 0;
	if (target == IBV_QPS_RTR) {
		r = rc_qp_attr(id, IBV_QPS_INIT, &a, &mask);
		if (r)
			return r;
		r = ibv_modify_qp(id->pub.qp, &a, mask);
		if (r)
			return -r;
	}
	r = rc_qp_attr(id, target, &a, &mask);
	if (r)
		return r;
	if (override && override != 0xff) {
		if (target == IBV_QPS_RTR)
			a.max_dest_rd_atomic = (uint8_t) override;
		else if (target == IBV_QPS_RTS)
			a.max_rd_atomic = (uint8_t) override;
	}
	r = ibv_modify_qp(id->pub.qp, &a, mask);
	return r ? -r : 0;
}

void rc_qp_err(struct rc_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (id->pub.qp)
		ibv_modify_qp(id->pub.qp, &a, IBV_QP_STATE);
}

void rc_ud_ah(const struct rc_id *id, const struct cmc_path *p,
	      struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = p->remote_lid;
	ah->sl = p->sl;
	ah->static_rate = p->packet_rate;
	ah->port_num = p->port_num ? p->port_num : id->pub.port_num;
	ah->is_global = p->grh;
	memcpy(ah->grh.dgid.raw, p->remote_gid, 16);
	ah->grh.sgid_index = (uint8_t)p->sgid_index;
	ah->grh.hop_limit = p->hop_limit;
	ah->grh.traffic_class = p->traffic_class;
	ah->grh.flow_label = p->flow_label;
}

RC_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *pub,
				struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct rc_id *id;
	int r;

	if (!qp_attr || !qp_attr_mask)
		return rc_err(EINVAL);
	RC_LOCK();
	id = rc_id_live(pub, "rdma_init_qp_attr");
	if (id && id->kid)
		r = rc_kern_op(id, RC_KOP_INIT_QP_ATTR, qp_attr, qp_attr_mask,
			       0);
	else
		r = id ? rc_qp_attr(id, qp_attr->qp_state, qp_attr,
				    qp_attr_mask) :
			 0;
	RC_UNLOCK();
	return id ? rc_cmc(r) : -1;
}

/* ------------------------------------------------------------------ */
/* CQs, QPs, SRQs: rdma_create_qp(3), rdma_create_srq(3) */

static void rc_destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq && id->send_cq != id->recv_cq)
			ibv_destroy_cq(id->send_cq);
		id->recv_cq = id->send_cq = NULL;
	} else if (id->send_cq) {
		ibv_destroy_cq(id->send_cq);
		id->send_cq = NULL;
	}
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel &&
		    id->send_cq_channel != id->recv_cq_channel)
			ibv_destroy_comp_channel(id->send_cq_channel);
		id->recv_cq_channel = id->send_cq_channel = NULL;
	} else if (id->send_cq_channel) {
		ibv_destroy_comp_channel(id->send_cq_channel);
		id->send_cq_channel = NULL;
	}
}

/* One CQ and completion channel per direction the application did not
 * give, as librdmacm makes them for rdma_verbs.h's helpers. */
static int rc_cq(struct rdma_cm_id *id, uint32_t size,
		 struct ibv_comp_channel **chp, struct ibv_cq **cqp)
{
	if (!size)
		return 0;
	*chp = ibv_create_comp_channel(id->verbs);
	if (!*chp)
		return -1;
	*cqp = ibv_create_cq(id->verbs, (int)size, id, *chp, 0);
	return *cqp ? 0 : -1;
}

static int rc_create_cqs(struct rdma_cm_id *id, uint32_t send, uint32_t recv)
{
	if (rc_cq(id, recv, &id->recv_cq_channel, &id->recv_cq) ||
	    rc_cq(id, send, &id->send_cq_channel, &id->send_cq)) {
		rc_destroy_cqs(id);
		return -1;
	}
	return 0;
}

RC_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *pub,
				struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	struct rc_id *id;
	int mask, r;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_create_qp");
	if (id && id->kid) {
		r = attr ? rc_kern_op(id, RC_KOP_CREATE_QP, attr, NULL, 0) :
			   -EINVAL;
		RC_UNLOCK();
		return rc_cmc(r);
	}
	RC_UNLOCK();
	if (!id)
		return -1;
	if (!attr || pub->qp)
		return rc_err(EINVAL);
	if (!pub->verbs) {
		rc_log(1, "rdma_create_qp: the id has no verbs device yet "
			  "(resolve or bind an address first)");
		return rc_err(EINVAL);
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = pub->pd;
	} else if (attr->pd->context != pub->verbs) {
		return rc_err(EINVAL);
	}
	if ((pub->recv_cq && attr->recv_cq && pub->recv_cq != attr->recv_cq) ||
	    (pub->send_cq && attr->send_cq && pub->send_cq != attr->send_cq))
		return rc_err(EINVAL);
	if (rc_create_cqs(
		    pub,
		    attr->send_cq || pub->send_cq ? 0 : attr->cap.max_send_wr,
		    attr->recv_cq || pub->recv_cq ? 0 : attr->cap.max_recv_wr))
		return -1;
	if (!attr->send_cq)
		attr->send_cq = pub->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = pub->recv_cq;
	if (pub->srq && !attr->srq)
		attr->srq = pub->srq;
	qp = ibv_create_qp_ex(pub->verbs, attr);
	if (!qp) {
		int e = errno;

		rc_destroy_cqs(pub);
		return rc_err(e ? e : ENOMEM);
	}
	RC_LOCK();
	pub->qp = qp;
	r = rc_qp_attr(id, IBV_QPS_INIT, &a, &mask);
	if (!r)
		r = -ibv_modify_qp(qp, &a, mask);
	if (!r && pub->qp_type == IBV_QPT_UD) {
		r = rc_qp_attr(id, IBV_QPS_RTR, &a, &mask);
		if (!r)
			r = -ibv_modify_qp(qp, &a, mask);
		if (!r)
			r = rc_qp_attr(id, IBV_QPS_RTS, &a, &mask);
		if (!r)
			r = -ibv_modify_qp(qp, &a, mask);
	}
	if (r)
		pub->qp = NULL;
	RC_UNLOCK();
	if (r) {
		ibv_destroy_qp(qp);
		rc_destroy_cqs(pub);
		return rc_err(-r);
	}
	pub->pd = qp->pd;
	return 0;
}

RC_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			     struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int r;

	if (!qp_init_attr)
		return rc_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	/* NULL: rdma_create_qp_ex takes the id's, once it knows the id is
	 * live (a destroyed one's memory may be gone). */
	ex.pd = pd;
	r = rdma_create_qp_ex(id, &ex);
	memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	return r;
}

/* The live id under pub (NULL, errno EINVAL and a log line for a NULL
 * or destroyed one); *kern: it has a kernel id. */
static struct rc_id *rc_qp_id(struct rdma_cm_id *pub, const char *call,
			      bool *kern)
{
	struct rc_id *id;

	RC_LOCK();
	id = rc_id_live(pub, call);
	*kern = id && id->kid;
	RC_UNLOCK();
	return id;
}

RC_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct rc_id *rid;
	bool kern;

	rid = rc_qp_id(id, "rdma_destroy_qp", &kern);
	if (!rid)
		return;
	if (kern) {
		RC_LOCK();
		rc_kern_op(rid, RC_KOP_DESTROY_QP, NULL, NULL, 0);
		RC_UNLOCK();
		return;
	}
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	rc_destroy_cqs(id);
}

RC_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				 struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	struct rc_id *rid;
	bool kern;
	int r;

	rid = rc_qp_id(id, "rdma_create_srq", &kern);
	if (!rid)
		return -1;
	if (!attr || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return rc_err(EINVAL);
	if (kern) {
		RC_LOCK();
		r = rc_kern_op(rid, RC_KOP_CREATE_SRQ, attr, NULL, 0);
		RC_UNLOCK();
		return rc_cmc(r);
	}
	if (!id->verbs)
		return rc_err(EINVAL);
	if (attr->srq_type == IBV_SRQT_XRC) {
		rc_log(1, "rdma_create_srq: XRC SRQs are not supported");
		return rc_err(EOPNOTSUPP);
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (!srq)
		return -1;
	if (!id->pd)
		id->pd = attr->pd;
	id->srq = srq;
	return 0;
}

RC_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	int r;

	if (!attr)
		return rc_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	r = rdma_create_srq_ex(id, &ex);
	memcpy(attr, &ex, sizeof(*attr));
	return r;
}

RC_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	struct rc_id *rid;
	bool kern;

	rid = rc_qp_id(id, "rdma_destroy_srq", &kern);
	if (!rid)
		return;
	if (kern) {
		RC_LOCK();
		rc_kern_op(rid, RC_KOP_DESTROY_SRQ, NULL, NULL, 0);
		RC_UNLOCK();
		return;
	}
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
	rc_destroy_cqs(id);
}
