# Shared helpers for integration scripts: source it, call the checks, end
# with `finish`. $PROCTOR is the binary under test; $TOP the repository.
set -u
: "${PROCTOR:?PROCTOR must name the proctor binary}"
T_FAILS=0
T_CHECKS=0
WORK=$(mktemp -d /tmp/proctor-it.XXXXXX)
chmod 755 "$WORK"
# As root, the scratch workspace belongs to an unprivileged user, so that the
# checks see the same ids as root and as that user (root's sandboxes act on a
# root-owned one as root, by an idmapped mount: t_sandbox_boundary.sh).
# give_away PATH... hands what a
# script makes there as root to that user too.
T_OWNER=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
        T_OWNER=proctor-test
        id "$T_OWNER" >/dev/null 2>&1 ||
                useradd --create-home --shell /bin/bash "$T_OWNER" >/dev/null 2>&1
        chown "$T_OWNER:" "$WORK"
fi
give_away() { [ "$(id -u)" -ne 0 ] || chown -R "$T_OWNER:" "$@"; }
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*"; T_FAILS=$((T_FAILS + 1)); }
pass() { T_CHECKS=$((T_CHECKS + 1)); }

# check DESCRIPTION COMMAND...: the command must succeed
check() { local d=$1; shift; if "$@"; then pass; else fail "$d"; fi; }

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
        if [ "$2" = "$3" ]; then pass; else fail "$1: expected [$2], got [$3]"; fi
}

# expect_match DESCRIPTION REGEX TEXT
expect_match() {
        if printf '%s' "$3" | grep -Eq -- "$2"; then pass; else fail "$1: [$3] does not match /$2/"; fi
}

expect_no_match() {
        if printf '%s' "$3" | grep -Eq -- "$2"; then fail "$1: [$3] matches /$2/"; else pass; fi
}

# sandbox ARGS...: proctor exec --mode sandbox in the scratch workspace
sandbox() { "$PROCTOR" exec --mode sandbox --workspace "$WORK" "$@"; }
local_exec() { "$PROCTOR" exec --mode local --workspace "$WORK" "$@"; }

# json_field EVENT_TYPE FIELD < jsonl: value of FIELD in the last such event
json_field() {
        python3 -c 'import sys, json
t, f = sys.argv[1], sys.argv[2]
v = None
for line in sys.stdin:
    e = json.loads(line)
    if e.get("type") == t: v = e.get(f)
print("" if v is None else (json.dumps(v) if isinstance(v, (dict, list, bool)) else v))' "$1" "$2"
}

# without_fallback_note: stdin less the warning proctor prints when no
# cgroup enforces a sandbox's limits (an unprivileged user here)
without_fallback_note() { grep -v '^proctor exec: warning: no cgroup here for '; }

finish() {
        if [ "$T_CHECKS" -eq 0 ] && [ "$T_FAILS" -eq 0 ]; then
                echo "no checks ran"; exit 1
        fi
        echo "$T_CHECKS checks passed, $T_FAILS failed"
        [ "$T_FAILS" -eq 0 ]
}

# ---- helpers for the sandbox and local-mode scripts ----

T_DIR=$(cd "$(dirname "$0")" && pwd)
T_BG_PIDS=()     # background processes a script started (killed at exit)
T_MARKERS=()     # unique command-line markers of processes to reap at exit
T_CLEANUPS=()    # extra commands run at exit

is_root() { [ "$(id -u)" -eq 0 ]; }

# A string unique to this run, to find our processes on the host.
new_marker() { echo "pt$$x${RANDOM}x${1:-m}"; }

# Ends everything the script started, by pid: its background jobs first
# (SIGTERM lets proctor tear its execution down), then any process whose
# command line still carries one of the script's markers.
_t_cleanup() {
        local p i m
        for p in "${T_BG_PIDS[@]+"${T_BG_PIDS[@]}"}"; do
                kill -TERM "$p" 2>/dev/null
        done
        for i in 1 2 3 4 5 6 7 8 9 10; do
                m=0
                for p in "${T_BG_PIDS[@]+"${T_BG_PIDS[@]}"}"; do
                        kill -0 "$p" 2>/dev/null && m=1
                done
                [ $m -eq 0 ] && break
                sleep 0.1
        done
        for p in "${T_BG_PIDS[@]+"${T_BG_PIDS[@]}"}"; do
                kill -KILL "$p" 2>/dev/null
        done
        for m in "${T_MARKERS[@]+"${T_MARKERS[@]}"}"; do
                for p in $(pgrep -f -- "$m"); do
                        [ "$p" != "$$" ] && kill -KILL "$p" 2>/dev/null
                done
        done
        for m in "${T_CLEANUPS[@]+"${T_CLEANUPS[@]}"}"; do
                eval "$m" >/dev/null 2>&1
        done
        rm -rf "$WORK"
}
trap _t_cleanup EXIT
trap 'exit 130' INT TERM

track_pid() { T_BG_PIDS+=("$@"); }
track_marker() { T_MARKERS+=("$@"); }
at_exit() { T_CLEANUPS+=("$*"); }

now_ms() { date +%s%3N; }

# wait_until SECONDS COMMAND...: polls every 50 ms until the command
# succeeds; fails when the time is up.
wait_until() {
        local limit=$1 end
        shift
        end=$(($(now_ms) + $(awk -v s="$limit" 'BEGIN { printf "%d", s * 1000 }')))
        while :; do
                "$@" && return 0
                [ "$(now_ms)" -ge "$end" ] && return 1
                sleep 0.05
        done
}

# Processes whose full command line matches the pattern (not this shell).
host_pids() { pgrep -f -- "$1" | grep -vx "$$"; }
no_process() { ! host_pids "$1" >/dev/null; }
# wait_gone PATTERN SECONDS: no matching process remains within the time
wait_gone() { wait_until "$2" no_process "$1"; }

# The system python starts faster than a version manager's shim.
T_PY=$(command -v /usr/bin/python3 || command -v python3)

# json_eval PYTHON_EXPR < jsonl: evaluates the expression with `ev` bound to
# the list of events (dicts) and prints the result (json for lists, dicts
# and booleans, lowercase true/false).
json_eval() {
        "$T_PY" -c 'import sys, json
ev = [json.loads(l) for l in sys.stdin if l.strip()]
def of(t): return [e for e in ev if e.get("type") == t]
def out(stream=None): return "".join(e["data"] for e in of("exec.output") if stream is None or e.get("stream") == stream)
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1"
}

# odd_event_orders FILE...: one --json run per file; prints the event types
# of each run whose order is not create, start, output, exit, remove (stats
# samples left out: a run slowed by a loaded machine lives long enough for some)
odd_event_orders() {
        "$T_PY" -c 'import json, sys
want = "exec.create exec.start exec.output exec.exit exec.remove"
for f in sys.argv[1:]:
    t = " ".join(e["type"] for e in map(json.loads, filter(str.strip, open(f)))
                 if e["type"] != "exec.stats")
    if t != want:
        print(t)' "$@"
}

# compile_attack NAME: builds tests/integration/attacks/NAME.c into $WORK/NAME
compile_attack() {
        cc -O1 -w -o "$WORK/$1" "$T_DIR/attacks/$1.c"
}

# The v1 hierarchy directory where proctor creates execution groups for
# controller CTRL (proctor puts them under its own cgroup, which it shares
# with this script). Empty when the controller is not mounted.
cg_v1_dir() {
        local path
        path=$(awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup)
        [ -n "$path" ] && [ -d "/sys/fs/cgroup/$1" ] && echo "/sys/fs/cgroup/$1${path%/}"
}

# cgroup directories (any hierarchy) that belong to proctor process $1
cg_dirs_of() {
        local c d
        for c in memory pids cpu cpuacct freezer; do
                d=$(cg_v1_dir $c) || continue
                [ -n "$d" ] && ls -d "$d/proctor-$1-"* 2>/dev/null
        done
}
no_cg_dirs_of() { [ -z "$(cg_dirs_of "$1")" ]; }

# sandbox_bg / local_bg ARGS...: like sandbox / local_exec, in the
# background, with proctor's own pid in $T_LAST_BG (a function run with &
# would give the pid of a subshell instead). Redirect at the call; this
# shell opens those files itself, so never a FIFO that nobody reads yet.
sandbox_bg() { "$PROCTOR" exec --mode sandbox --workspace "$WORK" "$@" & T_LAST_BG=$!; track_pid $T_LAST_BG; }
local_bg() { "$PROCTOR" exec --mode local --workspace "$WORK" "$@" & T_LAST_BG=$!; track_pid $T_LAST_BG; }
# running PATTERN: some host process's command line matches
running() { host_pids "$1" >/dev/null; }

# events_eval FILE EXPR: a Python expression over the events E of a JSONL
# file, printed as Python prints it; of(TYPE) picks one type, res(I) is the
# result of the I-th tool call (results come as calls finish, not in order)
events_eval() {
        "$T_PY" -c 'import sys, json
E = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def of(t): return [e for e in E if e.get("type") == t]
def res(i):
    c = of("tool.call")[i]["call_id"]
    return next(r for r in of("tool.result") if r["call_id"] == c)
print(eval(sys.argv[2]))' "$1" "$2"
}
