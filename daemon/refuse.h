/* SPDX-License-Identifier: MIT */
/*
 * Why a request was refused, for its reply and the debug log.
 *
 * A check anywhere below a client's request (the API, the engine, the
 * listener table) that refuses it returns refuse(-EINVAL, "...") instead
 * of a bare -EINVAL: the first reason given while the request runs is the
 * one its reply carries (struct cmp_reply) and the daemon logs at debug.
 * The daemon runs one request at a time, so one buffer serves; the server
 * clears it before each request (refuse_clear()) and takes it after
 * (refuse_why()).
 */
#ifndef CMD_REFUSE_H
#define CMD_REFUSE_H

/* Record the reason, unless one is already recorded; returns err. */
int refuse(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void refuse_clear(void);

/* The reason recorded since refuse_clear(), or NULL. */
const char *refuse_why(void);

#endif
