#!/bin/bash
# A trace that cannot be written: the session goes on, stderr says so at
# once, `proctor run` exits 3 instead of 0, the supervisor shows a banner,
# and what was written is whole JSON lines up to the failure. /dev/full
# for any user; a full tmpfs (a disk that takes part of a line) as root.
# as-user: yes
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

cat >"$WORK/s.jsonl" <<'EOF'
{"content": "Printing a lot.", "tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 40000"}}]}
{"content": "all done here"}
EOF
# run_to TRACE [ARGS...]: a session in local mode, stdout in $WORK/out,
# stderr in $WORK/err, the exit status in $rc
run_to() {
        local trace=$1
        shift
        "$PROCTOR" run --mode local --workspace "$WORK" --model "script:$WORK/s.jsonl" \
                --trace "$trace" "$@" go >"$WORK/out" 2>"$WORK/err"
        rc=$?
}
# whole_lines FILE: every line is a JSON object and the file ends with one
whole_lines() {
        "$T_PY" -c '
import json, sys
data = open(sys.argv[1], "rb").read()
if data and not data.endswith(b"\n"):
    sys.exit("the last line is cut: %r" % data[-60:])
for n, line in enumerate(data.splitlines(), 1):
    try:
        json.loads(line)
    except ValueError as e:
        sys.exit("line %d: %s" % (n, e))' "$1"
}

# ---- /dev/full: nothing can be written ----
run_to /dev/full
expect_eq "/dev/full: run exits 3, not 0" 3 "$rc"
expect_match "/dev/full: stderr names the trace and why" \
        "proctor run: trace /dev/full: No space left on device at event 1 \(session.start\)" \
        "$(cat "$WORK/err")"
expect_match "/dev/full: the session went on to its end" "all done here" "$(cat "$WORK/out")"
expect_match "/dev/full: it completed" "session completed" "$(cat "$WORK/err")"
expect_match "/dev/full: the closing line says the trace is incomplete" \
        "proctor: trace /dev/full \(incomplete" "$(cat "$WORK/err")"
expect_eq "/dev/full: the failure is told once" 1 "$(grep -c 'No space left' "$WORK/err")"
run_to /dev/full --json
expect_eq "/dev/full --json: exits 3" 3 "$rc"
expect_eq "/dev/full --json: the events still reach stdout" session.end \
        "$(tail -1 "$WORK/out" | json_field session.end type)"
run_to "$WORK/fine.jsonl"
expect_eq "a writable trace: exit 0" 0 "$rc"
expect_no_match "a writable trace: no complaint" "No space|incomplete" "$(cat "$WORK/err")"

# the supervisor: a banner over the meter line, the session carries on
start tui 120x30 "$PROCTOR --approval never --mode local --model script:$WORK/s.jsonl --trace /dev/full"
expect_screen tui "Where should this session's tools run" "the supervisor starts"
$T send-keys -t tui "go" Enter
expect_screen tui "trace /dev/full: No space left on device at event 1" \
        "the supervisor shows the failed trace" 20
expect_screen tui "completed" "the session still completes" 20
expect_screen tui "^ trace /dev/full: No space" "the banner stays after the session ends"

# ---- a disk that fills up part-way, as root ----
if ! is_root; then
        echo "skip: a full tmpfs needs root (mount); /dev/full covered the rest"
        finish
        exit $?
fi
mkdir -p "$WORK/small"
mount -t tmpfs -o size=64k,mode=1777 tmpfs "$WORK/small" || { fail "mount a small tmpfs"; finish; exit 1; }
at_exit "umount '$WORK/small'"
run_to "$WORK/small/t.jsonl"
expect_eq "full disk: run exits 3" 3 "$rc"
expect_match "full disk: stderr says the disk is full" \
        "trace $WORK/small/t.jsonl: No space left on device at event [0-9]+ \(tool.output\)" \
        "$(cat "$WORK/err")"
expect_match "full disk: the session completed" "all done here" "$(cat "$WORK/out")"
check "full disk: the trace is whole JSON lines up to the failure" whole_lines "$WORK/small/t.jsonl"
kept=$(wc -l <"$WORK/small/t.jsonl")
expect_match "full disk: the message counts the events kept" "\($kept events kept\)" "$(cat "$WORK/err")"
check "full disk: the trace holds the events before the failure" \
        test "$(head -1 "$WORK/small/t.jsonl" | json_field session.start type)" = session.start
# a smaller event after the failure could still fit: none may, or the
# trace would have a hole no reader sees
check "full disk: the events kept are 1..N with no hole, nothing after the failure" \
        "$T_PY" -c '
import json, sys
seqs = [json.loads(l)["seq"] for l in open(sys.argv[1])]
sys.exit(0 if seqs == list(range(1, len(seqs) + 1)) else "seqs %s..." % seqs[-5:])' \
        "$WORK/small/t.jsonl"

finish
