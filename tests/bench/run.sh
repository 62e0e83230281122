#!/bin/sh
# Runs the benchmarks (make bench builds them first) and prints their
# tables. Reports, does not gate: exits 0 even when a target is missed, and
# non-zero only when a benchmark could not run at all (a failed execution).
#
# Twelve tables:
#   1. spawn, back to back, no pool: the raw cost of building one sandbox
#   2. spawn, pool of 1, 100 ms between calls: a session's tool calls
#   3. cli, back to back: whole `proctor exec` processes against bwrap
#   4. cli, 100 ms between runs: a command run now and then
#   5. kill: exec_kill of a sandbox whose fork bomb forks against its limit
#   6. dispatch: a local-mode builtin tool call (parse + run + cap)
#   7. viewmodel: events folded into the view model, and one frame's walk
#      over 10,000 tool calls and 64 live executions
#   8. sse: a streamed model response parsed and assembled, 4 KiB reads
#   9. flood: the supervisor's CPU against the sandbox's while a command
#      floods its output past the cap until its CPU limit
#  10. pywarm: run_python_code `print(1)` in sandbox mode, cold and warm
#      interpreter, against a cold `python3 -c` process; the refill's cost
#      and (the same table's second part) digest verification's cost on a
#      first unpack, in MB/s, against sha256sum of the same bytes
#  11. docker: busybox true as a host-rooted and an image-rooted native
#      sandbox, a --runtime docker container and `docker run --rm`
#  12. microvm: a qemu `-M microvm` guest (KVM) whose /init runs busybox
#      true, spawn to exit, against whole `proctor exec --mode sandbox`
#      processes; skipped with the reason when qemu, a guest kernel or a
#      /dev/kvm that boots it is missing
# Environment: SPAWN_ROUNDS (200), SESSION_ROUNDS (50), CLI_RUNS (100),
# CLI_IDLE_RUNS (30), PAUSE_MS (100), KILL_ROUNDS (20), DISPATCH_CALLS (100000),
# VM_FRAMES (1000), SSE_ROUNDS (5), FLOOD_RUNS (3), FLOOD_CPU_SECS (2),
# PYWARM_ROUNDS (50), IMAGE_ROUNDS (200), UNPACK_ROUNDS (5), DOCKER_ROUNDS (30),
# MICROVM_ROUNDS (20; MICROVM_KERNEL, MICROVM_ACCEL=tcg: see tests/bench/microvm.sh).
set -u
cd "$(dirname "$0")/../.." || exit 1

for b in build/bench/spawn build/bench/image build/bench/cli build/bench/kill build/bench/tui_frame build/bench/dispatch build/bench/viewmodel build/bench/flood \
        build/bench/pywarm \
        ./proctor; do
        if [ ! -x "$b" ]; then
                echo "run.sh: $b is missing: run make bench" >&2
                exit 1
        fi
done

status=0
pause=${PAUSE_MS:-100}
echo "## proctor benchmarks ($(uname -srm), $(nproc) cpus, uid $(id -u))"
echo
build/bench/spawn -n "${SPAWN_ROUNDS:-200}" || status=1
echo
build/bench/spawn -n "${SESSION_ROUNDS:-50}" -w 3 -P 1 -S "$pause" || status=1
echo
# An image built here (busybox layers, no engine), unpacked once before timing.
imgdir=$(mktemp -d /tmp/proctor-bench-img.XXXXXX)
# The digest table unpacks a 64 MiB layer into an emptied cache each round.
if [ -x /bin/busybox ] && python3 tests/integration/image_make.py base "$imgdir/base.tar" &&
        python3 tests/integration/image_make.py big "$imgdir/big.tar" &&
        python3 tests/integration/image_make.py plain "$imgdir/plain.tar"; then
        XDG_CACHE_HOME="$imgdir/cache" build/bench/image -i "$imgdir/base.tar" \
                -n "${IMAGE_ROUNDS:-200}" -b "$imgdir/big.tar" -u "${UNPACK_ROUNDS:-5}" || status=1
        # The same image named from an engine's store (a stand-in engine on
        # a socket), cached by one run before the whole-process table; one
        # with no User or WorkingDir, so each run has nothing to note.
        python3 tests/integration/engine_fake.py "$imgdir/engine.sock" "bench/plain:1=$imgdir/plain.tar" \
                >/dev/null 2>&1 &
        engine=$!
        for _ in $(seq 50); do [ -S "$imgdir/engine.sock" ] && break; sleep 0.1; done
        export DOCKER_HOST="unix://$imgdir/engine.sock" XDG_CACHE_HOME="$imgdir/cache"
        ./proctor exec --mode sandbox --workspace "$imgdir" --image bench/plain:1 -- true &&
                cli_image="-I bench/plain:1" &&
                python3 tests/bench/engine_rtt.py "$imgdir/engine.sock" bench/plain:1
else
        echo "image benchmark skipped: it needs python3 and /bin/busybox (busybox-static)"
fi
echo
# shellcheck disable=SC2086
build/bench/cli -n "${CLI_RUNS:-100}" -p ./proctor ${cli_image:-} || status=1
[ -z "${engine:-}" ] || kill "$engine"
unset DOCKER_HOST XDG_CACHE_HOME
rm -rf "$imgdir"
echo
build/bench/cli -n "${CLI_IDLE_RUNS:-30}" -w 2 -S "$pause" -p ./proctor || status=1
echo
build/bench/kill -n "${KILL_ROUNDS:-20}" || status=1
echo
build/bench/dispatch -n "${DISPATCH_CALLS:-100000}" || status=1
echo
build/bench/viewmodel -f "${VM_FRAMES:-1000}" || status=1
echo
build/bench/sse -n "${SSE_ROUNDS:-5}" || status=1
echo
build/bench/flood -n "${FLOOD_RUNS:-3}" -c "${FLOOD_CPU_SECS:-2}" -p ./proctor || status=1
echo
build/bench/pywarm -n "${PYWARM_ROUNDS:-50}" -S "$pause" || status=1
echo
tests/bench/session.sh || status=1
echo
build/bench/tui_frame -f "${TUI_FRAMES:-500}" || status=1
echo
tests/bench/tui.sh || status=1
echo
# Containers: the engine at DOCKER_HOST, or a private daemon as root; says
# why and goes on when there is neither.
tests/bench/docker.sh || status=1
echo
# A microVM's cold start; says why and goes on without qemu, a kernel or KVM.
tests/bench/microvm.sh || status=1
exit $status
