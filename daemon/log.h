/* SPDX-License-Identifier: MIT */
/*
 * Levelled logging with one replaceable sink. The daemon points the sink at
 * syslog or stderr; tests silence it or capture lines to check them.
 */
#ifndef CMD_LOG_H
#define CMD_LOG_H

#include <stdarg.h>

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

#define log_err(...) log_at(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_at(LOG_LVL_WARN, __VA_ARGS__)
#define log_notice(...) log_at(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...) log_at(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
