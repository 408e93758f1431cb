// SPDX-License-Identifier: MIT
/*
 * libcmclient's asynchronous mode end to end on the simulated fabric: a
 * cmhub, two cmd daemons and one process driving a client channel on each
 * daemon, both pipelined. 2,000 connections with up to 200 in flight are
 * established and torn down from a single poll() loop, and afterwards the
 * daemons hold no more ids or records than before. Also: a NOREPLY
 * request the daemon refuses comes back as REQUEST_ERROR on its id.
 *
 * The harness (programs from $CMHUB and $CMD, a temporary directory, a
 * short packet life time) is sim_harness.c, as for test_sim.c.
 *
 * For measurements only: TEST_ASYNC_BLOCKING=1 runs the same loop with
 * the channels left in blocking mode, the baseline to compare the
 * printed rate with.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "sim_client.h"
#include "sim_harness.h"

#define NODE_B_LID 33 /* node 2, port 1: see daemon/xport_sim.c */
#define WAIT_MS 30000 /* no progress at all for this long: a hang */
#define CONNS 2000
#define IN_FLIGHT 200

static bool blocking; /* $TEST_ASYNC_BLOCKING */
static const char *sock_a, *sock_b;

static int group_setup(void **state)
{
	(void)state;
	if (sim_fabric_start("async", 12, 2, NULL))
		return -1;
	sock_a = sim_fab.sock[0];
	sock_b = sim_fab.sock[1];
	return 0;
}

/* The ids a daemon holds (for every client: CI runs as root). */
static int ids_on(const char *sock)
{
	struct cmc_channel *ch = sim_open_ch(sock);
	int n = sim_count_ids(ch, CMC_LIST_ALL);

	cmc_close(ch);
	return n;
}

static uint64_t records_on(const char *sock)
{
	struct cmc_channel *ch = sim_open_ch(sock);
	uint64_t value = sim_counter(ch, "records");

	cmc_close(ch);
	return value;
}

/*
 * Wait (30 s at most: the last timewaits end within ms, a leak never)
 * until the daemon at sock is back to its baseline of ids and records.
 */
static void expect_baseline(const char *sock, int ids, uint64_t records)
{
	for (int i = 0; i < 3000; i++) {
		if (ids_on(sock) <= ids && records_on(sock) <= records)
			break;
		usleep(10000);
	}
	assert_int_equal(ids_on(sock), ids);
	assert_int_equal(records_on(sock), records);
}

static void fail_event(const char *side, const struct cmc_event *ev)
{
	fail_msg("%s: unexpected %s (status %d: %s)", side,
		 cmc_event_str(ev->type), ev->status, cmc_strerror(ev->status));
}

/* --------------------------------------------------------------------- */

struct run {
	struct cmc_channel *a, *b;
	uint64_t sid;
	unsigned int started; /* CONNECTs made on A */
	unsigned int reps; /* REP_RECEIVED on A, answered by RTU */
	unsigned int a_done; /* DREQ_RECEIVED on A: answered, destroyed */
	unsigned int reqs; /* REQ_RECEIVED on B, accepted */
	unsigned int established; /* ESTABLISHED on B, DREQ sent */
	unsigned int b_done; /* DREP_RECEIVED on B: destroyed */
};

/*
 * The active side: REP -> RTU; the passive side's DREQ -> DREP, and the
 * id goes at once (its TIMEWAIT_EXIT, still to come, is dropped).
 */
static void on_a(struct run *r, struct cmc_event *ev)
{
	struct cmc_id *id = ev->id;

	switch (ev->type) {
	case CMC_EVENT_REP_RECEIVED:
		assert_int_equal(cmc_rtu(id, NULL, 0), 0);
		assert_int_equal(cmc_ack_event(ev), 0);
		r->reps++;
		break;
	case CMC_EVENT_DREQ_RECEIVED:
		assert_int_equal(cmc_disconnect(id, NULL, 0), 0);
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_destroy_id(id), 0);
		r->a_done++;
		break;
	case CMC_EVENT_MRA_RECEIVED:
		/* The peer's app was slow (a busy machine): a note. */
		assert_int_equal(cmc_ack_event(ev), 0);
		break;
	default:
		fail_event("A", ev);
	}
}

/* The passive side: REQ -> ACCEPT; ESTABLISHED -> DREQ; DREP -> gone. */
static void on_b(struct run *r, struct cmc_event *ev)
{
	struct cmc_id *id = ev->id;

	switch (ev->type) {
	case CMC_EVENT_REQ_RECEIVED:
		assert_int_equal(sim_accept(id, 0x2000 + r->reqs, NULL), 0);
		assert_int_equal(cmc_ack_event(ev), 0);
		r->reqs++;
		break;
	case CMC_EVENT_ESTABLISHED:
		assert_int_equal(cmc_disconnect(id, NULL, 0), 0);
		assert_int_equal(cmc_ack_event(ev), 0);
		r->established++;
		break;
	case CMC_EVENT_DREP_RECEIVED:
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_destroy_id(id), 0);
		r->b_done++;
		break;
	case CMC_EVENT_MRA_RECEIVED:
		/* The peer's app was slow (a busy machine): a note. */
		assert_int_equal(cmc_ack_event(ev), 0);
		break;
	default:
		fail_event("B", ev);
	}
}

/* Start connections on A while fewer than IN_FLIGHT are unfinished. */
static void start_some(struct run *r)
{
	struct cmc_conn_param p = {
		.service_id = r->sid,
		.dst = { .family = CMC_AF_LID, .lid = NODE_B_LID },
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 5,
		.local_cm_response_timeout = 16,
		.remote_cm_response_timeout = 16,
	};
	struct cmc_id *id;

	while (r->started < CONNS && r->started - r->a_done < IN_FLIGHT) {
		assert_int_equal(cmc_create_id(r->a, NULL, CMC_QP_RC, &id), 0);
		/* No round trip at all: CONNECT creates the daemon's id. */
		if (!blocking)
			assert_int_equal(cmc_id_num(id), 0);
		p.qp_num = 0x1000 + r->started;
		p.start_psn = r->started + 1;
		assert_int_equal(cmc_connect(id, &p), 0);
		r->started++;
	}
}

static void drain(struct run *r, struct cmc_channel *ch,
		  void (*on)(struct run *, struct cmc_event *))
{
	struct cmc_event *ev;
	int rc;

	while ((rc = cmc_get_event(ch, &ev, 0)) == 0)
		on(r, ev);
	assert_int_equal(rc, -EAGAIN);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_many_pipelined(void **state)
{
	int ids_a = ids_on(sock_a), ids_b = ids_on(sock_b);
	uint64_t rec_a = records_on(sock_a), rec_b = records_on(sock_b);
	struct run r = { .sid = 0x5000 };
	struct cmc_id *l;
	double t0;

	r.a = sim_open_ch(sock_a);
	r.b = sim_open_ch(sock_b);
	assert_int_equal(cmc_create_id(r.b, NULL, CMC_QP_RC, &l), 0);
	assert_int_equal(cmc_listen(l, r.sid, ~0ULL, IN_FLIGHT, NULL), 0);
	assert_int_equal(cmc_set_async(r.a, !blocking), 0);
	assert_int_equal(cmc_set_async(r.b, !blocking), 0);
	t0 = now_s();
	while (r.a_done < CONNS || r.b_done < CONNS) {
		struct pollfd pfd[2] = {
			{ .fd = cmc_fd(r.a), .events = POLLIN },
			{ .fd = cmc_fd(r.b), .events = POLLIN },
		};

		start_some(&r);
		/* Before blocking: what is queued may be what the daemons
		 * wait for. */
		assert_int_equal(cmc_flush(r.a), 0);
		assert_int_equal(cmc_flush(r.b), 0);
		if (poll(pfd, 2, WAIT_MS) == 0)
			fail_msg("stalled: started %u reps %u reqs %u "
				 "established %u done %u/%u",
				 r.started, r.reps, r.reqs, r.established,
				 r.a_done, r.b_done);
		drain(&r, r.a, on_a);
		drain(&r, r.b, on_b);
	}
	fprintf(stderr, "# %u connections, %u in flight, %s: %.0f/s\n", CONNS,
		IN_FLIGHT, blocking ? "blocking" : "asynchronous",
		CONNS / (now_s() - t0));
	assert_int_equal(r.reps, CONNS);
	assert_int_equal(r.reqs, CONNS);
	assert_int_equal(r.established, CONNS);
	assert_int_equal(cmc_set_async(r.a, 0), 0);
	assert_int_equal(cmc_set_async(r.b, 0), 0);
	assert_int_equal(cmc_destroy_id(l), 0);
	cmc_close(r.a);
	cmc_close(r.b);
	expect_baseline(sock_a, ids_a, rec_a);
	expect_baseline(sock_b, ids_b, rec_b);
}

/* A refused NOREPLY request: REQUEST_ERROR on its id, acked locally. */
static void test_refused_request(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a);
	struct cmc_event *ev;
	struct cmc_id *id;
	int ctx;

	assert_int_equal(cmc_set_async(a, 1), 0);
	assert_int_equal(cmc_create_id(a, &ctx, CMC_QP_RC, &id), 0);
	/* RTU of an idle id: the daemon says -EINVAL, later. (The id is
	 * created first, with a round trip: RTU cannot create it.) */
	assert_int_equal(cmc_rtu(id, NULL, 0), 0);
	assert_int_not_equal(cmc_id_num(id), 0);
	assert_int_equal(cmc_get_event(a, &ev, WAIT_MS), 0);
	assert_int_equal(ev->type, CMC_EVENT_REQUEST_ERROR);
	assert_ptr_equal(ev->id, id);
	assert_ptr_equal(ev->context, &ctx);
	assert_int_equal(ev->status, -EINVAL);
	assert_int_equal(ev->u.request_error.request, CMC_REQ_RTU);
	assert_int_equal(cmc_ack_event(ev), 0);
	/* The channel goes on: a blocking call still works. */
	assert_int_equal(cmc_set_async(a, 0), 0);
	assert_int_equal(cmc_destroy_id(id), 0);
	cmc_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_request),
		cmocka_unit_test(test_many_pipelined),
	};

	blocking = getenv("TEST_ASYNC_BLOCKING") &&
		   !strcmp(getenv("TEST_ASYNC_BLOCKING"), "1");
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
