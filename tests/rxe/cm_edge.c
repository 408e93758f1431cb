// SPDX-License-Identifier: MIT
/*
 * cm_edge: the CM corners of issue 5 through a running cmd on rxe, with
 * libcmclient and no QPs (made-up QP numbers, as cmc_ping does: the CM
 * only carries them). Run by e2e.sh in the VM:
 *
 *   cm_edge SOCKET [-k N]
 *
 * backlog  A listener with backlog 1 and three REQs: exactly one
 *          REQ_RECEIVED until it is answered, the listener shows 1/1
 *          credits and 2 held REQs; accept -> the next one is delivered;
 *          reject it with private data -> the client's REJ_RECEIVED
 *          carries reason 28 and those bytes; the third is accepted.
 *          Then one connection is ended by the client (DREQ from the
 *          active side), the other by the server (passive side), and
 *          every id sees TIMEWAIT_EXIT.
 * killed   A child process connects and is SIGKILLed once its REQ has
 *          been delivered: before the server answers (the server's id
 *          must get REJ_RECEIVED), and after it accepted (REP_SENT: REJ
 *          too). The daemon sends those REJs when it drops the dead
 *          client's ids.
 * clean    With every channel closed, the daemon's counters "ids" and
 *          "records" drop to 0.
 *
 * -k N runs only the killed-client checks, N times (to chase races).
 * Exit 0 when every check passed, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxe_common.h"

#define SVC_BACKLOG 0x0000000000e2eb10ull
#define SVC_KILLED 0x0000000000e2ed1eull
#define WAIT_MS 30000 /* a hang guard sized for the TCG VM, not a speed */
#define REJ_TEXT "backlog test: not you"

static const char *sock;
static uint32_t next_qpn;
static unsigned int repeat_killed;

static uint32_t qpn(void)
{
	next_qpn = (next_qpn + 1) & 0xffffff;
	if (next_qpn < 2)
		next_qpn = 2;
	return next_qpn;
}

/* The next event (MRA_RECEIVED skipped) must be of this type. */
static struct cmc_event *expect(struct cmc_channel *ch, struct cmc_id *id,
				enum cmc_event_type type, const char *what)
{
	return rxe_expect(ch, id, type, WAIT_MS, what);
}

static int connect_to(struct cmc_id *id, uint64_t service_id)
{
	struct cmc_conn_param p;

	rxe_conn_param(&p, qpn());
	p.service_id = service_id;
	p.dst.family = CMC_AF_IPV4;
	inet_pton(AF_INET, "127.0.0.1", p.dst.addr);
	return cmc_connect(id, &p);
}

static int accept_id(struct cmc_id *id)
{
	struct cmc_accept_param ap;

	rxe_accept_param(&ap, qpn());
	return cmc_accept(id, &ap);
}

/* A server channel (*sv, NULL if it cannot be opened) listening on svc. */
static int open_listener(struct cmc_channel **sv, struct cmc_id **l,
			 uint64_t svc, unsigned int backlog)
{
	int r = cmc_open(sock, "cm_edge-server", sv);

	if (!r)
		r = cmc_create_id(*sv, NULL, CMC_QP_RC, l);
	if (!r)
		r = cmc_listen(*l, svc, ~0ull, backlog, NULL);
	CHECK(!r, "listener: %s", cmc_strerror(r));
	return r;
}

/* The listener's row in the daemon's list. */
static bool listener_row(struct cmc_channel *ch, struct cmc_id *l,
			 struct cmc_list_entry *out)
{
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;
	int n;

	do {
		n = cmc_list(ch, CMC_LIST_LISTENERS, &cursor, e);
		if (n < 0)
			return false;
		for (int i = 0; i < n; i++)
			if (e[i].id == cmc_id_num(l)) {
				*out = e[i];
				return true;
			}
	} while (cursor);
	return false;
}

/* Wait for TIMEWAIT_EXIT on id (after DREP_RECEIVED or our DREP). */
static void to_timewait_exit(struct cmc_channel *ch, struct cmc_id *id,
			     const char *what)
{
	struct cmc_event *ev = expect(ch, id, CMC_EVENT_TIMEWAIT_EXIT, what);

	cmc_ack_event(ev);
}

static void test_backlog(void)
{
	struct cmc_channel *sv = NULL, *cl = NULL;
	struct cmc_id *l = NULL, *c[3] = { 0 }, *a = NULL, *b = NULL, *d = NULL,
		      *ca = NULL, *cd = NULL;
	struct cmc_list_entry row;
	struct cmc_event *ev;
	int r;

	printf("backlog: listener backlog 1, three REQs\n");
	if (open_listener(&sv, &l, SVC_BACKLOG, 1))
		goto out;
	r = cmc_open(sock, "cm_edge-client", &cl);
	CHECK(!r, "client: %s", cmc_strerror(r));
	if (r)
		goto out;
	for (uintptr_t i = 0; i < 3; i++) {
		r = cmc_create_id(cl, (void *)i, CMC_QP_RC, &c[i]);
		if (!r)
			r = connect_to(c[i], SVC_BACKLOG);
		CHECK(!r, "connect %u: %s", (unsigned int)i, cmc_strerror(r));
		if (r)
			goto out;
	}

	/* One credit: one REQ_RECEIVED, the other two held. */
	ev = expect(sv, NULL, CMC_EVENT_REQ_RECEIVED, "server: first REQ");
	if (!ev)
		goto out;
	a = ev->id;
	cmc_ack_event(ev);
	ev = rxe_next_event(sv, NULL, 1500);
	CHECK(!ev, "a second REQ_RECEIVED came with no credit left (%s)",
	      ev ? cmc_event_str(ev->type) : "");
	if (ev)
		goto out;
	printf("  no second REQ_RECEIVED in 1.5 s while the first is "
	       "unanswered\n");
	CHECK(listener_row(sv, l, &row), "listener not listed");
	CHECK(row.backlog == 1 && row.credits_in_use == 1 && row.held_reqs == 2,
	      "listener credits %u/%u, held %u; want 1/1, held 2",
	      row.credits_in_use, row.backlog, row.held_reqs);
	printf("  listener: credits %u/%u, held %u, req_held counter %" PRId64
	       "\n",
	       row.credits_in_use, row.backlog, row.held_reqs,
	       rxe_counter(sv, "req_held"));

	/* Accept the first: its credit comes back, the next REQ follows. */
	rxe_accept_establish(sv, a, qpn(), cl, &ca, WAIT_MS, "first conn");
	if (!ca)
		goto out;
	ev = expect(sv, NULL, CMC_EVENT_REQ_RECEIVED,
		    "server: second REQ after the accept");
	if (!ev)
		goto out;
	b = ev->id;
	cmc_ack_event(ev);

	/* Reject the second, with private data. */
	r = cmc_reject(b, 28, NULL, 0, REJ_TEXT, sizeof(REJ_TEXT));
	CHECK(!r, "reject: %s", cmc_strerror(r));
	ev = expect(cl, NULL, CMC_EVENT_REJ_RECEIVED, "client: REJ");
	if (!ev)
		goto out;
	CHECK(ev->u.rej.reason == 28, "REJ reason %u, want 28",
	      ev->u.rej.reason);
	CHECK(ev->u.rej.private_data_len >= sizeof(REJ_TEXT) &&
		      !memcmp(ev->u.rej.private_data, REJ_TEXT,
			      sizeof(REJ_TEXT)),
	      "REJ private data \"%.*s\", want \"%s\"", (int)sizeof(REJ_TEXT),
	      (const char *)ev->u.rej.private_data, REJ_TEXT);
	printf("  REJ reason %u, private data \"%s\"\n", ev->u.rej.reason,
	       (const char *)ev->u.rej.private_data);
	cmc_ack_event(ev);
	cmc_destroy_id(b);
	b = NULL;

	/* The third, after the reject returned the credit. */
	ev = expect(sv, NULL, CMC_EVENT_REQ_RECEIVED,
		    "server: third REQ after the reject");
	if (!ev)
		goto out;
	d = ev->id;
	cmc_ack_event(ev);
	rxe_accept_establish(sv, d, qpn(), cl, &cd, WAIT_MS, "third conn");
	if (!cd)
		goto out;
	CHECK(listener_row(sv, l, &row) && row.credits_in_use == 0 &&
		      row.held_reqs == 0,
	      "listener credits %u/%u, held %u; want 0 and 0",
	      row.credits_in_use, row.backlog, row.held_reqs);

	/* Disconnect from each side. */
	printf("disconnect: client ends the first, server the third\n");
	r = cmc_disconnect(ca, NULL, 0);
	CHECK(!r, "client DREQ: %s", cmc_strerror(r));
	r = cmc_disconnect(d, NULL, 0);
	CHECK(!r, "server DREQ: %s", cmc_strerror(r));
	ev = expect(sv, a, CMC_EVENT_DREQ_RECEIVED, "server: DREQ");
	if (ev) {
		r = cmc_disconnect(a, NULL, 0);
		CHECK(!r, "server DREP: %s", cmc_strerror(r));
		cmc_ack_event(ev);
	}
	ev = expect(cl, cd, CMC_EVENT_DREQ_RECEIVED, "client: DREQ");
	if (ev) {
		r = cmc_disconnect(cd, NULL, 0);
		CHECK(!r, "client DREP: %s", cmc_strerror(r));
		cmc_ack_event(ev);
	}
	ev = expect(cl, ca, CMC_EVENT_DREP_RECEIVED, "client: DREP");
	cmc_ack_event(ev);
	ev = expect(sv, d, CMC_EVENT_DREP_RECEIVED, "server: DREP");
	cmc_ack_event(ev);
	to_timewait_exit(cl, ca, "client, first conn");
	to_timewait_exit(sv, a, "server, first conn");
	to_timewait_exit(cl, cd, "client, third conn");
	to_timewait_exit(sv, d, "server, third conn");
	printf("  timewait over on all four ids\n");
out:
	cmc_close(cl);
	cmc_close(sv);
}

/*
 * A child connects and stops; once the server holds its REQ (and, with
 * accept_first, has answered it) the child is SIGKILLed. The daemon drops
 * the dead client's id and sends the REJ its state needs.
 */
static void test_killed(struct cmc_channel *sv, bool accept_first)
{
	struct cmc_event *ev;
	struct cmc_id *k;
	int pfd[2], r, status;
	char byte = 0;
	pid_t pid;

	printf("killed: client SIGKILLed after its REQ%s\n",
	       accept_first ? ", once the server accepted" : "");
	if (pipe(pfd)) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct cmc_channel *ch;
		struct cmc_id *id;

		close(pfd[0]);
		next_qpn += 1000;
		if (cmc_open(sock, "cm_edge-victim", &ch) ||
		    cmc_create_id(ch, NULL, CMC_QP_RC, &id) ||
		    connect_to(id, SVC_KILLED))
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &byte, 1) != 1) {
		CHECK(0, "child did not connect");
		close(pfd[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	close(pfd[0]);
	ev = expect(sv, NULL, CMC_EVENT_REQ_RECEIVED, "server: REQ");
	if (!ev) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	k = ev->id;
	cmc_ack_event(ev);
	if (accept_first) {
		r = accept_id(k);
		CHECK(!r, "accept: %s", cmc_strerror(r));
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "child status 0x%x", status);
	printf("  client %d killed\n", (int)pid);
	ev = rxe_next_event(sv, k, WAIT_MS);
	CHECK(ev && (ev->type == CMC_EVENT_REJ_RECEIVED ||
		     ev->type == CMC_EVENT_CONNECT_ERROR),
	      "server id: want REJ_RECEIVED or CONNECT_ERROR, got %s",
	      ev ? cmc_event_str(ev->type) : "nothing");
	if (ev) {
		printf("  server: %s", cmc_event_str(ev->type));
		if (ev->type == CMC_EVENT_REJ_RECEIVED)
			printf(", reason %u", ev->u.rej.reason);
		else
			printf(", status %s", cmc_strerror(ev->status));
		printf("\n");
	}
	cmc_ack_event(ev);
	cmc_destroy_id(k);
}

static void test_clean(void)
{
	struct cmc_channel *ch;
	int64_t ids = -1, records = -1;
	double end = rxe_now_s() + 60; /* timewaits end; a leak never does */
	int r;

	printf("clean: nothing left in the daemon\n");
	r = cmc_open(sock, "cm_edge-check", &ch);
	CHECK(!r, "open: %s", cmc_strerror(r));
	if (r)
		return;
	do {
		ids = rxe_counter(ch, "ids");
		records = rxe_counter(ch, "records");
		if (!ids && !records)
			break;
		usleep(100000);
	} while (rxe_now_s() < end);
	printf("  ids %" PRId64 ", records %" PRId64 "\n", ids, records);
	CHECK(ids == 0 && records == 0, "ids %" PRId64 ", records %" PRId64,
	      ids, records);
	cmc_close(ch);
}

int main(int argc, char **argv)
{
	struct cmc_channel *sv;
	struct cmc_id *l;
	double t0 = rxe_now_s();
	int r;

	if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "-k"))) {
		fprintf(stderr, "usage: cm_edge SOCKET [-k N]\n");
		return 2;
	}
	sock = argv[1];
	/* -k N: only the killed-client tests, N times (to chase races). */
	if (argc == 4)
		repeat_killed = (unsigned int)atoi(argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand48((long)time(NULL) ^ getpid());
	next_qpn = (uint32_t)lrand48() & 0xffffff;

	if (!repeat_killed)
		test_backlog();

	r = open_listener(&sv, &l, SVC_KILLED, 4);
	for (unsigned int i = 0; !r && i < (repeat_killed ? repeat_killed : 1);
	     i++) {
		test_killed(sv, false);
		test_killed(sv, true);
	}
	cmc_close(sv);

	test_clean();
	printf("cm_edge: %s (%d failure(s)) in %.2f s\n",
	       rxe_failures ? "FAIL" : "PASS", rxe_failures, rxe_now_s() - t0);
	return rxe_failures ? 1 : 0;
}
