/* SPDX-License-Identifier: MIT */
/*
 * cmc_rping: rping (librdmacm's example, Debian rdmacm-utils) spoken over
 * libcmclient and the cmd daemon, to interoperate with the Linux kernel's
 * rdma_cm: rdma_cm addressing (cmc_connect_ip(), cmc_listen_port(),
 * cmc_event_cma()) and rping's wire protocol on a real RC QP.
 *
 *   cmc_rping -c -a ADDR -p PORT [-C pings] [-P text] [-E reason]
 *       talk to `rping -s -a ADDR -p PORT`: per ping, fill a buffer with
 *       rping's pattern, SEND its address (the server RDMA-reads it), SEND
 *       a second buffer's address (the server RDMA-writes what it read
 *       into it), compare the two buffers byte for byte. Then disconnect
 *       (the DREQ goes from cmd to the kernel). -P: private data after the
 *       CMA header. -E REASON: expect a REJ with that reason instead
 *       (exit 0 only then).
 *   cmc_rping -s -p PORT [-n conns] [-b backlog] [-H ms] [-R] [-P text]
 *       serve `rping -c -a ADDR -p PORT -V`: per ping, RDMA-read the
 *       client's buffer, check it is rping's pattern, SEND "go ahead",
 *       RDMA-write it into the client's second buffer (rping -V compares),
 *       SEND "done"; the client disconnects (the DREQ comes from the
 *       kernel). -R: reject every REQ (reason 28) with -P's text as the
 *       REJ's private data. -H: hold each REQ that long before answering;
 *       with -b 1, further REQs wait in cmd, which sends MRAs.
 *
 * Common: -S socket, -d device (the QP's; default: the first), -v.
 * Addresses may carry a %scope (ignored: a link-local address is a GID).
 * Exit: 0 all verified (or the expected REJ), 1 otherwise, 2 usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cmc_common.h"
#include <cmclient.h>

/* rping's defaults and wire format (rdma-core librdmacm/examples). */
#define RP_SIZE 64
#define RP_MAX_SIZE 65536
#define RP_MSG_FMT "rdma-ping-%d: "
struct rp_info { /* struct rping_rdma_info, network order */
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

#define CM_WAIT_MS 60000
#define CQ_WAIT_MS 10000

struct opts {
	bool server, client, reject, verbose;
	const char *addr, *socket, *dev, *pd;
	uint16_t port;
	unsigned int pings, conns, backlog, hold_ms;
	int expect_rej;
};

struct conn {
	struct cmc_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem; /* start (or rdma) buf | rdma buf | recv | send */
	size_t size;
};

#define C_START(c) ((c)->mem)
#define C_RDMA(c) ((c)->mem + (c)->size)
#define C_RECV(c) ((c)->mem + 2 * (c)->size)
#define C_SEND(c) ((c)->mem + 2 * (c)->size + 2 * sizeof(struct rp_info))

static struct opts o = { .pings = 3,
			 .conns = 1,
			 .backlog = 4,
			 .expect_rej = -1 };
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct cmc_channel *ch;
static struct timespec t0;

static double since(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0.tv_sec) +
	       (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static const char *sa_str(const struct sockaddr_storage *ss, char *buf,
			  size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		port = ntohs(s->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		port = ntohs(s->sin6_port);
	}
	snprintf(buf, len, "[%s]:%u", a, port);
	return buf;
}

/* Printable prefix of private data. */
static void pd_text(const uint8_t *p, size_t n, char *out, size_t len)
{
	size_t k = 0;

	while (k < n && k + 1 < len && p[k] >= 0x20 && p[k] < 0x7f) {
		out[k] = (char)p[k];
		k++;
	}
	out[k] = '\0';
}

static void conn_free(struct conn *c)
{
	ex_conn_release(c->id, c->qp, c->cq, c->mr);
	free(c->mem);
	memset(c, 0, sizeof(*c));
}

static int conn_qp(struct conn *c)
{
	size_t total;

	c->size = RP_MAX_SIZE;
	total = 2 * c->size + 4 * sizeof(struct rp_info);
	c->mem = calloc(1, total);
	if (!c->mem)
		return -ENOMEM;
	c->mr = ibv_reg_mr(pd, c->mem, total,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	c->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!c->mr || !c->cq)
		return -errno;
	c->qp = ex_rc_qp(pd, c->cq, 8, 4);
	return c->qp ? 0 : -errno;
}

static int post_recv(struct conn *c, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(C_RECV(c) + slot * sizeof(struct rp_info)),
		.length = sizeof(struct rp_info),
		.lkey = c->mr->lkey
	};
	struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)slot,
				  .sg_list = &sge,
				  .num_sge = 1 },
			   *bad;

	return -ibv_post_recv(c->qp, &wr, &bad);
}

static int post_send(struct conn *c, enum ibv_wr_opcode op, void *local,
		     uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local,
			       .length = len,
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = op,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return -ibv_post_send(c->qp, &wr, &bad);
}

/*
 * Wait for one completion. A CM event of the id that arrives meanwhile
 * (the peer's DREQ) ends the wait with *evp set and 1 returned.
 */
static int wait_wc(struct conn *c, struct ibv_wc *wc, struct cmc_event **evp)
{
	double end = since() + CQ_WAIT_MS / 1000.0;
	int r;

	if (evp)
		*evp = NULL;
	for (;;) {
		r = ibv_poll_cq(c->cq, 1, wc);
		if (r < 0)
			return -EIO;
		if (r == 1) {
			if (wc->status != IBV_WC_SUCCESS) {
				fprintf(stderr,
					"work request %" PRIu64 ": %s\n",
					wc->wr_id,
					ibv_wc_status_str(wc->status));
				return -EIO;
			}
			return 0;
		}
		if (evp && c->id && !cmc_get_event_id(ch, c->id, evp, 0)) {
			if ((*evp)->type != CMC_EVENT_MRA_RECEIVED &&
			    (*evp)->type != CMC_EVENT_ESTABLISHED)
				return 1;
			cmc_ack_event(*evp);
			*evp = NULL;
		}
		if (since() > end) {
			fprintf(stderr, "no completion in %d ms\n", CQ_WAIT_MS);
			return -ETIMEDOUT;
		}
		sleep_ms(1);
	}
}

/*
 * Wait for sends send completions and recvs receive completions, in any
 * order (rxe may report the peer's SEND before our own send's ACK). The
 * last receive's completion is left in *rwc. 1 with *evp: a CM event.
 */
static int wait_ops(struct conn *c, int sends, int recvs, struct ibv_wc *rwc,
		    struct cmc_event **evp)
{
	struct ibv_wc wc;
	int r;

	while (sends > 0 || recvs > 0) {
		r = wait_wc(c, &wc, evp);
		if (r)
			return r;
		if (wc.opcode & IBV_WC_RECV) {
			if (recvs-- <= 0) {
				fprintf(stderr, "unexpected receive\n");
				return -EIO;
			}
			*rwc = wc;
		} else {
			sends--;
		}
	}
	return 0;
}

/* The next CM event of the id (MRAs noted and skipped). */
static int wait_cm(struct conn *c, struct cmc_event **evp)
{
	int r;

	for (;;) {
		r = cmc_get_event_id(ch, c->id, evp, CM_WAIT_MS);
		if (r) {
			fprintf(stderr, "waiting for the CM: %s\n",
				cmc_strerror(r));
			return r;
		}
		if ((*evp)->type != CMC_EVENT_MRA_RECEIVED)
			return 0;
		printf("[%.3f s] MRA received: the peer asked for more time\n",
		       since());
		cmc_ack_event(*evp);
	}
}

/* DREQ_RECEIVED or our own DREQ: finish and wait out timewait. */
static int finish(struct conn *c, struct cmc_event *ev)
{
	int r;

	if (!ev) {
		r = cmc_disconnect(c->id, NULL, 0);
		if (r) {
			fprintf(stderr, "disconnect: %s\n", cmc_strerror(r));
			return r;
		}
		printf("[%.3f s] DREQ sent\n", since());
	}
	for (;;) {
		if (!ev) {
			r = wait_cm(c, &ev);
			if (r)
				return r;
		}
		switch (ev->type) {
		case CMC_EVENT_DREQ_RECEIVED:
			r = cmc_disconnect(c->id, NULL, 0);
			printf("[%.3f s] peer disconnected (DREQ received), "
			       "DREP sent%s\n",
			       since(), r ? " FAILED" : "");
			break;
		case CMC_EVENT_DREP_RECEIVED:
			printf("[%.3f s] disconnected (DREP received)\n",
			       since());
			break;
		case CMC_EVENT_DISCONNECT_TIMEOUT:
			fprintf(stderr, "no DREP from the peer\n");
			break;
		case CMC_EVENT_TIMEWAIT_EXIT:
			printf("[%.3f s] timewait over\n", since());
			cmc_ack_event(ev);
			return 0;
		default:
			printf("[%.3f s] %s (ignored)\n", since(),
			       cmc_event_str(ev->type));
			break;
		}
		cmc_ack_event(ev);
		ev = NULL;
	}
}

/* rping's client pattern for ping n (start advances by one per ping). */
static void rp_fill(uint8_t *buf, size_t size, int n)
{
	int cc = snprintf((char *)buf, size, RP_MSG_FMT, n);
	int ch_ = 65 + n % 58;

	for (size_t i = (size_t)cc; i < size; i++) {
		buf[i] = (uint8_t)ch_;
		if (++ch_ > 122)
			ch_ = 65;
	}
	buf[size - 1] = 0;
}

/* Is buf rping's pattern (any ping number)? Returns the number or -1. */
static int rp_check(const uint8_t *buf, size_t size)
{
	int n, cc;

	if (sscanf((const char *)buf, "rdma-ping-%d: %n", &n, &cc) != 1 ||
	    cc <= 0 || (size_t)cc >= size)
		return -1;
	if (buf[size - 1] != 0)
		return -1;
	for (size_t i = (size_t)cc; i + 2 < size; i++) {
		int want = buf[i] == 122 ? 65 : buf[i] + 1;

		if (buf[i] < 65 || buf[i] > 122 || buf[i + 1] != want)
			return -1;
	}
	return n;
}

static void rp_info(struct conn *c, int slot, void *buf, uint32_t size)
{
	struct rp_info *i =
		(struct rp_info *)(C_SEND(c) + slot * sizeof(struct rp_info));

	i->buf = htobe64((uintptr_t)buf);
	i->rkey = htobe32(c->mr->rkey);
	i->size = htobe32(size);
}

/* -v: the QP as the handshake configured it. */
static void qp_dump(struct conn *c, const char *who)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	char g[INET6_ADDRSTRLEN];

	if (!o.verbose || ibv_query_qp(c->qp, &a, 0x1fffff, &ia))
		return;
	inet_ntop(AF_INET6, a.ah_attr.grh.dgid.raw, g, sizeof(g));
	printf("%s QP 0x%x: state %d mtu %d dest_qp 0x%x rq_psn 0x%x sq_psn "
	       "0x%x rd_atomic %u/%u timeout %u retry %u rnr %u; av: dlid "
	       "0x%x global %u dgid %s sgid_index %u hop %u tclass %u port "
	       "%u\n",
	       who, c->qp->qp_num, a.qp_state, a.path_mtu, a.dest_qp_num,
	       a.rq_psn, a.sq_psn, a.max_rd_atomic, a.max_dest_rd_atomic,
	       a.timeout, a.retry_cnt, a.rnr_retry, a.ah_attr.dlid,
	       a.ah_attr.is_global, g, a.ah_attr.grh.sgid_index,
	       a.ah_attr.grh.hop_limit, a.ah_attr.grh.traffic_class,
	       a.ah_attr.port_num);
}

/* ------------------------------------------------------------------ */
/* Client: against rping -s */

static int client(void)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	struct sockaddr_storage dst;
	struct cmc_conn_param p;
	struct conn c = { 0 };
	struct cmc_event *ev;
	struct ibv_wc wc;
	char port[8], buf[96];
	int r, verified = 0;

	snprintf(port, sizeof(port), "%u", o.port);
	r = getaddrinfo(o.addr, port, &hints, &ai);
	if (r) {
		fprintf(stderr, "%s: %s\n", o.addr, gai_strerror(r));
		return 2;
	}
	memset(&dst, 0, sizeof(dst));
	memcpy(&dst, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);

	r = conn_qp(&c);
	if (!r)
		r = cmc_create_id(ch, &c, CMC_QP_RC, &c.id);
	if (r) {
		fprintf(stderr, "QP/id: %s\n", cmc_strerror(r));
		goto out;
	}
	memset(&p, 0, sizeof(p));
	p.qp_num = c.qp->qp_num;
	p.start_psn = (uint32_t)lrand48() & 0xffffff;
	/* rping's conn_param: it RDMA-reads from us, one at a time. */
	p.responder_resources = 1;
	p.initiator_depth = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (o.pd) {
		p.private_data = o.pd;
		p.private_data_len = (uint8_t)strnlen(o.pd, 255);
	}
	r = cmc_connect_ip(c.id, (struct sockaddr *)&dst, NULL, CMC_RDMA_PS_TCP,
			   &p);
	if (r) {
		fprintf(stderr, "cmc_connect_ip: %s\n", cmc_strerror(r));
		goto out;
	}
	printf("[%.3f s] REQ sent to %s, service id 0x%016" PRIx64 "\n",
	       since(), sa_str(&dst, buf, sizeof(buf)),
	       cmc_rdma_service_id(CMC_RDMA_PS_TCP, o.port));
	r = wait_cm(&c, &ev);
	if (r)
		goto out;
	if (ev->type == CMC_EVENT_REJ_RECEIVED) {
		char t[CMC_REJ_PRIVATE_DATA_SIZE + 1];

		pd_text(ev->u.rej.private_data, ev->u.rej.private_data_len, t,
			sizeof(t));
		printf("[%.3f s] rejected: reason %u (%s), private data "
		       "\"%s\"\n",
		       since(), ev->u.rej.reason,
		       cmc_rej_reason_str(ev->u.rej.reason), t);
		r = (int)ev->u.rej.reason == o.expect_rej ? 0 : -ECONNREFUSED;
		cmc_ack_event(ev);
		goto out;
	}
	if (ev->type != CMC_EVENT_REP_RECEIVED) {
		fprintf(stderr, "[%.3f s] %s: %s\n", since(),
			cmc_event_str(ev->type), cmc_strerror(ev->status));
		cmc_ack_event(ev);
		r = -EIO;
		goto out;
	}
	cmc_ack_event(ev);
	if (o.expect_rej >= 0) {
		fprintf(stderr, "accepted, want a REJ\n");
		r = -EIO;
		goto out;
	}
	r = cmc_modify_qp(c.id, c.qp, IBV_QPS_INIT);
	if (!r)
		r = post_recv(&c, 0);
	if (!r)
		r = post_recv(&c, 1);
	if (!r)
		r = cmc_modify_qp(c.id, c.qp, IBV_QPS_RTR);
	if (!r)
		r = cmc_modify_qp(c.id, c.qp, IBV_QPS_RTS);
	if (!r)
		r = cmc_rtu(c.id, NULL, 0);
	if (r) {
		fprintf(stderr, "QP/RTU: %s\n", cmc_strerror(r));
		goto out;
	}
	printf("[%.3f s] established (REP received, RTU sent), QPN 0x%x\n",
	       since(), c.qp->qp_num);
	qp_dump(&c, "client");
	for (int n = 0; n < (int)o.pings; n++) {
		rp_fill(C_START(&c), RP_SIZE, n);
		memset(C_RDMA(&c), 0, RP_SIZE);
		rp_info(&c, 0, C_START(&c), RP_SIZE);
		r = post_send(&c, IBV_WR_SEND, C_SEND(&c),
			      sizeof(struct rp_info), 0, 0);
		/* Our send, and the server's "read done". */
		if (!r)
			r = wait_ops(&c, 1, 1, &wc, NULL);
		if (!r)
			r = post_recv(&c, (int)(wc.wr_id - 100));
		if (!r) {
			rp_info(&c, 1, C_RDMA(&c), RP_SIZE);
			r = post_send(&c, IBV_WR_SEND,
				      C_SEND(&c) + sizeof(struct rp_info),
				      sizeof(struct rp_info), 0, 0);
		}
		if (!r)
			r = wait_ops(&c, 1, 1, &wc, NULL);
		if (!r)
			r = post_recv(&c, (int)(wc.wr_id - 100));
		if (r) {
			fprintf(stderr, "ping %d: %s\n", n, cmc_strerror(r));
			break;
		}
		if (memcmp(C_START(&c), C_RDMA(&c), RP_SIZE)) {
			fprintf(stderr, "ping %d: data mismatch: %s\n", n,
				(char *)C_RDMA(&c));
			r = -EIO;
			break;
		}
		verified++;
		printf("ping %d: %d bytes read and written back by the "
		       "server, verified: %s\n",
		       n, RP_SIZE, (char *)C_RDMA(&c));
	}
	if (finish(&c, NULL) && !r)
		r = -EIO;
out:
	conn_free(&c);
	printf("%d of %u ping(s) verified\n", verified,
	       o.expect_rej >= 0 ? 0 : o.pings);
	return r ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Server: for rping -c */

/* One connection: the REQ event is ev (not yet acked). */
static int serve(struct cmc_event *ev, unsigned int index, int *pings)
{
	struct sockaddr_storage src, dst;
	struct cmc_accept_param ap;
	struct conn c = { 0 };
	const uint8_t *upd;
	struct ibv_wc wc;
	char a[96], b[96], t[CMC_CMA_PRIVATE_DATA_SIZE + 1];
	size_t ulen;
	int r;

	*pings = 0;
	c.id = ev->id;
	r = cmc_event_cma(ev, &src, &dst, &upd, &ulen);
	if (r) {
		fprintf(stderr, "conn %u: REQ without a CMA header: %s\n",
			index, cmc_strerror(r));
		cmc_reject(c.id, 28, NULL, 0, NULL, 0);
		cmc_ack_event(ev);
		conn_free(&c);
		return r;
	}
	pd_text(upd, ulen, t, sizeof(t));
	printf("[%.3f s] conn %u: REQ from %s to %s, service id 0x%016" PRIx64
	       ", user private data %zu bytes \"%s\"\n",
	       since(), index, sa_str(&src, a, sizeof(a)),
	       sa_str(&dst, b, sizeof(b)), ev->u.req.service_id, ulen, t);
	if (o.hold_ms) {
		printf("[%.3f s] conn %u: holding the REQ %u ms\n", since(),
		       index, o.hold_ms);
		sleep_ms(o.hold_ms);
	}
	if (o.reject) {
		r = cmc_reject(c.id, 28, NULL, 0, o.pd,
			       o.pd ? (uint8_t)strnlen(o.pd, 148) : 0);
		printf("[%.3f s] conn %u: rejected, reason 28, private data "
		       "\"%s\"%s\n",
		       since(), index, o.pd ? o.pd : "", r ? " FAILED" : "");
		cmc_ack_event(ev);
		conn_free(&c);
		return r;
	}
	r = conn_qp(&c);
	if (!r)
		r = cmc_modify_qp(c.id, c.qp, IBV_QPS_INIT);
	if (!r)
		r = post_recv(&c, 0);
	if (!r)
		r = post_recv(&c, 1);
	if (!r)
		r = cmc_modify_qp(c.id, c.qp, IBV_QPS_RTR);
	if (!r) {
		memset(&ap, 0, sizeof(ap));
		ap.qp_num = c.qp->qp_num;
		ap.start_psn = (uint32_t)lrand48() & 0xffffff;
		/* We RDMA-read from the client: as many as it allows. */
		ap.initiator_depth = ev->u.req.responder_resources ? 1 : 0;
		ap.responder_resources = ev->u.req.initiator_depth ? 1 : 0;
		ap.rnr_retry_count = 7;
		r = cmc_accept(c.id, &ap);
	}
	if (!r)
		r = cmc_modify_qp(c.id, c.qp, IBV_QPS_RTS);
	cmc_ack_event(ev);
	ev = NULL;
	if (r) {
		fprintf(stderr, "conn %u: accept: %s\n", index,
			cmc_strerror(r));
		conn_free(&c);
		return r;
	}
	printf("[%.3f s] conn %u: REP sent, QPN 0x%x\n", since(), index,
	       c.qp->qp_num);
	qp_dump(&c, "server");
	for (;;) {
		struct rp_info in;
		uint32_t len;
		int n;

		/* The client's source buffer, or its DREQ. */
		r = wait_ops(&c, 0, 1, &wc, &ev);
		if (r)
			break;
		memcpy(&in, C_RECV(&c) + (wc.wr_id - 100) * sizeof(in),
		       sizeof(in));
		r = post_recv(&c, (int)(wc.wr_id - 100));
		len = be32toh(in.size);
		if (r || wc.byte_len != sizeof(in) || len < 16 ||
		    len > c.size) {
			fprintf(stderr, "conn %u: bad rping message\n", index);
			r = -EIO;
			break;
		}
		memset(C_RDMA(&c), 0xee, len);
		r = post_send(&c, IBV_WR_RDMA_READ, C_RDMA(&c), len,
			      be64toh(in.buf), be32toh(in.rkey));
		if (!r)
			r = wait_ops(&c, 1, 0, &wc, NULL);
		if (r)
			break;
		n = rp_check(C_RDMA(&c), len);
		if (n < 0) {
			fprintf(stderr,
				"conn %u: read data is not rping's "
				"pattern\n",
				index);
			r = -EIO;
			break;
		}
		r = post_send(&c, IBV_WR_SEND, C_SEND(&c),
			      sizeof(struct rp_info), 0, 0);
		/* Our "go ahead", and the client's sink buffer. */
		if (!r)
			r = wait_ops(&c, 1, 1, &wc, NULL);
		if (r)
			break;
		memcpy(&in, C_RECV(&c) + (wc.wr_id - 100) * sizeof(in),
		       sizeof(in));
		r = post_recv(&c, (int)(wc.wr_id - 100));
		if (!r)
			r = post_send(&c, IBV_WR_RDMA_WRITE, C_RDMA(&c),
				      (uint32_t)strlen((char *)C_RDMA(&c)) + 1,
				      be64toh(in.buf), be32toh(in.rkey));
		if (!r)
			r = wait_ops(&c, 1, 0, &wc, NULL);
		if (!r)
			r = post_send(&c, IBV_WR_SEND, C_SEND(&c),
				      sizeof(struct rp_info), 0, 0);
		if (!r)
			r = wait_ops(&c, 1, 0, &wc, NULL);
		if (r)
			break;
		(*pings)++;
		printf("conn %u: ping %d: %u bytes RDMA-read (rping's "
		       "pattern verified) and written back: %s\n",
		       index, n, len, (char *)C_RDMA(&c));
	}
	if (r == 1) { /* a CM event: the client's DREQ */
		r = finish(&c, ev);
	} else {
		fprintf(stderr, "conn %u: %s\n", index, cmc_strerror(r));
		finish(&c, NULL);
	}
	conn_free(&c);
	return r;
}

static int server(void)
{
	struct cmc_id *lid;
	struct cmc_event *ev;
	unsigned int done = 0, failed = 0;
	int r, pings;

	r = cmc_create_id(ch, NULL, CMC_QP_RC, &lid);
	if (!r)
		r = cmc_listen_port(lid, CMC_RDMA_PS_TCP, o.port, o.backlog);
	if (r) {
		fprintf(stderr, "listen: %s\n", cmc_strerror(r));
		return 1;
	}
	printf("[%.3f s] listening on port %u (service id 0x%016" PRIx64
	       "), backlog %u\n",
	       since(), o.port, cmc_rdma_service_id(CMC_RDMA_PS_TCP, o.port),
	       o.backlog);
	while (done < o.conns) {
		r = cmc_get_event(ch, &ev, CM_WAIT_MS);
		if (r) {
			fprintf(stderr, "waiting for a REQ: %s\n",
				cmc_strerror(r));
			break;
		}
		if (ev->type != CMC_EVENT_REQ_RECEIVED) {
			printf("[%.3f s] %s (ignored)\n", since(),
			       cmc_event_str(ev->type));
			cmc_ack_event(ev);
			continue;
		}
		r = serve(ev, done, &pings);
		if (r || (!o.reject && !pings))
			failed++;
		done++;
	}
	cmc_destroy_id(lid);
	printf("%u connection(s) served, %u failed\n", done, failed);
	return done == o.conns && !failed ? 0 : 1;
}

static void usage(const char *p)
{
	fprintf(stderr,
		"usage: %s -c -a ADDR -p PORT [-C pings] [-P text] [-E reason]"
		"\n       %s -s -p PORT [-n conns] [-b backlog] [-H ms] [-R] "
		"[-P text]\n       common: [-S socket] [-d device] [-v]\n",
		p, p);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int c, n, r;

	while ((c = getopt(argc, argv, "csa:p:C:P:E:n:b:H:RS:d:v")) != -1) {
		switch (c) {
		case 'c':
			o.client = true;
			break;
		case 's':
			o.server = true;
			break;
		case 'a':
			o.addr = optarg;
			break;
		case 'p':
			o.port = (uint16_t)atoi(optarg);
			break;
		case 'C':
			o.pings = (unsigned int)atoi(optarg);
			break;
		case 'P':
			o.pd = optarg;
			break;
		case 'E':
			o.expect_rej = atoi(optarg);
			break;
		case 'n':
			o.conns = (unsigned int)atoi(optarg);
			break;
		case 'b':
			o.backlog = (unsigned int)atoi(optarg);
			break;
		case 'H':
			o.hold_ms = (unsigned int)atoi(optarg);
			break;
		case 'R':
			o.reject = true;
			break;
		case 'S':
			o.socket = optarg;
			break;
		case 'd':
			o.dev = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (o.client == o.server || !o.port || (o.client && !o.addr) ||
	    optind != argc) {
		usage(argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	srand48(time(NULL) ^ getpid());
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!o.dev || !strcmp(ibv_get_device_name(list[i]), o.dev))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx || !(pd = ibv_alloc_pd(ctx))) {
		fprintf(stderr, "no RDMA device %s\n", o.dev ? o.dev : "");
		return 1;
	}
	r = cmc_open(o.socket, "cmc_rping", &ch);
	if (r) {
		fprintf(stderr, "cannot reach the cmd daemon: %s\n",
			cmc_strerror(r));
		return 1;
	}
	r = o.client ? client() : server();
	cmc_close(ch);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return r;
}
