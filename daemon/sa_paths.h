/* SPDX-License-Identifier: MIT */
/*
 * Paths from the SA in the daemon: the SA client (sa_client.h) over the
 * transport's SA MADs, its timer in the loop, the path cache
 * (path_cache.h), and the ports' SM facts kept in step with port events.
 * api.c asks sa_paths_get() for the path of a connect on an IB port.
 */
#ifndef CMD_SA_PATHS_H
#define CMD_SA_PATHS_H

#include <stdbool.h>
#include <stdint.h>

#include "path_cache.h"
#include "sa_client.h"
#include "transport.h"

struct cmd;
struct sa_paths;

struct sa_paths_config {
	bool off; /* --sa off: every path built locally, as before */
	unsigned int lifetime_s; /* cache lifetime; 0: no expiry */
	unsigned int max_entries;
	struct sa_client_config client;
};

/* The answer to a miss: n records (primary, alternate), or status < 0. */
typedef void (*sa_paths_fn)(void *ctx, int status,
			    const struct sa_path_rec *recs, unsigned int n,
			    const char *why);

/* NULL with errno on failure; no IB port: a live but idle object. */
struct sa_paths *sa_paths_new(struct cmd *cmd,
			      const struct sa_paths_config *cfg);
void sa_paths_free(struct sa_paths *sp);

/* Does a connect from this port ask the SA (an IB port, SA not off)? */
bool sa_paths_used(const struct sa_paths *sp, uint16_t port);

/*
 * The path for w from port: 0 and the cached records in *e (a hit), 1 and
 * *handle (a miss: fn follows, from the loop, unless cancelled), or
 * -errno (no SM known: -ENETUNREACH; too many queries: -ENOBUFS). A miss
 * with an equal want (same port) in flight joins that query: one answer,
 * or one failure, for all. Cancelling one asker leaves the query to the
 * others; the last one's cancel gives it up.
 */
int sa_paths_get(struct sa_paths *sp, uint16_t port,
		 const struct sa_path_want *w, sa_paths_fn fn, void *ctx,
		 const struct path_cache_entry **e, uint64_t *handle);
void sa_paths_cancel(struct sa_paths *sp, uint64_t handle);

/* An SA MAD from the transport (class 0x03). */
void sa_paths_recv(struct sa_paths *sp, uint16_t port, const uint8_t *mad,
		   size_t len);
/* A port event: the SM facts again, and the port's cache flushed. */
void sa_paths_port_event(struct sa_paths *sp, const struct xport_event *ev);
/* Point the timer at the client's next deadline (from the prepare hook). */
void sa_paths_arm(struct sa_paths *sp);

/* Flush the cache (port < 0: every port); how many entries went. */
unsigned int sa_paths_flush(struct sa_paths *sp, int port);
void sa_paths_walk(struct sa_paths *sp,
		   int (*fn)(void *ctx, const struct path_cache_entry *e),
		   void *ctx);

const struct sa_client_counters *
sa_paths_client_counters(const struct sa_paths *sp);
const struct path_cache_counters *
sa_paths_cache_counters(const struct sa_paths *sp);
/* Misses that joined an equal query in flight instead of starting one. */
uint64_t sa_paths_joined(const struct sa_paths *sp);

#endif
