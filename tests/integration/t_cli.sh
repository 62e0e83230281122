#!/bin/bash
# The command line: help, version, and one-line errors for bad input.
# as-user: yes
. "$(dirname "$0")/lib.sh"

out=$("$PROCTOR" --help); rc=$?
expect_eq "--help exits 0" 0 $rc
expect_match "--help lists exec" "proctor exec" "$out"
expect_match "--version" "^proctor [0-9]+\.[0-9]+" "$("$PROCTOR" --version)"

err=$("$PROCTOR" frobnicate 2>&1); rc=$?
expect_eq "unknown command exits 2" 2 $rc
expect_match "unknown command named" "unknown command 'frobnicate'" "$err"

err=$("$PROCTOR" exec --bogus -- true 2>&1); rc=$?
expect_eq "unknown option exits 2" 2 $rc
expect_match "unknown option named" "unknown option '--bogus'" "$err"

err=$("$PROCTOR" exec --mode jail -- true 2>&1); rc=$?
expect_eq "unknown mode exits 2" 2 $rc
expect_match "unknown mode named" "unknown mode 'jail'" "$err"

err=$("$PROCTOR" exec --memory lots -- true 2>&1); rc=$?
expect_eq "bad size exits 2" 2 $rc
expect_match "bad size named" "--memory: bad size 'lots'" "$err"

err=$("$PROCTOR" exec 2>&1); rc=$?
expect_eq "empty command exits 2" 2 $rc
expect_match "empty command named" "no command given" "$err"

for mode in local sandbox; do
        err=$("$PROCTOR" exec --mode $mode --workspace "$WORK" -- no-such-command-xyz 2>&1); rc=$?
        expect_eq "$mode: nonexistent command exits 127" 127 $rc
        expect_match "$mode: nonexistent command named" "no-such-command-xyz: No such file" "$err"
        err=$("$PROCTOR" exec --mode $mode --workspace /nonexistent/dir -- true 2>&1); rc=$?
        expect_eq "$mode: nonexistent workspace exits 2" 2 $rc
        expect_match "$mode: nonexistent workspace named" "workspace /nonexistent/dir" "$err"
        expect_eq "$mode: one-line error" 1 "$(printf '%s\n' "$err" | wc -l)"
done
finish
