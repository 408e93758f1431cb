// SPDX-License-Identifier: MIT
/*
 * Two CM engines back to back through an in-memory fabric that drops,
 * duplicates, reorders and delays MADs under a seeded schedule; both sides
 * listen and connect to each other, and their clients accept, reject,
 * disconnect and destroy at random moments. Every MAD goes through the real
 * encoder and decoder on its way. The nodes, the wire and the clock are the
 * shared fake fabric's (tests/lib/fake_fabric.h); the schedule is this
 * test's.
 *
 * Invariants, checked as events arrive or after every run:
 *   - every connect gets exactly one first outcome (REP_RECEIVED,
 *     REJ_RECEIVED or REQ_ERROR), unless destroyed before it;
 *   - no event for an id after its destroy;
 *   - never a second event for an id while one is unacknowledged;
 *   - at quiescence both sides agree on every established connection
 *     (when REJ, the one unacknowledged CM message, is never lost);
 *   - after teardown and timewait every record is freed.
 *
 * Data may overtake the RTU: after a successful eng_rtu the passive client
 * sometimes calls eng_establish (IBV_EVENT_COMM_EST) shortly after, as a
 * real QP would report; the late or lost RTU must then change nothing.
 *
 * ENGINE_RANDOM_SEED and ENGINE_RANDOM_COUNT (connections per side and run)
 * override the defaults.
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

#include "../lib/fake_fabric.h"
#include "cm_engine.h"
#include "conn.h"
#include "log.h"

#define SID 0x2000ULL
#define MS 1000000ULL
#define US 1000ULL

struct fab_cfg {
	const char *name;
	unsigned int drop_pct, dup_pct, reorder_pct;
	bool drop_rej;
};

enum act {
	ACT_NONE,
	ACT_ANSWER, /* answer the last delivered event */
	ACT_ACCEPT_LATE,
	ACT_RTU_LATE,
	ACT_DISCONNECT,
	ACT_DESTROY,
	ACT_CONNECT,
	ACT_COMM_EST, /* the passive QP sees data before the RTU */
};

struct rec {
	uint32_t id;
	bool used;
	bool active;
	bool destroyed;
	bool unacked;
	bool got_event;
	int outcomes;
	uint32_t qpn;
	enum eng_event_type last;
};

struct side {
	int idx;
	struct ff_node node;
	uint32_t next_qpn;
	uint32_t lid;
	uint32_t pool[64]; /* QPNs of destroyed ids, for stale reuse */
	unsigned int npool;
	struct rec *recs;
	size_t cap; /* power of two */
	size_t nrec;
};

struct sev {
	uint64_t at, seq;
	enum act act;
	int side;
	uint32_t id;
	bool mad;
	struct ff_mad m; /* if mad: arrives at node m.dest */
};

static struct sim {
	struct side s[2];
	struct ff fab_nodes;
	struct sev *q;
	size_t qn, qcap;
	uint64_t seq, now, rnd;
	const struct fab_cfg *fab;
	int phase; /* 0 random, 1 settle, 2 teardown */
	unsigned long mads, dropped, duped, events, reused;
} sim;

static unsigned int pct(void)
{
	return (unsigned int)(ff_rand64(&sim.rnd) >> 33) % 100;
}

static uint64_t upto(uint64_t n)
{
	return n ? (ff_rand64(&sim.rnd) >> 11) % n : 0;
}

static void q_push(struct sev *e)
{
	size_t i;

	if (sim.qn == sim.qcap) {
		sim.qcap = sim.qcap ? sim.qcap * 2 : 4096;
		sim.q = realloc(sim.q, sim.qcap * sizeof(*sim.q));
		assert_non_null(sim.q);
	}
	e->seq = sim.seq++;
	i = sim.qn++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (sim.q[p].at < e->at ||
		    (sim.q[p].at == e->at && sim.q[p].seq < e->seq))
			break;
		sim.q[i] = sim.q[p];
		i = p;
	}
	sim.q[i] = *e;
}

static bool q_less(size_t a, size_t b)
{
	return sim.q[a].at < sim.q[b].at ||
	       (sim.q[a].at == sim.q[b].at && sim.q[a].seq < sim.q[b].seq);
}

static void q_pop(struct sev *out)
{
	size_t i = 0;
	struct sev last;

	*out = sim.q[0];
	last = sim.q[--sim.qn];
	sim.q[0] = last;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct sev t;

		if (l < sim.qn && q_less(l, m))
			m = l;
		if (r < sim.qn && q_less(r, m))
			m = r;
		if (m == i)
			break;
		t = sim.q[i];
		sim.q[i] = sim.q[m];
		sim.q[m] = t;
		i = m;
	}
}

static void schedule(int side, uint32_t id, enum act act, uint64_t delay)
{
	struct sev e;

	e.at = sim.now + delay;
	e.act = act;
	e.side = side;
	e.id = id;
	e.mad = false;
	q_push(&e);
}

static struct rec *rec_find(struct side *s, uint32_t id, bool create)
{
	size_t i = (id * 2654435761u) & (s->cap - 1);

	while (s->recs[i].used && s->recs[i].id != id)
		i = (i + 1) & (s->cap - 1);
	if (s->recs[i].used)
		return &s->recs[i];
	if (!create)
		return NULL;
	assert_true(s->nrec + 1 < s->cap / 2);
	s->nrec++;
	s->recs[i].used = true;
	s->recs[i].id = id;
	return &s->recs[i];
}

/* The fabric: encode, then drop, duplicate, delay (reordering). */
static int fab_send(void *ctx, const struct eng_addr *to,
		    const struct cm_msg *msg)
{
	struct side *s = ctx;
	uint8_t buf[CM_MAD_SIZE];
	struct cm_fault f;
	struct sev e;
	int copies = 1, i;

	memset(&e, 0, sizeof(e));
	assert_int_equal(ff_wire(msg, buf, &e.m.msg, 0, &f), 0);
	e.m.from = s->node.addr;
	e.m.to = *to;
	e.m.dest = ff_route(&sim.fab_nodes, to);
	assert_int_equal(e.m.dest, !s->idx);
	sim.mads++;
	if (pct() < sim.fab->drop_pct &&
	    (msg->type != CM_MSG_REJ || sim.fab->drop_rej)) {
		sim.dropped++;
		return 0;
	}
	if (pct() < sim.fab->dup_pct) {
		copies = 2;
		sim.duped++;
	}
	for (i = 0; i < copies; i++) {
		e.mad = true;
		e.side = e.m.dest;
		e.at = sim.now + 2 * US + upto(50 * US);
		if (pct() < sim.fab->reorder_pct)
			e.at += upto(20 * MS);
		q_push(&e);
	}
	return 0;
}

static bool is_outcome(enum eng_event_type t)
{
	return t == ENG_EV_REP_RECEIVED || t == ENG_EV_REJ_RECEIVED ||
	       t == ENG_EV_REQ_ERROR;
}

static void fab_deliver(void *ctx, const struct eng_event *ev)
{
	struct side *s = ctx;
	struct rec *r = rec_find(s, ev->id, false);

	sim.events++;
	if (!r) {
		/* Lesson 2: a passive id is born with its request. */
		if (ev->type != ENG_EV_REQ_RECEIVED)
			fail_msg("side %d: %s for unknown id %08x", s->idx,
				 eng_event_name(ev->type), ev->id);
		r = rec_find(s, ev->id, true);
		assert_int_equal(ev->listen_id, s->lid);
	}
	if (r->destroyed)
		fail_msg("side %d: %s for destroyed id %08x", s->idx,
			 eng_event_name(ev->type), ev->id);
	if (r->unacked)
		fail_msg("side %d: %s while %s unacked on %08x", s->idx,
			 eng_event_name(ev->type), eng_event_name(r->last),
			 ev->id);
	if (ev->type == ENG_EV_MRA_RECEIVED) {
		/* A note that the peer needs longer, not an outcome: only
		 * while the message it answers still waits. */
		if (ev->state != ENG_STATE_MRA_REQ_RCVD &&
		    ev->state != ENG_STATE_MRA_REP_RCVD &&
		    ev->lap != ENG_LAP_MRA_RCVD)
			fail_msg("side %d: MRA_RECEIVED in state %s on %08x",
				 s->idx, eng_state_name(ev->state), ev->id);
	} else if (r->active && !r->outcomes) {
		/* Lesson 3: connect's first event is its one outcome. */
		if (!is_outcome(ev->type))
			fail_msg("side %d: first event %s on %08x", s->idx,
				 eng_event_name(ev->type), ev->id);
		r->outcomes++;
	}
	if (!r->active && r->got_event && ev->type == ENG_EV_REQ_RECEIVED)
		fail_msg("second REQ_RECEIVED on %08x", ev->id);
	if (!r->active && !r->got_event)
		assert_int_equal(ev->type, ENG_EV_REQ_RECEIVED);
	r->got_event = true;
	r->unacked = true;
	r->last = ev->type;
	schedule(s->idx, ev->id, ACT_ANSWER,
		 pct() < 20 ? 0 : upto(sim.phase ? 2 * MS : 15 * MS));
}

static uint32_t fab_random(void *ctx)
{
	struct side *s = ctx;

	return ff_random(&s->node);
}

static const struct eng_ops fab_ops = { fab_send, fab_deliver, fab_random,
					NULL };

static void side_init(struct side *s, int idx, uint64_t seed, size_t count)
{
	struct eng_config cfg = { .mra_service_timeout = 14, .max_held = 16 };

	memset(s, 0, sizeof(*s));
	s->idx = idx;
	s->next_qpn = 0x1000;
	for (s->cap = 64; s->cap < count * 8; s->cap *= 2)
		;
	s->recs = calloc(s->cap, sizeof(*s->recs));
	assert_non_null(s->recs);
	assert_int_equal(ff_node_init(&s->node, &fab_ops, s, &cfg, FF_GUID(idx),
				      (uint16_t)(idx + 1), false,
				      seed * 2 + idx + 1),
			 0);
	ff_add(&sim.fab_nodes, &s->node);
	assert_int_equal(eng_create_id(s->node.eng, 1, 0, &s->lid), 0);
	/* A small backlog so that holding and refusing happen too. */
	assert_int_equal(
		eng_listen(s->node.eng, s->lid, SID, UINT64_MAX, 64, NULL, 0),
		0);
}

static void side_fini(struct side *s)
{
	ff_node_fini(&s->node);
	free(s->recs);
}

static void do_connect(struct side *s)
{
	struct eng_connect_param p;
	struct rec *r;
	uint32_t id;

	memset(&p, 0, sizeof(p));
	p.dest = sim.s[!s->idx].node.addr;
	p.packet_life_time = 8;
	p.req.service_id = SID;
	p.req.local_qpn = s->next_qpn++;
	/*
	 * Now and then a QP number of a destroyed connection comes back, as
	 * after an application restart: the peer may still hold the old
	 * connection (or its timewait) and must answer REJ stale.
	 */
	if (sim.phase == 0 && s->npool && pct() < 5) {
		p.req.local_qpn = s->pool[upto(s->npool)];
		sim.reused++;
	}
	p.req.remote_cm_resp_timeout = 13;
	p.req.local_cm_resp_timeout = 13;
	p.req.primary_local_ack_timeout = 9;
	p.req.max_cm_retries = 15;
	p.req.transport_type = CM_TRANSPORT_RC;
	p.req.path_mtu = CM_MTU_1024;
	assert_int_equal(eng_create_id(s->node.eng, 2, 0, &id), 0);
	r = rec_find(s, id, true);
	r->active = true;
	r->qpn = p.req.local_qpn;
	assert_int_equal(eng_connect(s->node.eng, id, &p, sim.now), 0);
	if (sim.phase == 0 && pct() < 4)
		schedule(s->idx, id, ACT_DESTROY, upto(60 * MS));
	else if (sim.phase == 0 && pct() < 2)
		schedule(s->idx, id, ACT_DISCONNECT, upto(60 * MS));
}

static void check_rc(int rc, const char *what)
{
	/* A peer's message may have moved the id on: -EINVAL is normal. */
	if (rc && rc != -EINVAL)
		fail_msg("%s: %d", what, rc);
}

static void do_destroy(struct side *s, struct rec *r)
{
	if (r->qpn)
		s->pool[s->npool < 64 ? s->npool++ : upto(64)] = r->qpn;
	assert_int_equal(eng_destroy(s->node.eng, r->id, sim.now), 0);
	r->destroyed = true;
	r->unacked = false;
}

/*
 * The active side sent its RTU and may send data now: the passive QP then
 * reports COMM_EST, which can beat the RTU (or replace a lost one).
 */
static void maybe_comm_est(struct side *s, uint32_t id, int rc)
{
	struct conn *c = ctab_local_find(&s->node.eng->by_local, id);

	if (rc || !c || pct() >= 30)
		return;
	schedule(!s->idx, c->remote_id, ACT_COMM_EST, 5 * US + upto(200 * US));
}

static void answer(struct side *s, struct rec *r)
{
	enum eng_state st;
	struct cm_rej rej = { .reason = CM_REJ_CONSUMER_DEFINED };
	struct cm_rep rep;
	unsigned int p = sim.phase ? 0 : pct();
	uint32_t id = r->id;
	enum eng_event_type last = r->last;

	/* The ack may deliver the next event at once: clear first. */
	r->unacked = false;
	assert_int_equal(eng_ack(s->node.eng, id, sim.now), 0);
	assert_int_equal(eng_id_state(s->node.eng, id, &st), 0);
	switch (last) {
	case ENG_EV_REQ_RECEIVED:
		if (sim.phase != 2 && p < 65) {
			memset(&rep, 0, sizeof(rep));
			rep.local_qpn = s->next_qpn++;
			rep.target_ack_delay = 6;
			r->qpn = rep.local_qpn;
			check_rc(eng_accept(s->node.eng, id, &rep, sim.now),
				 "accept");
			/* The passive client may vanish mid-handshake too. */
			if (sim.phase == 0 && pct() < 4)
				schedule(s->idx, id, ACT_DESTROY,
					 upto(40 * MS));
		} else if (p < 78) {
			check_rc(eng_reject(s->node.eng, id, &rej, sim.now),
				 "reject");
		} else if (p < 83) {
			do_destroy(s, r);
			return;
		} else if (p < 90) {
			check_rc(eng_mra(s->node.eng, id, 15, NULL, 0, sim.now),
				 "mra");
			schedule(s->idx, id, ACT_ACCEPT_LATE, upto(80 * MS));
			return;
		} else {
			/* Slow client: the engine's own MRA covers us. */
			schedule(s->idx, id, ACT_ACCEPT_LATE, upto(60 * MS));
			return;
		}
		break;
	case ENG_EV_REP_RECEIVED:
		if (sim.phase == 2 || p < 85) {
			int rc = eng_rtu(s->node.eng, id, NULL, sim.now);

			check_rc(rc, "rtu");
			maybe_comm_est(s, id, rc);
		} else if (p < 92) {
			check_rc(eng_reject(s->node.eng, id, &rej, sim.now),
				 "reject rep");
		} else if (p < 95) {
			do_destroy(s, r);
			return;
		} else {
			schedule(s->idx, id, ACT_RTU_LATE, upto(40 * MS));
			return;
		}
		if (sim.phase == 0 && pct() < 30)
			schedule(s->idx, id, ACT_DISCONNECT, upto(100 * MS));
		break;
	case ENG_EV_RTU_RECEIVED:
		if (sim.phase == 0 && p < 30)
			schedule(s->idx, id, ACT_DISCONNECT, upto(100 * MS));
		else if (sim.phase == 0 && p < 35)
			schedule(s->idx, id, ACT_DESTROY, upto(100 * MS));
		break;
	case ENG_EV_DREQ_RECEIVED:
		if (p < 90)
			check_rc(eng_disconnect(s->node.eng, id, NULL, 0,
						sim.now),
				 "drep");
		else
			do_destroy(s, r);
		break;
	case ENG_EV_REQ_ERROR:
	case ENG_EV_REP_ERROR:
	case ENG_EV_REJ_RECEIVED:
	case ENG_EV_DREQ_ERROR:
	case ENG_EV_DREP_RECEIVED:
	case ENG_EV_TIMEWAIT_EXIT:
	case ENG_EV_LAP_RECEIVED:
	case ENG_EV_LAP_ERROR:
	case ENG_EV_APR_RECEIVED:
	case ENG_EV_SIDR_REQ_RECEIVED:
	case ENG_EV_SIDR_REQ_ERROR:
	case ENG_EV_SIDR_REP_RECEIVED:
	case ENG_EV_PORT_ERROR:
	case ENG_EV_MRA_RECEIVED:
	case ENG_EV_DEVICE_REMOVAL:
	case ENG_EV__COUNT:
		break;
	}
	if (!r->destroyed && eng_id_state(s->node.eng, id, &st) == 0 &&
	    st == ENG_STATE_IDLE)
		do_destroy(s, r);
}

static void run_action(struct sev *e)
{
	struct side *s = &sim.s[e->side];
	struct rec *r;
	struct cm_rep rep;
	enum eng_state st;

	if (e->act == ACT_CONNECT) {
		do_connect(s);
		return;
	}
	r = rec_find(s, e->id, false);
	if (e->act == ACT_COMM_EST && !r)
		return;
	assert_non_null(r);
	if (r->destroyed)
		return;
	switch (e->act) {
	case ACT_ANSWER:
		answer(s, r);
		break;
	case ACT_ACCEPT_LATE:
		memset(&rep, 0, sizeof(rep));
		rep.local_qpn = s->next_qpn++;
		rep.target_ack_delay = 6;
		check_rc(eng_accept(s->node.eng, r->id, &rep, sim.now),
			 "accept");
		break;
	case ACT_RTU_LATE: {
		int rc = eng_rtu(s->node.eng, r->id, NULL, sim.now);

		check_rc(rc, "rtu");
		maybe_comm_est(s, r->id, rc);
		break;
	}
	case ACT_COMM_EST:
		/* -EINVAL: the RTU came first, or the id moved on. */
		check_rc(eng_establish(s->node.eng, r->id, sim.now),
			 "establish");
		break;
	case ACT_DISCONNECT:
		check_rc(eng_disconnect(s->node.eng, r->id, NULL, 0, sim.now),
			 "disconnect");
		break;
	case ACT_DESTROY:
		do_destroy(s, r);
		return;
	case ACT_NONE:
	case ACT_CONNECT:
		break;
	}
	if (!r->unacked && eng_id_state(s->node.eng, r->id, &st) == 0 &&
	    st == ENG_STATE_IDLE && r->got_event)
		do_destroy(s, r);
}

/* What the schedule says happens now: a MAD arrives, or a client acts. */
static void run_event(struct sev *e)
{
	if (e->mad)
		ff_recv(&sim.s[e->m.dest].node, &e->m, sim.now);
	else
		run_action(e);
}

static void run_until_quiet(void)
{
	for (;;) {
		uint64_t tq = sim.qn ? sim.q[0].at : ENG_NO_DEADLINE;
		uint64_t td = ff_next_deadline(&sim.fab_nodes);
		uint64_t t = td < tq ? td : tq;
		struct sev e;

		if (t == ENG_NO_DEADLINE)
			return;
		if (t > sim.now)
			sim.now = t;
		if (tq == t) {
			q_pop(&e);
			run_event(&e);
		} else {
			ff_run_timers(&sim.fab_nodes, sim.now);
		}
	}
}

/* Both sides agree on every established connection. */
static unsigned int check_matching(void)
{
	unsigned int bad = 0, est = 0;
	int i;
	size_t j;

	for (i = 0; i < 2; i++) {
		struct side *s = &sim.s[i], *o = &sim.s[!i];

		for (j = 0; j < s->cap; j++) {
			struct rec *r = &s->recs[j];
			struct conn *c, *pc;

			if (!r->used || r->destroyed)
				continue;
			c = ctab_local_find(&s->node.eng->by_local, r->id);
			assert_non_null(c);
			/* Quiet: nobody waits for an answer. */
			if (c->state != ENG_STATE_ESTABLISHED &&
			    c->state != ENG_STATE_IDLE)
				fail_msg("side %d: %08x quiet in %s", i, r->id,
					 eng_state_name(c->state));
			assert_false(r->unacked);
			if (c->state != ENG_STATE_ESTABLISHED)
				continue;
			est++;
			pc = ctab_local_find(&o->node.eng->by_local,
					     c->remote_id);
			if (!pc || pc->state != ENG_STATE_ESTABLISHED ||
			    pc->remote_id != c->local_id) {
				bad++;
				printf("# unmatched: side %d %08x established, "
				       "peer %08x %s%s\n",
				       i, c->local_id, c->remote_id,
				       pc ? eng_state_name(pc->state) : "gone",
				       pc && pc->destroyed ? " (destroyed)" :
							     "");
				if (!sim.fab->drop_rej)
					fail_msg("REJ never lost, yet "
						 "unmatched");
			}
		}
	}
	printf("# %s: %u established at quiescence, %u unmatched\n",
	       sim.fab->name, est, bad);
	return bad;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void run(const struct fab_cfg *fab)
{
	uint64_t seed = env_u64("ENGINE_RANDOM_SEED", 20261129);
	size_t count = env_u64("ENGINE_RANDOM_COUNT", 4000);
	size_t i, j, live;
	int k;

	memset(&sim, 0, sizeof(sim));
	sim.fab = fab;
	sim.rnd = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
	if (!sim.rnd)
		sim.rnd = 1;
	sim.now = 1000 * MS;
	printf("# %s: seed %llu, %zu connections per side\n", fab->name,
	       (unsigned long long)seed, count);
	for (k = 0; k < 2; k++)
		side_init(&sim.s[k], k, seed, count);
	for (k = 0; k < 2; k++)
		for (i = 0; i < count; i++)
			schedule(k, 0, ACT_CONNECT, upto(count * 200 * US));
	/* Phase 0: random behaviour until every connect was issued. */
	while (sim.qn) {
		struct sev e;

		if (sim.now > 1000 * MS + count * 200 * US)
			break;
		{
			uint64_t t = ff_next_deadline(&sim.fab_nodes);

			if (t < sim.q[0].at) {
				sim.now = t > sim.now ? t : sim.now;
				ff_run_timers(&sim.fab_nodes, sim.now);
				continue;
			}
		}
		q_pop(&e);
		if (e.at > sim.now)
			sim.now = e.at;
		run_event(&e);
	}
	/* Phase 1: clients answer everything; run until nothing moves. */
	sim.phase = 1;
	run_until_quiet();
	for (k = 0; k < 2; k++)
		for (j = 0; j < sim.s[k].cap; j++) {
			struct rec *r = &sim.s[k].recs[j];

			if (r->used && r->active && !r->destroyed)
				assert_int_equal(r->outcomes, 1);
			if (r->used && r->active)
				assert_true(r->outcomes <= 1);
		}
	check_matching();

	/* Phase 2: disconnect half, destroy the rest, wait out timewait. */
	sim.phase = 2;
	for (k = 0; k < 2; k++) {
		struct side *s = &sim.s[k];

		for (j = 0; j < s->cap; j++) {
			struct rec *r = &s->recs[j];

			if (!r->used || r->destroyed)
				continue;
			if (r->id & 1)
				check_rc(eng_disconnect(s->node.eng, r->id,
							NULL, 0, sim.now),
					 "disconnect");
			else
				do_destroy(s, r);
		}
	}
	run_until_quiet();
	for (k = 0; k < 2; k++) {
		struct side *s = &sim.s[k];

		for (j = 0, live = 0; j < s->cap; j++)
			if (s->recs[j].used && !s->recs[j].destroyed) {
				assert_false(s->recs[j].unacked);
				do_destroy(s, &s->recs[j]);
			}
	}
	run_until_quiet();
	for (k = 0, live = 0; k < 2; k++)
		live += eng_record_count(sim.s[k].node.eng);
	/* Only the two listeners remain. */
	assert_int_equal(live, 2);
	for (k = 0; k < 2; k++) {
		const struct eng_counters *c = eng_counters(sim.s[k].node.eng);

		assert_int_equal(
			eng_destroy(sim.s[k].node.eng, sim.s[k].lid, sim.now),
			0);
		assert_int_equal(eng_record_count(sim.s[k].node.eng), 0);
		printf("# side %d: REQ sent %llu rtx %llu, REP sent %llu "
		       "rtx %llu, dup REQ %llu, MRA sent %llu, REJ sent %llu, "
		       "held %llu, backlog-rejected %llu, timeouts %llu, "
		       "stale %llu, established early %llu\n",
		       k, (unsigned long long)c->sent[CM_MSG_REQ],
		       (unsigned long long)c->retransmitted[CM_MSG_REQ],
		       (unsigned long long)c->sent[CM_MSG_REP],
		       (unsigned long long)c->retransmitted[CM_MSG_REP],
		       (unsigned long long)c->duplicates[CM_MSG_REQ],
		       (unsigned long long)c->sent[CM_MSG_MRA],
		       (unsigned long long)c->sent[CM_MSG_REJ],
		       (unsigned long long)c->req_held,
		       (unsigned long long)c->req_rejected_backlog,
		       (unsigned long long)c->timeouts,
		       (unsigned long long)c->stale_rejected,
		       (unsigned long long)c->established_early);
	}
	printf("# %s: %lu MADs, %lu dropped, %lu duplicated, %lu events, "
	       "%lu QPNs reused, %.3f s simulated\n",
	       fab->name, sim.mads, sim.dropped, sim.duped, sim.events,
	       sim.reused, (double)(sim.now - 1000 * MS) / 1e9);
	for (k = 0; k < 2; k++)
		side_fini(&sim.s[k]);
	free(sim.q);
}

static void test_random_reliable_rej(void **state)
{
	static const struct fab_cfg fab = { "lossy, REJ kept", 5, 3, 5, false };

	(void)state;
	run(&fab);
}

static void test_random_lossy(void **state)
{
	static const struct fab_cfg fab = { "lossy, all kinds", 10, 5, 10,
					    true };

	(void)state;
	run(&fab);
}

static void test_random_clean(void **state)
{
	static const struct fab_cfg fab = { "clean", 0, 0, 0, false };

	(void)state;
	run(&fab);
}

static int setup(void **state)
{
	(void)state;
	log_set_level(LOG_LVL_WARN);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_clean),
		cmocka_unit_test(test_random_reliable_rej),
		cmocka_unit_test(test_random_lossy),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
