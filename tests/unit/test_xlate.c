// SPDX-License-Identifier: MIT
/*
 * Golden cases for the event translation (daemon/xlate.h) and the path
 * arithmetic under it (daemon/path.h): fake ports, fixed engine events,
 * and the exact client protocol event each must become, compared whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "path.h"
#include "sa_golden_bytes.h"
#include "sa_path.h"
#include "xlate.h"

#define GID_IB                                                                 \
	{                                                                      \
		0xfe, 0x80, [8] = 0x02, [15] = 0x11                            \
	}
#define GID_V4                                                                 \
	{                                                                      \
		[10] = 0xff, [11] = 0xff, 192, 0, 2, 1                         \
	} /* ::ffff:192.0.2.1 */

static const uint8_t gid_ib[CM_GID_SIZE] = GID_IB;
static const uint8_t gid_peer_ib[CM_GID_SIZE] = {
	0xfe, 0x80, [8] = 0x02, [15] = 0x22
};
static const uint8_t gid_v4[CM_GID_SIZE] = GID_V4;
/* ::ffff:192.0.2.2 */
static const uint8_t gid_peer_v4[CM_GID_SIZE] = { [10] = 0xff, [11] = 0xff, 192,
						  0,	       2,	    2 };

/* Port 1: IB, mlx5_0 port 1, LID 0x11. Port 2: RoCE, rxe0 port 1. */
static struct xport_port ports[2] = {
	{
		.dev = "mlx5_0",
		.port_num = 1,
		.index = 1,
		.up = true,
		.lid = 0x11,
		.state = XPORT_PORT_ACTIVE,
		.active_mtu = 4096,
		.link = XPORT_LINK_IB,
		.pkey_tbl_len = 2,
		.pkeys = { 0xffff, 0x8001 },
		.n_gids = 1,
		.gids = { { .raw = GID_IB } },
	},
	{
		.dev = "rxe0",
		.port_num = 1,
		.index = 2,
		.up = true,
		.state = XPORT_PORT_ACTIVE,
		.active_mtu = 1024,
		.link = XPORT_LINK_ROCE,
		.pkey_tbl_len = 1,
		.pkeys = { 0xffff },
		.n_gids = 2,
		.gids = { { .raw = { 0xfe, 0x80 }, .index = 0 },
			  { .raw = GID_V4,
			    .index = 1,
			    .type = XPORT_GID_ROCE_V2 } },
	},
};
static struct xport fab = { .first_index = 1, .n_ports = 2, .ports = ports };

static bool path_is_zero(const struct cmp_path *p)
{
	static const struct cmp_path zero;

	return !memcmp(p, &zero, sizeof(zero));
}

static void fill(uint8_t *p, size_t n, uint8_t first)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(first + i);
}

/* An engine event of one id (7), context 0xc0ffee, as the engine makes it. */
static struct eng_event event(enum eng_event_type type, enum eng_state st)
{
	struct eng_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.id = 7;
	ev.owner = 3;
	ev.context = 0xc0ffee;
	if (type == ENG_EV_REQ_RECEIVED || type == ENG_EV_SIDR_REQ_RECEIVED) {
		/* A new passive id has no context of its own: the event
		 * carries its listener's (cmclient.h). */
		ev.context = 0;
		ev.listen_context = 0xc0ffee;
	}
	ev.state = st;
	ev.lap = ENG_LAP_IDLE;
	return ev;
}

/* What every translated event of id 7 starts with. */
static struct cmp_event want_of(enum cmp_event_type type, enum cmp_state st)
{
	struct cmp_event w;

	memset(&w, 0, sizeof(w));
	w.id = 7;
	w.type = (uint16_t)type;
	w.state = (uint8_t)st;
	w.context = 0xc0ffee;
	return w;
}

static void check(const struct eng_event *ev, const struct cmp_path *told,
		  const struct cmp_event *want)
{
	struct cmp_event got;

	memset(&got, 0xa5, sizeof(got)); /* nothing may be left unset */
	xlate_event(&fab, told, ev, &got);
	assert_int_equal(got.type, want->type);
	assert_int_equal(got.state, want->state);
	assert_int_equal(got.lap_state, want->lap_state);
	assert_int_equal(got.status, want->status);
	assert_memory_equal(&got, want, sizeof(got));
}

/* A REQ from LID 0x22 / the peer's GID: the terms a kernel CM sends. */
static void req_msg(struct cm_msg *m)
{
	struct cm_req *q = &m->req;

	memset(m, 0, sizeof(*m));
	m->type = CM_MSG_REQ;
	q->local_comm_id = 0x11223344;
	q->service_id = 0x0000000001060000ULL | 4791;
	q->local_ca_guid = 0x0002c90300a1b2c3ULL;
	q->local_qpn = 0x000abc;
	q->responder_resources = 4;
	q->initiator_depth = 2;
	q->remote_cm_resp_timeout = 20;
	q->transport_type = CM_TRANSPORT_UC;
	q->flow_control = 1;
	q->starting_psn = 0x123456;
	q->local_cm_resp_timeout = 18;
	q->retry_count = 7;
	q->pkey = 0x8001;
	q->path_mtu = 5; /* 4096 */
	q->rnr_retry_count = 6;
	q->max_cm_retries = 15;
	q->srq = 1;
	q->primary_local_lid = 0x22;
	q->primary_remote_lid = 0x11;
	memcpy(q->primary_local_gid, gid_peer_ib, CM_GID_SIZE);
	memcpy(q->primary_remote_gid, gid_ib, CM_GID_SIZE);
	q->primary_flow_label = 0xabcde;
	q->primary_packet_rate = 16;
	q->primary_traffic_class = 0x20;
	q->primary_hop_limit = 1;
	q->primary_sl = 3;
	q->primary_local_ack_timeout = 15; /* PLT 14 */
	fill(q->private_data, sizeof(q->private_data), 0x40);
}

/* What both REQs become, but for the QP type and the path. */
static struct cmp_event want_req(uint8_t qp_type, struct cmp_path path)
{
	struct cmp_event w =
		want_of(CMP_EVENT_REQ_RECEIVED, CMP_STATE_REQ_RCVD);

	w.req_received = (struct cmp_ev_req){
		.listen_id = 5,
		.remote_comm_id = 0x11223344,
		.remote_qpn = 0x000abc,
		.start_psn = 0x123456,
		.service_id = 0x0000000001060000ULL | 4791,
		.remote_ca_guid = 0x0002c90300a1b2c3ULL,
		.qp_type = qp_type,
		/* As the requester offered them; the id's own view is
		 * the engine's (eng_id_info), swapped. */
		.responder_resources = 4,
		.initiator_depth = 2,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 6,
		.srq = 1,
		.private_data_len = CM_REQ_PRIVATE_DATA_SIZE,
		.path = path,
	};
	fill(w.req_received.private_data, CM_REQ_PRIVATE_DATA_SIZE, 0x40);
	return w;
}

static void test_req_received_ib(void **state)
{
	struct eng_event ev = event(ENG_EV_REQ_RECEIVED, ENG_STATE_REQ_RCVD);
	/* The path from this side: the REQ's local fields are our remote. */
	struct cmp_event w = want_req(
		CMP_QP_TYPE_UC, (struct cmp_path){
					.flow_label = 0xabcde,
					.local_lid = 0x11, /* the port's */
					.remote_lid = 0x22,
					.pkey = 0x8001,
					.pkey_index = 1,
					.port_num = 1,
					.mtu = 5,
					.sl = 3,
					.traffic_class = 0x20,
					.hop_limit = 1,
					.packet_rate = 16,
					.local_ack_timeout = 15,
					.packet_life_time = 14,
					.dev_name = "mlx5_0",
				});
	struct cmp_path none = { 0 };

	(void)state;
	memcpy(w.req_received.path.local_gid, gid_ib, CM_GID_SIZE);
	memcpy(w.req_received.path.remote_gid, gid_peer_ib, CM_GID_SIZE);
	ev.listen_id = 5;
	ev.addr.port = 1;
	ev.addr.lid = 0x22;
	ev.has_msg = true;
	req_msg(&ev.msg);
	check(&ev, &none, &w);
}

static void test_req_received_roce(void **state)
{
	struct eng_event ev = event(ENG_EV_REQ_RECEIVED, ENG_STATE_REQ_RCVD);
	/* RoCE: a GRH, no LIDs, the source GID's index in our table. */
	struct cmp_event w =
		want_req(CMP_QP_TYPE_RC, (struct cmp_path){
						 .flow_label = 0xabcde,
						 .pkey = 0xffff,
						 .port_num = 1,
						 .mtu = 3,
						 .sl = 3,
						 .traffic_class = 0x20,
						 .hop_limit = 64,
						 .packet_rate = 16,
						 .local_ack_timeout = 15,
						 .packet_life_time = 14,
						 .sgid_index = 1,
						 .grh = 1,
						 .dev_name = "rxe0",
					 });
	struct cm_req *q = &ev.msg.req;
	struct cmp_path none = { 0 };

	(void)state;
	memcpy(w.req_received.path.local_gid, gid_v4, CM_GID_SIZE);
	memcpy(w.req_received.path.remote_gid, gid_peer_v4, CM_GID_SIZE);
	ev.listen_id = 5;
	ev.addr.port = 2;
	ev.addr.grh = true;
	memcpy(ev.addr.gid, gid_peer_v4, CM_GID_SIZE);
	ev.has_msg = true;
	req_msg(&ev.msg);
	q->transport_type = CM_TRANSPORT_RC;
	q->pkey = 0xffff;
	q->path_mtu = 3; /* 1024 */
	memcpy(q->primary_local_gid, gid_peer_v4, CM_GID_SIZE);
	memcpy(q->primary_remote_gid, gid_v4, CM_GID_SIZE);
	q->primary_local_lid = 0xffff; /* RoCE: permissive LIDs */
	q->primary_remote_lid = 0xffff;
	q->primary_hop_limit = 64;
	check(&ev, &none, &w);
}

/* The path CONNECT resolved, as the active id was told it. */
static struct cmp_path told_ib(void)
{
	struct cmp_path p = {
		.local_lid = 0x11,
		.remote_lid = 0x22,
		.pkey = 0xffff,
		.port_num = 1,
		.mtu = 5,
		.sl = 3,
		.local_ack_timeout = 15,
		.packet_life_time = 14,
		.dev_name = "mlx5_0",
	};

	memcpy(p.local_gid, gid_ib, CM_GID_SIZE);
	memcpy(p.remote_gid, gid_peer_ib, CM_GID_SIZE);
	return p;
}

static void test_rep_received(void **state)
{
	struct eng_event ev = event(ENG_EV_REP_RECEIVED, ENG_STATE_REP_RCVD);
	struct cmp_event w =
		want_of(CMP_EVENT_REP_RECEIVED, CMP_STATE_REP_RCVD);
	struct cmp_ev_rep *b = &w.rep_received;
	struct cm_rep *r = &ev.msg.rep;
	struct cmp_path told = told_ib();

	(void)state;
	ev.has_msg = true;
	ev.msg.type = CM_MSG_REP;
	r->local_comm_id = 0x55667788;
	r->remote_comm_id = 7;
	r->local_qpn = 0x00beef;
	r->starting_psn = 0xabcdef;
	r->responder_resources = 1;
	r->initiator_depth = 3;
	r->target_ack_delay = 16;
	r->failover_accepted = 3; /* reserved: reported as rejected */
	r->flow_control = 1;
	r->rnr_retry_count = 7;
	r->srq = 0;
	r->local_ca_guid = 0x0002c90300d4e5f6ULL;
	fill(r->private_data, sizeof(r->private_data), 0x80);
	b->remote_qpn = 0x00beef;
	b->start_psn = 0xabcdef;
	b->remote_ca_guid = 0x0002c90300d4e5f6ULL;
	b->responder_resources = 1;
	b->initiator_depth = 3;
	b->target_ack_delay = 16;
	b->failover = CMP_FAILOVER_REJECTED;
	b->flow_control = 1;
	b->rnr_retry_count = 7;
	b->private_data_len = CM_REP_PRIVATE_DATA_SIZE;
	fill(b->private_data, CM_REP_PRIVATE_DATA_SIZE, 0x80);
	/* The told path, its ACK timeout now covering the peer's 2^16 ACK
	 * delay over a PLT of 14: 16 + (15 >= 15) = 17. */
	b->path = told;
	b->path.local_ack_timeout = 17;
	check(&ev, &told, &w);
}

static void test_rej_received(void **state)
{
	struct eng_event ev = event(ENG_EV_REJ_RECEIVED, ENG_STATE_TIMEWAIT);
	struct cmp_event w =
		want_of(CMP_EVENT_REJ_RECEIVED, CMP_STATE_TIMEWAIT);
	struct cm_rej *j = &ev.msg.rej;
	struct cmp_path told = told_ib();

	(void)state;
	ev.has_msg = true;
	ev.msg.type = CM_MSG_REJ;
	j->reason = CM_REJ_INVALID_SERVICE_ID;
	j->ari_length = 3;
	j->ari[0] = 1;
	j->ari[1] = 2;
	j->ari[2] = 3;
	fill(j->private_data, sizeof(j->private_data), 0x10);
	w.rej_received.reason = CM_REJ_INVALID_SERVICE_ID;
	w.rej_received.ari_len = 3;
	w.rej_received.ari[0] = 1;
	w.rej_received.ari[1] = 2;
	w.rej_received.ari[2] = 3;
	w.rej_received.private_data_len = CM_REJ_PRIVATE_DATA_SIZE;
	fill(w.rej_received.private_data, CM_REJ_PRIVATE_DATA_SIZE, 0x10);
	check(&ev, &told, &w);
}

/* Our REQ unanswered: -ETIMEDOUT unless the engine said why. */
static void test_connect_error(void **state)
{
	struct eng_event ev = event(ENG_EV_REQ_ERROR, ENG_STATE_IDLE);
	struct cmp_event w = want_of(CMP_EVENT_CONNECT_ERROR, CMP_STATE_IDLE);
	struct cmp_path told = told_ib();

	(void)state;
	w.status = -ETIMEDOUT;
	w.connect_error.msg = CMP_CM_MSG_REQ;
	check(&ev, &told, &w);

	ev = event(ENG_EV_REP_ERROR, ENG_STATE_TIMEWAIT);
	ev.status = -ENETDOWN;
	w = want_of(CMP_EVENT_CONNECT_ERROR, CMP_STATE_TIMEWAIT);
	w.status = -ENETDOWN;
	w.connect_error.msg = CMP_CM_MSG_REP;
	check(&ev, &told, &w);

	ev = event(ENG_EV_SIDR_REQ_ERROR, ENG_STATE_IDLE);
	w = want_of(CMP_EVENT_CONNECT_ERROR, CMP_STATE_IDLE);
	w.status = -ETIMEDOUT;
	w.connect_error.msg = CMP_CM_MSG_SIDR_REQ;
	check(&ev, &told, &w);
}

/* The DREQ's private data when there was a DREQ; none when the engine
 * made the event itself (the peer's REQ or REP timed out in between). */
static void test_dreq_drep(void **state)
{
	struct eng_event ev = event(ENG_EV_DREQ_RECEIVED, ENG_STATE_DREQ_RCVD);
	struct cmp_event w =
		want_of(CMP_EVENT_DREQ_RECEIVED, CMP_STATE_DREQ_RCVD);
	struct cmp_path told = told_ib();

	(void)state;
	check(&ev, &told, &w);
	ev.has_msg = true;
	ev.msg.type = CM_MSG_DREQ;
	fill(ev.msg.dreq.private_data, CM_DREQ_PRIVATE_DATA_SIZE, 1);
	w.dreq_received.private_data_len = CM_DREQ_PRIVATE_DATA_SIZE;
	fill(w.dreq_received.private_data, CM_DREQ_PRIVATE_DATA_SIZE, 1);
	check(&ev, &told, &w);

	/* DREQs that crossed: the peer's DREQ ends ours; no DREP data. */
	ev = event(ENG_EV_DREP_RECEIVED, ENG_STATE_TIMEWAIT);
	ev.has_msg = true;
	ev.msg.type = CM_MSG_DREQ;
	w = want_of(CMP_EVENT_DREP_RECEIVED, CMP_STATE_TIMEWAIT);
	check(&ev, &told, &w);
	ev.msg.type = CM_MSG_DREP;
	fill(ev.msg.drep.private_data, CM_DREP_PRIVATE_DATA_SIZE, 9);
	w.drep_received.private_data_len = CM_DREP_PRIVATE_DATA_SIZE;
	fill(w.drep_received.private_data, CM_DREP_PRIVATE_DATA_SIZE, 9);
	check(&ev, &told, &w);
}

/* The alternate path from this side: the LAP's local fields are ours. */
static void test_lap_received(void **state)
{
	struct eng_event ev = event(ENG_EV_LAP_RECEIVED, ENG_STATE_ESTABLISHED);
	struct cmp_event w =
		want_of(CMP_EVENT_LAP_RECEIVED, CMP_STATE_ESTABLISHED);
	struct cm_lap *l = &ev.msg.lap;
	struct cmp_path *p = &w.lap_received.alt_path;
	struct cmp_path told = told_ib();

	(void)state;
	ev.lap = ENG_LAP_RCVD;
	w.lap_state = CMP_LAP_STATE_LAP_RCVD;
	ev.has_msg = true;
	ev.msg.type = CM_MSG_LAP;
	l->alt_local_lid = 0x33;
	l->alt_remote_lid = 0x44;
	memcpy(l->alt_local_gid, gid_peer_ib, CM_GID_SIZE);
	memcpy(l->alt_remote_gid, gid_ib, CM_GID_SIZE);
	l->alt_flow_label = 0x12345;
	l->alt_traffic_class = 7;
	l->alt_hop_limit = 2;
	l->alt_packet_rate = 3;
	l->alt_sl = 4;
	l->alt_local_ack_timeout = 18;
	fill(l->private_data, sizeof(l->private_data), 0x60);
	*p = (struct cmp_path){
		.local_lid = 0x44,
		.remote_lid = 0x33,
		.flow_label = 0x12345,
		.traffic_class = 7,
		.hop_limit = 2,
		.packet_rate = 3,
		.sl = 4,
		.local_ack_timeout = 18,
	};
	memcpy(p->local_gid, gid_ib, CM_GID_SIZE);
	memcpy(p->remote_gid, gid_peer_ib, CM_GID_SIZE);
	w.lap_received.private_data_len = CM_LAP_PRIVATE_DATA_SIZE;
	fill(w.lap_received.private_data, CM_LAP_PRIVATE_DATA_SIZE, 0x60);
	check(&ev, &told, &w);
}

static void test_apr(void **state)
{
	struct eng_event ev = event(ENG_EV_APR_RECEIVED, ENG_STATE_ESTABLISHED);
	struct cmp_event w =
		want_of(CMP_EVENT_APR_RECEIVED, CMP_STATE_ESTABLISHED);
	struct cmp_path told = told_ib();

	(void)state;
	ev.has_msg = true;
	ev.msg.type = CM_MSG_APR;
	ev.msg.apr.status = 1;
	ev.msg.apr.info_length = 2;
	ev.msg.apr.info[0] = 0xaa;
	ev.msg.apr.info[1] = 0xbb;
	fill(ev.msg.apr.private_data, CM_APR_PRIVATE_DATA_SIZE, 0x30);
	w.apr_received.ap_status = 1;
	w.apr_received.info_len = 2;
	w.apr_received.info[0] = 0xaa;
	w.apr_received.info[1] = 0xbb;
	w.apr_received.private_data_len = CM_APR_PRIVATE_DATA_SIZE;
	fill(w.apr_received.private_data, CM_APR_PRIVATE_DATA_SIZE, 0x30);
	check(&ev, &told, &w);

	/* Our LAP unanswered: an APR event with -ETIMEDOUT and no body. */
	ev = event(ENG_EV_LAP_ERROR, ENG_STATE_ESTABLISHED);
	w = want_of(CMP_EVENT_APR_RECEIVED, CMP_STATE_ESTABLISHED);
	w.status = -ETIMEDOUT;
	check(&ev, &told, &w);
}

/* The port an established id lost is the one its path names. */
static void test_port_error(void **state)
{
	struct eng_event ev = event(ENG_EV_PORT_ERROR, ENG_STATE_ESTABLISHED);
	struct cmp_event w =
		want_of(CMP_EVENT_PORT_ERROR, CMP_STATE_ESTABLISHED);
	struct cmp_path told = told_ib();

	(void)state;
	ev.status = -ENETDOWN;
	w.status = -ENETDOWN;
	w.port.port_num = 1;
	strcpy(w.port.dev_name, "mlx5_0");
	check(&ev, &told, &w);
}

static void test_sidr(void **state)
{
	struct eng_event ev =
		event(ENG_EV_SIDR_REQ_RECEIVED, ENG_STATE_SIDR_REQ_RCVD);
	struct cmp_event w =
		want_of(CMP_EVENT_SIDR_REQ_RECEIVED, CMP_STATE_SIDR_REQ_RCVD);
	struct cmp_ev_sidr_req *b = &w.sidr_req_received;
	struct cmp_path none, told = told_ib();

	(void)state;
	memset(&none, 0, sizeof(none));
	ev.listen_id = 5;
	ev.addr.port = 2;
	ev.addr.sl = 2;
	ev.addr.grh = true;
	memcpy(ev.addr.gid, gid_peer_v4, CM_GID_SIZE);
	ev.has_msg = true;
	ev.msg.type = CM_MSG_SIDR_REQ;
	ev.msg.sidr_req.pkey = 0xffff;
	ev.msg.sidr_req.service_id = 0x0000000001110000ULL | 7471;
	fill(ev.msg.sidr_req.private_data, CM_SIDR_REQ_PRIVATE_DATA_SIZE, 3);
	b->listen_id = 5;
	b->service_id = 0x0000000001110000ULL | 7471;
	b->private_data_len = CM_SIDR_REQ_PRIVATE_DATA_SIZE;
	fill(b->private_data, CM_SIDR_REQ_PRIVATE_DATA_SIZE, 3);
	/* From the address it came from: the port's MTU, a GRH on RoCE. */
	b->path = (struct cmp_path){
		.pkey = 0xffff,
		.sl = 2,
		.port_num = 1,
		.mtu = 3,
		.grh = 1,
		.sgid_index = 1,
		.dev_name = "rxe0",
	};
	memcpy(b->path.local_gid, gid_v4, CM_GID_SIZE);
	memcpy(b->path.remote_gid, gid_peer_v4, CM_GID_SIZE);
	check(&ev, &none, &w);
	/* Sent to another GID of the port: that one, not one of the
	 * requester's family (the GRH's destination, eng_addr.local_gid). */
	memcpy(ev.addr.local_gid, ports[1].gids[0].raw, CM_GID_SIZE);
	memcpy(b->path.local_gid, ports[1].gids[0].raw, CM_GID_SIZE);
	b->path.sgid_index = 0;
	check(&ev, &none, &w);

	ev = event(ENG_EV_SIDR_REP_RECEIVED, ENG_STATE_IDLE);
	ev.has_msg = true;
	ev.msg.type = CM_MSG_SIDR_REP;
	ev.msg.sidr_rep.qpn = 0x4321;
	ev.msg.sidr_rep.qkey = 0x11111111;
	ev.msg.sidr_rep.status = 0;
	fill(ev.msg.sidr_rep.private_data, CM_SIDR_REP_PRIVATE_DATA_SIZE, 5);
	w = want_of(CMP_EVENT_SIDR_REP_RECEIVED, CMP_STATE_IDLE);
	w.sidr_rep_received.qpn = 0x4321;
	w.sidr_rep_received.qkey = 0x11111111;
	w.sidr_rep_received.private_data_len = CM_SIDR_REP_PRIVATE_DATA_SIZE;
	fill(w.sidr_rep_received.private_data, CM_SIDR_REP_PRIVATE_DATA_SIZE,
	     5);
	w.sidr_rep_received.path = told;
	check(&ev, &told, &w);
}

/* A listener's selector: the client's naming to the engine's. */
static void test_listen_sel(void **state)
{
	static const uint8_t other[CM_GID_SIZE] = { 0xfe, 0x80, [15] = 9 };
	struct cmp_port_sel sel;
	struct eng_listen_sel es;
	struct cmp_path where;

	(void)state;
	memset(&sel, 0, sizeof(sel));
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where), 0);
	assert_int_equal(es.kind, ENG_SEL_ANY);
	assert_true(path_is_zero(&where));
	assert_ptr_equal(path_sel_port(&fab, &sel), &ports[0]);

	/* A device: its ports; and where, as QUERY_ID shows it. */
	sel.kind = CMP_SEL_PORT;
	strcpy(sel.dev_name, "rxe0");
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where), 0);
	assert_int_equal(es.kind, ENG_SEL_PORTS);
	assert_true(es.ports[0] == 1u << 2);
	assert_string_equal(where.dev_name, "rxe0");
	assert_int_equal(where.port_num, 0);
	assert_ptr_equal(path_sel_port(&fab, &sel), &ports[1]);
	strcpy(sel.dev_name, "mlx5_0");
	sel.port_num = 1;
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where), 0);
	assert_true(es.ports[0] == 1u << 1);
	assert_int_equal(where.port_num, 1);
	/* Ports the daemon does not serve. */
	sel.port_num = 2;
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where), -ENODEV);
	assert_null(path_sel_port(&fab, &sel));
	strcpy(sel.dev_name, "nosuch");
	sel.port_num = 0;
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where), -ENODEV);

	/* A GID: matched as itself, whichever port has it. */
	memset(&sel, 0, sizeof(sel));
	sel.kind = CMP_SEL_GID;
	memcpy(sel.gid, gid_v4, CM_GID_SIZE);
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where), 0);
	assert_int_equal(es.kind, ENG_SEL_GID);
	assert_memory_equal(es.gid, gid_v4, CM_GID_SIZE);
	assert_true(es.ports[0] == 0);
	assert_memory_equal(where.local_gid, gid_v4, CM_GID_SIZE);
	assert_string_equal(where.dev_name, "");
	/* No served port has it: as rdma_bind_addr() to a foreign address. */
	memcpy(sel.gid, other, CM_GID_SIZE);
	assert_int_equal(path_listen_sel(&fab, &sel, &es, &where),
			 -EADDRNOTAVAIL);
}

/* Events with nothing but their type, status and state. */
static void test_plain(void **state)
{
	static const struct {
		enum eng_event_type in;
		enum cmp_event_type out;
		int status;
	} cases[] = {
		{ ENG_EV_DREQ_ERROR, CMP_EVENT_DISCONNECT_TIMEOUT, -ETIMEDOUT },
		{ ENG_EV_TIMEWAIT_EXIT, CMP_EVENT_TIMEWAIT_EXIT, 0 },
		{ ENG_EV_RTU_RECEIVED, CMP_EVENT_ESTABLISHED, 0 },
	};
	struct cmp_path told = told_ib();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eng_event ev = event(cases[i].in, ENG_STATE_IDLE);
		struct cmp_event w = want_of(cases[i].out, CMP_STATE_IDLE);

		ev.status = cases[i].status;
		w.status = cases[i].status;
		check(&ev, &told, &w);
	}
}

/* Every engine event becomes a protocol event the library knows. */
static void test_every_event(void **state)
{
	struct cmp_path told = told_ib();

	(void)state;
	for (int t = 0; t < ENG_EV__COUNT; t++) {
		struct eng_event ev =
			event((enum eng_event_type)t, ENG_STATE_ESTABLISHED);
		struct cmp_event got;

		xlate_event(&fab, &told, &ev, &got);
		assert_true(got.type >= CMP_EVENT_REQ_RECEIVED &&
			    got.type <= CMP_EVENT_MAX);
		assert_int_equal(got.state, CMP_STATE_ESTABLISHED);
	}
}

/* The kernel's cm_ack_timeout arithmetic, at its corners. */
static void test_ack_timeout(void **state)
{
	static const uint8_t cases[][3] = {
		/* ack_delay, plt, timeout */
		{ 16, 14, 17 }, /* delay dominates, round trip close */
		{ 0, 0, 2 }, /* round trip dominates, delay close */
		{ 10, 20, 21 }, /* round trip dominates */
		{ 20, 5, 20 }, /* delay dominates */
		{ 15, 14, 16 }, /* equal: one more */
		{ 31, 31, 31 }, /* capped at the field's 5 bits */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(path_ack_timeout(cases[i][0], cases[i][1]),
				 cases[i][2]);
}

/*
 * The two roads from a PathRecord to a REQ agree: sa_path_to_req()
 * directly, and sa_path_to_cmp() into the daemon's path view followed by
 * path_fill_req(), as path_resolve will go once it asks the SA. Over the
 * hand-written table's records (routed, hop limit 0x40 and 0xff) and the
 * ibsim capture's (LID routed, hop limit 0).
 */
static void test_sa_path_agrees(void **state)
{
	const uint8_t *mads[] = { pr_table_golden, opensm_ibsim_capture };

	(void)state;
	for (unsigned int k = 0; k < 2; k++) {
		struct sa_msg m;

		assert_int_equal(sa_mad_decode(mads[k], SA_MAD_SIZE,
					       SA_DECODE_NO_RMPP, &m, NULL),
				 0);
		for (unsigned int i = 0; i < 2; i++) {
			struct sa_path_rec rec;
			struct cm_req direct, via;
			struct path p;

			assert_int_equal(sa_msg_path_rec(&m, i, &rec), 0);
			memset(&direct, 0, sizeof(direct));
			memset(&via, 0, sizeof(via));
			memset(&p, 0, sizeof(p));
			assert_int_equal(sa_path_to_req(&rec, SA_PATH_PRIMARY,
							16, &direct),
					 0);
			assert_int_equal(sa_path_to_cmp(&rec, 16, &p.view), 0);
			path_fill_req(&p, &via);
			assert_memory_equal(&direct, &via, sizeof(direct));
			assert_int_equal(
				p.view.local_ack_timeout,
				path_ack_timeout(16, rec.packet_life_time));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ack_timeout),
		cmocka_unit_test(test_sa_path_agrees),
		cmocka_unit_test(test_req_received_ib),
		cmocka_unit_test(test_req_received_roce),
		cmocka_unit_test(test_rep_received),
		cmocka_unit_test(test_rej_received),
		cmocka_unit_test(test_connect_error),
		cmocka_unit_test(test_dreq_drep),
		cmocka_unit_test(test_lap_received),
		cmocka_unit_test(test_apr),
		cmocka_unit_test(test_port_error),
		cmocka_unit_test(test_sidr),
		cmocka_unit_test(test_listen_sel),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_every_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
