/* SPDX-License-Identifier: MIT */
/*
 * Engine events to client protocol events. What the client sees of an
 * engine event is decided here and only here, as a pure function: of the
 * event (its CM message, status, id, context and the state it leads to),
 * the ports it may have arrived on (a REQ's path names its port and
 * device), and the path the id was told before (a REP's path is the one
 * the CONNECT resolved, its ACK timeout now covering the peer's ACK
 * delay). tests/unit/test_xlate.c holds the golden cases.
 */
#ifndef CMD_XLATE_H
#define CMD_XLATE_H

#include "cm_engine.h"
#include "cmp.h"
#include "transport.h"

/*
 * Fill *e (all of it but the header's sequence number) from ev. told: the
 * path the id was given so far (zero for a new passive id). Every engine
 * event has its protocol event; a client reads the type from e->type.
 */
void xlate_event(const struct xport *x, const struct cmp_path *told,
		 const struct eng_event *ev, struct cmp_event *e);

#endif
