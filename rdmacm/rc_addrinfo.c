// SPDX-License-Identifier: MIT
/*
 * rdma_getaddrinfo(3) and rdma_freeaddrinfo(3), as librdmacm defines them.
 *
 * Names and services go through getaddrinfo(3), whose hints come from the
 * rdma_addrinfo's: the QP type gives the socket type, the port space the
 * protocol. As in librdmacm:
 *   - only the first answer is returned (one rdma_addrinfo, ai_next NULL);
 *   - RAI_PASSIVE puts the address in ai_src_addr, else in ai_dst_addr, and
 *     the answer's ai_flags is RAI_PASSIVE or 0;
 *   - a QP type or port space the hints leave 0 comes from the answer's
 *     socket type and protocol (getaddrinfo lists SOCK_STREAM/TCP first:
 *     IBV_QPT_RC and RDMA_PS_TCP);
 *   - with neither node nor service, the answer is a copy of the hints'
 *     flags, family, QP type, port space and destination;
 *   - a source address in the hints is kept when the lookup gave none;
 *   - errors: getaddrinfo's EAI_* code as it returns it, or -1 with errno.
 * Unlike librdmacm, it needs no RDMA device, asks no ibacm for routes (so
 * ai_route and ai_connect stay empty, and RAI_NOROUTE has nothing to
 * suppress), and refuses with EOPNOTSUPP what needs the IB SA or AF_IB
 * addresses: RAI_SA, and a numeric host with RAI_FAMILY and AF_IB.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#include "rc_addr.h"

/* librdmacm's later flag, which Debian 12's header does not have yet. */
#ifndef RAI_SA
#define RAI_SA 0x00000010
#endif

/*
 * QP types as socket types, and back: the first row of a socket type is
 * the QP type it gives.
 */
static const struct {
	enum ibv_qp_type qp;
	int socktype;
} rai_qp_socktypes[] = {
	{ IBV_QPT_RC, SOCK_STREAM },	   { IBV_QPT_UD, SOCK_DGRAM },
	{ IBV_QPT_UC, SOCK_STREAM },	   { IBV_QPT_XRC_SEND, SOCK_STREAM },
	{ IBV_QPT_XRC_RECV, SOCK_STREAM },
};

/*
 * Port spaces as IP protocols, and back likewise. RDMA_PS_IB has no
 * protocol of its own: it takes the socket type's.
 */
static const struct {
	enum rdma_port_space ps;
	int protocol;
} rai_ps_protocols[] = {
	{ RDMA_PS_TCP, IPPROTO_TCP },
	{ RDMA_PS_UDP, IPPROTO_UDP },
	{ RDMA_PS_IPOIB, IPPROTO_UDP },
};

#define RAI_N(a) (sizeof(a) / sizeof((a)[0]))

static int rai_fail(int err)
{
	errno = err;
	return -1;
}

static int rai_socktype_of(int qp)
{
	for (size_t i = 0; i < RAI_N(rai_qp_socktypes); i++)
		if ((int)rai_qp_socktypes[i].qp == qp)
			return rai_qp_socktypes[i].socktype;
	return 0;
}

static int rai_qp_of(int socktype)
{
	for (size_t i = 0; i < RAI_N(rai_qp_socktypes); i++)
		if (rai_qp_socktypes[i].socktype == socktype)
			return (int)rai_qp_socktypes[i].qp;
	return 0;
}

static int rai_protocol_of(int ps, int socktype)
{
	if (ps == RDMA_PS_IB)
		return socktype == SOCK_STREAM ? IPPROTO_TCP :
		       socktype == SOCK_DGRAM  ? IPPROTO_UDP :
						 0;
	for (size_t i = 0; i < RAI_N(rai_ps_protocols); i++)
		if ((int)rai_ps_protocols[i].ps == ps)
			return rai_ps_protocols[i].protocol;
	return 0;
}

static int rai_ps_of(int protocol)
{
	for (size_t i = 0; i < RAI_N(rai_ps_protocols); i++)
		if (rai_ps_protocols[i].protocol == protocol)
			return (int)rai_ps_protocols[i].ps;
	return 0;
}

static int rai_dup_addr(struct sockaddr **to, socklen_t *to_len,
			const struct sockaddr *from, socklen_t len)
{
	if (!len)
		return 0;
	if (!from)
		return rai_fail(EINVAL);
	*to = malloc(len);
	if (!*to)
		return rai_fail(ENOMEM);
	memcpy(*to, from, len);
	*to_len = len;
	return 0;
}

/* The first answer of getaddrinfo(node, service) into *rai. */
static int rai_lookup(const char *node, const char *service,
		      const struct rdma_addrinfo *hints,
		      struct rdma_addrinfo *rai)
{
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	struct addrinfo want, *ai;
	char **name;
	int ret;

	if (hints) {
		memset(&want, 0, sizeof(want));
		want.ai_flags =
			(passive ? AI_PASSIVE : 0) |
			(hints->ai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST :
							     0);
		/* AF_IB names are not for getaddrinfo: any family. */
		want.ai_family = hints->ai_family == AF_IB ? AF_UNSPEC :
							     hints->ai_family;
		want.ai_socktype = rai_socktype_of(hints->ai_qp_type);
		want.ai_protocol =
			rai_protocol_of(hints->ai_port_space, want.ai_socktype);
	}
	ret = getaddrinfo(node, service, hints ? &want : NULL, &ai);
	if (ret)
		return ret;
	rai->ai_flags = passive ? RAI_PASSIVE : 0;
	rai->ai_family = ai->ai_family;
	rai->ai_qp_type = hints && hints->ai_qp_type ?
				  hints->ai_qp_type :
				  rai_qp_of(ai->ai_socktype);
	rai->ai_port_space = hints && hints->ai_port_space ?
				     hints->ai_port_space :
				     rai_ps_of(ai->ai_protocol);
	name = passive ? &rai->ai_src_canonname : &rai->ai_dst_canonname;
	if (ai->ai_canonname && !(*name = strdup(ai->ai_canonname)))
		ret = rai_fail(ENOMEM);
	else if (passive)
		ret = rai_dup_addr(&rai->ai_src_addr, &rai->ai_src_len,
				   ai->ai_addr, ai->ai_addrlen);
	else
		ret = rai_dup_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
				   ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return ret;
}

RC_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
			       const struct rdma_addrinfo *hints,
			       struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	int ret = 0;

	if (!res || (!node && !service && !hints))
		return rai_fail(EINVAL);
	if (hints && (hints->ai_flags & RAI_SA))
		return rai_fail(EOPNOTSUPP); /* no IB SA queries here */
	if (hints && (node || service) && (hints->ai_flags & RAI_FAMILY) &&
	    hints->ai_family == AF_IB && (hints->ai_flags & RAI_NUMERICHOST))
		return rai_fail(EOPNOTSUPP); /* no AF_IB addresses either */
	rai = calloc(1, sizeof(*rai));
	if (!rai)
		return rai_fail(ENOMEM);
	if (node || service) {
		ret = rai_lookup(node, service, hints, rai);
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		ret = rai_dup_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
				   hints->ai_dst_addr, hints->ai_dst_len);
	}
	if (!ret && hints && !rai->ai_src_len)
		ret = rai_dup_addr(&rai->ai_src_addr, &rai->ai_src_len,
				   hints->ai_src_addr, hints->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return ret;
	}
	*res = rai;
	return 0;
}

RC_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
