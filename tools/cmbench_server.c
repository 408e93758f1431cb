// SPDX-License-Identifier: MIT
/* cmbench's server (-l): accepts every REQ and times it (cmbench.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmbench.h"
#include "cmc_common.h"

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

/* A call for the connection failed: it goes, and maybe the channel. */
static void srv_fail(struct server *s, struct sconn *c, const char *what,
		     int ret)
{
	conn_error("%s: %s", what, cmc_strerror(ret));
	if (ex_channel_dead(ret))
		s->fatal = ret;
	srv_drop(s, c, true);
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
		ap.start_psn = ex_psn();
		ap.responder_resources = c->qp ? 1 : 0;
		ap.initiator_depth = c->qp ? 1 : 0;
		ap.rnr_retry_count = 7;
		ret = cmc_accept(c->id, &ap);
	}
	if (!ret && c->qp)
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTS);
	if (ret) {
		srv_fail(s, c, "accept", ret);
		return;
	}
	c->t_rep = now_ns();
	step_add(&s->accept, c->t_req, c->t_rep);
}

/* Asynchronous mode: a request failed in the daemon. */
static void srv_request_error(const struct cmc_event *ev)
{
	conn_error("server: %s failed: %s",
		   request_str(ev->u.request_error.request),
		   cmc_strerror(ev->status));
}

static void srv_on_event(struct server *s, struct cmc_event *ev)
{
	enum cmc_event_type type = ev->type;
	struct sconn *c;
	int ret;

	if (type == CMC_EVENT_REQ_RECEIVED) {
		srv_on_req(s, ev);
		ret = cmc_ack_event(ev);
		if (ex_channel_dead(ret))
			s->fatal = ret;
		return;
	}
	c = st_find(&s->t, ev->id);
	if (!c) {
		/* The listener's own, e.g. a failed ACK_EVENT (--async). */
		if (type == CMC_EVENT_REQUEST_ERROR) {
			srv_request_error(ev);
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
			srv_fail(s, c, "DREP", ret);
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
		srv_request_error(ev);
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
	if (ex_channel_dead(ret))
		s->fatal = ret;
}

int run_server(const struct opts *o)
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
