// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: ids and the calls that move them.
 *
 * Every call checks what it can locally (the id is live, its state allows
 * the call, the arguments) and fails at once with librdmacm's errno; what
 * goes to the daemon is queued (libcmclient's asynchronous mode) and sent
 * in one batch, so a call never waits for the daemon where the kernel's
 * rdma_cm would not wait for the wire either. Address and route
 * resolution are local (rc_addr.c: the kernel's routing and GID tables)
 * and report ADDR_RESOLVED / ROUTE_RESOLVED as events, as rdma_cm does.
 * Daemon-side failures come back as the events rdma_cm would report
 * (rc_event.c).
 */
#include "rc_int.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cm_mad.h"
#include "rdmacm.h"

/* The kernel's rdma_cm timeouts for its REQ (CMA_CM_RESPONSE_TIMEOUT,
 * CMA_MAX_CM_RETRIES), so a peer sees the same waits from either CM. */
#define RC_CM_RESPONSE_TIMEOUT 20
#define RC_MAX_CM_RETRIES 15
/* rdma_listen's default and largest backlog (the kernel's max_backlog). */
#define RC_MAX_BACKLOG 1024

struct rc_id *rc_id_new(struct rc_chan *ch, void *context,
			enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct rc_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->pub.context = context;
	id->pub.ps = ps;
	id->pub.qp_type = qp_type;
	id->pub.channel = &ch->pub;
	id->ch = ch;
	id->sync = ch->sync;
	id->refs = 1;
	id->init_depth = RDMA_MAX_INIT_DEPTH;
	id->resp_res = RDMA_MAX_RESP_RES;
	id->qkey = ps == RDMA_PS_UDP ? RDMA_UDP_QKEY : 0;
	ch->ids++;
	rc_id_track(id, true);
	return id;
}

void rc_id_free(struct rc_id *id)
{
	rc_dev_put(id);
	free(id->ep_qp_attr);
	free(id);
}

void rc_id_reject_new(struct cmc_id *cid, unsigned int reason, bool sidr)
{
	/* A REJ with our reason (SIDR: status 1, service id not supported),
	 * then the id goes; the daemon returns the listener's credit. */
	if (sidr)
		cmc_sidr_rep(cid, 1, 0, 0, NULL, 0);
	else
		cmc_reject(cid, reason, NULL, 0, NULL, 0);
	cmc_destroy_id(cid);
}

/* A synchronous id's kept event (librdmacm's id->event), freed: its
 * channel is going away. */
static void rc_sync_event_drop(struct rc_id *id)
{
	if (id->pub.event) {
		rc_ev_release(id->pub.event);
		id->pub.event = NULL;
	}
}

/* Forget an id: the daemon's id goes (finishing its protocol), its queued
 * events are dropped, a synchronous id's channel is closed. The memory
 * stays while delivered events point to it. */
static void rc_id_forget(struct rc_id *id)
{
	struct rc_chan *ch = id->ch;

	id->destroyed = true;
	rc_id_track(id, false);
	rc_kern_destroy(id);
	if (id->cid) {
		cmc_destroy_id(id->cid);
		id->cid = NULL;
	}
	rc_ev_drop_id(ch, id);
	ch->ids--;
	if (id->sync) {
		rc_sync_event_drop(id);
		if (!ch->ids)
			rc_chan_free(ch);
	}
	rc_dev_put(id);
}

void rc_id_destroy_child(struct rc_id *child)
{
	if (child->destroyed)
		return;
	rc_id_forget(child);
	rc_id_unref(child);
}

void rc_id_set_path(struct rc_id *id, const struct cmc_path *p)
{
	struct ibv_sa_path_rec *r = &id->path;
	struct rc_dev *d = rc_dev_by_name(p->dev_name);

	memset(r, 0, sizeof(*r));
	memcpy(r->sgid.raw, p->local_gid, 16);
	memcpy(r->dgid.raw, p->remote_gid, 16);
	r->slid = htons(p->local_lid);
	r->dlid = htons(p->remote_lid);
	r->flow_label = htonl(p->flow_label);
	r->hop_limit = p->hop_limit;
	r->traffic_class = p->traffic_class;
	r->reversible = 1;
	r->numb_path = 1;
	r->pkey = htons(p->pkey);
	r->sl = p->sl;
	r->mtu_selector = 2; /* exactly */
	r->mtu = p->mtu;
	r->rate_selector = 2;
	r->rate = p->packet_rate;
	r->packet_life_time_selector = 2;
	r->packet_life_time = p->packet_life_time;
	id->pub.route.path_rec = r;
	id->pub.route.num_paths = 1;
	id->pub.route.addr.addr.ibaddr.sgid = r->sgid;
	id->pub.route.addr.addr.ibaddr.dgid = r->dgid;
	id->pub.route.addr.addr.ibaddr.pkey = r->pkey;
	id->pub.port_num = p->port_num;
	id->gid_index = p->sgid_index;
	id->has_route = true;
	if (d && d->dev)
		rc_dev_get(id, d);
}

/* ------------------------------------------------------------------ */
/* Where an address lives */

/* The contexts of every device, opened, for rc_addr.c. */
static int rc_ctxs(struct ibv_context **ctxs, int max)
{
	int n = 0;

	rc_ports(); /* ownership first: kernel devices take its contexts */
	if (rc_devices())
		return 0;
	for (int i = 0; i < rc.n_devs && n < max; i++) {
		struct rc_dev *d = &rc.devs[i];

		if (!d->ctx)
			rc_dev_open(d);
		if (d->ctx)
			ctxs[n++] = d->ctx;
	}
	return n;
}

/* Open what the first call needs (rdma_create_event_channel); under rc.mu. */
void rc_warm(void)
{
	struct ibv_context *ctxs[64];
	int n = rc_ctxs(ctxs, 64);

	if (n)
		rc_addr_warm(ctxs, n);
}

/* Put id on the device and GID w names, or, when the address is no
 * verbs device's (the simulated fabric has none), on the daemon's port
 * that carries gid. */
static int rc_id_place(struct rc_id *id, const struct rc_where *w)
{
	struct rc_dev *d = w->ctx ? rc_dev_by_ctx(w->ctx) : NULL;
	int r;

	if (d) {
		r = rc_dev_get(id, d);
		if (r)
			return r;
	}
	id->pub.port_num = w->port_num;
	id->gid_index = w->gid_index;
	id->gid_type = w->gid_type;
	id->pub.route.addr.addr.ibaddr.sgid = w->sgid;
	id->pub.route.addr.addr.ibaddr.pkey = htons(0xffff);
	return 0;
}

/* The daemon's own port for a GID that no verbs device holds. */
static int rc_where_daemon(const union ibv_gid *gid, bool any_v4,
			   struct rc_where *w)
{
	const struct cmc_port_info *p = NULL;
	const struct cmc_port_gid *pg = NULL;
	int r = rc_ports();

	if (r)
		return r;
	if (gid)
		p = rc_port_gid(gid, &pg);
	if (!p && any_v4)
		p = rc_port_gid(NULL, &pg);
	/* Only ports no verbs device is behind (the simulated fabric): a
	 * real device's addresses are the routing table's to place. */
	if (!p || rc_dev_by_name(p->dev_name))
		return -EADDRNOTAVAIL;
	w->ctx = NULL;
	w->port_num = p->port_num;
	w->gid_index = pg->index;
	memcpy(w->sgid.raw, pg->gid, 16);
	return 0;
}

/* Is the device under id served by cmd? Devices the daemon does not list
 * belong to the kernel's CM. */
static bool rc_id_on_cmd(const struct rc_id *id)
{
	return !id->dev || id->dev->cmd;
}

/* ------------------------------------------------------------------ */
/* Create and destroy */

static int rc_create(struct rdma_event_channel *channel,
		     struct rdma_cm_id **out, void *context,
		     enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct rc_chan *ch = (struct rc_chan *)channel;
	struct rc_id *id;

	if (!out)
		return rc_err(EINVAL);
	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_UDP:
	case RDMA_PS_IB:
	case RDMA_PS_IPOIB:
		break;
	default:
		return rc_err(EINVAL);
	}
	RC_LOCK();
	if (!ch)
		ch = rc_chan_new(true);
	id = ch ? rc_id_new(ch, context, ps, qp_type) : NULL;
	if (!id && ch && !channel)
		rc_chan_free(ch);
	RC_UNLOCK();
	if (!id)
		return rc_err(ENOMEM);
	*out = &id->pub;
	return 0;
}

RC_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
			     struct rdma_cm_id **id, void *context,
			     enum rdma_port_space ps)
{
	return rc_create(channel, id, context, ps,
			 ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP ? IBV_QPT_UD :
								    IBV_QPT_RC);
}

RC_EXPORT int rdma_destroy_id(struct rdma_cm_id *pub)
{
	struct rc_id *id;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_destroy_id");
	if (id) {
		rc_id_forget(id);
		rc_flush();
		rc_id_unref(id);
	}
	RC_UNLOCK();
	return id ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Addresses */

static void rc_sa_set_port(struct sockaddr *sa, uint16_t port);

/* An ephemeral port, from the range Linux uses (32768-60999). */
static void rc_pick_port(struct sockaddr *sa)
{
	uint16_t p = 0;

	if (getrandom(&p, sizeof(p), 0) != sizeof(p))
		p = (uint16_t)rand();
	rc_sa_set_port(sa, (uint16_t)(32768 + p % 28232));
}

static void rc_sa_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static uint16_t rc_port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

/* The local place of a specific address: a verbs device's GID, or the
 * daemon's port that has it as a GID. */
static int rc_locate(const struct sockaddr *sa, struct rc_where *w)
{
	struct ibv_context *ctxs[64];
	int n = rc_ctxs(ctxs, 64);
	union ibv_gid gid;
	int r = rc_addr_local(ctxs, n, sa, w);

	if (r != -EADDRNOTAVAIL)
		return r;
	if (rc_addr_to_gid(sa, &gid))
		return -EAFNOSUPPORT;
	return rc_where_daemon(&gid, false, w);
}

static int rc_bind(struct rc_id *id, const struct sockaddr *sa)
{
	socklen_t len = rc_addr_len(sa);
	struct rc_where w;
	int r;

	if (!len || sa->sa_family == AF_IB)
		return sa && sa->sa_family == AF_IB ? -EAFNOSUPPORT : -EINVAL;
	if (id->st != RC_IDLE)
		return -EINVAL;
	memset(&id->pub.route.addr.src_storage, 0,
	       sizeof(id->pub.route.addr.src_storage));
	memcpy(&id->pub.route.addr.src_storage, sa, len);
	if (rc_addr_any(sa)) {
		id->bound_any = true;
	} else {
		memset(&w, 0, sizeof(w));
		r = rc_locate(sa, &w);
		if (r)
			return r;
		r = rc_id_place(id, &w);
		if (r)
			return r;
		if (!rc_id_on_cmd(id)) {
			r = rc_kern_bind(id, (struct sockaddr *)sa);
			if (r)
				return r;
		}
	}
	id->st = RC_ADDR_BOUND;
	return 0;
}

RC_EXPORT int rdma_bind_addr(struct rdma_cm_id *pub, struct sockaddr *addr)
{
	struct rc_id *id;
	int r = -EINVAL;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_bind_addr");
	if (id)
		r = addr ? rc_bind(id, addr) : -EINVAL;
	RC_UNLOCK();
	if (!id)
		return -1;
	return rc_cmc(r);
}

/* Resolve locally, or hand the id to the kernel's CM when the route
 * leaves from one of its devices (*kern: the kernel reports the event). */
static int rc_resolve_addr(struct rc_id *id, const struct sockaddr *src,
			   const struct sockaddr *dst, int timeout_ms,
			   bool *kern)
{
	struct ibv_context *ctxs[64];
	const struct sockaddr *from = src;
	socklen_t dlen = rc_addr_len(dst);
	struct rc_where w;
	union ibv_gid dgid;
	int n, r;

	if (!dlen || (src && !rc_addr_len(src)))
		return -EINVAL;
	if (dst->sa_family == AF_IB)
		return -EAFNOSUPPORT;
	if (id->st != RC_IDLE && id->st != RC_ADDR_BOUND &&
	    id->st != RC_ADDR_RESOLVED)
		return -EINVAL;
	if (!from && id->st == RC_ADDR_BOUND)
		from = &id->pub.route.addr.src_addr;
	memset(&w, 0, sizeof(w));
	n = rc_ctxs(ctxs, 64);
	r = rc_addr_route(ctxs, n, from, dst, &w, &dgid);
	if (r == -EADDRNOTAVAIL || r == -ENETUNREACH) {
		/* No verbs device carries the route: the daemon's own ports
		 * (the simulated fabric), by the source's GID or, for no
		 * source, the first IPv4-capable port, as cmc_connect_ip. */
		union ibv_gid sg, *sgp = NULL;

		if (from && !rc_addr_any(from) && !rc_addr_to_gid(from, &sg))
			sgp = &sg;
		if (rc_where_daemon(sgp, !sgp, &w) == 0 &&
		    !rc_addr_to_gid(dst, &dgid)) {
			if (from)
				memcpy(&w.src, from, rc_addr_len(from));
			else
				rc_gid_to_addr(&w.sgid, 0, 0, &w.src);
			r = 0;
		}
	}
	if (r)
		return r;
	r = rc_id_place(id, &w);
	if (r)
		return r;
	if (!rc_id_on_cmd(id)) {
		*kern = true;
		return rc_kern_resolve_addr(id, (struct sockaddr *)from,
					    (struct sockaddr *)dst, timeout_ms);
	}
	memcpy(&id->pub.route.addr.src_storage, &w.src, sizeof(w.src));
	/* The source port: the bound one, else an ephemeral one. */
	if (from && rc_port_of(from))
		rc_sa_set_port(&id->pub.route.addr.src_addr, rc_port_of(from));
	else
		rc_pick_port(&id->pub.route.addr.src_addr);
	memset(&id->pub.route.addr.dst_storage, 0,
	       sizeof(id->pub.route.addr.dst_storage));
	memcpy(&id->pub.route.addr.dst_storage, dst, dlen);
	id->pub.route.addr.addr.ibaddr.dgid = dgid;
	id->st = RC_ADDR_RESOLVED;
	return 0;
}

/* Queue a locally made event (ADDR_RESOLVED, ROUTE_RESOLVED, or their
 * errors) and, for a synchronous id, wait for it as librdmacm does. */
static int rc_local_event(struct rc_id *id, enum rdma_cm_event_type type,
			  int status)
{
	struct rc_ev *ev = rc_ev_new(id, type, status);

	if (!ev)
		return -ENOMEM;
	rc_ev_queue(ev);
	return 0;
}

RC_EXPORT int rdma_resolve_addr(struct rdma_cm_id *pub,
				struct sockaddr *src_addr,
				struct sockaddr *dst_addr, int timeout_ms)
{
	struct rc_id *id;
	bool kern = false;
	int r;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_resolve_addr");
	if (!id) {
		RC_UNLOCK();
		return -1;
	}
	if (!dst_addr || !rc_addr_len(dst_addr) ||
	    (src_addr && !rc_addr_len(src_addr))) {
		RC_UNLOCK();
		return rc_err(EINVAL);
	}
	if (id->kid) {
		/* Bound to a kernel device's address. */
		r = rc_kern_resolve_addr(id, src_addr, dst_addr, timeout_ms);
		RC_UNLOCK();
		return r ? rc_cmc(r) : rc_complete(id);
	}
	if (id->st != RC_IDLE && id->st != RC_ADDR_BOUND &&
	    id->st != RC_ADDR_RESOLVED) {
		RC_UNLOCK();
		return rc_err(EINVAL);
	}
	r = rc_resolve_addr(id, src_addr, dst_addr, timeout_ms, &kern);
	if (kern) {
		RC_UNLOCK();
		return r ? rc_cmc(r) : rc_complete(id);
	}
	if (r) {
		char b[80];

		rc_log(2, "rdma_resolve_addr %s: %s",
		       rc_addr_str(dst_addr, b, sizeof(b)), cmc_strerror(r));
		memcpy(&id->pub.route.addr.dst_storage, dst_addr,
		       rc_addr_len(dst_addr));
	}
	/* As rdma_cm: the outcome is an event, the call succeeds. */
	r = rc_local_event(
		id, r ? RDMA_CM_EVENT_ADDR_ERROR : RDMA_CM_EVENT_ADDR_RESOLVED,
		r);
	RC_UNLOCK();
	if (r)
		return rc_cmc(r);
	return rc_complete(id);
}

static int rc_resolve_route(struct rc_id *id)
{
	struct ibv_sa_path_rec *p = &id->path;
	struct ibv_port_attr pa;

	if (id->st != RC_ADDR_RESOLVED && id->st != RC_ROUTE_RESOLVED)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->sgid = id->pub.route.addr.addr.ibaddr.sgid;
	p->dgid = id->pub.route.addr.addr.ibaddr.dgid;
	p->pkey = htons(0xffff);
	p->reversible = 1;
	p->numb_path = 1;
	p->hop_limit = 64;
	p->traffic_class = id->tos;
	p->mtu_selector = 2;
	p->mtu = IBV_MTU_1024;
	p->rate_selector = 2;
	p->packet_life_time_selector = 2;
	if (id->pub.verbs &&
	    ibv_query_port(id->pub.verbs, id->pub.port_num, &pa) == 0) {
		p->mtu = pa.active_mtu;
		p->slid = htons(pa.lid);
	}
	id->pub.route.path_rec = p;
	id->pub.route.num_paths = 1;
	id->st = RC_ROUTE_RESOLVED;
	return 0;
}

static int rc_need_cid(struct rc_id *id);
static void rc_ends(const struct rc_id *id, struct cmc_addr *dst,
		    struct cmc_port_sel *src);

/*
 * On an InfiniBand port of the daemon's the route is the subnet
 * administrator's path, as the kernel's rdma_cm asks it
 * (cma_query_ib_route): the daemon asks (or answers from its cache) and
 * ROUTE_RESOLVED comes as its event (rc_on_route). Returns 1 when the
 * id's port is not IB (the route is built locally), else 0 or -errno.
 */
static int rc_resolve_route_sa(struct rc_id *id)
{
	const union ibv_gid *sgid = &id->pub.route.addr.addr.ibaddr.sgid;
	const struct cmc_port_info *p;
	const struct cmc_port_gid *pg = NULL;
	struct cmc_route_param rp;
	int r;

	if (id->st != RC_ADDR_RESOLVED && id->st != RC_ROUTE_RESOLVED)
		return -EINVAL;
	if (rc_ports() || !(p = rc_port_gid(sgid, &pg)) ||
	    p->link_layer != CMC_LINK_IB)
		return 1;
	r = rc_need_cid(id);
	if (r)
		return r;
	memset(&rp, 0, sizeof(rp));
	rc_ends(id, &rp.dst, &rp.src);
	rp.service_id = rdmacm_service_id((enum rdmacm_ps)id->pub.ps,
					  ntohs(rdma_get_dst_port(&id->pub)));
	if (id->tos_set) {
		/* rdma_cm asks the SA for the traffic class of the ToS. */
		rp.path.flags = CMC_PATH_TRAFFIC_CLASS;
		rp.path.traffic_class = id->tos;
	}
	return cmc_resolve_route(id->cid, &rp);
}

RC_EXPORT int rdma_resolve_route(struct rdma_cm_id *pub, int timeout_ms)
{
	struct rc_id *id;
	int r;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_resolve_route");
	if (!id) {
		RC_UNLOCK();
		return -1;
	}
	if (id->kid) {
		r = rc_kern_op(id, RC_KOP_RESOLVE_ROUTE, NULL, NULL,
			       (size_t)timeout_ms);
	} else if ((r = rc_resolve_route_sa(id)) == 1) {
		r = rc_resolve_route(id);
		if (r == 0)
			r = rc_local_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	}
	RC_UNLOCK();
	if (r)
		return rc_cmc(r);
	return rc_complete(id);
}

/* ------------------------------------------------------------------ */
/* The shape of the calls that move an id */

/* What such a call takes besides the id. */
struct rc_args {
	const struct rdma_conn_param *param;
	const void *pd; /* private data */
	uint8_t len;
	unsigned int reason; /* REJ */
	int n; /* backlog, ibv_event_type */
};

typedef int rc_call_fn(struct rc_id *id, const struct rc_args *a);

/*
 * Under rc.mu: the id checked live (NULL, errno EINVAL and a log line
 * naming call otherwise), fn's work (*r: 0 or -errno), and what it queued
 * sent to the daemon.
 */
static struct rc_id *rc_call(struct rdma_cm_id *pub, const char *call,
			     rc_call_fn *fn, const struct rc_args *a, int *r)
{
	struct rc_id *id;

	RC_LOCK();
	id = rc_id_live(pub, call);
	*r = id ? fn(id, a) : 0;
	if (id)
		rc_flush();
	RC_UNLOCK();
	return id;
}

/* A call's return: -1/errno for a dead id or a failure, else 0, after
 * waiting for the event when the id is synchronous and sync says so. */
static int rc_call_ret(struct rc_id *id, int r, bool sync)
{
	if (!id)
		return -1;
	if (r)
		return rc_cmc(r);
	return sync ? rc_complete(id) : 0;
}

/* ------------------------------------------------------------------ */
/* Passive side */

static enum cmc_qp_type rc_cmc_qpt(const struct rc_id *id)
{
	switch (id->pub.qp_type) {
	case IBV_QPT_UC:
		return CMC_QP_UC;
	case IBV_QPT_UD:
		return CMC_QP_UD;
	default:
		return CMC_QP_RC;
	}
}

static int rc_need_cid(struct rc_id *id)
{
	int r;

	if (id->cid)
		return 0;
	r = rc_daemon();
	if (r)
		return r;
	return cmc_create_id(rc.ch, id, rc_cmc_qpt(id), &id->cid);
}

/* Listen on cmd's ports: on the address's GID, or on every port for the
 * wildcard; port 0 picks an ephemeral port (again while it is taken). */
static int rc_listen_cmd(struct rc_id *id, int backlog)
{
	struct cmc_port_sel sel = { .kind = CMC_SEL_ANY };
	struct sockaddr *sa = &id->pub.route.addr.src_addr;
	enum rdmacm_ps ps = (enum rdmacm_ps)id->pub.ps;
	int r = 0, tries;

	if (!id->bound_any) {
		sel.kind = CMC_SEL_GID;
		memcpy(sel.gid, id->pub.route.addr.addr.ibaddr.sgid.raw, 16);
	}
	for (tries = 0; tries < 16; tries++) {
		bool pick = !rc_port_of(sa);
		uint64_t sid;

		if (pick)
			rc_pick_port(sa);
		sid = rdmacm_service_id(ps, rc_port_of(sa));
		r = rc_need_cid(id);
		if (r)
			return r;
		r = cmc_listen(id->cid, sid, ~0ull, (unsigned int)backlog,
			       sel.kind == CMC_SEL_ANY ? NULL : &sel);
		if (r == -EOPNOTSUPP && sel.kind != CMC_SEL_ANY) {
			/* A daemon without address selectors: listen on
			 * every port; rc_on_req() turns away REQs to other
			 * addresses. */
			rc_log(2, "the daemon listens on every address only; "
				  "filtering by address here");
			sel.kind = CMC_SEL_ANY;
			r = cmc_listen(id->cid, sid, ~0ull,
				       (unsigned int)backlog, NULL);
		}
		if (r != -EADDRINUSE || !pick)
			break;
		rc_sa_set_port(sa, 0);
	}
	return r;
}

/* Does the kernel's CM own any device here? */
static bool rc_kernel_devices(void)
{
	for (int i = 0; i < rc.n_devs; i++)
		if (!rc.devs[i].cmd)
			return rc_kern_available();
	return false;
}

static int rc_listen(struct rc_id *id, const struct rc_args *a)
{
	int backlog = a->n;
	bool cmd;
	int r, kr;

	if (id->st == RC_IDLE) {
		/* As rdma_cm: listening unbound binds to the wildcard. */
		struct sockaddr_in any = { .sin_family = AF_INET };

		r = rc_bind(id, (struct sockaddr *)&any);
		if (r)
			return r;
	}
	if (id->st != RC_ADDR_BOUND)
		return -EINVAL;
	if (backlog <= 0 || backlog > RC_MAX_BACKLOG)
		backlog = RC_MAX_BACKLOG;
	if (id->kid && !id->bound_any) {
		/* A kernel device's address: the kernel's listener only. */
		r = rc_kern_listen(id, backlog);
		if (!r)
			id->st = RC_LISTEN;
		return r;
	}
	/* The wildcard, or an address of cmd's: cmd's listener, and for
	 * the wildcard the kernel's too when it owns devices here. */
	r = rc_ports();
	cmd = r == 0 && rc.n_ports > 0;
	if (cmd || !id->bound_any)
		r = rc_listen_cmd(id, backlog);
	if (id->bound_any && rc_kernel_devices()) {
		if (!rc_port_of(&id->pub.route.addr.src_addr))
			rc_pick_port(&id->pub.route.addr.src_addr);
		kr = rc_kern_listen(id, backlog);
		if (!cmd)
			r = kr;
		else if (kr)
			rc_log(1,
			       "rdma_listen: on the kernel's devices: %s; "
			       "listening on cmd's only",
			       cmc_strerror(kr));
	}
	if (!r)
		id->st = RC_LISTEN;
	return r;
}

RC_EXPORT int rdma_listen(struct rdma_cm_id *pub, int backlog)
{
	struct rc_args a = { .n = backlog };
	struct rc_id *id;
	int r;

	id = rc_call(pub, "rdma_listen", rc_listen, &a, &r);
	return rc_call_ret(id, r, false);
}

/* Does a request to dst reach the listener (bound to one address, or to
 * the wildcard of its family unless AFONLY says otherwise)? */
bool rc_listener_takes(const struct rc_id *lst, const struct sockaddr *dst)
{
	const struct sockaddr *own = &lst->pub.route.addr.src_addr;

	/* As the kernel: an IPv4 wildcard takes IPv4 only; an IPv6 one
	 * takes both unless AFONLY. */
	if (lst->bound_any)
		return own->sa_family == dst->sa_family ||
		       (own->sa_family == AF_INET6 && !lst->afonly);
	if (own->sa_family != dst->sa_family)
		return false;
	if (own->sa_family == AF_INET)
		return ((const struct sockaddr_in *)own)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)dst)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)own)->sin6_addr,
		       &((const struct sockaddr_in6 *)dst)->sin6_addr, 16);
}

/* What a REQ or REP announces of the QP: the id's, else the parameters'
 * (an id without a QP), and a random starting PSN. */
static void rc_qp_terms(const struct rc_id *id, const struct rdma_conn_param *p,
			uint32_t *qpn, uint8_t *srq, uint32_t *psn)
{
	*qpn = id->pub.qp ? id->pub.qp->qp_num : p ? p->qp_num : 0;
	*srq = id->pub.qp ? !!id->pub.qp->srq : p ? p->srq : 0;
	if (getrandom(psn, sizeof(*psn), 0) != sizeof(*psn))
		*psn = (uint32_t)rand();
	*psn &= 0xffffff;
}

/* A request's ends: the resolved destination GID, from the local GID's
 * port. */
static void rc_ends(const struct rc_id *id, struct cmc_addr *dst,
		    struct cmc_port_sel *src)
{
	dst->family = CMC_AF_GID;
	memcpy(dst->addr, id->pub.route.addr.addr.ibaddr.dgid.raw, 16);
	src->kind = CMC_SEL_GID;
	memcpy(src->gid, id->pub.route.addr.addr.ibaddr.sgid.raw, 16);
}

static void rc_take_depths(struct rc_id *id, const struct rdma_conn_param *p)
{
	uint8_t max_i = id->dev ? id->dev->max_init_depth : 0xff;
	uint8_t max_r = id->dev ? id->dev->max_resp_res : 0xff;

	if (!p || p->initiator_depth == RDMA_MAX_INIT_DEPTH)
		id->init_depth =
			id->init_depth < max_i ? id->init_depth : max_i;
	else
		id->init_depth = p->initiator_depth;
	if (!p || p->responder_resources == RDMA_MAX_RESP_RES)
		id->resp_res = id->resp_res < max_r ? id->resp_res : max_r;
	else
		id->resp_res = p->responder_resources;
}

/* librdmacm's check of a connect/accept's parameters (TCP port space:
 * a QP or a parameter block; depths within the device's). */
static int rc_valid_param(const struct rc_id *id,
			  const struct rdma_conn_param *p)
{
	if (id->pub.ps != RDMA_PS_TCP)
		return 0;
	if (!id->pub.qp && !p)
		return -EINVAL;
	if (!p || !id->dev)
		return 0;
	if (p->responder_resources != RDMA_MAX_RESP_RES &&
	    p->responder_resources > id->dev->max_resp_res)
		return -EINVAL;
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    p->initiator_depth > id->dev->max_init_depth)
		return -EINVAL;
	return 0;
}

static int rc_accept(struct rc_id *id, const struct rc_args *args)
{
	const struct rdma_conn_param *p = args->param;
	struct cmc_accept_param a = { 0 };
	int r;

	if (id->kid)
		return rc_kern_op(id, RC_KOP_ACCEPT, (void *)p, NULL, 0);
	if (!id->server || id->st != RC_CONNECT || !id->cid)
		return -EINVAL;
	if (id->pub.qp_type == IBV_QPT_UD) {
		uint32_t qpn = id->pub.qp ? id->pub.qp->qp_num :
			       p	  ? p->qp_num :
					    0;

		r = cmc_sidr_rep(id->cid, 0, qpn, id->qkey,
				 p ? p->private_data : NULL,
				 p ? p->private_data_len : 0);
		if (r == 0)
			id->st = RC_ESTABLISHED;
		return r;
	}
	r = rc_valid_param(id, p);
	if (r)
		return r;
	if (p && p->private_data_len > CMC_REP_PRIVATE_DATA_SIZE)
		return -EINVAL;
	rc_take_depths(id, p);
	if (id->pub.qp) {
		r = rc_qp_move(id, IBV_QPS_RTR, id->resp_res);
		if (r)
			return r;
	}
	rc_qp_terms(id, p, &a.qp_num, &a.srq, &a.start_psn);
	a.responder_resources = id->resp_res;
	a.initiator_depth = id->init_depth;
	a.rnr_retry_count = p ? p->rnr_retry_count : 7;
	a.flow_control = p ? p->flow_control : 1;
	a.target_ack_delay = 0;
	a.failover = 1; /* not supported, as the kernel's rdma_cm */
	if (p) {
		a.private_data = p->private_data;
		a.private_data_len = p->private_data_len;
	}
	r = cmc_accept(id->cid, &a);
	if (r)
		return r;
	if (id->pub.qp) {
		r = rc_qp_move(id, IBV_QPS_RTS, id->init_depth);
		if (r) {
			rc_qp_err(id);
			return r;
		}
	}
	return 0;
}

RC_EXPORT int rdma_accept(struct rdma_cm_id *pub,
			  struct rdma_conn_param *conn_param)
{
	struct rc_args a = { .param = conn_param };
	struct rc_id *id;
	int r;

	id = rc_call(pub, "rdma_accept", rc_accept, &a, &r);
	if (id && !r && id->pub.qp_type == IBV_QPT_UD) {
		/* A SIDR REP has no event to wait for. */
		if (id->sync && id->pub.event) {
			rdma_ack_cm_event(id->pub.event);
			id->pub.event = NULL;
		}
		return 0;
	}
	return rc_call_ret(id, r, true);
}

static int rc_reject(struct rc_id *id, const struct rc_args *a)
{
	const void *pd = a->pd;
	uint8_t len = a->len;
	unsigned int reason = a->reason;

	if (id->kid)
		return rc_kern_op(
			id, reason == 35 ? RC_KOP_REJECT_ECE : RC_KOP_REJECT,
			(void *)pd, NULL, len);
	if (!id->cid || (id->st != RC_CONNECT && !(id->st == RC_ESTABLISHED &&
						   !id->pub.qp && !id->server)))
		return -EINVAL;
	if (id->pub.qp_type == IBV_QPT_UD)
		/* IBTA Table 121: 2, rejected by the service provider. */
		return cmc_sidr_rep(id->cid, 2, 0, 0, pd, len);
	if (len > CMC_REJ_PRIVATE_DATA_SIZE)
		return -EINVAL;
	id->st = RC_ERROR;
	return cmc_reject(id->cid, reason, NULL, 0, pd, len);
}

static int rc_reject_call(struct rdma_cm_id *pub, const void *pd, uint8_t len,
			  unsigned int reason, const char *call)
{
	struct rc_args a = { .pd = pd, .len = len, .reason = reason };
	struct rc_id *id;
	int r;

	id = rc_call(pub, call, rc_reject, &a, &r);
	return rc_call_ret(id, r, false);
}

RC_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			  uint8_t private_data_len)
{
	/* The kernel's rdma_cm sends IBTA reason 28, consumer reject. */
	return rc_reject_call(id, private_data, private_data_len, 28,
			      "rdma_reject");
}

RC_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	/* IBTA reason 35: vendor option not supported. */
	return rc_reject_call(id, private_data, private_data_len, 35,
			      "rdma_reject_ece");
}

RC_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
			       struct rdma_cm_id **out)
{
	struct rc_id *lst;
	struct rdma_cm_event *ev;
	int r;

	RC_LOCK();
	lst = rc_id_live(listen, "rdma_get_request");
	RC_UNLOCK();
	if (!lst)
		return -1;
	if (!lst->sync || !out)
		return rc_err(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev))
		return -1;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		r = ECONNREFUSED;
	else if (ev->status)
		r = ev->status < 0 ? -ev->status : ev->status;
	else if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		r = EINVAL;
	else
		r = 0;
	if (!r && lst->ep_qp_attr) {
		struct ibv_qp_init_attr attr = *lst->ep_qp_attr;

		if (rdma_create_qp(ev->id, listen->pd, &attr))
			r = errno;
	}
	if (r) {
		listen->event = ev;
		return rc_err(r);
	}
	*out = ev->id;
	ev->id->event = ev;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Active side */

static int rc_connect(struct rc_id *id, const struct rc_args *args)
{
	const struct rdma_conn_param *p = args->param;
	uint8_t pd[CMC_SIDR_REQ_PRIVATE_DATA_SIZE];
	enum rdmacm_ps ps = (enum rdmacm_ps)id->pub.ps;
	uint64_t sid;
	size_t max;
	int r;

	if (id->kid)
		return rc_kern_op(id, RC_KOP_CONNECT, (void *)p, NULL, 0);
	if (id->st != RC_ROUTE_RESOLVED)
		return -EINVAL;
	r = rc_valid_param(id, p);
	if (r)
		return r;
	max = id->pub.qp_type == IBV_QPT_UD ? CMC_SIDR_REQ_PRIVATE_DATA_SIZE :
					      CMC_REQ_PRIVATE_DATA_SIZE;
	if (p && p->private_data_len > max - RDMACM_HDR_SIZE)
		return -EINVAL;
	r = rdmacm_hdr_encode(pd, &id->pub.route.addr.src_addr,
			      &id->pub.route.addr.dst_addr);
	if (r)
		return r;
	if (p && p->private_data_len)
		memcpy(pd + RDMACM_HDR_SIZE, p->private_data,
		       p->private_data_len);
	sid = rdmacm_service_id(ps, ntohs(rdma_get_dst_port(&id->pub)));
	r = rc_need_cid(id);
	if (r)
		return r;
	if (id->pub.qp_type == IBV_QPT_UD) {
		struct cmc_sidr_param s = { 0 };

		s.service_id = sid;
		rc_ends(id, &s.dst, &s.src);
		s.cm_response_timeout = RC_CM_RESPONSE_TIMEOUT;
		s.max_cm_retries = RC_MAX_CM_RETRIES;
		s.private_data = pd;
		s.private_data_len = (uint8_t)(RDMACM_HDR_SIZE +
					       (p ? p->private_data_len : 0));
		r = cmc_sidr_req(id->cid, &s);
	} else {
		struct cmc_conn_param c = { 0 };

		rc_take_depths(id, p);
		c.service_id = sid;
		rc_ends(id, &c.dst, &c.src);
		rc_qp_terms(id, p, &c.qp_num, &c.srq, &c.start_psn);
		c.responder_resources = id->resp_res;
		c.initiator_depth = id->init_depth;
		c.flow_control = p ? p->flow_control : 1;
		c.retry_count = p ? p->retry_count : 7;
		c.rnr_retry_count = p ? p->rnr_retry_count : 7;
		c.max_cm_retries = RC_MAX_CM_RETRIES;
		c.local_cm_response_timeout = RC_CM_RESPONSE_TIMEOUT;
		c.remote_cm_response_timeout = RC_CM_RESPONSE_TIMEOUT;
		c.private_data = pd;
		c.private_data_len = (uint8_t)(RDMACM_HDR_SIZE +
					       (p ? p->private_data_len : 0));
		if (id->ib_path) {
			/* The application's path record, as the REQ's. */
			const struct ibv_sa_path_rec *ip = &id->path;

			c.path.flags |=
				CMC_PATH_MTU | CMC_PATH_PKEY | CMC_PATH_SL |
				CMC_PATH_HOP_LIMIT | CMC_PATH_FLOW_LABEL |
				CMC_PATH_TRAFFIC_CLASS | CMC_PATH_PACKET_RATE;
			c.path.mtu = ip->mtu;
			c.path.pkey = ntohs(ip->pkey);
			c.path.sl = ip->sl;
			c.path.hop_limit = ip->hop_limit;
			c.path.flow_label = ntohl(ip->flow_label);
			c.path.traffic_class = ip->traffic_class;
			c.path.packet_rate = ip->rate;
			memcpy(c.dst.addr, ip->dgid.raw, 16);
			/* Its packet life time makes the REQ's local ACK
			 * timeout, as in the kernel's CM (the CA's ACK delay
			 * taken as 0, as for the daemon's own SA paths);
			 * rdma_set_option's ACK timeout below still wins. */
			c.path.flags |= CMC_PATH_LOCAL_ACK_TIMEOUT;
			c.path.local_ack_timeout =
				cm_ack_timeout(0, ip->packet_life_time & 0x3f);
		}
		if (id->tos_set) {
			c.path.flags |= CMC_PATH_TRAFFIC_CLASS;
			c.path.traffic_class = id->tos;
		}
		if (id->ack_timeout_set) {
			c.path.flags |= CMC_PATH_LOCAL_ACK_TIMEOUT;
			c.path.local_ack_timeout = id->ack_timeout;
		}
		r = cmc_connect(id->cid, &c);
	}
	if (r == 0)
		id->st = RC_CONNECT;
	return r;
}

RC_EXPORT int rdma_connect(struct rdma_cm_id *pub,
			   struct rdma_conn_param *conn_param)
{
	struct rc_args a = { .param = conn_param };
	struct rc_id *id;
	int r;

	id = rc_call(pub, "rdma_connect", rc_connect, &a, &r);
	return rc_call_ret(id, r, true);
}

static int rc_establish(struct rc_id *id, const struct rc_args *a)
{
	int r;

	(void)a;
	if (id->kid)
		return rc_kern_op(id, RC_KOP_ESTABLISH, NULL, NULL, 0);
	if (id->pub.qp || id->server || !id->cid || !id->has_route ||
	    id->st != RC_CONNECT)
		return -EINVAL;
	r = cmc_rtu(id->cid, NULL, 0);
	if (r == 0)
		id->st = RC_ESTABLISHED;
	return r;
}

RC_EXPORT int rdma_establish(struct rdma_cm_id *pub)
{
	struct rc_id *id;
	int r;

	id = rc_call(pub, "rdma_establish", rc_establish, NULL, &r);
	return rc_call_ret(id, r, false);
}

/* ------------------------------------------------------------------ */
/* Both sides */

static int rc_notify(struct rc_id *id, const struct rc_args *a)
{
	if (id->kid)
		return rc_kern_op(id, RC_KOP_NOTIFY, NULL, NULL, (size_t)a->n);
	if (a->n == IBV_EVENT_PATH_MIG)
		return 0; /* no alternate path to migrate to */
	if (a->n != IBV_EVENT_COMM_EST || !id->cid || id->st != RC_CONNECT ||
	    !id->server)
		return -EINVAL;
	return cmc_notify_established(id->cid);
}

RC_EXPORT int rdma_notify(struct rdma_cm_id *pub, enum ibv_event_type event)
{
	struct rc_args a = { .n = (int)event };
	struct rc_id *id;
	int r;

	id = rc_call(pub, "rdma_notify", rc_notify, &a, &r);
	return rc_call_ret(id, r, false);
}

static int rc_disconnect(struct rc_id *id, const struct rc_args *a)
{
	(void)a;
	if (id->kid)
		return rc_kern_op(id, RC_KOP_DISCONNECT, NULL, NULL, 0);
	/* librdmacm moves the QP to ERR first (flushing its work requests),
	 * then disconnects. */
	rc_qp_err(id);
	if (!id->cid || (id->st != RC_ESTABLISHED && id->st != RC_CONNECT &&
			 id->st != RC_DISCONNECT))
		return -EINVAL;
	return cmc_disconnect(id->cid, NULL, 0);
}

RC_EXPORT int rdma_disconnect(struct rdma_cm_id *pub)
{
	struct rc_id *id;
	int r;

	/* As librdmacm: a synchronous id waits for its next event
	 * (DISCONNECTED, or TIMEWAIT_EXIT after one). */
	id = rc_call(pub, "rdma_disconnect", rc_disconnect, NULL, &r);
	return rc_call_ret(id, r, true);
}

/* ------------------------------------------------------------------ */
/* Options and channels */

/* An SA PathRecord as RDMA_OPTION_IB_PATH gives it (wire order) in
 * libibverbs' host form. */
static void rc_path_from_record(struct ibv_sa_path_rec *p,
				const struct ibv_path_record *w)
{
	uint32_t fh = ntohl(w->flowlabel_hoplimit);

	memset(p, 0, sizeof(*p));
	p->dgid = w->dgid;
	p->sgid = w->sgid;
	p->dlid = w->dlid;
	p->slid = w->slid;
	p->flow_label = htonl((fh >> 8) & 0xfffff);
	p->hop_limit = (uint8_t)fh;
	p->traffic_class = w->tclass;
	p->reversible = w->reversible_numpath >> 7;
	p->numb_path = w->reversible_numpath & 0x7f;
	p->pkey = w->pkey;
	p->sl = (uint8_t)(ntohs(w->qosclass_sl) & 0xf);
	p->mtu_selector = w->mtu >> 6;
	p->mtu = w->mtu & 0x3f;
	p->rate_selector = w->rate >> 6;
	p->rate = w->rate & 0x3f;
	p->packet_life_time_selector = w->packetlifetime >> 6;
	p->packet_life_time = w->packetlifetime & 0x3f;
	p->preference = w->preference;
}

static int rc_set_option(struct rc_id *id, int level, int name, const void *val,
			 size_t len)
{
	if (!val)
		return -EINVAL;
	if (id->kid) {
		int lv[2] = { level, name };

		return rc_kern_op(id, RC_KOP_SET_OPTION, (void *)val, lv, len);
	}
	if (level == RDMA_OPTION_ID) {
		switch (name) {
		case RDMA_OPTION_ID_TOS:
			if (len != sizeof(uint8_t))
				return -EINVAL;
			id->tos = *(const uint8_t *)val;
			id->tos_set = true;
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
			if (len != sizeof(int))
				return -EINVAL;
			if (id->st != RC_IDLE)
				return -EINVAL;
			id->reuseaddr = *(const int *)val != 0;
			return 0;
		case RDMA_OPTION_ID_AFONLY:
			if (len != sizeof(int))
				return -EINVAL;
			if (id->st != RC_IDLE && id->st != RC_ADDR_BOUND)
				return -EINVAL;
			id->afonly = *(const int *)val != 0;
			id->afonly_set = true;
			return 0;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			if (len != sizeof(uint8_t) ||
			    id->pub.qp_type != IBV_QPT_RC)
				return -EINVAL;
			id->ack_timeout = *(const uint8_t *)val;
			id->ack_timeout_set = true;
			return 0;
		}
		return -ENOSYS;
	}
	if (level == RDMA_OPTION_IB && name == RDMA_OPTION_IB_PATH) {
		const struct ibv_path_data *pd = val;

		if (!len || len % sizeof(*pd) || id->st != RC_ADDR_RESOLVED)
			return -EINVAL;
		rc_path_from_record(&id->path, &pd->path);
		id->ib_path = true;
		id->pub.route.path_rec = &id->path;
		id->pub.route.num_paths = 1;
		id->st = RC_ROUTE_RESOLVED;
		/* As the kernel: setting the path resolves the route. */
		return rc_local_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	}
	return -ENOSYS;
}

RC_EXPORT int rdma_set_option(struct rdma_cm_id *pub, int level, int optname,
			      void *optval, size_t optlen)
{
	struct rc_id *id;
	int r;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_set_option");
	r = id ? rc_set_option(id, level, optname, optval, optlen) : 0;
	RC_UNLOCK();
	return id ? rc_cmc(r) : -1;
}

static void rc_id_move(struct rc_id *id, struct rc_chan *to)
{
	id->ch->ids--;
	to->ids++;
	id->ch = to;
	id->pub.channel = &to->pub;
}

RC_EXPORT int rdma_migrate_id(struct rdma_cm_id *pub,
			      struct rdma_event_channel *channel)
{
	struct rc_chan *to = (struct rc_chan *)channel, *from;
	struct rc_ev **pp;
	struct rc_id *id;

	RC_LOCK();
	id = rc_id_live(pub, "rdma_migrate_id");
	if (!id || (id->sync && !to)) {
		RC_UNLOCK();
		return id ? rc_err(EINVAL) : -1;
	}
	if (to == id->ch) {
		/* Nothing to move (the loop below would never end). */
		RC_UNLOCK();
		return 0;
	}
	if (!to)
		to = rc_chan_new(true);
	if (!to) {
		RC_UNLOCK();
		return rc_err(ENOMEM);
	}
	from = id->ch;
	/* A listener's queued CONNECT_REQUESTs go with it, and their new
	 * ids on its channel too: librdmacm makes a request's id on the
	 * listener's channel when it delivers the request. */
	for (struct rc_ev *ev = from->head; ev; ev = ev->next)
		if (ev->listen == id && ev->id->ch == from)
			rc_id_move(ev->id, to);
	rc_id_move(id, to);
	/* The undelivered events of the ids moved go with them, in order. */
	for (pp = &from->head; *pp;) {
		struct rc_ev *ev = *pp;

		if (ev->id->ch != to && ev->listen != id) {
			pp = &ev->next;
			continue;
		}
		*pp = ev->next;
		from->queued--;
		ev->next = NULL;
		rc_ev_queue(ev);
	}
	rc_ev_drop_id(from, NULL); /* re-link the tail, fix the fd */
	if (id->sync) {
		rc_sync_event_drop(id);
		if (!from->ids)
			rc_chan_free(from);
	}
	id->sync = to->sync;
	if (id->kid && rc_kern_op(id, RC_KOP_MIGRATE, to, NULL, 0))
		rc_log(1,
		       "rdma_migrate_id: the kernel's id stayed on its "
		       "channel: %s",
		       cmc_strerror(-errno));
	RC_UNLOCK();
	return 0;
}

RC_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(rc_port_of(&id->route.addr.src_addr));
}

RC_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(rc_port_of(&id->route.addr.dst_addr));
}

/* ------------------------------------------------------------------ */
/* Endpoints: rdma_create_ep(3) */

RC_EXPORT int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res,
			     struct ibv_pd *pd,
			     struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *pub;
	struct rc_id *id;

	if (!out || !res)
		return rc_err(EINVAL);
	if (rc_create(NULL, &pub, NULL,
		      (enum rdma_port_space)res->ai_port_space,
		      (enum ibv_qp_type)res->ai_qp_type))
		return -1;
	id = rc_id_of(pub);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(pub, res->ai_src_addr))
			goto err;
		if (pd)
			pub->pd = pd;
		if (qp_init_attr) {
			id->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (!id->ep_qp_attr) {
				errno = ENOMEM;
				goto err;
			}
			*id->ep_qp_attr = *qp_init_attr;
			id->ep_qp_attr->qp_type =
				(enum ibv_qp_type)res->ai_qp_type;
		}
		*out = pub;
		return 0;
	}
	if (rdma_resolve_addr(pub, res->ai_src_addr, res->ai_dst_addr, 2000))
		goto err;
	if (res->ai_route_len) {
		if (rdma_set_option(pub, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    res->ai_route, res->ai_route_len) ||
		    rc_complete(id))
			goto err;
	} else if (rdma_resolve_route(pub, 2000)) {
		goto err;
	}
	if (qp_init_attr) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		if (rdma_create_qp(pub, pd, qp_init_attr))
			goto err;
	}
	*out = pub;
	return 0;
err : {
	int e = errno;

	rdma_destroy_ep(pub);
	errno = e;
	return -1;
}
}

RC_EXPORT void rdma_destroy_ep(struct rdma_cm_id *pub)
{
	bool live;

	/* Nothing may be read through a destroyed id. */
	RC_LOCK();
	live = rc_id_live(pub, "rdma_destroy_ep") != NULL;
	RC_UNLOCK();
	if (!live)
		return;
	if (pub->qp)
		rdma_destroy_qp(pub);
	if (pub->srq)
		rdma_destroy_srq(pub);
	rdma_destroy_id(pub);
}
