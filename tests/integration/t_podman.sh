#!/bin/bash
# --runtime docker against Podman's Docker-compatible service: a private
# `podman system service` started here as root with its own storage, run
# and state directories (cgroupfs, file events: no systemd needed), the
# busybox-static test image imported through its compat API; then the
# checks t_docker.sh makes of a Docker daemon (engine_checks.sh), and the
# messages proctor gives where this host's Podman needs configuring.
# lock: engine (a container engine's daemon at a time: each is heavy)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/engine_checks.sh"

IMAGE=proctor-test:busybox
ENGINE=podman

if ! is_root; then
        echo "SKIP t_podman: not root: the private Podman service runs as root"
        exit 0
fi
if ! command -v podman >/dev/null || ! command -v docker >/dev/null || [ ! -x /bin/busybox ]; then
        echo "SKIP t_podman: podman, docker (the CLI) or /bin/busybox missing (install-deps.sh installs podman, docker.io, busybox-static)"
        exit 0
fi
# The container init Podman binds in for HostConfig.Init: its own
# catatonit, else a static tini (the image has no libc for a dynamic one).
INIT=""
for i in /usr/libexec/podman/catatonit /usr/bin/catatonit /usr/bin/tini-static /usr/bin/docker-init; do
        if [ -x "$i" ] && ! ldd "$(readlink -f "$i")" >/dev/null 2>&1; then
                INIT=$i
                break
        fi
done
if [ -z "$INIT" ]; then
        echo "SKIP t_podman: no static container init (catatonit or tini-static) for HostConfig.Init"
        exit 0
fi

OCI=$(command -v crun || command -v runc)
if [ -z "$OCI" ]; then
        echo "SKIP t_podman: neither crun nor runc is installed"
        exit 0
fi

# ---- a private service, gone at exit with everything it mounted ----
D=$(mktemp -d /tmp/ppm.XXXX)
stop_service() {
        local p m
        for p in $(cat "$D"/*.pid 2>/dev/null); do
                kill "$p" 2>/dev/null
                for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
                kill -9 "$p" 2>/dev/null
        done
        for m in $(awk -v d="$D" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
                umount -l "$m" 2>/dev/null
        done
        rm -rf "$D"
}
at_exit stop_service
# Podman as root raises a container's nofile and nproc rlimits to its
# maximum unless told; a host that denies root CAP_SYS_RESOURCE (as a
# container may) refuses that, so the service's defaults stay below.
cat >"$D/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
init_path = "$INIT"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
# serve NAME CONF: a service on $D/NAME.sock with that containers.conf,
# from $D (conmon leaves an `oom` file in its working directory).
serve() {
        (cd "$D" && CONTAINERS_CONF=$2 exec podman --root "$D/storage" --runroot "$D/run" --tmpdir "$D/tmp" \
                --volumepath "$D/volumes" --network-config-dir "$D/net" --runtime "$OCI" --cgroup-manager cgroupfs \
                --events-backend file system service --time=0 "unix://$D/$1.sock" >"$D/$1.log" 2>&1) &
        echo $! >"$D/$1.pid"
        wait_until 30 env DOCKER_HOST="unix://$D/$1.sock" docker version >/dev/null 2>&1
}
export DOCKER_HOST=unix://$D/podman.sock
if ! serve podman "$D/containers.conf"; then
        echo "SKIP t_podman: the private Podman service did not start:"
        tail -5 "$D/podman.log"
        exit 0
fi
echo "t_podman: $(podman --version), init $INIT"
dk() { "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" "$@"; }

engine_image "$D"
engine_check_exits
engine_check_stats
engine_check_limits
engine_check_disk
engine_check_seccomp
engine_check_no_image
engine_check_kill
engine_check_sweep
engine_check_sweep_foreign
engine_check_session
engine_check_workspace_swap
engine_check_group
engine_check_counters
engine_check_orphan
engine_check_volume

# ---- a service with Podman's defaults on this host: the fix is named ----
printf '[engine]\ninit_path = "/nonexistent/catatonit"\n' >"$D/bare.conf"
if serve bare "$D/bare.conf"; then
        DOCKER_HOST=unix://$D/bare.sock dk -- true 2>"$WORK/e"
        expect_eq "no container init: setup failed (125)" 125 $?
        expect_match "no container init: names catatonit and init_path" \
                "install catatonit.*init_path" "$(cat "$WORK/e")"
        printf '[engine]\ninit_path = "%s"\n' "$INIT" >"$D/bare.conf"
        kill "$(cat "$D/bare.pid")" && wait_until 10 test ! -e "/proc/$(cat "$D/bare.pid")"
        if serve bare "$D/bare.conf" && ! DOCKER_HOST=unix://$D/bare.sock dk -- true 2>"$WORK/e"; then
                # Only where root lacks CAP_SYS_RESOURCE (as here).
                expect_match "rlimits refused: names default_ulimits" \
                        "default_ulimits" "$(cat "$WORK/e")"
        fi
fi
# ---- an engine that accepts and never answers: a kill still ends it ----
"$T_PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
held = []
while True: held.append(s.accept()[0])' "$D/mute.sock" </dev/null &
track_pid $!
wait_until 5 test -S "$D/mute.sock"
DOCKER_HOST=unix://$D/mute.sock "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" -- true 2>"$WORK/e" &
p=$!
track_pid $p
sleep 1
kill -TERM $p
check "mute engine: SIGTERM ends proctor exec within 15 s" wait_until 15 test ! -e /proc/$p
wait $p
expect_eq "mute engine: killed: 137" 137 $?
# and without a kill, the create's deadline (the wall clock, 10 s at least)
t0=$(now_ms)
DOCKER_HOST=unix://$D/mute.sock "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" \
        --timeout 2 -- true 2>"$WORK/e"
expect_eq "mute engine: no start in time: setup failed (125)" 125 $?
expect_match "mute engine: said, with the engine" "engine at unix://$D/mute.sock did not create and start the container within 10 s" "$(cat "$WORK/e")"
check "mute engine: given up after about 10 s" test $(($(now_ms) - t0)) -lt 20000

expect_eq "nothing left at the end" 0 "$(leftovers)"

finish
