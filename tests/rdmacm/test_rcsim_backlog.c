// SPDX-License-Identifier: MIT
/*
 * The backlog is a credit (DESIGN.md lesson 1): 200 connections in
 * flight from one client against one listener with backlog 8. The
 * daemon hands the listener at most 8 unanswered CONNECT_REQUESTs and
 * holds the rest, MRAing them so that their peers keep waiting (the
 * client's library hides those MRAs, as rdma_cm ignores them); each
 * accept returns a credit and lets the next held request through. The
 * server takes its requests in batches: it answers none of its first 8
 * until its daemon shows requests held, so the hold is sure to happen.
 * All 200 get ESTABLISHED, and are torn down; afterwards neither daemon
 * holds an id or a connection record, checked while both programs still
 * run (so it is the library that let go of them, not the daemon
 * cleaning up after a client that went).
 *
 * Node 2's daemon may hold 256 REQs per listener (--max-held): by
 * default it holds 64 and rejects the rest with REJ 3, "no resources".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rcsim.h"

#define CONNS 200
#define BACKLOG 8

/* Where each connection is, on either side: the last event it had. */
struct conn {
	enum rdma_cm_event_type last;
	bool seen;
};

/* "after" for a connection's first event. */
#define FIRST (-1)

/* ev is the next event of its connection after the one it had. */
static void step(struct conn *c, const struct rdma_cm_event *ev, int after)
{
	RCS_CHECK(ev->status == 0, "%s with status %d",
		  rdma_event_str(ev->event), ev->status);
	RCS_CHECK(after == FIRST ? !c->seen : c->seen && (int)c->last == after,
		  "%s after %s", rdma_event_str(ev->event),
		  c->seen ? rdma_event_str(c->last) : "nothing");
	c->last = ev->event;
	c->seen = true;
}

static void server(void *arg)
{
	static struct conn conn[CONNS];
	struct rdma_event_channel *ch = rdma_create_event_channel();
	const char *sock = getenv("CMD_SOCKET");
	struct rdma_cm_id *lst, *pending[BACKLOG];
	unsigned int npending = 0, received = 0, gone = 0;

	(void)arg;
	lst = rcs_listener(ch, NULL, RCS_PORT, BACKLOG);
	rcs_tell("listening");
	while (gone < CONNS) {
		struct rdma_cm_event *ev = rcs_next(ch);
		struct rdma_cm_id *id = ev->id;
		struct conn *c = id->context;

		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			RCS_CHECK(received < CONNS, "too many requests");
			c = &conn[received++];
			id->context = c;
			step(c, ev, FIRST);
			RCS_CHECK(npending < BACKLOG,
				  "a request beyond the backlog's %d credits",
				  BACKLOG);
			pending[npending++] = id;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			step(c, ev, RDMA_CM_EVENT_CONNECT_REQUEST);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			step(c, ev, RDMA_CM_EVENT_ESTABLISHED);
			RCS_OK(rdma_disconnect(id));
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			step(c, ev, RDMA_CM_EVENT_DISCONNECTED);
			gone++;
			break;
		default:
			rcs_fail(__FILE__, __LINE__,
				 "unexpected %s (status %d)",
				 rdma_event_str(ev->event), ev->status);
		}
		RCS_OK(rdma_ack_cm_event(ev));
		if (c->last == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			RCS_OK(rdma_destroy_id(id));
		if (npending < BACKLOG && received < CONNS)
			continue;
		/* Credit used up: the daemon holds the rest, all of them
		 * before we answer any (req_held is a running total). */
		if (received == BACKLOG)
			rcs_wait_counter_min(sock, "req_held", CONNS - BACKLOG);
		for (unsigned int i = 0; i < npending; i++)
			rcs_accept(pending[i], NULL, 0);
		npending = 0;
	}
	RCS_OK(rdma_destroy_id(lst));
	rcs_wait_counter(sock, "ids", 0);
	rcs_wait_counter(sock, "records", 0);
	rcs_quiet(ch, 1);
	rdma_destroy_event_channel(ch);
}

static void client(void *arg)
{
	static struct conn conn[CONNS];
	static struct rdma_cm_id *id[CONNS];
	struct rdma_event_channel *ch = rdma_create_event_channel();
	const char *sock = getenv("CMD_SOCKET");
	unsigned int up = 0, gone = 0;

	(void)arg;
	rcs_hear("listening");
	for (int i = 0; i < CONNS; i++) {
		id[i] = rcs_resolved_id(ch, &conn[i], 2, RCS_PORT);
		rcs_connect(id[i], NULL, 0);
	}
	while (up < CONNS) {
		struct rdma_cm_event *ev = rcs_next(ch);

		RCS_CHECK(ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE,
			  "connection %d: %s (status %d), not CONNECT_RESPONSE",
			  (int)((struct conn *)ev->id->context - conn),
			  rdma_event_str(ev->event), ev->status);
		step(ev->id->context, ev, FIRST);
		RCS_OK(rdma_establish(ev->id));
		RCS_OK(rdma_ack_cm_event(ev));
		up++;
	}
	/* The held REQs were MRAed: the MRAs came, and nothing told us. */
	rcs_wait_counter_min(sock, "mra_received", 1);
	for (int i = 0; i < CONNS; i++)
		RCS_OK(rdma_disconnect(id[i]));
	while (gone < CONNS) {
		struct rdma_cm_event *ev = rcs_next(ch);
		struct rdma_cm_id *cid = ev->id;
		bool exit = ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT;

		step(cid->context, ev,
		     exit ? RDMA_CM_EVENT_DISCONNECTED :
			    RDMA_CM_EVENT_CONNECT_RESPONSE);
		RCS_CHECK(exit || ev->event == RDMA_CM_EVENT_DISCONNECTED,
			  "%s while disconnecting", rdma_event_str(ev->event));
		RCS_OK(rdma_ack_cm_event(ev));
		if (exit) {
			RCS_OK(rdma_destroy_id(cid));
			gone++;
		}
	}
	rcs_wait_counter(sock, "ids", 0);
	rcs_wait_counter(sock, "records", 0);
	rcs_quiet(ch, 2);
	rdma_destroy_event_channel(ch);
}

static void t_backlog(void **state)
{
	(void)state;
	rcs_run(server, client, NULL);
}

static int group_setup(void **state)
{
	static const char *const b[] = { "--max-held", "256", NULL };

	(void)state;
	return rcs_setup("rc-backlog", 39, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_backlog),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
