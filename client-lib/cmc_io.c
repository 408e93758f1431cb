// SPDX-License-Identifier: MIT
/*
 * libcmclient, the socket: the output queue (batches out with sendmmsg),
 * the requests waiting for their reply (a FIFO: the daemon answers in
 * order), reading (recvmmsg, every datagram processed before returning)
 * and sending requests.
 */
#include "cmc_int.h"

/* ------------------------------------------------------------------ */
/* The output queue */

/* Serial arithmetic: is a after b? */
bool cmc_seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

uint32_t cmc_next_seq(struct cmc_channel *ch)
{
	if (++ch->seq == 0)
		ch->seq = 1;
	return ch->seq;
}

/*
 * Encode m at the end of the output queue. -EINVAL when it does not
 * encode (the caller's argument error; nothing is queued), -ENOMEM.
 */
int cmc_out_add(struct cmc_channel *ch, const struct cmp_msg *m)
{
	ssize_t len;

	if (ch->olen + CMP_MSG_MAX > ch->ocap) {
		size_t cap = ch->ocap ? ch->ocap * 2 : 16 * CMP_MSG_MAX;
		uint8_t *b = realloc(ch->obuf, cap);

		if (!b)
			return -ENOMEM;
		ch->obuf = b;
		ch->ocap = cap;
	}
	if (ch->nout == ch->oendcap) {
		unsigned int cap = ch->oendcap ? ch->oendcap * 2 : CMC_TX_BATCH;
		size_t *e = realloc(ch->oend, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		ch->oend = e;
		ch->oendcap = cap;
	}
	len = cmp_encode(m, ch->obuf + ch->olen, CMP_MSG_MAX);
	if (len < 0) {
		const char *why = NULL;

		cmp_check(m, &why);
		return cmc_refuse(-EINVAL, "%s", why ? why : "does not encode");
	}
	ch->olen += (size_t)len;
	ch->oend[ch->nout++] = ch->olen;
	ch->queued_total++;
	return 0;
}

/*
 * Queue m (header version set) as a NOREPLY request: the daemon answers
 * only its failure (cmc_on_reply()).
 */
int cmc_out_noreply(struct cmc_channel *ch, struct cmp_msg *m)
{
	int ret;

	m->hdr.seq = cmc_next_seq(ch);
	m->hdr.flags = CMP_HDR_NOREPLY | (m->hdr.flags & CMP_HDR_ACK);
	ret = cmc_out_add(ch, m);
	if (!ret)
		ch->last_noreply = m->hdr.seq;
	return ret;
}

/*
 * Wait for the socket (to read, and with out to send too) or, while the
 * link is down, for its timer. Returns poll()'s result, but 2 when
 * something is to be read (cmc_rx() then makes progress) rather than
 * only room to send.
 */
int cmc_poll(struct cmc_channel *ch, bool out, int64_t deadline)
{
	struct pollfd p[2];
	nfds_t n = 0;
	int r;

	if (ch->sock >= 0)
		p[n++] = (struct pollfd){
			.fd = ch->sock,
			.events = (short)(POLLIN |
					  (out && ch->link == CMC_LINK_UP ?
						   POLLOUT :
						   0)),
		};
	if (ch->tfd >= 0)
		p[n++] = (struct pollfd){ .fd = ch->tfd, .events = POLLIN };
	r = poll(p, n, cmc_remaining(deadline));
	if (r <= 0)
		return r;
	for (nfds_t i = 0; i < n; i++)
		if (p[i].revents & ~POLLOUT)
			return 2;
	return 1;
}

/*
 * Send what is queued. With CMC_WAIT_ROOM, a full socket is waited out
 * with poll() for POLLIN too, and whatever arrives meanwhile is read and
 * processed: the daemon may stop reading us while its messages to us
 * pile up unread, so only reading guarantees progress. Without it, stop
 * at a full socket (cmc_close()'s best effort). While the daemon
 * restarts (the link is not UP) nothing can be sent: with CMC_WAIT_LINK
 * (a blocking request) wait until the session is resumed, reading the
 * old socket and retrying meanwhile; without it, what is queued stays
 * for the successor. deadline bounds a wait without progress: a slow
 * daemon that reads is not a hung one. Returns 0 or the channel's error.
 */
int cmc_out_send(struct cmc_channel *ch, unsigned int wait, int64_t deadline)
{
	struct mmsghdr mv[CMC_TX_BATCH];
	struct iovec iov[CMC_TX_BATCH];

	/* Reading below may queue a request (cmc_on_created()); it goes out
	 * in this same loop, never in a nested flush. */
	if (ch->flushing)
		return 0;
	ch->flushing = true;
	while (!ch->err && ch->osent < ch->nout) {
		unsigned int n = ch->nout - ch->osent;
		bool down = ch->link != CMC_LINK_UP;
		int r;

		if (down && !(wait & CMC_WAIT_LINK))
			break;
		if (down)
			goto wait;
		if (n > CMC_TX_BATCH)
			n = CMC_TX_BATCH;
		for (unsigned int i = 0; i < n; i++) {
			unsigned int k = ch->osent + i;
			size_t start = k ? ch->oend[k - 1] : 0;

			iov[i].iov_base = ch->obuf + start;
			iov[i].iov_len = ch->oend[k] - start;
			memset(&mv[i], 0, sizeof(mv[i]));
			mv[i].msg_hdr.msg_iov = &iov[i];
			mv[i].msg_hdr.msg_iovlen = 1;
		}
		/* A batch cut short by an error counts what went out, and the
		 * error comes with the next call: osent stays exact, which
		 * is what a resumed session resends from. */
		r = sendmmsg(ch->sock, mv, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r > 0) {
			for (int i = 0; i < r; i++)
				if (mv[i].msg_len != iov[i].iov_len)
					cmc_fail(ch, -EPROTO);
			ch->osent += (unsigned int)r;
			if (deadline >= 0)
				deadline = cmc_deadline(ch->req_timeout);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			cmc_lost(ch, CMC_LOST_SEND);
			continue;
		}
		if (!(wait & CMC_WAIT_ROOM))
			break;
wait:
		r = cmc_poll(ch, !down, deadline);
		if (r == 0)
			cmc_fail(ch, -ETIMEDOUT);
		else if (r < 0 && errno != EINTR)
			cmc_fail(ch, -errno);
		else if (r > 1)
			cmc_rx(ch);
	}
	if (ch->osent == ch->nout) {
		ch->osent = ch->nout = 0;
		ch->olen = 0;
	}
	ch->flushing = false;
	return ch->err;
}

/*
 * Send what is queued, waiting only for room (cmc_flush()). While the
 * daemon restarts it sends nothing and does not wait, but takes the
 * chance to try its successor when that is due.
 */
int cmc_out_flush(struct cmc_channel *ch)
{
	if (ch->link == CMC_LINK_WAIT || ch->link == CMC_LINK_RESUME)
		cmc_link_step(ch);
	if (ch->osent == ch->nout)
		return ch->err;
	return cmc_out_send(ch, CMC_WAIT_ROOM, cmc_deadline(ch->req_timeout));
}

/* ------------------------------------------------------------------ */
/* Requests waiting for their reply */

int cmc_pend_reserve(struct cmc_channel *ch)
{
	struct cmc_pend *p;
	unsigned int cap;

	if (ch->npend < ch->pcap)
		return 0;
	cap = ch->pcap ? ch->pcap * 2 : 16;
	p = malloc(cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* Unroll the ring: the oldest goes first. */
	for (unsigned int i = 0; i < ch->npend; i++)
		p[i] = ch->pend[(ch->phead + i) % ch->pcap];
	free(ch->pend);
	ch->pend = p;
	ch->pcap = cap;
	ch->phead = 0;
	return 0;
}

/* Room was reserved with cmc_pend_reserve(). */
void cmc_pend_push(struct cmc_channel *ch, uint32_t seq, uint8_t type,
		   struct cmc_id *id)
{
	struct cmc_pend *p = &ch->pend[(ch->phead + ch->npend) % ch->pcap];

	p->seq = seq;
	p->type = type;
	p->own = false;
	p->id = id;
	ch->npend++;
}

/*
 * The reply to a CONNECT that created id: its number, or its failure,
 * which the application learns as a REQUEST_ERROR event because nobody
 * waits for this reply. An id destroyed meanwhile is destroyed in the
 * daemon now.
 */
int cmc_on_created(struct cmc_channel *ch, struct cmc_id *id)
{
	const struct cmp_reply *r = &ch->rx.reply;
	int ret = 0;

	id->creating = false;
	if (r->status) {
		if (!id->dead)
			ret = cmc_request_error(ch, id, CMC_REQ_CONNECT,
						r->status);
	} else if (r->id == CMP_ID_NONE || cmc_id_lookup(ch, r->id)) {
		ret = cmc_fail(ch, -EPROTO);
	} else if (id->dead) {
		struct cmp_msg m;

		cmp_msg_init(&m, CMP_TYPE_DESTROY_ID, 0);
		m.hdr.version = ch->version;
		m.destroy_id.id = r->id;
		ret = cmc_out_noreply(ch, &m);
		if (ret)
			ret = cmc_fail(ch, ret);
	} else {
		ret = cmc_id_set_num(ch, id, r->id);
		if (ret)
			ret = cmc_fail(ch, ret);
	}
	cmc_id_put(id);
	return ret;
}

/*
 * A reply was read. The daemon answers in order, so a reply to a request
 * we wait for must answer the oldest; anything else can only be the
 * failure of a NOREPLY request sent after the last answered one and
 * before that oldest, and its id member says which id it was about.
 */
int cmc_on_reply(struct cmc_channel *ch)
{
	const struct cmp_msg *m = &ch->rx;
	unsigned int request = m->hdr.type & ~CMP_REPLY_BIT;
	struct cmc_pend *head = ch->npend ? &ch->pend[ch->phead] : NULL;
	struct cmc_id *id;

	if (head && m->hdr.seq == head->seq) {
		struct cmc_pend p = *head;

		if (m->hdr.type != cmp_reply_type((enum cmp_type)p.type))
			return cmc_fail(ch, -EPROTO);
		ch->phead = (ch->phead + 1) % ch->pcap;
		ch->npend--;
		ch->last_answered = p.seq;
		if (p.id)
			return cmc_on_created(ch, p.id);
		if (p.own)
			return cmc_on_session(ch);
		ch->reply = *m;
		ch->reply_ready = true;
		return 0;
	}
	if (!m->reply.status || !cmp_noreply_allowed(request) ||
	    !cmc_seq_after(m->hdr.seq, ch->last_answered) ||
	    cmc_seq_after(m->hdr.seq, ch->last_noreply) ||
	    (head && !cmc_seq_after(head->seq, m->hdr.seq)))
		return cmc_fail(ch, -EPROTO);
	ch->last_answered = m->hdr.seq;
	id = cmc_id_lookup(ch, m->reply.id);
	if (!id || id->destroying) {
		ch->dropped++;
		return 0;
	}
	cmc_why_reply(m);
	return cmc_request_error(ch, id, request, m->reply.status);
}

/* ------------------------------------------------------------------ */
/* Reading */

/* One datagram of len bytes was read into buf: check and process it. */
int cmc_rx_one(struct cmc_channel *ch, const uint8_t *buf, size_t len)
{
	if (len == 0 || len > CMP_MSG_MAX)
		return cmc_fail(ch, -EPROTO);
	if (cmp_decode(buf, len, &ch->rx, NULL))
		return cmc_fail(ch, -EPROTO);
	if (ch->rx.hdr.type != CMP_TYPE_HELLO_REPLY &&
	    ch->rx.hdr.version != ch->version)
		return cmc_fail(ch, -EPROTO);
	if (ch->rx.hdr.type == CMP_TYPE_EVENT)
		return cmc_on_event(ch);
	if (!(ch->rx.hdr.type & CMP_REPLY_BIT))
		return cmc_fail(ch, -EPROTO);
	return cmc_on_reply(ch);
}

/*
 * Read what the socket holds, up to CMC_RX_BATCH datagrams without
 * waiting, and process every one of them before returning, so that the
 * application's fd never looks idle while messages sit unprocessed in
 * here. The socket's end is the daemon's (its death, or its restart:
 * cmc_lost() tells), and only the end: what came before it is processed
 * first. While the link is down this is where it is tried again
 * (cmc_link_step()). Returns how many were read or how far the link got
 * (0: nothing was there, nothing was due) or the channel's error.
 */
int cmc_rx(struct cmc_channel *ch)
{
	struct mmsghdr mv[CMC_RX_BATCH];
	struct iovec iov[CMC_RX_BATCH];
	int r;

	if (ch->err)
		return ch->err;
	if (ch->link == CMC_LINK_WAIT || ch->link == CMC_LINK_RESUME)
		return cmc_link_step(ch);
	if (ch->link == CMC_LINK_DRAIN) {
		cmc_drain_check(ch);
		if (ch->err)
			return ch->err;
	}
	memset(mv, 0, sizeof(mv));
	for (unsigned int i = 0; i < CMC_RX_BATCH; i++) {
		iov[i].iov_base = ch->rbuf[i];
		iov[i].iov_len = sizeof(ch->rbuf[i]);
		mv[i].msg_hdr.msg_iov = &iov[i];
		mv[i].msg_hdr.msg_iovlen = 1;
	}
	/* MSG_TRUNC: msg_len is the datagram's real length. */
	r = recvmmsg(ch->sock, mv, CMC_RX_BATCH, MSG_DONTWAIT | MSG_TRUNC,
		     NULL);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		/* A reset is reported before what is still queued. */
		r = cmc_lost(ch, errno == ECONNRESET ? CMC_LOST_RESET :
						       CMC_LOST_EOF);
		return r ? r : 1;
	}
	for (int i = 0; i < r; i++) {
		int ret;

		/* The end (recvmmsg fills the rest of the batch with it). */
		if (mv[i].msg_len == 0) {
			ret = cmc_lost(ch, CMC_LOST_EOF);
			return ret ? ret : i + 1;
		}
		ret = cmc_rx_one(ch, ch->rbuf[i], mv[i].msg_len);
		if (ret)
			return ret;
	}
	if (r == 0) {
		r = cmc_lost(ch, CMC_LOST_EOF);
		return r ? r : 1;
	}
	return r;
}

/*
 * Wait until the socket is readable (or the link's timer fires) or
 * deadline, then read. Returns 0, or the channel's error; running out of
 * time is -ETIMEDOUT, sticky. Requests a resumed session still has to
 * send go out here too, since the caller waits for their replies.
 */
int cmc_wait_rx(struct cmc_channel *ch, int64_t deadline)
{
	int r = cmc_poll(ch, false, deadline);

	if (r == 0)
		return cmc_fail(ch, -ETIMEDOUT);
	if (r < 0)
		return errno == EINTR ? 0 : cmc_fail(ch, -errno);
	r = cmc_rx(ch);
	if (r >= 0 && ch->link == CMC_LINK_UP && ch->osent < ch->nout)
		r = cmc_out_send(ch, 0, 0);
	return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------ */
/* Requests */

/* Start a request in tx: zeroed body, header filled when it is sent. */
struct cmp_msg *cmc_req(struct cmc_channel *ch, enum cmp_type type)
{
	cmc_why_clear();
	cmp_msg_init(&ch->tx, type, 0);
	ch->tx.hdr.version =
		type == CMP_TYPE_HELLO ? CMP_VERSION_HELLO : ch->version;
	return &ch->tx;
}

/*
 * Queue tx as a request that awaits its reply (id: a CONNECT creating
 * that id; NULL: the caller waits). -EINVAL when tx does not encode.
 */
int cmc_send_waited(struct cmc_channel *ch, struct cmc_id *id)
{
	int ret;

	if (ch->err)
		return ch->err;
	ret = cmc_pend_reserve(ch);
	if (ret)
		return ret;
	ch->tx.hdr.seq = cmc_next_seq(ch);
	ch->tx.hdr.flags &= CMP_HDR_ACK;
	ret = cmc_out_add(ch, &ch->tx);
	if (ret)
		return ret;
	cmc_pend_push(ch, ch->tx.hdr.seq, ch->tx.hdr.type, id);
	return 0;
}

/*
 * Send tx, with everything queued before it, and wait for its reply,
 * processing whatever else arrives meanwhile. Returns the reply's status
 * (the reply itself is in ch->reply), or a channel error.
 */
int cmc_request(struct cmc_channel *ch)
{
	int64_t deadline = cmc_deadline(ch->req_timeout);
	int ret;

	ret = cmc_send_waited(ch, NULL);
	if (ret)
		return ret;
	ch->reply_ready = false;
	ret = cmc_out_send(ch, CMC_WAIT_ROOM | CMC_WAIT_LINK, deadline);
	while (!ret && !ch->reply_ready)
		ret = cmc_wait_rx(ch, deadline);
	if (ret)
		return ret;
	if (ch->reply.reply.status)
		cmc_why_reply(&ch->reply);
	return ch->reply.reply.status;
}

/*
 * A request that asynchronous mode queues with NOREPLY and answers with
 * 0 at once; in blocking mode cmc_request().
 */
int cmc_call(struct cmc_channel *ch)
{
	int ret;

	if (!ch->async)
		return cmc_request(ch);
	if (ch->err)
		return ch->err;
	ret = cmc_out_noreply(ch, &ch->tx);
	if (ret)
		return ret;
	if (ch->nout - ch->osent >= CMC_TX_BATCH)
		return cmc_out_flush(ch);
	return 0;
}

/*
 * cmc_call() for a request that answers id's event (ACCEPT, RTU, ...,
 * cmp_ack_allowed()): while the application holds that event unacked, the
 * request acknowledges it too (CMP_HDR_ACK), which saves the ACK_EVENT,
 * and cmc_ack_event() later only frees it. Call it with tx complete: once
 * marked, the request must go out.
 */
int cmc_answer(struct cmc_id *id)
{
	struct cmc_channel *ch = id->ch;
	struct cmc_ev_item *held = id->held;
	uint64_t queued = ch->queued_total;
	bool fold = held && !held->acked && !ch->err &&
		    cmp_ack_allowed(ch->tx.hdr.type);
	int ret;

	if (fold) {
		ch->tx.hdr.flags |= CMP_HDR_ACK;
		held->acked = true;
	}
	ret = cmc_call(ch);
	/* Not queued after all (no memory): cmc_ack_event() must send the
	 * ACK_EVENT itself. */
	if (fold && ch->queued_total == queued)
		held->acked = false;
	return ret;
}

/* A request about a live id: the common checks. */
int cmc_id_ok(const struct cmc_id *id)
{
	if (!id || id->dead)
		return -EINVAL;
	return id->ch->err;
}

/* Wait for the reply to the CONNECT that creates id. */
int cmc_wait_created(struct cmc_id *id)
{
	struct cmc_channel *ch = id->ch;
	int64_t deadline = cmc_deadline(ch->req_timeout);
	int ret = cmc_out_flush(ch);

	while (!ret && id->creating)
		ret = cmc_wait_rx(ch, deadline);
	return ret;
}

/* Give an unborn id its daemon id the classic way: CREATE_ID. */
int cmc_id_birth(struct cmc_id *id)
{
	struct cmc_channel *ch = id->ch;
	struct cmp_msg *m = cmc_req(ch, CMP_TYPE_CREATE_ID);
	uint32_t num;
	int ret;

	m->create_id.context = (uint64_t)(uintptr_t)id->context;
	m->create_id.qp_type = id->info.qp_type;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	num = ch->reply.create_id_reply.id;
	if (num == CMP_ID_NONE || cmc_id_lookup(ch, num))
		return cmc_fail(ch, -EPROTO);
	/* On -ENOMEM the daemon frees its id when we close. */
	return cmc_id_set_num(ch, id, num);
}

/*
 * A request is about to name id: the common checks, and a daemon id for
 * it if it has none yet (see cmc_set_async()).
 */
int cmc_id_use(struct cmc_id *id)
{
	int ret = cmc_id_ok(id);

	if (!ret && id->creating)
		ret = cmc_wait_created(id);
	if (!ret && !id->num)
		ret = cmc_id_birth(id);
	return ret;
}
