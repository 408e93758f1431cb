// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "log.h"

enum log_level log_level_now = LOG_LVL_INFO;
static log_sink_fn log_sink;
static void *log_sink_ctx;

void log_set_level(enum log_level level)
{
	log_level_now = level;
}

enum log_level log_get_level(void)
{
	return log_level_now;
}

void log_set_sink(log_sink_fn sink, void *ctx)
{
	log_sink = sink;
	log_sink_ctx = ctx;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (level > log_level_now)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_sink)
		log_sink(log_sink_ctx, level, line);
	else
		fprintf(stderr, "%s\n", line);
}
