/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the client<->daemon protocol (proto/cmp.c).
 *
 * Every request, reply and event type is built with distinctive values,
 * encoded, decoded and compared; the header layout is pinned by hand-written
 * bytes; a malformed corpus proves that each check fires with its own
 * reason; and every truncation and every single-byte corruption of every
 * valid message is decoded from an exactly sized heap buffer, so that
 * AddressSanitizer catches any read past the datagram.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmp.h"

/* One example message: a type, and for EVENT the event type. */
struct example {
	enum cmp_type type;
	enum cmp_event_type event;
};

static void fill_bytes(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i);
}

/* Private data of len bytes, the rest of the area left zero. */
#define FILL_DATA(lenf, data, len, seed)                                       \
	do {                                                                   \
		(lenf) = (len);                                                \
		fill_bytes((data), (len), (seed));                             \
	} while (0)

static void fill_path(struct cmp_path *p, uint8_t seed)
{
	p->flow_label = 0xabcde;
	p->local_lid = 0x0012;
	p->remote_lid = 0x0034;
	p->pkey = 0xffff;
	p->pkey_index = 1;
	p->port_num = 1;
	p->mtu = CM_MTU_4096;
	p->sl = 3;
	p->traffic_class = 0x20;
	p->hop_limit = 64;
	p->packet_rate = 7;
	p->local_ack_timeout = 14;
	p->sgid_index = 2;
	p->grh = 1;
	p->packet_life_time = 18;
	fill_bytes(p->local_gid, sizeof(p->local_gid), seed);
	fill_bytes(p->remote_gid, sizeof(p->remote_gid), (uint8_t)(seed + 64));
	snprintf(p->dev_name, sizeof(p->dev_name), "rxe%u", seed % 10);
}

static void fill_gid_dst(struct cmp_addr *a)
{
	a->family = CMP_AF_GID;
	fill_bytes(a->addr, sizeof(a->addr), 0xfe);
}

static void build_event(struct cmp_msg *m, enum cmp_event_type ev)
{
	struct cmp_event *e = &m->event;

	cmp_msg_init(m, CMP_TYPE_EVENT, 3);
	e->id = 77;
	e->type = ev;
	e->context = 0xc0ffee0000c0ffeeULL;
	switch (ev) {
	case CMP_EVENT_REQ_RECEIVED:
		e->req_received.listen_id = 5;
		e->req_received.remote_comm_id = 0xdeadbeef;
		e->req_received.remote_qpn = 0x123456;
		e->req_received.start_psn = 0xabcdef;
		e->req_received.service_id = 0x0000000001060000ULL | 7471;
		e->req_received.remote_ca_guid = 0x0002c90300a1b2c3ULL;
		e->req_received.qp_type = CMP_QP_TYPE_RC;
		e->req_received.responder_resources = 16;
		e->req_received.initiator_depth = 8;
		e->req_received.flow_control = 1;
		e->req_received.retry_count = 7;
		e->req_received.rnr_retry_count = 6;
		e->req_received.srq = 1;
		fill_path(&e->req_received.path, 1);
		FILL_DATA(e->req_received.private_data_len,
			  e->req_received.private_data,
			  CM_REQ_PRIVATE_DATA_SIZE, 1);
		break;
	case CMP_EVENT_REP_RECEIVED:
		e->rep_received.remote_qpn = 0x654321;
		e->rep_received.start_psn = 0x000001;
		e->rep_received.remote_ca_guid = 0x0002c90300d4e5f6ULL;
		e->rep_received.responder_resources = 4;
		e->rep_received.initiator_depth = 2;
		e->rep_received.target_ack_delay = 15;
		e->rep_received.failover = CMP_FAILOVER_NOT_SUPPORTED;
		e->rep_received.flow_control = 1;
		e->rep_received.rnr_retry_count = 7;
		e->rep_received.srq = 0;
		fill_path(&e->rep_received.path, 2);
		FILL_DATA(e->rep_received.private_data_len,
			  e->rep_received.private_data,
			  CM_REP_PRIVATE_DATA_SIZE, 2);
		break;
	case CMP_EVENT_ESTABLISHED:
		FILL_DATA(e->established.private_data_len,
			  e->established.private_data, CM_RTU_PRIVATE_DATA_SIZE,
			  3);
		break;
	case CMP_EVENT_REJ_RECEIVED:
		e->rej_received.reason = CM_REJ_CONSUMER_DEFINED;
		FILL_DATA(e->rej_received.ari_len, e->rej_received.ari, 9, 4);
		FILL_DATA(e->rej_received.private_data_len,
			  e->rej_received.private_data,
			  CM_REJ_PRIVATE_DATA_SIZE, 5);
		break;
	case CMP_EVENT_CONNECT_ERROR:
		e->status = -ETIMEDOUT;
		e->connect_error.msg = CMP_CM_MSG_REQ;
		break;
	case CMP_EVENT_MRA_RECEIVED:
		e->mra_received.service_timeout = 20;
		e->mra_received.msg = CMP_CM_MSG_REP;
		break;
	case CMP_EVENT_DREQ_RECEIVED:
		FILL_DATA(e->dreq_received.private_data_len,
			  e->dreq_received.private_data,
			  CM_DREQ_PRIVATE_DATA_SIZE, 6);
		break;
	case CMP_EVENT_DREP_RECEIVED:
		FILL_DATA(e->drep_received.private_data_len,
			  e->drep_received.private_data,
			  CM_DREP_PRIVATE_DATA_SIZE, 7);
		break;
	case CMP_EVENT_DISCONNECT_TIMEOUT:
		e->status = -ETIMEDOUT;
		break;
	case CMP_EVENT_TIMEWAIT_EXIT:
		break;
	case CMP_EVENT_LAP_RECEIVED:
		fill_path(&e->lap_received.alt_path, 8);
		FILL_DATA(e->lap_received.private_data_len,
			  e->lap_received.private_data,
			  CM_LAP_PRIVATE_DATA_SIZE, 8);
		break;
	case CMP_EVENT_APR_RECEIVED:
		e->apr_received.ap_status = CM_APR_REJECTED;
		FILL_DATA(e->apr_received.info_len, e->apr_received.info, 72,
			  9);
		FILL_DATA(e->apr_received.private_data_len,
			  e->apr_received.private_data,
			  CM_APR_PRIVATE_DATA_SIZE, 9);
		break;
	case CMP_EVENT_SIDR_REQ_RECEIVED:
		e->sidr_req_received.listen_id = 6;
		e->sidr_req_received.service_id = 0x0000000002110000ULL | 99;
		fill_path(&e->sidr_req_received.path, 10);
		FILL_DATA(e->sidr_req_received.private_data_len,
			  e->sidr_req_received.private_data,
			  CM_SIDR_REQ_PRIVATE_DATA_SIZE, 10);
		break;
	case CMP_EVENT_SIDR_REP_RECEIVED:
		e->sidr_rep_received.qpn = 0x00beef;
		e->sidr_rep_received.qkey = 0x80010000;
		e->sidr_rep_received.status = CM_SIDR_SUCCESS;
		fill_path(&e->sidr_rep_received.path, 11);
		FILL_DATA(e->sidr_rep_received.private_data_len,
			  e->sidr_rep_received.private_data,
			  CM_SIDR_REP_PRIVATE_DATA_SIZE, 11);
		break;
	case CMP_EVENT_PORT_ERROR:
	case CMP_EVENT_DEVICE_REMOVAL:
		e->status = ev == CMP_EVENT_PORT_ERROR ? -ENETDOWN : -ENODEV;
		e->port.port_num = 2;
		snprintf(e->port.dev_name, sizeof(e->port.dev_name), "mlx5_1");
		break;
	case CMP_EVENT_ROUTE_RESOLVED:
		e->route_resolved.has_alt = 1;
		e->route_resolved.from_sa = 1;
		fill_path(&e->route_resolved.path, 12);
		fill_path(&e->route_resolved.alt_path, 13);
		break;
	}
}

static void build_id_info(struct cmp_id_info *i)
{
	i->id = 42;
	i->listen_id = 5;
	i->context = 0x1234;
	i->service_id = 0x0000000001060000ULL | 18515;
	i->remote_ca_guid = 0x0002c90300a1b2c3ULL;
	i->local_comm_id = 0x11111111;
	i->remote_comm_id = 0x22222222;
	i->local_qpn = 0x000101;
	i->remote_qpn = 0x000202;
	i->local_psn = 0x303030;
	i->remote_psn = 0x404040;
	i->state = CMP_STATE_ESTABLISHED;
	i->lap_state = CMP_LAP_STATE_MRA_LAP_RCVD;
	i->qp_type = CMP_QP_TYPE_RC;
	i->responder_resources = 16;
	i->initiator_depth = 16;
	i->target_ack_delay = 10;
	i->failover = CMP_FAILOVER_ACCEPTED;
	i->flow_control = 1;
	i->retry_count = 7;
	i->rnr_retry_count = 7;
	i->srq = 0;
	i->max_cm_retries = 15;
	i->local_cm_response_timeout = 20;
	i->remote_cm_response_timeout = 21;
	i->has_alt_path = 1;
	fill_path(&i->path, 20);
	fill_path(&i->alt_path, 21);
}

/* Port i: an IB port with one GID, or a RoCE port with a full table. */
static void build_port(struct cmp_port_entry *e, uint32_t i)
{
	snprintf(e->dev_name, sizeof(e->dev_name), "%s", i ? "rxe0" : "mlx5_0");
	e->node_guid = 0x0002c90300a1b2c3ULL + i;
	e->port_guid = 0x0002c90300a1b2c4ULL + i;
	e->port_index = (uint16_t)(7 + i);
	e->port_num = (uint8_t)(1 + i);
	e->up = 1;
	e->state = i ? CMP_PORT_STATE_ACTIVE : CMP_PORT_STATE_ARMED;
	e->link_layer = i ? CMP_LINK_LAYER_ROCE : CMP_LINK_LAYER_IB;
	e->active_mtu = i ? CM_MTU_1024 : CM_MTU_4096;
	e->lid = i ? 0 : 0x0012;
	e->lmc = i ? 0 : 2;
	e->sm_lid = i ? 0 : 0x0001;
	e->sm_sl = i ? 0 : 5;
	e->n_gids = i ? 9 : 1;
	for (uint32_t g = 0; g < (i ? CMP_PORT_GIDS : 1u); g++) {
		e->gids[g].index = (uint16_t)(g * 2);
		e->gids[g].type = i ? (g & 1 ? CMP_GID_TYPE_ROCE_V2 :
					       CMP_GID_TYPE_ROCE_V1) :
				      CMP_GID_TYPE_IB;
		fill_bytes(e->gids[g].gid, CM_GID_SIZE, (uint8_t)(0x40 + g));
	}
}

/* A PATHS_REPLY entry; i 1 has an alternate. */
static void build_path_entry(struct cmp_path_entry *e, uint32_t i)
{
	snprintf(e->dev_name, sizeof(e->dev_name), "%s", i ? "mlx5_1" : "ib0");
	e->port_index = (uint16_t)(3 + i);
	e->port_num = 1;
	e->asked_dlid = i ? 0 : 0x21;
	if (i)
		fill_bytes(e->asked_dgid, CM_GID_SIZE, 0x60);
	fill_bytes(e->sgid, CM_GID_SIZE, 0x70);
	fill_bytes(e->dgid, CM_GID_SIZE, 0x60);
	e->slid = 0x11;
	e->dlid = (uint16_t)(0x21 + i);
	e->pkey = 0xffff;
	e->sl = 15;
	e->mtu = CM_MTU_4096;
	e->rate = 16; /* 100 Gb/s */
	e->packet_life_time = 63;
	e->hop_limit = 255;
	e->tclass = 0xa0;
	e->flow_label = CMP_FLOW_LABEL_MAX;
	e->has_alt = i ? 1 : 0;
	e->alt_slid = i ? 0x12 : 0;
	e->alt_dlid = i ? 0x23 : 0;
	e->age_s = 10 + i;
	e->expires_s = i ? 0 : 1790;
	e->hits = 0x100000000ULL + i;
}

/* A valid message of the example's type, every field given a value. */
static void build(struct cmp_msg *m, struct example ex)
{
	if (ex.type == CMP_TYPE_EVENT) {
		build_event(m, ex.event);
		return;
	}
	cmp_msg_init(m, ex.type, 0x01020304);
	switch (ex.type) {
	case CMP_TYPE_HELLO:
		m->hello.min_version = CMP_VERSION_MIN;
		m->hello.max_version = CMP_VERSION_MAX;
		snprintf(m->hello.name, sizeof(m->hello.name), "test_cmp");
		break;
	case CMP_TYPE_HELLO_REPLY:
		m->hello_reply.version = CMP_VERSION;
		m->hello_reply.min_version = CMP_VERSION_MIN;
		m->hello_reply.max_version = CMP_VERSION_MAX;
		m->hello_reply.max_ids = 4096;
		m->hello_reply.max_events = 65536;
		m->hello_reply.max_msg = CMP_MSG_MAX;
		snprintf(m->hello_reply.daemon_version,
			 sizeof(m->hello_reply.daemon_version), "0.1.0");
		break;
	case CMP_TYPE_CREATE_ID:
		m->create_id.context = 0x1122334455667788ULL;
		m->create_id.qp_type = CMP_QP_TYPE_UC;
		break;
	case CMP_TYPE_CREATE_ID_REPLY:
		m->create_id_reply.id = 42;
		break;
	case CMP_TYPE_DESTROY_ID:
	case CMP_TYPE_NOTIFY_ESTABLISHED:
	case CMP_TYPE_QUERY_ID:
		m->destroy_id.id = 42;
		break;
	case CMP_TYPE_SET_CONTEXT:
		m->set_context.id = 42;
		m->set_context.context = 0x8877665544332211ULL;
		break;
	case CMP_TYPE_LISTEN:
		m->listen.id = 42;
		m->listen.backlog = 128;
		m->listen.service_id = 0x0000000001060000ULL;
		m->listen.service_mask = 0xffffffffffff0000ULL;
		m->listen.port.kind = CMP_SEL_PORT;
		m->listen.port.port_num = 1;
		snprintf(m->listen.port.dev_name,
			 sizeof(m->listen.port.dev_name), "mlx5_0");
		break;
	case CMP_TYPE_CONNECT:
		m->connect.id = 42;
		m->connect.local_qpn = 0x000abc;
		m->connect.start_psn = 0xfedcba;
		m->connect.responder_resources = 16;
		m->connect.initiator_depth = 16;
		m->connect.flow_control = 1;
		m->connect.retry_count = 7;
		m->connect.rnr_retry_count = 7;
		m->connect.srq = 1;
		m->connect.max_cm_retries = 15;
		m->connect.local_cm_response_timeout = 20;
		m->connect.remote_cm_response_timeout = 22;
		m->connect.service_id = 0x0000000001060000ULL | 18515;
		fill_gid_dst(&m->connect.dst);
		m->connect.src.kind = CMP_SEL_GID;
		fill_bytes(m->connect.src.gid, CM_GID_SIZE, 0x80);
		m->connect.path.flags = CMP_PATH_FLAG_MTU | CMP_PATH_FLAG_SL |
					CMP_PATH_FLAG_PKEY |
					CMP_PATH_FLAG_FLOW_LABEL;
		m->connect.path.mtu = CM_MTU_1024;
		m->connect.path.sl = 5;
		m->connect.path.pkey = 0x8001;
		m->connect.path.flow_label = 0x12345;
		/* 36 bytes of CMA header and some of the app's own. */
		FILL_DATA(m->connect.private_data_len, m->connect.private_data,
			  56, 0x30);
		break;
	case CMP_TYPE_ACCEPT:
		m->accept.id = 42;
		m->accept.local_qpn = 0x000def;
		m->accept.start_psn = 0x010203;
		m->accept.responder_resources = 8;
		m->accept.initiator_depth = 4;
		m->accept.target_ack_delay = 31;
		m->accept.failover = CMP_FAILOVER_REJECTED;
		m->accept.flow_control = 1;
		m->accept.rnr_retry_count = 3;
		m->accept.srq = 1;
		FILL_DATA(m->accept.private_data_len, m->accept.private_data,
			  CM_REP_PRIVATE_DATA_SIZE, 0x40);
		break;
	case CMP_TYPE_REJECT:
		m->reject.id = 42;
		m->reject.reason = CM_REJ_CONSUMER_DEFINED;
		FILL_DATA(m->reject.ari_len, m->reject.ari, CM_REJ_ARI_SIZE,
			  0x50);
		FILL_DATA(m->reject.private_data_len, m->reject.private_data,
			  17, 0x51);
		break;
	case CMP_TYPE_RTU:
		m->rtu.id = 42;
		FILL_DATA(m->rtu.private_data_len, m->rtu.private_data,
			  CM_RTU_PRIVATE_DATA_SIZE, 0x60);
		break;
	case CMP_TYPE_MRA:
		m->mra.id = 42;
		m->mra.service_timeout = 23;
		FILL_DATA(m->mra.private_data_len, m->mra.private_data,
			  CM_MRA_PRIVATE_DATA_SIZE, 0x70);
		break;
	case CMP_TYPE_DISCONNECT:
		m->disconnect.id = 42;
		FILL_DATA(m->disconnect.private_data_len,
			  m->disconnect.private_data, 1, 0x80);
		break;
	case CMP_TYPE_LAP:
		m->lap.id = 42;
		fill_path(&m->lap.alt_path, 0x90);
		m->lap.alt_path.mtu = 0;
		FILL_DATA(m->lap.private_data_len, m->lap.private_data,
			  CM_LAP_PRIVATE_DATA_SIZE, 0x90);
		break;
	case CMP_TYPE_APR:
		m->apr.id = 42;
		m->apr.ap_status = CM_APR_INVALID_SL;
		FILL_DATA(m->apr.info_len, m->apr.info, 2, 0xa0);
		FILL_DATA(m->apr.private_data_len, m->apr.private_data,
			  CM_APR_PRIVATE_DATA_SIZE, 0xa1);
		break;
	case CMP_TYPE_SIDR_REQ:
		m->sidr_req.id = 42;
		m->sidr_req.pkey = 0xffff;
		m->sidr_req.max_cm_retries = 3;
		m->sidr_req.cm_response_timeout = 18;
		m->sidr_req.service_id = 0x0000000002110000ULL | 4791;
		m->sidr_req.dst.family = CMP_AF_IPV4;
		m->sidr_req.dst.addr[0] = 192;
		m->sidr_req.dst.addr[1] = 168;
		m->sidr_req.dst.addr[2] = 7;
		m->sidr_req.dst.addr[3] = 9;
		FILL_DATA(m->sidr_req.private_data_len,
			  m->sidr_req.private_data,
			  CM_SIDR_REQ_PRIVATE_DATA_SIZE, 0xb0);
		break;
	case CMP_TYPE_RESOLVE_ROUTE:
		m->resolve_route.id = 42;
		m->resolve_route.service_id = 0x0000000001060000ULL | 7471;
		m->resolve_route.dst.family = CMP_AF_LID;
		m->resolve_route.dst.lid = 9;
		m->resolve_route.path.flags = CMP_PATH_FLAG_SL;
		m->resolve_route.path.sl = 3;
		break;
	case CMP_TYPE_SIDR_REP:
		m->sidr_rep.id = 42;
		m->sidr_rep.qpn = 0x0000ab;
		m->sidr_rep.qkey = 0x11111111;
		m->sidr_rep.status = CM_SIDR_SUCCESS;
		FILL_DATA(m->sidr_rep.private_data_len,
			  m->sidr_rep.private_data,
			  CM_SIDR_REP_PRIVATE_DATA_SIZE, 0xc0);
		break;
	case CMP_TYPE_ACK_EVENT:
		m->ack_event.id = 42;
		m->ack_event.seq = 9;
		break;
	case CMP_TYPE_QUERY_ID_REPLY:
		build_id_info(&m->query_id_reply.info);
		break;
	case CMP_TYPE_LIST:
		m->list.cursor = 0x5555;
		m->list.filter = CMP_LIST_FILTER_ALL;
		break;
	case CMP_TYPE_LIST_REPLY:
		m->list_reply.count = 3;
		m->list_reply.next_cursor = 0x6666;
		for (uint32_t i = 0; i < 3; i++) {
			struct cmp_list_entry *e = &m->list_reply.entries[i];

			e->id = 100 + i;
			e->state = i ? CMP_STATE_ESTABLISHED : CMP_STATE_LISTEN;
			e->lap_state = CMP_LAP_STATE_IDLE;
			e->qp_type = CMP_QP_TYPE_RC;
			e->service_id = 0x0000000001060000ULL | i;
			e->service_mask = i ? 0 : ~0ULL;
			e->local_comm_id = 0x1000 + i;
			e->remote_comm_id = i ? 0x2000 + i : 0;
			e->owner_pid = 4242;
			e->owner_uid = 1000;
			e->backlog = i ? 0 : 64;
			e->credits_in_use = i ? 0 : 2;
			e->held_reqs = i ? 0 : 5;
			/* The listener listens on port 1 of port index 2. */
			e->sel = i ? CMP_SEL_ANY : CMP_SEL_PORT;
			e->sel_port_index = i ? 0 : 2;
			e->sel_port_num = i ? 0 : 1;
			fill_bytes(e->remote_gid, CM_GID_SIZE, (uint8_t)i);
			if (i) {
				e->port_index = (uint16_t)(4 + i);
				e->port_num = 1;
				e->remote_lid = (uint16_t)(0x30 + i);
				e->grh = i == 2;
				e->local_qpn = 0xabc00 + i;
				e->remote_qpn = 0xdef00 + i;
				snprintf(e->owner_comm, CMP_COMM_SIZE, "proc%u",
					 i);
			}
		}
		break;
	case CMP_TYPE_COUNTERS:
		m->counters.cursor = 0;
		m->counters.scope = CMP_COUNTER_SCOPE_PORT;
		m->counters.port_num = 1;
		snprintf(m->counters.dev_name, sizeof(m->counters.dev_name),
			 "rxe0");
		break;
	case CMP_TYPE_COUNTERS_REPLY:
		m->counters_reply.count = 5;
		for (uint32_t i = 0; i < 5; i++) {
			struct cmp_counter *c = &m->counters_reply.entries[i];

			snprintf(c->name, sizeof(c->name), "counter_%u", i);
			c->value = 0x100000000ULL * i + 7;
		}
		break;
	case CMP_TYPE_PORTS:
		m->ports.cursor = 0x7777;
		break;
	case CMP_TYPE_CAPTURE:
		m->capture.op = CMP_CAPTURE_START;
		snprintf(m->capture.path, sizeof(m->capture.path),
			 "/var/tmp/cm.pcap");
		break;
	case CMP_TYPE_SESSION_REPLY:
		m->session_reply.resume_ms = 30000;
		for (unsigned int i = 0; i < CMP_TOKEN_SIZE; i++)
			m->session_reply.token[i] = (uint8_t)(0xa0 + i);
		break;
	case CMP_TYPE_RESUME:
		for (unsigned int i = 0; i < CMP_TOKEN_SIZE; i++)
			m->resume.token[i] = (uint8_t)(0xa0 + i);
		break;
	case CMP_TYPE_PORTS_REPLY:
		m->ports_reply.count = 2;
		m->ports_reply.next_cursor = 0x8888;
		for (uint32_t i = 0; i < 2; i++)
			build_port(&m->ports_reply.entries[i], i);
		break;
	case CMP_TYPE_PATHS:
		m->paths.flags = CMP_PATHS_FLUSH | CMP_PATHS_PORT;
		m->paths.port_index = 2;
		break;
	case CMP_TYPE_PATHS_REPLY:
		m->paths_reply.count = 2;
		m->paths_reply.next_cursor = 0x9999;
		m->paths_reply.flushed = 7;
		for (uint32_t i = 0; i < 2; i++)
			build_path_entry(&m->paths_reply.entries[i], i);
		break;
	case CMP_TYPE_DESTROY_ID_REPLY:
	case CMP_TYPE_SET_CONTEXT_REPLY:
	case CMP_TYPE_LISTEN_REPLY:
	case CMP_TYPE_CONNECT_REPLY:
	case CMP_TYPE_ACCEPT_REPLY:
	case CMP_TYPE_REJECT_REPLY:
	case CMP_TYPE_RTU_REPLY:
	case CMP_TYPE_NOTIFY_ESTABLISHED_REPLY:
	case CMP_TYPE_MRA_REPLY:
	case CMP_TYPE_DISCONNECT_REPLY:
	case CMP_TYPE_LAP_REPLY:
	case CMP_TYPE_APR_REPLY:
	case CMP_TYPE_SIDR_REQ_REPLY:
	case CMP_TYPE_RESOLVE_ROUTE_REPLY:
	case CMP_TYPE_SIDR_REP_REPLY:
	case CMP_TYPE_ACK_EVENT_REPLY:
		/* A plain reply names the id its request named. */
		m->reply.id = 42;
		break;
	case CMP_TYPE_EVENT:
	case CMP_TYPE_SESSION:
	case CMP_TYPE_CAPTURE_REPLY:
	case CMP_TYPE_RESUME_REPLY:
		/* CAPTURE and RESUME name no id: their replies are all
		 * zero. */
		break;
	}
}

/* Every request, every reply, and EVENT once per event type. */
static size_t all_examples(struct example *out)
{
	size_t n = 0;

	for (unsigned int t = CMP_TYPE_HELLO; t <= CMP_TYPE_REQUEST_MAX; t++) {
		enum cmp_type request = (enum cmp_type)t;

		out[n++] = (struct example){ .type = request };
		out[n++] = (struct example){ .type = cmp_reply_type(request) };
	}
	for (unsigned int e = CMP_EVENT_REQ_RECEIVED; e <= CMP_EVENT_MAX; e++)
		out[n++] = (struct example){ .type = CMP_TYPE_EVENT,
					     .event = (enum cmp_event_type)e };
	return n;
}

#define EXAMPLES_MAX (2 * CMP_TYPE_REQUEST_MAX + CMP_EVENT_MAX)

/* Encode m into buf; the message must be valid. */
static size_t encode_ok(const struct cmp_msg *m, uint8_t *buf)
{
	const char *why = "not called";
	ssize_t n;

	assert_int_equal(cmp_check(m, &why), 0);
	assert_null(why);
	n = cmp_encode(m, buf, CMP_MSG_MAX);
	assert_true(n >= (ssize_t)sizeof(struct cmp_hdr));
	assert_true(n <= CMP_MSG_MAX);
	return (size_t)n;
}

/* Decode from a heap buffer of exactly len bytes, for ASan. */
static int decode_exact(const uint8_t *bytes, size_t len, struct cmp_msg *m,
			const char **why)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	memcpy(copy, bytes, len);
	ret = cmp_decode(copy, len, m, why);
	free(copy);
	return ret;
}

static void test_header_golden(void **state)
{
	/* DESTROY_ID of id 7, seq 0x01020304, in little-endian host order. */
	/* clang-format off */
	static const uint8_t golden[] = {
		0x01, 0x00,             /* version 1 */
		0x03, 0x00,             /* type DESTROY_ID */
		0x18, 0x00, 0x00, 0x00, /* length 24 */
		0x04, 0x03, 0x02, 0x01, /* seq */
		0x00, 0x00, 0x00, 0x00, /* reserved */
		0x07, 0x00, 0x00, 0x00, /* id */
		0x00, 0x00, 0x00, 0x00, /* reserved */
	};
	/* clang-format on */
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m, d;
	const char *why;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip();
	cmp_msg_init(&m, CMP_TYPE_DESTROY_ID, 0x01020304);
	m.destroy_id.id = 7;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), sizeof(golden));
	assert_memory_equal(buf, golden, sizeof(golden));

	assert_int_equal(cmp_decode(golden, sizeof(golden), &d, &why), 0);
	assert_null(why);
	assert_int_equal(d.hdr.version, 1);
	assert_int_equal(d.hdr.type, CMP_TYPE_DESTROY_ID);
	assert_int_equal(d.hdr.length, 24);
	assert_int_equal(d.hdr.seq, 0x01020304);
	assert_int_equal(d.destroy_id.id, 7);
}

static void test_noreply_golden(void **state)
{
	/* ACK_EVENT of id 7, event seq 3, seq 5, NOREPLY: flags at byte 12. */
	/* clang-format off */
	static const uint8_t golden[] = {
		0x01, 0x00,             /* version 1 */
		0x11, 0x00,             /* type ACK_EVENT */
		0x18, 0x00, 0x00, 0x00, /* length 24 */
		0x05, 0x00, 0x00, 0x00, /* seq */
		0x01, 0x00,             /* flags: NOREPLY */
		0x00, 0x00,             /* reserved */
		0x07, 0x00, 0x00, 0x00, /* id */
		0x03, 0x00, 0x00, 0x00, /* event seq */
	};
	/* A failed ACCEPT's reply: status -EINVAL, and the id it named. */
	static const uint8_t failed[] = {
		0x01, 0x00, 0x87, 0x00, /* version 1, ACCEPT_REPLY */
		0x18, 0x00, 0x00, 0x00, /* length 24 */
		0x05, 0x00, 0x00, 0x00, /* seq */
		0x00, 0x00, 0x00, 0x00, /* no flags in a reply */
		0xea, 0xff, 0xff, 0xff, /* status -22 */
		0x07, 0x00, 0x00, 0x00, /* id */
	};
	/* clang-format on */
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m, d;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip();
	cmp_msg_init(&m, CMP_TYPE_ACK_EVENT, 5);
	m.hdr.flags = CMP_HDR_NOREPLY;
	m.ack_event.id = 7;
	m.ack_event.seq = 3;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), sizeof(golden));
	assert_memory_equal(buf, golden, sizeof(golden));
	assert_int_equal(cmp_decode(golden, sizeof(golden), &d, NULL), 0);
	assert_int_equal(d.hdr.flags, CMP_HDR_NOREPLY);
	assert_int_equal(d.ack_event.id, 7);

	cmp_msg_init(&m, CMP_TYPE_ACCEPT_REPLY, 5);
	m.reply.status = -EINVAL;
	m.reply.id = 7;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), sizeof(failed));
	assert_memory_equal(buf, failed, sizeof(failed));
	assert_int_equal(cmp_decode(failed, sizeof(failed), &d, NULL), 0);
	assert_int_equal(d.reply.status, -EINVAL);
	assert_int_equal(d.reply.id, 7);
}

static void test_event_golden(void **state)
{
	/* TIMEWAIT_EXIT for id 9, event seq 2, context 0x1122334455667788. */
	/* clang-format off */
	static const uint8_t golden[] = {
		0x01, 0x00,             /* version 1 */
		0x40, 0x00,             /* type EVENT */
		0x28, 0x00, 0x00, 0x00, /* length 40 */
		0x02, 0x00, 0x00, 0x00, /* event seq 2 */
		0x00, 0x00, 0x00, 0x00, /* reserved */
		0x09, 0x00, 0x00, 0x00, /* id */
		0x0a, 0x00,             /* TIMEWAIT_EXIT */
		0x00, 0x00,             /* reserved */
		0x00, 0x00, 0x00, 0x00, /* status 0 */
		0x00, 0x00, 0x00, 0x00, /* reserved */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* context */
	};
	/* clang-format on */
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m, d;
	const char *why;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip();
	cmp_msg_init(&m, CMP_TYPE_EVENT, 2);
	m.event.id = 9;
	m.event.type = CMP_EVENT_TIMEWAIT_EXIT;
	m.event.context = 0x1122334455667788ULL;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), sizeof(golden));
	assert_memory_equal(buf, golden, sizeof(golden));

	assert_int_equal(cmp_decode(golden, sizeof(golden), &d, &why), 0);
	assert_int_equal(d.hdr.seq, 2);
	assert_int_equal(d.event.id, 9);
	assert_int_equal(d.event.type, CMP_EVENT_TIMEWAIT_EXIT);
	assert_int_equal(d.event.status, 0);
	assert_true(d.event.context == 0x1122334455667788ULL);
}

static void test_hello_golden(void **state)
{
	/* HELLO, frozen for all versions: range 1..3, name "app". */
	/* clang-format off */
	static const uint8_t golden[] = {
		0x01, 0x00, 0x01, 0x00, 0x38, 0x00, 0x00, 0x00, /* HELLO, 56 */
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq 1 */
		0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1..3 */
		'a',  'p',  'p',  0,    0,    0,    0,    0,    /* name */
		0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0,
		0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0,
	};
	/* clang-format on */
	struct cmp_msg d;
	const char *why;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip();
	assert_int_equal(cmp_decode(golden, sizeof(golden), &d, &why), 0);
	assert_int_equal(d.hdr.type, CMP_TYPE_HELLO);
	assert_int_equal(d.hello.min_version, 1);
	assert_int_equal(d.hello.max_version, 3);
	assert_string_equal(d.hello.name, "app");
}

static void test_paths_golden(void **state)
{
	/* PATHS flushing port 2, seq 5; then where a reply's fields lie. */
	/* clang-format off */
	static const uint8_t golden[] = {
		0x01, 0x00,             /* version 1 */
		0x1a, 0x00,             /* type PATHS */
		0x20, 0x00, 0x00, 0x00, /* length 32 */
		0x05, 0x00, 0x00, 0x00, /* seq */
		0x00, 0x00, 0x00, 0x00, /* reserved */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* cursor */
		0x03, 0x00, 0x00, 0x00, /* flags FLUSH | PORT */
		0x02, 0x00,             /* port_index */
		0x00, 0x00,             /* reserved */
	};
	/* clang-format on */
	uint8_t buf[CMP_MSG_MAX];
	const uint8_t *e = buf + 40; /* header, the reply's fixed part */
	struct cmp_msg m, d;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip();
	cmp_msg_init(&m, CMP_TYPE_PATHS, 5);
	m.paths.flags = CMP_PATHS_FLUSH | CMP_PATHS_PORT;
	m.paths.port_index = 2;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), sizeof(golden));
	assert_memory_equal(buf, golden, sizeof(golden));
	assert_int_equal(cmp_decode(golden, sizeof(golden), &d, NULL), 0);
	assert_int_equal(d.paths.port_index, 2);

	cmp_msg_init(&m, CMP_TYPE_PATHS_REPLY, 5);
	m.paths_reply.count = 1;
	m.paths_reply.flushed = 9;
	build_path_entry(&m.paths_reply.entries[0], 1);
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), 16 + 24 + 160);
	assert_int_equal(buf[2], 0x9a); /* PATHS_REPLY */
	assert_int_equal(buf[20], 1); /* count */
	assert_int_equal(buf[32], 9); /* flushed */
	assert_memory_equal(e, "mlx5_1\0", 7); /* dev_name */
	assert_int_equal(e[64], 0x60); /* asked_dgid */
	assert_int_equal(e[80], 0x70); /* sgid */
	assert_int_equal(e[112], 1); /* hits, low byte first */
	assert_int_equal(e[116], 1);
	assert_int_equal(e[120], 11); /* age_s */
	assert_int_equal(e[132], 4); /* port_index */
	assert_int_equal(e[138], 0x22); /* dlid */
	assert_int_equal(e[144], 0x23); /* alt_dlid */
	assert_int_equal(e[146], 1); /* port_num */
	assert_int_equal(e[147], 15); /* sl */
	assert_int_equal(e[148], CM_MTU_4096);
	assert_int_equal(e[149], 16); /* rate */
	assert_int_equal(e[153], 1); /* has_alt */
}

static void test_ports_golden(void **state)
{
	/* PORTS from cursor 0x1122, seq 3; then where a reply's fields lie. */
	/* clang-format off */
	static const uint8_t golden[] = {
		0x01, 0x00,             /* version 1 */
		0x15, 0x00,             /* type PORTS */
		0x18, 0x00, 0x00, 0x00, /* length 24 */
		0x03, 0x00, 0x00, 0x00, /* seq */
		0x00, 0x00, 0x00, 0x00, /* reserved */
		0x22, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* cursor */
	};
	/* clang-format on */
	uint8_t buf[CMP_MSG_MAX];
	const uint8_t *e = buf + 32; /* header, status, count, next_cursor */
	struct cmp_msg m, d;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip();
	cmp_msg_init(&m, CMP_TYPE_PORTS, 3);
	m.ports.cursor = 0x1122;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), sizeof(golden));
	assert_memory_equal(buf, golden, sizeof(golden));
	assert_int_equal(cmp_decode(golden, sizeof(golden), &d, NULL), 0);
	assert_true(d.ports.cursor == 0x1122);

	cmp_msg_init(&m, CMP_TYPE_PORTS_REPLY, 3);
	m.ports_reply.count = 1;
	build_port(&m.ports_reply.entries[0], 1);
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), 16 + 16 + 176);
	assert_int_equal(buf[2], 0x95); /* PORTS_REPLY */
	assert_int_equal(buf[20], 1); /* count */
	assert_memory_equal(e, "rxe0\0", 5); /* dev_name */
	assert_int_equal(e[64], 0xc4); /* node_guid, low byte first */
	assert_int_equal(e[72], 0xc5); /* port_guid */
	assert_int_equal(e[80], 8); /* port_index */
	assert_int_equal(e[86], 9); /* n_gids */
	assert_int_equal(e[88], 2); /* port_num */
	assert_int_equal(e[89], 1); /* up */
	assert_int_equal(e[90], CMP_PORT_STATE_ACTIVE);
	assert_int_equal(e[91], CMP_LINK_LAYER_ROCE);
	assert_int_equal(e[92], CM_MTU_1024);
	assert_int_equal(e[96], 0); /* gids[0].index */
	assert_int_equal(e[98], CMP_GID_TYPE_ROCE_V1); /* gids[0].type */
	assert_int_equal(e[100], 0x40); /* gids[0].gid */
	assert_int_equal(e[96 + 3 * 20], 6); /* gids[3].index */
	assert_int_equal(e[96 + 3 * 20 + 2], CMP_GID_TYPE_ROCE_V2);
	assert_int_equal(e[175], 0x43 + 15); /* last byte of gids[3].gid */
}

/* Field checks beyond the whole-struct comparison, for the big bodies. */
static void assert_fields(const struct cmp_msg *a, const struct cmp_msg *b)
{
	assert_int_equal(a->hdr.version, b->hdr.version);
	assert_int_equal(a->hdr.type, b->hdr.type);
	assert_int_equal(a->hdr.seq, b->hdr.seq);
	/* The memcmp in the caller covers the other types. */
	if (a->hdr.type == CMP_TYPE_CONNECT) {
		assert_int_equal(a->connect.id, b->connect.id);
		assert_int_equal(a->connect.local_qpn, b->connect.local_qpn);
		assert_int_equal(a->connect.start_psn, b->connect.start_psn);
		assert_int_equal(a->connect.retry_count,
				 b->connect.retry_count);
		assert_int_equal(a->connect.remote_cm_response_timeout,
				 b->connect.remote_cm_response_timeout);
		assert_true(a->connect.service_id == b->connect.service_id);
		assert_int_equal(a->connect.dst.family, b->connect.dst.family);
		assert_memory_equal(a->connect.dst.addr, b->connect.dst.addr,
				    16);
		assert_memory_equal(a->connect.src.gid, b->connect.src.gid, 16);
		assert_int_equal(a->connect.path.flags, b->connect.path.flags);
		assert_int_equal(a->connect.path.pkey, b->connect.path.pkey);
		assert_int_equal(a->connect.private_data_len, 56);
		assert_memory_equal(a->connect.private_data,
				    b->connect.private_data,
				    CM_REQ_PRIVATE_DATA_SIZE);
	} else if (a->hdr.type == CMP_TYPE_QUERY_ID_REPLY) {
		assert_int_equal(a->query_id_reply.info.state,
				 b->query_id_reply.info.state);
		assert_int_equal(a->query_id_reply.info.lap_state,
				 b->query_id_reply.info.lap_state);
		assert_int_equal(a->query_id_reply.info.remote_psn,
				 b->query_id_reply.info.remote_psn);
		assert_string_equal(a->query_id_reply.info.path.dev_name,
				    b->query_id_reply.info.path.dev_name);
		assert_memory_equal(a->query_id_reply.info.alt_path.remote_gid,
				    b->query_id_reply.info.alt_path.remote_gid,
				    CM_GID_SIZE);
	} else if (a->hdr.type == CMP_TYPE_LIST_REPLY) {
		assert_int_equal(a->list_reply.count, 3);
		assert_int_equal(b->list_reply.entries[2].id, 102);
		assert_int_equal(b->list_reply.entries[0].backlog, 64);
		assert_int_equal(b->list_reply.entries[0].held_reqs, 5);
		assert_int_equal(b->list_reply.entries[0].sel, CMP_SEL_PORT);
		assert_int_equal(b->list_reply.entries[0].sel_port_index, 2);
		assert_int_equal(b->list_reply.entries[0].sel_port_num, 1);
		assert_int_equal(b->list_reply.entries[1].port_index, 5);
		assert_int_equal(b->list_reply.entries[1].port_num, 1);
		assert_int_equal(b->list_reply.entries[1].remote_lid, 0x31);
		assert_int_equal(b->list_reply.entries[1].grh, 0);
		assert_int_equal(b->list_reply.entries[2].grh, 1);
		assert_int_equal(b->list_reply.entries[2].local_qpn, 0xabc02);
		assert_int_equal(b->list_reply.entries[2].remote_qpn, 0xdef02);
		assert_string_equal(b->list_reply.entries[2].owner_comm,
				    "proc2");
		assert_true(b->list_reply.next_cursor == 0x6666);
	} else if (a->hdr.type == CMP_TYPE_PATHS_REPLY) {
		const struct cmp_path_entry *e = &b->paths_reply.entries[1];

		assert_int_equal(b->paths_reply.count, 2);
		assert_int_equal(b->paths_reply.flushed, 7);
		assert_true(b->paths_reply.next_cursor == 0x9999);
		assert_string_equal(e->dev_name, "mlx5_1");
		assert_int_equal(e->dlid, 0x22);
		assert_int_equal(e->alt_dlid, 0x23);
		assert_int_equal(e->has_alt, 1);
		assert_true(e->hits == 0x100000001ULL);
		assert_int_equal(b->paths_reply.entries[0].asked_dlid, 0x21);
		assert_int_equal(b->paths_reply.entries[0].expires_s, 1790);
	} else if (a->hdr.type == CMP_TYPE_PORTS_REPLY) {
		const struct cmp_port_entry *e = &b->ports_reply.entries[1];

		assert_int_equal(b->ports_reply.count, 2);
		assert_true(b->ports_reply.next_cursor == 0x8888);
		assert_string_equal(b->ports_reply.entries[0].dev_name,
				    "mlx5_0");
		assert_int_equal(b->ports_reply.entries[0].lid, 0x12);
		assert_string_equal(e->dev_name, "rxe0");
		assert_int_equal(e->port_num, 2);
		assert_int_equal(e->port_index, 8);
		assert_int_equal(e->link_layer, CMP_LINK_LAYER_ROCE);
		assert_int_equal(e->n_gids, 9);
		assert_int_equal(e->gids[3].index, 6);
		assert_int_equal(e->gids[3].type, CMP_GID_TYPE_ROCE_V2);
		assert_int_equal(e->gids[3].gid[0], 0x43);
		assert_true(e->port_guid == 0x0002c90300a1b2c5ULL);
	} else if (a->hdr.type == CMP_TYPE_COUNTERS_REPLY) {
		assert_int_equal(b->counters_reply.count, 5);
		assert_string_equal(b->counters_reply.entries[4].name,
				    "counter_4");
		assert_true(b->counters_reply.entries[4].value ==
			    0x400000007ULL);
	} else if (a->hdr.type == CMP_TYPE_EVENT) {
		assert_int_equal(a->event.id, b->event.id);
		assert_int_equal(a->event.type, b->event.type);
		assert_int_equal(a->event.status, b->event.status);
		assert_true(a->event.context == b->event.context);
		if (a->event.type == CMP_EVENT_REQ_RECEIVED) {
			assert_int_equal(b->event.req_received.listen_id, 5);
			assert_int_equal(b->event.req_received.remote_qpn,
					 0x123456);
			assert_int_equal(b->event.req_received.path.mtu,
					 CM_MTU_4096);
			assert_int_equal(b->event.req_received.private_data_len,
					 CM_REQ_PRIVATE_DATA_SIZE);
		}
	}
}

static void test_roundtrip_all(void **state)
{
	struct example ex[EXAMPLES_MAX];
	size_t count = all_examples(ex);
	uint8_t buf[CMP_MSG_MAX];

	(void)state;
	assert_int_equal(count, EXAMPLES_MAX);
	for (size_t i = 0; i < count; i++) {
		struct cmp_msg m, d;
		const char *why = "not called";
		size_t n;

		build(&m, ex[i]);
		n = encode_ok(&m, buf);
		/* Garbage first: decode must overwrite every byte. */
		memset(&d, 0xa5, sizeof(d));
		assert_int_equal(decode_exact(buf, n, &d, &why), 0);
		assert_null(why);
		assert_int_equal(d.hdr.length, n);
		assert_fields(&m, &d);
		/* No struct has implicit padding (cmp.h pins every size), so
		 * equal bytes are equal fields, all of them: the whole
		 * extent, zero beyond the message. */
		m.hdr.length = (uint32_t)n;
		assert_true(cmp_msg_extent(m.hdr.type) >= n);
		assert_memory_equal(&m, &d, cmp_msg_extent(m.hdr.type));
	}
}

/* A failed reply carries only its status, whatever its type. */
static void test_roundtrip_failed_replies(void **state)
{
	uint8_t buf[CMP_MSG_MAX];

	(void)state;
	for (unsigned int t = CMP_TYPE_HELLO; t <= CMP_TYPE_REQUEST_MAX; t++) {
		enum cmp_type type = cmp_reply_type((enum cmp_type)t);
		struct cmp_msg m, d;
		ssize_t n;

		cmp_msg_init(&m, type, t);
		m.reply.status = -ENOENT;
		/* A plain reply names the request's id even on failure. */
		if (cmp_noreply_allowed(t))
			m.reply.id = 1000 + t;
		if (type == CMP_TYPE_HELLO_REPLY) {
			m.reply.status = -EPROTONOSUPPORT;
			m.hello_reply.min_version = 2;
			m.hello_reply.max_version = 4;
		}
		n = cmp_encode(&m, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);
		assert_int_equal(d.reply.status, m.reply.status);
		assert_int_equal(d.hdr.seq, t);
		if (cmp_noreply_allowed(t))
			assert_int_equal(d.reply.id, 1000 + t);
		if (type == CMP_TYPE_HELLO_REPLY)
			continue;
		/* With its reason: one more datagram of the same reply. */
		assert_string_equal(cmp_reply_why(&d), "");
		cmp_reply_set_why(&m, "RTU not allowed\tin state IDLE");
		n = cmp_encode(&m, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);
		assert_int_equal(d.reply.status, -ENOENT);
		assert_string_equal(cmp_reply_why(&d),
				    "RTU not allowed?in state IDLE");
	}
}

/* The reason a failed reply carries: its bounds and its bytes. */
static void test_reply_why(void **state)
{
	uint8_t buf[CMP_MSG_MAX];
	char text[CMP_WHY_MAX + 10];
	struct cmp_msg m, d;
	const char *why;
	ssize_t n, n0;

	(void)state;
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	cmp_msg_init(&m, CMP_TYPE_LIST_REPLY, 7);
	m.reply.status = -EPERM;
	n0 = cmp_encode(&m, buf, sizeof(buf));
	cmp_reply_set_why(&m, text); /* cut to CMP_WHY_MAX - 1 */
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, n0 + CMP_WHY_MAX);
	assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);
	assert_int_equal(strlen(cmp_reply_why(&d)), CMP_WHY_MAX - 1);
	/* A success has none, and setting one changes nothing. */
	cmp_msg_init(&m, CMP_TYPE_CONNECT_REPLY, 7);
	n0 = cmp_encode(&m, buf, sizeof(buf));
	cmp_reply_set_why(&m, "no");
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), n0);
	assert_string_equal(cmp_reply_why(&m), "");
	/* On the wire: a byte that is not printable, and no NUL. */
	cmp_msg_init(&m, CMP_TYPE_CONNECT_REPLY, 7);
	m.reply.status = -EINVAL;
	cmp_reply_set_why(&m, "abc");
	n = cmp_encode(&m, buf, sizeof(buf));
	buf[n - 2] = 0x7f;
	assert_int_equal(decode_exact(buf, (size_t)n, &d, &why), -EBADMSG);
	assert_string_equal(why, "reply reason not printable");
	buf[n - 2] = 'c';
	buf[n - 1] = 'd';
	assert_int_equal(decode_exact(buf, (size_t)n, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");
	/* An empty reason is sent as none: a lone NUL is not a reason. */
	buf[n - 4] = 0;
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n - 3;
	assert_int_equal(decode_exact(buf, (size_t)n - 3, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");
}

/* Encode, decode, compare: for the variants below. */
static void roundtrip(struct cmp_msg *m)
{
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg d;
	size_t n = encode_ok(m, buf);

	assert_int_equal(decode_exact(buf, n, &d, NULL), 0);
	m->hdr.length = (uint32_t)n;
	assert_memory_equal(m, &d, cmp_msg_extent(m->hdr.type));
}

/* The other arms of the tagged unions and optional members. */
static void test_roundtrip_variants(void **state)
{
	struct cmp_msg m;

	(void)state;
	build(&m, (struct example){ .type = CMP_TYPE_CONNECT });
	memset(&m.connect.dst, 0, sizeof(m.connect.dst));
	m.connect.dst.family = CMP_AF_LID;
	m.connect.dst.lid = CMP_LID_UNICAST_MAX;
	memset(&m.connect.src, 0, sizeof(m.connect.src));
	memset(&m.connect.path, 0, sizeof(m.connect.path));
	roundtrip(&m);
	assert_int_equal(m.connect.src.kind, CMP_SEL_ANY);

	m.connect.dst.family = CMP_AF_IPV6;
	m.connect.dst.lid = 0;
	m.connect.dst.addr[15] = 1; /* ::1 */
	m.connect.path.flags = CMP_PATH_FLAG_ALL;
	m.connect.path.mtu = CM_MTU_256;
	m.connect.path.pkey = 0x7fff;
	m.connect.path.sl = CMP_SL_MAX;
	m.connect.path.traffic_class = 0xff;
	m.connect.path.hop_limit = 0xff;
	m.connect.path.flow_label = CMP_FLOW_LABEL_MAX;
	m.connect.path.packet_rate = CMP_RATE_MAX;
	m.connect.path.local_ack_timeout = CMP_TIMEOUT_MAX;
	m.connect.private_data_len = 0;
	memset(m.connect.private_data, 0, sizeof(m.connect.private_data));
	roundtrip(&m);

	build(&m, (struct example){ .type = CMP_TYPE_LISTEN });
	m.listen.port.port_num = 0; /* every port of the device */
	roundtrip(&m);
	memset(&m.listen.port, 0, sizeof(m.listen.port));
	m.listen.service_id = 0;
	m.listen.service_mask = 0;
	roundtrip(&m);

	build(&m, (struct example){ .type = CMP_TYPE_SIDR_REQ });
	m.sidr_req.pkey = 0;
	m.sidr_req.src.kind = CMP_SEL_PORT;
	snprintf(m.sidr_req.src.dev_name, CMP_DEV_NAME_SIZE, "rxe0");
	roundtrip(&m);

	build(&m, (struct example){ .type = CMP_TYPE_COUNTERS });
	m.counters.scope = CMP_COUNTER_SCOPE_GLOBAL;
	m.counters.port_num = 0;
	memset(m.counters.dev_name, 0, CMP_DEV_NAME_SIZE);
	roundtrip(&m);
	m.counters.scope = CMP_COUNTER_SCOPE_CLIENT;
	roundtrip(&m);

	build(&m, (struct example){ .type = CMP_TYPE_QUERY_ID_REPLY });
	m.query_id_reply.info.has_alt_path = 0;
	memset(&m.query_id_reply.info.alt_path, 0,
	       sizeof(m.query_id_reply.info.alt_path));
	roundtrip(&m);

	/* A LIST_REPLY that ends the walk with nothing left. */
	cmp_msg_init(&m, CMP_TYPE_LIST_REPLY, 8);
	roundtrip(&m);
	assert_int_equal(m.hdr.length, 16 + 16);

	/* No ports (the daemon lost its transport), and a port with no GIDs
	 * that is down, gone, and of unknown MTU. */
	cmp_msg_init(&m, CMP_TYPE_PORTS_REPLY, 9);
	roundtrip(&m);
	assert_int_equal(m.hdr.length, 16 + 16);
	build(&m, (struct example){ .type = CMP_TYPE_PORTS_REPLY });
	memset(m.ports_reply.entries[0].gids, 0,
	       sizeof(m.ports_reply.entries[0].gids));
	m.ports_reply.entries[0].n_gids = 0;
	m.ports_reply.entries[0].up = 0;
	m.ports_reply.entries[0].state = CMP_PORT_STATE_DOWN;
	m.ports_reply.entries[0].active_mtu = 0;
	roundtrip(&m);
	/* Exactly CMP_PORT_GIDS GIDs: every slot used. */
	m.ports_reply.entries[1].n_gids = CMP_PORT_GIDS;
	roundtrip(&m);
}

/*
 * Pipelining (cmp.h): CONNECT that creates its id, with its QP type and
 * context; NOREPLY on every request that may carry it; plain replies that
 * name an id, the new one for a creating CONNECT.
 */
static void test_roundtrip_pipelining(void **state)
{
	unsigned int allowed = 0;
	struct cmp_msg m;

	(void)state;
	build(&m, (struct example){ .type = CMP_TYPE_CONNECT });
	m.connect.id = CMP_ID_NONE;
	m.connect.qp_type = CMP_QP_TYPE_RC;
	m.connect.context = 0xfedcba9876543210ULL;
	roundtrip(&m);
	assert_true(m.connect.context == 0xfedcba9876543210ULL);
	m.connect.qp_type = CMP_QP_TYPE_UC;
	m.connect.context = 0;
	roundtrip(&m);

	for (unsigned int t = CMP_TYPE_HELLO; t <= CMP_TYPE_REQUEST_MAX; t++) {
		if (!cmp_noreply_allowed(t))
			continue;
		build(&m, (struct example){ .type = (enum cmp_type)t });
		m.hdr.flags = CMP_HDR_NOREPLY;
		roundtrip(&m);
		assert_int_equal(m.hdr.flags, CMP_HDR_NOREPLY);
		allowed++;
	}
	/* Every request whose reply is plain and that names an id. */
	assert_int_equal(allowed, 16);
	assert_false(cmp_noreply_allowed(CMP_TYPE_HELLO));
	assert_false(cmp_noreply_allowed(CMP_TYPE_CREATE_ID));
	assert_false(cmp_noreply_allowed(CMP_TYPE_QUERY_ID));
	assert_false(cmp_noreply_allowed(CMP_TYPE_CAPTURE));
	assert_false(cmp_noreply_allowed(CMP_TYPE_CONNECT_REPLY));

	/* The reply of a creating CONNECT names the new id. */
	cmp_msg_init(&m, CMP_TYPE_CONNECT_REPLY, 3);
	m.reply.id = 0xfffffffe;
	roundtrip(&m);
	/* A failed one names none, or the id the request named. */
	m.reply.status = -EHOSTUNREACH;
	m.reply.id = CMP_ID_NONE;
	roundtrip(&m);
	m.reply.id = 42;
	roundtrip(&m);
}

/* The largest batches fit in CMP_MSG_MAX exactly as promised. */
static void test_full_batches(void **state)
{
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m, d;
	ssize_t n;

	(void)state;
	cmp_msg_init(&m, CMP_TYPE_LIST_REPLY, 1);
	m.list_reply.count = CMP_LIST_BATCH_MAX;
	for (unsigned int i = 0; i < CMP_LIST_BATCH_MAX; i++) {
		m.list_reply.entries[i].id = i + 1;
		m.list_reply.entries[i].qp_type = CMP_QP_TYPE_UD;
	}
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, 16 + 16 + 104 * CMP_LIST_BATCH_MAX);
	assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);
	assert_int_equal(d.list_reply.entries[CMP_LIST_BATCH_MAX - 1].id,
			 CMP_LIST_BATCH_MAX);

	cmp_msg_init(&m, CMP_TYPE_COUNTERS_REPLY, 1);
	m.counters_reply.count = CMP_COUNTERS_BATCH_MAX;
	for (unsigned int i = 0; i < CMP_COUNTERS_BATCH_MAX; i++)
		snprintf(m.counters_reply.entries[i].name,
			 CMP_COUNTER_NAME_SIZE, "c%u", i);
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, 16 + 16 + 40 * CMP_COUNTERS_BATCH_MAX);
	assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);

	m.counters_reply.count = CMP_COUNTERS_BATCH_MAX + 1;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), -EINVAL);

	cmp_msg_init(&m, CMP_TYPE_PORTS_REPLY, 1);
	m.ports_reply.count = CMP_PORTS_BATCH_MAX;
	for (unsigned int i = 0; i < CMP_PORTS_BATCH_MAX; i++)
		build_port(&m.ports_reply.entries[i], i & 1);
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, 16 + 16 + 176 * CMP_PORTS_BATCH_MAX);
	assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);
	assert_string_equal(
		d.ports_reply.entries[CMP_PORTS_BATCH_MAX - 1].dev_name,
		"mlx5_0");

	m.ports_reply.count = CMP_PORTS_BATCH_MAX + 1;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), -EINVAL);

	cmp_msg_init(&m, CMP_TYPE_PATHS_REPLY, 1);
	m.paths_reply.count = CMP_PATHS_BATCH_MAX;
	for (unsigned int i = 0; i < CMP_PATHS_BATCH_MAX; i++)
		build_path_entry(&m.paths_reply.entries[i], i & 1);
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, 16 + 24 + 160 * CMP_PATHS_BATCH_MAX);
	assert_true(n + 160 > CMP_MSG_MAX); /* one more would not fit */
	assert_int_equal(cmp_decode(buf, (size_t)n, &d, NULL), 0);
	assert_string_equal(
		d.paths_reply.entries[CMP_PATHS_BATCH_MAX - 1].dev_name, "ib0");

	m.paths_reply.count = CMP_PATHS_BATCH_MAX + 1;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), -EINVAL);
}

/*
 * The malformed corpus. BAD() takes a valid example, changes one thing in
 * the struct (which is the wire layout), sends the bytes without the
 * encoder's checks, and expects the decoder to refuse them with err and
 * exactly the given reason. The encoder must refuse the same struct, since
 * the content checks are shared.
 */
static void expect_bad(const struct cmp_msg *m, size_t len, int err,
		       const char *text, int line)
{
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg d;
	const char *why = NULL;
	int ret;

	memcpy(buf, m, len);
	ret = decode_exact(buf, len, &d, &why);
	if (ret != -err || !why || strcmp(why, text) != 0)
		fail_msg("line %d: got %d \"%s\", want %d \"%s\"", line, ret,
			 why ? why : "(null)", -err, text);
	assert_int_equal(cmp_encode(m, buf, sizeof(buf)), -EINVAL);
}

#define BAD_EX(ex, stmt, err, text)                                            \
	do {                                                                   \
		struct cmp_msg bad_m;                                          \
		uint8_t bad_buf[CMP_MSG_MAX];                                  \
		size_t bad_n;                                                  \
		build(&bad_m, (ex));                                           \
		bad_n = encode_ok(&bad_m, bad_buf);                            \
		bad_m.hdr.length = (uint32_t)bad_n;                            \
		{                                                              \
			struct cmp_msg *m = &bad_m;                            \
			stmt;                                                  \
		}                                                              \
		expect_bad(&bad_m, bad_n, (err), (text), __LINE__);            \
	} while (0)
#define BAD(t, stmt, text)                                                     \
	BAD_EX(((struct example){ .type = (t) }), stmt, EBADMSG, text)
#define BAD_EV(ev, stmt, text)                                                 \
	BAD_EX(((struct example){ .type = CMP_TYPE_EVENT, .event = (ev) }),    \
	       stmt, EBADMSG, text)

/* Checks on the datagram and the header, with the error each returns. */
static void test_malformed_framing(void **state)
{
	static uint8_t big[CMP_MSG_MAX + 1];
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m, d;
	const char *why;
	size_t n;

	(void)state;
	assert_int_equal(cmp_decode(big, sizeof(big), &d, &why), -EMSGSIZE);
	assert_string_equal(why, "datagram larger than CMP_MSG_MAX");

	assert_int_equal(decode_exact(big, 15, &d, &why), -EBADMSG);
	assert_string_equal(why, "datagram shorter than the header");
	assert_int_equal(decode_exact(big, 0, &d, &why), -EBADMSG);
	assert_string_equal(why, "datagram shorter than the header");

	/* The header's length must be the datagram's. */
	build(&m, (struct example){ .type = CMP_TYPE_CONNECT });
	n = encode_ok(&m, buf);
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n + 8;
	assert_int_equal(decode_exact(buf, n, &d, &why), -EBADMSG);
	assert_string_equal(why,
			    "header length differs from the datagram length");

	/* A body that is too long or too short for its fixed-size type. */
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n + 8;
	memset(buf + n, 0, 8);
	assert_int_equal(decode_exact(buf, n + 8, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n - 4;
	assert_int_equal(decode_exact(buf, n - 4, &d, &why), -EBADMSG);
	assert_string_equal(why, "body shorter than its type needs");

	/* A LIST_REPLY whose length does not match its count. */
	build(&m, (struct example){ .type = CMP_TYPE_LIST_REPLY });
	n = encode_ok(&m, buf);
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n - 72;
	assert_int_equal(decode_exact(buf, n - 72, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");

	/* A PORTS_REPLY one entry short of its count, and one byte long. */
	build(&m, (struct example){ .type = CMP_TYPE_PORTS_REPLY });
	n = encode_ok(&m, buf);
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n - 176;
	assert_int_equal(decode_exact(buf, n - 176, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n + 1;
	buf[n] = 0;
	assert_int_equal(decode_exact(buf, n + 1, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");

	/* A PORTS request with a short cursor. */
	build(&m, (struct example){ .type = CMP_TYPE_PORTS });
	n = encode_ok(&m, buf);
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n - 4;
	assert_int_equal(decode_exact(buf, n - 4, &d, &why), -EBADMSG);
	assert_string_equal(why, "body shorter than its type needs");

	/* An EVENT whose length is not its event type's. */
	build(&m, (struct example){ .type = CMP_TYPE_EVENT,
				    .event = CMP_EVENT_MRA_RECEIVED });
	n = encode_ok(&m, buf);
	((struct cmp_hdr *)(void *)buf)->length = (uint32_t)n - 8;
	assert_int_equal(decode_exact(buf, n - 8, &d, &why), -EBADMSG);
	assert_string_equal(why, "body length wrong for its type");
	((struct cmp_hdr *)(void *)buf)->length = 16 + 20;
	assert_int_equal(decode_exact(buf, 16 + 20, &d, &why), -EBADMSG);
	assert_string_equal(why, "body shorter than its type needs");
}

/* Version, type and reserved header bytes. */
static void test_malformed_header(void **state)
{
	(void)state;
	BAD_EX(((struct example){ .type = CMP_TYPE_CONNECT }),
	       m->hdr.version = CMP_VERSION_MAX + 1, EPROTO,
	       "protocol version not supported");
	BAD_EX(((struct example){ .type = CMP_TYPE_CONNECT }),
	       m->hdr.version = 0, EPROTO, "protocol version not supported");
	BAD_EX(((struct example){ .type = CMP_TYPE_HELLO }), m->hdr.version = 2,
	       EPROTO, "HELLO not sent with CMP_VERSION_HELLO");
	BAD_EX(((struct example){ .type = CMP_TYPE_HELLO_REPLY }),
	       m->hdr.version = 0, EPROTO,
	       "HELLO not sent with CMP_VERSION_HELLO");
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.type = 0, "message type unknown");
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.type = CMP_TYPE_REQUEST_MAX + 1,
	    "message type unknown");
	BAD(CMP_TYPE_DESTROY_ID,
	    m->hdr.type = CMP_REPLY_BIT | (CMP_TYPE_REQUEST_MAX + 1),
	    "message type unknown");
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.type = 0x7fff, "message type unknown");
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.rsvd0 = 1,
	    "header reserved bytes not zero");
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.rsvd0 = 0x8000,
	    "header reserved bytes not zero");

	/* Header flags: known bits only, NOREPLY and ACK only where
	 * allowed. */
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.flags = 0x0004, "header flags unknown");
	BAD(CMP_TYPE_DESTROY_ID, m->hdr.flags = CMP_HDR_NOREPLY | 0x8000,
	    "header flags unknown");
	BAD(CMP_TYPE_CREATE_ID_REPLY, m->hdr.flags = 0x0100,
	    "header flags unknown");
	BAD(CMP_TYPE_DESTROY_ID_REPLY, m->hdr.flags = CMP_HDR_NOREPLY,
	    "header flags on a reply or event");
	BAD(CMP_TYPE_HELLO_REPLY, m->hdr.flags = CMP_HDR_NOREPLY,
	    "header flags on a reply or event");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->hdr.flags = CMP_HDR_NOREPLY,
	       "header flags on a reply or event");
	BAD(CMP_TYPE_HELLO, m->hdr.flags = CMP_HDR_NOREPLY,
	    "header flags on HELLO");
	for (unsigned int t = CMP_TYPE_CREATE_ID; t <= CMP_TYPE_REQUEST_MAX;
	     t++) {
		if (cmp_noreply_allowed(t))
			continue;
		BAD((enum cmp_type)t, m->hdr.flags = CMP_HDR_NOREPLY,
		    "NOREPLY on a request whose reply carries results");
	}
	/* ACK: exactly the requests that answer an event, and those all
	 * name an id; ACK_EVENT itself, DESTROY_ID, CONNECT and the
	 * id-less requests may not carry it. */
	for (unsigned int t = CMP_TYPE_CREATE_ID; t <= CMP_TYPE_REQUEST_MAX;
	     t++) {
		bool answers = t == CMP_TYPE_ACCEPT || t == CMP_TYPE_REJECT ||
			       t == CMP_TYPE_RTU || t == CMP_TYPE_MRA ||
			       t == CMP_TYPE_DISCONNECT ||
			       t == CMP_TYPE_NOTIFY_ESTABLISHED ||
			       t == CMP_TYPE_LAP || t == CMP_TYPE_APR ||
			       t == CMP_TYPE_SIDR_REP;

		assert_int_equal(cmp_ack_allowed(t), answers);
		assert_true(!answers || cmp_type_has_id(t));
		if (!answers)
			BAD((enum cmp_type)t, m->hdr.flags = CMP_HDR_ACK,
			    "ACK on a request that answers no event");
	}
	BAD(CMP_TYPE_DESTROY_ID_REPLY, m->hdr.flags = CMP_HDR_ACK,
	    "header flags on a reply or event");
}

static void test_malformed_requests(void **state)
{
	(void)state;
	/* Generic request checks. */
	BAD(CMP_TYPE_ACCEPT, m->accept.id = 0, "request id zero");
	BAD(CMP_TYPE_ACK_EVENT, m->ack_event.id = 0, "request id zero");
	BAD(CMP_TYPE_DESTROY_ID, m->destroy_id.rsvd0 = 1,
	    "id request reserved bytes not zero");

	BAD(CMP_TYPE_HELLO, m->hello.min_version = 0,
	    "HELLO minimum version is zero");
	BAD(CMP_TYPE_HELLO,
	    (m->hello.min_version = 3, m->hello.max_version = 2),
	    "HELLO version range inverted");
	BAD(CMP_TYPE_HELLO, m->hello.rsvd0 = 1,
	    "HELLO reserved bytes not zero");
	BAD(CMP_TYPE_HELLO, memset(m->hello.name, 'x', sizeof(m->hello.name)),
	    "HELLO client name not NUL-terminated");
	BAD(CMP_TYPE_HELLO, m->hello.name[CMP_CLIENT_NAME_SIZE - 1] = 'x',
	    "HELLO client name not zero after its NUL");

	BAD(CMP_TYPE_CREATE_ID, m->create_id.qp_type = 0,
	    "CREATE_ID QP type out of range");
	BAD(CMP_TYPE_CREATE_ID, m->create_id.qp_type = 4,
	    "CREATE_ID QP type out of range");
	BAD(CMP_TYPE_CREATE_ID, m->create_id.rsvd0[6] = 1,
	    "CREATE_ID reserved bytes not zero");
	BAD(CMP_TYPE_SET_CONTEXT, m->set_context.rsvd0 = 1,
	    "SET_CONTEXT reserved bytes not zero");

	BAD(CMP_TYPE_LISTEN, m->listen.backlog = 0, "LISTEN backlog zero");
	BAD(CMP_TYPE_LISTEN, m->listen.service_id |= 1,
	    "LISTEN service id has bits outside its mask");
	BAD(CMP_TYPE_LISTEN, m->listen.port.kind = 3,
	    "port selector kind unknown");
	BAD(CMP_TYPE_LISTEN, m->listen.port.rsvd0[0] = 1,
	    "port selector reserved bytes not zero");
	BAD(CMP_TYPE_LISTEN, m->listen.port.dev_name[0] = 0,
	    "port selector device name not zero after its NUL");
	BAD(CMP_TYPE_LISTEN,
	    memset(m->listen.port.dev_name, 0, CMP_DEV_NAME_SIZE),
	    "port selector PORT without a device name");
	BAD(CMP_TYPE_LISTEN, m->listen.port.gid[15] = 1,
	    "port selector PORT with a GID");
	BAD(CMP_TYPE_LISTEN, m->listen.port.kind = CMP_SEL_ANY,
	    "port selector ANY names a port");
	BAD(CMP_TYPE_CONNECT, memset(m->connect.src.gid, 0, CM_GID_SIZE),
	    "port selector GID is zero");
	BAD(CMP_TYPE_CONNECT, m->connect.src.port_num = 1,
	    "port selector GID with a device or port");

	BAD(CMP_TYPE_CONNECT, m->connect.local_qpn = 1,
	    "CONNECT local QPN out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.local_qpn = 0x1000000,
	    "CONNECT local QPN out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.start_psn = 0x1000000,
	    "CONNECT starting PSN out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.flow_control = 2,
	    "CONNECT flow control not 0 or 1");
	BAD(CMP_TYPE_CONNECT, m->connect.retry_count = 8,
	    "CONNECT retry count out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.rnr_retry_count = 8,
	    "CONNECT RNR retry count out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.srq = 0xff, "CONNECT SRQ not 0 or 1");
	BAD(CMP_TYPE_CONNECT, m->connect.max_cm_retries = 16,
	    "CONNECT max CM retries out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.local_cm_response_timeout = 32,
	    "CONNECT local CM response timeout out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.remote_cm_response_timeout = 32,
	    "CONNECT remote CM response timeout out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.rsvd0 = 1,
	    "CONNECT reserved bytes not zero");
	/* Creating its id (id 0): RC or UC only, and never NOREPLY. */
	BAD(CMP_TYPE_CONNECT, m->connect.id = CMP_ID_NONE,
	    "CONNECT creating its id: QP type not RC or UC");
	BAD(CMP_TYPE_CONNECT,
	    (m->connect.id = CMP_ID_NONE, m->connect.qp_type = CMP_QP_TYPE_UD),
	    "CONNECT creating its id: QP type not RC or UC");
	BAD(CMP_TYPE_CONNECT,
	    (m->connect.id = CMP_ID_NONE, m->connect.qp_type = 4),
	    "CONNECT creating its id: QP type not RC or UC");
	BAD(CMP_TYPE_CONNECT,
	    (m->connect.id = CMP_ID_NONE, m->connect.qp_type = CMP_QP_TYPE_RC,
	     m->hdr.flags = CMP_HDR_NOREPLY),
	    "CONNECT creating its id with NOREPLY");
	/* An existing id keeps its own QP type and context. */
	BAD(CMP_TYPE_CONNECT, m->connect.qp_type = CMP_QP_TYPE_RC,
	    "CONNECT QP type set for an existing id");
	BAD(CMP_TYPE_CONNECT, m->connect.context = 1,
	    "CONNECT context set for an existing id");
	BAD(CMP_TYPE_CONNECT,
	    (m->hdr.flags = CMP_HDR_NOREPLY, m->connect.context = 1ULL << 63),
	    "CONNECT context set for an existing id");
	BAD(CMP_TYPE_CONNECT, m->connect.rsvd1[3] = 1,
	    "CONNECT reserved bytes not zero");
	BAD(CMP_TYPE_CONNECT,
	    m->connect.private_data_len = CM_REQ_PRIVATE_DATA_SIZE + 1,
	    "CONNECT private data length beyond its maximum");
	BAD(CMP_TYPE_CONNECT, m->connect.private_data_len = 55,
	    "CONNECT private data not zero beyond its length");
	BAD(CMP_TYPE_CONNECT, m->connect.private_data[91] = 1,
	    "CONNECT private data not zero beyond its length");

	/* Destinations. */
	BAD(CMP_TYPE_CONNECT, m->connect.dst.family = CMP_AF_NONE,
	    "destination missing");
	BAD(CMP_TYPE_CONNECT, m->connect.dst.family = 5,
	    "destination family unknown");
	BAD(CMP_TYPE_CONNECT, m->connect.dst.rsvd1 = 1,
	    "destination reserved bytes not zero");
	BAD(CMP_TYPE_CONNECT, m->connect.dst.lid = 1,
	    "destination LID set for a GID or IP address");
	BAD(CMP_TYPE_CONNECT, memset(m->connect.dst.addr, 0, 16),
	    "destination address is zero");
	BAD(CMP_TYPE_CONNECT, m->connect.dst.family = CMP_AF_IPV4,
	    "destination IPv4 address longer than 4 bytes");
	BAD(CMP_TYPE_CONNECT, m->connect.dst.family = CMP_AF_LID,
	    "destination LID with an address");
	BAD(CMP_TYPE_CONNECT,
	    (m->connect.dst.family = CMP_AF_LID,
	     memset(m->connect.dst.addr, 0, 16), m->connect.dst.lid = 0xc000),
	    "destination LID out of range");
	BAD(CMP_TYPE_SIDR_REQ, memset(m->sidr_req.dst.addr, 0, 4),
	    "destination address is zero");
	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.dst.lid = 3,
	    "destination LID set for a GID or IP address");

	/* Path overrides. */
	BAD(CMP_TYPE_CONNECT, m->connect.path.flags |= 0x100,
	    "path override flags unknown");
	BAD(CMP_TYPE_CONNECT, m->connect.path.hop_limit = 1,
	    "path override value set without its flag");
	BAD(CMP_TYPE_CONNECT, m->connect.path.mtu = 6,
	    "path override MTU out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.path.pkey = 0x8000,
	    "path override P_Key invalid");
	BAD(CMP_TYPE_CONNECT, m->connect.path.sl = 16,
	    "path override SL out of range");
	BAD(CMP_TYPE_CONNECT, m->connect.path.flow_label = 0x100000,
	    "path override flow label out of range");
	BAD(CMP_TYPE_CONNECT,
	    (m->connect.path.flags |= CMP_PATH_FLAG_PACKET_RATE,
	     m->connect.path.packet_rate = 64),
	    "path override packet rate out of range");
	BAD(CMP_TYPE_CONNECT,
	    (m->connect.path.flags |= CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT,
	     m->connect.path.local_ack_timeout = 32),
	    "path override local ACK timeout out of range");

	BAD(CMP_TYPE_ACCEPT, m->accept.local_qpn = 0,
	    "ACCEPT local QPN out of range");
	BAD(CMP_TYPE_ACCEPT, m->accept.start_psn = 0xffffffff,
	    "ACCEPT starting PSN out of range");
	BAD(CMP_TYPE_ACCEPT, m->accept.target_ack_delay = 32,
	    "ACCEPT target ACK delay out of range");
	BAD(CMP_TYPE_ACCEPT, m->accept.failover = 3,
	    "ACCEPT failover out of range");
	BAD(CMP_TYPE_ACCEPT, m->accept.flow_control = 2,
	    "ACCEPT flow control not 0 or 1");
	BAD(CMP_TYPE_ACCEPT, m->accept.rnr_retry_count = 8,
	    "ACCEPT RNR retry count out of range");
	BAD(CMP_TYPE_ACCEPT, m->accept.srq = 2, "ACCEPT SRQ not 0 or 1");
	BAD(CMP_TYPE_ACCEPT, m->accept.private_data_len = 197,
	    "ACCEPT private data length beyond its maximum");

	BAD(CMP_TYPE_REJECT, m->reject.reason = 0,
	    "REJECT reason out of range");
	BAD(CMP_TYPE_REJECT, m->reject.reason = CM_REJ_REASON_MAX + 1,
	    "REJECT reason out of range");
	BAD(CMP_TYPE_REJECT, m->reject.ari_len = CM_REJ_ARI_SIZE + 1,
	    "REJECT ARI length beyond its maximum");
	BAD(CMP_TYPE_REJECT, m->reject.ari_len = 1,
	    "REJECT ARI not zero beyond its length");
	BAD(CMP_TYPE_REJECT, m->reject.private_data_len = 149,
	    "REJECT private data length beyond its maximum");
	BAD(CMP_TYPE_REJECT, m->reject.private_data[147] = 1,
	    "REJECT private data not zero beyond its length");
	BAD(CMP_TYPE_REJECT, m->reject.rsvd0[0] = 1,
	    "REJECT reserved bytes not zero");

	BAD(CMP_TYPE_RTU, m->rtu.private_data_len = 225,
	    "RTU private data length beyond its maximum");
	BAD(CMP_TYPE_RTU, m->rtu.rsvd0[2] = 1, "RTU reserved bytes not zero");
	BAD(CMP_TYPE_MRA, m->mra.service_timeout = 32,
	    "MRA service timeout out of range");
	BAD(CMP_TYPE_MRA, m->mra.rsvd1[1] = 1, "MRA reserved bytes not zero");
	BAD(CMP_TYPE_MRA, m->mra.private_data_len = 223,
	    "MRA private data length beyond its maximum");
	BAD(CMP_TYPE_DISCONNECT, m->disconnect.rsvd0[0] = 1,
	    "DISCONNECT reserved bytes not zero");
	BAD(CMP_TYPE_DISCONNECT, m->disconnect.private_data_len = 221,
	    "DISCONNECT private data length beyond its maximum");
	BAD(CMP_TYPE_DISCONNECT, m->disconnect.private_data[1] = 1,
	    "DISCONNECT private data not zero beyond its length");

	/* LAP and the path checks it shares. */
	BAD(CMP_TYPE_LAP, m->lap.rsvd0[0] = 1, "LAP reserved bytes not zero");
	BAD(CMP_TYPE_LAP, m->lap.private_data_len = 169,
	    "LAP private data length beyond its maximum");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.flow_label = 0x100000,
	    "path flow label out of range");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.mtu = 6, "path MTU out of range");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.sl = 16, "path SL out of range");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.packet_rate = 64,
	    "path packet rate out of range");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.local_ack_timeout = 32,
	    "path local ACK timeout out of range");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.grh = 2, "path GRH flag not 0 or 1");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.packet_life_time = 64,
	    "path packet life time out of range");
	BAD(CMP_TYPE_LAP, m->lap.alt_path.rsvd0[1] = 1,
	    "path reserved bytes not zero");
	BAD(CMP_TYPE_LAP,
	    memset(m->lap.alt_path.dev_name, 'a', CMP_DEV_NAME_SIZE),
	    "path device name not NUL-terminated");

	BAD(CMP_TYPE_APR, m->apr.ap_status = CM_APR_STATUS_MAX + 1,
	    "APR status out of range");
	BAD(CMP_TYPE_APR, m->apr.info_len = 73,
	    "APR additional info length beyond its maximum");
	BAD(CMP_TYPE_APR, m->apr.info[2] = 1,
	    "APR additional info not zero beyond its length");
	BAD(CMP_TYPE_APR, m->apr.private_data_len = 149,
	    "APR private data length beyond its maximum");
	BAD(CMP_TYPE_APR, m->apr.rsvd0 = 1, "APR reserved bytes not zero");

	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.max_cm_retries = 16,
	    "SIDR_REQ max CM retries out of range");
	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.cm_response_timeout = 32,
	    "SIDR_REQ CM response timeout out of range");
	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.pkey = 0x8000,
	    "SIDR_REQ P_Key invalid");
	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.rsvd0[6] = 1,
	    "SIDR_REQ reserved bytes not zero");
	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.private_data_len = 217,
	    "SIDR_REQ private data length beyond its maximum");
	BAD(CMP_TYPE_SIDR_REQ, m->sidr_req.src.kind = 9,
	    "port selector kind unknown");

	BAD(CMP_TYPE_SIDR_REP, m->sidr_rep.status = CM_SIDR_STATUS_MAX + 1,
	    "SIDR_REP status out of range");
	BAD(CMP_TYPE_SIDR_REP, m->sidr_rep.qpn = 0x1000000,
	    "SIDR_REP QPN out of range");
	BAD(CMP_TYPE_SIDR_REP, m->sidr_rep.rsvd0[0] = 1,
	    "SIDR_REP reserved bytes not zero");
	BAD(CMP_TYPE_SIDR_REP, m->sidr_rep.private_data_len = 137,
	    "SIDR_REP private data length beyond its maximum");

	BAD(CMP_TYPE_ACK_EVENT, m->ack_event.seq = 0,
	    "ACK_EVENT sequence zero");

	BAD(CMP_TYPE_LIST, m->list.filter = 0, "LIST filter out of range");
	BAD(CMP_TYPE_LIST, m->list.filter = 4, "LIST filter out of range");
	BAD(CMP_TYPE_LIST, m->list.rsvd0[0] = 1,
	    "LIST reserved bytes not zero");

	BAD(CMP_TYPE_COUNTERS, m->counters.scope = 0, "COUNTERS scope unknown");
	BAD(CMP_TYPE_COUNTERS, m->counters.scope = CMP_COUNTER_SCOPE_GLOBAL,
	    "COUNTERS port given outside PORT scope");
	BAD(CMP_TYPE_COUNTERS, m->counters.port_num = 0,
	    "COUNTERS PORT scope without device and port");
	BAD(CMP_TYPE_COUNTERS,
	    memset(m->counters.dev_name, 0, CMP_DEV_NAME_SIZE),
	    "COUNTERS PORT scope without device and port");
	BAD(CMP_TYPE_COUNTERS, m->counters.rsvd0[5] = 1,
	    "COUNTERS reserved bytes not zero");

	BAD(CMP_TYPE_CAPTURE, m->capture.op = 0, "CAPTURE op out of range");
	BAD(CMP_TYPE_CAPTURE, m->capture.op = 3, "CAPTURE op out of range");
	BAD(CMP_TYPE_CAPTURE, m->capture.rsvd0[6] = 1,
	    "CAPTURE reserved bytes not zero");
	BAD(CMP_TYPE_CAPTURE, memset(m->capture.path, 'a', CMP_PATH_SIZE),
	    "CAPTURE path not NUL-terminated");
	BAD(CMP_TYPE_CAPTURE, m->capture.path[CMP_PATH_SIZE - 1] = 'x',
	    "CAPTURE path not zero after its NUL");
	BAD(CMP_TYPE_CAPTURE, memset(m->capture.path, 0, CMP_PATH_SIZE),
	    "CAPTURE START without a path");
	BAD(CMP_TYPE_CAPTURE, m->capture.op = CMP_CAPTURE_STOP,
	    "CAPTURE STOP with a path");
	BAD(CMP_TYPE_SESSION, m->session.rsvd0[7] = 1,
	    "SESSION reserved bytes not zero");
	BAD(CMP_TYPE_RESUME, memset(m->resume.token, 0, CMP_TOKEN_SIZE),
	    "RESUME token is zero");
	BAD(CMP_TYPE_COUNTERS, m->counters.dev_name[63] = 'x',
	    "COUNTERS device name not zero after its NUL");

	BAD(CMP_TYPE_PATHS, m->paths.flags = 4, "PATHS flags unknown");
	BAD(CMP_TYPE_PATHS, m->paths.flags = 0x80000001u,
	    "PATHS flags unknown");
	BAD(CMP_TYPE_PATHS, m->paths.flags = CMP_PATHS_PORT,
	    "PATHS port without FLUSH");
	BAD(CMP_TYPE_PATHS, m->paths.flags = CMP_PATHS_FLUSH,
	    "PATHS port index without the PORT flag");
	BAD(CMP_TYPE_PATHS, (m->paths.flags = 0, m->paths.port_index = 1),
	    "PATHS port index without the PORT flag");
	BAD(CMP_TYPE_PATHS, m->paths.cursor = 1, "PATHS FLUSH with a cursor");
	BAD(CMP_TYPE_PATHS, m->paths.rsvd0 = 1,
	    "PATHS reserved bytes not zero");
}

static void test_malformed_replies(void **state)
{
	(void)state;
	/* Generic reply checks. */
	BAD(CMP_TYPE_CONNECT_REPLY, m->reply.status = 1,
	    "reply status not 0 or -errno");
	BAD(CMP_TYPE_CONNECT_REPLY, m->reply.status = -4096,
	    "reply status not 0 or -errno");
	BAD(CMP_TYPE_CREATE_ID_REPLY, m->reply.status = -ENOMEM,
	    "reply body not zero after a failure");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->reply.status = -ENOENT,
	    "reply body not zero after a failure");
	/* Only a plain reply's id survives a failure; CREATE_ID_REPLY's id
	 * and LIST_REPLY's count are results. */
	BAD(CMP_TYPE_LIST_REPLY,
	    (m->reply.status = -EPERM,
	     bad_n = sizeof(m->hdr) + offsetof(struct cmp_list_reply, entries),
	     m->hdr.length = (uint32_t)bad_n),
	    "reply body not zero after a failure");
	/* A failed batch reply has no entries: they count as its length. */
	BAD(CMP_TYPE_LIST_REPLY, m->reply.status = -EPERM,
	    "body length wrong for its type");

	BAD(CMP_TYPE_HELLO_REPLY, m->hello_reply.min_version = 0,
	    "HELLO_REPLY minimum version is zero");
	BAD(CMP_TYPE_HELLO_REPLY, m->hello_reply.max_version = 0,
	    "HELLO_REPLY version range inverted");
	BAD(CMP_TYPE_HELLO_REPLY, m->hello_reply.version = 0,
	    "HELLO_REPLY version outside the daemon's range");
	BAD(CMP_TYPE_HELLO_REPLY, m->hello_reply.status = -EPROTONOSUPPORT,
	    "HELLO_REPLY version set on failure");
	BAD(CMP_TYPE_HELLO_REPLY, m->hello_reply.max_msg = CMP_MSG_MAX + 1,
	    "HELLO_REPLY max message size beyond CMP_MSG_MAX");
	BAD(CMP_TYPE_HELLO_REPLY, m->hello_reply.rsvd0 = 1,
	    "HELLO_REPLY reserved bytes not zero");
	BAD(CMP_TYPE_HELLO_REPLY,
	    memset(m->hello_reply.daemon_version, '9', CMP_DAEMON_VERSION_SIZE),
	    "HELLO_REPLY daemon version not NUL-terminated");

	BAD(CMP_TYPE_CREATE_ID_REPLY, m->create_id_reply.id = 0,
	    "CREATE_ID_REPLY id zero");

	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.rsvd0 = 1,
	    "QUERY_ID_REPLY reserved bytes not zero");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.id = 0,
	    "QUERY_ID_REPLY id zero");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.local_qpn = 0x1000000,
	    "QUERY_ID_REPLY local QPN out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.remote_qpn = 0x1000000,
	    "QUERY_ID_REPLY remote QPN out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.local_psn = 0x1000000,
	    "QUERY_ID_REPLY local PSN out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.remote_psn = 0x1000000,
	    "QUERY_ID_REPLY remote PSN out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.state = CMP_STATE_MAX + 1,
	    "QUERY_ID_REPLY state out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.lap_state = CMP_LAP_STATE_MAX + 1,
	    "QUERY_ID_REPLY LAP state out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.qp_type = 0,
	    "QUERY_ID_REPLY QP type out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.target_ack_delay = 32,
	    "QUERY_ID_REPLY target ACK delay out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.failover = 3,
	    "QUERY_ID_REPLY failover out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.flow_control = 2,
	    "QUERY_ID_REPLY flow control not 0 or 1");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.retry_count = 8,
	    "QUERY_ID_REPLY retry count out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.rnr_retry_count = 8,
	    "QUERY_ID_REPLY RNR retry count out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.srq = 2,
	    "QUERY_ID_REPLY SRQ not 0 or 1");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.max_cm_retries = 16,
	    "QUERY_ID_REPLY max CM retries out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.local_cm_response_timeout = 32,
	    "QUERY_ID_REPLY local CM response timeout out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.remote_cm_response_timeout = 32,
	    "QUERY_ID_REPLY remote CM response timeout out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.has_alt_path = 2,
	    "QUERY_ID_REPLY alternate path flag not 0 or 1");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.has_alt_path = 0,
	    "QUERY_ID_REPLY alternate path without its flag");
	BAD(CMP_TYPE_QUERY_ID_REPLY,
	    m->query_id_reply.info.sel = CMP_SEL_MAX + 1,
	    "QUERY_ID_REPLY selector kind out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.path.mtu = 7,
	    "path MTU out of range");
	BAD(CMP_TYPE_QUERY_ID_REPLY, m->query_id_reply.info.alt_path.sl = 17,
	    "path SL out of range");

	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.count = CMP_LIST_BATCH_MAX + 1,
	    "LIST_REPLY count over the batch maximum");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[2].id = 0,
	    "LIST_REPLY entry id zero");
	BAD(CMP_TYPE_LIST_REPLY,
	    m->list_reply.entries[1].state = CMP_STATE_MAX + 1,
	    "LIST_REPLY entry state out of range");
	BAD(CMP_TYPE_LIST_REPLY,
	    m->list_reply.entries[1].lap_state = CMP_LAP_STATE_MAX + 1,
	    "LIST_REPLY entry LAP state out of range");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[0].qp_type = 5,
	    "LIST_REPLY entry QP type out of range");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[0].sel = CMP_SEL_MAX + 1,
	    "LIST_REPLY entry selector kind out of range");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[2].sel_port_num = 1,
	    "LIST_REPLY entry port without a PORT selector");
	BAD(CMP_TYPE_LIST_REPLY,
	    (m->list_reply.entries[1].sel = CMP_SEL_GID,
	     m->list_reply.entries[1].sel_port_index = 3),
	    "LIST_REPLY entry port without a PORT selector");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[2].rsvd1 = 1,
	    "LIST_REPLY entry reserved bytes not zero");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[1].rsvd2[1] = 1,
	    "LIST_REPLY entry reserved bytes not zero");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[1].grh = 2,
	    "LIST_REPLY entry GRH flag not 0 or 1");
	BAD(CMP_TYPE_LIST_REPLY, m->list_reply.entries[1].remote_qpn = 1u << 24,
	    "LIST_REPLY entry remote QPN out of range");
	BAD(CMP_TYPE_LIST_REPLY,
	    memset(m->list_reply.entries[1].owner_comm, 'a', CMP_COMM_SIZE),
	    "LIST_REPLY entry owner name not NUL-terminated");

	BAD(CMP_TYPE_PORTS_REPLY,
	    (m->reply.status = -EIO,
	     bad_n = sizeof(m->hdr) + offsetof(struct cmp_ports_reply, entries),
	     m->hdr.length = (uint32_t)bad_n),
	    "reply body not zero after a failure");
	BAD(CMP_TYPE_PORTS_REPLY,
	    m->ports_reply.count = CMP_PORTS_BATCH_MAX + 1,
	    "PORTS_REPLY count over the batch maximum");
	BAD(CMP_TYPE_PORTS_REPLY,
	    memset(m->ports_reply.entries[1].dev_name, 'x', CMP_DEV_NAME_SIZE),
	    "PORTS_REPLY entry device name not NUL-terminated");
	BAD(CMP_TYPE_PORTS_REPLY,
	    m->ports_reply.entries[1].dev_name[CMP_DEV_NAME_SIZE - 1] = 'x',
	    "PORTS_REPLY entry device name not zero after its NUL");
	BAD(CMP_TYPE_PORTS_REPLY,
	    memset(m->ports_reply.entries[0].dev_name, 0, CMP_DEV_NAME_SIZE),
	    "PORTS_REPLY entry device name empty");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[1].port_num = 0,
	    "PORTS_REPLY entry port number zero");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[1].up = 2,
	    "PORTS_REPLY entry up flag not 0 or 1");
	BAD(CMP_TYPE_PORTS_REPLY,
	    m->ports_reply.entries[0].state = CMP_PORT_STATE_MAX + 1,
	    "PORTS_REPLY entry port state out of range");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[0].link_layer = 0,
	    "PORTS_REPLY entry link layer out of range");
	BAD(CMP_TYPE_PORTS_REPLY,
	    m->ports_reply.entries[0].link_layer = CMP_LINK_LAYER_MAX + 1,
	    "PORTS_REPLY entry link layer out of range");
	BAD(CMP_TYPE_PORTS_REPLY,
	    m->ports_reply.entries[1].active_mtu = CM_MTU_4096 + 1,
	    "PORTS_REPLY entry active MTU out of range");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[0].lmc = 8,
	    "PORTS_REPLY entry LMC out of range");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[0].sm_sl = 16,
	    "PORTS_REPLY entry SM SL out of range");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[1].rsvd0 = 1,
	    "PORTS_REPLY entry reserved bytes not zero");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[1].gids[2].type = 0,
	    "PORTS_REPLY entry GID type out of range");
	BAD(CMP_TYPE_PORTS_REPLY,
	    m->ports_reply.entries[1].gids[3].type = CMP_GID_TYPE_MAX + 1,
	    "PORTS_REPLY entry GID type out of range");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[1].gids[0].rsvd0 = 1,
	    "PORTS_REPLY entry GID reserved bytes not zero");
	/* Slots beyond n_gids are zero, every byte of them. */
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[0].gids[1].gid[15] = 1,
	    "PORTS_REPLY entry GID slot beyond n_gids not zero");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[0].gids[3].index = 1,
	    "PORTS_REPLY entry GID slot beyond n_gids not zero");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[1].n_gids = 2,
	    "PORTS_REPLY entry GID slot beyond n_gids not zero");
	BAD(CMP_TYPE_PORTS_REPLY, m->ports_reply.entries[0].n_gids = 0,
	    "PORTS_REPLY entry GID slot beyond n_gids not zero");

	BAD(CMP_TYPE_PATHS_REPLY,
	    (m->reply.status = -EPERM,
	     bad_n = sizeof(m->hdr) + offsetof(struct cmp_paths_reply, entries),
	     m->hdr.length = (uint32_t)bad_n),
	    "reply body not zero after a failure");
	BAD(CMP_TYPE_PATHS_REPLY,
	    m->paths_reply.count = CMP_PATHS_BATCH_MAX + 1,
	    "PATHS_REPLY count over the batch maximum");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.rsvd0 = 1,
	    "PATHS_REPLY reserved bytes not zero");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.entries[1].rsvd0[5] = 1,
	    "PATHS_REPLY entry reserved bytes not zero");
	BAD(CMP_TYPE_PATHS_REPLY,
	    memset(m->paths_reply.entries[0].dev_name, 0, CMP_DEV_NAME_SIZE),
	    "PATHS_REPLY entry device name empty");
	BAD(CMP_TYPE_PATHS_REPLY,
	    m->paths_reply.entries[1].dev_name[CMP_DEV_NAME_SIZE - 1] = 'x',
	    "PATHS_REPLY entry device name not zero after its NUL");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.entries[0].port_num = 0,
	    "PATHS_REPLY entry port number zero");
	BAD(CMP_TYPE_PATHS_REPLY,
	    m->paths_reply.entries[0].flow_label = CMP_FLOW_LABEL_MAX + 1,
	    "PATHS_REPLY entry flow label out of range");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.entries[0].sl = 16,
	    "PATHS_REPLY entry SL out of range");
	BAD(CMP_TYPE_PATHS_REPLY,
	    m->paths_reply.entries[0].mtu = CM_MTU_4096 + 1,
	    "PATHS_REPLY entry MTU out of range");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.entries[0].rate = 64,
	    "PATHS_REPLY entry rate out of range");
	BAD(CMP_TYPE_PATHS_REPLY,
	    m->paths_reply.entries[0].packet_life_time = 64,
	    "PATHS_REPLY entry packet life time out of range");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.entries[1].has_alt = 2,
	    "PATHS_REPLY entry alternate flag not 0 or 1");
	BAD(CMP_TYPE_PATHS_REPLY, m->paths_reply.entries[0].alt_dlid = 5,
	    "PATHS_REPLY entry alternate LIDs without an alternate");

	BAD(CMP_TYPE_COUNTERS_REPLY,
	    m->counters_reply.count = CMP_COUNTERS_BATCH_MAX + 1,
	    "COUNTERS_REPLY count over the batch maximum");
	BAD(CMP_TYPE_COUNTERS_REPLY,
	    memset(m->counters_reply.entries[3].name, 'n',
		   CMP_COUNTER_NAME_SIZE),
	    "COUNTERS_REPLY counter name not NUL-terminated");
	BAD(CMP_TYPE_COUNTERS_REPLY,
	    memset(m->counters_reply.entries[0].name, 0, CMP_COUNTER_NAME_SIZE),
	    "COUNTERS_REPLY counter name empty");
}

static void test_malformed_events(void **state)
{
	(void)state;
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->event.id = 0, "EVENT id zero");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->event.state = CMP_STATE_MAX + 1,
	       "EVENT state out of range");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT,
	       m->event.lap_state = CMP_LAP_STATE_MAX + 1,
	       "EVENT LAP state out of range");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->event.rsvd1 = 1,
	       "EVENT reserved bytes not zero");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->event.status = 5,
	       "EVENT status not 0 or -errno");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->event.type = 0,
	       "EVENT type unknown");
	BAD_EV(CMP_EVENT_TIMEWAIT_EXIT, m->event.type = CMP_EVENT_MAX + 1,
	       "EVENT type unknown");

	BAD_EV(CMP_EVENT_REQ_RECEIVED, m->event.req_received.listen_id = 0,
	       "REQ_RECEIVED listener id zero");
	BAD_EV(CMP_EVENT_REQ_RECEIVED,
	       m->event.req_received.remote_qpn = 0x1000000,
	       "REQ_RECEIVED remote QPN out of range");
	BAD_EV(CMP_EVENT_REQ_RECEIVED,
	       m->event.req_received.start_psn = 0x1000000,
	       "REQ_RECEIVED starting PSN out of range");
	BAD_EV(CMP_EVENT_REQ_RECEIVED,
	       m->event.req_received.qp_type = CMP_QP_TYPE_UD,
	       "REQ_RECEIVED QP type out of range");
	BAD_EV(CMP_EVENT_REQ_RECEIVED, m->event.req_received.flow_control = 2,
	       "REQ_RECEIVED flow control not 0 or 1");
	BAD_EV(CMP_EVENT_REQ_RECEIVED, m->event.req_received.retry_count = 8,
	       "REQ_RECEIVED retry count out of range");
	BAD_EV(CMP_EVENT_REQ_RECEIVED,
	       m->event.req_received.rnr_retry_count = 8,
	       "REQ_RECEIVED RNR retry count out of range");
	BAD_EV(CMP_EVENT_REQ_RECEIVED, m->event.req_received.srq = 2,
	       "REQ_RECEIVED SRQ not 0 or 1");
	BAD_EV(CMP_EVENT_REQ_RECEIVED, m->event.req_received.rsvd0[3] = 1,
	       "REQ_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_REQ_RECEIVED,
	       m->event.req_received.private_data_len = 93,
	       "REQ_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_REQ_RECEIVED,
	       m->event.req_received.path.dev_name[20] = 'x',
	       "path device name not zero after its NUL");

	BAD_EV(CMP_EVENT_REP_RECEIVED,
	       m->event.rep_received.remote_qpn = 0x1000000,
	       "REP_RECEIVED remote QPN out of range");
	BAD_EV(CMP_EVENT_REP_RECEIVED,
	       m->event.rep_received.start_psn = 0x1000000,
	       "REP_RECEIVED starting PSN out of range");
	BAD_EV(CMP_EVENT_REP_RECEIVED,
	       m->event.rep_received.target_ack_delay = 32,
	       "REP_RECEIVED target ACK delay out of range");
	BAD_EV(CMP_EVENT_REP_RECEIVED, m->event.rep_received.failover = 3,
	       "REP_RECEIVED failover out of range");
	BAD_EV(CMP_EVENT_REP_RECEIVED, m->event.rep_received.flow_control = 2,
	       "REP_RECEIVED flow control not 0 or 1");
	BAD_EV(CMP_EVENT_REP_RECEIVED,
	       m->event.rep_received.rnr_retry_count = 8,
	       "REP_RECEIVED RNR retry count out of range");
	BAD_EV(CMP_EVENT_REP_RECEIVED, m->event.rep_received.srq = 2,
	       "REP_RECEIVED SRQ not 0 or 1");
	BAD_EV(CMP_EVENT_REP_RECEIVED, m->event.rep_received.rsvd0[0] = 1,
	       "REP_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_REP_RECEIVED,
	       m->event.rep_received.private_data_len = 197,
	       "REP_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_REP_RECEIVED, m->event.rep_received.path.grh = 3,
	       "path GRH flag not 0 or 1");

	BAD_EV(CMP_EVENT_ESTABLISHED, m->event.established.rsvd0[0] = 1,
	       "ESTABLISHED reserved bytes not zero");
	BAD_EV(CMP_EVENT_ESTABLISHED,
	       m->event.established.private_data_len = 225,
	       "ESTABLISHED private data length beyond its maximum");

	BAD_EV(CMP_EVENT_REJ_RECEIVED, m->event.rej_received.reason = 36,
	       "REJ_RECEIVED reason out of range");
	BAD_EV(CMP_EVENT_REJ_RECEIVED, m->event.rej_received.ari_len = 73,
	       "REJ_RECEIVED ARI length beyond its maximum");
	BAD_EV(CMP_EVENT_REJ_RECEIVED, m->event.rej_received.ari[10] = 1,
	       "REJ_RECEIVED ARI not zero beyond its length");
	BAD_EV(CMP_EVENT_REJ_RECEIVED,
	       m->event.rej_received.private_data_len = 149,
	       "REJ_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_REJ_RECEIVED, m->event.rej_received.rsvd1[0] = 1,
	       "REJ_RECEIVED reserved bytes not zero");

	BAD_EV(CMP_EVENT_CONNECT_ERROR,
	       m->event.connect_error.msg = CMP_CM_MSG_DREQ,
	       "CONNECT_ERROR message not REQ, REP, SIDR_REQ or none");
	BAD_EV(CMP_EVENT_CONNECT_ERROR, m->event.connect_error.msg = 200,
	       "CONNECT_ERROR message not REQ, REP, SIDR_REQ or none");
	BAD_EV(CMP_EVENT_CONNECT_ERROR, m->event.connect_error.rsvd0[0] = 1,
	       "CONNECT_ERROR reserved bytes not zero");

	BAD_EV(CMP_EVENT_MRA_RECEIVED,
	       m->event.mra_received.service_timeout = 32,
	       "MRA_RECEIVED service timeout out of range");
	BAD_EV(CMP_EVENT_MRA_RECEIVED,
	       m->event.mra_received.msg = CMP_CM_MSG_NONE,
	       "MRA_RECEIVED message not REQ, REP or LAP");
	BAD_EV(CMP_EVENT_MRA_RECEIVED, m->event.mra_received.rsvd0[5] = 1,
	       "MRA_RECEIVED reserved bytes not zero");

	BAD_EV(CMP_EVENT_DREQ_RECEIVED, m->event.dreq_received.rsvd1[0] = 1,
	       "DREQ_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_DREQ_RECEIVED,
	       m->event.dreq_received.private_data_len = 221,
	       "DREQ_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_DREP_RECEIVED, m->event.drep_received.rsvd0[0] = 1,
	       "DREP_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_DREP_RECEIVED,
	       m->event.drep_received.private_data_len = 225,
	       "DREP_RECEIVED private data length beyond its maximum");

	BAD_EV(CMP_EVENT_LAP_RECEIVED, m->event.lap_received.rsvd0[0] = 1,
	       "LAP_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_LAP_RECEIVED,
	       m->event.lap_received.private_data_len = 169,
	       "LAP_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_LAP_RECEIVED,
	       m->event.lap_received.alt_path.packet_rate = 64,
	       "path packet rate out of range");

	BAD_EV(CMP_EVENT_APR_RECEIVED, m->event.apr_received.ap_status = 14,
	       "APR_RECEIVED status out of range");
	BAD_EV(CMP_EVENT_APR_RECEIVED, m->event.apr_received.info_len = 73,
	       "APR_RECEIVED additional info length beyond its maximum");
	BAD_EV(CMP_EVENT_APR_RECEIVED,
	       m->event.apr_received.private_data_len = 149,
	       "APR_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_APR_RECEIVED, m->event.apr_received.rsvd0[0] = 1,
	       "APR_RECEIVED reserved bytes not zero");

	BAD_EV(CMP_EVENT_SIDR_REQ_RECEIVED,
	       m->event.sidr_req_received.listen_id = 0,
	       "SIDR_REQ_RECEIVED listener id zero");
	BAD_EV(CMP_EVENT_SIDR_REQ_RECEIVED,
	       m->event.sidr_req_received.rsvd0[0] = 1,
	       "SIDR_REQ_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_SIDR_REQ_RECEIVED,
	       m->event.sidr_req_received.private_data_len = 217,
	       "SIDR_REQ_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_SIDR_REQ_RECEIVED,
	       m->event.sidr_req_received.path.local_ack_timeout = 32,
	       "path local ACK timeout out of range");

	BAD_EV(CMP_EVENT_SIDR_REP_RECEIVED,
	       m->event.sidr_rep_received.status = 6,
	       "SIDR_REP_RECEIVED status out of range");
	BAD_EV(CMP_EVENT_SIDR_REP_RECEIVED,
	       m->event.sidr_rep_received.qpn = 0x1000000,
	       "SIDR_REP_RECEIVED QPN out of range");
	BAD_EV(CMP_EVENT_SIDR_REP_RECEIVED,
	       m->event.sidr_rep_received.rsvd0[0] = 1,
	       "SIDR_REP_RECEIVED reserved bytes not zero");
	BAD_EV(CMP_EVENT_SIDR_REP_RECEIVED,
	       m->event.sidr_rep_received.private_data_len = 137,
	       "SIDR_REP_RECEIVED private data length beyond its maximum");
	BAD_EV(CMP_EVENT_SIDR_REP_RECEIVED,
	       m->event.sidr_rep_received.path.flow_label = 0xfffff + 1,
	       "path flow label out of range");

	BAD_EV(CMP_EVENT_PORT_ERROR, m->event.port.rsvd0[0] = 1,
	       "port event reserved bytes not zero");
	BAD_EV(CMP_EVENT_DEVICE_REMOVAL,
	       memset(m->event.port.dev_name, 'm', CMP_DEV_NAME_SIZE),
	       "port event device name not NUL-terminated");
}

/*
 * Every proper prefix of every valid message is refused, from a buffer of
 * exactly that size: once with the original header (whose length then
 * disagrees), once with the header's length patched to match, which drives
 * the body length checks.
 */
static void test_truncation(void **state)
{
	struct example ex[EXAMPLES_MAX];
	size_t count = all_examples(ex);

	(void)state;
	for (size_t i = 0; i < count; i++) {
		uint8_t buf[CMP_MSG_MAX];
		struct cmp_msg m, d;
		size_t n;

		build(&m, ex[i]);
		n = encode_ok(&m, buf);
		for (size_t len = 0; len < n; len++) {
			const char *why = NULL;

			assert_int_equal(decode_exact(buf, len, &d, &why),
					 -EBADMSG);
			assert_non_null(why);
			if (len >= sizeof(struct cmp_hdr)) {
				uint8_t cut[CMP_MSG_MAX];

				memcpy(cut, buf, len);
				((struct cmp_hdr *)(void *)cut)->length =
					(uint32_t)len;
				why = NULL;
				assert_int_not_equal(
					decode_exact(cut, len, &d, &why), 0);
				assert_non_null(why);
			}
		}
	}
}

/*
 * Every byte of every valid message set to a few other values: decode must
 * not fault, must give a reason exactly when it fails, and when it
 * succeeds the encoding must be the canonical one (re-encoding gives the
 * same bytes), since a message has only one valid encoding.
 */
static void test_byte_corruption(void **state)
{
	static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	struct example ex[EXAMPLES_MAX];
	size_t count = all_examples(ex);
	unsigned int accepted = 0, refused = 0;

	(void)state;
	for (size_t i = 0; i < count; i++) {
		uint8_t buf[CMP_MSG_MAX], again[CMP_MSG_MAX];
		struct cmp_msg m, d;
		size_t n;

		build(&m, ex[i]);
		n = encode_ok(&m, buf);
		for (size_t at = 0; at < n; at++) {
			uint8_t orig = buf[at];

			for (size_t v = 0; v < sizeof(values); v++) {
				const char *why = NULL;
				int ret;

				if (values[v] == orig)
					continue;
				buf[at] = values[v];
				ret = decode_exact(buf, n, &d, &why);
				if (ret) {
					assert_non_null(why);
					refused++;
					continue;
				}
				assert_null(why);
				assert_int_equal(
					cmp_encode(&d, again, sizeof(again)),
					n);
				assert_memory_equal(again, buf, n);
				accepted++;
			}
			buf[at] = orig;
		}
	}
	/* Both outcomes happen: the test is not vacuous either way. */
	assert_true(accepted > 0);
	assert_true(refused > 0);
}

static void test_encode_errors(void **state)
{
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m;
	const char *why = NULL;

	(void)state;
	build(&m, (struct example){ .type = CMP_TYPE_CONNECT });
	/* One byte short of the message. */
	assert_int_equal(cmp_encode(&m, buf, 16 + 264 - 1), -EMSGSIZE);
	assert_int_equal(cmp_encode(&m, buf, 16 + 264), 16 + 264);
	/* hdr.length is the encoder's to compute, whatever the caller says. */
	m.hdr.length = 3;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), 16 + 264);
	assert_int_equal(((struct cmp_hdr *)(void *)buf)->length, 16 + 264);

	m.connect.retry_count = 9;
	assert_int_equal(cmp_encode(&m, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(cmp_check(&m, &why), -EBADMSG);
	assert_string_equal(why, "CONNECT retry count out of range");
	assert_int_equal(cmp_check(&m, NULL), -EBADMSG);

	m.hdr.version = 9;
	assert_int_equal(cmp_check(&m, &why), -EPROTO);
	assert_string_equal(why, "protocol version not supported");

	/* A NULL why is allowed on decode too. */
	assert_int_equal(cmp_decode(buf, 3, &m, NULL), -EBADMSG);
}

static void test_names(void **state)
{
	(void)state;
	for (unsigned int t = CMP_TYPE_HELLO; t <= CMP_TYPE_REQUEST_MAX; t++) {
		enum cmp_type rt = cmp_reply_type((enum cmp_type)t);
		char want[64];

		assert_true(cmp_type_is_request(t));
		assert_false(cmp_type_is_request(rt));
		snprintf(want, sizeof(want), "%s_REPLY",
			 cmp_type_name((enum cmp_type)t));
		assert_string_equal(cmp_type_name(rt), want);
	}
	assert_false(cmp_type_is_request(CMP_TYPE_EVENT));
	assert_string_equal(cmp_type_name(CMP_TYPE_NOTIFY_ESTABLISHED),
			    "NOTIFY_ESTABLISHED");
	assert_string_equal(cmp_type_name(CMP_TYPE_EVENT), "EVENT");
	assert_string_equal(cmp_type_name(CMP_TYPE_PORTS), "PORTS");
	assert_string_equal(cmp_type_name(CMP_TYPE_CAPTURE), "CAPTURE");
	assert_string_equal(cmp_type_name(CMP_TYPE_RESUME), "RESUME");
	assert_string_equal(cmp_type_name(CMP_TYPE_PATHS), "PATHS");
	assert_int_equal(CMP_TYPE_RESOLVE_ROUTE, 0x19);
	assert_int_equal(CMP_TYPE_PATHS, 0x1a);
	assert_int_equal(CMP_TYPE_PATHS, CMP_TYPE_REQUEST_MAX);
	assert_false(cmp_type_is_request(CMP_TYPE_REQUEST_MAX + 1));
	assert_string_equal(cmp_type_name((enum cmp_type)0x7f), "unknown");
	for (unsigned int e = CMP_EVENT_REQ_RECEIVED; e <= CMP_EVENT_MAX; e++) {
		assert_string_not_equal(cmp_event_name((enum cmp_event_type)e),
					"unknown");
		assert_true(cmp_event_body_size((enum cmp_event_type)e) >= 0);
	}
	assert_string_equal(cmp_event_name(CMP_EVENT_SIDR_REP_RECEIVED),
			    "SIDR_REP_RECEIVED");
	assert_string_equal(cmp_event_name((enum cmp_event_type)0), "unknown");
	assert_int_equal(cmp_event_body_size((enum cmp_event_type)0), -1);
	for (unsigned int s = 0; s <= CMP_STATE_MAX; s++)
		assert_string_not_equal(cmp_state_name((enum cmp_state)s),
					"unknown");
	assert_string_equal(cmp_state_name(CMP_STATE_MRA_REP_RCVD),
			    "MRA_REP_RCVD");
	assert_string_equal(cmp_state_name((enum cmp_state)99), "unknown");
	for (unsigned int s = 0; s <= CMP_LAP_STATE_MAX; s++)
		assert_string_not_equal(
			cmp_lap_state_name((enum cmp_lap_state)s), "unknown");
	assert_string_equal(cmp_lap_state_name((enum cmp_lap_state)99),
			    "unknown");
}

/*
 * cmp_msg_init() gives HELLO its frozen version and zeroes the type's
 * extent, which holds its whole body (every event body for EVENT, the
 * whole struct for a batch reply), and nothing beyond it.
 */
static void test_msg_init(void **state)
{
	static const struct cmp_msg zero;
	struct cmp_msg m;

	(void)state;
	memset(&m, 0xee, sizeof(m));
	cmp_msg_init(&m, CMP_TYPE_HELLO, 5);
	assert_int_equal(m.hdr.version, CMP_VERSION_HELLO);
	assert_int_equal(m.hdr.type, CMP_TYPE_HELLO);
	assert_int_equal(m.hdr.seq, 5);
	assert_int_equal(cmp_msg_extent(CMP_TYPE_HELLO),
			 sizeof(m.hdr) + sizeof(m.hello));
	assert_memory_equal(m.body, zero.body, sizeof(m.hello));
	assert_int_equal(m.body[sizeof(m.hello)], 0xee);
	cmp_msg_init(&m, CMP_TYPE_LIST, 6);
	assert_int_equal(m.hdr.version, CMP_VERSION);

	memset(&m, 0xee, sizeof(m));
	cmp_msg_init(&m, CMP_TYPE_EVENT, 7);
	assert_int_equal(cmp_msg_extent(CMP_TYPE_EVENT),
			 sizeof(m.hdr) + sizeof(m.event));
	assert_memory_equal(m.body, zero.body, sizeof(m.event));
	memset(&m, 0xee, sizeof(m));
	cmp_msg_init(&m, CMP_TYPE_LIST_REPLY, 8);
	assert_int_equal(cmp_msg_extent(CMP_TYPE_LIST_REPLY), sizeof(m));
	assert_memory_equal(m.body, zero.body, sizeof(m.body));
	assert_int_equal(cmp_msg_extent((enum cmp_type)0x7fff), sizeof(m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_golden),
		cmocka_unit_test(test_noreply_golden),
		cmocka_unit_test(test_event_golden),
		cmocka_unit_test(test_hello_golden),
		cmocka_unit_test(test_ports_golden),
		cmocka_unit_test(test_paths_golden),
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_roundtrip_failed_replies),
		cmocka_unit_test(test_reply_why),
		cmocka_unit_test(test_roundtrip_variants),
		cmocka_unit_test(test_roundtrip_pipelining),
		cmocka_unit_test(test_full_batches),
		cmocka_unit_test(test_malformed_framing),
		cmocka_unit_test(test_malformed_header),
		cmocka_unit_test(test_malformed_requests),
		cmocka_unit_test(test_malformed_replies),
		cmocka_unit_test(test_malformed_events),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_byte_corruption),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_msg_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
