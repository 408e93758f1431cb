// SPDX-License-Identifier: MIT
/*
 * cmctl: look into a running cmd over its client socket.
 *
 *   cmctl [-s SOCKET] [--json] listeners      listeners, credits, held REQs
 *   cmctl [-s SOCKET] [--json] connections    ids, peer, state, owner
 *   cmctl [-s SOCKET] [--json] ids            both
 *   cmctl [-s SOCKET] [--json] counters       the daemon's counters
 *
 * An unprivileged user sees its own ids; root sees every client's.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmclient.h"
#include "cmd_config.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cmctl [-s SOCKET] [--json] "
		   "listeners|connections|ids|counters\n"
		   "       cmctl --version\n");
}

static void gid_str(const uint8_t gid[16], char *buf, size_t size)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)size))
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
		printf("%-10s %-14s %-18s %-18s %-10s %-10s %-8s %-6s %-9s "
		       "%s\n",
		       "ID", "STATE", "SERVICE_ID", "MASK", "LOCAL_CID",
		       "REMOTE_CID", "PID", "UID", "CREDITS", "PEER_GID");
	do {
		n = cmc_list(ch, filter, &cursor, e);
		if (n < 0) {
			fprintf(stderr, "cmctl: list: %s\n", cmc_strerror(n));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			char gid[INET6_ADDRSTRLEN], credits[24];
			const char *state =
				cmc_state_str((enum cmc_state)e[i].state);

			gid_str(e[i].remote_gid, gid, sizeof(gid));
			if (json) {
				printf("%s\n  {\"id\": %u, \"state\": \"%s\", "
				       "\"service_id\": \"0x%016" PRIx64 "\", "
				       "\"service_mask\": \"0x%016" PRIx64
				       "\", \"local_comm_id\": %u, "
				       "\"remote_comm_id\": %u, "
				       "\"owner_pid\": %u, \"owner_uid\": %u, "
				       "\"backlog\": %u, "
				       "\"credits_in_use\": %u, "
				       "\"remote_gid\": \"%s\"}",
				       first ? "" : ",", e[i].id, state,
				       e[i].service_id, e[i].service_mask,
				       e[i].local_comm_id, e[i].remote_comm_id,
				       e[i].owner_pid, e[i].owner_uid,
				       e[i].backlog, e[i].credits_in_use, gid);
				first = false;
				continue;
			}
			if (e[i].backlog)
				snprintf(credits, sizeof(credits), "%u/%u",
					 e[i].credits_in_use, e[i].backlog);
			else
				snprintf(credits, sizeof(credits), "-");
			printf("%-10u %-14s 0x%016" PRIx64 " 0x%016" PRIx64
			       " %-10u %-10u %-8u %-6u %-9s %s\n",
			       e[i].id, state, e[i].service_id,
			       e[i].service_mask, e[i].local_comm_id,
			       e[i].remote_comm_id, e[i].owner_pid,
			       e[i].owner_uid, credits, gid);
		}
	} while (cursor);
	if (json)
		printf("%s]\n", first ? "" : "\n");
	return 0;
}

static int counters(struct cmc_channel *ch, bool json)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0;
	bool first = true;
	int n;

	if (json)
		printf("{");
	do {
		n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor, c);
		if (n < 0) {
			fprintf(stderr, "cmctl: counters: %s\n",
				cmc_strerror(n));
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *socket_path = NULL, *what;
	struct cmc_channel *ch;
	bool json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "s:jhV", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
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
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	what = argv[optind];
	if (strcmp(what, "listeners") && strcmp(what, "connections") &&
	    strcmp(what, "ids") && strcmp(what, "counters")) {
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
		rc = counters(ch, json);
	else
		rc = list(ch,
			  !strcmp(what, "listeners")   ? CMC_LIST_LISTENERS :
			  !strcmp(what, "connections") ? CMC_LIST_CONNECTIONS :
							 CMC_LIST_ALL,
			  json);
	cmc_close(ch);
	return rc;
}
