#!/usr/bin/env python3
"""Docs test: every command of ours shown in the README's sh code blocks still fits the programs.

For each line of a ```sh or ```bash block that runs one of the programs (expiry-relay, expiry-ctl,
order-canceller, order-sim, by name or by their build-tree path):
- the subcommand it names exists (`PROGRAM SUB [SUBSUB] --help` exits 0), and every --flag on the
  line is listed by the program's help (the top level's and the subcommand's), so a renamed or
  removed flag fails here;
- a line that runs offline (--help, --version, --check-config, `recur preview`) is run as
  written and must exit 0;
- an expiry-relay or order-canceller line with connection settings only is also run with
  --check-config appended, which validates every value without connecting (lines naming files
  that do not exist here, such as /etc/... password files, are checked by their flags only).
Usage: check_readme_commands.py README BUILD_DIR
"""
import os
import re
import shlex
import subprocess
import sys

PROGRAMS = {
    "expiry-relay": "src/relay/expiry-relay",
    "expiry-ctl": "src/ctl/expiry-ctl",
    "order-canceller": "src/orders/order-canceller",
    "order-sim": "src/orders/order-sim",
}
OFFLINE_FLAGS = ("--help", "--version", "--check-config")
FLAG = re.compile(r"--[a-z0-9][a-z0-9-]*")


def code_lines(readme):
    """(line number, logical line) of every ```sh / ```bash block; continuation lines joined."""
    inside = False
    pending, start = "", 0
    with open(readme, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("```"):
                inside = line.strip() in ("```sh", "```bash") if not inside else False
                continue
            if not inside:
                continue
            if not pending:
                start = number
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            yield start, pending + line
            pending = ""


def run(argv, timeout=20):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           env=dict(os.environ, EXPIRY_RELAY_CONFIG="", ORDER_CANCELLER_CONFIG=""))
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out after %d s" % timeout


def subcommands(help_text):
    """Names listed under 'Subcommands:' (CLI11) in a help text."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.strip().lower() in ("subcommands:",):
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\S+)\s", line)
            if m:
                names.append(m.group(1))
            elif line and not line.startswith(" "):
                inside = False
    return names


def main():
    readme, build = sys.argv[1], sys.argv[2]
    failures, checked, ran = [], 0, 0
    helps = {}

    def help_of(path_argv):
        key = tuple(path_argv)
        if key not in helps:
            helps[key] = run(list(path_argv) + ["--help"])
        return helps[key]

    for number, line in code_lines(readme):
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as e:
            failures.append("README:%d: cannot parse %r: %s" % (number, line, e))
            continue
        # Each command of a list (a && b; c | d &) on its own.
        segments, current = [], []
        for token in tokens:
            if token in ("&&", "||", ";", "|", "&"):
                segments.append(current)
                current = []
            elif token.startswith((">", "2>", "<")):
                continue
            else:
                current.append(token)
        segments.append(current)
        for segment in segments:
            checked, ran = check_command(segment, number, line, build, help_of, failures, checked, ran)
    print("README commands: %d commands of ours checked, %d run offline" % (checked, ran))
    if checked == 0:
        failures.append("no command of ours found in %s's sh blocks" % readme)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


def check_command(tokens, number, line, build, help_of, failures, checked, ran):
    """Checks one command (its tokens); returns the updated (checked, ran) counts."""
    # Skip leading VAR=value assignments.
    while tokens and re.match(r"^[A-Z_][A-Z0-9_]*=", tokens[0]):
        tokens.pop(0)
    if not tokens:
        return checked, ran
    name = os.path.basename(tokens[0])
    if name not in PROGRAMS:
        return checked, ran
    binary = os.path.join(build, PROGRAMS[name])
    where = "README:%d: %s" % (number, line.strip())
    checked += 1
    # The subcommand path: expiry-ctl's first token that names a subcommand, then a token
    # naming one of its own subcommands.
    path = [binary]
    rc, top_help = help_of(path)
    if rc != 0:
        failures.append("%s\n  %s --help exits %d" % (where, name, rc))
        return checked, ran
    texts = [top_help]
    rest = tokens[1:]
    names = subcommands(top_help)
    for i, token in enumerate(rest):
        if token in names:
            path.append(token)
            rc, text = help_of(path)
            if rc != 0:
                failures.append("%s\n  %s --help exits %d" % (where, " ".join([name] + path[1:]), rc))
            texts.append(text)
            following = rest[i + 1:]
            inner = subcommands(text)
            if following and following[0] in inner:
                path.append(following[0])
                rc, text = help_of(path)
                if rc != 0:
                    failures.append("%s\n  %s --help exits %d" % (where, " ".join([name] + path[1:]), rc))
                texts.append(text)
            break
    if names and len(path) == 1 and not any(t in OFFLINE_FLAGS for t in rest):
        failures.append("%s\n  names no subcommand of %s (%s)" % (where, name, ", ".join(names)))
    helps_text = "\n".join(texts)
    for flag in sorted(set(FLAG.findall(" ".join(rest)))):
        if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", helps_text):
            failures.append("%s\n  %s is not an option of %s" % (where, flag, " ".join([name] + path[1:])))
    # Offline runs.
    argv = [binary] + rest
    offline = any(t in OFFLINE_FLAGS for t in rest) or (path[1:3] == ["recur", "preview"])
    if not offline and name in ("expiry-relay", "order-canceller") and not any(
            t.startswith("/") and not os.path.exists(t) for t in rest):
        argv = argv + ["--check-config"]
        offline = True
    if offline:
        ran += 1
        rc, out = run(argv)
        if rc != 0:
            failures.append("%s\n  ran %s: exit %d\n  %s" % (where, " ".join(argv[1:]), rc,
                                                           "\n  ".join(out.splitlines()[-5:])))
    return checked, ran


if __name__ == "__main__":
    sys.exit(main())
