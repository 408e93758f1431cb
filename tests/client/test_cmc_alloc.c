/* SPDX-License-Identifier: MIT */
/*
 * libcmclient allocates nothing per event (issue 9): an acked event's item
 * is kept by its channel for the next one, up to a bound, and freed for
 * good once the channel is closed. Counted with the malloc interposer of
 * tests/unit/alloc_count.c in this (the test's) thread only, so the fake
 * daemon's thread does not count; under AddressSanitizer or valgrind the
 * counting is skipped and the rest still runs (and their leak checkers
 * see to the frees).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_count.h"
#include "cmclient.h"
#include "client_fixture.h"

/* cmclient.c's CMC_SPARE_MAX: the acked items a channel keeps. */
#define SPARE_MAX 256

#define NIDS 8

/* The ids setup() makes on the fixture's channel (its cmc_close() frees
 * them). */
static struct cmc_id *ids[NIDS];

static int setup(void **state)
{
	struct fx *x;

	fx_setup(state, "alloc", 60, NULL);
	x = *state;
	for (int i = 0; i < NIDS; i++)
		assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &ids[i]),
				 0);
	return 0;
}

/*
 * One round: an event for every id (so several are read in one batch and
 * queued together), each taken and acked. The daemon's end sends each
 * id's next event only after the ACK_EVENT of the one before.
 */
static void round_trip(struct fx *x, unsigned int tag)
{
	for (int i = 0; i < NIDS; i++) {
		struct cmp_msg m;

		fake_event(&m, cmc_id_num(ids[i]), CMP_EVENT_MRA_RECEIVED, i);
		m.event.mra_received.msg = CMP_CM_MSG_REQ;
		m.event.mra_received.service_timeout = (uint8_t)(tag % 32);
		assert_int_equal(fake_push(x->f, &m), 0);
	}
	for (int i = 0; i < NIDS; i++) {
		struct cmc_event *ev;

		assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
		assert_int_equal(ev->type, CMC_EVENT_MRA_RECEIVED);
		assert_int_equal(ev->u.mra.service_timeout, tag % 32);
		assert_int_equal(cmc_ack_event(ev), 0);
	}
}

static void steady(struct fx *x, const char *mode)
{
	enum { WARM = 16, K = 500 };
	struct ac_count n;

	for (int i = 0; i < WARM; i++)
		round_trip(x, i);
	ac_begin();
	for (int i = 0; i < K; i++)
		round_trip(x, i);
	n = ac_end();
	assert_int_equal(cmc_event_pending(x->ch), 0);
	if (!ac_enabled())
		skip();
	printf("# %s: %d events: %lu allocations, %lu resizes, %lu frees\n",
	       mode, K * NIDS, n.allocs, n.resizes, n.frees);
	assert_int_equal(n.allocs + n.resizes + n.frees, 0);
}

/* Blocking mode: every ack is a round trip to the daemon. */
static void test_sync_events_allocate_nothing(void **state)
{
	steady(*state, "sync");
}

/* Pipelined mode: acks are queued and leave with the next read. */
static void test_async_events_allocate_nothing(void **state)
{
	struct fx *x = *state;

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	steady(x, "async");
}

/*
 * A burst of held events gives back all but SPARE_MAX items when acked.
 * The events are sent raw (no per-id serialization) in slices the socket
 * takes, and acked after the id is destroyed, so that the acks need no
 * daemon and count only the library's own frees.
 */
static void test_burst_bounded(void **state)
{
	enum { BURST = SPARE_MAX + 344, SLICE = 50 };
	struct fx *x = *state;
	struct cmc_event **held = calloc(BURST, sizeof(*held));
	struct cmc_id *id = ids[0];
	struct ac_count n;

	_Static_assert(BURST % SLICE == 0, "whole slices");
	assert_non_null(held);
	for (int i = 0; i < BURST; i += SLICE) {
		for (int j = i; j < i + SLICE; j++) {
			struct cmp_msg m;

			fake_event(&m, cmc_id_num(id), CMP_EVENT_MRA_RECEIVED,
				   0);
			m.hdr.seq = (uint32_t)j + 1;
			m.event.mra_received.msg = CMP_CM_MSG_REQ;
			assert_int_equal(fake_send_msg(x->f, &m), 0);
		}
		for (int j = i; j < i + SLICE; j++)
			assert_int_equal(cmc_get_event_id(x->ch, id, &held[j],
							  FX_WAIT_MS),
					 0);
	}
	assert_int_equal(cmc_destroy_id(id), 0);
	ids[0] = NULL;
	ac_begin();
	for (int i = 0; i < BURST; i++)
		assert_int_equal(cmc_ack_event(held[i]), 0);
	n = ac_end();
	free(held);
	if (!ac_enabled())
		skip();
	/* The items beyond the bound, and the id with its last event. */
	assert_int_equal(n.allocs + n.resizes, 0);
	assert_int_equal(n.frees, BURST - SPARE_MAX + 1);
}

/*
 * Everything a channel allocated is freed by cmc_close() and the acks of
 * the events the application still held then, spares included: an item
 * acked after close is freed, not kept for a channel that is gone.
 */
static void test_close_frees_everything(void **state)
{
	struct fake *f;
	struct cmc_channel *ch;
	struct cmc_id *id;
	struct cmc_event *ev[3];
	struct ac_count n;

	(void)state;
	alarm(240);
	f = fake_start();
	assert_non_null(f);
	ac_begin();
	assert_int_equal(cmc_open_fd(f->client_fd, "alloc", &ch), 0);
	assert_int_equal(cmc_create_id(ch, NULL, CMC_QP_RC, &id), 0);
	/* Acked events: their items become the channel's spares. */
	for (int i = 0; i < 40; i++) {
		struct cmp_msg m;
		struct cmc_event *e;

		fake_event(&m, cmc_id_num(id), CMP_EVENT_MRA_RECEIVED, 0);
		m.event.mra_received.msg = CMP_CM_MSG_REQ;
		assert_int_equal(fake_push(f, &m), 0);
		assert_int_equal(cmc_get_event(ch, &e, FX_WAIT_MS), 0);
		assert_int_equal(cmc_ack_event(e), 0);
	}
	/* Held events: the daemon's end sends one per id until it is
	 * acked, so the others go raw. */
	for (int i = 0; i < 3; i++) {
		struct cmp_msg m;

		fake_event(&m, cmc_id_num(id), CMP_EVENT_MRA_RECEIVED, 0);
		m.hdr.seq = 1000 + (uint32_t)i;
		m.event.mra_received.msg = CMP_CM_MSG_REQ;
		assert_int_equal(fake_send_msg(f, &m), 0);
		assert_int_equal(cmc_get_event(ch, &ev[i], FX_WAIT_MS), 0);
	}
	cmc_close(ch);
	for (int i = 0; i < 3; i++)
		cmc_ack_event(ev[i]);
	n = ac_end();
	fake_stop(f);
	alarm(0);
	if (!ac_enabled())
		skip();
	assert_true(n.allocs > 0);
	assert_int_equal(n.allocs, n.frees);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_sync_events_allocate_nothing, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_async_events_allocate_nothing, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_burst_bounded, setup,
						fx_teardown),
		cmocka_unit_test(test_close_frees_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
