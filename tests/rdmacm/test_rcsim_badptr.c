// SPDX-License-Identifier: MIT
/*
 * Pointers that are no (longer) ids or events: every call on a NULL id
 * or a destroyed one fails with -1/EINVAL and reads nothing through it
 * (meson also runs this program under valgrind: rcsim-badptr-valgrind);
 * an event acked twice, or never returned by rdma_get_cm_event, is
 * refused with -1/EINVAL the second time. A destroyed id whose event
 * the application still holds stays readable through event->id until
 * that event is acked (rc_chan.c), but is no id for the calls either.
 *
 * One side, on node 1's daemon: a destroyed listener and a destroyed
 * connecting id (to node 2's daemon, where nobody listens) besides
 * fresh ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rdma/rdma_verbs.h>

#include "rcsim.h"

/* Every call that takes an id, on id: -1/EINVAL. No call here may
 * create an id (it could reuse a destroyed id's memory). */
static void calls_refuse(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	struct rdma_conn_param p = rcs_param(RCS_CLIENT_QPN, NULL, 0);
	struct sockaddr_in a, b;
	struct ibv_qp_init_attr qpa;
	struct ibv_srq_init_attr srqa;
	struct ibv_qp_attr qattr;
	struct ibv_ece ece;
	struct rdma_cm_id *out = NULL;
	int mask = 0, tos = 0;

	memset(&qpa, 0, sizeof(qpa));
	memset(&srqa, 0, sizeof(srqa));
	memset(&qattr, 0, sizeof(qattr));
	qpa.qp_type = IBV_QPT_RC;
	rcs_addr(&a, 1, 0);
	rcs_addr(&b, 2, RCS_PORT);
	RCS_FAILS(rdma_bind_addr(id, (struct sockaddr *)&a), EINVAL);
	RCS_FAILS(rdma_resolve_addr(id, NULL, (struct sockaddr *)&b, 2000),
		  EINVAL);
	RCS_FAILS(rdma_resolve_route(id, 2000), EINVAL);
	RCS_FAILS(rdma_listen(id, 8), EINVAL);
	RCS_FAILS(rdma_connect(id, &p), EINVAL);
	RCS_FAILS(rdma_accept(id, &p), EINVAL);
	RCS_FAILS(rdma_reject(id, NULL, 0), EINVAL);
	RCS_FAILS(rdma_establish(id), EINVAL);
	RCS_FAILS(rdma_disconnect(id), EINVAL);
	RCS_FAILS(rdma_notify(id, IBV_EVENT_COMM_EST), EINVAL);
	RCS_FAILS(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos,
				  1),
		  EINVAL);
	RCS_FAILS(rdma_migrate_id(id, ch), EINVAL);
	RCS_FAILS(rdma_get_request(id, &out), EINVAL);
	RCS_FAILS(rdma_init_qp_attr(id, &qattr, &mask), EINVAL);
	RCS_FAILS(rdma_create_qp(id, NULL, &qpa), EINVAL);
	RCS_FAILS(rdma_create_srq(id, NULL, &srqa), EINVAL);
	RCS_FAILS(rdma_get_remote_ece(id, &ece), EINVAL);
	RCS_FAILS(rdma_destroy_id(id), EINVAL);
	RCS_CHECK(!out, "rdma_get_request gave an id");
	/* No result to check: they must not read through id. */
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_ep(id);
}

static void side(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *idle = NULL, *lst, *conn, *held;
	struct rdma_cm_event *ev, not_an_event;
	struct sockaddr_in sin;
	static int ctx;

	(void)arg;
	calls_refuse(NULL, ch);
	RCS_FAILS(rdma_get_cm_event(NULL, &ev), EINVAL);
	RCS_FAILS(rdma_get_cm_event(ch, NULL), EINVAL);
	RCS_FAILS(rdma_ack_cm_event(NULL), EINVAL);
	rdma_destroy_event_channel(NULL);

	/* Destroyed with nothing holding it: its memory is gone. */
	RCS_OK(rdma_create_id(ch, &idle, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_destroy_id(idle));
	calls_refuse(idle, ch);

	/* A destroyed listener (on node 1's own address). */
	RCS_OK(rdma_create_id(ch, &lst, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_bind_addr(lst, rcs_addr(&sin, 1, RCS_PORT)));
	RCS_OK(rdma_listen(lst, 8));
	RCS_OK(rdma_destroy_id(lst));
	calls_refuse(lst, ch);

	/* A destroyed id whose REQ is out (its REJ, to come, is dropped). */
	conn = rcs_resolved_id(ch, NULL, 2, RCS_PORT_NOBODY);
	rcs_connect(conn, NULL, 0);
	RCS_OK(rdma_destroy_id(conn));
	calls_refuse(conn, ch);

	/* Destroyed while the application holds its event; then acked. */
	ev = rcs_addr_resolved(ch, &ctx, 2, RCS_PORT);
	held = ev->id;
	RCS_OK(rdma_destroy_id(held));
	calls_refuse(held, ch);
	RCS_CHECK(ev->id == held && ev->id->context == &ctx,
		  "the held event's id is not readable after destroy");
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_FAILS(rdma_ack_cm_event(ev), EINVAL);
	calls_refuse(held, ch);

	/* Acked twice; an event of our own making. */
	ev = rcs_addr_resolved(ch, &ctx, 2, RCS_PORT);
	held = ev->id;
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_FAILS(rdma_ack_cm_event(ev), EINVAL);
	memset(&not_an_event, 0, sizeof(not_an_event));
	not_an_event.id = held;
	RCS_FAILS(rdma_ack_cm_event(&not_an_event), EINVAL);
	RCS_OK(rdma_destroy_id(held));

	/* Nothing of the destroyed ids is left to deliver. */
	rcs_expect_empty(ch);
	rdma_destroy_event_channel(ch);
}

static void t_bad_pointers(void **state)
{
	(void)state;
	rcs_run_one(side, rcs_sock[1], NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-badptr", 33, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bad_pointers),
	};

	rcs_main(argc, argv);
	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
