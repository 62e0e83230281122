#!/bin/bash
# Headless output in a real terminal (a detached tmux): what a tool prints
# through `proctor exec` and what the model says through `proctor run` is
# shown, never obeyed (no title change, no clipboard write, no alternate
# screen), even when an escape sequence or a character is split across
# writes; --raw, and output to a pipe or a file, pass the bytes untouched.
# as-user: yes
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

# A tool that tries to take over the terminal: a title (OSC 2), a clipboard
# write (OSC 52), the alternate screen, a title sequence whose ESC comes in
# a write of its own, "é" cut between two writes, and a title on stderr.
cat >"$WORK/evil.sh" <<'EOF'
printf 'before \033]2;owned\007 \033]52;c;b3duZWQ=\007 \033[?1049h\n'
printf 'split \033'; sleep 0.3; printf ']2;split-owned\007\n'
printf 'caf\303'; sleep 0.3; printf '\251 done\n'
printf 'on stderr \033]2;err-owned\007\n' >&2
EOF
mkdir -p "$WORK/s"
cat >"$WORK/s/evil.jsonl" <<'EOF'
{"content": "model \u001b]2;model-owned\u0007 then \u001b]52;c;b3duZWQ=\u0007 and \u001b[?1049h caf\u00e9 end"}
EOF

# The tmux server must keep a clipboard write, so one would show.
$T new-session -d -s idle -x 80 -y 24 "sleep 300"
$T set -s set-clipboard on
$T set -g allow-rename on

title() { $T display -p -t "$1" '#{pane_title}'; }
alt_on() { $T display -p -t "$1" '#{alternate_on}'; }
buffers() { $T list-buffers -F '#{buffer_name}' 2>/dev/null | wc -l; }

# ---- proctor exec ----
start ex 120x30 "'$PROCTOR' exec --mode local -- sh '$WORK/evil.sh'"
expect_screen ex "EXITED 0" "exec: the command ran"
s=$(screen ex)
expect_match "exec: the title sequence is shown" 'before \^\[\]2;owned\^G' "$s"
expect_match "exec: the clipboard write is shown" '\^\[\]52;c;b3duZWQ=\^G' "$s"
expect_match "exec: the alternate-screen switch is shown" '\^\[\[\?1049h' "$s"
expect_match "exec: an ESC in a write of its own is still shown" 'split \^\[\]2;split-owned\^G' "$s"
expect_match "exec: é cut between two writes prints whole" 'café done' "$s"
expect_match "exec: stderr is shown too" 'on stderr \^\[\]2;err-owned\^G' "$s"
expect_no_match "exec: the title is unchanged" 'owned' "$(title ex)"
expect_eq "exec: no alternate screen" 0 "$(alt_on ex)"
expect_eq "exec: nothing reached the clipboard" 0 "$(buffers)"

# stdout on the terminal, stderr to a file: the file gets the bytes
start ex2 120x30 "'$PROCTOR' exec --mode local -- sh '$WORK/evil.sh' 2>'$WORK/ex2.err'"
expect_screen ex2 "EXITED 0" "exec, stderr to a file: the command ran"
check "exec: stderr to a file keeps its bytes" \
        cmp -s "$WORK/ex2.err" <(printf 'on stderr \033]2;err-owned\007\n')
expect_eq "exec, stderr to a file: no alternate screen" 0 "$(alt_on ex2)"

# --raw: the terminal obeys, which is what the checks above would see
start raw 120x30 "'$PROCTOR' exec --raw --mode local -- sh '$WORK/evil.sh'"
expect_screen raw "EXITED 0" "exec --raw: the command ran"
expect_match "exec --raw: the title changes" 'owned' "$(title raw)"
expect_eq "exec --raw: the alternate screen is entered" 1 "$(alt_on raw)"
check "exec --raw: the clipboard is written" test "$(buffers)" -gt 0
$T delete-buffer 2>/dev/null

# ---- proctor run ----
run_cmd="'$PROCTOR' run --mode local --workspace '$WORK' --trace '$WORK/run.trace'"
run_cmd="$run_cmd --model 'script:$WORK/s/evil.jsonl'"
start run 160x30 "$run_cmd go"
expect_screen run "EXITED 0" "run: the session completed"
s=$(screen run)
expect_match "run: the model's title sequence is shown" 'model \^\[\]2;model-owned\^G then' "$s"
expect_match "run: its clipboard write is shown" '\^\[\]52;c;b3duZWQ=\^G' "$s"
expect_match "run: its alternate-screen switch is shown" '\^\[\[\?1049h café end' "$s"
expect_no_match "run: the title is unchanged" 'owned' "$(title run)"
expect_eq "run: no alternate screen" 0 "$(alt_on run)"
expect_eq "run: nothing reached the clipboard" 0 "$(buffers)"

start runraw 160x30 "$run_cmd --raw go"
expect_screen runraw "EXITED 0" "run --raw: the session completed"
expect_eq "run --raw: the title changes" model-owned "$(title runraw)"
expect_eq "run --raw: the alternate screen is entered" 1 "$(alt_on runraw)"

# ---- pipes: byte for byte as before ----
"$PROCTOR" exec --mode local -- sh "$WORK/evil.sh" >"$WORK/p.out" 2>"$WORK/p.err"
sh "$WORK/evil.sh" >"$WORK/want.out" 2>"$WORK/want.err"
check "exec to a pipe: stdout byte-identical" cmp -s "$WORK/p.out" "$WORK/want.out"
check "exec to a pipe: stderr byte-identical" cmp -s "$WORK/p.err" "$WORK/want.err"
"$PROCTOR" run --mode local --workspace "$WORK" --trace "$WORK/p.trace" \
        --model "script:$WORK/s/evil.jsonl" go >"$WORK/run.out" 2>/dev/null
check "run to a pipe: the model's text byte-identical" cmp -s "$WORK/run.out" \
        <(printf 'model \033]2;model-owned\007 then \033]52;c;b3duZWQ=\007 and \033[?1049h caf\303\251 end\n')

finish
