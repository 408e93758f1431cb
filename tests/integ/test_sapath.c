// SPDX-License-Identifier: MIT
/*
 * Paths from the subnet administrator (issue 19) on the simulated fabric:
 * the hub is the subnet's SM and SA (tools/cmhub_sa.c), and its path
 * attributes and faults are set with `cmhub --ctl`. Two IB daemons, A
 * connecting to B:
 *   - by GID and by LID, the REQ's path (as B's REQ_RECEIVED shows it) and
 *     A's path are the SA's (SL, MTU, rate, packet life time), not the
 *     local port's; a second connect is a cache hit;
 *   - a whole path from the program asks the SA nothing; a partial one
 *     asks for its SL, and the SA's answer carries it;
 *   - ERR_NO_RECORDS, an SA that never answers, BUSY, a redirect, an SM
 *     change (the cache flushed, the new SM asked);
 *   - cmc_resolve_route(): ROUTE_RESOLVED with the SA's path, and a
 *     CONNECT over it that asks nothing more;
 *   - an id destroyed while its CONNECT waits for a delayed answer;
 *   - equal questions at once: one query, the others join it.
 * Each case uses its own service id, which is part of what the daemon asks
 * (and caches), so that cases do not share cache entries.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "sim_client.h"
#include "sim_harness.h"

#define NODE_A_LID 17
#define NODE_B_LID 33

static struct cmc_channel *cha, *chb;
static struct cmc_id *listener;
static uint8_t gid_b[16];

/* cmhub --ctl with these options; fails the test when it fails. */
static void hub_ctl(const char *opts)
{
	if (sim_hub_ctl(opts))
		fail_msg("cmhub --ctl %s failed", opts);
}

static int group_setup(void **state)
{
	/*
	 * A makes two attempts of 2 s each: a silent SA (--sa-drop) fails
	 * in 4 s, and an answer the hub sends at once is never late, however
	 * loaded the machine (the verdicts count timeouts exactly).
	 */
	static const char *const a_args[] = { "--sa-timeout", "2000",
					      "--sa-retries", "1", NULL };
	const char *const *const extra[] = { a_args, NULL };
	struct cmc_port_info pi[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;

	(void)state;
	if (sim_fabric_start("sapath", 19, 2, extra))
		return -1;
	cha = sim_open_ch(sim_fab.sock[0]);
	chb = sim_open_ch(sim_fab.sock[1]);
	if (cmc_ports(chb, &cursor, pi) < 1) {
		fprintf(stderr, "PORTS of B: %s\n", cmc_last_error());
		return -1;
	}
	memcpy(gid_b, pi[0].gids[0].gid, 16);
	if (cmc_create_id(chb, NULL, CMC_QP_RC, &listener) ||
	    cmc_listen(listener, 0x1900, 0xff00, 64, NULL)) {
		fprintf(stderr, "LISTEN on B: %s\n", cmc_last_error());
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	cmc_destroy_id(listener);
	cmc_close(cha);
	cmc_close(chb);
	return sim_group_teardown(state);
}

/* Each connect its own QPN: a QPN of a connection in timewait at B
 * would be a stale connection (REJ 10), as it should. */
static struct cmc_conn_param conn(uint64_t sid, const struct cmc_addr *dst)
{
	static uint32_t qpn = 0x100;
	struct cmc_conn_param p = {
		.service_id = sid,
		.dst = *dst,
		.qp_num = qpn++,
		.start_psn = 7,
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 5,
	};

	return p;
}

static struct cmc_addr by_gid(void)
{
	struct cmc_addr a = { .family = CMC_AF_GID };

	memcpy(a.addr, gid_b, 16);
	return a;
}

static struct cmc_addr by_lid(void)
{
	return (struct cmc_addr){ .family = CMC_AF_LID, .lid = NODE_B_LID };
}

/*
 * p connects A to B; B accepts; both see the path. *req_path: the path of
 * B's REQ_RECEIVED (the REQ's fields), *a_path: A's REP_RECEIVED path.
 */
static void connect_ok(const struct cmc_conn_param *pp, struct cmc_path *req,
		       struct cmc_path *rep)
{
	struct cmc_conn_param q = conn(pp->service_id, &pp->dst);
	const struct cmc_conn_param *p = &q;
	struct cmc_id *a, *b;
	struct cmc_event *ev;

	q.path = pp->path; /* a fresh QPN, the rest as asked */

	assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_connect(a, p), 0);
	ev = sim_next_ev(chb, NULL);
	if (ev->type != CMC_EVENT_REQ_RECEIVED)
		fail_msg("B: %s, want REQ_RECEIVED", cmc_event_str(ev->type));
	b = ev->id;
	*req = ev->u.req.path;
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(sim_accept(b, p->qp_num + 0x1000, NULL), 0);
	ev = sim_next_ev(cha, a);
	if (ev->type != CMC_EVENT_REP_RECEIVED)
		fail_msg("A: %s (status %d), want REP_RECEIVED",
			 cmc_event_str(ev->type), ev->status);
	*rep = ev->u.rep.path;
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_rtu(a, NULL, 0), 0);
	sim_expect_ev(chb, b, CMC_EVENT_ESTABLISHED);
	assert_int_equal(cmc_disconnect(a, NULL, 0), 0);
	sim_expect_ev(chb, b, CMC_EVENT_DREQ_RECEIVED);
	assert_int_equal(cmc_disconnect(b, NULL, 0), 0);
	sim_expect_ev(cha, a, CMC_EVENT_DREP_RECEIVED);
	assert_int_equal(cmc_destroy_id(a), 0);
	assert_int_equal(cmc_destroy_id(b), 0);
}

/* p's CONNECT fails with CONNECT_ERROR status err and nothing sent. */
static void connect_fails(const struct cmc_conn_param *p, int err)
{
	uint64_t req_sent = sim_counter(cha, "req_sent");
	struct cmc_event *ev;
	struct cmc_id *a;

	assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_connect(a, p), 0);
	ev = sim_next_ev(cha, a);
	if (ev->type != CMC_EVENT_CONNECT_ERROR || ev->status != err)
		fail_msg("%s status %d, want CONNECT_ERROR %d",
			 cmc_event_str(ev->type), ev->status, err);
	assert_int_equal(ev->u.connect_error.msg, CMC_CM_MSG_NONE);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(sim_state_of(a), CMC_STATE_IDLE);
	assert_int_equal(sim_counter(cha, "req_sent"), req_sent);
	assert_int_equal(cmc_destroy_id(a), 0);
	sim_expect_quiet(chb);
}

static void expect_sa_path(const struct cmc_path *p, uint8_t sl, uint8_t mtu,
			   uint8_t rate, uint8_t plt)
{
	if (p->sl != sl || p->mtu != mtu || p->packet_rate != rate ||
	    p->packet_life_time != plt)
		fail_msg("path sl %u mtu %u rate %u plt %u, want %u %u %u %u",
			 p->sl, p->mtu, p->packet_rate, p->packet_life_time, sl,
			 mtu, rate, plt);
}

/* The SA's attributes, not the port's (MTU 2048, SL 0, rate 3). */
static void test_by_gid_and_lid(void **state)
{
	struct cmc_addr g = by_gid(), l = by_lid();
	struct cmc_conn_param p = conn(0x1901, &g);
	struct cmc_path req, rep;
	uint64_t q0 = sim_counter(cha, "sa_queries");
	uint64_t h0 = sim_counter(cha, "sa_cache_hits");

	(void)state;
	hub_ctl("--sa-sl 5 --sa-mtu 3 --sa-rate 7 --sa-plt 10");
	connect_ok(&p, &req, &rep);
	expect_sa_path(&req, 5, 3, 7, 10);
	expect_sa_path(&rep, 5, 3, 7, 10);
	assert_int_equal(req.remote_lid, NODE_A_LID);
	assert_int_equal(rep.remote_lid, NODE_B_LID);
	/* The REQ's local ACK timeout: PLT + 1 (CA ack delay 0). */
	assert_int_equal(req.local_ack_timeout, 11);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);
	/* The same question again: the cache answers. */
	connect_ok(&p, &req, &rep);
	expect_sa_path(&req, 5, 3, 7, 10);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);
	assert_int_equal(sim_counter(cha, "sa_cache_hits"), h0 + 1);

	p = conn(0x1902, &l);
	connect_ok(&p, &req, &rep);
	expect_sa_path(&req, 5, 3, 7, 10);
	assert_int_equal(rep.remote_lid, NODE_B_LID);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 2);
}

/* A whole path asks nothing; a partial one asks for its SL. */
static void test_program_path(void **state)
{
	struct cmc_addr g = by_gid();
	struct cmc_conn_param p = conn(0x1903, &g);
	struct cmc_path req, rep;
	uint64_t q0 = sim_counter(cha, "sa_queries");

	(void)state;
	p.path.flags = CMC_PATH_MTU | CMC_PATH_PKEY | CMC_PATH_SL |
		       CMC_PATH_HOP_LIMIT | CMC_PATH_FLOW_LABEL |
		       CMC_PATH_TRAFFIC_CLASS | CMC_PATH_PACKET_RATE;
	p.path.mtu = 2;
	p.path.pkey = 0xffff;
	p.path.sl = 2;
	p.path.packet_rate = 6;
	p.path.hop_limit = 0;
	connect_ok(&p, &req, &rep);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0);
	assert_int_equal(req.sl, 2);
	assert_int_equal(req.mtu, 2);
	assert_int_equal(req.packet_rate, 6);

	p = conn(0x1904, &g);
	p.path.flags = CMC_PATH_SL | CMC_PATH_PACKET_RATE;
	p.path.sl = 9;
	p.path.packet_rate = 4; /* an override of the answer, not asked */
	connect_ok(&p, &req, &rep);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);
	expect_sa_path(&req, 9, 3, 4, 10);
}

static void test_sa_errors(void **state)
{
	struct cmc_addr g = by_gid();
	struct cmc_conn_param p = conn(0x1905, &g);
	struct cmc_path req, rep;
	uint64_t busy0 = sim_counter(cha, "sa_busy");
	uint64_t to0 = sim_counter(cha, "sa_timeouts");

	(void)state;
	/* ERR_NO_RECORDS: -ENOENT, and nothing is cached. */
	hub_ctl("--sa-error 3 --sa-count 1");
	connect_fails(&p, -ENOENT);
	connect_ok(&p, &req, &rep);

	/* No answer to either attempt: -ETIMEDOUT. */
	p = conn(0x1906, &g);
	hub_ctl("--sa-drop 2");
	connect_fails(&p, -ETIMEDOUT);
	assert_int_equal(sim_counter(cha, "sa_timeouts"), to0 + 2);

	/* BUSY twice, then the answer. */
	p = conn(0x1907, &g);
	hub_ctl("--sa-busy 2");
	connect_ok(&p, &req, &rep);
	assert_int_equal(sim_counter(cha, "sa_busy"), busy0 + 2);

	/* Redirected to another LID and QP (the hub answers there too). */
	p = conn(0x1908, &g);
	hub_ctl("--sa-redirect 40:77");
	connect_ok(&p, &req, &rep);
	expect_sa_path(&req, 5, 3, 7, 10);
	assert_true(sim_counter(cha, "sa_redirects") >= 1);
	hub_ctl("--sa-redirect off");
}

/* The SM moves: the cache is flushed and the new SM is asked. */
static void test_sm_change(void **state)
{
	struct cmc_addr g = by_gid();
	struct cmc_conn_param p = conn(0x1901, &g);
	struct cmc_path req, rep;
	uint64_t q0 = sim_counter(cha, "sa_queries");
	uint64_t f0 = sim_counter(cha, "sa_cache_flushed");

	(void)state;
	assert_true(sim_counter(cha, "sa_cache_entries") > 0);
	hub_ctl("--sm-lid 50 --sa-sl 6");
	/* The flush follows the hub's message; wait for it by its effect. */
	for (int i = 0; i < 300 && sim_counter(cha, "sa_cache_entries"); i++)
		usleep(10000);
	assert_int_equal(sim_counter(cha, "sa_cache_entries"), 0);
	assert_true(sim_counter(cha, "sa_cache_flushed") > f0);
	/* Asked again (sid 0x1901 was cached before), of the new SM. */
	connect_ok(&p, &req, &rep);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);
	expect_sa_path(&req, 6, 3, 7, 10);
	hub_ctl("--sm-lid 1 --sa-sl 5");
}

static void test_resolve_route(void **state)
{
	struct cmc_addr g = by_gid();
	struct cmc_route_param r = { .service_id = 0x1909, .dst = g };
	struct cmc_conn_param p = conn(0x1909, &g);
	struct cmc_path req, rep;
	struct cmc_event *ev;
	struct cmc_id *a;
	uint64_t q0 = sim_counter(cha, "sa_queries");

	(void)state;
	assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_resolve_route(a, &r), 0);
	ev = sim_next_ev(cha, a);
	if (ev->type != CMC_EVENT_ROUTE_RESOLVED || ev->status)
		fail_msg("%s status %d, want ROUTE_RESOLVED",
			 cmc_event_str(ev->type), ev->status);
	assert_int_equal(ev->u.route.from_sa, 1);
	expect_sa_path(&ev->u.route.path, 5, 3, 7, 10);
	assert_int_equal(ev->u.route.path.remote_lid, NODE_B_LID);
	assert_memory_equal(ev->u.route.path.remote_gid, gid_b, 16);
	/* Connect over it as rdma_connect does: a whole path. */
	p.path.flags = CMC_PATH_MTU | CMC_PATH_PKEY | CMC_PATH_SL |
		       CMC_PATH_HOP_LIMIT | CMC_PATH_FLOW_LABEL |
		       CMC_PATH_TRAFFIC_CLASS | CMC_PATH_PACKET_RATE;
	p.path.mtu = ev->u.route.path.mtu;
	p.path.pkey = ev->u.route.path.pkey;
	p.path.sl = ev->u.route.path.sl;
	p.path.packet_rate = ev->u.route.path.packet_rate;
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_destroy_id(a), 0);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);
	connect_ok(&p, &req, &rep);
	/* PLT is not a path setting: the daemon's own (the harness: 8). */
	expect_sa_path(&req, 5, 3, 7, 8);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);

	/* No path: ROUTE_RESOLVED with -ENOENT. */
	r.service_id = 0x190a;
	hub_ctl("--sa-error 3 --sa-count 1");
	assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_resolve_route(a, &r), 0);
	ev = sim_next_ev(cha, a);
	assert_int_equal(ev->type, CMC_EVENT_ROUTE_RESOLVED);
	assert_int_equal(ev->status, -ENOENT);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_destroy_id(a), 0);
}

/*
 * The SA's alternate (--sa-lmc 1: two paths, base LIDs + 1 the second):
 * ROUTE_RESOLVED carries it, and LAP loads it on the connection.
 */
static void test_alternate_lap(void **state)
{
	struct cmc_addr g = by_gid();
	struct cmc_route_param r = { .service_id = 0x190c, .dst = g };
	struct cmc_conn_param p = conn(0x190c, &g);
	struct cmc_path alt;
	struct cmc_event *ev;
	struct cmc_id *a, *b;

	(void)state;
	hub_ctl("--sa-lmc 1");
	assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_resolve_route(a, &r), 0);
	ev = sim_next_ev(cha, a);
	assert_int_equal(ev->type, CMC_EVENT_ROUTE_RESOLVED);
	assert_int_equal(ev->status, 0);
	assert_int_equal(ev->u.route.has_alt, 1);
	assert_int_equal(ev->u.route.path.remote_lid, NODE_B_LID);
	assert_int_equal(ev->u.route.alt_path.remote_lid, NODE_B_LID + 1);
	assert_int_equal(ev->u.route.alt_path.local_lid, NODE_A_LID + 1);
	expect_sa_path(&ev->u.route.alt_path, 5, 3, 7, 10);
	alt = ev->u.route.alt_path;
	/* The event is the daemon's own; until it is acked nothing else
	 * may start on the id. */
	assert_int_equal(cmc_connect(a, &p), -EBUSY);
	assert_int_equal(cmc_ack_event(ev), 0);

	assert_int_equal(cmc_connect(a, &p), 0);
	ev = sim_next_ev(chb, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	b = ev->id;
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(sim_accept(b, p.qp_num + 0x1000, NULL), 0);
	sim_expect_ev(cha, a, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_rtu(a, NULL, 0), 0);
	sim_expect_ev(chb, b, CMC_EVENT_ESTABLISHED);

	/* Not IDLE: RESOLVE_ROUTE is refused, and a CONNECT that would
	 * miss the cache (a new service id) is refused by the engine at
	 * once, not after an SA query. */
	assert_int_equal(cmc_resolve_route(a, &r), -EINVAL);
	{
		struct cmc_conn_param p2 = conn(0x190d, &g);
		uint64_t q0 = sim_counter(cha, "sa_queries");

		assert_int_equal(cmc_connect(a, &p2), -EINVAL);
		assert_int_equal(sim_counter(cha, "sa_queries"), q0);
	}

	/* LAP with the SA's alternate; B sees it from its side. */
	assert_int_equal(cmc_lap(a, &alt, NULL, 0), 0);
	ev = sim_next_ev(chb, b);
	assert_int_equal(ev->type, CMC_EVENT_LAP_RECEIVED);
	assert_int_equal(ev->u.lap.alt_path.remote_lid, NODE_A_LID + 1);
	assert_int_equal(ev->u.lap.alt_path.local_lid, NODE_B_LID + 1);
	assert_int_equal(ev->u.lap.alt_path.sl, 5);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_apr(b, 0, NULL, 0, NULL, 0), 0);
	ev = sim_next_ev(cha, a);
	assert_int_equal(ev->type, CMC_EVENT_APR_RECEIVED);
	assert_int_equal(ev->status, 0);
	assert_int_equal(ev->u.apr.ap_status, 0);
	assert_int_equal(cmc_ack_event(ev), 0);

	assert_int_equal(cmc_disconnect(a, NULL, 0), 0);
	sim_expect_ev(chb, b, CMC_EVENT_DREQ_RECEIVED);
	assert_int_equal(cmc_disconnect(b, NULL, 0), 0);
	sim_expect_ev(cha, a, CMC_EVENT_DREP_RECEIVED);
	assert_int_equal(cmc_destroy_id(a), 0);
	assert_int_equal(cmc_destroy_id(b), 0);
	hub_ctl("--sa-lmc 0");
}

/* Destroyed while waiting: no event, no REQ, nothing left behind. */
static void test_destroy_while_waiting(void **state)
{
	struct cmc_addr g = by_gid();
	struct cmc_conn_param p = conn(0x190b, &g);
	uint64_t req_sent = sim_counter(cha, "req_sent");
	struct cmc_id *a;

	(void)state;
	hub_ctl("--sa-delay-ms 10000");
	assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_connect(a, &p), 0);
	assert_true(sim_counter(cha, "sa_in_flight") >= 1);
	assert_int_equal(cmc_destroy_id(a), 0);
	assert_int_equal(sim_counter(cha, "sa_in_flight"), 0);
	hub_ctl("--sa-delay-ms 0"); /* the late answer matches nothing */
	sim_expect_quiet(cha);
	assert_int_equal(sim_counter(cha, "req_sent"), req_sent);
	assert_int_equal(sim_count_ids(cha, CMC_LIST_ALL), 0);
}

/*
 * Equal questions at once: N connects to one destination and service while
 * the SA holds its answer make one query, the others joining it. The first
 * asker (whose miss started it) is destroyed while it waits: the query goes
 * on for the rest, and each connects with the SA's path. Then two joined
 * connects share one failure.
 *
 * The hub holds the answers until it is told to let go; A's attempts wait
 * 2 s each (group_setup), which the few calls between the connects and the
 * let-go stay far inside. Were an attempt retried even so, its answer is
 * held and let go too, and --sa-count 2 fails a retried query as well.
 */
static void test_equal_queries_joined(void **state)
{
	enum { N = 4 };
	struct cmc_addr g = by_gid();
	struct cmc_conn_param p[N];
	struct cmc_id *a[N], *b;
	struct cmc_event *ev;
	uint64_t q0 = sim_counter(cha, "sa_queries");
	uint64_t j0 = sim_counter(cha, "sa_joined");
	uint64_t req_sent = sim_counter(cha, "req_sent");

	(void)state;
	hub_ctl("--sa-delay-ms 10000");
	for (int i = 0; i < N; i++) {
		p[i] = conn(0x190e, &g);
		assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a[i]), 0);
		assert_int_equal(cmc_connect(a[i], &p[i]), 0);
	}
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);
	assert_int_equal(sim_counter(cha, "sa_joined"), j0 + N - 1);
	assert_int_equal(sim_counter(cha, "sa_in_flight"), 1);
	assert_int_equal(cmc_destroy_id(a[0]), 0);
	assert_int_equal(sim_counter(cha, "sa_in_flight"), 1);
	hub_ctl("--sa-delay-ms 0");

	for (int i = 1; i < N; i++) {
		ev = sim_next_ev(chb, NULL);
		if (ev->type != CMC_EVENT_REQ_RECEIVED)
			fail_msg("B: %s, want REQ_RECEIVED",
				 cmc_event_str(ev->type));
		expect_sa_path(&ev->u.req.path, 5, 3, 7, 10);
		b = ev->id;
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_reject(b, CMC_REJ_CONSUMER_DEFINED, NULL,
					    0, NULL, 0),
				 0);
		assert_int_equal(cmc_destroy_id(b), 0);
	}
	for (int i = 1; i < N; i++) {
		ev = sim_next_ev(cha, a[i]);
		if (ev->type != CMC_EVENT_REJ_RECEIVED)
			fail_msg("A: %s (status %d), want REJ_RECEIVED",
				 cmc_event_str(ev->type), ev->status);
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_destroy_id(a[i]), 0);
	}
	assert_int_equal(sim_counter(cha, "req_sent"), req_sent + N - 1);
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 1);

	/* One failure for both, and nothing cached. */
	hub_ctl("--sa-delay-ms 10000 --sa-error 3 --sa-count 2");
	for (int i = 0; i < 2; i++) {
		p[i] = conn(0x190f, &g);
		assert_int_equal(cmc_create_id(cha, NULL, CMC_QP_RC, &a[i]), 0);
		assert_int_equal(cmc_connect(a[i], &p[i]), 0);
	}
	assert_int_equal(sim_counter(cha, "sa_queries"), q0 + 2);
	hub_ctl("--sa-delay-ms 0");
	for (int i = 0; i < 2; i++) {
		ev = sim_next_ev(cha, a[i]);
		if (ev->type != CMC_EVENT_CONNECT_ERROR ||
		    ev->status != -ENOENT)
			fail_msg("%s status %d, want CONNECT_ERROR -ENOENT",
				 cmc_event_str(ev->type), ev->status);
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_destroy_id(a[i]), 0);
	}
	hub_ctl("--sa-error 0");
	assert_int_equal(sim_counter(cha, "sa_joined"), j0 + N);
	assert_int_equal(sim_counter(cha, "req_sent"), req_sent + N - 1);
	sim_expect_quiet(chb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_gid_and_lid),
		cmocka_unit_test(test_program_path),
		cmocka_unit_test(test_sa_errors),
		cmocka_unit_test(test_sm_change),
		cmocka_unit_test(test_resolve_route),
		cmocka_unit_test(test_alternate_lap),
		cmocka_unit_test(test_destroy_while_waiting),
		cmocka_unit_test(test_equal_queries_joined),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
