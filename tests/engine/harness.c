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
	struct ff_mad m = { .from = s->node.addr, .to = *to, .msg = *msg };

	if (s->fail_send)
		return s->fail_send;
	assert_int_equal(ff_queue_push(&s->out, &m), 0);
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

	return ff_random(&s->node);
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
	s->qpn = 0x100 + lid * 0x1000;
	assert_int_equal(
		ff_node_init(&s->node, &h_ops, s, cfg, guid, lid, roce, seed),
		0);
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
			h_hits[i][j] += s->node.eng->hits[i][j];
	ff_node_fini(&s->node);
	ff_queue_free(&s->out);
	free(s->evs);
	memset(s, 0, sizeof(*s));
}

uint32_t h_listen(struct h_side *s, uint64_t sid, unsigned int backlog)
{
	uint32_t id;

	assert_int_equal(eng_create_id(s->node.eng, 7, 0x1111, &id), 0);
	assert_int_equal(eng_listen(s->node.eng, id, sid, UINT64_MAX, backlog,
				    NULL, h_now),
			 0);
	return id;
}

uint32_t h_connect_qpn(struct h_side *s, struct h_side *peer, uint64_t sid,
		       uint32_t qpn)
{
	struct eng_connect_param p;
	uint32_t id;

	memset(&p, 0, sizeof(p));
	p.dest = peer->node.addr;
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
	assert_int_equal(eng_create_id(s->node.eng, 9, 0x2222, &id), 0);
	assert_int_equal(eng_connect(s->node.eng, id, &p, h_now), 0);
	assert_int_equal(p.req.local_comm_id, id);
	assert_int_equal(p.req.local_ca_guid, s->node.guid);
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
	return eng_accept(s->node.eng, id, &rep, h_now);
}

void h_inject(struct h_side *from, struct h_side *to, const struct cm_msg *m)
{
	/* addr.port is 1 */
	eng_recv(to->node.eng, &from->node.addr, m, h_now);
}

size_t h_deliver(struct h_side *from, struct h_side *to)
{
	size_t n = 0;

	while (ff_queue_len(&from->out)) {
		struct ff_mad m = ff_queue_pop(&from->out);

		ff_recv(&to->node, &m, h_now);
		n++;
	}
	if (from->compact)
		ff_queue_forget(&from->out);
	return n;
}

void h_pump(struct h_side *a, struct h_side *b)
{
	while (h_deliver(a, b) + h_deliver(b, a))
		;
}

size_t h_drop(struct h_side *s)
{
	return ff_queue_drop(&s->out);
}

size_t h_pending(const struct h_side *s)
{
	return ff_queue_len(&s->out);
}

struct cm_msg h_take(struct h_side *s, enum cm_msg_type type)
{
	assert_true(ff_queue_len(&s->out) > 0);
	if (ff_queue_at(&s->out, 0)->msg.type != type)
		fail_msg("expected %s, sent %s", cm_msg_type_name(type),
			 cm_msg_type_name(ff_queue_at(&s->out, 0)->msg.type));
	return ff_queue_pop(&s->out).msg;
}

struct eng_event h_mra_ev(struct h_side *s, uint32_t id, uint8_t mraed,
			  uint8_t service_timeout)
{
	struct eng_event ev = h_ev(s, ENG_EV_MRA_RECEIVED, id);

	assert_true(ev.has_msg);
	assert_int_equal(ev.msg.type, CM_MSG_MRA);
	assert_int_equal(ev.msg.mra.message_mraed, mraed);
	assert_int_equal(ev.msg.mra.service_timeout, service_timeout);
	return ev;
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

	assert_int_equal(eng_ack(s->node.eng, ev.id, h_now), 0);
	return ev;
}

size_t h_events_left(const struct h_side *s)
{
	return s->nev - s->evnext;
}

/* The fabric of 'a' and 'b' (which may be NULL), for the clock. */
static struct ff h_fabric(struct h_side *a, struct h_side *b)
{
	struct ff f = { .n = 0 };

	ff_add(&f, &a->node);
	if (b)
		ff_add(&f, &b->node);
	return f;
}

void h_at(struct h_side *a, struct h_side *b, uint64_t at)
{
	struct ff f = h_fabric(a, b);

	assert_true(at >= h_now);
	h_now = at;
	ff_run_timers(&f, h_now);
}

void h_advance(struct h_side *a, struct h_side *b, uint64_t ns)
{
	h_at(a, b, h_now + ns);
}

void h_settle(struct h_side *a, struct h_side *b)
{
	struct ff f = h_fabric(a, b);

	for (;;) {
		uint64_t d;

		h_pump(a, b);
		d = ff_next_deadline(&f);
		if (d == ENG_NO_DEADLINE)
			return;
		h_at(a, b, d > h_now ? d : h_now);
	}
}

enum eng_state h_state(struct h_side *s, uint32_t id)
{
	enum eng_state st = ENG_STATE__COUNT;

	assert_int_equal(eng_id_state(s->node.eng, id, &st), 0);
	return st;
}
