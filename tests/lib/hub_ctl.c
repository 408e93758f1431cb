// SPDX-License-Identifier: MIT
#include "hub_ctl.h"

#include <sys/wait.h>
#include <unistd.h>

int hub_ctl_run(const char *hub, const char *sock, char *const args[],
		char *out, size_t len)
{
	char *argv[16] = { (char *)hub, "--ctl", (char *)sock };
	int pfd[2], status;
	size_t n = 0;
	pid_t pid;
	ssize_t r;

	for (int i = 0; args[i]; i++) {
		if (i >= 12)
			return -1;
		argv[3 + i] = args[i];
	}
	if (!hub || !len || pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execv(hub, argv);
		_exit(127);
	}
	close(pfd[1]);
	while (n + 1 < len && (r = read(pfd[0], out + n, len - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
