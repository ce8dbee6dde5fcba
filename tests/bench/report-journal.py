#!/usr/bin/env python3
"""Write memonlined journal records in the journal export format, for
`memonlined report` benchmarks: HOSTS machines (each its own machine and
boot ID), each with BATCHES batches of one daemon process per batch, every
batch with a batch record and NODES node records. The MESSAGE_IDs come from
daemon/interface.h. Feed the output to systemd-journal-remote -o FILE -.

usage: report-journal.py --hosts N --batches N --nodes N > export.txt
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
from vm import MESSAGE_IDS  # noqa: E402  (read from daemon/interface.h)

T0 = 1700000000
BLOCK = 128 << 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=3)
    a = ap.parse_args()
    ids = MESSAGE_IDS
    out = sys.stdout
    t = T0
    for b in range(a.batches):
        for h in range(a.hosts):
            t += 1
            host = "host%05d" % h
            machine = "%032x" % (0x1000000 + h)
            boot = "%032x" % (0x2000000 + h)
            pid = 1000 + b
            seq = 1
            usec = t * 1000000

            def head(msgid):
                out.write("__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n" % (usec, usec - T0 * 1000000 + 1))
                out.write("_MACHINE_ID=%s\n_BOOT_ID=%s\n_HOSTNAME=%s\n_PID=%d\n" % (machine, boot, host, pid))
                out.write("_COMM=memonlined\n_SYSTEMD_UNIT=memonlined.service\nMESSAGE_ID=%s\n" % msgid)

            def counters(blocks):
                out.write("MEMONLINE_BLOCKS=%d\nMEMONLINE_BYTES=%d\nMEMONLINE_FAILED=0\nMEMONLINE_SKIPPED=0\n"
                          "MEMONLINE_DURATION_USEC=500000\nMEMONLINE_GIBPS=%.3f\nMEMONLINE_P50_USEC=60000\n"
                          "MEMONLINE_P99_USEC=90000\nMEMONLINE_MAX_USEC=95000\nMEMONLINE_CPU_USEC=1000\n"
                          % (blocks, blocks * BLOCK, blocks * BLOCK / (1 << 30) / 0.5))

            head(ids["BATCH"])
            out.write("MESSAGE=batch %d\nMEMONLINE_BATCH=%d\nMEMONLINE_TRIGGER=udev\nMEMONLINE_NODES=%d\n"
                      % (seq, seq, a.nodes))
            counters(8 * a.nodes)
            out.write("\n")
            for n in range(a.nodes):
                head(ids["NODE"])
                out.write("MESSAGE=node %d\nMEMONLINE_BATCH=%d\nMEMONLINE_NODE=%d\nMEMONLINE_WRITER_NODE=%d\n"
                          "MEMONLINE_ZONE=online_movable\nMEMONLINE_CPUS=0-1\n" % (n, seq, n, n))
                counters(8)
                out.write("\n")


if __name__ == "__main__":
    main()
