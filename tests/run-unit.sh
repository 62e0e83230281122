#!/bin/bash
# Runs each cmocka unit-test binary given, JOBS at a time (default: twice
# the CPUs); prints a line per binary with its time, the whole output of
# those that fail, and a closing tally.
jobs=${JOBS:-$(($(nproc) * 2))}
out=$(mktemp -d /tmp/proctor-unit.XXXXXX)
trap 'rm -rf "$out"' EXIT

one() { # INDEX BINARY
        local start=$SECONDS
        "$2" >"$out/$1.log" 2>&1
        echo "$? $((SECONDS - start))" >"$out/$1.rc"
}

i=0
for t in "$@"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        one "$i" "$t" &
        i=$((i + 1))
done
wait

pass=0 fail=0 i=0
for t in "$@"; do
        read -r rc took <"$out/$i.rc"
        if [ "$rc" -eq 0 ]; then
                pass=$((pass + 1))
                echo "ok   $t ${took}s"
        else
                fail=$((fail + 1))
                echo "FAIL $t ${took}s"
                sed 's/^/     | /' "$out/$i.log"
        fi
        i=$((i + 1))
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
