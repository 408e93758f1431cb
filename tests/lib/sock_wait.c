// SPDX-License-Identifier: MIT
#include "sock_wait.h"

#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int sock_wait(const char *path, pid_t pid)
{
	for (int i = 0; i < 3000; i++) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int ok;

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		ok = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
		close(fd);
		if (ok)
			return 0;
		if (pid && waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(10000);
	}
	return -1;
}
