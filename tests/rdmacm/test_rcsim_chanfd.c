// SPDX-License-Identifier: MIT
/*
 * The event channel's fd, as an application's own poll() loop uses it:
 * readable exactly while rdma_get_cm_event() would return at once. With
 * O_NONBLOCK set on channel->fd, rdma_get_cm_event() on an empty channel
 * fails with EAGAIN (librdmacm's read() on the fd does the same).
 *
 * "Would return at once" is checked where nothing else can change the
 * queue: locally made events (address and route resolution) are queued
 * by the call itself, and when the queue holds events poll() must say so
 * and each rdma_get_cm_event() must succeed, in blocking and in
 * non-blocking mode, until the last; then not readable, EAGAIN. Daemon
 * events arrive at any time, so for them both sides run a poll() loop on
 * an O_NONBLOCK channel: whenever poll() says readable, the next
 * rdma_get_cm_event() must return an event, never EAGAIN.
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rcsim.h"

static bool readable(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int r = poll(&p, 1, 0);

	RCS_CHECK(r >= 0, "poll: %s", strerror(errno));
	return r == 1 && (p.revents & POLLIN);
}

/* The next event, taken at once: the fd says one is queued. */
static struct rdma_cm_event *take(struct rdma_event_channel *ch,
				  enum rdma_cm_event_type type,
				  struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev = NULL;

	RCS_CHECK(readable(ch), "%s queued, but the fd is not readable",
		  rdma_event_str(type));
	RCS_OK(rdma_get_cm_event(ch, &ev));
	RCS_CHECK(ev->event == type && ev->id == id, "got %s, expected %s",
		  rdma_event_str(ev->event), rdma_event_str(type));
	return ev;
}

/* Two events queued by the calls, taken one by one; then empty. */
static void two_local(struct rdma_event_channel *ch, bool nonblock)
{
	struct rdma_cm_event *a, *r;
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in dst;

	rcs_nonblock(ch, nonblock);
	RCS_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_resolve_addr(id, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	RCS_OK(rdma_resolve_route(id, 2000));
	a = take(ch, RDMA_CM_EVENT_ADDR_RESOLVED, id);
	/* One still queued; holding the other changes nothing. */
	r = take(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id);
	RCS_CHECK(!readable(ch), "readable with both events taken");
	RCS_OK(rdma_ack_cm_event(r));
	RCS_OK(rdma_ack_cm_event(a));
	RCS_CHECK(!readable(ch), "readable after the acks");
	rcs_expect_empty(ch);
	RCS_OK(rdma_destroy_id(id));
}

static void local(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in dst;

	(void)arg;
	rcs_expect_empty(ch); /* a new channel */
	two_local(ch, false);
	two_local(ch, true);
	rcs_nonblock(ch, false);

	/* A destroyed id's queued event goes, and the fd says so. */
	RCS_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_resolve_addr(id, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	RCS_CHECK(readable(ch), "ADDR_RESOLVED queued, the fd not readable");
	RCS_OK(rdma_destroy_id(id));
	rcs_expect_empty(ch);
	rdma_destroy_event_channel(ch);
}

static void t_local(void **state)
{
	(void)state;
	rcs_run_one(local, rcs_sock[1], NULL);
}

/* ---------------------------------------------------------------- */

/*
 * The next event on an O_NONBLOCK channel, as an event loop gets it:
 * poll() until readable (RCS_WAIT_MS), then rdma_get_cm_event() must not
 * fail (an EAGAIN before poll() said readable is the loop's business).
 */
static struct rdma_cm_event *loop_next(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (rdma_get_cm_event(ch, &ev) == 0)
		return ev;
	RCS_CHECK(errno == EAGAIN, "rdma_get_cm_event: %s", strerror(errno));
	RCS_CHECK(poll(&p, 1, rcs_wait_ms) == 1, "no event within %d ms",
		  rcs_wait_ms);
	errno = 0;
	RCS_CHECK(rdma_get_cm_event(ch, &ev) == 0,
		  "poll() said readable, rdma_get_cm_event failed: %s",
		  strerror(errno));
	return ev;
}

static void loop_expect(struct rdma_event_channel *ch,
			enum rdma_cm_event_type type, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev = loop_next(ch);

	RCS_CHECK(ev->event == type && !ev->status && (!*id || ev->id == *id),
		  "got %s (status %d), expected %s", rdma_event_str(ev->event),
		  ev->status, rdma_event_str(type));
	*id = ev->id;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
		rcs_accept(*id, NULL, 0);
	if (type == RDMA_CM_EVENT_CONNECT_RESPONSE)
		RCS_OK(rdma_establish(*id));
	RCS_OK(rdma_ack_cm_event(ev));
}

static void server(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lst, *id = NULL;

	(void)arg;
	rcs_nonblock(ch, true);
	lst = rcs_listener(ch, NULL, RCS_PORT, 8);
	rcs_tell("listening");
	loop_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &id);
	loop_expect(ch, RDMA_CM_EVENT_ESTABLISHED, &id);
	loop_expect(ch, RDMA_CM_EVENT_DISCONNECTED, &id);
	RCS_OK(rdma_disconnect(id));
	loop_expect(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, &id);
	RCS_OK(rdma_destroy_id(id));
	RCS_OK(rdma_destroy_id(lst));
	rcs_quiet(ch, 1);
	rdma_destroy_event_channel(ch);
}

static void client(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;

	(void)arg;
	rcs_hear("listening");
	id = rcs_resolved_id(ch, NULL, 2, RCS_PORT);
	rcs_nonblock(ch, true);
	rcs_connect(id, NULL, 0);
	loop_expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, &id);
	RCS_OK(rdma_disconnect(id));
	loop_expect(ch, RDMA_CM_EVENT_DISCONNECTED, &id);
	loop_expect(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, &id);
	RCS_OK(rdma_destroy_id(id));
	rcs_quiet(ch, 2);
	rdma_destroy_event_channel(ch);
}

static void t_daemon_events(void **state)
{
	(void)state;
	rcs_run(server, client, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-chanfd", 36, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_local),
		cmocka_unit_test(t_daemon_events),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
