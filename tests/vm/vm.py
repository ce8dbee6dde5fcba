#!/usr/bin/env python3
"""Boot and drive the memonlined test guest (QEMU TCG, QMP, qemu-guest-agent).

Library:
    with VM(image_dir) as vm:
        vm.boot()
        vm.hotplug_dimm(node=1, size=1 << 30)
        r = vm.guest_exec(["lsmem"], timeout=30)   # -> ExecResult(rc, out, err)

CLI:
    vm.py [--image-dir DIR] boot          boot, wait for the agent, print info, shut down
    vm.py [--image-dir DIR] shell         boot and run guest commands read from stdin
    vm.py [--image-dir DIR] demo          hot-add DIMMs on nodes 0/1 and an NVDIMM
                                          (devdax -> kmem) on node 2, show the blocks
                                          coming online and memonlined's records,
                                          then `memonlined report` and `memonlined status`
    vm.py [--image-dir DIR] selftest      hot-add a DIMM / virtio-mem / NVDIMM and
                                          online by hand (no daemon needed)

python3 stdlib only. QEMU is always killed when the VM object is closed, at
interpreter exit, and (PR_SET_PDEATHSIG) if this process dies.
"""

import argparse
import atexit
import base64
import ctypes
import json
import os
import re
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

GiB = 1 << 30
MiB = 1 << 20
KiB = 1 << 10

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_IMAGE_DIR = os.environ.get(
    "MEMONLINED_VM_OUT",
    os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                 "memonlined-vm", "noproject"))
GUEST_LIB = "/usr/lib/memonlined-test"

# Guest CPUs -> the -smp shape beside sockets=2 (one socket per CPU node). 8 is
# the suites' own (two cores of two threads per node); fewer leave TCG's vCPU
# threads fewer than the host's cores, for benchmarks that must not
# oversubscribe them.
SMP_SHAPES = {8: "cores=2,threads=2", 4: "cores=1,threads=2", 2: "cores=1,threads=1"}


def cpu_range(first, end):
    """QEMU's -numa cpus= value for CPUs first..end-1."""
    return str(first) if end - first == 1 else "%d-%d" % (first, end - 1)

# Label area for emulated NVDIMMs; backend size = namespace size + label size.
NVDIMM_LABEL_SIZE = 128 * KiB
# NVDIMMs are pinned near the top of the device-memory window so that the
# auto-placed DIMMs (and virtio-mem) below stay 128 MiB aligned.
NVDIMM_BASE_ADDR = 100 * GiB


def image_env(image_dir):
    """image.env of an image as a dict ({} if unreadable)."""
    env = {}
    try:
        for line in open(os.path.join(image_dir, "image.env")):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    except OSError:
        pass
    return env


def kernel_tag(kver):
    """"6.12" of "6.12.118+deb13-amd64"."""
    return ".".join((kver or "?").split("-")[0].split("+")[0].split(".")[:2])


def kernel_auto_online(config_path):
    """What auto_online_blocks reads at boot without memhp_default_state=,
    from the kernel's config; None if the config is not there."""
    try:
        cfg = dict(line.strip().split("=", 1) for line in open(config_path)
                   if line.startswith("CONFIG_") and "=" in line)
    except OSError:
        return None
    for opt, value in (("CONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE_MOVABLE", "online_movable"),
                       ("CONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE_KERNEL", "online_kernel"),
                       ("CONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE_AUTO", "online"),
                       ("CONFIG_MEMORY_HOTPLUG_DEFAULT_ONLINE", "online")):  # before 6.14's rename
        if cfg.get(opt) == "y":
            return value
    return "offline"


class VMError(Exception):
    pass


class BootStalled(VMError):
    """The guest's console stopped moving before its agent came up."""


class EmulatorAborted(VMError):
    """QEMU itself failed an internal assertion (or aborted) before the guest's agent came up."""


def emulator_aborted(returncode, qemu_log):
    """True when QEMU's exit is its own internal failure, not a refusal of the command line:
    TCG now and then fails an assertion of its own (seen: iotlb_to_section's in physmem.c)."""
    return returncode == -signal.SIGABRT or "Assertion `" in qemu_log


class ExecResult:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self):
        return "ExecResult(rc=%r, out=%r, err=%r)" % (self.rc, self.out[-500:], self.err[-500:])

    def check(self, what=""):
        if self.rc != 0:
            raise VMError("guest command %s failed rc=%s\nstdout: %s\nstderr: %s"
                          % (what, self.rc, self.out[-3000:], self.err[-3000:]))
        return self


def _pdeathsig():
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    os.setpgrp()


class JsonSocket:
    """Line-delimited JSON over a unix socket, with deadlines."""

    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, obj):
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def send_raw(self, data):
        self.sock.sendall(data)

    def recv(self, deadline):
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                line = line.strip().lstrip(b"\xff").strip()
                if not line:
                    continue
                try:
                    return json.loads(line)
                except ValueError:
                    continue  # garbage from a stale exchange
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("timed out waiting for reply")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise VMError("socket closed")
            self.buf += chunk


class VM:
    """cxl: sizes of CXL Type-3 devices with volatile memory, one per root
    port of one pxb-cxl host bridge under one fixed memory window (4 GiB,
    or their sum rounded up to GiB if larger).
    Non-empty, it makes the machine q35 with cxl=on, the CPU without the
    hypervisor bit (x86 refuses to commit a region in a guest: "Failed to
    synchronize CPU cache state"), every PCI device on pcie.0 explicitly,
    and no NVDIMM support."""

    def __init__(self, image_dir=None, workdir=None, mem_mib=2048, slots=16,
                 maxmem="128G", virtio_mem_size=4 * GiB, virtio_mem_node=1,
                 coldplug_nvdimms=(), extra_append="", log=None, boot_timeout=300, cxl=(), cpus=8):
        if cpus not in SMP_SHAPES:
            raise VMError("cpus must be one of %s" % sorted(SMP_SHAPES))
        self.cpus = cpus
        self.image_dir = image_dir or DEFAULT_IMAGE_DIR
        env = image_env(self.image_dir)
        self.image = env.get("IMAGE", os.path.join(self.image_dir, "image.raw"))
        self.kernel = env.get("KERNEL", os.path.join(self.image_dir, "vmlinuz"))
        self.initrd = env.get("INITRD", os.path.join(self.image_dir, "initrd.img"))
        self.append = env.get("APPEND", "console=ttyS0 root=/dev/vda rw")
        extra_append = extra_append or os.environ.get("MEMONLINED_VM_APPEND", "")
        if extra_append:
            self.append += " " + extra_append
        self.env = env
        self.has_project = env.get("PROJECT") in ("yes", "stub")
        self.project = env.get("PROJECT", "no")
        for f in (self.image, self.kernel, self.initrd):
            if not os.path.exists(f):
                raise VMError("missing %s: run tests/vm/build-image.sh first" % f)
        self.own_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="memonlined-vm-")
        os.makedirs(self.workdir, exist_ok=True)
        self.qmp_path = os.path.join(self.workdir, "qmp.sock")
        self.qga_path = os.path.join(self.workdir, "qga.sock")
        self.serial_log = os.path.join(self.workdir, "serial.log")
        self.qemu_log = os.path.join(self.workdir, "qemu.log")
        self.mem_mib = mem_mib
        self.slots = slots
        self.maxmem = maxmem
        self.virtio_mem_size = virtio_mem_size
        self.virtio_mem_node = virtio_mem_node
        self.coldplug_nvdimms = list(coldplug_nvdimms)
        self.cxl = list(cxl)
        self.boot_timeout = boot_timeout
        self.log = log or (lambda msg: print("[vm %7.1fs] %s" % (time.monotonic() - self.t0, msg),
                                             file=sys.stderr, flush=True))
        self.proc = None
        self.qmp = None
        self.events = []
        self.ndimm = 0
        self.nnvdimm = 0
        self.nvdimm_next_addr = NVDIMM_BASE_ADDR
        self.t0 = time.monotonic()
        self.boot_seconds = None
        self.boot_retries = 0
        atexit.register(self.close)

    # ------------------------------------------------------------------ qemu
    def qemu_cmdline(self):
        half = self.mem_mib // 2
        cxl = bool(self.cxl)
        # With a pxb-cxl bridge, devices without a bus may land behind it.
        pcie0 = ",bus=pcie.0" if cxl else ""
        c = ["qemu-system-x86_64",
             "-machine", "q35,accel=tcg,cxl=on" if cxl else "pc,accel=tcg,nvdimm=on",
             "-cpu", "max,vendor=GenuineIntel" + (",hypervisor=off" if cxl else ""),
             "-smp", "%d,sockets=2,%s" % (self.cpus, SMP_SHAPES[self.cpus]),
             "-m", "%dM,slots=%d,maxmem=%s" % (self.mem_mib, self.slots, self.maxmem),
             "-object", "memory-backend-ram,id=ram0,size=%dM" % half,
             "-object", "memory-backend-ram,id=ram1,size=%dM" % (self.mem_mib - half),
             "-numa", "node,nodeid=0,cpus=%s,memdev=ram0" % cpu_range(0, self.cpus // 2),
             "-numa", "node,nodeid=1,cpus=%s,memdev=ram1" % cpu_range(self.cpus // 2, self.cpus),
             # CPU-less, memory-less at boot. Being the last node it also owns
             # the SRAT hotplug range, so the guest knows it as possible.
             "-numa", "node,nodeid=2",
             "-numa", "dist,src=0,dst=1,val=20",
             "-numa", "dist,src=0,dst=2,val=30",
             "-numa", "dist,src=1,dst=2,val=17",
             "-kernel", self.kernel, "-initrd", self.initrd, "-append", self.append,
             *(["-drive", "file=%s,format=raw,if=none,id=hd0,snapshot=on" % self.image,
                "-device", "virtio-blk-pci,drive=hd0" + pcie0] if cxl else
               ["-drive", "file=%s,format=raw,if=virtio,snapshot=on" % self.image]),
             "-display", "none", "-nodefaults", "-no-user-config",
             "-serial", "file:%s" % self.serial_log,
             "-qmp", "unix:%s,server=on,wait=off" % self.qmp_path,
             "-chardev", "socket,path=%s,server=on,wait=off,id=qga0" % self.qga_path,
             "-device", "virtio-serial-pci" + pcie0 if cxl else "virtio-serial",
             "-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0",
             "-no-reboot"]
        if self.virtio_mem_size:
            c += ["-object", "memory-backend-ram,id=vmem0,size=%d,reserve=off" % self.virtio_mem_size,
                  "-device", "virtio-mem-pci,id=vmem0dev,memdev=vmem0,node=%d,requested-size=0%s"
                  % (self.virtio_mem_node, pcie0)]
        if cxl:
            c += ["-device", "pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1"]
            for i, size in enumerate(self.cxl):
                c += ["-object", "memory-backend-ram,id=cxlvmem%d,share=on,size=%d" % (i, size),
                      "-device", "cxl-rp,port=%d,bus=cxl.1,id=cxlrp%d,chassis=0,slot=%d" % (i, i, i + 2),
                      "-device", "cxl-type3,bus=cxlrp%d,volatile-memdev=cxlvmem%d,id=cxl-vmem%d,sn=%d"
                      % (i, i, i, 0x1000 + i)]
            # The window holds every device's region: 4 GiB, more for larger devices.
            window = max(4, -(-sum(self.cxl) // GiB))
            c += ["-M", "cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=%dG" % window]
        for i, (node, size) in enumerate(self.coldplug_nvdimms):
            path = self._nvdimm_file("cnv%d" % i, size)
            addr = self._nvdimm_addr(size)
            c += ["-object", "memory-backend-file,id=cnvmem%d,share=on,mem-path=%s,size=%d"
                  % (i, path, size + NVDIMM_LABEL_SIZE),
                  "-device", "nvdimm,id=cnv%d,memdev=cnvmem%d,node=%d,label-size=%d,addr=%d"
                  % (i, i, node, NVDIMM_LABEL_SIZE, addr)]
        return c

    def start(self):
        for p in (self.qmp_path, self.qga_path):
            if os.path.exists(p):
                os.unlink(p)
        cmd = self.qemu_cmdline()
        self.log("starting qemu (workdir %s)" % self.workdir)
        with open(os.path.join(self.workdir, "qemu.cmdline"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        self.t_boot = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=open(self.qemu_log, "wb"),
                                     stderr=subprocess.STDOUT, preexec_fn=_pdeathsig)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.qmp_path):
            if self.proc.poll() is not None:
                raise VMError("qemu exited rc=%s: %s" % (self.proc.returncode, self.qemu_log_tail()))
            if time.monotonic() > deadline:
                raise VMError("qemu did not create the QMP socket")
            time.sleep(0.05)
        self.qmp = JsonSocket(self.qmp_path, 30)
        greeting = self.qmp.recv(time.monotonic() + 30)
        if "QMP" not in greeting:
            raise VMError("bad QMP greeting %r" % greeting)
        self.qmp_cmd("qmp_capabilities")
        return self

    def qemu_log_tail(self, n=4000):
        try:
            return open(self.qemu_log, errors="replace").read()[-n:]
        except OSError:
            return ""

    def serial_tail(self, n=6000):
        try:
            with open(self.serial_log, "rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - n))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def serial_since(self, offset, overlap=64):
        """What the serial console printed from OFFSET on, with OVERLAP bytes before it
        (a line split across two polls is still whole)."""
        try:
            with open(self.serial_log, "rb") as f:
                f.seek(max(0, offset - overlap))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def _serial_size(self):
        try:
            return os.path.getsize(self.serial_log)
        except OSError:
            return 0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def close(self):
        self.kill()
        if self.own_workdir and not os.environ.get("MEMONLINED_VM_KEEP"):
            # keep logs only when asked; nvdimm backing files are large sparse files
            shutil.rmtree(self.workdir, ignore_errors=True)

    def kill(self):
        """Stop qemu at once; the work dir stays."""
        if self.qmp:
            try:
                self.qmp.close()
            except Exception:
                pass
            self.qmp = None
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                try:
                    self.proc.kill()
                except OSError:
                    pass
            try:
                self.proc.wait(10)
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------- QMP
    def qmp_cmd(self, cmd, timeout=60, **args):
        if not self.alive():
            raise VMError("qemu is not running: %s" % self.qemu_log_tail())
        msg = {"execute": cmd}
        if args:
            msg["arguments"] = args
        self.qmp.send(msg)
        deadline = time.monotonic() + timeout
        while True:
            r = self.qmp.recv(deadline)
            if "event" in r:
                self.events.append(r)
                continue
            if "error" in r:
                raise VMError("QMP %s %s: %s" % (cmd, json.dumps(args), r["error"]))
            return r.get("return")

    def hmp(self, line):
        return self.qmp_cmd("human-monitor-command", **{"command-line": line})

    def hotplug_dimm(self, node, size, dev_id=None):
        """Hot-add a pc-dimm of SIZE bytes on NUMA NODE. Returns the device id."""
        i = self.ndimm
        self.ndimm += 1
        dev_id = dev_id or "dimm%d" % i
        self.qmp_cmd("object-add", **{"qom-type": "memory-backend-ram", "id": "m" + dev_id,
                                     "size": int(size), "reserve": False})
        self.qmp_cmd("device_add", driver="pc-dimm", id=dev_id, memdev="m" + dev_id, node=node)
        self.log("hot-added pc-dimm %s node=%d size=%dMiB" % (dev_id, node, size // MiB))
        return dev_id

    def unplug_dimm(self, dev_id, timeout=180):
        """device_del a pc-dimm: the guest ejects it (offlining its memory
        first) and QEMU frees it. Returns once QEMU no longer lists it."""
        self.qmp_cmd("device_del", id=dev_id)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            devs = self.qmp_cmd("query-memory-devices") or []
            if not any(d.get("data", {}).get("id") == dev_id for d in devs):
                self.qmp_cmd("object-del", id="m" + dev_id)
                self.log("unplugged pc-dimm %s" % dev_id)
                return
            time.sleep(1)
        raise VMError("pc-dimm %s still present %ds after device_del" % (dev_id, timeout))

    def _nvdimm_file(self, name, size):
        path = os.path.join(self.workdir, name + ".img")
        with open(path, "wb") as f:
            f.truncate(size + NVDIMM_LABEL_SIZE)
        return path

    def _nvdimm_addr(self, size):
        addr = self.nvdimm_next_addr
        self.nvdimm_next_addr += (size + NVDIMM_LABEL_SIZE + GiB - 1) // GiB * GiB
        return addr

    def hotplug_nvdimm(self, node, size, dev_id=None):
        """Hot-add an emulated NVDIMM whose namespace capacity is SIZE bytes."""
        i = self.nnvdimm
        self.nnvdimm += 1
        dev_id = dev_id or "nv%d" % i
        path = self._nvdimm_file(dev_id, size)
        addr = self._nvdimm_addr(size)
        self.qmp_cmd("object-add", **{"qom-type": "memory-backend-file", "id": "m" + dev_id,
                                     "mem-path": path, "share": True,
                                     "size": int(size + NVDIMM_LABEL_SIZE)})
        self.qmp_cmd("device_add", driver="nvdimm", id=dev_id, memdev="m" + dev_id,
                     node=node, addr=addr, **{"label-size": NVDIMM_LABEL_SIZE})
        self.log("hot-added nvdimm %s node=%d size=%dMiB addr=%#x" % (dev_id, node, size // MiB, addr))
        return dev_id

    def virtio_mem_resize(self, size, dev_id="vmem0dev"):
        self.qmp_cmd("qom-set", path="/machine/peripheral/" + dev_id,
                     property="requested-size", value=int(size))
        self.log("virtio-mem requested-size=%dMiB" % (size // MiB))

    def virtio_mem_size_now(self, dev_id="vmem0dev"):
        return self.qmp_cmd("qom-get", path="/machine/peripheral/" + dev_id, property="size")

    # ------------------------------------------------------------------- QGA
    def qga_call(self, cmd, timeout=30, **args):
        """One QGA command on a fresh connection, synchronised with guest-sync."""
        if not self.alive():
            raise VMError("qemu is not running: %s" % self.qemu_log_tail())
        deadline = time.monotonic() + timeout
        s = JsonSocket(self.qga_path, timeout)
        try:
            sync_id = random.randint(1, 2 ** 31)
            s.send_raw(b"\xff")
            s.send({"execute": "guest-sync-delimited", "arguments": {"id": sync_id}})
            while True:
                r = s.recv(deadline)
                if r.get("return") == sync_id:
                    break
            msg = {"execute": cmd}
            if args:
                msg["arguments"] = args
            s.send(msg)
            r = s.recv(deadline)
            if "error" in r:
                raise VMError("QGA %s: %s" % (cmd, r["error"]))
            return r.get("return")
        finally:
            s.close()

    def boot(self, attempts=3, stall_s=120):
        """start() and wait_guest_ready(), restarting qemu when the guest
        stalls before its agent answers. TCG guests now and then hang early in
        the kernel's boot (seen after "sched_clock: Marking stable", the serial
        console silent from then on), and QEMU's TCG now and then fails an
        internal assertion of its own and aborts; that is the emulator, not the
        code under test, so it costs a reboot rather than the run. Each restart
        is logged and counted in boot_retries."""
        self.boot_retries = 0
        for attempt in range(1, attempts + 1):
            self.start()
            try:
                return self.wait_guest_ready(stall_s=stall_s)
            except (BootStalled, EmulatorAborted) as e:
                self.log("boot %s (attempt %d/%d): %s"
                         % ("stalled" if isinstance(e, BootStalled) else "aborted", attempt, attempts, e))
                if attempt == attempts:
                    raise
                self.kill()
                self.nvdimm_next_addr = NVDIMM_BASE_ADDR
                self.boot_retries += 1

    def wait_guest_ready(self, timeout=None, stall_s=None):
        timeout = timeout or self.boot_timeout
        deadline = time.monotonic() + timeout
        seen_size, seen_at = -1, time.monotonic()
        while True:
            if not self.alive():
                log = self.qemu_log_tail()
                rc = self.proc.returncode if self.proc is not None else None
                raise (EmulatorAborted if emulator_aborted(rc, log) else VMError)(
                    "qemu exited during boot: %s\nserial:\n%s" % (log, self.serial_tail()))
            try:
                self.qga_call("guest-ping", timeout=5)
                break
            except (OSError, socket.timeout, VMError):
                now = time.monotonic()
                size = self._serial_size()
                if size != seen_size:
                    # The other hang: the console keeps printing RCU stall reports, so it is never silent.
                    # Each report's NMI backtraces (one per CPU) push its first line out of any short
                    # tail within the second, so all that came since the last poll is searched.
                    printed = self.serial_since(max(seen_size, 0))
                    seen_size, seen_at = size, now
                    if stall_s and "detected stalls on CPUs" in printed:
                        raise BootStalled("the guest kernel reports an RCU stall before its agent answers")
                elif stall_s and now - seen_at > stall_s:
                    last = self.serial_tail(400).strip().splitlines()
                    raise BootStalled("serial console silent for %ds, last line: %s"
                                      % (stall_s, last[-1] if last else "(none)"))
                if now > deadline:
                    raise VMError("guest agent not ready after %ds\nserial:\n%s"
                                  % (timeout, self.serial_tail()))
                time.sleep(1)
        # wait for systemd to finish starting up (memonlined must be up)
        r = self.guest_exec(["systemctl", "is-system-running", "--wait"],
                            timeout=max(10, deadline - time.monotonic()))
        self.boot_seconds = time.monotonic() - self.t_boot
        self.log("guest ready after %.1fs (system %s)" % (self.boot_seconds, r.out.strip()))
        return self.boot_seconds

    def guest_exec_start(self, argv, timeout=120, input=None):
        """Start ARGV in the guest (under timeout(1)); returns the guest pid."""
        if isinstance(argv, str):
            argv = ["/bin/sh", "-c", argv]
        full = ["/usr/bin/timeout", "-k", "5", str(int(timeout)), *map(str, argv)]
        args = {"path": full[0], "arg": full[1:], "capture-output": True}
        if input is not None:
            if isinstance(input, str):
                input = input.encode()
            args["input-data"] = base64.b64encode(input).decode()
        return self.qga_call("guest-exec", **args)["pid"]

    def guest_exec_wait(self, pid, timeout=120, argv=None, check=False):
        deadline = time.monotonic() + timeout + 15
        delay = 0.05
        while True:
            st = self.qga_call("guest-exec-status", pid=pid)
            if st.get("exited"):
                break
            if time.monotonic() > deadline:
                raise VMError("guest command %r did not finish in %ss" % (argv or pid, timeout))
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        out = base64.b64decode(st.get("out-data", "")).decode(errors="replace")
        err = base64.b64decode(st.get("err-data", "")).decode(errors="replace")
        if "exitcode" in st:
            rc = st["exitcode"]
        else:
            rc = -st.get("signal", 1)
        res = ExecResult(rc, out, err)
        if check:
            res.check(" ".join(map(str, argv or [pid])))
        return res

    def guest_exec(self, argv, timeout=120, input=None, check=False):
        """Run ARGV in the guest; returns ExecResult(rc, out, err). The guest
        side runs under timeout(1) so nothing outlives TIMEOUT."""
        pid = self.guest_exec_start(argv, timeout, input)
        return self.guest_exec_wait(pid, timeout, argv, check)

    def sh(self, script, timeout=120, check=True):
        return self.guest_exec(["/bin/sh", "-c", script], timeout=timeout, check=check)

    def guest_json(self, argv, timeout=120):
        r = self.guest_exec(argv, timeout=timeout, check=True)
        return json.loads(r.out)

    def write_guest_file(self, path, content, mode="0644"):
        self.guest_exec(["/bin/sh", "-c", 'cat > "$1" && chmod %s "$1"' % mode, "sh", path],
                        input=content, check=True)

    def diagnostics(self):
        """Text to print on failure: guest journal, serial console tail."""
        parts = []
        try:
            r = self.guest_exec(["journalctl", "-b", "--no-pager", "-n", "400"], timeout=60)
            parts.append("---- guest journalctl -b (last 400 lines) ----\n" + r.out + r.err)
        except Exception as e:  # noqa: BLE001
            parts.append("---- guest journal unavailable: %s" % e)
        parts.append("---- serial console tail ----\n" + self.serial_tail())
        q = self.qemu_log_tail()
        if q.strip():
            parts.append("---- qemu log ----\n" + q)
        return "\n".join(parts)

    def shutdown(self, timeout=30):
        if not self.alive():
            return
        try:
            self.qmp_cmd("quit", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        self.close()


# ---------------------------------------------------------------------- CLI
def _selftest(vm):
    T = GUEST_LIB
    info = {}
    vm.sh("%s/wait-blocks --mark" % T)
    vm.hotplug_dimm(1, 512 * MiB)
    t = time.monotonic()
    print(vm.sh("%s/wait-blocks 4" % T, timeout=120).out)
    info["dimm_appear_s"] = time.monotonic() - t
    print(vm.sh("%s/block-zones --all | tail -n 6" % T).out)
    t = time.monotonic()
    vm.sh("for b in $(%s/wait-blocks --list); do echo online_movable > /sys/devices/system/memory/$b/state; done" % T)
    info["manual_online_512MiB_s"] = time.monotonic() - t
    print(vm.sh("%s/block-zones | tail -n 6" % T).out)
    vm.sh("%s/wait-blocks --mark" % T)
    vm.hotplug_dimm(2, 256 * MiB)
    print(vm.sh("%s/wait-blocks 2 && %s/block-zones --all | tail -n 3" % (T, T)).out)
    vm.sh("%s/wait-blocks --mark" % T)
    vm.virtio_mem_resize(512 * MiB)
    print(vm.sh("%s/wait-blocks 4 && %s/block-zones --all | tail -n 5" % (T, T)).out)
    return info


NODE_COUNTS = r"""
/usr/lib/memonlined-test/block-zones --all | awk '
  { n[$2]=1; if ($3=="online") { on[$2]++; z[$2 " " $4]++ } else off[$2]++ }
  END { for (k in n) { printf "  node %s: %4d online %4d offline  (", k, on[k], off[k];
        sep=""; for (q in z) { split(q, a, " "); if (a[1]==k) { printf "%s%s=%d", sep, a[2], z[q]; sep=" " } }
        print ")" } }' | sort
"""
def _message_ids():
    """The MESSAGE_IDs as the daemon defines them (daemon/interface.h): one source."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "daemon", "interface.h")) as f:
        ids = dict(re.findall(r'#define MESSAGE_ID_(\w+)\s+"([0-9a-f]{32})"', f.read()))
    for name in ("BATCH", "NODE", "FAILURE", "DEVICE", "STALLED", "AUTO_ONLINE"):
        if name not in ids:
            raise RuntimeError("daemon/interface.h defines no MESSAGE_ID_%s" % name)
    return ids


MESSAGE_IDS = _message_ids()
RECORD_KIND = {MESSAGE_IDS[k.upper()]: k for k in ("batch", "node", "failure", "device")}


def _demo(vm):
    T = GUEST_LIB
    print("== memory blocks per node before hot-add")
    print(vm.sh(NODE_COUNTS).out)
    cursor = vm.sh(T + "/journal-records --cursor").out.strip()
    vm.sh(T + "/wait-blocks --mark")
    vm.hotplug_dimm(0, 1 * GiB)
    vm.hotplug_dimm(1, 2 * GiB)
    vm.hotplug_nvdimm(2, 2 * GiB)
    print("== NVDIMM on node 2: create a devdax namespace, hand it to kmem without onlining")
    r = vm.sh("for i in $(seq 60); do ndctl list -R | grep -q region && break; sleep 1; done; "
              "ndctl disable-region all && ndctl init-labels -f all && ndctl enable-region all && "
              "ndctl create-namespace -m devdax", timeout=180)
    dev = json.loads(r.out)["daxregion"]["devices"][0]["chardev"]
    r = vm.sh("daxctl reconfigure-device --mode=system-ram --no-online %s" % dev, timeout=240)
    print(r.out.strip())
    n = 8 + 16 + int(json.loads(r.out)[0]["total_memblocks"])
    vm.sh(T + "/wait-blocks -t 300 %d >/dev/null" % n, timeout=330)
    r = vm.sh(T + "/wait-blocks --online -t 120", timeout=150, check=False)
    print("== memory blocks per node after hot-add (%d new blocks)%s"
          % (n, "" if r.rc == 0 else " -- NOT ALL ONLINE: " + r.err.strip()))
    print(vm.sh(NODE_COUNTS).out)
    print("== memonlined journal records")
    r = vm.guest_exec([T + "/journal-records", "all", cursor], timeout=60, check=True)
    for line in r.out.splitlines():
        rec = json.loads(line)
        kind = RECORD_KIND.get(rec.get("MESSAGE_ID"), "?")
        fields = " ".join("%s=%s" % (k[10:], rec[k]) for k in sorted(rec) if k.startswith("MEMONLINE_"))
        print("  %-7s %s" % (kind, fields))
    # The daemon's own views: timing review of this boot's journal, live state.
    rc = 0
    for title, cmd in (("memonlined report", "memonlined report"),
                       ("memonlined status", "memonlined status")):
        r = vm.sh(cmd, check=False, timeout=120)
        print("== %s%s" % (title, "" if r.rc == 0 else " (exit %d)" % r.rc))
        print((r.out + r.err).rstrip())
        rc = rc or r.rc
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-dir", default=DEFAULT_IMAGE_DIR)
    ap.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    ap.add_argument("what", choices=["boot", "shell", "selftest", "demo"])
    a = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="memonlined-vm-") if a.keep else None
    vm = VM(a.image_dir, workdir=workdir)
    try:
        vm.boot()
        if a.what == "boot":
            print(vm.sh("uname -r; lscpu | grep -i -E 'numa|thread|core|socket'; "
                        "cat /sys/devices/system/node/node*/cpulist; lsmem | tail -n 4").out)
            print("boot_seconds %.1f" % vm.boot_seconds)
        elif a.what == "shell":
            for line in sys.stdin:
                if line.strip():
                    r = vm.sh(line, check=False, timeout=600)
                    sys.stdout.write(r.out + r.err + "[rc=%s]\n" % r.rc)
                    sys.stdout.flush()
        elif a.what == "demo":
            if _demo(vm) != 0:
                raise VMError("memonlined report/status failed in the guest")
        elif a.what == "selftest":
            print(json.dumps(_selftest(vm)))
        vm.shutdown()
    except Exception:
        import traceback
        traceback.print_exc()
        if vm.alive():
            print(vm.diagnostics(), file=sys.stderr)
        sys.exit(1)
    finally:
        vm.close()
        if a.keep:
            print("logs kept in", workdir, file=sys.stderr)


if __name__ == "__main__":
    main()
