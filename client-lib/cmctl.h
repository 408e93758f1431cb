/* SPDX-License-Identifier: MIT */
/* cmctl's parts: the command line (cmctl.c) and OpenMetrics (cmctl_metrics.c). */
#ifndef CMD_CMCTL_H
#define CMD_CMCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmclient.h"

/* A request failed: print why (a timeout as "no answer ... within N s")
 * and return the exit status. */
int cmctl_failed(const char *what, int err);

/* The daemon's ports, read once; cmctl_port(i) for i = 0.. until NULL. */
int cmctl_ports_load(struct cmc_channel *ch);
const struct cmc_port_info *cmctl_port(unsigned int i);

void cmctl_gid_str(const uint8_t gid[16], char *buf, size_t size);

/* Print a JSON value (json-c's) as every verb does, and drop it. */
struct json_object;
void cmctl_json_print(struct json_object *o);

/* DEV/PORT (or the old DEV:PORT) into dev and *port; -1 if it is not. */
int cmctl_parse_port(const char *arg, char *dev, size_t size, uint8_t *port);

/* `cmctl metrics`: the counters of scope as OpenMetrics text (or, with
 * prometheus, the Prometheus text format 0.0.4); GLOBAL adds every
 * port's. Returns the exit status. */
int cmctl_metrics(struct cmc_channel *ch, enum cmc_counter_scope scope,
		  const char *dev, uint8_t port, bool prometheus);

/* `cmctl paths`: the path cache; with flush, flush it (dev NULL: every
 * port). Returns the exit status. */
int cmctl_paths(struct cmc_channel *ch, bool json, bool flush, const char *dev,
		uint8_t port);

#endif
