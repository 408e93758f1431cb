// SPDX-License-Identifier: MIT
/*
 * xport_umad_test: the umad transport on real soft-RoCE (rxe on lo), run
 * inside the VM by tests/vm/run.sh.
 *
 *   xport_umad_test [-d DEV] [-g GID_INDEX]   (default rxe0, 1)
 *     opens DEV port 1 through xport_umad, checks its attributes (ACTIVE,
 *     RoCE, GID GID_INDEX = ::ffff:127.0.0.1 RoCE v2, P_Key 0xffff), sends
 *     a REQ built by cm_mad_encode to itself via that GID and receives it
 *     with the right from-address; the same to ::1 (the source GID follows
 *     the destination's family); a send to the fe80 GID (no route on lo)
 *     must fail synchronously and be counted, and the transport go on.
 *     Then, reopened with a libev loop: a send refused as a duplicate TID
 *     (a twin written straight to the umad fd still pending) returns at
 *     once and goes out later, a later one of its TID behind it, one of
 *     another TID at once; past ~1 s it is given up and counted, and the
 *     loop turns meanwhile.
 *   xport_umad_test --kernel-cm [-d DEV]
 *     loads ib_cm (if it is not), then the open must refuse DEV port 1
 *     with exactly the ownership message and fail, serving no port.
 *   xport_umad_test --partial   (run.sh --two-devices --with-kernel-cm)
 *     holds rxe0 through one transport, lets the harness load ib_cm (which
 *     then attaches to rxe1 only), and checks that a second open of rxe0 +
 *     rxe1 names the right owner of each (another agent / ib_cm), and that
 *     once rxe0 is free again an open serves rxe0 and refuses rxe1 only.
 *
 * Exit: 0 pass, 1 fail, 77 (skip) outside the VM with no RDMA device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <infiniband/umad.h>

#include "cm_mad.h"
#include "transport.h"
#include "util.h"

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                   \
			printf("\n");                                          \
			failures++;                                            \
		}                                                              \
	} while (0)

static const char *gid_str(const uint8_t g[16], char *buf)
{
	if (!inet_ntop(AF_INET6, g, buf, INET6_ADDRSTRLEN))
		strcpy(buf, "?");
	return buf;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_report(const struct xport_open_report *rep)
{
	for (unsigned int i = 0; i < rep->n; i++)
		printf("open: %s port %u: %s%s%s\n", rep->port[i].dev,
		       rep->port[i].port_num,
		       rep->port[i].served ? "served" : "NOT served",
		       rep->port[i].message[0] ? " - " : "",
		       rep->port[i].message);
}

/* Events seen, by type. */
static unsigned int events[XPORT_EV_DEVICE_REMOVED + 1];

static void on_event(void *ctx, const struct xport_event *ev)
{
	printf("event: %s on port index %u (state now %s)\n",
	       xport_event_name(ev->type), ev->index,
	       xport_port_state_name(ev->port->state));
	events[ev->type]++;
}

/* Run a command (argv[0] from PATH); its exit status, or -1. */
static int run(const char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Process port events until one of 'type' has been seen (5 s at most). */
static int wait_event(struct xport *x, enum xport_event_type type)
{
	double t0 = now_s();

	while (!events[type] && now_s() - t0 < 5) {
		struct pollfd p = { .fd = xport_event_fd(x), .events = POLLIN };

		if (poll(&p, 1, 200) > 0)
			CHECK(xport_process_events(x) == 0, "process events");
	}
	return events[type] ? 0 : -1;
}

/*
 * Port events through the verbs async fd: lo down/up moves rxe0's port
 * (IBV_EVENT_PORT_ERR / PORT_ACTIVE). Device removal is not tried: rxe has
 * no disassociate_ucontext, so `rdma link delete` waits for every verbs
 * user to close the device and no DEVICE_FATAL ever comes (measured: the
 * delete blocks while the transport is open).
 */
static void check_port_events(struct xport *x, const struct xport_port *p)
{
	static const char *const down[] = { "ip", "link", "set",
					    "lo", "down", NULL };
	static const char *const up[] = {
		"ip", "link", "set", "lo", "up", NULL
	};

	CHECK(run(down) == 0, "ip link set lo down");
	CHECK(wait_event(x, XPORT_EV_PORT_DOWN) == 0, "no PORT_DOWN event");
	CHECK(p->state != XPORT_PORT_ACTIVE, "still ACTIVE after lo down");
	CHECK(run(up) == 0, "ip link set lo up");
	CHECK(wait_event(x, XPORT_EV_PORT_ACTIVE) == 0, "no PORT_ACTIVE event");
	CHECK(p->state == XPORT_PORT_ACTIVE, "not ACTIVE after lo up");
}

static void make_req(uint8_t mad[CM_MAD_SIZE], uint32_t comm_id,
		     const struct xport_port *p, const uint8_t dgid[16])
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	cm_msg_init(&m, CM_MSG_REQ, 0x00000000c0de0000ULL | (comm_id & 0xffff));
	m.req.local_comm_id = comm_id;
	m.req.service_id = 0x0000000001060000ULL | 18515; /* RDMA_PS_TCP */
	m.req.local_ca_guid = p->node_guid;
	m.req.local_qpn = 0x11;
	m.req.starting_psn = 0x123456;
	m.req.path_mtu = CM_MTU_1024;
	m.req.primary_local_lid = 0xffff;
	m.req.primary_remote_lid = 0xffff;
	memcpy(m.req.primary_remote_gid, dgid, 16);
	m.req.primary_hop_limit = 64;
	CHECK(cm_mad_encode(&m, mad) == 0, "encode");
}

/* Wait up to 5 s for one MAD whose REQ carries comm_id. */
static int recv_req(struct xport *x, uint32_t comm_id, struct xport_rx *out)
{
	double t0 = now_s();

	while (now_s() - t0 < 5) {
		struct pollfd p = { .fd = xport_fd(x), .events = POLLIN };
		struct xport_rx rx[4];
		int n;

		if (poll(&p, 1, 500) <= 0)
			continue;
		n = xport_recv(x, rx, 4);
		if (n < 0) {
			printf("xport_recv: %s\n", strerror(-n));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct cm_msg m;
			struct cm_fault f;

			if (cm_mad_decode(rx[i].mad, CM_MAD_SIZE, 0, &m, &f)) {
				printf("received an undecodable MAD: %s\n",
				       cm_fault_str(f.code));
				continue;
			}
			if (m.type == CM_MSG_REQ &&
			    m.req.local_comm_id == comm_id) {
				*out = rx[i];
				return 0;
			}
		}
	}
	return -1;
}

/* Send a REQ to dgid and get it back; check the from-address. */
static void loop_req(struct xport *x, const struct xport_port *p,
		     const uint8_t dgid[16], uint32_t comm_id)
{
	struct eng_addr to = { .grh = true, .qpn = 1, .pkey_index = 0 };
	uint8_t mad[CM_MAD_SIZE];
	struct xport_rx rx;
	char b1[INET6_ADDRSTRLEN], b2[INET6_ADDRSTRLEN];
	double t0 = now_s();
	int r;

	memcpy(to.gid, dgid, 16);
	make_req(mad, comm_id, p, dgid);
	printf("sending REQ 0x%08x to %s\n", comm_id, gid_str(dgid, b1));
	r = xport_send(x, p->index, &to, mad);
	printf("sent: %d after %.1f ms\n", r, (now_s() - t0) * 1e3);
	CHECK(r == 0, "send to %s: %s", gid_str(dgid, b1), strerror(-r));
	if (r)
		return;
	r = recv_req(x, comm_id, &rx);
	CHECK(r == 0,
	      "REQ to %s not received within 5 s (rx %llu, dropped %llu)",
	      gid_str(dgid, b1), (unsigned long long)xport_counters(x)->rx,
	      (unsigned long long)xport_counters(x)->rx_dropped);
	if (r)
		return;
	printf("REQ 0x%08x to %s came back in %.1f ms: port %u, from lid "
	       "0x%x sl %u grh %d gid %s qpn %u pkey_index %u\n",
	       comm_id, gid_str(dgid, b1), (now_s() - t0) * 1e3, rx.port,
	       rx.from.lid, rx.from.sl, rx.from.grh, gid_str(rx.from.gid, b2),
	       rx.from.qpn, rx.from.pkey_index);
	CHECK(rx.port == p->index && rx.from.port == p->index, "port index");
	CHECK(rx.from.grh, "no GRH on RoCE");
	/* Sent to ourselves: the source GID is the one of dgid's family. */
	CHECK(!memcmp(rx.from.gid, dgid, 16), "source GID %s",
	      gid_str(rx.from.gid, b2));
	CHECK(rx.from.qpn == 1, "source QPN %u", rx.from.qpn);
	CHECK(rx.from.pkey_index == 0, "P_Key index %u", rx.from.pkey_index);
	/* The kernel MAD layer rewrites the TID's upper 32 bits (measured). */
	CHECK(!memcmp(rx.mad, mad, 8) && !memcmp(rx.mad + 12, mad + 12, 244),
	      "MAD bytes differ");
}

static int run_loopback(const char *dev, int gid_index)
{
	struct xport_port_sel sel = { .port_num = 1 };
	struct xport_config cfg = {
		.kind = XPORT_KIND_UMAD,
		.sel = &sel,
		.n_sel = 1,
	};
	static const uint8_t v4_lo[16] = { [10] = 0xff, [11] = 0xff, 127,
					   0,		0,	     1 };
	static const uint8_t v6_lo[16] = { [15] = 1 };
	static struct xport_open_report rep;
	const struct xport_port *p;
	const struct xport_gid *g1 = NULL, *ll = NULL;
	struct xport *x;
	char buf[INET6_ADDRSTRLEN];
	int r;

	snprintf(sel.dev, sizeof(sel.dev), "%s", dev);
	r = xport_open(&cfg, on_event, NULL, &rep, &x);
	print_report(&rep);
	CHECK(r == 0, "xport_open: %s", strerror(-r));
	if (r)
		return 1;
	CHECK(rep.n == 1 && rep.port[0].served, "report");
	CHECK(xport_port_count(x) == 1, "%u ports", xport_port_count(x));
	CHECK(xport_event_fd(x) >= 0, "no event fd");
	p = xport_port(x, 0);
	printf("%s port %u: index %u, state %s, link %s, MTU %u, LID 0x%x, "
	       "node GUID 0x%016llx, port GUID 0x%016llx, %u P_Keys "
	       "(0x%04x), %u GIDs\n",
	       p->dev, p->port_num, p->index, xport_port_state_name(p->state),
	       p->link == XPORT_LINK_ROCE ? "RoCE" : "IB", p->active_mtu,
	       p->lid, (unsigned long long)p->node_guid,
	       (unsigned long long)p->port_guid, p->pkey_tbl_len, p->pkeys[0],
	       p->n_gids);
	for (unsigned int i = 0; i < p->n_gids; i++) {
		const struct xport_gid *g = &p->gids[i];

		printf("  gid[%u] %s %s\n", g->index, gid_str(g->raw, buf),
		       g->type == XPORT_GID_ROCE_V2 ? "RoCE v2" :
		       g->type == XPORT_GID_ROCE_V1 ? "RoCE v1" :
						      "IB");
		if (g->index == gid_index)
			g1 = g;
		if (xport_gid_is_link_local(g->raw))
			ll = g;
	}
	CHECK(p->state == XPORT_PORT_ACTIVE, "state");
	CHECK(p->link == XPORT_LINK_ROCE, "link layer");
	CHECK(p->node_guid != 0, "node GUID");
	CHECK(p->active_mtu >= 1024, "MTU %u", p->active_mtu);
	CHECK(p->pkey_tbl_len >= 1 && p->pkeys[0] == 0xffff, "P_Key 0");
	CHECK(g1 && !memcmp(g1->raw, v4_lo, 16) &&
		      g1->type == XPORT_GID_ROCE_V2,
	      "GID %d is not ::ffff:127.0.0.1 RoCE v2", gid_index);
	CHECK(xport_pick_sgid(p, v4_lo) == g1, "source GID for v4");
	printf("processing events\n");
	CHECK(xport_process_events(x) == 0, "events");

	loop_req(x, p, v4_lo, 0x11110001);
	loop_req(x, p, v6_lo, 0x11110002);

	/* No fe80 route on lo: the write fails, synchronously, not fatally. */
	if (ll) {
		struct eng_addr to = { .grh = true, .qpn = 1 };
		uint8_t mad[CM_MAD_SIZE];
		double t0 = now_s();

		memcpy(to.gid, ll->raw, 16);
		make_req(mad, 0x11110003, p, ll->raw);
		r = xport_send(x, p->index, &to, mad);
		printf("send to %s: %s after %.0f ms\n", gid_str(ll->raw, buf),
		       r ? strerror(-r) : "ok", (now_s() - t0) * 1e3);
		CHECK(r < 0, "send to the link-local GID should fail on lo");
		CHECK(xport_counters(x)->tx_errors == 1, "tx_errors %llu",
		      (unsigned long long)xport_counters(x)->tx_errors);
		loop_req(x, p, v4_lo, 0x11110004);
	}
	check_port_events(x, p);
	/* And MADs flow again (the GID table was refreshed on the events). */
	loop_req(x, p, v4_lo, 0x11110005);
	printf("counters: tx %llu, tx_errors %llu, rx %llu, rx_dropped "
	       "%llu\n",
	       (unsigned long long)xport_counters(x)->tx,
	       (unsigned long long)xport_counters(x)->tx_errors,
	       (unsigned long long)xport_counters(x)->rx,
	       (unsigned long long)xport_counters(x)->rx_dropped);
	xport_close(x);
	return failures ? 1 : 0;
}

/*
 * The kernel refuses a Send whose TID is that of a Send of the same fd
 * still waiting for its completion (xport_umad.c, xumad_txq_busy). To
 * hold a TID the test writes a "blocker" straight to the transport's umad
 * fd: a REQ with a MAD-layer response timeout, which the kernel keeps
 * pending until that timeout passes (no response comes; then it reports
 * a failed send, which the transport drops as rx_dropped).
 *
 * (Ending the blocker at will with a response, method Send|0x80 with its
 * stamped TID, was tried: on rxe the MAD layer never matched it, to ::1
 * or to ::ffff:127.0.0.1.)
 */
struct dup_run {
	struct xport *x;
	int umad_fd;
	const struct xport_port *p;
	const uint8_t *dgid;
	int gid_index;
	ev_io io;
	ev_timer tick;
	unsigned int ticks;
	uint32_t seen[16]; /* REQ comm ids in arrival order */
	unsigned int n_seen;
};

/* The one /dev/infiniband/umadN this process holds open (the transport's). */
static int find_umad_fd(void)
{
	char path[64], link[128];
	int found = -1;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strncmp(link, "/dev/infiniband/umad", 20))
			found = fd;
	}
	return found;
}

/* Write the blocker (comm id 'comm_id') with a 'timeout_ms' wait. */
static int write_blocker(struct dup_run *d, uint32_t comm_id,
			 unsigned int timeout_ms)
{
	size_t len = (size_t)umad_size() + CM_MAD_SIZE;
	uint8_t *buf = calloc(1, len);
	struct ib_user_mad *um = (struct ib_user_mad *)buf;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	/* The transport's agent: the first (0) registered on its fresh fd. */
	um->agent_id = 0;
	um->timeout_ms = timeout_ms;
	um->retries = 0;
	um->length = CM_MAD_SIZE;
	um->addr.qpn = htonl(1);
	um->addr.qkey = htonl(0x80010000u);
	um->addr.grh_present = 1;
	memcpy(um->addr.gid, d->dgid, 16);
	um->addr.gid_index = (uint8_t)d->gid_index;
	um->addr.hop_limit = 64;
	make_req(umad_get_mad(buf), comm_id, d->p, d->dgid);
	r = write(d->umad_fd, buf, len);
	free(buf);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

static void dup_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct dup_run *d = container_of(w, struct dup_run, io);
	struct xport_rx rx[8];
	int n = xport_recv(d->x, rx, 8);

	for (int i = 0; i < n; i++) {
		struct cm_msg m;
		struct cm_fault f;

		if (!cm_mad_decode(rx[i].mad, CM_MAD_SIZE, 0, &m, &f) &&
		    m.type == CM_MSG_REQ && d->n_seen < 16)
			d->seen[d->n_seen++] = m.req.local_comm_id;
	}
}

static void dup_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	container_of(w, struct dup_run, tick)->ticks++;
}

static int dup_seen_at(const struct dup_run *d, uint32_t comm_id)
{
	for (unsigned int i = 0; i < d->n_seen; i++)
		if (d->seen[i] == comm_id)
			return (int)i;
	return -1;
}

/* Run the loop until 'comm_id' arrived or 5 s passed; its place or -1. */
static int dup_wait(struct ev_loop *loop, struct dup_run *d, uint32_t comm_id)
{
	double t0 = now_s();

	while (dup_seen_at(d, comm_id) < 0 && now_s() - t0 < 5)
		ev_run(loop, EVRUN_ONCE);
	return dup_seen_at(d, comm_id);
}

static void dup_send(struct dup_run *d, uint32_t comm_id, int *r)
{
	struct eng_addr to = { .grh = true, .qpn = 1 };
	uint8_t mad[CM_MAD_SIZE];

	memcpy(to.gid, d->dgid, 16);
	make_req(mad, comm_id, d->p, d->dgid);
	*r = xport_send(d->x, d->p->index, &to, mad);
}

/*
 * A MAD refused as a duplicate is sent once its twin completes, after the
 * send call returned (the old transport slept in it until then); a MAD of
 * the same TID (connection) sent after it stays behind it, one of another
 * TID goes at once. The blocker holds its TID for 1 ms, i.e. a jiffy or
 * two, not to the millisecond: an attempt is inconclusive when it was
 * gone before the send (a stall in a loaded TCG guest); try again with
 * new TIDs, a few times. One attempt must show the whole story.
 */
static void dup_later(struct ev_loop *loop, struct dup_run *d)
{
	bool shown = false;

	for (uint32_t k = 1; k <= 5 && !shown; k++) {
		/* blk, a, c share a TID (make_req: comm id's low 16 bits) */
		uint32_t blk = 0x22220100 | k, a = 0x33330100 | k;
		uint32_t c = 0x55550100 | k, b = 0x44440200 | k;
		struct xport_counters c0 = *xport_counters(d->x);
		const struct xport_counters *x = xport_counters(d->x);
		double t0;
		int ra, rb, rc, r;

		d->n_seen = 0;
		r = write_blocker(d, blk, 1);
		CHECK(r == 0, "blocker: %s", strerror(-r));
		if (r)
			return;
		t0 = now_s();
		dup_send(d, a, &ra);
		dup_send(d, c, &rc);
		dup_send(d, b, &rb);
		CHECK(ra == 0 && rc == 0 && rb == 0, "sends: %d %d %d", ra, rc,
		      rb);
		/*
		 * Only B went: A waits for the blocker, C for A. Else the
		 * blocker was gone already: A went, and C was refused for A
		 * or went too (the old transport: all three, after sleeping).
		 */
		if (x->tx_busy != c0.tx_busy + 1 || x->tx != c0.tx + 1) {
			printf("attempt %u: the blocker was gone already (tx "
			       "+%llu, tx_busy +%llu)\n",
			       k, (unsigned long long)(x->tx - c0.tx),
			       (unsigned long long)(x->tx_busy - c0.tx_busy));
			dup_wait(loop, d, c);
			dup_wait(loop, d, b);
			continue;
		}
		shown = true;
		d->ticks = 0;
		CHECK(dup_wait(loop, d, c) >= 0, "C never arrived");
		printf("attempt %u: A refused, A and C sent %.1f ms later (%u "
		       "loop ticks meanwhile)\n",
		       k, (now_s() - t0) * 1e3, d->ticks);
		CHECK(dup_wait(loop, d, b) >= 0, "B never arrived");
		CHECK(dup_seen_at(d, a) >= 0, "A dropped");
		CHECK(dup_seen_at(d, a) < dup_seen_at(d, c),
		      "C overtook A (A at %d, C at %d)", dup_seen_at(d, a),
		      dup_seen_at(d, c));
		CHECK(x->tx == c0.tx + 3, "tx %llu", (unsigned long long)x->tx);
		CHECK(x->tx_busy_failed == c0.tx_busy_failed,
		      "tx_busy_failed moved");
		CHECK(x->tx_errors == c0.tx_errors, "tx_errors moved");
	}
	CHECK(shown, "no attempt showed a refused MAD sent later");
}

/*
 * A twin that stays pending (3 s) past the second the transport waits:
 * the MAD is given up and counted, and meanwhile a MAD of another TID
 * went at once and the loop kept turning (the tick, every ms).
 */
static void dup_given_up(struct ev_loop *loop, struct dup_run *d)
{
	uint32_t blk = 0x22220301, a = 0x33330301, b = 0x44440302;
	struct xport_counters c0 = *xport_counters(d->x);
	const struct xport_counters *x = xport_counters(d->x);
	double t0;
	int ra, rb, r;

	d->n_seen = 0;
	r = write_blocker(d, blk, 3000);
	CHECK(r == 0, "blocker: %s", strerror(-r));
	if (r)
		return;
	t0 = now_s();
	dup_send(d, a, &ra);
	dup_send(d, b, &rb);
	CHECK(ra == 0 && rb == 0, "sends: %d %d", ra, rb);
	CHECK(x->tx_busy == c0.tx_busy + 1, "tx_busy %llu",
	      (unsigned long long)x->tx_busy);
	CHECK(x->tx == c0.tx + 1, "tx %llu -> %llu", (unsigned long long)c0.tx,
	      (unsigned long long)x->tx);
	CHECK(dup_wait(loop, d, b) >= 0, "B never arrived");
	d->ticks = 0;
	while (x->tx_busy_failed == c0.tx_busy_failed && now_s() - t0 < 5)
		ev_run(loop, EVRUN_ONCE);
	printf("A given up %.1f ms after the send (%u loop ticks while it "
	       "waited)\n",
	       (now_s() - t0) * 1e3, d->ticks);
	CHECK(x->tx_busy_failed == c0.tx_busy_failed + 1, "tx_busy_failed %llu",
	      (unsigned long long)x->tx_busy_failed);
	CHECK(dup_seen_at(d, a) < 0, "A arrived (at %d)", dup_seen_at(d, a));
	CHECK(d->ticks >= 2, "the loop turned %u times while A waited",
	      d->ticks);
	CHECK(x->tx_errors == c0.tx_errors + 1, "tx_errors %llu",
	      (unsigned long long)x->tx_errors);
	CHECK(x->tx == c0.tx + 1, "tx %llu", (unsigned long long)x->tx);
}

static int run_dup(const char *dev)
{
	struct xport_port_sel sel = { .port_num = 1 };
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct xport_config cfg = {
		.kind = XPORT_KIND_UMAD,
		.sel = &sel,
		.n_sel = 1,
		.loop = loop,
	};
	/* To ::1 (the blocker needs its source GID index, below). */
	static const uint8_t v6_lo[16] = { [15] = 1 };
	static struct xport_open_report rep;
	const struct xport_gid *sgid;
	struct dup_run d = { .dgid = v6_lo };
	int r;

	snprintf(sel.dev, sizeof(sel.dev), "%s", dev);
	printf("duplicate TIDs: reopening %s with a loop\n", dev);
	r = xport_open(&cfg, on_event, NULL, &rep, &d.x);
	CHECK(r == 0, "xport_open: %s", strerror(-r));
	if (r)
		return 1;
	d.p = xport_port(d.x, 0);
	sgid = xport_pick_sgid(d.p, v6_lo);
	CHECK(sgid, "no source GID for ::1");
	d.gid_index = sgid ? sgid->index : 0;
	d.umad_fd = find_umad_fd();
	CHECK(d.umad_fd >= 0, "no umad fd in /proc/self/fd");
	if (d.umad_fd >= 0) {
		ev_io_init(&d.io, dup_io_cb, xport_fd(d.x), EV_READ);
		ev_io_start(loop, &d.io);
		ev_timer_init(&d.tick, dup_tick_cb, 0.001, 0.001);
		ev_timer_start(loop, &d.tick);
		dup_later(loop, &d);
		dup_given_up(loop, &d);
		ev_io_stop(loop, &d.io);
		ev_timer_stop(loop, &d.tick);
	}
	printf("counters: tx %llu, tx_errors %llu, tx_busy %llu, "
	       "tx_busy_failed %llu, rx %llu, rx_dropped %llu\n",
	       (unsigned long long)xport_counters(d.x)->tx,
	       (unsigned long long)xport_counters(d.x)->tx_errors,
	       (unsigned long long)xport_counters(d.x)->tx_busy,
	       (unsigned long long)xport_counters(d.x)->tx_busy_failed,
	       (unsigned long long)xport_counters(d.x)->rx,
	       (unsigned long long)xport_counters(d.x)->rx_dropped);
	xport_close(d.x);
	ev_loop_destroy(loop);
	return failures ? 1 : 0;
}

/* A hang must not cost the VM's whole timeout. */
static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: no progress for 60 s, giving up\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static int modprobe_ib_cm(void)
{
	int status;
	pid_t pid;

	if (!access("/sys/module/ib_cm", F_OK))
		return 0;
	pid = fork();
	if (pid == 0) {
		execlp("modprobe", "modprobe", "ib_cm", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

static int run_kernel_cm(const char *dev)
{
	struct xport_port_sel sel = { .port_num = 1 };
	struct xport_config cfg = {
		.kind = XPORT_KIND_UMAD,
		.sel = &sel,
		.n_sel = 1,
	};
	static struct xport_open_report rep;
	struct xport *x = NULL;
	char want[XPORT_MSG_MAX], path[128];
	int r;

	snprintf(sel.dev, sizeof(sel.dev), "%s", dev);
	if (modprobe_ib_cm()) {
		printf("FAIL: modprobe ib_cm\n");
		return 1;
	}
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%.64s/ports/1/cm_rx_msgs", dev);
	printf("ib_cm loaded; its counters on %s port 1: %s\n", dev,
	       access(path, F_OK) ? "absent" : "present");
	r = xport_open(&cfg, on_event, NULL, &rep, &x);
	print_report(&rep);
	CHECK(r < 0 && !x, "open should fail: no port can be served (r=%d)", r);
	CHECK(rep.n == 1 && !rep.port[0].served, "port reported served");
	snprintf(want, sizeof(want),
		 "%s port 1: the kernel ib_cm module owns the CM class here; "
		 "unload ib_cm and its users (rdma_ucm, rdma_cm, ib_ipoib, "
		 "...) or start cmd before they load; see README",
		 dev);
	CHECK(!strcmp(rep.port[0].message, want),
	      "message:\n  got  '%s'\n  "
	      "want '%s'",
	      rep.port[0].message, want);
	xport_close(x);
	return failures ? 1 : 0;
}

static int open_two(struct xport_open_report *rep, struct xport **x)
{
	struct xport_port_sel sel[2] = { { "rxe0", 1 }, { "rxe1", 1 } };
	struct xport_config cfg = {
		.kind = XPORT_KIND_UMAD,
		.sel = sel,
		.n_sel = 2,
	};
	int r = xport_open(&cfg, on_event, NULL, rep, x);

	print_report(rep);
	return r;
}

static int run_partial(void)
{
	struct xport_port_sel sel = { "rxe0", 1 };
	struct xport_config cfg = {
		.kind = XPORT_KIND_UMAD,
		.sel = &sel,
		.n_sel = 1,
	};
	static struct xport_open_report rep;
	const char *ready = getenv("CMD_VM_CM_READY");
	const char *loaded = getenv("CMD_VM_CM_LOADED");
	struct xport *holder = NULL, *x = NULL;
	char want[XPORT_MSG_MAX];
	FILE *f;
	int r;

	if (!ready || !loaded) {
		printf("FAIL: run me with run.sh --two-devices "
		       "--with-kernel-cm\n");
		return 1;
	}
	r = xport_open(&cfg, on_event, NULL, &rep, &holder);
	print_report(&rep);
	CHECK(r == 0, "holding rxe0: %s", strerror(-r));
	if (r)
		return 1;
	f = fopen(ready, "w");
	if (f)
		fclose(f);
	while (access(loaded, F_OK))
		usleep(20000);
	printf("harness loaded ib_cm, rdma_cm, rdma_ucm\n");

	/* rxe0 is ours (another agent), rxe1 the kernel's. */
	r = open_two(&rep, &x);
	CHECK(r < 0 && !x, "open should serve nothing (r=%d)", r);
	CHECK(rep.n == 2 && !rep.port[0].served && !rep.port[1].served,
	      "report");
	CHECK(strstr(rep.port[0].message, "another agent holds the CM class"),
	      "rxe0: %s", rep.port[0].message);
	snprintf(want, sizeof(want), "rxe1 port 1: %s; %s",
		 XPORT_MSG_IB_CM_OWNS, XPORT_MSG_IB_CM_TODO);
	CHECK(!strcmp(rep.port[1].message, want), "rxe1: %s",
	      rep.port[1].message);

	/* rxe0 free again: served; rxe1 still refused; the open succeeds. */
	xport_close(holder);
	r = open_two(&rep, &x);
	CHECK(r == 0 && x, "open with one servable port: %d", r);
	CHECK(rep.n == 2 && rep.port[0].served && !rep.port[1].served,
	      "report");
	CHECK(!strcmp(rep.port[1].message, want), "rxe1: %s",
	      rep.port[1].message);
	if (x) {
		CHECK(xport_port_count(x) == 1, "ports %u",
		      xport_port_count(x));
		CHECK(!strcmp(xport_port(x, 0)->dev, "rxe0"), "port 0 is %s",
		      xport_port(x, 0)->dev);
	}
	xport_close(x);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel-cm", no_argument, NULL, 'k' },
		{ "partial", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "rxe0";
	int gid_index = 1, kernel_cm = 0, opt, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(60);
	while ((opt = getopt_long(argc, argv, "d:g:", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'k':
			kernel_cm = 1;
			break;
		case 'p':
			kernel_cm = 2;
			break;
		default:
			fprintf(stderr,
				"usage: %s [--kernel-cm|--partial] [-d DEV] "
				"[-g GID_INDEX]\n",
				argv[0]);
			return 2;
		}
	}
	if (access("/sys/class/infiniband", F_OK)) {
		printf("no RDMA devices here%s\n",
		       getenv("CMD_VM") ? " (inside the VM!)" :
					  ": run me with tests/vm/run.sh");
		return getenv("CMD_VM") ? 1 : 77;
	}
	if (kernel_cm == 2)
		rc = run_partial();
	else if (kernel_cm)
		rc = run_kernel_cm(dev);
	else
		rc = run_loopback(dev, gid_index) | run_dup(dev);
	printf("%s: xport_umad %s\n", rc ? "FAIL" : "PASS",
	       kernel_cm == 2 ? "partial ownership (rxe0 served, rxe1 ib_cm)" :
	       kernel_cm      ? "ib_cm ownership conflict" :
				"loopback on rxe");
	return rc;
}
