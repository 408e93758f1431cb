/* SPDX-License-Identifier: MIT */
/*
 * What the integration tests that use libcmclient share (test_pipeline.c
 * speaks raw cmp and does without).
 */
#ifndef CMD_TESTS_INTEG_SIM_CLIENT_H
#define CMD_TESTS_INTEG_SIM_CLIENT_H

#include <stdint.h>

#include "cmclient.h"

#define SIM_WAIT_MS 30000 /* an event that must come: a hang guard */
#define SIM_QUIET_MS 300 /* "nothing arrives": how long we look */

/* A channel to the daemon at sock, named after the test program; fails
 * the test when it cannot be opened. */
struct cmc_channel *sim_open_ch(const char *sock);

/* The next event of id (or of any id when id is NULL), within
 * SIM_WAIT_MS; fails the test when none comes. */
struct cmc_event *sim_next_any(struct cmc_channel *ch, struct cmc_id *id);

/*
 * sim_next_any(), but an MRA_RECEIVED is acked and skipped: a peer's
 * daemon MRAs our REQ or REP when its app has not answered within half
 * our wait, which on a busy machine a test's app may not, so an outcome
 * may follow one (a matter of speed, not behaviour). A test that makes
 * the MRA happen (a held REQ) takes it with sim_next_any(). Likewise
 * sim_expect_quiet() lets MRA_RECEIVED pass.
 */
struct cmc_event *sim_next_ev(struct cmc_channel *ch, struct cmc_id *id);

/* ev must be of this type (else the test fails, naming both); acks it. */
void sim_check_ev(struct cmc_event *ev, enum cmc_event_type type);

/* The next event (sim_next_ev) is of this type; it is acked. */
void sim_expect_ev(struct cmc_channel *ch, struct cmc_id *id,
		   enum cmc_event_type type);

/* No event on ch for SIM_QUIET_MS. */
void sim_expect_quiet(struct cmc_channel *ch);

/* The id's state (CMC_STATE_*) as the daemon has it. */
int sim_state_of(struct cmc_id *id);

/*
 * A new id (context ctx) on ch connects to LID lid, service sid, with QP
 * qpn: start PSN qpn * 7, 4 responder resources and initiator depth,
 * retries 7, 5 CM retries, both CM response timeouts cm_timeout, and the
 * string pd (with its NUL) as private data unless it is NULL. Fails the
 * test when the connect does.
 */
struct cmc_id *sim_connect(struct cmc_channel *ch, void *ctx, uint64_t sid,
			   uint16_t lid, uint32_t qpn, uint8_t cm_timeout,
			   const char *pd);
/* The same to any destination (a GID, an IP address of a RoCE port). */
struct cmc_id *sim_connect_to(struct cmc_channel *ch, void *ctx, uint64_t sid,
			      const struct cmc_addr *dst, uint32_t qpn,
			      uint8_t cm_timeout, const char *pd);

/* cmc_accept() with QP qpn, start PSN 0x4242, 4 responder resources and
 * initiator depth, RNR retries 7, and the string pd as private data unless
 * it is NULL. */
int sim_accept(struct cmc_id *id, uint32_t qpn, const char *pd);

/*
 * The ids that filter (CMC_LIST_*) selects on ch's daemon: those of every
 * client when we run as root (CI does), otherwise only ours. Fails the
 * test when LIST fails.
 */
int sim_count_ids(struct cmc_channel *ch, enum cmc_list_filter filter);

/* A global counter of ch's daemon by name; fails the test when there is
 * no such counter. */
uint64_t sim_counter(struct cmc_channel *ch, const char *name);

#endif
