// SPDX-License-Identifier: MIT
/*
 * PathRecord -> REQ path and QP path, and a REQ path -> the PathRecord
 * query that asks for it again (proto/sa_path.h), on the golden records
 * of sa_golden_bytes.h: the opensm-on-ibsim capture and the hand-written
 * table. Expected REQ bytes are written by hand from IBTA Table 106
 * (bytes 48-139 of the REQ, MAD bytes 72-163), not from cm_fields.def.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sa_golden_bytes.h"
#include "sa_path.h"

/* REQ byte n in the MAD. */
#define R(n) (CM_MAD_HDR_SIZE + (n))

static const uint8_t gid_20_0[16] = { 0xfe, 0x80, [13] = 0x20 };
static const uint8_t gid_10_1[16] = { 0xfe, 0x80, [13] = 0x10, [15] = 1 };

/* Record i of the capture, through SA_DECODE_NO_RMPP. */
static void capture_rec(unsigned int i, struct sa_path_rec *rec)
{
	struct sa_msg m;

	assert_int_equal(sa_mad_decode(opensm_ibsim_capture, SA_MAD_SIZE,
				       SA_DECODE_NO_RMPP, &m, NULL),
			 0);
	assert_int_equal(sa_msg_path_rec(&m, i, rec), 0);
}

static void table_rec(unsigned int i, struct sa_path_rec *rec)
{
	struct sa_msg m;

	assert_int_equal(sa_mad_decode(pr_table_golden, SA_MAD_SIZE,
				       SA_DECODE_STRICT, &m, NULL),
			 0);
	assert_int_equal(sa_msg_path_rec(&m, i, rec), 0);
}

static void req_bytes(const struct cm_req *req, uint8_t out[CM_MAD_SIZE])
{
	struct cm_msg m;

	cm_msg_init(&m, CM_MSG_REQ, 1);
	m.req = *req;
	assert_int_equal(cm_mad_encode(&m, out), 0);
}

/*
 * The capture's second record (saquery: sgid fe80::10:1 slid 1, dgid
 * fe80::20:0 dlid 2, P_Key 0xffff, MTU 0x83, rate 0x83, pkt_life 0x92)
 * as the primary path.
 */
static void test_capture_to_req(void **state)
{
	static const uint8_t
		want[] = {
			[R(48)] = 0xff, 0xff, /* P_Key */
			[R(50)] = 0x30, /* path MTU 3 (1024) << 4 */
			[R(51)] = 0x00, [R(52)] = 0x00,
			0x01, /* local LID = SLID */
			[R(54)] = 0x00, 0x02, /* remote LID = DLID */
			[R(56)] = 0xfe, 0x80,
			[R(69)] = 0x10, [R(71)] = 0x01,
			[R(72)] = 0xfe, 0x80,
			[R(85)] = 0x20, [R(87)] = 0x00,
			[R(88)] = 0x00, 0x00,
			0x00, /* flow label 0, reserved */
			[R(91)] = 0x03, /* packet rate 3 (10 Gb/s) */
			[R(92)] = 0x00, /* traffic class */
			[R(93)] = 0x00, /* hop limit */
			[R(94)] = 0x08, /* SL 0, subnet local 1 */
			[R(95)] = 0x98, /* local ACK timeout 19 << 3 */
		};
	struct sa_path_rec rec;
	struct cm_req req;
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	capture_rec(1, &rec);
	memset(&req, 0, sizeof(req));
	assert_int_equal(sa_path_to_req(&rec, SA_PATH_PRIMARY, 0, &req), 0);
	assert_int_equal(req.pkey, 0xffff);
	assert_int_equal(req.path_mtu, CM_MTU_1024);
	assert_int_equal(req.primary_local_lid, 1);
	assert_int_equal(req.primary_remote_lid, 2);
	assert_memory_equal(req.primary_local_gid, gid_10_1, 16);
	assert_memory_equal(req.primary_remote_gid, gid_20_0, 16);
	assert_int_equal(req.primary_packet_rate, 3);
	assert_int_equal(req.primary_subnet_local, 1);
	/* packet life time 18 + 1 */
	assert_int_equal(req.primary_local_ack_timeout, 19);
	assert_int_equal(cm_req_packet_life_time(&req), 18);
	req_bytes(&req, mad);
	assert_memory_equal(mad + R(48), want + R(48), 96 - 48);
	/* No alternate written. */
	for (unsigned int i = R(96); i < R(140); i++)
		assert_int_equal(mad[i], 0);
}

/*
 * The hand-written table's first record (flow label 0xabcde, hop limit
 * 0x40, TClass 0x0b, SL 10, MTU 2048, rate 7, PLT 18) as the primary,
 * and a copy on another DLID, SL 5, hop limit 1 as the alternate.
 */
static void test_table_to_req_alternate(void **state)
{
	static const uint8_t want[] = {
		[R(48)] = 0xff,
		0xff,
		[R(50)] = 0x40, /* MTU 4 (2048) */
		[R(52)] = 0x00,
		0x22,
		0x00,
		0x11,
		[R(56)] = 0xfe,
		0x80,
		0,
		0,
		0,
		0,
		0,
		0,
		0x00,
		0x02,
		0xc9,
		0x03,
		0x00,
		0xa1,
		0xb2,
		0xc3,
		[R(72)] = 0xfe,
		0x80,
		0,
		0,
		0,
		0,
		0,
		0,
		0x00,
		0x02,
		0xc9,
		0x03,
		0x00,
		0xd4,
		0xe5,
		0xf6,
		[R(88)] = 0xab,
		0xcd,
		0xe0, /* flow label 0xabcde << 4 */
		[R(91)] = 0x07,
		[R(92)] = 0x0b,
		[R(93)] = 0x40,
		[R(94)] = 0xa0, /* SL 10, not subnet local (routed) */
		[R(95)] = 0xa8, /* 21 << 3: CA ack delay 20 dominates */
		[R(96)] = 0x00,
		0x22,
		0x00,
		0x13,
		[R(100)] = 0xfe,
		0x80,
		0,
		0,
		0,
		0,
		0,
		0,
		0x00,
		0x02,
		0xc9,
		0x03,
		0x00,
		0xa1,
		0xb2,
		0xc3,
		[R(116)] = 0xfe,
		0x80,
		0,
		0,
		0,
		0,
		0,
		0,
		0x00,
		0x02,
		0xc9,
		0x03,
		0x00,
		0xd4,
		0xe5,
		0xf6,
		[R(132)] = 0xab,
		0xcd,
		0xe0,
		[R(135)] = 0x07,
		[R(136)] = 0x0b,
		[R(137)] = 0x01,
		[R(138)] = 0x58, /* SL 5, subnet local */
		[R(139)] = 0xa8,
	};
	struct sa_path_rec pri, alt, other;
	struct cm_req req, before;
	uint8_t mad[CM_MAD_SIZE];

	(void)state;
	table_rec(0, &pri);
	alt = pri;
	alt.dlid = 0x13;
	alt.sl = 5;
	alt.hop_limit = 1;
	memset(&req, 0, sizeof(req));
	/* An alternate before its primary: P_Key and MTU do not match. */
	assert_int_equal(sa_path_to_req(&alt, SA_PATH_ALTERNATE, 20, &req),
			 -EINVAL);
	assert_int_equal(sa_path_to_req(&pri, SA_PATH_PRIMARY, 20, &req), 0);
	assert_int_equal(sa_path_to_req(&alt, SA_PATH_ALTERNATE, 20, &req), 0);
	req_bytes(&req, mad);
	assert_memory_equal(mad + R(48), want + R(48), 140 - 48);

	/* The table's second record: P_Key 0x8001, MTU 4096. Not an
	 * alternate of the first (kernel: cm_validate_req_param). */
	table_rec(1, &other);
	before = req;
	assert_int_equal(sa_path_to_req(&other, SA_PATH_ALTERNATE, 20, &req),
			 -EINVAL);
	assert_memory_equal(&req, &before, sizeof(req));
}

/*
 * Selectors: the table's second record carries MTU selector 1, rate
 * selector 1, PLT selector 3; the values are the path's values.
 */
static void test_selectors_are_values(void **state)
{
	struct sa_path_rec rec;
	struct cm_req req;

	(void)state;
	table_rec(1, &rec);
	assert_int_equal(rec.mtu_selector, SA_SEL_LESS);
	assert_int_equal(rec.plt_selector, SA_SEL_LARGEST);
	memset(&req, 0, sizeof(req));
	assert_int_equal(sa_path_to_req(&rec, SA_PATH_PRIMARY, 0, &req), 0);
	assert_int_equal(req.path_mtu, CM_MTU_4096);
	assert_int_equal(req.primary_packet_rate, 3);
	assert_int_equal(req.primary_local_ack_timeout, 20);
	assert_int_equal(req.pkey, 0x8001);
	assert_int_equal(req.primary_hop_limit, 0xff);
	assert_int_equal(req.primary_flow_label, 0x12345);
	assert_int_equal(req.primary_subnet_local, 0);
}

/* The local ACK timeout: the kernel's cm_ack_timeout() cases. */
static void test_ack_timeout(void **state)
{
	static const uint8_t cases[][3] = {
		/* ack delay, PLT, timeout */
		{ 0, 18, 19 },	{ 0, 0, 2 },	{ 0, 30, 31 },
		{ 0, 31, 31 },	{ 0, 63, 31 },	{ 15, 18, 19 },
		{ 18, 18, 20 }, { 20, 18, 21 }, { 25, 18, 25 },
	};
	struct sa_path_rec rec;
	struct cm_req req;

	(void)state;
	capture_rec(0, &rec);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rec.packet_life_time = cases[i][1];
		memset(&req, 0, sizeof(req));
		assert_int_equal(sa_path_to_req(&rec, SA_PATH_PRIMARY,
						cases[i][0], &req),
				 0);
		assert_int_equal(req.primary_local_ack_timeout, cases[i][2]);
	}
}

/* Records no connection can use: ibsim's third slot, and bad MTUs. */
static void test_unusable(void **state)
{
	struct sa_path_rec rec;
	struct cm_req req, zero;
	struct cmp_path v;

	(void)state;
	capture_rec(2, &rec);
	assert_int_equal(rec.dlid, 0);
	memset(&req, 0, sizeof(req));
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(sa_path_check(&rec), -EINVAL);
	assert_int_equal(sa_path_to_req(&rec, SA_PATH_PRIMARY, 0, &req),
			 -EINVAL);
	assert_memory_equal(&req, &zero, sizeof(req));
	assert_int_equal(sa_path_to_cmp(&rec, 0, &v), -EINVAL);

	capture_rec(0, &rec);
	assert_int_equal(sa_path_check(&rec), 0);
	rec.slid = 0;
	assert_int_equal(sa_path_check(&rec), -EINVAL);
	capture_rec(0, &rec);
	rec.mtu = 0;
	assert_int_equal(sa_path_check(&rec), -EINVAL);
	rec.mtu = 6;
	assert_int_equal(sa_path_check(&rec), -EINVAL);
	rec.mtu = CM_MTU_4096;
	assert_int_equal(sa_path_check(&rec), 0);
}

/* The QP's path: what the record says; port facts stay the caller's. */
static void test_to_cmp(void **state)
{
	struct sa_path_rec rec;
	struct cmp_path v;

	(void)state;
	memset(&v, 0, sizeof(v));
	v.port_num = 1;
	v.pkey_index = 3;
	v.sgid_index = 2;
	memcpy(v.dev_name, "mlx5_0", 7);
	table_rec(0, &rec);
	assert_int_equal(sa_path_to_cmp(&rec, 0, &v), 0);
	assert_int_equal(v.local_lid, 0x22);
	assert_int_equal(v.remote_lid, 0x11);
	assert_int_equal(v.pkey, 0xffff);
	assert_int_equal(v.mtu, CM_MTU_2048);
	assert_int_equal(v.sl, 10);
	assert_int_equal(v.packet_rate, 7);
	assert_int_equal(v.packet_life_time, 18);
	assert_int_equal(v.local_ack_timeout, 19);
	assert_int_equal(v.grh, 1);
	assert_int_equal(v.hop_limit, 0x40);
	assert_int_equal(v.flow_label, 0xabcde);
	assert_int_equal(v.traffic_class, 0x0b);
	assert_memory_equal(v.remote_gid, rec.dgid, 16);
	assert_memory_equal(v.local_gid, rec.sgid, 16);
	assert_int_equal(v.port_num, 1);
	assert_int_equal(v.pkey_index, 3);
	assert_int_equal(v.sgid_index, 2);
	assert_string_equal(v.dev_name, "mlx5_0");

	/* Hop limit 0 (the capture): no GRH, LID routed. */
	capture_rec(0, &rec);
	assert_int_equal(sa_path_to_cmp(&rec, 0, &v), 0);
	assert_int_equal(v.grh, 0);
	assert_int_equal(v.remote_lid, 2);
	/* Hop limit 1: a GRH, though the REQ calls it subnet local. */
	rec.hop_limit = 1;
	assert_int_equal(sa_path_to_cmp(&rec, 0, &v), 0);
	assert_int_equal(v.grh, 1);
}

/*
 * Round trip: the capture's record -> REQ primary -> the query for it,
 * byte for byte (written by hand from Table 204 / 15.2.4: mask bits 2
 * DGID, 3 SGID, 10 TClass, 11 Reversible, 12 NumbPath, 13 P_Key, 15 SL,
 * 16 MTUSelector, 17 MTU), and decoded back: the template matches the
 * record in every row the mask names.
 */
static void test_req_to_query(void **state)
{
	static const uint8_t want[SA_MAD_SIZE] = {
		[0] = 0x01,
		0x03,
		0x02,
		0x12, /* GetTable */
		[8] = 0x01,
		0x02,
		0x03,
		0x04,
		0x05,
		0x06,
		0x07,
		0x08,
		[16] = 0x00,
		0x35, /* PathRecord */
		[48] = 0,
		0,
		0,
		0,
		0,
		0x03,
		0xbc,
		0x0c,
		[D + 8] = 0xfe,
		0x80,
		[D + 21] = 0x20,
		[D + 23] = 0x00,
		[D + 24] = 0xfe,
		0x80,
		[D + 37] = 0x10,
		[D + 39] = 0x01,
		[D + 48] = 0x00, /* TClass 0 */
		[D + 49] = 0x81, /* Reversible, NumbPath 1 */
		[D + 50] = 0xff,
		0xff, /* P_Key */
		[D + 52] = 0x00,
		0x00, /* QoSClass 0, SL 0 */
		[D + 54] = 0x83, /* MTU selector exactly, 1024 */
	};
	struct sa_path_rec rec, got;
	struct sa_path_want w;
	struct cm_req req;
	struct sa_msg m;
	uint8_t mad[SA_MAD_SIZE];

	(void)state;
	capture_rec(1, &rec);
	memset(&req, 0, sizeof(req));
	assert_int_equal(sa_path_to_req(&rec, SA_PATH_PRIMARY, 0, &req), 0);
	sa_path_want_from_req(&req, SA_PATH_PRIMARY, &w);
	assert_int_equal(sa_path_query_encode(&w, TID, mad), SA_MAD_SIZE);
	assert_memory_equal(mad, want, SA_MAD_SIZE);

	assert_int_equal(
		sa_mad_decode(mad, SA_MAD_SIZE, SA_DECODE_STRICT, &m, NULL), 0);
	assert_int_equal(sa_msg_path_rec(&m, 0, &got), 0);
	assert_int_equal(m.sa.comp_mask,
			 SA_PR_COMP_DGID | SA_PR_COMP_SGID | SA_PR_COMP_TCLASS |
				 SA_PR_COMP_REVERSIBLE | SA_PR_COMP_NUMB_PATH |
				 SA_PR_COMP_PKEY | SA_PR_COMP_SL |
				 SA_PR_COMP_MTU_SELECTOR | SA_PR_COMP_MTU);
	assert_memory_equal(got.dgid, rec.dgid, 16);
	assert_memory_equal(got.sgid, rec.sgid, 16);
	assert_int_equal(got.tclass, rec.tclass);
	assert_int_equal(got.reversible, rec.reversible);
	assert_int_equal(got.numb_path, 1);
	assert_int_equal(got.pkey, rec.pkey);
	assert_int_equal(got.sl, rec.sl);
	assert_int_equal(got.mtu_selector, SA_SEL_EXACTLY);
	assert_int_equal(got.mtu, rec.mtu);
}

/*
 * The query for a new connection: only what is known. Without P_Key,
 * service id or program settings, DGID | SGID | Reversible | NumbPath;
 * each setting adds its rows, and overrides that the SA does not choose
 * (hop limit, flow label, rate, ACK timeout) add none.
 */
static void test_query_masks(void **state)
{
	struct sa_path_rec t;
	struct sa_path_want w;
	uint64_t base = SA_PR_COMP_DGID | SA_PR_COMP_SGID |
			SA_PR_COMP_REVERSIBLE | SA_PR_COMP_NUMB_PATH;

	(void)state;
	memset(&w, 0, sizeof(w));
	memcpy(w.dgid, gid_20_0, 16);
	memcpy(w.sgid, gid_10_1, 16);
	assert_int_equal(sa_path_query(&w, &t), base);
	assert_int_equal(t.numb_path, 1);
	assert_int_equal(t.reversible, 1);
	assert_memory_equal(t.dgid, gid_20_0, 16);

	w.flags = CMP_PATH_FLAG_HOP_LIMIT | CMP_PATH_FLAG_FLOW_LABEL |
		  CMP_PATH_FLAG_PACKET_RATE | CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT;
	assert_int_equal(sa_path_query(&w, &t), base);

	w.pkey = 0x8001;
	w.service_id = 0x0000000001061c06ULL;
	assert_int_equal(sa_path_query(&w, &t),
			 base | SA_PR_COMP_PKEY | SA_PR_COMP_SERVICE_ID);
	assert_int_equal(t.pkey, 0x8001);
	assert_int_equal(sa_path_rec_service_id(&t), 0x0000000001061c06ULL);

	w.flags = CMP_PATH_FLAG_SL;
	w.sl = 7;
	w.service_id = 0;
	assert_int_equal(sa_path_query(&w, &t),
			 base | SA_PR_COMP_PKEY | SA_PR_COMP_SL);
	assert_int_equal(t.sl, 7);
	assert_int_equal(t.mtu_selector, 0);

	w.flags = CMP_PATH_FLAG_MTU | CMP_PATH_FLAG_TRAFFIC_CLASS;
	w.mtu = CM_MTU_4096;
	w.traffic_class = 0x20;
	assert_int_equal(sa_path_query(&w, &t),
			 base | SA_PR_COMP_PKEY | SA_PR_COMP_MTU_SELECTOR |
				 SA_PR_COMP_MTU | SA_PR_COMP_TCLASS);
	assert_int_equal(t.mtu, CM_MTU_4096);
	assert_int_equal(t.mtu_selector, SA_SEL_EXACTLY);
	assert_int_equal(t.tclass, 0x20);
	assert_int_equal(t.sl, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_to_req),
		cmocka_unit_test(test_table_to_req_alternate),
		cmocka_unit_test(test_selectors_are_values),
		cmocka_unit_test(test_ack_timeout),
		cmocka_unit_test(test_unusable),
		cmocka_unit_test(test_to_cmp),
		cmocka_unit_test(test_req_to_query),
		cmocka_unit_test(test_query_masks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
