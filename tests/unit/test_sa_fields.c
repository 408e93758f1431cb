// SPDX-License-Identifier: MIT
/*
 * Self-test of the SA field table (sa_fields.def) through the public
 * descriptors: the rows of every record tile its bytes with no gap and no
 * overlap, kinds fit widths, names are unique and "rsvd" exactly for
 * reserved rows, the component mask constants are the row order and agree
 * with opensm's IB_PR_COMPMASK_* numbering (IBTA Table 205), and a seeded
 * round trip of every record through its encoder and decoder.
 *
 * Bit masks are computed here from (byte, bit, width) in IBTA numbering,
 * not with cm_bits_get, so the packing is held against its own model.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sa_mad.h"

#define MAX_REC 72

static const struct {
	const char *name;
	uint16_t size;
	unsigned int nrows;
} expect[SA_REC__COUNT] = {
	[SA_REC_HDR] = { "HDR", 32, 11 },
	[SA_REC_PATH_REC] = { "PATH_REC", 64, 24 },
	[SA_REC_CLASS_PORT_INFO] = { "CLASS_PORT_INFO", 72, 23 },
};

static const struct sa_rec_desc *desc(unsigned int t)
{
	const struct sa_rec_desc *d = sa_rec_desc((enum sa_rec_type)t);

	assert_non_null(d);
	assert_non_null(d->fields);
	return d;
}

static void test_records(void **state)
{
	(void)state;
	assert_int_equal(SA_REC__COUNT, 3);
	for (unsigned int t = 0; t < SA_REC__COUNT; t++) {
		assert_string_equal(desc(t)->name, expect[t].name);
		assert_int_equal(desc(t)->size, expect[t].size);
		assert_int_equal(desc(t)->nfields, expect[t].nrows);
		assert_true(desc(t)->size <= MAX_REC);
		/* The component masks are int enum constants. */
		assert_true(desc(t)->nfields < 31);
	}
	assert_int_equal(SA_HDR_SIZE, 32);
	assert_int_equal(SA_PATH_REC_SIZE, 64);
	assert_int_equal(SA_CLASS_PORT_INFO_SIZE, 72);
	assert_int_equal(SA_DATA_OFFSET, 56);
	assert_int_equal(SA_DATA_SIZE, 200);
	assert_int_equal(SA_PR_BIT__COUNT, 24);
	assert_int_equal(SA_CPI_BIT__COUNT, 23);
	assert_null(sa_rec_desc(SA_REC__COUNT));
}

/* Every bit of every record belongs to exactly one row. */
static void test_tiling(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < SA_REC__COUNT; t++) {
		const struct sa_rec_desc *d = desc(t);
		uint8_t owner[MAX_REC * 8];

		memset(owner, 0xff, sizeof(owner));
		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];

			assert_true(f->bit < 8);
			assert_true(f->width > 0 && f->width <= 128);
			for (unsigned int b = 0; b < f->width; b++) {
				unsigned int pos = f->byte * 8u + f->bit + b;

				if (pos >= d->size * 8u)
					fail_msg("%s.%s runs past the record",
						 d->name, f->name);
				if (owner[pos] != 0xff)
					fail_msg("%s.%s overlaps %s", d->name,
						 f->name,
						 d->fields[owner[pos]].name);
				owner[pos] = (uint8_t)i;
			}
			/* Rows are in wire order (the mask numbering). */
			if (i > 0) {
				const struct cm_field_desc *g =
					&d->fields[i - 1];

				assert_true(g->byte * 8u + g->bit + g->width ==
					    f->byte * 8u + f->bit);
			}
		}
		for (unsigned int pos = 0; pos < d->size * 8u; pos++)
			if (owner[pos] == 0xff)
				fail_msg("%s: bit %u.%u belongs to no row",
					 d->name, pos / 8, pos % 8);
	}
}

static void test_names_kinds(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < SA_REC__COUNT; t++) {
		const struct sa_rec_desc *d = desc(t);

		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];
			bool rsvd = f->kind == CM_KIND_rsvd;
			unsigned int lo = 0, hi = 0;

			if ((strncmp(f->name, "rsvd", 4) == 0) != rsvd)
				fail_msg("%s.%s: name and kind disagree",
					 d->name, f->name);
			for (unsigned int j = i + 1; j < d->nfields; j++)
				if (!strcmp(f->name, d->fields[j].name))
					fail_msg("%s: %s twice", d->name,
						 f->name);
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
				assert_int_equal(f->bit, 0);
				assert_int_equal(f->width % 8, 0);
				lo = hi = f->width;
				break;
			case CM_KIND_rsvd:
				lo = 1, hi = 128;
				break;
			}
			if (f->width < lo || f->width > hi)
				fail_msg(
					"%s.%s: width %u does not fit its kind",
					d->name, f->name, f->width);
		}
	}
}

/*
 * IBTA Table 205 as opensm's ib_types.h numbers it (IB_PR_COMPMASK_*):
 * the generated constants must say the same, row by row.
 */
static void test_path_rec_comp_mask(void **state)
{
	static const struct {
		uint64_t mask;
		unsigned int bit;
		const char *field;
	} pr[] = {
		{ SA_PR_COMP_SERVICE_ID_MSB, 0, "service_id_msb" },
		{ SA_PR_COMP_SERVICE_ID_LSB, 1, "service_id_lsb" },
		{ SA_PR_COMP_DGID, 2, "dgid" },
		{ SA_PR_COMP_SGID, 3, "sgid" },
		{ SA_PR_COMP_DLID, 4, "dlid" },
		{ SA_PR_COMP_SLID, 5, "slid" },
		{ SA_PR_COMP_RAW_TRAFFIC, 6, "raw_traffic" },
		{ SA_PR_COMP_RSVD44, 7, "rsvd44" },
		{ SA_PR_COMP_FLOW_LABEL, 8, "flow_label" },
		{ SA_PR_COMP_HOP_LIMIT, 9, "hop_limit" },
		{ SA_PR_COMP_TCLASS, 10, "tclass" },
		{ SA_PR_COMP_REVERSIBLE, 11, "reversible" },
		{ SA_PR_COMP_NUMB_PATH, 12, "numb_path" },
		{ SA_PR_COMP_PKEY, 13, "pkey" },
		{ SA_PR_COMP_QOS_CLASS, 14, "qos_class" },
		{ SA_PR_COMP_SL, 15, "sl" },
		{ SA_PR_COMP_MTU_SELECTOR, 16, "mtu_selector" },
		{ SA_PR_COMP_MTU, 17, "mtu" },
		{ SA_PR_COMP_RATE_SELECTOR, 18, "rate_selector" },
		{ SA_PR_COMP_RATE, 19, "rate" },
		{ SA_PR_COMP_PLT_SELECTOR, 20, "plt_selector" },
		{ SA_PR_COMP_PACKET_LIFE_TIME, 21, "packet_life_time" },
		{ SA_PR_COMP_PREFERENCE, 22, "preference" },
	};
	const struct sa_rec_desc *d = desc(SA_REC_PATH_REC);

	(void)state;
	for (unsigned int i = 0; i < sizeof(pr) / sizeof(pr[0]); i++) {
		assert_int_equal(pr[i].mask, UINT64_C(1) << pr[i].bit);
		assert_string_equal(d->fields[pr[i].bit].name, pr[i].field);
	}
	assert_int_equal(SA_PR_COMP_SERVICE_ID, 0x3);
	assert_int_equal(SA_PR_BIT_DGID, 2);
	assert_int_equal(SA_PR_COMP_DGID | SA_PR_COMP_SGID |
				 SA_PR_COMP_NUMB_PATH,
			 0x100c);
}

/* Seeded round trip: random record bytes (reserved rows cleared) decode
 * and re-encode to themselves, field by field as the model reads them. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint8_t rnd8(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint8_t)rng_state;
}

static uint64_t model_get(const uint8_t *p, const struct cm_field_desc *f)
{
	uint64_t v = 0;

	for (unsigned int b = 0; b < f->width; b++) {
		unsigned int pos = f->byte * 8u + f->bit + b;

		v = (v << 1) | ((p[pos / 8] >> (7 - pos % 8)) & 1);
	}
	return v;
}

static void model_clear(uint8_t *p, const struct cm_field_desc *f)
{
	for (unsigned int b = 0; b < f->width; b++) {
		unsigned int pos = f->byte * 8u + f->bit + b;

		p[pos / 8] &= (uint8_t) ~(0x80u >> (pos % 8));
	}
}

static uint64_t member(const void *s, const struct cm_field_desc *f)
{
	const uint8_t *p = (const uint8_t *)s + f->offset;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;

	switch (f->kind) {
	case CM_KIND_u8:
		memcpy(&u8, p, 1);
		return u8;
	case CM_KIND_u16:
		memcpy(&u16, p, 2);
		return u16;
	case CM_KIND_u32:
		memcpy(&u32, p, 4);
		return u32;
	case CM_KIND_u64:
		memcpy(&u64, p, 8);
		return u64;
	case CM_KIND_bytes:
	case CM_KIND_rsvd:
		break;
	}
	return 0;
}

static void round_trip(unsigned int t, const uint8_t *in)
{
	const struct sa_rec_desc *d = desc(t);
	union {
		struct sa_hdr hdr;
		struct sa_path_rec pr;
		struct sa_class_port_info cpi;
	} s;
	uint8_t out[MAX_REC];
	const char *rsvd = NULL;

	memset(&s, 0, sizeof(s));
	memset(out, 0xa5, sizeof(out));
	switch ((enum sa_rec_type)t) {
	case SA_REC_HDR:
		rsvd = sa_hdr_decode(in, &s.hdr);
		sa_hdr_encode(&s.hdr, out);
		break;
	case SA_REC_PATH_REC:
		rsvd = sa_path_rec_decode(in, &s.pr);
		sa_path_rec_encode(&s.pr, out);
		break;
	case SA_REC_CLASS_PORT_INFO:
		rsvd = sa_class_port_info_decode(in, &s.cpi);
		sa_class_port_info_encode(&s.cpi, out);
		break;
	case SA_REC__COUNT:
		fail();
	}
	assert_null(rsvd);
	assert_memory_equal(in, out, d->size);
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];

		if (f->kind == CM_KIND_bytes)
			assert_memory_equal((const uint8_t *)&s + f->offset,
					    in + f->byte, f->width / 8);
		else if (f->kind != CM_KIND_rsvd)
			assert_int_equal(member(&s, f), model_get(in, f));
	}
}

static void test_round_trip(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < SA_REC__COUNT; t++) {
		const struct sa_rec_desc *d = desc(t);

		for (unsigned int n = 0; n < 200; n++) {
			uint8_t in[MAX_REC];

			for (unsigned int i = 0; i < d->size; i++)
				in[i] = n == 0 ? 0xff : rnd8();
			for (unsigned int i = 0; i < d->nfields; i++)
				if (d->fields[i].kind == CM_KIND_rsvd)
					model_clear(in, &d->fields[i]);
			round_trip(t, in);
		}
	}
}

/* A reserved row set on its own is reported by its name. */
static void test_reserved_named(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < SA_REC__COUNT; t++) {
		const struct sa_rec_desc *d = desc(t);

		for (unsigned int i = 0; i < d->nfields; i++) {
			const struct cm_field_desc *f = &d->fields[i];
			uint8_t in[MAX_REC] = { 0 };
			union {
				struct sa_hdr hdr;
				struct sa_path_rec pr;
				struct sa_class_port_info cpi;
			} s;
			unsigned int pos = f->byte * 8u + f->bit + f->width - 1;
			const char *r = NULL;

			if (f->kind != CM_KIND_rsvd)
				continue;
			in[pos / 8] |= (uint8_t)(0x80u >> (pos % 8));
			switch ((enum sa_rec_type)t) {
			case SA_REC_HDR:
				r = sa_hdr_decode(in, &s.hdr);
				break;
			case SA_REC_PATH_REC:
				r = sa_path_rec_decode(in, &s.pr);
				break;
			case SA_REC_CLASS_PORT_INFO:
				r = sa_class_port_info_decode(in, &s.cpi);
				break;
			case SA_REC__COUNT:
				fail();
			}
			assert_non_null(r);
			assert_string_equal(r, f->name);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_tiling),
		cmocka_unit_test(test_names_kinds),
		cmocka_unit_test(test_path_rec_comp_mask),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_reserved_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
