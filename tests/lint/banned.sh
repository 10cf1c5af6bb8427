#!/bin/sh
# Fails when src/ calls a function from the banned list (git's banned.h plus
# curl's checksrc list): unbounded copies, unchecked conversions, non-reentrant
# time functions.
set -u
dir=${1:?usage: banned.sh SRC_DIR}
banned='strcpy|strcat|strncpy|strncat|sprintf|vsprintf|gets|atoi|atol|atoll|atof|strtok|gmtime|localtime|ctime|asctime|mktemp|tmpnam|tempnam|rand|srand'
hits=$(grep -rnE "(^|[^_a-zA-Z0-9.>])($banned)[[:space:]]*\(" "$dir" --include='*.c' --include='*.h' |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)')
if [ -n "$hits" ]; then
	echo "banned functions used:"
	echo "$hits"
	exit 1
fi
echo "no banned functions in $dir"
