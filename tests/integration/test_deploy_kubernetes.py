"""The Kubernetes manifests, checked as far as these machines allow: no cluster runs here, so every
object is validated against the Kubernetes API's own schemas (`kubernetes-validate`, strict, at
pinned versions), and what a schema cannot see (probes, resources, grace periods, one Deployment
per lane, the autoscaler's metric, disruption budgets, secrets, the pods' privileges) is checked
by reading the files. Each checker is also shown to reject a broken copy, so a pass means
something. The probes themselves are run against a real API and real worker pools: what the
kubelet would ask answers while the process runs and fails once it stops."""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml

from tests.e2e.conftest import launch_serve, poll, stop

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
KUSTOMIZATION = "kustomization.yaml"
ADAPTER = ROOT / "deploy" / "prometheus-adapter" / "values.yaml"
# the oldest minor still served upstream when these were written, and the newest the pinned
# kubernetes-validate knows: an object must be valid on both
VERSIONS = ("1.34.0", "1.37.0")
SECRET_NAME = re.compile(r"PASSWORD|SECRET|SIGNING_KEY|MASTER_KEY$|DATABASE_URL|API_KEY")
# what every Pressroom container must be given, and where from
FROM_SECRET = {
    "PRESSROOM_DATABASE_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "PRESSROOM_SIGNING_KEY",
}
FROM_CONFIG = {"PRESSROOM_STORAGE_URL", "PRESSROOM_PUBLIC_URL"}
DEFAULT_STOP_TIMEOUT_S = 60.0  # settings.py: PRESSROOM_STOP_TIMEOUT_SECONDS
DEFAULT_WORKER_MEMORY_MB = 1536.0  # settings.py: PRESSROOM_WORKER_MEMORY_LIMIT_MB
EXIT_MARGIN_S = 10  # after the stop timeout the pool ends its processes and exits
# the fields of prometheus-adapter's DiscoveryRule (pkg/config/config.go): anything else is
# ignored by the adapter, so a typo would silently drop the rule's intent
ADAPTER_RULE_KEYS = {"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery"}


# --- loading ------------------------------------------------------------------------------------


@dataclass
class Bundle:
    """What `kubectl apply -k deploy/kubernetes/` applies, with the adapter's rules beside it."""

    objects: list[dict[str, Any]]
    kustomization: dict[str, Any]
    adapter: dict[str, Any]


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _bundle() -> Bundle:
    objects = [
        doc
        for path in sorted(KUBE.iterdir())
        if path.name != KUSTOMIZATION
        for doc in _documents(path)
    ]
    (kustomization,) = _documents(KUBE / KUSTOMIZATION)
    return Bundle(objects, kustomization, yaml.safe_load(ADAPTER.read_text()))


def _of_kind(bundle: Bundle, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in bundle.objects if o.get("kind") == kind}


def _deployments(bundle: Bundle) -> dict[str, dict[str, Any]]:
    return _of_kind(bundle, "Deployment")


def _pod_templates(bundle: Bundle) -> dict[str, dict[str, Any]]:
    """Every workload's pod template (Deployments and the migration Job), by workload."""
    return {
        f"{o['kind']}/{o['metadata']['name']}": o["spec"]["template"]
        for o in bundle.objects
        if o.get("kind") in ("Deployment", "Job")
    }


def _containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    spec = template["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def _args(container: dict[str, Any]) -> list[str]:
    return [str(a) for a in [*container.get("command", []), *container.get("args", [])]]


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def _lane(deployment: dict[str, Any]) -> str | None:
    args = _args(deployment["spec"]["template"]["spec"]["containers"][0])
    return _flag(args, "--lane") if args[:1] == ["worker"] else None


def _workers(bundle: Bundle) -> dict[str, dict[str, Any]]:
    return {name: d for name, d in _deployments(bundle).items() if _lane(d) is not None}


def _env(bundle: Bundle, container: dict[str, Any]) -> dict[str, Any]:
    """The container's environment as Kubernetes builds it: ConfigMaps named in envFrom, then
    `env` on top. A value from a Secret stays as its reference."""
    configs = _of_kind(bundle, "ConfigMap")
    env: dict[str, Any] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(configs.get(source["configMapRef"]["name"], {}).get("data", {}))
    for item in container.get("env", []):
        env[item["name"]] = item.get("value", item.get("valueFrom"))
    return env


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """matchLabels and matchExpressions, as the API server reads them."""
    if not selector:
        return False
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and labels.get(key) in values)
            or (op == "Exists" and key not in labels)
            or (op == "DoesNotExist" and key in labels)
        ):
            return False
    return True


UNITS = {
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def _quantity(value: object) -> float:
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value))
    assert match and match[2] in ("", *UNITS), f"not a quantity: {value!r}"
    return float(match[1]) * UNITS.get(match[2], 1.0)


def _seconds(value: object) -> float:
    return float(str(value))


# --- the checkers: each returns what is wrong, [] when nothing is ------------------------------


def schema_problems(bundle: Bundle) -> list[str]:
    """Every object against the API's schema of its kind, strict (no unknown field), at each
    pinned version. A kind with no schema (a CRD, a typo) is a problem, not a warning."""
    problems = []
    for obj in bundle.objects:
        for version in VERSIONS:
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                where = ".".join(map(str, e.path))
                problems.append(f"{obj.get('kind')}/{_name(obj)} @{version}: {where}: {e.message}")
            except kubernetes_validate.SchemaNotFoundError as e:
                problems.append(f"{_name(obj)} @{version}: {e.message}")
    return problems


def _name(obj: dict[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("name"))


def folder_problems(folder: Path) -> list[str]:
    """The folder holds Kubernetes objects only (and the kustomization that lists them all), so
    `kubectl apply -k` applies exactly what is there and `kubectl apply -f` finds no strays."""
    problems = []
    listed = set()
    for path in sorted(folder.iterdir()):
        if path.suffix != ".yaml" or not path.is_file():
            problems.append(f"{path.name}: not a YAML manifest")
            continue
        try:
            docs = _documents(path)
        except yaml.YAMLError as e:
            problems.append(f"{path.name}: {e}")
            continue
        if path.name == KUSTOMIZATION:
            (kustomization,) = docs
            if kustomization.get("kind") != "Kustomization":
                problems.append(f"{path.name}: not a Kustomization")
            listed = set(kustomization.get("resources", []))
            continue
        if not docs:
            problems.append(f"{path.name}: empty")
        for doc in docs:
            if not isinstance(doc, dict) or not {"apiVersion", "kind", "metadata"} <= set(doc):
                problems.append(
                    f"{path.name}: not a Kubernetes object (apiVersion, kind, metadata)"
                )
                continue
            try:
                kubernetes_validate.validate(doc, VERSIONS[-1], strict=True)
            except kubernetes_validate.SchemaNotFoundError:
                problems.append(f"{path.name}: {doc['kind']} is not a Kubernetes kind")
            except kubernetes_validate.ValidationError:
                pass  # schema_problems reports those
    files = {p.name for p in folder.iterdir()} - {KUSTOMIZATION}
    if listed != files:
        problems.append(f"kustomization resources {sorted(listed)} != files {sorted(files)}")
    return problems


def api_problems(bundle: Bundle) -> list[str]:
    """The API runs `serve` alone, is probed on /healthz (alive) and /readyz (ready) on its
    own port, and a Service sends traffic to it alone."""
    problems = []
    apis = [d for d in _deployments(bundle).values() if _lane(d) is None]
    if len(apis) != 1:
        return [f"expected one API Deployment, found {[_name(d) for d in apis]}"]
    (api,) = apis
    (container,) = api["spec"]["template"]["spec"]["containers"]
    args = _args(container)
    if args[:1] != ["serve"] or _flag(args, "--workers") != "0":
        problems.append(f"the API must run `serve --workers 0` (the API alone): {args}")
    if _flag(args, "--host") != "0.0.0.0":
        problems.append("the API must listen on every address of the pod")
    port = _flag(args, "--port")
    listening = int(port) if port and port.isdigit() else None
    ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    if listening not in ports.values():
        problems.append(f"--port {port} is not a declared container port {ports}")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path:
            problems.append(f"{probe} must GET {path}: {get}")
        elif ports.get(get.get("port"), get.get("port")) != listening:
            problems.append(f"{probe} asks port {get.get('port')}, the API listens on {port}")
    labels = api["spec"]["template"]["metadata"]["labels"]
    services = [s for s in _of_kind(bundle, "Service").values() if s["spec"].get("selector")]
    serving = [s for s in services if _matches({"matchLabels": s["spec"]["selector"]}, labels)]
    if len(serving) != 1:
        problems.append(f"one Service must select the API pods: {[_name(s) for s in serving]}")
    for service in serving:
        for p in service["spec"]["ports"]:
            target = p.get("targetPort", p["port"])
            if ports.get(target, target) != listening:
                problems.append(f"Service {_name(service)} sends to {target}, not {port}")
    for name, template in _pod_templates(bundle).items():
        if name != f"Deployment/{_name(api)}" and any(
            _matches({"matchLabels": s["spec"]["selector"]}, template["metadata"]["labels"])
            for s in services
        ):
            problems.append(f"a Service would send requests to {name}, which serves no HTTP")
    return problems


def lane_problems(bundle: Bundle) -> list[str]:
    """One worker Deployment per lane, each probed by `pressroom worker --check` on its own
    lane (a pool whose lane lost every process is not alive)."""
    problems = []
    lanes = [_lane(d) for d in _workers(bundle).values()]
    if sorted(lanes, key=str) != ["bulk", "interactive"]:
        problems.append(f"one worker Deployment per lane, found lanes {lanes}")
    for name, deployment in _workers(bundle).items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        concurrency = _flag(_args(container), "--concurrency")
        if concurrency is None or not concurrency.isdigit() or int(concurrency) < 1:
            problems.append(f"{name}: --concurrency {concurrency}")
        wanted = ["pressroom", "worker", "--check", "--lane", _lane(deployment)]
        for probe in ("startupProbe", "livenessProbe"):
            check = container.get(probe, {}).get("exec", {}).get("command")
            if check != wanted and (check or probe == "livenessProbe"):
                problems.append(f"{name}: {probe} must run {' '.join(map(str, wanted))}: {check}")
        if container.get("ports") or container.get("readinessProbe"):
            problems.append(f"{name}: workers serve no HTTP")
    return problems


def probe_and_resource_problems(bundle: Bundle) -> list[str]:
    """Every long-running container is probed, and every container asks for what it needs and
    is held to a limit (requests no larger than limits)."""
    problems = []
    for name, template in _pod_templates(bundle).items():
        for container in _containers(template):
            where = f"{name}/{container['name']}"
            if name.startswith("Deployment/") and "livenessProbe" not in container:
                problems.append(f"{where}: no liveness probe")
            resources = container.get("resources", {})
            for resource in ("cpu", "memory"):
                request = resources.get("requests", {}).get(resource)
                limit = resources.get("limits", {}).get(resource)
                if request is None or limit is None:
                    problems.append(f"{where}: {resource} needs a request and a limit")
                elif _quantity(request) > _quantity(limit):
                    problems.append(f"{where}: {resource} request {request} > limit {limit}")
    return problems


def worker_sizing_problems(bundle: Bundle) -> list[str]:
    """A worker pod's memory limit holds every worker process at Pressroom's own per-process
    limit (else the kernel kills the pod before the watchdog stops the job), and its CPU
    request covers one core per process."""
    problems = []
    for name, deployment in _workers(bundle).items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        concurrency = int(_flag(_args(container), "--concurrency") or 1)
        env = _env(bundle, container)
        per_process = float(env.get("PRESSROOM_WORKER_MEMORY_LIMIT_MB", DEFAULT_WORKER_MEMORY_MB))
        resources = container.get("resources", {})
        limit = _quantity(resources.get("limits", {}).get("memory", 0))
        if limit < concurrency * per_process * 2**20:
            problems.append(
                f"{name}: memory limit {limit / 2**20:.0f} MiB < {concurrency} x {per_process} MiB"
            )
        cpu = _quantity(resources.get("requests", {}).get("cpu", 0))
        if cpu < concurrency:
            problems.append(f"{name}: cpu request {cpu} < {concurrency} worker processes")
    return problems


def grace_problems(bundle: Bundle) -> list[str]:
    """The pod's grace period outlasts the workers' stop timeout (running jobs finish), with a
    margin for the pool to end its processes; else the kubelet kills jobs mid-page."""
    problems = []
    for name, deployment in _workers(bundle).items():
        spec = deployment["spec"]["template"]["spec"]
        grace = float(spec.get("terminationGracePeriodSeconds", 30))
        for container in spec["containers"]:
            raw = _env(bundle, container).get("PRESSROOM_STOP_TIMEOUT_SECONDS")
            if raw is not None and not isinstance(raw, str):
                problems.append(f"{name}: the stop timeout must be written in the files")
                continue
            stop = DEFAULT_STOP_TIMEOUT_S if raw is None else _seconds(raw)
            if grace < stop + EXIT_MARGIN_S:
                problems.append(f"{name}: grace {grace:.0f} s < stop timeout {stop:.0f} s + 10 s")
    return problems


def selector_problems(bundle: Bundle) -> list[str]:
    """Each workload's selector takes its own pods and no other workload's (a shared selector
    makes two Deployments fight over pods; a spread over another role's pods spreads the wrong
    thing), and each Deployment has one disruption budget
    that matches its pods alone and still lets a drain evict one pod."""
    problems = []
    templates = _pod_templates(bundle)
    for obj in bundle.objects:
        if obj.get("kind") != "Deployment":
            continue
        name = f"Deployment/{_name(obj)}"
        selector = obj["spec"]["selector"]
        spread = [
            c["labelSelector"]
            for c in obj["spec"]["template"]["spec"].get("topologySpreadConstraints", [])
        ]
        for other, template in templates.items():
            labels = template["metadata"].get("labels", {})
            if _matches(selector, labels) != (other == name):
                problems.append(f"{name}'s selector and {other}'s pods")
            if any(_matches(s, labels) != (other == name) for s in spread):
                problems.append(f"{name} spreads its pods by a selector over {other}'s")
    hpas = {
        h["spec"]["scaleTargetRef"]["name"]: h
        for h in _of_kind(bundle, "HorizontalPodAutoscaler").values()
    }
    budgets = list(_of_kind(bundle, "PodDisruptionBudget").values())
    for budget in budgets:
        covered = [
            n
            for n, t in templates.items()
            if _matches(budget["spec"]["selector"], t["metadata"].get("labels", {}))
        ]
        if len(covered) != 1 or not covered[0].startswith("Deployment/"):
            problems.append(f"PDB {_name(budget)} matches {covered}, not one Deployment")
    for deployment in _deployments(bundle).values():
        labels = deployment["spec"]["template"]["metadata"].get("labels", {})
        mine = [b for b in budgets if _matches(b["spec"]["selector"], labels)]
        if len(mine) != 1:
            problems.append(f"{_name(deployment)}: {len(mine)} disruption budgets, not one")
            continue
        spec = mine[0]["spec"]
        hpa = hpas.get(_name(deployment))
        replicas = (
            hpa["spec"].get("minReplicas", 1) if hpa else deployment["spec"].get("replicas", 1)
        )
        if "maxUnavailable" in spec:
            allowed = _quantity(str(spec["maxUnavailable"]).rstrip("%")) >= 1
        else:
            allowed = int(spec.get("minAvailable", replicas)) < replicas
        if not allowed or replicas < 2:
            problems.append(f"{_name(deployment)}: its budget never lets a drain evict a pod")
    return problems


def autoscaler_problems(bundle: Bundle) -> list[str]:
    """The bulk workers, and they alone, are scaled on an External metric that the adapter's
    rules expose, selected to the bulk lane; the Deployment leaves its replica count to the
    autoscaler (else every apply would reset it)."""
    problems = []
    hpas = list(_of_kind(bundle, "HorizontalPodAutoscaler").values())
    exposed = {
        rule.get("name", {}).get("as"): rule
        for rule in bundle.adapter.get("rules", {}).get("external", [])
    }
    if len(hpas) != 1:
        return [f"expected one HorizontalPodAutoscaler, found {len(hpas)}"]
    (hpa,) = hpas
    target = hpa["spec"]["scaleTargetRef"]
    deployment = _deployments(bundle).get(target["name"])
    if target.get("kind") != "Deployment" or target.get("apiVersion") != "apps/v1":
        problems.append(f"the HPA targets {target}")
    if deployment is None or _lane(deployment) != "bulk":
        problems.append(f"the HPA must target the bulk workers, not {target['name']}")
    elif "replicas" in deployment["spec"]:
        problems.append(f"{target['name']} sets replicas: the HPA owns them")
    if not 1 <= hpa["spec"].get("minReplicas", 1) <= hpa["spec"]["maxReplicas"]:
        problems.append("minReplicas/maxReplicas out of order")
    metrics = hpa["spec"].get("metrics", [])
    if not metrics:
        problems.append("the HPA names no metric")
    for metric in metrics:
        if metric.get("type") != "External":
            problems.append(f"a {metric.get('type')} metric: queue depth is External")
            continue
        name = metric["external"]["metric"]["name"]
        if name not in exposed:
            problems.append(f"{name} is not exposed by the adapter's rules {sorted(exposed)}")
        selector = metric["external"]["metric"].get("selector", {}).get("matchLabels", {})
        if selector != {"lane": "bulk"}:
            problems.append(f"{name} must be selected to the bulk lane: {selector}")
        if metric["external"]["target"].get("type") != "AverageValue":
            problems.append(f"{name}: a queue is shared work, its target an AverageValue per pod")
    return problems


def adapter_problems(bundle: Bundle) -> list[str]:
    """The adapter's external rules use only the fields it reads, name the series they read,
    and pass the HPA's selector and namespace into the query (<<.LabelMatchers>>)."""
    problems = []
    rules = bundle.adapter.get("rules", {}).get("external", [])
    if not rules:
        return ["no external rule in the adapter's values"]
    for rule in rules:
        if set(rule) - ADAPTER_RULE_KEYS:
            problems.append(f"fields the adapter ignores: {sorted(set(rule) - ADAPTER_RULE_KEYS)}")
        series = re.match(r"\s*([a-zA-Z_:][\w:]*)", rule.get("seriesQuery", ""))
        pattern = rule.get("name", {}).get("matches", "")
        if series is None or not re.fullmatch(pattern, series[1]):
            problems.append(f"name.matches {pattern!r} does not match the series of the rule")
        query = rule.get("metricsQuery", "")
        for part in ("<<.Series>>", "<<.LabelMatchers>>"):
            if part not in query:
                problems.append(f"metricsQuery lacks {part}: {query}")
        overrides = rule.get("resources", {}).get("overrides", {})
        if overrides.get("namespace", {}).get("resource") != "namespace":
            problems.append("the rule must map the namespace label (the HPA's namespace)")
    return problems


def image_problems(bundle: Bundle) -> list[str]:
    """One image for every role, pinned to this release (the kustomization says where it is
    pulled from), never a floating tag."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    images = {c["image"] for t in _pod_templates(bundle).values() for c in _containers(t)}
    problems = []
    if len(images) != 1:
        problems.append(f"every Pressroom container runs one image, found {sorted(images)}")
    for image in images:
        name, _, tag = image.partition(":")
        if tag != version:
            problems.append(f"{image}: not pinned to this release ({version})")
        listed = [i for i in bundle.kustomization.get("images", []) if i.get("name") == name]
        if len(listed) != 1 or str(listed[0].get("newTag", tag)) != tag:
            problems.append(f"{image}: the kustomization's images entry must keep its tag")
    return problems


def privilege_problems(bundle: Bundle) -> list[str]:
    """Pods run as a non-root user under the restricted Pod Security Standard, with a
    read-only root file system; everything Pressroom writes (scratch, the data dir, /tmp) is
    an emptyDir."""
    problems = []
    for name, template in _pod_templates(bundle).items():
        spec = template["spec"]
        pod = spec.get("securityContext", {})
        if pod.get("runAsNonRoot") is not True or pod.get("runAsUser", 0) == 0:
            problems.append(f"{name}: not runAsNonRoot with a non-zero runAsUser")
        if pod.get("seccompProfile", {}).get("type") != "RuntimeDefault":
            problems.append(f"{name}: seccompProfile RuntimeDefault")
        if spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC"):
            problems.append(f"{name}: shares a host namespace")
        empty = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
        if any(
            set(v) - {"name", "emptyDir", "configMap", "secret", "projected"}
            for v in spec.get("volumes", [])
        ):
            problems.append(f"{name}: a volume type the restricted profile refuses")
        for container in _containers(template):
            where = f"{name}/{container['name']}"
            ctx = container.get("securityContext", {})
            if ctx.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{where}: allowPrivilegeEscalation must be false")
            if ctx.get("readOnlyRootFilesystem") is not True:
                problems.append(f"{where}: readOnlyRootFilesystem must be true")
            if ctx.get("capabilities", {}).get("drop") != ["ALL"] or ctx.get(
                "capabilities", {}
            ).get("add"):
                problems.append(f"{where}: capabilities must drop ALL and add none")
            if ctx.get("privileged") or ctx.get("runAsUser") == 0:
                problems.append(f"{where}: privileged or root")
            env = _env(bundle, container)
            mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
            for variable, default in (
                ("PRESSROOM_SCRATCH_DIR", None),
                ("PRESSROOM_DATA_DIR", None),
                ("TMPDIR", "/tmp"),
            ):
                path = env.get(variable, default)
                if not isinstance(path, str) or mounts.get(path) not in empty:
                    problems.append(f"{where}: {variable} ({path}) is not on an emptyDir")
    return problems


def secret_problems(bundle: Bundle) -> list[str]:
    """No secret is written in the files: secrets come from the Secret `pressroom-secrets`
    (created by the operator), the rest from the ConfigMap, and S3 is the blob store."""
    problems = []
    if _of_kind(bundle, "Secret"):
        problems.append("a Secret is written in the files")
    for config in _of_kind(bundle, "ConfigMap").values():
        for key in config.get("data", {}):
            if SECRET_NAME.search(key):
                problems.append(f"ConfigMap {_name(config)} holds {key}")
    for name, template in _pod_templates(bundle).items():
        for container in _containers(template):
            where = f"{name}/{container['name']}"
            for item in container.get("env", []):
                if SECRET_NAME.search(item["name"]) and "secretKeyRef" not in item.get(
                    "valueFrom", {}
                ):
                    problems.append(f"{where}: {item['name']} is not from a Secret")
            env = _env(bundle, container)
            for variable in FROM_SECRET:
                ref = env.get(variable)
                if not isinstance(ref, dict) or "secretKeyRef" not in ref:
                    problems.append(f"{where}: {variable} must come from a Secret")
            for variable in FROM_CONFIG:
                if not isinstance(env.get(variable), str) or not env[variable]:
                    problems.append(f"{where}: {variable} must be configured")
            if not str(env.get("PRESSROOM_STORAGE_URL", "")).startswith("s3://"):
                problems.append(f"{where}: PRESSROOM_STORAGE_URL must be s3://…")
    return problems


def migration_problems(bundle: Bundle) -> list[str]:
    """A Job runs `pressroom db upgrade` once, with retries, and never restarts forever."""
    jobs = list(_of_kind(bundle, "Job").values())
    upgrades = [
        j
        for j in jobs
        if any(_args(c) == ["db", "upgrade"] for c in _containers(j["spec"]["template"]))
    ]
    if len(upgrades) != 1:
        return [f"expected one Job running `pressroom db upgrade`, found {len(upgrades)}"]
    (job,) = upgrades
    problems = []
    if job["spec"]["template"]["spec"].get("restartPolicy") not in ("Never", "OnFailure"):
        problems.append("a Job's pods must not restart Always")
    if not 0 < job["spec"].get("backoffLimit", 6) <= 10:
        problems.append("backoffLimit")
    if "activeDeadlineSeconds" not in job["spec"]:
        problems.append("a migration that hangs must end: activeDeadlineSeconds")
    return problems


CHECKS: dict[str, Callable[[Bundle], list[str]]] = {
    "schema": schema_problems,
    "api": api_problems,
    "lanes": lane_problems,
    "probes-resources": probe_and_resource_problems,
    "worker-sizing": worker_sizing_problems,
    "grace": grace_problems,
    "selectors-pdb": selector_problems,
    "autoscaler": autoscaler_problems,
    "adapter": adapter_problems,
    "image": image_problems,
    "privileges": privilege_problems,
    "secrets": secret_problems,
    "migration": migration_problems,
}


# --- the manifests pass ------------------------------------------------------------------------


def test_the_folder_holds_only_kubernetes_objects_all_listed_for_kustomize() -> None:
    assert folder_problems(KUBE) == []
    kinds = {o["kind"] for o in _bundle().objects}
    assert {
        "Deployment",
        "Service",
        "Job",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "ConfigMap",
    } <= kinds


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_the_manifests_pass(check: str) -> None:
    assert CHECKS[check](_bundle()) == []


# --- and each checker rejects a broken copy ------------------------------------------------------


def _deployment(bundle: Bundle, name: str) -> dict[str, Any]:
    return _deployments(bundle)[name]


def _container(bundle: Bundle, name: str) -> dict[str, Any]:
    return _deployment(bundle, name)["spec"]["template"]["spec"]["containers"][0]


def _set_env(bundle: Bundle, name: str, variable: str, value: object) -> None:
    env = _container(bundle, name).setdefault("env", [])
    env[:] = [e for e in env if e["name"] != variable]
    env.append({"name": variable, **({"value": value} if isinstance(value, str) else value)})


def _args_of(bundle: Bundle, name: str) -> list[str]:
    args: list[str] = _container(bundle, name)["args"]
    return args


API = "pressroom-api"
BULK = "pressroom-worker-bulk"
INTERACTIVE = "pressroom-worker-interactive"


def _hpa(bundle: Bundle) -> dict[str, Any]:
    (hpa,) = _of_kind(bundle, "HorizontalPodAutoscaler").values()
    return hpa


def _pdb(bundle: Bundle, name: str) -> dict[str, Any]:
    return _of_kind(bundle, "PodDisruptionBudget")[name]


def _job_container(bundle: Bundle) -> dict[str, Any]:
    (job,) = _of_kind(bundle, "Job").values()
    container: dict[str, Any] = job["spec"]["template"]["spec"]["containers"][0]
    return container


BROKEN: list[tuple[str, str, Callable[[Bundle], object]]] = [
    # the schema: a typo'd field, a wrong type, a value of the wrong shape, an unknown kind
    ("schema", "typo'd resources", lambda b: _container(b, API).update(resoures={})),
    ("schema", "replicas as text", lambda b: _deployment(b, API)["spec"].update(replicas="two")),
    (
        "schema",
        "a probe port as a list",
        lambda b: _container(b, API)["livenessProbe"]["httpGet"].update(port=[8080]),
    ),
    ("schema", "typo'd PDB field", lambda b: _pdb(b, API)["spec"].update(minAvailabel=1)),
    ("schema", "a kind that does not exist", lambda b: _hpa(b).update(kind="HorizontalScaler")),
    # the API
    ("api", "the API runs workers", lambda b: _args_of(b, API).__setitem__(-1, "2")),
    (
        "api",
        "readiness on /healthz",
        lambda b: _container(b, API)["readinessProbe"]["httpGet"].update(path="/healthz"),
    ),
    ("api", "no liveness probe", lambda b: _container(b, API).pop("livenessProbe")),
    (
        "api",
        "a probe on another port",
        lambda b: _container(b, API)["readinessProbe"]["httpGet"].update(port=9090),
    ),
    (
        "api",
        "the Service selects every Pressroom pod",
        lambda b: _of_kind(b, "Service")[API]["spec"]["selector"].pop(
            "app.kubernetes.io/component"
        ),
    ),
    # lanes
    (
        "lanes",
        "both Deployments on bulk",
        lambda b: _args_of(b, INTERACTIVE).__setitem__(2, "bulk"),
    ),
    ("lanes", "a lane with no Deployment", lambda b: b.objects.remove(_deployment(b, INTERACTIVE))),
    (
        "lanes",
        "a probe on the other lane",
        lambda b: _container(b, INTERACTIVE)["startupProbe"]["exec"]["command"].__setitem__(
            -1, "bulk"
        ),
    ),
    (
        "lanes",
        "a liveness probe that checks nothing",
        lambda b: _container(b, BULK)["livenessProbe"]["exec"].update(command=["true"]),
    ),
    ("lanes", "no concurrency", lambda b: _args_of(b, BULK).__setitem__(-1, "0")),
    # probes and resources
    ("probes-resources", "a worker not probed", lambda b: _container(b, BULK).pop("livenessProbe")),
    (
        "probes-resources",
        "no memory limit",
        lambda b: _container(b, INTERACTIVE)["resources"]["limits"].pop("memory"),
    ),
    (
        "probes-resources",
        "a request above its limit",
        lambda b: _container(b, API)["resources"]["requests"].update(cpu="3"),
    ),
    (
        "probes-resources",
        "the migration without resources",
        lambda b: _job_container(b).pop("resources"),
    ),
    # worker sizing
    (
        "worker-sizing",
        "more processes than memory",
        lambda b: _args_of(b, BULK).__setitem__(-1, "4"),
    ),
    (
        "worker-sizing",
        "a bigger per-process limit",
        lambda b: _set_env(b, INTERACTIVE, "PRESSROOM_WORKER_MEMORY_LIMIT_MB", "4096"),
    ),
    # grace periods
    (
        "grace",
        "a grace period shorter than the stop timeout",
        lambda b: _deployment(b, INTERACTIVE)["spec"]["template"]["spec"].update(
            terminationGracePeriodSeconds=100
        ),
    ),
    (
        "grace",
        "a stop timeout longer than the grace period",
        lambda b: _set_env(b, BULK, "PRESSROOM_STOP_TIMEOUT_SECONDS", "600"),
    ),
    (
        "grace",
        "the default grace period",
        lambda b: _deployment(b, BULK)["spec"]["template"]["spec"].pop(
            "terminationGracePeriodSeconds"
        ),
    ),
    # selectors and budgets
    (
        "selectors-pdb",
        "a budget over every Pressroom pod",
        lambda b: _pdb(b, BULK)["spec"]["selector"]["matchLabels"].pop(
            "app.kubernetes.io/component"
        ),
    ),
    (
        "selectors-pdb",
        "a budget that matches nothing",
        lambda b: _pdb(b, INTERACTIVE)["spec"]["selector"]["matchLabels"].update(
            {"app.kubernetes.io/component": "worker"}
        ),
    ),
    (
        "selectors-pdb",
        "a budget that blocks every drain",
        lambda b: _pdb(b, API)["spec"].update(maxUnavailable=0),
    ),
    (
        "selectors-pdb",
        "minAvailable equal to replicas",
        lambda b: _pdb(b, INTERACTIVE).update(
            spec={"minAvailable": 2, "selector": _pdb(b, INTERACTIVE)["spec"]["selector"]}
        ),
    ),
    (
        "selectors-pdb",
        "a Deployment selecting another's pods",
        lambda b: _deployment(b, BULK)["spec"]["selector"]["matchLabels"].pop(
            "app.kubernetes.io/component"
        ),
    ),
    (
        "selectors-pdb",
        "pods spread by a selector over every Pressroom pod",
        lambda b: _deployment(b, API)["spec"]["template"]["spec"]["topologySpreadConstraints"][0][
            "labelSelector"
        ]["matchLabels"].pop("app.kubernetes.io/component"),
    ),
    # the autoscaler
    (
        "autoscaler",
        "scaling the interactive workers",
        lambda b: _hpa(b)["spec"]["scaleTargetRef"].update(name=INTERACTIVE),
    ),
    (
        "autoscaler",
        "a metric the adapter does not expose",
        lambda b: _hpa(b)["spec"]["metrics"][0]["external"]["metric"].update(name="queue_depth"),
    ),
    (
        "autoscaler",
        "the adapter renames its metric",
        lambda b: b.adapter["rules"]["external"][0]["name"].update({"as": "pressroom_queue"}),
    ),
    (
        "autoscaler",
        "a Pods metric instead",
        lambda b: _hpa(b)["spec"]["metrics"][0].update(type="Pods"),
    ),
    (
        "autoscaler",
        "the queue of every lane",
        lambda b: _hpa(b)["spec"]["metrics"][0]["external"]["metric"].pop("selector"),
    ),
    (
        "autoscaler",
        "replicas fixed beside the HPA",
        lambda b: _deployment(b, BULK)["spec"].update(replicas=3),
    ),
    # the adapter's rules
    (
        "adapter",
        "a typo'd field",
        lambda b: b.adapter["rules"]["external"][0].update(
            metricQuery=b.adapter["rules"]["external"][0].pop("metricsQuery")
        ),
    ),
    (
        "adapter",
        "the HPA's selector dropped",
        lambda b: b.adapter["rules"]["external"][0].update(
            metricsQuery='sum(<<.Series>>{lane="bulk"})'
        ),
    ),
    (
        "adapter",
        "a name pattern for another series",
        lambda b: b.adapter["rules"]["external"][0]["name"].update(matches="^pressroom_job$"),
    ),
    # the image
    (
        "image",
        "a worker on another image",
        lambda b: _container(b, BULK).update(image="pressroom:latest"),
    ),
    (
        "image",
        "every image floating",
        lambda b: [
            c.update(image="pressroom:latest")
            for t in _pod_templates(b).values()
            for c in _containers(t)
        ],
    ),
    (
        "image",
        "the kustomization retags it",
        lambda b: b.kustomization["images"][0].update(newTag="latest"),
    ),
    # privileges
    (
        "privileges",
        "root",
        lambda b: _deployment(b, API)["spec"]["template"]["spec"]["securityContext"].update(
            runAsUser=0
        ),
    ),
    (
        "privileges",
        "a writable root file system",
        lambda b: _container(b, BULK)["securityContext"].update(readOnlyRootFilesystem=False),
    ),
    (
        "privileges",
        "scratch on the root file system",
        lambda b: _container(b, INTERACTIVE).update(
            volumeMounts=[
                m for m in _container(b, INTERACTIVE)["volumeMounts"] if m["name"] != "scratch"
            ]
        ),
    ),
    (
        "privileges",
        "scratch on the node's disk",
        lambda b: _deployment(b, BULK)["spec"]["template"]["spec"]["volumes"].__setitem__(
            0, {"name": "scratch", "hostPath": {"path": "/var/tmp"}}
        ),
    ),
    (
        "privileges",
        "capabilities kept",
        lambda b: _job_container(b)["securityContext"].pop("capabilities"),
    ),
    # secrets
    (
        "secrets",
        "a signing key written in the file",
        lambda b: _set_env(b, API, "PRESSROOM_SIGNING_KEY", "x" * 40),
    ),
    (
        "secrets",
        "a database URL in the ConfigMap",
        lambda b: _of_kind(b, "ConfigMap")["pressroom-config"]["data"].update(
            PRESSROOM_DATABASE_URL="postgresql://pressroom:hunter2@db/pressroom"
        ),
    ),
    (
        "secrets",
        "a Secret object with its data",
        lambda b: b.objects.append(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}
        ),
    ),
    (
        "secrets",
        "local disk instead of S3",
        lambda b: _of_kind(b, "ConfigMap")["pressroom-config"]["data"].update(
            PRESSROOM_STORAGE_URL="/srv/pressroom/data/blobs"
        ),
    ),
    (
        "secrets",
        "no public URL",
        lambda b: _of_kind(b, "ConfigMap")["pressroom-config"]["data"].pop("PRESSROOM_PUBLIC_URL"),
    ),
    # the migration
    (
        "migration",
        "no migration Job",
        lambda b: b.objects.remove(next(o for o in b.objects if o["kind"] == "Job")),
    ),
    (
        "migration",
        "a Job that runs something else",
        lambda b: _job_container(b).update(args=["db", "upgrde"]),
    ),
    (
        "migration",
        "a migration that may hang forever",
        lambda b: next(o for o in b.objects if o["kind"] == "Job")["spec"].pop(
            "activeDeadlineSeconds"
        ),
    ),
]


@pytest.mark.parametrize(
    ("check", "breaks"), [(c, f) for c, _w, f in BROKEN], ids=[f"{c}: {w}" for c, w, _f in BROKEN]
)
def test_each_checker_rejects_a_broken_copy(check: str, breaks: Callable[[Bundle], object]) -> None:
    bundle = _bundle()
    before = copy.deepcopy(bundle)
    breaks(bundle)
    assert bundle != before, "the mutation changed nothing"
    assert CHECKS[check](bundle)


def test_every_checker_is_shown_to_reject_something() -> None:
    assert {c for c, _w, _f in BROKEN} == set(CHECKS)


@pytest.fixture
def folder_copy(tmp_path: Path) -> Iterator[Path]:
    copied = tmp_path / "kubernetes"
    shutil.copytree(KUBE, copied)
    assert folder_problems(copied) == []
    yield copied


def test_the_folder_check_rejects_helm_values_among_the_objects(folder_copy: Path) -> None:
    shutil.copy(ADAPTER, folder_copy / "values.yaml")
    assert folder_problems(folder_copy)


def test_the_folder_check_rejects_a_file_kustomize_would_not_apply(folder_copy: Path) -> None:
    (folder_copy / "extra.yaml").write_text((KUBE / "pdb.yaml").read_text())
    assert folder_problems(folder_copy)


def test_the_folder_check_rejects_notes_and_custom_resources(folder_copy: Path) -> None:
    (folder_copy / "README.md").write_text("# notes\n")
    assert folder_problems(folder_copy)
    (folder_copy / "README.md").unlink()
    monitor = folder_copy / "servicemonitor.yaml"
    monitor.write_text(
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\n"
    )
    kustomization = yaml.safe_load((folder_copy / KUSTOMIZATION).read_text())
    kustomization["resources"].append(monitor.name)
    (folder_copy / KUSTOMIZATION).write_text(yaml.safe_dump(kustomization))
    assert folder_problems(folder_copy) == [
        "servicemonitor.yaml: ServiceMonitor is not a Kubernetes kind"
    ]


# --- the probes, run for real ------------------------------------------------------------------


def _probe_env(tmp_path: Path) -> dict[str, str]:
    """One host's environment on SQLite, with the CLI first on PATH as in the image."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PRESSROOM_DATABASE_URL", "PRESSROOM_STORAGE_URL")
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRESSROOM_DATA_DIR"] = str(tmp_path / "data")
    env["PRESSROOM_SCRATCH_DIR"] = str(tmp_path / "scratch")
    env["PRESSROOM_STOP_TIMEOUT_SECONDS"] = "5"
    return env


def _exec(command: list[str], env: dict[str, str]) -> int:
    """An exec probe as the kubelet runs it: the command, its exit status."""
    return subprocess.run(command, env=env, capture_output=True, timeout=60, check=False).returncode


def test_the_api_probes_answer_on_a_running_api_alone(tmp_path: Path) -> None:
    (container,) = _deployment(_bundle(), API)["spec"]["template"]["spec"]["containers"]
    probes = [container[k] for k in ("startupProbe", "livenessProbe", "readinessProbe")]
    paths = {probe["httpGet"]["path"] for probe in probes}
    assert paths == {"/healthz", "/readyz"}
    server = launch_serve(tmp_path, workers=0, interactive=0)
    try:
        for path in sorted(paths):
            assert httpx.get(f"{server.url}{path}", timeout=10).status_code == 200, path
        # a probe on a path the API lacks would fail: the answers above mean something
        assert httpx.get(f"{server.url}/ready", timeout=10).status_code == 404
    finally:
        server.client.close()
        stop(server.process)


@pytest.mark.parametrize("lane", ["bulk", "interactive"])
def test_the_worker_probe_passes_while_its_pool_runs_and_fails_once_it_stops(
    tmp_path: Path, lane: str
) -> None:
    bundle = _bundle()
    (deployment,) = [d for d in _workers(bundle).values() if _lane(d) == lane]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    probe = container["livenessProbe"]["exec"]["command"]
    assert container["startupProbe"]["exec"]["command"] == probe
    (migrate,) = _containers(next(iter(_of_kind(bundle, "Job").values()))["spec"]["template"])
    env = _probe_env(tmp_path)
    assert _exec(["pressroom", *_args(migrate)], env) == 0  # the Job's command, as written
    assert _exec(probe, env) != 0, "healthy with no worker running"
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        ["pressroom", *_args(container)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    log.close()
    try:
        budget = (
            container["startupProbe"]["periodSeconds"]
            * container["startupProbe"]["failureThreshold"]
        )
        assert poll(lambda: _exec(probe, env) == 0, min(budget, 60), every=0.5), (
            tmp_path / "worker.log"
        ).read_text()
        other = "interactive" if lane == "bulk" else "bulk"
        assert _exec([*probe[:-1], other], env) != 0, "the other lane has no pool here"
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    assert worker.returncode == 0
    assert _exec(probe, env) != 0, "still healthy after the pool stopped"
