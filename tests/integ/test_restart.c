// SPDX-License-Identifier: MIT
/*
 * Restarting the daemons under load (issue 17): 10,000 established
 * connections and 1,000 handshakes in flight between A and B, through
 * libcmclient from one asynchronous poll() loop. Then A is restarted
 * (SIGTERM: stop, hand over, start), then B (SIGUSR2: exec in place), five
 * times each. After every restart both daemons still hold every connection
 * in the state it had (their connection counts by state), and nothing went
 * out because of it (no REJ, no DREQ). The clients never see the restarts:
 * libcmclient resumes its session by itself. Then the handshakes complete
 * -- half had their REQ held unanswered by B's application, half their REP
 * held by A's -- and all 11,000 disconnect through DREQ/DREP and timewait.
 *
 * Every event is checked against each connection's one expected sequence
 * (A: REP_RECEIVED, DREP_RECEIVED, TIMEWAIT_EXIT; B: REQ_RECEIVED,
 * ESTABLISHED, DREQ_RECEIVED, TIMEWAIT_EXIT; MRA_RECEIVED may come
 * between, since held handshakes are MRAed): a lost event stalls the run
 * (and fails it, naming what is missing), a duplicated or misordered one
 * fails it at once. At the end both daemons hold only what they held
 * before. Prints the connections carried, the longest gap, the events.
 * And what a SIGKILL does instead (test_killed_daemon).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim_client.h"
#include "sim_harness.h"

#define NODE_B_LID 33
#define SID 0x0000000072657374ull
/* Established connections: 10,000, or RESTART_EST (a measurement of
 * larger states: scripts/bench-restart.sh). */
static unsigned int n_est = 10000;
#define N_EST n_est
#define N_HELD_REQ 500 /* B's application holds the REQ */
#define N_HELD_REP 500 /* A's application holds the REP */
#define N_ALL (N_EST + N_HELD_REQ + N_HELD_REP)
#define WINDOW 1000 /* handshakes started and not finished, phase 1 */
#define RESTARTS 5
/* A hang guard, not a speed bound: nothing in the loop may wait longer
 * than this for the next event. */
#define STALL_MS 60000

/* The events of one connection, side by side, in the order they came. */
enum step_a { A_NONE, A_REP, A_RTU_SENT, A_DREP, A_DONE };
enum step_b { B_NONE, B_REQ, B_EST, B_DREQ, B_DONE };

struct conn {
	unsigned int idx;
	struct cmc_id *a, *b;
	enum step_a sa;
	enum step_b sb;
	struct cmc_event *held; /* the event its application sits on */
};

struct run {
	struct cmc_channel *a, *b;
	struct cmc_id *lis;
	struct conn *c;
	unsigned int started, rep, est, dreq, done_a, done_b, held_reqs;
	unsigned long events, mras;
	bool hold; /* phase 2: hold what the held connections get */
};

static const char *sock_a, *sock_b;

static int group_setup(void **state)
{
	/* Held handshakes: the peer's MRA says 2^24 * 4.096 us (about 69
	 * s) of patience, so retransmissions never end them while the test
	 * holds them through ten restarts, however slow the machine. */
	static const char *const mra[] = { "--mra-timeout", "24",
					   /* RESTART_EST beyond the default
					    * 65,536 ids and events queued of
					    * one client (all disconnect at
					    * once) */
					   "--max-ids", "4000000",
					   "--max-queued", "4000000", NULL };
	const char *const *const extra[] = { mra, mra };

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	if (sim_fabric_start("restart", 17, 2, extra))
		return -1;
	sock_a = sim_fab.sock[0];
	sock_b = sim_fab.sock[1];
	return 0;
}

static bool held_req(unsigned int i)
{
	return i >= N_EST && i < N_EST + N_HELD_REQ;
}

static bool held_rep(unsigned int i)
{
	return i >= N_EST + N_HELD_REQ;
}

static void bad(const char *side, const struct conn *c,
		const struct cmc_event *ev)
{
	fail_msg("%s: connection %u: %s (status %d) after step %d/%d", side,
		 c ? c->idx : 0, cmc_event_str(ev->type), ev->status,
		 c ? (int)c->sa : -1, c ? (int)c->sb : -1);
}

static void start(struct run *r, unsigned int i)
{
	struct cmc_conn_param p = {
		.service_id = SID,
		.dst = { .family = CMC_AF_LID, .lid = NODE_B_LID },
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 15,
		/* 2^20 * 4.096 us, about 4 s, per try. */
		.local_cm_response_timeout = 20,
		.remote_cm_response_timeout = 20,
		.private_data = &r->c[i].idx,
		.private_data_len = sizeof(r->c[i].idx),
	};

	r->c[i].idx = i;
	assert_int_equal(cmc_create_id(r->a, &r->c[i], CMC_QP_RC, &r->c[i].a),
			 0);
	p.qp_num = 0x10000 + i;
	p.start_psn = i + 1;
	assert_int_equal(cmc_connect(r->c[i].a, &p), 0);
	r->started++;
}

static void rtu(struct run *r, struct conn *c, struct cmc_event *ev)
{
	assert_int_equal(cmc_rtu(c->a, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	c->sa = A_RTU_SENT;
}

static void accept_req(struct run *r, struct conn *c, struct cmc_event *ev)
{
	struct cmc_accept_param p = {
		.qp_num = 0x40000 + c->idx,
		.start_psn = 7,
		.responder_resources = 4,
		.initiator_depth = 4,
		.rnr_retry_count = 7,
	};

	assert_int_equal(cmc_accept(c->b, &p), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
}

static void on_a(struct run *r, struct cmc_event *ev)
{
	struct conn *c = ev->context;

	r->events++;
	if (!c || c->a != ev->id)
		bad("A", NULL, ev);
	switch (ev->type) {
	case CMC_EVENT_MRA_RECEIVED:
		r->mras++;
		assert_int_equal(cmc_ack_event(ev), 0);
		return;
	case CMC_EVENT_REP_RECEIVED:
		if (c->sa != A_NONE)
			bad("A", c, ev);
		c->sa = A_REP;
		r->rep++;
		if (held_rep(c->idx) && r->hold)
			c->held = ev; /* A's application sits on it */
		else
			rtu(r, c, ev);
		return;
	case CMC_EVENT_DREP_RECEIVED:
		if (c->sa != A_RTU_SENT)
			bad("A", c, ev);
		c->sa = A_DREP;
		assert_int_equal(cmc_ack_event(ev), 0);
		return;
	case CMC_EVENT_TIMEWAIT_EXIT:
		if (c->sa != A_DREP)
			bad("A", c, ev);
		c->sa = A_DONE;
		r->done_a++;
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_destroy_id(c->a), 0);
		return;
	default:
		bad("A", c, ev);
	}
}

static void on_b(struct run *r, struct cmc_event *ev)
{
	struct conn *c = ev->context;

	r->events++;
	if (ev->type == CMC_EVENT_REQ_RECEIVED) {
		uint32_t idx;

		if (ev->u.req.private_data_len < sizeof(idx))
			bad("B", NULL, ev);
		memcpy(&idx, ev->u.req.private_data, sizeof(idx));
		if (idx >= N_ALL)
			bad("B", NULL, ev);
		c = &r->c[idx];
		if (c->sb != B_NONE || c->b)
			bad("B", c, ev);
		c->b = ev->id;
		c->sb = B_REQ;
		assert_int_equal(cmc_set_context(c->b, c), 0);
		if (held_req(c->idx) && r->hold) {
			c->held = ev;
			r->held_reqs++;
		} else
			accept_req(r, c, ev);
		return;
	}
	if (!c || c->b != ev->id)
		bad("B", NULL, ev);
	switch (ev->type) {
	case CMC_EVENT_MRA_RECEIVED:
		r->mras++;
		assert_int_equal(cmc_ack_event(ev), 0);
		return;
	case CMC_EVENT_ESTABLISHED:
		if (c->sb != B_REQ)
			bad("B", c, ev);
		c->sb = B_EST;
		r->est++;
		assert_int_equal(cmc_ack_event(ev), 0);
		return;
	case CMC_EVENT_DREQ_RECEIVED:
		if (c->sb != B_EST)
			bad("B", c, ev);
		c->sb = B_DREQ;
		r->dreq++;
		assert_int_equal(cmc_disconnect(c->b, NULL, 0), 0);
		assert_int_equal(cmc_ack_event(ev), 0);
		return;
	case CMC_EVENT_TIMEWAIT_EXIT:
		if (c->sb != B_DREQ)
			bad("B", c, ev);
		c->sb = B_DONE;
		r->done_b++;
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(cmc_destroy_id(c->b), 0);
		return;
	default:
		bad("B", c, ev);
	}
}

/* One turn of the loop: send what is queued, wait for either channel,
 * take every event. cond says what the caller waits for. */
static void turn(struct run *r, const char *what)
{
	struct pollfd pfd[2] = {
		{ .fd = cmc_fd(r->a), .events = POLLIN },
		{ .fd = cmc_fd(r->b), .events = POLLIN },
	};
	struct cmc_event *ev;
	int rc;

	assert_int_equal(cmc_flush(r->a), 0);
	assert_int_equal(cmc_flush(r->b), 0);
	if (poll(pfd, 2, STALL_MS) == 0)
		fail_msg("stalled (%s): started %u, REP %u, ESTABLISHED %u, "
			 "DREQ %u, done %u/%u",
			 what, r->started, r->rep, r->est, r->dreq, r->done_a,
			 r->done_b);
	while ((rc = cmc_get_event(r->a, &ev, 0)) == 0)
		on_a(r, ev);
	assert_int_equal(rc, -EAGAIN);
	while ((rc = cmc_get_event(r->b, &ev, 0)) == 0)
		on_b(r, ev);
	assert_int_equal(rc, -EAGAIN);
}

/*
 * A daemon's connection counts by state (its COUNTERS conns_<state>, the
 * engine's own), all from one reading: a record that moves from REP_RCVD
 * to MRA_REP_SENT between two readings would count twice.
 */
struct snap {
	struct cmc_counter c[4 * CMC_COUNTERS_BATCH_MAX];
	int n;
};

static void take(struct cmc_channel *ch, struct snap *s)
{
	uint64_t cursor = 0;
	int n;

	s->n = 0;
	do {
		assert_true(s->n + CMC_COUNTERS_BATCH_MAX <=
			    (int)(sizeof(s->c) / sizeof(s->c[0])));
		n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor,
				 s->c + s->n);
		if (n < 0)
			fail_msg("COUNTERS: %s", cmc_strerror(n));
		s->n += n;
	} while (cursor);
}

static uint64_t in_state(const struct snap *s, const char *state)
{
	char name[64];

	snprintf(name, sizeof(name), "conns_%s", state);
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return s->c[i].value;
	fail_msg("no counter %s", name);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Both daemons hold every connection where it was. */
static void check_states(struct run *r, const char *when)
{
	static struct snap sa, sb;
	uint64_t ea, eb, rcvd, rep_a;

	take(r->a, &sa);
	take(r->b, &sb);
	ea = in_state(&sa, "established");
	eb = in_state(&sb, "established");
	rcvd = in_state(&sb, "req_rcvd") + in_state(&sb, "mra_req_sent");
	rep_a = in_state(&sa, "rep_rcvd") + in_state(&sa, "mra_rep_sent");
	if (ea != N_EST || eb != N_EST || rcvd != N_HELD_REQ ||
	    rep_a != N_HELD_REP)
		fail_msg("%s: A ESTABLISHED %llu, B ESTABLISHED %llu, B "
			 "holding REQs %llu, A holding REPs %llu",
			 when, (unsigned long long)ea, (unsigned long long)eb,
			 (unsigned long long)rcvd, (unsigned long long)rep_a);
}

static void test_restart_under_load(void **state)
{
	struct run r = { 0 };
	uint64_t rej_a, rej_b, dreq_a, dreq_b, ids_a, ids_b;
	double gap, worst = 0, t0;
	char when[64];

	(void)state;
	if (getenv("RESTART_EST"))
		n_est = (unsigned int)strtoul(getenv("RESTART_EST"), NULL, 0);
	r.c = calloc(N_ALL, sizeof(*r.c));
	assert_non_null(r.c);
	r.a = sim_open_ch(sock_a);
	r.b = sim_open_ch(sock_b);
	ids_a = sim_counter(r.a, "ids");
	ids_b = sim_counter(r.b, "ids");
	rej_a = sim_counter(r.a, "rej_sent");
	rej_b = sim_counter(r.b, "rej_sent");
	dreq_a = sim_counter(r.a, "dreq_sent");
	dreq_b = sim_counter(r.b, "dreq_sent");
	assert_int_equal(cmc_create_id(r.b, NULL, CMC_QP_RC, &r.lis), 0);
	/* Room for every held REQ and a window of others as credits. */
	assert_int_equal(
		cmc_listen(r.lis, SID, ~0ULL, N_HELD_REQ + WINDOW, NULL), 0);
	assert_int_equal(cmc_set_async(r.a, 1), 0);
	assert_int_equal(cmc_set_async(r.b, 1), 0);

	/* 1: 10,000 established, WINDOW at a time. */
	t0 = now_ms();
	while (r.est < N_EST) {
		while (r.started < N_EST && r.started - r.est < WINDOW)
			start(&r, r.started);
		turn(&r, "establishing");
	}
	fprintf(stderr, "# %u connections established in %.0f ms\n", N_EST,
		now_ms() - t0);
	/* 2: 1,000 more, held half way by their applications. */
	r.hold = true;
	while (r.started < N_ALL)
		start(&r, r.started);
	while (r.rep < N_EST + N_HELD_REP || r.held_reqs < N_HELD_REQ)
		turn(&r, "holding");
	check_states(&r, "before the restarts");

	/* 3: A, then B, five times each; the loop keeps running between. */
	for (int i = 0; i < RESTARTS; i++) {
		for (unsigned int d = 0; d < 2; d++) {
			double t;

			assert_int_equal(
				sim_daemon_restart(d, d ? SIGUSR2 : SIGTERM,
						   &gap),
				0);
			/* The library resumes on its first use. */
			t = now_ms();
			check_states(&r, "after a restart");
			gap += now_ms() - t;
			if (gap > worst)
				worst = gap;
			snprintf(when, sizeof(when), "restart %d of %c", i + 1,
				 'A' + d);
			fprintf(stderr,
				"# %s: %u connections carried, gap %.0f ms\n",
				when, N_ALL, gap);
		}
	}
	assert_int_equal(sim_counter(r.a, "rej_sent"), rej_a);
	assert_int_equal(sim_counter(r.b, "rej_sent"), rej_b);
	assert_int_equal(sim_counter(r.a, "dreq_sent"), dreq_a);
	assert_int_equal(sim_counter(r.b, "dreq_sent"), dreq_b);
	assert_int_equal(sim_counter(r.a, "handoffs_restored"), RESTARTS);
	assert_int_equal(sim_counter(r.b, "handoffs_restored"), RESTARTS);

	/* 4: the held handshakes complete. */
	r.hold = false;
	for (unsigned int i = N_EST; i < N_ALL; i++) {
		struct conn *c = &r.c[i];

		assert_non_null(c->held);
		if (held_req(i))
			accept_req(&r, c, c->held);
		else
			rtu(&r, c, c->held);
		c->held = NULL;
	}
	while (r.est < N_ALL)
		turn(&r, "completing");
	/* 5: every connection disconnects through DREQ/DREP. */
	for (unsigned int i = 0; i < N_ALL; i++)
		assert_int_equal(cmc_disconnect(r.c[i].a, NULL, 0), 0);
	while (r.done_a < N_ALL || r.done_b < N_ALL)
		turn(&r, "disconnecting");
	assert_int_equal(sim_counter(r.a, "dreq_sent"), dreq_a + N_ALL);
	assert_int_equal(sim_counter(r.b, "drep_sent") >= N_ALL, 1);
	assert_int_equal(sim_counter(r.a, "rej_sent"), rej_a);
	assert_int_equal(sim_counter(r.b, "rej_sent"), rej_b);
	fprintf(stderr,
		"# %d restarts of each daemon with %u connections (%u "
		"established, %u in flight); longest gap %.0f ms; %lu "
		"events checked (%lu MRA_RECEIVED)\n",
		RESTARTS, N_ALL, N_EST, N_HELD_REQ + N_HELD_REP, worst,
		r.events, r.mras);
	assert_int_equal(cmc_set_async(r.a, 0), 0);
	assert_int_equal(cmc_set_async(r.b, 0), 0);
	assert_int_equal(cmc_destroy_id(r.lis), 0);
	assert_int_equal(sim_counter(r.a, "ids"), ids_a + 0);
	assert_int_equal(sim_counter(r.b, "ids"), ids_b + 0);
	cmc_close(r.a);
	cmc_close(r.b);
	free(r.c);
}

/*
 * A daemon that is killed (SIGKILL, a crash) hands nothing over. Its
 * client's channel fails with -ECONNRESET once the next daemon says it has
 * no such session (libcmclient tried to resume); nothing is sent to the
 * peer for the lost connection, which stays ESTABLISHED on B; B's later
 * DREQ is answered with a DREP by the new A, which knows no such
 * connection (IBTA 12.9.8), so B's disconnect ends cleanly.
 */
static void test_killed_daemon(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	struct cmc_id *l, *ia, *ib;
	struct cmc_event *ev;
	int rc;

	(void)state;
	assert_true(cmc_resume_window(a) > 0);
	assert_int_equal(cmc_create_id(b, NULL, CMC_QP_RC, &l), 0);
	assert_int_equal(cmc_listen(l, SID + 1, ~0ULL, 4, NULL), 0);
	ia = sim_connect(a, NULL, SID + 1, NODE_B_LID, 0x9000, 18, NULL);
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	ib = ev->id;
	assert_int_equal(sim_accept(ib, 0x9100, NULL), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(a, ia);
	sim_check_ev(ev, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_rtu(ia, NULL, 0), 0);
	sim_expect_ev(b, ib, CMC_EVENT_ESTABLISHED);

	assert_int_equal(sim_daemon_restart(0, SIGKILL, NULL), 0);
	/* The library notices, tries to resume, and is told no. */
	do
		rc = cmc_get_event(a, &ev, SIM_WAIT_MS);
	while (rc == 0 && (cmc_ack_event(ev), 1));
	assert_int_equal(rc, -ECONNRESET);
	assert_int_equal(cmc_resume_count(a), 0);
	cmc_close(a);
	/* B still has its connection; its disconnect ends with a DREP. */
	assert_int_equal(sim_state_of(ib), CMC_STATE_ESTABLISHED);
	assert_int_equal(cmc_disconnect(ib, NULL, 0), 0);
	sim_expect_ev(b, ib, CMC_EVENT_DREP_RECEIVED);
	a = sim_open_ch(sock_a);
	assert_int_equal(sim_counter(a, "handoffs_restored"), 0);
	assert_int_equal(sim_counter(a, "rej_sent"), 0);
	assert_int_equal(sim_counter(a, "drep_sent"), 1);
	assert_int_equal(cmc_destroy_id(ib), 0);
	assert_int_equal(cmc_destroy_id(l), 0);
	cmc_close(a);
	cmc_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_under_load),
		cmocka_unit_test(test_killed_daemon),
	};

	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
