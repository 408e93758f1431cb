// SPDX-License-Identifier: MIT
#include "rdmacm.h"

#include <errno.h>
#include <string.h>

uint64_t rdmacm_service_id(enum rdmacm_ps ps, uint16_t port)
{
	return ((uint64_t)ps << 16) | port;
}

static int ps_known(uint64_t ps)
{
	switch (ps) {
	case RDMACM_PS_IPOIB:
	case RDMACM_PS_IB:
	case RDMACM_PS_TCP:
	case RDMACM_PS_UDP:
		return 1;
	}
	return 0;
}

int rdmacm_service_id_parse(uint64_t service_id, enum rdmacm_ps *ps,
			    uint16_t *port)
{
	uint64_t space = service_id >> 16;

	if (!ps_known(space))
		return -EINVAL;
	if (ps)
		*ps = (enum rdmacm_ps)space;
	if (port)
		*port = (uint16_t)service_id;
	return 0;
}

const char *rdmacm_ps_name(enum rdmacm_ps ps)
{
	switch (ps) {
	case RDMACM_PS_IPOIB:
		return "IPoIB";
	case RDMACM_PS_IB:
		return "IB";
	case RDMACM_PS_TCP:
		return "TCP";
	case RDMACM_PS_UDP:
		return "UDP";
	}
	return "unknown";
}

/* An address in the header's 16-byte form: IPv4 in the last 4 bytes. */
static int addr_put(uint8_t out[16], const struct sockaddr *sa, uint16_t *port)
{
	const struct sockaddr_in *in4;
	const struct sockaddr_in6 *in6;

	memset(out, 0, 16);
	switch (sa->sa_family) {
	case AF_INET:
		in4 = (const struct sockaddr_in *)sa;
		memcpy(out + 12, &in4->sin_addr, 4);
		*port = in4->sin_port;
		return 4;
	case AF_INET6:
		in6 = (const struct sockaddr_in6 *)sa;
		memcpy(out, &in6->sin6_addr, 16);
		*port = in6->sin6_port;
		return 6;
	}
	return -EAFNOSUPPORT;
}

/* Fill a socket address; port is in network byte order. */
static void addr_get(struct sockaddr_storage *ss, int ip_version,
		     const uint8_t in[16], uint16_t port)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (ip_version == 4) {
		in4->sin_family = AF_INET;
		memcpy(&in4->sin_addr, in + 12, 4);
		in4->sin_port = port;
	} else {
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, in, 16);
		in6->sin6_port = port;
	}
}

int rdmacm_hdr_encode(uint8_t out[RDMACM_HDR_SIZE], const struct sockaddr *src,
		      const struct sockaddr *dst)
{
	uint16_t sport, dport;
	int v;

	if (src->sa_family != dst->sa_family)
		return -EAFNOSUPPORT;
	v = addr_put(out + 4, src, &sport);
	if (v < 0 || addr_put(out + 20, dst, &dport) < 0)
		return -EAFNOSUPPORT;
	out[0] = RDMACM_HDR_VERSION;
	out[1] = (uint8_t)(v << 4);
	/* sin_port is already big endian, as the header wants it. */
	memcpy(out + 2, &sport, 2);
	return 0;
}

int rdmacm_hdr_decode(const uint8_t *pd, size_t len, uint64_t service_id,
		      struct rdmacm_hdr *hdr)
{
	uint16_t port, sport;
	int v;

	if (rdmacm_service_id_parse(service_id, NULL, &port))
		return -EINVAL;
	if (len < RDMACM_HDR_SIZE || pd[0] != RDMACM_HDR_VERSION)
		return -EBADMSG;
	v = pd[1] >> 4;
	if ((v != 4 && v != 6) || (pd[1] & 0x0f))
		return -EBADMSG;
	hdr->ip_version = (uint8_t)v;
	memcpy(&sport, pd + 2, 2);
	addr_get(&hdr->src, v, pd + 4, sport);
	addr_get(&hdr->dst, v, pd + 20, htons(port));
	return 0;
}

static const uint8_t v4_mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

int rdmacm_gid_from_addr(uint8_t gid[16], const struct sockaddr *addr)
{
	uint16_t port;

	switch (addr_put(gid, addr, &port)) {
	case 4:
		memcpy(gid, v4_mapped, sizeof(v4_mapped));
		return 0;
	case 6:
		return 0;
	}
	return -EAFNOSUPPORT;
}

int rdmacm_gid_is_v4(const uint8_t gid[16])
{
	return !memcmp(gid, v4_mapped, sizeof(v4_mapped));
}

void rdmacm_addr_from_gid(const uint8_t gid[16], struct sockaddr_storage *addr)
{
	/* A v4-mapped GID holds the IPv4 address where the header form does. */
	addr_get(addr, rdmacm_gid_is_v4(gid) ? 4 : 6, gid, 0);
}
