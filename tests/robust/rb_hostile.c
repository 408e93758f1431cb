// SPDX-License-Identifier: MIT
/*
 * Hostile and broken clients (issue 8, item 4).
 *
 * A hub and two daemons; daemon A (node 1) runs with small limits
 * (--max-queued 64 --max-ids 64 --max-clients 300) so that they are reached
 * quickly. A victim connection is set up first (victim client on A, its
 * listener on B), then raw SOCK_SEQPACKET clients attack A: requests before
 * HELLO, version mismatches, truncated, oversized and malformed datagrams,
 * unknown message types, unknown and foreign ids, misused pipelining flags
 * (NOREPLY where it may not be, a creating CONNECT with NOREPLY, ...), a
 * client that never reads (back-pressure, then dropped once stuck) and a listener that never reads its
 * REQ_RECEIVED events (dropped; its peers get REJ), a zero-length
 * datagram, thousands of clients connecting and dying (some mid-request,
 * some forked libcmclient processes SIGKILLed mid-handshake) and more
 * clients than max_clients.
 *
 * After every case: A is alive and a new client's HELLO is answered; the
 * victim is still ESTABLISHED with its context (cmc_query_id). At the end
 * the victim disconnects cleanly (DREQ/DREP/TIMEWAIT_EXIT on both sides,
 * so its events still flow), and both daemons drain to nothing but the
 * victim's listener.
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

#include "cmp.h"
#include "rb_common.h"

#define SID_VICTIM 0x00000000726f6233ull /* "rob3" */
#define SID_NOBODY 0x00000000726f6234ull /* no listener anywhere */
#define MAX_QUEUED 64
#define MAX_IDS 64
#define MAX_CLIENTS 300
#define VICTIM_CTX ((void *)0x5eed)
#define REPLY_MS 3000
#define QUIET_MS 300
/*
 * A's MRAs ask for 2^24 x 4.096 us (~69 s): a REQ that A holds is held
 * until A answers it (a peer waits that long after each MRA), never given
 * up on by its peer within the test; see never_reads_events().
 */
#define MRA_EXP "24"
#define HOLD_MS 60000.0 /* < one MRA wait */

static struct cmc_channel *mon, *mon_b, *va, *vb;
static struct cmc_id *victim, *victim_b, *vlisten;
static uint32_t seqno = 100;
static unsigned long cases;

/* ---- raw clients ------------------------------------------------------ */

static int raw_open_nb(bool nonblock)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(AF_UNIX,
			SOCK_SEQPACKET | SOCK_CLOEXEC |
				(nonblock ? SOCK_NONBLOCK : 0),
			0);

	CHECK(fd >= 0, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.107s",
		 rb_fab.d[0].sock);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int raw_open(void)
{
	int fd = raw_open_nb(false);

	CHECK(fd >= 0, "connect: %s", strerror(-fd));
	return fd;
}

static void raw_send(int fd, const void *buf, size_t len)
{
	ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

	CHECK(n == (ssize_t)len, "send %zu: %zd %s", len, n, strerror(errno));
}

/* Encode and send msg; returns its seq. */
static uint32_t raw_req(int fd, struct cmp_msg *m)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n = cmp_encode(m, buf, sizeof(buf));

	CHECK(n > 0, "cmp_encode %s: %zd", cmp_type_name(m->hdr.type), n);
	raw_send(fd, buf, (size_t)n);
	return m->hdr.seq;
}

/* Receive one datagram within ms; returns its length, 0 on EOF, -ETIMEDOUT
 * or -errno. */
static ssize_t raw_recv(int fd, void *buf, size_t size, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return -ETIMEDOUT;
	n = recv(fd, buf, size, MSG_DONTWAIT);
	return n < 0 ? -errno : n;
}

/* The next datagram must be the reply to (type, seq) with status. */
static void expect_reply(int fd, enum cmp_type type, uint32_t seq, int status,
			 const char *what)
{
	static struct cmp_msg r;
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n = raw_recv(fd, buf, sizeof(buf), REPLY_MS);
	const char *why = NULL;
	int rc;

	CHECK(n > 0, "%s: no reply (%zd)", what, n);
	rc = cmp_decode(buf, (size_t)n, &r, &why);
	CHECK(rc == 0, "%s: reply does not decode: %s", what, why);
	CHECK(r.hdr.type == cmp_reply_type(type) && r.hdr.seq == seq,
	      "%s: got %s seq %u, want %s seq %u", what,
	      cmp_type_name(r.hdr.type), r.hdr.seq,
	      cmp_type_name(cmp_reply_type(type)), seq);
	CHECK(r.reply.status == status, "%s: status %d (%s), want %d (%s)",
	      what, r.reply.status, strerror(-r.reply.status), status,
	      strerror(-status));
	cases++;
}

static void expect_quiet(int fd, const char *what)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n = raw_recv(fd, buf, sizeof(buf), QUIET_MS);

	CHECK(n == -ETIMEDOUT, "%s: expected no answer, got %zd bytes", what,
	      n);
	cases++;
}

static void expect_eof(int fd, const char *what)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n;
	int i;

	/* Replies queued before the drop may come first. */
	for (i = 0; i < 100000; i++) {
		n = raw_recv(fd, buf, sizeof(buf), REPLY_MS);
		if (n <= 0)
			break;
	}
	CHECK(n == 0 || n == -ECONNRESET, "%s: not disconnected (%zd)", what,
	      n);
	cases++;
}

static void msg(struct cmp_msg *m, enum cmp_type type)
{
	cmp_msg_init(m, type, ++seqno);
}

static void hello_v(int fd, uint16_t min, uint16_t max, int status)
{
	struct cmp_msg m;
	uint32_t seq;

	msg(&m, CMP_TYPE_HELLO);
	m.hello.min_version = min;
	m.hello.max_version = max;
	snprintf(m.hello.name, sizeof(m.hello.name), "rb-hostile");
	seq = raw_req(fd, &m);
	expect_reply(fd, CMP_TYPE_HELLO, seq, status, "HELLO");
}

static int raw_hello(void)
{
	int fd = raw_open();

	hello_v(fd, CMP_VERSION_MIN, CMP_VERSION_MAX, 0);
	return fd;
}

/* A request that names an id: (type, id) with a valid body. */
static void id_req(struct cmp_msg *m, enum cmp_type type, uint32_t id)
{
	msg(m, type);
	memcpy(m->body, &id, sizeof(id));
	switch (type) {
	case CMP_TYPE_LISTEN:
		m->listen.backlog = 1;
		m->listen.service_id = SID_NOBODY;
		m->listen.service_mask = ~0ull;
		break;
	case CMP_TYPE_CONNECT:
		m->connect.local_qpn = 0x99;
		m->connect.service_id = SID_VICTIM;
		m->connect.dst.family = CMP_AF_LID;
		m->connect.dst.lid = RB_NODE_LID(2);
		break;
	case CMP_TYPE_ACK_EVENT:
		m->ack_event.seq = 1;
		break;
	case CMP_TYPE_SET_CONTEXT:
		m->set_context.context = 0xbad;
		break;
	case CMP_TYPE_REJECT:
		m->reject.reason = 28;
		break;
	case CMP_TYPE_ACCEPT:
		m->accept.local_qpn = 0x98;
		break;
	default:
		break;
	}
}

/* A CREATE_ID of an RC id, the request most cases bend. */
static void create_id_msg(struct cmp_msg *m)
{
	msg(m, CMP_TYPE_CREATE_ID);
	m->create_id.qp_type = CMP_QP_TYPE_RC;
}

/* A new RC id on the raw connection fd; fails the test unless created. */
static uint32_t raw_create_id(int fd)
{
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m;
	ssize_t n;

	create_id_msg(&m);
	raw_req(fd, &m);
	n = raw_recv(fd, buf, sizeof(buf), REPLY_MS);
	CHECK(n > 0 && cmp_decode(buf, (size_t)n, &m, NULL) == 0 &&
		      m.create_id_reply.status == 0,
	      "CREATE_ID");
	return m.create_id_reply.id;
}

static void id_case(int fd, enum cmp_type type, uint32_t id, int status,
		    const char *what)
{
	struct cmp_msg m;
	char label[96];

	id_req(&m, type, id);
	snprintf(label, sizeof(label), "%s %s id %u", what, cmp_type_name(type),
		 id);
	expect_reply(fd, type, raw_req(fd, &m), status, label);
}

/*
 * Wait, up to WAIT_CAP_MS, until a global counter of A is at most (or at
 * least) a value; returns the last value read. The daemon notices closed
 * sockets and accepts new ones in its own time: these wait for what it
 * must get to, the cap only turns a hang into a failure.
 */
#define WAIT_CAP_MS 30000.0

static uint64_t wait_ctr(const char *name, uint64_t v, bool at_least)
{
	double end = rb_now_ms() + WAIT_CAP_MS;
	uint64_t now = rb_counter(mon, name);

	while ((at_least ? now < v : now > v) && rb_now_ms() < end) {
		usleep(20000);
		now = rb_counter(mon, name);
	}
	return now;
}

/* ---- health ----------------------------------------------------------- */

static void healthy(const char *after)
{
	struct cmc_id_info info;
	int fd, rc;

	CHECK(rb_daemon_alive(0) && rb_daemon_alive(1),
	      "a daemon died after %s", after);
	fd = raw_hello();
	close(fd);
	rc = cmc_query_id(victim, &info);
	CHECK(rc == 0, "victim query after %s: %s", after, cmc_strerror(rc));
	CHECK(info.state == CMC_STATE_ESTABLISHED, "victim in %s after %s",
	      cmc_state_str(info.state), after);
	CHECK(info.context == (uintptr_t)VICTIM_CTX,
	      "victim context changed after %s", after);
	CHECK(cmc_event_pending(va) == 0, "victim got an event after %s",
	      after);
	printf("ok: %s\n", after);
}

static void victim_setup(void)
{
	struct cmc_conn_param p;
	struct cmc_event *ev;
	struct cmc_accept_param ap = { .qp_num = 0x321,
				       .start_psn = 5,
				       .rnr_retry_count = 7 };
	int rc;

	va = rb_open(0, "rb-victim");
	vb = rb_open(1, "rb-victim-listener");
	CHECK(cmc_create_id(vb, NULL, CMC_QP_RC, &vlisten) == 0, "create");
	CHECK(cmc_listen(vlisten, SID_VICTIM, ~0ull, 4, NULL) == 0, "listen");
	CHECK(cmc_create_id(va, VICTIM_CTX, CMC_QP_RC, &victim) == 0, "create");
	rb_conn_param(&p, SID_VICTIM, RB_NODE_LID(2), 0x123, 7, 0, 12);
	rc = cmc_connect(victim, &p);
	CHECK(rc == 0, "victim connect: %s", cmc_strerror(rc));
	rc = rb_next_event(vb, &ev, 5000);
	CHECK(rc == 0 && ev->type == CMC_EVENT_REQ_RECEIVED, "victim REQ");
	victim_b = ev->id;
	CHECK(cmc_accept(victim_b, &ap) == 0, "accept");
	cmc_ack_event(ev);
	rc = rb_next_event(va, &ev, 5000);
	CHECK(rc == 0 && ev->type == CMC_EVENT_REP_RECEIVED, "victim REP");
	CHECK(ev->context == VICTIM_CTX, "victim context");
	cmc_ack_event(ev);
	CHECK(cmc_rtu(victim, NULL, 0) == 0, "rtu");
	rc = rb_next_event(vb, &ev, 5000);
	CHECK(rc == 0 && ev->type == CMC_EVENT_ESTABLISHED, "victim B est");
	cmc_ack_event(ev);
	healthy("victim setup");
}

/* The victim's events still flow: disconnect it cleanly, both sides. */
static void victim_teardown(void)
{
	struct cmc_event *ev;
	int rc;

	CHECK(cmc_disconnect(victim, "bye", 4) == 0, "victim disconnect");
	rc = cmc_get_event(vb, &ev, 5000);
	CHECK(rc == 0 && ev->type == CMC_EVENT_DREQ_RECEIVED, "B DREQ: %d %s",
	      rc, rc ? "" : cmc_event_str(ev->type));
	cmc_ack_event(ev);
	CHECK(cmc_disconnect(victim_b, NULL, 0) == 0, "B DREP");
	for (int side = 0; side < 2; side++) {
		struct cmc_channel *ch = side ? vb : va;
		bool tw = false;

		for (int i = 0; i < 4 && !tw; i++) {
			rc = cmc_get_event(ch, &ev, 5000);
			CHECK(rc == 0, "victim side %d: %s", side,
			      cmc_strerror(rc));
			CHECK(ev->type == CMC_EVENT_DREP_RECEIVED ||
				      ev->type == CMC_EVENT_TIMEWAIT_EXIT,
			      "victim side %d got %s", side,
			      cmc_event_str(ev->type));
			tw = ev->type == CMC_EVENT_TIMEWAIT_EXIT;
			cmc_ack_event(ev);
		}
		CHECK(tw, "no TIMEWAIT_EXIT on side %d", side);
	}
	CHECK(cmc_destroy_id(victim) == 0, "destroy");
	CHECK(cmc_destroy_id(victim_b) == 0, "destroy");
	printf("ok: victim disconnected cleanly\n");
}

/* ---- the cases -------------------------------------------------------- */

static void before_hello(void)
{
	int fd = raw_open();
	struct cmp_msg m;

	create_id_msg(&m);
	expect_reply(fd, CMP_TYPE_CREATE_ID, raw_req(fd, &m), -EPROTO,
		     "CREATE_ID before HELLO");
	id_case(fd, CMP_TYPE_QUERY_ID, cmc_id_num(victim), -EPROTO,
		"before HELLO");
	id_case(fd, CMP_TYPE_DESTROY_ID, cmc_id_num(victim), -EPROTO,
		"before HELLO");
	msg(&m, CMP_TYPE_LIST);
	m.list.filter = CMP_LIST_FILTER_ALL;
	expect_reply(fd, CMP_TYPE_LIST, raw_req(fd, &m), -EPROTO,
		     "LIST before HELLO");
	/* Still a client that may say HELLO. */
	hello_v(fd, CMP_VERSION_MIN, CMP_VERSION_MAX, 0);
	close(fd);
	healthy("requests before HELLO");
}

static void versions(void)
{
	int fd = raw_open();
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m, r;
	ssize_t n;

	/* A client that speaks only later versions: refused, with the range
	 * the daemon speaks in the refusal (cmp.h). */
	msg(&m, CMP_TYPE_HELLO);
	m.hello.min_version = CMP_VERSION_MAX + 1;
	m.hello.max_version = CMP_VERSION_MAX + 7;
	raw_req(fd, &m);
	n = raw_recv(fd, buf, sizeof(buf), REPLY_MS);
	CHECK(n > 0 && cmp_decode(buf, (size_t)n, &r, NULL) == 0,
	      "HELLO refusal");
	CHECK(r.hdr.type == CMP_TYPE_HELLO_REPLY &&
		      r.hello_reply.status == -EPROTONOSUPPORT &&
		      r.hello_reply.version == 0 &&
		      r.hello_reply.min_version == CMP_VERSION_MIN &&
		      r.hello_reply.max_version == CMP_VERSION_MAX,
	      "refused HELLO reply: status %d version %u range %u..%u",
	      r.hello_reply.status, r.hello_reply.version,
	      r.hello_reply.min_version, r.hello_reply.max_version);
	cases++;
	/* Refused: still not introduced. */
	msg(&m, CMP_TYPE_COUNTERS);
	m.counters.scope = CMP_COUNTER_SCOPE_GLOBAL;
	expect_reply(fd, CMP_TYPE_COUNTERS, raw_req(fd, &m), -EPROTO,
		     "COUNTERS after a refused HELLO");
	hello_v(fd, CMP_VERSION_MIN, CMP_VERSION_MAX, 0);
	hello_v(fd, CMP_VERSION_MIN, CMP_VERSION_MAX, -EALREADY);
	/* A request in a version this daemon does not speak. */
	for (uint16_t v = 0; v < 3; v++) {
		if (v == CMP_VERSION)
			continue;
		create_id_msg(&m);
		cmp_encode(&m, buf, sizeof(buf));
		((struct cmp_hdr *)buf)->version = v;
		raw_send(fd, buf,
			 sizeof(struct cmp_hdr) + sizeof(struct cmp_create_id));
		expect_reply(fd, CMP_TYPE_CREATE_ID, m.hdr.seq, -EPROTO,
			     "CREATE_ID in a foreign version");
	}
	close(fd);
	healthy("version mismatches");
}

/* A HELLO whose header is not CMP_VERSION_HELLO: malformed, and a HELLO
 * refusal is not answered (server.c: client_malformed); the client may
 * still say a correct HELLO. */
static void hello_bad_header(void)
{
	uint64_t before = rb_counter(mon, "client_malformed");
	int fd = raw_open();
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_msg m;
	ssize_t n;

	msg(&m, CMP_TYPE_HELLO);
	m.hello.min_version = 1;
	m.hello.max_version = 1;
	n = cmp_encode(&m, buf, sizeof(buf));
	((struct cmp_hdr *)buf)->version = 2;
	raw_send(fd, buf, (size_t)n);
	expect_quiet(fd, "HELLO with header version 2");
	CHECK(rb_counter(mon, "client_malformed") == before + 1,
	      "malformed not counted");
	hello_v(fd, 1, 1, 0);
	close(fd);
	healthy("HELLO with a foreign header version");
}

static void malformed(void)
{
	uint64_t before = rb_counter(mon, "client_malformed");
	int fd = raw_hello();
	static uint8_t big[65536];
	uint8_t buf[CMP_MSG_MAX];
	struct cmp_hdr *h = (struct cmp_hdr *)buf;
	struct cmp_msg m;
	uint32_t seq;
	ssize_t n;
	unsigned int bad = 0;

	/* Shorter than a header: nothing to answer. */
	raw_send(fd, "\x01\x00\x02\x00\x08\x00\x00\x00", 8);
	bad++;
	expect_quiet(fd, "8-byte datagram");
	/* A header whose length is not the datagram's. */
	create_id_msg(&m);
	n = cmp_encode(&m, buf, sizeof(buf));
	h->length = (uint32_t)n + 8;
	raw_send(fd, buf, (size_t)n);
	bad++;
	expect_reply(fd, CMP_TYPE_CREATE_ID, m.hdr.seq, -EBADMSG,
		     "length field too long");
	/* Truncated body, length field agreeing. */
	msg(&m, CMP_TYPE_CONNECT);
	m.connect.id = 1;
	n = cmp_encode(&m, buf, sizeof(buf));
	CHECK(n < 0, "CONNECT id 1 without destination encodes");
	memset(buf, 0, sizeof(buf));
	h->version = CMP_VERSION;
	h->type = CMP_TYPE_CONNECT;
	h->seq = ++seqno;
	h->length = sizeof(*h) + 40;
	raw_send(fd, buf, h->length);
	bad++;
	expect_reply(fd, CMP_TYPE_CONNECT, h->seq, -EBADMSG,
		     "truncated CONNECT");
	/* Header only. */
	h->type = CMP_TYPE_QUERY_ID;
	h->seq = ++seqno;
	h->length = sizeof(*h);
	raw_send(fd, buf, sizeof(*h));
	bad++;
	expect_reply(fd, CMP_TYPE_QUERY_ID, h->seq, -EBADMSG,
		     "header-only QUERY_ID");
	/* Oversized: beyond CMP_MSG_MAX, with a request header. */
	for (size_t len = CMP_MSG_MAX + 1; len <= sizeof(big); len *= 4) {
		struct cmp_hdr *bh = (struct cmp_hdr *)big;

		memset(big, 0xa5, len);
		bh->version = CMP_VERSION;
		bh->type = CMP_TYPE_CREATE_ID;
		bh->length = (uint32_t)len;
		bh->seq = ++seqno;
		bh->rsvd0 = 0;
		raw_send(fd, big, len);
		bad++;
		expect_reply(fd, CMP_TYPE_CREATE_ID, bh->seq, -EBADMSG,
			     "oversized datagram");
	}
	/* Exactly CMP_MSG_MAX of garbage after a valid header. */
	memset(buf, 0x5a, sizeof(buf));
	h->version = CMP_VERSION;
	h->type = CMP_TYPE_LIST;
	h->length = CMP_MSG_MAX;
	h->seq = ++seqno;
	h->rsvd0 = 0;
	raw_send(fd, buf, CMP_MSG_MAX);
	bad++;
	expect_reply(fd, CMP_TYPE_LIST, h->seq, -EBADMSG, "LIST of 4096 bytes");
	/* Reserved bytes set: header, then body. */
	create_id_msg(&m);
	n = cmp_encode(&m, buf, sizeof(buf));
	h->rsvd0 = 1;
	raw_send(fd, buf, (size_t)n);
	bad++;
	expect_reply(fd, CMP_TYPE_CREATE_ID, m.hdr.seq, -EBADMSG,
		     "header reserved set");
	create_id_msg(&m);
	n = cmp_encode(&m, buf, sizeof(buf));
	buf[sizeof(*h) + offsetof(struct cmp_create_id, rsvd0) + 3] = 0x80;
	raw_send(fd, buf, (size_t)n);
	bad++;
	expect_reply(fd, CMP_TYPE_CREATE_ID, m.hdr.seq, -EBADMSG,
		     "body reserved set");
	/* Values out of range. */
	create_id_msg(&m);
	n = cmp_encode(&m, buf, sizeof(buf));
	buf[sizeof(*h) + offsetof(struct cmp_create_id, qp_type)] = 4; /* XRC */
	raw_send(fd, buf, (size_t)n);
	bad++;
	expect_reply(fd, CMP_TYPE_CREATE_ID, m.hdr.seq, -EBADMSG,
		     "CREATE_ID qp_type 4");
	/* Unknown types and types a client never sends: not answerable
	 * (there is no reply type to answer with), counted, and the next
	 * request's reply is the next datagram. */
	{
		static const uint16_t types[] = { 0,
						  CMP_TYPE_REQUEST_MAX + 1,
						  0x3f,
						  CMP_TYPE_EVENT,
						  CMP_TYPE_HELLO_REPLY,
						  CMP_TYPE_COUNTERS_REPLY,
						  0x7fff,
						  0xffff };

		for (unsigned int i = 0; i < sizeof(types) / sizeof(types[0]);
		     i++) {
			memset(buf, 0, 64);
			h->version = CMP_VERSION;
			h->type = types[i];
			h->length = 64;
			h->seq = ++seqno;
			raw_send(fd, buf, 64);
			bad++;
		}
		id_req(&m, CMP_TYPE_QUERY_ID, 0x7ffffff0);
		seq = raw_req(fd, &m);
		expect_reply(fd, CMP_TYPE_QUERY_ID, seq, -ENOENT,
			     "request after unknown types");
	}
	CHECK(rb_counter(mon, "client_malformed") == before + bad,
	      "client_malformed %llu, want %llu",
	      (unsigned long long)rb_counter(mon, "client_malformed"),
	      (unsigned long long)(before + bad));
	close(fd);
	healthy("malformed, truncated, oversized datagrams and unknown types");
}

static void ids(void)
{
	int fd = raw_hello();
	uint32_t vid = cmc_id_num(victim);
	static const enum cmp_type named[] = {
		CMP_TYPE_DESTROY_ID, CMP_TYPE_SET_CONTEXT,
		CMP_TYPE_LISTEN,     CMP_TYPE_CONNECT,
		CMP_TYPE_ACCEPT,     CMP_TYPE_REJECT,
		CMP_TYPE_RTU,	     CMP_TYPE_NOTIFY_ESTABLISHED,
		CMP_TYPE_MRA,	     CMP_TYPE_DISCONNECT,
		CMP_TYPE_ACK_EVENT,  CMP_TYPE_QUERY_ID,
	};
	const unsigned int nnamed = sizeof(named) / sizeof(named[0]);
	struct cmp_msg m;
	uint32_t mine = 0;
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n;

	for (unsigned int i = 0; i < nnamed; i++) {
		/* Unknown, the victim's (foreign), the victim listener's on
		 * B (a number A may or may not know): all absent. */
		id_case(fd, named[i], 0x7fffff00u + i, -ENOENT, "unknown");
		id_case(fd, named[i], vid, -ENOENT, "foreign");
	}
	/* Id 0 is refused by the decoder. */
	msg(&m, CMP_TYPE_QUERY_ID);
	n = cmp_encode(&m, buf, sizeof(buf));
	CHECK(n < 0, "QUERY_ID 0 encodes");
	memset(buf, 0, sizeof(buf));
	((struct cmp_hdr *)buf)->version = CMP_VERSION;
	((struct cmp_hdr *)buf)->type = CMP_TYPE_QUERY_ID;
	((struct cmp_hdr *)buf)->length = 24;
	((struct cmp_hdr *)buf)->seq = ++seqno;
	raw_send(fd, buf, 24);
	expect_reply(fd, CMP_TYPE_QUERY_ID, seqno, -EBADMSG, "QUERY_ID id 0");
	/* An own id in IDLE: calls its state does not allow. */
	mine = raw_create_id(fd);
	id_case(fd, CMP_TYPE_ACCEPT, mine, -EINVAL, "IDLE");
	id_case(fd, CMP_TYPE_RTU, mine, -EINVAL, "IDLE");
	id_case(fd, CMP_TYPE_DISCONNECT, mine, -EINVAL, "IDLE");
	id_case(fd, CMP_TYPE_ACK_EVENT, mine, -EINVAL, "IDLE, no event");
	id_case(fd, CMP_TYPE_DESTROY_ID, mine, 0, "own");
	id_case(fd, CMP_TYPE_DESTROY_ID, mine, -ENOENT, "destroyed");
	/* The id limit: MAX_IDS, then -EMFILE. */
	for (unsigned int i = 0; i <= MAX_IDS; i++) {
		create_id_msg(&m);
		expect_reply(fd, CMP_TYPE_CREATE_ID, raw_req(fd, &m),
			     i < MAX_IDS ? 0 : -EMFILE,
			     "CREATE_ID to the limit");
	}
	CHECK(rb_counter(mon, "ids") == 1 + MAX_IDS, "ids %llu",
	      (unsigned long long)rb_counter(mon, "ids"));
	close(fd);
	CHECK(rb_wait_drained(mon, 1, 1, 5000), "the dead client's ids stay");
	healthy("unknown, foreign and zero ids, the id limit");
}

/* Checks whose failure is a daemon bug already reported: they are
 * evaluated, printed and fail the test at the end, so that every other
 * case still runs. */
static unsigned int late_failures;
#define CHECK_LATE(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL (late) %s:%d: " #cond ": ",      \
				__FILE__, __LINE__);                           \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			late_failures++;                                       \
		}                                                              \
	} while (0)

/* How many lines of daemon A's log contain text. */
static unsigned int log_count(const char *text)
{
	char cmd[300];
	unsigned int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "grep -c '%s' %s", text, rb_fab.d[0].log);
	f = popen(cmd, "r");
	CHECK(f != NULL, "popen");
	if (fscanf(f, "%u", &n) != 1)
		n = 0;
	pclose(f);
	return n;
}

#define DROP_LOG "messages queued and not read; disconnecting it"

/*
 * A client that sends requests and never reads. The daemon stops reading
 * its requests once SRV_OUT_HIGH replies wait (back-pressure, server.c),
 * so its sends end in EAGAIN; with requests waiting and nothing read for
 * SRV_STALL_SEC (5 s) it is stuck, and the daemon drops it.
 */
static void never_reads(void)
{
	uint64_t dropped = rb_counter(mon, "clients_dropped");
	uint64_t base = rb_counter(mon, "clients");
	unsigned int drops_logged = log_count(DROP_LOG);
	int fd = raw_hello();
	unsigned int sent = 0, got = 0;
	struct cmp_msg m;
	uint8_t buf[CMP_MSG_MAX];
	double start = rb_now_ms(), end = start + 30000;
	bool gone = false;
	ssize_t n;

	while (sent < 100000 && !gone) {
		CHECK(rb_now_ms() < end,
		      "still connected after %u requests "
		      "not read",
		      sent);
		msg(&m, CMP_TYPE_COUNTERS); /* the largest reply */
		m.counters.scope = CMP_COUNTER_SCOPE_GLOBAL;
		n = cmp_encode(&m, buf, sizeof(buf));
		if (send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			struct pollfd p = { fd, POLLOUT, 0 };

			gone = errno == EPIPE || errno == ECONNRESET;
			CHECK(gone || errno == EAGAIN, "send: %s",
			      strerror(errno));
			poll(&p, 1, 50);
			continue;
		}
		sent++;
	}
	for (int i = 0; i < 100000; i++) {
		n = raw_recv(fd, buf, sizeof(buf), REPLY_MS);
		if (n <= 0)
			break;
		got++;
	}
	CHECK(n == 0 || n == -ECONNRESET, "not disconnected: %zd", n);
	CHECK(got < sent, "got all %u replies", got);
	CHECK(log_count(DROP_LOG) == drops_logged + 1,
	      "no log line for the drop");
	printf("non-reading client: dropped after %u requests (%.1f s), %u "
	       "replies were readable, then EOF\n",
	       sent, (rb_now_ms() - start) / 1e3, got);
	close(fd);
	CHECK(wait_ctr("clients", base, false) == base,
	      "the dropped client stays");
	CHECK(rb_counter(mon, "clients_dropped") == dropped + 1,
	      "clients_dropped %llu, want %llu: the drop was not counted",
	      (unsigned long long)rb_counter(mon, "clients_dropped"),
	      (unsigned long long)(dropped + 1));
	cases++;
	healthy("a client that never reads");
}

/*
 * A listener that never reads its events: peers on B connect to it. Its
 * passive ids count against --max-ids like any other, so it gets at most
 * that many REQ_RECEIVED events; further REQs are held with an MRA, then
 * shed with REJ "no resources" (DESIGN.md lesson 1), and the daemon's
 * memory stays bounded. When the listener's client goes away, its ids and
 * held REQs are answered: every peer hears REJ_RECEIVED or CONNECT_ERROR,
 * none is left hanging, and A drains.
 *
 * Shedding happens by construction, not by speed: A's MRAs (MRA_EXP) keep
 * every peer waiting ~69 s, so no REQ leaves the hold list before the
 * listener closes, and the 129th REQ (64 ids + 64 held) is shed however
 * slowly the peers are started. And every peer must end within HOLD_MS,
 * less than one MRA wait: only A's answers can end them in time, so a
 * listener that went away without answering its held REQs fails here
 * (with A's default 4 s MRAs the peers' own timeouts hid that).
 */
static void never_reads_events(void)
{
	const unsigned int n = 600;
	struct cmc_channel *cb = rb_open(1, "rb-nr-peers");
	struct cmc_id **ids = calloc(n, sizeof(*ids));
	unsigned int started = 0, ended = 0, rej = 0, rej3 = 0, cerr = 0;
	uint64_t base = rb_counter(mon, "clients");
	uint64_t drops = rb_counter(mon, "clients_dropped");
	int fd = raw_hello();
	struct cmp_msg m;
	double end = rb_now_ms() + HOLD_MS;
	bool closed = false;
	uint64_t ids_max = 0, ids_now;
	uint32_t lid;

	CHECK(ids != NULL, "calloc");
	lid = raw_create_id(fd);
	id_req(&m, CMP_TYPE_LISTEN, lid);
	m.listen.backlog = 10000;
	m.listen.service_id = SID_NOBODY + 7;
	expect_reply(fd, CMP_TYPE_LISTEN, raw_req(fd, &m), 0, "LISTEN");
	/* From here on the listener reads nothing. */
	while (ended < started || !closed) {
		struct cmc_event *ev;

		CHECK(rb_now_ms() < end,
		      "%u of %u peers ended, %u shed, listener closed %d",
		      ended, started, rej3, closed);
		if (!closed && started < n) {
			struct cmc_conn_param p;

			memset(&p, 0, sizeof(p));
			p.service_id = SID_NOBODY + 7;
			p.dst.family = CMC_AF_LID;
			p.dst.lid = RB_NODE_LID(1);
			p.qp_num = 0x50000 + started;
			p.retry_count = 7;
			p.max_cm_retries = 3;
			p.local_cm_response_timeout = 12;
			p.remote_cm_response_timeout = 12;
			/* The context from the start: an answer may come
			 * before any later request returns. */
			CHECK(cmc_create_id(cb,
					    (void *)(uintptr_t)(started + 1),
					    CMC_QP_RC, &ids[started]) == 0,
			      "create");
			CHECK(cmc_connect(ids[started], &p) == 0, "connect");
			started++;
		} else {
			usleep(2000);
		}
		ids_now = rb_counter(mon, "ids");
		if (ids_now > ids_max)
			ids_max = ids_now;
		/* Once REQs are being shed, the listening client goes away
		 * without having read a thing. Not before, even with every
		 * CONNECT out: each REQ follows its CONNECT's reply (after
		 * the SA's answer on this IB fabric), so all 600 may be out
		 * before the first REQ reaches A. */
		if (!closed && rej3 > 0) {
			close(fd);
			closed = true;
		}
		while (cmc_get_event(cb, &ev, 0) == 0) {
			unsigned int i = (unsigned int)(uintptr_t)ev->context;

			if (ev->type == CMC_EVENT_REJ_RECEIVED ||
			    ev->type == CMC_EVENT_CONNECT_ERROR) {
				if (ev->type == CMC_EVENT_REJ_RECEIVED) {
					rej++;
					rej3 += ev->u.rej.reason ==
						CM_REJ_NO_RESOURCES;
				} else {
					cerr++;
				}
				cmc_ack_event(ev);
				CHECK(i >= 1 && i <= started && ids[i - 1],
				      "event of an unknown peer id");
				cmc_destroy_id(ids[i - 1]);
				ids[i - 1] = NULL;
				ended++;
				continue;
			}
			CHECK(ev->type == CMC_EVENT_MRA_RECEIVED, "peer got %s",
			      cmc_event_str(ev->type));
			cmc_ack_event(ev);
		}
	}
	printf("non-reading listener: %u peers, at most %llu ids on A "
	       "(--max-ids %d), %u REJ (%u no resources), %u CONNECT_ERROR\n",
	       started, (unsigned long long)ids_max, MAX_IDS, rej, rej3, cerr);
	CHECK(wait_ctr("clients", base, false) == base,
	      "the closed client stays");
	CHECK(rb_wait_drained(mon, 1, 1, 10000), "A keeps the closed ids");
	/* It went away by itself: not a drop. */
	CHECK(rb_counter(mon, "clients_dropped") == drops,
	      "clients_dropped %llu, want %llu",
	      (unsigned long long)rb_counter(mon, "clients_dropped"),
	      (unsigned long long)drops);
	CHECK(rej + cerr == started, "peers: %u + %u of %u", rej, cerr,
	      started);
	CHECK(rej3 > 0, "no REQ was shed with REJ no resources");
	/* Its passive ids are held to --max-ids like created ones. */
	CHECK(ids_max <= 1 + MAX_IDS,
	      "A held %llu ids: the listening client had %llu, more than "
	      "--max-ids %d",
	      (unsigned long long)ids_max, (unsigned long long)(ids_max - 1),
	      MAX_IDS);
	free(ids);
	cmc_close(cb);
	cases++;
	healthy("a listener that never reads its events");
}

/* Send m encoded, after patch() changed the bytes; returns its seq. */
static uint32_t raw_req_patched(int fd, struct cmp_msg *m,
				void (*patch)(uint8_t *buf))
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n = cmp_encode(m, buf, sizeof(buf));

	CHECK(n > 0, "cmp_encode %s: %zd", cmp_type_name(m->hdr.type), n);
	patch(buf);
	raw_send(fd, buf, (size_t)n);
	return m->hdr.seq;
}

static void set_noreply(uint8_t *buf)
{
	((struct cmp_hdr *)buf)->flags = CMP_HDR_NOREPLY;
}

static void set_flag_unknown(uint8_t *buf)
{
	((struct cmp_hdr *)buf)->flags = CMP_HDR_NOREPLY | 0x0100;
}

static void set_connect_context(uint8_t *buf)
{
	uint64_t ctx = 0xbadc0de;

	memcpy(buf + sizeof(struct cmp_hdr) +
		       offsetof(struct cmp_connect, context),
	       &ctx, sizeof(ctx));
}

static void set_connect_create_noreply(uint8_t *buf)
{
	uint32_t none = CMP_ID_NONE;

	memcpy(buf + sizeof(struct cmp_hdr), &none, sizeof(none));
	buf[sizeof(struct cmp_hdr) + offsetof(struct cmp_connect, qp_type)] =
		CMP_QP_TYPE_RC;
	set_noreply(buf);
}

static void set_connect_create_ud(uint8_t *buf)
{
	uint32_t none = CMP_ID_NONE;

	memcpy(buf + sizeof(struct cmp_hdr), &none, sizeof(none));
	buf[sizeof(struct cmp_hdr) + offsetof(struct cmp_connect, qp_type)] =
		CMP_QP_TYPE_UD;
}

/* The next datagram is a plain reply (type, seq, status) naming id. */
static void expect_reply_id(int fd, enum cmp_type type, uint32_t seq,
			    int status, uint32_t id, const char *what)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n = raw_recv(fd, buf, sizeof(buf), REPLY_MS);
	struct cmp_msg r;

	CHECK(n > 0 && cmp_decode(buf, (size_t)n, &r, NULL) == 0,
	      "%s: no reply (%zd)", what, n);
	CHECK(r.hdr.type == cmp_reply_type(type) && r.hdr.seq == seq &&
		      r.reply.status == status && r.reply.id == id,
	      "%s: got %s seq %u status %d id %u, want %s seq %u status %d "
	      "id %u",
	      what, cmp_type_name(r.hdr.type), r.hdr.seq, r.reply.status,
	      r.reply.id, cmp_type_name(cmp_reply_type(type)), seq, status, id);
	cases++;
}

/*
 * Misuse of the pipelining additions (cmp.h, "Pipelining"): header flags
 * where none may be, unknown flag bits, NOREPLY on requests whose reply
 * carries results, a creating CONNECT with NOREPLY or a UD QP type, a
 * CONNECT of an existing id with a context. Each is refused with -EBADMSG
 * (HELLO's not at all), creates nothing, and NOREPLY aimed at the victim's
 * id (foreign to this client) still fails loudly and leaves it alone.
 */
static void pipelining_misuse(void)
{
	uint64_t before = rb_counter(mon, "client_malformed");
	uint64_t ids_before = rb_counter(mon, "ids");
	uint32_t vid = cmc_id_num(victim), mine, seq;
	unsigned int bad = 0;
	struct cmp_msg m;
	int fd = raw_open();

	/* Flags on HELLO: malformed, and a HELLO is never answered then. */
	msg(&m, CMP_TYPE_HELLO);
	m.hello.min_version = m.hello.max_version = 1;
	raw_req_patched(fd, &m, set_noreply);
	bad++;
	expect_quiet(fd, "HELLO with NOREPLY");
	hello_v(fd, 1, 1, 0);

	/* Unknown flag bits, on a request that may carry NOREPLY. */
	id_req(&m, CMP_TYPE_DESTROY_ID, vid);
	seq = raw_req_patched(fd, &m, set_flag_unknown);
	bad++;
	expect_reply_id(fd, CMP_TYPE_DESTROY_ID, seq, -EBADMSG, vid,
			"DESTROY_ID with an unknown flag");
	/* NOREPLY on requests whose reply carries results. */
	create_id_msg(&m);
	seq = raw_req_patched(fd, &m, set_noreply);
	bad++;
	expect_reply(fd, CMP_TYPE_CREATE_ID, seq, -EBADMSG,
		     "CREATE_ID with NOREPLY");
	id_req(&m, CMP_TYPE_QUERY_ID, vid);
	seq = raw_req_patched(fd, &m, set_noreply);
	bad++;
	expect_reply(fd, CMP_TYPE_QUERY_ID, seq, -EBADMSG,
		     "QUERY_ID with NOREPLY");
	msg(&m, CMP_TYPE_LIST);
	m.list.filter = CMP_LIST_FILTER_ALL;
	seq = raw_req_patched(fd, &m, set_noreply);
	bad++;
	expect_reply(fd, CMP_TYPE_LIST, seq, -EBADMSG, "LIST with NOREPLY");
	/* A creating CONNECT may not waive its reply, nor be UD. */
	id_req(&m, CMP_TYPE_CONNECT, vid);
	seq = raw_req_patched(fd, &m, set_connect_create_noreply);
	bad++;
	expect_reply_id(fd, CMP_TYPE_CONNECT, seq, -EBADMSG, CMP_ID_NONE,
			"CONNECT id 0 with NOREPLY");
	id_req(&m, CMP_TYPE_CONNECT, vid);
	seq = raw_req_patched(fd, &m, set_connect_create_ud);
	bad++;
	expect_reply_id(fd, CMP_TYPE_CONNECT, seq, -EBADMSG, CMP_ID_NONE,
			"CONNECT id 0 for a UD id");
	/* A CONNECT of an existing id (the victim's) with a context. */
	id_req(&m, CMP_TYPE_CONNECT, vid);
	seq = raw_req_patched(fd, &m, set_connect_context);
	bad++;
	expect_reply_id(fd, CMP_TYPE_CONNECT, seq, -EBADMSG, vid,
			"CONNECT of an id with a context");
	CHECK(rb_counter(mon, "client_malformed") == before + bad,
	      "client_malformed %llu, want %llu",
	      (unsigned long long)rb_counter(mon, "client_malformed"),
	      (unsigned long long)(before + bad));

	/* Well-formed NOREPLY requests on the victim's id: foreign, so
	 * they fail, and failures are answered, naming the id. */
	id_req(&m, CMP_TYPE_DESTROY_ID, vid);
	seq = raw_req_patched(fd, &m, set_noreply);
	expect_reply_id(fd, CMP_TYPE_DESTROY_ID, seq, -ENOENT, vid,
			"NOREPLY DESTROY_ID of a foreign id");
	id_req(&m, CMP_TYPE_DISCONNECT, vid);
	seq = raw_req_patched(fd, &m, set_noreply);
	expect_reply_id(fd, CMP_TYPE_DISCONNECT, seq, -ENOENT, vid,
			"NOREPLY DISCONNECT of a foreign id");
	id_req(&m, CMP_TYPE_SET_CONTEXT, vid);
	seq = raw_req_patched(fd, &m, set_noreply);
	expect_reply_id(fd, CMP_TYPE_SET_CONTEXT, seq, -ENOENT, vid,
			"NOREPLY SET_CONTEXT of a foreign id");
	/* Nothing was created by any of it. */
	CHECK(rb_counter(mon, "ids") == ids_before, "ids %llu, want %llu",
	      (unsigned long long)rb_counter(mon, "ids"),
	      (unsigned long long)ids_before);

	/* And a NOREPLY success on an own id is silent: the next datagram
	 * is the reply of the request after it. */
	mine = raw_create_id(fd);
	id_req(&m, CMP_TYPE_SET_CONTEXT, mine);
	raw_req_patched(fd, &m, set_noreply);
	id_req(&m, CMP_TYPE_DESTROY_ID, mine);
	seq = raw_req_patched(fd, &m, set_noreply);
	id_req(&m, CMP_TYPE_QUERY_ID, mine);
	expect_reply_id(fd, CMP_TYPE_QUERY_ID, raw_req(fd, &m), -ENOENT, 0,
			"QUERY_ID after NOREPLY SET_CONTEXT and DESTROY_ID");
	(void)seq;
	close(fd);
	healthy("pipelining misuse: flags, NOREPLY, creating CONNECT");
}

/* A zero-length datagram reads as end-of-file on SOCK_SEQPACKET: the
 * daemon lets the client go. */
static void zero_length(void)
{
	int fd = raw_hello();

	raw_send(fd, "", 0);
	expect_eof(fd, "zero-length datagram");
	close(fd);
	healthy("a zero-length datagram");
}

/* One short-lived client of many, by kind. */
static int churn_one(unsigned int kind)
{
	int fd = raw_open_nb(true);
	struct cmp_msg m;
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n;

	if (fd < 0)
		return fd;
	if (kind == 0)
		return fd; /* connects, says nothing */
	msg(&m, CMP_TYPE_HELLO);
	m.hello.min_version = m.hello.max_version = 1;
	n = cmp_encode(&m, buf, sizeof(buf));
	send(fd, buf, (size_t)n, MSG_NOSIGNAL);
	if (kind == 1)
		return fd;
	if (kind == 2) { /* half a request */
		msg(&m, CMP_TYPE_CREATE_ID);
		m.create_id.qp_type = 1;
		n = cmp_encode(&m, buf, sizeof(buf));
		send(fd, buf, (size_t)n / 2, MSG_NOSIGNAL);
		return fd;
	}
	/* Ids and a handshake under way when it dies: the daemon must send
	 * their REJ and forget them. */
	for (uint32_t i = 0; i < 3; i++) {
		msg(&m, CMP_TYPE_CREATE_ID);
		m.create_id.qp_type = 1;
		n = cmp_encode(&m, buf, sizeof(buf));
		send(fd, buf, (size_t)n, MSG_NOSIGNAL);
	}
	/* Ids are numbered by the daemon; a CONNECT for an id we do not
	 * know yet is a request that fails with -ENOENT or one that
	 * connects an id: both are fine, the client dies either way. */
	if (kind == 3) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 50) > 0 &&
		    (n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0 &&
		    cmp_decode(buf, (size_t)n, &m, NULL) == 0 &&
		    m.hdr.type == CMP_TYPE_HELLO_REPLY &&
		    (n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0 &&
		    cmp_decode(buf, (size_t)n, &m, NULL) == 0 &&
		    m.hdr.type == CMP_TYPE_CREATE_ID_REPLY &&
		    !m.create_id_reply.status) {
			uint32_t id = m.create_id_reply.id;

			id_req(&m, CMP_TYPE_CONNECT, id);
			m.connect.service_id =
				(kind & 1) ? SID_NOBODY : SID_NOBODY + 1;
			m.connect.dst.lid = (seqno & 1) ? RB_NODE_LID(2) : 999;
			m.connect.max_cm_retries = 3;
			m.connect.remote_cm_response_timeout = 12;
			n = cmp_encode(&m, buf, sizeof(buf));
			if (n > 0)
				send(fd, buf, (size_t)n, MSG_NOSIGNAL);
		}
	}
	return fd;
}

static void churn(unsigned int total, unsigned int batch)
{
	int *fds = calloc(batch, sizeof(int));
	unsigned int done = 0, failed = 0;
	double t0 = rb_now_ms();

	CHECK(fds != NULL, "calloc");
	while (done < total) {
		unsigned int n = 0;

		for (; n < batch && done + n < total; n++) {
			fds[n] = churn_one((done + n) % 4);
			if (fds[n] < 0)
				failed++;
		}
		/* Some die at once, the rest after the daemon had a moment. */
		for (unsigned int i = 0; i < n; i += 2)
			if (fds[i] >= 0)
				close(fds[i]);
		usleep(20000);
		for (unsigned int i = 1; i < n; i += 2)
			if (fds[i] >= 0)
				close(fds[i]);
		done += n;
	}
	free(fds);
	printf("churn: %u clients in batches of %u in %.1f s (%u connects "
	       "failed)\n",
	       total, batch, (rb_now_ms() - t0) / 1e3, failed);
	CHECK(failed == 0, "%u connects failed", failed);
}

/* Forked libcmclient processes SIGKILLed at random points. */
static void killed(unsigned int total)
{
	unsigned int n = 0;
	double t0 = rb_now_ms();

	srand48(7);
	for (; n < total; n++) {
		long delay = lrand48() % 4000;
		pid_t pid = fork();

		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			struct cmc_channel *ch;
			struct cmc_id *id;
			struct cmc_conn_param p;

			if (cmc_open(rb_fab.d[0].sock, "rb-doomed", &ch))
				_exit(1);
			memset(&p, 0, sizeof(p));
			p.service_id = (n & 1) ? SID_NOBODY : SID_NOBODY + 1;
			p.dst.family = CMC_AF_LID;
			p.dst.lid = (n & 2) ? RB_NODE_LID(2) : 999;
			p.qp_num = 0x1000 + n;
			p.max_cm_retries = 3;
			p.remote_cm_response_timeout = 12;
			p.local_cm_response_timeout = 12;
			for (int i = 0; i < 8; i++) {
				if (cmc_create_id(ch, NULL, CMC_QP_RC, &id) ||
				    cmc_connect(id, &p))
					break;
				p.qp_num += 0x10000;
			}
			pause();
			_exit(0);
		}
		usleep((useconds_t)delay);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	printf("killed: %u forked clients SIGKILLed after 0-4 ms in %.1f s\n",
	       total, (rb_now_ms() - t0) / 1e3);
}

static void many_clients(void)
{
	unsigned int total = (unsigned int)rb_env_ulong("RB_CHURN", 10000);
	unsigned int forks = (unsigned int)rb_env_ulong("RB_KILLED", 500);
	uint64_t acc0 = rb_counter(mon, "clients_accepted") +
			rb_counter(mon, "clients_refused");
	uint64_t base = rb_counter(mon, "clients");
	uint64_t seen;

	churn(total, 200);
	killed(forks);
	/* Every churned client reached the daemon (accepted, or refused at
	 * max-clients); a forked one may die before it connects. Their
	 * connects succeeded, so the daemon must accept them all: wait until
	 * it has (a slow daemon may still have some in its listen queue). */
	{
		double end = rb_now_ms() + WAIT_CAP_MS;

		while ((seen = rb_counter(mon, "clients_accepted") +
			       rb_counter(mon, "clients_refused") - acc0) <
			       total &&
		       rb_now_ms() < end)
			usleep(50000);
	}
	CHECK(rb_wait_drained(mon, 1, 1, WAIT_CAP_MS),
	      "A keeps ids or records of dead clients");
	CHECK(wait_ctr("clients", base, false) == base,
	      "clients %llu, want %llu",
	      (unsigned long long)rb_counter(mon, "clients"),
	      (unsigned long long)base);
	seen = rb_counter(mon, "clients_accepted") +
	       rb_counter(mon, "clients_refused") - acc0;
	printf("daemon saw %llu of the %u + %u clients (refused in all: "
	       "%llu)\n",
	       (unsigned long long)seen, total, forks,
	       (unsigned long long)rb_counter(mon, "clients_refused"));
	CHECK(seen >= total && seen <= total + forks, "clients seen %llu",
	      (unsigned long long)seen);
	cases++;
	healthy("thousands of clients connecting and dying");
}

/* More clients than --max-clients: the extra ones are closed at once. */
static void too_many(void)
{
	uint64_t refused = rb_counter(mon, "clients_refused");
	uint64_t base = rb_counter(mon, "clients");
	unsigned int want = MAX_CLIENTS + 50, open = 0, eof = 0;
	int *fds = calloc(want, sizeof(int));
	uint64_t seen0 = rb_counter(mon, "clients_accepted") + refused;

	CHECK(fds != NULL, "calloc");
	for (unsigned int i = 0; i < want; i++) {
		fds[i] = raw_open_nb(false);
		if (fds[i] >= 0)
			open++;
		if (i % 100 == 99)
			usleep(50000); /* pace: the daemon's listen queue */
	}
	/* Wait until the daemon has taken every connection (accepted or
	 * refused: a refused one is closed at once), not for a fixed time. */
	{
		double end = rb_now_ms() + WAIT_CAP_MS;

		while (rb_counter(mon, "clients_accepted") +
				       rb_counter(mon, "clients_refused") <
			       seen0 + open &&
		       rb_now_ms() < end)
			usleep(20000);
	}
	for (unsigned int i = 0; i < want; i++) {
		uint8_t b[16];

		if (fds[i] >= 0 &&
		    recv(fds[i], b, sizeof(b), MSG_DONTWAIT) == 0)
			eof++;
	}
	CHECK(rb_counter(mon, "clients") <= MAX_CLIENTS, "clients %llu",
	      (unsigned long long)rb_counter(mon, "clients"));
	CHECK(rb_counter(mon, "clients_refused") >=
			      refused + want - MAX_CLIENTS - 0 &&
		      eof >= want - MAX_CLIENTS,
	      "refused %llu, EOF on %u of %u",
	      (unsigned long long)(rb_counter(mon, "clients_refused") -
				   refused),
	      eof, want);
	printf("max-clients %d: %u connected, %u closed by the daemon, "
	       "%llu refused\n",
	       MAX_CLIENTS, open, eof,
	       (unsigned long long)(rb_counter(mon, "clients_refused") -
				    refused));
	for (unsigned int i = 0; i < want; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	CHECK(wait_ctr("clients", base, false) == base,
	      "clients %llu, want %llu",
	      (unsigned long long)rb_counter(mon, "clients"),
	      (unsigned long long)base);
	cases++;
	healthy("more clients than max-clients");
}

int main(void)
{
	char q[16], ids_s[16], cl[16];
	/* --mra-timeout: see never_reads_events(). */
	const char *const extra_a[] = { "--packet-life-time",
					"8",
					"--mra-timeout",
					MRA_EXP,
					"--max-queued",
					q,
					"--max-ids",
					ids_s,
					"--max-clients",
					cl,
					NULL };
	const char *const extra_b[] = { "--packet-life-time", "8", NULL };
	double t0 = rb_now_ms();

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	snprintf(q, sizeof(q), "%d", MAX_QUEUED);
	snprintf(ids_s, sizeof(ids_s), "%d", MAX_IDS);
	snprintf(cl, sizeof(cl), "%d", MAX_CLIENTS);
	rb_pair_start("rbhostile", 5, extra_a, extra_b, &mon, &mon_b);
	victim_setup();

	before_hello();
	versions();
	hello_bad_header();
	malformed();
	ids();
	pipelining_misuse();
	never_reads();
	never_reads_events();
	zero_length();
	many_clients();
	too_many();

	victim_teardown();
	CHECK(rb_wait_drained(mon, 0, 0, 10000), "A keeps state");
	CHECK(rb_wait_drained(mon_b, 1, 1, 10000), "B keeps state");
	rb_print_counters(mon, "A",
			  "client,clients,events,ids,records,rej_,"
			  "req_");
	cmc_destroy_id(vlisten);
	cmc_close(va);
	cmc_close(vb);
	rb_pair_stop(mon, mon_b);
	if (late_failures) {
		fprintf(stderr,
			"rb_hostile: %u late check(s) failed (daemon "
			"bugs, see above)\n",
			late_failures);
		return 1;
	}
	printf("rb_hostile: PASS (%lu checks of replies, %.1f s)\n", cases,
	       (rb_now_ms() - t0) / 1e3);
	return 0;
}
