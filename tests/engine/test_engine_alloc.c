// SPDX-License-Identifier: MIT
/*
 * The engine allocates nothing per event (issue 9): acked event items are
 * reused from a bounded per-engine spare list (evq.c). Counted with the
 * malloc interposer of tests/unit/alloc_count.c; under AddressSanitizer
 * the counting is skipped and the rest still runs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_count.h"
#include "harness.h"

#define SID 0x1000ULL
#define GUID_A 0x0002c90300a0a0a0ULL
#define GUID_B 0x0002c90300b0b0b0ULL

struct pair {
	struct h_side a, b;
	uint32_t lid;
};

static void pair_init(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	h_init(&p->a, GUID_A, 1, false, 11);
	h_init(&p->b, GUID_B, 2, false, 22);
	/* The harness forgets what was consumed, so it allocates nothing
	 * after its first cycles either. */
	p->a.compact = p->b.compact = true;
	p->lid = h_listen(&p->b, SID, 8);
}

static void pair_fini(struct pair *p)
{
	h_fini(&p->a);
	h_fini(&p->b);
}

/* An established pair: its ids (bidp may be NULL); returns a's record. */
static struct conn *established(struct pair *p, uint32_t *aidp, uint32_t *bidp)
{
	uint32_t aid, bid;

	aid = h_connect(&p->a, &p->b, SID);
	h_deliver(&p->a, &p->b);
	bid = h_ev(&p->b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&p->b, bid), 0);
	h_deliver(&p->b, &p->a);
	h_ev(&p->a, ENG_EV_REP_RECEIVED, aid);
	assert_int_equal(eng_rtu(p->a.node.eng, aid, NULL, h_now), 0);
	h_deliver(&p->a, &p->b);
	h_ev(&p->b, ENG_EV_RTU_RECEIVED, bid);
	*aidp = aid;
	if (bidp)
		*bidp = bid;
	return ctab_local_find(&p->a.node.eng->by_local, aid);
}

/* A fresh pair with one connection up: A's record of it. */
static struct conn *pair_established(struct pair *p, uint32_t *aidp)
{
	struct conn *c;

	pair_init(p);
	c = established(p, aidp, NULL);
	assert_non_null(c);
	return c;
}

/*
 * One connection's whole life, every event taken and acked: seven events
 * (REQ, REP, RTU, DREQ, DREP received, two timewait exits) and two
 * records, one per side.
 */
static void one_connection(struct pair *p)
{
	uint32_t aid, bid;

	established(p, &aid, &bid);
	assert_int_equal(eng_disconnect(p->a.node.eng, aid, NULL, 0, h_now), 0);
	h_deliver(&p->a, &p->b);
	h_ev(&p->b, ENG_EV_DREQ_RECEIVED, bid);
	assert_int_equal(eng_disconnect(p->b.node.eng, bid, NULL, 0, h_now), 0);
	h_deliver(&p->b, &p->a);
	h_ev(&p->a, ENG_EV_DREP_RECEIVED, aid);
	h_settle(&p->a, &p->b);
	h_ev(&p->a, ENG_EV_TIMEWAIT_EXIT, aid);
	h_ev(&p->b, ENG_EV_TIMEWAIT_EXIT, bid);
	assert_int_equal(eng_destroy(p->a.node.eng, aid, h_now), 0);
	assert_int_equal(eng_destroy(p->b.node.eng, bid, h_now), 0);
	assert_int_equal(h_events_left(&p->a) + h_events_left(&p->b), 0);
}

/*
 * After a warm-up, K connections cost their 2K records and nothing else:
 * the 7K events (and the MADs, timers and table entries) allocate nothing.
 */
static void test_connections_allocate_only_records(void **state)
{
	enum { WARM = 64, K = 500 };
	struct pair p;
	struct ac_count n;

	(void)state;
	pair_init(&p);
	for (int i = 0; i < WARM; i++)
		one_connection(&p);
	ac_begin();
	for (int i = 0; i < K; i++)
		one_connection(&p);
	n = ac_end();
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	assert_int_equal(eng_record_count(p.b.node.eng), 1);
	pair_fini(&p);
	if (!ac_enabled())
		skip();
	printf("# %d connections: %lu allocations, %lu resizes, %lu frees\n", K,
	       n.allocs, n.resizes, n.frees);
	assert_int_equal(n.allocs, 2 * K);
	assert_int_equal(n.resizes, 0);
	assert_int_equal(n.frees, 2 * K);
}

/*
 * A reused item shows only its own event: no message, status or listener
 * of the event it carried before.
 */
static void test_reused_item_is_clean(void **state)
{
	struct pair p;
	struct cm_msg m;
	struct eng_event ev;
	struct conn *c;
	uint32_t aid;

	(void)state;
	c = pair_established(&p, &aid);
	memset(&m, 0xa5, sizeof(m));
	m.type = CM_MSG_LAP;
	evq_push(c, ENG_EV_LAP_ERROR, -ETIMEDOUT, &m);
	ev = h_ev(&p.a, ENG_EV_LAP_ERROR, aid);
	assert_true(ev.has_msg);
	assert_int_equal(ev.status, -ETIMEDOUT);
	assert_int_equal(p.a.node.eng->evq_spare.n, 1);

	evq_push(c, ENG_EV_APR_RECEIVED, 0, NULL);
	assert_int_equal(p.a.node.eng->evq_spare.n, 0); /* it was reused */
	ev = h_ev(&p.a, ENG_EV_APR_RECEIVED, aid);
	assert_false(ev.has_msg);
	assert_int_equal(ev.status, 0);
	assert_int_equal(ev.listen_id, 0);
	assert_int_equal(ev.listen_context, 0);
	memset(&m, 0, sizeof(m));
	assert_memory_equal(&ev.msg, &m, sizeof(m));
	pair_fini(&p);
}

/*
 * A burst of queued events returns its items when acked, except the
 * EVQ_SPARE_MAX the engine keeps; then steady push/ack cycles, several
 * events deep, allocate nothing. eng_free frees the spares (the leak
 * checkers of the ASan and valgrind runs see to it).
 */
static void test_spares_bounded_and_reused(void **state)
{
	enum { BURST = EVQ_SPARE_MAX + 500, DEPTH = 4, K = 1000 };
	struct pair p;
	struct ac_count burst, steady;
	struct conn *c;
	uint32_t aid;

	(void)state;
	c = pair_established(&p, &aid);
	for (int i = 0; i < BURST; i++)
		evq_push(c, ENG_EV_LAP_ERROR, i, NULL);
	ac_begin();
	for (int i = 0; i < BURST; i++)
		assert_int_equal(h_ev(&p.a, ENG_EV_LAP_ERROR, aid).status, i);
	burst = ac_end();
	assert_int_equal(p.a.node.eng->evq_spare.n, EVQ_SPARE_MAX);

	ac_begin();
	for (int i = 0; i < K; i++) {
		for (int j = 0; j < DEPTH; j++)
			evq_push(c, ENG_EV_APR_RECEIVED, j, NULL);
		for (int j = 0; j < DEPTH; j++)
			assert_int_equal(
				h_ev(&p.a, ENG_EV_APR_RECEIVED, aid).status, j);
	}
	steady = ac_end();
	assert_int_equal(p.a.node.eng->evq_spare.n, EVQ_SPARE_MAX);
	pair_fini(&p);
	if (!ac_enabled())
		skip();
	assert_int_equal(burst.allocs, 0);
	assert_int_equal(burst.frees, BURST - EVQ_SPARE_MAX);
	assert_int_equal(steady.allocs + steady.resizes + steady.frees, 0);
}

static int setup(void **state)
{
	(void)state;
	h_quiet_logs();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connections_allocate_only_records),
		cmocka_unit_test(test_reused_item_is_clean),
		cmocka_unit_test(test_spares_bounded_and_reused),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
