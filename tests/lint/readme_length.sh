#!/bin/sh
# README.md stays short: at most the lines LIMIT_FILE allows (its first
# word). Over it, one line saying by how much and where detail belongs.
# usage: readme_length.sh README LIMIT_FILE
set -eu
readme=${1:?usage: readme_length.sh README LIMIT_FILE}
limit_file=${2:?usage: readme_length.sh README LIMIT_FILE}
limit=$(sed -n '1s/^\([0-9][0-9]*\).*/\1/p' "$limit_file")
if [ -z "$limit" ]; then
	echo "readme_length.sh: $limit_file: the first line must be the limit, a number" >&2
	exit 2
fi
lines=$(wc -l <"$readme")
if [ "$lines" -gt "$limit" ]; then
	echo "$readme: $lines lines, $((lines - limit)) over the $limit of $limit_file: move detail to docs/ (or raise the limit there, and say why)" >&2
	exit 1
fi
echo "$readme: $lines lines (at most $limit)"
