#!/bin/bash
# Where traces go: the state directories proctor makes are 0700 and a trace
# 0600 whatever the umask; a symbolic link planted as proctor's sessions
# directory (or its proctor/ parent), or at a --trace path, is refused with
# a message naming it, and nothing is written through it.
# as-user: yes
. "$(dirname "$0")/lib.sh"

cat >"$WORK/one.jsonl" <<'EOF'
{"content": "one line"}
EOF
# run_at STATE_HOME [ARGS...]: a one-turn session; stderr in $WORK/err
run_at() {
        local home=$1
        shift
        XDG_STATE_HOME=$home "$PROCTOR" run --mode local --workspace "$WORK" \
                --model "script:$WORK/one.jsonl" "$@" go >/dev/null 2>"$WORK/err"
}
mode_of() { stat -c %a "$1"; }

umask 000 # the modes below must not depend on it

# made fresh: every directory proctor creates, and the trace
st=$WORK/fresh/state
run_at "$st"; rc=$?
expect_eq "fresh: the session runs" 0 $rc
for d in "$WORK/fresh" "$st" "$st/proctor" "$st/proctor/sessions"; do
        expect_eq "fresh: ${d#"$WORK"/} is 0700" 700 "$(mode_of "$d")"
done
trace=$(ls "$st"/proctor/sessions/*.jsonl 2>/dev/null | head -1)
check "fresh: a trace was written" test -s "$trace"
expect_eq "fresh: the trace is 0600" 600 "$(mode_of "$trace")"

# sessions/ planted as a link to a directory elsewhere
st=$WORK/planted/state
mkdir -p "$st/proctor" "$WORK/elsewhere"
ln -s "$WORK/elsewhere" "$st/proctor/sessions"
run_at "$st"; rc=$?
expect_eq "sessions link: refused (exit 2)" 2 $rc
expect_match "sessions link: the message names it" \
        "$st/proctor/sessions: is a symbolic link" "$(cat "$WORK/err")"
expect_eq "sessions link: nothing written elsewhere" "" "$(ls -A "$WORK/elsewhere")"

# proctor/ planted as a link: not even sessions/ is made through it
st=$WORK/planted2/state
mkdir -p "$st"
ln -s "$WORK/elsewhere" "$st/proctor"
run_at "$st"; rc=$?
expect_eq "proctor/ link: refused (exit 2)" 2 $rc
expect_match "proctor/ link: the message names it" "$st/proctor: is a symbolic link" \
        "$(cat "$WORK/err")"
expect_eq "proctor/ link: nothing made elsewhere" "" "$(ls -A "$WORK/elsewhere")"

# a link planted at an explicit --trace path, to a file and to nothing
echo "precious" >"$WORK/precious"
ln -s "$WORK/precious" "$WORK/t1.jsonl"
run_at "$WORK/fresh/state" --trace "$WORK/t1.jsonl"; rc=$?
expect_eq "--trace link to a file: refused (exit 2)" 2 $rc
expect_match "--trace link: the message names it" "$WORK/t1.jsonl: is a symbolic link" \
        "$(cat "$WORK/err")"
expect_eq "--trace link: its target is untouched" precious "$(cat "$WORK/precious")"
ln -s "$WORK/made-through-link" "$WORK/t2.jsonl"
run_at "$WORK/fresh/state" --trace "$WORK/t2.jsonl"; rc=$?
expect_eq "--trace dangling link: refused (exit 2)" 2 $rc
check "--trace dangling link: its target was not made" test ! -e "$WORK/made-through-link"

# an explicit --trace file of the user's own is reused (the supervisor
# writes each new session to the same one), emptied and made private
printf 'old session\n' >"$WORK/mine.jsonl"
chmod 644 "$WORK/mine.jsonl"
run_at "$WORK/fresh/state" --trace "$WORK/mine.jsonl"; rc=$?
expect_eq "--trace own file: the session runs" 0 $rc
expect_no_match "--trace own file: emptied first" "old session" "$(cat "$WORK/mine.jsonl")"
expect_eq "--trace own file: made 0600" 600 "$(mode_of "$WORK/mine.jsonl")"

# another user's sessions directory (root can make one)
if is_root; then
        st=$WORK/theirs/state
        mkdir -p "$st/proctor/sessions"
        chown nobody "$st/proctor/sessions"
        run_at "$st"; rc=$?
        expect_eq "someone else's sessions dir: refused (exit 2)" 2 $rc
        expect_match "someone else's sessions dir: the message names it and the owner" \
                "$st/proctor/sessions: owned by uid $(id -u nobody), not by you" "$(cat "$WORK/err")"
        expect_eq "someone else's sessions dir: nothing written" "" "$(ls -A "$st/proctor/sessions")"
fi

finish
