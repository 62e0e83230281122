#!/bin/sh
# A microVM's cold start against a native sandbox's: qemu's `microvm` machine
# booting a kernel with a busybox initramfs built here, whose /init runs
# busybox true and powers off, timed from spawning qemu to its exit and
# interleaved with whole `proctor exec --mode sandbox -- /bin/busybox true`
# processes, so that machine noise hits both alike. Also times the boot up to
# /init (the host's clock to init's first line, and the guest's /proc/uptime).
#
# Needs qemu-system-x86 (Debian: about 85 MB installed with its dependencies),
# a guest kernel (MICROVM_KERNEL, else /boot/vmlinuz-*: linux-image-amd64,
# about 410 MB with its modules, of which only the 8 MB image is used),
# busybox-static, python3 and a /dev/kvm that boots that kernel (a first boot,
# bounded, tells). Prints why and exits 0 when one is missing: it reports,
# never gates. A KVM that is PVM (module kvm_pvm, nested KVM without VMX)
# boots only kernels built as PVM guests, which Debian's is not. With
# MICROVM_ACCEL=tcg it times qemu's emulator instead: no microVM figure, and
# the table's title says so.
# Environment: MICROVM_ROUNDS (20), MICROVM_WARMUP (2), MICROVM_KERNEL,
# MICROVM_ACCEL (kvm), MICROVM_PROBE_SECS (20: the first boot's bound).
set -u
cd "$(dirname "$0")/../.." || exit 1
[ -x ./proctor ] || { echo "microvm benchmark: ./proctor missing (make proctor)"; exit 1; }
skip() {
        echo "microvm benchmark skipped: $*"
        exit 0
}
QEMU=$(command -v qemu-system-x86_64) || skip "no qemu-system-x86_64 (Debian package qemu-system-x86, about 85 MB installed)"
[ -x /bin/busybox ] || skip "no /bin/busybox (busybox-static)"
command -v python3 >/dev/null || skip "no python3"
KERNEL=${MICROVM_KERNEL:-}
if [ -z "$KERNEL" ]; then
        if [ -r "/boot/vmlinuz-$(uname -r)" ]; then
                KERNEL=/boot/vmlinuz-$(uname -r)
        else
                KERNEL=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
        fi
fi
[ -n "$KERNEL" ] && [ -r "$KERNEL" ] ||
        skip "no guest kernel (MICROVM_KERNEL, or /boot/vmlinuz-* from linux-image-amd64, about 410 MB installed)"
ACCEL=${MICROVM_ACCEL:-kvm}
case $ACCEL in
kvm | tcg) ;;
*) skip "MICROVM_ACCEL=$ACCEL: kvm or tcg" ;;
esac
if [ "$ACCEL" = kvm ]; then
        [ -c /dev/kvm ] || skip "no /dev/kvm (no KVM here; MICROVM_ACCEL=tcg times the emulator, no microVM figure)"
        # Opening the device is not enough: a VM and a vCPU must be creatable.
        why=$(python3 -c '
import fcntl, os, sys
try:
    fd = os.open("/dev/kvm", os.O_RDWR)
    if fcntl.ioctl(fd, 0xAE00) != 12:  # KVM_GET_API_VERSION
        sys.exit("an unknown KVM API version")
    vm = fcntl.ioctl(fd, 0xAE01, 0)  # KVM_CREATE_VM
    fcntl.ioctl(vm, 0xAE41, 0)  # KVM_CREATE_VCPU
except PermissionError as e:
    sys.exit(str(e) + " (root or the kvm group needed)")
except OSError as e:
    sys.exit(str(e))
' 2>&1) || skip "/dev/kvm is not usable: $why"
fi

W=$(mktemp -d /tmp/proctor-bench-microvm.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
export W KERNEL QEMU ACCEL
python3 - "${MICROVM_ROUNDS:-20}" "${MICROVM_WARMUP:-2}" "${MICROVM_PROBE_SECS:-20}" <<'EOF'
import math, os, re, select, subprocess, sys, time

rounds, warmup, probe_secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
W, KERNEL, QEMU, ACCEL = (os.environ[k] for k in ("W", "KERNEL", "QEMU", "ACCEL"))

INIT = b"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
read up idle </proc/uptime
echo "microvm-init $up"
/bin/busybox true
echo "microvm-rc $?"
/bin/busybox poweroff -f
"""


def cpio_newc(entries):
    """An uncompressed newc archive (the kernel's initramfs format) of
    (name, mode, data, rdev major, rdev minor) tuples, built without cpio."""
    out = bytearray()

    def pad4():
        out.extend(b"\0" * (-len(out) % 4))

    for ino, (name, mode, data, ma, mi) in enumerate(entries + [("TRAILER!!!", 0, b"", 0, 0)], 1):
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, ma, mi, len(name) + 1, 0]
        out += b"070701" + b"".join(b"%08X" % f for f in fields) + name.encode() + b"\0"
        pad4()
        out += data
        pad4()
    return bytes(out)


with open("/bin/busybox", "rb") as f:
    busybox = f.read()
initrd = os.path.join(W, "initrd.cpio")
with open(initrd, "wb") as f:
    f.write(cpio_newc([
        (".", 0o40755, b"", 0, 0),
        ("bin", 0o40755, b"", 0, 0),
        ("bin/busybox", 0o100755, busybox, 0, 0),
        ("dev", 0o40755, b"", 0, 0),
        ("dev/console", 0o20600, b"", 5, 1),
        ("proc", 0o40755, b"", 0, 0),
        ("init", 0o100755, INIT, 0, 0),
    ]))

cmdline = "console=ttyS0 quiet panic=-1 reboot=t"
if ACCEL == "kvm":
    accel = ["-enable-kvm", "-cpu", "host"]
else:
    # The emulated guest's TSC is the host's; calibrating it against the
    # emulated PIT fails now and then on a loaded host, and the boot stops.
    accel = ["-accel", "tcg"]
    with open("/proc/cpuinfo") as f:
        mhz = re.search(r"^cpu MHz\s*:\s*([0-9.]+)", f.read(), re.M)
    if mhz:
        cmdline += " tsc_early_khz=%d" % (float(mhz.group(1)) * 1000)
qemu_argv = [QEMU, "-M", "microvm", *accel, "-m", "128", "-smp", "1", "-nodefaults",
             "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot",
             "-kernel", KERNEL, "-initrd", initrd,
             "-append", cmdline]
native_argv = ["./proctor", "exec", "--mode", "sandbox", "--", "/bin/busybox", "true"]


def boot(bound):
    """One microVM, spawn to exit: (total ns, ns to init's first line, guest
    uptime at init in s), or a string saying what went wrong."""
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(qemu_argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    out, t_init, deadline = b"", None, time.monotonic() + bound
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            p.kill()
            p.wait()
            return "no exit in %.0f s; console: %r" % (bound, out[-300:])
        r, _, _ = select.select([p.stdout], [], [], left)
        if not r:
            continue
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        out += chunk
        if t_init is None and b"microvm-init " in out:
            t_init = time.perf_counter_ns()
    rc = p.wait()
    total = time.perf_counter_ns() - t0
    m = re.search(rb"microvm-init ([0-9.]+)", out)
    if rc != 0 or m is None or b"microvm-rc 0" not in out:
        return "qemu exited %d; console: %r" % (rc, out[-300:])
    return total, t_init - t0, float(m.group(1))


def native():
    t0 = time.perf_counter_ns()
    rc = subprocess.run(native_argv, stdin=subprocess.DEVNULL).returncode
    if rc != 0:
        sys.exit("microvm benchmark: %s exited %d" % (" ".join(native_argv), rc))
    return time.perf_counter_ns() - t0


first = boot(probe_secs)
if isinstance(first, str):
    why = "the guest did not reach its /init and power off under %s: %s" % (ACCEL, first)
    if ACCEL == "kvm" and os.path.isdir("/sys/module/kvm_pvm"):
        # PVM (nested KVM without VMX) runs only kernels built as PVM guests;
        # any other kernel is left in its instruction emulator.
        cfg = "/boot/config-" + os.path.basename(KERNEL).removeprefix("vmlinuz-")
        pvm = os.path.exists(cfg) and "CONFIG_PVM_GUEST=y" in open(cfg).read()
        why = ("this host's KVM is PVM (module kvm_pvm), which runs only PVM guest kernels "
               "(CONFIG_PVM_GUEST) at speed, and %s %s; %s" %
               (KERNEL, "is one" if pvm else "is not one" if os.path.exists(cfg)
                else "has no %s to tell" % cfg, why))
    print("microvm benchmark skipped: " + why)
    sys.exit(0)

vm, to_init, uptime, nat = [], [], [], []
for r in range(warmup + rounds):
    for v in ((0, 1) if r % 2 == 0 else (1, 0)):
        if v == 0:
            b = boot(max(probe_secs, 60))
            if isinstance(b, str):
                sys.exit("microvm benchmark: round %d: %s" % (r, b))
            if r >= warmup:
                vm.append(b[0] / 1000)
                to_init.append(b[1] / 1000)
                uptime.append(b[2] * 1e6)
        else:
            ns = native()
            if r >= warmup:
                nat.append(ns / 1000)


def pct(xs, p):
    """The nearest-rank percentile, as tests/bench/bench.h computes it."""
    xs = sorted(xs)
    return xs[min(len(xs), max(1, math.ceil(p / 100 * len(xs)))) - 1]


label = "KVM" if ACCEL == "kvm" else "TCG emulation, no microVM figure"
nmed = pct(nat, 50)
print("### microVM cold start (qemu -M microvm, %s) vs native sandbox, busybox true "
      "(%d rounds interleaved, %d warm-up; microseconds)\n" % (label, rounds, warmup))
print("kernel %s, %d KiB initramfs (busybox-static); uptime is the guest's clock "
      "(10 ms resolution)\n" % (KERNEL, os.path.getsize(initrd) // 1024))
print("| variant | median | p90 | min | median / native |\n|---|---:|---:|---:|---:|")
for name, xs in (("microvm: spawn to exit", vm), ("microvm: spawn to /init's first line", to_init),
                 ("microvm: guest uptime at /init", uptime),
                 ("native: proctor exec --mode sandbox (process)", nat)):
    m = pct(xs, 50)
    print("| %s | %.0f | %.0f | %.0f | %.2fx |" % (name, m, pct(xs, 90), min(xs), m / nmed))
EOF
exit $?
