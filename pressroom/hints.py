"""What to do about a refusal, said on its own line in the words of the surface that shows it.

A refusal the asker can change by asking differently ends with what to ask: the CLI names its
flags (``--allow-no-text``), the API its fields (``allow_no_text=true``). Each surface adds its
own hint where it writes the line, so a CLI line never names an API field nor an API answer a
flag; the message a job records stays the surface-free words of the refusal.
"""

from __future__ import annotations

# reason code → what the CLI's process, submit and watch take to go past it
CLI_HINTS = {
    "UNREADABLE_SCAN": "try --allow-no-text or --ocr force",
    "PDFA_UNREACHABLE": "try --output-type pdf",
}
# reason code → the same, as the API's upload fields
API_HINTS = {
    "UNREADABLE_SCAN": "try allow_no_text=true or ocr=force",
    "PDFA_UNREACHABLE": "try output_type=pdf",
}


def _with(hints: dict[str, str], code: str | None, message: str) -> str:
    hint = hints.get(code or "")
    if not hint or message.endswith(f"({hint})"):
        return message
    return f"{message} ({hint})"


def _without_api(code: str | None, message: str) -> str:
    """``message`` less the API's hint, for a CLI line made from a job the API answered."""
    hint = API_HINTS.get(code or "")
    return message.removesuffix(f" ({hint})") if hint else message


def for_cli(code: str | None, message: str) -> str:
    """A refusal's message for a CLI line: the flags that would change it appended."""
    return _with(CLI_HINTS, code, _without_api(code, message))


def for_api(code: str | None, message: str) -> str:
    """A refusal's message for an API answer: the upload fields that would change it appended."""
    return _with(API_HINTS, code, message)
