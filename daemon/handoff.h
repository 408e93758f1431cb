/* SPDX-License-Identifier: MIT */
/*
 * Handing the daemon to its successor (handoff.c, docs/OPERATIONS.md
 * "Upgrade in place").
 */
#ifndef CMD_HANDOFF_H
#define CMD_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

struct cmd;

/* How long a stop that hands over waits for clients to read what is
 * queued for them; what they have not read then goes into the state. */
#define HANDOFF_DRAIN_WAIT_S 0.2

struct handoff_stats {
	size_t bytes;
	uint32_t records;
	size_t connections; /* engine records, listeners included */
	unsigned int sessions;
	uint64_t ns; /* saving: how long; restoring: since it was saved */
};

/*
 * Read and answer every client's requests, then write the whole state to
 * path (atomically: path.new, renamed). The caller then exits without
 * releasing any id (cmd->handed_over). Returns 0 or -errno (logged).
 */
int handoff_save(struct cmd *cmd, const char *path, struct handoff_stats *st);

/*
 * At start, before the loop runs: restore what path holds and remove it.
 * No file: 0, a clean start. A state that is corrupt, truncated, of an
 * unknown format or of another boot, or that does not fit this daemon's
 * ports, is refused as a whole with one log line, and the daemon starts
 * clean (-EINVAL). Restored sessions wait cfg.resume_ms for RESUME.
 */
int handoff_restore(struct cmd *cmd, const char *path,
		    struct handoff_stats *st);

#endif
