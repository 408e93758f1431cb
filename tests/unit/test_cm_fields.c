// SPDX-License-Identifier: MIT
/*
 * Self-test of the CM field table (cm_fields.def) through the public
 * descriptors: every field lands on exactly its own bits, the fields of a
 * message tile its 232 bytes with no gap and no overlap, kinds fit widths,
 * names and attribute ids are unique; then a seeded random round trip of
 * every message type through encode and decode.
 *
 * The bit masks are computed here from (byte, bit, width) with IBTA bit
 * numbering (bit 0 is the most significant bit of its byte), not by
 * cm_bits_get, so cm_bits_set is checked against an independent model.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cm_mad.h"

#define H CM_MAD_HDR_SIZE
#define MSG_BITS (CM_MSG_SIZE * 8)

/* What the IBTA tables and DESIGN.md say each message is. */
static const struct {
	const char *name;
	uint16_t attr_id;
	uint16_t table;
	size_t private_data;
	size_t struct_size;
} expect[CM_MSG__COUNT] = {
	[CM_MSG_REQ] = { "REQ", 0x0010, 106, CM_REQ_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_req) },
	[CM_MSG_MRA] = { "MRA", 0x0011, 107, CM_MRA_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_mra) },
	[CM_MSG_REJ] = { "REJ", 0x0012, 108, CM_REJ_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_rej) },
	[CM_MSG_REP] = { "REP", 0x0013, 110, CM_REP_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_rep) },
	[CM_MSG_RTU] = { "RTU", 0x0014, 111, CM_RTU_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_rtu) },
	[CM_MSG_DREQ] = { "DREQ", 0x0015, 112, CM_DREQ_PRIVATE_DATA_SIZE,
			  sizeof(struct cm_dreq) },
	[CM_MSG_DREP] = { "DREP", 0x0016, 113, CM_DREP_PRIVATE_DATA_SIZE,
			  sizeof(struct cm_drep) },
	[CM_MSG_LAP] = { "LAP", 0x0019, 115, CM_LAP_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_lap) },
	[CM_MSG_APR] = { "APR", 0x001a, 116, CM_APR_PRIVATE_DATA_SIZE,
			 sizeof(struct cm_apr) },
	[CM_MSG_SIDR_REQ] = { "SIDR_REQ", 0x0017, 119,
			      CM_SIDR_REQ_PRIVATE_DATA_SIZE,
			      sizeof(struct cm_sidr_req) },
	[CM_MSG_SIDR_REP] = { "SIDR_REP", 0x0018, 120,
			      CM_SIDR_REP_PRIVATE_DATA_SIZE,
			      sizeof(struct cm_sidr_rep) },
};

static const struct cm_msg_desc *desc(unsigned int type)
{
	const struct cm_msg_desc *d = cm_msg_desc((enum cm_msg_type)type);

	assert_non_null(d);
	assert_non_null(d->fields);
	assert_true(d->nfields > 0);
	return d;
}

/* Bits of a field within the message, the slow and obvious way. */
static void field_mask(const struct cm_field_desc *f, uint8_t mask[CM_MSG_SIZE])
{
	memset(mask, 0, CM_MSG_SIZE);
	for (unsigned int i = 0; i < f->width; i++) {
		unsigned int pos = f->byte * 8u + f->bit + i;

		mask[pos / 8] |= (uint8_t)(0x80u >> (pos % 8));
	}
}

static uint64_t width_ones(unsigned int width)
{
	return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

static size_t kind_size(const struct cm_field_desc *f)
{
	switch (f->kind) {
	case CM_KIND_u8:
		return 1;
	case CM_KIND_u16:
		return 2;
	case CM_KIND_u32:
		return 4;
	case CM_KIND_u64:
		return 8;
	case CM_KIND_bytes:
		return f->width / 8;
	case CM_KIND_rsvd:
		return 0;
	}
	return 0;
}

static bool kind_is_int(enum cm_field_kind k)
{
	switch (k) {
	case CM_KIND_u8:
	case CM_KIND_u16:
	case CM_KIND_u32:
	case CM_KIND_u64:
		return true;
	case CM_KIND_bytes:
	case CM_KIND_rsvd:
		return false;
	}
	return false;
}

static void test_messages(void **state)
{
	(void)state;
	assert_int_equal(CM_MSG__COUNT, 11);
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);

		assert_string_equal(d->name, expect[t].name);
		assert_string_equal(cm_msg_type_name(t), expect[t].name);
		assert_int_equal(d->attr_id, expect[t].attr_id);
		assert_int_equal(d->ibta_table, expect[t].table);
	}
	assert_null(cm_msg_desc(CM_MSG__COUNT));
	assert_null(cm_msg_desc((enum cm_msg_type) - 1));
	assert_string_equal(cm_msg_type_name(CM_MSG__COUNT), "?");
}

/* Attribute ids are unique and map back to their type; nothing else does. */
static void test_attr_ids(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (unsigned int u = t + 1; u < CM_MSG__COUNT; u++)
			assert_int_not_equal(desc(t)->attr_id,
					     desc(u)->attr_id);
		assert_int_equal(cm_msg_type_from_attr(desc(t)->attr_id),
				 (int)t);
	}
	for (unsigned int attr = 0; attr <= 0xffff; attr++) {
		int t = cm_msg_type_from_attr((uint16_t)attr);

		if (attr >= 0x0010 && attr <= 0x001a) {
			assert_true(t >= 0 && t < CM_MSG__COUNT);
			assert_int_equal(desc((unsigned int)t)->attr_id, attr);
		} else {
			assert_int_equal(t, -1);
		}
	}
}

/* Names are present, unique, and "rsvd" exactly for reserved fields. */
static void test_names(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);

		for (unsigned int i = 0; i < d->nfields; i++) {
			const char *n = d->fields[i].name;
			bool rsvd = d->fields[i].kind == CM_KIND_rsvd;

			assert_non_null(n);
			assert_true(n[0] != '\0');
			if ((strncmp(n, "rsvd", 4) == 0) != rsvd)
				fail_msg("%s.%s: name and kind disagree on "
					 "reserved",
					 d->name, n);
			for (unsigned int j = i + 1; j < d->nfields; j++)
				if (!strcmp(n, d->fields[j].name))
					fail_msg("%s: field name %s twice",
						 d->name, n);
		}
	}
}

/*
 * Widths fit their kinds, and each integer field uses the smallest kind
 * that holds it (a 24-bit QPN is a u32, a 16-bit LID a u16). Byte strings
 * start on a byte and are whole bytes.
 */
static void test_kinds(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);

		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];
			unsigned int lo = 0, hi = 0;

			assert_true(f->width >= 1);
			assert_true(f->bit < 8);
			switch (f->kind) {
			case CM_KIND_u8:
				lo = 1, hi = 8;
				break;
			case CM_KIND_u16:
				lo = 9, hi = 16;
				break;
			case CM_KIND_u32:
				lo = 17, hi = 32;
				break;
			case CM_KIND_u64:
				lo = 33, hi = 64;
				break;
			case CM_KIND_bytes:
				lo = 8, hi = MSG_BITS;
				if (f->bit != 0 || f->width % 8 != 0)
					fail_msg("%s.%s: byte string at "
						 "%u[%u] width %u is not "
						 "byte aligned",
						 d->name, f->name, f->byte,
						 f->bit, f->width);
				break;
			case CM_KIND_rsvd:
				lo = 1, hi = MSG_BITS;
				break;
			}
			if (f->width < lo || f->width > hi)
				fail_msg("%s.%s: width %u does not fit its "
					 "kind (%u..%u)",
					 d->name, f->name, f->width, lo, hi);
		}
	}
}

/*
 * The fields tile the message: listed in wire order, each starting where
 * the previous one ended, no overlap, together exactly 232 * 8 bits.
 */
static void test_tiling(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);
		uint8_t used[CM_MSG_SIZE] = { 0 };
		unsigned int next = 0, total = 0;

		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];
			unsigned int start = f->byte * 8u + f->bit;
			uint8_t mask[CM_MSG_SIZE];

			if (start + f->width > MSG_BITS)
				fail_msg("%s.%s runs past byte 232", d->name,
					 f->name);
			if (start != next)
				fail_msg("%s.%s starts at bit %u, previous "
					 "field ended at bit %u",
					 d->name, f->name, start, next);
			next = start + f->width;
			total += f->width;
			field_mask(f, mask);
			for (unsigned int b = 0; b < CM_MSG_SIZE; b++) {
				if (used[b] & mask[b])
					fail_msg("%s.%s overlaps another "
						 "field in byte %u",
						 d->name, f->name, b);
				used[b] |= mask[b];
			}
		}
		assert_int_equal(total, MSG_BITS);
		for (unsigned int b = 0; b < CM_MSG_SIZE; b++)
			if (used[b] != 0xff)
				fail_msg("%s: byte %u bits 0x%02x belong to no "
					 "field",
					 d->name, b, used[b] ^ 0xffu);
	}
}

/*
 * All ones into a zeroed message sets exactly the field's bits, and reads
 * back as all ones; all zeros into a message of ones clears exactly them.
 */
/*
 * cm_bits_get/set at every start bit and width, against a bit-by-bit model
 * of the same big-endian numbering: the value lands in exactly its bits,
 * the bits around it keep their values, and it reads back. Covers the
 * fields that need nine bytes (a wide field at an odd bit), which no
 * message table has.
 */
static unsigned int model_bit(const uint8_t *buf, unsigned int pos)
{
	return (buf[pos / 8] >> (7 - pos % 8)) & 1;
}

static void test_bits_model(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;

	(void)state;
	for (unsigned int start = 0; start < 24; start++) {
		for (unsigned int w = 0; w <= 64; w++) {
			uint8_t buf[16], before[16];
			uint64_t v, got = 0;

			for (unsigned int i = 0; i < sizeof(buf); i++) {
				seed = seed * 6364136223846793005u + 1;
				buf[i] = (uint8_t)(seed >> 56);
			}
			seed = seed * 6364136223846793005u + 1;
			v = seed & width_ones(w);
			memcpy(before, buf, sizeof(buf));
			cm_bits_set(buf, start / 8, start % 8, w, v);
			for (unsigned int pos = 0; pos < 8 * sizeof(buf);
			     pos++) {
				unsigned int want;

				if (pos < start || pos >= start + w)
					want = model_bit(before, pos);
				else
					want = (v >> (start + w - 1 - pos)) & 1;
				if (model_bit(buf, pos) != want)
					fail_msg(
						"set start %u width %u: bit %u",
						start, w, pos);
			}
			for (unsigned int pos = start; pos < start + w; pos++)
				got = (got << 1) | model_bit(buf, pos);
			assert_int_equal(got, v);
			assert_int_equal(
				cm_bits_get(buf, start / 8, start % 8, w), v);
			/* A start bit past 7 names a later byte. */
			assert_int_equal(cm_bits_get(buf, 0, start, w), v);
		}
	}
}

static void test_set_exact_bits(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);

		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];
			uint8_t buf[CM_MSG_SIZE], mask[CM_MSG_SIZE];
			unsigned int w = f->width, off = 0;

			field_mask(f, mask);
			/* cm_bits_* take at most 64 bits: walk wide fields. */
			memset(buf, 0, sizeof(buf));
			while (off < w) {
				unsigned int n = w - off > 64 ? 64 : w - off;
				unsigned int pos = f->byte * 8u + f->bit + off;

				cm_bits_set(buf, pos / 8, pos % 8, n,
					    UINT64_MAX);
				assert_int_equal(
					cm_bits_get(buf, pos / 8, pos % 8, n),
					width_ones(n));
				off += n;
			}
			if (memcmp(buf, mask, sizeof(buf)))
				fail_msg("%s.%s: all ones set the wrong bits",
					 d->name, f->name);

			memset(buf, 0xff, sizeof(buf));
			for (off = 0; off < w; off += 64) {
				unsigned int n = w - off > 64 ? 64 : w - off;
				unsigned int pos = f->byte * 8u + f->bit + off;

				cm_bits_set(buf, pos / 8, pos % 8, n, 0);
			}
			for (unsigned int b = 0; b < CM_MSG_SIZE; b++)
				if ((buf[b] ^ mask[b]) != 0xff)
					fail_msg("%s.%s: all zeros cleared "
						 "the wrong bits in byte %u",
						 d->name, f->name, b);
		}
	}
}

/*
 * Struct members: each non-reserved field has one, inside its message
 * struct, not overlapping another; the private data is where DESIGN.md
 * says, the last field, of the documented size.
 */
static void test_members(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);
		uint8_t used[sizeof(struct cm_msg)] = { 0 };
		const struct cm_field_desc *last = &d->fields[d->nfields - 1];

		assert_true(expect[t].struct_size <= sizeof(used));
		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];
			size_t n = kind_size(f);

			if (f->kind == CM_KIND_rsvd)
				continue;
			if (f->offset + n > expect[t].struct_size)
				fail_msg("%s.%s: member offset %u past the "
					 "struct",
					 d->name, f->name, f->offset);
			for (size_t k = f->offset; k < f->offset + n; k++) {
				if (used[k])
					fail_msg("%s.%s: member overlaps "
						 "another",
						 d->name, f->name);
				used[k] = 1;
			}
		}
		assert_string_equal(last->name, "private_data");
		assert_int_equal(last->kind, CM_KIND_bytes);
		assert_int_equal(last->width / 8, expect[t].private_data);
		assert_int_equal(last->byte + last->width / 8, CM_MSG_SIZE);
	}
}

/* xorshift64*: a fixed seed makes every run test the same messages. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* Bring the enumerated fields into the range the validator accepts. */
static void make_valid(struct cm_msg *m)
{
	switch (m->type) {
	case CM_MSG_REQ:
		m->req.path_mtu = (uint8_t)(CM_MTU_256 + m->req.path_mtu % 5);
		if (m->req.transport_type == CM_TRANSPORT_EXTENDED)
			m->req.ext_transport_type = CM_EXT_TRANSPORT_XRC;
		break;
	case CM_MSG_MRA:
		m->mra.message_mraed %= 3;
		break;
	case CM_MSG_REJ:
		m->rej.message_rejected %= 3;
		m->rej.ari_length %= CM_REJ_ARI_SIZE + 1;
		m->rej.reason =
			(uint16_t)(1 + m->rej.reason % CM_REJ_REASON_MAX);
		break;
	case CM_MSG_APR:
		m->apr.info_length %= CM_APR_INFO_SIZE + 1;
		m->apr.status %= CM_APR_STATUS_MAX + 1;
		break;
	case CM_MSG_SIDR_REP:
		m->sidr_rep.status %= CM_SIDR_STATUS_MAX + 1;
		m->sidr_rep.info_length %= CM_SIDR_REP_INFO_SIZE + 1;
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

/* A byte string field (GIDs, private data) gets random bytes. */
static void random_bytes(struct cm_msg *m, const struct cm_field_desc *f)
{
	uint8_t *p = (uint8_t *)&m->req + f->offset;

	for (size_t i = 0; i < f->width / 8u; i++)
		p[i] = (uint8_t)rng();
}

static void random_msg(unsigned int type, struct cm_msg *m, bool masked)
{
	const struct cm_msg_desc *d = desc(type);

	cm_msg_init(m, type, rng());
	m->hdr.status = (uint16_t)rng();
	m->hdr.class_specific = (uint16_t)rng();
	m->hdr.attr_mod = (uint32_t)rng();
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];
		uint64_t v = rng();

		if (masked && kind_is_int(f->kind))
			v &= width_ones(f->width);
		if (f->kind == CM_KIND_bytes)
			random_bytes(m, f);
		else
			cm_field_set(m, f, v);
	}
	make_valid(m);
}

static void assert_same_fields(const struct cm_msg *a, const struct cm_msg *b)
{
	const struct cm_msg_desc *d = desc(a->type);

	assert_int_equal(a->type, b->type);
	assert_memory_equal(&a->hdr, &b->hdr, sizeof(a->hdr));
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];
		size_t n = kind_size(f);

		if (n && memcmp((const uint8_t *)&a->req + f->offset,
				(const uint8_t *)&b->req + f->offset, n))
			fail_msg("%s.%s differs after the round trip", d->name,
				 f->name);
	}
}

/* 1000 random messages per type: encode -> decode -> the same values. */
static void test_random_round_trip(void **state)
{
	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (unsigned int n = 0; n < 1000; n++) {
			struct cm_msg in, out;
			struct cm_fault f;
			uint8_t mad[CM_MAD_SIZE], again[CM_MAD_SIZE];

			memset(&in, 0, sizeof(in));
			random_msg(t, &in, true);
			assert_int_equal(cm_mad_encode(&in, mad), 0);
			memset(&out, 0xa5, sizeof(out));
			if (cm_mad_decode(mad, sizeof(mad), CM_DECODE_STRICT,
					  &out, &f))
				fail_msg("%s #%u: decode refused: %s (%s)",
					 cm_msg_type_name(t), n,
					 cm_fault_str(f.code),
					 f.field ? f.field : "-");
			assert_int_equal(f.code, CM_FAULT_NONE);
			assert_same_fields(&in, &out);
			assert_int_equal(cm_mad_encode(&out, again), 0);
			assert_memory_equal(mad, again, CM_MAD_SIZE);
		}
	}
}

/*
 * A member holding more bits than its field is cut to the field's width:
 * encoding the unmasked struct gives the same bytes as the masked one, so
 * an oversized value never spills into a neighbouring field.
 */
static void test_encode_masks(void **state)
{
	(void)state;
	rng_state = 0x0123456789abcdefULL;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		const struct cm_msg_desc *d = desc(t);

		for (unsigned int n = 0; n < 100; n++) {
			struct cm_msg raw, cut;
			uint8_t a[CM_MAD_SIZE], b[CM_MAD_SIZE];

			memset(&raw, 0, sizeof(raw));
			random_msg(t, &raw, false);
			cut = raw;
			for (unsigned int i = 0; i < d->nfields; i++) {
				const struct cm_field_desc *f = &d->fields[i];

				if (kind_is_int(f->kind))
					cm_field_set(
						&cut, f,
						cm_field_get(&cut, f) &
							width_ones(f->width));
			}
			assert_int_equal(cm_mad_encode(&raw, a), 0);
			assert_int_equal(cm_mad_encode(&cut, b), 0);
			assert_memory_equal(a, b, CM_MAD_SIZE);
		}
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_attr_ids),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_tiling),
		cmocka_unit_test(test_set_exact_bits),
		cmocka_unit_test(test_bits_model),
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_random_round_trip),
		cmocka_unit_test(test_encode_masks),
	};

	return cmocka_run_group_tests_name("cm_fields", tests, NULL, NULL);
}
