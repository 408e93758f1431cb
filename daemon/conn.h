/* SPDX-License-Identifier: MIT */
/*
 * Internal types of the CM engine, shared by its files and its tests. Not
 * for use outside daemon/ and tests/engine/.
 */
#ifndef CMD_CONN_H
#define CMD_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "cm_engine.h"
#include "cm_mad.h"
#include "hash.h"
#include "spare.h"

enum conn_event {
	CONN_EV_API_LISTEN,
	CONN_EV_API_CONNECT,
	CONN_EV_API_ACCEPT,
	CONN_EV_API_REJECT,
	CONN_EV_API_RTU,
	CONN_EV_API_MRA,
	CONN_EV_API_DISCONNECT,
	CONN_EV_API_LAP,
	CONN_EV_API_APR,
	CONN_EV_API_SIDR_REQ,
	CONN_EV_API_SIDR_REP,
	CONN_EV_API_ESTABLISH,
	CONN_EV_API_DESTROY, /* the last API event (conn_event_is_api) */
	CONN_EV_RX_REQ_NEW,
	CONN_EV_RX_REQ_HOLD,
	CONN_EV_RX_REQ,
	CONN_EV_RX_MRA_REQ,
	CONN_EV_RX_MRA_REP,
	CONN_EV_RX_MRA_LAP,
	CONN_EV_RX_REJ,
	CONN_EV_RX_REJ_STALE,
	CONN_EV_RX_REP,
	CONN_EV_RX_REP_STALE,
	CONN_EV_RX_RTU,
	CONN_EV_RX_DREQ,
	CONN_EV_RX_DREP,
	CONN_EV_RX_LAP,
	CONN_EV_RX_APR,
	CONN_EV_RX_SIDR_REQ_NEW,
	CONN_EV_RX_SIDR_REQ,
	CONN_EV_RX_SIDR_REP,
	CONN_EV_STALE,
	CONN_EV_TIMEOUT,
	CONN_EV_TIMEOUT_LAST,
	CONN_EV_MRA_DUE,
	CONN_EV_TIMEWAIT_DONE,
	CONN_EV_PORT_DOWN, /* our port went down (eng_port_down) */
	CONN_EV_UNREACHABLE, /* the message we wait on never left
				(eng_send_done with an error) */
	CONN_EV_LISTENER_GONE, /* a held REQ's listener was destroyed
				  (listen_stop) */
	CONN_EV_DEVICE_GONE, /* our port's device went away
				(eng_device_removed) */
	CONN_EV__COUNT,
};

const char *conn_event_name(enum conn_event ev);

enum conn_timer {
	CONN_TIMER_NONE,
	CONN_TIMER_RETRANSMIT,
	CONN_TIMER_MRA_DUE,
	CONN_TIMER_TIMEWAIT,
};

struct evq_item {
	STAILQ_ENTRY(evq_item) link;
	struct eng_event ev;
};

/* Acked items an engine keeps for reuse (evq.c): about 370 KiB at most. */
#define EVQ_SPARE_MAX 1024

struct evq {
	STAILQ_HEAD(, evq_item) items;
	bool unacked; /* the head has been delivered, not yet acked */
	/*
	 * While a table cell's action runs (conn_event): the state its
	 * transition leads to, which the events it pushes carry; else
	 * ENG_STATE__COUNT (an event pushed then carries the state as is).
	 */
	uint8_t next_state;
};

struct listener;

/*
 * The last message a record sent, kept for retransmissions and for the
 * answers duplicates get (IBTA 12.9.7). Kept as the bytes of its struct
 * cm_msg up to the last one that is not zero (the rest is zero again when
 * it is read back, so it comes back bit for bit): an RTU, DREQ, DREP, MRA
 * or a REP without private data fits in the record itself; a longer one
 * (a REQ, private data) takes a whole struct cm_msg block of the engine's
 * spare list (conn_msg.c). 'type' is the message's, whatever its length;
 * a record that sent nothing has len 0 and type 0.
 */
#define CONN_LAST_INLINE 72
/* len of a message kept in a block rather than inline. */
#define CONN_LAST_BLOCK 0xff
/* Full-size blocks the engine keeps for reuse: 296 KiB at most. */
#define CONN_LAST_SPARE_MAX 1024

struct conn_last {
	union {
		uint8_t bytes[CONN_LAST_INLINE];
		struct cm_msg *block; /* len == CONN_LAST_BLOCK */
	};
	uint8_t len;
	uint8_t type; /* enum cm_msg_type */
};

/*
 * Ordered by alignment, with the small fields packed together: a million
 * of these make the daemon's memory (docs/PERFORMANCE.md).
 */
struct conn {
	struct eng *eng;
	uint64_t
		remote_guid; /* remote CA GUID; for SIDR a key of the address */
	uint64_t service_id;
	uint64_t tid; /* the MAD transaction id of this connection */
	uint64_t owner;
	uint64_t context;
	uint64_t rtx_ns; /* retransmission timeout */
	uint64_t peer_wait_ns; /* how long the peer waits for our answer */
	uint64_t deadline;

	struct listener *lis; /* LISTEN: our listener; passive: its origin */
	TAILQ_ENTRY(conn) lis_link; /* in lis->held or lis->credited */
	LIST_ENTRY(conn) all_link;

	struct hnode h_local; /* in eng->by_local, by_rid, by_rqpn */
	struct hnode h_rid;
	struct hnode h_rqpn;

	struct evq evq;
	struct cm_msg *held_req; /* the REQ of a held record */

	struct eng_addr addr; /* the peer's CM, and our port */
	struct eng_terms terms; /* what its messages negotiated */
	uint32_t local_id;
	uint32_t remote_id;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t heap_idx; /* in eng->heap, while timer is not NONE */

	enum eng_state state : 8;
	enum eng_lap_state lap : 8;
	enum conn_timer timer : 8;
	uint8_t plt; /* packet life time exponent */
	uint8_t ack_delay; /* peer's target ACK delay exponent, for timewait */
	uint8_t retries_left;
	uint8_t max_retries;
	uint8_t lap_mra_timeout; /* service timeout of our MRA for a LAP */
	bool active : 1; /* we sent the REQ */
	bool destroyed : 1; /* no owner any more: finish the protocol silently */
	bool held : 1; /* REQ held for want of a listener credit */
	bool credit : 1; /* holds one credit of 'lis' */
	bool in_remote_id : 1; /* linked in the (remote id, GUID) table */
	bool in_remote_qpn : 1;
	/*
	 * 'last' was deferred by the transport (its destination being
	 * resolved) and has not left yet: its retransmission waits, and its
	 * timer restarts when it leaves (eng_send_done).
	 */
	bool last_deferred : 1;

	struct conn_last last; /* last message sent */
};

TAILQ_HEAD(conn_tailq, conn);

struct listener {
	struct conn *conn;
	uint64_t service_id;
	uint64_t mask;
	struct eng_listen_sel sel;
	unsigned int backlog;
	unsigned int used; /* credits taken */
	unsigned int nheld;
	struct conn_tailq held;
	struct conn_tailq credited;
	struct hnode h_exact; /* in the table of exact listeners */
	LIST_ENTRY(listener) mlink; /* masked list */
	uint64_t delivered, held_total, rejected_backlog;
};

struct ltab {
	/* By service id, for an all-ones mask; listeners of one service id
	 * on disjoint selectors share a chain. */
	struct htable exact;
	LIST_HEAD(, listener) masked;
};

struct eng_port {
	bool valid;
	bool roce;
	uint64_t ca_guid;
	struct eng_port_counters cnt;
};

struct eng {
	struct eng_ops ops;
	void *ctx;
	struct eng_config cfg;
	struct eng_counters cnt;
	uint64_t unexpected[ENG_STATE__COUNT][CONN_EV__COUNT];
	uint64_t hits[ENG_STATE__COUNT][CONN_EV__COUNT]; /* table coverage */
	struct eng_port ports[ENG_MAX_PORTS];

	struct htable by_local;
	struct htable by_rid;
	struct htable by_rqpn;
	struct ltab listeners;
	LIST_HEAD(, conn) all;
	size_t nconn;

	struct conn **heap;
	size_t heap_n, heap_cap;

	/* Acked event items kept for reuse (evq.c), at most EVQ_SPARE_MAX. */
	struct spare evq_spare;
	/* Blocks of long last messages (conn_msg.c), CONN_LAST_SPARE_MAX. */
	struct spare last_spare;

	uint32_t id_next; /* comm ids: a counter ... */
	uint32_t id_key[4]; /* ... through a keyed permutation */

	bool busy; /* inside a callback */
};

/* What an event carries into its action. */
struct conn_ctx {
	uint64_t now;
	enum conn_event ev; /* set by conn_event() for the action */
	const struct cm_msg *msg; /* RX_* */
	const struct eng_addr *from; /* RX_* */
	struct conn *other; /* RX_*_STALE: the older record */
	/* API arguments. */
	struct eng_connect_param *connect;
	struct cm_rep *rep;
	const struct cm_rej *rej;
	const struct cm_rtu *rtu;
	const struct cm_lap *lap;
	const struct cm_sidr_rep *sidr_rep;
	const struct eng_sidr_param *sidr;
	struct listener *lis;
	uint64_t service_id; /* API_LISTEN */
	uint64_t mask;
	unsigned int backlog;
	const struct eng_listen_sel *sel; /* NULL: any port */
	const uint8_t *pd;
	size_t pd_len;
	const uint8_t *info; /* API_APR's additional information */
	size_t info_len;
	uint8_t u8; /* MRA service timeout, APR status */
	int err; /* UNREACHABLE: why the message could not leave */
	/* A timer the action wants once it succeeded. */
	enum conn_timer arm;
	uint64_t arm_at;
};

/* The LAP sub-state an id in state s reports: it has none outside
 * ESTABLISHED (IBTA 12.8). */
static inline enum eng_lap_state conn_lap_in(const struct conn *c,
					     enum eng_state s)
{
	return s == ENG_STATE_ESTABLISHED ? c->lap : ENG_LAP_IDLE;
}

/* conn.c */
int conn_event(struct conn *c, enum conn_event ev, struct conn_ctx *x);
struct conn *conn_new(struct eng *eng);
/* The engine's random source (eng_ops.random). */
static inline uint32_t conn_random(struct eng *eng)
{
	return eng->ops.random(eng->ctx);
}

/* conn_rec.c */
/* The comm id generator and the spare list of last-message blocks. */
void conn_rec_init(struct eng *eng);
void conn_rec_fini(struct eng *eng);
void conn_free(struct conn *c);
void conn_reap(struct conn *c);
uint64_t conn_exp_ns(uint8_t exponent);
int conn_table_cells(void);
bool conn_table_cell(enum eng_state s, enum conn_event ev);

/* conn_msg.c */
void conn_send(struct conn *c, const struct cm_msg *msg, bool remember);
/*
 * Record what a REQ, REP, SIDR_REQ or SIDR_REP tells about c (c->terms):
 * one we send (conn_send) or one a table cell took (conn_event, for the
 * events conn_event_learns names). Other messages tell nothing new.
 */
void conn_learn(struct conn *c, const struct cm_msg *m, bool sent);
static inline bool conn_event_learns(enum conn_event ev)
{
	return ev == CONN_EV_RX_REQ_NEW || ev == CONN_EV_RX_REQ_HOLD ||
	       ev == CONN_EV_RX_REP || ev == CONN_EV_RX_SIDR_REQ_NEW ||
	       ev == CONN_EV_RX_SIDR_REP;
}
void conn_resend_last(struct conn *c);
/* c->last := m (a copy, m may be gone after). */
void conn_last_set(struct conn *c, const struct cm_msg *m);
/* *m := c->last (all zero, of type 0, if nothing was sent). */
void conn_last_get(const struct conn *c, struct cm_msg *m);
/* Gives back the block c->last may hold. */
void conn_last_drop(struct conn *c);
void conn_build_rej(const struct conn *c, struct cm_msg *m,
		    enum cm_rej_reason reason, enum cm_msg_ref ref);
void conn_build_mra(const struct conn *c, struct cm_msg *m, enum cm_msg_ref ref,
		    uint8_t service_timeout, const uint8_t *pd, size_t pd_len);
void conn_build_rtu(const struct conn *c, struct cm_msg *m);
void conn_build_dreq(const struct conn *c, struct cm_msg *m, const uint8_t *pd,
		     size_t pd_len);
void conn_build_drep(const struct conn *c, struct cm_msg *m, const uint8_t *pd,
		     size_t pd_len);
int eng_send_raw(struct eng *eng, const struct cm_msg *msg,
		 const struct eng_addr *to);

/* conn_table.c */
/* The three tables of eng: 0 or -ENOMEM (then none is left). */
int ctab_init(struct eng *eng);
void ctab_fini(struct eng *eng);
struct conn *ctab_local_find(const struct htable *t, uint32_t id);
void ctab_local_add(struct htable *t, struct conn *c);
void ctab_local_del(struct htable *t, struct conn *c);
struct conn *ctab_rid_find(const struct htable *t, uint32_t rid, uint64_t guid);
struct conn *ctab_rqpn_find(const struct htable *t, uint32_t qpn,
			    uint64_t guid);
void conn_remote_link(struct conn *c, bool qpn);
uint64_t conn_addr_key(const struct eng_addr *a);
void conn_remote_unlink(struct conn *c);

/* timer.c */
void timer_arm(struct conn *c, enum conn_timer kind, uint64_t at);
void timer_cancel(struct conn *c);
struct conn *timer_pop_due(struct eng *eng, uint64_t now,
			   enum conn_timer *kind);
uint64_t timer_next(const struct eng *eng);

/* listen.c */
int listen_start(struct conn *c, uint64_t service_id, uint64_t mask,
		 unsigned int backlog, const struct eng_listen_sel *sel);
void listen_stop(struct conn *c, uint64_t now);
/*
 * The listener a request for service_id takes, from local port 'port',
 * sent to our GID 'gid' (all zero: not known), or NULL.
 */
struct listener *listen_find(const struct eng *eng, uint64_t service_id,
			     uint16_t port, const uint8_t gid[CM_GID_SIZE]);
bool listen_has_credit(const struct listener *l);
bool listen_take_credit(struct listener *l, struct conn *c);
void listen_hold(struct listener *l, struct conn *c);
void listen_release(struct conn *c, uint64_t now);
int ltab_init(struct ltab *t);
void ltab_fini(struct ltab *t);

/* evq.c */
void evq_push(struct conn *c, enum eng_event_type type, int status,
	      const struct cm_msg *msg);
int evq_ack(struct conn *c);
void evq_clear(struct conn *c);
void evq_init(struct eng *eng);
/* Frees the spare items; the engine's records are gone already. */
void evq_fini(struct eng *eng);

/* counters.c */
void cnt_sent(struct eng *eng, uint16_t port, enum cm_msg_type t);
void cnt_received(struct eng *eng, uint16_t port, enum cm_msg_type t);
void cnt_retransmitted(struct eng *eng, uint16_t port, enum cm_msg_type t);
/* port: the one the MAD came in on. */
void cnt_duplicate(struct eng *eng, uint16_t port, enum cm_msg_type t);
void cnt_unexpected(struct eng *eng, uint16_t port, enum cm_msg_type t);

/* rx.c */
void rx_dispatch(struct eng *eng, const struct eng_addr *from,
		 const struct cm_msg *msg, uint64_t now);

#endif
