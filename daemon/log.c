// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

/* CODE_FILE and CODE_LINE would all name this file: left out. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"

enum log_level log_level_now = LOG_LVL_INFO;
static log_sink_fn log_sink;
static void *log_sink_ctx;

/* Under systemd (log_setup_systemd): how lines reach the journal. */
static enum {
	LOG_OUT_PLAIN, /* stderr, as is */
	LOG_OUT_PREFIX, /* stderr, "<N>" first (sd-daemon(3)) */
	LOG_OUT_JOURNAL, /* sd_journal_sendv, with fields */
} log_out = LOG_OUT_PLAIN;

/* syslog(3) priorities, as journald and sd-daemon(3) number them. */
static const int log_prio[] = {
	[LOG_LVL_ERR] = 3,  [LOG_LVL_WARN] = 4,	 [LOG_LVL_NOTICE] = 5,
	[LOG_LVL_INFO] = 6, [LOG_LVL_DEBUG] = 7,
};

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

/* JOURNAL_STREAM is "DEV:INO" of the stream systemd connected (systemd.exec(5)). */
static bool log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!js || sscanf(js, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return false;
	if (fstat(2, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

bool log_setup_systemd(void)
{
	if (log_stderr_is_journal())
		log_out = LOG_OUT_JOURNAL;
	else if (getenv("JOURNAL_STREAM") || getenv("INVOCATION_ID"))
		log_out = LOG_OUT_PREFIX;
	else
		log_out = LOG_OUT_PLAIN;
	return log_out != LOG_OUT_PLAIN;
}

/* One journal entry: PRIORITY, MESSAGE, then the context's fields. */
static int log_journal(enum log_level level, const struct log_ctx *ctx,
		       const char *line)
{
	char f[7][96 + 512];
	struct iovec iov[7];
	int n = 0;

	snprintf(f[n++], sizeof(f[0]), "PRIORITY=%d", log_prio[level]);
	snprintf(f[n++], sizeof(f[0]), "MESSAGE=%s", line);
	if (ctx && ctx->has_comm) {
		snprintf(f[n++], sizeof(f[0]), "CMD_LOCAL_COMM_ID=%08x",
			 ctx->local_comm_id);
		snprintf(f[n++], sizeof(f[0]), "CMD_REMOTE_COMM_ID=%08x",
			 ctx->remote_comm_id);
	}
	if (ctx && ctx->client_pid > 0)
		snprintf(f[n++], sizeof(f[0]), "CMD_CLIENT_PID=%d",
			 ctx->client_pid);
	if (ctx && ctx->device)
		snprintf(f[n++], sizeof(f[0]), "CMD_DEVICE=%s", ctx->device);
	if (ctx && ctx->port)
		snprintf(f[n++], sizeof(f[0]), "CMD_PORT=%u", ctx->port);
	for (int i = 0; i < n; i++) {
		iov[i].iov_base = f[i];
		iov[i].iov_len = strlen(f[i]);
	}
	return sd_journal_sendv(iov, n);
}

static void log_vmsg(enum log_level level, const struct log_ctx *ctx,
		     const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_sink) {
		log_sink(log_sink_ctx, level, line);
		return;
	}
	switch (log_out) {
	case LOG_OUT_JOURNAL:
		if (!log_journal(level, ctx, line))
			return;
		/* The journal is not there (yet): the stream still is. */
		fprintf(stderr, "<%d>%s\n", log_prio[level], line);
		return;
	case LOG_OUT_PREFIX:
		fprintf(stderr, "<%d>%s\n", log_prio[level], line);
		return;
	case LOG_OUT_PLAIN:
		fprintf(stderr, "%s\n", line);
		return;
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level_now)
		return;
	va_start(ap, fmt);
	log_vmsg(level, NULL, fmt, ap);
	va_end(ap);
}

void log_ctx_msg(enum log_level level, const struct log_ctx *ctx,
		 const char *fmt, ...)
{
	va_list ap;

	if (level > log_level_now)
		return;
	va_start(ap, fmt);
	log_vmsg(level, ctx, fmt, ap);
	va_end(ap);
}
