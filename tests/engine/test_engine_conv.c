// SPDX-License-Identifier: MIT
/*
 * Conversation tests of the CM engine: two engines with fake transports
 * and a fake clock; the test moves every MAD by hand, so each row of the
 * state table is driven on purpose (lost, duplicated, late messages).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "util.h"
#include "log.h"

#define SID 0x1000ULL
#define GUID_A 0x0002c90300a0a0a0ULL
#define GUID_B 0x0002c90300b0b0b0ULL

static uint64_t rtx(void)
{
	return 2 * h_ns(H_PLT) + h_ns(H_RESP);
}

struct pair {
	struct h_side a, b;
	uint32_t lid, aid, bid;
};

static void pair_init(struct pair *p, bool roce)
{
	memset(p, 0, sizeof(*p));
	h_init(&p->a, GUID_A, 1, roce, 11);
	h_init(&p->b, GUID_B, 2, roce, 22);
}

static void pair_fini(struct pair *p)
{
	h_fini(&p->a);
	h_fini(&p->b);
}

/* a connects to b's listener; stops when b has the REQ_RECEIVED. */
static void pair_req(struct pair *p)
{
	struct eng_event ev;

	p->lid = h_listen(&p->b, SID, 8);
	p->aid = h_connect(&p->a, &p->b, SID);
	assert_int_equal(h_deliver(&p->a, &p->b), 1);
	ev = h_ev(&p->b, ENG_EV_REQ_RECEIVED, 0);
	p->bid = ev.id;
}

static void pair_rep(struct pair *p)
{
	pair_req(p);
	assert_int_equal(h_accept(&p->b, p->bid), 0);
	assert_int_equal(h_deliver(&p->b, &p->a), 1);
	h_ev(&p->a, ENG_EV_REP_RECEIVED, p->aid);
}

static void pair_established(struct pair *p)
{
	pair_rep(p);
	assert_int_equal(eng_rtu(p->a.node.eng, p->aid, NULL, h_now), 0);
	assert_int_equal(h_deliver(&p->a, &p->b), 1);
	h_ev(&p->b, ENG_EV_RTU_RECEIVED, p->bid);
	assert_int_equal(h_state(&p->a, p->aid), ENG_STATE_ESTABLISHED);
	assert_int_equal(h_state(&p->b, p->bid), ENG_STATE_ESTABLISHED);
}

static int setup(void **state)
{
	(void)state;
	h_quiet_logs();
	return 0;
}

static void test_happy_path(void **state)
{
	struct pair p;
	struct eng_event ev;
	uint64_t tw;
	const struct eng_counters *ca, *cb;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 4);
	p.aid = h_connect(&p.a, &p.b, SID);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REQ_SENT);
	assert_int_equal(h_deliver(&p.a, &p.b), 1);

	/* Lesson 2: the passive side's first event is on a new id. */
	ev = h_ev_noack(&p.b, ENG_EV_REQ_RECEIVED, 0);
	p.bid = ev.id;
	assert_int_not_equal(p.bid, p.lid);
	assert_int_equal(ev.listen_id, p.lid);
	assert_int_equal(ev.listen_context, 0x1111);
	assert_int_equal(ev.owner, 7);
	assert_int_equal(ev.context, 0);
	assert_true(ev.has_msg);
	assert_int_equal(ev.msg.req.local_comm_id, p.aid);
	assert_int_equal(ev.addr.lid, 1);
	assert_int_equal(eng_set_context(p.b.node.eng, p.bid, 0xbbbb), 0);
	assert_int_equal(eng_ack(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_REQ_RCVD);

	assert_int_equal(h_accept(&p.b, p.bid), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_REP_SENT);
	assert_int_equal(h_deliver(&p.b, &p.a), 1);
	ev = h_ev(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(ev.context, 0x2222);
	assert_int_equal(ev.msg.rep.remote_comm_id, p.aid);
	assert_int_equal(ev.msg.rep.local_comm_id, p.bid);
	assert_int_equal(ev.msg.rep.local_ca_guid, GUID_B);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REP_RCVD);

	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_ESTABLISHED);
	assert_int_equal(h_deliver(&p.a, &p.b), 1);
	ev = h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	assert_int_equal(ev.context, 0xbbbb);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);

	/* Nothing is armed while established. */
	assert_true(eng_next_deadline(p.a.node.eng) == ENG_NO_DEADLINE);
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);

	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_DREQ_SENT);
	assert_int_equal(h_deliver(&p.a, &p.b), 1);
	ev = h_ev(&p.b, ENG_EV_DREQ_RECEIVED, p.bid);
	assert_int_equal(ev.context, 0xbbbb);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_DREQ_RCVD);
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_TIMEWAIT);
	assert_int_equal(h_deliver(&p.b, &p.a), 1);
	h_ev(&p.a, ENG_EV_DREP_RECEIVED, p.aid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);

	/* IBTA 12.9.4: timewait is 2 x PLT + the ACK delay, exactly. */
	tw = h_now + 2 * h_ns(H_PLT) + h_ns(H_ACK_DELAY);
	assert_true(eng_next_deadline(p.a.node.eng) == tw);
	assert_true(eng_next_deadline(p.b.node.eng) == tw);
	h_at(&p.a, &p.b, tw - 1);
	assert_int_equal(h_events_left(&p.a) + h_events_left(&p.b), 0);
	h_at(&p.a, &p.b, tw);
	h_ev(&p.a, ENG_EV_TIMEWAIT_EXIT, p.aid);
	h_ev(&p.b, ENG_EV_TIMEWAIT_EXIT, p.bid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_IDLE);

	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(h_pending(&p.a) + h_pending(&p.b), 0);
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	assert_int_equal(eng_record_count(p.b.node.eng), 1); /* the listener */

	ca = eng_counters(p.a.node.eng);
	cb = eng_counters(p.b.node.eng);
	assert_int_equal(ca->sent[CM_MSG_REQ], 1);
	assert_int_equal(ca->sent[CM_MSG_RTU], 1);
	assert_int_equal(ca->sent[CM_MSG_DREQ], 1);
	assert_int_equal(ca->received[CM_MSG_REP], 1);
	assert_int_equal(ca->received[CM_MSG_DREP], 1);
	assert_int_equal(cb->sent[CM_MSG_REP], 1);
	assert_int_equal(cb->sent[CM_MSG_DREP], 1);
	assert_int_equal(cb->req_delivered, 1);
	pair_fini(&p);
}

static void test_lost_req(void **state)
{
	struct pair p;
	struct cm_msg m;
	struct eng_event ev;
	uint64_t at;
	int i;

	(void)state;
	pair_init(&p, false);
	p.aid = h_connect(&p.a, &p.b, SID);
	assert_int_equal(h_drop(&p.a), 1);
	at = h_now + rtx();
	assert_true(eng_next_deadline(p.a.node.eng) == at);
	for (i = 1; i <= H_RETRIES; i++) {
		h_at(&p.a, NULL, at - 1);
		assert_int_equal(h_pending(&p.a), 0);
		h_at(&p.a, NULL, at);
		m = h_take(&p.a, CM_MSG_REQ);
		assert_int_equal(m.req.local_comm_id, p.aid);
		assert_int_equal(
			eng_counters(p.a.node.eng)->retransmitted[CM_MSG_REQ],
			i);
		at += rtx();
	}
	assert_int_equal(h_events_left(&p.a), 0);
	h_at(&p.a, NULL, at);
	/* Retries exhausted: REJ timeout carrying our GUID, one outcome. */
	m = h_take(&p.a, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_TIMEOUT);
	assert_int_equal(m.rej.local_comm_id, p.aid);
	assert_int_equal(m.rej.remote_comm_id, 0);
	assert_int_equal(m.rej.ari_length, 8);
	assert_int_equal(m.rej.ari[0], (GUID_A >> 56) & 0xff);
	assert_int_equal(m.rej.ari[7], GUID_A & 0xff);
	ev = h_ev(&p.a, ENG_EV_REQ_ERROR, p.aid);
	assert_int_equal(ev.status, -ETIMEDOUT);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_IDLE);
	assert_true(eng_next_deadline(p.a.node.eng) == ENG_NO_DEADLINE);
	assert_int_equal(eng_counters(p.a.node.eng)->timeouts, 1);
	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	pair_fini(&p);
}

static void test_lost_rep_once(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	pair_req(&p);
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	assert_int_equal(h_drop(&p.b), 1);
	/* Both retransmit at the same instant: the REQ is a duplicate. */
	h_advance(&p.a, &p.b, rtx());
	assert_int_equal(h_pending(&p.a), 1);
	assert_int_equal(h_pending(&p.b), 1);
	h_deliver(&p.a, &p.b); /* dup REQ in REP_SENT: REP again */
	assert_int_equal(h_pending(&p.b), 2);
	assert_int_equal(eng_counters(p.b.node.eng)->duplicates[CM_MSG_REQ], 1);
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(eng_counters(p.a.node.eng)->duplicates[CM_MSG_REP], 1);
	assert_int_equal(h_events_left(&p.a), 0);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_pump(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	pair_fini(&p);
}

static void test_lost_rep_always(void **state)
{
	struct pair p;
	struct eng_event ev;
	struct cm_msg m;
	int i;

	(void)state;
	pair_init(&p, false);
	pair_req(&p);
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	h_drop(&p.b);
	for (i = 0; i < H_RETRIES; i++) {
		h_advance(&p.a, &p.b, rtx());
		h_drop(&p.a);
		m = h_take(&p.b, CM_MSG_REP);
		assert_int_equal(m.rep.remote_comm_id, p.aid);
	}
	h_advance(&p.a, &p.b, rtx());
	ev = h_ev(&p.a, ENG_EV_REQ_ERROR, p.aid);
	assert_int_equal(ev.status, -ETIMEDOUT);
	ev = h_ev(&p.b, ENG_EV_REP_ERROR, p.bid);
	assert_int_equal(ev.status, -ETIMEDOUT);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_TIMEOUT);
	assert_int_equal(m.rej.remote_comm_id, p.aid);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_TIMEWAIT);
	assert_int_equal(eng_counters(p.b.node.eng)->retransmitted[CM_MSG_REP],
			 H_RETRIES);
	pair_fini(&p);
}

static void test_lost_rtu(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	pair_rep(&p);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_take(&p.a, CM_MSG_RTU);
	h_advance(&p.a, &p.b, rtx());
	h_take(&p.b, CM_MSG_REP);
	h_inject(&p.b, &p.a, &p.b.out.m[p.b.out.next - 1].msg);
	/* IBTA 12.9.7: a duplicate REP in ESTABLISHED resends the RTU. */
	assert_int_equal(eng_counters(p.a.node.eng)->duplicates[CM_MSG_REP], 1);
	assert_int_equal(h_deliver(&p.a, &p.b), 1);
	h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	assert_int_equal(h_events_left(&p.a), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);
	pair_fini(&p);
}

static void test_lost_dreq(void **state)
{
	struct pair p;
	struct eng_event ev;
	int i;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	h_take(&p.a, CM_MSG_DREQ);
	for (i = 0; i < H_RETRIES; i++) {
		h_advance(&p.a, &p.b, rtx());
		h_take(&p.a, CM_MSG_DREQ);
	}
	h_advance(&p.a, &p.b, rtx());
	ev = h_ev(&p.a, ENG_EV_DREQ_ERROR, p.aid);
	assert_int_equal(ev.status, -ETIMEDOUT);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);
	assert_int_equal(h_pending(&p.a), 0);
	h_settle(&p.a, &p.b);
	h_ev(&p.a, ENG_EV_TIMEWAIT_EXIT, p.aid);
	pair_fini(&p);
}

static void test_lost_drep(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	h_deliver(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_DREQ_RECEIVED, p.bid);
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	h_take(&p.b, CM_MSG_DREP);
	/* IBTA 12.9.7: DREQ in timewait: the DREP again. */
	h_inject(&p.a, &p.b, &p.a.out.m[p.a.out.next - 1].msg);
	assert_int_equal(eng_counters(p.b.node.eng)->duplicates[CM_MSG_DREQ],
			 1);
	h_take(&p.b, CM_MSG_DREP);
	/*
	 * Timewait (2 x PLT + ACK delay) is shorter than the DREQ's
	 * retransmission time: when the retransmission comes the record is
	 * IDLE, and a DREQ for a dead connection still gets a DREP.
	 */
	h_advance(&p.a, &p.b, rtx());
	h_ev(&p.b, ENG_EV_TIMEWAIT_EXIT, p.bid);
	assert_int_equal(h_deliver(&p.a, &p.b), 1); /* DREQ again */
	assert_int_equal(h_deliver(&p.b, &p.a), 1);
	h_ev(&p.a, ENG_EV_DREP_RECEIVED, p.aid);
	assert_int_equal(h_events_left(&p.b), 0);
	/* Destroyed and freed, b still answers: stateless DREP. */
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	h_inject(&p.a, &p.b, &p.a.out.m[p.a.out.next - 1].msg);
	h_take(&p.b, CM_MSG_DREP);
	pair_fini(&p);
}

static void test_mra_passive_slow(void **state)
{
	struct pair p;
	struct cm_msg m, req;
	uint64_t due, ext;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	p.aid = h_connect(&p.a, &p.b, SID);
	req = p.a.out.m[p.a.out.next].msg;
	h_deliver(&p.a, &p.b);
	p.bid = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0).id;
	/* The app is slow: MRA before half the peer's wait is gone. */
	due = h_now + h_ns(H_RESP) / 2;
	assert_true(eng_next_deadline(p.b.node.eng) == due);
	h_at(&p.a, &p.b, due);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_REQ);
	assert_int_equal(m.mra.service_timeout, H_SVC);
	assert_int_equal(m.mra.remote_comm_id, p.aid);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_MRA_REQ_SENT);
	h_inject(&p.b, &p.a, &m);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_MRA_REQ_RCVD);
	/* The owner hears of the first MRA, with the peer's timeout. */
	h_mra_ev(&p.a, p.aid, CM_MSG_REF_REQ, H_SVC);
	/* IBTA 12.6.6: the wait becomes service timeout + 2 x PLT. */
	ext = h_now + h_ns(H_SVC) + 2 * h_ns(H_PLT);
	assert_true(eng_next_deadline(p.a.node.eng) == ext);
	h_at(&p.a, &p.b, h_now + rtx());
	assert_int_equal(h_pending(&p.a), 0);
	/* A duplicate REQ in MRA_REQ_SENT gets the MRA again. */
	h_inject(&p.a, &p.b, &req);
	h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	h_pump(&p.a, &p.b);
	h_ev(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_pump(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	assert_int_equal(eng_counters(p.a.node.eng)->retransmitted[CM_MSG_REQ],
			 0);
	pair_fini(&p);
}

static void test_mra_active_slow(void **state)
{
	struct pair p;
	struct cm_msg m;
	uint64_t due;

	(void)state;
	pair_init(&p, false);
	pair_rep(&p);
	due = h_now + h_ns(H_RESP) / 2;
	assert_true(eng_next_deadline(p.a.node.eng) == due);
	h_at(&p.a, &p.b, due);
	m = h_take(&p.a, CM_MSG_MRA);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_REP);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_MRA_REP_SENT);
	h_inject(&p.a, &p.b, &m);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_MRA_REP_RCVD);
	h_mra_ev(&p.b, p.bid, CM_MSG_REF_REP, H_SVC);
	assert_true(eng_next_deadline(p.b.node.eng) ==
		    h_now + h_ns(H_SVC) + 2 * h_ns(H_PLT));
	/* The app answers; the rest is the usual. */
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_pump(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	assert_int_equal(eng_counters(p.b.node.eng)->retransmitted[CM_MSG_REP],
			 0);
	pair_fini(&p);
}

static void test_mra_api(void **state)
{
	struct pair p;
	struct cm_msg m;

	(void)state;
	pair_init(&p, false);
	pair_req(&p);
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 20,
				 (const uint8_t *)"wait", 4, h_now),
			 0);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.service_timeout, 20);
	/* The client's private data goes on the wire, zero after it. */
	assert_memory_equal(m.mra.private_data, "wait", 4);
	assert_int_equal(m.mra.private_data[4], 0);
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 32, NULL, 0, h_now),
			 -EINVAL);
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 20, m.mra.private_data,
				 CM_MRA_PRIVATE_DATA_SIZE + 1, h_now),
			 -EINVAL);
	h_inject(&p.b, &p.a, &m);
	assert_true(eng_next_deadline(p.a.node.eng) ==
		    h_now + h_ns(20) + 2 * h_ns(H_PLT));
	pair_fini(&p);
}

/* IBTA 12.9.7: a duplicate REQ in each passive state. */
static void test_dup_req_each_state(void **state)
{
	struct pair p;
	struct cm_msg req, m;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	p.aid = h_connect(&p.a, &p.b, SID);
	req = h_take(&p.a, CM_MSG_REQ);
	h_inject(&p.a, &p.b, &req);
	p.bid = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0).id;

	/* REQ_RCVD: nothing to resend, only counted; no second id. */
	h_inject(&p.a, &p.b, &req);
	assert_int_equal(h_pending(&p.b), 0);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(eng_record_count(p.b.node.eng), 2);

	/* MRA_REQ_SENT: the MRA again. */
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 16, NULL, 0, h_now), 0);
	h_take(&p.b, CM_MSG_MRA);
	h_inject(&p.a, &p.b, &req);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.service_timeout, 16);

	/* REP_SENT: the REP again. */
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	m = h_take(&p.b, CM_MSG_REP);
	h_inject(&p.a, &p.b, &req);
	{
		struct cm_msg again = h_take(&p.b, CM_MSG_REP);

		assert_memory_equal(&again.rep, &m.rep, sizeof(m.rep));
	}

	/* ESTABLISHED: ignored. */
	h_inject(&p.b, &p.a, &m);
	h_ev(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_deliver(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	h_inject(&p.a, &p.b, &req);
	assert_int_equal(h_pending(&p.b), 0);

	/* TIMEWAIT: REJ stale connection (IBTA 12.9.8.3.1). */
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	h_deliver(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_DREQ_RECEIVED, p.bid);
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	h_take(&p.b, CM_MSG_DREP);
	h_inject(&p.a, &p.b, &req);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_STALE_CONN);
	assert_int_equal(m.rej.remote_comm_id, p.aid);

	assert_int_equal(eng_counters(p.b.node.eng)->duplicates[CM_MSG_REQ], 5);
	assert_int_equal(h_events_left(&p.b), 0);
	pair_fini(&p);
}

static void test_stale_req(void **state)
{
	struct pair p;
	struct h_side a2;
	struct cm_msg m;
	uint32_t qpn, id2;
	struct eng_event ev;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	qpn = p.a.qpn - 1;
	/* a reboots (same CA GUID) and reuses the QP number. */
	h_init(&a2, GUID_A, 1, false, 99);
	id2 = h_connect_qpn(&a2, &p.b, SID, qpn);
	h_deliver(&a2, &p.b);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_STALE_CONN);
	assert_int_equal(m.rej.remote_comm_id, id2);
	/* ... and the old connection is ended with a DREQ. */
	m = h_take(&p.b, CM_MSG_DREQ);
	assert_int_equal(m.dreq.remote_comm_id, p.aid);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_DREQ_SENT);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(eng_counters(p.b.node.eng)->stale_rejected, 1);
	assert_int_equal(eng_record_count(p.b.node.eng), 2); /* no new record */

	h_inject(&p.b, &a2, &p.b.out.m[p.b.out.next - 2].msg);
	ev = h_ev(&a2, ENG_EV_REJ_RECEIVED, id2);
	assert_int_equal(ev.msg.rej.reason, CM_REJ_STALE_CONN);
	assert_int_equal(h_state(&a2, id2), ENG_STATE_TIMEWAIT);
	h_fini(&a2);
	pair_fini(&p);
}

static void test_stale_rep(void **state)
{
	struct pair p;
	struct h_side b2;
	struct cm_rep rep;
	struct cm_msg m;
	struct eng_event ev;
	uint32_t aid2, bid2;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	/* b reboots; its new listener answers with the old QP number. */
	h_init(&b2, GUID_B, 2, false, 77);
	h_listen(&b2, SID, 8);
	aid2 = h_connect(&p.a, &b2, SID);
	h_deliver(&p.a, &b2);
	bid2 = h_ev(&b2, ENG_EV_REQ_RECEIVED, 0).id;
	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = p.b.qpn - 1;
	assert_int_equal(eng_accept(b2.node.eng, bid2, &rep, h_now), 0);
	h_deliver(&b2, &p.a);
	m = h_take(&p.a, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_STALE_CONN);
	assert_int_equal(m.rej.message_rejected, CM_MSG_REF_REP);
	m = h_take(&p.a, CM_MSG_DREQ);
	assert_int_equal(m.dreq.remote_comm_id, p.bid);
	ev = h_ev(&p.a, ENG_EV_REQ_ERROR, aid2);
	assert_int_equal(ev.status, -ESTALE);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_DREQ_SENT);
	h_fini(&b2);
	pair_fini(&p);
}

static void test_dreq_collision(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	h_deliver(&p.a, &p.b);
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_DREP_RECEIVED, p.aid);
	h_ev(&p.b, ENG_EV_DREP_RECEIVED, p.bid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_TIMEWAIT);
	h_pump(&p.a, &p.b); /* the DREPs arrive in timewait */
	assert_int_equal(eng_counters(p.a.node.eng)->duplicates[CM_MSG_DREP],
			 1);
	assert_int_equal(eng_counters(p.b.node.eng)->duplicates[CM_MSG_DREP],
			 1);
	h_settle(&p.a, &p.b);
	h_ev(&p.a, ENG_EV_TIMEWAIT_EXIT, p.aid);
	h_ev(&p.b, ENG_EV_TIMEWAIT_EXIT, p.bid);
	assert_int_equal(h_events_left(&p.a) + h_events_left(&p.b), 0);
	pair_fini(&p);
}

/*
 * A disconnect that finds the connection already going down succeeds and
 * sends nothing, as librdmacm's rdma_disconnect: a second one while our
 * DREQ waits (DREQ_SENT), and one after the peer's DREQ crossed ours or
 * was answered (TIMEWAIT). Unexpected-API is not counted.
 */
static void test_disconnect_again(void **state)
{
	struct pair p;
	uint64_t unexpected;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	unexpected = eng_counters(p.a.node.eng)->unexpected_api;
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_pending(&p.a), 1);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_DREQ_SENT);
	assert_int_equal(h_pending(&p.a), 1); /* the one DREQ */
	h_deliver(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_DREQ_RECEIVED, p.bid);
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_TIMEWAIT);
	/* B's program calls it again (its DREQ_RECEIVED crossed a call). */
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_pending(&p.b), 1); /* the one DREP */
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_DREP_RECEIVED, p.aid);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(eng_counters(p.a.node.eng)->unexpected_api,
			 unexpected);
	h_settle(&p.a, &p.b);
	h_ev(&p.a, ENG_EV_TIMEWAIT_EXIT, p.aid);
	h_ev(&p.b, ENG_EV_TIMEWAIT_EXIT, p.bid);
	assert_int_equal(h_events_left(&p.a) + h_events_left(&p.b), 0);
	pair_fini(&p);
}

/*
 * Every event carries the id's state after the transition that made it
 * (and the LAP sub-state in ESTABLISHED), so no client infers them: the
 * handshake's, and a REJ that finds the active side in REP_RCVD, which
 * goes to TIMEWAIT (IBTA 12.9.7), not IDLE.
 */
static void test_event_states(void **state)
{
	struct pair p;
	struct eng_event ev;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	p.aid = h_connect(&p.a, &p.b, SID);
	h_deliver(&p.a, &p.b);
	ev = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0);
	p.bid = ev.id;
	assert_int_equal(ev.state, ENG_STATE_REQ_RCVD);
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	h_deliver(&p.b, &p.a);
	ev = h_ev_noack(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(ev.state, ENG_STATE_REP_RCVD);
	/* B gives up on its REP: REJ, and A is in REP_RCVD. */
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	h_deliver(&p.b, &p.a);
	assert_int_equal(eng_ack(p.a.node.eng, p.aid, h_now), 0);
	ev = h_ev(&p.a, ENG_EV_REJ_RECEIVED, p.aid);
	assert_int_equal(ev.state, ENG_STATE_TIMEWAIT);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);
	assert_int_equal(ev.lap, ENG_LAP_IDLE);
	h_settle(&p.a, &p.b);
	ev = h_ev(&p.a, ENG_EV_TIMEWAIT_EXIT, p.aid);
	assert_int_equal(ev.state, ENG_STATE_IDLE);
	pair_fini(&p);
}

/* Lesson 2: a REJ racing the REQ is seen after it, never before. */
static void test_rej_racing_req(void **state)
{
	struct pair p;
	struct eng_event ev;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	p.aid = h_connect(&p.a, &p.b, SID);
	h_deliver(&p.a, &p.b);
	ev = h_ev_noack(&p.b, ENG_EV_REQ_RECEIVED, 0);
	p.bid = ev.id;
	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	h_deliver(&p.a, &p.b); /* REJ timeout, found by the ARI's GUID */
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_IDLE);
	assert_int_equal(h_accept(&p.b, p.bid), -EINVAL);
	assert_int_equal(eng_set_context(p.b.node.eng, p.bid, 0x5a5a), 0);
	assert_int_equal(eng_ack(p.b.node.eng, p.bid, h_now), 0);
	ev = h_ev(&p.b, ENG_EV_REJ_RECEIVED, p.bid);
	assert_int_equal(ev.msg.rej.reason, CM_REJ_TIMEOUT);
	assert_int_equal(ev.context, 0x5a5a);
	assert_int_equal(eng_ack(p.b.node.eng, p.bid, h_now), -EINVAL);
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(eng_record_count(p.b.node.eng), 1);
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	pair_fini(&p);
}

struct destroy_case {
	enum eng_state state;
	bool on_a;
	int sends; /* -1: nothing */
	int reason; /* REJ reason or SIDR status */
	enum eng_state after;
};

static void reach(struct pair *p, enum eng_state st)
{
	struct eng_sidr_param sp;

	memset(&sp, 0, sizeof(sp));
	sp.dest = p->b.node.addr;
	sp.service_id = SID;
	sp.timeout = H_RESP;
	sp.max_retries = H_RETRIES;
	switch (st) {
	case ENG_STATE_IDLE:
		assert_int_equal(eng_create_id(p->a.node.eng, 9, 0, &p->aid),
				 0);
		break;
	case ENG_STATE_LISTEN:
		p->lid = h_listen(&p->b, SID, 8);
		p->bid = p->lid;
		break;
	case ENG_STATE_REQ_SENT:
		p->aid = h_connect(&p->a, &p->b, SID);
		break;
	case ENG_STATE_MRA_REQ_RCVD:
		pair_req(p);
		assert_int_equal(
			eng_mra(p->b.node.eng, p->bid, 16, NULL, 0, h_now), 0);
		h_deliver(&p->b, &p->a);
		h_mra_ev(&p->a, p->aid, CM_MSG_REF_REQ, 16);
		break;
	case ENG_STATE_REQ_RCVD:
		pair_req(p);
		break;
	case ENG_STATE_MRA_REQ_SENT:
		pair_req(p);
		assert_int_equal(
			eng_mra(p->b.node.eng, p->bid, 16, NULL, 0, h_now), 0);
		break;
	case ENG_STATE_REP_SENT:
		pair_req(p);
		assert_int_equal(h_accept(&p->b, p->bid), 0);
		break;
	case ENG_STATE_MRA_REP_RCVD:
		pair_rep(p);
		assert_int_equal(
			eng_mra(p->a.node.eng, p->aid, 16, NULL, 0, h_now), 0);
		h_deliver(&p->a, &p->b);
		h_mra_ev(&p->b, p->bid, CM_MSG_REF_REP, 16);
		break;
	case ENG_STATE_REP_RCVD:
		pair_rep(p);
		break;
	case ENG_STATE_MRA_REP_SENT:
		pair_rep(p);
		assert_int_equal(
			eng_mra(p->a.node.eng, p->aid, 16, NULL, 0, h_now), 0);
		break;
	case ENG_STATE_ESTABLISHED:
		pair_established(p);
		break;
	case ENG_STATE_DREQ_SENT:
		pair_established(p);
		assert_int_equal(
			eng_disconnect(p->a.node.eng, p->aid, NULL, 0, h_now),
			0);
		break;
	case ENG_STATE_DREQ_RCVD:
		pair_established(p);
		assert_int_equal(
			eng_disconnect(p->a.node.eng, p->aid, NULL, 0, h_now),
			0);
		h_deliver(&p->a, &p->b);
		h_ev(&p->b, ENG_EV_DREQ_RECEIVED, p->bid);
		break;
	case ENG_STATE_TIMEWAIT:
		reach(p, ENG_STATE_DREQ_RCVD);
		assert_int_equal(
			eng_disconnect(p->b.node.eng, p->bid, NULL, 0, h_now),
			0);
		h_deliver(&p->b, &p->a);
		h_ev(&p->a, ENG_EV_DREP_RECEIVED, p->aid);
		break;
	case ENG_STATE_SIDR_REQ_SENT:
		assert_int_equal(eng_create_id(p->a.node.eng, 9, 0, &p->aid),
				 0);
		assert_int_equal(
			eng_sidr_req(p->a.node.eng, p->aid, &sp, h_now), 0);
		break;
	case ENG_STATE_SIDR_REQ_RCVD:
		p->lid = h_listen(&p->b, SID, 8);
		assert_int_equal(eng_create_id(p->a.node.eng, 9, 0, &p->aid),
				 0);
		assert_int_equal(
			eng_sidr_req(p->a.node.eng, p->aid, &sp, h_now), 0);
		h_deliver(&p->a, &p->b);
		p->bid = h_ev(&p->b, ENG_EV_SIDR_REQ_RECEIVED, 0).id;
		break;
	case ENG_STATE__COUNT:
		break;
	}
}

/* Lesson 3: destroy sends what the state requires, then silence. */
static void test_destroy_every_state(void **state)
{
	static const struct destroy_case cases[] = {
		{ ENG_STATE_IDLE, true, -1, 0, ENG_STATE_IDLE },
		{ ENG_STATE_LISTEN, false, -1, 0, ENG_STATE_IDLE },
		{ ENG_STATE_REQ_SENT, true, CM_MSG_REJ, CM_REJ_TIMEOUT,
		  ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REQ_RCVD, true, CM_MSG_REJ, CM_REJ_TIMEOUT,
		  ENG_STATE_IDLE },
		{ ENG_STATE_REQ_RCVD, false, CM_MSG_REJ,
		  CM_REJ_CONSUMER_DEFINED, ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REQ_SENT, false, CM_MSG_REJ,
		  CM_REJ_CONSUMER_DEFINED, ENG_STATE_IDLE },
		{ ENG_STATE_REP_SENT, false, CM_MSG_REJ,
		  CM_REJ_CONSUMER_DEFINED, ENG_STATE_TIMEWAIT },
		{ ENG_STATE_MRA_REP_RCVD, false, CM_MSG_REJ,
		  CM_REJ_CONSUMER_DEFINED, ENG_STATE_TIMEWAIT },
		{ ENG_STATE_REP_RCVD, true, CM_MSG_REJ, CM_REJ_CONSUMER_DEFINED,
		  ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REP_SENT, true, CM_MSG_REJ,
		  CM_REJ_CONSUMER_DEFINED, ENG_STATE_IDLE },
		{ ENG_STATE_ESTABLISHED, true, CM_MSG_DREQ, 0,
		  ENG_STATE_DREQ_SENT },
		{ ENG_STATE_DREQ_SENT, true, -1, 0, ENG_STATE_DREQ_SENT },
		{ ENG_STATE_DREQ_RCVD, false, CM_MSG_DREP, 0,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_TIMEWAIT, true, -1, 0, ENG_STATE_TIMEWAIT },
		{ ENG_STATE_SIDR_REQ_SENT, true, -1, 0, ENG_STATE_IDLE },
		{ ENG_STATE_SIDR_REQ_RCVD, false, CM_MSG_SIDR_REP,
		  CM_SIDR_REJECT, ENG_STATE_IDLE },
	};
	size_t i, j;

	(void)state;
	assert_int_equal(sizeof(cases) / sizeof(cases[0]), ENG_STATE__COUNT);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct destroy_case *dc = &cases[i];
		struct pair p;
		struct h_side *who, *peer;
		uint32_t id;
		size_t nev, base;
		struct cm_msg m;

		pair_init(&p, false);
		reach(&p, dc->state);
		who = dc->on_a ? &p.a : &p.b;
		peer = dc->on_a ? &p.b : &p.a;
		id = dc->on_a ? p.aid : p.bid;
		assert_int_equal(h_state(who, id), dc->state);
		h_drop(who);
		h_drop(peer);
		base = eng_record_count(who->node.eng) - 1;
		if (dc->state == ENG_STATE_LISTEN ||
		    dc->state == ENG_STATE_IDLE)
			base = eng_record_count(who->node.eng) - 1;
		else if (!dc->on_a && p.lid)
			base = 1;
		nev = who->nev;
		assert_int_equal(eng_destroy(who->node.eng, id, h_now), 0);
		if (dc->sends < 0) {
			assert_int_equal(h_pending(who), 0);
		} else {
			m = h_take(who, (enum cm_msg_type)dc->sends);
			if (dc->sends == CM_MSG_REJ)
				assert_int_equal(m.rej.reason, dc->reason);
			if (dc->sends == CM_MSG_SIDR_REP)
				assert_int_equal(m.sidr_rep.status, dc->reason);
			who->out.next--; /* let the peer see it */
		}
		/* The id is gone for the client at once. */
		assert_int_equal(eng_destroy(who->node.eng, id, h_now),
				 -ENOENT);
		assert_int_equal(eng_ack(who->node.eng, id, h_now), -ENOENT);
		assert_int_equal(eng_set_context(who->node.eng, id, 1),
				 -ENOENT);
		/* The record keeps its protocol tail, then is freed. */
		{
			struct conn *c =
				ctab_local_find(&who->node.eng->by_local, id);

			if (dc->after == ENG_STATE_IDLE)
				assert_null(c);
			else
				assert_int_equal(c->state, dc->after);
		}
		h_settle(&p.a, &p.b);
		for (j = nev; j < who->nev; j++)
			assert_int_not_equal(who->evs[j].id, id);
		assert_null(ctab_local_find(&who->node.eng->by_local, id));
		assert_int_equal(eng_record_count(who->node.eng), base);
		pair_fini(&p);
	}
}

/* A REJ lost after the peer established: its RTU gets the REJ again. */
static void test_lost_rej_of_rep(void **state)
{
	struct pair p;
	struct cm_msg rej, m;

	(void)state;
	pair_init(&p, false);
	pair_rep(&p);
	/* b's client goes away in REP_SENT: REJ, timewait. REJ lost. */
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	rej = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(rej.rej.reason, CM_REJ_CONSUMER_DEFINED);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_deliver(&p.a, &p.b);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_memory_equal(&m.rej, &rej.rej, sizeof(m.rej));
	h_inject(&p.b, &p.a, &m);
	h_ev(&p.a, ENG_EV_REJ_RECEIVED, p.aid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);
	pair_fini(&p);
}

static void test_timewait_exit_destroyed(void **state)
{
	struct pair p;
	uint64_t tw;

	(void)state;
	pair_init(&p, false);
	reach(&p, ENG_STATE_TIMEWAIT);
	tw = eng_next_deadline(p.a.node.eng);
	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	assert_int_equal(eng_record_count(p.a.node.eng), 1);
	h_at(&p.a, NULL, tw - 1);
	assert_int_equal(eng_record_count(p.a.node.eng), 1);
	h_at(&p.a, NULL, tw);
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	assert_int_equal(h_events_left(&p.a), 0);
	pair_fini(&p);
}

/* Lesson 1: backlog credits, held REQs, then REJ "no resources". */
static void test_credits(void **state)
{
	struct h_side a, b;
	struct eng_config cfg = { .mra_service_timeout = H_SVC, .max_held = 1 };
	uint32_t lid, ids[4], got[3];
	struct cm_msg m;
	struct eng_event ev;
	int i;

	(void)state;
	h_init(&a, GUID_A, 1, false, 3);
	h_init_cfg(&b, GUID_B, 2, false, 4, &cfg);
	lid = h_listen(&b, SID, 2);
	for (i = 0; i < 4; i++)
		ids[i] = h_connect(&a, &b, SID);
	h_deliver(&a, &b);
	got[0] = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	got[1] = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_events_left(&b), 0);
	m = h_take(&b, CM_MSG_MRA); /* the third is held */
	assert_int_equal(m.mra.remote_comm_id, ids[2]);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_REQ);
	assert_int_equal(m.mra.service_timeout, H_SVC);
	m = h_take(&b, CM_MSG_REJ); /* the fourth is refused */
	assert_int_equal(m.rej.remote_comm_id, ids[3]);
	assert_int_equal(m.rej.reason, CM_REJ_NO_RESOURCES);
	assert_int_equal(eng_counters(b.node.eng)->req_delivered, 2);
	assert_int_equal(eng_counters(b.node.eng)->req_held, 1);
	assert_int_equal(eng_counters(b.node.eng)->req_rejected_backlog, 1);
	/* The held record is no id yet. */
	assert_int_equal(eng_record_count(b.node.eng), 4);
	/* A duplicate of the held REQ gets the MRA again. */
	h_inject(&a, &b, &a.out.m[2].msg);
	h_take(&b, CM_MSG_MRA);

	/* Accepting one returns a credit: the held REQ is delivered. */
	assert_int_equal(h_accept(&b, got[0]), 0);
	h_take(&b, CM_MSG_REP);
	ev = h_ev(&b, ENG_EV_REQ_RECEIVED, 0);
	got[2] = ev.id;
	assert_int_equal(ev.msg.req.local_comm_id, ids[2]);
	assert_int_equal(ev.listen_id, lid);
	assert_int_equal(h_state(&b, got[2]), ENG_STATE_MRA_REQ_SENT);
	assert_int_equal(eng_counters(b.node.eng)->req_delivered, 3);
	/* Rejecting returns one too; nothing is held any more. */
	{
		struct cm_rej rej = { .reason = CM_REJ_CONSUMER_DEFINED };

		assert_int_equal(eng_reject(b.node.eng, got[1], &rej, h_now),
				 0);
	}
	m = h_take(&b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_CONSUMER_DEFINED);
	assert_int_equal(m.rej.message_rejected, CM_MSG_REF_REQ);
	assert_int_equal(h_events_left(&b), 0);
	assert_int_equal(h_accept(&b, got[2]), 0);
	h_take(&b, CM_MSG_REP);
	/* Now two credits are free: two new REQs are delivered at once. */
	h_connect(&a, &b, SID);
	h_connect(&a, &b, SID);
	h_deliver(&a, &b);
	h_ev(&b, ENG_EV_REQ_RECEIVED, 0);
	h_ev(&b, ENG_EV_REQ_RECEIVED, 0);
	assert_int_equal(h_pending(&b), 0);
	h_fini(&a);
	h_fini(&b);
}

/*
 * A listener whose owner is at its id limit (ops.owner_has_room says no)
 * gets no more REQs even with credit left: they are held with an MRA, and
 * the next credit returned while the owner has room delivers them.
 */
static void test_owner_id_limit(void **state)
{
	struct h_side a, b;
	uint32_t first, second;
	struct cm_msg m;
	struct eng_event ev;

	(void)state;
	h_init(&a, GUID_A, 1, false, 5);
	h_init(&b, GUID_B, 2, false, 6);
	h_listen(&b, SID, 2);
	h_connect(&a, &b, SID);
	h_deliver(&a, &b);
	first = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;

	b.owner_full = true;
	second = h_connect(&a, &b, SID);
	h_deliver(&a, &b);
	assert_int_equal(h_events_left(&b), 0);
	m = h_take(&b, CM_MSG_MRA);
	assert_int_equal(m.mra.remote_comm_id, second);
	assert_int_equal(eng_counters(b.node.eng)->req_held, 1);

	b.owner_full = false;
	assert_int_equal(h_accept(&b, first), 0);
	h_take(&b, CM_MSG_REP);
	ev = h_ev(&b, ENG_EV_REQ_RECEIVED, 0);
	assert_int_equal(ev.msg.req.local_comm_id, second);
	h_fini(&a);
	h_fini(&b);
}

static void test_listener_destroy_with_held(void **state)
{
	struct h_side a, b;
	struct eng_config cfg = { .mra_service_timeout = H_SVC, .max_held = 2 };
	uint32_t lid, got;
	struct cm_msg m;

	(void)state;
	h_init(&a, GUID_A, 1, false, 3);
	h_init_cfg(&b, GUID_B, 2, false, 4, &cfg);
	lid = h_listen(&b, SID, 1);
	h_connect(&a, &b, SID);
	h_connect(&a, &b, SID);
	h_deliver(&a, &b);
	got = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	h_take(&b, CM_MSG_MRA);
	assert_int_equal(eng_destroy(b.node.eng, lid, h_now), 0);
	m = h_take(&b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(eng_record_count(b.node.eng), 1);
	/* The delivered id is the client's own: it can still accept. */
	assert_int_equal(h_accept(&b, got), 0);
	h_fini(&a);
	h_fini(&b);
}

static void test_listen_errors(void **state)
{
	struct h_side b;
	uint32_t id, id2, id3;
	struct pair p;

	(void)state;
	h_init(&b, GUID_B, 2, false, 4);
	h_listen(&b, SID, 1);
	assert_int_equal(eng_create_id(b.node.eng, 1, 0, &id), 0);
	assert_int_equal(
		eng_listen(b.node.eng, id, SID, UINT64_MAX, 1, NULL, h_now),
		-EADDRINUSE);
	assert_int_equal(
		eng_listen(b.node.eng, id, SID + 1, UINT64_MAX, 0, NULL, h_now),
		-EINVAL);
	assert_int_equal(h_state(&b, id), ENG_STATE_IDLE);
	/* Masked listener: the rdma_cm TCP port space. */
	assert_int_equal(eng_listen(b.node.eng, id, 0x0000000001060000ULL,
				    0xffffffffffff0000ULL, 4, NULL, h_now),
			 0);
	assert_int_equal(eng_create_id(b.node.eng, 1, 0, &id2), 0);
	assert_int_equal(eng_listen(b.node.eng, id2, 0x0000000001060000ULL,
				    0xffffffffffff0000ULL, 4, NULL, h_now),
			 -EADDRINUSE);
	assert_int_equal(eng_create_id(b.node.eng, 1, 0, &id3), 0);
	h_fini(&b);

	pair_init(&p, false);
	assert_int_equal(eng_create_id(p.b.node.eng, 1, 0, &id), 0);
	assert_int_equal(eng_listen(p.b.node.eng, id, 0x0000000001060000ULL,
				    0xffffffffffff0000ULL, 4, NULL, h_now),
			 0);
	p.aid = h_connect(&p.a, &p.b, 0x0000000001064e20ULL);
	h_deliver(&p.a, &p.b);
	assert_int_equal(h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0).listen_id, id);
	pair_fini(&p);
}

/* Selectors (cm_engine.h, eng_listen): GIDs ::ffff:10.0.0.n, ports. */
static struct eng_listen_sel sel_gid(uint8_t n)
{
	struct eng_listen_sel s = { .kind = ENG_SEL_GID };

	s.gid[10] = s.gid[11] = 0xff;
	s.gid[12] = 10;
	s.gid[15] = n;
	return s;
}

static struct eng_listen_sel sel_ports(uint64_t bits)
{
	struct eng_listen_sel s = { .kind = ENG_SEL_PORTS };

	s.ports[0] = bits;
	return s;
}

static int sel_listen(struct h_side *s, uint64_t sid, uint64_t mask,
		      const struct eng_listen_sel *sel, uint32_t *id)
{
	int rc;

	assert_int_equal(eng_create_id(s->node.eng, 7, 0, id), 0);
	rc = eng_listen(s->node.eng, *id, sid, mask, 8, sel, h_now);
	if (rc)
		assert_int_equal(eng_destroy(s->node.eng, *id, h_now), 0);
	return rc;
}

/*
 * A REQ from a for sid, sent to b's GID ::ffff:10.0.0.n (its primary path
 * GID on b's side) and arriving on b's port 'port': the listener that got
 * it, or 0 when b answered REJ 8.
 */
static uint32_t sel_req(struct pair *p, uint64_t sid, uint16_t port, uint8_t n)
{
	struct eng_listen_sel g = sel_gid(n);
	struct eng_addr from = p->a.node.addr;
	struct eng_event ev;
	struct cm_msg m;

	h_connect(&p->a, &p->b, sid);
	m = h_take(&p->a, CM_MSG_REQ);
	memcpy(m.req.primary_remote_gid, g.gid, CM_GID_SIZE);
	from.port = port;
	eng_recv(p->b.node.eng, &from, &m, h_now);
	if (h_pending(&p->b)) {
		m = h_take(&p->b, CM_MSG_REJ);
		assert_int_equal(m.rej.reason, CM_REJ_INVALID_SERVICE_ID);
		return 0;
	}
	ev = h_ev(&p->b, ENG_EV_REQ_RECEIVED, 0);
	assert_int_equal(eng_destroy(p->b.node.eng, ev.id, h_now), 0);
	assert_int_equal(h_take(&p->b, CM_MSG_REJ).rej.reason,
			 CM_REJ_CONSUMER_DEFINED);
	return ev.listen_id;
}

/* What the kernel's rdma_cm refuses for two binds of one port. */
static void test_listen_sel_overlap(void **state)
{
	struct eng_listen_sel g1 = sel_gid(1), g2 = sel_gid(2), zero = g1;
	struct eng_listen_sel p1 = sel_ports(1u << 1), p2 = sel_ports(1u << 2);
	struct eng_listen_sel p12 = sel_ports(1u << 1 | 1u << 2);
	struct eng_listen_sel none = sel_ports(0);
	struct eng_listen_info li;
	const uint64_t range = 0x0000000001060000ULL;
	const uint64_t mask = 0xffffffffffff0000ULL;
	struct h_side b;
	uint32_t l1, id;

	(void)state;
	memset(zero.gid, 0, sizeof(zero.gid));
	h_init(&b, GUID_B, 2, true, 4);
	/* Two GIDs on one service id, and the same GID again. */
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &g1, &l1), 0);
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &g2, &id), 0);
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &g1, &id),
			 -EADDRINUSE);
	/* The wildcard overlaps everything, a NULL selector is one. */
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, NULL, &id),
			 -EADDRINUSE);
	/* A port and a GID never overlap; two ports when they share one. */
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &p1, &id), 0);
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &p12, &id),
			 -EADDRINUSE);
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &p2, &id), 0);
	/* Another service id, or another mask, is another claim. */
	assert_int_equal(sel_listen(&b, SID + 1, UINT64_MAX, &g1, &id), 0);
	assert_int_equal(sel_listen(&b, range, mask, &g1, &id), 0);
	assert_int_equal(sel_listen(&b, range, mask, &g1, &id), -EADDRINUSE);
	assert_int_equal(sel_listen(&b, range, mask, NULL, &id), -EADDRINUSE);
	assert_int_equal(sel_listen(&b, range, mask, &g2, &id), 0);
	assert_int_equal(
		sel_listen(&b, range, 0xffffffffff000000ULL, NULL, &id), 0);
	/* A wildcard first: nothing else on that service id. */
	assert_int_equal(sel_listen(&b, SID + 2, UINT64_MAX, NULL, &id), 0);
	assert_int_equal(sel_listen(&b, SID + 2, UINT64_MAX, &g1, &id),
			 -EADDRINUSE);
	assert_int_equal(sel_listen(&b, SID + 2, UINT64_MAX, &p1, &id),
			 -EADDRINUSE);
	/* Nothing to match: no port, a zero GID (an unknown one reads so). */
	assert_int_equal(sel_listen(&b, SID + 3, UINT64_MAX, &none, &id),
			 -EINVAL);
	assert_int_equal(sel_listen(&b, SID + 3, UINT64_MAX, &zero, &id),
			 -EINVAL);
	/* The listener shows its selector; destroyed, its claim is free. */
	assert_int_equal(eng_listen_info(b.node.eng, l1, &li), 0);
	assert_int_equal(li.sel.kind, ENG_SEL_GID);
	assert_memory_equal(li.sel.gid, g1.gid, CM_GID_SIZE);
	assert_int_equal(eng_destroy(b.node.eng, l1, h_now), 0);
	assert_int_equal(sel_listen(&b, SID, UINT64_MAX, &g1, &id), 0);
	h_fini(&b);
}

/* The most specific listener that takes a REQ gets it. */
static void test_listen_sel_dispatch(void **state)
{
	struct eng_listen_sel g1 = sel_gid(1), g2 = sel_gid(2);
	struct eng_listen_sel p1 = sel_ports(1u << 1), p2 = sel_ports(1u << 2);
	const uint64_t range = 0x0000000001060000ULL;
	const uint64_t mask = 0xffffffffffff0000ULL;
	uint32_t lg1, lg2, lp1, lp2, lany, lrange;
	struct pair p;

	(void)state;
	pair_init(&p, true);
	assert_int_equal(eng_port_set(p.b.node.eng, 2, GUID_B, true), 0);
	assert_int_equal(sel_listen(&p.b, SID, UINT64_MAX, &g1, &lg1), 0);
	assert_int_equal(sel_listen(&p.b, SID, UINT64_MAX, &g2, &lg2), 0);
	assert_int_equal(sel_listen(&p.b, SID, UINT64_MAX, &p1, &lp1), 0);
	assert_int_equal(sel_listen(&p.b, SID, UINT64_MAX, &p2, &lp2), 0);
	/* A GID listener takes its GID on any port, before the port's. */
	assert_int_equal(sel_req(&p, SID, 1, 1), lg1);
	assert_int_equal(sel_req(&p, SID, 2, 1), lg1);
	assert_int_equal(sel_req(&p, SID, 1, 2), lg2);
	/* Another GID of ours: the port listener of where it came in. */
	assert_int_equal(sel_req(&p, SID, 1, 3), lp1);
	assert_int_equal(sel_req(&p, SID, 2, 3), lp2);
	/* A GID listener alone: the other GID is REJ 8. */
	assert_int_equal(eng_destroy(p.b.node.eng, lp1, h_now), 0);
	assert_int_equal(eng_destroy(p.b.node.eng, lp2, h_now), 0);
	assert_int_equal(sel_req(&p, SID, 1, 3), 0);
	assert_int_equal(sel_req(&p, SID, 1, 2), lg2);
	assert_int_equal(eng_counters(p.b.node.eng)->req_no_listener, 1);
	/* Specific beats wildcard, the selector before the mask: a masked
	 * wildcard under exact GID listeners, and an exact wildcard under
	 * a masked GID one. */
	assert_int_equal(sel_listen(&p.b, range | 7, UINT64_MAX, &g1, &lg1), 0);
	assert_int_equal(sel_listen(&p.b, range, mask, NULL, &lrange), 0);
	assert_int_equal(sel_req(&p, range | 7, 1, 1), lg1);
	assert_int_equal(sel_req(&p, range | 7, 1, 2), lrange);
	assert_int_equal(sel_req(&p, range | 8, 2, 1), lrange);
	assert_int_equal(sel_listen(&p.b, SID + 1, UINT64_MAX, NULL, &lany), 0);
	assert_int_equal(sel_listen(&p.b, SID & ~0xfULL, ~0xfULL, &g2, &lg2),
			 0);
	assert_int_equal(sel_req(&p, SID + 1, 1, 2), lg2);
	assert_int_equal(sel_req(&p, SID + 1, 1, 1), lany);
	pair_fini(&p);
}

/* A SIDR_REQ has no path: its GRH's destination GID is what it names. */
static void test_listen_sel_sidr(void **state)
{
	struct eng_listen_sel g1 = sel_gid(1), p2 = sel_ports(1u << 2);
	struct eng_addr from;
	struct eng_sidr_param sp;
	struct eng_event ev;
	struct cm_msg m;
	uint32_t lg1, lp2;
	struct pair p;
	int i;
	/* Sent to: GID 1, GID 2, nothing known; port 1, 1, 2. */
	const struct {
		uint8_t gid;
		uint16_t port;
		uint32_t *lis;
	} cases[] = { { 1, 1, &lg1 },
		      { 2, 1, NULL },
		      { 0, 1, NULL },
		      { 0, 2, &lp2 },
		      { 1, 2, &lg1 } };

	(void)state;
	pair_init(&p, true);
	assert_int_equal(eng_port_set(p.b.node.eng, 2, GUID_B, true), 0);
	assert_int_equal(sel_listen(&p.b, SID, UINT64_MAX, &g1, &lg1), 0);
	assert_int_equal(sel_listen(&p.b, SID, UINT64_MAX, &p2, &lp2), 0);
	memset(&sp, 0, sizeof(sp));
	sp.dest = p.b.node.addr;
	sp.service_id = SID;
	sp.timeout = H_RESP;
	sp.max_retries = 2;
	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		assert_int_equal(eng_create_id(p.a.node.eng, 9, 0, &p.aid), 0);
		assert_int_equal(eng_sidr_req(p.a.node.eng, p.aid, &sp, h_now),
				 0);
		m = h_take(&p.a, CM_MSG_SIDR_REQ);
		from = p.a.node.addr;
		from.port = cases[i].port;
		from.grh = true;
		from.gid[15] = 9;
		if (cases[i].gid)
			memcpy(from.local_gid, sel_gid(cases[i].gid).gid,
			       CM_GID_SIZE);
		eng_recv(p.b.node.eng, &from, &m, h_now);
		if (!cases[i].lis) {
			m = h_take(&p.b, CM_MSG_SIDR_REP);
			assert_int_equal(m.sidr_rep.status,
					 CM_SIDR_UNSUPPORTED);
			continue;
		}
		ev = h_ev(&p.b, ENG_EV_SIDR_REQ_RECEIVED, 0);
		assert_int_equal(ev.listen_id, *cases[i].lis);
		assert_memory_equal(ev.addr.local_gid, from.local_gid,
				    CM_GID_SIZE);
		assert_int_equal(eng_destroy(p.b.node.eng, ev.id, h_now), 0);
		h_take(&p.b, CM_MSG_SIDR_REP);
	}
	pair_fini(&p);
}

static void test_unknown_peers(void **state)
{
	struct pair p;
	struct cm_msg m, in;
	struct eng_event ev;

	(void)state;
	pair_init(&p, false);
	/* IBTA 12.9.8: REQ for a service nobody listens on: REJ 8. */
	p.aid = h_connect(&p.a, &p.b, SID);
	h_deliver(&p.a, &p.b);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(m.rej.remote_comm_id, p.aid);
	assert_int_equal(eng_record_count(p.b.node.eng), 0);
	h_inject(&p.b, &p.a, &m);
	ev = h_ev(&p.a, ENG_EV_REJ_RECEIVED, p.aid);
	assert_int_equal(ev.msg.rej.reason, CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_IDLE);
	assert_int_equal(eng_counters(p.b.node.eng)->req_no_listener, 1);

	/* IBTA 12.9.6: DREQ for no connection still gets a DREP. */
	cm_msg_init(&in, CM_MSG_DREQ, 0x77);
	in.dreq.local_comm_id = 0x1234;
	in.dreq.remote_comm_id = 0x5678;
	h_inject(&p.a, &p.b, &in);
	m = h_take(&p.b, CM_MSG_DREP);
	assert_int_equal(m.drep.local_comm_id, 0x5678);
	assert_int_equal(m.drep.remote_comm_id, 0x1234);
	assert_int_equal(m.hdr.tid, 0x77);

	/* A REP for no connection: REJ 6 invalid comm id. */
	cm_msg_init(&in, CM_MSG_REP, 0x78);
	in.rep.local_comm_id = 0x4321;
	in.rep.remote_comm_id = 0x8765;
	h_inject(&p.a, &p.b, &in);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_INVALID_COMM_ID);
	assert_int_equal(m.rej.remote_comm_id, 0x4321);

	/*
	 * An RTU for nobody: the sender believes in a connection we do not
	 * have (our REJ was lost): REJ again, in the name it used for us.
	 */
	cm_msg_init(&in, CM_MSG_RTU, 1);
	in.rtu.local_comm_id = 0x111;
	in.rtu.remote_comm_id = 0x999;
	h_inject(&p.a, &p.b, &in);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_INVALID_COMM_ID);
	assert_int_equal(m.rej.local_comm_id, 0x999);
	assert_int_equal(m.rej.remote_comm_id, 0x111);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected[CM_MSG_RTU], 1);

	/* DREP, MRA, APR, REJ for nobody: counted, never answered. */
	cm_msg_init(&in, CM_MSG_DREP, 1);
	in.drep.remote_comm_id = 0x999;
	h_inject(&p.a, &p.b, &in);
	cm_msg_init(&in, CM_MSG_MRA, 1);
	in.mra.remote_comm_id = 0x999;
	h_inject(&p.a, &p.b, &in);
	cm_msg_init(&in, CM_MSG_APR, 1);
	in.apr.remote_comm_id = 0x999;
	h_inject(&p.a, &p.b, &in);
	cm_msg_init(&in, CM_MSG_REJ, 1);
	in.rej.remote_comm_id = 0x999;
	in.rej.reason = CM_REJ_CONSUMER_DEFINED;
	h_inject(&p.a, &p.b, &in);
	assert_int_equal(h_pending(&p.b), 0);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected[CM_MSG_DREP],
			 1);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected[CM_MSG_MRA], 1);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected[CM_MSG_APR], 1);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected[CM_MSG_REJ], 1);

	/* The REJ answering the stray RTU ends a half-open connection. */
	pair_fini(&p);
	pair_init(&p, false);
	pair_rep(&p);
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	h_drop(&p.b); /* the REJ is lost */
	h_settle(&p.a, &p.b); /* b's timewait ends, the record goes */
	assert_int_equal(eng_record_count(p.b.node.eng), 1);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_pump(&p.a, &p.b);
	h_ev(&p.a, ENG_EV_REJ_RECEIVED, p.aid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);
	pair_fini(&p);
}

/* Lesson 3: a call the state does not allow fails and changes nothing. */
static void test_invalid_api(void **state)
{
	struct pair p;
	struct cm_rej rej = { .reason = CM_REJ_CONSUMER_DEFINED };
	struct cm_lap lap;
	uint32_t idle;

	(void)state;
	memset(&lap, 0, sizeof(lap));
	pair_init(&p, false);
	p.aid = h_connect(&p.a, &p.b, SID);
	h_drop(&p.a);
	assert_int_equal(h_accept(&p.a, p.aid), -EINVAL);
	assert_int_equal(eng_reject(p.a.node.eng, p.aid, &rej, h_now), -EINVAL);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), -EINVAL);
	assert_int_equal(eng_mra(p.a.node.eng, p.aid, 10, NULL, 0, h_now),
			 -EINVAL);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 -EINVAL);
	assert_int_equal(
		eng_listen(p.a.node.eng, p.aid, 1, UINT64_MAX, 1, NULL, h_now),
		-EINVAL);
	assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now), -EINVAL);
	assert_int_equal(
		eng_apr(p.a.node.eng, p.aid, 0, NULL, 0, NULL, 0, h_now),
		-EINVAL);
	assert_int_equal(eng_ack(p.a.node.eng, p.aid, h_now), -EINVAL);
	assert_int_equal(eng_destroy(p.a.node.eng, 0xdeadbeef, h_now), -ENOENT);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REQ_SENT);
	assert_int_equal(h_pending(&p.a), 0);
	assert_true(eng_next_deadline(p.a.node.eng) == h_now + rtx());
	assert_true(eng_counters(p.a.node.eng)->unexpected_api >= 8);

	assert_int_equal(eng_create_id(p.a.node.eng, 1, 0, &idle), 0);
	assert_int_equal(eng_rtu(p.a.node.eng, idle, NULL, h_now), -EINVAL);
	assert_int_equal(eng_disconnect(p.a.node.eng, idle, NULL, 0, h_now),
			 -EINVAL);
	{
		struct eng_connect_param cp;

		memset(&cp, 0, sizeof(cp));
		cp.dest.port = 5; /* never declared */
		assert_int_equal(eng_connect(p.a.node.eng, idle, &cp, h_now),
				 -ENODEV);
		assert_int_equal(h_state(&p.a, idle), ENG_STATE_IDLE);
	}
	pair_fini(&p);
}

static void test_sidr(void **state)
{
	struct pair p;
	struct eng_sidr_param sp;
	struct cm_sidr_rep rep;
	struct eng_event ev;
	uint32_t id;
	int i;

	(void)state;
	pair_init(&p, false);
	memset(&sp, 0, sizeof(sp));
	sp.dest = p.b.node.addr;
	sp.service_id = SID;
	sp.timeout = H_RESP;
	sp.max_retries = 2;
	sp.private_data[0] = 0x42;
	p.lid = h_listen(&p.b, SID, 8);
	assert_int_equal(eng_create_id(p.a.node.eng, 9, 0, &p.aid), 0);
	assert_int_equal(eng_sidr_req(p.a.node.eng, p.aid, &sp, h_now), 0);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_SIDR_REQ_SENT);
	h_deliver(&p.a, &p.b);
	ev = h_ev(&p.b, ENG_EV_SIDR_REQ_RECEIVED, 0);
	p.bid = ev.id;
	assert_int_equal(ev.listen_id, p.lid);
	assert_int_equal(ev.msg.sidr_req.private_data[0], 0x42);
	/* A duplicate SIDR_REQ is recognised by (request id, address). */
	h_inject(&p.a, &p.b, &p.a.out.m[0].msg);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(
		eng_counters(p.b.node.eng)->duplicates[CM_MSG_SIDR_REQ], 1);
	memset(&rep, 0, sizeof(rep));
	rep.qpn = 0x77;
	rep.qkey = 0x11111111;
	assert_int_equal(eng_sidr_rep(p.b.node.eng, p.bid, &rep, h_now), 0);
	h_deliver(&p.b, &p.a);
	ev = h_ev(&p.a, ENG_EV_SIDR_REP_RECEIVED, p.aid);
	assert_int_equal(ev.msg.sidr_rep.qpn, 0x77);
	assert_int_equal(ev.msg.sidr_rep.status, CM_SIDR_SUCCESS);
	assert_int_equal(ev.msg.sidr_rep.request_id, p.aid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_IDLE);

	/* No listener: status 1. */
	sp.service_id = SID + 1;
	assert_int_equal(eng_create_id(p.a.node.eng, 9, 0, &id), 0);
	assert_int_equal(eng_sidr_req(p.a.node.eng, id, &sp, h_now), 0);
	h_pump(&p.a, &p.b);
	ev = h_ev(&p.a, ENG_EV_SIDR_REP_RECEIVED, id);
	assert_int_equal(ev.msg.sidr_rep.status, CM_SIDR_UNSUPPORTED);

	/* Lost: retries, then SIDR_REQ_ERROR. */
	assert_int_equal(eng_create_id(p.a.node.eng, 9, 0, &id), 0);
	assert_int_equal(eng_sidr_req(p.a.node.eng, id, &sp, h_now), 0);
	for (i = 0; i <= 2; i++) {
		h_drop(&p.a);
		h_advance(&p.a, NULL, h_ns(H_RESP));
	}
	assert_int_equal(
		eng_counters(p.a.node.eng)->retransmitted[CM_MSG_SIDR_REQ], 2);
	ev = h_ev(&p.a, ENG_EV_SIDR_REQ_ERROR, id);
	assert_int_equal(ev.status, -ETIMEDOUT);
	pair_fini(&p);
}

static void test_lap_roce(void **state)
{
	struct pair p;
	struct cm_lap lap;
	struct cm_msg in, m;

	(void)state;
	memset(&lap, 0, sizeof(lap));
	pair_init(&p, true);
	pair_established(&p);
	assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now),
			 -EOPNOTSUPP);
	assert_int_equal(h_pending(&p.a), 0);
	/* A peer that tries anyway is told "not supported", not ignored. */
	cm_msg_init(&in, CM_MSG_LAP, 5);
	in.lap.local_comm_id = p.aid;
	in.lap.remote_comm_id = p.bid;
	h_inject(&p.a, &p.b, &in);
	m = h_take(&p.b, CM_MSG_APR);
	assert_int_equal(m.apr.status, CM_APR_UNSUPPORTED);
	assert_int_equal(m.apr.remote_comm_id, p.aid);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);
	pair_fini(&p);
}

static void test_lap_ib(void **state)
{
	struct pair p;
	struct cm_lap lap;
	struct eng_event ev;
	int i;

	(void)state;
	memset(&lap, 0, sizeof(lap));
	lap.alt_local_lid = 9;
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now), 0);
	assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now), -EINVAL);
	h_deliver(&p.a, &p.b);
	ev = h_ev(&p.b, ENG_EV_LAP_RECEIVED, p.bid);
	assert_int_equal(ev.msg.lap.alt_local_lid, 9);
	assert_int_equal(eng_apr(p.b.node.eng, p.bid, CM_APR_SUCCESS, NULL,
				 CM_APR_INFO_SIZE + 1, NULL, 0, h_now),
			 -EINVAL);
	/* IBTA Table 116: info, its length and private data go out. */
	assert_int_equal(eng_apr(p.b.node.eng, p.bid, CM_APR_SUCCESS,
				 (const uint8_t *)"inf", 3,
				 (const uint8_t *)"apr-pd", 6, h_now),
			 0);
	assert_int_equal(eng_apr(p.b.node.eng, p.bid, CM_APR_SUCCESS, NULL, 0,
				 NULL, 0, h_now),
			 -EINVAL);
	h_deliver(&p.b, &p.a);
	ev = h_ev(&p.a, ENG_EV_APR_RECEIVED, p.aid);
	assert_int_equal(ev.msg.apr.status, CM_APR_SUCCESS);
	assert_int_equal(ev.msg.apr.info_length, 3);
	assert_memory_equal(ev.msg.apr.info, "inf", 3);
	assert_memory_equal(ev.msg.apr.private_data, "apr-pd", 6);
	assert_true(eng_next_deadline(p.a.node.eng) == ENG_NO_DEADLINE);

	/* Lost LAP: retries, then LAP_ERROR; still established. */
	assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now), 0);
	for (i = 0; i <= H_RETRIES; i++) {
		h_drop(&p.a);
		h_advance(&p.a, NULL, rtx());
	}
	h_ev(&p.a, ENG_EV_LAP_ERROR, p.aid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_ESTABLISHED);
	assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now), 0);
	pair_fini(&p);
}

static void test_destroy_owner(void **state)
{
	struct pair p;
	uint32_t other;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	h_connect(&p.a, &p.b, SID + 5);
	h_connect(&p.a, &p.b, SID + 6);
	assert_int_equal(eng_create_id(p.a.node.eng, 1234, 0, &other), 0);
	h_drop(&p.a);
	/* h_connect's ids belong to owner 9. */
	assert_int_equal(eng_destroy_owner(p.a.node.eng, 9, h_now), 3);
	assert_int_equal(h_state(&p.a, other), ENG_STATE_IDLE);
	assert_int_equal(h_pending(&p.a), 3);
	assert_int_equal(eng_counters(p.a.node.eng)->sent[CM_MSG_DREQ], 1);
	assert_int_equal(eng_counters(p.a.node.eng)->sent[CM_MSG_REJ], 2);
	/* Passive side: the listener and its delivered id (owner 7). */
	assert_int_equal(eng_destroy_owner(p.b.node.eng, 7, h_now), 2);
	h_settle(&p.a, &p.b);
	assert_int_equal(eng_record_count(p.a.node.eng), 1);
	assert_int_equal(eng_record_count(p.b.node.eng), 0);
	pair_fini(&p);
}

static void test_comm_ids(void **state)
{
	struct h_side s;
	uint32_t a, b, ids[2000];
	int i, j;

	(void)state;
	h_init(&s, GUID_A, 1, false, 1234);
	for (i = 0; i < 2000; i++) {
		assert_int_equal(eng_create_id(s.node.eng, 0, 0, &ids[i]), 0);
		assert_int_not_equal(ids[i], 0);
	}
	/* Not a counter from a base: no two neighbours one apart. */
	for (i = 1, j = 0; i < 2000; i++)
		j += ids[i] == ids[i - 1] + 1;
	assert_true(j < 3);
	for (i = 0; i < 2000; i++)
		for (j = i + 1; j < 2000; j++)
			assert_int_not_equal(ids[i], ids[j]);
	for (i = 0; i < 2000; i++)
		assert_int_equal(eng_destroy(s.node.eng, ids[i], h_now), 0);
	assert_int_equal(eng_record_count(s.node.eng), 0);

	/*
	 * After 2^32 ids the counter comes round: an id still held by a
	 * record (here in timewait) is skipped, never handed out twice.
	 */
	{
		struct pair p;
		uint32_t before;

		pair_init(&p, false);
		before = p.a.node.eng->id_next;
		reach(&p, ENG_STATE_TIMEWAIT);
		assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
		/* p.aid was the first id a drew. */
		p.a.node.eng->id_next = before;
		assert_int_equal(eng_create_id(p.a.node.eng, 0, 0, &a), 0);
		assert_int_not_equal(a, p.aid);
		/* Once timewait is over the record is gone. */
		h_settle(&p.a, &p.b);
		p.a.node.eng->id_next = before;
		assert_int_equal(eng_create_id(p.a.node.eng, 0, 0, &b), 0);
		assert_int_equal(b, p.aid);
		pair_fini(&p);
	}
	h_fini(&s);
}

/*
 * Sized for 100,000+ connections (ENGINE_SCALE_COUNT overrides): every
 * lookup is a hash, every deadline a heap entry. Reports memory per record.
 */
static void test_scale(void **state)
{
	const char *env = getenv("ENGINE_SCALE_COUNT");
	size_t n = env ? strtoul(env, NULL, 0) : 100000, i;
	struct pair p;
	uint32_t *aids, *bids;

	(void)state;
	aids = calloc(n, sizeof(*aids));
	bids = calloc(n, sizeof(*bids));
	assert_non_null(aids);
	assert_non_null(bids);
	pair_init(&p, false);
	p.a.compact = p.b.compact = true;
	p.lid = h_listen(&p.b, SID, (unsigned int)n);
	for (i = 0; i < n; i++)
		aids[i] = h_connect(&p.a, &p.b, SID);
	h_deliver(&p.a, &p.b);
	for (i = 0; i < n; i++) {
		bids[i] = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0).id;
		assert_int_equal(h_accept(&p.b, bids[i]), 0);
	}
	h_deliver(&p.b, &p.a);
	for (i = 0; i < n; i++) {
		h_ev(&p.a, ENG_EV_REP_RECEIVED, aids[i]);
		assert_int_equal(eng_rtu(p.a.node.eng, aids[i], NULL, h_now),
				 0);
	}
	h_deliver(&p.a, &p.b);
	for (i = 0; i < n; i++)
		h_ev(&p.b, ENG_EV_RTU_RECEIVED, bids[i]);
	assert_int_equal(eng_record_count(p.a.node.eng), n);
	assert_int_equal(eng_record_count(p.b.node.eng), n + 1);
	printf("# %zu connections: %zu bytes per record + %zu per table "
	       "slot (3 tables, load <= 1)\n",
	       n, sizeof(struct conn), sizeof(struct conn *));
	for (i = 0; i < n; i++)
		assert_int_equal(
			eng_disconnect(p.a.node.eng, aids[i], NULL, 0, h_now),
			0);
	h_pump(&p.a, &p.b);
	for (i = 0; i < n; i++)
		assert_int_equal(eng_destroy(p.a.node.eng, aids[i], h_now), 0);
	/* b's clients answer the DREQs by destroying: DREP from the engine. */
	for (i = 0; i < n; i++)
		assert_int_equal(
			eng_destroy(
				p.b.node.eng,
				h_ev_noack(&p.b, ENG_EV_DREQ_RECEIVED, 0).id,
				h_now),
			0);
	h_settle(&p.a, &p.b);
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	assert_int_equal(eng_record_count(p.b.node.eng), 1);
	assert_int_equal(eng_counters(p.a.node.eng)->retransmitted[CM_MSG_DREQ],
			 0);
	free(aids);
	free(bids);
	pair_fini(&p);
}

/* A failed send is counted; the retransmission timer still runs. */
static void test_send_errors(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	p.a.fail_send = -EIO;
	p.aid = h_connect(&p.a, &p.b, SID);
	assert_int_equal(eng_counters(p.a.node.eng)->send_errors, 1);
	assert_int_equal(eng_counters(p.a.node.eng)->sent[CM_MSG_REQ], 0);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REQ_SENT);
	p.a.fail_send = 0;
	h_advance(&p.a, &p.b, rtx());
	h_take(&p.a, CM_MSG_REQ);
	assert_int_equal(eng_counters(p.a.node.eng)->retransmitted[CM_MSG_REQ],
			 1);
	pair_fini(&p);
}

static char log_lines[64][512];
static int log_n;

static void log_capture(void *ctx, enum log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	if (log_n < 64)
		snprintf(log_lines[log_n++], sizeof(log_lines[0]), "%s", line);
}

static bool log_has(const char *text)
{
	int i;

	for (i = 0; i < log_n; i++)
		if (strstr(log_lines[i], text))
			return true;
	return false;
}

/* Every state change is logged "old -> new on event", with both ids. */
static void test_log_and_unexpected(void **state)
{
	struct pair p;
	struct cm_msg in;
	char want[128];

	(void)state;
	pair_init(&p, false);
	log_n = 0;
	log_set_sink(log_capture, NULL);
	p.aid = h_connect(&p.a, &p.b, SID);
	snprintf(want, sizeof(want),
		 "conn %08x/00000000: IDLE -> REQ_SENT on API_CONNECT", p.aid);
	assert_true(log_has(want));

	/* An RTU in REQ_SENT: counted per (state, event), logged, dropped. */
	cm_msg_init(&in, CM_MSG_RTU, 1);
	in.rtu.remote_comm_id = p.aid;
	in.rtu.local_comm_id = 0x42;
	h_drop(&p.a);
	h_inject(&p.b, &p.a, &in);
	assert_int_equal(
		p.a.node.eng->unexpected[ENG_STATE_REQ_SENT][CONN_EV_RX_RTU],
		1);
	assert_int_equal(eng_counters(p.a.node.eng)->unexpected[CM_MSG_RTU], 1);
	assert_true(log_has("unexpected RX_RTU in REQ_SENT"));
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REQ_SENT);

	/* Below the level, nothing is formatted or sent to the sink. */
	log_n = 0;
	log_set_level(LOG_LVL_INFO);
	h_inject(&p.b, &p.a, &in);
	assert_int_equal(log_n, 0);
	h_quiet_logs();
	pair_fini(&p);
}

static void test_bad_templates(void **state)
{
	struct pair p;
	struct eng_connect_param cp;
	struct cm_rej rej;
	uint32_t id;

	(void)state;
	pair_init(&p, false);
	assert_int_equal(eng_create_id(p.a.node.eng, 1, 0, &id), 0);
	memset(&cp, 0, sizeof(cp));
	cp.dest = p.b.node.addr;
	cp.req.path_mtu = 0; /* IBTA 9.7.4: no such MTU */
	assert_int_equal(eng_connect(p.a.node.eng, id, &cp, h_now), -EINVAL);
	assert_int_equal(h_state(&p.a, id), ENG_STATE_IDLE);
	assert_int_equal(h_pending(&p.a), 0);
	assert_true(eng_next_deadline(p.a.node.eng) == ENG_NO_DEADLINE);

	pair_req(&p);
	memset(&rej, 0, sizeof(rej));
	assert_int_equal(eng_reject(p.b.node.eng, p.bid, &rej, h_now), -EINVAL);
	rej.reason = 99;
	assert_int_equal(eng_reject(p.b.node.eng, p.bid, &rej, h_now), -EINVAL);
	rej.reason = CM_REJ_CONSUMER_DEFINED;
	rej.ari_length = 100;
	assert_int_equal(eng_reject(p.b.node.eng, p.bid, &rej, h_now), -EINVAL);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_REQ_RCVD);
	assert_int_equal(h_pending(&p.b), 0);
	pair_fini(&p);
}

static int walk_count(void *arg, const struct eng_conn_info *info)
{
	size_t *n = arg;

	n[0]++;
	n[1] += info->destroyed;
	n[2] += info->state == ENG_STATE_ESTABLISHED;
	n[3] += info->deadline != ENG_NO_DEADLINE;
	return 0;
}

/* eng_id_info: what the REQ and the REP negotiated, from each side. */
static void test_id_info(void **state)
{
	struct eng_connect_param cp;
	struct eng_id_info ia, ib;
	struct eng_event ev;
	struct cm_rep rep;
	struct pair p;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	memset(&cp, 0, sizeof(cp));
	cp.dest = p.b.node.addr;
	cp.dest.port = 1;
	cp.packet_life_time = H_PLT;
	cp.req.service_id = SID;
	cp.req.local_qpn = 0x100;
	cp.req.remote_cm_resp_timeout = H_RESP;
	cp.req.local_cm_resp_timeout = H_RESP - 1;
	cp.req.primary_local_ack_timeout = H_PLT + 1;
	cp.req.max_cm_retries = H_RETRIES;
	cp.req.transport_type = CM_TRANSPORT_UC;
	cp.req.path_mtu = CM_MTU_1024;
	cp.req.responder_resources = 4;
	cp.req.initiator_depth = 2;
	cp.req.flow_control = 1;
	cp.req.retry_count = 7;
	cp.req.rnr_retry_count = 6;
	assert_int_equal(eng_create_id(p.a.node.eng, 9, 0x2222, &p.aid), 0);
	assert_int_equal(eng_connect(p.a.node.eng, p.aid, &cp, h_now), 0);
	assert_int_equal(eng_id_info(p.a.node.eng, p.aid, &ia), 0);
	assert_int_equal(ia.state, ENG_STATE_REQ_SENT);
	assert_true(ia.active);
	assert_int_equal(ia.context, 0x2222);
	assert_int_equal(ia.local_comm_id, p.aid);
	assert_int_equal(ia.terms.local_psn, cp.req.starting_psn);
	assert_int_equal(ia.local_qpn, 0x100);
	assert_int_equal(ia.terms.responder_resources, 4);
	assert_int_equal(ia.terms.initiator_depth, 2);
	assert_int_equal(ia.terms.transport, CM_TRANSPORT_UC);
	assert_int_equal(ia.terms.max_cm_retries, H_RETRIES);
	assert_int_equal(ia.terms.local_cm_response_timeout, H_RESP - 1);
	assert_int_equal(ia.terms.remote_cm_response_timeout, H_RESP);
	assert_int_equal(ia.remote_qpn, 0);

	assert_int_equal(h_deliver(&p.a, &p.b), 1);
	ev = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0);
	p.bid = ev.id;
	assert_int_equal(eng_id_info(p.b.node.eng, p.bid, &ib), 0);
	assert_int_equal(ib.state, ENG_STATE_REQ_RCVD);
	assert_false(ib.active);
	assert_int_equal(ib.terms.listen_id, p.lid);
	assert_int_equal(ib.service_id, SID);
	assert_int_equal(ib.remote_comm_id, p.aid);
	assert_int_equal(ib.remote_qpn, 0x100);
	assert_int_equal(ib.terms.remote_psn, cp.req.starting_psn);
	assert_int_equal(ib.remote_ca_guid, GUID_A);
	/* Ours are the requester's swapped until we accept. */
	assert_int_equal(ib.terms.responder_resources, 2);
	assert_int_equal(ib.terms.initiator_depth, 4);
	assert_int_equal(ib.terms.flow_control, 1);
	assert_int_equal(ib.terms.retry_count, 7);
	assert_int_equal(ib.terms.rnr_retry_count, 6);
	assert_int_equal(ib.terms.transport, CM_TRANSPORT_UC);
	assert_int_equal(ib.packet_life_time, H_PLT);

	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = 0x200;
	rep.responder_resources = 2;
	rep.initiator_depth = 1;
	rep.target_ack_delay = H_ACK_DELAY;
	rep.failover_accepted = 1;
	rep.rnr_retry_count = 5;
	assert_int_equal(eng_accept(p.b.node.eng, p.bid, &rep, h_now), 0);
	assert_int_equal(eng_id_info(p.b.node.eng, p.bid, &ib), 0);
	assert_int_equal(ib.state, ENG_STATE_REP_SENT);
	assert_int_equal(ib.local_qpn, 0x200);
	assert_int_equal(ib.terms.local_psn, rep.starting_psn);
	assert_int_equal(ib.terms.responder_resources, 2);
	assert_int_equal(ib.terms.initiator_depth, 1);
	assert_int_equal(ib.terms.rnr_retry_count, 5);
	assert_int_equal(ib.terms.target_ack_delay, H_ACK_DELAY);
	assert_int_equal(ib.terms.failover, 1);

	assert_int_equal(h_deliver(&p.b, &p.a), 1);
	h_ev(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(eng_id_info(p.a.node.eng, p.aid, &ia), 0);
	assert_int_equal(ia.state, ENG_STATE_REP_RCVD);
	assert_int_equal(ia.remote_comm_id, p.bid);
	assert_int_equal(ia.remote_qpn, 0x200);
	assert_int_equal(ia.terms.remote_psn, rep.starting_psn);
	assert_int_equal(ia.remote_ca_guid, GUID_B);
	assert_int_equal(ia.terms.responder_resources, 1);
	assert_int_equal(ia.terms.initiator_depth, 2);
	assert_int_equal(ia.terms.rnr_retry_count, 5);
	assert_int_equal(ia.terms.target_ack_delay, H_ACK_DELAY);
	assert_int_equal(ia.terms.failover, 1);

	assert_int_equal(eng_id_info(p.b.node.eng, p.lid, &ib), 0);
	assert_int_equal(ib.state, ENG_STATE_LISTEN);
	assert_int_equal(ib.service_id, SID);
	assert_int_equal(ib.service_mask, UINT64_MAX);
	assert_int_equal(ib.backlog, 8);
	assert_int_equal(ib.credits_used, 0); /* the accept gave it back */
	assert_int_equal(eng_id_info(p.b.node.eng, 0x7fffffff, &ib), -ENOENT);
	pair_fini(&p);
}

/* The engine charges each MAD to its port: sent, received, what it made
 * of one (a duplicate, an unexpected one) on the port it arrived on. */
static void test_port_counters(void **state)
{
	const struct eng_port_counters *a1, *b1, *b2;
	struct eng_addr from2;
	struct cm_msg req, drep;
	struct pair p;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	p.aid = h_connect(&p.a, &p.b, SID);
	req = p.a.out.m[p.a.out.next].msg;
	assert_int_equal(h_deliver(&p.a, &p.b), 1);
	p.bid = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0).id;
	h_inject(&p.a, &p.b, &req); /* a duplicate, on port 1 */
	/* A DREP nobody waits for, on port 2. */
	memset(&drep, 0, sizeof(drep));
	drep.type = CM_MSG_DREP;
	drep.drep.local_comm_id = 0x1234;
	drep.drep.remote_comm_id = 0x5678;
	from2 = p.a.node.addr;
	from2.port = 2;
	eng_recv(p.b.node.eng, &from2, &drep, h_now);
	a1 = eng_port_counters(p.a.node.eng, 1);
	b1 = eng_port_counters(p.b.node.eng, 1);
	b2 = eng_port_counters(p.b.node.eng, 2);
	assert_int_equal(a1->msg[ENG_MSG_SENT][CM_MSG_REQ], 1);
	assert_int_equal(b1->msg[ENG_MSG_RECEIVED][CM_MSG_REQ], 2);
	assert_int_equal(b1->msg[ENG_MSG_DUPLICATES][CM_MSG_REQ], 1);
	assert_int_equal(b1->msg[ENG_MSG_UNEXPECTED][CM_MSG_DREP], 0);
	assert_int_equal(b2->msg[ENG_MSG_RECEIVED][CM_MSG_DREP], 1);
	assert_int_equal(b2->msg[ENG_MSG_UNEXPECTED][CM_MSG_DREP], 1);
	assert_int_equal(b2->msg[ENG_MSG_DUPLICATES][CM_MSG_REQ], 0);
	eng_count_malformed(p.b.node.eng, 2, CM_MSG_RTU);
	assert_int_equal(b2->msg[ENG_MSG_MALFORMED][CM_MSG_RTU], 1);
	assert_int_equal(eng_counters(p.b.node.eng)->malformed[CM_MSG_RTU], 1);
	assert_null(eng_port_counters(p.b.node.eng, ENG_MAX_PORTS));
	pair_fini(&p);
}

static void test_introspection(void **state)
{
	struct pair p;
	struct eng_listen_info li;
	size_t n[4] = { 0 };

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_listen_info(p.b.node.eng, p.lid, &li), 0);
	assert_int_equal(li.service_id, SID);
	assert_int_equal(li.backlog, 8);
	assert_int_equal(li.credits_used, 0);
	assert_int_equal(li.delivered, 1);
	assert_int_equal(eng_listen_info(p.b.node.eng, p.bid, &li), -EINVAL);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	assert_int_equal(eng_walk(p.a.node.eng, walk_count, n), 0);
	assert_int_equal(n[0], 1); /* the DREQ_SENT tail */
	assert_int_equal(n[1], 1);
	assert_int_equal(n[3], 1);
	memset(n, 0, sizeof(n));
	assert_int_equal(eng_walk(p.b.node.eng, walk_count, n), 0);
	assert_int_equal(n[0], 2);
	assert_int_equal(n[2], 1);
	pair_fini(&p);
}

/* Callbacks must not call back in: the engine refuses with -EBUSY. */
static struct eng *reentry_eng;
static int reentry_rc[6];

static int reentry_send(void *ctx, const struct eng_addr *to,
			const struct cm_msg *m)
{
	uint32_t id;

	(void)ctx;
	(void)to;
	(void)m;
	reentry_rc[0] = eng_create_id(reentry_eng, 0, 0, &id);
	return 0;
}

static void reentry_deliver(void *ctx, const struct eng_event *ev)
{
	(void)ctx;
	reentry_rc[1] = eng_ack(reentry_eng, ev->id, h_now);
	reentry_rc[2] = eng_destroy(reentry_eng, ev->id, h_now);
	reentry_rc[3] = eng_port_down(reentry_eng, 1, h_now);
	reentry_rc[4] = eng_establish(reentry_eng, ev->id, h_now);
	reentry_rc[5] = eng_set_context(reentry_eng, ev->id, 7);
}

static uint32_t reentry_random(void *ctx)
{
	static uint32_t x = 1;

	(void)ctx;
	return x = x * 1103515245 + 12345;
}

static void test_callback_reentry(void **state)
{
	struct eng_ops ops = { reentry_send, reentry_deliver, reentry_random,
			       NULL };
	struct eng_config cfg = { .mra_service_timeout = H_SVC };
	struct eng_connect_param cp;
	struct cm_msg rej;
	uint32_t id;

	(void)state;
	reentry_eng = eng_new(&ops, NULL, &cfg);
	assert_non_null(reentry_eng);
	assert_int_equal(eng_port_set(reentry_eng, 1, GUID_A, false), 0);
	assert_int_equal(eng_create_id(reentry_eng, 0, 0, &id), 0);
	memset(&cp, 0, sizeof(cp));
	cp.dest.port = 1;
	cp.req.path_mtu = CM_MTU_1024;
	assert_int_equal(eng_connect(reentry_eng, id, &cp, h_now), 0);
	assert_int_equal(reentry_rc[0], -EBUSY);
	cm_msg_init(&rej, CM_MSG_REJ, 1);
	rej.rej.remote_comm_id = id;
	rej.rej.reason = CM_REJ_CONSUMER_DEFINED;
	eng_recv(reentry_eng, &cp.dest, &rej, h_now);
	assert_int_equal(reentry_rc[1], -EBUSY);
	assert_int_equal(reentry_rc[2], -EBUSY);
	assert_int_equal(reentry_rc[3], -EBUSY);
	assert_int_equal(reentry_rc[4], -EBUSY);
	assert_int_equal(reentry_rc[5], -EBUSY);
	assert_int_equal(eng_set_context(reentry_eng, id, 7), 0);
	assert_int_equal(eng_ack(reentry_eng, id, h_now), 0);
	eng_free(reentry_eng);
}

struct row {
	enum eng_state state;
	enum conn_event ev;
	enum eng_state next;
	int sends; /* first MAD sent in response; -1 none; -2 not checked */
};

static struct conn *conn_of(struct h_side *s, uint32_t id)
{
	struct conn *c = ctab_local_find(&s->node.eng->by_local, id);

	assert_non_null(c);
	return c;
}

/* Produce event ev for record id of who, as the wire or a client would. */
static void fire(struct pair *p, struct h_side *who, struct h_side *peer,
		 uint32_t id, enum conn_event ev)
{
	struct conn *c = conn_of(who, id);
	struct cm_rej rej = { .reason = CM_REJ_CONSUMER_DEFINED };
	struct cm_msg m;
	uint64_t peer_guid = peer->node.guid;

	switch (ev) {
	case CONN_EV_RX_REJ:
	case CONN_EV_RX_REJ_STALE:
		cm_msg_init(&m, CM_MSG_REJ, 1);
		m.rej.local_comm_id = c->remote_id;
		m.rej.remote_comm_id = id;
		m.rej.reason = ev == CONN_EV_RX_REJ ? CM_REJ_CONSUMER_DEFINED :
						      CM_REJ_STALE_CONN;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_STALE:
		cm_msg_init(&m, CM_MSG_REQ, 1);
		m.req.local_comm_id = 0x7777;
		m.req.local_ca_guid = peer_guid;
		m.req.local_qpn = c->remote_qpn;
		m.req.service_id = SID;
		m.req.path_mtu = CM_MTU_1024;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_RX_REQ:
		cm_msg_init(&m, CM_MSG_REQ, 1);
		m.req.local_comm_id = c->remote_id;
		m.req.local_ca_guid = peer_guid;
		m.req.local_qpn = c->remote_qpn;
		m.req.service_id = SID;
		m.req.path_mtu = CM_MTU_1024;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_RX_REP:
		cm_msg_init(&m, CM_MSG_REP, 1);
		m.rep.local_comm_id = c->remote_id;
		m.rep.remote_comm_id = id;
		m.rep.local_ca_guid = peer_guid;
		m.rep.local_qpn = c->remote_qpn;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_RX_RTU:
		cm_msg_init(&m, CM_MSG_RTU, 1);
		m.rtu.local_comm_id = c->remote_id;
		m.rtu.remote_comm_id = id;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_RX_DREQ:
		cm_msg_init(&m, CM_MSG_DREQ, 1);
		m.dreq.local_comm_id = c->remote_id;
		m.dreq.remote_comm_id = id;
		m.dreq.remote_qpn = c->local_qpn;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_RX_MRA_REQ:
	case CONN_EV_RX_MRA_REP:
	case CONN_EV_RX_MRA_LAP:
		cm_msg_init(&m, CM_MSG_MRA, 1);
		m.mra.local_comm_id = c->remote_id;
		m.mra.remote_comm_id = id;
		m.mra.message_mraed =
			ev == CONN_EV_RX_MRA_REQ ? CM_MSG_REF_REQ :
			ev == CONN_EV_RX_MRA_REP ? CM_MSG_REF_REP :
						   CM_MSG_REF_OTHER;
		m.mra.service_timeout = 15;
		h_inject(peer, who, &m);
		break;
	case CONN_EV_RX_REP_STALE: {
		/* Another record of 'who' already holds the peer's QP. */
		uint32_t other = h_connect(who, peer, SID);
		struct conn *o;
		uint32_t pid;

		h_deliver(who, peer);
		pid = h_ev(peer, ENG_EV_REQ_RECEIVED, 0).id;
		assert_int_equal(h_accept(peer, pid), 0);
		h_deliver(peer, who);
		h_ev(who, ENG_EV_REP_RECEIVED, other);
		o = conn_of(who, other);
		cm_msg_init(&m, CM_MSG_REP, 1);
		m.rep.local_comm_id = 0x8888;
		m.rep.remote_comm_id = id;
		m.rep.local_ca_guid = peer_guid;
		m.rep.local_qpn = o->remote_qpn;
		h_inject(peer, who, &m);
		break;
	}
	case CONN_EV_TIMEOUT:
	case CONN_EV_TIMEOUT_LAST:
		if (ev == CONN_EV_TIMEOUT_LAST)
			c->retries_left = 0;
		h_drop(peer);
		h_at(who, NULL, c->deadline);
		break;
	case CONN_EV_API_REJECT:
		assert_int_equal(eng_reject(who->node.eng, id, &rej, h_now), 0);
		break;
	case CONN_EV_API_MRA:
		assert_int_equal(eng_mra(who->node.eng, id, 17, NULL, 0, h_now),
				 0);
		break;
	default:
		fail_msg("no way to fire %s", conn_event_name(ev));
	}
	(void)p;
}

/*
 * The rows the scenario tests above do not reach, driven one by one
 * through the public paths; the expected next state is written here
 * independently of the table.
 */
static void test_table_rows(void **state)
{
	static const struct row rows[] = {
		{ ENG_STATE_REQ_RCVD, CONN_EV_RX_REJ_STALE, ENG_STATE_IDLE,
		  -1 },
		{ ENG_STATE_REQ_RCVD, CONN_EV_STALE, ENG_STATE_REQ_RCVD,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REQ_SENT, CONN_EV_API_REJECT, ENG_STATE_IDLE,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REQ_SENT, CONN_EV_API_MRA,
		  ENG_STATE_MRA_REQ_SENT, CM_MSG_MRA },
		{ ENG_STATE_MRA_REQ_SENT, CONN_EV_RX_REJ_STALE, ENG_STATE_IDLE,
		  -1 },
		{ ENG_STATE_MRA_REQ_SENT, CONN_EV_STALE, ENG_STATE_MRA_REQ_SENT,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REQ_RCVD, CONN_EV_RX_MRA_REQ,
		  ENG_STATE_MRA_REQ_RCVD, -1 },
		{ ENG_STATE_MRA_REQ_RCVD, CONN_EV_RX_REJ, ENG_STATE_IDLE, -1 },
		{ ENG_STATE_MRA_REQ_RCVD, CONN_EV_RX_REJ_STALE,
		  ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_MRA_REQ_RCVD, CONN_EV_RX_REP_STALE, ENG_STATE_IDLE,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REQ_RCVD, CONN_EV_TIMEOUT,
		  ENG_STATE_MRA_REQ_RCVD, CM_MSG_REQ },
		{ ENG_STATE_MRA_REQ_RCVD, CONN_EV_TIMEOUT_LAST, ENG_STATE_IDLE,
		  CM_MSG_REJ },
		{ ENG_STATE_REP_SENT, CONN_EV_RX_REJ_STALE, ENG_STATE_TIMEWAIT,
		  -1 },
		{ ENG_STATE_REP_SENT, CONN_EV_RX_DREQ, ENG_STATE_DREQ_RCVD,
		  -1 },
		{ ENG_STATE_REP_SENT, CONN_EV_STALE, ENG_STATE_REP_SENT,
		  CM_MSG_REJ },
		{ ENG_STATE_REP_RCVD, CONN_EV_API_REJECT, ENG_STATE_IDLE,
		  CM_MSG_REJ },
		{ ENG_STATE_REP_RCVD, CONN_EV_RX_REJ, ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_REP_RCVD, CONN_EV_RX_REJ_STALE, ENG_STATE_TIMEWAIT,
		  -1 },
		{ ENG_STATE_REP_RCVD, CONN_EV_STALE, ENG_STATE_REP_RCVD,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REP_SENT, CONN_EV_API_REJECT, ENG_STATE_IDLE,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REP_SENT, CONN_EV_API_MRA,
		  ENG_STATE_MRA_REP_SENT, CM_MSG_MRA },
		{ ENG_STATE_MRA_REP_SENT, CONN_EV_RX_REJ_STALE,
		  ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_MRA_REP_SENT, CONN_EV_RX_REP,
		  ENG_STATE_MRA_REP_SENT, CM_MSG_MRA },
		{ ENG_STATE_MRA_REP_SENT, CONN_EV_STALE, ENG_STATE_MRA_REP_SENT,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_RX_REQ,
		  ENG_STATE_MRA_REP_RCVD, CM_MSG_REP },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_RX_MRA_REP,
		  ENG_STATE_MRA_REP_RCVD, -1 },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_RX_REJ, ENG_STATE_IDLE, -1 },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_RX_REJ_STALE,
		  ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_RX_DREQ, ENG_STATE_DREQ_RCVD,
		  -1 },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_STALE, ENG_STATE_MRA_REP_RCVD,
		  CM_MSG_REJ },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_TIMEOUT,
		  ENG_STATE_MRA_REP_RCVD, CM_MSG_REP },
		{ ENG_STATE_MRA_REP_RCVD, CONN_EV_TIMEOUT_LAST,
		  ENG_STATE_TIMEWAIT, CM_MSG_REJ },
		{ ENG_STATE_ESTABLISHED, CONN_EV_RX_MRA_LAP,
		  ENG_STATE_ESTABLISHED, -1 },
		{ ENG_STATE_ESTABLISHED, CONN_EV_RX_REJ, ENG_STATE_TIMEWAIT,
		  -1 },
		{ ENG_STATE_ESTABLISHED, CONN_EV_RX_REJ_STALE,
		  ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_DREQ_SENT, CONN_EV_RX_REQ, ENG_STATE_DREQ_SENT,
		  -1 },
		{ ENG_STATE_DREQ_SENT, CONN_EV_RX_REJ, ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_DREQ_SENT, CONN_EV_RX_REJ_STALE, ENG_STATE_TIMEWAIT,
		  -1 },
		{ ENG_STATE_DREQ_SENT, CONN_EV_RX_REP, ENG_STATE_DREQ_SENT,
		  -1 },
		{ ENG_STATE_DREQ_SENT, CONN_EV_RX_RTU, ENG_STATE_DREQ_SENT,
		  -1 },
		{ ENG_STATE_DREQ_SENT, CONN_EV_STALE, ENG_STATE_DREQ_SENT,
		  CM_MSG_REJ },
		{ ENG_STATE_DREQ_RCVD, CONN_EV_RX_REQ, ENG_STATE_DREQ_RCVD,
		  -1 },
		{ ENG_STATE_DREQ_RCVD, CONN_EV_RX_REJ, ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_DREQ_RCVD, CONN_EV_RX_REJ_STALE, ENG_STATE_TIMEWAIT,
		  -1 },
		{ ENG_STATE_DREQ_RCVD, CONN_EV_RX_REP, ENG_STATE_DREQ_RCVD,
		  -1 },
		{ ENG_STATE_DREQ_RCVD, CONN_EV_RX_RTU, ENG_STATE_DREQ_RCVD,
		  -1 },
		{ ENG_STATE_DREQ_RCVD, CONN_EV_STALE, ENG_STATE_DREQ_RCVD,
		  CM_MSG_REJ },
		{ ENG_STATE_TIMEWAIT, CONN_EV_RX_REJ, ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_TIMEWAIT, CONN_EV_RX_REJ_STALE, ENG_STATE_TIMEWAIT,
		  -1 },
		{ ENG_STATE_TIMEWAIT, CONN_EV_RX_REP, ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_TIMEWAIT, CONN_EV_RX_RTU, ENG_STATE_TIMEWAIT, -1 },
		{ ENG_STATE_TIMEWAIT, CONN_EV_STALE, ENG_STATE_TIMEWAIT,
		  CM_MSG_REJ },
		{ ENG_STATE_ESTABLISHED, CONN_EV_RX_RTU, ENG_STATE_ESTABLISHED,
		  -1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct pair p;
		struct h_side *who, *peer;
		uint32_t id;
		bool on_b;
		uint64_t hits;

		pair_init(&p, false);
		reach(&p, r->state);
		switch (r->state) {
		case ENG_STATE_REQ_RCVD:
		case ENG_STATE_MRA_REQ_SENT:
		case ENG_STATE_REP_SENT:
		case ENG_STATE_MRA_REP_RCVD:
		case ENG_STATE_DREQ_RCVD:
			on_b = true;
			break;
		default:
			on_b = r->state == ENG_STATE_ESTABLISHED &&
			       r->ev == CONN_EV_RX_RTU;
			break;
		}
		who = on_b ? &p.b : &p.a;
		peer = on_b ? &p.a : &p.b;
		id = on_b ? p.bid : p.aid;
		assert_int_equal(h_state(who, id), r->state);
		h_drop(who);
		hits = who->node.eng->hits[r->state][r->ev];
		fire(&p, who, peer, id, r->ev);
		if (who->node.eng->hits[r->state][r->ev] != hits + 1)
			fail_msg("row %zu: %s x %s not driven", i,
				 eng_state_name(r->state),
				 conn_event_name(r->ev));
		if (h_state(who, id) != r->next)
			fail_msg("row %zu: %s x %s -> %s, want %s", i,
				 eng_state_name(r->state),
				 conn_event_name(r->ev),
				 eng_state_name(h_state(who, id)),
				 eng_state_name(r->next));
		if (r->sends == -1 && h_pending(who))
			fail_msg("row %zu: sent %s", i,
				 cm_msg_type_name(
					 who->out.m[who->out.next].msg.type));
		else if (r->sends >= 0)
			h_take(who, (enum cm_msg_type)r->sends);
		h_settle(&p.a, &p.b);
		pair_fini(&p);
	}
}

static enum eng_lap_state lap_of(struct h_side *s, uint32_t id)
{
	return conn_of(s, id)->lap;
}

/* a loads an alternate path; b's app has LAP_RECEIVED (acked). */
static struct cm_msg pair_lap(struct pair *p)
{
	struct cm_lap lap;
	struct cm_msg m;

	memset(&lap, 0, sizeof(lap));
	lap.alt_local_lid = 9;
	assert_int_equal(eng_lap(p->a.node.eng, p->aid, &lap, h_now), 0);
	m = h_take(&p->a, CM_MSG_LAP);
	h_inject(&p->a, &p->b, &m);
	h_ev(&p->b, ENG_EV_LAP_RECEIVED, p->bid);
	assert_int_equal(lap_of(&p->b, p->bid), ENG_LAP_RCVD);
	return m;
}

/* IBTA 12.8: a slow app's LAP gets an MRA at half the peer's wait. */
static void test_mra_lap_slow(void **state)
{
	struct pair p;
	struct cm_msg lap, m;
	uint64_t due, ext;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	lap = pair_lap(&p);
	/* b is passive: a waits the REQ's remote CM response time for it. */
	due = h_now + h_ns(H_RESP) / 2;
	assert_true(eng_next_deadline(p.b.node.eng) == due);
	h_at(&p.a, &p.b, due - 1);
	assert_int_equal(h_pending(&p.b), 0);
	h_at(&p.a, &p.b, due);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_OTHER);
	assert_int_equal(m.mra.service_timeout, H_SVC);
	assert_int_equal(m.mra.local_comm_id, p.bid);
	assert_int_equal(m.mra.remote_comm_id, p.aid);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_MRA_SENT);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);

	/* a: LAP_SENT -> MRA_LAP_RCVD, wait service timeout + 2 x PLT. */
	h_inject(&p.b, &p.a, &m);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_MRA_RCVD);
	assert_int_equal(h_mra_ev(&p.a, p.aid, CM_MSG_REF_OTHER, H_SVC).lap,
			 ENG_LAP_MRA_RCVD);
	ext = h_now + h_ns(H_SVC) + 2 * h_ns(H_PLT);
	assert_true(eng_next_deadline(p.a.node.eng) == ext);
	h_at(&p.a, &p.b, h_now + rtx());
	assert_int_equal(h_pending(&p.a), 0);

	/* IBTA 12.9.7: a duplicate LAP in MRA_LAP_SENT: the MRA again. */
	h_inject(&p.a, &p.b, &lap);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_OTHER);
	assert_int_equal(m.mra.service_timeout, H_SVC);
	assert_int_equal(eng_counters(p.b.node.eng)->duplicates[CM_MSG_LAP], 1);
	assert_int_equal(eng_counters(p.b.node.eng)->retransmitted[CM_MSG_MRA],
			 1);
	assert_int_equal(h_events_left(&p.b), 0);
	/* The RTU/REP a duplicate REQ/REP needs is still what c->last is. */
	assert_int_equal(conn_of(&p.b, p.bid)->last.type, CM_MSG_REP);

	/* The app answers from MRA_LAP_SENT. */
	assert_int_equal(eng_apr(p.b.node.eng, p.bid, CM_APR_SUCCESS, NULL, 0,
				 NULL, 0, h_now),
			 0);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_IDLE);
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_APR_RECEIVED, p.aid);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_IDLE);
	assert_true(eng_next_deadline(p.a.node.eng) == ENG_NO_DEADLINE);
	assert_int_equal(eng_counters(p.a.node.eng)->retransmitted[CM_MSG_LAP],
			 0);
	pair_fini(&p);
}

/* The active side owes the APR: its MRA_DUE uses its own advertised time. */
static void test_mra_lap_active_side(void **state)
{
	struct pair p;
	struct cm_lap lap;
	struct cm_msg m;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	memset(&lap, 0, sizeof(lap));
	assert_int_equal(eng_lap(p.b.node.eng, p.bid, &lap, h_now), 0);
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_LAP_RECEIVED, p.aid);
	/* The REQ's local CM response time: how long b waits for a. */
	assert_true(eng_next_deadline(p.a.node.eng) ==
		    h_now + h_ns(H_RESP) / 2);
	h_advance(&p.a, &p.b, h_ns(H_RESP) / 2);
	m = h_take(&p.a, CM_MSG_MRA);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_OTHER);
	h_inject(&p.a, &p.b, &m);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_MRA_RCVD);
	h_mra_ev(&p.b, p.bid, CM_MSG_REF_OTHER, m.mra.service_timeout);
	assert_int_equal(eng_apr(p.a.node.eng, p.aid, CM_APR_REJECTED, NULL, 0,
				 NULL, 0, h_now),
			 0);
	h_deliver(&p.a, &p.b);
	assert_int_equal(h_ev(&p.b, ENG_EV_APR_RECEIVED, p.bid).msg.apr.status,
			 CM_APR_REJECTED);
	pair_fini(&p);
}

/* eng_mra on a LAP_RCVD id sends the MRA; elsewhere in ESTABLISHED not. */
static void test_mra_lap_api(void **state)
{
	struct pair p;
	struct cm_msg m;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	/* No LAP owed: -EINVAL, nothing sent, nothing changed. */
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 20, NULL, 0, h_now),
			 -EINVAL);
	assert_int_equal(h_pending(&p.b), 0);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected_api, 1);
	assert_int_equal(
		eng_apr(p.b.node.eng, p.bid, 0, NULL, 0, NULL, 0, h_now),
		-EINVAL);
	assert_int_equal(eng_counters(p.b.node.eng)->unexpected_api, 2);
	pair_lap(&p);
	/* Our own LAP waiting (a, LAP_SENT) is no LAP owed either. */
	assert_int_equal(eng_mra(p.a.node.eng, p.aid, 20, NULL, 0, h_now),
			 -EINVAL);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_SENT);
	assert_int_equal(h_pending(&p.a), 0);

	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 20, NULL, 0, h_now), 0);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.service_timeout, 20);
	assert_int_equal(m.mra.message_mraed, CM_MSG_REF_OTHER);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_MRA_SENT);
	/* The MRA_DUE deadline went with it: no second, automatic MRA. */
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);
	h_inject(&p.b, &p.a, &m);
	assert_true(eng_next_deadline(p.a.node.eng) ==
		    h_now + h_ns(20) + 2 * h_ns(H_PLT));
	/* Asking for more time again, as in MRA_REQ_SENT: a new MRA. */
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 21, NULL, 0, h_now), 0);
	m = h_take(&p.b, CM_MSG_MRA);
	assert_int_equal(m.mra.service_timeout, 21);
	/* ... which extends a's wait again in MRA_LAP_RCVD. */
	h_advance(&p.a, &p.b, 1000);
	h_inject(&p.b, &p.a, &m);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_MRA_RCVD);
	assert_true(eng_next_deadline(p.a.node.eng) ==
		    h_now + h_ns(21) + 2 * h_ns(H_PLT));
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, 32, NULL, 0, h_now),
			 -EINVAL);
	pair_fini(&p);
}

/* MRA_LAP_RCVD: retries after the longer wait, crossed LAPs, LAP_ERROR. */
static void test_mra_lap_rcvd_timeout(void **state)
{
	struct pair p;
	struct cm_msg m, in;
	uint64_t at;
	int i;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	pair_lap(&p);
	assert_int_equal(eng_mra(p.b.node.eng, p.bid, H_SVC, NULL, 0, h_now),
			 0);
	h_deliver(&p.b, &p.a);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_MRA_RCVD);
	h_mra_ev(&p.a, p.aid, CM_MSG_REF_OTHER, H_SVC);
	/* A LAP from b now crosses ours: refused with APR 3. */
	cm_msg_init(&in, CM_MSG_LAP, 9);
	in.lap.local_comm_id = p.bid;
	in.lap.remote_comm_id = p.aid;
	h_inject(&p.b, &p.a, &in);
	m = h_take(&p.a, CM_MSG_APR);
	assert_int_equal(m.apr.status, CM_APR_REJECTED);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_MRA_RCVD);
	/* eng_lap while one is out: -EINVAL. */
	{
		struct cm_lap lap;

		memset(&lap, 0, sizeof(lap));
		assert_int_equal(eng_lap(p.a.node.eng, p.aid, &lap, h_now),
				 -EINVAL);
	}
	/* b's app never answers: a resends after the MRA's wait. */
	at = eng_next_deadline(p.a.node.eng);
	assert_true(at == h_now + h_ns(H_SVC) + 2 * h_ns(H_PLT));
	for (i = 0; i < H_RETRIES; i++) {
		h_at(&p.a, NULL, at);
		m = h_take(&p.a, CM_MSG_LAP);
		assert_int_equal(m.lap.local_comm_id, p.aid);
		assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_MRA_RCVD);
		at = h_now + rtx();
		assert_true(eng_next_deadline(p.a.node.eng) == at);
	}
	h_at(&p.a, NULL, at);
	assert_int_equal(h_ev(&p.a, ENG_EV_LAP_ERROR, p.aid).status,
			 -ETIMEDOUT);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_IDLE);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_ESTABLISHED);
	/* A late MRA or APR is only a duplicate now. */
	cm_msg_init(&in, CM_MSG_APR, 9);
	in.apr.local_comm_id = p.bid;
	in.apr.remote_comm_id = p.aid;
	h_inject(&p.b, &p.a, &in);
	assert_int_equal(eng_counters(p.a.node.eng)->duplicates[CM_MSG_APR], 1);
	assert_int_equal(h_events_left(&p.a), 0);
	pair_fini(&p);
}

/* The LAP exchange ends with ESTABLISHED; the MRA_DUE deadline too. */
static void test_mra_lap_disconnect(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	pair_established(&p);
	pair_lap(&p);
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_IDLE);
	assert_int_equal(conn_of(&p.b, p.bid)->timer, CONN_TIMER_RETRANSMIT);
	assert_int_equal(
		eng_apr(p.b.node.eng, p.bid, 0, NULL, 0, NULL, 0, h_now),
		-EINVAL);
	h_pump(&p.a, &p.b);
	h_ev(&p.a, ENG_EV_DREQ_RECEIVED, p.aid);
	assert_int_equal(lap_of(&p.a, p.aid), ENG_LAP_IDLE);
	pair_fini(&p);
}

/* COMM_EST before the RTU (IBTA ch. 12 passive side; kernel cm_establish). */
static void test_establish_early(void **state)
{
	struct pair p;
	struct eng_event ev;
	struct cm_msg rtu;
	uint64_t tw;

	(void)state;
	pair_init(&p, false);
	pair_rep(&p);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	rtu = h_take(&p.a, CM_MSG_RTU); /* late */
	assert_int_equal(eng_establish(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);
	ev = h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	assert_false(ev.has_msg);
	assert_int_equal(ev.status, 0);
	/* The REP's retransmission stopped. */
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);
	h_advance(&p.a, &p.b, 10 * rtx());
	assert_int_equal(h_pending(&p.b), 0);
	/* The RTU arrives after all: a duplicate, no second event. */
	h_inject(&p.a, &p.b, &rtu);
	assert_int_equal(eng_counters(p.b.node.eng)->duplicates[CM_MSG_RTU], 1);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(eng_counters(p.b.node.eng)->established_early, 1);
	/* Once established: -EINVAL, nothing changes. */
	assert_int_equal(eng_establish(p.b.node.eng, p.bid, h_now), -EINVAL);
	assert_int_equal(eng_counters(p.b.node.eng)->established_early, 1);
	/* The connection is an ordinary one from here on. */
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_DREQ_RECEIVED, p.aid);
	assert_int_equal(eng_disconnect(p.a.node.eng, p.aid, NULL, 0, h_now),
			 0);
	h_deliver(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_DREP_RECEIVED, p.bid);
	tw = eng_next_deadline(p.b.node.eng);
	h_at(&p.a, &p.b, tw);
	h_ev(&p.b, ENG_EV_TIMEWAIT_EXIT, p.bid);
	pair_fini(&p);
}

static void test_establish_mra_rep_rcvd(void **state)
{
	struct pair p;
	struct eng_event ev;

	(void)state;
	pair_init(&p, false);
	reach(&p, ENG_STATE_MRA_REP_RCVD);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_MRA_REP_RCVD);
	assert_int_equal(eng_establish(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);
	ev = h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	assert_false(ev.has_msg);
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);
	pair_fini(&p);
}

/* The event waits behind an unacknowledged one, like any other. */
static void test_establish_queued(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	p.lid = h_listen(&p.b, SID, 8);
	p.aid = h_connect(&p.a, &p.b, SID);
	h_deliver(&p.a, &p.b);
	p.bid = h_ev_noack(&p.b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	assert_int_equal(eng_establish(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(eng_ack(p.b.node.eng, p.bid, h_now), 0);
	assert_false(h_ev(&p.b, ENG_EV_RTU_RECEIVED, p.bid).has_msg);
	pair_fini(&p);
}

/* Every state but REP_SENT / MRA_REP_RCVD: -EINVAL and nothing changes. */
static void test_establish_invalid(void **state)
{
	static const enum eng_state states[] = {
		ENG_STATE_IDLE,		 ENG_STATE_LISTEN,
		ENG_STATE_REQ_SENT,	 ENG_STATE_REQ_RCVD,
		ENG_STATE_MRA_REQ_SENT,	 ENG_STATE_MRA_REQ_RCVD,
		ENG_STATE_REP_RCVD,	 ENG_STATE_MRA_REP_SENT,
		ENG_STATE_ESTABLISHED,	 ENG_STATE_DREQ_SENT,
		ENG_STATE_DREQ_RCVD,	 ENG_STATE_TIMEWAIT,
		ENG_STATE_SIDR_REQ_SENT, ENG_STATE_SIDR_REQ_RCVD,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct pair p;
		struct h_side *s;
		uint32_t id;
		uint64_t dl, api;
		enum eng_state st;
		size_t nev;

		pair_init(&p, false);
		reach(&p, states[i]);
		/* The id reach() left in the state: b's if it is, else a's. */
		if (p.bid && eng_id_state(p.b.node.eng, p.bid, &st) == 0 &&
		    st == states[i]) {
			s = &p.b;
			id = p.bid;
		} else {
			s = &p.a;
			id = p.aid;
		}
		assert_int_equal(h_state(s, id), states[i]);
		h_drop(s);
		dl = eng_next_deadline(s->node.eng);
		nev = s->nev;
		api = eng_counters(s->node.eng)->unexpected_api;
		assert_int_equal(eng_establish(s->node.eng, id, h_now),
				 -EINVAL);
		assert_int_equal(h_state(s, id), states[i]);
		assert_int_equal(h_pending(s), 0);
		assert_int_equal(s->nev, nev);
		assert_true(eng_next_deadline(s->node.eng) == dl);
		assert_int_equal(eng_counters(s->node.eng)->unexpected_api,
				 api + 1);
		pair_fini(&p);
	}
	{
		struct h_side s;

		h_init(&s, GUID_A, 1, false, 5);
		assert_int_equal(eng_establish(s.node.eng, 0x1234, h_now),
				 -ENOENT);
		h_fini(&s);
	}
}

struct port_case {
	enum eng_state state;
	bool on_a;
	int ev; /* expected event type, -1: none */
	enum eng_state after;
};

/* Port down in every state: who is told what, and where it ends. */
static void test_port_down_every_state(void **state)
{
	static const struct port_case cases[] = {
		{ ENG_STATE_IDLE, true, -1, ENG_STATE_IDLE },
		{ ENG_STATE_LISTEN, false, -1, ENG_STATE_LISTEN },
		{ ENG_STATE_REQ_SENT, true, ENG_EV_REQ_ERROR, ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REQ_RCVD, true, ENG_EV_REQ_ERROR,
		  ENG_STATE_IDLE },
		{ ENG_STATE_REQ_RCVD, false, ENG_EV_REP_ERROR, ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REQ_SENT, false, ENG_EV_REP_ERROR,
		  ENG_STATE_IDLE },
		{ ENG_STATE_REP_SENT, false, ENG_EV_REP_ERROR,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_MRA_REP_RCVD, false, ENG_EV_REP_ERROR,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_REP_RCVD, true, ENG_EV_REQ_ERROR, ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REP_SENT, true, ENG_EV_REQ_ERROR,
		  ENG_STATE_IDLE },
		{ ENG_STATE_ESTABLISHED, true, ENG_EV_PORT_ERROR,
		  ENG_STATE_ESTABLISHED },
		{ ENG_STATE_ESTABLISHED, false, ENG_EV_PORT_ERROR,
		  ENG_STATE_ESTABLISHED },
		{ ENG_STATE_DREQ_SENT, true, ENG_EV_DREQ_ERROR,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_DREQ_RCVD, false, -1, ENG_STATE_DREQ_RCVD },
		{ ENG_STATE_TIMEWAIT, true, -1, ENG_STATE_TIMEWAIT },
		{ ENG_STATE_SIDR_REQ_SENT, true, ENG_EV_SIDR_REQ_ERROR,
		  ENG_STATE_IDLE },
		{ ENG_STATE_SIDR_REQ_RCVD, false, -1, ENG_STATE_SIDR_REQ_RCVD },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct port_case *pc = &cases[i];
		struct pair p;
		struct h_side *who, *peer;
		uint32_t id;
		struct eng_event ev;
		uint64_t dl;
		int told = pc->ev >= 0;

		pair_init(&p, false);
		reach(&p, pc->state);
		who = pc->on_a ? &p.a : &p.b;
		peer = pc->on_a ? &p.b : &p.a;
		id = pc->on_a ? p.aid : p.bid;
		assert_int_equal(h_state(who, id), pc->state);
		h_drop(who);
		h_drop(peer);
		who->evnext = who->nev;
		dl = eng_next_deadline(who->node.eng);
		/* Another port: nothing. */
		assert_int_equal(eng_port_down(who->node.eng, 2, h_now), 0);
		assert_int_equal(h_state(who, id), pc->state);
		assert_true(eng_next_deadline(who->node.eng) == dl);
		assert_int_equal(
			eng_port_down(who->node.eng, ENG_MAX_PORTS, h_now),
			-EINVAL);

		assert_int_equal(eng_port_down(who->node.eng, 1, h_now), told);
		if (h_state(who, id) != pc->after)
			fail_msg("case %zu: %s -> %s, want %s", i,
				 eng_state_name(pc->state),
				 eng_state_name(h_state(who, id)),
				 eng_state_name(pc->after));
		/* No MAD for the dead port, ever. */
		assert_int_equal(h_pending(who), 0);
		assert_int_equal(eng_counters(who->node.eng)->port_down, 2);
		assert_int_equal(eng_counters(who->node.eng)->port_down_ids,
				 told);
		if (pc->ev < 0) {
			assert_int_equal(h_events_left(who), 0);
			assert_true(eng_next_deadline(who->node.eng) == dl);
		} else {
			ev = h_ev(who, (enum eng_event_type)pc->ev, id);
			assert_int_equal(ev.status, -ENETDOWN);
			assert_false(ev.has_msg);
			assert_int_equal(h_events_left(who), 0);
		}
		if (pc->after == ENG_STATE_IDLE ||
		    pc->after == ENG_STATE_ESTABLISHED)
			assert_true(eng_next_deadline(who->node.eng) ==
					    ENG_NO_DEADLINE ||
				    pc->ev < 0);
		/* A second port down finds nothing more to fail. */
		if (pc->after != ENG_STATE_ESTABLISHED)
			assert_int_equal(eng_port_down(who->node.eng, 1, h_now),
					 0);
		h_drop(who);
		h_drop(peer);
		/* The timers left run out without a MAD on the dead port. */
		while (eng_next_deadline(who->node.eng) != ENG_NO_DEADLINE)
			h_at(who, NULL, eng_next_deadline(who->node.eng));
		if (pc->after == ENG_STATE_TIMEWAIT)
			h_ev(who, ENG_EV_TIMEWAIT_EXIT, id);
		if (pc->ev >= 0)
			assert_int_equal(h_pending(who), 0);
		pair_fini(&p);
	}
}

/*
 * Passive REP_SENT fails in timewait with a REJ kept, not sent: if the port
 * comes back and the peer's RTU arrives, that REJ answers it, so the peer
 * is not left established alone.
 */
static void test_port_down_rep_sent_rtu(void **state)
{
	struct pair p;
	struct cm_msg m;

	(void)state;
	pair_init(&p, false);
	pair_rep(&p);
	assert_int_equal(eng_port_down(p.b.node.eng, 1, h_now), 1);
	assert_int_equal(h_ev(&p.b, ENG_EV_REP_ERROR, p.bid).status, -ENETDOWN);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_TIMEWAIT);
	assert_int_equal(h_pending(&p.b), 0);
	assert_int_equal(eng_counters(p.b.node.eng)->sent[CM_MSG_REJ], 0);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_deliver(&p.a, &p.b);
	m = h_take(&p.b, CM_MSG_REJ);
	assert_int_equal(m.rej.reason, CM_REJ_TIMEOUT);
	assert_int_equal(m.rej.remote_comm_id, p.aid);
	h_inject(&p.b, &p.a, &m);
	h_ev(&p.a, ENG_EV_REJ_RECEIVED, p.aid);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_TIMEWAIT);
	assert_int_equal(h_events_left(&p.b), 0);
	pair_fini(&p);
}

/* Listeners stay: a REQ arriving afterwards (port back up) is delivered. */
static void test_port_down_listener(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, false);
	pair_req(&p);
	assert_int_equal(eng_port_down(p.b.node.eng, 1, h_now), 1);
	h_ev(&p.b, ENG_EV_REP_ERROR, p.bid);
	assert_int_equal(h_state(&p.b, p.lid), ENG_STATE_LISTEN);
	{
		struct eng_listen_info li;

		assert_int_equal(eng_listen_info(p.b.node.eng, p.lid, &li), 0);
		assert_int_equal(li.credits_used, 0);
	}
	h_connect(&p.a, &p.b, SID);
	h_deliver(&p.a, &p.b);
	h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0);
	pair_fini(&p);
}

/*
 * A new pair whose passive id has its REQ_RECEIVED out, unacked, when
 * gone(b, port 1) fails it: the id is IDLE at once and refuses an accept,
 * and its event (type, status) waits for the ack, then carries the
 * context set meanwhile; nothing goes out.
 */
static void gone_behind_unacked(struct pair *p,
				int (*gone)(struct eng *, uint16_t, uint64_t),
				enum eng_event_type type, int status)
{
	struct eng_event ev;

	pair_init(p, false);
	p->lid = h_listen(&p->b, SID, 8);
	p->aid = h_connect(&p->a, &p->b, SID);
	h_deliver(&p->a, &p->b);
	p->bid = h_ev_noack(&p->b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(gone(p->b.node.eng, 1, h_now), 1);
	assert_int_equal(h_state(&p->b, p->bid), ENG_STATE_IDLE);
	assert_int_equal(h_events_left(&p->b), 0);
	assert_int_equal(h_accept(&p->b, p->bid), -EINVAL);
	assert_int_equal(eng_set_context(p->b.node.eng, p->bid, 0xabc), 0);
	assert_int_equal(eng_ack(p->b.node.eng, p->bid, h_now), 0);
	ev = h_ev(&p->b, type, p->bid);
	assert_int_equal(ev.status, status);
	assert_int_equal(ev.context, 0xabc);
	assert_int_equal(h_pending(&p->b), 0);
}

/* Events queue behind an unacknowledged one; LAP_ERROR before PORT_ERROR. */
static void test_port_down_serialized(void **state)
{
	struct pair p;
	struct cm_lap lap;

	(void)state;
	/* Passive: REQ_RECEIVED still out, REP_ERROR waits for the ack. */
	gone_behind_unacked(&p, eng_port_down, ENG_EV_REP_ERROR, -ENETDOWN);
	pair_fini(&p);

	/* Established with RTU_RECEIVED unacked and our LAP pending. */
	pair_init(&p, false);
	pair_rep(&p);
	assert_int_equal(eng_rtu(p.a.node.eng, p.aid, NULL, h_now), 0);
	h_deliver(&p.a, &p.b);
	h_ev_noack(&p.b, ENG_EV_RTU_RECEIVED, p.bid);
	memset(&lap, 0, sizeof(lap));
	assert_int_equal(eng_lap(p.b.node.eng, p.bid, &lap, h_now), 0);
	h_drop(&p.b);
	assert_int_equal(eng_port_down(p.b.node.eng, 1, h_now), 1);
	assert_int_equal(h_events_left(&p.b), 0);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_IDLE);
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);
	assert_int_equal(eng_ack(p.b.node.eng, p.bid, h_now), 0);
	assert_int_equal(h_ev(&p.b, ENG_EV_LAP_ERROR, p.bid).status, -ENETDOWN);
	assert_int_equal(h_ev(&p.b, ENG_EV_PORT_ERROR, p.bid).status,
			 -ENETDOWN);
	assert_int_equal(h_state(&p.b, p.bid), ENG_STATE_ESTABLISHED);
	assert_int_equal(h_pending(&p.b), 0);
	/* The app decides: its DREQ goes out (and would time out). */
	assert_int_equal(eng_disconnect(p.b.node.eng, p.bid, NULL, 0, h_now),
			 0);
	h_take(&p.b, CM_MSG_DREQ);
	pair_fini(&p);

	/* A LAP we owe survives (the app may still answer); its MRA not. */
	pair_init(&p, false);
	pair_established(&p);
	pair_lap(&p);
	h_drop(&p.a);
	assert_int_equal(eng_port_down(p.b.node.eng, 1, h_now), 1);
	assert_int_equal(h_ev(&p.b, ENG_EV_PORT_ERROR, p.bid).status,
			 -ENETDOWN);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_RCVD);
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);
	assert_int_equal(h_pending(&p.b), 0);
	assert_int_equal(eng_apr(p.b.node.eng, p.bid, CM_APR_REJECTED, NULL, 0,
				 NULL, 0, h_now),
			 0);
	h_deliver(&p.b, &p.a); /* the port is back */
	h_ev(&p.a, ENG_EV_APR_RECEIVED, p.aid);
	/* Our LAP in MRA_LAP_RCVD dies as in LAP_SENT. */
	assert_int_equal(eng_lap(p.b.node.eng, p.bid, &lap, h_now), 0);
	h_deliver(&p.b, &p.a);
	h_ev(&p.a, ENG_EV_LAP_RECEIVED, p.aid);
	assert_int_equal(eng_mra(p.a.node.eng, p.aid, H_SVC, NULL, 0, h_now),
			 0);
	h_deliver(&p.a, &p.b);
	assert_int_equal(lap_of(&p.b, p.bid), ENG_LAP_MRA_RCVD);
	h_mra_ev(&p.b, p.bid, CM_MSG_REF_OTHER, H_SVC);
	assert_int_equal(eng_port_down(p.b.node.eng, 1, h_now), 1);
	h_ev(&p.b, ENG_EV_LAP_ERROR, p.bid);
	h_ev(&p.b, ENG_EV_PORT_ERROR, p.bid);
	assert_true(eng_next_deadline(p.b.node.eng) == ENG_NO_DEADLINE);
	assert_int_equal(h_pending(&p.b), 0);
	pair_fini(&p);
}

/* Destroyed records and held REQs end silently; other ports are spared. */
static void test_port_down_silent(void **state)
{
	struct h_side a, b;
	struct eng_config cfg = { .mra_service_timeout = H_SVC, .max_held = 4 };
	struct eng_listen_info li;
	struct eng_event ev;
	uint32_t lid, got, ids[3];
	struct cm_msg req3;
	struct eng_addr from2;
	struct pair p;

	(void)state;
	/* A destroyed connection's DREQ tail: timewait, no event, freed. */
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	h_drop(&p.a);
	assert_int_equal(conn_of(&p.a, p.aid)->state, ENG_STATE_DREQ_SENT);
	assert_int_equal(eng_port_down(p.a.node.eng, 1, h_now), 0);
	assert_int_equal(conn_of(&p.a, p.aid)->state, ENG_STATE_TIMEWAIT);
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(h_events_left(&p.a), 0);
	assert_int_equal(eng_counters(p.a.node.eng)->port_down_ids, 0);
	h_at(&p.a, NULL, eng_next_deadline(p.a.node.eng));
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	assert_int_equal(h_events_left(&p.a), 0);
	pair_fini(&p);

	/*
	 * Backlog 1: REQ 1 (port 1) delivered, REQ 2 (port 1) and REQ 3
	 * (port 2) held. Port 1 goes down: REQ 2 is dropped silently, REQ 1's
	 * id fails, and its credit delivers REQ 3, not the dead REQ 2.
	 */
	h_init(&a, GUID_A, 1, false, 3);
	h_init_cfg(&b, GUID_B, 2, false, 4, &cfg);
	assert_int_equal(eng_port_set(b.node.eng, 2, GUID_B, false), 0);
	lid = h_listen(&b, SID, 1);
	ids[0] = h_connect(&a, &b, SID);
	ids[1] = h_connect(&a, &b, SID);
	ids[2] = h_connect(&a, &b, SID);
	h_inject(&a, &b, &a.out.m[0].msg);
	h_inject(&a, &b, &a.out.m[1].msg);
	req3 = a.out.m[2].msg;
	from2 = a.node.addr;
	from2.port = 2; /* REQ 3 arrives on B's port 2 */
	eng_recv(b.node.eng, &from2, &req3, h_now);
	got = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	h_take(&b, CM_MSG_MRA);
	h_take(&b, CM_MSG_MRA);
	assert_int_equal(eng_listen_info(b.node.eng, lid, &li), 0);
	assert_int_equal(li.held, 2);
	assert_int_equal(eng_record_count(b.node.eng), 4);

	assert_int_equal(eng_port_down(b.node.eng, 1, h_now), 1);
	assert_int_equal(h_pending(&b), 0);
	assert_int_equal(h_ev(&b, ENG_EV_REP_ERROR, got).status, -ENETDOWN);
	ev = h_ev(&b, ENG_EV_REQ_RECEIVED, 0);
	assert_int_equal(ev.msg.req.local_comm_id, ids[2]);
	assert_int_equal(ev.addr.port, 2);
	assert_int_equal(h_events_left(&b), 0);
	assert_int_equal(eng_listen_info(b.node.eng, lid, &li), 0);
	assert_int_equal(li.held, 0);
	assert_int_equal(li.credits_used, 1);
	/* Listener, the failed id (IDLE, the client's) and REQ 3's id. */
	assert_int_equal(eng_record_count(b.node.eng), 3);
	assert_int_equal(h_state(&b, got), ENG_STATE_IDLE);
	assert_int_equal(h_state(&b, ev.id), ENG_STATE_MRA_REQ_SENT);
	/* The port-2 id is untouched by port 1 and fails with port 2. */
	assert_int_equal(eng_port_down(b.node.eng, 1, h_now), 0);
	assert_int_equal(eng_port_down(b.node.eng, 2, h_now), 1);
	h_ev(&b, ENG_EV_REP_ERROR, ev.id);
	assert_int_equal(eng_counters(b.node.eng)->port_down, 3);
	assert_int_equal(eng_counters(b.node.eng)->port_down_ids, 2);
	assert_int_equal(h_pending(&b), 0);
	h_fini(&a);
	h_fini(&b);
}

/* Runs last: every filled cell of the table was driven by some test. */
static void test_table_coverage(void **state)
{
	int cells = conn_table_cells(), missed = 0, s, e, est = 0, down = 0;

	(void)state;
	printf("# state table: %d states x %d events, %d cells filled\n",
	       ENG_STATE__COUNT, CONN_EV__COUNT, cells);
	for (s = 0; s < ENG_STATE__COUNT; s++)
		for (e = 0; e < CONN_EV__COUNT; e++)
			if (conn_table_cell(s, e) && !h_hits[s][e]) {
				printf("# not driven: %s x %s\n",
				       eng_state_name(s), conn_event_name(e));
				missed++;
			}
	assert_true(cells > 100);
	assert_int_equal(missed, 0);
	/*
	 * The rows of MRA-for-LAP, eng_establish and eng_port_down: filled
	 * (the loop above then proves them driven), PORT_DOWN in exactly the
	 * states ENGINE.md lists.
	 */
	assert_true(conn_table_cell(ENG_STATE_ESTABLISHED, CONN_EV_API_MRA));
	assert_true(conn_table_cell(ENG_STATE_ESTABLISHED, CONN_EV_MRA_DUE));
	assert_true(conn_table_cell(ENG_STATE_REP_SENT, CONN_EV_API_ESTABLISH));
	assert_true(
		conn_table_cell(ENG_STATE_MRA_REP_RCVD, CONN_EV_API_ESTABLISH));
	for (s = 0; s < ENG_STATE__COUNT; s++) {
		est += conn_table_cell(s, CONN_EV_API_ESTABLISH);
		down += conn_table_cell(s, CONN_EV_PORT_DOWN);
	}
	assert_int_equal(est, 2);
	assert_int_equal(down, 11);
	assert_false(conn_table_cell(ENG_STATE_LISTEN, CONN_EV_PORT_DOWN));
	assert_false(conn_table_cell(ENG_STATE_TIMEWAIT, CONN_EV_PORT_DOWN));
}

/*
 * A deferred send (the transport resolving the destination) restarts the
 * retransmission wait when it really leaves: the REQ's wait counts from
 * then, not from the connect. While it waits, the timer resends nothing
 * and uses no retry.
 */
static void test_deferred_then_sent(void **state)
{
	struct pair p;
	struct cm_msg req;
	uint64_t t0;

	(void)state;
	pair_init(&p, true);
	p.lid = h_listen(&p.b, SID, 4);
	p.a.defer_send = true;
	t0 = h_now;
	p.aid = h_connect(&p.a, &p.b, SID);
	p.a.defer_send = false;
	assert_true(eng_next_deadline(p.a.node.eng) == t0 + rtx());
	assert_int_equal(eng_counters(p.a.node.eng)->send_deferred, 1);
	req = h_take(&p.a, CM_MSG_REQ);

	/* The timer fires while the REQ is still held: no copy, no retry. */
	h_at(&p.a, NULL, t0 + rtx());
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(eng_counters(p.a.node.eng)->retransmitted[CM_MSG_REQ],
			 0);
	assert_true(eng_next_deadline(p.a.node.eng) == t0 + 2 * rtx());

	/* It leaves later: the wait restarts from now. */
	h_now = t0 + rtx() + rtx() / 2;
	eng_send_done(p.a.node.eng, 1, &req, 0, h_now);
	assert_true(eng_next_deadline(p.a.node.eng) == h_now + rtx());
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REQ_SENT);
	assert_int_equal(h_events_left(&p.a), 0);
	/* A second outcome for it is stale: nothing moves. */
	eng_send_done(p.a.node.eng, 1, &req, 0, h_now + 5);
	assert_true(eng_next_deadline(p.a.node.eng) == h_now + rtx());
	assert_int_equal(eng_counters(p.a.node.eng)->send_done_stale, 1);

	/* All H_RETRIES retries are still there after it. */
	for (int i = 0; i < H_RETRIES; i++) {
		h_at(&p.a, NULL, eng_next_deadline(p.a.node.eng));
		h_take(&p.a, CM_MSG_REQ);
	}
	h_at(&p.a, NULL, eng_next_deadline(p.a.node.eng));
	h_take(&p.a, CM_MSG_REJ);
	assert_int_equal(h_ev(&p.a, ENG_EV_REQ_ERROR, p.aid).status,
			 -ETIMEDOUT);

	/* An outcome that comes for a record long gone changes nothing. */
	eng_send_done(p.a.node.eng, 1, &req, -EHOSTUNREACH, h_now);
	assert_int_equal(h_events_left(&p.a), 0);
	pair_fini(&p);
}

/* A deferred send that left after the record moved on: no re-arm. */
static void test_deferred_sent_after_answer(void **state)
{
	struct pair p;
	struct cm_msg req;

	(void)state;
	pair_init(&p, true);
	p.lid = h_listen(&p.b, SID, 4);
	p.a.defer_send = true;
	p.aid = h_connect(&p.a, &p.b, SID);
	p.a.defer_send = false;
	req = p.a.out.m[p.a.out.next].msg;
	h_deliver(&p.a, &p.b);
	p.bid = h_ev(&p.b, ENG_EV_REQ_RECEIVED, 0).id;
	assert_int_equal(h_accept(&p.b, p.bid), 0);
	h_deliver(&p.b, &p.a);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REP_RCVD);
	/* Late news of the REQ: the record waits on nothing of ours. */
	eng_send_done(p.a.node.eng, 1, &req, -EHOSTUNREACH, h_now);
	assert_int_equal(h_state(&p.a, p.aid), ENG_STATE_REP_RCVD);
	h_ev(&p.a, ENG_EV_REP_RECEIVED, p.aid);
	assert_int_equal(h_events_left(&p.a), 0);
	pair_fini(&p);
}

struct unreach_case {
	enum eng_state state;
	bool on_a;
	enum cm_msg_type msg; /* what it waits on */
	enum eng_event_type ev;
	enum eng_state after;
};

/*
 * A deferred message that fails (-EHOSTUNREACH): exactly one error event
 * with that status, in every state that waits on a message of its own,
 * nothing sent, and the record where a dead port would leave it.
 */
static void test_deferred_then_failed(void **state)
{
	static const struct unreach_case cases[] = {
		{ ENG_STATE_REQ_SENT, true, CM_MSG_REQ, ENG_EV_REQ_ERROR,
		  ENG_STATE_IDLE },
		{ ENG_STATE_MRA_REQ_RCVD, true, CM_MSG_REQ, ENG_EV_REQ_ERROR,
		  ENG_STATE_IDLE },
		{ ENG_STATE_REP_SENT, false, CM_MSG_REP, ENG_EV_REP_ERROR,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_MRA_REP_RCVD, false, CM_MSG_REP, ENG_EV_REP_ERROR,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_DREQ_SENT, true, CM_MSG_DREQ, ENG_EV_DREQ_ERROR,
		  ENG_STATE_TIMEWAIT },
		{ ENG_STATE_SIDR_REQ_SENT, true, CM_MSG_SIDR_REQ,
		  ENG_EV_SIDR_REQ_ERROR, ENG_STATE_IDLE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct unreach_case *uc = &cases[i];
		struct pair p;
		struct h_side *who;
		struct cm_msg m;
		struct eng_event ev;
		uint32_t id;

		pair_init(&p, true);
		reach(&p, uc->state);
		who = uc->on_a ? &p.a : &p.b;
		id = uc->on_a ? p.aid : p.bid;
		assert_int_equal(h_state(who, id), uc->state);
		h_drop(&p.a);
		h_drop(&p.b);
		who->evnext = who->nev;
		/* Its next retransmission is the one the transport holds. */
		who->defer_send = true;
		h_at(who, NULL, eng_next_deadline(who->node.eng));
		who->defer_send = false;
		m = h_take(who, uc->msg);
		assert_int_equal(h_pending(who), 0);

		eng_send_done(who->node.eng, 1, &m, -EHOSTUNREACH, h_now);
		if (h_state(who, id) != uc->after)
			fail_msg("case %zu: %s -> %s, want %s", i,
				 eng_state_name(uc->state),
				 eng_state_name(h_state(who, id)),
				 eng_state_name(uc->after));
		ev = h_ev(who, uc->ev, id);
		assert_int_equal(ev.status, -EHOSTUNREACH);
		assert_int_equal(h_events_left(who), 0);
		assert_int_equal(h_pending(who), 0);
		assert_int_equal(eng_counters(who->node.eng)->unreachable, 1);
		/* The same news again: exactly one event, still. */
		eng_send_done(who->node.eng, 1, &m, -EHOSTUNREACH, h_now);
		assert_int_equal(h_events_left(who), 0);
		/* Timers run out with nothing sent to the unreachable peer. */
		while (eng_next_deadline(who->node.eng) != ENG_NO_DEADLINE)
			h_at(who, NULL, eng_next_deadline(who->node.eng));
		if (uc->after == ENG_STATE_TIMEWAIT)
			h_ev(who, ENG_EV_TIMEWAIT_EXIT, id);
		assert_int_equal(h_pending(who), 0);
		assert_int_equal(h_events_left(who), 0);
		pair_fini(&p);
	}
}

/* States that wait on nothing of their own: the unexpected handler. */
static void test_unreachable_cells(void **state)
{
	(void)state;
	for (int s = 0; s < ENG_STATE__COUNT; s++) {
		bool want = s == ENG_STATE_REQ_SENT ||
			    s == ENG_STATE_MRA_REQ_RCVD ||
			    s == ENG_STATE_REP_SENT ||
			    s == ENG_STATE_MRA_REP_RCVD ||
			    s == ENG_STATE_DREQ_SENT ||
			    s == ENG_STATE_SIDR_REQ_SENT;

		assert_int_equal(
			conn_table_cell((enum eng_state)s, CONN_EV_UNREACHABLE),
			want);
	}
}

/* The name tables cover their enums: no "?" for a value that exists. */
static void test_names(void **state)
{
	(void)state;
	for (int i = 0; i < ENG_STATE__COUNT; i++)
		assert_string_not_equal(eng_state_name((enum eng_state)i), "?");
	for (int i = 0; i <= ENG_LAP_MRA_RCVD; i++)
		assert_string_not_equal(
			eng_lap_state_name((enum eng_lap_state)i), "?");
	for (int i = 0; i < ENG_EV__COUNT; i++)
		assert_string_not_equal(eng_event_name((enum eng_event_type)i),
					"?");
	for (int i = 0; i < CONN_EV__COUNT; i++)
		assert_string_not_equal(conn_event_name((enum conn_event)i),
					"?");
	assert_string_equal(eng_event_name(ENG_EV__COUNT), "?");
	assert_string_equal(conn_event_name(CONN_EV__COUNT), "?");
	assert_string_equal(eng_state_name(ENG_STATE_MRA_REP_RCVD),
			    "MRA_REP_RCVD");
	assert_string_equal(conn_event_name(CONN_EV_UNREACHABLE),
			    "UNREACHABLE");
}

/*
 * Device removal (eng_device_removed, rdma_cm's DEVICE_REMOVAL): every id
 * on the port, whatever its state but IDLE and LISTEN, is told once
 * (-ENODEV) and left in IDLE with nothing sent, no timer and nothing more
 * to come but its destroy.
 */
struct devrm_case {
	enum eng_state state;
	bool on_a;
};

static void test_device_removed_every_state(void **state)
{
	static const struct devrm_case cases[] = {
		{ ENG_STATE_IDLE, true },
		{ ENG_STATE_LISTEN, false },
		{ ENG_STATE_REQ_SENT, true },
		{ ENG_STATE_MRA_REQ_RCVD, true },
		{ ENG_STATE_REQ_RCVD, false },
		{ ENG_STATE_MRA_REQ_SENT, false },
		{ ENG_STATE_REP_SENT, false },
		{ ENG_STATE_MRA_REP_RCVD, false },
		{ ENG_STATE_REP_RCVD, true },
		{ ENG_STATE_MRA_REP_SENT, true },
		{ ENG_STATE_ESTABLISHED, true },
		{ ENG_STATE_ESTABLISHED, false },
		{ ENG_STATE_DREQ_SENT, true },
		{ ENG_STATE_DREQ_RCVD, false },
		{ ENG_STATE_TIMEWAIT, true },
		{ ENG_STATE_TIMEWAIT, false },
		{ ENG_STATE_SIDR_REQ_SENT, true },
		{ ENG_STATE_SIDR_REQ_RCVD, false },
	};
	int cells = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct devrm_case *dc = &cases[i];
		bool untouched = dc->state == ENG_STATE_IDLE ||
				 dc->state == ENG_STATE_LISTEN;
		int told = untouched ? 0 : 1;
		struct pair p;
		struct h_side *who, *peer;
		uint32_t id;
		struct eng_event ev;
		size_t records;

		pair_init(&p, false);
		reach(&p, dc->state);
		who = dc->on_a ? &p.a : &p.b;
		peer = dc->on_a ? &p.b : &p.a;
		id = dc->on_a ? p.aid : p.bid;
		assert_int_equal(h_state(who, id), dc->state);
		h_drop(who);
		h_drop(peer);
		who->evnext = who->nev;
		/* Another port, or none: nothing changes. */
		assert_int_equal(eng_device_removed(who->node.eng, 2, h_now),
				 0);
		assert_int_equal(h_state(who, id), dc->state);
		assert_int_equal(
			eng_device_removed(who->node.eng, ENG_MAX_PORTS, h_now),
			-EINVAL);
		assert_int_equal(h_events_left(who), 0);

		assert_int_equal(eng_device_removed(who->node.eng, 1, h_now),
				 told);
		if (h_state(who, id) !=
		    (untouched ? dc->state : ENG_STATE_IDLE))
			fail_msg("case %zu: %s -> %s", i,
				 eng_state_name(dc->state),
				 eng_state_name(h_state(who, id)));
		/* Nothing on the wire, no timer left, one event. */
		assert_int_equal(h_pending(who), 0);
		assert_true(eng_next_deadline(who->node.eng) ==
			    ENG_NO_DEADLINE);
		assert_int_equal(eng_counters(who->node.eng)->device_removed,
				 2);
		assert_int_equal(
			eng_counters(who->node.eng)->device_removed_ids, told);
		if (!untouched) {
			ev = h_ev(who, ENG_EV_DEVICE_REMOVAL, id);
			assert_int_equal(ev.status, -ENODEV);
			assert_int_equal(ev.state, ENG_STATE_IDLE);
			assert_int_equal(ev.lap, ENG_LAP_IDLE);
			assert_int_equal(ev.addr.port, 1);
			assert_false(ev.has_msg);
		}
		assert_int_equal(h_events_left(who), 0);
		/* Told once: a second removal and any time later, nothing. */
		assert_int_equal(eng_device_removed(who->node.eng, 1, h_now),
				 0);
		h_advance(who, NULL, 60ULL * 1000000000ULL);
		assert_int_equal(h_events_left(who), 0);
		assert_int_equal(h_pending(who), 0);
		/* What is left is destroy; the record goes at once. */
		records = eng_record_count(who->node.eng);
		assert_int_equal(eng_destroy(who->node.eng, id, h_now), 0);
		assert_int_equal(h_pending(who), 0);
		assert_int_equal(eng_record_count(who->node.eng), records - 1);
		assert_null(ctab_local_find(&who->node.eng->by_local, id));
		pair_fini(&p);
	}
	for (int st = 0; st < ENG_STATE__COUNT; st++)
		cells += conn_table_cell((enum eng_state)st,
					 CONN_EV_DEVICE_GONE);
	assert_int_equal(cells, ENG_STATE__COUNT - 2);
	assert_false(conn_table_cell(ENG_STATE_IDLE, CONN_EV_DEVICE_GONE));
	assert_false(conn_table_cell(ENG_STATE_LISTEN, CONN_EV_DEVICE_GONE));
}

/*
 * Queued behind an unacked event; held REQs and destroyed records end
 * silently; ids and listeners of other ports are untouched; connects on
 * the removed port fail until it is declared again.
 */
static void test_device_removed_others(void **state)
{
	struct h_side a, b;
	struct eng_config cfg = { .mra_service_timeout = H_SVC, .max_held = 4 };
	struct eng_connect_param cp;
	struct eng_listen_info li;
	struct eng_event ev;
	uint32_t lid, got, ids[3], nid;
	struct cm_msg req3;
	struct eng_addr from2;
	struct pair p;

	(void)state;
	/* REQ_RECEIVED unacked: DEVICE_REMOVAL waits for the ack. */
	gone_behind_unacked(&p, eng_device_removed, ENG_EV_DEVICE_REMOVAL,
			    -ENODEV);
	/* The listener stays, its credit back. */
	assert_int_equal(h_state(&p.b, p.lid), ENG_STATE_LISTEN);
	assert_int_equal(eng_listen_info(p.b.node.eng, p.lid, &li), 0);
	assert_int_equal(li.credits_used, 0);
	assert_int_equal(eng_destroy(p.b.node.eng, p.bid, h_now), 0);
	pair_fini(&p);

	/* A destroyed connection's DREQ tail: freed at once, silently. */
	pair_init(&p, false);
	pair_established(&p);
	assert_int_equal(eng_destroy(p.a.node.eng, p.aid, h_now), 0);
	h_drop(&p.a);
	assert_int_equal(eng_record_count(p.a.node.eng), 1);
	assert_int_equal(eng_device_removed(p.a.node.eng, 1, h_now), 0);
	assert_int_equal(eng_record_count(p.a.node.eng), 0);
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(h_events_left(&p.a), 0);
	assert_true(eng_next_deadline(p.a.node.eng) == ENG_NO_DEADLINE);
	/* The port is gone: a connect on it fails; declared again, works. */
	memset(&cp, 0, sizeof(cp));
	cp.dest = p.b.node.addr;
	cp.dest.port = 1;
	cp.packet_life_time = H_PLT;
	cp.req.service_id = SID;
	cp.req.local_qpn = 0x77;
	cp.req.remote_cm_resp_timeout = H_RESP;
	cp.req.local_cm_resp_timeout = H_RESP;
	cp.req.max_cm_retries = H_RETRIES;
	cp.req.transport_type = CM_TRANSPORT_RC;
	cp.req.path_mtu = CM_MTU_1024;
	assert_int_equal(eng_create_id(p.a.node.eng, 9, 0, &nid), 0);
	assert_int_equal(eng_connect(p.a.node.eng, nid, &cp, h_now), -ENODEV);
	assert_int_equal(h_pending(&p.a), 0);
	assert_int_equal(eng_port_set(p.a.node.eng, 1, GUID_A, false), 0);
	assert_int_equal(eng_connect(p.a.node.eng, nid, &cp, h_now), 0);
	h_take(&p.a, CM_MSG_REQ);
	pair_fini(&p);

	/*
	 * Backlog 1: REQ 1 (port 1) delivered, REQ 2 (port 1) and REQ 3
	 * (port 2) held. Port 1's device goes: REQ 2 is dropped silently,
	 * REQ 1's id is told, and its credit delivers REQ 3; the port-2 id
	 * is untouched until port 2's device goes too.
	 */
	h_init(&a, GUID_A, 1, false, 3);
	h_init_cfg(&b, GUID_B, 2, false, 4, &cfg);
	assert_int_equal(eng_port_set(b.node.eng, 2, GUID_B, false), 0);
	lid = h_listen(&b, SID, 1);
	ids[0] = h_connect(&a, &b, SID);
	ids[1] = h_connect(&a, &b, SID);
	ids[2] = h_connect(&a, &b, SID);
	h_inject(&a, &b, &a.out.m[0].msg);
	h_inject(&a, &b, &a.out.m[1].msg);
	req3 = a.out.m[2].msg;
	from2 = a.node.addr;
	from2.port = 2;
	eng_recv(b.node.eng, &from2, &req3, h_now);
	got = h_ev(&b, ENG_EV_REQ_RECEIVED, 0).id;
	h_take(&b, CM_MSG_MRA);
	h_take(&b, CM_MSG_MRA);
	assert_int_equal(eng_record_count(b.node.eng), 4);

	assert_int_equal(eng_device_removed(b.node.eng, 1, h_now), 1);
	assert_int_equal(h_pending(&b), 0);
	assert_int_equal(h_ev(&b, ENG_EV_DEVICE_REMOVAL, got).status, -ENODEV);
	ev = h_ev(&b, ENG_EV_REQ_RECEIVED, 0);
	assert_int_equal(ev.msg.req.local_comm_id, ids[2]);
	assert_int_equal(ev.addr.port, 2);
	assert_int_equal(h_events_left(&b), 0);
	assert_int_equal(eng_listen_info(b.node.eng, lid, &li), 0);
	assert_int_equal(li.held, 0);
	assert_int_equal(li.credits_used, 1);
	assert_int_equal(eng_record_count(b.node.eng), 3);
	/* The port-2 id still works: accepted, its REP goes out. */
	assert_int_equal(h_accept(&b, ev.id), 0);
	h_take(&b, CM_MSG_REP);
	assert_int_equal(eng_device_removed(b.node.eng, 2, h_now), 1);
	assert_int_equal(h_ev(&b, ENG_EV_DEVICE_REMOVAL, ev.id).status,
			 -ENODEV);
	assert_int_equal(h_state(&b, lid), ENG_STATE_LISTEN);
	assert_int_equal(eng_counters(b.node.eng)->device_removed_ids, 2);
	assert_int_equal(h_pending(&b), 0);
	assert_int_equal(eng_destroy(b.node.eng, got, h_now), 0);
	assert_int_equal(eng_destroy(b.node.eng, ev.id, h_now), 0);
	assert_int_equal(h_pending(&b), 0);
	assert_int_equal(eng_record_count(b.node.eng), 1);
	h_fini(&a);
	h_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_happy_path),
		cmocka_unit_test(test_deferred_then_sent),
		cmocka_unit_test(test_deferred_sent_after_answer),
		cmocka_unit_test(test_deferred_then_failed),
		cmocka_unit_test(test_unreachable_cells),
		cmocka_unit_test(test_lost_req),
		cmocka_unit_test(test_lost_rep_once),
		cmocka_unit_test(test_lost_rep_always),
		cmocka_unit_test(test_lost_rtu),
		cmocka_unit_test(test_lost_dreq),
		cmocka_unit_test(test_lost_drep),
		cmocka_unit_test(test_mra_passive_slow),
		cmocka_unit_test(test_mra_active_slow),
		cmocka_unit_test(test_mra_api),
		cmocka_unit_test(test_dup_req_each_state),
		cmocka_unit_test(test_stale_req),
		cmocka_unit_test(test_stale_rep),
		cmocka_unit_test(test_dreq_collision),
		cmocka_unit_test(test_disconnect_again),
		cmocka_unit_test(test_event_states),
		cmocka_unit_test(test_rej_racing_req),
		cmocka_unit_test(test_destroy_every_state),
		cmocka_unit_test(test_lost_rej_of_rep),
		cmocka_unit_test(test_timewait_exit_destroyed),
		cmocka_unit_test(test_credits),
		cmocka_unit_test(test_owner_id_limit),
		cmocka_unit_test(test_listener_destroy_with_held),
		cmocka_unit_test(test_listen_errors),
		cmocka_unit_test(test_listen_sel_overlap),
		cmocka_unit_test(test_listen_sel_dispatch),
		cmocka_unit_test(test_listen_sel_sidr),
		cmocka_unit_test(test_unknown_peers),
		cmocka_unit_test(test_invalid_api),
		cmocka_unit_test(test_sidr),
		cmocka_unit_test(test_lap_roce),
		cmocka_unit_test(test_lap_ib),
		cmocka_unit_test(test_destroy_owner),
		cmocka_unit_test(test_comm_ids),
		cmocka_unit_test(test_send_errors),
		cmocka_unit_test(test_log_and_unexpected),
		cmocka_unit_test(test_bad_templates),
		cmocka_unit_test(test_id_info),
		cmocka_unit_test(test_port_counters),
		cmocka_unit_test(test_introspection),
		cmocka_unit_test(test_callback_reentry),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_mra_lap_slow),
		cmocka_unit_test(test_mra_lap_active_side),
		cmocka_unit_test(test_mra_lap_api),
		cmocka_unit_test(test_mra_lap_rcvd_timeout),
		cmocka_unit_test(test_mra_lap_disconnect),
		cmocka_unit_test(test_establish_early),
		cmocka_unit_test(test_establish_mra_rep_rcvd),
		cmocka_unit_test(test_establish_queued),
		cmocka_unit_test(test_establish_invalid),
		cmocka_unit_test(test_port_down_every_state),
		cmocka_unit_test(test_port_down_rep_sent_rtu),
		cmocka_unit_test(test_port_down_listener),
		cmocka_unit_test(test_port_down_serialized),
		cmocka_unit_test(test_port_down_silent),
		cmocka_unit_test(test_device_removed_every_state),
		cmocka_unit_test(test_device_removed_others),
		cmocka_unit_test(test_table_coverage),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
