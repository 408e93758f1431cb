// SPDX-License-Identifier: MIT
/*
 * Build-time helper for wireshark/cmd_cm.lua: prints, as Lua, the value
 * names proto/cm_mad.c owns (REJ reasons), so that the dissector shows
 * the words cmmad and the daemon's logs use. gen-lua.sh splices the
 * output in at the template's "-- @CM_NAMES@" line.
 */
#include <stdio.h>
#include <string.h>

#include "cm_mad.h"

static void lua_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

int main(void)
{
	printf("local rej_reason_names = {\n");
	for (unsigned int r = 0; r <= 0xFFFF; r++) {
		const char *s = cm_rej_reason_str(r);

		if (!strcmp(s, "unknown"))
			continue;
		printf("\t[%u] = ", r);
		lua_string(s);
		printf(",\n");
	}
	printf("}\n");
	return 0;
}
