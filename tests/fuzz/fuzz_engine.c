// SPDX-License-Identifier: MIT
/*
 * Stateful fuzz target for the CM engine (daemon/, cm_engine.h): the input
 * is a program that drives one engine (loopback: it talks to itself) or two
 * engines wired back to back through an in-memory MAD queue the program
 * controls, with a fake clock: the fake fabric of the engine tests
 * (tests/lib/fake_fabric.h). Real protocol exchanges happen; the program
 * decides which MAD arrives, twice, late or never, what each client does
 * and when, and injects MADs of its own.
 *
 * Program: a 4-byte header, then steps until the input ends.
 *
 *   header  flags (bit 0: one engine, loopback; bit 1/2: port of engine
 *           A/B is RoCE; bit 3: ops.random returns a constant; bit 4:
 *           ops.owner_has_room allows 2 + bits 5-6 ids per owner),
 *           random seed, mra_service_timeout, max_held (% 8)
 *   step    opcode (% OP__COUNT) and its operands (see enum op); an
 *           operand past the end of the input reads as 0.
 *
 * Most operands start with a selector byte 'sel': bit 0 the engine, the
 * rest an index into that engine's ids (every id the program created or
 * was told of, destroyed ones too, so calls on dead ids are made); 0xf0
 * and above name an id no one has. Message fields a client passes (REQ,
 * REP, REJ, LAP, SIDR_REP) start from sane values and take "patches":
 * any field, set to a known id, GUID, QPN, small or raw value, cut to the
 * field's width as the daemon's API layer does.
 *
 * Steps are client calls on an id (OP_ANSWER: a client that answers the
 * id's last event as clients do), fabric actions on the queue (deliver,
 * drop, duplicate, reorder; OP_MUTATE: a queued MAD, changed, arrives;
 * OP_INJECT: a MAD built from the input, decoded with cm_mad_decode
 * first as the daemon does, only valid ones reaching eng_recv), clock
 * steps that run both engines' timers, and port down.
 *
 * Invariants, checked as things happen and after every step (FUZZ_CHECK):
 *   - no event for a destroyed id, for an id that never started an
 *     exchange, or for a listener (but for events its earlier exchange
 *     had queued when it listened); events carry the id's owner and the
 *     context set with eng_set_context, the message their type implies
 *     and a status exactly when they are errors; a passive id's first
 *     event is REQ_RECEIVED (SIDR_REQ_RECEIVED) naming a live listener of
 *     ours, and only its first;
 *   - with ops.owner_has_room, no REQ_RECEIVED takes an owner past it;
 *   - never two unacknowledged events for one id (and eng_ack succeeds
 *     exactly when one is out, as eng_walk agrees);
 *   - each connect's first event is REP_RECEIVED, REJ_RECEIVED or
 *     REQ_ERROR (a SIDR_REQ's: SIDR_REP_RECEIVED or SIDR_REQ_ERROR), and
 *     after the final settling each connect not destroyed had exactly one;
 *   - an API call that fails changes nothing: the id's eng_walk record,
 *     the record count, the next deadline, no MAD sent; return codes are
 *     from the documented set, -ENOENT exactly for dead or unknown ids,
 *     eng_destroy of a live id always succeeds, ids are never reused;
 *   - calls from inside ops.send / ops.deliver return -EBUSY and change
 *     nothing (eng_run_timers and eng_recv there do nothing);
 *   - every MAD the engine sends encodes, decodes strictly and equals
 *     what was sent, and is counted in eng_counters();
 *   - no deadline is in the past after any step (eng_run_timers included),
 *     every live record is an id its client was given (created or told
 *     of by REQ_RECEIVED), no destroyed record lingers in IDLE, held records are in
 *     MRA_REQ_SENT, listeners' credits and held counts stay in bounds;
 *   - at the end: acknowledging everything and running the timers out
 *     terminates; destroying every id and running the timers out again
 *     leaves eng_record_count() == 0 (LeakSanitizer checks the rest).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * By path, so that scripts/fuzz.sh (-Iproto -Itests/fuzz) and meson
 * (engine_dep) both find them; the engine's own files include theirs
 * from daemon/ by the same rule.
 */
#include "../../daemon/cm_engine.h"
#include "../../daemon/log.h"
#include "../lib/fake_fabric.h"
#include "cm_mad.h"
#include "fuzz.h"

#define MAX_STEPS 1000
#define MAX_IDS 512 /* per engine; creates beyond are skipped */
#define QCAP 64 /* MADs in flight; more are lost */
#define SETTLE_ROUNDS 100000
#define START_NS 1000000000ULL
#define MAX_NS (1ULL << 60)
#define VOID_LID 0x99 /* a LID no engine has: MADs sent there are lost */
#define NO_ID_SEL 0xf0

enum op {
	OP_CREATE, /* sel(engine, owner, context) */
	OP_LISTEN, /* sel, sid, backlog | selector << 2 (listen_sel) */
	OP_CONNECT, /* sel, sid, qpn, plt, rtimeout, ltimeout, retries, mtu,
		       flags, patches */
	OP_ACCEPT, /* sel, qpn, ack delay, patches */
	OP_REJECT, /* sel, reason, patches */
	OP_RTU, /* sel, flags */
	OP_MRA, /* sel, service timeout */
	OP_DISCONNECT, /* sel, private data length */
	OP_DESTROY, /* sel */
	OP_ACK, /* sel */
	OP_ESTABLISH, /* sel */
	OP_LAP, /* sel, patches */
	OP_APR, /* sel, status */
	OP_SIDR_REQ, /* sel, sid, timeout, retries, flags */
	OP_SIDR_REP, /* sel, patches */
	OP_SET_CONTEXT, /* sel, context */
	OP_DESTROY_OWNER, /* engine | owner << 1 */
	OP_DELIVER, /* count - 1 (% 8): the next MADs of the queue */
	OP_DROP, /* the next MAD is lost */
	OP_DUP, /* the next MAD arrives and stays queued */
	OP_REORDER, /* n: the MAD n places back goes to the front */
	OP_INJECT, /* engine|flags, type, patches, n, n x (offset, byte) */
	OP_ADVANCE, /* exponent, mantissa (u16): the clock, then timers */
	OP_NEXT_TIMER, /* the clock to the earliest deadline, then timers */
	OP_PORT_DOWN, /* engine | port << 1 (0: port 1) */
	OP_ACK_ALL, /* every unacknowledged event of both engines */
	OP_PUMP, /* deliver the queue until empty (bounded) */
	OP_ANSWER, /* sel, choice: ack the id's last event and answer it */
	OP_MUTATE, /* n, flags, patches: queued MAD n, changed, arrives */
	OP__COUNT,
};

struct track {
	uint32_t id;
	uint64_t owner;
	uint64_t context;
	bool destroyed;
	bool unacked;
	bool engaged; /* listened, connected, SIDR'd, or born from a REQ */
	bool listening;
	unsigned int leftover; /* events queued before eng_listen */
	bool passive;
	bool got_event;
	enum eng_event_type last; /* the last event delivered */
	enum { WANT_NONE, WANT_CONNECT, WANT_SIDR } want;
};

struct side {
	int idx;
	struct ff_node node;
	/* One allocation each: a track stays put while the array grows, as
	 * it may while a call we are in delivers a new passive id. */
	struct track **t;
	size_t n, cap;
	uint64_t nsent; /* its ops.send calls */
};

static struct fz {
	struct side s[2];
	int nsides;
	struct ff fab; /* the nsides nodes */
	bool const_random;
	uint64_t rnd;
	uint64_t now;
	struct ff_queue q; /* at most QCAP in flight */
	unsigned long nsent; /* MADs the engines handed to ops.send */
	const uint8_t *p;
	size_t left;
	unsigned int max_held;
	unsigned int room; /* ids per owner, 0: no limit */
	struct side *dying; /* inside eng_destroy_owner(dying_owner) */
	uint64_t dying_owner;
} fz;

/* Operands: a byte, or 0 once the input is used up. */
static uint8_t u8(void)
{
	if (!fz.left)
		return 0;
	fz.left--;
	return *fz.p++;
}

static uint16_t u16(void)
{
	uint16_t v = u8();

	return (uint16_t)(v << 8 | u8());
}

static uint64_t u64(void)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | u8();
	return v;
}

static struct side *side_of(uint8_t sel)
{
	return &fz.s[(sel & 1) % fz.nsides];
}

static struct side *peer_of(struct side *s)
{
	return &fz.s[(s->idx + 1) % fz.nsides];
}

static struct track *track_find(struct side *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i]->id == id)
			return s->t[i];
	return NULL;
}

static struct track *track_add(struct side *s, uint32_t id, uint64_t owner)
{
	struct track *t;

	/* Comm ids never repeat (ENGINE.md "Ids"). */
	FUZZ_CHECK(id != 0);
	FUZZ_CHECK(!track_find(s, id));
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct track **nt = realloc(s->t, cap * sizeof(*nt));

		FUZZ_CHECK(nt);
		s->t = nt;
		s->cap = cap;
	}
	t = calloc(1, sizeof(*t));
	FUZZ_CHECK(t);
	s->t[s->n++] = t;
	t->id = id;
	t->owner = owner;
	return t;
}

/* The id 'sel' names: a tracked one, or one that no engine ever issued. */
static uint32_t pick_id(struct side *s, uint8_t sel, struct track **tp)
{
	uint32_t id;

	*tp = NULL;
	if ((sel >> 1) >= (NO_ID_SEL >> 1) || !s->n) {
		/* An id from the input that no engine gave us. */
		id = (uint32_t)u16() << 16 | sel;
		while (!id || track_find(s, id))
			id++;
		return id;
	}
	*tp = s->t[(sel >> 1) % s->n];
	return (*tp)->id;
}

/*
 * FUZZ_ENGINE_TRACE=1 in the replay build: print the MADs and events, to
 * read what a seed or a crash file does.
 */
#ifdef FUZZ_STANDALONE
static int trace = -1;

static bool tracing(void)
{
	if (trace < 0)
		trace = getenv("FUZZ_ENGINE_TRACE") != NULL;
	return trace;
}
#define TRACE(...)                                                             \
	do {                                                                   \
		if (tracing())                                                 \
			fprintf(stderr, __VA_ARGS__);                          \
	} while (0)
#else
#define TRACE(...)                                                             \
	do {                                                                   \
	} while (0)
#endif

/* ---- Field helpers, by cm_msg_desc (as fuzz_cm_mad.c does them) ---- */

static uint64_t width_mask(unsigned int width)
{
	return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

static bool kind_is_int(enum cm_field_kind kind)
{
	return kind == CM_KIND_u8 || kind == CM_KIND_u16 ||
	       kind == CM_KIND_u32 || kind == CM_KIND_u64;
}

/* Every integer field cut to its width: what the wire can carry. */
static void mask_fields(struct cm_msg *m)
{
	const struct cm_msg_desc *d = cm_msg_desc(m->type);

	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];

		if (kind_is_int(f->kind))
			cm_field_set(m, f,
				     cm_field_get(m, f) & width_mask(f->width));
	}
}

static uint32_t qpn_pick(uint8_t b)
{
	return 0x100 + (b % 8);
}

static uint64_t sid_pick(uint8_t b)
{
	static const uint64_t sids[] = { 0x1000, 0x1001, 0x0106000000001234ULL,
					 0x2000 };

	return sids[b % 4];
}

/* A value for a patched field: something the engines know, or anything. */
static uint64_t value_pick(void)
{
	uint8_t k = u8();
	struct side *s = &fz.s[(k >> 3) % fz.nsides];

	switch (k % 6) {
	case 0:
		return s->n ? s->t[u8() % s->n]->id : 0;
	case 1:
		return s->node.guid;
	case 2:
		return qpn_pick(u8());
	case 3:
		return u8();
	case 4:
		return sid_pick(u8());
	default:
		return u64();
	}
}

/* n patches: (field index, value); then every field to its width. */
static void patch(struct cm_msg *m)
{
	const struct cm_msg_desc *d = cm_msg_desc(m->type);
	unsigned int n = u8() % 4;

	for (unsigned int i = 0; i < n; i++) {
		const struct cm_field_desc *f = &d->fields[u8() % d->nfields];
		uint64_t v = value_pick();

		cm_field_set(m, f, v);
	}
	mask_fields(m);
}

/* A patch list read and thrown away, so the operands stay aligned. */
static void patch_skip(void)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_MSG_RTU, 0);
	patch(&m);
}

/* ---- Checks ---- */

struct snap {
	bool found;
	struct eng_conn_info info;
	size_t records;
	uint64_t deadline;
	unsigned long nsent;
	bool lis;
	struct eng_listen_info li;
};

struct walk_find {
	uint32_t id;
	struct eng_conn_info *out;
	bool found;
};

static int walk_find_fn(void *arg, const struct eng_conn_info *info)
{
	struct walk_find *w = arg;

	if (info->id != w->id)
		return 0;
	*w->out = *info;
	w->found = true;
	return 1;
}

static bool walk_info(struct side *s, uint32_t id, struct eng_conn_info *out)
{
	struct walk_find w = { .id = id, .out = out };

	memset(out, 0, sizeof(*out));
	eng_walk(s->node.eng, walk_find_fn, &w);
	return w.found;
}

static void snap_take(struct side *s, uint32_t id, struct snap *sn)
{
	memset(sn, 0, sizeof(*sn));
	sn->found = walk_info(s, id, &sn->info);
	sn->records = eng_record_count(s->node.eng);
	sn->deadline = eng_next_deadline(s->node.eng);
	sn->nsent = fz.nsent;
	sn->lis = eng_listen_info(s->node.eng, id, &sn->li) == 0;
}

static void snap_same(const struct snap *a, const struct snap *b)
{
	FUZZ_CHECK(a->found == b->found);
	FUZZ_CHECK(!memcmp(&a->info, &b->info, sizeof(a->info)));
	FUZZ_CHECK(a->records == b->records);
	FUZZ_CHECK(a->deadline == b->deadline);
	FUZZ_CHECK(a->nsent == b->nsent);
	FUZZ_CHECK(a->lis == b->lis);
	if (a->lis)
		FUZZ_CHECK(!memcmp(&a->li, &b->li, sizeof(a->li)));
}

/*
 * After an API call on 'id': the return code is one the API documents, a
 * failure changed nothing, and a dead or unknown id gives -ENOENT.
 */
static void api_done(struct side *s, struct track *t, uint32_t id, int rc,
		     bool bad_arg, const struct snap *before)
{
	struct snap after;

	FUZZ_CHECK(rc != -EBUSY);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOENT || rc == -ENODEV ||
		   rc == -EOPNOTSUPP || rc == -EADDRINUSE);
	if (bad_arg)
		/* Checked before the id is looked up. */
		FUZZ_CHECK(rc == -EINVAL);
	else if (!t || t->destroyed)
		FUZZ_CHECK(rc == -ENOENT);
	else
		FUZZ_CHECK(rc != -ENOENT);
	if (rc == 0)
		return;
	snap_take(s, id, &after);
	snap_same(before, &after);
}

static bool is_outcome(enum eng_event_type type)
{
	return type == ENG_EV_REP_RECEIVED || type == ENG_EV_REJ_RECEIVED ||
	       type == ENG_EV_REQ_ERROR;
}

/* The message an event carries, by its type, and its status. */
static void check_event_msg(const struct eng_event *ev)
{
	static const int want[ENG_EV__COUNT] = {
		[ENG_EV_REQ_RECEIVED] = CM_MSG_REQ,
		[ENG_EV_REP_RECEIVED] = CM_MSG_REP,
		[ENG_EV_REJ_RECEIVED] = CM_MSG_REJ,
		[ENG_EV_DREQ_RECEIVED] = CM_MSG_DREQ,
		[ENG_EV_LAP_RECEIVED] = CM_MSG_LAP,
		[ENG_EV_APR_RECEIVED] = CM_MSG_APR,
		[ENG_EV_SIDR_REQ_RECEIVED] = CM_MSG_SIDR_REQ,
		[ENG_EV_SIDR_REP_RECEIVED] = CM_MSG_SIDR_REP,
		[ENG_EV_MRA_RECEIVED] = CM_MSG_MRA,
	};
	bool error =
		ev->type == ENG_EV_REQ_ERROR || ev->type == ENG_EV_REP_ERROR ||
		ev->type == ENG_EV_DREQ_ERROR || ev->type == ENG_EV_LAP_ERROR ||
		ev->type == ENG_EV_SIDR_REQ_ERROR ||
		ev->type == ENG_EV_PORT_ERROR;

	FUZZ_CHECK(error ? ev->status != 0 : ev->status == 0);
	if (ev->type == ENG_EV_PORT_ERROR)
		FUZZ_CHECK(ev->status == -ENETDOWN);
	if (want[ev->type])
		FUZZ_CHECK(ev->has_msg && (int)ev->msg.type == want[ev->type]);
	else if (ev->type == ENG_EV_REQ_RECEIVED)
		FUZZ_CHECK(ev->has_msg && ev->msg.type == CM_MSG_REQ);
	else if (ev->type == ENG_EV_RTU_RECEIVED && ev->has_msg)
		FUZZ_CHECK(ev->msg.type == CM_MSG_RTU);
	else if (ev->type == ENG_EV_DREP_RECEIVED)
		/* DREQs crossed: the peer's DREQ (ENGINE.md). */
		FUZZ_CHECK(ev->has_msg && (ev->msg.type == CM_MSG_DREP ||
					   ev->msg.type == CM_MSG_DREQ));
	else if (ev->type == ENG_EV_REQ_ERROR && ev->status == -ESTALE)
		FUZZ_CHECK(ev->has_msg && ev->msg.type == CM_MSG_REP);
	else if (error || ev->type == ENG_EV_TIMEWAIT_EXIT)
		FUZZ_CHECK(!ev->has_msg);
}

/* What the peer gets of 'msg', in 'out': the same, field by field. */
static void check_roundtrip(const struct cm_msg *msg, struct cm_msg *out)
{
	const struct cm_msg_desc *d = cm_msg_desc(msg->type);
	uint8_t buf[CM_MAD_SIZE];
	struct cm_msg back;
	struct cm_fault f = { .code = 0 };
	int rc;

	FUZZ_CHECK(d);
	FUZZ_CHECK(msg->hdr.attr_id == d->attr_id);
	FUZZ_CHECK(msg->hdr.method == CM_METHOD_SEND);
	rc = ff_wire(msg, buf, &back, CM_DECODE_STRICT, &f);
	if (rc)
		fprintf(stderr,
			"sent %s does not encode and decode: %s, "
			"%s = %llu\n",
			cm_msg_type_name(msg->type), cm_fault_str(f.code),
			f.field ? f.field : "-", (unsigned long long)f.value);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(back.type == msg->type);
	FUZZ_CHECK(back.hdr.base_version == msg->hdr.base_version);
	FUZZ_CHECK(back.hdr.mgmt_class == msg->hdr.mgmt_class);
	FUZZ_CHECK(back.hdr.class_version == msg->hdr.class_version);
	FUZZ_CHECK(back.hdr.status == msg->hdr.status);
	FUZZ_CHECK(back.hdr.class_specific == msg->hdr.class_specific);
	FUZZ_CHECK(back.hdr.tid == msg->hdr.tid);
	FUZZ_CHECK(back.hdr.attr_mod == msg->hdr.attr_mod);
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *fd = &d->fields[i];

		if (kind_is_int(fd->kind))
			FUZZ_CHECK(cm_field_get(&back, fd) ==
				   cm_field_get(msg, fd));
		else if (fd->kind == CM_KIND_bytes)
			FUZZ_CHECK(
				!memcmp((const uint8_t *)&back.req + fd->offset,
					(const uint8_t *)&msg->req + fd->offset,
					fd->width / 8));
	}
	*out = back;
}

/*
 * Inside a callback of engine 's': every entry point refuses (-EBUSY) or,
 * for those that return nothing, does nothing.
 */
static void check_reentry(struct side *s, uint32_t id)
{
	struct eng *e = s->node.eng;
	const struct eng_counters *c = eng_counters(e);
	uint64_t deadline = eng_next_deadline(e);
	size_t records = eng_record_count(e);
	uint64_t rcvd = c->received[CM_MSG_DREQ];
	struct eng_connect_param p;
	struct cm_rej rej = { .reason = CM_REJ_CONSUMER_DEFINED };
	struct cm_msg m;
	uint32_t nid;

	memset(&p, 0, sizeof(p));
	FUZZ_CHECK(eng_ack(e, id, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_destroy(e, id, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_create_id(e, 1, 0, &nid) == -EBUSY);
	FUZZ_CHECK(eng_connect(e, id, &p, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_reject(e, id, &rej, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_disconnect(e, id, NULL, 0, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_establish(e, id, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_port_down(e, 1, fz.now) == -EBUSY);
	FUZZ_CHECK(eng_destroy_owner(e, 1, fz.now) == -EBUSY);
	eng_run_timers(e, UINT64_MAX - 1);
	cm_msg_init(&m, CM_MSG_DREQ, 1);
	m.dreq.remote_comm_id = id;
	eng_recv(e, &peer_of(s)->node.addr, &m, fz.now);
	FUZZ_CHECK(eng_next_deadline(e) == deadline);
	FUZZ_CHECK(eng_record_count(e) == records);
	FUZZ_CHECK(c->received[CM_MSG_DREQ] == rcvd);
}

/* ---- The engines' ops ---- */

static int fz_send(void *ctx, const struct eng_addr *to,
		   const struct cm_msg *msg)
{
	struct side *s = ctx;
	struct ff_mad q = { .from = s->node.addr, .to = *to };

	fz.nsent++;
	s->nsent++;
	TRACE("%llu: %c sends %s to lid %u\n",
	      (unsigned long long)(fz.now - START_NS), 'A' + s->idx,
	      cm_msg_type_name(msg->type), to->lid);
	check_roundtrip(msg, &q.msg);
	check_reentry(s, msg->rej.local_comm_id);
	FUZZ_CHECK(to->port < ENG_MAX_PORTS);
	q.dest = ff_route(&fz.fab, to);
	/* No one there, or the queue full: lost on the fabric. */
	if (q.dest >= 0)
		FUZZ_CHECK(ff_queue_push(&fz.q, &q) != -ENOMEM);
	return 0;
}

static unsigned int owner_ids(struct side *s, uint64_t owner);

static void fz_deliver(void *ctx, const struct eng_event *ev)
{
	struct side *s = ctx;
	struct track *t = track_find(s, ev->id);

	FUZZ_CHECK((unsigned int)ev->type < ENG_EV__COUNT);
	TRACE("%llu: %c event %s on %08x status %d\n",
	      (unsigned long long)(fz.now - START_NS), 'A' + s->idx,
	      eng_event_name(ev->type), ev->id, ev->status);
	FUZZ_CHECK(ev->status == 0 || ev->status == -ETIMEDOUT ||
		   ev->status == -ESTALE || ev->status == -ENETDOWN);
	check_event_msg(ev);
	/* Nothing for a client while eng_destroy_owner removes it. */
	FUZZ_CHECK(!(s == fz.dying && ev->owner == fz.dying_owner));
	if (!t) {
		struct track *l;

		/* A passive id is born with its request, from a listener. */
		FUZZ_CHECK(ev->type == ENG_EV_REQ_RECEIVED ||
			   ev->type == ENG_EV_SIDR_REQ_RECEIVED);
		l = track_find(s, ev->listen_id);
		FUZZ_CHECK(l && l->listening && !l->destroyed);
		FUZZ_CHECK(ev->listen_context == l->context);
		FUZZ_CHECK(ev->owner == l->owner);
		FUZZ_CHECK(ev->context == 0);
		/* A listener never grows its owner past the limit. */
		if (fz.room && ev->type == ENG_EV_REQ_RECEIVED)
			FUZZ_CHECK(owner_ids(s, l->owner) < fz.room);
		t = track_add(s, ev->id, l->owner);
		t->engaged = true;
		t->passive = true;
	} else {
		FUZZ_CHECK(ev->type != ENG_EV_REQ_RECEIVED &&
			   ev->type != ENG_EV_SIDR_REQ_RECEIVED);
	}
	FUZZ_CHECK(!t->destroyed);
	FUZZ_CHECK(!t->unacked);
	FUZZ_CHECK(t->engaged);
	/*
	 * A listener hears nothing, except what an earlier exchange of the
	 * id had queued when it became one (eng_listen accepts an IDLE id
	 * with events pending; they still come, in order).
	 */
	if (t->listening) {
		FUZZ_CHECK(t->leftover > 0);
		t->leftover--;
	}
	FUZZ_CHECK(ev->owner == t->owner);
	FUZZ_CHECK(ev->context == t->context);
	if (ev->type == ENG_EV_MRA_RECEIVED)
		/* The peer needs longer: a note while our message waits,
		 * not the outcome a connect waits for. */
		FUZZ_CHECK(ev->state == ENG_STATE_MRA_REQ_RCVD ||
			   ev->state == ENG_STATE_MRA_REP_RCVD ||
			   ev->lap == ENG_LAP_MRA_RCVD);
	else if (t->want == WANT_CONNECT)
		FUZZ_CHECK(is_outcome(ev->type));
	else if (t->want == WANT_SIDR)
		FUZZ_CHECK(ev->type == ENG_EV_SIDR_REP_RECEIVED ||
			   ev->type == ENG_EV_SIDR_REQ_ERROR);
	if (ev->type != ENG_EV_MRA_RECEIVED)
		t->want = WANT_NONE;
	t->last = ev->type;
	t->unacked = true;
	t->got_event = true;
	check_reentry(s, ev->id);
}

static uint32_t fz_random(void *ctx)
{
	uint64_t z;

	(void)ctx;
	if (fz.const_random)
		return (uint32_t)fz.rnd;
	/* splitmix64 */
	z = (fz.rnd += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Header flag bit 4: each owner may hold only fz.room live ids. */
static unsigned int owner_ids(struct side *s, uint64_t owner)
{
	unsigned int n = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!s->t[i]->destroyed && s->t[i]->owner == owner)
			n++;
	return n;
}

static bool fz_owner_has_room(void *ctx, uint64_t owner)
{
	return owner_ids(ctx, owner) < fz.room;
}

static const struct eng_ops fz_ops = {
	.send = fz_send,
	.deliver = fz_deliver,
	.random = fz_random,
};

static const struct eng_ops fz_ops_limited = {
	.send = fz_send,
	.deliver = fz_deliver,
	.random = fz_random,
	.owner_has_room = fz_owner_has_room,
};

/* ---- Invariants after every step ---- */

struct walk_check {
	struct side *s;
	size_t n;
};

static int walk_check_fn(void *arg, const struct eng_conn_info *info)
{
	struct walk_check *w = arg;
	struct track *t = track_find(w->s, info->id);

	w->n++;
	if (info->deadline != ENG_NO_DEADLINE)
		FUZZ_CHECK(info->deadline > fz.now);
	/* A destroyed record is freed as soon as it reaches IDLE. */
	FUZZ_CHECK(!(info->destroyed && info->state == ENG_STATE_IDLE));
	FUZZ_CHECK(!info->queued || info->unacked);
	if (info->destroyed || info->held)
		FUZZ_CHECK(!info->unacked && !info->queued);
	if (info->held) {
		FUZZ_CHECK(info->state == ENG_STATE_MRA_REQ_SENT);
		FUZZ_CHECK(!t);
	}
	if (info->state != ENG_STATE_ESTABLISHED)
		FUZZ_CHECK(info->lap == ENG_LAP_IDLE);
	if (t && !t->destroyed) {
		FUZZ_CHECK(!info->destroyed && !info->held);
		FUZZ_CHECK(info->unacked == t->unacked);
	}
	/* A live record is an id its client knows of: none is orphaned. */
	if (!info->destroyed && !info->held)
		FUZZ_CHECK(t && !t->destroyed);
	if (info->state == ENG_STATE_LISTEN && !info->destroyed) {
		struct eng_listen_info li;

		FUZZ_CHECK(eng_listen_info(w->s->node.eng, info->id, &li) == 0);
		FUZZ_CHECK(li.credits_used <= li.backlog);
		FUZZ_CHECK(li.held <= fz.max_held);
	}
	return 0;
}

static void check_side(struct side *s)
{
	struct walk_check w = { .s = s };
	uint64_t d = eng_next_deadline(s->node.eng);

	const struct eng_counters *c = eng_counters(s->node.eng);
	uint64_t sent = 0;

	FUZZ_CHECK(d == ENG_NO_DEADLINE || d > fz.now);
	/* Every MAD handed to ops.send (which never fails here) counted. */
	for (int i = 0; i < CM_MSG__COUNT; i++)
		sent += c->sent[i];
	FUZZ_CHECK(c->send_errors == 0 && sent == s->nsent);
	eng_walk(s->node.eng, walk_check_fn, &w);
	FUZZ_CHECK(w.n == eng_record_count(s->node.eng));
	for (size_t i = 0; i < s->n; i++) {
		struct track *t = s->t[i];
		enum eng_state st;
		int rc = eng_id_state(s->node.eng, t->id, &st);

		FUZZ_CHECK(t->destroyed ? rc == -ENOENT : rc == 0);
		if (t->listening && !t->destroyed)
			FUZZ_CHECK(st == ENG_STATE_LISTEN);
	}
}

static void check_all(void)
{
	for (int i = 0; i < fz.nsides; i++)
		check_side(&fz.s[i]);
}

/* ---- Steps ---- */

static void run_timers(void)
{
	ff_run_timers(&fz.fab, fz.now);
	FUZZ_CHECK(ff_next_deadline(&fz.fab) > fz.now);
}

/* The head of the queue is lost or has arrived; nothing keeps it. */
static struct ff_mad q_pop(void)
{
	struct ff_mad m = ff_queue_pop(&fz.q);

	ff_queue_forget(&fz.q);
	return m;
}

/* The MAD at the head of the queue arrives; it stays queued if 'keep'. */
static void q_deliver(bool keep)
{
	struct ff_mad q;

	if (!ff_queue_len(&fz.q))
		return;
	q = keep ? *ff_queue_at(&fz.q, 0) : q_pop();
	ff_recv(&fz.s[q.dest].node, &q, fz.now);
}

/* Whatever is in flight is lost. */
static void q_lose_all(void)
{
	ff_queue_drop(&fz.q);
	ff_queue_forget(&fz.q);
}

static void ack(struct side *s, struct track *t, uint32_t id)
{
	struct snap before;
	bool was = t && !t->destroyed && t->unacked;
	int rc;

	snap_take(s, id, &before);
	/* The ack may deliver the next event at once: clear first. */
	if (was)
		t->unacked = false;
	rc = eng_ack(s->node.eng, id, fz.now);
	if (was)
		FUZZ_CHECK(rc == 0);
	else if (t && !t->destroyed)
		FUZZ_CHECK(rc == -EINVAL);
	api_done(s, t, id, rc, false, &before);
}

static void ack_all(void)
{
	bool again = true;

	while (again) {
		again = false;
		for (int i = 0; i < fz.nsides; i++)
			for (size_t j = 0; j < fz.s[i].n; j++) {
				struct track *t = fz.s[i].t[j];

				if (!t->destroyed && t->unacked) {
					ack(&fz.s[i], t, t->id);
					again = true;
				}
			}
	}
}

static void destroy(struct side *s, struct track *t, uint32_t id)
{
	struct snap before;
	bool live = t && !t->destroyed;
	int rc;

	snap_take(s, id, &before);
	/* Nothing may be delivered for it from inside the call on. */
	if (live) {
		t->destroyed = true;
		t->unacked = false;
	}
	rc = eng_destroy(s->node.eng, id, fz.now);
	if (live) {
		/* Every state has a way out (ENGINE.md, "Destroy"). */
		FUZZ_CHECK(rc == 0);
		t->listening = false;
	} else {
		api_done(s, t, id, rc, false, &before);
	}
}

/* A connect (or SIDR_REQ) whose first event must be its outcome. */
static void started(struct side *s, struct track *t, uint32_t id, int want)
{
	struct eng_conn_info info;

	t->engaged = true;
	FUZZ_CHECK(walk_info(s, id, &info));
	/*
	 * Events of an earlier exchange of this id may still wait: then
	 * the next event is not this one's outcome, and we cannot tell
	 * which is. Fresh ids (the rule's real subject) always qualify.
	 */
	t->want = !info.unacked && !info.queued ? want : WANT_NONE;
}

static void op_connect(void)
{
	uint8_t sel = u8();
	struct side *s = side_of(sel), *peer = peer_of(s);
	struct eng_connect_param p;
	struct cm_msg m;
	struct snap before;
	struct track *t;
	uint32_t id = pick_id(s, sel, &t);
	uint8_t flags;
	int rc;

	memset(&p, 0, sizeof(p));
	cm_msg_init(&m, CM_MSG_REQ, 0);
	m.req.service_id = sid_pick(u8());
	m.req.local_qpn = qpn_pick(u8());
	p.packet_life_time = u8();
	m.req.primary_local_ack_timeout = (p.packet_life_time + 1) & 31;
	m.req.remote_cm_resp_timeout = u8();
	m.req.local_cm_resp_timeout = u8();
	m.req.max_cm_retries = u8();
	m.req.path_mtu = CM_MTU_1024 + u8();
	m.req.transport_type = CM_TRANSPORT_RC;
	flags = u8();
	p.dest = peer->node.addr;
	if (flags & 1)
		p.dest.lid = VOID_LID;
	if (flags & 2)
		p.dest.port = 2 + (flags >> 2); /* not registered */
	patch(&m);
	p.req = m.req;
	snap_take(s, id, &before);
	rc = eng_connect(s->node.eng, id, &p, fz.now);
	api_done(s, t, id, rc, false, &before);
	if (!rc) {
		FUZZ_CHECK(p.req.local_comm_id == id);
		FUZZ_CHECK(p.req.local_ca_guid == s->node.guid);
		FUZZ_CHECK(p.req.starting_psn != 0);
		started(s, t, id, WANT_CONNECT);
	}
}

static void op_sidr_req(void)
{
	uint8_t sel = u8();
	struct side *s = side_of(sel), *peer = peer_of(s);
	struct eng_sidr_param p;
	struct snap before;
	struct track *t;
	uint32_t id = pick_id(s, sel, &t);
	uint8_t flags;
	int rc;

	memset(&p, 0, sizeof(p));
	p.service_id = sid_pick(u8());
	p.timeout = u8() & 31;
	p.max_retries = u8() & 15;
	p.pkey = 0xffff;
	flags = u8();
	p.dest = peer->node.addr;
	if (flags & 1)
		p.dest.lid = VOID_LID;
	if (flags & 2)
		p.dest.port = 2 + (flags >> 2);
	p.private_data[0] = flags;
	snap_take(s, id, &before);
	rc = eng_sidr_req(s->node.eng, id, &p, fz.now);
	api_done(s, t, id, rc, false, &before);
	if (!rc)
		started(s, t, id, WANT_SIDR);
}

/*
 * A listener's selector from 6 bits: kind (ANY, PORTS, GID) and 4 more:
 * ports 1 and 2 of the engine, or the last byte of a GID (0: none, or a
 * zero GID, both refused with -EINVAL).
 */
static struct eng_listen_sel listen_sel(uint8_t v)
{
	struct eng_listen_sel ls = { .kind = ENG_SEL_ANY };

	switch (v % 3) {
	case 1:
		ls.kind = ENG_SEL_PORTS;
		ls.ports[0] = (uint64_t)((v >> 2) & 3) << 1;
		break;
	case 2:
		ls.kind = ENG_SEL_GID;
		ls.gid[15] = (uint8_t)(v >> 2);
		break;
	}
	return ls;
}

static void op_listen(void)
{
	static const uint64_t masks[] = { UINT64_MAX, UINT64_MAX,
					  ~UINT64_C(0xffff), 0 };
	uint8_t sel = u8(), b = u8();
	struct side *s = side_of(sel);
	struct snap before;
	struct track *t;
	uint32_t id = pick_id(s, sel, &t);
	uint8_t bl = u8();
	struct eng_listen_sel ls = listen_sel((uint8_t)(bl >> 2));
	int rc;

	snap_take(s, id, &before);
	rc = eng_listen(s->node.eng, id, sid_pick(b), masks[(b >> 2) % 4],
			bl % 4, &ls, fz.now);
	api_done(s, t, id, rc, false, &before);
	if (!rc) {
		struct eng_conn_info info;

		FUZZ_CHECK(walk_info(s, id, &info));
		t->listening = true;
		t->leftover = (unsigned int)info.queued;
		t->engaged = true;
	}
}

/* Calls on one id that take a message or a byte and need no tracking. */
static void op_call(enum op op)
{
	uint8_t sel = u8();
	struct side *s = side_of(sel);
	struct snap before;
	struct track *t;
	uint32_t id = pick_id(s, sel, &t);
	uint8_t pd[256], b = 0;
	bool bad_arg = false;
	struct cm_msg m;
	int rc = 0;

	memset(pd, 0xa5, sizeof(pd));
	switch (op) {
	case OP_ACCEPT:
		cm_msg_init(&m, CM_MSG_REP, 0);
		m.rep.local_qpn = qpn_pick(u8());
		m.rep.target_ack_delay = u8();
		patch(&m);
		break;
	case OP_REJECT:
		cm_msg_init(&m, CM_MSG_REJ, 0);
		m.rej.reason = u8() % 40;
		patch(&m);
		break;
	case OP_LAP:
		cm_msg_init(&m, CM_MSG_LAP, 0);
		patch(&m);
		break;
	case OP_SIDR_REP:
		cm_msg_init(&m, CM_MSG_SIDR_REP, 0);
		patch(&m);
		/* Both are refused before the id is looked up (Table 120:
		 * crash-sidr-rep-info-length was an engine that sent it). */
		bad_arg = m.sidr_rep.status > CM_SIDR_STATUS_MAX ||
			  m.sidr_rep.info_length > CM_SIDR_REP_INFO_SIZE;
		break;
	case OP_RTU:
		cm_msg_init(&m, CM_MSG_RTU, 0);
		b = u8();
		m.rtu.private_data[0] = b;
		break;
	case OP_MRA:
		b = u8() % 34;
		bad_arg = b > 31;
		break;
	case OP_APR:
		b = u8() % (CM_APR_STATUS_MAX + 3);
		bad_arg = b > CM_APR_STATUS_MAX;
		break;
	case OP_DISCONNECT:
		b = u8();
		break;
	default:
		break;
	}
	snap_take(s, id, &before);
	switch (op) {
	case OP_ACCEPT:
		rc = eng_accept(s->node.eng, id, &m.rep, fz.now);
		if (!rc) {
			FUZZ_CHECK(m.rep.local_comm_id == id);
			FUZZ_CHECK(m.rep.starting_psn != 0);
		}
		break;
	case OP_REJECT:
		rc = eng_reject(s->node.eng, id, &m.rej, fz.now);
		break;
	case OP_RTU:
		rc = eng_rtu(s->node.eng, id, b & 1 ? NULL : &m.rtu, fz.now);
		break;
	case OP_MRA:
		rc = eng_mra(s->node.eng, id, b, NULL, 0, fz.now);
		break;
	case OP_DISCONNECT:
		rc = eng_disconnect(s->node.eng, id, b & 1 ? NULL : pd, b,
				    fz.now);
		break;
	case OP_ESTABLISH:
		rc = eng_establish(s->node.eng, id, fz.now);
		break;
	case OP_LAP:
		rc = eng_lap(s->node.eng, id, &m.lap, fz.now);
		break;
	case OP_APR:
		rc = eng_apr(s->node.eng, id, b, NULL, 0, NULL, 0, fz.now);
		break;
	case OP_SIDR_REP:
		rc = eng_sidr_rep(s->node.eng, id, &m.sidr_rep, fz.now);
		break;
	default:
		break;
	}
	api_done(s, t, id, rc, bad_arg, &before);
}

static void op_create(void)
{
	uint8_t sel = u8();
	struct side *s = side_of(sel);
	uint64_t owner = 1 + ((sel >> 1) & 1);
	struct track *t;
	uint32_t id;

	if (s->n >= MAX_IDS)
		return;
	FUZZ_CHECK(eng_create_id(s->node.eng, owner, sel >> 2, &id) == 0);
	t = track_add(s, id, owner);
	t->context = sel >> 2;
}

static void op_set_context(void)
{
	uint8_t sel = u8();
	struct side *s = side_of(sel);
	struct track *t;
	uint32_t id = pick_id(s, sel, &t);
	uint64_t ctx = u8();
	struct snap before;
	int rc;

	snap_take(s, id, &before);
	rc = eng_set_context(s->node.eng, id, ctx);
	api_done(s, t, id, rc, false, &before);
	if (!rc)
		t->context = ctx;
}

struct owner_find {
	uint64_t owner;
	unsigned int live;
};

static int owner_find_fn(void *arg, const struct eng_conn_info *info)
{
	struct owner_find *o = arg;

	if (info->owner == o->owner && !info->destroyed && !info->held)
		o->live++;
	return 0;
}

/*
 * The client went away: every id it had is destroyed, and none is born to
 * it while that happens (a REQ held for its listener and handed on when
 * one of its ids gives its credit back would be an id nobody owns).
 */
static void op_destroy_owner(void)
{
	uint8_t b = u8();
	struct side *s = side_of(b);
	uint64_t owner = (b >> 1) % 4; /* 0 and 3: no one's */
	struct owner_find o = { .owner = owner };
	int expect = 0, rc;

	for (size_t i = 0; i < s->n; i++) {
		struct track *t = s->t[i];

		if (!t->destroyed && t->owner == owner) {
			t->destroyed = true;
			t->unacked = false;
			t->listening = false;
			expect++;
		}
	}
	fz.dying = s;
	fz.dying_owner = owner;
	rc = eng_destroy_owner(s->node.eng, owner, fz.now);
	fz.dying = NULL;
	FUZZ_CHECK(rc == expect);
	eng_walk(s->node.eng, owner_find_fn, &o);
	FUZZ_CHECK(o.live == 0);
}

static void op_inject(void)
{
	uint8_t b = u8();
	struct side *s = side_of(b), *from = peer_of(s);
	struct eng_addr addr = from->node.addr;
	enum cm_msg_type type = (enum cm_msg_type)(u8() % CM_MSG__COUNT);
	uint8_t buf[CM_MAD_SIZE];
	struct cm_msg m;
	struct cm_fault f;
	unsigned int n;

	cm_msg_init(&m, type, u8());
	/* Start from what validates; patches then do the rest. */
	switch (type) {
	case CM_MSG_REQ:
		m.req.path_mtu = CM_MTU_1024;
		m.req.service_id = sid_pick(b >> 4);
		m.req.local_ca_guid = from->node.guid;
		m.req.local_qpn = qpn_pick(b >> 5);
		m.req.primary_local_ack_timeout = 9;
		m.req.remote_cm_resp_timeout = 13;
		m.req.local_cm_resp_timeout = 13;
		m.req.max_cm_retries = 3;
		break;
	case CM_MSG_REJ:
		m.rej.reason = CM_REJ_CONSUMER_DEFINED;
		break;
	case CM_MSG_REP:
		m.rep.local_ca_guid = from->node.guid;
		break;
	default:
		break;
	}
	patch(&m);
	if (cm_mad_encode(&m, buf))
		return;
	n = u8() % 4;
	for (unsigned int i = 0; i < n; i++) {
		uint8_t off = u8();

		buf[off] = u8();
	}
	if (b & 2)
		addr.lid = VOID_LID;
	if (cm_mad_decode(buf, sizeof(buf), 0, &m, &f)) {
		eng_count_malformed(s->node.eng, 1, type);
		return;
	}
	addr.port = b & 4 ? 1 + (b >> 3) : 1;
	eng_recv(s->node.eng, &addr, &m, fz.now);
}

static void op_advance(void)
{
	uint8_t e = u8() % 40;
	uint64_t ns = ((uint64_t)u16() + 1) << e;

	/* A monotonic clock in ns does not get near 2^64; stay below 2^60. */
	if (ns > MAX_NS - fz.now)
		ns = MAX_NS - fz.now;
	fz.now += ns;
	run_timers();
}

static void op_next_timer(void)
{
	uint64_t d = ff_next_deadline(&fz.fab);

	if (d == ENG_NO_DEADLINE)
		return;
	FUZZ_CHECK(d > fz.now);
	fz.now = d;
	run_timers();
}

static void op_port_down(void)
{
	uint8_t b = u8();
	struct side *s = side_of(b);
	unsigned int port = b & 0x80 ? (b >> 1) & 0x3f : 1;
	int rc = eng_port_down(s->node.eng, (uint16_t)port, fz.now);

	FUZZ_CHECK(rc >= 0);
}

/*
 * A client that answers as clients do: ack the last event, then the call
 * it asks for, 'choice' picking among the reasonable ones.
 */
static void op_answer(void)
{
	uint8_t sel = u8(), choice = u8();
	struct side *s = side_of(sel);
	struct track *t;
	uint32_t id = pick_id(s, sel, &t);
	struct cm_rej rej = { .reason = CM_REJ_CONSUMER_DEFINED };
	struct cm_sidr_rep srep;
	struct cm_rep rep;
	struct snap before;
	int rc;

	if (!t || t->destroyed || !t->got_event)
		return;
	if (t->unacked)
		ack(s, t, id);
	snap_take(s, id, &before);
	switch (t->last) {
	case ENG_EV_REQ_RECEIVED:
		memset(&rep, 0, sizeof(rep));
		rep.local_qpn = qpn_pick(choice >> 2);
		rep.target_ack_delay = 6;
		rc = choice % 4 == 0 ?
			     eng_reject(s->node.eng, id, &rej, fz.now) :
		     choice % 4 == 1 ?
			     eng_mra(s->node.eng, id, 16, NULL, 0, fz.now) :
			     eng_accept(s->node.eng, id, &rep, fz.now);
		break;
	case ENG_EV_REP_RECEIVED:
		rc = choice % 4 == 0 ?
			     eng_reject(s->node.eng, id, &rej, fz.now) :
		     choice % 4 == 1 ?
			     eng_mra(s->node.eng, id, 16, NULL, 0, fz.now) :
			     eng_rtu(s->node.eng, id, NULL, fz.now);
		break;
	case ENG_EV_RTU_RECEIVED:
	case ENG_EV_APR_RECEIVED:
	case ENG_EV_LAP_ERROR:
	case ENG_EV_PORT_ERROR:
		rc = choice % 2 ?
			     eng_disconnect(s->node.eng, id, NULL, 0, fz.now) :
			     0;
		break;
	case ENG_EV_DREQ_RECEIVED:
		rc = eng_disconnect(s->node.eng, id, NULL, 0, fz.now);
		break;
	case ENG_EV_LAP_RECEIVED:
		rc = choice % 3 ? eng_apr(s->node.eng, id, choice % 2, NULL, 0,
					  NULL, 0, fz.now) :
				  eng_mra(s->node.eng, id, 16, NULL, 0, fz.now);
		break;
	case ENG_EV_SIDR_REQ_RECEIVED:
		memset(&srep, 0, sizeof(srep));
		srep.status = choice % (CM_SIDR_STATUS_MAX + 1);
		srep.qpn = qpn_pick(choice);
		rc = eng_sidr_rep(s->node.eng, id, &srep, fz.now);
		break;
	default:
		/* Ended (errors, REJ, DREP, timewait): the id goes. */
		if (!(choice & 1))
			return;
		destroy(s, t, id);
		return;
	}
	/* The id may have moved on since: -EINVAL is an answer too. */
	api_done(s, t, id, rc, false, &before);
}

/*
 * A MAD of the queue, one the engines really sent, changed by patches and
 * delivered (to its destination, or with flag bit 0 to its sender); the
 * original stays queued.
 */
static void op_mutate(void)
{
	uint8_t n = u8(), flags = u8();
	size_t len = ff_queue_len(&fz.q);
	struct ff_mad *q;
	struct eng_addr from;
	struct cm_msg m;
	struct cm_fault f;
	int to;

	if (!len) {
		patch_skip();
		return;
	}
	q = ff_queue_at(&fz.q, n % len);
	m = q->msg;
	patch(&m);
	if (cm_msg_validate(&m, &f))
		return;
	to = flags & 1 ? (q->dest + 1) % fz.nsides : q->dest;
	/* A copy: what the engine sends from in there may move the queue. */
	from = q->from;
	eng_recv(fz.s[to].node.eng, &from, &m, fz.now);
}

static void step(enum op op)
{
	unsigned int n;
	uint8_t sel;
	struct side *s;
	struct track *t;
	uint32_t id;

	switch (op) {
	case OP_CREATE:
		op_create();
		break;
	case OP_LISTEN:
		op_listen();
		break;
	case OP_CONNECT:
		op_connect();
		break;
	case OP_SIDR_REQ:
		op_sidr_req();
		break;
	case OP_ACCEPT:
	case OP_REJECT:
	case OP_RTU:
	case OP_MRA:
	case OP_DISCONNECT:
	case OP_ESTABLISH:
	case OP_LAP:
	case OP_APR:
	case OP_SIDR_REP:
		op_call(op);
		break;
	case OP_DESTROY:
	case OP_ACK:
		sel = u8();
		s = side_of(sel);
		id = pick_id(s, sel, &t);
		if (op == OP_DESTROY)
			destroy(s, t, id);
		else
			ack(s, t, id);
		break;
	case OP_SET_CONTEXT:
		op_set_context();
		break;
	case OP_DESTROY_OWNER:
		op_destroy_owner();
		break;
	case OP_DELIVER:
		for (n = u8() % 8 + 1; n && ff_queue_len(&fz.q); n--)
			q_deliver(false);
		break;
	case OP_DROP:
		if (ff_queue_len(&fz.q))
			q_pop();
		break;
	case OP_DUP:
		q_deliver(true);
		break;
	case OP_REORDER:
		n = u8();
		if (ff_queue_len(&fz.q) > 1) {
			struct ff_mad *head = ff_queue_at(&fz.q, 0);
			struct ff_mad *m = ff_queue_at(
				&fz.q, 1 + n % (ff_queue_len(&fz.q) - 1));
			struct ff_mad tmp = *head;

			*head = *m;
			*m = tmp;
		}
		break;
	case OP_INJECT:
		op_inject();
		break;
	case OP_ADVANCE:
		op_advance();
		break;
	case OP_NEXT_TIMER:
		op_next_timer();
		break;
	case OP_PORT_DOWN:
		op_port_down();
		break;
	case OP_ACK_ALL:
		ack_all();
		break;
	case OP_PUMP:
		for (n = 0; n < 4 * QCAP && ff_queue_len(&fz.q); n++)
			q_deliver(false);
		break;
	case OP_ANSWER:
		op_answer();
		break;
	case OP_MUTATE:
		op_mutate();
		break;
	case OP__COUNT:
		break;
	}
}

/*
 * The end: clients acknowledge everything and answer nothing, the fabric
 * loses what is in flight, the clock runs until no deadline is left. This
 * must terminate, and then every connect not destroyed has its outcome.
 */
static void settle(void)
{
	unsigned int rounds = 0;

	for (;;) {
		uint64_t d;

		ack_all();
		q_lose_all();
		d = ff_next_deadline(&fz.fab);
		if (d == ENG_NO_DEADLINE)
			break;
		FUZZ_CHECK(++rounds < SETTLE_ROUNDS);
		FUZZ_CHECK(d > fz.now);
		fz.now = d;
		run_timers();
		check_all();
	}
	ack_all();
	q_lose_all();
	FUZZ_CHECK(ff_next_deadline(&fz.fab) == ENG_NO_DEADLINE);
}

static void null_sink(void *ctx, enum log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	(void)line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eng_config cfg;
	uint8_t flags;
	unsigned int steps = 0;

	/* Debug level: every log line is formatted (and so checked). */
	log_set_sink(null_sink, NULL);
	log_set_level(LOG_LVL_DEBUG);
	memset(&fz, 0, sizeof(fz));
	fz.p = data;
	fz.left = size;
	flags = u8();
	fz.nsides = flags & 1 ? 1 : 2;
	fz.const_random = flags & 8;
	fz.room = flags & 16 ? 2 + ((flags >> 5) & 3) : 0;
	fz.rnd = u8();
	memset(&cfg, 0, sizeof(cfg));
	cfg.mra_service_timeout = u8() & 31;
	cfg.max_held = u8() % 8;
	fz.max_held = cfg.max_held;
	fz.now = START_NS;
	fz.q.max = QCAP;
	for (int i = 0; i < fz.nsides; i++) {
		struct side *s = &fz.s[i];

		s->idx = i;
		/* The seed is unused: fz_random() draws for every node. */
		FUZZ_CHECK(ff_node_init(&s->node,
					fz.room ? &fz_ops_limited : &fz_ops, s,
					&cfg, FF_GUID(i), (uint16_t)(i + 1),
					flags & (2 << i), 0) == 0);
		ff_add(&fz.fab, &s->node);
	}

	while (fz.left && steps++ < MAX_STEPS) {
		enum op op = (enum op)(u8() % OP__COUNT);

		TRACE("step %u: op %d\n", steps, op);
		step(op);
		check_all();
	}

	settle();
	for (int i = 0; i < fz.nsides; i++) {
		struct side *s = &fz.s[i];

		for (size_t j = 0; j < s->n; j++) {
			struct track *t = s->t[j];

			/* Exactly one first outcome per connect. */
			FUZZ_CHECK(t->destroyed || t->want == WANT_NONE);
			FUZZ_CHECK(!t->unacked);
		}
	}
	/* Every id destroyed; the protocol tails run out; nothing is left. */
	for (int i = 0; i < fz.nsides; i++) {
		struct side *s = &fz.s[i];

		for (size_t j = 0; j < s->n; j++)
			if (!s->t[j]->destroyed)
				destroy(s, s->t[j], s->t[j]->id);
	}
	check_all();
	settle();
	for (int i = 0; i < fz.nsides; i++) {
		FUZZ_CHECK(eng_record_count(fz.s[i].node.eng) == 0);
		ff_node_fini(&fz.s[i].node);
		for (size_t j = 0; j < fz.s[i].n; j++)
			free(fz.s[i].t[j]);
		free(fz.s[i].t);
	}
	ff_queue_free(&fz.q);
	memset(&fz, 0, sizeof(fz));
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * Golden seeds: short programs for the main conversations, assembled here
 * so that they follow the opcode numbering. Side 0 is A (listens), side 1
 * is B (connects); in a selector, engine | index << 1.
 */
struct prog {
	uint8_t b[1024];
	size_t n;
};

static void emit(struct prog *p, int count, ...)
{
	va_list ap;

	va_start(ap, count);
	for (int i = 0; i < count; i++) {
		FUZZ_CHECK(p->n < sizeof(p->b));
		p->b[p->n++] = (uint8_t)va_arg(ap, int);
	}
	va_end(ap);
}

#define SEL(side, idx) ((side) | (idx) << 1)
#define A 0
#define B 1

/*
 * Header; A creates and listens on sid 0 (index 0); B creates an id
 * (index 0) and connects to A: the REQ waits in the queue.
 */
static void prologue(struct prog *p, uint8_t flags)
{
	p->n = 0;
	emit(p, 4, flags, 7, 14, 2);
	emit(p, 2, OP_CREATE, SEL(A, 0));
	emit(p, 4, OP_LISTEN, SEL(A, 0), 0, 1);
	emit(p, 2, OP_CREATE, SEL(B, 0) | 4);
	/* sid 0, qpn 0, plt 8, resp 13/13, retries 3, mtu ok, flags 0, 0
	 * patches */
	emit(p, 11, OP_CONNECT, SEL(B, 0), 0, 0, 8, 13, 13, 3, 0, 0, 0);
}

/* REQ to A, A accepts; the REP waits in the queue. */
static void to_rep(struct prog *p, uint8_t flags)
{
	prologue(p, flags);
	emit(p, 2, OP_DELIVER, 0);
	emit(p, 2, OP_ACK, SEL(A, 1));
	emit(p, 5, OP_ACCEPT, SEL(A, 1), 1, 6, 0);
}

/* ... the REP reaches B, B sends the RTU; it waits in the queue. */
static void to_rtu(struct prog *p, uint8_t flags)
{
	to_rep(p, flags);
	emit(p, 2, OP_DELIVER, 0);
	emit(p, 2, OP_ACK, SEL(B, 0));
	emit(p, 3, OP_RTU, SEL(B, 0), 0);
}

static void established(struct prog *p, uint8_t flags)
{
	to_rtu(p, flags);
	emit(p, 2, OP_DELIVER, 0);
	emit(p, 2, OP_ACK, SEL(A, 1));
}

static void seed(const char *name, const struct prog *p)
{
	fuzz_seed(name, p->b, p->n);
}

/* The index of a message field, for patches. */
static int fidx(enum cm_msg_type type, const char *name)
{
	const struct cm_msg_desc *d = cm_msg_desc(type);

	for (unsigned int i = 0; i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name))
			return (int)i;
	FUZZ_CHECK(0);
	return 0;
}

/* Value kinds of value_pick(): A's and B's connection ids, a QPN, a byte. */
#define V_ID_A 0, 1
#define V_ID_B 24, 0
#define V_QPN(n) 2, (n)
#define V_U8(n) 3, (n)

/*
 * Inject into 'to' a message from the other side naming both connection
 * ids (A's is A index 1, B's is B index 0), plus one more patch.
 */
static void inject_conn(struct prog *p, int to, enum cm_msg_type type,
			int field, int kind, int value)
{
	int local = fidx(type, "local_comm_id");
	int remote = fidx(type, "remote_comm_id");

	emit(p, 4, OP_INJECT, to, type, 0);
	emit(p, 1, field >= 0 ? 3 : 2);
	if (to == A) {
		emit(p, 3, local, V_ID_B);
		emit(p, 3, remote, V_ID_A);
	} else {
		emit(p, 3, local, V_ID_A);
		emit(p, 3, remote, V_ID_B);
	}
	if (field >= 0)
		emit(p, 3, field, kind, value);
	emit(p, 1, 0);
}

enum stage {
	ST_REQ_SENT, /* B's REQ queued */
	ST_REQ_RCVD, /* A has it */
	ST_MRA_REQ, /* A MRAed it, B has the MRA */
	ST_REP_SENT, /* A accepted; REP queued */
	ST_REP_RCVD, /* B has it */
	ST_MRA_REP, /* B MRAed it, A has the MRA */
	ST_ESTABLISHED,
	ST_DREQ_SENT, /* B disconnected; DREQ queued */
	ST_DREQ_RCVD, /* A has it */
	ST_TIMEWAIT, /* both in timewait */
	ST_LAP, /* B's LAP reached A */
	ST_DREQ_SENT_A, /* A disconnected, B has the DREQ */
	ST__COUNT,
};

static const char *const stage_names[ST__COUNT] = {
	"req-sent",  "req-rcvd", "mra-req",	"rep-sent",
	"rep-rcvd",  "mra-rep",	 "established", "dreq-sent",
	"dreq-rcvd", "timewait", "lap",		"a-dreq-sent",
};

static void stage(struct prog *p, enum stage st)
{
	prologue(p, 0);
	if (st == ST_REQ_SENT)
		return;
	emit(p, 2, OP_DELIVER, 0);
	if (st == ST_REQ_RCVD)
		return;
	if (st == ST_MRA_REQ) {
		emit(p, 3, OP_MRA, SEL(A, 1), 20);
		emit(p, 2, OP_DELIVER, 0);
		return;
	}
	emit(p, 2, OP_ACK, SEL(A, 1));
	emit(p, 5, OP_ACCEPT, SEL(A, 1), 1, 6, 0);
	if (st == ST_REP_SENT)
		return;
	emit(p, 2, OP_DELIVER, 0);
	if (st == ST_REP_RCVD)
		return;
	if (st == ST_MRA_REP) {
		emit(p, 3, OP_MRA, SEL(B, 0), 20);
		emit(p, 2, OP_DELIVER, 0);
		return;
	}
	emit(p, 2, OP_ACK, SEL(B, 0));
	emit(p, 3, OP_RTU, SEL(B, 0), 0);
	emit(p, 2, OP_DELIVER, 0);
	emit(p, 2, OP_ACK, SEL(A, 1));
	if (st == ST_ESTABLISHED)
		return;
	if (st == ST_LAP) {
		emit(p, 3, OP_LAP, SEL(B, 0), 0);
		emit(p, 2, OP_DELIVER, 0);
		return;
	}
	if (st == ST_DREQ_SENT_A) {
		emit(p, 3, OP_DISCONNECT, SEL(A, 1), 0);
		emit(p, 2, OP_DELIVER, 0);
		return;
	}
	emit(p, 3, OP_DISCONNECT, SEL(B, 0), 0);
	if (st == ST_DREQ_SENT)
		return;
	emit(p, 2, OP_DELIVER, 0);
	if (st == ST_DREQ_RCVD)
		return;
	emit(p, 2, OP_ACK, SEL(A, 1));
	emit(p, 3, OP_DISCONNECT, SEL(A, 1), 0);
	emit(p, 2, OP_DELIVER, 0);
}

enum tail {
	TL_PORT_DOWN_A,
	TL_PORT_DOWN_B,
	TL_DESTROY_A,
	TL_DESTROY_B,
	TL_REJ_A,
	TL_REJ_B,
	TL_REJ_STALE_A,
	TL_REJ_STALE_B,
	TL_DREQ_A,
	TL_REQ_AGAIN_A,
	TL_REP_AGAIN_B,
	TL_RTU_A,
	TL_STALE_QPN,
	TL_TIMERS,
	TL_ESTABLISH_A,
	TL_STALE_QPN_B,
	TL__COUNT,
};

static const char *const tail_names[TL__COUNT] = {
	"port-down-a", "port-down-b", "destroy-a",   "destroy-b",
	"rej-a",       "rej-b",	      "rej-stale-a", "rej-stale-b",
	"dreq-a",      "req-again-a", "rep-again-b", "rtu-a",
	"stale-qpn",   "timers",      "establish-a", "stale-qpn-b",
};

static void tail(struct prog *p, enum tail tl)
{
	switch (tl) {
	case TL_PORT_DOWN_A:
		emit(p, 2, OP_PORT_DOWN, A);
		break;
	case TL_PORT_DOWN_B:
		emit(p, 2, OP_PORT_DOWN, B);
		break;
	case TL_DESTROY_A:
		emit(p, 2, OP_DESTROY, SEL(A, 1));
		break;
	case TL_DESTROY_B:
		emit(p, 2, OP_DESTROY, SEL(B, 0));
		break;
	case TL_REJ_A:
	case TL_REJ_STALE_A:
		inject_conn(p, A, CM_MSG_REJ,
			    tl == TL_REJ_A ? -1 : fidx(CM_MSG_REJ, "reason"),
			    V_U8(CM_REJ_STALE_CONN));
		break;
	case TL_REJ_B:
	case TL_REJ_STALE_B:
		inject_conn(p, B, CM_MSG_REJ,
			    tl == TL_REJ_B ? -1 : fidx(CM_MSG_REJ, "reason"),
			    V_U8(CM_REJ_STALE_CONN));
		break;
	case TL_DREQ_A:
		/* A's QP is qpn_pick(1), from its accept. */
		inject_conn(p, A, CM_MSG_DREQ, fidx(CM_MSG_DREQ, "remote_qpn"),
			    V_QPN(1));
		break;
	case TL_REQ_AGAIN_A:
		/* B's REQ once more: same comm id, GUID and QPN. */
		emit(p, 4, OP_INJECT, A, CM_MSG_REQ, 0);
		emit(p, 4, 1, fidx(CM_MSG_REQ, "local_comm_id"), V_ID_B);
		emit(p, 1, 0);
		break;
	case TL_REP_AGAIN_B:
		inject_conn(p, B, CM_MSG_REP, fidx(CM_MSG_REP, "local_qpn"),
			    V_QPN(1));
		break;
	case TL_RTU_A:
		inject_conn(p, A, CM_MSG_RTU, -1, 0, 0);
		break;
	case TL_STALE_QPN:
		emit(p, 2, OP_CREATE, SEL(B, 0));
		emit(p, 11, OP_CONNECT, SEL(B, 1), 0, 0, 8, 13, 13, 3, 0, 0, 0);
		break;
	case TL_ESTABLISH_A:
		emit(p, 2, OP_ESTABLISH, SEL(A, 1));
		break;
	case TL_STALE_QPN_B:
		/* B listens too; A connects from the QP of its connection. */
		emit(p, 2, OP_CREATE, SEL(B, 0));
		emit(p, 4, OP_LISTEN, SEL(B, 1), 0, 1);
		emit(p, 2, OP_CREATE, SEL(A, 0));
		emit(p, 11, OP_CONNECT, SEL(A, 2), 0, 1, 8, 13, 13, 3, 0, 0, 0);
		break;
	case TL_TIMERS:
		for (int i = 0; i < 3; i++)
			emit(p, 1, OP_NEXT_TIMER);
		break;
	case TL__COUNT:
		break;
	}
	emit(p, 1, OP_PUMP);
	emit(p, 1, OP_ACK_ALL);
	emit(p, 1, OP_PUMP);
}

void fuzz_write_seeds(void)
{
	struct prog p;

	established(&p, 0);
	seed("happy", &p);

	established(&p, 1);
	seed("happy-loopback", &p);

	/* A rejects the REQ (reason 28). */
	prologue(&p, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(A, 1));
	emit(&p, 4, OP_REJECT, SEL(A, 1), 28, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("reject", &p);

	/* B (active) disconnects; A answers; timewait runs out. */
	established(&p, 0);
	emit(&p, 3, OP_DISCONNECT, SEL(B, 0), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(A, 1));
	emit(&p, 3, OP_DISCONNECT, SEL(A, 1), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_NEXT_TIMER);
	emit(&p, 1, OP_NEXT_TIMER);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 2, OP_DESTROY, SEL(A, 1));
	emit(&p, 2, OP_DESTROY, SEL(B, 0));
	seed("disconnect-active", &p);

	/* A (passive) disconnects. */
	established(&p, 0);
	emit(&p, 3, OP_DISCONNECT, SEL(A, 1), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(B, 0));
	emit(&p, 3, OP_DISCONNECT, SEL(B, 0), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_NEXT_TIMER);
	emit(&p, 1, OP_NEXT_TIMER);
	seed("disconnect-passive", &p);

	/* B destroys its id while A holds the REQ; A hears the REJ. */
	prologue(&p, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_DESTROY, SEL(B, 0));
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("destroy-active-mid", &p);

	/* A destroys its id after its REP went out (REP_SENT: REJ, TW). */
	to_rep(&p, 0);
	emit(&p, 2, OP_DESTROY, SEL(A, 1));
	emit(&p, 2, OP_DELIVER, 1);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_NEXT_TIMER);
	seed("destroy-passive-mid", &p);

	/* The RTU is lost: A resends its REP, B answers with the RTU again. */
	to_rtu(&p, 0);
	emit(&p, 1, OP_DROP);
	emit(&p, 1, OP_NEXT_TIMER);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_NEXT_TIMER);
	emit(&p, 1, OP_NEXT_TIMER);
	seed("lost-rtu", &p);

	/* The REQ is lost every time: REQ_ERROR after the retries. */
	prologue(&p, 0);
	for (int i = 0; i < 5; i++) {
		emit(&p, 1, OP_DROP);
		emit(&p, 1, OP_NEXT_TIMER);
	}
	emit(&p, 1, OP_ACK_ALL);
	seed("lost-req", &p);

	/* A slow client: A's MRA, then the accept. */
	prologue(&p, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_MRA, SEL(A, 1), 20);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(A, 1));
	emit(&p, 5, OP_ACCEPT, SEL(A, 1), 1, 6, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(B, 0));
	emit(&p, 3, OP_RTU, SEL(B, 0), 1);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("mra", &p);

	/* Data before the RTU: A establishes, then the RTU is a duplicate. */
	to_rtu(&p, 0);
	emit(&p, 2, OP_ESTABLISH, SEL(A, 1));
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("establish", &p);

	/* LAP from B, APR from A. */
	established(&p, 0);
	emit(&p, 3, OP_LAP, SEL(B, 0), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(A, 1));
	emit(&p, 3, OP_APR, SEL(A, 1), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("lap", &p);

	/* SIDR: B asks A's listener, A answers. */
	p.n = 0;
	emit(&p, 4, 0, 7, 14, 2);
	emit(&p, 2, OP_CREATE, SEL(A, 0));
	emit(&p, 4, OP_LISTEN, SEL(A, 0), 0, 1);
	emit(&p, 2, OP_CREATE, SEL(B, 0));
	emit(&p, 6, OP_SIDR_REQ, SEL(B, 0), 0, 16, 3, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 2, OP_ACK, SEL(A, 1));
	emit(&p, 3, OP_SIDR_REP, SEL(A, 1), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("sidr", &p);

	/* Port down on B mid-handshake, then on A when established. */
	to_rep(&p, 0);
	emit(&p, 2, OP_PORT_DOWN, SEL(B, 0));
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_PUMP);
	seed("port-down-handshake", &p);
	established(&p, 0);
	emit(&p, 2, OP_PORT_DOWN, SEL(A, 0));
	emit(&p, 1, OP_ACK_ALL);
	seed("port-down-established", &p);

	/* A held REQ: backlog 1, a second connect waits for the credit. */
	prologue(&p, 0);
	emit(&p, 2, OP_CREATE, SEL(B, 0));
	emit(&p, 11, OP_CONNECT, SEL(B, 1), 0, 1, 8, 13, 13, 3, 0, 0, 0);
	emit(&p, 2, OP_DELIVER, 1);
	emit(&p, 4, OP_REJECT, SEL(A, 1), 28, 0);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_PUMP);
	seed("held", &p);

	/* B rejects A's REP: A goes to timewait. */
	prologue(&p, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_ANSWER, SEL(A, 1), 2);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_ANSWER, SEL(B, 0), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_NEXT_TIMER);
	seed("reject-rep", &p);

	/* B needs time for the REP: its MRA, then the RTU. */
	prologue(&p, 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_ANSWER, SEL(A, 1), 2);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_ANSWER, SEL(B, 0), 1);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_RTU, SEL(B, 0), 1);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("mra-rep", &p);

	/* Both sides disconnect at once: the DREQs cross. */
	established(&p, 0);
	emit(&p, 3, OP_DISCONNECT, SEL(B, 0), 0);
	emit(&p, 3, OP_DISCONNECT, SEL(A, 1), 0);
	emit(&p, 1, OP_PUMP);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_NEXT_TIMER);
	emit(&p, 1, OP_NEXT_TIMER);
	seed("dreq-collision", &p);

	/* B connects again from the same QP: A rejects it as stale and
	 * disconnects the old connection. */
	established(&p, 0);
	emit(&p, 2, OP_CREATE, SEL(B, 0));
	emit(&p, 11, OP_CONNECT, SEL(B, 1), 0, 0, 8, 13, 13, 3, 0, 0, 0);
	emit(&p, 1, OP_PUMP);
	emit(&p, 1, OP_ACK_ALL);
	emit(&p, 1, OP_PUMP);
	emit(&p, 1, OP_ACK_ALL);
	seed("stale-qpn", &p);

	/* A's client needs time for B's LAP: MRA, then the APR. */
	established(&p, 0);
	emit(&p, 3, OP_LAP, SEL(B, 0), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_ANSWER, SEL(A, 1), 0);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 3, OP_ANSWER, SEL(A, 1), 1);
	emit(&p, 2, OP_DELIVER, 0);
	emit(&p, 1, OP_ACK_ALL);
	seed("lap-mra", &p);

	/* The listener goes while a REQ is held: REJ 8 for it. */
	prologue(&p, 0);
	emit(&p, 2, OP_CREATE, SEL(B, 0));
	emit(&p, 11, OP_CONNECT, SEL(B, 1), 0, 1, 8, 13, 13, 3, 0, 0, 0);
	emit(&p, 2, OP_DELIVER, 1);
	emit(&p, 2, OP_DESTROY, SEL(A, 0));
	emit(&p, 1, OP_PUMP);
	emit(&p, 1, OP_ACK_ALL);
	seed("held-listener-destroyed", &p);

	/* A's DREQ arrives twice, the second time changed. */
	established(&p, 0);
	emit(&p, 3, OP_DISCONNECT, SEL(A, 1), 0);
	emit(&p, 4, OP_MUTATE, 0, 0, 0);
	emit(&p, 4, OP_MUTATE, 0, 0, 1);
	emit(&p, 3, 3, 2, 0);
	emit(&p, 1, OP_PUMP);
	emit(&p, 3, OP_ANSWER, SEL(B, 0), 0);
	emit(&p, 1, OP_PUMP);
	emit(&p, 1, OP_ACK_ALL);
	seed("mutate", &p);

	/* Every stage of a connection, then one thing happening to it. */
	for (int st = 0; st < ST__COUNT; st++)
		for (int tl = 0; tl < TL__COUNT; tl++) {
			char name[64];

			stage(&p, st);
			tail(&p, tl);
			snprintf(name, sizeof(name), "at-%s-%s",
				 stage_names[st], tail_names[tl]);
			seed(name, &p);
		}

	/* An injected stray DREQ and an RTU for no connection. */
	established(&p, 0);
	emit(&p, 6, OP_INJECT, SEL(A, 0), CM_MSG_DREQ, 0, 0, 0);
	emit(&p, 6, OP_INJECT, SEL(A, 0), CM_MSG_RTU, 0, 0, 0);
	emit(&p, 1, OP_PUMP);
	seed("inject", &p);
}
#endif
