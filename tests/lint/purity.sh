#!/bin/sh
# The purity rule: in every feature folder of src/ (all but sys/ and cli/),
# a file whose name does not end in _io.c or _io.h touches no file, socket,
# process or clock. It may not include an *_io.h header, an adapter of
# src/sys/, or the headers of the I/O libraries and system calls. The link
# of perfgate_core_link (CMakeLists.txt) checks the same from the other side.
# usage: purity.sh SRC_DIR
set -eu
src=${1:?usage: purity.sh SRC_DIR}
# what a pure file may not include: our I/O headers, then libraries and OS
forbidden='"[a-z]*/[a-z_]*_io\.h"|"sys/|<curl/|<yaml\.h>|<git2|<unistd\.h>|<fcntl\.h>|<dirent\.h>|<spawn\.h>|<poll\.h>|<netdb\.h>|<ftw\.h>|<sys/(socket|epoll|wait|stat|types|prctl|resource|signalfd|timerfd|syscall|mman|time)\.h>|<arpa/|<netinet/|<pthread\.h>|<dlfcn\.h>|<signal\.h>'
# and what it may not call: the clock, files, processes, the environment
calls='(^|[^A-Za-z0-9_.>])(fopen|fdopen|freopen|open|openat|close|read|write|pread|pwrite|socket|connect|accept|fork|vfork|execv|execvp|execve|popen|system|getenv|setenv|clock_gettime|gettimeofday|time|sleep|usleep|nanosleep|kill|dlopen)[[:space:]]*\('
status=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in $(find "$src" -name '*.[ch]' ! -path "$src/sys/*" ! -path "$src/cli/*" ! -name '*_io.[ch]' ! -name '*_io_impl.h' | sort); do
	if grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*($forbidden)" "$f" >"$tmp" 2>/dev/null; then
		sed "s|^|${f#"$src"/}:|; s|\$|: a pure file may not include this (name it *_io.c, or move the I/O to one)|" "$tmp" >&2
		status=1
	fi
	# calls, outside comments and strings (a rough cut: lines starting a
	# comment, and quoted text, are dropped first)
	if sed -e 's|"[^"]*"||g' -e 's|/\*.*\*/||g' -e 's|^[[:space:]]*/\{0,1\}\*.*||' "$f" |
		grep -nE "$calls" >"$tmp" 2>/dev/null; then
		sed "s|^|${f#"$src"/}:|; s|\$|: a pure file may not call this (name it *_io.c, or move the I/O to one)|" "$tmp" >&2
		status=1
	fi
done
exit $status
