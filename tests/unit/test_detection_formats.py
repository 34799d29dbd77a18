"""Detection written from public formats: ISO 13616 IBANs, card issuer ranges, ABA routing, postal
address blocks, name cues in any script, and the text-level detector with propagation."""

from __future__ import annotations

import random

import pytest
from stdnum import luhn
from stdnum.za import idnr

from pressroom.models import Box, Word
from pressroom.redact.detect import Finding
from pressroom.redact.detect.accounts import AccountNumberRecognizer, iban_ok
from pressroom.redact.detect.addresses import AddressRecognizer, normalised_with_map
from pressroom.redact.detect.detector import Detector, name_tokens, occurrences
from pressroom.redact.detect.names import NameRecognizer
from pressroom.redact.detection import Hit
from pressroom.redact.plan import covered_words


def make_iban(country: str, bban: str) -> str:
    """ISO 13616: check digits = 98 - (BBAN + country + "00" as base-36 digits) mod 97."""
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def grouped(number: str) -> str:
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


DE = make_iban("DE", "370400440532013000")
GB = make_iban("GB", "WEST12345698765432")
FR = make_iban("FR", "20041010050500013M02606")


def accounts(text: str) -> list[str]:
    return [f.value for f in AccountNumberRecognizer().find(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"IBAN {grouped(GB)} REF 4411", grouped(GB)),  # a short token after it is not swallowed
        (f"iban: {grouped(DE).lower()}", grouped(DE).lower()),  # lower case
        (f"TFR {GB} SALARY", GB),  # without spaces, inside a transaction description
        (f"Pay to {grouped(FR)[:14]}\n{grouped(FR)[15:]} by Friday", None),  # wrapped
        # a checksum-valid IBAN whose bank code is not in the registry's format is still one
        (f"IBAN {make_iban('GB', '1234' + '12345612345678')}", None),
    ],
)
def test_ibans(text: str, value: str | None) -> None:
    found = AccountNumberRecognizer().find(text)
    assert len(found) == 1
    if value is not None:
        assert found[0].value == value
    assert iban_ok("".join(c for c in found[0].value if c.isalnum()).upper())


def test_a_malformed_iban_is_no_card_and_no_iban() -> None:
    bad = GB[:-1] + str((int(GB[-1]) + 1) % 10)
    assert accounts(f"IBAN {bad}") == []
    assert accounts(f"IBAN {grouped(bad)}") == []


def _misread(number: str, at: dict[int, str]) -> str:
    return "".join(at.get(i, c) for i, c in enumerate(number))


@pytest.mark.parametrize(
    ("number", "at"),
    [
        (make_iban("DE", "370400440532013003"), {2: "O"}),  # DE08: check digit 0 read as O
        (GB, {2: "B"}),  # a check digit 8 read as B
        (DE, {6: "O", 17: "l"}),  # digits of the account part read as letters
        (GB, {6: "5"}),  # a bank-code letter read as a digit (S as 5)
        (FR, {8: "l", 12: "O"}),  # where the format has digits
    ],
)
def test_an_iban_ocr_misread_is_found_as_written(number: str, at: dict[int, str]) -> None:
    """What OCR reads for a digit (O for 0) leaves the value readable to a person; its format
    says which characters are digits, and the checksum says it is the IBAN."""
    misread = _misread(number, at)
    assert iban_ok(number) and not iban_ok(misread)
    assert accounts(f"IBAN {grouped(misread)}   Card") == [grouped(misread)]


def test_an_iban_misread_beyond_its_format_or_checksum_is_not_one() -> None:
    # four characters read again: some other code
    assert accounts(f"IBAN {grouped(_misread(DE, {4: 'B', 5: 'I', 6: 'O', 7: 'Z'}))}") == []
    # a letter read as another letter: no format can say which, and the checksum fails
    assert accounts(f"IBAN {grouped(_misread(GB, {5: 'F'}))}") == []
    # words in prose whose second pair is letter-shaped are no IBAN
    assert accounts("Dollars Sold Total BOOK IS OLD GBOS DEBITS all paid") == []


def test_a_card_ocr_misread_is_found_as_written() -> None:
    card = "4299 7220 0332 2451"
    assert luhn.is_valid(card.replace(" ", ""))
    assert accounts("Card 4299 7220 O332 2451 expires") == ["4299 7220 O332 2451"]
    assert accounts("Card 4299 722O O332 2451") == ["4299 722O O332 2451"]
    # the Luhn check still decides, and a run of letters is no card
    assert accounts("Card 4299 7220 O332 2452") == []
    assert accounts("Card 4299 OOOO OOOO 2451") == []


@pytest.mark.parametrize(
    "card",
    [
        "4111 1111 1111 1111",  # Visa
        "5500-0000-0000-0004",  # Mastercard
        "3782 822463 10005",  # Amex
        "6011000990139424",  # Discover
        "3530111333300000",  # JCB
        "30569309025904",  # Diners
        "5018 1234 5678",  # a 12-digit Maestro
        "4222222222222",  # a 13-digit Visa
    ],
)
def test_cards(card: str) -> None:
    digits = "".join(c for c in card if c.isdigit())
    if not luhn.is_valid(digits):  # the 12-digit Maestro above is made valid here
        card = card[:-1] + luhn.calc_check_digit(digits[:-1])
    assert accounts(f"Card {card} expires 09/29") == [card]


def test_luhn_valid_national_ids_are_not_cards() -> None:
    rng = random.Random(7)
    ids: list[str] = []
    while len(ids) < 300:
        candidate = "".join(rng.choice("0123456789") for _ in range(13))
        if idnr.is_valid(candidate) and candidate[0] != "4":
            ids.append(candidate)
    flagged = [i for i in ids if accounts(f"ID number {i} on file.")]
    assert flagged == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Routing number 021-000-021, account 12345678", "021-000-021"),
        ("ABA 021000021", "021000021"),
        ("Your account number is 12345678.", "12345678"),
        ("Sort code\t12-34-56", "12-34-56"),  # label and value in separate cells
        ("Sort code:\n12-34-56", "12-34-56"),  # value below its label
    ],
)
def test_labelled_numbers(text: str, value: str) -> None:
    assert value in accounts(text)


def test_pyap_offsets_survive_its_normalisation() -> None:
    text = "Paid 1,000 , 2,000,  and   3,500 to 12  Elm Street,Leeds LS1 4DY now"
    clean, where = normalised_with_map(text)
    assert clean == "Paid 1, 000, 2, 000, and 3, 500 to 12 Elm Street, Leeds LS1 4DY now"
    assert all(text[w] == c or c in ", " for c, w in zip(clean, where, strict=True))
    found = {f.value for f in AddressRecognizer().find(text)}
    assert "12  Elm Street,Leeds LS1 4DY" in found


@pytest.mark.parametrize(
    ("text", "address"),
    [
        (
            "Ms A Okafor\nPO Box 4411\nHarbour House\n12 Quay Road\nBristol BS1 4DY\nDear Ms A",
            "PO Box 4411\nHarbour House\n12 Quay Road\nBristol BS1 4DY",
        ),
        (
            "Rose Cottage\nMill Lane\nYork YO1 7HH\nDear Sir",
            "Rose Cottage\nMill Lane\nYork YO1 7HH",
        ),
    ],
)
def test_address_blocks_are_taken_whole(text: str, address: str) -> None:
    spans = [(f.start, f.end) for f in AddressRecognizer().find(text)]
    start = text.index(address)
    covered = {i for s, e in spans for i in range(s, e)}
    wanted = {start + k for k, c in enumerate(address) if c != "\n"}
    assert wanted <= covered  # every line of the block, each found whole
    assert not covered & set(range(text.index("Dear"), len(text)))


def test_a_date_beside_an_address_block_is_no_address() -> None:
    text = "Flat 4, Beacon Court\t3 April 2026\n161 Orchard Way\nStirling FK8 1QE"
    found = " | ".join(f.value for f in AddressRecognizer().find(text))
    assert "Flat 4, Beacon Court" in found and "April" not in found


def test_an_iban_is_not_an_address() -> None:
    detector = Detector.for_classes(["address", "account-number"])
    found = detector.find_all(f"Bank details - IBAN: {grouped(GB)}\nThank you")
    assert [f.kind for f in found] == ["account-number"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Dear José Álvarez, thank you.", "José Álvarez"),
        ("dear Zoë Nguyễn,", "Zoë Nguyễn"),
        ("My name is Øyvind Şahin and I called.", "Øyvind Şahin"),
        ("Hi, my name is Kwabena Mensah.", "Kwabena Mensah"),
        ("OKAFOR: We were never told.\nREPORTER: Never?\nOKAFOR: Never.", "OKAFOR"),
        ("Wei Zhang: I agree.", "Wei Zhang"),
        ("Attn: Maria de la Cruz", "Maria de la Cruz"),
        ("Payee\tADEBAYO OLUSEGUN\n", "ADEBAYO OLUSEGUN"),
    ],
)
def test_cue_names_in_any_script_and_case(text: str, name: str) -> None:
    assert name in [f.value for f in NameRecognizer().find(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Ship to 12 Elm Dr Springfield",  # Dr as Drive
        "INTERVIEWER: When did it start?\nINTERVIEWER: And then?",  # a role, not a person
        "FAX: 0113 496 0000",  # a field, said once
        "Account Number: 12345678",
        "Sort Code: 12-34-56",
    ],
)
def test_not_names(text: str) -> None:
    assert NameRecognizer().find(text) == []


def test_every_mention_of_a_person_goes() -> None:
    text = (
        "Dear Adaeze Okafor-Bello, you joined in May. Okafor-Bello's team grew; "
        "OKAFOR-BELLO said so. Ms Okafor-Bello left. A bello is not a person."
    )
    found = Detector.for_classes(["name"]).find_all(text)
    values = [f.value for f in found]
    assert values[0] == "Adaeze Okafor-Bello"
    assert "Okafor-Bello's" in values and "OKAFOR-BELLO" in values
    assert sum("Okafor-Bello" in v for v in values) == 3
    assert not any(v.islower() for v in values)  # "a bello" is no person
    assert all(text[f.start : f.end] == f.value for f in found)


def test_name_tokens_leave_titles_and_particles() -> None:
    assert name_tokens(["Dr Maria de la Cruz's", "Mr. Wei Zhang"]) == {
        "maria",
        "cruz",
        "wei",
        "zhang",
    }


def test_account_numbers_recur_with_and_without_spaces() -> None:
    text = f"IBAN {grouped(GB)} ... later {GB} and {grouped(GB).lower()}"
    assert len(occurrences(text, [GB], 6)) == 3


def _words(line: str) -> list[Word]:
    out = []
    x = 0.0
    for text in line.split():
        out.append(Word(text, 95.0, Box(x, 0, x + 10 * len(text), 20), (x, 16), 10 * len(text), 20))
        x += 10 * len(text) + 10
    return out


def test_mentions_on_a_page_are_found_whatever_punctuation_holds_them() -> None:
    words = _words(
        'We thanked Okafor! Then "Okafor" (Okafor) [Okafor] \u2018Okafor\u2019s\u2019 '
        "\u2014Okafor Okafor\u2026 \u00abOkafor\u00bb OKAFOR-BELLO okafor"
    )
    covered = covered_words(words, [], (), name_tokens(["Adaeze Okafor"]))
    assert sorted(words[i].text for i in covered) == sorted(
        w.text for w in words if "kafor" in w.text.casefold() and w.text[0] != "o"
    )
    assert len(covered) == 9


def test_a_title_and_the_given_name_before_a_found_surname_go_with_it() -> None:
    words = _words("Yesterday Dr Zdeněk Novák said. Novák agreed.")
    covered = covered_words(words, [], (), name_tokens(["Novák"]))
    assert [words[i].text for i in sorted(covered)] == ["Dr", "Zdeněk", "Novák", "Novák"]


def test_folded_letters_keep_their_offsets() -> None:
    text = "Weiß Account number: 12345678 paid, see 12345678 later. Straße"
    found = Detector.for_classes(["account-number"]).find_all(text)
    assert [(f.start, f.end) for f in found] == [(21, 29), (40, 48)]


def test_the_surname_after_a_found_given_name_goes_with_it() -> None:
    words = _words("Yesterday Mikael Sjöberg met Okafor. Mikael Holdings paid.")
    hit = Hit(Finding("name", 0, 0, "Mikael", "ner"), (1,))
    covered = covered_words(words, [hit], (), name_tokens(["Mikael"]))
    # the surname after the given name goes; an organisation's word after it does not
    assert [words[i].text for i in sorted(covered)] == ["Mikael", "Sjöberg", "Mikael"]


@pytest.mark.parametrize(
    "text",
    ["We met at 238 Foundry Lane,\nOban last week.", "They lived at 238\nFoundry Lane, Oban."],
)
def test_an_address_wrapped_in_a_column_is_one_address(text: str) -> None:
    found = [f.value for f in AddressRecognizer().find(text)]
    assert any("238" in v and "Oban" in v for v in found)


def test_form_name_fields_and_not_their_labels() -> None:
    text = "Surname\tCastañeda\nForename\tXimena\nWhat is your surname? Let me see."
    found = [(f.value, text[f.start : f.end]) for f in NameRecognizer().find(text)]
    assert [v for v, _ in found] == ["Castañeda", "Ximena"]
