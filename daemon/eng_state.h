/* SPDX-License-Identifier: MIT */
/*
 * The engine's part of the handoff state (eng_state.c): the records it
 * writes and reads are state_fields.def's ENG, PORT, CONN, LISTENER,
 * EVENT and its COUNTERS blocks.
 */
#ifndef CMD_ENG_STATE_H
#define CMD_ENG_STATE_H

#include <stdint.h>

#include "cm_engine.h"
#include "state.h"

/* Write the engine's records; errors stick in w. */
void eng_state_save(const struct eng *eng, struct state_w *w);

/*
 * Restoring into a fresh engine whose ports are declared (eng_port_set)
 * and that has no record yet: begin (NULL without memory), feed every
 * record in file order to eng_restore_rec, which returns 0, 1 for a
 * record that is not the engine's, or -EINVAL with *why; then
 * eng_restore_end (0 or -EINVAL), or eng_restore_abort after a failure.
 * Nothing is sent or delivered while records are built; eng_restore_end
 * sends again what the predecessor's transport had deferred. On failure
 * the engine holds part of the state: free it (eng_free) and start a new
 * one.
 */
struct eng_restore;
struct eng_restore *eng_restore_begin(struct eng *eng);
int eng_restore_rec(struct eng *eng, struct eng_restore *x, uint16_t type,
		    struct state_r *r, const char **why);
int eng_restore_end(struct eng *eng, struct eng_restore *x, uint64_t now,
		    const char **why);
void eng_restore_abort(struct eng_restore *x);
/* A COUNTERS record's block, if it is one of the engine's: 0, 1 (not the
 * engine's: for the caller), or -EINVAL with *why. */
int eng_restore_counters(struct eng *eng, const struct state_counters_rec *c,
			 const char **why);

#endif
