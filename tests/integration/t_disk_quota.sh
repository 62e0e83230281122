#!/bin/bash
# The disk quota (--disk) against the ways past it that a plain walk of the
# workspace misses: fallocate's keep-size mode, a tree deeper than a
# recursive walk goes, files deleted while held open or mapped, empty files
# until the filesystem has no inodes left, directories the walk may not
# read, filesystems mounted inside the workspace, btrfs subvolumes and
# extended attributes kept outside st_blocks. Each
# attack runs under --disk 10M; its control shows that the same attack
# really takes the space where the quota does not stop it. Space is tens of
# MiB at most; the inode attack runs on a tmpfs made here.
# as-user: yes
. "$(dirname "$0")/lib.sh"

Q=10M
# An attack that is not stopped waits this long, then says so. Generous: a
# stopped one ends long before (the quota's walks come at least every 5 s
# while sandboxes write, but take at most a tenth of the time, and a loaded
# machine makes a walk slow); only a failure waits it out.
HOLD=90
D=$WORK/ws
mkdir "$D"
give_away "$D"

# qrun NAME [PROCTOR-ARGS...] -- CMD...: one execution in $D, its events in
# $WORK/NAME.jsonl
qrun() {
        local name=$1
        shift
        "$PROCTOR" exec --mode sandbox --workspace "$D" --json "$@" > "$WORK/$name.jsonl" 2>"$WORK/$name.err"
}
reason() { json_field exec.exit reason < "$WORK/$1.jsonl"; }
output() { json_eval 'out()' < "$WORK/$1.jsonl"; }
wall_s() { echo $(($(json_field exec.exit wall_ms < "$WORK/$1.jsonl") / 1000)); }
used_kib() { du -sk "$1" | cut -f1; }
# stopped NAME WHAT: the quota ended the attack, long before it gave up
stopped() {
        expect_eq "$2: disk_limit" disk_limit "$(reason "$1")"
        # what the quota saw, when it did not stop it
        [ "$(reason "$1")" = disk_limit ] ||
                echo "  $2: $(grep '"exec.exit"' "$WORK/$1.jsonl") $(tail -c 300 "$WORK/$1.err")"
        expect_no_match "$2: stopped before its end" "survived" "$(output "$1")"
        if [ "$(wall_s "$1")" -lt "$HOLD" ]; then pass; else fail "$2: ran $(wall_s "$1") s"; fi
}

# The attacks are programs given on the command line (a sandbox sees none
# of the host's /tmp). Each takes the directory to attack and how long to
# wait at its end.

# ---- fallocate's keep-size mode: blocks past the end, out of RLIMIT_FSIZE's sight ----
FALLOC=': > $1/k
fallocate -n -l 100M $1/k && echo allocated
sleep $2
echo survived'
qrun falloc --disk $Q -- sh -c "$FALLOC" sh /workspace 1
expect_match "fallocate -n: refused as unsupported" "unsupported|not supported" "$(output falloc)"
expect_no_match "fallocate -n: nothing allocated" "allocated" "$(output falloc)"
k=$(used_kib "$D")
if [ "$k" -lt 10240 ]; then pass; else fail "fallocate -n under a 10M quota left $k KiB in the workspace"; fi
# control: where no filter refuses it (local mode), the call allocates
"$PROCTOR" exec --mode local --workspace "$D" -- sh -c "$FALLOC" sh "$D" 0 > "$WORK/falloc-local.out" 2>&1
expect_match "control: fallocate -n allocates in local mode" "allocated" "$(cat "$WORK/falloc-local.out")"
k=$(used_kib "$D")
if [ "$k" -ge 102400 ]; then pass; else fail "control: fallocate -n took only $k KiB"; fi
rm -f "$D/k"
# plain allocation, which RLIMIT_FSIZE bounds, still works
qrun falloc-plain --disk $Q -- fallocate -l 1M /workspace/p
expect_eq "fallocate (plain) of 1M: exited" exited "$(reason falloc-plain)"
expect_eq "fallocate (plain) of 1M: allocated" 1048576 "$(stat -c %s "$D/p" 2>&1)"
rm -f "$D/p"

# ---- a tree deeper than a recursive walk follows ----
DEEP='
import os, sys, time
d = sys.argv[1]
for i in range(int(sys.argv[2])):
    d = os.path.join(d, "a")
    os.mkdir(d)
for i in range(4):
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(b"x" * (8 << 20))
    print("wrote", (i + 1) * 8, "MiB", flush=True)
time.sleep(float(sys.argv[3]))
print("survived")'
qrun deep --disk $Q -- python3 -c "$DEEP" /workspace 300 $HOLD
stopped deep "32 MiB 300 directories deep"
rm -rf "$D/a"
qrun deep-control -- python3 -c "$DEEP" /workspace 300 0
expect_match "control: 32 MiB 300 deep under the default quota" "survived" "$(output deep-control)"
k=$(used_kib "$D")
if [ "$k" -ge 32768 ]; then pass; else fail "control: the deep tree took only $k KiB"; fi
rm -rf "$D/a"

# ---- files deleted while held open, or mapped with the descriptor closed ----
HELD='
import mmap, os, sys, time
held, keep = 0, []
for i in range(4):
    p = os.path.join(sys.argv[1], "u%d" % i)
    f = open(p, "wb+")
    f.write(b"x" * (8 << 20))
    f.flush()
    os.fsync(f.fileno())
    os.unlink(p)
    held += os.fstat(f.fileno()).st_blocks * 512
    if sys.argv[2] == "map":
        keep.append(mmap.mmap(f.fileno(), 4096))
        f.close()
    else:
        keep.append(f)
    print("held", held, flush=True)
time.sleep(float(sys.argv[3]))
print("survived")'
held_bytes() { output "$1" | grep -o 'held [0-9]*' | tail -n 1 | cut -d' ' -f2; }
for how in open map; do
        qrun "held-$how" --disk $Q -- python3 -c "$HELD" /workspace $how $HOLD
        stopped "held-$how" "32 MiB deleted while held ($how)"
        qrun "held-$how-control" -- python3 -c "$HELD" /workspace $how 0
        expect_match "control: deleted while held ($how) under the default quota" "survived" \
                "$(output "held-$how-control")"
        b=$(held_bytes "held-$how-control")
        if [ "${b:-0}" -ge $((32 << 20)) ]; then pass; else
                fail "control: the deleted files ($how) held only ${b:-0} bytes"; fi
done

# ---- empty files: inodes, not bytes ----
INODES='
import os, sys, time
n = 0
try:
    for n in range(int(sys.argv[2])):
        open(os.path.join(sys.argv[1], "e%d" % n), "w").close()
    n += 1
except OSError as e:
    print("stopped at", n, e.strerror, flush=True)
print("made", n, flush=True)
time.sleep(float(sys.argv[3]))
print("survived")'
# 4,000 empty files: 16 MiB at 4 KiB each, past a 10M quota
qrun inodes --disk $Q -- python3 -c "$INODES" /workspace 4000 $HOLD
stopped inodes "4,000 empty files"
find "$D" -maxdepth 1 -name 'e*' -delete
if is_root; then
        # A filesystem of 12,000 inodes and room to spare for bytes:
        # without the quota the attack takes every inode.
        T=$WORK/small
        mkdir "$T"
        mount -t tmpfs -o size=64M,nr_inodes=12000,mode=0755 tmpfs "$T" && at_exit umount -l "$T"
        mkdir "$T/ws"
        give_away "$T/ws"
        "$PROCTOR" exec --mode sandbox --workspace "$T/ws" --json -- python3 -c "$INODES" \
                /workspace 20000 0 > "$WORK/inodes-control.jsonl" 2>/dev/null
        expect_match "control: empty files use up the filesystem's inodes" "No space left" \
                "$(output inodes-control)"
        expect_eq "control: no inode left" 0 "$(stat -f -c %d "$T")"
        find "$T/ws" -mindepth 1 -delete
        "$PROCTOR" exec --mode sandbox --workspace "$T/ws" --disk $Q --json -- python3 -c "$INODES" \
                /workspace 20000 $HOLD > "$WORK/inodes-fs.jsonl" 2>/dev/null
        stopped inodes-fs "empty files until the inodes run out"
        umount "$T"
fi

# ---- what the walk may not read ----
HIDDEN='mkdir $1/h
for i in 1 2 3 4; do head -c 8M /dev/zero > $1/h/f$i; done
chmod 0 $1/h
echo hidden
sleep $2
echo survived'
qrun hidden --disk $Q -- sh -c "$HIDDEN" sh /workspace $HOLD
stopped hidden "32 MiB in a directory made unreadable"
chmod 755 "$D/h"
rm -rf "$D/h"

# ---- other filesystems inside the workspace ----
qrun mount --disk $Q -- sh -c 'mkdir /workspace/m && mount -t tmpfs none /workspace/m && echo MOUNT-OK'
expect_no_match "a sandbox cannot mount in the workspace" "MOUNT-OK" "$(output mount)"
rmdir "$D/m" 2>/dev/null
FILL='for i in 1 2 3 4; do head -c 8M /dev/zero > $1/f$i; done
echo wrote
sleep $2
echo survived'
if is_root; then
        # The operator's own mount: sandboxes see (and write) the directory
        # under it, which the host's view of the workspace hides.
        mkdir "$D/m"
        give_away "$D/m"
        mount -t tmpfs -o size=1M tmpfs "$D/m" && at_exit umount -l "$D/m"
        qrun under --disk $Q -- sh -c "$FILL" sh /workspace/m $HOLD
        stopped under "32 MiB under a mount point in the workspace"
        umount "$D/m"
        rm -f "$D"/m/f*
        mount -t tmpfs -o size=1M tmpfs "$D/m"
        qrun under-control -- sh -c "$FILL" sh /workspace/m 0
        umount "$D/m"
        k=$(used_kib "$D/m")
        if [ "$k" -ge 32768 ]; then pass; else fail "control: under the mount point: only $k KiB"; fi
        rm -rf "$D/m"
fi
MKBTRFS=$(command -v mkfs.btrfs || command -v /usr/sbin/mkfs.btrfs || command -v /sbin/mkfs.btrfs)
BTRFS=$(command -v btrfs || command -v /usr/bin/btrfs || command -v /bin/btrfs)
if is_root && [ -n "$MKBTRFS" ] && [ -n "$BTRFS" ] && grep -qw btrfs /proc/filesystems; then
        B=$WORK/btrfs
        mkdir "$B"
        truncate -s 300M "$WORK/btrfs.img"
        "$MKBTRFS" -q "$WORK/btrfs.img" >/dev/null 2>&1
        mount -o loop "$WORK/btrfs.img" "$B" && at_exit umount -l "$B"
        mkdir "$B/ws"
        "$BTRFS" subvolume create "$B/ws/pre" >/dev/null
        give_away "$B/ws"
        # A sandbox makes a subvolume: a tree with a device number of its own
        "$PROCTOR" exec --mode sandbox --workspace "$B/ws" --disk $Q --json -- \
                "$BTRFS" subvolume create /workspace/sv > "$WORK/subvol.jsonl" 2>/dev/null
        expect_match "a sandbox cannot make a btrfs subvolume" "Operation not permitted" "$(output subvol)"
        expect_eq "no subvolume made" absent "$(stat -c %i "$B/ws/sv" 2>/dev/null || echo absent)"
        # control: the same call where no filter refuses it (local mode)
        "$PROCTOR" exec --mode local --workspace "$B/ws" -- "$BTRFS" subvolume create "$B/ws/sv" \
                > /dev/null 2>&1
        expect_eq "control: a subvolume made in local mode" 256 "$(stat -c %i "$B/ws/sv" 2>&1)"
        "$BTRFS" subvolume delete "$B/ws/sv" >/dev/null 2>&1
        # Writes into a subvolume that was there before count
        "$PROCTOR" exec --mode sandbox --workspace "$B/ws" --disk $Q --json -- sh -c "$FILL" sh \
                /workspace/pre $HOLD > "$WORK/subvol-fill.jsonl" 2>/dev/null
        stopped subvol-fill "32 MiB in a btrfs subvolume"
        rm -f "$B"/ws/pre/f*
        "$PROCTOR" exec --mode sandbox --workspace "$B/ws" --json -- sh -c "$FILL" sh /workspace/pre 0 \
                > "$WORK/subvol-control.jsonl" 2>/dev/null
        k=$(used_kib "$B/ws/pre")
        if [ "$k" -ge 32768 ]; then pass; else fail "control: the subvolume took only $k KiB"; fi
        rm -f "$B"/ws/pre/f*
        # Extended attributes: btrfs keeps them in its metadata, out of
        # st_blocks' count (32 MB of values on one empty file)
        XATTRS='
import os, sys, time
p = sys.argv[1] + "/x"
open(p, "w").close()
for i in range(2000):
    os.setxattr(p, "user.k%05d" % i, b"v" * 16000)
print("set", flush=True)
time.sleep(float(sys.argv[2]))
print("survived")'
        "$PROCTOR" exec --mode sandbox --workspace "$B/ws" --disk $Q --json -- python3 -c "$XATTRS" \
                /workspace $HOLD > "$WORK/xattrs.jsonl" 2>/dev/null
        stopped xattrs "32 MB of extended attributes on btrfs"
        rm -f "$B/ws/x"
        sync -f "$B"
        u0=$(df -k --output=used "$B" | tail -n 1)
        "$PROCTOR" exec --mode sandbox --workspace "$B/ws" --json -- python3 -c "$XATTRS" /workspace 0 \
                > "$WORK/xattrs-control.jsonl" 2>/dev/null
        sync -f "$B"
        u1=$(df -k --output=used "$B" | tail -n 1)
        expect_match "control: the attributes are set under the default quota" "survived" \
                "$(output xattrs-control)"
        if [ $((u1 - u0)) -ge 32768 ] && [ "$(stat -c %b "$B/ws/x")" -eq 0 ]; then pass; else
                fail "control: attributes took $((u1 - u0)) KiB, the file $(stat -c %b "$B/ws/x") blocks"
        fi
        umount "$B"
else
        echo "note: btrfs subvolume attacks skipped (root, btrfs-progs and the btrfs module needed)"
fi
finish
