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
 *              answered by SIM_CTL_REPLY. SIM_CTL_SA changes the hub's
 *              SA responder and is answered by SIM_CTL_SA_REPLY.
 *
 * The hub is also the subnet's SM/SA (docs/SA.md, "The simulated fabric's
 * SA"): SA MADs (class 0x03) sent to the SM LID on QP1 (or to ClassPortInfo's
 * redirect LID and QP) are answered by the hub as SIM_MADs from that
 * address. Right after SIM_HELLO_ACK, and whenever the SM LID changes, the
 * hub sends every daemon SIM_SM_CHANGE.
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
	SIM_SM_CHANGE = 9, /* hub -> daemon: where the SM is */
	SIM_CTL_SA = 10, /* control -> hub: SA responder settings */
	SIM_CTL_SA_REPLY = 11, /* hub -> control: its settings, counters */
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

/*
 * hub -> daemon: the subnet's SM is at sm_lid / sm_sl (the PortInfo
 * MasterSMLID / MasterSMSL of every IB port; RoCE ports have no SM). Sent
 * right after SIM_HELLO_ACK and to every daemon when the SM LID changes
 * (cmhub --ctl SOCKET --sm-lid N).
 */
struct sim_sm_change {
	struct sim_hdr hdr;
	uint16_t sm_lid;
	uint8_t sm_sl;
	uint8_t rsvd;
};

/* What a SIM_CTL_SA changes (the fields of the same name). */
enum {
	SIM_SA_SET_BUSY = 1 << 0, /* answer the next 'busy' queries BUSY */
	SIM_SA_SET_DROP = 1 << 1, /* drop the next 'drop' queries */
	SIM_SA_SET_ERROR = 1 << 2, /* next 'error_count': 'error_code' */
	SIM_SA_SET_DELAY = 1 << 3, /* every answer waits 'delay_ms' */
	SIM_SA_SET_MTU = 1 << 4, /* PathRecord MTU code, 1..5 */
	SIM_SA_SET_SL = 1 << 5, /* PathRecord SL when not asked, 0..15 */
	SIM_SA_SET_RATE = 1 << 6, /* PathRecord rate code, 2..63 */
	SIM_SA_SET_PLT = 1 << 7, /* PathRecord packet life time, 0..63 */
	SIM_SA_SET_REDIRECT = 1 << 8, /* redirect_lid 0: off */
	SIM_SA_SET_ON = 1 << 9, /* 'on' 0: the hub answers no SA MAD */
	SIM_SA_SET_SM_LID = 1 << 10, /* move the SM: SIM_SM_CHANGE to all */
	SIM_SA_SET_RESET = 1 << 11, /* zero the SA counters */
};

/*
 * control -> hub: change the SA responder (flags: SIM_SA_SET_*; 0 only
 * asks). Answered by SIM_CTL_SA_REPLY; status -EINVAL for a value out of
 * range (nothing is changed then).
 */
struct sim_ctl_sa {
	struct sim_hdr hdr;
	uint32_t flags;
	uint32_t busy;
	uint32_t drop;
	uint32_t error_count;
	uint32_t delay_ms;
	uint32_t redirect_qpn;
	uint16_t redirect_lid;
	uint16_t sm_lid;
	uint8_t error_code; /* IBTA Table 194, MAD status bits 8-15 */
	uint8_t mtu;
	uint8_t sl;
	uint8_t rate;
	uint8_t plt;
	uint8_t on;
	uint8_t rsvd[2];
};

/* The SA responder's settings now (what is left of the counted faults). */
struct sim_sa_config {
	uint8_t on;
	uint8_t sm_sl;
	uint16_t sm_lid;
	uint16_t redirect_lid; /* 0: no redirect */
	uint8_t mtu;
	uint8_t sl;
	uint32_t redirect_qpn;
	uint8_t rate;
	uint8_t plt;
	uint8_t resp_time_value;
	uint8_t error_code;
	uint32_t busy_left;
	uint32_t drop_left;
	uint32_t error_left;
	uint32_t delay_ms;
};

struct sim_sa_stats {
	uint64_t queries; /* SA MADs to the SA's address */
	uint64_t answered; /* answers sent, whatever their status */
	uint64_t busy; /* answered BUSY (--sa-busy) */
	uint64_t dropped; /* not answered (--sa-drop) */
	uint64_t errors; /* answered with --sa-error's code */
	uint64_t redirected; /* answered REDIRECT with ClassPortInfo */
	uint64_t malformed; /* refused by sa_mad_decode, or not a request */
	uint64_t no_records; /* answered ERR_NO_RECORDS */
	uint64_t invalid; /* answered ERR_REQ_INSUFFICIENT_COMPONENTS */
	uint64_t delayed; /* answers that waited for --sa-delay-ms */
	uint64_t pending; /* answers waiting now (a gauge) */
};

struct sim_ctl_sa_reply {
	struct sim_hdr hdr;
	int32_t status;
	struct sim_sa_config config;
	struct sim_sa_stats stats;
};

struct sim_ctl_reply {
	struct sim_hdr hdr;
	int32_t status;
	struct sim_stats stats;
};

#endif
