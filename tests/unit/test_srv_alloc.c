// SPDX-License-Identifier: MIT
/*
 * The daemon's client server (daemon/server.c) allocates nothing per
 * datagram in steady state (issue 9): small output nodes are reused from a
 * bounded spare list, larger ones are allocated to size as before. The
 * server runs on a real libev loop and a real socket, with this test as
 * its client in the same thread, so every allocation is the server's or
 * libev's. Counted with alloc_count.c; under AddressSanitizer or valgrind
 * the counting is skipped and the rest still runs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <ev.h>

#include "alloc_count.h"
#include "cmp.h"
#include "log.h"
#include "server.h"

/* server.c's SRV_OUT_SPARE_MAX: the written nodes the server keeps. */
#define SPARE_MAX 1024
/* Requests per round: well under the server's read budget. */
#define ROUND 64

struct fx {
	struct ev_loop *loop;
	struct srv *srv;
	struct srv_client *client; /* the server's handle of us */
	char dir[64];
	char path[128];
	int fd; /* our end */
	uint32_t seq;
	unsigned int got; /* datagrams read */
	struct cmp_msg last; /* the last one, decoded */
	uint8_t buf[CMP_MSG_MAX];
};

static void quiet(void *ctx, enum log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	(void)line;
}

/*
 * SET_CONTEXT succeeds and causes one event for its id (which the server
 * sends after the reply); LIST answers a full batch, a datagram longer
 * than a small node.
 */
static void hook_request(void *ctx, struct srv_client *c,
			 const struct cmp_msg *req, struct cmp_msg *reply)
{
	struct fx *x = ctx;

	x->client = c;
	if (req->hdr.type == CMP_TYPE_SET_CONTEXT) {
		struct cmp_msg ev;

		cmp_msg_init(&ev, CMP_TYPE_EVENT, 0);
		ev.event.id = req->set_context.id;
		ev.event.type = CMP_EVENT_MRA_RECEIVED;
		ev.event.context = req->set_context.context;
		ev.event.mra_received.msg = CMP_CM_MSG_REQ;
		assert_int_equal(srv_send(c, &ev), 0);
	} else if (req->hdr.type == CMP_TYPE_LIST) {
		struct cmp_list_reply *r = &reply->list_reply;

		r->count = CMP_LIST_BATCH_MAX;
		for (uint32_t i = 0; i < r->count; i++) {
			r->entries[i].id = i + 1;
			r->entries[i].qp_type = CMP_QP_TYPE_RC;
			r->entries[i].service_id = req->list.cursor + i;
		}
	} else {
		reply->reply.status = -EOPNOTSUPP;
	}
}

static void hook_gone(void *ctx, struct srv_client *c)
{
	struct fx *x = ctx;

	if (x->client == c)
		x->client = NULL;
}

static const struct srv_hooks hooks = {
	.request = hook_request,
	.gone = hook_gone,
};

static void send_msg(struct fx *x, struct cmp_msg *m)
{
	ssize_t n = cmp_encode(m, x->buf, sizeof(x->buf));

	assert_true(n > 0);
	assert_int_equal(send(x->fd, x->buf, (size_t)n, 0), n);
}

/* Run the loop and read until 'want' more datagrams came. */
static void read_n(struct fx *x, unsigned int want)
{
	unsigned int until = x->got + want;

	for (int spins = 0; x->got < until; spins++) {
		ssize_t n;

		assert_true(spins < 1000000);
		ev_run(x->loop, EVRUN_NOWAIT);
		while (x->got < until &&
		       (n = recv(x->fd, x->buf, sizeof(x->buf), MSG_DONTWAIT)) >
			       0) {
			const char *why = NULL;

			if (cmp_decode(x->buf, (size_t)n, &x->last, &why))
				fail_msg("undecodable datagram: %s", why);
			x->got++;
		}
	}
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct srv_config cfg = {
		.listen_fd = -1,
		.max_clients = 4,
		.max_ids = 100,
		.max_queued = 100000,
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct cmp_msg m;

	alarm(60);
	log_set_sink(quiet, NULL);
	assert_non_null(x);
	strcpy(x->dir, "/tmp/srv-alloc-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->path, sizeof(x->path), "%s/sock", x->dir);
	cfg.path = x->path;
	x->loop = ev_loop_new(EVFLAG_AUTO);
	assert_non_null(x->loop);
	x->srv = srv_new(x->loop, &cfg, &hooks, x);
	assert_non_null(x->srv);
	x->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(x->fd >= 0);
	strcpy(sa.sun_path, x->path);
	assert_int_equal(connect(x->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cmp_msg_init(&m, CMP_TYPE_HELLO, ++x->seq);
	m.hello.min_version = CMP_VERSION_MIN;
	m.hello.max_version = CMP_VERSION_MAX;
	strcpy(m.hello.name, "alloc");
	send_msg(x, &m);
	read_n(x, 1);
	assert_int_equal(x->last.hdr.type, CMP_TYPE_HELLO_REPLY);
	assert_int_equal(x->last.hello_reply.status, 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	close(x->fd);
	srv_free(x->srv);
	ev_loop_destroy(x->loop);
	rmdir(x->dir);
	free(x);
	log_set_sink(NULL, NULL);
	alarm(0);
	return 0;
}

/* ROUND requests, each answered by its reply and then its event. */
static void round_trip(struct fx *x)
{
	uint32_t first = x->seq + 1;

	for (int i = 0; i < ROUND; i++) {
		struct cmp_msg m;

		cmp_msg_init(&m, CMP_TYPE_SET_CONTEXT, ++x->seq);
		m.set_context.id = 1 + (uint32_t)i;
		m.set_context.context = x->seq;
		send_msg(x, &m);
	}
	for (int i = 0; i < ROUND; i++) {
		read_n(x, 1);
		assert_int_equal(x->last.hdr.type, CMP_TYPE_SET_CONTEXT_REPLY);
		assert_int_equal(x->last.hdr.seq, first + (uint32_t)i);
		assert_int_equal(x->last.reply.status, 0);
		read_n(x, 1);
		assert_int_equal(x->last.hdr.type, CMP_TYPE_EVENT);
		assert_int_equal(x->last.event.id, 1 + (uint32_t)i);
		assert_int_equal(x->last.event.context, first + (uint32_t)i);
	}
}

/* After a warm-up, requests, replies and events allocate nothing. */
static void test_steady_state_allocates_nothing(void **state)
{
	enum { WARM = 8, K = 200 };
	struct fx *x = *state;
	struct ac_count n;

	for (int i = 0; i < WARM; i++)
		round_trip(x);
	ac_begin();
	for (int i = 0; i < K; i++)
		round_trip(x);
	n = ac_end();
	if (!ac_enabled())
		skip();
	printf("# %d datagrams: %lu allocations, %lu resizes, %lu frees\n",
	       2 * ROUND * K, n.allocs, n.resizes, n.frees);
	assert_int_equal(n.allocs + n.resizes + n.frees, 0);
}

/* A datagram longer than a small node is allocated to size and freed. */
static void test_long_reply(void **state)
{
	struct fx *x = *state;
	struct ac_count n;
	struct cmp_msg m;

	round_trip(x);
	for (int i = 0; i < 3; i++) {
		cmp_msg_init(&m, CMP_TYPE_LIST, ++x->seq);
		m.list.cursor = 1000 * (uint64_t)i;
		m.list.filter = CMP_LIST_FILTER_ALL;
		ac_begin();
		send_msg(x, &m);
		read_n(x, 1);
		n = ac_end();
		assert_int_equal(x->last.hdr.type, CMP_TYPE_LIST_REPLY);
		assert_int_equal(x->last.hdr.seq, x->seq);
		assert_int_equal(x->last.list_reply.count, CMP_LIST_BATCH_MAX);
		for (uint32_t j = 0; j < CMP_LIST_BATCH_MAX; j++) {
			const struct cmp_list_entry *e =
				&x->last.list_reply.entries[j];

			assert_int_equal(e->id, j + 1);
			assert_int_equal(e->service_id, m.list.cursor + j);
		}
		if (ac_enabled()) {
			assert_int_equal(n.allocs, 1);
			assert_int_equal(n.frees, 1);
		}
		/* Small ones still come from the spares. */
		ac_begin();
		round_trip(x);
		n = ac_end();
		if (ac_enabled())
			assert_int_equal(n.allocs + n.frees, 0);
	}
}

/*
 * A burst of queued events: once written, all but SPARE_MAX of their
 * nodes are freed, however many spares there were before (every node
 * that exists at the end is a spare). srv_free frees those.
 */
static void test_burst_bounded(void **state)
{
	enum { BURST = 3 * SPARE_MAX };
	struct fx *x = *state;
	struct ac_count n;

	round_trip(x);
	assert_non_null(x->client);
	ac_begin();
	for (int i = 0; i < BURST; i++) {
		struct cmp_msg ev;

		cmp_msg_init(&ev, CMP_TYPE_EVENT, 0);
		ev.event.id = 1;
		ev.event.type = CMP_EVENT_MRA_RECEIVED;
		ev.event.context = (uint64_t)i;
		ev.event.mra_received.msg = CMP_CM_MSG_REQ;
		assert_int_equal(srv_send(x->client, &ev), 0);
	}
	for (int i = 0; i < BURST; i++) {
		read_n(x, 1);
		assert_int_equal(x->last.hdr.type, CMP_TYPE_EVENT);
		assert_int_equal(x->last.event.context, (uint64_t)i);
	}
	n = ac_end();
	if (!ac_enabled())
		skip();
	assert_int_equal(n.frees, BURST - SPARE_MAX);
	assert_int_equal(n.resizes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_steady_state_allocates_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_reply, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_burst_bounded, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
