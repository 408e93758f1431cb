// SPDX-License-Identifier: MIT
/*
 * Fault injection on the simulated fabric (issue 8, item 2).
 *
 * A hub with 10% loss, 5% duplication, 10% reordering and 0-2 ms delay in
 * both directions, two daemons (node 1 = A, node 2 = B), a listener on B
 * and RB_CONNS connections (default 10000) opened from A, RB_IN_FLIGHT
 * (default 64) at a time, by one libcmclient driver that also rejects,
 * destroys and disconnects from either side, chosen per connection:
 *
 *   50%  established, A disconnects          25%  established, B disconnects
 *    7%  B rejects the REQ (reason 28)         5%  A destroys right after connect
 *    5%  A destroys on REP_RECEIVED (no RTU)   4%  B destroys on REQ_RECEIVED
 *    4%  B destroys once ESTABLISHED (the daemon sends the DREQ)
 *
 * Asserted:
 *  - every active connection ends exactly once: established-then-closed
 *    (TIMEWAIT_EXIT after DREP_RECEIVED, DISCONNECT_TIMEOUT or our DREP, or
 *    after a REJ_RECEIVED in ESTABLISHED/DREQ_SENT: the peer's REP timed
 *    out before our RTU or DREQ got through; the kernel's CM delivers that
 *    REJ in DREQ_SENT too),
 *    or a clean error event (REJ_RECEIVED, CONNECT_ERROR), or destroyed by
 *    the driver's own choice; every passive id likewise. Any other event
 *    in a state, or an API error other than the state races IBTA allows
 *    (-EINVAL), is a violation; the counts of each ending are printed.
 *  - no connection stays in a non-final state past STUCK_MS (60 s). Its
 *    protocol bounds its life in wall time: at most 16 tries of each of
 *    REQ, REP and DREQ at ~6 ms (response timeout 2^10 x 4.096 us plus
 *    twice the packet life time 2^8 x 4.096 us), MRA waits and a few-ms
 *    timewait: well under 1 s; on top of that only the driver's own
 *    queue, at most 64 connections' events. A slow machine stretches the
 *    queue, not the protocol, so 60 s is safe; a connection whose timer
 *    was lost never ends, and is caught here or, in the last chunk, by:
 *  - progress: while connections are open, some event arrives within
 *    PROGRESS_MS (60 s; the protocol guarantees one within ~1 s). The
 *    run has no deadline of its own (meson's timeout is the hang guard):
 *    how fast the machine gets through 10,000 connections is not a
 *    verdict.
 *  - after the run and timewait, both daemons hold 0 ids and 0 records
 *    (counters) and cmc_list shows nothing.
 *  - memory: the daemon's live heap, its counters heap_in_use (glibc's
 *    mallinfo2: bytes allocated and not freed) less heap_cached (buffers
 *    it keeps for reuse, which follow the peak up to their caps), read
 *    when the daemon has drained to the listener alone: after a
 *    200-connection warm-up on a clean fabric (the baseline: tables and
 *    buffers allocated once belong to the daemon), after the first half
 *    and at the end. At those points nothing that belongs to a connection
 *    is left, so what remains differs only by the growth of the tables
 *    sized by the peak (hash tables, the timer heap: 8-16 bytes per slot,
 *    power-of-two doublings, tens of KiB for the few hundred records that
 *    are ever open at once), whatever the speed of the machine and
 *    therefore the peak. The second half may add at most RB_LEAK_KB
 *    (128 KiB: a leak of 32 bytes per connection, 5,000 connections,
 *    exceeds it) and the end may be at most RB_PEAK_KB (256 KiB) above
 *    the baseline. VmRSS is printed, not judged: glibc keeps freed heap,
 *    so RSS follows the peak concurrency, which depends on the speed of
 *    the machine (the delays are wall time, the driver is not). Without
 *    the counters (a sanitizer's allocator: heap_in_use 0) the memory
 *    check is skipped; LeakSanitizer judges the daemon's exit instead.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb_common.h"

#define SERVICE_ID 0x00000000726f6231ull /* "rob1" */
#define BACKLOG 256
#define STUCK_MS 60000.0
#define PROGRESS_MS 60000.0
/* A drain after the run: the last tails (retries, timewait) end within
 * ~1 s of protocol time; the cap only turns a hang into a failure. */
#define DRAIN_MS 30000.0
#define ERRORS_SHOWN 20
/*
 * Two fault profiles, alternated every CHUNK connections: cmhub applies its
 * reorder setting only to MADs it does not delay (a delayed MAD skips the
 * reorder draw, see the report), so the first profile reorders through
 * random 0-2 ms delays and the second through the hub's hold-back.
 */
#define FAULTS "loss=10 dup=5 reorder=10 delay=0-2000"
#define FAULTS_HOLD "loss=10 dup=5 reorder=10 delay=0-0"
#define CHUNK 1000

enum fate {
	F_A_DISC,
	F_B_DISC,
	F_REJECT,
	F_A_DESTROY_EARLY,
	F_A_DESTROY_REP,
	F_B_DESTROY_REQ,
	F_B_DESTROY_EST,
};

static enum fate fate_of(unsigned int n)
{
	/* A fixed hash, so that both sides agree without talking. */
	unsigned int h = (n * 2654435761u) >> 8;
	unsigned int p = h % 100;

	/* Cumulative shares in percent, the rest F_B_DESTROY_EST. */
	static const struct {
		unsigned int below;
		enum fate fate;
	} shares[] = {
		{ 50, F_A_DISC },	 { 75, F_B_DISC },
		{ 82, F_REJECT },	 { 87, F_A_DESTROY_EARLY },
		{ 92, F_A_DESTROY_REP }, { 96, F_B_DESTROY_REQ },
	};

	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
		if (p < shares[i].below)
			return shares[i].fate;
	return F_B_DESTROY_EST;
}

enum st {
	S_CONNECTING,
	S_EST, /* waiting for the peer's DREQ */
	S_DISCONNECTING, /* our DREQ is out */
	S_TIMEWAIT,
	S_ACCEPTED, /* passive: REP sent */
	S_DONE,
};

struct conn {
	unsigned int n;
	bool passive;
	enum fate fate;
	enum st st;
	bool established;
	double start;
	struct cmc_id *id;
	struct conn *next, *prev; /* live list */
};

static struct side_stats {
	unsigned long closed, rejected, conn_error, destroyed, violations;
	unsigned long api_einval, mra, disc_timeout, rej_established;
	unsigned long rej_reason[64];
} act, pas;

static struct conn live = { .next = &live, .prev = &live };
static unsigned long nlive_active, nlive_passive;
static unsigned int errors_shown;

static void complain(const struct conn *c, const char *fmt, const char *ev,
		     int st)
{
	if (errors_shown++ < ERRORS_SHOWN)
		fprintf(stderr, "conn %u (%s, fate %d, state %d): %s %s %d\n",
			c->n, c->passive ? "passive" : "active", c->fate, c->st,
			fmt, ev, st);
}

static struct conn *conn_new(unsigned int n, bool passive)
{
	struct conn *c = calloc(1, sizeof(*c));

	CHECK(c != NULL, "calloc");
	c->n = n;
	c->passive = passive;
	c->fate = fate_of(n);
	c->start = rb_now_ms();
	c->next = live.next;
	c->prev = &live;
	live.next->prev = c;
	live.next = c;
	if (passive)
		nlive_passive++;
	else
		nlive_active++;
	return c;
}

/* The connection ends: count it, destroy its id, free it. */
static void conn_end(struct conn *c, unsigned long *counter)
{
	int rc;

	(*counter)++;
	if (c->id) {
		rc = cmc_destroy_id(c->id);
		if (rc) {
			complain(c, "destroy failed", cmc_strerror(rc), rc);
			(c->passive ? &pas : &act)->violations++;
		}
	}
	c->prev->next = c->next;
	c->next->prev = c->prev;
	if (c->passive)
		nlive_passive--;
	else
		nlive_active--;
	free(c);
}

/* An API call's result: 0, or -EINVAL (the state moved under us: a REJ or
 * timeout is already on its way, wait for it), else a violation. */
static bool api_ok(struct conn *c, const char *what, int rc)
{
	if (rc == 0)
		return true;
	if (rc == -EINVAL) {
		(c->passive ? &pas : &act)->api_einval++;
		return true;
	}
	complain(c, what, cmc_strerror(rc), rc);
	(c->passive ? &pas : &act)->violations++;
	return false;
}

/* The connection is up; with 'disc' (its fate) this side closes it now. */
static void conn_up(struct conn *c, bool disc)
{
	c->established = true;
	if (!disc) {
		c->st = S_EST;
		return;
	}
	if (!api_ok(c, "disconnect", cmc_disconnect(c->id, NULL, 0))) {
		conn_end(c, &(c->passive ? &pas : &act)->violations);
		return;
	}
	c->st = S_DISCONNECTING;
}

/*
 * What either side's handler leaves: once established, the peer's DREQ
 * answered, our own DREQ's DREP or timeout, the end of timewait; any other
 * event is unexpected, a violation.
 */
static void conn_closing(struct conn *c, const struct cmc_event *ev)
{
	struct side_stats *side = c->passive ? &pas : &act;
	enum cmc_event_type t = ev->type;

	switch (c->st) {
	case S_EST:
		if (t != CMC_EVENT_DREQ_RECEIVED)
			goto unexpected;
		if (!api_ok(c, "disconnect(DREP)",
			    cmc_disconnect(c->id, NULL, 0))) {
			conn_end(c, &side->violations);
			return;
		}
		c->st = S_TIMEWAIT;
		return;
	case S_DISCONNECTING:
		if (t == CMC_EVENT_DREQ_RECEIVED)
			return; /* crossed DREQs: the daemon answers */
		if (t == CMC_EVENT_DISCONNECT_TIMEOUT) {
			side->disc_timeout++;
			if (getenv("RB_VERBOSE"))
				fprintf(stderr,
					"%c disc timeout conn %u fate %d\n",
					c->passive ? 'B' : 'A', c->n, c->fate);
		}
		if (t == CMC_EVENT_DREP_RECEIVED ||
		    t == CMC_EVENT_DISCONNECT_TIMEOUT) {
			c->st = S_TIMEWAIT;
			return;
		}
		break;
	case S_TIMEWAIT:
		break;
	default:
		goto unexpected;
	}
	if (t == CMC_EVENT_TIMEWAIT_EXIT) {
		conn_end(c, &side->closed);
		return;
	}
unexpected:
	complain(c, "unexpected event", cmc_event_str(t), ev->status);
	conn_end(c, &side->violations);
}

static void start_conn(struct cmc_channel *a, unsigned int n, uint16_t lid)
{
	struct conn *c = conn_new(n, false);
	struct cmc_conn_param p;
	char pd[32];
	int rc;

	snprintf(pd, sizeof(pd), "c %u", n);
	rb_conn_param(&p, SERVICE_ID, lid, 2 + n, (n * 7919) & 0xffffff, 4, 10);
	p.private_data = pd;
	p.private_data_len = (uint8_t)(strlen(pd) + 1);
	rc = cmc_create_id(a, c, CMC_QP_RC, &c->id);
	CHECK(rc == 0, "create_id: %s", cmc_strerror(rc));
	rc = cmc_connect(c->id, &p);
	CHECK(rc == 0, "connect %u: %s", n, cmc_strerror(rc));
	if (c->fate == F_A_DESTROY_EARLY)
		conn_end(c, &act.destroyed);
}

static void active_event(struct conn *c, struct cmc_event *ev)
{
	enum cmc_event_type t = ev->type;

	if (t == CMC_EVENT_MRA_RECEIVED) {
		act.mra++;
		return;
	}
	if (t == CMC_EVENT_REJ_RECEIVED && !c->established) {
		act.rej_reason[ev->u.rej.reason & 63]++;
		conn_end(c, &act.rejected);
		return;
	}
	if (t == CMC_EVENT_CONNECT_ERROR && !c->established) {
		if (getenv("RB_VERBOSE"))
			fprintf(stderr,
				"A connect error conn %u fate %d status %d "
				"msg %u after %.0f ms\n",
				c->n, c->fate, ev->status,
				ev->u.connect_error.msg,
				rb_now_ms() - c->start);
		conn_end(c, &act.conn_error);
		return;
	}
	if (t == CMC_EVENT_REJ_RECEIVED && c->st != S_TIMEWAIT) {
		/* After the RTU: the peer gave up on its REP (our RTU and
		 * DREQs lost) and said so; as with the kernel's CM the id
		 * is in timewait now, TIMEWAIT_EXIT follows. */
		act.rej_established++;
		if (getenv("RB_VERBOSE"))
			fprintf(stderr,
				"A rej established conn %u fate %d st %d "
				"reason %u\n",
				c->n, c->fate, c->st, ev->u.rej.reason);
		c->st = S_TIMEWAIT;
		return;
	}
	if (c->st == S_CONNECTING && t == CMC_EVENT_REP_RECEIVED) {
		if (c->fate == F_A_DESTROY_REP)
			conn_end(c, &act.destroyed);
		else if (!api_ok(c, "rtu", cmc_rtu(c->id, NULL, 0)))
			conn_end(c, &act.violations);
		else
			conn_up(c, c->fate == F_A_DISC);
		return;
	}
	conn_closing(c, ev);
}

static void passive_req(struct cmc_event *ev)
{
	unsigned int n = 0;
	struct conn *c;
	struct cmc_accept_param ap;
	int rc;

	if (sscanf((const char *)ev->u.req.private_data, "c %u", &n) != 1) {
		fprintf(stderr, "REQ without our private data\n");
		pas.violations++;
		cmc_destroy_id(ev->id);
		return;
	}
	c = conn_new(n, true);
	c->id = ev->id;
	rc = cmc_set_context(c->id, c);
	CHECK(rc == 0, "set_context: %s", cmc_strerror(rc));
	switch (c->fate) {
	case F_REJECT:
		rc = cmc_reject(c->id, 28, NULL, 0, "no", 3);
		if (api_ok(c, "reject", rc))
			conn_end(c, &pas.rejected);
		else
			conn_end(c, &pas.violations);
		return;
	case F_B_DESTROY_REQ:
		conn_end(c, &pas.destroyed);
		return;
	default:
		break;
	}
	memset(&ap, 0, sizeof(ap));
	ap.qp_num = 0x100000 + n;
	ap.start_psn = n & 0xffffff;
	ap.responder_resources = 4;
	ap.initiator_depth = 4;
	ap.rnr_retry_count = 7;
	rc = cmc_accept(c->id, &ap);
	if (!api_ok(c, "accept", rc)) {
		conn_end(c, &pas.violations);
		return;
	}
	c->st = S_ACCEPTED;
}

static void passive_event(struct conn *c, struct cmc_event *ev)
{
	enum cmc_event_type t = ev->type;

	if (t == CMC_EVENT_MRA_RECEIVED) {
		pas.mra++;
		return;
	}
	if (!c->established && t == CMC_EVENT_REJ_RECEIVED) {
		pas.rej_reason[ev->u.rej.reason & 63]++;
		conn_end(c, &pas.rejected);
		return;
	}
	if (c->established && t == CMC_EVENT_REJ_RECEIVED &&
	    c->st != S_TIMEWAIT) {
		pas.rej_established++;
		c->st = S_TIMEWAIT;
		return;
	}
	if (!c->established && t == CMC_EVENT_CONNECT_ERROR) {
		if (getenv("RB_VERBOSE"))
			fprintf(stderr,
				"B connect error conn %u fate %d st %d\n", c->n,
				c->fate, c->st);
		conn_end(c, &pas.conn_error);
		return;
	}
	if (c->st == S_ACCEPTED && t == CMC_EVENT_DREQ_RECEIVED) {
		/* The RTU was lost and the DREQ came first. */
		c->established = true;
		c->st = S_EST;
	} else if (c->st == S_ACCEPTED && t == CMC_EVENT_ESTABLISHED) {
		c->established = true;
		if (c->fate == F_B_DESTROY_EST)
			conn_end(c, &pas.destroyed);
		else
			conn_up(c, c->fate == F_B_DISC);
		return;
	}
	conn_closing(c, ev);
}

/* Handle every event queued on ch; returns how many. */
static unsigned int drain(struct cmc_channel *ch, bool passive_side,
			  struct cmc_id *listener)
{
	unsigned int n = 0;
	struct cmc_event *ev;
	int rc;

	while ((rc = cmc_get_event(ch, &ev, 0)) == 0) {
		n++;
		if (passive_side && ev->type == CMC_EVENT_REQ_RECEIVED) {
			CHECK(ev->listen_id == listener, "REQ for no listener");
			passive_req(ev);
		} else if (passive_side) {
			passive_event(ev->context, ev);
		} else {
			active_event(ev->context, ev);
		}
		rc = cmc_ack_event(ev);
		CHECK(rc == 0, "ack: %s", cmc_strerror(rc));
	}
	CHECK(rc == -EAGAIN, "get_event: %s", cmc_strerror(rc));
	return n;
}

static void check_stuck(void)
{
	double now = rb_now_ms();
	unsigned int stuck = 0;

	for (struct conn *c = live.next; c != &live; c = c->next)
		if (now - c->start > STUCK_MS) {
			if (stuck++ < ERRORS_SHOWN)
				fprintf(stderr,
					"stuck: conn %u %s fate %d state %d "
					"for %.0f ms\n",
					c->n, c->passive ? "passive" : "active",
					c->fate, c->st, now - c->start);
		}
	CHECK(stuck == 0, "%u connection(s) stuck in a non-final state", stuck);
}

/* Run connections [first, last) to completion on both sides. */
static void run(struct cmc_channel *a, struct cmc_channel *b,
		struct cmc_id *listener, unsigned int first, unsigned int last,
		unsigned int in_flight)
{
	double last_event = rb_now_ms(), last_check = 0;
	unsigned int next = first;

	while (next < last || nlive_active || nlive_passive) {
		struct pollfd pfd[2] = {
			{ .fd = cmc_fd(a), .events = POLLIN },
			{ .fd = cmc_fd(b), .events = POLLIN },
		};

		while (next < last && nlive_active < in_flight)
			start_conn(a, next++, RB_NODE_LID(2));
		if (poll(pfd, 2, 5) < 0 && errno != EINTR)
			CHECK(0, "poll: %s", strerror(errno));
		if (drain(b, true, listener) + drain(a, false, NULL))
			last_event = rb_now_ms();
		if (rb_now_ms() - last_check > 500) {
			last_check = rb_now_ms();
			check_stuck();
			CHECK(last_check - last_event < PROGRESS_MS,
			      "no event for %.0f s: %u started, %lu active and "
			      "%lu passive open",
			      (last_check - last_event) / 1e3, next - first,
			      nlive_active, nlive_passive);
		}
	}
}

/* ch's daemon holds at most max ids and records (rb_wait_drained()). */
static bool drained(struct cmc_channel *ch, uint64_t max)
{
	return rb_counter(ch, "ids") <= max && rb_counter(ch, "records") <= max;
}

/*
 * Wait until both daemons hold nothing but B's listener, serving the
 * driver's channels meanwhile. A duplicated or delayed REQ of a
 * connection that has already ended on both sides may still reach B,
 * which rightly takes it for a new one (its first copy's record is gone,
 * as the kernel's CM's would be): its REQ_RECEIVED must be answered like
 * any other, and that connection run to its end (A knows no such id and
 * REJects the REP), or B keeps its id however long we wait.
 */
static bool settle(struct cmc_channel *a, struct cmc_channel *b,
		   struct cmc_id *listener, struct cmc_channel *ma,
		   struct cmc_channel *mb)
{
	double end = rb_now_ms() + DRAIN_MS;

	do {
		struct pollfd pfd[2] = {
			{ .fd = cmc_fd(a), .events = POLLIN },
			{ .fd = cmc_fd(b), .events = POLLIN },
		};

		run(a, b, listener, 0, 0, 0);
		if (drained(ma, 0) && drained(mb, 1) && !nlive_active &&
		    !nlive_passive)
			return true;
		if (poll(pfd, 2, 50) < 0 && errno != EINTR)
			CHECK(0, "poll: %s", strerror(errno));
		drain(b, true, listener);
		drain(a, false, NULL);
	} while (rb_now_ms() < end);
	/* Says which daemon keeps what. */
	return rb_wait_drained(ma, 0, 0, 0) && rb_wait_drained(mb, 1, 1, 0);
}

static void run_chunks(struct cmc_channel *a, struct cmc_channel *b,
		       struct cmc_id *listener, unsigned int first,
		       unsigned int last, unsigned int in_flight)
{
	for (unsigned int n = first; n < last; n += CHUNK) {
		rb_hub_set((n / CHUNK) % 2 ? FAULTS_HOLD : FAULTS);
		run(a, b, listener, n, n + CHUNK < last ? n + CHUNK : last,
		    in_flight);
	}
}

/* A drained daemon's memory: its live heap (see the top), and VmRSS. */
struct mem {
	unsigned long heap_kb, rss_kb;
};

static struct mem mem_of(struct cmc_channel *ch, unsigned int idx)
{
	uint64_t in_use = rb_counter(ch, "heap_in_use");
	uint64_t cached = rb_counter(ch, "heap_cached");
	struct mem m = { 0, rb_vmrss_kb(rb_fab.d[idx].pid) };

	if (in_use > cached)
		m.heap_kb = (unsigned long)((in_use - cached) / 1024);
	return m;
}

static void print_side(const char *name, const typeof(act) *s)
{
	printf("%s: closed %lu, rejected %lu, connect_error %lu, destroyed "
	       "%lu, violations %lu (of the closed: %lu after "
	       "DISCONNECT_TIMEOUT"
	       ", %lu after REJ_RECEIVED when established; state races "
	       "-EINVAL %lu, MRA %lu)\n",
	       name, s->closed, s->rejected, s->conn_error, s->destroyed,
	       s->violations, s->disc_timeout, s->rej_established,
	       s->api_einval, s->mra);
	printf("%s REJ reasons:", name);
	for (int i = 0; i < 64; i++)
		if (s->rej_reason[i])
			printf(" %d:%lu", i, s->rej_reason[i]);
	printf("\n");
}

int main(void)
{
	unsigned long total = rb_env_ulong("RB_CONNS", 10000);
	unsigned long in_flight = rb_env_ulong("RB_IN_FLIGHT", 64);
	/* Growth of the live heap allowed between the two halves, and
	 * above the baseline at the end, in KiB (see the top of this file). */
	unsigned long leak_kb = rb_env_ulong("RB_LEAK_KB", 128);
	unsigned long peak_kb = rb_env_ulong("RB_PEAK_KB", 256);
	const char *const extra[] = { "--packet-life-time", "8", NULL };
	struct cmc_channel *a, *b, *ma, *mb;
	struct cmc_id *listener;
	struct cmc_channel *mon[2];
	struct mem m0[2], m1[2], m2[2];
	unsigned int half = (unsigned int)(total / 2);
	double t0, t1;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rb_pair_start("rbfault", 8, extra, extra, &ma, &mb);
	a = rb_open(0, "rb-active");
	b = rb_open(1, "rb-passive");
	mon[0] = ma;
	mon[1] = mb;
	rc = cmc_create_id(b, NULL, CMC_QP_RC, &listener);
	CHECK(rc == 0, "create listener: %s", cmc_strerror(rc));
	rc = cmc_listen(listener, SERVICE_ID, ~0ull, BACKLOG, NULL);
	CHECK(rc == 0, "listen: %s", cmc_strerror(rc));

	/* Warm up on a clean fabric: first allocations (tables, buffers)
	 * are part of the baseline, not of the connections. */
	run(a, b, listener, 1000000, 1000000 + 200, (unsigned int)in_flight);
	CHECK(settle(a, b, listener, ma, mb), "warm-up did not drain");
	for (int i = 0; i < 2; i++)
		m0[i] = mem_of(mon[i], (unsigned int)i);
	memset(&act, 0, sizeof(act));
	memset(&pas, 0, sizeof(pas));

	rb_hub_set(FAULTS " seed=8 reset");
	printf("faults: %s, alternating with %s every %d; %lu connections, "
	       "%lu in flight\n",
	       FAULTS, FAULTS_HOLD, CHUNK, total, in_flight);
	t0 = rb_now_ms();
	run_chunks(a, b, listener, 0, half, (unsigned int)in_flight);
	CHECK(settle(a, b, listener, ma, mb), "first half did not drain");
	for (int i = 0; i < 2; i++)
		m1[i] = mem_of(mon[i], (unsigned int)i);
	run_chunks(a, b, listener, half, (unsigned int)total,
		   (unsigned int)in_flight);
	t1 = rb_now_ms();
	print_side("active", &act);
	print_side("passive", &pas);
	printf("wall %.1f s, %.0f connections/s\n", (t1 - t0) / 1e3,
	       (double)total / ((t1 - t0) / 1e3));
	printf("hub: dropped %llu duplicated %llu reordered %llu delayed %llu "
	       "overflow %llu\n",
	       (unsigned long long)rb_hub_stat("dropped"),
	       (unsigned long long)rb_hub_stat("duplicated"),
	       (unsigned long long)rb_hub_stat("reordered"),
	       (unsigned long long)rb_hub_stat("delayed"),
	       (unsigned long long)rb_hub_stat("overflow"));
	rb_print_counters(ma, "A",
			  "mad_,req_,rep_,rtu_,rej_,dreq_,drep_,"
			  "mra_,stale,timeouts,unexpected");
	rb_print_counters(mb, "B",
			  "mad_,req_,rep_,rtu_,rej_,dreq_,drep_,"
			  "mra_,stale,timeouts,unexpected");

	CHECK(act.violations == 0 && pas.violations == 0,
	      "%lu active and %lu passive violations", act.violations,
	      pas.violations);
	CHECK(act.closed + act.rejected + act.conn_error + act.destroyed ==
		      total,
	      "active endings add up to %lu of %lu",
	      act.closed + act.rejected + act.conn_error + act.destroyed,
	      total);
	CHECK(act.closed > total / 2, "only %lu closed", act.closed);
	/* Timers ran out: nothing may be left in either daemon but the
	 * listener. */
	CHECK(settle(a, b, listener, ma, mb),
	      "A keeps %llu ids %llu records, B %llu ids %llu records",
	      (unsigned long long)rb_counter(ma, "ids"),
	      (unsigned long long)rb_counter(ma, "records"),
	      (unsigned long long)rb_counter(mb, "ids"),
	      (unsigned long long)rb_counter(mb, "records"));
	CHECK(act.violations == 0 && pas.violations == 0,
	      "%lu active and %lu passive violations after the drain",
	      act.violations, pas.violations);
	CHECK(rb_list_count(ma) == 0, "A lists ids");
	CHECK(rb_list_count(mb) == 1, "B lists more than the listener");

	for (int i = 0; i < 2; i++) {
		m2[i] = mem_of(mon[i], (unsigned int)i);
		printf("node %d live heap: baseline %lu KiB, after half %lu "
		       "KiB, end %lu KiB (VmRSS %lu, %lu, %lu KiB, not "
		       "judged)\n",
		       i + 1, m0[i].heap_kb, m1[i].heap_kb, m2[i].heap_kb,
		       m0[i].rss_kb, m1[i].rss_kb, m2[i].rss_kb);
		if (!m0[i].heap_kb) {
			printf("node %d: no heap counters (not glibc's "
			       "allocator): memory not judged\n",
			       i + 1);
			continue;
		}
		CHECK(m2[i].heap_kb <= m1[i].heap_kb + leak_kb,
		      "node %d's live heap grew %ld KiB in the second half "
		      "(> %lu)",
		      i + 1, (long)m2[i].heap_kb - (long)m1[i].heap_kb,
		      leak_kb);
		CHECK(m2[i].heap_kb <= m0[i].heap_kb + peak_kb,
		      "node %d's live heap ends %ld KiB above its baseline "
		      "(> %lu)",
		      i + 1, (long)m2[i].heap_kb - (long)m0[i].heap_kb,
		      peak_kb);
	}
	cmc_destroy_id(listener);
	cmc_close(a);
	cmc_close(b);
	rb_pair_stop(ma, mb);
	printf("rb_faults: PASS\n");
	return 0;
}
