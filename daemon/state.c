// SPDX-License-Identifier: MIT
/*
 * The handoff state's container (state.h): a writer that frames records
 * and a reader that trusts nothing it has not checked.
 */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cm_engine.h"
#include "util.h"

static const char state_magic[8] = { 'C', 'M', 'D', 'S', 'T', 'A', 'T', 'E' };

static void le_put(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t le_get(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * The CRC covers the header from its record count on (count, boot id,
 * time, reserved) and the payload; what comes before it is checked field
 * by field.
 */
static uint32_t state_crc(const uint8_t *h, const uint8_t *payload, size_t plen)
{
	uLong crc = crc32(0, h + 28, STATE_HDR_SIZE - 28);

	return (uint32_t)crc32(crc, payload, (uInt)plen);
}

/* ------------------------------------------------------------------ */
/* Writing */

static uint8_t *sw_room(struct state_w *w, size_t n)
{
	if (w->err)
		return NULL;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 1 << 16;
		uint8_t *b;

		while (cap < w->len + n)
			cap *= 2;
		b = realloc(w->buf, cap);
		if (!b) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->buf = b;
		w->cap = cap;
	}
	w->len += n;
	return w->buf + w->len - n;
}

void sw_init(struct state_w *w)
{
	memset(w, 0, sizeof(*w));
	if (sw_room(w, STATE_HDR_SIZE))
		memset(w->buf, 0, STATE_HDR_SIZE);
}

void sw_free(struct state_w *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

void sw_rec_begin(struct state_w *w, enum state_rec_type type)
{
	uint8_t *p;

	w->rec = w->len;
	p = sw_room(w, 8);
	if (!p)
		return;
	le_put(p, type, 2);
	le_put(p + 2, 0, 2);
	le_put(p + 4, 0, 4);
}

void sw_rec_end(struct state_w *w)
{
	if (w->err)
		return;
	le_put(w->buf + w->rec + 4, w->len - w->rec - 8, 4);
	w->nrec++;
}

#define SW_INT(name, type, n)                                                  \
	void sw_##name(struct state_w *w, type v)                              \
	{                                                                      \
		uint8_t *p = sw_room(w, n);                                    \
                                                                               \
		if (p)                                                         \
			le_put(p, v, n);                                       \
	}
SW_INT(u8, uint8_t, 1)
SW_INT(u16, uint16_t, 2)
SW_INT(u32, uint32_t, 4)
SW_INT(u64, uint64_t, 8)
#undef SW_INT

void sw_bytes(struct state_w *w, const void *src, size_t n)
{
	uint8_t *p = sw_room(w, n);

	if (p && n)
		memcpy(p, src, n);
}

void sw_var(struct state_w *w, const void *src, size_t n)
{
	sw_u32(w, (uint32_t)n);
	sw_bytes(w, src, n);
}

void sw_counters(struct state_w *w, enum state_counters which, uint16_t port,
		 const void *p, size_t n)
{
	sw_rec_begin(w, STATE_REC_COUNTERS);
	sw_u16(w, (uint16_t)which);
	sw_u16(w, port);
	sw_var(w, p, n);
	sw_rec_end(w);
}

int sw_finish(struct state_w *w, uint64_t now_ns)
{
	uint8_t *h = w->buf;
	uint8_t boot[STATE_BOOT_ID_SIZE];
	size_t plen;
	int rc;

	if (w->err)
		return w->err;
	rc = state_boot_id(boot);
	if (rc)
		return rc;
	plen = w->len - STATE_HDR_SIZE;
	memcpy(h, state_magic, sizeof(state_magic));
	le_put(h + 8, STATE_VERSION, 4);
	le_put(h + 12, STATE_HDR_SIZE, 4);
	le_put(h + 16, plen, 8);
	le_put(h + 28, w->nrec, 4);
	memcpy(h + 32, boot, sizeof(boot));
	le_put(h + 48, now_ns, 8);
	le_put(h + 56, 0, 8);
	le_put(h + 24, state_crc(h, w->buf + STATE_HDR_SIZE, plen), 4);
	return 0;
}

void state_put_addr(struct state_w *w, const struct eng_addr *o)
{
#define STATE_ADDR(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
}

void state_put_terms(struct state_w *w, const struct eng_terms *o)
{
#define STATE_TERMS(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
}

/* ------------------------------------------------------------------ */
/* Reading */

void sr_fail(struct state_r *r, const char *why)
{
	if (!r->why)
		r->why = why;
	r->p = r->end;
}

static const uint8_t *sr_take(struct state_r *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->why)
		return NULL;
	if ((size_t)(r->end - r->p) < n) {
		sr_fail(r, "record shorter than its fields");
		return NULL;
	}
	r->p += n;
	return p;
}

#define SR_INT(name, type, n)                                                  \
	type sr_##name(struct state_r *r)                                      \
	{                                                                      \
		const uint8_t *p = sr_take(r, n);                              \
                                                                               \
		return p ? (type)le_get(p, n) : 0;                             \
	}
SR_INT(u8, uint8_t, 1)
SR_INT(u16, uint16_t, 2)
SR_INT(u32, uint32_t, 4)
SR_INT(u64, uint64_t, 8)
#undef SR_INT

bool sr_bool(struct state_r *r)
{
	uint8_t v = sr_u8(r);

	if (v > 1)
		sr_fail(r, "a boolean field is neither 0 nor 1");
	return v == 1;
}

void sr_bytes(struct state_r *r, void *dst, size_t n)
{
	const uint8_t *p = sr_take(r, n);

	if (p)
		memcpy(dst, p, n);
	else
		memset(dst, 0, n);
}

void sr_str(struct state_r *r, char *dst, size_t n)
{
	sr_bytes(r, dst, n);
	if (!memchr(dst, 0, n)) {
		sr_fail(r, "a string field is not NUL-terminated");
		dst[0] = 0;
	}
}

const uint8_t *sr_var(struct state_r *r, size_t *n, size_t max)
{
	uint32_t len = sr_u32(r);
	const uint8_t *p;

	*n = 0;
	if (len > max) {
		sr_fail(r, "a variable field is longer than it may be");
		return NULL;
	}
	p = len ? sr_take(r, len) : NULL;
	/* A record too short for it: nothing (the refusal is in r). */
	*n = p ? len : 0;
	return p;
}

int sr_end(struct state_r *r, const char **why)
{
	if (!r->why && r->p != r->end)
		r->why = "record longer than its fields";
	if (r->why) {
		*why = r->why;
		return -EINVAL;
	}
	return 0;
}

int sr_counters(struct state_r *r, struct state_counters_rec *c,
		const char **why)
{
	c->which = (enum state_counters)sr_u16(r);
	c->port = sr_u16(r);
	c->p = sr_var(r, &c->n, 1 << 20);
	return sr_end(r, why);
}

void state_counters_copy(void *dst, size_t size,
			 const struct state_counters_rec *c)
{
	memcpy(dst, c->p, c->n < size ? c->n : size);
}

void state_get_addr(struct state_r *r, struct eng_addr *o)
{
#define STATE_ADDR(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
}

void state_get_terms(struct state_r *r, struct eng_terms *o)
{
#define STATE_TERMS(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
}

int state_open(struct state_file *f, const void *buf, size_t len,
	       unsigned int flags, const char **why)
{
	const uint8_t *h = buf;
	uint8_t boot[STATE_BOOT_ID_SIZE];
	uint64_t plen;

	memset(f, 0, sizeof(*f));
#define REFUSE(text)                                                           \
	do {                                                                   \
		*why = text;                                                   \
		return -EINVAL;                                                \
	} while (0)
	if (len < STATE_HDR_SIZE)
		REFUSE("shorter than a header");
	if (memcmp(h, state_magic, sizeof(state_magic)))
		REFUSE("not a cmd state (no CMDSTATE magic)");
	f->version = (uint32_t)le_get(h + 8, 4);
	if (f->version == 0 || f->version > STATE_VERSION)
		REFUSE("a format version this daemon does not know");
	if (le_get(h + 12, 4) != STATE_HDR_SIZE)
		REFUSE("header size is not 64");
	plen = le_get(h + 16, 8);
	if (plen != len - STATE_HDR_SIZE)
		REFUSE("payload size is not the file's (truncated?)");
	if (le_get(h + 56, 8))
		REFUSE("reserved header bytes not zero");
	if (le_get(h + 24, 4) !=
	    state_crc(h, h + STATE_HDR_SIZE, len - STATE_HDR_SIZE))
		REFUSE("CRC mismatch (corrupt)");
	if (!(flags & STATE_OPEN_ANY_BOOT)) {
		if (state_boot_id(boot))
			REFUSE("cannot read this boot's id");
		if (memcmp(h + 32, boot, sizeof(boot)))
			REFUSE("written before the last reboot");
	}
#undef REFUSE
	f->buf = h;
	f->len = len;
	f->nrec = (uint32_t)le_get(h + 28, 4);
	f->saved_ns = le_get(h + 48, 8);
	f->off = STATE_HDR_SIZE;
	return 0;
}

int state_next(struct state_file *f, uint16_t *type, struct state_r *r,
	       const char **why)
{
	const uint8_t *p = f->buf + f->off;
	uint64_t blen;

	if (f->off == f->len) {
		if (f->seen != f->nrec) {
			*why = "the header's record count is not the file's";
			return -EINVAL;
		}
		return 0;
	}
	if (f->len - f->off < 8) {
		*why = "a record header overruns the payload";
		return -EINVAL;
	}
	*type = (uint16_t)le_get(p, 2);
	blen = le_get(p + 4, 4);
	if (le_get(p + 2, 2)) {
		*why = "a record header's reserved bytes are not zero";
		return -EINVAL;
	}
	if (blen > f->len - f->off - 8) {
		*why = "a record overruns the payload";
		return -EINVAL;
	}
	r->p = p + 8;
	r->end = r->p + blen;
	r->version = f->version;
	r->why = NULL;
	f->off += 8 + blen;
	f->seen++;
	return 1;
}

const char *state_rec_name(unsigned int type)
{
	switch (type) {
#define STATE_REC(NAME, code)                                                  \
	case code:                                                             \
		return #NAME;
#include "state_fields.def"
	}
	return "unknown";
}

int state_boot_id(uint8_t id[STATE_BOOT_ID_SIZE])
{
	char text[64];
	ssize_t n;
	size_t k = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	text[n] = 0;
	/* 8-4-4-4-12 hex digits. */
	for (ssize_t i = 0; i < n && k < 2 * STATE_BOOT_ID_SIZE; i++) {
		char ch = text[i];
		int v;

		if (ch >= '0' && ch <= '9')
			v = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v = ch - 'a' + 10;
		else
			continue;
		if (k % 2 == 0)
			id[k / 2] = (uint8_t)(v << 4);
		else
			id[k / 2] |= (uint8_t)v;
		k++;
	}
	return k == 2 * STATE_BOOT_ID_SIZE ? 0 : -EIO;
}
