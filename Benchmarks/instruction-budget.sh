#!/usr/bin/env bash
# Fails when a retrieve by identifier, a retrieveAll object, a single park, a parkAll object or a claimed row of GarageLite
# (or a model row's operation, OPERATION:MODEL, when the budgets list one) executes
# more instructions than Benchmarks/instruction-budgets allows: a guard of the speed that doesn't
# depend on the machine's load (callgrind counts instructions, not seconds). CI runs it; about two
# minutes on this 2-core machine.
#
#   Benchmarks/instruction-budget.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Built and stripped once, for every operation; or the stripped release build
# GARAGE_INSTRUCTIONS_BINARY names (CI's, which runs this beside the tests: nothing built here).
if [ -z "${GARAGE_INSTRUCTIONS_BINARY:-}" ]; then
    swift build -c release --product garage-bench >&2
    binary="$(mktemp -d /tmp/garage-budget.XXXXXX)/garage-bench"
    objcopy --strip-debug .build/release/garage-bench "$binary"
    export GARAGE_INSTRUCTIONS_BINARY="$binary"
fi

failed=0
while read -r operation budget _; do
    case "$operation" in ''|'#'*) continue ;; esac
    # "modelRetrieveAll:event" is instructions.sh's modelRetrieveAll of the event model.
    output="$(GARAGE_INSTRUCTIONS_ONLY=GarageLite Benchmarks/instructions.sh ${operation/:/ } 2>&1 || true)"
    line="$(grep '^GarageLite' <<<"$output" || true)"
    if [ -z "$line" ]; then
        echo "no count for $operation: Benchmarks/instructions.sh $operation said" >&2
        tail -5 <<<"$output" >&2
        failed=1
        continue
    elif [ "$operation" = parkAll ] || [ "${operation%%:*}" = modelParkAll ]; then
        # parkAll: the calling thread's instructions and the writer's, per object.
        count=$(( $(awk '{print $3}' <<<"$line") + $(awk '{print $(NF-3)}' <<<"$line") ))
    else
        count=$(awk '{print $3}' <<<"$line")
    fi
    if [ -z "$count" ] || [ "$count" -gt "$budget" ]; then
        echo "over budget: $operation counts ${count:-nothing} instructions per operation, its budget is $budget ($line)" >&2
        failed=1
    else
        echo "within budget: $operation $count instructions per operation (budget $budget)"
    fi
done < "${GARAGE_INSTRUCTION_BUDGETS:-Benchmarks/instruction-budgets}"
exit "$failed"
