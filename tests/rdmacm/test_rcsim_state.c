// SPDX-License-Identifier: MIT
/*
 * Calls the id's state does not allow fail with librdmacm's -1/EINVAL
 * and touch nothing else (DESIGN.md lesson 3): after each refused call
 * the id goes on through the calls its state does allow, to an
 * established connection and its end. Private data too long for the REQ
 * (more than 92 - 36 = 56 bytes) or the REP (196) is refused likewise;
 * exactly 56 arrive whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rcsim.h"

/* One more byte than the largest area, the REP's. */
static uint8_t pd[RCS_REP_PD + 1];

static void server(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param p = rcs_param(RCS_SERVER_QPN, NULL, 0);
	struct rdma_cm_id *lst = NULL, *id;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin;

	(void)arg;
	RCS_OK(rdma_create_id(ch, &lst, NULL, RDMA_PS_TCP));
	RCS_FAILS(rdma_accept(lst, &p), EINVAL);
	RCS_OK(rdma_bind_addr(lst, rcs_addr(&sin, 2, RCS_PORT)));
	RCS_FAILS(rdma_bind_addr(lst, rcs_addr(&sin, 2, RCS_PORT)), EINVAL);
	RCS_FAILS(rdma_bind_addr(lst, rcs_addr(&sin, 2, RCS_PORT + 1)), EINVAL);
	RCS_OK(rdma_listen(lst, 8));
	RCS_FAILS(rdma_listen(lst, 8), EINVAL);
	RCS_FAILS(rdma_bind_addr(lst, rcs_addr(&sin, 2, RCS_PORT)), EINVAL);
	RCS_FAILS(rdma_accept(lst, &p), EINVAL);
	RCS_FAILS(rdma_connect(lst, &p), EINVAL);
	RCS_FAILS(rdma_resolve_route(lst, 2000), EINVAL);
	rcs_tell("listening");

	/* The listener still works: the client's REQ, all 56 bytes. */
	ev = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	id = ev->id;
	RCS_CHECK(ev->param.conn.private_data_len == RCS_REQ_PD &&
			  !memcmp(ev->param.conn.private_data, pd, RCS_REQ_PD),
		  "the REQ's private data (%u bytes) is not what was sent",
		  ev->param.conn.private_data_len);
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	RCS_FAILS(rdma_listen(id, 8), EINVAL);
	p = rcs_param(RCS_SERVER_QPN, pd, RCS_REP_PD + 1);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	p = rcs_param(RCS_SERVER_QPN, pd, RCS_REP_PD);
	RCS_OK(rdma_accept(id, &p));
	RCS_OK(rdma_ack_cm_event(ev));
	rcs_expect_ack(ch, RDMA_CM_EVENT_ESTABLISHED, id);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	RCS_FAILS(rdma_reject(id, NULL, 0), EINVAL);
	rcs_hung_up(ch, id);
	RCS_OK(rdma_destroy_id(lst));
	rcs_expect_empty(ch);
	rdma_destroy_event_channel(ch);
}

static void client(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param p = rcs_param(RCS_CLIENT_QPN, pd, RCS_REQ_PD);
	struct rdma_cm_id *id = NULL, *b = NULL;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin, dst;

	(void)arg;
	/* Bound twice; the bound id then resolves from its address. */
	RCS_OK(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_bind_addr(b, rcs_addr(&sin, 1, 0)));
	RCS_FAILS(rdma_bind_addr(b, rcs_addr(&sin, 1, 0)), EINVAL);
	RCS_OK(rdma_resolve_addr(b, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	rcs_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, b);
	RCS_FAILS(rdma_bind_addr(b, rcs_addr(&sin, 1, 0)), EINVAL);
	RCS_OK(rdma_destroy_id(b));

	RCS_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	RCS_FAILS(rdma_resolve_route(id, 2000), EINVAL);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	RCS_FAILS(rdma_establish(id), EINVAL);
	RCS_FAILS(rdma_disconnect(id), EINVAL);
	RCS_OK(rdma_resolve_addr(id, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	rcs_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, id);
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	RCS_FAILS(rdma_listen(id, 8), EINVAL);
	RCS_OK(rdma_resolve_route(id, 2000));
	rcs_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	RCS_FAILS(rdma_listen(id, 8), EINVAL);
	RCS_FAILS(rdma_bind_addr(id, rcs_addr(&sin, 1, 0)), EINVAL);
	p.private_data_len = RCS_REQ_PD + 1;
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	p.private_data_len = RCS_REQ_PD;
	rcs_hear("listening");
	RCS_OK(rdma_connect(id, &p));
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);

	ev = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, id);
	RCS_CHECK(ev->param.conn.private_data_len == RCS_REP_PD &&
			  !memcmp(ev->param.conn.private_data, pd, RCS_REP_PD),
		  "the REP's private data is not what was sent");
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_establish(id));
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	RCS_FAILS(rdma_resolve_route(id, 2000), EINVAL);
	rcs_hang_up(ch, id);
	rcs_expect_empty(ch);
	rdma_destroy_event_channel(ch);
}

static void t_wrong_state(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)(i * 7 + 1);
	rcs_run(server, client, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-state", 32, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_wrong_state),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
