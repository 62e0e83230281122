#!/bin/bash
# tui: the supervisor in a real terminal (tmux): idle CPU over 10 s (on the
# setup screen and in the live view after a session), key-to-screen latency
# while a tool floods output and while 64 sandboxes spin at once on the two
# cores, and kill-to-screen: from the `y` that confirms a kill to the
# sandbox shown `killed`. Targets: idle under 1%, keys under 100 ms, kills
# under 100 ms.
set -u
cd "$(dirname "$0")/../.." || exit 1
top=$PWD
work=$(mktemp -d /tmp/proctor-bench-tui.XXXXXX)
chmod 755 "$work"
[ "$(id -u)" -ne 0 ] || chown nobody: "$work"
T="tmux -S $work/sock"
trap '$T kill-server 2>/dev/null; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
now_ms() { date +%s%3N; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
pid_of() { # the proctor process of tmux session $1
        local shell
        shell=$($T display -p -t "$1" '#{pane_pid}')
        pgrep -P "$shell" -x proctor | head -1
}
wait_for() { # NAME REGEX
        local i
        for i in $(seq 300); do
                $T capture-pane -p -t "$1" | grep -Eq -- "$2" && return 0
                sleep 0.02
        done
        return 1
}
quit_session() { # NAME: q, confirmed, so that what it runs ends before the next measurement
        local i
        $T send-keys -t "$1" q
        wait_for "$1" "Quit and kill everything" && sleep 0.3 && $T send-keys -t "$1" y
        for i in $(seq 100); do
                [ -z "$(pid_of "$1")" ] && return 0
                sleep 0.1
        done
}
median_p90() { # TEN_NUMBERS...: "median p90"
        local sorted
        sorted=$(printf '%s\n' "$@" | sort -n)
        echo "$(sed -n 5p <<<"$sorted") $(sed -n 9p <<<"$sorted")"
}
key_latency() { # NAME: "median p90" in ms of ten keys, each until its overlay shows
        local i t0 lat=()
        for i in $(seq 10); do
                t0=$(now_ms)
                $T send-keys -t "$1" '?'
                wait_for "$1" "keys \(any key closes\)" || { echo "tui bench: no help overlay" >&2; exit 1; }
                lat+=($(($(now_ms) - t0)))
                $T send-keys -t "$1" x
                wait_for "$1" "Tab focus" || true
                sleep 0.2
        done
        median_p90 "${lat[@]}"
}
idle_pct() { # NAME
        local pid t0 t1
        pid=$(pid_of "$1")
        t0=$(cpu_ticks "$pid")
        sleep 10
        t1=$(cpu_ticks "$pid")
        awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.2f", d * 100 / (10 * hz) }'
}

printf '{"content": "quick", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}\n{"content": "done"}\n' >"$work/quick.jsonl"
printf '{"content": "flooding", "tool_calls": [{"name": "bash", "arguments": {"command": "yes flood-flood-flood-flood-flood-flood-flood-flood | head -c 3000000000"}}]}\n{"content": "done"}\n' >"$work/flood.jsonl"

$T new-session -d -s setup -x 160 -y 48 "cd $work && $top/proctor; sleep 60"
wait_for setup "Where should this session" || { echo "tui bench: no setup screen" >&2; exit 1; }
sleep 1
setup_idle=$(idle_pct setup)

$T new-session -d -s live -x 160 -y 48 "cd $work && $top/proctor --model script:$work/quick.jsonl; sleep 60"
wait_for live "Where should this session"
$T send-keys -t live "go" Enter
wait_for live "session completed" || { echo "tui bench: the session did not complete" >&2; exit 1; }
sleep 1
live_idle=$(idle_pct live)

$T new-session -d -s flood -x 160 -y 48 "cd $work && $top/proctor --output-limit 64M --timeout 120 --model script:$work/flood.jsonl; sleep 60"
wait_for flood "Where should this session"
$T send-keys -t flood "go" Enter
wait_for flood "running" || { echo "tui bench: the flood did not start" >&2; exit 1; }
sleep 1
read -r median p90 <<<"$(key_latency flood)"
[ -n "$p90" ] || exit 1
quit_session flood

# 64 sandboxes spinning at once (one message, 64 tool calls)
python3 - "$work/many.jsonl" <<'PY'
import json, sys
spin = "end=$((SECONDS+12)); while [ $SECONDS -lt $end ]; do :; done"
calls = [{"name": "bash", "arguments": {"command": spin + "; echo %d" % i}} for i in range(64)]
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"content": "many", "tool_calls": calls}) + "\n")
    f.write(json.dumps({"content": "done"}) + "\n")
PY
$T new-session -d -s many -x 160 -y 48 "cd $work && $top/proctor --mode sandbox --model script:$work/many.jsonl; sleep 60"
wait_for many "Where should this session"
t0=$(now_ms)
$T send-keys -t many "go" Enter
wait_for many "host: 64 running" || { echo "tui bench: 64 sandboxes did not all run" >&2; exit 1; }
all_up=$(($(now_ms) - t0))
read -r mmedian mp90 <<<"$(key_latency many)"
[ -n "$mp90" ] || exit 1
quit_session many

# ten sandboxes in turn, each killed from the supervisor
for i in $(seq 10); do
        printf '{"content": "sleeper %d", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 60"}}]}\n' "$i"
done >"$work/sleepers.jsonl"
echo '{"content": "all killed"}' >>"$work/sleepers.jsonl"
$T new-session -d -s kill -x 160 -y 48 "cd $work && $top/proctor --mode sandbox --model script:$work/sleepers.jsonl; sleep 60"
wait_for kill "Where should this session"
$T send-keys -t kill "go" Enter
klat=()
for i in $(seq 10); do
        wait_for kill "#$i running +[0-9.]+m?s +setup" || { echo "tui bench: sandbox #$i did not run" >&2; exit 1; }
        $T send-keys -t kill k
        wait_for kill "Kill execution #$i" || { echo "tui bench: no kill dialog for #$i" >&2; exit 1; }
        sleep 0.3 # a y typed ahead of the dialog does not count
        t0=$(now_ms)
        $T send-keys -t kill y
        wait_for kill "#$i killed" || { echo "tui bench: #$i not shown killed" >&2; exit 1; }
        t1=$(now_ms)
        klat+=($((t1 - t0)))
done
read -r kmedian kp90 <<<"$(median_p90 "${klat[@]}")"

echo "### the supervisor in tmux (160x48)"
echo
echo "| measure | value | target |"
echo "|---|---:|---|"
echo "| idle CPU, setup screen, 10 s | ${setup_idle}% | under 1% |"
echo "| idle CPU, live view after a session, 10 s | ${live_idle}% | under 1% |"
echo "| key to screen while a tool floods output, median | ${median} ms | under 100 ms |"
echo "| key to screen while a tool floods output, p90 | ${p90} ms | |"
echo "| 64 sandboxes spinning at once: Enter until the meter shows 64 running | ${all_up} ms | |"
echo "| key to screen while 64 sandboxes spin, median | ${mmedian} ms | under 100 ms |"
echo "| key to screen while 64 sandboxes spin, p90 | ${mp90} ms | |"
echo "| kill to screen (y until \`killed\` shows), median | ${kmedian} ms | under 100 ms |"
echo "| kill to screen, p90 | ${kp90} ms | |"
echo
echo "(latency: tmux send-keys until capture-pane shows the result, polled every 20 ms,"
echo "so each figure includes up to 20 ms of polling and a capture-pane run; keys while"
echo "\`yes\` floods the tool's output at full speed; kills of ten sandboxed \`sleep 60\`)"
