// SPDX-License-Identifier: MIT
/*
 * What the integration tests that use libcmclient share (see
 * sim_client.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim_client.h"

int sim_count_ids(struct cmc_channel *ch, enum cmc_list_filter filter)
{
	struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;
	int n = 0, rc;

	do {
		rc = cmc_list(ch, filter, &cursor, e);
		assert_true(rc >= 0);
		n += rc;
	} while (cursor);
	return n;
}

uint64_t sim_counter(struct cmc_channel *ch, const char *name)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0, value = UINT64_MAX;
	int n;

	do {
		n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor, c);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			if (!strcmp(c[i].name, name))
				value = c[i].value;
	} while (cursor);
	assert_true(value != UINT64_MAX);
	return value;
}

struct cmc_channel *sim_open_ch(const char *sock)
{
	struct cmc_channel *ch = NULL;

	assert_int_equal(cmc_open(sock, program_invocation_short_name, &ch), 0);
	return ch;
}

struct cmc_event *sim_next_any(struct cmc_channel *ch, struct cmc_id *id)
{
	struct cmc_event *ev = NULL;
	int rc = id ? cmc_get_event_id(ch, id, &ev, SIM_WAIT_MS) :
		      cmc_get_event(ch, &ev, SIM_WAIT_MS);

	if (rc)
		fail_msg("no event: %s", cmc_strerror(rc));
	return ev;
}

struct cmc_event *sim_next_ev(struct cmc_channel *ch, struct cmc_id *id)
{
	struct cmc_event *ev;

	while ((ev = sim_next_any(ch, id))->type == CMC_EVENT_MRA_RECEIVED)
		assert_int_equal(cmc_ack_event(ev), 0);
	return ev;
}

void sim_check_ev(struct cmc_event *ev, enum cmc_event_type type)
{
	if (ev->type != type)
		fail_msg("expected %s, got %s (status %d)", cmc_event_str(type),
			 cmc_event_str(ev->type), ev->status);
	assert_int_equal(cmc_ack_event(ev), 0);
}

void sim_expect_ev(struct cmc_channel *ch, struct cmc_id *id,
		   enum cmc_event_type type)
{
	sim_check_ev(sim_next_ev(ch, id), type);
}

void sim_expect_quiet(struct cmc_channel *ch)
{
	struct cmc_event *ev = NULL;
	int rc;

	/* An MRA_RECEIVED is a note that a peer is slow, not an event. */
	while ((rc = cmc_get_event(ch, &ev, SIM_QUIET_MS)) == 0 &&
	       ev->type == CMC_EVENT_MRA_RECEIVED)
		assert_int_equal(cmc_ack_event(ev), 0);
	if (rc == 0)
		fail_msg("unexpected event %s", cmc_event_str(ev->type));
	assert_int_equal(rc, -EAGAIN);
}

int sim_state_of(struct cmc_id *id)
{
	struct cmc_id_info info;

	assert_int_equal(cmc_query_id(id, &info), 0);
	return info.state;
}

/* What every connect of the integration tests has in common. */
static const struct cmc_conn_param sim_rc_param = {
	.responder_resources = 4,
	.initiator_depth = 4,
	.retry_count = 7,
	.rnr_retry_count = 7,
	.max_cm_retries = 5,
};

struct cmc_id *sim_connect_to(struct cmc_channel *ch, void *ctx, uint64_t sid,
			      const struct cmc_addr *dst, uint32_t qpn,
			      uint8_t cm_timeout, const char *pd)
{
	struct cmc_conn_param p = sim_rc_param;
	struct cmc_id *id;

	p.service_id = sid;
	p.dst = *dst;
	p.qp_num = qpn;
	p.start_psn = qpn * 7 & 0xffffff;
	p.local_cm_response_timeout = p.remote_cm_response_timeout = cm_timeout;
	if (pd) {
		p.private_data = pd;
		p.private_data_len = (uint8_t)(strlen(pd) + 1);
	}
	assert_int_equal(cmc_create_id(ch, ctx, CMC_QP_RC, &id), 0);
	assert_int_equal(cmc_connect(id, &p), 0);
	return id;
}

struct cmc_id *sim_connect(struct cmc_channel *ch, void *ctx, uint64_t sid,
			   uint16_t lid, uint32_t qpn, uint8_t cm_timeout,
			   const char *pd)
{
	struct cmc_addr dst = { .family = CMC_AF_LID, .lid = lid };

	return sim_connect_to(ch, ctx, sid, &dst, qpn, cm_timeout, pd);
}

int sim_accept(struct cmc_id *id, uint32_t qpn, const char *pd)
{
	struct cmc_accept_param p = {
		.qp_num = qpn,
		.start_psn = 0x4242,
		.responder_resources = 4,
		.initiator_depth = 4,
		.rnr_retry_count = 7,
	};

	if (pd) {
		p.private_data = pd;
		p.private_data_len = (uint8_t)(strlen(pd) + 1);
	}
	return cmc_accept(id, &p);
}
