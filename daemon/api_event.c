// SPDX-License-Identifier: MIT
/*
 * Engine events to the client protocol: each engine event becomes one cmp
 * EVENT for the id's owner, with its body from the CM message behind it,
 * the state the engine moved the id to, and the per-id event sequence of
 * rule 2. What an event tells about its id (the peer's QPN, the path) is
 * kept for QUERY_ID; the setup latency is measured here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cmd.h"
#include "log.h"
#include "util.h"

/*
 * The local ACK timeout exponent for a QP whose peer acks within
 * 4.096 us * 2^ack_delay over a path of packet life time plt: the round
 * trip (plt + 1) or the peer's delay, whichever dominates, plus one when
 * the two are close (the kernel's cm_ack_timeout does the same).
 */
static uint8_t ack_timeout(uint8_t ack_delay, uint8_t plt)
{
	int t = plt + 1;

	if (t >= ack_delay)
		t += ack_delay >= t - 1;
	else
		t = ack_delay + (t >= ack_delay - 1);
	return (uint8_t)(t > 31 ? 31 : t);
}

static enum cmp_cm_msg cm_msg_ref(enum eng_event_type t)
{
	switch (t) {
	case ENG_EV_REQ_ERROR:
		return CMP_CM_MSG_REQ;
	case ENG_EV_REP_ERROR:
		return CMP_CM_MSG_REP;
	case ENG_EV_SIDR_REQ_ERROR:
		return CMP_CM_MSG_SIDR_REQ;
	default:
		return CMP_CM_MSG_NONE;
	}
}

/* Fill the event body from the engine's event; returns the cmp type. */
static enum cmp_event_type event_body(struct cmd *cmd, struct api_id *a,
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
		b->private_data_len = CM_REQ_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->req.private_data,
		       CM_REQ_PRIVATE_DATA_SIZE);
		path_from_req(cmd->xport, &ev->addr, &m->req, &b->path);
		a->qp_type = b->qp_type;
		a->info.qp_type = b->qp_type;
		a->info.listen_id = ev->listen_id;
		a->info.local_comm_id = ev->id; /* an id is its comm id */
		a->info.service_id = m->req.service_id;
		a->info.remote_ca_guid = m->req.local_ca_guid;
		a->info.remote_comm_id = m->req.local_comm_id;
		a->info.remote_qpn = m->req.local_qpn;
		a->info.remote_psn = m->req.starting_psn;
		/* From our side: the requester's initiator depth bounds our
		 * responder resources and vice versa (as the kernel's
		 * cm_req_handler sets them until the app accepts). */
		a->info.responder_resources = m->req.initiator_depth;
		a->info.initiator_depth = m->req.responder_resources;
		a->info.flow_control = m->req.flow_control;
		a->info.retry_count = m->req.retry_count;
		a->info.rnr_retry_count = m->req.rnr_retry_count;
		a->info.srq = m->req.srq;
		a->info.path = b->path;
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
		b->failover = m->rep.failover_accepted <= CMP_FAILOVER_MAX ?
				      m->rep.failover_accepted :
				      CMP_FAILOVER_REJECTED;
		b->flow_control = m->rep.flow_control;
		b->rnr_retry_count = m->rep.rnr_retry_count;
		b->srq = m->rep.srq;
		b->private_data_len = CM_REP_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->rep.private_data,
		       CM_REP_PRIVATE_DATA_SIZE);
		/* The QP's ACK timeout covers the peer's ACK delay too. */
		a->info.path.local_ack_timeout = ack_timeout(
			m->rep.target_ack_delay, a->info.path.packet_life_time);
		b->path = a->info.path;
		a->info.responder_resources = m->rep.initiator_depth;
		a->info.initiator_depth = m->rep.responder_resources;
		a->info.remote_comm_id = m->rep.local_comm_id;
		a->info.remote_qpn = m->rep.local_qpn;
		a->info.remote_psn = m->rep.starting_psn;
		a->info.remote_ca_guid = m->rep.local_ca_guid;
		a->info.target_ack_delay = m->rep.target_ack_delay;
		return CMP_EVENT_REP_RECEIVED;
	}
	case ENG_EV_RTU_RECEIVED:
		if (ev->has_msg) {
			e->established.private_data_len =
				CM_RTU_PRIVATE_DATA_SIZE;
			memcpy(e->established.private_data, m->rtu.private_data,
			       CM_RTU_PRIVATE_DATA_SIZE);
		}
		return CMP_EVENT_ESTABLISHED;
	case ENG_EV_REJ_RECEIVED:
		e->rej_received.reason = m->rej.reason;
		e->rej_received.ari_len = m->rej.ari_length;
		memcpy(e->rej_received.ari, m->rej.ari, m->rej.ari_length);
		e->rej_received.private_data_len = CM_REJ_PRIVATE_DATA_SIZE;
		memcpy(e->rej_received.private_data, m->rej.private_data,
		       CM_REJ_PRIVATE_DATA_SIZE);
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
			e->dreq_received.private_data_len =
				CM_DREQ_PRIVATE_DATA_SIZE;
			memcpy(e->dreq_received.private_data,
			       m->dreq.private_data, CM_DREQ_PRIVATE_DATA_SIZE);
		}
		return CMP_EVENT_DREQ_RECEIVED;
	case ENG_EV_DREQ_ERROR:
		return CMP_EVENT_DISCONNECT_TIMEOUT;
	case ENG_EV_DREP_RECEIVED:
		if (ev->has_msg && m->type == CM_MSG_DREP) {
			e->drep_received.private_data_len =
				CM_DREP_PRIVATE_DATA_SIZE;
			memcpy(e->drep_received.private_data,
			       m->drep.private_data, CM_DREP_PRIVATE_DATA_SIZE);
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
		e->lap_received.private_data_len = CM_LAP_PRIVATE_DATA_SIZE;
		memcpy(e->lap_received.private_data, m->lap.private_data,
		       CM_LAP_PRIVATE_DATA_SIZE);
		return CMP_EVENT_LAP_RECEIVED;
	}
	case ENG_EV_LAP_ERROR:
		if (!e->status)
			e->status = -ETIMEDOUT;
		return CMP_EVENT_APR_RECEIVED;
	case ENG_EV_PORT_ERROR:
		/* The connection stays; its port is gone (-ENETDOWN). */
		e->port.port_num = a->info.path.port_num;
		memcpy(e->port.dev_name, a->info.path.dev_name,
		       sizeof(e->port.dev_name));
		return CMP_EVENT_PORT_ERROR;
	case ENG_EV_DEVICE_REMOVAL:
		/* The id's device is gone (-ENODEV): it can only be destroyed. */
		e->port.port_num = a->info.path.port_num;
		memcpy(e->port.dev_name, a->info.path.dev_name,
		       sizeof(e->port.dev_name));
		return CMP_EVENT_DEVICE_REMOVAL;
	case ENG_EV_APR_RECEIVED:
		e->apr_received.ap_status = m->apr.status;
		e->apr_received.info_len = m->apr.info_length;
		memcpy(e->apr_received.info, m->apr.info, m->apr.info_length);
		e->apr_received.private_data_len = CM_APR_PRIVATE_DATA_SIZE;
		memcpy(e->apr_received.private_data, m->apr.private_data,
		       CM_APR_PRIVATE_DATA_SIZE);
		return CMP_EVENT_APR_RECEIVED;
	case ENG_EV_SIDR_REQ_RECEIVED: {
		struct cmp_ev_sidr_req *b = &e->sidr_req_received;

		b->listen_id = ev->listen_id;
		b->service_id = m->sidr_req.service_id;
		b->private_data_len = CM_SIDR_REQ_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->sidr_req.private_data,
		       CM_SIDR_REQ_PRIVATE_DATA_SIZE);
		path_from_addr(cmd->xport, &ev->addr, m->sidr_req.pkey,
			       &b->path);
		a->qp_type = CMP_QP_TYPE_UD;
		a->info.qp_type = CMP_QP_TYPE_UD;
		a->info.listen_id = ev->listen_id;
		a->info.service_id = b->service_id;
		a->info.path = b->path;
		return CMP_EVENT_SIDR_REQ_RECEIVED;
	}
	case ENG_EV_SIDR_REP_RECEIVED: {
		struct cmp_ev_sidr_rep *b = &e->sidr_rep_received;

		b->qpn = m->sidr_rep.qpn;
		b->qkey = m->sidr_rep.qkey;
		b->status = m->sidr_rep.status;
		b->private_data_len = CM_SIDR_REP_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->sidr_rep.private_data,
		       CM_SIDR_REP_PRIVATE_DATA_SIZE);
		b->path = a->info.path;
		a->info.remote_qpn = b->qpn;
		a->info.qkey = b->qkey;
		return CMP_EVENT_SIDR_REP_RECEIVED;
	}
	case ENG_EV__COUNT:
		break;
	}
	return 0;
}

/*
 * ops: the connection setup latency histogram. The active side times from
 * its REQ (CONNECT) to the REP's event, the passive side from the REQ's
 * event to the RTU's (or NOTIFY_ESTABLISHED's) ESTABLISHED.
 */
static void setup_latency(struct cmd *cmd, struct api_id *a,
			  enum eng_event_type type)
{
	uint64_t us;
	unsigned int b = 0;

	if (type == ENG_EV_REQ_RECEIVED) {
		a->setup_start = cmd_now();
		return;
	}
	if ((type != ENG_EV_REP_RECEIVED && type != ENG_EV_RTU_RECEIVED) ||
	    !a->setup_start)
		return;
	us = (cmd_now() - a->setup_start) / 1000;
	a->setup_start = 0;
	while (b + 1 < CMD_SETUP_BUCKETS && us > (1ULL << b))
		b++;
	cmd->counters.setup_us[b]++;
	cmd->counters.setup_count++;
	cmd->counters.setup_us_sum += us;
}

void api_deliver(void *ctx, const struct eng_event *ev)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = hmap_get(&cmd->clients, ev->owner);
	struct api_id *a = hmap_get(&cmd->ids, ev->id);
	struct cmp_msg msg;
	enum cmp_event_type type;

	if (!ac) {
		/* The engine never delivers to a destroyed owner; if it
		 * did, there is nobody to tell. */
		log_err("event %s for id %u of unknown client %llu",
			eng_event_name(ev->type), ev->id,
			(unsigned long long)ev->owner);
		return;
	}
	if (!a) {
		/* A new passive id: it belongs to its listener's owner. */
		a = api_id_add(cmd, ac->client, ev->id, CMP_QP_TYPE_RC);
		if (!a) {
			log_err("out of memory for id %u", ev->id);
			return;
		}
	}
	cmp_msg_init(&msg, CMP_TYPE_EVENT, ++a->ev_seq);
	if (!a->ev_seq) /* sequence numbers skip 0 (cmp.h) */
		msg.hdr.seq = ++a->ev_seq;
	msg.event.id = ev->id;
	msg.event.status = ev->status;
	msg.event.context = ev->context;
	type = event_body(cmd, a, ev, &msg.event);
	msg.event.type = (uint16_t)type;
	/* The engine's state after the event, for the library to record. */
	msg.event.state = (uint8_t)ev->state;
	msg.event.lap_state = (uint8_t)ev->lap;
	a->unacked_seq = msg.hdr.seq;
	setup_latency(cmd, a, ev->type);
	if (!srv_send(a->client, &msg))
		ac->events_sent++;
}
