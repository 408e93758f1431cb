/* SPDX-License-Identifier: MIT */
/*
 * From the SA's PathRecord to a connection's path, and from what a
 * connection wants back to the PathRecord query that asks for it. Pure
 * functions over decoded records (sa_mad.h), REQs (cm_mad.h) and the
 * client protocol's path (cmp.h), as the kernel's CM maps them:
 * cm_format_req() for the REQ, ib_init_ah_attr_from_path() for the QP's
 * address vector, cma_query_ib_route() for the query.
 */
#ifndef CMD_PROTO_SA_PATH_H
#define CMD_PROTO_SA_PATH_H

#include <stdint.h>

#include "cm_mad.h"
#include "cmp.h"
#include "sa_mad.h"

/*
 * IBTA 15.2.5.16 (Table 204): the 2-bit selector above MTU, Rate and
 * PacketLifeTime. In a query it says how the SA compares (with the
 * component mask bit of the selector and of the value both set); in a
 * record the SA returns it is EXACTLY (opensm writes 2), and the value is
 * the path's value whatever the selector says.
 */
enum sa_selector {
	SA_SEL_GREATER = 0,
	SA_SEL_LESS = 1,
	SA_SEL_EXACTLY = 2,
	SA_SEL_LARGEST = 3,
};

enum sa_path_which {
	SA_PATH_PRIMARY,
	SA_PATH_ALTERNATE,
};

/*
 * Can a connection use rec? 0, or -EINVAL when it has no LID route (DLID
 * or SLID 0: an SA answer has both, and ibsim's padding slot has neither)
 * or its MTU code is not 1 (256) .. 5 (4096).
 */
int sa_path_check(const struct sa_path_rec *rec);

/*
 * Write the REQ's primary or alternate path fields from rec (IBTA Table
 * 106; the kernel's cm_format_req()): local/remote LID = SLID/DLID,
 * local/remote GID = SGID/DGID, flow label, traffic class, hop limit, SL,
 * packet rate = the record's rate code (the REQ uses the same IBTA
 * encoding), subnet local = hop limit <= 1, local ACK timeout =
 * cm_ack_timeout(ca_ack_delay, packet life time) (packet life time + 1
 * when the CA's ack delay is below it). The primary also sets the REQ's
 * P_Key and path MTU. An alternate must share them (Table 106 has one
 * P_Key and one path MTU for both paths; the kernel's
 * cm_validate_req_param() refuses a mismatch): fill the primary first; a
 * record
 * with another P_Key or MTU is -EINVAL and writes nothing, as is one
 * sa_path_check() refuses.
 */
int sa_path_to_req(const struct sa_path_rec *rec, enum sa_path_which which,
		   uint8_t ca_ack_delay, struct cm_req *req);

/*
 * The path the QP uses, from rec: what the record determines and nothing
 * else (port, P_Key index, SGID index and device are the caller's and
 * stay as they are). The QP's path MTU, SL and static rate (the rate code
 * is ibv_rate's numbering), the address vector's DLID, and a GRH (DGID,
 * flow label, hop limit, traffic class) when the hop limit is above 0, as
 * ib_init_ah_attr_from_path() decides. -EINVAL as sa_path_check().
 */
int sa_path_to_cmp(const struct sa_path_rec *rec, uint8_t ca_ack_delay,
		   struct cmp_path *out);

/*
 * What a connection asks the SA for: one reversible path between two
 * GIDs, in a partition, and what the program fixed (flags: CMP_PATH_FLAG_
 * SL, _MTU and _TRAFFIC_CLASS are asked for; other flags are overrides
 * applied to the answer and not asked).
 */
struct sa_path_want {
	uint8_t sgid[CM_GID_SIZE];
	uint8_t dgid[CM_GID_SIZE];
	uint64_t service_id; /* 0: not asked */
	uint16_t pkey; /* 0: not asked */
	uint32_t flags; /* CMP_PATH_FLAG_* */
	uint8_t sl;
	uint8_t mtu; /* enum cm_mtu, asked for EXACTLY */
	uint8_t traffic_class;
	/* By LID instead of GIDs when dlid is not 0 (slid asked when set). */
	uint16_t dlid;
	uint16_t slid;
	uint8_t numb_path; /* 0: 1; 2 asks for an alternate too */
};

/*
 * The PathRecord template and component mask for w: DGID and SGID (or,
 * with w->dlid, DLID and SLID), NumbPath (1 unless asked) and Reversible 1
 * always; P_Key and ServiceID when non-zero
 * (rdma_cm's cma_query_ib_route() asks DGID | SGID | PKEY | NUMB_PATH |
 * REVERSIBLE | SERVICE_ID, plus QOS_CLASS or TCLASS by address family);
 * SL, MTU (selector EXACTLY) and TClass when flagged. Returns the mask.
 */
uint64_t sa_path_query(const struct sa_path_want *w, struct sa_path_rec *tmpl);

/* The SubnAdmGetTable(PathRecord) MAD of sa_path_query(w), 256 bytes. */
int sa_path_query_encode(const struct sa_path_want *w, uint64_t tid,
			 uint8_t out[SA_MAD_SIZE]);

/*
 * What to ask to get req's primary or alternate path again: its GIDs,
 * the REQ's P_Key, and its SL, MTU and traffic class as fixed values.
 */
void sa_path_want_from_req(const struct cm_req *req, enum sa_path_which which,
			   struct sa_path_want *w);

#endif
