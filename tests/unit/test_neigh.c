// SPDX-License-Identifier: MIT
/*
 * Neighbour resolution (daemon/neigh.h): the rtnetlink messages built and
 * parsed byte for byte, and the core's verdicts and per-destination queues
 * driven by a fake kernel and a fake clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "log.h"
#include "neigh.h"

/* ---- messages ---------------------------------------------------------- */

static struct neigh_dst dst4(void)
{
	struct neigh_dst d;

	memset(&d, 0, sizeof(d));
	d.ifindex = 7;
	d.family = AF_INET;
	inet_pton(AF_INET, "192.0.2.1", d.src);
	inet_pton(AF_INET, "192.0.2.2", d.dst);
	return d;
}

static void test_getroute_bytes(void **state)
{
	/*
	 * nlmsghdr (16) + rtmsg (12) + RTA_DST (8) + RTA_SRC (8) + RTA_OIF
	 * (8): 52 bytes, host order (netlink is native-endian).
	 */
	struct neigh_dst d = dst4();
	uint8_t buf[128];
	const struct nlmsghdr *h = (const void *)buf;
	const struct rtmsg *rt = NLMSG_DATA(h);
	const uint8_t *a = buf + 28;
	size_t n = neigh_nl_getroute(buf, sizeof(buf), 42, &d);
	uint32_t oif;

	(void)state;
	assert_int_equal(n, 52);
	assert_int_equal(h->nlmsg_len, 52);
	assert_int_equal(h->nlmsg_type, RTM_GETROUTE);
	assert_int_equal(h->nlmsg_flags, NLM_F_REQUEST);
	assert_int_equal(h->nlmsg_seq, 42);
	assert_int_equal(rt->rtm_family, AF_INET);
	assert_int_equal(rt->rtm_dst_len, 32);
	assert_int_equal(rt->rtm_src_len, 32);
	/* RTA_DST: len 8, type 1, 192.0.2.2 */
	assert_int_equal(a[0] | a[1] << 8, 8);
	assert_int_equal(a[2] | a[3] << 8, RTA_DST);
	assert_memory_equal(a + 4, "\xc0\x00\x02\x02", 4);
	assert_int_equal(a[10] | a[11] << 8, RTA_SRC);
	assert_memory_equal(a + 12, "\xc0\x00\x02\x01", 4);
	assert_int_equal(a[18] | a[19] << 8, RTA_OIF);
	memcpy(&oif, a + 20, 4);
	assert_int_equal(oif, 7);
	/* Too small a buffer: nothing. */
	assert_int_equal(neigh_nl_getroute(buf, 40, 1, &d), 0);
}

static void test_getneigh_use_bytes(void **state)
{
	uint8_t addr[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	uint8_t buf[128];
	const struct nlmsghdr *h = (const void *)buf;
	const struct ndmsg *nd = NLMSG_DATA(h);
	const uint8_t *a = buf + NLMSG_LENGTH(sizeof(*nd));
	size_t n;

	(void)state;
	/* nlmsghdr 16 + ndmsg 12 + NDA_DST 4+16: 48 */
	n = neigh_nl_getneigh(buf, sizeof(buf), 5, AF_INET6, 3, addr);
	assert_int_equal(n, 48);
	assert_int_equal(h->nlmsg_type, RTM_GETNEIGH);
	assert_int_equal(h->nlmsg_flags, NLM_F_REQUEST);
	assert_int_equal(nd->ndm_family, AF_INET6);
	assert_int_equal(nd->ndm_ifindex, 3);
	assert_int_equal(nd->ndm_flags, 0);
	assert_int_equal(a[0] | a[1] << 8, 20);
	assert_int_equal(a[2] | a[3] << 8, NDA_DST);
	assert_memory_equal(a + 4, addr, 16);

	n = neigh_nl_use(buf, sizeof(buf), 6, AF_INET6, 3, addr);
	assert_int_equal(n, 48);
	assert_int_equal(h->nlmsg_type, RTM_NEWNEIGH);
	assert_int_equal(h->nlmsg_flags,
			 NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK);
	assert_int_equal(nd->ndm_flags, NTF_USE);
	assert_int_equal(nd->ndm_state, 0);
}

/* An answer as the kernel would write it. */
static size_t mk_route(uint8_t *buf, uint32_t seq, uint8_t type, int oif,
		       const char *gw)
{
	struct nlmsghdr *h = (void *)buf;
	struct rtmsg *rt = NLMSG_DATA(h);
	struct rtattr *a;
	uint32_t o = (uint32_t)oif;

	memset(buf, 0, 256);
	h->nlmsg_type = RTM_NEWROUTE;
	h->nlmsg_seq = seq;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	rt->rtm_family = AF_INET;
	rt->rtm_type = type;
	a = (void *)(buf + h->nlmsg_len);
	a->rta_type = RTA_OIF;
	a->rta_len = RTA_LENGTH(4);
	memcpy(RTA_DATA(a), &o, 4);
	h->nlmsg_len += RTA_SPACE(4);
	if (gw) {
		a = (void *)(buf + h->nlmsg_len);
		a->rta_type = RTA_GATEWAY;
		a->rta_len = RTA_LENGTH(4);
		inet_pton(AF_INET, gw, RTA_DATA(a));
		h->nlmsg_len += RTA_SPACE(4);
	}
	return h->nlmsg_len;
}

static void test_parse_route(void **state)
{
	uint8_t buf[512], dst[16] = { 192, 0, 2, 2 }, gw[4] = { 192, 0, 2, 9 };
	struct neigh_route r;
	struct nlmsghdr *h = (void *)buf;
	struct nlmsgerr *e = NLMSG_DATA(h);
	size_t n;

	(void)state;
	n = mk_route(buf, 9, RTN_UNICAST, 4, NULL);
	assert_int_equal(neigh_nl_parse_route(buf, n, 9, AF_INET, dst, &r), 0);
	assert_false(r.local);
	assert_int_equal(r.oif, 4);
	assert_memory_equal(r.nexthop, dst, 4);
	n = mk_route(buf, 9, RTN_UNICAST, 4, "192.0.2.9");
	assert_int_equal(neigh_nl_parse_route(buf, n, 9, AF_INET, dst, &r), 0);
	assert_memory_equal(r.nexthop, gw, 4);
	n = mk_route(buf, 9, RTN_LOCAL, 1, NULL);
	assert_int_equal(neigh_nl_parse_route(buf, n, 9, AF_INET, dst, &r), 0);
	assert_true(r.local);
	n = mk_route(buf, 9, RTN_UNREACHABLE, 0, NULL);
	assert_int_equal(neigh_nl_parse_route(buf, n, 9, AF_INET, dst, &r),
			 -ENETUNREACH);
	/* Someone else's answer: not ours. */
	n = mk_route(buf, 8, RTN_UNICAST, 4, NULL);
	assert_int_equal(neigh_nl_parse_route(buf, n, 9, AF_INET, dst, &r),
			 -ENOMSG);
	/* The kernel's error. */
	memset(buf, 0, sizeof(buf));
	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_seq = 9;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	e->error = -ENETUNREACH;
	assert_int_equal(
		neigh_nl_parse_route(buf, h->nlmsg_len, 9, AF_INET, dst, &r),
		-ENETUNREACH);
	/* Truncated: not an answer. */
	assert_int_equal(neigh_nl_parse_route(buf, 10, 9, AF_INET, dst, &r),
			 -ENOMSG);
}

static size_t mk_neigh(uint8_t *buf, uint16_t type, uint32_t seq, int family,
		       int ifindex, const uint8_t *addr, uint16_t state)
{
	struct nlmsghdr *h = (void *)buf;
	struct ndmsg *nd = NLMSG_DATA(h);
	struct rtattr *a;
	size_t alen = family == AF_INET ? 4 : 16;

	memset(buf, 0, 256);
	h->nlmsg_type = type;
	h->nlmsg_seq = seq;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	nd->ndm_family = (uint8_t)family;
	nd->ndm_ifindex = ifindex;
	nd->ndm_state = state;
	a = (void *)(buf + h->nlmsg_len);
	a->rta_type = NDA_DST;
	a->rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(RTA_DATA(a), addr, alen);
	h->nlmsg_len += RTA_SPACE(alen);
	return h->nlmsg_len;
}

static void test_parse_neigh(void **state)
{
	uint8_t buf[512], addr[16] = { 192, 0, 2, 2 }, got[16];
	int family, ifindex, st;
	bool deleted;
	size_t n;

	(void)state;
	n = mk_neigh(buf, RTM_NEWNEIGH, 3, AF_INET, 7, addr, NUD_REACHABLE);
	assert_int_equal(neigh_nl_parse_neigh(buf, n, 3, &st), 0);
	assert_int_equal(st, NUD_REACHABLE);
	assert_int_equal(neigh_nl_parse_event(buf, n, &family, &ifindex, got,
					      &st, &deleted),
			 0);
	assert_int_equal(family, AF_INET);
	assert_int_equal(ifindex, 7);
	assert_memory_equal(got, addr, 4);
	assert_false(deleted);
	n = mk_neigh(buf, RTM_DELNEIGH, 0, AF_INET, 7, addr, NUD_FAILED);
	assert_int_equal(neigh_nl_parse_event(buf, n, &family, &ifindex, got,
					      &st, &deleted),
			 0);
	assert_true(deleted);
	assert_int_equal(st, NUD_FAILED);
	/* Not a neighbour message. */
	n = mk_route(buf, 1, RTN_UNICAST, 1, NULL);
	assert_int_equal(neigh_nl_parse_event(buf, n, &family, &ifindex, got,
					      &st, &deleted),
			 -ENOMSG);
	/* The NUD_* values neigh.h restates are the kernel's. */
	assert_int_equal(NEIGH_NUD_VALID, NUD_PERMANENT | NUD_NOARP |
						  NUD_REACHABLE | NUD_PROBE |
						  NUD_STALE | NUD_DELAY);
	assert_int_equal(NEIGH_NUD_FAILED, NUD_FAILED);
	assert_int_equal(NEIGH_NUD_INCOMPLETE, NUD_INCOMPLETE);
}

/* ---- the core, on a fake kernel ---------------------------------------- */

struct fake {
	int route_err;
	bool local;
	int state; /* of every neighbour */
	int solicits;
	int routes;
	struct {
		uint32_t tag;
		int err;
		uint8_t first;
	} rel[NEIGH_QUEUE_MAX + 8];
	int nrel;
	uint64_t armed;
	int notices;
};

static struct fake fk;

static int f_route(void *ctx, const struct neigh_dst *d,
		   struct neigh_route *out)
{
	fk.routes++;
	if (fk.route_err)
		return fk.route_err;
	out->local = fk.local;
	out->oif = d->ifindex;
	memcpy(out->nexthop, d->dst, 16);
	return 0;
}

static int f_state(void *ctx, int family, int ifindex, const uint8_t a[16])
{
	return fk.state;
}

static int f_solicit(void *ctx, int family, int ifindex, const uint8_t a[16])
{
	fk.solicits++;
	return 0;
}

static void f_release(void *ctx, uint32_t tag, const void *item, size_t len,
		      int err)
{
	assert_true(fk.nrel < NEIGH_QUEUE_MAX + 8);
	fk.rel[fk.nrel].tag = tag;
	fk.rel[fk.nrel].err = err;
	fk.rel[fk.nrel].first = *(const uint8_t *)item;
	fk.nrel++;
}

static void f_arm(void *ctx, uint64_t at)
{
	fk.armed = at;
}

static void f_sink(void *ctx, enum log_level level, const char *line)
{
	if (level == LOG_LVL_NOTICE && strstr(line, "neighbour 192.0.2.2") &&
	    strstr(line, "unresolved"))
		fk.notices++;
}

static const struct neigh_ops f_ops = {
	.route = f_route,
	.state = f_state,
	.solicit = f_solicit,
	.release = f_release,
	.arm = f_arm,
};

static struct neigh *f_new(void)
{
	memset(&fk, 0, sizeof(fk));
	log_set_sink(f_sink, NULL);
	log_set_level(LOG_LVL_NOTICE);
	return neigh_core_new(&f_ops, NULL);
}

#define SEC 1000000000ull

static void test_core_local_and_valid(void **state)
{
	struct neigh *nb = f_new();
	struct neigh_dst d = dst4();
	uint8_t item = 1;

	(void)state;
	/* Loopback: a local route, sent at once, asked once per period. */
	fk.local = true;
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 0), 0);
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 10), 0);
	assert_int_equal(fk.routes, 1);
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, NEIGH_FRESH_NS), 0);
	assert_int_equal(fk.routes, 2);
	assert_int_equal(neigh_counters(nb)->local, 3);
	/* A valid neighbour (STALE counts): at once too. */
	fk.local = false;
	fk.state = NUD_STALE;
	d.dst[3] = 3;
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 0), 0);
	assert_int_equal(neigh_counters(nb)->valid, 1);
	/* ... until an event says it went bad: asked again. */
	neigh_on_event(nb, AF_INET, 7, d.dst, NUD_FAILED, false, 5);
	fk.state = NUD_PERMANENT;
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 6), 0);
	assert_int_equal(fk.routes, 4);
	assert_int_equal(fk.solicits, 0);
	assert_int_equal(fk.nrel, 0);
	neigh_core_free(nb);
	log_set_sink(NULL, NULL);
}

static int unroutable_notices;

static void f_sink_route(void *ctx, enum log_level level, const char *line)
{
	if (level == LOG_LVL_NOTICE &&
	    strstr(line, "rxe1 port 1: no route to 192.0.2.4"))
		unroutable_notices++;
}

static void test_core_unroutable(void **state)
{
	struct neigh *nb = f_new();
	struct neigh_dst d = dst4();
	uint8_t item = 1;

	(void)state;
	unroutable_notices = 0;
	log_set_sink(f_sink_route, NULL);
	snprintf(d.label, sizeof(d.label), "rxe1 port 1");
	fk.route_err = -ENETUNREACH;
	d.dst[3] = 4;
	/*
	 * No route: held, not failed inside the call (the engine's send
	 * callback must not be called back), and the timer asked for at
	 * once.
	 */
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 3, 100), NEIGH_HELD);
	assert_int_equal(fk.nrel, 0);
	assert_true(fk.armed <= 100);
	assert_int_equal(neigh_pending(nb), 0);
	assert_int_equal(fk.solicits, 0);
	/* The loop's next turn: failed with the route's error. */
	neigh_run_timers(nb, 101);
	assert_int_equal(fk.nrel, 1);
	assert_int_equal(fk.rel[0].err, -ENETUNREACH);
	assert_int_equal(fk.rel[0].tag, 3);
	assert_true(fk.armed == NEIGH_NEVER);
	/* Retransmissions and other connects within the period fail the
	 * same way without asking again, and without another line. */
	item = 2;
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 4, 200), NEIGH_HELD);
	assert_true(fk.armed <= 200);
	neigh_run_timers(nb, 201);
	assert_int_equal(fk.nrel, 2);
	assert_int_equal(fk.rel[1].err, -ENETUNREACH);
	assert_int_equal(fk.rel[1].first, 2);
	assert_int_equal(fk.routes, 1);
	assert_int_equal(unroutable_notices, 1);
	assert_int_equal(neigh_counters(nb)->unroutable, 1);
	/* After it, asked again: a route that came back is used. */
	fk.route_err = 0;
	fk.local = true;
	assert_int_equal(
		neigh_submit(nb, &d, &item, 1, 4, 100 + NEIGH_FRESH_NS), 0);
	assert_int_equal(fk.routes, 2);
	assert_int_equal(fk.nrel, 2);
	neigh_core_free(nb);
	log_set_sink(NULL, NULL);
}

static void test_core_resolved_in_order(void **state)
{
	struct neigh *nb = f_new();
	struct neigh_dst d = dst4();
	uint8_t item;

	(void)state;
	fk.state = 0; /* no entry */
	for (item = 1; item <= 3; item++)
		assert_int_equal(neigh_submit(nb, &d, &item, 1, item, item),
				 NEIGH_HELD);
	/* One resolution, one kick, however many MADs wait. */
	assert_int_equal(fk.solicits, 1);
	assert_int_equal(fk.routes, 1);
	assert_int_equal(neigh_pending(nb), 1);
	assert_true(fk.armed == 1 + NEIGH_CAP_NS);
	/* INCOMPLETE: still waiting; another neighbour: not ours. */
	neigh_on_event(nb, AF_INET, 7, d.dst, NUD_INCOMPLETE, false, 10);
	d.dst[3] = 9;
	neigh_on_event(nb, AF_INET, 7, d.dst, NUD_REACHABLE, false, 10);
	d.dst[3] = 2;
	neigh_on_event(nb, AF_INET, 8, d.dst, NUD_REACHABLE, false, 10);
	assert_int_equal(fk.nrel, 0);
	/* Valid: released in order, err 0; then sends go at once. */
	neigh_on_event(nb, AF_INET, 7, d.dst, NUD_REACHABLE, false, 20);
	assert_int_equal(fk.nrel, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fk.rel[i].err, 0);
		assert_int_equal(fk.rel[i].first, i + 1);
		assert_int_equal(fk.rel[i].tag, i + 1);
	}
	assert_int_equal(neigh_pending(nb), 0);
	assert_true(fk.armed == NEIGH_NEVER);
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 30), 0);
	assert_int_equal(neigh_counters(nb)->resolved, 1);
	assert_int_equal(neigh_counters(nb)->released, 3);
	neigh_core_free(nb);
	log_set_sink(NULL, NULL);
}

static void test_core_failed(void **state)
{
	struct neigh *nb = f_new();
	struct neigh_dst d = dst4(), d6;
	uint8_t item = 1;

	(void)state;
	snprintf(d.label, sizeof(d.label), "rxe1 port 1");
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 0), NEIGH_HELD);
	item = 2;
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, SEC), NEIGH_HELD);
	/* The kernel gives up: every MAD fails, one notice line. */
	neigh_on_event(nb, AF_INET, 7, d.dst, NUD_FAILED, false, 3 * SEC);
	assert_int_equal(fk.nrel, 2);
	assert_int_equal(fk.rel[0].err, -EHOSTUNREACH);
	assert_int_equal(fk.rel[0].first, 1);
	assert_int_equal(fk.rel[1].err, -EHOSTUNREACH);
	assert_int_equal(fk.rel[1].first, 2);
	assert_int_equal(fk.notices, 1);
	assert_int_equal(neigh_counters(nb)->failed, 1);
	assert_int_equal(neigh_pending(nb), 0);
	/* A new send starts over. */
	assert_int_equal(neigh_submit(nb, &d, &item, 1, 0, 4 * SEC),
			 NEIGH_HELD);
	assert_int_equal(fk.solicits, 2);
	/* No verdict at all: the cap fails it, once. */
	neigh_run_timers(nb, 4 * SEC + NEIGH_CAP_NS - 1);
	assert_int_equal(fk.nrel, 2);
	neigh_run_timers(nb, 4 * SEC + NEIGH_CAP_NS);
	assert_int_equal(fk.nrel, 3);
	assert_int_equal(fk.rel[2].err, -EHOSTUNREACH);
	assert_int_equal(fk.notices, 2);
	neigh_run_timers(nb, 20 * SEC);
	assert_int_equal(fk.nrel, 3);

	/* The queue is bounded; the tag of a dead port fails alone. */
	d6 = d;
	d6.dst[3] = 77;
	for (int i = 0; i < NEIGH_QUEUE_MAX; i++)
		assert_int_equal(neigh_submit(nb, &d6, &item, 1, i & 1, 0),
				 NEIGH_HELD);
	assert_int_equal(neigh_submit(nb, &d6, &item, 1, 0, 0), -ENOBUFS);
	fk.nrel = 0;
	neigh_fail_tag(nb, 1, -ENETDOWN);
	assert_int_equal(fk.nrel, NEIGH_QUEUE_MAX / 2);
	assert_int_equal(fk.rel[0].err, -ENETDOWN);
	assert_int_equal(neigh_submit(nb, &d6, &item, 1, 0, 0), NEIGH_HELD);
	assert_int_equal(neigh_submit(nb, &d6, &item, NEIGH_ITEM_MAX + 1, 0, 0),
			 -EMSGSIZE);
	/* Freed with MADs held: no callback. */
	fk.nrel = 0;
	neigh_core_free(nb);
	assert_int_equal(fk.nrel, 0);
	log_set_sink(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getroute_bytes),
		cmocka_unit_test(test_getneigh_use_bytes),
		cmocka_unit_test(test_parse_route),
		cmocka_unit_test(test_parse_neigh),
		cmocka_unit_test(test_core_local_and_valid),
		cmocka_unit_test(test_core_unroutable),
		cmocka_unit_test(test_core_resolved_in_order),
		cmocka_unit_test(test_core_failed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
