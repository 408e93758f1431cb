/* SPDX-License-Identifier: MIT */
/*
 * libcmclient's asynchronous (pipelined) mode against the fake daemon:
 * which requests carry CMP_HDR_NOREPLY, that queued requests leave only
 * when flushed and in order, failures of NOREPLY requests coming back as
 * REQUEST_ERROR events on the right id, CONNECT creating its id, destroy
 * of ids in each stage of their birth, and a flush into a full socket
 * while the daemon is itself blocked sending to us.
 *
 * Synchronisation with the fake daemon is by its condition variable
 * (fake_wait_reqs()) or by a blocking request, whose reply the daemon
 * sends only after it has handled everything sent before it.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "client_fixture.h"

static int setup(void **state)
{
	return fx_setup(state, "async", 30, NULL);
}

static const struct cmc_conn_param conn_param = {
	.service_id = 0x1000,
	.dst = { .family = CMC_AF_LID, .lid = 2 },
	.qp_num = 0x99,
	.start_psn = 7,
};

/* A blocking round trip: when it returns, the daemon has handled (and we
 * have read the answers to) everything sent before. */
static void sync_daemon(struct fx *x)
{
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;

	assert_true(cmc_list(x->ch, CMC_LIST_ALL, &cursor, e) >= 0);
}

static unsigned int total(struct fake *f)
{
	unsigned int n;

	pthread_mutex_lock(&f->lock);
	n = f->total_reqs;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* --- NOREPLY --------------------------------------------------------- */

static void test_noreply_flag(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	const struct cmp_msg *m;
	int ctx;

	/* Blocking mode: no flag. */
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_set_context(id, &ctx), 0);
	m = fake_last(x->f, CMP_TYPE_SET_CONTEXT);
	assert_int_equal(m->hdr.flags, 0);

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_set_context(id, NULL), 0);
	/* The library already believes it: asynchronous calls succeed. */
	assert_null(cmc_get_context(id));
	assert_int_equal(cmc_rtu(id, NULL, 0), 0);
	assert_int_equal(cmc_disconnect(id, NULL, 0), 0);
	assert_int_equal(cmc_notify_established(id), 0);
	/* LISTEN stays a blocking call (it flushes the queue first). */
	assert_int_equal(cmc_listen(id, 0x42, ~0ull, 4, NULL), 0);
	m = fake_last(x->f, CMP_TYPE_SET_CONTEXT);
	assert_int_equal(m->hdr.flags, CMP_HDR_NOREPLY);
	assert_int_equal(m->set_context.context, 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_RTU)->hdr.flags,
			 CMP_HDR_NOREPLY);
	assert_int_equal(fake_last(x->f, CMP_TYPE_DISCONNECT)->hdr.flags,
			 CMP_HDR_NOREPLY);
	assert_int_equal(
		fake_last(x->f, CMP_TYPE_NOTIFY_ESTABLISHED)->hdr.flags,
		CMP_HDR_NOREPLY);
	assert_int_equal(fake_last(x->f, CMP_TYPE_LISTEN)->hdr.flags, 0);
	/* Argument errors are still the call's own. */
	assert_int_equal(cmc_rtu(id, NULL, 1), -EINVAL);
	assert_int_equal(cmc_mra(id, 32, NULL, 0), -EINVAL);

	/* Back to blocking: the flag goes, the daemon's verdict returns. */
	assert_int_equal(cmc_set_async(x->ch, 0), 0);
	x->f->status[CMP_TYPE_RTU] = -EINVAL;
	assert_int_equal(cmc_rtu(id, NULL, 0), -EINVAL);
	assert_int_equal(fake_last(x->f, CMP_TYPE_RTU)->hdr.flags, 0);
	assert_int_equal(cmc_destroy_id(id), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_DESTROY_ID)->hdr.flags, 0);
	assert_int_equal(x->f->bad_reqs, 0);
}

/* --- Batching -------------------------------------------------------- */

static void test_batch_sent_on_flush_in_order(void **state)
{
	struct fx *x = *state;
	struct cmc_id *ids[8];
	unsigned int base;
	int inq = -1;

	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &ids[i]),
				 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	/* Hold the daemon so that whatever we send stays in its socket. */
	fake_pause(x->f);
	base = total(x->f);
	for (unsigned int i = 0; i < 8; i++) {
		assert_int_equal(
			cmc_set_context(ids[i], (void *)(uintptr_t)(i + 1)), 0);
		assert_int_equal(cmc_rtu(ids[i], NULL, 0), 0);
	}
	/* Nothing left the library yet. */
	assert_int_equal(ioctl(x->f->fd, FIONREAD, &inq), 0);
	assert_int_equal(inq, 0);
	assert_int_equal(cmc_flush(x->ch), 0);
	assert_int_equal(ioctl(x->f->fd, FIONREAD, &inq), 0);
	assert_true(inq > 0);
	fake_resume(x->f);
	assert_true(fake_wait_reqs(x->f, base + 16, FX_WAIT_MS));
	/* In the order they were made, with increasing sequence numbers. */
	for (unsigned int i = 0; i < 16; i++) {
		const struct cmp_msg *m = &x->f->reqs[base + i];

		assert_int_equal(m->hdr.type,
				 i % 2 ? CMP_TYPE_RTU : CMP_TYPE_SET_CONTEXT);
		assert_int_equal(m->hdr.flags, CMP_HDR_NOREPLY);
		assert_int_equal(m->set_context.id, cmc_id_num(ids[i / 2]));
		if (i % 2 == 0)
			assert_int_equal(m->set_context.context, i / 2 + 1);
		if (i)
			assert_int_equal(m->hdr.seq,
					 x->f->reqs[base + i - 1].hdr.seq + 1);
	}

	/* cmc_get_event() flushes too, and so does leaving async mode. */
	fake_pause(x->f);
	base = total(x->f);
	assert_int_equal(cmc_notify_established(ids[0]), 0);
	assert_int_equal(ioctl(x->f->fd, FIONREAD, &inq), 0);
	assert_int_equal(inq, 0);
	{
		struct cmc_event *ev;

		assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
	}
	assert_int_equal(ioctl(x->f->fd, FIONREAD, &inq), 0);
	assert_true(inq > 0);
	assert_int_equal(cmc_mra(ids[1], 3, NULL, 0), 0);
	assert_int_equal(cmc_set_async(x->ch, 0), 0);
	fake_resume(x->f);
	assert_true(fake_wait_reqs(x->f, base + 2, FX_WAIT_MS));
	assert_int_equal(x->f->reqs[base].hdr.type,
			 CMP_TYPE_NOTIFY_ESTABLISHED);
	assert_int_equal(x->f->reqs[base + 1].hdr.type, CMP_TYPE_MRA);
}

/* A blocking request sends what was queued before it, first. */
static void test_blocking_request_flushes_first(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	unsigned int base;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	base = total(x->f);
	assert_int_equal(cmc_rtu(id, NULL, 0), 0);
	assert_int_equal(cmc_disconnect(id, NULL, 0), 0);
	sync_daemon(x);
	assert_int_equal(total(x->f), base + 3);
	assert_int_equal(x->f->reqs[base].hdr.type, CMP_TYPE_RTU);
	assert_int_equal(x->f->reqs[base + 1].hdr.type, CMP_TYPE_DISCONNECT);
	assert_int_equal(x->f->reqs[base + 2].hdr.type, CMP_TYPE_LIST);
}

/* --- Failures -------------------------------------------------------- */

static void test_failure_becomes_request_error(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a, *b;
	struct cmc_event *ev;
	struct cmc_accept_param ap = { .qp_num = 5 };
	int ctx_b;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_create_id(x->ch, &ctx_b, CMC_QP_RC, &b), 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	/* a's RTU succeeds, b's ACCEPT fails: one event, on b. */
	x->f->status[CMP_TYPE_ACCEPT] = -EINVAL;
	assert_int_equal(cmc_rtu(a, NULL, 0), 0);
	assert_int_equal(cmc_accept(b, &ap), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_ptr_equal(ev->id, b);
	assert_ptr_equal(ev->context, &ctx_b);
	assert_int_equal(ev->type, CMC_EVENT_REQUEST_ERROR);
	assert_int_equal(ev->status, -EINVAL);
	assert_int_equal(ev->u.request_error.request, CMC_REQ_ACCEPT);
	assert_string_equal(cmc_event_str(ev->type), "REQUEST_ERROR");
	/* Acked here: no ACK_EVENT goes to the daemon. */
	assert_int_equal(cmc_ack_event(ev), 0);
	sync_daemon(x);
	assert_int_equal(fake_count(x->f, CMP_TYPE_ACK_EVENT), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);

	/* A failed ACK_EVENT too, naming the id it was about. */
	{
		struct cmp_msg m;

		fake_event(&m, cmc_id_num(a), CMP_EVENT_ESTABLISHED, 0);
		assert_int_equal(fake_push(x->f, &m), 0);
	}
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(ev->type, CMC_EVENT_ESTABLISHED);
	/* Make the ack fail: the fake refuses an ack of an event it does
	 * not believe outstanding. */
	pthread_mutex_lock(&x->f->lock);
	for (unsigned int i = 0; i < x->f->nids; i++)
		if (x->f->ids[i].id == cmc_id_num(a))
			x->f->ids[i].outstanding = 0;
	pthread_mutex_unlock(&x->f->lock);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_ptr_equal(ev->id, a);
	assert_int_equal(ev->type, CMC_EVENT_REQUEST_ERROR);
	assert_int_equal(ev->status, -EINVAL);
	assert_int_equal(ev->u.request_error.request, CMC_REQ_ACK_EVENT);
	cmc_ack_event(ev);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
	assert_int_equal(cmc_destroy_id(a), 0);
	assert_int_equal(cmc_destroy_id(b), 0);
}

/* The failure of a request on an id destroyed since is dropped. */
static void test_failure_of_destroyed_id_dropped(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a;
	struct cmc_event *ev;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	x->f->status[CMP_TYPE_RTU] = -EINVAL;
	x->f->status[CMP_TYPE_DESTROY_ID] = -ENOENT;
	assert_int_equal(cmc_rtu(a, NULL, 0), 0);
	assert_int_equal(cmc_destroy_id(a), 0);
	sync_daemon(x);
	/* Both failures were read before the LIST reply, and dropped. */
	assert_int_equal(fake_count(x->f, CMP_TYPE_RTU), 1);
	assert_int_equal(fake_count(x->f, CMP_TYPE_DESTROY_ID), 1);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
	assert_int_equal(cmc_event_pending(x->ch), 0);
}

/* A failure reply nobody could have asked for is a protocol error. */
static void test_unasked_failure_is_eproto(void **state)
{
	struct fx *x = *state;
	struct cmc_id *a;
	struct cmc_event *ev;
	struct cmp_msg m;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &a), 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_rtu(a, NULL, 0), 0);
	sync_daemon(x);
	/* A sequence number never sent with NOREPLY. */
	cmp_msg_init(&m, CMP_TYPE_RTU_REPLY, 1000);
	m.reply.status = -EINVAL;
	m.reply.id = cmc_id_num(a);
	assert_int_equal(fake_send_msg(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), -EPROTO);
}

/* --- CONNECT that creates its id ------------------------------------ */

static bool hook_connect_then_rep(struct fake *f, const struct cmp_msg *req)
{
	struct cmp_msg ev;

	if (req->hdr.type != CMP_TYPE_CONNECT || req->connect.id)
		return false;
	/* Answer as the default does, then an event for the new id, as a
	 * daemon does when the peer answers quickly. */
	pthread_mutex_lock(&f->lock);
	f->hook_arg = (void *)(uintptr_t)f->next_id;
	pthread_mutex_unlock(&f->lock);
	f->hook = NULL;
	{
		struct cmp_msg r;

		memset(&r, 0, sizeof(r));
		pthread_mutex_lock(&f->lock);
		r.reply.id = f->next_id++;
		pthread_mutex_unlock(&f->lock);
		fake_reply(f, req, 0, &r);
		fake_event(&ev, r.reply.id, CMP_EVENT_MRA_RECEIVED,
			   req->connect.context);
		ev.event.mra_received.msg = CMP_CM_MSG_REQ;
		ev.event.mra_received.service_timeout = 9;
		fake_push(f, &ev);
	}
	return true;
}

static void test_connect_creates_id(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct cmc_event *ev;
	const struct cmp_msg *m;
	unsigned int base = total(x->f);
	uint32_t num;
	int ctx;

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_create_id(x->ch, &ctx, CMC_QP_UC, &id), 0);
	assert_int_equal(cmc_id_num(id), 0);
	x->f->hook = hook_connect_then_rep;
	assert_int_equal(cmc_connect(id, &conn_param), 0);
	assert_int_equal(cmc_id_num(id), 0);
	/* The reply numbers the id; the event after it finds it. */
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	num = (uint32_t)(uintptr_t)x->f->hook_arg;
	assert_int_not_equal(num, 0);
	assert_int_equal(cmc_id_num(id), num);
	assert_ptr_equal(ev->id, id);
	assert_ptr_equal(ev->context, &ctx);
	assert_int_equal(ev->type, CMC_EVENT_MRA_RECEIVED);
	assert_int_equal(ev->u.mra.service_timeout, 9);
	assert_int_equal(cmc_ack_event(ev), 0);
	/* One CONNECT, no CREATE_ID, and it asked for its reply. */
	assert_int_equal(total(x->f), base + 1);
	m = fake_last(x->f, CMP_TYPE_CONNECT);
	assert_int_equal(m->connect.id, CMP_ID_NONE);
	assert_int_equal(m->connect.qp_type, CMP_QP_TYPE_UC);
	assert_int_equal(m->connect.context, (uintptr_t)&ctx);
	assert_int_equal(m->connect.local_qpn, 0x99);
	assert_int_equal(m->hdr.flags, 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_CREATE_ID), 0);
	/* From then on the id is named by its number. */
	assert_int_equal(cmc_rtu(id, NULL, 0), 0);
	sync_daemon(x);
	m = fake_last(x->f, CMP_TYPE_RTU);
	assert_int_equal(m->rtu.id, num);
	assert_int_equal(m->hdr.flags, CMP_HDR_NOREPLY);
	assert_int_equal(fake_last(x->f, CMP_TYPE_ACK_EVENT)->ack_event.id,
			 num);
	assert_int_equal(cmc_destroy_id(id), 0);
}

static void test_connect_create_fails(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct cmc_event *ev;
	int ctx;

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_create_id(x->ch, &ctx, CMC_QP_RC, &id), 0);
	x->f->status[CMP_TYPE_CONNECT] = -EHOSTUNREACH;
	assert_int_equal(cmc_connect(id, &conn_param), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_ptr_equal(ev->id, id);
	assert_ptr_equal(ev->context, &ctx);
	assert_int_equal(ev->type, CMC_EVENT_REQUEST_ERROR);
	assert_int_equal(ev->status, -EHOSTUNREACH);
	assert_int_equal(ev->u.request_error.request, CMC_REQ_CONNECT);
	assert_int_equal(cmc_id_num(id), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	/* Still unborn: destroying it tells the daemon nothing. */
	assert_int_equal(cmc_destroy_id(id), 0);
	sync_daemon(x);
	assert_int_equal(fake_count(x->f, CMP_TYPE_DESTROY_ID), 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_ACK_EVENT), 0);
}

/* Any other request on an unborn id creates it first, blocking. */
static void test_unborn_other_request_creates(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	const struct cmp_msg *m;
	int ctx;

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_create_id(x->ch, &ctx, CMC_QP_UD, &id), 0);
	assert_int_equal(fake_count(x->f, CMP_TYPE_CREATE_ID), 0);
	assert_int_equal(cmc_listen(id, 0x77, ~0ull, 2, NULL), 0);
	m = fake_last(x->f, CMP_TYPE_CREATE_ID);
	assert_non_null(m);
	assert_int_equal(m->create_id.qp_type, CMP_QP_TYPE_UD);
	assert_int_equal(m->create_id.context, (uintptr_t)&ctx);
	assert_int_not_equal(cmc_id_num(id), 0);
	assert_int_equal(fake_last(x->f, CMP_TYPE_LISTEN)->listen.id,
			 cmc_id_num(id));
	assert_int_equal(cmc_destroy_id(id), 0);
}

/* A request on an id whose creating CONNECT is unanswered waits for it. */
static void test_request_waits_for_create(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	const struct cmp_msg *m;
	int ctx;

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_connect(id, &conn_param), 0);
	assert_int_equal(cmc_set_context(id, &ctx), 0);
	assert_int_not_equal(cmc_id_num(id), 0);
	sync_daemon(x);
	m = fake_last(x->f, CMP_TYPE_SET_CONTEXT);
	assert_int_equal(m->set_context.id, cmc_id_num(id));
	assert_int_equal(fake_count(x->f, CMP_TYPE_CREATE_ID), 0);
	assert_int_equal(cmc_destroy_id(id), 0);
}

/* --- Destroy --------------------------------------------------------- */

static void test_destroy_unborn_is_local(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	unsigned int base = total(x->f);

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_destroy_id(id), 0);
	sync_daemon(x);
	assert_int_equal(total(x->f), base + 1); /* the LIST */
}

/* Destroyed before the creating CONNECT's reply: its id is destroyed
 * when the reply names it, and the id's events never show. */
static void test_destroy_while_creating(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct cmc_event *ev;
	const struct cmp_msg *m;
	uint32_t num;
	int d;

	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	x->f->hook = hook_connect_then_rep;
	assert_int_equal(cmc_connect(id, &conn_param), 0);
	assert_int_equal(cmc_destroy_id(id), 0);
	/* The reply and the event come; the DESTROY_ID goes with the next
	 * flush (here: the blocking LIST's). */
	sync_daemon(x);
	sync_daemon(x);
	num = (uint32_t)(uintptr_t)x->f->hook_arg;
	assert_int_not_equal(num, 0);
	m = fake_last(x->f, CMP_TYPE_DESTROY_ID);
	assert_non_null(m);
	assert_int_equal(m->destroy_id.id, num);
	assert_int_equal(m->hdr.flags, CMP_HDR_NOREPLY);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
	/* And the channel still works. */
	assert_int_equal(cmc_create_id(x->ch, &d, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_listen(id, 5, ~0ull, 1, NULL), 0);
}

static void test_destroy_born_async(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct cmc_event *ev;
	struct cmp_msg m;
	uint32_t num;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	num = cmc_id_num(id);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	/* An event already in the library's queue is dropped at once. */
	fake_event(&m, num, CMP_EVENT_ESTABLISHED, 0);
	assert_int_equal(fake_push(x->f, &m), 0);
	sync_daemon(x);
	assert_int_equal(cmc_event_pending(x->ch), 1);
	assert_int_equal(cmc_destroy_id(id), 0);
	assert_int_equal(cmc_event_pending(x->ch), 0);
	/* One the daemon sends later (it may: the DESTROY_ID is not sent
	 * yet) is dropped on arrival. */
	fake_event(&m, num, CMP_EVENT_DREQ_RECEIVED, 0);
	assert_int_equal(fake_send_msg(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, 200), -EAGAIN);
	sync_daemon(x);
	assert_int_equal(fake_last(x->f, CMP_TYPE_DESTROY_ID)->destroy_id.id,
			 num);
	assert_int_equal(fake_last(x->f, CMP_TYPE_DESTROY_ID)->hdr.flags,
			 CMP_HDR_NOREPLY);
	assert_int_equal(cmc_event_pending(x->ch), 0);
}

/* Held events of a destroyed id: acked locally, as in blocking mode. */
static void test_ack_after_destroy_async(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct cmc_event *ev;
	struct cmp_msg m;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	fake_event(&m, cmc_id_num(id), CMP_EVENT_ESTABLISHED, 0);
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
	assert_int_equal(cmc_destroy_id(id), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	sync_daemon(x);
	assert_int_equal(fake_count(x->f, CMP_TYPE_ACK_EVENT), 0);
}

/* --- A full socket both ways ---------------------------------------- */

#define FLOOD_EVENTS 3000
#define FLOOD_REQS 3000

/* The flood's events were sent bypassing the fake's per-id bookkeeping:
 * take their acks as good (NOREPLY: no answer). */
static bool hook_ack_ok(struct fake *f, const struct cmp_msg *req)
{
	(void)f;
	return req->hdr.type == CMP_TYPE_ACK_EVENT &&
	       (req->hdr.flags & CMP_HDR_NOREPLY);
}

/* On the first SET_CONTEXT, send FLOOD_EVENTS events without reading
 * another request: the client must read while it flushes. */
static bool hook_flood(struct fake *f, const struct cmp_msg *req)
{
	uint32_t id = (uint32_t)(uintptr_t)f->hook_arg;
	struct cmp_msg ev;

	if (req->hdr.type != CMP_TYPE_SET_CONTEXT)
		return false;
	f->hook = hook_ack_ok;
	for (unsigned int i = 0; i < FLOOD_EVENTS; i++) {
		fake_event(&ev, id, CMP_EVENT_MRA_RECEIVED, 0);
		ev.event.mra_received.msg = CMP_CM_MSG_REQ;
		ev.event.mra_received.service_timeout = (uint8_t)(i % 32);
		ev.hdr.seq = i + 1;
		if (fake_send_msg(f, &ev))
			break;
	}
	return true;
}

static void test_flush_full_socket_no_deadlock(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct cmc_event *ev;
	unsigned int base, got = 0;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	x->f->hook_arg = (void *)(uintptr_t)cmc_id_num(id);
	x->f->hook = hook_flood;
	base = total(x->f);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	/* Far more than either socket buffer holds. Without reading while
	 * the socket is full, this flush would wait forever (alarm()). */
	for (unsigned int i = 0; i < FLOOD_REQS; i++)
		assert_int_equal(
			cmc_set_context(id, (void *)(uintptr_t)(i + 1)), 0);
	assert_int_equal(cmc_flush(x->ch), 0);
	assert_true(fake_wait_reqs(x->f, base + FLOOD_REQS, FX_WAIT_MS));
	assert_int_equal(x->f->bad_reqs, 0);
	/* Every event arrived, none lost, in order. */
	while (got < FLOOD_EVENTS) {
		assert_int_equal(cmc_get_event(x->ch, &ev, FX_WAIT_MS), 0);
		assert_int_equal(ev->type, CMC_EVENT_MRA_RECEIVED);
		assert_int_equal(ev->u.mra.service_timeout, got % 32);
		cmc_ack_event(ev);
		got++;
	}
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
	assert_ptr_equal(cmc_get_context(id), (void *)(uintptr_t)FLOOD_REQS);
}

/* --- The fd --------------------------------------------------------- */

/* Events read while flushing sit in the library: the fd says so. */
static void test_fd_readable_after_flush_read(void **state)
{
	struct fx *x = *state;
	struct cmc_id *id;
	struct pollfd pfd;
	struct cmc_event *ev;
	struct cmp_msg m;

	assert_int_equal(cmc_create_id(x->ch, NULL, CMC_QP_RC, &id), 0);
	fake_event(&m, cmc_id_num(id), CMP_EVENT_ESTABLISHED, 0);
	assert_int_equal(fake_push(x->f, &m), 0);
	assert_int_equal(cmc_set_async(x->ch, 1), 0);
	assert_int_equal(cmc_rtu(id, NULL, 0), 0);
	sync_daemon(x); /* reads the event too */
	assert_int_equal(cmc_event_pending(x->ch), 1);
	pfd.fd = cmc_fd(x->ch);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_flush(x->ch), 0);
	pfd.revents = 0;
	sync_daemon(x);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(cmc_get_event(x->ch, &ev, 0), -EAGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_noreply_flag, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_batch_sent_on_flush_in_order, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_blocking_request_flushes_first, setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_failure_becomes_request_error, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_failure_of_destroyed_id_dropped, setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(test_unasked_failure_is_eproto,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_connect_creates_id, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_connect_create_fails,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_unborn_other_request_creates, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_request_waits_for_create,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_unborn_is_local,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_while_creating,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_born_async, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_ack_after_destroy_async,
						setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_flush_full_socket_no_deadlock, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_fd_readable_after_flush_read, setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
