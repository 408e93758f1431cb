// SPDX-License-Identifier: MIT
/*
 * The engine's handoff state (daemon/eng_state.c, daemon/state.h): a side
 * with records in many states -- a listener with a credited REQ and two
 * held ones, an established connection with an event queued behind an
 * unacknowledged one, a REP awaiting its RTU, a DREQ awaiting its DREP,
 * timewait -- is saved and restored into a fresh engine. The restored one
 * shows every record as it was (eng_walk, eng_listen_info, eng_id_info,
 * the next deadline), sends and delivers nothing by being restored, and
 * then finishes every exchange with the unchanged peer as the original
 * would have: the held REQs come in order, the DREQ is retransmitted when
 * its timer says, timewait ends on time. And the container refuses a
 * truncated, flipped, newer or foreign buffer, whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "eng_state.h"
#include "harness.h"

#define SID 0x1000

struct walk {
	struct eng_conn_info info[64];
	size_t n;
};

static int walk_cb(void *arg, const struct eng_conn_info *info)
{
	struct walk *w = arg;

	assert_true(w->n < 64);
	w->info[w->n++] = *info;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct eng_conn_info *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void snapshot(const struct eng *eng, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	eng_walk(eng, walk_cb, w);
	qsort(w->info, w->n, sizeof(w->info[0]), by_id);
}

/* Save s's engine into w (finished, header and all). */
static void save(struct h_side *s, struct state_w *w)
{
	sw_init(w);
	eng_state_save(s->node.eng, w);
	assert_int_equal(sw_finish(w, h_now), 0);
}

/* Restore buf into t's fresh engine: 0, or -EINVAL with *why. */
static int restore(struct h_side *t, const uint8_t *buf, size_t len,
		   const char **why)
{
	struct state_file f;
	struct state_r r;
	struct eng_restore *x;
	uint16_t type;
	int rc;

	rc = state_open(&f, buf, len, why);
	if (rc)
		return rc;
	x = eng_restore_begin(t->node.eng);
	assert_non_null(x);
	while ((rc = state_next(&f, &type, &r, why)) > 0) {
		rc = eng_restore_rec(t->node.eng, x, type, &r, why);
		if (rc < 0) {
			eng_restore_abort(x);
			return rc;
		}
		assert_int_equal(rc, 0); /* every record here is the engine's */
	}
	if (rc) {
		eng_restore_abort(x);
		return rc;
	}
	return eng_restore_end(t->node.eng, x, h_now, why);
}

static void test_round_trip(void **state)
{
	struct h_side a, b, b2;
	struct walk before, after;
	struct eng_listen_info li, li2;
	struct state_w w;
	const char *why = NULL;
	uint32_t lis, est, rep, dreq, tw, cred, held1, held2;
	uint32_t p_est, p_rep, p_dreq, p_tw, p_cred;
	size_t sent_before;

	(void)state;
	h_quiet_logs();
	h_init(&a, FF_GUID(0), 0x11, false, 1);
	h_init(&b, FF_GUID(1), 0x22, false, 2);
	lis = h_listen(&b, SID, 4);
	(void)lis;

	/* Established, with a DREQ from A's side answered... no: a queued
	 * event. B's ESTABLISHED is left unacked, then A sends a LAP-free
	 * DREQ whose DREQ_RECEIVED queues behind it. */
	est = h_connect(&a, &b, SID);
	h_pump(&a, &b);
	p_est = h_ev_noack(&b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&b, p_est), 0);
	assert_int_equal(eng_ack(b.node.eng, p_est, h_now), 0);
	h_pump(&a, &b);
	h_ev(&a, ENG_EV_REP_RECEIVED, est);
	assert_int_equal(eng_rtu(a.node.eng, est, NULL, h_now), 0);
	h_pump(&a, &b);
	h_ev_noack(&b, ENG_EV_RTU_RECEIVED, p_est);

	/* REP sent, RTU not yet: A holds its REP_RECEIVED. */
	rep = h_connect(&a, &b, SID);
	h_pump(&a, &b);
	p_rep = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&b, p_rep), 0);
	h_pump(&a, &b);
	h_ev_noack(&a, ENG_EV_REP_RECEIVED, rep);

	/* DREQ sent by B, its DREQ lost: B waits in DREQ_SENT. */
	dreq = h_connect(&a, &b, SID);
	h_pump(&a, &b);
	p_dreq = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&b, p_dreq), 0);
	h_pump(&a, &b);
	h_ev(&a, ENG_EV_REP_RECEIVED, dreq);
	assert_int_equal(eng_rtu(a.node.eng, dreq, NULL, h_now), 0);
	h_pump(&a, &b);
	h_ev(&b, ENG_EV_RTU_RECEIVED, p_dreq);
	assert_int_equal(eng_disconnect(b.node.eng, p_dreq, NULL, 0, h_now), 0);
	h_drop(&b);

	/* Timewait on B: a disconnect done. */
	tw = h_connect(&a, &b, SID);
	h_pump(&a, &b);
	p_tw = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&b, p_tw), 0);
	h_pump(&a, &b);
	h_ev(&a, ENG_EV_REP_RECEIVED, tw);
	assert_int_equal(eng_rtu(a.node.eng, tw, NULL, h_now), 0);
	h_pump(&a, &b);
	h_ev(&b, ENG_EV_RTU_RECEIVED, p_tw);
	assert_int_equal(eng_disconnect(b.node.eng, p_tw, NULL, 0, h_now), 0);
	h_pump(&a, &b);
	h_ev(&a, ENG_EV_DREQ_RECEIVED, tw);
	assert_int_equal(eng_disconnect(a.node.eng, tw, NULL, 0, h_now), 0);
	h_pump(&a, &b);
	h_ev(&b, ENG_EV_DREP_RECEIVED, p_tw);
	assert_int_equal(h_state(&b, p_tw), ENG_STATE_TIMEWAIT);

	/* The listener's last credit taken and unanswered, two REQs held
	 * behind it (backlog 4: three credits are held by p_rep... the
	 * established ones gave theirs back on ACCEPT). */
	cred = h_connect(&a, &b, SID);
	held1 = h_connect(&a, &b, SID);
	held2 = h_connect(&a, &b, SID);
	(void)held1;
	(void)held2;
	h_deliver(&a, &b);
	p_cred = h_ev_noack(&b, ENG_EV_REQ_RECEIVED, 0).id;
	(void)cred;

	/* The established one's peer disconnects: DREQ_RECEIVED queues
	 * behind B's unacked RTU_RECEIVED. */
	assert_int_equal(eng_disconnect(a.node.eng, est, NULL, 0, h_now), 0);
	h_deliver(&a, &b);

	snapshot(b.node.eng, &before);
	assert_int_equal(eng_listen_info(b.node.eng, lis, &li), 0);
	save(&b, &w);

	/* The successor: the same port, nothing else. */
	h_init(&b2, FF_GUID(1), 0x22, false, 3);
	assert_int_equal(restore(&b2, w.buf, w.len, &why), 0);
	snapshot(b2.node.eng, &after);
	assert_int_equal(before.n, after.n);
	for (size_t i = 0; i < before.n; i++)
		assert_memory_equal(&before.info[i], &after.info[i],
				    sizeof(before.info[i]));
	assert_int_equal(eng_listen_info(b2.node.eng, lis, &li2), 0);
	assert_memory_equal(&li, &li2, sizeof(li));
	assert_int_equal(eng_next_deadline(b2.node.eng),
			 eng_next_deadline(b.node.eng));
	assert_memory_equal(eng_counters(b2.node.eng)->sent,
			    eng_counters(b.node.eng)->sent,
			    sizeof(eng_counters(b.node.eng)->sent));
	/* Restoring sent and delivered nothing. */
	assert_int_equal(h_pending(&b2), 0);
	assert_int_equal(h_events_left(&b2), 0);
	sent_before = eng_counters(b.node.eng)->sent[CM_MSG_DREQ];
	h_fini(&b);

	/* The successor finishes everything with the same peer. */
	/* The queued DREQ_RECEIVED follows the ack of the RTU_RECEIVED. */
	assert_int_equal(eng_ack(b2.node.eng, p_est, h_now), 0);
	h_ev(&b2, ENG_EV_DREQ_RECEIVED, p_est);
	assert_int_equal(eng_disconnect(b2.node.eng, p_est, NULL, 0, h_now), 0);
	/* The held REQs come in order once the credit is answered. */
	assert_int_equal(eng_ack(b2.node.eng, p_cred, h_now), 0);
	assert_int_equal(h_accept(&b2, p_cred), 0);
	h_pump(&a, &b2);
	/* A's RTUs for everything it got a REP for. */
	assert_int_equal(eng_ack(a.node.eng, rep, h_now), 0);
	assert_int_equal(eng_rtu(a.node.eng, rep, NULL, h_now), 0);
	h_settle(&a, &b2);
	/* The lost DREQ went out again from the restored timer, and the
	 * REP-awaiting and held connections all got there. */
	assert_true(eng_counters(b2.node.eng)->sent[CM_MSG_DREQ] > sent_before);
	assert_int_equal(h_state(&b2, p_rep), ENG_STATE_ESTABLISHED);
	assert_int_equal(h_state(&b2, p_dreq), ENG_STATE_IDLE);
	assert_int_equal(h_state(&b2, p_tw), ENG_STATE_IDLE);
	assert_int_equal(h_state(&b2, p_est), ENG_STATE_IDLE);
	sw_free(&w);
	h_fini(&a);
	h_fini(&b2);
}

/* The container refuses every damaged version of a good buffer. */
static void test_refusals(void **state)
{
	struct h_side a, b, b2;
	struct state_w w;
	const char *why;
	uint8_t *copy;

	(void)state;
	h_quiet_logs();
	h_init(&a, FF_GUID(0), 0x11, false, 1);
	h_init(&b, FF_GUID(1), 0x22, false, 2);
	h_listen(&b, SID, 4);
	h_connect(&a, &b, SID);
	h_pump(&a, &b);
	save(&b, &w);
	copy = malloc(w.len);
	assert_non_null(copy);

	/* Every truncation. */
	for (size_t n = 0; n < w.len; n += 1 + n / 64) {
		h_init(&b2, FF_GUID(1), 0x22, false, 3);
		why = NULL;
		assert_int_equal(restore(&b2, w.buf, n, &why), -EINVAL);
		assert_non_null(why);
		h_fini(&b2);
	}
	/* A flipped bit anywhere: the header's checks or the CRC. */
	for (size_t i = 0; i < w.len; i += 1 + i / 32) {
		memcpy(copy, w.buf, w.len);
		copy[i] ^= 0x04;
		h_init(&b2, FF_GUID(1), 0x22, false, 3);
		why = NULL;
		assert_int_equal(restore(&b2, copy, w.len, &why), -EINVAL);
		assert_non_null(why);
		h_fini(&b2);
	}
	/* A newer format (its CRC is the payload's: still refused). */
	memcpy(copy, w.buf, w.len);
	copy[8] = STATE_VERSION + 1;
	assert_int_equal(restore(&b2, copy, w.len, &why), -EINVAL);
	assert_string_equal(why, "a format version this daemon does not know");
	/* Another boot, its CRC made right (state.h says what it covers). */
	memcpy(copy, w.buf, w.len);
	copy[40] ^= 1;
	{
		uint32_t crc = (uint32_t)crc32(
			crc32(0, copy + 28, STATE_HDR_SIZE - 28),
			copy + STATE_HDR_SIZE, (uInt)(w.len - STATE_HDR_SIZE));

		for (int k = 0; k < 4; k++)
			copy[24 + k] = (uint8_t)(crc >> (8 * k));
	}
	assert_int_equal(restore(&b2, copy, w.len, &why), -EINVAL);
	assert_string_equal(why, "written before the last reboot");
	/* Another daemon's ports: the successor serves another CA. */
	h_init(&b2, FF_GUID(2), 0x22, false, 3);
	assert_int_equal(restore(&b2, w.buf, w.len, &why), -EINVAL);
	assert_string_equal(why, "a port of the saved state is not served now "
				 "(other devices or configuration?)");
	h_fini(&b2);
	/* And the good one still restores. */
	h_init(&b2, FF_GUID(1), 0x22, false, 3);
	assert_int_equal(restore(&b2, w.buf, w.len, &why), 0);
	h_fini(&b2);
	free(copy);
	sw_free(&w);
	h_fini(&a);
	h_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
