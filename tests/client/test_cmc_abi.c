// SPDX-License-Identifier: MIT
/*
 * libcmclient's ABI is its own (cmc_conv.c): what the fake daemon sends
 * reaches the application member by member, every member compared here
 * with what was sent; and the structs an application fills in keep their
 * reserved space for later versions, so a call refuses one whose reserved
 * space is not zero (-EINVAL) and sends nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "client_fixture.h"

static int setup(void **state)
{
	return fx_setup(state, "abi", 20, NULL);
}

static struct cmc_id *mkid(struct fx *x, enum cmc_qp_type type)
{
	struct cmc_id *id;

	assert_int_equal(cmc_create_id(x->ch, NULL, type, &id), 0);
	return id;
}

/* A wire path with every member set, and distinct from path k+1's. */
static void fill_path(struct cmp_path *w, uint8_t k)
{
	memset(w, 0, sizeof(*w));
	w->flow_label = 0xabcde + k;
	w->local_lid = (uint16_t)(0x1234 + k);
	w->remote_lid = (uint16_t)(0x2345 + k);
	w->pkey = (uint16_t)(0x8001 + k);
	w->pkey_index = (uint16_t)(7 + k);
	w->port_num = (uint8_t)(2 + k);
	w->mtu = (uint8_t)(1 + k); /* 256 .. 2048 */
	w->sl = (uint8_t)(9 + k);
	w->traffic_class = (uint8_t)(0x5a + k);
	w->hop_limit = (uint8_t)(60 + k);
	w->packet_rate = (uint8_t)(14 + k);
	w->local_ack_timeout = (uint8_t)(19 + k);
	w->sgid_index = (uint8_t)(5 + k);
	w->grh = 1;
	w->packet_life_time = (uint8_t)(17 + k);
	for (unsigned int i = 0; i < sizeof(w->local_gid); i++) {
		w->local_gid[i] = (uint8_t)(k * 32 + i + 1);
		w->remote_gid[i] = (uint8_t)(0xf0 - k * 32 - i);
	}
	snprintf(w->dev_name, sizeof(w->dev_name), "mlx5_%u", k);
}

static void expect_path(const struct cmc_path *p, const struct cmp_path *w)
{
	assert_int_equal(p->flow_label, w->flow_label);
	assert_int_equal(p->local_lid, w->local_lid);
	assert_int_equal(p->remote_lid, w->remote_lid);
	assert_int_equal(p->pkey, w->pkey);
	assert_int_equal(p->pkey_index, w->pkey_index);
	assert_int_equal(p->port_num, w->port_num);
	assert_int_equal(p->mtu, w->mtu);
	assert_int_equal(p->sl, w->sl);
	assert_int_equal(p->traffic_class, w->traffic_class);
	assert_int_equal(p->hop_limit, w->hop_limit);
	assert_int_equal(p->packet_rate, w->packet_rate);
	assert_int_equal(p->local_ack_timeout, w->local_ack_timeout);
	assert_int_equal(p->sgid_index, w->sgid_index);
	assert_int_equal(p->grh, w->grh);
	assert_int_equal(p->packet_life_time, w->packet_life_time);
	assert_memory_equal(p->local_gid, w->local_gid, CMC_GID_SIZE);
	assert_memory_equal(p->remote_gid, w->remote_gid, CMC_GID_SIZE);
	assert_string_equal(p->dev_name, w->dev_name);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(p->reserved[i], 0);
}

/* Private data of len bytes in an area of size: a pattern, zero after. */
static void fill_pd(uint8_t *pd, uint8_t *lenp, uint8_t len, uint8_t seed)
{
	for (unsigned int i = 0; i < len; i++)
		pd[i] = (uint8_t)(seed + 3 * i);
	*lenp = len;
}

/* The public copy: len bytes as sent, the rest of its area zero. */
static void expect_pd(const uint8_t *pd, size_t size, uint8_t len,
		      const uint8_t *sent, uint8_t sent_len)
{
	assert_int_equal(len, sent_len);
	assert_memory_equal(pd, sent, len);
	for (size_t i = len; i < size; i++)
		assert_int_equal(pd[i], 0);
}

/* --- wire to public ------------------------------------------------- */

/*
 * The fake daemon sends m; the event the application gets has its
 * type, status and context, and names its id. The body is the caller's
 * to compare.
 */
static struct cmc_event *deliver(struct fx *x, struct cmp_msg *m)
{
	struct cmc_event *ev;

	assert_int_equal(fake_push(x->f, m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(ev->type, m->event.type);
	assert_int_equal(ev->status, m->event.status);
	assert_ptr_equal(ev->context, (void *)(uintptr_t)m->event.context);
	assert_int_equal(cmc_id_num(ev->id), m->event.id);
	return ev;
}

static void test_req_received(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkid(x, CMC_QP_RC);
	const struct cmp_ev_req *w;
	const struct cmp_msg *lap;
	struct cmc_event *ev;
	struct cmp_msg m;

	assert_int_equal(cmc_listen(l, 0x77, ~0ull, 4, NULL), 0);
	fake_event(&m, 600, CMP_EVENT_REQ_RECEIVED, 0x5150);
	m.event.req_received.listen_id = cmc_id_num(l);
	m.event.req_received.remote_comm_id = 0x11223344;
	m.event.req_received.remote_qpn = 0xabcdef;
	m.event.req_received.start_psn = 0x123456;
	m.event.req_received.service_id = 0x0102030405060708ull;
	m.event.req_received.remote_ca_guid = 0x1122334455667788ull;
	m.event.req_received.qp_type = CMP_QP_TYPE_UC;
	m.event.req_received.responder_resources = 3;
	m.event.req_received.initiator_depth = 5;
	m.event.req_received.flow_control = 1;
	m.event.req_received.retry_count = 6;
	m.event.req_received.rnr_retry_count = 4;
	m.event.req_received.srq = 1;
	fill_path(&m.event.req_received.path, 0);
	fill_pd(m.event.req_received.private_data,
		&m.event.req_received.private_data_len, 40, 1);
	w = &m.event.req_received;
	ev = deliver(x, &m);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_ptr_equal(ev->listen_id, l);
	assert_int_equal(ev->u.req.listen_id, w->listen_id);
	assert_int_equal(ev->u.req.remote_comm_id, w->remote_comm_id);
	assert_int_equal(ev->u.req.remote_qpn, w->remote_qpn);
	assert_int_equal(ev->u.req.start_psn, w->start_psn);
	assert_int_equal(ev->u.req.service_id, w->service_id);
	assert_int_equal(ev->u.req.remote_ca_guid, w->remote_ca_guid);
	assert_int_equal(ev->u.req.qp_type, CMC_QP_UC);
	assert_int_equal(ev->u.req.responder_resources, w->responder_resources);
	assert_int_equal(ev->u.req.initiator_depth, w->initiator_depth);
	assert_int_equal(ev->u.req.flow_control, w->flow_control);
	assert_int_equal(ev->u.req.retry_count, w->retry_count);
	assert_int_equal(ev->u.req.rnr_retry_count, w->rnr_retry_count);
	assert_int_equal(ev->u.req.srq, w->srq);
	expect_path(&ev->u.req.path, &w->path);
	expect_pd(ev->u.req.private_data, sizeof(ev->u.req.private_data),
		  ev->u.req.private_data_len, w->private_data,
		  w->private_data_len);

	/* A path the library returned goes back out as it came in. */
	assert_int_equal(cmc_lap(ev->id, &ev->u.req.path, NULL, 0), 0);
	lap = fake_last(x->f, CMP_TYPE_LAP);
	assert_non_null(lap);
	assert_memory_equal(&lap->lap.alt_path, &w->path, sizeof(w->path));
	assert_int_equal(cmc_ack_event(ev), 0);
}

static void test_rep_received(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, CMC_QP_RC);
	const struct cmp_ev_rep *w;
	struct cmc_event *ev;
	struct cmp_msg m;

	fake_event(&m, cmc_id_num(id), CMP_EVENT_REP_RECEIVED, 0x6160);
	m.event.rep_received.remote_qpn = 0x654321;
	m.event.rep_received.start_psn = 0xfedcba;
	m.event.rep_received.remote_ca_guid = 0x8877665544332211ull;
	m.event.rep_received.responder_resources = 2;
	m.event.rep_received.initiator_depth = 7;
	m.event.rep_received.target_ack_delay = 21;
	m.event.rep_received.failover = CMP_FAILOVER_REJECTED;
	m.event.rep_received.flow_control = 1;
	m.event.rep_received.rnr_retry_count = 5;
	m.event.rep_received.srq = 1;
	fill_path(&m.event.rep_received.path, 1);
	fill_pd(m.event.rep_received.private_data,
		&m.event.rep_received.private_data_len,
		CM_REP_PRIVATE_DATA_SIZE, 2);
	w = &m.event.rep_received;
	ev = deliver(x, &m);
	assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
	assert_ptr_equal(ev->id, id);
	assert_null(ev->listen_id);
	assert_int_equal(ev->u.rep.remote_qpn, w->remote_qpn);
	assert_int_equal(ev->u.rep.start_psn, w->start_psn);
	assert_int_equal(ev->u.rep.remote_ca_guid, w->remote_ca_guid);
	assert_int_equal(ev->u.rep.responder_resources, w->responder_resources);
	assert_int_equal(ev->u.rep.initiator_depth, w->initiator_depth);
	assert_int_equal(ev->u.rep.target_ack_delay, w->target_ack_delay);
	assert_int_equal(ev->u.rep.failover, w->failover);
	assert_int_equal(ev->u.rep.flow_control, w->flow_control);
	assert_int_equal(ev->u.rep.rnr_retry_count, w->rnr_retry_count);
	assert_int_equal(ev->u.rep.srq, w->srq);
	expect_path(&ev->u.rep.path, &w->path);
	expect_pd(ev->u.rep.private_data, sizeof(ev->u.rep.private_data),
		  ev->u.rep.private_data_len, w->private_data,
		  w->private_data_len);
	assert_int_equal(cmc_ack_event(ev), 0);
}

static void test_rej_received(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, CMC_QP_RC);
	const struct cmp_ev_rej *w;
	struct cmc_event *ev;
	struct cmp_msg m;

	fake_event(&m, cmc_id_num(id), CMP_EVENT_REJ_RECEIVED, 0x7170);
	m.event.status = -ECONNREFUSED;
	m.event.rej_received.reason = 28;
	fill_pd(m.event.rej_received.ari, &m.event.rej_received.ari_len, 5, 3);
	fill_pd(m.event.rej_received.private_data,
		&m.event.rej_received.private_data_len,
		CM_REJ_PRIVATE_DATA_SIZE, 4);
	w = &m.event.rej_received;
	ev = deliver(x, &m);
	assert_int_equal(ev->type, CMC_EVENT_REJ_RECEIVED);
	assert_ptr_equal(ev->id, id);
	assert_int_equal(ev->status, -ECONNREFUSED);
	assert_int_equal(ev->u.rej.reason, w->reason);
	expect_pd(ev->u.rej.ari, sizeof(ev->u.rej.ari), ev->u.rej.ari_len,
		  w->ari, w->ari_len);
	expect_pd(ev->u.rej.private_data, sizeof(ev->u.rej.private_data),
		  ev->u.rej.private_data_len, w->private_data,
		  w->private_data_len);
	assert_int_equal(cmc_ack_event(ev), 0);
}

static void test_query_id(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, CMC_QP_RC);
	struct cmp_id_info *w = &x->f->query_info;
	struct cmc_id_info in;

	w->listen_id = 0x31;
	w->context = 0x1020304050607080ull;
	w->service_id = 0x0a0b0c0d0e0f1011ull;
	w->service_mask = 0xffffffff00000000ull;
	w->remote_ca_guid = 0x2233445566778899ull;
	w->local_comm_id = 0x01010101;
	w->remote_comm_id = 0x02020202;
	w->local_qpn = 0x111111;
	w->remote_qpn = 0x222222;
	w->local_psn = 0x333333;
	w->remote_psn = 0x444444;
	w->qkey = 0x55555555;
	w->backlog = 17;
	w->credits_in_use = 9;
	w->held_reqs = 3;
	w->state = CMP_STATE_MRA_REP_RCVD;
	w->lap_state = CMP_LAP_STATE_MRA_LAP_SENT;
	w->qp_type = CMP_QP_TYPE_UC;
	w->responder_resources = 6;
	w->initiator_depth = 8;
	w->target_ack_delay = 20;
	w->failover = CMP_FAILOVER_NOT_SUPPORTED;
	w->flow_control = 1;
	w->retry_count = 5;
	w->rnr_retry_count = 7;
	w->srq = 1;
	w->max_cm_retries = 14;
	w->local_cm_response_timeout = 22;
	w->remote_cm_response_timeout = 23;
	w->has_alt_path = 1;
	w->sel = CMP_SEL_GID;
	fill_path(&w->path, 2);
	fill_path(&w->alt_path, 3);

	/* Nothing of the caller's buffer survives. */
	memset(&in, 0xa5, sizeof(in));
	assert_int_equal(cmc_query_id(id, &in), 0);
	assert_int_equal(in.id, cmc_id_num(id));
	assert_int_equal(in.listen_id, w->listen_id);
	assert_int_equal(in.context, w->context);
	assert_int_equal(in.service_id, w->service_id);
	assert_int_equal(in.service_mask, w->service_mask);
	assert_int_equal(in.remote_ca_guid, w->remote_ca_guid);
	assert_int_equal(in.local_comm_id, w->local_comm_id);
	assert_int_equal(in.remote_comm_id, w->remote_comm_id);
	assert_int_equal(in.local_qpn, w->local_qpn);
	assert_int_equal(in.remote_qpn, w->remote_qpn);
	assert_int_equal(in.local_psn, w->local_psn);
	assert_int_equal(in.remote_psn, w->remote_psn);
	assert_int_equal(in.qkey, w->qkey);
	assert_int_equal(in.backlog, w->backlog);
	assert_int_equal(in.credits_in_use, w->credits_in_use);
	assert_int_equal(in.held_reqs, w->held_reqs);
	assert_int_equal(in.state, CMC_STATE_MRA_REP_RCVD);
	assert_int_equal(in.lap_state, CMC_LAP_STATE_MRA_LAP_SENT);
	assert_int_equal(in.qp_type, CMC_QP_UC);
	assert_int_equal(in.responder_resources, w->responder_resources);
	assert_int_equal(in.initiator_depth, w->initiator_depth);
	assert_int_equal(in.target_ack_delay, w->target_ack_delay);
	assert_int_equal(in.failover, w->failover);
	assert_int_equal(in.flow_control, w->flow_control);
	assert_int_equal(in.retry_count, w->retry_count);
	assert_int_equal(in.rnr_retry_count, w->rnr_retry_count);
	assert_int_equal(in.srq, w->srq);
	assert_int_equal(in.max_cm_retries, w->max_cm_retries);
	assert_int_equal(in.local_cm_response_timeout,
			 w->local_cm_response_timeout);
	assert_int_equal(in.remote_cm_response_timeout,
			 w->remote_cm_response_timeout);
	assert_int_equal(in.has_alt_path, 1);
	assert_int_equal(in.sel, CMC_SEL_GID);
	expect_path(&in.path, &w->path);
	expect_path(&in.alt_path, &w->alt_path);
}

/* --- reserved space ------------------------------------------------- */

static const struct cmc_conn_param conn_base = {
	.service_id = 0x10,
	.dst = { .family = CMC_AF_LID, .lid = 5 },
	.qp_num = 0x100,
};

static void test_reserved_connect(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, CMC_QP_RC);
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(7471) };
	struct cmc_conn_param p;

	p = conn_base;
	p.reserved[3] = 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	p = conn_base;
	p.dst.reserved[1] = 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	p = conn_base;
	p.src.reserved[0] = 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	p = conn_base;
	p.path.reserved[1] = 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	/* cmc_connect_ip() reads param->src itself, before any request. */
	inet_pton(AF_INET, "10.0.0.2", &sin.sin_addr);
	p = conn_base;
	p.src.reserved[1] = 1;
	assert_int_equal(cmc_connect_ip(id, (struct sockaddr *)&sin, NULL,
					CMC_RDMA_PS_TCP, &p),
			 -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_PORTS), 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_CONNECT), 0);
	/* All zero, the same call goes out. */
	assert_int_equal(cmc_connect(id, &conn_base), 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_CONNECT), 1);
}

static void test_reserved_others(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, CMC_QP_RC), *ud = mkid(x, CMC_QP_UD);
	struct cmc_accept_param ap = { .qp_num = 0x200 };
	struct cmc_port_sel sel = { .kind = CMC_SEL_ANY };
	struct cmc_sidr_param sp = {
		.service_id = 0x42,
		.dst = { .family = CMC_AF_LID, .lid = 7 },
	};
	struct cmc_path alt = { .remote_lid = 9 };

	ap.reserved[0] = 1;
	assert_int_equal(cmc_accept(id, &ap), -EINVAL);
	ap.reserved[0] = 0;
	assert_int_equal(fake_count(x->f, CMP_TYPE_ACCEPT), 0);
	assert_int_equal(cmc_accept(id, &ap), 0);

	sel.reserved[1] = 1;
	assert_int_equal(cmc_listen(ud, 0x20, ~0ull, 1, &sel), -EINVAL);
	sel.reserved[1] = 0;
	assert_int_equal(fake_count(x->f, CMP_TYPE_LISTEN), 0);
	assert_int_equal(cmc_listen(ud, 0x20, ~0ull, 1, &sel), 0);

	alt.reserved[0] = 1;
	assert_int_equal(cmc_lap(id, &alt, NULL, 0), -EINVAL);
	alt.reserved[0] = 0;
	assert_int_equal(fake_count(x->f, CMP_TYPE_LAP), 0);
	assert_int_equal(cmc_lap(id, &alt, NULL, 0), 0);

	ud = mkid(x, CMC_QP_UD);
	sp.reserved[2] = 1;
	assert_int_equal(cmc_sidr_req(ud, &sp), -EINVAL);
	sp.reserved[2] = 0;
	sp.dst.reserved[0] = 1;
	assert_int_equal(cmc_sidr_req(ud, &sp), -EINVAL);
	sp.dst.reserved[0] = 0;
	sp.src.reserved[1] = 1;
	assert_int_equal(cmc_sidr_req(ud, &sp), -EINVAL);
	sp.src.reserved[1] = 0;
	assert_int_equal(fake_count(x->f, CMP_TYPE_SIDR_REQ), 0);
	assert_int_equal(cmc_sidr_req(ud, &sp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_req_received, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_rep_received, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_rej_received, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_query_id, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_reserved_connect, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_reserved_others, setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
