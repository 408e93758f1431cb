// SPDX-License-Identifier: MIT
/*
 * Engine events to client protocol events (xlate.h): the body from the CM
 * message behind the event, the state the engine moved the id to. A pure
 * function of its arguments.
 */
#include <errno.h>
#include <string.h>

#include "path.h"
#include "xlate.h"

/* A message's private data, all of it: the CM does not say how much of
 * it the sender used. */
#define PD_IN(body, src)                                                       \
	do {                                                                   \
		_Static_assert(sizeof((body).private_data) >= sizeof(src),     \
			       "room for the private data");                   \
		(body).private_data_len = (uint8_t)sizeof(src);                \
		memcpy((body).private_data, (src), sizeof(src));               \
	} while (0)

/* PORT_ERROR and DEVICE_REMOVAL name the port of the id's path. */
static void port_of(const struct cmp_path *told, struct cmp_ev_port *b)
{
	b->port_num = told->port_num;
	memcpy(b->dev_name, told->dev_name, sizeof(b->dev_name));
}

/* Which of our messages a CONNECT_ERROR is about. */
static enum cmp_cm_msg cm_msg_ref(enum eng_event_type t)
{
	if (t == ENG_EV_REQ_ERROR)
		return CMP_CM_MSG_REQ;
	if (t == ENG_EV_REP_ERROR)
		return CMP_CM_MSG_REP;
	if (t == ENG_EV_SIDR_REQ_ERROR)
		return CMP_CM_MSG_SIDR_REQ;
	return CMP_CM_MSG_NONE;
}

static enum cmp_event_type xlate_body(const struct xport *x,
				      const struct cmp_path *told,
				      const struct eng_event *ev,
				      struct cmp_event *e)
{
	const struct cm_msg *m = &ev->msg;

	switch (ev->type) {
	case ENG_EV_REQ_RECEIVED: {
		struct cmp_ev_req *b = &e->req_received;

		b->listen_id = ev->listen_id;
		b->remote_comm_id = m->req.local_comm_id;
		b->remote_qpn = m->req.local_qpn;
		b->start_psn = m->req.starting_psn;
		b->service_id = m->req.service_id;
		b->remote_ca_guid = m->req.local_ca_guid;
		b->qp_type = m->req.transport_type == CM_TRANSPORT_UC ?
				     CMP_QP_TYPE_UC :
				     CMP_QP_TYPE_RC;
		b->responder_resources = m->req.responder_resources;
		b->initiator_depth = m->req.initiator_depth;
		b->flow_control = m->req.flow_control;
		b->retry_count = m->req.retry_count;
		b->rnr_retry_count = m->req.rnr_retry_count;
		b->srq = m->req.srq;
		PD_IN(*b, m->req.private_data);
		path_from_req(x, &ev->addr, &m->req, &b->path);
		return CMP_EVENT_REQ_RECEIVED;
	}
	case ENG_EV_REP_RECEIVED: {
		struct cmp_ev_rep *b = &e->rep_received;

		b->remote_qpn = m->rep.local_qpn;
		b->start_psn = m->rep.starting_psn;
		b->remote_ca_guid = m->rep.local_ca_guid;
		b->responder_resources = m->rep.responder_resources;
		b->initiator_depth = m->rep.initiator_depth;
		b->target_ack_delay = m->rep.target_ack_delay;
		b->failover = cmp_failover_of(m->rep.failover_accepted);
		b->flow_control = m->rep.flow_control;
		b->rnr_retry_count = m->rep.rnr_retry_count;
		b->srq = m->rep.srq;
		PD_IN(*b, m->rep.private_data);
		/* The QP's ACK timeout covers the peer's ACK delay too. */
		b->path = *told;
		b->path.local_ack_timeout = path_ack_timeout(
			m->rep.target_ack_delay, told->packet_life_time);
		return CMP_EVENT_REP_RECEIVED;
	}
	case ENG_EV_RTU_RECEIVED:
		if (ev->has_msg) {
			PD_IN(e->established, m->rtu.private_data);
		}
		return CMP_EVENT_ESTABLISHED;
	case ENG_EV_REJ_RECEIVED:
		e->rej_received.reason = m->rej.reason;
		e->rej_received.ari_len = m->rej.ari_length;
		memcpy(e->rej_received.ari, m->rej.ari, m->rej.ari_length);
		PD_IN(e->rej_received, m->rej.private_data);
		return CMP_EVENT_REJ_RECEIVED;
	case ENG_EV_REQ_ERROR:
	case ENG_EV_REP_ERROR:
	case ENG_EV_SIDR_REQ_ERROR:
		e->connect_error.msg = (uint8_t)cm_msg_ref(ev->type);
		if (!e->status)
			e->status = -ETIMEDOUT;
		return CMP_EVENT_CONNECT_ERROR;
	case ENG_EV_DREQ_RECEIVED:
		if (ev->has_msg) {
			PD_IN(e->dreq_received, m->dreq.private_data);
		}
		return CMP_EVENT_DREQ_RECEIVED;
	case ENG_EV_DREQ_ERROR:
		return CMP_EVENT_DISCONNECT_TIMEOUT;
	case ENG_EV_DREP_RECEIVED:
		if (ev->has_msg && m->type == CM_MSG_DREP) {
			PD_IN(e->drep_received, m->drep.private_data);
		}
		return CMP_EVENT_DREP_RECEIVED;
	case ENG_EV_TIMEWAIT_EXIT:
		return CMP_EVENT_TIMEWAIT_EXIT;
	case ENG_EV_LAP_RECEIVED: {
		struct cmp_path *p = &e->lap_received.alt_path;

		p->local_lid = m->lap.alt_remote_lid;
		p->remote_lid = m->lap.alt_local_lid;
		memcpy(p->local_gid, m->lap.alt_remote_gid, CM_GID_SIZE);
		memcpy(p->remote_gid, m->lap.alt_local_gid, CM_GID_SIZE);
		p->flow_label = m->lap.alt_flow_label;
		p->traffic_class = m->lap.alt_traffic_class;
		p->hop_limit = m->lap.alt_hop_limit;
		p->packet_rate = m->lap.alt_packet_rate;
		p->sl = m->lap.alt_sl;
		p->local_ack_timeout = m->lap.alt_local_ack_timeout;
		PD_IN(e->lap_received, m->lap.private_data);
		return CMP_EVENT_LAP_RECEIVED;
	}
	case ENG_EV_LAP_ERROR:
		if (!e->status)
			e->status = -ETIMEDOUT;
		return CMP_EVENT_APR_RECEIVED;
	case ENG_EV_PORT_ERROR:
		/* The connection stays; its port is gone (-ENETDOWN). */
		port_of(told, &e->port);
		return CMP_EVENT_PORT_ERROR;
	case ENG_EV_APR_RECEIVED:
		e->apr_received.ap_status = m->apr.status;
		e->apr_received.info_len = m->apr.info_length;
		memcpy(e->apr_received.info, m->apr.info, m->apr.info_length);
		PD_IN(e->apr_received, m->apr.private_data);
		return CMP_EVENT_APR_RECEIVED;
	case ENG_EV_SIDR_REQ_RECEIVED: {
		struct cmp_ev_sidr_req *b = &e->sidr_req_received;

		b->listen_id = ev->listen_id;
		b->service_id = m->sidr_req.service_id;
		PD_IN(*b, m->sidr_req.private_data);
		path_from_addr(x, &ev->addr, m->sidr_req.pkey, &b->path);
		return CMP_EVENT_SIDR_REQ_RECEIVED;
	}
	case ENG_EV_SIDR_REP_RECEIVED: {
		struct cmp_ev_sidr_rep *b = &e->sidr_rep_received;

		b->qpn = m->sidr_rep.qpn;
		b->qkey = m->sidr_rep.qkey;
		b->status = m->sidr_rep.status;
		PD_IN(*b, m->sidr_rep.private_data);
		b->path = *told;
		return CMP_EVENT_SIDR_REP_RECEIVED;
	}
	case ENG_EV_DEVICE_REMOVAL:
		/* The id's device is gone (-ENODEV): it can only be destroyed. */
		port_of(told, &e->port);
		return CMP_EVENT_DEVICE_REMOVAL;
	case ENG_EV_MRA_RECEIVED:
		e->mra_received.service_timeout = m->mra.service_timeout;
		e->mra_received.msg = m->mra.message_mraed == CM_MSG_REF_REQ ?
					      CMP_CM_MSG_REQ :
				      m->mra.message_mraed == CM_MSG_REF_REP ?
					      CMP_CM_MSG_REP :
					      CMP_CM_MSG_LAP;
		return CMP_EVENT_MRA_RECEIVED;
	case ENG_EV__COUNT:
		break;
	}
	return 0;
}

void xlate_event(const struct xport *x, const struct cmp_path *told,
		 const struct eng_event *ev, struct cmp_event *e)
{
	memset(e, 0, sizeof(*e));
	e->id = ev->id;
	e->status = ev->status;
	/* A new passive id's first event carries its listener's context
	 * (cmclient.h): the id has none of its own yet. */
	e->context = ev->type == ENG_EV_REQ_RECEIVED ||
				     ev->type == ENG_EV_SIDR_REQ_RECEIVED ?
			     ev->listen_context :
			     ev->context;
	e->type = (uint16_t)xlate_body(x, told, ev, e);
	/* The engine's state after the event, for the library to record. */
	e->state = (uint8_t)ev->state;
	e->lap_state = (uint8_t)ev->lap;
}
