#!/bin/bash
# The operator's keys in a real terminal (a detached tmux): every way out
# works in every state, with its exit code and nothing left running; text
# typed or pasted on the setup screen never flips the mode or acts as a
# key; the prompt edits like a shell's; typed-ahead text cannot confirm a
# kill; Esc and Ctrl-C ask twice while tools run; a follow-up with nothing
# left to answer it ends instead of hanging; a message typed while a turn
# runs is queued.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/quick.jsonl" <<'EOF'
{"content": "Quick one.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo quick-a"}}, {"name": "bash", "arguments": {"command": "echo quick-b"}}]}
{"content": "Quick done."}
EOF
# slow NAME: a script whose first call runs until it is stopped (a shell
# that stays, not exec'd into sleep, so that pgrep finds it by NAME)
slow() {
        cat >"$WORK/s/$1.jsonl" <<EOF
{"content": "Starting $1.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo $1-up; sleep 600; echo $1-done"}}]}
{"content": "After $1."}
EOF
}
# clear NAME: empties a prompt of up to 3 lines and 60 characters
clear() { $T send-keys -t "$1" Down Down End $(printf 'BSpace %.0s' $(seq 64)); }
pid_of() { pgrep -P "$($T display -p -t "$1" '#{pane_pid}' 2>/dev/null)" 2>/dev/null | head -1; }
alive() { pgrep -f "$1-up; sleep 600" >/dev/null; }

# ---- every way out, in every state ----

# to_state NAME STATE: proctor in tmux session NAME, brought to STATE
to_state() {
        local n=$1 st=$2
        case $st in
        setup | setup_text) start "$n" 120x40 "$PROCTOR --mode sandbox" ;;
        running)
                slow "$n"
                start "$n" 120x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/$n.jsonl"
                ;;
        *) start "$n" 120x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/quick.jsonl" ;;
        esac
        wait_for "$n" "Where should this session's tools run" || return 1
        case $st in
        setup) return 0 ;;
        setup_text)
                $T send-keys -t "$n" -l "quick question"
                wait_for "$n" "^> quick question"
                return
                ;;
        running)
                $T send-keys -t "$n" go Enter
                wait_for "$n" "#1 running" 10
                return
                ;;
        esac
        $T send-keys -t "$n" go Enter
        wait_for "$n" "session completed" 10 || return 1
        case $st in
        detail)
                $T send-keys -t "$n" Tab
                $T send-keys -t "$n" Enter
                wait_for "$n" "Esc closes"
                ;;
        typing)
                $T send-keys -t "$n" i
                $T send-keys -t "$n" -l "abc"
                wait_for "$n" "^> abc"
                ;;
        spent) # the follow-up that used to hang the supervisor for good
                $T send-keys -t "$n" i
                $T send-keys -t "$n" -l "and now?"
                $T send-keys -t "$n" Enter
                wait_for "$n" "session failed"
                ;;
        esac
}

STATES="setup setup_text running idle detail typing spent"
for how in key ctrlc sigint sigterm sighup close; do
        case $how in
        key) code=0 ;;
        ctrlc | sigint) code=130 ;;
        sigterm) code=143 ;;
        sighup) code=129 ;;
        close) code="" ;;
        esac
        pids=()
        for st in $STATES; do
                to_state "q$how$st" "$st" || fail "$how/$st: could not reach the state"
        done
        for st in $STATES; do
                n="q$how$st"
                pid=$(pid_of "$n")
                pids+=("$pid")
                case $how in
                key)
                        $T send-keys -t "$n" F10
                        if [ "$st" = running ]; then
                                wait_for "$n" "Quit and kill everything" || fail "$how/$st: no dialog"
                                sleep 0.3
                                $T send-keys -t "$n" y
                        fi
                        ;;
                ctrlc | sigint)
                        if [ "$how" = ctrlc ]; then $T send-keys -t "$n" C-c; else kill -INT "$pid"; fi
                        if [ "$st" = running ]; then
                                if wait_for "$n" "Ctrl-C again to quit and kill 1 running execution" 5; then
                                        pass
                                else
                                        fail "$how/$st: the first Ctrl-C does not ask"
                                fi
                                check "$how/$st: one Ctrl-C leaves the tool running" alive "$n"
                                if [ "$how" = ctrlc ]; then $T send-keys -t "$n" C-c; else kill -INT "$pid"; fi
                        fi
                        ;;
                sigterm) kill -TERM "$pid" ;;
                sighup) kill -HUP "$pid" ;;
                close) $T kill-pane -t "$n" ;;
                esac
        done
        i=0
        for st in $STATES; do
                n="q$how$st"
                pid=${pids[$i]}
                i=$((i + 1))
                if [ -n "$code" ]; then
                        expect_screen "$n" "EXITED $code\$" "$how quits in state $st (exit $code)" 8
                        check "$how/$st: the terminal is restored" \
                                sh -c "! $T display -p -t $n '#{alternate_on}' | grep -q 1"
                else
                        for _ in $(seq 80); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                        if kill -0 "$pid" 2>/dev/null; then
                                fail "closing the terminal leaves proctor running in state $st"
                                kill -KILL "$pid"
                        else
                                pass
                        fi
                fi
                if [ "$st" = running ]; then
                        for _ in $(seq 30); do alive "$n" || break; sleep 0.1; done
                        if alive "$n"; then fail "$how/$st: the running tool survived"; else pass; fi
                fi
        done
done

# the follow-up with nothing to answer it says so
to_state f spent
expect_screen f "the scripted model has no turns left" "a spent script says so in the transcript"
expect_screen f "failed +[0-9.]+m?s" "the header shows the prompt failed, and its clock stops"
$T send-keys -t f q
expect_screen f "EXITED 0" "q quits after it"

# ---- the setup screen: text is text ----

start a 120x40 "$PROCTOR --mode sandbox"
expect_screen a "\[x\] sandbox" "sandbox from --mode"
$T send-keys -t a -l "make it quick?"
expect_screen a "^> make it quick\?" "every letter of the prompt is typed, the m too"
expect_screen a "SANDBOX \(isolated\)" "typing m did not flip the mode"
check "typing ? did not open the help" sh -c "! $T capture-pane -p -t a | grep -q 'any key closes'"
check "typing q did not quit" sh -c "! $T capture-pane -p -t a | grep -q EXITED"
check "the cursor shows in the prompt" sh -c "$T display -p -t a '#{cursor_flag} #{cursor_y} #{cursor_x}' | grep -qx '1 39 16'"
$T send-keys -t a Tab
expect_screen a "arrows/space flip the mode" "Tab gives the mode cards the keys"
check "no cursor while the mode cards have the keys" sh -c "$T display -p -t a '#{cursor_flag}' | grep -qx 0"
$T send-keys -t a -l "m"
expect_screen a "^> make it quick\?m" "a letter on the mode cards goes to the prompt"
expect_screen a "\[x\] sandbox" "and flips nothing"
$T send-keys -t a Tab Right
expect_screen a "\[x\] local" "an arrow on the mode cards flips"
$T send-keys -t a Space
expect_screen a "\[x\] sandbox" "space flips back"
$T send-keys -t a Escape
$T send-keys -t a F2
expect_screen a "\[x\] local" "F2 flips from the prompt"
expect_screen a "mode from  the setup screen \(F2\)" "the flip is named"
$T send-keys -t a F2
expect_screen a "mode from  --mode" "flipped back, the mode is --mode's again"
$T send-keys -t a F1
expect_screen a "keys \(any key closes\)" "F1 opens the help"
$T send-keys -t a x
check "the key that closed the help was not typed" sh -c "$T capture-pane -p -t a | grep -q '^> make it quick?m *$'"

# too small: keys must not act unseen
$T resize-window -t a -x 70 -y 20
expect_screen a "terminal too small" "below 80x24 a notice"
$T send-keys -t a F2
$T send-keys -t a -l "zz"
sleep 0.3
$T resize-window -t a -x 120 -y 40
expect_screen a "\[x\] sandbox" "F2 at too small a size flipped nothing"
expect_screen a "^> make it quick\?m *$" "nothing was typed at too small a size"

# the editor
$T send-keys -t a C-u
$T send-keys -t a -l "hello world"
$T send-keys -t a Home
$T send-keys -t a -l "X"
expect_screen a "^> Xhello world" "Home, then typing inserts at the start"
$T send-keys -t a End C-w
expect_screen a "^> Xhello *$" "Ctrl-W kills the word before the cursor"
check "the cursor follows the text" sh -c "$T display -p -t a '#{cursor_x}' | grep -qx 9"
$T send-keys -t a -l "big world"
$T send-keys -t a M-b M-b
$T send-keys -t a -l "my "
expect_screen a "^> Xhello my big world" "Alt-b moves by words"
$T send-keys -t a C-a C-k
expect_screen a "^> *$" "Ctrl-A, Ctrl-K empties it"
$T send-keys -t a -l "one"
$T send-keys -t a C-j
$T send-keys -t a -l "two"
$T send-keys -t a M-Enter
$T send-keys -t a -l "three"
expect_screen a "^> one.{1,3}two.{1,3}three +\[line 3/3\]" "Ctrl-J and Alt-Enter insert new lines"
$T send-keys -t a Up
expect_screen a "\[line 2/3\]" "Up moves to the line above"
clear a
expect_screen a "^> *$" "Backspace joins and empties the lines"
long=$(printf 'w%03d ' $(seq 60))
$T send-keys -t a -l "$long"
expect_screen a "^> .*w060 *$" "a long prompt scrolls to keep its end in view"
check "the cursor stays on the screen" sh -c "test \$($T display -p -t a '#{cursor_x}') -lt 120"
$T send-keys -t a Home
expect_screen a "^> w001 w002" "Home scrolls back to its start"
$T send-keys -t a F10
expect_screen a "EXITED 0" "F10 quits from the setup screen"

# paste: multi-line text stays text, never submits, never reaches keys
start p 120x40 "$PROCTOR --mode sandbox --model script:$WORK/s/quick.jsonl"
expect_screen p "Where should this session's tools run" "setup for paste"
$T set-buffer -b pb "$(printf 'line one\nline two\nmq?')"
$T paste-buffer -p -b pb -t p
expect_screen p "^> line one.{1,3}line two.{1,3}mq\? +\[line 3/3\]" "a multi-line paste stays in the prompt"
expect_screen p "Where should this session's tools run" "the paste did not start the session"
expect_screen p "\[x\] sandbox" "the paste flipped nothing"
clear p
$T send-keys -t p -l "first prompt"
$T send-keys -t p Enter
expect_screen p "session completed" "Enter starts the session"
$T send-keys -t p i Up
expect_screen p "^> first prompt" "Up recalls the earlier prompt"
$T send-keys -t p Escape
$T send-keys -t p F10
expect_screen p "EXITED 0" "quit after paste"

# ---- while a tool runs ----

slow r
start r 120x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/r.jsonl"
expect_screen r "Where should this session's tools run" "setup for the running checks"
$T send-keys -t r go Enter
expect_screen r "#1 running" "the slow tool runs"
# typed ahead: k then y in one burst must not kill
$T send-keys -t r -l "ky"
expect_screen r "Kill execution #1" "k asks"
sleep 0.5
check "a y typed with the k did not confirm" alive r
$T send-keys -t r n
# a paste while the tool runs goes to the prompt, never to k or y
$T set-buffer -b pk "ky"
$T paste-buffer -p -b pk -t r
expect_screen r "^> ky" "a paste in the live view opens the prompt with it"
check "the pasted k opened no dialog" sh -c "! $T capture-pane -p -t r | grep -q 'Kill execution'"
check "the pasted text killed nothing" alive r
$T send-keys -t r C-u
$T send-keys -t r -l "next please"
$T send-keys -t r Enter
expect_screen r "queued: sent when this turn ends" "Enter while a turn runs queues the message"
# Esc asks first while a tool runs; the second must come within 2 s
$T send-keys -t r Escape
expect_screen r "Esc again to interrupt the turn and kill 1 running execution" "the first Esc asks"
sleep 2.3
$T send-keys -t r Escape
expect_screen r "Esc again to interrupt" "an Esc after 2 s asks again"
check "two Esc 2 s apart interrupt nothing" alive r
$T send-keys -t r Escape
expect_screen r "LOCAL \(not isolated\) +interrupted" "a second Esc within 2 s interrupts" 5
sleep 0.5
if alive r; then fail "the interrupt left the tool running"; else pass; fi
expect_screen r "interrupted: your queued message is back in the prompt" "the queued message is given back"
expect_screen r "^> next please" "the queued message comes back to the prompt after an interrupt"
$T send-keys -t r Escape
sleep 0.2 # Esc and q together would be Alt-q
$T send-keys -t r q
expect_screen r "EXITED 0" "quit after the running checks"

# a queued message is sent when the turn ends
cat >"$WORK/s/queue.jsonl" <<'EOF'
{"content": "Working.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo early"}}, {"name": "bash", "arguments": {"command": "sleep 2"}}]}
{"content": "First answer."}
{"content": "Second answer."}
EOF
start u 120x40 "$PROCTOR --approval never --mode local --model script:$WORK/s/queue.jsonl"
expect_screen u "Where should this session's tools run" "setup for the queue"
$T send-keys -t u go Enter
expect_screen u "bash: sleep 2 .*running" "the first turn works"
$T send-keys -t u i
$T send-keys -t u -l "and then?"
$T send-keys -t u Enter
expect_screen u "queued" "queued while it works"
expect_screen u "you: and then\?" "the queued message is sent when the turn ends" 10
expect_screen u "Second answer" "and answered" 10
expect_screen u "session completed" "the session completes"

# k on an ended row: says so, never offers another execution
$T send-keys -t u Tab Tab Up
$T send-keys -t u k
expect_screen u "not running" "k on an ended execution says it is not running"
check "no kill dialog for it" sh -c "! $T capture-pane -p -t u | grep -q 'Kill execution'"
# mouse capture off and on, for copying with the terminal's own selection
check "the supervisor captures the mouse" sh -c "$T display -p -t u '#{mouse_any_flag}' | grep -qx 1"
$T send-keys -t u F12
expect_screen u "mouse capture off" "F12 gives the mouse back"
check "the terminal has the mouse again" sh -c "$T display -p -t u '#{mouse_any_flag}' | grep -qx 0"
$T send-keys -t u F12
expect_screen u "mouse capture on" "a second F12 takes it again"
check "captured again" sh -c "$T display -p -t u '#{mouse_any_flag}' | grep -qx 1"
$T send-keys -t u q
expect_screen u "EXITED 0" "quit after the queue"
expect_screen u "proctor: session trace: .*\.jsonl" "the trace is named at exit"

# the setup screen's limits: Tab to them, arrows pick and step presets,
# and the session's executions get them
cat >"$WORK/s/lim.jsonl" <<'EOF'
{"content": "Limits?", "tool_calls": [{"name": "bash", "arguments": {"command": "ulimit -t"}}]}
{"content": "Limits shown."}
EOF
start l 120x40 "$PROCTOR --mode sandbox --memory 300M --trace $WORK/lim.trace --model script:$WORK/s/lim.jsonl"
expect_screen l "limits     memory 300M  cpu 5s  timeout 120s  pids 128  workspace rw" \
        "the limits line shows the starting values"
$T send-keys -t l Tab Tab
expect_screen l "memory \[300M\]" "Tab twice gives the limits the keys"
$T send-keys -t l Up
expect_screen l "memory \[512M\]" "Up steps to the next preset"
$T send-keys -t l Right Down Down
expect_screen l "cpu \[1s\]" "Right picks the CPU limit, Down steps it"
$T send-keys -t l Right Right Down
expect_screen l "pids \[64\]" "the pids limit"
$T send-keys -t l Right Up
expect_screen l "workspace \[ro\]" "the workspace mode"
expect_screen l "workspace  .* \(ro\)" "the workspace line follows"
expect_screen l "bounds .*2.0G memory across sandboxes" "the memory budget follows the memory limit"
$T send-keys -t l Tab
$T send-keys -t l -l "go"
$T send-keys -t l Enter
expect_screen l "Limits shown" "the session runs" 10
lim=$(json_field session.start limits <"$WORK/lim.trace")
expect_match "the session starts with the edited memory limit" '"memory_bytes": 536870912' "$lim"
expect_match "and the edited CPU limit" '"cpu_ms": 1000' "$lim"
expect_match "and the edited pids limit" '"pids": 64' "$lim"
expect_eq "and the edited workspace mode" ro "$(json_field session.start workspace_mode <"$WORK/lim.trace")"
expect_eq "the sandbox got the CPU limit" 1 "$(json_field tool.result output <"$WORK/lim.trace" | tr -d '[:space:]')"
$T send-keys -t l q
expect_screen l "EXITED 0" "quit after the limits"

# replay: seek and speed
cat >"$WORK/s/paced.jsonl" <<'EOF'
{"content": "One.", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 3; echo paced-one"}}]}
{"content": "Two.", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 3; echo paced-two"}}]}
{"content": "paced done"}
EOF
"$PROCTOR" run --model "script:$WORK/s/paced.jsonl" --trace "$WORK/paced.trace" "pace" >/dev/null 2>&1
start rp 160x48 "$PROCTOR replay --speed 0.25 $WORK/paced.trace"
expect_screen rp "bash: sleep 3; echo pace" "the replay starts"
expect_screen rp "REPLAY [0-9.ms]+/[0-9.ms]+: space pause" "the status shows where the replay is"
$T send-keys -t rp Right
expect_screen rp "paced done" "Right seeks forward, past the end at a quarter speed" 3
expect_screen rp "REPLAY +completed" "to the recorded final state"
$T send-keys -t rp Left Left
expect_screen rp "replay at 0ms of" "Left seeks back to the start"
check "back at the start, the later calls are gone" sh -c "! $T capture-pane -p -t rp | grep -q 'paced-two'"
$T send-keys -t rp +
expect_screen rp "replay speed: x0.5" "+ doubles the speed"
$T send-keys -t rp - -
expect_screen rp "replay speed: x0.125" "- halves it"
$T send-keys -t rp q
expect_screen rp "EXITED 0" "quit the replay"
finish
