// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the rdma_cm CMA header (proto/rdmacm.c).
 *
 * Input: 8 bytes of service id (big endian), then the REQ private data that
 * rdmacm_hdr_decode() reads. The verdict must be the one this file reaches
 * on its own from the rules in rdmacm.h; a decoded header must encode back
 * to the input's first 36 bytes (an IPv4 address's 12 pad bytes aside,
 * which rdma_cm sends as zero and the decoder ignores), decode again to
 * the same addresses, and survive the GID round trip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "rdmacm.h"

#define SID_SIZE 8

static uint64_t be64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* rdmacm.h: bits 63..32 zero, bits 31..16 one of the four port spaces. */
static bool sid_is_rdmacm(uint64_t sid)
{
	switch (sid >> 16) {
	case RDMACM_PS_IPOIB:
	case RDMACM_PS_IB:
	case RDMACM_PS_TCP:
	case RDMACM_PS_UDP:
		return true;
	}
	return false;
}

static const uint8_t *addr_bytes(const struct sockaddr_storage *ss, size_t *len)
{
	if (ss->ss_family == AF_INET) {
		*len = 4;
		return (const uint8_t *)&((const struct sockaddr_in *)ss)
			->sin_addr;
	}
	*len = 16;
	return (const uint8_t *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
}

static uint16_t addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ((const struct sockaddr_in6 *)ss)->sin6_port;
}

static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	size_t la, lb;
	const uint8_t *pa = addr_bytes(a, &la), *pb = addr_bytes(b, &lb);

	return a->ss_family == b->ss_family && la == lb &&
	       !memcmp(pa, pb, la) && addr_port(a) == addr_port(b);
}

/* GID from an address and back: the same address, port 0. */
static void check_gid(const struct sockaddr_storage *ss)
{
	static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0,	 0,
					       0, 0, 0, 0, 0xff, 0xff };
	struct sockaddr_storage back;
	uint8_t gid[16];
	const uint8_t *a;
	size_t alen, blen;

	FUZZ_CHECK(rdmacm_gid_from_addr(gid, (const struct sockaddr *)ss) == 0);
	rdmacm_addr_from_gid(gid, &back);
	a = addr_bytes(ss, &alen);
	FUZZ_CHECK(addr_port(&back) == 0);
	if (ss->ss_family == AF_INET || !memcmp(a, v4_mapped, 12)) {
		/* IPv4, or IPv6 that is v4-mapped: back as AF_INET. */
		FUZZ_CHECK(back.ss_family == AF_INET);
		FUZZ_CHECK(!memcmp(addr_bytes(&back, &blen), a + alen - 4, 4));
	} else {
		FUZZ_CHECK(back.ss_family == AF_INET6);
		FUZZ_CHECK(!memcmp(addr_bytes(&back, &blen), a, 16));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdmacm_hdr h, again;
	enum rdmacm_ps ps;
	uint8_t out[RDMACM_HDR_SIZE];
	const uint8_t *pd;
	uint16_t port;
	uint64_t sid;
	size_t len;
	int rc, v;

	if (size < SID_SIZE)
		return 0;
	sid = be64_get(data);
	pd = data + SID_SIZE;
	len = size - SID_SIZE;

	FUZZ_CHECK((rdmacm_service_id_parse(sid, &ps, &port) == 0) ==
		   sid_is_rdmacm(sid));
	rc = rdmacm_hdr_decode(pd, len, sid, &h);
	if (!sid_is_rdmacm(sid)) {
		FUZZ_CHECK(rc == -EINVAL);
		return 0;
	}
	FUZZ_CHECK(rdmacm_service_id(ps, port) == sid);
	v = len >= 2 ? pd[1] >> 4 : 0;
	if (len < RDMACM_HDR_SIZE || pd[0] != RDMACM_HDR_VERSION ||
	    (v != 4 && v != 6) || (pd[1] & 0x0f)) {
		FUZZ_CHECK(rc == -EBADMSG);
		return 0;
	}
	FUZZ_CHECK(rc == 0);

	/* The header's facts, read here from the bytes directly. */
	FUZZ_CHECK(h.ip_version == v);
	FUZZ_CHECK(h.src.ss_family == (v == 4 ? AF_INET : AF_INET6));
	FUZZ_CHECK(h.dst.ss_family == h.src.ss_family);
	FUZZ_CHECK(!memcmp(&(uint16_t){ addr_port(&h.src) }, pd + 2, 2));
	FUZZ_CHECK(addr_port(&h.dst) == htons(port));

	/* Encode: the input again, IPv4 pad bytes aside, and those zero. */
	memset(out, 0xee, sizeof(out));
	FUZZ_CHECK(rdmacm_hdr_encode(out, (const struct sockaddr *)&h.src,
				     (const struct sockaddr *)&h.dst) == 0);
	FUZZ_CHECK(!memcmp(out, pd, 4));
	if (v == 6) {
		FUZZ_CHECK(!memcmp(out + 4, pd + 4, 32));
	} else {
		static const uint8_t zero[12];

		FUZZ_CHECK(!memcmp(out + 4, zero, 12));
		FUZZ_CHECK(!memcmp(out + 16, pd + 16, 4));
		FUZZ_CHECK(!memcmp(out + 20, zero, 12));
		FUZZ_CHECK(!memcmp(out + 32, pd + 32, 4));
	}

	/* ... which decodes to the same addresses and ports. */
	FUZZ_CHECK(rdmacm_hdr_decode(out, sizeof(out), sid, &again) == 0);
	FUZZ_CHECK(again.ip_version == h.ip_version);
	FUZZ_CHECK(same_addr(&again.src, &h.src));
	FUZZ_CHECK(same_addr(&again.dst, &h.dst));

	check_gid(&h.src);
	check_gid(&h.dst);
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * Golden seeds, made with rdmacm_hdr_encode() from socket addresses: one
 * per port space and address family, a REQ's whole private data area with
 * application bytes after the header, and the near misses a fuzzer would
 * take long to find (one byte short, foreign port space).
 */
#include "cm_mad.h"

static void seed(const char *name, uint64_t sid, const struct sockaddr *src,
		 const struct sockaddr *dst, size_t pd_len)
{
	uint8_t buf[SID_SIZE + CM_REQ_PRIVATE_DATA_SIZE] = { 0 };

	FUZZ_CHECK(pd_len <= CM_REQ_PRIVATE_DATA_SIZE);
	for (int i = 0; i < SID_SIZE; i++)
		buf[i] = (uint8_t)(sid >> (56 - 8 * i));
	FUZZ_CHECK(rdmacm_hdr_encode(buf + SID_SIZE, src, dst) == 0);
	/* Application private data after the CMA header. */
	for (size_t i = RDMACM_HDR_SIZE; i < pd_len; i++)
		buf[SID_SIZE + i] = (uint8_t)(0xa0 + i);
	fuzz_seed(name, buf, SID_SIZE + pd_len);
}

static struct sockaddr_in v4(const char *ip, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	FUZZ_CHECK(inet_pton(AF_INET, ip, &s.sin_addr) == 1);
	return s;
}

static struct sockaddr_in6 v6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port) };

	FUZZ_CHECK(inet_pton(AF_INET6, ip, &s.sin6_addr) == 1);
	return s;
}

#define SA(x) ((const struct sockaddr *)&(x))

void fuzz_write_seeds(void)
{
	struct sockaddr_in a4 = v4("192.168.10.1", 45000);
	struct sockaddr_in b4 = v4("192.168.10.2", 7174);
	struct sockaddr_in6 a6 = v6("fe80::5054:ff:fe12:3456", 50001);
	struct sockaddr_in6 b6 = v6("2001:db8::2", 4791);
	struct sockaddr_in6 m6 = v6("::ffff:10.0.0.1", 1);

	seed("tcp-v4.bin", rdmacm_service_id(RDMACM_PS_TCP, 7174), SA(a4),
	     SA(b4), RDMACM_HDR_SIZE);
	seed("tcp-v4-pd.bin", rdmacm_service_id(RDMACM_PS_TCP, 7174), SA(a4),
	     SA(b4), CM_REQ_PRIVATE_DATA_SIZE);
	seed("udp-v4.bin", rdmacm_service_id(RDMACM_PS_UDP, 1), SA(b4), SA(a4),
	     40);
	seed("ib-v6.bin", rdmacm_service_id(RDMACM_PS_IB, 0xffff), SA(a6),
	     SA(b6), RDMACM_HDR_SIZE);
	seed("ipoib-v6-pd.bin", rdmacm_service_id(RDMACM_PS_IPOIB, 0x1234),
	     SA(b6), SA(a6), CM_REQ_PRIVATE_DATA_SIZE);
	seed("tcp-v6-mapped.bin", rdmacm_service_id(RDMACM_PS_TCP, 0), SA(m6),
	     SA(b6), 64);
	seed("short.bin", rdmacm_service_id(RDMACM_PS_TCP, 7174), SA(a4),
	     SA(b4), RDMACM_HDR_SIZE - 1);
	seed("foreign-ps.bin", UINT64_C(0x0000000001071c06), SA(a4), SA(b4),
	     RDMACM_HDR_SIZE);
}
#endif
