// SPDX-License-Identifier: MIT
/*
 * Engine events to the client protocol: each engine event becomes one cmp
 * EVENT for the id's owner, with its body from the CM message behind it,
 * the state the engine moved the id to, and the per-id event sequence of
 * rule 2. What an event tells about its id (the peer's QPN, the path) is
 * kept for QUERY_ID; the setup latency is measured here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cmd.h"
#include "log.h"
#include "util.h"
#include "xlate.h"

/*
 * ops: the connection setup latency histogram. The active side times from
 * its REQ (CONNECT) to the REP's event, the passive side from the REQ's
 * event to the RTU's (or NOTIFY_ESTABLISHED's) ESTABLISHED.
 */
static void setup_latency(struct cmd *cmd, struct api_id *a,
			  enum eng_event_type type, uint64_t now)
{
	uint64_t us;
	unsigned int b = 0;

	if (type == ENG_EV_REQ_RECEIVED) {
		a->setup_start = now;
		return;
	}
	if ((type != ENG_EV_REP_RECEIVED && type != ENG_EV_RTU_RECEIVED) ||
	    !a->setup_start)
		return;
	us = (now - a->setup_start) / 1000;
	a->setup_start = 0;
	while (b + 1 < CMD_SETUP_BUCKETS && us > (1ULL << b))
		b++;
	cmd->counters.setup_us[b]++;
	cmd->counters.setup_count++;
	cmd->counters.setup_us_sum += us;
}

/*
 * What an event told the id's owner that the daemon answers for later:
 * the path (QUERY_ID, LIST, PORT_ERROR's port) and a passive id's QP
 * type. Everything negotiated is the engine's (eng_id_info).
 */
static void id_told(struct cmd *cmd, struct api_id *a,
		    const struct cmp_event *e)
{
	if (e->type == CMP_EVENT_REQ_RECEIVED) {
		a->qp_type = e->req_received.qp_type;
		api_id_set_path(cmd, a, &e->req_received.path);
	} else if (e->type == CMP_EVENT_REP_RECEIVED) {
		api_id_set_path(cmd, a, &e->rep_received.path);
	} else if (e->type == CMP_EVENT_SIDR_REQ_RECEIVED) {
		a->qp_type = CMP_QP_TYPE_UD;
		api_id_set_path(cmd, a, &e->sidr_req_received.path);
	}
}

/* msg := a's next EVENT, in rule 2's sequence (which skips 0, cmp.h),
 * outstanding until acked. */
static void event_init(struct api_id *a, struct cmp_msg *msg)
{
	cmp_msg_init(msg, CMP_TYPE_EVENT, ++a->ev_seq);
	if (!a->ev_seq)
		msg->hdr.seq = ++a->ev_seq;
	a->unacked_seq = msg->hdr.seq;
}

static void event_send(struct api_client *ac, struct api_id *a,
		       const struct cmp_msg *msg)
{
	if (!srv_send(a->client, msg) && ac)
		ac->events_sent++;
}

void api_deliver_local(struct cmd *cmd, struct api_id *a,
		       const struct cmp_event *e)
{
	struct cmp_msg msg;

	event_init(a, &msg);
	msg.event = *e;
	a->local_unacked = true;
	event_send(api_client_of(cmd, a->client), a, &msg);
}

void api_deliver(void *ctx, const struct eng_event *ev)
{
	struct cmd *cmd = ctx;
	struct api_client *ac = api_client_find(cmd, ev->owner);
	struct api_id *a = api_id_find(cmd, ev->id);
	uint64_t now = cmd_now();
	struct cmp_msg msg;

	if (!ac) {
		/* The engine never delivers to a destroyed owner; if it
		 * did, there is nobody to tell. */
		log_err("event %s for id %u of unknown client %llu",
			eng_event_name(ev->type), ev->id,
			(unsigned long long)ev->owner);
		return;
	}
	if (!a) {
		/* A new passive id: it belongs to its listener's owner. */
		a = api_id_add(cmd, ac->client, ev->id, CMP_QP_TYPE_RC);
		if (!a) {
			log_err("out of memory for id %u", ev->id);
			return;
		}
	}
	event_init(a, &msg);
	xlate_event(cmd->xport, api_id_path(a), ev, &msg.event);
	id_told(cmd, a, &msg.event);
	setup_latency(cmd, a, ev->type, now);
	event_send(ac, a, &msg);
}
