// SPDX-License-Identifier: MIT
/*
 * cmbench: connection setup and teardown through cmd, modelled on
 * rdma-core's cmtime (librdmacm/examples/cmtime.c).
 *
 *   cmbench -l [-S sid] [-b backlog] [-n count] [-s socket] [--qp]
 *              [-d dev [-i port] [-g gid_index]] [--daemon-pid P]...
 *   cmbench [-S sid] [-c count] [-m in_flight] [-s socket] [--qp]
 *           [-d dev [-i port] [-g gid_index]] [--hold S]
 *           [--sample L1,L2,...] [--probe K] [--daemon-pid P]... dest
 *
 * The client sets up all count connections, at most in_flight at a time,
 * holds them all (established) for --hold seconds, then tears them all
 * down, again at most in_flight at a time. Per connection it times
 *
 *   connect     REQ sent (cmc_connect) -> REP_RECEIVED
 *   establish   REP_RECEIVED -> RTU sent (cmc_rtu returned; with --qp the
 *               QP's RTR and RTS transitions come first)
 *   setup       connect + establish
 *   disconnect  DREQ sent (cmc_disconnect) -> DREP_RECEIVED
 *   total       setup + disconnect
 *
 * and prints min/median/p99/max of each step in microseconds, the setup
 * and teardown rates, and, for each --daemon-pid, that daemon's CPU time
 * (utime + stime of /proc/P/stat) and resident memory (VmRSS of
 * /proc/P/status) before, while holding and after, per connection. The
 * last line is "key=value ..." for scripts.
 *
 * The server (-l) accepts every REQ and times accept (REQ_RECEIVED ->
 * REP sent), establish (REP sent -> ESTABLISHED) and disconnect
 * (DREQ_RECEIVED -> DREP sent); it stops after -n connections are torn
 * down (0: on SIGINT/SIGTERM) and prints the same kind of table.
 *
 * --sample L1,L2,... (client) draws the scale curve: when L connections
 * are established, the client lets the ones in flight finish, samples the
 * daemons' RSS, and makes the next --probe K connections one at a time,
 * so that their connect latency is the cost of one handshake with L
 * connections in the tables (lookup cost), free of queueing.
 *
 * Without --qp (the default) no verbs calls are made: QP numbers are made
 * up (unique per run, see cmc_ping.c), so this runs on the simulated
 * fabric. With --qp each connection has a real RC QP, moved through
 * INIT/RTR/RTS with cmc_modify_qp() and to ERR before its DREQ or DREP,
 * as rdma_cm does for cmtime (scripts/bench-rxe.sh compares the two).
 *
 * -d names the local port the connections use (the client's REQs leave
 * from it, the server listens on it; -g: the port owning that GID of
 * the device, as the examples' -g does); without it the daemon picks.
 *
 * The library is driven without blocking: one poll() over cmc_fd(), then
 * cmc_get_event(ch, &ev, 0) until -EAGAIN. The requests themselves are
 * the library's synchronous round trips to the local daemon, unless
 * --async: then the channel is in asynchronous mode (cmc_set_async()),
 * requests are queued and go out in batches (cmc_flush() before every
 * poll()), a failed one comes back as a REQUEST_ERROR event and counts
 * as a failed connection, and the times above end when a request is
 * queued rather than answered.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "cmclient.h"

#define BENCH_DEFAULT_SERVICE 0x00000000636d6268ull /* "cmbh" */
#define BENCH_DEFAULT_COUNT 1000
#define BENCH_DEFAULT_IN_FLIGHT 100
#define BENCH_DEFAULT_BACKLOG 65535
#define BENCH_DEFAULT_PROBE 200
#define BENCH_DEFAULT_STALL_S 60
#define BENCH_MAX_DAEMONS 8
#define BENCH_MAX_SAMPLES 32
#define REJ_CONSUMER_DEFINED 28
#define CM_RESPONSE_TIMEOUT 20
#define CM_MAX_RETRIES 15
#define POLL_MS 200

struct opts {
	bool listen;
	bool qp;
	bool async;
	const char *dev;
	int gid_index; /* -1: none */
	uint8_t ib_port;
	uint64_t service_id;
	unsigned int count;
	unsigned int in_flight;
	unsigned int backlog;
	unsigned int probe;
	double hold_s;
	double stall_s;
	const char *socket;
	const char *dst;
	unsigned int ndaemons;
	int daemon_pid[BENCH_MAX_DAEMONS];
	unsigned int nsamples;
	unsigned int sample[BENCH_MAX_SAMPLES];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool channel_dead(int err)
{
	return err == -ECONNRESET || err == -EPROTO || err == -ETIMEDOUT ||
	       err == -ENOMEM;
}

/*
 * Open the channel; --async switches it to asynchronous mode. Says why
 * it failed.
 */
static int open_channel(const struct opts *o, struct cmc_channel **chp)
{
	int r = cmc_open(o->socket, "cmbench", chp);

	if (r) {
		fprintf(stderr, "cannot reach cmd: %s\n", cmc_strerror(r));
		return r;
	}
	if (o->async) {
		r = cmc_set_async(*chp, 1);
		if (r)
			fprintf(stderr, "asynchronous mode: %s\n",
				cmc_strerror(r));
	}
	return r;
}

/*
 * poll() on the channel. Requests still queued (asynchronous mode) go
 * out first: an ACK_EVENT left in the queue would keep the daemon from
 * sending the very event we wait for. Returns poll()'s result (0 when
 * interrupted), or a negative errno: the flush's (the channel's) or
 * poll()'s.
 */
static int poll_channel(struct cmc_channel *ch, int timeout_ms)
{
	struct pollfd pfd = { .fd = cmc_fd(ch), .events = POLLIN };
	int r = cmc_flush(ch);

	if (r)
		return r;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r;
}

static unsigned int errors_shown;

__attribute__((format(printf, 1, 2))) static void conn_error(const char *fmt,
							     ...)
{
	va_list ap;

	if (errors_shown++ >= 10) {
		if (errors_shown == 11)
			fprintf(stderr, "(further errors not shown)\n");
		return;
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------------------
 * Daemon CPU and memory, from /proc
 */

struct dstat {
	bool ok;
	double cpu_s; /* utime + stime */
	unsigned long rss_kb;
	unsigned long ctxsw; /* voluntary + involuntary context switches */
};

static void dstat_read(int pid, struct dstat *d)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name may hold spaces and parentheses: fields follow the last
	 * ')'. From there, state is field 3; utime and stime are 14, 15. */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		   &st) != 2)
		return;
	d->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long v;

		if (sscanf(buf, "VmRSS: %lu", &v) == 1)
			d->rss_kb = v;
		else if (sscanf(buf, "voluntary_ctxt_switches: %lu", &v) == 1 ||
			 sscanf(buf, "nonvoluntary_ctxt_switches: %lu", &v) ==
				 1)
			d->ctxsw += v;
	}
	fclose(f);
	d->ok = true;
}

static void dstat_all(const struct opts *o, struct dstat *d)
{
	for (unsigned int i = 0; i < o->ndaemons; i++)
		dstat_read(o->daemon_pid[i], &d[i]);
}

/* ---------------------------------------------------------------------
 * Step statistics
 */

struct step {
	const char *name;
	const char *what;
	uint32_t *us; /* one per sample */
	size_t n, cap;
};

static int step_add(struct step *s, uint64_t from, uint64_t to)
{
	uint64_t d;

	if (!from || !to || to < from)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint32_t *p = realloc(s->us, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->us = p;
		s->cap = cap;
	}
	d = (to - from + 500) / 1000;
	s->us[s->n++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	size_t n;
	uint32_t min, p50, p99, max;
	double avg;
};

static void step_summary(struct step *s, struct summary *r)
{
	double sum = 0;

	memset(r, 0, sizeof(*r));
	if (!s->n)
		return;
	qsort(s->us, s->n, sizeof(*s->us), cmp_u32);
	for (size_t i = 0; i < s->n; i++)
		sum += s->us[i];
	r->n = s->n;
	r->min = s->us[0];
	r->max = s->us[s->n - 1];
	r->p50 = s->us[(s->n - 1) / 2];
	r->p99 = s->us[(size_t)((double)(s->n - 1) * 0.99)];
	r->avg = sum / (double)s->n;
}

static void table_head(void)
{
	printf("%-12s %8s %10s %10s %10s %10s %10s  %s\n", "step", "count",
	       "min(us)", "median(us)", "p99(us)", "max(us)", "avg(us)",
	       "what");
}

/* Prints the row and appends "name_p50_us=... name_p99_us=..." to kv. */
static void table_row(struct step *s, char *kv, size_t kvsize)
{
	struct summary r;
	size_t len = strlen(kv);

	step_summary(s, &r);
	printf("%-12s %8zu %10u %10u %10u %10u %10.1f  %s\n", s->name, r.n,
	       r.min, r.p50, r.p99, r.max, r.avg, s->what);
	snprintf(kv + len, kvsize - len,
		 " %s_min_us=%u %s_p50_us=%u %s_p99_us=%u %s_max_us=%u",
		 s->name, r.min, s->name, r.p50, s->name, r.p99, s->name,
		 r.max);
}

static void kv_add(char *kv, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kv_add(char *kv, size_t size, const char *fmt, ...)
{
	size_t len = strlen(kv);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kv + len, size - len, fmt, ap);
	va_end(ap);
}

static void daemon_report(const struct opts *o, const struct dstat *start,
			  const struct dstat *held, const struct dstat *end,
			  unsigned long n_setup, unsigned long n_down, char *kv,
			  size_t kvsize)
{
	for (unsigned int i = 0; i < o->ndaemons; i++) {
		double cpu_up = held[i].cpu_s - start[i].cpu_s;
		double cpu_down = end[i].cpu_s - held[i].cpu_s;
		double rss_per = n_setup ? ((double)held[i].rss_kb -
					    (double)start[i].rss_kb) *
						   1024.0 / (double)n_setup :
					   0;

		if (!start[i].ok || !held[i].ok || !end[i].ok) {
			printf("daemon %d: /proc not readable\n",
			       o->daemon_pid[i]);
			continue;
		}
		printf("daemon %d: cpu setup %.3f s (%.1f us/conn), teardown "
		       "%.3f s (%.1f us/conn); rss %lu kB -> held %lu kB "
		       "(%.0f B/conn) -> end %lu kB; context switches %.1f "
		       "per conn (setup + teardown)\n",
		       o->daemon_pid[i], cpu_up,
		       n_setup ? cpu_up * 1e6 / (double)n_setup : 0, cpu_down,
		       n_down ? cpu_down * 1e6 / (double)n_down : 0,
		       start[i].rss_kb, held[i].rss_kb, rss_per, end[i].rss_kb,
		       n_setup ? (double)(end[i].ctxsw - start[i].ctxsw) /
					 (double)n_setup :
				 0);
		kv_add(kv, kvsize,
		       " d%u_pid=%d d%u_cpu_setup_us_per_conn=%.1f"
		       " d%u_cpu_teardown_us_per_conn=%.1f d%u_rss_start_kb=%lu"
		       " d%u_rss_held_kb=%lu d%u_rss_end_kb=%lu"
		       " d%u_rss_bytes_per_conn=%.0f d%u_ctxsw_per_conn=%.1f",
		       i, o->daemon_pid[i], i,
		       n_setup ? cpu_up * 1e6 / (double)n_setup : 0, i,
		       n_down ? cpu_down * 1e6 / (double)n_down : 0, i,
		       start[i].rss_kb, i, held[i].rss_kb, i, end[i].rss_kb, i,
		       rss_per, i,
		       n_setup ? (double)(end[i].ctxsw - start[i].ctxsw) /
					 (double)n_setup :
				 0);
	}
}

/* ---------------------------------------------------------------------
 * Verbs, for --qp only
 */

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static int verbs_open(const char *dev, struct verbs *v)
{
	struct ibv_device **list;
	int n, i;

	memset(v, 0, sizeof(*v));
	list = ibv_get_device_list(&n);
	if (!list || !n) {
		fprintf(stderr, "--qp: no RDMA device\n");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < n; i++)
		if (!dev || !strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (i == n) {
		fprintf(stderr, "--qp: no device %s\n", dev);
		ibv_free_device_list(list);
		return -ENODEV;
	}
	v->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!v->ctx)
		return -errno;
	v->pd = ibv_alloc_pd(v->ctx);
	/* One CQ for all QPs: nothing is ever posted, as in cmtime. */
	v->cq = v->pd ? ibv_create_cq(v->ctx, 16, NULL, NULL, 0) : NULL;
	if (!v->cq) {
		fprintf(stderr, "--qp: PD/CQ: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static void verbs_close(struct verbs *v)
{
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
}

static struct ibv_qp *verbs_qp(struct verbs *v)
{
	struct ibv_qp_init_attr a = {
		.send_cq = v->cq,
		.recv_cq = v->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(v->pd, &a);
}

/*
 * rdma_disconnect() moves the QP to ERR before it sends the DREQ (or
 * DREP), so cmtime's disconnect step includes that verbs call: do the
 * same, for a fair comparison. A failure here is not the CM's; ignore it.
 */
static void verbs_qp_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (qp)
		ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/*
 * The local port for the daemon: -d [-i]: that device's port (any_port:
 * all its ports, for a listener); -g: the port owning that GID (on RoCE
 * this also picks IPv4 vs IPv6 and v1 vs v2). Neither: the device our
 * QPs are on (--qp; the CM's path must be on the QP's device), or any
 * port (the daemon picks).
 */
static int port_sel(const struct opts *o, const struct verbs *v, bool any_port,
		    struct cmc_port_sel *sel)
{
	union ibv_gid gid;

	memset(sel, 0, sizeof(*sel));
	if (o->gid_index >= 0) {
		if (ibv_query_gid(v->ctx, o->ib_port, o->gid_index, &gid)) {
			fprintf(stderr, "cannot read GID %d of %s port %u\n",
				o->gid_index,
				ibv_get_device_name(v->ctx->device),
				o->ib_port);
			return -EINVAL;
		}
		sel->kind = CMC_SEL_GID;
		memcpy(sel->gid, gid.raw, sizeof(sel->gid));
		return 0;
	}
	if (!o->dev && !v->ctx) {
		sel->kind = CMC_SEL_ANY;
		return 0;
	}
	sel->kind = CMC_SEL_PORT;
	sel->port_num = any_port ? 0 : o->ib_port;
	snprintf(sel->dev_name, sizeof(sel->dev_name), "%s",
		 o->dev ? o->dev : ibv_get_device_name(v->ctx->device));
	return 0;
}

/* Verbs are needed for real QPs, and to read a GID for -g. */
static bool need_verbs(const struct opts *o)
{
	return o->qp || o->gid_index >= 0;
}

/* Made-up QPNs, unique within a run (see cmc_ping.c): 24 bits, >= 2. */
static uint32_t fake_qpn(void)
{
	static uint32_t next;

	if (!next)
		next = 2 + (uint32_t)lrand48() % (0xffffff - 1);
	next = next >= 0xffffff ? 2 : next + 1;
	return next;
}

static uint32_t psn(void)
{
	return (uint32_t)lrand48() & 0xffffff;
}

/* ---------------------------------------------------------------------
 * Client
 */

enum cstate {
	C_IDLE = 0,
	C_REQ_SENT,
	C_ESTABLISHED,
	C_DREQ_SENT,
	C_DONE,
	C_FAILED,
};

struct cconn {
	struct cmc_id *id;
	struct ibv_qp *qp;
	uint64_t t_req, t_rep, t_rtu, t_dreq, t_drep;
	uint8_t state;
	bool probe;
};

struct level {
	unsigned int at; /* established connections */
	uint64_t t; /* when reached */
	unsigned long window_n; /* connections since the previous level */
	double window_s;
	struct step probe;
	struct dstat d[BENCH_MAX_DAEMONS];
};

struct client {
	const struct opts *o;
	struct cmc_channel *ch;
	struct cmc_addr dst;
	struct cmc_port_sel src;
	struct verbs v;
	struct cconn *c;
	unsigned int n;
	unsigned int in_flight;
	unsigned int next; /* next connection to start */
	unsigned int open; /* REQ or DREQ outstanding */
	unsigned long established, failed, down, down_failed;
	int fatal;
	uint64_t last_event;
	uint64_t t_start; /* the first REQ */
	struct dstat d_start[BENCH_MAX_DAEMONS];
	/* --sample */
	unsigned int lvl; /* the next level to reach */
	unsigned int probing; /* probe connections still to make */
	struct level lv[BENCH_MAX_SAMPLES];
	struct step connect, establish, setup, disconnect, total;
};

static int parse_dst(const char *s, struct cmc_addr *a)
{
	char *end;
	unsigned long lid;

	memset(a, 0, sizeof(*a));
	if (!strncmp(s, "lid:", 4)) {
		errno = 0;
		lid = strtoul(s + 4, &end, 0);
		if (errno || !s[4] || *end || !lid || lid > 0xbfff)
			return -EINVAL;
		a->family = CMC_AF_LID;
		a->lid = (uint16_t)lid;
		return 0;
	}
	if (inet_pton(AF_INET, s, a->addr) == 1) {
		a->family = CMC_AF_IPV4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->addr) == 1) {
		/* fe80::/10 is the GID form; anything else an IP. */
		a->family = a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80 ?
				    CMC_AF_GID :
				    CMC_AF_IPV6;
		return 0;
	}
	return -EINVAL;
}

static void cli_fail(struct client *cl, struct cconn *c, int err)
{
	if (channel_dead(err))
		cl->fatal = err;
	if (c->id)
		cmc_destroy_id(c->id);
	c->id = NULL;
	if (c->qp)
		ibv_destroy_qp(c->qp);
	c->qp = NULL;
	if (c->state == C_REQ_SENT || c->state == C_IDLE)
		cl->failed++;
	else
		cl->down_failed++;
	if (c->state == C_REQ_SENT || c->state == C_DREQ_SENT)
		cl->open--;
	c->state = C_FAILED;
}

/* The name of a request a REQUEST_ERROR event reports. */
static const char *request_str(uint32_t request)
{
	switch (request) {
	case CMC_REQ_DESTROY_ID:
		return "DESTROY_ID";
	case CMC_REQ_SET_CONTEXT:
		return "SET_CONTEXT";
	case CMC_REQ_CONNECT:
		return "CONNECT";
	case CMC_REQ_ACCEPT:
		return "ACCEPT";
	case CMC_REQ_REJECT:
		return "REJECT";
	case CMC_REQ_RTU:
		return "RTU";
	case CMC_REQ_DISCONNECT:
		return "DISCONNECT";
	case CMC_REQ_ACK_EVENT:
		return "ACK_EVENT";
	default:
		return "request";
	}
}

/*
 * Asynchronous mode: a request of this connection failed in the daemon.
 * A failed RTU undoes what queueing it counted: the connection was not
 * established after all.
 */
static void cli_request_error(struct client *cl, struct cconn *c,
			      const struct cmc_event *ev)
{
	conn_error("%s failed: %s (state %u)",
		   request_str(ev->u.request_error.request),
		   cmc_strerror(ev->status), c->state);
	if (c->state == C_ESTABLISHED &&
	    ev->u.request_error.request == CMC_REQ_RTU) {
		cl->established--;
		cl->open++;
		c->state = C_REQ_SENT;
	}
	cli_fail(cl, c, 0);
}

static void cli_start(struct client *cl, struct cconn *c)
{
	struct cmc_conn_param p;
	int ret;

	ret = cmc_create_id(cl->ch, c, CMC_QP_RC, &c->id);
	if (ret) {
		conn_error("create id: %s", cmc_strerror(ret));
		c->id = NULL;
		cli_fail(cl, c, ret);
		return;
	}
	if (cl->o->qp) {
		c->qp = verbs_qp(&cl->v);
		if (!c->qp) {
			conn_error("create qp: %s", strerror(errno));
			cli_fail(cl, c, -errno);
			return;
		}
	}
	memset(&p, 0, sizeof(p));
	p.service_id = cl->o->service_id;
	p.dst = cl->dst;
	p.src = cl->src;
	p.qp_num = c->qp ? c->qp->qp_num : fake_qpn();
	p.start_psn = psn();
	p.responder_resources = c->qp ? 1 : 0;
	p.initiator_depth = c->qp ? 1 : 0;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	p.remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	p.max_cm_retries = CM_MAX_RETRIES;
	c->state = C_REQ_SENT;
	cl->open++;
	c->t_req = now_ns();
	ret = cmc_connect(c->id, &p);
	if (ret) {
		conn_error("connect: %s", cmc_strerror(ret));
		cli_fail(cl, c, ret);
	}
	/* INIT waits for the REP: right after cmc_connect() it would race
	 * a fast REJ (then the id is IDLE and has no port to give), and it
	 * would cost a QUERY_ID round trip that the REP makes needless. */
}

/* A sample level is reached: all in flight done. Record it, start the
 * probe (one at a time) that follows. */
static void cli_level(struct client *cl)
{
	struct level *l = &cl->lv[cl->lvl];
	uint64_t prev = cl->lvl ? cl->lv[cl->lvl - 1].t : cl->t_start;

	l->t = now_ns();
	l->at = (unsigned int)cl->established;
	dstat_all(cl->o, l->d);
	l->window_n = cl->lvl ? cl->established - cl->lv[cl->lvl - 1].at -
					cl->lv[cl->lvl - 1].probe.n :
				cl->established;
	l->window_s = prev ? (double)(l->t - prev) / 1e9 : 0;
	cl->probing = cl->o->probe;
	cl->lvl++;
}

/* How many may be in flight now: 1 while probing. */
static unsigned int cli_limit(const struct client *cl)
{
	return cl->probing ? 1 : cl->in_flight;
}

static void cli_fill_setup(struct client *cl)
{
	while (!cl->fatal && !stop && cl->next < cl->n) {
		const struct opts *o = cl->o;

		/* Draining to a level, then recording it. */
		if (!cl->probing && cl->lvl < o->nsamples &&
		    cl->next >= o->sample[cl->lvl]) {
			if (cl->open)
				return;
			cli_level(cl);
			continue;
		}
		if (cl->open >= cli_limit(cl))
			return;
		if (cl->probing) {
			cl->c[cl->next].probe = true;
			cl->probing--;
		}
		cli_start(cl, &cl->c[cl->next++]);
	}
}

static void cli_on_rep(struct client *cl, struct cconn *c)
{
	int ret = 0;

	c->t_rep = now_ns();
	if (c->qp) {
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_INIT);
		if (!ret)
			ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTR);
		if (!ret)
			ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTS);
	}
	if (!ret)
		ret = cmc_rtu(c->id, NULL, 0);
	if (ret) {
		conn_error("RTR/RTS/RTU: %s", cmc_strerror(ret));
		cmc_reject(c->id, REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		cli_fail(cl, c, ret);
		return;
	}
	c->t_rtu = now_ns();
	c->state = C_ESTABLISHED;
	cl->open--;
	cl->established++;
	step_add(&cl->connect, c->t_req, c->t_rep);
	step_add(&cl->establish, c->t_rep, c->t_rtu);
	step_add(&cl->setup, c->t_req, c->t_rtu);
	if (c->probe && cl->lvl)
		step_add(&cl->lv[cl->lvl - 1].probe, c->t_req, c->t_rep);
}

static void cli_down_done(struct client *cl, struct cconn *c)
{
	c->t_drep = now_ns();
	step_add(&cl->disconnect, c->t_dreq, c->t_drep);
	if (c->t_rtu)
		step_add(&cl->total, c->t_req,
			 c->t_rtu + (c->t_drep - c->t_dreq));
	/* Destroy is final: timewait goes on in the daemon. */
	cmc_destroy_id(c->id);
	c->id = NULL;
	if (c->qp)
		ibv_destroy_qp(c->qp);
	c->qp = NULL;
	c->state = C_DONE;
	cl->open--;
	cl->down++;
}

static void cli_on_event(struct client *cl, struct cmc_event *ev)
{
	struct cconn *c = ev->context;
	enum cmc_event_type type = ev->type;
	int status = ev->status, ret;

	cl->last_event = now_ns();
	/* The event is acked last: its contents are read until then (an
	 * event of an id destroyed meanwhile stays valid until acked). */
	switch (type) {
	case CMC_EVENT_REP_RECEIVED:
		if (c->state == C_REQ_SENT)
			cli_on_rep(cl, c);
		break;
	case CMC_EVENT_MRA_RECEIVED:
	case CMC_EVENT_PORT_ERROR:
		break;
	case CMC_EVENT_DREP_RECEIVED:
		if (c->state == C_DREQ_SENT)
			cli_down_done(cl, c);
		break;
	case CMC_EVENT_DREQ_RECEIVED:
		/* The server hung up first: answer and count as failed. */
		conn_error("unexpected DREQ from the server");
		cmc_disconnect(c->id, NULL, 0);
		cli_fail(cl, c, 0);
		break;
	case CMC_EVENT_REJ_RECEIVED:
		conn_error("rejected, reason %u", ev->u.rej.reason);
		cli_fail(cl, c, 0);
		break;
	case CMC_EVENT_REQUEST_ERROR:
		cli_request_error(cl, c, ev);
		break;
	default:
		conn_error("%s (status %s) in state %u", cmc_event_str(type),
			   cmc_strerror(status), c->state);
		cli_fail(cl, c, 0);
		break;
	}
	ret = cmc_ack_event(ev);
	if (ret && channel_dead(ret))
		cl->fatal = ret;
}

static void cli_fill_down(struct client *cl, unsigned int *next)
{
	while (!cl->fatal && !stop && cl->open < cl->in_flight &&
	       *next < cl->n) {
		struct cconn *c = &cl->c[(*next)++];
		int ret;

		if (c->state != C_ESTABLISHED)
			continue;
		c->state = C_DREQ_SENT;
		cl->open++;
		c->t_dreq = now_ns();
		verbs_qp_error(c->qp);
		ret = cmc_disconnect(c->id, NULL, 0);
		if (ret) {
			conn_error("DREQ: %s", cmc_strerror(ret));
			cli_fail(cl, c, ret);
		}
	}
}

/* Run the loop until done() holds, the channel dies, or a stall. */
static int cli_loop(struct client *cl, bool teardown, unsigned int *down_next)
{
	for (;;) {
		struct cmc_event *ev;
		int r;

		if (teardown)
			cli_fill_down(cl, down_next);
		else
			cli_fill_setup(cl);
		if (cl->fatal || stop)
			return -1;
		if (!cl->open &&
		    (teardown ? *down_next >= cl->n : cl->next >= cl->n))
			return 0;
		r = poll_channel(cl->ch, POLL_MS);
		if (r < 0) {
			cl->fatal = r;
			return -1;
		}
		while (!cl->fatal && (r = cmc_get_event(cl->ch, &ev, 0)) == 0)
			cli_on_event(cl, ev);
		if (!cl->fatal && r != -EAGAIN)
			cl->fatal = r;
		if ((double)(now_ns() - cl->last_event) / 1e9 >
		    cl->o->stall_s) {
			fprintf(stderr,
				"no event for %.0f s, %u open: "
				"giving up\n",
				cl->o->stall_s, cl->open);
			return -1;
		}
	}
}

static void cli_hold(struct client *cl)
{
	uint64_t until = now_ns() + (uint64_t)(cl->o->hold_s * 1e9);

	while (!stop && !cl->fatal && now_ns() < until) {
		struct cmc_event *ev;
		int64_t left = (int64_t)(until - now_ns()) / 1000000;
		int r = poll_channel(cl->ch,
				     left > POLL_MS ? POLL_MS : (int)left + 1);

		if (r < 0)
			cl->fatal = r;
		while (!cl->fatal && cmc_get_event(cl->ch, &ev, 0) == 0)
			cli_on_event(cl, ev);
	}
}

static void cli_levels_print(struct client *cl, char *kv, size_t kvsize)
{
	const struct opts *o = cl->o;

	if (!cl->lvl)
		return;
	printf("\nscale curve (probe: %u connections one at a time after each "
	       "level)\n",
	       o->probe);
	printf("%11s %8s %9s %11s %11s", "established", "window", "window/s",
	       "probe_p50us", "probe_p99us");
	for (unsigned int i = 0; i < o->ndaemons; i++)
		printf(" %7s%u %9s%u", "rss_kBd", i, "B/conn_d", i);
	printf("\n");
	for (unsigned int j = 0; j < cl->lvl; j++) {
		struct level *l = &cl->lv[j];
		struct summary s;

		step_summary(&l->probe, &s);
		printf("%11u %8lu %9.0f %11u %11u", l->at, l->window_n,
		       l->window_s > 0 ? (double)l->window_n / l->window_s : 0,
		       s.p50, s.p99);
		for (unsigned int i = 0; i < o->ndaemons; i++)
			printf(" %8lu %10.0f", l->d[i].rss_kb,
			       l->at ? ((double)l->d[i].rss_kb -
					(double)cl->d_start[i].rss_kb) *
					       1024.0 / (double)l->at :
				       0);
		printf("\n");
		kv_add(kv, kvsize,
		       " lvl%u_at=%u lvl%u_probe_p50_us=%u"
		       " lvl%u_probe_p99_us=%u",
		       j, l->at, j, s.p50, j, s.p99);
		for (unsigned int i = 0; i < o->ndaemons; i++)
			kv_add(kv, kvsize, " lvl%u_d%u_rss_kb=%lu", j, i,
			       l->d[i].rss_kb);
	}
}

static int run_client(const struct opts *o)
{
	struct client cl = {
		.o = o,
		.connect = { .name = "connect", .what = "REQ sent -> REP" },
		.establish = { .name = "establish", .what = "REP -> RTU sent" },
		.setup = { .name = "setup", .what = "REQ sent -> RTU sent" },
		.disconnect = { .name = "disconnect",
				.what = "DREQ sent -> DREP" },
		.total = { .name = "total", .what = "setup + disconnect" },
	};
	struct dstat d0[BENCH_MAX_DAEMONS], d1[BENCH_MAX_DAEMONS],
		d2[BENCH_MAX_DAEMONS];
	struct cmc_daemon_info info;
	uint64_t t0, t1, t2, t3;
	unsigned int down_next = 0;
	static char kv[8192];
	int rc = 1;

	for (unsigned int i = 0; i < BENCH_MAX_SAMPLES; i++)
		cl.lv[i].probe.name = "probe";
	if (parse_dst(o->dst, &cl.dst)) {
		fprintf(stderr, "bad destination %s (lid:N, GID or IP)\n",
			o->dst);
		return 2;
	}
	if (need_verbs(o) && verbs_open(o->dev, &cl.v))
		goto out_verbs;
	if (port_sel(o, &cl.v, false, &cl.src))
		goto out_verbs;
	cl.n = o->count;
	cl.c = calloc(cl.n, sizeof(*cl.c));
	if (!cl.c) {
		fprintf(stderr, "out of memory\n");
		goto out_verbs;
	}
	if (open_channel(o, &cl.ch))
		goto out;
	cmc_daemon_info(cl.ch, &info);
	if (info.max_ids && cl.n > info.max_ids) {
		fprintf(stderr,
			"the daemon allows %u ids per client, %u asked: raise "
			"its --max-ids\n",
			info.max_ids, cl.n);
		goto out;
	}
	cl.in_flight = o->in_flight < cl.n ? o->in_flight : cl.n;
	printf("cmbench client: %u connections to %s, up to %u in flight, %s, "
	       "%s, service id 0x%" PRIx64 "\n",
	       cl.n, o->dst, cl.in_flight, o->qp ? "RC QPs" : "CM only",
	       o->async ? "asynchronous" : "blocking", o->service_id);
	fflush(stdout);

	dstat_all(o, d0);
	memcpy(cl.d_start, d0, sizeof(d0));
	t0 = cl.t_start = cl.last_event = now_ns();
	if (cli_loop(&cl, false, NULL))
		goto report;
	t1 = now_ns();
	dstat_all(o, d1);
	cli_hold(&cl);
	dstat_all(o, d1);
	t2 = cl.last_event = now_ns();
	if (cli_loop(&cl, true, &down_next))
		goto report;
	t3 = now_ns();
	dstat_all(o, d2);
	rc = cl.failed || cl.down_failed ? 1 : 0;

	{
		double setup_s = (double)(t1 - t0) / 1e9;
		double down_s = (double)(t3 - t2) / 1e9;

		kv_add(kv, sizeof(kv),
		       "cmbench mode=client conns=%u inflight=%u qp=%d "
		       "async=%d established=%lu failed=%lu torn_down=%lu "
		       "teardown_failed=%lu setup_s=%.4f setup_cps=%.0f "
		       "teardown_s=%.4f teardown_cps=%.0f",
		       cl.n, cl.in_flight, o->qp, o->async, cl.established,
		       cl.failed, cl.down, cl.down_failed, setup_s,
		       setup_s > 0 ? (double)cl.established / setup_s : 0,
		       down_s, down_s > 0 ? (double)cl.down / down_s : 0);
		printf("\n");
		table_head();
		table_row(&cl.connect, kv, sizeof(kv));
		table_row(&cl.establish, kv, sizeof(kv));
		table_row(&cl.setup, kv, sizeof(kv));
		table_row(&cl.disconnect, kv, sizeof(kv));
		table_row(&cl.total, kv, sizeof(kv));
		printf("\nsetup:    %lu established in %.3f s: %.0f conn/s "
		       "(%lu failed)\n",
		       cl.established, setup_s,
		       setup_s > 0 ? (double)cl.established / setup_s : 0,
		       cl.failed);
		printf("teardown: %lu torn down in %.3f s: %.0f conn/s (%lu "
		       "failed)\n",
		       cl.down, down_s,
		       down_s > 0 ? (double)cl.down / down_s : 0,
		       cl.down_failed);
		daemon_report(o, d0, d1, d2, cl.established, cl.down, kv,
			      sizeof(kv));
		cli_levels_print(&cl, kv, sizeof(kv));
		printf("%s\n", kv);
	}
	goto out;
report:
	if (cl.fatal)
		fprintf(stderr, "cmd: %s\n", cmc_strerror(cl.fatal));
	if (stop)
		fprintf(stderr, "interrupted\n");
	printf("cmbench mode=client conns=%u inflight=%u qp=%d async=%d "
	       "established=%lu failed=%lu torn_down=%lu error=1\n",
	       cl.n, cl.in_flight, o->qp, o->async, cl.established, cl.failed,
	       cl.down);
out:
	cmc_close(cl.ch);
	for (unsigned int i = 0; i < cl.n; i++)
		if (cl.c[i].qp)
			ibv_destroy_qp(cl.c[i].qp);
	free(cl.c);
out_verbs:
	verbs_close(&cl.v);
	free(cl.connect.us);
	free(cl.establish.us);
	free(cl.setup.us);
	free(cl.disconnect.us);
	free(cl.total.us);
	for (unsigned int i = 0; i < BENCH_MAX_SAMPLES; i++)
		free(cl.lv[i].probe.us);
	return rc;
}

/* ---------------------------------------------------------------------
 * Server
 */

/*
 * Passive ids come with the listener's context. Rather than a
 * cmc_set_context() round trip per connection, the server finds its
 * state by the id's handle: an open-addressing table keyed by pointer.
 */
struct sconn {
	struct cmc_id *id;
	struct ibv_qp *qp;
	uint64_t t_req, t_rep, t_est, t_dreq;
};

struct stable {
	struct sconn *slot;
	size_t cap, n;
};

static size_t st_hash(const struct cmc_id *id, size_t cap)
{
	uint64_t k = (uint64_t)(uintptr_t)id;

	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static struct sconn *st_find(struct stable *t, const struct cmc_id *id)
{
	if (!t->cap)
		return NULL;
	for (size_t i = st_hash(id, t->cap); t->slot[i].id;
	     i = (i + 1) & (t->cap - 1))
		if (t->slot[i].id == id)
			return &t->slot[i];
	return NULL;
}

static struct sconn *st_add(struct stable *t, struct cmc_id *id)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct sconn *old = t->slot, *s = calloc(cap, sizeof(*s));

		if (!s)
			return NULL;
		t->slot = s;
		for (size_t j = 0; j < t->cap; j++) {
			if (!old[j].id)
				continue;
			for (i = st_hash(old[j].id, cap); s[i].id;
			     i = (i + 1) & (cap - 1))
				;
			s[i] = old[j];
		}
		t->cap = cap;
		free(old);
	}
	for (i = st_hash(id, t->cap); t->slot[i].id; i = (i + 1) & (t->cap - 1))
		;
	memset(&t->slot[i], 0, sizeof(t->slot[i]));
	t->slot[i].id = id;
	t->n++;
	return &t->slot[i];
}

static void st_del(struct stable *t, struct sconn *c)
{
	size_t mask = t->cap - 1, i = (size_t)(c - t->slot), j;

	for (j = (i + 1) & mask; t->slot[j].id; j = (j + 1) & mask) {
		size_t home = st_hash(t->slot[j].id, t->cap);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	memset(&t->slot[i], 0, sizeof(t->slot[i]));
	t->n--;
}

struct server {
	const struct opts *o;
	struct cmc_channel *ch;
	struct cmc_id *listener;
	struct verbs v;
	struct stable t;
	unsigned long reqs, established, done, failed;
	uint64_t t_first, t_all_est, t_first_dreq, t_last;
	struct dstat d0[BENCH_MAX_DAEMONS], d1[BENCH_MAX_DAEMONS];
	bool d1_taken;
	struct step accept, establish, disconnect;
	int fatal;
};

static void srv_drop(struct server *s, struct sconn *c, bool failed)
{
	if (c->id)
		cmc_destroy_id(c->id);
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (failed)
		s->failed++;
	st_del(&s->t, c);
}

static void srv_on_req(struct server *s, struct cmc_event *ev)
{
	struct cmc_accept_param ap;
	struct sconn *c;
	int ret = 0;

	s->reqs++;
	c = st_add(&s->t, ev->id);
	if (!c) {
		cmc_destroy_id(ev->id);
		s->failed++;
		return;
	}
	c->t_req = now_ns();
	if (!s->t_first) {
		s->t_first = c->t_req;
		dstat_all(s->o, s->d0);
	}
	if (s->o->qp && strcmp(ev->u.req.path.dev_name,
			       ibv_get_device_name(s->v.ctx->device))) {
		/* Our QPs live on one device: a REQ that came in on another
		 * cannot be served (listen with -d to avoid it). */
		conn_error("REQ on %s, our QPs are on %s: rejected",
			   ev->u.req.path.dev_name,
			   ibv_get_device_name(s->v.ctx->device));
		srv_drop(s, c, true); /* destroy sends the REJ */
		return;
	}
	if (s->o->qp) {
		c->qp = verbs_qp(&s->v);
		if (!c->qp)
			ret = -errno;
		if (!ret)
			ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_INIT);
		if (!ret)
			ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTR);
	}
	if (!ret) {
		memset(&ap, 0, sizeof(ap));
		ap.qp_num = c->qp ? c->qp->qp_num : fake_qpn();
		ap.start_psn = psn();
		ap.responder_resources = c->qp ? 1 : 0;
		ap.initiator_depth = c->qp ? 1 : 0;
		ap.rnr_retry_count = 7;
		ret = cmc_accept(c->id, &ap);
	}
	if (!ret && c->qp)
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTS);
	if (ret) {
		conn_error("accept: %s", cmc_strerror(ret));
		if (channel_dead(ret))
			s->fatal = ret;
		srv_drop(s, c, true);
		return;
	}
	c->t_rep = now_ns();
	step_add(&s->accept, c->t_req, c->t_rep);
}

static void srv_on_event(struct server *s, struct cmc_event *ev)
{
	enum cmc_event_type type = ev->type;
	struct sconn *c;
	int ret;

	if (type == CMC_EVENT_REQ_RECEIVED) {
		srv_on_req(s, ev);
		ret = cmc_ack_event(ev);
		if (channel_dead(ret))
			s->fatal = ret;
		return;
	}
	c = st_find(&s->t, ev->id);
	if (!c) {
		/* The listener's own, e.g. a failed ACK_EVENT (--async). */
		if (type == CMC_EVENT_REQUEST_ERROR) {
			conn_error("server: %s failed: %s",
				   request_str(ev->u.request_error.request),
				   cmc_strerror(ev->status));
			s->failed++;
		}
		goto ack;
	}
	switch (type) {
	case CMC_EVENT_ESTABLISHED:
		c->t_est = now_ns();
		step_add(&s->establish, c->t_rep, c->t_est);
		s->established++;
		if (s->o->count && s->established == s->o->count) {
			s->t_all_est = c->t_est;
			dstat_all(s->o, s->d1);
			s->d1_taken = true;
		}
		break;
	case CMC_EVENT_DREQ_RECEIVED:
		c->t_dreq = now_ns();
		if (!s->t_first_dreq)
			s->t_first_dreq = c->t_dreq;
		verbs_qp_error(c->qp);
		ret = cmc_disconnect(c->id, NULL, 0);
		if (ret) {
			conn_error("DREP: %s", cmc_strerror(ret));
			if (channel_dead(ret))
				s->fatal = ret;
			srv_drop(s, c, true);
			break;
		}
		s->t_last = now_ns();
		step_add(&s->disconnect, c->t_dreq, s->t_last);
		s->done++;
		srv_drop(s, c, false);
		break;
	case CMC_EVENT_MRA_RECEIVED:
	case CMC_EVENT_PORT_ERROR:
		break;
	case CMC_EVENT_REQUEST_ERROR:
		conn_error("server: %s failed: %s",
			   request_str(ev->u.request_error.request),
			   cmc_strerror(ev->status));
		srv_drop(s, c, true);
		break;
	default:
		conn_error("server: %s (status %s)", cmc_event_str(type),
			   cmc_strerror(ev->status));
		srv_drop(s, c, true);
		break;
	}
ack:
	/* Last: the event's contents are read until then. */
	ret = cmc_ack_event(ev);
	if (channel_dead(ret))
		s->fatal = ret;
}

static int run_server(const struct opts *o)
{
	struct server s = {
		.o = o,
		.accept = { .name = "accept", .what = "REQ -> REP sent" },
		.establish = { .name = "establish",
			       .what = "REP sent -> ESTABLISHED" },
		.disconnect = { .name = "disconnect",
				.what = "DREQ -> DREP sent" },
	};
	struct dstat d2[BENCH_MAX_DAEMONS];
	struct cmc_port_sel sel;
	struct cmc_event *ev;
	static char kv[4096];
	int r, rc = 1;

	if (need_verbs(o) && verbs_open(o->dev, &s.v))
		goto out;
	if (port_sel(o, &s.v, true, &sel))
		goto out;
	if (open_channel(o, &s.ch))
		goto out;
	r = cmc_create_id(s.ch, NULL, CMC_QP_RC, &s.listener);
	if (!r)
		r = cmc_listen(s.listener, o->service_id, ~0ull, o->backlog,
			       sel.kind == CMC_SEL_ANY ? NULL : &sel);
	/* A daemon that cannot narrow a listener to some ports says
	 * -EOPNOTSUPP: listen on all; srv_on_req() turns away the REQs of
	 * other devices. */
	if (r == -EOPNOTSUPP)
		r = cmc_listen(s.listener, o->service_id, ~0ull, o->backlog,
			       NULL);
	if (r) {
		fprintf(stderr, "listen: %s\n", cmc_strerror(r));
		goto out;
	}
	printf("listening on service id 0x%" PRIx64 ", backlog %u, %s, %s\n",
	       o->service_id, o->backlog, o->qp ? "RC QPs" : "CM only",
	       o->async ? "asynchronous" : "blocking");
	fflush(stdout);
	while (!stop && !s.fatal &&
	       (!o->count || s.done + s.failed < o->count)) {
		r = poll_channel(s.ch, POLL_MS);
		if (r < 0) {
			s.fatal = r;
			break;
		}
		while (!s.fatal && (r = cmc_get_event(s.ch, &ev, 0)) == 0)
			srv_on_event(&s, ev);
		if (!s.fatal && r != -EAGAIN)
			s.fatal = r;
	}
	if (s.fatal)
		fprintf(stderr, "cmd: %s\n", cmc_strerror(s.fatal));
	dstat_all(o, d2);
	if (!s.d1_taken)
		memcpy(s.d1, d2, sizeof(d2));
	{
		double up = s.t_all_est > s.t_first ?
				    (double)(s.t_all_est - s.t_first) / 1e9 :
				    0;
		double down =
			s.t_last > s.t_first_dreq ?
				(double)(s.t_last - s.t_first_dreq) / 1e9 :
				0;

		kv_add(kv, sizeof(kv),
		       "cmbench mode=server conns=%lu qp=%d async=%d "
		       "established=%lu torn_down=%lu failed=%lu setup_s=%.4f "
		       "setup_cps=%.0f teardown_s=%.4f teardown_cps=%.0f",
		       s.reqs, o->qp, o->async, s.established, s.done, s.failed,
		       up, up > 0 ? (double)s.established / up : 0, down,
		       down > 0 ? (double)s.done / down : 0);
		printf("\n");
		table_head();
		table_row(&s.accept, kv, sizeof(kv));
		table_row(&s.establish, kv, sizeof(kv));
		table_row(&s.disconnect, kv, sizeof(kv));
		printf("\nsetup:    %lu established in %.3f s (first REQ to "
		       "last ESTABLISHED)\n",
		       s.established, up);
		printf("teardown: %lu torn down in %.3f s (first DREQ to last "
		       "DREP)\n",
		       s.done, down);
		if (s.t_first)
			daemon_report(o, s.d0, s.d1, d2, s.established, s.done,
				      kv, sizeof(kv));
		printf("%s\n", kv);
	}
	rc = s.fatal || s.failed || (o->count && s.done < o->count) ? 1 : 0;
out:
	for (size_t i = 0; i < s.t.cap; i++)
		if (s.t.slot[i].qp)
			ibv_destroy_qp(s.t.slot[i].qp);
	cmc_close(s.ch);
	verbs_close(&s.v);
	free(s.t.slot);
	free(s.accept.us);
	free(s.establish.us);
	free(s.disconnect.us);
	return rc;
}

/* ---------------------------------------------------------------------
 * Options
 */

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -l [options]        server\n"
		"       %s [options] dest      client (dest: lid:N, GID, IP)\n"
		"  -l              listen (server)\n"
		"  -s PATH         cmd socket (default $CMD_SOCKET or %s)\n"
		"  -S SID          service id (default 0x%" PRIx64 ")\n"
		"  -c N            client: connections (default %u)\n"
		"  -m M            client: at most M in flight (default %u)\n"
		"  -n N            server: exit after N torn down (default 0: "
		"on a signal)\n"
		"  -b B            server: listen backlog (default %u)\n"
		"  -q, --qp        real RC QPs (libibverbs) instead of made-up "
		"QPNs\n"
		"  -A, --async     the library's asynchronous mode (requests "
		"queued,\n"
		"                  sent in batches; failures as REQUEST_ERROR "
		"events)\n"
		"  -d DEV          the local RDMA device: the REQs leave from "
		"it, the\n"
		"                  listener serves it, the QPs (--qp) live on "
		"it\n"
		"                  (default: the daemon picks; --qp: the first "
		"device)\n"
		"  -i, --ib-port N -d's port (default 1)\n"
		"  -g, --gid-index I  the port owning GID I of -d/-i instead\n"
		"  -H, --hold S    client: hold all connections S seconds "
		"(default 0)\n"
		"  -L, --sample L1,L2,...  client: scale curve levels\n"
		"  -P, --probe K   client: connections probed one at a time "
		"per "
		"level (default %u)\n"
		"  -T, --stall S   give up after S s without an event (default "
		"%u)\n"
		"  -p, --daemon-pid P  report this daemon's CPU and RSS "
		"(repeat)\n",
		prog, prog, CMC_DEFAULT_SOCKET, (uint64_t)BENCH_DEFAULT_SERVICE,
		BENCH_DEFAULT_COUNT, BENCH_DEFAULT_IN_FLIGHT,
		BENCH_DEFAULT_BACKLOG, BENCH_DEFAULT_PROBE,
		BENCH_DEFAULT_STALL_S);
}

static int parse_u(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end || *v > max ? -EINVAL : 0;
}

static int parse_samples(char *s, struct opts *o)
{
	unsigned long long v;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nsamples == BENCH_MAX_SAMPLES ||
		    parse_u(tok, UINT_MAX, &v) || !v ||
		    (o->nsamples && v <= o->sample[o->nsamples - 1]))
			return -EINVAL;
		o->sample[o->nsamples++] = (unsigned int)v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "qp", no_argument, NULL, 'q' },
		{ "async", no_argument, NULL, 'A' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "hold", required_argument, NULL, 'H' },
		{ "sample", required_argument, NULL, 'L' },
		{ "probe", required_argument, NULL, 'P' },
		{ "stall", required_argument, NULL, 'T' },
		{ "daemon-pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long long v;
	struct opts o = {
		.service_id = BENCH_DEFAULT_SERVICE,
		.count = BENCH_DEFAULT_COUNT,
		.in_flight = BENCH_DEFAULT_IN_FLIGHT,
		.backlog = BENCH_DEFAULT_BACKLOG,
		.probe = BENCH_DEFAULT_PROBE,
		.stall_s = BENCH_DEFAULT_STALL_S,
		.gid_index = -1,
		.ib_port = 1,
	};
	bool count_set = false;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "ls:S:c:m:n:b:qAd:i:g:H:L:P:T:p:h",
				lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = true;
			break;
		case 's':
			o.socket = optarg;
			break;
		case 'S':
			if (parse_u(optarg, UINT64_MAX, &v))
				goto bad;
			o.service_id = v;
			break;
		case 'c':
		case 'n':
			if (parse_u(optarg, 10000000, &v) || (c == 'c' && !v))
				goto bad;
			o.count = (unsigned int)v;
			count_set = true;
			break;
		case 'm':
			if (parse_u(optarg, 10000000, &v) || !v)
				goto bad;
			o.in_flight = (unsigned int)v;
			break;
		case 'b':
			if (parse_u(optarg, UINT_MAX, &v) || !v)
				goto bad;
			o.backlog = (unsigned int)v;
			break;
		case 'q':
			o.qp = true;
			break;
		case 'A':
			o.async = true;
			break;
		case 'd':
			o.dev = optarg;
			break;
		case 'i':
			if (parse_u(optarg, 255, &v) || !v)
				goto bad;
			o.ib_port = (uint8_t)v;
			break;
		case 'g':
			if (parse_u(optarg, INT_MAX, &v))
				goto bad;
			o.gid_index = (int)v;
			break;
		case 'H':
		case 'T': {
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || d < 0)
				goto bad;
			if (c == 'H')
				o.hold_s = d;
			else
				o.stall_s = d;
			break;
		}
		case 'L':
			if (parse_samples(optarg, &o))
				goto bad;
			break;
		case 'P':
			if (parse_u(optarg, 1000000, &v))
				goto bad;
			o.probe = (unsigned int)v;
			break;
		case 'p':
			if (o.ndaemons == BENCH_MAX_DAEMONS ||
			    parse_u(optarg, INT_MAX, &v) || !v)
				goto bad;
			o.daemon_pid[o.ndaemons++] = (int)v;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			goto bad;
		}
	}
	if (o.listen) {
		if (optind != argc)
			goto bad;
		if (!count_set)
			o.count = 0;
	} else {
		if (optind != argc - 1)
			goto bad;
		o.dst = argv[optind];
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	srand48((long)(now_ns() ^ (uint64_t)getpid()));
	setvbuf(stdout, NULL, _IOLBF, 0);
	return o.listen ? run_server(&o) : run_client(&o);
bad:
	usage(stderr, argv[0]);
	return 2;
}
