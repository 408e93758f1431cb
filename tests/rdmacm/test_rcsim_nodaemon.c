// SPDX-License-Identifier: MIT
/*
 * No daemon behind CMD_SOCKET: a path where nothing is, and a socket
 * file nobody listens on (a daemon that died). The calls that need the
 * daemon fail, or report ADDR_ERROR, and the library says in one line
 * which socket it could not use; nothing waits for a daemon to appear.
 * The synchronous rdma_create_ep fails as its call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "rcsim.h"
#include "sim_harness.h"

/* The log lines the calls printed, from a file our stderr went to. */
static char logged[4096];

static void capture_start(FILE **f, int *saved)
{
	fflush(stderr);
	*f = tmpfile();
	RCS_CHECK(*f, "tmpfile: %s", strerror(errno));
	*saved = dup(2);
	RCS_CHECK(*saved >= 0 && dup2(fileno(*f), 2) == 2, "dup2: %s",
		  strerror(errno));
}

static void capture_end(FILE *f, int saved)
{
	size_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(logged, 1, sizeof(logged) - 1, f);
	logged[n] = 0;
	fclose(f);
	fprintf(stderr, "%s: the library said:\n%s", rcs_side, logged);
}

static void side(void *arg)
{
	const char *sock = getenv("CMD_SOCKET");
	struct rdma_event_channel *ch;
	struct rdma_addrinfo hints, *res = NULL;
	struct rdma_cm_id *id = NULL, *lst = NULL, *ep = NULL;
	struct rdma_cm_event *ev;
	struct sockaddr_in dst;
	int saved, r;
	FILE *f;

	(void)arg;
	setenv("CMD_RDMACM_DEBUG", "1", 1); /* errors: the default */
	/*
	 * connect(2) on a socket that is missing or not listening fails at
	 * once. The guard only turns a library that waits or retries for a
	 * daemon into a failure; it is generous (RCS_WAIT_MS per call)
	 * because a loaded machine or valgrind slows a call down, never to
	 * seconds. The channel is made inside it: it already opens the
	 * daemon's channel (the first call's set-up), and says so when it
	 * cannot, yet it works, for the kernel's devices.
	 */
	alarm((unsigned int)rcs_wait_ms / 1000);
	capture_start(&f, &saved);
	ch = rdma_create_event_channel();
	RCS_CHECK(ch, "rdma_create_event_channel: %s", strerror(errno));
	RCS_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	r = rdma_resolve_addr(id, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000);
	if (r == 0) {
		ev = rcs_next(ch);
		RCS_CHECK(ev->event == RDMA_CM_EVENT_ADDR_ERROR && ev->status,
			  "rdma_resolve_addr without a daemon: %s, status %d",
			  rdma_event_str(ev->event), ev->status);
		RCS_OK(rdma_ack_cm_event(ev));
	} else {
		RCS_CHECK(r == -1 && errno, "rdma_resolve_addr: %d", r);
	}
	RCS_OK(rdma_create_id(ch, &lst, NULL, RDMA_PS_TCP));
	RCS_CHECK(rdma_listen(lst, 8) == -1 && errno,
		  "rdma_listen without a daemon succeeded");

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	RCS_CHECK(rdma_getaddrinfo("127.0.2.1", "7471", &hints, &res) == 0,
		  "rdma_getaddrinfo: %s", strerror(errno));
	RCS_CHECK(rdma_create_ep(&ep, res, NULL, NULL) == -1 && errno,
		  "rdma_create_ep without a daemon succeeded");
	rdma_freeaddrinfo(res);
	capture_end(f, saved);
	alarm(0);

	RCS_CHECK(strstr(logged, sock) && strstr(logged, "cmd"),
		  "no log line names the daemon's socket %s", sock);
	RCS_OK(rdma_destroy_id(id));
	RCS_OK(rdma_destroy_id(lst));
	rcs_expect_empty(ch);
	rdma_destroy_event_channel(ch);
}

static void t_no_socket(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/nobody.sock", sim_fab.dir);
	rcs_run_one(side, path, NULL);
}

static struct sockaddr_un dead = { .sun_family = AF_UNIX };

static void t_dead_socket(void **state)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	(void)state;
	/* Bound, never listening: what a daemon that died leaves. */
	snprintf(dead.sun_path, sizeof(dead.sun_path), "%s/dead.sock",
		 sim_fab.dir);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&dead, sizeof(dead)), 0);
	close(fd);
	rcs_run_one(side, dead.sun_path, NULL);
}

/* Also after a failure, so that the fabric's directory can go. */
static int remove_dead(void **state)
{
	(void)state;
	unlink(dead.sun_path);
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-nodaemon", 35, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_no_socket),
		cmocka_unit_test_teardown(t_dead_socket, remove_dead),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
