// SPDX-License-Identifier: MIT
/*
 * What a librdmacm program sees of a connection's life, both sides, over
 * cmd on the simulated fabric (rcsim.h): the events in rdma_cm's order,
 * the private data as the peer sent it (the CMA header stripped from the
 * REQ's), the listener and its context on CONNECT_REQUEST, and REJECTED
 * with the REJ's reason as the status: 28 for rdma_reject (with the
 * rejecter's private data), 8 when nobody listens on the port.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rcsim.h"

static const char req_pd[] = "from the client, 56 bytes at most";
static const char rep_pd[] = "from the server, in the REP";
static const char rej_pd[] = "no, thank you";

/* The listener's context; the new id's must be the same pointer. */
static int listen_ctx, client_ctx;

/*
 * A private data area as rdma_cm reports it: the whole area, what was
 * sent and zeros after it.
 */
static void check_pd(const struct rdma_conn_param *c, const char *sent,
		     size_t area)
{
	const uint8_t *pd = c->private_data;
	size_t n = strlen(sent) + 1;

	RCS_CHECK(pd && c->private_data_len == area,
		  "private data %p, %u bytes: expected %zu", c->private_data,
		  c->private_data_len, area);
	RCS_CHECK(!memcmp(pd, sent, n), "private data '%.*s', sent '%s'",
		  (int)n, (const char *)pd, sent);
	for (size_t i = n; i < area; i++)
		RCS_CHECK(!pd[i], "private data byte %zu is 0x%02x, not 0", i,
			  pd[i]);
}

/* ---------------------------------------------------------------- */

static void server_accepts(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lst, *id;
	struct rdma_cm_event *ev;

	(void)arg;
	RCS_CHECK(ch, "rdma_create_event_channel: %s", strerror(errno));
	lst = rcs_listener(ch, &listen_ctx, RCS_PORT, 8);
	rcs_tell("listening");

	ev = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	id = ev->id;
	RCS_CHECK(ev->listen_id == lst, "listen_id %p, the listener is %p",
		  (void *)ev->listen_id, (void *)lst);
	RCS_CHECK(id != lst, "CONNECT_REQUEST on the listener itself");
	RCS_CHECK(id->context == &listen_ctx,
		  "the new id's context %p, the listener's %p", id->context,
		  (void *)&listen_ctx);
	RCS_CHECK(ev->param.conn.qp_num == RCS_CLIENT_QPN,
		  "the REQ's QPN 0x%x, the client's 0x%x",
		  ev->param.conn.qp_num, RCS_CLIENT_QPN);
	check_pd(&ev->param.conn, req_pd, RCS_REQ_PD);
	rcs_accept(id, rep_pd, sizeof(rep_pd));
	RCS_OK(rdma_ack_cm_event(ev));

	rcs_expect_ack(ch, RDMA_CM_EVENT_ESTABLISHED, id);
	rcs_hung_up(ch, id);
	RCS_OK(rdma_destroy_id(lst));
	rcs_quiet(ch, 1);
	rdma_destroy_event_channel(ch);
}

static void client_connects(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	(void)arg;
	RCS_CHECK(ch, "rdma_create_event_channel: %s", strerror(errno));
	rcs_hear("listening");
	id = rcs_resolved_id(ch, &client_ctx, 2, RCS_PORT);
	rcs_connect(id, req_pd, sizeof(req_pd));

	ev = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, id);
	RCS_CHECK(id->context == &client_ctx, "the id's context changed");
	RCS_CHECK(ev->param.conn.qp_num == RCS_SERVER_QPN,
		  "the REP's QPN 0x%x, the server's 0x%x",
		  ev->param.conn.qp_num, RCS_SERVER_QPN);
	check_pd(&ev->param.conn, rep_pd, RCS_REP_PD);
	RCS_OK(rdma_establish(id));
	RCS_OK(rdma_ack_cm_event(ev));

	rcs_hang_up(ch, id);
	rcs_quiet(ch, 2);
	rdma_destroy_event_channel(ch);
}

static void t_order(void **state)
{
	(void)state;
	rcs_run(server_accepts, client_connects, NULL);
}

/* ---------------------------------------------------------------- */

static void server_rejects(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lst;
	struct rdma_cm_event *ev;

	(void)arg;
	lst = rcs_listener(ch, &listen_ctx, RCS_PORT, 8);
	rcs_tell("listening");
	ev = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	RCS_OK(rdma_reject(ev->id, rej_pd, sizeof(rej_pd)));
	RCS_OK(rdma_destroy_id(ev->id));
	RCS_OK(rdma_ack_cm_event(ev));
	/* The rejected connection has no more events. */
	rcs_hear("rejected");
	rcs_quiet(ch, 1);
	RCS_OK(rdma_destroy_id(lst));
	rdma_destroy_event_channel(ch);
}

/* Connect to port; the outcome must be REJECTED with status reason and,
 * when pd is not NULL, that private data. */
static void expect_rejected(uint16_t port, int reason, const char *pd)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	id = rcs_resolved_id(ch, &client_ctx, 2, port);
	rcs_connect(id, req_pd, sizeof(req_pd));
	ev = rcs_next(ch);
	RCS_CHECK(ev->event == RDMA_CM_EVENT_REJECTED && ev->id == id,
		  "got %s, expected REJECTED", rdma_event_str(ev->event));
	RCS_CHECK(ev->status == reason, "REJECTED with status %d, not %d",
		  ev->status, reason);
	if (pd)
		check_pd(&ev->param.conn, pd, RCS_REJ_PD);
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(id));
	rcs_expect_empty(ch);
	rdma_destroy_event_channel(ch);
}

static void client_rejected(void *arg)
{
	(void)arg;
	rcs_hear("listening");
	/* IBTA Table 112, reason 28: consumer reject. */
	expect_rejected(RCS_PORT, 28, rej_pd);
	rcs_tell("rejected");
}

static void t_reject(void **state)
{
	(void)state;
	rcs_run(server_rejects, client_rejected, NULL);
}

static void client_nobody(void *arg)
{
	(void)arg;
	/* Reason 8: invalid service ID (node 2's daemon has no listener). */
	expect_rejected(RCS_PORT_NOBODY, 8, NULL);
}

static void t_nobody_listens(void **state)
{
	(void)state;
	rcs_run(NULL, client_nobody, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-order", 31, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_order),
		cmocka_unit_test(t_reject),
		cmocka_unit_test(t_nobody_listens),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
