# Shared helpers for integration scripts: source it, call the checks, end
# with `finish`. $PROCTOR is the binary under test; $TOP the repository.
set -u
: "${PROCTOR:?PROCTOR must name the proctor binary}"
T_FAILS=0
T_CHECKS=0
WORK=$(mktemp -d /tmp/proctor-it.XXXXXX)
chmod 755 "$WORK"
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

finish() {
        if [ "$T_CHECKS" -eq 0 ] && [ "$T_FAILS" -eq 0 ]; then
                echo "no checks ran"; exit 1
        fi
        echo "$T_CHECKS checks passed, $T_FAILS failed"
        [ "$T_FAILS" -eq 0 ]
}
