/* SPDX-License-Identifier: MIT */
/*
 * Authorization of local clients (docs/OPERATIONS.md, "Authorization"):
 * which users and groups may LISTEN on which service ids, and per-user
 * limits on ids, listeners and held REQs. Clients are known by their
 * SO_PEERCRED uid and gid (server.h).
 *
 * Policy: rules "listen-allow" and "listen-deny" (WHO SIDS), evaluated in
 * the order given, first match wins. An allow rule matches a listener when
 * every service id the listener can receive lies in SIDS; a deny rule when
 * any may. With no matching rule a LISTEN is allowed, except that one
 * which may receive a privileged rdma_cm service id (any of the four port
 * spaces, port below 1024) needs uid 0, as binding a TCP port below 1024
 * does.
 *
 * Limits per uid (0: none), summed over all clients of that uid:
 * ids (CREATE_ID and passive ids, -EMFILE), listeners (LISTEN, -EMFILE)
 * and held REQs: each listener may hold up to the engine's max_held REQs
 * (eng_config.max_held), so a LISTEN is refused with -ENOSPC when the
 * user's listeners would together be able to hold more than the limit.
 */
#ifndef CMD_AUTHZ_H
#define CMD_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct authz;

/* Per uid; 0: no limit. */
struct authz_limits {
	unsigned int ids;
	unsigned int listeners;
	unsigned int held;
};

struct authz *authz_new(void);
void authz_free(struct authz *az);

/*
 * Parse and append one rule, "WHO SIDS" (see OPERATIONS.md). 'origin'
 * ("FILE:LINE" or "command line") is kept for the log. Returns 0 or
 * -EINVAL / -ENOMEM after printing why on stderr.
 */
int authz_add_rule(struct authz *az, bool allow, const char *spec,
		   const char *origin);
struct authz_limits *authz_limits(struct authz *az);
/*
 * The engine's held REQs per listener (eng_config.max_held). Returns
 * -EINVAL, after printing why, when max-held-per-user leaves no room for
 * one listener.
 */
int authz_set_listener_held(struct authz *az, unsigned int max_held);
unsigned int authz_rule_count(const struct authz *az);

/*
 * May (uid, gid) listen on (sid, mask)? 0, or -EACCES with the reason in
 * why. A NULL az allows everything.
 */
int authz_listen_policy(const struct authz *az, uid_t uid, gid_t gid,
			uint64_t sid, uint64_t mask, char *why, size_t len);
/* Room for one more listener of uid: 0, -EMFILE or -ENOSPC (why set). */
int authz_listener_room(const struct authz *az, uid_t uid, char *why,
			size_t len);
/* Room for one more id of uid. */
bool authz_id_room(const struct authz *az, uid_t uid);

/* Accounting: every id of uid, and which of them listen. */
int authz_id_add(struct authz *az, uid_t uid);
void authz_id_del(struct authz *az, uid_t uid, bool listener);
void authz_listener_add(struct authz *az, uid_t uid);

/*
 * Refusals are logged at notice, at most AUTHZ_LOG_PER_SEC a second so
 * that a client in a loop cannot flood the journal: returns true when this
 * one may be logged; *suppressed says how many were not since the last.
 */
#define AUTHZ_LOG_PER_SEC 20
bool authz_log_ok(struct authz *az, uint64_t now_ns, uint64_t *suppressed);

/*
 * Who may read every client's ids, the global and per-port counters, and
 * start or stop a capture: root, or a member of admin_gid (NULL: no admin
 * group), as primary group or as a supplementary one of process pid
 * (/proc/PID/status, trusted only while that process's effective uid is
 * still uid, so that a recycled pid does not lend its groups).
 */
bool authz_is_admin(uid_t uid, gid_t gid, pid_t pid, const gid_t *admin_gid);

/* What a uid uses now (tests and cmctl-style introspection). */
struct authz_usage {
	unsigned int ids;
	unsigned int listeners;
	unsigned int held_reserved;
};
void authz_usage(const struct authz *az, uid_t uid, struct authz_usage *u);

#endif
