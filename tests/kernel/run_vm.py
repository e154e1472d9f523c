#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Boots the host's Debian kernel in qemu (software emulation) with the host's
root file system shared read-only, runs one guest script and brings back its
exit status and the files it writes to /results.

    run_vm.py BUILD-DIR GUEST-SCRIPT RESULTS-DIR [NAME=VALUE ...] [--timeout S]
              [--disk IMAGE[:CACHE]] [--hostfwd HOSTPORT:GUESTPORT] [--pidfile FILE]
              [--cut-seed N] [--cut-keep FRACTION] [--init systemd]

--disk gives the guest a virtio disk (/dev/vda) backed by the raw image file
IMAGE, with qemu's cache mode CACHE (writeback, the default, or none: both
pass the guest's flushes on to the image file; unsafe, which drops them, is
refused; volatile: the image is served by volatile_nbd.py, a disk whose
write cache loses what was not flushed when the power goes: qemu reaches it
over NBD on a unix socket in RESULTS-DIR, with cache=writeback). When qemu is
killed (SIGKILL, the power cut), the volatile disk's server is told to cut
(--cut-seed N draws which unflushed writes land, --cut-keep FRACTION fixes
the share instead) and its "cut:" line lands in RESULTS-DIR/cut.out.
--hostfwd forwards the host's 127.0.0.1:HOSTPORT to the guest's
GUESTPORT (qemu's user network). --pidfile has qemu write its PID there, for
a test that kills it as a power cut would (tests/kernel/test_powercut.sh).

--init systemd boots the host's systemd as PID 1 on the same overlay root
instead of running stage 2 from the initramfs: the initramfs writes into the
overlay a target (vtl-guest.target, the boot's systemd.unit) that pulls in
only sysinit.target and a oneshot service running stage 2, which runs the
guest script and powers off as it does without systemd; it masks the units
that need what the guest lacks or that would change it behind the test's back
(udev, the host's open-iscsi, time sync, apparmor), empties /etc/fstab and
removes /.dockerenv (a host that is a container's root would make systemd
believe it runs in one, and ignore the kernel command line).

The VM always ends: the guest powers off on every path, and qemu runs under
a timeout. NAME=VALUE words reach the guest script as environment variables
(through the kernel command line). The uncompressed kernel and a tiny
initramfs (busybox, the 9p/virtio/overlay modules) are cached in
BUILD-DIR/kernel/. See ../shared/design/KERNEL-TESTS.md for why each piece.
"""
import glob
import gzip
import lzma
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# virtio_blk and ext4 for a guest with --disk: loaded from the initramfs they cost a fraction of the
# seconds modprobe takes reading them through 9p under emulation.
BOOT_MODULES = ["virtio_pci", "virtio_net", "9pnet_virtio", "9p", "overlay", "virtio_blk", "ext4"]
ELF_MAGIC = b"\x7fELF"


def kernel_version():
    """The newest kernel with its modules installed."""
    versions = sorted(os.path.basename(p)[len("vmlinuz-"):] for p in glob.glob("/boot/vmlinuz-*"))
    versions = [v for v in versions if os.path.isdir("/lib/modules/" + v)]
    if not versions:
        sys.exit("run_vm: no kernel in /boot with modules in /lib/modules (scripts/install-deps installs one)")
    return versions[-1]


def extract_vmlinux(bzimage, out):
    """The ELF kernel inside a bzImage: qemu boots it directly, which saves the decompression under TCG."""
    data = open(bzimage, "rb").read()
    for magic, opener in ((b"\xfd7zXZ\x00", "xz"), (b"\x1f\x8b\x08", "gz")):
        at = data.find(magic)
        while at >= 0:
            try:
                if opener == "xz":
                    raw = lzma.LZMADecompressor().decompress(data[at:])
                else:
                    raw = gzip.GzipFile(fileobj=__import__("io").BytesIO(data[at:])).read()
                if raw.startswith(ELF_MAGIC):
                    with open(out, "wb") as f:
                        f.write(raw)
                    return True
            except (lzma.LZMAError, OSError, EOFError):
                pass
            at = data.find(magic, at + 1)
    return False


def module_files(version):
    """The .ko files (with dependencies, in load order) of the boot modules."""
    files = []
    for m in BOOT_MODULES:
        out = subprocess.run(["modprobe", "-S", version, "--show-depends", m], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            parts = line.split()
            if parts and parts[0] == "insmod" and parts[1] not in files:
                files.append(parts[1])
    return files


INIT = r"""#!/bin/busybox sh
# Stage 1: mount the host's root (9p, read-only) under a tmpfs overlay, set up
# the network, and switch to it to run stage 2 (tests/kernel/guest_stage2.sh).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in /modules/*.ko; do insmod "$m" 2>/dev/null; done
mkdir -p /lower /upper /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro rootfs /lower || { echo "VTL-STAGE1: no 9p root"; poweroff -f; }
mount -t tmpfs tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot || { echo "VTL-STAGE1: no overlay"; poweroff -f; }
mkdir -p /newroot/results
mount -t 9p -o trans=virtio,version=9p2000.L results /newroot/results || echo "VTL-STAGE1: no results share"
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
if [ "${VTL_INIT:-}" = systemd ]; then
	# systemd as PID 1 (run_vm.py --init systemd): its boot target and the service that runs stage 2,
	# written into the overlay (the host's files stay as they are).
	u=/newroot/etc/systemd/system
	mkdir -p "$u"
	cat >"$u/vtl-guest.target" <<UNIT
[Unit]
Description=vtl kernel-tier guest (run_vm.py --init systemd)
Requires=sysinit.target vtl-guest.service
After=sysinit.target vtl-guest.service
AllowIsolate=yes
UNIT
	cat >"$u/vtl-guest.service" <<UNIT
[Unit]
Description=vtl kernel-tier guest script
After=sysinit.target
[Service]
Type=oneshot
Environment=VTL_INIT=systemd
ExecStart=/bin/sh $VTL_STAGE2
StandardOutput=journal+console
StandardError=journal+console
# Stage 2 powers off on every path; should it fail to run at all, the VM ends too.
FailureAction=poweroff-force
UNIT
	# udev (devtmpfs makes the st, ch and sg nodes), the host's iSCSI initiator and daemon (the guest
	# script runs its own iscsid), time sync, apparmor and the rest of what a host boots with.
	for m in systemd-udevd.service systemd-udev-trigger.service systemd-udev-settle.service \
		systemd-udevd-control.socket systemd-udevd-kernel.socket open-iscsi.service iscsid.service \
		iscsid.socket iscsi.service systemd-timesyncd.service apparmor.service systemd-pstore.service \
		systemd-firstboot.service systemd-repart.service systemd-machine-id-commit.service \
		systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-random-seed.service \
		systemd-pcrphase.service systemd-pcrphase-sysinit.service; do
		ln -sf /dev/null "$u/$m"
	done
	: >/newroot/etc/fstab
	# The host's root may be a container's: its /.dockerenv would make systemd think it runs in one,
	# and a containerised systemd ignores the kernel command line (systemd.unit=).
	rm -f /newroot/.dockerenv
	exec switch_root /newroot /lib/systemd/systemd
fi
exec switch_root /newroot /bin/sh "$VTL_STAGE2"
"""


def build_initramfs(version, out):
    work = tempfile.mkdtemp(prefix="vtl-initramfs-")
    try:
        for d in ("bin", "proc", "sys", "dev", "modules"):
            os.makedirs(os.path.join(work, d))
        shutil.copy("/bin/busybox", os.path.join(work, "bin/busybox"))
        for i, ko in enumerate(module_files(version)):
            dst = os.path.join(work, "modules", "%02d-%s" % (i, os.path.basename(ko)))
            if ko.endswith(".xz"):
                with lzma.open(ko) as src, open(dst[:-3], "wb") as f:
                    f.write(src.read())
            elif ko.endswith(".zst"):
                subprocess.run(["zstd", "-d", "-q", "-o", dst[:-4], ko], check=True)
            else:
                shutil.copy(ko, dst)
        with open(os.path.join(work, "init"), "w") as f:
            f.write(INIT)
        os.chmod(os.path.join(work, "init"), 0o755)
        files = subprocess.run("find . | cpio -o -H newc --quiet", shell=True, cwd=work, capture_output=True,
                               check=True).stdout
        # Through a file of its own and a rename: runs that start together each rebuild it (run_vm.py
        # changed), and none may boot another's half-written one.
        part = "%s.%d" % (out, os.getpid())
        with gzip.open(part, "wb") as f:
            f.write(files)
        os.replace(part, out)
    finally:
        shutil.rmtree(work)


DISK_CACHES = ("writeback", "none", "volatile")  # the modes that honour a guest's flush; see the docstring
VOLATILE_SERVER = os.path.join(HERE, "volatile_nbd.py")
VOLATILE_READY_LIMIT = 30  # seconds the volatile disk's server may take to listen (python under a loaded machine)
VOLATILE_END_LIMIT = 120   # seconds it may take to write back or cut after qemu ended
SUN_PATH_MAX = 107         # a unix socket's path, without its NUL (sockaddr_un.sun_path, unix(7))


def volatile_disk_start(image, results, seed, keep):
    """Starts volatile_nbd.py on IMAGE; returns (process, its socket's path) once it listens."""
    sock = os.path.join(results, "nbd.sock")
    if len(sock) > SUN_PATH_MAX:
        sys.exit("run_vm: %s is too long for a unix socket (%d bytes at most)" % (sock, SUN_PATH_MAX))
    if os.path.exists(sock):
        os.unlink(sock)
    cmd = [sys.executable, VOLATILE_SERVER, image, sock, "--seed", str(seed)]
    if keep is not None:
        cmd += ["--keep", keep]
    log = open(os.path.join(results, "nbd.log"), "w")
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    log.close()
    ready, _, _ = select.select([server.stdout], [], [], VOLATILE_READY_LIMIT)
    if not ready or server.stdout.readline().strip() != "ready":
        server.kill()
        server.wait()
        sys.exit("run_vm: the volatile disk's server did not start (%s)" % os.path.join(results, "nbd.log"))
    return server, sock


def volatile_disk_end(server, results, killed):
    """After qemu: the power cut (SIGTERM) if qemu was killed, else the server's own write-back at
    NBD_CMD_DISC; the server's "cut:" line goes to RESULTS/cut.out. True if the server ended well."""
    if killed:
        server.send_signal(signal.SIGTERM)
    try:
        out, _ = server.communicate(timeout=VOLATILE_END_LIMIT)
    except subprocess.TimeoutExpired:
        if killed:
            server.kill()
            server.communicate()
            print("run_vm: the volatile disk's server did not end its cut within %d s" % VOLATILE_END_LIMIT)
            return False
        # qemu ended without a clean disconnect (its timeout): that is a power cut too.
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate()
    with open(os.path.join(results, "cut.out"), "w") as f:
        f.write(out)
    if server.returncode != 0:
        print("run_vm: the volatile disk's server exited %d (%s)" % (server.returncode, os.path.join(results, "nbd.log")))
        return False
    return True


def take_option(args, name):
    """The value of --name VALUE in args (removed from them), or None."""
    if name not in args:
        return None
    i = args.index(name)
    if i + 1 >= len(args):
        sys.exit("run_vm: %s needs a value" % name)
    value = args[i + 1]
    del args[i:i + 2]
    return value


def main():
    args = [a for a in sys.argv[1:]]
    timeout = int(take_option(args, "--timeout") or 600)
    disk = take_option(args, "--disk")
    volatile = None
    hostfwd = take_option(args, "--hostfwd")
    pidfile = take_option(args, "--pidfile")
    cut_seed = take_option(args, "--cut-seed")
    cut_keep = take_option(args, "--cut-keep")
    init = take_option(args, "--init")
    if init not in (None, "systemd"):
        sys.exit("run_vm: --init systemd is the only other init, not %s" % init)
    if len(args) < 3:
        sys.exit(__doc__)
    build, script, results = args[0], os.path.abspath(args[1]), os.path.abspath(args[2])
    params = args[3:]
    version = kernel_version()
    cache = os.path.join(build, "kernel")
    os.makedirs(cache, exist_ok=True)
    vmlinux = os.path.join(cache, "vmlinux-" + version)
    if not os.path.exists(vmlinux) and not extract_vmlinux("/boot/vmlinuz-" + version, vmlinux):
        vmlinux = "/boot/vmlinuz-" + version  # boots too, only slower
    initrd = os.path.join(cache, "initramfs-%s.gz" % version)
    if not os.path.exists(initrd) or os.path.getmtime(initrd) < os.path.getmtime(__file__):
        build_initramfs(version, initrd)
    os.makedirs(results, exist_ok=True)
    stage2 = os.path.join(HERE, "guest_stage2.sh")
    # no_timer_check: on a loaded host TCG's emulated timer can miss the boot's IO-APIC check, which
    # then panics ("IO-APIC + timer doesn't work!"); the check proves nothing about an emulated board.
    cmdline = ["console=ttyS0", "quiet", "loglevel=3", "panic=-1", "rw", "no_timer_check",
               "VTL_STAGE2=" + stage2, "VTL_SCRIPT=" + script] + params
    if init == "systemd":
        # systemd's own words: its boot target (the initramfs writes it), no status lines on the console.
        cmdline += ["VTL_INIT=systemd", "systemd.unit=vtl-guest.target", "systemd.show_status=false"]
    qemu = ["timeout", "--kill-after=10", str(timeout), "qemu-system-x86_64",
            "-accel", "tcg,thread=multi", "-cpu", "max", "-m", "2048", "-smp", "2",
            "-nographic", "-no-reboot", "-kernel", vmlinux, "-initrd", initrd, "-append", " ".join(cmdline),
            "-virtfs", "local,path=/,mount_tag=rootfs,security_model=none,readonly=on,multidevs=remap",
            "-virtfs", "local,path=%s,mount_tag=results,security_model=none" % results,
            "-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0,romfile="]
    if hostfwd:
        host_port, _, guest_port = hostfwd.partition(":")
        if not (host_port.isdigit() and guest_port.isdigit()):
            sys.exit("run_vm: --hostfwd HOSTPORT:GUESTPORT, not %s" % hostfwd)
        qemu[qemu.index("user,id=n0")] += ",hostfwd=tcp:127.0.0.1:%s-:%s" % (host_port, guest_port)
    if disk:
        image, _, cache = disk.partition(":")
        cache = cache or DISK_CACHES[0]
        if cache not in DISK_CACHES:
            sys.exit("run_vm: disk cache mode %s: only %s pass the guest's flushes on" % (cache, ", ".join(DISK_CACHES)))
        if "," in image:
            sys.exit("run_vm: a disk image's path may not contain a comma (qemu's option separator)")
        if cache == "volatile":
            if cut_seed is None or not cut_seed.isdigit():
                sys.exit("run_vm: a volatile disk needs --cut-seed N")
            volatile, sock = volatile_disk_start(os.path.abspath(image), results, cut_seed, cut_keep)
            # cache=writeback: the guest sees a write cache (virtio-blk WCE) and its flushes reach the server.
            qemu += ["-drive", "if=virtio,format=raw,cache=writeback,file.driver=nbd,file.server.type=unix,"
                     "file.server.path=%s" % sock]
        else:
            qemu += ["-drive", "file=%s,if=virtio,format=raw,cache=%s" % (os.path.abspath(image), cache)]
    if pidfile:
        qemu += ["-pidfile", os.path.abspath(pidfile)]
    try:
        with open(os.path.join(results, "console.log"), "w") as log:
            rc = subprocess.run(qemu, stdout=log, stderr=subprocess.STDOUT).returncode
    finally:
        if volatile and volatile.poll() is None and sys.exc_info()[0] is not None:
            volatile.kill()  # run_vm itself failed: no cut to model
            volatile.wait()
    if volatile and not volatile_disk_end(volatile, results, rc in (-signal.SIGKILL, 128 + signal.SIGKILL)):
        return 1
    status_file = os.path.join(results, "exit-status")
    if rc in (-signal.SIGKILL, 128 + signal.SIGKILL):
        # timeout passes a signal on (dying of it, or as 128 + its number): someone cut the power.
        print("run_vm: qemu was killed (SIGKILL)")
        return 128 + signal.SIGKILL
    if rc == 124:
        print("run_vm: the VM did not finish within %d s" % timeout)
        return 124
    if not os.path.exists(status_file):
        print("run_vm: the guest left no exit status; console:")
        print(open(os.path.join(results, "console.log")).read()[-4000:])
        return 1
    return int(open(status_file).read().strip() or 1)


if __name__ == "__main__":
    sys.exit(main())
