// SPDX-License-Identifier: MIT
/*
 * cmd's librdmacm: ids on devices the kernel's CM owns go to the system's
 * librdmacm, loaded by path (dlopen, RTLD_DEEPBIND so that its own calls
 * stay inside it).
 */
#include "rc_int.h"

#include <poll.h>

bool rc_kern_available(void)
{
	return false;
}

void rc_kern_poll_fds(struct pollfd *fds, unsigned int *n, unsigned int max)
{
	(void)fds, (void)n, (void)max;
}

void rc_kern_drain(void)
{
}

void rc_kern_chan_free(struct rc_chan *c)
{
	(void)c;
}
