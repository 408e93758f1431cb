// SPDX-License-Identifier: MIT
/*
 * Malformed-input corpus for cm_mad_decode: every way a received MAD can be
 * refused, each case checking -EBADMSG and the exact struct cm_fault (code,
 * field, value).
 *
 * Bad bytes are poked straight into the wire image at the IBTA Tables
 * 106-120 positions (byte, and a mask for sub-byte fields) rather than
 * through the generated accessors, so the corpus does not trust the field
 * table it exercises. The reserved-bit map below is likewise written from
 * the IBTA tables; test_reserved_map flips every bit of every message and
 * checks that exactly the bits in this map are reported as reserved.
 *
 * Truncated MADs live in heap buffers of exactly their length so that ASan
 * reports any read past the end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cm_mad.h"

#define H CM_MAD_HDR_SIZE
#define ANY_VALUE UINT64_MAX

/*
 * A valid MAD of each type to break. Fields are non-zero where the spec
 * allows any value, so that flipping a bit produces new values too.
 */
static void base_msg(enum cm_msg_type type, struct cm_msg *m)
{
	cm_msg_init(m, type, 0x1122334455667788ULL);
	switch (type) {
	case CM_MSG_REQ:
		m->req.local_comm_id = 0x01020304;
		m->req.service_id = 0x1000000000000001ULL;
		m->req.local_qpn = 0x000abc;
		m->req.transport_type = CM_TRANSPORT_RC;
		m->req.path_mtu = CM_MTU_1024;
		m->req.primary_local_lid = 0x0001;
		m->req.private_data[0] = 0x5a;
		break;
	case CM_MSG_MRA:
		m->mra.local_comm_id = 0x01020304;
		m->mra.message_mraed = CM_MSG_REF_REQ;
		m->mra.service_timeout = 0x11;
		break;
	case CM_MSG_REJ:
		m->rej.local_comm_id = 0x01020304;
		m->rej.message_rejected = CM_MSG_REF_REP;
		m->rej.ari_length = 16;
		m->rej.reason = CM_REJ_INVALID_GID;
		break;
	case CM_MSG_REP:
		m->rep.local_comm_id = 0x01020304;
		m->rep.local_qpn = 0x000def;
		break;
	case CM_MSG_RTU:
		m->rtu.local_comm_id = 0x01020304;
		break;
	case CM_MSG_DREQ:
		m->dreq.local_comm_id = 0x01020304;
		m->dreq.remote_qpn = 0x000abc;
		break;
	case CM_MSG_DREP:
		m->drep.local_comm_id = 0x01020304;
		break;
	case CM_MSG_LAP:
		m->lap.local_comm_id = 0x01020304;
		m->lap.alt_sl = 1;
		break;
	case CM_MSG_APR:
		m->apr.local_comm_id = 0x01020304;
		m->apr.info_length = 8;
		m->apr.status = CM_APR_REJECTED;
		break;
	case CM_MSG_SIDR_REQ:
		m->sidr_req.request_id = 0x01020304;
		m->sidr_req.pkey = 0xffff;
		break;
	case CM_MSG_SIDR_REP:
		m->sidr_rep.request_id = 0x01020304;
		m->sidr_rep.status = CM_SIDR_NO_QP;
		m->sidr_rep.info_length = 8;
		break;
	case CM_MSG__COUNT:
		fail();
	}
}

static void base_mad(enum cm_msg_type type, uint8_t mad[CM_MAD_SIZE])
{
	struct cm_msg m;

	base_msg(type, &m);
	assert_int_equal(cm_mad_encode(&m, mad), 0);
}

/* Fail naming the caller's line, not the helper's. */
#define fail_at(file, line, ...)                                               \
	do {                                                                   \
		print_error("%s:%d: ", file, line);                            \
		fail_msg(__VA_ARGS__);                                         \
	} while (0)

/*
 * Decode and expect refusal with exactly this fault. field NULL means "no
 * field named"; value ANY_VALUE means the value is not pinned down.
 */
static void expect_fault_at(const char *file, int line, const void *buf,
			    size_t len, unsigned int flags,
			    enum cm_fault_code code, const char *field,
			    uint64_t value)
{
	struct cm_msg m;
	struct cm_fault f = { CM_FAULT_NONE, "poison", 0xdead, 99 };
	int rc;

	rc = cm_mad_decode(buf, len, flags, &m, &f);
	if (rc != -EBADMSG || f.code != code)
		fail_at(file, line,
			"len %zu flags %u: rc %d fault %d (%s, %s), "
			"want -EBADMSG fault %d (%s)",
			len, flags, rc, f.code, cm_fault_str(f.code),
			f.field ? f.field : "NULL", code,
			field ? field : "NULL");
	if (field && (!f.field || strcmp(f.field, field)))
		fail_at(file, line, "fault field %s, want %s",
			f.field ? f.field : "NULL", field);
	if (value != ANY_VALUE && f.value != value)
		fail_at(file, line, "fault value %llu, want %llu",
			(unsigned long long)f.value, (unsigned long long)value);
	/*
	 * The type the attribute id names comes with the fault, so the
	 * daemon counts malformed MADs by type without reading MAD bytes;
	 * none for a wrong length.
	 */
	if (code == CM_FAULT_LENGTH && f.msg_type != -1)
		fail_at(file, line, "fault type %d for a wrong length",
			f.msg_type);
	if (code != CM_FAULT_LENGTH) {
		const uint8_t *b = buf;
		int want =
			cm_msg_type_from_attr((uint16_t)(b[16] << 8 | b[17]));

		if (f.msg_type != want)
			fail_at(file, line, "fault type %d, want %d",
				f.msg_type, want);
	}

	/* The same verdict without a fault to fill in. */
	if (cm_mad_decode(buf, len, flags, &m, NULL) != -EBADMSG)
		fail_at(file, line, "accepted with fault == NULL");
}

#define expect_fault(buf, len, flags, code, field, value)                      \
	expect_fault_at(__FILE__, __LINE__, buf, len, flags, code, field, value)

/* Both with and without CM_DECODE_STRICT. */
#define expect_fault_always(buf, code, field, value)                           \
	do {                                                                   \
		expect_fault(buf, CM_MAD_SIZE, 0, code, field, value);         \
		expect_fault(buf, CM_MAD_SIZE, CM_DECODE_STRICT, code, field,  \
			     value);                                           \
	} while (0)

static void expect_ok(const uint8_t *mad, unsigned int flags)
{
	struct cm_msg m;
	struct cm_fault f = { CM_FAULT_LENGTH, "poison", 1, 99 };

	assert_int_equal(cm_mad_decode(mad, CM_MAD_SIZE, flags, &m, &f), 0);
	assert_int_equal(f.code, CM_FAULT_NONE);
}

/* Write 'v' into the bits 'mask' of message byte 'byte'. */
static void poke(uint8_t *mad, unsigned int byte, uint8_t mask, unsigned int v)
{
	unsigned int shift = 0;

	while (!(mask >> shift & 1))
		shift++;
	mad[H + byte] =
		(uint8_t)((mad[H + byte] & ~mask) | ((v << shift) & mask));
}

static void test_base_mads_are_valid(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		base_mad(t, mad);
		expect_ok(mad, 0);
		expect_ok(mad, CM_DECODE_STRICT);
	}
}

/* IBTA 13.4.2: a MAD is exactly 256 bytes; anything else is refused. */
static void test_length(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		base_mad(t, mad);
		for (size_t len = 0; len <= CM_MAD_SIZE + 1; len++) {
			uint8_t *buf;

			if (len == CM_MAD_SIZE)
				continue;
			/* Exactly len bytes (malloc(0) may give NULL). */
			buf = malloc(len);
			if (len) {
				assert_non_null(buf);
				memcpy(buf, mad,
				       len < CM_MAD_SIZE ? len : CM_MAD_SIZE);
			}
			if (len > CM_MAD_SIZE)
				buf[CM_MAD_SIZE] = 0;
			expect_fault(buf, len, 0, CM_FAULT_LENGTH, NULL, len);
			expect_fault(buf, len, CM_DECODE_STRICT,
				     CM_FAULT_LENGTH, NULL, len);
			free(buf);
		}
	}
	/* Length is checked before the buffer is looked at at all. */
	expect_fault(NULL, 0, 0, CM_FAULT_LENGTH, NULL, 0);
}

/* A 256-byte buffer of garbage fails on the first header byte. */
static void test_header_order(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	memset(mad, 0xff, sizeof(mad));
	expect_fault_always(mad, CM_FAULT_BASE_VERSION, "base_version", 0xff);
	mad[0] = 1;
	expect_fault_always(mad, CM_FAULT_CLASS, "mgmt_class", 0xff);
	mad[1] = 0x07;
	expect_fault_always(mad, CM_FAULT_CLASS_VERSION, "class_version", 0xff);
	mad[2] = 2;
	expect_fault_always(mad, CM_FAULT_METHOD, "method", 0xff);
	mad[3] = 0x03;
	expect_fault_always(mad, CM_FAULT_ATTR_ID, "attr_id", 0xffff);

	/* A MAD of another class is refused as such, not for its body. */
	base_mad(CM_MSG_REQ, mad);
	poke(mad, 50, 0xf0, 0); /* path MTU 0 */
	mad[1] = 0x03; /* SA */
	expect_fault_always(mad, CM_FAULT_CLASS, "mgmt_class", 0x03);
}

static void test_base_version(void **state)
{
	static const uint8_t bad[] = {
		0x00, 0x02, 0x03, 0x10, 0x80, 0x81, 0xff
	};
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (size_t i = 0; i < sizeof(bad); i++) {
			base_mad(t, mad);
			mad[0] = bad[i];
			expect_fault_always(mad, CM_FAULT_BASE_VERSION,
					    "base_version", bad[i]);
		}
	}
}

/* 0x01/0x81 SM, 0x03 SA, 0x04 PM, 0x06 DevMgt, 0x08 SNMP, 0x10 RDMA-CM... */
static void test_class(void **state)
{
	static const uint8_t bad[] = { 0x00, 0x01, 0x03, 0x04, 0x06, 0x08,
				       0x09, 0x10, 0x70, 0x81, 0x87, 0xff };
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (size_t i = 0; i < sizeof(bad); i++) {
			base_mad(t, mad);
			mad[1] = bad[i];
			expect_fault_always(mad, CM_FAULT_CLASS, "mgmt_class",
					    bad[i]);
		}
	}
}

static void test_class_version(void **state)
{
	static const uint8_t bad[] = { 0x00, 0x01, 0x03, 0x20, 0x82, 0xff };
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (size_t i = 0; i < sizeof(bad); i++) {
			base_mad(t, mad);
			mad[2] = bad[i];
			expect_fault_always(mad, CM_FAULT_CLASS_VERSION,
					    "class_version", bad[i]);
		}
	}
}

/*
 * IBTA 13.4.5 / 12.6: CM messages are all Send (0x03). Get (0x01),
 * GetResp (0x81), Set (0x02), Trap (0x05), a Send with the response bit
 * (0x83) and every other value are refused.
 */
static void test_method(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (unsigned int method = 0; method <= 0xff; method++) {
			if (method == CM_METHOD_SEND)
				continue;
			base_mad(t, mad);
			mad[3] = (uint8_t)method;
			expect_fault_always(mad, CM_FAULT_METHOD, "method",
					    method);
		}
	}
	/* The named ones once more, explicitly. */
	base_mad(CM_MSG_REQ, mad);
	mad[3] = CM_METHOD_GET;
	expect_fault_always(mad, CM_FAULT_METHOD, "method", 0x01);
	mad[3] = CM_METHOD_GET_RESP;
	expect_fault_always(mad, CM_FAULT_METHOD, "method", 0x81);
	mad[3] = 0x80 | CM_METHOD_SEND;
	expect_fault_always(mad, CM_FAULT_METHOD, "method", 0x83);
}

/*
 * IBTA 12.11 (CM attributes): 0x0010..0x001A are the eleven messages.
 * 0x0001 (ClassPortInfo) is a CM attribute but is never Sent; 0x001B is the
 * first id above the messages; 0x1000 is a byte-swapped REQ.
 */
static void test_attr_id(void **state)
{
	static const uint16_t bad[] = { 0x0000, 0x0001, 0x000f, 0x001b,
					0x0020, 0x0100, 0x1000, 0x1100,
					0x8010, 0xfff0, 0xffff };
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	assert_int_equal(CM_ATTR_CLASS_PORT_INFO, 0x0001);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		base_mad(CM_MSG_RTU, mad);
		mad[16] = (uint8_t)(bad[i] >> 8);
		mad[17] = (uint8_t)bad[i];
		expect_fault_always(mad, CM_FAULT_ATTR_ID, "attr_id", bad[i]);
	}
	/* And all of 0x0000..0x00ff outside 0x0010..0x001a. */
	for (unsigned int attr = 0; attr <= 0xff; attr++) {
		if (attr >= 0x0010 && attr <= 0x001a)
			continue;
		base_mad(CM_MSG_DREP, mad);
		mad[16] = 0;
		mad[17] = (uint8_t)attr;
		expect_fault_always(mad, CM_FAULT_ATTR_ID, "attr_id", attr);
	}
}

/*
 * Reserved bits, IBTA Tables 106-120, as (message byte, mask, field name).
 * Names follow the field table's "rsvd<first byte>" convention, which is
 * what struct cm_fault reports.
 */
struct rsvd_bits {
	enum cm_msg_type type;
	uint8_t byte;
	uint8_t mask;
	const char *field;
};

static const struct rsvd_bits rsvd_map[] = {
	/* Table 106 REQ */
	{ CM_MSG_REQ, 4, 0xff, "rsvd4" },
	{ CM_MSG_REQ, 5, 0xff, "rsvd4" },
	{ CM_MSG_REQ, 6, 0xff, "rsvd4" },
	{ CM_MSG_REQ, 7, 0xff, "rsvd4" },
	{ CM_MSG_REQ, 24, 0xff, "rsvd24" },
	{ CM_MSG_REQ, 25, 0xff, "rsvd24" },
	{ CM_MSG_REQ, 26, 0xff, "rsvd24" },
	{ CM_MSG_REQ, 27, 0xff, "rsvd24" },
	{ CM_MSG_REQ, 90, 0x0f, "rsvd90" }, /* after primary flow label */
	{ CM_MSG_REQ, 91, 0xc0, "rsvd90" }, /* before primary packet rate */
	{ CM_MSG_REQ, 94, 0x07, "rsvd94" }, /* after primary subnet local */
	{ CM_MSG_REQ, 95, 0x07, "rsvd95" }, /* after primary ACK timeout */
	{ CM_MSG_REQ, 134, 0x0f, "rsvd134" }, /* after alt flow label */
	{ CM_MSG_REQ, 135, 0xc0, "rsvd134" }, /* before alt packet rate */
	{ CM_MSG_REQ, 138, 0x07, "rsvd138" }, /* after alt subnet local */
	/* 139[5] is SAP supported (IBTA 1.3+, the kernel's SAP_SUPPORTED) */
	{ CM_MSG_REQ, 139, 0x03, "rsvd139" }, /* after SAP supported */
	/* Table 107 MRA */
	{ CM_MSG_MRA, 8, 0x3f, "rsvd8" },
	{ CM_MSG_MRA, 9, 0x07, "rsvd9" },
	/* Table 108 REJ */
	{ CM_MSG_REJ, 8, 0x3f, "rsvd8" },
	{ CM_MSG_REJ, 9, 0x01, "rsvd9" },
	/* Table 110 REP */
	{ CM_MSG_REP, 15, 0xff, "rsvd15" },
	{ CM_MSG_REP, 19, 0xff, "rsvd19" },
	{ CM_MSG_REP, 23, 0xff, "rsvd23" },
	{ CM_MSG_REP, 27, 0x0f, "rsvd27" },
	/* Table 112 DREQ */
	{ CM_MSG_DREQ, 11, 0xff, "rsvd11" },
	/* Table 115 LAP */
	{ CM_MSG_LAP, 8, 0xff, "rsvd8" },
	{ CM_MSG_LAP, 9, 0xff, "rsvd8" },
	{ CM_MSG_LAP, 10, 0xff, "rsvd8" },
	{ CM_MSG_LAP, 11, 0xff, "rsvd8" },
	{ CM_MSG_LAP, 15, 0x07, "rsvd15" },
	{ CM_MSG_LAP, 16, 0xff, "rsvd16" },
	{ CM_MSG_LAP, 17, 0xff, "rsvd16" },
	{ CM_MSG_LAP, 18, 0xff, "rsvd16" },
	{ CM_MSG_LAP, 19, 0xff, "rsvd16" },
	{ CM_MSG_LAP, 58, 0x0f, "rsvd58" },
	{ CM_MSG_LAP, 61, 0xc0, "rsvd61" },
	{ CM_MSG_LAP, 62, 0x07, "rsvd62" },
	{ CM_MSG_LAP, 63, 0x07, "rsvd63" },
	/* Table 116 APR */
	{ CM_MSG_APR, 10, 0xff, "rsvd10" },
	{ CM_MSG_APR, 11, 0xff, "rsvd10" },
	/* Table 119 SIDR_REQ */
	{ CM_MSG_SIDR_REQ, 6, 0xff, "rsvd6" },
	{ CM_MSG_SIDR_REQ, 7, 0xff, "rsvd6" },
	/* Table 120 SIDR_REP */
	{ CM_MSG_SIDR_REP, 6, 0xff, "rsvd6" },
	{ CM_MSG_SIDR_REP, 7, 0xff, "rsvd6" },
	{ CM_MSG_SIDR_REP, 11, 0xff, "rsvd11" },
};

#define RSVD_MAP_SIZE (sizeof(rsvd_map) / sizeof(rsvd_map[0]))

static const struct rsvd_bits *rsvd_lookup(enum cm_msg_type type,
					   unsigned int byte, uint8_t bit)
{
	for (size_t i = 0; i < RSVD_MAP_SIZE; i++)
		if (rsvd_map[i].type == type && rsvd_map[i].byte == byte &&
		    (rsvd_map[i].mask & bit))
			return &rsvd_map[i];
	return NULL;
}

/*
 * Every reserved bit on its own: strict decode refuses the MAD naming the
 * field; lenient decode accepts it, reports CM_FAULT_RESERVED, decodes the
 * same message as the clean MAD, and re-encoding sends the bit as zero.
 */
static void test_reserved_bits(void **state)
{
	(void)state;
	for (size_t i = 0; i < RSVD_MAP_SIZE; i++) {
		const struct rsvd_bits *r = &rsvd_map[i];
		uint8_t clean[CM_MAD_SIZE];
		struct cm_msg want;

		base_mad(r->type, clean);
		assert_int_equal(
			cm_mad_decode(clean, CM_MAD_SIZE, 0, &want, NULL), 0);
		for (unsigned int b = 0; b < 8; b++) {
			uint8_t bit = (uint8_t)(0x80 >> b);
			uint8_t mad[CM_MAD_SIZE], out[CM_MAD_SIZE];
			struct cm_fault f;
			struct cm_msg got;

			if (!(r->mask & bit))
				continue;
			memcpy(mad, clean, sizeof(mad));
			mad[H + r->byte] |= bit;
			expect_fault(mad, CM_MAD_SIZE, CM_DECODE_STRICT,
				     CM_FAULT_RESERVED, r->field, ANY_VALUE);

			memset(&f, 0, sizeof(f));
			assert_int_equal(
				cm_mad_decode(mad, CM_MAD_SIZE, 0, &got, &f),
				0);
			assert_int_equal(f.code, CM_FAULT_RESERVED);
			assert_non_null(f.field);
			assert_string_equal(f.field, r->field);
			assert_int_not_equal(f.value, 0);
			assert_int_equal(cm_mad_encode(&got, out), 0);
			assert_memory_equal(out, clean, CM_MAD_SIZE);
			assert_int_equal(got.type, want.type);
		}
	}
}

/* All reserved bits of a message at once: still one clean verdict. */
static void test_reserved_all(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		uint8_t mad[CM_MAD_SIZE], clean[CM_MAD_SIZE], out[CM_MAD_SIZE];
		struct cm_fault f;
		struct cm_msg m;
		bool any = false;

		base_mad(t, clean);
		memcpy(mad, clean, sizeof(mad));
		for (size_t i = 0; i < RSVD_MAP_SIZE; i++) {
			if (rsvd_map[i].type != t)
				continue;
			mad[H + rsvd_map[i].byte] |= rsvd_map[i].mask;
			any = true;
		}
		if (!any) /* RTU and DREP have no reserved bits */
			continue;
		expect_fault(mad, CM_MAD_SIZE, CM_DECODE_STRICT,
			     CM_FAULT_RESERVED, NULL, ANY_VALUE);
		assert_int_equal(cm_mad_decode(mad, CM_MAD_SIZE, 0, &m, &f), 0);
		assert_int_equal(f.code, CM_FAULT_RESERVED);
		assert_int_equal(cm_mad_encode(&m, out), 0);
		assert_memory_equal(out, clean, CM_MAD_SIZE);
	}
}

/*
 * The reserved map is exact: flipping any body bit the map does not list
 * is never reported as a reserved fault (it may be a range error, or fine),
 * and flipping one it lists always is. This catches a field table that
 * turns a real field into a reserved one or forgets a reserved one.
 */
static void test_reserved_map(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		uint8_t clean[CM_MAD_SIZE];

		base_mad(t, clean);
		for (unsigned int byte = 0; byte < CM_MSG_SIZE; byte++) {
			for (unsigned int b = 0; b < 8; b++) {
				uint8_t bit = (uint8_t)(0x80 >> b);
				const struct rsvd_bits *r;
				uint8_t mad[CM_MAD_SIZE];
				struct cm_fault f = { CM_FAULT_NONE, NULL, 0,
						      99 };
				struct cm_msg m;
				int rc;

				memcpy(mad, clean, sizeof(mad));
				mad[H + byte] ^= bit;
				r = rsvd_lookup(t, byte, bit);
				rc = cm_mad_decode(mad, CM_MAD_SIZE,
						   CM_DECODE_STRICT, &m, &f);
				if (r && (rc != -EBADMSG ||
					  f.code != CM_FAULT_RESERVED))
					fail_msg(
						"%s byte %u bit %u is reserved "
						"(IBTA) but decode gives rc %d "
						"fault %d",
						cm_msg_type_name(t), byte, b,
						rc, f.code);
				if (!r && f.code == CM_FAULT_RESERVED)
					fail_msg("%s byte %u bit %u is a field "
						 "(IBTA) but decode calls %s "
						 "reserved",
						 cm_msg_type_name(t), byte, b,
						 f.field ? f.field : "NULL");
				if (!r && rc && f.code != CM_FAULT_RANGE)
					fail_msg("%s byte %u bit %u: rc %d "
						 "fault %d",
						 cm_msg_type_name(t), byte, b,
						 rc, f.code);
			}
		}
	}
}

/* IBTA 13.4.3: MAD header bytes 18-19 are reserved. */
static void test_header_reserved(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		for (unsigned int b = 0; b < 16; b++) {
			uint8_t mad[CM_MAD_SIZE];
			struct cm_fault f;
			struct cm_msg m;

			base_mad(t, mad);
			mad[18 + b / 8] |= (uint8_t)(0x80 >> (b % 8));
			expect_fault(mad, CM_MAD_SIZE, CM_DECODE_STRICT,
				     CM_FAULT_RESERVED, "mad_rsvd",
				     UINT64_C(0x8000) >> b);
			assert_int_equal(
				cm_mad_decode(mad, CM_MAD_SIZE, 0, &m, &f), 0);
			assert_int_equal(f.code, CM_FAULT_RESERVED);
			assert_string_equal(f.field, "mad_rsvd");
		}
	}
}

/* IBTA 9.7.4 / 12.7.21: path MTU 1..5 (256..4096); 0 and 6..15 reserved. */
static void test_req_path_mtu(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int mtu = 0; mtu < 16; mtu++) {
		base_mad(CM_MSG_REQ, mad);
		poke(mad, 50, 0xf0, mtu);
		if (mtu >= CM_MTU_256 && mtu <= CM_MTU_4096) {
			expect_ok(mad, CM_DECODE_STRICT);
			continue;
		}
		expect_fault_always(mad, CM_FAULT_RANGE, "path_mtu", mtu);
	}
}

/*
 * IBTA 12.7.9 / 12.7.40: transport service type 3 defers to the extended
 * transport type, of which only 1 (XRC) is defined.
 */
static void test_req_transport(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int ext = 0; ext < 8; ext++) {
		base_mad(CM_MSG_REQ, mad);
		poke(mad, 43, 0x06, CM_TRANSPORT_EXTENDED);
		poke(mad, 51, 0x07, ext);
		if (ext == CM_EXT_TRANSPORT_XRC) {
			expect_ok(mad, CM_DECODE_STRICT);
			continue;
		}
		expect_fault_always(mad, CM_FAULT_RANGE, "ext_transport_type",
				    ext);
	}
	for (unsigned int tt = 0; tt < 3; tt++) {
		base_mad(CM_MSG_REQ, mad);
		poke(mad, 43, 0x06, tt);
		expect_ok(mad, CM_DECODE_STRICT);
	}
}

/* IBTA Table 107: message MRAed 0 REQ, 1 REP, 2 LAP; 3 reserved. */
static void test_mra_message_type(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int v = 0; v < 4; v++) {
		base_mad(CM_MSG_MRA, mad);
		poke(mad, 8, 0xc0, v);
		if (v < 3)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE,
					    "message_mraed", 3);
	}
}

/* IBTA Table 108: message rejected 0 REQ, 1 REP, 2 other; 3 reserved. */
static void test_rej_message_type(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int v = 0; v < 4; v++) {
		base_mad(CM_MSG_REJ, mad);
		poke(mad, 8, 0xc0, v);
		if (v < 3)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE,
					    "message_rejected", 3);
	}
}

/* IBTA Table 109: reasons 1..35; 0 and everything above are not defined. */
static void test_rej_reason(void **state)
{
	static const uint16_t bad[] = { 0,	36,	37,	0x00ff,
					0x0100, 0x1c00, 0x8000, 0xffff };
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int v = 1; v <= CM_REJ_REASON_MAX; v++) {
		base_mad(CM_MSG_REJ, mad);
		mad[H + 10] = (uint8_t)(v >> 8);
		mad[H + 11] = (uint8_t)v;
		expect_ok(mad, CM_DECODE_STRICT);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		base_mad(CM_MSG_REJ, mad);
		mad[H + 10] = (uint8_t)(bad[i] >> 8);
		mad[H + 11] = (uint8_t)bad[i];
		expect_fault_always(mad, CM_FAULT_RANGE, "reason", bad[i]);
	}
}

/* IBTA Table 108: the 7-bit ARI length can say up to 127; ARI is 72. */
static void test_rej_ari_length(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int len = 0; len < 128; len++) {
		base_mad(CM_MSG_REJ, mad);
		poke(mad, 9, 0xfe, len);
		if (len <= CM_REJ_ARI_SIZE)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE, "ari_length",
					    len);
	}
}

/* IBTA Table 116: additional information is 72 bytes. */
static void test_apr_info_length(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int len = 0; len < 256; len++) {
		base_mad(CM_MSG_APR, mad);
		mad[H + 8] = (uint8_t)len;
		if (len <= CM_APR_INFO_SIZE)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE, "info_length",
					    len);
	}
}

/* IBTA Table 117: AP status 0..13. */
static void test_apr_status(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int v = 0; v < 256; v++) {
		base_mad(CM_MSG_APR, mad);
		mad[H + 9] = (uint8_t)v;
		if (v <= CM_APR_STATUS_MAX)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE, "status", v);
	}
}

/* IBTA Table 121: SIDR_REP status 0..5. */
static void test_sidr_rep_status(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int v = 0; v < 256; v++) {
		base_mad(CM_MSG_SIDR_REP, mad);
		mad[H + 4] = (uint8_t)v;
		if (v <= CM_SIDR_STATUS_MAX)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE, "status", v);
	}
}

/* IBTA Table 120: additional information is 72 bytes. */
static void test_sidr_rep_info_length(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	for (unsigned int len = 0; len < 256; len++) {
		base_mad(CM_MSG_SIDR_REP, mad);
		mad[H + 5] = (uint8_t)len;
		if (len <= CM_SIDR_REP_INFO_SIZE)
			expect_ok(mad, CM_DECODE_STRICT);
		else
			expect_fault_always(mad, CM_FAULT_RANGE, "info_length",
					    len);
	}
}

/* Lenient decoding forgives reserved bits, never out-of-range values. */
static void test_range_beats_lenient_reserved(void **state)
{
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	base_mad(CM_MSG_REQ, mad);
	mad[H + 4] = 0x01; /* reserved */
	poke(mad, 50, 0xf0, 7); /* path MTU 7 */
	expect_fault(mad, CM_MAD_SIZE, 0, CM_FAULT_RANGE, "path_mtu", 7);
	expect_fault(mad, CM_MAD_SIZE, CM_DECODE_STRICT, CM_FAULT_RESERVED,
		     "rsvd4", ANY_VALUE);
}

/* cm_msg_validate on its own, as an encoder would call it. */
static void test_validate(void **state)
{
	struct cm_fault f;
	struct cm_msg m;

	(void)state;
	base_msg(CM_MSG_REQ, &m);
	assert_int_equal(cm_msg_validate(&m, &f), 0);
	assert_int_equal(f.code, CM_FAULT_NONE);
	m.req.path_mtu = 0;
	assert_int_equal(cm_msg_validate(&m, &f), -EINVAL);
	assert_int_equal(f.code, CM_FAULT_RANGE);
	assert_string_equal(f.field, "path_mtu");
	assert_int_equal(cm_msg_validate(&m, NULL), -EINVAL);

	base_msg(CM_MSG_REJ, &m);
	m.rej.reason = 0;
	assert_int_equal(cm_msg_validate(&m, &f), -EINVAL);
	assert_string_equal(f.field, "reason");

	base_msg(CM_MSG_RTU, &m);
	m.type = CM_MSG__COUNT;
	assert_int_equal(cm_msg_validate(&m, &f), -EINVAL);
	assert_int_equal(f.code, CM_FAULT_TYPE);
}

static void test_fault_str(void **state)
{
	(void)state;
	for (int c = CM_FAULT_NONE; c <= CM_FAULT_TYPE; c++) {
		const char *s = cm_fault_str((enum cm_fault_code)c);

		assert_non_null(s);
		assert_true(strlen(s) > 0);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_mads_are_valid),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_header_order),
		cmocka_unit_test(test_base_version),
		cmocka_unit_test(test_class),
		cmocka_unit_test(test_class_version),
		cmocka_unit_test(test_method),
		cmocka_unit_test(test_attr_id),
		cmocka_unit_test(test_reserved_bits),
		cmocka_unit_test(test_reserved_all),
		cmocka_unit_test(test_reserved_map),
		cmocka_unit_test(test_header_reserved),
		cmocka_unit_test(test_req_path_mtu),
		cmocka_unit_test(test_req_transport),
		cmocka_unit_test(test_mra_message_type),
		cmocka_unit_test(test_rej_message_type),
		cmocka_unit_test(test_rej_reason),
		cmocka_unit_test(test_rej_ari_length),
		cmocka_unit_test(test_apr_info_length),
		cmocka_unit_test(test_apr_status),
		cmocka_unit_test(test_sidr_rep_status),
		cmocka_unit_test(test_sidr_rep_info_length),
		cmocka_unit_test(test_range_beats_lenient_reserved),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_fault_str),
	};

	return cmocka_run_group_tests_name("cm_malformed", tests, NULL, NULL);
}
