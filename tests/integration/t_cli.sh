#!/bin/bash
# The command line: help, version, and one-line errors for bad input; the
# supervisor's refusal of a terminal it cannot draw on.
# as-user: yes
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

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

# every command's --help: its usage on stdout, nothing on stderr, exit 0
for c in "" run exec doctor replay "replay --summary"; do
        out=$("$PROCTOR" $c --help 2>"$WORK/help.err"); rc=$?
        expect_eq "proctor $c --help exits 0" 0 $rc
        if [ -n "$c" ]; then want="^usage: proctor $c"; else want="^  proctor \[options\] +the supervisor"; fi
        expect_match "proctor $c --help prints its usage" "$want" "$out"
        expect_eq "proctor $c --help: nothing on stderr" "" "$(cat "$WORK/help.err")"
done
out=$("$PROCTOR" --theme mono --help); rc=$?
expect_eq "the supervisor's own --help exits 0" 0 $rc
expect_match "the supervisor's own --help" "^usage: proctor \[options\]" "$out"
expect_match "the supervisor's --help names --theme" "--theme NAME\|PATH" "$out"
expect_match "replay --help names --speed" "--speed N\|max" "$("$PROCTOR" replay --help)"
expect_match "replay --help names its keys" "space pauses" "$("$PROCTOR" replay --help)"
err=$("$PROCTOR" replay 2>&1); rc=$?
expect_eq "replay without a trace exits 2" 2 $rc
expect_match "replay without a trace says so" "give one trace file" "$err"

# proctor --help lists every option the supervisor takes
help=$("$PROCTOR" --help)
for o in --mode --model --base-url --config --workspace --workspace-mode --memory --cpu-time \
        --timeout --pids --tmpfs --output-limit --disk --max-iterations --max-parallel \
        --memory-budget --trace --theme --no-color --speed --json --raw --summary; do
        expect_match "proctor --help lists $o" "(^|[^a-z-])$o([^a-z-]|\$)" "$help"
done

# A terminal the supervisor cannot draw on is refused before curses starts:
# exit 2, a message pointing at proctor run, the terminal's modes as they
# were. Each runs in a tmux pane (a real terminal) under the TERM given.
echo '{"seq": 1, "t_ms": 0, "type": "session.start", "mode": "local"}' >"$WORK/trace.jsonl"
give_away "$WORK/trace.jsonl"
refused() { # NAME TERM-ASSIGNMENT PROCTOR-ARGS...
        local name=$1 term=$2
        shift 2
        start "$name" 200x30 "s1=\$(stty -g); env $term $PROCTOR $*; r=\$?; \
                [ \"\$s1\" = \"\$(stty -g)\" ] && echo MODES-KEPT; (exit \$r)"
}
refused dumb TERM=dumb
expect_screen dumb "TERM=dumb cannot move the cursor" "TERM=dumb is refused, saying why"
expect_screen dumb "use 'proctor run'" "the refusal points at proctor run"
expect_screen dumb "EXITED 2" "TERM=dumb exits 2"
expect_screen dumb "MODES-KEPT" "TERM=dumb leaves the terminal's modes as they were"
refused unknown TERM=nonexistent-term
expect_screen unknown "no description of the terminal type TERM=nonexistent-term" \
        "an unknown TERM is refused, saying why"
expect_screen unknown "EXITED 2" "an unknown TERM exits 2"
expect_screen unknown "MODES-KEPT" "an unknown TERM leaves the terminal's modes as they were"
check "an unknown TERM: not ncurses' own message" \
        bash -c "! $T capture-pane -p -t unknown | grep -q 'Error opening terminal'"
refused unset "-u TERM"
expect_screen unset "TERM is not set" "no TERM is refused, saying why"
expect_screen unset "EXITED 2" "no TERM exits 2"
refused rdumb TERM=dumb replay "$WORK/trace.jsonl"
expect_screen rdumb "proctor replay: the terminal type TERM=dumb cannot move the cursor" \
        "replay refuses TERM=dumb"
expect_screen rdumb "replay --summary" "replay's refusal points at --summary"
expect_screen rdumb "EXITED 2" "replay under TERM=dumb exits 2"
err=$("$PROCTOR" </dev/null 2>&1); rc=$?
expect_eq "the supervisor without a terminal exits 2" 2 $rc
expect_match "the supervisor without a terminal says so" "needs a terminal.*proctor run" "$err"
finish
