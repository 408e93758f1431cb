// SPDX-License-Identifier: MIT
/*
 * rdma_cm compatibility helpers: service ids and the CMA header, pinned by
 * hand-written bytes (layout as the kernel's cma.c sends it, and as seen on
 * the wire in shared/reference/rxe-vm: rping accepted exactly these bytes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rdmacm.h"

static void test_service_ids(void **state)
{
	enum rdmacm_ps ps;
	uint16_t port;

	/* TCP port 7174 (0x1c06): the rping/perftest default. */
	assert_int_equal(rdmacm_service_id(RDMACM_PS_TCP, 7174),
			 UINT64_C(0x0000000001061c06));
	assert_int_equal(rdmacm_service_id(RDMACM_PS_UDP, 1),
			 UINT64_C(0x0000000001110001));
	assert_int_equal(rdmacm_service_id(RDMACM_PS_IB, 0xffff),
			 UINT64_C(0x00000000013fffff));
	assert_int_equal(rdmacm_service_id(RDMACM_PS_IPOIB, 0x1234),
			 UINT64_C(0x0000000000021234));

	assert_int_equal(
		rdmacm_service_id_parse(UINT64_C(0x1061c06), &ps, &port), 0);
	assert_int_equal(ps, RDMACM_PS_TCP);
	assert_int_equal(port, 7174);
	assert_string_equal(rdmacm_ps_name(ps), "TCP");

	/* Not rdma_cm ids: unknown port space, high bits set. */
	assert_int_equal(
		rdmacm_service_id_parse(UINT64_C(0x1071c06), &ps, &port),
		-EINVAL);
	assert_int_equal(rdmacm_service_id_parse(UINT64_C(0x100000001061c06),
						 &ps, &port),
			 -EINVAL);
	assert_int_equal(rdmacm_service_id_parse(0, &ps, &port), -EINVAL);

	/* The port-space mask keeps the space and drops the port. */
	assert_int_equal(rdmacm_service_id(RDMACM_PS_TCP, 9) & RDMACM_PS_MASK,
			 rdmacm_service_id(RDMACM_PS_TCP, 0));
}

/* 192.168.10.1:45000 -> 192.168.10.2 (port from the service id). */
static const uint8_t golden_v4[RDMACM_HDR_SIZE] = {
	/* 0 */ 0x00, /* CMA version */
	/* 1 */ 0x40, /* IP version 4 in the top nibble */
	/* 2 */ 0xaf, 0xc8, /* source port 45000, big endian */
	/* 4 */ 0,    0,    0,	0, 0, 0, 0, 0, 0, 0, 0, 0, /* pad */
	/* 16 */ 192, 168,  10, 1, /* source IPv4 */
	/* 20 */ 0,   0,    0,	0, 0, 0, 0, 0, 0, 0, 0, 0, /* pad */
	/* 32 */ 192, 168,  10, 2, /* destination IPv4 */
};

static void test_hdr_v4(void **state)
{
	struct sockaddr_in src = { .sin_family = AF_INET,
				   .sin_port = htons(45000) };
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(7174) };
	uint8_t out[RDMACM_HDR_SIZE];
	struct rdmacm_hdr h;
	const struct sockaddr_in *s4, *d4;

	inet_pton(AF_INET, "192.168.10.1", &src.sin_addr);
	inet_pton(AF_INET, "192.168.10.2", &dst.sin_addr);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(rdmacm_hdr_encode(out, (struct sockaddr *)&src,
					   (struct sockaddr *)&dst),
			 0);
	assert_memory_equal(out, golden_v4, sizeof(golden_v4));

	assert_int_equal(
		rdmacm_hdr_decode(golden_v4, sizeof(golden_v4),
				  rdmacm_service_id(RDMACM_PS_TCP, 7174), &h),
		0);
	assert_int_equal(h.ip_version, 4);
	s4 = (const struct sockaddr_in *)&h.src;
	d4 = (const struct sockaddr_in *)&h.dst;
	assert_int_equal(s4->sin_family, AF_INET);
	assert_int_equal(ntohs(s4->sin_port), 45000);
	assert_memory_equal(&s4->sin_addr, &src.sin_addr, 4);
	assert_int_equal(d4->sin_family, AF_INET);
	assert_int_equal(ntohs(d4->sin_port), 7174);
	assert_memory_equal(&d4->sin_addr, &dst.sin_addr, 4);
}

static void test_hdr_v6(void **state)
{
	static const uint8_t golden[RDMACM_HDR_SIZE] = {
		/* 0 */ 0x00,
		0x60, /* version 0, IPv6 */
		/* 2 */ 0x12,
		0x34, /* source port 0x1234 */
		/* 4 */ 0xfe,
		0x80,
		0,
		0,
		0,
		0,
		0,
		0, /* source fe80::1 */
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0x01,
		/* 20 */ 0xfe,
		0x80,
		0,
		0,
		0,
		0,
		0,
		0, /* dest fe80::2 */
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0x02,
	};
	struct sockaddr_in6 src = { .sin6_family = AF_INET6,
				    .sin6_port = htons(0x1234) };
	struct sockaddr_in6 dst = { .sin6_family = AF_INET6 };
	uint8_t out[RDMACM_HDR_SIZE];
	struct rdmacm_hdr h;
	const struct sockaddr_in6 *d6;

	inet_pton(AF_INET6, "fe80::1", &src.sin6_addr);
	inet_pton(AF_INET6, "fe80::2", &dst.sin6_addr);
	assert_int_equal(rdmacm_hdr_encode(out, (struct sockaddr *)&src,
					   (struct sockaddr *)&dst),
			 0);
	assert_memory_equal(out, golden, sizeof(golden));
	assert_int_equal(rdmacm_hdr_decode(golden, sizeof(golden),
					   rdmacm_service_id(RDMACM_PS_UDP, 9),
					   &h),
			 0);
	assert_int_equal(h.ip_version, 6);
	d6 = (const struct sockaddr_in6 *)&h.dst;
	assert_int_equal(d6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(d6->sin6_port), 9);
	assert_memory_equal(&d6->sin6_addr, &dst.sin6_addr, 16);
}

static void test_hdr_bad(void **state)
{
	uint8_t bad[RDMACM_HDR_SIZE];
	struct rdmacm_hdr h;
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	struct sockaddr un = { .sa_family = AF_UNIX };
	uint64_t sid = rdmacm_service_id(RDMACM_PS_TCP, 1);

	/* Short private data, for every length. */
	for (size_t len = 0; len < RDMACM_HDR_SIZE; len++)
		assert_int_equal(rdmacm_hdr_decode(golden_v4, len, sid, &h),
				 -EBADMSG);
	memcpy(bad, golden_v4, sizeof(bad));
	bad[0] = 1; /* unknown CMA version */
	assert_int_equal(rdmacm_hdr_decode(bad, sizeof(bad), sid, &h),
			 -EBADMSG);
	memcpy(bad, golden_v4, sizeof(bad));
	bad[1] = 0x50; /* IP version 5 */
	assert_int_equal(rdmacm_hdr_decode(bad, sizeof(bad), sid, &h),
			 -EBADMSG);
	bad[1] = 0x41; /* low nibble is reserved */
	assert_int_equal(rdmacm_hdr_decode(bad, sizeof(bad), sid, &h),
			 -EBADMSG);
	/* A service id outside the rdma_cm spaces. */
	assert_int_equal(rdmacm_hdr_decode(golden_v4, sizeof(golden_v4),
					   UINT64_C(0x1000), &h),
			 -EINVAL);
	/* Mixed or unsupported families. */
	assert_int_equal(rdmacm_hdr_encode(bad, (struct sockaddr *)&v4,
					   (struct sockaddr *)&v6),
			 -EAFNOSUPPORT);
	assert_int_equal(rdmacm_hdr_encode(bad, &un, &un), -EAFNOSUPPORT);
}

static void test_gid(void **state)
{
	static const uint8_t gid_v4[16] = { 0, 0, 0,	0,    0,   0, 0, 0,
					    0, 0, 0xff, 0xff, 127, 0, 0, 1 };
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	struct sockaddr_storage back;
	uint8_t gid[16];

	inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr);
	assert_int_equal(rdmacm_gid_from_addr(gid, (struct sockaddr *)&v4), 0);
	assert_memory_equal(gid, gid_v4, 16);
	rdmacm_addr_from_gid(gid, &back);
	assert_int_equal(back.ss_family, AF_INET);
	assert_memory_equal(&((struct sockaddr_in *)&back)->sin_addr,
			    &v4.sin_addr, 4);

	inet_pton(AF_INET6, "fe80::5054:ff:fe12:3456", &v6.sin6_addr);
	assert_int_equal(rdmacm_gid_from_addr(gid, (struct sockaddr *)&v6), 0);
	assert_memory_equal(gid, &v6.sin6_addr, 16);
	rdmacm_addr_from_gid(gid, &back);
	assert_int_equal(back.ss_family, AF_INET6);
	assert_memory_equal(&((struct sockaddr_in6 *)&back)->sin6_addr,
			    &v6.sin6_addr, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_service_ids),
		cmocka_unit_test(test_hdr_v4),
		cmocka_unit_test(test_hdr_v6),
		cmocka_unit_test(test_hdr_bad),
		cmocka_unit_test(test_gid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
