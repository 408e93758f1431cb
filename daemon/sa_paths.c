// SPDX-License-Identifier: MIT
/*
 * sa_paths.h: the SA client and the path cache in the daemon's loop.
 * A miss starts an SA query, or joins the equal one already in flight
 * (same port, same want): a job whose ranks all connect to one node at
 * once asks the SA once, as ibacm would. The answer fills the cache, then
 * goes to every asker, in the order they asked.
 */
#include "sa_paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "log.h"

/* One asker: a connect (or SIDR_REQ, RESOLVE_ROUTE) waiting for the
 * query whose list holds it. */
struct sa_ask {
	sa_paths_fn fn;
	void *ctx;
	uint64_t handle; /* ours, not the client's: unique per asker */
	struct sa_ask *next, *prev;
};

/* One SA query in flight and its askers, oldest first. */
struct sa_query {
	struct sa_paths *sp;
	uint16_t port;
	struct sa_path_want want;
	uint64_t handle; /* the client's */
	struct sa_ask *asks, *last;
	struct sa_query *next, *prev;
};

struct sa_paths {
	struct cmd *cmd;
	struct sa_paths_config cfg;
	struct sa_client *sa;
	struct path_cache *pc;
	ev_timer timer;
	uint64_t armed; /* the deadline the timer is set for, 0: none */
	struct sa_query *queries;
	struct sa_query *answering; /* whose askers sp_answer is calling */
	uint64_t next_handle;
	uint64_t joined; /* misses that joined a query in flight */
};

static int sp_send(void *ctx, uint16_t port, const struct sa_dest *to,
		   const uint8_t mad[SA_MAD_SIZE], unsigned int timeout_ms)
{
	struct sa_paths *sp = ctx;
	const struct xport_sa_dest d = { .lid = to->lid,
					 .sl = to->sl,
					 .qpn = to->qpn,
					 .qkey = to->qkey,
					 .pkey_index = to->pkey_index,
					 .timeout_ms = timeout_ms };

	return xport_send_sa(sp->cmd->xport, port, &d, mad);
}

static const struct sa_client_ops sp_ops = { .send = sp_send };

static void sp_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sa_paths *sp = w->data;

	(void)loop;
	(void)revents;
	sp->armed = 0;
	sa_client_tick(sp->sa, cmd_now());
}

/* The SM a port names now, to the client. */
static void sp_port_sync(struct sa_paths *sp, const struct xport_port *p)
{
	uint64_t now = cmd_now();

	if (!p->sa)
		return;
	if (!p->up || p->state != XPORT_PORT_ACTIVE) {
		sa_client_port_down(sp->sa, p->index, now);
		return;
	}
	/* P_Key index 0: the default partition (IBTA 10.9.1.1). */
	sa_client_port_set(sp->sa, p->index, p->sm_lid, p->sm_sl, 0, now);
}

struct sa_paths *sa_paths_new(struct cmd *cmd,
			      const struct sa_paths_config *cfg)
{
	struct sa_paths *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->cmd = cmd;
	sp->cfg = *cfg;
	sp->sa = sa_client_new(&cfg->client, &sp_ops, sp);
	sp->pc = path_cache_new(cfg->lifetime_s, cfg->max_entries);
	if (!sp->sa || !sp->pc) {
		sa_paths_free(sp);
		errno = ENOMEM;
		return NULL;
	}
	ev_init(&sp->timer, sp_timer_cb);
	sp->timer.data = sp;
	if (!cfg->off)
		for (unsigned int i = 0; i < xport_port_count(cmd->xport); i++)
			sp_port_sync(
				sp,
				xport_port(cmd->xport,
					   (uint16_t)(cmd->xport->first_index +
						      i)));
	return sp;
}

void sa_paths_free(struct sa_paths *sp)
{
	struct sa_ask *a, *next;

	if (!sp)
		return;
	if (sp->cmd && sp->cmd->loop)
		ev_timer_stop(sp->cmd->loop, &sp->timer);
	while (sp->queries) {
		struct sa_query *q = sp->queries;

		sp->queries = q->next;
		for (a = q->asks; a; a = next) {
			next = a->next;
			free(a);
		}
		free(q);
	}
	sa_client_free(sp->sa);
	path_cache_free(sp->pc);
	free(sp);
}

bool sa_paths_used(const struct sa_paths *sp, uint16_t port)
{
	const struct xport_port *p;

	if (!sp || sp->cfg.off)
		return false;
	/* An IB port whose transport cannot reach the SA (no SA agent)
	 * builds its paths locally. */
	p = xport_port(sp->cmd->xport, port);
	return p && p->sa;
}

static void query_unlink(struct sa_paths *sp, struct sa_query *q)
{
	if (q->prev)
		q->prev->next = q->next;
	else
		sp->queries = q->next;
	if (q->next)
		q->next->prev = q->prev;
	q->next = q->prev = NULL;
}

static void ask_unlink(struct sa_query *q, struct sa_ask *a)
{
	if (a->prev)
		a->prev->next = a->next;
	else
		q->asks = a->next;
	if (a->next)
		a->next->prev = a->prev;
	else
		q->last = a->prev;
}

static void ask_append(struct sa_query *q, struct sa_ask *a)
{
	a->next = NULL;
	a->prev = q->last;
	if (q->last)
		q->last->next = a;
	else
		q->asks = a;
	q->last = a;
}

/*
 * The client's answer to q, for each of its askers. q leaves the list
 * first, so that a callback that asks again starts a query of its own;
 * one that cancels another asker of q finds it as sp->answering's.
 */
static void sp_answer(void *ctx, int status, const struct sa_path_rec *recs,
		      unsigned int n, const char *why)
{
	struct sa_query *q = ctx;
	struct sa_paths *sp = q->sp;
	struct sa_ask *a;

	query_unlink(sp, q);
	if (!status &&
	    path_cache_put(sp->pc, q->port, &q->want, recs, n, cmd_now()))
		log_debug("path cache: out of memory");
	if (status)
		log_info("port %u: SA path query failed: %s", q->port,
			 why ? why : "?");
	sp->answering = q;
	while ((a = q->asks)) {
		ask_unlink(q, a);
		a->fn(a->ctx, status, recs, n, why);
		free(a);
	}
	sp->answering = NULL;
	free(q);
}

static struct sa_query *query_find(struct sa_paths *sp, uint16_t port,
				   const struct sa_path_want *w)
{
	for (struct sa_query *q = sp->queries; q; q = q->next)
		if (q->port == port && !memcmp(&q->want, w, sizeof(*w)))
			return q;
	return NULL;
}

static struct sa_query *query_start(struct sa_paths *sp, uint16_t port,
				    const struct sa_path_want *w, uint64_t now)
{
	struct sa_query *q = calloc(1, sizeof(*q));

	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->sp = sp;
	q->port = port;
	q->want = *w;
	errno = 0;
	q->handle = sa_client_path(sp->sa, port, w, sp_answer, q, now);
	if (!q->handle) {
		if (!errno)
			errno = ENOMEM;
		free(q);
		return NULL;
	}
	q->next = sp->queries;
	if (sp->queries)
		sp->queries->prev = q;
	sp->queries = q;
	return q;
}

int sa_paths_get(struct sa_paths *sp, uint16_t port,
		 const struct sa_path_want *w, sa_paths_fn fn, void *ctx,
		 const struct path_cache_entry **e, uint64_t *handle)
{
	uint64_t now = cmd_now();
	struct sa_query *q;
	struct sa_ask *a;

	*e = path_cache_get(sp->pc, port, w, now);
	if (*e)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	q = query_find(sp, port, w);
	if (q) {
		sp->joined++;
	} else {
		q = query_start(sp, port, w, now);
		if (!q) {
			int err = -errno;

			free(a);
			return err;
		}
	}
	a->fn = fn;
	a->ctx = ctx;
	a->handle = ++sp->next_handle;
	ask_append(q, a);
	*handle = a->handle;
	return 1;
}

static struct sa_ask *ask_find(struct sa_query *q, uint64_t handle)
{
	for (struct sa_ask *a = q ? q->asks : NULL; a; a = a->next)
		if (a->handle == handle)
			return a;
	return NULL;
}

/* An asker gone (its id destroyed): the query goes on while others wait
 * for it, and is given up with the last. */
void sa_paths_cancel(struct sa_paths *sp, uint64_t handle)
{
	struct sa_query *q;
	struct sa_ask *a;

	a = ask_find(sp->answering, handle);
	if (a) {
		ask_unlink(sp->answering, a);
		free(a);
		return;
	}
	for (q = sp->queries; q; q = q->next) {
		a = ask_find(q, handle);
		if (!a)
			continue;
		ask_unlink(q, a);
		free(a);
		if (!q->asks) {
			sa_client_cancel(sp->sa, q->handle);
			query_unlink(sp, q);
			free(q);
		}
		return;
	}
}

void sa_paths_recv(struct sa_paths *sp, uint16_t port, const uint8_t *mad,
		   size_t len)
{
	sa_client_recv(sp->sa, port, mad, len, cmd_now());
}

void sa_paths_port_event(struct sa_paths *sp, const struct xport_event *ev)
{
	unsigned int n;

	if (sp->cfg.off || !ev->port || !ev->port->sa)
		return;
	/* Whatever changed, the SA's answers for this port may be stale:
	 * a new SM, new LIDs, a P_Key table or a GID table. */
	n = path_cache_flush(sp->pc, ev->index);
	if (n)
		log_info("%s port %u: %s: %u cached paths flushed",
			 ev->port->dev, ev->port->port_num,
			 xport_event_name(ev->type), n);
	sp_port_sync(sp, ev->port);
}

void sa_paths_arm(struct sa_paths *sp)
{
	uint64_t due, now;

	if (!sp)
		return;
	due = sa_client_next_due(sp->sa);
	if (due == sp->armed)
		return;
	ev_timer_stop(sp->cmd->loop, &sp->timer);
	sp->armed = due;
	if (!due)
		return;
	now = cmd_now();
	ev_timer_set(&sp->timer, due > now ? (double)(due - now) / 1e9 : 0.,
		     0.);
	ev_timer_start(sp->cmd->loop, &sp->timer);
}

unsigned int sa_paths_flush(struct sa_paths *sp, int port)
{
	return path_cache_flush(sp->pc, port);
}

void sa_paths_walk(struct sa_paths *sp,
		   int (*fn)(void *ctx, const struct path_cache_entry *e),
		   void *ctx)
{
	path_cache_walk(sp->pc, cmd_now(), fn, ctx);
}

const struct sa_client_counters *
sa_paths_client_counters(const struct sa_paths *sp)
{
	return sa_client_counters(sp->sa);
}

const struct path_cache_counters *
sa_paths_cache_counters(const struct sa_paths *sp)
{
	return path_cache_counters(sp->pc);
}

uint64_t sa_paths_joined(const struct sa_paths *sp)
{
	return sp->joined;
}
