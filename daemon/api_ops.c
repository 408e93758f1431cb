// SPDX-License-Identifier: MIT
/*
 * ops: what the daemon tells about itself -- LIST (ids, listeners,
 * connections), COUNTERS (global, per port, per client), PORTS,
 * CAPTURE start and stop, PATHS (the SA path cache, and its flush) --
 * and who may see how much of it (root, the admin group, everyone for
 * their own).
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "authz.h"
#include "capture.h"
#include "cmd.h"
#include "log.h"
#include "refuse.h"
#include "util.h"

/*
 * ops: root, or a member of the configured admin group, may read every
 * client's ids, the GLOBAL and PORT counters, and start or stop a
 * capture. Decided at the client's first privileged request and kept for
 * the connection's life, as its SO_PEERCRED credentials are.
 */
static bool may_see_all(struct cmd *cmd, struct srv_client *c)
{
	struct api_client *ac = api_client_of(cmd, c);
	bool ok;

	if (srv_client_uid(c) == 0)
		return true;
	if (!cmd->cfg.has_admin_gid)
		return false;
	if (ac && ac->admin >= 0)
		return ac->admin;
	ok = authz_is_admin(srv_client_uid(c), srv_client_gid(c),
			    srv_client_pid(c), &cmd->cfg.admin_gid);
	if (ac)
		ac->admin = ok;
	return ok;
}

/* Where a listener listens (a->path, see path_listen_sel), for LIST. */
static void list_sel(struct cmd *cmd, const struct api_id *a,
		     struct cmp_list_entry *e)
{
	const struct cmp_path *path = api_id_path(a);
	struct cmp_port_sel sel = { .kind = CMP_SEL_PORT,
				    .port_num = path->port_num };
	const struct xport_port *p;

	e->sel = a->sel;
	memcpy(e->listen_gid, path->local_gid, CM_GID_SIZE);
	if (a->sel != CMP_SEL_PORT)
		return;
	memcpy(sel.dev_name, path->dev_name, sizeof(sel.dev_name));
	e->sel_port_num = path->port_num;
	p = path_sel_port(cmd->xport, &sel);
	if (p)
		e->sel_port_index = p->index;
}

/* A connection's port, peer and QPs, for LIST (cmp.h). */
static void list_conn(struct cmd *cmd, const struct api_id *a,
		      const struct eng_id_info *f, struct cmp_list_entry *e)
{
	const struct cmp_path *path = api_id_path(a);
	struct cmp_port_sel sel = { .kind = CMP_SEL_PORT,
				    .port_num = path->port_num };
	const struct xport_port *p = NULL;

	memcpy(e->remote_gid, path->remote_gid, CM_GID_SIZE);
	e->remote_lid = path->remote_lid;
	e->grh = path->grh ? 1 : 0;
	e->local_qpn = f->local_qpn & CMP_QPN_MAX;
	e->remote_qpn = f->remote_qpn & CMP_QPN_MAX;
	if (!path->port_num || !path->dev_name[0])
		return;
	memcpy(sel.dev_name, path->dev_name, sizeof(sel.dev_name));
	p = path_sel_port(cmd->xport, &sel);
	if (!p)
		return;
	e->port_index = p->index;
	e->port_num = path->port_num;
}

int api_ops_list(struct cmd *cmd, struct srv_client *c,
		 const struct cmp_list *r, struct cmp_list_reply *out)
{
	uint64_t pos = r->cursor;
	struct api_id *a = NULL;
	struct eng_id_info f;

	while (out->count < CMP_LIST_BATCH_MAX &&
	       (a = htable_entry(htable_walk(&cmd->ids, &pos), struct api_id,
				 hnode))) {
		struct cmp_list_entry *e = &out->entries[out->count];

		if (a->client != c && !may_see_all(cmd, c))
			continue;
		if (r->filter == CMP_LIST_FILTER_LISTENERS && !a->listener)
			continue;
		if (r->filter == CMP_LIST_FILTER_CONNECTIONS && a->listener)
			continue;
		if (eng_id_info(cmd->eng, a->id, &f))
			memset(&f, 0, sizeof(f));
		e->id = a->id;
		e->state = (uint8_t)f.state;
		e->lap_state = (uint8_t)f.lap;
		e->qp_type = a->qp_type;
		e->service_id = f.service_id;
		e->service_mask = f.service_mask;
		e->local_comm_id = f.local_comm_id;
		e->remote_comm_id = f.remote_comm_id;
		e->owner_pid = (uint32_t)srv_client_pid(a->client);
		e->owner_uid = (uint32_t)srv_client_uid(a->client);
		e->backlog = f.backlog;
		e->credits_in_use = f.credits_used;
		e->held_reqs = f.held;
		if (a->listener)
			list_sel(cmd, a, e);
		else
			list_conn(cmd, a, &f, e);
		/* /proc/PID/comm as read at accept; where the daemon could
		 * not read it, the name the client gave in HELLO (server.c,
		 * client_read_comm). */
		snprintf(e->owner_comm, sizeof(e->owner_comm), "%s",
			 srv_client_comm(a->client)[0] ?
				 srv_client_comm(a->client) :
				 srv_client_name(a->client));
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

/* The SA client and the path cache (sa_paths.h), as sa_*. */
static void counters_sa(struct cmd *cmd, struct counter_set *set)
{
	const struct sa_client_counters *a =
		cmd->sa ? sa_paths_client_counters(cmd->sa) : NULL;
	const struct path_cache_counters *p =
		cmd->sa ? sa_paths_cache_counters(cmd->sa) : NULL;
	const struct xport_counters *xc =
		cmd->xport ? xport_counters(cmd->xport) : NULL;
	const struct {
		const char *name;
		uint64_t value;
	} flat[] = {
		{ "sa_queries", a ? a->queries : 0 },
		{ "sa_joined", cmd->sa ? sa_paths_joined(cmd->sa) : 0 },
		{ "sa_answered", a ? a->answered : 0 },
		{ "sa_failed", a ? a->failed : 0 },
		{ "sa_sent", a ? a->sent : 0 },
		{ "sa_send_errors", a ? a->send_errors : 0 },
		{ "sa_timeouts", a ? a->timeouts : 0 },
		{ "sa_busy", a ? a->busy : 0 },
		{ "sa_redirects", a ? a->redirects : 0 },
		{ "sa_errors", a ? a->sa_errors : 0 },
		{ "sa_no_records", a ? a->no_records : 0 },
		{ "sa_rx", a ? a->rx : 0 },
		{ "sa_rx_malformed", a ? a->rx_malformed : 0 },
		{ "sa_rx_unmatched", a ? a->rx_unmatched : 0 },
		{ "sa_rx_unanswered", xc ? xc->rx_sa_status : 0 },
		{ "sa_rx_cut", xc ? xc->rx_sa_cut : 0 },
		{ "sa_class_port_info_queries", a ? a->cpi_queries : 0 },
		{ "sa_in_flight", a ? a->in_flight : 0 },
		{ "sa_cache_hits", p ? p->hits : 0 },
		{ "sa_cache_misses", p ? p->misses : 0 },
		{ "sa_cache_inserted", p ? p->inserted : 0 },
		{ "sa_cache_expired", p ? p->expired : 0 },
		{ "sa_cache_flushed", p ? p->flushed : 0 },
		{ "sa_cache_evicted", p ? p->evicted : 0 },
		{ "sa_cache_entries", p ? p->entries : 0 },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(flat); i++)
		cset_add(set, flat[i].value, "%s", flat[i].name);
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
	uint64_t heap_in_use, heap_retained, cumulative = 0;
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
		{ "device_removed", e->device_removed },
		{ "device_removed_ids", e->device_removed_ids },
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
		{ "handoffs_restored", cmd->counters.handoffs_restored },
		{ "handoffs_refused", cmd->counters.handoffs_refused },
		{ "sessions_waiting", srv_sessions_waiting(cmd->srv) },
		{ "sessions_resumed", s->sessions_resumed },
		{ "sessions_expired", s->sessions_expired },
		{ "setup_count", cmd->counters.setup_count },
		{ "setup_us_sum", cmd->counters.setup_us_sum },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(flat); i++)
		cset_add(set, flat[i].value, "%s", flat[i].name);
	counters_sa(cmd, set);
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
	/* setup_us_le_N counts the setups of at most N us, as its name and
	 * a Prometheus "le" bucket say: cumulative, so le_inf counts them
	 * all (setup_count). The daemon keeps them per bucket. */
	for (unsigned int b = 0; b < CMD_SETUP_BUCKETS; b++) {
		cumulative += cmd->counters.setup_us[b];
		if (b + 1 < CMD_SETUP_BUCKETS)
			cset_add(set, cumulative, "setup_us_le_%llu",
				 1ULL << b);
		else
			cset_add(set, cumulative, "setup_us_le_inf");
	}
}

static int counters_port(struct cmd *cmd, const struct cmp_counters *r,
			 struct counter_set *set)
{
	static const char *const kind[ENG_MSG__COUNT] = {
		[ENG_MSG_SENT] = "sent",
		[ENG_MSG_RECEIVED] = "received",
		[ENG_MSG_RETRANSMITTED] = "retransmitted",
		[ENG_MSG_DUPLICATES] = "duplicates",
		[ENG_MSG_UNEXPECTED] = "unexpected",
		[ENG_MSG_MALFORMED] = "malformed",
	};
	const struct eng_port_counters *ec;
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
		return refuse(-ENODEV, "COUNTERS: no port %.*s/%u",
			      (int)sizeof(r->dev_name), r->dev_name,
			      r->port_num);
	cset_add(set, p->up && p->state == XPORT_PORT_ACTIVE, "port_active");
	cset_add(set, pc->mad_rx, "mad_rx");
	cset_add(set, pc->mad_tx, "mad_tx");
	cset_add(set, pc->mad_tx_errors, "mad_tx_errors");
	cset_add(set, pc->mad_malformed, "mad_malformed");
	ec = eng_port_counters(cmd->eng, p->index);
	for (unsigned int k = 0; ec && k < ENG_MSG__COUNT; k++)
		cset_per_type(set, kind[k], ec->msg[k]);
	return 0;
}

static void counters_client(struct cmd *cmd, struct srv_client *c,
			    struct counter_set *set)
{
	struct api_client *ac = api_client_of(cmd, c);
	uint64_t listeners = 0, established = 0;
	struct api_id *a;

	if (ac) {
		LIST_FOREACH(a, &ac->ids, link)
		{
			listeners += a->listener;
			established += api_state_of(cmd, a->id) ==
				       CMP_STATE_ESTABLISHED;
		}
	}
	cset_add(set, ac ? ac->nids : 0, "ids");
	cset_add(set, listeners, "listeners");
	cset_add(set, established, "established");
	cset_add(set, ac ? ac->requests : 0, "requests");
	cset_add(set, ac ? ac->events_sent : 0, "events_sent");
}

int api_ops_counters(struct cmd *cmd, struct srv_client *c,
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
			return refuse(-EPERM, "COUNTERS: the daemon's counters "
					      "are for root and the admin "
					      "group");
		counters_global(cmd, &set);
		break;
	case CMP_COUNTER_SCOPE_PORT:
		if (!may_see_all(cmd, c))
			return refuse(-EPERM, "COUNTERS: port counters are for "
					      "root and the admin group");
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
int api_ops_capture(struct cmd *cmd, struct srv_client *c,
		    const struct cmp_capture *r)
{
	int rc;

	if (!may_see_all(cmd, c))
		return refuse(-EPERM, "capture: for root and the admin group");
	if (r->op == CMP_CAPTURE_STOP)
		return cmd_capture(cmd, NULL);
	if (r->path[0] != '/')
		return refuse(-EINVAL, "capture: %s is not an absolute path",
			      r->path);
	rc = cmd_capture(cmd, r->path);
	if (rc)
		refuse(rc, "capture: cannot open %s: %s", r->path,
		       strerror(-rc));
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
int api_ops_ports(struct cmd *cmd, const struct cmp_ports *r,
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

/* The walk of PATHS: skip the first skip live entries, then fill. */
struct paths_walk {
	struct cmd *cmd;
	struct cmp_paths_reply *out;
	uint64_t skip, seen, now;
	bool more; /* an entry after the batch: the walk goes on */
};

static uint32_t secs_of(uint64_t ns, bool round_up)
{
	uint64_t s = (ns + (round_up ? 999999999u : 0)) / 1000000000u;

	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static int paths_one(void *ctx, const struct path_cache_entry *c)
{
	struct paths_walk *w = ctx;
	const struct sa_path_rec *r = &c->recs[0];
	const struct xport_port *p =
		w->cmd->xport ? xport_port(w->cmd->xport, c->port) : NULL;
	struct cmp_path_entry *e;

	if (w->seen++ < w->skip)
		return 0;
	if (w->out->count == CMP_PATHS_BATCH_MAX) {
		w->more = true;
		return 1;
	}
	e = &w->out->entries[w->out->count++];
	/* Entries are only ever of served ports; "?"/1 keeps the entry one
	 * the decoder takes should that change. */
	snprintf(e->dev_name, sizeof(e->dev_name), "%s",
		 p && p->dev[0] ? p->dev : "?");
	e->port_num = p && p->port_num ? p->port_num : 1;
	e->port_index = c->port;
	memcpy(e->asked_dgid, c->want.dgid, CM_GID_SIZE);
	e->asked_dlid = c->want.dlid;
	memcpy(e->sgid, r->sgid, CM_GID_SIZE);
	memcpy(e->dgid, r->dgid, CM_GID_SIZE);
	e->slid = r->slid;
	e->dlid = r->dlid;
	e->pkey = r->pkey;
	e->sl = r->sl & CMP_SL_MAX;
	e->mtu = r->mtu <= CM_MTU_4096 ? r->mtu : 0;
	e->rate = r->rate & CMP_RATE_MAX;
	e->packet_life_time = r->packet_life_time & CMP_PACKET_LIFE_TIME_MAX;
	e->hop_limit = r->hop_limit;
	e->tclass = r->tclass;
	e->flow_label = r->flow_label & CMP_FLOW_LABEL_MAX;
	if (c->n > 1) {
		e->has_alt = 1;
		e->alt_slid = c->recs[1].slid;
		e->alt_dlid = c->recs[1].dlid;
	}
	e->age_s = secs_of(w->now > c->born ? w->now - c->born : 0, false);
	/* --path-lifetime 0: never; else what is left, at least 1 (the walk
	 * passes only live entries). */
	if (w->cmd->cfg.sa.lifetime_s)
		e->expires_s = c->expires > w->now ?
				       secs_of(c->expires - w->now, true) :
				       1;
	e->hits = c->hits;
	return 0;
}

/*
 * ops: PATHS. Reading is for every client, as PORTS is: a path record
 * is what the SA tells anyone who asks, no secret. Flushing drops what
 * every client's connects would use, so it is for root and the admin
 * group, as CAPTURE is. The cache is a hash table, so the cursor is the
 * number of live entries already sent: a walk racing with answers,
 * expiries or flushes may skip or repeat an entry (as LIST may).
 */
int api_ops_paths(struct cmd *cmd, struct srv_client *c,
		  const struct cmp_paths *r, struct cmp_paths_reply *out)
{
	struct paths_walk w = {
		.cmd = cmd, .out = out, .skip = r->cursor, .now = cmd_now()
	};
	int port = -1;

	if (r->flags & CMP_PATHS_FLUSH) {
		if (!may_see_all(cmd, c))
			return refuse(-EPERM, "paths: flushing the path cache "
					      "is for root and the admin "
					      "group");
		if (r->flags & CMP_PATHS_PORT) {
			if (!cmd->xport ||
			    !xport_port(cmd->xport, r->port_index))
				return refuse(-ENODEV,
					      "paths: no port with index %u",
					      r->port_index);
			port = r->port_index;
		}
		out->flushed = cmd->sa ? sa_paths_flush(cmd->sa, port) : 0;
		log_notice("client %llu (%s, pid %d uid %u): path cache "
			   "flushed (%s): %u entries",
			   (unsigned long long)srv_client_serial(c),
			   srv_client_name(c), (int)srv_client_pid(c),
			   (unsigned int)srv_client_uid(c),
			   port < 0 ? "every port" : "one port", out->flushed);
	}
	if (cmd->sa)
		sa_paths_walk(cmd->sa, paths_one, &w);
	out->next_cursor = w.more ? w.skip + out->count : 0;
	return 0;
}
