// SPDX-License-Identifier: MIT
/*
 * Event channels: several in one process, each delivering its own ids'
 * events only; rdma_migrate_id() moving an id, with its undelivered
 * events in their order, to another channel (a server's new connection
 * to a channel of its own before the accept, as many servers do); and
 * synchronous ids (no channel), as librdmacm runs them: rdma_getaddrinfo
 * and rdma_create_ep on the client, rdma_get_request and rdma_accept on
 * a synchronous listener, each call returning once its event is in
 * id->event, rdma_disconnect() too (librdmacm's waits for the next
 * event of the id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rcsim.h"

static const char req_pd[] = "sync REQ";
static const char rep_pd[] = "sync REP";

/* ---------------------------------------------------------------- */
/* Two connections, a channel each, on both sides */

static void server_two(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_event_channel *own[2];
	struct rdma_cm_id *lst, *id[2] = { NULL, NULL };

	(void)arg;
	lst = rcs_listener(ch, NULL, RCS_PORT, 8);
	rcs_tell("listening");
	for (int i = 0; i < 2; i++) {
		struct rdma_cm_event *ev =
			rcs_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
		/* The client's index of the connection, as both number it. */
		int n = *(const uint8_t *)ev->param.conn.private_data;

		RCS_CHECK(n < 2 && !id[n], "a REQ from connection %d", n);
		id[n] = ev->id;
		own[n] = rdma_create_event_channel();
		RCS_OK(rdma_migrate_id(id[n], own[n]));
		RCS_CHECK(id[n]->channel == own[n], "the id's channel is %p",
			  (void *)id[n]->channel);
		RCS_OK(rdma_ack_cm_event(ev));
		rcs_accept(id[n], NULL, 0);
	}
	/* In reverse, each on its channel only. */
	for (int i = 1; i >= 0; i--)
		rcs_expect_ack(own[i], RDMA_CM_EVENT_ESTABLISHED, id[i]);
	for (int i = 0; i < 2; i++) {
		rcs_hung_up(own[i], id[i]);
		rcs_quiet(own[i], 1);
		rdma_destroy_event_channel(own[i]);
	}
	RCS_OK(rdma_destroy_id(lst));
	rcs_quiet(ch, 1);
	rdma_destroy_event_channel(ch);
}

static void client_two(void *arg)
{
	struct rdma_event_channel *ch[2];
	struct rdma_cm_id *id[2];

	(void)arg;
	rcs_hear("listening");
	for (int i = 0; i < 2; i++) {
		ch[i] = rdma_create_event_channel();
		RCS_CHECK(ch[i], "rdma_create_event_channel: %s",
			  strerror(errno));
		uint8_t n = (uint8_t)i;

		id[i] = rcs_resolved_id(ch[i], NULL, 2, RCS_PORT);
		rcs_connect(id[i], &n, 1);
	}
	for (int i = 1; i >= 0; i--) {
		rcs_expect_ack(ch[i], RDMA_CM_EVENT_CONNECT_RESPONSE, id[i]);
		RCS_OK(rdma_establish(id[i]));
	}
	for (int i = 0; i < 2; i++) {
		rcs_hang_up(ch[i], id[i]);
		rcs_quiet(ch[i], 2);
		rdma_destroy_event_channel(ch[i]);
	}
}

static void t_two_channels(void **state)
{
	(void)state;
	rcs_run(server_two, client_two, NULL);
}

/* ---------------------------------------------------------------- */
/* Migrating an id with queued events */

static void migrate(void *arg)
{
	struct rdma_event_channel *c1 = rdma_create_event_channel();
	struct rdma_event_channel *c2 = rdma_create_event_channel();
	struct rdma_cm_id *a = NULL, *b = NULL;
	struct rdma_cm_event *ev;
	struct sockaddr_in dst;

	(void)arg;
	RCS_OK(rdma_create_id(c1, &a, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_create_id(c1, &b, NULL, RDMA_PS_TCP));
	/* Queued on c1: a's ADDR_RESOLVED, b's, a's ROUTE_RESOLVED. */
	RCS_OK(rdma_resolve_addr(a, NULL, rcs_addr(&dst, 2, RCS_PORT_NOBODY),
				 2000));
	RCS_OK(rdma_resolve_addr(b, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	RCS_OK(rdma_resolve_route(a, 2000));
	RCS_OK(rdma_migrate_id(a, c2));
	RCS_CHECK(a->channel == c2 && b->channel == c1,
		  "channels after the move: a %p, b %p", (void *)a->channel,
		  (void *)b->channel);
	rcs_expect_ack(c1, RDMA_CM_EVENT_ADDR_RESOLVED, b);
	rcs_expect_empty(c1);
	rcs_expect_ack(c2, RDMA_CM_EVENT_ADDR_RESOLVED, a);
	rcs_expect_ack(c2, RDMA_CM_EVENT_ROUTE_RESOLVED, a);
	rcs_expect_empty(c2);

	/* To the channel it is on: nothing moves. */
	RCS_OK(rdma_resolve_addr(b, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	RCS_OK(rdma_resolve_route(a, 2000));
	RCS_OK(rdma_resolve_route(a, 2000));
	RCS_OK(rdma_migrate_id(a, c2));
	rcs_expect_ack(c1, RDMA_CM_EVENT_ADDR_RESOLVED, b);
	rcs_expect_empty(c1);
	rcs_expect_ack(c2, RDMA_CM_EVENT_ROUTE_RESOLVED, a);
	rcs_expect_ack(c2, RDMA_CM_EVENT_ROUTE_RESOLVED, a);
	rcs_expect_empty(c2);

	/* All of c2's events leave with a: its fd must say so. Then the
	 * daemon's events follow a too: connect (nobody listens). */
	RCS_OK(rdma_resolve_route(a, 2000));
	RCS_OK(rdma_migrate_id(a, c1));
	rcs_expect_empty(c2);
	rcs_expect_ack(c1, RDMA_CM_EVENT_ROUTE_RESOLVED, a);
	rcs_connect(a, NULL, 0);
	ev = rcs_next(c1);
	RCS_CHECK(ev->event == RDMA_CM_EVENT_REJECTED && ev->id == a,
		  "got %s on c1, expected a's REJECTED",
		  rdma_event_str(ev->event));
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(a));
	RCS_OK(rdma_destroy_id(b));
	rcs_quiet(c1, 2);
	rcs_quiet(c2, 2);
	rdma_destroy_event_channel(c1);
	rdma_destroy_event_channel(c2);
}

static void t_migrate(void **state)
{
	(void)state;
	rcs_run_one(migrate, rcs_sock[1], NULL);
}

/* ---------------------------------------------------------------- */
/* Migrating a listener with queued CONNECT_REQUESTs */

static void server_moves(void *arg)
{
	struct rdma_event_channel *c1 = rdma_create_event_channel();
	struct rdma_event_channel *c2 = rdma_create_event_channel();
	struct rdma_cm_id *lst, *id[2];

	(void)arg;
	lst = rcs_listener(c1, &c1, RCS_PORT, 8);
	rcs_tell("listening");
	rcs_wait_requests(c1, 1, 2);
	RCS_OK(rdma_migrate_id(lst, c2));
	/* The requests went along; their new ids are on c2, as librdmacm
	 * makes them on the listener's channel when it delivers them. */
	for (int i = 0; i < 2; i++) {
		struct rdma_cm_event *ev =
			rcs_expect(c2, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);

		id[i] = ev->id;
		RCS_CHECK(ev->listen_id == lst && id[i]->channel == c2,
			  "request %d: listen_id %p, channel %p", i,
			  (void *)ev->listen_id, (void *)id[i]->channel);
		RCS_OK(rdma_ack_cm_event(ev));
		rcs_accept(id[i], NULL, 0);
	}
	rcs_expect_empty(c1);
	for (int i = 0; i < 2; i++) {
		struct rdma_cm_event *ev =
			rcs_expect(c2, RDMA_CM_EVENT_ESTABLISHED, NULL);

		RCS_CHECK(ev->id == id[0] || ev->id == id[1],
			  "ESTABLISHED for %p", (void *)ev->id);
		RCS_OK(rdma_ack_cm_event(ev));
	}
	rcs_tell("established");
	for (int i = 0; i < 2; i++)
		rcs_hang_up(c2, id[i]);
	RCS_OK(rdma_destroy_id(lst));
	rcs_quiet(c1, 1);
	rcs_quiet(c2, 1);
	rdma_destroy_event_channel(c1);
	rdma_destroy_event_channel(c2);
}

static void client_moved(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id[2];

	(void)arg;
	rcs_hear("listening");
	for (int i = 0; i < 2; i++) {
		id[i] = rcs_resolved_id(ch, NULL, 2, RCS_PORT);
		rcs_connect(id[i], NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		struct rdma_cm_event *ev =
			rcs_expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, NULL);

		RCS_OK(rdma_establish(ev->id));
		RCS_OK(rdma_ack_cm_event(ev));
	}
	rcs_hear("established");
	for (int i = 0; i < 2; i++)
		rcs_hung_up(ch, id[i]);
	rcs_quiet(ch, 2);
	rdma_destroy_event_channel(ch);
}

static void t_migrate_listener(void **state)
{
	(void)state;
	rcs_run(server_moves, client_moved, NULL);
}

/* ---------------------------------------------------------------- */
/* Synchronous ids */

/* The event a synchronous call left in id->event. */
static void sync_event(struct rdma_cm_id *id, enum rdma_cm_event_type type)
{
	RCS_CHECK(id->event && id->event->event == type && id->event->id == id,
		  "id->event is %s, expected %s",
		  id->event ? rdma_event_str(id->event->event) : "NULL",
		  rdma_event_str(type));
}

static struct rdma_addrinfo *addrinfo(const char *port, bool passive)
{
	struct rdma_addrinfo hints, *res = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	RCS_CHECK(rdma_getaddrinfo("127.0.2.1", port, &hints, &res) == 0 && res,
		  "rdma_getaddrinfo 127.0.2.1:%s: %s", port, strerror(errno));
	return res;
}

static void server_sync(void *arg)
{
	struct rdma_addrinfo *res = addrinfo("7471", true);
	struct rdma_cm_id *lst = NULL, *id = NULL;
	struct rdma_cm_event *ev;

	(void)arg;
	RCS_OK(rdma_create_ep(&lst, res, NULL, NULL));
	rdma_freeaddrinfo(res);
	RCS_OK(rdma_listen(lst, 8));
	rcs_tell("listening");
	RCS_OK(rdma_get_request(lst, &id));
	sync_event(id, RDMA_CM_EVENT_CONNECT_REQUEST);
	RCS_CHECK(!memcmp(id->event->param.conn.private_data, req_pd,
			  sizeof(req_pd)),
		  "the REQ's private data is not what was sent");
	RCS_CHECK(id->event->listen_id == lst, "listen_id is not the listener");
	RCS_CHECK(id->channel && id->channel != lst->channel,
		  "the new synchronous id has no channel of its own");
	rcs_accept(id, rep_pd, sizeof(rep_pd)); /* returns on ESTABLISHED */
	sync_event(id, RDMA_CM_EVENT_ESTABLISHED);
	/* The client disconnects; a synchronous program takes the event
	 * from the id's channel. */
	ev = rcs_expect(id->channel, RDMA_CM_EVENT_DISCONNECTED, id);
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_disconnect(id));
	sync_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	rdma_destroy_ep(id);
	rdma_destroy_ep(lst);
}

static void client_sync(void *arg)
{
	struct rdma_addrinfo *res = addrinfo("7472", false);
	struct rdma_conn_param p =
		rcs_param(RCS_CLIENT_QPN, req_pd, sizeof(req_pd));
	struct rdma_cm_id *id = NULL;

	(void)arg;
	/* Nobody listens on 7472: rdma_connect fails as the call. */
	RCS_OK(rdma_create_ep(&id, res, NULL, NULL));
	rdma_freeaddrinfo(res);
	RCS_FAILS(rdma_connect(id, &p), ECONNREFUSED);
	sync_event(id, RDMA_CM_EVENT_REJECTED);
	RCS_CHECK(id->event->status == 8, "REJECTED %d", id->event->status);
	rdma_destroy_ep(id);

	rcs_hear("listening");
	res = addrinfo("7471", false);
	RCS_OK(rdma_create_ep(&id, res, NULL, NULL));
	rdma_freeaddrinfo(res);
	RCS_CHECK(id->channel, "a synchronous id without its channel");
	p.qp_num++;
	RCS_OK(rdma_connect(id, &p));
	sync_event(id, RDMA_CM_EVENT_CONNECT_RESPONSE);
	RCS_CHECK(!memcmp(id->event->param.conn.private_data, rep_pd,
			  sizeof(rep_pd)),
		  "the REP's private data is not what was sent");
	RCS_OK(rdma_establish(id));
	RCS_OK(rdma_disconnect(id)); /* returns on DISCONNECTED */
	sync_event(id, RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_ep(id);
}

static void t_sync(void **state)
{
	(void)state;
	rcs_run(server_sync, client_sync, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-channels", 37, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_two_channels),
		cmocka_unit_test(t_migrate),
		cmocka_unit_test(t_migrate_listener),
		cmocka_unit_test(t_sync),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
