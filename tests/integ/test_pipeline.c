// SPDX-License-Identifier: MIT
/*
 * Pipelining end to end (proto/cmp.h, "Pipelining"): raw cmp clients,
 * built with proto/cmp.c alone, talking to real daemons on the simulated
 * fabric. A cmhub process and three cmd daemons: A (node 1) and B (node 2)
 * with the defaults, C (node 3) with --max-queued 64 --max-ids 16, small
 * enough that the limits are reached in a few requests.
 *
 * Covered: NOREPLY successes send nothing (the next datagram is the reply
 * of the next request that wants one); NOREPLY failures are answered with
 * their seq, status and the id they named; NOREPLY where the protocol
 * forbids it is refused; CONNECT with id 0 creates its id, names it in the
 * reply and sends that reply before any event of the id, and when its
 * connect step fails leaves nothing behind (ids, the per-client limit);
 * a burst of 200 such CONNECTs sent back to back is served completely by
 * a raw listener that answers with NOREPLY ACCEPT and ACK_EVENT; and a
 * client that pipelines thousands of requests while reading slowly is
 * held back (its requests are left unread) instead of being dropped.
 *
 * No test sleeps to synchronise: every wait is for a datagram or a
 * counter, bounded by WAIT_MS only to turn a hang into a failure.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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

#include "cmp.h"
#include "sim_harness.h"

#define NODE_B_LID 33 /* node 2, port 1: daemon/xport_sim.c */
#define NODE_C_MAX_IDS 16
#define NODE_C_MAX_QUEUED 64
#define WAIT_MS 20000 /* a hang, not a slow machine */
#define BURST 200
#define FLOOD 3000
#define SID_BURST 0x0000000070697065ull /* "pipe" */
#define SID_ACK 0x0000000070697067ull
#define SID_HANDOFF 0x0000000070697068ull
#define SID_EXPIRE 0x0000000070697069ull
#define SID_LISTEN 0x0000000070697066ull

static const char *sock_a, *sock_b, *sock_c;

/* ---- processes (sim_harness.c) ---------------------------------------- */

static int group_setup(void **state)
{
	static const char *const small[] = { "--max-queued",
					     SIM_STR(NODE_C_MAX_QUEUED),
					     "--max-ids",
					     SIM_STR(NODE_C_MAX_IDS),
					     "--resume-timeout",
					     "1",
					     NULL };
	const char *const *const extra[] = { NULL, NULL, small };

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	if (sim_fabric_start("pipe", 7, 3, extra))
		return -1;
	sock_a = sim_fab.sock[0];
	sock_b = sim_fab.sock[1];
	sock_c = sim_fab.sock[2];
	return 0;
}

/* ---- a raw cmp client ------------------------------------------------- */

/*
 * One connection to a daemon. Datagrams read while a send waited for room
 * (a pipelining client must read then, or both sides wait on each other)
 * are kept in order in the inbox, and raw_next() returns them first.
 */
struct raw {
	int fd;
	uint32_t seq;
	struct cmp_msg **inbox;
	size_t head, tail, cap;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void inbox_push(struct raw *r, const struct cmp_msg *m)
{
	if (r->tail == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->inbox = realloc(r->inbox, r->cap * sizeof(*r->inbox));
		assert_non_null(r->inbox);
	}
	r->inbox[r->tail] = malloc(sizeof(*m));
	assert_non_null(r->inbox[r->tail]);
	*r->inbox[r->tail++] = *m;
}

/* Read one datagram if one is there (ms: how long to wait for it).
 * Returns 1 with *m, 0 when none came; fails on EOF or garbage. */
static int raw_read(struct raw *r, struct cmp_msg *m, int ms)
{
	static uint8_t buf[CMP_MSG_MAX];
	struct pollfd p = { r->fd, POLLIN, 0 };
	const char *why = NULL;
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recv(r->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		fail_msg("recv: %zd (%s): the daemon dropped us", n,
			 n ? strerror(errno) : "EOF");
	if (cmp_decode(buf, (size_t)n, m, &why))
		fail_msg("undecodable datagram: %s", why);
	return 1;
}

/* The next datagram, waiting at most WAIT_MS for it. */
static void raw_next(struct raw *r, struct cmp_msg *m)
{
	if (r->head < r->tail) {
		*m = *r->inbox[r->head];
		free(r->inbox[r->head++]);
		return;
	}
	if (!raw_read(r, m, WAIT_MS))
		fail_msg("nothing from the daemon in %d ms", WAIT_MS);
}

/* The next datagram if one is there, inbox first: 1 with *m, else 0. */
static int raw_poll_next(struct raw *r, struct cmp_msg *m)
{
	if (r->head < r->tail) {
		raw_next(r, m);
		return 1;
	}
	return raw_read(r, m, 0);
}

/*
 * Send the n bytes of an encoded request. A full socket is waited out
 * while reading (into the inbox): the daemon stops reading a client whose
 * messages pile up unread, so a client that only sent would wait forever.
 */
static void raw_send_bytes(struct raw *r, const uint8_t *buf, size_t n)
{
	double end = now_ms() + WAIT_MS;

	while (send(r->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		struct pollfd p = { r->fd, POLLIN | POLLOUT, 0 };
		struct cmp_msg in;

		if (errno != EAGAIN)
			fail_msg("send: %s", strerror(errno));
		if (now_ms() > end)
			fail_msg("socket full for %d ms", WAIT_MS);
		poll(&p, 1, 1000);
		while (raw_read(r, &in, 0))
			inbox_push(r, &in);
	}
}

/* Encode and send m, numbering it; returns its seq. */
static uint32_t raw_send(struct raw *r, struct cmp_msg *m)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n;

	if (m->hdr.type != CMP_TYPE_HELLO)
		m->hdr.seq = ++r->seq;
	n = cmp_encode(m, buf, sizeof(buf));
	assert_true(n > 0);
	raw_send_bytes(r, buf, (size_t)n);
	return m->hdr.seq;
}

/* Send the bytes of m with header flags set (the encoder would refuse
 * some of them); returns its seq. */
static uint32_t raw_send_flags(struct raw *r, struct cmp_msg *m, uint16_t flags)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n;

	m->hdr.seq = ++r->seq;
	m->hdr.flags = 0;
	n = cmp_encode(m, buf, sizeof(buf));
	assert_true(n > 0);
	((struct cmp_hdr *)(void *)buf)->flags = flags;
	raw_send_bytes(r, buf, (size_t)n);
	return m->hdr.seq;
}

static void raw_open(struct raw *r, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct cmp_msg m;

	memset(r, 0, sizeof(*r));
	r->seq = 1000;
	r->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(r->fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	assert_int_equal(connect(r->fd, (struct sockaddr *)&sun, sizeof(sun)),
			 0);
	cmp_msg_init(&m, CMP_TYPE_HELLO, 1);
	m.hello.min_version = CMP_VERSION_MIN;
	m.hello.max_version = CMP_VERSION_MAX;
	snprintf(m.hello.name, sizeof(m.hello.name), "test_pipeline");
	raw_send(r, &m);
	raw_next(r, &m);
	assert_int_equal(m.hdr.type, CMP_TYPE_HELLO_REPLY);
	assert_int_equal(m.hello_reply.status, 0);
}

static void raw_close(struct raw *r)
{
	while (r->head < r->tail)
		free(r->inbox[r->head++]);
	free(r->inbox);
	close(r->fd);
	r->fd = -1;
}

/* The next datagram must be the reply to (type, seq); returns it. */
static void expect(struct raw *r, enum cmp_type type, uint32_t seq, int status,
		   struct cmp_msg *m)
{
	raw_next(r, m);
	if (m->hdr.type != cmp_reply_type(type) || m->hdr.seq != seq ||
	    m->reply.status != status)
		fail_msg("got %s seq %u status %d, want %s seq %u status %d",
			 cmp_type_name(m->hdr.type), m->hdr.seq,
			 m->reply.status, cmp_type_name(cmp_reply_type(type)),
			 seq, status);
}

/* As expect(), for a plain reply, which must also name id. */
static void expect_id(struct raw *r, enum cmp_type type, uint32_t seq,
		      int status, uint32_t id)
{
	struct cmp_msg m;

	expect(r, type, seq, status, &m);
	if (m.reply.id != id)
		fail_msg("%s seq %u names id %u, want %u",
			 cmp_type_name(m.hdr.type), seq, m.reply.id, id);
}

static void req(struct cmp_msg *m, enum cmp_type type, uint32_t id)
{
	cmp_msg_init(m, type, 0);
	memcpy(m->body, &id, sizeof(id)); /* every id request starts so */
}

static uint32_t create_id(struct raw *r, uint64_t context)
{
	struct cmp_msg m;
	uint32_t seq;

	cmp_msg_init(&m, CMP_TYPE_CREATE_ID, 0);
	m.create_id.qp_type = CMP_QP_TYPE_RC;
	m.create_id.context = context;
	seq = raw_send(r, &m);
	expect(r, CMP_TYPE_CREATE_ID, seq, 0, &m);
	assert_int_not_equal(m.create_id_reply.id, CMP_ID_NONE);
	return m.create_id_reply.id;
}

/* A GLOBAL counter by name, read with COUNTERS batches. */
static uint64_t counter(struct raw *r, const char *name)
{
	struct cmp_msg m;
	uint64_t cursor = 0;

	do {
		uint32_t seq;

		cmp_msg_init(&m, CMP_TYPE_COUNTERS, 0);
		m.counters.scope = CMP_COUNTER_SCOPE_GLOBAL;
		m.counters.cursor = cursor;
		seq = raw_send(r, &m);
		expect(r, CMP_TYPE_COUNTERS, seq, 0, &m);
		for (uint32_t i = 0; i < m.counters_reply.count; i++)
			if (!strcmp(m.counters_reply.entries[i].name, name))
				return m.counters_reply.entries[i].value;
		cursor = m.counters_reply.next_cursor;
	} while (cursor);
	fail_msg("no counter %s", name);
	return 0;
}

/* Wait until a counter of the daemon r talks to reaches want. */
static void wait_counter(struct raw *r, const char *name, uint64_t want)
{
	double end = now_ms() + WAIT_MS;
	uint64_t v;

	while ((v = counter(r, name)) != want) {
		if (now_ms() > end)
			fail_msg("%s is %llu, want %llu", name,
				 (unsigned long long)v,
				 (unsigned long long)want);
		usleep(10000); /* polling a counter; nothing to wait on */
	}
}

/* The ids LIST shows of this client's (by our pid: root sees all). */
static unsigned int own_ids(struct raw *r)
{
	struct cmp_msg m;
	uint64_t cursor = 0;
	unsigned int n = 0;

	do {
		uint32_t seq;

		cmp_msg_init(&m, CMP_TYPE_LIST, 0);
		m.list.filter = CMP_LIST_FILTER_ALL;
		m.list.cursor = cursor;
		seq = raw_send(r, &m);
		expect(r, CMP_TYPE_LIST, seq, 0, &m);
		for (uint32_t i = 0; i < m.list_reply.count; i++)
			n += m.list_reply.entries[i].owner_pid ==
			     (uint32_t)getpid();
		cursor = m.list_reply.next_cursor;
	} while (cursor);
	return n;
}

static void connect_body(struct cmp_msg *m, uint32_t id, uint32_t qpn,
			 uint64_t sid)
{
	req(m, CMP_TYPE_CONNECT, id);
	m->connect.local_qpn = qpn;
	m->connect.start_psn = qpn;
	m->connect.responder_resources = 1;
	m->connect.initiator_depth = 1;
	m->connect.retry_count = 7;
	m->connect.rnr_retry_count = 7;
	m->connect.max_cm_retries = 15;
	/* 2^18 * 4.096 us, about a second: a loaded machine is no loss. */
	m->connect.local_cm_response_timeout = 18;
	m->connect.remote_cm_response_timeout = 18;
	m->connect.service_id = sid;
	m->connect.dst.family = CMP_AF_LID;
	m->connect.dst.lid = NODE_B_LID;
	if (id == CMP_ID_NONE)
		m->connect.qp_type = CMP_QP_TYPE_RC;
}

/* ---- the tests -------------------------------------------------------- */

/*
 * NOREPLY successes send nothing: after three of them (two SET_CONTEXT and
 * a LISTEN) the next datagram is QUERY_ID's reply, and it shows they were
 * done. The server counts each omitted reply.
 */
static void test_noreply_success_is_silent(void **state)
{
	struct raw r;
	struct cmp_msg m;
	uint32_t x, y, seq;
	uint64_t omitted;

	(void)state;
	raw_open(&r, sock_a);
	omitted = counter(&r, "client_replies_omitted");
	x = create_id(&r, 1);
	y = create_id(&r, 2);
	req(&m, CMP_TYPE_SET_CONTEXT, x);
	m.set_context.context = 0x1111;
	raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	req(&m, CMP_TYPE_SET_CONTEXT, x);
	m.set_context.context = 0x2222;
	raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	req(&m, CMP_TYPE_LISTEN, y);
	m.listen.backlog = 4;
	m.listen.service_id = SID_LISTEN;
	m.listen.service_mask = ~0ull;
	raw_send_flags(&r, &m, CMP_HDR_NOREPLY);

	req(&m, CMP_TYPE_QUERY_ID, x);
	seq = raw_send(&r, &m);
	expect(&r, CMP_TYPE_QUERY_ID, seq, 0, &m);
	assert_true(m.query_id_reply.info.context == 0x2222);
	req(&m, CMP_TYPE_QUERY_ID, y);
	seq = raw_send(&r, &m);
	expect(&r, CMP_TYPE_QUERY_ID, seq, 0, &m);
	assert_int_equal(m.query_id_reply.info.state, CMP_STATE_LISTEN);
	assert_int_equal(counter(&r, "client_replies_omitted"), omitted + 3);

	/* A plain reply without NOREPLY names its id too. */
	req(&m, CMP_TYPE_DESTROY_ID, y);
	seq = raw_send(&r, &m);
	expect_id(&r, CMP_TYPE_DESTROY_ID, seq, 0, y);
	raw_close(&r);
}

/* A failing NOREPLY request is answered: its seq, its status, its id. */
static void test_noreply_failure_is_answered(void **state)
{
	struct raw r;
	struct cmp_msg m;
	uint32_t x, s_rtu, s_destroy, s_ack, s_ctx, s_query;

	(void)state;
	raw_open(&r, sock_a);
	x = create_id(&r, 7);
	req(&m, CMP_TYPE_RTU, x); /* an IDLE id has nothing to RTU */
	s_rtu = raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	req(&m, CMP_TYPE_DESTROY_ID, 0x7ffffff0); /* no such id */
	s_destroy = raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	req(&m, CMP_TYPE_SET_CONTEXT, x); /* succeeds: silent */
	m.set_context.context = 0x77;
	s_ctx = raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	req(&m, CMP_TYPE_ACK_EVENT, x); /* no event to acknowledge */
	m.ack_event.seq = 5;
	s_ack = raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	req(&m, CMP_TYPE_QUERY_ID, x);
	s_query = raw_send(&r, &m);

	expect_id(&r, CMP_TYPE_RTU, s_rtu, -EINVAL, x);
	expect_id(&r, CMP_TYPE_DESTROY_ID, s_destroy, -ENOENT, 0x7ffffff0);
	expect_id(&r, CMP_TYPE_ACK_EVENT, s_ack, -EINVAL, x);
	expect(&r, CMP_TYPE_QUERY_ID, s_query, 0, &m);
	assert_true(m.query_id_reply.info.context == 0x77);
	(void)s_ctx;
	raw_close(&r);
}

/*
 * NOREPLY where it may not be: on requests whose reply carries results,
 * and on a CONNECT that creates its id. Refused as malformed, answered,
 * and nothing is created. A HELLO with flags is not answered at all.
 */
static void test_noreply_refused(void **state)
{
	static const enum cmp_type types[] = {
		CMP_TYPE_CREATE_ID, CMP_TYPE_QUERY_ID, CMP_TYPE_LIST,
		CMP_TYPE_COUNTERS,  CMP_TYPE_PORTS,
	};
	struct raw r, fresh;
	struct cmp_msg m;
	uint32_t x, seq;
	uint64_t ids;

	(void)state;
	raw_open(&r, sock_a);
	x = create_id(&r, 1);
	ids = counter(&r, "ids");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		/* Each a valid request but for the flag. */
		cmp_msg_init(&m, types[i], 0);
		switch (types[i]) {
		case CMP_TYPE_CREATE_ID:
			m.create_id.qp_type = CMP_QP_TYPE_RC;
			break;
		case CMP_TYPE_QUERY_ID:
			m.query_id.id = x;
			break;
		case CMP_TYPE_LIST:
			m.list.filter = CMP_LIST_FILTER_ALL;
			break;
		case CMP_TYPE_COUNTERS:
			m.counters.scope = CMP_COUNTER_SCOPE_CLIENT;
			break;
		default:
			break;
		}
		seq = raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
		expect(&r, types[i], seq, -EBADMSG, &m);
	}
	/* Unknown flag bits on a request that may carry NOREPLY. */
	req(&m, CMP_TYPE_SET_CONTEXT, x);
	seq = raw_send_flags(&r, &m, 0x0004);
	expect_id(&r, CMP_TYPE_SET_CONTEXT, seq, -EBADMSG, x);
	/* A creating CONNECT needs its reply: it names the new id. */
	connect_body(&m, CMP_ID_NONE, 0x99, SID_BURST);
	seq = raw_send_flags(&r, &m, CMP_HDR_NOREPLY);
	expect_id(&r, CMP_TYPE_CONNECT, seq, -EBADMSG, CMP_ID_NONE);
	assert_int_equal(counter(&r, "ids"), ids);

	/* HELLO with NOREPLY is malformed, and HELLO is never answered
	 * then: the next datagram is the correct HELLO's reply. */
	memset(&fresh, 0, sizeof(fresh));
	fresh.fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_a);
		assert_int_equal(
			connect(fresh.fd, (struct sockaddr *)&sun, sizeof(sun)),
			0);
	}
	cmp_msg_init(&m, CMP_TYPE_HELLO, 0);
	m.hello.min_version = m.hello.max_version = CMP_VERSION;
	raw_send_flags(&fresh, &m, CMP_HDR_NOREPLY);
	cmp_msg_init(&m, CMP_TYPE_HELLO, 0);
	m.hello.min_version = m.hello.max_version = CMP_VERSION;
	seq = raw_send_flags(&fresh, &m, 0);
	expect(&fresh, CMP_TYPE_HELLO, seq, 0, &m);
	raw_close(&fresh);
	raw_close(&r);
}

/*
 * CONNECT with id 0 whose connect step fails (no such source device):
 * the reply has the error and id 0, and nothing stays behind: LIST shows
 * no id of ours, the ids counter is back, and the failures did not use up
 * the client's --max-ids: all NODE_C_MAX_IDS ids can still be created.
 * At the limit, a creating CONNECT is refused like CREATE_ID.
 */
static void test_connect_create_failure_leaves_nothing(void **state)
{
	struct raw r, mon;
	struct cmp_msg m;
	uint64_t ids;
	uint32_t seq;

	(void)state;
	raw_open(&mon, sock_c);
	raw_open(&r, sock_c);
	ids = counter(&mon, "ids");
	for (int i = 0; i < 3 * NODE_C_MAX_IDS; i++) {
		connect_body(&m, CMP_ID_NONE, 0x100 + i, SID_BURST);
		m.connect.context = 0xc0ffee;
		m.connect.src.kind = CMP_SEL_PORT;
		snprintf(m.connect.src.dev_name, CMP_DEV_NAME_SIZE, "nosuch0");
		seq = raw_send(&r, &m);
		expect_id(&r, CMP_TYPE_CONNECT, seq, -ENODEV, CMP_ID_NONE);
	}
	assert_int_equal(own_ids(&r), 0);
	assert_int_equal(counter(&mon, "ids"), ids);
	for (int i = 0; i < NODE_C_MAX_IDS; i++)
		create_id(&r, (uint64_t)i);
	assert_int_equal(own_ids(&r), NODE_C_MAX_IDS);
	connect_body(&m, CMP_ID_NONE, 0x200, SID_BURST);
	seq = raw_send(&r, &m);
	expect_id(&r, CMP_TYPE_CONNECT, seq, -EMFILE, CMP_ID_NONE);
	cmp_msg_init(&m, CMP_TYPE_CREATE_ID, 0);
	m.create_id.qp_type = CMP_QP_TYPE_RC;
	seq = raw_send(&r, &m);
	expect(&r, CMP_TYPE_CREATE_ID, seq, -EMFILE, &m);
	assert_int_equal(counter(&mon, "ids"), ids + NODE_C_MAX_IDS);
	raw_close(&r);
	wait_counter(&mon, "ids", ids);
	raw_close(&mon);
}

/* Per connection of the burst, as each side sees it. */
struct burst_conn {
	uint32_t a_id; /* from the CONNECT reply */
	bool rep; /* A: REP_RECEIVED, RTU sent */
};

/* A's side of the burst: replies name the ids, events come after. */
static void burst_a(struct raw *a, const struct cmp_msg *m, uint32_t seq0,
		    struct burst_conn *c, unsigned int *reps)
{
	struct cmp_msg out;
	uint64_t i;

	if (m->hdr.type == CMP_TYPE_CONNECT_REPLY) {
		i = m->hdr.seq - seq0;
		if (i >= BURST || m->reply.status || !m->reply.id)
			fail_msg("CONNECT seq %u: status %d id %u", m->hdr.seq,
				 m->reply.status, m->reply.id);
		assert_int_equal(c[i].a_id, 0);
		c[i].a_id = m->reply.id;
		return;
	}
	if (m->hdr.type != CMP_TYPE_EVENT)
		fail_msg("A got %s status %d: NOREPLY success answered?",
			 cmp_type_name(m->hdr.type), m->reply.status);
	i = m->event.context - 1;
	if (i >= BURST)
		fail_msg("A: event %s with context %llu",
			 cmp_event_name(m->event.type),
			 (unsigned long long)m->event.context);
	/* The reply naming the id came first (cmp.h, "Conversation"). */
	if (c[i].a_id != m->event.id)
		fail_msg("A: %s for id %u before its CONNECT reply (%u)",
			 cmp_event_name(m->event.type), m->event.id, c[i].a_id);
	if (m->event.type == CMP_EVENT_REP_RECEIVED) {
		assert_false(c[i].rep);
		c[i].rep = true;
		(*reps)++;
		req(&out, CMP_TYPE_RTU, m->event.id);
		raw_send_flags(a, &out, CMP_HDR_NOREPLY);
	} else if (m->event.type != CMP_EVENT_MRA_RECEIVED) {
		fail_msg("A: connection %llu got %s (status %d)",
			 (unsigned long long)i, cmp_event_name(m->event.type),
			 m->event.status);
	}
	req(&out, CMP_TYPE_ACK_EVENT, m->event.id);
	out.ack_event.seq = m->hdr.seq;
	raw_send_flags(a, &out, CMP_HDR_NOREPLY);
}

/* B's listener: NOREPLY ACCEPT and ACK_EVENT for every REQ. */
static void burst_b(struct raw *b, const struct cmp_msg *m, uint32_t lid,
		    unsigned int *reqs, unsigned int *est)
{
	struct cmp_msg out;

	if (m->hdr.type != CMP_TYPE_EVENT)
		fail_msg("B got %s status %d: NOREPLY success answered?",
			 cmp_type_name(m->hdr.type), m->reply.status);
	switch (m->event.type) {
	case CMP_EVENT_REQ_RECEIVED:
		assert_int_equal(m->event.req_received.listen_id, lid);
		(*reqs)++;
		req(&out, CMP_TYPE_ACCEPT, m->event.id);
		out.accept.local_qpn = 0x10000 + *reqs;
		out.accept.start_psn = *reqs;
		out.accept.responder_resources = 1;
		out.accept.initiator_depth = 1;
		out.accept.rnr_retry_count = 7;
		raw_send_flags(b, &out, CMP_HDR_NOREPLY);
		break;
	case CMP_EVENT_ESTABLISHED:
		(*est)++;
		break;
	default:
		fail_msg("B: %s (status %d)", cmp_event_name(m->event.type),
			 m->event.status);
	}
	req(&out, CMP_TYPE_ACK_EVENT, m->event.id);
	out.ack_event.seq = m->hdr.seq;
	raw_send_flags(b, &out, CMP_HDR_NOREPLY);
}

/* The next EVENT on r, of type; its id and sequence number. */
static void next_event(struct raw *r, enum cmp_event_type type, uint32_t *id,
		       uint32_t *seq)
{
	struct cmp_msg m;

	raw_next(r, &m);
	if (m.hdr.type != CMP_TYPE_EVENT || m.event.type != type)
		fail_msg("got %s (%s), want event %s",
			 cmp_type_name(m.hdr.type),
			 m.hdr.type == CMP_TYPE_EVENT ?
				 cmp_event_name(m.event.type) :
				 "-",
			 cmp_event_name(type));
	*id = m.event.id;
	*seq = m.hdr.seq;
}

static enum cmp_state id_state(struct raw *r, uint32_t id)
{
	struct cmp_msg m;
	uint32_t seq;

	req(&m, CMP_TYPE_QUERY_ID, id);
	seq = raw_send(r, &m);
	expect(r, CMP_TYPE_QUERY_ID, seq, 0, &m);
	return (enum cmp_state)m.query_id_reply.info.state;
}

/*
 * CMP_HDR_ACK (cmp.h): an ACCEPT carrying it acknowledges the REQ_RECEIVED
 * too, so an ACK_EVENT of that event afterwards is refused; an RTU
 * carrying it when the REP_RECEIVED was already acked is refused with
 * -EINVAL and does nothing (the id stays in REP_RCVD, no ESTABLISHED on
 * B), and the same RTU without the flag then succeeds.
 */
static void test_ack_flag(void **state)
{
	struct raw a, b;
	struct cmp_msg m;
	uint32_t lid, aid, pid, ev_seq, seq, id;

	(void)state;
	raw_open(&a, sock_a);
	raw_open(&b, sock_b);
	lid = create_id(&b, 0);
	req(&m, CMP_TYPE_LISTEN, lid);
	m.listen.backlog = 4;
	m.listen.service_id = SID_ACK;
	m.listen.service_mask = ~0ull;
	seq = raw_send(&b, &m);
	expect_id(&b, CMP_TYPE_LISTEN, seq, 0, lid);

	connect_body(&m, CMP_ID_NONE, 0x2000, SID_ACK);
	m.connect.context = 1;
	seq = raw_send(&a, &m);
	expect(&a, CMP_TYPE_CONNECT, seq, 0, &m);
	aid = m.reply.id;

	next_event(&b, CMP_EVENT_REQ_RECEIVED, &pid, &ev_seq);
	req(&m, CMP_TYPE_ACCEPT, pid);
	m.accept.local_qpn = 0x3000;
	m.accept.start_psn = 1;
	m.accept.responder_resources = 1;
	m.accept.initiator_depth = 1;
	m.accept.rnr_retry_count = 7;
	seq = raw_send_flags(&b, &m, CMP_HDR_ACK);
	expect_id(&b, CMP_TYPE_ACCEPT, seq, 0, pid);
	req(&m, CMP_TYPE_ACK_EVENT, pid);
	m.ack_event.seq = ev_seq;
	seq = raw_send(&b, &m);
	expect_id(&b, CMP_TYPE_ACK_EVENT, seq, -EINVAL, pid);

	next_event(&a, CMP_EVENT_REP_RECEIVED, &id, &ev_seq);
	assert_int_equal(id, aid);
	req(&m, CMP_TYPE_ACK_EVENT, aid);
	m.ack_event.seq = ev_seq;
	seq = raw_send(&a, &m);
	expect_id(&a, CMP_TYPE_ACK_EVENT, seq, 0, aid);
	req(&m, CMP_TYPE_RTU, aid);
	seq = raw_send_flags(&a, &m, CMP_HDR_ACK);
	expect_id(&a, CMP_TYPE_RTU, seq, -EINVAL, aid);
	assert_int_equal(id_state(&a, aid), CMP_STATE_REP_RCVD);
	assert_int_equal(id_state(&b, pid), CMP_STATE_REP_SENT);
	req(&m, CMP_TYPE_RTU, aid);
	seq = raw_send(&a, &m);
	expect_id(&a, CMP_TYPE_RTU, seq, 0, aid);
	next_event(&b, CMP_EVENT_ESTABLISHED, &id, &ev_seq);
	assert_int_equal(id, pid);
	raw_close(&a);
	raw_close(&b);
}

/*
 * BURST CONNECTs with id 0, sent back to back before reading anything,
 * to a raw listener on B: each gets its id in its reply, before the id's
 * first event; B accepts, A sends the RTU, and every connection is
 * ESTABLISHED on B. Everything but the CONNECTs is sent with NOREPLY, so
 * a stray reply fails the test. Then A destroys its ids with NOREPLY and
 * both daemons forget them.
 */
static void test_connect_burst(void **state)
{
	struct burst_conn *c = calloc(BURST, sizeof(*c));
	struct raw a, b, mon_a, mon_b;
	unsigned int reps = 0, reqs = 0, est = 0;
	uint64_t ids_a, ids_b;
	uint32_t lid, seq0, seq;
	struct cmp_msg m;
	double end;

	(void)state;
	assert_non_null(c);
	raw_open(&mon_a, sock_a);
	raw_open(&mon_b, sock_b);
	ids_a = counter(&mon_a, "ids");
	ids_b = counter(&mon_b, "ids");
	raw_open(&a, sock_a);
	raw_open(&b, sock_b);
	lid = create_id(&b, 0);
	req(&m, CMP_TYPE_LISTEN, lid);
	m.listen.backlog = BURST;
	m.listen.service_id = SID_BURST;
	m.listen.service_mask = ~0ull;
	seq = raw_send(&b, &m);
	expect_id(&b, CMP_TYPE_LISTEN, seq, 0, lid);

	seq0 = a.seq + 1;
	for (unsigned int i = 0; i < BURST; i++) {
		connect_body(&m, CMP_ID_NONE, 0x1000 + i, SID_BURST);
		m.connect.context = i + 1;
		seq = raw_send(&a, &m);
		assert_int_equal(seq, seq0 + i);
	}
	end = now_ms() + WAIT_MS;
	while (reps < BURST || est < BURST) {
		struct pollfd p[2] = { { a.fd, POLLIN, 0 },
				       { b.fd, POLLIN, 0 } };

		if (now_ms() > end)
			fail_msg("after %d ms: %u REP_RECEIVED on A, %u REQs "
				 "and %u ESTABLISHED on B, of %d",
				 WAIT_MS, reps, reqs, est, BURST);
		/* The inboxes first: what a send read while it waited. */
		if (a.head == a.tail && b.head == b.tail)
			poll(p, 2, 1000);
		while (raw_poll_next(&a, &m))
			burst_a(&a, &m, seq0, c, &reps);
		while (raw_poll_next(&b, &m))
			burst_b(&b, &m, lid, &reqs, &est);
	}
	assert_int_equal(reqs, BURST);
	assert_int_equal(counter(&mon_a, "ids"), ids_a + BURST);

	/* NOREPLY DESTROY_IDs are silent too: the next datagram is the
	 * QUERY_ID's, and the id is gone. */
	for (unsigned int i = 0; i < BURST; i++) {
		req(&m, CMP_TYPE_DESTROY_ID, c[i].a_id);
		raw_send_flags(&a, &m, CMP_HDR_NOREPLY);
	}
	req(&m, CMP_TYPE_QUERY_ID, c[0].a_id);
	seq = raw_send(&a, &m);
	expect(&a, CMP_TYPE_QUERY_ID, seq, -ENOENT, &m);
	assert_int_equal(counter(&mon_a, "ids"), ids_a);
	raw_close(&a);
	raw_close(&b);
	wait_counter(&mon_b, "ids", ids_b);
	raw_close(&mon_a);
	raw_close(&mon_b);
	free(c);
}

/*
 * Back-pressure (server.c). C runs with --max-queued 64. A client sends
 * COUNTERS requests (4 KB replies) as fast as the socket takes them and
 * reads nothing until the daemon has stopped reading it (its
 * client_reads_paused counter, read through another connection, says so;
 * until then a full socket only means the daemon is busy). From then on it
 * reads at most a few replies each time a send would block: it reads, but
 * far slower than it asks. It must not be dropped, and every reply must
 * arrive, in order. (Before back-pressure, max_queued counted replies and
 * this client was dropped after 64.)
 */
static void test_backpressure_slow_reader(void **state)
{
	struct raw r, mon;
	struct cmp_msg m;
	uint64_t paused0, dropped;
	uint32_t next;
	unsigned int sent = 0, got = 0;
	uint8_t buf[CMP_MSG_MAX];
	bool paused = false;
	double end;

	(void)state;
	raw_open(&mon, sock_c);
	paused0 = counter(&mon, "client_reads_paused");
	dropped = counter(&mon, "clients_dropped");
	raw_open(&r, sock_c);
	next = r.seq + 1;
	end = now_ms() + 6 * WAIT_MS;
	while (sent < FLOOD || !paused) {
		struct pollfd p = { r.fd, POLLOUT, 0 };
		ssize_t n;

		cmp_msg_init(&m, CMP_TYPE_COUNTERS, r.seq + 1);
		m.counters.scope = CMP_COUNTER_SCOPE_GLOBAL;
		n = cmp_encode(&m, buf, sizeof(buf));
		if (send(r.fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) ==
		    n) {
			r.seq++;
			sent++;
			continue;
		}
		if (errno != EAGAIN)
			fail_msg("send after %u requests: %s", sent,
				 strerror(errno));
		if (now_ms() > end || sent > 100 * FLOOD)
			fail_msg("%u requests sent, reads %spaused", sent,
				 paused ? "" : "never ");
		if (!paused) {
			paused = counter(&mon, "client_reads_paused") > paused0;
			if (!paused)
				poll(&p, 1, 100); /* room, or look again */
			continue;
		}
		/* Full: take a few replies, then wait for room. */
		for (int k = 0; k < 4 && raw_read(&r, &m, 100); k++) {
			assert_int_equal(m.hdr.type, CMP_TYPE_COUNTERS_REPLY);
			assert_int_equal(m.hdr.seq, next);
			next++;
			got++;
		}
	}
	while (got < sent) {
		raw_next(&r, &m);
		assert_int_equal(m.hdr.type, CMP_TYPE_COUNTERS_REPLY);
		assert_int_equal(m.hdr.seq, next);
		assert_int_equal(m.counters_reply.status, 0);
		next++;
		got++;
	}
	assert_int_equal(counter(&mon, "clients_dropped"), dropped);
	print_message(
		"back-pressure: %u requests and replies, reads paused "
		"%llu times\n",
		got,
		(unsigned long long)(counter(&mon, "client_reads_paused") -
				     paused0));
	raw_close(&r);
	raw_close(&mon);
}

/* ---- handing over to a restarted daemon (cmp.h, "Restarts") ---------- */

/* SESSION: the token this connection would resume with. */
static void session_token(struct raw *r, uint8_t token[CMP_TOKEN_SIZE])
{
	struct cmp_msg m;
	uint32_t seq;

	cmp_msg_init(&m, CMP_TYPE_SESSION, 0);
	seq = raw_send(r, &m);
	expect(r, CMP_TYPE_SESSION, seq, 0, &m);
	assert_true(m.session_reply.resume_ms > 0);
	memcpy(token, m.session_reply.token, CMP_TOKEN_SIZE);
}

/* The old socket ends with EOF once the daemon has handed over; what it
 * wrote before is still there to read and must be nothing here. */
static void expect_eof(struct raw *r)
{
	uint8_t buf[CMP_MSG_MAX];
	struct pollfd p = { r->fd, POLLIN, 0 };
	ssize_t n;

	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	n = recv(r->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n != 0)
		fail_msg("want EOF on the old socket, got %zd", n);
}

/* A new connection, RESUME token: want status. */
static void resume(struct raw *r, const char *path,
		   const uint8_t token[CMP_TOKEN_SIZE], int status)
{
	struct cmp_msg m;
	uint32_t seq;

	raw_close(r);
	raw_open(r, path);
	cmp_msg_init(&m, CMP_TYPE_RESUME, 0);
	memcpy(m.resume.token, token, CMP_TOKEN_SIZE);
	seq = raw_send(r, &m);
	expect(r, CMP_TYPE_RESUME, seq, status, &m);
}

static void accept_body(struct cmp_msg *m, uint32_t id, uint32_t qpn)
{
	req(m, CMP_TYPE_ACCEPT, id);
	m->accept.local_qpn = qpn;
	m->accept.start_psn = 1;
	m->accept.responder_resources = 1;
	m->accept.initiator_depth = 1;
	m->accept.rnr_retry_count = 7;
}

/* A listener of r's on sid, backlog 4; its id. */
static uint32_t raw_listen(struct raw *r, uint64_t sid)
{
	struct cmp_msg m;
	uint32_t lid = create_id(r, 0), seq;

	req(&m, CMP_TYPE_LISTEN, lid);
	m.listen.backlog = 4;
	m.listen.service_id = sid;
	m.listen.service_mask = ~0ull;
	seq = raw_send(r, &m);
	expect_id(r, CMP_TYPE_LISTEN, seq, 0, lid);
	return lid;
}

/*
 * a connects to b's listener on sid (QPs qa and qb); b accepts and a
 * sends the RTU, both answers acking their events. *ida and *idb are the
 * two ids; returns the sequence number of b's ESTABLISHED, left unacked.
 */
static uint32_t raw_establish(struct raw *a, struct raw *b, uint64_t sid,
			      uint32_t qa, uint32_t qb, uint32_t *ida,
			      uint32_t *idb)
{
	struct cmp_msg m;
	uint32_t seq, ev_seq, id;

	connect_body(&m, CMP_ID_NONE, qa, sid);
	seq = raw_send(a, &m);
	expect(a, CMP_TYPE_CONNECT, seq, 0, &m);
	*ida = m.reply.id;
	next_event(b, CMP_EVENT_REQ_RECEIVED, idb, &ev_seq);
	accept_body(&m, *idb, qb);
	seq = raw_send_flags(b, &m, CMP_HDR_ACK);
	expect_id(b, CMP_TYPE_ACCEPT, seq, 0, *idb);
	next_event(a, CMP_EVENT_REP_RECEIVED, &id, &ev_seq);
	assert_int_equal(id, *ida);
	req(&m, CMP_TYPE_RTU, *ida);
	seq = raw_send_flags(a, &m, CMP_HDR_ACK);
	expect_id(a, CMP_TYPE_RTU, seq, 0, *ida);
	next_event(b, CMP_EVENT_ESTABLISHED, &id, &ev_seq);
	assert_int_equal(id, *idb);
	return ev_seq;
}

/*
 * Restart both daemons under two connections: one established (B's
 * ESTABLISHED still unacknowledged), one whose REQ B's client holds
 * unanswered. A stops with SIGTERM and starts again; B execs itself in
 * place (SIGUSR2). Each client resumes with its token: the ids, their
 * states and B's unacknowledged event are there; the held REQ is accepted
 * after both restarts and completes; the established connection
 * disconnects through DREQ/DREP. Nothing went out because of the
 * restarts (no REJ, no DREQ before ours), each daemon counts one restore
 * and one resumed session, and a token nobody has, or RESUME after
 * another request, is refused.
 */
static void test_handoff(void **state)
{
	uint8_t ta[CMP_TOKEN_SIZE], tb[CMP_TOKEN_SIZE], bad[CMP_TOKEN_SIZE];
	struct raw a, b, x;
	struct cmp_msg m;
	uint32_t lid, a1, a2, b1, b2, est_seq, ev_seq, seq, id;
	uint64_t rej_a, rej_b, dreq_a, dreq_b;

	(void)state;
	raw_open(&a, sock_a);
	raw_open(&b, sock_b);
	session_token(&a, ta);
	session_token(&b, tb);
	rej_a = counter(&a, "rej_sent");
	rej_b = counter(&b, "rej_sent");
	dreq_a = counter(&a, "dreq_sent");
	dreq_b = counter(&b, "dreq_sent");
	lid = raw_listen(&b, SID_HANDOFF);
	(void)lid;
	/* 1: established. */
	est_seq = raw_establish(&a, &b, SID_HANDOFF, 0x4000, 0x5000, &a1, &b1);
	/* 2: B's client holds the REQ. It asks for 2^24 * 4.096 us (about
	 * 69 s) of patience, so B's daemon has no reason to MRA it (it does
	 * at half the wait) while the test holds it through two restarts:
	 * an MRA_RECEIVED on A would come at a moment of the machine's
	 * choosing. */
	connect_body(&m, CMP_ID_NONE, 0x4001, SID_HANDOFF);
	m.connect.local_cm_response_timeout = 24;
	m.connect.remote_cm_response_timeout = 24;
	seq = raw_send(&a, &m);
	expect(&a, CMP_TYPE_CONNECT, seq, 0, &m);
	a2 = m.reply.id;
	/* ESTABLISHED of 1 is unacked: the REQ comes on its own id. */
	next_event(&b, CMP_EVENT_REQ_RECEIVED, &b2, &ev_seq);

	/* A: stop and start. */
	assert_int_equal(sim_daemon_restart(0, SIGTERM, NULL), 0);
	expect_eof(&a);
	resume(&a, sock_a, ta, 0);
	assert_int_equal(id_state(&a, a1), CMP_STATE_ESTABLISHED);
	assert_int_equal(id_state(&a, a2), CMP_STATE_REQ_SENT);
	/* B: exec in place. */
	assert_int_equal(sim_daemon_restart(1, SIGUSR2, NULL), 0);
	expect_eof(&b);
	resume(&b, sock_b, tb, 0);
	assert_int_equal(id_state(&b, b1), CMP_STATE_ESTABLISHED);
	assert_int_equal(id_state(&b, b2), CMP_STATE_REQ_RCVD);
	/* The event B's client held is acked with its old number. */
	req(&m, CMP_TYPE_ACK_EVENT, b1);
	m.ack_event.seq = est_seq;
	seq = raw_send(&b, &m);
	expect_id(&b, CMP_TYPE_ACK_EVENT, seq, 0, b1);

	/* The held REQ completes across both restarts. */
	accept_body(&m, b2, 0x5001);
	seq = raw_send_flags(&b, &m, CMP_HDR_ACK);
	expect_id(&b, CMP_TYPE_ACCEPT, seq, 0, b2);
	next_event(&a, CMP_EVENT_REP_RECEIVED, &id, &ev_seq);
	assert_int_equal(id, a2);
	req(&m, CMP_TYPE_RTU, a2);
	seq = raw_send_flags(&a, &m, CMP_HDR_ACK);
	expect_id(&a, CMP_TYPE_RTU, seq, 0, a2);
	next_event(&b, CMP_EVENT_ESTABLISHED, &id, &ev_seq);
	assert_int_equal(id, b2);

	/* 1 disconnects through DREQ/DREP. */
	req(&m, CMP_TYPE_DISCONNECT, a1);
	seq = raw_send(&a, &m);
	expect_id(&a, CMP_TYPE_DISCONNECT, seq, 0, a1);
	next_event(&b, CMP_EVENT_DREQ_RECEIVED, &id, &ev_seq);
	assert_int_equal(id, b1);
	req(&m, CMP_TYPE_DISCONNECT, b1);
	seq = raw_send_flags(&b, &m, CMP_HDR_ACK);
	expect_id(&b, CMP_TYPE_DISCONNECT, seq, 0, b1);
	next_event(&a, CMP_EVENT_DREP_RECEIVED, &id, &ev_seq);
	assert_int_equal(id, a1);
	/* B's id leaves timewait whenever it does: take that event before
	 * reading counters (A's waits behind its unacked DREP_RECEIVED). */
	next_event(&b, CMP_EVENT_TIMEWAIT_EXIT, &id, &ev_seq);
	assert_int_equal(id, b1);

	assert_int_equal(counter(&a, "rej_sent"), rej_a);
	assert_int_equal(counter(&b, "rej_sent"), rej_b);
	assert_int_equal(counter(&a, "dreq_sent"), dreq_a + 1);
	assert_int_equal(counter(&b, "dreq_sent"), dreq_b);
	assert_int_equal(counter(&a, "handoffs_restored"), 1);
	assert_int_equal(counter(&b, "handoffs_restored"), 1);
	assert_int_equal(counter(&a, "sessions_resumed"), 1);
	assert_int_equal(counter(&b, "sessions_resumed"), 1);

	/* Nobody's token; and RESUME only first. */
	memset(bad, 0x5a, sizeof(bad));
	raw_open(&x, sock_a);
	resume(&x, sock_a, bad, -ENOENT);
	create_id(&x, 0);
	cmp_msg_init(&m, CMP_TYPE_RESUME, 0);
	memcpy(m.resume.token, ta, CMP_TOKEN_SIZE);
	seq = raw_send(&x, &m);
	expect(&x, CMP_TYPE_RESUME, seq, -EINVAL, &m);
	raw_close(&x);
	raw_close(&a);
	raw_close(&b);
}

/*
 * A state file that is not one, or was damaged, is refused as a whole and
 * the daemon starts clean: it serves, holds no id, counts the refusal,
 * and a session of the state it refused cannot be resumed. C is killed
 * (SIGKILL hands nothing over) and the file written in its place: a
 * foreign file, then C's own real state with one byte flipped, then
 * truncated.
 */
static void test_handoff_refused(void **state)
{
	uint8_t tc[CMP_TOKEN_SIZE];
	static uint8_t buf[1 << 16];
	struct raw c;
	FILE *f;
	size_t n;

	(void)state;
	for (int round = 0; round < 3; round++) {
		raw_open(&c, sock_c);
		session_token(&c, tc);
		create_id(&c, 7);
		if (round == 0) {
			assert_int_equal(sim_daemon_restart(2, SIGKILL, NULL),
					 0);
			/* Killed: nothing handed over, a clean start. */
			expect_eof(&c);
			resume(&c, sock_c, tc, -ENOENT);
			assert_int_equal(own_ids(&c), 0);
			raw_close(&c);
			continue;
		}
		/* Let C write its real state, then damage it and start C
		 * on it: SIGTERM hands over, SIGKILL of the successor
		 * before it reads is not possible, so stop the successor
		 * with SIGINT (no state) and plant the damaged copy. */
		assert_int_equal(sim_daemon_restart(2, SIGTERM, NULL), 0);
		raw_close(&c);
		/* That one was restored, the real thing. */
		raw_open(&c, sock_c);
		assert_int_equal(counter(&c, "handoffs_restored"), 1);
		assert_int_equal(counter(&c, "sessions_waiting"), 1);
		raw_close(&c);
		/* The successor read and removed it; make C write it again
		 * and keep a copy. */
		kill(sim_fab.pid[2], SIGTERM);
		waitpid(sim_fab.pid[2], NULL, 0);
		f = fopen(sim_fab.state[2], "rb");
		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		assert_true(n > 64);
		if (round == 1)
			buf[n / 2] ^= 0x10; /* the CRC no longer matches */
		else
			n -= 9; /* truncated */
		f = fopen(sim_fab.state[2], "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, n, f), n);
		fclose(f);
		sim_fab.pid[2] = 0;
		assert_int_equal(sim_daemon_restart(2, 0, NULL), 0);
		raw_open(&c, sock_c);
		assert_int_equal(counter(&c, "handoffs_refused"), 1);
		assert_int_equal(own_ids(&c), 0);
		resume(&c, sock_c, tc, -ENOENT);
		raw_close(&c);
	}
	/* A foreign file in the state's place. */
	kill(sim_fab.pid[2], SIGKILL);
	waitpid(sim_fab.pid[2], NULL, 0);
	f = fopen(sim_fab.state[2], "wb");
	assert_non_null(f);
	fputs("this is not a cmd state\n", f);
	fclose(f);
	sim_fab.pid[2] = 0;
	assert_int_equal(sim_daemon_restart(2, 0, NULL), 0);
	raw_open(&c, sock_c);
	assert_int_equal(counter(&c, "handoffs_refused"), 1);
	assert_int_equal(counter(&c, "ids"), 0);
	raw_close(&c);
	assert_int_equal(access(sim_fab.state[2], F_OK), -1);
}

/*
 * A session whose client does not come back (C keeps them 1 s): its ids
 * are destroyed as for a client that went away, and only then is the
 * peer told: B's client gets DREQ_RECEIVED, C counts the session expired.
 * Before that the connection is still established on both sides.
 */
static void test_handoff_expiry(void **state)
{
	uint8_t tc[CMP_TOKEN_SIZE];
	struct raw b, c, mon;
	struct cmp_msg m;
	uint32_t lid, cid, bid, ev_seq, seq, id;
	uint64_t expired;

	(void)state;
	raw_open(&b, sock_b);
	raw_open(&c, sock_c);
	session_token(&c, tc);
	lid = raw_listen(&b, SID_EXPIRE);
	(void)lid;
	ev_seq = raw_establish(&c, &b, SID_EXPIRE, 0x6000, 0x7000, &cid, &bid);
	req(&m, CMP_TYPE_ACK_EVENT, bid);
	m.ack_event.seq = ev_seq;
	seq = raw_send(&b, &m);
	expect_id(&b, CMP_TYPE_ACK_EVENT, seq, 0, bid);

	assert_int_equal(sim_daemon_restart(2, SIGTERM, NULL), 0);
	expect_eof(&c);
	raw_close(&c);
	raw_open(&mon, sock_c);
	expired = counter(&mon, "sessions_expired");
	assert_int_equal(counter(&mon, "sessions_waiting"), 1);
	assert_int_equal(id_state(&b, bid), CMP_STATE_ESTABLISHED);
	/* C's client never resumes: after its second the DREQ comes. */
	next_event(&b, CMP_EVENT_DREQ_RECEIVED, &id, &ev_seq);
	assert_int_equal(id, bid);
	assert_int_equal(counter(&mon, "sessions_expired"), expired + 1);
	assert_int_equal(counter(&mon, "sessions_waiting"), 0);
	resume(&c, sock_c, tc, -ENOENT);
	raw_close(&c);
	raw_close(&mon);
	raw_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noreply_success_is_silent),
		cmocka_unit_test(test_noreply_failure_is_answered),
		cmocka_unit_test(test_noreply_refused),
		cmocka_unit_test(test_connect_create_failure_leaves_nothing),
		cmocka_unit_test(test_ack_flag),
		cmocka_unit_test(test_connect_burst),
		cmocka_unit_test(test_backpressure_slow_reader),
		cmocka_unit_test(test_handoff),
		cmocka_unit_test(test_handoff_refused),
		cmocka_unit_test(test_handoff_expiry),
	};

	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
