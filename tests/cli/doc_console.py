#!/usr/bin/env python3
"""doc_console.py - run the ```console blocks of a Markdown page and compare.

    doc_console.py EGRESSWATCH SOURCE_ROOT PAGE.md

Each ```console block holds commands ("$ " lines) and, after each, the exact
standard output it must print. The commands of the whole page run in order,
with bash (pipefail), in one fresh directory that holds symlinks to the
source tree's rules/ and pcaps/, with EGRESSWATCH's directory first in PATH.
A command fails when its output differs (a diff is printed), when it exits
non-zero or when it writes anything to stderr. The page must have at least
one command, so a page whose blocks were renamed cannot pass by running
nothing.
"""
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"^```console\n(.*?)^```$", re.M | re.S)


def parse(text):
    """[(line number, command, expected output)] in page order."""
    steps = []
    for m in BLOCK.finditer(text):
        first = text.count("\n", 0, m.start(1)) + 1
        cmd, out, at = None, [], 0
        for i, line in enumerate(m.group(1).splitlines()):
            if line.startswith("$ "):
                if cmd is not None:
                    steps.append((at, cmd, out))
                cmd, out, at = line[2:], [], first + i
            elif cmd is None:
                raise SystemExit(f"line {first + i}: output before any command")
            else:
                out.append(line)
        if cmd is not None:
            steps.append((at, cmd, out))
    return steps


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    ew, root, page = (os.path.abspath(a) for a in sys.argv[1:])
    for tool in ("jq", "sqlite3"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found (./dev installs it)")
    with open(page, encoding="utf-8") as f:
        steps = parse(f.read())
    if not steps:
        raise SystemExit(f"{page}: no ```console commands")
    env = dict(os.environ, PATH=os.path.dirname(ew) + os.pathsep + os.environ["PATH"],
               LC_ALL="C.UTF-8", TZ="UTC")
    fails = 0
    with tempfile.TemporaryDirectory(prefix="ew-doc.") as work:
        for sub in ("rules", "pcaps"):
            os.symlink(os.path.join(root, sub), os.path.join(work, sub))
        for at, cmd, want in steps:
            p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env,
                               capture_output=True, text=True, timeout=120)
            got = p.stdout.splitlines()
            what = []
            if p.returncode != 0:
                what.append(f"exit {p.returncode}")
            if p.stderr:
                what.append("stderr: " + p.stderr.strip())
            if got != want:
                what.append("output differs:\n" + "\n".join(
                    difflib.unified_diff(want, got, "page", "ran", lineterm="")))
            if what:
                fails += 1
                print(f"FAIL {os.path.basename(page)}:{at}: $ {cmd}")
                for w in what:
                    print("  " + w.replace("\n", "\n  "))
    print(f"{len(steps) - fails} passed, {fails} failed ({len(steps)} commands)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
