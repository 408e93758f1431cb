/* SPDX-License-Identifier: MIT */
/*
 * What the parts of cmbench share (tools/cmbench.c has the whole story):
 * the options, the channel, the statistics and the report
 * (cmbench_report.c), verbs (cmbench.c), and the two drivers,
 * run_client() (cmbench_client.c) and run_server() (cmbench_server.c).
 */
#ifndef CMD_TOOLS_CMBENCH_H
#define CMD_TOOLS_CMBENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "cmclient.h"

#define BENCH_DEFAULT_SERVICE 0x00000000636d6268ull /* "cmbh" */
#define BENCH_DEFAULT_COUNT 1000
#define BENCH_DEFAULT_IN_FLIGHT 100
#define BENCH_DEFAULT_BACKLOG 65535
#define BENCH_DEFAULT_PROBE 200
#define BENCH_DEFAULT_STALL_S 60
#define BENCH_MAX_DAEMONS 8
#define BENCH_MAX_SAMPLES 32
#define REJ_CONSUMER_DEFINED 28
#define CM_RESPONSE_TIMEOUT 20
#define CM_MAX_RETRIES 15
#define POLL_MS 200

struct opts {
	bool listen;
	bool qp;
	bool async;
	const char *dev;
	int gid_index; /* -1: none */
	uint8_t ib_port;
	uint64_t service_id;
	unsigned int count;
	unsigned int in_flight;
	unsigned int backlog;
	unsigned int probe;
	double hold_s;
	double stall_s;
	const char *socket;
	const char *dst;
	unsigned int ndaemons;
	int daemon_pid[BENCH_MAX_DAEMONS];
	unsigned int nsamples;
	unsigned int sample[BENCH_MAX_SAMPLES];
};

/* Set by SIGINT and SIGTERM: finish up and report. */
extern volatile sig_atomic_t stop;

uint64_t now_ns(void);
int open_channel(const struct opts *o, struct cmc_channel **chp);
int poll_channel(struct cmc_channel *ch, int timeout_ms);
/* One line on stderr about a connection; the first ten only. */
__attribute__((format(printf, 1, 2))) void conn_error(const char *fmt, ...);
/* The name of a request a REQUEST_ERROR event reports. */
const char *request_str(uint32_t request);

/* ---- Daemon CPU and memory, from /proc (cmbench_report.c) ---- */

struct dstat {
	bool ok;
	double cpu_s; /* utime + stime */
	unsigned long rss_kb;
	unsigned long ctxsw; /* voluntary + involuntary context switches */
};

void dstat_all(const struct opts *o, struct dstat *d);

/* ---- Step statistics and the report (cmbench_report.c) ---- */

struct step {
	const char *name;
	const char *what;
	uint32_t *us; /* one per sample */
	size_t n, cap;
};

int step_add(struct step *s, uint64_t from, uint64_t to);

struct summary {
	size_t n;
	uint32_t min, p50, p99, max;
	double avg;
};

/* Sorts the samples. */
void step_summary(struct step *s, struct summary *r);
void table_head(void);
/* Prints the row and appends "name_p50_us=... name_p99_us=..." to kv. */
void table_row(struct step *s, char *kv, size_t kvsize);
__attribute__((format(printf, 3, 4))) void kv_add(char *kv, size_t size,
						  const char *fmt, ...);
void daemon_report(const struct opts *o, const struct dstat *start,
		   const struct dstat *held, const struct dstat *end,
		   unsigned long n_setup, unsigned long n_down, char *kv,
		   size_t kvsize);

/* ---- Verbs, for --qp only (cmbench.c) ---- */

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

int verbs_open(const char *dev, struct verbs *v);
void verbs_close(struct verbs *v);
struct ibv_qp *verbs_qp(struct verbs *v);
void verbs_qp_error(struct ibv_qp *qp);
int port_sel(const struct opts *o, const struct verbs *v, bool any_port,
	     struct cmc_port_sel *sel);
bool need_verbs(const struct opts *o);
uint32_t fake_qpn(void);

/* ---- The drivers ---- */

int run_client(const struct opts *o);
int run_server(const struct opts *o);

#endif
