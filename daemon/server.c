// SPDX-License-Identifier: MIT
/*
 * The client server: accept, read, decode, HELLO, hand requests to the
 * hooks, and write replies and events back without ever blocking the loop.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/poll.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd_config.h"
#include "log.h"
#include "refuse.h"
#include "state.h"
#include "spare.h"
#include "util.h"

/*
 * Reading. A pipelining client sends hundreds of requests per wake-up, so
 * they are read SRV_MMSG at a time with recvmmsg, and at most
 * SRV_READ_BUDGET per client per loop iteration: enough to amortise the
 * wake-up, few enough that other clients and the fabric get their turn
 * (libev serves every ready watcher before it polls again).
 */
#define SRV_MMSG 32
#define SRV_READ_BUDGET 128
/* Connections accepted per wake-up of the listening socket. */
#define SRV_ACCEPT_BATCH 32
/* Messages per sendmmsg when writing a client's queue. */
#define SRV_MMSG_OUT 64

/*
 * Back-pressure. Replies are made only by reading requests, so a client
 * whose queue holds SRV_OUT_HIGH messages it has not read gets no more of
 * its requests read until the queue is down to SRV_OUT_LOW: its own socket
 * fills and its sends block (or return EAGAIN) until it reads. That bounds
 * the replies queued for any client, however fast it pipelines, and leaves
 * the max_queued limit to events alone (which rule 2 bounds by the
 * client's ids). A client that is paused, has requests waiting and reads
 * nothing at all for SRV_STALL_SEC is stuck for good (it blocks in send
 * while we wait for it to read) and is dropped, as one that overflows
 * max_queued is.
 */
#define SRV_OUT_HIGH 1024
#define SRV_OUT_LOW 256
#define SRV_STALL_SEC 5.0

/*
 * One datagram waiting to be written. Nearly all are replies and events of
 * at most SRV_OUT_SMALL bytes (the largest event is under 400), which are
 * made in that one size and kept for reuse when written: at most
 * SRV_OUT_SPARE_MAX of them, enough for the queues of a busy iteration,
 * few enough (about 540 KiB) that a burst's memory goes back afterwards.
 * The rare longer ones (LIST, PORTS or COUNTERS replies) are malloc'd to
 * size and freed. So steady traffic allocates nothing per datagram.
 */
#define SRV_OUT_SMALL 512
#define SRV_OUT_SPARE_MAX 1024

struct srv_out {
	STAILQ_ENTRY(srv_out) link;
	size_t len;
	bool event; /* counts against max_queued */
	bool small; /* SRV_OUT_SMALL bytes of buf, whatever len says */
	uint8_t buf[];
};
STAILQ_HEAD(srv_outq, srv_out);

struct srv_client {
	struct srv *srv;
	ev_io io;
	int fd;
	struct ucred cred;
	uint64_t serial;
	char name[CMP_CLIENT_NAME_SIZE];
	char comm[CMP_COMM_SIZE]; /* /proc/PID/comm at accept; "" if unread */
	bool hello_done;
	uint16_t version;
	/* Set while a request of this client is handled: its events wait in
	 * 'deferred' so that the reply goes first. */
	bool in_request;
	bool doomed; /* to be dropped once the current call unwinds */
	unsigned int queued; /* in out and deferred */
	unsigned int events_queued; /* of those, events */
	/* Requests not read until the queue drains (back-pressure above). */
	bool paused;
	ev_timer stall; /* runs while paused; restarted by every write */
	struct srv_outq out;
	struct srv_outq deferred;
	LIST_ENTRY(srv_client) link;
	bool dirty; /* on srv->dirty: flush before the loop sleeps */
	LIST_ENTRY(srv_client) dirty_link;
	/* Sessions (cmp.h, "Restarts"): the token RESUME names it by. */
	uint8_t token[CMP_TOKEN_SIZE];
	/* Since HELLO, no request but HELLO: RESUME may come. */
	bool fresh;
	/*
	 * Restored from a predecessor's state and not resumed yet: fd is -1,
	 * what is sent to it waits in 'out', and 'resume' ends it (as a
	 * client that went away) unless RESUME comes first.
	 */
	bool detached;
	ev_timer resume;
	bool quiet; /* freed without a log line (resumed into another) */
};

struct srv {
	struct ev_loop *loop;
	struct srv_config cfg;
	struct srv_hooks hooks;
	void *ctx;
	ev_io accept_io;
	ev_check reap; /* frees clients marked doomed during the iteration */
	ev_prepare flush; /* writes what the iteration queued, batched */
	LIST_HEAD(, srv_client) dirty;
	int fd;
	bool unlink_path;
	unsigned int nclients;
	uint64_t next_serial;
	LIST_HEAD(, srv_client) clients;
	struct srv_counters counters;
	struct spare spare; /* small srv_out nodes to reuse */
	/* Handing over (srv_handoff_*): reading the last requests, and
	 * closing without releasing anybody's ids. */
	bool draining;
	bool handing_over;
	bool keep_listener; /* srv_listen_fd: an exec inherits it */
};

pid_t srv_client_pid(const struct srv_client *c)
{
	return c->cred.pid;
}

uid_t srv_client_uid(const struct srv_client *c)
{
	return c->cred.uid;
}

gid_t srv_client_gid(const struct srv_client *c)
{
	return c->cred.gid;
}

const char *srv_client_name(const struct srv_client *c)
{
	return c->name;
}

const char *srv_client_comm(const struct srv_client *c)
{
	return c->comm;
}

/*
 * The peer's process name, for cmctl's LIST: read here, once, right
 * after SO_PEERCRED named the pid, so that it is that process's (a pid
 * read later may have been reused) and so that cmctl need not: the pid
 * is in the daemon's pid namespace (the kernel translates SO_PEERCRED),
 * which a cmctl in a container does not share. It is not always
 * readable: cmd.service runs as root with no capabilities and
 * ProtectProc=invisible, which hides other users' processes from it
 * (that takes CAP_SYS_PTRACE), and a peer in another pid namespace has
 * pid 0. Then the name stays empty and LIST gives HELLO's name instead
 * (libcmclient's default is the program's name, comm's usual source).
 * Either is what the process chose to be called (prctl(PR_SET_NAME)),
 * not an identity: the uid is that.
 */
static void client_read_comm(struct srv_client *c)
{
	char path[32];
	ssize_t n;
	int fd;

	c->comm[0] = '\0';
	if (c->cred.pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->cred.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, c->comm, sizeof(c->comm) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	c->comm[n] = '\0';
	/* comm ends with a newline; control characters never reach a
	 * terminal through cmctl. */
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)c->comm[i] < 0x20 || c->comm[i] == 0x7f)
			c->comm[i] = i == n - 1 ? '\0' : '?';
}

uint64_t srv_client_serial(const struct srv_client *c)
{
	return c->serial;
}

unsigned int srv_client_count(const struct srv *srv)
{
	return srv->nclients;
}

const struct srv_counters *srv_counters(const struct srv *srv)
{
	return &srv->counters;
}

static struct srv_out *out_get(struct srv *srv, size_t len)
{
	struct srv_out *o;

	if (len > SRV_OUT_SMALL) {
		o = malloc(sizeof(*o) + len);
		if (o)
			o->small = false;
		return o;
	}
	o = spare_take(&srv->spare);
	if (!o)
		o = malloc(sizeof(*o) + SRV_OUT_SMALL);
	if (o)
		o->small = true;
	return o;
}

static void out_put(struct srv *srv, struct srv_out *o)
{
	if (o->small)
		spare_give(&srv->spare, o);
	else
		free(o);
}

static void outq_free(struct srv *srv, struct srv_outq *q)
{
	struct srv_out *o;

	while ((o = STAILQ_FIRST(q))) {
		STAILQ_REMOVE_HEAD(q, link);
		out_put(srv, o);
	}
}

/* A client that does not read is being dropped: count and say so. */
static void client_dropped(struct srv_client *c, const char *why)
{
	c->srv->counters.clients_dropped++;
	log_warn("client %llu (%s, pid %d): %u messages queued and not read; "
		 "disconnecting it%s",
		 (unsigned long long)c->serial, c->name, (int)c->cred.pid,
		 c->queued, why);
}

static void client_free(struct srv_client *c)
{
	struct srv *srv = c->srv;

	/* The hooks release the client's ids first: their protocol tails
	 * (REJ, DREQ, DREP) go out and no event reaches this client again.
	 * Not when handing over: the successor keeps them. */
	if (!srv->handing_over)
		srv->hooks.gone(srv->ctx, c);
	ev_io_stop(srv->loop, &c->io);
	ev_timer_stop(srv->loop, &c->stall);
	ev_timer_stop(srv->loop, &c->resume);
	if (c->fd >= 0)
		close(c->fd);
	outq_free(srv, &c->out);
	outq_free(srv, &c->deferred);
	if (c->dirty)
		LIST_REMOVE(c, dirty_link);
	LIST_REMOVE(c, link);
	srv->nclients--;
	if (!srv->handing_over && !c->quiet)
		log_info("client %llu (%s, pid %d uid %u) gone%s",
			 (unsigned long long)c->serial,
			 c->name[0] ? c->name : "-", (int)c->cred.pid,
			 (unsigned int)c->cred.uid,
			 c->detached ? " (did not resume in time)" : "");
	free(c);
}

/*
 * Write as much of the queue as the socket takes. Returns 0, or -1 when
 * the client is gone (the caller frees it).
 */
static int client_flush(struct srv_client *c)
{
	struct srv *srv = c->srv;
	struct srv_out *o;

	if (c->fd < 0)
		return 0; /* detached: kept for RESUME */
	while (!STAILQ_EMPTY(&c->out)) {
		struct mmsghdr mm[SRV_MMSG_OUT];
		struct iovec iov[SRV_MMSG_OUT];
		int k = 0, n;

		STAILQ_FOREACH(o, &c->out, link)
		{
			if (k == SRV_MMSG_OUT)
				break;
			iov[k].iov_base = o->buf;
			iov[k].iov_len = o->len;
			/* Only the entries sent: zeroing all SRV_MMSG_OUT
			 * cost more than a one-message flush itself. */
			mm[k] = (struct mmsghdr){ .msg_hdr = {
							  .msg_iov = &iov[k],
							  .msg_iovlen = 1,
						  } };
			k++;
		}
		n = sendmmsg(c->fd, mm, (unsigned int)k,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			srv->counters.send_errors++;
			log_debug("client %llu: send: %s",
				  (unsigned long long)c->serial,
				  strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			o = STAILQ_FIRST(&c->out);
			STAILQ_REMOVE_HEAD(&c->out, link);
			c->queued--;
			c->events_queued -= o->event;
			out_put(srv, o);
		}
		/* The client reads: a paused one is not stuck. */
		if (n > 0 && c->paused)
			ev_timer_again(srv->loop, &c->stall);
		if (n < k)
			break;
	}
	if (c->paused && c->queued <= SRV_OUT_LOW) {
		c->paused = false;
		ev_timer_stop(srv->loop, &c->stall);
	} else if (!c->paused && c->queued >= SRV_OUT_HIGH) {
		c->paused = true;
		srv->counters.reads_paused++;
		ev_timer_again(srv->loop, &c->stall);
	}
	/* Wait for room only while something waits to be written, and for
	 * requests unless paused (never neither: a paused client has more
	 * than SRV_OUT_LOW messages waiting). Touch the watcher only when
	 * that changes (each stop/start costs an epoll_ctl, even with the
	 * same mask). */
	{
		int want = (c->paused ? 0 : EV_READ) |
			   (STAILQ_EMPTY(&c->out) ? 0 : EV_WRITE);

		if ((c->io.events & (EV_READ | EV_WRITE)) != want) {
			ev_io_stop(srv->loop, &c->io);
			ev_io_set(&c->io, c->fd, want);
			ev_io_start(srv->loop, &c->io);
		}
	}
	return 0;
}

static int client_queue(struct srv_client *c, struct srv_outq *q,
			const struct cmp_msg *msg)
{
	struct srv *srv = c->srv;
	uint8_t buf[CMP_MSG_MAX];
	ssize_t n = cmp_encode(msg, buf, sizeof(buf));
	bool o_event = msg->hdr.type == CMP_TYPE_EVENT;
	struct srv_out *o;

	if (n < 0) {
		const char *why = NULL;

		cmp_check(msg, &why);
		log_err("client %llu: cannot encode %s: %s",
			(unsigned long long)c->serial,
			cmp_type_name(msg->hdr.type), why ? why : "?");
		return (int)n;
	}
	if (o_event && c->events_queued >= srv->cfg.max_queued) {
		/*
		 * The client does not read its socket. Its events are
		 * bounded by its ids (one unacked event each), and its
		 * replies by back-pressure, so this only happens to a
		 * client that stopped reading: drop it, which destroys its
		 * ids and tells their peers.
		 */
		if (!c->doomed)
			client_dropped(c, "");
		c->doomed = true;
		return -ENOBUFS;
	}
	o = out_get(srv, (size_t)n);
	if (!o)
		return -ENOMEM;
	o->len = (size_t)n;
	o->event = o_event;
	memcpy(o->buf, buf, (size_t)n);
	STAILQ_INSERT_TAIL(q, o, link);
	c->queued++;
	c->events_queued += o_event;
	return 0;
}

int srv_send(struct srv_client *c, const struct cmp_msg *msg)
{
	int rc;

	if (c->doomed)
		return -ENOTCONN;
	rc = client_queue(c, c->in_request ? &c->deferred : &c->out, msg);
	if (rc)
		return rc;
	if (msg->hdr.type == CMP_TYPE_EVENT)
		c->srv->counters.events_sent++;
	if (!c->in_request && !c->dirty) {
		/* Written before the loop sleeps, with whatever else this
		 * iteration queues for the client: one sendmmsg, one
		 * wake-up of the client. */
		c->dirty = true;
		LIST_INSERT_HEAD(&c->srv->dirty, c, dirty_link);
	}
	return 0;
}

static void flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct srv *srv = container_of(w, struct srv, flush);
	struct srv_client *c;

	while ((c = LIST_FIRST(&srv->dirty))) {
		LIST_REMOVE(c, dirty_link);
		c->dirty = false;
		if (!c->doomed && client_flush(c))
			c->doomed = true;
	}
}

static void hello(struct srv_client *c, const struct cmp_msg *req,
		  struct cmp_msg *reply)
{
	const struct cmp_hello *h = &req->hello;
	struct cmp_hello_reply *r = &reply->hello_reply;
	uint16_t v = h->max_version < CMP_VERSION_MAX ? h->max_version :
							CMP_VERSION_MAX;

	r->min_version = CMP_VERSION_MIN;
	r->max_version = CMP_VERSION_MAX;
	r->max_ids = c->srv->cfg.max_ids;
	r->max_events = c->srv->cfg.max_queued;
	r->max_msg = CMP_MSG_MAX;
	snprintf(r->daemon_version, sizeof(r->daemon_version), "%s",
		 CMD_VERSION);
	if (c->hello_done) {
		r->status = -EALREADY;
		goto refused;
	}
	if (v < h->min_version || v < CMP_VERSION_MIN) {
		r->status = -EPROTONOSUPPORT;
		log_info("client %llu (pid %d): speaks protocol %u..%u, we "
			 "speak %u..%u",
			 (unsigned long long)c->serial, (int)c->cred.pid,
			 h->min_version, h->max_version, CMP_VERSION_MIN,
			 CMP_VERSION_MAX);
		goto refused;
	}
	r->version = v;
	c->version = v;
	c->hello_done = true;
	c->fresh = true;
	memcpy(c->name, h->name, sizeof(c->name));
	log_info("client %llu: %s (pid %d uid %u), protocol %u",
		 (unsigned long long)c->serial, c->name, (int)c->cred.pid,
		 (unsigned int)c->cred.uid, v);
	return;
refused:
	/* A refused HELLO_REPLY still names our range (cmp.h). */
	r->version = 0;
}

/*
 * The id a plain reply names (cmp.h, struct cmp_reply): the one its
 * request named, which is the first member of every request that may
 * carry NOREPLY; CMP_ID_NONE for CAPTURE, whose reply is plain too. A
 * CONNECT that creates its id leaves it to the hook to name the new one.
 * buf holds len bytes of a request (possibly malformed) of type type.
 */
static uint32_t plain_reply_id(unsigned int type, const void *body, size_t len)
{
	uint32_t id = CMP_ID_NONE;

	if (cmp_noreply_allowed(type) && len >= sizeof(id))
		memcpy(&id, body, sizeof(id));
	return id;
}

static void session(struct srv_client *c, struct cmp_msg *reply)
{
	memcpy(reply->session_reply.token, c->token, CMP_TOKEN_SIZE);
	reply->session_reply.resume_ms = c->srv->cfg.resume_ms;
}

static void resume_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct srv_client *c = container_of(w, struct srv_client, resume);

	/* Its process did not come back: end it as a client that went away
	 * (its ids' protocol tails go out now). */
	c->srv->counters.sessions_expired++;
	client_free(c);
}

/*
 * RESUME (cmp.h): c takes over the detached session its token names.
 * Returns true when it did: the reply went first into the session's queue
 * and c, now empty, goes away quietly; false with the refusal in *reply.
 */
static bool resume(struct srv_client *c, const struct cmp_msg *req,
		   struct cmp_msg *reply)
{
	struct srv *srv = c->srv;
	struct srv_client *d;
	struct srv_outq first;
	unsigned int queued_before;

	if (!c->fresh) {
		reply->reply.status = -EINVAL;
		return false;
	}
	LIST_FOREACH(d, &srv->clients, link)
	if (d->detached && !memcmp(d->token, req->resume.token, CMP_TOKEN_SIZE))
		break;
	if (!d) {
		reply->reply.status = -ENOENT;
		log_info("client %llu (pid %d): RESUME of no waiting session",
			 (unsigned long long)c->serial, (int)c->cred.pid);
		return false;
	}
	if (d->cred.pid != c->cred.pid || d->cred.uid != c->cred.uid) {
		reply->reply.status = -EPERM;
		log_notice("client %llu (pid %d uid %u): RESUME of the session "
			   "of pid %d uid %u refused",
			   (unsigned long long)c->serial, (int)c->cred.pid,
			   (unsigned int)c->cred.uid, (int)d->cred.pid,
			   (unsigned int)d->cred.uid);
		return false;
	}
	/* The order on the new socket: what c has not written yet (its
	 * HELLO_REPLY: the client may have sent HELLO and RESUME at once),
	 * the RESUME reply, then what was queued for the session. */
	queued_before = d->queued;
	STAILQ_INIT(&first);
	if (client_queue(d, &first, reply)) {
		reply->reply.status = -ENOMEM;
		return false;
	}
	STAILQ_CONCAT(&first, &d->out);
	STAILQ_CONCAT(&c->out, &first);
	STAILQ_CONCAT(&d->out, &c->out);
	d->queued += c->queued;
	d->events_queued += c->events_queued;
	c->queued = c->events_queued = 0;
	ev_timer_stop(srv->loop, &d->resume);
	d->detached = false;
	d->fd = c->fd;
	d->version = c->version;
	c->fd = -1;
	ev_io_stop(srv->loop, &c->io);
	ev_io_set(&d->io, d->fd, EV_READ);
	ev_io_start(srv->loop, &d->io);
	c->quiet = true;
	c->doomed = true;
	srv->counters.sessions_resumed++;
	if (!d->dirty) {
		d->dirty = true;
		LIST_INSERT_HEAD(&srv->dirty, d, dirty_link);
	}
	log_info("client %llu (%s, pid %d): session resumed, %u messages "
		 "waiting for it",
		 (unsigned long long)d->serial, d->name, (int)d->cred.pid,
		 queued_before);
	return true;
}

/*
 * The failed reply to req gets the reason its check recorded (refuse.h),
 * and the debug log says who was refused what, and why.
 */
static void refused(const struct srv_client *c, const struct cmp_msg *req,
		    struct cmp_msg *reply)
{
	const char *why = refuse_why();
	enum cmp_type type = (enum cmp_type)req->hdr.type;
	struct log_ctx lc = { .client_pid = (int)c->cred.pid };

	cmp_reply_set_why(reply, why);
	if (cmp_noreply_allowed(type))
		log_ctx_at(LOG_LVL_DEBUG, &lc,
			   "client %llu (%s, pid %d): %s of id %u refused: "
			   "%s (%s)",
			   (unsigned long long)c->serial,
			   c->name[0] ? c->name : "-", (int)c->cred.pid,
			   cmp_type_name(type), reply->reply.id,
			   strerror(-reply->reply.status),
			   why ? why : "no reason recorded");
	else
		log_ctx_at(LOG_LVL_DEBUG, &lc,
			   "client %llu (%s, pid %d): %s refused: %s (%s)",
			   (unsigned long long)c->serial,
			   c->name[0] ? c->name : "-", (int)c->cred.pid,
			   cmp_type_name(type), strerror(-reply->reply.status),
			   why ? why : "no reason recorded");
}

static void client_request(struct srv_client *c, const struct cmp_msg *req)
{
	struct srv *srv = c->srv;
	struct cmp_msg reply;
	enum cmp_type type = (enum cmp_type)req->hdr.type;
	bool plain = cmp_noreply_allowed(type);

	srv->counters.requests++;
	refuse_clear();
	cmp_msg_init(&reply, cmp_reply_type(type), req->hdr.seq);
	if (plain)
		reply.reply.id =
			plain_reply_id(type, req->body, sizeof(req->body));
	if (type == CMP_TYPE_HELLO) {
		hello(c, req, &reply);
	} else if (!c->hello_done) {
		reply.reply.status =
			refuse(-EPROTO, "%s before HELLO", cmp_type_name(type));
	} else if (req->hdr.version != c->version) {
		reply.reply.status = refuse(
			-EPROTO,
			"%s in protocol version %u, not the "
			"%u that HELLO chose",
			cmp_type_name(type), req->hdr.version, c->version);
	} else if (type == CMP_TYPE_SESSION) {
		session(c, &reply);
	} else if (type == CMP_TYPE_RESUME) {
		if (resume(c, req, &reply))
			return; /* answered in the session resumed */
	} else {
		c->fresh = false;
		c->in_request = true;
		srv->hooks.request(srv->ctx, c, req, &reply);
		c->in_request = false;
	}
	if (reply.reply.status && type != CMP_TYPE_HELLO) {
		/* A failed reply carries nothing but its status, and a
		 * plain one the id it is about (cmp.h). */
		int32_t status = reply.reply.status;
		uint32_t id = reply.reply.id;

		cmp_msg_init(&reply, cmp_reply_type(type), req->hdr.seq);
		reply.reply.status = status;
		if (plain)
			reply.reply.id = id;
		refused(c, req, &reply);
	}
	/* NOREPLY (cmp.h, "Pipelining"): a success is not answered. */
	if (reply.reply.status == 0 && (req->hdr.flags & CMP_HDR_NOREPLY))
		srv->counters.replies_omitted++;
	else if (client_queue(c, &c->out, &reply))
		c->doomed = true;
	/* The events the request caused follow its reply. */
	while (!STAILQ_EMPTY(&c->deferred)) {
		struct srv_out *o = STAILQ_FIRST(&c->deferred);

		STAILQ_REMOVE_HEAD(&c->deferred, link);
		STAILQ_INSERT_TAIL(&c->out, o, link);
	}
}

/* A datagram cmp_decode refused: answer it if we can tell what it was. */
static void client_malformed(struct srv_client *c, const uint8_t *buf,
			     size_t len, int rc, const char *why)
{
	struct srv *srv = c->srv;
	struct cmp_hdr hdr;
	struct cmp_msg reply;

	srv->counters.malformed++;
	log_debug("client %llu: malformed message (%zu bytes): %s",
		  (unsigned long long)c->serial, len, why ? why : "?");
	if (len < sizeof(hdr))
		return;
	memcpy(&hdr, buf, sizeof(hdr));
	if (!cmp_type_is_request(hdr.type) || hdr.type == CMP_TYPE_HELLO)
		return; /* counted; nothing we can answer */
	cmp_msg_init(&reply, cmp_reply_type((enum cmp_type)hdr.type), hdr.seq);
	reply.reply.status = rc == -EPROTO ? -EPROTO : -EBADMSG;
	/* Whatever id the bytes name, so that a pipelining client can tell
	 * which of its requests this was (it is only ever echoed). */
	reply.reply.id =
		plain_reply_id(hdr.type, buf + sizeof(hdr), len - sizeof(hdr));
	cmp_reply_set_why(&reply, why);
	if (client_queue(c, &c->out, &reply))
		c->doomed = true;
}

/*
 * Read what the client sent, up to SRV_READ_BUDGET messages, with one
 * recvmmsg per SRV_MMSG: a short batch means the socket is empty, so no
 * extra recvmsg that fails with EAGAIN. Stops early once the client's
 * queue reaches SRV_OUT_HIGH (client_flush then pauses it). Returns -1
 * when the client is gone.
 */
static int client_read(struct srv_client *c)
{
	static uint8_t buf[SRV_MMSG][CMP_MSG_MAX + 1];
	static struct cmp_msg msg;
	static struct iovec iov[SRV_MMSG];
	static struct mmsghdr mm[SRV_MMSG];

	/* Set up once: recvmmsg writes back only msg_len and msg_flags. */
	if (!mm[0].msg_hdr.msg_iov) {
		for (int i = 0; i < SRV_MMSG; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = sizeof(buf[i]);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
	}
	for (int done = 0;
	     !c->doomed && (c->srv->draining || (done < SRV_READ_BUDGET &&
						 c->queued < SRV_OUT_HIGH));) {
		int n;

		n = recvmmsg(c->fd, mm, SRV_MMSG, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		for (int i = 0; i < n && !c->doomed; i++) {
			size_t len = mm[i].msg_len;
			const char *why;
			int rc;

			if (!len)
				return -1; /* EOF: the client is gone */
			if (mm[i].msg_hdr.msg_flags & MSG_TRUNC) {
				client_malformed(c, buf[i], len, -EMSGSIZE,
						 "longer than CMP_MSG_MAX");
				continue;
			}
			rc = cmp_decode(buf[i], len, &msg, &why);
			if (rc) {
				client_malformed(c, buf[i], len, rc, why);
				continue;
			}
			if (!cmp_type_is_request(msg.hdr.type)) {
				client_malformed(c, buf[i], len, -EBADMSG,
						 "not a request");
				continue;
			}
			client_request(c, &msg);
		}
		done += n;
		if (n < SRV_MMSG)
			return 0;
	}
	return 0;
}

static void client_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct srv_client *c = container_of(w, struct srv_client, io);

	if ((revents & EV_READ) && client_read(c))
		c->doomed = true;
	if (!c->doomed && client_flush(c))
		c->doomed = true;
	if (c->doomed)
		client_free(c);
}

/*
 * A paused client read nothing for SRV_STALL_SEC. If requests wait in its
 * socket it is blocked on us while we wait for it: stuck, and dropped.
 * Without requests waiting it is only slow to take its events, which
 * max_queued bounds; look again later.
 */
static void stall_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct srv_client *c = container_of(w, struct srv_client, stall);
	int pending = 0;
	char why[64];

	if (!c->paused || c->doomed) {
		ev_timer_stop(loop, w);
		return;
	}
	if (ioctl(c->fd, FIONREAD, &pending) == 0 && pending == 0)
		return; /* the timer repeats */
	snprintf(why, sizeof(why),
		 " (nothing read for %.0f s, requests waiting)", SRV_STALL_SEC);
	client_dropped(c, why);
	/* Freed here, not by reap_cb: libev runs check watchers before the
	 * timers of the same iteration, and a paused client that reads
	 * nothing may not wake the loop again. Nothing holds c here. */
	client_free(c);
}

/*
 * A client can be doomed from anywhere (an engine callback sending it an
 * event it has no room for); it is freed here, after the loop iteration's
 * callbacks, never from under a caller that still holds it.
 */
static void reap_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	struct srv *srv = container_of(w, struct srv, reap);
	struct srv_client *c, *next;

	for (c = LIST_FIRST(&srv->clients); c; c = next) {
		next = LIST_NEXT(c, link);
		if (c->doomed)
			client_free(c);
	}
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct srv *srv = container_of(w, struct srv, accept_io);

	for (int i = 0; i < SRV_ACCEPT_BATCH; i++) {
		socklen_t len = sizeof(struct ucred);
		struct srv_client *c;
		int fd = accept4(srv->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				log_warn("accept: %s", strerror(errno));
			return;
		}
		if (srv->nclients >= srv->cfg.max_clients) {
			srv->counters.clients_refused++;
			log_warn("refusing a client: %u clients connected",
				 srv->nclients);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
			log_warn("SO_PEERCRED: %s", strerror(errno));
			free(c);
			close(fd);
			continue;
		}
		if (getrandom(c->token, sizeof(c->token), 0) !=
		    (ssize_t)sizeof(c->token)) {
			log_warn("getrandom: %s", strerror(errno));
			free(c);
			close(fd);
			continue;
		}
		c->srv = srv;
		c->fd = fd;
		c->serial = ++srv->next_serial;
		client_read_comm(c);
		ev_timer_init(&c->resume, resume_cb, 0., 0.);
		STAILQ_INIT(&c->out);
		STAILQ_INIT(&c->deferred);
		ev_io_init(&c->io, client_cb, fd, EV_READ);
		ev_io_start(loop, &c->io);
		ev_timer_init(&c->stall, stall_cb, SRV_STALL_SEC,
			      SRV_STALL_SEC);
		LIST_INSERT_HEAD(&srv->clients, c, link);
		srv->nclients++;
		srv->counters.clients_accepted++;
		log_debug("client %llu connected (pid %d uid %u)",
			  (unsigned long long)c->serial, (int)c->cred.pid,
			  (unsigned int)c->cred.uid);
	}
}

static int srv_bind(struct srv *srv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = srv->cfg.path;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_err("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file left by a daemon that died is stale; a live daemon
	 * would answer a connect, and then we refuse to steal its path. */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		log_err("%s: another cmd is serving this socket", path);
		close(fd);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    /* Any local user may connect: what each may do is decided per
	     * request, from SO_PEERCRED. */
	    chmod(path, 0666) || listen(fd, 128)) {
		int err = errno;

		log_err("%s: %s", path, strerror(err));
		close(fd);
		return -err;
	}
	srv->unlink_path = true;
	return fd;
}

struct srv *srv_new(struct ev_loop *loop, const struct srv_config *cfg,
		    const struct srv_hooks *hooks, void *ctx)
{
	struct srv *srv = calloc(1, sizeof(*srv));
	int fd;

	if (!srv)
		return NULL;
	srv->loop = loop;
	srv->cfg = *cfg;
	srv->hooks = *hooks;
	srv->ctx = ctx;
	LIST_INIT(&srv->clients);
	spare_init(&srv->spare, SRV_OUT_SPARE_MAX,
		   sizeof(struct srv_out) + SRV_OUT_SMALL,
		   &srv->counters.spare_bytes);
	if (cfg->listen_fd >= 0) {
		fd = cfg->listen_fd;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	} else {
		fd = srv_bind(srv);
	}
	if (fd < 0) {
		free(srv);
		errno = -fd;
		return NULL;
	}
	srv->fd = fd;
	ev_io_init(&srv->accept_io, accept_cb, fd, EV_READ);
	ev_io_start(loop, &srv->accept_io);
	ev_check_init(&srv->reap, reap_cb);
	ev_check_start(loop, &srv->reap);
	LIST_INIT(&srv->dirty);
	ev_prepare_init(&srv->flush, flush_cb);
	ev_prepare_start(loop, &srv->flush);
	return srv;
}

void srv_free(struct srv *srv)
{
	struct srv_client *c;

	if (!srv)
		return;
	while ((c = LIST_FIRST(&srv->clients)))
		client_free(c);
	/* Every node is spare now; none is kept past the server. */
	spare_drain(&srv->spare);
	ev_check_stop(srv->loop, &srv->reap);
	ev_prepare_stop(srv->loop, &srv->flush);
	ev_io_stop(srv->loop, &srv->accept_io);
	if (!srv->keep_listener) {
		close(srv->fd);
		if (srv->unlink_path)
			unlink(srv->cfg.path);
	}
	free(srv);
}

/* ------------------------------------------------------------------ */
/* Handing over to a successor (cmp.h, "Restarts") */

void srv_handoff_drain(struct srv *srv, double max_wait_s)
{
	struct srv_client *c, *next;
	double deadline;

	ev_io_stop(srv->loop, &srv->accept_io);
	/* Clients already going away go now, as they would have. */
	for (c = LIST_FIRST(&srv->clients); c; c = next) {
		next = LIST_NEXT(c, link);
		if (c->doomed)
			client_free(c);
	}
	/* From here on a client's send fails (EPIPE): what it sends later
	 * was not seen, and it sends it again to the successor. */
	LIST_FOREACH(c, &srv->clients, link)
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RD);
	/* What it sent before is read and answered, all of it. */
	srv->draining = true;
	LIST_FOREACH(c, &srv->clients, link)
	if (c->fd >= 0 && !c->doomed)
		client_read(c);
	srv->draining = false;
	/* Write what the sockets take, waiting a little for clients that
	 * read; the rest goes into the state (OUT records). */
	deadline = ev_time() + max_wait_s;
	for (;;) {
		struct pollfd pfd[64];
		nfds_t n = 0;
		double left;

		LIST_FOREACH(c, &srv->clients, link)
		{
			if (c->fd < 0 || STAILQ_EMPTY(&c->out))
				continue;
			if (client_flush(c) || STAILQ_EMPTY(&c->out))
				continue;
			if (n < ARRAY_SIZE(pfd))
				pfd[n++] = (struct pollfd){ .fd = c->fd,
							    .events = POLLOUT };
		}
		left = deadline - ev_time();
		if (!n || left <= 0)
			break;
		poll(pfd, n, (int)(left * 1000) + 1);
	}
}

void srv_state_save(struct srv *srv, struct state_w *w,
		    void (*save_cb)(void *ctx, struct srv_client *c,
				    struct state_w *w),
		    void *ctx)
{
	struct srv_client *c;

	sw_rec_begin(w, STATE_REC_SERVER);
	{
		const struct srv *o = srv;

#define STATE_SERVER(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
	}
	sw_rec_end(w);
	LIST_FOREACH(c, &srv->clients, link)
	{
		const struct srv_client *o = c;
		const struct srv_out *q;

		/* Without HELLO it has no ids, nothing to hand over. */
		if (!c->hello_done || c->doomed)
			continue;
		sw_rec_begin(w, STATE_REC_CLIENT);
#define STATE_CLIENT(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
		sw_rec_end(w);
		save_cb(ctx, c, w);
		STAILQ_FOREACH(q, &c->out, link)
		{
			sw_rec_begin(w, STATE_REC_OUT);
			sw_u8(w, q->event);
			sw_var(w, q->buf, q->len);
			sw_rec_end(w);
		}
	}
}

void srv_handoff_close(struct srv *srv)
{
	srv->handing_over = true;
	srv_free(srv);
}

/* ------------------------------------------------------------------ */
/* Restoring a predecessor's sessions */

#define REFUSE(text)                                                           \
	do {                                                                   \
		*why = text;                                                   \
		return NULL;                                                   \
	} while (0)

int srv_restore_server(struct srv *srv, struct state_r *r, const char **why)
{
	struct srv *o = srv;

#define STATE_SERVER(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
	return sr_end(r, why);
}

struct srv_client *srv_restore_client(struct srv *srv, struct state_r *r,
				      const char **why)
{
	struct srv_client tmp = { 0 }, *o = &tmp, *c, *x;

#define STATE_CLIENT(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
	if (sr_end(r, why))
		return NULL;
	if (!tmp.serial || tmp.serial > srv->next_serial)
		REFUSE("a client's serial is zero or beyond the server's");
	if (tmp.version < CMP_VERSION_MIN || tmp.version > CMP_VERSION_MAX)
		REFUSE("a client speaks a protocol version we do not");
	LIST_FOREACH(x, &srv->clients, link)
	if (x->serial == tmp.serial ||
	    !memcmp(x->token, tmp.token, CMP_TOKEN_SIZE))
		REFUSE("two clients share a serial or a token");
	c = calloc(1, sizeof(*c));
	if (!c)
		REFUSE("no memory for a client");
	*c = tmp;
	c->srv = srv;
	c->fd = -1;
	c->hello_done = true;
	c->detached = true;
	STAILQ_INIT(&c->out);
	STAILQ_INIT(&c->deferred);
	ev_io_init(&c->io, client_cb, -1, EV_READ);
	ev_timer_init(&c->stall, stall_cb, SRV_STALL_SEC, SRV_STALL_SEC);
	ev_timer_init(&c->resume, resume_cb, srv->cfg.resume_ms / 1000.0, 0.);
	LIST_INSERT_HEAD(&srv->clients, c, link);
	srv->nclients++;
	return c;
}

#undef REFUSE

int srv_restore_out(struct srv_client *c, struct state_r *r, const char **why)
{
	struct srv_out *o;
	bool event = sr_bool(r);
	size_t n;
	const uint8_t *p = sr_var(r, &n, CMP_MSG_MAX);
	struct cmp_hdr hdr;

	if (sr_end(r, why))
		return -EINVAL;
	if (!c) {
		*why = "an OUT record follows no client";
		return -EINVAL;
	}
	if (n < sizeof(hdr)) {
		*why = "a queued message is shorter than its header";
		return -EINVAL;
	}
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.length != n || event != (hdr.type == CMP_TYPE_EVENT)) {
		*why = "a queued message's header does not match it";
		return -EINVAL;
	}
	o = out_get(c->srv, n);
	if (!o) {
		*why = "no memory for a queued message";
		return -EINVAL;
	}
	o->len = n;
	o->event = event;
	memcpy(o->buf, p, n);
	STAILQ_INSERT_TAIL(&c->out, o, link);
	c->queued++;
	c->events_queued += event;
	return 0;
}

void srv_restore_counters(struct srv *srv, const struct state_counters_rec *c)
{
	uint64_t spare = srv->counters.spare_bytes;

	state_counters_copy(&srv->counters, sizeof(srv->counters), c);
	srv->counters.spare_bytes = spare; /* this process's memory */
}

unsigned int srv_restore_done(struct srv *srv)
{
	struct srv_client *c;
	unsigned int n = 0;

	LIST_FOREACH(c, &srv->clients, link)
	if (c->detached) {
		ev_timer_start(srv->loop, &c->resume);
		n++;
	}
	return n;
}

void srv_restore_abort(struct srv *srv)
{
	struct srv_client *c, *next;

	srv->handing_over = true; /* their ids are not the engine's now */
	for (c = LIST_FIRST(&srv->clients); c; c = next) {
		next = LIST_NEXT(c, link);
		if (c->detached)
			client_free(c);
	}
	srv->handing_over = false;
}

bool srv_client_detached(const struct srv_client *c)
{
	return c->detached;
}

int srv_listen_fd(struct srv *srv)
{
	srv->keep_listener = true;
	return srv->fd;
}

unsigned int srv_sessions_waiting(const struct srv *srv)
{
	const struct srv_client *c;
	unsigned int n = 0;

	LIST_FOREACH(c, &srv->clients, link)
	n += c->detached;
	return n;
}
