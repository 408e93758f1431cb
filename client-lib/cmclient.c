/* SPDX-License-Identifier: MIT */
/*
 * libcmclient: channel, ids, requests and events over the cmd daemon's
 * socket (proto/cmp.h is the contract; cmclient.h the public API).
 *
 * The shape of it: one non-blocking SOCK_SEQPACKET socket. Requests are
 * encoded into an output queue and leave in batches (sendmmsg); a blocking
 * request is queued, the queue flushed, and the socket read until its
 * reply comes. The socket is read in batches too (recvmmsg), and every
 * datagram read is processed before the library returns: events are
 * queued, replies answer the oldest request still waiting for one (a FIFO
 * of them, since the daemon answers in order), and an out-of-turn reply
 * can only be the failure of a request sent with CMP_HDR_NOREPLY in
 * asynchronous mode, which becomes a library-made REQUEST_ERROR event.
 * Events live in one FIFO, so cmc_get_event() and cmc_get_event_id() can
 * take from it in any order without reordering what stays. Anything the
 * daemon sends that the contract does not allow kills the channel with a
 * sticky error, because after one bad datagram no later reply can be
 * trusted to answer the request it seems to answer.
 *
 * What the library knows of an id's state (for the QP helpers) is learnt
 * from an event when the application takes it, not when it is read: a
 * batch read for a blocking request may hold the id's next event right
 * behind the reply, and the call's own update must come first.
 *
 * Lifetimes are reference counts so that "ack after destroy" and "ack
 * after close" are harmless: an event holds its id, its listener and its
 * channel; an id holds nothing. An acked event's item is kept by its
 * channel for the next event read (a bounded spare list, so a busy
 * application allocates nothing per event) while the channel is open; an
 * item acked after cmc_close() is freed, and close frees the spares.
 */
#include "cmc_int.h"

/* ------------------------------------------------------------------ */
/* Id API */

CMC_EXPORT int cmc_create_id(struct cmc_channel *ch, void *context,
			     enum cmc_qp_type qp_type, struct cmc_id **idp)
{
	struct cmp_msg *m;
	uint32_t num;
	int ret;

	*idp = NULL;
	if (ch->err)
		return ch->err;
	if (qp_type < CMC_QP_RC || qp_type > CMC_QP_UD)
		return -EINVAL;
	/* Asynchronous: a local handle; its first request creates the
	 * daemon's id (cmc_connect() in the same message). */
	if (ch->async) {
		*idp = cmc_id_alloc(ch, CMP_ID_NONE, context, (uint8_t)qp_type);
		if (!*idp)
			return -ENOMEM;
		cmc_unborn_add(ch, *idp);
		return 0;
	}
	m = cmc_req(ch, CMP_TYPE_CREATE_ID);
	m->create_id.context = (uint64_t)(uintptr_t)context;
	m->create_id.qp_type = (uint8_t)qp_type;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	num = ch->reply.create_id_reply.id;
	if (cmc_id_lookup(ch, num))
		return cmc_fail(ch, -EPROTO);
	*idp = cmc_id_new(ch, num, context, (uint8_t)qp_type);
	if (!*idp)
		return -ENOMEM; /* the daemon frees it when we close */
	return 0;
}

CMC_EXPORT int cmc_destroy_id(struct cmc_id *id)
{
	struct cmc_channel *ch;
	int ret;

	if (!id || id->dead)
		return -EINVAL;
	ch = id->ch;
	cmc_purge_id(ch, id);
	/* No daemon id yet: nothing to tell the daemon. Should a CONNECT
	 * be creating one, its reply finds the id dead and destroys the
	 * new one (cmc_on_created()). */
	if (!id->num) {
		cmc_unborn_del(ch, id);
		id->dead = true;
		cmc_id_put(id);
		return 0;
	}
	id->destroying = true;
	ret = ch->err;
	if (!ret) {
		cmc_req(ch, CMP_TYPE_DESTROY_ID)->destroy_id.id = id->num;
		ret = cmc_call(ch);
	}
	/* Whatever the daemon said, events read during the request that
	 * named id were dropped on arrival; none can follow the reply. In
	 * asynchronous mode the id leaves the table now, so its events
	 * still to come find no id and are dropped. */
	cmc_purge_id(ch, id);
	cmc_id_unlink(id);
	id->dead = true;
	cmc_id_put(id);
	return ret;
}

CMC_EXPORT void *cmc_get_context(const struct cmc_id *id)
{
	return id->context;
}

CMC_EXPORT int cmc_set_context(struct cmc_id *id, void *context)
{
	int ret = cmc_id_use(id);
	struct cmp_msg *m;

	if (ret)
		return ret;
	m = cmc_req(id->ch, CMP_TYPE_SET_CONTEXT);
	m->set_context.id = id->num;
	m->set_context.context = (uint64_t)(uintptr_t)context;
	ret = cmc_call(id->ch);
	if (!ret) {
		id->context = context;
		id->info.context = (uint64_t)(uintptr_t)context;
	}
	return ret;
}

CMC_EXPORT uint32_t cmc_id_num(const struct cmc_id *id)
{
	return id->num;
}

CMC_EXPORT struct cmc_channel *cmc_id_channel(const struct cmc_id *id)
{
	return id->ch;
}

CMC_EXPORT int cmc_listen(struct cmc_id *id, uint64_t service_id,
			  uint64_t service_mask, unsigned int backlog,
			  const struct cmc_port_sel *port)
{
	int ret = cmc_id_use(id);
	struct cmp_msg *m;

	if (ret)
		return ret;
	m = cmc_req(id->ch, CMP_TYPE_LISTEN);
	m->listen.id = id->num;
	m->listen.backlog = backlog;
	m->listen.service_id = service_id;
	m->listen.service_mask = service_mask;
	if (cmc_port_sel_to_cmp(&m->listen.port, port))
		return -EINVAL;
	ret = cmc_request(id->ch);
	if (!ret) {
		id->info.state = CMC_STATE_LISTEN;
		id->info.service_id = service_id;
		id->info.service_mask = service_mask;
		id->info.backlog = backlog;
	}
	return ret;
}

CMC_EXPORT int cmc_connect(struct cmc_id *id, const struct cmc_conn_param *p)
{
	int ret = cmc_id_ok(id);
	struct cmp_connect *c;
	struct cmc_id_info *in;

	if (!ret && id->creating)
		ret = cmc_wait_created(id);
	/* An unborn id is created by this very CONNECT in asynchronous
	 * mode; in blocking mode it gets its id first, as for any call. */
	if (!ret && !id->num && !id->ch->async)
		ret = cmc_id_birth(id);
	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	c = &cmc_req(id->ch, CMP_TYPE_CONNECT)->connect;
	c->id = id->num;
	if (!id->num) {
		c->qp_type = id->info.qp_type;
		c->context = (uint64_t)(uintptr_t)id->context;
	}
	if (cmc_conn_param_to_cmp(c, p))
		return -EINVAL;
	if (id->num) {
		ret = cmc_call(id->ch);
	} else {
		/* Its reply, which names the id, is processed when it comes
		 * (cmc_on_created()); nobody waits for it here. */
		ret = cmc_send_waited(id->ch, id);
		if (!ret) {
			id->refs++;
			id->creating = true;
			if (id->ch->nout - id->ch->osent >= CMC_TX_BATCH)
				ret = cmc_out_flush(id->ch);
		}
	}
	if (ret)
		return ret;
	in = &id->info;
	in->state = CMC_STATE_REQ_SENT;
	in->service_id = p->service_id;
	in->local_qpn = p->qp_num;
	in->local_psn = p->start_psn;
	in->responder_resources = p->responder_resources;
	in->initiator_depth = p->initiator_depth;
	in->flow_control = p->flow_control;
	in->retry_count = p->retry_count;
	in->rnr_retry_count = p->rnr_retry_count;
	in->srq = p->srq;
	in->max_cm_retries = p->max_cm_retries;
	in->local_cm_response_timeout = p->local_cm_response_timeout;
	in->remote_cm_response_timeout = p->remote_cm_response_timeout;
	return 0;
}

CMC_EXPORT int cmc_accept(struct cmc_id *id, const struct cmc_accept_param *p)
{
	int ret = cmc_id_use(id);
	struct cmp_accept *a;
	struct cmc_id_info *in;

	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	a = &cmc_req(id->ch, CMP_TYPE_ACCEPT)->accept;
	a->id = id->num;
	if (cmc_accept_param_to_cmp(a, p))
		return -EINVAL;
	/* The PSN our RQ was given at RTR, if that came first. */
	if (id->psn_fixed)
		a->start_psn = id->info.local_psn;
	ret = cmc_answer(id);
	if (ret)
		return ret;
	in = &id->info;
	in->state = CMC_STATE_REP_SENT;
	in->local_qpn = p->qp_num;
	in->local_psn = a->start_psn;
	in->responder_resources = p->responder_resources;
	in->initiator_depth = p->initiator_depth;
	in->target_ack_delay = p->target_ack_delay;
	in->failover = p->failover;
	return 0;
}

CMC_EXPORT int cmc_reject(struct cmc_id *id, unsigned int reason,
			  const void *ari, uint8_t ari_len,
			  const void *private_data, uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_reject *r;

	if (ret)
		return ret;
	if (reason > UINT16_MAX)
		return -EINVAL;
	r = &cmc_req(id->ch, CMP_TYPE_REJECT)->reject;
	r->id = id->num;
	r->reason = (uint16_t)reason;
	if (cmc_data(r->ari, sizeof(r->ari), &r->ari_len, ari, ari_len) ||
	    cmc_data(r->private_data, sizeof(r->private_data),
		     &r->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_answer(id);
	if (!ret)
		id->info.state = CMC_STATE_IDLE;
	return ret;
}

CMC_EXPORT int cmc_rtu(struct cmc_id *id, const void *private_data,
		       uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_rtu *r;

	if (ret)
		return ret;
	r = &cmc_req(id->ch, CMP_TYPE_RTU)->rtu;
	r->id = id->num;
	if (cmc_data(r->private_data, sizeof(r->private_data),
		     &r->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_answer(id);
	if (!ret)
		id->info.state = CMC_STATE_ESTABLISHED;
	return ret;
}

CMC_EXPORT int cmc_notify_established(struct cmc_id *id)
{
	int ret = cmc_id_use(id);

	if (ret)
		return ret;
	cmc_req(id->ch, CMP_TYPE_NOTIFY_ESTABLISHED)->notify_established.id =
		id->num;
	ret = cmc_answer(id);
	if (!ret)
		id->info.state = CMC_STATE_ESTABLISHED;
	return ret;
}

CMC_EXPORT int cmc_mra(struct cmc_id *id, uint8_t service_timeout,
		       const void *private_data, uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_mra *m;

	if (ret)
		return ret;
	m = &cmc_req(id->ch, CMP_TYPE_MRA)->mra;
	m->id = id->num;
	m->service_timeout = service_timeout;
	if (cmc_data(m->private_data, sizeof(m->private_data),
		     &m->private_data_len, private_data, private_data_len))
		return -EINVAL;
	return cmc_answer(id);
}

CMC_EXPORT int cmc_disconnect(struct cmc_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_disconnect *d;

	if (ret)
		return ret;
	d = &cmc_req(id->ch, CMP_TYPE_DISCONNECT)->disconnect;
	d->id = id->num;
	if (cmc_data(d->private_data, sizeof(d->private_data),
		     &d->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_answer(id);
	/* In DREQ_SENT and TIMEWAIT it succeeds and changes nothing. */
	if (!ret && id->info.state == CMC_STATE_DREQ_RCVD)
		id->info.state = CMC_STATE_TIMEWAIT;
	else if (!ret && id->info.state == CMC_STATE_ESTABLISHED)
		id->info.state = CMC_STATE_DREQ_SENT;
	return ret;
}

CMC_EXPORT int cmc_lap(struct cmc_id *id, const struct cmc_path *alt_path,
		       const void *private_data, uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_lap *l;

	if (ret)
		return ret;
	if (!alt_path)
		return -EINVAL;
	l = &cmc_req(id->ch, CMP_TYPE_LAP)->lap;
	l->id = id->num;
	if (cmc_path_to_cmp(&l->alt_path, alt_path) ||
	    cmc_data(l->private_data, sizeof(l->private_data),
		     &l->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_answer(id);
	if (!ret)
		id->lap_path = *alt_path;
	return ret;
}

CMC_EXPORT int cmc_apr(struct cmc_id *id, uint8_t ap_status, const void *info,
		       uint8_t info_len, const void *private_data,
		       uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_apr *a;

	if (ret)
		return ret;
	a = &cmc_req(id->ch, CMP_TYPE_APR)->apr;
	a->id = id->num;
	a->ap_status = ap_status;
	if (cmc_data(a->info, sizeof(a->info), &a->info_len, info, info_len) ||
	    cmc_data(a->private_data, sizeof(a->private_data),
		     &a->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_answer(id);
	/* Accepting a LAP loads the proposed path as the alternate. */
	if (!ret && ap_status == 0) {
		id->info.alt_path = id->lap_path;
		id->info.has_alt_path = 1;
	}
	return ret;
}

CMC_EXPORT int cmc_sidr_req(struct cmc_id *id, const struct cmc_sidr_param *p)
{
	int ret = cmc_id_use(id);
	struct cmp_sidr_req *s;

	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	s = &cmc_req(id->ch, CMP_TYPE_SIDR_REQ)->sidr_req;
	s->id = id->num;
	if (cmc_sidr_param_to_cmp(s, p))
		return -EINVAL;
	ret = cmc_request(id->ch);
	if (!ret)
		id->info.state = CMC_STATE_SIDR_REQ_SENT;
	return ret;
}

CMC_EXPORT int cmc_resolve_route(struct cmc_id *id,
				 const struct cmc_route_param *p)
{
	int ret = cmc_id_use(id);
	struct cmp_resolve_route *r;

	if (ret)
		return ret;
	if (!p)
		return -EINVAL;
	r = &cmc_req(id->ch, CMP_TYPE_RESOLVE_ROUTE)->resolve_route;
	r->id = id->num;
	if (cmc_route_param_to_cmp(r, p))
		return -EINVAL;
	return cmc_request(id->ch);
}

CMC_EXPORT int cmc_sidr_rep(struct cmc_id *id, uint8_t status, uint32_t qpn,
			    uint32_t qkey, const void *private_data,
			    uint8_t private_data_len)
{
	int ret = cmc_id_use(id);
	struct cmp_sidr_rep *s;

	if (ret)
		return ret;
	s = &cmc_req(id->ch, CMP_TYPE_SIDR_REP)->sidr_rep;
	s->id = id->num;
	s->status = status;
	s->qpn = qpn;
	s->qkey = qkey;
	if (cmc_data(s->private_data, sizeof(s->private_data),
		     &s->private_data_len, private_data, private_data_len))
		return -EINVAL;
	ret = cmc_answer(id);
	if (!ret)
		id->info.state = CMC_STATE_IDLE;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Event API */

/* The oldest queued event, of id or of any id when id is NULL. */
struct cmc_ev_item *cmc_queue_take(struct cmc_channel *ch,
				   const struct cmc_id *id)
{
	struct cmc_ev_item *it;

	for (it = ch->head; it; it = it->next) {
		if (!id || it->ev.id == id) {
			cmc_dequeue(ch, it);
			cmc_id_learn(it->ev.id, it);
			if (!it->local)
				it->ev.id->held = it;
			return it;
		}
	}
	return NULL;
}

int cmc_wait_event(struct cmc_channel *ch, const struct cmc_id *id,
		   struct cmc_event **evp, int timeout_ms)
{
	int64_t deadline = cmc_deadline(timeout_ms);
	struct cmc_ev_item *it;
	int ret;

	*evp = NULL;
	/* What is queued may be what the daemon waits for (an ACK_EVENT)
	 * before it sends what we wait for. A failure here is sticky and
	 * reported below, after the events read before it. */
	cmc_out_flush(ch);
	for (;;) {
		it = cmc_queue_take(ch, id);
		if (it) {
			*evp = &it->ev;
			return 0;
		}
		if (ch->err)
			return ch->err;
		/* Read: events (then maybe the channel's error) are taken
		 * from the queue above. */
		if (cmc_rx(ch))
			continue;
		/* While the daemon restarts, its timer wakes us for the next
		 * try; meanwhile there is simply no event (-EAGAIN). */
		ret = cmc_poll(ch, false, deadline);
		if (ret == 0)
			return -EAGAIN;
		if (ret < 0 && errno != EINTR)
			return cmc_fail(ch, -errno);
	}
}

CMC_EXPORT int cmc_get_event(struct cmc_channel *ch, struct cmc_event **evp,
			     int timeout_ms)
{
	return cmc_wait_event(ch, NULL, evp, timeout_ms);
}

CMC_EXPORT int cmc_get_event_id(struct cmc_channel *ch, struct cmc_id *id,
				struct cmc_event **evp, int timeout_ms)
{
	*evp = NULL;
	if (!id || id->dead || id->ch != ch)
		return -EINVAL;
	return cmc_wait_event(ch, id, evp, timeout_ms);
}

CMC_EXPORT int cmc_ack_event(struct cmc_event *ev)
{
	struct cmc_ev_item *it;
	struct cmc_channel *ch;
	int ret = 0;

	if (!ev)
		return 0;
	it = container_of(ev, struct cmc_ev_item, ev);
	ch = it->ch;
	if (it->queued)
		return -EINVAL; /* not an event the application holds */
	/* The daemon never saw a library-made event, and knows an early
	 * acked one acked (cmc_answer()). */
	if (!it->local && !it->acked && !ev->id->dead && !ch->err) {
		struct cmp_msg *m = cmc_req(ch, CMP_TYPE_ACK_EVENT);

		m->ack_event.id = ev->id->num;
		m->ack_event.seq = it->seq;
		ret = cmc_call(ch);
	}
	cmc_release_held(ev->id, it);
	cmc_item_free(it);
	return ret;
}

CMC_EXPORT const char *cmc_event_str(enum cmc_event_type type)
{
	if (type == CMC_EVENT_REQUEST_ERROR)
		return "REQUEST_ERROR"; /* the library's own */
	if (type < CMC_EVENT_REQ_RECEIVED || type > CMC_EVENT_ROUTE_RESOLVED)
		return "UNKNOWN";
	return cmp_event_name((enum cmp_event_type)type);
}

/* ------------------------------------------------------------------ */
/* Introspection */

CMC_EXPORT int cmc_query_id(struct cmc_id *id, struct cmc_id_info *info)
{
	int ret = cmc_id_use(id);

	if (ret)
		return ret;
	cmc_req(id->ch, CMP_TYPE_QUERY_ID)->query_id.id = id->num;
	ret = cmc_request(id->ch);
	if (ret)
		return ret;
	if (id->ch->reply.query_id_reply.info.id != id->num)
		return cmc_fail(id->ch, -EPROTO);
	cmc_id_info_from_cmp(info, &id->ch->reply.query_id_reply.info);
	return 0;
}

CMC_EXPORT int cmc_list(struct cmc_channel *ch, enum cmc_list_filter filter,
			uint64_t *cursor, struct cmc_list_entry *entries)
{
	struct cmp_msg *m;
	int ret;

	if (ch->err)
		return ch->err;
	m = cmc_req(ch, CMP_TYPE_LIST);
	m->list.cursor = *cursor;
	m->list.filter = (uint8_t)filter;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	*cursor = ch->reply.list_reply.next_cursor;
	for (uint32_t i = 0; i < ch->reply.list_reply.count; i++)
		cmc_list_entry_from_cmp(&entries[i],
					&ch->reply.list_reply.entries[i]);
	return (int)ch->reply.list_reply.count;
}

CMC_EXPORT int cmc_counters(struct cmc_channel *ch,
			    enum cmc_counter_scope scope, const char *dev_name,
			    uint8_t port_num, uint64_t *cursor,
			    struct cmc_counter *entries)
{
	struct cmp_msg *m;
	int ret;

	if (ch->err)
		return ch->err;
	m = cmc_req(ch, CMP_TYPE_COUNTERS);
	m->counters.cursor = *cursor;
	m->counters.scope = (uint8_t)scope;
	m->counters.port_num = port_num;
	if (dev_name) {
		if (strlen(dev_name) >= sizeof(m->counters.dev_name))
			return -EINVAL;
		strcpy(m->counters.dev_name, dev_name);
	}
	ret = cmc_request(ch);
	if (ret)
		return ret;
	*cursor = ch->reply.counters_reply.next_cursor;
	for (uint32_t i = 0; i < ch->reply.counters_reply.count; i++)
		cmc_counter_from_cmp(&entries[i],
				     &ch->reply.counters_reply.entries[i]);
	return (int)ch->reply.counters_reply.count;
}

CMC_EXPORT int cmc_capture(struct cmc_channel *ch, const char *path)
{
	struct cmp_msg *m;

	if (ch->err)
		return ch->err;
	if (path && (!*path || strlen(path) >= CMP_PATH_SIZE))
		return -EINVAL;
	m = cmc_req(ch, CMP_TYPE_CAPTURE);
	m->capture.op = path ? CMP_CAPTURE_START : CMP_CAPTURE_STOP;
	if (path)
		strcpy(m->capture.path, path);
	return cmc_request(ch);
}

CMC_EXPORT int cmc_ports(struct cmc_channel *ch, uint64_t *cursor,
			 struct cmc_port_info *entries)
{
	int ret;

	if (ch->err)
		return ch->err;
	cmc_req(ch, CMP_TYPE_PORTS)->ports.cursor = *cursor;
	ret = cmc_request(ch);
	if (ret)
		return ret;
	*cursor = ch->reply.ports_reply.next_cursor;
	for (uint32_t i = 0; i < ch->reply.ports_reply.count; i++)
		cmc_port_info_from_cmp(&entries[i],
				       &ch->reply.ports_reply.entries[i]);
	return (int)ch->reply.ports_reply.count;
}

/* PATHS: one request, a flush first when flags ask for one. */
static int cmc_paths_req(struct cmc_channel *ch, uint32_t flags,
			 uint16_t port_index, uint64_t cursor)
{
	struct cmp_msg *m = cmc_req(ch, CMP_TYPE_PATHS);

	m->paths.cursor = cursor;
	m->paths.flags = flags;
	m->paths.port_index = port_index;
	return cmc_request(ch);
}

CMC_EXPORT int cmc_paths(struct cmc_channel *ch, unsigned int flags,
			 uint64_t *cursor, struct cmc_path_entry *entries)
{
	const struct cmp_paths_reply *r = &ch->reply.paths_reply;
	int ret;

	if (ch->err)
		return ch->err;
	if ((flags & ~CMC_PATHS_FLUSH) ||
	    ((flags & CMC_PATHS_FLUSH) && *cursor))
		return -EINVAL;
	ret = cmc_paths_req(ch, flags, 0, *cursor);
	if (ret)
		return ret;
	*cursor = r->next_cursor;
	for (uint32_t i = 0; i < r->count; i++)
		cmc_path_entry_from_cmp(&entries[i], &r->entries[i]);
	return (int)r->count;
}

CMC_EXPORT int cmc_paths_flush(struct cmc_channel *ch, int port_index)
{
	int ret;

	if (ch->err)
		return ch->err;
	if (port_index > UINT16_MAX)
		return -EINVAL;
	ret = cmc_paths_req(
		ch, CMP_PATHS_FLUSH | (port_index >= 0 ? CMP_PATHS_PORT : 0),
		port_index >= 0 ? (uint16_t)port_index : 0, 0);
	if (ret)
		return ret;
	return ch->reply.paths_reply.flushed > INT32_MAX ?
		       INT32_MAX :
		       (int)ch->reply.paths_reply.flushed;
}

CMC_EXPORT const char *cmc_state_str(enum cmc_state state)
{
	if (state > CMC_STATE_SIDR_REQ_RCVD)
		return "UNKNOWN";
	return cmp_state_name((enum cmp_state)state);
}

/* ------------------------------------------------------------------ */
/* QP helpers */

/*
 * Every event and every CONNECT/ACCEPT of an id passes through this
 * library, so the values it kept are complete but for one: the path of an
 * active id before its REP, which the daemon chose at CONNECT. Only then
 * is the daemon asked; its view is the truth and replaces ours whole
 * (keeping an alternate path only we know, from an APR).
 */
int cmc_info_for(struct cmc_id *id)
{
	struct cmc_id_info q;
	int ret;

	if (id->path_ok)
		return 0;
	ret = cmc_query_id(id, &q);
	if (ret)
		return ret;
	if (!q.has_alt_path && id->info.has_alt_path) {
		q.has_alt_path = 1;
		q.alt_path = id->info.alt_path;
	}
	id->info = q;
	id->path_ok = q.path.port_num != 0;
	return 0;
}

CMC_EXPORT int cmc_init_qp_attr(struct cmc_id *id, enum ibv_qp_state target,
				struct ibv_qp_attr *attr, int *mask)
{
	int ret = cmc_id_ok(id);

	if (ret)
		return ret;
	if (target != IBV_QPS_INIT && target != IBV_QPS_RTR &&
	    target != IBV_QPS_RTS)
		return -EINVAL;
	if (id->info.qp_type == CMC_QP_UD)
		return -EOPNOTSUPP;
	ret = cmc_info_for(id);
	if (ret)
		return ret;
	/*
	 * The Starting PSN of a REQ or REP is the PSN its sender's receive
	 * queue expects: the peer's send queue starts there. That is how the
	 * Linux kernel's ib_cm reads it (cm_req_handler: sq_psn = the REQ's;
	 * cm_rep_handler: sq_psn = the REP's) and how rdma_cm sets its QPs
	 * (RTR rq_psn = the PSN it announced). So our SQ starts at the
	 * peer's announced PSN and our RQ at ours. (cmd to cmd, both sides
	 * do this; measured against kernel 6.1 rping in tests/interop.)
	 */
	/* Passive, RTR before ACCEPT (the usual order): the RQ PSN is ours
	 * to choose now; cmc_accept() announces it. */
	if (target == IBV_QPS_RTR && !id->psn_fixed &&
	    (id->info.state == CMC_STATE_REQ_RCVD ||
	     id->info.state == CMC_STATE_MRA_REQ_SENT)) {
		struct timespec ts;
		uint32_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint32_t)ts.tv_nsec ^ id->num * 2654435761u) & 0xffffff;
		id->info.local_psn = x ? x : 1;
		id->psn_fixed = true;
	}
	{
		struct cmc_id_info in = id->info;

		in.local_psn = id->info.remote_psn;
		in.remote_psn = id->info.local_psn;
		return cmc_qp_attr_from_info(&in, target, attr, mask);
	}
}

CMC_EXPORT int cmc_modify_qp(struct cmc_id *id, struct ibv_qp *qp,
			     enum ibv_qp_state target)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	if (!qp)
		return -EINVAL;
	ret = cmc_init_qp_attr(id, target, &attr, &mask);
	if (ret)
		return ret;
	ret = ibv_modify_qp(qp, &attr, mask);
	/* libibverbs returns a positive errno (some providers -1/errno). */
	if (ret > 0)
		return -ret;
	if (ret < 0)
		return errno ? -errno : -EIO;
	return 0;
}
