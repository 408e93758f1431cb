// SPDX-License-Identifier: MIT
/*
 * neigh_stall: the daemon never stalls on one peer (issue 13, item 3).
 * Run by neigh.sh in the VM against a cmd serving rxe0 (on lo) and rxe1 (on
 * a veth whose subnets 192.0.2.0/24 and 2001:db8::/64, documentation
 * ranges configured inside the VM only, have no other host: nobody answers
 * ARP or ND there, and the VM has no NIC, so nothing leaves it).
 *
 *   neigh_stall SOCKET
 *
 * baseline     N COUNTERS calls and one loopback connection (rxe0,
 *              ::ffff:127.0.0.1) timed, with no destination unresolved.
 * stall        Two connects to peers nobody answers (192.0.2.2 and
 *              2001:db8::2, from rxe1). While their neighbours are being
 *              resolved (the counters say so: neigh_pending 2), the same N
 *              calls and one loopback connection are timed on other
 *              channels. The verdict is by construction, not by speed: all
 *              of it must complete while both connects are still pending
 *              (no event for them yet, neigh_pending still 2 after).
 *              The window is the kernel's resolution, ~3 s (3 probes 1 s
 *              apart; the daemon's own cap is 5 s): the calls take well
 *              under 100 ms even in the TCG guest, 30 times less.
 * no route     A connect to 2001:db8:1::7, which the VM has no route to
 *              (no default route, no NIC; for IPv4 the kernel takes any
 *              address as on-link when the device is given, as the
 *              kernel's own RoCE resolution does, so only IPv6 can show
 *              this), ends with one
 *              CONNECT_ERROR -ENETUNREACH on the daemon's next turn: it
 *              arrives while the two resolutions above are outstanding.
 * failure      Each unreachable connect ends with exactly one
 *              CONNECT_ERROR, status -EHOSTUNREACH, within 30 s (the
 *              kernel gives up after 3 probes 1 s apart and the daemon's
 *              own cap is 5 s: 30 s leaves a slow TCG guest six times the
 *              worst case), and nothing after it.
 * counters     mad_tx_deferred, mad_tx_unreachable, neigh_resolutions,
 *              neigh_failed, unreachable as expected; with every id
 *              destroyed, records and ids drop to 0.
 *
 * Prints the measured times (stall vs baseline) for the record. Exit 0
 * when every check passed, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rxe_common.h"

#define CALLS 20
#define PORT 7471
#define FAIL_WAIT_MS 30000
#define WAIT_MS 10000

static uint32_t next_qpn = 100;

static double now_ms(void)
{
	return rxe_now_s() * 1e3;
}

/* N full COUNTERS reads; the slowest one in ms, the total in *sum. */
static double time_calls(struct cmc_channel *ch, double *sum)
{
	double worst = 0;

	*sum = 0;
	for (int i = 0; i < CALLS; i++) {
		double t = now_ms();
		int64_t v = rxe_counter(ch, "records");
		double d = now_ms() - t;

		CHECK(v >= 0, "counters call %d failed", i);
		*sum += d;
		if (d > worst)
			worst = d;
	}
	return worst;
}

static void conn_param(struct cmc_conn_param *p)
{
	rxe_conn_param(p, next_qpn++);
	p->max_cm_retries = 3;
	p->local_cm_response_timeout = 16;
	p->remote_cm_response_timeout = 16;
}

/*
 * One loopback connection on rxe0 (127.0.0.1 to 127.0.0.1), up to
 * ESTABLISHED on both sides; returns its setup time in ms (or -1). The
 * ids are left for the caller to destroy (the daemon owns the tail).
 */
static double loopback(struct cmc_channel *sv, struct cmc_channel *cl,
		       struct cmc_id **cid, struct cmc_id **sid)
{
	struct sockaddr_in dst, src;
	struct cmc_conn_param p;
	struct cmc_event *ev;
	double t0 = now_ms();
	int r;

	rxe_loopback_addrs(&dst, &src, PORT);
	*cid = *sid = NULL;
	if (cmc_create_id(cl, NULL, CMC_QP_RC, cid))
		return -1;
	conn_param(&p);
	r = cmc_connect_ip(*cid, (struct sockaddr *)&dst,
			   (struct sockaddr *)&src, CMC_RDMA_PS_TCP, &p);
	CHECK(!r, "loopback connect: %s", cmc_strerror(r));
	if (r)
		return -1;
	r = cmc_get_event(sv, &ev, WAIT_MS);
	CHECK(!r && ev->type == CMC_EVENT_REQ_RECEIVED,
	      "loopback: no REQ_RECEIVED (%s)", cmc_strerror(r));
	if (r)
		return -1;
	*sid = ev->id;
	cmc_ack_event(ev);
	if (rxe_accept_establish(sv, *sid, next_qpn++, cl, cid, WAIT_MS,
				 "loopback"))
		return -1;
	return now_ms() - t0;
}

static struct cmc_id *connect_unreachable(struct cmc_channel *ch, int af,
					  const char *src_s, const char *dst_s)
{
	struct sockaddr_storage dst = { 0 }, src = { 0 };
	struct cmc_conn_param p;
	struct cmc_id *id = NULL;
	int r;

	if (af == AF_INET) {
		struct sockaddr_in *d = (void *)&dst, *s = (void *)&src;

		d->sin_family = s->sin_family = AF_INET;
		d->sin_port = htons(PORT);
		inet_pton(AF_INET, dst_s, &d->sin_addr);
		inet_pton(AF_INET, src_s, &s->sin_addr);
	} else {
		struct sockaddr_in6 *d = (void *)&dst, *s = (void *)&src;

		d->sin6_family = s->sin6_family = AF_INET6;
		d->sin6_port = htons(PORT);
		inet_pton(AF_INET6, dst_s, &d->sin6_addr);
		inet_pton(AF_INET6, src_s, &s->sin6_addr);
	}
	if (cmc_create_id(ch, NULL, CMC_QP_RC, &id))
		return NULL;
	conn_param(&p);
	r = cmc_connect_ip(id, (struct sockaddr *)&dst, (struct sockaddr *)&src,
			   CMC_RDMA_PS_TCP, &p);
	CHECK(!r, "connect to %s: %s", dst_s, cmc_strerror(r));
	return r ? NULL : id;
}

int main(int argc, char **argv)
{
	struct cmc_channel *sv = NULL, *cl = NULL, *q = NULL, *un = NULL;
	struct cmc_channel *nr = NULL;
	struct cmc_id *lis = NULL, *c1, *s1, *c2, *s2, *u4, *u6, *unr;
	double base_worst, base_sum, stall_worst, stall_sum, base_loop,
		stall_loop, t_start, t_calls_done, t_fail[2] = { 0, 0 };
	int64_t pend_before, pend_after, deferred;
	struct cmc_event *ev;
	int got = 0, r;

	if (argc != 2) {
		fprintf(stderr, "usage: neigh_stall SOCKET\n");
		return 2;
	}
	srand48(getpid());
	r = cmc_open(argv[1], "neigh_stall", &sv);
	r = r ? r : cmc_open(argv[1], "neigh_stall", &cl);
	r = r ? r : cmc_open(argv[1], "neigh_stall", &q);
	r = r ? r : cmc_open(argv[1], "neigh_stall", &un);
	r = r ? r : cmc_open(argv[1], "neigh_stall", &nr);
	if (r) {
		printf("FAIL: cannot open %s: %s\n", argv[1], cmc_strerror(r));
		return 1;
	}
	r = cmc_create_id(sv, NULL, CMC_QP_RC, &lis);
	r = r ? r : cmc_listen_port(lis, CMC_RDMA_PS_TCP, PORT, 8);
	CHECK(!r, "listen: %s", cmc_strerror(r));

	/* Baseline: nothing unresolved. */
	base_worst = time_calls(q, &base_sum);
	base_loop = loopback(sv, cl, &c1, &s1);
	printf("baseline: %d COUNTERS calls: worst %.2f ms, total %.2f ms; "
	       "loopback connection %.2f ms\n",
	       CALLS, base_worst, base_sum, base_loop);

	/* Two peers nobody answers, then everything else at once. */
	t_start = now_ms();
	u4 = connect_unreachable(un, AF_INET, "192.0.2.1", "192.0.2.2");
	u6 = connect_unreachable(un, AF_INET6, "2001:db8::1", "2001:db8::2");
	printf("stall: both unreachable connects returned after %.2f ms\n",
	       now_ms() - t_start);
	pend_before = rxe_counter(q, "neigh_pending");
	stall_worst = time_calls(q, &stall_sum);
	stall_loop = loopback(sv, cl, &c2, &s2);
	t_calls_done = now_ms();
	pend_after = rxe_counter(q, "neigh_pending");
	deferred = rxe_counter(q, "mad_tx_deferred");
	printf("stall: %d COUNTERS calls: worst %.2f ms, total %.2f ms; "
	       "loopback connection %.2f ms; all done %.2f ms after the "
	       "connects\n",
	       CALLS, stall_worst, stall_sum, stall_loop,
	       t_calls_done - t_start);
	CHECK(pend_before == 2, "neigh_pending %" PRId64 " before, want 2",
	      pend_before);
	CHECK(pend_after == 2,
	      "neigh_pending %" PRId64 " after the calls, want 2: the "
	      "daemon must answer while both resolutions are outstanding",
	      pend_after);
	CHECK(deferred >= 2, "mad_tx_deferred %" PRId64, deferred);
	CHECK(stall_loop >= 0, "loopback during the stall failed");
	/* By construction: nothing for the unreachable ids yet. */
	r = cmc_get_event(un, &ev, 0);
	CHECK(r == -EAGAIN,
	      "an unreachable connect ended before the other "
	      "clients were served (%s)",
	      r ? cmc_strerror(r) : cmc_event_str(ev->type));
	if (!r)
		cmc_ack_event(ev);

	/* No route at all: one clean failure, without waiting. */
	unr = connect_unreachable(nr, AF_INET6, "2001:db8::1", "2001:db8:1::7");
	if (unr) {
		r = cmc_get_event(nr, &ev, WAIT_MS);
		CHECK(!r && ev->id == unr &&
			      ev->type == CMC_EVENT_CONNECT_ERROR &&
			      ev->status == -ENETUNREACH,
		      "no route: want CONNECT_ERROR -ENETUNREACH, got %s (%d)",
		      r ? cmc_strerror(r) : cmc_event_str(ev->type),
		      r ? r : ev->status);
		if (!r)
			cmc_ack_event(ev);
		printf("no route: 2001:db8:1::7 CONNECT_ERROR after %.0f ms\n",
		       now_ms() - t_start);
		CHECK(rxe_counter(q, "neigh_pending") == 2,
		      "the no-route failure must not wait for the "
		      "resolutions");
		r = cmc_get_event(nr, &ev, 0);
		CHECK(r == -EAGAIN, "a second event for the no-route id");
		cmc_destroy_id(unr);
	}

	/* Exactly one clean failure each. */
	while (got < 2 && u4 && u6) {
		double left = FAIL_WAIT_MS - (now_ms() - t_start);

		r = cmc_get_event(un, &ev, left > 0 ? (int)left : 0);
		if (r) {
			CHECK(0, "%d of 2 failures within %d ms: %s", got,
			      FAIL_WAIT_MS, cmc_strerror(r));
			break;
		}
		CHECK(ev->type == CMC_EVENT_CONNECT_ERROR &&
			      ev->status == -EHOSTUNREACH,
		      "want CONNECT_ERROR -EHOSTUNREACH, got %s (%d)",
		      cmc_event_str(ev->type), ev->status);
		CHECK(ev->id == u4 || ev->id == u6, "event of another id");
		if (ev->id == u4 && !t_fail[0])
			t_fail[0] = now_ms() - t_start;
		else if (ev->id == u6 && !t_fail[1])
			t_fail[1] = now_ms() - t_start;
		else
			CHECK(0, "a second event for one id");
		cmc_ack_event(ev);
		got++;
	}
	printf("failure: 192.0.2.2 CONNECT_ERROR -EHOSTUNREACH after %.0f ms, "
	       "2001:db8::2 after %.0f ms\n",
	       t_fail[0], t_fail[1]);
	r = cmc_get_event(un, &ev, 1000);
	CHECK(r == -EAGAIN, "an event after the failures: %s",
	      r ? cmc_strerror(r) : cmc_event_str(ev->type));
	CHECK(rxe_counter(q, "mad_tx_unreachable") >= 3, "mad_tx_unreachable");
	CHECK(rxe_counter(q, "neigh_failed") == 2, "neigh_failed %" PRId64,
	      rxe_counter(q, "neigh_failed"));
	CHECK(rxe_counter(q, "neigh_resolutions") == 2,
	      "neigh_resolutions %" PRId64,
	      rxe_counter(q, "neigh_resolutions"));
	CHECK(rxe_counter(q, "unreachable") == 3, "unreachable %" PRId64,
	      rxe_counter(q, "unreachable"));
	CHECK(rxe_counter(q, "neigh_pending") == 0, "neigh_pending");
	CHECK(rxe_counter(q, "conns_req_sent") == 0, "conns_req_sent %" PRId64,
	      rxe_counter(q, "conns_req_sent"));

	/* Nothing leaks: every id gone, the daemon's tails run out. */
	cmc_destroy_id(u4);
	cmc_destroy_id(u6);
	cmc_destroy_id(c1);
	cmc_destroy_id(s1);
	cmc_destroy_id(c2);
	cmc_destroy_id(s2);
	cmc_destroy_id(lis);
	for (int i = 0; i < 300 && rxe_counter(q, "records") != 0; i++)
		usleep(100000);
	CHECK(rxe_counter(q, "records") == 0, "records %" PRId64 " left",
	      rxe_counter(q, "records"));
	CHECK(rxe_counter(q, "ids") == 0, "ids %" PRId64 " left",
	      rxe_counter(q, "ids"));
	printf("counters: mad_tx_deferred %" PRId64
	       " mad_tx_unreachable %" PRId64 " neigh_resolutions %" PRId64
	       " neigh_failed %" PRId64 " unreachable %" PRId64 "\n",
	       rxe_counter(q, "mad_tx_deferred"),
	       rxe_counter(q, "mad_tx_unreachable"),
	       rxe_counter(q, "neigh_resolutions"),
	       rxe_counter(q, "neigh_failed"), rxe_counter(q, "unreachable"));
	cmc_close(un);
	cmc_close(nr);
	cmc_close(q);
	cmc_close(cl);
	cmc_close(sv);
	printf("neigh_stall: %s (%d failure(s))\n",
	       rxe_failures ? "FAIL" : "PASS", rxe_failures);
	return rxe_failures ? 1 : 0;
}
