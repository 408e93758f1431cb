// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: what it refuses. Multicast (cmd has no SA client to
 * join groups with), ECE (the daemon's REQ/REP carry no ECE fields) and
 * rsockets (a socket layer over RDMA that cmd does not provide: LD_PRELOAD
 * librspreload with the system's librdmacm instead). Each call fails with
 * EOPNOTSUPP and logs one line, the first time, naming the call.
 * docs/RDMACM.md and cmd-rdmacm(1) list them.
 */
#include "rc_int.h"

#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/select.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

static void rc_refused(atomic_bool *said, const char *call, const char *why)
{
	if (!atomic_exchange(said, true))
		rc_log(1, "%s: not supported over cmd (%s): EOPNOTSUPP", call,
		       why);
	errno = EOPNOTSUPP;
}

#define RC_REFUSE(call, why)                                                   \
	do {                                                                   \
		static atomic_bool said_;                                      \
		rc_refused(&said_, call, why);                                 \
	} while (0)

#define MCAST "cmd has no multicast group joins"
#define RSOCK "rsockets are not provided; use the system librdmacm"

RC_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				  void *context)
{
	(void)id, (void)addr, (void)context;
	RC_REFUSE("rdma_join_multicast", MCAST);
	return -1;
}

RC_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				     struct rdma_cm_join_mc_attr_ex *attr,
				     void *context)
{
	(void)id, (void)attr, (void)context;
	RC_REFUSE("rdma_join_multicast_ex", MCAST);
	return -1;
}

RC_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	RC_REFUSE("rdma_leave_multicast", MCAST);
	return -1;
}

/* ECE on an id of the kernel's CM is the kernel's; NULL for cmd's. */
static struct rc_id *rc_ece_kid(struct rdma_cm_id *pub)
{
	struct rc_id *id;

	RC_LOCK();
	errno = 0;
	id = rc_id_live(pub, "rdma_*_ece");
	RC_UNLOCK();
	return id && id->kid ? id : NULL;
}

static int rc_ece_kern(struct rc_id *id, enum rc_kern_opcode op,
		       struct ibv_ece *ece)
{
	int r;

	RC_LOCK();
	r = rc_kern_op(id, op, ece, NULL, 0);
	RC_UNLOCK();
	return rc_cmc(r);
}

RC_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct rc_id *kid = rc_ece_kid(id);

	if (!kid && errno == EINVAL)
		return -1; /* not a live id: said so */
	if (kid)
		return rc_ece_kern(kid, RC_KOP_SET_ECE, ece);
	RC_REFUSE("rdma_set_local_ece",
		  "the daemon's CM messages carry no ECE");
	return -1;
}

/* No ECE was received: the zero ECE, as librdmacm reports a peer that
 * sent none. */
RC_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct rc_id *kid;

	if (!id || !ece)
		return rc_err(EINVAL);
	kid = rc_ece_kid(id);
	if (kid)
		return rc_ece_kern(kid, RC_KOP_GET_ECE, ece);
	if (errno == EINVAL)
		return -1; /* not a live id: said so */
	memset(ece, 0, sizeof(*ece));
	return 0;
}

#define RC_RSOCK(ret, name, args, ...)                                         \
	RC_EXPORT ret name args                                                \
	{                                                                      \
		__VA_ARGS__;                                                   \
		RC_REFUSE(#name, RSOCK);                                       \
		return (ret)-1;                                                \
	}

RC_RSOCK(int, rsocket, (int d, int t, int p), (void)d, (void)t, (void)p)
RC_RSOCK(int, rbind, (int s, const struct sockaddr *a, socklen_t l), (void)s,
	 (void)a, (void)l)
RC_RSOCK(int, rlisten, (int s, int b), (void)s, (void)b)
RC_RSOCK(int, raccept, (int s, struct sockaddr *a, socklen_t *l), (void)s,
	 (void)a, (void)l)
RC_RSOCK(int, rconnect, (int s, const struct sockaddr *a, socklen_t l), (void)s,
	 (void)a, (void)l)
RC_RSOCK(int, rshutdown, (int s, int h), (void)s, (void)h)
RC_RSOCK(int, rclose, (int s), (void)s)
RC_RSOCK(ssize_t, rrecv, (int s, void *b, size_t l, int f), (void)s, (void)b,
	 (void)l, (void)f)
RC_RSOCK(ssize_t, rrecvfrom,
	 (int s, void *b, size_t l, int f, struct sockaddr *a, socklen_t *al),
	 (void)s, (void)b, (void)l, (void)f, (void)a, (void)al)
RC_RSOCK(ssize_t, rrecvmsg, (int s, struct msghdr *m, int f), (void)s, (void)m,
	 (void)f)
RC_RSOCK(ssize_t, rsend, (int s, const void *b, size_t l, int f), (void)s,
	 (void)b, (void)l, (void)f)
RC_RSOCK(ssize_t, rsendto,
	 (int s, const void *b, size_t l, int f, const struct sockaddr *a,
	  socklen_t al),
	 (void)s, (void)b, (void)l, (void)f, (void)a, (void)al)
RC_RSOCK(ssize_t, rsendmsg, (int s, const struct msghdr *m, int f), (void)s,
	 (void)m, (void)f)
RC_RSOCK(ssize_t, rread, (int s, void *b, size_t c), (void)s, (void)b, (void)c)
RC_RSOCK(ssize_t, rreadv, (int s, const struct iovec *v, int c), (void)s,
	 (void)v, (void)c)
RC_RSOCK(ssize_t, rwrite, (int s, const void *b, size_t c), (void)s, (void)b,
	 (void)c)
RC_RSOCK(ssize_t, rwritev, (int s, const struct iovec *v, int c), (void)s,
	 (void)v, (void)c)
RC_RSOCK(int, rpoll, (struct pollfd * f, nfds_t n, int t), (void)f, (void)n,
	 (void)t)
RC_RSOCK(int, rselect,
	 (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t), (void)n,
	 (void)r, (void)w, (void)e, (void)t)
RC_RSOCK(int, rgetpeername, (int s, struct sockaddr *a, socklen_t *l), (void)s,
	 (void)a, (void)l)
RC_RSOCK(int, rgetsockname, (int s, struct sockaddr *a, socklen_t *l), (void)s,
	 (void)a, (void)l)
RC_RSOCK(int, rsetsockopt, (int s, int lv, int o, const void *v, socklen_t l),
	 (void)s, (void)lv, (void)o, (void)v, (void)l)
RC_RSOCK(int, rgetsockopt, (int s, int lv, int o, void *v, socklen_t *l),
	 (void)s, (void)lv, (void)o, (void)v, (void)l)
RC_RSOCK(int, rfcntl, (int s, int c, ...), (void)s, (void)c)
RC_RSOCK(off_t, riomap, (int s, void *b, size_t l, int p, int f, off_t o),
	 (void)s, (void)b, (void)l, (void)p, (void)f, (void)o)
RC_RSOCK(int, riounmap, (int s, void *b, size_t l), (void)s, (void)b, (void)l)
RC_RSOCK(size_t, riowrite, (int s, const void *b, size_t c, off_t o, int f),
	 (void)s, (void)b, (void)c, (void)o, (void)f)
