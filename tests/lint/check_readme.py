#!/usr/bin/env python3
"""Checks that what README.md names exists: every CMake preset it mentions
(and that its preset list names every preset of CMakePresets.json), and every
repository path in its code (`samples/...`, `bindings/...`, `.ci/...`, ...).

  check_readme.py [REPO_ROOT]
"""

import glob
import json
import os
import re
import sys

# Paths under these folders are the repository's own; build/ is made by a build.
REPO_FOLDERS = ("samples", "bindings", "tests", "tools", "benchmarks", ".ci", "capi", "core", "backends",
                "packaging", "cmake")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    with open(os.path.join(root, "CMakePresets.json"), encoding="utf-8") as f:
        presets_file = json.load(f)
    presets = {p["name"] for p in presets_file["configurePresets"] if not p.get("hidden")}
    problems = []

    named = set(re.findall(r"--preset[ =]([A-Za-z0-9_-]+)", readme))
    named |= set(re.findall(r"\.ci/test ([a-z][A-Za-z0-9_-]*)", readme))
    listing = re.search(r"CMake presets \(`CMakePresets\.json`\):(.*?)(?:\n\n|$)", readme, re.S)
    if listing is None:
        problems.append("README.md has no sentence 'CMake presets (`CMakePresets.json`): ...' listing the presets")
    else:
        listed = set(re.findall(r"`([^`]+)`", listing.group(1))) - {"CMakePresets.json"}
        listed = {name for name in listed if re.fullmatch(r"[A-Za-z0-9_-]+", name)}
        named |= listed
        for preset in sorted(presets - listed):
            problems.append("the preset list does not name the preset '%s'" % preset)
    for name in sorted(named - presets):
        problems.append("README.md names a preset '%s' that CMakePresets.json does not define" % name)

    code = "\n".join(re.findall(r"```[a-z]*\n(.*?)```", readme, re.S) + re.findall(r"`([^`\n]+)`", readme))
    paths = set()
    for token in re.findall(r"[A-Za-z0-9_.*/-]+", code):
        token = token.rstrip(".,:;")
        if token.split("/")[0] in REPO_FOLDERS and "/" in token:
            paths.add(token)
    for path in sorted(paths):
        if not glob.glob(os.path.join(root, path)):
            problems.append("README.md names '%s', which does not exist" % path)

    for problem in problems:
        print("check_readme: " + problem, file=sys.stderr)
    if problems:
        return 1
    print("check_readme: %d presets and %d repository paths named in README.md exist" % (len(named), len(paths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
