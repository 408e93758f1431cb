/* SPDX-License-Identifier: MIT */
/*
 * QP attributes from the negotiated connection: what the kernel's
 * ib_cm_init_qp_attr() computes for INIT, RTR and RTS, as a pure function
 * of a struct cmc_id_info so that it can be tested without a device.
 *
 * The facts carried over from the kernel's CM (drivers/infiniband/core/
 * cm.c), each for a reason:
 *  - INIT grants remote write always and remote read/atomic only when we
 *    serve RDMA reads (responder resources > 0): a QP that promised no
 *    responder resources must not execute reads. UC cannot serve reads or
 *    atomics at all, so it gets remote write only (the kernel does not
 *    make that distinction; verbs providers refuse the flags on UC).
 *  - RTR's max_dest_rd_atomic is our responder resources and
 *    min_rnr_timer is 0 (the kernel's choice; apps wanting another value
 *    override it), RC only.
 *  - RTS's timeout is the path's local ACK timeout, and retry counts come
 *    from the REQ (retry count) and from the peer's REQ or REP (RNR retry
 *    count), max_rd_atomic is our initiator depth; RC only.
 *  - The states each target is allowed in are the kernel's lists.
 */
#include "cmclient.h"

#include <errno.h>
#include <string.h>

#define CMC_EXPORT __attribute__((visibility("default")))

/* An address vector from a path, from our point of view. */
static void cmc_path_to_ah(const struct cmc_path *p, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = p->remote_lid;
	ah->sl = p->sl;
	/* The LMC is not known here; the base LID's path bits are 0. */
	ah->src_path_bits = 0;
	/* ibv_rate is the IBTA rate code (Table 101), 0 = port rate. */
	ah->static_rate = p->packet_rate;
	ah->port_num = p->port_num;
	if (p->grh) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, p->remote_gid, sizeof(ah->grh.dgid));
		ah->grh.flow_label = p->flow_label;
		ah->grh.sgid_index = p->sgid_index;
		ah->grh.hop_limit = p->hop_limit;
		ah->grh.traffic_class = p->traffic_class;
	}
}

static void cmc_alt_path(const struct cmc_id_info *in, struct ibv_qp_attr *a,
			 int *mask)
{
	const struct cmc_path *alt = &in->alt_path;

	cmc_path_to_ah(alt, &a->alt_ah_attr);
	/* A LAP carries no port or P_Key: the primary's unless given. */
	a->alt_port_num = alt->port_num ? alt->port_num : in->path.port_num;
	a->alt_ah_attr.port_num = a->alt_port_num;
	/* The alternate path keeps the connection's P_Key (IBTA 12.8). */
	a->alt_pkey_index = in->path.pkey_index;
	a->alt_timeout = alt->local_ack_timeout;
	*mask |= IBV_QP_ALT_PATH;
}

static bool cmc_state_allows(uint8_t state, enum ibv_qp_state target)
{
	switch ((enum cmc_state)state) {
	case CMC_STATE_REQ_SENT:
	case CMC_STATE_MRA_REQ_RCVD:
		return target == IBV_QPS_INIT;
	case CMC_STATE_REQ_RCVD:
	case CMC_STATE_MRA_REQ_SENT:
	case CMC_STATE_REP_RCVD:
	case CMC_STATE_MRA_REP_SENT:
	case CMC_STATE_REP_SENT:
	case CMC_STATE_MRA_REP_RCVD:
	case CMC_STATE_ESTABLISHED:
		return true;
	case CMC_STATE_IDLE:
	case CMC_STATE_LISTEN:
	case CMC_STATE_DREQ_SENT:
	case CMC_STATE_DREQ_RCVD:
	case CMC_STATE_TIMEWAIT:
	case CMC_STATE_SIDR_REQ_SENT:
	case CMC_STATE_SIDR_REQ_RCVD:
		return false;
	}
	return false;
}

CMC_EXPORT int cmc_qp_attr_from_info(const struct cmc_id_info *in,
				     enum ibv_qp_state target,
				     struct ibv_qp_attr *a, int *mask)
{
	bool rc = in->qp_type == CMC_QP_RC;

	memset(a, 0, sizeof(*a));
	*mask = 0;
	if (in->qp_type == CMC_QP_UD)
		return -EOPNOTSUPP;
	if (in->qp_type != CMC_QP_RC && in->qp_type != CMC_QP_UC)
		return -EINVAL;
	if (!cmc_state_allows(in->state, target) || !in->path.port_num)
		return -EINVAL;

	switch (target) {
	case IBV_QPS_INIT:
		a->qp_state = IBV_QPS_INIT;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (rc && in->responder_resources)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
					      IBV_ACCESS_REMOTE_ATOMIC;
		a->pkey_index = in->path.pkey_index;
		a->port_num = in->path.port_num;
		*mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
			IBV_QP_PORT;
		return 0;
	case IBV_QPS_RTR:
		/* The peer's QPN: from its REQ or REP (QPN 0 and 1 are the
		 * special QPs, never connected). */
		if (in->remote_qpn < 2 || in->path.mtu < IBV_MTU_256 ||
		    in->path.mtu > IBV_MTU_4096)
			return -EINVAL;
		a->qp_state = IBV_QPS_RTR;
		a->path_mtu = (enum ibv_mtu)in->path.mtu;
		a->dest_qp_num = in->remote_qpn;
		a->rq_psn = in->remote_psn;
		cmc_path_to_ah(&in->path, &a->ah_attr);
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (rc) {
			a->max_dest_rd_atomic = in->responder_resources;
			a->min_rnr_timer = 0;
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER;
		}
		if (in->has_alt_path)
			cmc_alt_path(in, a, mask);
		return 0;
	case IBV_QPS_RTS:
		/* Our SQ PSN is the one CONNECT or ACCEPT announced. */
		if (in->local_qpn < 2)
			return -EINVAL;
		a->qp_state = IBV_QPS_RTS;
		a->sq_psn = in->local_psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (rc) {
			a->timeout = in->path.local_ack_timeout;
			a->retry_cnt = in->retry_count;
			a->rnr_retry = in->rnr_retry_count;
			a->max_rd_atomic = in->initiator_depth;
			*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		if (in->has_alt_path) {
			cmc_alt_path(in, a, mask);
			a->path_mig_state = IBV_MIG_REARM;
			*mask |= IBV_QP_PATH_MIG_STATE;
		}
		return 0;
	case IBV_QPS_RESET:
	case IBV_QPS_SQD:
	case IBV_QPS_SQE:
	case IBV_QPS_ERR:
	case IBV_QPS_UNKNOWN:
		break;
	}
	return -EINVAL;
}
