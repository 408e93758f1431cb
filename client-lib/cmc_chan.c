// SPDX-License-Identifier: MIT
/*
 * libcmclient, the channel: time, the id table, the channel's lifetime,
 * error and event queue, events as read from the daemon, and the channel
 * API (open, close, fd, flush). See cmc_int.h for the map of the files.
 */
#include "cmc_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* Time */

int64_t cmc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cmc_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : cmc_now_ms() + timeout_ms;
}

/* What is left of a deadline, as poll() wants it. */
int cmc_remaining(int64_t deadline)
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

#define CMC_IDS_INITIAL 64

static uint64_t cmc_id_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct cmc_id, hnode)->num);
}

static bool cmc_id_eq(const struct hnode *n, const void *num)
{
	return container_of(n, struct cmc_id, hnode)->num ==
	       *(const uint32_t *)num;
}

struct cmc_id *cmc_id_lookup(struct cmc_channel *ch, uint32_t num)
{
	/* Unborn ids have number 0 and are not in the table. */
	if (num == CMP_ID_NONE)
		return NULL;
	return htable_entry(
		htable_find(&ch->ids, hash_u64(num), cmc_id_eq, &num),
		struct cmc_id, hnode);
}

/* Put id, numbered now, into the table: 0, or -ENOMEM if it is full. */
int cmc_id_link(struct cmc_channel *ch, struct cmc_id *id)
{
	if (htable_reserve(&ch->ids))
		return -ENOMEM;
	htable_insert(&ch->ids, &id->hnode);
	return 0;
}

struct cmc_id *cmc_id_alloc(struct cmc_channel *ch, uint32_t num, void *context,
			    uint8_t qp_type)
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

struct cmc_id *cmc_id_new(struct cmc_channel *ch, uint32_t num, void *context,
			  uint8_t qp_type)
{
	struct cmc_id *id = cmc_id_alloc(ch, num, context, qp_type);

	if (id && cmc_id_link(ch, id)) {
		free(id);
		return NULL;
	}
	return id;
}

void cmc_unborn_add(struct cmc_channel *ch, struct cmc_id *id)
{
	id->uprev = NULL;
	id->unext = ch->unborn;
	if (ch->unborn)
		ch->unborn->uprev = id;
	ch->unborn = id;
}

void cmc_unborn_del(struct cmc_channel *ch, struct cmc_id *id)
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
int cmc_id_set_num(struct cmc_channel *ch, struct cmc_id *id, uint32_t num)
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

void cmc_id_put(struct cmc_id *id)
{
	if (id && --id->refs == 0)
		free(id);
}

void cmc_id_unlink(struct cmc_id *id)
{
	htable_remove(&id->ch->ids, &id->hnode);
}

/* ------------------------------------------------------------------ */
/* The channel's lifetime, its error and its event queue */

void cmc_ch_put(struct cmc_channel *ch)
{
	if (--ch->refs == 0)
		free(ch);
}

int cmc_fail(struct cmc_channel *ch, int err)
{
	if (!ch->err)
		ch->err = err;
	return ch->err;
}

/*
 * Keep the eventfd readable exactly while the queue holds events, so the
 * epoll fd the application polls is readable then too.
 */
void cmc_queue_signal(struct cmc_channel *ch)
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
struct cmc_ev_item *cmc_item_new(struct cmc_channel *ch)
{
	struct cmc_ev_item *it = spare_take(&ch->spare);

	if (!it)
		return calloc(1, sizeof(*it));
	memset(it, 0, sizeof(*it));
	return it;
}

void cmc_item_free(struct cmc_ev_item *it)
{
	struct cmc_channel *ch = it->ch;

	cmc_id_put(it->ev.id);
	cmc_id_put(it->ev.listen_id);
	/* A closed channel lives on only for its unacked events: keep
	 * nothing for it. */
	if (ch->closed)
		free(it);
	else
		spare_give(&ch->spare, it);
	cmc_ch_put(ch);
}

void cmc_spare_free(struct cmc_channel *ch)
{
	spare_drain(&ch->spare);
}

void cmc_dequeue(struct cmc_channel *ch, struct cmc_ev_item *it)
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
void cmc_purge_id(struct cmc_channel *ch, struct cmc_id *id)
{
	struct cmc_ev_item *it, *next;

	cmc_drop_parked(id);
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
void cmc_id_learn(struct cmc_id *id, const struct cmc_ev_item *it)
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
	case CMC_EVENT_ROUTE_RESOLVED:
		if (!ev->status) {
			in->path = ev->u.route.path;
			in->has_alt_path = ev->u.route.has_alt;
			if (ev->u.route.has_alt)
				in->alt_path = ev->u.route.alt_path;
		}
		break;
	case CMC_EVENT_MRA_RECEIVED:
	case CMC_EVENT_PORT_ERROR:
	case CMC_EVENT_DEVICE_REMOVAL:
		break;
	}
}

/* An event about to be queued (or parked) holds its channel and id(s). */
static void cmc_item_hold(struct cmc_channel *ch, struct cmc_ev_item *it)
{
	it->ch = ch;
	ch->refs++;
	it->ev.id->refs++;
	if (it->ev.listen_id)
		it->ev.listen_id->refs++;
}

/* Append a held event to the queue. */
static void cmc_queue_link(struct cmc_channel *ch, struct cmc_ev_item *it)
{
	it->ev.id->nq++;
	if (it->ev.listen_id)
		it->ev.listen_id->nq++;
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

/* Append an event to the queue; it holds its channel and its id(s). */
void cmc_enqueue(struct cmc_channel *ch, struct cmc_ev_item *it)
{
	cmc_item_hold(ch, it);
	cmc_queue_link(ch, it);
}

/* The application acked id's held event: its parked one may follow. */
void cmc_release_held(struct cmc_id *id, struct cmc_ev_item *it)
{
	struct cmc_ev_item *p = id->parked;

	if (id->held != it)
		return;
	id->held = NULL;
	if (!p)
		return;
	id->parked = NULL;
	cmc_queue_link(p->ch, p);
}

/* Drop id's parked event (destroy, close). */
void cmc_drop_parked(struct cmc_id *id)
{
	struct cmc_ev_item *p = id->parked;

	if (!p)
		return;
	id->parked = NULL;
	p->ch->dropped++;
	cmc_item_free(p);
}

/*
 * An EVENT was read: queue it, or drop it when its id is being destroyed
 * or unknown (an id destroyed before; the daemon may reuse nothing, but
 * an event racing our own destroy must vanish). A REQ_RECEIVED or
 * SIDR_REQ_RECEIVED names a new passive id, which starts here.
 */
int cmc_on_event(struct cmc_channel *ch)
{
	const struct cmp_event *e = &ch->rx.event;
	bool first = e->type == CMP_EVENT_REQ_RECEIVED ||
		     e->type == CMP_EVENT_SIDR_REQ_RECEIVED;
	struct cmc_id *id = cmc_id_lookup(ch, e->id), *lid = NULL;
	struct cmc_ev_item *it;

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
	it->seq = ch->rx.hdr.seq;
	it->ev.id = id;
	it->ev.listen_id = lid;
	cmc_event_from_cmp(&it->ev, e);
	it->state = e->state;
	it->lap_state = e->lap_state;
	/* The application still holds the event this one follows, which a
	 * request acked early: park it until the application acks. A
	 * second event meanwhile would break rule 2. */
	if (id->held && id->held->acked) {
		cmc_item_hold(ch, it);
		if (id->parked) {
			cmc_item_free(it);
			return cmc_fail(ch, -EPROTO);
		}
		it->queued = true; /* not the application's to ack */
		id->parked = it;
		return 0;
	}
	cmc_enqueue(ch, it);
	return 0;
}

/* Tell the application that request (a NOREPLY one) on id failed. */
int cmc_request_error(struct cmc_channel *ch, struct cmc_id *id,
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
/* Channel API */

void cmc_ch_release_fds(struct cmc_channel *ch)
{
	if (ch->epfd >= 0)
		close(ch->epfd);
	if (ch->evfd >= 0)
		close(ch->evfd);
	if (ch->sock >= 0)
		close(ch->sock);
	if (ch->tfd >= 0)
		close(ch->tfd);
	ch->epfd = ch->evfd = ch->sock = ch->tfd = -1;
}

int cmc_hello(struct cmc_channel *ch, const char *name)
{
	struct cmp_msg *m = cmc_req(ch, CMP_TYPE_HELLO);
	const struct cmp_hello_reply *r = &ch->reply.hello_reply;
	int ret;

	m->hello.min_version = CMP_VERSION_MIN;
	m->hello.max_version = CMP_VERSION_MAX;
	if (!name || !*name)
		name = program_invocation_short_name;
	strncpy(m->hello.name, name, CMC_NAME_MAX);
	memcpy(ch->name, m->hello.name, sizeof(ch->name));
	ret = cmc_request(ch);
	if (ret)
		return ret;
	/* The daemon picks the highest common version; one outside our
	 * range means it did not listen. */
	if (r->version < CMP_VERSION_MIN || r->version > CMP_VERSION_MAX)
		return cmc_fail(ch, -EPROTO);
	ch->version = r->version;
	cmc_daemon_info_from_cmp(&ch->dinfo, r);
	return 0;
}

/*
 * The channel over fd, a socket connected to the daemon at peer (peer_len
 * 0: unknown, so no session: the channel cannot connect again).
 */
static int cmc_open_sock(int fd, const char *name,
			 const struct sockaddr_un *peer, socklen_t peer_len,
			 struct cmc_channel **chp)
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
	ch->tfd = -1;
	ch->link = CMC_LINK_UP;
	if (peer_len) {
		ch->peer = *peer;
		ch->peer_len = peer_len;
	}
	ch->refs = 1;
	spare_init(&ch->spare, CMC_SPARE_MAX, sizeof(struct cmc_ev_item), NULL);
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
	ret = htable_init(&ch->ids, CMC_IDS_INITIAL, cmc_id_hash);
	if (ret)
		goto fail;
	ch->rbuf = malloc(CMC_RX_BATCH * sizeof(*ch->rbuf));
	if (!ch->rbuf) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = cmc_hello(ch, name);
	if (!ret)
		ret = cmc_session_open(ch);
	if (ret)
		goto fail;
	*chp = ch;
	return 0;
fail:
	cmc_close(ch);
	return ret;
}

/*
 * The daemon's address, from the socket itself: a path (absolute, so
 * that it means the same from here) or an abstract name. A socketpair's
 * peer has neither.
 */
static socklen_t cmc_peer_of(int fd, struct sockaddr_un *sa)
{
	socklen_t len = sizeof(*sa);

	memset(sa, 0, sizeof(*sa));
	if (getpeername(fd, (struct sockaddr *)sa, &len) ||
	    sa->sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) + 1 ||
	    len > sizeof(*sa))
		return 0;
	if (sa->sun_path[0] != '/' && sa->sun_path[0] != '\0')
		return 0;
	return len;
}

CMC_EXPORT int cmc_open_fd(int fd, const char *name, struct cmc_channel **chp)
{
	struct sockaddr_un sa;
	socklen_t len = fd >= 0 ? cmc_peer_of(fd, &sa) : 0;

	return cmc_open_sock(fd, name, &sa, len, chp);
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
		return cmc_refuse(-ENAMETOOLONG,
				  "socket path longer than %zu bytes: %s",
				  sizeof(sa.sun_path) - 1, socket_path);
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return cmc_refuse(err, "cannot reach cmd at %s: %s",
				  socket_path, strerror(-err));
	}
	/* The path as given, which is where the successor listens too. */
	return cmc_open_sock(fd, name, &sa, sizeof(sa), chp);
}

CMC_EXPORT void cmc_close(struct cmc_channel *ch)
{
	struct hnode *n, *next;
	struct cmc_ev_item *it;

	if (!ch || ch->closed)
		return;
	/* Best effort, without waiting: what is queued may still matter
	 * (a REJECT's private data, say), though the daemon destroys every
	 * id anyway. */
	if (!ch->err && ch->osent < ch->nout)
		cmc_out_send(ch, 0, 0);
	ch->closed = true;
	cmc_fail(ch, -ECONNRESET);
	while ((it = ch->head)) {
		cmc_dequeue(ch, it);
		cmc_item_free(it);
	}
	cmc_spare_free(ch);
	/* Closing the socket is what tells the daemon to destroy our ids. */
	cmc_ch_release_fds(ch);
	HTABLE_FOREACH_SAFE(n, next, &ch->ids) {
		struct cmc_id *id = container_of(n, struct cmc_id, hnode);

		n->next = NULL;
		cmc_drop_parked(id);
		id->dead = true;
		cmc_id_put(id);
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
	htable_fini(&ch->ids);
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

/* The calling thread's last reason (cmc_last_error()). */
static __thread char cmc_why[CMP_WHY_MAX + PATH_MAX];

int cmc_refuse(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmc_why, sizeof(cmc_why), fmt, ap);
	va_end(ap);
	return err;
}

void cmc_why_clear(void)
{
	cmc_why[0] = '\0';
}

void cmc_why_reply(const struct cmp_msg *reply)
{
	snprintf(cmc_why, sizeof(cmc_why), "%s", cmp_reply_why(reply));
}

CMC_EXPORT const char *cmc_last_error(void)
{
	return cmc_why;
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
		return "no such id, file or socket (cmc_last_error() says "
		       "which)";
	case -ECONNREFUSED:
		return "the cmd daemon is not running";
	case -EINVAL:
		return "invalid argument, or not allowed in the id's state";
	case -EADDRINUSE:
		return "another listener already claims that service id";
	}
	return err < 0 && err > -4096 ? strerror(-err) : "unknown error";
}
