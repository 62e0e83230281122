#!/bin/sh
# Runs each fuzz harness given (built with tests/fuzz/driver.c) on its
# corpus, tests/fuzz/corpus/NAME, and COUNT generated inputs; prints a
# closing tally. A harness that aborts fails the run; the input that did
# it is left beside the harness, in NAME.crash.
count=$1; shift
pass=0; fail=0
for f in "$@"; do
        name=${f##*/}
        if "$f" -n "$count" -o "$f.crash" "tests/fuzz/corpus/$name"; then
                pass=$((pass + 1))
        else
                fail=$((fail + 1)); echo "FAILED: $f" >&2
        fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
