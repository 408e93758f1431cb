// SPDX-License-Identifier: MIT
/*
 * The simulated fabric of the integration tests (see sim_harness.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <stdbool.h>
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
		snprintf(sim_fab.state[i], sizeof(sim_fab.state[i]),
			 "%s/%c.state", sim_fab.dir, 'a' + i);
		sim_fab.extra[i] = extra ? extra[i] : NULL;
		sim_fab.pid[i] = start_cmd(i, sim_fab.extra[i]);
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
		unlink(sim_fab.state[i]);
	}
	rc |= stop(sim_fab.hub_pid, "cmhub");
	sim_fab.hub_pid = 0;
	unlink(sim_fab.hub_sock);
	rmdir(sim_fab.dir);
	return rc;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The daemon's socket accepts a connection (it is serving). */
static bool serving(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (fd >= 0)
		close(fd);
	return ok;
}

int sim_daemon_restart(unsigned int i, int sig, double *gap_ms)
{
	double t0 = mono_ms();
	char what[16];
	int status;

	snprintf(what, sizeof(what), "cmd %c", 'a' + i);
	if (i >= sim_fab.n)
		return -1;
	if (sig == 0) {
		/* Not running (the test stopped it): start it. */
		sim_fab.pid[i] = start_cmd(i, sim_fab.extra[i]);
	} else if (sig == SIGUSR2) {
		/* Same pid, and the same listening socket (inherited by the
		 * exec): it never stops taking connections. */
		kill(sim_fab.pid[i], SIGUSR2);
	} else if (sig == SIGKILL) {
		kill(sim_fab.pid[i], SIGKILL);
		waitpid(sim_fab.pid[i], &status, 0);
		sim_fab.pid[i] = start_cmd(i, sim_fab.extra[i]);
	} else {
		kill(sim_fab.pid[i], sig);
		if (waitpid(sim_fab.pid[i], &status, 0) != sim_fab.pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr,
				"%s did not exit cleanly on signal %d\n", what,
				sig);
			sim_fab.pid[i] = 0;
			return -1;
		}
		sim_fab.pid[i] = start_cmd(i, sim_fab.extra[i]);
	}
	/* ... and for the new one to answer (sock_wait's 10 s and more:
	 * restoring many connections takes a while on a slow machine). */
	for (int k = 0; k < 60000 && !serving(sim_fab.sock[i]); k++) {
		if (waitpid(sim_fab.pid[i], &status, WNOHANG) ==
		    sim_fab.pid[i]) {
			fprintf(stderr, "%s died while starting\n", what);
			sim_fab.pid[i] = 0;
			return -1;
		}
		usleep(1000);
	}
	if (!serving(sim_fab.sock[i])) {
		fprintf(stderr, "%s does not serve after restart\n", what);
		return -1;
	}
	if (gap_ms)
		*gap_ms = mono_ms() - t0;
	return 0;
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

int sim_hub_ctl(const char *opts)
{
	const char *hub = getenv("CMHUB");
	char cmd[512];

	if (!hub || snprintf(cmd, sizeof(cmd), "%s --ctl %s %s >/dev/null", hub,
			     sim_fab.hub_sock, opts) >= (int)sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}
