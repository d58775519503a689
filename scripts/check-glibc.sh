#!/usr/bin/env bash
# usage: scripts/check-glibc.sh BINARY [MAX]
# Fails when BINARY needs a glibc symbol version newer than MAX (default
# 2.17, the glibc of RHEL/CentOS 7): such a binary stops on an older machine
# with "version `GLIBC_2.xx' not found". Reads the dynamic symbol table with
# `objdump -T`. A statically linked binary (none listed) passes.
set -euo pipefail
bin="${1:?usage: scripts/check-glibc.sh BINARY [MAX]}"
max="${2:-2.17}"
table="$(objdump -T "$bin")" || { echo "glibc check: objdump cannot read '$bin'" >&2; exit 1; }
versions="$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$table" | sed 's/^GLIBC_//' | sort -uV || true)"
newest="$(tail -n1 <<<"$versions")"
if [ -z "$newest" ]; then
  echo "glibc check: $bin needs no versioned glibc symbols"
  exit 0
fi
too_new="$(awk -v max="$max" 'BEGIN{split(max,m,".")} {split($0,v,"."); for(i=1;i<=3;i++){a=v[i]+0;b=m[i]+0; if(a>b){print;next} if(a<b)next}}' <<<"$versions")"
if [ -n "$too_new" ]; then
  echo "glibc check FAILED: $bin needs glibc newer than $max:" >&2
  for v in $too_new; do
    grep -F "GLIBC_$v)" <<<"$table" | awk -v v="$v" '{print "  GLIBC_" v ": " $NF}' >&2
  done
  exit 1
fi
echo "glibc check: $bin: newest symbol version GLIBC_$newest (limit GLIBC_$max): ok"
