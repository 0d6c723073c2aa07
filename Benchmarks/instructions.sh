#!/usr/bin/env bash
# Instructions per operation on garage-bench's hot paths, counted by valgrind's callgrind: a
# figure that doesn't move with the machine's load, unlike the seconds of a shared 2-core VM.
#
#   Benchmarks/instructions.sh retrieve      # per retrieve by identifier (20k, random order)
#   Benchmarks/instructions.sh park          # per single autosaved park (1k, one commit each)
#   Benchmarks/instructions.sh retrieveAll   # per object of a retrieveAll of 20k objects
#
# For GarageLite and the floor, it runs the --quick workload under callgrind, counting only the
# instructions executed inside the contender's method (--toggle-collect: its thread only, so
# parkAll, whose writer overlaps on another thread, is not measured here), and divides by the
# number of operations. The profiles stay in the printed folder: `callgrind_annotate
# --inclusive=no <file> | head -40` lists where the instructions go, `--tree=caller` who calls.
# Needs valgrind (apt-get install valgrind) and objcopy (binutils).
set -euo pipefail

case "${1:-}" in
    retrieve)    method='8retrieve2id';       filter='random order$';           operations=20000 ;;
    park)        method='4parkyy';            filter='single parks';            operations=1000 ;;
    retrieveAll) method='11retrieveAllSay';   filter='retrieveAll 20k objects$'; operations=20000 ;;
    *) echo "usage: $0 retrieve|park|retrieveAll" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
swift build -c release --product garage-bench >&2
out="$(mktemp -d /tmp/garage-instructions.XXXXXX)"
# valgrind 3.19 can't read the DWARF 5 that Swift 6.3 writes: profile a copy without it (the
# symbol table is enough to name the functions).
objcopy --strip-debug .build/release/garage-bench "$out/garage-bench"
for who in GarageLite floor; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$1-$who.out" \
        --toggle-collect="*ContenderCAA0*P${method}*" \
        "$out/garage-bench" --quick --filter "$filter" --only "$who" >"$out/$1-$who.log" 2>&1
    total=$(grep -o 'I *refs: *[0-9,]*' "$out/$1-$who.log" | tr -dc '0-9')
    printf '%-10s %s: %s instructions per operation (%s in %s operations)\n' \
        "$who" "$1" "$((total / operations))" "$total" "$operations"
done
echo "profiles: $out" >&2
