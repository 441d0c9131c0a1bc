#!/usr/bin/env python3
"""Checks deploy/grafana/fairq-dashboard.json.

  check_dashboard.py DASHBOARD METRIC_NAMES PROMTOOL RULE_FILE...

The JSON parses; the data source is a template variable used by every panel
and query; tenant and pool are multi-value variables; the panels issue 5 asks
for are there; every fairq_ metric the dashboard or the rule files name is
in the contract (METRIC_NAMES); every fairq: series the dashboard reads is
recorded by a rule file; and every query parses as PromQL (promtool, with the
Grafana variables replaced by values). Exits 1 with one line per problem.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# A queried metric per panel that issue 5 asks for.
REQUIRED_QUERIES = {
    "wait p99 from the summary": 'fairq_queue_wait_window_seconds{quantile="0.99"',
    "wait p99 from the histogram": "histogram_quantile(0.99, sum by (tenant, pool, le) "
                                   "(rate(fairq_queue_wait_seconds_bucket",
    "oldest ready age": "fairq_oldest_ready_age_seconds",
    "fair-share ratio": "fairq_tenant_fair_share_ratio",
    "entitlement line": "vector(1)",
    "running jobs": 'fairq_jobs{state="leased"',
    "dispatched": "fairq_jobs_dispatched_total",
    "completed": "fairq_jobs_completed_total",
    "rejections by reason": "sum by (reason) (rate(fairq_admission_rejections_total",
}
# Values Grafana would substitute; any valid ones do for a syntax check.
GRAFANA_VARIABLES = {
    "$__rate_interval": "5m",
    "$instance": ".*",
    "$tenant": ".*",
    "$pool": ".*",
}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def panels_of(dashboard):
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])  # collapsed rows nest theirs


def metric_names(text):
    return set(re.findall(r"\bfairq_[a-z_]+", text))


def base_name(name, contract):
    if name in contract:
        return name
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in contract:
            return name[: -len(suffix)]
    return None


def check_variables(dashboard, problems):
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    source = variables.get("datasource", {})
    if source.get("type") != "datasource" or source.get("query") != "prometheus":
        problems.append("no 'datasource' variable of type datasource/prometheus")
    for name in ("tenant", "pool"):
        variable = variables.get(name, {})
        if variable.get("type") != "query" or not variable.get("multi"):
            problems.append(f"no multi-value query variable '{name}'")


def check_panels(dashboard, problems):
    exprs = []
    for panel in panels_of(dashboard):
        if panel.get("type") == "row":
            continue
        title = panel.get("title", "?")
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"panel '{title}': data source is not ${{datasource}}")
        for target in panel.get("targets", []):
            if target.get("datasource", {}).get("uid") != "${datasource}":
                problems.append(f"panel '{title}': a query's data source is not ${{datasource}}")
            exprs.append(target.get("expr", ""))
    for what, fragment in REQUIRED_QUERIES.items():
        if not any(fragment in expr for expr in exprs):
            problems.append(f"no panel queries {what} ({fragment})")
    return exprs


def check_names(exprs, rule_texts, contract, problems):
    used = metric_names("\n".join(exprs))
    for text in rule_texts.values():
        used |= metric_names(text)
    for name in sorted(used):
        if base_name(name, contract) is None:
            problems.append(f"{name} is not a fairq metric (tests/deploy/metric_names.txt)")
    recorded = set()
    for text in rule_texts.values():
        recorded |= set(re.findall(r"^\s*-?\s*record:\s*(\S+)", text, re.M))
    for name in sorted(set(re.findall(r"\bfairq:[a-z_:0-9]+", "\n".join(exprs)))):
        if name not in recorded:
            problems.append(f"{name} is read by the dashboard but recorded by no rule")


def check_promql(exprs, promtool, problems):
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for i, expr in enumerate(exprs):
        for variable, value in GRAFANA_VARIABLES.items():
            expr = expr.replace(variable, value)
        if "$" in expr:
            problems.append(f"query uses an unknown variable: {expr}")
            continue
        lines += [f"      - record: dashboard_query_{i}", f"        expr: {json.dumps(expr)}"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dashboard_queries.yaml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        result = subprocess.run([promtool, "check", "rules", path],
                                capture_output=True, text=True)
    if result.returncode != 0:
        problems.append("promtool rejects a dashboard query:\n" + result.stdout + result.stderr)


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    dashboard_path, names_path, promtool, rule_paths = argv[1], argv[2], argv[3], argv[4:]
    with open(dashboard_path) as f:
        dashboard = json.load(f)  # raises, with line and column, if invalid
    with open(names_path) as f:
        contract = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    rule_texts = {}
    for path in rule_paths:
        with open(path) as f:
            rule_texts[path] = f.read()
    problems = []
    check_variables(dashboard, problems)
    exprs = check_panels(dashboard, problems)
    check_names(exprs, rule_texts, contract, problems)
    check_promql(exprs, promtool, problems)
    for problem in problems:
        print(f"{dashboard_path}: {problem}", file=sys.stderr)
    if not problems:
        print(f"{dashboard_path}: {len(exprs)} queries checked")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
