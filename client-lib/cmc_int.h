/* SPDX-License-Identifier: MIT */
/*
 * libcmclient's internals, shared by its files (none of it is exported:
 * the library is built with hidden visibility, and only CMC_EXPORT
 * functions, the cmclient.h API, leave it):
 *   cmc_chan.c    the channel: time, ids and their table, its lifetime,
 *                 error and event queue, events as read; the channel API
 *   cmc_io.c      the socket: the output queue, requests waiting for their
 *                 reply, reading, and sending requests
 *   cmc_resume.c  the session: the link to the daemon lost at its restart
 *                 and taken up again with its successor (RESUME)
 *   cmclient.c    the id and event API, introspection, QP helpers
 *   cmc_rdmacm.c  rdma_cm addressing (IP to GID, port spaces, CMA header)
 *   cmc_qp.c      the QP attributes a handshake negotiated
 *   cmc_conv.c    public structs to and from the protocol's
 */
#ifndef CMD_CLIENT_LIB_CMC_INT_H
#define CMD_CLIENT_LIB_CMC_INT_H

#include "cmclient.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cm_mad.h"
#include "cmp.h"
#include "hash.h"
#include "rdmacm.h"
#include "spare.h"
#include "util.h"

#define CMC_EXPORT __attribute__((visibility("default")))

/* Requests queued before the output queue is flushed anyway; also the
 * most one sendmmsg() takes. */
#define CMC_TX_BATCH 64
/* Datagrams one recvmmsg() reads. */
#define CMC_RX_BATCH 32
/*
 * Acked event items a channel keeps for reuse: eight reads' worth, which
 * covers what a pipelining application holds between reading and acking;
 * beyond it (after a burst of held events) they are freed. An item is
 * about 430 bytes, so a channel keeps at most about 110 KiB.
 */
#define CMC_SPARE_MAX (8 * CMC_RX_BATCH)

/*
 * The public structs are not the wire's: cmc_conv.c converts them member
 * by member. What it converts by value, though, must mean the same on
 * both sides, and these check it: the limits (a batch the daemon sends
 * fits the caller's array; private data areas are IBTA's), and every enum
 * whose numbers are copied or cast across.
 */
_Static_assert(CMC_REQ_PRIVATE_DATA_SIZE == CM_REQ_PRIVATE_DATA_SIZE &&
		       CMC_REP_PRIVATE_DATA_SIZE == CM_REP_PRIVATE_DATA_SIZE &&
		       CMC_REJ_PRIVATE_DATA_SIZE == CM_REJ_PRIVATE_DATA_SIZE &&
		       CMC_REJ_ARI_SIZE == CM_REJ_ARI_SIZE &&
		       CMC_RTU_PRIVATE_DATA_SIZE == CM_RTU_PRIVATE_DATA_SIZE &&
		       CMC_MRA_PRIVATE_DATA_SIZE == CM_MRA_PRIVATE_DATA_SIZE &&
		       CMC_DREQ_PRIVATE_DATA_SIZE ==
			       CM_DREQ_PRIVATE_DATA_SIZE &&
		       CMC_LAP_PRIVATE_DATA_SIZE == CM_LAP_PRIVATE_DATA_SIZE &&
		       CMC_APR_PRIVATE_DATA_SIZE == CM_APR_PRIVATE_DATA_SIZE &&
		       CMC_APR_INFO_SIZE == CM_APR_INFO_SIZE &&
		       CMC_SIDR_REQ_PRIVATE_DATA_SIZE ==
			       CM_SIDR_REQ_PRIVATE_DATA_SIZE &&
		       CMC_SIDR_REP_PRIVATE_DATA_SIZE ==
			       CM_SIDR_REP_PRIVATE_DATA_SIZE &&
		       CMC_LIST_BATCH_MAX == CMP_LIST_BATCH_MAX &&
		       CMC_COUNTERS_BATCH_MAX == CMP_COUNTERS_BATCH_MAX &&
		       CMC_PORTS_BATCH_MAX == CMP_PORTS_BATCH_MAX &&
		       CMC_PATHS_BATCH_MAX == CMP_PATHS_BATCH_MAX &&
		       CMC_PATHS_FLUSH == CMP_PATHS_FLUSH &&
		       CMC_PORT_GIDS == CMP_PORT_GIDS &&
		       CMC_DEV_NAME_SIZE == CMP_DEV_NAME_SIZE &&
		       CMC_NAME_MAX + 1 == CMP_CLIENT_NAME_SIZE,
	       "public limits are the protocol's");
/* The public states are the protocol's, row by row (cm_states.def). */
#define CM_STATE(NAME, value)                                                  \
	_Static_assert((int)CMC_STATE_##NAME == (int)CMP_STATE_##NAME,         \
		       "CMC_STATE_" #NAME);
#define CM_LAP_STATE(NAME, ENG, value, text)                                   \
	_Static_assert((int)CMC_LAP_STATE_##NAME == (int)CMP_LAP_STATE_##NAME, \
		       "CMC_LAP_STATE_" #NAME);
#include "cm_states.def"
/* And the public event types the protocol's (cmp_msgs.def). */
#define CMP_EVENT(NAME, member, code, body)                                    \
	_Static_assert((int)CMC_EVENT_##NAME == (int)CMP_EVENT_##NAME,         \
		       "CMC_EVENT_" #NAME);
#define CMP_EVENT_ALIAS(NAME, member, code, body)                              \
	CMP_EVENT(NAME, member, code, body)
#define CMP_EVENT_EMPTY(NAME, code) CMP_EVENT(NAME, none, code, none)
#include "cmp_msgs.def"
_Static_assert((int)CMC_EVENT_ROUTE_RESOLVED == (int)CMP_EVENT_MAX &&
		       (int)CMC_STATE_SIDR_REQ_RCVD == (int)CMP_STATE_MAX &&
		       (int)CMC_QP_UD == (int)CMP_QP_TYPE_UD &&
		       (int)CMC_AF_LID == (int)CMP_AF_LID &&
		       (int)CMC_SEL_GID == (int)CMP_SEL_GID &&
		       (int)CMC_PATH_LOCAL_ACK_TIMEOUT ==
			       (int)CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT &&
		       (int)CMC_COUNTERS_CLIENT ==
			       (int)CMP_COUNTER_SCOPE_CLIENT &&
		       (int)CMC_LINK_ROCE == (int)CMP_LINK_LAYER_ROCE &&
		       (int)CMC_LINK_ROCE == (int)IBV_LINK_LAYER_ETHERNET &&
		       (int)CMC_GID_ROCE_V2 == (int)CMP_GID_TYPE_ROCE_V2 &&
		       (int)IBV_PORT_ACTIVE_DEFER ==
			       (int)CMP_PORT_STATE_ACTIVE_DEFER &&
		       (int)IBV_MTU_4096 == (int)CM_MTU_4096,
	       "public enums are the protocol's numbers");
/* One public number that is the protocol's. */
#define CMC_SAME_NUM(pub, wire)                                                \
	_Static_assert((int)(pub) == (int)(wire), #pub " is " #wire)
/* The path override flags are copied as one mask. */
CMC_SAME_NUM(CMC_PATH_MTU, CMP_PATH_FLAG_MTU);
CMC_SAME_NUM(CMC_PATH_PKEY, CMP_PATH_FLAG_PKEY);
CMC_SAME_NUM(CMC_PATH_SL, CMP_PATH_FLAG_SL);
CMC_SAME_NUM(CMC_PATH_TRAFFIC_CLASS, CMP_PATH_FLAG_TRAFFIC_CLASS);
CMC_SAME_NUM(CMC_PATH_HOP_LIMIT, CMP_PATH_FLAG_HOP_LIMIT);
CMC_SAME_NUM(CMC_PATH_FLOW_LABEL, CMP_PATH_FLAG_FLOW_LABEL);
CMC_SAME_NUM(CMC_PATH_PACKET_RATE, CMP_PATH_FLAG_PACKET_RATE);
CMC_SAME_NUM(CMC_PATH_LOCAL_ACK_TIMEOUT, CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT);
/* The CM message an event names is copied as a number. */
CMC_SAME_NUM(CMC_CM_MSG_SIDR_REP, CMP_CM_MSG_SIDR_REP);
/* A REQUEST_ERROR's request is the failed request's type. */
#define CMC_REQ_IS(NAME) CMC_SAME_NUM(CMC_REQ_##NAME, CMP_TYPE_##NAME)
CMC_REQ_IS(DESTROY_ID);
CMC_REQ_IS(SET_CONTEXT);
CMC_REQ_IS(CONNECT);
CMC_REQ_IS(ACCEPT);
CMC_REQ_IS(REJECT);
CMC_REQ_IS(RTU);
CMC_REQ_IS(NOTIFY_ESTABLISHED);
CMC_REQ_IS(MRA);
CMC_REQ_IS(DISCONNECT);
CMC_REQ_IS(LAP);
CMC_REQ_IS(APR);
CMC_REQ_IS(SIDR_REP);
CMC_REQ_IS(ACK_EVENT);
#undef CMC_REQ_IS
#undef CMC_SAME_NUM

/* One event, from the moment it is read until it is acked. */
struct cmc_ev_item {
	struct cmc_event ev;
	struct cmc_channel *ch;
	uint32_t seq; /* the id's event sequence number, for ACK_EVENT */
	/* The daemon's state of the id after the event (not for local). */
	uint8_t state, lap_state;
	bool queued;
	/* Made by the library (REQUEST_ERROR): acked without the daemon. */
	bool local;
	/* The daemon has it acknowledged already: a request answering it
	 * carried CMP_HDR_ACK (cmc_answer()), so cmc_ack_event() only
	 * frees it. */
	bool acked;
	struct cmc_ev_item *prev, *next; /* in the channel's queue */
};

struct cmc_id {
	struct cmc_channel *ch;
	uint32_t num;
	void *context;
	/* One for the application's handle, one per event naming it. */
	unsigned int refs;
	/* Destroyed (or its channel closed): the handle is gone. */
	bool dead;
	/* DESTROY_ID is in flight: events read meanwhile are dropped. */
	bool destroying;
	/*
	 * Asynchronous mode: num is 0 until the daemon has an id for it
	 * ("unborn"); creating says its CONNECT, which creates it, awaits
	 * the reply. Such an id is on the channel's unborn list, not in the
	 * table: no event can name it before that reply.
	 */
	bool creating;
	struct cmc_id *uprev, *unext;
	/* The negotiated values, for the QP helpers; path_ok says whether
	 * info.path is loaded. */
	bool path_ok;
	struct cmc_path lap_path; /* proposed by cmc_lap() or a LAP */
	struct cmc_id_info info;
	/* Passive: RTR came before ACCEPT, so the RQ PSN in info.local_psn
	 * was chosen then and is what the REP must announce. */
	bool psn_fixed;
	struct hnode hnode; /* in ch->ids, once numbered */
	/* Queued events naming it (as id or listen_id): purge skips the
	 * queue walk when 0. */
	unsigned int nq;
	/*
	 * held: the daemon's event of this id the application holds (taken,
	 * not yet acked). parked: the id's next event, read while held was
	 * acked early (CMP_HDR_ACK) but not yet by the application; it
	 * joins the queue when the application acks held, so that the
	 * application still never holds two events of one id (lesson 2).
	 */
	struct cmc_ev_item *held, *parked;
};

/* A request sent without NOREPLY, waiting for its reply. */
struct cmc_pend {
	uint32_t seq;
	uint8_t type;
	/* The library's own request (SESSION after a resume): its reply is
	 * the library's, not a blocking caller's. */
	bool own;
	/* A CONNECT creating this id (which it holds); NULL for a blocking
	 * request, whose reply goes to ch->reply. */
	struct cmc_id *id;
};

/*
 * The link to the daemon (cmc_resume.c). Only a channel with a session
 * leaves UP; without one, losing the socket is the channel's death.
 */
enum cmc_link {
	CMC_LINK_UP, /* sock is the daemon's, both ways */
	/* Our sends fail (the daemon shut its reading side to restart):
	 * sock is read to its EOF, and nothing is sent. */
	CMC_LINK_DRAIN,
	/* No socket: the next connection attempt is at next_try. */
	CMC_LINK_WAIT,
	/* sock is a new connection; HELLO and RESUME, sent on it, await
	 * their replies. */
	CMC_LINK_RESUME,
};

/* cmc_out_send()'s waits. */
#define CMC_WAIT_ROOM 0x1u /* for room in a full socket */
#define CMC_WAIT_LINK 0x2u /* through a daemon restart, until resumed */

struct cmc_channel {
	int sock;
	int epfd;
	int evfd;
	/* A timerfd in epfd, while the channel has a session: armed while
	 * the link is down, for the next attempt or the window's end. */
	int tfd;
	enum cmc_link link;
	/* Where the daemon listens (peer_len 0: unknown, no session). */
	struct sockaddr_un peer;
	socklen_t peer_len;
	/* The session (SESSION): resume_ms 0 means none. */
	uint8_t token[CMP_TOKEN_SIZE];
	uint32_t resume_ms;
	unsigned int resumes; /* sessions taken up again (RESUME) */
	/* Since the link was lost; the next attempt; its delay after that;
	 * the handshake's sequence numbers and how far it got. */
	int64_t lost_at, next_try;
	int backoff_ms;
	uint32_t hello_seq, resume_seq;
	bool hello_done;
	bool peer_reset; /* DRAIN read a reset (cmc_lost()) */
	char name[CMP_CLIENT_NAME_SIZE]; /* as HELLO gave it, for the next */
	bool evfd_armed;
	bool closed;
	bool async;
	bool flushing;
	/* Sticky: once set, every call needing the daemon returns it. */
	int err;
	/* One for the open channel, one per event not yet freed. */
	unsigned int refs;
	uint32_t seq;
	uint16_t version;
	int req_timeout;
	struct cmc_daemon_info dinfo;
	/* Events read and not yet returned, oldest first. */
	struct cmc_ev_item *head, *tail;
	unsigned int nqueued;
	/* Acked items kept for reuse; none once closed. */
	struct spare spare;
	unsigned long dropped; /* events of destroyed or unknown ids */
	struct htable ids; /* numbered ids, by number */
	struct cmc_id *unborn; /* ids without a daemon id yet */
	/* Output queue: encoded requests back to back in obuf; oend[i] is
	 * where the i-th ends. osent of the nout are sent. */
	uint8_t *obuf;
	size_t olen, ocap;
	size_t *oend;
	unsigned int nout, osent, oendcap;
	uint64_t queued_total; /* requests ever queued (cmc_answer()) */
	/* Requests waiting for their reply, oldest first (a ring). */
	struct cmc_pend *pend;
	unsigned int phead, npend, pcap;
	/* The last request sent with NOREPLY and the last one answered:
	 * an out-of-turn failure must lie between them. */
	uint32_t last_noreply, last_answered;
	/* The reply to the blocking request, once it came. */
	bool reply_ready;
	struct cmp_msg reply;
	struct cmp_msg tx;
	struct cmp_msg rx;
	uint8_t (*rbuf)[CMP_MSG_MAX + 1]; /* CMC_RX_BATCH of them */
};

/* The functions the files share. */
int64_t cmc_now_ms(void);
int64_t cmc_deadline(int timeout_ms);
int cmc_remaining(int64_t deadline);
struct cmc_id *cmc_id_lookup(struct cmc_channel *ch, uint32_t num);
int cmc_id_link(struct cmc_channel *ch, struct cmc_id *id);
struct cmc_id *cmc_id_alloc(struct cmc_channel *ch, uint32_t num, void *context,
			    uint8_t qp_type);
struct cmc_id *cmc_id_new(struct cmc_channel *ch, uint32_t num, void *context,
			  uint8_t qp_type);
void cmc_unborn_add(struct cmc_channel *ch, struct cmc_id *id);
void cmc_unborn_del(struct cmc_channel *ch, struct cmc_id *id);
int cmc_id_set_num(struct cmc_channel *ch, struct cmc_id *id, uint32_t num);
void cmc_id_put(struct cmc_id *id);
void cmc_id_unlink(struct cmc_id *id);
void cmc_ch_put(struct cmc_channel *ch);
int cmc_fail(struct cmc_channel *ch, int err);
/*
 * Record why a call fails (cmc_last_error()) and return err. cmc_why_clear()
 * starts a request from no reason; cmc_why_reply() takes a failed
 * reply's reason.
 */
int cmc_refuse(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cmc_why_clear(void);
void cmc_why_reply(const struct cmp_msg *reply);
void cmc_queue_signal(struct cmc_channel *ch);
struct cmc_ev_item *cmc_item_new(struct cmc_channel *ch);
void cmc_item_free(struct cmc_ev_item *it);
void cmc_spare_free(struct cmc_channel *ch);
void cmc_dequeue(struct cmc_channel *ch, struct cmc_ev_item *it);
void cmc_purge_id(struct cmc_channel *ch, struct cmc_id *id);
void cmc_id_learn(struct cmc_id *id, const struct cmc_ev_item *it);
void cmc_enqueue(struct cmc_channel *ch, struct cmc_ev_item *it);
void cmc_release_held(struct cmc_id *id, struct cmc_ev_item *it);
void cmc_drop_parked(struct cmc_id *id);
int cmc_on_event(struct cmc_channel *ch);
int cmc_request_error(struct cmc_channel *ch, struct cmc_id *id,
		      unsigned int request, int status);
bool cmc_seq_after(uint32_t a, uint32_t b);
uint32_t cmc_next_seq(struct cmc_channel *ch);
int cmc_out_add(struct cmc_channel *ch, const struct cmp_msg *m);
int cmc_out_noreply(struct cmc_channel *ch, struct cmp_msg *m);
int cmc_out_send(struct cmc_channel *ch, unsigned int wait, int64_t deadline);
int cmc_out_flush(struct cmc_channel *ch);
int cmc_pend_reserve(struct cmc_channel *ch);
void cmc_pend_push(struct cmc_channel *ch, uint32_t seq, uint8_t type,
		   struct cmc_id *id);
int cmc_poll(struct cmc_channel *ch, bool out, int64_t deadline);
int cmc_on_created(struct cmc_channel *ch, struct cmc_id *id);
int cmc_on_reply(struct cmc_channel *ch);
int cmc_rx_one(struct cmc_channel *ch, const uint8_t *buf, size_t len);
int cmc_rx(struct cmc_channel *ch);
int cmc_wait_rx(struct cmc_channel *ch, int64_t deadline);
struct cmp_msg *cmc_req(struct cmc_channel *ch, enum cmp_type type);
int cmc_send_waited(struct cmc_channel *ch, struct cmc_id *id);
int cmc_request(struct cmc_channel *ch);
int cmc_call(struct cmc_channel *ch);
int cmc_answer(struct cmc_id *id);
int cmc_id_ok(const struct cmc_id *id);
int cmc_wait_created(struct cmc_id *id);
int cmc_id_birth(struct cmc_id *id);
int cmc_id_use(struct cmc_id *id);

/* cmc_resume.c: the session, and the link across a daemon restart. */
enum cmc_loss {
	CMC_LOST_SEND, /* a send failed: the daemon's reading side is shut */
	CMC_LOST_RESET, /* a read failed: the daemon closed, data may remain */
	CMC_LOST_EOF, /* the socket's end: everything the daemon wrote is read */
};
int cmc_session_open(struct cmc_channel *ch);
int cmc_lost(struct cmc_channel *ch, enum cmc_loss how);
int cmc_link_step(struct cmc_channel *ch);
void cmc_drain_check(struct cmc_channel *ch);
int cmc_on_session(struct cmc_channel *ch);

/*
 * cmc_conv.c: the one place where public structs and the protocol's meet,
 * one function per type, member by member. Going out (to_cmp) they check
 * what only the library can (lengths, reserved space zero) and return 0
 * or -EINVAL; coming in (from_cmp) they fill every member, bounding
 * arrays and private data by both sides' sizes.
 */
int cmc_data(uint8_t *dst, size_t max, uint8_t *lenp, const void *src,
	     uint8_t len);
int cmc_port_sel_to_cmp(struct cmp_port_sel *dst,
			const struct cmc_port_sel *src);
int cmc_addr_to_cmp(struct cmp_addr *dst, const struct cmc_addr *src);
int cmc_path_to_cmp(struct cmp_path *dst, const struct cmc_path *src);
int cmc_conn_param_to_cmp(struct cmp_connect *dst,
			  const struct cmc_conn_param *src);
int cmc_accept_param_to_cmp(struct cmp_accept *dst,
			    const struct cmc_accept_param *src);
int cmc_sidr_param_to_cmp(struct cmp_sidr_req *dst,
			  const struct cmc_sidr_param *src);
int cmc_route_param_to_cmp(struct cmp_resolve_route *dst,
			   const struct cmc_route_param *src);
void cmc_path_from_cmp(struct cmc_path *dst, const struct cmp_path *src);
void cmc_event_from_cmp(struct cmc_event *dst, const struct cmp_event *src);
void cmc_id_info_from_cmp(struct cmc_id_info *dst,
			  const struct cmp_id_info *src);
void cmc_list_entry_from_cmp(struct cmc_list_entry *dst,
			     const struct cmp_list_entry *src);
void cmc_counter_from_cmp(struct cmc_counter *dst,
			  const struct cmp_counter *src);
void cmc_port_info_from_cmp(struct cmc_port_info *dst,
			    const struct cmp_port_entry *src);
void cmc_path_entry_from_cmp(struct cmc_path_entry *dst,
			     const struct cmp_path_entry *src);
void cmc_daemon_info_from_cmp(struct cmc_daemon_info *dst,
			      const struct cmp_hello_reply *src);
void cmc_ch_release_fds(struct cmc_channel *ch);
int cmc_hello(struct cmc_channel *ch, const char *name);
struct cmc_ev_item *cmc_queue_take(struct cmc_channel *ch,
				   const struct cmc_id *id);
int cmc_wait_event(struct cmc_channel *ch, const struct cmc_id *id,
		   struct cmc_event **evp, int timeout_ms);
int cmc_info_for(struct cmc_id *id);
int cmc_ps(enum cmc_rdma_ps ps, enum rdmacm_ps *out);
bool cmc_gid_ll(const uint8_t *g);
bool cmc_gid_zero(const uint8_t *g);
bool cmc_port_allowed(const struct cmc_port_info *pi,
		      const struct cmc_port_sel *sel);
int cmc_pick_sgid(struct cmc_channel *ch, const uint8_t *dgid,
		  const struct cmc_port_sel *sel, uint8_t *sgid);
uint16_t cmc_ephemeral_port(void);
int cmc_sa_port(const struct sockaddr *sa, uint16_t *port);
void cmc_sa_from_gid(struct sockaddr_storage *ss, int af, const uint8_t *gid,
		     uint16_t port);

#endif
