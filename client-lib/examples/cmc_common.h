/* SPDX-License-Identifier: MIT */
/*
 * What cmc_server.c and cmc_client.c share: options, opening the RDMA
 * device, the buffer pattern both sides verify, and the private data the
 * server's REP carries (where the client may RDMA-write). cmc_ping.c and
 * tools/cmbench take the destination parsing, the PSNs and the errors
 * that end a channel from here too.
 */
#ifndef CMC_EXAMPLES_COMMON_H
#define CMC_EXAMPLES_COMMON_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <cmclient.h>

#define EX_DEFAULT_SERVICE 0x0000000000c0ffeeull
#define EX_BUF_SIZE 4096 /* the RDMA-written region */
#define EX_MSG_SIZE 128 /* SEND messages */
/* The private data of -R's REJs: this prefix, then the connection's
 * number. */
#define EX_REJECT_TEXT "cmc_server rejects request "

/* The REP's private data: where the client writes, in network order. */
struct ex_rdma_target {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

struct ex_opts {
	const char *dev; /* NULL: the first device */
	int gid_index; /* -1: let the daemon pick the GID */
	uint8_t port;
	uint64_t service_id;
	unsigned int count;
	const char *socket; /* NULL: $CMD_SOCKET or the default */
	const char *dst; /* client only */
	/* -R: server: reject every REQ (reason 28, with private data);
	 * client: expect exactly that rejection. */
	bool reject;
	/* -D: the server disconnects (DREQ) once the data is verified; the
	 * client waits for that DREQ and answers it. */
	bool server_disconnects;
};

/* The byte the pattern has at offset i for connection conn. */
static inline uint8_t ex_pattern(unsigned int conn, size_t i)
{
	return (uint8_t)(i * 7 + conn * 13 + 1);
}

/* FNV-1a, enough to tell a correct buffer from a stale or torn one. */
static inline uint32_t ex_checksum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static inline int ex_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end ? -EINVAL : 0;
}

/*
 * A destination: "lid:N", an IPv4 or IPv6 address, or a GID written as an
 * IPv6 address (fe80::...). An IPv6 string is taken as a GID when it is
 * link-local (the IB/RoCE default GID form), else as an IP address.
 */
static inline int ex_parse_dst(const char *s, struct cmc_addr *a)
{
	uint64_t lid;

	memset(a, 0, sizeof(*a));
	if (!strncmp(s, "lid:", 4)) {
		if (ex_parse_u64(s + 4, &lid) || !lid || lid > 0xbfff)
			return -EINVAL;
		a->family = CMC_AF_LID;
		a->lid = (uint16_t)lid;
		return 0;
	}
	if (inet_pton(AF_INET, s, a->addr) == 1) {
		a->family = CMC_AF_IPV4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->addr) == 1) {
		a->family =
			(a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80) ?
				CMC_AF_GID :
				CMC_AF_IPV6;
		return 0;
	}
	return -EINVAL;
}

static inline void ex_usage(const char *prog, bool client)
{
	fprintf(stderr,
		"usage: %s [-d device] [-p port] [-g gid_index] [-s "
		"service_id]\n"
		"       %*s [-c count] [-S socket] [-R] [-D]%s\n"
		"  -d  RDMA device (default: the first one)\n"
		"  -p  port number (default 1)\n"
		"  -g  GID index to connect/listen from (default: daemon's "
		"choice)\n"
		"  -s  service id (default 0x%" PRIx64 ")\n"
		"  -c  connections to make/serve (default 1)\n"
		"  -S  cmd socket (default $CMD_SOCKET or %s)\n"
		"  -R  %s\n"
		"  -D  %s\n",
		prog, (int)strlen(prog), "", client ? " destination" : "",
		(uint64_t)EX_DEFAULT_SERVICE, CMC_DEFAULT_SOCKET,
		client ? "expect the server's REJ (reason 28, private data)" :
			 "reject every REQ (reason 28, with private data)",
		client ? "wait for the server's DREQ instead of disconnecting" :
			 "disconnect (DREQ) once the data is verified");
	if (client)
		fprintf(stderr, "  destination: IPv4/IPv6 address, GID "
				"(fe80::...) or lid:N\n");
}

static inline int ex_parse_opts(int argc, char **argv, bool client,
				struct ex_opts *o)
{
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->gid_index = -1;
	o->port = 1;
	o->service_id = EX_DEFAULT_SERVICE;
	o->count = 1;
	while ((c = getopt(argc, argv, "d:p:g:s:c:S:RDh")) != -1) {
		switch (c) {
		case 'd':
			o->dev = optarg;
			break;
		case 'p':
			if (ex_parse_u64(optarg, &v) || !v || v > 255)
				goto bad;
			o->port = (uint8_t)v;
			break;
		case 'g':
			if (ex_parse_u64(optarg, &v) || v > 255)
				goto bad;
			o->gid_index = (int)v;
			break;
		case 's':
			if (ex_parse_u64(optarg, &o->service_id))
				goto bad;
			break;
		case 'c':
			if (ex_parse_u64(optarg, &v) || !v || v > 100000)
				goto bad;
			o->count = (unsigned int)v;
			break;
		case 'S':
			o->socket = optarg;
			break;
		case 'R':
			o->reject = true;
			break;
		case 'D':
			o->server_disconnects = true;
			break;
		default:
			goto bad;
		}
	}
	if (client) {
		if (optind != argc - 1)
			goto bad;
		o->dst = argv[optind];
	} else if (optind != argc) {
		goto bad;
	}
	return 0;
bad:
	ex_usage(argv[0], client);
	return -EINVAL;
}

/* Open the named device, or the first one. */
static inline struct ibv_context *ex_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			perror("ibv_open_device");
		break;
	}
	if (!ctx && n == 0)
		fprintf(stderr, "no RDMA device found\n");
	else if (!ctx && name)
		fprintf(stderr, "no RDMA device named %s\n", name);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * The port selector for the daemon: our device and port, or the port
 * owning GID gid_index when one was given (RoCE: picks IPv4 vs IPv6 and
 * the RoCE version).
 */
static inline int ex_port_sel(struct ibv_context *ctx, const struct ex_opts *o,
			      bool any_port, struct cmc_port_sel *sel)
{
	union ibv_gid gid;

	memset(sel, 0, sizeof(*sel));
	if (o->gid_index >= 0) {
		if (ibv_query_gid(ctx, o->port, o->gid_index, &gid)) {
			fprintf(stderr, "cannot read GID %d of port %u\n",
				o->gid_index, o->port);
			return -EINVAL;
		}
		sel->kind = CMC_SEL_GID;
		memcpy(sel->gid, gid.raw, sizeof(sel->gid));
		return 0;
	}
	sel->kind = CMC_SEL_PORT;
	sel->port_num = any_port ? 0 : o->port;
	snprintf(sel->dev_name, sizeof(sel->dev_name), "%s",
		 ibv_get_device_name(ctx->device));
	return 0;
}

/*
 * A connection's resources, whichever exist (NULL: none), in the order
 * they must go: the id first, so that the daemon sends no more for it;
 * the QP before its CQ; the MR last.
 */
/*
 * An RC QP on pd whose send and receive queues both complete on cq, with
 * room for send_wr and recv_wr work requests of one SGE each; NULL with
 * errno set when verbs refuses it.
 */
static inline struct ibv_qp *ex_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				      uint32_t send_wr, uint32_t recv_wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
	};

	a.cap.max_send_wr = send_wr;
	a.cap.max_recv_wr = recv_wr;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return ibv_create_qp(pd, &a);
}

static inline void ex_conn_release(struct cmc_id *id, struct ibv_qp *qp,
				   struct ibv_cq *cq, struct ibv_mr *mr)
{
	if (id)
		cmc_destroy_id(id);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (mr)
		ibv_dereg_mr(mr);
}

/*
 * After these errors the channel to the daemon is dead (cmclient.h), or
 * we are out of memory: every later call would most likely fail the same
 * way, so stop instead of counting each remaining connection as failed.
 */
static inline bool ex_channel_dead(int err)
{
	return err == -ECONNRESET || err == -EPROTO || err == -ETIMEDOUT ||
	       err == -ENOMEM;
}

/* A random 24-bit PSN, as IBTA recommends against stale packets. */
static inline uint32_t ex_psn(void)
{
	return (uint32_t)lrand48() & 0xffffff;
}

#endif
