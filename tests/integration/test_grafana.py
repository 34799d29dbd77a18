"""The Grafana dashboard and the Prometheus adapter's rules ask only for what Pressroom exports:
a real `pressroom serve` runs a job, its /metrics is scraped, and every expression of every
panel (and of every external rule) is checked against the series that scrape holds — names,
label names and label values — never against a list kept here. Each expression's syntax is
checked by `promtool check rules` (written as recording rules). Both checks are shown to
reject a dashboard that names a metric Pressroom does not export and one with a syntax error."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import launch_serve, stop
from tests.integration.test_deploy import _tool

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "pressroom.json"
ADAPTER = ROOT / "deploy" / "prometheus-adapter" / "values.yaml"
HPA = ROOT / "deploy" / "kubernetes" / "hpa-bulk.yaml"
SAMPLE = ROOT / "samples" / "letter.pdf"
# labels Prometheus adds to every series it scrapes (the scrape job in docs/kubernetes.md maps
# the pod's namespace and name), so no exposition carries them
TARGET_LABELS = {"instance", "job", "namespace", "pod"}
# Grafana's own variables; a range stands where they are used
GRAFANA_INTERVALS = {"__rate_interval", "__interval", "__range"}
PLACEHOLDER = "grafana_variable"
KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "bool",
    "and",
    "or",
    "unless",
    "inf",
    "nan",
    "start",
    "end",
}
STRING = r'"(?:[^"\\]|\\.)*"'
MATCHER = re.compile(rf"([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*({STRING})")
SELECTOR = re.compile(r"(?<![\w:])([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}")
GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
IDENTIFIER = re.compile(r"(?<![\w.:$])[a-zA-Z_:][\w:]*(?!\w)")
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")


# --- what a running service exports ---------------------------------------------------------------


@dataclass(frozen=True)
class Exported:
    """Every sample name of a real scrape, with the label sets seen on it."""

    series: dict[str, list[dict[str, str]]]

    def labels(self, name: str) -> set[str]:
        return {key for labels in self.series.get(name, []) for key in labels}

    def values(self, name: str, label: str) -> set[str]:
        return {labels[label] for labels in self.series.get(name, []) if label in labels}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """`pressroom serve` on SQLite with one bulk worker, after one job ran through it: every
    histogram has its series then, and /metrics scraped twice shows its own route."""
    server = launch_serve(tmp_path_factory.mktemp("grafana"), workers=1, interactive=0)
    try:
        sent = server.client.post("/v1/jobs", files={"file": (SAMPLE.name, SAMPLE.read_bytes())})
        assert sent.status_code == 202, sent.text
        assert (
            server.wait_for(sent.json()["id"], {"complete", "rejected", "review"})["state"]
            == "complete"
        )
        server.client.get("/metrics").raise_for_status()
        scrape = server.client.get("/metrics")
        scrape.raise_for_status()
    finally:
        server.client.close()
        stop(server.process)
    series: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(scrape.text):
        for sample in family.samples:
            series.setdefault(sample.name, []).append(dict(sample.labels))
    yield Exported(series)


# --- reading expressions --------------------------------------------------------------------------


def _dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))  # a collapsed row keeps its panels


def _variables(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    variables: list[dict[str, Any]] = dashboard.get("templating", {}).get("list", [])
    return variables


def panel_expressions(dashboard: dict[str, Any]) -> dict[str, str]:
    """Every PromQL expression of the dashboard, by where it is: panels' targets, and the
    variables whose values come from a query."""
    found = {}
    for panel in _panels(dashboard.get("panels", [])):
        for target in panel.get("targets", []):
            found[f"panel {panel.get('id')} {panel.get('title')!r} {target.get('refId')}"] = (
                target.get("expr", "")
            )
    for variable in _variables(dashboard):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        text = query.get("query", "") if isinstance(query, dict) else str(query)
        found[f"variable {variable['name']}"] = _variable_query(text)
    return found


def _variable_query(text: str) -> str:
    """A query variable as the PromQL it stands for: `label_values(m, l)` reads the series of
    `m` and needs its label `l`, written here as `group by (l) (m)`; `query_result(e)` is `e`.
    Any other form is left as is, so the checks refuse it rather than let it pass unread."""
    labels = re.fullmatch(r"\s*label_values\((.+),\s*(\w+)\s*\)\s*", text)
    if labels:
        return f"group by ({labels[2]}) ({labels[1]})"
    result = re.fullmatch(r"\s*query_result\((.+)\)\s*", text)
    return result[1] if result else text


def _substituted(expr: str, defined: set[str]) -> tuple[str, list[str]]:
    """The expression as Prometheus would receive it: Grafana's intervals become a range, the
    dashboard's own variables a placeholder. A variable the dashboard does not define is a
    problem (Grafana would send it as written)."""
    problems = []

    def replace(match: re.Match[str]) -> str:
        name = next(g for g in match.groups() if g)
        if name in GRAFANA_INTERVALS:
            return "5m"
        if name not in defined:
            problems.append(f"${name} is not a variable of the dashboard")
        return PLACEHOLDER

    return VARIABLE.sub(replace, expr), problems


def metric_names(expr: str) -> set[str]:
    """The metric names an expression reads: identifiers that are not functions (followed by
    a parenthesis), keywords, label names in groupings or matchers, strings or durations."""
    text = re.sub(STRING, '""', expr)
    text = GROUPING.sub(" ", text)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    names = set()
    for match in IDENTIFIER.finditer(text):
        if re.match(r"\s*\(", text[match.end() :]):
            continue  # a function or an aggregation
        if match[0] not in KEYWORDS:
            names.add(match[0])
    return names


def expression_problems(expr: str, exported: Exported, defined: set[str]) -> list[str]:
    """What an expression asks for that the scrape does not hold."""
    expr, problems = _substituted(expr, defined)
    names = metric_names(expr)
    if not names:
        problems.append("reads no metric")
    for name in sorted(names):
        if name not in exported.series:
            problems.append(f"{name} is not exported")
    known = set().union(*(exported.labels(n) for n in names)) | TARGET_LABELS
    for selector in SELECTOR.finditer(re.sub(r"\[[^\]]*\]", "", expr)):
        name, body = selector[1], selector[2]
        for label, op, quoted in MATCHER.findall(body):
            value = json.loads(quoted)
            if label == "__name__" or label in TARGET_LABELS:
                continue
            if name and name in exported.series and label not in exported.labels(name):
                problems.append(f"{name} has no label {label}")
                continue
            if not value or PLACEHOLDER in value or name not in exported.series:
                continue  # "" only asks whether the label is there
            seen = exported.values(name, label)
            if op in ("=", "!="):
                wanted = [value]
            elif re.fullmatch(r"[\w/{}+-]+(\|[\w/{}+-]+)*", value):
                wanted = value.split("|")  # a list of values, not a pattern
            else:
                wanted = []
            problems += [f"{name}{{{label}}} never takes {v!r}" for v in wanted if v not in seen]
    for _kind, labels in GROUPING.findall(expr):
        for label in (x.strip() for x in labels.split(",") if x.strip()):
            if label not in known:
                problems.append(f"grouping by {label}, which none of {sorted(names)} has")
    return problems


def dashboard_problems(dashboard: dict[str, Any], exported: Exported) -> list[str]:
    """Every panel queries the dashboard's Prometheus variable with expressions that read only
    exported series; panel ids are unique (Grafana keys its state on them)."""
    problems = []
    defined = {v["name"] for v in _variables(dashboard)}
    sources = [v["name"] for v in _variables(dashboard) if v.get("type") == "datasource"]
    ids = [p.get("id") for p in _panels(dashboard.get("panels", []))]
    if len(ids) != len(set(ids)) or None in ids:
        problems.append(f"panel ids must be present and unique: {ids}")
    for panel in _panels(dashboard.get("panels", [])):
        if panel.get("type") == "row":
            continue
        if not panel.get("targets"):
            problems.append(f"panel {panel.get('id')} has no query")
        for target in [panel, *panel.get("targets", [])]:
            uid = str(target.get("datasource", {}).get("uid", ""))
            if target is not panel and not target.get("expr"):
                problems.append(f"panel {panel.get('id')} {target.get('refId')}: no expr")
            if uid not in {f"${{{s}}}" for s in sources}:
                problems.append(f"panel {panel.get('id')}: datasource {uid!r}, not a variable")
    for where, expr in panel_expressions(dashboard).items():
        problems += [f"{where}: {p}" for p in expression_problems(expr, exported, defined)]
    return problems


def syntax_problems(expressions: dict[str, str], folder: Path) -> list[str]:
    """`promtool check rules` over the expressions written as recording rules."""
    rules = [
        {"record": f"pressroom:check_{i}", "expr": _substituted(expr, set(_all_names(expr)))[0]}
        for i, expr in enumerate(expressions.values())
    ]
    path = folder / "expressions.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = subprocess.run(
        [_tool("promtool"), "check", "rules", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    return [] if done.returncode == 0 else [done.stdout + done.stderr]


def _all_names(expr: str) -> Iterator[str]:
    """Every variable an expression uses (undefined ones are expression_problems' to report)."""
    for match in VARIABLE.finditer(expr):
        yield next(g for g in match.groups() if g)


# --- the adapter's external rules -----------------------------------------------------------------


def _hpa_matchers() -> str:
    """<<.LabelMatchers>> as the adapter fills it for the HPA: its selector and namespace."""
    hpa = yaml.safe_load(HPA.read_text())
    (metric,) = hpa["spec"]["metrics"]
    labels = {**metric["external"]["metric"]["selector"]["matchLabels"]}
    labels["namespace"] = hpa["metadata"]["namespace"]
    return ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))


def adapter_expressions(values: dict[str, Any]) -> dict[str, str]:
    """Each external rule's series query, and its metrics query as the adapter renders it for
    the bulk workers' HPA (external metrics group by nothing: <<.GroupBy>> is empty)."""
    found = {}
    for i, rule in enumerate(values["rules"]["external"]):
        series = rule["seriesQuery"]
        found[f"rule {i} seriesQuery"] = series
        name = re.match(r"\s*([a-zA-Z_:][\w:]*)", series)
        query = rule["metricsQuery"]
        for field, value in (
            ("Series", name[1] if name else ""),
            ("LabelMatchers", _hpa_matchers()),
            ("GroupBy", ""),
        ):
            query = re.sub(rf"<<\s*\.{field}\s*>>", value, query)
        found[f"rule {i} metricsQuery"] = query
    return found


def _adapter() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(ADAPTER.read_text())
    return loaded


# --- the files pass -------------------------------------------------------------------------------


def test_every_dashboard_expression_reads_only_what_pressroom_exports(exported: Exported) -> None:
    assert dashboard_problems(_dashboard(), exported) == []


def test_every_dashboard_expression_passes_promtool(tmp_path: Path) -> None:
    expressions = panel_expressions(_dashboard())
    assert len(expressions) >= 20
    assert syntax_problems(expressions, tmp_path) == []


def test_the_adapter_rules_read_only_what_pressroom_exports(exported: Exported) -> None:
    expressions = adapter_expressions(_adapter())
    assert expressions
    for where, expr in expressions.items():
        assert expression_problems(expr, exported, set()) == [], where


def test_the_adapter_rules_pass_promtool(tmp_path: Path) -> None:
    assert syntax_problems(adapter_expressions(_adapter()), tmp_path) == []


def test_the_dashboard_shows_what_an_operator_watches() -> None:
    """Queue depth and age per lane, throughput, stage p50/p95, failures by reason, workers and
    HTTP requests: each has a panel reading its metric."""
    exprs = " ".join(panel_expressions(_dashboard()).values())
    used = metric_names(re.sub(r"\$\w+", "5m", exprs))
    assert {
        "pressroom_jobs",
        "pressroom_queue_oldest_age_seconds",
        "pressroom_workers",
        "pressroom_job_attempts_total",
        "pressroom_stage_duration_seconds_bucket",
        "pressroom_stage_duration_seconds_count",
        "pressroom_queue_wait_seconds_bucket",
        "pressroom_dead_letters_total",
        "pressroom_retries_total",
        "pressroom_admission_refusals_total",
        "pressroom_http_request_duration_seconds_bucket",
        "pressroom_http_request_duration_seconds_count",
    } <= used
    assert "histogram_quantile(0.5," in exprs and "histogram_quantile(0.95," in exprs
    assert "sum by (reason)" in exprs


# --- and the checks reject broken copies ----------------------------------------------------------


def _first_expr_with(dashboard: dict[str, Any], text: str) -> dict[str, Any]:
    for panel in _panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            if text in target["expr"]:
                found: dict[str, Any] = target
                return found
    raise AssertionError(f"no expression has {text!r}")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("pressroom_workers", "pressroom_worker"),  # a metric that does not exist
        ("pressroom_dead_letters_total", "pressroom_dead_letters"),  # a counter without _total
        (
            "rate(pressroom_stage_duration_seconds_bucket",
            "rate(pressroom_stage_duration_seconds",  # a histogram without its suffix
        ),
        ("max(pressroom_review_jobs)", "max(up)"),  # not Pressroom's
        ('state="running"', 'state="runing"'),  # a label value never exported
        ('state="running"', 'status="running"'),  # a label the series lacks
        ("sum by (reason)", "sum by (code)"),  # grouping by a label nothing has
        ('lane=~"$lane"', 'lane=~"$lanes"'),  # a variable the dashboard lacks
        ('state=~"accepted|retrying"', 'state=~"accepted|retry"'),
    ],
)
def test_the_name_check_rejects_a_dashboard_asking_for_what_is_not_exported(
    exported: Exported, old: str, new: str
) -> None:
    dashboard = _dashboard()
    target = _first_expr_with(dashboard, old)
    target["expr"] = target["expr"].replace(old, new, 1)
    assert dashboard_problems(dashboard, exported)


def test_the_name_check_rejects_a_variable_on_a_metric_that_does_not_exist(
    exported: Exported,
) -> None:
    dashboard = _dashboard()
    (lane,) = [v for v in _variables(dashboard) if v["name"] == "lane"]
    lane["query"]["query"] = "label_values(pressroom_job, lane)"
    assert dashboard_problems(dashboard, exported)


def test_the_name_check_rejects_a_panel_on_another_datasource(exported: Exported) -> None:
    dashboard = _dashboard()
    target = _first_expr_with(dashboard, "pressroom_workers")
    target["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
    assert dashboard_problems(dashboard, exported)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("max(pressroom_review_jobs)", "max(pressroom_review_jobs"),  # unbalanced
        ("[$__rate_interval]", "[$__rate_interval"),  # an open range
        ("histogram_quantile(0.95,", "histogram_quantile(0.95"),  # a missing comma
        ("sum by (reason)", "sum by reason"),
        (
            "rate(pressroom_job_attempts_total",
            "rat(pressroom_job_attempts_total",
        ),  # no such function
    ],
)
def test_promtool_rejects_a_dashboard_with_a_syntax_error(
    tmp_path: Path, old: str, new: str
) -> None:
    dashboard = _dashboard()
    target = _first_expr_with(dashboard, old)
    target["expr"] = target["expr"].replace(old, new, 1)
    assert syntax_problems(panel_expressions(dashboard), tmp_path)


@pytest.mark.parametrize(
    ("field", "old", "new"),
    [
        ("seriesQuery", "pressroom_jobs", "pressroom_queue_depth"),  # the API name, not a series
        ("seriesQuery", "lane!=", "lanes!="),
        ("metricsQuery", 'state=~"accepted|retrying"', 'state=~"waiting"'),
        ("metricsQuery", "max by (lane, state)", "max by (lane, stage)"),
    ],
)
def test_the_name_check_rejects_adapter_rules_asking_for_what_is_not_exported(
    exported: Exported, field: str, old: str, new: str
) -> None:
    values = _adapter()
    rule = values["rules"]["external"][0]
    assert old in rule[field]
    rule[field] = rule[field].replace(old, new)
    problems = [
        p
        for expr in adapter_expressions(values).values()
        for p in expression_problems(expr, exported, set())
    ]
    assert problems


def test_promtool_rejects_an_adapter_rule_with_a_syntax_error(tmp_path: Path) -> None:
    values = copy.deepcopy(_adapter())
    rule = values["rules"]["external"][0]
    rule["metricsQuery"] = rule["metricsQuery"].replace("(<<.Series>>", "<<.Series>>", 1)
    assert syntax_problems(adapter_expressions(values), tmp_path)


def test_metric_names_are_read_from_expressions_not_from_their_words() -> None:
    """The reader the name check rests on: functions, keywords, labels, strings and ranges are
    not metrics; everything else is."""
    assert metric_names(
        'histogram_quantile(0.95, sum by (route, le) (rate(a_bucket{route!="b"}[5m])))'
        " / on (route) group_left max without (pod) (c offset 1h) > bool 1e3"
    ) == {"a_bucket", "c"}
    assert metric_names("sum(rate(x_total[5m])) by (lane) and y") == {"x_total", "y"}
