#!/usr/bin/env bash
# Coverage-guided fuzzing of GarageLite with libFuzzer (Fuzz/README.md).
#
#   Fuzz/run.sh [SECONDS] [TARGET...]    each target for SECONDS (60 by default); every target by default
#
# Builds garage-fuzz for libFuzzer with AddressSanitizer in .build-fuzz, then fuzzes each target
# for SECONDS from its committed corpus (Fuzz/corpus/TARGET) and its regressions
# (Fuzz/regressions/TARGET), growing a working corpus kept between runs in
# .build-fuzz/corpus/TARGET. A finding (a crash, a sanitizer report, a timeout, a leak) stops the
# run with status 1 and leaves its input in .build-fuzz/findings/TARGET/: copy it to
# Fuzz/regressions/TARGET/ (the tests replay it on every run), then fix the code.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(records row garagestorage where importline query); fi

# GARAGE_FUZZ_SCRATCH names the build folder (.build-fuzz by default). CI passes .build, once
# the tests are done with it: SwiftPM then compiles the Swift modules again with the sanitizers
# but keeps the C libraries it built for the tests (BoringSSL: minutes of a 2-core machine).
scratch="${GARAGE_FUZZ_SCRATCH:-.build-fuzz}"
swift build --product garage-fuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DGARAGE_LIBFUZZER >&2
fuzzer="$scratch/debug/garage-fuzz"

for target in "${targets[@]}"; do
    work=".build-fuzz/corpus/$target"
    findings=".build-fuzz/findings/$target"
    mkdir -p "$work" "$findings"
    log=".build-fuzz/$target.log"
    # A store file is ~20 kB: the GarageStorage target takes inputs that long.
    max_len=4096
    if [ "$target" = garagestorage ]; then max_len=65536; fi
    status=0
    # -detect_leaks=0: LeakSanitizer can't follow a pointer that Swift keeps with tag bits in its
    # spare bits (an indirect enum's payload, as QueryShape's cache holds): it reported those as
    # leaked. A real leak still shows as growth, which -rss_limit_mb stops.
    ASAN_OPTIONS=detect_leaks=0 GARAGE_FUZZ_TARGET="$target" "$fuzzer" "$work" "Fuzz/corpus/$target" "Fuzz/regressions/$target" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=4096 -detect_leaks=0 \
        -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || status=$?
    runs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "$target: ${runs:-?} inputs in ${seconds} s, working corpus $(ls "$work" | wc -l) files, exit status $status (log: $log)"
    if [ "$status" -ne 0 ]; then
        tail -40 "$log" >&2
        echo "$target: a finding is in $findings/" >&2
        exit 1
    fi
done
