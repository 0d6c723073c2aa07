#!/usr/bin/env bash
# Instructions per operation on garage-bench's hot paths, counted by valgrind's callgrind: a
# figure that doesn't move with the machine's load, unlike the seconds of a shared 2-core VM.
#
#   Benchmarks/instructions.sh retrieve      # per retrieve by identifier (20k, random order)
#   Benchmarks/instructions.sh park          # per single autosaved park (1k, one commit each)
#   Benchmarks/instructions.sh retrieveAll   # per object of a retrieveAll of 20k objects
#   Benchmarks/instructions.sh parkAll       # per object of a parkAll of 20k flat objects
#   Benchmarks/instructions.sh encryptedParkAll   # the same, encrypted (GarageLite: a store key)
#   Benchmarks/instructions.sh encryptedRetrieve  # per retrieve by identifier, encrypted
#   Benchmarks/instructions.sh claim         # per row of claim/complete batches of 100 (10k rows)
#   Benchmarks/instructions.sh teams         # per parent of a parkAll of 2k parents × 3 identifiable children
#   Benchmarks/instructions.sh setStatus     # per setSyncStatus (1k, one commit each)
#   Benchmarks/instructions.sh modelRetrieve MODEL     # a model row's retrieve by identifier (20k, shuffled)
#   Benchmarks/instructions.sh modelRetrieveAll MODEL  # per object of a model row's retrieveAll of 20k
#   Benchmarks/instructions.sh modelParkAll MODEL      # per object of a model row's parkAll of 20k (as parkAll)
#     (MODEL: invoice, event, task, reading or profile, garage-bench's model rows; invoice when left out)
#
# For GarageLite and the floor, it runs the --quick workload under callgrind, counting only the
# instructions executed inside the contender's method (--toggle-collect: its thread only, so
# parkAll, whose writer overlaps on another thread, is not measured here), and divides by the
# number of operations. GarageLite's parkAll encodes on the calling thread while another writes
# the rows, so `parkAll` counts every thread (--separate-threads) and prints the two: the
# calling thread's instructions inside parkAll, and the writer thread's. The profiles stay in the printed folder: `callgrind_annotate
# --inclusive=no <file> | head -40` lists where the instructions go, `--tree=caller` who calls.
# Needs valgrind (apt-get install valgrind) and objcopy (binutils). GARAGE_INSTRUCTIONS_ONLY=GarageLite
# counts GarageLite alone (instruction-budget.sh does).
set -euo pipefail

case "${1:-}" in
    retrieve)    method='8retrieve2id';       filter='random order$';           operations=20000 ;;
    park)        method='4parkyy';            filter='single parks, autosave';            operations=1000 ;;
    retrieveAll) method='11retrieveAllSay';   filter='retrieveAll 20k objects$'; operations=20000 ;;
    parkAll)     method='7parkAllyySay';      filter='parkAll 20k flat objects, one call$'; operations=20000 ;;
    encryptedParkAll) method='7parkAllyySay'; filter='parkAll 20k flat objects, one call, encrypted'; operations=20000 ;;
    encryptedRetrieve) method='8retrieve2id'; filter='random order, encrypted'; operations=20000 ;;
    claim)       method='16claimAndComplete5limit'; filter='claim/complete batches of 100 until'; operations=10000 ;;
    teams)       method='7parkAll5teams';     filter='parents × 3'; operations=2000 ;;
    setStatus)   method='9setStatus';         filter='setSyncStatus of'; operations=1000 ;;
    modelRetrieve)    method='8retrieve_2idqd__'; filter="model: ${2:-invoice} *by identifier, shuffled"; operations=20000 ;;
    modelRetrieveAll) method='11retrieveAllySayqd__'; filter="model: ${2:-invoice} *retrieveAll 20k"; operations=20000 ;;
    modelParkAll)     method='7parkAll6modelsySayqd__'; filter="model: ${2:-invoice} *parkAll 20k, one call"; operations=20000 ;;
    *) echo "usage: $0 retrieve|park|retrieveAll|parkAll|encryptedParkAll|encryptedRetrieve|claim|teams|setStatus|modelRetrieve|modelRetrieveAll|modelParkAll [MODEL]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
out="$(mktemp -d /tmp/garage-instructions.XXXXXX)"
# valgrind 3.19 can't read the DWARF 5 that Swift 6.3 writes: profile a copy without it (the
# symbol table is enough to name the functions). GARAGE_INSTRUCTIONS_BINARY names one already
# stripped (instruction-budget.sh's, for all its operations): nothing is built then.
if [ -n "${GARAGE_INSTRUCTIONS_BINARY:-}" ]; then
    ln -s "$GARAGE_INSTRUCTIONS_BINARY" "$out/garage-bench"
else
    swift build -c release --product garage-bench >&2
    objcopy --strip-debug .build/release/garage-bench "$out/garage-bench"
fi
# The instructions of the calling thread inside the contender's method, in a profile of every thread.
inside() {
    callgrind_annotate --inclusive=yes "$1" >"$1.inclusive" 2>/dev/null
    grep -m1 "ContenderCAA0.*P${method}" "$1.inclusive" | tr -d ',' | awk '{print $1}'
}
if [ "$1" = parkAll ] || [ "$1" = encryptedParkAll ] || [ "$1" = teams ] || [ "$1" = modelParkAll ]; then
    for who in ${GARAGE_INSTRUCTIONS_ONLY:-GarageLite floor}; do
        valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/$1-$who.out" \
            "$out/garage-bench" --quick --filter "$filter" --only "$who" >"$out/$1-$who.log" 2>&1
        calling=$(inside "$out/$1-$who.out-01")
        others=0
        for file in "$out/$1-$who.out"-0[2-9]; do
            others=$((others + $(grep -m1 '^summary:' "$file" | awk '{print $2}')))
        done
        printf '%-10s %s: %s instructions per object on the calling thread, %s on the others\n' \
            "$who" "$1" "$((calling / operations))" "$((others / operations))"
    done
    echo "profiles: $out" >&2
    exit 0
fi
for who in ${GARAGE_INSTRUCTIONS_ONLY:-GarageLite floor}; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$1-$who.out" \
        --toggle-collect="*ContenderCAA0*P${method}*" \
        "$out/garage-bench" --quick --filter "$filter" --only "$who" >"$out/$1-$who.log" 2>&1
    total=$(grep -o 'I *refs: *[0-9,]*' "$out/$1-$who.log" | tr -dc '0-9')
    printf '%-10s %s: %s instructions per operation (%s in %s operations)\n' \
        "$who" "$1" "$((total / operations))" "$total" "$operations"
done
echo "profiles: $out" >&2
