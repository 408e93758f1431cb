// SPDX-License-Identifier: MIT
/*
 * The client API on top of the engine: each request of proto/cmp.h becomes
 * an engine call, each engine event a cmp EVENT for the id's owner. The
 * engine keeps the protocol state; this file keeps who owns which id, the
 * per-id event sequence of rule 2, and what QUERY_ID reports.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "cmd.h"
#include "log.h"
#include "util.h"

static struct api_client *client_of(struct cmd *cmd, struct srv_client *c)
{
	return hmap_get(&cmd->clients, srv_client_serial(c));
}

/* The id, if it exists and belongs to c; a foreign id looks absent. */
static struct api_id *id_of(struct cmd *cmd, struct srv_client *c, uint32_t id)
{
	struct api_id *a = hmap_get(&cmd->ids, id);

	return a && a->client == c ? a : NULL;
}

static struct api_id *id_add(struct cmd *cmd, struct srv_client *c, uint32_t id,
			     uint8_t qp_type)
{
	struct api_client *ac = client_of(cmd, c);
	struct api_id *a = calloc(1, sizeof(*a));

	if (!a || !ac || hmap_put(&cmd->ids, id, a)) {
		free(a);
		return NULL;
	}
	/* Per-user accounting (authz.h): every id counts, passive ones too. */
	if (authz_id_add(cmd->cfg.authz, srv_client_uid(c))) {
		hmap_del(&cmd->ids, id);
		free(a);
		return NULL;
	}
	a->id = id;
	a->client = c;
	a->qp_type = qp_type;
	a->info.id = id;
	a->info.qp_type = qp_type;
	LIST_INSERT_HEAD(&ac->ids, a, link);
	ac->nids++;
	return a;
}

static void id_del(struct cmd *cmd, struct api_id *a)
{
	struct api_client *ac = client_of(cmd, a->client);

	hmap_del(&cmd->ids, a->id);
	LIST_REMOVE(a, link);
	if (ac)
		ac->nids--;
	authz_id_del(cmd->cfg.authz, srv_client_uid(a->client), a->listener);
	free(a);
}

/* Both enums come from cm_states.def; this says so to the compiler. */
#define CM_STATE(NAME, value)                                                  \
	_Static_assert((int)ENG_STATE_##NAME == (int)CMP_STATE_##NAME, #NAME);
#define CM_LAP_STATE(NAME, ENG, value, text)                                   \
	_Static_assert((int)ENG_LAP_##ENG == (int)CMP_LAP_STATE_##NAME, #NAME);
#include "cm_states.def"

static enum cmp_state state_of(struct cmd *cmd, uint32_t id)
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
			  const char *why)
{
	uint64_t suppressed;
	char sids[64] = "", tail[64] = "";

	if (!authz_log_ok(cmd->cfg.authz, cmd_now(), &suppressed))
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
		     uint64_t context, const char *what, struct api_id **out)
{
	struct api_client *ac = client_of(cmd, c);
	struct api_id *a;
	uint32_t id;
	int rc;

	if (!ac)
		return -ENOTCONN;
	if (ac->nids >= cmd->cfg.max_ids)
		return -EMFILE;
	if (!authz_id_room(cmd->cfg.authz, srv_client_uid(c))) {
		authz_refused(cmd, c, what, 0, 0, -EMFILE,
			      "max-ids-per-user reached");
		return -EMFILE;
	}
	rc = eng_create_id(cmd->eng, srv_client_serial(c), context, &id);
	if (rc)
		return rc;
	a = id_add(cmd, c, id, qp_type);
	if (!a) {
		eng_destroy(cmd->eng, id, cmd_now());
		return -ENOMEM;
	}
	a->info.context = context;
	*out = a;
	return 0;
}

static int do_create(struct cmd *cmd, struct srv_client *c,
		     const struct cmp_create_id *r, struct cmp_msg *reply)
{
	struct api_id *a;
	int rc = id_create(cmd, c, r->qp_type, r->context, "CREATE_ID", &a);

	if (!rc)
		reply->create_id_reply.id = a->id;
	return rc;
}

static int do_listen(struct cmd *cmd, struct api_id *a,
		     const struct cmp_listen *r)
{
	struct srv_client *c = a->client;
	char why[192];
	int rc;

	/* Listeners serve every port; narrowing them is not built yet. */
	if (r->port.kind != CMP_SEL_ANY)
		return -EOPNOTSUPP;
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
				      r->service_mask, rc, why);
			return rc;
		}
	}
	rc = eng_listen(cmd->eng, a->id, r->service_id, r->service_mask,
			r->backlog, cmd_now());
	if (rc)
		return rc;
	if (!a->listener)
		authz_listener_add(cmd->cfg.authz, srv_client_uid(c));
	a->listener = true;
	a->info.service_id = r->service_id;
	a->info.service_mask = r->service_mask;
	a->info.backlog = r->backlog;
	return 0;
}

static int do_connect(struct cmd *cmd, struct api_id *a,
		      const struct cmp_connect *r)
{
	struct eng_connect_param p;
	struct path path;
	struct cm_req *q = &p.req;
	int rc;

	if (a->qp_type == CMP_QP_TYPE_UD)
		return -EINVAL; /* UD ids resolve with SIDR_REQ */
	rc = path_resolve(cmd->xport, &r->dst, &r->src, &r->path,
			  &cmd->cfg.path, &path);
	if (rc)
		return rc;
	memset(&p, 0, sizeof(p));
	p.dest = path.dest;
	p.packet_life_time = path.view.packet_life_time;
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
	path_fill_req(&path, q);
	pd_copy(q->private_data, sizeof(q->private_data), r->private_data,
		r->private_data_len);
	rc = eng_connect(cmd->eng, a->id, &p, cmd_now());
	if (rc)
		return rc;
	a->setup_start = cmd_now(); /* ops: the REQ is out */
	a->info.service_id = r->service_id;
	a->info.local_comm_id = q->local_comm_id;
	a->info.local_qpn = r->local_qpn;
	a->info.local_psn = q->starting_psn;
	a->info.responder_resources = r->responder_resources;
	a->info.initiator_depth = r->initiator_depth;
	a->info.flow_control = r->flow_control;
	a->info.retry_count = r->retry_count;
	a->info.rnr_retry_count = r->rnr_retry_count;
	a->info.srq = r->srq;
	a->info.max_cm_retries = q->max_cm_retries;
	a->info.local_cm_response_timeout = q->local_cm_resp_timeout;
	a->info.remote_cm_response_timeout = q->remote_cm_resp_timeout;
	a->info.path = path.view;
	return 0;
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
			  const struct cmp_connect *r, struct cmp_msg *reply)
{
	struct api_id *a;
	int rc = id_create(cmd, c, r->qp_type, r->context, "CONNECT", &a);

	if (rc)
		return rc;
	rc = do_connect(cmd, a, r);
	if (rc) {
		eng_destroy(cmd->eng, a->id, cmd_now());
		id_del(cmd, a);
		return rc;
	}
	reply->reply.id = a->id;
	return 0;
}

static int do_accept(struct cmd *cmd, struct api_id *a,
		     const struct cmp_accept *r)
{
	struct cm_rep rep;
	int rc;

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
	rc = eng_accept(cmd->eng, a->id, &rep, cmd_now());
	if (rc)
		return rc;
	a->info.local_comm_id = rep.local_comm_id;
	a->info.local_qpn = r->local_qpn;
	a->info.local_psn = rep.starting_psn;
	a->info.target_ack_delay = r->target_ack_delay;
	a->info.failover = r->failover;
	/* What our QP uses from now on: the app's answer to the REQ. */
	a->info.responder_resources = r->responder_resources;
	a->info.initiator_depth = r->initiator_depth;
	a->info.rnr_retry_count = r->rnr_retry_count;
	return 0;
}

static int do_reject(struct cmd *cmd, struct api_id *a,
		     const struct cmp_reject *r)
{
	struct cm_rej rej;

	memset(&rej, 0, sizeof(rej));
	rej.reason = r->reason;
	rej.ari_length = r->ari_len;
	pd_copy(rej.ari, sizeof(rej.ari), r->ari, r->ari_len);
	pd_copy(rej.private_data, sizeof(rej.private_data), r->private_data,
		r->private_data_len);
	return eng_reject(cmd->eng, a->id, &rej, cmd_now());
}

static int do_rtu(struct cmd *cmd, struct api_id *a, const struct cmp_rtu *r)
{
	struct cm_rtu rtu;

	memset(&rtu, 0, sizeof(rtu));
	pd_copy(rtu.private_data, sizeof(rtu.private_data), r->private_data,
		r->private_data_len);
	return eng_rtu(cmd->eng, a->id, &rtu, cmd_now());
}

static int do_sidr_req(struct cmd *cmd, struct api_id *a,
		       const struct cmp_sidr_req *r)
{
	struct eng_sidr_param p;
	struct cmp_path_set none = { 0 };
	struct path path;
	int rc;

	if (a->qp_type != CMP_QP_TYPE_UD)
		return -EINVAL;
	rc = path_resolve(cmd->xport, &r->dst, &r->src, &none, &cmd->cfg.path,
			  &path);
	if (rc)
		return rc;
	memset(&p, 0, sizeof(p));
	p.dest = path.dest;
	p.service_id = r->service_id;
	p.pkey = r->pkey ? r->pkey : path.view.pkey;
	p.timeout = r->cm_response_timeout ? r->cm_response_timeout :
					     cmd->cfg.cm_response_timeout;
	p.max_retries =
		r->max_cm_retries ? r->max_cm_retries : cmd->cfg.max_cm_retries;
	pd_copy(p.private_data, sizeof(p.private_data), r->private_data,
		r->private_data_len);
	rc = eng_sidr_req(cmd->eng, a->id, &p, cmd_now());
	if (!rc) {
		a->info.service_id = r->service_id;
		a->info.path = path.view;
	}
	return rc;
}

static int do_sidr_rep(struct cmd *cmd, struct api_id *a,
		       const struct cmp_sidr_rep *r)
{
	struct cm_sidr_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.status = r->status;
	rep.qpn = r->qpn;
	rep.qkey = r->qkey;
	pd_copy(rep.private_data, sizeof(rep.private_data), r->private_data,
		r->private_data_len);
	return eng_sidr_rep(cmd->eng, a->id, &rep, cmd_now());
}

static int do_lap(struct cmd *cmd, struct api_id *a, const struct cmp_lap *r)
{
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
	return eng_lap(cmd->eng, a->id, &lap, cmd_now());
}

static int do_ack(struct cmd *cmd, struct api_id *a,
		  const struct cmp_ack_event *r)
{
	if (!a->unacked_seq || r->seq != a->unacked_seq)
		return -EINVAL;
	a->unacked_seq = 0;
	return eng_ack(cmd->eng, a->id, cmd_now());
}

static int do_query(struct cmd *cmd, struct api_id *a,
		    struct cmp_query_id_reply *r)
{
	struct eng_listen_info li;
	enum eng_lap_state lap = ENG_LAP_IDLE;

	r->info = a->info;
	r->info.state = (uint8_t)state_of(cmd, a->id);
	eng_id_lap_state(cmd->eng, a->id, &lap);
	r->info.lap_state = (uint8_t)lap;
	if (a->listener && !eng_listen_info(cmd->eng, a->id, &li)) {
		r->info.credits_in_use = li.credits_used;
		r->info.held_reqs = li.held;
	}
	return 0;
}

/*
 * ops: is gid among the supplementary groups of the client's process?
 * SO_PEERCRED gives only the primary gid, so read /proc/PID/status's
 * Groups: line (local and non-blocking, unlike getgrouplist's NSS
 * lookups), trusting it only while that process's effective uid is still
 * the peer's, so that a recycled pid does not lend its groups.
 */
static bool proc_in_group(pid_t pid, uid_t uid, gid_t gid)
{
	bool uid_ok = false, found = false;
	char path[64], *line = NULL;
	size_t size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (getline(&line, &size, f) > 0) {
		unsigned long real, eff;
		char *p, *end;

		if (!strncmp(line, "Uid:", 4)) {
			uid_ok =
				sscanf(line + 4, "%lu %lu", &real, &eff) == 2 &&
				eff == (unsigned long)uid;
		} else if (!strncmp(line, "Groups:", 7)) {
			for (p = line + 7;; p = end) {
				unsigned long v = strtoul(p, &end, 10);

				if (end == p)
					break;
				found |= v == (unsigned long)gid;
			}
		}
	}
	free(line);
	fclose(f);
	return uid_ok && found;
}

/*
 * ops: root, or a member of the configured admin group, may read every
 * client's ids, the GLOBAL and PORT counters, and start or stop a
 * capture. Decided at the client's first privileged request and kept for
 * the connection's life, as its SO_PEERCRED credentials are.
 */
static bool may_see_all(struct cmd *cmd, struct srv_client *c)
{
	struct api_client *ac = client_of(cmd, c);
	bool ok;

	if (srv_client_uid(c) == 0)
		return true;
	if (!cmd->cfg.has_admin_gid)
		return false;
	if (ac && ac->admin >= 0)
		return ac->admin;
	ok = srv_client_gid(c) == cmd->cfg.admin_gid ||
	     proc_in_group(srv_client_pid(c), srv_client_uid(c),
			   cmd->cfg.admin_gid);
	if (ac)
		ac->admin = ok;
	return ok;
}

static int do_list(struct cmd *cmd, struct srv_client *c,
		   const struct cmp_list *r, struct cmp_list_reply *out)
{
	size_t pos = (size_t)r->cursor;
	struct eng_listen_info li;
	struct api_id *a = NULL;

	while (out->count < CMP_LIST_BATCH_MAX &&
	       (a = hmap_next(&cmd->ids, &pos, NULL))) {
		struct cmp_list_entry *e = &out->entries[out->count];
		enum eng_lap_state lap;

		if (a->client != c && !may_see_all(cmd, c))
			continue;
		if (r->filter == CMP_LIST_FILTER_LISTENERS && !a->listener)
			continue;
		if (r->filter == CMP_LIST_FILTER_CONNECTIONS && a->listener)
			continue;
		e->id = a->id;
		e->state = (uint8_t)state_of(cmd, a->id);
		lap = ENG_LAP_IDLE;
		eng_id_lap_state(cmd->eng, a->id, &lap);
		e->lap_state = (uint8_t)lap;
		e->qp_type = a->qp_type;
		e->service_id = a->info.service_id;
		e->service_mask = a->info.service_mask;
		e->local_comm_id = a->info.local_comm_id;
		e->remote_comm_id = a->info.remote_comm_id;
		e->owner_pid = (uint32_t)srv_client_pid(a->client);
		e->owner_uid = (uint32_t)srv_client_uid(a->client);
		e->backlog = a->info.backlog;
		if (a->listener && !eng_listen_info(cmd->eng, a->id, &li)) {
			e->credits_in_use = li.credits_used;
			e->held_reqs = li.held;
		}
		memcpy(e->remote_gid, a->info.path.remote_gid, CM_GID_SIZE);
		out->count++;
	}
	out->next_cursor = a ? pos : 0;
	return 0;
}

/*
 * Counters, by stable name (docs/OPERATIONS.md lists them). Each scope's
 * list is built whole per request, a few hundred entries at most, and the
 * walk's cursor is the index in it.
 */
#define API_COUNTERS_MAX 512

struct counter_set {
	struct cmp_counter *c;
	unsigned int n;
};

static void cset_add(struct counter_set *set, uint64_t value, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));

static void cset_add(struct counter_set *set, uint64_t value, const char *fmt,
		     ...)
{
	struct cmp_counter *c;
	va_list ap;

	if (set->n >= API_COUNTERS_MAX)
		return;
	c = &set->c[set->n++];
	memset(c->name, 0, sizeof(c->name));
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
	for (char *p = c->name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	c->value = value;
}

/* "<type>_<kind>" for every CM message type: req_sent, rep_duplicates. */
static void cset_per_type(struct counter_set *set, const char *kind,
			  const uint64_t *v)
{
	for (unsigned int t = 0; t < CM_MSG__COUNT; t++)
		cset_add(set, v[t], "%s_%s",
			 cm_msg_type_name((enum cm_msg_type)t), kind);
}

static int count_state(void *arg, const struct eng_conn_info *info)
{
	uint64_t *by_state = arg;

	if ((unsigned int)info->state < ENG_STATE__COUNT)
		by_state[info->state]++;
	return 0;
}

/*
 * Bytes the allocator has handed out and not had back (in use), and bytes
 * it holds from the system (retained: glibc keeps freed heap, so this
 * follows the peak). A leak shows in the first whatever the peak was;
 * less the buffers the daemon keeps for reuse (the heap_cached counter,
 * which also follow the peak, up to their caps) it is what
 * tests/robust/rb_faults.c measures. 0 without glibc's mallinfo2 (other
 * libcs; a sanitizer's allocator is not glibc's).
 */
static void heap_stats(uint64_t *in_use, uint64_t *retained)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
	struct mallinfo2 mi = mallinfo2();

	*in_use = mi.uordblks + mi.hblkhd;
	*retained = mi.arena + mi.hblkhd;
#else
	*in_use = *retained = 0;
#endif
}

static void counters_global(struct cmd *cmd, struct counter_set *set)
{
	const struct eng_counters *e = eng_counters(cmd->eng);
	const struct srv_counters *s = srv_counters(cmd->srv);
	const struct capture_stats *cs =
		cmd->cap ? capture_stats(cmd->cap) : NULL;
	const struct xport_counters *xc =
		cmd->xport ? xport_counters(cmd->xport) : NULL;
	uint64_t by_state[ENG_STATE__COUNT] = { 0 };
	uint64_t heap_in_use, heap_retained;
	const struct {
		const char *name;
		uint64_t value;
	} flat[] = {
		{ "mad_rx", cmd->counters.mad_rx },
		{ "mad_tx", cmd->counters.mad_tx },
		{ "mad_tx_errors", cmd->counters.mad_tx_errors },
		{ "mad_tx_busy", xc ? xc->tx_busy : 0 },
		{ "mad_tx_busy_failed", xc ? xc->tx_busy_failed : 0 },
		{ "mad_tx_deferred", cmd->counters.mad_tx_deferred },
		{ "mad_tx_unreachable", cmd->counters.mad_tx_unreachable },
		{ "neigh_resolutions", xc ? xc->neigh_started : 0 },
		{ "neigh_resolved", xc ? xc->neigh_resolved : 0 },
		{ "neigh_failed", xc ? xc->neigh_failed : 0 },
		{ "neigh_pending", xc ? xc->neigh_pending : 0 },
		{ "unreachable", e->unreachable },
		{ "mad_malformed", cmd->counters.mad_malformed },
		{ "mad_reserved_set", cmd->counters.mad_reserved_set },
		{ "port_events", cmd->counters.port_events },
		{ "req_delivered", e->req_delivered },
		{ "req_held", e->req_held },
		{ "req_rejected_backlog", e->req_rejected_backlog },
		{ "req_no_listener", e->req_no_listener },
		{ "stale_rejected", e->stale_rejected },
		{ "timeouts", e->timeouts },
		{ "unexpected_api", e->unexpected_api },
		{ "established_early", e->established_early },
		{ "port_down", e->port_down },
		{ "port_down_ids", e->port_down_ids },
		{ "clients", srv_client_count(cmd->srv) },
		{ "clients_accepted", s->clients_accepted },
		{ "clients_refused", s->clients_refused },
		{ "clients_dropped", s->clients_dropped },
		{ "client_requests", s->requests },
		{ "client_malformed", s->malformed },
		{ "client_replies_omitted", s->replies_omitted },
		{ "client_reads_paused", s->reads_paused },
		{ "events_sent", s->events_sent },
		{ "ids", cmd->ids.n },
		{ "records", eng_record_count(cmd->eng) },
		{ "capture_active", cmd->cap != NULL },
		{ "captures_started", cmd->counters.captures_started },
		{ "capture_records", cs ? cs->records : 0 },
		{ "capture_dropped", cs ? cs->dropped : 0 },
		{ "setup_count", cmd->counters.setup_count },
		{ "setup_us_sum", cmd->counters.setup_us_sum },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(flat); i++)
		cset_add(set, flat[i].value, "%s", flat[i].name);
	heap_stats(&heap_in_use, &heap_retained);
	cset_add(set, heap_in_use, "heap_in_use");
	cset_add(set, heap_retained, "heap_retained");
	cset_add(set, e->spare_bytes + s->spare_bytes, "heap_cached");
	cset_per_type(set, "sent", e->sent);
	cset_per_type(set, "received", e->received);
	cset_per_type(set, "retransmitted", e->retransmitted);
	cset_per_type(set, "duplicates", e->duplicates);
	cset_per_type(set, "unexpected", e->unexpected);
	cset_per_type(set, "malformed", e->malformed);
	/* Connections by state: every record, listeners and destroyed ids
	 * in their protocol tail included. */
	eng_walk(cmd->eng, count_state, by_state);
	for (unsigned int st = 0; st < ENG_STATE__COUNT; st++)
		cset_add(set, by_state[st], "conns_%s",
			 eng_state_name((enum eng_state)st));
	for (unsigned int b = 0; b + 1 < CMD_SETUP_BUCKETS; b++)
		cset_add(set, cmd->counters.setup_us[b], "setup_us_le_%llu",
			 1ULL << b);
	cset_add(set, cmd->counters.setup_us[CMD_SETUP_BUCKETS - 1],
		 "setup_us_le_inf");
}

static int counters_port(struct cmd *cmd, const struct cmp_counters *r,
			 struct counter_set *set)
{
	static const char *const kind[CMD_PC__COUNT] = {
		"sent",	      "received",   "retransmitted",
		"duplicates", "unexpected", "malformed",
	};
	const struct cmd_port_counters *pc = NULL;
	const struct xport_port *p = NULL;

	for (unsigned int i = 0; cmd->xport && i < cmd->n_ports; i++) {
		p = xport_port(cmd->xport,
			       (uint16_t)(cmd->xport->first_index + i));
		if (p && p->port_num == r->port_num &&
		    !strncmp(p->dev, r->dev_name, sizeof(r->dev_name))) {
			pc = cmd_port_counters(cmd, p->index);
			break;
		}
	}
	if (!pc)
		return -ENODEV;
	cset_add(set, p->up && p->state == XPORT_PORT_ACTIVE, "port_active");
	cset_add(set, pc->mad_rx, "mad_rx");
	cset_add(set, pc->mad_tx, "mad_tx");
	cset_add(set, pc->mad_tx_errors, "mad_tx_errors");
	cset_add(set, pc->mad_malformed, "mad_malformed");
	for (unsigned int k = 0; k < CMD_PC__COUNT; k++)
		cset_per_type(set, kind[k], pc->msg[k]);
	return 0;
}

static void counters_client(struct cmd *cmd, struct srv_client *c,
			    struct counter_set *set)
{
	struct api_client *ac = client_of(cmd, c);
	uint64_t listeners = 0, established = 0;
	struct api_id *a;

	if (ac) {
		LIST_FOREACH(a, &ac->ids, link)
		{
			listeners += a->listener;
			established +=
				state_of(cmd, a->id) == CMP_STATE_ESTABLISHED;
		}
	}
	cset_add(set, ac ? ac->nids : 0, "ids");
	cset_add(set, listeners, "listeners");
	cset_add(set, established, "established");
	cset_add(set, ac ? ac->requests : 0, "requests");
	cset_add(set, ac ? ac->events_sent : 0, "events_sent");
}

static int do_counters(struct cmd *cmd, struct srv_client *c,
		       const struct cmp_counters *r,
		       struct cmp_counters_reply *out)
{
	static struct cmp_counter all[API_COUNTERS_MAX];
	struct counter_set set = { .c = all };
	uint64_t i = r->cursor;
	int rc = 0;

	switch ((enum cmp_counter_scope)r->scope) {
	case CMP_COUNTER_SCOPE_GLOBAL:
		if (!may_see_all(cmd, c))
			return -EPERM;
		counters_global(cmd, &set);
		break;
	case CMP_COUNTER_SCOPE_PORT:
		if (!may_see_all(cmd, c))
			return -EPERM;
		rc = counters_port(cmd, r, &set);
		break;
	case CMP_COUNTER_SCOPE_CLIENT:
		counters_client(cmd, c, &set);
		break;
	}
	if (rc)
		return rc;
	for (; out->count < CMP_COUNTERS_BATCH_MAX && i < set.n; i++)
		out->entries[out->count++] = all[i];
	out->next_cursor = i < set.n ? i : 0;
	return 0;
}

/* ops: CAPTURE, for root and the admin group; the daemon opens the file. */
static int do_capture(struct cmd *cmd, struct srv_client *c,
		      const struct cmp_capture *r)
{
	int rc;

	if (!may_see_all(cmd, c))
		return -EPERM;
	if (r->op == CMP_CAPTURE_STOP)
		return cmd_capture(cmd, NULL);
	if (r->path[0] != '/')
		return -EINVAL;
	rc = cmd_capture(cmd, r->path);
	log_notice("client %llu (%s, pid %d uid %u): capture to %s: %s",
		   (unsigned long long)srv_client_serial(c), srv_client_name(c),
		   (int)srv_client_pid(c), (unsigned int)srv_client_uid(c),
		   r->path, rc ? strerror(-rc) : "started");
	return rc;
}

static uint8_t port_gid_type(enum xport_gid_type t)
{
	switch (t) {
	case XPORT_GID_IB:
		return CMP_GID_TYPE_IB;
	case XPORT_GID_ROCE_V1:
		return CMP_GID_TYPE_ROCE_V1;
	case XPORT_GID_ROCE_V2:
		return CMP_GID_TYPE_ROCE_V2;
	}
	return CMP_GID_TYPE_IB;
}

static void port_entry(const struct xport_port *p, struct cmp_port_entry *e)
{
	snprintf(e->dev_name, sizeof(e->dev_name), "%s", p->dev);
	e->node_guid = p->node_guid;
	e->port_guid = p->port_guid;
	e->port_index = p->index;
	e->lid = p->lid;
	e->sm_lid = p->sm_lid;
	e->n_gids = p->n_gids;
	e->port_num = p->port_num;
	e->up = p->up;
	/* What the decoder accepts; a value verbs made up reads as NOP. */
	e->state = p->state <= XPORT_PORT_ACTIVE_DEFER ? (uint8_t)p->state :
							 CMP_PORT_STATE_NOP;
	e->link_layer = p->link == XPORT_LINK_ROCE ? CMP_LINK_LAYER_ROCE :
						     CMP_LINK_LAYER_IB;
	e->active_mtu = path_mtu_enum(p->active_mtu);
	e->lmc = p->lmc & 7;
	e->sm_sl = p->sm_sl & CMP_SL_MAX;
	for (unsigned int g = 0; g < p->n_gids && g < CMP_PORT_GIDS; g++) {
		e->gids[g].index = p->gids[g].index;
		e->gids[g].type = port_gid_type(p->gids[g].type);
		memcpy(e->gids[g].gid, p->gids[g].raw, CM_GID_SIZE);
	}
}

/*
 * Every served port, for every client: port attributes are no secret. The
 * cursor is the position in the transport's table, which never changes
 * while the daemon runs (a removed port stays, with up false).
 */
static int do_ports(struct cmd *cmd, const struct cmp_ports *r,
		    struct cmp_ports_reply *out)
{
	unsigned int n = cmd->xport ? xport_port_count(cmd->xport) : 0;
	uint64_t i = r->cursor;

	for (; out->count < CMP_PORTS_BATCH_MAX && i < n; i++) {
		const struct xport_port *p = xport_port(
			cmd->xport, (uint16_t)(cmd->xport->first_index + i));

		if (p)
			port_entry(p, &out->entries[out->count++]);
	}
	out->next_cursor = i < n ? i : 0;
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

/* The server answers HELLO itself (server.c); it never comes here. */
API_HANDLER(hello)
{
	return -EPROTO;
}

API_HANDLER(create_id)
{
	return do_create(cmd, c, &req->create_id, reply);
}

API_HANDLER(destroy_id)
{
	int rc = eng_destroy(cmd->eng, a->id, now);

	id_del(cmd, a);
	return rc == -ENOENT ? 0 : rc;
}

API_HANDLER(set_context)
{
	int rc = eng_set_context(cmd->eng, a->id, req->set_context.context);

	if (!rc)
		a->info.context = req->set_context.context;
	return rc;
}

API_HANDLER(listen)
{
	return do_listen(cmd, a, &req->listen);
}

/* CONNECT with id CMP_ID_NONE creates its id. */
API_HANDLER(connect)
{
	if (!a)
		return do_connect_new(cmd, c, &req->connect, reply);
	return do_connect(cmd, a, &req->connect);
}

API_HANDLER(accept)
{
	return do_accept(cmd, a, &req->accept);
}

API_HANDLER(reject)
{
	return do_reject(cmd, a, &req->reject);
}

API_HANDLER(rtu)
{
	return do_rtu(cmd, a, &req->rtu);
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

API_HANDLER(lap)
{
	return do_lap(cmd, a, &req->lap);
}

API_HANDLER(apr)
{
	return eng_apr(cmd->eng, a->id, req->apr.ap_status, req->apr.info,
		       req->apr.info_len, req->apr.private_data,
		       req->apr.private_data_len, now);
}

API_HANDLER(sidr_req)
{
	return do_sidr_req(cmd, a, &req->sidr_req);
}

API_HANDLER(sidr_rep)
{
	return do_sidr_rep(cmd, a, &req->sidr_rep);
}

API_HANDLER(ack_event)
{
	return do_ack(cmd, a, &req->ack_event);
}

API_HANDLER(query_id)
{
	return do_query(cmd, a, &reply->query_id_reply);
}

API_HANDLER(list)
{
	return do_list(cmd, c, &req->list, &reply->list_reply);
}

API_HANDLER(counters)
{
	return do_counters(cmd, c, &req->counters, &reply->counters_reply);
}

API_HANDLER(ports)
{
	return do_ports(cmd, &req->ports, &reply->ports_reply);
}

API_HANDLER(capture)
{
	return do_capture(cmd, c, &req->capture);
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
	if (id != CMP_ID_NONE && !(a = id_of(cmd, c, id)))
		return -ENOENT;
	return api_handlers[req->hdr.type](cmd, c, a, req, reply, cmd_now());
}

void api_request(void *ctx, struct srv_client *c, const struct cmp_msg *req,
		 struct cmp_msg *reply)
{
	struct cmd *cmd = ctx;

	/* The first request after HELLO introduces the client to the API. */
	if (!client_of(cmd, c)) {
		struct api_client *ac = calloc(1, sizeof(*ac));

		if (!ac || hmap_put(&cmd->clients, srv_client_serial(c), ac)) {
			free(ac);
			reply->reply.status = -ENOMEM;
			return;
		}
		ac->client = c;
		ac->admin = -1;
		LIST_INIT(&ac->ids);
	}
	client_of(cmd, c)->requests++;
	reply->reply.status = dispatch(cmd, c, req, reply);
}

void api_client_gone(void *ctx, struct srv_client *c)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = hmap_get(&cmd->clients, srv_client_serial(c));
	struct api_id *a;
	int n;

	if (!ac)
		return;
	/* The engine finishes each id's protocol (REJ, DREQ, DREP) and
	 * delivers nothing more for them. */
	n = eng_destroy_owner(cmd->eng, srv_client_serial(c), cmd_now());
	while ((a = LIST_FIRST(&ac->ids)))
		id_del(cmd, a);
	hmap_del(&cmd->clients, srv_client_serial(c));
	if (n > 0)
		log_info("client %llu (%s, pid %d) went away: destroyed %d "
			 "ids",
			 (unsigned long long)srv_client_serial(c),
			 srv_client_name(c), (int)srv_client_pid(c), n);
	free(ac);
}

/*
 * The local ACK timeout exponent for a QP whose peer acks within
 * 4.096 us * 2^ack_delay over a path of packet life time plt: the round
 * trip (plt + 1) or the peer's delay, whichever dominates, plus one when
 * the two are close (the kernel's cm_ack_timeout does the same).
 */
static uint8_t ack_timeout(uint8_t ack_delay, uint8_t plt)
{
	int t = plt + 1;

	if (t >= ack_delay)
		t += ack_delay >= t - 1;
	else
		t = ack_delay + (t >= ack_delay - 1);
	return (uint8_t)(t > 31 ? 31 : t);
}

static enum cmp_cm_msg cm_msg_ref(enum eng_event_type t)
{
	switch (t) {
	case ENG_EV_REQ_ERROR:
		return CMP_CM_MSG_REQ;
	case ENG_EV_REP_ERROR:
		return CMP_CM_MSG_REP;
	case ENG_EV_SIDR_REQ_ERROR:
		return CMP_CM_MSG_SIDR_REQ;
	default:
		return CMP_CM_MSG_NONE;
	}
}

/* Fill the event body from the engine's event; returns the cmp type. */
static enum cmp_event_type event_body(struct cmd *cmd, struct api_id *a,
				      const struct eng_event *ev,
				      struct cmp_event *e)
{
	const struct cm_msg *m = &ev->msg;

	switch (ev->type) {
	case ENG_EV_REQ_RECEIVED: {
		struct cmp_ev_req *b = &e->req_received;

		b->listen_id = ev->listen_id;
		b->remote_comm_id = m->req.local_comm_id;
		b->remote_qpn = m->req.local_qpn;
		b->start_psn = m->req.starting_psn;
		b->service_id = m->req.service_id;
		b->remote_ca_guid = m->req.local_ca_guid;
		b->qp_type = m->req.transport_type == CM_TRANSPORT_UC ?
				     CMP_QP_TYPE_UC :
				     CMP_QP_TYPE_RC;
		b->responder_resources = m->req.responder_resources;
		b->initiator_depth = m->req.initiator_depth;
		b->flow_control = m->req.flow_control;
		b->retry_count = m->req.retry_count;
		b->rnr_retry_count = m->req.rnr_retry_count;
		b->srq = m->req.srq;
		b->private_data_len = CM_REQ_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->req.private_data,
		       CM_REQ_PRIVATE_DATA_SIZE);
		path_from_req(cmd->xport, &ev->addr, &m->req, &b->path);
		a->qp_type = b->qp_type;
		a->info.qp_type = b->qp_type;
		a->info.listen_id = ev->listen_id;
		a->info.local_comm_id = ev->id; /* an id is its comm id */
		a->info.service_id = m->req.service_id;
		a->info.remote_ca_guid = m->req.local_ca_guid;
		a->info.remote_comm_id = m->req.local_comm_id;
		a->info.remote_qpn = m->req.local_qpn;
		a->info.remote_psn = m->req.starting_psn;
		/* From our side: the requester's initiator depth bounds our
		 * responder resources and vice versa (as the kernel's
		 * cm_req_handler sets them until the app accepts). */
		a->info.responder_resources = m->req.initiator_depth;
		a->info.initiator_depth = m->req.responder_resources;
		a->info.flow_control = m->req.flow_control;
		a->info.retry_count = m->req.retry_count;
		a->info.rnr_retry_count = m->req.rnr_retry_count;
		a->info.srq = m->req.srq;
		a->info.path = b->path;
		return CMP_EVENT_REQ_RECEIVED;
	}
	case ENG_EV_REP_RECEIVED: {
		struct cmp_ev_rep *b = &e->rep_received;

		b->remote_qpn = m->rep.local_qpn;
		b->start_psn = m->rep.starting_psn;
		b->remote_ca_guid = m->rep.local_ca_guid;
		b->responder_resources = m->rep.responder_resources;
		b->initiator_depth = m->rep.initiator_depth;
		b->target_ack_delay = m->rep.target_ack_delay;
		b->failover = m->rep.failover_accepted <= CMP_FAILOVER_MAX ?
				      m->rep.failover_accepted :
				      CMP_FAILOVER_REJECTED;
		b->flow_control = m->rep.flow_control;
		b->rnr_retry_count = m->rep.rnr_retry_count;
		b->srq = m->rep.srq;
		b->private_data_len = CM_REP_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->rep.private_data,
		       CM_REP_PRIVATE_DATA_SIZE);
		/* The QP's ACK timeout covers the peer's ACK delay too. */
		a->info.path.local_ack_timeout = ack_timeout(
			m->rep.target_ack_delay, a->info.path.packet_life_time);
		b->path = a->info.path;
		a->info.responder_resources = m->rep.initiator_depth;
		a->info.initiator_depth = m->rep.responder_resources;
		a->info.remote_comm_id = m->rep.local_comm_id;
		a->info.remote_qpn = m->rep.local_qpn;
		a->info.remote_psn = m->rep.starting_psn;
		a->info.remote_ca_guid = m->rep.local_ca_guid;
		a->info.target_ack_delay = m->rep.target_ack_delay;
		return CMP_EVENT_REP_RECEIVED;
	}
	case ENG_EV_RTU_RECEIVED:
		if (ev->has_msg) {
			e->established.private_data_len =
				CM_RTU_PRIVATE_DATA_SIZE;
			memcpy(e->established.private_data, m->rtu.private_data,
			       CM_RTU_PRIVATE_DATA_SIZE);
		}
		return CMP_EVENT_ESTABLISHED;
	case ENG_EV_REJ_RECEIVED:
		e->rej_received.reason = m->rej.reason;
		e->rej_received.ari_len = m->rej.ari_length;
		memcpy(e->rej_received.ari, m->rej.ari, m->rej.ari_length);
		e->rej_received.private_data_len = CM_REJ_PRIVATE_DATA_SIZE;
		memcpy(e->rej_received.private_data, m->rej.private_data,
		       CM_REJ_PRIVATE_DATA_SIZE);
		return CMP_EVENT_REJ_RECEIVED;
	case ENG_EV_REQ_ERROR:
	case ENG_EV_REP_ERROR:
	case ENG_EV_SIDR_REQ_ERROR:
		e->connect_error.msg = (uint8_t)cm_msg_ref(ev->type);
		if (!e->status)
			e->status = -ETIMEDOUT;
		return CMP_EVENT_CONNECT_ERROR;
	case ENG_EV_DREQ_RECEIVED:
		if (ev->has_msg) {
			e->dreq_received.private_data_len =
				CM_DREQ_PRIVATE_DATA_SIZE;
			memcpy(e->dreq_received.private_data,
			       m->dreq.private_data, CM_DREQ_PRIVATE_DATA_SIZE);
		}
		return CMP_EVENT_DREQ_RECEIVED;
	case ENG_EV_DREQ_ERROR:
		return CMP_EVENT_DISCONNECT_TIMEOUT;
	case ENG_EV_DREP_RECEIVED:
		if (ev->has_msg && m->type == CM_MSG_DREP) {
			e->drep_received.private_data_len =
				CM_DREP_PRIVATE_DATA_SIZE;
			memcpy(e->drep_received.private_data,
			       m->drep.private_data, CM_DREP_PRIVATE_DATA_SIZE);
		}
		return CMP_EVENT_DREP_RECEIVED;
	case ENG_EV_TIMEWAIT_EXIT:
		return CMP_EVENT_TIMEWAIT_EXIT;
	case ENG_EV_LAP_RECEIVED: {
		struct cmp_path *p = &e->lap_received.alt_path;

		p->local_lid = m->lap.alt_remote_lid;
		p->remote_lid = m->lap.alt_local_lid;
		memcpy(p->local_gid, m->lap.alt_remote_gid, CM_GID_SIZE);
		memcpy(p->remote_gid, m->lap.alt_local_gid, CM_GID_SIZE);
		p->flow_label = m->lap.alt_flow_label;
		p->traffic_class = m->lap.alt_traffic_class;
		p->hop_limit = m->lap.alt_hop_limit;
		p->packet_rate = m->lap.alt_packet_rate;
		p->sl = m->lap.alt_sl;
		p->local_ack_timeout = m->lap.alt_local_ack_timeout;
		e->lap_received.private_data_len = CM_LAP_PRIVATE_DATA_SIZE;
		memcpy(e->lap_received.private_data, m->lap.private_data,
		       CM_LAP_PRIVATE_DATA_SIZE);
		return CMP_EVENT_LAP_RECEIVED;
	}
	case ENG_EV_LAP_ERROR:
		if (!e->status)
			e->status = -ETIMEDOUT;
		return CMP_EVENT_APR_RECEIVED;
	case ENG_EV_PORT_ERROR:
		/* The connection stays; its port is gone (-ENETDOWN). */
		e->port.port_num = a->info.path.port_num;
		memcpy(e->port.dev_name, a->info.path.dev_name,
		       sizeof(e->port.dev_name));
		return CMP_EVENT_PORT_ERROR;
	case ENG_EV_APR_RECEIVED:
		e->apr_received.ap_status = m->apr.status;
		e->apr_received.info_len = m->apr.info_length;
		memcpy(e->apr_received.info, m->apr.info, m->apr.info_length);
		e->apr_received.private_data_len = CM_APR_PRIVATE_DATA_SIZE;
		memcpy(e->apr_received.private_data, m->apr.private_data,
		       CM_APR_PRIVATE_DATA_SIZE);
		return CMP_EVENT_APR_RECEIVED;
	case ENG_EV_SIDR_REQ_RECEIVED: {
		struct cmp_ev_sidr_req *b = &e->sidr_req_received;

		b->listen_id = ev->listen_id;
		b->service_id = m->sidr_req.service_id;
		b->private_data_len = CM_SIDR_REQ_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->sidr_req.private_data,
		       CM_SIDR_REQ_PRIVATE_DATA_SIZE);
		path_from_addr(cmd->xport, &ev->addr, m->sidr_req.pkey,
			       &b->path);
		a->qp_type = CMP_QP_TYPE_UD;
		a->info.qp_type = CMP_QP_TYPE_UD;
		a->info.listen_id = ev->listen_id;
		a->info.service_id = b->service_id;
		a->info.path = b->path;
		return CMP_EVENT_SIDR_REQ_RECEIVED;
	}
	case ENG_EV_SIDR_REP_RECEIVED: {
		struct cmp_ev_sidr_rep *b = &e->sidr_rep_received;

		b->qpn = m->sidr_rep.qpn;
		b->qkey = m->sidr_rep.qkey;
		b->status = m->sidr_rep.status;
		b->private_data_len = CM_SIDR_REP_PRIVATE_DATA_SIZE;
		memcpy(b->private_data, m->sidr_rep.private_data,
		       CM_SIDR_REP_PRIVATE_DATA_SIZE);
		b->path = a->info.path;
		a->info.remote_qpn = b->qpn;
		a->info.qkey = b->qkey;
		return CMP_EVENT_SIDR_REP_RECEIVED;
	}
	case ENG_EV__COUNT:
		break;
	}
	return 0;
}

/*
 * ops: the connection setup latency histogram. The active side times from
 * its REQ (CONNECT) to the REP's event, the passive side from the REQ's
 * event to the RTU's (or NOTIFY_ESTABLISHED's) ESTABLISHED.
 */
static void setup_latency(struct cmd *cmd, struct api_id *a,
			  enum eng_event_type type)
{
	uint64_t us;
	unsigned int b = 0;

	if (type == ENG_EV_REQ_RECEIVED) {
		a->setup_start = cmd_now();
		return;
	}
	if ((type != ENG_EV_REP_RECEIVED && type != ENG_EV_RTU_RECEIVED) ||
	    !a->setup_start)
		return;
	us = (cmd_now() - a->setup_start) / 1000;
	a->setup_start = 0;
	while (b + 1 < CMD_SETUP_BUCKETS && us > (1ULL << b))
		b++;
	cmd->counters.setup_us[b]++;
	cmd->counters.setup_count++;
	cmd->counters.setup_us_sum += us;
}

bool api_owner_has_room(void *ctx, uint64_t owner)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = hmap_get(&cmd->clients, owner);

	return ac && ac->nids < cmd->cfg.max_ids &&
	       authz_id_room(cmd->cfg.authz, srv_client_uid(ac->client));
}

void api_deliver(void *ctx, const struct eng_event *ev)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = hmap_get(&cmd->clients, ev->owner);
	struct api_id *a = hmap_get(&cmd->ids, ev->id);
	struct cmp_msg msg;
	enum cmp_event_type type;

	if (!ac) {
		/* The engine never delivers to a destroyed owner; if it
		 * did, there is nobody to tell. */
		log_err("event %s for id %u of unknown client %llu",
			eng_event_name(ev->type), ev->id,
			(unsigned long long)ev->owner);
		return;
	}
	if (!a) {
		/* A new passive id: it belongs to its listener's owner. */
		a = id_add(cmd, ac->client, ev->id, CMP_QP_TYPE_RC);
		if (!a) {
			log_err("out of memory for id %u", ev->id);
			return;
		}
	}
	cmp_msg_init(&msg, CMP_TYPE_EVENT, ++a->ev_seq);
	if (!a->ev_seq) /* sequence numbers skip 0 (cmp.h) */
		msg.hdr.seq = ++a->ev_seq;
	msg.event.id = ev->id;
	msg.event.status = ev->status;
	msg.event.context = ev->context;
	type = event_body(cmd, a, ev, &msg.event);
	msg.event.type = (uint16_t)type;
	/* The engine's state after the event, for the library to record. */
	msg.event.state = (uint8_t)ev->state;
	msg.event.lap_state = (uint8_t)ev->lap;
	a->unacked_seq = msg.hdr.seq;
	setup_latency(cmd, a, ev->type);
	if (!srv_send(a->client, &msg))
		ac->events_sent++;
}

void api_port_down(struct cmd *cmd, uint16_t port, bool removed)
{
	/* Open handshakes on the port fail now (-ENETDOWN) instead of
	 * retrying into the void; established ones are told and stay. */
	int n = eng_port_down(cmd->eng, port, cmd_now());

	if (n > 0)
		log_info("port %u %s: told the owners of %d ids", port,
			 removed ? "removed" : "down", n);
}
