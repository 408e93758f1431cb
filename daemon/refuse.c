/* SPDX-License-Identifier: MIT */
/* Why a request was refused (refuse.h). */
#include "refuse.h"

#include <stdarg.h>
#include <stdio.h>

#include "cmp.h"

static char why[CMP_WHY_MAX];
static int have;

int refuse(int err, const char *fmt, ...)
{
	va_list ap;

	if (!have) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		have = 1;
	}
	return err;
}

void refuse_clear(void)
{
	have = 0;
}

const char *refuse_why(void)
{
	return have ? why : NULL;
}
