#!/bin/bash
# Runs every tests/integration/t_*.sh against each proctor binary given,
# as the current user and, when root, again as an unprivileged user that it
# creates (scripts that declare "# as-user: yes"). Prints a closing tally.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] || set -- "$top/proctor"
TEST_USER=proctor-test
pass=0; fail=0; failed=()

ensure_user() {
        id "$TEST_USER" >/dev/null 2>&1 && return 0
        useradd --create-home --shell /bin/bash "$TEST_USER" >/dev/null 2>&1
}

run_one() { # script binary as_user
        local t=$1 bin=$2 who=$3 name out rc
        name="$(basename "$t" .sh) [${bin#"$top"/}${who:+ as $who}]"
        out=$(mktemp)
        if [ -n "$who" ]; then
                setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
                        env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$TEST_USER" \
                        PROCTOR="$bin" TOP="$top" bash "$t" >"$out" 2>&1
        else
                PROCTOR="$bin" TOP="$top" bash "$t" >"$out" 2>&1
        fi
        rc=$?
        if [ $rc -eq 0 ]; then
                pass=$((pass + 1)); echo "ok   $name"
        else
                fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name"
                sed 's/^/     | /' "$out" | tail -n 40
        fi
        rm -f "$out"
}

for bin in "$@"; do
        case $bin in /*) ;; *) bin="$top/$bin" ;; esac
        for t in "$here"/t_*.sh; do
                run_one "$t" "$bin" ""
                if [ "$(id -u)" -eq 0 ] && grep -q '^# as-user: yes' "$t"; then
                        ensure_user && run_one "$t" "$bin" "$TEST_USER"
                fi
        done
done
for f in "${failed[@]+"${failed[@]}"}"; do echo "failed: $f"; done
echo "integration: $pass passed, $fail failed"
[ $fail -eq 0 ]
