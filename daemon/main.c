// SPDX-License-Identifier: MIT
/*
 * cmd: arguments and configuration, then the loop. Everything else lives in
 * the modules main() wires together (cmd.c).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "cmd.h"
#include "cmd_config.h"
#include "handoff.h"
#include "log.h"
#include "util.h"

#define CMD_DEFAULT_SOCKET "/run/cmd/cmd.sock"
#define CMD_MAX_SEL 32

/*
 * Exit status of a configuration error: a bad option or config file
 * line, options that contradict each other, a config file or socket
 * directory that cannot be used. cmd.service names it in
 * RestartPreventExitStatus= (starting again would fail the same way);
 * 1 is any other start-up failure.
 */
#define CMD_EXIT_CONFIG 2

/* The name of the systemd socket unit's socket (FileDescriptorName=). */
#define CMD_LISTEN_FDNAME "cmd.socket"

struct opts {
	struct cmd_config cfg;
	struct xport_port_sel sel[CMD_MAX_SEL];
	char strings[8][PATH_MAX]; /* storage for paths from a config file */
	unsigned int nstrings;
	/*
	 * SIGHUP (see reload_cb): the config file to read again, the level
	 * the command line gave (-1: none; it wins over any file, at start
	 * and on reload) and what the file said on the last reading.
	 */
	const char *config_path;
	int cmdline_level;
	bool file_level_set;
	enum log_level file_level;
	/* authz rules: where the option being applied comes from */
	char origin[PATH_MAX + 16];
	bool resume_set; /* --resume-timeout was given */
	/* Why the last option failed, naming it and the value. */
	char err[PATH_MAX + 256];
};

/* The option's name as the user wrote it, in o->err's messages. */
static const char *opt_where(struct opts *o, const char *name, bool from_file)
{
	static char where[PATH_MAX + 128];

	if (from_file)
		snprintf(where, sizeof(where), "%s: %s", o->origin, name);
	else
		snprintf(where, sizeof(where), "--%s", name);
	return where;
}

static int opt_fail(struct opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int opt_fail(struct opts *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->err, sizeof(o->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmd [OPTION]...\n"
		"Userspace InfiniBand Connection Manager daemon.\n\n"
		"  -c, --config FILE        read options from FILE (key = "
		"value,"
		" keys as below)\n"
		"  -s, --socket PATH        client socket (default %s)\n"
		"  -d, --device DEV[/PORT]  serve this device/port (repeat; "
		"default: all)\n"
		"      --sim HUB            use the simulated fabric at socket "
		"HUB\n"
		"      --node N             sim: this daemon's node number "
		"(1..65535)\n"
		"      --sim-ports N        sim: ports derived from the node "
		"(default 1)\n"
		"      --sim-roce           sim: ports are RoCE (GRH, no "
		"LIDs)\n"
		"  -l, --log-level LEVEL    err, warn, notice, info (default), "
		"debug\n"
		"      --max-held N         REQs held per listener beyond its "
		"backlog (default 64)\n"
		"      --mra-timeout N      service timeout exponent of our "
		"MRAs (default 20)\n"
		"      --packet-life-time N path packet life time exponent "
		"when no SA says\n"
		"                           (default 16)\n"
		"      --sa on|off          IB ports: paths from the subnet "
		"administrator\n"
		"                           (default on; off: from the local "
		"port alone)\n"
		"      --path-lifetime S    seconds an SA path is cached (0: "
		"until a port\n"
		"                           event or cmctl paths --flush; "
		"default 300)\n"
		"      --sa-timeout MS      an SA query attempt's least wait "
		"(default 500)\n"
		"      --sa-retries N       SA query attempts after the first "
		"(default 3)\n"
		"      --cm-response-timeout N  CM response timeout exponent "
		"when a client gives 0 (default 20)\n"
		"      --max-cm-retries N   when a client gives 0 (default "
		"15)\n"
		"      --max-clients N      (default 1024)\n"
		"      --max-ids N          ids per client (default 65536)\n"
		"      --max-queued N       events queued per client "
		"(default 65536)\n"
		"      --listen-allow 'WHO SIDS'  who may LISTEN on which "
		"service ids\n"
		"      --listen-deny 'WHO SIDS'   (repeat; first match wins; "
		"cmd(8))\n"
		"      --max-ids-per-user N       ids of one uid, all its "
		"clients (0: no limit)\n"
		"      --max-listeners-per-user N (default 0: no limit)\n"
		"      --max-held-per-user N      REQs one uid's listeners may "
		"hold (0: no limit)\n"
		"      --pcap FILE          capture CM MADs to FILE (pcap; IB "
		"ports to FILE.ib\n"
		"                           when RoCE ports share the "
		"capture)\n"
		"      --admin-group NAME   members may read all ids, the "
		"global and port\n"
		"                           counters, and start a capture "
		"(as root may)\n"
		"      --state-file FILE    handoff state: written on SIGTERM "
		"and SIGUSR2,\n"
		"                           read at start (default: the "
		"socket's path with\n"
		"                           .state for .sock; '' for none: "
		"SIGTERM then\n"
		"                           tears down)\n"
		"      --resume-timeout S   seconds a restored client has to "
		"come back\n"
		"                           (default 30)\n"
		"  -h, --help               this text\n"
		"  -V, --version            the version\n",
		CMD_DEFAULT_SOCKET);
	fprintf(f,
		"\nWithout --config, %s is read first when it exists.\n"
		"SIGHUP re-reads the config file's log-level.\n",
		CMD_DEFAULT_CONFIG);
}

enum {
	OPT_SIM = 256,
	OPT_NODE,
	OPT_SIM_PORTS,
	OPT_SIM_ROCE,
	OPT_MAX_HELD,
	OPT_MRA_TIMEOUT,
	OPT_PLT,
	OPT_CM_TIMEOUT,
	OPT_CM_RETRIES,
	OPT_MAX_CLIENTS,
	OPT_MAX_IDS,
	OPT_MAX_QUEUED,
	OPT_PCAP,
	OPT_ADMIN_GROUP,
	OPT_LISTEN_ALLOW,
	OPT_LISTEN_DENY,
	OPT_MAX_IDS_USER,
	OPT_MAX_LISTENERS_USER,
	OPT_MAX_HELD_USER,
	OPT_STATE_FILE,
	OPT_RESUME_TIMEOUT,
	OPT_SA,
	OPT_PATH_LIFETIME,
	OPT_SA_TIMEOUT,
	OPT_SA_RETRIES,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "socket", required_argument, NULL, 's' },
	{ "device", required_argument, NULL, 'd' },
	{ "sim", required_argument, NULL, OPT_SIM },
	{ "node", required_argument, NULL, OPT_NODE },
	{ "sim-ports", required_argument, NULL, OPT_SIM_PORTS },
	{ "sim-roce", no_argument, NULL, OPT_SIM_ROCE },
	{ "log-level", required_argument, NULL, 'l' },
	{ "max-held", required_argument, NULL, OPT_MAX_HELD },
	{ "mra-timeout", required_argument, NULL, OPT_MRA_TIMEOUT },
	{ "packet-life-time", required_argument, NULL, OPT_PLT },
	{ "cm-response-timeout", required_argument, NULL, OPT_CM_TIMEOUT },
	{ "max-cm-retries", required_argument, NULL, OPT_CM_RETRIES },
	{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
	{ "max-ids", required_argument, NULL, OPT_MAX_IDS },
	{ "max-queued", required_argument, NULL, OPT_MAX_QUEUED },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "admin-group", required_argument, NULL, OPT_ADMIN_GROUP },
	{ "listen-allow", required_argument, NULL, OPT_LISTEN_ALLOW },
	{ "listen-deny", required_argument, NULL, OPT_LISTEN_DENY },
	{ "max-ids-per-user", required_argument, NULL, OPT_MAX_IDS_USER },
	{ "max-listeners-per-user", required_argument, NULL,
	  OPT_MAX_LISTENERS_USER },
	{ "max-held-per-user", required_argument, NULL, OPT_MAX_HELD_USER },
	{ "state-file", required_argument, NULL, OPT_STATE_FILE },
	{ "resume-timeout", required_argument, NULL, OPT_RESUME_TIMEOUT },
	{ "sa", required_argument, NULL, OPT_SA },
	{ "path-lifetime", required_argument, NULL, OPT_PATH_LIFETIME },
	{ "sa-timeout", required_argument, NULL, OPT_SA_TIMEOUT },
	{ "sa-retries", required_argument, NULL, OPT_SA_RETRIES },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* The long name of an option (getopt's value), for messages. */
static const char *opt_name(int opt)
{
	for (const struct option *l = long_opts; l->name; l++)
		if (l->val == opt)
			return l->name;
	return "?";
}

static int number(struct opts *o, const char *where, const char *arg,
		  unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 0);
	if (errno || !*arg || *end || *arg == '-' || *out > max || *out < min)
		return opt_fail(o, "%s: '%s' is not a number from %lu to %lu",
				where, arg, min, max);
	return 0;
}

static const char *keep(struct opts *o, const char *s)
{
	if (o->nstrings >= ARRAY_SIZE(o->strings))
		return s;
	snprintf(o->strings[o->nstrings], PATH_MAX, "%s", s);
	return o->strings[o->nstrings++];
}

static int config_file(struct opts *o, const char *path);

static const char *const level_names[] = {
	[LOG_LVL_ERR] = "err",	     [LOG_LVL_WARN] = "warn",
	[LOG_LVL_NOTICE] = "notice", [LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

static int level_parse(struct opts *o, const char *where, const char *arg,
		       enum log_level *out)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(level_names); i++)
		if (!strcmp(arg, level_names[i])) {
			*out = (enum log_level)i;
			return 0;
		}
	return opt_fail(o,
			"%s: '%s' is not a log level (err, warn, notice, info, "
			"debug)",
			where, arg);
}

/*
 * --device DEV[/PORT]: the notation of `cmctl ports` and iproute2's `rdma
 * link` (mlx5_0/1); DEV:PORT is still accepted.
 */
static int device_parse(struct opts *o, const char *where, const char *arg,
			struct xport_port_sel *sel)
{
	size_t n = strcspn(arg, "/:");
	unsigned long v;

	if (!n || n >= XPORT_DEV_NAME_MAX)
		return opt_fail(o, "%s: '%s' is not a device name%s", where,
				arg, n ? " (too long)" : "");
	memset(sel, 0, sizeof(*sel));
	memcpy(sel->dev, arg, n);
	sel->dev[n] = '\0';
	if (arg[n]) {
		if (number(o, where, arg + n + 1, 1, 255, &v))
			return opt_fail(o,
					"%s: '%s': the port after '%c' is not "
					"a number from 1 to 255",
					where, arg, arg[n]);
		sel->port_num = (uint8_t)v;
	}
	return 0;
}

/* One option, from the command line or a config file line. */
static int apply(struct opts *o, int opt, const char *arg, bool from_file)
{
	const char *where = opt_where(o, opt_name(opt), from_file);
	struct cmd_config *c = &o->cfg;
	unsigned long v;

	if (from_file && arg)
		arg = keep(o, arg);
	switch (opt) {
	case 'c':
		o->config_path = arg;
		return config_file(o, arg);
	case 's':
		if (!*arg)
			return opt_fail(o, "%s: the path is empty", where);
		c->socket_path = arg;
		return 0;
	case 'd':
		if (c->xport.n_sel >= CMD_MAX_SEL)
			return opt_fail(o, "%s: more than %u devices", where,
					CMD_MAX_SEL);
		if (device_parse(o, where, arg, &o->sel[c->xport.n_sel]))
			return -EINVAL;
		c->xport.n_sel++;
		return 0;
	case OPT_SIM:
		c->xport.kind = XPORT_KIND_SIM;
		c->xport.hub_path = arg;
		return 0;
	case OPT_NODE:
		if (number(o, where, arg, 1, 65535, &v))
			return -EINVAL;
		c->xport.node = (uint16_t)v;
		return 0;
	case OPT_SIM_PORTS:
		if (number(o, where, arg, 1, XPORT_MAX_PORTS, &v))
			return -EINVAL;
		c->xport.sim_port_count = (unsigned int)v;
		return 0;
	case OPT_SIM_ROCE:
		c->xport.sim_roce = true;
		return 0;
	case 'l': {
		enum log_level lvl = LOG_LVL_INFO;

		if (level_parse(o, where, arg, &lvl))
			return -EINVAL;
		if (from_file) {
			o->file_level = lvl;
			o->file_level_set = true;
		} else {
			o->cmdline_level = (int)lvl;
		}
		return 0;
	}
	case OPT_MAX_HELD:
		if (number(o, where, arg, 0, 1u << 20, &v))
			return -EINVAL;
		c->eng.max_held = (unsigned int)v;
		return 0;
	case OPT_MRA_TIMEOUT:
		if (number(o, where, arg, 0, 31, &v))
			return -EINVAL;
		c->eng.mra_service_timeout = (uint8_t)v;
		return 0;
	case OPT_PLT:
		if (number(o, where, arg, 0, 30, &v))
			return -EINVAL;
		c->path.packet_life_time = (uint8_t)v;
		return 0;
	case OPT_SA:
		if (!strcmp(arg, "on"))
			c->sa.off = false;
		else if (!strcmp(arg, "off"))
			c->sa.off = true;
		else
			return opt_fail(o, "%s: '%s' is not on or off", where,
					arg);
		return 0;
	case OPT_PATH_LIFETIME:
		if (number(o, where, arg, 0, 1u << 24, &v))
			return -EINVAL;
		c->sa.lifetime_s = (unsigned int)v;
		return 0;
	case OPT_SA_TIMEOUT:
		if (number(o, where, arg, 1, 60000, &v))
			return -EINVAL;
		c->sa.client.timeout_ms = (unsigned int)v;
		return 0;
	case OPT_SA_RETRIES:
		if (number(o, where, arg, 1, 100, &v))
			return -EINVAL;
		c->sa.client.retries = (unsigned int)v;
		return 0;
	case OPT_CM_TIMEOUT:
		if (number(o, where, arg, 0, 31, &v))
			return -EINVAL;
		c->cm_response_timeout = (uint8_t)v;
		return 0;
	case OPT_CM_RETRIES:
		if (number(o, where, arg, 0, 15, &v))
			return -EINVAL;
		c->max_cm_retries = (uint8_t)v;
		return 0;
	case OPT_MAX_CLIENTS:
		if (number(o, where, arg, 1, 1u << 20, &v))
			return -EINVAL;
		c->max_clients = (unsigned int)v;
		return 0;
	case OPT_MAX_IDS:
		if (number(o, where, arg, 1, 1u << 24, &v))
			return -EINVAL;
		c->max_ids = (unsigned int)v;
		return 0;
	case OPT_MAX_QUEUED:
		if (number(o, where, arg, 1, 1u << 24, &v))
			return -EINVAL;
		c->max_queued = (unsigned int)v;
		return 0;
	case OPT_PCAP:
		if (!*arg)
			return opt_fail(o, "%s: the path is empty", where);
		c->pcap_path = arg;
		return 0;
	case OPT_STATE_FILE:
		c->state_path = arg;
		return 0;
	case OPT_RESUME_TIMEOUT:
		if (number(o, where, arg, 0, 3600, &v))
			return -EINVAL;
		c->resume_ms = (unsigned int)v * 1000;
		o->resume_set = true;
		return 0;
	case OPT_ADMIN_GROUP: {
		/* ops: resolved once, at start (and checked on reload). */
		struct group *g = getgrnam(arg);

		if (!g)
			return opt_fail(o, "%s: no group '%s'", where, arg);
		c->admin_group = arg;
		c->admin_gid = g->gr_gid;
		c->has_admin_gid = true;
		return 0;
	}
	case OPT_LISTEN_ALLOW:
	case OPT_LISTEN_DENY:
		/* authz prints its own reason, naming the origin. */
		if (authz_add_rule(c->authz, opt == OPT_LISTEN_ALLOW, arg,
				   from_file ? o->origin : "command line"))
			return opt_fail(o, "%s: bad rule '%s'", where, arg);
		return 0;
	case OPT_MAX_IDS_USER:
	case OPT_MAX_LISTENERS_USER:
	case OPT_MAX_HELD_USER: {
		struct authz_limits *lim = authz_limits(c->authz);

		if (number(o, where, arg, 0, 1u << 24, &v))
			return -EINVAL;
		*(opt == OPT_MAX_IDS_USER	? &lim->ids :
		  opt == OPT_MAX_LISTENERS_USER ? &lim->listeners :
						  &lim->held) = (unsigned int)v;
		return 0;
	}
	}
	return opt_fail(o, "%s: not an option", where);
}

/*
 * "key = value" lines; '#' starts a comment; keys are the long options.
 * A file that cannot be read as one (missing, a directory, unreadable)
 * is an error naming it and why.
 */
static int config_file(struct opts *o, const char *path)
{
	char line[PATH_MAX + 64];
	unsigned int lineno = 0;
	struct stat st;
	int rc = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return opt_fail(o, "config file %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || S_ISDIR(st.st_mode)) {
		fclose(f);
		return opt_fail(o, "config file %s: %s", path,
				strerror(S_ISDIR(st.st_mode) ? EISDIR : errno));
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *key = line, *val, *end;
		const struct option *opt;

		lineno++;
		snprintf(o->origin, sizeof(o->origin), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			rc = opt_fail(o, "%s: line too long", o->origin);
			break;
		}
		line[strcspn(line, "#\n")] = '\0';
		key += strspn(key, " \t");
		if (!*key)
			continue;
		val = strchr(key, '=');
		end = val ? val : key + strlen(key);
		while (end > key && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (val) {
			*val++ = '\0';
			val += strspn(val, " \t");
			end = val + strlen(val);
			while (end > val && (end[-1] == ' ' || end[-1] == '\t'))
				*--end = '\0';
		}
		for (opt = long_opts; opt->name; opt++)
			if (!strcmp(opt->name, key))
				break;
		if (!opt->name || opt->val == 'c' || opt->val == 'h' ||
		    opt->val == 'V') {
			rc = opt_fail(o, "%s: unknown option '%s'", o->origin,
				      key);
			break;
		}
		if (opt->has_arg && !val) {
			rc = opt_fail(o, "%s: %s: no value ('%s = VALUE')",
				      o->origin, key, key);
			break;
		}
		if (!opt->has_arg && val && *val) {
			rc = opt_fail(o, "%s: %s takes no value, got '%s'",
				      o->origin, key, val);
			break;
		}
		rc = apply(o, opt->val, val, true);
	}
	if (!rc && ferror(f))
		rc = opt_fail(o, "config file %s: %s", path, strerror(EIO));
	fclose(f);
	return rc;
}

/*
 * Options that make no sense together, found after all were read:
 * refused, naming both, rather than one silently ignored.
 */
static int contradictions(struct opts *o)
{
	const struct cmd_config *c = &o->cfg;
	bool sim = c->xport.kind == XPORT_KIND_SIM;

	if (sim && !c->xport.node)
		return opt_fail(o, "--sim needs --node");
	if (!sim && c->xport.node)
		return opt_fail(o, "--node is for --sim: there is no --sim");
	if (!sim && c->xport.sim_port_count)
		return opt_fail(o,
				"--sim-ports is for --sim: there is no --sim");
	if (!sim && c->xport.sim_roce)
		return opt_fail(o,
				"--sim-roce is for --sim: there is no --sim");
	if (sim && c->xport.n_sel)
		return opt_fail(o, "--device and --sim: the simulated fabric "
				   "serves its own ports, not devices");
	if (c->state_path && !c->state_path[0] && o->resume_set)
		return opt_fail(o, "--resume-timeout and --state-file '': "
				   "without a state file nothing resumes");
	return 0;
}

/*
 * systemd socket activation (sd_listen_fds_with_names(3)): exactly one
 * fd, named CMD_LISTEN_FDNAME (cmd.socket's default name; "unknown" when
 * the manager names none, as a re-exec of ourselves does not), and a
 * listening SOCK_SEQPACKET Unix socket. Returns the fd, -1 when nothing
 * was passed, or -EINVAL after saying what was wrong in o->err.
 */
static int inherited_socket(struct opts *o)
{
	char **names = NULL;
	int n, rc;

	n = sd_listen_fds_with_names(1, &names);
	if (n < 0)
		return opt_fail(o, "socket activation: %s", strerror(-n));
	if (n == 0) {
		free(names);
		return -1;
	}
	if (n != 1) {
		rc = opt_fail(o,
			      "socket activation: %d sockets passed "
			      "(LISTEN_FDS), expected one",
			      n);
	} else if (strcmp(names[0], CMD_LISTEN_FDNAME) &&
		   strcmp(names[0], "unknown")) {
		rc = opt_fail(o,
			      "socket activation: the socket passed is named "
			      "'%s' (LISTEN_FDNAMES), expected '%s'",
			      names[0], CMD_LISTEN_FDNAME);
	} else if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1,
				     NULL, 0) <= 0) {
		rc = opt_fail(o,
			      "socket activation: fd %d is not a listening "
			      "SOCK_SEQPACKET Unix socket "
			      "(ListenSequentialPacket=)",
			      SD_LISTEN_FDS_START);
	} else {
		rc = SD_LISTEN_FDS_START;
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/*
 * SIGTERM (systemctl stop and restart): hand over to the next daemon when
 * there is a state file -- every id survives and nothing goes out on the
 * wire; without one, and on SIGINT, tear down: every id is destroyed and
 * its peer told (REJ, DREQ) as its state requires.
 */
static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct cmd *cmd = w->data;
	struct handoff_stats st;

	sd_notify(0, "STOPPING=1");
	if (w->signum == SIGTERM && cmd->cfg.state_path) {
		log_info("signal %d: handing over to the next daemon",
			 w->signum);
		cmd->handed_over = !handoff_save(cmd, cmd->cfg.state_path, &st);
	} else {
		log_info("signal %d: shutting down, destroying every id",
			 w->signum);
	}
	ev_break(loop, EVBREAK_ALL);
}

/* The program to run again on SIGUSR2: the file this one was started
 * from, so that an upgrade installed there runs. */
static char self_path[PATH_MAX];
static char **self_argv;

/*
 * SIGUSR2: upgrade in place. Hand over as SIGTERM does, then exec the
 * program at the path we were started from, with the same arguments and
 * the same client socket (as an inherited one, LISTEN_FDS): the PID does
 * not change, so systemd's view of the service does not either, and the
 * successor says READY=1 again. If the exec fails we carry on as the
 * successor would: the state is read back.
 */
static void reexec_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct cmd *cmd = w->data;
	struct handoff_stats st;
	char pid[32];
	int lfd;

	if (!cmd->cfg.state_path || !self_path[0]) {
		log_warn("SIGUSR2: no state file, no upgrade in place");
		return;
	}
	sd_notify(0, "RELOADING=1");
	lfd = srv_listen_fd(cmd->srv);
	if (handoff_save(cmd, cmd->cfg.state_path, &st)) {
		log_err("SIGUSR2: handoff failed, tearing down");
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	cmd->handed_over = true;
	/* The listening socket becomes fd 3, inherited (sd_listen_fds). */
	if (lfd != 3 && dup2(lfd, 3) < 0) {
		log_err("SIGUSR2: dup2: %s", strerror(errno));
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	fcntl(3, F_SETFD, 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "1", 1);
	setenv("LISTEN_FDNAMES", CMD_LISTEN_FDNAME, 1);
	log_notice("SIGUSR2: running %s", self_path);
	execv(self_path, self_argv);
	log_err("SIGUSR2: exec %s: %s; exiting", self_path, strerror(errno));
	ev_break(loop, EVBREAK_ALL);
}

/* Defaults, before any file or option. */
static int opts_init(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cfg.socket_path = CMD_DEFAULT_SOCKET;
	o->cfg.listen_fd = -1;
	o->cfg.xport.kind = XPORT_KIND_UMAD;
	o->cfg.xport.sel = o->sel;
	o->cfg.eng.max_held = 64;
	o->cfg.eng.mra_service_timeout = 20;
	o->cfg.path.packet_life_time = 16; /* rdma_cm's RoCE default */
	o->cfg.path.hop_limit = XPORT_DEFAULT_HOP_LIMIT;
	o->cfg.path.packet_rate = 3; /* 10 Gb/s: IBTA Table 224 code 3 */
	/* ibacm keeps routes until an event too; five minutes bounds how
	 * long a path the SA has since changed (a QoS SL, say) is used. */
	o->cfg.sa.lifetime_s = 300;
	o->cfg.cm_response_timeout = 20;
	o->cfg.max_cm_retries = 15;
	o->cfg.max_clients = 1024;
	o->cfg.max_ids = 65536;
	o->cfg.max_queued = 65536;
	o->cfg.resume_ms = 30000;
	o->cmdline_level = -1;
	o->cfg.authz = authz_new();
	return o->cfg.authz ? 0 : -ENOMEM;
}

/*
 * SIGHUP: read the config file again, every line checked as at start
 * into a scratch copy, and apply what is safe to change in a running
 * daemon, which today is the log level (the command line's --log-level
 * still wins; a file without log-level means info). Ports, the socket,
 * limits, timeouts and the capture keep their start-up values: changing
 * them needs a restart (docs/OPERATIONS.md). A file with any error
 * changes nothing and the warning names the option and the value.
 * Contradictions are not looked for: the file alone is read here, and
 * the command line may give the other half (--sim for a file's node).
 */
static void reload_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct opts *o = w->data, *n;
	enum log_level lvl;

	if (!o->config_path) {
		log_notice("SIGHUP: no config file to re-read");
		return;
	}
	sd_notify(0, "RELOADING=1");
	n = malloc(sizeof(*n));
	if (!n || opts_init(n)) {
		log_warn("SIGHUP: out of memory, nothing changed");
	} else if (config_file(n, o->config_path) ||
		   (authz_set_listener_held(n->cfg.authz,
					    n->cfg.eng.max_held) &&
		    opt_fail(n, "%s: max-held-per-user is below max-held",
			     o->config_path))) {
		log_warn("SIGHUP: %s; nothing changed", n->err);
	} else {
		o->file_level_set = n->file_level_set;
		o->file_level = n->file_level;
		lvl = o->cmdline_level >= 0 ? (enum log_level)o->cmdline_level :
		      o->file_level_set	    ? o->file_level :
					      LOG_LVL_INFO;
		log_set_level(lvl);
		log_notice("SIGHUP: re-read %s: log level %s%s", o->config_path,
			   level_names[lvl],
			   o->cmdline_level >= 0 ? " (from the command line)" :
						   "");
	}
	if (n)
		authz_free(n->cfg.authz);
	free(n);
	sd_notify(0, "READY=1");
}

/*
 * The watchdog (WatchdogSec= in cmd.service): WATCHDOG=1 from the loop
 * itself at half the interval systemd gave, so that a loop that stops
 * turning (stuck in a handler, SIGSTOPped) stops the pings and systemd
 * kills and restarts the daemon.
 */
static void watchdog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	sd_notify(0, "WATCHDOG=1");
}

/* Is there a -c/--config among the arguments? (a first, quiet pass) */
static bool has_config_arg(int argc, char **argv)
{
	bool found = false;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "c:s:d:l:hV", long_opts, NULL)) !=
	       -1)
		found |= opt == 'c';
	opterr = 1;
	optind = 0; /* glibc: start over, re-initialised */
	return found;
}

/*
 * What happened to each port. 'served' false: only the ports that could
 * not be served (start-up failed; a "serving" line would mislead).
 */
static void report_ports(const struct xport_open_report *r, bool served)
{
	for (unsigned int i = 0; i < r->n; i++) {
		const struct xport_port_result *p = &r->port[i];
		const struct log_ctx ctx = { .device = p->dev,
					     .port = p->port_num };

		if (p->served && served)
			log_ctx_at(LOG_LVL_INFO, &ctx,
				   "%s port %u: serving (port index %u)",
				   p->dev, p->port_num, p->index);
		else if (!p->served)
			/* The message names the device and port. */
			log_ctx_at(LOG_LVL_ERR, &ctx, "%s", p->message);
	}
}

/* A configuration error at start: why, then where to read more. */
static int config_error(const struct opts *o)
{
	if (o->err[0])
		log_err("cmd: %s", o->err);
	log_err("Try 'cmd --help' for more information.");
	return CMD_EXIT_CONFIG;
}

/* The directory the socket is to be bound in must be there. */
static int socket_dir_check(struct opts *o)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;

	slash = strrchr(o->cfg.socket_path, '/');
	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s",
		 (int)(slash == o->cfg.socket_path ?
			       1 :
			       slash - o->cfg.socket_path),
		 o->cfg.socket_path);
	if (stat(dir, &st))
		return opt_fail(o, "--socket %s: directory %s: %s",
				o->cfg.socket_path, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return opt_fail(o, "--socket %s: %s is not a directory",
				o->cfg.socket_path, dir);
	return 0;
}

int main(int argc, char **argv)
{
	static struct opts o;
	static struct xport_open_report report;
	static struct cmd cmd;
	struct ev_loop *loop;
	ev_signal sigint, sigterm, sighup, sigusr2;
	ev_timer watchdog;
	uint64_t watchdog_usec = 0;
	char status[128];
	int opt, rc;

	/* First: under systemd, every line from here on has a priority. */
	log_setup_systemd();
	self_argv = argv;
	if (!realpath("/proc/self/exe", self_path))
		self_path[0] = 0;
	if (opts_init(&o)) {
		log_err("cmd: out of memory");
		return 1;
	}

	/*
	 * The default config file, when it exists and no --config is given,
	 * is read before the command line so that options given there win.
	 */
	if (!has_config_arg(argc, argv) &&
	    access(CMD_DEFAULT_CONFIG, F_OK) == 0) {
		o.config_path = CMD_DEFAULT_CONFIG;
		if (config_file(&o, CMD_DEFAULT_CONFIG))
			return config_error(&o);
	}

	/* getopt's own messages would name argv[0], not "cmd": ours. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:s:d:l:hV", long_opts,
				  NULL)) != -1) {
		if (opt == ':') {
			opt_fail(&o, "%s: needs a value", argv[optind - 1]);
			return config_error(&o);
		}
		if (opt == '?') {
			if (optopt)
				opt_fail(&o, "unknown option '-%c'", optopt);
			else
				opt_fail(&o, "unknown option '%s'",
					 argv[optind - 1]);
			return config_error(&o);
		}
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == 'V') {
			printf("cmd %s\n", CMD_VERSION);
			return 0;
		}
		if (apply(&o, opt, optarg, false))
			return config_error(&o);
	}
	if (optind < argc) {
		opt_fail(&o, "unexpected argument '%s'", argv[optind]);
		return config_error(&o);
	}
	if (contradictions(&o))
		return config_error(&o);
	log_set_level(o.cmdline_level >= 0 ? (enum log_level)o.cmdline_level :
		      o.file_level_set	   ? o.file_level :
					     LOG_LVL_INFO);
	if (!o.cfg.xport.sim_port_count)
		o.cfg.xport.sim_port_count = 1;
	if (!o.cfg.state_path) {
		/* Beside the socket, named after it: /run/cmd/cmd.sock's is
		 * /run/cmd/cmd.state. */
		static char state_path[PATH_MAX];
		size_t n = strlen(o.cfg.socket_path);

		if (n > 5 && !strcmp(o.cfg.socket_path + n - 5, ".sock"))
			n -= 5;
		snprintf(state_path, sizeof(state_path), "%.*s.state", (int)n,
			 o.cfg.socket_path);
		o.cfg.state_path = state_path;
	} else if (!o.cfg.state_path[0]) {
		o.cfg.state_path = NULL;
	}
	if (authz_set_listener_held(o.cfg.authz, o.cfg.eng.max_held)) {
		o.err[0] = '\0'; /* authz said why */
		return config_error(&o);
	}
	o.cfg.listen_fd = inherited_socket(&o);
	if (o.cfg.listen_fd < -1)
		return config_error(&o);
	if (o.cfg.listen_fd < 0 && socket_dir_check(&o))
		return config_error(&o);
	signal(SIGPIPE, SIG_IGN);

	loop = ev_default_loop(EVFLAG_AUTO);
	rc = cmd_init(&cmd, loop, &o.cfg, &report);
	report_ports(&report, !rc);
	if (rc) {
		bool served = false;

		for (unsigned int i = 0; i < report.n; i++)
			served |= report.port[i].served;
		/* With ports looked at and none served, the lines above say
		 * why; the errno of the last one would only mislead. */
		if (report.n && !served)
			log_err("cmd: cannot start: no port could be served");
		else
			log_err("cmd: cannot start: %s", strerror(-rc));
		return 1;
	}
	ev_signal_init(&sigint, stop_cb, SIGINT);
	ev_signal_init(&sigterm, stop_cb, SIGTERM);
	ev_signal_init(&sigusr2, reexec_cb, SIGUSR2);
	sigint.data = sigterm.data = sigusr2.data = &cmd;
	ev_signal_start(loop, &sigint);
	ev_signal_start(loop, &sigterm);
	ev_signal_start(loop, &sigusr2);
	ev_signal_init(&sighup, reload_cb, SIGHUP);
	sighup.data = &o;
	ev_signal_start(loop, &sighup);
	/* WATCHDOG_USEC/WATCHDOG_PID: left set, a re-exec keeps them. */
	if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec) {
		double half = (double)watchdog_usec / 2e6;

		ev_timer_init(&watchdog, watchdog_cb, half, half);
		ev_timer_start(loop, &watchdog);
		log_info("watchdog: WATCHDOG=1 every %.3f s", half);
	}
	{
		const struct authz_limits *lim = authz_limits(o.cfg.authz);

		log_info("authorization: %u listen rule(s); per user: ids %u, "
			 "listeners %u, held REQs %u (0: no limit)",
			 authz_rule_count(o.cfg.authz), lim->ids,
			 lim->listeners, lim->held);
	}
	log_info("cmd %s: serving %u port(s) on %s", CMD_VERSION,
		 xport_port_count(cmd.xport),
		 o.cfg.listen_fd >= 0 ? "an inherited socket" :
					o.cfg.socket_path);
	/*
	 * READY only now: cmd_init has registered every configured port
	 * that can be served (umad_register is synchronous in xport_open;
	 * those that cannot were logged above) and bound or inherited the
	 * client socket, so a client started after us can connect.
	 */
	snprintf(status, sizeof(status), "READY=1\nSTATUS=serving %u port(s)",
		 xport_port_count(cmd.xport));
	sd_notify(0, status);
	ev_run(loop, 0);
	cmd_fini(&cmd);
	authz_free(o.cfg.authz);
	return 0;
}
