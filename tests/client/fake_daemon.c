/* SPDX-License-Identifier: MIT */
/* The fake daemon of fake_daemon.h. */
#include "fake_daemon.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int fake_send_locked(struct fake *f, const struct cmp_msg *m)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t len = cmp_encode(m, buf, sizeof(buf));
	const char *why;

	if (len < 0) {
		/* A test bug: say so rather than leave the client waiting. */
		fprintf(stderr, "fake daemon: cannot encode %s: %s\n",
			cmp_type_name((enum cmp_type)m->hdr.type),
			cmp_check(m, &why) ? why : "?");
		return (int)len;
	}
	/* Restarting: what the socket no longer takes is the successor's
	 * to send, but for the handshake of a new connection. */
	if (m->hdr.type != CMP_TYPE_HELLO_REPLY &&
	    m->hdr.type != CMP_TYPE_RESUME_REPLY &&
	    (f->keeping || (f->shutting && f->nwritten >= f->nwrite))) {
		if (f->nkept == FAKE_MAX_KEPT)
			return -ENOSPC;
		f->kept[f->nkept++] = *m;
		return 0;
	}
	if (f->shutting)
		f->nwritten++;
	if (f->dead || f->fd < 0)
		return -EPIPE;
	if (send(f->fd, buf, (size_t)len, MSG_NOSIGNAL) != len)
		return -errno;
	return 0;
}

int fake_send_msg(struct fake *f, const struct cmp_msg *m)
{
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = fake_send_locked(f, m);
	pthread_mutex_unlock(&f->lock);
	return ret;
}

int fake_send_raw(struct fake *f, const void *buf, size_t len)
{
	ssize_t r;

	pthread_mutex_lock(&f->lock);
	r = f->dead ? -1 : send(f->fd, buf, len, MSG_NOSIGNAL);
	pthread_mutex_unlock(&f->lock);
	return r == (ssize_t)len ? 0 : -EIO;
}

void fake_die(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	if (!f->dead) {
		f->dead = true;
		shutdown(f->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&f->lock);
}

int fake_reply(struct fake *f, const struct cmp_msg *req, int32_t status,
	       struct cmp_msg *body)
{
	struct cmp_msg m;
	enum cmp_type type = cmp_reply_type((enum cmp_type)req->hdr.type);
	/* A plain reply keeps its id after a failure (cmp.h). */
	size_t keep = sizeof(int32_t);

	if ((req->hdr.flags & CMP_HDR_NOREPLY) && !status)
		return 0;
	if (body) {
		m = *body;
	} else {
		memset(&m, 0, sizeof(m));
		/* Every request with a plain reply names its id first. */
		if (cmp_noreply_allowed(req->hdr.type)) {
			m.reply.id = req->destroy_id.id;
			keep = sizeof(struct cmp_reply);
		}
	}
	m.hdr.version =
		type == CMP_TYPE_HELLO_REPLY ? CMP_VERSION_HELLO : CMP_VERSION;
	m.hdr.type = type;
	m.hdr.seq = req->hdr.seq;
	m.hdr.length = 0;
	m.hdr.flags = 0;
	m.hdr.rsvd0 = 0;
	m.reply.status = status;
	if (status && type != CMP_TYPE_HELLO_REPLY)
		memset(m.body + keep, 0, sizeof(m.body) - keep);
	return fake_send_msg(f, &m);
}

static struct fake_id *fake_id_get(struct fake *f, uint32_t id, bool create)
{
	for (unsigned int i = 0; i < f->nids; i++)
		if (f->ids[i].id == id)
			return &f->ids[i];
	if (!create || f->nids == FAKE_MAX_IDS)
		return NULL;
	memset(&f->ids[f->nids], 0, sizeof(f->ids[0]));
	f->ids[f->nids].id = id;
	f->ids[f->nids].next_seq = 1;
	return &f->ids[f->nids++];
}

/* A new id, as CREATE_ID or a CONNECT that creates its id makes one. */
static uint32_t fake_id_new(struct fake *f)
{
	uint32_t id;

	pthread_mutex_lock(&f->lock);
	id = f->next_id++;
	fake_id_get(f, id, true);
	pthread_mutex_unlock(&f->lock);
	return id;
}

/*
 * The state a real daemon's engine reports after each event in the
 * common case (the engine's table decides it there; tests that need
 * another set m->event.state themselves).
 */
static const uint8_t fake_event_state[CMP_EVENT_MAX + 1] = {
	[CMP_EVENT_REQ_RECEIVED] = CMP_STATE_REQ_RCVD,
	[CMP_EVENT_REP_RECEIVED] = CMP_STATE_REP_RCVD,
	[CMP_EVENT_ESTABLISHED] = CMP_STATE_ESTABLISHED,
	[CMP_EVENT_REJ_RECEIVED] = CMP_STATE_IDLE,
	[CMP_EVENT_CONNECT_ERROR] = CMP_STATE_IDLE,
	[CMP_EVENT_MRA_RECEIVED] = CMP_STATE_MRA_REQ_RCVD,
	[CMP_EVENT_DREQ_RECEIVED] = CMP_STATE_DREQ_RCVD,
	[CMP_EVENT_DREP_RECEIVED] = CMP_STATE_TIMEWAIT,
	[CMP_EVENT_DISCONNECT_TIMEOUT] = CMP_STATE_TIMEWAIT,
	[CMP_EVENT_TIMEWAIT_EXIT] = CMP_STATE_IDLE,
	[CMP_EVENT_LAP_RECEIVED] = CMP_STATE_ESTABLISHED,
	[CMP_EVENT_APR_RECEIVED] = CMP_STATE_ESTABLISHED,
	[CMP_EVENT_SIDR_REQ_RECEIVED] = CMP_STATE_SIDR_REQ_RCVD,
	[CMP_EVENT_SIDR_REP_RECEIVED] = CMP_STATE_IDLE,
	[CMP_EVENT_PORT_ERROR] = CMP_STATE_ESTABLISHED,
	[CMP_EVENT_DEVICE_REMOVAL] = CMP_STATE_IDLE,
};

void fake_event(struct cmp_msg *m, uint32_t id, enum cmp_event_type type,
		uint64_t context)
{
	cmp_msg_init(m, CMP_TYPE_EVENT, 0);
	m->event.id = id;
	m->event.type = (uint16_t)type;
	m->event.context = context;
	if ((unsigned int)type <= CMP_EVENT_MAX)
		m->event.state = fake_event_state[type];
	if (type == CMP_EVENT_LAP_RECEIVED)
		m->event.lap_state = CMP_LAP_STATE_LAP_RCVD;
}

int fake_push(struct fake *f, struct cmp_msg *ev)
{
	struct fake_id *fi;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	fi = fake_id_get(f, ev->event.id, true);
	if (!fi) {
		ret = -ENOSPC;
	} else if (!fi->outstanding) {
		ev->hdr.seq = fi->next_seq++;
		fi->outstanding = ev->hdr.seq;
		ret = fake_send_locked(f, ev);
	} else if (fi->npending < FAKE_MAX_PENDING) {
		fi->pending[fi->npending++] = *ev;
	} else {
		ret = -ENOSPC;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* ACK_EVENT: reply, then release the id's next event (rule 2). */
static void fake_ack(struct fake *f, const struct cmp_msg *req)
{
	struct fake_id *fi;
	int32_t status = 0;

	pthread_mutex_lock(&f->lock);
	fi = fake_id_get(f, req->ack_event.id, false);
	if (!fi)
		status = -ENOENT;
	else if (fi->outstanding != req->ack_event.seq)
		status = -EINVAL;
	else
		fi->outstanding = 0;
	if (!status)
		f->acks++;
	pthread_mutex_unlock(&f->lock);
	fake_reply(f, req, status, NULL);
	if (status)
		return;
	pthread_mutex_lock(&f->lock);
	if (fi->npending) {
		struct cmp_msg next = fi->pending[0];

		memmove(&fi->pending[0], &fi->pending[1],
			--fi->npending * sizeof(fi->pending[0]));
		next.hdr.seq = fi->next_seq++;
		fi->outstanding = next.hdr.seq;
		fake_send_locked(f, &next);
	}
	pthread_mutex_unlock(&f->lock);
}

static void fake_default(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg r;
	enum cmp_type type = (enum cmp_type)req->hdr.type;
	struct fake_id *fi;

	memset(&r, 0, sizeof(r));
	switch (type) {
	case CMP_TYPE_HELLO: {
		uint16_t lo = req->hello.min_version,
			 hi = req->hello.max_version;
		int32_t st = 0;

		r.hello_reply.min_version = f->min_version;
		r.hello_reply.max_version = f->max_version;
		r.hello_reply.max_ids = 1000;
		r.hello_reply.max_events = 4096;
		r.hello_reply.max_msg = CMP_MSG_MAX;
		strcpy(r.hello_reply.daemon_version, "fake-1.0");
		if (hi < f->min_version || lo > f->max_version)
			st = -EPROTONOSUPPORT;
		else
			r.hello_reply.version =
				hi < f->max_version ? hi : f->max_version;
		fake_reply(f, req, st, &r);
		return;
	}
	case CMP_TYPE_CREATE_ID:
		if (f->status[type]) {
			fake_reply(f, req, f->status[type], NULL);
			return;
		}
		r.create_id_reply.id = fake_id_new(f);
		fake_reply(f, req, 0, &r);
		return;
	case CMP_TYPE_CONNECT:
		if (req->connect.id != CMP_ID_NONE || f->status[type]) {
			fake_reply(f, req, f->status[type], NULL);
			return;
		}
		/* CONNECT that creates its id: the reply names it. */
		r.reply.id = fake_id_new(f);
		fake_reply(f, req, 0, &r);
		return;
	case CMP_TYPE_DESTROY_ID:
		pthread_mutex_lock(&f->lock);
		fi = fake_id_get(f, req->destroy_id.id, false);
		if (fi) {
			fi->npending = 0;
			fi->outstanding = 0;
		}
		pthread_mutex_unlock(&f->lock);
		fake_reply(f, req, f->status[type], NULL);
		return;
	case CMP_TYPE_ACK_EVENT:
		fake_ack(f, req);
		return;
	case CMP_TYPE_SESSION:
		r.session_reply.resume_ms = f->resume_ms;
		memcpy(r.session_reply.token, f->token, sizeof(f->token));
		fake_reply(f, req, f->status[type], &r);
		return;
	case CMP_TYPE_RESUME: {
		int32_t st = f->resume_status;

		if (!st &&
		    memcmp(req->resume.token, f->token, sizeof(f->token)))
			st = -ENOENT;
		cmp_msg_init(&r, CMP_TYPE_RESUME_REPLY, req->hdr.seq);
		r.reply.status = st;
		/* The reply first, then what was kept for the session. */
		pthread_mutex_lock(&f->lock);
		if (!st) {
			f->keeping = false;
			f->resumed++;
		}
		fake_send_locked(f, &r);
		for (unsigned int i = 0; !st && i < f->nkept; i++)
			fake_send_locked(f, &f->kept[i]);
		if (!st)
			f->nkept = 0;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	case CMP_TYPE_QUERY_ID:
		r.query_id_reply.info = f->query_info;
		r.query_id_reply.info.id = req->query_id.id;
		fake_reply(f, req, f->status[type], &r);
		return;
	case CMP_TYPE_LIST:
		r.list_reply.count = req->list.cursor ? 1 : 2;
		r.list_reply.next_cursor = req->list.cursor ? 0 : 7;
		for (unsigned int i = 0; i < r.list_reply.count; i++) {
			r.list_reply.entries[i].id = 10 + i;
			r.list_reply.entries[i].qp_type = CMP_QP_TYPE_RC;
			r.list_reply.entries[i].state = CMP_STATE_LISTEN;
			r.list_reply.entries[i].owner_pid = 42;
		}
		/* The first one a listener with a held REQ, on port 1 of
		 * port index 3; the second on GID fe80::2. */
		r.list_reply.entries[0].backlog = 4;
		r.list_reply.entries[0].credits_in_use = 4;
		r.list_reply.entries[0].held_reqs = 1;
		r.list_reply.entries[0].sel = CMP_SEL_PORT;
		r.list_reply.entries[0].sel_port_index = 3;
		r.list_reply.entries[0].sel_port_num = 1;
		if (r.list_reply.count > 1) {
			r.list_reply.entries[1].sel = CMP_SEL_GID;
			r.list_reply.entries[1].listen_gid[0] = 0xfe;
			r.list_reply.entries[1].listen_gid[1] = 0x80;
			r.list_reply.entries[1].listen_gid[15] = 2;
		} else {
			/* The second batch: a connection over a LID-routed
			 * path on port 1 of port index 3, owned by "srv". */
			struct cmp_list_entry *e = &r.list_reply.entries[0];

			e->state = CMP_STATE_ESTABLISHED;
			e->port_index = 3;
			e->port_num = 1;
			e->remote_lid = 0x21;
			e->local_qpn = 0xabcdef;
			e->remote_qpn = 0x123456;
			strcpy(e->owner_comm, "srv");
		}
		fake_reply(f, req, f->status[type], &r);
		return;
	case CMP_TYPE_COUNTERS:
		r.counters_reply.count = 3;
		for (unsigned int i = 0; i < 3; i++) {
			strcpy(r.counters_reply.entries[i].name, "req_sent");
			r.counters_reply.entries[i].name[3] = (char)('a' + i);
			r.counters_reply.entries[i].value = 100 + i;
		}
		fake_reply(f, req, f->status[type], &r);
		return;
	case CMP_TYPE_PORTS:
		/* Three ports: two in the first batch, one in the second. */
		r.ports_reply.count = req->ports.cursor ? 1 : 2;
		r.ports_reply.next_cursor = req->ports.cursor ? 0 : 2;
		for (unsigned int i = 0; i < r.ports_reply.count; i++) {
			struct cmp_port_entry *e = &r.ports_reply.entries[i];
			unsigned int n = (unsigned int)req->ports.cursor + i;

			snprintf(e->dev_name, sizeof(e->dev_name), "fake%u", n);
			e->port_num = 1;
			e->port_index = (uint16_t)n;
			e->up = 1;
			e->state = CMP_PORT_STATE_ACTIVE;
			e->link_layer = CMP_LINK_LAYER_IB;
			e->active_mtu = CM_MTU_2048;
			e->lid = (uint16_t)(0x10 + n);
			e->sm_lid = 1;
			e->node_guid = 0x1000 + n;
			e->port_guid = 0x2000 + n;
			e->n_gids = 1;
			e->gids[0].type = CMP_GID_TYPE_IB;
			e->gids[0].gid[0] = 0xfe;
			e->gids[0].gid[1] = 0x80;
			e->gids[0].gid[15] = (uint8_t)n;
		}
		fake_reply(f, req, f->status[type], &r);
		return;
	case CMP_TYPE_PATHS:
		/* Two cached paths, the second with an alternate; a flush
		 * reports 5 entries gone (a PORT flush: the port index). */
		r.paths_reply.count = 2;
		r.paths_reply.next_cursor = req->paths.cursor ? 0 : 2;
		if (req->paths.flags & CMP_PATHS_FLUSH)
			r.paths_reply.flushed =
				req->paths.flags & CMP_PATHS_PORT ?
					req->paths.port_index :
					5;
		for (unsigned int i = 0; i < 2; i++) {
			struct cmp_path_entry *e = &r.paths_reply.entries[i];

			snprintf(e->dev_name, sizeof(e->dev_name), "fake%u", i);
			e->port_index = (uint16_t)i;
			e->port_num = 1;
			e->asked_dlid = i ? 0 : 0x21;
			e->asked_dgid[0] = i ? 0xfe : 0;
			e->sgid[15] = 0x11;
			e->dgid[15] = (uint8_t)(0x21 + i);
			e->slid = 0x11;
			e->dlid = (uint16_t)(0x21 + i);
			e->pkey = 0xffff;
			e->sl = 3;
			e->mtu = CM_MTU_4096;
			e->rate = 16;
			e->packet_life_time = 18;
			e->hop_limit = 64;
			e->tclass = 0x20;
			e->flow_label = 0xabcde;
			e->has_alt = (uint8_t)i;
			e->alt_slid = i ? 0x12 : 0;
			e->alt_dlid = i ? 0x23 : 0;
			e->age_s = 7;
			e->expires_s = i ? 0 : 1793;
			e->hits = 0x100000000ULL + i;
		}
		fake_reply(f, req, f->status[type], &r);
		return;
	default:
		fake_reply(f, req,
			   type <= CMP_TYPE_REQUEST_MAX ? f->status[type] :
							  -EINVAL,
			   NULL);
		return;
	}
}

/* One datagram read from the client: record it and answer it. */
static void fake_handle(struct fake *f, const uint8_t *buf, size_t n)
{
	struct cmp_msg req;

	if (cmp_decode(buf, n, &req, NULL) ||
	    !cmp_type_is_request(req.hdr.type)) {
		pthread_mutex_lock(&f->lock);
		f->bad_reqs++;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	pthread_mutex_lock(&f->lock);
	if (f->nreqs < FAKE_MAX_REQS)
		f->reqs[f->nreqs++] = req;
	f->total_reqs++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (f->hook && f->hook(f, &req))
		return;
	fake_default(f, &req);
}

/* Listening and no client: take the next one, waiting 20 ms at most. */
static void fake_accept(struct fake *f, int lfd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int c;

	if (lfd < 0 || poll(&pfd, 1, 20) <= 0)
		return;
	c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	pthread_mutex_lock(&f->lock);
	if (f->fd < 0 && f->lfd == lfd) {
		f->fd = c;
		f->dead = false;
		f->accepted++;
		c = -1;
	}
	pthread_mutex_unlock(&f->lock);
	if (c >= 0)
		close(c);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	uint8_t buf[CMP_MSG_MAX];

	for (;;) {
		struct pollfd pfd = { .events = POLLIN };
		bool stop, listening = f->path[0] != 0;
		int lfd;
		ssize_t n;

		pthread_mutex_lock(&f->lock);
		while (f->pause && !f->stop) {
			f->paused = true;
			pthread_cond_broadcast(&f->cond);
			pthread_cond_wait(&f->cond, &f->lock);
		}
		f->paused = false;
		stop = f->stop || (f->dead && !listening);
		pfd.fd = f->fd;
		lfd = f->hold_accept ? -1 : f->lfd;
		pthread_mutex_unlock(&f->lock);
		if (stop)
			break;
		if (pfd.fd < 0) {
			if (lfd < 0)
				poll(NULL, 0, 20);
			else
				fake_accept(f, lfd);
			continue;
		}
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = recv(pfd.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			if (!listening)
				break;
			/* The client left (or gave up): wait for the next. */
			pthread_mutex_lock(&f->lock);
			if (f->fd == pfd.fd) {
				close(f->fd);
				f->fd = -1;
			}
			pthread_mutex_unlock(&f->lock);
			continue;
		}
		fake_handle(f, buf, (size_t)n);
	}
	return NULL;
}

static int fake_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct fake *fake_start_at(const char *path)
{
	struct fake *f = calloc(1, sizeof(*f));

	if (!f || strlen(path) >= sizeof(f->path))
		goto fail;
	f->reqs = calloc(FAKE_MAX_REQS, sizeof(*f->reqs));
	f->kept = calloc(FAKE_MAX_KEPT, sizeof(*f->kept));
	if (!f->reqs || !f->kept)
		goto fail;
	strcpy(f->path, path);
	f->fd = f->client_fd = -1;
	f->lfd = fake_listen(path);
	if (f->lfd < 0)
		goto fail;
	f->min_version = CMP_VERSION_MIN;
	f->max_version = CMP_VERSION_MAX;
	f->next_id = 1;
	f->resume_ms = 5000;
	for (unsigned int i = 0; i < CMP_TOKEN_SIZE; i++)
		f->token[i] = (uint8_t)(0xa0 + i);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (pthread_create(&f->thread, NULL, fake_main, f)) {
		close(f->lfd);
		goto fail;
	}
	return f;
fail:
	if (f) {
		free(f->reqs);
		free(f->kept);
	}
	free(f);
	return NULL;
}

void fake_shut(struct fake *f, unsigned int nwrite)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n;

	/* The thread reads no more; what it had not read is read here. */
	fake_pause(f);
	pthread_mutex_lock(&f->lock);
	f->shutting = true;
	f->nwrite = nwrite;
	f->nwritten = 0;
	pthread_mutex_unlock(&f->lock);
	shutdown(f->fd, SHUT_RD);
	/* After SHUT_RD, what the socket holds, then 0. */
	while ((n = recv(f->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		fake_handle(f, buf, (size_t)n);
}

void fake_close(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->lfd >= 0)
		close(f->lfd);
	f->lfd = -1;
	f->shutting = false;
	f->keeping = true;
	f->pause = false;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

void fake_up(struct fake *f)
{
	int lfd = fake_listen(f->path);

	pthread_mutex_lock(&f->lock);
	f->lfd = lfd;
	pthread_mutex_unlock(&f->lock);
}

struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	int sv[2];

	if (!f)
		return NULL;
	f->reqs = calloc(FAKE_MAX_REQS, sizeof(*f->reqs));
	if (!f->reqs ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		free(f->reqs);
		free(f);
		return NULL;
	}
	f->fd = sv[0];
	f->client_fd = sv[1];
	f->lfd = -1;
	f->min_version = CMP_VERSION_MIN;
	f->max_version = CMP_VERSION_MAX;
	f->next_id = 1;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (pthread_create(&f->thread, NULL, fake_main, f)) {
		close(sv[0]);
		close(sv[1]);
		free(f->reqs);
		free(f);
		return NULL;
	}
	return f;
}

void fake_stop(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	if (f->fd >= 0)
		close(f->fd);
	if (f->lfd >= 0)
		close(f->lfd);
	if (f->path[0])
		unlink(f->path);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f->reqs);
	free(f->kept);
	free(f);
}

unsigned int fake_count(struct fake *f, enum cmp_type type)
{
	unsigned int n = 0;

	pthread_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->nreqs; i++)
		n += f->reqs[i].hdr.type == type;
	pthread_mutex_unlock(&f->lock);
	return n;
}

const struct cmp_msg *fake_last(struct fake *f, enum cmp_type type)
{
	const struct cmp_msg *m = NULL;

	pthread_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->nreqs; i++)
		if (f->reqs[i].hdr.type == type)
			m = &f->reqs[i];
	pthread_mutex_unlock(&f->lock);
	return m;
}

void fake_pause(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	f->pause = true;
	while (!f->paused && !f->stop && !f->dead)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

void fake_resume(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	f->pause = false;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

bool fake_wait_reqs(struct fake *f, unsigned int n, int timeout_ms)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&f->lock);
	while (f->total_reqs < n &&
	       !pthread_cond_timedwait(&f->cond, &f->lock, &ts))
		;
	ok = f->total_reqs >= n;
	pthread_mutex_unlock(&f->lock);
	return ok;
}
