// SPDX-License-Identifier: MIT
/*
 * The library's structs to and from the protocol's (proto/cmp.h), member
 * by member, one function per type: the only place the two meet. The
 * public structs are the library's ABI and the protocol is the daemon's,
 * so either may change without the other; what a change touches is here
 * (and in the enum checks of cmc_int.h). This is what librdmacm does with
 * the kernel's ucma structs (ucma_copy_conn_event).
 *
 * Going out, a struct the application filled in is checked for what only
 * the library can tell (reserved space, lengths; cmp_encode() checks the
 * rest) and copied into a request that cmc_req() zeroed. Coming in, every
 * member of the public struct is written, so nothing of the caller's
 * buffer survives and reserved space is zero.
 */
#include "cmc_int.h"

#define CMC_MIN(a, b) ((a) < (b) ? (a) : (b))

/* Bytes, as many as both sides hold; the rest of dst zero. */
static void cmc_bytes(void *dst, size_t dsize, const void *src, size_t ssize)
{
	size_t n = CMC_MIN(dsize, ssize);

	memcpy(dst, src, n);
	memset((uint8_t *)dst + n, 0, dsize - n);
}
#define CMC_BYTES(d, s) cmc_bytes((d), sizeof(d), (s), sizeof(s))

/* A name, truncated to what dst holds with its NUL; the rest zero. */
static void cmc_name(char *dst, size_t dsize, const char *src, size_t ssize)
{
	size_t n = strnlen(src, CMC_MIN(ssize, dsize - 1));

	memcpy(dst, src, n);
	memset(dst + n, 0, dsize - n);
}
#define CMC_NAME(d, s) cmc_name((d), sizeof(d), (s), sizeof(s))

/*
 * Received private data (or ARI, APR info): the len bytes the daemon
 * says, bounded by both areas; the rest of dst zero. Returns the length
 * kept.
 */
static uint8_t cmc_pd(uint8_t *dst, size_t dsize, const uint8_t *src,
		      size_t ssize, uint8_t len)
{
	size_t n = CMC_MIN((size_t)len, CMC_MIN(dsize, ssize));

	memcpy(dst, src, n);
	memset(dst + n, 0, dsize - n);
	return (uint8_t)n;
}
#define CMC_PD(d, dlen, s, slen)                                               \
	((dlen) = cmc_pd((d), sizeof(d), (s), sizeof(s), (slen)))
/* The private data of a body, whose members are named alike both sides. */
#define CMC_PRIVATE_DATA(dst, src)                                             \
	CMC_PD((dst)->private_data, (dst)->private_data_len,                   \
	       (src)->private_data, (src)->private_data_len)

/* The reserved space a caller must leave zero ("Room to grow"). */
static bool cmc_reserved_zero(const uint64_t *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i])
			return false;
	return true;
}
#define CMC_RESERVED_OK(p)                                                     \
	cmc_reserved_zero((p)->reserved,                                       \
			  sizeof((p)->reserved) / sizeof((p)->reserved[0]))
#define CMC_RESERVED_REFUSE(type)                                              \
	cmc_refuse(-EINVAL, "struct " type "'s reserved members not zero")

/*
 * A path's members are named alike on both sides, and both directions
 * copy all of them: one list serves both.
 */
#define CMC_PATH_COPY(dst, src)                                                \
	do {                                                                   \
		(dst)->flow_label = (src)->flow_label;                         \
		(dst)->local_lid = (src)->local_lid;                           \
		(dst)->remote_lid = (src)->remote_lid;                         \
		(dst)->pkey = (src)->pkey;                                     \
		(dst)->pkey_index = (src)->pkey_index;                         \
		(dst)->port_num = (src)->port_num;                             \
		(dst)->mtu = (src)->mtu;                                       \
		(dst)->sl = (src)->sl;                                         \
		(dst)->traffic_class = (src)->traffic_class;                   \
		(dst)->hop_limit = (src)->hop_limit;                           \
		(dst)->packet_rate = (src)->packet_rate;                       \
		(dst)->local_ack_timeout = (src)->local_ack_timeout;           \
		(dst)->sgid_index = (src)->sgid_index;                         \
		(dst)->grh = (src)->grh;                                       \
		(dst)->packet_life_time = (src)->packet_life_time;             \
		CMC_BYTES((dst)->local_gid, (src)->local_gid);                 \
		CMC_BYTES((dst)->remote_gid, (src)->remote_gid);               \
		CMC_NAME((dst)->dev_name, (src)->dev_name);                    \
	} while (0)

/*
 * The values a REQ (IBTA Table 106) and a REP (Table 110) negotiate, named
 * alike in the parameters that send them, the events that report them and
 * QUERY_ID.
 */
#define CMC_REQ_VALUES(dst, src)                                               \
	do {                                                                   \
		(dst)->responder_resources = (src)->responder_resources;       \
		(dst)->initiator_depth = (src)->initiator_depth;               \
		(dst)->flow_control = (src)->flow_control;                     \
		(dst)->retry_count = (src)->retry_count;                       \
		(dst)->rnr_retry_count = (src)->rnr_retry_count;               \
		(dst)->srq = (src)->srq;                                       \
	} while (0)
#define CMC_REP_VALUES(dst, src)                                               \
	do {                                                                   \
		(dst)->responder_resources = (src)->responder_resources;       \
		(dst)->initiator_depth = (src)->initiator_depth;               \
		(dst)->target_ack_delay = (src)->target_ack_delay;             \
		(dst)->failover = (src)->failover;                             \
		(dst)->flow_control = (src)->flow_control;                     \
		(dst)->rnr_retry_count = (src)->rnr_retry_count;               \
		(dst)->srq = (src)->srq;                                       \
	} while (0)

/* A name going out must fit the wire's with its NUL. */
#define CMC_NAME_FITS(d, s) (strnlen((s), sizeof(s)) < sizeof(d))

/* ------------------------------------------------------------------ */
/* Going out */

/* A parameter struct's private data into its request's. */
#define CMC_PRIVATE_DATA_OUT(dst, src)                                         \
	cmc_data((dst)->private_data, sizeof((dst)->private_data),             \
		 &(dst)->private_data_len, (src)->private_data,                \
		 (src)->private_data_len)

/* Private data of a request: len bytes from src, at most max. */
int cmc_data(uint8_t *dst, size_t max, uint8_t *lenp, const void *src,
	     uint8_t len)
{
	if (len > max)
		return cmc_refuse(-EINVAL,
				  "private data of %u bytes, at most "
				  "%zu here",
				  len, max);
	if (len && !src)
		return cmc_refuse(-EINVAL, "private data of %u bytes at NULL",
				  len);
	if (len)
		memcpy(dst, src, len);
	*lenp = len;
	return 0;
}

/* NULL selects every port, as CMC_SEL_ANY does. */
int cmc_port_sel_to_cmp(struct cmp_port_sel *dst,
			const struct cmc_port_sel *src)
{
	if (!src)
		return 0;
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_port_sel");
	if (!CMC_NAME_FITS(dst->dev_name, src->dev_name))
		return cmc_refuse(-EINVAL,
				  "port selector device name longer "
				  "than %zu bytes",
				  sizeof(dst->dev_name) - 1);
	dst->kind = (uint8_t)src->kind;
	dst->port_num = src->port_num;
	CMC_BYTES(dst->gid, src->gid);
	CMC_NAME(dst->dev_name, src->dev_name);
	return 0;
}

int cmc_addr_to_cmp(struct cmp_addr *dst, const struct cmc_addr *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_addr");
	dst->family = (uint8_t)src->family;
	dst->lid = src->lid;
	CMC_BYTES(dst->addr, src->addr);
	return 0;
}

static int cmc_path_override_to_cmp(struct cmp_path_set *dst,
				    const struct cmc_path_override *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_path_override");
	dst->flags = src->flags;
	dst->flow_label = src->flow_label;
	dst->pkey = src->pkey;
	dst->mtu = src->mtu;
	dst->sl = src->sl;
	dst->traffic_class = src->traffic_class;
	dst->hop_limit = src->hop_limit;
	dst->packet_rate = src->packet_rate;
	dst->local_ack_timeout = src->local_ack_timeout;
	return 0;
}

/* A path the application proposes (LAP). */
int cmc_path_to_cmp(struct cmp_path *dst, const struct cmc_path *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_path");
	if (!CMC_NAME_FITS(dst->dev_name, src->dev_name))
		return cmc_refuse(-EINVAL,
				  "path device name longer than %zu "
				  "bytes",
				  sizeof(dst->dev_name) - 1);
	CMC_PATH_COPY(dst, src);
	return 0;
}

/* All of CONNECT but id, qp_type and context, which are the id's. */
int cmc_conn_param_to_cmp(struct cmp_connect *dst,
			  const struct cmc_conn_param *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_conn_param");
	dst->local_qpn = src->qp_num;
	dst->start_psn = src->start_psn;
	CMC_REQ_VALUES(dst, src);
	dst->max_cm_retries = src->max_cm_retries;
	dst->local_cm_response_timeout = src->local_cm_response_timeout;
	dst->remote_cm_response_timeout = src->remote_cm_response_timeout;
	dst->service_id = src->service_id;
	if (cmc_path_override_to_cmp(&dst->path, &src->path) ||
	    cmc_addr_to_cmp(&dst->dst, &src->dst) ||
	    cmc_port_sel_to_cmp(&dst->src, &src->src))
		return -EINVAL; /* the reason is theirs */
	return CMC_PRIVATE_DATA_OUT(dst, src);
}

/* All of ACCEPT but the id. */
int cmc_accept_param_to_cmp(struct cmp_accept *dst,
			    const struct cmc_accept_param *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_accept_param");
	dst->local_qpn = src->qp_num;
	dst->start_psn = src->start_psn;
	CMC_REP_VALUES(dst, src);
	return CMC_PRIVATE_DATA_OUT(dst, src);
}

/* All of SIDR_REQ but the id. */
int cmc_sidr_param_to_cmp(struct cmp_sidr_req *dst,
			  const struct cmc_sidr_param *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_sidr_param");
	dst->pkey = src->pkey;
	dst->max_cm_retries = src->max_cm_retries;
	dst->cm_response_timeout = src->cm_response_timeout;
	dst->service_id = src->service_id;
	if (cmc_addr_to_cmp(&dst->dst, &src->dst) ||
	    cmc_port_sel_to_cmp(&dst->src, &src->src))
		return -EINVAL; /* the reason is theirs */
	return CMC_PRIVATE_DATA_OUT(dst, src);
}

/* All of RESOLVE_ROUTE but the id. */
int cmc_route_param_to_cmp(struct cmp_resolve_route *dst,
			   const struct cmc_route_param *src)
{
	if (!CMC_RESERVED_OK(src))
		return CMC_RESERVED_REFUSE("cmc_route_param");
	dst->service_id = src->service_id;
	if (cmc_path_override_to_cmp(&dst->path, &src->path) ||
	    cmc_addr_to_cmp(&dst->dst, &src->dst) ||
	    cmc_port_sel_to_cmp(&dst->src, &src->src))
		return -EINVAL; /* the reason is theirs */
	return 0;
}

/* ------------------------------------------------------------------ */
/* Coming in */

void cmc_path_from_cmp(struct cmc_path *dst, const struct cmp_path *src)
{
	memset(dst, 0, sizeof(*dst));
	CMC_PATH_COPY(dst, src);
}

static void cmc_ev_req_from_cmp(struct cmc_ev_req *dst,
				const struct cmp_ev_req *src)
{
	dst->listen_id = src->listen_id;
	dst->remote_comm_id = src->remote_comm_id;
	dst->remote_qpn = src->remote_qpn;
	dst->start_psn = src->start_psn;
	dst->service_id = src->service_id;
	dst->remote_ca_guid = src->remote_ca_guid;
	dst->qp_type = src->qp_type;
	CMC_REQ_VALUES(dst, src);
	cmc_path_from_cmp(&dst->path, &src->path);
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_rep_from_cmp(struct cmc_ev_rep *dst,
				const struct cmp_ev_rep *src)
{
	dst->remote_qpn = src->remote_qpn;
	dst->start_psn = src->start_psn;
	dst->remote_ca_guid = src->remote_ca_guid;
	CMC_REP_VALUES(dst, src);
	cmc_path_from_cmp(&dst->path, &src->path);
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_established_from_cmp(struct cmc_ev_established *dst,
					const struct cmp_ev_established *src)
{
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_rej_from_cmp(struct cmc_ev_rej *dst,
				const struct cmp_ev_rej *src)
{
	dst->reason = src->reason;
	CMC_PD(dst->ari, dst->ari_len, src->ari, src->ari_len);
	CMC_PRIVATE_DATA(dst, src);
}

static void
cmc_ev_connect_error_from_cmp(struct cmc_ev_connect_error *dst,
			      const struct cmp_ev_connect_error *src)
{
	dst->msg = src->msg;
}

static void cmc_ev_mra_from_cmp(struct cmc_ev_mra *dst,
				const struct cmp_ev_mra *src)
{
	dst->service_timeout = src->service_timeout;
	dst->msg = src->msg;
}

static void cmc_ev_dreq_from_cmp(struct cmc_ev_dreq *dst,
				 const struct cmp_ev_dreq *src)
{
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_drep_from_cmp(struct cmc_ev_drep *dst,
				 const struct cmp_ev_drep *src)
{
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_lap_from_cmp(struct cmc_ev_lap *dst,
				const struct cmp_ev_lap *src)
{
	cmc_path_from_cmp(&dst->alt_path, &src->alt_path);
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_apr_from_cmp(struct cmc_ev_apr *dst,
				const struct cmp_ev_apr *src)
{
	dst->ap_status = src->ap_status;
	CMC_PD(dst->info, dst->info_len, src->info, src->info_len);
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_sidr_req_from_cmp(struct cmc_ev_sidr_req *dst,
				     const struct cmp_ev_sidr_req *src)
{
	dst->listen_id = src->listen_id;
	dst->service_id = src->service_id;
	cmc_path_from_cmp(&dst->path, &src->path);
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_sidr_rep_from_cmp(struct cmc_ev_sidr_rep *dst,
				     const struct cmp_ev_sidr_rep *src)
{
	dst->qpn = src->qpn;
	dst->qkey = src->qkey;
	dst->status = src->status;
	cmc_path_from_cmp(&dst->path, &src->path);
	CMC_PRIVATE_DATA(dst, src);
}

static void cmc_ev_port_from_cmp(struct cmc_ev_port *dst,
				 const struct cmp_ev_port *src)
{
	dst->port_num = src->port_num;
	CMC_NAME(dst->dev_name, src->dev_name);
}

static void cmc_ev_route_from_cmp(struct cmc_ev_route *dst,
				  const struct cmp_ev_route *src)
{
	dst->has_alt = src->has_alt;
	dst->from_sa = src->from_sa;
	cmc_path_from_cmp(&dst->path, &src->path);
	cmc_path_from_cmp(&dst->alt_path, &src->alt_path);
}

/*
 * An EVENT's type, status, context and body; the ids are the caller's to
 * find. src->type is one cmp_decode() accepted.
 */
void cmc_event_from_cmp(struct cmc_event *dst, const struct cmp_event *src)
{
	dst->context = (void *)(uintptr_t)src->context;
	dst->type = (enum cmc_event_type)src->type;
	dst->status = src->status;
	memset(&dst->u, 0, sizeof(dst->u));
	/* One case per row of cmp_msgs.def: the body struct cmp_<body>
	 * becomes struct cmc_<body>, by cmc_<body>_from_cmp(), in the
	 * public union (a pointer to a union points to each member). */
	switch ((enum cmp_event_type)src->type) {
#define CMP_EVENT(NAME, member, code, body)                                    \
	case CMP_EVENT_##NAME:                                                 \
		cmc_##body##_from_cmp((struct cmc_##body *)(void *)&dst->u,    \
				      &src->member);                           \
		break;
#define CMP_EVENT_ALIAS(NAME, member, code, body)                              \
	CMP_EVENT(NAME, member, code, body)
#define CMP_EVENT_EMPTY(NAME, code)                                            \
	case CMP_EVENT_##NAME:                                                 \
		break;
#include "cmp_msgs.def"
	}
}

void cmc_id_info_from_cmp(struct cmc_id_info *dst,
			  const struct cmp_id_info *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->id = src->id;
	dst->listen_id = src->listen_id;
	dst->context = src->context;
	dst->service_id = src->service_id;
	dst->service_mask = src->service_mask;
	dst->remote_ca_guid = src->remote_ca_guid;
	dst->local_comm_id = src->local_comm_id;
	dst->remote_comm_id = src->remote_comm_id;
	dst->local_qpn = src->local_qpn;
	dst->remote_qpn = src->remote_qpn;
	dst->local_psn = src->local_psn;
	dst->remote_psn = src->remote_psn;
	dst->qkey = src->qkey;
	dst->backlog = src->backlog;
	dst->credits_in_use = src->credits_in_use;
	dst->held_reqs = src->held_reqs;
	dst->state = src->state;
	dst->lap_state = src->lap_state;
	dst->qp_type = src->qp_type;
	CMC_REP_VALUES(dst, src);
	dst->retry_count = src->retry_count;
	dst->max_cm_retries = src->max_cm_retries;
	dst->local_cm_response_timeout = src->local_cm_response_timeout;
	dst->remote_cm_response_timeout = src->remote_cm_response_timeout;
	dst->has_alt_path = src->has_alt_path;
	dst->sel = src->sel;
	cmc_path_from_cmp(&dst->path, &src->path);
	cmc_path_from_cmp(&dst->alt_path, &src->alt_path);
}

void cmc_list_entry_from_cmp(struct cmc_list_entry *dst,
			     const struct cmp_list_entry *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->id = src->id;
	dst->state = src->state;
	dst->lap_state = src->lap_state;
	dst->qp_type = src->qp_type;
	dst->service_id = src->service_id;
	dst->service_mask = src->service_mask;
	dst->local_comm_id = src->local_comm_id;
	dst->remote_comm_id = src->remote_comm_id;
	dst->owner_pid = src->owner_pid;
	dst->owner_uid = src->owner_uid;
	dst->backlog = src->backlog;
	dst->credits_in_use = src->credits_in_use;
	dst->held_reqs = src->held_reqs;
	dst->sel = src->sel;
	dst->sel_port_index = src->sel_port_index;
	dst->sel_port_num = src->sel_port_num;
	dst->grh = src->grh;
	dst->port_index = src->port_index;
	dst->port_num = src->port_num;
	dst->remote_lid = src->remote_lid;
	dst->local_qpn = src->local_qpn;
	dst->remote_qpn = src->remote_qpn;
	CMC_NAME(dst->owner_comm, src->owner_comm);
	/* listen_gid shares remote_gid's bytes on both sides. */
	CMC_BYTES(dst->remote_gid, src->remote_gid);
}

void cmc_counter_from_cmp(struct cmc_counter *dst,
			  const struct cmp_counter *src)
{
	CMC_NAME(dst->name, src->name);
	dst->value = src->value;
}

void cmc_port_info_from_cmp(struct cmc_port_info *dst,
			    const struct cmp_port_entry *src)
{
	memset(dst, 0, sizeof(*dst));
	CMC_NAME(dst->dev_name, src->dev_name);
	dst->node_guid = src->node_guid;
	dst->port_guid = src->port_guid;
	dst->port_index = src->port_index;
	dst->lid = src->lid;
	dst->sm_lid = src->sm_lid;
	dst->n_gids = src->n_gids;
	dst->port_num = src->port_num;
	dst->up = src->up;
	dst->state = src->state;
	dst->link_layer = src->link_layer;
	dst->active_mtu = src->active_mtu;
	dst->lmc = src->lmc;
	dst->sm_sl = src->sm_sl;
	for (size_t i = 0; i < CMC_MIN(CMC_PORT_GIDS, CMP_PORT_GIDS); i++) {
		dst->gids[i].index = src->gids[i].index;
		dst->gids[i].type = src->gids[i].type;
		CMC_BYTES(dst->gids[i].gid, src->gids[i].gid);
	}
}

void cmc_path_entry_from_cmp(struct cmc_path_entry *dst,
			     const struct cmp_path_entry *src)
{
	memset(dst, 0, sizeof(*dst));
	CMC_NAME(dst->dev_name, src->dev_name);
	dst->port_index = src->port_index;
	dst->port_num = src->port_num;
	dst->asked_dlid = src->asked_dlid;
	CMC_BYTES(dst->asked_dgid, src->asked_dgid);
	CMC_BYTES(dst->sgid, src->sgid);
	CMC_BYTES(dst->dgid, src->dgid);
	dst->slid = src->slid;
	dst->dlid = src->dlid;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu = src->mtu;
	dst->rate = src->rate;
	dst->packet_life_time = src->packet_life_time;
	dst->hop_limit = src->hop_limit;
	dst->tclass = src->tclass;
	dst->flow_label = src->flow_label;
	dst->has_alt = src->has_alt;
	dst->alt_slid = src->alt_slid;
	dst->alt_dlid = src->alt_dlid;
	dst->age_s = src->age_s;
	dst->expires_s = src->expires_s;
	dst->hits = src->hits;
}

void cmc_daemon_info_from_cmp(struct cmc_daemon_info *dst,
			      const struct cmp_hello_reply *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->proto_version = src->version;
	dst->max_ids = src->max_ids;
	dst->max_events = src->max_events;
	CMC_NAME(dst->version, src->daemon_version);
}
