/* SPDX-License-Identifier: MIT */
/*
 * The fake fabric the CM engine tests and the engine fuzz target share:
 * nodes (one engine each, on port 1, reached at its LID's QP1), a queue of
 * MADs in flight between them, addressing by LID, the wire (every MAD
 * through the real encoder and decoder), a seeded random source and the
 * timers of every node run from one clock. What arrives, when, twice or
 * never is the caller's choice: tests/engine/harness.c hands MADs over by
 * hand, test_engine_random.c schedules loss and delay, fuzz_engine.c lets
 * the input decide. No test framework here: errors are returned, and each
 * caller checks them its own way (cmocka asserts, FUZZ_CHECK).
 */
#ifndef CMD_TESTS_FAKE_FABRIC_H
#define CMD_TESTS_FAKE_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* By path, so that scripts/fuzz.sh (-Iproto) finds it as meson does. */
#include "../../daemon/cm_engine.h"
#include "cm_mad.h"

#define FF_MAX_NODES 4

/* A conventional CA GUID for node 'i' of a fabric. */
#define FF_GUID(i) (0x0002c90300000000ULL | (uint64_t)((i) + 1) << 8)

struct ff_node {
	struct eng *eng;
	uint64_t guid;
	struct eng_addr addr; /* how the others reach it */
	uint64_t rnd; /* ff_random() state */
};

/*
 * eng_new(ops, ctx, cfg) with port 1 set to 'guid' (RoCE or IB), reached
 * at 'lid'; ff_random(n) then draws from 'seed' (0 counts as 1).
 */
int ff_node_init(struct ff_node *n, const struct eng_ops *ops, void *ctx,
		 const struct eng_config *cfg, uint64_t guid, uint16_t lid,
		 bool roce, uint64_t seed);
void ff_node_fini(struct ff_node *n);

/* xorshift64*: deterministic per seed; the whole 64-bit output. */
uint64_t ff_rand64(uint64_t *state);
/* Its high half from the node's state, what ops.random returns. */
uint32_t ff_random(struct ff_node *n);

/* A fabric: the nodes MADs are addressed to. */
struct ff {
	struct ff_node *node[FF_MAX_NODES];
	size_t n;
};

void ff_add(struct ff *f, struct ff_node *n);
/* The index of the node at to->lid, or -1: no one there (lost). */
int ff_route(const struct ff *f, const struct eng_addr *to);
/* The earliest deadline of any node, ENG_NO_DEADLINE if none. */
uint64_t ff_next_deadline(const struct ff *f);
/* Every node's timers, at 'now'. */
void ff_run_timers(const struct ff *f, uint64_t now);

/*
 * The wire: 'msg' encoded into 'buf' and decoded back into 'back' with
 * cm_mad_decode 'flags'. 0, or the encoder's or decoder's error (then *f
 * says what the decoder refused).
 */
int ff_wire(const struct cm_msg *msg, uint8_t buf[CM_MAD_SIZE],
	    struct cm_msg *back, unsigned int flags, struct cm_fault *f);

/* A MAD in flight, as it left its sender. */
struct ff_mad {
	struct eng_addr from, to;
	int dest; /* ff_route()'s answer, or the caller's */
	struct cm_msg msg;
};

/*
 * MADs in the order they were sent. m[0..n) is everything kept, m[next..n)
 * what is still in flight; the rest is history a test may look back at
 * until ff_queue_forget() drops it.
 */
struct ff_queue {
	struct ff_mad *m;
	size_t n, cap, next;
	size_t max; /* in flight at most (0: no limit); more are lost */
};

/* Queue one; -ENOBUFS when 'max' are in flight (the MAD is lost). */
int ff_queue_push(struct ff_queue *q, const struct ff_mad *m);
size_t ff_queue_len(const struct ff_queue *q);
/* The i-th MAD in flight (0: the next to arrive); i < ff_queue_len(). */
struct ff_mad *ff_queue_at(struct ff_queue *q, size_t i);
/* Take the next MAD to arrive off the queue; returns a copy. */
struct ff_mad ff_queue_pop(struct ff_queue *q);
/* Everything in flight is lost; returns how many. */
size_t ff_queue_drop(struct ff_queue *q);
/* Forget the history, keep what is in flight. */
void ff_queue_forget(struct ff_queue *q);
void ff_queue_free(struct ff_queue *q);

/* 'm' arrives at node 'to' from m->from at 'now' (eng_recv). */
void ff_recv(struct ff_node *to, const struct ff_mad *m, uint64_t now);

#endif
