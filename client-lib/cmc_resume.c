// SPDX-License-Identifier: MIT
/*
 * libcmclient, the session: how a channel outlives a restart of the
 * daemon (cmp.h, "Restarts"). At open, SESSION gives a token and the
 * window a successor keeps the session for. A restarting daemon shuts
 * the reading side of our socket, answers what it had read, writes what
 * the socket takes and closes it; then the link goes
 *   UP -> DRAIN    a send failed: read the socket to its EOF, send nothing
 *      -> WAIT     no socket: a timer wakes the application for each try
 *      -> RESUME   a new connection: HELLO and RESUME sent on it
 *      -> UP       the unsent requests go out, what comes is read as ever
 * and gives up (the channel dies with -ECONNRESET, as without a session)
 * when the successor refuses the token or the window passes. What the
 * successor sends after its RESUME reply is what its predecessor could
 * not write, replies in request order first among them, so the FIFO of
 * requests awaiting replies (cmc_io.c) carries over untouched, and so do
 * the ids and the events the application holds.
 *
 * The application's fd is an epoll fd over the socket and the timer, so
 * it stays the same across the gap and wakes the application for every
 * step; each library call takes the step that is due.
 *
 * The handshake's replies are not the FIFO's: they come first on the new
 * socket, so they are read one datagram at a time, leaving whatever
 * follows them for cmc_rx().
 */
#include "cmc_int.h"

/* The first try soon after the old socket's end (the successor may be up
 * already), then doubling: a restart takes some hundreds of ms. */
#define CMC_RETRY_MIN_MS 10
#define CMC_RETRY_MAX_MS 200
/* The successor counts resume_ms from when it took over, which is later
 * than the loss we count from: allow for the hand-over itself. */
#define CMC_RESUME_MARGIN_MS 1000

static int64_t cmc_window_end(const struct cmc_channel *ch)
{
	return ch->lost_at + (int64_t)ch->resume_ms + CMC_RESUME_MARGIN_MS;
}

/*
 * Arm the timer for the absolute time at (ms, CLOCK_MONOTONIC, a past
 * one fires at once), or disarm it (at < 0). Setting it also forgets an
 * expiry not read, which is what lets the application's fd go quiet.
 */
static void cmc_timer_at(struct cmc_channel *ch, int64_t at)
{
	struct itimerspec its = { 0 };

	if (at >= 0) {
		its.it_value.tv_sec = at / 1000;
		its.it_value.tv_nsec = (at % 1000) * 1000000;
		/* All zero would disarm it. */
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(ch->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Leave the socket (the old one, or a new one that failed). */
static void cmc_link_close(struct cmc_channel *ch)
{
	if (ch->sock < 0)
		return;
	epoll_ctl(ch->epfd, EPOLL_CTL_DEL, ch->sock, NULL);
	close(ch->sock);
	ch->sock = -1;
}

/*
 * The session is lost: the channel dies with err. Its timer is left
 * fired for good, so that an application polling its fd wakes to learn
 * it, as it would from a dead socket.
 */
static int cmc_link_fail(struct cmc_channel *ch, int err)
{
	cmc_link_close(ch);
	cmc_timer_at(ch, 0);
	return cmc_fail(ch, err);
}

/* Not up yet: the next try after the backoff (or the window's end). */
static int cmc_link_later(struct cmc_channel *ch, int64_t now)
{
	int64_t end = cmc_window_end(ch);

	ch->link = CMC_LINK_WAIT;
	ch->next_try = now + ch->backoff_ms;
	ch->backoff_ms *= 2;
	if (ch->backoff_ms > CMC_RETRY_MAX_MS)
		ch->backoff_ms = CMC_RETRY_MAX_MS;
	cmc_timer_at(ch, ch->next_try < end ? ch->next_try : end);
	return 0;
}

/* Send one handshake message on the new socket. */
static int cmc_link_send(int fd, const struct cmp_msg *m)
{
	uint8_t buf[CMP_MSG_MAX];
	ssize_t len = cmp_encode(m, buf, sizeof(buf));

	if (len < 0)
		return -EINVAL;
	if (send(fd, buf, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) != len)
		return -errno;
	return 0;
}

/*
 * WAIT: connect again when it is due, and send HELLO then RESUME at once
 * (the session's version only: its ids and what was queued for it speak
 * that one). A daemon not up yet refuses the connection (or its socket is
 * not there); with a socket held by systemd the connection succeeds and
 * its HELLO waits until the successor accepts it.
 */
static int cmc_link_try(struct cmc_channel *ch)
{
	struct epoll_event ee = { .events = EPOLLIN };
	int64_t now = cmc_now_ms();
	struct cmp_msg m;
	int fd, ret;

	if (now >= cmc_window_end(ch))
		return cmc_link_fail(ch, -ECONNRESET);
	if (now < ch->next_try) {
		int64_t end = cmc_window_end(ch);

		cmc_timer_at(ch, ch->next_try < end ? ch->next_try : end);
		return 0;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return cmc_link_later(ch, now);
	if (connect(fd, (const struct sockaddr *)&ch->peer, ch->peer_len)) {
		int err = errno;

		close(fd);
		if (err == ECONNREFUSED || err == ENOENT || err == EAGAIN ||
		    err == EINTR)
			return cmc_link_later(ch, now);
		return cmc_link_fail(ch, -ECONNRESET);
	}
	ch->hello_seq = cmc_next_seq(ch);
	cmp_msg_init(&m, CMP_TYPE_HELLO, ch->hello_seq);
	m.hdr.version = CMP_VERSION_HELLO;
	m.hello.min_version = m.hello.max_version = ch->version;
	memcpy(m.hello.name, ch->name, sizeof(m.hello.name));
	ret = cmc_link_send(fd, &m);
	if (!ret) {
		ch->resume_seq = cmc_next_seq(ch);
		cmp_msg_init(&m, CMP_TYPE_RESUME, ch->resume_seq);
		m.hdr.version = ch->version;
		memcpy(m.resume.token, ch->token, sizeof(m.resume.token));
		ret = cmc_link_send(fd, &m);
	}
	/* Closed on us at once: whoever that was, not the successor yet. */
	if (ret) {
		close(fd);
		return cmc_link_later(ch, now);
	}
	ee.data.fd = fd;
	if (epoll_ctl(ch->epfd, EPOLL_CTL_ADD, fd, &ee)) {
		close(fd);
		return cmc_link_fail(ch, -ECONNRESET);
	}
	ch->sock = fd;
	ch->link = CMC_LINK_RESUME;
	ch->hello_done = false;
	/* Now the socket wakes the application; the timer only for the
	 * window's end. */
	cmc_timer_at(ch, cmc_window_end(ch));
	return 0;
}

/* Take a SESSION reply's token, or have no session (r NULL). */
static void cmc_session_take(struct cmc_channel *ch,
			     const struct cmp_session_reply *r)
{
	static const uint8_t zero[CMP_TOKEN_SIZE];

	/* resume_ms 0: the daemon hands nothing over. A zero token is one
	 * RESUME cannot carry. */
	if (!r || !r->resume_ms || !memcmp(r->token, zero, sizeof(zero))) {
		ch->resume_ms = 0;
		return;
	}
	memcpy(ch->token, r->token, sizeof(ch->token));
	ch->resume_ms = r->resume_ms;
}

/*
 * Resumed: the successor has the session. Ask it for the token and window
 * of its own restart (its reply is cmc_on_session()'s), and send what the
 * old daemon never saw, then that. Returns 1: progress.
 */
static int cmc_link_up(struct cmc_channel *ch)
{
	struct cmp_msg m;

	ch->link = CMC_LINK_UP;
	ch->resumes++;
	cmc_timer_at(ch, -1);
	cmp_msg_init(&m, CMP_TYPE_SESSION, cmc_next_seq(ch));
	m.hdr.version = ch->version;
	/* Without memory for it, the next restart is the channel's end. */
	if (cmc_pend_reserve(ch) || cmc_out_add(ch, &m)) {
		ch->resume_ms = 0;
	} else {
		cmc_pend_push(ch, m.hdr.seq, CMP_TYPE_SESSION, NULL);
		ch->pend[(ch->phead + ch->npend - 1) % ch->pcap].own = true;
	}
	cmc_out_send(ch, 0, 0);
	return 1;
}

/*
 * While the link is down, the step that is due: a try (WAIT), or reading
 * the handshake's replies (RESUME). Returns 1 when the session is back
 * (read on), 0 when nothing more is to be done now, or the channel's
 * error.
 */
int cmc_link_step(struct cmc_channel *ch)
{
	if (ch->err)
		return ch->err;
	if (ch->link == CMC_LINK_WAIT)
		return cmc_link_try(ch);
	if (ch->link != CMC_LINK_RESUME)
		return 0;
	for (;;) {
		const struct cmp_msg *r = &ch->rx;
		ssize_t n = recv(ch->sock, ch->rbuf[0], sizeof(ch->rbuf[0]),
				 MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
			      errno == EINTR)) {
			if (cmc_now_ms() >= cmc_window_end(ch))
				return cmc_link_fail(ch, -ECONNRESET);
			return 0;
		}
		/* Closed before it answered: not the successor yet (a
		 * listener about to be handed over, say). */
		if (n <= 0) {
			cmc_link_close(ch);
			return cmc_link_later(ch, cmc_now_ms());
		}
		if (n > CMP_MSG_MAX ||
		    cmp_decode(ch->rbuf[0], (size_t)n, &ch->rx, NULL))
			return cmc_link_fail(ch, -EPROTO);
		if (!ch->hello_done) {
			if (r->hdr.type != CMP_TYPE_HELLO_REPLY ||
			    r->hdr.seq != ch->hello_seq)
				return cmc_link_fail(ch, -EPROTO);
			/* Not our version: it cannot be our session's. */
			if (r->reply.status ||
			    r->hello_reply.version != ch->version)
				return cmc_link_fail(ch, -ECONNRESET);
			cmc_daemon_info_from_cmp(&ch->dinfo, &r->hello_reply);
			ch->hello_done = true;
			continue;
		}
		if (r->hdr.type != CMP_TYPE_RESUME_REPLY ||
		    r->hdr.seq != ch->resume_seq ||
		    r->hdr.version != ch->version)
			return cmc_link_fail(ch, -EPROTO);
		/* -ENOENT (started clean, expired), -EPERM: it is gone. */
		if (r->reply.status)
			return cmc_link_fail(ch, -ECONNRESET);
		return cmc_link_up(ch);
	}
}

/*
 * The socket failed (how): without a session the channel dies, as it
 * always did; with one, the socket is read to its end (DRAIN), then the
 * successor is tried (WAIT). Returns 0 or the channel's error.
 */
int cmc_lost(struct cmc_channel *ch, enum cmc_loss how)
{
	if (ch->err)
		return ch->err;
	if (!ch->resume_ms)
		return cmc_fail(ch, -ECONNRESET);
	if (ch->link == CMC_LINK_UP) {
		ch->link = CMC_LINK_DRAIN;
		ch->lost_at = cmc_now_ms();
		ch->backoff_ms = CMC_RETRY_MIN_MS;
		ch->peer_reset = false;
		/* The window bounds the drain too (cmc_drain_check()). */
		cmc_timer_at(ch, cmc_window_end(ch));
	}
	if (ch->link != CMC_LINK_DRAIN)
		return 0;
	/* The kernel reports a reset once, before the data still queued;
	 * a second one would be the end. */
	if (how == CMC_LOST_RESET && !ch->peer_reset) {
		ch->peer_reset = true;
		return 0;
	}
	if (how == CMC_LOST_SEND)
		return 0;
	cmc_link_close(ch);
	ch->link = CMC_LINK_WAIT;
	ch->next_try = cmc_now_ms();
	return cmc_link_try(ch);
}

/*
 * DRAIN past the window's end: a daemon that shut our socket's reading
 * side and never closed it is as gone as one that never comes back. One
 * that closed it (POLLHUP) left data to read first.
 */
void cmc_drain_check(struct cmc_channel *ch)
{
	struct pollfd p = { .fd = ch->sock, .events = POLLIN };

	if (cmc_now_ms() < cmc_window_end(ch))
		return;
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)) {
		cmc_timer_at(ch, -1);
		return;
	}
	cmc_link_fail(ch, -ECONNRESET);
}

/* The reply to the SESSION of cmc_link_up() (cmc_on_reply()). */
int cmc_on_session(struct cmc_channel *ch)
{
	cmc_session_take(ch,
			 ch->rx.reply.status ? NULL : &ch->rx.session_reply);
	return 0;
}

/*
 * At open, after HELLO: ask for the session, when the library knows
 * where to find the daemon again. A daemon that has none to give (or
 * refuses) leaves the channel without: only the channel's own death is
 * an error here.
 */
int cmc_session_open(struct cmc_channel *ch)
{
	struct epoll_event ee = { .events = EPOLLIN };
	int ret;

	if (!ch->peer_len)
		return 0;
	cmc_req(ch, CMP_TYPE_SESSION);
	ret = cmc_request(ch);
	if (ch->err)
		return ch->err;
	cmc_session_take(ch, ret ? NULL : &ch->reply.session_reply);
	if (!ch->resume_ms)
		return 0;
	ch->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ee.data.fd = ch->tfd;
	if (ch->tfd < 0 || epoll_ctl(ch->epfd, EPOLL_CTL_ADD, ch->tfd, &ee)) {
		/* No timer, no waking the application in the gap: no
		 * session. */
		if (ch->tfd >= 0)
			close(ch->tfd);
		ch->tfd = -1;
		ch->resume_ms = 0;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Session API */

CMC_EXPORT unsigned int cmc_resume_window(const struct cmc_channel *ch)
{
	return ch->resume_ms;
}

CMC_EXPORT unsigned int cmc_resume_count(const struct cmc_channel *ch)
{
	return ch->resumes;
}
