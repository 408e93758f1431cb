// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the engine's handoff state reader (daemon/state.c,
 * daemon/eng_state.c). The input is a state's records (the payload); the
 * target frames them with a valid header (format 1, its size, its CRC),
 * since a fuzzer would almost never hit a CRC, and restores them into a
 * fresh engine serving port 1 (GUID FZ_GUID, IB) and port 2 (RoCE).
 *
 * Invariants: a restore either succeeds or is refused with a reason,
 * never crashes, leaks or leaves a half-linked engine (freeing it is
 * clean under ASan either way); restoring sends and delivers nothing but
 * what a deferred message owes; and an accepted state saves again into a
 * state that restores into the same records (walk by walk), so what was
 * accepted was understood.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../daemon/eng_state.h"
#include "fuzz.h"

/* The engine tests' B (FF_GUID(1)), so their golden state is a seed that restores. */
#define FZ_GUID 0x0002c90300000200ULL

static unsigned int sends, delivers;

static int fz_send(void *ctx, const struct eng_addr *to,
		   const struct cm_msg *msg)
{
	sends++;
	return 0;
}

static void fz_deliver(void *ctx, const struct eng_event *ev)
{
	delivers++;
}

static uint32_t fz_random(void *ctx)
{
	static uint32_t x = 12345;

	x = x * 1103515245u + 12345u;
	return x;
}

static const struct eng_ops fz_ops = {
	.send = fz_send,
	.deliver = fz_deliver,
	.random = fz_random,
};

static struct eng *fresh(void)
{
	struct eng_config cfg = { .mra_service_timeout = 14, .max_held = 4 };
	struct eng *eng = eng_new(&fz_ops, NULL, &cfg);

	FUZZ_CHECK(eng);
	FUZZ_CHECK(eng_port_set(eng, 1, FZ_GUID, false) == 0);
	FUZZ_CHECK(eng_port_set(eng, 2, FZ_GUID + 1, true) == 0);
	return eng;
}

/* Frame payload as a whole file of format 1 (state.h's header). */
static uint8_t *frame(const uint8_t *payload, size_t len, size_t *out)
{
	uint8_t *b = malloc(STATE_HDR_SIZE + len + 1);
	uint32_t nrec = 0, crc;
	size_t off = 0;

	FUZZ_CHECK(b);
	memset(b, 0, STATE_HDR_SIZE);
	memcpy(b, "CMDSTATE", 8);
	b[8] = STATE_VERSION;
	b[12] = STATE_HDR_SIZE;
	for (int i = 0; i < 8; i++)
		b[16 + i] = (uint8_t)((uint64_t)len >> (8 * i));
	/* The record count the framing implies (a wrong one is refused at
	 * the end, which the truncations of the seeds reach anyway). */
	while (off + 8 <= len) {
		uint32_t blen = (uint32_t)payload[off + 4] |
				(uint32_t)payload[off + 5] << 8 |
				(uint32_t)payload[off + 6] << 16 |
				(uint32_t)payload[off + 7] << 24;

		nrec++;
		if (blen > len - off - 8)
			break;
		off += 8 + blen;
	}
	for (int i = 0; i < 4; i++)
		b[28 + i] = (uint8_t)(nrec >> (8 * i));
	if (len)
		memcpy(b + STATE_HDR_SIZE, payload, len);
	crc = (uint32_t)crc32(crc32(0, b + 28, STATE_HDR_SIZE - 28),
			      b + STATE_HDR_SIZE, (uInt)len);
	for (int i = 0; i < 4; i++)
		b[24 + i] = (uint8_t)(crc >> (8 * i));
	*out = STATE_HDR_SIZE + len;
	return b;
}

static int restore(struct eng *eng, const uint8_t *buf, size_t len)
{
	struct state_file f;
	struct state_r r;
	struct eng_restore *x;
	const char *why = NULL;
	uint16_t type;
	int rc;

	rc = state_open(&f, buf, len, STATE_OPEN_ANY_BOOT, &why);
	if (rc) {
		FUZZ_CHECK(rc == -EINVAL && why);
		return rc;
	}
	x = eng_restore_begin(eng);
	FUZZ_CHECK(x);
	while ((rc = state_next(&f, &type, &r, &why)) > 0) {
		rc = eng_restore_rec(eng, x, type, &r, &why);
		if (rc) {
			FUZZ_CHECK(rc == -EINVAL || rc == 1);
			eng_restore_abort(x);
			return -EINVAL;
		}
	}
	if (rc) {
		FUZZ_CHECK(rc == -EINVAL && why);
		eng_restore_abort(x);
		return rc;
	}
	rc = eng_restore_end(eng, x, 1000000000ULL, &why);
	FUZZ_CHECK(rc == 0 || (rc == -EINVAL && why));
	return rc;
}

struct walk {
	struct eng_conn_info *v;
	size_t n, cap;
};

static int walk_cb(void *arg, const struct eng_conn_info *info)
{
	struct walk *w = arg;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->v = realloc(w->v, w->cap * sizeof(*w->v));
		FUZZ_CHECK(w->v);
	}
	w->v[w->n++] = *info;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct eng_conn_info *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void walk(const struct eng *eng, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	eng_walk(eng, walk_cb, w);
	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), by_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eng *eng = fresh();
	size_t len;
	uint8_t *file = frame(data, size, &len);

	sends = delivers = 0;
	if (restore(eng, file, len) == 0) {
		struct state_w w;
		struct eng *again = fresh();
		struct walk w1, w2;
		uint8_t *payload;

		/* Nothing is delivered by a restore. */
		FUZZ_CHECK(delivers == 0);
		sw_init(&w);
		eng_state_save(eng, &w);
		FUZZ_CHECK(w.err == 0);
		/* Saved again and restored again: the same records. The
		 * save is framed as the input was (its own header aside). */
		payload = malloc(w.len - STATE_HDR_SIZE + 1);
		FUZZ_CHECK(payload);
		memcpy(payload, w.buf + STATE_HDR_SIZE, w.len - STATE_HDR_SIZE);
		free(file);
		file = frame(payload, w.len - STATE_HDR_SIZE, &len);
		free(payload);
		sw_free(&w);
		FUZZ_CHECK(restore(again, file, len) == 0);
		walk(eng, &w1);
		walk(again, &w2);
		FUZZ_CHECK(w1.n == w2.n);
		for (size_t i = 0; i < w1.n; i++)
			FUZZ_CHECK(
				!memcmp(&w1.v[i], &w2.v[i], sizeof(w1.v[i])));
		free(w1.v);
		free(w2.v);
		/* Its timers run without harm. */
		for (int i = 0; i < 8; i++) {
			uint64_t d = eng_next_deadline(eng);

			if (d == ENG_NO_DEADLINE)
				break;
			eng_run_timers(eng, d);
		}
		eng_free(again);
	}
	free(file);
	eng_free(eng);
	return 0;
}

#ifdef FUZZ_STANDALONE
/* An engine with a listener, an id connecting (REQ sent, its timer), and
 * an idle id: its payload. */
void fuzz_write_seeds(void)
{
	struct eng *eng = fresh();
	struct eng_connect_param p;
	struct state_w w;
	uint32_t lis, id, idle;

	FUZZ_CHECK(eng_create_id(eng, 7, 0x11, &lis) == 0);
	FUZZ_CHECK(eng_listen(eng, lis, 0x1000, UINT64_MAX, 4, NULL, 0) == 0);
	FUZZ_CHECK(eng_create_id(eng, 7, 0x22, &id) == 0);
	memset(&p, 0, sizeof(p));
	p.dest.port = 1;
	p.dest.lid = 0x33;
	p.dest.qpn = 1;
	p.packet_life_time = 10;
	p.req.service_id = 0x2000;
	p.req.local_qpn = 0x100;
	p.req.remote_cm_resp_timeout = 12;
	p.req.local_cm_resp_timeout = 12;
	p.req.max_cm_retries = 3;
	p.req.transport_type = CM_TRANSPORT_RC;
	p.req.path_mtu = CM_MTU_1024;
	FUZZ_CHECK(eng_connect(eng, id, &p, 0) == 0);
	FUZZ_CHECK(eng_create_id(eng, 8, 0x33, &idle) == 0);
	sw_init(&w);
	eng_state_save(eng, &w);
	FUZZ_CHECK(w.err == 0);
	fuzz_seed("listener-req-idle", w.buf + STATE_HDR_SIZE,
		  w.len - STATE_HDR_SIZE);
	sw_free(&w);
	eng_free(eng);
}
#endif
