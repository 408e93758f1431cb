// SPDX-License-Identifier: MIT
/*
 * rdmacm/rc_addr.h and rdma_getaddrinfo: addresses and GIDs, the GID entry
 * rules on golden tables, the RTM_GETROUTE request and answer byte for byte,
 * then the real kernel: its routing table in a network namespace this test
 * builds (unreachable, prohibit, blackhole routes, a policy rule, a veth
 * pair that carries no RDMA GID), and the RDMA devices of the machine when
 * it has any (else those cases say so and check what they can).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netdb.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#include "rc_addr.h"

#ifndef RAI_SA
#define RAI_SA 0x00000010
#endif

static struct sockaddr_storage sa_of(const char *text, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	char host[64];
	char *pct;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return ss;
	}
	snprintf(host, sizeof(host), "%s", text);
	pct = strchr(host, '%');
	if (pct) {
		*pct++ = '\0';
		in6->sin6_scope_id = (uint32_t)strtoul(pct, NULL, 10);
	}
	assert_int_equal(inet_pton(AF_INET6, host, &in6->sin6_addr), 1);
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	return ss;
}

#define SA(ss) ((struct sockaddr *)&(ss))

static union ibv_gid gid_of(const char *text)
{
	union ibv_gid g;

	assert_int_equal(inet_pton(AF_INET6, text, g.raw), 1);
	return g;
}

/* ---- addresses and GIDs ------------------------------------------------ */

static void test_gid_v4_round_trip(void **state)
{
	struct sockaddr_storage a = sa_of("10.0.0.1", 7174), back;
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)&back;
	static const uint8_t want[16] = {
		[10] = 0xff, [11] = 0xff, 10, 0, 0, 1
	};
	union ibv_gid g;

	(void)state;
	assert_int_equal(rc_addr_to_gid(SA(a), &g), 0);
	assert_memory_equal(g.raw, want, 16);
	rc_gid_to_addr(&g, htons(7174), 5, &back);
	assert_int_equal(back.ss_family, AF_INET);
	assert_int_equal(in4->sin_addr.s_addr, htonl(0x0a000001));
	assert_int_equal(ntohs(in4->sin_port), 7174);
}

static void test_gid_v6_round_trip(void **state)
{
	struct sockaddr_storage a = sa_of("2001:db8::5", 1), back;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&back;
	union ibv_gid g, want = gid_of("2001:db8::5");

	(void)state;
	assert_int_equal(rc_addr_to_gid(SA(a), &g), 0);
	assert_memory_equal(g.raw, want.raw, 16);
	/* A global address has no scope, whatever the caller says. */
	rc_gid_to_addr(&g, htons(9), 4, &back);
	assert_int_equal(back.ss_family, AF_INET6);
	assert_memory_equal(&in6->sin6_addr, want.raw, 16);
	assert_int_equal(ntohs(in6->sin6_port), 9);
	assert_int_equal(in6->sin6_scope_id, 0);
}

static void test_gid_ll_scope(void **state)
{
	struct sockaddr_storage a = sa_of("fe80::1%3", 0), back;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&back;
	union ibv_gid g;

	(void)state;
	assert_int_equal(rc_addr_to_gid(SA(a), &g), 0);
	assert_memory_equal(g.raw, gid_of("fe80::1").raw, 16);
	rc_gid_to_addr(&g, 0, 3, &back);
	assert_int_equal(back.ss_family, AF_INET6);
	assert_int_equal(in6->sin6_scope_id, 3);
	assert_memory_equal(&in6->sin6_addr, g.raw, 16);
}

static void test_gid_bad_family(void **state)
{
	struct sockaddr_storage a;
	union ibv_gid g;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.ss_family = AF_UNIX;
	assert_int_equal(rc_addr_to_gid(SA(a), &g), -EAFNOSUPPORT);
	a.ss_family = AF_IB;
	assert_int_equal(rc_addr_to_gid(SA(a), &g), -EAFNOSUPPORT);
	assert_int_equal(rc_addr_to_gid(NULL, &g), -EINVAL);
}

static void test_addr_len(void **state)
{
	struct sockaddr_storage a = sa_of("10.0.0.1", 0),
				b = sa_of("fe80::1%2", 0), c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(rc_addr_len(SA(a)), sizeof(struct sockaddr_in));
	assert_int_equal(rc_addr_len(SA(b)), sizeof(struct sockaddr_in6));
	c.ss_family = AF_IB;
	assert_int_equal(rc_addr_len(SA(c)), sizeof(struct sockaddr_ib));
	c.ss_family = AF_UNIX;
	assert_int_equal(rc_addr_len(SA(c)), 0);
	assert_int_equal(rc_addr_len(NULL), 0);
}

static void test_addr_any(void **state)
{
	struct sockaddr_storage a4 = sa_of("0.0.0.0", 5),
				l4 = sa_of("127.0.0.1", 0), a6 = sa_of("::", 0),
				l6 = sa_of("::1", 0), ib;
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&ib;

	(void)state;
	assert_true(rc_addr_any(SA(a4)));
	assert_false(rc_addr_any(SA(l4)));
	assert_true(rc_addr_any(SA(a6)));
	assert_false(rc_addr_any(SA(l6)));
	memset(&ib, 0, sizeof(ib));
	sib->sib_family = AF_IB;
	assert_true(rc_addr_any(SA(ib)));
	sib->sib_addr.sib_raw[15] = 1;
	assert_false(rc_addr_any(SA(ib)));
	ib.ss_family = AF_UNIX;
	assert_false(rc_addr_any(SA(ib)));
	assert_false(rc_addr_any(NULL));
}

static void test_addr_str(void **state)
{
	struct sockaddr_storage a = sa_of("10.0.0.1", 7174),
				b = sa_of("2001:db8::1", 0),
				c = sa_of("fe80::1%1", 0);
	char buf[80], small[5];

	(void)state;
	assert_string_equal(rc_addr_str(SA(a), buf, sizeof(buf)),
			    "10.0.0.1:7174");
	assert_string_equal(rc_addr_str(SA(b), buf, sizeof(buf)),
			    "[2001:db8::1]:0");
	/* Index 1 is lo in every network namespace. */
	assert_string_equal(rc_addr_str(SA(c), buf, sizeof(buf)),
			    "[fe80::1%lo]:0");
	assert_string_equal(rc_addr_str(SA(a), small, sizeof(small)), "10.0");
	assert_string_equal(rc_addr_str(NULL, buf, sizeof(buf)), "(none)");
}

/* ---- which GID entry: rc_addr_pick over golden tables ------------------ */

/* A GID table entry of port 1: index, type, netdev, then the GID. */
#define E(idx, type, ndev, ...)                                                \
	{                                                                      \
		.gid = __VA_ARGS__, .gid_index = idx, .port_num = 1,           \
		.gid_type = IBV_GID_TYPE_##type, .ndev_ifindex = ndev          \
	}

static void test_pick(void **state)
{
	struct ibv_gid_entry tab[300];
	union ibv_gid v4a = gid_of("::ffff:10.0.0.1"),
		      v4b = gid_of("::ffff:10.0.0.9"),
		      v4c = gid_of("::ffff:10.0.0.7"), ll = gid_of("fe80::a"),
		      amb = gid_of("fe80::b"), g6 = gid_of("2001:db8::1"),
		      nowhere = gid_of("::ffff:10.9.9.9");
	size_t n = 0;

	(void)state;
	memset(tab, 0, sizeof(tab));
	/* The default GIDs, v1 then v2, as the kernel lays them out. */
	tab[n++] = (struct ibv_gid_entry)E(0, ROCE_V1, 3, ll);
	tab[n++] = (struct ibv_gid_entry)E(1, ROCE_V2, 3, ll);
	tab[n++] = (struct ibv_gid_entry)E(2, ROCE_V1, 3, v4a);
	tab[n++] = (struct ibv_gid_entry)E(3, ROCE_V2, 3, v4a);
	/* An IB entry equal to a RoCE address is not a RoCE GID. */
	tab[n++] = (struct ibv_gid_entry)E(4, IB, 0, g6);
	/* v2 listed first, then v1 of the same address. */
	tab[n++] = (struct ibv_gid_entry)E(5, ROCE_V2, 3, g6);
	tab[n++] = (struct ibv_gid_entry)E(6, ROCE_V1, 3, g6);
	/* An address with only a v1 GID. */
	tab[n++] = (struct ibv_gid_entry)E(7, ROCE_V1, 3, v4c);
	/* One link-local address on two netdevs. */
	tab[n++] = (struct ibv_gid_entry)E(8, ROCE_V2, 5, amb);
	tab[n++] = (struct ibv_gid_entry)E(9, ROCE_V2, 6, amb);
	/* Far down a large table: the whole table is searched. */
	while (n < 250) {
		tab[n] = (struct ibv_gid_entry)E((uint32_t)n, ROCE_V2, 4,
						 gid_of("::ffff:10.1.0.0"));
		tab[n].gid.raw[15] = (uint8_t)n;
		n++;
	}
	tab[n++] = (struct ibv_gid_entry)E(250, ROCE_V2, 4, v4b);

	assert_int_equal(rc_addr_pick(tab, n, &ll, 0), 1);
	assert_int_equal(rc_addr_pick(tab, n, &ll, 3), 1);
	assert_int_equal(rc_addr_pick(tab, n, &v4a, 0), 3);
	assert_int_equal(rc_addr_pick(tab, n, &g6, 0), 5);
	assert_int_equal(rc_addr_pick(tab, n, &v4c, 0), 7);
	assert_int_equal(rc_addr_pick(tab, n, &v4b, 0), 250);
	assert_int_equal(rc_addr_pick(tab, n, &v4b, 4), 250);
	/* On another netdev than the one asked for. */
	assert_int_equal(rc_addr_pick(tab, n, &v4b, 3), -EADDRNOTAVAIL);
	assert_int_equal(rc_addr_pick(tab, n, &nowhere, 0), -EADDRNOTAVAIL);
	/* Ambiguous without an interface; either one when named. */
	assert_int_equal(rc_addr_pick(tab, n, &amb, 0), -EINVAL);
	assert_int_equal(rc_addr_pick(tab, n, &amb, 5), 8);
	assert_int_equal(rc_addr_pick(tab, n, &amb, 6), 9);
	assert_int_equal(rc_addr_pick(tab, 0, &ll, 0), -EADDRNOTAVAIL);
}

/*
 * Two devices' tables: rxe0 on netdev 3 (10.0.0.1), rxe1 on netdev 4
 * (10.0.0.2 and 10.0.0.3), and a RoCE v1-only port on netdev 5.
 */
static const struct ibv_gid_entry two_devs[] = {
	E(0, ROCE_V1, 3, { .raw = { 0xfe, 0x80, [15] = 0x0a } }),
	E(1, ROCE_V2, 3, { .raw = { 0xfe, 0x80, [15] = 0x0a } }),
	E(2, ROCE_V1, 3, { .raw = { [10] = 0xff, 0xff, 10, 0, 0, 1 } }),
	E(3, ROCE_V2, 3, { .raw = { [10] = 0xff, 0xff, 10, 0, 0, 1 } }),
	E(2, ROCE_V2, 4, { .raw = { [10] = 0xff, 0xff, 10, 0, 0, 2 } }),
	E(3, ROCE_V2, 4, { .raw = { [10] = 0xff, 0xff, 10, 0, 0, 3 } }),
	E(1, ROCE_V1, 5, { .raw = { [10] = 0xff, 0xff, 10, 0, 1, 1 } }),
};

/* A destination, the kernel's answer for it, and rc_addr_route's pick. */
static const struct {
	const char *why, *dst;
	uint8_t type;
	int oif;
	const char *prefsrc;
	bool gateway;
	int want; /* an index of two_devs[], or -errno */
	uint32_t scope; /* of the source, when want is an IPv6 entry */
} route_cases[] = {
	{ "out of netdev 3 from 10.0.0.1", "10.0.0.9", RTN_UNICAST, 3,
	  "10.0.0.1", false, 3, 0 },
	{ "a rule sends it out of netdev 4, which lacks the source", "10.0.0.9",
	  RTN_UNICAST, 4, "10.0.0.1", false, -EADDRNOTAVAIL, 0 },
	{ "local: dst's own device, whatever lo says", "10.0.0.2", RTN_LOCAL, 1,
	  "10.0.0.2", false, 4, 0 },
	{ "local, another source on dst's netdev", "10.0.0.2", RTN_LOCAL, 1,
	  "10.0.0.3", false, 5, 0 },
	{ "local, a source off dst's netdev", "10.0.0.2", RTN_LOCAL, 1,
	  "10.0.0.1", false, -EADDRNOTAVAIL, 0 },
	{ "lo's own address", "127.0.0.1", RTN_LOCAL, 1, "127.0.0.1", false,
	  -EADDRNOTAVAIL, 0 },
	{ "through a router, RoCE v2", "10.9.0.1", RTN_UNICAST, 3, "10.0.0.1",
	  true, 3, 0 },
	{ "through a router, RoCE v1 only", "10.9.0.1", RTN_UNICAST, 5,
	  "10.0.1.1", true, -ENETUNREACH, 0 },
	{ "on link, RoCE v1 only", "10.0.1.9", RTN_UNICAST, 5, "10.0.1.1",
	  false, 6, 0 },
	{ "no source", "10.0.0.9", RTN_UNICAST, 3, NULL, false, -EADDRNOTAVAIL,
	  0 },
	{ "no interface", "10.0.0.9", RTN_UNICAST, 0, "10.0.0.1", false,
	  -ENETUNREACH, 0 },
	{ "a link-local peer: the link's link-local GID", "fe80::9%3",
	  RTN_UNICAST, 3, "fe80::a", false, 1, 3 },
	{ "a local link-local address on its link", "fe80::a%3", RTN_LOCAL, 1,
	  "fe80::a", false, 1, 0 },
	{ "a local link-local address on another link", "fe80::a%4", RTN_LOCAL,
	  1, "fe80::a", false, -EADDRNOTAVAIL, 0 },
};

static void test_route_pick(void **state)
{
	const size_t n = sizeof(two_devs) / sizeof(two_devs[0]);

	(void)state;
	for (size_t k = 0; k < sizeof(route_cases) / sizeof(route_cases[0]);
	     k++) {
		struct sockaddr_storage d = sa_of(route_cases[k].dst, 0), src;
		struct rc_route r;
		union ibv_gid sg;
		int got;

		memset(&r, 0, sizeof(r));
		r.type = route_cases[k].type;
		r.oif = route_cases[k].oif;
		r.gateway = route_cases[k].gateway;
		if (route_cases[k].prefsrc)
			r.prefsrc = sa_of(route_cases[k].prefsrc, 0);
		got = rc_addr_route_pick(two_devs, n, SA(d), &r, &src);
		if (got != route_cases[k].want)
			fail_msg("%s: got %d, want %d", route_cases[k].why, got,
				 route_cases[k].want);
		if (got < 0)
			continue;
		/* The source is the kernel's, and the entry is its GID. */
		assert_int_equal(rc_addr_to_gid(SA(src), &sg), 0);
		assert_memory_equal(sg.raw, two_devs[got].gid.raw, 16);
		if (src.ss_family == AF_INET6)
			assert_int_equal(
				((struct sockaddr_in6 *)&src)->sin6_scope_id,
				route_cases[k].scope);
	}
}

/* ---- RTM_GETROUTE byte for byte (netlink is host order: x86 here) ------ */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static void test_route_req_v4(void **state)
{
	static const uint8_t want[] = {
		/* nlmsghdr: len 60, RTM_GETROUTE, NLM_F_REQUEST, seq 7 */
		0x3c, 0, 0, 0, 0x1a, 0, 0x01, 0, 7, 0, 0, 0, 0, 0, 0, 0,
		/* rtmsg: AF_INET, dst_len 32, src_len 32, the rest 0 */
		2, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		/* RTA_DST 10.0.0.2 */
		8, 0, 1, 0, 10, 0, 0, 2,
		/* RTA_SRC 10.0.0.1 */
		8, 0, 2, 0, 10, 0, 0, 1,
		/* RTA_OIF 3 */
		8, 0, 4, 0, 3, 0, 0, 0,
		/* RTA_UID 0: asked as the kernel's rdma_cm asks */
		8, 0, 25, 0, 0, 0, 0, 0
	};
	struct sockaddr_storage d = sa_of("10.0.0.2", 7174),
				s = sa_of("10.0.0.1", 0);
	union {
		struct nlmsghdr h;
		uint8_t b[256];
	} u;

	(void)state;
	assert_int_equal(
		rc_addr_route_req(u.b, sizeof(u.b), 7, SA(d), SA(s), 3),
		sizeof(want));
	assert_memory_equal(u.b, want, sizeof(want));
	/* Too small for the attributes; too small for the header. */
	assert_int_equal(rc_addr_route_req(u.b, 40, 7, SA(d), SA(s), 3),
			 -ENOBUFS);
	assert_int_equal(rc_addr_route_req(u.b, 16, 7, SA(d), SA(s), 3),
			 -ENOBUFS);
}

static void test_route_req_v6(void **state)
{
	static const uint8_t want[] = {
		/* nlmsghdr: len 64, RTM_GETROUTE, NLM_F_REQUEST, seq 9 */
		0x40, 0, 0, 0, 0x1a, 0, 0x01, 0, 9, 0, 0, 0, 0, 0, 0, 0,
		/* rtmsg: AF_INET6, dst_len 128, no source */
		10, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		/* RTA_DST fe80::2 */
		20, 0, 1, 0, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		2,
		/* RTA_OIF 5 */
		8, 0, 4, 0, 5, 0, 0, 0,
		/* RTA_UID 0 */
		8, 0, 25, 0, 0, 0, 0, 0
	};
	struct sockaddr_storage d = sa_of("fe80::2%5", 0),
				s4 = sa_of("10.0.0.1", 0), bad;
	union {
		struct nlmsghdr h;
		uint8_t b[256];
	} u;

	(void)state;
	assert_int_equal(rc_addr_route_req(u.b, sizeof(u.b), 9, SA(d), NULL, 5),
			 sizeof(want));
	assert_memory_equal(u.b, want, sizeof(want));
	assert_int_equal(
		rc_addr_route_req(u.b, sizeof(u.b), 9, SA(d), SA(s4), 0),
		-EAFNOSUPPORT);
	memset(&bad, 0, sizeof(bad));
	bad.ss_family = AF_UNIX;
	assert_int_equal(
		rc_addr_route_req(u.b, sizeof(u.b), 9, SA(bad), NULL, 0),
		-EAFNOSUPPORT);
}

/*
 * The kernel's answer (Linux 6.18, captured) for 10.12.0.1 via 10.11.0.254
 * in a namespace laid out as test_route_netns's.
 */
static const uint8_t route_via_gw[] = {
	/* nlmsghdr: len 112, RTM_NEWROUTE, seq 7, the asker's port id */
	0x70, 0, 0, 0, 0x18, 0, 0, 0, 7, 0, 0, 0, 0x08, 0x4d, 0, 0,
	/* rtmsg: AF_INET, dst_len 32, table main, RTN_UNICAST, RTM_F_CLONED */
	2, 32, 0, 0, 254, 0, 0, 1, 0, 0x02, 0, 0,
	/* RTA_TABLE 254 */
	8, 0, 15, 0, 254, 0, 0, 0,
	/* RTA_DST 10.12.0.1 */
	8, 0, 1, 0, 10, 12, 0, 1,
	/* RTA_OIF 3 */
	8, 0, 4, 0, 3, 0, 0, 0,
	/* RTA_PREFSRC 10.11.0.1 */
	8, 0, 7, 0, 10, 11, 0, 1,
	/* RTA_GATEWAY 10.11.0.254 */
	8, 0, 5, 0, 10, 11, 0, 254,
	/* RTA_UID 0 */
	8, 0, 25, 0, 0, 0, 0, 0,
	/* RTA_CACHEINFO (clntref 2): skipped */
	36, 0, 12, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

static void test_route_parse(void **state)
{
	/* NLMSG_ERROR -ENETUNREACH (-101), the request's header capped. */
	static const uint8_t unreach[] = {
		0x24, 0, 0,    0, 2,	0,    0x00, 0x01, 7,	0, 0, 0,
		0,    0, 0,    0, 0x9b, 0xff, 0xff, 0xff, 0x3c, 0, 0, 0,
		0x1a, 0, 0x01, 0, 7,	0,    0,    0,	  0,	0, 0, 0
	};
	/* A local answer for ::1, out of lo (ifindex 1), abridged */
	static const uint8_t local6[] = {
		0x40, 0,   0, 0, 0x18, 0, 0, 0, 7, 0, 0,  0, 0, 0, 0, 0,
		10,   128, 0, 0, 255,  0, 0, 2, 0, 0, 0,  0, 8, 0, 4, 0,
		1,    0,   0, 0, 20,   0, 7, 0, 0, 0, 0,  0, 0, 0, 0, 0,
		0,    0,   0, 0, 0,    0, 0, 1, 8, 0, 25, 0, 0, 0, 0, 0
	};
	union {
		struct nlmsghdr h;
		uint8_t b[256];
	} u;
	const struct sockaddr_in *src;
	struct rc_route r;

	(void)state;
	assert_int_equal(rc_addr_route_parse(route_via_gw, sizeof(route_via_gw),
					     7, AF_INET, &r),
			 0);
	assert_int_equal(r.type, RTN_UNICAST);
	assert_int_equal(r.oif, 3);
	assert_true(r.gateway);
	src = (const struct sockaddr_in *)&r.prefsrc;
	assert_int_equal(src->sin_family, AF_INET);
	assert_int_equal(src->sin_addr.s_addr, htonl(0x0a0b0001));

	assert_int_equal(
		rc_addr_route_parse(local6, sizeof(local6), 7, AF_INET6, &r),
		0);
	assert_int_equal(r.type, RTN_LOCAL);
	assert_int_equal(r.oif, 1);
	assert_false(r.gateway);
	assert_int_equal(r.prefsrc.ss_family, AF_INET6);

	assert_int_equal(
		rc_addr_route_parse(unreach, sizeof(unreach), 7, AF_INET, &r),
		-ENETUNREACH);
	/* Another request's answer only; nothing at all. */
	assert_int_equal(rc_addr_route_parse(route_via_gw, sizeof(route_via_gw),
					     8, AF_INET, &r),
			 -EAGAIN);
	assert_int_equal(rc_addr_route_parse(u.b, 0, 7, AF_INET, &r), -EAGAIN);
	/* Cut short: the header says more than there is. */
	assert_int_equal(rc_addr_route_parse(route_via_gw, 60, 7, AF_INET, &r),
			 -EBADMSG);
	/* The wrong family for the question. */
	assert_int_equal(rc_addr_route_parse(route_via_gw, sizeof(route_via_gw),
					     7, AF_INET6, &r),
			 -EBADMSG);
	/* An attribute longer than its message. */
	memcpy(u.b, route_via_gw, sizeof(route_via_gw));
	u.b[28] = 200;
	assert_int_equal(
		rc_addr_route_parse(u.b, sizeof(route_via_gw), 7, AF_INET, &r),
		-EBADMSG);
	/* A PREFSRC of the wrong size. */
	memcpy(u.b, route_via_gw, sizeof(route_via_gw));
	u.b[52] = 6;
	assert_int_equal(
		rc_addr_route_parse(u.b, sizeof(route_via_gw), 7, AF_INET, &r),
		-EBADMSG);
	/* Unusable route types are their errors. */
	memcpy(u.b, route_via_gw, sizeof(route_via_gw));
	u.b[23] = RTN_UNREACHABLE;
	assert_int_equal(
		rc_addr_route_parse(u.b, sizeof(route_via_gw), 7, AF_INET, &r),
		-EHOSTUNREACH);
	u.b[23] = RTN_PROHIBIT;
	assert_int_equal(
		rc_addr_route_parse(u.b, sizeof(route_via_gw), 7, AF_INET, &r),
		-EACCES);
	u.b[23] = RTN_BLACKHOLE;
	assert_int_equal(
		rc_addr_route_parse(u.b, sizeof(route_via_gw), 7, AF_INET, &r),
		-EINVAL);
	/* An ACK (error 0) was not asked for. */
	memcpy(u.b, unreach, sizeof(unreach));
	memset(u.b + 16, 0, 4);
	assert_int_equal(
		rc_addr_route_parse(u.b, sizeof(unreach), 7, AF_INET, &r),
		-EBADMSG);
}
#endif

/* ---- rc_addr_route / rc_addr_local without a device -------------------- */

static void test_route_loopback_127(void **state)
{
	struct sockaddr_storage d = sa_of("127.0.0.1", 7174);
	struct rc_where w;
	struct rc_route r;
	union ibv_gid dgid;

	(void)state;
	/* The route exists (local, out of lo), and lo holds no GID. */
	assert_int_equal(rc_addr_route_lookup(SA(d), NULL, 0, &r), 0);
	assert_int_equal(r.type, RTN_LOCAL);
	assert_int_equal(rc_addr_route(NULL, 0, NULL, SA(d), &w, &dgid),
			 -EADDRNOTAVAIL);
}

static void test_route_bad_args(void **state)
{
	struct sockaddr_storage d4 = sa_of("10.0.0.2", 1),
				d6 = sa_of("2001:db8::2", 1),
				ll = sa_of("fe80::2", 1),
				any4 = sa_of("0.0.0.0", 1), other;
	struct rc_where w;
	union ibv_gid dgid;

	(void)state;
	memset(&other, 0, sizeof(other));
	other.ss_family = AF_UNIX;
	assert_int_equal(rc_addr_route(NULL, 0, NULL, NULL, &w, &dgid),
			 -EINVAL);
	assert_int_equal(rc_addr_route(NULL, 0, NULL, SA(other), &w, &dgid),
			 -EAFNOSUPPORT);
	other.ss_family = AF_IB;
	assert_int_equal(rc_addr_route(NULL, 0, NULL, SA(other), &w, &dgid),
			 -EAFNOSUPPORT);
	/* The id's family must be the destination's. */
	assert_int_equal(rc_addr_route(NULL, 0, SA(d4), SA(d6), &w, &dgid),
			 -EINVAL);
	/* A link-local destination needs its link. */
	assert_int_equal(rc_addr_route(NULL, 0, NULL, SA(ll), &w, &dgid),
			 -EINVAL);
	/* A pinned source must be bound first: no device holds it. */
	assert_int_equal(rc_addr_route(NULL, 0, SA(d4), SA(d4), &w, &dgid),
			 -EADDRNOTAVAIL);
	/* Loopback to a wildcard with no device. */
	assert_int_equal(rc_addr_route(NULL, 0, NULL, SA(any4), &w, &dgid),
			 -ENODEV);

	assert_int_equal(rc_addr_local(NULL, 0, SA(d4), &w), -EADDRNOTAVAIL);
	assert_int_equal(rc_addr_local(NULL, 0, SA(any4), &w), -EINVAL);
	assert_int_equal(rc_addr_local(NULL, 0, SA(other), &w), -EAFNOSUPPORT);
	assert_int_equal(rc_addr_local(NULL, 1, SA(d4), &w), -EINVAL);
}

/* ---- the kernel's routing table, in a namespace built here ------------- */

static int ns_checks, ns_failures;

#define NS_CHECK(cond)                                                         \
	do {                                                                   \
		ns_checks++;                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "netns: %s:%d: %s\n", __FILE__,        \
				__LINE__, #cond);                              \
			ns_failures++;                                         \
		}                                                              \
	} while (0)

static int ns_sh(const char *cmd)
{
	char line[256];

	snprintf(line, sizeof(line), "%s >/dev/null 2>&1", cmd);
	return system(line);
}

static bool ns_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

/*
 * A network namespace of our own: as root, or as root of a new user
 * namespace where that is allowed.
 */
static bool ns_enter(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (!unshare(CLONE_NEWNET))
		return true;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return false;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
	if (!ns_write("/proc/self/uid_map", map))
		return false;
	ns_write("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
	return ns_write("/proc/self/gid_map", map);
}

static int route_of(const char *dst)
{
	struct sockaddr_storage d = sa_of(dst, 4791);
	struct rc_where w;
	union ibv_gid dgid;

	return rc_addr_route(NULL, 0, NULL, SA(d), &w, &dgid);
}

static void ns_checks_v4(void)
{
	struct sockaddr_storage d, s;
	int v0 = (int)if_nametoindex("v0"), v1 = (int)if_nametoindex("v1");
	struct rc_route r;

	/* No route; the kernel's typed routes and a policy rule. */
	NS_CHECK(route_of("10.8.0.1") == -ENETUNREACH);
	NS_CHECK(route_of("10.5.0.1") == -EHOSTUNREACH);
	NS_CHECK(route_of("10.6.0.1") == -EACCES);
	NS_CHECK(route_of("10.7.0.1") == -EINVAL);
	NS_CHECK(route_of("10.9.0.1") == -EACCES);
	/* Local addresses: lo's, and v0's own (neither holds a GID). */
	NS_CHECK(route_of("127.0.0.1") == -EADDRNOTAVAIL);
	d = sa_of("10.11.0.1", 0);
	NS_CHECK(rc_addr_route_lookup(SA(d), NULL, 0, &r) == 0 &&
		 r.type == RTN_LOCAL);
	NS_CHECK(route_of("10.11.0.1") == -EADDRNOTAVAIL);
	if (!v0 || !v1) {
		fprintf(stderr, "netns: no veth here: veth cases left out\n");
		return;
	}
	/* A plain Ethernet link: a route, a source, no RDMA GID. */
	d = sa_of("10.11.0.2", 0);
	NS_CHECK(rc_addr_route_lookup(SA(d), NULL, 0, &r) == 0);
	NS_CHECK(r.type == RTN_UNICAST && r.oif == v0 && !r.gateway);
	NS_CHECK(r.prefsrc.ss_family == AF_INET &&
		 ((struct sockaddr_in *)&r.prefsrc)->sin_addr.s_addr ==
			 htonl(0x0a0b0001));
	NS_CHECK(route_of("10.11.0.2") == -EADDRNOTAVAIL);
	/* Through a gateway. */
	d = sa_of("10.12.0.1", 0);
	NS_CHECK(rc_addr_route_lookup(SA(d), NULL, 0, &r) == 0 && r.oif == v0 &&
		 r.gateway);
	/* Policy routing: a rule sends 10.13/16 to table 100, out of v1. */
	d = sa_of("10.13.0.1", 0);
	NS_CHECK(rc_addr_route_lookup(SA(d), NULL, 0, &r) == 0 && r.oif == v1);
	/* A pinned interface: IPv4 then takes an unrouted dst as on-link. */
	d = sa_of("10.8.0.1", 0);
	s = sa_of("10.11.0.1", 0);
	NS_CHECK(rc_addr_route_lookup(SA(d), SA(s), v0, &r) == 0 &&
		 r.oif == v0);
	/* A pinned source no device holds is refused before any lookup. */
	NS_CHECK(rc_addr_route(NULL, 0, SA(s), SA(d), &(struct rc_where){ 0 },
			       &(union ibv_gid){ 0 }) == -EADDRNOTAVAIL);
}

/*
 * A new link's IPv6 routes and link-local address come with its carrier,
 * which the kernel reports from a work queue: wait for them (3 s at most).
 */
static void ns_wait_v6(const char *dst, int oif)
{
	struct sockaddr_storage d = sa_of(dst, 0);
	struct rc_route r;

	for (int i = 0; i < 30; i++) {
		if (!rc_addr_route_lookup(SA(d), NULL, oif, &r) &&
		    r.prefsrc.ss_family == AF_INET6)
			return;
		usleep(100 * 1000);
	}
}

static void ns_checks_v6(void)
{
	struct sockaddr_storage d;
	int v0 = (int)if_nametoindex("v0");
	char ll[64];
	struct rc_route r;

	NS_CHECK(route_of("2001:db8:99::1") == -ENETUNREACH);
	NS_CHECK(route_of("::1") == -EADDRNOTAVAIL);
	if (!v0)
		return;
	snprintf(ll, sizeof(ll), "fe80::5%%%d", v0);
	ns_wait_v6("2001:db8:11::2", 0);
	ns_wait_v6(ll, v0);
	NS_CHECK(route_of("2001:db8:11::2") == -EADDRNOTAVAIL);
	/*
	 * A link-local destination: its scope is the link, the source that
	 * link's link-local address.
	 */
	d = sa_of(ll, 0);
	NS_CHECK(rc_addr_route_lookup(SA(d), NULL, v0, &r) == 0 && r.oif == v0);
	NS_CHECK(r.prefsrc.ss_family == AF_INET6 &&
		 IN6_IS_ADDR_LINKLOCAL(
			 &((struct sockaddr_in6 *)&r.prefsrc)->sin6_addr));
	NS_CHECK(route_of(ll) == -EADDRNOTAVAIL);
	NS_CHECK(route_of("fe80::5") == -EINVAL);
}

static int ns_child(void)
{
	bool v6;

	if (!ns_enter()) {
		fprintf(stderr, "netns: cannot make a network namespace\n");
		return 77;
	}
	if (ns_sh("ip link set lo up")) {
		fprintf(stderr, "netns: no usable ip(8)\n");
		return 77;
	}
	if (!ns_sh("ip link add v0 type veth peer name v1")) {
		/* No DAD: v0's link-local address is usable at once. */
		ns_write("/proc/sys/net/ipv6/conf/v0/accept_dad", "0");
		ns_sh("ip addr add 10.11.0.1/24 dev v0");
		ns_sh("ip -6 addr add 2001:db8:11::1/64 dev v0 nodad");
		ns_sh("ip link set v0 up");
		ns_sh("ip link set v1 up");
		ns_sh("ip route add 10.12.0.0/16 via 10.11.0.254");
		ns_sh("ip route add 10.13.0.0/16 dev v1 table 100");
		ns_sh("ip rule add to 10.13.0.0/16 table 100");
	} else {
		ns_sh("ip addr add 10.11.0.1/24 dev lo");
	}
	ns_sh("ip route add unreachable 10.5.0.0/16");
	ns_sh("ip route add prohibit 10.6.0.0/16");
	ns_sh("ip route add blackhole 10.7.0.0/16");
	ns_sh("ip rule add to 10.9.0.0/16 prohibit");
	ns_checks_v4();
	v6 = !access("/proc/sys/net/ipv6/conf/lo/disable_ipv6", F_OK);
	if (v6)
		ns_checks_v6();
	else
		fprintf(stderr, "netns: no IPv6 here: IPv6 cases left out\n");
	fprintf(stderr, "netns: %d checks, %d failed\n", ns_checks,
		ns_failures);
	return ns_failures ? 1 : 0;
}

static void test_route_netns(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(ns_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("note: no network namespace or ip(8) here: "
			      "the routing-table cases did not run\n");
		return;
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- the machine's RDMA devices, when it has any ----------------------- */

static void check_entry(struct ibv_context *const *ctxs, int n,
			const struct ibv_gid_entry *e)
{
	struct sockaddr_storage a;
	struct rc_where w;
	union ibv_gid dgid;
	char text[80];

	rc_gid_to_addr(&e->gid, htons(7174), e->ndev_ifindex, &a);
	assert_int_equal(rc_addr_local(ctxs, n, SA(a), &w), 0);
	print_message("note: %s -> port %u gid index %u type %u ifindex %d\n",
		      rc_addr_str(SA(a), text, sizeof(text)), w.port_num,
		      w.gid_index, w.gid_type, w.ifindex);
	assert_memory_equal(w.sgid.raw, e->gid.raw, 16);
	assert_int_equal(w.ifindex, (int)e->ndev_ifindex);
	assert_int_equal(((struct sockaddr_in *)&w.src)->sin_port, htons(7174));
	/*
	 * Its own address is a loopback connection on the same netdev. A
	 * link-local GID is left out: the default GID comes from the MAC,
	 * which need not be the netdev's link-local address.
	 */
	if (a.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)&a)->sin6_addr))
		return;
	assert_int_equal(rc_addr_route(ctxs, n, NULL, SA(a), &w, &dgid), 0);
	assert_int_equal(w.ifindex, (int)e->ndev_ifindex);
	assert_memory_equal(dgid.raw, e->gid.raw, 16);
}

static void test_devices(void **state)
{
	struct ibv_context *ctxs[16];
	struct ibv_device **devs;
	struct ibv_gid_entry tab[512];
	int ndev = 0, n = 0, checked = 0;

	(void)state;
	devs = ibv_get_device_list(&ndev);
	if (!devs || !ndev) {
		print_message("note: no RDMA device here: rc_addr_local and "
			      "rc_addr_route on devices are left to the rxe "
			      "VM suite (tests/rdmacm/rc_addr_probe)\n");
		if (devs)
			ibv_free_device_list(devs);
		return;
	}
	for (int i = 0; i < ndev && n < 16; i++) {
		ctxs[n] = ibv_open_device(devs[i]);
		if (ctxs[n])
			n++;
	}
	for (int k = 0; k < n; k++) {
		ssize_t got = ibv_query_gid_table(ctxs[k], tab, 512, 0);

		for (ssize_t i = 0; i < got; i++) {
			if (tab[i].gid_type == IBV_GID_TYPE_IB ||
			    !tab[i].ndev_ifindex)
				continue;
			check_entry(ctxs, n, &tab[i]);
			checked++;
		}
	}
	if (!checked)
		print_message("note: no RoCE GID on this machine's devices\n");
	for (int k = 0; k < n; k++)
		ibv_close_device(ctxs[k]);
	ibv_free_device_list(devs);
}

/* ---- rdma_getaddrinfo -------------------------------------------------- */

static void test_getaddrinfo_passive(void **state)
{
	struct rdma_addrinfo hints, *res = NULL;
	const struct sockaddr_in *in4;

	(void)state;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7471", &hints, &res),
			 0);
	assert_non_null(res);
	assert_int_equal(res->ai_flags, RAI_PASSIVE);
	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_src_len, sizeof(struct sockaddr_in));
	in4 = (const struct sockaddr_in *)res->ai_src_addr;
	assert_int_equal(in4->sin_family, AF_INET);
	assert_int_equal(in4->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(ntohs(in4->sin_port), 7471);
	assert_null(res->ai_dst_addr);
	assert_int_equal(res->ai_dst_len, 0);
	assert_int_equal(res->ai_route_len, 0);
	assert_null(res->ai_next);
	rdma_freeaddrinfo(res);

	/* A UD QP: a datagram socket type, so the UDP port space. */
	hints.ai_qp_type = IBV_QPT_UD;
	assert_int_equal(rdma_getaddrinfo(NULL, "7471", &hints, &res), 0);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	assert_int_equal(res->ai_port_space, RDMA_PS_UDP);
	assert_non_null(res->ai_src_addr);
	rdma_freeaddrinfo(res);

	/* What the hints name is kept as they name it. */
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_IB;
	assert_int_equal(rdma_getaddrinfo("::1", "18515", &hints, &res), 0);
	assert_int_equal(res->ai_family, AF_INET6);
	assert_int_equal(res->ai_port_space, RDMA_PS_IB);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_src_len, sizeof(struct sockaddr_in6));
	rdma_freeaddrinfo(res);
}

static void test_getaddrinfo_active(void **state)
{
	struct sockaddr_storage src = sa_of("127.0.0.2", 0), dst;
	struct rdma_addrinfo hints, *res = NULL;
	const struct sockaddr_in6 *in6;

	(void)state;
	/* No hints at all. */
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7471", NULL, &res), 0);
	assert_int_equal(res->ai_flags, 0);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(res->ai_dst_len, sizeof(struct sockaddr_in));
	assert_null(res->ai_src_addr);
	rdma_freeaddrinfo(res);

	/* A numeric link-local host with its interface; a hinted source. */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_NUMERICHOST | RAI_NOROUTE;
	hints.ai_family = AF_INET6;
	assert_int_equal(rdma_getaddrinfo("fe80::1%lo", "7471", &hints, &res),
			 0);
	in6 = (const struct sockaddr_in6 *)res->ai_dst_addr;
	assert_int_equal(in6->sin6_family, AF_INET6);
	assert_int_equal(in6->sin6_scope_id, 1);
	assert_int_equal(ntohs(in6->sin6_port), 7471);
	rdma_freeaddrinfo(res);

	hints.ai_family = AF_INET;
	hints.ai_src_addr = SA(src);
	hints.ai_src_len = sizeof(struct sockaddr_in);
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7471", &hints, &res),
			 0);
	assert_int_equal(res->ai_src_len, sizeof(struct sockaddr_in));
	assert_memory_equal(res->ai_src_addr, &src, sizeof(struct sockaddr_in));
	assert_non_null(res->ai_dst_addr);
	rdma_freeaddrinfo(res);

	/* Neither node nor service: the hints, copied. */
	dst = sa_of("10.0.0.2", 7174);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_qp_type = IBV_QPT_UD;
	hints.ai_port_space = RDMA_PS_UDP;
	hints.ai_dst_addr = SA(dst);
	hints.ai_dst_len = sizeof(struct sockaddr_in);
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	assert_int_equal(res->ai_port_space, RDMA_PS_UDP);
	assert_memory_equal(res->ai_dst_addr, &dst, sizeof(struct sockaddr_in));
	assert_null(res->ai_src_addr);
	rdma_freeaddrinfo(res);
}

static void test_getaddrinfo_errors(void **state)
{
	struct rdma_addrinfo hints, *res = NULL;
	int ret;

	(void)state;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_NUMERICHOST;
	/* getaddrinfo's own code comes back. */
	ret = rdma_getaddrinfo("localhost", "7471", &hints, &res);
	assert_int_equal(ret, EAI_NONAME);
	assert_null(res);

	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", NULL, NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);

	hints.ai_flags = RAI_SA;
	assert_int_equal(rdma_getaddrinfo(NULL, "7471", &hints, &res), -1);
	assert_int_equal(errno, EOPNOTSUPP);

	hints.ai_flags = RAI_FAMILY | RAI_NUMERICHOST;
	hints.ai_family = AF_IB;
	assert_int_equal(rdma_getaddrinfo("fe80::1", "7471", &hints, &res), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_null(res);

	/* A source length without its address. */
	memset(&hints, 0, sizeof(hints));
	hints.ai_src_len = sizeof(struct sockaddr_in);
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "1", &hints, &res), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(res);

	rdma_freeaddrinfo(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gid_v4_round_trip),
		cmocka_unit_test(test_gid_v6_round_trip),
		cmocka_unit_test(test_gid_ll_scope),
		cmocka_unit_test(test_gid_bad_family),
		cmocka_unit_test(test_addr_len),
		cmocka_unit_test(test_addr_any),
		cmocka_unit_test(test_addr_str),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_route_pick),
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		cmocka_unit_test(test_route_req_v4),
		cmocka_unit_test(test_route_req_v6),
		cmocka_unit_test(test_route_parse),
#endif
		cmocka_unit_test(test_route_loopback_127),
		cmocka_unit_test(test_route_bad_args),
		cmocka_unit_test(test_route_netns),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_getaddrinfo_passive),
		cmocka_unit_test(test_getaddrinfo_active),
		cmocka_unit_test(test_getaddrinfo_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
