#!/usr/bin/env python3
"""Turns bench/raw.jsonl (from scripts/bench.sh) into bench/results.md and bench/route-latency.svg.

Each figure is the median over rounds; the ratio is namesrv / peer.
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

# (workload, path in the result, label, lower is better)
FIGURES = [
    ("route-16", "route.per_second", "route QPS, 16 connections", False),
    ("route-16", "route.p99_us", "route p99 µs, 16 connections", True),
    ("route-256", "route.per_second", "route QPS, 256 connections", False),
    ("route-256", "route.p99_us", "route p99 µs, 256 connections", True),
    ("storm", "route.p99_us", "route p99 µs during the registration storm", True),
    ("storm", "route.per_second", "route QPS during the storm", False),
    ("storm", "register.per_second", "storm registrations/s", False),
    ("register-10k", "register.per_second", "full registrations/s (10k topics, changed dataVersion)", False),
    ("register-10k", "register.p99_us", "registration p99 µs (10k topics)", True),
    ("big-broker", "route.per_second", "route QPS, one broker with 100k topics", False),
    ("many-brokers", "route.per_second", "route QPS, 1,000 brokers x 20 topics", False),
    ("route-16", "peak_rss_kb", "peak RSS KiB, RIP-29 data loaded", True),
    ("conns", "result.open", "idle client connections held open", False),
    ("conns", "result.idle_ok", "of those, sampled ones still answering (of 100)", False),
]


def dig(record, path):
    node = record if path == "peak_rss_kb" else record.get("result", {})
    if path.startswith("result."):
        path = path[len("result."):]
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def median(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def fmt(v):
    if v is None:
        return "—"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}"


def svg(records, path):
    pcts = ["p50_us", "p90_us", "p99_us", "p999_us"]
    groups = [(w, s) for w in ("route-16", "route-256", "storm") for s in ("namesrv", "peer")]
    values = {}
    for w, s in groups:
        for p in pcts:
            values[(w, s, p)] = median([dig(r, "route." + p) for r in records if r["workload"] == w and r["server"] == s])
    top = max([v for v in values.values() if v] or [1])
    width, height, left, bottom = 760, 340, 60, 40
    bar = 14
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{width/2}" y="16" text-anchor="middle" font-size="13">Route latency percentiles (µs, median of rounds; lower is better)</text>']
    x = left
    colors = {"namesrv": "#2b7bb9", "peer": "#d98c2b"}
    plot_h = height - bottom - 30
    for w in ("route-16", "route-256", "storm"):
        gx = x
        for p in pcts:
            for s in ("namesrv", "peer"):
                v = values[(w, s, p)] or 0
                h = plot_h * v / top
                out.append(f'<rect x="{x}" y="{height-bottom-h}" width="{bar}" height="{h}" fill="{colors[s]}"><title>{w} {s} {p}: {v:.0f}</title></rect>')
                x += bar
            out.append(f'<text x="{x-bar}" y="{height-bottom+12}" text-anchor="middle">{p[:-3]}</text>')
            x += 6
        out.append(f'<text x="{(gx+x)/2}" y="{height-bottom+28}" text-anchor="middle" font-weight="bold">{w}</text>')
        x += 30
    out.append(f'<line x1="{left-5}" y1="{height-bottom}" x2="{x}" y2="{height-bottom}" stroke="black"/>')
    out.append(f'<text x="{left-8}" y="{height-bottom-plot_h}" text-anchor="end">{top:.0f}</text>')
    for i, s in enumerate(("namesrv", "peer")):
        out.append(f'<rect x="{width-170}" y="{30+i*16}" width="10" height="10" fill="{colors[s]}"/><text x="{width-155}" y="{39+i*16}">{s if s == "namesrv" else "rocketmq-namesrv 1.0.0"}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def run_key(record):
    """Where a record sits in the run: its round, and its pair within the round (the limit measures
    several pairs a round; every other workload one)."""
    return record["round"], record.get("pair", 1)


def round_ratios(runs, path, server, against):
    """`server`'s figure at `path` over `against`'s, for each round (and pair) where both have one,
    in run order."""
    of = {run_key(r): dig(r, path) for r in runs if r["server"] == against}
    return [dig(r, path) / of[run_key(r)] for r in sorted(runs, key=run_key)
            if r["server"] == server and isinstance(dig(r, path), (int, float)) and of.get(run_key(r))]


def ratio_cells(ratios):
    """The table cells for per-round ratios: their median, and each round's."""
    if not ratios:
        return "—", "—"
    return f"{median(ratios):.2f}x", ", ".join(f"{x:.2f}" for x in ratios)


SCALE_CONFIGS = [
    ("namesrv-pinned1", "namesrv, io_threads 1, pinned to core 0 (load tool on core 1)"),
    ("namesrv-free1", "namesrv, io_threads 1, unpinned"),
    ("namesrv-free2", "namesrv, io_threads 2, unpinned"),
    ("peer-free", "rocketmq-namesrv 1.0.0, unpinned"),
]


def scaling(records):
    out = ["", "## Scaling over both cores", "",
           "Route load on the RIP-29 data, 16 connections, server and load tool sharing the 2 cores "
           "(unpinned) except the pinned baseline; server CPU over the measured window. Each round runs "
           "the four servers back to back, so a round's ratio compares runs a minute apart; the ratio "
           "given is the median of the rounds' ratios (the machine's speed drifts between rounds).", "",
           "| depth | server | route QPS | vs pinned io_threads 1 | per round | p99 µs | server CPU % |",
           "|---:|---|---:|---:|---|---:|---:|"]
    for depth in (8, 32):
        w = f"scale-d{depth}"
        runs = [r for r in records if r["workload"] == w]
        for label, text in SCALE_CONFIGS:
            rs = [r for r in runs if r["server"] == label]
            if not rs:
                continue
            qps = median([dig(r, "route.per_second") for r in rs])
            ratio, per_round = ratio_cells(round_ratios(runs, "route.per_second", label, "namesrv-pinned1"))
            out.append(f"| {depth} | {text} | {fmt(qps)} | {ratio} | {per_round} "
                       f"| {fmt(median([dig(r, 'route.p99_us') for r in rs]))} "
                       f"| {fmt(median([dig(r, 'server_cpu_percent') for r in rs]))} |")
    return out


def baseline(records):
    """The side-by-side figures of namesrv against an earlier build (BASELINE), same runs."""
    if not any(r["server"] == "baseline" for r in records):
        return []
    label = os.environ.get("BASELINE_LABEL", "baseline")
    out = ["", "## Against an earlier build", "",
           f"The side-by-side workloads also ran on an earlier namesrv build ({label}), pinned the same way, "
           "in the same rounds, with the same load tool (each round: this build, the peer, the earlier build). The ratio is this "
           "build / the earlier one, the median of the rounds' own ratios; the spread of those is the noise.", "",
           "| figure | namesrv | earlier build | ratio | per round |", "|---|---:|---:|---:|---|"]
    for workload, path, text, lower in FIGURES:
        runs = [r for r in records if r["workload"] == workload]
        old = median([dig(r, path) for r in runs if r["server"] == "baseline"])
        if old is None:
            continue
        ours = median([dig(r, path) for r in runs if r["server"] == "namesrv"])
        ratio, per_round = ratio_cells(round_ratios(runs, path, "namesrv", "baseline"))
        out.append(f"| {text} | {fmt(ours)} | {fmt(old)} | {ratio} | {per_round} |")
    return out


def storm_scaling(records):
    rows = [("namesrv-pinned1", "namesrv, io_threads 1, pinned to core 0 (load tool on core 1)"),
            ("namesrv-free2", "namesrv, io_threads 2, unpinned")]
    out = ["", "## The storm's route tail over both cores", "",
           "The storm of the side-by-side table (32 brokers re-registering 10,000 topics every second, "
           "16 route connections, 4 in flight), namesrv on one pinned core and with `io_threads = 2` "
           "sharing both cores with the load tool.", "",
           "| server | route p99 µs | p99 per round | route p999 µs | route QPS | registrations/s |",
           "|---|---:|---|---:|---:|---:|"]
    for label, text in rows:
        rs = sorted((r for r in records if r["workload"] == "storm-scale" and r["server"] == label), key=lambda r: r["round"])
        if not rs:
            continue
        per_round = ", ".join(fmt(dig(r, "route.p99_us")) for r in rs if dig(r, "route.p99_us") is not None)
        out.append(f"| {text} | {fmt(median([dig(r, 'route.p99_us') for r in rs]))} | {per_round or '—'} "
                   f"| {fmt(median([dig(r, 'route.p999_us') for r in rs]))} "
                   f"| {fmt(median([dig(r, 'route.per_second') for r in rs]))} "
                   f"| {fmt(median([dig(r, 'register.per_second') for r in rs]))} |")
    return out


def security(records):
    rows = [("no-metrics", "metrics off (`metrics_enabled = false`), plain TCP"), ("plain", "defaults: metrics on, no access control, plain TCP"), ("acl", "`acl_protect = all`, every request signed"),
            ("tls", "TLS (`permissive`), no access control"), ("acl-tls", "both")]
    base = median([dig(r, "route.per_second") for r in records if r["workload"] == "security" and r["server"] == "plain"])
    out = ["", "## What metrics, access control and TLS cost", "",
           "The route load of the side-by-side table (RIP-29 data, 16 connections, 4 in flight), namesrv pinned "
           "to core 0 with `io_threads = 1`, the load tool on core 1 signing (HMAC-SHA1) and/or speaking TLS.", "",
           "| configuration | route QPS | vs defaults | p99 µs | server CPU µs per query |", "|---|---:|---:|---:|---:|"]
    for label, text in rows:
        rs = [r for r in records if r["workload"] == "security" and r["server"] == label]
        if not rs:
            continue
        qps = median([dig(r, "route.per_second") for r in rs])
        cpu = median([dig(r, "server_cpu_percent") for r in rs])
        per = cpu * 1e4 / qps if qps and cpu else None
        ratio = f"{qps / base:.2f}x" if qps and base else "—"
        out.append(f"| {text} | {fmt(qps)} | {ratio} | {fmt(median([dig(r, 'route.p99_us') for r in rs]))} | {fmt(per)} |")
    return out


def limit(records):
    """namesrv against the canned server (no NameServer work) under the same route load, one pinned core."""
    runs = [r for r in records if r["workload"] == "limit"]
    if not any(r["server"] == "canned" for r in runs):
        return []
    out = ["", "## Against the limit", "",
           "The physical limit of this machine for route queries: `namesrv-bench canned`, a one-thread server that "
           "frames each request, parses its header and answers code 0 with a fixed body of the size namesrv's route "
           "replies had in the run before, doing no NameServer work. Both pinned to core 0, the load tool on core 1: "
           "16 connections x 8 in flight over 4 clusters x 8 brokers sharing 1,000 topics each (4,000 topics). "
           "Each round measures several pairs, which of the two goes first alternating; the ratio is the median "
           "of the pairs' own ratios.", "",
           "Host steal is the share of the machine's CPU time the host gave to others while the run lasted "
           "(from /proc/stat): where it is high, a run measures the host more than the server.", "",
           "| server | route QPS | vs the limit | per pair, in run order | p99 µs | server CPU % | host steal % per run |",
           "|---|---:|---:|---|---:|---:|---|"]
    earlier = f"earlier build {os.environ.get('BASELINE_LABEL', 'baseline')}, io_threads 1"
    for label, text in (("namesrv", "namesrv, io_threads 1"), ("baseline", earlier), ("canned", "canned (the limit)")):
        if not any(r["server"] == label for r in runs):
            continue
        rs = [r for r in runs if r["server"] == label]
        ratio, per_round = ratio_cells(round_ratios(runs, "route.per_second", label, "canned"))
        steal = ", ".join(f"{r['steal_percent']:.0f}" for r in sorted(rs, key=run_key) if "steal_percent" in r)
        out.append(f"| {text} | {fmt(median([dig(r, 'route.per_second') for r in rs]))} | {ratio} | {per_round} "
                   f"| {fmt(median([dig(r, 'route.p99_us') for r in rs]))} "
                   f"| {fmt(median([dig(r, 'server_cpu_percent') for r in rs]))} | {steal or '—'} |")
    return out


def memory(records):
    rs = [r for r in records if r["workload"] == "memory" and "result" in r]
    if not rs:
        return []
    m = lambda path: fmt(median([dig(r, path) for r in rs]))
    return ["", "## Memory per topic", "",
            f"One broker registers {rs[0]['result']['topics']:,} topics (8 queues each) in one REGISTER_BROKER: "
            f"resident memory grows by **{m('bytes_per_topic')} bytes per topic** (RSS {m('rss_kib_before')} KiB before, "
            f"{m('rss_kib_after')} KiB after; peak {m('peak_rss_kib')} KiB while the {m('body_bytes')}-byte body is parsed; "
            f"registration took {m('register_seconds')} s)."]


def fleet(records):
    rs = [r for r in records if r["workload"] == "fleet" and "result" in r]
    if not rs:
        return []
    m = lambda path: median([dig(r, path) for r in rs])
    f = rs[0]["result"]
    return ["", "## Fleet sizing scenario", "",
            f"`namesrv-bench fleet`: {f['brokers']} brokers x {f['topics'] // max(f['brokers'], 1):,} topics re-registering every "
            f"{f['register_ms']} ms (unchanged dataVersion, as heartbeats), then {f['clients']:,} clients each asking "
            f"{f['topics_per_client']} routes every {f['poll_ms']} ms; namesrv with io_threads = 0 (both cores).", "",
            "| figure | value |", "|---|---:|",
            f"| registrations/s, brokers only | {fmt(m('brokers_only.registrations.per_second'))} |",
            f"| server CPU %, brokers only | {fmt(m('brokers_only.server_cpu_percent'))} |",
            f"| route queries/s with clients | {fmt(m('with_clients.routes.per_second'))} |",
            f"| route p99 µs with clients | {fmt(m('with_clients.routes.p99_us'))} |",
            f"| registration p99 µs with clients | {fmt(m('with_clients.registrations.p99_us'))} |",
            f"| server CPU %, brokers and clients | {fmt(m('with_clients.server_cpu_percent'))} |",
            f"| CPU µs per registration ({f['topics'] // max(f['brokers'], 1):,} topics) | {fmt(m('cpu_us_per_registration'))} |",
            f"| CPU µs per route query | {fmt(m('cpu_us_per_route_query'))} |",
            f"| bytes per topic (RSS) | {fmt(m('bytes_per_topic'))} |",
            f"| bytes per client connection (RSS) | {fmt(m('bytes_per_client_connection'))} |"]


def steal_line(records):
    """How much of the machine the host took away while the runs lasted (virtual machines only)."""
    steal = sorted(r["steal_percent"] for r in records if "steal_percent" in r)
    if not steal:
        return "- host steal: not recorded"
    return (f"- host steal (CPU time the host gave to others, per run): median {median(steal):.0f}%, "
            f"max {steal[-1]:.0f}% — runs with high steal measure the host as much as the servers")


def main(raw, outdir, args):
    records = [json.loads(l) for l in open(raw) if l.strip()]
    rounds = max([r["round"] for r in records] or [0])
    lines = ["# namesrv vs rocketmq-namesrv 1.0.0, side by side", "",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
             f"- machine: {machine()}",
             f"- commit measured: {os.environ.get('BENCH_COMMIT') or subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}",
             f"- method: `{args} scripts/bench.sh`, {rounds} rounds, servers alternating A B per workload, each on a fresh process "
             "pinned to core 0 (`taskset -c 0`), the load tool `namesrv-bench` pinned to core 1; figures are medians over rounds; "
             f"namesrv and namesrv-bench built with the `{os.environ.get('BENCH_PROFILE') or 'release'}` cargo profile",
             steal_line(records),
             "- workloads: RIP-29 shape = 4 clusters x 8 brokers, each cluster's brokers hosting the same 10,000 topics "
             "(40,000 topics, 8 queues); each route connection asks every topic in turn in an order of its own (shuffled, fixed seed), 4 in flight per connection; "
             "in the storm every broker re-registers its full table (changed dataVersion) every second, the brokers' "
             "periods spread over the second", "",
             "| figure | namesrv | rocketmq-namesrv 1.0.0 | ratio (namesrv / peer) |", "|---|---:|---:|---:|"]
    for workload, path, label, lower in FIGURES:
        ours = median([dig(r, path) for r in records if r["workload"] == workload and r["server"] == "namesrv"])
        peer = median([dig(r, path) for r in records if r["workload"] == workload and r["server"] == "peer"])
        ratio = f"{ours / peer:.2f}x" if ours is not None and peer else "—"
        lines.append(f"| {label} | {fmt(ours)} | {fmt(peer)} | {ratio} |")
    lines += baseline(records) + scaling(records) + storm_scaling(records) + limit(records) + security(records) + memory(records) + fleet(records)
    errors = [r for r in records if "error" in r]
    if errors:
        lines += ["", "Runs that failed:", ""]
        # Keep the tool's own message, not the progress output before it.
        why = lambda e: e[e.rfind("namesrv-bench:"):] if "namesrv-bench:" in e else e[-200:]
        lines += [f"- round {r['round']} {r['workload']} on {r['server']}: {why(r['error'])}" for r in errors]
    lines += ["", "![route latency](route-latency.svg)", ""]
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(lines))
    svg(records, os.path.join(outdir, "route-latency.svg"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
