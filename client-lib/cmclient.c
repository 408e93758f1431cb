/* SPDX-License-Identifier: MIT */
/*
 * libcmclient: channel, ids, requests and events over the cmd daemon's
 * socket (proto/cmp.h is the contract; cmclient.h the public API).
 *
 * The shape of it: one non-blocking SOCK_SEQPACKET socket. Requests are
 * encoded into an output queue and leave in batches (sendmmsg); a blocking
 * request is queued, the queue flushed, and the socket read until its
 * reply comes. The socket is read in batches too (recvmmsg), and every
 * datagram read is processed before the library returns: events are
 * queued, replies answer the oldest request still waiting for one (a FIFO
 * of them, since the daemon answers in order), and an out-of-turn reply
 * can only be the failure of a request sent with CMP_HDR_NOREPLY in
 * asynchronous mode, which becomes a library-made REQUEST_ERROR event.
 * Events live in one FIFO, so cmc_get_event() and cmc_get_event_id() can
 * take from it in any order without reordering what stays. Anything the
 * daemon sends that the contract does not allow kills the channel with a
 * sticky error, because after one bad datagram no later reply can be
 * trusted to answer the request it seems to answer.
 *
 * What the library knows of an id's state (for the QP helpers) is learnt
 * from an event when the application takes it, not when it is read: a
 * batch read for a blocking request may hold the id's next event right
 * behind the reply, and the call's own update must come first.
 *
 * Lifetimes are reference counts so that "ack after destroy" and "ack
 * after close" are harmless: an event holds its id, its listener and its
 * channel; an id holds nothing. An acked event's item is kept by its
 * channel for the next event read (a bounded spare list, so a busy
 * application allocates nothing per event) while the channel is open; an
 * item acked after cmc_close() is freed, and close frees the spares.
 */
#include "cmclient.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cm_mad.h"
#include "cmp.h"
#include "rdmacm.h"
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
 * about 420 bytes, so a channel keeps at most about 105 KiB.
 */
#define CMC_SPARE_MAX (8 * CMC_RX_BATCH)

/*
 * The public event bodies and info structs are the wire layout under
 * public names, so they are copied whole; these pin that they stay so.
 */
#define CMC_SAME(pub, wire)                                                    \
	_Static_assert(sizeof(struct pub) == sizeof(struct wire),              \
		       #pub " matches " #wire)
#define CMC_SAME_OFF(pub, pm, wire, wm)                                        \
	_Static_assert(offsetof(struct pub, pm) == offsetof(struct wire, wm),  \
		       #pub "." #pm " matches " #wire)
CMC_SAME(cmc_path, cmp_path);
CMC_SAME_OFF(cmc_path, port_num, cmp_path, port_num);
CMC_SAME_OFF(cmc_path, local_ack_timeout, cmp_path, local_ack_timeout);
CMC_SAME_OFF(cmc_path, packet_life_time, cmp_path, packet_life_time);
CMC_SAME_OFF(cmc_path, local_gid, cmp_path, local_gid);
CMC_SAME_OFF(cmc_path, dev_name, cmp_path, dev_name);
CMC_SAME(cmc_ev_req, cmp_ev_req);
CMC_SAME_OFF(cmc_ev_req, qp_type, cmp_ev_req, qp_type);
CMC_SAME_OFF(cmc_ev_req, private_data_len, cmp_ev_req, private_data_len);
CMC_SAME_OFF(cmc_ev_req, path, cmp_ev_req, path);
CMC_SAME_OFF(cmc_ev_req, private_data, cmp_ev_req, private_data);
CMC_SAME(cmc_ev_rep, cmp_ev_rep);
CMC_SAME_OFF(cmc_ev_rep, srq, cmp_ev_rep, srq);
CMC_SAME_OFF(cmc_ev_rep, path, cmp_ev_rep, path);
CMC_SAME_OFF(cmc_ev_rep, private_data, cmp_ev_rep, private_data);
CMC_SAME(cmc_ev_established, cmp_ev_established);
CMC_SAME(cmc_ev_rej, cmp_ev_rej);
CMC_SAME_OFF(cmc_ev_rej, ari, cmp_ev_rej, ari);
CMC_SAME_OFF(cmc_ev_rej, private_data, cmp_ev_rej, private_data);
CMC_SAME(cmc_ev_connect_error, cmp_ev_connect_error);
CMC_SAME(cmc_ev_mra, cmp_ev_mra);
CMC_SAME_OFF(cmc_ev_mra, msg, cmp_ev_mra, msg);
CMC_SAME(cmc_ev_dreq, cmp_ev_dreq);
CMC_SAME(cmc_ev_drep, cmp_ev_drep);
CMC_SAME(cmc_ev_lap, cmp_ev_lap);
CMC_SAME_OFF(cmc_ev_lap, private_data, cmp_ev_lap, private_data);
CMC_SAME(cmc_ev_apr, cmp_ev_apr);
CMC_SAME_OFF(cmc_ev_apr, info, cmp_ev_apr, info);
CMC_SAME_OFF(cmc_ev_apr, private_data, cmp_ev_apr, private_data);
CMC_SAME(cmc_ev_sidr_req, cmp_ev_sidr_req);
CMC_SAME_OFF(cmc_ev_sidr_req, service_id, cmp_ev_sidr_req, service_id);
CMC_SAME_OFF(cmc_ev_sidr_req, path, cmp_ev_sidr_req, path);
CMC_SAME(cmc_ev_sidr_rep, cmp_ev_sidr_rep);
CMC_SAME_OFF(cmc_ev_sidr_rep, path, cmp_ev_sidr_rep, path);
CMC_SAME(cmc_ev_port, cmp_ev_port);
CMC_SAME_OFF(cmc_ev_port, dev_name, cmp_ev_port, dev_name);
CMC_SAME(cmc_id_info, cmp_id_info);
CMC_SAME_OFF(cmc_id_info, local_comm_id, cmp_id_info, local_comm_id);
CMC_SAME_OFF(cmc_id_info, held_reqs, cmp_id_info, held_reqs);
CMC_SAME_OFF(cmc_id_info, state, cmp_id_info, state);
CMC_SAME_OFF(cmc_id_info, remote_cm_response_timeout, cmp_id_info,
	     remote_cm_response_timeout);
CMC_SAME_OFF(cmc_id_info, path, cmp_id_info, path);
CMC_SAME_OFF(cmc_id_info, alt_path, cmp_id_info, alt_path);
CMC_SAME(cmc_list_entry, cmp_list_entry);
CMC_SAME_OFF(cmc_list_entry, owner_pid, cmp_list_entry, owner_pid);
CMC_SAME_OFF(cmc_list_entry, held_reqs, cmp_list_entry, held_reqs);
CMC_SAME_OFF(cmc_list_entry, remote_gid, cmp_list_entry, remote_gid);
CMC_SAME(cmc_counter, cmp_counter);
CMC_SAME(cmc_port_gid, cmp_port_gid);
CMC_SAME_OFF(cmc_port_gid, gid, cmp_port_gid, gid);
CMC_SAME(cmc_port_info, cmp_port_entry);
CMC_SAME_OFF(cmc_port_info, node_guid, cmp_port_entry, node_guid);
CMC_SAME_OFF(cmc_port_info, port_index, cmp_port_entry, port_index);
CMC_SAME_OFF(cmc_port_info, n_gids, cmp_port_entry, n_gids);
CMC_SAME_OFF(cmc_port_info, port_num, cmp_port_entry, port_num);
CMC_SAME_OFF(cmc_port_info, sm_sl, cmp_port_entry, sm_sl);
CMC_SAME_OFF(cmc_port_info, gids, cmp_port_entry, gids);
_Static_assert(sizeof(((struct cmc_event *)0)->u) ==
		       sizeof(struct cmp_ev_sidr_req),
	       "public event union as large as the largest body");
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
_Static_assert((int)CMC_EVENT_DEVICE_REMOVAL == (int)CMP_EVENT_MAX &&
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
	struct cmc_id *hnext;
	/* Queued events naming it (as id or listen_id): purge skips the
	 * queue walk when 0. */
	unsigned int nq;
};

/* A request sent without NOREPLY, waiting for its reply. */
struct cmc_pend {
	uint32_t seq;
	uint8_t type;
	/* A CONNECT creating this id (which it holds); NULL for a blocking
	 * request, whose reply goes to ch->reply. */
	struct cmc_id *id;
};

struct cmc_channel {
	int sock;
	int epfd;
	int evfd;
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
	/* Acked items kept for reuse, linked by next; none once closed. */
	struct cmc_ev_item *spare;
	unsigned int nspare;
	unsigned long dropped; /* events of destroyed or unknown ids */
	struct cmc_id **buckets;
	unsigned int nbuckets;
	unsigned int nids;
	struct cmc_id *unborn; /* ids without a daemon id yet */
	/* Output queue: encoded requests back to back in obuf; oend[i] is
	 * where the i-th ends. osent of the nout are sent. */
	uint8_t *obuf;
	size_t olen, ocap;
	size_t *oend;
	unsigned int nout, osent, oendcap;
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

/* ------------------------------------------------------------------ */
/* Time */

static int64_t cmc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t cmc_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : cmc_now_ms() + timeout_ms;
}

/* What is left of a deadline, as poll() wants it. */
static int cmc_remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - cmc_now_ms();
	if (left <= 0)
		return 0;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

/* ------------------------------------------------------------------ */
/* Ids and the id table */

static unsigned int cmc_hash(uint32_t num, unsigned int nbuckets)
{
	return (num * 2654435761u) & (nbuckets - 1);
}

static struct cmc_id *cmc_id_lookup(struct cmc_channel *ch, uint32_t num)
{
	struct cmc_id *id;

	/* Unborn ids have number 0 and are not in the table. */
	if (!ch->buckets || num == CMP_ID_NONE)
		return NULL;
	for (id = ch->buckets[cmc_hash(num, ch->nbuckets)]; id; id = id->hnext)
		if (id->num == num)
			return id;
	return NULL;
}

static int cmc_table_grow(struct cmc_channel *ch)
{
	unsigned int n = ch->nbuckets ? ch->nbuckets * 2 : 64;
	struct cmc_id **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (unsigned int i = 0; i < ch->nbuckets; i++) {
		struct cmc_id *id = ch->buckets[i], *next;

		for (; id; id = next) {
			unsigned int h = cmc_hash(id->num, n);

			next = id->hnext;
			id->hnext = b[h];
			b[h] = id;
		}
	}
	free(ch->buckets);
	ch->buckets = b;
	ch->nbuckets = n;
	return 0;
}

/* Put id, numbered now, into the table. */
static int cmc_id_link(struct cmc_channel *ch, struct cmc_id *id)
{
	unsigned int h;

	if (ch->nids >= ch->nbuckets && cmc_table_grow(ch))
		return -ENOMEM;
	h = cmc_hash(id->num, ch->nbuckets);
	id->hnext = ch->buckets[h];
	ch->buckets[h] = id;
	ch->nids++;
	return 0;
}

static struct cmc_id *cmc_id_alloc(struct cmc_channel *ch, uint32_t num,
				   void *context, uint8_t qp_type)
{
	struct cmc_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->ch = ch;
	id->num = num;
	id->context = context;
	id->refs = 1;
	id->info.id = num;
	id->info.qp_type = qp_type;
	id->info.context = (uint64_t)(uintptr_t)context;
	return id;
}

static struct cmc_id *cmc_id_new(struct cmc_channel *ch, uint32_t num,
				 void *context, uint8_t qp_type)
{
	struct cmc_id *id = cmc_id_alloc(ch, num, context, qp_type);

	if (id && cmc_id_link(ch, id)) {
		free(id);
		return NULL;
	}
	return id;
}

static void cmc_unborn_add(struct cmc_channel *ch, struct cmc_id *id)
{
	id->uprev = NULL;
	id->unext = ch->unborn;
	if (ch->unborn)
		ch->unborn->uprev = id;
	ch->unborn = id;
}

static void cmc_unborn_del(struct cmc_channel *ch, struct cmc_id *id)
{
	if (id->uprev)
		id->uprev->unext = id->unext;
	else
		ch->unborn = id->unext;
	if (id->unext)
		id->unext->uprev = id->uprev;
	id->uprev = id->unext = NULL;
}

/*
 * An unborn id got its daemon number (a CREATE_ID or CONNECT reply): put
 * it in the lookup table. -ENOMEM leaves it unborn.
 */
static int cmc_id_set_num(struct cmc_channel *ch, struct cmc_id *id,
			  uint32_t num)
{
	id->num = num;
	id->info.id = num;
	if (cmc_id_link(ch, id)) {
		id->num = id->info.id = CMP_ID_NONE;
		return -ENOMEM;
	}
	cmc_unborn_del(ch, id);
	return 0;
}

static void cmc_id_put(struct cmc_id *id)
{
	if (id && --id->refs == 0)
		free(id);
}

static void cmc_id_unlink(struct cmc_id *id)
{
	struct cmc_channel *ch = id->ch;
	struct cmc_id **pp = &ch->buckets[cmc_hash(id->num, ch->nbuckets)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == id) {
			*pp = id->hnext;
			ch->nids--;
			break;
		}
	}
	id->hnext = NULL;
}

/* ------------------------------------------------------------------ */
/* The channel's lifetime, its error and its event queue */

static void cmc_ch_put(struct cmc_channel *ch)
{
	if (--ch->refs == 0)
		free(ch);
}

static int cmc_fail(struct cmc_channel *ch, int err)
{
	if (!ch->err)
		ch->err = err;
	return ch->err;
}

/*
 * Keep the eventfd readable exactly while the queue holds events, so the
 * epoll fd the application polls is readable then too.
 */
static void cmc_queue_signal(struct cmc_channel *ch)
{
	uint64_t v = 1;
	ssize_t r;

	if (ch->nqueued && !ch->evfd_armed) {
		r = write(ch->evfd, &v, sizeof(v));
		ch->evfd_armed = r == sizeof(v);
	} else if (!ch->nqueued && ch->evfd_armed) {
		r = read(ch->evfd, &v, sizeof(v));
		(void)r;
		ch->evfd_armed = false;
	}
}

/* A zeroed item: a spare if the channel has one. */
static struct cmc_ev_item *cmc_item_new(struct cmc_channel *ch)
{
	struct cmc_ev_item *it = ch->spare;

	if (!it)
		return calloc(1, sizeof(*it));
	ch->spare = it->next;
	ch->nspare--;
	memset(it, 0, sizeof(*it));
	return it;
}

static void cmc_item_free(struct cmc_ev_item *it)
{
	struct cmc_channel *ch = it->ch;

	cmc_id_put(it->ev.id);
	cmc_id_put(it->ev.listen_id);
	/* A closed channel lives on only for its unacked events: keep
	 * nothing for it. */
	if (!ch->closed && ch->nspare < CMC_SPARE_MAX) {
		it->next = ch->spare;
		ch->spare = it;
		ch->nspare++;
	} else {
		free(it);
	}
	cmc_ch_put(ch);
}

static void cmc_spare_free(struct cmc_channel *ch)
{
	struct cmc_ev_item *it;

	while ((it = ch->spare)) {
		ch->spare = it->next;
		free(it);
	}
	ch->nspare = 0;
}

static void cmc_dequeue(struct cmc_channel *ch, struct cmc_ev_item *it)
{
	if (it->prev)
		it->prev->next = it->next;
	else
		ch->head = it->next;
	if (it->next)
		it->next->prev = it->prev;
	else
		ch->tail = it->prev;
	it->prev = it->next = NULL;
	it->queued = false;
	it->ev.id->nq--;
	if (it->ev.listen_id)
		it->ev.listen_id->nq--;
	ch->nqueued--;
	cmc_queue_signal(ch);
}

/*
 * Drop every queued event of id: destroy is final. Queued requests that
 * id listened for stay (they are new ids' events) but forget it.
 */
static void cmc_purge_id(struct cmc_channel *ch, struct cmc_id *id)
{
	struct cmc_ev_item *it, *next;

	for (it = ch->head; it && id->nq; it = next) {
		next = it->next;
		if (it->ev.listen_id == id) {
			it->ev.listen_id = NULL;
			id->nq--;
			cmc_id_put(id);
		}
		if (it->ev.id == id) {
			cmc_dequeue(ch, it);
			ch->dropped++;
			cmc_item_free(it);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Events */

/*
 * Keep what the QP helpers will need from an event, when the application
 * takes it (see the top of this file for why not earlier).
 */
/*
 * What an event tells about its id: the state the daemon's engine moved it
 * to (never inferred here: the engine's table owns it), and the facts the
 * event carries (the peer's QPN, PSN, path, ...).
 */
static void cmc_id_learn(struct cmc_id *id, const struct cmc_ev_item *it)
{
	const struct cmc_event *ev = &it->ev;
	struct cmc_id_info *in = &id->info;

	if (!it->local) {
		in->state = it->state;
		in->lap_state = it->lap_state;
	}

	switch (ev->type) {
	case CMC_EVENT_REQ_RECEIVED: {
		const struct cmc_ev_req *r = &ev->u.req;

		in->listen_id = r->listen_id;
		in->service_id = r->service_id;
		in->remote_ca_guid = r->remote_ca_guid;
		in->remote_comm_id = r->remote_comm_id;
		in->remote_qpn = r->remote_qpn;
		in->remote_psn = r->start_psn;
		/* Until ACCEPT says otherwise: what the REQ allows. */
		in->responder_resources = r->initiator_depth;
		in->initiator_depth = r->responder_resources;
		in->flow_control = r->flow_control;
		in->retry_count = r->retry_count;
		in->rnr_retry_count = r->rnr_retry_count;
		in->srq = r->srq;
		in->path = r->path;
		id->path_ok = true;
		break;
	}
	case CMC_EVENT_REP_RECEIVED: {
		const struct cmc_ev_rep *r = &ev->u.rep;

		in->remote_ca_guid = r->remote_ca_guid;
		in->remote_qpn = r->remote_qpn;
		in->remote_psn = r->start_psn;
		/* The REP's values are the peer's: its responder resources
		 * are our initiator depth, and so on (IBTA 12.7.24-25). */
		in->initiator_depth = r->responder_resources;
		in->responder_resources = r->initiator_depth;
		in->target_ack_delay = r->target_ack_delay;
		in->failover = r->failover;
		in->rnr_retry_count = r->rnr_retry_count;
		in->path = r->path;
		id->path_ok = true;
		break;
	}
	case CMC_EVENT_ESTABLISHED:
	case CMC_EVENT_REJ_RECEIVED:
	case CMC_EVENT_CONNECT_ERROR:
	case CMC_EVENT_TIMEWAIT_EXIT:
	case CMC_EVENT_DREQ_RECEIVED:
	case CMC_EVENT_DREP_RECEIVED:
	case CMC_EVENT_DISCONNECT_TIMEOUT:
		break;
	case CMC_EVENT_LAP_RECEIVED:
		id->lap_path = ev->u.lap.alt_path;
		break;
	case CMC_EVENT_APR_RECEIVED:
		if (ev->status == 0 && ev->u.apr.ap_status == 0) {
			in->alt_path = id->lap_path;
			in->has_alt_path = 1;
		}
		break;
	case CMC_EVENT_SIDR_REQ_RECEIVED:
		in->listen_id = ev->u.sidr_req.listen_id;
		in->service_id = ev->u.sidr_req.service_id;
		in->path = ev->u.sidr_req.path;
		id->path_ok = true;
		break;
	case CMC_EVENT_SIDR_REP_RECEIVED:
		in->remote_qpn = ev->u.sidr_rep.qpn;
		in->qkey = ev->u.sidr_rep.qkey;
		in->path = ev->u.sidr_rep.path;
		id->path_ok = true;
		break;
	case CMC_EVENT_REQUEST_ERROR:
		/* A refused CONNECT leaves the id idle (and unborn, if the
		 * CONNECT was to create it). Other failures leave the state
		 * as the call assumed (see cmclient.h). */
		if (ev->u.request_error.request == CMC_REQ_CONNECT)
			in->state = CMC_STATE_IDLE;
		break;
	case CMC_EVENT_MRA_RECEIVED:
	case CMC_EVENT_PORT_ERROR:
	case CMC_EVENT_DEVICE_REMOVAL:
		break;
	}
}

/* Append an event to the queue; it holds its channel and its id(s). */
static void cmc_enqueue(struct cmc_channel *ch, struct cmc_ev_item *it)
{
	it->ch = ch;
	ch->refs++;
	it->ev.id->refs++;
	it->ev.id->nq++;
	if (it->ev.listen_id) {
		it->ev.listen_id->refs++;
		it->ev.listen_id->nq++;
	}
	it->prev = ch->tail;
	if (ch->tail)
		ch->tail->next = it;
	else
		ch->head = it;
	ch->tail = it;
	it->queued = true;
	ch->nqueued++;
	cmc_queue_signal(ch);
}

/*
 * An EVENT was read: queue it, or drop it when its id is being destroyed
 * or unknown (an id destroyed before; the daemon may reuse nothing, but
 * an event racing our own destroy must vanish). A REQ_RECEIVED or
 * SIDR_REQ_RECEIVED names a new passive id, which starts here.
 */
static int cmc_on_event(struct cmc_channel *ch)
{
	const struct cmp_event *e = &ch->rx.event;
	bool first = e->type == CMP_EVENT_REQ_RECEIVED ||
		     e->type == CMP_EVENT_SIDR_REQ_RECEIVED;
	struct cmc_id *id = cmc_id_lookup(ch, e->id), *lid = NULL;
	struct cmc_ev_item *it;
	ssize_t body;

	if (first) {
		uint32_t lnum = e->type == CMP_EVENT_REQ_RECEIVED ?
					e->req_received.listen_id :
					e->sidr_req_received.listen_id;

		/* A daemon that hands out a live id twice is broken. */
		if (id || e->id == CMP_ID_NONE)
			return cmc_fail(ch, -EPROTO);
		lid = cmc_id_lookup(ch, lnum);
		if (lid && lid->destroying)
			lid = NULL;
		id = cmc_id_new(ch, e->id, (void *)(uintptr_t)e->context,
				e->type == CMP_EVENT_REQ_RECEIVED ?
					e->req_received.qp_type :
					CMC_QP_UD);
		if (!id)
			return cmc_fail(ch, -ENOMEM);
	} else if (!id || id->destroying) {
		ch->dropped++;
		return 0;
	}

	it = cmc_item_new(ch);
	if (!it)
		return cmc_fail(ch, -ENOMEM);
	body = cmp_event_body_size(e->type);
	it->seq = ch->rx.hdr.seq;
	it->ev.id = id;
	it->ev.listen_id = lid;
	it->ev.context = (void *)(uintptr_t)e->context;
	it->ev.type = (enum cmc_event_type)e->type;
	it->ev.status = e->status;
	it->state = e->state;
	it->lap_state = e->lap_state;
	if (body > 0)
		memcpy(&it->ev.u, &e->req_received, (size_t)body);
	cmc_enqueue(ch, it);
	return 0;
}

/* Tell the application that request (a NOREPLY one) on id failed. */
static int cmc_request_error(struct cmc_channel *ch, struct cmc_id *id,
			     unsigned int request, int status)
{
	struct cmc_ev_item *it = cmc_item_new(ch);

	if (!it)
		return cmc_fail(ch, -ENOMEM);
	it->local = true;
	it->ev.id = id;
	it->ev.context = id->context;
	it->ev.type = CMC_EVENT_REQUEST_ERROR;
	it->ev.status = status;
	it->ev.u.request_error.request = request;
	cmc_enqueue(ch, it);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The output queue */

/* Serial arithmetic: is a after b? */
static bool cmc_seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static uint32_t cmc_next_seq(struct cmc_channel *ch)
{
	if (++ch->seq == 0)
		ch->seq = 1;
	return ch->seq;
}

/*
 * Encode m at the end of the output queue. -EINVAL when it does not
 * encode (the caller's argument error; nothing is queued), -ENOMEM.
 */
static int cmc_out_add(struct cmc_channel *ch, const struct cmp_msg *m)
{
	ssize_t len;

	if (ch->olen + CMP_MSG_MAX > ch->ocap) {
		size_t cap = ch->ocap ? ch->ocap * 2 : 16 * CMP_MSG_MAX;
		uint8_t *b = realloc(ch->obuf, cap);

		if (!b)
			return -ENOMEM;
		ch->obuf = b;
		ch->ocap = cap;
	}
	if (ch->nout == ch->oendcap) {
		unsigned int cap = ch->oendcap ? ch->oendcap * 2 : CMC_TX_BATCH;
		size_t *e = realloc(ch->oend, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		ch->oend = e;
		ch->oendcap = cap;
	}
	len = cmp_encode(m, ch->obuf + ch->olen, CMP_MSG_MAX);
	if (len < 0)
		return -EINVAL;
	ch->olen += (size_t)len;
	ch->oend[ch->nout++] = ch->olen;
	return 0;
}

/*
 * Queue m (header version set) as a NOREPLY request: the daemon answers
 * only its failure (cmc_on_reply()).
 */
static int cmc_out_noreply(struct cmc_channel *ch, struct cmp_msg *m)
{
	int ret;

	m->hdr.seq = cmc_next_seq(ch);
	m->hdr.flags = CMP_HDR_NOREPLY;
	ret = cmc_out_add(ch, m);
	if (!ret)
		ch->last_noreply = m->hdr.seq;
	return ret;
}

static int cmc_rx(struct cmc_channel *ch);

/*
 * Send what is queued. With wait, a full socket is waited out with poll()
 * for POLLIN too, and whatever arrives meanwhile is read and processed:
 * the daemon may stop reading us while its messages to us pile up unread,
 * so only reading guarantees progress. Without wait, stop at a full
 * socket (cmc_close()'s best effort). deadline bounds a wait without
 * progress: a slow daemon that reads is not a hung one. Returns 0 or the
 * channel's error.
 */
static int cmc_out_send(struct cmc_channel *ch, bool wait, int64_t deadline)
{
	struct mmsghdr mv[CMC_TX_BATCH];
	struct iovec iov[CMC_TX_BATCH];

	/* Reading below may queue a request (cmc_on_created()); it goes out
	 * in this same loop, never in a nested flush. */
	if (ch->flushing)
		return 0;
	ch->flushing = true;
	while (!ch->err && ch->osent < ch->nout) {
		unsigned int n = ch->nout - ch->osent;
		struct pollfd pfd = { .fd = ch->sock,
				      .events = POLLIN | POLLOUT };
		int r;

		if (n > CMC_TX_BATCH)
			n = CMC_TX_BATCH;
		for (unsigned int i = 0; i < n; i++) {
			unsigned int k = ch->osent + i;
			size_t start = k ? ch->oend[k - 1] : 0;

			iov[i].iov_base = ch->obuf + start;
			iov[i].iov_len = ch->oend[k] - start;
			memset(&mv[i], 0, sizeof(mv[i]));
			mv[i].msg_hdr.msg_iov = &iov[i];
			mv[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(ch->sock, mv, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r > 0) {
			for (int i = 0; i < r; i++)
				if (mv[i].msg_len != iov[i].iov_len)
					cmc_fail(ch, -EPROTO);
			ch->osent += (unsigned int)r;
			if (deadline >= 0)
				deadline = cmc_deadline(ch->req_timeout);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			cmc_fail(ch, -ECONNRESET);
			break;
		}
		if (!wait)
			break;
		r = poll(&pfd, 1, cmc_remaining(deadline));
		if (r == 0)
			cmc_fail(ch, -ETIMEDOUT);
		else if (r < 0 && errno != EINTR)
			cmc_fail(ch, -errno);
		else if (r > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			cmc_rx(ch);
	}
	if (ch->osent == ch->nout) {
		ch->osent = ch->nout = 0;
		ch->olen = 0;
	}
	ch->flushing = false;
	return ch->err;
}

static int cmc_out_flush(struct cmc_channel *ch)
{
	if (ch->osent == ch->nout)
		return ch->err;
	return cmc_out_send(ch, true, cmc_deadline(ch->req_timeout));
}

/* ------------------------------------------------------------------ */
/* Requests waiting for their reply */

static int cmc_pend_reserve(struct cmc_channel *ch)
{
	struct cmc_pend *p;
	unsigned int cap;

	if (ch->npend < ch->pcap)
		return 0;
	cap = ch->pcap ? ch->pcap * 2 : 16;
	p = malloc(cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* Unroll the ring: the oldest goes first. */
	for (unsigned int i = 0; i < ch->npend; i++)
		p[i] = ch->pend[(ch->phead + i) % ch->pcap];
	free(ch->pend);
	ch->pend = p;
	ch->pcap = cap;
	ch->phead = 0;
	return 0;
}

/* Room was reserved with cmc_pend_reserve(). */
static void cmc_pend_push(struct cmc_channel *ch, uint32_t seq, uint8_t type,
			  struct cmc_id *id)
{
	struct cmc_pend *p = &ch->pend[(ch->phead + ch->npend) % ch->pcap];

	p->seq = seq;
	p->type = type;
	p->id = id;
	ch->npend++;
}

/*
 * The reply to a CONNECT that created id: its number, or its failure,
 * which the application learns as a REQUEST_ERROR event because nobody
 * waits for this reply. An id destroyed meanwhile is destroyed in the
 * daemon now.
 */
static int cmc_on_created(struct cmc_channel *ch, struct cmc_id *id)
{
	const struct cmp_reply *r = &ch->rx.reply;
	int ret = 0;

	id->creating = false;
	if (r->status) {
		if (!id->dead)
			ret = cmc_request_error(ch, id, CMC_REQ_CONNECT,
						r->status);
	} else if (r->id == CMP_ID_NONE || cmc_id_lookup(ch, r->id)) {
		ret = cmc_fail(ch, -EPROTO);
	} else if (id->dead) {
		struct cmp_msg m;

		cmp_msg_init(&m, CMP_TYPE_DESTROY_ID, 0);
		m.hdr.version = ch->version;
		m.destroy_id.id = r->id;
		ret = cmc_out_noreply(ch, &m);
		if (ret)
			ret = cmc_fail(ch, ret);
	} else {
		ret = cmc_id_set_num(ch, id, r->id);
		if (ret)
			ret = cmc_fail(ch, ret);
	}
	cmc_id_put(id);
	return ret;
}

/*
 * A reply was read. The daemon answers in order, so a reply to a request
 * we wait for must answer the oldest; anything else can only be the
 * failure of a NOREPLY request sent after the last answered one and
 * before that oldest, and its id member says which id it was about.
 */
static int cmc_on_reply(struct cmc_channel *ch)
{
	const struct cmp_msg *m = &ch->rx;
	unsigned int request = m->hdr.type & ~CMP_REPLY_BIT;
	struct cmc_pend *head = ch->npend ? &ch->pend[ch->phead] : NULL;
	struct cmc_id *id;

	if (head && m->hdr.seq == head->seq) {
		struct cmc_pend p = *head;

		if (m->hdr.type != cmp_reply_type((enum cmp_type)p.type))
			return cmc_fail(ch, -EPROTO);
		ch->phead = (ch->phead + 1) % ch->pcap;
		ch->npend--;
		ch->last_answered = p.seq;
		if (p.id)
			return cmc_on_created(ch, p.id);
		ch->reply = *m;
		ch->reply_ready = true;
		return 0;
	}
	if (!m->reply.status || !cmp_noreply_allowed(request) ||
	    !cmc_seq_after(m->hdr.seq, ch->last_answered) ||
	    cmc_seq_after(m->hdr.seq, ch->last_noreply) ||
	    (head && !cmc_seq_after(head->seq, m->hdr.seq)))
		return cmc_fail(ch, -EPROTO);
	ch->last_answered = m->hdr.seq;
	id = cmc_id_lookup(ch, m->reply.id);
	if (!id || id->destroying) {
		ch->dropped++;
		return 0;
	}
	return cmc_request_error(ch, id, request, m->reply.status);
}

/* ------------------------------------------------------------------ */
/* Reading */

/* One datagram of len bytes was read into buf: check and process it. */
static int cmc_rx_one(struct cmc_channel *ch, const uint8_t *buf, size_t len)
{
	if (len == 0)
		return cmc_fail(ch, -ECONNRESET);
	if (len > CMP_MSG_MAX)
		return cmc_fail(ch, -EPROTO);
	if (cmp_decode(buf, len, &ch->rx, NULL))
		return cmc_fail(ch, -EPROTO);
	if (ch->rx.hdr.type != CMP_TYPE_HELLO_REPLY &&
	    ch->rx.hdr.version != ch->version)
		return cmc_fail(ch, -EPROTO);
	if (ch->rx.hdr.type == CMP_TYPE_EVENT)
		return cmc_on_event(ch);
	if (!(ch->rx.hdr.type & CMP_REPLY_BIT))
		return cmc_fail(ch, -EPROTO);
	return cmc_on_reply(ch);
}

/*
 * Read what the socket holds, up to CMC_RX_BATCH datagrams without
 * waiting, and process every one of them before returning, so that the
 * application's fd never looks idle while messages sit unprocessed in
 * here. Returns how many were read (0: none was there) or the channel's
 * error.
 */
static int cmc_rx(struct cmc_channel *ch)
{
	struct mmsghdr mv[CMC_RX_BATCH];
	struct iovec iov[CMC_RX_BATCH];
	int r;

	if (ch->err)
		return ch->err;
	memset(mv, 0, sizeof(mv));
	for (unsigned int i = 0; i < CMC_RX_BATCH; i++) {
		iov[i].iov_base = ch->rbuf[i];
		iov[i].iov_len = sizeof(ch->rbuf[i]);
		mv[i].msg_hdr.msg_iov = &iov[i];
		mv[i].msg_hdr.msg_iovlen = 1;
	}
	/* MSG_TRUNC: msg_len is the datagram's real length. */
	r = recvmmsg(ch->sock, mv, CMC_RX_BATCH, MSG_DONTWAIT | MSG_TRUNC,
		     NULL);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return cmc_fail(ch, -ECONNRESET);
	}
	if (r == 0)
		return cmc_fail(ch, -ECONNRESET);
	for (int i = 0; i < r; i++) {
		int ret = cmc_rx_one(ch, ch->rbuf[i], mv[i].msg_len);

		if (ret)
			return ret;
	}
	return r;
}

/*
 * Wait until the socket is readable or deadline, then read. Returns 0,
 * or the channel's error; running out of time is -ETIMEDOUT, sticky.
 */
static int cmc_wait_rx(struct cmc_channel *ch, int64_t deadline)
{
	struct pollfd pfd = { .fd = ch->sock, .events = POLLIN };
	int r = poll(&pfd, 1, cmc_remaining(deadline));

	if (r == 0)
		return cmc_fail(ch, -ETIMEDOUT);
	if (r < 0)
		return errno == EINTR ? 0 : cmc_fail(ch, -errno);
	r = cmc_rx(ch);
	return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------ */
/* Requests */

/* Start a request in tx: zeroed body, header filled when it is sent. */
static struct cmp_msg *cmc_req(struct cmc_channel *ch, enum cmp_type type)
{
	cmp_msg_init(&ch->tx, type, 0);
	ch->tx.hdr.version =
		type == CMP_TYPE_HELLO ? CMP_VERSION_HELLO : ch->version;
	return &ch->tx;
}

/*
 * Queue tx as a request that awaits its reply (id: a CONNECT creating
 * that id; NULL: the caller waits). -EINVAL when tx does not encode.
 */
static int cmc_send_waited(struct cmc_channel *ch, struct cmc_id *id)
{
	int ret;

	if (ch->err)
		return ch->err;
	ret = cmc_pend_reserve(ch);
	if (ret)
		return ret;
	ch->tx.hdr.seq = cmc_next_seq(ch);
	ch->tx.hdr.flags = 0;
	ret = cmc_out_add(ch, &ch->tx);
	if (ret)
		return ret;
	cmc_pend_push(ch, ch->tx.hdr.seq, ch->tx.hdr.type, id);
	return 0;
}

/*
 * Send tx, with everything queued before it, and wait for its reply,
 * processing whatever else arrives meanwhile. Returns the reply's status
 * (the reply itself is in ch->reply), or a channel error.
 */
static int cmc_request(struct cmc_channel *ch)
{
	int64_t deadline = cmc_deadline(ch->req_timeout);
	int ret;

	ret = cmc_send_waited(ch, NULL);
	if (ret)
		return ret;
	ch->reply_ready = false;
	ret = cmc_out_send(ch, true, deadline);
	while (!ret && !ch->reply_ready)
		ret = cmc_wait_rx(ch, deadline);
	if (ret)
		return ret;
	return ch->reply.reply.status;
}

/*
 * A request that asynchronous mode queues with NOREPLY and answers with
 * 0 at once; in blocking mode cmc_request().
 */
static int cmc_call(struct cmc_channel *ch)
{
	int ret;

	if (!ch->async)
		return cmc_request(ch);
	if (ch->err)
		return ch->err;
	ret = cmc_out_noreply(ch, &ch->tx);
	if (ret)
		return ret;
	if (ch->nout - ch->osent >= CMC_TX_BATCH)
		return cmc_out_flush(ch);
	return 0;
}

/* A request about a live id: the common checks. */
static int cmc_id_ok(const struct cmc_id *id)
{
	if (!id || id->dead)
		return -EINVAL;
	return id->ch->err;
}

/* Wait for the reply to the CONNECT that creates id. */
static int cmc_wait_created(struct cmc_id *id)
{
	struct cmc_channel *ch = id->ch;
	int64_t deadline = cmc_deadline(ch->req_timeout);
	int ret = cmc_out_flush(ch);

	while (!ret && id->creating)
		ret = cmc_wait_rx(ch, deadline);
	return ret;
}

/* Give an unborn id its daemon id the classic way: CREATE_ID. */
static int cmc_id_birth(struct cmc_id *id)
{
	struct cmc_channel *ch = id->ch;
	struct cmp_msg *m = cmc_req(ch, CMP_TYPE_CREATE_ID);
	uint32_t num;
	int ret;

	m->create_id.context = (uint64_t)(uintptr_t)id->context;
	m->create_id.qp_type = id->info.qp_type;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	num = ch->reply.create_id_reply.id;
	if (num == CMP_ID_NONE || cmc_id_lookup(ch, num))
		return cmc_fail(ch, -EPROTO);
	/* On -ENOMEM the daemon frees its id when we close. */
	return cmc_id_set_num(ch, id, num);
}

/*
 * A request is about to name id: the common checks, and a daemon id for
 * it if it has none yet (see cmc_set_async()).
 */
static int cmc_id_use(struct cmc_id *id)
{
	int ret = cmc_id_ok(id);

	if (!ret && id->creating)
		ret = cmc_wait_created(id);
	if (!ret && !id->num)
		ret = cmc_id_birth(id);
	return ret;
}

static int cmc_data(uint8_t *dst, size_t max, uint8_t *lenp, const void *src,
		    uint8_t len)
{
	if (len > max || (len && !src))
		return -EINVAL;
	if (len)
		memcpy(dst, src, len);
	*lenp = len;
	return 0;
}

static int cmc_sel(struct cmp_port_sel *dst, const struct cmc_port_sel *src)
{
	if (!src)
		return 0;
	if (strnlen(src->dev_name, sizeof(src->dev_name)) >=
	    sizeof(dst->dev_name))
		return -EINVAL;
	dst->kind = (uint8_t)src->kind;
	dst->port_num = src->port_num;
	memcpy(dst->gid, src->gid, sizeof(dst->gid));
	strcpy(dst->dev_name, src->dev_name);
	return 0;
}

static int cmc_addr_conv(struct cmp_addr *dst, const struct cmc_addr *src)
{
	dst->family = (uint8_t)src->family;
	dst->lid = src->lid;
	memcpy(dst->addr, src->addr, sizeof(dst->addr));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Channel API */

static void cmc_ch_release_fds(struct cmc_channel *ch)
{
	if (ch->epfd >= 0)
		close(ch->epfd);
	if (ch->evfd >= 0)
		close(ch->evfd);
	if (ch->sock >= 0)
		close(ch->sock);
	ch->epfd = ch->evfd = ch->sock = -1;
}

static int cmc_hello(struct cmc_channel *ch, const char *name)
{
	struct cmp_msg *m = cmc_req(ch, CMP_TYPE_HELLO);
	const struct cmp_hello_reply *r = &ch->reply.hello_reply;
	int ret;

	m->hello.min_version = CMP_VERSION_MIN;
	m->hello.max_version = CMP_VERSION_MAX;
	if (!name || !*name)
		name = program_invocation_short_name;
	strncpy(m->hello.name, name, CMC_NAME_MAX);
	ret = cmc_request(ch);
	if (ret)
		return ret;
	/* The daemon picks the highest common version; one outside our
	 * range means it did not listen. */
	if (r->version < CMP_VERSION_MIN || r->version > CMP_VERSION_MAX)
		return cmc_fail(ch, -EPROTO);
	ch->version = r->version;
	ch->dinfo.proto_version = r->version;
	ch->dinfo.max_ids = r->max_ids;
	ch->dinfo.max_events = r->max_events;
	memcpy(ch->dinfo.version, r->daemon_version, sizeof(ch->dinfo.version));
	return 0;
}

CMC_EXPORT int cmc_open_fd(int fd, const char *name, struct cmc_channel **chp)
{
	struct epoll_event ee = { .events = EPOLLIN };
	struct cmc_channel *ch;
	int ret, fl;

	*chp = NULL;
	if (fd < 0)
		return -EBADF;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		close(fd);
		return -ENOMEM;
	}
	ch->sock = fd;
	ch->refs = 1;
	ch->req_timeout = -1;
	ch->version = CMP_VERSION_HELLO;
	ch->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ch->epfd = epoll_create1(EPOLL_CLOEXEC);
	fl = fcntl(fd, F_GETFL);
	if (ch->evfd < 0 || ch->epfd < 0 || fl < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) ||
	    epoll_ctl(ch->epfd, EPOLL_CTL_ADD, fd, &ee)) {
		ret = -errno;
		goto fail;
	}
	ee.data.fd = ch->evfd;
	if (epoll_ctl(ch->epfd, EPOLL_CTL_ADD, ch->evfd, &ee)) {
		ret = -errno;
		goto fail;
	}
	ret = cmc_table_grow(ch);
	if (ret)
		goto fail;
	ch->rbuf = malloc(CMC_RX_BATCH * sizeof(*ch->rbuf));
	if (!ch->rbuf) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = cmc_hello(ch, name);
	if (ret)
		goto fail;
	*chp = ch;
	return 0;
fail:
	cmc_close(ch);
	return ret;
}

CMC_EXPORT int cmc_open(const char *socket_path, const char *name,
			struct cmc_channel **chp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	*chp = NULL;
	if (!socket_path || !*socket_path)
		socket_path = getenv("CMD_SOCKET");
	if (!socket_path || !*socket_path)
		socket_path = CMC_DEFAULT_SOCKET;
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return cmc_open_fd(fd, name, chp);
}

CMC_EXPORT void cmc_close(struct cmc_channel *ch)
{
	struct cmc_ev_item *it;

	if (!ch || ch->closed)
		return;
	/* Best effort, without waiting: what is queued may still matter
	 * (a REJECT's private data, say), though the daemon destroys every
	 * id anyway. */
	if (!ch->err && ch->osent < ch->nout)
		cmc_out_send(ch, false, 0);
	ch->closed = true;
	cmc_fail(ch, -ECONNRESET);
	while ((it = ch->head)) {
		cmc_dequeue(ch, it);
		cmc_item_free(it);
	}
	cmc_spare_free(ch);
	/* Closing the socket is what tells the daemon to destroy our ids. */
	cmc_ch_release_fds(ch);
	for (unsigned int i = 0; i < ch->nbuckets; i++) {
		struct cmc_id *id = ch->buckets[i], *next;

		for (; id; id = next) {
			next = id->hnext;
			id->hnext = NULL;
			id->dead = true;
			cmc_id_put(id);
		}
	}
	while (ch->unborn) {
		struct cmc_id *id = ch->unborn;

		cmc_unborn_del(ch, id);
		id->dead = true;
		cmc_id_put(id);
	}
	/* A CONNECT still creating its id holds it. */
	for (; ch->npend; ch->npend--) {
		cmc_id_put(ch->pend[ch->phead].id);
		ch->phead = (ch->phead + 1) % ch->pcap;
	}
	free(ch->pend);
	free(ch->obuf);
	free(ch->oend);
	free(ch->rbuf);
	ch->pend = NULL;
	ch->obuf = NULL;
	ch->oend = NULL;
	ch->rbuf = NULL;
	ch->nout = ch->osent = 0;
	free(ch->buckets);
	ch->buckets = NULL;
	ch->nbuckets = ch->nids = 0;
	cmc_ch_put(ch);
}

CMC_EXPORT int cmc_fd(const struct cmc_channel *ch)
{
	return ch->epfd;
}

CMC_EXPORT unsigned int cmc_event_pending(const struct cmc_channel *ch)
{
	return ch->nqueued;
}

CMC_EXPORT void cmc_set_request_timeout(struct cmc_channel *ch, int timeout_ms)
{
	ch->req_timeout = timeout_ms < 0 ? -1 : timeout_ms;
}

CMC_EXPORT int cmc_set_async(struct cmc_channel *ch, int on)
{
	int ret = 0;

	if (!on)
		ret = cmc_out_flush(ch);
	ch->async = on != 0;
	return ret ? ret : ch->err;
}

CMC_EXPORT int cmc_flush(struct cmc_channel *ch)
{
	return cmc_out_flush(ch);
}

CMC_EXPORT void cmc_daemon_info(const struct cmc_channel *ch,
				struct cmc_daemon_info *info)
{
	*info = ch->dinfo;
}

CMC_EXPORT const char *cmc_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ECONNRESET:
	case -EPIPE:
		return "the cmd daemon closed the connection";
	case -EPROTO:
		return "protocol error: the daemon sent a message this "
		       "library cannot accept";
	case -EPROTONOSUPPORT:
		return "the daemon and this library share no protocol version";
	case -ETIMEDOUT:
		return "timed out";
	case -EAGAIN:
		return "no event ready";
	case -ENOENT:
		return "no such id, or no daemon socket at that path";
	case -ECONNREFUSED:
		return "the cmd daemon is not running";
	case -EINVAL:
		return "invalid argument, or not allowed in the id's state";
	case -EADDRINUSE:
		return "another listener already claims that service id";
	}
	return err < 0 && err > -4096 ? strerror(-err) : "unknown error";
}

/* ------------------------------------------------------------------ */
/* Id API */

CMC_EXPORT int cmc_create_id(struct cmc_channel *ch, void *context,
			     enum cmc_qp_type qp_type, struct cmc_id **idp)
{
	struct cmp_msg *m;
	uint32_t num;
	int ret;

	*idp = NULL;
	if (ch->err)
		return ch->err;
	if (qp_type < CMC_QP_RC || qp_type > CMC_QP_UD)
		return -EINVAL;
	/* Asynchronous: a local handle; its first request creates the
	 * daemon's id (cmc_connect() in the same message). */
	if (ch->async) {
		*idp = cmc_id_alloc(ch, CMP_ID_NONE, context, (uint8_t)qp_type);
		if (!*idp)
			return -ENOMEM;
		cmc_unborn_add(ch, *idp);
		return 0;
	}
	m = cmc_req(ch, CMP_TYPE_CREATE_ID);
	m->create_id.context = (uint64_t)(uintptr_t)context;
	m->create_id.qp_type = (uint8_t)qp_type;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	num = ch->reply.create_id_reply.id;
	if (cmc_id_lookup(ch, num))
		return cmc_fail(ch, -EPROTO);
	*idp = cmc_id_new(ch, num, context, (uint8_t)qp_type);
	if (!*idp)
		return -ENOMEM; /* the daemon frees it when we close */
	return 0;
}

CMC_EXPORT int cmc_destroy_id(struct cmc_id *id)
{
	struct cmc_channel *ch;
	int ret;

	if (!id || id->dead)
		return -EINVAL;
	ch = id->ch;
	cmc_purge_id(ch, id);
	/* No daemon id yet: nothing to tell the daemon. Should a CONNECT
	 * be creating one, its reply finds the id dead and destroys the
	 * new one (cmc_on_created()). */
	if (!id->num) {
		cmc_unborn_del(ch, id);
		id->dead = true;
		cmc_id_put(id);
		return 0;
	}
	id->destroying = true;
	ret = ch->err;
	if (!ret) {
		cmc_req(ch, CMP_TYPE_DESTROY_ID)->destroy_id.id = id->num;
		ret = cmc_call(ch);
	}
	/* Whatever the daemon said, events read during the request that
	 * named id were dropped on arrival; none can follow the reply. In
	 * asynchronous mode the id leaves the table now, so its events
	 * still to come find no id and are dropped. */
	cmc_purge_id(ch, id);
	cmc_id_unlink(id);
	id->dead = true;
	cmc_id_put(id);
	return ret;
}

CMC_EXPORT void *cmc_get_context(const struct cmc_id *id)
{
	return id->context;
}

CMC_EXPORT int cmc_set_context(struct cmc_id *id, void *context)
{
	int ret = cmc_id_use(id);
	struct cmp_msg *m;

	if (ret)
		return ret;
	m = cmc_req(id->ch, CMP_TYPE_SET_CONTEXT);
	m->set_context.id = id->num;
	m->set_context.context = (uint64_t)(uintptr_t)context;
	ret = cmc_call(id->ch);
	if (!ret) {
		id->context = context;
		id->info.context = (uint64_t)(uintptr_t)context;
	}
	return ret;
}

CMC_EXPORT uint32_t cmc_id_num(const struct cmc_id *id)
{
	return id->num;
}

CMC_EXPORT struct cmc_channel *cmc_id_channel(const struct cmc_id *id)
{
	return id->ch;
}

CMC_EXPORT int cmc_listen(struct cmc_id *id, uint64_t service_id,
			  uint64_t service_mask, unsigned int backlog,
			  const struct cmc_port_sel *port)
{
	int ret = cmc_id_use(id);
	struct cmp_msg *m;

	if (ret)
		return ret;
	m = cmc_req(id->ch, CMP_TYPE_LISTEN);
	m->listen.id = id->num;
	m->listen.backlog = backlog;
	m->listen.service_id = service_id;
	m->listen.service_mask = service_mask;
	if (cmc_sel(&m->listen.port, port))
		return -EINVAL;
	ret = cmc_request(id->ch);
	if (!ret) {
		id->info.state = CMC_STATE_LISTEN;
		id->info.service_id = service_id;
		id->info.service_mask = service_mask;
		id->info.backlog = backlog;
	}
	return ret;
}

CMC_EXPORT int cmc_connect(struct cmc_id *id, const struct cmc_conn_param *p)
{
	int ret = cmc_id_ok(id);
	struct cmp_connect *c;
	struct cmc_id_info *in;

	if (!ret && id->creating)
		ret = cmc_wait_created(id);
	/* An unborn id is created by this very CONNECT in asynchronous
	 * mode; in blocking mode it gets its id first, as for any call. */
	if (!ret && !id->num && !id->ch->async)
		ret = cmc_id_birth(id);
	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	c = &cmc_req(id->ch, CMP_TYPE_CONNECT)->connect;
	c->id = id->num;
	if (!id->num) {
		c->qp_type = id->info.qp_type;
		c->context = (uint64_t)(uintptr_t)id->context;
	}
	c->local_qpn = p->qp_num;
	c->start_psn = p->start_psn;
	c->responder_resources = p->responder_resources;
	c->initiator_depth = p->initiator_depth;
	c->flow_control = p->flow_control;
	c->retry_count = p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count;
	c->srq = p->srq;
	c->max_cm_retries = p->max_cm_retries;
	c->local_cm_response_timeout = p->local_cm_response_timeout;
	c->remote_cm_response_timeout = p->remote_cm_response_timeout;
	c->service_id = p->service_id;
	c->path.flags = p->path.flags;
	c->path.flow_label = p->path.flow_label;
	c->path.pkey = p->path.pkey;
	c->path.mtu = p->path.mtu;
	c->path.sl = p->path.sl;
	c->path.traffic_class = p->path.traffic_class;
	c->path.hop_limit = p->path.hop_limit;
	c->path.packet_rate = p->path.packet_rate;
	c->path.local_ack_timeout = p->path.local_ack_timeout;
	if (cmc_addr_conv(&c->dst, &p->dst) || cmc_sel(&c->src, &p->src) ||
	    cmc_data(c->private_data, sizeof(c->private_data),
		     &c->private_data_len, p->private_data,
		     p->private_data_len))
		return -EINVAL;
	if (id->num) {
		ret = cmc_call(id->ch);
	} else {
		/* Its reply, which names the id, is processed when it comes
		 * (cmc_on_created()); nobody waits for it here. */
		ret = cmc_send_waited(id->ch, id);
		if (!ret) {
			id->refs++;
			id->creating = true;
			if (id->ch->nout - id->ch->osent >= CMC_TX_BATCH)
				ret = cmc_out_flush(id->ch);
		}
	}
	if (ret)
		return ret;
	in = &id->info;
	in->state = CMC_STATE_REQ_SENT;
	in->service_id = p->service_id;
	in->local_qpn = p->qp_num;
	in->local_psn = p->start_psn;
	in->responder_resources = p->responder_resources;
	in->initiator_depth = p->initiator_depth;
	in->flow_control = p->flow_control;
	in->retry_count = p->retry_count;
	in->rnr_retry_count = p->rnr_retry_count;
	in->srq = p->srq;
	in->max_cm_retries = p->max_cm_retries;
	in->local_cm_response_timeout = p->local_cm_response_timeout;
	in->remote_cm_response_timeout = p->remote_cm_response_timeout;
	return 0;
}

CMC_EXPORT int cmc_accept(struct cmc_id *id, const struct cmc_accept_param *p)
{
	int ret = cmc_id_use(id);
	struct cmp_accept *a;
	struct cmc_id_info *in;

	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	a = &cmc_req(id->ch, CMP_TYPE_ACCEPT)->accept;
	a->id = id->num;
	a->local_qpn = p->qp_num;
	/* The PSN our RQ was given at RTR, if that came first. */
	a->start_psn = id->psn_fixed ? id->info.local_psn : p->start_psn;
	a->responder_resources = p->responder_resources;
	a->initiator_depth = p->initiator_depth;
	a->target_ack_delay = p->target_ack_delay;
	a->failover = p->failover;
	a->flow_control = p->flow_control;
	a->rnr_retry_count = p->rnr_retry_count;
	a->srq = p->srq;
	if (cmc_data(a->private_data, sizeof(a->private_data),
		     &a->private_data_len, p->private_data,
		     p->private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	if (ret)
		return ret;
	in = &id->info;
	in->state = CMC_STATE_REP_SENT;
	in->local_qpn = p->qp_num;
	in->local_psn = a->start_psn;
	in->responder_resources = p->responder_resources;
	in->initiator_depth = p->initiator_depth;
	in->target_ack_delay = p->target_ack_delay;
	in->failover = p->failover;
	return 0;
}

CMC_EXPORT int cmc_reject(struct cmc_id *id, unsigned int reason,
			  const void *ari, uint8_t ari_len,
			  const void *private_data, uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_reject *r;

	if (ret)
		return ret;
	if (reason > UINT16_MAX)
		return -EINVAL;
	r = &cmc_req(id->ch, CMP_TYPE_REJECT)->reject;
	r->id = id->num;
	r->reason = (uint16_t)reason;
	if (cmc_data(r->ari, sizeof(r->ari), &r->ari_len, ari, ari_len) ||
	    cmc_data(r->private_data, sizeof(r->private_data),
		     &r->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	if (!ret)
		id->info.state = CMC_STATE_IDLE;
	return ret;
}

CMC_EXPORT int cmc_rtu(struct cmc_id *id, const void *private_data,
		       uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_rtu *r;

	if (ret)
		return ret;
	r = &cmc_req(id->ch, CMP_TYPE_RTU)->rtu;
	r->id = id->num;
	if (cmc_data(r->private_data, sizeof(r->private_data),
		     &r->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	if (!ret)
		id->info.state = CMC_STATE_ESTABLISHED;
	return ret;
}

CMC_EXPORT int cmc_notify_established(struct cmc_id *id)
{
	int ret = cmc_id_use(id);

	if (ret)
		return ret;
	cmc_req(id->ch, CMP_TYPE_NOTIFY_ESTABLISHED)->notify_established.id =
		id->num;
	ret = cmc_call(id->ch);
	if (!ret)
		id->info.state = CMC_STATE_ESTABLISHED;
	return ret;
}

CMC_EXPORT int cmc_mra(struct cmc_id *id, uint8_t service_timeout,
		       const void *private_data, uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_mra *m;

	if (ret)
		return ret;
	m = &cmc_req(id->ch, CMP_TYPE_MRA)->mra;
	m->id = id->num;
	m->service_timeout = service_timeout;
	if (cmc_data(m->private_data, sizeof(m->private_data),
		     &m->private_data_len, private_data, private_data_len))
		return -EINVAL;
	return cmc_call(id->ch);
}

CMC_EXPORT int cmc_disconnect(struct cmc_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_disconnect *d;

	if (ret)
		return ret;
	d = &cmc_req(id->ch, CMP_TYPE_DISCONNECT)->disconnect;
	d->id = id->num;
	if (cmc_data(d->private_data, sizeof(d->private_data),
		     &d->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	/* In DREQ_SENT and TIMEWAIT it succeeds and changes nothing. */
	if (!ret && id->info.state == CMC_STATE_DREQ_RCVD)
		id->info.state = CMC_STATE_TIMEWAIT;
	else if (!ret && id->info.state == CMC_STATE_ESTABLISHED)
		id->info.state = CMC_STATE_DREQ_SENT;
	return ret;
}

CMC_EXPORT int cmc_lap(struct cmc_id *id, const struct cmc_path *alt_path,
		       const void *private_data, uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_lap *l;

	if (ret)
		return ret;
	if (!alt_path)
		return -EINVAL;
	l = &cmc_req(id->ch, CMP_TYPE_LAP)->lap;
	l->id = id->num;
	memcpy(&l->alt_path, alt_path, sizeof(l->alt_path));
	if (cmc_data(l->private_data, sizeof(l->private_data),
		     &l->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	if (!ret)
		id->lap_path = *alt_path;
	return ret;
}

CMC_EXPORT int cmc_apr(struct cmc_id *id, uint8_t ap_status, const void *info,
		       uint8_t info_len, const void *private_data,
		       uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_apr *a;

	if (ret)
		return ret;
	a = &cmc_req(id->ch, CMP_TYPE_APR)->apr;
	a->id = id->num;
	a->ap_status = ap_status;
	if (cmc_data(a->info, sizeof(a->info), &a->info_len, info, info_len) ||
	    cmc_data(a->private_data, sizeof(a->private_data),
		     &a->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	/* Accepting a LAP loads the proposed path as the alternate. */
	if (!ret && ap_status == 0) {
		id->info.alt_path = id->lap_path;
		id->info.has_alt_path = 1;
	}
	return ret;
}

CMC_EXPORT int cmc_sidr_req(struct cmc_id *id, const struct cmc_sidr_param *p)
{
	int ret = cmc_id_use(id);
	struct cmp_sidr_req *s;

	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	s = &cmc_req(id->ch, CMP_TYPE_SIDR_REQ)->sidr_req;
	s->id = id->num;
	s->pkey = p->pkey;
	s->max_cm_retries = p->max_cm_retries;
	s->cm_response_timeout = p->cm_response_timeout;
	s->service_id = p->service_id;
	if (cmc_addr_conv(&s->dst, &p->dst) || cmc_sel(&s->src, &p->src) ||
	    cmc_data(s->private_data, sizeof(s->private_data),
		     &s->private_data_len, p->private_data,
		     p->private_data_len))
		return -EINVAL;
	ret = cmc_request(id->ch);
	if (!ret)
		id->info.state = CMC_STATE_SIDR_REQ_SENT;
	return ret;
}

CMC_EXPORT int cmc_sidr_rep(struct cmc_id *id, uint8_t status, uint32_t qpn,
			    uint32_t qkey, const void *private_data,
			    uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_sidr_rep *s;

	if (ret)
		return ret;
	s = &cmc_req(id->ch, CMP_TYPE_SIDR_REP)->sidr_rep;
	s->id = id->num;
	s->status = status;
	s->qpn = qpn;
	s->qkey = qkey;
	if (cmc_data(s->private_data, sizeof(s->private_data),
		     &s->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_call(id->ch);
	if (!ret)
		id->info.state = CMC_STATE_IDLE;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Event API */

/* The oldest queued event, of id or of any id when id is NULL. */
static struct cmc_ev_item *cmc_queue_take(struct cmc_channel *ch,
					  const struct cmc_id *id)
{
	struct cmc_ev_item *it;

	for (it = ch->head; it; it = it->next) {
		if (!id || it->ev.id == id) {
			cmc_dequeue(ch, it);
			cmc_id_learn(it->ev.id, it);
			return it;
		}
	}
	return NULL;
}

static int cmc_wait_event(struct cmc_channel *ch, const struct cmc_id *id,
			  struct cmc_event **evp, int timeout_ms)
{
	int64_t deadline = cmc_deadline(timeout_ms);
	struct cmc_ev_item *it;
	int ret;

	*evp = NULL;
	/* What is queued may be what the daemon waits for (an ACK_EVENT)
	 * before it sends what we wait for. A failure here is sticky and
	 * reported below, after the events read before it. */
	cmc_out_flush(ch);
	for (;;) {
		struct pollfd pfd = { .fd = ch->sock, .events = POLLIN };

		it = cmc_queue_take(ch, id);
		if (it) {
			*evp = &it->ev;
			return 0;
		}
		if (ch->err)
			return ch->err;
		/* Read: events (then maybe the channel's error) are taken
		 * from the queue above. */
		if (cmc_rx(ch))
			continue;
		ret = poll(&pfd, 1, cmc_remaining(deadline));
		if (ret == 0)
			return -EAGAIN;
		if (ret < 0 && errno != EINTR)
			return cmc_fail(ch, -errno);
	}
}

CMC_EXPORT int cmc_get_event(struct cmc_channel *ch, struct cmc_event **evp,
			     int timeout_ms)
{
	return cmc_wait_event(ch, NULL, evp, timeout_ms);
}

CMC_EXPORT int cmc_get_event_id(struct cmc_channel *ch, struct cmc_id *id,
				struct cmc_event **evp, int timeout_ms)
{
	*evp = NULL;
	if (!id || id->dead || id->ch != ch)
		return -EINVAL;
	return cmc_wait_event(ch, id, evp, timeout_ms);
}

CMC_EXPORT int cmc_ack_event(struct cmc_event *ev)
{
	struct cmc_ev_item *it;
	struct cmc_channel *ch;
	int ret = 0;

	if (!ev)
		return 0;
	it = container_of(ev, struct cmc_ev_item, ev);
	ch = it->ch;
	if (it->queued)
		return -EINVAL; /* not an event the application holds */
	/* The daemon never saw a library-made event. */
	if (!it->local && !ev->id->dead && !ch->err) {
		struct cmp_msg *m = cmc_req(ch, CMP_TYPE_ACK_EVENT);

		m->ack_event.id = ev->id->num;
		m->ack_event.seq = it->seq;
		ret = cmc_call(ch);
	}
	cmc_item_free(it);
	return ret;
}

CMC_EXPORT const char *cmc_event_str(enum cmc_event_type type)
{
	if (type == CMC_EVENT_REQUEST_ERROR)
		return "REQUEST_ERROR"; /* the library's own */
	if (type < CMC_EVENT_REQ_RECEIVED || type > CMC_EVENT_DEVICE_REMOVAL)
		return "UNKNOWN";
	return cmp_event_name((enum cmp_event_type)type);
}

/* ------------------------------------------------------------------ */
/* Introspection */

CMC_EXPORT int cmc_query_id(struct cmc_id *id, struct cmc_id_info *info)
{
	int ret = cmc_id_use(id);

	if (ret)
		return ret;
	cmc_req(id->ch, CMP_TYPE_QUERY_ID)->query_id.id = id->num;
	ret = cmc_request(id->ch);
	if (ret)
		return ret;
	if (id->ch->reply.query_id_reply.info.id != id->num)
		return cmc_fail(id->ch, -EPROTO);
	memcpy(info, &id->ch->reply.query_id_reply.info, sizeof(*info));
	return 0;
}

CMC_EXPORT int cmc_list(struct cmc_channel *ch, enum cmc_list_filter filter,
			uint64_t *cursor, struct cmc_list_entry *entries)
{
	struct cmp_msg *m;
	int ret;

	if (ch->err)
		return ch->err;
	m = cmc_req(ch, CMP_TYPE_LIST);
	m->list.cursor = *cursor;
	m->list.filter = (uint8_t)filter;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	*cursor = ch->reply.list_reply.next_cursor;
	memcpy(entries, ch->reply.list_reply.entries,
	       ch->reply.list_reply.count * sizeof(*entries));
	return (int)ch->reply.list_reply.count;
}

CMC_EXPORT int cmc_counters(struct cmc_channel *ch,
			    enum cmc_counter_scope scope, const char *dev_name,
			    uint8_t port_num, uint64_t *cursor,
			    struct cmc_counter *entries)
{
	struct cmp_msg *m;
	int ret;

	if (ch->err)
		return ch->err;
	m = cmc_req(ch, CMP_TYPE_COUNTERS);
	m->counters.cursor = *cursor;
	m->counters.scope = (uint8_t)scope;
	m->counters.port_num = port_num;
	if (dev_name) {
		if (strlen(dev_name) >= sizeof(m->counters.dev_name))
			return -EINVAL;
		strcpy(m->counters.dev_name, dev_name);
	}
	ret = cmc_request(ch);
	if (ret)
		return ret;
	*cursor = ch->reply.counters_reply.next_cursor;
	memcpy(entries, ch->reply.counters_reply.entries,
	       ch->reply.counters_reply.count * sizeof(*entries));
	return (int)ch->reply.counters_reply.count;
}

CMC_EXPORT int cmc_capture(struct cmc_channel *ch, const char *path)
{
	struct cmp_msg *m;

	if (ch->err)
		return ch->err;
	if (path && (!*path || strlen(path) >= CMP_PATH_SIZE))
		return -EINVAL;
	m = cmc_req(ch, CMP_TYPE_CAPTURE);
	m->capture.op = path ? CMP_CAPTURE_START : CMP_CAPTURE_STOP;
	if (path)
		strcpy(m->capture.path, path);
	return cmc_request(ch);
}

CMC_EXPORT int cmc_ports(struct cmc_channel *ch, uint64_t *cursor,
			 struct cmc_port_info *entries)
{
	int ret;

	if (ch->err)
		return ch->err;
	cmc_req(ch, CMP_TYPE_PORTS)->ports.cursor = *cursor;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	*cursor = ch->reply.ports_reply.next_cursor;
	memcpy(entries, ch->reply.ports_reply.entries,
	       ch->reply.ports_reply.count * sizeof(*entries));
	return (int)ch->reply.ports_reply.count;
}

CMC_EXPORT const char *cmc_state_str(enum cmc_state state)
{
	if (state > CMC_STATE_SIDR_REQ_RCVD)
		return "UNKNOWN";
	return cmp_state_name((enum cmp_state)state);
}

/* ------------------------------------------------------------------ */
/* QP helpers */

/*
 * Every event and every CONNECT/ACCEPT of an id passes through this
 * library, so the values it kept are complete but for one: the path of an
 * active id before its REP, which the daemon chose at CONNECT. Only then
 * is the daemon asked; its view is the truth and replaces ours whole
 * (keeping an alternate path only we know, from an APR).
 */
static int cmc_info_for(struct cmc_id *id)
{
	struct cmc_id_info q;
	int ret;

	if (id->path_ok)
		return 0;
	ret = cmc_query_id(id, &q);
	if (ret)
		return ret;
	if (!q.has_alt_path && id->info.has_alt_path) {
		q.has_alt_path = 1;
		q.alt_path = id->info.alt_path;
	}
	id->info = q;
	id->path_ok = q.path.port_num != 0;
	return 0;
}

CMC_EXPORT int cmc_init_qp_attr(struct cmc_id *id, enum ibv_qp_state target,
				struct ibv_qp_attr *attr, int *mask)
{
	int ret = cmc_id_ok(id);

	if (ret)
		return ret;
	if (target != IBV_QPS_INIT && target != IBV_QPS_RTR &&
	    target != IBV_QPS_RTS)
		return -EINVAL;
	if (id->info.qp_type == CMC_QP_UD)
		return -EOPNOTSUPP;
	ret = cmc_info_for(id);
	if (ret)
		return ret;
	/*
	 * The Starting PSN of a REQ or REP is the PSN its sender's receive
	 * queue expects: the peer's send queue starts there. That is how the
	 * Linux kernel's ib_cm reads it (cm_req_handler: sq_psn = the REQ's;
	 * cm_rep_handler: sq_psn = the REP's) and how rdma_cm sets its QPs
	 * (RTR rq_psn = the PSN it announced). So our SQ starts at the
	 * peer's announced PSN and our RQ at ours. (cmd to cmd, both sides
	 * do this; measured against kernel 6.1 rping in tests/interop.)
	 */
	/* Passive, RTR before ACCEPT (the usual order): the RQ PSN is ours
	 * to choose now; cmc_accept() announces it. */
	if (target == IBV_QPS_RTR && !id->psn_fixed &&
	    (id->info.state == CMC_STATE_REQ_RCVD ||
	     id->info.state == CMC_STATE_MRA_REQ_SENT)) {
		struct timespec ts;
		uint32_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint32_t)ts.tv_nsec ^ id->num * 2654435761u) & 0xffffff;
		id->info.local_psn = x ? x : 1;
		id->psn_fixed = true;
	}
	{
		struct cmc_id_info in = id->info;

		in.local_psn = id->info.remote_psn;
		in.remote_psn = id->info.local_psn;
		return cmc_qp_attr_from_info(&in, target, attr, mask);
	}
}

CMC_EXPORT int cmc_modify_qp(struct cmc_id *id, struct ibv_qp *qp,
			     enum ibv_qp_state target)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	if (!qp)
		return -EINVAL;
	ret = cmc_init_qp_attr(id, target, &attr, &mask);
	if (ret)
		return ret;
	ret = ibv_modify_qp(qp, &attr, mask);
	/* libibverbs returns a positive errno (some providers -1/errno). */
	if (ret > 0)
		return -ret;
	if (ret < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* ------------------------------------------------------------------ */
/* rdma_cm addressing */

_Static_assert((int)CMC_RDMA_PS_TCP == (int)RDMACM_PS_TCP &&
		       (int)CMC_RDMA_PS_UDP == (int)RDMACM_PS_UDP &&
		       (int)CMC_RDMA_PS_IB == (int)RDMACM_PS_IB &&
		       (int)CMC_RDMA_PS_IPOIB == (int)RDMACM_PS_IPOIB &&
		       CMC_CMA_HDR_SIZE == RDMACM_HDR_SIZE,
	       "rdma_cm port spaces are the kernel's");

static int cmc_ps(enum cmc_rdma_ps ps, enum rdmacm_ps *out)
{
	switch (ps) {
	case CMC_RDMA_PS_DEFAULT:
	case CMC_RDMA_PS_TCP:
		*out = RDMACM_PS_TCP;
		return 0;
	case CMC_RDMA_PS_UDP:
	case CMC_RDMA_PS_IB:
	case CMC_RDMA_PS_IPOIB:
		*out = (enum rdmacm_ps)ps;
		return 0;
	}
	return -EINVAL;
}

CMC_EXPORT uint64_t cmc_rdma_service_id(enum cmc_rdma_ps ps, uint16_t port)
{
	enum rdmacm_ps p;

	if (cmc_ps(ps, &p))
		return 0;
	return rdmacm_service_id(p, port);
}

static bool cmc_gid_v4(const uint8_t *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g, pfx, sizeof(pfx));
}

static bool cmc_gid_ll(const uint8_t *g)
{
	return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

static bool cmc_gid_zero(const uint8_t *g)
{
	static const uint8_t zero[CMC_GID_SIZE];

	return !memcmp(g, zero, sizeof(zero));
}

/* Does the application's selector allow this port? */
static bool cmc_port_allowed(const struct cmc_port_info *pi,
			     const struct cmc_port_sel *sel)
{
	switch (sel->kind) {
	case CMC_SEL_ANY:
		return true;
	case CMC_SEL_PORT:
		return !strcmp(pi->dev_name, sel->dev_name) &&
		       (!sel->port_num || sel->port_num == pi->port_num);
	case CMC_SEL_GID:
		for (unsigned int i = 0; i < CMC_PORT_GIDS && i < pi->n_gids;
		     i++)
			if (!memcmp(pi->gids[i].gid, sel->gid, CMC_GID_SIZE))
				return true;
		return false;
	}
	return false;
}

/*
 * The source GID the daemon would pick for dgid (daemon/transport.h's
 * xport_pick_sgid over path_resolve's port order): the first served,
 * active RoCE port the selector allows that has a GID of the right kind;
 * on it the best one: same IPv4-mappedness, RoCE v2 first, then the same
 * link-local-ness. Only the first CMC_PORT_GIDS GIDs of a port are seen.
 */
static int cmc_pick_sgid(struct cmc_channel *ch, const uint8_t *dgid,
			 const struct cmc_port_sel *sel, uint8_t *sgid)
{
	struct cmc_port_info *pi;
	uint64_t cursor = 0;
	bool v4 = cmc_gid_v4(dgid), ll = cmc_gid_ll(dgid);
	int n, ret = -EADDRNOTAVAIL;

	pi = calloc(CMC_PORTS_BATCH_MAX, sizeof(*pi));
	if (!pi)
		return -ENOMEM;
	do {
		n = cmc_ports(ch, &cursor, pi);
		if (n < 0) {
			ret = n;
			break;
		}
		for (int k = 0; k < n && ret == -EADDRNOTAVAIL; k++) {
			const struct cmc_port_info *p = &pi[k];
			int best = -1, score;

			if (!p->up || p->state != IBV_PORT_ACTIVE ||
			    p->link_layer != CMC_LINK_ROCE ||
			    !cmc_port_allowed(p, sel))
				continue;
			for (unsigned int i = 0;
			     i < CMC_PORT_GIDS && i < p->n_gids; i++) {
				const struct cmc_port_gid *g = &p->gids[i];

				if (cmc_gid_zero(g->gid) ||
				    cmc_gid_v4(g->gid) != v4)
					continue;
				score = g->type == CMC_GID_ROCE_V2 ? 2 : 0;
				if (!v4 && cmc_gid_ll(g->gid) == ll)
					score++;
				if (score > best) {
					best = score;
					memcpy(sgid, g->gid, CMC_GID_SIZE);
				}
			}
			if (best >= 0)
				ret = 0;
		}
	} while (ret == -EADDRNOTAVAIL && cursor);
	free(pi);
	return ret;
}

/* An ephemeral source port, from the kernel's default local range. */
static uint16_t cmc_ephemeral_port(void)
{
	struct timespec ts;
	uint32_t x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() * 2654435761u;
	x ^= x >> 15;
	return (uint16_t)(32768 + x % (60999 - 32768 + 1));
}

static int cmc_sa_port(const struct sockaddr *sa, uint16_t *port)
{
	switch (sa->sa_family) {
	case AF_INET:
		*port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		return 0;
	case AF_INET6:
		*port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* A socket address of family af from a GID (its IP form) and a port. */
static void cmc_sa_from_gid(struct sockaddr_storage *ss, int af,
			    const uint8_t *gid, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (af == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)ss;

		in4->sin_family = AF_INET;
		memcpy(&in4->sin_addr, gid + 12, 4);
		in4->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, gid, CMC_GID_SIZE);
		in6->sin6_port = htons(port);
	}
}

CMC_EXPORT int cmc_connect_ip(struct cmc_id *id, const struct sockaddr *dst,
			      const struct sockaddr *src, enum cmc_rdma_ps ps,
			      const struct cmc_conn_param *param)
{
	uint8_t pd[CMC_REQ_PRIVATE_DATA_SIZE];
	uint8_t dgid[CMC_GID_SIZE], sgid[CMC_GID_SIZE];
	struct sockaddr_storage s_sa, d_sa;
	struct cmc_conn_param p;
	enum rdmacm_ps rps;
	uint16_t dport, sport = 0;
	int ret = cmc_id_ok(id);

	if (ret)
		return ret;
	if (!dst || !param || cmc_ps(ps, &rps) ||
	    param->private_data_len > CMC_CMA_PRIVATE_DATA_SIZE ||
	    (param->private_data_len && !param->private_data))
		return -EINVAL;
	if (cmc_sa_port(dst, &dport))
		return -EAFNOSUPPORT;
	if (!dport)
		return -EINVAL;
	if (src &&
	    (src->sa_family != dst->sa_family || cmc_sa_port(src, &sport)))
		return -EAFNOSUPPORT;
	if (rdmacm_gid_from_addr(dgid, dst))
		return -EAFNOSUPPORT;
	p = *param;
	memset(sgid, 0, sizeof(sgid));
	if (src)
		rdmacm_gid_from_addr(sgid, src);
	/* An unspecified source (0.0.0.0 maps to ::ffff:0.0.0.0). */
	if (cmc_gid_zero(sgid) || (cmc_gid_v4(sgid) && !sgid[12] && !sgid[13] &&
				   !sgid[14] && !sgid[15])) {
		ret = cmc_pick_sgid(id->ch, dgid, &param->src, sgid);
		if (ret)
			return ret;
	}
	if (!sport)
		sport = cmc_ephemeral_port();
	/* The REQ leaves from the port owning that GID, and the daemon's own
	 * pick on it is this GID (same rule). */
	memset(&p.src, 0, sizeof(p.src));
	p.src.kind = CMC_SEL_GID;
	memcpy(p.src.gid, sgid, CMC_GID_SIZE);
	memset(&p.dst, 0, sizeof(p.dst));
	p.dst.family = dst->sa_family == AF_INET ? CMC_AF_IPV4 : CMC_AF_IPV6;
	if (dst->sa_family == AF_INET)
		memcpy(p.dst.addr, dgid + 12, 4);
	else
		memcpy(p.dst.addr, dgid, CMC_GID_SIZE);
	p.service_id = rdmacm_service_id(rps, dport);
	cmc_sa_from_gid(&s_sa, dst->sa_family, sgid, sport);
	cmc_sa_from_gid(&d_sa, dst->sa_family, dgid, dport);
	memset(pd, 0, sizeof(pd));
	if (rdmacm_hdr_encode(pd, (struct sockaddr *)&s_sa,
			      (struct sockaddr *)&d_sa))
		return -EAFNOSUPPORT;
	if (param->private_data_len)
		memcpy(pd + CMC_CMA_HDR_SIZE, param->private_data,
		       param->private_data_len);
	p.private_data = pd;
	p.private_data_len =
		(uint8_t)(CMC_CMA_HDR_SIZE + param->private_data_len);
	return cmc_connect(id, &p);
}

CMC_EXPORT int cmc_listen_port(struct cmc_id *id, enum cmc_rdma_ps ps,
			       uint16_t port, unsigned int backlog)
{
	enum rdmacm_ps rps;

	if (cmc_ps(ps, &rps))
		return -EINVAL;
	return cmc_listen(id, rdmacm_service_id(rps, port), ~UINT64_C(0),
			  backlog, NULL);
}

CMC_EXPORT int cmc_event_cma(const struct cmc_event *ev,
			     struct sockaddr_storage *src,
			     struct sockaddr_storage *dst, const uint8_t **pd,
			     size_t *len)
{
	const struct cmc_ev_req *r;
	struct rdmacm_hdr h;
	int ret;

	if (!ev || ev->type != CMC_EVENT_REQ_RECEIVED)
		return -EINVAL;
	r = &ev->u.req;
	if (rdmacm_service_id_parse(r->service_id, NULL, NULL))
		return -ENOENT;
	ret = rdmacm_hdr_decode(r->private_data, r->private_data_len,
				r->service_id, &h);
	if (ret)
		return ret == -EINVAL ? -ENOENT : -EBADMSG;
	if (src)
		*src = h.src;
	if (dst)
		*dst = h.dst;
	if (pd)
		*pd = r->private_data + CMC_CMA_HDR_SIZE;
	if (len)
		*len = (size_t)r->private_data_len - CMC_CMA_HDR_SIZE;
	return 0;
}

CMC_EXPORT const char *cmc_rej_reason_str(unsigned int reason)
{
	switch (reason) {
	case CM_REJ_INVALID_SERVICE_ID:
		return "invalid service id (nobody listens on that port)";
	case CM_REJ_CONSUMER_DEFINED:
		return "consumer reject (the peer application refused)";
	case CM_REJ_STALE_CONN:
		return "stale connection (the peer still knows an old one "
		       "with these ids)";
	}
	return cm_rej_reason_str(reason);
}
