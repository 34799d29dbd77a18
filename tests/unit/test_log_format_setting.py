"""PRESSROOM_LOG_FORMAT: serve's workers log in the format serve was asked for, so one terminal
never mixes human and JSON lines (the flag reached the serve process only)."""

from __future__ import annotations

import io

import pytest

from pressroom.errors import BadConfig
from pressroom.logs import chosen_format, log_format
from pressroom.settings import Settings


def test_the_setting_defaults_to_auto_and_takes_each_format() -> None:
    assert Settings.from_env({}).log_format == "auto"
    for value in ("auto", "json", "human"):
        assert Settings.from_env({"PRESSROOM_LOG_FORMAT": value}).log_format == value
        assert log_format(value) == value


def test_another_value_is_refused_by_the_settings_and_by_the_logs() -> None:
    with pytest.raises(BadConfig):
        Settings.from_env({"PRESSROOM_LOG_FORMAT": "xml"})
    with pytest.raises(ValueError, match="not a log format"):
        log_format("xml")


def test_json_asked_is_json_even_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert chosen_format(log_format("auto"), Terminal()) == "human"
    assert chosen_format(log_format("json"), Terminal()) == "json"
    assert chosen_format(log_format("human"), io.StringIO()) == "human"
