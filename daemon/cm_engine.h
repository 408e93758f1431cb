/* SPDX-License-Identifier: MIT */
/*
 * The CM engine: the IBTA Vol 1 chapter 12 connection state machine with no
 * I/O of its own (see ENGINE.md). It consumes decoded MADs, client requests
 * and timer expiries, and produces MADs (ops->send), client events
 * (ops->deliver) and one deadline for the caller's timer.
 *
 * Time: every 'now' is uint64_t nanoseconds of a monotonic clock.
 * Returns: 0 or -errno. -ENOENT: no such id (or it was destroyed);
 * -EINVAL: the id's state does not allow the call (nothing changed);
 * -EBUSY: called from inside an ops callback.
 * Ids: an id is the connection's local comm id (listeners get one too).
 */
#ifndef CMD_CM_ENGINE_H
#define CMD_CM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm_mad.h"

#define ENG_MAX_PORTS 256
#define ENG_NO_DEADLINE UINT64_MAX

/* Where a MAD came from or goes to: the peer's CM (QP1) and our port. */
struct eng_addr {
	uint16_t port; /* local port index, as registered with eng_port_set */
	uint16_t lid; /* remote LID (IB) */
	uint8_t sl;
	bool grh;
	uint8_t gid[CM_GID_SIZE]; /* remote GID when grh */
	uint32_t qpn; /* remote QP, 1 for the CM */
	uint16_t pkey_index;
	/*
	 * Received MADs: the GID of ours the peer addressed (the GRH's
	 * destination GID), all zero when the transport could not tell (no
	 * GRH). A SIDR_REQ carries no path, so this is what a GID listener
	 * matches it by. Not read for sends.
	 */
	uint8_t local_gid[CM_GID_SIZE];
};

enum eng_state {
#define CM_STATE(NAME, value) ENG_STATE_##NAME = (value),
#include "cm_states.def"
	ENG_STATE__COUNT,
};

/*
 * LAP sub-states inside ESTABLISHED (IBTA 12.8 alternate path loading, the
 * LAP states of the 12.9 state machine), from cm_states.def: SENT and
 * MRA_RCVD on the side that sent the LAP, RCVD and MRA_SENT (we MRAed the
 * peer's LAP) on the side that owes the APR.
 */
enum eng_lap_state {
#define CM_LAP_STATE(NAME, ENG, value, text) ENG_LAP_##ENG = (value),
#include "cm_states.def"
};

const char *eng_state_name(enum eng_state state);
const char *eng_lap_state_name(enum eng_lap_state lap);

enum eng_event_type {
	ENG_EV_REQ_RECEIVED, /* passive: first event of a new id */
	ENG_EV_REQ_ERROR, /* active: REQ unanswered (-ETIMEDOUT) or the
				 REP was stale (-ESTALE) */
	ENG_EV_REP_RECEIVED, /* active: answer with eng_rtu or eng_reject */
	ENG_EV_REP_ERROR, /* passive: REP unanswered */
	ENG_EV_RTU_RECEIVED, /* passive: connection established */
	ENG_EV_REJ_RECEIVED, /* msg.rej holds the reason */
	ENG_EV_DREQ_RECEIVED, /* answer with eng_disconnect */
	ENG_EV_DREQ_ERROR, /* our DREQ unanswered; now in timewait. A
				 DREQ the engine sent because a new REQ
				 reused the peer's QP (stale) ends with
				 this or DREP_RECEIVED too */
	ENG_EV_DREP_RECEIVED, /* disconnect done; when DREQs crossed (IBTA
				 12.9.6) msg is the peer's DREQ */
	ENG_EV_TIMEWAIT_EXIT, /* id is IDLE; destroy it */
	ENG_EV_LAP_RECEIVED, /* answer with eng_apr */
	ENG_EV_LAP_ERROR,
	ENG_EV_APR_RECEIVED,
	ENG_EV_SIDR_REQ_RECEIVED, /* passive: first event of a new id */
	ENG_EV_SIDR_REQ_ERROR,
	ENG_EV_SIDR_REP_RECEIVED,
	ENG_EV_PORT_ERROR, /* established, status -ENETDOWN: the local
				 port went down (eng_port_down); the
				 connection stays, the client decides */
	ENG_EV_MRA_RECEIVED, /* the peer MRAed our REQ, REP or LAP: it
				needs msg.mra.service_timeout longer; we
				wait (once per message, as the kernel's CM
				tells its users) */
	ENG_EV_DEVICE_REMOVAL, /* status -ENODEV: the id's device went away
				  (eng_device_removed); the id is IDLE,
				  nothing more goes out for it: destroy it */
	ENG_EV__COUNT,
};

const char *eng_event_name(enum eng_event_type type);

struct eng_event {
	enum eng_event_type type;
	uint32_t id;
	uint64_t owner;
	uint64_t context; /* as set by eng_set_context */
	uint32_t listen_id; /* REQ/SIDR_REQ_RECEIVED: the listener */
	uint64_t listen_context;
	int status; /* 0, or -ETIMEDOUT / -ESTALE / -ENETDOWN /
		       -EHOSTUNREACH (eng_send_done) for errors */
	struct eng_addr addr; /* the peer */
	/*
	 * The id's state, and LAP sub-state, after the transition that made
	 * this event: the engine's, so that nobody else has to infer them.
	 */
	enum eng_state state;
	enum eng_lap_state lap;
	bool has_msg;
	struct cm_msg msg; /* the message behind the event, if any */
};

/*
 * ops->send: the transport holds the MAD (its destination is being
 * resolved); its outcome comes later through eng_send_done().
 */
#define ENG_SEND_DEFERRED 1

struct eng_ops {
	/*
	 * Send one MAD: 0, ENG_SEND_DEFERRED, or -errno. Errors are counted
	 * and the protocol retries as usual.
	 */
	int (*send)(void *ctx, const struct eng_addr *to,
		    const struct cm_msg *msg);
	/*
	 * Hand one event to its client. 'ev' stays valid until the id's
	 * eng_ack or eng_destroy. Must not call into the engine.
	 */
	void (*deliver)(void *ctx, const struct eng_event *ev);
	/* Source of comm ids and PSNs; tests seed it. */
	uint32_t (*random)(void *ctx);
	/*
	 * Optional: may 'owner' be given one more id now? A REQ for a
	 * listener whose owner is at its id limit is treated as one that
	 * found no credit (held with an MRA, then REJ "no resources"), so a
	 * listener cannot grow its owner past the daemon's per-client limit.
	 * NULL: no limit. Must not call into the engine.
	 */
	bool (*owner_has_room)(void *ctx, uint64_t owner);
};

struct eng_config {
	uint8_t mra_service_timeout; /* exponent of MRAs this side sends */
	unsigned int max_held; /* held REQs per listener beyond backlog */
};

struct eng_counters {
	uint64_t sent[CM_MSG__COUNT];
	uint64_t received[CM_MSG__COUNT];
	uint64_t retransmitted[CM_MSG__COUNT];
	uint64_t duplicates[CM_MSG__COUNT];
	uint64_t unexpected[CM_MSG__COUNT]; /* no record or wrong state */
	uint64_t malformed[CM_MSG__COUNT]; /* counted by the caller */
	uint64_t send_errors;
	uint64_t req_delivered;
	uint64_t req_held;
	uint64_t req_rejected_backlog;
	uint64_t req_no_listener;
	uint64_t stale_rejected;
	uint64_t timeouts; /* retries exhausted */
	uint64_t unexpected_api;
	uint64_t established_early; /* eng_establish before the RTU */
	uint64_t port_down; /* eng_port_down calls */
	uint64_t port_down_ids; /* ids told by them */
	uint64_t device_removed; /* eng_device_removed calls */
	uint64_t device_removed_ids; /* ids told by them */
	uint64_t send_deferred; /* ops->send said ENG_SEND_DEFERRED */
	uint64_t unreachable; /* ids failed by eng_send_done errors */
	uint64_t send_done_stale; /* outcomes for no record waiting on it */
	uint64_t spare_bytes; /* acked event items kept for reuse (evq.c) */
};

/*
 * Per local port, the per-type counts of struct eng_counters: what was
 * sent and sent again on the port, and what the engine made of the MADs
 * that came in on it (a duplicate or an unexpected MAD is charged to the
 * port it arrived on).
 */
enum eng_msg_count {
	ENG_MSG_SENT,
	ENG_MSG_RECEIVED,
	ENG_MSG_RETRANSMITTED,
	ENG_MSG_DUPLICATES,
	ENG_MSG_UNEXPECTED,
	ENG_MSG_MALFORMED,
	ENG_MSG__COUNT,
};

struct eng_port_counters {
	uint64_t msg[ENG_MSG__COUNT][CM_MSG__COUNT];
};

struct eng;

struct eng *eng_new(const struct eng_ops *ops, void *ctx,
		    const struct eng_config *cfg);
/* Frees every record without sending anything. */
void eng_free(struct eng *eng);

/* Declare a local port: its CA GUID and whether it is RoCE. */
int eng_port_set(struct eng *eng, uint16_t port, uint64_t ca_guid, bool roce);

/*
 * A local port went down (for good: eng_device_removed). Every record on
 * 'port' with an open exchange fails now, without sending anything on it:
 * REQ_SENT, MRA_REQ_RCVD, REP_RCVD, MRA_REP_SENT: REQ_ERROR -ENETDOWN, IDLE;
 * REQ_RCVD, MRA_REQ_SENT: REP_ERROR -ENETDOWN, IDLE (no REJ; the credit
 * returns; a held REQ is dropped silently); REP_SENT, MRA_REP_RCVD:
 * REP_ERROR -ENETDOWN, TIMEWAIT; DREQ_SENT: DREQ_ERROR -ENETDOWN, TIMEWAIT;
 * SIDR_REQ_SENT: SIDR_REQ_ERROR -ENETDOWN, IDLE; ESTABLISHED: LAP_ERROR
 * -ENETDOWN if a LAP of ours was pending, then PORT_ERROR -ENETDOWN, and
 * the connection stays. Other states and listeners are not touched;
 * destroyed records end the same way without events. Events queue behind
 * an unacknowledged one as usual. Returns how many ids were told, or
 * -EINVAL (port out of range) / -EBUSY.
 */
int eng_port_down(struct eng *eng, uint16_t port, uint64_t now);

/*
 * The device of 'port' went away for good (rdma_cm's
 * RDMA_CM_EVENT_DEVICE_REMOVAL): no MAD can leave or arrive on it again.
 * Held REQs on the port are dropped silently; then every other record on
 * it, in any state but IDLE and LISTEN, goes to IDLE at once with its
 * timer stopped and nothing sent, and its client gets DEVICE_REMOVAL
 * -ENODEV (once, queued behind an unacknowledged event as usual); the
 * client is left to destroy it. Destroyed records are freed. Listeners
 * (none is on a port, even one narrowed to it) and IDLE ids are not
 * touched. The port is no
 * longer valid: connects on it fail with -ENODEV until eng_port_set.
 * Returns how many ids were told, or -EINVAL (port out of range) / -EBUSY.
 */
int eng_device_removed(struct eng *eng, uint16_t port, uint64_t now);

/*
 * A send that ops->send deferred has left (err 0) or failed (-errno, such
 * as -EHOSTUNREACH: its destination could not be resolved); msg is the MAD
 * as the engine sent it, decoded. Only a record still waiting on that
 * message is touched:
 *   left: its retransmission timer restarts from now (the wait the
 *   message announced counts from when it really left);
 *   failed: the exchange fails now, with err as the status and nothing
 *   sent: REQ_SENT, MRA_REQ_RCVD: REQ_ERROR, IDLE; REP_SENT,
 *   MRA_REP_RCVD: REP_ERROR, TIMEWAIT; DREQ_SENT: DREQ_ERROR, TIMEWAIT;
 *   SIDR_REQ_SENT: SIDR_REQ_ERROR, IDLE. Other states go to the
 *   unexpected handler (counted).
 * Must not be called from inside an ops callback (ignored, logged).
 */
void eng_send_done(struct eng *eng, uint16_t port, const struct cm_msg *msg,
		   int err, uint64_t now);

/* Decoded MADs; from->port is the local port it arrived on. */
void eng_recv(struct eng *eng, const struct eng_addr *from,
	      const struct cm_msg *msg, uint64_t now);
/* For the caller's decoder: a MAD of 'type' that came in on 'port' failed
 * to decode. */
void eng_count_malformed(struct eng *eng, uint16_t port, enum cm_msg_type type);

/* Timers: arm one timer at eng_next_deadline(); on expiry run them. */
uint64_t eng_next_deadline(const struct eng *eng);
void eng_run_timers(struct eng *eng, uint64_t now);

/* Ids. */
int eng_create_id(struct eng *eng, uint64_t owner, uint64_t context,
		  uint32_t *id);
int eng_set_context(struct eng *eng, uint32_t id, uint64_t context);
int eng_ack(struct eng *eng, uint32_t id, uint64_t now);
int eng_destroy(struct eng *eng, uint32_t id, uint64_t now);
/* Destroy every id of a client that went away; returns how many. */
int eng_destroy_owner(struct eng *eng, uint64_t owner, uint64_t now);

/*
 * Which of the REQs (and SIDR_REQs) for its service ids a listener takes:
 * those on any port, those that came in on some ports, or those sent to
 * one GID of ours (a REQ's primary path GID on our side, Table 106
 * "Primary Remote Port GID"; a SIDR_REQ's destination GID,
 * eng_addr.local_gid). On RoCE a GID is an IP address, so a GID listener
 * is rdma_cm's listener bound to one address.
 */
/* Numbered by specificity: a request asks a later kind's listener first. */
enum eng_sel_kind {
	ENG_SEL_ANY,
	ENG_SEL_PORTS, /* the port indices set in 'ports' */
	ENG_SEL_GID, /* 'gid', whichever port it came in on */
};

#define ENG_PORT_WORDS (ENG_MAX_PORTS / 64)

struct eng_listen_sel {
	enum eng_sel_kind kind;
	uint8_t gid[CM_GID_SIZE]; /* GID: not all zero */
	uint64_t ports[ENG_PORT_WORDS]; /* PORTS: bit i % 64 of word i / 64 */
};

/*
 * Passive side. mask: all ones for one service id. backlog >= 1. sel NULL
 * is ENG_SEL_ANY. Two listeners may share (service id, mask) when their
 * selectors do not overlap: ANY overlaps every selector, PORTS ones that
 * share a port, GID ones of the same GID; a PORTS and a GID selector
 * never do (the GID one is the more specific). -EADDRINUSE otherwise, as
 * the kernel's rdma_cm decides for two binds of one port. A REQ goes to
 * the most specific listener that takes it: GID before PORTS before ANY,
 * then an exact service id before a masked one.
 */
int eng_listen(struct eng *eng, uint32_t id, uint64_t service_id, uint64_t mask,
	       unsigned int backlog, const struct eng_listen_sel *sel,
	       uint64_t now);

struct eng_connect_param {
	struct eng_addr dest; /* dest.port: the local port */
	uint8_t packet_life_time; /* exponent, from the path */
	/*
	 * The REQ as the client wants it. The engine sets local_comm_id and
	 * local_ca_guid, and starting_psn when it is 0; it writes them back.
	 */
	struct cm_req req;
};
int eng_connect(struct eng *eng, uint32_t id, struct eng_connect_param *p,
		uint64_t now);

/*
 * Accept a REQ. The engine sets the comm ids and local_ca_guid, and
 * starting_psn when 0, and writes them back into *rep.
 */
int eng_accept(struct eng *eng, uint32_t id, struct cm_rep *rep, uint64_t now);
/* Reject a REQ or a REP; rej gives reason, ARI and private data. */
int eng_reject(struct eng *eng, uint32_t id, const struct cm_rej *rej,
	       uint64_t now);
/* Active side: answer a REP. rtu may be NULL. */
int eng_rtu(struct eng *eng, uint32_t id, const struct cm_rtu *rtu,
	    uint64_t now);
/*
 * Ask the peer to wait 4.096 us * 2^service_timeout more for our answer
 * (pd: the MRA's private data, up to CM_MRA_PRIVATE_DATA_SIZE, or NULL):
 * to a REQ (REQ_RCVD, MRA_REQ_SENT), a REP (REP_RCVD, MRA_REP_SENT) or, in
 * ESTABLISHED, a LAP (LAP sub-state RCVD or MRA_LAP_SENT).
 */
int eng_mra(struct eng *eng, uint32_t id, uint8_t service_timeout,
	    const uint8_t *pd, size_t pd_len, uint64_t now);
/*
 * Passive side: the client's QP saw IBV_EVENT_COMM_EST (data arrived before
 * the RTU). REP_SENT or MRA_REP_RCVD: ESTABLISHED as if the RTU had come
 * (RTU_RECEIVED is delivered with has_msg false; the late RTU is counted
 * as a duplicate). Other states: -EINVAL.
 */
int eng_establish(struct eng *eng, uint32_t id, uint64_t now);
/* ESTABLISHED: send DREQ. DREQ_RCVD: send DREP. pd may be NULL. */
int eng_disconnect(struct eng *eng, uint32_t id, const uint8_t *pd,
		   size_t pd_len, uint64_t now);
/* Load an alternate path (IB only: -EOPNOTSUPP on RoCE). */
int eng_lap(struct eng *eng, uint32_t id, const struct cm_lap *lap,
	    uint64_t now);
/*
 * Answer a LAP_RECEIVED (LAP sub-state RCVD or MRA_LAP_SENT): status,
 * additional information (IBTA Table 117, up to CM_APR_INFO_SIZE) and
 * private data (up to CM_APR_PRIVATE_DATA_SIZE); info and pd may be NULL.
 */
int eng_apr(struct eng *eng, uint32_t id, uint8_t status, const uint8_t *info,
	    size_t info_len, const uint8_t *pd, size_t pd_len, uint64_t now);

struct eng_sidr_param {
	struct eng_addr dest;
	uint64_t service_id;
	uint16_t pkey;
	uint8_t timeout; /* exponent of the wait for SIDR_REP */
	uint8_t max_retries;
	uint8_t private_data[CM_SIDR_REQ_PRIVATE_DATA_SIZE];
};
int eng_sidr_req(struct eng *eng, uint32_t id, const struct eng_sidr_param *p,
		 uint64_t now);
/* Answer a SIDR_REQ_RECEIVED: status, qpn, qkey, info, private data. */
int eng_sidr_rep(struct eng *eng, uint32_t id, const struct cm_sidr_rep *rep,
		 uint64_t now);

/* Introspection (cmctl). */
struct eng_conn_info {
	uint32_t id;
	uint32_t remote_id;
	uint64_t remote_guid;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint64_t service_id;
	uint64_t owner;
	enum eng_state state;
	enum eng_lap_state lap;
	bool active;
	bool destroyed; /* finishing its protocol tail without a client */
	bool held; /* REQ held for want of a listener credit */
	bool unacked; /* an event is out with the client */
	size_t queued; /* events waiting behind it */
	uint64_t deadline; /* ENG_NO_DEADLINE if none */
};
/* Calls fn for every record until it returns non-zero; returns that. */
int eng_walk(const struct eng *eng,
	     int (*fn)(void *arg, const struct eng_conn_info *info), void *arg);

struct eng_listen_info {
	uint64_t service_id;
	uint64_t mask;
	struct eng_listen_sel sel;
	unsigned int backlog;
	unsigned int credits_used;
	unsigned int held;
	uint64_t delivered;
	uint64_t held_total;
	uint64_t rejected_backlog;
};
int eng_listen_info(const struct eng *eng, uint32_t id,
		    struct eng_listen_info *info);

/*
 * What an id's REQ, REP and SIDR messages negotiated, from this side. The
 * engine records it as the messages go out and come in (conn_learn);
 * nobody else keeps it. "From this side": a passive id's responder
 * resources are the requester's initiator depth and vice versa until it
 * accepts (as the kernel's cm_req_handler sets them), then what its REP
 * offered; an active id's are its REQ's, then the REP's swapped.
 */
struct eng_terms {
	uint32_t local_psn;
	uint32_t remote_psn;
	uint32_t sidr_qpn; /* UD: the SIDR_REP's QPN */
	uint32_t qkey; /* UD: the SIDR_REP's Q_Key */
	uint32_t listen_id; /* passive: the listener the request came to */
	bool sidr; /* a UD id: SIDR_REQ and SIDR_REP, no REQ */
	uint8_t transport; /* enum cm_transport of the REQ */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t target_ack_delay; /* the REP's */
	uint8_t failover; /* the REP's failover_accepted */
	uint8_t max_cm_retries;
	uint8_t local_cm_response_timeout;
	uint8_t remote_cm_response_timeout;
};

/* What the engine knows of one id (eng_id_info). */
struct eng_id_info {
	enum eng_state state;
	enum eng_lap_state lap; /* IDLE outside ESTABLISHED */
	bool active; /* we sent the REQ (or SIDR_REQ) */
	uint64_t context;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qpn;
	uint32_t remote_qpn; /* UD: the SIDR_REP's QPN */
	uint64_t service_id;
	uint64_t remote_ca_guid;
	uint8_t packet_life_time; /* exponent, of the REQ's primary path */
	struct eng_terms terms;
	/* LISTEN: the listener's service ids and rule 1's credit */
	uint64_t service_mask;
	unsigned int backlog;
	unsigned int credits_used;
	unsigned int held;
};
/* 0, or -ENOENT for an id the engine does not have. */
int eng_id_info(const struct eng *eng, uint32_t id, struct eng_id_info *info);

const struct eng_counters *eng_counters(const struct eng *eng);
/* A local port's share of them; NULL for a port out of range. */
const struct eng_port_counters *eng_port_counters(const struct eng *eng,
						  uint16_t port);
int eng_id_state(const struct eng *eng, uint32_t id, enum eng_state *state);
/* Records alive, destroyed ones still in their protocol tail included. */
size_t eng_record_count(const struct eng *eng);

#endif
