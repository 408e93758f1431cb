// SPDX-License-Identifier: MIT
/*
 * The client API on top of the engine: each request of proto/cmp.h becomes
 * an engine call (the handlers, dispatched from cmp_msgs.def). The engine
 * keeps the protocol state; this file keeps who owns which id and what
 * QUERY_ID reports. Engine events become cmp EVENTs in api_event.c; the
 * operations (LIST, COUNTERS, PORTS, CAPTURE) are in api_ops.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "api.h"
#include "cmd.h"
#include "log.h"
#include "refuse.h"
#include "util.h"

/* Both tables start small and double as ids and clients come. */
#define API_TABLE_INITIAL 16

static uint64_t api_client_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct api_client, hnode)->serial);
}

static bool api_client_eq(const struct hnode *n, const void *serial)
{
	return container_of(n, struct api_client, hnode)->serial ==
	       *(const uint64_t *)serial;
}

static uint64_t api_id_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct api_id, hnode)->id);
}

static bool api_id_eq(const struct hnode *n, const void *id)
{
	return container_of(n, struct api_id, hnode)->id ==
	       *(const uint32_t *)id;
}

/* A path's key is all of its bytes. */
static uint64_t api_path_bytes_hash(const struct cmp_path *p)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0, w;
	size_t i;

	for (i = 0; i + sizeof(w) <= sizeof(*p); i += sizeof(w)) {
		memcpy(&w, b + i, sizeof(w));
		h = hash_u64(h ^ w);
	}
	for (; i < sizeof(*p); i++)
		h = hash_u64(h ^ b[i]);
	return h;
}

static uint64_t api_path_hash(const struct hnode *n)
{
	return api_path_bytes_hash(&container_of(n, struct api_path, hnode)->p);
}

static bool api_path_eq(const struct hnode *n, const void *p)
{
	return !memcmp(&container_of(n, struct api_path, hnode)->p, p,
		       sizeof(struct cmp_path));
}

int api_init(struct cmd *cmd)
{
	if (htable_init(&cmd->ids, API_TABLE_INITIAL, api_id_hash) ||
	    htable_init(&cmd->clients, API_TABLE_INITIAL, api_client_hash) ||
	    htable_init(&cmd->paths, API_TABLE_INITIAL, api_path_hash)) {
		htable_fini(&cmd->ids);
		htable_fini(&cmd->clients);
		return -ENOMEM;
	}
	return 0;
}

void api_fini(struct cmd *cmd)
{
	struct hnode *n, *next;

	HTABLE_FOREACH_SAFE(n, next, &cmd->ids)
		free(container_of(n, struct api_id, hnode));
	htable_fini(&cmd->ids);
	HTABLE_FOREACH_SAFE(n, next, &cmd->clients)
		free(container_of(n, struct api_client, hnode));
	htable_fini(&cmd->clients);
	HTABLE_FOREACH_SAFE(n, next, &cmd->paths)
		free(container_of(n, struct api_path, hnode));
	htable_fini(&cmd->paths);
}

const struct cmp_path *api_id_path(const struct api_id *a)
{
	static const struct cmp_path none;

	return a->path ? &a->path->p : &none;
}

static void api_path_put(struct cmd *cmd, struct api_path *ap)
{
	if (ap && !--ap->refs) {
		htable_remove(&cmd->paths, &ap->hnode);
		free(ap);
	}
}

void api_id_set_path(struct cmd *cmd, struct api_id *a,
		     const struct cmp_path *p)
{
	uint64_t h;
	struct api_path *ap;

	/* Most events tell an id the path it has already. */
	if (a->path && !memcmp(&a->path->p, p, sizeof(*p)))
		return;
	h = api_path_bytes_hash(p);
	ap = htable_entry(htable_find(&cmd->paths, h, api_path_eq, p),
			  struct api_path, hnode);
	if (!ap) {
		ap = malloc(sizeof(*ap));
		if (!ap) {
			log_err("id %u: no memory for its path", a->id);
			return;
		}
		ap->p = *p;
		ap->refs = 0;
		htable_insert(&cmd->paths, &ap->hnode);
	}
	ap->refs++;
	api_path_put(cmd, a->path);
	a->path = ap;
}

struct api_client *api_client_find(struct cmd *cmd, uint64_t serial)
{
	return htable_entry(htable_find(&cmd->clients, hash_u64(serial),
					api_client_eq, &serial),
			    struct api_client, hnode);
}

struct api_id *api_id_find(struct cmd *cmd, uint32_t id)
{
	return htable_entry(
		htable_find(&cmd->ids, hash_u64(id), api_id_eq, &id),
		struct api_id, hnode);
}

struct api_client *api_client_of(struct cmd *cmd, struct srv_client *c)
{
	return api_client_find(cmd, srv_client_serial(c));
}

/* The id, if it exists and belongs to c; a foreign id looks absent. */
static struct api_id *id_of(struct cmd *cmd, struct srv_client *c, uint32_t id)
{
	struct api_id *a = api_id_find(cmd, id);

	return a && a->client == c ? a : NULL;
}

struct api_id *api_id_add(struct cmd *cmd, struct srv_client *c, uint32_t id,
			  uint8_t qp_type)
{
	struct api_client *ac = api_client_of(cmd, c);
	struct api_id *a = calloc(1, sizeof(*a));

	if (!a || !ac || htable_reserve(&cmd->ids)) {
		free(a);
		return NULL;
	}
	/* Per-user accounting (authz.h): every id counts, passive ones too. */
	if (authz_id_add(cmd->cfg.authz, srv_client_uid(c))) {
		free(a);
		return NULL;
	}
	a->id = id;
	htable_insert(&cmd->ids, &a->hnode);
	a->client = c;
	a->qp_type = qp_type;
	LIST_INSERT_HEAD(&ac->ids, a, link);
	ac->nids++;
	return a;
}

/* A CONNECT, SIDR_REQ or RESOLVE_ROUTE waiting for the SA (sa_paths.h):
 * the request and its path as path_resolve() made it, to finish when the
 * answer comes. */
struct api_wait {
	struct cmd *cmd;
	uint32_t id;
	uint64_t handle;
	uint16_t type; /* CMP_TYPE_CONNECT, _RESOLVE_ROUTE or _SIDR_REQ */
	union {
		struct cmp_connect connect;
		struct cmp_resolve_route route;
		struct cmp_sidr_req sidr;
	} req;
	const struct cmp_path_set *set; /* in req, or 'none' */
	struct cmp_path_set none;
	struct path path;
};

static void id_del(struct cmd *cmd, struct api_id *a)
{
	struct api_client *ac = api_client_of(cmd, a->client);

	if (a->wait) {
		sa_paths_cancel(cmd->sa, a->wait->handle);
		free(a->wait);
		a->wait = NULL;
	}

	htable_remove(&cmd->ids, &a->hnode);
	LIST_REMOVE(a, link);
	if (ac)
		ac->nids--;
	authz_id_del(cmd->cfg.authz, srv_client_uid(a->client), a->listener);
	api_path_put(cmd, a->path);
	free(a);
}

/* Both enums come from cm_states.def; this says so to the compiler. */
#define CM_STATE(NAME, value)                                                  \
	_Static_assert((int)ENG_STATE_##NAME == (int)CMP_STATE_##NAME, #NAME);
#define CM_LAP_STATE(NAME, ENG, value, text)                                   \
	_Static_assert((int)ENG_LAP_##ENG == (int)CMP_LAP_STATE_##NAME, #NAME);
#include "cm_states.def"

enum cmp_state api_state_of(struct cmd *cmd, uint32_t id)
{
	enum eng_state s = ENG_STATE_IDLE;

	eng_id_state(cmd->eng, id, &s);
	return (enum cmp_state)s;
}

static void pd_copy(uint8_t *dst, size_t size, const uint8_t *src, size_t len)
{
	memset(dst, 0, size);
	memcpy(dst, src, len < size ? len : size);
}

/* The id a request acts on (cmp_msgs.def: CMP_F_ID), or CMP_ID_NONE. */
static uint32_t request_id(const struct cmp_msg *req)
{
	uint32_t id = CMP_ID_NONE;

	/* Every body that names an id starts with it (cmp.h). */
	if (cmp_type_has_id(req->hdr.type))
		memcpy(&id, req->body, sizeof(id));
	return id;
}

/* A request refused by authz.h's policy or limits: notice, rate-limited. */
static void authz_refused(struct cmd *cmd, struct srv_client *c,
			  const char *what, uint64_t sid, uint64_t mask, int rc,
			  const char *why, uint64_t now)
{
	uint64_t suppressed;
	char sids[64] = "", tail[64] = "";

	if (!authz_log_ok(cmd->cfg.authz, now, &suppressed))
		return;
	if (suppressed)
		snprintf(tail, sizeof(tail),
			 " (%llu refusals before not logged)",
			 (unsigned long long)suppressed);
	if (mask)
		snprintf(sids, sizeof(sids),
			 " service id 0x%016llx mask 0x%016llx",
			 (unsigned long long)sid, (unsigned long long)mask);
	log_notice("client %llu (%s, pid %d uid %u gid %u): %s%s refused "
		   "(%s): %s%s",
		   (unsigned long long)srv_client_serial(c), srv_client_name(c),
		   (int)srv_client_pid(c), (unsigned int)srv_client_uid(c),
		   (unsigned int)srv_client_gid(c), what, sids, strerror(-rc),
		   why, tail);
}

/*
 * A new id in IDLE, for CREATE_ID and for CONNECT with id CMP_ID_NONE:
 * both are held to the same limits (--max-ids per client, authz.h's per
 * user). 'what' names the request for the authz notice.
 */
static int id_create(struct cmd *cmd, struct srv_client *c, uint8_t qp_type,
		     uint64_t context, const char *what, struct api_id **out,
		     uint64_t now)
{
	struct api_client *ac = api_client_of(cmd, c);
	struct api_id *a;
	uint32_t id;
	int rc;

	if (!ac)
		return -ENOTCONN;
	if (ac->nids >= cmd->cfg.max_ids)
		return refuse(-EMFILE, "%s: the client has max-ids (%u) ids",
			      what, (unsigned int)cmd->cfg.max_ids);
	if (!authz_id_room(cmd->cfg.authz, srv_client_uid(c))) {
		authz_refused(cmd, c, what, 0, 0, -EMFILE,
			      "max-ids-per-user reached", now);
		return refuse(-EMFILE, "%s: max-ids-per-user reached", what);
	}
	rc = eng_create_id(cmd->eng, srv_client_serial(c), context, &id);
	if (rc)
		return rc;
	a = api_id_add(cmd, c, id, qp_type);
	if (!a) {
		eng_destroy(cmd->eng, id, now);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

/*
 * One handler a request, named after its row in cmp_msgs.def; a for the
 * requests that name an id (already checked to be the client's), now the
 * loop's time.
 */
#define API_HANDLER(member)                                                    \
	static int api_##member(struct cmd *cmd, struct srv_client *c,         \
				struct api_id *a, const struct cmp_msg *req,   \
				struct cmp_msg *reply, uint64_t now)

API_HANDLER(create_id)
{
	const struct cmp_create_id *r = &req->create_id;
	struct api_id *created;
	int rc = id_create(cmd, c, r->qp_type, r->context, "CREATE_ID",
			   &created, now);

	if (!rc)
		reply->create_id_reply.id = created->id;
	return rc;
}

API_HANDLER(listen)
{
	/* a is c's: dispatch checked it. */
	const struct cmp_listen *r = &req->listen;
	struct eng_listen_sel sel;
	struct cmp_path where;
	char why[192];
	int rc;

	rc = path_listen_sel(cmd->xport, &r->port, &sel, &where);
	if (rc)
		return rc;
	/* Authorization (authz.h): the policy, then the per-user limits. */
	if (!a->listener) {
		rc = authz_listen_policy(cmd->cfg.authz, srv_client_uid(c),
					 srv_client_gid(c), r->service_id,
					 r->service_mask, why, sizeof(why));
		if (!rc)
			rc = authz_listener_room(cmd->cfg.authz,
						 srv_client_uid(c), why,
						 sizeof(why));
		if (rc) {
			authz_refused(cmd, c, "LISTEN", r->service_id,
				      r->service_mask, rc, why, now);
			return refuse(rc, "LISTEN: %s", why);
		}
	}
	rc = eng_listen(cmd->eng, a->id, r->service_id, r->service_mask,
			r->backlog, &sel, now);
	if (rc)
		return rc;
	if (!a->listener)
		authz_listener_add(cmd->cfg.authz, srv_client_uid(c));
	a->listener = true;
	/* A listener has no path: QUERY_ID and LIST show where it listens. */
	api_id_set_path(cmd, a, &where);
	a->sel = r->port.kind;
	return 0;
}

/*
 * The CONNECT's REQ, over path. The REQ carries no alternate path: the
 * SA's alternate (RESOLVE_ROUTE's event) is the program's to load with
 * LAP once the QP can take it, as rdma_cm leaves APM to the program.
 */
static int connect_send(struct cmd *cmd, struct api_id *a,
			const struct cmp_connect *r, struct path *path,
			uint64_t now)
{
	struct eng_connect_param p;
	struct cm_req *q = &p.req;
	int rc;

	memset(&p, 0, sizeof(p));
	p.dest = path->dest;
	p.packet_life_time = path->view.packet_life_time;
	q->service_id = r->service_id;
	q->local_qpn = r->local_qpn;
	q->starting_psn = r->start_psn;
	q->responder_resources = r->responder_resources;
	q->initiator_depth = r->initiator_depth;
	/* Zero CM timeouts and retries take the daemon's defaults. */
	q->remote_cm_resp_timeout = r->remote_cm_response_timeout ?
					    r->remote_cm_response_timeout :
					    cmd->cfg.cm_response_timeout;
	q->local_cm_resp_timeout = r->local_cm_response_timeout ?
					   r->local_cm_response_timeout :
					   cmd->cfg.cm_response_timeout;
	q->transport_type = a->qp_type == CMP_QP_TYPE_UC ? CM_TRANSPORT_UC :
							   CM_TRANSPORT_RC;
	q->flow_control = r->flow_control;
	q->retry_count = r->retry_count;
	q->rnr_retry_count = r->rnr_retry_count;
	q->max_cm_retries =
		r->max_cm_retries ? r->max_cm_retries : cmd->cfg.max_cm_retries;
	q->srq = r->srq;
	path_fill_req(path, q);
	pd_copy(q->private_data, sizeof(q->private_data), r->private_data,
		r->private_data_len);
	rc = eng_connect(cmd->eng, a->id, &p, now);
	if (rc)
		return rc;
	a->setup_start = now; /* ops: the REQ is out */
	api_id_set_path(cmd, a, &path->view);
	return 0;
}

/* The SA's records onto path: 0, or -errno with the reason refused. */
static int sa_onto_path(struct path *path, const struct cmp_path_set *set,
			const struct sa_path_rec *recs, unsigned int n)
{
	/* The CA's ACK delay is not known here (0): the REQ's local ACK
	 * timeout is then the record's packet life time + 1, as the
	 * kernel's for a CA that acks at once. */
	if (!n || path_apply_sa(path, &recs[0], set, 0))
		return refuse(-EHOSTUNREACH,
			      "the SA's path record has no LID route");
	return 0;
}

static int sidr_send(struct cmd *cmd, struct api_id *a,
		     const struct cmp_sidr_req *r, const struct path *path,
		     uint64_t now)
{
	struct eng_sidr_param p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.dest = path->dest;
	p.service_id = r->service_id;
	p.pkey = r->pkey ? r->pkey : path->view.pkey;
	p.timeout = r->cm_response_timeout ? r->cm_response_timeout :
					     cmd->cfg.cm_response_timeout;
	p.max_retries =
		r->max_cm_retries ? r->max_cm_retries : cmd->cfg.max_cm_retries;
	pd_copy(p.private_data, sizeof(p.private_data), r->private_data,
		r->private_data_len);
	rc = eng_sidr_req(cmd->eng, a->id, &p, now);
	if (!rc)
		api_id_set_path(cmd, a, &path->view);
	return rc;
}

/* An event of the daemon's own for an IDLE id (api_deliver_local). */
static void local_event(struct cmd *cmd, struct api_id *a, uint16_t type,
			int status, struct cmp_event *e)
{
	struct eng_id_info f;

	e->id = a->id;
	e->type = type;
	e->status = status;
	e->state = CMP_STATE_IDLE;
	if (!eng_id_info(cmd->eng, a->id, &f))
		e->context = f.context;
	api_deliver_local(cmd, a, e);
}

/* RESOLVE_ROUTE's answer: the path (and alternate), or status < 0. */
static void route_event(struct cmd *cmd, struct api_id *a, int status,
			const struct path *path, const struct sa_path_rec *recs,
			unsigned int n, const struct cmp_path_set *set)
{
	struct cmp_event e;

	memset(&e, 0, sizeof(e));
	if (!status) {
		struct cmp_ev_route *r = &e.route_resolved;

		r->path = path->view;
		r->from_sa = recs != NULL;
		if (n > 1) {
			struct path alt = *path;

			if (!path_apply_sa(&alt, &recs[1], set, 0)) {
				r->alt_path = alt.view;
				r->has_alt = 1;
			}
		}
		api_id_set_path(cmd, a, &path->view);
	}
	local_event(cmd, a, CMP_EVENT_ROUTE_RESOLVED, status, &e);
}

/* The request w waited for, now that its path is known (recs: the SA's,
 * NULL: built locally). 0, or -errno for its owner's event. */
static int wait_go(struct cmd *cmd, struct api_id *a, struct api_wait *w,
		   const struct sa_path_rec *recs, unsigned int n, uint64_t now)
{
	int rc = recs ? sa_onto_path(&w->path, w->set, recs, n) : 0;

	if (rc)
		return rc;
	switch (w->type) {
	case CMP_TYPE_CONNECT:
		return connect_send(cmd, a, &w->req.connect, &w->path, now);
	case CMP_TYPE_SIDR_REQ:
		return sidr_send(cmd, a, &w->req.sidr, &w->path, now);
	case CMP_TYPE_RESOLVE_ROUTE:
		route_event(cmd, a, 0, &w->path, recs, n, w->set);
		return 0;
	}
	return -EINVAL;
}

/* The SA answered a waiting request (sa_paths_fn). */
static void wait_answer(void *ctx, int status, const struct sa_path_rec *recs,
			unsigned int n, const char *why)
{
	struct api_wait *w = ctx;
	struct cmd *cmd = w->cmd;
	struct api_id *a = api_id_find(cmd, w->id);
	int rc = status;

	if (!a || a->wait != w) {
		free(w); /* cannot happen: id_del cancels */
		return;
	}
	a->wait = NULL;
	refuse_clear();
	if (!rc)
		rc = wait_go(cmd, a, w, recs, n, cmd_now());
	if (rc) {
		/* Nothing went out: the id stays IDLE, its owner is told. */
		struct cmp_event e;

		log_info("id %u: %s: no path from the SA: %s", a->id,
			 cmp_type_name(w->type),
			 why	      ? why :
			 refuse_why() ? refuse_why() :
					strerror(-rc));
		api_id_set_path(cmd, a, &w->path.view);
		if (w->type == CMP_TYPE_RESOLVE_ROUTE) {
			route_event(cmd, a, rc, NULL, NULL, 0, w->set);
		} else {
			memset(&e, 0, sizeof(e));
			e.connect_error.msg = CMP_CM_MSG_NONE;
			local_event(cmd, a, CMP_EVENT_CONNECT_ERROR, rc, &e);
		}
	}
	free(w);
}

/*
 * Resolve a request's path: path_resolve(), then on an IB port the SA's
 * path (unless the program gave a whole one). Returns 0 with w->path
 * ready (recs and n: the SA's records from the cache, or NULL/0 when built
 * locally), 1 when w waits for the SA (a->wait = w, owned by a), or
 * -errno (w is the caller's to free).
 */
static int wait_resolve(struct cmd *cmd, struct api_id *a, struct api_wait *w,
			const struct cmp_addr *dst,
			const struct cmp_port_sel *src, uint64_t service_id,
			const struct sa_path_rec **recs, unsigned int *n)
{
	const struct path_cache_entry *e;
	struct sa_path_want want;
	int rc;

	*recs = NULL;
	*n = 0;
	if (a->wait)
		return refuse(-EALREADY,
			      "%s: id %u is waiting for the SA's "
			      "path already",
			      cmp_type_name(w->type), a->id);
	rc = path_resolve(cmd->xport, dst, src, w->set, &cmd->cfg.path,
			  &w->path);
	if (rc)
		return rc;
	/* Only an IDLE id may wait: a CONNECT or SIDR_REQ in another state
	 * goes on to the engine, which refuses it (and counts it) at once. */
	if (!sa_paths_used(cmd->sa, w->path.dest.port) ||
	    (w->set->flags & PATH_SET_WHOLE) == PATH_SET_WHOLE ||
	    api_state_of(cmd, a->id) != CMP_STATE_IDLE)
		return 0;
	path_sa_want(&w->path, dst, w->set, service_id, &want);
	rc = sa_paths_get(cmd->sa, w->path.dest.port, &want, wait_answer, w, &e,
			  &w->handle);
	if (rc < 0)
		return refuse(rc, "%s: cannot ask the SA for a path: %s",
			      cmp_type_name(w->type), strerror(-rc));
	if (rc == 0) {
		*recs = e->recs;
		*n = e->n;
		return 0;
	}
	w->cmd = cmd;
	w->id = a->id;
	a->wait = w;
	api_id_set_path(cmd, a, &w->path.view);
	return 1;
}

/* A request that needs a path: at once, or when the SA answers. */
static int wait_start(struct cmd *cmd, struct api_id *a, struct api_wait *w,
		      const struct cmp_addr *dst,
		      const struct cmp_port_sel *src, uint64_t service_id,
		      uint64_t now)
{
	const struct sa_path_rec *recs;
	unsigned int n;
	int rc;

	if (a->local_unacked)
		rc = refuse(-EBUSY, "%s: ack id %u's event first",
			    cmp_type_name(w->type), a->id);
	else if (w->type == CMP_TYPE_RESOLVE_ROUTE &&
		 api_state_of(cmd, a->id) != CMP_STATE_IDLE)
		/* Its event says the id is IDLE: only true of an IDLE id. */
		rc = refuse(-EINVAL, "RESOLVE_ROUTE not allowed in state %s",
			    cmp_state_name(api_state_of(cmd, a->id)));
	else
		rc = wait_resolve(cmd, a, w, dst, src, service_id, &recs, &n);
	if (rc == 1)
		return 0; /* w is a's now */
	if (!rc)
		rc = wait_go(cmd, a, w, recs, n, now);
	free(w);
	return rc;
}

static struct api_wait *wait_new(uint16_t type)
{
	struct api_wait *w = calloc(1, sizeof(*w));

	if (w) {
		w->type = type;
		w->set = &w->none;
	}
	return w;
}

static int do_connect(struct cmd *cmd, struct api_id *a,
		      const struct cmp_connect *r, uint64_t now)
{
	struct api_wait *w;

	if (a->qp_type == CMP_QP_TYPE_UD) /* they resolve with SIDR_REQ */
		return refuse(-EINVAL, "CONNECT on a UD id (use SIDR_REQ)");
	w = wait_new(CMP_TYPE_CONNECT);
	if (!w)
		return -ENOMEM;
	w->req.connect = *r;
	w->set = &w->req.connect.path;
	return wait_start(cmd, a, w, &r->dst, &r->src, r->service_id, now);
}

/*
 * CONNECT with id CMP_ID_NONE: CREATE_ID and CONNECT in one request, so
 * that a pipelining client need not wait for an id before connecting. It
 * is all or nothing: when the connect fails the new id is destroyed again
 * (an IDLE id, so no MAD and no event) and the reply names no id. The
 * reply, which names the new id, goes out before any event of it
 * (server.h, "Ordering").
 */
static int do_connect_new(struct cmd *cmd, struct srv_client *c,
			  const struct cmp_connect *r, struct cmp_msg *reply,
			  uint64_t now)
{
	struct api_id *a;
	int rc = id_create(cmd, c, r->qp_type, r->context, "CONNECT", &a, now);

	if (rc)
		return rc;
	rc = do_connect(cmd, a, r, now);
	if (rc) {
		eng_destroy(cmd->eng, a->id, now);
		id_del(cmd, a);
		return rc;
	}
	reply->reply.id = a->id;
	return 0;
}

API_HANDLER(accept)
{
	const struct cmp_accept *r = &req->accept;
	struct cm_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = r->local_qpn;
	rep.starting_psn = r->start_psn;
	rep.responder_resources = r->responder_resources;
	rep.initiator_depth = r->initiator_depth;
	rep.target_ack_delay = r->target_ack_delay;
	rep.failover_accepted = r->failover;
	rep.flow_control = r->flow_control;
	rep.rnr_retry_count = r->rnr_retry_count;
	rep.srq = r->srq;
	pd_copy(rep.private_data, sizeof(rep.private_data), r->private_data,
		r->private_data_len);
	return eng_accept(cmd->eng, a->id, &rep, now);
}

API_HANDLER(reject)
{
	const struct cmp_reject *r = &req->reject;
	struct cm_rej rej;

	memset(&rej, 0, sizeof(rej));
	rej.reason = r->reason;
	rej.ari_length = r->ari_len;
	pd_copy(rej.ari, sizeof(rej.ari), r->ari, r->ari_len);
	pd_copy(rej.private_data, sizeof(rej.private_data), r->private_data,
		r->private_data_len);
	return eng_reject(cmd->eng, a->id, &rej, now);
}

API_HANDLER(rtu)
{
	const struct cmp_rtu *r = &req->rtu;
	struct cm_rtu rtu;

	memset(&rtu, 0, sizeof(rtu));
	pd_copy(rtu.private_data, sizeof(rtu.private_data), r->private_data,
		r->private_data_len);
	return eng_rtu(cmd->eng, a->id, &rtu, now);
}

API_HANDLER(sidr_req)
{
	const struct cmp_sidr_req *r = &req->sidr_req;
	struct api_wait *w;

	if (a->qp_type != CMP_QP_TYPE_UD)
		return refuse(-EINVAL, "SIDR_REQ on an RC or UC id (use "
				       "CONNECT)");
	w = wait_new(CMP_TYPE_SIDR_REQ);
	if (!w)
		return -ENOMEM;
	w->req.sidr = *r;
	return wait_start(cmd, a, w, &r->dst, &r->src, r->service_id, now);
}

API_HANDLER(resolve_route)
{
	const struct cmp_resolve_route *r = &req->resolve_route;
	struct api_wait *w = wait_new(CMP_TYPE_RESOLVE_ROUTE);

	if (!w)
		return -ENOMEM;
	w->req.route = *r;
	w->set = &w->req.route.path;
	return wait_start(cmd, a, w, &r->dst, &r->src, r->service_id, now);
}

API_HANDLER(sidr_rep)
{
	const struct cmp_sidr_rep *r = &req->sidr_rep;
	struct cm_sidr_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.status = r->status;
	rep.qpn = r->qpn;
	rep.qkey = r->qkey;
	pd_copy(rep.private_data, sizeof(rep.private_data), r->private_data,
		r->private_data_len);
	return eng_sidr_rep(cmd->eng, a->id, &rep, now);
}

API_HANDLER(lap)
{
	const struct cmp_lap *r = &req->lap;
	const struct cmp_path *p = &r->alt_path;
	struct cm_lap lap;

	memset(&lap, 0, sizeof(lap));
	lap.alt_local_lid = p->local_lid;
	lap.alt_remote_lid = p->remote_lid;
	memcpy(lap.alt_local_gid, p->local_gid, CM_GID_SIZE);
	memcpy(lap.alt_remote_gid, p->remote_gid, CM_GID_SIZE);
	lap.alt_flow_label = p->flow_label;
	lap.alt_traffic_class = p->traffic_class;
	lap.alt_hop_limit = p->hop_limit;
	lap.alt_packet_rate = p->packet_rate;
	lap.alt_sl = p->sl;
	lap.alt_subnet_local = p->hop_limit <= 1;
	lap.alt_local_ack_timeout = p->local_ack_timeout;
	pd_copy(lap.private_data, sizeof(lap.private_data), r->private_data,
		r->private_data_len);
	return eng_lap(cmd->eng, a->id, &lap, now);
}

/* Acknowledge a's event seq (rule 2): ACK_EVENT, or CMP_HDR_ACK. */
static int ack_event(struct cmd *cmd, struct api_id *a, uint32_t seq,
		     uint64_t now)
{
	if (!a->unacked_seq)
		return refuse(-EINVAL,
			      "ACK_EVENT: id %u has no event to "
			      "acknowledge",
			      a->id);
	if (seq != a->unacked_seq)
		return refuse(-EINVAL,
			      "ACK_EVENT of event %u: id %u's "
			      "unacknowledged event is %u",
			      seq, a->id, a->unacked_seq);
	a->unacked_seq = 0;
	if (a->local_unacked) {
		/* The daemon's own event: the engine has none out. */
		a->local_unacked = false;
		return 0;
	}
	return eng_ack(cmd->eng, a->id, now);
}

API_HANDLER(ack_event)
{
	return ack_event(cmd, a, req->ack_event.seq, now);
}

API_HANDLER(query_id)
{
	struct cmp_id_info *o = &reply->query_id_reply.info;
	struct eng_id_info f;
	int rc = eng_id_info(cmd->eng, a->id, &f);

	if (rc)
		return rc;
	o->id = a->id;
	o->listen_id = f.terms.listen_id;
	o->context = f.context;
	o->service_id = f.service_id;
	o->service_mask = f.service_mask;
	o->remote_ca_guid = f.remote_ca_guid;
	o->local_comm_id = f.local_comm_id;
	o->remote_comm_id = f.remote_comm_id;
	o->local_qpn = f.local_qpn;
	o->remote_qpn = f.remote_qpn;
	o->local_psn = f.terms.local_psn;
	o->remote_psn = f.terms.remote_psn;
	o->qkey = f.terms.qkey;
	o->backlog = f.backlog;
	o->credits_in_use = f.credits_used;
	o->held_reqs = f.held;
	o->state = (uint8_t)f.state;
	o->lap_state = (uint8_t)f.lap;
	o->qp_type = a->qp_type;
	o->responder_resources = f.terms.responder_resources;
	o->initiator_depth = f.terms.initiator_depth;
	o->target_ack_delay = f.terms.target_ack_delay;
	o->failover = cmp_failover_of(f.terms.failover);
	o->flow_control = f.terms.flow_control;
	o->retry_count = f.terms.retry_count;
	o->rnr_retry_count = f.terms.rnr_retry_count;
	o->srq = f.terms.srq;
	o->max_cm_retries = f.terms.max_cm_retries;
	o->local_cm_response_timeout = f.terms.local_cm_response_timeout;
	o->remote_cm_response_timeout = f.terms.remote_cm_response_timeout;
	o->sel = a->listener ? a->sel : CMP_SEL_ANY;
	o->path = *api_id_path(a);
	return 0;
}

/* The server answers HELLO itself (server.c); it never comes here. */
API_HANDLER(hello)
{
	return -EPROTO;
}

API_HANDLER(destroy_id)
{
	int rc = eng_destroy(cmd->eng, a->id, now);

	id_del(cmd, a);
	return rc == -ENOENT ? 0 : rc;
}

API_HANDLER(set_context)
{
	return eng_set_context(cmd->eng, a->id, req->set_context.context);
}

/* CONNECT with id CMP_ID_NONE creates its id. */
API_HANDLER(connect)
{
	if (!a)
		return do_connect_new(cmd, c, &req->connect, reply, now);
	return do_connect(cmd, a, &req->connect, now);
}

API_HANDLER(notify_established)
{
	return eng_establish(cmd->eng, a->id, now);
}

API_HANDLER(mra)
{
	return eng_mra(cmd->eng, a->id, req->mra.service_timeout,
		       req->mra.private_data, req->mra.private_data_len, now);
}

API_HANDLER(disconnect)
{
	return eng_disconnect(cmd->eng, a->id, req->disconnect.private_data,
			      req->disconnect.private_data_len, now);
}

API_HANDLER(apr)
{
	return eng_apr(cmd->eng, a->id, req->apr.ap_status, req->apr.info,
		       req->apr.info_len, req->apr.private_data,
		       req->apr.private_data_len, now);
}

API_HANDLER(list)
{
	return api_ops_list(cmd, c, &req->list, &reply->list_reply);
}

API_HANDLER(counters)
{
	return api_ops_counters(cmd, c, &req->counters, &reply->counters_reply);
}

API_HANDLER(ports)
{
	return api_ops_ports(cmd, &req->ports, &reply->ports_reply);
}

API_HANDLER(capture)
{
	return api_ops_capture(cmd, c, &req->capture);
}

/* SESSION and RESUME are the server's, like HELLO (server.c): never
 * handed to the hooks. */
API_HANDLER(session)
{
	return -EPROTO;
}

API_HANDLER(resume)
{
	return -EPROTO;
}

API_HANDLER(paths)
{
	return api_ops_paths(cmd, c, &req->paths, &reply->paths_reply);
}

typedef int api_handler_fn(struct cmd *cmd, struct srv_client *c,
			   struct api_id *a, const struct cmp_msg *req,
			   struct cmp_msg *reply, uint64_t now);

/* The dispatch, from cmp_msgs.def: a request without a handler fails to
 * compile. */
static api_handler_fn *const api_handlers[CMP_TYPE_REQUEST_MAX + 1] = {
#define CMP_REQUEST(NAME, member, code, body, reply, flags)                    \
	[CMP_TYPE_##NAME] = api_##member,
#include "cmp_msgs.def"
};

static int dispatch(struct cmd *cmd, struct srv_client *c,
		    const struct cmp_msg *req, struct cmp_msg *reply)
{
	uint32_t id = request_id(req);
	struct api_id *a = NULL;

	/* The decoder passes requests only (cmp_type_is_request). */
	if (!cmp_type_is_request(req->hdr.type))
		return -EOPNOTSUPP;
	uint64_t now = cmd_now();
	int rc;

	if (id != CMP_ID_NONE && !(a = id_of(cmd, c, id)))
		return refuse(-ENOENT, "%s: the client has no id %u",
			      cmp_type_name(req->hdr.type), id);
	/* CMP_HDR_ACK: the id's one unacknowledged event first (cmp.h);
	 * the decoder let it through only on a request naming an id. */
	if (req->hdr.flags & CMP_HDR_ACK) {
		if (!a)
			return -EINVAL;
		/* -EINVAL when nothing is unacknowledged (seq 0). */
		rc = ack_event(cmd, a, a->unacked_seq, now);
		if (rc)
			return rc;
	}
	return api_handlers[req->hdr.type](cmd, c, a, req, reply, now);
}

struct api_client *api_client_add(struct cmd *cmd, struct srv_client *c)
{
	struct api_client *ac = calloc(1, sizeof(*ac));

	if (!ac || htable_reserve(&cmd->clients)) {
		free(ac);
		return NULL;
	}
	ac->client = c;
	ac->serial = srv_client_serial(c);
	ac->admin = -1;
	LIST_INIT(&ac->ids);
	htable_insert(&cmd->clients, &ac->hnode);
	return ac;
}

void api_request(void *ctx, struct srv_client *c, const struct cmp_msg *req,
		 struct cmp_msg *reply)
{
	struct cmd *cmd = ctx;

	/* The first request after HELLO introduces the client to the API. */
	if (!api_client_of(cmd, c) && !api_client_add(cmd, c)) {
		reply->reply.status = -ENOMEM;
		return;
	}
	api_client_of(cmd, c)->requests++;
	reply->reply.status = dispatch(cmd, c, req, reply);
}

void api_client_gone(void *ctx, struct srv_client *c)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = api_client_of(cmd, c);
	struct api_id *a;
	int n;

	if (!ac)
		return;
	/* The engine finishes each id's protocol (REJ, DREQ, DREP) and
	 * delivers nothing more for them. */
	n = eng_destroy_owner(cmd->eng, srv_client_serial(c), cmd_now());
	while ((a = LIST_FIRST(&ac->ids)))
		id_del(cmd, a);
	htable_remove(&cmd->clients, &ac->hnode);
	if (n > 0) {
		struct log_ctx lc = { .client_pid = (int)srv_client_pid(c) };

		log_ctx_at(LOG_LVL_INFO, &lc,
			   "client %llu (%s, pid %d) went away: destroyed %d "
			   "ids",
			   (unsigned long long)srv_client_serial(c),
			   srv_client_name(c), (int)srv_client_pid(c), n);
	}
	free(ac);
}

bool api_owner_has_room(void *ctx, uint64_t owner)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = api_client_find(cmd, owner);

	return ac && ac->nids < cmd->cfg.max_ids &&
	       authz_id_room(cmd->cfg.authz, srv_client_uid(ac->client));
}

void api_port_down(struct cmd *cmd, uint16_t port)
{
	/* Open handshakes on the port fail now (-ENETDOWN) instead of
	 * retrying into the void; established ones are told and stay. */
	int n = eng_port_down(cmd->eng, port, cmd_now());

	if (n > 0)
		log_info("port %u down: told the owners of %d ids", port, n);
}

void api_device_removed(struct cmd *cmd, uint16_t port)
{
	/* Every id on the device is told DEVICE_REMOVAL (-ENODEV) and left
	 * for its owner to destroy; nothing more goes out for them. */
	int n = eng_device_removed(cmd->eng, port, cmd_now());

	log_notice("port %u removed: told the owners of %d ids "
		   "(DEVICE_REMOVAL)",
		   port, n < 0 ? 0 : n);
}
