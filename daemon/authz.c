// SPDX-License-Identifier: MIT
/*
 * Authorization policy and per-user accounting; see authz.h. Names are
 * resolved once, when the rules are read: the loop never calls into NSS
 * (which may block on a directory server).
 */
#include "authz.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hash.h"
#include "log.h"
#include "util.h"

enum who_kind { WHO_ANY, WHO_UID, WHO_GID };
enum sids_kind { SIDS_RANGE, SIDS_MASK };

struct rule {
	bool allow;
	enum who_kind who;
	uint32_t id; /* uid or gid */
	uid_t *members; /* WHO_GID: the group's listed members */
	size_t nmembers;
	enum sids_kind kind;
	uint64_t lo, hi; /* SIDS_RANGE, inclusive */
	uint64_t value, mask; /* SIDS_MASK: (sid & mask) == value */
	char origin[96];
	char text[260];
};

struct user {
	uid_t uid;
	unsigned int ids;
	unsigned int listeners;
	struct hnode hnode; /* in authz->users */
};

struct authz {
	struct rule *rules;
	size_t nrules;
	struct authz_limits lim;
	unsigned int listener_held; /* engine max_held per listener */
	struct htable users; /* struct user by uid, while it has ids */
	uint64_t log_window; /* second of the last logged refusal */
	unsigned int log_n; /* refusals logged in that second */
	uint64_t log_suppressed;
};

/* rdma_cm port spaces (proto/rdmacm.h): service id = ps << 16 | port. */
static const struct {
	const char *name;
	uint16_t ps;
} port_spaces[] = {
	{ "tcp", 0x0106 },
	{ "udp", 0x0111 },
	{ "ib", 0x013F },
	{ "ipoib", 0x0002 },
};

#define N_PS ARRAY_SIZE(port_spaces)
#define PRIV_PORTS 1024

#define AUTHZ_USERS_INITIAL 16

static uint64_t user_hash(const struct hnode *n)
{
	return hash_u64(container_of(n, struct user, hnode)->uid);
}

static bool user_eq(const struct hnode *n, const void *uid)
{
	return container_of(n, struct user, hnode)->uid == *(const uid_t *)uid;
}

struct authz *authz_new(void)
{
	struct authz *az = calloc(1, sizeof(struct authz));

	if (az && htable_init(&az->users, AUTHZ_USERS_INITIAL, user_hash)) {
		free(az);
		return NULL;
	}
	return az;
}

void authz_free(struct authz *az)
{
	struct hnode *n, *next;

	if (!az)
		return;
	for (size_t i = 0; i < az->nrules; i++)
		free(az->rules[i].members);
	free(az->rules);
	HTABLE_FOREACH_SAFE(n, next, &az->users)
		free(container_of(n, struct user, hnode));
	htable_fini(&az->users);
	free(az);
}

struct authz_limits *authz_limits(struct authz *az)
{
	return &az->lim;
}

unsigned int authz_rule_count(const struct authz *az)
{
	return az ? (unsigned int)az->nrules : 0;
}

int authz_set_listener_held(struct authz *az, unsigned int max_held)
{
	az->listener_held = max_held;
	if (az->lim.held && az->lim.held < max_held) {
		log_err("cmd: max-held-per-user %u is below max-held %u: no "
			"listener would fit",
			az->lim.held, max_held);
		return -EINVAL;
	}
	return 0;
}

static int num(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *end || *out > max ? -EINVAL : 0;
}

/* A group's members by uid: those its entry lists by name. */
static int group_members(struct rule *r, const struct group *g)
{
	size_t n = 0;

	for (char **m = g->gr_mem; m && *m; m++)
		n++;
	r->members = calloc(n ? n : 1, sizeof(*r->members));
	if (!r->members)
		return -ENOMEM;
	for (char **m = g->gr_mem; m && *m; m++) {
		const struct passwd *pw = getpwnam(*m);

		if (pw)
			r->members[r->nmembers++] = pw->pw_uid;
	}
	return 0;
}

static int parse_who(struct rule *r, const char *s, const char *origin)
{
	const struct passwd *pw;
	const struct group *gr;
	uint64_t v;

	if (!strcmp(s, "any")) {
		r->who = WHO_ANY;
		return 0;
	}
	if (!strncmp(s, "uid:", 4) || !strncmp(s, "gid:", 4)) {
		if (num(s + 4, UINT32_MAX - 1, &v)) {
			log_err("cmd: %s: '%s' is not a %.3s", origin, s, s);
			return -EINVAL;
		}
		r->who = s[0] == 'u' ? WHO_UID : WHO_GID;
		r->id = (uint32_t)v;
		if (r->who == WHO_GID) {
			gr = getgrgid((gid_t)v);
			if (gr)
				return group_members(r, gr);
		}
		return 0;
	}
	if (!strncmp(s, "user:", 5)) {
		pw = getpwnam(s + 5);
		if (!pw) {
			log_err("cmd: %s: unknown user '%s'", origin, s + 5);
			return -EINVAL;
		}
		r->who = WHO_UID;
		r->id = pw->pw_uid;
		return 0;
	}
	if (!strncmp(s, "group:", 6)) {
		gr = getgrnam(s + 6);
		if (!gr) {
			log_err("cmd: %s: unknown group '%s'", origin, s + 6);
			return -EINVAL;
		}
		r->who = WHO_GID;
		r->id = gr->gr_gid;
		return group_members(r, gr);
	}
	log_err("cmd: %s: '%s': expected any, user:NAME, group:NAME, uid:N "
		"or gid:N",
		origin, s);
	return -EINVAL;
}

/* "all", "SID", "LOW-HIGH", "VALUE/MASK", "tcp", "tcp:P", "tcp:P-Q". */
static int parse_sids(struct rule *r, const char *s, const char *origin)
{
	char buf[128], *sep;
	uint64_t a, b;

	snprintf(buf, sizeof(buf), "%s", s);
	r->kind = SIDS_RANGE;
	if (!strcmp(buf, "all")) {
		r->lo = 0;
		r->hi = UINT64_MAX;
		return 0;
	}
	for (size_t i = 0; i < N_PS; i++) {
		size_t len = strlen(port_spaces[i].name);
		uint64_t base = (uint64_t)port_spaces[i].ps << 16;

		if (strncasecmp(buf, port_spaces[i].name, len) ||
		    (buf[len] && buf[len] != ':'))
			continue;
		a = 0;
		b = 0xFFFF;
		if (buf[len] == ':') {
			sep = strchr(buf + len + 1, '-');
			if (sep)
				*sep = '\0';
			if (num(buf + len + 1, 0xFFFF, &a) ||
			    (sep && num(sep + 1, 0xFFFF, &b)) || (sep && b < a))
				goto bad;
			if (!sep)
				b = a;
		}
		r->lo = base | a;
		r->hi = base | b;
		return 0;
	}
	sep = strpbrk(buf, "-/");
	if (!sep) {
		if (num(buf, UINT64_MAX, &a))
			goto bad;
		r->lo = r->hi = a;
		return 0;
	}
	if (*sep == '/') {
		*sep = '\0';
		if (num(buf, UINT64_MAX, &a) || num(sep + 1, UINT64_MAX, &b) ||
		    !b)
			goto bad;
		r->kind = SIDS_MASK;
		r->value = a & b;
		r->mask = b;
		return 0;
	}
	*sep = '\0';
	if (num(buf, UINT64_MAX, &a) || num(sep + 1, UINT64_MAX, &b) || b < a)
		goto bad;
	r->lo = a;
	r->hi = b;
	return 0;
bad:
	log_err("cmd: %s: '%s': expected all, SID, LOW-HIGH, VALUE/MASK or "
		"tcp|udp|ib|ipoib[:PORT[-PORT]]",
		origin, s);
	return -EINVAL;
}

int authz_add_rule(struct authz *az, bool allow, const char *spec,
		   const char *origin)
{
	char who[128], sids[128], extra[2];
	struct rule r, *nr;
	int n;

	memset(&r, 0, sizeof(r));
	n = sscanf(spec, "%127s %127s %1s", who, sids, extra);
	if (n != 2) {
		log_err("cmd: %s: expected 'WHO SERVICE-IDS', got '%s'", origin,
			spec);
		return -EINVAL;
	}
	r.allow = allow;
	snprintf(r.origin, sizeof(r.origin), "%s", origin);
	snprintf(r.text, sizeof(r.text), "%s %s", who, sids);
	if (parse_who(&r, who, origin) || parse_sids(&r, sids, origin)) {
		free(r.members);
		return -EINVAL;
	}
	nr = realloc(az->rules, (az->nrules + 1) * sizeof(*nr));
	if (!nr) {
		free(r.members);
		return -ENOMEM;
	}
	az->rules = nr;
	az->rules[az->nrules++] = r;
	return 0;
}

static bool who_matches(const struct rule *r, uid_t uid, gid_t gid)
{
	switch (r->who) {
	case WHO_ANY:
		return true;
	case WHO_UID:
		return uid == r->id;
	case WHO_GID:
		if (gid == r->id)
			return true;
		for (size_t i = 0; i < r->nmembers; i++)
			if (r->members[i] == uid)
				return true;
		return false;
	}
	return false;
}

/*
 * The listener (sid, mask) receives { x : (x & mask) == sid & mask }. For
 * ranges we use its span, lowest to highest member: exact for the masks
 * listeners use (a run of low zero bits), conservative otherwise.
 */
static bool span_within(uint64_t lo, uint64_t hi, uint64_t min, uint64_t max)
{
	return lo <= min && max <= hi;
}

static bool span_meets(uint64_t lo, uint64_t hi, uint64_t min, uint64_t max)
{
	return min <= hi && lo <= max;
}

/* allow rules: all of the listener's ids; deny rules: any of them. */
static bool sids_match(const struct rule *r, uint64_t sid, uint64_t mask)
{
	uint64_t min = sid & mask, max = (sid & mask) | ~mask;

	if (r->kind == SIDS_MASK) {
		if (r->allow)
			return !(r->mask & ~mask) &&
			       !((min ^ r->value) & r->mask);
		return !((min ^ r->value) & r->mask & mask);
	}
	return r->allow ? span_within(r->lo, r->hi, min, max) :
			  span_meets(r->lo, r->hi, min, max);
}

int authz_listen_policy(const struct authz *az, uid_t uid, gid_t gid,
			uint64_t sid, uint64_t mask, char *why, size_t len)
{
	uint64_t min = sid & mask, max = (sid & mask) | ~mask;

	if (!az)
		return 0;
	for (size_t i = 0; i < az->nrules; i++) {
		const struct rule *r = &az->rules[i];

		if (!who_matches(r, uid, gid) || !sids_match(r, sid, mask))
			continue;
		if (r->allow)
			return 0;
		snprintf(why, len, "denied by listen-deny '%s' (%s)", r->text,
			 r->origin);
		return -EACCES;
	}
	if (uid == 0)
		return 0;
	for (size_t i = 0; i < N_PS; i++) {
		uint64_t base = (uint64_t)port_spaces[i].ps << 16;

		if (span_meets(base, base | (PRIV_PORTS - 1), min, max)) {
			snprintf(why, len,
				 "privileged rdma_cm %s port (below %u) needs "
				 "uid 0 or a listen-allow rule",
				 port_spaces[i].name, PRIV_PORTS);
			return -EACCES;
		}
	}
	return 0;
}

static struct user *user_of(const struct authz *az, uid_t uid)
{
	/* uid 0 is a key like any other. */
	return htable_entry(
		htable_find(&az->users, hash_u64(uid), user_eq, &uid),
		struct user, hnode);
}

int authz_listener_room(const struct authz *az, uid_t uid, char *why,
			size_t len)
{
	const struct user *u;
	uint64_t held;

	if (!az)
		return 0;
	u = user_of(az, uid);
	if (az->lim.listeners && u && u->listeners >= az->lim.listeners) {
		snprintf(why, len,
			 "uid %u has %u listeners (max-listeners-"
			 "per-user)",
			 (unsigned int)uid, u->listeners);
		return -EMFILE;
	}
	held = (uint64_t)((u ? u->listeners : 0) + 1) * az->listener_held;
	if (az->lim.held && held > az->lim.held) {
		snprintf(why, len,
			 "uid %u's listeners could hold %llu REQs "
			 "(max-held-per-user %u, max-held %u per listener)",
			 (unsigned int)uid, (unsigned long long)held,
			 az->lim.held, az->listener_held);
		return -ENOSPC;
	}
	return 0;
}

bool authz_id_room(const struct authz *az, uid_t uid)
{
	const struct user *u;

	if (!az || !az->lim.ids)
		return true;
	u = user_of(az, uid);
	return !u || u->ids < az->lim.ids;
}

int authz_id_add(struct authz *az, uid_t uid)
{
	struct user *u;

	if (!az)
		return 0;
	u = user_of(az, uid);
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u || htable_reserve(&az->users)) {
			free(u);
			return -ENOMEM;
		}
		u->uid = uid;
		htable_insert(&az->users, &u->hnode);
	}
	u->ids++;
	return 0;
}

void authz_listener_add(struct authz *az, uid_t uid)
{
	struct user *u = az ? user_of(az, uid) : NULL;

	if (u)
		u->listeners++;
}

void authz_id_del(struct authz *az, uid_t uid, bool listener)
{
	struct user *u = az ? user_of(az, uid) : NULL;

	if (!u)
		return;
	if (listener && u->listeners)
		u->listeners--;
	if (u->ids)
		u->ids--;
	if (!u->ids) {
		htable_remove(&az->users, &u->hnode);
		free(u);
	}
}

void authz_usage(const struct authz *az, uid_t uid, struct authz_usage *out)
{
	const struct user *u = az ? user_of(az, uid) : NULL;

	memset(out, 0, sizeof(*out));
	if (!u)
		return;
	out->ids = u->ids;
	out->listeners = u->listeners;
	out->held_reserved = u->listeners * az->listener_held;
}

bool authz_log_ok(struct authz *az, uint64_t now_ns, uint64_t *suppressed)
{
	uint64_t sec = now_ns / 1000000000u;

	*suppressed = 0;
	if (!az)
		return true;
	if (sec != az->log_window) {
		az->log_window = sec;
		az->log_n = 0;
	}
	if (az->log_n >= AUTHZ_LOG_PER_SEC) {
		az->log_suppressed++;
		return false;
	}
	az->log_n++;
	*suppressed = az->log_suppressed;
	az->log_suppressed = 0;
	return true;
}

/*
 * Is gid among the supplementary groups of the client's process?
 * SO_PEERCRED gives only the primary gid, so read /proc/PID/status's
 * Groups: line (local and non-blocking, unlike getgrouplist's NSS
 * lookups), trusting it only while that process's effective uid is still
 * the peer's, so that a recycled pid does not lend its groups.
 */
static bool proc_in_group(pid_t pid, uid_t uid, gid_t gid)
{
	bool uid_ok = false, found = false;
	char path[64], *line = NULL;
	size_t size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (getline(&line, &size, f) > 0) {
		unsigned long real, eff;
		char *p, *end;

		if (!strncmp(line, "Uid:", 4)) {
			uid_ok =
				sscanf(line + 4, "%lu %lu", &real, &eff) == 2 &&
				eff == (unsigned long)uid;
		} else if (!strncmp(line, "Groups:", 7)) {
			for (p = line + 7;; p = end) {
				unsigned long v = strtoul(p, &end, 10);

				if (end == p)
					break;
				found |= v == (unsigned long)gid;
			}
		}
	}
	free(line);
	fclose(f);
	return uid_ok && found;
}

bool authz_is_admin(uid_t uid, gid_t gid, pid_t pid, const gid_t *admin_gid)
{
	if (uid == 0)
		return true;
	if (!admin_gid)
		return false;
	return gid == *admin_gid || proc_in_group(pid, uid, *admin_gid);
}
