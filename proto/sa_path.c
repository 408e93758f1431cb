// SPDX-License-Identifier: MIT
/*
 * PathRecord <-> connection path. Field by field, no defaults invented:
 * what the record does not say, the caller keeps.
 */
#include "sa_path.h"

#include <errno.h>
#include <string.h>

int sa_path_check(const struct sa_path_rec *rec)
{
	if (!rec->dlid || !rec->slid)
		return -EINVAL;
	if (rec->mtu < CM_MTU_256 || rec->mtu > CM_MTU_4096)
		return -EINVAL;
	return 0;
}

int sa_path_to_req(const struct sa_path_rec *rec, enum sa_path_which which,
		   uint8_t ca_ack_delay, struct cm_req *req)
{
	uint8_t ack = cm_ack_timeout(ca_ack_delay, rec->packet_life_time);

	if (sa_path_check(rec))
		return -EINVAL;
	switch (which) {
	case SA_PATH_PRIMARY:
		req->pkey = rec->pkey;
		req->path_mtu = rec->mtu;
		req->primary_local_lid = rec->slid;
		req->primary_remote_lid = rec->dlid;
		memcpy(req->primary_local_gid, rec->sgid, CM_GID_SIZE);
		memcpy(req->primary_remote_gid, rec->dgid, CM_GID_SIZE);
		req->primary_flow_label = rec->flow_label;
		req->primary_packet_rate = rec->rate;
		req->primary_traffic_class = rec->tclass;
		req->primary_hop_limit = rec->hop_limit;
		req->primary_sl = rec->sl;
		req->primary_subnet_local = rec->hop_limit <= 1;
		req->primary_local_ack_timeout = ack;
		return 0;
	case SA_PATH_ALTERNATE:
		if (rec->pkey != req->pkey || rec->mtu != req->path_mtu)
			return -EINVAL;
		req->alt_local_lid = rec->slid;
		req->alt_remote_lid = rec->dlid;
		memcpy(req->alt_local_gid, rec->sgid, CM_GID_SIZE);
		memcpy(req->alt_remote_gid, rec->dgid, CM_GID_SIZE);
		req->alt_flow_label = rec->flow_label;
		req->alt_packet_rate = rec->rate;
		req->alt_traffic_class = rec->tclass;
		req->alt_hop_limit = rec->hop_limit;
		req->alt_sl = rec->sl;
		req->alt_subnet_local = rec->hop_limit <= 1;
		req->alt_local_ack_timeout = ack;
		return 0;
	}
	return -EINVAL;
}

int sa_path_to_cmp(const struct sa_path_rec *rec, uint8_t ca_ack_delay,
		   struct cmp_path *v)
{
	if (sa_path_check(rec))
		return -EINVAL;
	v->local_lid = rec->slid;
	v->remote_lid = rec->dlid;
	v->pkey = rec->pkey;
	v->mtu = rec->mtu;
	v->sl = rec->sl;
	v->packet_rate = rec->rate;
	v->packet_life_time = rec->packet_life_time;
	v->local_ack_timeout =
		cm_ack_timeout(ca_ack_delay, rec->packet_life_time);
	memcpy(v->local_gid, rec->sgid, CM_GID_SIZE);
	memcpy(v->remote_gid, rec->dgid, CM_GID_SIZE);
	/* ib_init_ah_attr_from_path(): a GRH when the hop limit is above
	 * 0, though the REQ calls the path subnet local up to 1. */
	v->grh = rec->hop_limit > 0;
	v->hop_limit = rec->hop_limit;
	v->flow_label = rec->flow_label;
	v->traffic_class = rec->tclass;
	return 0;
}

uint64_t sa_path_query(const struct sa_path_want *w, struct sa_path_rec *tmpl)
{
	uint64_t mask = SA_PR_COMP_NUMB_PATH | SA_PR_COMP_REVERSIBLE;

	memset(tmpl, 0, sizeof(*tmpl));
	if (w->dlid) {
		/* By LID: the program named the peer by its LID. */
		tmpl->dlid = w->dlid;
		tmpl->slid = w->slid;
		mask |= SA_PR_COMP_DLID | (w->slid ? SA_PR_COMP_SLID : 0);
	} else {
		memcpy(tmpl->dgid, w->dgid, CM_GID_SIZE);
		memcpy(tmpl->sgid, w->sgid, CM_GID_SIZE);
		mask |= SA_PR_COMP_DGID | SA_PR_COMP_SGID;
	}
	tmpl->numb_path = w->numb_path ? w->numb_path : 1;
	/* The passive side answers over the same path reversed (the REQ
	 * carries the only path description either side gets), so it must
	 * work both ways; rdma_cm asks the same. */
	tmpl->reversible = 1;
	if (w->pkey) {
		tmpl->pkey = w->pkey;
		mask |= SA_PR_COMP_PKEY;
	}
	if (w->service_id) {
		sa_path_rec_set_service_id(tmpl, w->service_id);
		mask |= SA_PR_COMP_SERVICE_ID;
	}
	if (w->flags & CMP_PATH_FLAG_TRAFFIC_CLASS) {
		tmpl->tclass = w->traffic_class;
		mask |= SA_PR_COMP_TCLASS;
	}
	if (w->flags & CMP_PATH_FLAG_SL) {
		tmpl->sl = w->sl;
		mask |= SA_PR_COMP_SL;
	}
	if (w->flags & CMP_PATH_FLAG_MTU) {
		tmpl->mtu_selector = SA_SEL_EXACTLY;
		tmpl->mtu = w->mtu;
		mask |= SA_PR_COMP_MTU_SELECTOR | SA_PR_COMP_MTU;
	}
	return mask;
}

int sa_path_query_encode(const struct sa_path_want *w, uint64_t tid,
			 uint8_t out[SA_MAD_SIZE])
{
	struct sa_path_rec tmpl;
	struct sa_msg m;
	uint64_t mask = sa_path_query(w, &tmpl);

	sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE, tid, mask);
	return sa_path_mad_encode(&m, &tmpl, 1, out, SA_MAD_SIZE);
}

void sa_path_want_from_req(const struct cm_req *req, enum sa_path_which which,
			   struct sa_path_want *w)
{
	bool alt = which == SA_PATH_ALTERNATE;

	memset(w, 0, sizeof(*w));
	memcpy(w->sgid, alt ? req->alt_local_gid : req->primary_local_gid,
	       CM_GID_SIZE);
	memcpy(w->dgid, alt ? req->alt_remote_gid : req->primary_remote_gid,
	       CM_GID_SIZE);
	w->pkey = req->pkey;
	w->flags = CMP_PATH_FLAG_SL | CMP_PATH_FLAG_MTU |
		   CMP_PATH_FLAG_TRAFFIC_CLASS;
	w->sl = alt ? req->alt_sl : req->primary_sl;
	w->mtu = req->path_mtu;
	w->traffic_class =
		alt ? req->alt_traffic_class : req->primary_traffic_class;
}
