#!/bin/bash
# Runs every tests/integration/t_*.sh against each proctor binary given,
# as the current user and, when root, again as an unprivileged user that it
# creates (scripts that declare "# as-user: yes"). Prints a closing tally.
# ONLY="t_image t_docker" runs just those scripts.
#
# The runs go in parallel, JOBS at a time (default: twice the CPUs): each
# script works in a directory of its own. Scripts that share something
# outside it declare "# lock: NAME (why)" (a line each), and no two runs
# holding the same lock overlap: the bundled demo's file in the host's
# /tmp, a container engine's daemon. Each run's line says how long it took.
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

# run_one SCRIPT BINARY AS_USER: one run, its output on stdout, its status
# as the exit status; waits for the script's locks first
run_one() {
        local t=$1 bin=$2 who=$3 lock
        local -a locked=()
        for lock in $(sed -n 's/^# lock: *\([A-Za-z0-9_-]*\).*/\1/p' "$t"); do
                locked+=(flock "$locks/$lock")
        done
        if [ -n "$who" ]; then
                user_view "$bin"
                "${locked[@]}" setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
                        env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$TEST_USER" \
                        PROCTOR="$ubin" TOP="$utop" bash "$utop/tests/integration/$(basename "$t")" 2>&1
        else
                PROCTOR="$bin" TOP="$top" "${locked[@]}" bash "$t" 2>&1
        fi
}

runs=()  # "script|binary|user"
for bin in "$@"; do
        case $bin in /*) ;; *) bin="$top/$bin" ;; esac
        for t in "$here"/t_*.sh; do
                if [ -n "${ONLY:-}" ]; then
                        case " $ONLY " in *" $(basename "$t" .sh) "*) ;; *) continue ;; esac
                fi
                runs+=("$t|$bin|")
                if [ "$(id -u)" -eq 0 ] && grep -q '^# as-user: yes' "$t"; then
                        runs+=("$t|$bin|$TEST_USER")
                fi
        done
done
# the runs that hold a lock first (a container engine's are the longest):
# what waits for a lock then overlaps with everything else
first=() rest=()
for r in "${runs[@]+"${runs[@]}"}"; do
        if grep -q '^# lock:' "${r%%|*}"; then first+=("$r"); else rest+=("$r"); fi
done
runs=("${first[@]+"${first[@]}"}" "${rest[@]+"${rest[@]}"}")
# what runs share is made before they start: the user, its view of the tree
if [ "$(id -u)" -eq 0 ]; then
        ensure_user
        for bin in "$@"; do
                case $bin in /*) ;; *) bin="$top/$bin" ;; esac
                user_view "$bin"
        done
fi

JOBS=${JOBS:-$(($(nproc) * 2))}
results=$(mktemp -d /tmp/proctor-it-runs.XXXXXX)
locks=$results/locks
mkdir -p "$locks"
chmod 755 "$results"
chmod 777 "$locks"
declare -A started_at=()

launch() { # INDEX
        local t bin who
        IFS='|' read -r t bin who <<<"${runs[$1]}"
        started_at[$1]=$SECONDS
        (
                run_one "$t" "$bin" "$who" >"$results/$1.out"
                echo $? >"$results/$1.rc.tmp"
                mv "$results/$1.rc.tmp" "$results/$1.rc"
        ) &
}

report() { # INDEX
        local t bin who name rc
        IFS='|' read -r t bin who <<<"${runs[$1]}"
        name="$(basename "$t" .sh) [${bin#"$top"/}${who:+ as $who}]"
        rc=$(cat "$results/$1.rc")
        if [ "$rc" -eq 0 ]; then
                pass=$((pass + 1))
                printf 'ok   %s %ds\n' "$name" $((SECONDS - started_at[$1]))
        else
                fail=$((fail + 1)); failed+=("$name")
                printf 'FAIL %s %ds\n' "$name" $((SECONDS - started_at[$1]))
                sed 's/^/     | /' "$results/$1.out" | tail -n 40
        fi
}

next=0 running=0 ended=0
declare -A live=()
while [ $ended -lt ${#runs[@]} ]; do
        while [ $running -lt "$JOBS" ] && [ $next -lt ${#runs[@]} ]; do
                launch $next
                live[$next]=1
                next=$((next + 1)) running=$((running + 1))
        done
        wait -n 2>/dev/null
        for i in "${!live[@]}"; do
                [ -f "$results/$i.rc" ] || continue
                report "$i"
                unset "live[$i]"
                running=$((running - 1)) ended=$((ended + 1))
        done
done
wait
rm -rf "$results"
[ -z "$user_top" ] || rm -rf "$user_top"
for f in "${failed[@]+"${failed[@]}"}"; do echo "failed: $f"; done
echo "integration: $pass passed, $fail failed in $((SECONDS / 60))m$((SECONDS % 60))s ($JOBS at a time)"
[ $fail -eq 0 ]
