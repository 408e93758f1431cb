// SPDX-License-Identifier: MIT
/*
 * Handing the daemon to its successor (docs/OPERATIONS.md, "Upgrade in
 * place"): on a stop that hands over, every client's requests are read and
 * answered, and the whole state -- sessions, what is queued for them, the
 * API's ids, the engine's records with their timers, the counters -- goes
 * into one file (state.h); the successor reads it before it serves anybody
 * and carries on as if nothing happened. Nothing goes out on the wire
 * because of it, and clients resume their sessions (cmp.h, "Restarts").
 * This file sequences it and holds the API's records; each other module
 * writes and reads its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "authz.h"
#include "cmd.h"
#include "eng_state.h"
#include "handoff.h"
#include "log.h"
#include "state.h"

/* ------------------------------------------------------------------ */
/* Saving */

static void st_put_client(struct state_w *w, const struct api_id *o)
{
	sw_u64(w, srv_client_serial(o->client));
}

static void st_put_path(struct state_w *w, const struct api_id *o)
{
	if (o->path)
		sw_var(w, &o->path->p, sizeof(o->path->p));
	else
		sw_var(w, NULL, 0);
}

static void save_api_client(void *ctx, struct srv_client *c, struct state_w *w)
{
	struct cmd *cmd = ctx;
	const struct api_client *o = api_client_of(cmd, c);
	static const struct api_client none = { .admin = -1 };

	if (!o)
		o = &none;
	sw_rec_begin(w, STATE_REC_API_CLIENT);
#define STATE_API_CLIENT(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
	sw_rec_end(w);
}

static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	char tmp[4096];
	int fd, err = 0;
	size_t off = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int handoff_save(struct cmd *cmd, const char *path, struct handoff_stats *st)
{
	struct state_w sw, *w = &sw;
	struct hnode *n, *next;
	uint64_t t0 = cmd_now();
	int rc;

	memset(st, 0, sizeof(*st));
	/* Every request sent so far is answered before anything is saved. */
	srv_handoff_drain(cmd->srv, HANDOFF_DRAIN_WAIT_S);
	sw_init(w);
	srv_state_save(cmd->srv, w, save_api_client, cmd);
	eng_state_save(cmd->eng, w);
	HTABLE_FOREACH_SAFE(n, next, &cmd->ids) {
		const struct api_id *o = container_of(n, struct api_id, hnode);

		sw_rec_begin(w, STATE_REC_ID);
#define STATE_ID(k, m, since) STATE_PUT(k, m)
#include "state_fields.def"
		sw_rec_end(w);
	}
	sw_counters(w, STATE_CNT_CMD, 0, &cmd->counters, sizeof(cmd->counters));
	for (unsigned int i = 0; i < cmd->n_ports; i++)
		sw_counters(w, STATE_CNT_CMD_PORT,
			    (uint16_t)(cmd->xport->first_index + i),
			    &cmd->port_cnt[i], sizeof(cmd->port_cnt[i]));
	sw_counters(w, STATE_CNT_SRV, 0, srv_counters(cmd->srv),
		    sizeof(struct srv_counters));
	rc = sw_finish(w, cmd_now());
	if (!rc)
		rc = write_file(path, w->buf, w->len);
	st->bytes = w->len;
	st->records = w->nrec;
	st->connections = eng_record_count(cmd->eng);
	st->sessions = srv_client_count(cmd->srv);
	st->ns = cmd_now() - t0;
	sw_free(w);
	if (rc)
		log_err("handoff: cannot write %s: %s; the ids are lost", path,
			strerror(-rc));
	else
		log_notice("handoff: %zu connections, %u sessions saved in %s "
			   "(%zu bytes, %.1f ms)",
			   st->connections, st->sessions, path, st->bytes,
			   st->ns / 1e6);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Restoring */

/* What the FN fields of an ID record read, until restore_id adds the id
 * (the loop is one thread): its client, and its path in the file. */
static uint64_t restore_serial;
static const uint8_t *restore_path;

static void st_get_client(struct state_r *r, struct api_id *o)
{
	restore_serial = sr_u64(r);
}

static void st_get_path(struct state_r *r, struct api_id *o)
{
	size_t n;

	restore_path = sr_var(r, &n, sizeof(struct cmp_path));
	if (n && n != sizeof(struct cmp_path))
		sr_fail(r, "an id's path is not a struct cmp_path");
}

#define REFUSE(text)                                                           \
	do {                                                                   \
		*why = text;                                                   \
		return -EINVAL;                                                \
	} while (0)

static int restore_id(struct cmd *cmd, struct state_r *r, const char **why)
{
	struct api_id tmp = { 0 }, *o = &tmp, *a;
	struct api_client *ac;
	enum eng_state state;
	int rc;

	restore_serial = 0;
	restore_path = NULL;
#define STATE_ID(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
	rc = sr_end(r, why);
	if (rc)
		return rc;
	ac = api_client_find(cmd, restore_serial);
	if (!ac)
		REFUSE("an id names no client of the state");
	if (eng_id_state(cmd->eng, tmp.id, &state))
		REFUSE("an id the engine's records do not have");
	if (api_id_find(cmd, tmp.id))
		REFUSE("an id listed twice");
	if (tmp.qp_type > CMP_QP_TYPE_MAX || tmp.sel > CMP_SEL_MAX ||
	    (tmp.unacked_seq && tmp.unacked_seq != tmp.ev_seq))
		REFUSE("an id's QP type, selector or event sequence is out "
		       "of range");
	a = api_id_add(cmd, ac->client, tmp.id, tmp.qp_type);
	if (!a)
		REFUSE("no memory for an id");
	a->ev_seq = tmp.ev_seq;
	a->unacked_seq = tmp.unacked_seq;
	a->listener = tmp.listener;
	a->sel = tmp.sel;
	a->setup_start = tmp.setup_start;
	if (a->listener)
		authz_listener_add(cmd->cfg.authz, srv_client_uid(ac->client));
	if (restore_path) {
		struct cmp_path p;

		memcpy(&p, restore_path, sizeof(p));
		api_id_set_path(cmd, a, &p);
	}
	return 0;
}

static int restore_counters(struct cmd *cmd, struct state_r *r,
			    const char **why)
{
	struct state_counters_rec c;
	struct cmd_port_counters *pc;
	int rc = sr_counters(r, &c, why);

	if (!rc)
		rc = eng_restore_counters(cmd->eng, &c, why);
	if (rc != 1)
		return rc;
	switch (c.which) {
	case STATE_CNT_CMD:
		state_counters_copy(&cmd->counters, sizeof(cmd->counters), &c);
		return 0;
	case STATE_CNT_CMD_PORT:
		pc = cmd_port_counters(cmd, c.port);
		if (!pc)
			REFUSE("counters of a port not served now");
		state_counters_copy(pc, sizeof(*pc), &c);
		return 0;
	case STATE_CNT_SRV:
		srv_restore_counters(cmd->srv, &c);
		return 0;
	default:
		REFUSE("a block of counters of an unknown kind");
	}
}

static int restore(struct cmd *cmd, const uint8_t *buf, size_t len,
		   const char **why, unsigned int *recno, uint16_t *type,
		   struct handoff_stats *st)
{
	struct state_file f;
	struct state_r rec, *r = &rec;
	struct eng_restore *x;
	struct srv_client *cur = NULL;
	int rc;

	rc = state_open(&f, buf, len, 0, why);
	if (rc)
		return rc;
	x = eng_restore_begin(cmd->eng);
	if (!x)
		REFUSE("no memory");
	for (*recno = 1; (rc = state_next(&f, type, r, why)) > 0; ++*recno) {
		switch (*type) {
		case STATE_REC_SERVER:
			rc = srv_restore_server(cmd->srv, r, why);
			break;
		case STATE_REC_CLIENT:
			cur = srv_restore_client(cmd->srv, r, why);
			rc = cur ? 0 : -EINVAL;
			if (cur && !api_client_add(cmd, cur)) {
				*why = "no memory for a client";
				rc = -EINVAL;
			}
			break;
		case STATE_REC_API_CLIENT: {
			struct api_client *o =
				cur ? api_client_of(cmd, cur) : NULL;
			struct api_client tmp;

			rc = 0;
			if (!o) {
				o = &tmp;
				rc = -EINVAL;
			}
#define STATE_API_CLIENT(k, m, since) STATE_GET(k, m, since)
#include "state_fields.def"
			if (rc)
				*why = "an API_CLIENT record follows no client";
			else
				rc = sr_end(r, why);
			if (!rc && (o->admin < -1 || o->admin > 1)) {
				*why = "a client's admin flag is out of range";
				rc = -EINVAL;
			}
			break;
		}
		case STATE_REC_OUT:
			rc = srv_restore_out(cur, r, why);
			break;
		case STATE_REC_ID:
			rc = restore_id(cmd, r, why);
			break;
		case STATE_REC_COUNTERS:
			rc = restore_counters(cmd, r, why);
			break;
		default:
			rc = eng_restore_rec(cmd->eng, x, *type, r, why);
			if (rc == 1) {
				*why = "a record of an unknown type";
				rc = -EINVAL;
			}
		}
		if (rc) {
			eng_restore_abort(x);
			return rc;
		}
	}
	if (rc) {
		eng_restore_abort(x);
		return rc;
	}
	*type = 0;
	rc = eng_restore_end(cmd->eng, x, cmd_now(), why);
	if (rc)
		return rc;
	st->bytes = len;
	st->records = f.nrec;
	st->connections = eng_record_count(cmd->eng);
	st->sessions = srv_restore_done(cmd->srv);
	st->ns = cmd_now() - f.saved_ns;
	return 0;
}

int handoff_restore(struct cmd *cmd, const char *path, struct handoff_stats *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	uint8_t *buf = NULL;
	size_t off = 0;
	const char *why = NULL;
	unsigned int recno = 0;
	uint16_t type = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* nothing handed over: a clean start */
		log_err("handoff: %s: %s; starting clean", path,
			strerror(errno));
		return -errno;
	}
	/* Consumed whatever happens: a state that crashed us once must not
	 * be read again by the restart that follows. */
	unlink(path);
	if (fstat(fd, &sb) || sb.st_size < 0 ||
	    (uint64_t)sb.st_size > STATE_MAX_SIZE ||
	    !(buf = malloc((size_t)sb.st_size ? (size_t)sb.st_size : 1))) {
		log_err("handoff: %s: cannot read it (%s); starting clean",
			path, strerror(errno ? errno : ENOMEM));
		close(fd);
		return -EIO;
	}
	while (off < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)sb.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	rc = restore(cmd, buf, off, &why, &recno, &type, st);
	free(buf);
	if (rc) {
		if (type)
			log_err("handoff: %s refused: %s (record %u, %s); "
				"starting clean",
				path, why, recno, state_rec_name(type));
		else
			log_err("handoff: %s refused: %s; starting clean", path,
				why);
		cmd_reset(cmd);
		cmd->counters.handoffs_refused++;
		return -EINVAL;
	}
	cmd->counters.handoffs_restored++;
	log_notice("handoff: restored %zu connections and %u sessions from "
		   "%s (%zu bytes, saved %.1f ms ago)",
		   st->connections, st->sessions, path, st->bytes,
		   st->ns / 1e6);
	return 0;
}
