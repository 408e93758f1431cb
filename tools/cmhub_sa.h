/* SPDX-License-Identifier: MIT */
/*
 * cmhub's SA responder: the subnet administrator (management class 0x03)
 * of the simulated fabric, answering PathRecord Get/GetTable and
 * ClassPortInfo Get (docs/SA.md, "The simulated fabric's SA"). Pure: it
 * turns one request MAD into one answer MAD (or none) from the settings
 * and the hub's ports, which it sees through a lookup callback; the hub
 * (cmhub.c) does the I/O, the delays and the SM change messages.
 */
#ifndef CMD_CMHUB_SA_H
#define CMD_CMHUB_SA_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_proto.h"

/* IBTA 13.5.1: the GSI's well-known Q_Key, ClassPortInfo's RedirectQ_Key. */
#define HUB_SA_QKEY 0x80010000u

/* Defaults (docs/SA.md says why each). */
#define HUB_SA_SM_LID 1
#define HUB_SA_MTU 4 /* 2048: the sim IB ports' active MTU */
#define HUB_SA_RATE 3 /* 10 Gb/s: the daemon's default packet rate */
#define HUB_SA_PLT 16 /* the daemon's default packet life time */
#define HUB_SA_SL 0
#define HUB_SA_RESP_TIME 16 /* 4.096 us * 2^16 = 268 ms */

struct hub_sa {
	struct sim_sa_config c;
	struct sim_sa_stats st;
};

/* A port the SA can put in a PathRecord: its LID and one of its GIDs. */
struct hub_sa_port {
	uint16_t lid;
	uint8_t gid[SIM_GID_SIZE];
};

/*
 * The hub's IB port that is up with GID gid (gid not NULL; out->gid is
 * that GID) or with LID lid (out->gid is its first GID). False: none.
 */
typedef bool (*hub_sa_find_fn)(void *ctx, const uint8_t *gid, uint16_t lid,
			       struct hub_sa_port *out);

void hub_sa_init(struct hub_sa *sa);

/*
 * Apply a SIM_CTL_SA: every value is checked first, -EINVAL changes
 * nothing. *sm_moved: the SM LID changed (the hub tells the daemons).
 */
int hub_sa_apply(struct hub_sa *sa, const struct sim_ctl_sa *m, bool *sm_moved);

/*
 * Is a MAD sent to 'to' the SA's? Class 0x03 to the SM LID on QP1, or to
 * the redirect LID and QP. *at_redirect: it came to the redirect address.
 */
bool hub_sa_mine(const struct hub_sa *sa, const struct sim_addr *to,
		 const uint8_t mad[SIM_MAD_SIZE], bool *at_redirect);

/*
 * Answer one SA MAD that hub_sa_mine() took, sent from port 'requester'.
 * True: out is the answer (256 bytes) and *from the SA's address it comes
 * from. False: no answer (malformed, or --sa-drop). Counts in sa->st.
 */
bool hub_sa_query(struct hub_sa *sa, const uint8_t in[SIM_MAD_SIZE],
		  bool at_redirect, const struct hub_sa_port *requester,
		  hub_sa_find_fn find, void *ctx, uint8_t out[SIM_MAD_SIZE],
		  struct sim_addr *from);

#endif
