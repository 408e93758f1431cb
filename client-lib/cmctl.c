// SPDX-License-Identifier: MIT
/*
 * cmctl: look into a running cmd over its client socket.
 *
 *   cmctl [OPTIONS] listeners      listeners, credits, held REQs
 *   cmctl [OPTIONS] connections    ids, port, peer, QPs, state, owner
 *   cmctl [OPTIONS] ids | list     both
 *   cmctl [OPTIONS] counters [--port DEV/PORT | --client]
 *                                  the daemon's counters, one port's, or
 *                                  this client's
 *   cmctl [OPTIONS] metrics [--port DEV/PORT | --client]
 *                 [--format openmetrics|prometheus]
 *                                  the same as OpenMetrics text
 *   cmctl [OPTIONS] ports          the ports the daemon serves
 *   cmctl [OPTIONS] capture start FILE | capture stop
 *                                  MAD capture at run time
 *   cmctl [OPTIONS] paths [--flush [--port DEV/PORT]]
 *                                  the SA path cache; flush it
 *
 * OPTIONS: -s SOCKET, --json, --timeout SECONDS. An unprivileged user
 * sees its own ids and its own (--client) counters; root and the
 * daemon's admin group see every client's ids, the global and per-port
 * counters, and may start and stop a capture or flush the path cache.
 * Ports and cached paths are the same for everyone.
 *
 * Exit status: 0 done, 1 the daemon refused or could not be reached, 2
 * a mistake on the command line, 3 no answer within the timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cmclient.h"
#include "cmctl.h"
#include "cmd_config.h"
#include "util.h"

#define CMCTL_EXIT_FAIL 1
#define CMCTL_EXIT_USAGE 2
#define CMCTL_EXIT_TIMEOUT 3
/* A few seconds: a daemon that answers at all answers in microseconds,
 * and a loaded machine still in well under a second. */
#define CMCTL_TIMEOUT_DEFAULT 5.0

static const char *sock_shown; /* the socket, for messages */
static double timeout_s = CMCTL_TIMEOUT_DEFAULT;
/* What SIGALRM writes: built before the alarm is armed. */
static char alarm_msg[PATH_MAX + 96];
static size_t alarm_len;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmctl [OPTIONS] listeners|connections|ids|list|ports\n"
		"       cmctl [OPTIONS] counters [--port DEV/PORT | --client]\n"
		"       cmctl [OPTIONS] metrics [--port DEV/PORT | --client]\n"
		"               [--format openmetrics|prometheus]\n"
		"       cmctl [OPTIONS] capture start FILE | capture stop\n"
		"       cmctl [OPTIONS] paths [--flush [--port DEV/PORT]]\n"
		"       cmctl --help | --version\n"
		"options:\n"
		"  -s, --socket PATH      the daemon's socket (default: "
		"$CMD_SOCKET or %s)\n"
		"  -j, --json             JSON instead of a table\n"
		"  -t, --timeout SECONDS  give up on a daemon that does not "
		"answer (default %g)\n",
		CMC_DEFAULT_SOCKET, CMCTL_TIMEOUT_DEFAULT);
}

/* A mistake on the command line: say which, and where help is. */
static int __attribute__((format(printf, 1, 2))) bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("cmctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cmctl --help' for more information.\n", stderr);
	return CMCTL_EXIT_USAGE;
}

static int no_answer(void)
{
	fputs(alarm_msg, stderr);
	return CMCTL_EXIT_TIMEOUT;
}

/* A request failed: a timeout is the daemon's silence, else its answer. */
int cmctl_failed(const char *what, int err)
{
	if (err == -ETIMEDOUT)
		return no_answer();
	/*
	 * LIST's entry grew within protocol version 1 (proto/cmp.h), so a
	 * cmctl and a daemon from either side of that change agree in HELLO
	 * and then cannot read each other's LIST: the window of an upgrade
	 * in place between the package's unpacking and the restart.
	 */
	const char *why = cmc_last_error();
	size_t n = strcspn(what, " "); /* "capture start": "capture" */

	/* The daemon's reason names the check ("capture: cannot open
	 * PATH: ..."); cmc_strerror() only the errno. */
	if (*why && !strncmp(why, what, n) && why[n] == ':')
		fprintf(stderr, "cmctl: %s", why);
	else if (*why)
		fprintf(stderr, "cmctl: %s: %s", what, why);
	else
		fprintf(stderr, "cmctl: %s: %s", what, cmc_strerror(err));
	fprintf(stderr, "%s\n",
		err == -EPERM && !strncmp(what, "counters", 8) ?
			" (root or the daemon's admin group only; try "
			"--client)" :
		err == -EPERM && !*why ?
			" (root or the daemon's admin group only)" :
		err == -EPROTO ? " (a cmd older or newer than this cmctl? "
				 "restart cmd after an upgrade)" :
				 "");
	return CMCTL_EXIT_FAIL;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, alarm_msg, alarm_len) < 0) {
		/* Nothing left to tell. */
	}
	_exit(CMCTL_EXIT_TIMEOUT);
}

/*
 * Connecting and HELLO happen inside cmc_open(), which waits as long as
 * the daemon takes: a stopped daemon's socket still accepts (the kernel
 * does that), so only a timer can tell. Once the channel is open, the
 * library's request timeout bounds every request on its own.
 */
static void alarm_arm(double s)
{
	struct itimerval it = { 0 };

	it.it_value.tv_sec = (time_t)s;
	it.it_value.tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void alarm_disarm(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_REAL, &it, NULL);
}

void cmctl_gid_str(const uint8_t gid[16], char *buf, size_t size)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

/* The daemon's ports, read once (for the port index of LIST entries). */
static struct cmc_port_info *port_tab;
static unsigned int port_n;
static bool port_loaded;

int cmctl_ports_load(struct cmc_channel *ch)
{
	static struct cmc_port_info batch[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;
	int n;

	if (port_loaded)
		return 0;
	do {
		struct cmc_port_info *t;

		n = cmc_ports(ch, &cursor, batch);
		if (n < 0)
			return n;
		t = realloc(port_tab,
			    (port_n + (unsigned int)n + 1) * sizeof(*t));
		if (!t)
			return -ENOMEM;
		port_tab = t;
		memcpy(port_tab + port_n, batch, (size_t)n * sizeof(*t));
		port_n += (unsigned int)n;
	} while (n > 0 && cursor);
	port_loaded = true;
	return 0;
}

const struct cmc_port_info *cmctl_port(unsigned int i)
{
	return i < port_n ? &port_tab[i] : NULL;
}

/* The device of the port the daemon numbers index, or "?". */
static const char *port_dev(uint16_t index)
{
	for (unsigned int i = 0; i < port_n; i++)
		if (port_tab[i].port_index == index)
			return port_tab[i].dev_name;
	return "?";
}

/* A connection's port as DEV/PORT, or "-" before it has one. */
static void conn_port_str(const struct cmc_list_entry *e, char *buf,
			  size_t size)
{
	if (e->port_num)
		snprintf(buf, size, "%s/%u", port_dev(e->port_index),
			 e->port_num);
	else
		snprintf(buf, size, "-");
}

/*
 * The last column: a connection's peer, by what addresses it (its GID
 * when the path has a GRH, RoCE always; else "lid:N"); where a listener
 * listens: "*" (every port), DEV/PORT or DEV (every port of DEV), or
 * its GID.
 */
static void where_str(const struct cmc_list_entry *e, char *buf, size_t size)
{
	if (e->state != CMC_STATE_LISTEN) {
		if (e->grh || !e->remote_lid)
			cmctl_gid_str(e->remote_gid, buf, size);
		else
			snprintf(buf, size, "lid:%u", e->remote_lid);
		return;
	}
	switch ((enum cmc_sel)e->sel) {
	case CMC_SEL_ANY:
		snprintf(buf, size, "*");
		return;
	case CMC_SEL_PORT:
		if (e->sel_port_num)
			snprintf(buf, size, "%s/%u",
				 port_dev(e->sel_port_index), e->sel_port_num);
		else
			snprintf(buf, size, "%s", port_dev(e->sel_port_index));
		return;
	case CMC_SEL_GID:
		cmctl_gid_str(e->listen_gid, buf, size);
		return;
	}
	snprintf(buf, size, "?");
}

static json_object *cmctl_json_hex(uint64_t v, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%0*" PRIx64, width, v);
	return json_object_new_string(buf);
}

void cmctl_json_print(json_object *o)
{
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static json_object *list_json(const struct cmc_list_entry *e, const char *where)
{
	json_object *o = json_object_new_object();
	char port[CMC_DEV_NAME_SIZE + 8];
	bool listener = e->state == CMC_STATE_LISTEN;

	json_object_object_add(o, "id", json_object_new_uint64(e->id));
	json_object_object_add(o, "state",
			       json_object_new_string(cmc_state_str(
				       (enum cmc_state)e->state)));
	json_object_object_add(o, "service_id",
			       cmctl_json_hex(e->service_id, 16));
	json_object_object_add(o, "service_mask",
			       cmctl_json_hex(e->service_mask, 16));
	json_object_object_add(o, "local_comm_id",
			       cmctl_json_hex(e->local_comm_id, 8));
	json_object_object_add(o, "remote_comm_id",
			       cmctl_json_hex(e->remote_comm_id, 8));
	json_object_object_add(o, "owner_pid",
			       json_object_new_uint64(e->owner_pid));
	json_object_object_add(o, "owner_uid",
			       json_object_new_uint64(e->owner_uid));
	json_object_object_add(o, "owner_comm",
			       json_object_new_string(e->owner_comm));
	if (listener) {
		json_object_object_add(o, "backlog",
				       json_object_new_uint64(e->backlog));
		json_object_object_add(
			o, "credits_in_use",
			json_object_new_uint64(e->credits_in_use));
		json_object_object_add(o, "held_reqs",
				       json_object_new_uint64(e->held_reqs));
		json_object_object_add(o, "listen_on",
				       json_object_new_string(where));
		return o;
	}
	conn_port_str(e, port, sizeof(port));
	json_object_object_add(
		o, "port", e->port_num ? json_object_new_string(port) : NULL);
	json_object_object_add(o, "local_qpn", cmctl_json_hex(e->local_qpn, 6));
	json_object_object_add(o, "remote_qpn",
			       cmctl_json_hex(e->remote_qpn, 6));
	json_object_object_add(o, "remote_lid",
			       json_object_new_uint64(e->remote_lid));
	cmctl_gid_str(e->remote_gid, port, sizeof(port));
	json_object_object_add(o, "remote_gid", json_object_new_string(port));
	json_object_object_add(o, "peer", json_object_new_string(where));
	return o;
}

static int list(struct cmc_channel *ch, enum cmc_list_filter filter, bool json)
{
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	json_object *arr = json ? json_object_new_array() : NULL;
	uint64_t cursor = 0;
	int n;

	n = cmctl_ports_load(ch);
	if (n < 0) {
		json_object_put(arr);
		return cmctl_failed("ports", n);
	}
	if (!json)
		printf("%-10s %-14s %-18s %-18s %-10s %-10s %-12s %-8s %-8s "
		       "%-8s %-15s %-6s %-11s %-6s %s\n",
		       "ID", "STATE", "SERVICE_ID", "MASK", "LOCAL_CID",
		       "REMOTE_CID", "PORT", "LQPN", "RQPN", "PID", "COMM",
		       "UID", "CREDITS", "HELD", "PEER|ON");
	do {
		n = cmc_list(ch, filter, &cursor, e);
		if (n < 0) {
			json_object_put(arr);
			return cmctl_failed("list", n);
		}
		for (int i = 0; i < n; i++) {
			char where[INET6_ADDRSTRLEN + CMC_DEV_NAME_SIZE];
			char credits[24], held[12], lqpn[12], rqpn[12];
			char port[CMC_DEV_NAME_SIZE + 8];
			const struct cmc_list_entry *x = &e[i];

			where_str(x, where, sizeof(where));
			if (json) {
				json_object_array_add(arr, list_json(x, where));
				continue;
			}
			/* Credits used/backlog and held REQs: listeners;
			 * port and QPs: connections. */
			if (x->state == CMC_STATE_LISTEN) {
				snprintf(credits, sizeof(credits), "%u/%u",
					 x->credits_in_use, x->backlog);
				snprintf(held, sizeof(held), "%u",
					 x->held_reqs);
				snprintf(port, sizeof(port), "-");
				snprintf(lqpn, sizeof(lqpn), "-");
				snprintf(rqpn, sizeof(rqpn), "-");
			} else {
				snprintf(credits, sizeof(credits), "-");
				snprintf(held, sizeof(held), "-");
				conn_port_str(x, port, sizeof(port));
				snprintf(lqpn, sizeof(lqpn), "0x%06x",
					 x->local_qpn);
				snprintf(rqpn, sizeof(rqpn), "0x%06x",
					 x->remote_qpn);
			}
			printf("0x%08x %-14s 0x%016" PRIx64 " 0x%016" PRIx64
			       " 0x%08x 0x%08x %-12s %-8s %-8s %-8u %-15s "
			       "%-6u %-11s %-6s %s\n",
			       x->id, cmc_state_str((enum cmc_state)x->state),
			       x->service_id, x->service_mask, x->local_comm_id,
			       x->remote_comm_id, port, lqpn, rqpn,
			       x->owner_pid,
			       x->owner_comm[0] ? x->owner_comm : "-",
			       x->owner_uid, credits, held, where);
		}
	} while (cursor);
	if (json)
		cmctl_json_print(arr);
	return 0;
}

static int counters(struct cmc_channel *ch, enum cmc_counter_scope scope,
		    const char *dev, uint8_t port, bool json)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	json_object *obj = json ? json_object_new_object() : NULL;
	uint64_t cursor = 0;
	int n;

	do {
		n = cmc_counters(ch, scope, dev, port, &cursor, c);
		if (n < 0) {
			json_object_put(obj);
			return cmctl_failed("counters", n);
		}
		for (int i = 0; i < n; i++) {
			if (json)
				json_object_object_add(
					obj, c[i].name,
					json_object_new_uint64(c[i].value));
			else
				printf("%-32s %" PRIu64 "\n", c[i].name,
				       c[i].value);
		}
	} while (cursor);
	if (json)
		cmctl_json_print(obj);
	return 0;
}

/*
 * --port DEV/PORT, the notation `cmctl ports` prints (and rdma's
 * "mlx5_0/1"); DEV:PORT, the old one, is still taken. Device names may
 * hold neither '/' nor ':' as the kernel names them, so the last one
 * splits.
 */
int cmctl_parse_port(const char *arg, char *dev, size_t size, uint8_t *port)
{
	const char *sep = strrchr(arg, '/');
	unsigned long n;
	char *end;

	if (!sep)
		sep = strrchr(arg, ':');
	if (!sep || sep == arg || (size_t)(sep - arg) >= size)
		return -1;
	errno = 0;
	n = strtoul(sep + 1, &end, 10);
	if (!sep[1] || *end || errno || n < 1 || n > 255 || sep[1] == '+' ||
	    sep[1] == '-' || sep[1] == ' ')
		return -1;
	memcpy(dev, arg, (size_t)(sep - arg));
	dev[sep - arg] = '\0';
	*port = (uint8_t)n;
	return 0;
}

/* capture start FILE | capture stop; a relative FILE is made absolute
 * here, since the daemon opens it in its own directory. */
static int capture(struct cmc_channel *ch, int argc, char **argv, bool json)
{
	char path[PATH_MAX], cwd[PATH_MAX];
	const char *file = NULL;
	json_object *o;
	int rc;

	if (!strcmp(argv[0], "start")) {
		file = argv[1];
		if (file[0] != '/') {
			if (!getcwd(cwd, sizeof(cwd)) ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
					     file) >= sizeof(path)) {
				fprintf(stderr, "cmctl: %s: path too long\n",
					file);
				return CMCTL_EXIT_FAIL;
			}
			file = path;
		}
	}
	(void)argc;
	rc = cmc_capture(ch, file);
	if (rc)
		return cmctl_failed(file ? "capture start" : "capture stop",
				    rc);
	if (json) {
		o = json_object_new_object();
		json_object_object_add(
			o, "capture",
			json_object_new_string(file ? "started" : "stopped"));
		if (file)
			json_object_object_add(o, "path",
					       json_object_new_string(file));
		cmctl_json_print(o);
	} else if (file) {
		printf("capture started: %s\n", file);
	} else {
		printf("capture stopped\n");
	}
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

static json_object *port_json(const struct cmc_port_info *p)
{
	unsigned int ng = p->n_gids < CMC_PORT_GIDS ? p->n_gids : CMC_PORT_GIDS;
	json_object *o = json_object_new_object();
	json_object *gids = json_object_new_array();
	char name[CMC_DEV_NAME_SIZE + 8];

	snprintf(name, sizeof(name), "%.*s/%u", CMC_DEV_NAME_SIZE - 1,
		 p->dev_name, p->port_num);
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "dev", json_object_new_string(p->dev_name));
	json_object_object_add(o, "port", json_object_new_int(p->port_num));
	json_object_object_add(o, "index", json_object_new_int(p->port_index));
	json_object_object_add(o, "up", json_object_new_boolean(p->up));
	json_object_object_add(
		o, "state", json_object_new_string(port_state_str(p->state)));
	json_object_object_add(o, "link_layer",
			       json_object_new_string(link_str(p->link_layer)));
	json_object_object_add(
		o, "active_mtu",
		json_object_new_int((int)mtu_bytes(p->active_mtu)));
	json_object_object_add(o, "lid", json_object_new_int(p->lid));
	json_object_object_add(o, "lmc", json_object_new_int(p->lmc));
	json_object_object_add(o, "sm_lid", json_object_new_int(p->sm_lid));
	json_object_object_add(o, "sm_sl", json_object_new_int(p->sm_sl));
	json_object_object_add(o, "node_guid",
			       cmctl_json_hex(p->node_guid, 16));
	json_object_object_add(o, "port_guid",
			       cmctl_json_hex(p->port_guid, 16));
	json_object_object_add(o, "n_gids", json_object_new_int(p->n_gids));
	for (unsigned int g = 0; g < ng; g++) {
		json_object *go = json_object_new_object();
		char gid[INET6_ADDRSTRLEN];

		cmctl_gid_str(p->gids[g].gid, gid, sizeof(gid));
		json_object_object_add(go, "index",
				       json_object_new_int(p->gids[g].index));
		json_object_object_add(
			go, "type",
			json_object_new_string(gid_type_str(p->gids[g].type)));
		json_object_object_add(go, "gid", json_object_new_string(gid));
		json_object_array_add(gids, go);
	}
	json_object_object_add(o, "gids", gids);
	return o;
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
		cmctl_gid_str(p->gids[0].gid, gid, sizeof(gid));
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
		cmctl_gid_str(p->gids[g].gid, gid, sizeof(gid));
		printf("%-103s %-4u %-6s %s\n", "", p->gids[g].index,
		       gid_type_str(p->gids[g].type), gid);
	}
	if (p->n_gids > ng)
		printf("%-103s +%u more\n", "", p->n_gids - ng);
}

static int ports(struct cmc_channel *ch, bool json)
{
	json_object *arr;
	int rc = cmctl_ports_load(ch);

	if (rc)
		return cmctl_failed("ports", rc);
	if (json) {
		arr = json_object_new_array();
		for (unsigned int i = 0; i < port_n; i++)
			json_object_array_add(arr, port_json(&port_tab[i]));
		cmctl_json_print(arr);
		return 0;
	}
	printf("%-12s %-5s %-3s %-12s %-4s %-5s %-6s %-6s %-18s %-18s "
	       "%-4s %-4s %-6s %s\n",
	       "PORT", "INDEX", "UP", "STATE", "LINK", "MTU", "LID", "SM_LID",
	       "NODE_GUID", "PORT_GUID", "GIDS", "GIDX", "GTYPE", "GID");
	for (unsigned int i = 0; i < port_n; i++)
		port_text(&port_tab[i]);
	return 0;
}

enum cmctl_cmd {
	CMCTL_LISTENERS,
	CMCTL_CONNECTIONS,
	CMCTL_IDS,
	CMCTL_LIST,
	CMCTL_COUNTERS,
	CMCTL_METRICS,
	CMCTL_PORTS,
	CMCTL_CAPTURE,
	CMCTL_PATHS,
	CMCTL_CMD__COUNT,
};

static const char *const cmd_names[CMCTL_CMD__COUNT] = {
	[CMCTL_LISTENERS] = "listeners",
	[CMCTL_CONNECTIONS] = "connections",
	[CMCTL_IDS] = "ids",
	[CMCTL_LIST] = "list",
	[CMCTL_COUNTERS] = "counters",
	[CMCTL_METRICS] = "metrics",
	[CMCTL_PORTS] = "ports",
	[CMCTL_CAPTURE] = "capture",
	[CMCTL_PATHS] = "paths",
};

static int cmd_lookup(const char *name)
{
	for (unsigned int i = 0; i < CMCTL_CMD__COUNT; i++)
		if (!strcmp(name, cmd_names[i]))
			return (int)i;
	return -1;
}

static int parse_timeout(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v) || v <= 0 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "client", no_argument, NULL, 'C' },
		{ "format", required_argument, NULL, 'f' },
		{ "flush", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum cmc_counter_scope scope = CMC_COUNTERS_GLOBAL;
	const char *socket_path = NULL, *scope_opt = NULL;
	char dev[CMC_DEV_NAME_SIZE] = "";
	struct cmc_channel *ch;
	uint8_t port = 0;
	bool json = false, prometheus = false, format = false, flush = false;
	int opt, rc, nargs, what;
	char **args;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":s:jt:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			if (parse_timeout(optarg, &timeout_s))
				return bad_usage("--timeout wants a number of "
						 "seconds above 0, not '%s'",
						 optarg);
			break;
		case 'p':
			if (cmctl_parse_port(optarg, dev, sizeof(dev), &port))
				return bad_usage("--port wants DEV/PORT (e.g. "
						 "mlx5_0/1), not '%s'",
						 optarg);
			scope = CMC_COUNTERS_PORT;
			scope_opt = "--port";
			break;
		case 'f':
			if (!strcmp(optarg, "prometheus"))
				prometheus = true;
			else if (strcmp(optarg, "openmetrics"))
				return bad_usage("--format wants openmetrics "
						 "or prometheus, not '%s'",
						 optarg);
			format = true;
			break;
		case 'F':
			flush = true;
			break;
		case 'C':
			scope = CMC_COUNTERS_CLIENT;
			scope_opt = "--client";
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("cmctl %s\n", CMD_VERSION);
			return 0;
		case ':':
			return bad_usage("option '%s' needs a value",
					 argv[optind - 1]);
		default:
			if (optopt)
				return bad_usage("unknown option '-%c'",
						 optopt);
			return bad_usage("unknown option '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return bad_usage("no command given");
	what = cmd_lookup(argv[optind]);
	if (what < 0)
		return bad_usage("unknown command '%s'", argv[optind]);
	args = argv + optind + 1;
	nargs = argc - optind - 1;
	if (what == CMCTL_CAPTURE) {
		if (!nargs)
			return bad_usage("capture wants 'start FILE' or "
					 "'stop'");
		if (strcmp(args[0], "start") && strcmp(args[0], "stop"))
			return bad_usage("unknown capture action '%s' (start "
					 "FILE or stop)",
					 args[0]);
		if (!strcmp(args[0], "start") && nargs != 2)
			return bad_usage("capture start wants one FILE");
		if (!strcmp(args[0], "stop") && nargs != 1)
			return bad_usage("capture stop takes nothing more, "
					 "not '%s'",
					 args[1]);
	} else if (nargs) {
		return bad_usage("'%s' takes no arguments, not '%s'",
				 cmd_names[what], args[0]);
	}
	if (flush && what != CMCTL_PATHS)
		return bad_usage("--flush goes with 'paths' only");
	if (what == CMCTL_PATHS && scope == CMC_COUNTERS_PORT && !flush)
		return bad_usage("--port goes with 'paths --flush' only");
	if (scope_opt && what != CMCTL_COUNTERS && what != CMCTL_METRICS &&
	    (what != CMCTL_PATHS || scope != CMC_COUNTERS_PORT))
		return bad_usage("%s goes with 'counters', 'metrics' and "
				 "'paths --flush' only",
				 scope_opt);
	if (format && what != CMCTL_METRICS)
		return bad_usage("--format goes with 'metrics' only");
	if (json && what == CMCTL_METRICS)
		return bad_usage("--json does not go with 'metrics' (it "
				 "prints OpenMetrics text)");

	sock_shown = socket_path && *socket_path ? socket_path :
		     getenv("CMD_SOCKET") && *getenv("CMD_SOCKET") ?
						   getenv("CMD_SOCKET") :
						   CMC_DEFAULT_SOCKET;
	snprintf(alarm_msg, sizeof(alarm_msg),
		 "cmctl: no answer from cmd at %.*s within %g s\n",
		 PATH_MAX - 1, sock_shown, timeout_s);
	alarm_len = strlen(alarm_msg);
	signal(SIGALRM, on_alarm);
	alarm_arm(timeout_s);
	rc = cmc_open(socket_path, "cmctl", &ch);
	alarm_disarm();
	if (rc == -ETIMEDOUT)
		return no_answer();
	if (rc) {
		if (*cmc_last_error()) /* "cannot reach cmd at PATH: ..." */
			fprintf(stderr, "cmctl: %s\n", cmc_last_error());
		else
			fprintf(stderr, "cmctl: cannot reach cmd at %s: %s\n",
				sock_shown, cmc_strerror(rc));
		return CMCTL_EXIT_FAIL;
	}
	cmc_set_request_timeout(ch, (int)ceil(timeout_s * 1000));
	switch ((enum cmctl_cmd)what) {
	case CMCTL_LISTENERS:
		rc = list(ch, CMC_LIST_LISTENERS, json);
		break;
	case CMCTL_CONNECTIONS:
		rc = list(ch, CMC_LIST_CONNECTIONS, json);
		break;
	case CMCTL_IDS:
	case CMCTL_LIST:
		rc = list(ch, CMC_LIST_ALL, json);
		break;
	case CMCTL_COUNTERS:
		rc = counters(ch, scope,
			      scope == CMC_COUNTERS_PORT ? dev : NULL, port,
			      json);
		break;
	case CMCTL_METRICS:
		rc = cmctl_metrics(ch, scope,
				   scope == CMC_COUNTERS_PORT ? dev : NULL,
				   port, prometheus);
		break;
	case CMCTL_PORTS:
		rc = ports(ch, json);
		break;
	case CMCTL_CAPTURE:
		rc = capture(ch, nargs, args, json);
		break;
	case CMCTL_PATHS:
		rc = cmctl_paths(ch, json, flush,
				 scope == CMC_COUNTERS_PORT ? dev : NULL, port);
		break;
	case CMCTL_CMD__COUNT:
		rc = CMCTL_EXIT_USAGE;
		break;
	}
	cmc_close(ch);
	free(port_tab);
	return rc;
}
