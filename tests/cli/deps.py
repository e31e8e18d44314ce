#!/usr/bin/env python3
"""deps.py - every library meson.build depends on is installed by ./dev and
by both stages of docs/deploy/Dockerfile, and every program the test suites
run comes from a package ./dev installs.

  deps.py SOURCE_ROOT

For each dependency('NAME', ...) in meson.build (and the optional allocator),
the package that owns NAME's pkg-config file (dpkg -S) must be in ./dev's
PACKAGES and in the Dockerfile's build stage, and the package that owns the
shared library it links must be in the Dockerfile's runtime stage. For each
program of TEST_TOOLS (and scapy, which the tshark suite's generators
import), the package that owns it must be among ./dev's PACKAGES or what
they pull in: a test that skips or fails without a tool nobody installs
would pass here, on a machine set up by hand, and not on a fresh one. A
package added to meson.build but not to the install scripts fails here
instead of on a fresh machine. Skips (77) where dpkg or pkg-config is
missing.
"""
import os
import re
import shutil
import subprocess
import sys


def sh(*argv):
    return subprocess.run(argv, capture_output=True, text=True).stdout.strip()


def owner(path):
    # "pkg:arch: /path" or "pkg: /path"; diversions start with "diversion".
    # On a merged-/usr system dpkg may know /usr/lib/X as /lib/X, /usr/bin/X
    # as /bin/X, /usr/sbin/X as /sbin/X.
    for p in (path, path[4:] if path.startswith("/usr/") else None):
        for line in sh("dpkg", "-S", p).splitlines() if p else []:
            if not line.startswith("diversion") and ": " in line:
                return line.split(": ", 1)[0].split(":")[0].split(",")[0].strip()
    return None


def packages(text):
    """The package names in text, and what those (installed) depend on, so
    that libpcap-dev stands for the libpcap0.8-dev it pulls in."""
    names = set(re.findall(r"[a-z0-9][a-z0-9.+-]+", text))
    deps = set()
    for n in names:
        d = sh("dpkg-query", "-W", "-f=${Depends}", n)
        deps.update(re.findall(r"(?:^|[,|]\s*)([a-z0-9][a-z0-9.+-]+)", d))
    return names | deps


# Programs the test suites run, and the suites that need them.
TEST_TOOLS = {
    "tshark": "tshark suite (tests/tshark/)",
    "zstd": "cli, pcap.formats",
    "jq": "docs.investigate",
    "sqlite3": "cli, docs.investigate, live",
    "chromium": "browser",
    "ip": "live.e2e_bridge, tests/bench/watch_soak.sh",
    "nginx": "live.e2e_bridge",
    "dnsmasq": "live.e2e_bridge",
    "iodine": "live.e2e_bridge",
    "iodined": "live.e2e_bridge",
    "curl": "live.e2e_bridge",
    "ping": "live.e2e_bridge",
    "unshare": "live.watch_disk_full",
    "script": "cli",
}


def test_tools(dev_pkgs):
    """Problems: a test tool missing, or from a package ./dev does not
    install."""
    fails = 0
    paths = {t: shutil.which(t) for t in TEST_TOOLS}
    scapy = sh("/usr/bin/python3", "-c", "import scapy, os; print(os.path.dirname(scapy.__file__))")
    paths["scapy (python3)"] = (scapy + "/__init__.py") if scapy else None
    essential = set(sh("dpkg-query", "-W", "-f=${Package} ${Essential}\n").split("\n"))
    for tool, path in sorted(paths.items()):
        pkg = owner(os.path.realpath(path)) if path else None
        if not pkg:
            print("FAIL: %s (%s) is not installed, or no package owns it" %
                  (tool, TEST_TOOLS.get(tool, "tshark suite")))
            fails += 1
        elif pkg not in dev_pkgs and "%s yes" % pkg not in essential:
            print("FAIL: %s (package %s, for %s) is missing from ./dev PACKAGES" %
                  (tool, pkg, TEST_TOOLS.get(tool, "tshark suite")))
            fails += 1
    return len(paths), fails


def main():
    root = sys.argv[1]
    if not shutil.which("dpkg") or not shutil.which("pkg-config"):
        print("SKIP: needs dpkg and pkg-config")
        return 77
    meson = open(os.path.join(root, "meson.build")).read()
    names = [n for n in re.findall(r"dependency\('([^']+)'", meson) if n != "threads"]
    dev = open(os.path.join(root, "dev")).read()
    m = re.search(r"^PACKAGES=\((.*?)^\)", dev, re.S | re.M)
    dev_pkgs = packages(re.sub(r"#.*", "", m.group(1))) if m else set()
    docker = open(os.path.join(root, "docs", "deploy", "Dockerfile")).read()
    stages = re.split(r"^FROM ", docker, flags=re.M)[1:]
    if len(stages) != 2:
        print("FAIL: docs/deploy/Dockerfile: expected a build and a runtime stage")
        return 1
    build_pkgs, run_pkgs = packages(stages[0]), packages(stages[1])

    fails = 0
    for name in names:
        pcdir = sh("pkg-config", "--variable=pcfiledir", name)
        dev_pkg = owner(os.path.realpath(os.path.join(pcdir, name + ".pc"))) if pcdir else None
        if not dev_pkg:
            print("FAIL: %s: no installed package owns its pkg-config file" % name)
            fails += 1
            continue
        for where, have in (("./dev PACKAGES", dev_pkgs),
                            ("docs/deploy/Dockerfile build stage", build_pkgs)):
            if dev_pkg not in have:
                print("FAIL: %s (package %s) is missing from %s" % (name, dev_pkg, where))
                fails += 1
        libdir = sh("pkg-config", "--variable=libdir", name)
        libs = re.findall(r"-l(\S+)", sh("pkg-config", "--libs-only-l", name))
        for lib in libs[:1]:  # the library the .pc file is for
            # (some .pc files say /usr/lib for a library in the multiarch
            # directory: Debian 12's libzstd.pc)
            dirs = [libdir] + ["/usr/lib/" + t for t in [sh("gcc", "-print-multiarch")] if t]
            sos = [os.path.realpath(os.path.join(d, "lib%s.so" % lib)) for d in dirs]
            so = next((x for x in sos if os.path.exists(x)), sos[0])
            run_pkg = owner(so) if os.path.exists(so) else None
            if not run_pkg:
                print("FAIL: %s: no package owns %s" % (name, so))
                fails += 1
            elif run_pkg not in run_pkgs:
                print("FAIL: %s (runtime package %s) is missing from the Dockerfile's "
                      "runtime stage" % (name, run_pkg))
                fails += 1
    ntools, tool_fails = test_tools(dev_pkgs)
    fails += tool_fails
    print("%d dependencies and %d test tools checked, %d problems" % (len(names), ntools, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
