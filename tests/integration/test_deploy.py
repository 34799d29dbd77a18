"""The deploy files, checked as far as these machines allow: no container engine runs here, so
the compose file is validated against the compose-spec schema, the systemd units with
`systemd-analyze verify`, the alerting rules with `promtool`, and what those cannot see
(pinned images, one image for every role, restart policies, health checks, layer order) by
reading the files. Each checker is also shown to reject a broken copy, so a pass means something."""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
SCHEMA = DEPLOY / "schema" / "compose-spec.json"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
RULES = sorted((DEPLOY / "prometheus").glob("*.yml"))
VENV_BIN = "/opt/pressroom/.venv/bin/pressroom"
SYSTEM_UNITS = Path("/usr/lib/systemd/system")
LONG_RUNNING = {"always", "unless-stopped", "on-failure"}


PROMTOOL = ROOT / "tests" / "tools" / "promtool" / "promtool"  # scripts/ensure-promtool.sh


def _tool(name: str) -> str:
    path = str(PROMTOOL) if name == "promtool" and PROMTOOL.exists() else shutil.which(name)
    if path is None:  # a missing checker is a failure, never a skip: the check would not run
        pytest.fail(f"{name} is not installed: `make test-system-deps` installs it")
    return path


# --- the compose file -------------------------------------------------------------------------


def _compose() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(doc, dict)
    return doc


def _schema_errors(doc: object) -> list[str]:
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)
    ]


def _services() -> dict[str, dict[str, Any]]:
    services = _compose()["services"]
    assert isinstance(services, dict)
    return services


def _command(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def _role(name: str) -> dict[str, Any]:
    """The Pressroom service whose command starts with ``name`` (serve or worker)."""
    found = [s for s in _services().values() if _command(s)[:1] == [name]]
    assert found, f"no service runs `pressroom {name}`"
    return found[0]


def _one_shots() -> set[str]:
    """Services others wait to see finish: they are meant to exit."""
    return {
        dep
        for service in _services().values()
        for dep, cond in dict(service.get("depends_on", {})).items()
        if cond.get("condition") == "service_completed_successfully"
    }


def test_compose_file_is_valid_against_the_compose_spec() -> None:
    assert _schema_errors(_compose()) == []


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("api", "restrat", "always"),  # a typo'd key
        ("api", "restart", ["always"]),  # a key of the wrong type
        ("postgres", "healthcheck", {"test": ["CMD", "true"], "interval": 5}),  # 5 what?
    ],
)
def test_the_schema_check_rejects_a_broken_compose_file(
    where: str, key: str, value: object
) -> None:
    doc = _compose()
    doc["services"][where][key] = value
    assert _schema_errors(doc)


def test_every_pulled_image_is_pinned_to_a_release() -> None:
    built = {s["image"] for s in _services().values() if "build" in s}
    for name, service in _services().items():
        image = service.get("image")
        assert image or "build" in service, f"{name} has neither image nor build"
        if image is None or image in built:
            continue
        assert "latest" not in image, f"{name}: {image}"
        # a digest, or a tag with at least major.minor: never a floating major (`postgres:16`)
        assert "@sha256:" in image or re.search(r":v?\d+\.\d+", image), f"{name}: {image}"


def test_the_api_and_every_worker_run_one_image_built_once() -> None:
    pressroom = {
        name: s for name, s in _services().items() if _command(s)[:1] in (["serve"], ["worker"])
    }
    assert {_command(s)[0] for s in pressroom.values()} == {"serve", "worker"}
    assert len({s["image"] for s in pressroom.values()}) == 1
    builders = [s for s in _services().values() if "build" in s]
    assert len(builders) == 1
    assert builders[0]["build"]["dockerfile"] == "deploy/Dockerfile"
    assert (COMPOSE.parent / builders[0]["build"]["context"] / "deploy" / "Dockerfile").is_file()
    assert builders[0]["image"] == next(iter(pressroom.values()))["image"]
    serve = _command(_role("serve"))
    assert serve[serve.index("--workers") + 1] == "0", "the API must not run workers itself"
    lanes = {c[c.index("--lane") + 1] for s in pressroom.values() if "--lane" in (c := _command(s))}
    assert lanes == {"bulk", "interactive"}


def test_every_service_has_a_restart_policy() -> None:
    one_shots = _one_shots()
    for name, service in _services().items():
        assert "restart" in service, name
        if name not in one_shots:
            assert service["restart"] in LONG_RUNNING, (name, service["restart"])


def test_health_checks_gate_the_start_order() -> None:
    services = _services()
    api = _role("serve")
    assert "/healthz" in " ".join(api["healthcheck"]["test"])
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]
    for name, service in services.items():
        for dep, cond in dict(service.get("depends_on", {})).items():
            assert cond["condition"] in ("service_healthy", "service_completed_successfully"), (
                name,
                dep,
            )
            if cond["condition"] == "service_healthy":
                check = services[dep].get("healthcheck", {})
                assert check.get("test") and not check.get("disable"), (name, dep)
    assert {"postgres"} <= set(api["depends_on"])
    worker = _role("worker")
    assert worker["depends_on"]["api"]["condition"] == "service_healthy"


def test_no_secret_is_written_in_the_compose_file() -> None:
    example = (DEPLOY / "env.example").read_text()
    used = set(re.findall(r"\$\{(\w+):\?", COMPOSE.read_text()))
    assert {"PRESSROOM_SIGNING_KEY", "POSTGRES_PASSWORD", "S3_SECRET_KEY"} <= used
    assert used <= set(re.findall(r"^(\w+)=", example, re.M)), "deploy/env.example lacks some"
    for name, service in _services().items():
        env = service.get("environment", {})
        assert isinstance(env, dict), name
        for key, value in env.items():
            if re.search(r"PASSWORD|SECRET|SIGNING_KEY|DATABASE_URL", key):
                assert "${" in str(value), f"{name}: {key} is written in the file"
    for service in (_role("serve"), _role("worker")):
        env = service["environment"]
        assert {"PRESSROOM_DATABASE_URL", "PRESSROOM_STORAGE_URL", "AWS_ENDPOINT_URL"} <= set(env)
        assert env["PRESSROOM_STORAGE_URL"].startswith("s3://")


def test_state_lives_in_named_volumes() -> None:
    declared = set(_compose()["volumes"])
    for name, service in _services().items():
        for mount in service.get("volumes", []):
            assert mount.split(":")[0] in declared, f"{name}: {mount} is not a named volume"
    assert {"pgdata", "s3data"} <= declared


# grace periods, health checks, memory and the public URL: the rules Docker cannot check for us


def _seconds(duration: object) -> float:
    """A compose duration (``5m``, ``1m30s``, ``300s``) in seconds."""
    text = str(duration)
    parts = re.findall(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a duration: {text}"
    unit = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * unit[u] for n, u in parts)


def _bytes(size: object) -> int:
    """A compose byte size (``4g``, ``512m``, ``1073741824``) in bytes."""
    found = re.fullmatch(r"(\d+)\s*([bkmg]?)b?", str(size).lower())
    assert found, f"not a size: {size}"
    return int(found[1]) * 1024 ** "bkmg".index(found[2] or "b")


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    assert isinstance(env, dict)
    return {str(k): str(v) for k, v in env.items()}


def _pressroom_services(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Services that run the Pressroom CLI: the built image with its own entrypoint."""
    built = {s["image"] for s in doc["services"].values() if "build" in s}
    return {
        name: s
        for name, s in doc["services"].items()
        if s.get("image") in built and "entrypoint" not in s
    }


STOP_MARGIN_S = 10.0  # the rest of a shutdown after the jobs' time: webhooks, the database pool


def _grace_problems(doc: dict[str, Any]) -> list[str]:
    """Docker SIGKILLs a container ``stop_grace_period`` (default 10 s) after its SIGTERM: any
    shorter than the stop timeout the process runs under cuts running jobs off mid-page."""
    from pressroom.settings import Settings

    problems = []
    for name, service in _pressroom_services(doc).items():
        timeout = float(
            _env(service).get("PRESSROOM_STOP_TIMEOUT_SECONDS", Settings().stop_timeout_s)
        )
        grace = _seconds(service.get("stop_grace_period", "10s"))
        if grace < timeout + STOP_MARGIN_S:
            problems.append(f"{name}: stop_grace_period {grace:.0f} s, stop timeout {timeout} s")
    return problems


def test_every_pressroom_service_is_given_longer_than_its_stop_timeout() -> None:
    assert _grace_problems(_compose()) == []
    assert _pressroom_services(_compose()).keys() >= {"api", "bulk", "interactive"}


@pytest.mark.parametrize(
    ("where", "grace", "timeout"),
    [
        ("interactive", "2m", None),  # the file as the review found it: 120 s against 280 s
        ("bulk", None, "600"),  # a longer stop timeout without a longer grace
        ("api", "275s", None),
    ],
)
def test_the_grace_check_rejects_a_grace_shorter_than_the_stop_timeout(
    where: str, grace: str | None, timeout: str | None
) -> None:
    doc = _compose()
    service = doc["services"][where]
    if grace is not None:
        service["stop_grace_period"] = grace
    if timeout is not None:
        service["environment"] = {**_env(service), "PRESSROOM_STOP_TIMEOUT_SECONDS": timeout}
    assert _grace_problems(doc)


def _health_problems(doc: dict[str, Any]) -> list[str]:
    """Every worker service is checked through its heartbeat (`pressroom worker --check`), of
    its own lane when one is named, with a test the CLI accepts."""
    from pressroom.cli import build_parser

    problems = []
    workers = {n: s for n, s in doc["services"].items() if _command(s)[:1] == ["worker"]}
    if not workers:
        return ["no worker service"]
    for name, service in workers.items():
        check = service.get("healthcheck", {})
        test = [str(t) for t in check.get("test", [])]
        if check.get("disable") or test[:4] != ["CMD", "pressroom", "worker", "--check"]:
            problems.append(f"{name}: no `pressroom worker --check` health check: {check}")
            continue
        args = build_parser().parse_args(test[2:])
        command = _command(service)
        lane = command[command.index("--lane") + 1] if "--lane" in command else "bulk"
        if args.lane not in (None, lane):
            problems.append(f"{name}: works {lane} but checks {args.lane}")
        if not {"interval", "retries"} <= set(check):
            problems.append(f"{name}: a health check with no interval or retries")
    return problems


def test_every_worker_is_health_checked_through_its_heartbeat() -> None:
    assert _health_problems(_compose()) == []


@pytest.mark.parametrize(
    ("where", "check"),
    [
        ("bulk", {"disable": True}),  # the file as the review found it
        ("interactive", {"test": ["CMD", "true"], "interval": "30s", "retries": 3}),
        (
            "interactive",
            {
                "test": ["CMD", "pressroom", "worker", "--check", "--lane", "bulk"],
                "interval": "30s",
                "retries": 3,
            },
        ),
    ],
)
def test_the_health_check_rule_rejects_a_worker_without_one(
    where: str, check: dict[str, Any]
) -> None:
    doc = _compose()
    doc["services"][where]["healthcheck"] = check
    assert _health_problems(doc)


def _memory_problems(doc: dict[str, Any]) -> list[str]:
    """Every Pressroom service has a memory limit, and a pool's leaves room for each of its
    workers at PRESSROOM_WORKER_MEMORY_LIMIT_MB plus 512 MiB, so the per-job watchdog stops a
    greedy job (MEMORY_LIMIT, retried once) before the kernel's OOM killer ends a random one."""
    from pressroom.cli.service import lanes_to_run
    from pressroom.settings import Settings

    problems = []
    for name, service in _pressroom_services(doc).items():
        limits = service.get("deploy", {}).get("resources", {}).get("limits", {})
        limit = service.get("mem_limit", limits.get("memory"))
        if limit is None:
            problems.append(f"{name}: no mem_limit")
            continue
        command = _command(service)

        def flag(name: str, cmd: list[str] = command) -> int | None:
            return int(cmd[cmd.index(name) + 1]) if name in cmd else None

        if command[:1] == ["worker"]:
            workers = flag("--concurrency") or 1
        elif command[:1] == ["serve"]:
            workers = sum(lanes_to_run(flag("--workers"), flag("--interactive"), 2))
        else:
            continue
        default_mb = Settings().worker_memory_limit_bytes // 2**20
        per_worker = int(_env(service).get("PRESSROOM_WORKER_MEMORY_LIMIT_MB", default_mb))
        needed = (workers * per_worker + 512) * 2**20
        if workers and _bytes(limit) < needed:
            problems.append(f"{name}: mem_limit {limit} < {workers} x {per_worker} MiB + 512 MiB")
    return problems


def test_every_pressroom_service_has_a_memory_limit_that_fits_its_workers() -> None:
    assert _memory_problems(_compose()) == []


@pytest.mark.parametrize(
    ("where", "limit"),
    [
        ("bulk", None),  # the file as the review found it: no limit anywhere
        ("api", None),
        ("watch", None),
        ("bulk", "2g"),  # two workers of 1536 MiB do not fit: the kernel would kill first
    ],
)
def test_the_memory_rule_rejects_a_missing_or_too_small_limit(
    where: str, limit: str | None
) -> None:
    doc = _compose()
    doc["services"][where].pop("mem_limit")
    if limit is not None:
        doc["services"][where]["mem_limit"] = limit
    assert _memory_problems(doc)
    assert _schema_errors(doc) == []  # the schema alone would let it through


def _public_url_problems(doc: dict[str, Any], example: str) -> list[str]:
    """The public URL is the operator's (deploy/.env), never an address written in the file."""
    problems = []
    api = next(s for s in doc["services"].values() if _command(s)[:1] == ["serve"])
    if "PRESSROOM_PUBLIC_URL" not in _env(api):
        problems.append("the API has no PRESSROOM_PUBLIC_URL")
    for name, service in doc["services"].items():
        value = _env(service).get("PRESSROOM_PUBLIC_URL")
        if value is not None and not re.fullmatch(
            r"\$\{PRESSROOM_PUBLIC_URL(:[?-][^}]*)?\}", value
        ):
            problems.append(f"{name}: PRESSROOM_PUBLIC_URL is written in the file: {value}")
    if not re.search(r"^PRESSROOM_PUBLIC_URL=", example, re.M):
        problems.append("deploy/env.example does not list PRESSROOM_PUBLIC_URL")
    return problems


def test_the_public_url_comes_from_the_environment() -> None:
    example = (DEPLOY / "env.example").read_text()
    assert _public_url_problems(_compose(), example) == []
    # links a worker writes (webhooks) use the same base as the API's
    for service in _pressroom_services(_compose()).values():
        assert "PRESSROOM_PUBLIC_URL" in _env(service)


@pytest.mark.parametrize(
    "value",
    [
        "http://localhost:8080",  # the file as the review found it
        "https://${HOST}/",
        "${PRESSROOM_PUBLIC_URL}/api",
    ],
)
def test_the_public_url_rule_rejects_an_address_written_in_the_file(value: str) -> None:
    doc = _compose()
    api = doc["services"]["api"]
    api["environment"] = {**_env(api), "PRESSROOM_PUBLIC_URL": value}
    assert _public_url_problems(doc, (DEPLOY / "env.example").read_text())
    assert _public_url_problems(_compose(), "POSTGRES_PASSWORD=\n")  # nor a missing example


# --- the Dockerfile and .dockerignore ---------------------------------------------------------


def _instructions(dockerfile: str | None = None) -> list[tuple[str, str]]:
    source = DOCKERFILE.read_text() if dockerfile is None else dockerfile
    text = re.sub(r"\\\n", " ", source)
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1]) for ln in lines]


def _index(instructions: list[tuple[str, str]], op: str, pattern: str) -> int:
    for i, (name, arg) in enumerate(instructions):
        if name == op and re.search(pattern, arg):
            return i
    raise AssertionError(f"no {op} matching {pattern!r} in deploy/Dockerfile")


def test_dockerfile_pins_its_base_and_installs_dependencies_before_the_code() -> None:
    steps = _instructions()
    base = [arg for op, arg in steps if op == "FROM"]
    assert len(base) == 1
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", base[0])
    requirements = _index(steps, "COPY", r"^requirements\b")
    install = _index(steps, "RUN", r"install-venv\.sh .*requirements/runtime\.txt")
    code = _index(steps, "COPY", r"^(pressroom|\.)\s")
    assert requirements < install < code, "a code change would reinstall every dependency"
    assert "requirements/ner-model.txt" in steps[install][1]


def test_dockerfile_runs_as_a_user_with_a_health_check_and_the_cli_as_entrypoint() -> None:
    steps = _instructions()
    users = [arg for op, arg in steps if op == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert "/healthz" in dict(steps)["HEALTHCHECK"]
    assert dict(steps)["EXPOSE"] == "8080"
    assert json.loads(dict(steps)["ENTRYPOINT"]) == ["pressroom"]
    assert f"PATH={VENV_BIN.rsplit('/', 1)[0]}:" in dict(steps)["ENV"]


def test_dockerfile_installs_only_packages_the_makefile_knows() -> None:
    makefile = (ROOT / "Makefile").read_text()
    listed = re.search(r"^APT_PACKAGES := (.*)$", makefile, re.M)
    assert listed
    known = set(listed[1].split())
    steps = _instructions()
    apt = re.search(r"apt-get install (.*?)&&", steps[_index(steps, "RUN", "apt-get install")][1])
    assert apt
    wanted = {w for w in apt[1].split() if not w.startswith("-")}
    assert {
        "tesseract-ocr",
        "tesseract-ocr-eng",
        "tesseract-ocr-osd",
        "fonts-dejavu-core",
    } <= wanted
    assert wanted <= known


def _image_problems(dockerfile: str) -> list[str]:
    """OCI labels, the data dir as a VOLUME that the service user owns, and nothing that ties
    the image to one CPU (the locks install on x86_64 and aarch64)."""
    steps = _instructions(dockerfile)
    problems = []
    labels = " ".join(arg for op, arg in steps if op == "LABEL")
    for key in ("title", "description", "version", "revision", "base.name"):
        if f"org.opencontainers.image.{key}=" not in labels:
            problems.append(f"no org.opencontainers.image.{key} label")
    env = " ".join(arg for op, arg in steps if op == "ENV")
    data_dir = re.search(r"PRESSROOM_DATA_DIR=(\S+)", env)
    volumes = [v for op, arg in steps if op == "VOLUME" for v in json.loads(arg)]
    if data_dir is None or volumes != [data_dir[1]]:
        problems.append(f"VOLUME {volumes} is not the data dir")
    elif not any(
        op == "RUN" and re.search(rf"-o pressroom .*{re.escape(data_dir[1])}", arg)
        for op, arg in steps[: next(i for i, (op, _) in enumerate(steps) if op == "VOLUME")]
    ):
        problems.append("the data dir is not made for the service user before its VOLUME")
    code = " ".join(f"{op} {arg}" for op, arg in steps)
    if found := re.search(r"x86_64|amd64|aarch64|arm64|--platform|manylinux", code, re.I):
        problems.append(f"the image names a CPU: {found[0]}")
    return problems


def test_dockerfile_has_oci_labels_a_data_volume_and_no_cpu_of_its_own() -> None:
    assert _image_problems(DOCKERFILE.read_text()) == []
    versions = re.findall(r"^ARG VERSION=(\S+)$", DOCKERFILE.read_text(), re.M)
    project = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert project and versions == [project[1]], "the image's default version drifted"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("FROM python:", "FROM --platform=linux/amd64 python:"),
        ("org.opencontainers.image.revision=", "org.example.revision="),
        ('VOLUME ["/srv/pressroom/data"]', ""),
        ('VOLUME ["/srv/pressroom/data"]', 'VOLUME ["/data"]'),
        (" -o pressroom -g pressroom", ""),  # a volume root owns: the user cannot write
        ("requirements/runtime.txt", "requirements/runtime.txt --python-platform x86_64"),
    ],
)
def test_the_image_rule_rejects_a_broken_dockerfile(old: str, new: str) -> None:
    text = DOCKERFILE.read_text()
    assert old in text
    assert _image_problems(text.replace(old, new, 1))


def _ignored(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path.split("/")[0], p) for p in patterns)


def test_dockerignore_keeps_environments_data_and_secrets_out_but_not_what_the_image_copies() -> (
    None
):
    patterns = [
        ln.strip()
        for ln in DOCKERIGNORE.read_text().splitlines()
        if ln.strip()[:1] not in ("", "#")
    ]
    for path in (
        ".git",
        ".venv",
        ".venv-test",
        "pressroom-data",
        "tests/tools/pdfjs/node_modules",
        "bench/results",
        "pressroom/__pycache__",
        "deploy/.env",
    ):
        assert _ignored(path, patterns), f"{path} would be sent to the build"
    copied = [arg.split()[0] for op, arg in _instructions() if op == "COPY"]
    assert copied
    for path in copied:
        assert not _ignored(path, patterns), f"{path} is copied but ignored"


# --- systemd units ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def system_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file-system root with systemd's own units and the CLI where the units expect it, so
    `verify` checks targets and the ExecStart binary without installing anything here."""
    root = tmp_path_factory.mktemp("root")
    shutil.copytree(SYSTEM_UNITS, root / SYSTEM_UNITS.relative_to("/"), symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    return root


def _verify(root: Path, units: dict[str, str]) -> tuple[int, str]:
    folder = root / "etc/systemd/system"
    for old in folder.iterdir():
        old.unlink()
    names = []
    for name, text in units.items():
        (folder / name).write_text(text)
        names.append(name.replace("@.", "@bulk."))
    done = subprocess.run(
        [_tool("systemd-analyze"), "verify", "--man=no", f"--root={root}", *names],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stderr


def _with_cli(root: Path) -> None:
    binary = root / VENV_BIN.lstrip("/")
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)


def _units() -> dict[str, str]:
    return {path.name: path.read_text() for path in UNITS}


def test_systemd_units_verify(system_root: Path) -> None:
    assert {"pressroom-api.service", "pressroom-worker@.service"} <= set(_units())
    _with_cli(system_root)
    assert _verify(system_root, _units()) == (0, "")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("PrivateTmp=true", "PrivatTmp=true"),  # a typo'd directive: systemd ignores it, we don't
        ("[Service]", "[Servce]"),
        ("Restart=on-failure", "Restart=sometimes"),
    ],
)
def test_the_systemd_check_rejects_a_broken_unit(system_root: Path, old: str, new: str) -> None:
    _with_cli(system_root)
    units = _units()
    broken = {name: text.replace(old, new) for name, text in units.items()}
    assert broken != units
    rc, stderr = _verify(system_root, broken)
    assert rc != 0 or stderr


def test_the_systemd_check_rejects_a_unit_whose_program_is_missing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("bare")
    shutil.copytree(SYSTEM_UNITS, root / SYSTEM_UNITS.relative_to("/"), symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    rc, stderr = _verify(root, _units())
    assert rc != 0 and VENV_BIN in stderr


def _service_section(text: str) -> Iterator[tuple[str, str]]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    yield from parser["Service"].items()


def test_systemd_units_are_hardened_and_restart_on_failure() -> None:
    env = (DEPLOY / "systemd" / "pressroom.env").read_text()
    data_dir = re.search(r"^PRESSROOM_DATA_DIR=(.*)$", env, re.M)
    assert data_dir
    for path in UNITS:
        service = dict(_service_section(path.read_text()))
        assert service["ExecStart"].split()[0] == VENV_BIN, path.name
        assert service["Restart"] == "on-failure", path.name
        assert service["NoNewPrivileges"] == "true", path.name
        assert service["ProtectSystem"] == "strict", path.name
        assert service["PrivateTmp"] == "true", path.name
        if path.name == "pressroom-watch.service":  # its own user and state, never the API's (N1)
            assert data_dir[1] not in service["ReadWritePaths"].split(), path.name
            assert service["User"] != "pressroom", path.name
            assert "pressroom.env" not in service["EnvironmentFile"], path.name
        else:
            assert data_dir[1] in service["ReadWritePaths"].split(), path.name
        assert service["User"] != "root", path.name


def _unit_limit_problems(units: dict[str, str], env: str) -> list[str]:
    """Every unit has MemoryMax= (a backstop beside the per-worker watchdog); the pools go on
    when the kernel kills one process (OOMPolicy=continue: the supervisor restarts it); and a
    unit that runs workers waits longer on SIGTERM than PRESSROOM_STOP_TIMEOUT_SECONDS."""
    timeout = re.search(r"^PRESSROOM_STOP_TIMEOUT_SECONDS=(\d+)", env, re.M)
    problems = [] if timeout else ["pressroom.env sets no PRESSROOM_STOP_TIMEOUT_SECONDS"]
    for name, text in units.items():
        service = dict(_service_section(text))
        if not re.fullmatch(r"\d+[KMGT]?|\d+%", service.get("MemoryMax", "")):
            problems.append(f"{name}: no MemoryMax=")
        command = service["ExecStart"].split()[1:2]
        if command in (["worker"], ["watch"]) and service.get("OOMPolicy") != "continue":
            problems.append(f"{name}: one killed process stops the unit")
        stop_s = float(service.get("TimeoutStopSec", "90"))
        short = timeout is not None and stop_s < float(timeout[1]) + STOP_MARGIN_S
        if short and command in (["worker"], ["serve"]):
            problems.append(f"{name}: TimeoutStopSec={stop_s:.0f} under the stop timeout")
    return problems


def test_systemd_units_have_memory_limits_and_outlast_the_stop_timeout() -> None:
    env = (DEPLOY / "systemd" / "pressroom.env").read_text()
    assert _unit_limit_problems(_units(), env) == []


@pytest.mark.parametrize(
    ("unit", "old", "new"),
    [
        ("pressroom-worker@.service", "MemoryMax=80%\n", ""),
        ("pressroom-api.service", "MemoryMax=2G\n", ""),
        ("pressroom-worker@.service", "OOMPolicy=continue\n", ""),
        ("pressroom-worker@.service", "TimeoutStopSec=300", "TimeoutStopSec=120"),
    ],
)
def test_the_unit_limit_rule_rejects_a_broken_unit(unit: str, old: str, new: str) -> None:
    units = _units()
    assert old in units[unit]
    units[unit] = units[unit].replace(old, new)
    env = (DEPLOY / "systemd" / "pressroom.env").read_text()
    assert _unit_limit_problems(units, env)


# --- Prometheus rules -------------------------------------------------------------------------


def _promtool(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_tool("promtool"), "check", "rules", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_alerting_rules_pass_promtool() -> None:
    assert RULES
    for path in RULES:
        done = _promtool(path)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("rate(pressroom_dead_letters_total[10m])", "rate(pressroom_dead_letters_total[10m)"),
        ("for: 15m", "for: fifteen minutes"),
        ("{{ $labels.lane }} queue", "{{ $labels.lane } queue"),
    ],
)
def test_promtool_rejects_broken_rules(tmp_path: Path, old: str, new: str) -> None:
    text = (DEPLOY / "prometheus" / "pressroom-rules.yml").read_text()
    assert old in text
    broken = tmp_path / "rules.yml"
    broken.write_text(text.replace(old, new))
    assert _promtool(broken).returncode != 0


def test_alerting_rules_read_the_stores_figures_once_however_many_api_instances() -> None:
    """promtool's unit tests of the rules (tests/prometheus/rules_test.yml): two API instances
    exporting the same dead letters do not double them, and the alerts still fire."""
    cases = ROOT / "tests" / "prometheus" / "rules_test.yml"
    run = subprocess.run(
        [_tool("promtool"), "test", "rules", str(cases)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0 and "SUCCESS" in run.stdout, run.stdout + run.stderr
