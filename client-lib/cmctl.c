// SPDX-License-Identifier: MIT
/*
 * cmctl: look into a running cmd over its client socket.
 *
 *   cmctl [-s SOCKET] [--json] listeners      listeners, credits, held REQs
 *   cmctl [-s SOCKET] [--json] connections    ids, peer, state, owner
 *   cmctl [-s SOCKET] [--json] ids            both
 *   cmctl [-s SOCKET] [--json] counters [--port DEV:N] [--client]
 *                                             the daemon's counters, one
 *                                             port's, or this client's
 *   cmctl [-s SOCKET] [--json] ports          the ports the daemon serves
 *   cmctl [-s SOCKET] [--json] capture start FILE|stop
 *                                             MAD capture at run time
 *
 * An unprivileged user sees its own ids and its own (--client) counters;
 * root and the daemon's admin group see every client's ids, the global
 * and per-port counters, and may start and stop a capture. Ports are the
 * same for everyone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmclient.h"
#include "cmd_config.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cmctl [-s SOCKET] [--json] "
		   "listeners|connections|ids|ports\n"
		   "       cmctl [-s SOCKET] [--json] counters "
		   "[--port DEV:N | --client]\n"
		   "       cmctl [-s SOCKET] [--json] capture start FILE|stop\n"
		   "       cmctl --version\n");
}

static void gid_str(const uint8_t gid[16], char *buf, size_t size)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

/* The device of the port the daemon numbers index, or "?". */
static void port_dev(struct cmc_channel *ch, uint16_t index, char *buf,
		     size_t size)
{
	static struct cmc_port_info p[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;
	int n;

	snprintf(buf, size, "?");
	do {
		n = cmc_ports(ch, &cursor, p);
		for (int i = 0; i < n; i++)
			if (p[i].port_index == index) {
				snprintf(buf, size, "%s", p[i].dev_name);
				return;
			}
	} while (n > 0 && cursor);
}

/*
 * The last column: a connection's peer GID; where a listener listens:
 * "*" (every port), DEV:PORT or DEV (every port of DEV), or its GID.
 */
static void where_str(struct cmc_channel *ch, const struct cmc_list_entry *e,
		      char *buf, size_t size)
{
	char dev[CMC_DEV_NAME_SIZE];

	if (e->state != CMC_STATE_LISTEN) {
		gid_str(e->remote_gid, buf, size);
		return;
	}
	switch ((enum cmc_sel)e->sel) {
	case CMC_SEL_ANY:
		snprintf(buf, size, "*");
		return;
	case CMC_SEL_PORT:
		port_dev(ch, e->sel_port_index, dev, sizeof(dev));
		if (e->sel_port_num)
			snprintf(buf, size, "%s:%u", dev, e->sel_port_num);
		else
			snprintf(buf, size, "%s", dev);
		return;
	case CMC_SEL_GID:
		gid_str(e->listen_gid, buf, size);
		return;
	}
	snprintf(buf, size, "?");
}

static int list(struct cmc_channel *ch, enum cmc_list_filter filter, bool json)
{
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;
	bool first = true;
	int n;

	if (json)
		printf("[");
	else
		printf("%-10s %-14s %-18s %-18s %-10s %-10s %-8s %-6s %-11s "
		       "%-6s %s\n",
		       "ID", "STATE", "SERVICE_ID", "MASK", "LOCAL_CID",
		       "REMOTE_CID", "PID", "UID", "CREDITS", "HELD",
		       "PEER_GID|ON");
	do {
		n = cmc_list(ch, filter, &cursor, e);
		if (n < 0) {
			fprintf(stderr, "cmctl: list: %s\n", cmc_strerror(n));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			char gid[INET6_ADDRSTRLEN + CMC_DEV_NAME_SIZE];
			char credits[24], held[12];
			const char *state =
				cmc_state_str((enum cmc_state)e[i].state);

			where_str(ch, &e[i], gid, sizeof(gid));
			if (json) {
				printf("%s\n  {\"id\": %u, \"state\": \"%s\", "
				       "\"service_id\": \"0x%016" PRIx64 "\", "
				       "\"service_mask\": \"0x%016" PRIx64
				       "\", \"local_comm_id\": %u, "
				       "\"remote_comm_id\": %u, "
				       "\"owner_pid\": %u, \"owner_uid\": %u, "
				       "\"backlog\": %u, "
				       "\"credits_in_use\": %u, "
				       "\"held_reqs\": %u, "
				       "\"%s\": \"%s\"}",
				       first ? "" : ",", e[i].id, state,
				       e[i].service_id, e[i].service_mask,
				       e[i].local_comm_id, e[i].remote_comm_id,
				       e[i].owner_pid, e[i].owner_uid,
				       e[i].backlog, e[i].credits_in_use,
				       e[i].held_reqs,
				       e[i].state == CMC_STATE_LISTEN ?
					       "listen_on" :
					       "remote_gid",
				       gid);
				first = false;
				continue;
			}
			/* Credits used/backlog and held REQs: listeners. */
			if (e[i].backlog) {
				snprintf(credits, sizeof(credits), "%u/%u",
					 e[i].credits_in_use, e[i].backlog);
				snprintf(held, sizeof(held), "%u",
					 e[i].held_reqs);
			} else {
				snprintf(credits, sizeof(credits), "-");
				snprintf(held, sizeof(held), "-");
			}
			printf("%-10u %-14s 0x%016" PRIx64 " 0x%016" PRIx64
			       " %-10u %-10u %-8u %-6u %-11s %-6s %s\n",
			       e[i].id, state, e[i].service_id,
			       e[i].service_mask, e[i].local_comm_id,
			       e[i].remote_comm_id, e[i].owner_pid,
			       e[i].owner_uid, credits, held, gid);
		}
	} while (cursor);
	if (json)
		printf("%s]\n", first ? "" : "\n");
	return 0;
}

static int counters(struct cmc_channel *ch, enum cmc_counter_scope scope,
		    const char *dev, uint8_t port, bool json)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0;
	bool first = true;
	int n;

	if (json)
		printf("{");
	do {
		n = cmc_counters(ch, scope, dev, port, &cursor, c);
		if (n < 0) {
			fprintf(stderr, "cmctl: counters: %s%s\n",
				cmc_strerror(n),
				n == -EPERM ?
					" (root or the daemon's "
					"admin group only; try --client)" :
					"");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			if (json)
				printf("%s\n  \"%s\": %" PRIu64,
				       first ? "" : ",", c[i].name, c[i].value);
			else
				printf("%-32s %" PRIu64 "\n", c[i].name,
				       c[i].value);
			first = false;
		}
	} while (cursor);
	if (json)
		printf("%s}\n", first ? "" : "\n");
	return 0;
}

/* --port DEV:N */
static int parse_port(const char *arg, char *dev, size_t size, uint8_t *port)
{
	const char *colon = strrchr(arg, ':');
	unsigned long n;
	char *end;

	if (!colon || colon == arg || (size_t)(colon - arg) >= size)
		return -1;
	n = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || n < 1 || n > 255)
		return -1;
	memcpy(dev, arg, (size_t)(colon - arg));
	dev[colon - arg] = '\0';
	*port = (uint8_t)n;
	return 0;
}

/* capture start FILE | capture stop; a relative FILE is made absolute
 * here, since the daemon opens it in its own directory. */
static int capture(struct cmc_channel *ch, int argc, char **argv, bool json)
{
	char path[PATH_MAX], cwd[PATH_MAX];
	const char *file = NULL;
	int rc;

	if (argc == 2 && !strcmp(argv[0], "start")) {
		file = argv[1];
		if (file[0] != '/') {
			if (!getcwd(cwd, sizeof(cwd)) ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
					     file) >= sizeof(path)) {
				fprintf(stderr, "cmctl: %s: path too long\n",
					file);
				return 1;
			}
			file = path;
		}
	} else if (!(argc == 1 && !strcmp(argv[0], "stop"))) {
		usage(stderr);
		return 2;
	}
	rc = cmc_capture(ch, file);
	if (rc) {
		fprintf(stderr, "cmctl: capture %s: %s\n", argv[0],
			cmc_strerror(rc));
		return 1;
	}
	if (json && file)
		printf("{\"capture\": \"started\", \"path\": \"%s\"}\n", file);
	else if (json)
		printf("{\"capture\": \"stopped\"}\n");
	else if (file)
		printf("capture started: %s\n", file);
	else
		printf("capture stopped\n");
	return 0;
}

static const char *port_state_str(uint8_t state)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

static const char *link_str(uint8_t link)
{
	return link == CMC_LINK_IB   ? "IB" :
	       link == CMC_LINK_ROCE ? "RoCE" :
				       "?";
}

static const char *gid_type_str(uint8_t type)
{
	switch (type) {
	case CMC_GID_IB:
		return "IB";
	case CMC_GID_ROCE_V1:
		return "RoCEv1";
	case CMC_GID_ROCE_V2:
		return "RoCEv2";
	}
	return "?";
}

/* enum ibv_mtu (1 = 256 ... 5 = 4096) in bytes; 0 when unknown. */
static unsigned int mtu_bytes(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

static void port_json(const struct cmc_port_info *p, bool first)
{
	unsigned int ng = p->n_gids < CMC_PORT_GIDS ? p->n_gids : CMC_PORT_GIDS;

	printf("%s\n  {\"dev\": \"%s\", \"port\": %u, \"index\": %u, "
	       "\"up\": %s, \"state\": \"%s\", \"link_layer\": \"%s\", "
	       "\"active_mtu\": %u, \"lid\": %u, \"lmc\": %u, "
	       "\"sm_lid\": %u, \"sm_sl\": %u, "
	       "\"node_guid\": \"0x%016" PRIx64 "\", "
	       "\"port_guid\": \"0x%016" PRIx64 "\", \"n_gids\": %u, "
	       "\"gids\": [",
	       first ? "" : ",", p->dev_name, p->port_num, p->port_index,
	       p->up ? "true" : "false", port_state_str(p->state),
	       link_str(p->link_layer), mtu_bytes(p->active_mtu), p->lid,
	       p->lmc, p->sm_lid, p->sm_sl, p->node_guid, p->port_guid,
	       p->n_gids);
	for (unsigned int g = 0; g < ng; g++) {
		char gid[INET6_ADDRSTRLEN];

		gid_str(p->gids[g].gid, gid, sizeof(gid));
		printf("%s{\"index\": %u, \"type\": \"%s\", \"gid\": \"%s\"}",
		       g ? ", " : "", p->gids[g].index,
		       gid_type_str(p->gids[g].type), gid);
	}
	printf("]}");
}

/*
 * The text table: one line per port with its first GID; its other GIDs
 * (up to CMC_PORT_GIDS) on lines of their own below it, and "+N more" when
 * the table holds more than the daemon sent.
 */
static void port_text(const struct cmc_port_info *p)
{
	unsigned int ng = p->n_gids < CMC_PORT_GIDS ? p->n_gids : CMC_PORT_GIDS;
	char name[CMC_DEV_NAME_SIZE + 8], gid[INET6_ADDRSTRLEN], mtu[8];

	snprintf(name, sizeof(name), "%.*s/%u", CMC_DEV_NAME_SIZE - 1,
		 p->dev_name, p->port_num);
	if (mtu_bytes(p->active_mtu))
		snprintf(mtu, sizeof(mtu), "%u", mtu_bytes(p->active_mtu));
	else
		snprintf(mtu, sizeof(mtu), "-");
	if (ng)
		gid_str(p->gids[0].gid, gid, sizeof(gid));
	printf("%-12s %-5u %-3s %-12s %-4s %-5s %-6u %-6u 0x%016" PRIx64
	       " 0x%016" PRIx64 " %-4u",
	       name, p->port_index, p->up ? "yes" : "no",
	       port_state_str(p->state), link_str(p->link_layer), mtu, p->lid,
	       p->sm_lid, p->node_guid, p->port_guid, p->n_gids);
	if (ng)
		printf(" %-4u %-6s %s", p->gids[0].index,
		       gid_type_str(p->gids[0].type), gid);
	printf("\n");
	for (unsigned int g = 1; g < ng; g++) {
		gid_str(p->gids[g].gid, gid, sizeof(gid));
		printf("%-103s %-4u %-6s %s\n", "", p->gids[g].index,
		       gid_type_str(p->gids[g].type), gid);
	}
	if (p->n_gids > ng)
		printf("%-103s +%u more\n", "", p->n_gids - ng);
}

static int ports(struct cmc_channel *ch, bool json)
{
	struct cmc_port_info p[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;
	bool first = true;
	int n;

	if (json)
		printf("[");
	else
		printf("%-12s %-5s %-3s %-12s %-4s %-5s %-6s %-6s %-18s %-18s "
		       "%-4s %-4s %-6s %s\n",
		       "PORT", "INDEX", "UP", "STATE", "LINK", "MTU", "LID",
		       "SM_LID", "NODE_GUID", "PORT_GUID", "GIDS", "GIDX",
		       "GTYPE", "GID");
	do {
		n = cmc_ports(ch, &cursor, p);
		if (n < 0) {
			fprintf(stderr, "cmctl: ports: %s\n", cmc_strerror(n));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			if (json)
				port_json(&p[i], first);
			else
				port_text(&p[i]);
			first = false;
		}
	} while (cursor);
	if (json)
		printf("%s]\n", first ? "" : "\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "port", required_argument, NULL, 'p' },
		{ "client", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum cmc_counter_scope scope = CMC_COUNTERS_GLOBAL;
	const char *socket_path = NULL, *what;
	char dev[CMC_DEV_NAME_SIZE] = "";
	struct cmc_channel *ch;
	uint8_t port = 0;
	bool json = false;
	int opt, rc, nargs;

	while ((opt = getopt_long(argc, argv, "s:jhV", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			if (parse_port(optarg, dev, sizeof(dev), &port)) {
				fprintf(stderr,
					"cmctl: --port DEV:N, not '%s'\n",
					optarg);
				return 2;
			}
			scope = CMC_COUNTERS_PORT;
			break;
		case 'C':
			scope = CMC_COUNTERS_CLIENT;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("cmctl %s\n", CMD_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	what = argv[optind];
	nargs = argc - optind - 1;
	if ((strcmp(what, "listeners") && strcmp(what, "connections") &&
	     strcmp(what, "ids") && strcmp(what, "counters") &&
	     strcmp(what, "ports") && strcmp(what, "capture")) ||
	    (strcmp(what, "capture") && nargs) ||
	    (!strcmp(what, "capture") && (nargs < 1 || nargs > 2)) ||
	    (strcmp(what, "counters") && scope != CMC_COUNTERS_GLOBAL)) {
		usage(stderr);
		return 2;
	}
	rc = cmc_open(socket_path, "cmctl", &ch);
	if (rc) {
		fprintf(stderr, "cmctl: cannot reach cmd at %s: %s\n",
			socket_path	     ? socket_path :
			getenv("CMD_SOCKET") ? getenv("CMD_SOCKET") :
					       CMC_DEFAULT_SOCKET,
			cmc_strerror(rc));
		return 1;
	}
	if (!strcmp(what, "counters"))
		rc = counters(ch, scope,
			      scope == CMC_COUNTERS_PORT ? dev : NULL, port,
			      json);
	else if (!strcmp(what, "capture"))
		rc = capture(ch, nargs, argv + optind + 1, json);
	else if (!strcmp(what, "ports"))
		rc = ports(ch, json);
	else
		rc = list(ch,
			  !strcmp(what, "listeners")   ? CMC_LIST_LISTENERS :
			  !strcmp(what, "connections") ? CMC_LIST_CONNECTIONS :
							 CMC_LIST_ALL,
			  json);
	cmc_close(ch);
	return rc;
}
