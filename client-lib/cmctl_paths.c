// SPDX-License-Identifier: MIT
/*
 * `cmctl paths`: the daemon's cache of the SA's PathRecords (PATHS), as a
 * table or JSON, and `cmctl paths --flush [--port DEV/PORT]`, which drops
 * every port's entries or one port's (root and the admin group only).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cmctl.h"
#include "util.h"

/*
 * IBTA Table 224's static rate codes (enum ibv_rate's numbers), in tenths
 * of Gb/s; 0 for a code it does not name (the SA does not set one).
 */
static unsigned int rate_tenths(uint8_t rate)
{
	static const unsigned int t[] = {
		[2] = 25,    [3] = 100,	  [4] = 300,	[5] = 50,
		[6] = 200,   [7] = 400,	  [8] = 600,	[9] = 800,
		[10] = 1200, [11] = 140,  [12] = 560,	[13] = 1120,
		[14] = 1680, [15] = 250,  [16] = 1000,	[17] = 2000,
		[18] = 3000, [19] = 280,  [20] = 500,	[21] = 4000,
		[22] = 6000, [23] = 8000, [24] = 12000,
	};

	return rate < ARRAY_SIZE(t) ? t[rate] : 0;
}

/* "2.5Gb/s", "100Gb/s", or "?" for an unknown code. */
static void rate_str(uint8_t rate, char *buf, size_t size)
{
	unsigned int t = rate_tenths(rate);

	if (!t)
		snprintf(buf, size, "?");
	else if (t % 10)
		snprintf(buf, size, "%u.%uGb/s", t / 10, t % 10);
	else
		snprintf(buf, size, "%uGb/s", t / 10);
}

/* enum ibv_mtu (1 = 256 ... 5 = 4096) in bytes; 0 when unknown. */
static unsigned int mtu_bytes(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

/* What was asked: lid:N when by LID, else the GID. */
static void dest_str(const struct cmc_path_entry *e, char *buf, size_t size)
{
	if (e->asked_dlid)
		snprintf(buf, size, "lid:%u", e->asked_dlid);
	else
		cmctl_gid_str(e->asked_dgid, buf, size);
}

static json_object *path_json(const struct cmc_path_entry *e)
{
	json_object *o = json_object_new_object();
	char buf[CMC_DEV_NAME_SIZE + 8];
	unsigned int rate = rate_tenths(e->rate);

	snprintf(buf, sizeof(buf), "%.*s/%u", CMC_DEV_NAME_SIZE - 1,
		 e->dev_name, e->port_num);
	json_object_object_add(o, "port", json_object_new_string(buf));
	json_object_object_add(o, "port_index",
			       json_object_new_int(e->port_index));
	dest_str(e, buf, sizeof(buf));
	json_object_object_add(o, "destination", json_object_new_string(buf));
	json_object_object_add(o, "asked_dlid",
			       json_object_new_int(e->asked_dlid));
	cmctl_gid_str(e->asked_dgid, buf, sizeof(buf));
	json_object_object_add(o, "asked_dgid", json_object_new_string(buf));
	json_object_object_add(o, "slid", json_object_new_int(e->slid));
	json_object_object_add(o, "dlid", json_object_new_int(e->dlid));
	cmctl_gid_str(e->sgid, buf, sizeof(buf));
	json_object_object_add(o, "sgid", json_object_new_string(buf));
	cmctl_gid_str(e->dgid, buf, sizeof(buf));
	json_object_object_add(o, "dgid", json_object_new_string(buf));
	snprintf(buf, sizeof(buf), "0x%04x", e->pkey);
	json_object_object_add(o, "pkey", json_object_new_string(buf));
	json_object_object_add(o, "sl", json_object_new_int(e->sl));
	json_object_object_add(o, "mtu",
			       json_object_new_int((int)mtu_bytes(e->mtu)));
	json_object_object_add(o, "rate", json_object_new_int(e->rate));
	json_object_object_add(o, "rate_gbps",
			       rate ? json_object_new_double(rate / 10.0) :
				      NULL);
	json_object_object_add(o, "packet_life_time",
			       json_object_new_int(e->packet_life_time));
	json_object_object_add(o, "hop_limit",
			       json_object_new_int(e->hop_limit));
	json_object_object_add(o, "tclass", json_object_new_int(e->tclass));
	json_object_object_add(o, "flow_label",
			       json_object_new_int((int)e->flow_label));
	if (e->has_alt) {
		json_object *alt = json_object_new_object();

		json_object_object_add(alt, "slid",
				       json_object_new_int(e->alt_slid));
		json_object_object_add(alt, "dlid",
				       json_object_new_int(e->alt_dlid));
		json_object_object_add(o, "alternate", alt);
	} else {
		json_object_object_add(o, "alternate", NULL);
	}
	json_object_object_add(o, "age_s", json_object_new_uint64(e->age_s));
	/* null: the entry never expires (--path-lifetime 0). */
	json_object_object_add(
		o, "expires_s",
		e->expires_s ? json_object_new_uint64(e->expires_s) : NULL);
	json_object_object_add(o, "hits", json_object_new_uint64(e->hits));
	return o;
}

static void path_text(const struct cmc_path_entry *e)
{
	char port[CMC_DEV_NAME_SIZE + 8], dest[48], mtu[8], rate[16], exp[16];

	snprintf(port, sizeof(port), "%.*s/%u", CMC_DEV_NAME_SIZE - 1,
		 e->dev_name, e->port_num);
	dest_str(e, dest, sizeof(dest));
	if (mtu_bytes(e->mtu))
		snprintf(mtu, sizeof(mtu), "%u", mtu_bytes(e->mtu));
	else
		snprintf(mtu, sizeof(mtu), "-");
	rate_str(e->rate, rate, sizeof(rate));
	if (e->expires_s)
		snprintf(exp, sizeof(exp), "%" PRIu32, e->expires_s);
	else
		snprintf(exp, sizeof(exp), "never");
	printf("%-12s %-39s %-6u %-2u %-5s %-8s %-3u 0x%04x %-7" PRIu32
	       " %-7s %" PRIu64 "\n",
	       port, dest, e->dlid, e->sl, mtu, rate, e->packet_life_time,
	       e->pkey, e->age_s, exp, e->hits);
	if (e->has_alt)
		printf("%-12s %-39s %-6u (alternate, SLID %u)\n", "", "",
		       e->alt_dlid, e->alt_slid);
}

/* --flush [--port DEV/PORT]: how many went. */
static int paths_flush(struct cmc_channel *ch, bool json, const char *dev,
		       uint8_t port)
{
	const struct cmc_port_info *p = NULL;
	char name[CMC_DEV_NAME_SIZE + 8] = "";
	int rc;

	if (dev) {
		rc = cmctl_ports_load(ch);
		if (rc)
			return cmctl_failed("ports", rc);
		for (unsigned int i = 0; (p = cmctl_port(i)); i++)
			if (p->port_num == port && !strcmp(p->dev_name, dev))
				break;
		snprintf(name, sizeof(name), "%s/%u", dev, port);
		if (!p) {
			fprintf(stderr,
				"cmctl: paths --flush: the daemon serves no "
				"port %s (cmctl ports lists them)\n",
				name);
			return 1;
		}
	}
	rc = cmc_paths_flush(ch, p ? p->port_index : -1);
	if (rc < 0)
		return cmctl_failed("paths --flush", rc);
	if (json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "flushed", json_object_new_int(rc));
		json_object_object_add(o, "port",
				       p ? json_object_new_string(name) : NULL);
		cmctl_json_print(o);
	} else {
		printf("flushed %d path cache entr%s%s%s\n", rc,
		       rc == 1 ? "y" : "ies", p ? " of " : "", name);
	}
	return 0;
}

int cmctl_paths(struct cmc_channel *ch, bool json, bool flush, const char *dev,
		uint8_t port)
{
	struct cmc_path_entry e[CMC_PATHS_BATCH_MAX];
	json_object *arr;
	uint64_t cursor = 0;
	int n;

	if (flush)
		return paths_flush(ch, json, dev, port);
	arr = json ? json_object_new_array() : NULL;
	if (!json)
		printf("%-12s %-39s %-6s %-2s %-5s %-8s %-3s %-6s %-7s %-7s "
		       "%s\n",
		       "PORT", "DESTINATION", "DLID", "SL", "MTU", "RATE",
		       "PLT", "PKEY", "AGE_S", "EXPIRES", "HITS");
	do {
		n = cmc_paths(ch, 0, &cursor, e);
		if (n < 0) {
			json_object_put(arr);
			return cmctl_failed("paths", n);
		}
		for (int i = 0; i < n; i++) {
			if (json)
				json_object_array_add(arr, path_json(&e[i]));
			else
				path_text(&e[i]);
		}
	} while (n > 0 && cursor);
	if (json)
		cmctl_json_print(arr);
	return 0;
}
