/* SPDX-License-Identifier: MIT */
/*
 * cmc_ping: the CM handshake alone, with no QP behind it.
 *
 *   cmc_ping -l [-S service_id] [-b backlog] [-n count] [-s socket]
 *   cmc_ping [-S service_id] [-c count] [-m in_flight] [-s socket] dest
 *
 * The listener (-l) accepts every REQ whose private data reads "ping N"
 * and answers "pong N" in its REP. The client opens count connections, at
 * most in_flight at a time; each goes through the whole life of a
 * connection:
 *
 *   REQ "ping N" -> REP "pong N" -> RTU -> DREQ -> DREP -> timewait
 *
 * and is destroyed when timewait is over. At the end both sides print
 * what they counted, the wall time and the rate.
 *
 * Why there is no QP: the CM only carries QP numbers and PSNs in its
 * messages, it never touches the QPs. So a program may run the protocol
 * with made-up numbers, which tests the path the real examples take
 * (application -> library -> daemon -> fabric -> daemon -> library ->
 * application, and back) without an RDMA device: it runs on the daemon's
 * simulated fabric, and measures connection setup rate. Never point a
 * program that sends data at this listener: there is no QP to receive it.
 *
 * Both modes drive the library without blocking: one poll() loop over
 * cmc_fd(), and cmc_get_event(ch, &ev, 0) until -EAGAIN each time it
 * fires. That is the shape an application with its own event loop
 * (libev, epoll, ...) takes. The requests themselves (connect, accept,
 * rtu, disconnect) are short synchronous round trips to the local daemon.
 */
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/queue.h>
#include <time.h>

/* Only for the option and destination parsing the examples share: this
 * program makes no verbs calls. */
#include "cmc_common.h"

/* "ping" in ASCII, so that cmc_ping and cmc_server can run side by side. */
#define PING_DEFAULT_SERVICE 0x0000000070696e67ull
#define PING_DEFAULT_BACKLOG 128
#define PING_DEFAULT_IN_FLIGHT 16
#define PING_MSG_MAX 32 /* "ping 4294967295" and its NUL fit */
#define PING_MAX_IN_FLIGHT 65536

/* IBTA Table 109: the reason a consumer gives for its own refusals. */
#define REJ_CONSUMER_DEFINED 28

/* CM timeouts of our REQs (see cli_start()). */
#define CM_RESPONSE_TIMEOUT 20
#define CM_MAX_RETRIES 15

/*
 * The daemon guarantees an outcome for every step (a REQ gets a REP, a
 * REJ or a timeout; a DREQ a DREP or a timeout), so the client never
 * waits forever on the protocol: at the timeouts above, the longest is
 * 16 tries of about 4.3 s. This only guards against a daemon that stops
 * answering altogether.
 */
#define STALL_S 120.0
#define POLL_MS 1000

/* Past this many, per-connection errors are counted but not printed. */
#define ERRORS_SHOWN 10

struct opts {
	bool listen;
	uint64_t service_id;
	unsigned int backlog; /* -l */
	unsigned int count; /* -l: 0 = forever */
	unsigned int in_flight; /* client */
	const char *socket; /* NULL: $CMD_SOCKET or the default */
	const char *dst; /* client */
};

static volatile sig_atomic_t stop;
static unsigned int errors_shown;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One line on stderr about a connection, up to ERRORS_SHOWN of them: a
 * run of thousands that all fail the same way should not flood. */
__attribute__((format(printf, 2, 3))) static void
conn_error(unsigned long index, const char *fmt, ...)
{
	va_list ap;

	if (errors_shown++ >= ERRORS_SHOWN) {
		if (errors_shown == ERRORS_SHOWN + 1)
			fprintf(stderr, "(further errors not shown)\n");
		return;
	}
	fprintf(stderr, "conn %lu: ", index);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Made-up QP numbers. A real QPN is unique on its HCA while the QP lives,
 * and the CM relies on that: a REQ that reuses the (QPN, CA GUID) of a
 * connection still alive or in timewait is a stale connection and gets
 * REJ "stale connection" (reason 10, IBTA Table 109). So fake numbers
 * must be unique too. Counting up from a random start keeps one run's
 * numbers distinct and makes it unlikely that two runs on one node (or a
 * run just after another) collide.
 * QPNs are 24 bits; 0 and 1 are the special QPs, never connected.
 */
struct qpn_gen {
	uint32_t next;
};

static void qpn_init(struct qpn_gen *g)
{
	g->next = 2 + (uint32_t)lrand48() % (0xffffff - 1);
}

static uint32_t qpn_next(struct qpn_gen *g)
{
	uint32_t qpn = g->next;

	g->next = g->next == 0xffffff ? 2 : g->next + 1;
	return qpn;
}

/*
 * Received private data is always the message's whole area: the wire
 * does not say how much of it the peer meant. Both sides send their text
 * with its NUL, so look for the NUL inside the area, never past it.
 */
static bool pd_text(const uint8_t *pd, size_t len, char *text, size_t size)
{
	const uint8_t *nul = memchr(pd, '\0', len);

	if (!nul || (size_t)(nul - pd) >= size)
		return false;
	memcpy(text, pd, (size_t)(nul - pd) + 1);
	return true;
}

/* How long one phase of the connections took: average and worst. */
struct phase {
	const char *name;
	const char *what;
	double sum, max;
	unsigned long n;
};

static void phase_add(struct phase *p, double seconds)
{
	p->sum += seconds;
	if (seconds > p->max)
		p->max = seconds;
	p->n++;
}

static void phase_print(const struct phase *p)
{
	if (!p->n)
		return;
	printf("%-16s avg %.3f ms, max %.3f ms (%s, %lu)\n", p->name,
	       p->sum / (double)p->n * 1e3, p->max * 1e3, p->what, p->n);
}

static void print_summary(unsigned long started, unsigned long completed,
			  unsigned long established, unsigned long rejected,
			  unsigned long errors, double wall)
{
	printf("connections:     %lu started, %lu completed\n", started,
	       completed);
	printf("established:     %lu\n", established);
	printf("rejected/errors: %lu/%lu\n", rejected, errors);
	printf("wall time:       %.3f s\n", wall);
	printf("rate:            %.1f connections/s\n",
	       wall > 0 ? (double)completed / wall : 0.0);
}

/* ---------------------------------------------------------------------
 * Listener
 */

struct srv_conn {
	LIST_ENTRY(srv_conn) link;
	struct cmc_id *id;
	unsigned long index; /* in the order the REQs came */
	bool established;
	bool failed;
};

struct server {
	const struct opts *o;
	struct cmc_channel *ch;
	struct cmc_id *listener;
	LIST_HEAD(, srv_conn) conns; /* accepted, not yet destroyed */
	struct qpn_gen qpn;
	unsigned long taken; /* REQs of this run: accepted or refused */
	unsigned long finished; /* of those, the ones done with */
	unsigned long completed, established, rejected, errors;
	unsigned long turned_away; /* REQs beyond -n */
	bool lost; /* the listener's device went away */
	double t_first, t_last; /* the first REQ, the last connection done */
};

/* One REQ of the run is done with; counter says how it went. */
static void srv_finish(struct server *s, unsigned long *counter)
{
	(*counter)++;
	s->finished++;
	s->t_last = now_s();
}

/* Destroy is final (DESIGN.md lesson 3): whatever state the id is in, the
 * daemon sends what the protocol still needs, and no event of it follows. */
static void srv_conn_free(struct server *s, struct srv_conn *c)
{
	LIST_REMOVE(c, link);
	cmc_destroy_id(c->id);
	free(c);
}

/* Refuse a REQ and forget its id. The REJ returns the listener's credit. */
static void srv_refuse(struct cmc_id *id, const char *why)
{
	cmc_reject(id, REJ_CONSUMER_DEFINED, NULL, 0, why,
		   (uint8_t)(strlen(why) + 1));
	cmc_destroy_id(id);
}

static void srv_on_req(struct server *s, struct cmc_event *ev)
{
	char ping[PING_MSG_MAX], pong[PING_MSG_MAX];
	struct cmc_accept_param ap;
	struct srv_conn *c;
	unsigned long index;
	const char *n;
	int ret;

	if (s->o->count && s->taken == s->o->count) {
		/* More clients than -n: say no at once rather than let
		 * them wait for a REP that never comes. */
		srv_refuse(ev->id, "busy");
		s->turned_away++;
		return;
	}
	index = s->taken++;
	if (!s->t_first)
		s->t_first = now_s();

	n = ping + 5;
	if (!pd_text(ev->u.req.private_data, ev->u.req.private_data_len, ping,
		     sizeof(ping)) ||
	    strncmp(ping, "ping ", 5) || !*n ||
	    strspn(n, "0123456789") != strlen(n)) {
		conn_error(index, "REQ without a \"ping N\", rejected");
		srv_refuse(ev->id, "no ping");
		srv_finish(s, &s->rejected);
		return;
	}
	snprintf(pong, sizeof(pong), "pong %s", n);

	c = calloc(1, sizeof(*c));
	if (!c) {
		conn_error(index, "out of memory");
		cmc_destroy_id(ev->id); /* sends the REJ */
		srv_finish(s, &s->errors);
		return;
	}
	c->id = ev->id;
	c->index = index;
	LIST_INSERT_HEAD(&s->conns, c, link);

	/*
	 * The new id's first event carried the listener's context. Give it
	 * its own now, while we still hold that event unacked: the daemon
	 * sends the id's next event only after the ack (lesson 2), so every
	 * later event is sure to carry c.
	 */
	ret = cmc_set_context(c->id, c);
	if (ret) {
		conn_error(index, "set context: %s", cmc_strerror(ret));
		goto fail;
	}

	/*
	 * A real server creates its QP here and moves it to INIT and RTR
	 * before accepting (cmc_modify_qp); we only need numbers. No QP
	 * means no RDMA reads either way: no responder resources, no
	 * initiator depth.
	 */
	memset(&ap, 0, sizeof(ap));
	ap.qp_num = qpn_next(&s->qpn);
	ap.start_psn = ex_psn();
	ap.rnr_retry_count = 7;
	ap.private_data = pong;
	ap.private_data_len = (uint8_t)(strlen(pong) + 1);
	ret = cmc_accept(c->id, &ap);
	if (ret) {
		conn_error(index, "accept: %s", cmc_strerror(ret));
		goto fail;
	}
	return;
fail:
	srv_conn_free(s, c);
	srv_finish(s, &s->errors);
}

/* Every event but REQ_RECEIVED: c is the id's context. */
static void srv_on_conn_event(struct server *s, struct srv_conn *c,
			      struct cmc_event *ev)
{
	bool done = false;
	int ret;

	switch (ev->type) {
	case CMC_EVENT_ESTABLISHED:
		/* The client's RTU: a real server's QP goes to RTS now. */
		c->established = true;
		s->established++;
		break;
	case CMC_EVENT_DREQ_RECEIVED:
		/* Answer the client's DREQ: cmc_disconnect() in DREQ_RCVD
		 * sends the DREP. TIMEWAIT_EXIT follows. */
		ret = cmc_disconnect(c->id, NULL, 0);
		if (ret) {
			conn_error(c->index, "DREP: %s", cmc_strerror(ret));
			c->failed = true;
			done = true;
		}
		break;
	case CMC_EVENT_TIMEWAIT_EXIT:
		/* Timewait is over: a real QP could be reused now. */
		done = true;
		break;
	case CMC_EVENT_REJ_RECEIVED:
		/* The client refused our REP (e.g. the pong was wrong). */
		conn_error(c->index, "client rejected the REP, reason %u",
			   ev->u.rej.reason);
		c->failed = true;
		done = true;
		break;
	case CMC_EVENT_CONNECT_ERROR:
		/* No RTU came while the daemon resent the REP. */
		conn_error(c->index, "no RTU: %s", cmc_strerror(ev->status));
		c->failed = true;
		done = true;
		break;
	case CMC_EVENT_DISCONNECT_TIMEOUT:
		/* Only after a DREQ of ours, which we never send; timewait
		 * follows anyway. */
		c->failed = true;
		break;
	case CMC_EVENT_MRA_RECEIVED:
	case CMC_EVENT_PORT_ERROR:
		/* Informational: the id stays, the protocol goes on. */
		break;
	case CMC_EVENT_DEVICE_REMOVAL:
	case CMC_EVENT_ROUTE_RESOLVED:
	case CMC_EVENT_REQ_RECEIVED:
	case CMC_EVENT_REP_RECEIVED:
	case CMC_EVENT_DREP_RECEIVED:
	case CMC_EVENT_LAP_RECEIVED:
	case CMC_EVENT_APR_RECEIVED:
	case CMC_EVENT_SIDR_REQ_RECEIVED:
	case CMC_EVENT_SIDR_REP_RECEIVED:
	case CMC_EVENT_REQUEST_ERROR: /* only in asynchronous mode */
		/* Nothing a ping expects: give the connection up, the
		 * daemon ends it properly on destroy. */
		conn_error(c->index, "unexpected %s (status %d)",
			   cmc_event_str(ev->type), ev->status);
		c->failed = true;
		done = true;
		break;
	}
	/* Ack before freeing: the ack needs the id to still be ours. */
	cmc_ack_event(ev);
	if (!done)
		return;
	/* Complete: established, then timewait to its end. */
	srv_finish(s,
		   !c->failed && c->established ? &s->completed : &s->errors);
	srv_conn_free(s, c);
}

static void srv_on_event(struct server *s, struct cmc_event *ev)
{
	struct srv_conn *c;

	if (ev->type == CMC_EVENT_REQ_RECEIVED) {
		srv_on_req(s, ev);
		cmc_ack_event(ev);
		return;
	}
	if (ev->id == s->listener) {
		/* The listener's own events: one of its ports went down (it
		 * still listens on the others), or its device went away. */
		fprintf(stderr, "listener: %s: %s\n", cmc_event_str(ev->type),
			cmc_strerror(ev->status));
		if (ev->type == CMC_EVENT_DEVICE_REMOVAL)
			s->lost = true;
		cmc_ack_event(ev);
		return;
	}
	c = ev->context;
	if (!c) {
		/* Only REQ_RECEIVED carries the listener's (NULL) context:
		 * every other event belongs to an id we set up. */
		fprintf(stderr, "%s for id %u without a connection\n",
			cmc_event_str(ev->type), cmc_id_num(ev->id));
		cmc_ack_event(ev);
		return;
	}
	srv_on_conn_event(s, c, ev);
}

static int run_server(const struct opts *o)
{
	struct server s = { .o = o };
	struct cmc_event *ev;
	int ret = 1, r;

	LIST_INIT(&s.conns);
	qpn_init(&s.qpn);
	r = cmc_open(o->socket, "cmc_ping", &s.ch);
	if (r) {
		fprintf(stderr, "cannot reach the cmd daemon: %s\n",
			cmc_strerror(r));
		return 1;
	}
	/*
	 * The backlog is a credit (lesson 1): how many REQ_RECEIVED we may
	 * hold unanswered. We answer each at once, so it only needs to
	 * cover one burst between two polls; REQs beyond it are held by the
	 * daemon with an MRA, not lost.
	 */
	r = cmc_create_id(s.ch, NULL, CMC_QP_RC, &s.listener);
	if (!r)
		r = cmc_listen(s.listener, o->service_id, ~0ull, o->backlog,
			       NULL);
	if (r) {
		fprintf(stderr, "listen on 0x%" PRIx64 ": %s\n", o->service_id,
			cmc_strerror(r));
		goto out;
	}
	printf("listening on service id 0x%" PRIx64 ", backlog %u, ",
	       o->service_id, o->backlog);
	if (o->count)
		printf("%u connection(s)\n", o->count);
	else
		printf("until interrupted\n");
	/* Scripts wait for this line before they start the client. */
	fflush(stdout);

	while (!stop && !s.lost && (!o->count || s.finished < o->count)) {
		struct pollfd pfd = { .fd = cmc_fd(s.ch), .events = POLLIN };

		if (poll(&pfd, 1, POLL_MS) < 0 && errno != EINTR) {
			perror("poll");
			goto out;
		}
		/* Readable does not promise an event, and one wakeup may
		 * stand for many: drain until -EAGAIN. */
		while ((r = cmc_get_event(s.ch, &ev, 0)) == 0)
			srv_on_event(&s, ev);
		if (r != -EAGAIN) {
			fprintf(stderr, "cmd daemon: %s\n", cmc_strerror(r));
			goto out;
		}
	}
	ret = s.lost;
out:
	while (!LIST_EMPTY(&s.conns))
		srv_conn_free(&s, LIST_FIRST(&s.conns));
	if (s.turned_away)
		printf("turned away:     %lu (beyond -n)\n", s.turned_away);
	print_summary(s.taken, s.completed, s.established, s.rejected, s.errors,
		      s.t_last > s.t_first ? s.t_last - s.t_first : 0);
	/* Closing releases the listener too. */
	cmc_close(s.ch);
	if (ret || s.rejected || s.errors)
		return 1;
	return o->count && s.completed < o->count ? 1 : 0;
}

/* ---------------------------------------------------------------------
 * Client
 */

enum cli_result {
	CLI_OK = 0,
	CLI_REJECTED,
	CLI_ERROR,
};

/* One slot per connection in flight. A slot whose id is NULL is free. */
struct cli_conn {
	struct cmc_id *id;
	unsigned long index; /* the N of "ping N" */
	enum cli_result result;
	double t_req, t_dreq, t_drep; /* 0: did not happen */
};

struct client {
	const struct opts *o;
	struct cmc_channel *ch;
	struct cmc_addr dst;
	struct cli_conn *slots; /* o->in_flight of them */
	struct qpn_gen qpn;
	unsigned long started, open;
	unsigned long completed, established, rejected, errors;
	int fatal; /* the channel died: stop */
	struct phase connect, disconnect, timewait;
};

/* Send the REQ of the next connection from slot c. */
static int cli_start(struct client *cl, struct cli_conn *c)
{
	char ping[PING_MSG_MAX];
	struct cmc_conn_param p;
	int ret;

	memset(c, 0, sizeof(*c));
	c->index = cl->started++;
	/* The slot is the id's context: every event names its connection. */
	ret = cmc_create_id(cl->ch, c, CMC_QP_RC, &c->id);
	if (ret) {
		conn_error(c->index, "create id: %s", cmc_strerror(ret));
		c->id = NULL;
		return ret;
	}
	snprintf(ping, sizeof(ping), "ping %lu", c->index);
	memset(&p, 0, sizeof(p));
	p.service_id = cl->o->service_id;
	p.dst = cl->dst;
	p.src.kind = CMC_SEL_ANY; /* the daemon picks the port */
	/* Where a real client passes its QP's number (and moves it to INIT
	 * right after cmc_connect()). */
	p.qp_num = qpn_next(&cl->qpn);
	p.start_psn = ex_psn();
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	/*
	 * How long each side may take to answer a CM message (4.096 us *
	 * 2^20, about 4.3 s) and how often the daemon resends one that got
	 * no answer: the values the kernel's rdma_cm uses. A fast fabric
	 * answers in microseconds and never waits that long; a slow or
	 * lossy one needs the margin.
	 */
	p.local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	p.remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	p.max_cm_retries = CM_MAX_RETRIES;
	p.private_data = ping;
	p.private_data_len = (uint8_t)(strlen(ping) + 1);
	c->t_req = now_s();
	ret = cmc_connect(c->id, &p);
	if (ret) {
		conn_error(c->index, "connect: %s", cmc_strerror(ret));
		cmc_destroy_id(c->id);
		c->id = NULL;
		return ret;
	}
	cl->open++;
	return 0;
}

/* Keep slot c busy while connections remain to be started. */
static void cli_fill(struct client *cl, struct cli_conn *c)
{
	int ret;

	while (!cl->fatal && !stop && !c->id && cl->started < cl->o->count) {
		ret = cli_start(cl, c);
		if (ex_channel_dead(ret))
			cl->fatal = ret;
		else if (ret)
			cl->errors++;
	}
}

/* REP_RECEIVED: check the pong, confirm with the RTU, hang up at once. */
static bool cli_on_rep(struct client *cl, struct cli_conn *c,
		       const struct cmc_event *ev)
{
	char want[PING_MSG_MAX], got[PING_MSG_MAX];
	int ret;

	phase_add(&cl->connect, now_s() - c->t_req);
	snprintf(want, sizeof(want), "pong %lu", c->index);
	if (!pd_text(ev->u.rep.private_data, ev->u.rep.private_data_len, got,
		     sizeof(got)) ||
	    strcmp(got, want)) {
		conn_error(c->index, "REP without \"%s\", rejected", want);
		/* Refuse the REP, so that the server hears of it now
		 * instead of waiting out an RTU that never comes. */
		cmc_reject(c->id, REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		c->result = CLI_ERROR;
		return true;
	}
	/* A real client moves its QP to RTR and RTS here, before the RTU
	 * tells the server it may send. */
	ret = cmc_rtu(c->id, NULL, 0);
	if (ret) {
		conn_error(c->index, "RTU: %s", cmc_strerror(ret));
		c->result = CLI_ERROR;
		if (ex_channel_dead(ret))
			cl->fatal = ret;
		return true;
	}
	cl->established++;

	/* The handshake is the ping: with nothing to send, disconnect at
	 * once. DREP_RECEIVED (or DISCONNECT_TIMEOUT) follows, then
	 * TIMEWAIT_EXIT. */
	c->t_dreq = now_s();
	ret = cmc_disconnect(c->id, NULL, 0);
	if (ret) {
		conn_error(c->index, "DREQ: %s", cmc_strerror(ret));
		c->result = CLI_ERROR;
		if (ex_channel_dead(ret))
			cl->fatal = ret;
		return true;
	}
	return false;
}

/* Handle one event of connection c; true when c is done with. */
static bool cli_handle(struct client *cl, struct cli_conn *c,
		       const struct cmc_event *ev)
{
	double t = now_s();
	int ret;

	switch (ev->type) {
	case CMC_EVENT_REP_RECEIVED:
		return cli_on_rep(cl, c, ev);
	case CMC_EVENT_REJ_RECEIVED:
		/* Reason 8 (invalid service id) means nobody listens. */
		conn_error(c->index, "rejected, reason %u", ev->u.rej.reason);
		c->result = CLI_REJECTED;
		return true;
	case CMC_EVENT_CONNECT_ERROR:
		conn_error(c->index, "connect failed: %s",
			   cmc_strerror(ev->status));
		c->result = CLI_ERROR;
		return true;
	case CMC_EVENT_MRA_RECEIVED:
		/* The server's daemon holds our REQ (its listener is out
		 * of credit) and asks us to wait longer: keep waiting. */
		return false;
	case CMC_EVENT_DREQ_RECEIVED:
		/* The server hung up first: answer with the DREP.
		 * TIMEWAIT_EXIT follows. */
		ret = cmc_disconnect(c->id, NULL, 0);
		if (ret) {
			conn_error(c->index, "DREP: %s", cmc_strerror(ret));
			c->result = CLI_ERROR;
			if (ex_channel_dead(ret))
				cl->fatal = ret;
			return true;
		}
		return false;
	case CMC_EVENT_DREP_RECEIVED:
		if (c->t_dreq)
			phase_add(&cl->disconnect, t - c->t_dreq);
		c->t_drep = t;
		return false;
	case CMC_EVENT_DISCONNECT_TIMEOUT:
		/* The id is in timewait anyway; TIMEWAIT_EXIT follows. */
		conn_error(c->index, "no DREP from the server");
		c->result = CLI_ERROR;
		return false;
	case CMC_EVENT_TIMEWAIT_EXIT:
		if (c->t_drep)
			phase_add(&cl->timewait, t - c->t_drep);
		return true;
	case CMC_EVENT_PORT_ERROR:
		/* The port went down; the id stays and may yet finish. */
		return false;
	case CMC_EVENT_DEVICE_REMOVAL:
	case CMC_EVENT_ROUTE_RESOLVED:
	case CMC_EVENT_REQ_RECEIVED:
	case CMC_EVENT_ESTABLISHED:
	case CMC_EVENT_LAP_RECEIVED:
	case CMC_EVENT_APR_RECEIVED:
	case CMC_EVENT_SIDR_REQ_RECEIVED:
	case CMC_EVENT_SIDR_REP_RECEIVED:
	case CMC_EVENT_REQUEST_ERROR: /* only in asynchronous mode */
		conn_error(c->index, "unexpected %s (status %d)",
			   cmc_event_str(ev->type), ev->status);
		c->result = CLI_ERROR;
		return true;
	}
	return false;
}

static void cli_on_event(struct client *cl, struct cmc_event *ev)
{
	struct cli_conn *c = ev->context;
	bool done = cli_handle(cl, c, ev);

	/* Ack every event, and promptly: the id's next one waits for it. */
	cmc_ack_event(ev);
	if (!done)
		return;
	/* Destroy is final: once it returns, no event of this id can come,
	 * so the slot is free for the next connection right away. */
	cmc_destroy_id(c->id);
	c->id = NULL;
	cl->open--;
	switch (c->result) {
	case CLI_OK:
		cl->completed++;
		break;
	case CLI_REJECTED:
		cl->rejected++;
		break;
	case CLI_ERROR:
		cl->errors++;
		break;
	}
	cli_fill(cl, c);
}

static int run_client(const struct opts *o)
{
	struct client cl = {
		.o = o,
		.connect = { .name = "connect:", .what = "REQ to REP" },
		.disconnect = { .name = "disconnect:", .what = "DREQ to DREP" },
		.timewait = { .name = "timewait:",
			      .what = "DREP to TIMEWAIT_EXIT" },
	};
	struct cmc_daemon_info info;
	unsigned int in_flight = o->in_flight;
	struct cmc_event *ev;
	double t0, last;
	int r;

	if (ex_parse_dst(o->dst, &cl.dst)) {
		fprintf(stderr,
			"bad destination %s (lid:N, a GID or an IP "
			"address)\n",
			o->dst);
		return 2;
	}
	qpn_init(&cl.qpn);
	r = cmc_open(o->socket, "cmc_ping", &cl.ch);
	if (r) {
		fprintf(stderr, "cannot reach the cmd daemon: %s\n",
			cmc_strerror(r));
		return 1;
	}
	/* Each connection in flight is an id, and the daemon limits how
	 * many ids one client holds: more would only fail with -EMFILE. */
	cmc_daemon_info(cl.ch, &info);
	if (info.max_ids && in_flight > info.max_ids) {
		fprintf(stderr,
			"the daemon allows %u ids per client: "
			"lowering -m to %u\n",
			info.max_ids, info.max_ids);
		in_flight = info.max_ids;
	}
	if (in_flight > o->count)
		in_flight = o->count;
	cl.slots = calloc(in_flight, sizeof(*cl.slots));
	if (!cl.slots) {
		fprintf(stderr, "out of memory\n");
		cmc_close(cl.ch);
		return 1;
	}
	printf("%u connection(s) to %s, service id 0x%" PRIx64
	       ", up to %u in flight\n",
	       o->count, o->dst, o->service_id, in_flight);

	t0 = last = now_s();
	for (unsigned int i = 0; i < in_flight; i++)
		cli_fill(&cl, &cl.slots[i]);
	while (!cl.fatal && !stop && (cl.open || cl.started < o->count)) {
		struct pollfd pfd = { .fd = cmc_fd(cl.ch), .events = POLLIN };

		r = poll(&pfd, 1, POLL_MS);
		if (r < 0 && errno != EINTR) {
			perror("poll");
			break;
		}
		/* Drain: readable does not promise an event, and one wakeup
		 * may stand for many. */
		while (!cl.fatal && (r = cmc_get_event(cl.ch, &ev, 0)) == 0) {
			last = now_s();
			cli_on_event(&cl, ev);
		}
		if (!cl.fatal && r != -EAGAIN)
			cl.fatal = r;
		if (!cl.fatal && now_s() - last > STALL_S) {
			fprintf(stderr,
				"no event for %.0f s with %lu "
				"connection(s) open: giving up\n",
				STALL_S, cl.open);
			break;
		}
	}
	if (cl.fatal)
		fprintf(stderr, "cmd daemon: %s\n", cmc_strerror(cl.fatal));
	if (stop)
		fprintf(stderr, "interrupted\n");
	if (cl.open)
		fprintf(stderr, "%lu connection(s) left unfinished\n", cl.open);

	print_summary(cl.started, cl.completed, cl.established, cl.rejected,
		      cl.errors, now_s() - t0);
	phase_print(&cl.connect);
	phase_print(&cl.disconnect);
	phase_print(&cl.timewait);

	/* Closing the channel destroys the ids still open; the daemon
	 * ends their connections as the protocol requires. */
	cmc_close(cl.ch);
	free(cl.slots);
	return cl.completed == o->count ? 0 : 1;
}

/* ---------------------------------------------------------------------
 * Options
 */

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -l [-S service_id] [-b backlog] [-n count] "
		"[-s socket]\n"
		"       %s [-S service_id] [-c count] [-m in_flight] "
		"[-s socket] dest\n"
		"  -l  listen: answer each \"ping N\" with \"pong N\"\n"
		"  -S  service id (default 0x%" PRIx64 ")\n"
		"  -b  listen backlog (default %u)\n"
		"  -n  exit after this many connections (default 0: never)\n"
		"  -c  connections to make (default 1)\n"
		"  -m  connections in flight at once (default %u)\n"
		"  -s  cmd socket (default $CMD_SOCKET or %s)\n"
		"  dest: lid:N, a GID (fe80::...) or an IPv4/IPv6 address\n",
		prog, prog, (uint64_t)PING_DEFAULT_SERVICE,
		PING_DEFAULT_BACKLOG, PING_DEFAULT_IN_FLIGHT,
		CMC_DEFAULT_SOCKET);
}

static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *v)
{
	uint64_t u;

	if (ex_parse_u64(s, &u) || u < min || u > max)
		return -EINVAL;
	*v = (unsigned int)u;
	return 0;
}

/* 0, -EINVAL (usage printed on stderr), or 1 for -h (on stdout). */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	bool listen_only = false, client_only = false, count_set = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->service_id = PING_DEFAULT_SERVICE;
	o->backlog = PING_DEFAULT_BACKLOG;
	o->in_flight = PING_DEFAULT_IN_FLIGHT;
	while ((c = getopt(argc, argv, "lS:b:n:c:m:s:h")) != -1) {
		switch (c) {
		case 'l':
			o->listen = true;
			break;
		case 'S':
			if (ex_parse_u64(optarg, &o->service_id))
				goto bad;
			break;
		case 'b':
			if (parse_uint(optarg, 1, UINT_MAX, &o->backlog))
				goto bad;
			listen_only = true;
			break;
		case 'n':
			if (parse_uint(optarg, 0, UINT_MAX, &o->count))
				goto bad;
			listen_only = count_set = true;
			break;
		case 'c':
			if (parse_uint(optarg, 1, UINT_MAX, &o->count))
				goto bad;
			client_only = count_set = true;
			break;
		case 'm':
			if (parse_uint(optarg, 1, PING_MAX_IN_FLIGHT,
				       &o->in_flight))
				goto bad;
			client_only = true;
			break;
		case 's':
			o->socket = optarg;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 1;
		default:
			goto bad;
		}
	}
	if (o->listen) {
		/* Without -n, serve until interrupted (o->count 0). */
		if (client_only || optind != argc)
			goto bad;
		return 0;
	}
	if (listen_only || optind != argc - 1)
		goto bad;
	if (!count_set)
		o->count = 1;
	o->dst = argv[optind];
	return 0;
bad:
	usage(stderr, argv[0]);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct opts o;
	int r;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? 2 : 0; /* bad options, or -h */
	/* Without SA_RESTART, so that poll() returns and the loop sees the
	 * flag; the summary is printed either way. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	srand48(time(NULL) ^ getpid());
	return o.listen ? run_server(&o) : run_client(&o);
}
