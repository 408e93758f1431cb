// SPDX-License-Identifier: MIT
/*
 * Counters per CM message type, and the names the logs and cmctl use for
 * states and events.
 */
#include "conn.h"
#include "util.h"

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

void cnt_duplicate(struct eng *eng, uint16_t port, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_DUPLICATES, port, t);
}

void cnt_unexpected(struct eng *eng, uint16_t port, enum cm_msg_type t)
{
	cnt_msg(eng, ENG_MSG_UNEXPECTED, port, t);
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
	return NAME_AT(eng_state_names, s);
}

const char *eng_lap_state_name(enum eng_lap_state lap)
{
	return NAME_AT(eng_lap_state_names, lap);
}

/* Each name written once: the enumerator's own. */
#define ENG_EV_NAME(n) [ENG_EV_##n] = #n
#define CONN_EV_NAME(n) [CONN_EV_##n] = #n

static const char *const eng_event_names[ENG_EV__COUNT] = {
	ENG_EV_NAME(REQ_RECEIVED),   ENG_EV_NAME(REQ_ERROR),
	ENG_EV_NAME(REP_RECEIVED),   ENG_EV_NAME(REP_ERROR),
	ENG_EV_NAME(RTU_RECEIVED),   ENG_EV_NAME(REJ_RECEIVED),
	ENG_EV_NAME(DREQ_RECEIVED),  ENG_EV_NAME(DREQ_ERROR),
	ENG_EV_NAME(DREP_RECEIVED),  ENG_EV_NAME(TIMEWAIT_EXIT),
	ENG_EV_NAME(LAP_RECEIVED),   ENG_EV_NAME(LAP_ERROR),
	ENG_EV_NAME(APR_RECEIVED),   ENG_EV_NAME(SIDR_REQ_RECEIVED),
	ENG_EV_NAME(SIDR_REQ_ERROR), ENG_EV_NAME(SIDR_REP_RECEIVED),
	ENG_EV_NAME(PORT_ERROR),     ENG_EV_NAME(MRA_RECEIVED),
	ENG_EV_NAME(DEVICE_REMOVAL),
};

const char *eng_event_name(enum eng_event_type t)
{
	return NAME_AT(eng_event_names, t);
}

static const char *const conn_event_names[CONN_EV__COUNT] = {
	CONN_EV_NAME(API_LISTEN),      CONN_EV_NAME(API_CONNECT),
	CONN_EV_NAME(API_ACCEPT),      CONN_EV_NAME(API_REJECT),
	CONN_EV_NAME(API_RTU),	       CONN_EV_NAME(API_MRA),
	CONN_EV_NAME(API_DISCONNECT),  CONN_EV_NAME(API_LAP),
	CONN_EV_NAME(API_APR),	       CONN_EV_NAME(API_SIDR_REQ),
	CONN_EV_NAME(API_SIDR_REP),    CONN_EV_NAME(API_ESTABLISH),
	CONN_EV_NAME(API_DESTROY),     CONN_EV_NAME(RX_REQ_NEW),
	CONN_EV_NAME(RX_REQ_HOLD),     CONN_EV_NAME(RX_REQ),
	CONN_EV_NAME(RX_MRA_REQ),      CONN_EV_NAME(RX_MRA_REP),
	CONN_EV_NAME(RX_MRA_LAP),      CONN_EV_NAME(RX_REJ),
	CONN_EV_NAME(RX_REJ_STALE),    CONN_EV_NAME(RX_REP),
	CONN_EV_NAME(RX_REP_STALE),    CONN_EV_NAME(RX_RTU),
	CONN_EV_NAME(RX_DREQ),	       CONN_EV_NAME(RX_DREP),
	CONN_EV_NAME(RX_LAP),	       CONN_EV_NAME(RX_APR),
	CONN_EV_NAME(RX_SIDR_REQ_NEW), CONN_EV_NAME(RX_SIDR_REQ),
	CONN_EV_NAME(RX_SIDR_REP),     CONN_EV_NAME(STALE),
	CONN_EV_NAME(TIMEOUT),	       CONN_EV_NAME(TIMEOUT_LAST),
	CONN_EV_NAME(MRA_DUE),	       CONN_EV_NAME(TIMEWAIT_DONE),
	CONN_EV_NAME(UNREACHABLE),     CONN_EV_NAME(LISTENER_GONE),
	CONN_EV_NAME(PORT_DOWN),       CONN_EV_NAME(DEVICE_GONE),
};

const char *conn_event_name(enum conn_event ev)
{
	return NAME_AT(conn_event_names, ev);
}
