/* SPDX-License-Identifier: MIT */
/*
 * cmc_client: connect to cmc_server through the cmd daemon, RDMA-write a
 * pattern into the server's buffer, SEND a message naming its checksum,
 * and check the server's answer; then disconnect. -c repeats it over that
 * many connections, one after the other.
 *
 * The order of things on the active side, and why:
 *   1. create the QP (RESET): CONNECT needs its number;
 *   2. cmc_connect(): the daemon picks the port and sends the REQ;
 *   3. REP_RECEIVED: INIT (cmc_modify_qp asks the daemon which port it
 *      picked), post the receive for the server's answer, RTR and RTS
 *      with the negotiated values, then the RTU. (INIT right after
 *      cmc_connect() would race a fast REJ: on loopback it can come back
 *      before, and then the id is IDLE and has no attributes to give.)
 *   4. data; 5. disconnect, DREP (or timeout), timewait; 6. destroy.
 *
 * -D: the server disconnects; wait for its DREQ and answer with the DREP.
 * -R: the server rejects (cmc_server -R): succeed only on a REJ with
 * reason 28 whose private data is the server's EX_REJECT_TEXT.
 */
#include <time.h>

#include "cmc_common.h"

struct conn {
	unsigned int index;
	struct cmc_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf; /* the pattern, then receive, then send */
	struct ex_rdma_target peer; /* host order */
};

#define CONN_DATA(c) ((c)->buf)
#define CONN_RECV(c) ((c)->buf + EX_BUF_SIZE)
#define CONN_SEND(c) ((c)->buf + EX_BUF_SIZE + EX_MSG_SIZE)
#define CONN_BUF_SIZE (EX_BUF_SIZE + 2 * EX_MSG_SIZE)

/* A CM step may take a while (REQ retries); a stuck one is an error. */
#define CM_WAIT_MS 30000
#define CQ_WAIT_S 10

static void conn_free(struct conn *c)
{
	ex_conn_release(c->id, c->qp, c->cq, c->mr);
	free(c->buf);
}

/*
 * The next event of this connection's id, skipping the informational MRA.
 * Other ids' events (none in this program) would stay queued.
 */
static int wait_event(struct cmc_channel *ch, struct conn *c,
		      struct cmc_event **evp)
{
	int ret;

	for (;;) {
		ret = cmc_get_event_id(ch, c->id, evp, CM_WAIT_MS);
		if (ret) {
			fprintf(stderr, "conn %u: waiting for the CM: %s\n",
				c->index, cmc_strerror(ret));
			return ret;
		}
		if ((*evp)->type != CMC_EVENT_MRA_RECEIVED)
			return 0;
		printf("conn %u: peer asked for more time\n", c->index);
		cmc_ack_event(*evp);
	}
}

/* Poll the CQ for n successful completions. */
static int wait_cq(struct conn *c, int n)
{
	time_t end = time(NULL) + CQ_WAIT_S;
	struct ibv_wc wc;
	int r;

	while (n > 0) {
		r = ibv_poll_cq(c->cq, 1, &wc);
		if (r < 0)
			return -EIO;
		if (r == 0) {
			if (time(NULL) > end) {
				fprintf(stderr, "conn %u: no completion\n",
					c->index);
				return -ETIMEDOUT;
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr,
				"conn %u: work request %" PRIu64 ": %s\n",
				c->index, wc.wr_id,
				ibv_wc_status_str(wc.status));
			return -EIO;
		}
		n--;
	}
	return 0;
}

static int setup_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct conn *c)
{
	c->buf = calloc(1, CONN_BUF_SIZE);
	if (!c->buf)
		return -ENOMEM;
	for (size_t i = 0; i < EX_BUF_SIZE; i++)
		CONN_DATA(c)[i] = ex_pattern(c->index, i);
	c->mr = ibv_reg_mr(pd, c->buf, CONN_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	c->cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!c->mr || !c->cq)
		return -errno;
	c->qp = ex_rc_qp(pd, c->cq, 4, 2);
	return c->qp ? 0 : -errno;
}

static int post_recv(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)CONN_RECV(c),
			       .length = EX_MSG_SIZE,
			       .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return -ibv_post_recv(c->qp, &wr, &bad);
}

/* The RDMA write of the pattern, then the SEND that names it. */
static int send_data(struct conn *c)
{
	uint32_t sum = ex_checksum(CONN_DATA(c), EX_BUF_SIZE);
	struct ibv_sge wsge = { .addr = (uintptr_t)CONN_DATA(c),
				.length = EX_BUF_SIZE,
				.lkey = c->mr->lkey };
	struct ibv_sge ssge = { .addr = (uintptr_t)CONN_SEND(c),
				.length = EX_MSG_SIZE,
				.lkey = c->mr->lkey };
	struct ibv_send_wr send = { .wr_id = 3,
				    .sg_list = &ssge,
				    .num_sge = 1,
				    .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr write = { .wr_id = 2,
				     .next = &send,
				     .sg_list = &wsge,
				     .num_sge = 1,
				     .opcode = IBV_WR_RDMA_WRITE,
				     .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (c->peer.len < EX_BUF_SIZE) {
		fprintf(stderr, "conn %u: server buffer too small (%u)\n",
			c->index, c->peer.len);
		return -EINVAL;
	}
	write.wr.rdma.remote_addr = c->peer.addr;
	write.wr.rdma.rkey = c->peer.rkey;
	snprintf((char *)CONN_SEND(c), EX_MSG_SIZE, "cmc hello %u %08" PRIx32,
		 c->index, sum);
	if (ibv_post_send(c->qp, &write, &bad))
		return -EIO;
	/* The write, the send, and the server's answer. */
	return wait_cq(c, 3);
}

static int check_answer(struct conn *c)
{
	char want[EX_MSG_SIZE];
	char *got = (char *)CONN_RECV(c);

	snprintf(want, sizeof(want), "cmc ok %08" PRIx32,
		 ex_checksum(CONN_DATA(c), EX_BUF_SIZE));
	got[EX_MSG_SIZE - 1] = '\0';
	if (strcmp(got, want)) {
		fprintf(stderr,
			"conn %u: server answered \"%s\", want "
			"\"%s\"\n",
			c->index, got, want);
		return -EIO;
	}
	printf("conn %u: server verified %d bytes and answered correctly\n",
	       c->index, EX_BUF_SIZE);
	return 0;
}

/*
 * REJ_RECEIVED: say why, with the private data when it is text. With -R
 * this is the expected outcome: reason 28 and the server's words.
 */
static int on_rej(struct conn *c, const struct cmc_event *ev, bool expected)
{
	const struct cmc_ev_rej *r = &ev->u.rej;
	char text[CMC_REJ_PRIVATE_DATA_SIZE + 1];
	size_t n = 0;
	bool ok;

	while (n < r->private_data_len && n < sizeof(text) - 1 &&
	       r->private_data[n] >= 0x20 && r->private_data[n] < 0x7f) {
		text[n] = (char)r->private_data[n];
		n++;
	}
	text[n] = '\0';
	ok = expected && r->reason == 28 &&
	     !strncmp(text, EX_REJECT_TEXT, strlen(EX_REJECT_TEXT));
	fprintf(ok ? stdout : stderr,
		"conn %u: rejected, reason %u, private data \"%s\"\n", c->index,
		r->reason, text);
	return ok ? 0 : -ECONNREFUSED;
}

/* REP_RECEIVED: INIT, RTR, RTS, then the RTU. */
static int on_rep(struct conn *c, struct cmc_event *ev)
{
	struct ex_rdma_target t;
	int ret;

	memcpy(&t, ev->u.rep.private_data, sizeof(t));
	c->peer.addr = be64toh(t.addr);
	c->peer.rkey = be32toh(t.rkey);
	c->peer.len = be32toh(t.len);
	ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_INIT);
	if (!ret)
		ret = post_recv(c);
	if (!ret)
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTR);
	if (!ret)
		ret = cmc_modify_qp(c->id, c->qp, IBV_QPS_RTS);
	if (ret) {
		fprintf(stderr, "conn %u: QP to INIT/RTR/RTS: %s\n", c->index,
			cmc_strerror(ret));
		/* Tell the server now rather than let its REP time out. */
		cmc_reject(c->id, 28, NULL, 0, NULL, 0);
		return ret;
	}
	ret = cmc_rtu(c->id, NULL, 0);
	if (ret)
		fprintf(stderr, "conn %u: RTU: %s\n", c->index,
			cmc_strerror(ret));
	return ret;
}

/*
 * Disconnect (or, when the server does, answer its DREQ) and wait for
 * timewait to end, so the QP may be reused.
 */
static int finish(struct cmc_channel *ch, struct conn *c, bool passive)
{
	struct cmc_event *ev;
	int ret;

	if (!passive) {
		ret = cmc_disconnect(c->id, NULL, 0);
		if (ret) {
			fprintf(stderr, "conn %u: disconnect: %s\n", c->index,
				cmc_strerror(ret));
			return ret;
		}
	}
	for (;;) {
		ret = wait_event(ch, c, &ev);
		if (ret)
			return ret;
		switch (ev->type) {
		case CMC_EVENT_DREQ_RECEIVED:
			ret = cmc_disconnect(c->id, NULL, 0);
			if (ret) {
				fprintf(stderr, "conn %u: DREP: %s\n", c->index,
					cmc_strerror(ret));
				cmc_ack_event(ev);
				return ret;
			}
			printf("conn %u: server disconnected, DREP sent\n",
			       c->index);
			break;
		case CMC_EVENT_DREP_RECEIVED:
			printf("conn %u: disconnected (DREP received)\n",
			       c->index);
			break;
		case CMC_EVENT_DISCONNECT_TIMEOUT:
			fprintf(stderr, "conn %u: no DREP from the server\n",
				c->index);
			break;
		case CMC_EVENT_TIMEWAIT_EXIT:
			printf("conn %u: timewait over\n", c->index);
			cmc_ack_event(ev);
			return 0;
		default:
			fprintf(stderr, "conn %u: unexpected %s\n", c->index,
				cmc_event_str(ev->type));
			break;
		}
		cmc_ack_event(ev);
	}
}

static int run_one(struct cmc_channel *ch, struct ibv_context *ctx,
		   struct ibv_pd *pd, const struct ex_opts *o,
		   const struct cmc_addr *dst, unsigned int index)
{
	struct conn c = { .index = index };
	struct cmc_conn_param p;
	struct cmc_event *ev;
	int ret;

	ret = setup_qp(ctx, pd, &c);
	if (ret) {
		fprintf(stderr, "conn %u: QP: %s\n", index, cmc_strerror(ret));
		goto out;
	}
	ret = cmc_create_id(ch, &c, CMC_QP_RC, &c.id);
	if (ret)
		goto out;

	memset(&p, 0, sizeof(p));
	p.service_id = o->service_id;
	p.dst = *dst;
	ret = ex_port_sel(ctx, o, false, &p.src);
	if (ret)
		goto out;
	p.qp_num = c.qp->qp_num;
	p.start_psn = ex_psn();
	p.responder_resources = 0; /* the server never reads from us */
	p.initiator_depth = 0; /* and we never read from it */
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	ret = cmc_connect(c.id, &p);
	if (ret) {
		fprintf(stderr, "conn %u: connect: %s\n", index,
			cmc_strerror(ret));
		goto out;
	}
	/* Exactly one first outcome: REP, REJ or a connect error. */
	ret = wait_event(ch, &c, &ev);
	if (ret)
		goto out;
	switch (ev->type) {
	case CMC_EVENT_REP_RECEIVED:
		ret = on_rep(&c, ev);
		break;
	case CMC_EVENT_REJ_RECEIVED:
		ret = on_rej(&c, ev, o->reject);
		break;
	case CMC_EVENT_CONNECT_ERROR:
		fprintf(stderr, "conn %u: connect failed: %s\n", index,
			cmc_strerror(ev->status));
		ret = ev->status ? ev->status : -EIO;
		break;
	default:
		fprintf(stderr, "conn %u: unexpected %s\n", index,
			cmc_event_str(ev->type));
		/* Not -EPROTO: main() takes that for a dead channel. */
		ret = -EBADMSG;
		break;
	}
	if (!ret && o->reject && ev->type != CMC_EVENT_REJ_RECEIVED) {
		fprintf(stderr, "conn %u: accepted, want a REJ\n", index);
		ret = -ECONNREFUSED;
	}
	cmc_ack_event(ev);
	if (ret || o->reject)
		goto out;
	printf("conn %u: established, QPN 0x%x\n", index, c.qp->qp_num);

	ret = send_data(&c);
	if (!ret)
		ret = check_answer(&c);
	if (finish(ch, &c, o->server_disconnects) && !ret)
		ret = -EIO;
out:
	/* Destroy is final: whatever state the id is in, the daemon sends
	 * what the protocol needs (REJ, DREQ or DREP). */
	conn_free(&c);
	return ret;
}

int main(int argc, char **argv)
{
	struct ex_opts o;
	struct cmc_addr dst;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct cmc_channel *ch;
	unsigned int verified = 0;
	int r;

	if (ex_parse_opts(argc, argv, true, &o))
		return 2;
	if (ex_parse_dst(o.dst, &dst)) {
		fprintf(stderr, "bad destination %s\n", o.dst);
		return 2;
	}
	srand48(time(NULL) ^ getpid());
	/* A line at a time, also into a pipe or a file (tests, the demo). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = ex_open_device(o.dev);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		perror("ibv_alloc_pd");
		ibv_close_device(ctx);
		return 1;
	}
	r = cmc_open(o.socket, "cmc_client", &ch);
	if (r) {
		fprintf(stderr, "cannot reach the cmd daemon: %s\n",
			cmc_strerror(r));
		ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
		return 1;
	}
	for (unsigned int i = 0; i < o.count; i++) {
		r = run_one(ch, ctx, pd, &o, &dst, i);
		if (!r)
			verified++;
		/* The daemon is gone: the rest would fail the same way. */
		if (r == -ECONNRESET || r == -EPROTO)
			break;
	}
	printf("%u of %u connection(s) verified\n", verified, o.count);
	cmc_close(ch);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return verified == o.count ? 0 : 1;
}
