"""Prints the metric names that the Grafana dashboards (*.json) and Prometheus rule files (*.yml)
given as arguments query, one per line as `NAME<TAB>FILE`, from every PromQL expression in them:
a dashboard's targets' "expr" (and label_values/query_result of query variables), a rule file's
rules' "expr". A name is a series name as Prometheus stores it (a histogram's
NAME_bucket/_sum/_count, a counter's NAME_total), exactly as written in the query. Function and
aggregation names, keywords, label names (in {...}, by/without/on/ignoring/group_left/right
lists), strings, numbers, durations and Grafana variables ($__rate_interval, ${DS}) are not
names. Exit 1 on a file it cannot read."""
import json
import re
import sys

KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan", "atan2", "start", "end"}


def names_in(expr):
    named = re.findall(r'__name__\s*=\s*"([^"]+)"', expr)  # {__name__="x"}
    e = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', " ", expr)  # strings
    e = re.sub(r"#[^\n]*", " ", e)                                             # comments
    e = re.sub(r"\{[^}]*\}", " ", e)                                           # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                                          # ranges, subqueries
    e = re.sub(r"\$\{[^}]*\}|\$\w+", " ", e)                                   # Grafana variables
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    out = named
    for m in re.finditer(r"(?<![\w.:])[A-Za-z_:][\w:]*", e):
        if re.match(r"\s*\(", e[m.end():]) or m.group(0).lower() in KEYWORDS:
            continue  # a function or aggregation, or a keyword
        out.append(m.group(0))
    return out


def dashboard_exprs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            elif key == "templating" and isinstance(value, dict):
                for var in value.get("list", []):
                    query = var.get("query")
                    query = query.get("query") if isinstance(query, dict) else query
                    if var.get("type") == "query" and isinstance(query, str):
                        m = re.match(r"\s*(?:label_values\(\s*(.*?)\s*,[^,]*\)|label_values\((.*)\)|"
                                     r"query_result\((.*)\)|metrics\(.*\))\s*$", query, re.S)
                        if m and any(m.groups()):
                            yield next(g for g in m.groups() if g)
            else:
                yield from dashboard_exprs(value)
    elif isinstance(node, list):
        for item in node:
            yield from dashboard_exprs(item)


def rule_exprs(path):
    import yaml  # python3-yaml
    with open(path) as f:
        doc = yaml.safe_load(f) or {}
    for group in doc.get("groups", []):
        for rule in group.get("rules", []):
            if "expr" in rule:
                yield str(rule["expr"])


def main(paths):
    for path in paths:
        try:
            if path.endswith(".json"):
                with open(path) as f:
                    exprs = list(dashboard_exprs(json.load(f)))
            else:
                exprs = list(rule_exprs(path))
        except (OSError, ValueError) as err:
            print(f"{path}: {err}", file=sys.stderr)
            return 1
        if not exprs:
            print(f"{path}: no PromQL expression found", file=sys.stderr)
            return 1
        for name in sorted({n for e in exprs for n in names_in(e)}):
            print(f"{name}\t{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
