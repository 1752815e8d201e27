#!/usr/bin/env python3
"""Checks the shipped dashboard and alert rules against a live namesrv (run by scripts/observe.sh).

Every metric name that deploy/grafana/*.json and deploy/prometheus/*-rules.yml use must be a series
of the given /metrics scrape (plain text format), so a renamed metric or a counter that is only
born at its first event fails CI; with --prom, every dashboard query (its variables set to match
anything) must also be accepted by that Prometheus server.

    scripts/check-dashboard.py METRICS_TXT [--prom HOST:PORT]
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


def main():
    args = sys.argv[1:]
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
