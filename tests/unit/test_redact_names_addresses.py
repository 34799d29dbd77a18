"""Name and address recognisers: what they find, and the ordinary text they leave alone."""

from __future__ import annotations

import pytest

from pressroom.redact.detect.addresses import AddressRecognizer
from pressroom.redact.detect.names import NameRecognizer
from pressroom.synth import SENTENCES


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Name: Jane Q. Example", "Jane Q. Example"),
        ("Print name: Olusegun Adebayo", "Olusegun Adebayo"),
        ("Payee - Siobhan O'Reilly-Walsh", "Siobhan O'Reilly-Walsh"),
        ("Account holder: Wei Zhang Date of birth", "Wei Zhang"),
        ("I, Tomasz Wieczorek, agree to the terms.", "Tomasz Wieczorek"),
        ("Signed in the presence of Dr Amara Okafor.", "Amara Okafor"),
        ("Please call Mary Johnson about the refund.", "Mary Johnson"),  # census pair
        ("Dear Kwabena Lindqvist, thank you.", "Kwabena Lindqvist"),
        ("The form was countersigned by Yusra Achterberg yesterday.", "Yusra Achterberg"),
        ("Paid on behalf of Eero Nyambura in full.", "Eero Nyambura"),
        ("Yours sincerely,\nDagny Thorvaldsen", "Dagny Thorvaldsen"),
        ("Kind regards, Radek Szabo", "Radek Szabo"),
    ],
)
def test_names_found(text: str, name: str) -> None:
    assert name in [f.value for f in NameRecognizer().find(text)]


@pytest.mark.parametrize(
    "text",
    [
        *SENTENCES,
        "May Young will attend.",
        "Name: 2026-0417",
        "Payee:\nSend the cheque",
        "Dear colleagues, the office closes early.",
        "Signed by hand on 3 March.",
        "Kind regards,\n\nthe programme office",
    ],
)
def test_ordinary_text_has_no_names(text: str) -> None:
    assert NameRecognizer().find(text) == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        (
            "Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500 today.",
            "1600 Pennsylvania Avenue NW, Washington, DC 20500",
        ),
        (
            "Please write to 10 Downing Street, London SW1A 2AA soon.",
            "10 Downing Street, London SW1A 2AA",
        ),
        ("Address: 4 Rue des Lilas, Apt 3", "4 Rue des Lilas, Apt 3"),
        (
            "Mail to 742 Evergreen Terrace Springfield OR 97403 please.",
            "742 Evergreen Terrace Springfield OR 97403",
        ),
        (
            "Witnessed by Mr Siobhan Adebayo at the office.\nSend the cheque to 216 Maple Avenue, "
            "Bristol BS1 5TR by post.",
            "216 Maple Avenue, Bristol BS1 5TR",
        ),
    ],
)
def test_addresses_found(text: str, address: str) -> None:
    found = AddressRecognizer().find(text)
    assert address in [f.value for f in found]
    assert all(text[f.start : f.end] == f.value for f in found)


@pytest.mark.parametrize("text", SENTENCES)
def test_ordinary_text_has_no_addresses(text: str) -> None:
    assert AddressRecognizer().find(text) == []
