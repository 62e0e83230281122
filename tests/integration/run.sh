#!/bin/bash
# Runs every tests/integration/t_*.sh against each proctor binary given,
# as the current user and, when root, again as an unprivileged user that it
# creates (scripts that declare "# as-user: yes"). Prints a closing tally.
# ONLY="t_image t_docker" runs just those scripts.
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

# The unprivileged user may not be able to reach the checkout (say under a
# 0700 home): it then runs from a world-readable copy of what the scripts
# use, made once.
user_top=""
user_view() { # BINARY -> sets ubin and utop
        local b=$1
        if setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
                test -x "$b" -a -r "$top/tests/integration/lib.sh" 2>/dev/null; then
                ubin=$b; utop=$top
                return
        fi
        if [ -z "$user_top" ]; then
                user_top=$(mktemp -d /tmp/proctor-it-top.XXXXXX)
                mkdir -p "$user_top/bin"
                cp -r "$top/tests" "$top/themes" "$user_top/"
                chmod -R a+rX "$user_top"
        fi
        ubin=$user_top/bin/$(echo "${b#"$top"/}" | tr / _)
        [ -x "$ubin" ] || { cp "$b" "$ubin"; chmod 755 "$ubin"; }
        utop=$user_top
}

run_one() { # script binary as_user
        local t=$1 bin=$2 who=$3 name out rc
        name="$(basename "$t" .sh) [${bin#"$top"/}${who:+ as $who}]"
        out=$(mktemp)
        if [ -n "$who" ]; then
                user_view "$bin"
                setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
                        env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$TEST_USER" \
                        PROCTOR="$ubin" TOP="$utop" bash "$utop/tests/integration/$(basename "$t")" \
                        >"$out" 2>&1
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
                if [ -n "${ONLY:-}" ]; then
                        case " $ONLY " in *" $(basename "$t" .sh) "*) ;; *) continue ;; esac
                fi
                run_one "$t" "$bin" ""
                if [ "$(id -u)" -eq 0 ] && grep -q '^# as-user: yes' "$t"; then
                        ensure_user && run_one "$t" "$bin" "$TEST_USER"
                fi
        done
done
[ -z "$user_top" ] || rm -rf "$user_top"
for f in "${failed[@]+"${failed[@]}"}"; do echo "failed: $f"; done
echo "integration: $pass passed, $fail failed"
[ $fail -eq 0 ]
