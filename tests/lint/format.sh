#!/bin/sh
# The C sources are formatted by .clang-format (clang-format 14, Debian 12's).
# Tables that read best as written are fenced by clang-format off/on.
# Fix: git ls-files '*.[ch]' | xargs clang-format -i
# usage: format.sh REPO_DIR
set -eu
cd "${1:?usage: format.sh REPO_DIR}"
files=$(git ls-files 'src/*.[ch]' 'tests/unit/*.[ch]' 'tests/lint/*.c' 'tests/fuzz/*.[ch]' 'bench/*.c' 'bench/*/*.c' 2>/dev/null ||
	find src tests/unit tests/lint tests/fuzz bench -name '*.[ch]')
# shellcheck disable=SC2086 # one word per file
clang-format --dry-run --Werror $files
