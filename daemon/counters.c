// SPDX-License-Identifier: MIT
/*
 * Counters per CM message type, and the names the logs and cmctl use for
 * states and events.
 */
#include "conn.h"

static bool cnt_ok(enum cm_msg_type t)
{
	return (unsigned int)t < CM_MSG__COUNT;
}

void cnt_sent(struct eng *eng, enum cm_msg_type t)
{
	if (cnt_ok(t))
		eng->cnt.sent[t]++;
}

void cnt_received(struct eng *eng, enum cm_msg_type t)
{
	if (cnt_ok(t))
		eng->cnt.received[t]++;
}

void cnt_retransmitted(struct eng *eng, enum cm_msg_type t)
{
	if (cnt_ok(t))
		eng->cnt.retransmitted[t]++;
}

void cnt_duplicate(struct eng *eng, enum cm_msg_type t)
{
	if (cnt_ok(t))
		eng->cnt.duplicates[t]++;
}

void cnt_unexpected(struct eng *eng, enum cm_msg_type t)
{
	if (cnt_ok(t))
		eng->cnt.unexpected[t]++;
}

void eng_count_malformed(struct eng *eng, enum cm_msg_type t)
{
	if (cnt_ok(t))
		eng->cnt.malformed[t]++;
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

const char *eng_event_name(enum eng_event_type t)
{
	switch (t) {
	case ENG_EV_REQ_RECEIVED:
		return "REQ_RECEIVED";
	case ENG_EV_REQ_ERROR:
		return "REQ_ERROR";
	case ENG_EV_REP_RECEIVED:
		return "REP_RECEIVED";
	case ENG_EV_REP_ERROR:
		return "REP_ERROR";
	case ENG_EV_RTU_RECEIVED:
		return "RTU_RECEIVED";
	case ENG_EV_REJ_RECEIVED:
		return "REJ_RECEIVED";
	case ENG_EV_DREQ_RECEIVED:
		return "DREQ_RECEIVED";
	case ENG_EV_DREQ_ERROR:
		return "DREQ_ERROR";
	case ENG_EV_DREP_RECEIVED:
		return "DREP_RECEIVED";
	case ENG_EV_TIMEWAIT_EXIT:
		return "TIMEWAIT_EXIT";
	case ENG_EV_LAP_RECEIVED:
		return "LAP_RECEIVED";
	case ENG_EV_LAP_ERROR:
		return "LAP_ERROR";
	case ENG_EV_APR_RECEIVED:
		return "APR_RECEIVED";
	case ENG_EV_SIDR_REQ_RECEIVED:
		return "SIDR_REQ_RECEIVED";
	case ENG_EV_SIDR_REQ_ERROR:
		return "SIDR_REQ_ERROR";
	case ENG_EV_SIDR_REP_RECEIVED:
		return "SIDR_REP_RECEIVED";
	case ENG_EV_PORT_ERROR:
		return "PORT_ERROR";
	case ENG_EV__COUNT:
		break;
	}
	return "?";
}

const char *conn_event_name(enum conn_event ev)
{
	switch (ev) {
	case CONN_EV_API_LISTEN:
		return "API_LISTEN";
	case CONN_EV_API_CONNECT:
		return "API_CONNECT";
	case CONN_EV_API_ACCEPT:
		return "API_ACCEPT";
	case CONN_EV_API_REJECT:
		return "API_REJECT";
	case CONN_EV_API_RTU:
		return "API_RTU";
	case CONN_EV_API_MRA:
		return "API_MRA";
	case CONN_EV_API_DISCONNECT:
		return "API_DISCONNECT";
	case CONN_EV_API_LAP:
		return "API_LAP";
	case CONN_EV_API_APR:
		return "API_APR";
	case CONN_EV_API_SIDR_REQ:
		return "API_SIDR_REQ";
	case CONN_EV_API_SIDR_REP:
		return "API_SIDR_REP";
	case CONN_EV_API_ESTABLISH:
		return "API_ESTABLISH";
	case CONN_EV_API_DESTROY:
		return "API_DESTROY";
	case CONN_EV_RX_REQ_NEW:
		return "RX_REQ_NEW";
	case CONN_EV_RX_REQ_HOLD:
		return "RX_REQ_HOLD";
	case CONN_EV_RX_REQ:
		return "RX_REQ";
	case CONN_EV_RX_MRA_REQ:
		return "RX_MRA_REQ";
	case CONN_EV_RX_MRA_REP:
		return "RX_MRA_REP";
	case CONN_EV_RX_MRA_LAP:
		return "RX_MRA_LAP";
	case CONN_EV_RX_REJ:
		return "RX_REJ";
	case CONN_EV_RX_REJ_STALE:
		return "RX_REJ_STALE";
	case CONN_EV_RX_REP:
		return "RX_REP";
	case CONN_EV_RX_REP_STALE:
		return "RX_REP_STALE";
	case CONN_EV_RX_RTU:
		return "RX_RTU";
	case CONN_EV_RX_DREQ:
		return "RX_DREQ";
	case CONN_EV_RX_DREP:
		return "RX_DREP";
	case CONN_EV_RX_LAP:
		return "RX_LAP";
	case CONN_EV_RX_APR:
		return "RX_APR";
	case CONN_EV_RX_SIDR_REQ_NEW:
		return "RX_SIDR_REQ_NEW";
	case CONN_EV_RX_SIDR_REQ:
		return "RX_SIDR_REQ";
	case CONN_EV_RX_SIDR_REP:
		return "RX_SIDR_REP";
	case CONN_EV_STALE:
		return "STALE";
	case CONN_EV_TIMEOUT:
		return "TIMEOUT";
	case CONN_EV_TIMEOUT_LAST:
		return "TIMEOUT_LAST";
	case CONN_EV_MRA_DUE:
		return "MRA_DUE";
	case CONN_EV_TIMEWAIT_DONE:
		return "TIMEWAIT_DONE";
	case CONN_EV_UNREACHABLE:
		return "UNREACHABLE";
	case CONN_EV_PORT_DOWN:
		return "PORT_DOWN";
	case CONN_EV__COUNT:
		break;
	}
	return "?";
}
