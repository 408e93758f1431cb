/* SPDX-License-Identifier: MIT */
/*
 * The client<->daemon protocol: the messages that libcmclient and the cmd
 * daemon exchange over the daemon's Unix socket. This header is the one
 * definition both sides compile against.
 *
 * Transport. The socket is a Unix SOCK_SEQPACKET socket, so every message is
 * exactly one datagram and the kernel keeps message boundaries; a message is
 * never split or merged, and there is no framing beyond the header below.
 * Both ends always run on the same host, so every integer field is in host
 * byte order and the structs in this file are the wire layout, byte for byte.
 * GIDs and IP addresses are byte strings in network order, as in
 * union ibv_gid and struct in6_addr. That is said here once and applies to
 * every message; nothing below repeats it.
 *
 * Layout. Every struct has a fixed size with explicit reserved members
 * (rsvd...) where alignment would otherwise leave a hole, and every size and
 * the offsets that matter are pinned by _Static_assert at the end of this
 * file, so a change that moves a field fails to compile instead of silently
 * breaking old peers. Reserved members, private data bytes beyond their
 * length and string bytes beyond their NUL are sent as zero and refused when
 * not zero: a message has exactly one valid encoding, which keeps the
 * decoder honest and leaves room to give those bytes a meaning later.
 *
 * Header. Every message starts with struct cmp_hdr: protocol version, type,
 * total length (header included; it must equal the datagram's length) and a
 * sequence number. A request carries a sequence number the client chooses;
 * the reply echoes it, so a client may pipeline requests and match replies.
 * An event carries its connection id's event sequence number instead, which
 * the client hands back in ACK_EVENT.
 *
 * Conversation. The client's first request is HELLO; the daemon answers any
 * other request before a successful HELLO with status -EPROTO. Every request
 * gets exactly one reply, of the type cmp_reply_type() names, in the order
 * the requests were sent -- except that a request sent with CMP_HDR_NOREPLY
 * gets its reply only when it fails (see below). A reply comes before any
 * event that its request causes, so a client learns the outcome of CONNECT
 * before the connection's first event. Events arrive between replies at
 * any time.
 *
 * Pipelining. A client need not wait for a reply before sending its next
 * request: the daemon handles requests one at a time, in order, whatever
 * it has read ahead. CMP_HDR_NOREPLY in a request's header says "answer
 * only if this fails": on success the daemon sends nothing, on failure the
 * usual reply, whose id member (struct cmp_reply) names the id the request
 * was about, so the client can tell the application which connection's
 * request failed. Only requests whose reply is the plain struct cmp_reply
 * and that name an existing id may carry it (cmp_noreply_allowed()); a
 * CONNECT that creates its id (id CMP_ID_NONE, see struct cmp_connect) may
 * not, since its reply carries the new id. Together these let a client keep
 * thousands of connections in flight with a few datagrams per wake-up
 * instead of one round trip per request.
 *
 * A pipelining client must keep reading while it sends. The daemon stops
 * reading a client's requests while many of its replies and events wait
 * to be read (and reads again once most are gone), so a client that blocks
 * in send() without reading stalls both ends; the daemon notices that
 * (requests waiting, nothing read for a few seconds) and drops the client.
 *
 * The three rules of DESIGN.md are properties of this protocol:
 *  1. A listener's backlog is a credit: LISTEN grants the daemon permission
 *     to hand out that many REQ_RECEIVED events not yet answered by ACCEPT,
 *     REJECT or DESTROY_ID of the new id.
 *  2. Events are serialized per id: the daemon sends at most one event per
 *     id that the client has not acknowledged with ACK_EVENT, and every
 *     event carries the id's context, so a client never searches for it.
 *  3. Destroy is final: once the DESTROY_ID reply is sent, no event for that
 *     id is sent again, not even one that was queued before.
 *
 * Versions. The header layout and the HELLO and HELLO_REPLY messages are
 * frozen for all versions, and HELLO and its reply always carry
 * CMP_VERSION_HELLO in the header, so that any client and any daemon can
 * always at least agree that they cannot talk. Every later message carries
 * the version chosen in the HELLO reply.
 *
 * Restarts (docs/OPERATIONS.md, "Upgrade in place"). A daemon that stops
 * to hand over to its successor keeps every client's ids: it first shuts
 * the reading side of each client socket (from then on the client's sends
 * fail with EPIPE: those requests were not seen), answers every request it
 * had received, writes what the socket takes, and closes it. The client
 * reads what is left up to EOF, connects again, sends HELLO and then
 * RESUME with the token SESSION gave it, and resends the requests that
 * had failed. The successor answers RESUME first, then sends what its
 * predecessor had queued for the client and could not write (replies, in
 * request order, and events), then carries on. So every request gets its
 * one reply and every event arrives once, in order, across the gap.
 *
 * This file and cmp.c are pure: no I/O, no logging, no allocation.
 */
#ifndef CMD_PROTO_CMP_H
#define CMD_PROTO_CMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cm_mad.h"

/*
 * The versions this build speaks. A peer that shares none of them gets
 * -EPROTONOSUPPORT from HELLO together with the daemon's range.
 *
 * Version 1 is still open: no release has shipped it, so messages are
 * added to it rather than to a version 2. PORTS and LIST's held_reqs
 * (which moved remote_gid and shrank LIST batches) came that way, and
 * so did LIST's port, peer LID, QP numbers and owner_comm (entries of
 * 104 bytes, batches of 39). From
 * the first release on, a change to a message means a new version.
 */
#define CMP_VERSION_MIN 1
#define CMP_VERSION_MAX 1
/* What cmp_msg_init() puts in the header of every message but HELLO's. */
#define CMP_VERSION CMP_VERSION_MAX
/* Header version of HELLO and HELLO_REPLY, forever (see "Versions" above). */
#define CMP_VERSION_HELLO 1

/*
 * The largest datagram either side sends, header included. Receivers size
 * their buffer with it and decode refuses anything longer. One page is
 * ten times the largest fixed-size message (a SIDR_REQ_RECEIVED event, 392
 * bytes), which leaves later versions room to grow, and it sets the LIST,
 * COUNTERS and PORTS batch sizes below. It stays far below the default
 * socket send buffer, so many messages can queue on one client socket.
 */
#define CMP_MSG_MAX 4096

/* The id that names no connection; the daemon never hands it out. */
#define CMP_ID_NONE 0

/*
 * A status is 0 or a negative errno value; Linux errno values are below
 * 4096, so anything more negative is garbage and refused.
 */
#define CMP_ERRNO_MAX 4095

/* Fixed string sizes, NUL included. */
#define CMP_CLIENT_NAME_SIZE 32
#define CMP_DAEMON_VERSION_SIZE 32
/* IBV_SYSFS_NAME_MAX: the longest RDMA device name libibverbs reports. */
#define CMP_DEV_NAME_SIZE 64
#define CMP_COUNTER_NAME_SIZE 32
/* TASK_COMM_LEN: a process's name in /proc/PID/comm, NUL included. */
#define CMP_COMM_SIZE 16
/* A file name in CAPTURE, NUL included. */
#define CMP_PATH_SIZE 256

/* QPNs and PSNs are 24 bits wide (IBTA Table 106: Local QPN, PSN). */
#define CMP_QPN_MAX 0xffffff
#define CMP_PSN_MAX 0xffffff
/* Retry Count and RNR Retry Count are 3-bit fields (Tables 106, 110). */
#define CMP_RETRY_MAX 7
/* Max CM Retries is a 4-bit field (Table 106). */
#define CMP_CM_RETRIES_MAX 15
/*
 * CM response timeouts, Target ACK Delay, Local ACK Timeout and the MRA's
 * Service Timeout are 5-bit exponents (Tables 106, 107, 110).
 */
#define CMP_TIMEOUT_MAX 31
/* Flow Label is 20 bits (Table 106). */
#define CMP_FLOW_LABEL_MAX 0xfffff
/* SL is 4 bits (Table 106). */
#define CMP_SL_MAX 15
/* Packet Rate is a 6-bit code (Table 106). */
#define CMP_RATE_MAX 63
/* Packet life time is a 6-bit exponent in a path record. */
#define CMP_PACKET_LIFE_TIME_MAX 63
/* Unicast LIDs are 0x0001-0xbfff (IBTA ch. 4); the rest is multicast. */
#define CMP_LID_UNICAST_MAX 0xbfff

/*
 * Message types. Each request has one reply type, the request's value with
 * CMP_REPLY_BIT set, so that a client can check a reply against its pending
 * request without a table; events have one type of their own.
 */
#define CMP_REPLY_BIT 0x80

/* Flags of a request in cmp_msgs.def. */
#define CMP_F_ID 0x1u /* the body starts with the id it acts on */
#define CMP_F_NOREPLY 0x2u /* may carry CMP_HDR_NOREPLY */
#define CMP_F_ACK 0x4u /* may carry CMP_HDR_ACK */

/* The requests and their replies, from cmp_msgs.def. */
enum cmp_type {
#define CMP_REQUEST(NAME, member, code, body, reply, flags)                    \
	CMP_TYPE_##NAME = (code),                                              \
	CMP_TYPE_##NAME##_REPLY = CMP_REPLY_BIT | (code),
#include "cmp_msgs.def"
	CMP_TYPE_EVENT = 0x40,
};

/*
 * Requests are numbered densely from 1 in the order of their rows, which
 * loops in tests and the tables in cmp.c rely on.
 */
enum {
#define CMP_REQUEST(NAME, member, code, body, reply, flags)                    \
	CMP_REQUEST_ROW_##NAME,
#include "cmp_msgs.def"
	CMP_REQUEST_ROWS,
};
#define CMP_TYPE_REQUEST_MAX ((unsigned int)CMP_REQUEST_ROWS)
#define CMP_REQUEST(NAME, member, code, body, reply, flags)                    \
	_Static_assert((int)CMP_TYPE_##NAME == CMP_REQUEST_ROW_##NAME + 1,     \
		       #NAME " numbered in its row's order");                  \
	_Static_assert(!((flags)&CMP_F_NOREPLY) ||                             \
			       (CMP_REPLY_IS_##reply && ((flags)&CMP_F_ID)),   \
		       #NAME ": NOREPLY needs a plain reply and an id");       \
	_Static_assert(!((flags)&CMP_F_ACK) || ((flags)&CMP_F_ID),             \
		       #NAME ": ACK needs an id");
#define CMP_REPLY_IS_PLAIN 1
#define CMP_REPLY_IS_FIXED 0
#define CMP_REPLY_IS_BATCH 0
#include "cmp_msgs.def"
_Static_assert(CMP_TYPE_REQUEST_MAX < CMP_TYPE_EVENT &&
		       (CMP_TYPE_REQUEST_MAX | CMP_REPLY_BIT) <= 0xff,
	       "request and reply types fit below and above EVENT");

/* True for a request type; replies and EVENT are sent by the daemon. */
static inline bool cmp_type_is_request(unsigned int type)
{
	return type >= CMP_TYPE_HELLO && type <= CMP_TYPE_REQUEST_MAX;
}

/* A request type's CMP_F_* flags (cmp_msgs.def); 0 for other values. */
unsigned int cmp_request_flags(unsigned int type);

/*
 * Whether a request of this type may carry CMP_HDR_NOREPLY: it names an
 * existing id and its reply is the plain struct cmp_reply. (CONNECT with id
 * CMP_ID_NONE may not, which cmp_decode() checks on the body.)
 */
static inline bool cmp_noreply_allowed(unsigned int type)
{
	return cmp_request_flags(type) & CMP_F_NOREPLY;
}

/* Whether a request of this type may carry CMP_HDR_ACK. */
static inline bool cmp_ack_allowed(unsigned int type)
{
	return cmp_request_flags(type) & CMP_F_ACK;
}

/* Whether a request's body starts with the id it acts on. */
static inline bool cmp_type_has_id(unsigned int type)
{
	return cmp_request_flags(type) & CMP_F_ID;
}

/* The reply type that answers a request type. */
static inline enum cmp_type cmp_reply_type(enum cmp_type request)
{
	return (enum cmp_type)(CMP_REPLY_BIT | request);
}

/*
 * The common header. It is 16 bytes so that every body starts 8-byte
 * aligned when the receive buffer is, and its layout never changes between
 * versions, so that a peer can always read far enough to tell which
 * version and type it got.
 */
struct cmp_hdr {
	uint16_t version; /* CMP_VERSION_HELLO for HELLO, else negotiated */
	uint16_t type; /* enum cmp_type */
	/* The whole datagram, header included; a second check on recv(). */
	uint32_t length;
	/* Request: chosen by the client; reply: the request's; event: the
	 * id's event sequence number (see struct cmp_event). */
	uint32_t seq;
	uint16_t flags; /* CMP_HDR_*: requests only, 0 in replies and events */
	uint16_t rsvd0;
};

/*
 * Header flags. NOREPLY: send the reply only if the request fails (see
 * "Pipelining" above); allowed where cmp_noreply_allowed() says so.
 *
 * ACK: the request also acknowledges its id's event, as an ACK_EVENT of
 * that event's sequence number sent just before it would; allowed on the
 * requests that answer an event (ACCEPT, REJECT, RTU, MRA, DISCONNECT,
 * NOTIFY_ESTABLISHED, LAP, APR, SIDR_REP: cmp_ack_allowed()). Rule 2 below
 * leaves at most one unacknowledged event per id, so the flag names it
 * without a number. The acknowledgement is made first and stands whatever
 * the request's outcome; when the id has no unacknowledged event the
 * request fails with -EINVAL and nothing is done. It saves a client one
 * message (and, blocking, one round trip) per event it answers; the next
 * event of the id may then come before the client has finished with this
 * one, which libcmclient holds back until the application acks it.
 */
#define CMP_HDR_NOREPLY 0x0001
#define CMP_HDR_ACK 0x0002
#define CMP_HDR_FLAGS_ALL (CMP_HDR_NOREPLY | CMP_HDR_ACK)

/* QP types, fixed per id at CREATE_ID. */
enum cmp_qp_type {
	CMP_QP_TYPE_RC = 1, /* connected with CONNECT / ACCEPT */
	CMP_QP_TYPE_UC = 2, /* likewise; IBTA transport type 1 in the REQ */
	/* Resolved with SIDR_REQ / SIDR_REP; CONNECT on a UD id is refused. */
	CMP_QP_TYPE_UD = 3,
	/* 4 is kept for XRC (the REQ's extended transport type); this
	 * version refuses it. */
};
#define CMP_QP_TYPE_MAX CMP_QP_TYPE_UD

/*
 * The CM states, reported by QUERY_ID and LIST, and the alternate path
 * sub-states of an ESTABLISHED connection, which run alongside its state
 * rather than replacing it: from cm_states.def, as the engine's are.
 */
enum cmp_state {
#define CM_STATE(NAME, value) CMP_STATE_##NAME = (value),
#include "cm_states.def"
};
#define CMP_STATE_MAX CMP_STATE_SIDR_REQ_RCVD

enum cmp_lap_state {
#define CM_LAP_STATE(NAME, ENG, value, text) CMP_LAP_STATE_##NAME = (value),
#include "cm_states.def"
};
#define CMP_LAP_STATE_MAX CMP_LAP_STATE_MRA_LAP_RCVD

/* REP Failover Accepted, 2 bits (Table 110); 3 is reserved. */
enum cmp_failover {
	CMP_FAILOVER_ACCEPTED = 0,
	CMP_FAILOVER_NOT_SUPPORTED = 1,
	CMP_FAILOVER_REJECTED = 2,
};
#define CMP_FAILOVER_MAX CMP_FAILOVER_REJECTED

/* A REP's 2-bit failover_accepted as the protocol reports it: the value
 * IBTA reserves (3) reads as rejected. */
static inline uint8_t cmp_failover_of(uint8_t failover_accepted)
{
	return failover_accepted <= CMP_FAILOVER_MAX ? failover_accepted :
						       CMP_FAILOVER_REJECTED;
}

/*
 * CM messages named in events (which message timed out, which one the peer
 * MRAed). Kept apart from cm_mad.h's enum cm_msg_type so that this
 * protocol's numbers never move when that table does.
 */
enum cmp_cm_msg {
	CMP_CM_MSG_NONE = 0, /* failed before any message was sent */
	CMP_CM_MSG_REQ = 1,
	CMP_CM_MSG_MRA = 2,
	CMP_CM_MSG_REJ = 3,
	CMP_CM_MSG_REP = 4,
	CMP_CM_MSG_RTU = 5,
	CMP_CM_MSG_DREQ = 6,
	CMP_CM_MSG_DREP = 7,
	CMP_CM_MSG_LAP = 8,
	CMP_CM_MSG_APR = 9,
	CMP_CM_MSG_SIDR_REQ = 10,
	CMP_CM_MSG_SIDR_REP = 11,
};

/*
 * A path as the CM negotiated it: what an app needs for its QP's address
 * vector and timeouts (ibv_qp_attr's ah_attr, path_mtu, timeout, pkey_index,
 * port_num). QUERY_ID, LAP and the REQ, REP, LAP and SIDR events carry
 * it.
 */
struct cmp_path {
	uint32_t flow_label; /* 20 bits */
	uint16_t local_lid; /* 0 on RoCE */
	uint16_t remote_lid; /* 0 on RoCE */
	uint16_t pkey;
	/* Index of pkey in the local port's table, for ibv_modify_qp(INIT). */
	uint16_t pkey_index;
	uint8_t port_num; /* 1-based, on device dev_name */
	uint8_t mtu; /* enum cm_mtu, or 0 where it does not apply (LAP) */
	uint8_t sl;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t packet_rate; /* IBTA Table 101 code, 0 = port rate */
	uint8_t local_ack_timeout;
	/* Index of local_gid in the port's GID table, for the GRH. */
	uint8_t sgid_index;
	/* 1 if packets need a GRH: always on RoCE, off-subnet on IB. */
	uint8_t grh;
	/* Path record exponent behind the CM's timers; reported, not set. */
	uint8_t packet_life_time;
	uint8_t rsvd0[2];
	uint8_t local_gid[CM_GID_SIZE];
	uint8_t remote_gid[CM_GID_SIZE];
	char dev_name[CMP_DEV_NAME_SIZE]; /* "" where it does not apply */
};

/*
 * Which local ports an id uses. Zero means all ports, which is what most
 * listeners want; a connecting id with it lets the daemon pick the port
 * that reaches the destination.
 */
enum cmp_sel {
	CMP_SEL_ANY = 0,
	CMP_SEL_PORT = 1, /* dev_name and port_num; port 0 = all its ports */
	CMP_SEL_GID = 2, /* the port owning gid */
};
#define CMP_SEL_MAX CMP_SEL_GID

struct cmp_port_sel {
	uint8_t kind; /* enum cmp_sel; members it does not use are zero */
	uint8_t port_num;
	uint8_t rsvd0[6];
	uint8_t gid[CM_GID_SIZE];
	char dev_name[CMP_DEV_NAME_SIZE];
};

/*
 * How a destination is named. GID is native IB addressing; IPv4 and IPv6
 * name the RoCE port holding that address, as rdma_cm does; LID reaches a
 * port on the local subnet without a GRH.
 */
enum cmp_af {
	CMP_AF_NONE = 0, /* refused: a destination is mandatory */
	CMP_AF_GID = 1,
	CMP_AF_IPV4 = 2,
	CMP_AF_IPV6 = 3,
	CMP_AF_LID = 4,
};
#define CMP_AF_MAX CMP_AF_LID

/* A destination, tagged by family; members the family does not use are 0. */
struct cmp_addr {
	uint8_t family; /* enum cmp_af */
	uint8_t rsvd0;
	uint16_t lid; /* CMP_AF_LID only */
	uint32_t rsvd1;
	/* GID or IPv6 address; an IPv4 address in the first 4 bytes. */
	uint8_t addr[16];
};

/*
 * Path attributes a CONNECT may force instead of taking them from the
 * resolved path; a bit in cmp_path_set.flags marks each one that is set.
 */
enum cmp_path_flag {
	CMP_PATH_FLAG_MTU = 1u << 0,
	CMP_PATH_FLAG_PKEY = 1u << 1,
	CMP_PATH_FLAG_SL = 1u << 2,
	CMP_PATH_FLAG_TRAFFIC_CLASS = 1u << 3,
	CMP_PATH_FLAG_HOP_LIMIT = 1u << 4,
	CMP_PATH_FLAG_FLOW_LABEL = 1u << 5,
	CMP_PATH_FLAG_PACKET_RATE = 1u << 6,
	CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT = 1u << 7,
};
#define CMP_PATH_FLAG_ALL 0xffu

/* Path overrides; a member whose flag is clear must be zero. */
struct cmp_path_set {
	uint32_t flags; /* enum cmp_path_flag bits */
	uint32_t flow_label;
	uint16_t pkey;
	uint8_t mtu; /* enum cm_mtu */
	uint8_t sl;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t packet_rate;
	uint8_t local_ack_timeout;
};

/*
 * Private data. IB CM messages carry their private data area whole, with no
 * length (Tables 106-120), so a request states how many bytes it means and the
 * daemon pads the rest of the MAD's area with zeros. Received private data
 * is always reported whole, with private_data_len set to the area's size,
 * because the wire does not say how much of it the peer meant.
 */

/*
 * Requests. Every request but HELLO, CREATE_ID, LIST, COUNTERS, PORTS and
 * PATHS names an existing id of the same client as its first member; id 0 is
 * refused, except in CONNECT, where it asks for a new id (struct
 * cmp_connect).
 */

/* HELLO: the first request. */
struct cmp_hello {
	uint16_t min_version; /* the range the client speaks */
	uint16_t max_version;
	uint32_t rsvd0;
	/* Shown by cmctl and in the daemon's log, so people can tell apps
	 * apart; the daemon learns pid and uid from SO_PEERCRED instead. */
	char name[CMP_CLIENT_NAME_SIZE];
};

/*
 * HELLO_REPLY. On success version is the highest one both sides speak. On
 * failure (status -EPROTONOSUPPORT) version is 0, and unlike every other
 * reply the body is still filled in, so the client can say which versions
 * the daemon would have taken.
 */
struct cmp_hello_reply {
	int32_t status;
	uint16_t version;
	uint16_t min_version; /* the range the daemon speaks */
	uint16_t max_version;
	uint16_t rsvd0;
	uint32_t max_ids; /* ids one client may hold at once */
	uint32_t max_events; /* events the daemon queues for one client */
	uint32_t max_msg; /* largest datagram; at most CMP_MSG_MAX */
	char daemon_version[CMP_DAEMON_VERSION_SIZE];
};

/* CREATE_ID: a new id in IDLE; context comes back in every event. */
struct cmp_create_id {
	uint64_t context;
	uint8_t qp_type; /* enum cmp_qp_type */
	uint8_t rsvd0[7];
};

struct cmp_create_id_reply {
	int32_t status;
	uint32_t id;
};

/*
 * A request that names only an id: DESTROY_ID, NOTIFY_ESTABLISHED and
 * QUERY_ID.
 *
 * DESTROY_ID is final (rule 3): once its reply is sent no event for the id
 * is sent again, and the daemon finishes the protocol on its own (REJ while
 * the handshake is open, DREQ when established, DREP after a DREQ, then
 * timewait). Destroying a passive id that still holds a listener's credit
 * returns the credit. Events the daemon sent for the id before the reply
 * may still sit in the socket ahead of it; the library drops them (they
 * need no ACK_EVENT), so that its caller never sees one after destroy
 * returns.
 *
 * NOTIFY_ESTABLISHED tells the daemon that the app's QP saw
 * IBV_EVENT_COMM_EST, i.e. the peer's data arrived before its RTU (IBTA
 * ch. 12, REP_SENT); the daemon moves the id to ESTABLISHED as if the RTU
 * had come, and ignores the RTU if it comes later.
 */
struct cmp_id_ref {
	uint32_t id;
	uint32_t rsvd0;
};

/*
 * SET_CONTEXT replaces the id's context. The next event carries the new
 * one; an event already sent and not yet acknowledged keeps the old one.
 */
struct cmp_set_context {
	uint32_t id;
	uint32_t rsvd0;
	uint64_t context;
};

/*
 * LISTEN: the id serves every REQ (or SIDR_REQ, for a UD id) whose service
 * id matches service_id under service_mask. backlog is the credit of rule
 * 1, at least 1; a REQ that finds no credit is held with an MRA, and beyond
 * the daemon's limit rejected. service_id may have no bit set outside
 * service_mask, so that two listeners' claims can be compared.
 */
struct cmp_listen {
	uint32_t id;
	uint32_t backlog;
	uint64_t service_id;
	uint64_t service_mask;
	struct cmp_port_sel port;
};

/*
 * CONNECT: send a REQ (RC or UC ids). The app has created its QP and moved
 * it to INIT; local_qpn and start_psn go into the REQ as they are. The QP
 * type is the id's, fixed at CREATE_ID, and the REQ has no Q_Key for RC or
 * UC (Table 106's Local Q_Key is for RD), so neither is repeated here.
 * Exactly one first outcome follows: REP_RECEIVED, REJ_RECEIVED or
 * CONNECT_ERROR.
 *
 * With id CMP_ID_NONE, CONNECT first creates the id, as CREATE_ID would,
 * from qp_type (RC or UC) and context, and the reply's id member names it
 * (CMP_ID_NONE when the request failed; no id is left behind then). That
 * saves a pipelining client the round trip of CREATE_ID. With any other id,
 * qp_type and context are 0.
 */
struct cmp_connect {
	uint32_t id;
	uint32_t local_qpn;
	uint32_t start_psn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control; /* 0 or 1: end-to-end flow control */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq; /* 0 or 1 */
	uint8_t max_cm_retries;
	/* Table 106 Local CM Response Timeout: how long we take to answer. */
	uint8_t local_cm_response_timeout;
	/* Table 106 Remote CM Response Timeout: how long we wait for a REP. */
	uint8_t remote_cm_response_timeout;
	uint8_t private_data_len;
	uint8_t qp_type; /* enum cmp_qp_type; with id CMP_ID_NONE only */
	uint8_t rsvd0;
	uint64_t service_id;
	struct cmp_addr dst;
	struct cmp_port_sel src;
	struct cmp_path_set path;
	uint8_t private_data[CM_REQ_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[4];
	uint64_t context; /* with id CMP_ID_NONE only */
};

/*
 * RESOLVE_ROUTE: the path a CONNECT of this id with the same dst, src,
 * path settings and service id would take, answered by a ROUTE_RESOLVED
 * event (on IB ports the subnet administrator's path, which may take a
 * while; elsewhere at once). The id stays IDLE; ack the event before
 * CONNECT. A CONNECT with the event's path as a whole cmp_path_set asks
 * the SA nothing more.
 */
struct cmp_resolve_route {
	uint32_t id;
	uint32_t rsvd0;
	uint64_t service_id;
	struct cmp_addr dst;
	struct cmp_port_sel src;
	struct cmp_path_set path;
};

/*
 * ACCEPT: send a REP for a REQ_RECEIVED id. It returns the listener's
 * credit. The app's QP is in RTR by now so that the peer's first packet,
 * which may come before the RTU, is not lost.
 */
struct cmp_accept {
	uint32_t id;
	uint32_t local_qpn;
	uint32_t start_psn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t failover; /* enum cmp_failover */
	uint8_t flow_control;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t private_data_len;
	uint8_t private_data[CM_REP_PRIVATE_DATA_SIZE];
};

/*
 * REJECT: send a REJ for a received REQ or REP (returning the credit of a
 * REQ). reason is an IBTA Table 109 code (enum cm_rej_reason); apps will
 * mostly send CM_REJ_CONSUMER_DEFINED with their own private data.
 */
struct cmp_reject {
	uint32_t id;
	uint16_t reason;
	uint8_t ari_len;
	uint8_t private_data_len;
	uint8_t ari[CM_REJ_ARI_SIZE];
	uint8_t private_data[CM_REJ_PRIVATE_DATA_SIZE];
	uint8_t rsvd0[4];
};

/*
 * RTU: the active side confirms a REP_RECEIVED once its QP is in RTS; the
 * id is ESTABLISHED when the reply says so, and no event follows on this
 * side.
 */
struct cmp_rtu {
	uint32_t id;
	uint8_t private_data_len;
	uint8_t rsvd0[3];
	uint8_t private_data[CM_RTU_PRIVATE_DATA_SIZE];
};

/*
 * MRA: ask the peer for more time to answer the REQ, REP or LAP the id
 * received (Table 107). service_timeout is the IBTA exponent. The daemon
 * sends MRAs for held REQs itself; this is for apps that know they are
 * slow.
 */
struct cmp_mra {
	uint32_t id;
	uint8_t service_timeout;
	uint8_t private_data_len;
	uint8_t rsvd0[2];
	uint8_t private_data[CM_MRA_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[2];
};

/*
 * DISCONNECT: send a DREQ, or the DREP when a DREQ was received. The limit
 * is the DREQ's, the smaller of the two, so that the same call works in
 * both states.
 */
struct cmp_disconnect {
	uint32_t id;
	uint8_t private_data_len;
	uint8_t rsvd0[3];
	uint8_t private_data[CM_DREQ_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[4];
};

/*
 * LAP: propose alt_path as the connection's alternate path (Table 115);
 * the answer is an APR_RECEIVED event. alt_path's mtu, pkey, pkey_index
 * and packet_life_time are ignored (the LAP does not carry them) and may be
 * 0; an empty dev_name means the primary path's device.
 */
struct cmp_lap {
	uint32_t id;
	uint8_t private_data_len;
	uint8_t rsvd0[3];
	struct cmp_path alt_path;
	uint8_t private_data[CM_LAP_PRIVATE_DATA_SIZE];
};

/*
 * APR: answer a LAP_RECEIVED. ap_status is an IBTA Table 117 code (enum
 * cm_apr_status), info the additional information it calls for.
 */
struct cmp_apr {
	uint32_t id;
	uint8_t ap_status;
	uint8_t info_len;
	uint8_t private_data_len;
	uint8_t rsvd0;
	uint8_t info[CM_APR_INFO_SIZE];
	uint8_t private_data[CM_APR_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[4];
};

/*
 * SIDR_REQ: resolve a service to a UD QPN and Q_Key (UD ids). The outcome
 * is SIDR_REP_RECEIVED or CONNECT_ERROR. pkey 0 lets the daemon take the
 * port's default P_Key; zero retries and timeout take the daemon's
 * defaults, because SIDR has no field to carry them to the peer.
 */
struct cmp_sidr_req {
	uint32_t id;
	uint16_t pkey;
	uint8_t max_cm_retries;
	uint8_t cm_response_timeout;
	uint64_t service_id;
	struct cmp_addr dst;
	struct cmp_port_sel src;
	uint8_t private_data_len;
	uint8_t rsvd0[7];
	uint8_t private_data[CM_SIDR_REQ_PRIVATE_DATA_SIZE];
};

/*
 * SIDR_REP: answer a SIDR_REQ_RECEIVED. status is an IBTA Table 121 code
 * (enum cm_sidr_status); qpn and qkey are the app's UD QP's, and mean
 * something only with CM_SIDR_SUCCESS.
 */
struct cmp_sidr_rep {
	uint32_t id;
	uint32_t qpn;
	uint32_t qkey;
	uint8_t status;
	uint8_t private_data_len;
	uint8_t rsvd0[2];
	uint8_t private_data[CM_SIDR_REP_PRIVATE_DATA_SIZE];
};

/*
 * ACK_EVENT: the client is done with the id's event number seq (rule 2),
 * and the daemon may send that id's next event. seq must be the id's
 * outstanding event, else the reply is -EINVAL and nothing changes.
 */
struct cmp_ack_event {
	uint32_t id;
	uint32_t seq;
};

/*
 * What QUERY_ID reports about one id. Negotiated values are the ones the
 * app's QP should use: responder_resources becomes max_dest_rd_atomic and
 * initiator_depth max_rd_atomic; the PSNs are the ones each side sends
 * from. Members the state has not reached yet are 0.
 */
struct cmp_id_info {
	uint32_t id;
	uint32_t listen_id; /* the listener a passive id came from, or 0 */
	uint64_t context;
	uint64_t service_id;
	uint64_t service_mask; /* listeners only */
	uint64_t remote_ca_guid;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t local_psn;
	uint32_t remote_psn;
	uint32_t qkey; /* UD: the peer's Q_Key from its SIDR_REP */
	/* Listeners: rule 1's credit, how much of it REQs hold now, and how
	 * many REQs wait (MRAed) for a credit to come back. */
	uint32_t backlog;
	uint32_t credits_in_use;
	uint32_t held_reqs;
	uint8_t state; /* enum cmp_state */
	uint8_t lap_state; /* enum cmp_lap_state */
	uint8_t qp_type; /* enum cmp_qp_type */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t failover; /* enum cmp_failover */
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t max_cm_retries;
	uint8_t local_cm_response_timeout;
	uint8_t remote_cm_response_timeout;
	uint8_t has_alt_path; /* 0 or 1: alt_path is loaded */
	/*
	 * Listeners: their selector's kind (enum cmp_sel), and path says
	 * where they listen: dev_name and port_num for PORT (port_num 0:
	 * every port of the device), local_gid for GID, nothing for ANY.
	 * Other ids: ANY.
	 */
	uint8_t sel;
	struct cmp_path path;
	struct cmp_path alt_path;
};

struct cmp_query_id_reply {
	int32_t status;
	uint32_t rsvd0;
	struct cmp_id_info info;
};

/* What LIST returns. */
enum cmp_list_filter {
	CMP_LIST_FILTER_LISTENERS = 1,
	CMP_LIST_FILTER_CONNECTIONS = 2,
	CMP_LIST_FILTER_ALL = 3,
};
#define CMP_LIST_FILTER_MAX CMP_LIST_FILTER_ALL

/*
 * LIST: walk the daemon's ids (every client's, for cmctl), one batch per
 * request. cursor is 0 for the first batch and the previous reply's
 * next_cursor after that; it is opaque, so the daemon can resume after an
 * id that was destroyed in between.
 */
struct cmp_list {
	uint64_t cursor;
	uint8_t filter; /* enum cmp_list_filter */
	uint8_t rsvd0[7];
};

/* One id in a LIST batch. The owner is whom SO_PEERCRED named. */
struct cmp_list_entry {
	uint32_t id;
	uint8_t state; /* enum cmp_state */
	uint8_t lap_state; /* enum cmp_lap_state */
	uint8_t qp_type; /* enum cmp_qp_type */
	uint8_t sel; /* listeners: enum cmp_sel of their selector; else ANY */
	uint64_t service_id;
	uint64_t service_mask; /* listeners only */
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t owner_pid;
	uint32_t owner_uid;
	/* Listeners only, as in struct cmp_id_info: the credit, how much of
	 * it is in use, and the REQs held (MRAed) waiting for a credit. */
	uint32_t backlog;
	uint32_t credits_in_use;
	uint32_t held_reqs;
	/*
	 * Listeners with a PORT selector: one of its ports (the first the
	 * daemon serves; a PORTS entry's port_index) and its port_num (0:
	 * every port of that port's device). Zero otherwise.
	 */
	uint16_t sel_port_index;
	uint8_t sel_port_num;
	uint8_t rsvd1;
	union {
		uint8_t remote_gid[CM_GID_SIZE]; /* connections: the peer's */
		/* Listeners with a GID selector: that GID; else zero. */
		uint8_t listen_gid[CM_GID_SIZE];
	};
	/*
	 * Connections (zero for listeners), what `rdma res show cm_id`
	 * shows of the kernel's: the port of the id's path (a PORTS entry's
	 * port_index, and its port_num; both 0 before the id has a path),
	 * the peer's LID (0 on RoCE), grh 1 when the path has a GRH (the
	 * peer is addressed by remote_gid, else by remote_lid), and the
	 * local and remote QP numbers (0 until negotiated).
	 */
	uint16_t port_index;
	uint16_t remote_lid;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint8_t port_num;
	uint8_t grh;
	uint8_t rsvd2[2];
	/* The owner's process name: /proc/PID/comm as the daemon read it
	 * when the client connected or, where the daemon may not read it
	 * (ProtectProc, another pid namespace), HELLO's name, cut to 15. */
	char owner_comm[CMP_COMM_SIZE];
};

/* As many entries as fit in CMP_MSG_MAX with the header and count. */
#define CMP_LIST_BATCH_MAX 39

/*
 * LIST_REPLY. Its length depends on count: the datagram holds exactly
 * count entries. next_cursor is 0 when the walk is done.
 */
struct cmp_list_reply {
	int32_t status;
	uint32_t count;
	uint64_t next_cursor;
	struct cmp_list_entry entries[CMP_LIST_BATCH_MAX];
};

/* Whose counters COUNTERS reads. */
enum cmp_counter_scope {
	CMP_COUNTER_SCOPE_GLOBAL = 1,
	CMP_COUNTER_SCOPE_PORT = 2, /* dev_name and port_num name the port */
	CMP_COUNTER_SCOPE_CLIENT = 3, /* the asking client's own */
};
#define CMP_COUNTER_SCOPE_MAX CMP_COUNTER_SCOPE_CLIENT

/* COUNTERS: walk counters in batches; cursor as for LIST. */
struct cmp_counters {
	uint64_t cursor;
	uint8_t scope; /* enum cmp_counter_scope */
	uint8_t port_num; /* PORT scope only, 1-based */
	uint8_t rsvd0[6];
	char dev_name[CMP_DEV_NAME_SIZE]; /* PORT scope only */
};

/*
 * One counter. Names are the daemon's ("req_sent", "rej_no_credit") and
 * stable across releases, so scripts can read them.
 */
struct cmp_counter {
	char name[CMP_COUNTER_NAME_SIZE];
	uint64_t value;
};

#define CMP_COUNTERS_BATCH_MAX 101

/* COUNTERS_REPLY: sized by count, like LIST_REPLY. */
struct cmp_counters_reply {
	int32_t status;
	uint32_t count;
	uint64_t next_cursor;
	struct cmp_counter entries[CMP_COUNTERS_BATCH_MAX];
};

/*
 * PORTS: walk the ports the daemon serves, in batches; cursor as for LIST.
 * Port attributes are no secret, so every client sees every port.
 */
struct cmp_ports {
	uint64_t cursor;
};

/* IBTA 14.2.5.6 PortInfo:PortState, the values of enum ibv_port_state. */
enum cmp_port_state {
	CMP_PORT_STATE_NOP = 0,
	CMP_PORT_STATE_DOWN = 1,
	CMP_PORT_STATE_INIT = 2,
	CMP_PORT_STATE_ARMED = 3,
	CMP_PORT_STATE_ACTIVE = 4,
	CMP_PORT_STATE_ACTIVE_DEFER = 5,
};
#define CMP_PORT_STATE_MAX CMP_PORT_STATE_ACTIVE_DEFER

/* A port's link layer, as enum ibv_link_layer numbers them. */
enum cmp_link_layer {
	CMP_LINK_LAYER_IB = 1,
	CMP_LINK_LAYER_ROCE = 2, /* IBV_LINK_LAYER_ETHERNET */
};
#define CMP_LINK_LAYER_MAX CMP_LINK_LAYER_ROCE

/* A GID table entry's type; 0 marks an unused slot of cmp_port_entry. */
enum cmp_gid_type {
	CMP_GID_TYPE_IB = 1,
	CMP_GID_TYPE_ROCE_V1 = 2,
	CMP_GID_TYPE_ROCE_V2 = 3,
};
#define CMP_GID_TYPE_MAX CMP_GID_TYPE_ROCE_V2

/* One GID of a port, with its place in the port's GID table. */
struct cmp_port_gid {
	uint16_t index; /* in the port's GID table, for sgid_index */
	uint8_t type; /* enum cmp_gid_type */
	uint8_t rsvd0;
	uint8_t gid[CM_GID_SIZE];
};

/*
 * The GIDs a port entry carries: the first four valid entries of the
 * table. Four is what one RoCE netdev with one IPv4 address has (RoCE v1
 * and v2 each of its link-local IPv6 and of its IPv4 address) and what a
 * simulated port can have (XPORT_SIM_MAX_GIDS), and an IB port usually
 * has one. Eight would shrink a batch from 23 ports to 15 for the rare port
 * with more; n_gids says how many the table has in all, and QUERY_ID's
 * path names the GID a connection actually uses.
 */
#define CMP_PORT_GIDS 4

/*
 * One port in a PORTS batch. Every port listed is one the daemon serves;
 * up is 0 once its device is gone (sends fail until the daemon restarts).
 * LIDs are 0 on RoCE; GUIDs are in host order like every integer here.
 * gids[i] for i < n_gids (and i < CMP_PORT_GIDS) are valid entries, with a
 * type; the slots after them are zero.
 */
struct cmp_port_entry {
	char dev_name[CMP_DEV_NAME_SIZE];
	uint64_t node_guid; /* the CA GUID the CM puts in REQ and REP */
	uint64_t port_guid;
	uint16_t port_index; /* the daemon's number for the port */
	uint16_t lid;
	uint16_t sm_lid;
	uint16_t n_gids; /* valid entries in the whole GID table */
	uint8_t port_num; /* 1-based, on device dev_name */
	uint8_t up; /* 0 or 1 */
	uint8_t state; /* enum cmp_port_state */
	uint8_t link_layer; /* enum cmp_link_layer */
	uint8_t active_mtu; /* enum cm_mtu, 0 when the device does not say */
	uint8_t lmc; /* 3 bits */
	uint8_t sm_sl; /* 4 bits */
	uint8_t rsvd0;
	struct cmp_port_gid gids[CMP_PORT_GIDS];
};

/* As many entries as fit in CMP_MSG_MAX with the header and count. */
#define CMP_PORTS_BATCH_MAX 23

/* PORTS_REPLY: sized by count, like LIST_REPLY. */
struct cmp_ports_reply {
	int32_t status;
	uint32_t count;
	uint64_t next_cursor;
	struct cmp_port_entry entries[CMP_PORTS_BATCH_MAX];
};

/* What CAPTURE does. */
enum cmp_capture_op {
	CMP_CAPTURE_START = 1, /* capture into path (absolute, non-empty) */
	CMP_CAPTURE_STOP = 2, /* stop capturing; path is empty */
};
#define CMP_CAPTURE_OP_MAX CMP_CAPTURE_STOP

/*
 * CAPTURE: start or stop the daemon's MAD capture at run time (as
 * cmd --pcap does at start). Only root or a member of the daemon's admin
 * group may; others get -EPERM. The daemon opens the file itself, so
 * path must be absolute (-EINVAL otherwise). START while a capture runs
 * closes that one first; STOP with none running is not an error. The
 * reply is the plain struct cmp_reply.
 */
struct cmp_capture {
	uint8_t op; /* enum cmp_capture_op */
	uint8_t rsvd0[7];
	char path[CMP_PATH_SIZE]; /* START only */
};

/* A session token's size (SESSION, RESUME). */
#define CMP_TOKEN_SIZE 16

/*
 * SESSION: the token that names this client's session, for RESUME after
 * the daemon restarted (see "Restarts" above). Any client may ask, at any
 * time after HELLO; the answer does not change for the connection's life.
 * resume_ms is how long a successor keeps a session whose client has not
 * come back yet before it destroys its ids as for a client that went away
 * (0: this daemon hands nothing over, RESUME will fail).
 */
struct cmp_session {
	uint8_t rsvd0[8];
};

struct cmp_session_reply {
	int32_t status;
	uint32_t resume_ms;
	uint8_t token[CMP_TOKEN_SIZE];
};

/*
 * RESUME: become the session token names, kept by the daemon across its
 * restart: its ids, their unacknowledged events, and what was queued for
 * it. Only as the first request after HELLO, and only by the process that
 * had the session (SO_PEERCRED's pid and uid). The reply is plain; then
 * come the messages queued for the session. Errors: -ENOENT no session
 * waits for that token (the daemon started without state, or the session
 * expired or is attached to a connection); -EPERM it belongs to another
 * process; -EINVAL not the first request after HELLO.
 */
struct cmp_resume {
	uint8_t token[CMP_TOKEN_SIZE];
};

/*
 * PATHS: walk the daemon's path cache (the SA's PathRecords, kept for
 * --path-lifetime), in batches; cursor as for LIST, but the cache is a
 * hash table that changes as answers come and go, so the cursor counts
 * live entries and a walk racing with changes may skip or repeat one.
 * Path records are no secret (any client's connect would get the same
 * answer from the SA), so every client may read them. CMP_PATHS_FLUSH
 * first drops the cache's entries -- every port's, or with CMP_PATHS_PORT
 * only port_index's (a PORTS entry's port_index; -ENODEV if no port has
 * it) -- and is for root and the daemon's admin group only (-EPERM), with
 * cursor 0; the reply's flushed says how many went, and the batch is
 * what is left after the flush.
 */
#define CMP_PATHS_FLUSH 0x1u
#define CMP_PATHS_PORT 0x2u /* with FLUSH: only port_index's entries */
#define CMP_PATHS_FLAGS (CMP_PATHS_FLUSH | CMP_PATHS_PORT)

struct cmp_paths {
	uint64_t cursor;
	uint32_t flags; /* CMP_PATHS_* */
	uint16_t port_index; /* CMP_PATHS_PORT only, else 0 */
	uint16_t rsvd0;
};

/*
 * One cached answer: the port it was asked from, what was asked (by LID
 * when asked_dlid is not 0, else by asked_dgid), the primary record's
 * fields, the alternate's LIDs when the SA gave one (has_alt), the
 * entry's age and the seconds until it expires (0: never, --path-lifetime
 * 0), and how many connects it served. GIDs in network order.
 */
struct cmp_path_entry {
	char dev_name[CMP_DEV_NAME_SIZE];
	uint8_t asked_dgid[CM_GID_SIZE];
	uint8_t sgid[CM_GID_SIZE];
	uint8_t dgid[CM_GID_SIZE];
	uint64_t hits;
	uint32_t age_s;
	uint32_t expires_s;
	uint32_t flow_label; /* 20 bits */
	uint16_t port_index;
	uint16_t asked_dlid;
	uint16_t slid;
	uint16_t dlid;
	uint16_t pkey;
	uint16_t alt_slid; /* has_alt only, else 0 */
	uint16_t alt_dlid;
	uint8_t port_num; /* 1-based, on dev_name */
	uint8_t sl; /* 4 bits */
	uint8_t mtu; /* enum cm_mtu */
	uint8_t rate; /* IBTA Table 224 code, 6 bits */
	uint8_t packet_life_time; /* 6 bits */
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t has_alt; /* 0 or 1 */
	uint8_t rsvd0[6];
};

/* As many entries as fit in CMP_MSG_MAX with the header and fixed part. */
#define CMP_PATHS_BATCH_MAX 25

/* PATHS_REPLY: sized by count, like LIST_REPLY. */
struct cmp_paths_reply {
	int32_t status;
	uint32_t count;
	uint64_t next_cursor;
	uint32_t flushed; /* CMP_PATHS_FLUSH: entries dropped, else 0 */
	uint32_t rsvd0;
	struct cmp_path_entry entries[CMP_PATHS_BATCH_MAX];
};

/*
 * The reply to every other request, and the common start of every reply:
 * status is 0 or a negative errno. When status is not 0, everything after
 * the 8 bytes of this struct is zero (HELLO_REPLY excepted), so a client
 * never reads half-filled results, and the reply may end in the reason:
 * after the type's whole body (a batch reply's fixed part), a text naming
 * the check that failed ("RTU not allowed in state IDLE"), printable
 * ASCII, NUL-terminated, at most CMP_WHY_MAX bytes with its NUL, counted
 * in the header's length (cmp_reply_why(), cmp_reply_set_why()).
 *
 * id: in this plain reply, the id the request named (the new id for a
 * CONNECT that created one), CMP_ID_NONE for a request that names none
 * (CAPTURE) or a CONNECT that failed to create one. It is what lets a
 * pipelining client attribute the failure of a NOREPLY request. In the
 * larger replies these bytes are their own (CREATE_ID_REPLY's id, ...).
 */
struct cmp_reply {
	int32_t status;
	uint32_t id;
};

/* Event types. */
/* The types of EVENT, from cmp_msgs.def (which says what each means). */
enum cmp_event_type {
#define CMP_EVENT(NAME, member, code, body) CMP_EVENT_##NAME = (code),
#define CMP_EVENT_ALIAS(NAME, member, code, body) CMP_EVENT_##NAME = (code),
#define CMP_EVENT_EMPTY(NAME, code) CMP_EVENT_##NAME = (code),
#include "cmp_msgs.def"
};
/* Event types are numbered densely from 1 in the order of their rows. */
enum {
#define CMP_EVENT(NAME, member, code, body) CMP_EVENT_ROW_##NAME,
#define CMP_EVENT_ALIAS(NAME, member, code, body) CMP_EVENT_ROW_##NAME,
#define CMP_EVENT_EMPTY(NAME, code) CMP_EVENT_ROW_##NAME,
#include "cmp_msgs.def"
	CMP_EVENT_ROWS,
};
#define CMP_EVENT_MAX ((unsigned int)CMP_EVENT_ROWS)
#define CMP_EVENT(NAME, member, code, body)                                    \
	_Static_assert((int)CMP_EVENT_##NAME == CMP_EVENT_ROW_##NAME + 1,      \
		       #NAME " numbered in its row's order");
#define CMP_EVENT_ALIAS(NAME, member, code, body)                              \
	CMP_EVENT(NAME, member, code, body)
#define CMP_EVENT_EMPTY(NAME, code) CMP_EVENT(NAME, none, code, none)
#include "cmp_msgs.def"

/*
 * REQ_RECEIVED, the first event of a new passive id: the event's id is the
 * new id, listen_id the listener whose credit it took. The new id starts
 * with the listener's context, so this event names the listener's object;
 * the app gives the new id its own context with SET_CONTEXT while handling
 * it (rule 2). The values are the REQ's, from the requester's point of
 * view: its responder resources bound our initiator depth and vice versa.
 * path is the path the REQ asks for, reversed to our point of view.
 */
struct cmp_ev_req {
	uint32_t listen_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;
	uint32_t start_psn;
	uint64_t service_id;
	uint64_t remote_ca_guid;
	uint8_t qp_type; /* the REQ's transport: RC or UC */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t private_data_len;
	struct cmp_path path;
	uint8_t private_data[CM_REQ_PRIVATE_DATA_SIZE];
	uint8_t rsvd0[4];
};

/*
 * REP_RECEIVED: the first outcome of a successful CONNECT. It carries the
 * path too, so that an active app can move its QP to RTR and RTS and send
 * the RTU without a QUERY_ID round trip.
 */
struct cmp_ev_rep {
	uint32_t remote_qpn;
	uint32_t start_psn;
	uint64_t remote_ca_guid;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t failover; /* enum cmp_failover */
	uint8_t flow_control;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t private_data_len;
	struct cmp_path path;
	uint8_t private_data[CM_REP_PRIVATE_DATA_SIZE];
	uint8_t rsvd0[4];
};

/* ESTABLISHED: the RTU's private data; length 0 after NOTIFY_ESTABLISHED. */
struct cmp_ev_established {
	uint8_t private_data_len;
	uint8_t rsvd0[7];
	uint8_t private_data[CM_RTU_PRIVATE_DATA_SIZE];
};

/* REJ_RECEIVED: reason is an IBTA Table 109 code. */
struct cmp_ev_rej {
	uint16_t reason;
	uint8_t ari_len;
	uint8_t private_data_len;
	uint8_t rsvd0[4];
	uint8_t ari[CM_REJ_ARI_SIZE];
	uint8_t private_data[CM_REJ_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[4];
};

/*
 * CONNECT_ERROR: msg is the message that got no answer after all retries
 * (REQ, REP on the passive side, SIDR_REQ), or NONE when nothing could be
 * sent; the event's status says why (-ETIMEDOUT, -EHOSTUNREACH, ...).
 */
struct cmp_ev_connect_error {
	uint8_t msg; /* enum cmp_cm_msg */
	uint8_t rsvd0[7];
};

/* MRA_RECEIVED: which of our messages (REQ, REP, LAP) the peer MRAed. */
struct cmp_ev_mra {
	uint8_t service_timeout;
	uint8_t msg; /* enum cmp_cm_msg */
	uint8_t rsvd0[6];
};

struct cmp_ev_dreq {
	uint8_t private_data_len;
	uint8_t rsvd0[7];
	uint8_t private_data[CM_DREQ_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[4];
};

struct cmp_ev_drep {
	uint8_t private_data_len;
	uint8_t rsvd0[7];
	uint8_t private_data[CM_DREP_PRIVATE_DATA_SIZE];
};

/* LAP_RECEIVED: the proposed alternate path; answer with APR. */
struct cmp_ev_lap {
	struct cmp_path alt_path;
	uint8_t private_data_len;
	uint8_t rsvd0[7];
	uint8_t private_data[CM_LAP_PRIVATE_DATA_SIZE];
};

/* APR_RECEIVED: ap_status is an IBTA Table 117 code. */
struct cmp_ev_apr {
	uint8_t ap_status;
	uint8_t info_len;
	uint8_t private_data_len;
	uint8_t rsvd0[5];
	uint8_t info[CM_APR_INFO_SIZE];
	uint8_t private_data[CM_APR_PRIVATE_DATA_SIZE];
	uint8_t rsvd1[4];
};

/*
 * SIDR_REQ_RECEIVED, the first event of a new passive UD id, with the
 * listener's context as for REQ_RECEIVED. path leads back to the requester.
 */
struct cmp_ev_sidr_req {
	uint32_t listen_id;
	uint8_t private_data_len;
	uint8_t rsvd0[3];
	uint64_t service_id;
	struct cmp_path path;
	uint8_t private_data[CM_SIDR_REQ_PRIVATE_DATA_SIZE];
};

/*
 * SIDR_REP_RECEIVED: status is an IBTA Table 121 code; path is the one the
 * SIDR_REQ took, for the app's address handle.
 */
struct cmp_ev_sidr_rep {
	uint32_t qpn;
	uint32_t qkey;
	uint8_t status;
	uint8_t private_data_len;
	uint8_t rsvd0[6];
	struct cmp_path path;
	uint8_t private_data[CM_SIDR_REP_PRIVATE_DATA_SIZE];
};

/*
 * ROUTE_RESOLVED: the primary path and, when the SA offered one, an
 * alternate (has_alt 1). from_sa 1: the SA's record; 0: built from the
 * local port (RoCE, --sa off, or a whole path the program gave).
 */
struct cmp_ev_route {
	uint8_t has_alt;
	uint8_t from_sa;
	uint8_t rsvd0[6];
	struct cmp_path path;
	struct cmp_path alt_path;
};

/* PORT_ERROR and DEVICE_REMOVAL: the port the id was using. */
struct cmp_ev_port {
	uint8_t port_num;
	uint8_t rsvd0[7];
	char dev_name[CMP_DEV_NAME_SIZE];
};

/*
 * EVENT. Its length is the common part plus the body of its event type
 * (cmp_event_body_size()); DISCONNECT_TIMEOUT and TIMEWAIT_EXIT have no
 * body.
 *
 * The header's seq is the id's event sequence number: 1 for an id's first
 * event, one more for each later one, never 0. At most one event per id is
 * unacknowledged (rule 2). context is the id's context when the event was
 * sent. state and lap_state are the id's state and LAP sub-state right
 * after the transition that made the event, as the daemon's engine has
 * them, so that a client records them rather than guessing.
 */
struct cmp_event {
	uint32_t id;
	uint16_t type; /* enum cmp_event_type */
	uint8_t state; /* enum cmp_state */
	uint8_t lap_state; /* enum cmp_lap_state */
	int32_t status; /* 0, or a negative errno saying what went wrong */
	uint32_t rsvd1;
	uint64_t context;
	union {
#define CMP_EVENT(NAME, member, code, body) struct cmp_##body member;
#include "cmp_msgs.def"
	};
};

/*
 * One message, decoded: the header and the body of hdr.type. body spans
 * the whole union so that sizeof(struct cmp_msg) is CMP_MSG_MAX, and a
 * struct cmp_msg is also a large enough receive buffer.
 */
struct cmp_msg {
	struct cmp_hdr hdr;
	union {
#define CMP_REPLY_MEMBER_PLAIN(member)
#define CMP_REPLY_MEMBER_FIXED(member)                                         \
	struct cmp_##member##_reply member##_reply;
#define CMP_REPLY_MEMBER_BATCH(member)                                         \
	struct cmp_##member##_reply member##_reply;
#define CMP_REQUEST(NAME, member, code, body, reply, flags)                    \
	struct cmp_##body member;                                              \
	CMP_REPLY_MEMBER_##reply(member)
#include "cmp_msgs.def"
#undef CMP_REPLY_MEMBER_PLAIN
#undef CMP_REPLY_MEMBER_FIXED
#undef CMP_REPLY_MEMBER_BATCH
		/* Every reply type, read as its common start. */
		struct cmp_reply reply;
		struct cmp_event event;
		uint8_t body[CMP_MSG_MAX - sizeof(struct cmp_hdr)];
	};
};

/*
 * The bytes of a struct cmp_msg, header included, that a message of type
 * can fill: the header and the type's body (every event body for EVENT;
 * all CMP_MSG_MAX for a batch reply or an unknown type). cmp_msg_init()
 * zeroes them and cmp_decode() leaves them zero beyond the message; the
 * rest of the struct is neither read nor written.
 */
size_t cmp_msg_extent(enum cmp_type type);

/* The longest reason a failed reply carries, its NUL included. */
#define CMP_WHY_MAX 128

/*
 * Give the failed reply *msg (status set, not HELLO_REPLY; built by
 * cmp_msg_init()) the reason text, cut to CMP_WHY_MAX - 1 bytes, with any
 * byte that is not printable ASCII replaced by '?'. NULL or "" removes it.
 */
void cmp_reply_set_why(struct cmp_msg *msg, const char *text);

/* The reason a failed reply carries, or "" (a success, or none given). */
const char *cmp_reply_why(const struct cmp_msg *msg);

/*
 * Zero the extent of *msg (cmp_msg_extent()) and fill its header: the version this build sends
 * (CMP_VERSION_HELLO for HELLO and HELLO_REPLY, CMP_VERSION otherwise), the
 * type and seq. Starting from zero is what makes reserved members and
 * unused tails zero, as the encoder requires.
 */
void cmp_msg_init(struct cmp_msg *msg, enum cmp_type type, uint32_t seq);

/*
 * Apply every check the decoder applies to the content of *msg (all but
 * the length checks, since hdr.length is not read). Returns 0, or
 * -EPROTO / -EBADMSG with *why naming the check that failed. why may be
 * NULL. Lets a sender find out why cmp_encode() refused a message.
 */
int cmp_check(const struct cmp_msg *msg, const char **why);

/*
 * Encode *msg into buf. The length in the encoded header is computed from
 * the type (and the count or event type), msg->hdr.length is ignored.
 * Returns the number of bytes to send, -EINVAL when cmp_check() refuses the
 * message, or -EMSGSIZE when size is too small.
 */
ssize_t cmp_encode(const struct cmp_msg *msg, void *buf, size_t size);

/*
 * Decode one received datagram of len bytes. Returns 0 with *msg filled
 * (and every byte of its type's extent beyond the message zero,
 * cmp_msg_extent()), or:
 *   -EMSGSIZE  len is larger than CMP_MSG_MAX;
 *   -EPROTO    the header's version is one this build does not speak;
 *   -EBADMSG   anything else is wrong.
 * On failure *why (if why is not NULL) points to a static text naming the
 * check, for the log; on success it is set to NULL. Reads buf[0..len)
 * only. Decoding is stateless: whether the version is the negotiated one,
 * and whether the type is one this side should receive, is the caller's to
 * check.
 */
int cmp_decode(const void *buf, size_t len, struct cmp_msg *msg,
	       const char **why);

/*
 * The size of an event type's body, or -1 for an unknown type. Exposed so
 * that the daemon can size event queue entries per type.
 */
ssize_t cmp_event_body_size(enum cmp_event_type type);

/* Names for logs and cmctl ("CONNECT", "REQ_RECEIVED", "MRA_REP_SENT"). */
const char *cmp_type_name(enum cmp_type type);
const char *cmp_event_name(enum cmp_event_type type);
const char *cmp_state_name(enum cmp_state state);
const char *cmp_lap_state_name(enum cmp_lap_state state);

/* The wire layout is pinned in cmp_layout.h. */

#endif
