// SPDX-License-Identifier: MIT
/*
 * Observability (issue 7, item 4): every counter the issue names moves in
 * a test that provokes it, on the simulated fabric, read back through
 * COUNTERS (GLOBAL, PORT and CLIENT scope) and cmctl.
 *
 * Daemons A (node 1, port sim1/1, LID 17) and B (node 2, port sim2/1,
 * LID 33) run with a short packet life time, --max-held 1 and
 * --admin-group adm. The phases, each with its own service id, QPNs and
 * channels:
 *   setup       a connect/disconnect: per-port sent/received per message
 *               type and mad_rx/mad_tx, connections by state, clients,
 *               the setup latency histogram (both sides), CLIENT scope;
 *   retransmit  hub loss=100 while a REQ is out: req_retransmitted;
 *   duplicate   hub dup=100 during a handshake: req_duplicates on B;
 *   backlog     backlog 1, max-held 1, three REQs: req_held, MRA,
 *               req_rejected_backlog, REJ;
 *   stale       a second REQ from the QPN of a live connection:
 *               stale_rejected, REJ reason 10 at A;
 *   fake node   node 3 speaks the hub protocol: an RTU for no connection
 *               (rtu_unexpected) and a REQ with a bad base version
 *               (mad_malformed, req_malformed) on B's port;
 *   access      clients as nobody: GLOBAL/PORT/CAPTURE -EPERM, CLIENT
 *               fine, LIST only its own ids; nobody with adm as a
 *               supplementary group, and with adm as primary group, may;
 *   cmctl       counters --port/--client --json, capture start/stop, and
 *               tshark decoding the capture (when tshark is there);
 *   port        (issue 7, item 6) cmhub takes A's port down: the open
 *               handshake fails with -ENETDOWN, the established
 *               connection's owner gets PORT_ERROR, CONNECT is refused
 *               and port_active reads 0; the port comes back and a new
 *               connection is established, without a restart.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cm_mad.h"
#include "rb_common.h"
#include "sim_proto.h"

/* A hang guard for events and counters that must come: not a speed. */
#define WAIT_MS 30000
#define NOBODY 65534
#define FAKE_NODE 3
#define FAKE_GUID 0x00f2000000000000ull
#define ADMIN_GROUP "adm"

static unsigned int da, db; /* daemon indexes */
static uint32_t next_qpn = 0x100;
static gid_t admin_gid;

/* ---- counters ----------------------------------------------------------- */

static int counter_get(struct cmc_channel *ch, enum cmc_counter_scope scope,
		       const char *dev, const char *name, uint64_t *value)
{
	static struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0;

	do {
		int n = cmc_counters(ch, scope, dev, dev ? 1 : 0, &cursor, c);

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			if (!strcmp(c[i].name, name)) {
				*value = c[i].value;
				return 0;
			}
	} while (cursor);
	return -ENOENT;
}

static uint64_t ctr(struct cmc_channel *ch, enum cmc_counter_scope scope,
		    const char *dev, const char *name)
{
	uint64_t v = 0;
	int rc = counter_get(ch, scope, dev, name, &v);

	CHECK(rc == 0, "counter %s (%s): %s", name, dev ? dev : "-",
	      cmc_strerror(rc));
	return v;
}

#define G(ch, name) ctr(ch, CMC_COUNTERS_GLOBAL, NULL, name)
#define P(ch, dev, name) ctr(ch, CMC_COUNTERS_PORT, dev, name)
#define C(ch, name) ctr(ch, CMC_COUNTERS_CLIENT, NULL, name)

/* Wait until a counter reaches at least want. */
static uint64_t wait_ctr(struct cmc_channel *ch, enum cmc_counter_scope scope,
			 const char *dev, const char *name, uint64_t want)
{
	double end = rb_now_ms() + WAIT_MS;
	uint64_t v;

	while ((v = ctr(ch, scope, dev, name)) < want && rb_now_ms() < end)
		usleep(5000);
	CHECK(v >= want, "%s is %llu, want %llu", name, (unsigned long long)v,
	      (unsigned long long)want);
	return v;
}

/* The setup histogram's buckets are cumulative (setup_us_le_N counts
 * setups of at most N us): never decreasing, and le_inf counts all. */
static uint64_t histogram_total(struct cmc_channel *ch)
{
	static struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0, prev = 0, inf = 0;

	do {
		int n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor,
				     c);

		CHECK(n >= 0, "counters: %s", cmc_strerror(n));
		for (int i = 0; i < n; i++) {
			if (strncmp(c[i].name, "setup_us_le_", 12))
				continue;
			CHECK(c[i].value >= prev, "%s %llu below %llu",
			      c[i].name, (unsigned long long)c[i].value,
			      (unsigned long long)prev);
			prev = c[i].value;
			if (!strcmp(c[i].name, "setup_us_le_inf"))
				inf = c[i].value;
		}
	} while (cursor);
	return inf;
}

/* ---- connections --------------------------------------------------------- */

/*
 * The next event of id (any id: NULL) but MRA_RECEIVED, which a peer's
 * daemon sends when its app has not answered within half our wait: on a
 * busy machine a test's app may not, so it is acked and passed over.
 */
static struct cmc_event *next_ev(struct cmc_channel *ch, struct cmc_id *id)
{
	struct cmc_event *ev = NULL;
	int rc;

	do {
		if (ev)
			CHECK(cmc_ack_event(ev) == 0, "ack MRA_RECEIVED");
		rc = id ? cmc_get_event_id(ch, id, &ev, WAIT_MS) :
			  cmc_get_event(ch, &ev, WAIT_MS);
		CHECK(rc == 0, "no event: %s", cmc_strerror(rc));
	} while (ev->type == CMC_EVENT_MRA_RECEIVED);
	return ev;
}

static void expect_ev(struct cmc_channel *ch, struct cmc_id *id,
		      enum cmc_event_type type)
{
	struct cmc_event *ev = next_ev(ch, id);

	CHECK(ev->type == type, "expected %s, got %s (status %d)",
	      cmc_event_str(type), cmc_event_str(ev->type), ev->status);
	CHECK(cmc_ack_event(ev) == 0, "ack");
}

static struct cmc_id *listen_on(struct cmc_channel *ch, uint64_t sid,
				unsigned int backlog)
{
	struct cmc_id *id;

	CHECK(cmc_create_id(ch, NULL, CMC_QP_RC, &id) == 0, "create");
	CHECK(cmc_listen(id, sid, ~0ULL, backlog, NULL) == 0, "listen");
	return id;
}

/*
 * The REQ's remote CM response timeout and the REP's target ACK delay
 * (5-bit exponents of 4.096 us). The phases use 12 and 0. phase_setup
 * reads transient states and makes them last by construction: with
 * HOLD_EXP (2^26 x 4.096 us, ~275 s, beyond the test's meson timeout),
 * B sends no MRA before half the first (so A stays in REQ_SENT until B
 * accepts) and both timewaits (2 x PLT + ACK delay, conn.c) outlast the
 * test, so the gauges are read in those states however slow the machine.
 */
#define HOLD_EXP 26
static uint8_t req_remote_timeout = 12, rep_ack_delay;

static struct cmc_id *connect_qpn(struct cmc_channel *ch, uint64_t sid,
				  uint32_t qpn)
{
	struct cmc_conn_param p;
	struct cmc_id *id;
	int rc;

	rb_conn_param(&p, sid, RB_NODE_LID(2), qpn, qpn, 4, 12);
	p.remote_cm_response_timeout = req_remote_timeout;
	CHECK(cmc_create_id(ch, NULL, CMC_QP_RC, &id) == 0, "create");
	rc = cmc_connect(id, &p);
	CHECK(rc == 0, "connect: %s", cmc_strerror(rc));
	return id;
}

static struct cmc_id *connect_to(struct cmc_channel *ch, uint64_t sid)
{
	return connect_qpn(ch, sid, next_qpn++);
}

static void accept_id(struct cmc_id *id)
{
	struct cmc_accept_param p = {
		.qp_num = next_qpn++,
		.start_psn = 0x4242,
		.responder_resources = 4,
		.initiator_depth = 4,
		.rnr_retry_count = 7,
		.target_ack_delay = rep_ack_delay,
	};

	CHECK(cmc_accept(id, &p) == 0, "accept");
}

/* From CONNECT (already sent) to ESTABLISHED on both sides. */
static struct cmc_id *complete(struct cmc_channel *a, struct cmc_channel *b,
			       struct cmc_id *aid)
{
	struct cmc_event *ev = next_ev(b, NULL);
	struct cmc_id *bid;

	CHECK(ev->type == CMC_EVENT_REQ_RECEIVED, "got %s",
	      cmc_event_str(ev->type));
	bid = ev->id;
	accept_id(bid);
	CHECK(cmc_ack_event(ev) == 0, "ack");
	ev = next_ev(a, aid);
	CHECK(ev->type == CMC_EVENT_REP_RECEIVED, "got %s",
	      cmc_event_str(ev->type));
	CHECK(cmc_rtu(aid, NULL, 0) == 0, "rtu");
	CHECK(cmc_ack_event(ev) == 0, "ack");
	expect_ev(b, bid, CMC_EVENT_ESTABLISHED);
	return bid;
}

static void disconnect(struct cmc_channel *a, struct cmc_channel *b,
		       struct cmc_id *aid, struct cmc_id *bid)
{
	struct cmc_event *ev;

	CHECK(cmc_disconnect(aid, NULL, 0) == 0, "disconnect");
	ev = next_ev(b, bid);
	CHECK(ev->type == CMC_EVENT_DREQ_RECEIVED, "got %s",
	      cmc_event_str(ev->type));
	CHECK(cmc_disconnect(bid, NULL, 0) == 0, "disconnect passive");
	CHECK(cmc_ack_event(ev) == 0, "ack");
	expect_ev(a, aid, CMC_EVENT_DREP_RECEIVED);
}

/* ---- phases -------------------------------------------------------------- */

static void phase_setup(void)
{
	struct cmc_channel *a = rb_open(da, "obs-a"), *b = rb_open(db, "obs-b");
	struct cmc_id *l = listen_on(b, 0x0b5001, 4), *aid, *bid;
	uint64_t a_req = P(a, "sim1", "req_sent");
	uint64_t a_rep = P(a, "sim1", "rep_received");
	uint64_t a_rtu = P(a, "sim1", "rtu_sent");
	uint64_t a_tx = P(a, "sim1", "mad_tx"), a_rx = P(a, "sim1", "mad_rx");
	uint64_t b_req = P(b, "sim2", "req_received");
	uint64_t b_rep = P(b, "sim2", "rep_sent");
	uint64_t b_rtu = P(b, "sim2", "rtu_received");
	uint64_t a_setup = G(a, "setup_count"), b_setup = G(b, "setup_count");

	CHECK(G(b, "clients") >= 1, "clients");
	CHECK(G(b, "conns_listen") >= 1, "conns_listen");
	req_remote_timeout = rep_ack_delay = HOLD_EXP;
	aid = connect_to(a, 0x0b5001);
	/* CONNECT's reply comes before the REQ: the daemon asks the hub's
	 * SA for the path first. The id stays in REQ_SENT until this test
	 * accepts, so the wait ends by construction. */
	wait_ctr(a, CMC_COUNTERS_GLOBAL, NULL, "conns_req_sent", 1);
	bid = complete(a, b, aid);

	CHECK(P(a, "sim1", "req_sent") == a_req + 1, "A req_sent");
	CHECK(P(a, "sim1", "rep_received") == a_rep + 1, "A rep_received");
	CHECK(P(a, "sim1", "rtu_sent") == a_rtu + 1, "A rtu_sent");
	CHECK(P(a, "sim1", "mad_tx") >= a_tx + 2, "A mad_tx");
	CHECK(P(a, "sim1", "mad_rx") >= a_rx + 1, "A mad_rx");
	CHECK(P(b, "sim2", "req_received") == b_req + 1, "B req_received");
	CHECK(P(b, "sim2", "rep_sent") == b_rep + 1, "B rep_sent");
	wait_ctr(b, CMC_COUNTERS_PORT, "sim2", "rtu_received", b_rtu + 1);
	/* The other node's port is not ours to count. */
	CHECK(counter_get(a, CMC_COUNTERS_PORT, "sim2", "mad_rx",
			  &(uint64_t){ 0 }) == -ENODEV,
	      "A knows no port sim2");

	CHECK(G(a, "conns_established") >= 1, "A conns_established");
	CHECK(G(b, "conns_established") >= 1, "B conns_established");
	/* Latency: one setup on each side, counted by le_inf. */
	CHECK(G(a, "setup_count") == a_setup + 1, "A setup_count");
	CHECK(G(b, "setup_count") == b_setup + 1, "B setup_count");
	CHECK(histogram_total(a) == G(a, "setup_count"), "A histogram");
	CHECK(histogram_total(b) == G(b, "setup_count"), "B histogram");

	/* The client's own view. */
	CHECK(C(a, "ids") == 1, "A client ids");
	CHECK(C(a, "established") == 1, "A client established");
	CHECK(C(a, "events_sent") >= 1, "A client events");
	CHECK(C(a, "requests") >= 3, "A client requests");
	CHECK(C(b, "listeners") == 1, "B client listeners");
	CHECK(C(b, "ids") == 2, "B client ids");

	req_remote_timeout = 12;
	rep_ack_delay = 0;

	disconnect(a, b, aid, bid);
	/* A's timewait lasts ~275 s (HOLD_EXP): it is in timewait now, and
	 * B too once its DREP is sent (it was, DREP_RECEIVED came). The
	 * records outlive their ids and channels; nothing later counts
	 * them, and the daemons' exit frees them. */
	CHECK(G(a, "conns_timewait") >= 1, "A conns_timewait");
	CHECK(G(b, "conns_timewait") >= 1, "B conns_timewait");
	CHECK(P(a, "sim1", "dreq_sent") >= 1, "A dreq_sent");
	CHECK(P(a, "sim1", "drep_received") >= 1, "A drep_received");
	CHECK(P(b, "sim2", "dreq_received") >= 1, "B dreq_received");
	CHECK(P(b, "sim2", "drep_sent") >= 1, "B drep_sent");
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	printf("ok: setup (per-port counts, states, latency, client scope)\n");
}

static void phase_retransmit(void)
{
	struct cmc_channel *a = rb_open(da, "obs-a"), *b = rb_open(db, "obs-b");
	struct cmc_id *l = listen_on(b, 0x0b5002, 4), *aid, *bid;
	uint64_t retx = P(a, "sim1", "req_retransmitted");
	uint64_t gretx = G(a, "req_retransmitted");

	rb_hub_set("loss=100");
	aid = connect_to(a, 0x0b5002);
	wait_ctr(a, CMC_COUNTERS_PORT, "sim1", "req_retransmitted", retx + 1);
	rb_hub_set("loss=0");
	bid = complete(a, b, aid);
	CHECK(G(a, "req_retransmitted") >= gretx + 1, "global retransmitted");
	disconnect(a, b, aid, bid);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	printf("ok: retransmit\n");
}

static void phase_duplicate(void)
{
	struct cmc_channel *a = rb_open(da, "obs-a"), *b = rb_open(db, "obs-b");
	struct cmc_id *l = listen_on(b, 0x0b5003, 4), *aid, *bid;
	uint64_t dup = P(b, "sim2", "req_duplicates");

	rb_hub_set("dup=100");
	aid = connect_to(a, 0x0b5003);
	wait_ctr(b, CMC_COUNTERS_PORT, "sim2", "req_duplicates", dup + 1);
	bid = complete(a, b, aid);
	rb_hub_set("dup=0");
	CHECK(G(b, "req_duplicates") >= dup + 1, "global duplicates");
	disconnect(a, b, aid, bid);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	printf("ok: duplicate\n");
}

static void phase_backlog(void)
{
	struct cmc_channel *a = rb_open(da, "obs-a"), *b = rb_open(db, "obs-b");
	struct cmc_id *l = listen_on(b, 0x0b5004, 1), *c1, *c2, *c3;
	struct cmc_event *req;
	uint64_t held = G(b, "req_held");
	uint64_t over = G(b, "req_rejected_backlog");
	uint64_t mra = P(b, "sim2", "mra_sent");
	uint64_t rej = P(b, "sim2", "rej_sent");
	struct cmc_event *ev;

	c1 = connect_to(a, 0x0b5004);
	req = next_ev(b, NULL); /* c1's REQ takes the one credit */
	CHECK(req->type == CMC_EVENT_REQ_RECEIVED, "got %s",
	      cmc_event_str(req->type));
	c2 = connect_to(a, 0x0b5004);
	wait_ctr(b, CMC_COUNTERS_GLOBAL, NULL, "req_held", held + 1);
	c3 = connect_to(a, 0x0b5004);
	wait_ctr(b, CMC_COUNTERS_GLOBAL, NULL, "req_rejected_backlog",
		 over + 1);
	ev = next_ev(a, c3);
	CHECK(ev->type == CMC_EVENT_REJ_RECEIVED &&
		      ev->u.rej.reason == CM_REJ_NO_RESOURCES,
	      "c3: %s", cmc_event_str(ev->type));
	cmc_ack_event(ev);
	CHECK(P(b, "sim2", "mra_sent") >= mra + 1, "mra_sent");
	CHECK(P(b, "sim2", "rej_sent") >= rej + 1, "rej_sent");
	wait_ctr(a, CMC_COUNTERS_PORT, "sim1", "mra_received", 1);
	(void)c1;
	(void)c2;
	cmc_ack_event(req);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	printf("ok: backlog holds and overflows\n");
}

static void phase_stale(void)
{
	struct cmc_channel *a = rb_open(da, "obs-a"), *b = rb_open(db, "obs-b");
	struct cmc_id *l = listen_on(b, 0x0b5005, 4), *aid, *again;
	uint64_t stale = G(b, "stale_rejected");
	uint32_t qpn = next_qpn++;
	struct cmc_event *ev;

	aid = connect_qpn(a, 0x0b5005, qpn);
	complete(a, b, aid);
	/* The same QP asks again while B still holds its connection. */
	again = connect_qpn(a, 0x0b5005, qpn);
	ev = next_ev(a, again);
	CHECK(ev->type == CMC_EVENT_REJ_RECEIVED &&
		      ev->u.rej.reason == CM_REJ_STALE_CONN,
	      "stale REQ: %s reason %u", cmc_event_str(ev->type),
	      ev->type == CMC_EVENT_REJ_RECEIVED ? ev->u.rej.reason : 0);
	cmc_ack_event(ev);
	CHECK(G(b, "stale_rejected") == stale + 1, "stale_rejected");
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	printf("ok: stale REJ\n");
}

/* msg from the fake node to B, its base version broken when corrupt. */
static void fake_send(int fd, const struct cm_msg *msg, bool corrupt)
{
	struct sim_mad m;

	rb_fake_mad(&m, msg, RB_NODE_LID(2));
	if (corrupt)
		m.mad[0] = 2; /* base version 2: not a MAD we decode */
	CHECK(send(fd, &m, sizeof(m), 0) == (ssize_t)sizeof(m), "send");
}

static void phase_fake_node(void)
{
	struct cmc_channel *b = rb_open(db, "obs-b");
	uint64_t unexp = P(b, "sim2", "rtu_unexpected");
	uint64_t bad = P(b, "sim2", "mad_malformed");
	uint64_t bad_req = P(b, "sim2", "req_malformed");
	uint64_t gbad = G(b, "req_malformed");
	int fd = rb_fake_node(FAKE_NODE, FAKE_GUID, 0);
	struct cm_msg msg;

	cm_msg_init(&msg, CM_MSG_RTU, 0x77);
	msg.rtu.local_comm_id = 0x12345678;
	msg.rtu.remote_comm_id = 0x9abcdef0;
	fake_send(fd, &msg, false);
	wait_ctr(b, CMC_COUNTERS_PORT, "sim2", "rtu_unexpected", unexp + 1);

	cm_msg_init(&msg, CM_MSG_REQ, 0x78);
	msg.req.local_comm_id = 0x1111;
	msg.req.service_id = 0x0b5006;
	msg.req.local_ca_guid = FAKE_GUID;
	msg.req.local_qpn = 0x42;
	msg.req.transport_type = CM_TRANSPORT_RC;
	msg.req.pkey = 0xffff;
	msg.req.path_mtu = CM_MTU_1024;
	msg.req.primary_local_lid = RB_NODE_LID(FAKE_NODE);
	msg.req.primary_remote_lid = RB_NODE_LID(2);
	msg.req.primary_subnet_local = 1;
	fake_send(fd, &msg, true);
	wait_ctr(b, CMC_COUNTERS_PORT, "sim2", "mad_malformed", bad + 1);
	CHECK(P(b, "sim2", "req_malformed") == bad_req + 1, "req_malformed");
	CHECK(G(b, "req_malformed") == gbad + 1, "global req_malformed");
	close(fd);
	cmc_close(b);
	printf("ok: unexpected and malformed (fake node)\n");
}

/*
 * A client process as nobody: kind 0 plain, 1 with the admin group as a
 * supplementary group, 2 with it as primary group. Exits 0 when what it
 * may and may not do is as documented; 'others' ids of other clients
 * exist on the daemon.
 */
static int as_nobody(int kind)
{
	bool admin = kind != 0;
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	struct cmc_channel *ch;
	struct cmc_id *id;
	uint64_t cursor = 0, v;
	int n, rc, listed = 0;

	if (setgroups(kind == 1 ? 1 : 0, &admin_gid) ||
	    setgid(kind == 2 ? admin_gid : NOBODY) || setuid(NOBODY)) {
		perror("drop privileges");
		return 10;
	}
	rc = cmc_open(rb_fab.d[da].sock, "obs-nobody", &ch);
	if (rc) {
		fprintf(stderr, "nobody: open: %s\n", cmc_strerror(rc));
		return 11;
	}
	if (cmc_create_id(ch, NULL, CMC_QP_RC, &id))
		return 12;
	rc = counter_get(ch, CMC_COUNTERS_GLOBAL, NULL, "mad_rx", &v);
	if (admin ? rc != 0 : rc != -EPERM) {
		fprintf(stderr, "kind %d: GLOBAL: %d\n", kind, rc);
		return 13;
	}
	rc = counter_get(ch, CMC_COUNTERS_PORT, "sim1", "mad_rx", &v);
	if (admin ? rc != 0 : rc != -EPERM) {
		fprintf(stderr, "kind %d: PORT: %d\n", kind, rc);
		return 14;
	}
	if (counter_get(ch, CMC_COUNTERS_CLIENT, NULL, "ids", &v) || v != 1) {
		fprintf(stderr, "kind %d: CLIENT ids\n", kind);
		return 15;
	}
	if (!admin && cmc_capture(ch, "/tmp/obs-nobody.pcap") != -EPERM) {
		fprintf(stderr, "kind %d: CAPTURE not refused\n", kind);
		return 16;
	}
	do {
		n = cmc_list(ch, CMC_LIST_ALL, &cursor, e);
		if (n < 0)
			return 17;
		for (int i = 0; i < n; i++) {
			if (!admin && e[i].owner_uid != NOBODY)
				return 18;
			listed++;
		}
	} while (cursor);
	if (admin ? listed < 2 : listed != 1) {
		fprintf(stderr, "kind %d: listed %d ids\n", kind, listed);
		return 19;
	}
	cmc_close(ch);
	return 0;
}

static void phase_access(void)
{
	struct cmc_channel *a = rb_open(da, "obs-root");
	struct cmc_id *l = listen_on(a, 0x0b5007, 1);
	struct group *g = getgrnam(ADMIN_GROUP);

	CHECK(g != NULL, "group %s", ADMIN_GROUP);
	admin_gid = g->gr_gid;
	/* The socket's directory is mkdtemp's 0700. */
	CHECK(chmod(rb_fab.dir, 0755) == 0, "chmod");
	for (int kind = 0; kind < 3; kind++) {
		pid_t pid = fork();
		int status;

		CHECK(pid >= 0, "fork");
		if (pid == 0)
			_exit(as_nobody(kind));
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "nobody kind %d: status %d", kind, status);
	}
	cmc_destroy_id(l);
	cmc_close(a);
	printf("ok: access (nobody refused; adm supplementary and primary "
	       "allowed)\n");
}

/* ---- cmctl --------------------------------------------------------------- */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	CHECK(rc == 0, "'%s' exited %d", cmd, rc);
}

static off_t file_size(const char *path)
{
	struct stat st;

	CHECK(stat(path, &st) == 0, "stat %s", path);
	return st.st_size;
}

static void phase_cmctl(void)
{
	const char *cmctl = getenv("CMCTL");
	const char *sock = rb_fab.d[da].sock, *dir = rb_fab.dir;
	struct cmc_channel *a, *b;
	struct cmc_id *l, *aid, *bid;
	char pcap[160];
	off_t size;

	CHECK(cmctl != NULL, "CMCTL names cmctl");
	sh("%s -s %s --json counters --port sim1:1 >%s/port.json", cmctl, sock,
	   dir);
	sh("grep -q '\"req_sent\": [1-9]' %s/port.json", dir);
	sh("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "
	   "%s/port.json",
	   dir);
	sh("%s -s %s counters --client | grep -q '^requests '", cmctl, sock);
	sh("%s -s %s --json counters | grep -q '\"setup_us_le_inf\"'", cmctl,
	   sock);
	sh("! %s -s %s counters --port nosuch:1 2>/dev/null", cmctl, sock);
	/* The daemon creates the file: a directory it lacks fails. */
	sh("! %s -s %s capture start %s/nosuch/x.pcap 2>/dev/null", cmctl, sock,
	   dir);

	snprintf(pcap, sizeof(pcap), "%s/ctl.pcap", dir);
	sh("%s -s %s --json capture start %s | grep -q started", cmctl, sock,
	   pcap);
	a = rb_open(da, "obs-a");
	b = rb_open(db, "obs-b");
	/* The daemon takes absolute paths only. */
	CHECK(cmc_capture(a, "relative.pcap") == -EINVAL, "relative path");
	l = listen_on(b, 0x0b5008, 4);
	aid = connect_to(a, 0x0b5008);
	bid = complete(a, b, aid);
	disconnect(a, b, aid, bid);
	CHECK(G(a, "capture_active") == 1, "capture_active");
	sh("%s -s %s capture stop | grep -q stopped", cmctl, sock);
	CHECK(G(a, "capture_active") == 0, "capture stopped");
	size = file_size(pcap);
	CHECK(size > 24, "capture holds records");
	/* Nothing more after stop (fresh channels: the old ids' timewait
	 * events are not of interest). */
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	a = rb_open(da, "obs-a");
	b = rb_open(db, "obs-b");
	l = listen_on(b, 0x0b5008, 4);
	aid = connect_to(a, 0x0b5008);
	bid = complete(a, b, aid);
	CHECK(file_size(pcap) == size, "capture grew after stop");
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	if (system("command -v tshark >/dev/null 2>&1")) {
		printf("ok: cmctl (tshark missing: capture not decoded)\n");
		return;
	}
	sh("WIRESHARK_CONFIG_DIR=%s tshark -o "
	   "'uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\","
	   "\"0\",\"\"' -r %s -T fields -e _ws.col.Info >%s/ctl.txt "
	   "2>%s/tshark.err",
	   dir, pcap, dir, dir);
	sh("cat %s/ctl.txt", dir);
	sh("grep -q ConnectRequest %s/ctl.txt", dir);
	sh("grep -q ConnectReply %s/ctl.txt", dir);
	sh("grep -q ReadyToUse %s/ctl.txt", dir);
	sh("grep -q DisconnectRequest %s/ctl.txt", dir);
	sh("grep -q DisconnectReply %s/ctl.txt", dir);
	sh("test $(wc -l <%s/ctl.txt) -eq 5", dir);
	printf("ok: cmctl (counters, capture start/stop, tshark decodes)\n");
}

static void hub_port(const char *how)
{
	sh("timeout 10 %s --ctl %s port 1 0 %s >/dev/null", getenv("CMHUB"),
	   rb_fab.hub_sock, how);
}

static void expect_status(struct cmc_channel *ch, struct cmc_id *id,
			  enum cmc_event_type type, int status)
{
	struct cmc_event *ev = next_ev(ch, id);

	CHECK(ev->type == type && ev->status == status,
	      "expected %s %d, got %s %d", cmc_event_str(type), status,
	      cmc_event_str(ev->type), ev->status);
	CHECK(cmc_ack_event(ev) == 0, "ack");
}

static void phase_port(void)
{
	struct cmc_channel *a = rb_open(da, "obs-a"), *b = rb_open(db, "obs-b");
	struct cmc_id *l = listen_on(b, 0x0b5009, 4), *est, *open, *late;
	uint64_t downs = G(a, "port_down"), events = G(a, "port_events");
	struct cmc_conn_param p;
	struct cmc_event *ev;
	int rc;

	est = connect_to(a, 0x0b5009);
	complete(a, b, est);
	/* A second handshake, left open: B holds its REQ unanswered. */
	open = connect_to(a, 0x0b5009);
	ev = next_ev(b, NULL);
	CHECK(ev->type == CMC_EVENT_REQ_RECEIVED, "got %s",
	      cmc_event_str(ev->type));

	hub_port("down");
	expect_status(a, open, CMC_EVENT_CONNECT_ERROR, -ENETDOWN);
	expect_status(a, est, CMC_EVENT_PORT_ERROR, -ENETDOWN);
	CHECK(G(a, "port_down") == downs + 1, "port_down");
	CHECK(G(a, "port_down_ids") >= 2, "port_down_ids");
	CHECK(G(a, "port_events") == events + 1, "port_events");
	CHECK(P(a, "sim1", "port_active") == 0, "port_active while down");
	/* No port to reach B from now. */
	memset(&p, 0, sizeof(p));
	p.service_id = 0x0b5009;
	p.dst.family = CMC_AF_LID;
	p.dst.lid = RB_NODE_LID(2);
	p.qp_num = next_qpn++;
	CHECK(cmc_create_id(a, NULL, CMC_QP_RC, &late) == 0, "create");
	rc = cmc_connect(late, &p);
	CHECK(rc < 0, "connect on a down port: %d", rc);
	cmc_destroy_id(late);

	hub_port("up");
	wait_ctr(a, CMC_COUNTERS_PORT, "sim1", "port_active", 1);
	CHECK(G(a, "port_events") == events + 2, "port_events after up");
	cmc_ack_event(ev);
	cmc_close(b);
	cmc_close(a);
	/* Served again, same daemon. */
	a = rb_open(da, "obs-a");
	b = rb_open(db, "obs-b");
	l = listen_on(b, 0x0b500a, 4);
	est = connect_to(a, 0x0b500a);
	complete(a, b, est);
	cmc_destroy_id(l);
	cmc_close(a);
	cmc_close(b);
	printf("ok: port down fails handshakes and tells owners; port up "
	       "serves again (connect rc while down: %d)\n",
	       rc);
}

int main(void)
{
	static const char *const args[] = {
		"--packet-life-time", "8",	   "--max-held", "1",
		"--admin-group",      ADMIN_GROUP, NULL
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!getgrnam(ADMIN_GROUP) || geteuid() != 0) {
		printf("SKIP: needs root and a group '%s'\n", ADMIN_GROUP);
		return 77;
	}
	rb_fabric_start("obs", 7);
	da = rb_daemon_start(1, args);
	db = rb_daemon_start(2, args);
	phase_setup();
	phase_retransmit();
	phase_duplicate();
	phase_backlog();
	phase_stale();
	phase_fake_node();
	phase_access();
	phase_cmctl();
	phase_port();
	CHECK(rb_daemon_alive(da) && rb_daemon_alive(db), "daemons alive");
	rb_fabric_stop();
	printf("PASS\n");
	return 0;
}
