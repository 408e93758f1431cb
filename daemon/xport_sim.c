// SPDX-License-Identifier: MIT
/*
 * The simulated fabric backend: this daemon's virtual ports live in the hub
 * (tools/cmhub.c), which routes the same 256-byte MADs between daemon
 * processes by destination GID or LID. One SOCK_SEQPACKET connection
 * carries everything (sim_proto.h), so the loop watches a single fd.
 *
 * I/O is batched, because a connection set-up is a handful of MADs and one
 * syscall each was a tenth of all the CPU it cost (docs/PERFORMANCE.md):
 * reads take up to a receive batch per recvmmsg; sends go to a bounded
 * queue that a prepare watcher writes with sendmmsg once per loop
 * iteration, just before the loop sleeps, so batching adds no latency.
 * When the hub's socket is full the queue waits for EV_WRITE; only a send
 * beyond the queue's bound is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "sim_proto.h"
#include "transport.h"
#include "util.h"

/* How long open waits for the hub's SIM_HELLO_ACK. */
#define XPORT_SIM_HELLO_TIMEOUT_MS 5000

/*
 * Derived identities (no GUID/LID/GID in the configuration): an OUI-style
 * GUID prefix, the node number and the port number, so that two nodes
 * never collide and a human can read the node off any address. Node N's
 * port i (from 1): port GUID 0x0002c903_0000NN0i, GID fe80::<port GUID>,
 * IB LID N * 16 + i (so IB nodes are 1..3070), RoCE GID ::ffff:127.N.N.i.
 */
#define XPORT_SIM_GUID_BASE 0x0002c90300000000ULL

/*
 * Packets per recvmmsg / sendmmsg: the daemon's receive batch (cmd.c asks
 * for 64), so that a busy wake-up costs one read and no EAGAIN.
 */
#define XPORT_SIM_BATCH 64

/*
 * MADs queued for the hub at most (~1.3 MB of sim_mad). The socket itself
 * holds a few hundred; the queue absorbs bursts beyond that (a thousand
 * connections' REQs in one wake-up) while the hub catches up. A hub that
 * stops reading for longer is a fault: sends beyond the bound fail
 * (-ENOBUFS) and the engine's retransmissions take over, as on a lossy
 * fabric.
 */
#define XPORT_SIM_TXQ_MAX 4096

/* How long close waits for the hub to take what is still queued. */
#define XPORT_SIM_CLOSE_DRAIN_MS 500

struct xport_sim {
	struct xport base;
	bool gone; /* the hub closed the connection */
	struct ev_loop *loop;
	ev_prepare flush; /* writes the queue before the loop sleeps */
	ev_io room; /* the socket was full: waits for EV_WRITE */
	struct sim_mad *txq; /* ring of XPORT_SIM_TXQ_MAX */
	unsigned int tx_head, tx_len;
	struct sim_mad rxbuf[XPORT_SIM_BATCH];
	/* recvmmsg's vectors into rxbuf, set up once (sim_rx_vectors()):
	 * the call writes only msg_len and msg_flags back. */
	struct mmsghdr rx_mh[XPORT_SIM_BATCH];
	struct iovec rx_iov[XPORT_SIM_BATCH];
	struct xport_grh_opts grh; /* defaults from the configuration */
	struct xport_port ports[SIM_MAX_PORTS];
};

static struct xport_sim *to_sim(struct xport *x)
{
	return container_of(x, struct xport_sim, base);
}

/* IBTA 4.1.1: the default GID is the link-local prefix + the port GUID. */
static void sim_gid_from_guid(uint8_t gid[CM_GID_SIZE], uint64_t guid)
{
	memset(gid, 0, CM_GID_SIZE);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	for (int i = 0; i < 8; i++)
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
}

/* ::ffff:127.<node hi>.<node lo>.<port>: a loopback-range IPv4 GID. */
static void sim_gid_v4(uint8_t gid[CM_GID_SIZE], uint16_t node,
		       unsigned int port_num)
{
	memset(gid, 0, CM_GID_SIZE);
	gid[10] = 0xff;
	gid[11] = 0xff;
	gid[12] = 127;
	gid[13] = (uint8_t)(node >> 8);
	gid[14] = (uint8_t)node;
	gid[15] = (uint8_t)port_num;
}

static void sim_fill_port(struct xport_port *p, const struct xport_config *cfg,
			  unsigned int i, struct sim_port_decl *decl)
{
	const struct xport_sim_port *sp =
		i < cfg->n_sim_ports ? &cfg->sim_ports[i] : NULL;
	uint64_t node_guid = XPORT_SIM_GUID_BASE | (uint64_t)cfg->node << 8;
	enum xport_gid_type gtype =
		cfg->sim_roce ? XPORT_GID_ROCE_V2 : XPORT_GID_IB;

	memset(p, 0, sizeof(*p));
	snprintf(p->dev, sizeof(p->dev), "sim%u", cfg->node);
	p->port_num = (uint8_t)(i + 1);
	p->index = (uint16_t)(cfg->first_index + i);
	p->up = true;
	p->port_guid = sp && sp->guid ? sp->guid : node_guid | (i + 1);
	/* The CA GUID is the first port's, as on a real single-CA node. */
	p->node_guid = cfg->n_sim_ports && cfg->sim_ports[0].guid ?
			       cfg->sim_ports[0].guid :
			       node_guid;
	p->link = cfg->sim_roce ? XPORT_LINK_ROCE : XPORT_LINK_IB;
	/* RoCE has no LIDs (IBTA Annex A16/A17); IB unicast LIDs: 1..0xbfff. */
	if (sp && sp->lid)
		p->lid = sp->lid;
	else if (!cfg->sim_roce)
		p->lid = (uint16_t)(cfg->node * 16 + i + 1);
	/* Until the hub's SIM_SM_CHANGE: its default SM LID. */
	p->sm_lid = cfg->sim_roce ? 0 : 1;
	p->sa = !cfg->sim_roce; /* the hub's SA (cmhub) */
	p->state = XPORT_PORT_ACTIVE;
	p->active_mtu = cfg->sim_roce ? 4096 : 2048;
	p->pkey_tbl_len = 1;
	p->pkeys[0] = 0xffff; /* the default full-membership P_Key */
	if (sp && sp->n_gids) {
		for (unsigned int g = 0;
		     g < sp->n_gids && g < XPORT_SIM_MAX_GIDS; g++) {
			memcpy(p->gids[g].raw, sp->gids[g], CM_GID_SIZE);
			p->gids[g].index = (uint16_t)g;
			p->gids[g].type = gtype;
			p->n_gids++;
		}
	} else {
		sim_gid_from_guid(p->gids[0].raw, p->port_guid);
		p->gids[0].type = gtype;
		p->n_gids = 1;
		if (cfg->sim_roce) {
			sim_gid_v4(p->gids[1].raw, cfg->node, i + 1);
			p->gids[1].index = 1;
			p->gids[1].type = gtype;
			p->n_gids = 2;
		}
	}

	memset(decl, 0, sizeof(*decl));
	decl->guid = p->port_guid;
	decl->lid = p->lid;
	decl->roce = cfg->sim_roce;
	decl->n_gids = (uint8_t)p->n_gids;
	for (unsigned int g = 0; g < p->n_gids; g++)
		memcpy(decl->gids[g], p->gids[g].raw, SIM_GID_SIZE);
}

/* What is queued can never go: count it as send errors. */
static void sim_tx_drop_all(struct xport_sim *s)
{
	s->base.counters.tx_errors += s->tx_len;
	s->tx_head = 0;
	s->tx_len = 0;
	ev_io_stop(s->loop, &s->room);
}

/*
 * Write the queue in batches (a batch stops at the ring's end: one iovec
 * each, straight from the ring). Returns true when the queue is empty;
 * false when the socket is full, with the room watcher started.
 */
static bool sim_tx_flush(struct xport_sim *s)
{
	struct xport *x = &s->base;
	struct mmsghdr mh[XPORT_SIM_BATCH];
	struct iovec iov[XPORT_SIM_BATCH];

	while (s->tx_len) {
		unsigned int n = s->tx_len;
		int r;

		if (n > XPORT_SIM_TXQ_MAX - s->tx_head)
			n = XPORT_SIM_TXQ_MAX - s->tx_head;
		if (n > XPORT_SIM_BATCH)
			n = XPORT_SIM_BATCH;
		memset(mh, 0, sizeof(mh[0]) * n);
		for (unsigned int i = 0; i < n; i++) {
			iov[i].iov_base = &s->txq[s->tx_head + i];
			iov[i].iov_len = sizeof(struct sim_mad);
			mh[i].msg_hdr.msg_iov = &iov[i];
			mh[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(x->fd, mh, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN) {
			/* The hub is gone (its EOF reaches sim_recv). */
			sim_tx_drop_all(s);
			return true;
		}
		if (r > 0) {
			s->tx_head = (s->tx_head + (unsigned int)r) %
				     XPORT_SIM_TXQ_MAX;
			s->tx_len -= (unsigned int)r;
			x->counters.tx += (unsigned int)r;
		}
		/*
		 * Short: the socket filled up (or failed; then EV_WRITE fires
		 * at once and the next call sees the error). Waiting here
		 * saves the syscall that would only return EAGAIN.
		 */
		if (r < (int)n) {
			ev_io_start(s->loop, &s->room);
			return false;
		}
	}
	ev_io_stop(s->loop, &s->room);
	return true;
}

/*
 * Lowest priority, so it runs after every other prepare watcher of the
 * iteration (the client server's flush among them): whatever they queued
 * goes in the same batch.
 */
static void sim_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct xport_sim *s = container_of(w, struct xport_sim, flush);

	if (s->tx_len && !ev_is_active(&s->room))
		sim_tx_flush(s);
}

static void sim_room_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	sim_tx_flush(container_of(w, struct xport_sim, room));
}

/*
 * Closing is the daemon's last act (its protocol tails were queued just
 * before): give the hub a moment to take them, never block for long.
 */
static void sim_tx_drain(struct xport_sim *s)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!s->gone && !sim_tx_flush(s)) {
		struct pollfd pfd = { .fd = s->base.fd, .events = POLLOUT };
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= XPORT_SIM_CLOSE_DRAIN_MS ||
		    poll(&pfd, 1, (int)(XPORT_SIM_CLOSE_DRAIN_MS - ms)) <= 0)
			break;
	}
	if (s->tx_len)
		sim_tx_drop_all(s);
}

static void sim_close(struct xport *x)
{
	struct xport_sim *s = to_sim(x);

	sim_tx_drain(s);
	ev_io_stop(s->loop, &s->room);
	/* Started unreferenced: reference it again before stopping it. */
	ev_ref(s->loop);
	ev_prepare_stop(s->loop, &s->flush);
	if (x->fd >= 0)
		close(x->fd);
	free(s->txq);
	free(s);
}

/* The hub went away: every port is gone, say so once. */
static void sim_hub_gone(struct xport_sim *s)
{
	struct xport *x = &s->base;

	if (s->gone)
		return;
	s->gone = true;
	sim_tx_drop_all(s);
	for (unsigned int i = 0; i < x->n_ports; i++) {
		struct xport_event ev = {
			.type = XPORT_EV_DEVICE_REMOVED,
			.index = x->ports[i].index,
			.port = &x->ports[i],
		};

		x->ports[i].up = false;
		x->ports[i].state = XPORT_PORT_DOWN;
		if (x->event_cb)
			x->event_cb(x->event_ctx, &ev);
	}
}

/*
 * The hub took one of our ports down or brought it back (cmhub --ctl
 * port): as the verbs PORT_ERR / PORT_ACTIVE events do for umad; or its
 * device went away, as umad's fd failing does (for good: the port stays
 * down, whatever the hub says later).
 */
static void sim_port_state(struct xport *x, const struct sim_port_state *m)
{
	struct xport_event ev;
	struct xport_port *p;

	if (m->port >= x->n_ports) {
		x->counters.rx_dropped++;
		return;
	}
	p = &x->ports[m->port];
	if (!p->up)
		return; /* removed already */
	p->state = m->up == 1 ? XPORT_PORT_ACTIVE : XPORT_PORT_DOWN;
	ev.type = m->up == SIM_PORT_REMOVED ? XPORT_EV_DEVICE_REMOVED :
		  m->up			    ? XPORT_EV_PORT_ACTIVE :
					      XPORT_EV_PORT_DOWN;
	if (m->up == SIM_PORT_REMOVED)
		p->up = false;
	ev.index = p->index;
	ev.port = p;
	if (x->event_cb)
		x->event_cb(x->event_ctx, &ev);
}

/*
 * The hub (the subnet's SM, sim_proto.h) says where the SM is: the
 * PortInfo MasterSMLID / MasterSMSL of every IB port, as an SM_CHANGE
 * event does for umad. Ports whose SM is already there hear nothing (the
 * hub also sends it right after the hello); RoCE ports have no SM.
 */
static void sim_sm_change(struct xport *x, const struct sim_sm_change *m)
{
	for (unsigned int i = 0; i < x->n_ports; i++) {
		struct xport_port *p = &x->ports[i];
		struct xport_event ev = {
			.type = XPORT_EV_SM_CHANGE,
			.index = p->index,
			.port = p,
		};

		if (p->link != XPORT_LINK_IB || !p->up ||
		    (p->sm_lid == m->sm_lid && p->sm_sl == m->sm_sl))
			continue;
		p->sm_lid = m->sm_lid;
		p->sm_sl = m->sm_sl;
		if (x->event_cb)
			x->event_cb(x->event_ctx, &ev);
	}
}

/* Fill one xport_rx from a hub packet; false: not a MAD for our ports. */
static bool sim_take(struct xport *x, const struct sim_mad *m, size_t len,
		     struct xport_rx *rx)
{
	/* The hub is ours, but a short or foreign packet is dropped, never
	 * trusted. */
	if (len != sizeof(*m) || m->hdr.type != SIM_MAD ||
	    m->port >= x->n_ports) {
		x->counters.rx_dropped++;
		return false;
	}
	rx->port = x->ports[m->port].index;
	memset(&rx->from, 0, sizeof(rx->from));
	rx->from.port = rx->port;
	rx->from.lid = m->addr.lid;
	rx->from.sl = m->addr.sl;
	rx->from.grh = m->addr.grh;
	if (m->addr.grh) {
		const struct xport_port *p = &x->ports[m->port];

		memcpy(rx->from.gid, m->addr.gid, CM_GID_SIZE);
		/* The hub names our GID it routed by (sim_proto.h). */
		if (m->sgid_index < p->n_gids)
			memcpy(rx->from.local_gid, p->gids[m->sgid_index].raw,
			       CM_GID_SIZE);
	}
	rx->from.qpn = m->addr.qpn;
	rx->from.pkey_index = m->addr.pkey_index;
	memcpy(rx->mad, m->mad, CM_MAD_SIZE);
	rx->len = CM_MAD_SIZE;
	x->counters.rx++;
	return true;
}

/*
 * Up to 'max' MADs in batches of XPORT_SIM_BATCH: the caller's 'max'
 * bounds a wake-up, so that a flood from the hub cannot starve the client
 * sockets. A short batch means the socket is empty: no call for EAGAIN.
 */
static int sim_recv(struct xport *x, struct xport_rx *rx, unsigned int max)
{
	struct xport_sim *s = to_sim(x);
	struct sim_mad *m = s->rxbuf;
	struct mmsghdr *mh = s->rx_mh;
	unsigned int n = 0;

	if (s->gone)
		return -ENOTCONN;
	while (n < max) {
		unsigned int want =
			max - n < XPORT_SIM_BATCH ? max - n : XPORT_SIM_BATCH;
		int r;

		r = recvmmsg(x->fd, mh, want, MSG_DONTWAIT, NULL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			sim_hub_gone(s);
			return n ? (int)n : -ENOTCONN;
		}
		for (int i = 0; i < r; i++) {
			/* A zero-length packet is the hub's end of file. */
			if (!mh[i].msg_len) {
				sim_hub_gone(s);
				return n ? (int)n : -ENOTCONN;
			}
			if (mh[i].msg_len == sizeof(struct sim_port_state) &&
			    m[i].hdr.type == SIM_PORT_STATE) {
				sim_port_state(
					x,
					(const struct sim_port_state *)&m[i]);
				continue;
			}
			if (mh[i].msg_len == sizeof(struct sim_sm_change) &&
			    m[i].hdr.type == SIM_SM_CHANGE) {
				sim_sm_change(
					x, (const struct sim_sm_change *)&m[i]);
				continue;
			}
			if (sim_take(x, &m[i], mh[i].msg_len, &rx[n]))
				n++;
		}
		if (r == 0) {
			sim_hub_gone(s);
			return n ? (int)n : -ENOTCONN;
		}
		if ((unsigned int)r < want)
			break;
	}
	return (int)n;
}

static int sim_send(struct xport *x, uint16_t port, const struct eng_addr *to,
		    const struct xport_grh_opts *grh,
		    const uint8_t mad[CM_MAD_SIZE])
{
	struct xport_sim *s = to_sim(x);
	const struct xport_port *p = xport_port(x, port);
	struct sim_mad *m;
	int err = 0;

	if (!p) {
		err = -EINVAL;
		goto fail;
	}
	if (s->gone || !p->up) {
		err = -ENETDOWN;
		goto fail;
	}
	/* RoCE has no LIDs: a MAD there always needs a GRH (Annex A16/A17). */
	if (p->link == XPORT_LINK_ROCE && !to->grh) {
		err = -EDESTADDRREQ;
		goto fail;
	}
	if (s->tx_len == XPORT_SIM_TXQ_MAX) {
		err = -ENOBUFS;
		goto fail;
	}
	/* Built in place in the ring; it only counts once queued below. */
	m = &s->txq[(s->tx_head + s->tx_len) % XPORT_SIM_TXQ_MAX];
	memset(m, 0, sizeof(*m));
	m->hdr.type = SIM_MAD;
	m->hdr.version = SIM_PROTO_VERSION;
	m->port = (uint16_t)(port - x->first_index);
	m->addr.lid = to->lid;
	m->addr.sl = to->sl;
	m->addr.qpn = to->qpn;
	m->addr.pkey_index = to->pkey_index;
	if (to->grh) {
		const struct xport_gid *sgid = xport_pick_sgid(p, to->gid);

		if (!sgid) {
			err = -EADDRNOTAVAIL;
			goto fail;
		}
		m->sgid_index = (uint8_t)(sgid - p->gids);
		m->addr.grh = 1;
		memcpy(m->addr.gid, to->gid, CM_GID_SIZE);
		if (!grh)
			grh = &s->grh;
		m->addr.hop_limit = grh->hop_limit;
		m->addr.traffic_class = grh->traffic_class;
		m->addr.flow_label = grh->flow_label;
	}
	memcpy(m->mad, mad, CM_MAD_SIZE);
	/* Written by sim_flush_cb before the loop sleeps (tx counted then). */
	s->tx_len++;
	return 0;
fail:
	x->counters.tx_errors++;
	return err;
}

static int sim_process_events(struct xport *x)
{
	return 0;
}

/* The hub's SA (cmhub) answers at the SM LID; no Q_Key, no timeout. */
static int sim_send_sa(struct xport *x, uint16_t port,
		       const struct xport_sa_dest *to,
		       const uint8_t mad[CM_MAD_SIZE])
{
	const struct xport_port *p = xport_port(x, port);
	struct eng_addr a = { .port = port,
			      .lid = to->lid,
			      .sl = to->sl,
			      .qpn = to->qpn,
			      .pkey_index = to->pkey_index };
	int err;

	if (p && p->link != XPORT_LINK_IB)
		return -EOPNOTSUPP;
	err = sim_send(x, port, &a, NULL, mad);
	if (!err)
		x->counters.tx_sa++;
	return err;
}

static const struct xport_ops sim_ops = {
	.name = "sim",
	.close = sim_close,
	.recv = sim_recv,
	.send = sim_send,
	.process_events = sim_process_events,
	.send_sa = sim_send_sa,
};

static int sim_hello(int fd, const struct sim_hello *hello)
{
	struct sim_hello_ack ack;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t r;

	if (send(fd, hello, sizeof(*hello), MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(*hello))
		return -errno;
	r = poll(&pfd, 1, XPORT_SIM_HELLO_TIMEOUT_MS);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	r = recv(fd, &ack, sizeof(ack), 0);
	if (r < 0)
		return -errno;
	if (r != (ssize_t)sizeof(ack) || ack.hdr.type != SIM_HELLO_ACK)
		return -EPROTO;
	return ack.status;
}

static void sim_report(struct xport_open_report *report,
		       const struct xport_port *p, int err, const char *why)
{
	struct xport_port_result *r;

	if (!report || report->n >= XPORT_MAX_PORTS)
		return;
	r = &report->port[report->n++];
	memset(r, 0, sizeof(*r));
	memcpy(r->dev, p->dev, sizeof(r->dev));
	r->port_num = p->port_num;
	r->served = !err;
	r->index = p->index;
	r->error = err;
	if (err)
		snprintf(r->message, sizeof(r->message), "%s port %u: %s",
			 p->dev, p->port_num, why);
}

int xport_sim_open(const struct xport_config *cfg, xport_event_fn cb, void *ctx,
		   struct xport_open_report *report, struct xport **out)
{
	struct xport_sim *s;
	struct sim_hello hello;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	unsigned int n =
		cfg->n_sim_ports ? cfg->n_sim_ports : cfg->sim_port_count;
	char why[XPORT_MSG_MAX];
	int sndbuf = 1 << 20;
	int err;

	*out = NULL;
	if (!cfg->hub_path || !cfg->node || !n || n > SIM_MAX_PORTS ||
	    !cfg->loop || strlen(cfg->hub_path) >= sizeof(sun.sun_path))
		return -EINVAL;
	/* Derived IB LIDs must stay unicast (IBTA 4.1.3: 0x0001..0xbfff). */
	if (!cfg->sim_roce && !cfg->n_sim_ports &&
	    (unsigned int)cfg->node * 16 + n > 0xbfff)
		return -ERANGE;
	s = calloc(1, sizeof(*s));
	for (unsigned int i = 0; s && i < XPORT_SIM_BATCH; i++) {
		s->rx_iov[i].iov_base = &s->rxbuf[i];
		s->rx_iov[i].iov_len = sizeof(s->rxbuf[i]);
		s->rx_mh[i].msg_hdr.msg_iov = &s->rx_iov[i];
		s->rx_mh[i].msg_hdr.msg_iovlen = 1;
	}
	if (!s)
		return -ENOMEM;
	s->txq = malloc(sizeof(*s->txq) * XPORT_SIM_TXQ_MAX);
	if (!s->txq) {
		free(s);
		return -ENOMEM;
	}
	s->loop = cfg->loop;
	s->base.ops = &sim_ops;
	s->base.event_fd = -1;
	s->base.first_index = cfg->first_index;
	s->base.n_ports = n;
	s->base.ports = s->ports;
	s->base.event_cb = cb;
	s->base.event_ctx = ctx;
	s->grh.hop_limit =
		cfg->hop_limit ? cfg->hop_limit : XPORT_DEFAULT_HOP_LIMIT;
	s->grh.traffic_class = cfg->traffic_class;
	s->grh.flow_label = cfg->flow_label;

	memset(&hello, 0, sizeof(hello));
	hello.hdr.type = SIM_HELLO;
	hello.hdr.version = SIM_PROTO_VERSION;
	hello.node = cfg->node;
	hello.n_ports = (uint16_t)n;
	for (unsigned int i = 0; i < n; i++)
		sim_fill_port(&s->ports[i], cfg, i, &hello.port[i]);

	strcpy(sun.sun_path, cfg->hub_path);
	s->base.fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->base.fd < 0) {
		err = -errno;
		goto fail;
	}
	if (connect(s->base.fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = -errno;
		goto fail;
	}
	err = sim_hello(s->base.fd, &hello);
	if (err)
		goto fail;
	/*
	 * From now on the loop drives the socket: never block in it. A larger
	 * send buffer (the kernel caps it at wmem_max) makes a full socket,
	 * and so a wait for EV_WRITE, rarer.
	 */
	setsockopt(s->base.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (fcntl(s->base.fd, F_SETFL,
		  fcntl(s->base.fd, F_GETFL) | O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	ev_io_init(&s->room, sim_room_cb, s->base.fd, EV_WRITE);
	ev_prepare_init(&s->flush, sim_flush_cb);
	ev_set_priority(&s->flush, EV_MINPRI);
	ev_prepare_start(s->loop, &s->flush);
	/* An idle transport must not keep the loop alive: unreferenced. */
	ev_unref(s->loop);
	for (unsigned int i = 0; i < n; i++)
		sim_report(report, &s->ports[i], 0, NULL);
	*out = &s->base;
	return 0;

fail:
	if (err == -EADDRINUSE)
		snprintf(why, sizeof(why),
			 "the hub at %s already has this node, LID or GID",
			 cfg->hub_path);
	else
		snprintf(why, sizeof(why), "cannot join the hub at %s: %s",
			 cfg->hub_path, strerror(-err));
	for (unsigned int i = 0; i < n; i++)
		sim_report(report, &s->ports[i], err, why);
	if (s->base.fd >= 0)
		close(s->base.fd);
	free(s->txq);
	free(s);
	return err;
}
