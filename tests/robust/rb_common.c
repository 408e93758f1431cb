// SPDX-License-Identifier: MIT
/* Helpers of the robustness tests; see rb_common.h. */
#include "rb_common.h"

#include "cm_mad.h"
#include "sim_proto.h"
#include "sock_wait.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct rb_fabric rb_fab;

double rb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

unsigned long rb_env_ulong(const char *name, unsigned long def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "%s: '%s' is not a number, using %lu\n", name,
			v, def);
		return def;
	}
	return n;
}

void rb_dump_logs(void)
{
	for (unsigned int i = 0; i < rb_fab.n; i++) {
		char cmd[300];

		fprintf(stderr, "--- %s (tail)\n", rb_fab.d[i].log);
		snprintf(cmd, sizeof(cmd), "tail -n 15 %s >&2",
			 rb_fab.d[i].log);
		if (system(cmd) < 0)
			perror("system");
	}
}

void rb_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	rb_dump_logs();
	rb_fabric_stop();
	exit(1);
}

static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		FILE *f = log ? freopen(log, "w", stderr) : NULL;

		(void)f;
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

void rb_fabric_start(const char *tag, uint64_t seed)
{
	char *hub = getenv("CMHUB");
	char seed_s[32];
	char log[128];

	if (!hub || !getenv("CMD")) {
		fprintf(stderr, "CMHUB and CMD must name the programs\n");
		exit(2);
	}
	memset(&rb_fab, 0, sizeof(rb_fab));
	snprintf(rb_fab.dir, sizeof(rb_fab.dir), "/tmp/cmd-%s-XXXXXX", tag);
	if (!mkdtemp(rb_fab.dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(rb_fab.hub_sock, sizeof(rb_fab.hub_sock), "%s/hub",
		 rb_fab.dir);
	snprintf(log, sizeof(log), "%s/hub.log", rb_fab.dir);
	snprintf(seed_s, sizeof(seed_s), "%llu", (unsigned long long)seed);
	{
		char *argv[] = { hub, "--seed", seed_s, rb_fab.hub_sock, NULL };

		rb_fab.hub_pid = spawn(argv, log);
	}
	CHECK(sock_wait(rb_fab.hub_sock, rb_fab.hub_pid) == 0,
	      "cmhub did not come up");
}

unsigned int rb_daemon_start(unsigned int node, const char *const *extra)
{
	struct rb_daemon *d = &rb_fab.d[rb_fab.n];
	char *argv[40];
	char node_s[16], dir[sizeof(rb_fab.dir)];
	unsigned int a = 0;
	const char *lvl = getenv("CMD_LOG_LEVEL");

	CHECK(rb_fab.n < RB_MAX_DAEMONS, "too many daemons");
	d->node = node;
	snprintf(node_s, sizeof(node_s), "%u", node);
	snprintf(dir, sizeof(dir), "%s", rb_fab.dir);
	snprintf(d->sock, sizeof(d->sock), "%s/cmd%u.sock", dir, node);
	snprintf(d->log, sizeof(d->log), "%s/cmd%u.log", dir, node);
	argv[a++] = getenv("CMD");
	argv[a++] = "--sim";
	argv[a++] = rb_fab.hub_sock;
	argv[a++] = "--node";
	argv[a++] = node_s;
	argv[a++] = "--socket";
	argv[a++] = d->sock;
	argv[a++] = "--log-level";
	argv[a++] = (char *)(lvl ? lvl : "warn");
	for (unsigned int i = 0; extra && extra[i] && a < 38; i++)
		argv[a++] = (char *)extra[i];
	argv[a] = NULL;
	d->pid = spawn(argv, d->log);
	rb_fab.n++;
	CHECK(sock_wait(d->sock, d->pid) == 0, "cmd on node %u did not come up",
	      node);
	return rb_fab.n - 1;
}

void rb_pair_start(const char *tag, uint64_t seed, const char *const *extra_a,
		   const char *const *extra_b, struct cmc_channel **mon_a,
		   struct cmc_channel **mon_b)
{
	rb_fabric_start(tag, seed);
	rb_daemon_start(1, extra_a);
	rb_daemon_start(2, extra_b);
	*mon_a = rb_open(0, "rb-mon-a");
	*mon_b = rb_open(1, "rb-mon-b");
}

void rb_pair_stop(struct cmc_channel *mon_a, struct cmc_channel *mon_b)
{
	CHECK(rb_daemon_alive(0) && rb_daemon_alive(1), "a daemon died");
	cmc_close(mon_a);
	cmc_close(mon_b);
	rb_fabric_stop();
}

bool rb_daemon_alive(unsigned int idx)
{
	pid_t pid = rb_fab.d[idx].pid;
	int status;

	if (pid <= 0)
		return false;
	if (waitpid(pid, &status, WNOHANG) == pid) {
		fprintf(stderr, "cmd on node %u ended: %s %d\n",
			rb_fab.d[idx].node,
			WIFSIGNALED(status) ? "signal" : "exit",
			WIFSIGNALED(status) ? WTERMSIG(status) :
					      WEXITSTATUS(status));
		rb_fab.d[idx].pid = 0;
		return false;
	}
	return true;
}

/*
 * SIGTERM and wait (30 s, then SIGKILL: the daemon's exit frees every
 * record, which valgrind or a loaded machine makes slow). A program that ends in any other
 * way than exit status 0 fails the test: that is how a sanitizer report
 * in a daemon (ASan/UBSan abort, LeakSanitizer's non-zero exit at the end,
 * see meson.build's asan setup) or a crash on the way out is noticed, as
 * the report itself only goes to the daemon's log. Returns true when ok.
 */
static bool stop_pid(pid_t pid, const char *what, const char *log)
{
	char cmd[300];
	int status = 0;
	bool done = false;

	if (pid <= 0)
		return true;
	kill(pid, SIGTERM);
	for (int i = 0; i < 3000 && !done; i++) {
		done = waitpid(pid, &status, WNOHANG) == pid;
		if (!done)
			usleep(10000);
	}
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fprintf(stderr, "FAIL: %s (pid %d) did not stop on SIGTERM\n",
			what, (int)pid);
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	fprintf(stderr, "FAIL: %s (pid %d) ended with %s %d after SIGTERM\n",
		what, (int)pid, WIFSIGNALED(status) ? "signal" : "exit status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (log) {
		fprintf(stderr, "--- %s (tail)\n", log);
		snprintf(cmd, sizeof(cmd), "tail -n 60 %s >&2", log);
		if (system(cmd) < 0)
			perror("system");
	}
	return false;
}

void rb_fabric_stop(void)
{
	char cmd[160], what[32], log[160];
	bool ok = true;

	for (unsigned int i = 0; i < rb_fab.n; i++) {
		snprintf(what, sizeof(what), "cmd on node %u",
			 rb_fab.d[i].node);
		ok &= stop_pid(rb_fab.d[i].pid, what, rb_fab.d[i].log);
		rb_fab.d[i].pid = 0;
	}
	snprintf(log, sizeof(log), "%s/hub.log", rb_fab.dir);
	ok &= stop_pid(rb_fab.hub_pid, "cmhub", rb_fab.dir[0] ? log : NULL);
	rb_fab.hub_pid = 0;
	if (rb_fab.dir[0] && !getenv("RB_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rb_fab.dir);
		if (system(cmd) < 0)
			perror("system");
	}
	rb_fab.dir[0] = '\0';
	if (!ok)
		exit(1);
}

void rb_hub_set(const char *settings)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "timeout 10 %s --ctl %s set %s >/dev/null",
		 getenv("CMHUB"), rb_fab.hub_sock, settings);
	CHECK(system(cmd) == 0, "cmhub --ctl set %s", settings);
}

uint64_t rb_hub_stat(const char *name)
{
	char cmd[512], line[128];
	unsigned long long v = 0;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "timeout 10 %s --ctl %s stats",
		 getenv("CMHUB"), rb_fab.hub_sock);
	f = popen(cmd, "r");
	CHECK(f != NULL, "popen");
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		unsigned long long x;

		if (sscanf(line, "%63s %llu", key, &x) == 2 &&
		    !strcmp(key, name)) {
			v = x;
			found = true;
		}
	}
	pclose(f);
	CHECK(found, "hub stat %s", name);
	return v;
}

unsigned long rb_vmrss_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

struct cmc_channel *rb_open(unsigned int idx, const char *name)
{
	struct cmc_channel *ch = NULL;
	int rc = cmc_open(rb_fab.d[idx].sock, name, &ch);

	CHECK(rc == 0, "cmc_open %s: %s", rb_fab.d[idx].sock, cmc_strerror(rc));
	cmc_set_request_timeout(ch, 30000);
	return ch;
}

static struct cmc_counter counter_buf[CMC_COUNTERS_BATCH_MAX];

uint64_t rb_counter(struct cmc_channel *ch, const char *name)
{
	uint64_t cursor = 0;

	for (int batch = 0; batch < 64; batch++) {
		int n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor,
				     counter_buf);

		CHECK(n >= 0, "cmc_counters: %s", cmc_strerror(n));
		for (int i = 0; i < n; i++)
			if (!strcmp(counter_buf[i].name, name))
				return counter_buf[i].value;
		if (!cursor)
			break;
	}
	CHECK(0, "no counter named %s", name);
	return 0; /* not reached: rb_fail() exits */
}

void rb_print_counters(struct cmc_channel *ch, const char *label,
		       const char *prefixes)
{
	uint64_t cursor = 0;

	printf("--- counters %s:", label);
	for (int batch = 0; batch < 64; batch++) {
		int n = cmc_counters(ch, CMC_COUNTERS_GLOBAL, NULL, 0, &cursor,
				     counter_buf);

		CHECK(n >= 0, "cmc_counters: %s", cmc_strerror(n));
		for (int i = 0; i < n; i++) {
			const char *nm = counter_buf[i].name;
			bool show = !prefixes;

			if (!counter_buf[i].value)
				continue;
			for (const char *p = prefixes; p && *p && !show;) {
				size_t len = strcspn(p, ",");

				show = !strncmp(nm, p, len);
				p += len + (p[len] == ',');
			}
			if (show)
				printf(" %s=%llu", nm,
				       (unsigned long long)counter_buf[i]
					       .value);
		}
		if (!cursor)
			break;
	}
	printf("\n");
}

unsigned int rb_list_count(struct cmc_channel *ch)
{
	static struct cmc_list_entry e[CMC_LIST_BATCH_MAX];
	uint64_t cursor = 0;
	unsigned int total = 0;

	for (int batch = 0; batch < 100000; batch++) {
		int n = cmc_list(ch, CMC_LIST_ALL, &cursor, e);

		CHECK(n >= 0, "cmc_list: %s", cmc_strerror(n));
		for (int i = 0; i < n && total < 10; i++)
			fprintf(stderr, "  left: id %u state %s sid %llx\n",
				e[i].id, cmc_state_str(e[i].state),
				(unsigned long long)e[i].service_id);
		total += (unsigned int)n;
		if (!cursor)
			break;
	}
	return total;
}

bool rb_wait_drained(struct cmc_channel *ch, uint64_t max_ids,
		     uint64_t max_records, double ms)
{
	double end = rb_now_ms() + ms;

	do {
		if (rb_counter(ch, "ids") <= max_ids &&
		    rb_counter(ch, "records") <= max_records)
			return true;
		usleep(50000);
	} while (rb_now_ms() < end);
	fprintf(stderr,
		"not drained: ids %llu (max %llu), records %llu (max %llu)\n",
		(unsigned long long)rb_counter(ch, "ids"),
		(unsigned long long)max_ids,
		(unsigned long long)rb_counter(ch, "records"),
		(unsigned long long)max_records);
	return false;
}

void rb_conn_param(struct cmc_conn_param *p, uint64_t sid, uint16_t lid,
		   uint32_t qpn, uint32_t psn, uint8_t rd, uint8_t timeout)
{
	*p = (struct cmc_conn_param){
		.service_id = sid,
		.dst = { .family = CMC_AF_LID, .lid = lid },
		.qp_num = qpn,
		.start_psn = psn,
		.responder_resources = rd,
		.initiator_depth = rd,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 15,
		.local_cm_response_timeout = timeout,
		.remote_cm_response_timeout = timeout,
	};
}

int rb_fake_node(unsigned int node, uint64_t guid, int sndbuf)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sim_hello h;
	struct sim_hello_ack ack;
	struct sim_sm_change sm;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket");
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", rb_fab.hub_sock);
	CHECK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
	      "connect hub: %s", strerror(errno));
	if (sndbuf)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	memset(&h, 0, sizeof(h));
	h.hdr.type = SIM_HELLO;
	h.hdr.version = SIM_PROTO_VERSION;
	h.node = (uint16_t)node;
	h.n_ports = 1;
	h.port[0].guid = guid;
	h.port[0].lid = RB_NODE_LID(node);
	h.port[0].n_gids = 1;
	h.port[0].gids[0][0] = 0xfe;
	h.port[0].gids[0][1] = 0x80;
	for (int i = 0; i < 8; i++)
		h.port[0].gids[0][8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	CHECK(send(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h), "hello");
	CHECK(recv(fd, &ack, sizeof(ack), 0) == (ssize_t)sizeof(ack),
	      "hello ack");
	CHECK(ack.status == 0, "hub refused fake node %u: %d", node,
	      ack.status);
	/* Then the hub says where the SM is (sim_proto.h): not a MAD. */
	CHECK(recv(fd, &sm, sizeof(sm), 0) == (ssize_t)sizeof(sm) &&
		      sm.hdr.type == SIM_SM_CHANGE,
	      "no SM change after the hello ack");
	return fd;
}

void rb_fake_mad(struct sim_mad *m, const struct cm_msg *msg, uint16_t dlid)
{
	int rc;

	memset(m, 0, sizeof(*m));
	m->hdr.type = SIM_MAD;
	m->hdr.version = SIM_PROTO_VERSION;
	m->port = 0;
	m->addr.lid = dlid;
	m->addr.qpn = 1;
	rc = cm_mad_encode(msg, m->mad);
	CHECK(rc == 0, "cm_mad_encode: %d", rc);
}

int rb_next_event(struct cmc_channel *ch, struct cmc_event **ev, int ms)
{
	int rc;

	while ((rc = cmc_get_event(ch, ev, ms)) == 0 &&
	       (*ev)->type == CMC_EVENT_MRA_RECEIVED)
		cmc_ack_event(*ev);
	return rc;
}
