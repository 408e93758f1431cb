// SPDX-License-Identifier: MIT
/*
 * Malformed SA MADs: each case starts from a valid MAD built with the
 * encoder, breaks one thing and must be refused with the fault code and
 * the field that name it (or, for reserved fields without
 * SA_DECODE_STRICT, accepted with the fault reported).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sa_mad.h"

#define BIG (SA_DATA_OFFSET + 8 * SA_PATH_REC_SIZE)

static void path_recs(struct sa_path_rec r[8])
{
	memset(r, 0, 8 * sizeof(*r));
	for (unsigned int i = 0; i < 8; i++) {
		r[i].dlid = (uint16_t)(i + 1);
		r[i].slid = 0x22;
		r[i].pkey = 0xffff;
		r[i].mtu = 4;
		r[i].numb_path = 1;
	}
}

/* A GetTableResp with n PathRecords in one MAD (n <= 3). */
static void table_mad(uint8_t out[SA_MAD_SIZE], unsigned int n)
{
	struct sa_path_rec r[8];
	struct sa_msg m;

	path_recs(r);
	sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET_TABLE_RESP, 7,
		    SA_PR_COMP_DGID | SA_PR_COMP_SGID);
	m.sa.rmpp_version = SA_RMPP_VERSION;
	m.sa.rmpp_type = SA_RMPP_TYPE_DATA;
	m.sa.rmpp_flags =
		SA_RMPP_FLAG_ACTIVE | SA_RMPP_FLAG_FIRST | SA_RMPP_FLAG_LAST;
	m.sa.segment_number = 1;
	m.sa.payload_length = SA_RMPP_PAYLOAD_HDR + n * SA_PATH_REC_SIZE;
	m.sa.attr_offset = SA_PATH_REC_SIZE / 8;
	assert_int_equal(sa_path_mad_encode(&m, r, n, out, SA_MAD_SIZE),
			 SA_MAD_SIZE);
}

static void query_mad(uint8_t out[SA_MAD_SIZE])
{
	struct sa_path_rec r[8];
	struct sa_msg m;

	path_recs(r);
	sa_msg_init(&m, SA_REC_PATH_REC, SA_METHOD_GET, 7, SA_PR_COMP_DLID);
	assert_int_equal(sa_path_mad_encode(&m, r, 1, out, SA_MAD_SIZE),
			 SA_MAD_SIZE);
}

static void cpi_mad(uint8_t out[SA_MAD_SIZE])
{
	struct sa_class_port_info c = { .base_version = 1,
					.class_version = 2,
					.resp_time_value = 18 };
	struct sa_msg m;

	sa_msg_init(&m, SA_REC_CLASS_PORT_INFO, SA_METHOD_GET_RESP, 7, 0);
	assert_int_equal(sa_cpi_mad_encode(&m, &c, out), SA_MAD_SIZE);
}

#define expect_fault(buf, len, flags, code, field)                             \
	expect_fault_at(__FILE__, __LINE__, buf, len, flags, code, field)

static void expect_fault_at(const char *file, int line, const uint8_t *buf,
			    size_t len, unsigned int flags,
			    enum sa_fault_code code, const char *field)
{
	struct sa_msg m;
	struct sa_fault f;
	int rc = sa_mad_decode(buf, len, flags, &m, &f);

	if (rc != -EBADMSG || f.code != code)
		fail_msg("%s:%d: want fault %d (%s), got rc %d fault %d (%s)",
			 file, line, code, sa_fault_str(code), rc, f.code,
			 sa_fault_str(f.code));
	if (field ? !f.field || strcmp(field, f.field) : f.field != NULL)
		fail_msg("%s:%d: want field %s, got %s", file, line,
			 field ? field : "(none)",
			 f.field ? f.field : "(none)");
}

static void expect_ok(const uint8_t *buf, size_t len, unsigned int nrec)
{
	struct sa_msg m;
	struct sa_fault f;

	assert_int_equal(sa_mad_decode(buf, len, SA_DECODE_STRICT, &m, &f), 0);
	assert_int_equal(f.code, SA_FAULT_NONE);
	assert_int_equal(m.nrec, nrec);
}

static void test_bases_valid(void **state)
{
	uint8_t mad[SA_MAD_SIZE];

	(void)state;
	for (unsigned int n = 0; n <= 3; n++) {
		table_mad(mad, n);
		expect_ok(mad, sizeof(mad), n);
	}
	query_mad(mad);
	expect_ok(mad, sizeof(mad), 1);
	cpi_mad(mad);
	expect_ok(mad, sizeof(mad), 1);
}

static void test_length(void **state)
{
	uint8_t mad[SA_MAD_SIZE + 64] = { 0 };
	static const size_t bad[] = { 0, 1, 24, 56, 255 };

	(void)state;
	query_mad(mad);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_fault(mad, bad[i], 0, SA_FAULT_LENGTH, NULL);
	/* Only a table response may be longer than one MAD. */
	expect_fault(mad, SA_MAD_SIZE + 64, 0, SA_FAULT_LENGTH, NULL);
	cpi_mad(mad);
	expect_fault(mad, SA_MAD_SIZE + 1, 0, SA_FAULT_LENGTH, NULL);
	/* Nor a failed table response: it is one MAD. */
	table_mad(mad, 2);
	mad[4] = SA_ERR_NO_RESOURCES;
	expect_fault(mad, SA_MAD_SIZE + 64, 0, SA_FAULT_LENGTH, NULL);
}

static void test_header(void **state)
{
	uint8_t mad[SA_MAD_SIZE];

	(void)state;
	query_mad(mad);
	mad[0] = 2;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_BASE_VERSION,
		     "base_version");
	query_mad(mad);
	mad[1] = 0x07; /* CM */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_CLASS, "mgmt_class");
	query_mad(mad);
	mad[1] = 0x81; /* a directed-route SMP */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_CLASS, "mgmt_class");
	query_mad(mad);
	mad[2] = 1;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_CLASS_VERSION,
		     "class_version");
	query_mad(mad);
	mad[17] = 0x36; /* not PathRecord */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_ATTR_ID, "attr_id");
	query_mad(mad);
	mad[16] = 0x10; /* 0x1035 */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_ATTR_ID, "attr_id");
}

static void test_method(void **state)
{
	static const uint8_t bad[] = { 0x00, 0x02, 0x03, 0x05, 0x06, 0x07,
				       0x13, 0x14, 0x15, 0x86, 0x93, 0xff };
	uint8_t mad[SA_MAD_SIZE];

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad); i++) {
		query_mad(mad);
		mad[3] = bad[i];
		expect_fault(mad, sizeof(mad), 0, SA_FAULT_METHOD, "method");
	}
	/* ClassPortInfo has no table. */
	cpi_mad(mad);
	mad[3] = SA_METHOD_GET_TABLE;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_METHOD, "method");
	cpi_mad(mad);
	mad[3] = SA_METHOD_GET_TABLE_RESP;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_METHOD, "method");
}

static void test_attr_offset(void **state)
{
	uint8_t mad[SA_MAD_SIZE];

	(void)state;
	for (unsigned int off = 0; off < 8; off++) {
		table_mad(mad, 2);
		mad[45] = (uint8_t)off;
		expect_fault(mad, sizeof(mad), 0, SA_FAULT_ATTR_OFFSET,
			     "attr_offset");
	}
	/* No records: opensm sends offset 0 (osm_sa.c). */
	table_mad(mad, 0);
	mad[45] = 0;
	expect_ok(mad, sizeof(mad), 0);
	/* A larger stride (a longer record of a later spec) is fine: two
	 * 72-byte slots in 144 bytes of payload. */
	table_mad(mad, 2);
	mad[45] = 9;
	mad[35] = 20 + 144;
	expect_ok(mad, sizeof(mad), 2);
	/* ... but the payload must be whole records at that stride. */
	table_mad(mad, 2);
	mad[45] = 9;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "payload_length");
}

static void test_rmpp(void **state)
{
	uint8_t mad[SA_MAD_SIZE];
	uint8_t big[BIG];

	(void)state;
	table_mad(mad, 2);
	mad[26] &= (uint8_t)~SA_RMPP_FLAG_ACTIVE;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "rmpp_flags");
	table_mad(mad, 2);
	mad[24] = 2;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "rmpp_version");
	table_mad(mad, 2);
	mad[25] = 2; /* ACK */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "rmpp_type");
	table_mad(mad, 2);
	mad[31] = 2; /* segment 2 alone: not reassembled */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "segment_number");
	table_mad(mad, 2);
	mad[31] = 0;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "segment_number");
	table_mad(mad, 2);
	mad[35] = 19; /* shorter than the SA header */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "payload_length");
	table_mad(mad, 2);
	mad[35] = 221; /* more than one MAD holds */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "payload_length");
	table_mad(mad, 2);
	mad[32] = 1; /* 2^24 + 148 */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "payload_length");
	table_mad(mad, 2);
	mad[35] = 20 + 127; /* a partial second record */
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "payload_length");
	/* 220 = the whole data area: three records and 8 bytes: partial. */
	table_mad(mad, 3);
	mad[35] = 220;
	expect_fault(mad, sizeof(mad), 0, SA_FAULT_RMPP, "payload_length");

	/* Reassembled: RMPP still required. */
	memset(big, 0, sizeof(big));
	table_mad(big, 3);
	expect_ok(big, sizeof(big), 8);
	big[26] = 0;
	expect_fault(big, sizeof(big), 0, SA_FAULT_RMPP, "rmpp_flags");

	/* A failed table response is not RMPP-checked and has no records. */
	table_mad(mad, 2);
	mad[4] = SA_ERR_TOO_MANY_RECORDS;
	mad[26] = 0;
	mad[45] = 0;
	expect_ok(mad, sizeof(mad), 0);
}

/* Each reserved field: strict refuses it by name, lenient reports it. */
static void check_reserved(const uint8_t *base, unsigned int byte, uint8_t bit,
			   const char *name)
{
	uint8_t mad[SA_MAD_SIZE];
	struct sa_msg m;
	struct sa_fault f;

	memcpy(mad, base, sizeof(mad));
	mad[byte] |= bit;
	expect_fault(mad, sizeof(mad), SA_DECODE_STRICT, SA_FAULT_RESERVED,
		     name);
	assert_int_equal(sa_mad_decode(mad, sizeof(mad), 0, &m, &f), 0);
	assert_int_equal(f.code, SA_FAULT_RESERVED);
	assert_string_equal(f.field, name);
}

static void test_reserved(void **state)
{
	uint8_t table[SA_MAD_SIZE], cpi[SA_MAD_SIZE];

	(void)state;
	table_mad(table, 2);
	cpi_mad(cpi);
	check_reserved(table, 18, 0x80, "mad_rsvd");
	check_reserved(table, 19, 0x01, "mad_rsvd");
	check_reserved(table, 46, 0x01, "rsvd22");
	/* PathRecord 44[1..3], in the first and in the second record. */
	check_reserved(table, 56 + 44, 0x40, "rsvd44");
	check_reserved(table, 56 + 64 + 44, 0x10, "rsvd44");
	check_reserved(table, 56 + 58, 0x80, "rsvd58");
	check_reserved(table, 56 + 64 + 63, 0x01, "rsvd58");
	check_reserved(cpi, 56 + 32, 0x01, "rsvd32");
	/* The slot past the last record is no record: not checked. */
	table[56 + 128 + 44] = 0x70;
	expect_ok(table, sizeof(table), 2);
}

static void test_fault_str(void **state)
{
	(void)state;
	for (unsigned int c = SA_FAULT_NONE; c <= SA_FAULT_RESERVED; c++)
		assert_string_not_equal(sa_fault_str((enum sa_fault_code)c),
					"unknown fault");
	assert_string_equal(sa_fault_str((enum sa_fault_code)99),
			    "unknown fault");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bases_valid),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_method),
		cmocka_unit_test(test_attr_offset),
		cmocka_unit_test(test_rmpp),
		cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_fault_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
