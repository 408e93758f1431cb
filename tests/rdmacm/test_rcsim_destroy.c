// SPDX-License-Identifier: MIT
/*
 * Destroy is final and never waits (DESIGN.md lesson 3). librdmacm's
 * rdma_destroy_id blocks until the application has acked every event of
 * the id; ours returns at once, even from the thread that holds them
 * (where librdmacm's would never return: the hang guard fails that),
 * the held events stay readable until acked, and no later event of the
 * id is delivered. The daemon finishes the protocol: the peer of a
 * destroyed established id gets a DREQ, the peers of a destroyed
 * listener's undelivered CONNECT_REQUESTs a REJ.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rcsim.h"

/* Connections to a listener that is destroyed before it takes them. */
#define QUEUED 4

static int ctx;

/* Local events: one held, one queued, then destroy. */
static void local_events(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev = rcs_addr_resolved(ch, &ctx, 2, RCS_PORT);
	struct rdma_cm_id *id = ev->id;

	(void)arg;
	RCS_OK(rdma_resolve_route(id, 2000)); /* ROUTE_RESOLVED queued */
	RCS_OK(rdma_destroy_id(id));
	RCS_CHECK(ev->id == id && ev->id->context == &ctx,
		  "the held event's id is unreadable after destroy");
	RCS_OK(rdma_ack_cm_event(ev));
	/* ROUTE_RESOLVED went with the id. */
	rcs_quiet(ch, 2);
	rdma_destroy_event_channel(ch);
}

static void t_local_events(void **state)
{
	(void)state;
	rcs_run_one(local_events, rcs_sock[1], NULL);
}

/* The server destroys an established id while it holds both its
 * CONNECT_REQUEST and its ESTABLISHED. */
static void server_destroys(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *req, *est;
	struct rdma_cm_id *lst, *id;

	(void)arg;
	lst = rcs_listener(ch, &ctx, RCS_PORT, 8);
	rcs_tell("listening");
	req = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	id = req->id;
	rcs_accept(id, NULL, 0);
	est = rcs_expect(ch, RDMA_CM_EVENT_ESTABLISHED, id);
	RCS_OK(rdma_destroy_id(id));
	RCS_CHECK(est->id == id && req->id == id && id->context == &ctx,
		  "the held events' id is unreadable after destroy");
	RCS_OK(rdma_ack_cm_event(est));
	RCS_OK(rdma_ack_cm_event(req));
	rcs_hear("disconnected");
	RCS_OK(rdma_destroy_id(lst));
	/* The destroyed id's record has gone through its timewait: the
	 * DREP that ended it, and its TIMEWAIT_EXIT, were for nobody. */
	rcs_wait_counter(getenv("CMD_SOCKET"), "records", 0);
	rcs_quiet(ch, 1);
	rdma_destroy_event_channel(ch);
}

static void client_disconnected(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;

	(void)arg;
	rcs_hear("listening");
	id = rcs_resolved_id(ch, NULL, 2, RCS_PORT);
	rcs_connect(id, NULL, 0);
	rcs_expect_ack(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, id);
	RCS_OK(rdma_establish(id));
	/* The server's daemon sends the DREQ of its destroyed id. */
	rcs_hung_up(ch, id);
	rcs_tell("disconnected");
	rdma_destroy_event_channel(ch);
}

static void t_destroy_established(void **state)
{
	(void)state;
	rcs_run(server_destroys, client_disconnected, NULL);
}

/* The listener is destroyed with CONNECT_REQUESTs queued, not taken. */
static void server_drops(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lst;

	(void)arg;
	lst = rcs_listener(ch, &ctx, RCS_PORT, 8);
	rcs_tell("listening");
	rcs_hear("connecting");
	/* Requests still on their way to the queue meet a destroyed
	 * listener there instead: not delivered either. */
	rcs_wait_requests(ch, 1, QUEUED);
	RCS_OK(rdma_destroy_id(lst));
	rcs_hear("rejected");
	rcs_quiet(ch, 1);
	rdma_destroy_event_channel(ch);
}

static void client_rejected(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id[QUEUED];

	(void)arg;
	rcs_hear("listening");
	for (int i = 0; i < QUEUED; i++) {
		id[i] = rcs_resolved_id(ch, &id[i], 2, RCS_PORT);
		rcs_connect(id[i], NULL, 0);
	}
	rcs_tell("connecting");
	for (int n = 0; n < QUEUED; n++) {
		struct rdma_cm_event *ev = rcs_next(ch);
		int i = 0;

		while (i < QUEUED && ev->id != id[i])
			i++;
		RCS_CHECK(i < QUEUED && ev->id->context == &id[i] && id[i],
			  "%s for an id not ours, or twice",
			  rdma_event_str(ev->event));
		/* IBTA reason 28, consumer reject: the new id was destroyed
		 * in REQ_RCVD, as the kernel's rdma_cm rejects it. */
		RCS_CHECK(ev->event == RDMA_CM_EVENT_REJECTED &&
				  ev->status == 28,
			  "got %s (status %d), expected REJECTED 28",
			  rdma_event_str(ev->event), ev->status);
		RCS_OK(rdma_ack_cm_event(ev));
		RCS_OK(rdma_destroy_id(id[i]));
		id[i] = NULL;
	}
	rcs_tell("rejected");
	rcs_quiet(ch, 2);
	rdma_destroy_event_channel(ch);
}

static void t_destroy_listener(void **state)
{
	(void)state;
	rcs_run(server_drops, client_rejected, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-destroy", 34, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_local_events),
		cmocka_unit_test(t_destroy_established),
		cmocka_unit_test(t_destroy_listener),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
