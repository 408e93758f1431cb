/* SPDX-License-Identifier: MIT */
/*
 * Test harness for the CM engine on the shared fake fabric
 * (tests/lib/fake_fabric.h): each side is a node whose queue records every
 * MAD it sent, a fake client that records every event, a seeded id/PSN
 * generator and a fake clock. Two sides can be pumped into each other by
 * hand, so a test decides exactly which MADs arrive, twice, late or never.
 */
#ifndef CMD_TEST_ENGINE_HARNESS_H
#define CMD_TEST_ENGINE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/fake_fabric.h"
#include "cm_engine.h"
#include "conn.h"

/* Default timing used by h_connect: exponents of 4.096 us. */
#define H_PLT 10 /* ~4.2 ms */
#define H_RESP 12 /* ~16.8 ms */
#define H_RETRIES 3
#define H_SVC 14 /* MRA service timeout the engine sends, ~67 ms */
#define H_ACK_DELAY 8 /* REP target ACK delay */

struct h_side {
	struct ff_node node; /* its engine, and how the peer reaches it */
	/* Every MAD sent; out.next: first not yet delivered/taken. */
	struct ff_queue out;
	struct eng_event *evs;
	size_t nev, evcap, evnext; /* evnext: first not yet checked */
	uint32_t qpn; /* next local QPN */
	bool compact; /* forget MADs and events once consumed (scale) */
	int fail_send; /* if non-zero, ops.send returns it and records nothing */
	bool defer_send; /* ops.send records and says ENG_SEND_DEFERRED */
	bool owner_full; /* ops.owner_has_room says no */
};

extern uint64_t h_now;
/* Table cells run, summed over every side freed so far. */
extern uint64_t h_hits[ENG_STATE__COUNT][CONN_EV__COUNT];

void h_init(struct h_side *s, uint64_t guid, uint16_t lid, bool roce,
	    uint64_t seed);
void h_init_cfg(struct h_side *s, uint64_t guid, uint16_t lid, bool roce,
		uint64_t seed, const struct eng_config *cfg);
void h_fini(struct h_side *s);
void h_quiet_logs(void);

uint32_t h_listen(struct h_side *s, uint64_t sid, unsigned int backlog);
uint32_t h_connect(struct h_side *s, struct h_side *peer, uint64_t sid);
uint32_t h_connect_qpn(struct h_side *s, struct h_side *peer, uint64_t sid,
		       uint32_t qpn);
int h_accept(struct h_side *s, uint32_t id);

/* Deliver 'from's pending MADs to 'to'; returns how many. */
size_t h_deliver(struct h_side *from, struct h_side *to);
/* Deliver both ways until neither side has anything pending. */
void h_pump(struct h_side *a, struct h_side *b);
/* Discard pending MADs; returns how many. */
size_t h_drop(struct h_side *s);
size_t h_pending(const struct h_side *s);
/* The next pending MAD, which must be of 'type'; consumed. */
struct cm_msg h_take(struct h_side *s, enum cm_msg_type type);
/* Inject a MAD into 'to' as if it came from 'from'. */
void h_inject(struct h_side *from, struct h_side *to, const struct cm_msg *m);

/* The next unchecked event, which must be 'type' for 'id' (0: any); acked. */
struct eng_event h_ev(struct h_side *s, enum eng_event_type type, uint32_t id);
/* Same without the ack. */
struct eng_event h_ev_noack(struct h_side *s, enum eng_event_type type,
			    uint32_t id);
size_t h_events_left(const struct h_side *s);
/* The one MRA_RECEIVED an MRA of ours brings (acked): which message was
 * MRAed (CM_MSG_REF_*) and the service timeout it asks for. */
struct eng_event h_mra_ev(struct h_side *s, uint32_t id, uint8_t mraed,
			  uint8_t service_timeout);

/* Advance the clock to 'at' and run both sides' timers (b may be NULL). */
void h_at(struct h_side *a, struct h_side *b, uint64_t at);
void h_advance(struct h_side *a, struct h_side *b, uint64_t ns);
/* Pump and run timers until nothing is pending and no deadline remains. */
void h_settle(struct h_side *a, struct h_side *b);

enum eng_state h_state(struct h_side *s, uint32_t id);

/* Engine-side time of exponent x. */
uint64_t h_ns(uint8_t x);

#endif
