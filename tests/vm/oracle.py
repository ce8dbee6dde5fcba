#!/usr/bin/env python3
"""ndctl, daxctl and cxl as the oracle for `memonlined status`.

memonlined reads the nd, dax and CXL buses from sysfs itself. compare()
checks that it sees what the ecosystem's own tools see, object by object:
every nvdimm region and namespace (`ndctl list -R -N -v -c`), dax region
and device (`daxctl list -D -R`), CXL region and memdev (`cxl list -R -M
-T`) against `memonlined status -J -b`, by name, size, mode, state and
node. It returns one message per disagreement, naming the object, the
field and both values; the VM scenarios fail on any.

Nodes: ndctl and daxctl show a region's, namespace's and dax device's
target_node, the node its memory goes to; memonlined's NODE is that one.
ndctl's numa_node (-v) is the node of the device itself, which memonlined
does not show for them: not compared. A CXL memdev has only its own
numa_node (`cxl list` leaves it out when -1), which memonlined's memdev
table shows as numa_node.

Run with --selftest to check compare() on recorded guest output: it must
find nothing there, and name each deliberately broken field.

The guest helper tool-lists collects the four documents in one call.
"""

import copy
import json
import re
import sys

GUEST_TOOL_LISTS = "/usr/lib/memonlined-test/tool-lists"


# What names a bare object of each kind: ndctl's region "dev", cxl's
# region "region", daxctl's region "id", cxl's memdev "memdev".
IDENT = {"regions": ("dev", "region", "id"), "memdevs": ("memdev",)}


def _list(doc, key):
    """The objects of one kind. ndctl prints one object holding the arrays
    it was asked for when there are several kinds, a bare array when there
    is one, nothing when there is nothing; cxl prints [{"memdevs": [...]},
    {"regions": [...]}] for -M -R, a bare array when one kind is empty."""
    out = []
    for x in [doc] if isinstance(doc, dict) else doc or []:
        if isinstance(x.get(key), list):
            out.extend(x[key])
        elif any(k in x for k in IDENT[key]):
            out.append(x)
    return out


class Diff:
    def __init__(self):
        self.msgs = []

    def add(self, msg):
        self.msgs.append(msg)

    def eq(self, tool, what, field, theirs, ours):
        if theirs != ours:
            self.add("%s %s %s: %s says %r, memonlined status says %r" % (tool.split()[0], what, field, tool,
                                                                            theirs, ours))

    def rows(self, tool, kind, theirs, ours):
        """Both sides list the same names; returns the names in both."""
        for name in sorted(set(theirs) - set(ours)):
            self.add("%s %s: %s lists it, memonlined status does not" % (kind, name, tool))
        for name in sorted(set(ours) - set(theirs)):
            self.add("%s %s: memonlined status lists it, %s does not" % (kind, name, tool))
        return sorted(set(theirs) & set(ours))


def _names(s):
    return sorted(x for x in (s or "").split(",") if x)


def _state(obj):
    """ndctl, daxctl and cxl say "state": "disabled" and nothing when enabled."""
    return "disabled" if obj.get("state") == "disabled" else "enabled"


def compare_ndctl(d, ndctl, status):
    tool = "ndctl list -R -N -v -c"
    regions = {r["dev"]: r for r in _list(ndctl, "regions")}
    ours = {r["region"]: r for r in status.get("nvdimm", [])}
    for name in d.rows(tool, "nvdimm region", regions, ours):
        r, o = regions[name], ours[name]
        what = "region " + name
        d.eq(tool, what, "size", r.get("size"), o["size"])
        d.eq(tool, what, "target_node/node", r.get("target_node"), o["node"])
        d.eq(tool, what, "state", _state(r), o["state"])
        # ndctl calls an nd_volatile region "pmem" too: memonlined says which
        d.eq(tool, what, "type", r.get("type"), "pmem" if o["type"] in ("pmem", "volatile") else o["type"])
        d.eq(tool, what, "namespaces", sorted(n["dev"] for n in r.get("namespaces", [])), _names(o["namespaces"]))
    namespaces = {n["dev"]: (n, r["dev"]) for r in regions.values() for n in r.get("namespaces", [])}
    ours = {n["namespace"]: n for n in status.get("namespaces", [])}
    for name in d.rows(tool, "nvdimm namespace", namespaces, ours):
        (n, region), o = namespaces[name], ours[name]
        what = "namespace " + name
        d.eq(tool, what, "region", region, o["region"])
        d.eq(tool, what, "mode", n.get("mode"), o["mode"])
        d.eq(tool, what, "state", _state(n), o["state"])
        d.eq(tool, what, "size", n.get("size"), o["size"])
        d.eq(tool, what, "target_node/node", n.get("target_node"), o["node"])
        d.eq(tool, what, "uuid", n.get("uuid"), o["uuid"])
        # -v nests the dax region with its devices; without it ndctl says chardev
        devs = (n.get("daxregion") or {}).get("devices") or []
        d.eq(tool, what, "dax device", devs[0]["chardev"] if devs else n.get("chardev"), o["dax"])
        # ndctl's "name" is the label's alt name, which memonlined neither reads nor matches: not compared
    return namespaces


# daxctl region paths: .../ndbusB/regionR/daxR.M or .../rootK/decoderK.D/regionN/dax_regionN
ND_PATH = re.compile(r"/ndbus\d+/(region\d+)/")
CXL_PATH = re.compile(r"/root\d+/(decoder\d+\.\d+)/(region\d+)/dax_region\d+$")


def compare_daxctl(d, daxctl, status, namespaces):
    tool = "daxctl list -D -R"
    devs = {}
    for g in _list(daxctl, "regions"):
        for dev in g.get("devices", []):
            devs[dev["chardev"]] = (dev, g)
    ours = {x["device"]: x for x in status.get("dax", [])}
    hotplug = {x["device"]: x for x in status.get("devices", []) if x.get("kind") == "dax"}
    by_chardev = {}
    for ns, _ in namespaces.values():
        for dev in ((ns.get("daxregion") or {}).get("devices") or []):
            by_chardev[dev["chardev"]] = ns["dev"]
    for name in d.rows(tool, "dax device", devs, ours):
        (dev, g), o = devs[name], ours[name]
        what = "device " + name
        d.eq(tool, what, "size", dev.get("size"), o["size"])
        d.eq(tool, what, "target_node/node", dev.get("target_node"), o["node"])
        # daxctl says devdax for a device bound to no driver (and "state":
        # "disabled"); memonlined names the mode by the driver: unknown
        mode = dev.get("mode")
        if mode == "devdax" and _state(dev) == "disabled":
            mode = "unknown"
        d.eq(tool, what, "mode", mode, o["mode"])
        d.eq(tool, what, "state", _state(dev), "disabled" if o["state"] == "disabled" else "enabled")
        # memblocks: daxctl counts them only in system-ram mode (81 says -2 while kmem still adds them)
        if dev.get("mode") == "system-ram" and (dev.get("total_memblocks") or -1) >= 0:
            d.eq(tool, what, "total_memblocks/blocks", dev["total_memblocks"], o["blocks"])
            d.eq(tool, what, "online_memblocks/online_blocks", dev.get("online_memblocks"), o["online_blocks"])
            h = hotplug.get(name)
            d.eq(tool, what, "hotplug device", True, h is not None)
            if h is not None and "movable" in dev:
                d.eq(tool, what, "movable/zones", dev["movable"], h["zones"] == "Movable")
        # the dax region's path names the nd region, or the CXL region and its root decoder
        path = g.get("path") or ""
        m = ND_PATH.search(path + "/")
        d.eq(tool, what, "nd region (path %s)" % path, m.group(1) if m else None, o.get("region"))
        m = CXL_PATH.search(path)
        d.eq(tool, what, "CXL region (path %s)" % path, m.group(2) if m else None, o.get("cxl_region"))
        d.eq(tool, what, "root decoder (path %s)" % path, m.group(1) if m else None, o.get("decoder"))
        # the namespace ndctl nests this device under
        d.eq("ndctl list -R -N -v -c", what, "namespace", by_chardev.get(name), o.get("namespace"))


def compare_cxl(d, cxl, status):
    tool = "cxl list -R -M -T"
    regions = {r["region"]: r for r in _list(cxl, "regions")}
    ours = {r["region"]: r for r in status.get("cxl", [])}
    region_memdevs = {}
    for name in d.rows(tool, "CXL region", regions, ours):
        r, o = regions[name], ours[name]
        what = "region " + name
        d.eq(tool, what, "size", r.get("size"), o["size"])
        d.eq(tool, what, "type/mode", r.get("type"), o["mode"])
        d.eq(tool, what, "decode_state/state", r.get("decode_state") == "commit", o["state"] != "uncommitted")
        start = int(o["range"].split("-")[0], 16) if o.get("range") else None
        d.eq(tool, what, "resource/range", r.get("resource"), start)
        mems = sorted({m["memdev"] for m in r.get("mappings", []) if "memdev" in m})
        d.eq(tool, what, "memdevs", mems, _names(o["memdevs"]))
    for r in regions.values():
        for m in r.get("mappings", []):
            if "memdev" in m:
                region_memdevs.setdefault(m["memdev"], set()).add(r["region"])
    memdevs = {m["memdev"]: m for m in _list(cxl, "memdevs")}
    ours = {m["memdev"]: m for m in status.get("memdevs", [])}
    for name in d.rows(tool, "CXL memdev", memdevs, ours):
        m, o = memdevs[name], ours[name]
        what = "memdev " + name
        d.eq(tool, what, "ram_size", m.get("ram_size", 0), o["ram_size"])
        d.eq(tool, what, "pmem_size", m.get("pmem_size", 0), o["pmem_size"])
        # the device's own node; cxl leaves it out when it is -1, memonlined says null
        d.eq(tool, what, "numa_node", m.get("numa_node"), o["numa_node"])
        d.eq(tool, what, "serial", m.get("serial"), o["serial"])
        d.eq(tool, what, "host", m.get("host"), o["host"])
        d.eq(tool, what, "state", _state(m), o["state"])
        d.eq(tool, what, "regions", sorted(region_memdevs.get(name, ())), _names(o["regions"]))


def compare(lists):
    """LISTS: {"ndctl", "daxctl", "cxl": the tools' JSON (None: the tool is
    not installed), "status": memonlined status -J -b, "rc": {tool: exit
    status}}. Returns the disagreements, one message each."""
    d = Diff()
    for tool, rc in sorted((lists.get("rc") or {}).items()):
        if rc != 0:
            d.add("%s exited %s" % (tool, rc))
    status = lists["status"]
    if status.get("errors"):
        d.add("memonlined status could not read everything: %s" % status["errors"])
    namespaces = {}
    if lists.get("ndctl") is not None:
        namespaces = compare_ndctl(d, lists["ndctl"], status)
    if lists.get("daxctl") is not None:
        compare_daxctl(d, lists["daxctl"], status, namespaces)
    if lists.get("cxl") is not None:
        compare_cxl(d, lists["cxl"], status)
    else:
        # no cxl tool (the Debian 12 guest): nothing to hold the CXL tables
        # against, and the guests without it have no CXL device either
        for table in ("cxl", "memdevs"):
            for row in status.get(table, []):
                d.add("memonlined status lists %s %s, and there is no cxl tool to check it" % (table, row))
    return d.msgs


# --------------------------------------------------------------- self-test
# Recorded in the guests (trimmed to what compare() reads): the 6.1 pmem
# boot after `ndctl create-namespace -m devdax` and the kmem conversion,
# and the 6.12 CXL boot after `cxl create-region` on mem0.
SAMPLE_PMEM = {
    "rc": {"ndctl": 0, "daxctl": 0, "status": 0},
    "ndctl": {"regions": [{
        "dev": "region0", "size": 2147483648, "align": 16777216, "available_size": 0, "type": "pmem",
        "numa_node": 1, "target_node": 2, "persistence_domain": "unknown",
        "namespaces": [{
            "dev": "namespace0.0", "mode": "devdax", "map": "dev", "size": 2111832064,
            "uuid": "c531245b-2d06-4111-86f2-91dd1c0eefaf", "raw_uuid": "0305695d-39bb-4d89-b1e4-ec7e65e78b25",
            "daxregion": {"id": 0, "size": 2111832064, "align": 2097152, "devices": [{
                "chardev": "dax0.0", "size": 2111832064, "target_node": 2, "align": 2097152, "mode": "system-ram",
                "online_memblocks": 15, "total_memblocks": 15, "movable": True}]},
            "align": 2097152, "numa_node": 1, "target_node": 2}]}]},
    "daxctl": [{
        "path": "/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region0/dax0.0", "id": 0, "size": 2111832064,
        "align": 2097152, "devices": [{
            "chardev": "dax0.0", "size": 2111832064, "target_node": 2, "align": 2097152, "mode": "system-ram",
            "online_memblocks": 15, "total_memblocks": 15, "movable": True}]}],
    "cxl": None,
    "status": {
        "block_size": 134217728,
        "devices": [{"device": "dax0.0", "kind": "dax", "nodes": "2", "zones": "Movable", "blocks": 15,
                     "online_blocks": 15, "offline_blocks": 0, "size": 2013265920}],
        "dax": [{"device": "dax0.0", "mode": "system-ram", "state": "online", "size": 2111832064, "node": 2,
                 "blocks": 15, "online_blocks": 15, "namespace": "namespace0.0", "region": "region0",
                 "cxl_region": None, "decoder": None, "memdevs": None}],
        "cxl": [], "memdevs": [],
        "nvdimm": [{"region": "region0", "type": "pmem", "state": "enabled", "size": 2147483648, "node": 2,
                    "namespaces": "namespace0.0"}],
        "namespaces": [{"namespace": "namespace0.0", "region": "region0", "mode": "devdax", "state": "enabled",
                        "size": 2111832064, "node": 2, "uuid": "c531245b-2d06-4111-86f2-91dd1c0eefaf",
                        "dax": "dax0.0"}]},
}

SAMPLE_CXL = {
    "rc": {"ndctl": 0, "daxctl": 0, "cxl": 0, "status": 0},
    "ndctl": None,
    "daxctl": [{
        "path": "/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0", "id": 0, "size": 536870912,
        "align": 2097152, "devices": [{
            "chardev": "dax0.0", "size": 536870912, "target_node": 3, "align": 2097152, "mode": "system-ram",
            "online_memblocks": 4, "total_memblocks": 4, "movable": True}]}],
    "cxl": [{"memdevs": [
        {"memdev": "mem0", "ram_size": 536870912, "serial": 0, "host": "0000:0d:00.0"},
        {"memdev": "mem1", "ram_size": 536870912, "serial": 0, "host": "0000:0e:00.0"}]},
        {"regions": [{"region": "region0", "resource": 157034741760, "size": 536870912, "type": "ram",
                      "interleave_ways": 1, "interleave_granularity": 256, "decode_state": "commit",
                      "mappings": [{"position": 0, "memdev": "mem0", "decoder": "decoder2.0"}]}]}],
    "status": {
        "block_size": 134217728,
        "devices": [{"device": "dax0.0", "kind": "dax", "nodes": "3", "zones": "Movable", "blocks": 4,
                     "online_blocks": 4, "offline_blocks": 0, "size": 536870912}],
        "dax": [{"device": "dax0.0", "mode": "system-ram", "state": "online", "size": 536870912, "node": 3,
                 "blocks": 4, "online_blocks": 4, "namespace": None, "region": None, "cxl_region": "region0",
                 "decoder": "decoder0.0", "memdevs": "mem0"}],
        "cxl": [{"region": "region0", "mode": "ram", "state": "online", "size": 536870912,
                 "range": "0x0000002490000000-0x00000024afffffff", "decoder": "decoder0.0", "memdevs": "mem0",
                 "dax": "dax0.0"}],
        "memdevs": [{"memdev": "mem0", "state": "enabled", "ram_size": 536870912, "pmem_size": 0, "numa_node": None,
                     "serial": 0, "host": "0000:0d:00.0", "regions": "region0"},
                    {"memdev": "mem1", "state": "enabled", "ram_size": 536870912, "pmem_size": 0, "numa_node": None,
                     "serial": 0, "host": "0000:0e:00.0", "regions": None}],
        "nvdimm": [], "namespaces": []},
}

# (sample, where to break it, what the message must name)
BREAKS = [
    ("pmem", lambda s: s["status"]["dax"][0].update(size=2013265920), ["device dax0.0 size", "2111832064",
                                                                        "2013265920"]),
    ("pmem", lambda s: s["status"]["dax"][0].update(node=1), ["dax0.0 target_node/node", "2", "1"]),
    ("pmem", lambda s: s["status"]["dax"][0].update(mode="devdax"), ["dax0.0 mode", "system-ram", "devdax"]),
    ("pmem", lambda s: s["status"]["dax"][0].update(online_blocks=14), ["online_memblocks/online_blocks", "15",
                                                                        "14"]),
    ("pmem", lambda s: s["status"]["dax"][0].update(region="region1"), ["nd region", "region0", "region1"]),
    ("pmem", lambda s: s["status"]["dax"][0].update(namespace="namespace0.1"), ["dax0.0 namespace",
                                                                                 "namespace0.1"]),
    ("pmem", lambda s: s["status"]["devices"][0].update(zones="Normal"), ["movable/zones", "True", "False"]),
    ("pmem", lambda s: s["status"]["nvdimm"][0].update(size=1 << 30), ["region region0 size", "2147483648",
                                                                       "1073741824"]),
    ("pmem", lambda s: s["status"]["nvdimm"][0].update(node=None), ["region0 target_node/node", "2", "None"]),
    ("pmem", lambda s: s["status"]["namespaces"][0].update(mode="fsdax"), ["namespace0.0 mode", "devdax",
                                                                           "fsdax"]),
    ("pmem", lambda s: s["status"]["namespaces"][0].update(size=2 << 30), ["namespace0.0 size", "2111832064"]),
    ("pmem", lambda s: s["status"]["namespaces"][0].update(uuid="0305695d-39bb-4d89-b1e4-ec7e65e78b25"),
     ["namespace0.0 uuid", "c531245b", "0305695d"]),
    ("pmem", lambda s: s["status"]["namespaces"][0].update(dax=None), ["namespace0.0 dax device", "dax0.0"]),
    ("pmem", lambda s: s["status"]["namespaces"].clear(), ["namespace namespace0.0: ndctl", "does not"]),
    ("pmem", lambda s: s["status"]["dax"].append(dict(s["status"]["dax"][0], device="dax1.0")),
     ["dax device dax1.0: memonlined status lists it"]),
    ("pmem", lambda s: s["status"].update(errors={"nvdimm_unreadable": "Invalid argument"}), ["could not read"]),
    ("pmem", lambda s: s["rc"].update(status=64), ["status exited 64"]),
    ("cxl", lambda s: s["status"]["cxl"][0].update(size=1 << 28), ["region region0 size", "536870912",
                                                                   "268435456"]),
    ("cxl", lambda s: s["status"]["cxl"][0].update(memdevs="mem1"), ["region0 memdevs", "mem0", "mem1"]),
    ("cxl", lambda s: s["status"]["cxl"][0].update(state="uncommitted"), ["decode_state/state"]),
    ("cxl", lambda s: s["status"]["cxl"][0].update(range="0x00000024b0000000-0x00000024cfffffff"),
     ["resource/range", "157034741760", "157571612672"]),
    ("cxl", lambda s: s["status"]["dax"][0].update(cxl_region="region1"), ["CXL region", "region0", "region1"]),
    ("cxl", lambda s: s["status"]["dax"][0].update(decoder="decoder0.1"), ["root decoder", "decoder0.0"]),
    ("cxl", lambda s: s["status"]["memdevs"][1].update(numa_node=0), ["memdev mem1 numa_node", "None", "0"]),
    ("cxl", lambda s: s["status"]["memdevs"][0].update(ram_size=0), ["mem0 ram_size", "536870912"]),
    ("cxl", lambda s: s["status"]["memdevs"][0].update(host="0000:0e:00.0"), ["mem0 host", "0000:0d:00.0"]),
    ("cxl", lambda s: s["status"]["memdevs"][1].update(regions="region0"), ["mem1 regions", "region0"]),
    ("cxl", lambda s: s["status"]["memdevs"].pop(), ["CXL memdev mem1: cxl", "does not"]),
    ("cxl", lambda s: s.update(cxl=None), ["there is no cxl tool"]),
]


def selftest():
    """TAP: each sample agrees with itself; each break is named, with both values."""
    samples = {"pmem": SAMPLE_PMEM, "cxl": SAMPLE_CXL}
    results = []
    for name, sample in samples.items():
        msgs = compare(sample)
        results.append((not msgs, "the %s sample agrees with itself" % name, msgs))
    for name, brk, words in BREAKS:
        s = copy.deepcopy(samples[name])
        brk(s)
        msgs = compare(s)
        results.append((any(all(w in m for w in words) for m in msgs),
                        "a broken %s sample is named: %s" % (name, " ... ".join(words)), msgs))
    print("1..%d" % len(results))
    for i, (ok, what, msgs) in enumerate(results, 1):
        print("%sok %d - %s" % ("" if ok else "not ", i, what))
        if not ok:
            print("# compare() said: %s" % msgs)
    return 0 if all(r[0] for r in results) else 1


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) == 2:
        # a saved tool-lists document
        with open(sys.argv[1]) as f:
            msgs = compare(json.load(f))
        for m in msgs:
            print(m)
        return 1 if msgs else 0
    print("usage: oracle.py --selftest | oracle.py TOOL-LISTS.json", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
