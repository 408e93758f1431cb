// SPDX-License-Identifier: MIT
/*
 * libcmclient, rdma_cm addressing: the port spaces' service ids, IP
 * addresses to GIDs and back, the source GID for a destination, and the
 * CMA header of the REQ private data (proto/rdmacm.h).
 */
#include "cmc_int.h"

/* ------------------------------------------------------------------ */
/* rdma_cm addressing */

_Static_assert((int)CMC_RDMA_PS_TCP == (int)RDMACM_PS_TCP &&
		       (int)CMC_RDMA_PS_UDP == (int)RDMACM_PS_UDP &&
		       (int)CMC_RDMA_PS_IB == (int)RDMACM_PS_IB &&
		       (int)CMC_RDMA_PS_IPOIB == (int)RDMACM_PS_IPOIB &&
		       CMC_CMA_HDR_SIZE == RDMACM_HDR_SIZE,
	       "rdma_cm port spaces are the kernel's");

int cmc_ps(enum cmc_rdma_ps ps, enum rdmacm_ps *out)
{
	switch (ps) {
	case CMC_RDMA_PS_DEFAULT:
	case CMC_RDMA_PS_TCP:
		*out = RDMACM_PS_TCP;
		return 0;
	case CMC_RDMA_PS_UDP:
	case CMC_RDMA_PS_IB:
	case CMC_RDMA_PS_IPOIB:
		*out = (enum rdmacm_ps)ps;
		return 0;
	}
	return -EINVAL;
}

CMC_EXPORT uint64_t cmc_rdma_service_id(enum cmc_rdma_ps ps, uint16_t port)
{
	enum rdmacm_ps p;

	if (cmc_ps(ps, &p))
		return 0;
	return rdmacm_service_id(p, port);
}

bool cmc_gid_ll(const uint8_t *g)
{
	return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

bool cmc_gid_zero(const uint8_t *g)
{
	static const uint8_t zero[CMC_GID_SIZE];

	return !memcmp(g, zero, sizeof(zero));
}

/* Does the application's selector allow this port? */
bool cmc_port_allowed(const struct cmc_port_info *pi,
		      const struct cmc_port_sel *sel)
{
	switch (sel->kind) {
	case CMC_SEL_ANY:
		return true;
	case CMC_SEL_PORT:
		return !strcmp(pi->dev_name, sel->dev_name) &&
		       (!sel->port_num || sel->port_num == pi->port_num);
	case CMC_SEL_GID:
		for (unsigned int i = 0; i < CMC_PORT_GIDS && i < pi->n_gids;
		     i++)
			if (!memcmp(pi->gids[i].gid, sel->gid, CMC_GID_SIZE))
				return true;
		return false;
	}
	return false;
}

/*
 * The source GID the daemon would pick for dgid (daemon/transport.h's
 * xport_pick_sgid over path_resolve's port order): the first served,
 * active RoCE port the selector allows that has a GID of the right kind;
 * on it the best one: same IPv4-mappedness, RoCE v2 first, then the same
 * link-local-ness. Only the first CMC_PORT_GIDS GIDs of a port are seen.
 */
int cmc_pick_sgid(struct cmc_channel *ch, const uint8_t *dgid,
		  const struct cmc_port_sel *sel, uint8_t *sgid)
{
	struct cmc_port_info *pi;
	uint64_t cursor = 0;
	bool v4 = rdmacm_gid_is_v4(dgid), ll = cmc_gid_ll(dgid);
	int n, ret = -EADDRNOTAVAIL;

	pi = calloc(CMC_PORTS_BATCH_MAX, sizeof(*pi));
	if (!pi)
		return -ENOMEM;
	do {
		n = cmc_ports(ch, &cursor, pi);
		if (n < 0) {
			ret = n;
			break;
		}
		for (int k = 0; k < n && ret == -EADDRNOTAVAIL; k++) {
			const struct cmc_port_info *p = &pi[k];
			int best = -1, score;

			if (!p->up || p->state != IBV_PORT_ACTIVE ||
			    p->link_layer != CMC_LINK_ROCE ||
			    !cmc_port_allowed(p, sel))
				continue;
			for (unsigned int i = 0;
			     i < CMC_PORT_GIDS && i < p->n_gids; i++) {
				const struct cmc_port_gid *g = &p->gids[i];

				if (cmc_gid_zero(g->gid) ||
				    rdmacm_gid_is_v4(g->gid) != v4)
					continue;
				score = g->type == CMC_GID_ROCE_V2 ? 2 : 0;
				if (!v4 && cmc_gid_ll(g->gid) == ll)
					score++;
				if (score > best) {
					best = score;
					memcpy(sgid, g->gid, CMC_GID_SIZE);
				}
			}
			if (best >= 0)
				ret = 0;
		}
	} while (ret == -EADDRNOTAVAIL && cursor);
	free(pi);
	return ret;
}

/* An ephemeral source port, from the kernel's default local range. */
uint16_t cmc_ephemeral_port(void)
{
	struct timespec ts;
	uint32_t x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() * 2654435761u;
	x ^= x >> 15;
	return (uint16_t)(32768 + x % (60999 - 32768 + 1));
}

int cmc_sa_port(const struct sockaddr *sa, uint16_t *port)
{
	switch (sa->sa_family) {
	case AF_INET:
		*port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		return 0;
	case AF_INET6:
		*port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* A socket address of family af from a GID (its IP form) and a port. */
void cmc_sa_from_gid(struct sockaddr_storage *ss, int af, const uint8_t *gid,
		     uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (af == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)ss;

		in4->sin_family = AF_INET;
		memcpy(&in4->sin_addr, gid + 12, 4);
		in4->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, gid, CMC_GID_SIZE);
		in6->sin6_port = htons(port);
	}
}

CMC_EXPORT int cmc_cma_hdr_encode(uint8_t out[CMC_CMA_HDR_SIZE],
				  const struct sockaddr *src,
				  const struct sockaddr *dst)
{
	if (!out || !src || !dst)
		return -EINVAL;
	return rdmacm_hdr_encode(out, src, dst);
}

/*
 * The members of struct cmc_conn_param and cmc_sidr_param that
 * cmc_connect_ip() and cmc_sidr_req_ip() rewrite, in the caller's copy:
 * the rdma_cm service id of the destination's port, its GID, the local
 * GID the request leaves from (the selector read first narrows where an
 * unspecified source may be picked), and the private data: the CMA
 * header, then the application's bytes (read first, at most max of them).
 */
struct cmc_ip_req {
	uint64_t *service_id;
	struct cmc_addr *dst;
	struct cmc_port_sel *src;
	const void **pd;
	uint8_t *pd_len;
};

/* Address a request of id from src to dst in port space ps; buf holds the
 * new private data (CMC_SIDR_REQ_PRIVATE_DATA_SIZE, the larger area). */
static int cmc_ip_req(struct cmc_id *id, const struct sockaddr *dst,
		      const struct sockaddr *src, enum cmc_rdma_ps ps,
		      size_t max, const struct cmc_ip_req *r, uint8_t *buf)
{
	uint8_t dgid[CMC_GID_SIZE], sgid[CMC_GID_SIZE];
	struct sockaddr_storage s_sa, d_sa;
	enum rdmacm_ps rps;
	uint16_t dport, sport = 0;
	uint8_t len = *r->pd_len;
	int ret;

	if (!dst || cmc_ps(ps, &rps) || len > max || (len && !*r->pd))
		return -EINVAL;
	if (cmc_sa_port(dst, &dport))
		return -EAFNOSUPPORT;
	if (!dport)
		return -EINVAL;
	if (src &&
	    (src->sa_family != dst->sa_family || cmc_sa_port(src, &sport)))
		return -EAFNOSUPPORT;
	if (rdmacm_gid_from_addr(dgid, dst))
		return -EAFNOSUPPORT;
	memset(sgid, 0, sizeof(sgid));
	if (src)
		rdmacm_gid_from_addr(sgid, src);
	/* An unspecified source (0.0.0.0 maps to ::ffff:0.0.0.0). */
	if (cmc_gid_zero(sgid) || (rdmacm_gid_is_v4(sgid) && !sgid[12] &&
				   !sgid[13] && !sgid[14] && !sgid[15])) {
		struct cmp_port_sel chk = { 0 };

		/* The selector is read here only, so it is checked here. */
		if (cmc_port_sel_to_cmp(&chk, r->src))
			return -EINVAL;
		ret = cmc_pick_sgid(id->ch, dgid, r->src, sgid);
		if (ret)
			return ret;
	}
	if (!sport)
		sport = cmc_ephemeral_port();
	cmc_sa_from_gid(&s_sa, dst->sa_family, sgid, sport);
	cmc_sa_from_gid(&d_sa, dst->sa_family, dgid, dport);
	memset(buf, 0, CMC_SIDR_REQ_PRIVATE_DATA_SIZE);
	if (rdmacm_hdr_encode(buf, (struct sockaddr *)&s_sa,
			      (struct sockaddr *)&d_sa))
		return -EAFNOSUPPORT;
	if (len)
		memcpy(buf + CMC_CMA_HDR_SIZE, *r->pd, len);
	*r->pd = buf;
	*r->pd_len = (uint8_t)(CMC_CMA_HDR_SIZE + len);
	*r->service_id = rdmacm_service_id(rps, dport);
	/* The request leaves from the port owning that GID, and the daemon's
	 * own pick on it is this GID (same rule). */
	memset(r->src, 0, sizeof(*r->src));
	r->src->kind = CMC_SEL_GID;
	memcpy(r->src->gid, sgid, CMC_GID_SIZE);
	memset(r->dst, 0, sizeof(*r->dst));
	r->dst->family = dst->sa_family == AF_INET ? CMC_AF_IPV4 : CMC_AF_IPV6;
	if (dst->sa_family == AF_INET)
		memcpy(r->dst->addr, dgid + 12, 4);
	else
		memcpy(r->dst->addr, dgid, CMC_GID_SIZE);
	return 0;
}

/* The members of a parameter struct p that cmc_ip_req() rewrites. */
#define CMC_IP_REQ_OF(p)                                                       \
	((struct cmc_ip_req){ &(p).service_id, &(p).dst, &(p).src,             \
			      &(p).private_data, &(p).private_data_len })

/* cmc_connect_ip() (conn) and cmc_sidr_req_ip() (sidr; conn NULL). */
static int cmc_ip_send(struct cmc_id *id, const struct sockaddr *dst,
		       const struct sockaddr *src, enum cmc_rdma_ps ps,
		       const struct cmc_conn_param *conn,
		       const struct cmc_sidr_param *sidr)
{
	uint8_t buf[CMC_SIDR_REQ_PRIVATE_DATA_SIZE];
	struct cmc_conn_param c;
	struct cmc_sidr_param s;
	int ret = cmc_id_ok(id);

	if (ret)
		return ret;
	if (conn) {
		c = *conn;
		ret = cmc_ip_req(id, dst, src, ps, CMC_CMA_PRIVATE_DATA_SIZE,
				 &CMC_IP_REQ_OF(c), buf);
		return ret ? ret : cmc_connect(id, &c);
	}
	if (!sidr)
		return -EINVAL;
	s = *sidr;
	ret = cmc_ip_req(id, dst, src, ps, CMC_CMA_SIDR_PRIVATE_DATA_SIZE,
			 &CMC_IP_REQ_OF(s), buf);
	return ret ? ret : cmc_sidr_req(id, &s);
}

CMC_EXPORT int cmc_connect_ip(struct cmc_id *id, const struct sockaddr *dst,
			      const struct sockaddr *src, enum cmc_rdma_ps ps,
			      const struct cmc_conn_param *param)
{
	/* A NULL param is refused there: neither request. */
	return cmc_ip_send(id, dst, src, ps, param, NULL);
}

CMC_EXPORT int cmc_sidr_req_ip(struct cmc_id *id, const struct sockaddr *dst,
			       const struct sockaddr *src, enum cmc_rdma_ps ps,
			       const struct cmc_sidr_param *param)
{
	return cmc_ip_send(id, dst, src, ps, NULL, param);
}

CMC_EXPORT int cmc_listen_port(struct cmc_id *id, enum cmc_rdma_ps ps,
			       uint16_t port, unsigned int backlog)
{
	enum rdmacm_ps rps;

	if (cmc_ps(ps, &rps))
		return -EINVAL;
	return cmc_listen(id, rdmacm_service_id(rps, port), ~UINT64_C(0),
			  backlog, NULL);
}

CMC_EXPORT int cmc_event_cma(const struct cmc_event *ev,
			     struct sockaddr_storage *src,
			     struct sockaddr_storage *dst, const uint8_t **pd,
			     size_t *len)
{
	const uint8_t *data;
	struct rdmacm_hdr h;
	uint64_t sid;
	size_t n;
	int ret;

	if (!ev)
		return -EINVAL;
	/* The two requests that carry a CMA header (cma.c: REQ, SIDR_REQ). */
	if (ev->type == CMC_EVENT_REQ_RECEIVED) {
		sid = ev->u.req.service_id;
		data = ev->u.req.private_data;
		n = ev->u.req.private_data_len;
	} else if (ev->type == CMC_EVENT_SIDR_REQ_RECEIVED) {
		sid = ev->u.sidr_req.service_id;
		data = ev->u.sidr_req.private_data;
		n = ev->u.sidr_req.private_data_len;
	} else {
		return -EINVAL;
	}
	if (rdmacm_service_id_parse(sid, NULL, NULL))
		return -ENOENT;
	ret = rdmacm_hdr_decode(data, n, sid, &h);
	if (ret)
		return ret == -EINVAL ? -ENOENT : -EBADMSG;
	if (src)
		*src = h.src;
	if (dst)
		*dst = h.dst;
	if (pd)
		*pd = data + CMC_CMA_HDR_SIZE;
	if (len)
		*len = n - CMC_CMA_HDR_SIZE;
	return 0;
}

/* The public REJ reasons are the wire's (IBTA Table 109), one for one. */
#define CMC_REJ_SAME(n) ((int)CMC_REJ_##n == (int)CM_REJ_##n)
_Static_assert(
	CMC_REJ_SAME(NO_QP) && CMC_REJ_SAME(NO_EEC) &&
		CMC_REJ_SAME(NO_RESOURCES) && CMC_REJ_SAME(TIMEOUT) &&
		CMC_REJ_SAME(UNSUPPORTED) && CMC_REJ_SAME(INVALID_COMM_ID) &&
		CMC_REJ_SAME(INVALID_COMM_INSTANCE) &&
		CMC_REJ_SAME(INVALID_SERVICE_ID) &&
		CMC_REJ_SAME(INVALID_TRANSPORT_TYPE) &&
		CMC_REJ_SAME(STALE_CONN) && CMC_REJ_SAME(RDC_NOT_EXIST) &&
		CMC_REJ_SAME(INVALID_GID) && CMC_REJ_SAME(INVALID_LID) &&
		CMC_REJ_SAME(INVALID_SL) &&
		CMC_REJ_SAME(INVALID_TRAFFIC_CLASS) &&
		CMC_REJ_SAME(INVALID_HOP_LIMIT) &&
		CMC_REJ_SAME(INVALID_PACKET_RATE) &&
		CMC_REJ_SAME(INVALID_ALT_GID) &&
		CMC_REJ_SAME(INVALID_ALT_LID) && CMC_REJ_SAME(INVALID_ALT_SL) &&
		CMC_REJ_SAME(INVALID_ALT_TRAFFIC_CLASS) &&
		CMC_REJ_SAME(INVALID_ALT_HOP_LIMIT) &&
		CMC_REJ_SAME(INVALID_ALT_PACKET_RATE) &&
		CMC_REJ_SAME(PORT_CM_REDIRECT) && CMC_REJ_SAME(PORT_REDIRECT) &&
		CMC_REJ_SAME(INVALID_MTU) &&
		CMC_REJ_SAME(INSUFFICIENT_RESP_RESOURCES) &&
		CMC_REJ_SAME(CONSUMER_DEFINED) &&
		CMC_REJ_SAME(INVALID_RNR_RETRY) &&
		CMC_REJ_SAME(DUPLICATE_LOCAL_COMM_ID) &&
		CMC_REJ_SAME(INVALID_CLASS_VERSION) &&
		CMC_REJ_SAME(INVALID_FLOW_LABEL) &&
		CMC_REJ_SAME(INVALID_ALT_FLOW_LABEL) &&
		CMC_REJ_SAME(INVALID_ALT_PORT_CM_REDIRECT) &&
		CMC_REJ_SAME(VENDOR_OPTION_NOT_SUPPORTED) &&
		CMC_REJ_REASON_MAX == CM_REJ_REASON_MAX,
	"cmclient.h's REJ reasons are not proto/cm_mad.h's");

CMC_EXPORT const char *cmc_rej_reason_str(unsigned int reason)
{
	switch (reason) {
	case CM_REJ_INVALID_SERVICE_ID:
		return "invalid service id (nobody listens on that port)";
	case CM_REJ_CONSUMER_DEFINED:
		return "consumer reject (the peer application refused)";
	case CM_REJ_STALE_CONN:
		return "stale connection (the peer still knows an old one "
		       "with these ids)";
	}
	return cm_rej_reason_str(reason);
}
