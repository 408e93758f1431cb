// SPDX-License-Identifier: MIT
/*
 * Golden bytes for the eleven CM messages, checked in both directions.
 *
 * Every array below was written by hand from the IBTA Vol 1 chapter 12
 * message tables (Tables 106-120: byte offset, bit offset counted from the
 * most significant bit of the byte, width), cross-read against the Linux
 * kernel's include/rdma/ibta_vol1_c12.h, and NOT from proto/cm_fields.def:
 * the point is to have a second, independent statement of the wire layout
 * to hold the field table, the encoder and the decoder against. If one of
 * these tests fails, work out from the IBTA table which side is wrong; do
 * not "fix" the bytes to match the encoder.
 *
 * Each byte is placed with a designated initializer whose index is the MAD
 * offset: H + n is message byte n as the IBTA tables number it (MAD byte
 * 24 + n), so the compiler checks the offsets the comments would otherwise
 * only claim, and -Woverride-init catches two lines claiming the same byte.
 * Reserved bytes are written out as zero; long runs of zero private data are
 * left to the implicit zero fill and say so.
 *
 * The values are chosen to be distinctive and bit-asymmetric (a 5-bit 0x16
 * reads back as 0x0d if the bit order is reversed), with neighbouring
 * sub-byte fields all non-zero, so a field at the wrong place, of the wrong
 * width or in the wrong bit order changes the bytes.
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

#define H CM_MAD_HDR_SIZE
#define GOLDEN_TID 0x0102030405060708ULL

/* clang-format off */

/*
 * IBTA 13.4.3 (common MAD header), identical for every message but the
 * attribute id: base version 1, class 0x07 (CM), class version 2, method
 * 0x03 (Send), status 0, class specific 0, TID, attribute id, reserved 0,
 * attribute modifier 0.
 */
#define GOLDEN_HDR(attr_hi, attr_lo)					\
	[0] = 0x01,			/* base version */		\
	[1] = 0x07,			/* management class: CM */	\
	[2] = 0x02,			/* class version */		\
	[3] = 0x03,			/* method: Send */		\
	[4] = 0x00, 0x00,		/* status */			\
	[6] = 0x00, 0x00,		/* class specific */		\
	[8] = 0x01, 0x02, 0x03, 0x04,	/* TID 0x0102030405060708 */	\
	[12] = 0x05, 0x06, 0x07, 0x08,					\
	[16] = (attr_hi), (attr_lo),	/* attribute id */		\
	[18] = 0x00, 0x00,		/* reserved */			\
	[20] = 0x00, 0x00, 0x00, 0x00	/* attribute modifier */

#define GOLDEN_MAD_HDR(attr)                                                   \
	{ .base_version = 1, .mgmt_class = 0x07, .class_version = 2,           \
	  .method = 0x03, .status = 0, .class_specific = 0,                    \
	  .tid = GOLDEN_TID, .attr_id = (attr), .rsvd = 0, .attr_mod = 0 }

/* IBTA Table 106: REQ. */
static const uint8_t req_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x10),
	[H + 0] = 0x11, 0x22, 0x33, 0x44,	/* local comm ID */
	[H + 4] = 0x00, 0x00, 0x00, 0x00,	/* reserved */
	/* service ID 0x1c2d3e4f5a6b7c8d */
	[H + 8] = 0x1c, 0x2d, 0x3e, 0x4f,
	[H + 12] = 0x5a, 0x6b, 0x7c, 0x8d,
	/* local CA GUID 0x0002c90300a1b2c3 */
	[H + 16] = 0x00, 0x02, 0xc9, 0x03,
	[H + 20] = 0x00, 0xa1, 0xb2, 0xc3,
	[H + 24] = 0x00, 0x00, 0x00, 0x00,	/* reserved */
	[H + 28] = 0x80, 0x01, 0xa2, 0xb3,	/* local Q_Key 0x8001a2b3 */
	[H + 32] = 0x12, 0x34, 0x56,		/* local QPN 0x123456 */
	[H + 35] = 0x0b,			/* responder resources 11 */
	[H + 36] = 0x23, 0x45, 0x67,		/* local EECN 0x234567 */
	[H + 39] = 0x0c,			/* initiator depth 12 */
	[H + 40] = 0x34, 0x56, 0x78,		/* remote EECN 0x345678 */
	/* remote CM resp timeout 0x16 (10110) | transport UC (01) | e2e fc 1 */
	[H + 43] = 0xb3,
	[H + 44] = 0x45, 0x67, 0x89,		/* starting PSN 0x456789 */
	/* local CM resp timeout 0x0d (01101) | retry count 6 (110) */
	[H + 47] = 0x6e,
	[H + 48] = 0x80, 0x12,			/* P_Key 0x8012 */
	/* path MTU 4 (0100) | RDC exists 1 | RNR retry count 3 (011) */
	[H + 50] = 0x4b,
	/* max CM retries 12 (1100) | SRQ 1 | extended transport type 0 */
	[H + 51] = 0xc8,
	[H + 52] = 0x1a, 0x2b,			/* primary local port LID */
	[H + 54] = 0x3c, 0x4d,			/* primary remote port LID */
	/* primary local port GID */
	[H + 56] = 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
	[H + 64] = 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
	/* primary remote port GID */
	[H + 72] = 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57,
	[H + 80] = 0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
	[H + 88] = 0xab, 0xcd,			/* primary flow label 0xabcde */
	[H + 90] = 0xe0,			/* ... e | 4 reserved bits */
	[H + 91] = 0x07,			/* 2 rsvd | packet rate 7 */
	[H + 92] = 0x2e,			/* primary traffic class */
	[H + 93] = 0x42,			/* primary hop limit */
	/* primary SL 13 (1101) | subnet local 1 | 3 reserved bits */
	[H + 94] = 0xd8,
	/* primary local ACK timeout 0x13 (10011) | 3 reserved bits */
	[H + 95] = 0x98,
	[H + 96] = 0x5e, 0x6f,			/* alternate local port LID */
	[H + 98] = 0x7a, 0x8b,			/* alternate remote port LID */
	/* alternate local port GID */
	[H + 100] = 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
	[H + 108] = 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
	/* alternate remote port GID */
	[H + 116] = 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
	[H + 124] = 0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f,
	[H + 132] = 0x12, 0x34,			/* alt flow label 0x12345 */
	[H + 134] = 0x50,			/* ... 5 | 4 reserved bits */
	/* 2 rsvd | alt packet rate 10 */
	[H + 135] = 0x0a,
	[H + 136] = 0x1d,			/* alternate traffic class */
	[H + 137] = 0x3e,			/* alternate hop limit */
	/* alternate SL 3 (0011) | subnet local 0 | 3 reserved bits */
	[H + 138] = 0x30,
	/* alt local ACK timeout 0x0b (01011) | SAP supported 1 | 2 rsvd */
	[H + 139] = 0x5c,
	[H + 140] = 0xc0, 0xc1,			/* private data (92 bytes) */
	/* H + 142 .. H + 229: private data, zero */
	[H + 230] = 0xce, 0xcf,			/* ... end of private data */
};

/* IBTA Table 107: MRA. */
static const uint8_t mra_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x11),
	[H + 0] = 0x21, 0x32, 0x43, 0x54,	/* local comm ID */
	[H + 4] = 0x65, 0x76, 0x87, 0x98,	/* remote comm ID */
	[H + 8] = 0x40,				/* MRAed: REP (01) | 6 rsvd */
	/* service timeout 0x1a (11010) | 3 rsvd */
	[H + 9] = 0xd0,
	[H + 10] = 0xe1, 0xe2,			/* private data (222 bytes) */
	/* H + 12 .. H + 229: private data, zero */
	[H + 230] = 0xee, 0xef,			/* ... end of private data */
};

/* IBTA Table 108: REJ. */
static const uint8_t rej_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x12),
	[H + 0] = 0x31, 0x42, 0x53, 0x64,	/* local comm ID */
	[H + 4] = 0x75, 0x86, 0x97, 0xa8,	/* remote comm ID */
	/* message rejected 2 other (10) | 6 rsvd */
	[H + 8] = 0x80,
	/* ARI length 72 (1001000) | 1 rsvd */
	[H + 9] = 0x90,
	[H + 10] = 0x00, 0x1c,			/* reason 28, consumer reject */
	[H + 12] = 0xa0, 0xa1,			/* ARI (72 bytes) */
	/* H + 14 .. H + 81: ARI, zero */
	[H + 82] = 0xae, 0xaf,			/* ... end of ARI */
	[H + 84] = 0xb0, 0xb1,			/* private data (148 bytes) */
	/* H + 86 .. H + 229: private data, zero */
	[H + 230] = 0xbe, 0xbf,			/* ... end of private data */
};

/* IBTA Table 110: REP. */
static const uint8_t rep_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x13),
	[H + 0] = 0x41, 0x52, 0x63, 0x74,	/* local comm ID */
	[H + 4] = 0x85, 0x96, 0xa7, 0xb8,	/* remote comm ID */
	[H + 8] = 0x9a, 0x8b, 0x7c, 0x6d,	/* local Q_Key */
	[H + 12] = 0x65, 0x43, 0x21,		/* local QPN 0x654321 */
	[H + 15] = 0x00,			/* reserved */
	[H + 16] = 0x0f, 0xed, 0xcb,		/* local EECN 0x0fedcb */
	[H + 19] = 0x00,			/* reserved */
	[H + 20] = 0xab, 0xcd, 0xef,		/* starting PSN 0xabcdef */
	[H + 23] = 0x00,			/* reserved */
	[H + 24] = 0x1d,			/* responder resources */
	[H + 25] = 0x2e,			/* initiator depth */
	/* target ACK delay 0x19 (11001) | failover accepted (01) | e2e fc 0 */
	[H + 26] = 0xca,
	/* RNR retry count 3 (011) | SRQ 1 | 4 reserved bits */
	[H + 27] = 0x70,
	[H + 28] = 0xf4, 0xe3, 0xd2, 0xc1,	/* local CA GUID */
	[H + 32] = 0xb0, 0xa0, 0x90, 0x81,	/* 0xf4e3d2c1b0a09081 */
	[H + 36] = 0x90, 0x91,			/* private data (196 bytes) */
	/* H + 38 .. H + 229: private data, zero */
	[H + 230] = 0x9e, 0x9f,			/* ... end of private data */
};

/* IBTA Table 111: RTU. */
static const uint8_t rtu_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x14),
	[H + 0] = 0x51, 0x62, 0x73, 0x84,	/* local comm ID */
	[H + 4] = 0x95, 0xa6, 0xb7, 0xc8,	/* remote comm ID */
	[H + 8] = 0x60, 0x61,			/* private data (224 bytes) */
	/* H + 10 .. H + 229: private data, zero */
	[H + 230] = 0x6e, 0x6f,			/* ... end of private data */
};

/* IBTA Table 112: DREQ. */
static const uint8_t dreq_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x15),
	[H + 0] = 0x61, 0x72, 0x83, 0x94,	/* local comm ID */
	[H + 4] = 0xa5, 0xb6, 0xc7, 0xd8,	/* remote comm ID */
	[H + 8] = 0x7a, 0x5b, 0x3c,		/* remote QPN/EECN 0x7a5b3c */
	[H + 11] = 0x00,			/* reserved */
	[H + 12] = 0x50, 0x51,			/* private data (220 bytes) */
	/* H + 14 .. H + 229: private data, zero */
	[H + 230] = 0x5e, 0x5f,			/* ... end of private data */
};

/* IBTA Table 113: DREP. */
static const uint8_t drep_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x16),
	[H + 0] = 0x71, 0x82, 0x93, 0xa4,	/* local comm ID */
	[H + 4] = 0xb5, 0xc6, 0xd7, 0xe8,	/* remote comm ID */
	[H + 8] = 0x30, 0x31,			/* private data (224 bytes) */
	/* H + 10 .. H + 229: private data, zero */
	[H + 230] = 0x3e, 0x3f,			/* ... end of private data */
};

/* IBTA Table 115: LAP. */
static const uint8_t lap_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x19),
	[H + 0] = 0x81, 0x92, 0xa3, 0xb4,	/* local comm ID */
	[H + 4] = 0xc5, 0xd6, 0xe7, 0xf8,	/* remote comm ID */
	[H + 8] = 0x00, 0x00, 0x00, 0x00,	/* reserved */
	[H + 12] = 0x2b, 0x3c, 0x4d,		/* remote QPN/EECN 0x2b3c4d */
	/* remote CM response timeout 0x1c (11100) | 3 reserved bits */
	[H + 15] = 0xe0,
	[H + 16] = 0x00, 0x00, 0x00, 0x00,	/* reserved */
	[H + 20] = 0x4e, 0x5f,			/* alternate local port LID */
	[H + 22] = 0x6a, 0x7b,			/* alternate remote port LID */
	/* alternate local port GID */
	[H + 24] = 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
	[H + 32] = 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
	/* alternate remote port GID */
	[H + 40] = 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
	[H + 48] = 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
	[H + 56] = 0x9a, 0xbc,			/* alt flow label 0x9abcd */
	[H + 58] = 0xd0,			/* ... d | 4 reserved bits */
	[H + 59] = 0x5c,			/* alternate traffic class */
	[H + 60] = 0x3d,			/* alternate hop limit */
	/* 2 rsvd | alt packet rate 14 */
	[H + 61] = 0x0e,
	/* alternate SL 11 (1011) | subnet local 1 | 3 reserved bits */
	[H + 62] = 0xb8,
	/* alternate local ACK timeout 0x12 (10010) | 3 reserved bits */
	[H + 63] = 0x90,
	[H + 64] = 0x20, 0x21,			/* private data (168 bytes) */
	/* H + 66 .. H + 229: private data, zero */
	[H + 230] = 0x2e, 0x2f,			/* ... end of private data */
};

/* IBTA Table 116: APR. */
static const uint8_t apr_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x1a),
	[H + 0] = 0x91, 0xa2, 0xb3, 0xc4,	/* local comm ID */
	[H + 4] = 0xd5, 0xe6, 0xf7, 0x08,	/* remote comm ID */
	[H + 8] = 0x29,				/* additional info length 41 */
	[H + 9] = 0x0b,				/* AP status 11 (hop limit) */
	[H + 10] = 0x00, 0x00,			/* reserved */
	[H + 12] = 0xd0, 0xd1,			/* additional info (72 bytes) */
	/* H + 14 .. H + 81: additional info, zero */
	[H + 82] = 0xde, 0xdf,			/* ... end of additional info */
	[H + 84] = 0xe0, 0xe1,			/* private data (148 bytes) */
	/* H + 86 .. H + 229: private data, zero */
	[H + 230] = 0xee, 0xef,			/* ... end of private data */
};

/* IBTA Table 119: SIDR_REQ. */
static const uint8_t sidr_req_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x17),
	[H + 0] = 0xa1, 0xb2, 0xc3, 0xd4,	/* request ID */
	[H + 4] = 0x81, 0x23,			/* P_Key 0x8123 */
	[H + 6] = 0x00, 0x00,			/* reserved */
	/* service ID 0x0102a3b4c5d6e7f8 */
	[H + 8] = 0x01, 0x02, 0xa3, 0xb4,
	[H + 12] = 0xc5, 0xd6, 0xe7, 0xf8,
	[H + 16] = 0x40, 0x41,			/* private data (216 bytes) */
	/* H + 18 .. H + 229: private data, zero */
	[H + 230] = 0x4e, 0x4f,			/* ... end of private data */
};

/* IBTA Table 120: SIDR_REP. */
static const uint8_t sidr_rep_golden[CM_MAD_SIZE] = {
	GOLDEN_HDR(0x00, 0x18),
	[H + 0] = 0xb1, 0xc2, 0xd3, 0xe4,	/* request ID */
	[H + 4] = 0x04,				/* status 4, redirect */
	[H + 5] = 0x25,				/* additional info length 37 */
	[H + 6] = 0x00, 0x00,			/* reserved */
	[H + 8] = 0x5a, 0x6b, 0x7c,		/* QPN 0x5a6b7c */
	[H + 11] = 0x00,			/* reserved */
	/* service ID 0x2b3c4d5e6f708192 */
	[H + 12] = 0x2b, 0x3c, 0x4d, 0x5e,
	[H + 16] = 0x6f, 0x70, 0x81, 0x92,
	[H + 20] = 0x11, 0x33, 0x55, 0x77,	/* Q_Key 0x11335577 */
	[H + 24] = 0x80, 0x81,			/* class port info (72 bytes) */
	/* H + 26 .. H + 93: class port info, zero */
	[H + 94] = 0x8e, 0x8f,			/* ... end of class port info */
	[H + 96] = 0xf0, 0xf1,			/* private data (136 bytes) */
	/* H + 98 .. H + 229: private data, zero */
	[H + 230] = 0xfe, 0xff,			/* ... end of private data */
};

/* clang-format on */

/*
 * The same messages as host-order structs, values taken from the comments
 * above. GIDs are spelled out; long byte strings only at their ends.
 */
#define GID(b)                                                                 \
	{                                                                      \
		(b) + 0x0, (b) + 0x1, (b) + 0x2, (b) + 0x3, (b) + 0x4,         \
			(b) + 0x5, (b) + 0x6, (b) + 0x7, (b) + 0x8, (b) + 0x9, \
			(b) + 0xa, (b) + 0xb, (b) + 0xc, (b) + 0xd, (b) + 0xe, \
			(b) + 0xf                                              \
	}
#define ENDS(size, a, b, y, z)                                                 \
	{                                                                      \
		[0] = (a), [1] = (b), [(size)-2] = (y), [(size)-1] = (z)       \
	}

static const struct cm_msg req_want = {
	.hdr = GOLDEN_MAD_HDR(0x0010),
	.type = CM_MSG_REQ,
	.req = {
		.local_comm_id = 0x11223344,
		.service_id = 0x1c2d3e4f5a6b7c8dULL,
		.local_ca_guid = 0x0002c90300a1b2c3ULL,
		.local_qkey = 0x8001a2b3,
		.local_qpn = 0x123456,
		.responder_resources = 11,
		.local_eecn = 0x234567,
		.initiator_depth = 12,
		.remote_eecn = 0x345678,
		.remote_cm_resp_timeout = 0x16,
		.transport_type = CM_TRANSPORT_UC,
		.flow_control = 1,
		.starting_psn = 0x456789,
		.local_cm_resp_timeout = 0x0d,
		.retry_count = 6,
		.pkey = 0x8012,
		.path_mtu = CM_MTU_2048,
		.rdc_exists = 1,
		.rnr_retry_count = 3,
		.max_cm_retries = 12,
		.srq = 1,
		.ext_transport_type = 0,
		.primary_local_lid = 0x1a2b,
		.primary_remote_lid = 0x3c4d,
		.primary_local_gid = GID(0x40),
		.primary_remote_gid = GID(0x50),
		.primary_flow_label = 0xabcde,
		.primary_packet_rate = 7,
		.primary_traffic_class = 0x2e,
		.primary_hop_limit = 0x42,
		.primary_sl = 13,
		.primary_subnet_local = 1,
		.primary_local_ack_timeout = 0x13,
		.alt_local_lid = 0x5e6f,
		.alt_remote_lid = 0x7a8b,
		.alt_local_gid = GID(0x60),
		.alt_remote_gid = GID(0x70),
		.alt_flow_label = 0x12345,
		.alt_packet_rate = 10,
		.alt_traffic_class = 0x1d,
		.alt_hop_limit = 0x3e,
		.alt_sl = 3,
		.alt_subnet_local = 0,
		.alt_local_ack_timeout = 0x0b,
		.sap_supported = 1,
		.private_data = ENDS(CM_REQ_PRIVATE_DATA_SIZE, 0xc0, 0xc1,
				     0xce, 0xcf),
	},
};

static const struct cm_msg mra_want = {
	.hdr = GOLDEN_MAD_HDR(0x0011),
	.type = CM_MSG_MRA,
	.mra = {
		.local_comm_id = 0x21324354,
		.remote_comm_id = 0x65768798,
		.message_mraed = CM_MSG_REF_REP,
		.service_timeout = 0x1a,
		.private_data = ENDS(CM_MRA_PRIVATE_DATA_SIZE, 0xe1, 0xe2,
				     0xee, 0xef),
	},
};

static const struct cm_msg rej_want = {
	.hdr = GOLDEN_MAD_HDR(0x0012),
	.type = CM_MSG_REJ,
	.rej = {
		.local_comm_id = 0x31425364,
		.remote_comm_id = 0x758697a8,
		.message_rejected = CM_MSG_REF_OTHER,
		.ari_length = 72,
		.reason = CM_REJ_CONSUMER_DEFINED,
		.ari = ENDS(CM_REJ_ARI_SIZE, 0xa0, 0xa1, 0xae, 0xaf),
		.private_data = ENDS(CM_REJ_PRIVATE_DATA_SIZE, 0xb0, 0xb1,
				     0xbe, 0xbf),
	},
};

static const struct cm_msg rep_want = {
	.hdr = GOLDEN_MAD_HDR(0x0013),
	.type = CM_MSG_REP,
	.rep = {
		.local_comm_id = 0x41526374,
		.remote_comm_id = 0x8596a7b8,
		.local_qkey = 0x9a8b7c6d,
		.local_qpn = 0x654321,
		.local_eecn = 0x0fedcb,
		.starting_psn = 0xabcdef,
		.responder_resources = 0x1d,
		.initiator_depth = 0x2e,
		.target_ack_delay = 0x19,
		.failover_accepted = 1,
		.flow_control = 0,
		.rnr_retry_count = 3,
		.srq = 1,
		.local_ca_guid = 0xf4e3d2c1b0a09081ULL,
		.private_data = ENDS(CM_REP_PRIVATE_DATA_SIZE, 0x90, 0x91,
				     0x9e, 0x9f),
	},
};

static const struct cm_msg rtu_want = {
	.hdr = GOLDEN_MAD_HDR(0x0014),
	.type = CM_MSG_RTU,
	.rtu = {
		.local_comm_id = 0x51627384,
		.remote_comm_id = 0x95a6b7c8,
		.private_data = ENDS(CM_RTU_PRIVATE_DATA_SIZE, 0x60, 0x61,
				     0x6e, 0x6f),
	},
};

static const struct cm_msg dreq_want = {
	.hdr = GOLDEN_MAD_HDR(0x0015),
	.type = CM_MSG_DREQ,
	.dreq = {
		.local_comm_id = 0x61728394,
		.remote_comm_id = 0xa5b6c7d8,
		.remote_qpn = 0x7a5b3c,
		.private_data = ENDS(CM_DREQ_PRIVATE_DATA_SIZE, 0x50, 0x51,
				     0x5e, 0x5f),
	},
};

static const struct cm_msg drep_want = {
	.hdr = GOLDEN_MAD_HDR(0x0016),
	.type = CM_MSG_DREP,
	.drep = {
		.local_comm_id = 0x718293a4,
		.remote_comm_id = 0xb5c6d7e8,
		.private_data = ENDS(CM_DREP_PRIVATE_DATA_SIZE, 0x30, 0x31,
				     0x3e, 0x3f),
	},
};

static const struct cm_msg lap_want = {
	.hdr = GOLDEN_MAD_HDR(0x0019),
	.type = CM_MSG_LAP,
	.lap = {
		.local_comm_id = 0x8192a3b4,
		.remote_comm_id = 0xc5d6e7f8,
		.remote_qpn = 0x2b3c4d,
		.remote_cm_resp_timeout = 0x1c,
		.alt_local_lid = 0x4e5f,
		.alt_remote_lid = 0x6a7b,
		.alt_local_gid = GID(0x80),
		.alt_remote_gid = GID(0x90),
		.alt_flow_label = 0x9abcd,
		.alt_traffic_class = 0x5c,
		.alt_hop_limit = 0x3d,
		.alt_packet_rate = 14,
		.alt_sl = 11,
		.alt_subnet_local = 1,
		.alt_local_ack_timeout = 0x12,
		.private_data = ENDS(CM_LAP_PRIVATE_DATA_SIZE, 0x20, 0x21,
				     0x2e, 0x2f),
	},
};

static const struct cm_msg apr_want = {
	.hdr = GOLDEN_MAD_HDR(0x001a),
	.type = CM_MSG_APR,
	.apr = {
		.local_comm_id = 0x91a2b3c4,
		.remote_comm_id = 0xd5e6f708,
		.info_length = 41,
		.status = CM_APR_INVALID_HOP_LIMIT,
		.info = ENDS(CM_APR_INFO_SIZE, 0xd0, 0xd1, 0xde, 0xdf),
		.private_data = ENDS(CM_APR_PRIVATE_DATA_SIZE, 0xe0, 0xe1,
				     0xee, 0xef),
	},
};

static const struct cm_msg sidr_req_want = {
	.hdr = GOLDEN_MAD_HDR(0x0017),
	.type = CM_MSG_SIDR_REQ,
	.sidr_req = {
		.request_id = 0xa1b2c3d4,
		.pkey = 0x8123,
		.service_id = 0x0102a3b4c5d6e7f8ULL,
		.private_data = ENDS(CM_SIDR_REQ_PRIVATE_DATA_SIZE, 0x40, 0x41,
				     0x4e, 0x4f),
	},
};

static const struct cm_msg sidr_rep_want = {
	.hdr = GOLDEN_MAD_HDR(0x0018),
	.type = CM_MSG_SIDR_REP,
	.sidr_rep = {
		.request_id = 0xb1c2d3e4,
		.status = CM_SIDR_REDIRECT,
		.info_length = 37,
		.qpn = 0x5a6b7c,
		.service_id = 0x2b3c4d5e6f708192ULL,
		.qkey = 0x11335577,
		.class_port_info = ENDS(CM_SIDR_REP_INFO_SIZE, 0x80, 0x81,
					0x8e, 0x8f),
		.private_data = ENDS(CM_SIDR_REP_PRIVATE_DATA_SIZE, 0xf0, 0xf1,
				     0xfe, 0xff),
	},
};

/*
 * Field-by-field comparison, written out per message so that a failure
 * names the member, and so that the check does not lean on the descriptor
 * table it is meant to test. check_all_fields() below adds a second,
 * descriptor-driven pass that catches a member forgotten here.
 */
#define EQ(msg, f) assert_int_equal(got->msg.f, want->msg.f)
#define MEQ(msg, f)                                                            \
	assert_memory_equal(got->msg.f, want->msg.f, sizeof(want->msg.f))

static void check_hdr(const struct cm_msg *got, const struct cm_msg *want)
{
	assert_int_equal(got->type, want->type);
	assert_int_equal(got->hdr.base_version, want->hdr.base_version);
	assert_int_equal(got->hdr.mgmt_class, want->hdr.mgmt_class);
	assert_int_equal(got->hdr.class_version, want->hdr.class_version);
	assert_int_equal(got->hdr.method, want->hdr.method);
	assert_int_equal(got->hdr.status, want->hdr.status);
	assert_int_equal(got->hdr.class_specific, want->hdr.class_specific);
	assert_int_equal(got->hdr.tid, want->hdr.tid);
	assert_int_equal(got->hdr.attr_id, want->hdr.attr_id);
	assert_int_equal(got->hdr.rsvd, want->hdr.rsvd);
	assert_int_equal(got->hdr.attr_mod, want->hdr.attr_mod);
}

static void check_req(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(req, local_comm_id);
	EQ(req, service_id);
	EQ(req, local_ca_guid);
	EQ(req, local_qkey);
	EQ(req, local_qpn);
	EQ(req, responder_resources);
	EQ(req, local_eecn);
	EQ(req, initiator_depth);
	EQ(req, remote_eecn);
	EQ(req, remote_cm_resp_timeout);
	EQ(req, transport_type);
	EQ(req, flow_control);
	EQ(req, starting_psn);
	EQ(req, local_cm_resp_timeout);
	EQ(req, retry_count);
	EQ(req, pkey);
	EQ(req, path_mtu);
	EQ(req, rdc_exists);
	EQ(req, rnr_retry_count);
	EQ(req, max_cm_retries);
	EQ(req, srq);
	EQ(req, ext_transport_type);
	EQ(req, primary_local_lid);
	EQ(req, primary_remote_lid);
	MEQ(req, primary_local_gid);
	MEQ(req, primary_remote_gid);
	EQ(req, primary_flow_label);
	EQ(req, primary_packet_rate);
	EQ(req, primary_traffic_class);
	EQ(req, primary_hop_limit);
	EQ(req, primary_sl);
	EQ(req, primary_subnet_local);
	EQ(req, primary_local_ack_timeout);
	EQ(req, alt_local_lid);
	EQ(req, alt_remote_lid);
	MEQ(req, alt_local_gid);
	MEQ(req, alt_remote_gid);
	EQ(req, alt_flow_label);
	EQ(req, alt_packet_rate);
	EQ(req, alt_traffic_class);
	EQ(req, alt_hop_limit);
	EQ(req, alt_sl);
	EQ(req, alt_subnet_local);
	EQ(req, alt_local_ack_timeout);
	EQ(req, sap_supported);
	MEQ(req, private_data);
}

static void check_mra(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(mra, local_comm_id);
	EQ(mra, remote_comm_id);
	EQ(mra, message_mraed);
	EQ(mra, service_timeout);
	MEQ(mra, private_data);
}

static void check_rej(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(rej, local_comm_id);
	EQ(rej, remote_comm_id);
	EQ(rej, message_rejected);
	EQ(rej, ari_length);
	EQ(rej, reason);
	MEQ(rej, ari);
	MEQ(rej, private_data);
}

static void check_rep(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(rep, local_comm_id);
	EQ(rep, remote_comm_id);
	EQ(rep, local_qkey);
	EQ(rep, local_qpn);
	EQ(rep, local_eecn);
	EQ(rep, starting_psn);
	EQ(rep, responder_resources);
	EQ(rep, initiator_depth);
	EQ(rep, target_ack_delay);
	EQ(rep, failover_accepted);
	EQ(rep, flow_control);
	EQ(rep, rnr_retry_count);
	EQ(rep, srq);
	EQ(rep, local_ca_guid);
	MEQ(rep, private_data);
}

static void check_rtu(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(rtu, local_comm_id);
	EQ(rtu, remote_comm_id);
	MEQ(rtu, private_data);
}

static void check_dreq(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(dreq, local_comm_id);
	EQ(dreq, remote_comm_id);
	EQ(dreq, remote_qpn);
	MEQ(dreq, private_data);
}

static void check_drep(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(drep, local_comm_id);
	EQ(drep, remote_comm_id);
	MEQ(drep, private_data);
}

static void check_lap(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(lap, local_comm_id);
	EQ(lap, remote_comm_id);
	EQ(lap, remote_qpn);
	EQ(lap, remote_cm_resp_timeout);
	EQ(lap, alt_local_lid);
	EQ(lap, alt_remote_lid);
	MEQ(lap, alt_local_gid);
	MEQ(lap, alt_remote_gid);
	EQ(lap, alt_flow_label);
	EQ(lap, alt_traffic_class);
	EQ(lap, alt_hop_limit);
	EQ(lap, alt_packet_rate);
	EQ(lap, alt_sl);
	EQ(lap, alt_subnet_local);
	EQ(lap, alt_local_ack_timeout);
	MEQ(lap, private_data);
}

static void check_apr(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(apr, local_comm_id);
	EQ(apr, remote_comm_id);
	EQ(apr, info_length);
	EQ(apr, status);
	MEQ(apr, info);
	MEQ(apr, private_data);
}

static void check_sidr_req(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(sidr_req, request_id);
	EQ(sidr_req, pkey);
	EQ(sidr_req, service_id);
	MEQ(sidr_req, private_data);
}

static void check_sidr_rep(const struct cm_msg *got, const struct cm_msg *want)
{
	EQ(sidr_rep, request_id);
	EQ(sidr_rep, status);
	EQ(sidr_rep, info_length);
	EQ(sidr_rep, qpn);
	EQ(sidr_rep, service_id);
	EQ(sidr_rep, qkey);
	MEQ(sidr_rep, class_port_info);
	MEQ(sidr_rep, private_data);
}

/*
 * Second pass over every non-reserved field the descriptors name, so that a
 * struct member missing from the check_* lists above is still compared.
 */
static void check_all_fields(const struct cm_msg *got,
			     const struct cm_msg *want)
{
	const struct cm_msg_desc *d = cm_msg_desc(want->type);
	const uint8_t *g = (const uint8_t *)&got->req;
	const uint8_t *w = (const uint8_t *)&want->req;

	assert_non_null(d);
	for (unsigned int i = 0; i < d->nfields; i++) {
		const struct cm_field_desc *f = &d->fields[i];
		size_t n = 0;

		switch (f->kind) {
		case CM_KIND_u8:
			n = 1;
			break;
		case CM_KIND_u16:
			n = 2;
			break;
		case CM_KIND_u32:
			n = 4;
			break;
		case CM_KIND_u64:
			n = 8;
			break;
		case CM_KIND_bytes:
			n = f->width / 8;
			break;
		case CM_KIND_rsvd:
			continue;
		}
		if (memcmp(g + f->offset, w + f->offset, n))
			fail_msg("%s.%s differs from the golden value", d->name,
				 f->name);
	}
}

struct golden {
	const char *name;
	const uint8_t *bytes;
	const struct cm_msg *want;
	void (*check)(const struct cm_msg *got, const struct cm_msg *want);
};

static const struct golden goldens[CM_MSG__COUNT] = {
	[CM_MSG_REQ] = { "REQ", req_golden, &req_want, check_req },
	[CM_MSG_MRA] = { "MRA", mra_golden, &mra_want, check_mra },
	[CM_MSG_REJ] = { "REJ", rej_golden, &rej_want, check_rej },
	[CM_MSG_REP] = { "REP", rep_golden, &rep_want, check_rep },
	[CM_MSG_RTU] = { "RTU", rtu_golden, &rtu_want, check_rtu },
	[CM_MSG_DREQ] = { "DREQ", dreq_golden, &dreq_want, check_dreq },
	[CM_MSG_DREP] = { "DREP", drep_golden, &drep_want, check_drep },
	[CM_MSG_LAP] = { "LAP", lap_golden, &lap_want, check_lap },
	[CM_MSG_APR] = { "APR", apr_golden, &apr_want, check_apr },
	[CM_MSG_SIDR_REQ] = { "SIDR_REQ", sidr_req_golden, &sidr_req_want,
			      check_sidr_req },
	[CM_MSG_SIDR_REP] = { "SIDR_REP", sidr_rep_golden, &sidr_rep_want,
			      check_sidr_rep },
};

/* Print every differing byte before failing: the offsets are the report. */
static void assert_mad_equal(const char *what, const uint8_t *got,
			     const uint8_t *want)
{
	unsigned int bad = 0;

	for (unsigned int i = 0; i < CM_MAD_SIZE; i++) {
		if (got[i] == want[i])
			continue;
		if (i < CM_MAD_HDR_SIZE)
			print_error(
				"%s: header byte %u: got 0x%02x, want 0x%02x\n",
				what, i, got[i], want[i]);
		else
			print_error("%s: message byte %u (MAD %u): got 0x%02x, "
				    "want 0x%02x\n",
				    what, i - CM_MAD_HDR_SIZE, i, got[i],
				    want[i]);
		bad++;
	}
	if (bad)
		fail_msg("%s: %u of %u bytes differ from the golden MAD", what,
			 bad, CM_MAD_SIZE);
}

static void golden_decode(enum cm_msg_type type)
{
	const struct golden *g = &goldens[type];
	struct cm_fault fault = { CM_FAULT_LENGTH, "poison", 1, 99 };
	struct cm_msg got;

	memset(&got, 0xa5, sizeof(got));
	assert_int_equal(cm_mad_decode(g->bytes, CM_MAD_SIZE, CM_DECODE_STRICT,
				       &got, &fault),
			 0);
	assert_int_equal(fault.code, CM_FAULT_NONE);
	check_hdr(&got, g->want);
	g->check(&got, g->want);
	check_all_fields(&got, g->want);

	/* The lenient decode of a clean MAD reports nothing either. */
	memset(&got, 0x5a, sizeof(got));
	assert_int_equal(cm_mad_decode(g->bytes, CM_MAD_SIZE, 0, &got, &fault),
			 0);
	assert_int_equal(fault.code, CM_FAULT_NONE);
	g->check(&got, g->want);
}

static void golden_encode(enum cm_msg_type type)
{
	const struct golden *g = &goldens[type];
	uint8_t out[CM_MAD_SIZE];

	memset(out, 0xa5, sizeof(out));
	assert_int_equal(cm_mad_encode(g->want, out), 0);
	assert_mad_equal(g->name, out, g->bytes);
}

/* Encode a freshly decoded golden MAD: the round trip is the identity. */
static void golden_reencode(enum cm_msg_type type)
{
	const struct golden *g = &goldens[type];
	struct cm_msg m;
	uint8_t out[CM_MAD_SIZE];

	assert_int_equal(cm_mad_decode(g->bytes, CM_MAD_SIZE, CM_DECODE_STRICT,
				       &m, NULL),
			 0);
	assert_int_equal(cm_mad_encode(&m, out), 0);
	assert_mad_equal(g->name, out, g->bytes);
}

#define GOLDEN_TESTS(NAME)                                                     \
	static void test_##NAME##_decode(void **state)                         \
	{                                                                      \
		(void)state;                                                   \
		golden_decode(CM_MSG_##NAME);                                  \
	}                                                                      \
	static void test_##NAME##_encode(void **state)                         \
	{                                                                      \
		(void)state;                                                   \
		golden_encode(CM_MSG_##NAME);                                  \
	}                                                                      \
	static void test_##NAME##_reencode(void **state)                       \
	{                                                                      \
		(void)state;                                                   \
		golden_reencode(CM_MSG_##NAME);                                \
	}

GOLDEN_TESTS(REQ)
GOLDEN_TESTS(MRA)
GOLDEN_TESTS(REJ)
GOLDEN_TESTS(REP)
GOLDEN_TESTS(RTU)
GOLDEN_TESTS(DREQ)
GOLDEN_TESTS(DREP)
GOLDEN_TESTS(LAP)
GOLDEN_TESTS(APR)
GOLDEN_TESTS(SIDR_REQ)
GOLDEN_TESTS(SIDR_REP)

/*
 * The encoder takes base version, class, class version and attribute id
 * from msg->type (cm_mad.h), so a stale header in the struct cannot leak
 * onto the wire.
 */
static void test_encode_header_from_type(void **state)
{
	struct cm_msg m = rtu_want;
	uint8_t out[CM_MAD_SIZE];

	(void)state;
	m.hdr.base_version = 9;
	m.hdr.mgmt_class = 0x81;
	m.hdr.class_version = 7;
	m.hdr.attr_id = 0x0010;
	m.hdr.rsvd = 0xffff;
	assert_int_equal(cm_mad_encode(&m, out), 0);
	assert_mad_equal("RTU, stale header", out, rtu_golden);
}

static void test_encode_bad_type(void **state)
{
	struct cm_msg m = rtu_want;
	uint8_t out[CM_MAD_SIZE];

	(void)state;
	m.type = CM_MSG__COUNT;
	assert_int_equal(cm_mad_encode(&m, out), -EINVAL);
}

/* cm_msg_init gives the golden header for a type and TID. */
static void test_msg_init(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++) {
		struct cm_msg m;

		memset(&m, 0xa5, sizeof(m));
		cm_msg_init(&m, t, GOLDEN_TID);
		check_hdr(&m, goldens[t].want);
	}
}

/*
 * IBTA 12.7.40 (XRC annex): transport service type 3 says "look at the
 * extended transport type", 1 = XRC. Byte 43 now has 11 in the transport
 * bits and byte 51 a non-zero extended type below SRQ.
 */
static void test_req_xrc(void **state)
{
	uint8_t mad[CM_MAD_SIZE];
	uint8_t out[CM_MAD_SIZE];
	struct cm_msg want = req_want;
	struct cm_msg got;

	(void)state;
	memcpy(mad, req_golden, sizeof(mad));
	/* timeout 0x16 (10110) | transport 3 (11) | e2e fc 1 */
	mad[H + 43] = 0xb7;
	/* max CM retries 12 (1100) | SRQ 1 | extended transport 1 (001) */
	mad[H + 51] = 0xc9;
	want.req.transport_type = CM_TRANSPORT_EXTENDED;
	want.req.ext_transport_type = CM_EXT_TRANSPORT_XRC;

	assert_int_equal(
		cm_mad_decode(mad, sizeof(mad), CM_DECODE_STRICT, &got, NULL),
		0);
	check_req(&got, &want);
	assert_int_equal(cm_mad_encode(&want, out), 0);
	assert_mad_equal("REQ XRC", out, mad);
}

/*
 * The generated accessors read and write the same bits as the golden
 * bytes, including sub-byte fields that share a byte.
 */
static void test_accessors_get(void **state)
{
	const uint8_t *req = req_golden + H;
	const uint8_t *rep = rep_golden + H;
	const uint8_t *lap = lap_golden + H;
	const uint8_t *rej = rej_golden + H;
	const uint8_t *sidr = sidr_rep_golden + H;

	(void)state;
	assert_int_equal(cm_req_get_local_comm_id(req), 0x11223344);
	assert_int_equal(cm_req_get_service_id(req), 0x1c2d3e4f5a6b7c8dULL);
	assert_int_equal(cm_req_get_local_qpn(req), 0x123456);
	assert_int_equal(cm_req_get_responder_resources(req), 11);
	assert_int_equal(cm_req_get_remote_cm_resp_timeout(req), 0x16);
	assert_int_equal(cm_req_get_transport_type(req), CM_TRANSPORT_UC);
	assert_int_equal(cm_req_get_flow_control(req), 1);
	assert_int_equal(cm_req_get_path_mtu(req), CM_MTU_2048);
	assert_int_equal(cm_req_get_rdc_exists(req), 1);
	assert_int_equal(cm_req_get_rnr_retry_count(req), 3);
	assert_int_equal(cm_req_get_primary_flow_label(req), 0xabcde);
	assert_int_equal(cm_req_get_primary_packet_rate(req), 7);
	assert_int_equal(cm_req_get_primary_sl(req), 13);
	assert_int_equal(cm_req_get_alt_flow_label(req), 0x12345);
	assert_int_equal(cm_req_get_alt_local_ack_timeout(req), 0x0b);
	assert_int_equal(cm_req_get_sap_supported(req), 1);
	assert_ptr_equal(cm_req_primary_local_gid(req), req + 56);
	assert_ptr_equal(cm_req_private_data(req), req + 140);

	assert_int_equal(cm_rep_get_local_qpn(rep), 0x654321);
	assert_int_equal(cm_rep_get_target_ack_delay(rep), 0x19);
	assert_int_equal(cm_rep_get_failover_accepted(rep), 1);
	assert_int_equal(cm_rep_get_flow_control(rep), 0);
	assert_int_equal(cm_rep_get_rnr_retry_count(rep), 3);
	assert_int_equal(cm_rep_get_srq(rep), 1);
	assert_int_equal(cm_rep_get_local_ca_guid(rep), 0xf4e3d2c1b0a09081ULL);

	assert_int_equal(cm_rej_get_message_rejected(rej), CM_MSG_REF_OTHER);
	assert_int_equal(cm_rej_get_ari_length(rej), 72);
	assert_int_equal(cm_rej_get_reason(rej), CM_REJ_CONSUMER_DEFINED);
	assert_ptr_equal(cm_rej_ari(rej), rej + 12);

	assert_int_equal(cm_lap_get_remote_qpn(lap), 0x2b3c4d);
	assert_int_equal(cm_lap_get_alt_flow_label(lap), 0x9abcd);
	assert_int_equal(cm_lap_get_alt_traffic_class(lap), 0x5c);
	assert_int_equal(cm_lap_get_alt_packet_rate(lap), 14);
	assert_int_equal(cm_lap_get_alt_sl(lap), 11);

	assert_int_equal(cm_sidr_rep_get_qpn(sidr), 0x5a6b7c);
	assert_int_equal(cm_sidr_rep_get_qkey(sidr), 0x11335577);
}

/* Setters build the shared bytes from nothing and leave neighbours alone. */
static void test_accessors_set(void **state)
{
	uint8_t msg[CM_MSG_SIZE];

	(void)state;
	memset(msg, 0, sizeof(msg));
	cm_req_set_remote_eecn(msg, 0x345678);
	cm_req_set_flow_control(msg, 1);
	cm_req_set_remote_cm_resp_timeout(msg, 0x16);
	cm_req_set_transport_type(msg, CM_TRANSPORT_UC);
	cm_req_set_path_mtu(msg, CM_MTU_2048);
	cm_req_set_rnr_retry_count(msg, 3);
	cm_req_set_rdc_exists(msg, 1);
	cm_req_set_primary_packet_rate(msg, 7);
	cm_req_set_primary_flow_label(msg, 0xabcde);
	assert_memory_equal(msg + 40, req_golden + H + 40, 4);
	assert_memory_equal(msg + 50, req_golden + H + 50, 1);
	assert_memory_equal(msg + 88, req_golden + H + 88, 4);
	assert_int_equal(msg[39], 0);
	assert_int_equal(msg[44], 0);
	assert_int_equal(msg[49], 0);
	assert_int_equal(msg[51], 0);

	/* Overwrite one sub-byte field in a full byte: only its bits change. */
	memcpy(msg, rep_golden + H, sizeof(msg));
	cm_rep_set_failover_accepted(msg, 2);
	assert_int_equal(msg[26], 0xcc); /* 11001 10 0 */
	cm_rep_set_failover_accepted(msg, 1);
	assert_memory_equal(msg, rep_golden + H, sizeof(msg));
}

static void assert_has_line(const char *dump, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = dump; (p = strstr(p, line)) != NULL; p++)
		if ((p == dump || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return;
	fail_msg("dump lacks the line \"%s\":\n%s", line, dump);
}

static void test_dump(void **state)
{
	struct cm_msg m;
	char buf[8192];
	size_t n;

	(void)state;
	assert_int_equal(cm_mad_decode(req_golden, CM_MAD_SIZE, 0, &m, NULL),
			 0);
	n = cm_msg_dump(&m, buf, sizeof(buf));
	assert_true(n < sizeof(buf));
	assert_int_equal(strlen(buf), n);
	assert_has_line(buf, "tid: 0x0102030405060708");
	assert_has_line(buf, "local_comm_id: 0x11223344");
	assert_has_line(buf, "local_qpn: 0x123456");
	assert_has_line(buf, "service_id: 0x1c2d3e4f5a6b7c8d");
	assert_has_line(buf, "transport_type: 1");
	assert_has_line(buf, "remote_cm_resp_timeout: 22");
	assert_has_line(buf, "path_mtu: 4");
	assert_has_line(buf, "primary_flow_label: 0xabcde");
	assert_has_line(
		buf,
		"primary_local_gid: 4041:4243:4445:4647:4849:4a4b:4c4d:4e4f");

	assert_int_equal(cm_mad_decode(rej_golden, CM_MAD_SIZE, 0, &m, NULL),
			 0);
	n = cm_msg_dump(&m, buf, sizeof(buf));
	assert_true(n < sizeof(buf));
	assert_has_line(buf, "reason: 0x001c");
	assert_has_line(buf, "message_rejected: 2");
	assert_has_line(buf, "ari_length: 72");
	assert_has_line(buf, "reason_text: consumer reject");

	/* Truncation: snprintf semantics, always terminated. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(cm_msg_dump(&m, buf, 10), n);
	assert_int_equal(strlen(buf), 9);
	assert_int_equal(cm_msg_dump(&m, NULL, 0), n);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
#define GOLDEN_ENTRY(NAME)                                                     \
	cmocka_unit_test(test_##NAME##_decode),                                \
		cmocka_unit_test(test_##NAME##_encode),                        \
		cmocka_unit_test(test_##NAME##_reencode)
		GOLDEN_ENTRY(REQ),
		GOLDEN_ENTRY(MRA),
		GOLDEN_ENTRY(REJ),
		GOLDEN_ENTRY(REP),
		GOLDEN_ENTRY(RTU),
		GOLDEN_ENTRY(DREQ),
		GOLDEN_ENTRY(DREP),
		GOLDEN_ENTRY(LAP),
		GOLDEN_ENTRY(APR),
		GOLDEN_ENTRY(SIDR_REQ),
		GOLDEN_ENTRY(SIDR_REP),
#undef GOLDEN_ENTRY
		cmocka_unit_test(test_encode_header_from_type),
		cmocka_unit_test(test_encode_bad_type),
		cmocka_unit_test(test_msg_init),
		cmocka_unit_test(test_req_xrc),
		cmocka_unit_test(test_accessors_get),
		cmocka_unit_test(test_accessors_set),
		cmocka_unit_test(test_dump),
	};

	return cmocka_run_group_tests_name("cm_golden", tests, NULL, NULL);
}
