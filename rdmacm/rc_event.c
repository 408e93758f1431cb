// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: the daemon's events as rdma_cm reports them.
 *
 * The reader thread calls rc_on_daemon_event() for each libcmclient event
 * (under rc.mu) and acks it to the daemon right after: the application's
 * rdma_ack_cm_event() only frees our copy, as with the kernel, where
 * events of one id never wait for the previous one's ack.
 *
 * The table below is the whole mapping, one row per daemon event: what
 * rdma_cm event it becomes (or none), and the function that fills it and
 * does what librdmacm does on the way (QP transitions, the RTU).
 */
#include "rc_int.h"

#include <stdlib.h>
#include <string.h>

#include "rdmacm.h"

static void rc_fail_to(struct rc_id *id, enum rc_state st)
{
	rc_qp_err(id);
	id->st = st;
}

/* ------------------------------------------------------------------ */
/* One function per daemon event; each returns the event to queue or
 * NULL (nothing for the application). */

typedef struct rc_ev *rc_ev_fn(struct rc_id *id, const struct cmc_event *e);

/* REQ_RECEIVED / SIDR_REQ_RECEIVED: a new id under the listener. The
 * private data is what the kernel's rdma_cm reports, here and for every
 * event: the message's whole area (the wire does not say how much the peer
 * meant), less the CMA header for requests. */
static struct rc_ev *rc_on_req(struct rc_id *lst, const struct cmc_event *e)
{
	bool ud = e->type == CMC_EVENT_SIDR_REQ_RECEIVED;
	const uint8_t *pd =
		ud ? e->u.sidr_req.private_data : e->u.req.private_data;
	size_t len =
		ud ? CMC_SIDR_REQ_PRIVATE_DATA_SIZE : CMC_REQ_PRIVATE_DATA_SIZE;
	uint64_t sid = ud ? e->u.sidr_req.service_id : e->u.req.service_id;
	const struct cmc_path *path = ud ? &e->u.sidr_req.path : &e->u.req.path;
	struct rdmacm_hdr hdr;
	struct rc_id *id;
	struct rc_ev *ev;

	if (lst->destroyed || lst->st != RC_LISTEN) {
		rc_id_reject_new(e->id, 8, ud);
		return NULL;
	}
	if (rdmacm_hdr_decode(pd, len, sid, &hdr)) {
		rc_log(1,
		       "a %s to service id 0x%016llx carries no rdma_cm "
		       "address header: rejected (REJ 28)",
		       ud ? "SIDR REQ" : "REQ", (unsigned long long)sid);
		rc_id_reject_new(e->id, 28, ud);
		return NULL;
	}
	if (!rc_listener_takes(lst, (const struct sockaddr *)&hdr.dst)) {
		/* Bound to another address than the REQ names: nobody
		 * listens there (REJ 8, as the kernel's CM would). */
		rc_id_reject_new(e->id, 8, ud);
		return NULL;
	}
	id = rc_id_new(lst->ch, lst->pub.context, lst->pub.ps,
		       lst->pub.qp_type);
	if (!id) {
		rc_id_reject_new(e->id, 28, ud);
		return NULL;
	}
	if (lst->sync) {
		/* As librdmacm: a synchronous listener's requests get their
		 * own private channels (rdma_get_request's ids). */
		struct rc_chan *c = rc_chan_new(true);

		if (c) {
			id->ch->ids--;
			id->ch = c;
			c->ids++;
			id->sync = true;
			id->pub.channel = &c->pub;
		}
	}
	id->cid = e->id;
	id->server = true;
	id->st = RC_CONNECT;
	cmc_set_context(e->id, id);
	memcpy(&id->pub.route.addr.src_storage, &hdr.dst, sizeof(hdr.dst));
	memcpy(&id->pub.route.addr.dst_storage, &hdr.src, sizeof(hdr.src));
	rc_id_set_path(id, path);
	ev = rc_ev_new(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (!ev) {
		rc_id_destroy_child(id);
		return NULL;
	}
	rc_ev_set_listener(ev, lst);
	rc_ev_set_pd(ev, pd + RDMACM_HDR_SIZE, len - RDMACM_HDR_SIZE, ud);
	if (ud)
		return ev;
	/* The kernel's ib_cm reports the requester's values from the
	 * receiver's side: its initiator depth bounds our responder
	 * resources and the other way round. */
	ev->pub.param.conn.responder_resources = e->u.req.initiator_depth;
	ev->pub.param.conn.initiator_depth = e->u.req.responder_resources;
	ev->pub.param.conn.flow_control = e->u.req.flow_control;
	ev->pub.param.conn.retry_count = e->u.req.retry_count;
	ev->pub.param.conn.rnr_retry_count = e->u.req.rnr_retry_count;
	ev->pub.param.conn.srq = e->u.req.srq;
	ev->pub.param.conn.qp_num = e->u.req.remote_qpn;
	id->remote_qpn = e->u.req.remote_qpn;
	id->resp_res = e->u.req.initiator_depth;
	id->init_depth = e->u.req.responder_resources;
	return ev;
}

/* REP_RECEIVED: with a QP, librdmacm moves it to RTR and RTS, sends the
 * RTU and reports ESTABLISHED; without one, CONNECT_RESPONSE (the app
 * calls rdma_establish()). */
static struct rc_ev *rc_on_rep(struct rc_id *id, const struct cmc_event *e)
{
	const struct cmc_ev_rep *rep = &e->u.rep;
	struct rc_ev *ev;
	int status = 0;

	rc_id_set_path(id, &rep->path);
	id->remote_qpn = rep->remote_qpn;
	if (id->pub.qp) {
		status = rc_qp_move(id, IBV_QPS_RTR, 0);
		if (!status)
			status = rc_qp_move(id, IBV_QPS_RTS, 0);
		if (!status)
			status = cmc_rtu(id->cid, NULL, 0);
		if (status) {
			rc_log(1,
			       "connection on service port %u: moving the "
			       "QP to RTS or sending the RTU failed: %s",
			       ntohs(rdma_get_dst_port(&id->pub)),
			       cmc_strerror(status));
			cmc_reject(id->cid, 28, NULL, 0, NULL, 0);
			id->connect_error = true;
			rc_fail_to(id, RC_ERROR);
		} else
			id->st = RC_ESTABLISHED;
	}
	ev = rc_ev_new(id,
		       !id->pub.qp ? RDMA_CM_EVENT_CONNECT_RESPONSE :
		       status	   ? RDMA_CM_EVENT_CONNECT_ERROR :
				     RDMA_CM_EVENT_ESTABLISHED,
		       status);
	if (!ev)
		return NULL;
	rc_ev_set_pd(ev, rep->private_data, CMC_REP_PRIVATE_DATA_SIZE, false);
	ev->pub.param.conn.responder_resources = rep->initiator_depth;
	ev->pub.param.conn.initiator_depth = rep->responder_resources;
	ev->pub.param.conn.flow_control = rep->flow_control;
	ev->pub.param.conn.rnr_retry_count = rep->rnr_retry_count;
	ev->pub.param.conn.srq = rep->srq;
	ev->pub.param.conn.qp_num = rep->remote_qpn;
	return ev;
}

static struct rc_ev *rc_on_established(struct rc_id *id,
				       const struct cmc_event *e)
{
	(void)e;
	id->st = RC_ESTABLISHED;
	return rc_ev_new(id, RDMA_CM_EVENT_ESTABLISHED, 0);
}

static struct rc_ev *rc_on_rej(struct rc_id *id, const struct cmc_event *e)
{
	struct rc_ev *ev;

	if (id->connect_error)
		return NULL;
	rc_fail_to(id, RC_ERROR);
	/* rdma_cm reports the IBTA REJ reason as the status. */
	ev = rc_ev_new(id, RDMA_CM_EVENT_REJECTED, e->u.rej.reason);
	if (ev)
		rc_ev_set_pd(ev, e->u.rej.private_data,
			     CMC_REJ_PRIVATE_DATA_SIZE,
			     id->pub.qp_type == IBV_QPT_UD);
	return ev;
}

/* No answer to our REQ or REP (or SIDR REQ): UNREACHABLE, -ETIMEDOUT,
 * as rdma_cm says it; other failures (the port went down, the peer's
 * neighbour entry could not be resolved) keep their status. */
static struct rc_ev *rc_on_connect_error(struct rc_id *id,
					 const struct cmc_event *e)
{
	uint8_t msg = e->u.connect_error.msg;
	bool unreach = msg == CMC_CM_MSG_REQ || msg == CMC_CM_MSG_REP ||
		       msg == CMC_CM_MSG_SIDR_REQ || e->status == -EHOSTUNREACH;

	if (id->connect_error)
		return NULL;
	rc_fail_to(id, RC_ERROR);
	return rc_ev_new(id,
			 unreach ? RDMA_CM_EVENT_UNREACHABLE :
				   RDMA_CM_EVENT_CONNECT_ERROR,
			 e->status ? e->status : -ETIMEDOUT);
}

/* DREQ in, DREP in, or our DREQ unanswered: DISCONNECTED, once. */
static struct rc_ev *rc_on_disconnect(struct rc_id *id,
				      const struct cmc_event *e)
{
	if (id->connect_error || id->st == RC_DISCONNECT)
		return NULL;
	id->st = RC_DISCONNECT;
	return rc_ev_new(id, RDMA_CM_EVENT_DISCONNECTED,
			 e->type == CMC_EVENT_DISCONNECT_TIMEOUT ? -ETIMEDOUT :
								   0);
}

static struct rc_ev *rc_on_timewait_exit(struct rc_id *id,
					 const struct cmc_event *e)
{
	(void)e;
	return rc_ev_new(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}

static struct rc_ev *rc_on_sidr_rep(struct rc_id *id, const struct cmc_event *e)
{
	const struct cmc_ev_sidr_rep *rep = &e->u.sidr_rep;
	struct rc_ev *ev;
	bool ok = rep->status == 0;

	if (ok && id->pub.ps == RDMA_PS_UDP && rep->qkey != RDMA_UDP_QKEY) {
		rc_log(1, "SIDR REP with Q_Key 0x%x, not RDMA_UDP_QKEY",
		       rep->qkey);
		ok = false;
	}
	id->st = ok ? RC_ESTABLISHED : RC_ERROR;
	ev = rc_ev_new(
		id, ok ? RDMA_CM_EVENT_ESTABLISHED : RDMA_CM_EVENT_UNREACHABLE,
		ok	    ? 0 :
		rep->status ? rep->status :
			      -EINVAL);
	if (!ev)
		return NULL;
	rc_ev_set_pd(ev, rep->private_data, CMC_SIDR_REP_PRIVATE_DATA_SIZE,
		     true);
	if (ok) {
		rc_id_set_path(id, &rep->path);
		rc_ud_ah(id, &rep->path, &ev->pub.param.ud.ah_attr);
		ev->pub.param.ud.qp_num = rep->qpn;
		ev->pub.param.ud.qkey = rep->qkey;
	}
	return ev;
}

/* RESOLVE_ROUTE's answer on an IB port (rc_resolve_route_sa): the SA's
 * path becomes the route, and rdma_connect() passes it whole. */
static struct rc_ev *rc_on_route(struct rc_id *id, const struct cmc_event *e)
{
	if (e->status) {
		rc_log(2, "rdma_resolve_route: %s", cmc_strerror(e->status));
		return rc_ev_new(id, RDMA_CM_EVENT_ROUTE_ERROR, e->status);
	}
	rc_id_set_path(id, &e->u.route.path);
	id->ib_path = true;
	id->st = RC_ROUTE_RESOLVED;
	return rc_ev_new(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

static struct rc_ev *rc_on_device_removal(struct rc_id *id,
					  const struct cmc_event *e)
{
	(void)e;
	id->st = RC_REMOVED;
	return rc_ev_new(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
}

/* A request queued in asynchronous mode failed in the daemon. */
static struct rc_ev *rc_on_request_error(struct rc_id *id,
					 const struct cmc_event *e)
{
	switch (e->u.request_error.request) {
	case CMC_REQ_CONNECT:
		rc_fail_to(id, RC_ERROR);
		return rc_ev_new(id,
				 e->status == -EHOSTUNREACH ||
						 e->status == -ENETUNREACH ?
					 RDMA_CM_EVENT_UNREACHABLE :
					 RDMA_CM_EVENT_CONNECT_ERROR,
				 e->status);
	case CMC_REQ_ACCEPT:
	case CMC_REQ_RTU:
		rc_fail_to(id, RC_ERROR);
		id->connect_error = true;
		return rc_ev_new(id, RDMA_CM_EVENT_CONNECT_ERROR, e->status);
	default:
		rc_log(2, "the daemon refused request %u: %s",
		       e->u.request_error.request, cmc_strerror(e->status));
		return NULL;
	}
}

static struct rc_ev *rc_on_ignored(struct rc_id *id, const struct cmc_event *e)
{
	(void)id;
	rc_log(2, "%s: not an rdma_cm event, nothing reported",
	       cmc_event_str(e->type));
	return NULL;
}

/* The mapping, one row per daemon event. */
static rc_ev_fn *const rc_map[] = {
	[CMC_EVENT_REQ_RECEIVED] = rc_on_req,
	[CMC_EVENT_REP_RECEIVED] = rc_on_rep,
	[CMC_EVENT_ESTABLISHED] = rc_on_established,
	[CMC_EVENT_REJ_RECEIVED] = rc_on_rej,
	[CMC_EVENT_CONNECT_ERROR] = rc_on_connect_error,
	[CMC_EVENT_MRA_RECEIVED] = rc_on_ignored, /* rdma_cm ignores it */
	[CMC_EVENT_DREQ_RECEIVED] = rc_on_disconnect,
	[CMC_EVENT_DREP_RECEIVED] = rc_on_disconnect,
	[CMC_EVENT_DISCONNECT_TIMEOUT] = rc_on_disconnect,
	[CMC_EVENT_TIMEWAIT_EXIT] = rc_on_timewait_exit,
	[CMC_EVENT_LAP_RECEIVED] = rc_on_ignored, /* rdma_cm has no LAP */
	[CMC_EVENT_APR_RECEIVED] = rc_on_ignored,
	[CMC_EVENT_SIDR_REQ_RECEIVED] = rc_on_req,
	[CMC_EVENT_SIDR_REP_RECEIVED] = rc_on_sidr_rep,
	[CMC_EVENT_PORT_ERROR] = rc_on_ignored,
	[CMC_EVENT_DEVICE_REMOVAL] = rc_on_device_removal,
	[CMC_EVENT_ROUTE_RESOLVED] = rc_on_route,
	[CMC_EVENT_REQUEST_ERROR] = rc_on_request_error,
};

void rc_on_daemon_event(const struct cmc_event *e)
{
	bool req = e->type == CMC_EVENT_REQ_RECEIVED ||
		   e->type == CMC_EVENT_SIDR_REQ_RECEIVED;
	struct rc_id *id = e->context;
	rc_ev_fn *fn = NULL;
	struct rc_ev *ev;

	rc_log(3, "daemon event %s context %p status %d",
	       cmc_event_str(e->type), e->context, e->status);
	/* A request whose listener is gone: its context is a stale
	 * pointer, never to be read. */
	if (req && !e->listen_id) {
		rc_id_reject_new(e->id, 8,
				 e->type == CMC_EVENT_SIDR_REQ_RECEIVED);
		return;
	}
	if ((unsigned int)e->type < sizeof(rc_map) / sizeof(rc_map[0]))
		fn = rc_map[e->type];
	if (!fn || !id) {
		rc_log(1, "daemon event %s without an id of ours: dropped",
		       cmc_event_str(e->type));
		if (req)
			rc_id_reject_new(e->id, 8,
					 e->type ==
						 CMC_EVENT_SIDR_REQ_RECEIVED);
		return;
	}
	if (id->destroyed && !req)
		return;
	ev = fn(id, e);
	if (ev)
		rc_ev_queue(ev);
}
