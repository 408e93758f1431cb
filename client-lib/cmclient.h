/* SPDX-License-Identifier: MIT */
/*
 * libcmclient: the application side of the cmd InfiniBand Connection
 * Manager daemon.
 *
 * An application opens a channel to the daemon, creates ids (one per
 * connection or listener), and drives the IBTA ch. 12 handshake through
 * them: listen, connect, accept, reject, rtu, disconnect, and the rest. The
 * daemon runs the protocol on the wire; the application owns its QPs
 * (libibverbs) and moves them through INIT/RTR/RTS with the attributes the
 * handshake negotiated (cmc_init_qp_attr(), cmc_modify_qp()).
 *
 * Conventions that hold for every function below unless it says otherwise:
 *
 *  - Errors. Functions returning int return 0 (or a count) on success and
 *    a negative errno value on failure; errno is not used. Besides the
 *    errors each function lists, any call that talks to the daemon can fail
 *    with
 *      -ECONNRESET  the daemon went away (socket closed or reset) and
 *                   did not come back in time (see "Daemon restarts"
 *                   below). The channel is dead: every later call that
 *                   needs the daemon returns -ECONNRESET too. Close it
 *                   and reopen.
 *      -EPROTO      the daemon sent something this library cannot accept
 *                   (a malformed datagram, a reply of the wrong type or
 *                   sequence number, an unknown event type). The channel
 *                   is dead as for -ECONNRESET, with -EPROTO.
 *      -ETIMEDOUT   the request timeout (cmc_set_request_timeout()) ran
 *                   out; the channel is dead as above, with -ETIMEDOUT.
 *      -ENOMEM      the library could not allocate. When that happens
 *                   while queueing an event, the channel is dead as above
 *                   (with -ENOMEM), because an event may never be lost.
 *    A request the daemon refuses returns the daemon's status: -EINVAL
 *    (the id's state does not allow the call, or a bad argument; nothing
 *    changed), -ENOENT (no such id), -EADDRINUSE (LISTEN: another listener
 *    claims that service id where this one would listen), -EHOSTUNREACH /
 *    -ENETUNREACH (CONNECT: no route), -EMFILE (the daemon's per-client id
 *    limit), -EPERM.
 *    cmc_strerror() turns any of these into text, and cmc_last_error()
 *    says which check failed ("RTU not allowed in state IDLE (comm id
 *    0x1a2b3c4d)", "CONNECT local QPN out of range").
 *
 *  - Requests are synchronous by default. Each call sends one request and
 *    waits for its reply. Events that arrive meanwhile are queued inside
 *    the library, in order, for later cmc_get_event() calls; none is ever
 *    dropped (except those of destroyed ids, see cmc_destroy_id()). A
 *    channel in asynchronous mode (cmc_set_async()) queues most requests
 *    instead and reports their failures as events.
 *
 *  - Threads. A channel, its ids and its events are NOT thread-safe: the
 *    application must not call into one channel from two threads at once
 *    (cmc_ack_event() and cmc_destroy_id() included). Use one channel per
 *    thread, or a lock of your own around every call. Different channels
 *    are independent.
 *
 *  - Memory. The library allocates channels, ids and events and frees
 *    them in cmc_close(), cmc_destroy_id() and cmc_ack_event(). Parameters
 *    passed in (private data, names) are copied before the call returns.
 *
 *  - Room to grow. The structs an application fills in and passes to a
 *    call (struct cmc_conn_param, cmc_accept_param, cmc_sidr_param,
 *    cmc_addr, cmc_port_sel, cmc_path_override, and cmc_path for
 *    cmc_lap()) end in a member "uint64_t reserved[...]" that must be
 *    zero: a call given one that is not returns -EINVAL (the struct's
 *    comment says so) and sends nothing. A later version may give that
 *    space a meaning; zero will always mean what it means now. So start
 *    every such struct from zero (a designated initialiser, "= { 0 }"
 *    or memset()) and set the members you use. A struct the library
 *    returns (events, cmc_query_id(), the paths in them) has its
 *    reserved space zero, so a path taken from an event or from
 *    cmc_query_id() may be passed to cmc_lap() as it is.
 *    The public structs are this library's own, converted member by
 *    member from the daemon's protocol: the protocol may change without
 *    changing them.
 *
 *  - Lesson 2 of DESIGN.md: the daemon hands out at most one event per id
 *    that the application has not acked. The next event of an id comes
 *    only after cmc_ack_event() of the previous one, so ack promptly.
 *
 *  - Daemon restarts. A channel survives a restart of the daemon that
 *    hands its state to its successor (an upgrade in place): its ids,
 *    their numbers and contexts, the events the application holds (ack
 *    them as usual), the events and replies still to come, and the
 *    requests made meanwhile. Nothing is lost or delivered twice. While
 *    the daemon is away, the library tries its successor at the same
 *    socket path, every 10 ms at first, backing off to every 200 ms:
 *      - cmc_fd() stays the same fd; it becomes readable when a try is
 *        due, and the next call into the library makes it.
 *      - cmc_get_event() returns the events already read, then -EAGAIN
 *        (with a timeout, it waits through the gap as for any event).
 *      - Asynchronous requests and cmc_flush() queue and return 0; the
 *        queue goes out once the session is resumed.
 *      - Blocking calls wait and complete once it is resumed; the
 *        request timeout (cmc_set_request_timeout()) still bounds them.
 *    It gives up when the successor does not know the session (a daemon
 *    that restarted without its state, or one that crashed) or when the
 *    daemon's window (cmc_resume_window()) and a second more have
 *    passed: the channel then dies with -ECONNRESET, as it does at once
 *    without a session. Only channels whose daemon gave them a session
 *    reconnect: cmc_open()'s always ask for one; cmc_open_fd()'s only when
 *    its socket's peer has an absolute path or an abstract name (not a
 *    socketpair). A relative socket path given to cmc_open() is resolved
 *    again, from the working directory at the time of the restart.
 */
#ifndef CMCLIENT_H
#define CMCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The socket the daemon listens on when neither argument nor
 * $CMD_SOCKET names one. */
#define CMC_DEFAULT_SOCKET "/run/cmd/cmd.sock"
/* Longest client name (shown by cmctl), NUL excluded. */
#define CMC_NAME_MAX 31
#define CMC_DEV_NAME_SIZE 64
#define CMC_GID_SIZE 16

/* Private data limits per message (IBTA ch. 12, Tables 106-120). */
#define CMC_REQ_PRIVATE_DATA_SIZE 92
#define CMC_MRA_PRIVATE_DATA_SIZE 222
#define CMC_REJ_PRIVATE_DATA_SIZE 148
#define CMC_REJ_ARI_SIZE 72
#define CMC_REP_PRIVATE_DATA_SIZE 196
#define CMC_RTU_PRIVATE_DATA_SIZE 224
#define CMC_DREQ_PRIVATE_DATA_SIZE 220
#define CMC_DREP_PRIVATE_DATA_SIZE 224
#define CMC_LAP_PRIVATE_DATA_SIZE 168
#define CMC_APR_PRIVATE_DATA_SIZE 148
#define CMC_APR_INFO_SIZE 72
#define CMC_SIDR_REQ_PRIVATE_DATA_SIZE 216
#define CMC_SIDR_REP_PRIVATE_DATA_SIZE 136

/* Opaque handles. */
struct cmc_channel;
struct cmc_id;

/* ---------------------------------------------------------------------
 * Channel
 */

/*
 * Connect to the daemon at socket_path (NULL: $CMD_SOCKET if set, else
 * CMC_DEFAULT_SOCKET) and introduce the client as name (NULL or "": the
 * program's name; longer than CMC_NAME_MAX: truncated). Negotiates the
 * protocol version (HELLO). On success *chp is the new channel.
 * Errors: -ENOENT / -ECONNREFUSED (no daemon listens there), -EACCES,
 * -EPROTONOSUPPORT (the daemon speaks no protocol version this library
 * does: upgrade one of them), -EPROTO, -ECONNRESET, -ENOMEM, -EINVAL.
 */
int cmc_open(const char *socket_path, const char *name,
	     struct cmc_channel **chp);

/*
 * As cmc_open(), over fd, an already connected SOCK_SEQPACKET socket (a
 * socketpair in tests, a socket handed over by a supervisor). The channel
 * owns fd from then on, also on failure (fd is closed then), and makes it
 * non-blocking and close-on-exec.
 */
int cmc_open_fd(int fd, const char *name, struct cmc_channel **chp);

/*
 * Close the channel: every id still open is released locally (the daemon
 * destroys them as cmc_destroy_id() would, sending REJ/DREQ/DREP as their
 * state requires), queued events are freed. Events the application still
 * holds stay valid until acked (cmc_ack_event() then only frees them). NULL
 * is allowed.
 */
void cmc_close(struct cmc_channel *ch);

/*
 * A file descriptor for the application's poll/epoll/libev loop. It is
 * readable whenever an event may be ready: when the daemon's socket has
 * data, and also while events already sit in the library's queue (e.g.
 * queued during a synchronous request), so a level-triggered loop never
 * stalls. Internally it is an epoll fd over the socket and an eventfd.
 * Readable does not promise an event: after it fires, call
 * cmc_get_event(ch, &ev, 0) until it returns -EAGAIN. With an
 * edge-triggered loop, always drain that way. Do not read, write or close
 * it. Valid until cmc_close().
 */
int cmc_fd(const struct cmc_channel *ch);

/* The number of events queued inside the library, ready to be returned
 * without reading the socket. */
unsigned int cmc_event_pending(const struct cmc_channel *ch);

/*
 * Bound how long a request waits for its reply, in milliseconds; -1 (the
 * default) waits forever. A daemon that dies is always noticed at once
 * (-ECONNRESET); this only guards against a daemon that hangs. When it
 * fires, the channel is dead (-ETIMEDOUT).
 */
void cmc_set_request_timeout(struct cmc_channel *ch, int timeout_ms);

/* The protocol version negotiated with the daemon, and its version text
 * and limits (ids one client may hold; events queued per client). */
struct cmc_daemon_info {
	unsigned int proto_version;
	unsigned int max_ids;
	unsigned int max_events;
	char version[32];
};
void cmc_daemon_info(const struct cmc_channel *ch,
		     struct cmc_daemon_info *info);

/*
 * The session that lets the channel survive a daemon restart (see
 * "Daemon restarts" above): how long, in milliseconds, the daemon's
 * successor keeps the channel's ids waiting for it to come back; 0 when
 * the channel has no session (a daemon that hands nothing over, a
 * channel that cannot connect again), so that a restart kills it.
 * After a restart it is the successor's figure.
 */
unsigned int cmc_resume_window(const struct cmc_channel *ch);

/* How many daemon restarts the channel has come through. cmc_daemon_info()
 * describes the daemon of the last one. */
unsigned int cmc_resume_count(const struct cmc_channel *ch);

/* Text for a negative return value of this library. Never NULL. */
const char *cmc_strerror(int err);

/*
 * Why the calling thread's most recent failed call failed, when the
 * daemon or the library named the check: the daemon's reason from its
 * reply, or the library's own (a value out of range, reserved space not
 * zero, a socket path it cannot reach: "cannot reach cmd at
 * /run/cmd/cmd.sock: No such file or directory"). "" when that call's
 * failure came without one (a bare -ENOMEM, say). Never NULL. Each request
 * to the daemon starts from "", so the text is never an older call's.
 * Thread-local: valid until the thread's next call into the library.
 */
const char *cmc_last_error(void);

/*
 * Asynchronous (pipelined) mode.
 *
 * By default every call that talks to the daemon waits for its answer, so
 * the return value is the daemon's verdict: one round trip (two process
 * wake-ups) per call, like a system call into the kernel's CM but much
 * dearer. A server or a client with many connections in flight can switch
 * the channel to asynchronous mode instead:
 *
 *  - cmc_connect(), cmc_accept(), cmc_reject(), cmc_rtu(),
 *    cmc_notify_established(), cmc_mra(), cmc_disconnect(), cmc_lap(),
 *    cmc_apr(), cmc_sidr_rep(), cmc_set_context(), cmc_ack_event() and
 *    cmc_destroy_id() check their arguments and the id's state as far as
 *    the library knows it, queue the request and return 0 at once. The
 *    daemon answers only failures; a failure comes back as a
 *    CMC_EVENT_REQUEST_ERROR event on that id (status: what the call would
 *    have returned in blocking mode; u.request_error.request: which call).
 *  - cmc_create_id() only makes a local handle; the daemon's id comes into
 *    being with the handle's first request (cmc_connect() creates it in
 *    the same message, so an active connection costs no round trip at
 *    all). cmc_id_num() is 0 until the daemon has answered.
 *  - Everything else (cmc_listen(), cmc_sidr_req(), queries, listings,
 *    counters) still waits for its answer, after sending what is queued.
 *  - Queued requests go out in one batch (sendmmsg) when cmc_flush() or
 *    cmc_get_event()/cmc_get_event_id() is called, when a blocking call
 *    is made, or when the queue is full. Call cmc_flush() before you block
 *    in poll()/epoll_wait() on cmc_fd() yourself: a request still queued
 *    then (an ACK_EVENT, say) would otherwise keep the daemon from sending
 *    what you wait for.
 *
 * Order is kept: requests reach the daemon in the order they were made,
 * and events in the order the daemon sent them. Switch modes at any time;
 * switching off flushes. Returns 0, or the channel's error.
 *
 * What the library keeps for the QP helpers (cmc_init_qp_attr()) assumes
 * that a queued call succeeds, as it does in the normal course; after a
 * REQUEST_ERROR, destroy the id or carry on as the error allows.
 *
 * REQUEST_ERROR events do not count against lesson 2: the daemon never
 * saw them, so the application may hold one while it holds the id's
 * ordinary event, and acking one sends nothing. They queue with the
 * other events, in the order the failures were read.
 *
 * cmc_destroy_id() in this mode queues the DESTROY_ID and frees the
 * handle at once; events of the id that arrive later are dropped as
 * always. Destroying an id that has no daemon id yet sends nothing (if
 * its CONNECT is still unanswered, the daemon's id is destroyed when the
 * answer comes). A request on an id whose creating CONNECT is unanswered
 * first waits for that answer.
 */
int cmc_set_async(struct cmc_channel *ch, int on);

/*
 * Send every queued request now (asynchronous mode; a no-op otherwise).
 * Waits only while the socket is full, reading and queueing events
 * meanwhile. Returns 0 or the channel's error.
 */
int cmc_flush(struct cmc_channel *ch);

/* ---------------------------------------------------------------------
 * Ids
 */

enum cmc_qp_type {
	CMC_QP_RC = 1,
	CMC_QP_UC = 2,
	CMC_QP_UD = 3, /* SIDR only */
};

/* The CM states (IBTA ch. 12), as cmc_query_id() and cmc_list() report. */
enum cmc_state {
	CMC_STATE_IDLE = 0,
	CMC_STATE_LISTEN = 1,
	CMC_STATE_REQ_SENT = 2,
	CMC_STATE_REQ_RCVD = 3,
	CMC_STATE_MRA_REQ_SENT = 4,
	CMC_STATE_MRA_REQ_RCVD = 5,
	CMC_STATE_REP_SENT = 6,
	CMC_STATE_REP_RCVD = 7,
	CMC_STATE_MRA_REP_SENT = 8,
	CMC_STATE_MRA_REP_RCVD = 9,
	CMC_STATE_ESTABLISHED = 10,
	CMC_STATE_DREQ_SENT = 11,
	CMC_STATE_DREQ_RCVD = 12,
	CMC_STATE_TIMEWAIT = 13,
	CMC_STATE_SIDR_REQ_SENT = 14,
	CMC_STATE_SIDR_REQ_RCVD = 15,
};

enum cmc_lap_state {
	CMC_LAP_STATE_IDLE = 0,
	CMC_LAP_STATE_LAP_SENT = 1,
	CMC_LAP_STATE_LAP_RCVD = 2,
	CMC_LAP_STATE_MRA_LAP_SENT = 3,
	CMC_LAP_STATE_MRA_LAP_RCVD = 4,
};

/*
 * Create an id in IDLE with the application's context (returned in every
 * event of the id) and the QP type it will connect (fixed for its life).
 * Errors: -EINVAL (qp_type), -EMFILE (daemon's per-client limit).
 */
int cmc_create_id(struct cmc_channel *ch, void *context,
		  enum cmc_qp_type qp_type, struct cmc_id **idp);

/*
 * Destroy an id, in any state. Final (DESIGN.md lesson 3): after this
 * returns, the library never returns an event of this id, not even one the
 * daemon sent before, still in the socket or in the library's queue; those
 * are dropped silently and need no ack. The daemon finishes the protocol
 * (REJ, DREQ or DREP as the state requires, then timewait) and returns the
 * listener's credit a passive id held. Events of the id the application
 * already holds stay readable and must still be acked (which then only
 * frees them). The handle is invalid afterwards whatever the return value:
 * 0, or the daemon's error, or -ECONNRESET (the daemon is gone, so the id
 * is too).
 */
int cmc_destroy_id(struct cmc_id *id);

/* The context given at creation or by cmc_set_context(). Any state. */
void *cmc_get_context(const struct cmc_id *id);

/*
 * Replace the id's context, here and in the daemon: the id's next event
 * carries it. An event already delivered keeps the old one. This is how a
 * passive id, whose REQ_RECEIVED carries its listener's context, gets its
 * own. Any state.
 */
int cmc_set_context(struct cmc_id *id, void *context);

/* The daemon's number for the id (cmctl shows it); 0 only in asynchronous
 * mode, until the daemon has one (see cmc_set_async()). */
uint32_t cmc_id_num(const struct cmc_id *id);

/* The channel the id belongs to. */
struct cmc_channel *cmc_id_channel(const struct cmc_id *id);

/* ---------------------------------------------------------------------
 * Addresses and paths
 */

/*
 * A path as the CM negotiated it, from the local side's point of view
 * (what ibv_qp_attr wants: ah_attr, path_mtu, timeout, pkey_index,
 * port_num). GIDs are in network byte order as in union ibv_gid.
 */
struct cmc_path {
	uint32_t flow_label; /* 20 bits */
	uint16_t local_lid; /* 0 on RoCE */
	uint16_t remote_lid; /* 0 on RoCE */
	uint16_t pkey;
	uint16_t pkey_index; /* in the local port's P_Key table */
	uint8_t port_num; /* 1-based, on device dev_name */
	uint8_t mtu; /* 1 = 256 ... 5 = 4096, as enum ibv_mtu */
	uint8_t sl;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t packet_rate; /* IBTA code, as enum ibv_rate; 0 = port rate */
	/* The QP's ACK timeout exponent (ibv_qp_attr.timeout). */
	uint8_t local_ack_timeout;
	uint8_t sgid_index;
	uint8_t grh; /* 1: packets carry a GRH (always on RoCE) */
	uint8_t packet_life_time;
	uint8_t local_gid[CMC_GID_SIZE];
	uint8_t remote_gid[CMC_GID_SIZE];
	char dev_name[CMC_DEV_NAME_SIZE];
	/* Zero (see "Room to grow"); cmc_lap() refuses others: -EINVAL. */
	uint64_t reserved[2];
};

/* How a destination is named. */
enum cmc_af {
	CMC_AF_GID = 1, /* native IB addressing (or a RoCE GID) */
	CMC_AF_IPV4 = 2, /* the RoCE port holding this address */
	CMC_AF_IPV6 = 3,
	CMC_AF_LID = 4, /* a port on the local IB subnet, no GRH */
};

struct cmc_addr {
	enum cmc_af family;
	uint16_t lid; /* CMC_AF_LID */
	/* CMC_AF_GID: the GID; CMC_AF_IPV6: struct in6_addr bytes;
	 * CMC_AF_IPV4: struct in_addr bytes in addr[0..3]. */
	uint8_t addr[16];
	uint64_t reserved[2]; /* zero, or the call returns -EINVAL */
};

/* Which local port(s) an id uses. */
enum cmc_sel {
	CMC_SEL_ANY = 0, /* all ports (listen) / the daemon picks (connect) */
	CMC_SEL_PORT = 1, /* dev_name and port_num; port 0 = all its ports */
	CMC_SEL_GID = 2, /* the port owning gid */
};

struct cmc_port_sel {
	enum cmc_sel kind;
	uint8_t port_num;
	uint8_t gid[CMC_GID_SIZE];
	char dev_name[CMC_DEV_NAME_SIZE];
	uint64_t reserved[2]; /* zero, or the call returns -EINVAL */
};

/* Path attributes a connect may force; a flag marks each one set. */
enum cmc_path_flag {
	CMC_PATH_MTU = 1u << 0,
	CMC_PATH_PKEY = 1u << 1,
	CMC_PATH_SL = 1u << 2,
	CMC_PATH_TRAFFIC_CLASS = 1u << 3,
	CMC_PATH_HOP_LIMIT = 1u << 4,
	CMC_PATH_FLOW_LABEL = 1u << 5,
	CMC_PATH_PACKET_RATE = 1u << 6,
	CMC_PATH_LOCAL_ACK_TIMEOUT = 1u << 7,
};

struct cmc_path_override {
	uint32_t flags; /* enum cmc_path_flag; other members only if set */
	uint32_t flow_label;
	uint16_t pkey;
	uint8_t mtu;
	uint8_t sl;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t packet_rate;
	uint8_t local_ack_timeout;
	uint64_t reserved[2]; /* zero, or cmc_connect() returns -EINVAL */
};

/* ---------------------------------------------------------------------
 * Passive side
 */

/*
 * Listen: the id (IDLE) receives a REQ_RECEIVED event, on a new id, for
 * every REQ whose service id matches service_id under service_mask (UD
 * ids: SIDR_REQ_RECEIVED). service_id must have no bit outside the mask;
 * mask ~0 listens on exactly one service id. backlog (>= 1) is a credit
 * (lesson 1): at most that many REQ_RECEIVED not yet answered by
 * cmc_accept(), cmc_reject() or cmc_destroy_id() of the new id. Further
 * REQs are held by the daemon (with an MRA) and handed out as credit
 * returns.
 *
 * port narrows where the listener listens; NULL (or CMC_SEL_ANY) means
 * every port. CMC_SEL_PORT: REQs that arrive on port_num of dev_name
 * (port_num 0: any port of that device). CMC_SEL_GID: REQs sent to that
 * GID of ours (the REQ's primary path GID on our side; for SIDR_REQs the
 * destination GID of their GRH), whichever port holds it; on RoCE a GID
 * is an IP address (::ffff:a.b.c.d for IPv4), so this is rdma_listen()
 * on an address bound with rdma_bind_addr(). Several ids may listen on
 * the same service_id and service_mask when their selectors do not
 * overlap, as rdma_cm programs may listen on one port at different
 * addresses: CMC_SEL_ANY overlaps every selector, two CMC_SEL_PORT ones
 * overlap when they share a port, two CMC_SEL_GID ones when the GID is
 * the same; a CMC_SEL_PORT and a CMC_SEL_GID selector never do. A REQ
 * goes to the most specific listener that takes it: CMC_SEL_GID before
 * CMC_SEL_PORT before CMC_SEL_ANY, then an exact service id before a
 * masked one; with none, the peer gets REJ 8 "invalid service id"
 * (SIDR_REP status 1). cmc_query_id() and cmc_list() show the selector.
 * Errors: -EINVAL (state, backlog 0, bits outside the mask, a malformed
 * selector), -EADDRINUSE (a listener on an overlapping selector already
 * claims service_id and service_mask), -ENODEV (CMC_SEL_PORT names no
 * port the daemon serves), -EADDRNOTAVAIL (CMC_SEL_GID: no served port
 * has that GID).
 */
int cmc_listen(struct cmc_id *id, uint64_t service_id, uint64_t service_mask,
	       unsigned int backlog, const struct cmc_port_sel *port);

/*
 * Accept a REQ_RECEIVED id (REQ_RCVD or MRA_REQ_SENT): send the REP. Gives
 * the listener's credit back. Move the QP to RTR before (the peer may send
 * as soon as it has the REP) and to RTS after; cmc_modify_qp() does both.
 * The passive side then gets ESTABLISHED (or REJ_RECEIVED/CONNECT_ERROR).
 */
struct cmc_accept_param {
	uint32_t qp_num; /* the application's QP, >= 2 */
	/* 24 bits, announced in the REP: the PSN our receive queue expects
	 * (the Linux reading of Starting PSN, see cmc_init_qp_attr()).
	 * Ignored when cmc_init_qp_attr(RTR) came first: the PSN chosen
	 * then is announced. */
	uint32_t start_psn;
	/* RDMA reads/atomics we accept as target (<= the REQ's initiator
	 * depth) and issue as initiator (<= the REQ's responder resources). */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay; /* 5-bit exponent */
	uint8_t failover; /* 0 accepted, 1 not supported, 2 rejected */
	uint8_t flow_control; /* 0 or 1 */
	uint8_t rnr_retry_count; /* 0..7 (7 = infinite), the peer's */
	uint8_t srq; /* 0 or 1 */
	uint8_t private_data_len; /* <= CMC_REP_PRIVATE_DATA_SIZE */
	const void *private_data;
	uint64_t reserved[4]; /* zero, or cmc_accept() returns -EINVAL */
};
int cmc_accept(struct cmc_id *id, const struct cmc_accept_param *param);

/*
 * Reject a received REQ (returning its credit) or REP: send a REJ with an
 * IBTA Table 109 reason (28 = consumer defined is the usual one), optional
 * additional rejection information and private data.
 * Errors: -EINVAL (state, reason outside 1..35, lengths).
 */
int cmc_reject(struct cmc_id *id, unsigned int reason, const void *ari,
	       uint8_t ari_len, const void *private_data,
	       uint8_t private_data_len);

/*
 * REJ reasons (IBTA Vol 1 12.6.7, Table 109), the values cmc_reject()
 * sends and CMC_EVENT_REJ_RECEIVED's reason carries; the numbers are the
 * wire's (proto/cm_mad.h's enum cm_rej_reason, tied to these by a static
 * assert in the library). The ARI each one carries is the table's. An
 * application rejecting a REQ it does not want sends
 * CMC_REJ_CONSUMER_DEFINED; the daemon itself sends INVALID_SERVICE_ID
 * (nobody listens), STALE_CONN, TIMEOUT and NO_RESOURCES (backlog full).
 */
enum cmc_rej_reason {
	CMC_REJ_NO_QP = 1,
	CMC_REJ_NO_EEC = 2,
	CMC_REJ_NO_RESOURCES = 3,
	CMC_REJ_TIMEOUT = 4,
	CMC_REJ_UNSUPPORTED = 5,
	CMC_REJ_INVALID_COMM_ID = 6,
	CMC_REJ_INVALID_COMM_INSTANCE = 7,
	CMC_REJ_INVALID_SERVICE_ID = 8,
	CMC_REJ_INVALID_TRANSPORT_TYPE = 9,
	CMC_REJ_STALE_CONN = 10,
	CMC_REJ_RDC_NOT_EXIST = 11,
	CMC_REJ_INVALID_GID = 12,
	CMC_REJ_INVALID_LID = 13,
	CMC_REJ_INVALID_SL = 14,
	CMC_REJ_INVALID_TRAFFIC_CLASS = 15,
	CMC_REJ_INVALID_HOP_LIMIT = 16,
	CMC_REJ_INVALID_PACKET_RATE = 17,
	CMC_REJ_INVALID_ALT_GID = 18,
	CMC_REJ_INVALID_ALT_LID = 19,
	CMC_REJ_INVALID_ALT_SL = 20,
	CMC_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	CMC_REJ_INVALID_ALT_HOP_LIMIT = 22,
	CMC_REJ_INVALID_ALT_PACKET_RATE = 23,
	CMC_REJ_PORT_CM_REDIRECT = 24,
	CMC_REJ_PORT_REDIRECT = 25,
	CMC_REJ_INVALID_MTU = 26,
	CMC_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	CMC_REJ_CONSUMER_DEFINED = 28,
	CMC_REJ_INVALID_RNR_RETRY = 29,
	CMC_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	CMC_REJ_INVALID_CLASS_VERSION = 31,
	CMC_REJ_INVALID_FLOW_LABEL = 32,
	CMC_REJ_INVALID_ALT_FLOW_LABEL = 33,
	CMC_REJ_INVALID_ALT_PORT_CM_REDIRECT = 34,
	CMC_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};
#define CMC_REJ_REASON_MAX 35

/*
 * Tell the daemon the QP saw IBV_EVENT_COMM_EST: the peer's data came
 * before its RTU (REP_SENT). The id becomes ESTABLISHED; its ESTABLISHED
 * event follows. Errors: -EINVAL (state).
 */
int cmc_notify_established(struct cmc_id *id);

/* ---------------------------------------------------------------------
 * Active side
 */

/*
 * Connect an RC or UC id (IDLE): send a REQ. Exactly one first outcome
 * follows: REP_RECEIVED, REJ_RECEIVED or CONNECT_ERROR. The QP must exist
 * (its number goes into the REQ); move it to INIT with cmc_modify_qp()
 * right after cmc_connect() returns (the daemon has chosen the port by
 * then) or on REP_RECEIVED, then to RTR and RTS, then cmc_rtu().
 * Timeouts are IBTA 5-bit exponents (4.096 us * 2^t); zero values for
 * max_cm_retries and the CM response timeouts take the daemon's defaults.
 */
struct cmc_conn_param {
	/* rdma_cm peers listen on 0x0000000001060000 | TCP port and expect
	 * the CMA header at the start of the private data: cmc_connect_ip()
	 * does both. */
	uint64_t service_id;
	struct cmc_addr dst;
	struct cmc_port_sel src; /* kind CMC_SEL_ANY: the daemon picks */
	uint32_t qp_num; /* >= 2 */
	/* 24 bits, announced in the REQ: the PSN our receive queue expects
	 * (see cmc_init_qp_attr()). */
	uint32_t start_psn;
	uint8_t responder_resources; /* RDMA reads we serve as target */
	uint8_t initiator_depth; /* RDMA reads we issue at once */
	uint8_t flow_control; /* 0 or 1 */
	uint8_t retry_count; /* 0..7 */
	uint8_t rnr_retry_count; /* 0..7 (7 = infinite), the peer's */
	uint8_t srq; /* 0 or 1 */
	uint8_t max_cm_retries; /* 0..15 */
	uint8_t local_cm_response_timeout; /* 0..31: how fast we answer */
	uint8_t remote_cm_response_timeout; /* 0..31: how long we wait */
	uint8_t private_data_len; /* <= CMC_REQ_PRIVATE_DATA_SIZE */
	const void *private_data;
	struct cmc_path_override path; /* flags 0: take the resolved path */
	/* Zero, or cmc_connect() returns -EINVAL; so must dst's, src's and
	 * path's be. */
	uint64_t reserved[4];
};
int cmc_connect(struct cmc_id *id, const struct cmc_conn_param *param);

/*
 * Confirm a REP_RECEIVED (REP_RCVD, MRA_REP_SENT) once the QP is in RTS:
 * send the RTU. The id is ESTABLISHED when this returns 0; no event
 * follows on this side. Errors: -EINVAL (state, length).
 */
int cmc_rtu(struct cmc_id *id, const void *private_data,
	    uint8_t private_data_len);

/* ---------------------------------------------------------------------
 * Both sides
 */

/*
 * Ask the peer for more time to answer the REQ, REP or LAP this id
 * received: send an MRA with service_timeout (5-bit exponent) and up to
 * CMC_MRA_PRIVATE_DATA_SIZE bytes of private data (for a LAP, only the
 * first MRA carries them; one resent for a duplicate LAP does not).
 */
int cmc_mra(struct cmc_id *id, uint8_t service_timeout,
	    const void *private_data, uint8_t private_data_len);

/*
 * ESTABLISHED: send a DREQ (DREP_RECEIVED or DISCONNECT_TIMEOUT follows,
 * then TIMEWAIT_EXIT). DREQ_RCVD: send the DREP (TIMEWAIT_EXIT follows).
 * Private data up to CMC_DREQ_PRIVATE_DATA_SIZE in both cases. DREQ_SENT
 * and TIMEWAIT (our DREQ is out, or the peer's DREQ crossed this call and
 * was answered): nothing to do, 0, as librdmacm's rdma_disconnect.
 * Errors: -EINVAL (other states, length).
 */
int cmc_disconnect(struct cmc_id *id, const void *private_data,
		   uint8_t private_data_len);

/*
 * Propose alt_path as the ESTABLISHED connection's alternate path (LAP);
 * APR_RECEIVED answers. alt_path's mtu, pkey, pkey_index and
 * packet_life_time are not sent; dev_name "" means the primary's device.
 * A path from an event or cmc_query_id() may be passed as it is.
 * Errors: -EINVAL (state, length, alt_path's reserved space not zero).
 */
int cmc_lap(struct cmc_id *id, const struct cmc_path *alt_path,
	    const void *private_data, uint8_t private_data_len);

/* Answer a LAP_RECEIVED with an IBTA Table 117 status (0 = success). */
int cmc_apr(struct cmc_id *id, uint8_t ap_status, const void *info,
	    uint8_t info_len, const void *private_data,
	    uint8_t private_data_len);

/*
 * UD ids: resolve service_id at dst to a QPN and Q_Key (SIDR_REQ).
 * SIDR_REP_RECEIVED or CONNECT_ERROR follows. pkey 0: the port's default;
 * retries and timeout 0: the daemon's defaults.
 */
struct cmc_sidr_param {
	uint64_t service_id;
	struct cmc_addr dst;
	struct cmc_port_sel src;
	uint16_t pkey;
	uint8_t max_cm_retries;
	uint8_t cm_response_timeout;
	uint8_t private_data_len; /* <= CMC_SIDR_REQ_PRIVATE_DATA_SIZE */
	const void *private_data;
	/* Zero, or cmc_sidr_req() returns -EINVAL; so must dst's and src's
	 * be. */
	uint64_t reserved[4];
};
int cmc_sidr_req(struct cmc_id *id, const struct cmc_sidr_param *param);

/* Answer a SIDR_REQ_RECEIVED: IBTA Table 121 status, our UD QP's number
 * and Q_Key (meaningful with status 0). */
int cmc_sidr_rep(struct cmc_id *id, uint8_t status, uint32_t qpn, uint32_t qkey,
		 const void *private_data, uint8_t private_data_len);

/*
 * The path cmc_connect() would take to dst, before connecting, as
 * rdma_resolve_route() gives it: CMC_EVENT_ROUTE_RESOLVED follows, with
 * the path (and an alternate, when the subnet administrator offers one)
 * or a negative status (-ETIMEDOUT: the SA did not answer, -ENOENT: it
 * has no such path, -ENETUNREACH: no port reaches dst, ...). On IB ports
 * the daemon asks the SA (or answers from its path cache); elsewhere the
 * path is built from the local port at once. The id stays IDLE. To use
 * the path, pass it to cmc_connect() as a whole cmc_path_override (mtu,
 * pkey, sl, traffic_class, hop_limit, flow_label, packet_rate; the
 * daemon then asks the SA nothing more) with the path's remote GID or
 * LID as dst.
 */
struct cmc_route_param {
	uint64_t service_id; /* asked of the SA (QoS policies may use it) */
	struct cmc_addr dst;
	struct cmc_port_sel src;
	struct cmc_path_override path; /* settings the path must have */
	/* Zero, or cmc_resolve_route() returns -EINVAL; so must dst's,
	 * src's and path's be. */
	uint64_t reserved[4];
};
int cmc_resolve_route(struct cmc_id *id, const struct cmc_route_param *param);

/* ---------------------------------------------------------------------
 * Events
 */

enum cmc_event_type {
	/* A new passive id's first event: ev->id is the new id, ev->listen_id
	 * the listener, ev->context the listener's context. Answer with
	 * cmc_accept() or cmc_reject(); set the id's own context with
	 * cmc_set_context(). */
	CMC_EVENT_REQ_RECEIVED = 1,
	/* Active side: answer with RTR/RTS and cmc_rtu() (or cmc_reject()). */
	CMC_EVENT_REP_RECEIVED = 2,
	/* Passive side: the RTU came (or cmc_notify_established()). */
	CMC_EVENT_ESTABLISHED = 3,
	CMC_EVENT_REJ_RECEIVED = 4,
	/* No answer or no route; status says why (-ETIMEDOUT, -ENETDOWN:
	 * our port went down, -EHOSTUNREACH: the RoCE peer's neighbour
	 * could not be resolved, ...). */
	CMC_EVENT_CONNECT_ERROR = 5,
	/* The peer needs more time: its CM MRAed our REQ (its app has not
	 * answered yet, or its listener had no credit), REP or LAP.
	 * u.mra says which and the service timeout it asked for; we wait
	 * that long more. Once per message, before its outcome; nothing
	 * to answer, ack it. */
	CMC_EVENT_MRA_RECEIVED = 6,
	/* Answer with cmc_disconnect(), which sends the DREP. */
	CMC_EVENT_DREQ_RECEIVED = 7,
	CMC_EVENT_DREP_RECEIVED = 8,
	/* Our DREQ went unanswered; the id is in timewait anyway. */
	CMC_EVENT_DISCONNECT_TIMEOUT = 9,
	/* Timewait is over: the QP may be reused. */
	CMC_EVENT_TIMEWAIT_EXIT = 10,
	CMC_EVENT_LAP_RECEIVED = 11,
	CMC_EVENT_APR_RECEIVED = 12, /* status -ETIMEDOUT: no APR came */
	/* A new passive UD id's first event, like REQ_RECEIVED. */
	CMC_EVENT_SIDR_REQ_RECEIVED = 13,
	CMC_EVENT_SIDR_REP_RECEIVED = 14,
	CMC_EVENT_PORT_ERROR = 15, /* -ENETDOWN; the id stays */
	/* -ENODEV: the id's device went away (u.port names it). The id is
	 * IDLE and nothing more is sent for it: destroy it, and close the
	 * QPs and verbs context you hold on that device (on drivers that
	 * cannot disassociate them, rxe among them, the kernel's removal
	 * waits for that). Once per id; listeners are not told. */
	CMC_EVENT_DEVICE_REMOVAL = 16,
	/* cmc_resolve_route()'s answer: u.route, or status < 0. */
	CMC_EVENT_ROUTE_RESOLVED = 17,
	/* Made by the library, not the daemon: a request queued in
	 * asynchronous mode failed (see cmc_set_async()). status is its
	 * error, u.request_error.request the call. A failed cmc_connect() of
	 * an id it would have created leaves the id without a daemon id:
	 * destroy it. Ack it as any other (nothing goes to the daemon); it
	 * may come while the id's ordinary event is still held. */
	CMC_EVENT_REQUEST_ERROR = 64,
};

/* Which call a CMC_EVENT_REQUEST_ERROR reports (the protocol's numbers). */
enum cmc_request {
	CMC_REQ_DESTROY_ID = 3,
	CMC_REQ_SET_CONTEXT = 4,
	CMC_REQ_CONNECT = 6,
	CMC_REQ_ACCEPT = 7,
	CMC_REQ_REJECT = 8,
	CMC_REQ_RTU = 9,
	CMC_REQ_NOTIFY_ESTABLISHED = 10,
	CMC_REQ_MRA = 11,
	CMC_REQ_DISCONNECT = 12,
	CMC_REQ_LAP = 13,
	CMC_REQ_APR = 14,
	CMC_REQ_SIDR_REP = 16,
	CMC_REQ_ACK_EVENT = 17,
};

/* Bodies, filled member by member from what the daemon sent (the
 * library allocates events, so later versions may add members at the
 * end). Received private data is always the message's whole area
 * (private_data_len = its size): the wire does not say how much of it the
 * peer meant. Bytes of an area beyond its length are zero. */
struct cmc_ev_req {
	uint32_t listen_id; /* cmc_id_num() of ev->listen_id */
	uint32_t remote_comm_id;
	uint32_t remote_qpn;
	uint32_t start_psn; /* the peer's: our QP's RQ PSN */
	uint64_t service_id;
	uint64_t remote_ca_guid;
	uint8_t qp_type; /* enum cmc_qp_type: RC or UC */
	/* The requester's values: its responder resources bound our
	 * initiator depth and its initiator depth our responder resources. */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count; /* ours to use */
	uint8_t srq;
	uint8_t private_data_len;
	struct cmc_path path; /* reversed to our point of view */
	uint8_t private_data[CMC_REQ_PRIVATE_DATA_SIZE];
};

struct cmc_ev_rep {
	uint32_t remote_qpn;
	uint32_t start_psn;
	uint64_t remote_ca_guid;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t failover;
	uint8_t flow_control;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t private_data_len;
	struct cmc_path path;
	uint8_t private_data[CMC_REP_PRIVATE_DATA_SIZE];
};

struct cmc_ev_established {
	uint8_t private_data_len; /* 0 after cmc_notify_established() */
	uint8_t private_data[CMC_RTU_PRIVATE_DATA_SIZE];
};

struct cmc_ev_rej {
	uint16_t reason; /* IBTA Table 109 */
	uint8_t ari_len;
	uint8_t private_data_len;
	uint8_t ari[CMC_REJ_ARI_SIZE];
	uint8_t private_data[CMC_REJ_PRIVATE_DATA_SIZE];
};

/* The CM message an event refers to. */
enum cmc_cm_msg {
	CMC_CM_MSG_NONE = 0,
	CMC_CM_MSG_REQ = 1,
	CMC_CM_MSG_MRA = 2,
	CMC_CM_MSG_REJ = 3,
	CMC_CM_MSG_REP = 4,
	CMC_CM_MSG_RTU = 5,
	CMC_CM_MSG_DREQ = 6,
	CMC_CM_MSG_DREP = 7,
	CMC_CM_MSG_LAP = 8,
	CMC_CM_MSG_APR = 9,
	CMC_CM_MSG_SIDR_REQ = 10,
	CMC_CM_MSG_SIDR_REP = 11,
};

struct cmc_ev_connect_error {
	uint8_t msg; /* enum cmc_cm_msg that went unanswered, or NONE */
};

struct cmc_ev_mra {
	uint8_t service_timeout;
	uint8_t msg; /* enum cmc_cm_msg: REQ, REP or LAP */
};

struct cmc_ev_dreq {
	uint8_t private_data_len;
	uint8_t private_data[CMC_DREQ_PRIVATE_DATA_SIZE];
};

struct cmc_ev_drep {
	uint8_t private_data_len;
	uint8_t private_data[CMC_DREP_PRIVATE_DATA_SIZE];
};

struct cmc_ev_lap {
	struct cmc_path alt_path;
	uint8_t private_data_len;
	uint8_t private_data[CMC_LAP_PRIVATE_DATA_SIZE];
};

struct cmc_ev_apr {
	uint8_t ap_status; /* IBTA Table 117 */
	uint8_t info_len;
	uint8_t private_data_len;
	uint8_t info[CMC_APR_INFO_SIZE];
	uint8_t private_data[CMC_APR_PRIVATE_DATA_SIZE];
};

struct cmc_ev_sidr_req {
	uint32_t listen_id;
	uint8_t private_data_len;
	uint64_t service_id;
	struct cmc_path path;
	uint8_t private_data[CMC_SIDR_REQ_PRIVATE_DATA_SIZE];
};

struct cmc_ev_sidr_rep {
	uint32_t qpn;
	uint32_t qkey;
	uint8_t status; /* IBTA Table 121 */
	uint8_t private_data_len;
	struct cmc_path path;
	uint8_t private_data[CMC_SIDR_REP_PRIVATE_DATA_SIZE];
};

struct cmc_ev_port {
	uint8_t port_num;
	char dev_name[CMC_DEV_NAME_SIZE];
};

struct cmc_ev_route {
	uint8_t has_alt; /* alt_path is an alternate the SA offered */
	uint8_t from_sa; /* 1: the SA's path; 0: built from the local port */
	struct cmc_path path;
	struct cmc_path alt_path;
};

struct cmc_ev_request_error {
	uint32_t request; /* enum cmc_request */
	uint32_t reserved;
};

/*
 * One event, owned by the application from cmc_get_event() until
 * cmc_ack_event(). Read-only.
 */
struct cmc_event {
	struct cmc_id *id;
	/* REQ_RECEIVED and SIDR_REQ_RECEIVED: the listener, or NULL if it
	 * was destroyed before this event was returned; otherwise NULL. */
	struct cmc_id *listen_id;
	/* The id's context when the daemon sent the event (the listener's
	 * for REQ_RECEIVED and SIDR_REQ_RECEIVED). */
	void *context;
	enum cmc_event_type type;
	int status; /* 0 or a negative errno */
	union {
		struct cmc_ev_req req;
		struct cmc_ev_rep rep;
		struct cmc_ev_established established;
		struct cmc_ev_rej rej;
		struct cmc_ev_connect_error connect_error;
		struct cmc_ev_mra mra;
		struct cmc_ev_dreq dreq;
		struct cmc_ev_drep drep;
		struct cmc_ev_lap lap;
		struct cmc_ev_apr apr;
		struct cmc_ev_sidr_req sidr_req;
		struct cmc_ev_sidr_rep sidr_rep;
		struct cmc_ev_port port; /* PORT_ERROR, DEVICE_REMOVAL */
		struct cmc_ev_route route; /* ROUTE_RESOLVED */
		struct cmc_ev_request_error request_error;
	} u; /* by type; DISCONNECT_TIMEOUT and TIMEWAIT_EXIT have none */
};

/*
 * The next event of any id, oldest first. timeout_ms: 0 polls, -1 waits
 * forever. Returns 0 with *evp set, or -EAGAIN when no event came in time,
 * or a channel error. Events of destroyed ids are never returned. Events
 * read before the channel died are still returned, then the error.
 * Events of ids this library does not know (other than a new passive id's
 * first) are dropped.
 */
int cmc_get_event(struct cmc_channel *ch, struct cmc_event **evp,
		  int timeout_ms);

/*
 * The next event of one id. Events of other ids that arrive meanwhile are
 * queued, in order, for later cmc_get_event() calls; none is lost or
 * reordered. Returns as cmc_get_event(), and -EINVAL for a destroyed id.
 */
int cmc_get_event_id(struct cmc_channel *ch, struct cmc_id *id,
		     struct cmc_event **evp, int timeout_ms);

/*
 * Ack an event and free it. The id's next event comes only after this
 * (lesson 2). Ack every event exactly once. Answer an event before you ack
 * it (cmc_accept(), cmc_rtu(), cmc_disconnect(), ... while you hold it):
 * the answer then carries the ack to the daemon and this call sends
 * nothing, one message (in blocking mode one round trip) fewer; the
 * library holds the id's next event until this call. Acking an event of
 * a destroyed id, or after the channel died or was closed, only frees it
 * and returns 0. Otherwise returns 0 or a channel error (the event is
 * freed in every case). NULL is allowed.
 */
int cmc_ack_event(struct cmc_event *ev);

/* "REQ_RECEIVED", ... ("UNKNOWN" outside the enum). */
const char *cmc_event_str(enum cmc_event_type type);

/* ---------------------------------------------------------------------
 * Introspection
 */

struct cmc_id_info {
	uint32_t id;
	uint32_t listen_id;
	uint64_t context;
	uint64_t service_id;
	uint64_t service_mask;
	uint64_t remote_ca_guid;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qpn; /* 0 until CONNECT or ACCEPT */
	uint32_t remote_qpn; /* 0 until the REQ or REP came */
	/* The Starting PSNs announced: ours (REQ/REP we sent) and the
	 * peer's. Read the Linux way (see cmc_init_qp_attr()), ours is our
	 * RQ's first PSN and the peer's our SQ's. */
	uint32_t local_psn;
	uint32_t remote_psn;
	uint32_t qkey;
	uint32_t backlog;
	uint32_t credits_in_use;
	uint32_t held_reqs;
	uint8_t state; /* enum cmc_state */
	uint8_t lap_state; /* enum cmc_lap_state */
	uint8_t qp_type; /* enum cmc_qp_type */
	/* Negotiated, for our QP: max_dest_rd_atomic and max_rd_atomic. */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t failover;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t max_cm_retries;
	uint8_t local_cm_response_timeout;
	uint8_t remote_cm_response_timeout;
	uint8_t has_alt_path;
	/*
	 * Listeners: their selector's kind (enum cmc_sel), and path says
	 * where they listen: dev_name and port_num for CMC_SEL_PORT
	 * (port_num 0: every port of the device), local_gid for
	 * CMC_SEL_GID, nothing for CMC_SEL_ANY. Other ids: CMC_SEL_ANY.
	 */
	uint8_t sel;
	struct cmc_path path;
	struct cmc_path alt_path;
};

/* Ask the daemon about one of our ids (any state). */
int cmc_query_id(struct cmc_id *id, struct cmc_id_info *info);

/* LIST, COUNTERS and PORTS walk the daemon in batches (for cmctl). */
enum cmc_list_filter {
	CMC_LIST_LISTENERS = 1,
	CMC_LIST_CONNECTIONS = 2,
	CMC_LIST_ALL = 3,
};

#define CMC_LIST_BATCH_MAX 39
struct cmc_list_entry {
	uint32_t id;
	uint8_t state;
	uint8_t lap_state;
	uint8_t qp_type;
	uint8_t sel; /* listeners: enum cmc_sel of their port selector */
	uint64_t service_id;
	uint64_t service_mask;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t owner_pid;
	uint32_t owner_uid;
	/* Listeners only: the backlog (credit), how much of it REQs hold,
	 * and how many REQs wait (MRAed) for a credit to come back. */
	uint32_t backlog;
	uint32_t credits_in_use;
	uint32_t held_reqs;
	union {
		uint8_t remote_gid[CMC_GID_SIZE]; /* connections: the peer's */
		/* Listeners with CMC_SEL_GID: the GID they listen on. */
		uint8_t listen_gid[CMC_GID_SIZE];
	};
	/* Listeners with CMC_SEL_PORT: one of the ports (cmc_port_info's
	 * port_index) and the port_num asked for (0: every port of that
	 * port's device). */
	uint16_t sel_port_index;
	uint8_t sel_port_num;
	/* Connections (zero for listeners): the port of the id's path
	 * (cmc_port_info's port_index and port_num; 0 before it has one),
	 * the peer's LID (0 on RoCE), grh 1 when the peer is addressed by
	 * remote_gid (the path has a GRH), else by remote_lid, and the QP
	 * numbers (0 until negotiated). */
	uint8_t grh;
	uint16_t port_index;
	uint8_t port_num;
	uint16_t remote_lid;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	/* The owner's process name: /proc/PID/comm when it connected, as
	 * the daemon read it, or where the daemon may not read it, the name
	 * it gave cmc_open() (cut to 15 characters). */
	char owner_comm[16];
};

/*
 * One batch of the daemon's ids (every client's). *cursor is 0 for the
 * first batch and is updated for the next; it is 0 again when the walk is
 * done. entries must hold CMC_LIST_BATCH_MAX. Returns the number of
 * entries filled (0..CMC_LIST_BATCH_MAX) or an error.
 */
int cmc_list(struct cmc_channel *ch, enum cmc_list_filter filter,
	     uint64_t *cursor, struct cmc_list_entry *entries);

enum cmc_counter_scope {
	CMC_COUNTERS_GLOBAL = 1,
	CMC_COUNTERS_PORT = 2, /* dev_name and port_num name the port */
	CMC_COUNTERS_CLIENT = 3, /* this channel's own */
};

#define CMC_COUNTERS_BATCH_MAX 101
struct cmc_counter {
	char name[32]; /* stable across releases */
	uint64_t value;
};

/* One batch of counters, walked like cmc_list(). dev_name and port_num
 * are for CMC_COUNTERS_PORT only (NULL and 0 otherwise). entries must hold
 * CMC_COUNTERS_BATCH_MAX. */
int cmc_counters(struct cmc_channel *ch, enum cmc_counter_scope scope,
		 const char *dev_name, uint8_t port_num, uint64_t *cursor,
		 struct cmc_counter *entries);

/*
 * Start the daemon's MAD capture into path (absolute; the daemon creates
 * the file) or, with path NULL, stop it. Root and the daemon's admin group
 * only: -EPERM for others; -EINVAL for a relative path.
 */
int cmc_capture(struct cmc_channel *ch, const char *path);

/* A port's link layer, numbered as enum ibv_link_layer. */
enum cmc_link_layer {
	CMC_LINK_IB = 1,
	CMC_LINK_ROCE = 2, /* IBV_LINK_LAYER_ETHERNET */
};

/* A GID table entry's type. */
enum cmc_gid_type {
	CMC_GID_IB = 1,
	CMC_GID_ROCE_V1 = 2,
	CMC_GID_ROCE_V2 = 3,
};

struct cmc_port_gid {
	uint16_t index; /* in the port's GID table: a path's sgid_index */
	uint8_t type; /* enum cmc_gid_type */
	uint8_t gid[CMC_GID_SIZE]; /* network order */
};

/* The GIDs one entry carries: the first CMC_PORT_GIDS of the table. */
#define CMC_PORT_GIDS 4
#define CMC_PORTS_BATCH_MAX 23
/*
 * One port the daemon serves. GUIDs in host order; LIDs 0 on RoCE.
 * gids[0..min(n_gids, CMC_PORT_GIDS)) are valid, the rest zero; n_gids
 * counts the whole table.
 */
struct cmc_port_info {
	char dev_name[CMC_DEV_NAME_SIZE];
	uint64_t node_guid;
	uint64_t port_guid;
	uint16_t port_index; /* the daemon's number for the port */
	uint16_t lid;
	uint16_t sm_lid;
	uint16_t n_gids;
	uint8_t port_num; /* 1-based, on dev_name */
	uint8_t up; /* 0 once the device is gone */
	uint8_t state; /* enum ibv_port_state: IBV_PORT_ACTIVE, ... */
	uint8_t link_layer; /* enum cmc_link_layer */
	uint8_t active_mtu; /* enum ibv_mtu; 0 when the device did not say */
	uint8_t lmc;
	uint8_t sm_sl;
	struct cmc_port_gid gids[CMC_PORT_GIDS];
};

/*
 * One batch of the ports the daemon serves (every client may ask), walked
 * like cmc_list(): *cursor 0 for the first batch, updated for the next, 0
 * again when the walk is done. entries must hold CMC_PORTS_BATCH_MAX.
 * Returns the number of entries filled (0..CMC_PORTS_BATCH_MAX) or an
 * error.
 */
int cmc_ports(struct cmc_channel *ch, uint64_t *cursor,
	      struct cmc_port_info *entries);

/* The daemon's cache of the SA's PathRecords (for cmctl paths). */
#define CMC_PATHS_BATCH_MAX 25
#define CMC_PATHS_FLUSH 0x1u /* cmc_paths(): flush every port's first */
/*
 * One cached answer of the SA: the port it was asked from (cmc_port_info's
 * port_index, dev_name and port_num), what was asked (by LID when
 * asked_dlid is not 0, else by the GID asked_dgid), the primary path
 * record's fields, the alternate's LIDs when the SA gave one (has_alt 1),
 * and the entry's age, the seconds until it expires (0: never) and how
 * many connects it served. GIDs in network order. reserved is zero.
 */
struct cmc_path_entry {
	char dev_name[CMC_DEV_NAME_SIZE];
	uint16_t port_index;
	uint8_t port_num;
	uint16_t asked_dlid;
	uint8_t asked_dgid[CMC_GID_SIZE];
	uint8_t sgid[CMC_GID_SIZE];
	uint8_t dgid[CMC_GID_SIZE];
	uint16_t slid;
	uint16_t dlid;
	uint16_t pkey;
	uint8_t sl;
	uint8_t mtu; /* enum ibv_mtu */
	uint8_t rate; /* IBTA static rate code, as enum ibv_rate */
	uint8_t packet_life_time; /* exponent: 4.096 us * 2^n */
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t has_alt;
	uint16_t alt_slid;
	uint16_t alt_dlid;
	uint32_t age_s;
	uint32_t expires_s;
	uint64_t hits;
	uint64_t reserved[4];
};

/*
 * One batch of the daemon's path cache (every client may ask), walked
 * like cmc_ports(); entries must hold CMC_PATHS_BATCH_MAX. The cache
 * changes as the SA answers and entries expire, so a walk may skip or
 * repeat an entry that came or went meanwhile. flags: 0, or
 * CMC_PATHS_FLUSH with *cursor 0 to flush every port's entries first
 * (root and the daemon's admin group only: -EPERM for others), the batch
 * then being what is left. Returns the number of entries filled
 * (0..CMC_PATHS_BATCH_MAX) or an error; -EINVAL for unknown flags or
 * CMC_PATHS_FLUSH with a cursor.
 */
int cmc_paths(struct cmc_channel *ch, unsigned int flags, uint64_t *cursor,
	      struct cmc_path_entry *entries);

/*
 * Flush the daemon's path cache: every port's (port_index < 0) or one
 * port's (a cmc_port_info's port_index), so the next connects ask the SA
 * again. Root and the daemon's admin group only (-EPERM). Returns how many
 * entries went, or -ENODEV (no such port), -EINVAL (port_index > 65535).
 */
int cmc_paths_flush(struct cmc_channel *ch, int port_index);

/* "ESTABLISHED", ... ("UNKNOWN" outside the enum). */
const char *cmc_state_str(enum cmc_state state);

/* ---------------------------------------------------------------------
 * QP helpers (what the kernel's ib_cm_init_qp_attr computes)
 */

/*
 * PSNs: a REQ's or REP's Starting PSN is read as the Linux kernel's ib_cm
 * and rdma_cm read it: the PSN the sender's receive queue expects, i.e.
 * where the peer's send queue starts. So RTR's rq_psn is the PSN this side
 * announced (CONNECT's or ACCEPT's start_psn; on a passive id moved to RTR
 * before cmc_accept(), one the library picks and cmc_accept() announces)
 * and RTS's sq_psn the peer's (the REQ's or REP's). Both ends of a cmd
 * connection do this, and so does every Linux peer (tests/interop).
 * cmc_qp_attr_from_info() below does not swap: it takes info->local_psn
 * as the SQ PSN and info->remote_psn as the RQ PSN as given.
 *
 * Compute the attributes and mask that move an RC or UC QP to target
 * (IBV_QPS_INIT, IBV_QPS_RTR or IBV_QPS_RTS) for this connection, from
 * what the handshake negotiated. The library keeps those values from
 * CONNECT/ACCEPT and the REQ_RECEIVED/REP_RECEIVED events, and asks the
 * daemon (QUERY_ID) for what it lacks, e.g. the port for INIT right after
 * cmc_connect(). *attr is overwritten.
 *   INIT: port, P_Key index, access (remote write; remote read and atomic
 *         too when RC and responder resources > 0). The application may OR
 *         IBV_ACCESS_LOCAL_WRITE etc. in before applying.
 *   RTR:  path MTU, dest QPN, RQ PSN, address vector (DLID, SL, rate; GRH
 *         with DGID, SGID index, hop limit, traffic class, flow label when
 *         the path has one: always on RoCE); RC adds max_dest_rd_atomic
 *         and min_rnr_timer (0, as the kernel). An alternate path loaded by
 *         LAP/APR is added as IBV_QP_ALT_PATH.
 *   RTS:  SQ PSN; RC adds timeout (the path's local ACK timeout), retry
 *         count, RNR retry count, max_rd_atomic. Needs cmc_connect() or
 *         cmc_accept() first (the SQ PSN is the one they announced).
 * Errors: -EINVAL (target not INIT/RTR/RTS, or the state does not allow
 * it: INIT needs a connection under way, RTR the peer's REQ or REP), 
 * -EOPNOTSUPP (UD ids: set up UD QPs yourself from SIDR_REP_RECEIVED),
 * channel errors from QUERY_ID.
 */
int cmc_init_qp_attr(struct cmc_id *id, enum ibv_qp_state target,
		     struct ibv_qp_attr *attr, int *mask);

/* cmc_init_qp_attr(), then ibv_modify_qp(); its error as -errno. */
int cmc_modify_qp(struct cmc_id *id, struct ibv_qp *qp,
		  enum ibv_qp_state target);

/*
 * The pure computation behind cmc_init_qp_attr(), over an id_info as
 * cmc_query_id() returns it (state, qp_type, local/remote QPN and PSN,
 * responder resources, initiator depth, retry counts, path, alternate
 * path). No I/O; the same errors but channel ones.
 */
int cmc_qp_attr_from_info(const struct cmc_id_info *info,
			  enum ibv_qp_state target, struct ibv_qp_attr *attr,
			  int *mask);

/* ---------------------------------------------------------------------
 * rdma_cm addressing (interoperating with the Linux kernel's rdma_cm)
 *
 * Peers that use the kernel's rdma_cm (librdmacm apps: rping, ucmatose,
 * storage targets, MPI) name each other by IP address and port. On the
 * wire that is:
 *   - the REQ's service id: 0x0000000001060000 | port for the TCP port
 *     space (port space << 16 | port in general);
 *   - a 36-byte CMA header at the start of the REQ's private data: byte 0
 *     version 0, byte 1 the IP version (4 or 6) in the top nibble, bytes
 *     2-3 the source port (big endian), bytes 4-19 the source address,
 *     bytes 20-35 the destination address (IPv4: in the last 4 bytes);
 *     the application's private data follows (at most 92 - 36 = 56 bytes;
 *     in a SIDR_REQ, 216 - 36 = 180);
 *   - RoCE GIDs that are IP addresses: IPv4 a.b.c.d is ::ffff:a.b.c.d,
 *     an IPv6 address (link-local fe80:: too) is its own GID.
 * Only the REQ and the SIDR_REQ carry the header: REP, REJ, RTU, DREQ,
 * DREP and SIDR_REP private data is the application's alone, in both
 * directions. UD ids of the UDP port space (udaddy, RDMA_PS_UDP) resolve
 * each other with SIDR: cmc_sidr_req_ip() on one side, a listener, a
 * SIDR_REQ_RECEIVED read with cmc_event_cma() and cmc_sidr_rep() with
 * CMC_RDMA_UDP_QKEY on the other.
 * docs/INTEROP.md tells how to run cmd next to the kernel's CM.
 */

/* include/rdma/rdma_cm.h: enum rdma_ucm_port_space. 0 means TCP. */
enum cmc_rdma_ps {
	CMC_RDMA_PS_DEFAULT = 0, /* = CMC_RDMA_PS_TCP */
	CMC_RDMA_PS_IPOIB = 0x0002,
	CMC_RDMA_PS_TCP = 0x0106,
	CMC_RDMA_PS_UDP = 0x0111,
	CMC_RDMA_PS_IB = 0x013F,
};

#define CMC_CMA_HDR_SIZE 36
/* The application's part of an rdma_cm REQ's private data. */
#define CMC_CMA_PRIVATE_DATA_SIZE (CMC_REQ_PRIVATE_DATA_SIZE - CMC_CMA_HDR_SIZE)
/* ... and of an rdma_cm SIDR_REQ's. */
#define CMC_CMA_SIDR_PRIVATE_DATA_SIZE                                         \
	(CMC_SIDR_REQ_PRIVATE_DATA_SIZE - CMC_CMA_HDR_SIZE)

/*
 * The Q_Key of every UD id in the kernel's rdma_cm UDP port space
 * (RDMA_UDP_QKEY, cma.c's cma_set_qkey): what its SIDR_REP announces and
 * what its UD QPs use. A SIDR_REP to an rdma_cm UDP peer carries it, and
 * the application's UD QP is set to it.
 */
#define CMC_RDMA_UDP_QKEY 0x01234567u

/*
 * Write the 36-byte CMA header of a request from src (address and source
 * port) to dst (address; its port is the one the service id names, the
 * header does not carry it): both AF_INET or both AF_INET6. What
 * cmc_connect_ip() and cmc_sidr_req_ip() put first in their private data,
 * for an application that builds the request itself. Returns 0, -EINVAL
 * (NULL arguments) or -EAFNOSUPPORT (families).
 */
int cmc_cma_hdr_encode(uint8_t out[CMC_CMA_HDR_SIZE],
		       const struct sockaddr *src, const struct sockaddr *dst);

/* The service id of port in port space ps (0: TCP); 0 for an unknown ps. */
uint64_t cmc_rdma_service_id(enum cmc_rdma_ps ps, uint16_t port);

/*
 * Connect an RC id (IDLE) to an rdma_cm peer listening on dst (AF_INET or
 * AF_INET6 with the port; an IPv6 link-local address names the GID
 * fe80::..., its scope id is not used). As cmc_connect(), with:
 *   - service id: cmc_rdma_service_id(ps, port of dst); param->service_id
 *     is ignored;
 *   - destination: dst's RoCE GID (param->dst is ignored);
 *   - source: src (same family as dst) when given: its address is the
 *     local GID the REQ leaves from (the daemon's port owning it) and its
 *     port the CMA header's source port (0: an ephemeral one is chosen).
 *     src NULL, or with an unspecified address: the library asks the
 *     daemon for its ports (cmc_ports()) and picks the GID the daemon
 *     would (first served, active RoCE port, restricted by param->src;
 *     for IPv4 an ::ffff:a.b.c.d GID, for IPv6 the same link-local-ness,
 *     RoCE v2 preferred) - that GID's address is the header's source
 *     address, as rdma_cm does with the bound address;
 *   - private data: the CMA header, then param's private data (at most
 *     CMC_CMA_PRIVATE_DATA_SIZE bytes).
 * Errors, besides cmc_connect()'s: -EINVAL (NULL arguments, lengths,
 * unknown ps, dst port 0), -EAFNOSUPPORT (families), -EADDRNOTAVAIL (no
 * served port has a GID of that kind, or src's address is no GID of a
 * served port).
 */
int cmc_connect_ip(struct cmc_id *id, const struct sockaddr *dst,
		   const struct sockaddr *src, enum cmc_rdma_ps ps,
		   const struct cmc_conn_param *param);

/*
 * The SIDR twin of cmc_connect_ip(): resolve a UD id (IDLE) to the QPN and
 * Q_Key of the rdma_cm peer listening on dst, as cmc_sidr_req() with
 *   - service id: cmc_rdma_service_id(ps, port of dst), normally
 *     CMC_RDMA_PS_UDP (param->service_id is ignored);
 *   - destination: dst's RoCE GID (param->dst is ignored);
 *   - source: src, or picked as cmc_connect_ip() does (restricted by
 *     param->src);
 *   - private data: the CMA header, then param's private data (at most
 *     CMC_CMA_SIDR_PRIVATE_DATA_SIZE bytes).
 * SIDR_REP_RECEIVED (or CONNECT_ERROR) follows; a kernel rdma_cm peer
 * answers with CMC_RDMA_UDP_QKEY. Errors: cmc_sidr_req()'s and
 * cmc_connect_ip()'s.
 */
int cmc_sidr_req_ip(struct cmc_id *id, const struct sockaddr *dst,
		    const struct sockaddr *src, enum cmc_rdma_ps ps,
		    const struct cmc_sidr_param *param);

/*
 * Listen (as cmc_listen()) on exactly the service id of port in port
 * space ps (0: TCP), on every served port: what rdma_listen() on the
 * wildcard address is (cmc_listen() with a CMC_SEL_GID selector of the
 * address's GID is rdma_listen() on a bound address). REQ_RECEIVED events of rdma_cm peers carry the CMA
 * header first in their private data: cmc_event_cma() splits it off.
 */
int cmc_listen_port(struct cmc_id *id, enum cmc_rdma_ps ps, uint16_t port,
		    unsigned int backlog);

/*
 * The rdma_cm view of a REQ_RECEIVED or SIDR_REQ_RECEIVED event: src the
 * peer's address and source port, dst our address (as the peer named it)
 * and the listened port (from the service id); pd/len the application's
 * private data after the header (len = the request's private data area
 * less 36: 56 for a REQ, 180 for a SIDR_REQ; the wire does not say how
 * much the peer meant). Any output may be NULL. Returns 0, -EINVAL
 * (another event), -ENOENT (its service id is not in an rdma_cm port
 * space), -EBADMSG (no valid CMA header).
 */
int cmc_event_cma(const struct cmc_event *ev, struct sockaddr_storage *src,
		  struct sockaddr_storage *dst, const uint8_t **pd,
		  size_t *len);

/*
 * Text for an IBTA Table 109 REJ reason, in the words rdma_cm users
 * need: 8 "invalid service id (nobody listens on that port)", 28
 * "consumer reject", 10 "stale connection", ... ("unknown" otherwise).
 * rdma_cm reports the reason as the RDMA_CM_EVENT_REJECTED status.
 */
const char *cmc_rej_reason_str(unsigned int reason);

#ifdef __cplusplus
}
#endif

#endif
