#!/usr/bin/env python3
"""Checks the shipped dashboard and alert rules against a live namesrv (run by scripts/observe.sh).

Every metric name that deploy/grafana/*.json and deploy/prometheus/*-rules.yml use must be a series
of the given /metrics scrape (plain text format), so a renamed metric or a counter that is only
born at its first event fails CI; with --prom, every dashboard query (its variables set to match
anything) must also be accepted by that Prometheus server.

Every panel's axes carry one unit each (checked always; alone, offline, with --units, which the
fast gate runs): each query's unit is judged from its metric names (`_seconds` quantiles and
means, `rate()` of `_bytes_total`, of `_seconds_total`, of other `_total`, `increase()` of a
`_total`, a ratio `a / b`, a `_bytes` gauge, another gauge), and must fit the unit the panel (or
a per-query override, `byFrameRefID`) gives it; two queries under one unit must have the same.

    scripts/check-dashboard.py METRICS_TXT [--prom HOST:PORT]
    scripts/check-dashboard.py --units
"""
import glob
import json
import re
import sys
import urllib.parse
import urllib.request

ROOT = __file__.rsplit("/scripts/", 1)[0]
NAME = re.compile(r"\b((?:namesrv|process)_[a-z0-9_]+)\b")


def scraped_series(path):
    names = set()
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def dashboard_queries(path):
    dash = json.load(open(path, encoding="utf-8"))
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]
    for var in dash["templating"]["list"]:
        if var.get("type") == "query":
            yield "variable " + var["name"], var["definition"]


# The Grafana units each kind of query may be shown in.
UNITS_OF_KIND = {
    "seconds": {"s", "ms", "µs", "dtdurations"},
    "bytes": {"bytes", "decbytes"},
    "bytes per second": {"Bps", "binBps", "decBps"},
    "busy seconds per second": {"percentunit", "short"},
    "per second": {"reqps", "ops", "rps", "wps", "short"},
    "count": {"short", "none", ""},
    "ratio": {"percentunit", "percent"},
}


def query_kind(expr):
    """What a query's values measure, judged from its metric names and functions."""
    if "histogram_quantile" in expr:
        return "seconds" if "_seconds_bucket" in expr else "count"
    if "_seconds_sum" in expr and "_seconds_count" in expr:
        return "seconds"
    if re.search(r"\b(?:rate|irate)\(\s*\w*bytes\w*_total\b", expr):
        return "bytes per second"
    if re.search(r"\b(?:rate|irate)\(\s*\w+_seconds_total\b", expr):
        return "busy seconds per second"
    if re.search(r"\b(?:rate|irate)\(\s*\w+_total\b", expr):
        return "per second"
    if re.search(r"\bincrease\(\s*\w+_total\b", expr):
        return "count"
    if re.search(r"\S\s+/\s+\S", expr):
        return "ratio"
    if re.search(r"\b\w+_bytes\b", expr):
        return "bytes"
    return "count"


def panel_unit_problems(panel):
    """Why a panel's queries do not each fit the unit of the axis they are drawn on."""
    config = panel.get("fieldConfig", {})
    default = config.get("defaults", {}).get("unit", "")
    by_ref = {}
    for override in config.get("overrides", []):
        matcher = override.get("matcher", {})
        units = [p["value"] for p in override.get("properties", []) if p.get("id") == "unit"]
        if units and matcher.get("id") == "byFrameRefID":
            by_ref[matcher.get("options")] = units[-1]
        elif units:
            return [f"a unit override matched {matcher.get('id')!r}: only byFrameRefID can be checked"]
    problems, kinds_by_unit = [], {}
    for target in panel.get("targets", []):
        unit = by_ref.get(target.get("refId"), default)
        kind = query_kind(target["expr"])
        if unit not in UNITS_OF_KIND[kind]:
            problems.append(f"query {target.get('refId')} measures {kind}, shown as {unit!r}")
        kinds_by_unit.setdefault(unit, set()).add(kind)
    for unit, kinds in kinds_by_unit.items():
        if len(kinds) > 1:
            problems.append(f"one {unit!r} axis mixes {' and '.join(sorted(kinds))}")
    return problems


def unit_failures(paths):
    failures = []
    for path in paths:
        for panel in json.load(open(path, encoding="utf-8"))["panels"]:
            for problem in panel_unit_problems(panel):
                failures.append(f"{path.rsplit('/', 1)[-1]} panel {panel.get('title')!r}: {problem}")
    return failures


def main():
    args = sys.argv[1:]
    if args == ["--units"]:
        dashboards = sorted(glob.glob(f"{ROOT}/deploy/grafana/*.json"))
        failures = unit_failures(dashboards) if dashboards else ["no dashboard found under deploy/grafana"]
        for f in failures:
            print("check-dashboard:", f)
        if failures:
            sys.exit(1)
        print(f"check-dashboard: every panel of {len(dashboards)} dashboard(s) has one unit per axis")
        return
    prom = None
    if "--prom" in args:
        i = args.index("--prom")
        prom = args[i + 1]
        del args[i : i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    series = scraped_series(args[0])
    failures = []
    used = 0
    sources = [(p, [("", open(p, encoding="utf-8").read())]) for p in sorted(glob.glob(f"{ROOT}/deploy/prometheus/*-rules.yml"))]
    dashboards = sorted(glob.glob(f"{ROOT}/deploy/grafana/*.json"))
    sources += [(p, list(dashboard_queries(p))) for p in dashboards]
    if not sources or not dashboards:
        failures.append("no alert rules or dashboard found under deploy/")
    failures += unit_failures(dashboards)
    for path, texts in sources:
        for where, text in texts:
            for name in NAME.findall(text):
                used += 1
                if name not in series:
                    failures.append(f"{path.rsplit('/', 1)[-1]} {where}: {name} is not in the scrape")
    queries = 0
    if prom:
        for path in dashboards:
            for where, expr in dashboard_queries(path):
                if where.startswith("variable"):
                    continue
                expr = expr.replace("$job", ".*").replace("$instance", ".*")
                url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
                try:
                    status = json.load(urllib.request.urlopen(url, timeout=10))["status"]
                except Exception as e:  # an HTTP 400 for a query Prometheus cannot parse
                    status = f"error: {e}"
                queries += 1
                if status != "success":
                    failures.append(f"{path.rsplit('/', 1)[-1]} {where}: Prometheus refused {expr!r}: {status}")
    for f in failures:
        print("check-dashboard:", f)
    if failures:
        sys.exit(1)
    print(f"check-dashboard: {used} metric uses in rules and dashboard all scraped; {queries} dashboard queries accepted by Prometheus")


if __name__ == "__main__":
    main()
