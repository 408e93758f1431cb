/* SPDX-License-Identifier: MIT */
/*
 * Paths: from what an app names (a GID, an IP address of a RoCE port, a
 * LID) to the port, the peer CM's address and the REQ's primary path
 * fields; and from a received REQ back to the path as the passive side
 * sees it. Pure functions over the transport's port attributes.
 */
#ifndef CMD_PATH_H
#define CMD_PATH_H

#include <stdint.h>

#include "cm_engine.h"
#include "cmp.h"
#include "sa_path.h"
#include "transport.h"

struct path {
	struct eng_addr dest; /* the peer CM (QP1); dest.port: our port */
	struct cmp_path view; /* the path as the app's QP needs it */
};

struct path_defaults {
	uint8_t packet_life_time; /* exponent, when no path record says */
	uint8_t hop_limit; /* GRH hop limit on RoCE / routed IB */
	uint8_t packet_rate; /* IBTA rate code */
};

/*
 * Choose the port and build the path to dst. src narrows the ports (ANY:
 * the first active port that can reach dst's family), set overrides path
 * attributes. Returns 0, -ENETUNREACH (no port fits), -ENODEV (the
 * selected port does not exist), -EINVAL (a value out of range for the
 * port, such as a P_Key not in its table).
 */
int path_resolve(const struct xport *x, const struct cmp_addr *dst,
		 const struct cmp_port_sel *src, const struct cmp_path_set *set,
		 const struct path_defaults *def, struct path *out);

/* The first served port sel selects, or NULL. */
const struct xport_port *path_sel_port(const struct xport *x,
				       const struct cmp_port_sel *sel);

/*
 * A listener's selector, from the client's naming to the engine's: PORT
 * becomes the indices of the served ports it names (-ENODEV: none), GID
 * stays the GID (-EADDRNOTAVAIL: no served port has it). *where is the
 * selector as QUERY_ID shows a listener's path: dev_name and port_num for
 * PORT, local_gid for GID, zero for ANY.
 */
int path_listen_sel(const struct xport *x, const struct cmp_port_sel *sel,
		    struct eng_listen_sel *out, struct cmp_path *where);

/*
 * The program's settings that make a whole path (IB_PATH, or
 * cmc_path_override with all of them): with these the SA is not asked.
 */
#define PATH_SET_WHOLE (CMP_PATH_FLAG_ALL & ~CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT)

/*
 * What to ask the SA for p (resolved by path_resolve on an IB port): by
 * GIDs, or by LIDs for a LID destination; p's P_Key; the program's SL,
 * MTU and traffic class as fixed values; service_id; a primary and an
 * alternate.
 */
void path_sa_want(const struct path *p, const struct cmp_addr *dst,
		  const struct cmp_path_set *set, uint64_t service_id,
		  struct sa_path_want *w);

/*
 * p := the SA's record (sa_path_to_cmp), keeping the port's facts (port,
 * device, P_Key index, SGID index) and then the program's overrides the
 * query did not ask for (hop limit, flow label, rate, ACK timeout); the
 * peer CM's address (dest) from the record. -EINVAL: an unusable record.
 */
int path_apply_sa(struct path *p, const struct sa_path_rec *rec,
		  const struct cmp_path_set *set, uint8_t ca_ack_delay);

/* Write the REQ's primary path fields (Table 106 bytes 48-95). */
void path_fill_req(const struct path *p, struct cm_req *req);

/*
 * The path a received REQ asks for, from this side: the REQ's local fields
 * are our remote ones. from and port say where it arrived.
 */
void path_from_req(const struct xport *x, const struct eng_addr *from,
		   const struct cm_req *req, struct cmp_path *out);

/* The path back to a SIDR requester, from the address it came from. */
void path_from_addr(const struct xport *x, const struct eng_addr *from,
		    uint16_t pkey, struct cmp_path *out);

/*
 * The local ACK timeout exponent for a QP whose peer acks within
 * 4.096 us * 2^ack_delay (its REP's target ACK delay) over a path of
 * packet life time plt.
 */
uint8_t path_ack_timeout(uint8_t ack_delay, uint8_t plt);

/* enum cm_mtu of a byte count (256..4096), 0 for anything else. */
uint8_t path_mtu_enum(unsigned int bytes);

#endif
