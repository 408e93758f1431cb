/* SPDX-License-Identifier: MIT */
/*
 * The handoff state's container (docs/OPERATIONS.md, "Upgrade in place"):
 * what a stopping daemon writes for its successor, and how the successor
 * refuses anything it cannot trust. This file knows the framing only; what
 * each record holds is state_fields.def's, and who writes and reads which
 * record is each module's own (eng_state.c, server.c, handoff.c).
 *
 * Layout, all integers little-endian:
 *
 *   header (64 bytes)
 *     magic "CMDSTATE", u32 format version, u32 header size (64),
 *     u64 payload size, u32 CRC-32 (of the header from the record count
 *     on, then the payload), u32 record count,
 *     the writer's boot id (16 bytes, /proc/sys/kernel/random/boot_id),
 *     u64 CLOCK_MONOTONIC ns when written, u64 reserved (zero)
 *   records, one after the other
 *     u16 type, u16 reserved (zero), u32 body size, body
 *
 * A body is its record's fields (state_fields.def) in table order, each of
 * a fixed size, except that a VAR field is a u32 size and that many bytes.
 * A field that a later format version added has its version in the table;
 * a reader skips fields newer than the file, so it reads every earlier
 * format (they get zero). A file of a format newer than the reader's, of
 * another boot (its deadlines and QPs mean nothing now), with a bad CRC,
 * a record of an unknown type, or a body that is not exactly its fields is
 * refused as a whole.
 */
#ifndef CMD_STATE_H
#define CMD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The format this build writes, and the newest it reads. */
#define STATE_VERSION 1
#define STATE_HDR_SIZE 64
#define STATE_BOOT_ID_SIZE 16
/* Larger than any real state (a million connections is about 600 MB). */
#define STATE_MAX_SIZE (4ULL << 30)

enum state_rec_type {
#define STATE_REC(NAME, code) STATE_REC_##NAME = (code),
#include "state_fields.def"
};

/* Which counters a COUNTERS record holds (its 'which'). Forever. */
enum state_counters {
	STATE_CNT_ENG = 1, /* struct eng_counters */
	STATE_CNT_ENG_UNEXPECTED = 2, /* eng->unexpected[state][event] */
	STATE_CNT_ENG_HITS = 3, /* eng->hits, the table's coverage */
	STATE_CNT_ENG_PORT = 4, /* struct eng_port_counters of 'port' */
	STATE_CNT_CMD = 5, /* struct cmd_counters */
	STATE_CNT_CMD_PORT = 6, /* struct cmd_port_counters of 'port' */
	STATE_CNT_SRV = 7, /* struct srv_counters */
};

/* A growing buffer; err sticks (-ENOMEM), so callers check once at the
 * end. */
struct state_w {
	uint8_t *buf;
	size_t len, cap;
	size_t rec; /* offset of the open record's header */
	uint32_t nrec;
	int err;
};

void sw_init(struct state_w *w);
void sw_free(struct state_w *w);
void sw_rec_begin(struct state_w *w, enum state_rec_type type);
void sw_rec_end(struct state_w *w);
void sw_u8(struct state_w *w, uint8_t v);
void sw_u16(struct state_w *w, uint16_t v);
void sw_u32(struct state_w *w, uint32_t v);
void sw_u64(struct state_w *w, uint64_t v);
void sw_bytes(struct state_w *w, const void *p, size_t n);
/* A VAR field: its size, then its bytes. */
void sw_var(struct state_w *w, const void *p, size_t n);
struct state_r;
/* A COUNTERS record read: which, the port, and its u64s' bytes. */
struct state_counters_rec {
	enum state_counters which;
	uint16_t port;
	const uint8_t *p;
	size_t n;
};
/* Read a COUNTERS record whole: 0, or -EINVAL with *why. */
int sr_counters(struct state_r *r, struct state_counters_rec *c,
		const char **why);
/* Copy its u64s onto a counters struct of size bytes: an older, shorter
 * block fills the front (state_fields.def), the rest is left alone. */
void state_counters_copy(void *dst, size_t size,
			 const struct state_counters_rec *c);
/* A COUNTERS record: n bytes of u64s (state_fields.def). */
void sw_counters(struct state_w *w, enum state_counters which, uint16_t port,
		 const void *p, size_t n);
/*
 * Fill in the header (the buffer starts with room for it): 0, or the
 * sticky error.
 */
int sw_finish(struct state_w *w, uint64_t now_ns);

/* Reading one record's body; the first problem sticks in why. */
struct state_r {
	const uint8_t *p, *end;
	uint32_t version; /* the file's format */
	const char *why; /* NULL while all is well */
};

uint8_t sr_u8(struct state_r *r);
uint16_t sr_u16(struct state_r *r);
uint32_t sr_u32(struct state_r *r);
uint64_t sr_u64(struct state_r *r);
bool sr_bool(struct state_r *r);
void sr_bytes(struct state_r *r, void *p, size_t n);
/* A NUL-terminated string in n bytes (refused otherwise). */
void sr_str(struct state_r *r, char *p, size_t n);
/* A VAR field: its bytes in place (valid while the file is), *n its
 * size; refused over max. */
const uint8_t *sr_var(struct state_r *r, size_t *n, size_t max);
/* Refuse the record with why (a static text), unless refused already. */
void sr_fail(struct state_r *r, const char *why);

/* A whole file, checked: header, CRC, boot, and the record framing. */
struct state_file {
	const uint8_t *buf;
	size_t len;
	uint32_t version;
	uint32_t nrec;
	uint64_t saved_ns;
	size_t off; /* of the next record */
	uint32_t seen; /* records returned so far */
};

/* state_open flags. */
enum {
	/* Skip the boot check: for tests of saved files (a golden state
	 * of an older format), never for the daemon. */
	STATE_OPEN_ANY_BOOT = 1 << 0,
};

/*
 * Check everything but the records' contents. Returns 0, or -EINVAL with
 * *why saying what is wrong (for the one log line the refusal gets).
 */
int state_open(struct state_file *f, const void *buf, size_t len,
	       unsigned int flags, const char **why);
/*
 * The next record: 1 with its type and a reader over its body, 0 at the
 * end, -EINVAL (*why) for a record that overruns the payload or an end
 * that comes after another count of records than the header's.
 */
int state_next(struct state_file *f, uint16_t *type, struct state_r *r,
	       const char **why);
/* The reader left nothing unread and refused nothing: 0, or -EINVAL. */
int sr_end(struct state_r *r, const char **why);

const char *state_rec_name(unsigned int type);

/*
 * Expanding state_fields.def rows into a writer and a reader: with w (or
 * r) and o (the record's object) in scope,
 *   #define STATE_CONN(k, m, since) STATE_PUT(k, m)   (writer)
 *   #define STATE_CONN(k, m, since) STATE_GET(k, m, since)   (reader)
 */
#define STATE_PUT(k, m) STATE_PUT_##k(w, o, m);
#define STATE_GET(k, m, since)                                                 \
	if (r->version >= (since))                                             \
		STATE_GET_##k(r, o, m);
#define STATE_PUT_U8(w, o, m) sw_u8(w, (uint8_t)(o)->m)
#define STATE_PUT_U16(w, o, m) sw_u16(w, (uint16_t)(o)->m)
#define STATE_PUT_U32(w, o, m) sw_u32(w, (uint32_t)(o)->m)
#define STATE_PUT_U64(w, o, m) sw_u64(w, (uint64_t)(o)->m)
#define STATE_PUT_BOOL(w, o, m) sw_u8(w, (o)->m ? 1 : 0)
#define STATE_PUT_GID(w, o, m) sw_bytes(w, (o)->m, 16)
#define STATE_PUT_TOKEN(w, o, m) sw_bytes(w, (o)->m, 16)
#define STATE_PUT_NAME(w, o, m) sw_bytes(w, (o)->m, STATE_NAME_SIZE)
#define STATE_PUT_ADDR(w, o, m) state_put_addr(w, &(o)->m)
#define STATE_PUT_TERMS(w, o, m) state_put_terms(w, &(o)->m)
#define STATE_PUT_FN(w, o, m) st_put_##m(w, o)
#define STATE_GET_U8(r, o, m) ((o)->m = sr_u8(r))
#define STATE_GET_U16(r, o, m) ((o)->m = sr_u16(r))
#define STATE_GET_U32(r, o, m) ((o)->m = sr_u32(r))
#define STATE_GET_U64(r, o, m) ((o)->m = sr_u64(r))
#define STATE_GET_BOOL(r, o, m) ((o)->m = sr_bool(r))
#define STATE_GET_GID(r, o, m) sr_bytes(r, (o)->m, 16)
#define STATE_GET_TOKEN(r, o, m) sr_bytes(r, (o)->m, 16)
#define STATE_GET_NAME(r, o, m) sr_str(r, (o)->m, STATE_NAME_SIZE)
#define STATE_GET_ADDR(r, o, m) state_get_addr(r, &(o)->m)
#define STATE_GET_TERMS(r, o, m) state_get_terms(r, &(o)->m)
#define STATE_GET_FN(r, o, m) st_get_##m(r, o)

/* NAME fields: a client's name (CMP_CLIENT_NAME_SIZE). */
#define STATE_NAME_SIZE 32

struct eng_addr;
struct eng_terms;
void state_put_addr(struct state_w *w, const struct eng_addr *o);
void state_get_addr(struct state_r *r, struct eng_addr *o);
void state_put_terms(struct state_w *w, const struct eng_terms *o);
void state_get_terms(struct state_r *r, struct eng_terms *o);

/* This boot's id; 0 or -errno. */
int state_boot_id(uint8_t id[STATE_BOOT_ID_SIZE]);

#endif
