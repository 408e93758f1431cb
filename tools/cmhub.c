// SPDX-License-Identifier: MIT
/*
 * cmhub: the simulated fabric. Daemons using the sim transport connect to
 * its Unix SOCK_SEQPACKET socket, declare their virtual ports, and send
 * 256-byte MADs; the hub routes each by destination GID (when it has a
 * GRH) or LID and delivers it untouched, with the sender's address as the
 * from-fields. On command it drops, duplicates, reorders and delays MADs,
 * drawing every decision from one seeded PRNG so that a run is repeatable.
 * Protocol: daemon/sim_proto.h.
 *
 * I/O is batched: each daemon's socket is read with recvmmsg, and what is
 * routed to a daemon waits in its queue until the loop's prepare phase
 * writes it with one sendmmsg (per destination: each daemon has its own
 * connection). A full socket costs a wait for EV_WRITE, not a MAD (only
 * a queue beyond HUB_MAX_QUEUE overflows).
 *
 *   cmhub [--seed N] SOCKET              run the hub
 *   cmhub --ctl SOCKET set [from=N] [to=N] [loss=P] [dup=P] [reorder=P]
 *                          [delay=MIN-MAX] [seed=N] [reset]
 *   cmhub --ctl SOCKET stats             print the counters
 *   cmhub --ctl SOCKET port NODE PORT down|up|remove
 *                                        a node's port (0-based) goes
 *                                        down or comes back
 * P is a percentage (fractions allowed), delays are in microseconds.
 *
 * The hub is also the subnet's SM/SA (cmhub_sa.c): SA MADs to the SM LID
 * (--sm-lid, default 1) on QP1 are answered by the hub; the --sa-*
 * options (at start, or with --ctl at run time) set its attributes and
 * faults. Every daemon learns the SM LID from SIM_SM_CHANGE.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "cmhub_sa.h"
#include "sim_proto.h"
#include "util.h"

/* A daemon's undelivered MADs beyond this are counted as overflow. */
#define HUB_MAX_QUEUE 65536
/* How long a MAD held back for reordering waits for a successor. */
#define HUB_REORDER_HOLD_S 0.002
#define HUB_MAX_OVERRIDES 64
/* Packets per recvmmsg / sendmmsg; a full read batch yields to the loop. */
#define HUB_RECV_BATCH 64
#define HUB_SEND_BATCH 64

_Static_assert(sizeof(struct sim_hello) >= sizeof(struct sim_mad) &&
		       sizeof(struct sim_hello) >= sizeof(struct sim_ctl_set) &&
		       sizeof(struct sim_hello) >= sizeof(struct sim_ctl_sa),
	       "the hello is the largest message a hub receives");

struct hub_pkt {
	struct hub_pkt *next;
	struct hub_client *dst;
	ev_tstamp due; /* delayed packets only */
	ev_tstamp born; /* SA answers: when the query came */
	size_t len; /* of what follows: a MAD, a port state, an SM change */
	union {
		struct sim_mad m;
		struct sim_port_state ps;
		struct sim_sm_change sm;
	};
};

struct hub_client {
	struct hub *hub;
	struct hub_client *next;
	int fd;
	ev_io rio;
	ev_io wio;
	bool hello; /* a daemon (not a control client) */
	uint16_t node;
	uint16_t n_ports;
	struct sim_port_decl ports[SIM_MAX_PORTS];
	bool down[SIM_MAX_PORTS]; /* SIM_CTL_PORT: drop its MADs */
	bool removed[SIM_MAX_PORTS]; /* SIM_PORT_REMOVED: down for good */
	struct hub_pkt *q_head, *q_tail; /* for the next flush, or for room */
	unsigned int q_len;
	struct hub_client *dirty_next; /* on hub.dirty: flush before sleeping */
	bool dirty;
	struct hub_pkt *held; /* held back to be reordered */
	ev_timer hold_timer;
};

struct hub_override {
	uint16_t from, to;
	struct sim_faults f;
};

struct hub {
	struct ev_loop *loop;
	int lfd;
	ev_io lio;
	ev_signal sigint, sigterm;
	struct hub_client *clients;
	struct hub_client *dirty; /* queues to write in the prepare phase */
	ev_prepare flush;
	struct hub_pkt *delayed; /* sorted by due */
	ev_timer delay_timer;
	uint64_t rng;
	struct sim_faults dflt;
	struct hub_override ovr[HUB_MAX_OVERRIDES];
	unsigned int n_ovr;
	struct sim_stats st;
	struct hub_sa sa; /* the SM/SA of the subnet */
	/* SA answers waiting for --sa-delay-ms, in order of arrival (one
	 * delay for all: also in order of due time). */
	struct hub_pkt *sa_head, *sa_tail;
	ev_timer sa_timer;
};

/* splitmix64: tiny, seedable with any value, good enough for faults. */
static uint64_t hub_rand(struct hub *h)
{
	uint64_t z = (h->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* True with probability ppm / 10^6. Always draws, to keep runs aligned. */
static bool hub_chance(struct hub *h, uint32_t ppm)
{
	return hub_rand(h) % 1000000 < ppm;
}

static const struct sim_faults *hub_faults(struct hub *h, uint16_t from,
					   uint16_t to)
{
	for (unsigned int i = 0; i < h->n_ovr; i++)
		if ((!h->ovr[i].from || h->ovr[i].from == from) &&
		    (!h->ovr[i].to || h->ovr[i].to == to))
			return &h->ovr[i].f;
	return &h->dflt;
}

static void hub_client_free(struct hub_client *c);

/* Take the first n packets off a daemon's queue (sent, or undeliverable). */
static void hub_dequeue(struct hub_client *c, unsigned int n)
{
	while (n-- && c->q_head) {
		struct hub_pkt *p = c->q_head;

		c->q_head = p->next;
		if (!c->q_head)
			c->q_tail = NULL;
		c->q_len--;
		free(p);
	}
}

/* Write a daemon's queue, HUB_SEND_BATCH packets per sendmmsg. */
static void hub_flush(struct hub_client *c)
{
	struct mmsghdr mh[HUB_SEND_BATCH];
	struct iovec iov[HUB_SEND_BATCH];

	while (c->q_head) {
		struct hub_pkt *p = c->q_head;
		unsigned int n = 0;
		int r;

		memset(mh, 0, sizeof(mh));
		for (; p && n < HUB_SEND_BATCH; p = p->next, n++) {
			iov[n].iov_base = &p->m;
			iov[n].iov_len = p->len;
			mh[n].msg_hdr.msg_iov = &iov[n];
			mh[n].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(c->fd, mh, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN) {
			/* The daemon is going away (its reader sees EOF). */
			hub_dequeue(c, c->q_len);
			break;
		}
		if (r > 0)
			hub_dequeue(c, (unsigned int)r);
		/* Short: the socket is full; EV_WRITE says when it is not. */
		if (r < (int)n) {
			ev_io_start(c->hub->loop, &c->wio);
			return;
		}
	}
	ev_io_stop(c->hub->loop, &c->wio);
}

/*
 * Before the loop sleeps: every queue that grew in this iteration goes
 * out, in one sendmmsg where the socket has room.
 */
static void hub_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct hub *h = container_of(w, struct hub, flush);

	while (h->dirty) {
		struct hub_client *c = h->dirty;

		h->dirty = c->dirty_next;
		c->dirty = false;
		/* A full socket is flushed by its EV_WRITE watcher. */
		if (!ev_is_active(&c->wio))
			hub_flush(c);
	}
}

static void hub_mark_dirty(struct hub_client *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = c->hub->dirty;
	c->hub->dirty = c;
}

/* Append to a daemon's queue, for hub_flush_cb. */
static void hub_queue(struct hub_client *c, struct hub_pkt *p)
{
	p->next = NULL;
	if (c->q_tail)
		c->q_tail->next = p;
	else
		c->q_head = p;
	c->q_tail = p;
	c->q_len++;
	hub_mark_dirty(c);
}

/* Hand a routed MAD to its destination's queue. */
static void hub_enqueue(struct hub_client *c, struct hub_pkt *p)
{
	struct hub *h = c->hub;

	if (c->q_len >= HUB_MAX_QUEUE) {
		h->st.overflow++;
		free(p);
		return;
	}
	h->st.routed++;
	hub_queue(c, p);
}

static void hub_release_held(struct hub_client *c)
{
	struct hub_pkt *p = c->held;

	if (!p)
		return;
	c->held = NULL;
	ev_timer_stop(c->hub->loop, &c->hold_timer);
	hub_enqueue(c, p);
}

static void hub_hold_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	hub_release_held(container_of(w, struct hub_client, hold_timer));
}

/*
 * Deliver now, unless the reorder setting holds this packet back until the
 * next one to the same daemon has passed it (or the hold expires).
 */
static void hub_deliver(struct hub_pkt *p, uint32_t reorder_ppm)
{
	struct hub_client *c = p->dst;
	bool hold = hub_chance(c->hub, reorder_ppm);

	if (hold && !c->held) {
		c->hub->st.reordered++;
		c->held = p;
		ev_timer_set(&c->hold_timer, HUB_REORDER_HOLD_S, 0);
		ev_timer_start(c->hub->loop, &c->hold_timer);
		return;
	}
	hub_enqueue(c, p);
	hub_release_held(c);
}

static void hub_arm_delay(struct hub *h)
{
	ev_timer_stop(h->loop, &h->delay_timer);
	if (h->delayed) {
		ev_tstamp after = h->delayed->due - ev_now(h->loop);

		ev_timer_set(&h->delay_timer, after > 0 ? after : 0, 0);
		ev_timer_start(h->loop, &h->delay_timer);
	}
}

static void hub_delay_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct hub *h = container_of(w, struct hub, delay_timer);

	/* Delayed MADs have had their reorder draw already: in order. */
	while (h->delayed && h->delayed->due <= ev_now(loop) + 1e-6) {
		struct hub_pkt *p = h->delayed;

		h->delayed = p->next;
		hub_enqueue(p->dst, p);
	}
	hub_arm_delay(h);
}

static void hub_delay(struct hub *h, struct hub_pkt *p, uint32_t us)
{
	struct hub_pkt **pp = &h->delayed;

	p->due = ev_now(h->loop) + us / 1e6;
	/* Stable: equal due times keep their order of arrival. */
	while (*pp && (*pp)->due <= p->due)
		pp = &(*pp)->next;
	p->next = *pp;
	*pp = p;
	h->st.delayed++;
	hub_arm_delay(h);
}

/*
 * The port that owns a GID (grh; *gid_index: which of its GIDs) or a LID,
 * or NULL.
 */
static struct hub_client *hub_route(struct hub *h, const struct sim_addr *a,
				    uint16_t *port, uint8_t *gid_index)
{
	for (struct hub_client *c = h->clients; c; c = c->next) {
		if (!c->hello)
			continue;
		for (uint16_t i = 0; i < c->n_ports; i++) {
			const struct sim_port_decl *d = &c->ports[i];
			uint8_t g = 0;

			if (a->grh) {
				for (g = 0; g < d->n_gids; g++)
					if (!memcmp(d->gids[g], a->gid,
						    SIM_GID_SIZE))
						goto found;
			} else if (a->lid && d->lid == a->lid) {
				goto found;
			}
			continue;
found:
			*port = i;
			*gid_index = g;
			return c;
		}
	}
	return NULL;
}

/* ---- the SA ------------------------------------------------------------ */

/* hub_sa_find_fn: an IB port that is up, by GID or by LID. */
static bool hub_sa_find(void *ctx, const uint8_t *gid, uint16_t lid,
			struct hub_sa_port *out)
{
	struct hub *h = ctx;

	for (struct hub_client *c = h->clients; c; c = c->next) {
		if (!c->hello)
			continue;
		for (uint16_t i = 0; i < c->n_ports; i++) {
			const struct sim_port_decl *d = &c->ports[i];
			int g = -1;

			if (d->roce || c->down[i])
				continue;
			if (gid) {
				for (uint8_t k = 0; k < d->n_gids; k++)
					if (!memcmp(d->gids[k], gid,
						    SIM_GID_SIZE))
						g = k;
			} else if (lid && d->lid == lid) {
				g = 0;
			}
			if (g < 0)
				continue;
			memset(out, 0, sizeof(*out));
			out->lid = d->lid;
			if (g < d->n_gids)
				memcpy(out->gid, d->gids[g], SIM_GID_SIZE);
			return true;
		}
	}
	return false;
}

static void hub_sa_arm(struct hub *h)
{
	ev_timer_stop(h->loop, &h->sa_timer);
	if (h->sa_head) {
		ev_tstamp after = h->sa_head->due - ev_now(h->loop);

		ev_timer_set(&h->sa_timer, after > 0 ? after : 0, 0);
		ev_timer_start(h->loop, &h->sa_timer);
	}
}

/* Hand over the SA answers that are due, in order. */
static void hub_sa_release(struct hub *h)
{
	while (h->sa_head && h->sa_head->due <= ev_now(h->loop) + 1e-6) {
		struct hub_pkt *p = h->sa_head;

		h->sa_head = p->next;
		if (!h->sa_head)
			h->sa_tail = NULL;
		h->sa.st.pending--;
		hub_queue(p->dst, p);
	}
	hub_sa_arm(h);
}

static void hub_sa_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	hub_sa_release(container_of(w, struct hub, sa_timer));
}

/* --sa-delay-ms changed: what waits is due at its arrival + the new one. */
static void hub_sa_redelay(struct hub *h)
{
	ev_now_update(h->loop);
	for (struct hub_pkt *p = h->sa_head; p; p = p->next)
		p->due = p->born + h->sa.c.delay_ms / 1e3;
	hub_sa_release(h);
}

/*
 * An SA MAD to the SM (or the redirect address): the hub answers it to
 * the sender's port, from the SA's address, now or after --sa-delay-ms.
 * Port faults apply (a down port drops it); the loss/dup/reorder/delay
 * settings of 'set' are for MADs between daemons and do not.
 */
static void hub_sa_mad(struct hub_client *src, const struct sim_mad *in,
		       bool at_redirect)
{
	struct hub *h = src->hub;
	const struct sim_port_decl *sp = &src->ports[in->port];
	struct hub_sa_port me = { .lid = sp->lid };
	uint8_t g = in->addr.grh ? in->sgid_index : 0;
	struct hub_pkt *p;

	if (src->down[in->port]) {
		h->st.dropped++;
		return;
	}
	if (g < sp->n_gids)
		memcpy(me.gid, sp->gids[g], SIM_GID_SIZE);
	p = calloc(1, sizeof(*p));
	if (!p) {
		h->st.overflow++;
		return;
	}
	if (!hub_sa_query(&h->sa, in->mad, at_redirect, &me, hub_sa_find, h,
			  p->m.mad, &p->m.addr)) {
		free(p);
		return;
	}
	p->dst = src;
	p->len = sizeof(p->m);
	p->m.hdr.type = SIM_MAD;
	p->m.hdr.version = SIM_PROTO_VERSION;
	p->m.port = in->port;
	p->m.addr.pkey_index = in->addr.pkey_index;
	if (!h->sa.c.delay_ms && !h->sa_head) {
		hub_queue(src, p);
		return;
	}
	p->born = ev_now(h->loop);
	p->due = p->born + h->sa.c.delay_ms / 1e3;
	p->next = NULL;
	if (h->sa_tail)
		h->sa_tail->next = p;
	else
		h->sa_head = p;
	h->sa_tail = p;
	h->sa.st.delayed++;
	h->sa.st.pending++;
	if (h->sa_head == p)
		hub_sa_arm(h);
}

/* Tell one daemon where the SM is, behind what is queued for it. */
static void hub_sm_change(struct hub_client *c)
{
	struct hub_pkt *p = calloc(1, sizeof(*p));

	if (!p)
		return;
	p->dst = c;
	p->len = sizeof(p->sm);
	p->sm.hdr.type = SIM_SM_CHANGE;
	p->sm.hdr.version = SIM_PROTO_VERSION;
	p->sm.sm_lid = c->hub->sa.c.sm_lid;
	p->sm.sm_sl = c->hub->sa.c.sm_sl;
	hub_queue(c, p);
	if (!ev_is_active(&c->wio))
		hub_flush(c);
}

static int hub_sa_set(struct hub *h, const struct sim_ctl_sa *m)
{
	bool moved;
	int rc = hub_sa_apply(&h->sa, m, &moved);

	if (rc)
		return rc;
	if (moved)
		for (struct hub_client *c = h->clients; c; c = c->next)
			if (c->hello)
				hub_sm_change(c);
	if (m->flags & SIM_SA_SET_DELAY)
		hub_sa_redelay(h);
	return 0;
}

static void hub_sa_reply(struct hub_client *c, int32_t status)
{
	struct sim_ctl_sa_reply r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SIM_CTL_SA_REPLY;
	r.hdr.version = SIM_PROTO_VERSION;
	r.status = status;
	r.config = c->hub->sa.c;
	r.stats = c->hub->sa.st;
	if (send(c->fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		fprintf(stderr, "cmhub: control reply: %s\n", strerror(errno));
}

/* ---- routing ----------------------------------------------------------- */

static void hub_mad(struct hub_client *src, const struct sim_mad *in)
{
	struct hub *h = src->hub;
	const struct sim_port_decl *sp;
	const struct sim_faults *f;
	struct hub_client *dst;
	struct sim_mad out;
	uint16_t dport;
	uint8_t dgid;
	bool at_redirect;
	int copies;

	h->st.received++;
	if (in->port >= src->n_ports) {
		h->st.unroutable++;
		return;
	}
	sp = &src->ports[in->port];
	if (hub_sa_mine(&h->sa, &in->addr, in->mad, &at_redirect)) {
		hub_sa_mad(src, in, at_redirect);
		return;
	}
	dst = hub_route(h, &in->addr, &dport, &dgid);
	if (!dst) {
		h->st.unroutable++;
		return;
	}
	if (src->down[in->port] || dst->down[dport]) {
		h->st.dropped++;
		return;
	}
	/* The receiver sees who sent it: the sender's LID, its source GID
	 * when there was a GRH, QPN 1 (IBTA 13.5: CM MADs go via the GSI). */
	memset(&out, 0, sizeof(out));
	out.hdr.type = SIM_MAD;
	out.hdr.version = SIM_PROTO_VERSION;
	out.port = dport;
	out.addr.lid = sp->lid;
	out.addr.sl = in->addr.sl;
	out.addr.qpn = 1;
	out.addr.pkey_index = in->addr.pkey_index;
	if (in->addr.grh) {
		out.addr.grh = 1;
		out.sgid_index = dgid; /* the receiver's GID it was sent to */
		if (in->sgid_index < sp->n_gids)
			memcpy(out.addr.gid, sp->gids[in->sgid_index],
			       SIM_GID_SIZE);
		out.addr.hop_limit = in->addr.hop_limit;
		out.addr.traffic_class = in->addr.traffic_class;
		out.addr.flow_label = in->addr.flow_label;
	}
	memcpy(out.mad, in->mad, SIM_MAD_SIZE);

	f = hub_faults(h, src->node, dst->node);
	if (hub_chance(h, f->loss_ppm)) {
		h->st.dropped++;
		return;
	}
	copies = 1;
	if (hub_chance(h, f->dup_ppm)) {
		h->st.duplicated++;
		copies = 2;
	}
	for (int i = 0; i < copies; i++) {
		struct hub_pkt *p = malloc(sizeof(*p));
		uint32_t us = f->delay_min_us;

		if (!p) {
			h->st.overflow++;
			continue;
		}
		p->dst = dst;
		p->len = sizeof(p->m);
		p->m = out;
		if (f->delay_max_us > f->delay_min_us)
			us += (uint32_t)(hub_rand(h) % (f->delay_max_us -
							f->delay_min_us + 1));
		if (us)
			hub_delay(h, p, us);
		else
			hub_deliver(p, f->reorder_ppm);
	}
}

static void hub_reply(struct hub_client *c, int32_t status)
{
	struct sim_ctl_reply r;
	unsigned int ports = 0, daemons = 0;

	for (struct hub_client *o = c->hub->clients; o; o = o->next)
		if (o->hello) {
			daemons++;
			ports += o->n_ports;
		}
	memset(&r, 0, sizeof(r));
	r.hdr.type = SIM_CTL_REPLY;
	r.hdr.version = SIM_PROTO_VERSION;
	r.status = status;
	r.stats = c->hub->st;
	r.stats.daemons = daemons;
	r.stats.ports = ports;
	if (send(c->fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		fprintf(stderr, "cmhub: control reply: %s\n", strerror(errno));
}

static int hub_set(struct hub *h, const struct sim_ctl_set *s)
{
	if (s->flags & SIM_SET_FAULTS) {
		if (!s->from && !s->to) {
			h->dflt = s->faults;
		} else {
			unsigned int i;

			for (i = 0; i < h->n_ovr; i++)
				if (h->ovr[i].from == s->from &&
				    h->ovr[i].to == s->to)
					break;
			if (i == HUB_MAX_OVERRIDES)
				return -ENOSPC;
			if (i == h->n_ovr)
				h->n_ovr++;
			h->ovr[i].from = s->from;
			h->ovr[i].to = s->to;
			h->ovr[i].f = s->faults;
		}
	}
	if (s->flags & SIM_SET_SEED)
		h->rng = s->seed;
	if (s->flags & SIM_SET_RESET)
		memset(&h->st, 0, sizeof(h->st));
	return 0;
}

/*
 * SIM_CTL_PORT: mark the port and tell its daemon, behind the MADs already
 * queued for it (they were routed before the port changed), and at once,
 * so that it is in the daemon's socket before the control reply goes.
 */
static int hub_port(struct hub *h, const struct sim_ctl_port *m)
{
	for (struct hub_client *c = h->clients; c; c = c->next) {
		struct hub_pkt *p;

		if (!c->hello || c->node != m->node)
			continue;
		if (m->port >= c->n_ports)
			return -ENOENT;
		if (c->removed[m->port])
			return m->up == SIM_PORT_REMOVED ? 0 : -ENODEV;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->down[m->port] = m->up != 1;
		c->removed[m->port] = m->up == SIM_PORT_REMOVED;
		p->dst = c;
		p->len = sizeof(p->ps);
		p->ps.hdr.type = SIM_PORT_STATE;
		p->ps.hdr.version = SIM_PROTO_VERSION;
		p->ps.port = m->port;
		p->ps.up = m->up == SIM_PORT_REMOVED ? SIM_PORT_REMOVED :
			   m->up		     ? 1 :
						       0;
		hub_queue(c, p);
		if (!ev_is_active(&c->wio))
			hub_flush(c);
		return 0;
	}
	return -ENOENT;
}

static bool hub_port_taken(struct hub *h, const struct sim_port_decl *d)
{
	for (struct hub_client *c = h->clients; c; c = c->next) {
		if (!c->hello)
			continue;
		for (unsigned int i = 0; i < c->n_ports; i++) {
			const struct sim_port_decl *o = &c->ports[i];

			if (d->lid && o->lid == d->lid)
				return true;
			for (unsigned int a = 0; a < d->n_gids; a++)
				for (unsigned int b = 0; b < o->n_gids; b++)
					if (!memcmp(d->gids[a], o->gids[b],
						    SIM_GID_SIZE))
						return true;
		}
	}
	return false;
}

static int hub_hello(struct hub_client *c, const struct sim_hello *m)
{
	struct hub *h = c->hub;

	if (m->hdr.version != SIM_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	if (!m->node || !m->n_ports || m->n_ports > SIM_MAX_PORTS)
		return -EINVAL;
	for (struct hub_client *o = h->clients; o; o = o->next)
		if (o->hello && o->node == m->node)
			return -EADDRINUSE;
	for (unsigned int i = 0; i < m->n_ports; i++) {
		if (m->port[i].n_gids > SIM_MAX_GIDS)
			return -EINVAL;
		if (hub_port_taken(h, &m->port[i]))
			return -EADDRINUSE;
	}
	c->node = m->node;
	c->n_ports = m->n_ports;
	memcpy(c->ports, m->port, sizeof(c->ports));
	c->hello = true;
	return 0;
}

/* Returns false when the client is to be closed. */
static bool hub_msg(struct hub_client *c, const void *buf, size_t len)
{
	const struct sim_hdr *hdr = buf;

	if (len < sizeof(*hdr))
		return false;
	switch ((enum sim_msg_type)hdr->type) {
	case SIM_HELLO: {
		struct sim_hello_ack ack = {
			.hdr = { SIM_HELLO_ACK, SIM_PROTO_VERSION },
		};

		if (c->hello || len != sizeof(struct sim_hello))
			return false;
		ack.status = hub_hello(c, buf);
		send(c->fd, &ack, sizeof(ack), MSG_NOSIGNAL);
		if (ack.status == 0)
			hub_sm_change(c);
		return ack.status == 0;
	}
	case SIM_MAD:
		if (!c->hello || len != sizeof(struct sim_mad))
			return false;
		hub_mad(c, buf);
		return true;
	case SIM_CTL_SET:
		if (c->hello || len != sizeof(struct sim_ctl_set))
			return false;
		hub_reply(c, hub_set(c->hub, buf));
		return true;
	case SIM_CTL_STATS:
		if (c->hello)
			return false;
		hub_reply(c, 0);
		return true;
	case SIM_CTL_PORT:
		if (c->hello || len != sizeof(struct sim_ctl_port))
			return false;
		hub_reply(c, hub_port(c->hub, buf));
		return true;
	case SIM_CTL_SA:
		if (c->hello || len != sizeof(struct sim_ctl_sa))
			return false;
		hub_sa_reply(c, hub_sa_set(c->hub, buf));
		return true;
	case SIM_HELLO_ACK:
	case SIM_CTL_REPLY:
	case SIM_PORT_STATE:
	case SIM_SM_CHANGE:
	case SIM_CTL_SA_REPLY:
		break;
	}
	return false;
}

/*
 * One recvmmsg per wake-up: a short batch has emptied the socket (no call
 * just for EAGAIN), a full one yields so that other daemons get their turn
 * (the socket stays readable).
 */
static void hub_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct hub_client *c = container_of(w, struct hub_client, rio);
	/* Room for the largest message (a hello), aligned for any. */
	static _Alignas(8)
		uint8_t buf[HUB_RECV_BATCH][sizeof(struct sim_hello)];
	struct mmsghdr mh[HUB_RECV_BATCH];
	struct iovec iov[HUB_RECV_BATCH];
	int r;

	memset(mh, 0, sizeof(mh));
	for (int i = 0; i < HUB_RECV_BATCH; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	r = recvmmsg(c->fd, mh, HUB_RECV_BATCH, MSG_DONTWAIT, NULL);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		hub_client_free(c);
		return;
	}
	for (int i = 0; i < r; i++) {
		/* A zero-length packet is the end of file. */
		if (!mh[i].msg_len || !hub_msg(c, buf[i], mh[i].msg_len)) {
			hub_client_free(c);
			return;
		}
	}
}

static void hub_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	hub_flush(container_of(w, struct hub_client, wio));
}

/* Forget a daemon: its ports stop routing and its pending MADs go. */
static void hub_client_free(struct hub_client *c)
{
	struct hub *h = c->hub;
	struct hub_pkt **pp;

	for (struct hub_client **cp = &h->clients; *cp; cp = &(*cp)->next)
		if (*cp == c) {
			*cp = c->next;
			break;
		}
	for (struct hub_client **cp = &h->dirty; c->dirty && *cp;
	     cp = &(*cp)->dirty_next)
		if (*cp == c) {
			*cp = c->dirty_next;
			break;
		}
	for (pp = &h->delayed; *pp;) {
		struct hub_pkt *p = *pp;

		if (p->dst == c) {
			*pp = p->next;
			free(p);
		} else {
			pp = &p->next;
		}
	}
	hub_arm_delay(h);
	for (pp = &h->sa_head, h->sa_tail = NULL; *pp;) {
		struct hub_pkt *p = *pp;

		if (p->dst == c) {
			*pp = p->next;
			h->sa.st.pending--;
			free(p);
		} else {
			h->sa_tail = p;
			pp = &p->next;
		}
	}
	hub_sa_arm(h);
	hub_dequeue(c, c->q_len);
	free(c->held);
	ev_timer_stop(h->loop, &c->hold_timer);
	ev_io_stop(h->loop, &c->rio);
	ev_io_stop(h->loop, &c->wio);
	close(c->fd);
	free(c);
}

static void hub_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct hub *h = container_of(w, struct hub, lio);
	struct hub_client *c;
	int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int sz = 4 << 20;

	if (fd < 0)
		return;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	/* Room for bursts: a full queue costs a wakeup, not a drop. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	c->hub = h;
	c->fd = fd;
	ev_io_init(&c->rio, hub_read_cb, fd, EV_READ);
	ev_io_init(&c->wio, hub_write_cb, fd, EV_WRITE);
	ev_timer_init(&c->hold_timer, hub_hold_cb, 0, 0);
	ev_io_start(loop, &c->rio);
	c->next = h->clients;
	h->clients = c;
}

static void hub_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

static int hub_run(const char *path, uint64_t seed, const struct sim_ctl_sa *sa)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct hub h;
	bool moved;

	memset(&h, 0, sizeof(h));
	h.rng = seed;
	hub_sa_init(&h.sa);
	if (hub_sa_apply(&h.sa, sa, &moved)) {
		fprintf(stderr, "cmhub: bad SA setting\n");
		return 2;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "cmhub: socket path too long: %s\n", path);
		return 1;
	}
	strcpy(sun.sun_path, path);
	h.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0);
	if (h.lfd < 0 || bind(h.lfd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    listen(h.lfd, 64)) {
		fprintf(stderr, "cmhub: %s: %s\n", path, strerror(errno));
		return 1;
	}
	h.loop = ev_default_loop(EVFLAG_AUTO);
	ev_io_init(&h.lio, hub_accept_cb, h.lfd, EV_READ);
	ev_io_start(h.loop, &h.lio);
	ev_timer_init(&h.delay_timer, hub_delay_cb, 0, 0);
	ev_timer_init(&h.sa_timer, hub_sa_timer_cb, 0, 0);
	ev_prepare_init(&h.flush, hub_flush_cb);
	ev_prepare_start(h.loop, &h.flush);
	ev_signal_init(&h.sigint, hub_signal_cb, SIGINT);
	ev_signal_init(&h.sigterm, hub_signal_cb, SIGTERM);
	ev_signal_start(h.loop, &h.sigint);
	ev_signal_start(h.loop, &h.sigterm);
	ev_run(h.loop, 0);

	ev_prepare_stop(h.loop, &h.flush);
	while (h.clients)
		hub_client_free(h.clients);
	while (h.delayed) {
		struct hub_pkt *p = h.delayed;

		h.delayed = p->next;
		free(p);
	}
	ev_timer_stop(h.loop, &h.sa_timer);
	close(h.lfd);
	unlink(path);
	ev_loop_destroy(h.loop);
	return 0;
}

/* ---- control client ---------------------------------------------------- */

static int ctl_pct(const char *v, uint32_t *ppm)
{
	char *end;
	double d = strtod(v, &end);

	if (*end || d < 0 || d > 100)
		return -1;
	*ppm = (uint32_t)(d * 10000 + 0.5);
	return 0;
}

static int ctl_u64(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || *end || end == v || n > max)
		return -1;
	*out = n;
	return 0;
}

static int ctl_parse(int argc, char **argv, struct sim_ctl_set *s)
{
	uint64_t n;

	for (int i = 0; i < argc; i++) {
		char arg[128];
		char *v, *k = arg;
		int bad = 0;

		snprintf(arg, sizeof(arg), "%s", argv[i]);
		v = strchr(arg, '=');

		if (!strcmp(k, "reset")) {
			s->flags |= SIM_SET_RESET;
			continue;
		}
		if (!v)
			goto bad;
		*v++ = '\0';
		if (!strcmp(k, "loss")) {
			bad = ctl_pct(v, &s->faults.loss_ppm);
			s->flags |= SIM_SET_FAULTS;
		} else if (!strcmp(k, "dup")) {
			bad = ctl_pct(v, &s->faults.dup_ppm);
			s->flags |= SIM_SET_FAULTS;
		} else if (!strcmp(k, "reorder")) {
			bad = ctl_pct(v, &s->faults.reorder_ppm);
			s->flags |= SIM_SET_FAULTS;
		} else if (!strcmp(k, "delay")) {
			uint64_t lo, hi = 0;
			char *dash = strchr(v, '-');

			if (dash)
				*dash++ = '\0';
			bad = ctl_u64(v, UINT32_MAX, &lo) ||
			      ctl_u64(dash ? dash : v, UINT32_MAX, &hi) ||
			      hi < lo;
			s->faults.delay_min_us = (uint32_t)lo;
			s->faults.delay_max_us = (uint32_t)hi;
			s->flags |= SIM_SET_FAULTS;
		} else if (!strcmp(k, "from") || !strcmp(k, "to")) {
			bad = ctl_u64(v, UINT16_MAX, &n);
			if (k[0] == 'f')
				s->from = (uint16_t)n;
			else
				s->to = (uint16_t)n;
		} else if (!strcmp(k, "seed")) {
			bad = ctl_u64(v, UINT64_MAX, &s->seed);
			s->flags |= SIM_SET_SEED;
		} else {
			goto bad;
		}
		if (bad)
			goto bad;
		continue;
bad:
		fprintf(stderr, "cmhub: bad setting '%s'\n", argv[i]);
		return -1;
	}
	return 0;
}

static int ctl_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "cmhub: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr, "cmhub: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One request, one reply of exactly rlen bytes; its status, or 1. */
static int ctl_call(int fd, const char *path, const void *req, size_t len,
		    void *rep, size_t rlen)
{
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    recv(fd, rep, rlen, 0) != (ssize_t)rlen) {
		fprintf(stderr, "cmhub: %s: %s\n", path,
			errno ? strerror(errno) : "no reply");
		return -1;
	}
	return 0;
}

static void ctl_print_stats(const struct sim_stats *st)
{
	printf("received %" PRIu64 "\nrouted %" PRIu64 "\ndropped %" PRIu64
	       "\nduplicated %" PRIu64 "\nreordered %" PRIu64
	       "\ndelayed %" PRIu64 "\nunroutable %" PRIu64
	       "\noverflow %" PRIu64 "\ndaemons %" PRIu32 "\nports %" PRIu32
	       "\n",
	       st->received, st->routed, st->dropped, st->duplicated,
	       st->reordered, st->delayed, st->unroutable, st->overflow,
	       st->daemons, st->ports);
}

/* "key value" lines, as the hub's counters, for scripts. */
static void ctl_print_sa(const struct sim_ctl_sa_reply *r)
{
	const struct sim_sa_stats *s = &r->stats;
	const struct sim_sa_config *c = &r->config;

	printf("sa_queries %" PRIu64 "\nsa_answered %" PRIu64
	       "\nsa_busy %" PRIu64 "\nsa_dropped %" PRIu64
	       "\nsa_errors %" PRIu64 "\nsa_redirected %" PRIu64
	       "\nsa_malformed %" PRIu64 "\nsa_no_records %" PRIu64
	       "\nsa_invalid %" PRIu64 "\nsa_delayed %" PRIu64
	       "\nsa_pending %" PRIu64 "\n",
	       s->queries, s->answered, s->busy, s->dropped, s->errors,
	       s->redirected, s->malformed, s->no_records, s->invalid,
	       s->delayed, s->pending);
	printf("sa_on %u\nsm_lid %u\nsm_sl %u\nsa_mtu %u\nsa_sl %u\n"
	       "sa_rate %u\nsa_plt %u\nsa_resp_time %u\nsa_redirect_lid %u\n"
	       "sa_redirect_qpn %" PRIu32 "\nsa_delay_ms %" PRIu32
	       "\nsa_busy_left %" PRIu32 "\nsa_drop_left %" PRIu32
	       "\nsa_error_code %u\nsa_error_left %" PRIu32 "\n",
	       c->on, c->sm_lid, c->sm_sl, c->mtu, c->sl, c->rate, c->plt,
	       c->resp_time_value, c->redirect_lid, c->redirect_qpn,
	       c->delay_ms, c->busy_left, c->drop_left, c->error_code,
	       c->error_left);
}

/*
 * --ctl: the SA settings first (when any --sa-* / --sm-lid was given),
 * then the subcommand; 'stats' (or --stats) prints the hub's counters and
 * the SA's, a 'set' or 'port' the hub's, SA settings alone the SA's.
 */
static int ctl_run(const char *path, int argc, char **argv,
		   const struct sim_ctl_sa *sa, bool want_stats)
{
	union {
		struct sim_ctl_set set;
		struct sim_ctl_stats stats;
		struct sim_ctl_port port;
	} req;
	struct sim_ctl_reply rep;
	struct sim_ctl_sa_reply sarep;
	struct sim_ctl_sa saq;
	size_t len = 0;
	int fd, rc = 0;

	memset(&req, 0, sizeof(req));
	if (argc == 1 && !strcmp(argv[0], "stats"))
		want_stats = true;
	if (want_stats && argc && strcmp(argv[0], "stats")) {
		fprintf(stderr, "cmhub: --stats takes no subcommand\n");
		return 2;
	}
	if (want_stats) {
		req.stats.hdr.type = SIM_CTL_STATS;
		len = sizeof(req.stats);
	} else if (argc >= 1 && !strcmp(argv[0], "set")) {
		req.set.hdr.type = SIM_CTL_SET;
		if (ctl_parse(argc - 1, argv + 1, &req.set))
			return 2;
		len = sizeof(req.set);
	} else if (argc == 4 && !strcmp(argv[0], "port")) {
		uint64_t node, port;

		if (ctl_u64(argv[1], UINT16_MAX, &node) ||
		    ctl_u64(argv[2], SIM_MAX_PORTS - 1, &port) ||
		    (strcmp(argv[3], "up") && strcmp(argv[3], "down") &&
		     strcmp(argv[3], "remove"))) {
			fprintf(stderr,
				"cmhub: port NODE PORT up|down|remove\n");
			return 2;
		}
		req.port.hdr.type = SIM_CTL_PORT;
		req.port.node = (uint16_t)node;
		req.port.port = (uint16_t)port;
		req.port.up = !strcmp(argv[3], "remove") ?
				      SIM_PORT_REMOVED :
				      !strcmp(argv[3], "up");
		len = sizeof(req.port);
	} else if (argc || !sa->flags) {
		fprintf(stderr, "cmhub: --ctl SOCKET set ...|stats|port "
				"...|--sa-...\n");
		return 2;
	}
	req.set.hdr.version = SIM_PROTO_VERSION;
	fd = ctl_connect(path);
	if (fd < 0)
		return 1;
	if (sa->flags) {
		saq = *sa;
		saq.hdr.type = SIM_CTL_SA;
		saq.hdr.version = SIM_PROTO_VERSION;
		if (ctl_call(fd, path, &saq, sizeof(saq), &sarep,
			     sizeof(sarep))) {
			rc = 1;
			goto out;
		}
		if (sarep.status) {
			fprintf(stderr, "cmhub: SA settings: %s\n",
				strerror(-sarep.status));
			rc = 1;
			goto out;
		}
		if (!len)
			ctl_print_sa(&sarep);
	}
	if (!len)
		goto out;
	if (ctl_call(fd, path, &req, len, &rep, sizeof(rep))) {
		rc = 1;
		goto out;
	}
	if (rep.status) {
		fprintf(stderr, "cmhub: %s\n", strerror(-rep.status));
		rc = 1;
		goto out;
	}
	ctl_print_stats(&rep.stats);
	if (want_stats) {
		memset(&saq, 0, sizeof(saq));
		saq.hdr.type = SIM_CTL_SA;
		saq.hdr.version = SIM_PROTO_VERSION;
		if (ctl_call(fd, path, &saq, sizeof(saq), &sarep,
			     sizeof(sarep))) {
			rc = 1;
			goto out;
		}
		ctl_print_sa(&sarep);
	}
out:
	close(fd);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmhub [--seed N] [SA OPTIONS] SOCKET\n"
		"       cmhub --ctl SOCKET set [from=N] [to=N] [loss=P] "
		"[dup=P] [reorder=P]\n"
		"                              [delay=MIN[-MAX]] [seed=N] "
		"[reset]\n"
		"       cmhub --ctl SOCKET stats | --stats\n"
		"       cmhub --ctl SOCKET port NODE PORT down|up|remove\n"
		"       cmhub --ctl SOCKET SA OPTIONS\n"
		"SA options (the hub is the subnet's SM/SA):\n"
		"  --sm-lid N          the SM's LID (default 1); the daemons "
		"are told\n"
		"  --sa-on, --sa-off   answer SA MADs to the SM LID, or not\n"
		"  --sa-mtu CODE       PathRecord MTU, 1..5 (default 4: "
		"2048)\n"
		"  --sa-rate CODE      PathRecord rate (default 3: 10 Gb/s)\n"
		"  --sa-plt N          PathRecord packet life time (default "
		"16)\n"
		"  --sa-sl N           PathRecord SL when not asked (default "
		"0)\n"
		"  --sa-redirect LID:QPN|off  redirect (IBTA 13.5.3.3)\n"
		"  --sa-busy N         answer the next N queries BUSY\n"
		"  --sa-drop N         drop the next N queries\n"
		"  --sa-error CODE [--sa-count N]  answer the next N "
		"(default 1)\n"
		"                      with SA status CODE (0 clears)\n"
		"  --sa-delay-ms D     every answer waits D ms (0: none)\n"
		"  --sa-reset          zero the SA counters\n");
}

/* An --sa-* value: 0..max, or a bad option. */
static int sa_num(const char *v, uint64_t max, uint64_t *out)
{
	if (ctl_u64(v, max, out)) {
		fprintf(stderr, "cmhub: bad value '%s'\n", v);
		return -1;
	}
	return 0;
}

static int sa_redirect_arg(const char *v, struct sim_ctl_sa *sa)
{
	char buf[64], *colon;
	uint64_t lid, qpn;

	sa->flags |= SIM_SA_SET_REDIRECT;
	if (!strcmp(v, "off")) {
		sa->redirect_lid = 0;
		sa->redirect_qpn = 0;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	colon = strchr(buf, ':');
	if (!colon)
		goto bad;
	*colon++ = '\0';
	if (ctl_u64(buf, 0xbfff, &lid) || !lid ||
	    ctl_u64(colon, 0xffffff, &qpn) || !qpn)
		goto bad;
	sa->redirect_lid = (uint16_t)lid;
	sa->redirect_qpn = (uint32_t)qpn;
	return 0;
bad:
	fprintf(stderr, "cmhub: --sa-redirect LID:QPN or off, not '%s'\n", v);
	return -1;
}

enum {
	OPT_SM_LID = 256,
	OPT_SA_ON,
	OPT_SA_OFF,
	OPT_SA_MTU,
	OPT_SA_RATE,
	OPT_SA_PLT,
	OPT_SA_SL,
	OPT_SA_REDIRECT,
	OPT_SA_BUSY,
	OPT_SA_DROP,
	OPT_SA_ERROR,
	OPT_SA_COUNT,
	OPT_SA_DELAY,
	OPT_SA_RESET,
	OPT_STATS,
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ctl", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "sm-lid", required_argument, NULL, OPT_SM_LID },
		{ "sa-on", no_argument, NULL, OPT_SA_ON },
		{ "sa-off", no_argument, NULL, OPT_SA_OFF },
		{ "sa-mtu", required_argument, NULL, OPT_SA_MTU },
		{ "sa-rate", required_argument, NULL, OPT_SA_RATE },
		{ "sa-plt", required_argument, NULL, OPT_SA_PLT },
		{ "sa-sl", required_argument, NULL, OPT_SA_SL },
		{ "sa-redirect", required_argument, NULL, OPT_SA_REDIRECT },
		{ "sa-busy", required_argument, NULL, OPT_SA_BUSY },
		{ "sa-drop", required_argument, NULL, OPT_SA_DROP },
		{ "sa-error", required_argument, NULL, OPT_SA_ERROR },
		{ "sa-count", required_argument, NULL, OPT_SA_COUNT },
		{ "sa-delay-ms", required_argument, NULL, OPT_SA_DELAY },
		{ "sa-reset", no_argument, NULL, OPT_SA_RESET },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ NULL, 0, NULL, 0 },
	};
	struct sim_ctl_sa sa;
	const char *ctl = NULL;
	bool want_stats = false, counted = false;
	uint64_t seed = 1, v;
	int opt;

	memset(&sa, 0, sizeof(sa));
	sa.error_count = 1;
	while ((opt = getopt_long(argc, argv, "+s:c:h", opts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 's':
			bad = ctl_u64(optarg, UINT64_MAX, &seed);
			break;
		case 'c':
			ctl = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_SM_LID:
			bad = sa_num(optarg, 0xbfff, &v) || !v;
			sa.sm_lid = (uint16_t)v;
			sa.flags |= SIM_SA_SET_SM_LID;
			break;
		case OPT_SA_ON:
		case OPT_SA_OFF:
			sa.on = opt == OPT_SA_ON;
			sa.flags |= SIM_SA_SET_ON;
			break;
		case OPT_SA_MTU:
			bad = sa_num(optarg, 5, &v) || !v;
			sa.mtu = (uint8_t)v;
			sa.flags |= SIM_SA_SET_MTU;
			break;
		case OPT_SA_RATE:
			bad = sa_num(optarg, 63, &v) || v < 2;
			sa.rate = (uint8_t)v;
			sa.flags |= SIM_SA_SET_RATE;
			break;
		case OPT_SA_PLT:
			bad = sa_num(optarg, 63, &v);
			sa.plt = (uint8_t)v;
			sa.flags |= SIM_SA_SET_PLT;
			break;
		case OPT_SA_SL:
			bad = sa_num(optarg, 15, &v);
			sa.sl = (uint8_t)v;
			sa.flags |= SIM_SA_SET_SL;
			break;
		case OPT_SA_REDIRECT:
			bad = sa_redirect_arg(optarg, &sa);
			break;
		case OPT_SA_BUSY:
			bad = sa_num(optarg, UINT32_MAX, &v);
			sa.busy = (uint32_t)v;
			sa.flags |= SIM_SA_SET_BUSY;
			break;
		case OPT_SA_DROP:
			bad = sa_num(optarg, UINT32_MAX, &v);
			sa.drop = (uint32_t)v;
			sa.flags |= SIM_SA_SET_DROP;
			break;
		case OPT_SA_ERROR:
			bad = sa_num(optarg, 255, &v);
			sa.error_code = (uint8_t)v;
			sa.flags |= SIM_SA_SET_ERROR;
			break;
		case OPT_SA_COUNT:
			bad = sa_num(optarg, UINT32_MAX, &v);
			sa.error_count = (uint32_t)v;
			counted = true;
			break;
		case OPT_SA_DELAY:
			bad = sa_num(optarg, 3600 * 1000, &v);
			sa.delay_ms = (uint32_t)v;
			sa.flags |= SIM_SA_SET_DELAY;
			break;
		case OPT_SA_RESET:
			sa.flags |= SIM_SA_SET_RESET;
			break;
		case OPT_STATS:
			want_stats = true;
			break;
		default:
			bad = 1;
			break;
		}
		if (bad) {
			usage(stderr);
			return 2;
		}
	}
	if (counted && !(sa.flags & SIM_SA_SET_ERROR)) {
		fprintf(stderr, "cmhub: --sa-count goes with --sa-error\n");
		return 2;
	}
	if (ctl)
		return ctl_run(ctl, argc - optind, argv + optind, &sa,
			       want_stats);
	if (optind + 1 != argc || want_stats) {
		usage(stderr);
		return 2;
	}
	return hub_run(argv[optind], seed, &sa);
}
