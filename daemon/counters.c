// SPDX-License-Identifier: MIT
/*
 * Counters per CM message type, and the names the logs and cmctl use for
 * states and events.
 */
#include "conn.h"

/* One count of kind for a message of type t, globally and on port. */
static void cnt_msg(struct eng *eng, enum eng_msg_count kind, uint16_t port,
		    enum cm_msg_type t)
{
	uint64_t *const global[ENG_MSG__COUNT] = {
		[ENG_MSG_SENT] = eng->cnt.sent,
		[ENG_MSG_RECEIVED] = eng->cnt.received,
		[ENG_MSG_RETRANSMITTED] = eng->cnt.retransmitted,
		[ENG_MSG_DUPLICATES] = eng->cnt.duplicates,
		[ENG_MSG_UNEXPECTED] = eng->cnt.unexpected,
		[ENG_MSG_MALFORMED] = eng->cnt.malformed,
	};

	if ((unsigned int)t >= CM_MSG__COUNT)
		return;
	global[kind][t]++;
	if (port < ENG_MAX_PORTS)
		eng->ports[port].cnt.msg[kind][t]++;
}

void cnt_sent(struct eng *eng, uint16_t port, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_SENT, port, t);
}

void cnt_received(struct eng *eng, uint16_t port, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_RECEIVED, port, t);
}

void cnt_retransmitted(struct eng *eng, uint16_t port, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_RETRANSMITTED, port, t);
}

void cnt_duplicate(struct eng *eng, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_DUPLICATES, eng->rx_port, t);
}

void cnt_unexpected(struct eng *eng, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_UNEXPECTED, eng->rx_port, t);
}

void eng_count_malformed(struct eng *eng, uint16_t port, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_MALFORMED, port, t);
}

const struct eng_port_counters *eng_port_counters(const struct eng *eng,
						  uint16_t port)
{
	return port < ENG_MAX_PORTS ? &eng->ports[port].cnt : NULL;
}

const struct eng_counters *eng_counters(const struct eng *eng)
{
	return &eng->cnt;
}

static const char *const eng_state_names[ENG_STATE__COUNT] = {
#define CM_STATE(NAME, value) [ENG_STATE_##NAME] = #NAME,
#include "cm_states.def"
};

static const char *const eng_lap_state_names[] = {
#define CM_LAP_STATE(NAME, ENG, value, text) [ENG_LAP_##ENG] = text,
#include "cm_states.def"
};

const char *eng_state_name(enum eng_state s)
{
	unsigned int i = (unsigned int)s;

	return i < ENG_STATE__COUNT ? eng_state_names[i] : "?";
}

const char *eng_lap_state_name(enum eng_lap_state lap)
{
	unsigned int i = (unsigned int)lap;

	return i <= ENG_LAP_MRA_RCVD ? eng_lap_state_names[i] : "?";
}

static const char *const eng_event_names[ENG_EV__COUNT] = {
	[ENG_EV_REQ_RECEIVED] = "REQ_RECEIVED",
	[ENG_EV_REQ_ERROR] = "REQ_ERROR",
	[ENG_EV_REP_RECEIVED] = "REP_RECEIVED",
	[ENG_EV_REP_ERROR] = "REP_ERROR",
	[ENG_EV_RTU_RECEIVED] = "RTU_RECEIVED",
	[ENG_EV_REJ_RECEIVED] = "REJ_RECEIVED",
	[ENG_EV_DREQ_RECEIVED] = "DREQ_RECEIVED",
	[ENG_EV_DREQ_ERROR] = "DREQ_ERROR",
	[ENG_EV_DREP_RECEIVED] = "DREP_RECEIVED",
	[ENG_EV_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	[ENG_EV_LAP_RECEIVED] = "LAP_RECEIVED",
	[ENG_EV_LAP_ERROR] = "LAP_ERROR",
	[ENG_EV_APR_RECEIVED] = "APR_RECEIVED",
	[ENG_EV_SIDR_REQ_RECEIVED] = "SIDR_REQ_RECEIVED",
	[ENG_EV_SIDR_REQ_ERROR] = "SIDR_REQ_ERROR",
	[ENG_EV_SIDR_REP_RECEIVED] = "SIDR_REP_RECEIVED",
	[ENG_EV_PORT_ERROR] = "PORT_ERROR",
	[ENG_EV_MRA_RECEIVED] = "MRA_RECEIVED",
	[ENG_EV_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
};

const char *eng_event_name(enum eng_event_type t)
{
	unsigned int i = (unsigned int)t;

	return i < ENG_EV__COUNT && eng_event_names[i] ? eng_event_names[i] :
							 "?";
}

static const char *const conn_event_names[CONN_EV__COUNT] = {
	[CONN_EV_API_LISTEN] = "API_LISTEN",
	[CONN_EV_API_CONNECT] = "API_CONNECT",
	[CONN_EV_API_ACCEPT] = "API_ACCEPT",
	[CONN_EV_API_REJECT] = "API_REJECT",
	[CONN_EV_API_RTU] = "API_RTU",
	[CONN_EV_API_MRA] = "API_MRA",
	[CONN_EV_API_DISCONNECT] = "API_DISCONNECT",
	[CONN_EV_API_LAP] = "API_LAP",
	[CONN_EV_API_APR] = "API_APR",
	[CONN_EV_API_SIDR_REQ] = "API_SIDR_REQ",
	[CONN_EV_API_SIDR_REP] = "API_SIDR_REP",
	[CONN_EV_API_ESTABLISH] = "API_ESTABLISH",
	[CONN_EV_API_DESTROY] = "API_DESTROY",
	[CONN_EV_RX_REQ_NEW] = "RX_REQ_NEW",
	[CONN_EV_RX_REQ_HOLD] = "RX_REQ_HOLD",
	[CONN_EV_RX_REQ] = "RX_REQ",
	[CONN_EV_RX_MRA_REQ] = "RX_MRA_REQ",
	[CONN_EV_RX_MRA_REP] = "RX_MRA_REP",
	[CONN_EV_RX_MRA_LAP] = "RX_MRA_LAP",
	[CONN_EV_RX_REJ] = "RX_REJ",
	[CONN_EV_RX_REJ_STALE] = "RX_REJ_STALE",
	[CONN_EV_RX_REP] = "RX_REP",
	[CONN_EV_RX_REP_STALE] = "RX_REP_STALE",
	[CONN_EV_RX_RTU] = "RX_RTU",
	[CONN_EV_RX_DREQ] = "RX_DREQ",
	[CONN_EV_RX_DREP] = "RX_DREP",
	[CONN_EV_RX_LAP] = "RX_LAP",
	[CONN_EV_RX_APR] = "RX_APR",
	[CONN_EV_RX_SIDR_REQ_NEW] = "RX_SIDR_REQ_NEW",
	[CONN_EV_RX_SIDR_REQ] = "RX_SIDR_REQ",
	[CONN_EV_RX_SIDR_REP] = "RX_SIDR_REP",
	[CONN_EV_STALE] = "STALE",
	[CONN_EV_TIMEOUT] = "TIMEOUT",
	[CONN_EV_TIMEOUT_LAST] = "TIMEOUT_LAST",
	[CONN_EV_MRA_DUE] = "MRA_DUE",
	[CONN_EV_TIMEWAIT_DONE] = "TIMEWAIT_DONE",
	[CONN_EV_UNREACHABLE] = "UNREACHABLE",
	[CONN_EV_LISTENER_GONE] = "LISTENER_GONE",
	[CONN_EV_PORT_DOWN] = "PORT_DOWN",
	[CONN_EV_DEVICE_GONE] = "DEVICE_GONE",
};

const char *conn_event_name(enum conn_event ev)
{
	unsigned int i = (unsigned int)ev;

	return i < CONN_EV__COUNT && conn_event_names[i] ? conn_event_names[i] :
							   "?";
}
