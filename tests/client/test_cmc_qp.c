/* SPDX-License-Identifier: MIT */
/*
 * QP attributes from the negotiated connection: the pure computation
 * (cmc_qp_attr_from_info) for IB and RoCE paths, RC and UC, every target
 * and the states that refuse it; then the library's bookkeeping behind
 * cmc_init_qp_attr() against the fake daemon (values kept from
 * REQ_RECEIVED/REP_RECEIVED and CONNECT/ACCEPT, QUERY_ID only when they
 * are missing).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "client_fixture.h"

static const uint8_t gid_l[16] = { 0xfe, 0x80, [8] = 0x02, [15] = 0x01 };
static const uint8_t gid_r[16] = { 0xfe, 0x80, [8] = 0x02, [15] = 0x02 };
static const uint8_t roce_r[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };

/*
 * An IB path: LID routed, no GRH. A macro, because it fills the public
 * struct cmc_path (the expectations) and the wire's struct cmp_path (what
 * the fake daemon sends) alike: their members have the same names.
 */
#define IB_PATH(p)                                                             \
	do {                                                                   \
		memset((p), 0, sizeof(*(p)));                                  \
		(p)->local_lid = 0x11;                                         \
		(p)->remote_lid = 0x22;                                        \
		(p)->pkey = 0xffff;                                            \
		(p)->pkey_index = 3;                                           \
		(p)->port_num = 2;                                             \
		(p)->mtu = IBV_MTU_2048;                                       \
		(p)->sl = 5;                                                   \
		(p)->packet_rate = IBV_RATE_40_GBPS;                           \
		(p)->local_ack_timeout = 18;                                   \
		(p)->packet_life_time = 16;                                    \
		memcpy((p)->local_gid, gid_l, 16);                             \
		memcpy((p)->remote_gid, gid_r, 16);                            \
		strcpy((p)->dev_name, "mlx5_0");                               \
	} while (0)

/* A RoCE v2 path: GRH always, no LIDs (either struct, as IB_PATH). */
#define ROCE_PATH(p)                                                           \
	do {                                                                   \
		memset((p), 0, sizeof(*(p)));                                  \
		(p)->pkey = 0xffff;                                            \
		(p)->port_num = 1;                                             \
		(p)->mtu = IBV_MTU_1024;                                       \
		(p)->traffic_class = 0x68;                                     \
		(p)->hop_limit = 64;                                           \
		(p)->flow_label = 0x12345;                                     \
		(p)->sgid_index = 3;                                           \
		(p)->grh = 1;                                                  \
		(p)->local_ack_timeout = 14;                                   \
		memcpy((p)->remote_gid, roce_r, 16);                           \
		strcpy((p)->dev_name, "rxe0");                                 \
	} while (0)

static void established_rc(struct cmc_id_info *in)
{
	memset(in, 0, sizeof(*in));
	in->id = 5;
	in->state = CMC_STATE_ESTABLISHED;
	in->qp_type = CMC_QP_RC;
	in->local_qpn = 0x100;
	in->remote_qpn = 0x200;
	in->local_psn = 0x111111;
	in->remote_psn = 0x222222;
	in->responder_resources = 4;
	in->initiator_depth = 2;
	in->retry_count = 6;
	in->rnr_retry_count = 7;
	IB_PATH(&in->path);
}

static void test_init_ib(void **state)
{
	struct cmc_id_info in;
	struct ibv_qp_attr a;
	int mask;

	(void)state;
	established_rc(&in);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			 0);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
				       IBV_QP_PKEY_INDEX | IBV_QP_PORT);
	assert_int_equal(a.qp_state, IBV_QPS_INIT);
	assert_int_equal(a.qp_access_flags, IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(a.pkey_index, 3);
	assert_int_equal(a.port_num, 2);

	/* No responder resources: no remote reads or atomics. */
	in.responder_resources = 0;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			 0);
	assert_int_equal(a.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);

	/* UC never serves reads. */
	in.responder_resources = 4;
	in.qp_type = CMC_QP_UC;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			 0);
	assert_int_equal(a.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
}

static void test_rtr_ib(void **state)
{
	struct cmc_id_info in;
	struct ibv_qp_attr a;
	int mask;

	(void)state;
	established_rc(&in);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask), 0);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER);
	assert_int_equal(a.qp_state, IBV_QPS_RTR);
	assert_int_equal(a.path_mtu, IBV_MTU_2048);
	assert_int_equal(a.dest_qp_num, 0x200);
	assert_int_equal(a.rq_psn, 0x222222);
	assert_int_equal(a.max_dest_rd_atomic, 4);
	assert_int_equal(a.min_rnr_timer, 0);
	assert_int_equal(a.ah_attr.dlid, 0x22);
	assert_int_equal(a.ah_attr.sl, 5);
	assert_int_equal(a.ah_attr.static_rate, IBV_RATE_40_GBPS);
	assert_int_equal(a.ah_attr.port_num, 2);
	assert_int_equal(a.ah_attr.src_path_bits, 0);
	assert_int_equal(a.ah_attr.is_global, 0);
	assert_int_equal(a.ah_attr.grh.hop_limit, 0);

	/* Off-subnet IB: the path asks for a GRH. */
	in.path.grh = 1;
	in.path.hop_limit = 4;
	in.path.sgid_index = 1;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask), 0);
	assert_int_equal(a.ah_attr.is_global, 1);
	assert_int_equal(a.ah_attr.dlid, 0x22);
	assert_memory_equal(a.ah_attr.grh.dgid.raw, gid_r, 16);
	assert_int_equal(a.ah_attr.grh.hop_limit, 4);
	assert_int_equal(a.ah_attr.grh.sgid_index, 1);
}

static void test_rtr_roce(void **state)
{
	struct cmc_id_info in;
	struct ibv_qp_attr a;
	int mask;

	(void)state;
	established_rc(&in);
	ROCE_PATH(&in.path);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask), 0);
	assert_int_equal(a.path_mtu, IBV_MTU_1024);
	assert_int_equal(a.ah_attr.is_global, 1);
	assert_int_equal(a.ah_attr.dlid, 0);
	assert_int_equal(a.ah_attr.port_num, 1);
	assert_memory_equal(a.ah_attr.grh.dgid.raw, roce_r, 16);
	assert_int_equal(a.ah_attr.grh.sgid_index, 3);
	assert_int_equal(a.ah_attr.grh.hop_limit, 64);
	assert_int_equal(a.ah_attr.grh.traffic_class, 0x68);
	assert_int_equal(a.ah_attr.grh.flow_label, 0x12345);
	assert_false(mask & IBV_QP_ALT_PATH);
}

static void test_rts(void **state)
{
	struct cmc_id_info in;
	struct ibv_qp_attr a;
	int mask;

	(void)state;
	established_rc(&in);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTS, &a, &mask), 0);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC);
	assert_int_equal(a.qp_state, IBV_QPS_RTS);
	assert_int_equal(a.sq_psn, 0x111111);
	assert_int_equal(a.timeout, 18);
	assert_int_equal(a.retry_cnt, 6);
	assert_int_equal(a.rnr_retry, 7);
	assert_int_equal(a.max_rd_atomic, 2);

	/* UC: the PSN only; UC has no ACKs, retries or reads. */
	in.qp_type = CMC_QP_UC;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTS, &a, &mask), 0);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask), 0);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
}

static void test_alt_path(void **state)
{
	struct cmc_id_info in;
	struct ibv_qp_attr a;
	int mask;

	(void)state;
	established_rc(&in);
	in.has_alt_path = 1;
	IB_PATH(&in.alt_path);
	in.alt_path.remote_lid = 0x33;
	in.alt_path.port_num = 0; /* the primary's */
	in.alt_path.local_ack_timeout = 20;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask), 0);
	assert_true(mask & IBV_QP_ALT_PATH);
	assert_int_equal(a.alt_ah_attr.dlid, 0x33);
	assert_int_equal(a.alt_port_num, 2);
	assert_int_equal(a.alt_ah_attr.port_num, 2);
	assert_int_equal(a.alt_pkey_index, 3);
	assert_int_equal(a.alt_timeout, 20);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTS, &a, &mask), 0);
	assert_true(mask & IBV_QP_ALT_PATH);
	assert_true(mask & IBV_QP_PATH_MIG_STATE);
	assert_int_equal(a.path_mig_state, IBV_MIG_REARM);
}

static void test_states(void **state)
{
	struct cmc_id_info in;
	struct ibv_qp_attr a;
	int mask;
	static const struct {
		enum cmc_state s;
		int init, rtr, rts;
	} t[] = {
		{ CMC_STATE_IDLE, -EINVAL, -EINVAL, -EINVAL },
		{ CMC_STATE_LISTEN, -EINVAL, -EINVAL, -EINVAL },
		{ CMC_STATE_REQ_SENT, 0, -EINVAL, -EINVAL },
		{ CMC_STATE_MRA_REQ_RCVD, 0, -EINVAL, -EINVAL },
		{ CMC_STATE_REQ_RCVD, 0, 0, 0 },
		{ CMC_STATE_MRA_REQ_SENT, 0, 0, 0 },
		{ CMC_STATE_REP_SENT, 0, 0, 0 },
		{ CMC_STATE_REP_RCVD, 0, 0, 0 },
		{ CMC_STATE_MRA_REP_SENT, 0, 0, 0 },
		{ CMC_STATE_MRA_REP_RCVD, 0, 0, 0 },
		{ CMC_STATE_ESTABLISHED, 0, 0, 0 },
		{ CMC_STATE_DREQ_SENT, -EINVAL, -EINVAL, -EINVAL },
		{ CMC_STATE_DREQ_RCVD, -EINVAL, -EINVAL, -EINVAL },
		{ CMC_STATE_TIMEWAIT, -EINVAL, -EINVAL, -EINVAL },
		{ CMC_STATE_SIDR_REQ_SENT, -EINVAL, -EINVAL, -EINVAL },
		{ CMC_STATE_SIDR_REQ_RCVD, -EINVAL, -EINVAL, -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		established_rc(&in);
		in.state = t[i].s;
		assert_int_equal(
			cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			t[i].init);
		assert_int_equal(
			cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask),
			t[i].rtr);
		assert_int_equal(
			cmc_qp_attr_from_info(&in, IBV_QPS_RTS, &a, &mask),
			t[i].rts);
		if (t[i].rts)
			assert_int_equal(mask, 0);
	}

	established_rc(&in);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_SQD, &a, &mask),
			 -EINVAL);
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RESET, &a, &mask),
			 -EINVAL);
	/* RTS before ACCEPT: our SQ PSN is not announced yet. */
	in.local_qpn = 0;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTS, &a, &mask),
			 -EINVAL);
	/* RTR without the peer's QPN or with no MTU. */
	established_rc(&in);
	in.remote_qpn = 0;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask),
			 -EINVAL);
	established_rc(&in);
	in.path.mtu = 0;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_RTR, &a, &mask),
			 -EINVAL);
	/* No port yet. */
	established_rc(&in);
	in.path.port_num = 0;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			 -EINVAL);
	established_rc(&in);
	in.qp_type = CMC_QP_UD;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			 -EOPNOTSUPP);
	in.qp_type = 0;
	assert_int_equal(cmc_qp_attr_from_info(&in, IBV_QPS_INIT, &a, &mask),
			 -EINVAL);
}

/* --- Through the library ------------------------------------------- */

static int setup(void **state)
{
	return fx_setup(state, "qp", 20, NULL);
}

/* Passive: everything comes from the REQ and ACCEPT, no QUERY_ID. */
static void test_passive_flow(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l, *n;
	struct cmc_event *ev;
	struct ibv_qp_attr a;
	struct cmp_msg m;
	uint32_t rq;
	int mask;
	struct cmc_accept_param ap = {
		.qp_num = 0x4444,
		.start_psn = 0x55,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &l), 0);
	assert_int_equal(cmc_listen(l, 9, ~0ull, 1, NULL), 0);
	fake_event(&m, 300, CMP_EVENT_REQ_RECEIVED, 0);
	m.event.req_received.listen_id = cmc_id_num(l);
	m.event.req_received.qp_type = CMP_QP_TYPE_RC;
	m.event.req_received.remote_qpn = 0x777;
	m.event.req_received.start_psn = 0x888;
	m.event.req_received.responder_resources = 2; /* its reads as target */
	m.event.req_received.initiator_depth = 3; /* its reads as initiator */
	m.event.req_received.retry_count = 5;
	m.event.req_received.rnr_retry_count = 4;
	ROCE_PATH(&m.event.req_received.path);
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	n = ev->id;

	assert_int_equal(cmc_init_qp_attr(n, IBV_QPS_INIT, &a, &mask), 0);
	assert_int_equal(a.port_num, 1);
	assert_int_equal(cmc_init_qp_attr(n, IBV_QPS_RTR, &a, &mask), 0);
	assert_int_equal(a.dest_qp_num, 0x777);
	/* Linux's reading of Starting PSN: our RQ starts at the PSN the REP
	 * will announce, chosen now (RTR before ACCEPT), not ap's. */
	rq = a.rq_psn;
	assert_true(rq > 0 && rq <= 0xffffff);
	/* Before ACCEPT: the most the REQ allows us to serve. */
	assert_int_equal(a.max_dest_rd_atomic, 3);
	assert_int_equal(a.ah_attr.is_global, 1);
	assert_int_equal(cmc_init_qp_attr(n, IBV_QPS_RTS, &a, &mask), -EINVAL);
	assert_int_equal(cmc_accept(n, &ap), 0);
	assert_int_equal(cmc_init_qp_attr(n, IBV_QPS_RTS, &a, &mask), 0);
	assert_int_equal(a.sq_psn, 0x888);
	assert_int_equal(fake_last(x->f, CMP_TYPE_ACCEPT)->accept.start_psn,
			 rq);
	assert_int_equal(a.max_rd_atomic, 1);
	assert_int_equal(a.retry_cnt, 5);
	assert_int_equal(a.rnr_retry, 4);
	assert_int_equal(a.timeout, 14);
	assert_int_equal(fake_count(x->f, CMP_TYPE_QUERY_ID), 0);
	assert_int_equal(cmc_modify_qp(n, NULL, IBV_QPS_RTS), -EINVAL);
	assert_int_equal(cmc_ack_event(ev), 0);
}

/* Active: INIT right after CONNECT asks the daemon for the port. */
static void test_active_flow(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id, *ud;
	struct cmc_event *ev;
	struct ibv_qp_attr a;
	struct cmp_msg m;
	int mask;
	struct cmc_conn_param p = {
		.service_id = 9,
		.dst = { .family = CMC_AF_GID },
		.qp_num = 0x900,
		.start_psn = 0x901,
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 3,
		.rnr_retry_count = 2,
	};

	memcpy(p.dst.addr, gid_r, 16);
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	/* IDLE: nothing to compute, and the daemon agrees. */
	x->f->query_info.qp_type = CMP_QP_TYPE_RC;
	assert_int_equal(cmc_init_qp_attr(id, IBV_QPS_INIT, &a, &mask),
			 -EINVAL);
	assert_int_equal(cmc_connect(id, &p), 0);
	x->f->query_info.state = CMP_STATE_REQ_SENT;
	x->f->query_info.local_qpn = 0x900;
	x->f->query_info.local_psn = 0x901;
	x->f->query_info.retry_count = 3;
	x->f->query_info.rnr_retry_count = 2;
	x->f->query_info.responder_resources = 4;
	x->f->query_info.initiator_depth = 4;
	IB_PATH(&x->f->query_info.path);
	assert_int_equal(cmc_init_qp_attr(id, IBV_QPS_INIT, &a, &mask), 0);
	assert_int_equal(a.port_num, 2);
	assert_int_equal(a.pkey_index, 3);
	assert_int_equal(fake_count(x->f, CMP_TYPE_QUERY_ID), 2);
	/* RTR needs the peer's QPN, which only the REP brings. */
	assert_int_equal(cmc_init_qp_attr(id, IBV_QPS_RTR, &a, &mask), -EINVAL);

	fake_event(&m, cmc_id_num(id), CMP_EVENT_REP_RECEIVED, 0);
	m.event.rep_received.remote_qpn = 0xabc;
	m.event.rep_received.start_psn = 0xdef;
	m.event.rep_received.responder_resources = 1;
	m.event.rep_received.initiator_depth = 2;
	m.event.rep_received.rnr_retry_count = 6;
	IB_PATH(&m.event.rep_received.path);
	m.event.rep_received.path.local_ack_timeout = 19;
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_get_event_id(x->ch, id, &ev, FX_WAIT_MS), 0);
	assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_init_qp_attr(id, IBV_QPS_RTR, &a, &mask), 0);
	assert_int_equal(a.dest_qp_num, 0xabc);
	assert_int_equal(a.rq_psn, 0x901);
	assert_int_equal(a.max_dest_rd_atomic, 2);
	assert_int_equal(a.ah_attr.dlid, 0x22);
	assert_int_equal(a.ah_attr.is_global, 0);
	assert_int_equal(cmc_init_qp_attr(id, IBV_QPS_RTS, &a, &mask), 0);
	assert_int_equal(a.sq_psn, 0xdef);
	assert_int_equal(a.max_rd_atomic, 1);
	assert_int_equal(a.retry_cnt, 3);
	assert_int_equal(a.rnr_retry, 6);
	assert_int_equal(a.timeout, 19);
	/* The REP had all RTR and RTS need. */
	assert_int_equal(fake_count(x->f, CMP_TYPE_QUERY_ID), 2);
	assert_int_equal(cmc_ack_event(ev), 0);

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_UD, &ud), 0);
	assert_int_equal(cmc_init_qp_attr(ud, IBV_QPS_INIT, &a, &mask),
			 -EOPNOTSUPP);
	assert_int_equal(cmc_init_qp_attr(id, IBV_QPS_ERR, &a, &mask), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_ib),
		cmocka_unit_test(test_rtr_ib),
		cmocka_unit_test(test_rtr_roce),
		cmocka_unit_test(test_rts),
		cmocka_unit_test(test_alt_path),
		cmocka_unit_test(test_states),
		cmocka_unit_test_setup_teardown(test_passive_flow, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_active_flow, setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
