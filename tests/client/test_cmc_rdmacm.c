/* SPDX-License-Identifier: MIT */
/*
 * libcmclient's rdma_cm addressing against the fake daemon: the REQ's
 * service id, destination, source GID and private data (36-byte CMA header
 * then the user's bytes) that cmc_connect_ip() sends, the SIDR_REQ of
 * cmc_sidr_req_ip(), cmc_cma_hdr_encode()'s bytes, cmc_listen_port()'s
 * LISTEN, and cmc_event_cma() over REQ_RECEIVED and SIDR_REQ_RECEIVED
 * events.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "client_fixture.h"

static const uint8_t gid_ll[16] = { 0xfe, 0x80, [8] = 0x02, [15] = 0x01 };
static const uint8_t gid_v4[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
static const uint8_t gid_v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };

/*
 * PORTS: an IB port first (never picked for IP), then a RoCE port whose
 * table has, in this order, a RoCE v1 copy of the IPv4 GID, the link-local
 * one, the IPv4 one (v2) and a global IPv6 one.
 */
static bool ports_hook(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg r;
	struct cmp_port_entry *e;

	if (req->hdr.type != CMP_TYPE_PORTS)
		return false;
	cmp_msg_init(&r, CMP_TYPE_PORTS_REPLY, req->hdr.seq);
	r.ports_reply.count = 2;
	e = &r.ports_reply.entries[0];
	strcpy(e->dev_name, "ib0");
	e->port_num = 1;
	e->up = 1;
	e->state = CMP_PORT_STATE_ACTIVE;
	e->link_layer = CMP_LINK_LAYER_IB;
	e->n_gids = 1;
	e->gids[0].type = CMP_GID_TYPE_IB;
	memcpy(e->gids[0].gid, gid_ll, 16);
	e = &r.ports_reply.entries[1];
	strcpy(e->dev_name, "rxe0");
	e->port_num = 1;
	e->port_index = 1;
	e->up = 1;
	e->state = CMP_PORT_STATE_ACTIVE;
	e->link_layer = CMP_LINK_LAYER_ROCE;
	e->n_gids = 4;
	for (unsigned int i = 0; i < 4; i++)
		e->gids[i].index = (uint16_t)i;
	e->gids[0].type = CMP_GID_TYPE_ROCE_V1;
	memcpy(e->gids[0].gid, gid_v4, 16);
	e->gids[1].type = CMP_GID_TYPE_ROCE_V2;
	memcpy(e->gids[1].gid, gid_ll, 16);
	e->gids[2].type = CMP_GID_TYPE_ROCE_V2;
	memcpy(e->gids[2].gid, gid_v4, 16);
	e->gids[3].type = CMP_GID_TYPE_ROCE_V2;
	memcpy(e->gids[3].gid, gid_v6, 16);
	fake_reply(f, req, 0, &r);
	return true;
}

static int setup(void **state)
{
	return fx_setup(state, "test", 20, ports_hook);
}

static struct cmc_id *mkid(struct fx *x)
{
	struct cmc_id *id;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	return id;
}

static struct sockaddr_in sin4(const char *a, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct sockaddr_in6 sin6(const char *a, uint16_t port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return s;
}

static const struct cmc_conn_param base = {
	.qp_num = 0x1234,
	.start_psn = 0x42,
	.retry_count = 7,
	.rnr_retry_count = 7,
};

static void test_service_ids(void **state)
{
	(void)state;
	assert_true(cmc_rdma_service_id(CMC_RDMA_PS_TCP, 7471) ==
		    UINT64_C(0x0000000001061d2f));
	assert_true(cmc_rdma_service_id(CMC_RDMA_PS_DEFAULT, 1) ==
		    UINT64_C(0x0000000001060001));
	assert_true(cmc_rdma_service_id(CMC_RDMA_PS_UDP, 0x10) ==
		    UINT64_C(0x0000000001110010));
	assert_true(cmc_rdma_service_id(CMC_RDMA_PS_IB, 2) ==
		    UINT64_C(0x00000000013f0002));
	assert_true(cmc_rdma_service_id((enum cmc_rdma_ps)0x999, 2) == 0);
	assert_non_null(strstr(cmc_rej_reason_str(8), "invalid service id"));
	assert_non_null(strstr(cmc_rej_reason_str(28), "consumer"));
	assert_non_null(strstr(cmc_rej_reason_str(10), "stale"));
	assert_string_equal(cmc_rej_reason_str(200), "unknown");
}

/*
 * The last request of type (CONNECT or SIDR_REQ) went to 10.0.0.2 with
 * the service id want, from the daemon's IPv4 GID, picked after one
 * PORTS: how cmc_connect_ip() and cmc_sidr_req_ip() address theirs.
 */
static const struct cmp_msg *sent_to_v4(struct fx *x, enum cmp_type type,
					uint64_t want)
{
	const struct cmp_msg *m = fake_last(x->f, type);
	const struct cmp_addr *dst =
		type == CMP_TYPE_CONNECT ? &m->connect.dst : &m->sidr_req.dst;
	const struct cmp_port_sel *src =
		type == CMP_TYPE_CONNECT ? &m->connect.src : &m->sidr_req.src;

	assert_int_equal(fake_count(x->f, CMP_TYPE_PORTS), 1);
	assert_true((type == CMP_TYPE_CONNECT ?
			     m->connect.service_id :
			     m->sidr_req.service_id) == want);
	assert_int_equal(dst->family, CMP_AF_IPV4);
	assert_memory_equal(dst->addr, "\x0a\x00\x00\x02", 4);
	assert_int_equal(src->kind, CMP_SEL_GID);
	assert_memory_equal(src->gid, gid_v4, 16);
	return m;
}

/* IPv4, no source: the daemon's IPv4 GID (v2) of the RoCE port. */
static void test_connect_ipv4(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x);
	struct sockaddr_in dst = sin4("10.0.0.2", 7471);
	struct cmc_conn_param p = base;
	const struct cmp_connect *c;
	uint16_t sport;
	static const uint8_t pad[12];

	p.private_data = "user bytes";
	p.private_data_len = 10;
	assert_int_equal(cmc_connect_ip(id, (struct sockaddr *)&dst, NULL,
					CMC_RDMA_PS_TCP, &p),
			 0);
	c = &sent_to_v4(x, CMP_TYPE_CONNECT, UINT64_C(0x0000000001061d2f))
		     ->connect;
	assert_int_equal(c->local_qpn, 0x1234);
	assert_int_equal(c->private_data_len, 36 + 10);
	assert_int_equal(c->private_data[0], 0x00); /* CMA version */
	assert_int_equal(c->private_data[1], 0x40); /* IPv4 */
	sport = (uint16_t)(c->private_data[2] << 8 | c->private_data[3]);
	assert_true(sport >= 32768 && sport <= 60999); /* ephemeral */
	assert_memory_equal(c->private_data + 4, pad, 12);
	assert_memory_equal(c->private_data + 16, "\x0a\x00\x00\x01", 4);
	assert_memory_equal(c->private_data + 20, pad, 12);
	assert_memory_equal(c->private_data + 32, "\x0a\x00\x00\x02", 4);
	assert_memory_equal(c->private_data + 36, "user bytes", 10);
}

/* IPv6 link-local, source given with a port: that GID and port. */
static void test_connect_ipv6_src(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x);
	struct sockaddr_in6 dst = sin6("fe80::5801:acff:feab:ad74", 18515);
	struct sockaddr_in6 src = sin6("fe80::201", 5555);
	struct cmc_conn_param p = base;
	const struct cmp_connect *c;

	assert_int_equal(cmc_connect_ip(id, (struct sockaddr *)&dst,
					(struct sockaddr *)&src,
					CMC_RDMA_PS_DEFAULT, &p),
			 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_PORTS), 0);
	c = &fake_last(x->f, CMP_TYPE_CONNECT)->connect;
	assert_true(c->service_id == (UINT64_C(0x0000000001060000) | 18515));
	assert_int_equal(c->dst.family, CMP_AF_IPV6);
	assert_memory_equal(c->dst.addr, &dst.sin6_addr, 16);
	assert_int_equal(c->src.kind, CMP_SEL_GID);
	assert_memory_equal(c->src.gid, &src.sin6_addr, 16);
	assert_int_equal(c->private_data_len, 36);
	assert_int_equal(c->private_data[1], 0x60);
	assert_int_equal(c->private_data[2], 5555 >> 8);
	assert_int_equal(c->private_data[3], 5555 & 0xff);
	assert_memory_equal(c->private_data + 4, &src.sin6_addr, 16);
	assert_memory_equal(c->private_data + 20, &dst.sin6_addr, 16);
}

/* Link-local destination, no source: the link-local GID, not the global
 * one; a global destination: the global one. */
static void test_connect_ipv6_pick(void **state)
{
	struct fx *x = *state;
	struct sockaddr_in6 ll = sin6("fe80::1:2", 1),
			    gl = sin6("2001:db8::9", 2);
	struct cmc_conn_param p = base;
	const struct cmp_connect *c;

	assert_int_equal(
		cmc_connect_ip(mkid(x), (struct sockaddr *)&ll, NULL, 0, &p),
		0);
	c = &fake_last(x->f, CMP_TYPE_CONNECT)->connect;
	assert_memory_equal(c->src.gid, gid_ll, 16);
	assert_memory_equal(c->private_data + 4, gid_ll, 16);
	assert_int_equal(
		cmc_connect_ip(mkid(x), (struct sockaddr *)&gl, NULL, 0, &p),
		0);
	c = &fake_last(x->f, CMP_TYPE_CONNECT)->connect;
	assert_memory_equal(c->src.gid, gid_v6, 16);
}

static void test_connect_ip_errors(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x);
	struct sockaddr_in dst = sin4("10.0.0.2", 7471),
			   nop = sin4("1.2.3.4", 0);
	struct sockaddr_in6 src6 = sin6("fe80::201", 1);
	struct sockaddr_un_like {
		sa_family_t family;
		char rest[30];
	} unix_sa = { .family = AF_UNIX };
	struct cmc_conn_param p = base;
	uint8_t big[CMC_CMA_PRIVATE_DATA_SIZE + 1] = { 0 };

	p.private_data = big;
	p.private_data_len = CMC_CMA_PRIVATE_DATA_SIZE + 1;
	assert_int_equal(
		cmc_connect_ip(id, (struct sockaddr *)&dst, NULL, 0, &p),
		-EINVAL);
	p.private_data_len = CMC_CMA_PRIVATE_DATA_SIZE;
	p.private_data = NULL;
	assert_int_equal(
		cmc_connect_ip(id, (struct sockaddr *)&dst, NULL, 0, &p),
		-EINVAL);
	p.private_data = big;
	assert_int_equal(
		cmc_connect_ip(id, (struct sockaddr *)&nop, NULL, 0, &p),
		-EINVAL);
	assert_int_equal(cmc_connect_ip(id, (struct sockaddr *)&dst,
					(struct sockaddr *)&src6, 0, &p),
			 -EAFNOSUPPORT);
	assert_int_equal(
		cmc_connect_ip(id, (struct sockaddr *)&unix_sa, NULL, 0, &p),
		-EAFNOSUPPORT);
	assert_int_equal(cmc_connect_ip(id, (struct sockaddr *)&dst, NULL,
					(enum cmc_rdma_ps)7, &p),
			 -EINVAL);
	assert_int_equal(cmc_connect_ip(id, NULL, NULL, 0, &p), -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_CONNECT), 0);
	/* Only the IB port may be used: no GID fits an IP destination. */
	p.src.kind = CMC_SEL_PORT;
	strcpy(p.src.dev_name, "ib0");
	assert_int_equal(
		cmc_connect_ip(id, (struct sockaddr *)&dst, NULL, 0, &p),
		-EADDRNOTAVAIL);
	/* The largest user part fits exactly. */
	strcpy(p.src.dev_name, "rxe0");
	big[CMC_CMA_PRIVATE_DATA_SIZE - 1] = 0x5a;
	assert_int_equal(
		cmc_connect_ip(id, (struct sockaddr *)&dst, NULL, 0, &p), 0);
	assert_int_equal(
		fake_last(x->f, CMP_TYPE_CONNECT)->connect.private_data_len,
		CMC_REQ_PRIVATE_DATA_SIZE);
	assert_int_equal(
		fake_last(x->f, CMP_TYPE_CONNECT)->connect.private_data[91],
		0x5a);
}

static void test_listen_port(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkid(x);
	const struct cmp_listen *m;

	assert_int_equal(cmc_listen_port(l, CMC_RDMA_PS_TCP, 7472, 3), 0);
	m = &fake_last(x->f, CMP_TYPE_LISTEN)->listen;
	assert_true(m->service_id == UINT64_C(0x0000000001061d30));
	assert_true(m->service_mask == ~UINT64_C(0));
	assert_int_equal(m->backlog, 3);
	assert_int_equal(cmc_listen_port(mkid(x), (enum cmc_rdma_ps)5, 1, 1),
			 -EINVAL);
}

static struct cmc_event *push_req(struct fx *x, struct cmc_id *l, uint32_t num,
				  uint64_t sid, const uint8_t *pd, size_t len)
{
	struct cmc_event *ev;
	struct cmp_msg m;

	fake_event(&m, num, CMP_EVENT_REQ_RECEIVED, 0);
	m.event.req_received.listen_id = cmc_id_num(l);
	m.event.req_received.qp_type = CMP_QP_TYPE_RC;
	m.event.req_received.service_id = sid;
	m.event.req_received.private_data_len = CM_REQ_PRIVATE_DATA_SIZE;
	memcpy(m.event.req_received.private_data, pd, len);
	m.event.req_received.path.port_num = 1;
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	return ev;
}

static void test_event_cma(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkid(x);
	uint8_t pd[CMC_REQ_PRIVATE_DATA_SIZE] = { 0x00, 0x40, 0xe4, 0xd2 };
	struct sockaddr_storage s, d;
	const struct sockaddr_in *s4 = (const void *)&s, *d4 = (const void *)&d;
	const struct sockaddr_in6 *s6 = (const void *)&s,
				  *d6 = (const void *)&d;
	struct cmc_event *ev;
	const uint8_t *upd;
	size_t ulen;

	assert_int_equal(cmc_listen_port(l, 0, 7472, 8), 0);
	/* IPv4: 10.0.0.9:58578 -> 10.0.0.1:7472, "hi" */
	memcpy(pd + 16, "\x0a\x00\x00\x09", 4);
	memcpy(pd + 32, "\x0a\x00\x00\x01", 4);
	memcpy(pd + 36, "hi", 2);
	ev = push_req(x, l, 600, 0x0000000001061d30, pd, sizeof(pd));
	assert_int_equal(cmc_event_cma(ev, &s, &d, &upd, &ulen), 0);
	assert_int_equal(s4->sin_family, AF_INET);
	assert_int_equal(ntohs(s4->sin_port), 0xe4d2);
	assert_int_equal(ntohl(s4->sin_addr.s_addr), 0x0a000009);
	assert_int_equal(d4->sin_family, AF_INET);
	assert_int_equal(ntohs(d4->sin_port), 7472);
	assert_int_equal(ntohl(d4->sin_addr.s_addr), 0x0a000001);
	assert_int_equal(ulen, CMC_CMA_PRIVATE_DATA_SIZE);
	assert_memory_equal(upd, "hi", 2);
	assert_int_equal(cmc_event_cma(ev, NULL, NULL, NULL, NULL), 0);
	cmc_ack_event(ev);

	/* IPv6. */
	memset(pd, 0, sizeof(pd));
	pd[1] = 0x60;
	memcpy(pd + 4, gid_ll, 16);
	memcpy(pd + 20, gid_v6, 16);
	ev = push_req(x, l, 601, 0x0000000001061d30, pd, sizeof(pd));
	assert_int_equal(cmc_event_cma(ev, &s, &d, NULL, NULL), 0);
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_memory_equal(&s6->sin6_addr, gid_ll, 16);
	assert_memory_equal(&d6->sin6_addr, gid_v6, 16);
	assert_int_equal(ntohs(d6->sin6_port), 7472);
	cmc_ack_event(ev);

	/* Not an rdma_cm service id; a bad header. */
	assert_int_equal(cmc_listen(mkid(x), 0xc0ffee, ~0ull, 4, NULL), 0);
	ev = push_req(x, l, 602, 0xc0ffee, pd, sizeof(pd));
	assert_int_equal(cmc_event_cma(ev, &s, &d, &upd, &ulen), -ENOENT);
	cmc_ack_event(ev);
	pd[0] = 1; /* version */
	ev = push_req(x, l, 603, 0x0000000001061d30, pd, sizeof(pd));
	assert_int_equal(cmc_event_cma(ev, &s, &d, &upd, &ulen), -EBADMSG);
	cmc_ack_event(ev);
	pd[0] = 0;
	pd[1] = 0x50; /* IP version 5 */
	ev = push_req(x, l, 604, 0x0000000001061d30, pd, sizeof(pd));
	assert_int_equal(cmc_event_cma(ev, &s, &d, &upd, &ulen), -EBADMSG);
	cmc_ack_event(ev);
	assert_int_equal(cmc_event_cma(NULL, &s, &d, &upd, &ulen), -EINVAL);
}

/* The public encoder: golden bytes, both families. */
static void test_cma_hdr_encode(void **state)
{
	static const uint8_t want4[CMC_CMA_HDR_SIZE] = {
		0x00, 0x40, 0xe4, 0xd2, [16] = 10, 0, 0, 9, [32] = 10, 0, 0, 1
	};
	struct sockaddr_in s4 = sin4("10.0.0.9", 0xe4d2),
			   d4 = sin4("10.0.0.1", 7472);
	struct sockaddr_in6 s6 = sin6("fe80::201", 5555),
			    d6 = sin6("2001:db8::1", 18515);
	uint8_t h[CMC_CMA_HDR_SIZE];

	(void)state;
	memset(h, 0xa5, sizeof(h));
	assert_int_equal(cmc_cma_hdr_encode(h, (struct sockaddr *)&s4,
					    (struct sockaddr *)&d4),
			 0);
	assert_memory_equal(h, want4, sizeof(h));
	/* IPv6: the addresses whole; the destination port is not sent. */
	assert_int_equal(cmc_cma_hdr_encode(h, (struct sockaddr *)&s6,
					    (struct sockaddr *)&d6),
			 0);
	assert_int_equal(h[0], 0x00);
	assert_int_equal(h[1], 0x60);
	assert_int_equal(h[2] << 8 | h[3], 5555);
	assert_memory_equal(h + 4, &s6.sin6_addr, 16);
	assert_memory_equal(h + 20, &d6.sin6_addr, 16);
	assert_int_equal(cmc_cma_hdr_encode(h, (struct sockaddr *)&s4,
					    (struct sockaddr *)&d6),
			 -EAFNOSUPPORT);
	assert_int_equal(cmc_cma_hdr_encode(h, NULL, (struct sockaddr *)&d4),
			 -EINVAL);
	assert_int_equal(cmc_cma_hdr_encode(NULL, (struct sockaddr *)&s4,
					    (struct sockaddr *)&d4),
			 -EINVAL);
}

static struct cmc_id *mkud(struct fx *x)
{
	struct cmc_id *id;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_UD, &id), 0);
	return id;
}

/*
 * cmc_sidr_req_ip(), as udaddy's peer: the UDP port space's service id,
 * the destination's GID, the source GID the daemon would pick, and the
 * CMA header (what cmc_cma_hdr_encode() makes) before the user's bytes.
 */
static void test_sidr_req_ip(void **state)
{
	struct fx *x = *state;
	struct sockaddr_in dst = sin4("10.0.0.2", 7471), src;
	struct sockaddr_in6 dst6 = sin6("fe80::5801:acff:feab:ad74", 7174),
			    src6 = sin6("fe80::201", 4444);
	struct cmc_sidr_param p = { .pkey = 0xffff,
				    .max_cm_retries = 3,
				    .cm_response_timeout = 18,
				    .private_data = "udaddy",
				    .private_data_len = 6 };
	uint8_t big[CMC_CMA_SIDR_PRIVATE_DATA_SIZE + 1] = { 0 };
	uint8_t h[CMC_CMA_HDR_SIZE];
	const struct cmp_sidr_req *r;
	uint16_t sport;

	assert_int_equal(cmc_sidr_req_ip(mkud(x), (struct sockaddr *)&dst, NULL,
					 CMC_RDMA_PS_UDP, &p),
			 0);
	r = &sent_to_v4(x, CMP_TYPE_SIDR_REQ, UINT64_C(0x0000000001111d2f))
		     ->sidr_req;
	assert_int_equal(r->pkey, 0xffff);
	assert_int_equal(r->max_cm_retries, 3);
	assert_int_equal(r->cm_response_timeout, 18);
	assert_int_equal(r->private_data_len, CMC_CMA_HDR_SIZE + 6);
	sport = (uint16_t)(r->private_data[2] << 8 | r->private_data[3]);
	assert_true(sport >= 32768 && sport <= 60999); /* ephemeral */
	src = sin4("10.0.0.1", sport);
	assert_int_equal(cmc_cma_hdr_encode(h, (struct sockaddr *)&src,
					    (struct sockaddr *)&dst),
			 0);
	assert_memory_equal(r->private_data, h, sizeof(h));
	assert_memory_equal(r->private_data + 36, "udaddy", 6);

	/* A source given, and the largest user part: 216 bytes in all. */
	p.private_data = big;
	p.private_data_len = CMC_CMA_SIDR_PRIVATE_DATA_SIZE;
	big[CMC_CMA_SIDR_PRIVATE_DATA_SIZE - 1] = 0x5a;
	assert_int_equal(cmc_sidr_req_ip(mkud(x), (struct sockaddr *)&dst6,
					 (struct sockaddr *)&src6,
					 CMC_RDMA_PS_UDP, &p),
			 0);
	/* No PORTS this time: the source is src6, its port in the header. */
	assert_int_equal(fake_count(x->f, CMP_TYPE_PORTS), 1);
	r = &fake_last(x->f, CMP_TYPE_SIDR_REQ)->sidr_req;
	assert_memory_equal(r->src.gid, &src6.sin6_addr, 16);
	assert_int_equal(cmc_cma_hdr_encode(h, (struct sockaddr *)&src6,
					    (struct sockaddr *)&dst6),
			 0);
	assert_memory_equal(r->private_data, h, sizeof(h));
	assert_int_equal(r->private_data_len, CMC_SIDR_REQ_PRIVATE_DATA_SIZE);
	assert_int_equal(r->private_data[CMC_SIDR_REQ_PRIVATE_DATA_SIZE - 1],
			 0x5a);
	assert_true(r->service_id == (UINT64_C(0x0000000001110000) | 7174));

	/* Refused before anything is sent. */
	p.private_data_len = CMC_CMA_SIDR_PRIVATE_DATA_SIZE + 1;
	assert_int_equal(cmc_sidr_req_ip(mkud(x), (struct sockaddr *)&dst, NULL,
					 CMC_RDMA_PS_UDP, &p),
			 -EINVAL);
	p.private_data_len = 0;
	assert_int_equal(cmc_sidr_req_ip(mkud(x), (struct sockaddr *)&dst,
					 (struct sockaddr *)&src6,
					 CMC_RDMA_PS_UDP, &p),
			 -EAFNOSUPPORT);
	assert_int_equal(cmc_sidr_req_ip(mkud(x), (struct sockaddr *)&dst, NULL,
					 CMC_RDMA_PS_UDP, NULL),
			 -EINVAL);
	p.reserved[0] = 1;
	assert_int_equal(cmc_sidr_req_ip(mkud(x), (struct sockaddr *)&dst6,
					 (struct sockaddr *)&src6,
					 CMC_RDMA_PS_UDP, &p),
			 -EINVAL);
	assert_int_equal(fake_count(x->f, CMP_TYPE_SIDR_REQ), 2);
}

/* A SIDR_REQ_RECEIVED carries the header too: 180 bytes after it. */
static void test_event_cma_sidr(void **state)
{
	struct fx *x = *state;
	struct cmc_id *l = mkud(x);
	struct sockaddr_in s4 = sin4("10.0.0.9", 4242),
			   d4 = sin4("10.0.0.1", 7174);
	struct sockaddr_storage s, d;
	const struct sockaddr_in *sp = (const void *)&s, *dp = (const void *)&d;
	struct cmp_ev_sidr_req *b;
	struct cmc_event *ev;
	const uint8_t *upd;
	struct cmp_msg m;
	size_t ulen;

	assert_int_equal(cmc_listen_port(l, CMC_RDMA_PS_UDP, 7174, 4), 0);
	fake_event(&m, 700, CMP_EVENT_SIDR_REQ_RECEIVED, 0);
	b = &m.event.sidr_req_received;
	b->listen_id = cmc_id_num(l);
	b->service_id = cmc_rdma_service_id(CMC_RDMA_PS_UDP, 7174);
	b->private_data_len = CM_SIDR_REQ_PRIVATE_DATA_SIZE;
	b->path.port_num = 1;
	assert_int_equal(cmc_cma_hdr_encode(b->private_data,
					    (struct sockaddr *)&s4,
					    (struct sockaddr *)&d4),
			 0);
	memcpy(b->private_data + CMC_CMA_HDR_SIZE, "hi", 2);
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(ev->type, CMC_EVENT_SIDR_REQ_RECEIVED);
	assert_int_equal(cmc_event_cma(ev, &s, &d, &upd, &ulen), 0);
	assert_int_equal(sp->sin_family, AF_INET);
	assert_int_equal(ntohs(sp->sin_port), 4242);
	assert_int_equal(ntohl(sp->sin_addr.s_addr), 0x0a000009);
	assert_int_equal(ntohs(dp->sin_port), 7174);
	assert_int_equal(ntohl(dp->sin_addr.s_addr), 0x0a000001);
	assert_int_equal(ulen, CMC_CMA_SIDR_PRIVATE_DATA_SIZE);
	assert_memory_equal(upd, "hi", 2);
	assert_ptr_equal(upd, ev->u.sidr_req.private_data + CMC_CMA_HDR_SIZE);
	assert_int_equal(
		cmc_sidr_rep(ev->id, 0, 0x77, CMC_RDMA_UDP_QKEY, NULL, 0), 0);
	assert_true(fake_last(x->f, CMP_TYPE_SIDR_REP)->sidr_rep.qkey ==
		    0x01234567);
	cmc_ack_event(ev);
}

/* Not a REQ_RECEIVED. */
static void test_event_cma_type(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id = mkid(x);
	struct cmc_event *ev;
	struct cmp_msg m;

	fake_event(&m, cmc_id_num(id), CMP_EVENT_ESTABLISHED, 0);
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(cmc_event_cma(ev, NULL, NULL, NULL, NULL), -EINVAL);
	cmc_ack_event(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_service_ids),
		cmocka_unit_test_setup_teardown(test_connect_ipv4, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_connect_ipv6_src, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_connect_ipv6_pick, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_connect_ip_errors, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_listen_port, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_event_cma, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_event_cma_type, setup,
						fx_teardown),
		cmocka_unit_test(test_cma_hdr_encode),
		cmocka_unit_test_setup_teardown(test_sidr_req_ip, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_event_cma_sidr, setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
