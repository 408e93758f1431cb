// SPDX-License-Identifier: MIT
/*
 * The simulated fabric of the integration tests (see sim_harness.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_harness.h"
#include "sock_wait.h"

/* The common arguments of a daemon, and room for a test's own. */
#define SIM_COMMON_ARGS 11
#define SIM_EXTRA_MAX 16

struct sim_fabric sim_fab;

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static pid_t start_cmd(unsigned int i, const char *const *extra)
{
	char *level = getenv("CMD_LOG_LEVEL");
	char node[16];
	char *argv[SIM_COMMON_ARGS + SIM_EXTRA_MAX + 1] = {
		getenv("CMD"),
		"--sim",
		sim_fab.hub_sock,
		"--node",
		node,
		"--socket",
		sim_fab.sock[i],
		"--packet-life-time",
		"8",
		"--log-level",
		level ? level : "warn",
	};
	unsigned int argc = SIM_COMMON_ARGS;

	snprintf(node, sizeof(node), "%u", i + 1);
	for (; extra && *extra; extra++) {
		if (argc == SIM_COMMON_ARGS + SIM_EXTRA_MAX) {
			fprintf(stderr, "too many arguments for cmd %c\n",
				'a' + i);
			return -1;
		}
		argv[argc++] = (char *)*extra;
	}
	argv[argc] = NULL;
	return spawn(argv);
}

int sim_fabric_start(const char *tag, unsigned int seed, unsigned int n,
		     const char *const *const extra[])
{
	char *hub = getenv("CMHUB");
	char seed_s[16];
	char *argv[] = { hub, "--seed", seed_s, sim_fab.hub_sock, NULL };

	if (!hub || !getenv("CMD")) {
		fprintf(stderr, "CMHUB and CMD must name the programs\n");
		return -1;
	}
	if (n > SIM_MAX_DAEMONS) {
		fprintf(stderr, "at most %d daemons\n", SIM_MAX_DAEMONS);
		return -1;
	}
	memset(&sim_fab, 0, sizeof(sim_fab));
	snprintf(sim_fab.dir, sizeof(sim_fab.dir), "/tmp/cmd-%s-XXXXXX", tag);
	if (!mkdtemp(sim_fab.dir))
		return -1;
	snprintf(sim_fab.hub_sock, sizeof(sim_fab.hub_sock), "%s/hub",
		 sim_fab.dir);
	snprintf(seed_s, sizeof(seed_s), "%u", seed);
	sim_fab.hub_pid = spawn(argv);
	if (sock_wait(sim_fab.hub_sock, 0))
		goto fail;
	/* All daemons start before we wait for any: they start in parallel. */
	sim_fab.n = n;
	for (unsigned int i = 0; i < n; i++) {
		snprintf(sim_fab.sock[i], sizeof(sim_fab.sock[i]), "%s/%c.sock",
			 sim_fab.dir, 'a' + i);
		sim_fab.pid[i] = start_cmd(i, extra ? extra[i] : NULL);
	}
	for (unsigned int i = 0; i < n; i++)
		if (sock_wait(sim_fab.sock[i], 0))
			goto fail;
	return 0;
fail:
	sim_fabric_stop();
	return -1;
}

/* SIGTERM and wait; 0 when the program exited with status 0. */
static int stop(pid_t pid, const char *what)
{
	int status = 0, i;

	if (pid <= 0)
		return 0;
	kill(pid, SIGTERM);
	for (i = 0; i < 3000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	if (i == 3000) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fprintf(stderr, "%s (pid %d) did not stop on SIGTERM\n", what,
			(int)pid);
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	fprintf(stderr, "%s (pid %d) ended with %s %d after SIGTERM\n", what,
		(int)pid, WIFSIGNALED(status) ? "signal" : "exit status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return -1;
}

int sim_fabric_stop(void)
{
	int rc = 0;

	for (unsigned int i = 0; i < sim_fab.n; i++) {
		char what[16];

		snprintf(what, sizeof(what), "cmd %c", 'a' + i);
		rc |= stop(sim_fab.pid[i], what);
		sim_fab.pid[i] = 0;
		unlink(sim_fab.sock[i]);
	}
	rc |= stop(sim_fab.hub_pid, "cmhub");
	sim_fab.hub_pid = 0;
	unlink(sim_fab.hub_sock);
	rmdir(sim_fab.dir);
	return rc;
}

int sim_group_teardown(void **state)
{
	(void)state;
	if (sim_fabric_stop()) {
		fprintf(stderr, "a daemon or the hub did not exit cleanly "
				"(see above): failing\n");
		exit(1);
	}
	return 0;
}
