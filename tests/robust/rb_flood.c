// SPDX-License-Identifier: MIT
/*
 * REQ flood (issue 8, item 3).
 *
 * Daemon B (node 2) runs with --max-held RB_MAX_HELD (default 1024); a
 * listener on B (backlog 16) rejects every REQ but the legitimate one. A
 * flooder process, a fake node (node 3, LID 49) speaking daemon/sim_proto.h
 * to the hub itself, sends RB_FLOOD_COUNT REQs (default 600000) at
 * RB_FLOOD_RATE per second (default 12000), each with its own local comm
 * id, CA GUID and QPN, to the listener's service id, and counts what comes
 * back (MRA, REJ by reason). Meanwhile a legitimate client on daemon A
 * (node 1) connects to the same listener, retrying after REJ "no
 * resources", and must get established within RB_LEGIT_MS (20 s); then it
 * disconnects cleanly.
 *
 * Asserted:
 *  - the legitimate connection is established during the flood;
 *  - the listener never reports more than max_held held REQs nor more than
 *    its backlog in use (sampled with cmc_query_id);
 *  - B's VmRSS, sampled every 50 ms, stays below
 *      baseline + (backlog + max_held) * RB_REC_KB + RB_SLACK_KB
 *    (RB_REC_KB = 2 KiB a record, twice the ~1 KiB measured; RB_SLACK_KB =
 *    2 MiB for buffers and allocator slack). Without the limit (run with
 *    RB_MAX_HELD=1048576 RB_BOUND_HELD=1024) 200,000 REQs held 115,000
 *    records and 105 MiB, and the test fails;
 *  - the counters say what happened: the flooder's REQs all reached B
 *    (req_received), REJ "no resources" sent = req_rejected_backlog > 0
 *    and equal to what the flooder (and the legit client) got, req_held >
 *    0, MRAs sent = MRAs the flooder and A received, mad_rx >= the flood;
 *  - no hub overflow (the rate is within what hub and daemon carry);
 *  - afterwards B holds only the listener (ids 1, records 1, no held REQ)
 *    and answers normally.
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

struct flood_result {
	uint64_t sent, rx, mra, rej, rej_no_res, rej_consumer, rej_other;
	uint64_t other, eagain_waits;
	double seconds;
};

/* ---- the flooder (a child process) ------------------------------------ */

static int hub_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sim_hello h;
	struct sim_hello_ack ack;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int sz = 4 << 20;

	CHECK(fd >= 0, "socket");
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", rb_fab.hub_sock);
	CHECK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
	      "connect hub: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	memset(&h, 0, sizeof(h));
	h.hdr.type = SIM_HELLO;
	h.hdr.version = SIM_PROTO_VERSION;
	h.node = FLOOD_NODE;
	h.n_ports = 1;
	h.port[0].guid = FLOOD_GUID_BASE;
	h.port[0].lid = RB_NODE_LID(FLOOD_NODE);
	h.port[0].n_gids = 1;
	h.port[0].gids[0][0] = 0xfe;
	h.port[0].gids[0][1] = 0x80;
	for (int i = 0; i < 8; i++)
		h.port[0].gids[0][8 + i] =
			(uint8_t)(FLOOD_GUID_BASE >> (56 - 8 * i));
	CHECK(send(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h), "hello");
	CHECK(recv(fd, &ack, sizeof(ack), 0) == (ssize_t)sizeof(ack),
	      "hello ack");
	CHECK(ack.status == 0, "hub refused the flooder: %d", ack.status);
	return fd;
}

static void flood_req(uint64_t i, struct sim_mad *m)
{
	struct cm_msg msg;
	struct cm_req *r = &msg.req;
	int rc;

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
	memset(m, 0, sizeof(*m));
	m->hdr.type = SIM_MAD;
	m->hdr.version = SIM_PROTO_VERSION;
	m->port = 0;
	m->addr.lid = RB_NODE_LID(2);
	m->addr.qpn = 1;
	rc = cm_mad_encode(&msg, m->mad);
	CHECK(rc == 0, "cm_mad_encode: %d", rc);
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

static void flooder(int out, uint64_t count, uint64_t rate)
{
	struct flood_result res = { 0 };
	int fd = hub_connect();
	double t0 = rb_now_ms(), end;
	struct sim_mad m;

	/* Tell the parent we are on the fabric. */
	CHECK(write(out, "g", 1) == 1, "pipe");
	while (res.sent < count) {
		/* Token bucket: what the rate allows by now, 1 ms bursts. */
		uint64_t due =
			(uint64_t)((rb_now_ms() - t0) * (double)rate / 1e3) + 1;

		if (due > count)
			due = count;
		while (res.sent < due) {
			flood_req(res.sent, &m);
			if (send(fd, &m, sizeof(m), MSG_DONTWAIT) < 0) {
				struct pollfd p = { fd, POLLOUT, 0 };

				CHECK(errno == EAGAIN || errno == EINTR,
				      "flooder send: %s", strerror(errno));
				res.eagain_waits++;
				flood_rx(fd, &res);
				poll(&p, 1, 10);
				continue;
			}
			res.sent++;
		}
		flood_rx(fd, &res);
		CHECK(rb_now_ms() - t0 < 600000, "flood takes too long");
		usleep(500);
	}
	res.seconds = (rb_now_ms() - t0) / 1e3;
	/* Collect the answers still on their way. */
	end = rb_now_ms() + 3000;
	while (rb_now_ms() < end) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 100) > 0)
			flood_rx(fd, &res);
	}
	CHECK(write(out, &res, sizeof(res)) == (ssize_t)sizeof(res), "pipe");
	close(fd);
	_exit(0);
}

/* ---- the listener and the legitimate client (the parent) -------------- */

static struct {
	struct cmc_id *passive; /* the legit connection on B */
	struct cmc_id *active; /* on A */
	bool established, closed_a, closed_b, seen;
	unsigned long attempts, rej_no_res, rej_other, mra, conn_err;
	double t_start, t_est, t_up;
} legit;
static unsigned long flood_rejected; /* by the listener */
static uint32_t max_held_seen, max_used_seen;

static void legit_connect(struct cmc_channel *a)
{
	struct cmc_conn_param p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.service_id = SERVICE_ID;
	p.dst.family = CMC_AF_LID;
	p.dst.lid = RB_NODE_LID(2);
	p.qp_num = 0x4242;
	p.start_psn = 1;
	p.responder_resources = 1;
	p.initiator_depth = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.max_cm_retries = 8;
	p.local_cm_response_timeout = 12;
	p.remote_cm_response_timeout = 12;
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
			} else {
				CHECK(ev->type == CMC_EVENT_ESTABLISHED,
				      "legit passive got %s",
				      cmc_event_str(ev->type));
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
			continue;
		} else if (t == CMC_EVENT_REP_RECEIVED) {
			rc = cmc_rtu(ev->id, NULL, 0);
			CHECK(rc == 0, "rtu: %s", cmc_strerror(rc));
			legit.established = true;
			legit.t_est = now;
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

int main(void)
{
	uint64_t count = rb_env_ulong("RB_FLOOD_COUNT", 600000);
	uint64_t rate = rb_env_ulong("RB_FLOOD_RATE", 12000);
	unsigned long max_held = rb_env_ulong("RB_MAX_HELD", 1024);
	/* The limit the checks hold B to; only differs from B's own in a
	 * run that shows the test fails without the limit. */
	unsigned long bound_held = rb_env_ulong("RB_BOUND_HELD", max_held);
	unsigned long rec_kb = rb_env_ulong("RB_REC_KB", 2);
	unsigned long slack_kb = rb_env_ulong("RB_SLACK_KB", 2048);
	double legit_ms = (double)rb_env_ulong("RB_LEGIT_MS", 20000);
	char held_s[16];
	const char *const extra[] = { "--packet-life-time", "8", "--max-held",
				      held_s, NULL };
	struct cmc_channel *a, *b, *mb, *ma;
	struct cmc_id *listener;
	struct flood_result res;
	unsigned long base_kb, max_kb = 0, end_kb, bound_kb;
	int pfd[2], rc, status;
	bool flood_done = false;
	double t0, t_flood_end = 0, deadline;
	pid_t child;
	char go;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(held_s, sizeof(held_s), "%lu", max_held);
	rb_fabric_start("rbflood", 3);
	rb_daemon_start(1, extra);
	rb_daemon_start(2, extra);
	ma = rb_open(0, "rb-mon-a");
	mb = rb_open(1, "rb-mon-b");
	a = rb_open(0, "rb-legit");
	b = rb_open(1, "rb-listener");
	rc = cmc_create_id(b, NULL, CMC_QP_RC, &listener);
	CHECK(rc == 0, "create: %s", cmc_strerror(rc));
	rc = cmc_listen(listener, SERVICE_ID, ~0ull, BACKLOG, NULL);
	CHECK(rc == 0, "listen: %s", cmc_strerror(rc));
	base_kb = rb_vmrss_kb(rb_fab.d[1].pid);
	bound_kb = base_kb + (BACKLOG + bound_held) * rec_kb + slack_kb;
	printf("flood: %llu REQs at %llu/s; B --max-held %lu, backlog %d; "
	       "VmRSS baseline %lu KiB, bound %lu KiB\n",
	       (unsigned long long)count, (unsigned long long)rate, max_held,
	       BACKLOG, base_kb, bound_kb);
	/* The bound must be one that unbounded holding would break: a
	 * record costs well over 1 KiB (conn, held REQ, tables). */
	if (count < (bound_kb - base_kb) * 2)
		printf("note: %llu REQs are too few for the memory bound to "
		       "tell a missing limit\n",
		       (unsigned long long)count);

	CHECK(pipe(pfd) == 0, "pipe");
	child = fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		/* The parent owns the fabric: a failing flooder must not
		 * stop it (rb_fail) or signal pids it never started. */
		rb_fab.n = 0;
		rb_fab.hub_pid = 0;
		rb_fab.dir[0] = '\0';
		close(pfd[0]);
		flooder(pfd[1], count, rate);
	}
	close(pfd[1]);
	CHECK(read(pfd[0], &go, 1) == 1, "flooder did not start");
	t0 = rb_now_ms();
	deadline = t0 + (double)count / (double)rate * 1e3 + 60000;
	legit.t_start = 0;

	for (double next_sample = 0;;) {
		double now = rb_now_ms();
		struct pollfd p[3] = {
			{ .fd = cmc_fd(a), .events = POLLIN },
			{ .fd = cmc_fd(b), .events = POLLIN },
			{ .fd = pfd[0], .events = flood_done ? 0 : POLLIN },
		};

		CHECK(now < deadline, "out of time");
		/* The legit client starts a second into the flood and
		 * tries again after each refusal, 10 ms apart. */
		if (!legit.established && !legit.active && now - t0 > 1000) {
			if (!legit.t_start)
				legit.t_start = now;
			CHECK(now - legit.t_start < legit_ms,
			      "legit client not connected after %lu attempts "
			      "(REJ no resources %lu, other %lu, errors %lu)",
			      legit.attempts, legit.rej_no_res, legit.rej_other,
			      legit.conn_err);
			legit_connect(a);
		}
		if (legit.established && !flood_done && legit.t_est &&
		    now - legit.t_est > 500 && !legit.closed_a &&
		    cmc_id_num(legit.active)) {
			struct cmc_id_info info;

			/* Still up mid-flood; then close it cleanly. */
			CHECK(cmc_query_id(legit.active, &info) == 0, "query");
			if (info.state == CMC_STATE_ESTABLISHED) {
				rc = cmc_disconnect(legit.active, NULL, 0);
				CHECK(rc == 0, "disconnect: %s",
				      cmc_strerror(rc));
				legit.t_est = 0;
			}
		}
		if (now >= next_sample) {
			sample(listener, rb_fab.d[1].pid, &max_kb);
			next_sample = now + 50;
		}
		if (poll(p, 3, 2) < 0 && errno != EINTR)
			CHECK(0, "poll");
		on_b(b);
		on_a(a, rb_now_ms());
		if (!flood_done && (p[2].revents & (POLLIN | POLLHUP))) {
			CHECK(read(pfd[0], &res, sizeof(res)) ==
				      (ssize_t)sizeof(res),
			      "flooder result");
			CHECK(waitpid(child, &status, 0) == child &&
				      WIFEXITED(status) &&
				      WEXITSTATUS(status) == 0,
			      "flooder failed");
			flood_done = true;
			t_flood_end = rb_now_ms();
		}
		if (flood_done && legit.closed_a && legit.closed_b) {
			struct cmc_id_info info;

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
	printf("legit: established %.0f ms after its first try, %lu "
	       "attempt(s), REJ no resources %lu, MRA %lu; listener "
	       "rejected %lu flood REQs; drained %.1f s after the flood\n",
	       legit.t_up ? legit.t_up - legit.t_start : -1.0, legit.attempts,
	       legit.rej_no_res, legit.mra, flood_rejected,
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
	CHECK(rb_hub_stat("overflow") == 0, "the hub overflowed: lower the "
					    "rate");
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

		CHECK(req_rx >= count + legit.attempts - 0 && req_rx >= count,
		      "req_received %llu < %llu", (unsigned long long)req_rx,
		      (unsigned long long)count);
		CHECK(mad_rx >= count, "mad_rx %llu",
		      (unsigned long long)mad_rx);
		CHECK(held > 0, "no REQ was held");
		CHECK(shed > 0, "no REQ was shed: raise the rate");
		/*
		 * B's transport queues what a full hub socket cannot take
		 * and counts only an overflow of that queue (4096 MADs) as
		 * mad_tx_errors (xport_sim.c): that many answers may be
		 * missing from what the flooder and A saw, no more.
		 */
		CHECK(shed >= res.rej_no_res + legit.rej_no_res &&
			      shed <= res.rej_no_res + legit.rej_no_res + lost,
		      "req_rejected_backlog %llu vs REJ no resources seen "
		      "%llu + %lu (lost %llu)",
		      (unsigned long long)shed,
		      (unsigned long long)res.rej_no_res, legit.rej_no_res,
		      (unsigned long long)lost);
		CHECK(res.rej_consumer <= flood_rejected &&
			      flood_rejected <= res.rej_consumer + lost,
		      "flooder saw %llu consumer REJs, listener sent %lu",
		      (unsigned long long)res.rej_consumer, flood_rejected);
		CHECK(shed + flood_rejected == count + legit.rej_no_res,
		      "shed %llu + listener rejects %lu != flood %llu + legit "
		      "sheds %lu: a REQ got no answer",
		      (unsigned long long)shed, flood_rejected,
		      (unsigned long long)count, legit.rej_no_res);
		CHECK(rej_tx + lost >= shed + flood_rejected, "rej_sent %llu",
		      (unsigned long long)rej_tx);
		CHECK(mra_tx >= res.mra + a_mra_rx &&
			      mra_tx <= res.mra + a_mra_rx + lost,
		      "mra_sent %llu vs flooder %llu + A %llu (lost %llu)",
		      (unsigned long long)mra_tx, (unsigned long long)res.mra,
		      (unsigned long long)a_mra_rx, (unsigned long long)lost);
		CHECK(mra_tx + lost >= held, "mra_sent %llu < req_held %llu",
		      (unsigned long long)mra_tx, (unsigned long long)held);
		/* Every flood REQ got exactly one final answer (or it was
		 * among the lost sends). */
		CHECK(res.rej <= count && res.rej + lost >= count,
		      "flooder got %llu REJs for %llu REQs (lost %llu)",
		      (unsigned long long)res.rej, (unsigned long long)count,
		      (unsigned long long)lost);
		CHECK(res.rej_other == 0, "other REJ reasons");
		printf("B lost %llu of its %llu sends to a full hub socket "
		       "(mad_tx_errors)\n",
		       (unsigned long long)lost,
		       (unsigned long long)rb_counter(mb, "mad_tx"));
	}
	CHECK(rb_wait_drained(mb, 1, 1, 10000), "B keeps state");
	CHECK(rb_wait_drained(ma, 0, 0, 10000), "A keeps state");
	CHECK(rb_daemon_alive(0) && rb_daemon_alive(1), "a daemon died");
	cmc_destroy_id(listener);
	cmc_close(a);
	cmc_close(b);
	cmc_close(ma);
	cmc_close(mb);
	rb_fabric_stop();
	printf("rb_flood: PASS\n");
	return 0;
}
