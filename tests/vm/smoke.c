/*
 * smoke.c - the VM harness's own test: real umad + verbs on soft-RoCE.
 *
 *   smoke [-d DEV] [-g GID_INDEX] [-D DST_DEV] [-G DST_GID_INDEX]
 *
 * Defaults: DEV rxe0, GID index 1 (::ffff:127.0.0.1 for rxe on lo), destination
 * = source. Steps, each printed:
 *   1. verbs: the port is ACTIVE, link layer Ethernet; print the GID table
 *   2. umad: open the first port of DEV (and DST_DEV), register management
 *      class 0x07 (CM) version 2 for method Send (0x03) - this only succeeds
 *      while the kernel's ib_cm is not attached to the device
 *   3. send one 256-byte CM-class MAD with a GRH (source GID index set by hand:
 *      umad_set_grh() does not copy it) to the destination GID, remote QPN 1,
 *      Q_Key 0x80010000, timeout 0 (CM MADs are unsolicited Sends)
 *   4. receive it on the destination port and compare every byte (except the
 *      upper 32 TID bits, which the kernel MAD layer rewrites per agent)
 * Exit: 0 success, 1 failure, 77 (skip) when not under tests/vm/run.sh and
 * there is no such device.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/verbs.h>

enum {
	MAD_SIZE = 256,
	CM_CLASS = 0x07,
	CM_CLASS_VERSION = 2,
	METHOD_SEND = 0x03,
	ATTR_REQ = 0x0010,
	RECV_TIMEOUT_MS = 5000,
};
#define QP1_QKEY 0x80010000u

struct port {
	const char *dev;
	int gid_index;
	union ibv_gid gid;
	int fd;
	int agent;
};

static const char *gid_str(const union ibv_gid *g, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, g->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* print "FAIL: <message>[: strerror(err)]" and return 1 */
__attribute__((format(printf, 2, 3))) static int fail(int err, const char *fmt,
						      ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (err)
		printf(": %s", strerror(err));
	printf("\n");
	return 1;
}

/* verbs view of port 1: state, link layer, GID table; fills p->gid */
static int check_port_verbs(struct port *p)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr attr;
	int n, i, rc = 1;
	char buf[INET6_ADDRSTRLEN];

	list = ibv_get_device_list(&n);
	if (!list)
		return fail(errno, "ibv_get_device_list");
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), p->dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		return fail(errno, "cannot open verbs device %s", p->dev);

	if (ibv_query_port(ctx, 1, &attr)) {
		fail(errno, "ibv_query_port(%s, 1)", p->dev);
		goto out;
	}
	printf("[%s] port 1: state %s, link layer %s, active MTU %d, GID table "
	       "%d entries\n",
	       p->dev, ibv_port_state_str(attr.state),
	       attr.link_layer == IBV_LINK_LAYER_ETHERNET   ? "Ethernet" :
	       attr.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" :
							      "unspecified",
	       128 << attr.active_mtu, attr.gid_tbl_len);
	if (attr.state != IBV_PORT_ACTIVE) {
		fail(0, "%s port 1 is not ACTIVE", p->dev);
		goto out;
	}
	if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
		fail(0, "%s port 1 link layer is not Ethernet", p->dev);
		goto out;
	}
	for (i = 0; i < attr.gid_tbl_len && i < 16; i++) {
		union ibv_gid g;
		static const uint8_t zero[16];

		if (ibv_query_gid(ctx, 1, i, &g) || !memcmp(g.raw, zero, 16))
			continue;
		printf("[%s]   gid[%d] %s%s\n", p->dev, i,
		       gid_str(&g, buf, sizeof buf),
		       i == p->gid_index ? "   <- used" : "");
		if (i == p->gid_index)
			p->gid = g;
	}
	if (ibv_query_gid(ctx, 1, p->gid_index, &p->gid)) {
		fail(errno, "ibv_query_gid(%s)", p->dev);
		goto out;
	}
	rc = 0;
out:
	ibv_close_device(ctx);
	return rc;
}

static int open_umad(struct port *p)
{
	long mask[16 / sizeof(long)] = { 0 };
	umad_port_t uport;
	int r;

	r = umad_get_port(p->dev, 0, &uport);
	if (r < 0)
		return fail(-r, "umad_get_port(%s, first port)", p->dev);
	printf("[%s] umad port %d: state %u, link layer %s, lid %u\n", p->dev,
	       uport.portnum, uport.state, uport.link_layer, uport.base_lid);
	umad_release_port(&uport);

	p->fd = umad_open_port(p->dev, 0);
	if (p->fd < 0)
		return fail(-p->fd, "umad_open_port(%s, first port)", p->dev);
	mask[METHOD_SEND / (8 * sizeof(long))] |=
		1L << (METHOD_SEND % (8 * sizeof(long)));
	p->agent = umad_register(p->fd, CM_CLASS, CM_CLASS_VERSION, 0, mask);
	if (p->agent < 0) {
		printf("[%s] kernel modules loaded: ib_cm %s\n", p->dev,
		       access("/sys/module/ib_cm", F_OK) ?
			       "no" :
			       "YES (it owns the CM class)");
		return fail(errno,
			    "umad_register(%s, class 0x07 v2, method Send) "
			    "returned %d",
			    p->dev, p->agent);
	}
	printf("[%s] umad_register(class 0x07 v2, methods {Send}) -> agent "
	       "%d\n",
	       p->dev, p->agent);
	return 0;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-d DEV] [-g GID_INDEX] [-D DST_DEV] [-G "
		"DST_GID_INDEX]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct port src = { .dev = "rxe0", .gid_index = 1, .fd = -1 };
	struct port dst = { .dev = NULL, .gid_index = -1, .fd = -1 };
	struct port *d = &src;
	char buf[INET6_ADDRSTRLEN];
	uint8_t *out, *in, *mad, *rmad;
	struct ib_user_mad *um, *rum;
	struct ib_mad_addr grh;
	uint32_t tid_lo;
	int opt, r, len, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "d:g:D:G:h")) != -1) {
		switch (opt) {
		case 'd':
			src.dev = optarg;
			break;
		case 'g':
			src.gid_index = atoi(optarg);
			break;
		case 'D':
			dst.dev = optarg;
			break;
		case 'G':
			dst.gid_index = atoi(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	if (dst.dev && strcmp(dst.dev, src.dev))
		d = &dst;
	else if (dst.gid_index >= 0 && dst.gid_index != src.gid_index)
		return fail(0,
			    "a second GID index on the same device needs -D");
	if (d == &dst && dst.gid_index < 0)
		dst.gid_index = src.gid_index;

	if (access("/sys/class/infiniband/", F_OK) ||
	    access("/dev/infiniband", F_OK)) {
		printf("no RDMA devices here (%s)\n",
		       getenv("CMD_VM") ? "inside the VM!" :
					  "run me with tests/vm/run.sh");
		return getenv("CMD_VM") ? 1 : 77;
	}
	printf("smoke: %s gid[%d] -> %s gid[%d]; kernel CM %s\n", src.dev,
	       src.gid_index, d->dev, d->gid_index,
	       access("/sys/module/ib_cm", F_OK) ? "not loaded" : "LOADED");

	/* 1. verbs */
	if (check_port_verbs(&src) || (d != &src && check_port_verbs(d)))
		return 1;
	/* 2. umad */
	if (umad_init() < 0)
		return fail(errno, "umad_init");
	if (open_umad(&src) || (d != &src && open_umad(d)))
		return 1;

	/* 3. send */
	out = calloc(1, umad_size() + MAD_SIZE);
	in = calloc(1, umad_size() + MAD_SIZE);
	if (!out || !in)
		return fail(ENOMEM, "out of memory");
	um = (struct ib_user_mad *)out;
	mad = umad_get_mad(out);
	tid_lo = 0x5a000000u | (uint32_t)(getpid() & 0xffffff);
	mad[0] = 1; /* BaseVersion */
	mad[1] = CM_CLASS; /* MgmtClass */
	mad[2] = CM_CLASS_VERSION; /* ClassVersion */
	mad[3] = METHOD_SEND; /* R=0, Method */
	tid_lo = htobe32(tid_lo);
	memcpy(mad + 12, &tid_lo, 4); /* TID, low 32 bits */
	mad[16] = ATTR_REQ >> 8; /* AttributeID */
	mad[17] = ATTR_REQ & 0xff;
	for (i = 24; i < MAD_SIZE; i++) /* CM payload: a recognisable pattern */
		mad[i] = (uint8_t)(i * 7 + 3);
	memcpy(mad + 24, "cmd-vm-smoke", 12);

	umad_set_addr(out, 0 /* DLID: unused on RoCE */, 1 /* QP1 */, 0,
		      QP1_QKEY);
	umad_set_pkey(out, 0);
	memset(&grh, 0, sizeof grh);
	memcpy(grh.gid, d->gid.raw, 16);
	grh.hop_limit = 64;
	umad_set_grh(out, &grh);
	um->addr.gid_index =
		(uint8_t)src.gid_index; /* not copied by umad_set_grh() */

	r = umad_send(src.fd, src.agent, out, MAD_SIZE,
		      0 /* timeout: unsolicited */, 0);
	if (r < 0)
		return fail(errno, "umad_send to %s",
			    gid_str(&d->gid, buf, sizeof buf));
	printf("[%s] sent %d-byte CM MAD (attr 0x%04x, TID low 0x%08x) to %s, "
	       "QPN 1, Q_Key 0x%08x\n",
	       src.dev, MAD_SIZE, ATTR_REQ, be32toh(tid_lo),
	       gid_str(&d->gid, buf, sizeof buf), QP1_QKEY);

	/* 4. receive and compare */
	for (;;) {
		len = MAD_SIZE;
		r = umad_recv(d->fd, in, &len, RECV_TIMEOUT_MS);
		if (r < 0)
			return fail(errno,
				    "umad_recv on %s: nothing within 5 s",
				    d->dev);
		rum = (struct ib_user_mad *)in;
		rmad = umad_get_mad(in);
		printf("[%s] received %d bytes: agent %d, status %d, class "
		       "0x%02x method 0x%02x, "
		       "src QPN %u, GRH %d, sgid %s\n",
		       d->dev, len, r, umad_status(in), rmad[1], rmad[3],
		       be32toh(rum->addr.qpn), rum->addr.grh_present,
		       rum->addr.grh_present ?
			       gid_str((union ibv_gid *)rum->addr.gid, buf,
				       sizeof buf) :
			       "-");
		if (umad_status(in) !=
		    0) /* e.g. a timed-out send reported back */
			return fail(0,
				    "received a MAD with non-zero status on %s",
				    d->dev);
		if (r == d->agent && rmad[1] == CM_CLASS &&
		    !memcmp(rmad + 12, mad + 12, 4))
			break;
		printf("  (not ours, waiting on)\n");
	}
	if (len != MAD_SIZE)
		return fail(0, "received length differs");
	if (memcmp(rmad, mad, 8) ||
	    memcmp(rmad + 12, mad + 12, MAD_SIZE - 12)) {
		for (i = 0; i < MAD_SIZE; i++)
			if (rmad[i] != mad[i] && (i < 8 || i >= 12))
				printf("  byte %d: sent 0x%02x got 0x%02x\n", i,
				       mad[i], rmad[i]);
		return fail(0, "received MAD differs from the one sent");
	}
	if (be32toh(rum->addr.qpn) != 1 || !rum->addr.grh_present)
		return fail(0,
			    "unexpected source address (QPN != 1 or no GRH)");
	printf("[%s] all %d bytes match (TID high bits rewritten by the "
	       "kernel: 0x%08x)\n",
	       d->dev, MAD_SIZE, be32toh(*(uint32_t *)(rmad + 8)));

	umad_unregister(src.fd, src.agent);
	umad_close_port(src.fd);
	if (d != &src) {
		umad_unregister(d->fd, d->agent);
		umad_close_port(d->fd);
	}
	free(out);
	free(in);
	printf("PASS: CM-class MAD %s -> %s over real umad/rxe\n", src.dev,
	       d->dev);
	return 0;
}
