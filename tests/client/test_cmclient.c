/* SPDX-License-Identifier: MIT */
/*
 * libcmclient against a fake daemon on a socketpair (fake_daemon.c): HELLO
 * negotiation, every request and its reply, per-id event serialization as
 * the application sees it, destroy finality, events interleaved with
 * synchronous requests, a daemon that dies, hangs or talks garbage.
 *
 * Every test arms alarm(): a library that hangs fails the test by
 * SIGALRM instead of stalling the suite.
 */
#include <errno.h>
#include <poll.h>
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

static int setup(void **state)
{
	return fx_setup(state, "test", 20, NULL);
}

static struct cmc_id *mkid(struct fx *x, void *ctx)
{
	struct cmc_id *id;

	assert_int_equal(cmc_create_id(x->ch, ctx, CMC_QP_RC, &id), 0);
	return id;
}

static void push(struct fx *x, uint32_t id, enum cmp_event_type type,
		 uint64_t ctx)
{
	struct cmp_msg m;

	fake_event(&m, id, type, ctx);
	assert_int_equal(fake_push(x->f, &m), 0);
}

/* Push a MRA_RECEIVED (small, valid) whose service timeout tags it. */
static void push_tagged(struct fx *x, uint32_t id, uint8_t tag)
{
	struct cmp_msg m;

	fake_event(&m, id, CMP_EVENT_MRA_RECEIVED, id);
	m.event.mra_received.msg = CMP_CM_MSG_REQ;
	m.event.mra_received.service_timeout = tag;
	assert_int_equal(fake_push(x->f, &m), 0);
}

static void expect_tag(struct fx *x, struct cmc_id *id, uint8_t tag, bool ack)
{
	struct cmc_event *ev;

	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_ptr_equal(ev->id, id);
	assert_int_equal(ev->type, CMC_EVENT_MRA_RECEIVED);
	assert_int_equal(ev->u.mra.service_timeout, tag);
	if (ack)
		assert_int_equal(cmc_ack_event(ev), 0);
	else
		cmc_ack_event(ev);
}

static void expect_no_event(struct fx *x)
{
	struct cmc_event *ev;

	assert_int_equal(cmc_get_event(x->ch, &ev, 100), -EAGAIN);
	assert_null(ev);
}

/* --- HELLO ---------------------------------------------------------- */

static void test_hello_ok(void **state)
{
	struct fx *x = *state;
	struct cmc_daemon_info di;
	const struct cmp_msg *h = fake_last(x->f, CMP_TYPE_HELLO);

	cmc_daemon_info(x->ch, &di);
	assert_int_equal(di.proto_version, 1);
	assert_int_equal(di.max_ids, 1000);
	assert_string_equal(di.version, "fake-1.0");
	assert_non_null(h);
	assert_int_equal(h->hdr.version, CMP_VERSION_HELLO);
	assert_int_equal(h->hello.min_version, CMP_VERSION_MIN);
	assert_int_equal(h->hello.max_version, CMP_VERSION_MAX);
	assert_string_equal(h->hello.name, "test");
}

static void test_hello_mismatch(void **state)
{
	struct fake *f = fake_start();
	struct cmc_channel *ch = (void *)1;

	(void)state;
	alarm(80);
	f->min_version = CMP_VERSION_MAX + 1;
	f->max_version = CMP_VERSION_MAX + 3;
	assert_int_equal(cmc_open_fd(f->client_fd, "old", &ch),
			 -EPROTONOSUPPORT);
	assert_null(ch);
	assert_non_null(strstr(cmc_strerror(-EPROTONOSUPPORT), "version"));
	fake_stop(f);
}

static bool hook_hello_garbage(struct fake *f, const struct cmp_msg *req)
{
	static const uint8_t junk[20] = { 1, 0, 0x81, 0, 20 };

	if (req->hdr.type != CMP_TYPE_HELLO)
		return false;
	fake_send_raw(f, junk, sizeof(junk));
	return true;
}

static void test_hello_garbage(void **state)
{
	struct fake *f = fake_start();
	struct cmc_channel *ch;

	(void)state;
	alarm(80);
	f->hook = hook_hello_garbage;
	assert_int_equal(cmc_open_fd(f->client_fd, NULL, &ch), -EPROTO);
	assert_null(ch);
	fake_stop(f);
}

static void test_open_no_daemon(void **state)
{
	struct cmc_channel *ch;

	(void)state;
	assert_int_equal(cmc_open("/nonexistent/cmd.sock", "x", &ch), -ENOENT);
	assert_null(ch);
	setenv("CMD_SOCKET", "/nonexistent/env.sock", 1);
	assert_int_equal(cmc_open(NULL, "x", &ch), -ENOENT);
	unsetenv("CMD_SOCKET");
	assert_int_equal(cmc_open_fd(-1, "x", &ch), -EBADF);
}

/* --- Requests ------------------------------------------------------- */

static void test_create_set_context(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a, *b;
	const struct cmp_msg *m;
	int ctx1, ctx2;

	a = mkid(x, &ctx1);
	m = fake_last(x->f, CMP_TYPE_CREATE_ID);
	assert_int_equal(m->create_id.context, (uintptr_t)&ctx1);
	assert_int_equal(m->create_id.qp_type, CMP_QP_TYPE_RC);
	assert_int_equal(cmc_id_num(a), 1);
	assert_ptr_equal(cmc_get_context(a), &ctx1);
	assert_ptr_equal(cmc_id_channel(a), x->ch);
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_UD, &b), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_CREATE_ID)->create_id.qp_type,
			 CMP_QP_TYPE_UD);
	assert_int_equal(cmc_create_id(x->ch, NULL, (enum cmc_qp_type)9, &b),
			 -EINVAL);

	assert_int_equal(cmc_set_context(a, &ctx2), 0);
	m = fake_last(x->f, CMP_TYPE_SET_CONTEXT);
	assert_int_equal(m->set_context.id, 1);
	assert_int_equal(m->set_context.context, (uintptr_t)&ctx2);
	assert_ptr_equal(cmc_get_context(a), &ctx2);

	/* A refused request changes nothing here either. */
	x->f->status[CMP_TYPE_SET_CONTEXT] = -ENOENT;
	assert_int_equal(cmc_set_context(a, &ctx1), -ENOENT);
	assert_ptr_equal(cmc_get_context(a), &ctx2);

	x->f->status[CMP_TYPE_CREATE_ID] = -EMFILE;
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &b), -EMFILE);
	assert_null(b);
	assert_int_equal(cmc_destroy_id(a), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_DESTROY_ID)->destroy_id.id,
			 1);
}

static void test_listen(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkid(x, NULL);
	struct cmc_port_sel sel = { .kind = CMC_SEL_PORT, .port_num = 1 };
	const struct cmp_msg *m;

	strcpy(sel.dev_name, "rxe0");
	assert_int_equal(cmc_listen(l, 0x1000, ~0ull, 8, &sel), 0);
	m = fake_last(x->f, CMP_TYPE_LISTEN);
	assert_int_equal(m->listen.id, cmc_id_num(l));
	assert_int_equal(m->listen.service_id, 0x1000);
	assert_int_equal(m->listen.service_mask, ~0ull);
	assert_int_equal(m->listen.backlog, 8);
	assert_int_equal(m->listen.port.kind, CMP_SEL_PORT);
	assert_string_equal(m->listen.port.dev_name, "rxe0");
	/* The encoder refuses what the daemon would: nothing is sent. */
	assert_int_equal(cmc_listen(l, 0x1000, ~0ull, 0, NULL), -EINVAL);
	assert_int_equal(cmc_listen(l, 0x1001, 0xf000, 1, NULL), -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_LISTEN), 1);
	x->f->status[CMP_TYPE_LISTEN] = -EADDRINUSE;
	assert_int_equal(cmc_listen(l, 0x2000, ~0ull, 1, NULL), -EADDRINUSE);
}

static void test_connect(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, NULL);
	uint8_t pd[CMC_REQ_PRIVATE_DATA_SIZE + 1];
	struct cmc_conn_param p = {
		.service_id = 0x1060000 | 4791,
		.dst = { .family = CMC_AF_IPV4, .addr = { 10, 0, 0, 2 } },
		.qp_num = 0x1234,
		.start_psn = 0xabcdef,
		.responder_resources = 4,
		.initiator_depth = 2,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 6,
		.max_cm_retries = 15,
		.local_cm_response_timeout = 20,
		.remote_cm_response_timeout = 21,
		.private_data = pd,
		.private_data_len = 10,
		.path = { .flags = CMC_PATH_MTU | CMC_PATH_SL,
			  .mtu = 3,
			  .sl = 5 },
	};
	const struct cmp_connect *c;

	memset(pd, 0x5a, sizeof(pd));
	assert_int_equal(cmc_connect(id, &p), 0);
	c = &fake_last(x->f, CMP_TYPE_CONNECT)->connect;
	assert_int_equal(c->id, cmc_id_num(id));
	assert_int_equal(c->local_qpn, 0x1234);
	assert_int_equal(c->start_psn, 0xabcdef);
	assert_int_equal(c->responder_resources, 4);
	assert_int_equal(c->initiator_depth, 2);
	assert_int_equal(c->flow_control, 1);
	assert_int_equal(c->retry_count, 7);
	assert_int_equal(c->rnr_retry_count, 6);
	assert_int_equal(c->max_cm_retries, 15);
	assert_int_equal(c->local_cm_response_timeout, 20);
	assert_int_equal(c->remote_cm_response_timeout, 21);
	assert_int_equal(c->service_id, 0x1060000 | 4791);
	assert_int_equal(c->dst.family, CMP_AF_IPV4);
	assert_memory_equal(c->dst.addr, "\x0a\x00\x00\x02", 4);
	assert_int_equal(c->src.kind, CMP_SEL_ANY);
	assert_int_equal(c->path.flags, CMP_PATH_FLAG_MTU | CMP_PATH_FLAG_SL);
	assert_int_equal(c->path.mtu, 3);
	assert_int_equal(c->path.sl, 5);
	assert_int_equal(c->private_data_len, 10);
	assert_memory_equal(c->private_data, pd, 10);
	assert_int_equal(c->private_data[10], 0);

	/* Argument errors never reach the daemon. */
	p.private_data_len = CMC_REQ_PRIVATE_DATA_SIZE + 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	p.private_data_len = 0;
	p.qp_num = 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	p.qp_num = 0x1234;
	p.dst.family = 0;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	p.dst.family = CMC_AF_GID;
	p.private_data = NULL;
	p.private_data_len = 1;
	assert_int_equal(cmc_connect(id, &p), -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_CONNECT), 1);

	p.private_data_len = 0;
	x->f->status[CMP_TYPE_CONNECT] = -EHOSTUNREACH;
	assert_int_equal(cmc_connect(id, &p), -EHOSTUNREACH);
	assert_int_equal(fake_last(x->f, CMP_TYPE_CONNECT)->connect.dst.family,
			 CMP_AF_GID);
}

static void test_passive_requests(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, NULL);
	uint8_t pd[256], ari[72];
	struct cmc_accept_param ap = {
		.qp_num = 77,
		.start_psn = 99,
		.responder_resources = 3,
		.initiator_depth = 1,
		.target_ack_delay = 15,
		.failover = 1,
		.flow_control = 1,
		.rnr_retry_count = 7,
		.srq = 1,
		.private_data = pd,
		.private_data_len = CMC_REP_PRIVATE_DATA_SIZE,
	};
	const struct cmp_msg *m;

	for (unsigned int i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)i;
	memset(ari, 0xa5, sizeof(ari));
	assert_int_equal(cmc_accept(id, &ap), 0);
	m = fake_last(x->f, CMP_TYPE_ACCEPT);
	assert_int_equal(m->accept.local_qpn, 77);
	assert_int_equal(m->accept.start_psn, 99);
	assert_int_equal(m->accept.responder_resources, 3);
	assert_int_equal(m->accept.initiator_depth, 1);
	assert_int_equal(m->accept.target_ack_delay, 15);
	assert_int_equal(m->accept.failover, 1);
	assert_int_equal(m->accept.rnr_retry_count, 7);
	assert_int_equal(m->accept.srq, 1);
	assert_int_equal(m->accept.private_data_len, 196);
	assert_memory_equal(m->accept.private_data, pd, 196);
	ap.private_data_len = CMC_REP_PRIVATE_DATA_SIZE + 1;
	assert_int_equal(cmc_accept(id, &ap), -EINVAL);

	assert_int_equal(cmc_reject(id, 28, ari, 5, pd, 148), 0);
	m = fake_last(x->f, CMP_TYPE_REJECT);
	assert_int_equal(m->reject.reason, 28);
	assert_int_equal(m->reject.ari_len, 5);
	assert_memory_equal(m->reject.ari, ari, 5);
	assert_int_equal(m->reject.private_data_len, 148);
	assert_int_equal(cmc_reject(id, 0, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(cmc_reject(id, 36, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(cmc_reject(id, 28, ari, 73, NULL, 0), -EINVAL);

	assert_int_equal(cmc_notify_established(id), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_NOTIFY_ESTABLISHED)
				 ->notify_established.id,
			 cmc_id_num(id));

	assert_int_equal(cmc_mra(id, 17, pd, 222), 0);
	m = fake_last(x->f, CMP_TYPE_MRA);
	assert_int_equal(m->mra.service_timeout, 17);
	assert_int_equal(m->mra.private_data_len, 222);
	assert_int_equal(cmc_mra(id, 32, NULL, 0), -EINVAL);

	assert_int_equal(cmc_rtu(id, pd, 224), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_RTU)->rtu.private_data_len,
			 224);
	assert_int_equal(cmc_rtu(id, pd, 225), -EINVAL);

	assert_int_equal(cmc_disconnect(id, pd, 220), 0);
	m = fake_last(x->f, CMP_TYPE_DISCONNECT);
	assert_int_equal(m->disconnect.private_data_len, 220);
	assert_memory_equal(m->disconnect.private_data, pd, 220);
	assert_int_equal(cmc_disconnect(id, pd, 221), -EINVAL);
	x->f->status[CMP_TYPE_DISCONNECT] = -EINVAL;
	assert_int_equal(cmc_disconnect(id, NULL, 0), -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_DISCONNECT), 2);
}

static void test_lap_apr_sidr(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, NULL), *ud;
	struct cmc_path alt;
	uint8_t pd[216] = { 1, 2, 3 };
	struct cmc_sidr_param sp = {
		.service_id = 0x42,
		.dst = { .family = CMC_AF_LID, .lid = 7 },
		.pkey = 0xffff,
		.max_cm_retries = 3,
		.cm_response_timeout = 18,
		.private_data = pd,
		.private_data_len = 216,
	};
	const struct cmp_msg *m;

	memset(&alt, 0, sizeof(alt));
	alt.remote_lid = 9;
	alt.sl = 2;
	alt.local_ack_timeout = 16;
	assert_int_equal(cmc_lap(id, &alt, pd, 3), 0);
	m = fake_last(x->f, CMP_TYPE_LAP);
	assert_int_equal(m->lap.alt_path.remote_lid, 9);
	assert_int_equal(m->lap.alt_path.local_ack_timeout, 16);
	assert_int_equal(m->lap.private_data_len, 3);
	assert_int_equal(cmc_lap(id, &alt, pd, 169), -EINVAL);

	assert_int_equal(cmc_apr(id, 3, pd, 4, pd, 148), 0);
	m = fake_last(x->f, CMP_TYPE_APR);
	assert_int_equal(m->apr.ap_status, 3);
	assert_int_equal(m->apr.info_len, 4);
	assert_int_equal(m->apr.private_data_len, 148);
	assert_int_equal(cmc_apr(id, 14, NULL, 0, NULL, 0), -EINVAL);

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_UD, &ud), 0);
	assert_int_equal(cmc_sidr_req(ud, &sp), 0);
	m = fake_last(x->f, CMP_TYPE_SIDR_REQ);
	assert_int_equal(m->sidr_req.service_id, 0x42);
	assert_int_equal(m->sidr_req.dst.family, CMP_AF_LID);
	assert_int_equal(m->sidr_req.dst.lid, 7);
	assert_int_equal(m->sidr_req.pkey, 0xffff);
	assert_int_equal(m->sidr_req.max_cm_retries, 3);
	assert_int_equal(m->sidr_req.cm_response_timeout, 18);
	assert_int_equal(m->sidr_req.private_data_len, 216);

	assert_int_equal(cmc_sidr_rep(ud, 0, 0x55, 0x11111111, pd, 136), 0);
	m = fake_last(x->f, CMP_TYPE_SIDR_REP);
	assert_int_equal(m->sidr_rep.qpn, 0x55);
	assert_int_equal(m->sidr_rep.qkey, 0x11111111);
	assert_int_equal(m->sidr_rep.private_data_len, 136);
	assert_int_equal(cmc_sidr_rep(ud, 0, 0x1000000, 0, NULL, 0), -EINVAL);
}

static void test_query_list_counters(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x, NULL);
	struct cmc_id_info info;
	struct cmc_list_entry le[CMC_LIST_BATCH_MAX];
	struct cmc_counter ce[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0;
	const struct cmp_msg *m;

	x->f->query_info.state = CMP_STATE_ESTABLISHED;
	x->f->query_info.qp_type = CMP_QP_TYPE_RC;
	x->f->query_info.local_qpn = 0x99;
	x->f->query_info.path.port_num = 1;
	assert_int_equal(cmc_query_id(id, &info), 0);
	assert_int_equal(info.id, cmc_id_num(id));
	assert_int_equal(info.state, CMC_STATE_ESTABLISHED);
	assert_int_equal(info.local_qpn, 0x99);
	assert_string_equal(cmc_state_str(info.state), "ESTABLISHED");

	assert_int_equal(cmc_list(x->ch, CMC_LIST_ALL, &cursor, le), 2);
	assert_int_equal(cursor, 7);
	assert_int_equal(le[1].id, 11);
	assert_int_equal(le[0].owner_pid, 42);
	assert_int_equal(le[0].backlog, 4);
	assert_int_equal(le[0].credits_in_use, 4);
	assert_int_equal(le[0].held_reqs, 1);
	assert_int_equal(le[1].held_reqs, 0);
	/* Where the listeners listen. */
	assert_int_equal(le[0].sel, CMC_SEL_PORT);
	assert_int_equal(le[0].sel_port_index, 3);
	assert_int_equal(le[0].sel_port_num, 1);
	assert_int_equal(le[1].sel, CMC_SEL_GID);
	assert_int_equal(le[1].listen_gid[0], 0xfe);
	assert_int_equal(le[1].listen_gid[15], 2);
	assert_int_equal(le[1].sel_port_index, 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_LIST)->list.filter,
			 CMP_LIST_FILTER_ALL);
	assert_int_equal(cmc_list(x->ch, CMC_LIST_ALL, &cursor, le), 1);
	assert_int_equal(cursor, 0);
	/* A connection: its port, peer LID, QPNs and owner's name. */
	assert_int_equal(le[0].state, CMC_STATE_ESTABLISHED);
	assert_int_equal(le[0].port_index, 3);
	assert_int_equal(le[0].port_num, 1);
	assert_int_equal(le[0].grh, 0);
	assert_int_equal(le[0].remote_lid, 0x21);
	assert_int_equal(le[0].local_qpn, 0xabcdef);
	assert_int_equal(le[0].remote_qpn, 0x123456);
	assert_string_equal(le[0].owner_comm, "srv");
	assert_int_equal(fake_last(x->f, CMP_TYPE_LIST)->list.cursor, 7);
	assert_int_equal(cmc_list(x->ch, (enum cmc_list_filter)0, &cursor, le),
			 -EINVAL);

	cursor = 0;
	assert_int_equal(
		cmc_counters(x->ch, CMC_COUNTERS_PORT, "rxe0", 1, &cursor, ce),
		3);
	assert_string_equal(ce[2].name, "reqcsent");
	assert_int_equal(ce[2].value, 102);
	m = fake_last(x->f, CMP_TYPE_COUNTERS);
	assert_int_equal(m->counters.scope, CMP_COUNTER_SCOPE_PORT);
	assert_string_equal(m->counters.dev_name, "rxe0");
	assert_int_equal(m->counters.port_num, 1);
	assert_int_equal(cmc_counters(x->ch, CMC_COUNTERS_GLOBAL, "rxe0", 1,
				      &cursor, ce),
			 -EINVAL);
	x->f->status[CMP_TYPE_QUERY_ID] = -ENOENT;
	assert_int_equal(cmc_query_id(id, &info), -ENOENT);
}

/* PORTS: two batches, the cursor handed back, every field copied. */
static void test_ports(void **state)
{
	struct fx *x = *state;
	struct cmc_port_info p[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;

	memset(p, 0xa5, sizeof(p));
	assert_int_equal(cmc_ports(x->ch, &cursor, p), 2);
	assert_int_equal(cursor, 2);
	assert_int_equal(fake_last(x->f, CMP_TYPE_PORTS)->ports.cursor, 0);
	assert_string_equal(p[0].dev_name, "fake0");
	assert_string_equal(p[1].dev_name, "fake1");
	assert_int_equal(p[1].port_num, 1);
	assert_int_equal(p[1].port_index, 1);
	assert_int_equal(p[1].up, 1);
	assert_int_equal(p[1].state, IBV_PORT_ACTIVE);
	assert_int_equal(p[1].link_layer, CMC_LINK_IB);
	assert_int_equal(p[1].active_mtu, IBV_MTU_2048);
	assert_int_equal(p[1].lid, 0x11);
	assert_int_equal(p[1].sm_lid, 1);
	assert_true(p[1].node_guid == 0x1001);
	assert_true(p[1].port_guid == 0x2001);
	assert_int_equal(p[1].n_gids, 1);
	assert_int_equal(p[1].gids[0].type, CMC_GID_IB);
	assert_int_equal(p[1].gids[0].gid[0], 0xfe);
	assert_int_equal(p[1].gids[0].gid[15], 1);
	/* The unused slots come over as the zeros they are on the wire. */
	assert_int_equal(p[1].gids[1].type, 0);
	/* Nothing written beyond the count. */
	assert_int_equal((uint8_t)p[2].dev_name[0], 0xa5);

	assert_int_equal(cmc_ports(x->ch, &cursor, p), 1);
	assert_int_equal(cursor, 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_PORTS)->ports.cursor, 2);
	assert_string_equal(p[0].dev_name, "fake2");
	assert_int_equal(fake_count(x->f, CMP_TYPE_PORTS), 2);

	/* The daemon's refusal comes back as is; the channel lives on. */
	x->f->status[CMP_TYPE_PORTS] = -EPERM;
	cursor = 0;
	assert_int_equal(cmc_ports(x->ch, &cursor, p), -EPERM);
	x->f->status[CMP_TYPE_PORTS] = 0;
	assert_int_equal(cmc_ports(x->ch, &cursor, p), 2);
}

/* PATHS: every member copied, reserved zero, flushes by flag and port. */
static void test_paths(void **state)
{
	struct fx *x = *state;
	struct cmc_path_entry p[CMC_PATHS_BATCH_MAX];
	const struct cmp_msg *m;
	uint64_t cursor = 0;

	memset(p, 0xa5, sizeof(p));
	assert_int_equal(cmc_paths(x->ch, 0, &cursor, p), 2);
	assert_int_equal(cursor, 2);
	m = fake_last(x->f, CMP_TYPE_PATHS);
	assert_int_equal(m->paths.flags, 0);
	assert_string_equal(p[1].dev_name, "fake1");
	assert_int_equal(p[0].asked_dlid, 0x21);
	assert_int_equal(p[1].asked_dlid, 0);
	assert_int_equal(p[1].asked_dgid[0], 0xfe);
	assert_int_equal(p[1].port_index, 1);
	assert_int_equal(p[1].port_num, 1);
	assert_int_equal(p[1].sgid[15], 0x11);
	assert_int_equal(p[1].dgid[15], 0x22);
	assert_int_equal(p[1].slid, 0x11);
	assert_int_equal(p[1].dlid, 0x22);
	assert_int_equal(p[1].pkey, 0xffff);
	assert_int_equal(p[1].sl, 3);
	assert_int_equal(p[1].mtu, IBV_MTU_4096);
	assert_int_equal(p[1].rate, IBV_RATE_100_GBPS);
	assert_int_equal(p[1].packet_life_time, 18);
	assert_int_equal(p[1].hop_limit, 64);
	assert_int_equal(p[1].tclass, 0x20);
	assert_int_equal(p[1].flow_label, 0xabcde);
	assert_int_equal(p[1].has_alt, 1);
	assert_int_equal(p[1].alt_slid, 0x12);
	assert_int_equal(p[1].alt_dlid, 0x23);
	assert_int_equal(p[0].has_alt, 0);
	assert_int_equal(p[1].age_s, 7);
	assert_int_equal(p[0].expires_s, 1793);
	assert_int_equal(p[1].expires_s, 0);
	assert_true(p[1].hits == 0x100000001ULL);
	for (unsigned int i = 0; i < 4; i++)
		assert_true(p[1].reserved[i] == 0);
	assert_int_equal((uint8_t)p[2].dev_name[0], 0xa5);
	assert_int_equal(cmc_paths(x->ch, 0, &cursor, p), 2);
	assert_int_equal(fake_last(x->f, CMP_TYPE_PATHS)->paths.cursor, 2);
	assert_int_equal(cursor, 0);

	/* Refused before anything is sent. */
	assert_int_equal(cmc_paths(x->ch, 2, &cursor, p), -EINVAL);
	cursor = 3;
	assert_int_equal(cmc_paths(x->ch, CMC_PATHS_FLUSH, &cursor, p),
			 -EINVAL);
	assert_int_equal(cmc_paths_flush(x->ch, 65536), -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_PATHS), 2);

	cursor = 0;
	assert_int_equal(cmc_paths(x->ch, CMC_PATHS_FLUSH, &cursor, p), 2);
	assert_int_equal(fake_last(x->f, CMP_TYPE_PATHS)->paths.flags,
			 CMP_PATHS_FLUSH);
	assert_int_equal(cmc_paths_flush(x->ch, -1), 5);
	m = fake_last(x->f, CMP_TYPE_PATHS);
	assert_int_equal(m->paths.flags, CMP_PATHS_FLUSH);
	assert_int_equal(m->paths.port_index, 0);
	assert_int_equal(cmc_paths_flush(x->ch, 3), 3);
	m = fake_last(x->f, CMP_TYPE_PATHS);
	assert_int_equal(m->paths.flags, CMP_PATHS_FLUSH | CMP_PATHS_PORT);
	assert_int_equal(m->paths.port_index, 3);

	/* The daemon's refusal comes back as is; the channel lives on. */
	x->f->status[CMP_TYPE_PATHS] = -EPERM;
	assert_int_equal(cmc_paths_flush(x->ch, -1), -EPERM);
	x->f->status[CMP_TYPE_PATHS] = 0;
	assert_int_equal(cmc_paths(x->ch, 0, &cursor, p), 2);
}

/* A PORTS_REPLY the decoder refuses (a GID slot beyond n_gids set) kills
 * the channel with -EPROTO, like any malformed reply. */
static bool bad_ports_hook(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg r;
	uint8_t buf[CMP_MSG_MAX];
	size_t len;

	if (req->hdr.type != CMP_TYPE_PORTS)
		return false;
	cmp_msg_init(&r, CMP_TYPE_PORTS_REPLY, req->hdr.seq);
	r.ports_reply.count = 1;
	strcpy(r.ports_reply.entries[0].dev_name, "bad0");
	r.ports_reply.entries[0].port_num = 1;
	r.ports_reply.entries[0].link_layer = CMP_LINK_LAYER_IB;
	len = (size_t)cmp_encode(&r, buf, sizeof(buf));
	/* gids[0] with n_gids 0: cmp_encode would refuse, so patch bytes. */
	buf[sizeof(struct cmp_hdr) +
	    offsetof(struct cmp_ports_reply, entries[0].gids[0].type)] =
		CMP_GID_TYPE_IB;
	fake_send_raw(f, buf, len);
	return true;
}

static void test_ports_malformed(void **state)
{
	struct fx *x = *state;
	struct cmc_port_info p[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;

	x->f->hook = bad_ports_hook;
	assert_int_equal(cmc_ports(x->ch, &cursor, p), -EPROTO);
	assert_int_equal(cursor, 0);
	assert_int_equal(cmc_ports(x->ch, &cursor, p), -EPROTO);
}

/* --- Events --------------------------------------------------------- */

static void test_event_interleaved_by_id(void **state)
{
	struct fx *x = *state;
	int ca, cb, cc;
	struct cmc_id *a = mkid(x, &ca), *b = mkid(x, &cb), *c = mkid(x, &cc);
	struct cmc_event *ev;

	push_tagged(x, cmc_id_num(a), 1);
	push_tagged(x, cmc_id_num(b), 2);
	push_tagged(x, cmc_id_num(c), 3);
	push_tagged(x, cmc_id_num(a), 4); /* held by the daemon: a unacked */

	/* c's first, skipping a's and b's, which stay queued in order. */
	assert_int_equal(cmc_get_event_id(x->ch, c, &ev, FX_WAIT_MS), 0);
	assert_ptr_equal(ev->id, c);
	assert_int_equal(ev->u.mra.service_timeout, 3);
	assert_int_equal(cmc_event_pending(x->ch), 2);
	assert_int_equal(cmc_ack_event(ev), 0);

	/* Nothing more for c. */
	assert_int_equal(cmc_get_event_id(x->ch, c, &ev, 50), -EAGAIN);

	expect_tag(x, a, 1, true); /* the ack releases a's second */
	expect_tag(x, b, 2, true);
	expect_tag(x, a, 4, true);
	expect_no_event(x);
	assert_int_equal(x->f->acks, 4);
	assert_int_equal(cmc_get_event_id(x->ch, NULL, &ev, 0), -EINVAL);
}

static void test_ack_releases_next(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL);
	struct cmc_event *ev1, *ev2;
	const struct cmp_msg *ack;

	push_tagged(x, cmc_id_num(a), 1);
	push_tagged(x, cmc_id_num(a), 2);
	assert_int_equal(cmc_get_event(x->ch, &ev1, FX_WAIT_MS), 0);
	assert_int_equal(ev1->u.mra.service_timeout, 1);
	/* Rule 2: the second is not sent until the first is acked. */
	assert_int_equal(cmc_get_event(x->ch, &ev2, 100), -EAGAIN);
	assert_int_equal(cmc_ack_event(ev1), 0);
	ack = fake_last(x->f, CMP_TYPE_ACK_EVENT);
	assert_int_equal(ack->ack_event.id, cmc_id_num(a));
	assert_int_equal(ack->ack_event.seq, 1);
	assert_int_equal(cmc_get_event(x->ch, &ev2, FX_WAIT_MS), 0);
	assert_int_equal(ev2->u.mra.service_timeout, 2);
	assert_int_equal(cmc_ack_event(ev2), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_ACK_EVENT)->ack_event.seq, 2);
	assert_int_equal(cmc_ack_event(NULL), 0);
}

static uint32_t race_id;

/* DESTROY_ID: an event of the id slips out just before the reply. */
static bool hook_destroy_race(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg ev;

	if (req->hdr.type != CMP_TYPE_DESTROY_ID)
		return false;
	fake_event(&ev, race_id, CMP_EVENT_DREQ_RECEIVED, 0);
	ev.hdr.seq = 99;
	fake_send_msg(f, &ev);
	fake_reply(f, req, 0, NULL);
	return true;
}

static void test_destroy_drops_events(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL), *b = mkid(x, NULL);
	struct cmc_id *c = mkid(x, NULL);
	struct cmc_event *held;
	unsigned int acks;

	/* An event of c that the application holds when c is destroyed. */
	push_tagged(x, cmc_id_num(c), 9);
	assert_int_equal(cmc_get_event(x->ch, &held, FX_WAIT_MS), 0);
	assert_ptr_equal(held->id, c);

	/* a's first event is in the socket; b's sits in the library queue
	 * behind one of a's, read during a request. */
	push_tagged(x, cmc_id_num(a), 1);
	assert_int_equal(cmc_set_context(b, NULL), 0);
	assert_int_equal(cmc_event_pending(x->ch), 1);
	push_tagged(x, cmc_id_num(b), 2);
	race_id = cmc_id_num(a);
	x->f->hook = hook_destroy_race;
	assert_int_equal(cmc_destroy_id(a), 0);
	x->f->hook = NULL;
	/* Only b's is left. */
	expect_tag(x, b, 2, true);
	expect_no_event(x);

	/* Destroy c, then ack its held event: no ACK_EVENT goes out. */
	acks = fake_count(x->f, CMP_TYPE_ACK_EVENT);
	assert_int_equal(cmc_destroy_id(c), 0);
	assert_int_equal(held->u.mra.service_timeout, 9);
	assert_int_equal(cmc_ack_event(held), 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_ACK_EVENT), acks);
	expect_no_event(x);
}

/* LISTEN: three events for two ids come before the reply. */
static uint32_t burst_ids[2];

static bool hook_events_first(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg ev;

	if (req->hdr.type != CMP_TYPE_LISTEN)
		return false;
	for (unsigned int i = 0; i < 3; i++) {
		fake_event(&ev, burst_ids[i % 2], CMP_EVENT_MRA_RECEIVED, i);
		ev.event.mra_received.msg = CMP_CM_MSG_REP;
		ev.event.mra_received.service_timeout = (uint8_t)(10 + i);
		ev.hdr.seq = 1 + i / 2;
		fake_send_msg(f, &ev);
	}
	fake_reply(f, req, 0, NULL);
	return true;
}

static void test_events_during_request(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL), *b = mkid(x, NULL);
	struct pollfd pfd = { .fd = cmc_fd(x->ch), .events = POLLIN };
	struct cmc_event *ev;

	burst_ids[0] = cmc_id_num(a);
	burst_ids[1] = cmc_id_num(b);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	x->f->hook = hook_events_first;
	assert_int_equal(cmc_listen(b, 5, ~0ull, 1, NULL), 0);
	assert_int_equal(cmc_event_pending(x->ch), 3);
	/* The socket is empty, yet the channel's fd is readable. */
	assert_int_equal(poll(&pfd, 1, 0), 1);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(cmc_get_event(x->ch, &ev, 0), 0);
		assert_ptr_equal(ev->id, i % 2 ? b : a);
		assert_int_equal(ev->u.mra.service_timeout, 10 + i);
		assert_ptr_equal(ev->context, (void *)(uintptr_t)i);
		assert_int_equal(ev->u.mra.msg, CMC_CM_MSG_REP);
		cmc_ack_event(ev);
	}
	assert_int_equal(cmc_event_pending(x->ch), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
}

static void test_fd_readable_on_socket(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL);
	struct pollfd pfd = { .fd = cmc_fd(x->ch), .events = POLLIN };
	struct cmc_event *ev;

	push_tagged(x, cmc_id_num(a), 1);
	assert_int_equal(poll(&pfd, 1, FX_WAIT_MS), 1);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
	assert_int_equal(poll(&pfd, 1, 0), 0);
}

static void test_req_received_new_id(void **state)
{
	struct fx *x = *state;
	int lctx, nctx;
	struct cmc_id *l = mkid(x, &lctx);
	struct cmc_event *ev;
	struct cmc_id *n;
	struct cmp_msg m;

	assert_int_equal(cmc_listen(l, 0x77, ~0ull, 4, NULL), 0);
	fake_event(&m, 500, CMP_EVENT_REQ_RECEIVED, (uintptr_t)&lctx);
	m.event.req_received.listen_id = cmc_id_num(l);
	m.event.req_received.qp_type = CMP_QP_TYPE_RC;
	m.event.req_received.remote_qpn = 0x321;
	m.event.req_received.service_id = 0x77;
	m.event.req_received.private_data_len = CM_REQ_PRIVATE_DATA_SIZE;
	m.event.req_received.private_data[0] = 0xee;
	m.event.req_received.path.port_num = 1;
	m.event.req_received.path.mtu = CM_MTU_1024;
	assert_int_equal(fake_push(x->f, &m), 0);

	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	n = ev->id;
	assert_ptr_not_equal(n, l);
	assert_int_equal(cmc_id_num(n), 500);
	assert_ptr_equal(ev->listen_id, l);
	assert_ptr_equal(ev->context, &lctx);
	assert_ptr_equal(cmc_get_context(n), &lctx);
	assert_int_equal(ev->u.req.listen_id, cmc_id_num(l));
	assert_int_equal(ev->u.req.remote_qpn, 0x321);
	assert_int_equal(ev->u.req.private_data[0], 0xee);
	assert_int_equal(ev->u.req.path.mtu, CM_MTU_1024);
	/* The app gives the new id its own context while handling it. */
	assert_int_equal(cmc_set_context(n, &nctx), 0);
	assert_ptr_equal(cmc_get_context(n), &nctx);
	assert_int_equal(cmc_ack_event(ev), 0);

	push(x, 500, CMP_EVENT_ESTABLISHED, (uintptr_t)&nctx);
	assert_int_equal(cmc_get_event_id(x->ch, n, &ev, FX_WAIT_MS), 0);
	assert_ptr_equal(ev->context, &nctx);
	assert_null(ev->listen_id);
	assert_int_equal(ev->type, CMC_EVENT_ESTABLISHED);
	/* Destroying the listener leaves the held event readable. */
	assert_int_equal(cmc_destroy_id(l), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_destroy_id(n), 0);
	assert_int_equal(cmc_destroy_id(NULL), -EINVAL);
}

/* A REQ queued in the library when its listener is destroyed stays. */
static void test_listener_destroyed_req_queued(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkid(x, NULL), *other = mkid(x, NULL);
	struct cmc_event *ev;
	struct cmp_msg m;

	fake_event(&m, 600, CMP_EVENT_REQ_RECEIVED, 0);
	m.event.req_received.listen_id = cmc_id_num(l);
	m.event.req_received.qp_type = CMP_QP_TYPE_RC;
	assert_int_equal(fake_push(x->f, &m), 0);
	/* Read into the queue during an unrelated request. */
	assert_int_equal(cmc_set_context(other, NULL), 0);
	assert_int_equal(cmc_event_pending(x->ch), 1);
	assert_int_equal(cmc_destroy_id(l), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), 0);
	assert_int_equal(cmc_id_num(ev->id), 600);
	assert_null(ev->listen_id);
	assert_int_equal(ev->u.req.listen_id, cmc_id_num(other) - 1);
	assert_int_equal(cmc_reject(ev->id, 28, NULL, 0, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
}

static void test_req_received_reused_id(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkid(x, NULL);
	struct cmc_event *ev;
	struct cmp_msg m;

	/* A REQ_RECEIVED naming a live id: the daemon is broken. */
	fake_event(&m, cmc_id_num(l), CMP_EVENT_REQ_RECEIVED, 0);
	m.event.req_received.listen_id = cmc_id_num(l);
	m.event.req_received.qp_type = CMP_QP_TYPE_RC;
	m.hdr.seq = 1;
	assert_int_equal(fake_send_msg(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), -EPROTO);
}

static void test_unknown_id_event_dropped(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL);

	push_tagged(x, 4242, 1); /* no such id here */
	push_tagged(x, cmc_id_num(a), 2);
	expect_tag(x, a, 2, true);
	expect_no_event(x);
}

/* --- A daemon that dies, hangs or talks garbage ----------------------- */

static bool hook_die_on_listen(struct fake *f, const struct cmp_msg *req)
{
	if (req->hdr.type != CMP_TYPE_LISTEN)
		return false;
	fake_die(f);
	return true;
}

static void test_daemon_dies_mid_request(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL), *b;
	struct cmc_event *held, *ev;

	push_tagged(x, cmc_id_num(a), 1);
	assert_int_equal(cmc_get_event(x->ch, &held, FX_WAIT_MS), 0);
	x->f->hook = hook_die_on_listen;
	assert_int_equal(cmc_listen(a, 1, ~0ull, 1, NULL), -ECONNRESET);
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &b),
			 -ECONNRESET);
	assert_int_equal(cmc_connect(a, &(struct cmc_conn_param){ 0 }),
			 -ECONNRESET);
	assert_int_equal(cmc_get_event(x->ch, &ev, -1), -ECONNRESET);
	/* Ack after death only frees; destroy frees the handle. */
	assert_int_equal(cmc_ack_event(held), 0);
	assert_int_equal(cmc_destroy_id(a), -ECONNRESET);
}

static void test_daemon_dies_idle(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL);
	struct cmc_event *ev;

	push_tagged(x, cmc_id_num(a), 1);
	/* The event is on the socket (sent in push) before the close. */
	{
		struct pollfd pfd = { .fd = cmc_fd(x->ch), .events = POLLIN };

		assert_int_equal(poll(&pfd, 1, FX_WAIT_MS), 1);
	}
	fake_die(x->f);
	/* The event that came before the death is still delivered. */
	expect_tag(x, a, 1, false);
	assert_int_equal(cmc_get_event(x->ch, &ev, -1), -ECONNRESET);
	assert_int_equal(cmc_set_context(a, NULL), -ECONNRESET);
}

static bool hook_silent(struct fake *f, const struct cmp_msg *req)
{
	(void)f;
	return req->hdr.type == CMP_TYPE_MRA;
}

static void test_daemon_hangs(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL);

	x->f->hook = hook_silent;
	cmc_set_request_timeout(x->ch, 100);
	assert_int_equal(cmc_mra(a, 1, NULL, 0), -ETIMEDOUT);
	assert_int_equal(cmc_set_context(a, NULL), -ETIMEDOUT);
}

/* What the hook sends instead of the RTU reply. */
static int bad_kind;

static bool hook_bad_reply(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg m;
	uint8_t raw[CMP_MSG_MAX + 100];
	struct cmp_hdr *h = (struct cmp_hdr *)raw;

	if (req->hdr.type != CMP_TYPE_RTU)
		return false;
	memset(raw, 0, sizeof(raw));
	switch (bad_kind) {
	case 0: /* wrong seq */
		cmp_msg_init(&m, CMP_TYPE_RTU_REPLY, req->hdr.seq + 1);
		fake_send_msg(f, &m);
		break;
	case 1: /* wrong type */
		cmp_msg_init(&m, CMP_TYPE_MRA_REPLY, req->hdr.seq);
		fake_send_msg(f, &m);
		break;
	case 2: /* header length lies */
		cmp_msg_init(&m, CMP_TYPE_RTU_REPLY, req->hdr.seq);
		memcpy(raw, &m, 24);
		h->length = 200;
		fake_send_raw(f, raw, 24);
		break;
	case 3: /* too long */
		h->version = 1;
		h->type = CMP_TYPE_RTU_REPLY;
		h->length = sizeof(raw);
		h->seq = req->hdr.seq;
		fake_send_raw(f, raw, sizeof(raw));
		break;
	case 4: /* a wrong version */
		cmp_msg_init(&m, CMP_TYPE_RTU_REPLY, req->hdr.seq);
		memcpy(raw, &m, 24);
		h->version = 7;
		h->length = 24;
		fake_send_raw(f, raw, 24);
		break;
	case 5: /* an event of an unknown type */
		h->version = 1;
		h->type = CMP_TYPE_EVENT;
		h->length = 16 + 24;
		h->seq = 1;
		raw[16] = 1; /* id 1 */
		raw[20] = 99; /* type 99 */
		fake_send_raw(f, raw, 16 + 24);
		break;
	case 6: /* a request, from the daemon */
		cmp_msg_init(&m, CMP_TYPE_ACK_EVENT, req->hdr.seq);
		m.ack_event.id = 1;
		m.ack_event.seq = 1;
		fake_send_msg(f, &m);
		break;
	case 7: /* three bytes */
		fake_send_raw(f, "abc", 3);
		break;
	case 8: /* nonzero reserved bytes in an event */
		cmp_msg_init(&m, CMP_TYPE_EVENT, 1);
		m.event.id = 1;
		m.event.type = CMP_EVENT_TIMEWAIT_EXIT;
		memcpy(raw, &m, 16 + 24);
		h->length = 16 + 24;
		raw[16 + 12] = 1; /* rsvd1 */
		fake_send_raw(f, raw, 16 + 24);
		break;
	case 9: /* an event with a state no engine has */
		cmp_msg_init(&m, CMP_TYPE_EVENT, 1);
		m.event.id = 1;
		m.event.type = CMP_EVENT_TIMEWAIT_EXIT;
		memcpy(raw, &m, 16 + 24);
		h->length = 16 + 24;
		raw[16 + 6] = CMP_STATE_MAX + 1; /* state */
		fake_send_raw(f, raw, 16 + 24);
		break;
	}
	return true;
}

static void test_malformed_replies(void **state)
{
	(void)state;
	for (bad_kind = 0; bad_kind <= 9; bad_kind++) {
		struct fx *x;
		struct cmc_id *a;
		struct cmc_event *ev;

		setup((void **)&x);
		a = mkid(x, NULL);
		x->f->hook = hook_bad_reply;
		assert_int_equal(cmc_rtu(a, NULL, 0), -EPROTO);
		/* Dead from now on, quietly. */
		assert_int_equal(cmc_rtu(a, NULL, 0), -EPROTO);
		assert_int_equal(cmc_get_event(x->ch, &ev, -1), -EPROTO);
		assert_int_equal(cmc_destroy_id(a), -EPROTO);
		fx_teardown((void **)&x);
	}
}

static void test_reply_out_of_turn(void **state)
{
	struct fx *x = *state;
	struct cmc_event *ev;
	struct cmp_msg m;

	cmp_msg_init(&m, CMP_TYPE_RTU_REPLY, 5);
	assert_int_equal(fake_send_msg(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), -EPROTO);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EPROTO);
}

static void test_close_with_held_events(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a = mkid(x, NULL), *b = mkid(x, NULL);
	struct cmc_event *held, *ev;

	push_tagged(x, cmc_id_num(a), 1);
	push_tagged(x, cmc_id_num(b), 2);
	assert_int_equal(cmc_get_event(x->ch, &held, FX_WAIT_MS), 0);
	/* b's event is read into the queue, then everything is closed. */
	assert_int_equal(cmc_get_event_id(x->ch, b, &ev, FX_WAIT_MS), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	push_tagged(x, cmc_id_num(b), 3);
	usleep(20000);
	cmc_close(x->ch);
	x->ch = NULL;
	/* The event outlives its channel; acking it only frees. */
	assert_int_equal(held->u.mra.service_timeout, 1);
	assert_int_equal(cmc_ack_event(held), 0);
}

static void test_strings(void **state)
{
	(void)state;
	assert_string_equal(cmc_event_str(CMC_EVENT_REQ_RECEIVED),
			    "REQ_RECEIVED");
	assert_string_equal(cmc_event_str((enum cmc_event_type)77), "UNKNOWN");
	assert_string_equal(cmc_state_str(CMC_STATE_MRA_REP_SENT),
			    "MRA_REP_SENT");
	assert_non_null(strstr(cmc_strerror(-ECONNRESET), "daemon"));
	assert_non_null(cmc_strerror(-ENOSPC));
	assert_non_null(cmc_strerror(-99999));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello_ok, setup,
						fx_teardown),
		cmocka_unit_test(test_hello_mismatch),
		cmocka_unit_test(test_hello_garbage),
		cmocka_unit_test(test_open_no_daemon),
		cmocka_unit_test_setup_teardown(test_create_set_context, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_listen, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_connect, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_passive_requests, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_lap_apr_sidr, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_ports, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ports_malformed, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_query_list_counters, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_event_interleaved_by_id,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ack_releases_next, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_drops_events,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_events_during_request,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fd_readable_on_socket,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_req_received_new_id, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_listener_destroyed_req_queued, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_req_received_reused_id,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_unknown_id_event_dropped,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_dies_mid_request,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_dies_idle, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_hangs, setup,
						fx_teardown),
		cmocka_unit_test(test_malformed_replies),
		cmocka_unit_test_setup_teardown(test_reply_out_of_turn, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_close_with_held_events,
						setup, fx_teardown),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
