#!/bin/bash
# Fail when a tracked C file is not formatted as .clang-format says (kernel
# style). `scripts/check-format.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(--dry-run --Werror)
[ "${1:-}" = --fix ] && mode=(-i)
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null ||
	find . -name '*.[ch]' -not -path './build*')
[ ${#files[@]} -eq 0 ] && exit 0
clang-format "${mode[@]}" "${files[@]}"
echo "check-format: ${#files[@]} files clean"
