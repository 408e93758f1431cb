#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gen-lua.sh TEMPLATE OUTPUT FIELDS_C INCDIR NAMES CC [CC_ARGS...]
#
# Preprocess FIELDS_C (cm_fields_lua.c, which includes cm_fields.def from
# INCDIR) with the C compiler and write TEMPLATE to OUTPUT with its
# "-- @CM_FIELDS@" line replaced by the result (one Lua call per field)
# and its "-- @CM_NAMES@" line by what the program NAMES prints.
set -eu
template=$1 output=$2 fields_c=$3 incdir=$4 names=$5
shift 5
tmp="$output.fields"
"$names" >"$output.names"
"$@" -E -P -x c -I "$incdir" "$fields_c" | grep -v '^[[:space:]]*$' >"$tmp"
grep -q '^cm_field(' "$tmp" || { echo "gen-lua.sh: no fields from $fields_c" >&2; exit 1; }
awk -v f="$tmp" -v g="$output.names" '
	/^-- @CM_FIELDS@$/ { while ((getline l < f) > 0) print l; n++; next }
	/^-- @CM_NAMES@$/ { while ((getline l < g) > 0) print l; m++; next }
	{ print }
	END { if (n != 1 || m != 1) exit 1 }' "$template" >"$output"
rm -f "$tmp" "$output.names"
