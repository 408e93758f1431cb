/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm compatibility: the service ids of the Linux rdma_cm port spaces and
 * the 36-byte CMA header that rdma_cm puts at the start of a REQ's private
 * data. With these, a libcmclient application can connect to and accept from
 * peers that use the kernel's rdma_cm (rping, ucmatose, any librdmacm app).
 *
 * Facts from the kernel's drivers/infiniband/core/cma.c:
 *   service id = (port space << 16) | port, as a 64-bit number;
 *   CMA header: byte 0 version (0x00), byte 1 IP version in the top nibble,
 *   bytes 2-3 source port (big endian), bytes 4-19 source address, bytes
 *   20-35 destination address; an IPv4 address sits in the last 4 bytes of
 *   its 16 with the first 12 zero.
 */
#ifndef CMD_PROTO_RDMACM_H
#define CMD_PROTO_RDMACM_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* include/rdma/rdma_cm.h: enum rdma_ucm_port_space. */
enum rdmacm_ps {
	RDMACM_PS_IPOIB = 0x0002,
	RDMACM_PS_IB = 0x013F,
	RDMACM_PS_TCP = 0x0106,
	RDMACM_PS_UDP = 0x0111,
};

#define RDMACM_HDR_SIZE 36
#define RDMACM_HDR_VERSION 0x00

/*
 * The mask that matches every service id of one port space (the low 16 bits
 * are the port): what a listener on "any port of TCP" would use.
 */
#define RDMACM_PS_MASK UINT64_C(0xFFFFFFFFFFFF0000)

/* rdma_cm service id of 'port' in port space 'ps'. */
uint64_t rdmacm_service_id(enum rdmacm_ps ps, uint16_t port);

/*
 * Split a service id into port space and port. Returns 0, or -EINVAL when
 * the id is not in one of the four rdma_cm port spaces (bits 63..32 must be
 * zero and bits 31..16 a known port space).
 */
int rdmacm_service_id_parse(uint64_t service_id, enum rdmacm_ps *ps,
			    uint16_t *port);

const char *rdmacm_ps_name(enum rdmacm_ps ps);

/* A decoded CMA header, addresses as socket addresses. */
struct rdmacm_hdr {
	uint8_t ip_version; /* 4 or 6 */
	struct sockaddr_storage src; /* with the source port */
	struct sockaddr_storage dst; /* with the destination port */
};

/*
 * Write the CMA header for a connection from 'src' (address and source
 * port) to 'dst' (address; its port is carried by the service id, not by
 * the header). Both must be AF_INET or both AF_INET6.
 * Returns 0 or -EAFNOSUPPORT.
 */
int rdmacm_hdr_encode(uint8_t out[RDMACM_HDR_SIZE], const struct sockaddr *src,
		      const struct sockaddr *dst);

/*
 * Read the CMA header at the start of a REQ's private data of 'len' bytes.
 * The destination port is taken from 'service_id'. Returns 0, -EBADMSG when
 * len is short, the version is not 0 or the IP version not 4 or 6, or
 * -EINVAL when the service id is no rdma_cm id.
 */
int rdmacm_hdr_decode(const uint8_t *pd, size_t len, uint64_t service_id,
		      struct rdmacm_hdr *hdr);

/*
 * RoCE GIDs of IP addresses, as rdma_cm forms them: an IPv4 address maps to
 * ::ffff:a.b.c.d, an IPv6 address is its own GID.
 * rdmacm_gid_from_addr returns 0 or -EAFNOSUPPORT; rdmacm_addr_from_gid
 * gives AF_INET for a v4-mapped GID and AF_INET6 otherwise (port 0).
 */
int rdmacm_gid_from_addr(uint8_t gid[16], const struct sockaddr *addr);
void rdmacm_addr_from_gid(const uint8_t gid[16], struct sockaddr_storage *addr);
/* Is gid an IPv4 address's RoCE GID (::ffff:a.b.c.d)? */
int rdmacm_gid_is_v4(const uint8_t gid[16]);

#endif
