// SPDX-License-Identifier: MIT
/*
 * Errors that name the check that failed (issue 18, point 2): a refused
 * call returns its errno as before, and cmc_last_error() says why, whether
 * the library refused it (a value out of range: nothing was sent) or the
 * daemon did (its reply carries the reason, struct cmp_reply); the daemon
 * logs each refusal at debug with the same reason.
 *
 * Two daemons on the simulated fabric; daemon A logs at debug into a file
 * of the test's (its stderr), which the last test reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmclient.h"
#include "sim_client.h"
#include "sim_harness.h"

#define NODE_B_LID 33 /* node 2, port 1: see daemon/xport_sim.c */

static char log_path[128];
static struct cmc_channel *ch;

static int group_setup(void **state)
{
	static const char *const debug[] = { "--log-level", "debug", NULL };
	const char *const *const extra[] = { debug, NULL };
	int saved, fd, rc;

	(void)state;
	/* Daemon A's stderr is this file: the daemons inherit fd 2. */
	snprintf(log_path, sizeof(log_path), "/tmp/cmd-errors-%d.log",
		 (int)getpid());
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	saved = dup(2);
	if (fd < 0 || saved < 0)
		return -1;
	dup2(fd, 2);
	rc = sim_fabric_start("errors", 5, 2, extra);
	dup2(saved, 2);
	close(saved);
	close(fd);
	if (rc)
		return -1;
	ch = sim_open_ch(sim_fab.sock[0]);
	return 0;
}

static int group_teardown(void **state)
{
	cmc_close(ch);
	unlink(log_path);
	return sim_group_teardown(state);
}

/* The call failed with err, and cmc_last_error() contains want. */
static void expect_why(int rc, int err, const char *want)
{
	const char *why = cmc_last_error();

	if (rc != err || !strstr(why, want))
		fail_msg("got %d \"%s\", want %d with \"%s\"", rc, why, err,
			 want);
}

static struct cmc_conn_param conn_to_b(uint32_t qpn)
{
	struct cmc_conn_param p = {
		.service_id = 0x5151,
		.dst = { .family = CMC_AF_LID, .lid = NODE_B_LID },
		.qp_num = qpn,
		.retry_count = 7,
	};

	return p;
}

/* The library's own checks: nothing reaches the daemon. */
static void test_library_checks(void **state)
{
	static const uint8_t big[CMC_REQ_PRIVATE_DATA_SIZE + 1];
	struct cmc_conn_param p = conn_to_b(0);
	struct cmc_id *id;

	(void)state;
	assert_int_equal(cmc_create_id(ch, NULL, CMC_QP_RC, &id), 0);
	expect_why(cmc_connect(id, &p), -EINVAL,
		   "CONNECT local QPN out of range");
	p = conn_to_b(100);
	p.private_data = big;
	p.private_data_len = sizeof(big);
	expect_why(cmc_connect(id, &p), -EINVAL,
		   "private data of 93 bytes, at most 92");
	p = conn_to_b(100);
	p.reserved[1] = 1;
	expect_why(cmc_connect(id, &p), -EINVAL,
		   "struct cmc_conn_param's reserved members not zero");
	expect_why(cmc_listen(id, 0x10001, 0xffff, 4, NULL), -EINVAL,
		   "LISTEN service id has bits outside its mask");
	expect_why(cmc_reject(id, 99, NULL, 0, NULL, 0), -EINVAL,
		   "REJECT reason out of range");
	/* A success leaves no reason behind. */
	assert_int_equal(cmc_set_context(id, &p), 0);
	assert_string_equal(cmc_last_error(), "");
	assert_int_equal(cmc_destroy_id(id), 0);
}

/* The daemon's checks: the reason comes in its reply. */
static void test_daemon_checks(void **state)
{
	struct cmc_id *id, *l1, *l2;

	(void)state;
	assert_int_equal(cmc_create_id(ch, NULL, CMC_QP_RC, &id), 0);
	expect_why(cmc_rtu(id, NULL, 0), -EINVAL,
		   "RTU not allowed in state IDLE (comm id 0x");
	expect_why(cmc_disconnect(id, NULL, 0), -EINVAL,
		   "DISCONNECT not allowed in state IDLE");

	assert_int_equal(cmc_create_id(ch, NULL, CMC_QP_RC, &l1), 0);
	assert_int_equal(cmc_create_id(ch, NULL, CMC_QP_RC, &l2), 0);
	assert_int_equal(cmc_listen(l1, 0x7700, ~0ULL, 4, NULL), 0);
	expect_why(cmc_listen(l2, 0x7700, ~0ULL, 4, NULL), -EADDRINUSE,
		   "service id 0x0000000000007700 (mask 0xffffffffffffffff) "
		   "is claimed by another listener");
	/* The daemon opens the capture file itself. */
	expect_why(cmc_capture(ch, "/nonexistent-dir/x.pcap"), -ENOENT,
		   "capture: cannot open /nonexistent-dir/x.pcap: No such "
		   "file or directory");
	expect_why(cmc_capture(ch, "relative.pcap"), -EINVAL,
		   "capture: relative.pcap is not an absolute path");
	assert_int_equal(cmc_destroy_id(l2), 0);
	assert_int_equal(cmc_destroy_id(l1), 0);
	assert_int_equal(cmc_destroy_id(id), 0);
}

/* cmc_open() says which socket it could not reach, and why. */
static void test_open(void **state)
{
	struct cmc_channel *c;

	(void)state;
	expect_why(cmc_open("/nonexistent-dir/cmd.sock", "t", &c), -ENOENT,
		   "cannot reach cmd at /nonexistent-dir/cmd.sock: No such "
		   "file or directory");
	assert_null(c);
}

/* Daemon A logged each refusal at debug, with its reason. */
static void test_debug_log(void **state)
{
	static const char *const want[] = {
		"RTU of id ",
		"refused: Invalid argument (RTU not allowed in state IDLE",
		"LISTEN of id ",
		"refused: Address already in use (service id "
		"0x0000000000007700",
		"CAPTURE refused: No such file or directory (capture: cannot "
		"open /nonexistent-dir/x.pcap",
	};
	char buf[1 << 16];
	size_t n;
	FILE *f;

	(void)state;
	f = fopen(log_path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(buf, want[i]))
			fail_msg("daemon A's log has no \"%s\"", want[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_checks),
		cmocka_unit_test(test_daemon_checks),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_debug_log),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
