/* SPDX-License-Identifier: MIT */
/*
 * cmc_server: accept RC connections through the cmd daemon and check what
 * the client sends.
 *
 * For every REQ it creates an RC QP, moves it to INIT and RTR with the
 * attributes the handshake negotiated (cmc_modify_qp), posts a receive,
 * and accepts, telling the client in the REP's private data where it may
 * RDMA-write. The client writes a pattern, then SENDs a message naming the
 * pattern's checksum; the server verifies both and answers with a SEND of
 * its own, which the client verifies. The client then disconnects; the
 * server answers the DREQ, waits for timewait to end, and frees the
 * connection. It exits after -c connections.
 *
 * -D: the server ends each connection instead (DREQ once its answer is
 * delivered; the client, also given -D, answers with the DREP).
 * -R: every REQ gets a REJ, reason 28 (consumer defined), whose private
 * data reads EX_REJECT_TEXT and the connection's number; no QP is made.
 *
 * One event loop serves the CM and the verbs completions: poll() over
 * cmc_fd() and the completion channel.
 */
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "cmc_common.h"

struct conn {
	unsigned int index;
	struct cmc_id *id;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	/* One registration: the RDMA target, then receive and send. */
	uint8_t *buf;
	bool established;
	bool verified;
	bool done; /* timewait over or handshake failed */
	bool ok; /* data verified and answered */
};

struct server {
	struct ex_opts o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct cmc_channel *ch;
	struct cmc_id *listener;
	/* By index, for the completions; NULL once freed. */
	struct conn **conns;
	unsigned int started, finished, failed;
};

#define CONN_RDMA(c) ((c)->buf)
#define CONN_RECV(c) ((c)->buf + EX_BUF_SIZE)
#define CONN_SEND(c) ((c)->buf + EX_BUF_SIZE + EX_MSG_SIZE)
#define CONN_BUF_SIZE (EX_BUF_SIZE + 2 * EX_MSG_SIZE)

/* Work request ids: the connection's index and what it was. */
#define WR_RECV 1u
#define WR_SEND 2u
#define WR_ID(c, kind) (((uint64_t)(c)->index << 8) | (kind))

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void conn_free(struct server *s, struct conn *c)
{
	s->conns[c->index] = NULL;
	ex_conn_release(c->id, c->qp, NULL, c->mr);
	free(c->buf);
	free(c);
}

static int post_recv(struct conn *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)CONN_RECV(c),
		.length = EX_MSG_SIZE,
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_ID(c, WR_RECV),
				  .sg_list = &sge,
				  .num_sge = 1 },
			   *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

/* REQ_RECEIVED: a QP for the new id, brought up to RTR, then the REP. */
static int on_req(struct server *s, struct cmc_event *ev)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ex_rdma_target t;
	struct cmc_accept_param ap;
	struct conn *c;
	int ret;

	if (ev->u.req.qp_type != CMC_QP_RC) {
		cmc_reject(ev->id, 9 /* invalid transport type */, NULL, 0,
			   NULL, 0);
		cmc_destroy_id(ev->id);
		return 0;
	}
	if (strcmp(ev->u.req.path.dev_name,
		   ibv_get_device_name(s->ctx->device))) {
		fprintf(stderr, "REQ arrived on %s, we serve %s\n",
			ev->u.req.path.dev_name,
			ibv_get_device_name(s->ctx->device));
		cmc_reject(ev->id, 3 /* no resources */, NULL, 0, NULL, 0);
		cmc_destroy_id(ev->id);
		return 0;
	}
	if (s->o.reject && s->started < s->o.count) {
		/* -R: say no, and why, in the REJ's private data. */
		char why[CMC_REJ_PRIVATE_DATA_SIZE];
		unsigned int n = s->started++;
		int len = snprintf(why, sizeof(why), EX_REJECT_TEXT "%u", n);

		ret = cmc_reject(ev->id, 28 /* consumer defined */, NULL, 0,
				 why, (uint8_t)(len + 1));
		if (ret)
			fprintf(stderr, "conn %u: reject: %s\n", n,
				cmc_strerror(ret));
		else
			printf("conn %u: rejected, private data \"%s\"\n", n,
			       why);
		cmc_destroy_id(ev->id);
		if (ret)
			s->failed++;
		s->finished++;
		return 0;
	}
	if (s->started == s->o.count) {
		/* More clients than -c: say no, clearly. */
		cmc_reject(ev->id, 28 /* consumer defined */, NULL, 0, "full",
			   4);
		cmc_destroy_id(ev->id);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->index = s->started++;
	c->id = ev->id;
	s->conns[c->index] = c;
	/* The new id came with the listener's context; it gets its own. */
	ret = cmc_set_context(c->id, c);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	c->buf = calloc(1, CONN_BUF_SIZE);
	if (!c->buf)
		goto fail;
	c->mr = ibv_reg_mr(s->pd, c->buf, CONN_BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	c->qp = ibv_create_qp(s->pd, &qia);
	if (!c->mr || !c->qp) {
		ret = -errno;
		perror("ibv_reg_mr/ibv_create_qp");
		goto fail;
	}
	ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_INIT);
	if (!ret)
		ret = -post_recv(c);
	if (!ret)
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTR);
	if (ret) {
		fprintf(stderr, "conn %u: QP setup: %s\n", c->index,
			cmc_strerror(ret));
		goto fail;
	}

	t.addr = htobe64((uintptr_t)CONN_RDMA(c));
	t.rkey = htobe32(c->mr->rkey);
	t.len = htobe32(EX_BUF_SIZE);
	memset(&ap, 0, sizeof(ap));
	ap.qp_num = c->qp->qp_num;
	ap.start_psn = ex_psn();
	/* We only serve RDMA writes: no reads, so no responder resources. */
	ap.responder_resources = 0;
	ap.initiator_depth = 0;
	ap.rnr_retry_count = 7;
	ap.private_data = &t;
	ap.private_data_len = sizeof(t);
	ret = cmc_accept(c->id, &ap);
	if (!ret)
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTS);
	if (ret) {
		fprintf(stderr, "conn %u: accept: %s\n", c->index,
			cmc_strerror(ret));
		goto fail;
	}
	printf("conn %u: accepted QPN 0x%x from QPN 0x%x\n", c->index,
	       c->qp->qp_num, ev->u.req.remote_qpn);
	return 0;
fail:
	/* Destroy sends the REJ the open handshake needs. */
	conn_free(s, c);
	s->failed++;
	s->finished++;
	return 0;
}

static void on_cm_event(struct server *s, struct cmc_event *ev)
{
	struct conn *c =
		ev->type == CMC_EVENT_REQ_RECEIVED ? NULL : ev->context;
	int ret;

	switch (ev->type) {
	case CMC_EVENT_REQ_RECEIVED:
		ret = on_req(s, ev);
		if (ret)
			fprintf(stderr, "REQ: %s\n", cmc_strerror(ret));
		break;
	case CMC_EVENT_ESTABLISHED:
		c->established = true;
		printf("conn %u: established\n", c->index);
		break;
	case CMC_EVENT_REJ_RECEIVED:
		fprintf(stderr, "conn %u: rejected, reason %u\n", c->index,
			ev->u.rej.reason);
		c->done = true;
		break;
	case CMC_EVENT_CONNECT_ERROR:
		fprintf(stderr, "conn %u: handshake failed: %s\n", c->index,
			cmc_strerror(ev->status));
		c->done = true;
		break;
	case CMC_EVENT_DREQ_RECEIVED:
		/* Answer with the DREP; timewait follows. */
		ret = cmc_disconnect(c->id, NULL, 0);
		if (ret)
			fprintf(stderr, "conn %u: DREP: %s\n", c->index,
				cmc_strerror(ret));
		else
			printf("conn %u: client disconnected, DREP sent\n",
			       c->index);
		break;
	case CMC_EVENT_DREP_RECEIVED:
		printf("conn %u: disconnected (DREP received)\n", c->index);
		break;
	case CMC_EVENT_DISCONNECT_TIMEOUT:
		fprintf(stderr, "conn %u: no DREP from the client\n", c->index);
		break;
	case CMC_EVENT_TIMEWAIT_EXIT:
		printf("conn %u: timewait over\n", c->index);
		c->done = true;
		break;
	case CMC_EVENT_DEVICE_REMOVAL:
		c->done = true;
		break;
	case CMC_EVENT_REP_RECEIVED:
	case CMC_EVENT_ROUTE_RESOLVED:
	case CMC_EVENT_MRA_RECEIVED:
	case CMC_EVENT_LAP_RECEIVED:
	case CMC_EVENT_APR_RECEIVED:
	case CMC_EVENT_SIDR_REQ_RECEIVED:
	case CMC_EVENT_SIDR_REP_RECEIVED:
	case CMC_EVENT_PORT_ERROR:
	case CMC_EVENT_REQUEST_ERROR: /* only in asynchronous mode */
		printf("event %s (status %d) ignored\n",
		       cmc_event_str(ev->type), ev->status);
		break;
	}
	/* Ack before freeing: the event names the id. */
	cmc_ack_event(ev);
	if (c && c->done) {
		if (!c->ok)
			s->failed++;
		s->finished++;
		conn_free(s, c);
	}
}

/*
 * The client's SEND arrived: the RDMA write before it has landed (RC
 * executes a QP's requests in order). Check both, answer with a SEND.
 */
static void on_recv(struct conn *c, const struct ibv_wc *wc)
{
	char *msg = (char *)CONN_RECV(c);
	unsigned int conn_no = 0;
	uint32_t want = 0, got;
	size_t bad = EX_BUF_SIZE;
	struct ibv_sge sge = {
		.addr = (uintptr_t)CONN_SEND(c),
		.length = EX_MSG_SIZE,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = { .wr_id = WR_ID(c, WR_SEND),
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *badwr;

	/* Data before the RTU: the QP saw it, so the connection is up. */
	if (!c->established) {
		cmc_notify_established(c->id);
		c->established = true;
	}
	msg[EX_MSG_SIZE - 1] = '\0';
	if (wc->byte_len > EX_MSG_SIZE ||
	    sscanf(msg, "cmc hello %u %" SCNx32, &conn_no, &want) != 2) {
		fprintf(stderr, "conn %u: bad message\n", c->index);
		snprintf((char *)CONN_SEND(c), EX_MSG_SIZE, "bad message");
	} else {
		got = ex_checksum(CONN_RDMA(c), EX_BUF_SIZE);
		for (size_t i = 0; i < EX_BUF_SIZE; i++)
			if (CONN_RDMA(c)[i] != ex_pattern(conn_no, i)) {
				bad = i;
				break;
			}
		c->verified = got == want && bad == EX_BUF_SIZE;
		if (c->verified)
			printf("conn %u: message and %d RDMA-written bytes "
			       "verified\n",
			       c->index, EX_BUF_SIZE);
		else
			fprintf(stderr,
				"conn %u: RDMA data wrong (checksum %08x, "
				"want %08x, first bad byte %zu)\n",
				c->index, got, want, bad);
		snprintf((char *)CONN_SEND(c), EX_MSG_SIZE, "cmc %s %08" PRIx32,
			 c->verified ? "ok" : "bad", got);
	}
	if (ibv_post_send(c->qp, &wr, &badwr))
		perror("ibv_post_send");
}

/*
 * Our answer was delivered. -D: this side ends the connection (DREQ);
 * DREP_RECEIVED (or DISCONNECT_TIMEOUT), then TIMEWAIT_EXIT follow.
 */
static void answered(struct conn *c, bool disconnect)
{
	int ret;

	c->ok = c->verified;
	if (!disconnect)
		return;
	ret = cmc_disconnect(c->id, NULL, 0);
	if (ret)
		fprintf(stderr, "conn %u: disconnect: %s\n", c->index,
			cmc_strerror(ret));
	else
		printf("conn %u: DREQ sent\n", c->index);
}

/* Completions: find the connection by its index. */
static void drain_cq(struct server *s)
{
	struct ibv_wc wc[8];
	int n;

	while ((n = ibv_poll_cq(s->cq, 8, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			unsigned int idx = (unsigned int)(wc[i].wr_id >> 8);
			struct conn *c =
				idx < s->o.count ? s->conns[idx] : NULL;

			if (!c)
				continue; /* flushed after the conn left */
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					fprintf(stderr, "conn %u: %s\n",
						c->index,
						ibv_wc_status_str(
							wc[i].status));
				continue;
			}
			if ((wc[i].wr_id & 0xff) == WR_RECV)
				on_recv(c, &wc[i]);
			else if ((wc[i].wr_id & 0xff) == WR_SEND)
				answered(c, s->o.server_disconnects);
		}
	}
	if (n < 0)
		fprintf(stderr, "ibv_poll_cq failed\n");
}

int main(int argc, char **argv)
{
	struct server s;
	struct cmc_port_sel sel;
	struct cmc_event *ev;
	int ret = 1, r;

	if (ex_parse_opts(argc, argv, false, &s.o))
		return 2;
	s.started = s.finished = s.failed = 0;
	s.ch = NULL;
	s.cc = NULL;
	s.cq = NULL;
	s.conns = calloc(s.o.count, sizeof(*s.conns));
	if (!s.conns)
		return 1;
	srand48(time(NULL) ^ getpid());
	/* A line at a time, also into a pipe or a file (tests, the demo). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	s.ctx = ex_open_device(s.o.dev);
	if (!s.ctx) {
		free(s.conns);
		return 1;
	}
	s.pd = ibv_alloc_pd(s.ctx);
	s.cc = ibv_create_comp_channel(s.ctx);
	s.cq = s.cc ? ibv_create_cq(s.ctx, 64, NULL, s.cc, 0) : NULL;
	if (!s.pd || !s.cq || ibv_req_notify_cq(s.cq, 0)) {
		perror("PD/CQ");
		goto out_ch;
	}
	r = cmc_open(s.o.socket, "cmc_server", &s.ch);
	if (r) {
		fprintf(stderr, "cannot reach the cmd daemon: %s\n",
			cmc_strerror(r));
		goto out_ch;
	}
	r = cmc_create_id(s.ch, NULL, CMC_QP_RC, &s.listener);
	if (!r)
		r = ex_port_sel(s.ctx, &s.o, true, &sel);
	/* backlog = count: every expected client may be pending at once. */
	if (!r)
		r = cmc_listen(s.listener, s.o.service_id, ~0ull, s.o.count,
			       &sel);
	if (r) {
		fprintf(stderr, "listen on 0x%" PRIx64 ": %s\n", s.o.service_id,
			cmc_strerror(r));
		goto out_ch;
	}
	printf("listening on service id 0x%" PRIx64 " (%s), %u connection(s)\n",
	       s.o.service_id, ibv_get_device_name(s.ctx->device), s.o.count);

	while (!stop && s.finished < s.o.count) {
		struct pollfd pfd[2] = {
			{ .fd = cmc_fd(s.ch), .events = POLLIN },
			{ .fd = s.cc->fd, .events = POLLIN },
		};

		if (poll(pfd, 2, 1000) < 0 && errno != EINTR) {
			perror("poll");
			break;
		}
		/* Drain the CM side until it has nothing ready. */
		while ((r = cmc_get_event(s.ch, &ev, 0)) == 0)
			on_cm_event(&s, ev);
		if (r != -EAGAIN) {
			fprintf(stderr, "cmd daemon: %s\n", cmc_strerror(r));
			break;
		}
		if (pfd[1].revents & POLLIN) {
			struct ibv_cq *cq;
			void *cq_ctx;

			if (!ibv_get_cq_event(s.cc, &cq, &cq_ctx)) {
				ibv_ack_cq_events(cq, 1);
				ibv_req_notify_cq(cq, 0);
			}
		}
		drain_cq(&s);
	}
	printf("%u connection(s) served, %u failed\n", s.finished, s.failed);
	ret = s.failed || s.finished < s.o.count;
	for (unsigned int i = 0; i < s.o.count; i++)
		if (s.conns[i])
			conn_free(&s, s.conns[i]);
out_ch:
	cmc_close(s.ch);
	free(s.conns);
	/* QPs (in conn_free) before the CQ, the CQ before its channel. */
	if (s.cq)
		ibv_destroy_cq(s.cq);
	if (s.cc)
		ibv_destroy_comp_channel(s.cc);
	if (s.pd)
		ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	return ret;
}
