/* SPDX-License-Identifier: MIT */
/*
 * The client API's internals, shared by its three files: api.c (requests
 * to engine calls, ids and their owners), api_event.c (engine events to
 * clients) and api_ops.c (LIST, COUNTERS, PORTS, CAPTURE). What the rest
 * of the daemon calls is in cmd.h.
 */
#ifndef CMD_API_H
#define CMD_API_H

#include "cmd.h"
#include "cmp.h"

/* api.c */
struct api_client *api_client_of(struct cmd *cmd, struct srv_client *c);
/* By the client's serial (an engine owner), and by id; or NULL. */
struct api_client *api_client_find(struct cmd *cmd, uint64_t serial);
struct api_id *api_id_find(struct cmd *cmd, uint32_t id);
/* Introduce client c to the API (its first request, or a restored
 * session); NULL without memory. */
struct api_client *api_client_add(struct cmd *cmd, struct srv_client *c);
/* A new id of client c (a passive id's first event makes one too). */
struct api_id *api_id_add(struct cmd *cmd, struct srv_client *c, uint32_t id,
			  uint8_t qp_type);
/* The engine's state of an id, as the protocol numbers it. */
enum cmp_state api_state_of(struct cmd *cmd, uint32_t id);

/* api_ops.c: the operations' request handlers. */
int api_ops_list(struct cmd *cmd, struct srv_client *c,
		 const struct cmp_list *r, struct cmp_list_reply *out);
int api_ops_counters(struct cmd *cmd, struct srv_client *c,
		     const struct cmp_counters *r,
		     struct cmp_counters_reply *out);
int api_ops_capture(struct cmd *cmd, struct srv_client *c,
		    const struct cmp_capture *r);
int api_ops_ports(struct cmd *cmd, const struct cmp_ports *r,
		  struct cmp_ports_reply *out);
int api_ops_paths(struct cmd *cmd, struct srv_client *c,
		  const struct cmp_paths *r, struct cmp_paths_reply *out);

#endif
