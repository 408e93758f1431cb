// SPDX-License-Identifier: MIT
/*
 * Authorization (issue 8, item 5): the LISTEN policy and the per-user
 * limits of daemon/authz.h, enforced with the clients' SO_PEERCRED
 * credentials. Runs as root: clients are forked and setuid'd to nobody,
 * to a second uid (UID2) and to nobody with a second gid (GID_OPS).
 *
 * Daemon A (node 1): a policy file (rules below) - every rule kind, first
 * match wins, rules bind root too, and the privileged-port default.
 * Daemon B (node 2): max-ids-per-user 6, max-listeners-per-user 2 - limits
 * summed over two clients of one uid, independent of another uid, and a
 * passive id (a REQ from node 1) counted against its listener's user.
 * Daemon C (node 3): max-held 4, max-held-per-user 10: a third listener
 * would let the user hold 12 REQs (-ENOSPC).
 * And config errors: fatal at start, naming FILE:LINE.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rb_common.h"

#define UID2 4242
#define GID_OPS 4343
#define SID_A 0x1000000000000001ull /* rule 2: nobody only */
#define SID_B 0x2000000000000abcull /* rule 6: nobody at all */
#define TCP(p) (0x0000000001060000ull | (p))
#define IB(p) (0x00000000013F0000ull | (p))
#define ONE UINT64_MAX

static const char policy[] =
	"# test_authz: first match wins\n"
	"listen-deny  = uid:4242 0x1000000000000000-0x1000000000ffffff\n"
	"listen-allow = user:nobody 0x1000000000000000-0x1000000000ffffff\n"
	"listen-allow = uid:4242 tcp:443\n"
	"listen-allow = gid:4343 tcp:22\n"
	"listen-deny  = any 0x1000000000000000-0x1000000000ffffff\n"
	"listen-deny  = any 0x2000000000000000/0xfffffffffffff000\n";

static uid_t nobody_uid;
static gid_t nobody_gid;
static unsigned int dA, dB, dC;

/* ---- checks in forked clients: report, never touch the fabric -------- */

static int child_failed;

#define CC(cond, ...)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"FAIL %s:%d (uid %u): '%s': ", __FILE__,       \
				__LINE__, (unsigned int)getuid(), #cond);      \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			child_failed = 1;                                      \
		}                                                              \
	} while (0)

static struct cmc_channel *c_open(unsigned int d, const char *name)
{
	struct cmc_channel *ch = NULL;
	int rc = cmc_open(rb_fab.d[d].sock, name, &ch);

	if (rc) {
		fprintf(stderr, "FAIL (uid %u): cmc_open %s: %s\n",
			(unsigned int)getuid(), rb_fab.d[d].sock,
			cmc_strerror(rc));
		_exit(1);
	}
	cmc_set_request_timeout(ch, 10000);
	return ch;
}

/* LISTEN on a new id; returns the id (rc 0) or NULL with *rc set. */
static struct cmc_id *listen_on(struct cmc_channel *ch, uint64_t sid,
				uint64_t mask, int *rc)
{
	struct cmc_id *id = NULL;

	*rc = cmc_create_id(ch, NULL, CMC_QP_RC, &id);
	if (*rc)
		return NULL;
	*rc = cmc_listen(id, sid, mask, 4, NULL);
	if (*rc) {
		cmc_destroy_id(id);
		return NULL;
	}
	return id;
}

/* LISTEN gives want; a listener that was allowed is destroyed again. */
static void expect_listen(struct cmc_channel *ch, uint64_t sid, uint64_t mask,
			  int want)
{
	int rc;
	struct cmc_id *id = listen_on(ch, sid, mask, &rc);

	CC(rc == want, "LISTEN 0x%016llx/0x%016llx: got %s, want %s",
	   (unsigned long long)sid, (unsigned long long)mask, cmc_strerror(rc),
	   cmc_strerror(want));
	if (id)
		cmc_destroy_id(id);
}

/* ---- forking clients --------------------------------------------------- */

struct gate {
	int up[2]; /* child -> parent */
	int down[2]; /* parent -> child */
};

static struct gate gN; /* nobody's limits client and the parent */

static void gate_init(struct gate *g)
{
	CHECK(pipe(g->up) == 0 && pipe(g->down) == 0, "pipe");
}

static void gate_signal(int fd)
{
	char c = 'x';

	if (write(fd, &c, 1) != 1)
		_exit(3);
}

static bool gate_wait(int fd)
{
	char c;

	return read(fd, &c, 1) == 1;
}

/* Clients still running: killed if the test fails (rb_fail exits). */
static pid_t children[8];

static void kill_children(void)
{
	for (unsigned int i = 0; i < 8; i++)
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
		}
}

static pid_t as_user(uid_t uid, gid_t gid, void (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid) {
		for (unsigned int i = 0; i < 8; i++)
			if (children[i] <= 0) {
				children[i] = pid;
				break;
			}
		return pid;
	}
	/* Only the parent holds the gate's other ends: EOF if it dies. */
	if (gN.up[0] > 0) {
		close(gN.up[0]);
		close(gN.down[1]);
	}
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid) ||
	    getuid() != uid) {
		perror("dropping privileges");
		_exit(2);
	}
	child_failed = 0;
	fn(arg);
	_exit(child_failed);
}

static void join(pid_t pid, const char *what)
{
	int st;

	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	for (unsigned int i = 0; i < 8; i++)
		if (children[i] == pid)
			children[i] = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "client '%s' failed (status 0x%x)", what, st);
}

/* ---- policy (daemon A) ------------------------------------------------- */

static void policy_nobody(void *arg)
{
	struct cmc_channel *ch = c_open(dA, "authz-nobody");

	expect_listen(ch, SID_A, ONE, 0); /* rule 2 */
	/* all of 0x1000000000000000..ffffff: inside rule 2 as a whole */
	expect_listen(ch, 0x1000000000000000ull, 0xffffffffff000000ull, 0);
	/* one bit more than rule 2: not inside it; rule 5 denies */
	expect_listen(ch, 0x1000000000000000ull, 0xfffffffffe000000ull,
		      -EACCES);
	expect_listen(ch, SID_B, ONE, -EACCES); /* rule 6 */
	/* a listener that only overlaps rule 6 is denied */
	expect_listen(ch, 0x2000000000000000ull, 0xffffffffffff0000ull,
		      -EACCES);
	/* the privileged-port default */
	expect_listen(ch, TCP(80), ONE, -EACCES);
	expect_listen(ch, 0x0000000001060050ull, ONE, -EACCES);
	expect_listen(ch, TCP(443), ONE, -EACCES); /* rule 3 is UID2's */
	expect_listen(ch, TCP(22), ONE, -EACCES); /* rule 4: not our gid */
	expect_listen(ch, TCP(1023), ONE, -EACCES);
	expect_listen(ch, TCP(1024), ONE, 0);
	expect_listen(ch, TCP(8080), ONE, 0);
	expect_listen(ch, IB(1023), ONE, -EACCES);
	expect_listen(ch, IB(1024), ONE, 0);
	expect_listen(ch, 0x0000000001110007ull, ONE, -EACCES); /* UDP 7 */
	expect_listen(ch, 0x0000000000020001ull, ONE, -EACCES); /* IPoIB 1 */
	/* every TCP port at once includes the privileged ones */
	expect_listen(ch, TCP(0), 0xffffffffffff0000ull, -EACCES);
	/* ports 1024..2047 only */
	expect_listen(ch, TCP(1024), 0xfffffffffffffc00ull, 0);
	/* an unrelated service id: allowed by default */
	expect_listen(ch, 0x3000000000000001ull, ONE, 0);
	cmc_close(ch);
}

static void policy_ops(void *arg)
{
	struct cmc_channel *ch = c_open(dA, "authz-ops");

	expect_listen(ch, TCP(22), ONE, 0); /* rule 4, by gid */
	expect_listen(ch, TCP(80), ONE, -EACCES);
	cmc_close(ch);
}

static void policy_uid2(void *arg)
{
	struct cmc_channel *ch = c_open(dA, "authz-uid2");

	expect_listen(ch, SID_A, ONE, -EACCES); /* rule 1 before rule 2 */
	expect_listen(ch, TCP(443), ONE, 0); /* rule 3 */
	expect_listen(ch, TCP(80), ONE, -EACCES);
	expect_listen(ch, TCP(22), ONE, -EACCES);
	cmc_close(ch);
}

static bool log_has(unsigned int d, const char *a, const char *b)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(rb_fab.d[d].log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && strstr(line, b);
	fclose(f);
	return found;
}

static void test_policy(void)
{
	struct cmc_channel *root = rb_open(dA, "authz-root");
	char uid_s[32];
	int rc;
	struct cmc_id *id;

	join(as_user(nobody_uid, nobody_gid, policy_nobody, NULL), "nobody");
	join(as_user(nobody_uid, GID_OPS, policy_ops, NULL), "nobody/ops");
	join(as_user(UID2, UID2, policy_uid2, NULL), "uid2");
	/* root: the privileged ports are its by default... */
	id = listen_on(root, TCP(80), ONE, &rc);
	CHECK(rc == 0, "root LISTEN tcp 80: %s", cmc_strerror(rc));
	cmc_destroy_id(id);
	id = listen_on(root, TCP(0), 0xffffffffffff0000ull, &rc);
	CHECK(rc == 0, "root LISTEN tcp *: %s", cmc_strerror(rc));
	cmc_destroy_id(id);
	/* ...but rules bind root too */
	id = listen_on(root, SID_A, ONE, &rc);
	CHECK(rc == -EACCES, "root LISTEN SID_A: %s", cmc_strerror(rc));
	id = listen_on(root, SID_B, ONE, &rc);
	CHECK(rc == -EACCES, "root LISTEN SID_B: %s", cmc_strerror(rc));
	/* refusals are logged at notice with uid and service id */
	snprintf(uid_s, sizeof(uid_s), "uid %u ", (unsigned int)nobody_uid);
	CHECK(log_has(dA, uid_s, "LISTEN service id 0x0000000001060050"),
	      "no notice for nobody's LISTEN on tcp 80");
	CHECK(log_has(dA, "uid 4242 ", "tcp:443") ||
		      log_has(dA, "uid 4242 ", "0x1000000000000001"),
	      "no notice for uid 4242");
	CHECK(rb_daemon_alive(dA), "daemon A died");
	cmc_close(root);
	printf("policy: allow/deny rules, first match, gid rule, "
	       "privileged ports: ok\n");
}

/* ---- per-user limits (daemon B) ---------------------------------------- */

#define SID_L1 0x4000000000000001ull
#define SID_L2 0x4000000000000002ull
#define SID_L3 0x4000000000000003ull

static void limits_nobody(void *arg)
{
	struct cmc_channel *ch1 = c_open(dB, "authz-n1"),
			   *ch2 = c_open(dB, "authz-n2");
	struct cmc_id *ids1[4] = { 0 }, *ids2[3] = { 0 }, *x = NULL, *l1, *l2;
	struct cmc_event *ev;
	int rc;

	/* ids: 6 for the user, over both clients */
	for (int i = 0; i < 4; i++) {
		rc = cmc_create_id(ch1, NULL, CMC_QP_RC, &ids1[i]);
		CC(rc == 0, "ch1 create %d: %s", i, cmc_strerror(rc));
	}
	for (int i = 0; i < 2; i++) {
		rc = cmc_create_id(ch2, NULL, CMC_QP_RC, &ids2[i]);
		CC(rc == 0, "ch2 create %d: %s", i, cmc_strerror(rc));
	}
	rc = cmc_create_id(ch2, NULL, CMC_QP_RC, &x);
	CC(rc == -EMFILE, "7th id: %s", cmc_strerror(rc));
	rc = cmc_create_id(ch1, NULL, CMC_QP_RC, &x);
	CC(rc == -EMFILE, "7th id on ch1: %s", cmc_strerror(rc));
	/* one back, one more */
	cmc_destroy_id(ids1[3]);
	rc = cmc_create_id(ch2, NULL, CMC_QP_RC, &ids2[2]);
	CC(rc == 0, "6th id again: %s", cmc_strerror(rc));
	/* listeners: 2 for the user, over both clients */
	l1 = ids1[0];
	l2 = ids2[0];
	rc = cmc_listen(l1, SID_L1, ONE, 4, NULL);
	CC(rc == 0, "listen 1: %s", cmc_strerror(rc));
	rc = cmc_listen(l2, SID_L2, ONE, 4, NULL);
	CC(rc == 0, "listen 2: %s", cmc_strerror(rc));
	rc = cmc_listen(ids2[1], SID_L3, ONE, 4, NULL);
	CC(rc == -EMFILE, "3rd listener: %s", cmc_strerror(rc));
	rc = cmc_listen(ids1[1], SID_L3, ONE, 4, NULL);
	CC(rc == -EMFILE, "3rd listener on ch1: %s", cmc_strerror(rc));
	/* at both limits: the parent tries another user, then a REQ */
	gate_signal(gN.up[1]);
	if (!gate_wait(gN.down[0]))
		_exit(4);
	/* The REQ for SID_L1 came while we had 6 ids: held, not ours. */
	rc = cmc_get_event(ch1, &ev, 300);
	CC(rc == -EAGAIN || rc == -ETIMEDOUT,
	   "an event reached a user at max-ids-per-user: %s",
	   rc ? cmc_strerror(rc) : "REQ_RECEIVED?");
	if (!rc)
		cmc_ack_event(ev);
	gate_signal(gN.up[1]);
	if (!gate_wait(gN.down[0]))
		_exit(4);
	/* ch1 goes away: its ids and listener no longer count (once the
	 * daemon has seen the hangup, which races with ch2's requests; up
	 * to 30 s, a hang guard) */
	cmc_close(ch1);
	for (int i = 0; i < 3000; i++) {
		rc = cmc_listen(ids2[1], SID_L3, ONE, 4, NULL);
		if (rc != -EMFILE)
			break;
		usleep(10000);
	}
	CC(rc == 0, "listener after ch1 closed: %s", cmc_strerror(rc));
	for (int i = 0; i < 3; i++) {
		rc = cmc_create_id(ch2, NULL, CMC_QP_RC, &x);
		CC(rc == 0, "id %d after ch1 closed: %s", i, cmc_strerror(rc));
	}
	rc = cmc_create_id(ch2, NULL, CMC_QP_RC, &x);
	CC(rc == -EMFILE, "7th id after ch1 closed: %s", cmc_strerror(rc));
	cmc_close(ch2);
}

static void limits_uid2(void *arg)
{
	struct cmc_channel *ch = c_open(dB, "authz-u2");
	struct cmc_id *ids[6], *x;
	int rc;

	/* nobody is at its limits right now; ours are our own */
	for (int i = 0; i < 6; i++) {
		rc = cmc_create_id(ch, NULL, CMC_QP_RC, &ids[i]);
		CC(rc == 0, "uid2 create %d: %s", i, cmc_strerror(rc));
	}
	rc = cmc_create_id(ch, NULL, CMC_QP_RC, &x);
	CC(rc == -EMFILE, "uid2 7th id: %s", cmc_strerror(rc));
	rc = cmc_listen(ids[0], 0x5000000000000001ull, ONE, 4, NULL);
	CC(rc == 0, "uid2 listen 1: %s", cmc_strerror(rc));
	rc = cmc_listen(ids[1], 0x5000000000000002ull, ONE, 4, NULL);
	CC(rc == 0, "uid2 listen 2: %s", cmc_strerror(rc));
	rc = cmc_listen(ids[2], 0x5000000000000003ull, ONE, 4, NULL);
	CC(rc == -EMFILE, "uid2 3rd listener: %s", cmc_strerror(rc));
	cmc_close(ch);
}

static void connect_to(struct cmc_channel *ch, struct cmc_id **idp,
		       uint64_t sid, uint16_t lid)
{
	struct cmc_conn_param p;
	int rc;

	rb_conn_param(&p, sid, lid, 77, 1, 1, 16);
	rc = cmc_create_id(ch, NULL, CMC_QP_RC, idp);
	CHECK(rc == 0, "create_id: %s", cmc_strerror(rc));
	rc = cmc_connect(*idp, &p);
	CHECK(rc == 0, "connect: %s", cmc_strerror(rc));
}

static void test_limits(void)
{
	struct cmc_channel *mon = rb_open(dB, "authz-monB"),
			   *act = rb_open(dA, "authz-active");
	struct cmc_id *active = NULL;
	uint64_t held0 = rb_counter(mon, "req_held");
	double end;
	pid_t n;

	gate_init(&gN);
	n = as_user(nobody_uid, nobody_gid, limits_nobody, NULL);
	close(gN.up[1]);
	close(gN.down[0]);
	CHECK(gate_wait(gN.up[0]), "nobody's client ended early");
	join(as_user(UID2, UID2, limits_uid2, NULL), "uid2 limits");
	/* A REQ for nobody's listener while nobody has 6 ids: held. */
	connect_to(act, &active, SID_L1, RB_NODE_LID(2));
	end = rb_now_ms() + 30000; /* the REQ must come: a hang guard */
	while (rb_counter(mon, "req_held") == held0 && rb_now_ms() < end)
		usleep(20000);
	CHECK(rb_counter(mon, "req_held") > held0,
	      "the REQ was not held for a user at max-ids-per-user");
	gate_signal(gN.down[1]);
	CHECK(gate_wait(gN.up[0]), "nobody's client ended early");
	cmc_destroy_id(active);
	gate_signal(gN.down[1]);
	join(n, "nobody limits");
	CHECK(rb_daemon_alive(dB), "daemon B died");
	cmc_close(act);
	cmc_close(mon);
	printf("limits: ids and listeners per user over two clients, "
	       "another uid independent, passive ids counted: ok\n");
}

/* ---- held REQs per user (daemon C) ------------------------------------ */

static void held_nobody(void *arg)
{
	struct cmc_channel *ch = c_open(dC, "authz-held");
	struct cmc_id *a, *b, *c;
	int rc;

	a = listen_on(ch, 0x6000000000000001ull, ONE, &rc);
	CC(rc == 0, "listener 1: %s", cmc_strerror(rc));
	b = listen_on(ch, 0x6000000000000002ull, ONE, &rc);
	CC(rc == 0, "listener 2: %s", cmc_strerror(rc));
	/* 3 listeners x max-held 4 = 12 > max-held-per-user 10 */
	c = listen_on(ch, 0x6000000000000003ull, ONE, &rc);
	CC(rc == -ENOSPC, "listener 3: %s", cmc_strerror(rc));
	if (b)
		cmc_destroy_id(b);
	c = listen_on(ch, 0x6000000000000003ull, ONE, &rc);
	CC(rc == 0, "listener 3 after one went: %s", cmc_strerror(rc));
	(void)a;
	(void)c;
	cmc_close(ch);
}

static void test_held(void)
{
	join(as_user(nobody_uid, nobody_gid, held_nobody, NULL), "held");
	CHECK(rb_daemon_alive(dC), "daemon C died");
	printf("held: max-held-per-user caps a user's listeners: ok\n");
}

/* ---- config errors ------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "write %s", path);
}

/* cmd with conf must exit 2 at start, saying "conf:line". */
static void expect_bad_config(const char *text, unsigned int line,
			      const char *extra)
{
	char conf[160], err[160], cmd[1024], where[200], buf[512];
	bool found = false;
	FILE *f;
	int st;

	snprintf(conf, sizeof(conf), "%s/bad.conf", rb_fab.dir);
	snprintf(err, sizeof(err), "%s/bad.err", rb_fab.dir);
	write_file(conf, text);
	snprintf(cmd, sizeof(cmd),
		 "timeout 10 %s --config %s --sim %s --node 9 --socket "
		 "%s/bad.sock "
		 "%s 2>%s",
		 getenv("CMD"), conf, rb_fab.hub_sock, rb_fab.dir,
		 extra ? extra : "", err);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2,
	      "cmd with a bad config: status 0x%x, want exit 2", st);
	if (line)
		snprintf(where, sizeof(where), "%s:%u:", conf, line);
	else
		snprintf(where, sizeof(where), "max-held-per-user");
	f = fopen(err, "r");
	CHECK(f != NULL, "open %s", err);
	while (!found && fgets(buf, sizeof(buf), f))
		found = strstr(buf, where) != NULL;
	fclose(f);
	CHECK(found, "stderr does not say '%s'", where);
}

static void test_config_errors(void)
{
	expect_bad_config("# ok\nlisten-allow = any tcp:80\n"
			  "listen-allow = user:no-such-user-authz tcp:80\n",
			  3, NULL);
	expect_bad_config("listen-deny = group:no-such-group-authz all\n", 1,
			  NULL);
	expect_bad_config("\nlisten-deny = any 0x20-0x10\n", 2, NULL);
	expect_bad_config("listen-deny = any tcp:70000\n", 1, NULL);
	expect_bad_config("listen-deny = everyone all\n", 1, NULL);
	expect_bad_config("listen-deny = any\n", 1, NULL);
	expect_bad_config("listen-deny = any all extra\n", 1, NULL);
	expect_bad_config("max-ids-per-user = lots\n", 1, NULL);
	expect_bad_config("max-held = 8\nmax-held-per-user = 7\n", 0, NULL);
	printf("config errors: fatal at start with FILE:LINE: ok\n");
}

int main(void)
{
	const struct passwd *pw;
	char conf[160], limits[160], held[160];
	const char *argsA[] = { "--config", conf, "--log-level", "notice",
				NULL };
	const char *argsB[] = { "--config", limits, NULL };
	const char *argsC[] = { "--config", held, "--max-held", "4", NULL };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("SKIP: needs root: the test runs clients as other users "
		       "(setuid to nobody and uid %d) to check the daemon's "
		       "SO_PEERCRED-based policy\n",
		       UID2);
		return 77;
	}
	pw = getpwnam("nobody");
	if (!pw) {
		printf("SKIP: no user 'nobody'\n");
		return 77;
	}
	nobody_uid = pw->pw_uid;
	nobody_gid = pw->pw_gid;
	atexit(kill_children);
	rb_fabric_start("authz", 8);
	/* other users reach the daemons' sockets (0666) through it */
	CHECK(chmod(rb_fab.dir, 0755) == 0, "chmod %s", rb_fab.dir);
	snprintf(conf, sizeof(conf), "%s/policy.conf", rb_fab.dir);
	write_file(conf, policy);
	snprintf(limits, sizeof(limits), "%s/limits.conf", rb_fab.dir);
	write_file(limits, "max-ids-per-user = 6\n"
			   "max-listeners-per-user = 2\n");
	snprintf(held, sizeof(held), "%s/held.conf", rb_fab.dir);
	write_file(held, "max-held-per-user = 10\n");
	dA = rb_daemon_start(1, argsA);
	dB = rb_daemon_start(2, argsB);
	dC = rb_daemon_start(3, argsC);

	test_policy();
	test_limits();
	test_held();
	test_config_errors();
	rb_fabric_stop();
	printf("authz: ok\n");
	return 0;
}
