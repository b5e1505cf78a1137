#!/usr/bin/env python3
"""Function-length check: no function longer than its folder's limit (lines, signature to
closing brace).

Usage: tools/check_function_length.py [ROOT]   (ROOT defaults to this script's repository)
Finds function bodies in every .cpp/.cu file by matching braces (comments, strings and
preprocessor lines set aside), prints one line per function over its limit
(file:line: name: N lines, limit L) and exits 1 when there is any. Runs in tools/run_tests.sh;
tests/tools/check_scripts_test.py runs it on small trees, clean and not.
"""
import os
import re
import sys

LIMIT_LINES = 150  # anywhere
# Folders held to a tighter limit: the cost model and the planner read top to bottom.
FOLDER_LIMIT_LINES = {"cost_models": 100, "planner": 100}

SUFFIXES = (".cpp", ".cu")
# A `{` at namespace or class scope opens a function body when the text before it ends with
# a parameter list and its qualifiers, or a constructor's member initialisers.
FUNCTION_TAIL = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|&|&&|->\s*[\w:<>,\s*&]+|\s)*$")
INITIALISERS = re.compile(r"\)\s*:\s*[\w:]+\s*[({].*[)}]\s*$", re.S)
SCOPE_KEYWORD = re.compile(r"^(template\s*<.*>\s*)?(namespace|class|struct|union|extern)\b", re.S)
CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|try)\b")
ACCESS = re.compile(r"^((public|private|protected)\s*:\s*)+")


def code_only(text):
    """The text with comments, string and character literals and preprocessor lines blanked
    (newlines kept, so that line numbers hold)."""
    literal = re.compile(
        r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(\\.|[^"\\\n])*"|'
        r"(?<![\w'])'(\\.|[^'\\\n])+'|^[ \t]*#([^\n]*\\\n)*[^\n]*", re.S | re.M)
    return literal.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def name_of(header):
    """`run_validate` for `void run_validate(...)`; a macro keeps its arguments: `TEST(A, b)`."""
    before = header.split("(")[0].split()
    name = before[-1] if before else header
    if name.isupper() and len(name) > 1:
        name = header[header.index(name):header.index(")") + 1]
    return name


def classify(header):
    """What a `{` at namespace or class scope opens, from the text before it."""
    if SCOPE_KEYWORD.match(header) and "(" not in header:
        return "scope"
    assigned = "=" in header.split("(")[0] and "operator" not in header
    # Unbalanced parentheses: a lambda inside a constructor's member initialisers.
    balanced = header.count("(") == header.count(")")
    if "(" in header and balanced and not assigned and not CONTROL.match(header) and (
            FUNCTION_TAIL.search(header) or INITIALISERS.search(header)):
        return "function"
    return "other"  # an initialiser or enum body: its braces belong to the declaration


def functions(text):
    """(name, first line, last line) of every function body at namespace or class scope."""
    code = code_only(text)
    found = []
    stack = []  # per open brace: [kind, name, first line]
    header_start = 0  # where the declaration before the next brace at scope level begins
    for match in re.finditer(r"[{};]", code):
        at = match.start()
        at_scope = all(kind == "scope" for kind, _, _ in stack)
        if match.group(0) == ";":
            if at_scope:
                header_start = at + 1
        elif match.group(0) == "{":
            if not at_scope:
                stack.append(["other", None, 0])
                continue
            raw = code[header_start:at]
            header = ACCESS.sub("", " ".join(raw.split()))
            kind = classify(header)
            first = code.count("\n", 0, header_start + len(raw) - len(raw.lstrip())) + 1
            stack.append([kind, name_of(header) if kind == "function" else None, first])
            if kind == "scope":
                header_start = at + 1
        elif stack:  # "}" (an unbalanced one, from a macro, is ignored)
            kind, name, first = stack.pop()
            if kind == "function":
                found.append((name, first, code.count("\n", 0, at) + 1))
            if kind != "other":
                header_start = at + 1
    return found


def limit_for(path):
    return FOLDER_LIMIT_LINES.get(path.split("/")[0], LIMIT_LINES)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = []
    for folder, dirs, files in os.walk(root):
        top = os.path.relpath(folder, root) == "."
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and
                         not (top and (d.startswith("build") or d == "gpu_deps")))
        for file_name in sorted(f for f in files if f.endswith(SUFFIXES)):
            path = os.path.relpath(os.path.join(folder, file_name), root).replace(os.sep, "/")
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
                text = source.read()
            for name, first, last in functions(text):
                lines, limit = last - first + 1, limit_for(path)
                if lines > limit:
                    problems.append(f"{path}:{first}: {name}: {lines} lines, limit {limit}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_function_length: {len(problems)} function(s) over the limit")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
