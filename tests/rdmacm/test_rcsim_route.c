// SPDX-License-Identifier: MIT
/*
 * rdma_resolve_route on InfiniBand ports (issue 19): the route is the
 * subnet administrator's path, as the kernel's rdma_cm gets it. The hub
 * is the SM and SA of two IB daemons; its path attributes are set with
 * `cmhub --ctl` so that they differ from anything the local port would
 * give (SL 7, MTU 1024, rate 40 Gb/s, packet life time 12). A librdmacm
 * client on node 1 resolves node 2's GID (as an AF_INET6 address) and
 * checks route.path_rec; rdma_connect then goes over that path without
 * asking the SA again (the daemon's counters, read here with
 * libcmclient), and is refused by node 2, where nobody listens. An SA
 * that has no path makes ROUTE_ERROR. And a listener on node 2 sees the
 * route's packet life time in the REQ (its local ACK timeout), as the
 * kernel's CM sends it.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmclient.h"
#include "rcsim.h"
#include "sim_client.h"
#include "sim_harness.h"

#define NODE_B_LID 33
/* test_route_plt's service: a cache entry of its own. */
#define PORT_PLT (RCS_PORT + 100)

static struct sockaddr_in6 gid_a, gid_b;

static void hub_ctl(const char *opts)
{
	if (sim_hub_ctl(opts))
		fail_msg("cmhub --ctl %s failed", opts);
}

/* The GID of the first port of the daemon at sock, as an address. */
static int port_gid(const char *sock, struct sockaddr_in6 *sin6)
{
	struct cmc_port_info pi[CMC_PORTS_BATCH_MAX];
	struct cmc_channel *ch = NULL;
	uint64_t cursor = 0;
	int n;

	if (cmc_open(sock, "test_rcsim_route", &ch))
		return -1;
	n = cmc_ports(ch, &cursor, pi);
	if (n >= 1) {
		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, pi[0].gids[0].gid, 16);
	}
	cmc_close(ch);
	return n >= 1 ? 0 : -1;
}

/* A global counter of node 1's daemon (the client's), by name. */
static uint64_t counter_a(const char *name)
{
	struct cmc_channel *ch = sim_open_ch(rcs_sock[1]);
	uint64_t v = sim_counter(ch, name);

	cmc_close(ch);
	return v;
}

static int group_setup(void **state)
{
	(void)state;
	if (rcs_setup_ib("rcroute", 23))
		return -1;
	if (port_gid(rcs_sock[1], &gid_a) || port_gid(rcs_sock[2], &gid_b))
		return -1;
	return 0;
}

/* Resolve node 2's GID from node 1's; the route's path is the SA's. */
static struct rdma_cm_id *resolve(struct rdma_event_channel *ch, uint16_t port)
{
	struct sockaddr_in6 dst = gid_b, src = gid_a;
	struct rdma_cm_id *id = NULL;

	dst.sin6_port = htons(port);
	RCS_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_resolve_addr(id, (struct sockaddr *)&src,
				 (struct sockaddr *)&dst, 2000));
	rcs_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, id);
	RCS_OK(rdma_resolve_route(id, 2000));
	return id;
}

static void client_route(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct ibv_sa_path_rec *p;
	struct rdma_conn_param cp = rcs_param(RCS_CLIENT_QPN, NULL, 0);

	(void)arg;
	RCS_CHECK(ch, "rdma_create_event_channel failed");
	id = resolve(ch, RCS_PORT_NOBODY);
	rcs_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id);
	RCS_CHECK(id->route.num_paths == 1, "num_paths %d",
		  id->route.num_paths);
	p = id->route.path_rec;
	RCS_CHECK(p, "no path record");
	RCS_CHECK(p->sl == 7 && p->mtu == IBV_MTU_1024 && p->rate == 3 + 4 &&
			  p->packet_life_time == 12,
		  "path sl %u mtu %u rate %u plt %u, want 7 %u 7 12", p->sl,
		  p->mtu, p->rate, p->packet_life_time, IBV_MTU_1024);
	RCS_CHECK(ntohs(p->dlid) == NODE_B_LID, "dlid %u", ntohs(p->dlid));
	RCS_CHECK(!memcmp(&p->dgid, &gid_b.sin6_addr, 16), "dgid differs");
	RCS_CHECK(!memcmp(&p->sgid, &gid_a.sin6_addr, 16), "sgid differs");
	/* Over that path; node 2 has no listener: REJ (invalid service). */
	RCS_OK(rdma_connect(id, &cp));
	ev = rcs_next(ch);
	RCS_CHECK(ev->event == RDMA_CM_EVENT_REJECTED ||
			  ev->event == RDMA_CM_EVENT_UNREACHABLE,
		  "%s, want REJECTED", rdma_event_str(ev->event));
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* Node 2 listens on every address and looks at the REQ's path. */
static void server_sees_plt(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in6 any = { .sin6_family = AF_INET6,
				    .sin6_port = htons(PORT_PLT) };
	struct rdma_cm_id *lst = NULL;
	struct rdma_cm_event *ev;
	struct ibv_sa_path_rec *p;

	(void)arg;
	RCS_CHECK(ch, "rdma_create_event_channel failed");
	RCS_OK(rdma_create_id(ch, &lst, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_bind_addr(lst, (struct sockaddr *)&any));
	RCS_OK(rdma_listen(lst, 8));
	rcs_tell("listening");
	ev = rcs_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	p = ev->id->route.path_rec;
	RCS_CHECK(p, "no path record");
	/* The REQ's local ACK timeout (packet life time + 1) says 12. */
	RCS_CHECK(p->sl == 7 && p->packet_life_time == 12,
		  "the REQ's path: sl %u plt %u, want 7 12", p->sl,
		  p->packet_life_time);
	RCS_OK(rdma_reject(ev->id, NULL, 0));
	RCS_OK(rdma_destroy_id(ev->id));
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(lst));
	rdma_destroy_event_channel(ch);
}

/* rdma_connect over the SA's route: the REQ carries its packet life
 * time (the local ACK timeout), not the daemon's default. */
static void client_plt(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = rcs_param(RCS_CLIENT_QPN, NULL, 0);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	(void)arg;
	RCS_CHECK(ch, "rdma_create_event_channel failed");
	rcs_hear("listening");
	id = resolve(ch, PORT_PLT);
	rcs_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id);
	RCS_CHECK(id->route.path_rec->packet_life_time == 12, "route plt %u",
		  id->route.path_rec->packet_life_time);
	RCS_OK(rdma_connect(id, &cp));
	ev = rcs_next(ch);
	RCS_CHECK(ev->event == RDMA_CM_EVENT_REJECTED, "%s, want REJECTED",
		  rdma_event_str(ev->event));
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

static void test_route_plt(void **state)
{
	(void)state;
	hub_ctl("--sa-sl 7 --sa-mtu 3 --sa-rate 7 --sa-plt 12");
	rcs_run(server_sees_plt, client_plt, NULL);
}

static void client_no_route(void *arg)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	(void)arg;
	RCS_CHECK(ch, "rdma_create_event_channel failed");
	id = resolve(ch, RCS_PORT);
	ev = rcs_next(ch);
	RCS_CHECK(ev->event == RDMA_CM_EVENT_ROUTE_ERROR,
		  "%s, want ROUTE_ERROR", rdma_event_str(ev->event));
	RCS_CHECK(ev->status == -ENOENT, "status %d", ev->status);
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

static void test_route_from_sa(void **state)
{
	uint64_t q0 = counter_a("sa_queries");

	(void)state;
	hub_ctl("--sa-sl 7 --sa-mtu 3 --sa-rate 7 --sa-plt 12");
	rcs_run_one(client_route, rcs_sock[1], NULL);
	/* resolve_route asked once; rdma_connect asked nothing. */
	assert_int_equal(counter_a("sa_queries"), q0 + 1);
	assert_int_equal(counter_a("req_sent"), 1);
}

static void test_route_error(void **state)
{
	(void)state;
	hub_ctl("--sa-error 3 --sa-count 1");
	rcs_run_one(client_no_route, rcs_sock[1], NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_from_sa),
		cmocka_unit_test(test_route_error),
		cmocka_unit_test(test_route_plt),
	};

	rcs_main(argc, argv);
	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
