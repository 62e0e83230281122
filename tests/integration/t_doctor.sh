#!/bin/bash
# proctor doctor: reports the host's isolation, proves it with a real
# sandbox, and counts the seccomp policy.
# as-user: yes
. "$(dirname "$0")/lib.sh"

out=$("$PROCTOR" doctor); rc=$?
expect_eq "doctor exits 0 when sandboxes work" 0 $rc
expect_match "smoke test ran" "sandbox smoke test: ok" "$out"
expect_match "kernel reported" "kernel +Linux" "$out"
expect_match "seccomp per ABI" "x86_64 +[0-9]+ allowed +[0-9]+ blocked" "$out"
expect_match "enforcement listed" "sandbox mode enforces here" "$out"

json=$("$PROCTOR" doctor --json)
field() { printf '%s' "$json" | python3 -c "import sys, json; d = json.load(sys.stdin); print($1)"; }
expect_eq "json: user namespaces" True "$(field 'd["user_namespaces"]')"
expect_eq "json: smoke test ok" True "$(field 'd["sandbox_smoke_test"]["ok"]')"
expect_eq "json: policy blocks at least 300 syscalls" True \
        "$(field 'd["seccomp_policy"]["blocked"] >= 300')"
expect_eq "json: native ABI listed first" x86_64 "$(field 'd["seccomp_policy"]["abis"][0]["abi"]')"
expect_eq "json: landlock ABI is a number" True "$(field 'isinstance(d["landlock_abi"], int)')"
# the boundary around the sandbox is reported too
expect_match "json: the workspace's ownership" "opened once per session" "$(field 'd["enforced"]["workspace"]')"
expect_match "json: no setuid or device files" "setuid, setgid or device" "$(field 'd["enforced"]["file_modes"]')"
expect_match "json: the disk quota" "--disk, default 4G" "$(field 'd["enforced"]["disk"]')"
expect_match "json: per-sandbox kernel counters" "16 inotify" "$(field 'd["enforced"]["kernel_counters"]')"
expect_match "json: proctor's own files" "read-only" "$(field 'd["enforced"]["proctor_files"]')"
expect_match "json: a session's bounds" "--max-parallel" "$(field 'd["enforced"]["session"]')"
if [ "$(id -u)" -eq 0 ]; then
        expect_eq "root: runs as root" True "$(field 'd["root"]')"
        expect_match "root: a cgroup version in use" "^v[12]$" "$(field 'd["cgroup_version"]')"
        expect_eq "root: memory limit by cgroup" True "$(field '"cgroup" in d["enforced"]["memory"]')"
        expect_match "root: a root-owned workspace is acted on as root, by an idmapped mount" \
                "root-owned one as root through an idmapped mount" \
                "$(field 'd["enforced"]["workspace"]')"
else
        # No delegated cgroup for a normal user here: doctor must say so
        # and what sandbox mode falls back to.
        expect_eq "user: no cgroup" none "$(field 'd["cgroup_version"]')"
        expect_match "user: memory falls back to rlimits" "RLIMIT_AS" "$(field 'd["enforced"]["memory"]')"
        expect_match "user: advice given" "delegat|root" "$(field '" ".join(d["advice"])')"
fi
err=$("$PROCTOR" doctor --bogus 2>&1); rc=$?
expect_eq "doctor: unknown option exits 2" 2 $rc
expect_match "doctor: unknown option named" "unknown option '--bogus'" "$err"

# whether sandboxes can use the workspace as asked, and the fix when not
wsj() { "$PROCTOR" doctor --json "$@" | python3 -c 'import json, sys
d = json.load(sys.stdin); w = d["workspace"]
print(w["usable"], w["mode"], w["problem"] in d["advice"] if w["problem"] else "-")'; }
expect_eq "doctor: a usable workspace" "True rw -" "$(wsj --workspace "$WORK")"
mkdir "$WORK/readonly"
give_away "$WORK/readonly"
chmod 555 "$WORK/readonly"
expect_eq "doctor: rw on a directory sandboxes cannot write: not usable, in the advice" \
        "False rw True" "$(wsj --workspace "$WORK/readonly")"
expect_eq "doctor: ro on it is fine" "True ro -" "$(wsj --workspace "$WORK/readonly" --workspace-mode ro)"
expect_match "doctor: the text says why and the fix" \
        "workspace check \(rw\): workspace $WORK/readonly \($T_OWNER's, mode 0555\) is not writable by $T_OWNER.*--workspace-mode ro" \
        "$("$PROCTOR" doctor --workspace "$WORK/readonly")"
chmod 755 "$WORK/readonly"
finish
