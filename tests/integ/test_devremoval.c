// SPDX-License-Identifier: MIT
/*
 * Device removal end to end on the simulated fabric (issue 14, item 5): a
 * hub and two daemons with two ports each (node 1: LIDs 17, 18; node 2:
 * LIDs 33, 34). Connections run from A to both of B's ports; then the hub
 * removes B's first port for good (cmhub --ctl port 2 0 remove, as
 * `rdma link delete` removes a device). Every id of B's on that port, the
 * established ones and those mid-handshake, gets DEVICE_REMOVAL -ENODEV
 * exactly once, with the port in its body and IDLE as its state; the id on
 * B's other port is untouched and still disconnects normally; destroy
 * works; the listener and the daemon keep serving on the remaining port;
 * the counters say so.
 */
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

#define B_PORT1_LID 33 /* node 2, port 1: removed */
#define B_PORT2_LID 34 /* node 2, port 2: stays */
#define SID 0xde7000ULL

static int group_setup(void **state)
{
	static const char *const two[] = { "--sim-ports", "2", NULL };
	const char *const *const extra[] = { two, two };

	(void)state;
	return sim_fabric_start("devrm", 14, 2, extra) ? -1 : 0;
}

/* Slow answers are fine: B's half-open ids must stay half-open. */
static struct cmc_id *connect_to(struct cmc_channel *ch, uint16_t lid,
				 uint32_t qpn)
{
	return sim_connect(ch, NULL, SID, lid, qpn, 20, NULL);
}

/* A's new connect reaches B's listener: B's new id. */
static struct cmc_id *req_at_b(struct cmc_channel *b, uint8_t *port_num)
{
	struct cmc_event *ev = sim_next_ev(b, NULL);
	struct cmc_id *id;

	if (ev->type != CMC_EVENT_REQ_RECEIVED)
		fail_msg("expected REQ_RECEIVED, got %s",
			 cmc_event_str(ev->type));
	id = ev->id;
	*port_num = ev->u.req.path.port_num;
	assert_int_equal(cmc_ack_event(ev), 0);
	return id;
}

static void establish(struct cmc_channel *a, struct cmc_channel *b,
		      uint16_t lid, uint32_t qpn, struct cmc_id **aid,
		      struct cmc_id **bid, uint8_t *port_num)
{
	struct cmc_event *ev;

	*aid = connect_to(a, lid, qpn);
	*bid = req_at_b(b, port_num);
	assert_int_equal(sim_accept(*bid, qpn + 0x1000, NULL), 0);
	ev = sim_next_ev(a, *aid);
	assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_rtu(*aid, NULL, 0), 0);
	assert_int_equal(cmc_ack_event(ev), 0);
	sim_expect_ev(b, *bid, CMC_EVENT_ESTABLISHED);
}

static void hub_remove_port(unsigned int node, unsigned int port)
{
	char cmdline[512];

	snprintf(cmdline, sizeof(cmdline),
		 "%s --ctl %s port %u %u remove >/dev/null", getenv("CMHUB"),
		 sim_fab.hub_sock, node, port);
	assert_int_equal(system(cmdline), 0);
}

static void test_device_removal(void **state)
{
	struct cmc_channel *a = sim_open_ch(sim_fab.sock[0]);
	struct cmc_channel *b = sim_open_ch(sim_fab.sock[1]);
	struct cmc_id *l, *aid[4], *bid[4], *gone[3], *nid, *nbid;
	struct cmc_event *ev;
	bool seen[3] = { false, false, false };
	uint8_t pn[4], npn;
	uint64_t removed0 = sim_counter(b, "device_removed");
	uint64_t ids0 = sim_counter(b, "device_removed_ids");

	(void)state;
	assert_int_equal(cmc_create_id(b, NULL, CMC_QP_RC, &l), 0);
	assert_int_equal(cmc_listen(l, SID, ~0ULL, 16, NULL), 0);
	/* 0: established on B's port 1; 1: established on B's port 2. */
	establish(a, b, B_PORT1_LID, 0x100, &aid[0], &bid[0], &pn[0]);
	establish(a, b, B_PORT2_LID, 0x200, &aid[1], &bid[1], &pn[1]);
	assert_int_equal(pn[0], 1);
	assert_int_equal(pn[1], 2);
	/* 2: REQ_RCVD on port 1 (B never answers). */
	aid[2] = connect_to(a, B_PORT1_LID, 0x300);
	bid[2] = req_at_b(b, &pn[2]);
	/* 3: REP_SENT on port 1 (A never sends the RTU). */
	aid[3] = connect_to(a, B_PORT1_LID, 0x400);
	bid[3] = req_at_b(b, &pn[3]);
	assert_int_equal(sim_accept(bid[3], 0x1400, NULL), 0);
	ev = sim_next_ev(a, aid[3]);
	assert_int_equal(ev->type, CMC_EVENT_REP_RECEIVED);
	assert_int_equal(cmc_ack_event(ev), 0);
	assert_int_equal(pn[2], 1);
	assert_int_equal(pn[3], 1);

	hub_remove_port(2, 0);
	gone[0] = bid[0];
	gone[1] = bid[2];
	gone[2] = bid[3];
	for (int n = 0; n < 3; n++) {
		int k;

		ev = sim_next_ev(b, NULL);
		if (ev->type != CMC_EVENT_DEVICE_REMOVAL)
			fail_msg("expected DEVICE_REMOVAL, got %s (status %d)",
				 cmc_event_str(ev->type), ev->status);
		for (k = 0; k < 3 && ev->id != gone[k]; k++)
			;
		assert_true(k < 3);
		assert_false(seen[k]);
		seen[k] = true;
		assert_int_equal(ev->status, -ENODEV);
		assert_int_equal(ev->u.port.port_num, 1);
		assert_string_equal(ev->u.port.dev_name, "sim2");
		assert_int_equal(cmc_ack_event(ev), 0);
		assert_int_equal(sim_state_of(gone[k]), CMC_STATE_IDLE);
	}
	/* Exactly once, nothing for the id on port 2. */
	sim_expect_quiet(b);
	assert_int_equal(sim_state_of(bid[1]), CMC_STATE_ESTABLISHED);
	assert_int_equal(sim_counter(b, "device_removed"), removed0 + 1);
	assert_int_equal(sim_counter(b, "device_removed_ids"), ids0 + 3);
	/* Only destroy is left for them, and it works. */
	assert_true(cmc_disconnect(bid[0], NULL, 0) < 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(cmc_destroy_id(gone[k]), 0);

	/* Port 2's connection is as it was: B disconnects it. */
	assert_int_equal(cmc_disconnect(bid[1], NULL, 0), 0);
	sim_expect_ev(a, aid[1], CMC_EVENT_DREQ_RECEIVED);
	assert_int_equal(cmc_disconnect(aid[1], NULL, 0), 0);
	sim_expect_ev(b, bid[1], CMC_EVENT_DREP_RECEIVED);
	sim_expect_ev(b, bid[1], CMC_EVENT_TIMEWAIT_EXIT);
	assert_int_equal(cmc_destroy_id(bid[1]), 0);

	/* The daemon and the listener keep serving, on port 2. */
	establish(a, b, B_PORT2_LID, 0x500, &nid, &nbid, &npn);
	assert_int_equal(npn, 2);
	assert_int_equal(cmc_destroy_id(nid), 0);
	assert_int_equal(cmc_destroy_id(nbid), 0);
	for (int k = 0; k < 4; k++)
		cmc_destroy_id(aid[k]);
	assert_int_equal(cmc_destroy_id(l), 0);
	cmc_close(a);
	cmc_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_removal),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
