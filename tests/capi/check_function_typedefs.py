#!/usr/bin/env python3
"""Checks that kiln.h gives every KILN_API function a function-pointer type.

For each function `kiln_x` declared with KILN_API, the header's section
"Function-pointer types" must define `kiln_x_fn`, and `&kiln_x` must convert
to it without a cast: a generated file assigns each function to a variable of
its type and is compiled as C99 and as C++11 with warnings as errors. A type
left over from a removed function fails too. A missing type is reported with
the line to add.

  check_function_typedefs.py --header kiln.h --include DIR --cc CC --cxx CXX --work DIR
"""

import argparse
import os
import re
import subprocess
import sys

SECTION_TITLE = "Function-pointer types"


def without_comments_and_directives(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def declared_functions(text):
    """Maps each KILN_API function's name to (return type, parameter list)."""
    functions = {}
    pattern = re.compile(r"\bKILN_API\s+([^;{}]*?)\b(kiln_\w+)\s*\(([^;{}]*)\)\s*;", re.S)
    for match in pattern.finditer(without_comments_and_directives(text)):
        result, name, parameters = (" ".join(part.split()) for part in match.groups())
        functions[name] = (result, parameters)
    return functions


def section_typedefs(text):
    """Names of the function-pointer types defined after the section title."""
    start = text.find(SECTION_TITLE)
    if start < 0:
        return None
    section = without_comments_and_directives(text[start:])
    return set(re.findall(r"\btypedef\b[^;]*?\(\s*\*\s*(kiln_\w+_fn)\s*\)", section, flags=re.S))


def compile_check(compiler, standard, source, include_dir):
    command = [compiler, "-std=" + standard, "-Wall", "-Wextra", "-Werror", "-pedantic-errors", "-fsyntax-only",
               "-I" + include_dir, source]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print("%s failed:\n%s%s" % (" ".join(command), result.stdout, result.stderr), file=sys.stderr)
        return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--header", required=True)
    parser.add_argument("--include", required=True, help="directory that holds kiln/kiln.h")
    parser.add_argument("--cc", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()

    with open(args.header, encoding="utf-8") as f:
        text = f.read()
    functions = declared_functions(text)
    if len(functions) < 100:
        print("found only %d KILN_API functions in %s; is the pattern out of date?" % (len(functions), args.header),
              file=sys.stderr)
        return 1
    typedefs = section_typedefs(text)
    if typedefs is None:
        print("%s has no section titled %r" % (args.header, SECTION_TITLE), file=sys.stderr)
        return 1

    ok = True
    missing = [name for name in functions if name + "_fn" not in typedefs]
    if missing:
        ok = False
        print("kiln.h declares %d function(s) without a function-pointer type; add to the section %r:" %
              (len(missing), SECTION_TITLE), file=sys.stderr)
        for name in missing:
            result, parameters = functions[name]
            print("typedef %s (*%s_fn)(%s);" % (result, name, parameters), file=sys.stderr)
    stale = sorted(name for name in typedefs if name[:-len("_fn")] not in functions)
    if stale:
        ok = False
        print("function-pointer types without a function: %s" % ", ".join(stale), file=sys.stderr)

    os.makedirs(args.work, exist_ok=True)
    lines = ['#include "kiln/kiln.h"', "", "int kiln_function_typedefs_check(void);", "",
             "int kiln_function_typedefs_check(void) {", "  int bound = 0;"]
    for name in functions:
        if name not in missing:
            lines.append("  { %s_fn f = &%s; bound += f != 0; }" % (name, name))
    lines += ["  return bound;", "}", ""]
    for extension, compiler, standard in ((".c", args.cc, "c99"), (".cc", args.cxx, "c++11")):
        source = os.path.join(args.work, "function_typedefs_check" + extension)
        with open(source, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        ok = compile_check(compiler, standard, source, args.include) and ok
    if ok:
        print("all %d KILN_API functions have a matching function-pointer type" % len(functions))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
