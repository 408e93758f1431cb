// SPDX-License-Identifier: MIT
/*
 * Listeners on one address or port (issue 15, item 4) end to end on the
 * simulated fabric: a hub and two RoCE daemons, A (node 1, one port:
 * ::ffff:127.0.1.1) and B (node 2, two ports: ::ffff:127.0.2.1 and
 * ::ffff:127.0.2.2, each with a link-local GID too; see daemon/xport_sim.c).
 *
 *   gid        a listener on 127.0.2.1 gets the REQs sent to that address
 *              (cmc_connect_ip(), cmc_event_cma() names it) and nothing
 *              else: a REQ to 127.0.2.2, or to the link-local GID of the
 *              same port, gets REJ 8; QUERY_ID and LIST show the selector;
 *   two_gids   two programs (channels) listen on one service id at the
 *              two addresses, each gets its own and both connect;
 *   overlap    what -EADDRINUSE is (the kernel's rdma_cm rules for one
 *              port), and -EADDRNOTAVAIL / -ENODEV for what B lacks;
 *              QUERY_ID and cmctl show where each listener listens;
 *   specific   a GID listener before a port listener before a wildcard
 *              (here a masked one);
 *   sidr       cmc_sidr_req_ip() to a UD listener on 127.0.2.1 in the UDP
 *              port space: SIDR_REQ_RECEIVED, cmc_event_cma() reads its
 *              CMA header, the SIDR_REP with rdma_cm's UDP Q_Key comes
 *              back; a SIDR_REQ to 127.0.2.2 finds no listener (status 1):
 *              a SIDR_REQ is matched by the destination GID of its GRH.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmclient.h"
#include "sim_client.h"
#include "sim_harness.h"

#define B_DEV "sim2"
#define B_IP1 "127.0.2.1" /* B's port 1 */
#define B_IP2 "127.0.2.2" /* B's port 2 */
#define A_IP "127.0.1.1"
#define REJ_INVALID_SID 8 /* IBTA Table 109 */

static struct cmc_channel *a, *b;
static uint32_t next_qpn = 0x100;

static int group_setup(void **state)
{
	static const char *const roce[] = { "--sim-roce", NULL };
	static const char *const roce2[] = { "--sim-roce", "--sim-ports", "2",
					     NULL };
	const char *const *const extra[] = { roce, roce2 };

	(void)state;
	if (sim_fabric_start("lsel", 15, 2, extra))
		return -1;
	a = sim_open_ch(sim_fab.sock[0]);
	b = sim_open_ch(sim_fab.sock[1]);
	return 0;
}

static int group_teardown(void **state)
{
	cmc_close(a);
	cmc_close(b);
	return sim_group_teardown(state);
}

/* ::ffff:ip, rdma_cm's RoCE GID of an IPv4 address. */
static void gid_of(const char *ip, uint8_t gid[CMC_GID_SIZE])
{
	memset(gid, 0, CMC_GID_SIZE);
	gid[10] = gid[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, ip, gid + 12), 1);
}

static struct cmc_port_sel sel_gid(const char *ip)
{
	struct cmc_port_sel s = { .kind = CMC_SEL_GID };

	gid_of(ip, s.gid);
	return s;
}

static struct cmc_port_sel sel_port(const char *dev, uint8_t port_num)
{
	struct cmc_port_sel s = { .kind = CMC_SEL_PORT, .port_num = port_num };

	snprintf(s.dev_name, sizeof(s.dev_name), "%s", dev);
	return s;
}

/* B's link-local GID of its port port_num, from PORTS. */
static void b_ll_gid(uint8_t port_num, uint8_t gid[CMC_GID_SIZE])
{
	struct cmc_port_info p[CMC_PORTS_BATCH_MAX];
	uint64_t cursor = 0;
	int n = cmc_ports(b, &cursor, p);

	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		if (p[i].port_num != port_num)
			continue;
		for (unsigned int g = 0; g < CMC_PORT_GIDS; g++)
			if (p[i].gids[g].gid[0] == 0xfe) {
				memcpy(gid, p[i].gids[g].gid, CMC_GID_SIZE);
				return;
			}
	}
	fail_msg("B's port %u has no link-local GID", port_num);
}

/* A listener of type qp (on ch) on sid under mask, narrowed by sel (NULL:
 * every port); the call's result, and the id only when it succeeded. */
static int try_listen(struct cmc_channel *ch, enum cmc_qp_type qp, uint64_t sid,
		      uint64_t mask, const struct cmc_port_sel *sel,
		      struct cmc_id **out)
{
	struct cmc_id *id;
	int rc;

	assert_int_equal(cmc_create_id(ch, NULL, qp, &id), 0);
	rc = cmc_listen(id, sid, mask, 4, sel);
	if (rc) {
		assert_int_equal(cmc_destroy_id(id), 0);
		id = NULL;
	}
	if (out)
		*out = id;
	return rc;
}

static struct cmc_id *listen_on(struct cmc_channel *ch, uint64_t sid,
				uint64_t mask, const struct cmc_port_sel *sel)
{
	struct cmc_id *id;

	assert_int_equal(try_listen(ch, CMC_QP_RC, sid, mask, sel, &id), 0);
	return id;
}

/* A connects to sid at B's GID gid. */
static struct cmc_id *connect_gid(uint64_t sid, const uint8_t *gid)
{
	struct cmc_addr dst = { .family = CMC_AF_GID };

	memcpy(dst.addr, gid, CMC_GID_SIZE);
	return sim_connect_to(a, NULL, sid, &dst, next_qpn++, 12, NULL);
}

static struct cmc_id *connect_ip(uint64_t sid, const char *ip)
{
	uint8_t gid[CMC_GID_SIZE];

	gid_of(ip, gid);
	return connect_gid(sid, gid);
}

static void destroy_ids(struct cmc_id *const *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(cmc_destroy_id(ids[i]), 0);
}

#define DESTROY(...)                                                           \
	destroy_ids((struct cmc_id *const[]){ __VA_ARGS__ },                   \
		    sizeof((struct cmc_id *const[]){ __VA_ARGS__ }) /          \
			    sizeof(struct cmc_id *))

/* A's id is turned away: REJ 8 "invalid service id". */
static void expect_rej8(struct cmc_id *aid)
{
	struct cmc_event *ev = sim_next_ev(a, aid);

	sim_check_ev(ev, CMC_EVENT_REJ_RECEIVED);
	assert_int_equal(cmc_destroy_id(aid), 0);
}

/*
 * The next REQ on ch must be for listener l; rejected (consumer defined)
 * unless accept: then both sides reach ESTABLISHED. Returns B's id.
 */
static struct cmc_id *req_for(struct cmc_channel *ch, struct cmc_id *l,
			      struct cmc_id *aid, bool accept)
{
	struct cmc_event *ev = sim_next_ev(ch, NULL);
	struct cmc_id *bid;

	if (ev->type != CMC_EVENT_REQ_RECEIVED)
		fail_msg("expected REQ_RECEIVED, got %s",
			 cmc_event_str(ev->type));
	assert_ptr_equal(ev->listen_id, l);
	assert_int_equal(ev->u.req.listen_id, cmc_id_num(l));
	bid = ev->id;
	if (!accept) {
		assert_int_equal(cmc_reject(bid, 28, NULL, 0, NULL, 0), 0);
		assert_int_equal(cmc_ack_event(ev), 0);
		sim_expect_ev(a, aid, CMC_EVENT_REJ_RECEIVED);
		assert_int_equal(cmc_destroy_id(aid), 0);
		assert_int_equal(cmc_destroy_id(bid), 0);
		return NULL;
	}
	assert_int_equal(sim_accept(bid, next_qpn++, NULL), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(a, aid);
	sim_check_ev(ev, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_rtu(aid, NULL, 0), 0);
	sim_expect_ev(ch, bid, CMC_EVENT_ESTABLISHED);
	return bid;
}

/* Only the REQs for its own address reach a GID listener. */
static void test_gid_listener(void **state)
{
	struct cmc_port_sel s1 = sel_gid(B_IP1);
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(5001) };
	struct cmc_conn_param p = { .qp_num = 0x77,
				    .start_psn = 0x77,
				    .retry_count = 7,
				    .rnr_retry_count = 7,
				    .private_data = "rdma_cm",
				    .private_data_len = 8 };
	uint64_t sid = cmc_rdma_service_id(CMC_RDMA_PS_TCP, 5001);
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	struct sockaddr_storage src_sa, dst_sa;
	uint8_t ll[CMC_GID_SIZE], want[CMC_GID_SIZE];
	struct cmc_id *l, *aid, *bid;
	struct cmc_id_info info;
	struct cmc_event *ev;
	const uint8_t *upd;
	uint64_t cursor = 0;
	bool listed = false;
	char txt[INET_ADDRSTRLEN];
	int n;

	(void)state;
	l = listen_on(b, sid, ~0ULL, &s1);
	/* To 127.0.2.1, the rdma_cm way: its listener, which sees whom the
	 * peer addressed. */
	assert_int_equal(inet_pton(AF_INET, B_IP1, &dst.sin_addr), 1);
	assert_int_equal(cmc_create_id(a, NULL, CMC_QP_RC, &aid), 0);
	assert_int_equal(cmc_connect_ip(aid, (struct sockaddr *)&dst, NULL,
					CMC_RDMA_PS_TCP, &p),
			 0);
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_REQ_RECEIVED);
	assert_ptr_equal(ev->listen_id, l);
	assert_int_equal(cmc_event_cma(ev, &src_sa, &dst_sa, &upd, NULL), 0);
	assert_non_null(inet_ntop(AF_INET,
				  &((struct sockaddr_in *)&dst_sa)->sin_addr,
				  txt, sizeof(txt)));
	assert_string_equal(txt, B_IP1);
	assert_int_equal(ntohs(((struct sockaddr_in *)&dst_sa)->sin_port),
			 5001);
	assert_non_null(inet_ntop(AF_INET,
				  &((struct sockaddr_in *)&src_sa)->sin_addr,
				  txt, sizeof(txt)));
	assert_string_equal(txt, A_IP);
	assert_string_equal((const char *)upd, "rdma_cm");
	assert_memory_equal(ev->u.req.path.local_gid, s1.gid, CMC_GID_SIZE);
	bid = ev->id;
	assert_int_equal(sim_accept(bid, 0x88, NULL), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(a, aid);
	sim_check_ev(ev, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_rtu(aid, NULL, 0), 0);
	sim_expect_ev(b, bid, CMC_EVENT_ESTABLISHED);

	/* The other address of B, and the other GID of the same port: no
	 * listener there (REJ 8), and B's client hears nothing. */
	expect_rej8(connect_ip(sid, B_IP2));
	b_ll_gid(1, ll);
	expect_rej8(connect_gid(sid, ll));
	sim_expect_quiet(b);

	/* What B shows about the listener. */
	assert_int_equal(cmc_query_id(l, &info), 0);
	assert_int_equal(info.state, CMC_STATE_LISTEN);
	assert_int_equal(info.sel, CMC_SEL_GID);
	assert_memory_equal(info.path.local_gid, s1.gid, CMC_GID_SIZE);
	assert_string_equal(info.path.dev_name, "");
	do {
		n = cmc_list(b, CMC_LIST_LISTENERS, &cursor, e);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			if (e[i].id != cmc_id_num(l))
				continue;
			assert_int_equal(e[i].sel, CMC_SEL_GID);
			gid_of(B_IP1, want);
			assert_memory_equal(e[i].listen_gid, want,
					    CMC_GID_SIZE);
			listed = true;
		}
	} while (cursor);
	assert_true(listed);

	DESTROY(aid, bid, l);
}

/* Two programs on one service id, one per address: both work. */
static void test_two_gid_listeners(void **state)
{
	struct cmc_port_sel s1 = sel_gid(B_IP1), s2 = sel_gid(B_IP2);
	struct cmc_channel *b2 = sim_open_ch(sim_fab.sock[1]);
	uint64_t sid = cmc_rdma_service_id(CMC_RDMA_PS_TCP, 5002);
	struct cmc_id *l1, *l2, *a1, *a2, *b1id, *b2id;

	(void)state;
	l1 = listen_on(b, sid, ~0ULL, &s1);
	l2 = listen_on(b2, sid, ~0ULL, &s2);
	a2 = connect_ip(sid, B_IP2);
	b2id = req_for(b2, l2, a2, true);
	a1 = connect_ip(sid, B_IP1);
	b1id = req_for(b, l1, a1, true);
	sim_expect_quiet(b);
	sim_expect_quiet(b2);
	assert_int_equal(sim_state_of(b1id), CMC_STATE_ESTABLISHED);
	assert_int_equal(sim_state_of(b2id), CMC_STATE_ESTABLISHED);
	DESTROY(a1, a2, b1id, b2id, l1, l2);
	cmc_close(b2);
}

/* `cmctl listeners` on B ends l's line with where it listens. */
static void cmctl_shows(struct cmc_id *l, const char *where)
{
	char cmdline[512];

	snprintf(cmdline, sizeof(cmdline),
		 "%s -s %s listeners | grep -Eq '^0x%08x .* %s$'",
		 getenv("CMCTL"), sim_fab.sock[1], cmc_id_num(l), where);
	if (!system(cmdline))
		return;
	/* What it did show, for the log. */
	snprintf(cmdline, sizeof(cmdline), "%s -s %s listeners >&2",
		 getenv("CMCTL"), sim_fab.sock[1]);
	if (system(cmdline))
		fprintf(stderr, "cmctl failed\n");
	fail_msg("cmctl listeners: no line for 0x%08x ending with %s",
		 cmc_id_num(l), where);
}

/* -EADDRINUSE as the kernel's rdma_cm decides it for one port. */
static void test_overlap_eaddrinuse(void **state)
{
	struct cmc_port_sel s1 = sel_gid(B_IP1), s2 = sel_gid(B_IP2);
	struct cmc_port_sel p1 = sel_port(B_DEV, 1), p2 = sel_port(B_DEV, 2);
	struct cmc_port_sel pall = sel_port(B_DEV, 0);
	struct cmc_port_sel foreign = sel_gid("127.0.9.9");
	struct cmc_port_sel nodev = sel_port("nosuch", 0);
	struct cmc_port_sel noport = sel_port(B_DEV, 3);
	struct cmc_channel *b2 = sim_open_ch(sim_fab.sock[1]);
	uint64_t sid = cmc_rdma_service_id(CMC_RDMA_PS_TCP, 5003);
	uint64_t sid2 = cmc_rdma_service_id(CMC_RDMA_PS_TCP, 5004);
	struct cmc_id *l[5], *w;
	struct cmc_id_info info;

	(void)state;
	assert_int_equal(try_listen(b, CMC_QP_RC, sid, ~0ULL, &s1, &l[0]), 0);
	/* The same address again, from another program too; the wildcard,
	 * which overlaps everything. */
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid, ~0ULL, &s1, NULL),
			 -EADDRINUSE);
	assert_int_equal(try_listen(b, CMC_QP_RC, sid, ~0ULL, NULL, NULL),
			 -EADDRINUSE);
	/* A port does not overlap an address; two ports when they share
	 * one (a device's port 0 is all of them). */
	assert_int_equal(try_listen(b, CMC_QP_RC, sid, ~0ULL, &p1, &l[1]), 0);
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid, ~0ULL, &pall, NULL),
			 -EADDRINUSE);
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid, ~0ULL, &p2, &l[2]), 0);
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid, ~0ULL, &s2, &l[3]), 0);
	assert_int_equal(cmc_query_id(l[1], &info), 0);
	assert_int_equal(info.sel, CMC_SEL_PORT);
	assert_string_equal(info.path.dev_name, B_DEV);
	assert_int_equal(info.path.port_num, 1);
	/* A wildcard first: nothing else on that service id. */
	w = listen_on(b, sid2, ~0ULL, NULL);
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid2, ~0ULL, &s1, NULL),
			 -EADDRINUSE);
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid2, ~0ULL, &p1, NULL),
			 -EADDRINUSE);
	/* What B does not have. */
	assert_int_equal(try_listen(b, CMC_QP_RC, sid, ~0ULL, &foreign, NULL),
			 -EADDRNOTAVAIL);
	assert_int_equal(try_listen(b, CMC_QP_RC, sid, ~0ULL, &nodev, NULL),
			 -ENODEV);
	assert_int_equal(try_listen(b, CMC_QP_RC, sid, ~0ULL, &noport, NULL),
			 -ENODEV);
	/* cmctl says where each listens. */
	cmctl_shows(w, "\\*");
	cmctl_shows(l[1], B_DEV "/1");
	cmctl_shows(l[3], "::ffff:" B_IP2);
	/* A destroyed listener's claim is free again. */
	assert_int_equal(cmc_destroy_id(l[0]), 0);
	assert_int_equal(try_listen(b2, CMC_QP_RC, sid, ~0ULL, &s1, &l[4]), 0);
	DESTROY(w, l[1], l[2], l[3], l[4]);
	cmc_close(b2);
}

/* A GID listener before a port listener before a wildcard one. */
static void test_most_specific_first(void **state)
{
	struct cmc_port_sel s1 = sel_gid(B_IP1), p2 = sel_port(B_DEV, 2);
	const uint64_t range = 0xabc000, mask = ~0xfffULL;
	struct cmc_id *lw, *lg, *lp;
	uint8_t ll[CMC_GID_SIZE];

	(void)state;
	lw = listen_on(b, range, mask, NULL);
	lg = listen_on(b, range | 1, ~0ULL, &s1);
	lp = listen_on(b, range | 1, ~0ULL, &p2);
	req_for(b, lg, connect_ip(range | 1, B_IP1), false);
	req_for(b, lp, connect_ip(range | 1, B_IP2), false);
	b_ll_gid(1, ll);
	req_for(b, lw, connect_gid(range | 1, ll), false);
	req_for(b, lw, connect_ip(range | 2, B_IP1), false);
	assert_int_equal(cmc_destroy_id(lp), 0);
	req_for(b, lw, connect_ip(range | 1, B_IP2), false);
	DESTROY(lg, lw);
}

/* A's new UD id asks B's UDP port at ip, the rdma_cm way. */
static struct cmc_id *sidr_to(const char *ip, uint16_t port)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct cmc_sidr_param p = { .private_data = "udaddy",
				    .private_data_len = 7 };
	struct cmc_id *id;

	assert_int_equal(inet_pton(AF_INET, ip, &dst.sin_addr), 1);
	assert_int_equal(cmc_create_id(a, NULL, CMC_QP_UD, &id), 0);
	assert_int_equal(cmc_sidr_req_ip(id, (struct sockaddr *)&dst, NULL,
					 CMC_RDMA_PS_UDP, &p),
			 0);
	return id;
}

/* SIDR the rdma_cm way (udaddy), to a listener on one address. */
static void test_sidr_to_gid(void **state)
{
	struct cmc_port_sel s1 = sel_gid(B_IP1);
	uint64_t sid = cmc_rdma_service_id(CMC_RDMA_PS_UDP, 7174);
	struct sockaddr_storage src_sa, dst_sa;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&src_sa;
	struct sockaddr_in *d4 = (struct sockaddr_in *)&dst_sa;
	struct cmc_id *l, *aid;
	struct cmc_event *ev;
	const uint8_t *upd;
	char txt[INET_ADDRSTRLEN];
	size_t len;

	(void)state;
	assert_int_equal(try_listen(b, CMC_QP_UD, sid, ~0ULL, &s1, &l), 0);
	aid = sidr_to(B_IP1, 7174);
	ev = sim_next_ev(b, NULL);
	assert_int_equal(ev->type, CMC_EVENT_SIDR_REQ_RECEIVED);
	assert_ptr_equal(ev->listen_id, l);
	assert_true(ev->u.sidr_req.service_id == sid);
	assert_int_equal(cmc_event_cma(ev, &src_sa, &dst_sa, &upd, &len), 0);
	assert_int_equal(s4->sin_family, AF_INET);
	assert_non_null(inet_ntop(AF_INET, &s4->sin_addr, txt, sizeof(txt)));
	assert_string_equal(txt, A_IP);
	assert_true(ntohs(s4->sin_port) >= 32768); /* ephemeral */
	assert_non_null(inet_ntop(AF_INET, &d4->sin_addr, txt, sizeof(txt)));
	assert_string_equal(txt, B_IP1);
	assert_int_equal(ntohs(d4->sin_port), 7174);
	assert_int_equal(len, CMC_CMA_SIDR_PRIVATE_DATA_SIZE);
	assert_string_equal((const char *)upd, "udaddy");
	/* The path back leaves from the address A asked for. */
	assert_memory_equal(ev->u.sidr_req.path.local_gid, s1.gid,
			    CMC_GID_SIZE);
	assert_int_equal(
		cmc_sidr_rep(ev->id, 0, 0x4242, CMC_RDMA_UDP_QKEY, NULL, 0), 0);
	assert_int_equal(cmc_destroy_id(ev->id), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	ev = sim_next_ev(a, aid);
	assert_int_equal(ev->type, CMC_EVENT_SIDR_REP_RECEIVED);
	assert_int_equal(ev->u.sidr_rep.status, 0);
	assert_int_equal(ev->u.sidr_rep.qpn, 0x4242);
	assert_int_equal(ev->u.sidr_rep.qkey, 0x01234567);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_destroy_id(aid), 0);

	/* B's other address: no listener, IBTA Table 121 status 1. */
	aid = sidr_to(B_IP2, 7174);
	ev = sim_next_ev(a, aid);
	assert_int_equal(ev->type, CMC_EVENT_SIDR_REP_RECEIVED);
	assert_int_equal(ev->u.sidr_rep.status, 1);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(cmc_destroy_id(aid), 0);
	sim_expect_quiet(b);
	assert_int_equal(cmc_destroy_id(l), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gid_listener),
		cmocka_unit_test(test_two_gid_listeners),
		cmocka_unit_test(test_overlap_eaddrinuse),
		cmocka_unit_test(test_most_specific_first),
		cmocka_unit_test(test_sidr_to_gid),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
