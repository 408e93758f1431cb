// SPDX-License-Identifier: MIT
/* cmbench's statistics: steps, their table, and the daemons' CPU and RSS. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmbench.h"

/* ---------------------------------------------------------------------
 * Daemon CPU and memory, from /proc
 */

static void dstat_read(int pid, struct dstat *d)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name may hold spaces and parentheses: fields follow the last
	 * ')'. From there, state is field 3; utime and stime are 14, 15. */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		   &st) != 2)
		return;
	d->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long v;

		if (sscanf(buf, "VmRSS: %lu", &v) == 1)
			d->rss_kb = v;
		else if (sscanf(buf, "voluntary_ctxt_switches: %lu", &v) == 1 ||
			 sscanf(buf, "nonvoluntary_ctxt_switches: %lu", &v) ==
				 1)
			d->ctxsw += v;
	}
	fclose(f);
	d->ok = true;
}

void dstat_all(const struct opts *o, struct dstat *d)
{
	for (unsigned int i = 0; i < o->ndaemons; i++)
		dstat_read(o->daemon_pid[i], &d[i]);
}

/* ---------------------------------------------------------------------
 * Step statistics
 */

int step_add(struct step *s, uint64_t from, uint64_t to)
{
	uint64_t d;

	if (!from || !to || to < from)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint32_t *p = realloc(s->us, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->us = p;
		s->cap = cap;
	}
	d = (to - from + 500) / 1000;
	s->us[s->n++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void step_summary(struct step *s, struct summary *r)
{
	double sum = 0;

	memset(r, 0, sizeof(*r));
	if (!s->n)
		return;
	qsort(s->us, s->n, sizeof(*s->us), cmp_u32);
	for (size_t i = 0; i < s->n; i++)
		sum += s->us[i];
	r->n = s->n;
	r->min = s->us[0];
	r->max = s->us[s->n - 1];
	r->p50 = s->us[(s->n - 1) / 2];
	r->p99 = s->us[(size_t)((double)(s->n - 1) * 0.99)];
	r->avg = sum / (double)s->n;
}

void table_head(void)
{
	printf("%-12s %8s %10s %10s %10s %10s %10s  %s\n", "step", "count",
	       "min(us)", "median(us)", "p99(us)", "max(us)", "avg(us)",
	       "what");
}

/* Prints the row and appends "name_p50_us=... name_p99_us=..." to kv. */
void table_row(struct step *s, char *kv, size_t kvsize)
{
	struct summary r;
	size_t len = strlen(kv);

	step_summary(s, &r);
	printf("%-12s %8zu %10u %10u %10u %10u %10.1f  %s\n", s->name, r.n,
	       r.min, r.p50, r.p99, r.max, r.avg, s->what);
	snprintf(kv + len, kvsize - len,
		 " %s_min_us=%u %s_p50_us=%u %s_p99_us=%u %s_max_us=%u",
		 s->name, r.min, s->name, r.p50, s->name, r.p99, s->name,
		 r.max);
}

void kv_add(char *kv, size_t size, const char *fmt, ...)
{
	size_t len = strlen(kv);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kv + len, size - len, fmt, ap);
	va_end(ap);
}

void daemon_report(const struct opts *o, const struct dstat *start,
		   const struct dstat *held, const struct dstat *end,
		   unsigned long n_setup, unsigned long n_down, char *kv,
		   size_t kvsize)
{
	for (unsigned int i = 0; i < o->ndaemons; i++) {
		double cpu_up = held[i].cpu_s - start[i].cpu_s;
		double cpu_down = end[i].cpu_s - held[i].cpu_s;
		double rss_per = n_setup ? ((double)held[i].rss_kb -
					    (double)start[i].rss_kb) *
						   1024.0 / (double)n_setup :
					   0;

		if (!start[i].ok || !held[i].ok || !end[i].ok) {
			printf("daemon %d: /proc not readable\n",
			       o->daemon_pid[i]);
			continue;
		}
		printf("daemon %d: cpu setup %.3f s (%.1f us/conn), teardown "
		       "%.3f s (%.1f us/conn); rss %lu kB -> held %lu kB "
		       "(%.0f B/conn) -> end %lu kB; context switches %.1f "
		       "per conn (setup + teardown)\n",
		       o->daemon_pid[i], cpu_up,
		       n_setup ? cpu_up * 1e6 / (double)n_setup : 0, cpu_down,
		       n_down ? cpu_down * 1e6 / (double)n_down : 0,
		       start[i].rss_kb, held[i].rss_kb, rss_per, end[i].rss_kb,
		       n_setup ? (double)(end[i].ctxsw - start[i].ctxsw) /
					 (double)n_setup :
				 0);
		kv_add(kv, kvsize,
		       " d%u_pid=%d d%u_cpu_setup_us_per_conn=%.1f"
		       " d%u_cpu_teardown_us_per_conn=%.1f d%u_rss_start_kb=%lu"
		       " d%u_rss_held_kb=%lu d%u_rss_end_kb=%lu"
		       " d%u_rss_bytes_per_conn=%.0f d%u_ctxsw_per_conn=%.1f",
		       i, o->daemon_pid[i], i,
		       n_setup ? cpu_up * 1e6 / (double)n_setup : 0, i,
		       n_down ? cpu_down * 1e6 / (double)n_down : 0, i,
		       start[i].rss_kb, i, held[i].rss_kb, i, end[i].rss_kb, i,
		       rss_per, i,
		       n_setup ? (double)(end[i].ctxsw - start[i].ctxsw) /
					 (double)n_setup :
				 0);
	}
}
