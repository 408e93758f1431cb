// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "log.h"

uint64_t h_now = 1000000000ULL;

static void h_null_sink(void *ctx, enum log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	(void)line;
}

void h_quiet_logs(void)
{
	log_set_sink(h_null_sink, NULL);
	log_set_level(LOG_LVL_DEBUG); /* formatted, then dropped: exercised */
	if (getenv("ENGINE_TEST_LOG"))
		log_set_sink(NULL, NULL);
}

uint64_t h_ns(uint8_t x)
{
	return 4096ULL << x;
}

static int h_send(void *ctx, const struct eng_addr *to,
		  const struct cm_msg *msg)
{
	struct h_side *s = ctx;

	if (s->fail_send)
		return s->fail_send;
	if (s->nout == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->out = realloc(s->out, s->cap * sizeof(*s->out));
		assert_non_null(s->out);
	}
	s->out[s->nout].to = *to;
	s->out[s->nout].msg = *msg;
	s->nout++;
	return s->defer_send ? ENG_SEND_DEFERRED : 0;
}

static void h_deliver_ev(void *ctx, const struct eng_event *ev)
{
	struct h_side *s = ctx;

	if (s->nev == s->evcap) {
		s->evcap = s->evcap ? s->evcap * 2 : 64;
		s->evs = realloc(s->evs, s->evcap * sizeof(*s->evs));
		assert_non_null(s->evs);
	}
	s->evs[s->nev++] = *ev;
}

static uint32_t h_random(void *ctx)
{
	struct h_side *s = ctx;

	/* xorshift64*: deterministic per seed. */
	s->rnd ^= s->rnd >> 12;
	s->rnd ^= s->rnd << 25;
	s->rnd ^= s->rnd >> 27;
	return (uint32_t)((s->rnd * 0x2545f4914f6cdd1dULL) >> 32);
}

static bool h_owner_has_room(void *ctx, uint64_t owner)
{
	struct h_side *s = ctx;

	(void)owner;
	return !s->owner_full;
}

static const struct eng_ops h_ops = {
	.send = h_send,
	.deliver = h_deliver_ev,
	.random = h_random,
	.owner_has_room = h_owner_has_room,
};

void h_init_cfg(struct h_side *s, uint64_t guid, uint16_t lid, bool roce,
		uint64_t seed, const struct eng_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->guid = guid;
	s->rnd = seed ? seed : 1;
	s->qpn = 0x100 + lid * 0x1000;
	s->addr.port = 1;
	s->addr.lid = lid;
	s->addr.qpn = 1;
	s->eng = eng_new(&h_ops, s, cfg);
	assert_non_null(s->eng);
	assert_int_equal(eng_port_set(s->eng, 1, guid, roce), 0);
}

void h_init(struct h_side *s, uint64_t guid, uint16_t lid, bool roce,
	    uint64_t seed)
{
	struct eng_config cfg = { .mra_service_timeout = H_SVC, .max_held = 4 };

	h_init_cfg(s, guid, lid, roce, seed, &cfg);
}

uint64_t h_hits[ENG_STATE__COUNT][CONN_EV__COUNT];

void h_fini(struct h_side *s)
{
	int i, j;

	for (i = 0; i < ENG_STATE__COUNT; i++)
		for (j = 0; j < CONN_EV__COUNT; j++)
			h_hits[i][j] += s->eng->hits[i][j];
	eng_free(s->eng);
	free(s->out);
	free(s->evs);
	memset(s, 0, sizeof(*s));
}

uint32_t h_listen(struct h_side *s, uint64_t sid, unsigned int backlog)
{
	uint32_t id;

	assert_int_equal(eng_create_id(s->eng, 7, 0x1111, &id), 0);
	assert_int_equal(
		eng_listen(s->eng, id, sid, UINT64_MAX, backlog, h_now), 0);
	return id;
}

uint32_t h_connect_qpn(struct h_side *s, struct h_side *peer, uint64_t sid,
		       uint32_t qpn)
{
	struct eng_connect_param p;
	uint32_t id;

	memset(&p, 0, sizeof(p));
	p.dest = peer->addr;
	p.dest.port = 1;
	p.packet_life_time = H_PLT;
	p.req.service_id = sid;
	p.req.local_qpn = qpn;
	p.req.remote_cm_resp_timeout = H_RESP;
	p.req.local_cm_resp_timeout = H_RESP;
	p.req.primary_local_ack_timeout = H_PLT + 1;
	p.req.max_cm_retries = H_RETRIES;
	p.req.transport_type = CM_TRANSPORT_RC;
	p.req.path_mtu = CM_MTU_1024;
	assert_int_equal(eng_create_id(s->eng, 9, 0x2222, &id), 0);
	assert_int_equal(eng_connect(s->eng, id, &p, h_now), 0);
	assert_int_equal(p.req.local_comm_id, id);
	assert_int_equal(p.req.local_ca_guid, s->guid);
	assert_true(p.req.starting_psn != 0);
	return id;
}

uint32_t h_connect(struct h_side *s, struct h_side *peer, uint64_t sid)
{
	return h_connect_qpn(s, peer, sid, s->qpn++);
}

int h_accept(struct h_side *s, uint32_t id)
{
	struct cm_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = s->qpn++;
	rep.target_ack_delay = H_ACK_DELAY;
	rep.rnr_retry_count = 7;
	return eng_accept(s->eng, id, &rep, h_now);
}

void h_inject(struct h_side *from, struct h_side *to, const struct cm_msg *m)
{
	eng_recv(to->eng, &from->addr, m, h_now); /* addr.port is 1 */
}

size_t h_deliver(struct h_side *from, struct h_side *to)
{
	size_t n = 0;

	while (from->next < from->nout) {
		struct cm_msg m = from->out[from->next++].msg;

		h_inject(from, to, &m);
		n++;
	}
	if (from->compact)
		from->next = from->nout = 0;
	return n;
}

void h_pump(struct h_side *a, struct h_side *b)
{
	while (h_deliver(a, b) + h_deliver(b, a))
		;
}

size_t h_drop(struct h_side *s)
{
	size_t n = s->nout - s->next;

	s->next = s->nout;
	return n;
}

size_t h_pending(const struct h_side *s)
{
	return s->nout - s->next;
}

struct cm_msg h_take(struct h_side *s, enum cm_msg_type type)
{
	assert_true(s->next < s->nout);
	if (s->out[s->next].msg.type != type)
		fail_msg("expected %s, sent %s", cm_msg_type_name(type),
			 cm_msg_type_name(s->out[s->next].msg.type));
	return s->out[s->next++].msg;
}

struct eng_event h_ev_noack(struct h_side *s, enum eng_event_type type,
			    uint32_t id)
{
	struct eng_event ev;

	if (s->evnext >= s->nev)
		fail_msg("expected event %s, none", eng_event_name(type));
	ev = s->evs[s->evnext++];
	if (s->compact && s->evnext == s->nev)
		s->evnext = s->nev = 0;
	if (ev.type != type)
		fail_msg("expected event %s, got %s", eng_event_name(type),
			 eng_event_name(ev.type));
	if (id)
		assert_int_equal(ev.id, id);
	return ev;
}

struct eng_event h_ev(struct h_side *s, enum eng_event_type type, uint32_t id)
{
	struct eng_event ev = h_ev_noack(s, type, id);

	assert_int_equal(eng_ack(s->eng, ev.id, h_now), 0);
	return ev;
}

size_t h_events_left(const struct h_side *s)
{
	return s->nev - s->evnext;
}

void h_at(struct h_side *a, struct h_side *b, uint64_t at)
{
	assert_true(at >= h_now);
	h_now = at;
	eng_run_timers(a->eng, h_now);
	if (b)
		eng_run_timers(b->eng, h_now);
}

void h_advance(struct h_side *a, struct h_side *b, uint64_t ns)
{
	h_at(a, b, h_now + ns);
}

void h_settle(struct h_side *a, struct h_side *b)
{
	for (;;) {
		uint64_t da, db, d;

		h_pump(a, b);
		da = eng_next_deadline(a->eng);
		db = eng_next_deadline(b->eng);
		d = da < db ? da : db;
		if (d == ENG_NO_DEADLINE)
			return;
		h_at(a, b, d > h_now ? d : h_now);
	}
}

enum eng_state h_state(struct h_side *s, uint32_t id)
{
	enum eng_state st = ENG_STATE__COUNT;

	assert_int_equal(eng_id_state(s->eng, id, &st), 0);
	return st;
}
