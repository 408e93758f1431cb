/* SPDX-License-Identifier: MIT */
/*
 * Encode, decode and validate client<->daemon messages (see cmp.h).
 *
 * The structs in cmp.h are the wire layout, so encoding is a copy of the
 * right number of bytes and decoding a copy back; the work here is deciding
 * what that number is and refusing anything that is not exactly one valid
 * message. Every check has its own reason text, because the text is all the
 * daemon's debug log will have to tell a broken client from a malicious one.
 */
#include "cmp.h"
#include "cmp_layout.h"
#include "util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Checks report through 'why', a const char ** in scope. */
#define CMP_FAIL(err, text)                                                    \
	do {                                                                   \
		*why = (text);                                                 \
		return -(err);                                                 \
	} while (0)
#define CMP_BAD(text) CMP_FAIL(EBADMSG, text)

#define CMP_RANGE(v, lo, hi, what)                                             \
	do {                                                                   \
		if ((v) < (lo) || (v) > (hi))                                  \
			CMP_BAD(what " out of range");                         \
	} while (0)
#define CMP_MAX(v, hi, what)                                                   \
	do {                                                                   \
		if ((v) > (hi))                                                \
			CMP_BAD(what " out of range");                         \
	} while (0)
#define CMP_BOOL(v, what)                                                      \
	do {                                                                   \
		if ((v) > 1)                                                   \
			CMP_BAD(what " not 0 or 1");                           \
	} while (0)
#define CMP_RSVD(m, what)                                                      \
	do {                                                                   \
		if (!cmp_zero(&(m), sizeof(m)))                                \
			CMP_BAD(what " reserved bytes not zero");              \
	} while (0)
#define CMP_STR(s, what)                                                       \
	do {                                                                   \
		int st_ = cmp_str_state((s), sizeof(s));                       \
		if (st_ < 0)                                                   \
			CMP_BAD(what " not NUL-terminated");                   \
		if (st_ > 0)                                                   \
			CMP_BAD(what " not zero after its NUL");               \
	} while (0)
/* A length and its array: within the array, and zero beyond the length. */
#define CMP_DATA(len, data, what)                                              \
	do {                                                                   \
		if ((len) > sizeof(data))                                      \
			CMP_BAD(what " length beyond its maximum");            \
		if (!cmp_zero((data) + (len), sizeof(data) - (len)))           \
			CMP_BAD(what " not zero beyond its length");           \
	} while (0)

/* All n bytes zero: the first is, and each equals the next (memcmp's
 * word-at-a-time compare, not a loop over bytes: private data is checked
 * on every request). */
static bool cmp_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

/*
 * A fixed-size string must end within its array, and the bytes after its
 * NUL must be zero, so that one string has one encoding. Returns 0 when it
 * is well formed, -1 with no NUL, 1 with bytes after the NUL.
 */
static int cmp_str_state(const char *s, size_t n)
{
	const char *nul = memchr(s, '\0', n);

	if (!nul)
		return -1;
	return cmp_zero(nul + 1, n - (size_t)(nul - s) - 1) ? 0 : 1;
}

static bool cmp_status_ok(int32_t status)
{
	return status <= 0 && status >= -CMP_ERRNO_MAX;
}

/* A reply with a failure status: its results are zero, and it may carry a
 * reason (struct cmp_reply). HELLO_REPLY's failure keeps its body. */
static bool cmp_reply_failed(const struct cmp_msg *msg)
{
	return (msg->hdr.type & CMP_REPLY_BIT) &&
	       msg->hdr.type != CMP_TYPE_HELLO_REPLY && msg->reply.status != 0;
}

/* The per-type table, filled in below from cmp_msgs.def. */
struct cmp_type_desc {
	const char *name; /* NULL: no such type */
	size_t size; /* the body, or the fixed part of a batch or EVENT */
	/* The body's content; NULL: nothing beyond the common checks. */
	int (*check)(const struct cmp_msg *msg, const char **why);
	unsigned int flags; /* CMP_F_*, requests */
	bool plain; /* a reply that is the bare struct cmp_reply */
	/* Batch replies: where the count is, an entry's size, the limit. */
	size_t count_off, entry_size;
	uint32_t batch_max;
	const char *batch_why;
};
static const struct cmp_type_desc *cmp_desc(unsigned int type);

/*
 * Version and type first, because the rest of a message means nothing in
 * a version we do not speak. HELLO is held to CMP_VERSION_HELLO so that
 * negotiation itself never depends on the version.
 */
static int cmp_check_hdr(const struct cmp_hdr *hdr, const char **why)
{
	if (hdr->type == CMP_TYPE_HELLO || hdr->type == CMP_TYPE_HELLO_REPLY) {
		if (hdr->version != CMP_VERSION_HELLO)
			CMP_FAIL(EPROTO,
				 "HELLO not sent with CMP_VERSION_HELLO");
	} else if (hdr->version < CMP_VERSION_MIN ||
		   hdr->version > CMP_VERSION_MAX) {
		CMP_FAIL(EPROTO, "protocol version not supported");
	}
	if (!cmp_desc(hdr->type))
		CMP_BAD("message type unknown");
	if (hdr->rsvd0)
		CMP_BAD("header reserved bytes not zero");
	if (hdr->flags & ~CMP_HDR_FLAGS_ALL)
		CMP_BAD("header flags unknown");
	if (!hdr->flags)
		return 0;
	/*
	 * Flags ask the daemon to change how it answers, so only requests
	 * carry them; HELLO's header is frozen (cmp.h, "Versions"), and a
	 * request whose reply carries results must get that reply.
	 */
	if (!cmp_type_is_request(hdr->type))
		CMP_BAD("header flags on a reply or event");
	if (hdr->type == CMP_TYPE_HELLO)
		CMP_BAD("header flags on HELLO");
	if ((hdr->flags & CMP_HDR_NOREPLY) && !cmp_noreply_allowed(hdr->type))
		CMP_BAD("NOREPLY on a request whose reply carries results");
	if ((hdr->flags & CMP_HDR_ACK) && !cmp_ack_allowed(hdr->type))
		CMP_BAD("ACK on a request that answers no event");
	return 0;
}

static int cmp_check_path(const struct cmp_path *p, const char **why)
{
	CMP_MAX(p->flow_label, CMP_FLOW_LABEL_MAX, "path flow label");
	CMP_MAX(p->mtu, CM_MTU_4096, "path MTU");
	CMP_MAX(p->sl, CMP_SL_MAX, "path SL");
	CMP_MAX(p->packet_rate, CMP_RATE_MAX, "path packet rate");
	CMP_MAX(p->local_ack_timeout, CMP_TIMEOUT_MAX,
		"path local ACK timeout");
	CMP_BOOL(p->grh, "path GRH flag");
	CMP_MAX(p->packet_life_time, CMP_PACKET_LIFE_TIME_MAX,
		"path packet life time");
	CMP_RSVD(p->rsvd0, "path");
	CMP_STR(p->dev_name, "path device name");
	return 0;
}

static int cmp_check_sel(const struct cmp_port_sel *s, const char **why)
{
	bool has_gid = !cmp_zero(s->gid, sizeof(s->gid));

	CMP_RSVD(s->rsvd0, "port selector");
	CMP_STR(s->dev_name, "port selector device name");
	switch ((enum cmp_sel)s->kind) {
	case CMP_SEL_ANY:
		if (s->port_num || s->dev_name[0] || has_gid)
			CMP_BAD("port selector ANY names a port");
		return 0;
	case CMP_SEL_PORT:
		if (!s->dev_name[0])
			CMP_BAD("port selector PORT without a device name");
		if (has_gid)
			CMP_BAD("port selector PORT with a GID");
		return 0;
	case CMP_SEL_GID:
		if (!has_gid)
			CMP_BAD("port selector GID is zero");
		if (s->port_num || s->dev_name[0])
			CMP_BAD("port selector GID with a device or port");
		return 0;
	}
	CMP_BAD("port selector kind unknown");
}

static int cmp_check_addr(const struct cmp_addr *a, const char **why)
{
	if (a->rsvd0 || a->rsvd1)
		CMP_BAD("destination reserved bytes not zero");
	switch ((enum cmp_af)a->family) {
	case CMP_AF_NONE:
		CMP_BAD("destination missing");
	case CMP_AF_GID:
	case CMP_AF_IPV6:
		if (a->lid)
			CMP_BAD("destination LID set for a GID or IP address");
		if (cmp_zero(a->addr, sizeof(a->addr)))
			CMP_BAD("destination address is zero");
		return 0;
	case CMP_AF_IPV4:
		if (a->lid)
			CMP_BAD("destination LID set for a GID or IP address");
		if (!cmp_zero(a->addr + 4, sizeof(a->addr) - 4))
			CMP_BAD("destination IPv4 address longer than 4 bytes");
		if (cmp_zero(a->addr, 4))
			CMP_BAD("destination address is zero");
		return 0;
	case CMP_AF_LID:
		if (!cmp_zero(a->addr, sizeof(a->addr)))
			CMP_BAD("destination LID with an address");
		CMP_RANGE(a->lid, 1, CMP_LID_UNICAST_MAX, "destination LID");
		return 0;
	}
	CMP_BAD("destination family unknown");
}

static int cmp_check_path_set(const struct cmp_path_set *p, const char **why)
{
	uint32_t f = p->flags;

	if (f & ~CMP_PATH_FLAG_ALL)
		CMP_BAD("path override flags unknown");
	if ((!(f & CMP_PATH_FLAG_MTU) && p->mtu) ||
	    (!(f & CMP_PATH_FLAG_PKEY) && p->pkey) ||
	    (!(f & CMP_PATH_FLAG_SL) && p->sl) ||
	    (!(f & CMP_PATH_FLAG_TRAFFIC_CLASS) && p->traffic_class) ||
	    (!(f & CMP_PATH_FLAG_HOP_LIMIT) && p->hop_limit) ||
	    (!(f & CMP_PATH_FLAG_FLOW_LABEL) && p->flow_label) ||
	    (!(f & CMP_PATH_FLAG_PACKET_RATE) && p->packet_rate) ||
	    (!(f & CMP_PATH_FLAG_LOCAL_ACK_TIMEOUT) && p->local_ack_timeout))
		CMP_BAD("path override value set without its flag");
	if (f & CMP_PATH_FLAG_MTU)
		CMP_RANGE(p->mtu, CM_MTU_256, CM_MTU_4096, "path override MTU");
	/* IBTA ch. 10 (partitioning): a P_Key with no key bits is invalid. */
	if ((f & CMP_PATH_FLAG_PKEY) && !(p->pkey & 0x7fff))
		CMP_BAD("path override P_Key invalid");
	CMP_MAX(p->sl, CMP_SL_MAX, "path override SL");
	CMP_MAX(p->flow_label, CMP_FLOW_LABEL_MAX, "path override flow label");
	CMP_MAX(p->packet_rate, CMP_RATE_MAX, "path override packet rate");
	CMP_MAX(p->local_ack_timeout, CMP_TIMEOUT_MAX,
		"path override local ACK timeout");
	return 0;
}

static int cmp_check_hello(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_hello *m = &msg->hello;

	if (m->min_version == 0)
		CMP_BAD("HELLO minimum version is zero");
	if (m->min_version > m->max_version)
		CMP_BAD("HELLO version range inverted");
	CMP_RSVD(m->rsvd0, "HELLO");
	CMP_STR(m->name, "HELLO client name");
	return 0;
}

static int cmp_check_hello_reply(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_hello_reply *m = &msg->hello_reply;

	if (m->min_version == 0)
		CMP_BAD("HELLO_REPLY minimum version is zero");
	if (m->min_version > m->max_version)
		CMP_BAD("HELLO_REPLY version range inverted");
	if (m->status == 0 &&
	    (m->version < m->min_version || m->version > m->max_version))
		CMP_BAD("HELLO_REPLY version outside the daemon's range");
	if (m->status != 0 && m->version != 0)
		CMP_BAD("HELLO_REPLY version set on failure");
	if (m->max_msg > CMP_MSG_MAX)
		CMP_BAD("HELLO_REPLY max message size beyond CMP_MSG_MAX");
	CMP_RSVD(m->rsvd0, "HELLO_REPLY");
	CMP_STR(m->daemon_version, "HELLO_REPLY daemon version");
	return 0;
}

/* Where a CONNECT or RESOLVE_ROUTE goes, from where, and how. */
static int cmp_check_ends(const struct cmp_addr *dst,
			  const struct cmp_port_sel *src,
			  const struct cmp_path_set *path, const char **why)
{
	int ret = cmp_check_addr(dst, why);

	if (!ret)
		ret = cmp_check_sel(src, why);
	if (!ret)
		ret = cmp_check_path_set(path, why);
	return ret;
}

static int cmp_check_connect(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_connect *m = &msg->connect;

	CMP_RANGE(m->local_qpn, 2, CMP_QPN_MAX, "CONNECT local QPN");
	CMP_MAX(m->start_psn, CMP_PSN_MAX, "CONNECT starting PSN");
	CMP_BOOL(m->flow_control, "CONNECT flow control");
	CMP_MAX(m->retry_count, CMP_RETRY_MAX, "CONNECT retry count");
	CMP_MAX(m->rnr_retry_count, CMP_RETRY_MAX, "CONNECT RNR retry count");
	CMP_BOOL(m->srq, "CONNECT SRQ");
	CMP_MAX(m->max_cm_retries, CMP_CM_RETRIES_MAX,
		"CONNECT max CM retries");
	CMP_MAX(m->local_cm_response_timeout, CMP_TIMEOUT_MAX,
		"CONNECT local CM response timeout");
	CMP_MAX(m->remote_cm_response_timeout, CMP_TIMEOUT_MAX,
		"CONNECT remote CM response timeout");
	CMP_RSVD(m->rsvd0, "CONNECT");
	CMP_RSVD(m->rsvd1, "CONNECT");
	CMP_DATA(m->private_data_len, m->private_data, "CONNECT private data");
	/*
	 * qp_type and context make the id that CONNECT with id CMP_ID_NONE
	 * creates; for an existing id they would be ignored, so they must be
	 * zero (one encoding per message). The reply of a creating CONNECT
	 * names the new id, so the client may not waive it with NOREPLY.
	 */
	if (m->id == CMP_ID_NONE) {
		if (m->qp_type != CMP_QP_TYPE_RC &&
		    m->qp_type != CMP_QP_TYPE_UC)
			CMP_BAD("CONNECT creating its id: QP type not RC or "
				"UC");
		if (msg->hdr.flags & CMP_HDR_NOREPLY)
			CMP_BAD("CONNECT creating its id with NOREPLY");
	} else {
		if (m->qp_type)
			CMP_BAD("CONNECT QP type set for an existing id");
		if (m->context)
			CMP_BAD("CONNECT context set for an existing id");
	}
	return cmp_check_ends(&m->dst, &m->src, &m->path, why);
}

static int cmp_check_accept(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_accept *m = &msg->accept;

	CMP_RANGE(m->local_qpn, 2, CMP_QPN_MAX, "ACCEPT local QPN");
	CMP_MAX(m->start_psn, CMP_PSN_MAX, "ACCEPT starting PSN");
	CMP_MAX(m->target_ack_delay, CMP_TIMEOUT_MAX,
		"ACCEPT target ACK delay");
	CMP_MAX(m->failover, CMP_FAILOVER_MAX, "ACCEPT failover");
	CMP_BOOL(m->flow_control, "ACCEPT flow control");
	CMP_MAX(m->rnr_retry_count, CMP_RETRY_MAX, "ACCEPT RNR retry count");
	CMP_BOOL(m->srq, "ACCEPT SRQ");
	CMP_DATA(m->private_data_len, m->private_data, "ACCEPT private data");
	return 0;
}

static int cmp_check_reject(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_reject *m = &msg->reject;

	CMP_RANGE(m->reason, CM_REJ_NO_QP, CM_REJ_REASON_MAX, "REJECT reason");
	CMP_DATA(m->ari_len, m->ari, "REJECT ARI");
	CMP_DATA(m->private_data_len, m->private_data, "REJECT private data");
	CMP_RSVD(m->rsvd0, "REJECT");
	return 0;
}

static int cmp_check_lap(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_lap *m = &msg->lap;

	CMP_RSVD(m->rsvd0, "LAP");
	CMP_DATA(m->private_data_len, m->private_data, "LAP private data");
	return cmp_check_path(&m->alt_path, why);
}

static int cmp_check_apr(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_apr *m = &msg->apr;

	CMP_MAX(m->ap_status, CM_APR_STATUS_MAX, "APR status");
	CMP_DATA(m->info_len, m->info, "APR additional info");
	CMP_DATA(m->private_data_len, m->private_data, "APR private data");
	if (m->rsvd0 || !cmp_zero(m->rsvd1, sizeof(m->rsvd1)))
		CMP_BAD("APR reserved bytes not zero");
	return 0;
}

static int cmp_check_sidr_req(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_sidr_req *m = &msg->sidr_req;

	int ret;

	CMP_MAX(m->max_cm_retries, CMP_CM_RETRIES_MAX,
		"SIDR_REQ max CM retries");
	CMP_MAX(m->cm_response_timeout, CMP_TIMEOUT_MAX,
		"SIDR_REQ CM response timeout");
	if (m->pkey && !(m->pkey & 0x7fff))
		CMP_BAD("SIDR_REQ P_Key invalid");
	CMP_RSVD(m->rsvd0, "SIDR_REQ");
	CMP_DATA(m->private_data_len, m->private_data, "SIDR_REQ private data");
	ret = cmp_check_addr(&m->dst, why);
	if (!ret)
		ret = cmp_check_sel(&m->src, why);
	return ret;
}

static int cmp_check_resolve_route(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_resolve_route *m = &msg->resolve_route;

	CMP_RSVD(m->rsvd0, "RESOLVE_ROUTE");
	return cmp_check_ends(&m->dst, &m->src, &m->path, why);
}

static int cmp_check_sidr_rep(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_sidr_rep *m = &msg->sidr_rep;

	CMP_MAX(m->status, CM_SIDR_STATUS_MAX, "SIDR_REP status");
	CMP_MAX(m->qpn, CMP_QPN_MAX, "SIDR_REP QPN");
	CMP_RSVD(m->rsvd0, "SIDR_REP");
	CMP_DATA(m->private_data_len, m->private_data, "SIDR_REP private data");
	return 0;
}

static int cmp_check_counters(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_counters *m = &msg->counters;

	CMP_RSVD(m->rsvd0, "COUNTERS");
	CMP_STR(m->dev_name, "COUNTERS device name");
	switch ((enum cmp_counter_scope)m->scope) {
	case CMP_COUNTER_SCOPE_GLOBAL:
	case CMP_COUNTER_SCOPE_CLIENT:
		if (m->port_num || m->dev_name[0])
			CMP_BAD("COUNTERS port given outside PORT scope");
		return 0;
	case CMP_COUNTER_SCOPE_PORT:
		if (!m->dev_name[0] || !m->port_num)
			CMP_BAD("COUNTERS PORT scope without device and port");
		return 0;
	}
	CMP_BAD("COUNTERS scope unknown");
}

static int cmp_check_capture(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_capture *m = &msg->capture;

	CMP_RANGE(m->op, CMP_CAPTURE_START, CMP_CAPTURE_OP_MAX, "CAPTURE op");
	CMP_RSVD(m->rsvd0, "CAPTURE");
	CMP_STR(m->path, "CAPTURE path");
	if (m->op == CMP_CAPTURE_START && !m->path[0])
		CMP_BAD("CAPTURE START without a path");
	if (m->op == CMP_CAPTURE_STOP && m->path[0])
		CMP_BAD("CAPTURE STOP with a path");
	return 0;
}

static int cmp_check_id_info(const struct cmp_id_info *m, const char **why)
{
	int ret;

	if (m->id == CMP_ID_NONE)
		CMP_BAD("QUERY_ID_REPLY id zero");
	CMP_MAX(m->local_qpn, CMP_QPN_MAX, "QUERY_ID_REPLY local QPN");
	CMP_MAX(m->remote_qpn, CMP_QPN_MAX, "QUERY_ID_REPLY remote QPN");
	CMP_MAX(m->local_psn, CMP_PSN_MAX, "QUERY_ID_REPLY local PSN");
	CMP_MAX(m->remote_psn, CMP_PSN_MAX, "QUERY_ID_REPLY remote PSN");
	CMP_MAX(m->state, CMP_STATE_MAX, "QUERY_ID_REPLY state");
	CMP_MAX(m->lap_state, CMP_LAP_STATE_MAX, "QUERY_ID_REPLY LAP state");
	CMP_RANGE(m->qp_type, CMP_QP_TYPE_RC, CMP_QP_TYPE_MAX,
		  "QUERY_ID_REPLY QP type");
	CMP_MAX(m->target_ack_delay, CMP_TIMEOUT_MAX,
		"QUERY_ID_REPLY target ACK delay");
	CMP_MAX(m->failover, CMP_FAILOVER_MAX, "QUERY_ID_REPLY failover");
	CMP_BOOL(m->flow_control, "QUERY_ID_REPLY flow control");
	CMP_MAX(m->retry_count, CMP_RETRY_MAX, "QUERY_ID_REPLY retry count");
	CMP_MAX(m->rnr_retry_count, CMP_RETRY_MAX,
		"QUERY_ID_REPLY RNR retry count");
	CMP_BOOL(m->srq, "QUERY_ID_REPLY SRQ");
	CMP_MAX(m->max_cm_retries, CMP_CM_RETRIES_MAX,
		"QUERY_ID_REPLY max CM retries");
	CMP_MAX(m->local_cm_response_timeout, CMP_TIMEOUT_MAX,
		"QUERY_ID_REPLY local CM response timeout");
	CMP_MAX(m->remote_cm_response_timeout, CMP_TIMEOUT_MAX,
		"QUERY_ID_REPLY remote CM response timeout");
	CMP_BOOL(m->has_alt_path, "QUERY_ID_REPLY alternate path flag");
	if (!m->has_alt_path && !cmp_zero(&m->alt_path, sizeof(m->alt_path)))
		CMP_BAD("QUERY_ID_REPLY alternate path without its flag");
	CMP_MAX(m->sel, CMP_SEL_MAX, "QUERY_ID_REPLY selector kind");
	ret = cmp_check_path(&m->path, why);
	if (!ret)
		ret = cmp_check_path(&m->alt_path, why);
	return ret;
}

static int cmp_check_list_reply(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_list_reply *m = &msg->list_reply;

	for (uint32_t i = 0; i < m->count; i++) {
		const struct cmp_list_entry *e = &m->entries[i];

		if (e->id == CMP_ID_NONE)
			CMP_BAD("LIST_REPLY entry id zero");
		CMP_MAX(e->state, CMP_STATE_MAX, "LIST_REPLY entry state");
		CMP_MAX(e->lap_state, CMP_LAP_STATE_MAX,
			"LIST_REPLY entry LAP state");
		CMP_RANGE(e->qp_type, CMP_QP_TYPE_RC, CMP_QP_TYPE_MAX,
			  "LIST_REPLY entry QP type");
		CMP_MAX(e->sel, CMP_SEL_MAX, "LIST_REPLY entry selector kind");
		if (e->sel != CMP_SEL_PORT &&
		    (e->sel_port_index || e->sel_port_num))
			CMP_BAD("LIST_REPLY entry port without a PORT "
				"selector");
		CMP_RSVD(e->rsvd1, "LIST_REPLY entry");
		CMP_RSVD(e->rsvd2, "LIST_REPLY entry");
		CMP_BOOL(e->grh, "LIST_REPLY entry GRH flag");
		CMP_MAX(e->remote_qpn, CMP_QPN_MAX,
			"LIST_REPLY entry remote QPN");
		CMP_MAX(e->local_qpn, CMP_QPN_MAX,
			"LIST_REPLY entry local QPN");
		CMP_STR(e->owner_comm, "LIST_REPLY entry owner name");
	}
	return 0;
}

static int cmp_check_port_entry(const struct cmp_port_entry *e,
				const char **why)
{
	unsigned int used =
		e->n_gids < CMP_PORT_GIDS ? e->n_gids : CMP_PORT_GIDS;

	CMP_STR(e->dev_name, "PORTS_REPLY entry device name");
	if (!e->dev_name[0])
		CMP_BAD("PORTS_REPLY entry device name empty");
	if (e->port_num == 0)
		CMP_BAD("PORTS_REPLY entry port number zero");
	CMP_BOOL(e->up, "PORTS_REPLY entry up flag");
	CMP_MAX(e->state, CMP_PORT_STATE_MAX, "PORTS_REPLY entry port state");
	CMP_RANGE(e->link_layer, CMP_LINK_LAYER_IB, CMP_LINK_LAYER_MAX,
		  "PORTS_REPLY entry link layer");
	CMP_MAX(e->active_mtu, CM_MTU_4096, "PORTS_REPLY entry active MTU");
	CMP_MAX(e->lmc, 7, "PORTS_REPLY entry LMC");
	CMP_MAX(e->sm_sl, CMP_SL_MAX, "PORTS_REPLY entry SM SL");
	CMP_RSVD(e->rsvd0, "PORTS_REPLY entry");
	for (unsigned int g = 0; g < CMP_PORT_GIDS; g++) {
		const struct cmp_port_gid *pg = &e->gids[g];

		if (g >= used) {
			if (!cmp_zero(pg, sizeof(*pg)))
				CMP_BAD("PORTS_REPLY entry GID slot beyond "
					"n_gids not zero");
			continue;
		}
		CMP_RANGE(pg->type, CMP_GID_TYPE_IB, CMP_GID_TYPE_MAX,
			  "PORTS_REPLY entry GID type");
		CMP_RSVD(pg->rsvd0, "PORTS_REPLY entry GID");
	}
	return 0;
}

static int cmp_check_ports_reply(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_ports_reply *m = &msg->ports_reply;

	for (uint32_t i = 0; i < m->count; i++) {
		int ret = cmp_check_port_entry(&m->entries[i], why);

		if (ret)
			return ret;
	}
	return 0;
}

static int cmp_check_counters_reply(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_counters_reply *m = &msg->counters_reply;

	for (uint32_t i = 0; i < m->count; i++) {
		CMP_STR(m->entries[i].name, "COUNTERS_REPLY counter name");
		if (!m->entries[i].name[0])
			CMP_BAD("COUNTERS_REPLY counter name empty");
	}
	return 0;
}

static int cmp_check_ev_req(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_req *m = &e->req_received;

	if (m->listen_id == CMP_ID_NONE)
		CMP_BAD("REQ_RECEIVED listener id zero");
	CMP_MAX(m->remote_qpn, CMP_QPN_MAX, "REQ_RECEIVED remote QPN");
	CMP_MAX(m->start_psn, CMP_PSN_MAX, "REQ_RECEIVED starting PSN");
	CMP_RANGE(m->qp_type, CMP_QP_TYPE_RC, CMP_QP_TYPE_UC,
		  "REQ_RECEIVED QP type");
	CMP_BOOL(m->flow_control, "REQ_RECEIVED flow control");
	CMP_MAX(m->retry_count, CMP_RETRY_MAX, "REQ_RECEIVED retry count");
	CMP_MAX(m->rnr_retry_count, CMP_RETRY_MAX,
		"REQ_RECEIVED RNR retry count");
	CMP_BOOL(m->srq, "REQ_RECEIVED SRQ");
	CMP_RSVD(m->rsvd0, "REQ_RECEIVED");
	CMP_DATA(m->private_data_len, m->private_data,
		 "REQ_RECEIVED private data");
	return cmp_check_path(&m->path, why);
}

static int cmp_check_ev_rep(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_rep *m = &e->rep_received;

	CMP_MAX(m->remote_qpn, CMP_QPN_MAX, "REP_RECEIVED remote QPN");
	CMP_MAX(m->start_psn, CMP_PSN_MAX, "REP_RECEIVED starting PSN");
	CMP_MAX(m->target_ack_delay, CMP_TIMEOUT_MAX,
		"REP_RECEIVED target ACK delay");
	CMP_MAX(m->failover, CMP_FAILOVER_MAX, "REP_RECEIVED failover");
	CMP_BOOL(m->flow_control, "REP_RECEIVED flow control");
	CMP_MAX(m->rnr_retry_count, CMP_RETRY_MAX,
		"REP_RECEIVED RNR retry count");
	CMP_BOOL(m->srq, "REP_RECEIVED SRQ");
	CMP_RSVD(m->rsvd0, "REP_RECEIVED");
	CMP_DATA(m->private_data_len, m->private_data,
		 "REP_RECEIVED private data");
	return cmp_check_path(&m->path, why);
}

static int cmp_check_ev_rej(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_rej *m = &e->rej_received;

	CMP_RANGE(m->reason, CM_REJ_NO_QP, CM_REJ_REASON_MAX,
		  "REJ_RECEIVED reason");
	CMP_DATA(m->ari_len, m->ari, "REJ_RECEIVED ARI");
	CMP_DATA(m->private_data_len, m->private_data,
		 "REJ_RECEIVED private data");
	if (!cmp_zero(m->rsvd0, sizeof(m->rsvd0)) ||
	    !cmp_zero(m->rsvd1, sizeof(m->rsvd1)))
		CMP_BAD("REJ_RECEIVED reserved bytes not zero");
	return 0;
}

static int cmp_check_ev_connect_error(const struct cmp_event *e,
				      const char **why)
{
	const struct cmp_ev_connect_error *m = &e->connect_error;

	CMP_RSVD(m->rsvd0, "CONNECT_ERROR");
	switch ((enum cmp_cm_msg)m->msg) {
	case CMP_CM_MSG_NONE:
	case CMP_CM_MSG_REQ:
	case CMP_CM_MSG_REP:
	case CMP_CM_MSG_SIDR_REQ:
		return 0;
	case CMP_CM_MSG_MRA:
	case CMP_CM_MSG_REJ:
	case CMP_CM_MSG_RTU:
	case CMP_CM_MSG_DREQ:
	case CMP_CM_MSG_DREP:
	case CMP_CM_MSG_LAP:
	case CMP_CM_MSG_APR:
	case CMP_CM_MSG_SIDR_REP:
		break;
	}
	CMP_BAD("CONNECT_ERROR message not REQ, REP, SIDR_REQ or none");
}

static int cmp_check_ev_mra(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_mra *m = &e->mra_received;

	CMP_MAX(m->service_timeout, CMP_TIMEOUT_MAX,
		"MRA_RECEIVED service timeout");
	CMP_RSVD(m->rsvd0, "MRA_RECEIVED");
	switch ((enum cmp_cm_msg)m->msg) {
	case CMP_CM_MSG_REQ:
	case CMP_CM_MSG_REP:
	case CMP_CM_MSG_LAP:
		return 0;
	case CMP_CM_MSG_NONE:
	case CMP_CM_MSG_MRA:
	case CMP_CM_MSG_REJ:
	case CMP_CM_MSG_RTU:
	case CMP_CM_MSG_DREQ:
	case CMP_CM_MSG_DREP:
	case CMP_CM_MSG_APR:
	case CMP_CM_MSG_SIDR_REQ:
	case CMP_CM_MSG_SIDR_REP:
		break;
	}
	CMP_BAD("MRA_RECEIVED message not REQ, REP or LAP");
}

static int cmp_check_ev_apr(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_apr *m = &e->apr_received;

	CMP_MAX(m->ap_status, CM_APR_STATUS_MAX, "APR_RECEIVED status");
	CMP_DATA(m->info_len, m->info, "APR_RECEIVED additional info");
	CMP_DATA(m->private_data_len, m->private_data,
		 "APR_RECEIVED private data");
	if (!cmp_zero(m->rsvd0, sizeof(m->rsvd0)) ||
	    !cmp_zero(m->rsvd1, sizeof(m->rsvd1)))
		CMP_BAD("APR_RECEIVED reserved bytes not zero");
	return 0;
}

static int cmp_check_ev_established(const struct cmp_event *e, const char **why)
{
	CMP_RSVD(e->established.rsvd0, "ESTABLISHED");
	CMP_DATA(e->established.private_data_len, e->established.private_data,
		 "ESTABLISHED private data");
	return 0;
}

static int cmp_check_ev_dreq(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_dreq *m = &e->dreq_received;

	if (!cmp_zero(m->rsvd0, sizeof(m->rsvd0)) ||
	    !cmp_zero(m->rsvd1, sizeof(m->rsvd1)))
		CMP_BAD("DREQ_RECEIVED reserved bytes not zero");
	CMP_DATA(m->private_data_len, m->private_data,
		 "DREQ_RECEIVED private data");
	return 0;
}

static int cmp_check_ev_drep(const struct cmp_event *e, const char **why)
{
	CMP_RSVD(e->drep_received.rsvd0, "DREP_RECEIVED");
	CMP_DATA(e->drep_received.private_data_len,
		 e->drep_received.private_data, "DREP_RECEIVED private data");
	return 0;
}

static int cmp_check_ev_lap(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_lap *lap = &e->lap_received;

	CMP_RSVD(lap->rsvd0, "LAP_RECEIVED");
	CMP_DATA(lap->private_data_len, lap->private_data,
		 "LAP_RECEIVED private data");
	return cmp_check_path(&lap->alt_path, why);
}

static int cmp_check_ev_sidr_req(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_sidr_req *sreq = &e->sidr_req_received;

	if (sreq->listen_id == CMP_ID_NONE)
		CMP_BAD("SIDR_REQ_RECEIVED listener id zero");
	CMP_RSVD(sreq->rsvd0, "SIDR_REQ_RECEIVED");
	CMP_DATA(sreq->private_data_len, sreq->private_data,
		 "SIDR_REQ_RECEIVED private data");
	return cmp_check_path(&sreq->path, why);
}

static int cmp_check_ev_sidr_rep(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_sidr_rep *srep = &e->sidr_rep_received;

	CMP_MAX(srep->status, CM_SIDR_STATUS_MAX, "SIDR_REP_RECEIVED status");
	CMP_MAX(srep->qpn, CMP_QPN_MAX, "SIDR_REP_RECEIVED QPN");
	CMP_RSVD(srep->rsvd0, "SIDR_REP_RECEIVED");
	CMP_DATA(srep->private_data_len, srep->private_data,
		 "SIDR_REP_RECEIVED private data");
	return cmp_check_path(&srep->path, why);
}

static int cmp_check_ev_route(const struct cmp_event *e, const char **why)
{
	const struct cmp_ev_route *r = &e->route_resolved;
	int ret;

	CMP_BOOL(r->has_alt, "ROUTE_RESOLVED has_alt");
	CMP_BOOL(r->from_sa, "ROUTE_RESOLVED from_sa");
	CMP_RSVD(r->rsvd0, "ROUTE_RESOLVED");
	ret = cmp_check_path(&r->path, why);
	if (!ret)
		ret = cmp_check_path(&r->alt_path, why);
	return ret;
}

/* PORT_ERROR and DEVICE_REMOVAL. */
static int cmp_check_ev_port(const struct cmp_event *e, const char **why)
{
	CMP_RSVD(e->port.rsvd0, "port event");
	CMP_STR(e->port.dev_name, "port event device name");
	return 0;
}

/* The per-event table, from cmp_msgs.def. */
struct cmp_event_desc {
	const char *name; /* NULL: no such event type */
	size_t size;
	int (*check)(const struct cmp_event *e, const char **why);
};

static const struct cmp_event_desc cmp_events[CMP_EVENT_MAX + 1] = {
#define CMP_EVENT(NAME, member, code, body)                                    \
	[CMP_EVENT_##NAME] = { #NAME, sizeof(struct cmp_##body),               \
			       cmp_check_##body },
#define CMP_EVENT_ALIAS(NAME, member, code, body)                              \
	CMP_EVENT(NAME, member, code, body)
#define CMP_EVENT_EMPTY(NAME, code) [CMP_EVENT_##NAME] = { #NAME, 0, NULL },
#include "cmp_msgs.def"
};

static const struct cmp_event_desc *cmp_event_desc(unsigned int type)
{
	if (type >= ARRAY_SIZE(cmp_events) || !cmp_events[type].name)
		return NULL;
	return &cmp_events[type];
}

static int cmp_check_event(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_event *e = &msg->event;
	const struct cmp_event_desc *d = cmp_event_desc(e->type);

	if (e->id == CMP_ID_NONE)
		CMP_BAD("EVENT id zero");
	if (e->rsvd1)
		CMP_BAD("EVENT reserved bytes not zero");
	CMP_MAX(e->state, CMP_STATE_MAX, "EVENT state");
	CMP_MAX(e->lap_state, CMP_LAP_STATE_MAX, "EVENT LAP state");
	if (!cmp_status_ok(e->status))
		CMP_BAD("EVENT status not 0 or -errno");
	if (!d)
		CMP_BAD("EVENT type unknown");
	return d->check ? d->check(e, why) : 0;
}

ssize_t cmp_event_body_size(enum cmp_event_type type)
{
	const struct cmp_event_desc *d = cmp_event_desc(type);

	return d ? (ssize_t)d->size : -1;
}

const char *cmp_event_name(enum cmp_event_type type)
{
	const struct cmp_event_desc *d = cmp_event_desc(type);

	return d ? d->name : "unknown";
}

/* The small request checks that need no function of their own above. */
static int cmp_check_create_id(const struct cmp_msg *msg, const char **why)
{
	CMP_RANGE(msg->create_id.qp_type, CMP_QP_TYPE_RC, CMP_QP_TYPE_MAX,
		  "CREATE_ID QP type");
	CMP_RSVD(msg->create_id.rsvd0, "CREATE_ID");
	return 0;
}

static int cmp_check_create_id_reply(const struct cmp_msg *msg,
				     const char **why)
{
	if (msg->create_id_reply.id == CMP_ID_NONE)
		CMP_BAD("CREATE_ID_REPLY id zero");
	return 0;
}

/* DESTROY_ID, NOTIFY_ESTABLISHED, QUERY_ID. */
static int cmp_check_id_ref(const struct cmp_msg *msg, const char **why)
{
	CMP_RSVD(msg->destroy_id.rsvd0, "id request");
	return 0;
}

static int cmp_check_set_context(const struct cmp_msg *msg, const char **why)
{
	CMP_RSVD(msg->set_context.rsvd0, "SET_CONTEXT");
	return 0;
}

static int cmp_check_listen(const struct cmp_msg *msg, const char **why)
{
	if (msg->listen.backlog == 0)
		CMP_BAD("LISTEN backlog zero");
	if (msg->listen.service_id & ~msg->listen.service_mask)
		CMP_BAD("LISTEN service id has bits outside its mask");
	return cmp_check_sel(&msg->listen.port, why);
}

static int cmp_check_rtu(const struct cmp_msg *msg, const char **why)
{
	CMP_RSVD(msg->rtu.rsvd0, "RTU");
	CMP_DATA(msg->rtu.private_data_len, msg->rtu.private_data,
		 "RTU private data");
	return 0;
}

static int cmp_check_mra(const struct cmp_msg *msg, const char **why)
{
	CMP_MAX(msg->mra.service_timeout, CMP_TIMEOUT_MAX,
		"MRA service timeout");
	if (!cmp_zero(msg->mra.rsvd0, sizeof(msg->mra.rsvd0)) ||
	    !cmp_zero(msg->mra.rsvd1, sizeof(msg->mra.rsvd1)))
		CMP_BAD("MRA reserved bytes not zero");
	CMP_DATA(msg->mra.private_data_len, msg->mra.private_data,
		 "MRA private data");
	return 0;
}

static int cmp_check_disconnect(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_disconnect *m = &msg->disconnect;

	if (!cmp_zero(m->rsvd0, sizeof(m->rsvd0)) ||
	    !cmp_zero(m->rsvd1, sizeof(m->rsvd1)))
		CMP_BAD("DISCONNECT reserved bytes not zero");
	CMP_DATA(m->private_data_len, m->private_data,
		 "DISCONNECT private data");
	return 0;
}

static int cmp_check_ack_event(const struct cmp_msg *msg, const char **why)
{
	if (msg->ack_event.seq == 0)
		CMP_BAD("ACK_EVENT sequence zero");
	return 0;
}

static int cmp_check_query_id_reply(const struct cmp_msg *msg, const char **why)
{
	CMP_RSVD(msg->query_id_reply.rsvd0, "QUERY_ID_REPLY");
	return cmp_check_id_info(&msg->query_id_reply.info, why);
}

static int cmp_check_list(const struct cmp_msg *msg, const char **why)
{
	CMP_RANGE(msg->list.filter, CMP_LIST_FILTER_LISTENERS,
		  CMP_LIST_FILTER_MAX, "LIST filter");
	CMP_RSVD(msg->list.rsvd0, "LIST");
	return 0;
}

static int cmp_check_ports(const struct cmp_msg *msg, const char **why)
{
	return 0;
}

static int cmp_check_session(const struct cmp_msg *msg, const char **why)
{
	CMP_RSVD(msg->session.rsvd0, "SESSION");
	return 0;
}

static int cmp_check_session_reply(const struct cmp_msg *msg, const char **why)
{
	return 0;
}

static int cmp_check_resume(const struct cmp_msg *msg, const char **why)
{
	static const uint8_t zero[CMP_TOKEN_SIZE];

	if (!memcmp(msg->resume.token, zero, sizeof(zero)))
		CMP_BAD("RESUME token is zero");
	return 0;
}

static int cmp_check_paths(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_paths *m = &msg->paths;

	if (m->flags & ~CMP_PATHS_FLAGS)
		CMP_BAD("PATHS flags unknown");
	if ((m->flags & CMP_PATHS_PORT) && !(m->flags & CMP_PATHS_FLUSH))
		CMP_BAD("PATHS port without FLUSH");
	if (!(m->flags & CMP_PATHS_PORT) && m->port_index)
		CMP_BAD("PATHS port index without the PORT flag");
	if ((m->flags & CMP_PATHS_FLUSH) && m->cursor)
		CMP_BAD("PATHS FLUSH with a cursor");
	CMP_RSVD(m->rsvd0, "PATHS");
	return 0;
}

static int cmp_check_path_entry(const struct cmp_path_entry *e,
				const char **why)
{
	CMP_STR(e->dev_name, "PATHS_REPLY entry device name");
	if (!e->dev_name[0])
		CMP_BAD("PATHS_REPLY entry device name empty");
	if (e->port_num == 0)
		CMP_BAD("PATHS_REPLY entry port number zero");
	CMP_MAX(e->flow_label, CMP_FLOW_LABEL_MAX,
		"PATHS_REPLY entry flow label");
	CMP_MAX(e->sl, CMP_SL_MAX, "PATHS_REPLY entry SL");
	CMP_MAX(e->mtu, CM_MTU_4096, "PATHS_REPLY entry MTU");
	CMP_MAX(e->rate, CMP_RATE_MAX, "PATHS_REPLY entry rate");
	CMP_MAX(e->packet_life_time, CMP_PACKET_LIFE_TIME_MAX,
		"PATHS_REPLY entry packet life time");
	CMP_BOOL(e->has_alt, "PATHS_REPLY entry alternate flag");
	if (!e->has_alt && (e->alt_slid || e->alt_dlid))
		CMP_BAD("PATHS_REPLY entry alternate LIDs without an "
			"alternate");
	CMP_RSVD(e->rsvd0, "PATHS_REPLY entry");
	return 0;
}

static int cmp_check_paths_reply(const struct cmp_msg *msg, const char **why)
{
	const struct cmp_paths_reply *m = &msg->paths_reply;

	CMP_RSVD(m->rsvd0, "PATHS_REPLY");
	for (uint32_t i = 0; i < m->count; i++) {
		int ret = cmp_check_path_entry(&m->entries[i], why);

		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The message types, from cmp_msgs.def: each request and its reply, and
 * EVENT. The reply's size, checker and batch fields come from its kind.
 */
#define CMP_R_SIZE_PLAIN(member) sizeof(struct cmp_reply)
#define CMP_R_SIZE_FIXED(member) sizeof(struct cmp_##member##_reply)
#define CMP_R_SIZE_BATCH(member) offsetof(struct cmp_##member##_reply, entries)
#define CMP_R_CHECK_PLAIN(member) NULL
#define CMP_R_CHECK_FIXED(member) cmp_check_##member##_reply
#define CMP_R_CHECK_BATCH(member) cmp_check_##member##_reply
#define CMP_R_BATCH_PLAIN(NAME, member) 0, 0, 0, NULL
#define CMP_R_BATCH_FIXED(NAME, member) 0, 0, 0, NULL
#define CMP_R_ENTRIES(member) (((struct cmp_##member##_reply *)0)->entries)
#define CMP_R_BATCH_BATCH(NAME, member)                                        \
	offsetof(struct cmp_##member##_reply, count),                          \
		sizeof(CMP_R_ENTRIES(member)[0]),                              \
		sizeof(CMP_R_ENTRIES(member)) /                                \
			sizeof(CMP_R_ENTRIES(member)[0]),                      \
		#NAME "_REPLY count over the batch maximum"

static const struct cmp_type_desc
	cmp_types[(CMP_REPLY_BIT | CMP_TYPE_REQUEST_MAX) + 1] = {
#define CMP_REQUEST(NAME, member, code, body, reply, flags)                    \
	[CMP_TYPE_##NAME] = { #NAME,                                           \
			      sizeof(struct cmp_##body),                       \
			      cmp_check_##body,                                \
			      flags,                                           \
			      false,                                           \
			      0,                                               \
			      0,                                               \
			      0,                                               \
			      NULL },                                          \
	[CMP_TYPE_##NAME##_REPLY] = { #NAME "_REPLY",                          \
				      CMP_R_SIZE_##reply(member),              \
				      CMP_R_CHECK_##reply(member),             \
				      0,                                       \
				      CMP_REPLY_IS_##reply,                    \
				      CMP_R_BATCH_##reply(NAME, member) },
#include "cmp_msgs.def"
		[CMP_TYPE_EVENT] = { "EVENT",
				     offsetof(struct cmp_event, req_received),
				     cmp_check_event, 0, false, 0, 0, 0, NULL },
	};

static const struct cmp_type_desc *cmp_desc(unsigned int type)
{
	if (type >= ARRAY_SIZE(cmp_types) || !cmp_types[type].name)
		return NULL;
	return &cmp_types[type];
}

unsigned int cmp_request_flags(unsigned int type)
{
	return cmp_type_is_request(type) ? cmp_types[type].flags : 0;
}

const char *cmp_type_name(enum cmp_type type)
{
	const struct cmp_type_desc *d = cmp_desc(type);

	return d ? d->name : "unknown";
}

/*
 * The body length *msg needs: its type's size, plus its entries or its
 * event body. Reads only the count or event type, which it checks first.
 */
static int cmp_body_len(const struct cmp_msg *msg, size_t *len,
			const char **why)
{
	const struct cmp_type_desc *d = cmp_desc(msg->hdr.type);
	uint32_t count;
	ssize_t ev;

	if (!d)
		CMP_BAD("message type unknown");
	*len = d->size;
	if (cmp_reply_failed(msg)) {
		/* Its reason, if any (struct cmp_reply); a failed batch has
		 * no entries (cmp_check_body). */
		size_t n =
			strnlen((const char *)msg->body + d->size, CMP_WHY_MAX);

		if (n == CMP_WHY_MAX)
			CMP_BAD("reply reason longer than CMP_WHY_MAX");
		if (n)
			*len += n + 1;
		return 0;
	}
	if (d->entry_size) {
		memcpy(&count, msg->body + d->count_off, sizeof(count));
		if (count > d->batch_max)
			CMP_BAD(d->batch_why);
		*len += count * d->entry_size;
	} else if (msg->hdr.type == CMP_TYPE_EVENT) {
		ev = cmp_event_body_size(msg->event.type);
		if (ev < 0)
			CMP_BAD("EVENT type unknown");
		*len += (size_t)ev;
	}
	return 0;
}

/* The body's content, once its length is known to be body_len. */
static int cmp_check_body(const struct cmp_msg *msg, size_t body_len,
			  const char **why)
{
	enum cmp_type type = (enum cmp_type)msg->hdr.type;
	const struct cmp_type_desc *d = cmp_desc(type);

	/* CONNECT with id CMP_ID_NONE creates its id (cmp_check_connect). */
	if (cmp_type_has_id(type) && type != CMP_TYPE_CONNECT &&
	    msg->destroy_id.id == CMP_ID_NONE)
		CMP_BAD("request id zero");
	if (type & CMP_REPLY_BIT) {
		/* A plain reply keeps its id on failure: that is when the
		 * client needs it (cmp.h, struct cmp_reply). */
		size_t keep =
			d->plain ? sizeof(struct cmp_reply) : sizeof(int32_t);

		if (!cmp_status_ok(msg->reply.status))
			CMP_BAD("reply status not 0 or -errno");
		/* A failed reply carries nothing but its status, and its
		 * reason: printable text (cmp_body_len() found its NUL). */
		if (cmp_reply_failed(msg)) {
			const uint8_t *t = msg->body + d->size;

			if (!cmp_zero(msg->body + keep, d->size - keep))
				CMP_BAD("reply body not zero after a failure");
			for (size_t i = 0; i + d->size + 1 < body_len; i++)
				if (t[i] < 0x20 || t[i] > 0x7e)
					CMP_BAD("reply reason not printable");
			return 0;
		}
	}

	return d->check ? d->check(msg, why) : 0;
}

size_t cmp_msg_extent(enum cmp_type type)
{
	const struct cmp_type_desc *d = cmp_desc(type);

	if (!d || d->entry_size)
		return sizeof(struct cmp_msg);
	if (type == CMP_TYPE_EVENT)
		return sizeof(struct cmp_hdr) + sizeof(struct cmp_event);
	/* A reply's body may be followed by its reason (struct cmp_reply). */
	if (type & CMP_REPLY_BIT)
		return sizeof(struct cmp_hdr) + d->size + CMP_WHY_MAX;
	return sizeof(struct cmp_hdr) + d->size;
}

void cmp_reply_set_why(struct cmp_msg *msg, const char *text)
{
	const struct cmp_type_desc *d = cmp_desc(msg->hdr.type);
	char *t;
	size_t n;

	if (!d || !cmp_reply_failed(msg))
		return;
	t = (char *)msg->body + d->size;
	n = text ? strnlen(text, CMP_WHY_MAX - 1) : 0;
	for (size_t i = 0; i < n; i++)
		t[i] = text[i] >= 0x20 && text[i] <= 0x7e ? text[i] : '?';
	memset(t + n, 0, CMP_WHY_MAX - n);
}

const char *cmp_reply_why(const struct cmp_msg *msg)
{
	const struct cmp_type_desc *d = cmp_desc(msg->hdr.type);

	if (!d || !cmp_reply_failed(msg))
		return "";
	return (const char *)msg->body + d->size;
}

void cmp_msg_init(struct cmp_msg *msg, enum cmp_type type, uint32_t seq)
{
	/* Not all CMP_MSG_MAX bytes: every request, reply and event is
	 * built in one, and most are a few dozen bytes. */
	memset(msg, 0, cmp_msg_extent(type));
	msg->hdr.version =
		(type == CMP_TYPE_HELLO || type == CMP_TYPE_HELLO_REPLY) ?
			CMP_VERSION_HELLO :
			CMP_VERSION;
	msg->hdr.type = type;
	msg->hdr.seq = seq;
}

/* Everything but the datagram length; *body_len is what the body needs. */
static int cmp_validate(const struct cmp_msg *msg, size_t *body_len,
			const char **why)
{
	int ret;

	ret = cmp_check_hdr(&msg->hdr, why);
	if (!ret)
		ret = cmp_body_len(msg, body_len, why);
	if (!ret)
		ret = cmp_check_body(msg, *body_len, why);
	return ret;
}

int cmp_check(const struct cmp_msg *msg, const char **why)
{
	const char *unused;
	size_t body_len;

	if (!why)
		why = &unused;
	*why = NULL;
	return cmp_validate(msg, &body_len, why);
}

ssize_t cmp_encode(const struct cmp_msg *msg, void *buf, size_t size)
{
	struct cmp_hdr hdr = msg->hdr;
	const char *why;
	size_t body_len;

	if (cmp_validate(msg, &body_len, &why))
		return -EINVAL;
	hdr.length = (uint32_t)(sizeof(hdr) + body_len);
	if (size < hdr.length)
		return -EMSGSIZE;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy((uint8_t *)buf + sizeof(hdr), msg->body, body_len);
	return hdr.length;
}

int cmp_decode(const void *buf, size_t len, struct cmp_msg *msg,
	       const char **why)
{
	const char *unused;
	size_t body_len, need, extent;
	int ret;

	if (!why)
		why = &unused;
	*why = NULL;
	if (len > CMP_MSG_MAX)
		CMP_FAIL(EMSGSIZE, "datagram larger than CMP_MSG_MAX");
	if (len < sizeof(struct cmp_hdr))
		CMP_BAD("datagram shorter than the header");
	/* msg is CMP_MSG_MAX bytes, so the whole datagram fits. */
	memcpy(msg, buf, len);
	if (msg->hdr.length != len)
		CMP_BAD("header length differs from the datagram length");
	ret = cmp_check_hdr(&msg->hdr, why);
	if (ret)
		return ret;
	extent = cmp_msg_extent((enum cmp_type)msg->hdr.type);
	if (extent > len)
		memset((uint8_t *)msg + len, 0, extent - len);
	body_len = len - sizeof(struct cmp_hdr);
	if (body_len < cmp_desc(msg->hdr.type)->size)
		CMP_BAD("body shorter than its type needs");
	ret = cmp_body_len(msg, &need, why);
	if (ret)
		return ret;
	if (body_len != need)
		CMP_BAD("body length wrong for its type");
	return cmp_check_body(msg, body_len, why);
}

static const char *const cmp_state_names[] = {
#define CM_STATE(NAME, value) [CMP_STATE_##NAME] = #NAME,
#include "cm_states.def"
};

static const char *const cmp_lap_state_names[] = {
#define CM_LAP_STATE(NAME, ENG, value, text) [CMP_LAP_STATE_##NAME] = text,
#include "cm_states.def"
};

const char *cmp_state_name(enum cmp_state state)
{
	unsigned int i = (unsigned int)state;

	return i <= CMP_STATE_MAX ? cmp_state_names[i] : "unknown";
}

const char *cmp_lap_state_name(enum cmp_lap_state state)
{
	unsigned int i = (unsigned int)state;

	return i <= CMP_LAP_STATE_MAX ? cmp_lap_state_names[i] : "unknown";
}
