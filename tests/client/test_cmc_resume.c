/* SPDX-License-Identifier: MIT */
/*
 * libcmclient across a daemon restart (cmp.h, "Restarts"), against the
 * fake daemon listening on a path: what the application holds and what
 * is in flight survives, exactly once; blocking calls wait through the
 * gap; the application's fd stays the same and wakes it for each try;
 * and the channel dies with -ECONNRESET when the successor refuses the
 * session or the window passes.
 *
 * The gap is made by the test, not by timing: fake_shut() and
 * fake_close() happen between two calls into the library, so the library
 * meets them at a known point; fake_up() brings the successor up, before
 * the call that must resume or from a helper thread while one blocks.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "client_fixture.h"

struct rx {
	char dir[64];
	char path[96];
	struct fake *f;
	struct cmc_channel *ch;
};

/* The fake daemon at a fresh path, resume_ms its window; no channel. */
static struct rx *rx_start(uint32_t resume_ms)
{
	struct rx *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	/* A hang guard, as client_fixture.c's. */
	alarm(120);
	strcpy(r->dir, "/tmp/cmc_resume.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/cmd.sock", r->dir);
	r->f = fake_start_at(r->path);
	assert_non_null(r->f);
	r->f->resume_ms = resume_ms;
	return r;
}

static struct rx *rx_open(uint32_t resume_ms)
{
	struct rx *r = rx_start(resume_ms);

	assert_int_equal(cmc_open(r->path, "resume", &r->ch), 0);
	/* A call that never completes fails rather than hangs. */
	cmc_set_request_timeout(r->ch, FX_WAIT_MS);
	return r;
}

static void rx_end(struct rx *r)
{
	cmc_close(r->ch);
	fake_stop(r->f);
	rmdir(r->dir);
	free(r);
	alarm(0);
}

static const struct cmc_conn_param conn_param = {
	.service_id = 0x1000,
	.dst = { .family = CMC_AF_LID, .lid = 2 },
	.qp_num = 0x99,
	.start_psn = 7,
};

/* The fake daemon's whole restart, its successor up or not yet. */
static void restart(struct rx *r, bool up)
{
	fake_shut(r->f, 0);
	fake_close(r->f);
	if (up)
		fake_up(r->f);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Where in the fake daemon's record the first request of type is. */
static int req_index(struct fake *f, enum cmp_type type, unsigned int nth)
{
	int at = -1;

	pthread_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->nreqs; i++)
		if (f->reqs[i].hdr.type == type && nth-- == 0) {
			at = (int)i;
			break;
		}
	pthread_mutex_unlock(&f->lock);
	return at;
}

/* --- Sessions ---------------------------------------------------------- */

static void test_session_at_open(void **state)
{
	struct rx *r = rx_open(5000);

	(void)state;
	assert_int_equal(cmc_resume_window(r->ch), 5000);
	assert_int_equal(cmc_resume_count(r->ch), 0);
	assert_int_equal(fake_count(r->f, CMP_TYPE_SESSION), 1);
	rx_end(r);
}

/* A daemon that refuses SESSION (or hands nothing over) leaves the
 * channel as it always was: its death is final at once. */
static void test_no_session(void **state)
{
	struct rx *r = rx_start(5000);
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;

	(void)state;
	r->f->status[CMP_TYPE_SESSION] = -EPROTO;
	assert_int_equal(cmc_open(r->path, "resume", &r->ch), 0);
	assert_int_equal(cmc_resume_window(r->ch), 0);
	restart(r, true);
	assert_int_equal(cmc_list(r->ch, CMC_LIST_ALL, &cursor, e),
			 -ECONNRESET);
	assert_int_equal(fake_count(r->f, CMP_TYPE_RESUME), 0);
	rx_end(r);
}

/* A socketpair cannot be connected again: no SESSION is even asked. */
static void test_socketpair_no_session(void **state)
{
	struct fx *x;

	fx_setup((void **)&x, "pair", 30, NULL);
	assert_int_equal(cmc_resume_window(x->ch), 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_SESSION), 0);
	fx_teardown((void **)&x);
	(void)state;
}

/* --- Across the gap ---------------------------------------------------- */

/*
 * The event the application holds when the daemon restarts is acked with
 * its old seq afterwards, and the successor then sends the id's next one
 * (rule 2 carried over). The successor's window replaces the old one.
 */
static void test_held_event_acked_after_resume(void **state)
{
	struct rx *r = rx_open(5000);
	struct cmc_event *e1, *e2;
	struct cmc_id *id;
	struct cmp_msg m;
	const struct cmp_msg *ack;

	(void)state;
	assert_int_equal(cmc_create_id(r->ch, NULL, CMC_QP_RC, &id), 0);
	fake_event(&m, cmc_id_num(id), CMP_EVENT_DREQ_RECEIVED, 0);
	assert_int_equal(fake_push(r->f, &m), 0);
	fake_event(&m, cmc_id_num(id), CMP_EVENT_TIMEWAIT_EXIT, 0);
	assert_int_equal(fake_push(r->f, &m), 0);
	assert_int_equal(cmc_get_event(r->ch, &e1, FX_WAIT_MS), 0);
	assert_int_equal(e1->type, CMC_EVENT_DREQ_RECEIVED);

	r->f->resume_ms = 7000;
	restart(r, true);
	assert_int_equal(cmc_ack_event(e1), 0);
	assert_int_equal(cmc_resume_count(r->ch), 1);
	assert_int_equal(r->f->resumed, 1);
	assert_int_equal(r->f->acks, 1);
	ack = fake_last(r->f, CMP_TYPE_ACK_EVENT);
	assert_non_null(ack);
	assert_int_equal(ack->ack_event.seq, 1);
	assert_true(req_index(r->f, CMP_TYPE_RESUME, 0) <
		    req_index(r->f, CMP_TYPE_ACK_EVENT, 0));

	assert_int_equal(cmc_get_event(r->ch, &e2, FX_WAIT_MS), 0);
	assert_int_equal(e2->type, CMC_EVENT_TIMEWAIT_EXIT);
	assert_ptr_equal(e2->id, id);
	assert_int_equal(cmc_ack_event(e2), 0);
	assert_int_equal(r->f->acks, 2);
	/* The SESSION asked of the successor was answered before that
	 * ACK_EVENT's reply. */
	assert_int_equal(fake_count(r->f, CMP_TYPE_SESSION), 2);
	assert_int_equal(cmc_resume_window(r->ch), 7000);
	assert_int_equal(cmc_get_event(r->ch, &e2, 0), -EAGAIN);
	rx_end(r);
}

static void *up_later(void *arg)
{
	struct rx *r = arg;

	/* Not a verdict: the call under test waits either way. */
	poll(NULL, 0, 30);
	fake_up(r->f);
	return NULL;
}

/*
 * A blocking call made while the daemon is down (its socket closed, its
 * successor not listening yet) completes once the successor is up, with
 * the successor's answer, sent once. Twice in a row: the second restart
 * resumes with the session of the first.
 */
static void test_blocking_call_in_gap(void **state)
{
	struct rx *r = rx_open(5000);
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	pthread_t t;

	(void)state;
	for (unsigned int round = 1; round <= 2; round++) {
		uint64_t cursor = 0;

		restart(r, false);
		assert_int_equal(pthread_create(&t, NULL, up_later, r), 0);
		assert_int_equal(cmc_list(r->ch, CMC_LIST_ALL, &cursor, e), 2);
		assert_int_equal(e[0].id, 10);
		pthread_join(t, NULL);
		assert_int_equal(cmc_resume_count(r->ch), round);
		assert_int_equal(fake_count(r->f, CMP_TYPE_LIST), round);
		assert_int_equal(fake_count(r->f, CMP_TYPE_RESUME), round);
	}
	rx_end(r);
}

/*
 * The successor's socket is there but it has not accepted yet (systemd
 * holds the socket): the library's HELLO and RESUME wait in the backlog,
 * and a blocking call made then completes once they are answered.
 */
static void test_blocking_call_in_backlog(void **state)
{
	struct rx *r = rx_open(5000);
	struct cmc_event *e;
	struct cmc_id *id;
	struct cmc_id_info info;
	struct pollfd lp;

	(void)state;
	assert_int_equal(cmc_create_id(r->ch, NULL, CMC_QP_RC, &id), 0);
	r->f->query_info.qp_type = CMP_QP_TYPE_RC;
	r->f->hold_accept = true;
	restart(r, true);
	/* Reads the end, connects into the backlog, sends HELLO, RESUME. */
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -EAGAIN);
	lp = (struct pollfd){ .fd = r->f->lfd, .events = POLLIN };
	assert_int_equal(poll(&lp, 1, 0), 1);
	assert_int_equal(cmc_resume_count(r->ch), 0);
	pthread_mutex_lock(&r->f->lock);
	r->f->hold_accept = false;
	pthread_mutex_unlock(&r->f->lock);
	assert_int_equal(cmc_query_id(id, &info), 0);
	assert_int_equal(info.id, cmc_id_num(id));
	assert_int_equal(cmc_resume_count(r->ch), 1);
	assert_int_equal(r->f->accepted, 2);
	rx_end(r);
}

/*
 * Asynchronous CONNECTs (each awaits its reply, which names the new id):
 * four written before the restart, answered by the old daemon, two of
 * the answers written on the old socket and two left to the successor;
 * two more made after the old daemon shut its reading side, whose send
 * failed, resent to the successor. Every one gets its reply once (a
 * duplicate or a missing one would break the FIFO: -EPROTO, or an id
 * never numbered).
 */
static void test_async_exactly_once(void **state)
{
	struct rx *r = rx_open(5000);
	struct cmc_id *id[6];
	struct cmc_event *e;
	int fd = cmc_fd(r->ch);

	(void)state;
	assert_int_equal(cmc_set_async(r->ch, 1), 0);
	fake_pause(r->f);
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(cmc_create_id(r->ch, NULL, CMC_QP_RC, &id[i]),
				 0);
		assert_int_equal(cmc_connect(id[i], &conn_param), 0);
	}
	assert_int_equal(cmc_flush(r->ch), 0);
	fake_shut(r->f, 2);
	assert_int_equal(fake_count(r->f, CMP_TYPE_CONNECT), 4);
	for (unsigned int i = 4; i < 6; i++) {
		assert_int_equal(cmc_create_id(r->ch, NULL, CMC_QP_RC, &id[i]),
				 0);
		assert_int_equal(cmc_connect(id[i], &conn_param), 0);
	}
	/* EPIPE: queued for the successor, not an error. */
	assert_int_equal(cmc_flush(r->ch), 0);
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -EAGAIN);
	/* The two answers written on the old socket are read. */
	assert_int_not_equal(cmc_id_num(id[0]), 0);
	assert_int_not_equal(cmc_id_num(id[1]), 0);
	assert_int_equal(cmc_id_num(id[2]), 0);
	assert_int_equal(cmc_id_num(id[5]), 0);

	fake_close(r->f);
	fake_up(r->f);
	for (unsigned int n = 0;
	     cmc_id_num(id[2]) == 0 || cmc_id_num(id[3]) == 0 ||
	     cmc_id_num(id[4]) == 0 || cmc_id_num(id[5]) == 0;
	     n++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		assert_true(n < 10000);
		assert_int_equal(cmc_flush(r->ch), 0);
		assert_true(poll(&p, 1, FX_WAIT_MS) == 1);
		assert_int_equal(cmc_get_event(r->ch, &e, 0), -EAGAIN);
	}
	assert_int_equal(cmc_resume_count(r->ch), 1);
	for (unsigned int i = 0; i < 6; i++)
		for (unsigned int j = 0; j < i; j++)
			assert_int_not_equal(cmc_id_num(id[i]),
					     cmc_id_num(id[j]));
	/* Each CONNECT reached a daemon once; the last two after RESUME. */
	assert_int_equal(fake_count(r->f, CMP_TYPE_CONNECT), 6);
	assert_true(req_index(r->f, CMP_TYPE_RESUME, 0) >
		    req_index(r->f, CMP_TYPE_CONNECT, 3));
	assert_true(req_index(r->f, CMP_TYPE_RESUME, 0) <
		    req_index(r->f, CMP_TYPE_CONNECT, 4));
	assert_int_equal(cmc_set_async(r->ch, 0), 0);
	rx_end(r);
}

/*
 * The fd the application polls is the same throughout, goes readable
 * when a retry is due (nothing else could wake it: the old socket is
 * gone, no event is queued), and events sent meanwhile come once.
 */
static void test_fd_same_and_woken(void **state)
{
	struct rx *r = rx_open(5000);
	int fd = cmc_fd(r->ch);
	struct cmc_event *e;
	struct cmc_id *id;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmp_msg m;

	(void)state;
	assert_int_equal(cmc_create_id(r->ch, NULL, CMC_QP_RC, &id), 0);
	restart(r, false);
	/* Kept for the session: the successor sends it. */
	fake_event(&m, cmc_id_num(id), CMP_EVENT_DREQ_RECEIVED, 0);
	assert_int_equal(fake_push(r->f, &m), 0);
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -EAGAIN);
	assert_int_equal(poll(&p, 1, FX_WAIT_MS), 1);
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -EAGAIN);
	assert_int_equal(cmc_fd(r->ch), fd);
	assert_int_equal(cmc_resume_count(r->ch), 0);

	fake_up(r->f);
	while (cmc_get_event(r->ch, &e, 0) == -EAGAIN) {
		assert_int_equal(poll(&p, 1, FX_WAIT_MS), 1);
		assert_int_equal(cmc_fd(r->ch), fd);
	}
	assert_int_equal(e->type, CMC_EVENT_DREQ_RECEIVED);
	assert_ptr_equal(e->id, id);
	assert_int_equal(cmc_resume_count(r->ch), 1);
	assert_int_equal(cmc_ack_event(e), 0);
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -EAGAIN);
	assert_int_equal(cmc_fd(r->ch), fd);
	rx_end(r);
}

/* --- Giving up --------------------------------------------------------- */

/* A successor without the session: the channel dies as before. */
static void test_resume_refused(void **state)
{
	struct rx *r = rx_open(5000);
	struct pollfd p = { .fd = cmc_fd(r->ch), .events = POLLIN };
	struct cmc_id_info info;
	struct cmc_event *e;
	struct cmc_id *id;

	(void)state;
	assert_int_equal(cmc_create_id(r->ch, NULL, CMC_QP_RC, &id), 0);
	r->f->resume_status = -ENOENT;
	restart(r, true);
	assert_int_equal(cmc_query_id(id, &info), -ECONNRESET);
	assert_int_equal(fake_count(r->f, CMP_TYPE_RESUME), 1);
	assert_int_equal(cmc_resume_count(r->ch), 0);
	/* The application's loop wakes to learn it. */
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -ECONNRESET);
	assert_int_equal(cmc_query_id(id, &info), -ECONNRESET);
	rx_end(r);
}

/* Another process's session (-EPERM): the same. */
static void test_resume_eperm(void **state)
{
	struct rx *r = rx_open(5000);
	struct cmc_event *e;

	(void)state;
	r->f->resume_status = -EPERM;
	restart(r, true);
	while (cmc_get_event(r->ch, &e, FX_WAIT_MS) == -EAGAIN)
		;
	assert_int_equal(cmc_get_event(r->ch, &e, 0), -ECONNRESET);
	assert_int_equal(cmc_resume_count(r->ch), 0);
	rx_end(r);
}

/*
 * No successor within the window (and its margin): -ECONNRESET, after
 * trying for at least the window (a lower bound only, never a race).
 */
static void test_window_expires(void **state)
{
	struct rx *r = rx_open(50);
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;
	int64_t t0;

	(void)state;
	assert_int_equal(cmc_resume_window(r->ch), 50);
	restart(r, false);
	t0 = now_ms();
	assert_int_equal(cmc_list(r->ch, CMC_LIST_ALL, &cursor, e),
			 -ECONNRESET);
	assert_true(now_ms() - t0 >= 50);
	assert_int_equal(fake_count(r->f, CMP_TYPE_RESUME), 0);
	rx_end(r);
}

/* The request timeout still bounds a blocking call in the gap. */
static void test_timeout_in_gap(void **state)
{
	struct rx *r = rx_open(60000);
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;

	(void)state;
	cmc_set_request_timeout(r->ch, 100);
	restart(r, false);
	assert_int_equal(cmc_list(r->ch, CMC_LIST_ALL, &cursor, e), -ETIMEDOUT);
	rx_end(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_at_open),
		cmocka_unit_test(test_no_session),
		cmocka_unit_test(test_socketpair_no_session),
		cmocka_unit_test(test_held_event_acked_after_resume),
		cmocka_unit_test(test_blocking_call_in_gap),
		cmocka_unit_test(test_blocking_call_in_backlog),
		cmocka_unit_test(test_async_exactly_once),
		cmocka_unit_test(test_fd_same_and_woken),
		cmocka_unit_test(test_resume_refused),
		cmocka_unit_test(test_resume_eperm),
		cmocka_unit_test(test_window_expires),
		cmocka_unit_test(test_timeout_in_gap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
