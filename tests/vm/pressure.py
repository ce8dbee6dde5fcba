"""Load and pressure scenarios for run-scenarios.py: memory hot-added while
the guest is held near OOM by a process that keeps allocating.

A mixin of Suite (run-scenarios.py), in the main boot on both kernels.
"""

import time

from vm import GiB, MiB


# Held near OOM: touch memory in chunks until MemAvailable is near TARGET
# MiB, then go on allocating whatever comes free (the hot-added memory
# too), 4 MiB at a time, until /run/memonlined-test/hog-stop exists. No
# swap in the guest: anonymous memory is never reclaimed, so MemAvailable
# is what really remains. The hog goes first if the OOM killer comes
# (oom_score_adj 1000), and the scenario fails if it came at all.
# /run/memonlined-test/hog holds "held_mib avail_mib".
HOG = r'''
exec perl -e '
    use strict;
    my ($target, $secs) = @ARGV;
    $| = 1;
    if (open(my $o, ">", "/proc/self/oom_score_adj")) { print $o "1000\n"; close $o; }
    sub avail { open(my $m, "<", "/proc/meminfo") or die; while (<$m>) { return $1 >> 10 if /^MemAvailable:\s+(\d+)/ } 0 }
    my (@hold, $held);
    my $end = time + $secs;
    my $report = sub {
        open(my $s, ">", "/run/memonlined-test/hog.new") or return;
        printf $s "%d %d\n", $held, avail(); close $s;
        rename("/run/memonlined-test/hog.new", "/run/memonlined-test/hog");
    };
    while (time < $end && ! -e "/run/memonlined-test/hog-stop") {
        my $a = avail();
        if ($a > $target + 4) {
            my $chunk = $a - $target > 256 ? 64 : 4;
            push @hold, "\x5a" x ($chunk << 20);
            $held += $chunk;
            next;
        }
        $report->();
        select(undef, undef, undef, 0.1);
    }
    $report->();
' "$@"
'''
HOG_TARGET_MIB = 48
HOG_STATE = "/run/memonlined-test/hog"
# Left to the hog after the huge-page reservation: what it fills by touching.
HOG_TOUCH_MIB = 384


class PressureScenarios:
    """Mixed into Suite (with FaultScenarios, whose check() it uses); see SCENARIOS in run-scenarios.py."""

    def oom_kills(self):
        return int(self.sh("dmesg | grep -c -E 'invoked oom-killer|Out of memory|oom-kill:' || true",
                           check=False).out.strip() or 0)

    def daemon_ids(self):
        return (self.sh("systemctl show -p MainPID --value memonlined").out.strip(),
                int(self.sh("systemctl show -p NRestarts --value memonlined").out.strip() or 0))

    def hog_state(self):
        r = self.sh("cat %s" % HOG_STATE, check=False)
        held, avail = (r.out.split() + ["0", "0"])[:2] if r.rc == 0 else ("0", "0")
        return int(held), int(avail)

    def reserve_huge_pages(self):
        """Take all but HOG_TOUCH_MIB of the available memory as huge pages:
        the kernel hands them over untouched, where the hog would spend a
        minute under TCG writing gigabytes. They are as unreclaimable as the
        hog's pages (no swap), so the guest is just as near OOM. Returns MiB."""
        meminfo = self.sh("cat /proc/meminfo").out
        kib = dict((k, int(v.split()[0])) for k, v in (l.split(":", 1) for l in meminfo.splitlines()))
        page_mib = max(1, kib.get("Hugepagesize", 2048) >> 10)
        pages = max(0, (kib["MemAvailable"] // 1024 - HOG_TOUCH_MIB) // page_mib)
        self.sh("echo %d > /proc/sys/vm/nr_hugepages" % pages)
        return int(self.sh("cat /proc/sys/vm/nr_hugepages").out.strip() or 0) * page_mib

    def release_huge_pages(self):
        self.sh("echo 0 > /proc/sys/vm/nr_hugepages", check=False)

    def start_hog(self, secs=300):
        self.sh("mkdir -p /run/memonlined-test && rm -f %s /run/memonlined-test/hog-stop" % HOG_STATE)
        huge = self.reserve_huge_pages()
        pid = self.vm.guest_exec_start(["/bin/bash", "-c", HOG, "hog", str(HOG_TARGET_MIB), str(secs)],
                                       timeout=secs + 60)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            held, avail = self.hog_state()
            if held and avail <= 64:
                return pid, held, huge
            time.sleep(1)
        self.stop_hog(pid)
        self.check(False, "the hog could not bring MemAvailable down to 64 MiB (held %d MiB, %d MiB available)"
                           % self.hog_state())

    def stop_hog(self, pid):
        self.sh("touch /run/memonlined-test/hog-stop", check=False)
        self.vm.guest_exec_wait(pid, timeout=120)
        self.release_huge_pages()

    def timed_online(self, add, n):
        """Seconds from the hot-add request to every new block online."""
        self.mark()
        t = time.monotonic()
        add()
        new = self.wait_new_blocks(n)
        self.wait_new_online(timeout=300)
        return time.monotonic() - t, new

    def under_pressure(self, what, add, n, size, baseline):
        """Hot-add while the hog holds the guest near OOM and keeps
        allocating: every block online, no OOM kill, the daemon not
        restarted, and the hog grows into the new memory."""
        kills, ids = self.oom_kills(), self.daemon_ids()
        cursor = self.cursor()
        pid, held, huge = self.start_hog()
        try:
            _, avail = self.hog_state()
            secs, new = self.timed_online(add, n)
            # The allocator grows into the new memory: the hog takes most of it.
            deadline = time.monotonic() + 120
            while self.hog_state()[0] - held < size * 3 // 4 // MiB and time.monotonic() < deadline:
                time.sleep(1)
            grown = self.hog_state()[0] - held
        finally:
            self.stop_hog(pid)
        self.assert_none_offline()
        self.check(self.oom_kills() == kills, "the OOM killer came: %s"
                    % self.sh("dmesg | grep -E 'oom-kill:|Out of memory' | tail -3", check=False).out.strip())
        self.check(self.daemon_ids() == ids, "memonlined was restarted (MainPID, NRestarts %s -> %s)"
                    % (ids, self.daemon_ids()))
        self.check(grown >= size * 3 // 4 // MiB, "the hog grew by %d MiB into %d MiB of new memory"
                    % (grown, size // MiB))
        fails = self.records("failure", cursor)
        self.check(not fails, "failure records under pressure: %d" % len(fails))
        # Printed always: docs/RELIABILITY.md quotes these.
        print("  %s %s: %d blocks online in %.1f s at %d MiB available (huge pages %d MiB, hog %d MiB, grew %d MiB "
              "into them); %.1f s without pressure" % (self.tag, what, n, secs, avail, huge, held, grown,
                                                        baseline), flush=True)
        return new

    def s_pressure_hotadd(self):
        size = 1 * GiB
        n = size // (128 * MiB)
        baseline, _ = self.timed_online(lambda: self.vm.hotplug_dimm(0, size), n)
        self.under_pressure("dimm under pressure", lambda: self.vm.hotplug_dimm(0, size), n, size, baseline)

    def s_pressure_virtio_mem(self):
        step = 512 * MiB
        n = step // (128 * MiB)
        now = self.vm.virtio_mem_size_now()
        baseline, _ = self.timed_online(lambda: self.vm.virtio_mem_resize(now + step), n)
        self.under_pressure("virtio-mem under pressure", lambda: self.vm.virtio_mem_resize(now + 2 * step), n,
                            step, baseline)

    PRESSURE_SCENARIOS = [
        ("pressure-hotadd", "s_pressure_hotadd"),
        ("pressure-virtio-mem", "s_pressure_virtio_mem"),
    ]
