// SPDX-License-Identifier: MIT
/*
 * rc_addr_probe: what rc_addr_local (rdma_bind_addr) and rc_addr_route
 * (rdma_resolve_addr) answer for each address given, on this machine's RDMA
 * devices, one line per call, for the rxe VM suite to check:
 *
 *   rc_addr_probe [--src ADDR] ADDR...
 *
 * ADDR is numeric, IPv6 link-local with its interface ("fe80::1%veth0");
 * --src pins the source of the route lookups that follow it. Lines:
 *
 *   local ADDR ok dev=rxe0 port=1 gid_index=3 gid=::ffff:10.0.0.1 type=v2
 *         ifindex=4 ifname=veth0 src=10.0.0.1:0
 *   route ADDR ok dev=... src=... dgid=::ffff:10.0.0.2
 *   route ADDR err=ENETUNREACH (-101)
 *
 * (each on one line). Exit status: 0 when every call was made (whatever it
 * answered), 2 on a usage error or an address that does not parse.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_addr.h"

#define PROBE_MAX_DEVS 32

/* Names of the errors rc_addr can give, for lines a script can match. */
static const char *const probe_errnames[] = {
	[EINVAL] = "EINVAL",
	[ENODEV] = "ENODEV",
	[ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES",
	[EAFNOSUPPORT] = "EAFNOSUPPORT",
	[EADDRNOTAVAIL] = "EADDRNOTAVAIL",
	[ENETUNREACH] = "ENETUNREACH",
	[EHOSTUNREACH] = "EHOSTUNREACH",
	[ETIMEDOUT] = "ETIMEDOUT",
	[EMSGSIZE] = "EMSGSIZE",
	[EBADMSG] = "EBADMSG",
};

static const char *const probe_types[] = {
	[IBV_GID_TYPE_IB] = "ib",
	[IBV_GID_TYPE_ROCE_V1] = "v1",
	[IBV_GID_TYPE_ROCE_V2] = "v2",
};

static const char *probe_errname(int err)
{
	if (err > 0 &&
	    (size_t)err < sizeof(probe_errnames) / sizeof(probe_errnames[0]) &&
	    probe_errnames[err])
		return probe_errnames[err];
	return "E?";
}

static const char *probe_type(uint32_t t)
{
	if (t < sizeof(probe_types) / sizeof(probe_types[0]) && probe_types[t])
		return probe_types[t];
	return "?";
}

static int probe_parse(const char *text, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai;

	if (getaddrinfo(text, NULL, &hints, &ai))
		return -1;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static void probe_print(const char *what, const char *arg, int ret,
			const struct rc_where *w, const union ibv_gid *dgid)
{
	char gid[INET6_ADDRSTRLEN], src[96], ifname[IF_NAMESIZE];

	if (ret) {
		printf("%s %s err=%s (%d)\n", what, arg, probe_errname(-ret),
		       ret);
		return;
	}
	inet_ntop(AF_INET6, w->sgid.raw, gid, sizeof(gid));
	if (!w->ifindex || !if_indextoname((unsigned int)w->ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "-");
	printf("%s %s ok dev=%s port=%u gid_index=%u gid=%s type=%s "
	       "ifindex=%d ifname=%s src=%s",
	       what, arg, ibv_get_device_name(w->ctx->device), w->port_num,
	       w->gid_index, gid, probe_type(w->gid_type), w->ifindex, ifname,
	       rc_addr_str((const struct sockaddr *)&w->src, src, sizeof(src)));
	if (dgid) {
		inet_ntop(AF_INET6, dgid->raw, gid, sizeof(gid));
		printf(" dgid=%s", gid);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	struct ibv_context *ctxs[PROBE_MAX_DEVS];
	struct sockaddr_storage src, dst;
	struct ibv_device **devs;
	bool have_src = false;
	int ndev = 0, n = 0, status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s [--src ADDR] ADDR...\n", argv[0]);
		return 2;
	}
	devs = ibv_get_device_list(&ndev);
	for (int i = 0; devs && i < ndev && n < PROBE_MAX_DEVS; i++) {
		ctxs[n] = ibv_open_device(devs[i]);
		if (ctxs[n])
			n++;
	}
	printf("devices %d\n", n);
	for (int i = 1; i < argc; i++) {
		struct rc_where w;
		union ibv_gid dgid;
		int ret;

		if (!strcmp(argv[i], "--src")) {
			if (i + 1 >= argc || probe_parse(argv[++i], &src)) {
				fprintf(stderr, "bad --src\n");
				status = 2;
				break;
			}
			have_src = true;
			continue;
		}
		if (probe_parse(argv[i], &dst)) {
			fprintf(stderr, "not a numeric address: %s\n", argv[i]);
			status = 2;
			continue;
		}
		ret = rc_addr_local(ctxs, n, (struct sockaddr *)&dst, &w);
		probe_print("local", argv[i], ret, &w, NULL);
		ret = rc_addr_route(ctxs, n,
				    have_src ? (struct sockaddr *)&src : NULL,
				    (struct sockaddr *)&dst, &w, &dgid);
		probe_print("route", argv[i], ret, &w, &dgid);
	}
	for (int k = 0; k < n; k++)
		ibv_close_device(ctxs[k]);
	if (devs)
		ibv_free_device_list(devs);
	return status;
}
