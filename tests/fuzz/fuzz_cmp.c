// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the client<->daemon protocol codec (proto/cmp.c).
 *
 * The protocol gives every message exactly one encoding (cmp.h, "Layout"),
 * so both round trips must be exact:
 *
 *  1. decode(b) succeeds  =>  encode(decode(b)) == b, byte for byte, the
 *     decoded struct is zero beyond the message, cmp_check() agrees, and a
 *     buffer one byte short is refused with -EMSGSIZE.
 *  2. encode(x) succeeds  =>  decode(encode(x)) == x over the message's
 *     bytes (hdr.length aside, which the encoder computes), for x taken
 *     from the input as a struct a client might have filled in.
 *
 * And the verdicts must line up: the input decodes exactly when, read as a
 * struct, it passes cmp_check() and its length is the one the encoder
 * would give it; -EPROTO exactly when the version rule of cmp.h says so.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"
#include "fuzz.h"

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* cmp.h "Versions": HELLO and its reply always at CMP_VERSION_HELLO. */
static bool version_refused(const struct cmp_hdr *h)
{
	if (h->type == CMP_TYPE_HELLO || h->type == CMP_TYPE_HELLO_REPLY)
		return h->version != CMP_VERSION_HELLO;
	return h->version < CMP_VERSION_MIN || h->version > CMP_VERSION_MAX;
}

static void check_decoded(const uint8_t *data, size_t size,
			  const struct cmp_msg *m)
{
	static uint8_t out[CMP_MSG_MAX];
	static struct cmp_msg again;
	const char *why = "unset";
	ssize_t n;

	size_t extent = cmp_msg_extent((enum cmp_type)m->hdr.type);

	FUZZ_CHECK(m->hdr.length == size);
	FUZZ_CHECK(extent >= size && extent <= sizeof(*m));
	FUZZ_CHECK(all_zero((const uint8_t *)m + size, extent - size));
	FUZZ_CHECK(cmp_check(m, &why) == 0 && why == NULL);

	n = cmp_encode(m, out, sizeof(out));
	FUZZ_CHECK(n == (ssize_t)size);
	FUZZ_CHECK(!memcmp(out, data, size));
	FUZZ_CHECK(cmp_encode(m, out, size - 1) == -EMSGSIZE);

	FUZZ_CHECK(cmp_decode(out, size, &again, NULL) == 0);
	FUZZ_CHECK(!memcmp(&again, m, extent));
}

/* The input as a struct cmp_msg a sender filled in: encode, then decode. */
static void fuzz_encode(const uint8_t *data, size_t size, int decode_rc)
{
	static struct cmp_msg in, got;
	static uint8_t out[CMP_MSG_MAX], out2[CMP_MSG_MAX];
	const char *why = "unset";
	ssize_t n;
	int rc;

	memset(&in, 0, sizeof(in));
	memcpy(&in, data, size < sizeof(in) ? size : sizeof(in));
	rc = cmp_check(&in, &why);
	FUZZ_CHECK(rc == 0 || rc == -EPROTO || rc == -EBADMSG);
	FUZZ_CHECK((rc == 0) == (why == NULL));
	FUZZ_CHECK((rc == -EPROTO) == version_refused(&in.hdr));

	n = cmp_encode(&in, out, sizeof(out));
	FUZZ_CHECK(rc ? n == -EINVAL : n > 0);
	if (n < 0)
		return;
	FUZZ_CHECK(n >= (ssize_t)sizeof(struct cmp_hdr) && n <= CMP_MSG_MAX);
	FUZZ_CHECK(cmp_encode(&in, out2, (size_t)n - 1) == -EMSGSIZE);

	/* The input itself is this encoding when its length field says n. */
	if ((size_t)n == size && in.hdr.length == size)
		FUZZ_CHECK(decode_rc == 0 && !memcmp(out, data, size));

	FUZZ_CHECK(cmp_decode(out, (size_t)n, &got, &why) == 0 && !why);
	in.hdr.length = (uint32_t)n;
	FUZZ_CHECK(!memcmp(&got, &in, (size_t)n));
	FUZZ_CHECK(all_zero((const uint8_t *)&got + n,
			    cmp_msg_extent((enum cmp_type)got.hdr.type) -
				    (size_t)n));
	FUZZ_CHECK(cmp_encode(&got, out2, sizeof(out2)) == n);
	FUZZ_CHECK(!memcmp(out, out2, (size_t)n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cmp_msg m;
	const char *why = "unset";
	struct cmp_hdr h;
	int rc;

	rc = cmp_decode(data, size, &m, &why);
	FUZZ_CHECK(rc == 0 || rc == -EMSGSIZE || rc == -EPROTO ||
		   rc == -EBADMSG);
	FUZZ_CHECK((rc == 0) == (why == NULL));
	FUZZ_CHECK((rc == -EMSGSIZE) == (size > CMP_MSG_MAX));
	if (size >= sizeof(h) && size <= CMP_MSG_MAX) {
		memcpy(&h, data, sizeof(h));
		/* The version is judged once the length is known good. */
		if (h.length == size)
			FUZZ_CHECK((rc == -EPROTO) == version_refused(&h));
	}
	if (rc == 0)
		check_decoded(data, size, &m);
	fuzz_encode(data, size, rc);
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * Golden seeds: every request, every reply (and a failed one), every event
 * type, each built with cmp_msg_init() and encoded with cmp_encode(), so
 * they follow the protocol as cmp.h defines it today.
 */
#include <ctype.h>

static void fill(void *p, size_t n, uint8_t base)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = (uint8_t)(base + i);
}

static void gid(uint8_t g[CM_GID_SIZE], uint8_t host)
{
	static const uint8_t prefix[8] = { 0xfe, 0x80 };

	memcpy(g, prefix, 8);
	fill(g + 8, 7, 0x50);
	g[15] = host;
}

static void path(struct cmp_path *p, bool lap)
{
	p->flow_label = 0x12345;
	p->local_lid = 0x11;
	p->remote_lid = 0x22;
	p->pkey = lap ? 0 : 0xffff;
	p->port_num = 1;
	p->mtu = lap ? 0 : CM_MTU_4096;
	p->sl = 3;
	p->traffic_class = 0x20;
	p->hop_limit = 64;
	p->packet_rate = 7;
	p->local_ack_timeout = 14;
	p->sgid_index = 1;
	p->grh = 1;
	p->packet_life_time = lap ? 0 : 18;
	gid(p->local_gid, 1);
	gid(p->remote_gid, 2);
	strcpy(p->dev_name, "rxe0");
}

/* Private data of n bytes: len and the first n bytes of the array. */
#define PD(s, n)                                                               \
	do {                                                                   \
		(s).private_data_len = (n);                                    \
		fill((s).private_data, (n), 0xa0);                             \
	} while (0)

static void build_request(struct cmp_msg *m, enum cmp_type type)
{
	switch (type) {
	case CMP_TYPE_HELLO:
		m->hello.min_version = CMP_VERSION_MIN;
		m->hello.max_version = CMP_VERSION_MAX;
		strcpy(m->hello.name, "fuzz-seed");
		break;
	case CMP_TYPE_CREATE_ID:
		m->create_id.context = UINT64_C(0x00007f00deadbeef);
		m->create_id.qp_type = CMP_QP_TYPE_RC;
		break;
	case CMP_TYPE_DESTROY_ID:
	case CMP_TYPE_NOTIFY_ESTABLISHED:
	case CMP_TYPE_QUERY_ID:
		m->destroy_id.id = 3;
		break;
	case CMP_TYPE_SET_CONTEXT:
		m->set_context.id = 3;
		m->set_context.context = UINT64_C(0x00007f00cafef00d);
		break;
	case CMP_TYPE_LISTEN:
		m->listen.id = 1;
		m->listen.backlog = 16;
		m->listen.service_id = UINT64_C(0x0000000001060000);
		m->listen.service_mask = UINT64_C(0xffffffffffff0000);
		m->listen.port.kind = CMP_SEL_PORT;
		m->listen.port.port_num = 1;
		strcpy(m->listen.port.dev_name, "rxe0");
		break;
	case CMP_TYPE_CONNECT:
		m->connect.id = 2;
		m->connect.local_qpn = 0x11;
		m->connect.start_psn = 0x123456;
		m->connect.responder_resources = 4;
		m->connect.initiator_depth = 4;
		m->connect.flow_control = 1;
		m->connect.retry_count = CMP_RETRY_MAX;
		m->connect.rnr_retry_count = CMP_RETRY_MAX;
		m->connect.max_cm_retries = CMP_CM_RETRIES_MAX;
		m->connect.local_cm_response_timeout = 20;
		m->connect.remote_cm_response_timeout = 20;
		PD(m->connect, 56);
		m->connect.service_id = UINT64_C(0x0000000001061c06);
		m->connect.dst.family = CMP_AF_IPV4;
		fill(m->connect.dst.addr, 4, 192);
		m->connect.path.flags = CMP_PATH_FLAG_MTU | CMP_PATH_FLAG_PKEY;
		m->connect.path.mtu = CM_MTU_1024;
		m->connect.path.pkey = 0xffff;
		break;
	case CMP_TYPE_ACCEPT:
		m->accept.id = 3;
		m->accept.local_qpn = 0x12;
		m->accept.start_psn = 0x654321;
		m->accept.responder_resources = 2;
		m->accept.initiator_depth = 2;
		m->accept.target_ack_delay = 15;
		m->accept.failover = CMP_FAILOVER_NOT_SUPPORTED;
		m->accept.rnr_retry_count = 3;
		m->accept.srq = 1;
		PD(m->accept, 10);
		break;
	case CMP_TYPE_REJECT:
		m->reject.id = 3;
		m->reject.reason = CM_REJ_CONSUMER_DEFINED;
		m->reject.ari_len = 2;
		fill(m->reject.ari, 2, 0x10);
		PD(m->reject, 20);
		break;
	case CMP_TYPE_RTU:
		m->rtu.id = 2;
		PD(m->rtu, 5);
		break;
	case CMP_TYPE_MRA:
		m->mra.id = 3;
		m->mra.service_timeout = 20;
		break;
	case CMP_TYPE_DISCONNECT:
		m->disconnect.id = 2;
		PD(m->disconnect, 8);
		break;
	case CMP_TYPE_LAP:
		m->lap.id = 2;
		path(&m->lap.alt_path, true);
		PD(m->lap, 4);
		break;
	case CMP_TYPE_APR:
		m->apr.id = 3;
		m->apr.ap_status = CM_APR_REJECTED;
		m->apr.info_len = 3;
		fill(m->apr.info, 3, 0x30);
		PD(m->apr, 4);
		break;
	case CMP_TYPE_RESOLVE_ROUTE:
		m->resolve_route.id = 4;
		m->resolve_route.dst.family = CMP_AF_GID;
		gid(m->resolve_route.dst.addr, 2);
		break;
	case CMP_TYPE_SIDR_REQ:
		m->sidr_req.id = 4;
		m->sidr_req.pkey = 0xffff;
		m->sidr_req.max_cm_retries = 3;
		m->sidr_req.cm_response_timeout = 18;
		m->sidr_req.service_id = UINT64_C(0x0000000001110001);
		m->sidr_req.dst.family = CMP_AF_GID;
		gid(m->sidr_req.dst.addr, 2);
		m->sidr_req.src.kind = CMP_SEL_GID;
		gid(m->sidr_req.src.gid, 1);
		PD(m->sidr_req, 36);
		break;
	case CMP_TYPE_SIDR_REP:
		m->sidr_rep.id = 5;
		m->sidr_rep.qpn = 0x22;
		m->sidr_rep.qkey = 0x11111111;
		m->sidr_rep.status = CM_SIDR_SUCCESS;
		PD(m->sidr_rep, 3);
		break;
	case CMP_TYPE_ACK_EVENT:
		m->ack_event.id = 2;
		m->ack_event.seq = 1;
		break;
	case CMP_TYPE_LIST:
		m->list.cursor = 0;
		m->list.filter = CMP_LIST_FILTER_ALL;
		break;
	case CMP_TYPE_COUNTERS:
		m->counters.scope = CMP_COUNTER_SCOPE_PORT;
		m->counters.port_num = 1;
		strcpy(m->counters.dev_name, "rxe0");
		break;
	case CMP_TYPE_PORTS:
		m->ports.cursor = 23;
		break;
	case CMP_TYPE_CAPTURE:
		m->capture.op = CMP_CAPTURE_START;
		strcpy(m->capture.path, "/var/tmp/cm.pcap");
		break;
	default:
		FUZZ_CHECK(!"not a request type");
	}
}

static void build_reply(struct cmp_msg *m, enum cmp_type type)
{
	struct cmp_id_info *info = &m->query_id_reply.info;

	switch (type) {
	case CMP_TYPE_HELLO_REPLY:
		m->hello_reply.version = CMP_VERSION_MAX;
		m->hello_reply.min_version = CMP_VERSION_MIN;
		m->hello_reply.max_version = CMP_VERSION_MAX;
		m->hello_reply.max_ids = 1024;
		m->hello_reply.max_events = 256;
		m->hello_reply.max_msg = CMP_MSG_MAX;
		strcpy(m->hello_reply.daemon_version, "cmd 0.1.0");
		break;
	case CMP_TYPE_CREATE_ID_REPLY:
		m->create_id_reply.id = 2;
		break;
	case CMP_TYPE_QUERY_ID_REPLY:
		info->id = 2;
		info->context = UINT64_C(0x00007f00deadbeef);
		info->service_id = UINT64_C(0x0000000001061c06);
		info->remote_ca_guid = UINT64_C(0x0002c90300a1b2c3);
		info->local_comm_id = 0x1000;
		info->remote_comm_id = 0x2000;
		info->local_qpn = 0x11;
		info->remote_qpn = 0x12;
		info->local_psn = 0x123456;
		info->remote_psn = 0x654321;
		info->state = CMP_STATE_ESTABLISHED;
		info->lap_state = CMP_LAP_STATE_IDLE;
		info->qp_type = CMP_QP_TYPE_RC;
		info->responder_resources = 4;
		info->initiator_depth = 4;
		info->target_ack_delay = 15;
		info->retry_count = 7;
		info->rnr_retry_count = 7;
		info->max_cm_retries = 15;
		info->local_cm_response_timeout = 20;
		info->remote_cm_response_timeout = 20;
		info->has_alt_path = 1;
		path(&info->path, false);
		path(&info->alt_path, true);
		break;
	case CMP_TYPE_LIST_REPLY:
		m->list_reply.count = 3;
		m->list_reply.next_cursor = 4;
		for (unsigned int i = 0; i < 3; i++) {
			struct cmp_list_entry *e = &m->list_reply.entries[i];

			e->id = i + 1;
			e->state = i ? CMP_STATE_ESTABLISHED : CMP_STATE_LISTEN;
			e->qp_type = CMP_QP_TYPE_RC;
			e->service_id = UINT64_C(0x0000000001061c06);
			e->service_mask = i ? 0 : UINT64_MAX;
			e->local_comm_id = 0x1000 + i;
			e->owner_pid = 4242;
			e->owner_uid = 1000;
			e->backlog = i ? 0 : 16;
			e->credits_in_use = i ? 0 : 16;
			e->held_reqs = i ? 0 : 3;
			gid(e->remote_gid, (uint8_t)i);
		}
		break;
	case CMP_TYPE_COUNTERS_REPLY:
		m->counters_reply.count = 4;
		for (unsigned int i = 0; i < 4; i++) {
			struct cmp_counter *c = &m->counters_reply.entries[i];

			snprintf(c->name, sizeof(c->name), "counter_%u", i);
			c->value = UINT64_C(1) << (i * 16);
		}
		break;
	case CMP_TYPE_PORTS_REPLY:
		/* An IB port with one GID, a RoCE port with more than fit. */
		m->ports_reply.count = 2;
		m->ports_reply.next_cursor = 2;
		for (unsigned int i = 0; i < 2; i++) {
			struct cmp_port_entry *e = &m->ports_reply.entries[i];

			strcpy(e->dev_name, i ? "rxe0" : "mlx5_0");
			e->node_guid = UINT64_C(0x0002c90300a1b2c3);
			e->port_guid = UINT64_C(0x0002c90300a1b2c4) + i;
			e->port_index = (uint16_t)i;
			e->port_num = (uint8_t)(i + 1);
			e->up = 1;
			e->state = CMP_PORT_STATE_ACTIVE;
			e->link_layer =
				i ? CMP_LINK_LAYER_ROCE : CMP_LINK_LAYER_IB;
			e->active_mtu = i ? CM_MTU_1024 : CM_MTU_4096;
			e->lid = i ? 0 : 0x11;
			e->lmc = i ? 0 : 1;
			e->sm_lid = i ? 0 : 1;
			e->sm_sl = i ? 0 : 2;
			e->n_gids = i ? 6 : 1;
			for (unsigned int g = 0; g < (i ? CMP_PORT_GIDS : 1u);
			     g++) {
				e->gids[g].index = (uint16_t)g;
				e->gids[g].type =
					i ? (g & 1 ? CMP_GID_TYPE_ROCE_V2 :
						     CMP_GID_TYPE_ROCE_V1) :
					    CMP_GID_TYPE_IB;
				gid(e->gids[g].gid, (uint8_t)(g + 1));
			}
		}
		break;
	default:
		/* Every other reply is a bare status. */
		break;
	}
}

static void build_event(struct cmp_msg *m, enum cmp_event_type type)
{
	struct cmp_event *e = &m->event;

	e->id = 2;
	e->type = type;
	e->context = UINT64_C(0x00007f00deadbeef);
	switch (type) {
	case CMP_EVENT_REQ_RECEIVED:
		e->id = 7;
		e->req_received.listen_id = 1;
		e->req_received.remote_comm_id = 0x2000;
		e->req_received.remote_qpn = 0x11;
		e->req_received.start_psn = 0x123456;
		e->req_received.service_id = UINT64_C(0x0000000001061c06);
		e->req_received.remote_ca_guid = UINT64_C(0x0002c90300a1b2c3);
		e->req_received.qp_type = CMP_QP_TYPE_RC;
		e->req_received.responder_resources = 4;
		e->req_received.initiator_depth = 4;
		e->req_received.retry_count = 7;
		e->req_received.rnr_retry_count = 7;
		path(&e->req_received.path, false);
		PD(e->req_received, CM_REQ_PRIVATE_DATA_SIZE);
		break;
	case CMP_EVENT_REP_RECEIVED:
		e->rep_received.remote_qpn = 0x12;
		e->rep_received.start_psn = 0x654321;
		e->rep_received.remote_ca_guid = UINT64_C(0x0002c90300d4e5f6);
		e->rep_received.target_ack_delay = 15;
		e->rep_received.failover = CMP_FAILOVER_REJECTED;
		e->rep_received.flow_control = 1;
		e->rep_received.srq = 1;
		path(&e->rep_received.path, false);
		PD(e->rep_received, CM_REP_PRIVATE_DATA_SIZE);
		break;
	case CMP_EVENT_ESTABLISHED:
		PD(e->established, 1);
		break;
	case CMP_EVENT_REJ_RECEIVED:
		e->rej_received.reason = CM_REJ_INVALID_SERVICE_ID;
		e->rej_received.ari_len = CM_REJ_ARI_SIZE;
		fill(e->rej_received.ari, CM_REJ_ARI_SIZE, 0x10);
		PD(e->rej_received, CM_REJ_PRIVATE_DATA_SIZE);
		break;
	case CMP_EVENT_CONNECT_ERROR:
		e->status = -ETIMEDOUT;
		e->connect_error.msg = CMP_CM_MSG_REQ;
		break;
	case CMP_EVENT_MRA_RECEIVED:
		e->mra_received.service_timeout = 22;
		e->mra_received.msg = CMP_CM_MSG_LAP;
		break;
	case CMP_EVENT_DREQ_RECEIVED:
		PD(e->dreq_received, 2);
		break;
	case CMP_EVENT_DREP_RECEIVED:
		PD(e->drep_received, CM_DREP_PRIVATE_DATA_SIZE);
		break;
	case CMP_EVENT_DISCONNECT_TIMEOUT:
	case CMP_EVENT_TIMEWAIT_EXIT:
		break;
	case CMP_EVENT_LAP_RECEIVED:
		path(&e->lap_received.alt_path, true);
		PD(e->lap_received, 7);
		break;
	case CMP_EVENT_APR_RECEIVED:
		e->apr_received.ap_status = CM_APR_INVALID_LID;
		e->apr_received.info_len = 1;
		e->apr_received.info[0] = 0x42;
		break;
	case CMP_EVENT_SIDR_REQ_RECEIVED:
		e->id = 8;
		e->sidr_req_received.listen_id = 1;
		e->sidr_req_received.service_id = UINT64_C(0x0000000001110001);
		path(&e->sidr_req_received.path, false);
		PD(e->sidr_req_received, 36);
		break;
	case CMP_EVENT_SIDR_REP_RECEIVED:
		e->sidr_rep_received.qpn = 0x22;
		e->sidr_rep_received.qkey = 0x11111111;
		path(&e->sidr_rep_received.path, false);
		break;
	case CMP_EVENT_PORT_ERROR:
	case CMP_EVENT_DEVICE_REMOVAL:
		e->status = type == CMP_EVENT_PORT_ERROR ? -ENETDOWN : -ENODEV;
		e->port.port_num = 1;
		strcpy(e->port.dev_name, "rxe0");
		break;
	case CMP_EVENT_ROUTE_RESOLVED:
		e->route_resolved.has_alt = 1;
		path(&e->route_resolved.path, false);
		path(&e->route_resolved.alt_path, true);
		break;
	}
}

static void emit(const struct cmp_msg *m, const char *prefix, const char *name,
		 const char *suffix)
{
	static uint8_t out[CMP_MSG_MAX];
	char file[96], lower[48];
	const char *why;
	ssize_t n;
	size_t i;

	if (cmp_check(m, &why)) {
		fprintf(stderr, "seed %s%s: %s\n", prefix, name, why);
		FUZZ_CHECK(!"seed refused by cmp_check");
	}
	n = cmp_encode(m, out, sizeof(out));
	FUZZ_CHECK(n > 0);
	for (i = 0; name[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[i] = '\0';
	snprintf(file, sizeof(file), "%s%s%s.cmp", prefix, lower, suffix);
	fuzz_seed(file, out, (size_t)n);
}

void fuzz_write_seeds(void)
{
	static struct cmp_msg m;
	uint32_t seq = 1;

	for (unsigned int t = CMP_TYPE_HELLO; t <= CMP_TYPE_REQUEST_MAX; t++) {
		enum cmp_type reply = cmp_reply_type((enum cmp_type)t);

		cmp_msg_init(&m, (enum cmp_type)t, seq);
		build_request(&m, (enum cmp_type)t);
		emit(&m, "req-", cmp_type_name((enum cmp_type)t), "");

		cmp_msg_init(&m, reply, seq);
		build_reply(&m, reply);
		emit(&m, "rep-", cmp_type_name((enum cmp_type)t), "");
		seq++;
	}

	/* Failures: a bare status, and HELLO's body-carrying refusal. */
	cmp_msg_init(&m, CMP_TYPE_CONNECT_REPLY, seq++);
	m.reply.status = -EHOSTUNREACH;
	emit(&m, "rep-", "connect", "-fail");
	cmp_msg_init(&m, CMP_TYPE_LIST_REPLY, seq++);
	m.reply.status = -EPERM;
	emit(&m, "rep-", "list", "-fail");
	cmp_msg_init(&m, CMP_TYPE_PORTS_REPLY, seq++);
	emit(&m, "rep-", "ports", "-empty");
	cmp_msg_init(&m, CMP_TYPE_HELLO_REPLY, seq++);
	build_reply(&m, CMP_TYPE_HELLO_REPLY);
	m.hello_reply.status = -EPROTONOSUPPORT;
	m.hello_reply.version = 0;
	emit(&m, "rep-", "hello", "-fail");

	/* Pipelining (cmp.h): a CONNECT that creates its id, NOREPLY
	 * requests, and plain replies naming the request's id. */
	cmp_msg_init(&m, CMP_TYPE_CONNECT, seq++);
	build_request(&m, CMP_TYPE_CONNECT);
	m.connect.id = CMP_ID_NONE;
	m.connect.qp_type = CMP_QP_TYPE_UC;
	m.connect.context = UINT64_C(0x00007f00deadbeef);
	emit(&m, "req-", "connect", "-create");
	cmp_msg_init(&m, CMP_TYPE_CONNECT, seq++);
	build_request(&m, CMP_TYPE_CONNECT);
	m.hdr.flags = CMP_HDR_NOREPLY;
	emit(&m, "req-", "connect", "-noreply");
	cmp_msg_init(&m, CMP_TYPE_ACK_EVENT, seq++);
	build_request(&m, CMP_TYPE_ACK_EVENT);
	m.hdr.flags = CMP_HDR_NOREPLY;
	emit(&m, "req-", "ack_event", "-noreply");
	cmp_msg_init(&m, CMP_TYPE_CONNECT_REPLY, seq++);
	m.reply.id = 9;
	emit(&m, "rep-", "connect", "-id");
	cmp_msg_init(&m, CMP_TYPE_ACCEPT_REPLY, seq++);
	m.reply.status = -EINVAL;
	m.reply.id = 3;
	emit(&m, "rep-", "accept", "-fail-id");

	for (unsigned int t = 1; t <= CMP_EVENT_MAX; t++) {
		cmp_msg_init(&m, CMP_TYPE_EVENT, t);
		build_event(&m, (enum cmp_event_type)t);
		emit(&m, "ev-", cmp_event_name((enum cmp_event_type)t), "");
	}
}
#endif
