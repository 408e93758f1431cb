// SPDX-License-Identifier: MIT
/*
 * The umad backend: the product path. For each selected device port it
 * opens /dev/infiniband/umadN, registers an agent for management class 0x07
 * (CM) version 2, method Send, and reads the port's attributes and events
 * through libibverbs. This is the only file that includes umad.h.
 *
 * The loop sees two fds: an epoll set over every umad fd (MADs) and one
 * over every device's verbs async-event fd (port events). A send the
 * kernel refuses as a duplicate TID waits in a per-port queue for a timer
 * of the caller's loop (xumad_txq_busy), and on RoCE a send whose
 * destination's neighbour is not resolved yet waits in neigh.c's queue
 * for that destination (xumad_send); nothing here ever sleeps.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <ev.h>
#include <infiniband/umad.h>
#include <infiniband/verbs.h>
#include <sys/socket.h>

#include "log.h"
#include "neigh.h"
#include "sa_mad.h"
#include "transport.h"
#include "util.h"

/* IBTA 13.5 (the GSI): QP1's well-known Q_Key. */
#define XUMAD_QP1_QKEY 0x80010000u
#define XUMAD_QP1 1
#define XUMAD_MAX_DEVS 16
#define XUMAD_RBUF_MAD 2048
/* Bound on one ibv_query_gid_table call (rxe has 1024 entries a port). */
#define XUMAD_MAX_GID_ENTRIES 4096
/*
 * MADs a port holds waiting for the kernel (see xumad_txq_busy), at most:
 * ~1.5 MB, allocated on first need. Beyond the bound a send fails
 * (-ENOBUFS) and the engine retransmits it later.
 */
#define XUMAD_TXQ_MAX 4096

struct xumad_dev {
	char name[XPORT_DEV_NAME_MAX];
	struct ibv_context *ctx;
	uint64_t node_guid;
	uint8_t phys_port_cnt;
	bool in_loop; /* async fd in the event epoll set */
	bool removed;
};

/*
 * One MAD waiting for the kernel. 'behind': an earlier one of its TID is
 * still queued, so it is not tried yet; 'busy': refused, since
 * 'busy_since', next try at 'due', then after 'step' s.
 */
struct xumad_pending {
	uint32_t tid;
	bool behind;
	bool busy;
	double busy_since, due, step; /* CLOCK_MONOTONIC, s */
	int next, prev; /* the queue in send order, or the free list */
};

/* A port's waiting MADs: whole umad buffers (ib_user_mad + the MAD). */
struct xumad_txq {
	uint8_t *bufs; /* XUMAD_TXQ_MAX buffers of buf_len bytes */
	struct xumad_pending *e; /* XUMAD_TXQ_MAX, by buffer */
	int head, tail, free;
	unsigned int len;
	ev_timer retry; /* data: the struct xport_umad */
};

/* A served port: the umad side of x->ports[i]. */
struct xumad_port {
	struct xumad_dev *dev;
	int fd;
	int agent;
	int sa_agent; /* IB ports: the SA client's agent, or -1 */
	bool in_loop;
	struct xumad_txq q;
};

struct xport_umad {
	struct xport base;
	struct ev_loop *loop; /* NULL: a refused duplicate fails at once */
	struct xport_grh_opts grh;
	unsigned int n_devs;
	struct xumad_dev devs[XUMAD_MAX_DEVS];
	struct xumad_port up[XPORT_MAX_PORTS];
	size_t buf_len; /* struct ib_user_mad + one MAD */
	size_t rbuf_len; /* room for larger (RMPP) MADs, read and dropped */
	uint8_t *sbuf;
	uint8_t *rbuf;
	struct ibv_gid_entry *gid_tab;
	bool umad_inited;
	struct neigh *nb; /* RoCE with a loop: neighbour checks, or NULL */
};

static struct xport_umad *to_xumad(struct xport *x)
{
	return container_of(x, struct xport_umad, base);
}

/*
 * The kernel refuses (EINVAL) a Send whose TID equals that of a Send of
 * this fd still waiting for its send completion
 * (drivers/infiniband/core/user_mad.c, is_duplicate()). Every message of a
 * connection carries its REQ's TID, and the kernel stamps the same top 32
 * bits on all of this agent's MADs: so with both ends of a connection in
 * this daemon (one port, loopback), an answer can come before the send
 * completion of the message it answers (REP, or MRA, after our own REQ;
 * REP after our MRA; DREP after our DREQ) and be refused. The completion
 * is the kernel's business and is not reported to us (an unsolicited Send
 * with no timeout completes silently): the only way to learn of it is to
 * try again.
 *
 * Trying again must not stop the loop: the refused MAD waits in its
 * port's queue and an ev_timer retries it after XUMAD_BUSY_FIRST_S,
 * doubling up to XUMAD_BUSY_STEP_MAX_S, until XUMAD_BUSY_MAX_S after its
 * first refusal; then it is given up (tx_busy_failed, tx_errors) and the
 * engine's retransmission takes over, as for a lost MAD.
 *
 * Order is kept per TID, that is per connection: a send whose TID matches
 * a waiting MAD's waits behind it (the DREQ behind its connection's RTU);
 * any other send goes at once. A port-wide FIFO was measured to be far
 * worse: on rxe under load (1,000 connections at once, MRAs sent, qemu
 * TCG) the kernel took 4-900 ms to complete a twin, and up to 1,600 MADs
 * of other connections piled up behind one refused MAD, until the peers'
 * retransmissions took over. The same measurement is why the deadline is
 * a second, not the ~25 ms the old inline sleep allowed: most twins took
 * longer, and a MAD given up costs its connection a CM timeout (~4 s).
 */
#define XUMAD_BUSY_FIRST_S 50e-6
#define XUMAD_BUSY_STEP_MAX_S 20e-3
#define XUMAD_BUSY_MAX_S 1.0
#define XUMAD_NONE (-1)

static double xumad_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One write of a whole umad buffer: 0 or -errno. */
static int xumad_write(int fd, const void *buf, size_t len)
{
	ssize_t r;

	do
		r = write(fd, buf, len);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

/*
 * The TID as the kernel compares it: our agent's sends all get the same
 * top 32 bits, so the low 32 (MAD header bytes 12..15, IBTA 13.4.3) tell.
 */
static uint32_t xumad_tid(const uint8_t *mad)
{
	return (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 |
	       (uint32_t)mad[14] << 8 | mad[15];
}

static uint8_t *xumad_txq_buf(const struct xport_umad *u,
			      const struct xumad_txq *q, int k)
{
	return q->bufs + (size_t)k * u->buf_len;
}

static bool xumad_txq_has_tid(const struct xumad_txq *q, uint32_t tid)
{
	for (int k = q->head; k != XUMAD_NONE; k = q->e[k].next)
		if (q->e[k].tid == tid)
			return true;
	return false;
}

/*
 * Append a copy of buf to the queue; its entry, or -ENOBUFS when
 * the queue is full (-ENOMEM when it cannot be allocated).
 */
static int xumad_txq_push(struct xport_umad *u, struct xumad_txq *q,
			  const uint8_t *buf, uint32_t tid, bool behind)
{
	struct xumad_pending *e;
	int k;

	if (!q->e) {
		q->bufs = malloc((size_t)XUMAD_TXQ_MAX * u->buf_len);
		q->e = calloc(XUMAD_TXQ_MAX, sizeof(*q->e));
		if (!q->bufs || !q->e) {
			free(q->bufs);
			free(q->e);
			q->bufs = NULL;
			q->e = NULL;
			return -ENOMEM;
		}
		for (k = 0; k < XUMAD_TXQ_MAX; k++)
			q->e[k].next =
				k + 1 < XUMAD_TXQ_MAX ? k + 1 : XUMAD_NONE;
		q->free = 0;
		q->head = q->tail = XUMAD_NONE;
	}
	if (q->free == XUMAD_NONE)
		return -ENOBUFS;
	k = q->free;
	e = &q->e[k];
	q->free = e->next;
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->behind = behind;
	e->next = XUMAD_NONE;
	e->prev = q->tail;
	if (q->tail != XUMAD_NONE)
		q->e[q->tail].next = k;
	else
		q->head = k;
	q->tail = k;
	q->len++;
	memcpy(xumad_txq_buf(u, q, k), buf, u->buf_len);
	return k;
}

/*
 * Entry k leaves the queue (sent or given up): the next one of its TID,
 * if any, may be tried now.
 */
static void xumad_txq_release(struct xumad_txq *q, int k, double now)
{
	struct xumad_pending *e = &q->e[k];

	for (int n = e->next; n != XUMAD_NONE; n = q->e[n].next)
		if (q->e[n].tid == e->tid) {
			q->e[n].behind = false;
			q->e[n].due = now;
			break;
		}
	if (e->prev != XUMAD_NONE)
		q->e[e->prev].next = e->next;
	else
		q->head = e->next;
	if (e->next != XUMAD_NONE)
		q->e[e->next].prev = e->prev;
	else
		q->tail = e->prev;
	e->next = q->free;
	q->free = k;
	q->len--;
}

/*
 * Entry k was refused (again): schedule its next try, or give it up when
 * its time is over. True when it waits.
 */
static bool xumad_txq_busy(struct xport_umad *u, struct xumad_txq *q, int k,
			   double now)
{
	struct xumad_pending *e = &q->e[k];
	double left;

	if (!e->busy) {
		e->busy = true;
		e->busy_since = now;
		e->step = XUMAD_BUSY_FIRST_S;
		u->base.counters.tx_busy++;
	}
	left = e->busy_since + XUMAD_BUSY_MAX_S - now;
	if (left <= 0) {
		u->base.counters.tx_busy_failed++;
		u->base.counters.tx_errors++;
		xumad_txq_release(q, k, now);
		return false;
	}
	/* The last try comes at the deadline, not a doubling after it. */
	e->due = now + (e->step < left ? e->step : left);
	e->step = e->step * 2 < XUMAD_BUSY_STEP_MAX_S ? e->step * 2 :
							XUMAD_BUSY_STEP_MAX_S;
	return true;
}

/* Make the port's timer fire by 'due' (CLOCK_MONOTONIC s). */
static void xumad_txq_arm(struct xport_umad *u, struct xumad_txq *q, double due,
			  double now)
{
	double after = due > now ? due - now : 0;

	if (ev_is_active(&q->retry)) {
		if (ev_timer_remaining(u->loop, &q->retry) <= after)
			return;
		ev_timer_stop(u->loop, &q->retry);
	}
	ev_timer_set(&q->retry, after, 0);
	ev_timer_start(u->loop, &q->retry);
}

/*
 * Try every entry of port i that is due, in queue order (so that one
 * released by an earlier entry of its TID is tried in the same pass), and
 * re-arm the timer for the earliest one left.
 */
static void xumad_txq_run(struct xport_umad *u, unsigned int i)
{
	struct xumad_txq *q = &u->up[i].q;
	double now = xumad_now(), next = 0;

	for (int k = q->head, n; k != XUMAD_NONE; k = n) {
		struct xumad_pending *e = &q->e[k];
		int err;

		n = e->next;
		if (e->behind)
			continue;
		if (e->due <= now) {
			err = xumad_write(u->up[i].fd, xumad_txq_buf(u, q, k),
					  u->buf_len);
			if (err == -EINVAL) {
				if (!xumad_txq_busy(u, q, k, now))
					continue;
			} else {
				if (err)
					u->base.counters.tx_errors++;
				else
					u->base.counters.tx++;
				xumad_txq_release(q, k, now);
				continue;
			}
		}
		if (!next || e->due < next)
			next = e->due;
	}
	if (next)
		xumad_txq_arm(u, q, next, now);
}

static void xumad_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct xport_umad *u = w->data;
	struct xumad_port *up = container_of(w, struct xumad_port, q.retry);

	xumad_txq_run(u, (unsigned int)(up - u->up));
}

/*
 * Port i's queue can never go: count it lost. With 'try_once' (closing:
 * the daemon's parting DREQs and REJs may be here) each MAD gets one last
 * write first, without waiting for any.
 */
static void xumad_txq_drop_all(struct xport_umad *u, unsigned int i,
			       bool try_once)
{
	struct xumad_txq *q = &u->up[i].q;

	while (q->len) {
		int k = q->head;

		if (try_once &&
		    !xumad_write(u->up[i].fd, xumad_txq_buf(u, q, k),
				 u->buf_len))
			u->base.counters.tx++;
		else
			u->base.counters.tx_errors++;
		xumad_txq_release(q, k, 0);
	}
	if (u->loop)
		ev_timer_stop(u->loop, &q->retry);
}

static void xumad_report(struct xport_open_report *report, const char *dev,
			 unsigned int port_num, bool served, uint16_t index,
			 int err, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void xumad_report(struct xport_open_report *report, const char *dev,
			 unsigned int port_num, bool served, uint16_t index,
			 int err, const char *fmt, ...)
{
	struct xport_port_result *r;
	va_list ap;
	int n;

	if (!report || report->n >= XPORT_MAX_PORTS)
		return;
	r = &report->port[report->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	r->port_num = (uint8_t)port_num;
	r->served = served;
	r->index = index;
	r->error = err;
	if (!fmt)
		return;
	/* "<dev> port <n>: why", or just "why" when no device is named. */
	n = dev[0] ? snprintf(r->message, sizeof(r->message),
			      "%s port %u: ", dev, port_num) :
		     0;
	va_start(ap, fmt);
	vsnprintf(r->message + n, sizeof(r->message) - (size_t)n, fmt, ap);
	va_end(ap);
}

static enum xport_gid_type xumad_gid_type(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_ROCE_V1:
		return XPORT_GID_ROCE_V1;
	case IBV_GID_TYPE_ROCE_V2:
		return XPORT_GID_ROCE_V2;
	default:
		return XPORT_GID_IB;
	}
}

static void xumad_add_gid(struct xport_port *p, uint32_t index,
			  const uint8_t raw[16], uint32_t type,
			  uint32_t ifindex)
{
	static const uint8_t zero[16];
	struct xport_gid *g;

	/* An all-zero GID is an empty slot (IBTA 4.1.1 has no such GID). */
	if (p->n_gids >= XPORT_MAX_GIDS || !memcmp(raw, zero, 16))
		return;
	g = &p->gids[p->n_gids++];
	memcpy(g->raw, raw, 16);
	g->index = (uint16_t)index;
	g->type = xumad_gid_type(type);
	g->ifindex = (int)ifindex;
}

/*
 * The GID table with each entry's type (RoCE v1/v2 matter for the GRH).
 * One ibv_query_gid_table call where the kernel supports it, else entry by
 * entry with ibv_query_gid_ex, else plain ibv_query_gid (type: IB).
 */
static void xumad_query_gids(struct xport_umad *u, struct xumad_dev *d,
			     struct xport_port *p, int tbl_len)
{
	ssize_t n;

	p->n_gids = 0;
	n = ibv_query_gid_table(d->ctx, u->gid_tab, XUMAD_MAX_GID_ENTRIES, 0);
	if (n >= 0) {
		for (ssize_t i = 0; i < n; i++)
			if (u->gid_tab[i].port_num == p->port_num)
				xumad_add_gid(p, u->gid_tab[i].gid_index,
					      u->gid_tab[i].gid.raw,
					      u->gid_tab[i].gid_type,
					      u->gid_tab[i].ndev_ifindex);
		return;
	}
	for (int i = 0; i < tbl_len && p->n_gids < XPORT_MAX_GIDS; i++) {
		struct ibv_gid_entry e;
		union ibv_gid g;

		if (!ibv_query_gid_ex(d->ctx, p->port_num, (uint32_t)i, &e, 0))
			xumad_add_gid(p, (uint32_t)i, e.gid.raw, e.gid_type,
				      e.ndev_ifindex);
		else if (errno != ENODATA &&
			 !ibv_query_gid(d->ctx, p->port_num, i, &g))
			xumad_add_gid(p, (uint32_t)i, g.raw, IBV_GID_TYPE_IB,
				      0);
	}
}

/* Refresh a port's attributes from verbs; 0 or -errno. */
static int xumad_query_port(struct xport_umad *u, struct xumad_dev *d,
			    struct xport_port *p)
{
	struct ibv_port_attr a;
	int err;

	err = ibv_query_port(d->ctx, p->port_num, &a);
	if (err)
		return -err;
	p->node_guid = d->node_guid;
	p->state = (enum xport_port_state)a.state;
	p->lid = a.lid;
	p->lmc = a.lmc;
	p->sm_lid = a.sm_lid;
	p->sm_sl = a.sm_sl;
	p->active_mtu = a.active_mtu ? 128u << a.active_mtu : 0;
	p->link = a.link_layer == IBV_LINK_LAYER_ETHERNET ? XPORT_LINK_ROCE :
							    XPORT_LINK_IB;
	p->pkey_tbl_len = a.pkey_tbl_len < XPORT_MAX_PKEYS ? a.pkey_tbl_len :
							     XPORT_MAX_PKEYS;
	for (uint16_t i = 0; i < p->pkey_tbl_len; i++) {
		__be16 pk = 0;

		p->pkeys[i] = ibv_query_pkey(d->ctx, p->port_num, i, &pk) ?
				      0 :
				      be16toh(pk);
	}
	xumad_query_gids(u, d, p, a.gid_tbl_len);
	/* IBTA 4.1.1: on IB the port GUID is GID 0's interface id. */
	if (p->link == XPORT_LINK_IB && p->n_gids && p->gids[0].index == 0) {
		uint64_t g = 0;

		for (int i = 8; i < 16; i++)
			g = g << 8 | p->gids[0].raw[i];
		p->port_guid = g;
	}
	return 0;
}

/* Does ib_cm's counter group show under this port in sysfs? */
static bool xumad_port_has_cm(const char *dev, unsigned int port_num)
{
	char path[320];
	int n = snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%u/cm_rx_msgs", dev,
			 port_num);

	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
}

/*
 * Is any port of any device showing ib_cm's counters? Kernels since 5.14
 * (drivers/infiniband/core/cm.c, ib_port_register_client_groups) add the
 * cm_rx_msgs/cm_tx_msgs groups to each port ib_cm attached to; with such a
 * kernel their absence on our port means ib_cm is not the owner there.
 */
static bool xumad_kernel_has_cm_groups(void)
{
	DIR *dir = opendir("/sys/class/infiniband");
	struct dirent *de;
	bool found = false;

	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		found = xumad_port_has_cm(de->d_name, 1);
	}
	closedir(dir);
	return found;
}

/*
 * umad_register failed. Only one agent can hold a (class, version, method)
 * on a port (the kernel MAD layer logs "Method 3 already in use"); the
 * usual holder is the kernel's ib_cm, which attaches to every device when
 * it loads (libibumad then returns -EPERM, the ioctl's errno is EINVAL).
 */
static void xumad_register_failed(struct xport_open_report *report,
				  const char *dev, unsigned int port_num,
				  int err, int ioctl_errno)
{
	bool conflict = err == -EPERM || err == -EBUSY ||
			ioctl_errno == EINVAL || ioctl_errno == EBUSY;
	bool ib_cm;

	if (xumad_port_has_cm(dev, port_num))
		ib_cm = true;
	else
		ib_cm = conflict && !access("/sys/module/ib_cm", F_OK) &&
			!xumad_kernel_has_cm_groups();
	if (ib_cm)
		xumad_report(report, dev, port_num, false, 0, -EADDRINUSE,
			     "%s; %s", XPORT_MSG_IB_CM_OWNS,
			     XPORT_MSG_IB_CM_TODO);
	else if (conflict)
		xumad_report(report, dev, port_num, false, 0, -EADDRINUSE,
			     "another agent holds the CM class here (a second "
			     "cmd?): cannot register class 0x07 version 2: %s",
			     strerror(ioctl_errno ? ioctl_errno : -err));
	else
		xumad_report(report, dev, port_num, false, 0, err,
			     "cannot register class 0x07 version 2: %s",
			     strerror(-err));
}

static struct xumad_dev *xumad_get_dev(struct xport_umad *u,
				       struct ibv_device **list, int n_list,
				       const char *name, int *err)
{
	struct ibv_device_attr attr;
	struct xumad_dev *d;

	for (unsigned int i = 0; i < u->n_devs; i++)
		if (!strcmp(u->devs[i].name, name))
			return &u->devs[i];
	if (u->n_devs == XUMAD_MAX_DEVS) {
		*err = -ENOSPC;
		return NULL;
	}
	d = &u->devs[u->n_devs];
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < n_list; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			d->ctx = ibv_open_device(list[i]);
			if (!d->ctx) {
				*err = errno ? -errno : -ENODEV;
				return NULL;
			}
			break;
		}
	if (!d->ctx) {
		*err = -ENODEV;
		return NULL;
	}
	if (ibv_query_device(d->ctx, &attr)) {
		*err = errno ? -errno : -EIO;
		ibv_close_device(d->ctx);
		return NULL;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->node_guid = be64toh(attr.node_guid);
	d->phys_port_cnt = attr.phys_port_cnt;
	u->n_devs++;
	return d;
}

static int xumad_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Open, register and describe one port; adds it to x->ports if served. */
static void xumad_open_one(struct xport_umad *u, struct xumad_dev *d,
			   unsigned int port_num,
			   const struct xport_config *cfg,
			   struct xport_open_report *report)
{
	struct xport *x = &u->base;
	long mask[16 / sizeof(long)];
	struct xport_port *p;
	struct xumad_port *up;
	umad_port_t uport;
	int fd, agent, err;
	struct epoll_event ev = { .events = EPOLLIN };

	if (x->n_ports == XPORT_MAX_PORTS) {
		xumad_report(report, d->name, port_num, false, 0, -ENOSPC,
			     "more than %d ports selected", XPORT_MAX_PORTS);
		return;
	}
	p = &x->ports[x->n_ports];
	up = &u->up[x->n_ports];
	memset(p, 0, sizeof(*p));
	snprintf(p->dev, sizeof(p->dev), "%s", d->name);
	p->port_num = (uint8_t)port_num;
	p->index = (uint16_t)(x->first_index + x->n_ports);
	p->up = true;
	err = xumad_query_port(u, d, p);
	if (err) {
		xumad_report(report, d->name, port_num, false, 0, err,
			     "cannot query the port: %s", strerror(-err));
		return;
	}
	if (!umad_get_port(d->name, (int)port_num, &uport)) {
		if (p->link == XPORT_LINK_ROCE || !p->port_guid)
			p->port_guid = be64toh(uport.port_guid);
		umad_release_port(&uport);
	}

	fd = umad_open_port(d->name, (int)port_num);
	if (fd < 0) {
		xumad_report(report, d->name, port_num, false, 0, fd,
			     "cannot open its umad device: %s%s", strerror(-fd),
			     fd == -EACCES || fd == -EPERM ?
				     " (needs root or access to "
				     "/dev/infiniband/umad*)" :
				     "");
		return;
	}
	/* IBTA 13.4.5: every CM message is a Send; no responses expected. */
	memset(mask, 0, sizeof(mask));
	mask[CM_METHOD_SEND / (8 * sizeof(long))] |=
		1L << (CM_METHOD_SEND % (8 * sizeof(long)));
	errno = 0;
	agent = umad_register(fd, CM_MGMT_CLASS, CM_CLASS_VERSION, 0, mask);
	if (agent < 0) {
		xumad_register_failed(report, d->name, port_num, agent, errno);
		umad_close_port(fd);
		return;
	}
	err = xumad_set_nonblock(fd);
	ev.data.u32 = x->n_ports;
	if (!err && epoll_ctl(x->fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		err = -errno;
	if (err) {
		xumad_report(report, d->name, port_num, false, 0, err,
			     "cannot watch its umad device: %s",
			     strerror(-err));
		umad_unregister(fd, agent);
		umad_close_port(fd);
		return;
	}
	memset(up, 0, sizeof(*up));
	up->dev = d;
	up->fd = fd;
	up->agent = agent;
	up->sa_agent = -1;
	if (p->link == XPORT_LINK_IB) {
		/*
		 * The SA client's agent (sa_client.h): class 0x03 version 2
		 * with RMPP, so that the kernel reassembles a GetTableResp;
		 * no methods, as it only receives answers to its requests.
		 * Without it the port's paths are built locally (logged).
		 */
		errno = 0;
		up->sa_agent = umad_register(fd, SA_MGMT_CLASS,
					     SA_CLASS_VERSION, 1, NULL);
		if (up->sa_agent < 0) {
			log_notice("%s port %u: cannot register an SA agent "
				   "(%s); paths from the local port only",
				   d->name, port_num,
				   strerror(errno ? errno : -up->sa_agent));
			up->sa_agent = -1;
		}
	}
	p->sa = up->sa_agent >= 0;
	up->in_loop = true;
	ev_timer_init(&up->q.retry, xumad_retry_cb, 0, 0);
	up->q.retry.data = u;
	xumad_report(report, d->name, port_num, true, p->index, 0, NULL);
	x->n_ports++;
}

static void xumad_close(struct xport *x)
{
	struct xport_umad *u = to_xumad(x);

	/* MADs still waiting for a neighbour go with it, unreported: the
	 * engine they would be reported to is gone. */
	neigh_close(u->nb);
	u->nb = NULL;
	for (unsigned int i = 0; i < x->n_ports; i++) {
		xumad_txq_drop_all(u, i, true);
		free(u->up[i].q.bufs);
		free(u->up[i].q.e);
		if (u->up[i].fd < 0)
			continue; /* its device was removed */
		umad_unregister(u->up[i].fd, u->up[i].agent);
		umad_close_port(u->up[i].fd);
	}
	for (unsigned int i = 0; i < u->n_devs; i++)
		if (u->devs[i].ctx)
			ibv_close_device(u->devs[i].ctx);
	if (x->fd >= 0)
		close(x->fd);
	if (x->event_fd >= 0)
		close(x->event_fd);
	if (u->umad_inited)
		umad_done();
	free(u->sbuf);
	free(u->rbuf);
	free(u->gid_tab);
	free(x->ports);
	free(u);
}

static void xumad_emit(struct xport *x, unsigned int i,
		       enum xport_event_type type)
{
	struct xport_event ev = {
		.type = type,
		.index = x->ports[i].index,
		.port = &x->ports[i],
	};

	if (x->event_cb)
		x->event_cb(x->event_ctx, &ev);
}

/*
 * A device is gone (DEVICE_FATAL, or its umad fd says ENODEV/EIO). Let go
 * of everything this transport holds on it, at once: the kernel's
 * unregistration waits for every open verbs context of a device whose
 * driver cannot disassociate them (rxe, measured on 6.1: `rdma link
 * delete` hangs until the last ibv_close_device). ib_umad's client goes
 * first there (its fds see POLLERR, read EIO, while ib_uverbs waits), so
 * the umad fd is how we learn of it; the verbs async fd says nothing.
 * The ports stay in the table, down, for the PORTS list and the counters.
 */
static void xumad_dev_removed(struct xport_umad *u, struct xumad_dev *d)
{
	struct xport *x = &u->base;

	if (d->removed)
		return;
	d->removed = true;
	if (d->in_loop) {
		epoll_ctl(x->event_fd, EPOLL_CTL_DEL, d->ctx->async_fd, NULL);
		d->in_loop = false;
	}
	for (unsigned int i = 0; i < x->n_ports; i++) {
		if (u->up[i].dev != d)
			continue;
		if (u->up[i].in_loop) {
			epoll_ctl(x->fd, EPOLL_CTL_DEL, u->up[i].fd, NULL);
			u->up[i].in_loop = false;
		}
		xumad_txq_drop_all(u, i, false);
		if (u->nb)
			neigh_fail_tag(u->nb, i, -ENETDOWN);
		if (u->up[i].fd >= 0) {
			/* Fails on a dead device; the close is what counts. */
			umad_unregister(u->up[i].fd, u->up[i].agent);
			umad_close_port(u->up[i].fd);
			u->up[i].fd = -1;
		}
		x->ports[i].up = false;
		x->ports[i].state = XPORT_PORT_DOWN;
	}
	if (d->ctx) {
		ibv_close_device(d->ctx);
		d->ctx = NULL;
	}
	log_notice("%s: device removed: its umad ports and verbs context "
		   "are closed",
		   d->name);
	for (unsigned int i = 0; i < x->n_ports; i++)
		if (u->up[i].dev == d)
			xumad_emit(x, i, XPORT_EV_DEVICE_REMOVED);
}

static void xumad_fill_from(struct xport_rx *rx, const struct xport_port *p,
			    const struct ib_user_mad *um)
{
	const struct ib_mad_addr *a = &um->addr;

	rx->port = p->index;
	memset(&rx->from, 0, sizeof(rx->from));
	rx->from.port = p->index;
	rx->from.lid = be16toh(a->lid);
	rx->from.sl = a->sl;
	rx->from.grh = a->grh_present;
	if (a->grh_present) {
		memcpy(rx->from.gid, a->gid, CM_GID_SIZE);
		/*
		 * On receive the kernel's ib_umad puts the index of the GID
		 * the packet was sent to (its DGID) in gid_index: the
		 * sgid_index of the reply's address handle
		 * (ib_init_ah_attr_from_wc).
		 */
		for (unsigned int g = 0; g < p->n_gids; g++)
			if (p->gids[g].index == a->gid_index) {
				memcpy(rx->from.local_gid, p->gids[g].raw,
				       CM_GID_SIZE);
				break;
			}
	}
	rx->from.qpn = be32toh(a->qpn);
	rx->from.pkey_index = a->pkey_index;
}

/*
 * An SA answer of r bytes read on port i's SA agent: into rx, or false.
 * A non-zero status is one of our requests coming back unanswered (the
 * kernel's timeout, or a send error): the SA client times out on its own.
 */
static bool xumad_take_sa(struct xport_umad *u, unsigned int i, size_t r,
			  struct xport_rx *rx)
{
	struct xport *x = &u->base;
	const struct ib_user_mad *um = (const void *)u->rbuf;
	size_t len = r - umad_size();

	if (r < umad_size() + SA_DATA_OFFSET || um->status) {
		x->counters.rx_sa_status++;
		return false;
	}
	if (len > CM_MAD_SIZE) {
		/* Whole records only (ClassPortInfo answers are 256). */
		len = SA_DATA_OFFSET + (CM_MAD_SIZE - SA_DATA_OFFSET) /
					       SA_PATH_REC_SIZE *
					       SA_PATH_REC_SIZE;
		x->counters.rx_sa_cut++;
	}
	xumad_fill_from(rx, &x->ports[i], um);
	memset(rx->mad, 0, CM_MAD_SIZE);
	memcpy(rx->mad, umad_get_mad(u->rbuf), len);
	rx->len = (uint16_t)len;
	x->counters.rx_sa++;
	return true;
}

/* Read up to 'max' MADs from served port i; count, or -errno to stop. */
static int xumad_drain(struct xport_umad *u, unsigned int i,
		       struct xport_rx *rx, unsigned int max)
{
	struct xport *x = &u->base;
	const struct ib_user_mad *um = (const void *)u->rbuf;
	unsigned int n = 0;

	while (n < max) {
		ssize_t r = read(u->up[i].fd, u->rbuf, u->rbuf_len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (errno == ENODEV || errno == EIO) {
				xumad_dev_removed(u, u->up[i].dev);
				break;
			}
			/*
			 * Anything else (EINVAL, ENOSPC: the kernel requeues
			 * a MAD that does not fit) would repeat: leave the
			 * port for this round.
			 */
			x->counters.rx_dropped++;
			break;
		}
		/*
		 * A non-zero status is the MAD layer reporting one of our sends
		 * back (timeout, address error), not a received MAD; with
		 * timeout 0 it should not happen, and the engine retransmits
		 * anyway.
		 */
		if (u->up[i].sa_agent >= 0 &&
		    um->agent_id == (uint32_t)u->up[i].sa_agent) {
			if (xumad_take_sa(u, i, (size_t)r, &rx[n]))
				n++;
			continue;
		}
		if ((size_t)r < u->buf_len || um->status ||
		    um->agent_id != (uint32_t)u->up[i].agent) {
			x->counters.rx_dropped++;
			continue;
		}
		xumad_fill_from(&rx[n], &x->ports[i], um);
		memcpy(rx[n].mad, umad_get_mad(u->rbuf), CM_MAD_SIZE);
		rx[n].len = CM_MAD_SIZE;
		x->counters.rx++;
		n++;
	}
	return (int)n;
}

static int xumad_recv(struct xport *x, struct xport_rx *rx, unsigned int max)
{
	struct xport_umad *u = to_xumad(x);
	struct epoll_event evs[XPORT_MAX_PORTS];
	unsigned int got = 0;
	int n;

	n = epoll_wait(x->fd, evs, XPORT_MAX_PORTS, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int k = 0; k < n && got < max; k++) {
		unsigned int i = evs[k].data.u32;

		/* A port whose device went earlier in this batch: closed. */
		if (i < x->n_ports && u->up[i].fd >= 0)
			got += (unsigned int)xumad_drain(u, i, rx + got,
							 max - got);
	}
	return (int)got;
}

/*
 * Write one whole umad buffer of served port i, or queue it behind a
 * waiting MAD of its TID (xumad_txq_busy): 0 (written or queued) or -errno.
 */
static int xumad_out(struct xport_umad *u, unsigned int i, const uint8_t *buf)
{
	struct xport *x = &u->base;
	struct xumad_txq *q = &u->up[i].q;
	uint32_t tid = xumad_tid(umad_get_mad((void *)buf));
	int err, k;

	/* Behind a waiting MAD of its connection (xumad_txq_busy). */
	if (q->len && xumad_txq_has_tid(q, tid)) {
		k = xumad_txq_push(u, q, buf, tid, true);
		return k < 0 ? k : 0;
	}
	/*
	 * Address errors come back here, synchronously. On RoCE with a loop
	 * the neighbour was checked first (xumad_neigh_check), so the
	 * kernel's resolution has nothing to wait for.
	 */
	err = xumad_write(u->up[i].fd, buf, u->buf_len);
	if (err == -EINVAL && u->loop) {
		/* Probably a duplicate TID: retried from the loop. */
		double now = xumad_now();

		k = xumad_txq_push(u, q, buf, tid, false);
		if (k < 0)
			return k;
		xumad_txq_busy(u, q, k, now);
		xumad_txq_arm(u, q, q->e[k].due, now);
		return 0;
	}
	if (err == -EINVAL) {
		x->counters.tx_busy++;
		x->counters.tx_busy_failed++;
	}
	if (!err)
		x->counters.tx++;
	return err;
}

static uint64_t xumad_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The resolver's own counts, as the transport's. */
static void xumad_neigh_sync(struct xport_umad *u)
{
	const struct neigh_counters *c = neigh_counters(u->nb);

	u->base.counters.neigh_started = c->resolutions;
	u->base.counters.neigh_resolved = c->resolved;
	u->base.counters.neigh_failed = c->failed;
	u->base.counters.neigh_pending = neigh_pending(u->nb);
}

/*
 * RoCE: may the buffer in u->sbuf, for 'to', be written without the
 * kernel waiting for a neighbour (see neigh.h)? 0: write it; NEIGH_HELD:
 * neigh.c holds a copy and releases it through xumad_neigh_release;
 * -errno: no route. A GID whose netdev verbs did not name is written
 * directly, as before this check existed.
 */
static int xumad_neigh_check(struct xport_umad *u, unsigned int i,
			     const struct eng_addr *to)
{
	const struct xport_port *p = &u->base.ports[i];
	const struct xport_gid *sgid = xport_pick_sgid(p, to->gid);
	struct neigh_dst d;
	int err;

	if (!sgid || !sgid->ifindex)
		return 0;
	memset(&d, 0, sizeof(d));
	d.ifindex = sgid->ifindex;
	/* RFC 4291 2.5.5.2: a v4-mapped GID is the IPv4 address. */
	if (xport_gid_is_v4(to->gid) && xport_gid_is_v4(sgid->raw)) {
		d.family = AF_INET;
		memcpy(d.dst, to->gid + 12, 4);
		memcpy(d.src, sgid->raw + 12, 4);
	} else {
		d.family = AF_INET6;
		memcpy(d.dst, to->gid, CM_GID_SIZE);
		memcpy(d.src, sgid->raw, CM_GID_SIZE);
	}
	snprintf(d.label, sizeof(d.label), "%s port %u", p->dev, p->port_num);
	err = neigh_submit(u->nb, &d, u->sbuf, u->buf_len, i, xumad_now_ns());
	xumad_neigh_sync(u);
	return err;
}

/* neigh.c's verdict on a held buffer of served port 'tag'. */
static void xumad_neigh_release(void *ctx, uint32_t tag, const void *item,
				size_t len, int err)
{
	struct xport_umad *u = ctx;
	struct xport *x = &u->base;
	unsigned int i = tag;

	xumad_neigh_sync(u);
	if (i >= x->n_ports || len != u->buf_len)
		return;
	if (!err && !x->ports[i].up)
		err = -ENETDOWN;
	if (!err)
		err = xumad_out(u, i, item);
	if (err) {
		x->counters.tx_errors++;
		if (xport_err_unreachable(err))
			x->counters.tx_unreachable++;
	}
	if (x->sent_cb) {
		const struct ib_user_mad *um = item;
		struct eng_addr to;

		/* The address back from the buffer, as xumad_send wrote it. */
		memset(&to, 0, sizeof(to));
		to.port = x->ports[i].index;
		to.lid = be16toh(um->addr.lid);
		to.sl = um->addr.sl;
		to.grh = um->addr.grh_present;
		memcpy(to.gid, um->addr.gid, CM_GID_SIZE);
		to.qpn = be32toh(um->addr.qpn);
		to.pkey_index = um->addr.pkey_index;
		x->sent_cb(x->sent_ctx, to.port, &to,
			   umad_get_mad((void *)item), err);
	}
}

static int xumad_send(struct xport *x, uint16_t port, const struct eng_addr *to,
		      const struct xport_grh_opts *grh,
		      const uint8_t mad[CM_MAD_SIZE])
{
	struct xport_umad *u = to_xumad(x);
	struct ib_user_mad *um = (struct ib_user_mad *)u->sbuf;
	const struct xport_port *p = xport_port(x, port);
	unsigned int i;
	int err;

	if (!p) {
		err = -EINVAL;
		goto fail;
	}
	i = (unsigned int)(p - x->ports);
	if (!p->up) {
		err = -ENETDOWN;
		goto fail;
	}
	memset(um, 0, sizeof(*um));
	um->agent_id = (uint32_t)u->up[i].agent;
	/*
	 * CM MADs are unsolicited Sends: the MAD layer would wait for a
	 * response that never comes, so no timeout and no MAD-layer retry;
	 * the CM retransmits on its own timers (IBTA ch. 12 timeouts).
	 */
	um->timeout_ms = 0;
	um->retries = 0;
	um->length = CM_MAD_SIZE;
	um->addr.qpn = htobe32(to->qpn ? to->qpn : XUMAD_QP1);
	um->addr.qkey = htobe32(XUMAD_QP1_QKEY);
	um->addr.sl = to->sl;
	um->addr.pkey_index = to->pkey_index;
	/* RoCE has no LIDs (Annex A16/A17): the GRH addresses the MAD. */
	if (p->link == XPORT_LINK_IB)
		um->addr.lid = htobe16(to->lid);
	else if (!to->grh) {
		err = -EDESTADDRREQ;
		goto fail;
	}
	if (to->grh) {
		const struct xport_gid *sgid = xport_pick_sgid(p, to->gid);

		if (!sgid) {
			err = -EADDRNOTAVAIL;
			goto fail;
		}
		if (!grh)
			grh = &u->grh;
		um->addr.grh_present = 1;
		memcpy(um->addr.gid, to->gid, CM_GID_SIZE);
		/*
		 * umad_set_grh() leaves gid_index alone (measured, rdma-core
		 * 44): set it here, or the kernel uses GID 0 (fe80::, which
		 * cannot reach an IPv4-mapped destination on RoCE v2).
		 */
		um->addr.gid_index = (uint8_t)sgid->index;
		um->addr.hop_limit = grh->hop_limit;
		um->addr.traffic_class = grh->traffic_class;
		um->addr.flow_label = htobe32(grh->flow_label);
	}
	memcpy(umad_get_mad(u->sbuf), mad, CM_MAD_SIZE);
	if (p->link == XPORT_LINK_ROCE && u->nb) {
		err = xumad_neigh_check(u, i, to);
		if (err == NEIGH_HELD) {
			x->counters.tx_deferred++;
			return XPORT_SEND_DEFERRED;
		}
		if (err)
			goto fail;
	}
	err = xumad_out(u, i, u->sbuf);
	if (err)
		goto fail;
	return 0;
fail:
	x->counters.tx_errors++;
	return err;
}

/* An SA request: the SA agent's, with a timeout, so that the kernel
 * keeps it to match its response (transport.h). */
static int xumad_send_sa(struct xport *x, uint16_t port,
			 const struct xport_sa_dest *to,
			 const uint8_t mad[CM_MAD_SIZE])
{
	struct xport_umad *u = to_xumad(x);
	struct ib_user_mad *um = (struct ib_user_mad *)u->sbuf;
	const struct xport_port *p = xport_port(x, port);
	unsigned int i;
	int err;

	if (!p)
		return -EINVAL;
	i = (unsigned int)(p - x->ports);
	if (u->up[i].sa_agent < 0 || p->link != XPORT_LINK_IB)
		return -EOPNOTSUPP;
	if (!p->up)
		return -ENETDOWN;
	memset(um, 0, sizeof(*um));
	um->agent_id = (uint32_t)u->up[i].sa_agent;
	um->timeout_ms = to->timeout_ms;
	um->retries = 0; /* the SA client retries, with a new TID */
	um->length = CM_MAD_SIZE;
	um->addr.qpn = htobe32(to->qpn);
	um->addr.qkey = htobe32(to->qkey);
	um->addr.lid = htobe16(to->lid);
	um->addr.sl = to->sl;
	um->addr.pkey_index = to->pkey_index;
	memcpy(umad_get_mad(u->sbuf), mad, CM_MAD_SIZE);
	err = xumad_write(u->up[i].fd, u->sbuf, u->buf_len);
	if (err) {
		x->counters.tx_errors++;
		return err;
	}
	x->counters.tx_sa++;
	return 0;
}

static unsigned int xumad_port_slot(struct xport *x, const struct xumad_dev *d,
				    unsigned int port_num)
{
	struct xport_umad *u = to_xumad(x);

	for (unsigned int i = 0; i < x->n_ports; i++)
		if (u->up[i].dev == d && x->ports[i].port_num == port_num)
			return i;
	return UINT32_MAX;
}

static void xumad_port_event(struct xport_umad *u, struct xumad_dev *d,
			     const struct ibv_async_event *ae)
{
	struct xport *x = &u->base;
	unsigned int i = xumad_port_slot(x, d, ae->element.port_num);
	enum xport_event_type type;

	if (i == UINT32_MAX)
		return; /* a port of the device we do not serve */
	switch (ae->event_type) {
	case IBV_EVENT_PORT_ACTIVE:
		type = XPORT_EV_PORT_ACTIVE;
		break;
	case IBV_EVENT_PORT_ERR:
		type = XPORT_EV_PORT_DOWN;
		break;
	case IBV_EVENT_LID_CHANGE:
		type = XPORT_EV_LID_CHANGE;
		break;
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_SM_CHANGE:
		/* A new SM (or one that lost its state): its SA's paths,
		 * and where the SA is, are to be learnt again. */
		type = XPORT_EV_SM_CHANGE;
		break;
	case IBV_EVENT_GID_CHANGE:
		type = XPORT_EV_GID_CHANGE;
		break;
	case IBV_EVENT_PKEY_CHANGE:
		type = XPORT_EV_PKEY_CHANGE;
		break;
	default:
		return;
	}
	xumad_query_port(u, d, &x->ports[i]);
	/* The query may have raced the event: trust the event's direction. */
	if (type == XPORT_EV_PORT_DOWN &&
	    x->ports[i].state == XPORT_PORT_ACTIVE)
		x->ports[i].state = XPORT_PORT_DOWN;
	xumad_emit(x, i, type);
}

static int xumad_process_events(struct xport *x)
{
	struct xport_umad *u = to_xumad(x);
	struct epoll_event evs[XUMAD_MAX_DEVS];
	int n;

	n = epoll_wait(x->event_fd, evs, XUMAD_MAX_DEVS, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int k = 0; k < n; k++) {
		struct xumad_dev *d = &u->devs[evs[k].data.u32];

		while (!d->removed) {
			struct ibv_async_event ae;

			if (ibv_get_async_event(d->ctx, &ae)) {
				if (errno != EAGAIN && errno != EINTR)
					xumad_dev_removed(u, d);
				break;
			}
			if (ae.event_type == IBV_EVENT_DEVICE_FATAL)
				xumad_dev_removed(u, d);
			else
				xumad_port_event(u, d, &ae);
			ibv_ack_async_event(&ae);
		}
	}
	return 0;
}

static const struct xport_ops xumad_ops = {
	.name = "umad",
	.close = xumad_close,
	.recv = xumad_recv,
	.send = xumad_send,
	.process_events = xumad_process_events,
	.send_sa = xumad_send_sa,
};

/*
 * RoCE ports with a loop get neighbour checks (neigh.h). Without the
 * netlink sockets (a kernel or sandbox without NETLINK_ROUTE) sends are
 * written as before: working, though an unresolved neighbour then holds
 * the write.
 */
static void xumad_neigh_open(struct xport_umad *u)
{
	bool roce = false;

	for (unsigned int i = 0; i < u->base.n_ports; i++)
		roce |= u->base.ports[i].link == XPORT_LINK_ROCE;
	if (!roce || !u->loop)
		return;
	u->nb = neigh_open(u->loop, xumad_neigh_release, u);
	if (!u->nb)
		log_warn("RoCE neighbour checks unavailable (netlink: %s): a "
			 "send to an unresolved neighbour holds the daemon up "
			 "to ~1 s",
			 strerror(errno));
}

/* Follow each device that has a served port on the event epoll set. */
static int xumad_watch_devs(struct xport_umad *u)
{
	struct xport *x = &u->base;

	for (unsigned int k = 0; k < u->n_devs; k++) {
		struct xumad_dev *d = &u->devs[k];
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = k };
		bool used = false;
		int err;

		for (unsigned int i = 0; i < x->n_ports; i++)
			used |= u->up[i].dev == d;
		if (!used)
			continue;
		err = xumad_set_nonblock(d->ctx->async_fd);
		if (err)
			return err;
		if (epoll_ctl(x->event_fd, EPOLL_CTL_ADD, d->ctx->async_fd,
			      &ev) < 0)
			return -errno;
		d->in_loop = true;
	}
	return 0;
}

static void xumad_open_dev_ports(struct xport_umad *u, struct ibv_device **list,
				 int n_list, const char *name,
				 unsigned int port_num,
				 const struct xport_config *cfg,
				 struct xport_open_report *report)
{
	struct xumad_dev *d;
	int err = 0;

	d = xumad_get_dev(u, list, n_list, name, &err);
	if (!d) {
		xumad_report(report, name, port_num, false, 0, err, "%s",
			     err == -ENODEV ? "no such RDMA device" :
					      strerror(-err));
		return;
	}
	if (port_num > d->phys_port_cnt) {
		xumad_report(report, name, port_num, false, 0, -ENODEV,
			     "no such port (the device has %u)",
			     d->phys_port_cnt);
		return;
	}
	for (unsigned int pn = port_num ? port_num : 1;
	     pn <= (port_num ? port_num : d->phys_port_cnt); pn++)
		xumad_open_one(u, d, pn, cfg, report);
}

int xport_umad_open(const struct xport_config *cfg, xport_event_fn cb,
		    void *ctx, struct xport_open_report *report,
		    struct xport **out)
{
	struct xport_umad *u;
	struct xport *x;
	struct ibv_device **list;
	int n_list = 0, err;

	*out = NULL;
	if (report)
		report->n = 0;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	x = &u->base;
	x->ops = &xumad_ops;
	u->loop = cfg->loop;
	x->first_index = cfg->first_index;
	x->event_cb = cb;
	x->event_ctx = ctx;
	x->fd = epoll_create1(EPOLL_CLOEXEC);
	x->event_fd = epoll_create1(EPOLL_CLOEXEC);
	u->grh.hop_limit =
		cfg->hop_limit ? cfg->hop_limit : XPORT_DEFAULT_HOP_LIMIT;
	u->grh.traffic_class = cfg->traffic_class;
	u->grh.flow_label = cfg->flow_label;
	u->gid_tab = calloc(XUMAD_MAX_GID_ENTRIES, sizeof(*u->gid_tab));
	x->ports = calloc(XPORT_MAX_PORTS, sizeof(*x->ports));
	if (x->fd < 0 || x->event_fd < 0 || !u->gid_tab || !x->ports) {
		err = x->fd < 0 || x->event_fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	if (umad_init() < 0) {
		err = -EIO;
		goto fail;
	}
	u->umad_inited = true;

	list = ibv_get_device_list(&n_list);
	if (!list || !n_list) {
		xumad_report(report, "", 0, false, 0, -ENODEV,
			     "no RDMA device found");
		if (list)
			ibv_free_device_list(list);
		err = -ENODEV;
		goto fail;
	}
	if (!cfg->n_sel)
		for (int i = 0; i < n_list; i++)
			xumad_open_dev_ports(u, list, n_list,
					     ibv_get_device_name(list[i]), 0,
					     cfg, report);
	for (unsigned int s = 0; s < cfg->n_sel; s++)
		xumad_open_dev_ports(u, list, n_list, cfg->sel[s].dev,
				     cfg->sel[s].port_num, cfg, report);
	ibv_free_device_list(list);

	if (!x->n_ports) {
		/* One port looked at: its own reason is the answer. */
		err = report && report->n == 1 && report->port[0].error ?
			      report->port[0].error :
			      -ENODEV;
		goto fail;
	}
	/*
	 * Only now: umad_size() grows by the P_Key index fields once
	 * umad_open_port has switched the fd to that ABI (all kernels
	 * since 2.6.32 have it); before, it is 8 bytes short.
	 */
	u->buf_len = umad_size() + CM_MAD_SIZE;
	u->rbuf_len = umad_size() + XUMAD_RBUF_MAD;
	u->sbuf = calloc(1, u->buf_len);
	u->rbuf = calloc(1, u->rbuf_len);
	if (!u->sbuf || !u->rbuf) {
		err = -ENOMEM;
		goto fail;
	}
	err = xumad_watch_devs(u);
	if (err)
		goto fail;
	xumad_neigh_open(u);
	*out = x;
	return 0;
fail:
	xumad_close(x);
	return err;
}
