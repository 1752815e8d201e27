#!/usr/bin/env python3
"""Checks that rendered Kubernetes manifests (kubectl kustomize deploy/kubernetes) keep what they
promise, beyond schema validity: stable per-pod DNS names, both Services, the config file in a
ConfigMap, HTTP probes, requests and limits, a PodDisruptionBudget, pod anti-affinity and a
restricted securityContext. Prints each problem and exits 1 if there is one.

Usage: scripts/check-k8s.py RENDERED.yaml
"""

import ipaddress
import sys

import yaml


def main(path):
    with open(path) as f:
        objects = [o for o in yaml.safe_load_all(f) if o]
    by_kind = {}
    for o in objects:
        by_kind.setdefault(o["kind"], []).append(o)
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)

    sts = by_kind.get("StatefulSet", [None])[0]
    need(sts is not None, "a StatefulSet")
    services = {s["metadata"]["name"]: s["spec"] for s in by_kind.get("Service", [])}
    if sts:
        spec = sts["spec"]
        headless = services.get(spec.get("serviceName"), {})
        need(headless.get("clusterIP") == "None", "serviceName names a headless Service (per-pod DNS names)")
        need(any(s.get("clusterIP") != "None" for s in services.values()), "a client Service")
        pod = spec["template"]["spec"]
        psc = pod.get("securityContext", {})
        need(psc.get("runAsNonRoot") is True, "pod runAsNonRoot")
        need(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "pod seccompProfile RuntimeDefault")
        need("podAntiAffinity" in pod.get("affinity", {}), "pod anti-affinity")
        configmaps = {c["metadata"]["name"] for c in by_kind.get("ConfigMap", [])}
        need(any(v.get("configMap", {}).get("name") in configmaps for v in pod.get("volumes", [])),
             "the config file mounted from a ConfigMap")
        for c in pod["containers"]:
            sc = c.get("securityContext", {})
            need(sc.get("allowPrivilegeEscalation") is False, f"{c['name']}: allowPrivilegeEscalation false")
            need(sc.get("readOnlyRootFilesystem") is True, f"{c['name']}: readOnlyRootFilesystem")
            need(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{c['name']}: capabilities drop ALL")
            res = c.get("resources", {})
            need({"cpu", "memory"} <= set(res.get("requests", {})), f"{c['name']}: cpu and memory requests")
            need("memory" in res.get("limits", {}), f"{c['name']}: a memory limit")
            ready = c.get("readinessProbe", {}).get("httpGet", {})
            live = c.get("livenessProbe", {}).get("httpGet", {})
            need(ready.get("path") == "/readyz", f"{c['name']}: readiness probe on /readyz")
            need(live.get("path") == "/livez", f"{c['name']}: liveness probe on /livez")
            mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
            need("/var/lib/namesrv" in mounts, f"{c['name']}: /var/lib/namesrv on a volume")
    need(len(by_kind.get("PodDisruptionBudget", [])) == 1, "a PodDisruptionBudget")
    if sts:
        check_components(by_kind, sts["spec"]["template"], need)
    for p in problems:
        print(f"k8s: missing {p}")
    return 1 if problems else 0


def check_components(by_kind, template, need):
    """The optional components (deploy/kubernetes/components), when rendered: the PodMonitor
    scrapes the pods' HTTP port, the NetworkPolicy selects the pods and lets anyone reach the
    remoting port, and its ipBlock rules (addresses outside the cluster) open that port only."""
    labels = template["metadata"]["labels"]
    ports = {p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
    for pm in by_kind.get("PodMonitor", []):
        selector = pm["spec"]["selector"].get("matchLabels", {})
        need(selector and selector.items() <= labels.items(), "a PodMonitor selecting the NameServer pods")
        for ep in pm["spec"]["podMetricsEndpoints"]:
            need(ep.get("port") == "http" and "http" in ports, "the PodMonitor scraping the pods' http port")
            need(ep.get("path") == "/metrics", "the PodMonitor scraping /metrics")
    for np in by_kind.get("NetworkPolicy", []):
        selector = np["spec"]["podSelector"].get("matchLabels", {})
        need(selector and selector.items() <= labels.items(), "a NetworkPolicy selecting the NameServer pods")
        open_remoting = [
            rule for rule in np["spec"].get("ingress", [])
            if {"namespaceSelector": {}} in rule.get("from", [])
            and any(p.get("port") in ("remoting", ports.get("remoting")) for p in rule.get("ports", []))
        ]
        need(open_remoting, "a NetworkPolicy letting brokers and clients from any namespace reach the remoting port")
        # ipBlock rules (components/network-policy-external) admit addresses outside the cluster:
        # the remoting port only (the HTTP port carries the status API), from valid CIDRs.
        for rule in np["spec"].get("ingress", []):
            blocks = [peer["ipBlock"] for peer in rule.get("from", []) if "ipBlock" in peer]
            if not blocks:
                continue
            rule_ports = [p.get("port") for p in rule.get("ports", [])]
            need(rule_ports and all(p in ("remoting", ports.get("remoting")) for p in rule_ports),
                 "an ipBlock rule opening the remoting port only (got ports %s)" % rule_ports)
            for block in blocks:
                try:
                    ipaddress.ip_network(block.get("cidr", ""))
                    valid = True
                except ValueError:
                    valid = False
                need(valid, "a valid CIDR in an ipBlock rule (got %r)" % block.get("cidr"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
