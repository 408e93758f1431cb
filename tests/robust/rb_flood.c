// SPDX-License-Identifier: MIT
/*
 * REQ flood (issue 8, item 3), with a verdict that does not depend on the
 * machine's speed (issue 13, item 1).
 *
 * Daemon B (node 2) runs with --max-held RB_MAX_HELD (default 1024); a
 * listener on B (backlog 16) rejects every REQ but the legitimate one. A
 * flooder process, a fake node (node 3, LID 49) speaking daemon/sim_proto.h
 * to the hub itself, sends RB_FLOOD_COUNT REQs (default 600000), each with
 * its own local comm id, CA GUID and QPN, to the listener's service id, and
 * counts what comes back (MRA, REJ by reason). A legitimate client on
 * daemon A (node 1) connects to the same listener.
 *
 * The flood is paced by B's answers, never by a rate: the flooder keeps a
 * bounded window of REQs that B has not answered, so a fast machine floods
 * faster and a slow one slower, and nothing queues past what the hub and
 * B's transport carry (4096 MADs each). The overload comes from a
 * listener that stops answering, so it happens by construction:
 *
 *  1. Pause. The listener reads nothing. The flooder sends half the flood
 *     (at least backlog + max_held + 1000 REQs), keeping at most
 *     backlog + RB_WINDOW (1024) REQs with no answer at all (MRA or REJ).
 *     B must hand the first 16 to the listener (its credits), hold the
 *     next max_held with an MRA each and shed every later one with REJ
 *     "no resources". Once B's req_received counter has them all, the
 *     test checks exactly that (16 credits in use, max_held held, the rest
 *     shed) and B's VmRSS; then the legit client tries once and must be
 *     shed too.
 *  2. Resume. The listener answers again. The flooder now keeps at most
 *     backlog + max_held / 2 REQs without their final answer (REJ), so B
 *     always has room for the legit REQ: it is held at worst, then
 *     delivered and accepted. The flooder stops before its last tenth
 *     until the legit connection is established, so the connection is
 *     made while the flood goes on.
 *  3. Tail. The flooder sends the rest while the legit client
 *     disconnects (DREQ/DREP, timewait on both sides).
 *
 * Asserted:
 *  - the phase-1 state above, exactly; the legit client is shed while the
 *    listener is paused and established after it resumes;
 *  - the listener never reports more than max_held held REQs nor more than
 *    its backlog in use (sampled with cmc_query_id every 50 ms);
 *  - B's VmRSS, sampled every 50 ms and at the end of phase 1 (when
 *    max_held REQs are held by construction), stays below
 *      baseline + (backlog + max_held) * RB_REC_KB + RB_SLACK_KB
 *    (RB_REC_KB = 2 KiB a record, twice the ~1 KiB measured; RB_SLACK_KB =
 *    2 MiB for buffers and allocator slack). Without the limit (run with
 *    RB_MAX_HELD=1048576 RB_BOUND_HELD=1024) phase 1 holds every REQ past
 *    the backlog and the test fails;
 *  - every flood REQ got exactly one final answer: REJ "no resources"
 *    (shed) or REJ consumer-defined (the listener), none lost (B's
 *    mad_tx_errors and the hub's overflow are 0: the windows keep every
 *    queue far below its limit);
 *  - the counters add up: req_received >= the flood, req_rejected_backlog
 *    = the REJs "no resources" the flooder and the legit client saw,
 *    shed + listener rejects = REQs sent + legit sheds, mra_sent = MRAs
 *    the flooder and A saw, >= req_held;
 *  - afterwards B holds only the listener (ids 1, records 1, no held REQ)
 *    and answers normally.
 *
 * Time bounds here are hang guards only (see RB_GUARD_MS): every wait is
 * for a condition the daemons must reach, however slowly.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cm_mad.h"
#include "rb_common.h"
#include "sim_proto.h"

#define SERVICE_ID 0x00000000726f6232ull /* "rob2" */
#define BACKLOG 16
#define FLOOD_NODE 3
#define FLOOD_GUID_BASE 0x00f1000000000000ull
#define NODE_GUID(n) (0x0002c90300000000ull | (uint64_t)(n) << 8)
#define LEGIT_PD "legit"

/*
 * Every wait below is for a condition the daemons must reach however
 * slowly; this only turns a hang into a failure that says where. 180 s is
 * several times what the whole test takes under ASan on a loaded 2-core
 * machine, and within meson's timeout.
 */
#define RB_GUARD_MS 180000.0

/* What the parent tells the flooder, one byte on a pipe. */
#define CMD_RESUME 'R' /* the listener answers again: phase 2 */
#define CMD_TAIL 'T' /* the legit connection is up: phase 3 */

struct flood_plan {
	uint64_t count; /* REQs in all */
	uint64_t pause; /* sent while the listener is paused */
	uint64_t tail; /* the first REQ of phase 3 */
	uint64_t window_any; /* phase 1: REQs with no answer at all */
	uint64_t window_final; /* phases 2, 3: REQs with no REJ yet */
};

struct flood_result {
	uint64_t sent, rx, mra, rej, rej_no_res, rej_consumer, rej_other;
	uint64_t other, eagain_waits;
	double seconds;
};

/* ---- the flooder (a child process) ------------------------------------ */

static void flood_req(uint64_t i, struct sim_mad *m)
{
	struct cm_msg msg;
	struct cm_req *r = &msg.req;

	cm_msg_init(&msg, CM_MSG_REQ, 0x5100000000000000ull | i);
	r->local_comm_id = (uint32_t)(0x10000000u + i);
	r->service_id = SERVICE_ID;
	r->local_ca_guid = FLOOD_GUID_BASE + 0x100 + i;
	r->local_qpn = (uint32_t)(2 + i % 0xfffff0);
	r->responder_resources = 1;
	r->initiator_depth = 1;
	r->remote_cm_resp_timeout = 20;
	r->transport_type = CM_TRANSPORT_RC;
	r->starting_psn = (uint32_t)(i & 0xffffff);
	r->local_cm_resp_timeout = 20;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = CM_MTU_1024;
	r->rnr_retry_count = 7;
	r->max_cm_retries = 15;
	r->primary_local_lid = RB_NODE_LID(FLOOD_NODE);
	r->primary_remote_lid = RB_NODE_LID(2);
	r->primary_packet_rate = 3;
	r->primary_hop_limit = 0;
	r->primary_subnet_local = 1;
	r->primary_local_ack_timeout = 14;
	snprintf((char *)r->private_data, sizeof(r->private_data), "flood %llu",
		 (unsigned long long)i);
	rb_fake_mad(m, &msg, RB_NODE_LID(2));
}

static void flood_rx(int fd, struct flood_result *res)
{
	struct sim_mad in;

	for (int i = 0; i < 256; i++) {
		ssize_t n = recv(fd, &in, sizeof(in), MSG_DONTWAIT);
		struct cm_msg msg;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		CHECK(n == (ssize_t)sizeof(in), "flooder recv %zd: %s", n,
		      strerror(errno));
		res->rx++;
		if (cm_mad_decode(in.mad, SIM_MAD_SIZE, 0, &msg, NULL)) {
			res->other++;
			continue;
		}
		if (msg.type == CM_MSG_MRA) {
			res->mra++;
		} else if (msg.type == CM_MSG_REJ) {
			res->rej++;
			if (msg.rej.reason == CM_REJ_NO_RESOURCES)
				res->rej_no_res++;
			else if (msg.rej.reason == CM_REJ_CONSUMER_DEFINED)
				res->rej_consumer++;
			else
				res->rej_other++;
		} else {
			res->other++;
		}
	}
}

/* Wait up to ms for B's answers and read them. */
static void flood_wait_rx(int fd, struct flood_result *res, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, ms) > 0)
		flood_rx(fd, res);
}

/*
 * Send REQs up to number 'upto', never more than 'window' of them without
 * an answer: a final one (REJ) when 'final', else any (MRA or REJ).
 */
static void flood_send(int fd, struct flood_result *res, uint64_t upto,
		       uint64_t window, bool final)
{
	double guard = rb_now_ms() + RB_GUARD_MS;
	struct sim_mad m;

	while (res->sent < upto) {
		uint64_t answered = res->rej + (final ? 0 : res->mra);

		CHECK(rb_now_ms() < guard,
		      "flooder stuck at %llu sent, %llu MRA, %llu REJ",
		      (unsigned long long)res->sent,
		      (unsigned long long)res->mra,
		      (unsigned long long)res->rej);
		flood_rx(fd, res);
		if (res->sent - answered >= window) {
			flood_wait_rx(fd, res, 100);
			continue;
		}
		flood_req(res->sent, &m);
		if (send(fd, &m, sizeof(m), MSG_DONTWAIT) < 0) {
			struct pollfd p = { fd, POLLIN | POLLOUT, 0 };

			CHECK(errno == EAGAIN || errno == EINTR,
			      "flooder send: %s", strerror(errno));
			res->eagain_waits++;
			poll(&p, 1, 100);
			continue;
		}
		res->sent++;
	}
}

/* Read B's answers until the parent says 'want'. */
static void flood_wait_cmd(int fd, int in, char want, struct flood_result *res)
{
	double guard = rb_now_ms() + RB_GUARD_MS;

	for (;;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { in, POLLIN, 0 } };
		char c;

		CHECK(rb_now_ms() < guard, "flooder: no '%c' from the test",
		      want);
		if (poll(p, 2, 100) < 0 && errno != EINTR)
			CHECK(0, "flooder poll: %s", strerror(errno));
		if (p[0].revents & POLLIN)
			flood_rx(fd, res);
		if (p[1].revents & (POLLIN | POLLHUP)) {
			CHECK(read(in, &c, 1) == 1 && c == want,
			      "flooder: wanted '%c' from the test", want);
			return;
		}
	}
}

static void flooder(int out, int in, const struct flood_plan *pl)
{
	struct flood_result res = { 0 };
	/* A deep send buffer: the windows, not the socket, pace the flood. */
	int fd = rb_fake_node(FLOOD_NODE, FLOOD_GUID_BASE, 4 << 20);
	double t0 = rb_now_ms(), guard;

	/* Tell the parent we are on the fabric. */
	CHECK(write(out, "g", 1) == 1, "pipe");
	flood_send(fd, &res, pl->pause, pl->window_any, false);
	flood_wait_cmd(fd, in, CMD_RESUME, &res);
	flood_send(fd, &res, pl->tail, pl->window_final, true);
	flood_wait_cmd(fd, in, CMD_TAIL, &res);
	flood_send(fd, &res, pl->count, pl->window_final, true);
	res.seconds = (rb_now_ms() - t0) / 1e3;
	/* Every REQ gets its final answer (REJ): wait for the last ones. */
	guard = rb_now_ms() + RB_GUARD_MS;
	while (res.rej < pl->count) {
		CHECK(rb_now_ms() < guard, "flooder: %llu REJs for %llu REQs",
		      (unsigned long long)res.rej,
		      (unsigned long long)pl->count);
		flood_wait_rx(fd, &res, 100);
	}
	/* Anything more would be a second answer: give it time to show. */
	for (int i = 0; i < 5; i++)
		flood_wait_rx(fd, &res, 100);
	CHECK(write(out, &res, sizeof(res)) == (ssize_t)sizeof(res), "pipe");
	close(fd);
	_exit(0);
}

/* ---- the listener and the legitimate client (the parent) -------------- */

static struct {
	struct cmc_id *passive; /* the legit connection on B */
	struct cmc_id *active; /* on A */
	bool established, up_b, disconnected, closed_a, closed_b, seen;
	unsigned long attempts, rej_no_res, rej_other, mra, mra_b, conn_err;
	double t_resume, t_next, t_up;
} legit;
static unsigned long flood_rejected; /* by the listener */
static uint32_t max_held_seen, max_used_seen;

static void legit_connect(struct cmc_channel *a)
{
	struct cmc_conn_param p;
	int rc;

	/*
	 * B answers a REQ (MRA, REJ or REP) as soon as it reads it, but under
	 * load that can be a while behind a window of flood REQs: wait 4 s a
	 * try (2^20 x 4.096 us), so a slow B never makes this side time out
	 * and try again with a REQ the listener might see twice.
	 */
	rb_conn_param(&p, SERVICE_ID, RB_NODE_LID(2), 0x4242, 1, 1, 20);
	p.private_data = LEGIT_PD;
	p.private_data_len = sizeof(LEGIT_PD);
	rc = cmc_create_id(a, NULL, CMC_QP_RC, &legit.active);
	CHECK(rc == 0, "create: %s", cmc_strerror(rc));
	rc = cmc_connect(legit.active, &p);
	CHECK(rc == 0, "legit connect: %s", cmc_strerror(rc));
	legit.attempts++;
}

static void on_b(struct cmc_channel *b)
{
	struct cmc_event *ev;
	int rc;

	for (int i = 0; i < 4096 && (rc = cmc_get_event(b, &ev, 0)) == 0; i++) {
		if (ev->type == CMC_EVENT_REQ_RECEIVED) {
			if (!memcmp(ev->u.req.private_data, LEGIT_PD,
				    sizeof(LEGIT_PD)) &&
			    ev->u.req.remote_ca_guid == NODE_GUID(1)) {
				struct cmc_accept_param ap = {
					.qp_num = 0x777,
					.start_psn = 2,
					.responder_resources = 1,
					.initiator_depth = 1,
					.rnr_retry_count = 7,
				};

				CHECK(!legit.seen, "two legit REQs");
				legit.seen = true;
				legit.passive = ev->id;
				rc = cmc_accept(ev->id, &ap);
				CHECK(rc == 0, "accept: %s", cmc_strerror(rc));
			} else {
				rc = cmc_reject(ev->id, 28, NULL, 0, "go", 3);
				CHECK(rc == 0, "reject: %s", cmc_strerror(rc));
				rc = cmc_destroy_id(ev->id);
				CHECK(rc == 0, "destroy: %s", cmc_strerror(rc));
				flood_rejected++;
			}
		} else if (legit.passive && ev->id == legit.passive) {
			if (ev->type == CMC_EVENT_DREQ_RECEIVED) {
				rc = cmc_disconnect(ev->id, NULL, 0);
				CHECK(rc == 0, "drep: %s", cmc_strerror(rc));
			} else if (ev->type == CMC_EVENT_TIMEWAIT_EXIT) {
				legit.closed_b = true;
				CHECK(cmc_ack_event(ev) == 0, "ack");
				CHECK(cmc_destroy_id(legit.passive) == 0,
				      "destroy");
				legit.passive = NULL;
				continue;
			} else if (ev->type == CMC_EVENT_MRA_RECEIVED) {
				/* A's app took more than half B's wait to
				 * RTU (a busy machine, ASan): its daemon
				 * MRAed our REP. A note, nothing to do. */
				legit.mra_b++;
			} else {
				CHECK(ev->type == CMC_EVENT_ESTABLISHED,
				      "legit passive got %s",
				      cmc_event_str(ev->type));
				legit.up_b = true;
			}
		} else {
			CHECK(0, "event %s of a flood id",
			      cmc_event_str(ev->type));
		}
		CHECK(cmc_ack_event(ev) == 0, "ack");
	}
}

static void on_a(struct cmc_channel *a, double now)
{
	struct cmc_event *ev;
	int rc;

	while ((rc = cmc_get_event(a, &ev, 0)) == 0) {
		enum cmc_event_type t = ev->type;

		CHECK(ev->id == legit.active, "event for another id");
		if (t == CMC_EVENT_MRA_RECEIVED) {
			legit.mra++;
		} else if (t == CMC_EVENT_REJ_RECEIVED ||
			   t == CMC_EVENT_CONNECT_ERROR) {
			if (t == CMC_EVENT_CONNECT_ERROR)
				legit.conn_err++;
			else if (ev->u.rej.reason == CM_REJ_NO_RESOURCES)
				legit.rej_no_res++;
			else
				legit.rej_other++;
			CHECK(cmc_ack_event(ev) == 0, "ack");
			cmc_destroy_id(legit.active);
			legit.active = NULL;
			/* Tried again 10 ms later. */
			legit.t_next = now + 10;
			continue;
		} else if (t == CMC_EVENT_REP_RECEIVED) {
			rc = cmc_rtu(ev->id, NULL, 0);
			CHECK(rc == 0, "rtu: %s", cmc_strerror(rc));
			legit.established = true;
			legit.t_up = now;
		} else if (t == CMC_EVENT_DREP_RECEIVED) {
		} else if (t == CMC_EVENT_TIMEWAIT_EXIT) {
			legit.closed_a = true;
			CHECK(cmc_ack_event(ev) == 0, "ack");
			CHECK(cmc_destroy_id(legit.active) == 0, "destroy");
			legit.active = NULL;
			continue;
		} else {
			CHECK(0, "legit active got %s (status %d)",
			      cmc_event_str(t), ev->status);
		}
		CHECK(cmc_ack_event(ev) == 0, "ack");
	}
	CHECK(rc == -EAGAIN, "get_event A: %s", cmc_strerror(rc));
}

static void sample(struct cmc_id *listener, pid_t pid, unsigned long *max_kb)
{
	struct cmc_id_info info;
	unsigned long kb = rb_vmrss_kb(pid);
	int rc = cmc_query_id(listener, &info);

	CHECK(rc == 0, "query listener: %s", cmc_strerror(rc));
	if (info.held_reqs > max_held_seen)
		max_held_seen = info.held_reqs;
	if (info.credits_in_use > max_used_seen)
		max_used_seen = info.credits_in_use;
	if (kb > *max_kb)
		*max_kb = kb;
}

static void to_flooder(int fd, char cmd)
{
	CHECK(write(fd, &cmd, 1) == 1, "pipe to the flooder: %s",
	      strerror(errno));
}

/* Serve A's events (and, unless paused, the listener's) for up to ms. */
static void serve(struct cmc_channel *a, struct cmc_channel *b, bool paused,
		  struct cmc_id *listener, unsigned long *max_kb, int ms)
{
	static double next_sample;
	struct pollfd p[2] = {
		{ .fd = cmc_fd(a), .events = POLLIN },
		{ .fd = cmc_fd(b), .events = paused ? 0 : POLLIN },
	};
	double now = rb_now_ms();

	if (now >= next_sample) {
		sample(listener, rb_fab.d[1].pid, max_kb);
		next_sample = now + 50;
	}
	if (poll(p, 2, ms) < 0 && errno != EINTR)
		CHECK(0, "poll: %s", strerror(errno));
	if (!paused)
		on_b(b);
	on_a(a, rb_now_ms());
}

int main(void)
{
	uint64_t count = rb_env_ulong("RB_FLOOD_COUNT", 600000);
	unsigned long max_held = rb_env_ulong("RB_MAX_HELD", 1024);
	/* The limit the checks hold B to; only differs from B's own in a
	 * run that shows the test fails without the limit. */
	unsigned long bound_held = rb_env_ulong("RB_BOUND_HELD", max_held);
	unsigned long rec_kb = rb_env_ulong("RB_REC_KB", 2);
	unsigned long slack_kb = rb_env_ulong("RB_SLACK_KB", 2048);
	char held_s[24];
	const char *const extra[] = { "--packet-life-time", "8", "--max-held",
				      held_s, NULL };
	struct flood_plan plan = { .count = count };
	struct cmc_channel *a, *b, *mb, *ma;
	struct cmc_id *listener;
	struct cmc_id_info info;
	struct flood_result res;
	unsigned long base_kb, max_kb = 0, end_kb, bound_kb;
	uint64_t shed_paused;
	int up[2], down[2], rc, status;
	bool flood_done = false, tail_sent = false;
	double guard, t_flood_end = 0;
	pid_t child;
	char go;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(bound_held >= 2 && bound_held <= max_held,
	      "RB_MAX_HELD %lu, RB_BOUND_HELD %lu: phase 2 needs room",
	      max_held, bound_held);
	plan.pause = count / 2;
	if (plan.pause < BACKLOG + bound_held + 1000)
		plan.pause = BACKLOG + bound_held + 1000;
	plan.tail = count - count / 10;
	plan.window_any = BACKLOG + rb_env_ulong("RB_WINDOW", 1024);
	/* B keeps at least max_held / 2 places free for the legit REQ. */
	plan.window_final = BACKLOG + bound_held / 2;
	CHECK(plan.tail > plan.pause && plan.tail < count,
	      "RB_FLOOD_COUNT %llu is too small for the three phases",
	      (unsigned long long)count);
	snprintf(held_s, sizeof(held_s), "%lu", max_held);
	rb_pair_start("rbflood", 3, extra, extra, &ma, &mb);
	a = rb_open(0, "rb-legit");
	b = rb_open(1, "rb-listener");
	rc = cmc_create_id(b, NULL, CMC_QP_RC, &listener);
	CHECK(rc == 0, "create: %s", cmc_strerror(rc));
	rc = cmc_listen(listener, SERVICE_ID, ~0ull, BACKLOG, NULL);
	CHECK(rc == 0, "listen: %s", cmc_strerror(rc));
	base_kb = rb_vmrss_kb(rb_fab.d[1].pid);
	bound_kb = base_kb + (BACKLOG + bound_held) * rec_kb + slack_kb;
	printf("flood: %llu REQs (%llu while the listener is paused, the "
	       "last %llu after the legit connection is up); B --max-held "
	       "%lu, backlog %d; windows %llu / %llu; VmRSS baseline %lu "
	       "KiB, bound %lu KiB\n",
	       (unsigned long long)count, (unsigned long long)plan.pause,
	       (unsigned long long)(count - plan.tail), max_held, BACKLOG,
	       (unsigned long long)plan.window_any,
	       (unsigned long long)plan.window_final, base_kb, bound_kb);
	/* The bound must be one that unbounded holding would break: a
	 * record costs well over 1 KiB (conn, held REQ, tables). */
	if (plan.pause - BACKLOG < (bound_kb - base_kb) * 2)
		printf("note: %llu REQs are too few for the memory bound to "
		       "tell a missing limit\n",
		       (unsigned long long)plan.pause);

	CHECK(pipe(up) == 0 && pipe(down) == 0, "pipe");
	child = fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		/* The parent owns the fabric: a failing flooder must not
		 * stop it (rb_fail) or signal pids it never started. */
		rb_fab.n = 0;
		rb_fab.hub_pid = 0;
		rb_fab.dir[0] = '\0';
		close(up[0]);
		close(down[1]);
		flooder(up[1], down[0], &plan);
	}
	close(up[1]);
	close(down[0]);
	CHECK(read(up[0], &go, 1) == 1, "flooder did not start");

	/* Phase 1: the listener reads nothing until B has every REQ. */
	guard = rb_now_ms() + RB_GUARD_MS;
	while (rb_counter(mb, "req_received") < plan.pause) {
		CHECK(rb_now_ms() < guard, "B received %llu of %llu REQs",
		      (unsigned long long)rb_counter(mb, "req_received"),
		      (unsigned long long)plan.pause);
		serve(a, b, true, listener, &max_kb, 10);
	}
	sample(listener, rb_fab.d[1].pid, &max_kb);
	shed_paused = rb_counter(mb, "req_rejected_backlog");
	CHECK(cmc_query_id(listener, &info) == 0, "query");
	printf("paused: B holds %u REQs, credits in use %u, shed %llu, "
	       "VmRSS %lu KiB (bound %lu)\n",
	       info.held_reqs, info.credits_in_use,
	       (unsigned long long)shed_paused, max_kb, bound_kb);
	CHECK(max_kb <= bound_kb, "B's VmRSS reached %lu KiB > bound %lu",
	      max_kb, bound_kb);
	CHECK(info.held_reqs <= bound_held, "held %u > %lu", info.held_reqs,
	      bound_held);
	CHECK(info.credits_in_use == BACKLOG && info.held_reqs == max_held,
	      "paused listener: credits %u (backlog %d), held %u (max %lu)",
	      info.credits_in_use, BACKLOG, info.held_reqs, max_held);
	CHECK(shed_paused == plan.pause - BACKLOG - max_held,
	      "shed %llu of %llu while paused, expected %llu",
	      (unsigned long long)shed_paused, (unsigned long long)plan.pause,
	      (unsigned long long)(plan.pause - BACKLOG - max_held));
	/* B is full: the legit client is shed like any other. */
	legit_connect(a);
	while (legit.active) {
		CHECK(rb_now_ms() < guard, "no answer to the legit REQ");
		serve(a, b, true, listener, &max_kb, 10);
	}
	CHECK(legit.rej_no_res == 1 && legit.attempts == 1 && !legit.mra,
	      "legit REQ while paused: REJ no resources %lu, MRA %lu",
	      legit.rej_no_res, legit.mra);

	/* Phase 2: the listener answers again; so does the flooder. */
	to_flooder(down[1], CMD_RESUME);
	legit.t_resume = rb_now_ms();
	guard = legit.t_resume + RB_GUARD_MS;
	for (;;) {
		double now = rb_now_ms();

		CHECK(now < guard,
		      "not done: legit attempts %lu (REJ no resources %lu, "
		      "other %lu, errors %lu), established %d, closed %d/%d, "
		      "flood done %d",
		      legit.attempts, legit.rej_no_res, legit.rej_other,
		      legit.conn_err, legit.established, legit.closed_a,
		      legit.closed_b, flood_done);
		if (!legit.established && !legit.active && now >= legit.t_next)
			legit_connect(a);
		if (legit.established && legit.up_b && !tail_sent) {
			/* Phase 3: up during the flood; the rest goes out
			 * while it closes. */
			CHECK(cmc_query_id(legit.active, &info) == 0, "query");
			CHECK(info.state == CMC_STATE_ESTABLISHED,
			      "legit active in state %d", info.state);
			to_flooder(down[1], CMD_TAIL);
			tail_sent = true;
			rc = cmc_disconnect(legit.active, NULL, 0);
			CHECK(rc == 0, "disconnect: %s", cmc_strerror(rc));
		}
		serve(a, b, false, listener, &max_kb, 2);
		if (!flood_done) {
			struct pollfd p = { up[0], POLLIN, 0 };

			if (poll(&p, 1, 0) > 0) {
				CHECK(read(up[0], &res, sizeof(res)) ==
					      (ssize_t)sizeof(res),
				      "flooder result");
				CHECK(waitpid(child, &status, 0) == child &&
					      WIFEXITED(status) &&
					      WEXITSTATUS(status) == 0,
				      "flooder failed");
				flood_done = true;
				t_flood_end = rb_now_ms();
			}
		}
		if (flood_done && legit.closed_a && legit.closed_b) {
			CHECK(cmc_query_id(listener, &info) == 0, "query");
			if (!info.held_reqs && !info.credits_in_use)
				break;
		}
	}
	sample(listener, rb_fab.d[1].pid, &max_kb);
	printf("flooder: sent %llu REQs in %.2f s (%.0f/s), send waits %llu; "
	       "got %llu MADs: MRA %llu, REJ %llu (no resources %llu, "
	       "consumer %llu, other %llu), other %llu\n",
	       (unsigned long long)res.sent, res.seconds,
	       (double)res.sent / res.seconds,
	       (unsigned long long)res.eagain_waits, (unsigned long long)res.rx,
	       (unsigned long long)res.mra, (unsigned long long)res.rej,
	       (unsigned long long)res.rej_no_res,
	       (unsigned long long)res.rej_consumer,
	       (unsigned long long)res.rej_other,
	       (unsigned long long)res.other);
	printf("legit: established %.0f ms after the listener resumed, %lu "
	       "attempt(s), REJ no resources %lu, MRA %lu (of its REP %lu); "
	       "listener "
	       "rejected %lu flood REQs; drained %.1f s after the flood\n",
	       legit.t_up - legit.t_resume, legit.attempts, legit.rej_no_res,
	       legit.mra, legit.mra_b, flood_rejected,
	       (rb_now_ms() - t_flood_end) / 1e3);
	printf("listener: max held %u (limit %lu), max credits in use %u "
	       "(backlog %d)\n",
	       max_held_seen, max_held, max_used_seen, BACKLOG);
	end_kb = rb_vmrss_kb(rb_fab.d[1].pid);
	printf("B VmRSS: baseline %lu KiB, max during flood %lu KiB, end %lu "
	       "KiB, bound %lu KiB\n",
	       base_kb, max_kb, end_kb, bound_kb);
	rb_print_counters(mb, "B",
			  "mad_,req_,rej_,mra_,rep_,clients,ids,"
			  "records");
	printf("hub: overflow %llu, received %llu\n",
	       (unsigned long long)rb_hub_stat("overflow"),
	       (unsigned long long)rb_hub_stat("received"));

	CHECK(legit.established, "legit connection never established");
	CHECK(res.sent == count, "flooder sent %llu",
	      (unsigned long long)res.sent);
	CHECK(rb_hub_stat("overflow") == 0, "the hub overflowed");
	CHECK(max_held_seen <= bound_held, "held %u > %lu", max_held_seen,
	      bound_held);
	CHECK(max_used_seen <= BACKLOG, "credits %u > %d", max_used_seen,
	      BACKLOG);
	CHECK(max_kb <= bound_kb, "B's VmRSS reached %lu KiB > bound %lu",
	      max_kb, bound_kb);
	{
		uint64_t req_rx = rb_counter(mb, "req_received");
		uint64_t held = rb_counter(mb, "req_held");
		uint64_t shed = rb_counter(mb, "req_rejected_backlog");
		uint64_t rej_tx = rb_counter(mb, "rej_sent");
		uint64_t mra_tx = rb_counter(mb, "mra_sent");
		uint64_t mad_rx = rb_counter(mb, "mad_rx");
		uint64_t a_mra_rx = rb_counter(ma, "mra_received");
		uint64_t lost = rb_counter(mb, "mad_tx_errors");

		/* The windows keep B's transport queue (4096) far from
		 * full, so nothing may be lost. */
		CHECK(lost == 0, "B lost %llu sends (mad_tx_errors)",
		      (unsigned long long)lost);
		CHECK(req_rx >= count + legit.attempts,
		      "req_received %llu < %llu + %lu",
		      (unsigned long long)req_rx, (unsigned long long)count,
		      legit.attempts);
		CHECK(mad_rx >= count, "mad_rx %llu",
		      (unsigned long long)mad_rx);
		CHECK(held >= max_held, "req_held %llu < %lu",
		      (unsigned long long)held, max_held);
		CHECK(shed >= shed_paused && shed > 0, "req_rejected_backlog");
		CHECK(shed == res.rej_no_res + legit.rej_no_res,
		      "req_rejected_backlog %llu vs REJ no resources seen "
		      "%llu + %lu",
		      (unsigned long long)shed,
		      (unsigned long long)res.rej_no_res, legit.rej_no_res);
		CHECK(res.rej_consumer == flood_rejected,
		      "flooder saw %llu consumer REJs, listener sent %lu",
		      (unsigned long long)res.rej_consumer, flood_rejected);
		CHECK(shed + flood_rejected == count + legit.rej_no_res,
		      "shed %llu + listener rejects %lu != flood %llu + legit "
		      "sheds %lu: a REQ got no answer",
		      (unsigned long long)shed, flood_rejected,
		      (unsigned long long)count, legit.rej_no_res);
		CHECK(rej_tx >= shed + flood_rejected, "rej_sent %llu",
		      (unsigned long long)rej_tx);
		CHECK(mra_tx == res.mra + a_mra_rx,
		      "mra_sent %llu vs flooder %llu + A %llu",
		      (unsigned long long)mra_tx, (unsigned long long)res.mra,
		      (unsigned long long)a_mra_rx);
		CHECK(mra_tx >= held, "mra_sent %llu < req_held %llu",
		      (unsigned long long)mra_tx, (unsigned long long)held);
		/* Every flood REQ got exactly one final answer. */
		CHECK(res.rej == count, "flooder got %llu REJs for %llu REQs",
		      (unsigned long long)res.rej, (unsigned long long)count);
		CHECK(res.rej_other == 0, "other REJ reasons");
	}
	/* Timewaits of 2 x 2^8 x 4.096 us; 60 s only guards a hang. */
	CHECK(rb_wait_drained(mb, 1, 1, 60000), "B keeps state");
	CHECK(rb_wait_drained(ma, 0, 0, 60000), "A keeps state");
	cmc_destroy_id(listener);
	cmc_close(a);
	cmc_close(b);
	rb_pair_stop(ma, mb);
	printf("rb_flood: PASS\n");
	return 0;
}
