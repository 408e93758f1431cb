// SPDX-License-Identifier: MIT
/* cmbench's client: count connections, in_flight at a time (cmbench.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmbench.h"
#include "cmc_common.h"

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

static void cli_fail(struct client *cl, struct cconn *c, int err)
{
	if (ex_channel_dead(err))
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
	p.start_psn = ex_psn();
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
	if (ret && ex_channel_dead(ret))
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

int run_client(const struct opts *o)
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
	if (ex_parse_dst(o->dst, &cl.dst)) {
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
