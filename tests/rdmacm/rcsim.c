// SPDX-License-Identifier: MIT
/*
 * The harness of the rcsim tests (see rcsim.h).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "cmclient.h"
#include "rcsim.h"
#include "sim_harness.h"

#ifdef HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

const char *rcs_sock[3];
int rcs_wait_ms = RCS_WAIT_MS;
static int hang_s = RCS_HANG_S;
const char *rcs_side = "harness";

/* The pipes of a side: words from the peer come in on rd, ours go out
 * on wr. */
static int peer_rd = -1, peer_wr = -1;

/* ------------------------------------------------------------------ */
/* The cmocka process */

/* Does symbol name resolve into the library at want (a real path)? */
static bool ours(const char *name, const char *want)
{
	void *sym = dlsym(RTLD_DEFAULT, name);
	char got[PATH_MAX];
	Dl_info di;

	if (!sym || !dladdr(sym, &di) || !di.dli_fname ||
	    !realpath(di.dli_fname, got)) {
		fprintf(stderr, "%s: not found in any loaded object\n", name);
		return false;
	}
	if (strcmp(got, want)) {
		fprintf(stderr, "%s comes from %s, not from %s\n", name, got,
			want);
		return false;
	}
	return true;
}

static int setup(const char *tag, unsigned int seed, const char *const *extra_b,
		 bool ib)
{
	static const char *const roce[] = { "--sim-roce", NULL };
	static const char *b[16] = { "--sim-roce" };
	const char *const *extra[] = { ib ? NULL : roce, b };
	static const char *const syms[] = { "rdma_create_id", "rdma_connect",
					    "rdma_get_cm_event",
					    "rdma_getaddrinfo" };
	const char *lib = getenv("RCS_LIBRDMACM");
	char want[PATH_MAX];
	size_t n = 1;

	if (!lib || !realpath(lib, want)) {
		fprintf(stderr, "RCS_LIBRDMACM must name our librdmacm\n");
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!ours(syms[i], want))
			return -1;
	if (ib)
		n = 0;
	for (; extra_b && *extra_b && n < 15; extra_b++)
		b[n++] = *extra_b;
	b[n] = NULL;
	if (RUNNING_ON_VALGRIND) {
		rcs_wait_ms *= 10;
		hang_s *= 10;
	}
	if (sim_fabric_start(tag, seed, 2, extra))
		return -1;
	rcs_sock[1] = sim_fab.sock[0];
	rcs_sock[2] = sim_fab.sock[1];
	return 0;
}

int rcs_setup(const char *tag, unsigned int seed, const char *const *extra_b)
{
	return setup(tag, seed, extra_b, false);
}

int rcs_setup_ib(const char *tag, unsigned int seed)
{
	return setup(tag, seed, NULL, true);
}

void rcs_main(int argc, char **argv)
{
	char *vg[] = {
		"valgrind",
		"--error-exitcode=99",
		"--leak-check=full",
		"--errors-for-leak-kinds=definite,indirect",
		"--show-leak-kinds=definite,indirect",
		"--quiet",
		argv[0],
		NULL,
	};

	if (argc < 2 || strcmp(argv[1], "--valgrind") || RUNNING_ON_VALGRIND)
		return;
#ifdef __SANITIZE_ADDRESS__
	/* memcheck cannot run an ASan build, nor would it add anything. */
	fprintf(stderr, "built with AddressSanitizer: no valgrind run\n");
	exit(77);
#endif
	execvp(vg[0], vg);
	fprintf(stderr, "cannot run valgrind (%s): skipped\n", strerror(errno));
	exit(77);
}

int rcs_teardown(void **state)
{
	return sim_group_teardown(state);
}

static pid_t start_side(rcs_role_fn *fn, const char *side, const char *sock,
			void *arg, int rd, int wr, int close1, int close2)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	/*
	 * The child: nothing here has touched the library yet. cmocka's
	 * handlers of fatal signals would carry on with its test loop in
	 * the child: a crash must end the child, for the parent to see it.
	 */
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	close(close1);
	close(close2);
	rcs_side = side;
	peer_rd = rd;
	peer_wr = wr;
	setenv("CMD_SOCKET", sock, 1);
	alarm((unsigned int)hang_s + 10); /* behind the parent's guard */
	fn(arg);
	fflush(NULL);
	_exit(0);
}

/* Describe how a side ended; true for exit status 0. */
static bool ended_well(const char *side, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (WIFEXITED(status))
		fprintf(stderr, "%s exited %d\n", side, WEXITSTATUS(status));
	else
		fprintf(stderr, "%s killed by signal %d\n", side,
			WTERMSIG(status));
	return false;
}

/* Wait for both sides (pid 0: none); when one fails or the hang guard
 * passes, kill the other. */
static bool wait_sides(pid_t pid[2], const char *const name[2])
{
	time_t end = time(NULL) + hang_s;
	bool ok = true;
	int left = (pid[0] > 0) + (pid[1] > 0);

	while (left) {
		bool any = false;

		for (int i = 0; i < 2; i++) {
			int status;

			if (pid[i] <= 0 ||
			    waitpid(pid[i], &status, WNOHANG) != pid[i])
				continue;
			pid[i] = 0;
			left--;
			any = true;
			if (!ended_well(name[i], status))
				ok = false;
		}
		if (left && (!ok || time(NULL) > end)) {
			if (ok)
				fprintf(stderr,
					"hang guard: a side still runs "
					"after %d s\n",
					hang_s);
			for (int i = 0; i < 2; i++)
				if (pid[i] > 0) {
					kill(pid[i], SIGKILL);
					waitpid(pid[i], NULL, 0);
					fprintf(stderr, "%s killed\n", name[i]);
					pid[i] = 0;
				}
			return false;
		}
		if (!any)
			usleep(10000);
	}
	return ok;
}

static void run(rcs_role_fn *server, const char *ssock, rcs_role_fn *client,
		const char *csock, void *arg)
{
	static const char *const name[2] = { "server", "client" };
	int s2c[2], c2s[2];
	pid_t pid[2] = { 0, 0 };
	bool ok;

	assert_int_equal(pipe2(s2c, O_CLOEXEC), 0);
	assert_int_equal(pipe2(c2s, O_CLOEXEC), 0);
	if (server)
		pid[0] = start_side(server, name[0], ssock, arg, c2s[0], s2c[1],
				    s2c[0], c2s[1]);
	if (client)
		pid[1] = start_side(client, name[1], csock, arg, s2c[0], c2s[1],
				    c2s[0], s2c[1]);
	close(s2c[0]);
	close(s2c[1]);
	close(c2s[0]);
	close(c2s[1]);
	ok = wait_sides(pid, name);
	if (!ok)
		fail_msg("a side failed (see above)");
	/*
	 * Whatever a side left, the daemon frees when its client goes; a
	 * destroyed record finishes its timewait (milliseconds with the
	 * harness's packet life time) first. Back to nothing, then, or the
	 * next case would start with leftovers.
	 */
	for (unsigned int n = 1; n <= 2; n++) {
		rcs_wait_counter(rcs_sock[n], "ids", 0);
		rcs_wait_counter(rcs_sock[n], "records", 0);
	}
}

void rcs_run(rcs_role_fn *server, rcs_role_fn *client, void *arg)
{
	run(server, rcs_sock[2], client, rcs_sock[1], arg);
}

void rcs_run_one(rcs_role_fn *fn, const char *sock, void *arg)
{
	run(NULL, NULL, fn, sock, arg);
}

/* ------------------------------------------------------------------ */
/* Checks in a side */

void rcs_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%d: ", rcs_side, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	/* In the cmocka process a failure is the case's, not the run's. */
	if (!strcmp(rcs_side, "harness"))
		fail();
	_exit(1);
}

#define CHECK(cond, ...) RCS_CHECK(cond, __VA_ARGS__)

void rcs_tell(const char *word)
{
	size_t n = strlen(word) + 1;

	CHECK(peer_wr >= 0, "no peer to tell '%s'", word);
	CHECK(write(peer_wr, word, n) == (ssize_t)n, "telling '%s': %s", word,
	      strerror(errno));
}

static void hear(const char *word, int ms)
{
	char got[64];
	size_t n = 0;

	CHECK(peer_rd >= 0, "no peer to hear '%s' from", word);
	while (n < sizeof(got)) {
		struct pollfd p = { .fd = peer_rd, .events = POLLIN };
		ssize_t r;

		CHECK(poll(&p, 1, ms) == 1,
		      "the peer did not say '%s' within %d ms", word, ms);
		r = read(peer_rd, &got[n], 1);
		CHECK(r == 1, "the peer went before saying '%s'", word);
		if (!got[n])
			break;
		n++;
	}
	CHECK(n < sizeof(got) && !strcmp(got, word),
	      "the peer said '%.*s', not '%s'", (int)n, got, word);
}

void rcs_hear(const char *word)
{
	hear(word, rcs_wait_ms);
}

void rcs_hear_long(const char *word)
{
	hear(word, hang_s * 1000);
}

struct sockaddr *rcs_addr(struct sockaddr_in *sin, unsigned int node,
			  uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(0x7f000001 | node << 8);
	return (struct sockaddr *)sin;
}

struct rdma_cm_event *rcs_next(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;
	int r;

	do
		r = poll(&p, 1, rcs_wait_ms);
	while (r < 0 && errno == EINTR);
	CHECK(r == 1, "no event within %d ms", rcs_wait_ms);
	RCS_OK(rdma_get_cm_event(ch, &ev));
	return ev;
}

struct rdma_cm_event *rcs_expect(struct rdma_event_channel *ch,
				 enum rdma_cm_event_type type,
				 struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev = rcs_next(ch);

	CHECK(ev->event == type && ev->status == 0,
	      "got %s (status %d), expected %s", rdma_event_str(ev->event),
	      ev->status, rdma_event_str(type));
	CHECK(!id || ev->id == id, "%s for id %p, expected %p",
	      rdma_event_str(type), (void *)ev->id, (void *)id);
	return ev;
}

void rcs_expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
		    struct rdma_cm_id *id)
{
	RCS_OK(rdma_ack_cm_event(rcs_expect(ch, type, id)));
}

void rcs_nonblock(struct rdma_event_channel *ch, bool on)
{
	int fl = fcntl(ch->fd, F_GETFL);

	CHECK(fl >= 0, "F_GETFL: %s", strerror(errno));
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	CHECK(fcntl(ch->fd, F_SETFL, fl) == 0, "F_SETFL: %s", strerror(errno));
}

void rcs_expect_empty(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;
	int fl = fcntl(ch->fd, F_GETFL), r;

	CHECK(poll(&p, 1, 0) == 0, "the channel's fd is readable");
	rcs_nonblock(ch, true);
	errno = 0;
	r = rdma_get_cm_event(ch, &ev);
	CHECK(r == -1 && errno == EAGAIN,
	      "rdma_get_cm_event on an empty O_NONBLOCK channel: %d (%s)%s%s",
	      r, strerror(errno), r == 0 ? ", " : "",
	      r == 0 ? rdma_event_str(ev->event) : "");
	if (!(fl & O_NONBLOCK))
		rcs_nonblock(ch, false);
}

struct rdma_conn_param rcs_param(uint32_t qpn, const void *pd, uint8_t len)
{
	struct rdma_conn_param p = {
		.private_data = pd,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = qpn,
	};

	return p;
}

struct rdma_cm_event *rcs_addr_resolved(struct rdma_event_channel *ch,
					void *ctx, unsigned int node,
					uint16_t port)
{
	struct sockaddr_in dst;
	struct rdma_cm_id *id = NULL;

	RCS_OK(rdma_create_id(ch, &id, ctx, RDMA_PS_TCP));
	RCS_OK(rdma_resolve_addr(id, NULL, rcs_addr(&dst, node, port), 2000));
	return rcs_expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, id);
}

struct rdma_cm_id *rcs_resolved_id(struct rdma_event_channel *ch, void *ctx,
				   unsigned int node, uint16_t port)
{
	struct rdma_cm_event *ev = rcs_addr_resolved(ch, ctx, node, port);
	struct rdma_cm_id *id = ev->id;

	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_resolve_route(id, 2000));
	rcs_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id);
	return id;
}

void rcs_connect(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	static uint32_t n;
	struct rdma_conn_param p = rcs_param(RCS_CLIENT_QPN + n++, pd, len);

	RCS_OK(rdma_connect(id, &p));
}

void rcs_accept(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	static uint32_t n;
	struct rdma_conn_param p = rcs_param(RCS_SERVER_QPN + n++, pd, len);

	RCS_OK(rdma_accept(id, &p));
}

struct rdma_cm_id *rcs_listener(struct rdma_event_channel *ch, void *ctx,
				uint16_t port, int backlog)
{
	struct sockaddr_in sin;
	struct rdma_cm_id *id = NULL;

	RCS_OK(rdma_create_id(ch, &id, ctx, RDMA_PS_TCP));
	RCS_OK(rdma_bind_addr(id, rcs_addr(&sin, 2, port)));
	RCS_OK(rdma_listen(id, backlog));
	return id;
}

void rcs_quiet(struct rdma_event_channel *ch, unsigned int node)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	rcs_expect_empty(ch);
	id = rcs_resolved_id(ch, NULL, node, RCS_PORT_NOBODY);
	rcs_connect(id, NULL, 0);
	ev = rcs_next(ch);
	CHECK(ev->event == RDMA_CM_EVENT_REJECTED && ev->id == id &&
		      ev->status == 8,
	      "got %s (status %d) before the round trip's REJECTED",
	      rdma_event_str(ev->event), ev->status);
	RCS_OK(rdma_ack_cm_event(ev));
	RCS_OK(rdma_destroy_id(id));
	rcs_expect_empty(ch);
}

void rcs_hang_up(struct rdma_event_channel *ch, struct rdma_cm_id *id)
{
	RCS_OK(rdma_disconnect(id));
	rcs_expect_ack(ch, RDMA_CM_EVENT_DISCONNECTED, id);
	rcs_expect_ack(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, id);
	RCS_OK(rdma_destroy_id(id));
}

void rcs_hung_up(struct rdma_event_channel *ch, struct rdma_cm_id *id)
{
	rcs_expect_ack(ch, RDMA_CM_EVENT_DISCONNECTED, id);
	RCS_OK(rdma_disconnect(id));
	rcs_expect_ack(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, id);
	RCS_OK(rdma_destroy_id(id));
}

void rcs_wait_requests(struct rdma_event_channel *ch, uint64_t ids,
		       unsigned int n)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	rcs_wait_counter(getenv("CMD_SOCKET"), "ids", ids + n);
	CHECK(poll(&p, 1, rcs_wait_ms) == 1,
	      "no CONNECT_REQUEST queued within %d ms", rcs_wait_ms);
}

/* ------------------------------------------------------------------ */
/* The daemons' counters (libcmclient, a channel of our own) */

uint64_t rcs_counter(const char *sock, const char *name)
{
	struct cmc_counter c[CMC_COUNTERS_BATCH_MAX];
	struct cmc_channel *ch = NULL;
	uint64_t cursor = 0, value = UINT64_MAX;
	int n, r = cmc_open(sock, "rcsim", &ch);

	CHECK(r == 0, "cannot open %s: %s", sock, cmc_strerror(r));
	do {
		n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor, c);
		CHECK(n >= 0, "counters of %s: %s", sock, cmc_strerror(n));
		for (int i = 0; i < n; i++)
			if (!strcmp(c[i].name, name))
				value = c[i].value;
	} while (cursor);
	cmc_close(ch);
	CHECK(value != UINT64_MAX, "%s has no counter %s", sock, name);
	return value;
}

static void wait_counter(const char *sock, const char *name, uint64_t value,
			 bool at_least)
{
	/* A side waits less than the parent's guard, to say what for. */
	int ms = strcmp(rcs_side, "harness") ? rcs_wait_ms : hang_s * 1000;
	uint64_t v = rcs_counter(sock, name);

	for (int i = 0; (at_least ? v < value : v != value) && i < ms / 10;
	     i++) {
		usleep(10000);
		v = rcs_counter(sock, name);
	}
	CHECK(at_least ? v >= value : v == value,
	      "%s: counter %s is %llu, not %s%llu (waited %d ms)", sock, name,
	      (unsigned long long)v, at_least ? "at least " : "",
	      (unsigned long long)value, ms);
}

void rcs_wait_counter(const char *sock, const char *name, uint64_t value)
{
	wait_counter(sock, name, value, false);
}

void rcs_wait_counter_min(const char *sock, const char *name, uint64_t min)
{
	wait_counter(sock, name, min, true);
}
