// SPDX-License-Identifier: MIT
/*
 * The SA client (sa_client.h): PathRecord and ClassPortInfo transactions.
 *
 * A transaction is a struct sa_query on one list, in flight until its
 * answer, its last timeout, or its port's end. Matching is by the TID's
 * low 32 bits: the kernel's umad layer writes the agent's own number into
 * the high 32 bits of every request it sends (user_mad.c), and the SA
 * echoes the whole TID. Each attempt takes a new TID, so a late answer to
 * an earlier attempt matches nothing and is counted, and a resend never
 * collides with a send the kernel still holds for its response.
 *
 * The list is searched linearly: max_queries bounds it (1024), and SA
 * traffic is per connection setup, not per packet.
 */
#include "sa_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SA_NS_PER_MS 1000000ull
#define SA_DEF_TIMEOUT_MS 500
#define SA_DEF_RETRIES 3
#define SA_DEF_BUSY_RETRIES 8
#define SA_DEF_BUSY_BACKOFF_MS 20
#define SA_BUSY_BACKOFF_MAX_MS 1000
#define SA_DEF_MAX_QUERIES 1024
/* An attempt never waits longer than this, whatever RespTimeValue says. */
#define SA_MAX_ATTEMPT_MS 60000
/* Redirections followed by one query before it fails (a loop guard). */
#define SA_MAX_REDIRECTS 4
/* Usable records handed to a callback at most (primary, alternate, ...). */
#define SA_MAX_RECS 8
#define SA_MAX_PORTS 64
/* RespTimeValue not known yet. */
#define SA_RTV_UNKNOWN 0xff

struct sa_port {
	bool used;
	uint16_t port;
	uint16_t sm_lid;
	uint8_t sm_sl;
	uint16_t pkey_index;
	uint8_t resp_time_value; /* SA_RTV_UNKNOWN until ClassPortInfo */
	bool redirected;
	struct sa_dest dest; /* the SM, or where ClassPortInfo redirected */
	unsigned int in_flight;
};

struct sa_query {
	struct sa_query *next, *prev;
	uint64_t handle;
	uint16_t port;
	bool cpi; /* a ClassPortInfo Get of the client's own */
	struct sa_path_want want;
	sa_path_fn fn;
	void *ctx;
	uint32_t tid; /* this attempt's, low 32 bits */
	uint64_t due; /* this attempt times out, or the busy wait ends */
	bool waiting_busy; /* due is the end of a BUSY back-off, not a timeout */
	unsigned int attempts, busy, redirects;
};

struct sa_client {
	struct sa_client_config cfg;
	struct sa_client_ops ops;
	void *ops_ctx;
	struct sa_query *head;
	unsigned int n;
	uint64_t next_handle;
	uint32_t next_tid;
	struct sa_port ports[SA_MAX_PORTS];
	struct sa_client_counters c;
	/* The earliest query due, kept for sa_client_next_due(); stale
	 * after any query's due time changed or it left. */
	uint64_t due;
	bool due_stale;
};

struct sa_client *sa_client_new(const struct sa_client_config *cfg,
				const struct sa_client_ops *ops, void *ops_ctx)
{
	struct sa_client *sa = calloc(1, sizeof(*sa));

	if (!sa)
		return NULL;
	if (cfg)
		sa->cfg = *cfg;
	if (!sa->cfg.timeout_ms)
		sa->cfg.timeout_ms = SA_DEF_TIMEOUT_MS;
	if (!sa->cfg.retries)
		sa->cfg.retries = SA_DEF_RETRIES;
	if (!sa->cfg.busy_retries)
		sa->cfg.busy_retries = SA_DEF_BUSY_RETRIES;
	if (!sa->cfg.busy_backoff_ms)
		sa->cfg.busy_backoff_ms = SA_DEF_BUSY_BACKOFF_MS;
	if (!sa->cfg.max_queries)
		sa->cfg.max_queries = SA_DEF_MAX_QUERIES;
	sa->ops = *ops;
	sa->ops_ctx = ops_ctx;
	sa->next_handle = 1;
	/* TIDs need only differ from this client's recent ones. */
	sa->next_tid = 0x5a000001u;
	return sa;
}

void sa_client_free(struct sa_client *sa)
{
	struct sa_query *q, *next;

	if (!sa)
		return;
	for (q = sa->head; q; q = next) {
		next = q->next;
		free(q);
	}
	free(sa);
}

static struct sa_port *port_find(struct sa_client *sa, uint16_t port)
{
	for (unsigned int i = 0; i < SA_MAX_PORTS; i++)
		if (sa->ports[i].used && sa->ports[i].port == port)
			return &sa->ports[i];
	return NULL;
}

static void q_unlink(struct sa_client *sa, struct sa_query *q)
{
	struct sa_port *p = port_find(sa, q->port);

	sa->due_stale = true;
	if (q->prev)
		q->prev->next = q->next;
	else
		sa->head = q->next;
	if (q->next)
		q->next->prev = q->prev;
	q->next = q->prev = NULL;
	sa->n--;
	sa->c.in_flight = sa->n;
	if (p && p->in_flight)
		p->in_flight--;
}

/* Call back and free q (already unlinked or not). */
static void q_finish(struct sa_client *sa, struct sa_query *q, int status,
		     const struct sa_path_rec *recs, unsigned int n,
		     const char *why)
{
	q_unlink(sa, q);
	if (!q->cpi) {
		if (status)
			sa->c.failed++;
		else
			sa->c.answered++;
		q->fn(q->ctx, status, recs, n, why);
	}
	free(q);
}

static unsigned int attempt_ms(const struct sa_client *sa,
			       const struct sa_port *p)
{
	uint64_t ms = sa->cfg.timeout_ms;

	/* IBTA 13.4.6.2: the response comes within 4.096 us * 2^RespTime
	 * (plus the path's life time, which the client cannot know yet);
	 * wait twice that. */
	if (p->resp_time_value != SA_RTV_UNKNOWN) {
		uint64_t rt = p->resp_time_value > 31 ? 31 : p->resp_time_value;
		uint64_t us = (4096ull << rt) / 1000;
		uint64_t want = 2 * us / 1000 + 1;

		if (want > ms)
			ms = want;
	}
	return ms > SA_MAX_ATTEMPT_MS ? SA_MAX_ATTEMPT_MS : (unsigned int)ms;
}

/* Build and send q's next attempt; its timeout is armed either way. */
static void q_send(struct sa_client *sa, struct sa_query *q, uint64_t now)
{
	struct sa_port *p = port_find(sa, q->port);
	uint8_t mad[SA_MAD_SIZE];
	unsigned int ms;
	int rc;

	q->tid = sa->next_tid++;
	if (!sa->next_tid)
		sa->next_tid = 1;
	q->attempts++;
	q->waiting_busy = false;
	ms = attempt_ms(sa, p);
	q->due = now + (uint64_t)ms * SA_NS_PER_MS;
	sa->due_stale = true;
	if (q->cpi) {
		struct sa_msg m;

		sa_msg_init(&m, SA_REC_CLASS_PORT_INFO, SA_METHOD_GET, q->tid,
			    0);
		rc = sa_cpi_mad_encode(&m, NULL, mad);
		sa->c.cpi_queries++;
	} else {
		rc = sa_path_query_encode(&q->want, q->tid, mad);
	}
	if (rc < 0) {
		sa->c.send_errors++;
		return;
	}
	/* ClassPortInfo always from the SM itself: it says where to go. */
	rc = sa->ops.send(
		sa->ops_ctx, q->port,
		q->cpi ? &(struct sa_dest){ .lid = p->sm_lid,
					    .sl = p->sm_sl,
					    .qpn = 1,
					    .qkey = SA_QP1_QKEY,
					    .pkey_index = p->pkey_index } :
			 &p->dest,
		mad, ms);
	sa->c.sent++;
	if (rc)
		sa->c.send_errors++;
}

static struct sa_query *q_new(struct sa_client *sa, uint16_t port, bool cpi)
{
	struct sa_query *q;
	struct sa_port *p = port_find(sa, port);

	if (sa->n >= sa->cfg.max_queries) {
		errno = ENOBUFS;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->handle = sa->next_handle++;
	q->port = port;
	q->cpi = cpi;
	q->next = sa->head;
	if (sa->head)
		sa->head->prev = q;
	sa->head = q;
	sa->n++;
	sa->c.in_flight = sa->n;
	if (p)
		p->in_flight++;
	return q;
}

/* Fail (or, for restart, resend) every query of a port. */
static void port_queries(struct sa_client *sa, uint16_t port, bool restart,
			 uint64_t now)
{
	struct sa_query *q;

again:
	for (q = sa->head; q; q = q->next) {
		if (q->port != port)
			continue;
		if (restart && !q->cpi && q->attempts) {
			/* The new SM answers afresh: a new TID, full budget. */
			q->attempts = q->busy = q->redirects = 0;
			q_send(sa, q, now);
			continue;
		}
		if (restart && q->cpi)
			continue; /* replaced below by the caller */
		q_finish(sa, q, -ENETDOWN, NULL, 0,
			 "the port went down while the SA query was in flight");
		goto again; /* the callback may have changed the list */
	}
}

static void cpi_start(struct sa_client *sa, struct sa_port *p, uint64_t now)
{
	struct sa_query *q;

	/* One ClassPortInfo Get a port: drop an older one. */
	for (q = sa->head; q; q = q->next)
		if (q->cpi && q->port == p->port) {
			q_finish(sa, q, 0, NULL, 0, NULL);
			break;
		}
	q = q_new(sa, p->port, true);
	if (q)
		q_send(sa, q, now);
}

int sa_client_port_set(struct sa_client *sa, uint16_t port, uint16_t sm_lid,
		       uint8_t sm_sl, uint16_t pkey_index, uint64_t now)
{
	struct sa_port *p = port_find(sa, port);
	bool changed;

	if (!p) {
		for (unsigned int i = 0; i < SA_MAX_PORTS && !p; i++)
			if (!sa->ports[i].used)
				p = &sa->ports[i];
		if (!p)
			return -ENOSPC;
		memset(p, 0, sizeof(*p));
		p->used = true;
		p->port = port;
		changed = true;
	} else {
		changed = p->sm_lid != sm_lid || p->sm_sl != sm_sl;
	}
	p->pkey_index = pkey_index;
	if (!changed)
		return 0;
	p->sm_lid = sm_lid;
	p->sm_sl = sm_sl;
	p->resp_time_value = SA_RTV_UNKNOWN;
	p->redirected = false;
	p->dest = (struct sa_dest){ .lid = sm_lid,
				    .sl = sm_sl,
				    .qpn = 1,
				    .qkey = SA_QP1_QKEY,
				    .pkey_index = pkey_index };
	if (!sm_lid) {
		port_queries(sa, port, false, now);
		return 0;
	}
	port_queries(sa, port, true, now);
	cpi_start(sa, p, now);
	return 0;
}

void sa_client_port_down(struct sa_client *sa, uint16_t port, uint64_t now)
{
	struct sa_port *p = port_find(sa, port);

	port_queries(sa, port, false, now);
	if (p) {
		/* Learnt again when the port comes back. */
		p->sm_lid = 0;
		p->resp_time_value = SA_RTV_UNKNOWN;
		p->redirected = false;
	}
}

uint64_t sa_client_path(struct sa_client *sa, uint16_t port,
			const struct sa_path_want *w, sa_path_fn fn, void *ctx,
			uint64_t now)
{
	struct sa_port *p = port_find(sa, port);
	struct sa_query *q;

	if (!p || !p->sm_lid) {
		errno = ENETUNREACH;
		return 0;
	}
	q = q_new(sa, port, false);
	if (!q)
		return 0;
	q->want = *w;
	q->fn = fn;
	q->ctx = ctx;
	sa->c.queries++;
	q_send(sa, q, now);
	return q->handle;
}

void sa_client_cancel(struct sa_client *sa, uint64_t handle)
{
	for (struct sa_query *q = sa->head; q; q = q->next)
		if (q->handle == handle && !q->cpi) {
			q_unlink(sa, q);
			free(q);
			return;
		}
}

static void busy_wait(struct sa_client *sa, struct sa_query *q, uint64_t now)
{
	uint64_t ms = (uint64_t)sa->cfg.busy_backoff_ms
		      << (q->busy > 6 ? 6 : q->busy - 1);

	if (ms > SA_BUSY_BACKOFF_MAX_MS)
		ms = SA_BUSY_BACKOFF_MAX_MS;
	q->waiting_busy = true;
	q->tid = 0; /* nothing is in flight: match no answer */
	q->due = now + ms * SA_NS_PER_MS;
	sa->due_stale = true;
}

static void use_redirect(struct sa_port *p,
			 const struct sa_class_port_info *cpi)
{
	p->redirected = true;
	p->dest.lid = cpi->redirect_lid;
	p->dest.sl = cpi->redirect_sl;
	p->dest.qpn = cpi->redirect_qp ? cpi->redirect_qp : 1;
	p->dest.qkey = cpi->redirect_qkey ? cpi->redirect_qkey : SA_QP1_QKEY;
}

static void cpi_answer(struct sa_client *sa, struct sa_query *q,
		       const struct sa_msg *m)
{
	struct sa_port *p = port_find(sa, q->port);
	struct sa_class_port_info cpi;

	if (m->hdr.status || m->rec != SA_REC_CLASS_PORT_INFO ||
	    sa_msg_class_port_info(m, &cpi)) {
		/* Keep querying the SM itself, with the default timeout. */
		sa->c.sa_errors++;
		q_finish(sa, q, 0, NULL, 0, NULL);
		return;
	}
	if (p) {
		p->resp_time_value = cpi.resp_time_value;
		if (cpi.redirect_lid) {
			use_redirect(p, &cpi);
			sa->c.redirects++;
		}
	}
	q_finish(sa, q, 0, NULL, 0, NULL);
}

/*
 * A redirect status (IBTA 13.5.3.3): the answer carries ClassPortInfo with
 * where to ask instead. Resend there at once.
 */
static void redirect_answer(struct sa_client *sa, struct sa_query *q,
			    const struct sa_msg *m, const uint8_t *mad,
			    size_t len, uint64_t now)
{
	struct sa_port *p = port_find(sa, q->port);
	struct sa_class_port_info cpi;

	memset(&cpi, 0, sizeof(cpi));
	if (m->rec == SA_REC_CLASS_PORT_INFO)
		sa_msg_class_port_info(m, &cpi);
	else if (len >= SA_DATA_OFFSET + SA_CLASS_PORT_INFO_SIZE)
		sa_class_port_info_decode(mad + SA_DATA_OFFSET, &cpi);
	if (!p || !cpi.redirect_lid || ++q->redirects > SA_MAX_REDIRECTS) {
		sa->c.sa_errors++;
		q_finish(sa, q, -EPROTO, NULL, 0,
			 "the SA asked to redirect without a usable "
			 "RedirectLID, or redirected too often");
		return;
	}
	use_redirect(p, &cpi);
	sa->c.redirects++;
	q->attempts = 0;
	q_send(sa, q, now);
}

static void path_answer(struct sa_client *sa, struct sa_query *q,
			const struct sa_msg *m)
{
	struct sa_path_rec recs[SA_MAX_RECS];
	unsigned int want = q->want.numb_path ? q->want.numb_path : 1;
	unsigned int n = 0, code = sa_status_sa_code(m->hdr.status);
	char why[128];

	if (code || m->hdr.status) {
		sa->c.sa_errors++;
		if (code == SA_ERR_NO_RECORDS) {
			sa->c.no_records++;
			q_finish(sa, q, -ENOENT, NULL, 0,
				 "the SA has no path to that destination");
			return;
		}
		snprintf(why, sizeof(why), "the SA answered status %#06x (%s)",
			 m->hdr.status, sa_status_str(code));
		q_finish(sa, q, -EPROTO, NULL, 0, why);
		return;
	}
	if (want > SA_MAX_RECS)
		want = SA_MAX_RECS;
	for (unsigned int i = 0; i < m->nrec && n < want; i++)
		if (!sa_msg_path_rec(m, i, &recs[n]) &&
		    !sa_path_check(&recs[n]))
			n++;
	if (!m->nrec) {
		/* opensm answers a GetTable it has nothing for with an empty
		 * table and status 0 (ERR_NO_RECORDS only to a Get). */
		sa->c.no_records++;
		q_finish(sa, q, -ENOENT, NULL, 0,
			 "the SA has no path to that destination");
		return;
	}
	if (!n) {
		q_finish(sa, q, -ENOENT, NULL, 0,
			 "the SA's answer held no usable path (no LID route)");
		return;
	}
	q_finish(sa, q, 0, recs, n, NULL);
}

void sa_client_recv(struct sa_client *sa, uint16_t port, const uint8_t *mad,
		    size_t len, uint64_t now)
{
	struct sa_fault fault;
	struct sa_msg m;
	struct sa_query *q;
	uint32_t tid;

	sa->c.rx++;
	if (sa_mad_decode(mad, len, sa->cfg.decode_flags, &m, &fault)) {
		sa->c.rx_malformed++;
		return;
	}
	if (m.hdr.method != SA_METHOD_GET_RESP &&
	    m.hdr.method != SA_METHOD_GET_TABLE_RESP) {
		sa->c.rx_unmatched++;
		return;
	}
	tid = (uint32_t)m.hdr.tid;
	for (q = sa->head; q; q = q->next)
		if (q->port == port && q->tid && q->tid == tid)
			break;
	if (!q) {
		sa->c.rx_unmatched++;
		return;
	}
	if (q->cpi) {
		cpi_answer(sa, q, &m);
		return;
	}
	if (sa_status_busy(m.hdr.status)) {
		sa->c.busy++;
		if (++q->busy > sa->cfg.busy_retries) {
			q_finish(sa, q, -EBUSY, NULL, 0,
				 "the SA stayed busy after every retry");
			return;
		}
		busy_wait(sa, q, now);
		return;
	}
	if (sa_status_redirect(m.hdr.status)) {
		redirect_answer(sa, q, &m, mad, len, now);
		return;
	}
	if (m.rec != SA_REC_PATH_REC) {
		sa->c.rx_unmatched++;
		return;
	}
	path_answer(sa, q, &m);
}

/* The loop asks before every sleep: the walk runs only after a change. */
uint64_t sa_client_next_due(struct sa_client *sa)
{
	uint64_t due = 0;

	if (!sa->due_stale)
		return sa->due;
	for (const struct sa_query *q = sa->head; q; q = q->next)
		if (!due || q->due < due)
			due = q->due;
	sa->due = due;
	sa->due_stale = false;
	return due;
}

void sa_client_tick(struct sa_client *sa, uint64_t now)
{
	struct sa_query *q;

again:
	for (q = sa->head; q; q = q->next) {
		if (q->due > now)
			continue;
		if (q->waiting_busy) {
			/* The back-off is over: a new attempt, same budget. */
			q->attempts--;
			q_send(sa, q, now);
			continue;
		}
		sa->c.timeouts++;
		if (q->attempts <= sa->cfg.retries) {
			q_send(sa, q, now);
			continue;
		}
		q_finish(sa, q, -ETIMEDOUT, NULL, 0,
			 q->cpi ? NULL : "the SA did not answer");
		goto again;
	}
}

const struct sa_client_counters *sa_client_counters(const struct sa_client *sa)
{
	return &sa->c;
}

int sa_client_port_view(const struct sa_client *sa, uint16_t port,
			struct sa_port_view *out)
{
	const struct sa_port *p = port_find((struct sa_client *)sa, port);

	memset(out, 0, sizeof(*out));
	if (!p)
		return -ENOENT;
	out->sm_lid = p->sm_lid;
	out->resp_time_value = p->resp_time_value;
	out->dest = p->dest;
	out->in_flight = p->in_flight;
	return 0;
}
