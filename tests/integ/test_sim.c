// SPDX-License-Identifier: MIT
/*
 * The product end to end on the simulated fabric: a cmhub process, two cmd
 * daemons (nodes 1 and 2, IB ports with LIDs 17 and 33) and real clients
 * through libcmclient. Paths of the programs come from $CMHUB and $CMD;
 * everything lives in a temporary directory.
 *
 * The daemons run with a short packet life time (2^8 * 4.096 us, about a
 * millisecond) so that retransmissions and timewait take milliseconds, and
 * a hold limit of 2 REQs per listener beyond its backlog.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cm_mad.h"
#include "cmclient.h"
#include "cmp.h"
#include "sim_client.h"
#include "sim_harness.h"

#define NODE_A_LID 17 /* node 1, port 1: see daemon/xport_sim.c */
#define NODE_B_LID 33 /* node 2, port 1 */
#define MAX_HELD 2
#define FABRIC_CLEAN "loss=0 dup=0 reorder=0 delay=0-0"

static const char *hub_sock, *sock_a, *sock_b;
static uint64_t next_sid = 0x1000;

static int group_setup(void **state)
{
	static const char *const held[] = { "--max-held", SIM_STR(MAX_HELD),
					    NULL };
	const char *const *const extra[] = { held, held };

	(void)state;
	if (sim_fabric_start("sim", 11, 2, extra))
		return -1;
	hub_sock = sim_fab.hub_sock;
	sock_a = sim_fab.sock[0];
	sock_b = sim_fab.sock[1];
	return 0;
}

/* Change the hub's fault settings, e.g. "loss=10 dup=5". */
static void hub_ctl(const char *settings)
{
	char cmdline[512];

	snprintf(cmdline, sizeof(cmdline), "%s --ctl %s set %s >/dev/null",
		 getenv("CMHUB"), hub_sock, settings);
	assert_int_equal(system(cmdline), 0);
}

static struct cmc_id *listen_on(struct cmc_channel *ch, uint64_t sid,
				unsigned int backlog, void *ctx)
{
	struct cmc_id *id;

	assert_int_equal(cmc_create_id(ch, ctx, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_listen(id, sid, ~0ULL, backlog, NULL), 0);
	return id;
}

static struct cmc_id *connect_to(struct cmc_channel *ch, uint64_t sid,
				 uint32_t qpn, const char *pd, void *ctx)
{
	return sim_connect(ch, ctx, sid, NODE_B_LID, qpn, 10, pd);
}

/* A's id connects to B's listener and both sides reach ESTABLISHED. */
static void establish(struct cmc_channel *a, struct cmc_channel *b,
		      uint64_t sid, struct cmc_id **aid, struct cmc_id **bid)
{
	struct cmc_event *ev;

	*aid = connect_to(a, sid, 100, "hello", NULL);
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_string_equal((const char *)ev->u.req.private_data, "hello");
	assert_int_equal(ev->u.req.remote_qpn, 100);
	*bid = ev->id;
	assert_int_equal(sim_accept(*bid, 200, "welcome"), 0);
	assert_int_equal(cmc_ack_event(ev), 0);

	ev = sim_next_ev(a, *aid);
	assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(ev->u.rep.remote_qpn, 200);
	assert_int_equal(ev->u.rep.start_psn, 0x4242);
	assert_string_equal((const char *)ev->u.rep.private_data, "welcome");
	assert_int_equal(cmc_rtu(*aid, "rtu", 4), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(b, *bid);
	assert_int_equal(ev->type, CMC_EVENT_ESTABLISHED);
	assert_string_equal((const char *)ev->u.established.private_data,
			    "rtu");
	assert_int_equal(cmc_ack_event(ev), 0);
}

/*
 * id (on ch) disconnects with the string pd as private data; peer (on
 * pch) gets DREQ_RECEIVED carrying it and answers; id gets DREP_RECEIVED,
 * and both sides' timewait ends.
 */
static void disconnect_from(struct cmc_channel *ch, struct cmc_id *id,
			    struct cmc_channel *pch, struct cmc_id *peer,
			    const char *pd)
{
	struct cmc_event *ev;

	assert_int_equal(cmc_disconnect(id, pd, (uint8_t)(strlen(pd) + 1)), 0);
	ev = sim_next_ev(pch, peer);
	assert_int_equal(ev->type, CMC_EVENT_DREQ_RECEIVED);
	assert_string_equal((const char *)ev->u.dreq.private_data, pd);
	assert_int_equal(cmc_disconnect(peer, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	sim_expect_ev(ch, id, CMC_EVENT_DREP_RECEIVED);
	sim_expect_ev(ch, id, CMC_EVENT_TIMEWAIT_EXIT);
	sim_expect_ev(pch, peer, CMC_EVENT_TIMEWAIT_EXIT);
}

/* A channel to each daemon, B's listener (backlog 4, context lctx) on a
 * new service id, and one connection A -> B established. */
struct conn {
	struct cmc_channel *a, *b;
	struct cmc_id *l, *aid, *bid;
};

static void conn_up(struct conn *c, void *lctx)
{
	uint64_t sid = next_sid++;

	c->a = sim_open_ch(sock_a);
	c->b = sim_open_ch(sock_b);
	c->l = listen_on(c->b, sid, 4, lctx);
	establish(c->a, c->b, sid, &c->aid, &c->bid);
}

static void conn_down(struct conn *c)
{
	cmc_destroy_id(c->aid);
	cmc_destroy_id(c->bid);
	cmc_destroy_id(c->l);
	cmc_close(c->a);
	cmc_close(c->b);
}

static void test_connect_disconnect_active(void **state)
{
	struct conn c;

	conn_up(&c, (void *)0x11);
	assert_int_equal(sim_state_of(c.aid), CMC_STATE_ESTABLISHED);
	assert_int_equal(sim_state_of(c.bid), CMC_STATE_ESTABLISHED);

	disconnect_from(c.a, c.aid, c.b, c.bid, "bye");
	assert_int_equal(sim_state_of(c.aid), CMC_STATE_IDLE);

	assert_int_equal(cmc_destroy_id(c.aid), 0);
	assert_int_equal(cmc_destroy_id(c.bid), 0);
	assert_int_equal(cmc_destroy_id(c.l), 0);
	cmc_close(c.a);
	cmc_close(c.b);
}

static void test_disconnect_passive(void **state)
{
	struct conn c;

	conn_up(&c, NULL);
	disconnect_from(c.b, c.bid, c.a, c.aid, "passive bye");
	conn_down(&c);
}

static void test_dreq_collision(void **state)
{
	struct conn c;

	conn_up(&c, NULL);
	/* Both sides disconnect before either hears of the other: the hub
	 * holds every MAD for 15 ms (less than the DREQ's retry window at
	 * these timeouts), so both DREQs are in flight. */
	hub_ctl("delay=15000-15000");
	assert_int_equal(cmc_disconnect(c.aid, NULL, 0), 0);
	assert_int_equal(cmc_disconnect(c.bid, NULL, 0), 0);
	/* IBTA 12.9.7: each side answers the other's DREQ and counts it as
	 * its DREP; both end in timewait, then IDLE. */
	sim_expect_ev(c.a, c.aid, CMC_EVENT_DREP_RECEIVED);
	sim_expect_ev(c.b, c.bid, CMC_EVENT_DREP_RECEIVED);
	sim_expect_ev(c.a, c.aid, CMC_EVENT_TIMEWAIT_EXIT);
	sim_expect_ev(c.b, c.bid, CMC_EVENT_TIMEWAIT_EXIT);
	hub_ctl(FABRIC_CLEAN);
	conn_down(&c);
}

static void test_reject_private_data(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 4, NULL);
	struct cmc_id *aid = connect_to(a, sid, 101, "let me in", NULL);
	struct cmc_event *ev = sim_next_ev(b, NULL);

	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_int_equal(cmc_reject(ev->id, CM_REJ_CONSUMER_DEFINED, NULL, 0,
				    "go away", 8),
			 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(a, aid);
	assert_int_equal(ev->type, CMC_EVENT_REJ_RECEIVED);
	assert_int_equal(ev->u.rej.reason, CM_REJ_CONSUMER_DEFINED);
	assert_string_equal((const char *)ev->u.rej.private_data, "go away");
	assert_int_equal(cmc_ack_event(ev), 0);
	cmc_destroy_id(aid);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
}

static void test_no_listener(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a);
	struct cmc_id *aid = connect_to(a, 0xdead0000, 102, NULL, NULL);
	struct cmc_event *ev = sim_next_ev(a, aid);

	assert_int_equal(ev->type, CMC_EVENT_REJ_RECEIVED);
	assert_int_equal(ev->u.rej.reason, CM_REJ_INVALID_SERVICE_ID);
	cmc_ack_event(ev);
	cmc_destroy_id(aid);
	cmc_close(a);
}

/*
 * DESIGN.md lesson 1 with backlog 1 and a hold limit of 2: the first REQ
 * is delivered, the next two are held (not delivered), the fourth is
 * rejected with "no resources"; answering the first hands out the second.
 */
static uint64_t counter(const char *sock, const char *name);
static void wait_counter_ge(const char *sock, const char *name, uint64_t v);

static void test_backlog_credit(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 1, NULL);
	struct cmc_id *ids[4];
	struct cmc_event *ev, *first;

	uint64_t reqs = counter(sock_b, "req_received");

	for (int i = 0; i < 4; i++) {
		ids[i] = connect_to(a, sid, 110 + (uint32_t)i, NULL, NULL);
		/* One at a time, so the arrival order is known: B has this
		 * REQ before the next is sent. */
		wait_counter_ge(sock_b, "req_received", reqs + 1 + (uint64_t)i);
	}
	first = sim_next_ev(b, NULL);
	assert_int_equal(first->type, CMC_EVENT_REQ_RECEIVED);
	assert_int_equal(first->u.req.remote_qpn, 110);
	sim_expect_quiet(b); /* no credit: nothing more is delivered */

	/* Held for want of a credit: B's daemon MRAs them at once. */
	for (int i = 1; i < 3; i++) {
		ev = sim_next_any(a, ids[i]);
		assert_int_equal(ev->type, CMC_EVENT_MRA_RECEIVED);
		assert_int_equal(ev->u.mra.msg, CMC_CM_MSG_REQ);
		cmc_ack_event(ev);
	}
	ev = sim_next_ev(a, ids[3]);
	assert_int_equal(ev->type, CMC_EVENT_REJ_RECEIVED);
	assert_int_equal(ev->u.rej.reason, CM_REJ_NO_RESOURCES);
	cmc_ack_event(ev);

	/* Answering the delivered REQ returns the credit. */
	assert_int_equal(cmc_reject(first->id, CM_REJ_CONSUMER_DEFINED, NULL, 0,
				    NULL, 0),
			 0);
	cmc_ack_event(first);
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_int_equal(ev->u.req.remote_qpn, 111);
	sim_expect_quiet(b);
	/* Destroying the passive id returns the credit too. */
	assert_int_equal(cmc_destroy_id(ev->id), 0);
	cmc_ack_event(ev);
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_int_equal(ev->u.req.remote_qpn, 112);
	assert_int_equal(sim_accept(ev->id, 300, NULL), 0);
	cmc_ack_event(ev);
	sim_expect_ev(a, ids[0], CMC_EVENT_REJ_RECEIVED);
	sim_expect_ev(a, ids[1], CMC_EVENT_REJ_RECEIVED);
	sim_expect_ev(a, ids[2], CMC_EVENT_REP_RECEIVED);
	for (int i = 0; i < 4; i++)
		cmc_destroy_id(ids[i]);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
}

/* Targeted get-event leaves other ids' events queued, in order. */
static void test_targeted_events(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 8, NULL);
	struct cmc_id *x = connect_to(a, sid, 120, "x", NULL);
	struct cmc_id *y = connect_to(a, sid, 121, "y", NULL);
	struct cmc_event *ev;

	/* Reject both REQs, x's first. */
	for (int i = 0; i < 2; i++) {
		ev = sim_next_ev(b, NULL);
		assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
		assert_int_equal(ev->u.req.remote_qpn, 120 + (uint32_t)i);
		cmc_reject(ev->id, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		cmc_ack_event(ev);
	}
	/* Ask for y's outcome first; x's must still be there after. */
	ev = sim_next_ev(a, y);
	assert_ptr_equal(ev->id, y);
	assert_int_equal(ev->type, CMC_EVENT_REJ_RECEIVED);
	cmc_ack_event(ev);
	ev = sim_next_ev(a, NULL);
	assert_ptr_equal(ev->id, x);
	assert_int_equal(ev->type, CMC_EVENT_REJ_RECEIVED);
	cmc_ack_event(ev);
	cmc_destroy_id(x);
	cmc_destroy_id(y);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
}

/*
 * A request that answers an event acks it too (CMP_HDR_ACK): B accepts
 * while it still holds the REQ_RECEIVED and never acks it before the
 * handshake ends, yet the daemon sends ESTABLISHED, so the ACCEPT carried
 * the ack. The library holds that ESTABLISHED back (parked: not pending,
 * the fd not readable for it) until the application acks REQ_RECEIVED,
 * so it still never holds two events of one id; then the event is
 * delivered. B's daemon has sent ESTABLISHED once it reports the id in
 * that state: its QUERY_ID reply follows the event on B's socket.
 */
static void test_answer_acks(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 4, NULL);
	/* 2^20 * 4.096 us (4 s) of patience each way: no MRA comes between
	 * the events this test counts, however slow the machine (with
	 * connect_to()'s 4 ms an ASan build's RTU was late enough for A's
	 * daemon to MRA the REP, and B got MRA_RECEIVED first). */
	struct cmc_id *aid = sim_connect(a, NULL, sid, NODE_B_LID, 130, 20,
					 "fold"),
		      *bid;
	struct cmc_event *req, *ev;
	struct cmc_id_info info;
	struct pollfd pfd;
	int tries = 0;

	req = sim_next_ev(b, NULL);
	assert_int_equal(req->type, CMC_EVENT_REQ_RECEIVED);
	bid = req->id;
	assert_int_equal(sim_accept(bid, 230, NULL), 0);
	ev = sim_next_ev(a, aid);
	assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_rtu(aid, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);

	/* 50,000 QUERY_IDs would be ~10 s of a wedged fabric, not a slow
	 * machine: the RTU crosses in microseconds. */
	do {
		assert_int_equal(cmc_query_id(bid, &info), 0);
	} while (info.state != CMC_STATE_ESTABLISHED && ++tries < 50000);
	assert_int_equal(info.state, CMC_STATE_ESTABLISHED);
	assert_int_equal(cmc_get_event(b, &ev, 0), -EAGAIN);
	assert_int_equal(cmc_event_pending(b), 0);
	pfd = (struct pollfd){ .fd = cmc_fd(b), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);

	/* Acking the held event sends nothing and releases the next. */
	assert_int_equal(cmc_ack_event(req), 0);
	assert_int_equal(cmc_event_pending(b), 1);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(cmc_get_event(b, &ev, 0), 0);
	assert_ptr_equal(ev->id, bid);
	assert_int_equal(ev->type, CMC_EVENT_ESTABLISHED);
	/* DISCONNECT answers ESTABLISHED: acked by it, then only freed. */
	assert_int_equal(cmc_disconnect(bid, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(a, aid);
	assert_int_equal(ev->type, CMC_EVENT_DREQ_RECEIVED);
	assert_int_equal(cmc_disconnect(aid, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	sim_expect_ev(b, bid, CMC_EVENT_DREP_RECEIVED);
	sim_expect_ev(a, aid, CMC_EVENT_TIMEWAIT_EXIT);
	sim_expect_ev(b, bid, CMC_EVENT_TIMEWAIT_EXIT);

	cmc_destroy_id(aid);
	cmc_destroy_id(bid);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
}

/* After destroy returns, no event of that id is ever seen. */
static void test_destroy_final(void **state)
{
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 4, NULL);
	struct cmc_id *aid = connect_to(a, sid, 130, NULL, NULL);
	struct cmc_event *ev = sim_next_ev(b, NULL);

	uint64_t reps = counter(sock_a, "rep_received");

	/* The REP is on its way to A; destroy A's id once A's daemon has it
	 * (its REP_RECEIVED is queued for us), before reading it. */
	assert_int_equal(sim_accept(ev->id, 230, NULL), 0);
	cmc_ack_event(ev);
	wait_counter_ge(sock_a, "rep_received", reps + 1);
	assert_int_equal(cmc_destroy_id(aid), 0);
	sim_expect_quiet(a);
	/* A's daemon answered the REP with a REJ for the destroyed id. */
	sim_expect_ev(b, NULL, CMC_EVENT_REJ_RECEIVED);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
}

/* Count ids B's daemon still holds for anyone (we run as root in CI, so
 * LIST shows every client's; otherwise only ours, which are none). */
static int ids_on(const char *sock, enum cmc_list_filter filter)
{
	struct cmc_channel *ch = sim_open_ch(sock);
	int n = sim_count_ids(ch, filter);

	cmc_close(ch);
	return n;
}

/*
 * A client of A is killed (SIGKILL) when established: A's daemon destroys
 * its ids, B's id gets the DREQ, and A's daemon holds nothing of it.
 */
static void test_client_killed_established(void **state)
{
	struct cmc_channel *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 4, NULL);
	struct cmc_event *ev;
	struct cmc_id *bid;
	int before = ids_on(sock_a, CMC_LIST_ALL), pfd[2], status;
	pid_t child;
	char c;

	assert_int_equal(pipe(pfd), 0);
	child = fork();
	if (child == 0) {
		struct cmc_channel *a = sim_open_ch(sock_a);
		struct cmc_id *aid = connect_to(a, sid, 140, NULL, NULL);

		ev = sim_next_ev(a, aid);
		if (ev->type != CMC_EVENT_REP_RECEIVED)
			_exit(1);
		cmc_rtu(aid, NULL, 0);
		cmc_ack_event(ev);
		if (write(pfd[1], "e", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	bid = ev->id;
	assert_int_equal(sim_accept(bid, 240, NULL), 0);
	cmc_ack_event(ev);
	sim_expect_ev(b, bid, CMC_EVENT_ESTABLISHED);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);

	ev = sim_next_ev(b, bid);
	assert_int_equal(ev->type, CMC_EVENT_DREQ_RECEIVED);
	cmc_disconnect(bid, NULL, 0);
	cmc_ack_event(ev);
	sim_expect_ev(b, bid, CMC_EVENT_TIMEWAIT_EXIT);
	assert_int_equal(ids_on(sock_a, CMC_LIST_ALL), before);
	cmc_destroy_id(bid);
	cmc_destroy_id(l);
	close(pfd[0]);
	close(pfd[1]);
	cmc_close(b);
}

/* Killed after sending its REQ: B's REQ_RECEIVED id gets a REJ. */
static void test_client_killed_req_sent(void **state)
{
	struct cmc_channel *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, 4, NULL);
	struct cmc_event *ev;
	struct cmc_id *bid;
	int pfd[2], status;
	pid_t child;
	char c;

	assert_int_equal(pipe(pfd), 0);
	child = fork();
	if (child == 0) {
		struct cmc_channel *a = sim_open_ch(sock_a);

		connect_to(a, sid, 150, NULL, NULL);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* The destroyed active id's REJ reaches the passive id. */
	bid = ev->id;
	cmc_ack_event(ev);
	sim_expect_ev(b, bid, CMC_EVENT_REJ_RECEIVED);
	cmc_destroy_id(l);
	close(pfd[0]);
	close(pfd[1]);
	cmc_close(b);
}

/* A daemon counter by name ("records": engine records, timewait too). */
static uint64_t counter(const char *sock, const char *name)
{
	struct cmc_channel *ch = sim_open_ch(sock);
	uint64_t value = sim_counter(ch, name);

	cmc_close(ch);
	return value;
}

/* Wait (30 s at most: a hang) until a counter of the daemon at sock is at
 * least v. */
static void wait_counter_ge(const char *sock, const char *name, uint64_t v)
{
	for (int i = 0; i < 3000 && counter(sock, name) < v; i++)
		usleep(10000);
	assert_true(counter(sock, name) >= v);
}

/* Wait (30 s at most: timewaits end, a leak never does) until the daemon
 * at sock holds at most 'records'. */
static void expect_records(const char *sock, uint64_t records)
{
	for (int i = 0; i < 3000 && counter(sock, "records") > records; i++)
		usleep(10000);
	assert_int_equal(counter(sock, "records"), records);
}

enum kill_point {
	KILL_ACTIVE_REP_RCVD, /* the connector got the REP, no RTU yet */
	KILL_PASSIVE_REQ_RCVD, /* the listener got the REQ, no answer yet */
	KILL_PASSIVE_REP_SENT, /* the listener accepted, no RTU yet */
	KILL_PASSIVE_ESTABLISHED,
};

/* The child: a listener on B that stops at 'at' and tells the parent. */
static void passive_child(uint64_t sid, enum kill_point at, int fd)
{
	struct cmc_channel *b = sim_open_ch(sock_b);
	struct cmc_event *ev;

	listen_on(b, sid, 4, NULL);
	if (write(fd, "l", 1) != 1)
		_exit(1);
	ev = sim_next_ev(b, NULL);
	if (ev->type != CMC_EVENT_REQ_RECEIVED)
		_exit(1);
	if (at != KILL_PASSIVE_REQ_RCVD && sim_accept(ev->id, 250, NULL))
		_exit(1);
	cmc_ack_event(ev);
	if (at == KILL_PASSIVE_ESTABLISHED) {
		ev = sim_next_ev(b, NULL);
		if (ev->type != CMC_EVENT_ESTABLISHED)
			_exit(1);
		cmc_ack_event(ev);
	}
	if (write(fd, "k", 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

/*
 * A client SIGKILLed at each point of the handshake: its daemon destroys
 * its ids as lesson 3 says, the peer sees the REJ or DREQ the state calls
 * for, and the dead client's daemon frees everything (records back to the
 * baseline once timewait is over).
 */
static void kill_at(enum kill_point at)
{
	bool passive = at != KILL_ACTIVE_REP_RCVD;
	const char *victim = passive ? sock_b : sock_a;
	uint64_t sid = next_sid++, base = counter(victim, "records");
	struct cmc_channel *a = sim_open_ch(sock_a), *b = NULL;
	struct cmc_id *aid = NULL, *l = NULL;
	struct cmc_event *ev;
	int pfd[2], status;
	pid_t child;
	char c;

	assert_int_equal(pipe(pfd), 0);
	if (!passive) {
		b = sim_open_ch(sock_b);
		l = listen_on(b, sid, 4, NULL);
	}
	child = fork();
	if (child == 0) {
		if (passive)
			passive_child(sid, at, pfd[1]);
		aid = connect_to(sim_open_ch(sock_a), sid, 160, NULL, NULL);
		ev = sim_next_ev(cmc_id_channel(aid), aid);
		if (ev->type != CMC_EVENT_REP_RECEIVED)
			_exit(1);
		if (write(pfd[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (passive) {
		assert_int_equal(read(pfd[0], &c, 1), 1); /* listening */
		aid = connect_to(a, sid, 161, NULL, NULL);
		if (at != KILL_PASSIVE_REQ_RCVD) {
			ev = sim_next_ev(a, aid);
			assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
			if (at == KILL_PASSIVE_ESTABLISHED)
				assert_int_equal(cmc_rtu(aid, NULL, 0), 0);
			cmc_ack_event(ev);
		}
	} else {
		ev = sim_next_ev(b, NULL);
		assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
		aid = ev->id; /* here: B's passive id */
		assert_int_equal(sim_accept(aid, 260, NULL), 0);
		cmc_ack_event(ev);
	}
	assert_int_equal(read(pfd[0], &c, 1), 1);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);

	switch (at) {
	case KILL_ACTIVE_REP_RCVD:
		/* IBTA 12.6.5: REP_RCVD destroyed -> REJ to the REP_SENT id. */
		sim_expect_ev(b, aid, CMC_EVENT_REJ_RECEIVED);
		break;
	case KILL_PASSIVE_REQ_RCVD:
	case KILL_PASSIVE_REP_SENT:
		sim_expect_ev(a, aid, CMC_EVENT_REJ_RECEIVED);
		break;
	case KILL_PASSIVE_ESTABLISHED:
		ev = sim_next_ev(a, aid);
		assert_int_equal(ev->type, CMC_EVENT_DREQ_RECEIVED);
		cmc_disconnect(aid, NULL, 0);
		cmc_ack_event(ev);
		sim_expect_ev(a, aid, CMC_EVENT_TIMEWAIT_EXIT);
		break;
	}
	expect_records(victim, base);
	if (l)
		cmc_destroy_id(l);
	cmc_destroy_id(aid);
	close(pfd[0]);
	close(pfd[1]);
	cmc_close(a);
	if (b)
		cmc_close(b);
}

static void test_kill_active_rep_rcvd(void **state)
{
	kill_at(KILL_ACTIVE_REP_RCVD);
}

static void test_kill_passive_req_rcvd(void **state)
{
	kill_at(KILL_PASSIVE_REQ_RCVD);
}

static void test_kill_passive_rep_sent(void **state)
{
	kill_at(KILL_PASSIVE_REP_SENT);
}

static void test_kill_passive_established(void **state)
{
	kill_at(KILL_PASSIVE_ESTABLISHED);
}

/* A raw client may not act on another client's id. */
static void test_foreign_id(void **state)
{
	struct cmc_channel *b = sim_open_ch(sock_b);
	struct cmc_id *l = listen_on(b, next_sid++, 1, NULL);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct cmp_msg m, r;
	uint8_t buf[CMP_MSG_MAX];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ssize_t n;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_b);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cmp_msg_init(&m, CMP_TYPE_HELLO, 1);
	m.hello.min_version = m.hello.max_version = CMP_VERSION;
	snprintf(m.hello.name, sizeof(m.hello.name), "intruder");
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(send(fd, buf, (size_t)n, 0), n);
	n = recv(fd, buf, sizeof(buf), 0);
	assert_int_equal(cmp_decode(buf, (size_t)n, &r, NULL), 0);
	assert_int_equal(r.hello_reply.status, 0);

	cmp_msg_init(&m, CMP_TYPE_DESTROY_ID, 2);
	m.destroy_id.id = cmc_id_num(l);
	n = cmp_encode(&m, buf, sizeof(buf));
	assert_int_equal(send(fd, buf, (size_t)n, 0), n);
	n = recv(fd, buf, sizeof(buf), 0);
	assert_int_equal(cmp_decode(buf, (size_t)n, &r, NULL), 0);
	assert_int_equal(r.hdr.type, CMP_TYPE_DESTROY_ID_REPLY);
	assert_int_equal(r.reply.status, -ENOENT);
	close(fd);
	/* Still ours and still listening. */
	assert_int_equal(sim_state_of(l), CMC_STATE_LISTEN);
	cmc_destroy_id(l);
	cmc_close(b);
}

/* Loss, duplication and reordering at the hub: every connection still
 * ends established or with a clean error event. */
static void test_lossy_fabric(void **state)
{
	enum { N = 40 };
	struct cmc_channel *a = sim_open_ch(sock_a), *b = sim_open_ch(sock_b);
	uint64_t sid = next_sid++;
	struct cmc_id *l = listen_on(b, sid, N, NULL);
	struct cmc_id *ids[N];
	int done = 0, established = 0, errors = 0;
	uint32_t qpn = 500;

	hub_ctl("loss=10 dup=5 reorder=10");
	for (int i = 0; i < N; i++)
		ids[i] = connect_to(a, sid, 400 + (uint32_t)i, NULL, NULL);
	/* Serve both sides until every active id has its first outcome. */
	for (int rounds = 0; done < N && rounds < 4000; rounds++) {
		struct cmc_event *ev;

		while (!cmc_get_event(b, &ev, 0)) {
			/* A QPN per connection: a REP reusing a live
			 * (QPN, CA GUID) is stale (IBTA 12.9.8.3.2). */
			if (ev->type == CMC_EVENT_REQ_RECEIVED)
				sim_accept(ev->id, qpn++, NULL);
			cmc_ack_event(ev);
		}
		while (!cmc_get_event(a, &ev, 5)) {
			switch (ev->type) {
			case CMC_EVENT_REP_RECEIVED:
				if (cmc_rtu(ev->id, NULL, 0) == 0)
					established++;
				done++;
				break;
			case CMC_EVENT_MRA_RECEIVED:
				break; /* lost REPs make B's app look slow */
			case CMC_EVENT_REJ_RECEIVED:
			case CMC_EVENT_CONNECT_ERROR:
				print_message(
					"  %s (reason %u, status %d)\n",
					cmc_event_str(ev->type),
					ev->type == CMC_EVENT_REJ_RECEIVED ?
						ev->u.rej.reason :
						0,
					ev->status);
				errors++;
				done++;
				break;
			default:
				fail_msg("unexpected %s",
					 cmc_event_str(ev->type));
			}
			cmc_ack_event(ev);
		}
	}
	hub_ctl(FABRIC_CLEAN);
	print_message("lossy fabric: %d established, %d clean errors of %d\n",
		      established, errors, N);
	assert_int_equal(done, N);
	assert_true(established > N / 2);
	for (int i = 0; i < N; i++)
		cmc_destroy_id(ids[i]);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_disconnect_active),
		cmocka_unit_test(test_disconnect_passive),
		cmocka_unit_test(test_dreq_collision),
		cmocka_unit_test(test_reject_private_data),
		cmocka_unit_test(test_no_listener),
		cmocka_unit_test(test_backlog_credit),
		cmocka_unit_test(test_targeted_events),
		cmocka_unit_test(test_answer_acks),
		cmocka_unit_test(test_destroy_final),
		cmocka_unit_test(test_client_killed_established),
		cmocka_unit_test(test_client_killed_req_sent),
		cmocka_unit_test(test_kill_active_rep_rcvd),
		cmocka_unit_test(test_kill_passive_req_rcvd),
		cmocka_unit_test(test_kill_passive_rep_sent),
		cmocka_unit_test(test_kill_passive_established),
		cmocka_unit_test(test_foreign_id),
		cmocka_unit_test(test_lossy_fabric),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
