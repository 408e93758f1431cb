// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the CM MAD codec (proto/cm_mad.c).
 *
 * Every input is used twice:
 *
 *  1. As a received MAD for cm_mad_decode(), with and without
 *     CM_DECODE_STRICT. The two verdicts must agree (strict refuses exactly
 *     what lenient accepts with CM_FAULT_RESERVED), every decoded field must
 *     equal the bits this file reads from the input on its own, and a
 *     decoded message must re-encode to the input bytes except in reserved
 *     fields, re-decode to the same struct, validate, and dump without
 *     overrunning any buffer size.
 *
 *  2. As the bytes of a struct cm_msg to encode, as a buggy caller might
 *     fill one: the encoder must keep every field to its width, and what it
 *     writes must decode (strictly) to the struct with each field so
 *     masked, whenever that masked struct is valid.
 *
 * The field positions come from cm_msg_desc(), but the bits are read and
 * masked here with code of this file's own, so a bug in cm_bits_get/set
 * shows up as a disagreement rather than being checked against itself.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cm_mad.h"
#include "fuzz.h"

/* Bit 'i' of the field at byte[bit], IBTA numbering (bit 0 is the MSB). */
static unsigned int bit_pos(const struct cm_field_desc *f, unsigned int i)
{
	return f->byte * 8u + f->bit + i;
}

static uint64_t bits_get(const uint8_t *p, const struct cm_field_desc *f)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < f->width; i++) {
		unsigned int pos = bit_pos(f, i);

		v = (v << 1) | ((p[pos / 8] >> (7 - pos % 8)) & 1);
	}
	return v;
}

static void bits_clear(uint8_t *p, const struct cm_field_desc *f)
{
	for (unsigned int i = 0; i < f->width; i++) {
		unsigned int pos = bit_pos(f, i);

		p[pos / 8] &= (uint8_t) ~(1u << (7 - pos % 8));
	}
}

static uint64_t width_mask(unsigned int width)
{
	return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

static bool kind_is_int(enum cm_field_kind kind)
{
	switch (kind) {
	case CM_KIND_u8:
	case CM_KIND_u16:
	case CM_KIND_u32:
	case CM_KIND_u64:
		return true;
	case CM_KIND_bytes:
	case CM_KIND_rsvd:
		break;
	}
	return false;
}

/* The message body inside the union: every member starts there. */
static const uint8_t *body_of(const struct cm_msg *m)
{
	return (const uint8_t *)&m->req;
}

/*
 * mask[i] has a bit set for every MAD bit that carries meaning for this
 * message type: everything but the header's reserved word (IBTA 13.4.3,
 * bytes 18-19) and the message's reserved fields.
 */
static void meaning_mask(const struct cm_msg_desc *d, uint8_t mask[CM_MAD_SIZE])
{
	memset(mask, 0xff, CM_MAD_SIZE);
	mask[18] = 0;
	mask[19] = 0;
	for (unsigned int i = 0; i < d->nfields; i++)
		if (d->fields[i].kind == CM_KIND_rsvd)
			bits_clear(mask + CM_MAD_HDR_SIZE, &d->fields[i]);
}

/*
 * cm_msg_dump() into a large buffer and into sizes that cut it short: the
 * same length each time, snprintf's truncation rules, and no byte written
 * past 'size' (a guard pattern behind the buffer; ASan covers the rest).
 */
#define DUMP_BIG 16384
#define DUMP_GUARD 32

static void check_dump_size(const struct cm_msg *m, const char *full, size_t n,
			    size_t size)
{
	char *buf = malloc(size + DUMP_GUARD);
	size_t got;

	FUZZ_CHECK(buf);
	memset(buf, 0x5a, size + DUMP_GUARD);
	got = cm_msg_dump(m, buf, size);
	FUZZ_CHECK(got == n);
	for (size_t i = size; i < size + DUMP_GUARD; i++)
		FUZZ_CHECK(buf[i] == 0x5a);
	if (size) {
		size_t want = n < size ? n : size - 1;

		FUZZ_CHECK(strnlen(buf, size) == want);
		FUZZ_CHECK(!memcmp(buf, full, want));
	}
	free(buf);
}

/*
 * Dumps cost more than everything else here together (a vsnprintf per
 * private data byte), so: the full dump, one size the input chooses, and,
 * for decoded messages, the size one short of the whole text.
 */
static void check_dump(const struct cm_msg *m, size_t some_size, bool edge)
{
	char *full = malloc(DUMP_BIG);
	size_t n;

	FUZZ_CHECK(full);
	n = cm_msg_dump(m, full, DUMP_BIG);
	FUZZ_CHECK(n < DUMP_BIG);
	FUZZ_CHECK(strlen(full) == n);
	check_dump_size(m, full, n, some_size % (n + 2));
	if (edge)
		check_dump_size(m, full, n, n);
	free(full);
}

/* A message decoded from 'mad': every invariant of a successful decode. */
static void check_decoded(const uint8_t *mad, const struct cm_msg *m,
			  const struct cm_fault *lenient)
{
	const struct cm_msg_desc *d = cm_msg_desc(m->type);
	const uint8_t *body = mad + CM_MAD_HDR_SIZE;
	uint8_t mask[CM_MAD_SIZE], out[CM_MAD_SIZE];
	struct cm_msg again, expect;
	struct cm_fault f;
	bool rsvd_set;

	FUZZ_CHECK(d);
	FUZZ_CHECK(d->attr_id == m->hdr.attr_id);
	FUZZ_CHECK(cm_msg_type_from_attr(m->hdr.attr_id) == (int)m->type);
	FUZZ_CHECK(m->hdr.method == CM_METHOD_SEND);

	/* Each field as this file reads it; note any reserved bit set. */
	rsvd_set = mad[18] || mad[19];
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *fd = &d->fields[i];

		if (kind_is_int(fd->kind))
			FUZZ_CHECK(cm_field_get(m, fd) == bits_get(body, fd));
		else if (fd->kind == CM_KIND_bytes)
			FUZZ_CHECK(!memcmp(body_of(m) + fd->offset,
					   body + fd->byte, fd->width / 8));
		else if (bits_get(body, fd))
			rsvd_set = true;
	}
	FUZZ_CHECK(rsvd_set == (lenient->code == CM_FAULT_RESERVED));
	FUZZ_CHECK(cm_msg_validate(m, &f) == 0 && f.code == CM_FAULT_NONE);

	/* Encode: the input again, reserved bits aside, and those zero. */
	FUZZ_CHECK(cm_mad_encode(m, out) == 0);
	meaning_mask(d, mask);
	for (unsigned int i = 0; i < CM_MAD_SIZE; i++) {
		FUZZ_CHECK(((mad[i] ^ out[i]) & mask[i]) == 0);
		FUZZ_CHECK((out[i] & ~mask[i]) == 0);
	}

	/* ... which decodes, even strictly, to the same struct. */
	FUZZ_CHECK(cm_mad_decode(out, sizeof(out), CM_DECODE_STRICT, &again,
				 &f) == 0);
	FUZZ_CHECK(f.code == CM_FAULT_NONE);
	memcpy(&expect, m, sizeof(expect));
	expect.hdr.rsvd = 0;
	FUZZ_CHECK(!memcmp(&expect, &again, sizeof(expect)));

	check_dump(m, mad[8], true);
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
	struct cm_msg lenient, strict;
	struct cm_fault fl, fs;
	int rl, rs;

	rl = cm_mad_decode(data, size, 0, &lenient, &fl);
	rs = cm_mad_decode(data, size, CM_DECODE_STRICT, &strict, &fs);
	FUZZ_CHECK(rl == 0 || rl == -EBADMSG);
	FUZZ_CHECK(rs == 0 || rs == -EBADMSG);
	if (size != CM_MAD_SIZE)
		FUZZ_CHECK(rl && fl.code == CM_FAULT_LENGTH);
	if (rl) {
		/* Refused leniently: refused strictly, and not for rsvd. */
		FUZZ_CHECK(rs);
		FUZZ_CHECK(fl.code != CM_FAULT_NONE &&
			   fl.code != CM_FAULT_RESERVED);
		return;
	}
	FUZZ_CHECK(fl.code == CM_FAULT_NONE || fl.code == CM_FAULT_RESERVED);
	if (fl.code == CM_FAULT_RESERVED) {
		FUZZ_CHECK(rs && fs.code == CM_FAULT_RESERVED);
		FUZZ_CHECK(fs.field && fl.field && !strcmp(fs.field, fl.field));
	} else {
		FUZZ_CHECK(rs == 0 && fs.code == CM_FAULT_NONE);
		FUZZ_CHECK(!memcmp(&lenient, &strict, sizeof(lenient)));
	}
	check_decoded(data, &lenient, &fl);
}

/* The input as a struct cm_msg that a caller filled in, rightly or not. */
static void fuzz_encode(const uint8_t *data, size_t size)
{
	const struct cm_msg_desc *d;
	struct cm_msg in, expect, got;
	struct cm_fault f;
	uint8_t out[CM_MAD_SIZE], out2[CM_MAD_SIZE];
	int rc;

	memset(&in, 0, sizeof(in));
	memcpy(&in, data, size < sizeof(in) ? size : sizeof(in));
	/* One past the last type too: encode and validate must refuse it. */
	in.type =
		(enum cm_msg_type)((unsigned int)in.type % (CM_MSG__COUNT + 1));
	d = cm_msg_desc(in.type);

	check_dump(&in, size, false);
	rc = cm_mad_encode(&in, out);
	if (!d) {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(cm_msg_validate(&in, &f) == -EINVAL);
		FUZZ_CHECK(f.code == CM_FAULT_TYPE);
		return;
	}
	FUZZ_CHECK(rc == 0);

	/* What decode should give: each field cut to its width. */
	cm_msg_init(&expect, in.type, in.hdr.tid);
	expect.hdr.method = in.hdr.method;
	expect.hdr.status = in.hdr.status;
	expect.hdr.class_specific = in.hdr.class_specific;
	expect.hdr.attr_mod = in.hdr.attr_mod;
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *fd = &d->fields[i];

		if (kind_is_int(fd->kind))
			cm_field_set(&expect, fd,
				     cm_field_get(&in, fd) &
					     width_mask(fd->width));
		else if (fd->kind == CM_KIND_bytes)
			memcpy((uint8_t *)&expect.req + fd->offset,
			       body_of(&in) + fd->offset, fd->width / 8);
	}

	rc = cm_mad_decode(out, sizeof(out), CM_DECODE_STRICT, &got, &f);
	if (expect.hdr.method != CM_METHOD_SEND) {
		FUZZ_CHECK(rc == -EBADMSG && f.code == CM_FAULT_METHOD);
		return;
	}
	if (cm_msg_validate(&expect, &f)) {
		FUZZ_CHECK(f.code == CM_FAULT_RANGE);
		FUZZ_CHECK(rc == -EBADMSG);
		return;
	}
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(!memcmp(&got, &expect, sizeof(got)));
	FUZZ_CHECK(cm_mad_encode(&got, out2) == 0);
	FUZZ_CHECK(!memcmp(out, out2, sizeof(out)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size);
	fuzz_encode(data, size);
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * Golden seeds: for each of the eleven messages, one with only what
 * validation requires, one with every field set (to a pattern cut to the
 * field's width), and that one again with every reserved bit set, which
 * lenient decoding accepts and strict decoding refuses.
 */
#include <ctype.h>

static void bits_fill(uint8_t *p, const struct cm_field_desc *f)
{
	for (unsigned int i = 0; i < f->width; i++) {
		unsigned int pos = bit_pos(f, i);

		p[pos / 8] |= (uint8_t)(1u << (7 - pos % 8));
	}
}

/* Fields that must hold one of a few values; the rest takes a pattern. */
static void make_valid(struct cm_msg *m)
{
	switch (m->type) {
	case CM_MSG_REQ:
		m->req.transport_type = CM_TRANSPORT_EXTENDED;
		m->req.ext_transport_type = CM_EXT_TRANSPORT_XRC;
		m->req.path_mtu = CM_MTU_4096;
		break;
	case CM_MSG_MRA:
		m->mra.message_mraed = CM_MSG_REF_OTHER;
		break;
	case CM_MSG_REJ:
		m->rej.message_rejected = CM_MSG_REF_REP;
		m->rej.ari_length = CM_REJ_ARI_SIZE;
		m->rej.reason = CM_REJ_CONSUMER_DEFINED;
		break;
	case CM_MSG_APR:
		m->apr.info_length = CM_APR_INFO_SIZE;
		m->apr.status = CM_APR_STATUS_MAX;
		break;
	case CM_MSG_SIDR_REP:
		m->sidr_rep.status = CM_SIDR_STATUS_MAX;
		m->sidr_rep.info_length = CM_SIDR_REP_INFO_SIZE;
		break;
	case CM_MSG_REP:
	case CM_MSG_RTU:
	case CM_MSG_DREQ:
	case CM_MSG_DREP:
	case CM_MSG_LAP:
	case CM_MSG_SIDR_REQ:
	case CM_MSG__COUNT:
		break;
	}
}

/* The least a message needs to validate: an MTU, a REJ reason. */
static void make_minimal(struct cm_msg *m)
{
	if (m->type == CM_MSG_REQ)
		m->req.path_mtu = CM_MTU_1024;
	if (m->type == CM_MSG_REJ)
		m->rej.reason = CM_REJ_TIMEOUT;
}

static void seed_one(const struct cm_msg *m, const char *variant,
		     const uint8_t *mad)
{
	char name[64], lower[16];
	const char *t = cm_msg_type_name(m->type);
	size_t i;

	for (i = 0; t[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)t[i]);
	lower[i] = '\0';
	snprintf(name, sizeof(name), "%s-%s.mad", lower, variant);
	fuzz_seed(name, mad, CM_MAD_SIZE);
}

void fuzz_write_seeds(void)
{
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = cm_msg_desc(t);
		struct cm_msg m;
		uint8_t mad[CM_MAD_SIZE];
		uint64_t pattern = UINT64_C(0x0123456789abcdef);

		cm_msg_init(&m, t, UINT64_C(0x1000) + t);
		make_minimal(&m);
		FUZZ_CHECK(cm_mad_encode(&m, mad) == 0);
		seed_one(&m, "minimal", mad);

		cm_msg_init(&m, t, UINT64_C(0xfeedc0de00000000) | t);
		m.hdr.status = 0x0001;
		m.hdr.attr_mod = 0x00c0ffee;
		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *fd = &d->fields[i];

			/* A different pattern per field, rotated by 11. */
			pattern = (pattern << 11) | (pattern >> 53);
			if (kind_is_int(fd->kind))
				cm_field_set(&m, fd,
					     pattern & width_mask(fd->width));
			else if (fd->kind == CM_KIND_bytes)
				for (unsigned int b = 0; b < fd->width / 8; b++)
					((uint8_t *)&m.req)[fd->offset + b] =
						(uint8_t)(i * 16 + b + 1);
		}
		make_valid(&m);
		FUZZ_CHECK(cm_mad_encode(&m, mad) == 0);
		seed_one(&m, "full", mad);

		mad[18] = 0xff;
		mad[19] = 0xff;
		for (unsigned int i = 0; i < d->nfields; i++)
			if (d->fields[i].kind == CM_KIND_rsvd)
				bits_fill(mad + CM_MAD_HDR_SIZE, &d->fields[i]);
		seed_one(&m, "rsvd", mad);
	}
}
#endif
