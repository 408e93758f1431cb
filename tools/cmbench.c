// SPDX-License-Identifier: MIT
/*
 * cmbench: connection setup and teardown through cmd, modelled on
 * rdma-core's cmtime (librdmacm/examples/cmtime.c).
 *
 *   cmbench -l [-S sid] [-b backlog] [-n count] [-s socket] [--qp]
 *              [-d dev [-i port] [-g gid_index]] [--daemon-pid P]...
 *   cmbench [-S sid] [-c count] [-m in_flight] [-s socket] [--qp]
 *           [-d dev [-i port] [-g gid_index]] [--hold S]
 *           [--sample L1,L2,...] [--probe K] [--daemon-pid P]... dest
 *
 * The client sets up all count connections, at most in_flight at a time,
 * holds them all (established) for --hold seconds, then tears them all
 * down, again at most in_flight at a time. Per connection it times
 *
 *   connect     REQ sent (cmc_connect) -> REP_RECEIVED
 *   establish   REP_RECEIVED -> RTU sent (cmc_rtu returned; with --qp the
 *               QP's RTR and RTS transitions come first)
 *   setup       connect + establish
 *   disconnect  DREQ sent (cmc_disconnect) -> DREP_RECEIVED
 *   total       setup + disconnect
 *
 * and prints min/median/p99/max of each step in microseconds, the setup
 * and teardown rates, and, for each --daemon-pid, that daemon's CPU time
 * (utime + stime of /proc/P/stat) and resident memory (VmRSS of
 * /proc/P/status) before, while holding and after, per connection. The
 * last line is "key=value ..." for scripts.
 *
 * The server (-l) accepts every REQ and times accept (REQ_RECEIVED ->
 * REP sent), establish (REP sent -> ESTABLISHED) and disconnect
 * (DREQ_RECEIVED -> DREP sent); it stops after -n connections are torn
 * down (0: on SIGINT/SIGTERM) and prints the same kind of table.
 *
 * --sample L1,L2,... (client) draws the scale curve: when L connections
 * are established, the client lets the ones in flight finish, samples the
 * daemons' RSS, and makes the next --probe K connections one at a time,
 * so that their connect latency is the cost of one handshake with L
 * connections in the tables (lookup cost), free of queueing.
 *
 * Without --qp (the default) no verbs calls are made: QP numbers are made
 * up (unique per run, see cmc_ping.c), so this runs on the simulated
 * fabric. With --qp each connection has a real RC QP, moved through
 * INIT/RTR/RTS with cmc_modify_qp() and to ERR before its DREQ or DREP,
 * as rdma_cm does for cmtime (scripts/bench-rxe.sh compares the two).
 *
 * -d names the local port the connections use (the client's REQs leave
 * from it, the server listens on it; -g: the port owning that GID of
 * the device, as the examples' -g does); without it the daemon picks.
 *
 * The library is driven without blocking: one poll() over cmc_fd(), then
 * cmc_get_event(ch, &ev, 0) until -EAGAIN. The requests themselves are
 * the library's synchronous round trips to the local daemon, unless
 * --async: then the channel is in asynchronous mode (cmc_set_async()),
 * requests are queued and go out in batches (cmc_flush() before every
 * poll()), a failed one comes back as a REQUEST_ERROR event and counts
 * as a failed connection, and the times above end when a request is
 * queued rather than answered.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmbench.h"

volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Open the channel; --async switches it to asynchronous mode. Says why
 * it failed.
 */
int open_channel(const struct opts *o, struct cmc_channel **chp)
{
	int r = cmc_open(o->socket, "cmbench", chp);

	if (r) {
		fprintf(stderr, "cannot reach cmd: %s\n", cmc_strerror(r));
		return r;
	}
	if (o->async) {
		r = cmc_set_async(*chp, 1);
		if (r)
			fprintf(stderr, "asynchronous mode: %s\n",
				cmc_strerror(r));
	}
	return r;
}

/*
 * poll() on the channel. Requests still queued (asynchronous mode) go
 * out first: an ACK_EVENT left in the queue would keep the daemon from
 * sending the very event we wait for. Returns poll()'s result (0 when
 * interrupted), or a negative errno: the flush's (the channel's) or
 * poll()'s.
 */
int poll_channel(struct cmc_channel *ch, int timeout_ms)
{
	struct pollfd pfd = { .fd = cmc_fd(ch), .events = POLLIN };
	int r = cmc_flush(ch);

	if (r)
		return r;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r;
}

static unsigned int errors_shown;

__attribute__((format(printf, 1, 2))) void conn_error(const char *fmt, ...)
{
	va_list ap;

	if (errors_shown++ >= 10) {
		if (errors_shown == 11)
			fprintf(stderr, "(further errors not shown)\n");
		return;
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The name of a request a REQUEST_ERROR event reports. */
const char *request_str(uint32_t request)
{
	switch (request) {
	case CMC_REQ_DESTROY_ID:
		return "DESTROY_ID";
	case CMC_REQ_SET_CONTEXT:
		return "SET_CONTEXT";
	case CMC_REQ_CONNECT:
		return "CONNECT";
	case CMC_REQ_ACCEPT:
		return "ACCEPT";
	case CMC_REQ_REJECT:
		return "REJECT";
	case CMC_REQ_RTU:
		return "RTU";
	case CMC_REQ_DISCONNECT:
		return "DISCONNECT";
	case CMC_REQ_ACK_EVENT:
		return "ACK_EVENT";
	default:
		return "request";
	}
}

/* ---------------------------------------------------------------------
 * Verbs, for --qp only
 */

int verbs_open(const char *dev, struct verbs *v)
{
	struct ibv_device **list;
	int n, i;

	memset(v, 0, sizeof(*v));
	list = ibv_get_device_list(&n);
	if (!list || !n) {
		fprintf(stderr, "--qp: no RDMA device\n");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < n; i++)
		if (!dev || !strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (i == n) {
		fprintf(stderr, "--qp: no device %s\n", dev);
		ibv_free_device_list(list);
		return -ENODEV;
	}
	v->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!v->ctx)
		return -errno;
	v->pd = ibv_alloc_pd(v->ctx);
	/* One CQ for all QPs: nothing is ever posted, as in cmtime. */
	v->cq = v->pd ? ibv_create_cq(v->ctx, 16, NULL, NULL, 0) : NULL;
	if (!v->cq) {
		fprintf(stderr, "--qp: PD/CQ: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

void verbs_close(struct verbs *v)
{
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
}

struct ibv_qp *verbs_qp(struct verbs *v)
{
	struct ibv_qp_init_attr a = {
		.send_cq = v->cq,
		.recv_cq = v->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(v->pd, &a);
}

/*
 * rdma_disconnect() moves the QP to ERR before it sends the DREQ (or
 * DREP), so cmtime's disconnect step includes that verbs call: do the
 * same, for a fair comparison. A failure here is not the CM's; ignore it.
 */
void verbs_qp_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (qp)
		ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/*
 * The local port for the daemon: -d [-i]: that device's port (any_port:
 * all its ports, for a listener); -g: the port owning that GID (on RoCE
 * this also picks IPv4 vs IPv6 and v1 vs v2). Neither: the device our
 * QPs are on (--qp; the CM's path must be on the QP's device), or any
 * port (the daemon picks).
 */
int port_sel(const struct opts *o, const struct verbs *v, bool any_port,
	     struct cmc_port_sel *sel)
{
	union ibv_gid gid;

	memset(sel, 0, sizeof(*sel));
	if (o->gid_index >= 0) {
		if (ibv_query_gid(v->ctx, o->ib_port, o->gid_index, &gid)) {
			fprintf(stderr, "cannot read GID %d of %s port %u\n",
				o->gid_index,
				ibv_get_device_name(v->ctx->device),
				o->ib_port);
			return -EINVAL;
		}
		sel->kind = CMC_SEL_GID;
		memcpy(sel->gid, gid.raw, sizeof(sel->gid));
		return 0;
	}
	if (!o->dev && !v->ctx) {
		sel->kind = CMC_SEL_ANY;
		return 0;
	}
	sel->kind = CMC_SEL_PORT;
	sel->port_num = any_port ? 0 : o->ib_port;
	snprintf(sel->dev_name, sizeof(sel->dev_name), "%s",
		 o->dev ? o->dev : ibv_get_device_name(v->ctx->device));
	return 0;
}

/* Verbs are needed for real QPs, and to read a GID for -g. */
bool need_verbs(const struct opts *o)
{
	return o->qp || o->gid_index >= 0;
}

/* Made-up QPNs, unique within a run (see cmc_ping.c): 24 bits, >= 2. */
uint32_t fake_qpn(void)
{
	static uint32_t next;

	if (!next)
		next = 2 + (uint32_t)lrand48() % (0xffffff - 1);
	next = next >= 0xffffff ? 2 : next + 1;
	return next;
}

/* ---------------------------------------------------------------------
 * Options
 */

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -l [options]        server\n"
		"       %s [options] dest      client (dest: lid:N, GID, IP)\n"
		"  -l              listen (server)\n"
		"  -s PATH         cmd socket (default $CMD_SOCKET or %s)\n"
		"  -S SID          service id (default 0x%" PRIx64 ")\n"
		"  -c N            client: connections (default %u)\n"
		"  -m M            client: at most M in flight (default %u)\n"
		"  -n N            server: exit after N torn down (default 0: "
		"on a signal)\n"
		"  -b B            server: listen backlog (default %u)\n"
		"  -q, --qp        real RC QPs (libibverbs) instead of made-up "
		"QPNs\n"
		"  -A, --async     the library's asynchronous mode (requests "
		"queued,\n"
		"                  sent in batches; failures as REQUEST_ERROR "
		"events)\n"
		"  -d DEV          the local RDMA device: the REQs leave from "
		"it, the\n"
		"                  listener serves it, the QPs (--qp) live on "
		"it\n"
		"                  (default: the daemon picks; --qp: the first "
		"device)\n"
		"  -i, --ib-port N -d's port (default 1)\n"
		"  -g, --gid-index I  the port owning GID I of -d/-i instead\n"
		"  -H, --hold S    client: hold all connections S seconds "
		"(default 0)\n"
		"  -L, --sample L1,L2,...  client: scale curve levels\n"
		"  -P, --probe K   client: connections probed one at a time "
		"per "
		"level (default %u)\n"
		"  -T, --stall S   give up after S s without an event (default "
		"%u)\n"
		"  -p, --daemon-pid P  report this daemon's CPU and RSS "
		"(repeat)\n",
		prog, prog, CMC_DEFAULT_SOCKET, (uint64_t)BENCH_DEFAULT_SERVICE,
		BENCH_DEFAULT_COUNT, BENCH_DEFAULT_IN_FLIGHT,
		BENCH_DEFAULT_BACKLOG, BENCH_DEFAULT_PROBE,
		BENCH_DEFAULT_STALL_S);
}

static int parse_u(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end || *v > max ? -EINVAL : 0;
}

static int parse_samples(char *s, struct opts *o)
{
	unsigned long long v;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nsamples == BENCH_MAX_SAMPLES ||
		    parse_u(tok, UINT_MAX, &v) || !v ||
		    (o->nsamples && v <= o->sample[o->nsamples - 1]))
			return -EINVAL;
		o->sample[o->nsamples++] = (unsigned int)v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "qp", no_argument, NULL, 'q' },
		{ "async", no_argument, NULL, 'A' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "hold", required_argument, NULL, 'H' },
		{ "sample", required_argument, NULL, 'L' },
		{ "probe", required_argument, NULL, 'P' },
		{ "stall", required_argument, NULL, 'T' },
		{ "daemon-pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long long v;
	struct opts o = {
		.service_id = BENCH_DEFAULT_SERVICE,
		.count = BENCH_DEFAULT_COUNT,
		.in_flight = BENCH_DEFAULT_IN_FLIGHT,
		.backlog = BENCH_DEFAULT_BACKLOG,
		.probe = BENCH_DEFAULT_PROBE,
		.stall_s = BENCH_DEFAULT_STALL_S,
		.gid_index = -1,
		.ib_port = 1,
	};
	bool count_set = false;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "ls:S:c:m:n:b:qAd:i:g:H:L:P:T:p:h",
				lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = true;
			break;
		case 's':
			o.socket = optarg;
			break;
		case 'S':
			if (parse_u(optarg, UINT64_MAX, &v))
				goto bad;
			o.service_id = v;
			break;
		case 'c':
		case 'n':
			if (parse_u(optarg, 10000000, &v) || (c == 'c' && !v))
				goto bad;
			o.count = (unsigned int)v;
			count_set = true;
			break;
		case 'm':
			if (parse_u(optarg, 10000000, &v) || !v)
				goto bad;
			o.in_flight = (unsigned int)v;
			break;
		case 'b':
			if (parse_u(optarg, UINT_MAX, &v) || !v)
				goto bad;
			o.backlog = (unsigned int)v;
			break;
		case 'q':
			o.qp = true;
			break;
		case 'A':
			o.async = true;
			break;
		case 'd':
			o.dev = optarg;
			break;
		case 'i':
			if (parse_u(optarg, 255, &v) || !v)
				goto bad;
			o.ib_port = (uint8_t)v;
			break;
		case 'g':
			if (parse_u(optarg, INT_MAX, &v))
				goto bad;
			o.gid_index = (int)v;
			break;
		case 'H':
		case 'T': {
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || d < 0)
				goto bad;
			if (c == 'H')
				o.hold_s = d;
			else
				o.stall_s = d;
			break;
		}
		case 'L':
			if (parse_samples(optarg, &o))
				goto bad;
			break;
		case 'P':
			if (parse_u(optarg, 1000000, &v))
				goto bad;
			o.probe = (unsigned int)v;
			break;
		case 'p':
			if (o.ndaemons == BENCH_MAX_DAEMONS ||
			    parse_u(optarg, INT_MAX, &v) || !v)
				goto bad;
			o.daemon_pid[o.ndaemons++] = (int)v;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			goto bad;
		}
	}
	if (o.listen) {
		if (optind != argc)
			goto bad;
		if (!count_set)
			o.count = 0;
	} else {
		if (optind != argc - 1)
			goto bad;
		o.dst = argv[optind];
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	srand48((long)(now_ns() ^ (uint64_t)getpid()));
	setvbuf(stdout, NULL, _IOLBF, 0);
	return o.listen ? run_server(&o) : run_client(&o);
bad:
	usage(stderr, argv[0]);
	return 2;
}
