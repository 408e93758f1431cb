// SPDX-License-Identifier: MIT
/*
 * `cmctl metrics`: the daemon's counters in the OpenMetrics text format
 * (which Prometheus scrapes as well as its own), for a textfile
 * collector or a scrape wrapper:
 *
 *  - a counter NAME is the family cmd_NAME, sample cmd_NAME_total; a
 *    level (clients, ids, heap_in_use, ...) is a gauge cmd_NAME; the
 *    conns_STATE levels are one gauge cmd_conns{state="STATE"};
 *  - per-port counters are cmd_port_NAME{device="DEV",port="N"}, and a
 *    client's own (--client) cmd_client_NAME;
 *  - the setup latency (setup_us_le_N, cumulative in the daemon, with
 *    setup_us_sum) is the histogram cmd_setup_duration_seconds, le in
 *    seconds (2^i us, exact in decimal), +Inf equal to _count;
 *  - the text ends with "# EOF".
 *
 * --format=prometheus prints the Prometheus text format 0.0.4 instead
 * (node_exporter's textfile collector reads that): the same samples,
 * counters' HELP and TYPE named with _total, and no "# EOF".
 *
 * Every family's samples are contiguous, as OpenMetrics requires: all
 * counters are read first, then printed family by family.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmctl.h"
#include "util.h"

struct mset {
	struct cmc_counter *c;
	size_t n, cap;
};

static int mset_read(struct cmc_channel *ch, enum cmc_counter_scope scope,
		     const char *dev, uint8_t port, struct mset *s)
{
	static struct cmc_counter batch[CMC_COUNTERS_BATCH_MAX];
	uint64_t cursor = 0;
	int n;

	do {
		n = cmc_counters(ch, scope, dev, port, &cursor, batch);
		if (n < 0)
			return n;
		if (s->n + (size_t)n > s->cap) {
			size_t cap = s->cap * 2 + (size_t)n;
			struct cmc_counter *c = realloc(s->c, cap * sizeof(*c));

			if (!c)
				return -ENOMEM;
			s->c = c;
			s->cap = cap;
		}
		memcpy(s->c + s->n, batch, (size_t)n * sizeof(*batch));
		s->n += (size_t)n;
	} while (n > 0 && cursor);
	return 0;
}

/* The daemon's names are lower case [a-z0-9_] already; anything else
 * becomes '_', so that the name is always a valid metric name. */
static void name_put(const char *prefix, const char *name)
{
	fputs(prefix, stdout);
	for (const char *p = name; *p; p++) {
		char ch = *p;

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '_';
		putchar(ch);
	}
}

/* A label value, escaped as both text formats want. */
static void label_put(const char *v)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\\' || *p == '"')
			printf("\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else
			putchar(*p);
	}
}

/* Levels, not counts: gauges. */
static bool is_gauge(const char *name)
{
	static const char *const gauges[] = {
		"clients",	 "ids",
		"records",	 "capture_active",
		"neigh_pending", "sessions_waiting",
		"heap_in_use",	 "heap_retained",
		"heap_cached",	 "port_active",
		"listeners",	 "established",
		"sa_in_flight",	 "sa_cache_entries",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(gauges); i++)
		if (!strcmp(name, gauges[i]))
			return true;
	return false;
}

/* The histogram's parts, printed as one family of their own. */
static bool is_setup(const char *name)
{
	return !strncmp(name, "setup_us_le_", 12) ||
	       !strcmp(name, "setup_us_sum") || !strcmp(name, "setup_count");
}

/*
 * OpenMetrics names a counter's family without _total in HELP and TYPE;
 * the Prometheus text format (0.0.4) names it as its sample, with it.
 */
static bool prom_text;

static void family_name(const char *prefix, const char *name, bool gauge)
{
	name_put(prefix, name);
	if (!gauge && prom_text)
		fputs("_total", stdout);
}

static void family_head(const char *prefix, const char *name, bool gauge,
			const char *what)
{
	printf("# HELP ");
	family_name(prefix, name, gauge);
	printf(" cmd %s %s (cmctl counters: %s)\n# TYPE ", what,
	       gauge ? "level" : "count", name);
	family_name(prefix, name, gauge);
	printf(" %s\n", gauge ? "gauge" : "counter");
}

static void sample(const char *prefix, const char *name, bool gauge,
		   const char *dev, unsigned int port, uint64_t v)
{
	name_put(prefix, name);
	if (!gauge)
		fputs("_total", stdout);
	if (dev) {
		fputs("{device=\"", stdout);
		label_put(dev);
		printf("\",port=\"%u\"}", port);
	}
	printf(" %" PRIu64 "\n", v);
}

/* Every counter of s but the histogram's and the conns_ levels. */
static void flat(const char *prefix, const struct mset *s, const char *what)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->c[i].name;
		bool gauge = is_gauge(name);

		if (is_setup(name) || !strncmp(name, "conns_", 6))
			continue;
		family_head(prefix, name, gauge, what);
		sample(prefix, name, gauge, NULL, 0, s->c[i].value);
	}
}

static void conns(const struct mset *s)
{
	bool head = false;

	for (size_t i = 0; i < s->n; i++) {
		if (strncmp(s->c[i].name, "conns_", 6))
			continue;
		if (!head)
			printf("# HELP cmd_conns connection records by CM "
			       "state\n# TYPE cmd_conns gauge\n");
		head = true;
		printf("cmd_conns{state=\"");
		label_put(s->c[i].name + 6);
		printf("\"} %" PRIu64 "\n", s->c[i].value);
	}
}

/*
 * The setup latency. The daemon's setup_us_le_N are cumulative (setups
 * of at most N us) and setup_us_le_inf counts every setup, so they map
 * one to one onto buckets; _count is the +Inf bucket by definition, so
 * the two agree even if setup_count moved between two COUNTERS batches.
 */
static void histogram(const struct mset *s)
{
	const char *fam = "cmd_setup_duration_seconds";
	uint64_t inf = 0, sum = 0;
	bool any = false;

	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->c[i].name;
		char *end;
		unsigned long long us;

		if (!strcmp(name, "setup_us_sum")) {
			sum = s->c[i].value;
			continue;
		}
		if (strncmp(name, "setup_us_le_", 12))
			continue;
		if (!any)
			printf("# HELP %s connection setup time, REQ sent or "
			       "received to established\n# TYPE %s "
			       "histogram\n",
			       fam, fam);
		any = true;
		if (!strcmp(name + 12, "inf")) {
			inf = s->c[i].value;
			continue;
		}
		us = strtoull(name + 12, &end, 10);
		if (*end)
			continue;
		/* 2^i us in seconds is exact in six decimals. */
		printf("%s_bucket{le=\"%llu.%06llu\"} %" PRIu64 "\n", fam,
		       us / 1000000, us % 1000000, s->c[i].value);
	}
	if (!any)
		return;
	printf("%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", fam, inf);
	printf("%s_count %" PRIu64 "\n", fam, inf);
	printf("%s_sum %" PRIu64 ".%06" PRIu64 "\n", fam, sum / 1000000,
	       sum % 1000000);
}

struct port_set {
	const char *dev;
	unsigned int port;
	struct mset s;
};

/* Per-port counters, one family per name with a sample per port. */
static void per_port(const struct port_set *ps, size_t n)
{
	if (!n)
		return;
	for (size_t i = 0; i < ps[0].s.n; i++) {
		const char *name = ps[0].s.c[i].name;
		bool gauge = is_gauge(name);

		family_head("cmd_port_", name, gauge, "per-port");
		for (size_t p = 0; p < n; p++)
			for (size_t j = 0; j < ps[p].s.n; j++)
				if (!strcmp(ps[p].s.c[j].name, name))
					sample("cmd_port_", name, gauge,
					       ps[p].dev, ps[p].port,
					       ps[p].s.c[j].value);
	}
}

int cmctl_metrics(struct cmc_channel *ch, enum cmc_counter_scope scope,
		  const char *dev, uint8_t port, bool prometheus)
{
	struct mset global = { 0 };
	struct port_set *ps = NULL;
	const struct cmc_port_info *p;
	size_t nps = 0;
	int rc = 0, err;

	prom_text = prometheus;
	switch (scope) {
	case CMC_COUNTERS_CLIENT:
		err = mset_read(ch, scope, NULL, 0, &global);
		if (err) {
			rc = cmctl_failed("counters --client", err);
			break;
		}
		flat("cmd_client_", &global, "client's");
		break;
	case CMC_COUNTERS_PORT:
		ps = calloc(1, sizeof(*ps));
		if (!ps) {
			rc = cmctl_failed("metrics", -ENOMEM);
			break;
		}
		ps->dev = dev;
		ps->port = port;
		nps = 1;
		err = mset_read(ch, scope, dev, port, &ps->s);
		if (err) {
			rc = cmctl_failed("counters --port", err);
			break;
		}
		per_port(ps, nps);
		break;
	case CMC_COUNTERS_GLOBAL:
		err = mset_read(ch, scope, NULL, 0, &global);
		if (!err)
			err = cmctl_ports_load(ch);
		for (unsigned int i = 0; !err && (p = cmctl_port(i)); i++) {
			struct port_set *t =
				realloc(ps, (nps + 1) * sizeof(*t));

			if (!t) {
				err = -ENOMEM;
				break;
			}
			ps = t;
			memset(&ps[nps], 0, sizeof(ps[nps]));
			ps[nps].dev = p->dev_name;
			ps[nps].port = p->port_num;
			err = mset_read(ch, CMC_COUNTERS_PORT, p->dev_name,
					p->port_num, &ps[nps].s);
			nps++;
			/* A port gone since PORTS is left out. */
			if (err == -ENODEV) {
				free(ps[--nps].s.c);
				err = 0;
			}
		}
		if (err) {
			rc = cmctl_failed("counters", err);
			break;
		}
		flat("cmd_", &global, "daemon");
		conns(&global);
		histogram(&global);
		per_port(ps, nps);
		break;
	}
	if (!rc && !prom_text)
		printf("# EOF\n");
	for (size_t i = 0; i < nps; i++)
		free(ps[i].s.c);
	free(ps);
	free(global.c);
	return rc;
}
