// SPDX-License-Identifier: MIT
/*
 * MAD capture framing (proto/pcap.c): golden bytes and bounds.
 *
 * The golden headers below were written by hand, field by field, from the
 * tcpdump.org pcap format, IBTA Vol 1 7.7 (LRH), 8.3 (GRH), 9.2 (BTH), 9.3
 * (DETH), 7.8 (ICRC, VCRC), Annex A17 (RoCE v2) and RFC 791/768/8200; NOT
 * from the encoder. Only the CRCs and the Internet checksums are machine
 * computed, and by a separate program: Python's zlib.crc32 for the ICRC
 * over the masked bytes, a bit-by-bit CRC-16 (polynomial 0x100B, reflected,
 * ones in and out) for the VCRC, and the RFC 1071 sum for the checksums.
 * If a test fails, find out from the spec which side is wrong; do not copy
 * the encoder's output over the golden bytes.
 *
 * The ICRC rules themselves (which fields are masked, the byte order on
 * the wire) are checked against a packet captured from a ConnectX-4 Lx.
 *
 * Run as "test_pcap --write-ib FILE --write-roce FILE", it writes two
 * captures of whole CM conversations for tests/unit/pcap_tshark.sh to
 * decode with tshark, and runs no tests.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cm_mad.h"
#include "pcap.h"

/* clang-format off */

/* The tcpdump.org pcap file header, written little-endian. */
static const uint8_t golden_file_hdr_ib[PCAP_FILE_HDR_SIZE] = {
	0x4d, 0x3c, 0xb2, 0xa1,	/* magic 0xA1B23C4D: nanosecond stamps */
	0x02, 0x00,		/* version major 2 */
	0x04, 0x00,		/* version minor 4 */
	0x00, 0x00, 0x00, 0x00,	/* thiszone 0: UTC */
	0x00, 0x00, 0x00, 0x00,	/* sigfigs 0 */
	0xff, 0xff, 0x00, 0x00,	/* snaplen 65535 */
	0xf7, 0x00, 0x00, 0x00,	/* link type 247, LINKTYPE_INFINIBAND */
};

/*
 * The MAD every record carries: a DREQ (IBTA 12.6.10, Table 112) with
 * local comm ID 0x11223344, remote comm ID 0x55667788, remote QPN
 * 0xABCDEF, TID 0x0102030405060708. Input, not output, of the encoder.
 */
static const uint8_t golden_mad[CM_MAD_SIZE] = {
	[0] = 0x01,			/* base version */
	[1] = 0x07,			/* management class: CM */
	[2] = 0x02,			/* class version */
	[3] = 0x03,			/* method: Send */
	[8] = 0x01, 0x02, 0x03, 0x04,	/* TID */
	[12] = 0x05, 0x06, 0x07, 0x08,
	[16] = 0x00, 0x15,		/* attribute id: DREQ */
	[24] = 0x11, 0x22, 0x33, 0x44,	/* local comm ID */
	[28] = 0x55, 0x66, 0x77, 0x88,	/* remote comm ID */
	[32] = 0xab, 0xcd, 0xef,	/* remote QPN */
	[35] = 0x00,			/* reserved */
	/* private data: zero */
};

/* Record header: 1700000000.123456789 s, little-endian. */
#define GOLDEN_REC_HDR(len_lo, len_hi)					\
	0x00, 0xf1, 0x53, 0x65,	/* ts_sec 1700000000 = 0x6553F100 */	\
	0x15, 0xcd, 0x5b, 0x07,	/* ts_nsec 123456789 = 0x075BCD15 */	\
	len_lo, len_hi, 0x00, 0x00,	/* captured length */		\
	len_lo, len_hi, 0x00, 0x00	/* original length */

/* IBTA 9.2: BTH, the same in every record. */
#define GOLDEN_BTH							\
	0x64,			/* OpCode: UD SEND Only */		\
	0x00,			/* SE 0, M 0, PadCnt 0, TVer 0 */	\
	0x80, 0x01,		/* P_Key 0x8001 */			\
	0x00,			/* Resv8a */				\
	0x00, 0x00, 0x01,	/* DestQP 1 */				\
	0x00,			/* A 0, reserved */			\
	0x0a, 0x0b, 0x0c	/* PSN 0x0A0B0C */

/* IBTA 9.3: DETH. */
#define GOLDEN_DETH							\
	0x80, 0x01, 0x00, 0x00,	/* Q_Key 0x80010000 */			\
	0x00,			/* reserved */				\
	0x00, 0x00, 0x01	/* SrcQP 1 */

#define GOLDEN_SGID							\
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,			\
	0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3
#define GOLDEN_DGID							\
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,			\
	0x00, 0x02, 0xc9, 0x03, 0x00, 0xd4, 0xe5, 0xf6

/* IB, no GRH: 290-byte frame. */
static const uint8_t golden_ib_local_head[] = {
	GOLDEN_REC_HDR(0x22, 0x01),	/* 290 */
	/* IBTA 7.7: LRH */
	0x00,			/* VL 0, LVer 0 */
	0x92,			/* SL 9, reserved, LNH 2 (IBA local) */
	0x56, 0x78,		/* DLID 0x5678 */
	0x00, 0x48,		/* reserved, PktLen 72 words (288 bytes) */
	0x12, 0x34,		/* SLID 0x1234 */
	GOLDEN_BTH,
	GOLDEN_DETH,
};
static const uint8_t golden_ib_local_tail[] = {
	0x12, 0x4f, 0x13, 0xe2,	/* ICRC 0xE2134F12, LSB first */
	0xc0, 0x64,		/* VCRC 0x64C0, LSB first */
};

/* IB with GRH: 330-byte frame. */
static const uint8_t golden_ib_global_head[] = {
	GOLDEN_REC_HDR(0x4a, 0x01),	/* 330 */
	/* IBTA 7.7: LRH */
	0x00,			/* VL 0, LVer 0 */
	0x93,			/* SL 9, reserved, LNH 3 (IBA global) */
	0x56, 0x78,		/* DLID 0x5678 */
	0x00, 0x52,		/* reserved, PktLen 82 words (328 bytes) */
	0x12, 0x34,		/* SLID 0x1234 */
	/* IBTA 8.3: GRH */
	0x62, 0x81, 0x23, 0x45,	/* IPVer 6, TClass 0x28, FlowLabel 0x12345 */
	0x01, 0x18,		/* PayLen 280: BTH..ICRC */
	0x1b,			/* NxtHdr: IBA transport */
	0x40,			/* HopLmt 64 */
	GOLDEN_SGID,
	GOLDEN_DGID,
	GOLDEN_BTH,
	GOLDEN_DETH,
};
static const uint8_t golden_ib_global_tail[] = {
	0x3e, 0xb6, 0x0f, 0x32,	/* ICRC 0x320FB63E */
	0xe9, 0x50,		/* VCRC 0x50E9 */
};

/* Ethernet II: DA 02:00:00:00:d4:e6, SA 02:00:00:00:a1:b3. */
#define GOLDEN_ETH(type_hi, type_lo)					\
	0x02, 0x00, 0x00, 0x00, 0xd4, 0xe6,				\
	0x02, 0x00, 0x00, 0x00, 0xa1, 0xb3,				\
	type_hi, type_lo

/* RoCE v2 over IPv4: 322-byte frame. */
static const uint8_t golden_roce4_head[] = {
	GOLDEN_REC_HDR(0x42, 0x01),	/* 322 */
	GOLDEN_ETH(0x08, 0x00),		/* IPv4 */
	/* RFC 791: IPv4 */
	0x45,			/* version 4, IHL 5 */
	0x68,			/* TOS: DSCP 26, ECN 0 */
	0x01, 0x34,		/* total length 308 */
	0x00, 0x00,		/* identification */
	0x40, 0x00,		/* DF, fragment offset 0 */
	0x40,			/* TTL 64 */
	0x11,			/* protocol UDP */
	0xb5, 0xe2,		/* header checksum */
	0xc0, 0xa8, 0x01, 0x0a,	/* 192.168.1.10 */
	0xc0, 0xa8, 0x01, 0x14,	/* 192.168.1.20 */
	/* RFC 768: UDP */
	0xe3, 0x41,		/* source port: 0xC000 | fold(0x12345) */
	0x12, 0xb7,		/* destination port 4791 */
	0x01, 0x20,		/* length 288 */
	0x00, 0x00,		/* checksum: none */
	GOLDEN_BTH,
	GOLDEN_DETH,
};
static const uint8_t golden_roce4_tail[] = {
	0xb7, 0x51, 0x7c, 0x4f,	/* ICRC 0x4F7C51B7 */
};

/* RoCE v2 over IPv6: 342-byte frame. */
static const uint8_t golden_roce6_head[] = {
	GOLDEN_REC_HDR(0x56, 0x01),	/* 342 */
	GOLDEN_ETH(0x86, 0xdd),		/* IPv6 */
	/* RFC 8200: IPv6 */
	0x66, 0x81, 0x23, 0x45,	/* version 6, TC 0x68, flow label 0x12345 */
	0x01, 0x20,		/* payload length 288 */
	0x11,			/* next header UDP */
	0x40,			/* hop limit 64 */
	GOLDEN_SGID,
	GOLDEN_DGID,
	/* RFC 768: UDP */
	0xe3, 0x41,		/* source port */
	0x12, 0xb7,		/* destination port 4791 */
	0x01, 0x20,		/* length 288 */
	0x1f, 0x53,		/* checksum (RFC 8200 8.1) */
	GOLDEN_BTH,
	GOLDEN_DETH,
};
static const uint8_t golden_roce6_tail[] = {
	0x5a, 0x6a, 0x36, 0x49,	/* ICRC 0x49366A5A */
};

/*
 * A RoCE v2 CNP captured from a ConnectX-4 Lx (published with scapy's RoCE
 * tests): Ethernet, IPv4 (TOS 0xC2, TTL 64), UDP (checksum 0), BTH opcode
 * 0x81, 16 bytes of padding and the ICRC the NIC computed.
 */
static const uint8_t cx4_cnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00,
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61,
	0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
	0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x82, 0xfd, 0x00, 0x2a,
};

/* clang-format on */

static const struct timespec golden_ts = { 1700000000, 123456789 };

static struct pcap_ib_addr golden_addr(void)
{
	struct pcap_ib_addr a = {
		.slid = 0x1234,
		.dlid = 0x5678,
		.sgid = { GOLDEN_SGID },
		.dgid = { GOLDEN_DGID },
		.sl = 9,
		.traffic_class = 0x28,
		.flow_label = 0x12345,
		.hop_limit = 64,
		.pkey = 0x8001,
		.sqpn = 1,
		.dqpn = 1,
		.qkey = PCAP_GSI_QKEY,
		.psn = 0x0A0B0C,
		.smac = { 0x02, 0x00, 0x00, 0x00, 0xa1, 0xb3 },
		.dmac = { 0x02, 0x00, 0x00, 0x00, 0xd4, 0xe6 },
	};
	return a;
}

static void set_v4_mapped(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c,
			  uint8_t d)
{
	memset(gid, 0, CM_GID_SIZE);
	gid[10] = gid[11] = 0xFF;
	gid[12] = a;
	gid[13] = b;
	gid[14] = c;
	gid[15] = d;
}

/* The record must be head | golden MAD | tail, and nothing more. */
static void expect_record(const uint8_t *out, int len, const uint8_t *head,
			  size_t head_len, const uint8_t *tail, size_t tail_len)
{
	assert_int_equal(len, head_len + CM_MAD_SIZE + tail_len);
	assert_memory_equal(out, head, head_len);
	assert_memory_equal(out + head_len, golden_mad, CM_MAD_SIZE);
	assert_memory_equal(out + head_len + CM_MAD_SIZE, tail, tail_len);
}

static void test_file_header(void **state)
{
	uint8_t out[PCAP_FILE_HDR_SIZE];

	assert_int_equal(
		pcap_file_header(out, sizeof(out), PCAP_LINKTYPE_INFINIBAND),
		PCAP_FILE_HDR_SIZE);
	assert_memory_equal(out, golden_file_hdr_ib, sizeof(out));

	assert_int_equal(
		pcap_file_header(out, sizeof(out), PCAP_LINKTYPE_ETHERNET),
		PCAP_FILE_HDR_SIZE);
	assert_memory_equal(out, golden_file_hdr_ib, 20);
	assert_int_equal(out[20], 0x01);
	assert_int_equal(out[21] | out[22] | out[23], 0);
}

/* The catalogue "check" values: each CRC over the nine bytes "123456789". */
static void test_crc_check_values(void **state)
{
	const uint8_t s[] = "123456789";

	assert_int_equal(pcap_crc32(0, s, 9), 0xCBF43926);
	assert_int_equal(pcap_crc16(0, s, 9), 0x0A3D);
	/* Continuing over a split gives the same result. */
	assert_int_equal(pcap_crc32(pcap_crc32(0, s, 4), s + 4, 5), 0xCBF43926);
	assert_int_equal(pcap_crc16(pcap_crc16(0, s, 4), s + 4, 5), 0x0A3D);
}

/*
 * The RoCE v2 ICRC of a real NIC: 8 bytes of ones for the LRH, the IPv4
 * header with TOS, TTL and checksum as ones, UDP with its checksum as ones,
 * BTH with Resv8a as ones, the rest as is; stored least significant byte
 * first.
 */
static void test_icrc_real_capture(void **state)
{
	uint8_t m[8 + sizeof(cx4_cnp)];
	size_t n = sizeof(cx4_cnp) - 14 - 4;
	uint8_t le[4];
	uint32_t icrc;

	memset(m, 0xFF, 8);
	memcpy(m + 8, cx4_cnp + 14, n);
	m[8 + 1] = 0xFF; /* TOS */
	m[8 + 8] = 0xFF; /* TTL */
	m[8 + 10] = m[8 + 11] = 0xFF; /* IP checksum */
	m[8 + 20 + 6] = m[8 + 20 + 7] = 0xFF; /* UDP checksum */
	m[8 + 28 + 4] = 0xFF; /* Resv8a */
	icrc = pcap_crc32(0, m, 8 + n);
	assert_int_equal(icrc, 0x2A00FD82);
	/* On the wire least significant byte first. */
	le[0] = (uint8_t)icrc;
	le[1] = (uint8_t)(icrc >> 8);
	le[2] = (uint8_t)(icrc >> 16);
	le[3] = (uint8_t)(icrc >> 24);
	assert_memory_equal(cx4_cnp + sizeof(cx4_cnp) - 4, le, 4);
}

static void test_ib_local(void **state)
{
	struct pcap_ib_addr a = golden_addr();
	uint8_t out[PCAP_RECORD_MAX];
	int len = pcap_ib_record(out, sizeof(out), &a, golden_mad, &golden_ts);

	expect_record(out, len, golden_ib_local_head,
		      sizeof(golden_ib_local_head), golden_ib_local_tail,
		      sizeof(golden_ib_local_tail));
	assert_int_equal(len, PCAP_REC_HDR_SIZE + PCAP_IB_LOCAL_FRAME_SIZE);
}

static void test_ib_global(void **state)
{
	struct pcap_ib_addr a = golden_addr();
	uint8_t out[PCAP_RECORD_MAX];
	int len;

	a.grh = true;
	len = pcap_ib_record(out, sizeof(out), &a, golden_mad, &golden_ts);
	expect_record(out, len, golden_ib_global_head,
		      sizeof(golden_ib_global_head), golden_ib_global_tail,
		      sizeof(golden_ib_global_tail));
	assert_int_equal(len, PCAP_REC_HDR_SIZE + PCAP_IB_GLOBAL_FRAME_SIZE);
}

static void test_roce_v4(void **state)
{
	struct pcap_ib_addr a = golden_addr();
	uint8_t out[PCAP_RECORD_MAX];
	int len;

	a.traffic_class = 0x68;
	set_v4_mapped(a.sgid, 192, 168, 1, 10);
	set_v4_mapped(a.dgid, 192, 168, 1, 20);
	len = pcap_roce_record(out, sizeof(out), &a, golden_mad, &golden_ts);
	expect_record(out, len, golden_roce4_head, sizeof(golden_roce4_head),
		      golden_roce4_tail, sizeof(golden_roce4_tail));
	assert_int_equal(len, PCAP_REC_HDR_SIZE + PCAP_ROCE_V4_FRAME_SIZE);
}

static void test_roce_v6(void **state)
{
	struct pcap_ib_addr a = golden_addr();
	uint8_t out[PCAP_RECORD_MAX];
	int len;

	a.traffic_class = 0x68;
	len = pcap_roce_record(out, sizeof(out), &a, golden_mad, &golden_ts);
	expect_record(out, len, golden_roce6_head, sizeof(golden_roce6_head),
		      golden_roce6_tail, sizeof(golden_roce6_tail));
	assert_int_equal(len, PCAP_REC_HDR_SIZE + PCAP_ROCE_V6_FRAME_SIZE);
}

/* Fields of the IB form the RoCE form ignores do not change its bytes. */
static void test_roce_ignores_ib_fields(void **state)
{
	struct pcap_ib_addr a = golden_addr();
	uint8_t out[PCAP_RECORD_MAX];
	int len;

	a.traffic_class = 0x68;
	a.slid = 0xFFFF;
	a.dlid = 0;
	a.sl = 15;
	a.grh = true;
	len = pcap_roce_record(out, sizeof(out), &a, golden_mad, &golden_ts);
	expect_record(out, len, golden_roce6_head, sizeof(golden_roce6_head),
		      golden_roce6_tail, sizeof(golden_roce6_tail));
}

enum rec_kind { REC_IB_LOCAL, REC_IB_GLOBAL, REC_ROCE_V4, REC_ROCE_V6 };

static int make_record(enum rec_kind kind, uint8_t *buf, size_t size)
{
	struct pcap_ib_addr a = golden_addr();

	switch (kind) {
	case REC_IB_LOCAL:
		return pcap_ib_record(buf, size, &a, golden_mad, &golden_ts);
	case REC_IB_GLOBAL:
		a.grh = true;
		return pcap_ib_record(buf, size, &a, golden_mad, &golden_ts);
	case REC_ROCE_V4:
		set_v4_mapped(a.sgid, 192, 168, 1, 10);
		set_v4_mapped(a.dgid, 192, 168, 1, 20);
		return pcap_roce_record(buf, size, &a, golden_mad, &golden_ts);
	case REC_ROCE_V6:
		return pcap_roce_record(buf, size, &a, golden_mad, &golden_ts);
	}
	return -EINVAL;
}

/*
 * Every buffer one byte or more too short is refused with -ENOSPC and left
 * untouched; the exact size is enough.
 */
static void test_enospc(void **state)
{
	static const enum rec_kind kinds[] = {
		REC_IB_LOCAL,
		REC_IB_GLOBAL,
		REC_ROCE_V4,
		REC_ROCE_V6,
	};
	uint8_t buf[PCAP_RECORD_MAX + 1], canary[PCAP_RECORD_MAX + 1];

	memset(canary, 0xA5, sizeof(canary));
	for (size_t size = 0; size < PCAP_FILE_HDR_SIZE; size++) {
		memset(buf, 0xA5, sizeof(buf));
		assert_int_equal(pcap_file_header(buf, size, 1), -ENOSPC);
		assert_memory_equal(buf, canary, sizeof(buf));
	}
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int need = make_record(kinds[k], buf, sizeof(buf));

		assert_true(need > 0);
		for (size_t size = 0; size < (size_t)need; size++) {
			memset(buf, 0xA5, sizeof(buf));
			assert_int_equal(make_record(kinds[k], buf, size),
					 -ENOSPC);
			assert_memory_equal(buf, canary, sizeof(buf));
		}
		assert_int_equal(make_record(kinds[k], buf, need), need);
	}
}

static void expect_einval(const struct pcap_ib_addr *a,
			  const struct timespec *ts)
{
	uint8_t buf[PCAP_RECORD_MAX];

	assert_int_equal(pcap_ib_record(buf, sizeof(buf), a, golden_mad, ts),
			 -EINVAL);
	assert_int_equal(pcap_roce_record(buf, sizeof(buf), a, golden_mad, ts),
			 -EINVAL);
}

/* Fields wider than their wire field are refused, not truncated. */
static void test_einval(void **state)
{
	struct pcap_ib_addr a;
	struct timespec ts;
	uint8_t buf[PCAP_RECORD_MAX];

	a = golden_addr();
	a.sl = 16;
	assert_int_equal(
		pcap_ib_record(buf, sizeof(buf), &a, golden_mad, &golden_ts),
		-EINVAL);
	a = golden_addr();
	a.flow_label = 1u << 20;
	expect_einval(&a, &golden_ts);
	a = golden_addr();
	a.sqpn = 1u << 24;
	expect_einval(&a, &golden_ts);
	a = golden_addr();
	a.dqpn = 1u << 24;
	expect_einval(&a, &golden_ts);
	a = golden_addr();
	a.psn = 1u << 24;
	expect_einval(&a, &golden_ts);

	a = golden_addr();
	ts = golden_ts;
	ts.tv_nsec = 1000000000L;
	expect_einval(&a, &ts);
	ts.tv_nsec = -1;
	expect_einval(&a, &ts);
	ts = golden_ts;
	ts.tv_sec = -1;
	expect_einval(&a, &ts);

	/* One IPv4-mapped GID and one IPv6 GID make no RoCE v2 packet. */
	a = golden_addr();
	set_v4_mapped(a.sgid, 192, 168, 1, 10);
	assert_int_equal(
		pcap_roce_record(buf, sizeof(buf), &a, golden_mad, &golden_ts),
		-EINVAL);
}

/*
 * --write-ib / --write-roce: whole conversations for pcap_tshark.sh. Node A
 * (LID 0x11, QPN 0x000abc) connects to node B (LID 0x22, QPN 0x000def),
 * then disconnects; then A's second REQ is rejected. Every value below is
 * what pcap_tshark.sh looks for in tshark's output.
 */
struct conv_step {
	enum cm_msg_type type;
	bool from_a;
};

static const struct conv_step conv[] = {
	{ CM_MSG_REQ, true },  { CM_MSG_REP, false },  { CM_MSG_RTU, true },
	{ CM_MSG_DREQ, true }, { CM_MSG_DREP, false }, { CM_MSG_REQ, true },
	{ CM_MSG_REJ, false },
};

#define CONV_SERVICE_ID 0x0000000001064E20ULL /* RDMA IP CM, TCP port 20000 */
#define CONV_A_COMM_ID 0xA0A0A001u
#define CONV_B_COMM_ID 0xB0B0B002u
#define CONV_A_COMM_ID2 0xA0A0A003u
#define CONV_A_QPN 0x000ABCu
#define CONV_B_QPN 0x000DEFu

static int conv_mad(size_t i, uint8_t mad[CM_MAD_SIZE])
{
	struct cm_msg m;
	bool second = i >= 5;

	cm_msg_init(&m, conv[i].type, 0x1000 + (second ? 1 : 0));
	switch (conv[i].type) {
	case CM_MSG_REQ:
		m.req.local_comm_id = second ? CONV_A_COMM_ID2 : CONV_A_COMM_ID;
		m.req.service_id = CONV_SERVICE_ID;
		m.req.local_ca_guid = 0x0002C90300A1B2C3ULL;
		m.req.local_qpn = CONV_A_QPN;
		m.req.starting_psn = 0x123456;
		m.req.pkey = 0xFFFF;
		m.req.path_mtu = CM_MTU_1024;
		m.req.transport_type = CM_TRANSPORT_RC;
		m.req.primary_local_lid = 0x11;
		m.req.primary_remote_lid = 0x22;
		m.req.primary_sl = 0;
		m.req.primary_subnet_local = 1;
		m.req.max_cm_retries = 15;
		break;
	case CM_MSG_REP:
		m.rep.local_comm_id = CONV_B_COMM_ID;
		m.rep.remote_comm_id = CONV_A_COMM_ID;
		m.rep.local_qpn = CONV_B_QPN;
		m.rep.starting_psn = 0x654321;
		m.rep.local_ca_guid = 0x0002C90300D4E5F6ULL;
		break;
	case CM_MSG_RTU:
		m.rtu.local_comm_id = CONV_A_COMM_ID;
		m.rtu.remote_comm_id = CONV_B_COMM_ID;
		break;
	case CM_MSG_DREQ:
		m.dreq.local_comm_id = CONV_A_COMM_ID;
		m.dreq.remote_comm_id = CONV_B_COMM_ID;
		m.dreq.remote_qpn = CONV_B_QPN;
		break;
	case CM_MSG_DREP:
		m.drep.local_comm_id = CONV_B_COMM_ID;
		m.drep.remote_comm_id = CONV_A_COMM_ID;
		break;
	case CM_MSG_REJ:
		m.rej.local_comm_id = 0;
		m.rej.remote_comm_id = CONV_A_COMM_ID2;
		m.rej.message_rejected = CM_MSG_REF_REQ;
		m.rej.reason = CM_REJ_INVALID_SERVICE_ID;
		break;
	default:
		break;
	}
	return cm_mad_encode(&m, mad);
}

static void conv_addr(size_t i, bool roce, struct pcap_ib_addr *a)
{
	bool a_to_b = conv[i].from_a;

	*a = (struct pcap_ib_addr){
		.slid = a_to_b ? 0x11 : 0x22,
		.dlid = a_to_b ? 0x22 : 0x11,
		/* IB: the second exchange goes through a GRH. */
		.grh = i >= 5,
		.hop_limit = 64,
		.pkey = 0xFFFF,
		.sqpn = PCAP_GSI_QPN,
		.dqpn = PCAP_GSI_QPN,
		.qkey = PCAP_GSI_QKEY,
		.psn = (uint32_t)i,
		.smac = { 0x02, 0, 0, 0, 0, a_to_b ? 0x0a : 0x0b },
		.dmac = { 0x02, 0, 0, 0, 0, a_to_b ? 0x0b : 0x0a },
	};
	if (roce && i < 5) {
		/* RoCE: IPv4 first, IPv6 for the second exchange. */
		set_v4_mapped(a->sgid, 192, 168, 1, a_to_b ? 10 : 20);
		set_v4_mapped(a->dgid, 192, 168, 1, a_to_b ? 20 : 10);
	} else {
		const uint8_t ga[] = { GOLDEN_SGID }, gb[] = { GOLDEN_DGID };

		memcpy(a->sgid, a_to_b ? ga : gb, CM_GID_SIZE);
		memcpy(a->dgid, a_to_b ? gb : ga, CM_GID_SIZE);
	}
}

static int write_capture(const char *path, bool roce)
{
	uint8_t buf[PCAP_RECORD_MAX], mad[CM_MAD_SIZE];
	FILE *f = fopen(path, "wb");
	int len;

	if (!f) {
		perror(path);
		return 1;
	}
	len = pcap_file_header(buf, sizeof(buf),
			       roce ? PCAP_LINKTYPE_ETHERNET :
				      PCAP_LINKTYPE_INFINIBAND);
	fwrite(buf, 1, (size_t)len, f);
	for (size_t i = 0; i < sizeof(conv) / sizeof(conv[0]); i++) {
		struct pcap_ib_addr a;
		/* 250 us between MADs. */
		struct timespec ts = { 1700000000, (long)(i * 250000) };

		conv_addr(i, roce, &a);
		len = conv_mad(i, mad);
		if (!len)
			len = roce ? pcap_roce_record(buf, sizeof(buf), &a, mad,
						      &ts) :
				     pcap_ib_record(buf, sizeof(buf), &a, mad,
						    &ts);
		if (len < 0) {
			fprintf(stderr, "record %zu: %s\n", i, strerror(-len));
			fclose(f);
			return 1;
		}
		fwrite(buf, 1, (size_t)len, f);
	}
	if (fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_header),
		cmocka_unit_test(test_crc_check_values),
		cmocka_unit_test(test_icrc_real_capture),
		cmocka_unit_test(test_ib_local),
		cmocka_unit_test(test_ib_global),
		cmocka_unit_test(test_roce_v4),
		cmocka_unit_test(test_roce_v6),
		cmocka_unit_test(test_roce_ignores_ib_fields),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test(test_einval),
	};

	if (argc > 1) {
		int err = 0;

		for (int i = 1; i < argc; i += 2) {
			bool roce = !strcmp(argv[i], "--write-roce");

			if ((!roce && strcmp(argv[i], "--write-ib")) ||
			    i + 1 >= argc) {
				fprintf(stderr,
					"usage: %s [--write-ib FILE] "
					"[--write-roce FILE]\n",
					argv[0]);
				return 2;
			}
			err |= write_capture(argv[i + 1], roce);
		}
		return err;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
