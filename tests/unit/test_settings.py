"""One typed configuration: every variable in one table, one reader, errors that name it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import pressroom
from pressroom import cli
from pressroom.errors import BadConfig
from pressroom.settings import (
    CONFIG_FILE,
    MIB,
    SECTIONS,
    VARIABLES,
    AdmissionSettings,
    Limits,
    Settings,
    VerifierSettings,
    markdown,
)

ROOT = Path(__file__).parents[2]


def test_nothing_set_is_every_default() -> None:
    assert Settings.from_env({}) == Settings()


def test_a_bad_value_names_the_variable_the_value_and_what_is_accepted() -> None:
    with pytest.raises(BadConfig) as info:
        Settings.from_env({"PRESSROOM_LEASE_SECONDS": "abc"})
    assert info.value.message == (
        "PRESSROOM_LEASE_SECONDS: expected a positive number of seconds, got 'abc'"
    )
    assert info.value.code == "BAD_CONFIG" and info.value.exit_code == 2


@pytest.mark.parametrize(
    ("name", "raw", "accepted"),
    [
        ("PRESSROOM_MAX_PAGES", "0", "a positive whole number"),
        ("PRESSROOM_MAX_PAGES", "2.5", "a positive whole number"),
        ("PRESSROOM_MAX_ATTEMPTS", "-1", "a positive whole number"),
        ("PRESSROOM_TENANT_MAX_STORED_BYTES", "-5", "a whole number of bytes, 0 for no cap"),
        ("PRESSROOM_STORAGE_TIMEOUT_SECONDS", "nan", "a positive number of seconds"),
        ("PRESSROOM_RETENTION_SECONDS", "inf", "a positive number of seconds"),
        ("PRESSROOM_WORKER_MEMORY_LIMIT_MB", "lots", "a number of MiB, 0 for no limit"),
        ("PRESSROOM_WORKER_MEMORY_LIMIT_MB", "-1", "a number of MiB, 0 for no limit"),
        ("PRESSROOM_STOP_TIMEOUT_SECONDS", "-1", "a number of seconds, 0 or more (0: do not wait)"),
        ("PRESSROOM_QUEUE_CAP_BULK", "many", "a whole number, 0 or more"),
        ("PRESSROOM_VERIFIER", "ldap", "one of registry, http"),
        ("PRESSROOM_OTEL_EXPORTER", "jaeger", "one of none, console, otlp"),
        ("PRESSROOM_WEBHOOK_SENDERS", "0", "a positive whole number"),
        ("PRESSROOM_WEBHOOK_ALLOW_PRIVATE", "maybe", "1, true, yes or on, or 0, false, no or off"),
    ],
)
def test_refused_values(name: str, raw: str, accepted: str) -> None:
    with pytest.raises(BadConfig) as info:
        Settings.from_env({name: raw})
    assert info.value.message == f"{name}: expected {accepted}, got {raw!r}"


def test_zero_keeps_its_meaning_where_it_had_one() -> None:
    """0 turned the memory watchdog off and stopped without waiting before the one reader came;
    it still does."""
    s = Settings.from_env(
        {"PRESSROOM_WORKER_MEMORY_LIMIT_MB": "0", "PRESSROOM_STOP_TIMEOUT_SECONDS": "0"}
    )
    assert (s.worker_memory_limit_bytes, s.stop_timeout_s) == (0, 0.0)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1", True),
        ("true", True),
        ("YES", True),
        ("On", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("OFF", False),
        ("", False),  # blank is unset
    ],
)
def test_one_boolean_rule(raw: str, value: bool) -> None:
    assert (
        Settings.from_env({"PRESSROOM_WEBHOOK_ALLOW_PRIVATE": raw}).webhook_allow_private is value
    )


def test_values_land_in_their_sections() -> None:
    s = Settings.from_env(
        {
            "PRESSROOM_LEASE_SECONDS": "6",
            "PRESSROOM_MAX_PAGES": "1000",
            "PRESSROOM_MAX_PIXELS": "1e6",  # a whole number written as a float
            "PRESSROOM_QUEUE_CAP_INTERACTIVE": "0",
            "PRESSROOM_DEADLINE_BULK_SECONDS": "60",
            "PRESSROOM_VERIFIER": "HTTP",
            "PRESSROOM_VERIFIER_URL": "https://id.example/check",
            "PRESSROOM_OTEL_EXPORTER": "console",
            "PRESSROOM_RECOGNIZERS": "a:make, b:make,",
            "PRESSROOM_NER_MODEL": " en_core_web_lg ",
            "PRESSROOM_WORKER_MEMORY_LIMIT_MB": "512",
            "PRESSROOM_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1",
            "PRESSROOM_OCR_LANGUAGES": "eng+deu",
            "PRESSROOM_PUBLIC_URL": "https://docs.example/",
            "PRESSROOM_S3_PUBLIC_ENDPOINT": "https://s3.example",
            "PRESSROOM_WEBHOOK_DEADLINE_SECONDS": "5",
            "PRESSROOM_URL": "http://pressroom:8080/",
            "TESSDATA_PREFIX": "/opt/tessdata",
        }
    )
    assert s.lease_s == 6.0 and s.limits.max_pages == 1000 and s.limits.max_pixels == 1_000_000
    assert s.admission == AdmissionSettings(queue_cap_interactive=0, deadline_bulk_s=60.0)
    assert s.verifier == VerifierSettings(kind="http", url="https://id.example/check")
    assert s.tracing.exporter == "console"
    assert s.redaction.recognizers == ("a:make", "b:make")
    assert s.redaction.ner_model == "en_core_web_lg"
    assert s.worker_memory_limit_bytes == 512 * MIB
    assert s.trusted_proxies == ("10.0.0.0/8", "127.0.0.1")
    assert s.languages == ("eng", "deu")
    assert s.public_url == "https://docs.example" and s.server_url == "http://pressroom:8080"
    assert s.storage.s3_public_endpoint == "https://s3.example"
    assert s.webhooks.deadline_s == 5.0 and s.tessdata_prefix == "/opt/tessdata"
    assert Limits.from_env({"PRESSROOM_MAX_DPI": "300"}) == Limits(max_dpi=300)


def test_an_http_verifier_needs_its_url() -> None:
    with pytest.raises(BadConfig, match="PRESSROOM_VERIFIER_URL"):
        Settings.from_env({"PRESSROOM_VERIFIER": "http"})


def test_secrets_stay_out_of_the_repr() -> None:
    s = Settings.from_env({"PRESSROOM_SIGNING_KEY": "k" * 40, "PRESSROOM_MASTER_KEY": "m" * 44})
    assert "k" * 40 not in repr(s) and "m" * 44 not in repr(s)


def test_a_config_file_fills_in_and_the_environment_wins(tmp_path: Path) -> None:
    conf = tmp_path / "pressroom.toml"
    conf.write_text(
        "PRESSROOM_LEASE_SECONDS = 60\nPRESSROOM_MAX_PAGES = 10\n"
        "PRESSROOM_WEBHOOK_ALLOW_PRIVATE = true\n"
        'PRESSROOM_DATABASE_URL = "postgresql://db/pressroom"\n'
    )
    s = Settings.from_env({CONFIG_FILE: str(conf), "PRESSROOM_MAX_PAGES": "20"})
    assert (s.lease_s, s.limits.max_pages, s.webhook_allow_private) == (60.0, 20, True)
    assert s.database_url == "postgresql://db/pressroom"
    conf.write_text("PRESSROOM_LEASE_SECONDS = 'abc'\n")
    with pytest.raises(BadConfig, match="PRESSROOM_LEASE_SECONDS: expected"):
        Settings.from_env({CONFIG_FILE: str(conf)})
    conf.write_text("PRESSROOM_LEASE_SECONS = 60\n")  # a typo is not silently ignored
    with pytest.raises(BadConfig, match="PRESSROOM_LEASE_SECONS"):
        Settings.from_env({CONFIG_FILE: str(conf)})
    with pytest.raises(BadConfig, match=CONFIG_FILE):
        Settings.from_env({CONFIG_FILE: str(tmp_path / "missing.toml")})


def test_the_table_covers_every_field_once() -> None:
    """Every variable lands on a real field, and every field but the sections has a variable."""
    fields = {f.name for f in dataclasses.fields(Settings) if f.name not in SECTIONS}
    for name, kind in SECTIONS.items():
        fields |= {f"{name}.{f.name}" for f in dataclasses.fields(kind)}
    named = [var.field for var in VARIABLES]
    assert sorted(named) == sorted(fields)
    assert len({var.name for var in VARIABLES}) == len(VARIABLES)


def test_only_settings_reads_the_environment_and_every_variable_is_in_the_table() -> None:
    package = Path(pressroom.__file__).parent
    known = {var.name for var in VARIABLES} | {CONFIG_FILE}
    readers: list[str] = []
    unknown: set[str] = set()
    for path in package.rglob("*.py"):
        text = path.read_text()
        unknown |= set(re.findall(r"\bPRESSROOM_[A-Z0-9_]*[A-Z0-9]\b", text)) - known
        if path.name == "settings.py":
            continue
        for line in text.splitlines():
            # OMP_THREAD_LIMIT configures a library, not Pressroom
            if re.search(r"os\.environ|getenv", line) and "OMP_THREAD_LIMIT" not in line:
                readers.append(f"{path.relative_to(package)}: {line.strip()}")
    assert readers == []
    assert unknown == set()


def test_the_configuration_page_is_generated_from_the_table() -> None:
    """Regenerate with `python -m pressroom.settings --markdown > docs/configuration.md`."""
    assert (ROOT / "docs" / "configuration.md").read_text() == markdown()


@pytest.mark.parametrize("command", [["serve"], ["worker"], ["process", "x.pdf", "-o", "out"]])
def test_the_entry_points_say_one_line_and_exit_2(
    command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PRESSROOM_LEASE_SECONDS", "abc")
    assert cli.main(command) == 2
    err = capsys.readouterr().err
    assert err == (
        "error: BAD_CONFIG: PRESSROOM_LEASE_SECONDS: expected a positive number of seconds, "
        "got 'abc'\n"
    )
