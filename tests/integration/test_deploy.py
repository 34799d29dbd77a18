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


# --- the Dockerfile and .dockerignore ---------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
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
        assert data_dir[1] in service["ReadWritePaths"].split(), path.name
        assert service["User"] != "root", path.name


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
