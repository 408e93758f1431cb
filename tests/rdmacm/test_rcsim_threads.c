// SPDX-License-Identifier: MIT
/*
 * Threads, as rping uses librdmacm: a CM thread sits in a blocking
 * rdma_get_cm_event() and hands the events to the main thread, which
 * makes every call. Before each call the main thread waits until the CM
 * thread is really asleep in the kernel (/proc/self/task/TID/syscall:
 * poll or ppoll), so each call runs while the other thread is blocked:
 * it must neither wait for that thread (a lock held across the sleep)
 * nor leave it asleep when it queues an event (the address and route
 * events are queued by the calls themselves, the others by the
 * library's reader thread). Both sides, client and server.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rcsim.h"

#define MAX_EVENTS 16

struct cm_thread {
	struct rdma_event_channel *ch;
	pthread_t thread;
	pid_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int n, taken; /* events seen; taken by the main thread */
	enum rdma_cm_event_type type[MAX_EVENTS];
	int status[MAX_EVENTS];
	struct rdma_cm_id *id[MAX_EVENTS];
};

/* The CM thread: every event, recorded and acked, until TIMEWAIT_EXIT. */
static void *cm_main(void *arg)
{
	struct cm_thread *t = arg;
	bool done = false;

	pthread_mutex_lock(&t->mu);
	t->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	while (!done) {
		struct rdma_cm_event *ev;

		RCS_OK(rdma_get_cm_event(t->ch, &ev));
		pthread_mutex_lock(&t->mu);
		RCS_CHECK(t->n < MAX_EVENTS, "too many events");
		t->type[t->n] = ev->event;
		t->status[t->n] = ev->status;
		t->id[t->n] = ev->id;
		t->n++;
		done = ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT;
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
		RCS_OK(rdma_ack_cm_event(ev));
	}
	return NULL;
}

static void cm_start(struct cm_thread *t)
{
	memset(t, 0, sizeof(*t));
	t->ch = rdma_create_event_channel();
	RCS_CHECK(t->ch, "rdma_create_event_channel: %s", strerror(errno));
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	RCS_CHECK(!pthread_create(&t->thread, NULL, cm_main, t),
		  "pthread_create");
}

/* The syscall the CM thread is in, or -1 while it runs. */
static long cm_syscall(const struct cm_thread *t)
{
	char path[64], buf[256];
	FILE *f;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)t->tid);
	f = fopen(path, "r");
	RCS_CHECK(f, "%s: %s", path, strerror(errno));
	if (fgets(buf, sizeof(buf), f) && strncmp(buf, "running", 7))
		nr = strtol(buf, NULL, 10);
	fclose(f);
	return nr;
}

/* Wait until the CM thread sleeps in poll()/ppoll(): inside
 * rdma_get_cm_event, the only place it polls. */
static void cm_wait_blocked(struct cm_thread *t)
{
	long nr = -1;

	pthread_mutex_lock(&t->mu);
	while (!t->tid)
		pthread_cond_wait(&t->cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
	for (int i = 0; i < rcs_wait_ms; i++) {
		nr = cm_syscall(t);
#ifdef SYS_poll
		if (nr == SYS_poll)
			return;
#endif
		if (nr == SYS_ppoll)
			return;
		usleep(1000);
	}
	rcs_fail(__FILE__, __LINE__,
		 "the CM thread is not asleep in rdma_get_cm_event (syscall "
		 "%ld)",
		 nr);
}

/* The CM thread's next event must be type, with status 0; its id. */
static struct rdma_cm_id *cm_expect(struct cm_thread *t,
				    enum rdma_cm_event_type type)
{
	struct timespec end;
	struct rdma_cm_id *id;
	unsigned int k;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += rcs_wait_ms / 1000;
	pthread_mutex_lock(&t->mu);
	while (t->n == t->taken)
		RCS_CHECK(pthread_cond_timedwait(&t->cv, &t->mu, &end) == 0,
			  "no %s within %d ms", rdma_event_str(type),
			  rcs_wait_ms);
	k = t->taken++;
	pthread_mutex_unlock(&t->mu);
	RCS_CHECK(t->type[k] == type && !t->status[k],
		  "got %s (status %d), expected %s", rdma_event_str(t->type[k]),
		  t->status[k], rdma_event_str(type));
	id = t->id[k];
	return id;
}

/* The CM thread is done (it ends on TIMEWAIT_EXIT); node: the peer's. */
static void cm_end(struct cm_thread *t, unsigned int node)
{
	RCS_CHECK(!pthread_join(t->thread, NULL), "pthread_join");
	rcs_quiet(t->ch, node);
	rdma_destroy_event_channel(t->ch);
}

/* ---------------------------------------------------------------- */

static void server(void *arg)
{
	struct cm_thread t;
	struct rdma_cm_id *lst = NULL, *id;
	struct sockaddr_in sin;

	(void)arg;
	cm_start(&t);
	cm_wait_blocked(&t);
	RCS_OK(rdma_create_id(t.ch, &lst, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_bind_addr(lst, rcs_addr(&sin, 2, RCS_PORT)));
	RCS_OK(rdma_listen(lst, 8));
	rcs_tell("listening");
	id = cm_expect(&t, RDMA_CM_EVENT_CONNECT_REQUEST);
	cm_wait_blocked(&t);
	rcs_accept(id, NULL, 0);
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_ESTABLISHED) == id, "whose?");
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_DISCONNECTED) == id, "whose?");
	cm_wait_blocked(&t);
	RCS_OK(rdma_disconnect(id));
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_TIMEWAIT_EXIT) == id, "whose?");
	RCS_OK(rdma_destroy_id(id));
	RCS_OK(rdma_destroy_id(lst));
	cm_end(&t, 1);
}

static void client(void *arg)
{
	struct cm_thread t;
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in dst;

	(void)arg;
	cm_start(&t);
	rcs_hear("listening");
	cm_wait_blocked(&t);
	RCS_OK(rdma_create_id(t.ch, &id, NULL, RDMA_PS_TCP));
	RCS_OK(rdma_resolve_addr(id, NULL, rcs_addr(&dst, 2, RCS_PORT), 2000));
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_ADDR_RESOLVED) == id, "whose?");
	cm_wait_blocked(&t);
	RCS_OK(rdma_resolve_route(id, 2000));
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_ROUTE_RESOLVED) == id, "whose?");
	cm_wait_blocked(&t);
	rcs_connect(id, NULL, 0);
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_CONNECT_RESPONSE) == id,
		  "whose?");
	cm_wait_blocked(&t);
	RCS_OK(rdma_establish(id));
	RCS_OK(rdma_disconnect(id));
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_DISCONNECTED) == id, "whose?");
	RCS_CHECK(cm_expect(&t, RDMA_CM_EVENT_TIMEWAIT_EXIT) == id, "whose?");
	RCS_OK(rdma_destroy_id(id));
	cm_end(&t, 2);
}

static void t_cm_thread(void **state)
{
	(void)state;
	rcs_run(server, client, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	return rcs_setup("rc-threads", 38, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_cm_thread),
	};

	return cmocka_run_group_tests(tests, group_setup, rcs_teardown);
}
