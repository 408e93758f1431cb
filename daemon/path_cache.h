/* SPDX-License-Identifier: MIT */
/*
 * The path cache: the SA's answers, by what was asked (the port and the
 * struct sa_path_want), for a lifetime, as ibacm keeps them. The daemon
 * flushes a port's entries on its events (SM change, LID change, client
 * reregister, P_Key or GID change, port down: the SA's answers may no
 * longer hold) and `cmctl paths --flush` flushes them all. Pure: the
 * caller gives the time (ns, CLOCK_MONOTONIC).
 */
#ifndef CMD_PATH_CACHE_H
#define CMD_PATH_CACHE_H

#include <stdint.h>

#include "sa_mad.h"
#include "sa_path.h"

#define PATH_CACHE_RECS 2 /* primary and alternate */

struct path_cache_entry {
	uint16_t port;
	struct sa_path_want want;
	unsigned int n; /* records: 1, or 2 with an alternate */
	struct sa_path_rec recs[PATH_CACHE_RECS];
	uint64_t born; /* when the answer came */
	uint64_t expires;
	uint64_t hits;
};

struct path_cache_counters {
	uint64_t hits;
	uint64_t misses;
	uint64_t inserted;
	uint64_t expired;
	uint64_t flushed; /* entries dropped by a flush or a port event */
	uint64_t evicted; /* the oldest, to make room */
	uint64_t entries; /* a gauge */
};

struct path_cache;

/* lifetime_s 0: entries never expire; max 0: 4096. NULL: no memory. */
struct path_cache *path_cache_new(unsigned int lifetime_s, unsigned int max);
void path_cache_free(struct path_cache *pc);

/* The entry for (port, w), or NULL (a miss, or expired: dropped). */
const struct path_cache_entry *path_cache_get(struct path_cache *pc,
					      uint16_t port,
					      const struct sa_path_want *w,
					      uint64_t now);
/* Keep an answer (replacing one for the same question). 0 or -ENOMEM. */
int path_cache_put(struct path_cache *pc, uint16_t port,
		   const struct sa_path_want *w, const struct sa_path_rec *recs,
		   unsigned int n, uint64_t now);
/* Drop a port's entries (port < 0: all). Returns how many. */
unsigned int path_cache_flush(struct path_cache *pc, int port);

/* Every live entry, oldest first is not promised; fn's return 0 goes on. */
void path_cache_walk(struct path_cache *pc, uint64_t now,
		     int (*fn)(void *ctx, const struct path_cache_entry *e),
		     void *ctx);

const struct path_cache_counters *
path_cache_counters(const struct path_cache *pc);

#endif
