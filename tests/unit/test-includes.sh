#!/bin/bash
# The contract between the daemon and its tools (daemon/interface.h) keeps
# them apart: no status-* or journal-report-* file includes, directly or
# through another header, a header of the pipeline (loop.h, runner.h,
# online.h, batch.h, monitor.h) or the logger (report.h); DEFAULT_CONFIG is
# defined once; docs/HACKING.md's dependency picture is the one the
# #include lines draw (--print prints it). Prints TAP.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
exec python3 - "$top_srcdir" "$@" <<'PY'
import os, re, sys

top = sys.argv[1]
dirs = [os.path.join(top, "daemon"), os.path.join(top, "util")]
FORBIDDEN = {"loop.h", "runner.h", "online.h", "batch.h", "monitor.h", "report.h"}
TOOLS = [("journal-report-*", "journal-report"), ("status-*", "status")]


def where(h):
    for d in dirs:
        if os.path.exists(os.path.join(d, h)):
            return os.path.join(d, h)
    return None


def includes(path):
    with open(path) as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), re.M)


def closure(path):
    seen, todo = set(), [path]
    while todo:
        for h in includes(todo.pop()):
            if h not in seen:
                seen.add(h)
                p = where(h)
                if p:
                    todo.append(p)
    return seen


def tool_files(prefix):
    return sorted(f for f in os.listdir(dirs[0])
                  if (f.startswith(prefix + "-") or f.startswith(prefix + ".")) and f.endswith((".c", ".h")))


def picture():
    """Per tool, the headers outside its own files that they include, util/'s apart."""
    util = set(os.listdir(dirs[1]))
    lines = []
    for name, prefix in TOOLS:
        own = set(tool_files(prefix))
        deps = set()
        for f in own:
            deps |= set(includes(os.path.join(dirs[0], f))) - own
        lines.append("%-17s-> %s" % (name, " ".join(sorted(d for d in deps if d not in util))))
        lines.append("%-17s   util/: %s" % ("", " ".join(sorted(d for d in deps if d in util))))
    return lines


if "--print" in sys.argv[2:]:
    print("\n".join(picture()))
    sys.exit(0)

n = failed = 0


def check(ok, desc, why=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, desc))
    if not ok:
        failed += 1
        if why:
            print("# " + why)


for name, prefix in TOOLS:
    for f in tool_files(prefix):
        bad = sorted(closure(os.path.join(dirs[0], f)) & FORBIDDEN)
        check(not bad, "%s includes no header of the pipeline or the logger" % f, "it pulls in " + " ".join(bad))

defs = []
for d in dirs:
    for f in sorted(os.listdir(d)):
        if f.endswith((".c", ".h")):
            with open(os.path.join(d, f)) as fh:
                if re.search(r"^#define DEFAULT_CONFIG\b", fh.read(), re.M):
                    defs.append(f)
check(defs == ["interface.h"], "DEFAULT_CONFIG is defined once, in interface.h", "defined in " + " ".join(defs))

with open(os.path.join(top, "docs", "HACKING.md")) as f:
    hacking = f.read()
want = picture()
have = {line.strip() for line in hacking.splitlines()}
check(all(line.strip() in have for line in want),
      "docs/HACKING.md's dependency picture is what the #include lines draw",
      "expected these lines (tests/unit/test-includes.sh --print):\n# " + "\n# ".join(want))
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
