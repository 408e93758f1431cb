/* SPDX-License-Identifier: MIT */
/*
 * The simulated fabric's wire protocol, between xport_sim.c (one per daemon)
 * and the hub tools/cmhub.c, over a Unix SOCK_SEQPACKET socket: one
 * message per packet, so no framing. Both ends run on one machine, so every
 * field is in host byte order, except GIDs (network order, as on the wire).
 *
 * A connection's first message says what it is:
 *   SIM_HELLO  a daemon declaring its ports; answered by SIM_HELLO_ACK.
 *              Then SIM_MAD both ways, until either side closes.
 *   SIM_CTL_*  a control client (cmhub --ctl): SIM_CTL_SET changes fault
 *              settings, SIM_CTL_STATS asks for the counters; each is
 *              answered by SIM_CTL_REPLY.
 */
#ifndef CMD_SIM_PROTO_H
#define CMD_SIM_PROTO_H

#include <stdint.h>

#define SIM_PROTO_VERSION 1
#define SIM_MAD_SIZE 256
#define SIM_GID_SIZE 16
#define SIM_MAX_PORTS 16 /* per daemon */
#define SIM_MAX_GIDS 4 /* per port */

enum sim_msg_type {
	SIM_HELLO = 1,
	SIM_HELLO_ACK = 2,
	SIM_MAD = 3,
	SIM_CTL_SET = 4,
	SIM_CTL_STATS = 5,
	SIM_CTL_REPLY = 6,
	SIM_CTL_PORT = 7, /* control -> hub: a port goes down or up */
	SIM_PORT_STATE = 8, /* hub -> daemon: a port's new state */
};

struct sim_hdr {
	uint16_t type; /* enum sim_msg_type */
	uint16_t version;
};

struct sim_port_decl {
	uint64_t guid;
	uint16_t lid;
	uint8_t n_gids;
	uint8_t roce; /* the source GID of a GRH follows the IP family */
	uint8_t gids[SIM_MAX_GIDS][SIM_GID_SIZE];
};

struct sim_hello {
	struct sim_hdr hdr;
	uint16_t node; /* names the daemon in fault settings, 1..65535 */
	uint16_t n_ports;
	struct sim_port_decl port[SIM_MAX_PORTS];
};

/* status 0, or -errno: -EADDRINUSE when a LID, GID or node is taken. */
struct sim_hello_ack {
	struct sim_hdr hdr;
	int32_t status;
};

/* An address: to (daemon -> hub) or from (hub -> daemon). */
struct sim_addr {
	uint16_t lid;
	uint8_t sl;
	uint8_t grh;
	uint8_t gid[SIM_GID_SIZE]; /* dgid / sgid when grh */
	uint32_t qpn;
	uint16_t pkey_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
};

/*
 * daemon -> hub: 'port' is the sender's port (0-based in its hello),
 *   addr the destination; the hub routes by addr.gid when addr.grh, else
 *   by addr.lid.
 * hub -> daemon: 'port' is the receiving port, addr the sender's address
 *   (its LID, its source GID when the MAD had a GRH, QPN 1); the MAD bytes
 *   are delivered untouched.
 */
struct sim_mad {
	struct sim_hdr hdr;
	uint16_t port;
	/*
	 * With a GRH: daemon -> hub, the index of the source GID among the
	 * sender port's; hub -> daemon, of the destination GID among the
	 * receiving port's (the GID the sender addressed).
	 */
	uint8_t sgid_index;
	uint8_t rsvd;
	struct sim_addr addr;
	uint8_t mad[SIM_MAD_SIZE];
};

/* Fault settings of one direction (from node -> to node). */
struct sim_faults {
	uint32_t loss_ppm; /* parts per million: 100000 = 10 % */
	uint32_t dup_ppm;
	uint32_t reorder_ppm;
	uint32_t delay_min_us;
	uint32_t delay_max_us;
};

enum {
	SIM_SET_FAULTS = 1 << 0, /* apply 'faults' */
	SIM_SET_SEED = 1 << 1, /* reseed the PRNG */
	SIM_SET_RESET = 1 << 2, /* zero the counters */
};

/*
 * from/to: node numbers, 0 = any. Settings for (0, 0) are the default;
 * a (from, to) entry overrides it for that direction only.
 */
struct sim_ctl_set {
	struct sim_hdr hdr;
	uint32_t flags;
	uint16_t from;
	uint16_t to;
	struct sim_faults faults;
	uint64_t seed;
};

struct sim_stats {
	uint64_t received; /* MADs from daemons */
	uint64_t routed; /* copies handed to a destination daemon */
	uint64_t dropped; /* by the loss setting */
	uint64_t duplicated;
	uint64_t reordered;
	uint64_t delayed;
	uint64_t unroutable; /* no port with that GID/LID */
	uint64_t overflow; /* a daemon's queue was full */
	uint32_t daemons; /* connected now */
	uint32_t ports;
};

struct sim_ctl_stats {
	struct sim_hdr hdr;
};

/*
 * Port life cycle (issue 7, item 6): port 'port' (0-based in the node's
 * hello) of node 'node' goes down (up 0) or comes back (up 1), or its
 * device is removed for good (up SIM_PORT_REMOVED: the daemon sees device
 * removal for that port; the port never comes back). The hub tells that
 * daemon with SIM_PORT_STATE and, while the port is down or removed, drops
 * every MAD from or to it (counted as dropped). Reply: SIM_CTL_REPLY,
 * status -ENOENT for an unknown node or port, -ENODEV to bring a removed
 * port up.
 */
#define SIM_PORT_REMOVED 2

struct sim_ctl_port {
	struct sim_hdr hdr;
	uint16_t node;
	uint16_t port;
	uint8_t up;
	uint8_t rsvd[3];
};

/*
 * hub -> daemon: as the verbs events PORT_ERR / PORT_ACTIVE (up 0 / 1), or
 * the device going away (up SIM_PORT_REMOVED).
 */
struct sim_port_state {
	struct sim_hdr hdr;
	uint16_t port;
	uint8_t up;
	uint8_t rsvd;
};

struct sim_ctl_reply {
	struct sim_hdr hdr;
	int32_t status;
	struct sim_stats stats;
};

#endif
