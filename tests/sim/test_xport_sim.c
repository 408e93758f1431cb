// SPDX-License-Identifier: MIT
/*
 * The sim transport against a real hub process: tools/cmhub is forked
 * on a socket in a temporary directory (its path comes from $CMHUB), two or
 * three "nodes" are opened as sim backends in this process, and MADs go
 * both ways through the hub. Fault counts are checked against bounds that
 * hold for the fixed seeds used here, and against a second run with the
 * same seed (the hub draws every decision from one seeded PRNG).
 *
 * The backends queue their sends and write them from the loop's prepare
 * phase, so the tests run a libev loop: pump() is one iteration that does
 * not wait, run_until() iterates (sleeping in the loop) until a condition
 * holds.
 */
#include <errno.h>
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
#include <ev.h>

#include "cm_mad.h"
#include "sim_proto.h"
#include "transport.h"
#include "util.h"
#include "hub_ctl.h"

#define N_MADS 1000
#define WAIT_MS 5000
/* XPORT_SIM_TXQ_MAX in xport_sim.c: MADs a backend queues at most. */
#define TXQ_MAX 4096

static char dir[64];
static char sock_path[128];
static pid_t hub_pid;
static struct ev_loop *loop;

struct node {
	struct xport *x;
	struct xport_open_report rep;
	unsigned int removed; /* DEVICE_REMOVED events seen */
	unsigned int sm_changes; /* SM_CHANGE events seen */
	uint16_t sm_lid; /* the port's, at the last SM_CHANGE */
};

static struct node a, b;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One control request straight in the hub's protocol. */
static int ctl(const void *req, size_t len, struct sim_stats *st)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sim_ctl_reply rep;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int err = 0;

	strcpy(sun.sun_path, sock_path);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    recv(fd, &rep, sizeof(rep), 0) != (ssize_t)sizeof(rep))
		err = errno ? -errno : -EIO;
	else
		err = rep.status;
	close(fd);
	if (!err && st)
		*st = rep.stats;
	return err;
}

static int stats(struct sim_stats *st)
{
	struct sim_ctl_stats req = { { SIM_CTL_STATS, SIM_PROTO_VERSION } };

	return ctl(&req, sizeof(req), st);
}

static void set_faults(uint16_t from, uint16_t to, uint32_t loss, uint32_t dup,
		       uint32_t reorder, uint32_t dmin, uint32_t dmax)
{
	struct sim_ctl_set s = {
		.hdr = { SIM_CTL_SET, SIM_PROTO_VERSION },
		.flags = SIM_SET_FAULTS,
		.from = from,
		.to = to,
		.faults = { loss, dup, reorder, dmin, dmax },
	};

	assert_int_equal(ctl(&s, sizeof(s), NULL), 0);
}

static void reseed(uint64_t seed)
{
	struct sim_ctl_set s = {
		.hdr = { SIM_CTL_SET, SIM_PROTO_VERSION },
		.flags = SIM_SET_SEED | SIM_SET_RESET,
		.seed = seed,
	};

	assert_int_equal(ctl(&s, sizeof(s), NULL), 0);
}

static void event_cb(void *ctx, const struct xport_event *ev)
{
	struct node *n = ctx;

	if (ev->type == XPORT_EV_DEVICE_REMOVED)
		n->removed++;
	if (ev->type == XPORT_EV_SM_CHANGE) {
		n->sm_changes++;
		n->sm_lid = ev->port->sm_lid;
	}
}

static int open_node(struct node *n, uint16_t node, bool roce,
		     uint16_t first_index)
{
	struct xport_config cfg = {
		.kind = XPORT_KIND_SIM,
		.first_index = first_index,
		.hub_path = sock_path,
		.node = node,
		.sim_roce = roce,
		.sim_port_count = 1,
		.loop = loop,
	};

	memset(n, 0, sizeof(*n));
	return xport_open(&cfg, event_cb, n, &n->rep, &n->x);
}

/* One loop iteration without waiting: queued MADs go out. */
static void pump(void)
{
	ev_run(loop, EVRUN_NOWAIT);
}

static void guard_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	*(bool *)w->data = true;
}

/*
 * Run the loop, sleeping in it, until done(arg) or WAIT_MS have passed
 * (a guard timer wakes it). False on timeout.
 */
static bool run_until(bool (*done)(void *arg), void *arg)
{
	bool expired = false;
	ev_timer guard;

	ev_timer_init(&guard, guard_cb, WAIT_MS / 1000., 0.);
	guard.data = &expired;
	ev_timer_start(loop, &guard);
	while (!done(arg) && !expired)
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &guard);
	return done(arg);
}

static void close_node(struct node *n)
{
	xport_close(n->x);
	n->x = NULL;
}

static int start_hub(void)
{
	const char *hub = getenv("CMHUB");
	uint64_t t0;

	if (!hub) {
		fprintf(stderr, "CMHUB (path of cmhub) not set\n");
		return -1;
	}
	strcpy(dir, "/tmp/cmhub-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/hub.sock", dir);
	hub_pid = fork();
	if (hub_pid < 0)
		return -1;
	if (hub_pid == 0) {
		execl(hub, hub, "--seed", "7", sock_path, (char *)NULL);
		_exit(127);
	}
	/* The hub is up when it answers a control request. */
	for (t0 = now_ms(); now_ms() - t0 < WAIT_MS;) {
		struct sim_stats st;

		if (!stats(&st))
			return 0;
		usleep(5000);
	}
	return -1;
}

static void stop_hub(void)
{
	int status;

	if (hub_pid > 0) {
		kill(hub_pid, SIGTERM);
		waitpid(hub_pid, &status, 0);
		hub_pid = 0;
	}
	unlink(sock_path);
	rmdir(dir);
}

static int group_setup(void **state)
{
	loop = ev_default_loop(0);
	if (!loop || start_hub())
		return -1;
	if (open_node(&a, 1, false, 0) || open_node(&b, 2, false, 10))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	close_node(&a);
	close_node(&b);
	stop_hub();
	return 0;
}

/* A MAD with a sequence number in its TID, so order can be checked. */
static void make_mad(uint8_t mad[CM_MAD_SIZE], uint32_t seq)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	cm_msg_init(&m, CM_MSG_REQ, seq);
	m.req.local_comm_id = 0x1000 + seq;
	m.req.service_id = 0x0000000001060000ULL | 4791;
	m.req.local_ca_guid = 0x0002c90300000100ULL;
	m.req.local_qpn = 0x123;
	m.req.starting_psn = 0x456;
	m.req.path_mtu = CM_MTU_4096;
	m.req.primary_local_gid[15] = 1;
	m.req.primary_remote_gid[15] = 2;
	assert_int_equal(cm_mad_encode(&m, mad), 0);
}

static uint32_t mad_seq(const uint8_t mad[CM_MAD_SIZE])
{
	struct cm_msg m;
	struct cm_fault f;

	assert_int_equal(cm_mad_decode(mad, CM_MAD_SIZE, 0, &m, &f), 0);
	assert_int_equal(m.type, CM_MSG_REQ);
	assert_int_equal(m.req.local_comm_id, 0x1000 + m.hdr.tid);
	return (uint32_t)m.hdr.tid;
}

/* Send, waiting for queue space: the hub drains the other end. */
static void send_wait(struct node *n, uint16_t port, const struct eng_addr *to,
		      const uint8_t mad[CM_MAD_SIZE])
{
	int r;

	while ((r = xport_send(n->x, port, to, mad)) == -ENOBUFS) {
		struct pollfd p = { .fd = xport_fd(n->x), .events = POLLOUT };

		poll(&p, 1, 100);
		pump();
	}
	assert_int_equal(r, 0);
}

/*
 * Receive exactly 'want' MADs (or fail after wait_ms of silence), sending
 * what is queued first.
 */
static unsigned int recv_n(struct node *n, struct xport_rx *rx,
			   unsigned int want, int wait_ms)
{
	unsigned int got = 0;

	while (got < want) {
		struct pollfd p = { .fd = xport_fd(n->x), .events = POLLIN };
		int r;

		pump();
		if (poll(&p, 1, wait_ms) <= 0)
			break;
		r = xport_recv(n->x, rx + got, want - got);
		assert_true(r >= 0);
		got += (unsigned int)r;
	}
	return got;
}

/* Wait until the hub has taken in 'received' MADs since the last reset. */
static void hub_wait_received(uint64_t received, struct sim_stats *st)
{
	uint64_t t0 = now_ms();

	do {
		pump();
		assert_int_equal(stats(st), 0);
		if (st->received >= received)
			return;
		usleep(2000);
	} while (now_ms() - t0 < WAIT_MS);
	fail_msg("hub received %llu of %llu", (unsigned long long)st->received,
		 (unsigned long long)received);
}

static struct eng_addr to_lid(uint16_t lid)
{
	struct eng_addr to = { .lid = lid, .qpn = 1 };

	return to;
}

static struct eng_addr to_gid(const uint8_t gid[CM_GID_SIZE])
{
	struct eng_addr to = { .grh = true, .qpn = 1 };

	memcpy(to.gid, gid, CM_GID_SIZE);
	return to;
}

static void test_open_ports(void **state)
{
	const struct xport_port *pa = xport_port(a.x, 0);
	const struct xport_port *pb = xport_port(b.x, 10);

	assert_int_equal(xport_port_count(a.x), 1);
	assert_null(xport_port(a.x, 1));
	assert_null(xport_port(b.x, 9));
	assert_non_null(pa);
	assert_non_null(pb);
	assert_int_equal(a.rep.n, 1);
	assert_true(a.rep.port[0].served);
	assert_int_equal(b.rep.port[0].index, 10);
	assert_string_equal(pa->dev, "sim1");
	assert_int_equal(pa->port_num, 1);
	assert_int_equal(pa->state, XPORT_PORT_ACTIVE);
	assert_int_equal(pa->link, XPORT_LINK_IB);
	assert_int_equal(pa->lid, 17);
	assert_int_equal(pb->lid, 33);
	assert_true(pa->node_guid == 0x0002c90300000100ULL);
	assert_true(pa->port_guid == 0x0002c90300000101ULL);
	assert_int_equal(pa->n_gids, 1);
	assert_int_equal(pa->gids[0].raw[0], 0xfe);
	assert_int_equal(pa->gids[0].raw[15], 0x01);
	assert_int_equal(pa->pkeys[0], 0xffff);
	assert_int_equal(xport_event_fd(a.x), -1);
	assert_int_equal(xport_process_events(a.x), 0);
}

static void test_open_errors(void **state)
{
	struct node n;

	/* Derived IB LIDs would leave the unicast range. */
	assert_int_equal(open_node(&n, 4000, false, 0), -ERANGE);
	assert_int_equal(open_node(&n, 0, false, 0), -EINVAL);
	assert_null(n.x);
}

/* The sim backend needs a loop to write its queue from. */
static void test_open_needs_loop(void **state)
{
	struct ev_loop *saved = loop;
	struct node n;

	loop = NULL;
	assert_int_equal(open_node(&n, 5, false, 0), -EINVAL);
	loop = saved;
	assert_null(n.x);
}

static void test_both_ways(void **state)
{
	const struct xport_port *pa = xport_port(a.x, 0);
	const struct xport_port *pb = xport_port(b.x, 10);
	struct eng_addr to = to_lid(pb->lid);
	struct xport_rx rx[2];
	uint8_t mad[CM_MAD_SIZE];

	/* a -> b by LID, no GRH. */
	make_mad(mad, 1);
	to.sl = 3;
	to.pkey_index = 0;
	assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	assert_int_equal(recv_n(&b, rx, 1, WAIT_MS), 1);
	assert_int_equal(rx[0].port, 10);
	assert_int_equal(rx[0].from.port, 10);
	assert_int_equal(rx[0].from.lid, pa->lid);
	assert_int_equal(rx[0].from.sl, 3);
	assert_false(rx[0].from.grh);
	assert_int_equal(rx[0].from.qpn, 1);
	assert_memory_equal(rx[0].mad, mad, CM_MAD_SIZE);
	assert_int_equal(mad_seq(rx[0].mad), 1);

	/* b -> a by GID: the GRH's source GID is b's port GID. */
	make_mad(mad, 2);
	to = to_gid(pa->gids[0].raw);
	assert_int_equal(xport_send(b.x, 10, &to, mad), 0);
	assert_int_equal(recv_n(&a, rx, 1, WAIT_MS), 1);
	assert_int_equal(rx[0].port, 0);
	assert_true(rx[0].from.grh);
	assert_memory_equal(rx[0].from.gid, pb->gids[0].raw, CM_GID_SIZE);
	assert_int_equal(rx[0].from.lid, pb->lid);
	assert_memory_equal(rx[0].mad, mad, CM_MAD_SIZE);

	/* To itself. */
	to = to_lid(pa->lid);
	assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	assert_int_equal(recv_n(&a, rx, 1, WAIT_MS), 1);
	assert_int_equal(rx[0].from.lid, pa->lid);

	/* Nothing else is waiting; a bad port index is refused. */
	assert_int_equal(xport_recv(a.x, rx, 2), 0);
	assert_int_equal(xport_recv(b.x, rx, 2), 0);
	assert_int_equal(xport_send(a.x, 5, &to, mad), -EINVAL);
	assert_int_equal(xport_counters(a.x)->tx, 2);
	assert_int_equal(xport_counters(a.x)->tx_errors, 1);
	assert_int_equal(xport_counters(a.x)->rx, 2);
}

static void test_roce(void **state)
{
	struct node r1, r2;
	const struct xport_port *p1, *p2;
	struct xport_rx rx[1];
	struct eng_addr to;
	uint8_t mad[CM_MAD_SIZE];

	assert_int_equal(open_node(&r1, 21, true, 0), 0);
	assert_int_equal(open_node(&r2, 22, true, 0), 0);
	p1 = xport_port(r1.x, 0);
	p2 = xport_port(r2.x, 0);
	assert_int_equal(p1->link, XPORT_LINK_ROCE);
	assert_int_equal(p1->lid, 0);
	assert_int_equal(p1->n_gids, 2);
	assert_int_equal(p1->gids[1].type, XPORT_GID_ROCE_V2);
	assert_true(xport_gid_is_v4(p1->gids[1].raw));
	assert_int_equal(p1->gids[1].raw[14], 21);

	make_mad(mad, 3);
	/* v4-mapped destination: the source GID is v4-mapped too. */
	to = to_gid(p2->gids[1].raw);
	assert_int_equal(xport_send(r1.x, 0, &to, mad), 0);
	assert_int_equal(recv_n(&r2, rx, 1, WAIT_MS), 1);
	assert_memory_equal(rx[0].from.gid, p1->gids[1].raw, CM_GID_SIZE);
	/* link-local destination: link-local source. */
	to = to_gid(p2->gids[0].raw);
	assert_int_equal(xport_send(r1.x, 0, &to, mad), 0);
	assert_int_equal(recv_n(&r2, rx, 1, WAIT_MS), 1);
	assert_memory_equal(rx[0].from.gid, p1->gids[0].raw, CM_GID_SIZE);
	/* RoCE has no LIDs: no GRH, no send. */
	to = to_lid(5);
	assert_int_equal(xport_send(r1.x, 0, &to, mad), -EDESTADDRREQ);
	close_node(&r1);
	close_node(&r2);
}

/* Send N_MADS a -> b; return what b got, in rx (caller's array). */
static unsigned int flood(struct xport_rx *rx, unsigned int max_rx,
			  struct sim_stats *st)
{
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	uint8_t mad[CM_MAD_SIZE];
	unsigned int got = 0;

	for (uint32_t i = 0; i < N_MADS; i++) {
		make_mad(mad, i);
		send_wait(&a, 0, &to, mad);
		/* Drain as we go so no socket fills up. */
		if (i % 64 == 63) {
			int r;

			pump();
			r = xport_recv(b.x, rx + got, max_rx - got);

			assert_true(r >= 0);
			got += (unsigned int)r;
		}
	}
	hub_wait_received(N_MADS, st);
	/* Held (reordered) and delayed MADs are released within ms. */
	for (uint64_t t0 = now_ms(); now_ms() - t0 < 200;) {
		assert_int_equal(stats(st), 0);
		if (got >= st->routed)
			break;
		got += recv_n(&b, rx + got, (unsigned int)st->routed - got, 50);
	}
	assert_int_equal(stats(st), 0);
	assert_int_equal(got, st->routed);
	/* Nothing more. */
	assert_int_equal(recv_n(&b, rx + got, 1, 20), 0);
	return got;
}

static struct xport_rx big_rx[2 * N_MADS];

static void test_loss_seeded(void **state)
{
	struct sim_stats st1, st2;
	unsigned int got;

	set_faults(0, 0, 100000, 0, 0, 0, 0); /* 10 % loss */
	reseed(42);
	got = flood(big_rx, 2 * N_MADS, &st1);
	assert_int_equal(st1.received, N_MADS);
	print_message("seed 42, loss 10 %%: %llu of %d dropped\n",
		      (unsigned long long)st1.dropped, N_MADS);
	assert_in_range(st1.dropped, 60, 140);
	assert_int_equal(got, N_MADS - st1.dropped);
	assert_int_equal(st1.duplicated + st1.reordered + st1.unroutable, 0);
	/* In order, each at most once. */
	for (unsigned int i = 1; i < got; i++)
		assert_true(mad_seq(big_rx[i].mad) >
			    mad_seq(big_rx[i - 1].mad));

	/* Same seed, same losses. */
	reseed(42);
	got = flood(big_rx, 2 * N_MADS, &st2);
	assert_int_equal(st2.dropped, st1.dropped);
	/* Another seed, other losses (for these two seeds). */
	reseed(43);
	flood(big_rx, 2 * N_MADS, &st2);
	assert_int_not_equal(st2.dropped, st1.dropped);
	set_faults(0, 0, 0, 0, 0, 0, 0);
}

static void test_dup_seeded(void **state)
{
	struct sim_stats st;
	unsigned int got;

	set_faults(0, 0, 0, 50000, 0, 0, 0); /* 5 % duplicated */
	reseed(42);
	got = flood(big_rx, 2 * N_MADS, &st);
	print_message("seed 42, dup 5 %%: %llu duplicated\n",
		      (unsigned long long)st.duplicated);
	assert_in_range(st.duplicated, 25, 75);
	assert_int_equal(got, N_MADS + st.duplicated);
	assert_int_equal(st.dropped, 0);
	set_faults(0, 0, 0, 0, 0, 0, 0);
}

static void test_reorder_seeded(void **state)
{
	static bool seen[N_MADS];
	struct sim_stats st;
	unsigned int got, inversions = 0;

	set_faults(0, 0, 0, 0, 100000, 0, 0); /* 10 % held back */
	reseed(42);
	got = flood(big_rx, 2 * N_MADS, &st);
	assert_in_range(st.reordered, 60, 140);
	assert_int_equal(got, N_MADS);
	memset(seen, 0, sizeof(seen));
	for (unsigned int i = 0; i < got; i++) {
		uint32_t s = mad_seq(big_rx[i].mad);

		assert_true(s < N_MADS);
		assert_false(seen[s]);
		seen[s] = true;
		if (i && s < mad_seq(big_rx[i - 1].mad))
			inversions++;
	}
	print_message("seed 42, reorder 10 %%: %llu held back, %u inversions\n",
		      (unsigned long long)st.reordered, inversions);
	/* A held MAD goes after its successor, unless the hold expired. */
	assert_true(inversions > 0);
	assert_true(inversions <= st.reordered);
	set_faults(0, 0, 0, 0, 0, 0, 0);
}

static void test_delay(void **state)
{
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	struct xport_rx rx[20];
	struct sim_stats st;
	uint8_t mad[CM_MAD_SIZE];
	uint64_t t0;

	set_faults(0, 0, 0, 0, 0, 20000, 40000); /* 20..40 ms */
	reseed(1);
	t0 = now_ms();
	for (uint32_t i = 0; i < 20; i++) {
		make_mad(mad, i);
		send_wait(&a, 0, &to, mad);
	}
	assert_int_equal(recv_n(&b, rx, 1, WAIT_MS), 1);
	assert_true(now_ms() - t0 >= 19);
	assert_int_equal(recv_n(&b, rx + 1, 19, WAIT_MS), 19);
	assert_int_equal(stats(&st), 0);
	assert_int_equal(st.delayed, 20);
	assert_int_equal(st.routed, 20);
	set_faults(0, 0, 0, 0, 0, 0, 0);
}

/* Settings of one direction leave the other alone. */
static void test_per_direction(void **state)
{
	struct eng_addr ab = to_lid(xport_port(b.x, 10)->lid);
	struct eng_addr ba = to_lid(xport_port(a.x, 0)->lid);
	struct xport_rx rx[10];
	struct sim_stats st;
	uint8_t mad[CM_MAD_SIZE];

	set_faults(1, 2, 1000000, 0, 0, 0, 0); /* node 1 -> 2: all lost */
	reseed(5);
	make_mad(mad, 9);
	for (int i = 0; i < 10; i++) {
		send_wait(&a, 0, &ab, mad);
		send_wait(&b, 10, &ba, mad);
	}
	assert_int_equal(recv_n(&a, rx, 10, WAIT_MS), 10);
	hub_wait_received(20, &st);
	assert_int_equal(st.dropped, 10);
	assert_int_equal(recv_n(&b, rx, 1, 50), 0);
	set_faults(1, 2, 0, 0, 0, 0, 0);
}

static void test_unroutable(void **state)
{
	static const uint8_t nowhere[CM_GID_SIZE] = { 0xfe, 0x80, [15] = 9 };
	struct eng_addr to = to_lid(999);
	struct sim_stats st;
	uint8_t mad[CM_MAD_SIZE];

	reseed(1);
	make_mad(mad, 1);
	assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	to = to_gid(nowhere);
	assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	hub_wait_received(2, &st);
	assert_int_equal(st.unroutable, 2);
	assert_int_equal(st.routed, 0);
}

/* ---- batching: the transmit queue -------------------------------------- */

/* What b has received in order, and whether the order held. */
struct sink {
	struct xport_rx *rx;
	unsigned int max, got;
	ev_io io;
};

static struct xport_rx sink_rx[TXQ_MAX * 2];

static void sink_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct sink *k = container_of(w, struct sink, io);
	int r = xport_recv(b.x, k->rx + k->got, k->max - k->got);

	assert_true(r >= 0);
	k->got += (unsigned int)r;
}

static void sink_start(struct sink *k)
{
	memset(k, 0, sizeof(*k));
	k->rx = sink_rx;
	k->max = sizeof(sink_rx) / sizeof(sink_rx[0]);
	ev_io_init(&k->io, sink_cb, xport_fd(b.x), EV_READ);
	ev_io_start(loop, &k->io);
}

struct want {
	struct sink *k;
	unsigned int n;
};

static bool sink_has(void *arg)
{
	const struct want *w = arg;

	return w->k->got >= w->n;
}

/* b got exactly MADs 0..n-1, in order; nothing else follows. */
static void sink_check(struct sink *k, unsigned int n)
{
	struct want w = { k, n };

	assert_true(run_until(sink_has, &w));
	assert_int_equal(k->got, n);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(mad_seq(k->rx[i].mad), i);
	ev_io_stop(loop, &k->io);
	assert_int_equal(recv_n(&b, k->rx, 1, 20), 0);
}

/*
 * A burst queued in one loop iteration: nothing is written before the
 * prepare phase (one write for many, not one each), and all of it arrives,
 * complete and in order, although it is several times what the socket
 * holds.
 */
static void test_burst_in_order(void **state)
{
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	struct xport_counters c0 = *xport_counters(a.x);
	struct sim_stats st;
	uint8_t mad[CM_MAD_SIZE];
	struct sink k;

	reseed(1);
	sink_start(&k);
	for (uint32_t i = 0; i < N_MADS; i++) {
		make_mad(mad, i);
		assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	}
	/* Queued, not written yet. */
	assert_int_equal(xport_counters(a.x)->tx, c0.tx);
	sink_check(&k, N_MADS);
	assert_int_equal(xport_counters(a.x)->tx, c0.tx + N_MADS);
	assert_int_equal(xport_counters(a.x)->tx_errors, c0.tx_errors);
	assert_int_equal(stats(&st), 0);
	assert_int_equal(st.received, N_MADS);
	assert_int_equal(st.routed, N_MADS);
	assert_int_equal(st.overflow, 0);
}

static bool flag_set(void *arg)
{
	return *(bool *)arg;
}

static void readable_cb(struct ev_loop *l, ev_io *w, int revents)
{
	*(bool *)w->data = true;
	ev_io_stop(l, w);
}

/* A prepare watcher of the caller's, as the client server has: sends. */
static void late_send_cb(struct ev_loop *l, ev_prepare *w, int revents)
{
	struct node *from = w->data;
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	uint8_t mad[CM_MAD_SIZE];

	make_mad(mad, 0);
	assert_int_equal(xport_send(from->x, 0, &to, mad), 0);
	ev_prepare_stop(l, w);
}

/*
 * Latency at one in flight: a MAD queued during an iteration, even by
 * another prepare watcher, is written before the loop sleeps; otherwise
 * only the guard timer would wake the loop.
 */
static void test_flush_before_sleep(void **state)
{
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	struct xport_rx rx[1];
	uint8_t mad[CM_MAD_SIZE];
	bool readable = false;
	ev_prepare late;
	struct node c;
	ev_io io;

	ev_io_init(&io, readable_cb, xport_fd(b.x), EV_READ);
	io.data = &readable;
	ev_io_start(loop, &io);
	make_mad(mad, 0);
	assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	assert_true(run_until(flag_set, &readable));
	assert_int_equal(xport_recv(b.x, rx, 1), 1);

	/*
	 * libev runs watchers of one priority last started first: start the
	 * caller's before the transport's, so that only the transport's
	 * lower priority puts it after the caller's.
	 */
	readable = false;
	ev_io_start(loop, &io);
	ev_prepare_init(&late, late_send_cb);
	late.data = &c;
	ev_prepare_start(loop, &late);
	assert_int_equal(open_node(&c, 6, false, 0), 0);
	assert_true(run_until(flag_set, &readable));
	assert_false(ev_is_active(&late));
	assert_int_equal(xport_recv(b.x, rx, 1), 1);
	assert_int_equal(mad_seq(rx[0].mad), 0);
	assert_int_equal(rx[0].from.lid, xport_port(c.x, 0)->lid);
	close_node(&c);
}

static void hub_pause(bool stop)
{
	assert_int_equal(kill(hub_pid, stop ? SIGSTOP : SIGCONT), 0);
	if (stop) {
		int status;

		assert_int_equal(waitpid(hub_pid, &status, WUNTRACED), hub_pid);
		assert_true(WIFSTOPPED(status));
	}
}

/*
 * The hub stops reading: the socket fills and the queue keeps what does
 * not fit; below the bound nothing is lost. When the hub reads again, the
 * queue drains on EV_WRITE, and the hub, whose socket to b fills as b is
 * slow, loses nothing either.
 */
static void test_full_socket_no_loss(void **state)
{
	const unsigned int n = TXQ_MAX - 100;
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	struct xport_counters c0 = *xport_counters(a.x);
	struct sim_stats st;
	uint8_t mad[CM_MAD_SIZE];
	struct sink k;

	reseed(1);
	hub_pause(true);
	for (uint32_t i = 0; i < n; i++) {
		make_mad(mad, i);
		assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
		if (i % 100 == 99)
			pump();
	}
	pump();
	/* The socket took some, not all: the rest waits in the queue. */
	assert_true(xport_counters(a.x)->tx > c0.tx);
	assert_true(xport_counters(a.x)->tx < c0.tx + n);
	hub_pause(false);
	sink_start(&k);
	sink_check(&k, n);
	assert_int_equal(xport_counters(a.x)->tx, c0.tx + n);
	assert_int_equal(xport_counters(a.x)->tx_errors, c0.tx_errors);
	assert_int_equal(stats(&st), 0);
	assert_int_equal(st.received, n);
	assert_int_equal(st.routed, n);
	assert_int_equal(st.overflow, 0);
}

/*
 * Beyond the bound: with the hub stopped, sends succeed until the socket
 * and the queue are full, then fail with -ENOBUFS, each counted; every
 * MAD accepted arrives once the hub reads again.
 */
static void test_over_bound_counted(void **state)
{
	struct eng_addr to = to_lid(xport_port(b.x, 10)->lid);
	struct xport_counters c0 = *xport_counters(a.x);
	uint8_t mad[CM_MAD_SIZE];
	unsigned int accepted = 0;
	struct sim_stats st;
	struct sink k;
	int r;

	reseed(1);
	hub_pause(true);
	for (;;) {
		make_mad(mad, accepted);
		r = xport_send(a.x, 0, &to, mad);
		if (r)
			break;
		if (++accepted % 64 == 0)
			pump();
		assert_true(accepted < 4 * TXQ_MAX);
	}
	assert_int_equal(r, -ENOBUFS);
	/* The queue held its bound; the socket held the rest. */
	assert_true(accepted > TXQ_MAX);
	assert_int_equal(xport_counters(a.x)->tx + TXQ_MAX, c0.tx + accepted);
	for (int i = 0; i < 49; i++)
		assert_int_equal(xport_send(a.x, 0, &to, mad), -ENOBUFS);
	assert_int_equal(xport_counters(a.x)->tx_errors, c0.tx_errors + 50);
	hub_pause(false);
	sink_start(&k);
	sink_check(&k, accepted);
	assert_int_equal(xport_counters(a.x)->tx, c0.tx + accepted);
	assert_int_equal(xport_counters(a.x)->tx_errors, c0.tx_errors + 50);
	assert_int_equal(stats(&st), 0);
	assert_int_equal(st.received, accepted);
	assert_int_equal(st.overflow, 0);
}

static void test_disconnect_forgotten(void **state)
{
	struct node c, dup;
	struct eng_addr to;
	struct sim_stats st;
	uint8_t mad[CM_MAD_SIZE];
	uint64_t t0;
	char want[XPORT_MSG_MAX];

	assert_int_equal(open_node(&c, 3, false, 0), 0);
	assert_int_equal(stats(&st), 0);
	assert_int_equal(st.daemons, 3);
	assert_int_equal(st.ports, 3);
	/* A second daemon cannot take node 3 (nor its LID/GID). */
	assert_int_equal(open_node(&dup, 3, false, 0), -EADDRINUSE);
	assert_null(dup.x);
	assert_int_equal(dup.rep.n, 1);
	assert_false(dup.rep.port[0].served);
	snprintf(want, sizeof(want),
		 "sim3 port 1: the hub at %s already has this node, LID or GID",
		 sock_path);
	assert_string_equal(dup.rep.port[0].message, want);

	to = to_lid(xport_port(c.x, 0)->lid);
	close_node(&c);
	for (t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(2000)) {
		assert_int_equal(stats(&st), 0);
		if (st.daemons == 2)
			break;
	}
	assert_int_equal(st.daemons, 2);
	reseed(1);
	make_mad(mad, 1);
	assert_int_equal(xport_send(a.x, 0, &to, mad), 0);
	hub_wait_received(1, &st);
	assert_int_equal(st.unroutable, 1);
	/* Node 3 can come back. */
	assert_int_equal(open_node(&c, 3, false, 0), 0);
	close_node(&c);
}

static int set_sm_lid(uint16_t lid)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sim_ctl_sa req = {
		.hdr = { SIM_CTL_SA, SIM_PROTO_VERSION },
		.flags = SIM_SA_SET_SM_LID,
		.sm_lid = lid,
	};
	struct sim_ctl_sa_reply rep;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int err;

	strcpy(sun.sun_path, sock_path);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req) ||
	    recv(fd, &rep, sizeof(rep), 0) != (ssize_t)sizeof(rep))
		err = errno ? -errno : -EIO;
	else
		err = rep.status;
	close(fd);
	return err;
}

static bool both_heard(void *arg)
{
	unsigned int want = *(unsigned int *)arg;
	struct xport_rx rx[4];

	/* SIM_SM_CHANGE is handled inside recv. */
	xport_recv(a.x, rx, 4);
	xport_recv(b.x, rx, 4);
	return a.sm_changes >= want && b.sm_changes >= want;
}

/*
 * The hub's SIM_SM_CHANGE: every IB port's sm_lid follows, with an
 * XPORT_EV_SM_CHANGE each; the hello's (the default LID 1, which the
 * ports already have) raised none.
 */
static void test_sm_change(void **state)
{
	unsigned int want = 1;
	uint64_t dropped = xport_counters(a.x)->rx_dropped;

	pump();
	assert_int_equal(a.sm_changes, 0);
	assert_int_equal(b.sm_changes, 0);
	assert_int_equal(xport_port(a.x, 0)->sm_lid, 1);
	assert_int_equal(set_sm_lid(0x123), 0);
	assert_true(run_until(both_heard, &want));
	assert_int_equal(a.sm_changes, 1);
	assert_int_equal(b.sm_changes, 1);
	assert_int_equal(a.sm_lid, 0x123);
	assert_int_equal(xport_port(a.x, 0)->sm_lid, 0x123);
	assert_int_equal(xport_port(b.x, 10)->sm_lid, 0x123);
	assert_int_equal(xport_port(a.x, 0)->sm_sl, 0);
	assert_string_equal(xport_event_name(XPORT_EV_SM_CHANGE), "SM change");

	want = 2;
	assert_int_equal(set_sm_lid(1), 0);
	assert_true(run_until(both_heard, &want));
	assert_int_equal(xport_port(a.x, 0)->sm_lid, 1);
	assert_int_equal(b.sm_lid, 1);
	/* Handled, not dropped as a foreign packet. */
	assert_true(xport_counters(a.x)->rx_dropped == dropped);
}

/* cmhub --ctl on the test's hub (tests/lib/hub_ctl.h). */
static int run_ctl(char *const args[], char *out, size_t len)
{
	return hub_ctl_run(getenv("CMHUB"), sock_path, args, out, len);
}

static void test_ctl_client(void **state)
{
	char *set[] = { "set",	     "loss=12.5", "dup=1", "reorder=0.5",
			"delay=0-0", "seed=9",	  "reset", NULL };
	char *bad[] = { "set", "loss=200", NULL };
	char *get[] = { "stats", NULL };
	char out[1024];

	assert_int_equal(run_ctl(set, out, sizeof(out)), 0);
	assert_int_equal(run_ctl(bad, out, sizeof(out)), 2);
	assert_int_equal(run_ctl(get, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "routed 0\n"));
	assert_non_null(strstr(out, "daemons 2\n"));
	set_faults(0, 0, 0, 0, 0, 0, 0);
}

/* Last: the hub goes away; the ports are reported removed. */
static void test_hub_gone(void **state)
{
	struct xport_rx rx[1];
	struct pollfd p = { .fd = xport_fd(a.x), .events = POLLIN };
	uint8_t mad[CM_MAD_SIZE];
	struct eng_addr to = to_lid(1);

	kill(hub_pid, SIGTERM);
	waitpid(hub_pid, NULL, 0);
	hub_pid = 0;
	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	assert_int_equal(xport_recv(a.x, rx, 1), -ENOTCONN);
	assert_int_equal(a.removed, 1);
	assert_false(xport_port(a.x, 0)->up);
	assert_int_equal(xport_recv(a.x, rx, 1), -ENOTCONN);
	assert_int_equal(a.removed, 1);
	make_mad(mad, 1);
	assert_int_equal(xport_send(a.x, 0, &to, mad), -ENETDOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_ports),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_needs_loop),
		cmocka_unit_test(test_both_ways),
		cmocka_unit_test(test_roce),
		cmocka_unit_test(test_loss_seeded),
		cmocka_unit_test(test_dup_seeded),
		cmocka_unit_test(test_reorder_seeded),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_per_direction),
		cmocka_unit_test(test_unroutable),
		cmocka_unit_test(test_burst_in_order),
		cmocka_unit_test(test_flush_before_sleep),
		cmocka_unit_test(test_full_socket_no_loss),
		cmocka_unit_test(test_over_bound_counted),
		cmocka_unit_test(test_disconnect_forgotten),
		cmocka_unit_test(test_sm_change),
		cmocka_unit_test(test_ctl_client),
		cmocka_unit_test(test_hub_gone),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
