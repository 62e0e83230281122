#!/bin/sh
# session: a 1,000-turn scripted session's total time in each mode, with a
# builtin tool call per turn (write_cache) and with a process per turn
# (bash true). Prints a markdown table of totals and per-turn means.
set -u
cd "$(dirname "$0")/../.." || exit 1
turns=${SESSION_TURNS:-1000}
dir=$(mktemp -d /tmp/proctor-bench-session.XXXXXX)
# as root, a workspace of an unprivileged owner (root's sandboxes act on a
# root-owned one only as nobody)
chmod 755 "$dir"
[ "$(id -u)" -ne 0 ] || chown nobody: "$dir"
trap 'rm -rf "$dir"' EXIT
gen() { # TOOL ARGS
        i=0
        while [ $i -lt "$turns" ]; do
                printf '{"tool_calls": [{"name": "%s", "arguments": %s}]}\n' "$1" "$2"
                i=$((i + 1))
        done
        printf '{"content": "done"}\n'
}
gen write_cache '{"key": "k", "value": "v"}' >"$dir/builtin.jsonl"
gen bash '{"command": "true"}' >"$dir/process.jsonl"
now_ms() { date +%s%3N; }
echo "### a ${turns}-turn scripted session, whole process (proctor run)"
echo
echo "| mode | tool per turn | total s | per turn ms |"
echo "|---|---|---:|---:|"
for mode in local sandbox; do
        for kind in builtin process; do
                t0=$(now_ms)
                ./proctor run --json --mode $mode --model "script:$dir/$kind.jsonl" \
                        --max-iterations $((turns + 10)) --workspace "$dir" \
                        --trace "$dir/trace.jsonl" "go" >"$dir/out.jsonl" 2>"$dir/err" || {
                        echo "session bench: $mode/$kind failed:" >&2
                        tail -3 "$dir/err" >&2
                        exit 1
                }
                t1=$(now_ms)
                ms=$((t1 - t0))
                label=write_cache
                [ $kind = builtin ] || label="bash true"
                awk -v m=$mode -v l="$label" -v ms=$ms -v n="$turns" \
                        'BEGIN { printf "| %s | %s | %.2f | %.2f |\n", m, l, ms / 1000, ms / n }'
        done
done
