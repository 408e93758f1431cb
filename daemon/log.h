/* SPDX-License-Identifier: MIT */
/*
 * Levelled logging with one replaceable sink. By default lines go to
 * stderr; under systemd (log_setup_systemd) to the journal with structured
 * fields, or to stderr with sd-daemon(3) "<N>" priority prefixes. Tests
 * silence the sink or capture lines to check them.
 */
#ifndef CMD_LOG_H
#define CMD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

enum log_level {
	LOG_LVL_ERR,
	LOG_LVL_WARN,
	LOG_LVL_NOTICE, /* abnormal but expected: REJs, timeouts, port down */
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

typedef void (*log_sink_fn)(void *ctx, enum log_level level, const char *line);

/* Messages above 'level' are dropped before they are formatted. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* NULL restores the default sink (stderr). */
void log_set_sink(log_sink_fn sink, void *ctx);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * What a message is about, for the journal's structured fields
 * (CMD_LOCAL_COMM_ID and CMD_REMOTE_COMM_ID in hex, CMD_CLIENT_PID,
 * CMD_DEVICE, CMD_PORT): each is sent only when set (has_comm, a pid
 * above 0, a device name, a port above 0). Other sinks see the line only.
 */
struct log_ctx {
	bool has_comm;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	int client_pid;
	const char *device;
	unsigned int port;
};

void log_ctx_msg(enum log_level level, const struct log_ctx *ctx,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Under systemd: when stderr is the journal's stream (JOURNAL_STREAM
 * names its device and inode), messages go to the journal itself with
 * PRIORITY, MESSAGE and the log_ctx fields; otherwise, when
 * JOURNAL_STREAM or INVOCATION_ID is set, to stderr with a "<N>" prefix.
 * Returns true when either applies. Call it first thing in main(), so
 * that no line goes out without its priority.
 */
bool log_setup_systemd(void);

/*
 * The level now, read by the macros below so that a dropped message costs
 * one compare: its arguments (state names, formatted ids) are not even
 * evaluated. Set it with log_set_level() only.
 */
extern enum log_level log_level_now;

#define log_at(level, ...)                                                     \
	do {                                                                   \
		if ((level) <= log_level_now)                                  \
			log_msg((level), __VA_ARGS__);                         \
	} while (0)

#define log_ctx_at(level, ctx, ...)                                            \
	do {                                                                   \
		if ((level) <= log_level_now)                                  \
			log_ctx_msg((level), (ctx), __VA_ARGS__);              \
	} while (0)

#define log_err(...) log_at(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_at(LOG_LVL_WARN, __VA_ARGS__)
#define log_notice(...) log_at(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...) log_at(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
