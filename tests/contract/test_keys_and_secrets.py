"""The store's side of keys over HTTP and webhook-secret rotation, on every adapter: a key's
record by id, the secrets that sign at a given time, and rotations that never lose a secret."""

from __future__ import annotations

import threading

from pressroom.service import Services


def test_a_keys_record_by_id_live_then_revoked_never_the_secret(services: Services) -> None:
    tenancy = services.store.tenancy
    key_id, key = tenancy.new_key("acme", now=10.0, expires_at=99.0)
    record = tenancy.key(key_id)
    assert record == {
        "id": key_id,
        "tenant": "acme",
        "role": "tenant",
        "created_at": 10.0,
        "last_used_at": None,
        "expires_at": 99.0,
        "revoked_at": None,
    }
    assert key not in str(record)
    assert tenancy.revoke_key(key_id, now=20.0) == key_id
    assert tenancy.revoke_key(key_id, now=30.0) is None  # already revoked: the first time stands
    revoked = tenancy.key(key_id)
    assert revoked is not None and revoked["revoked_at"] == 20.0
    assert tenancy.key("k_000000000000") is None


def test_the_previous_secret_signs_second_until_its_overlap_ends(services: Services) -> None:
    outbox = services.store.outbox
    first = outbox.webhook_secret("acme", now=0.0)
    assert outbox.signing_secrets("acme", now=0.0) == (first,)
    second, until = outbox.rotate_webhook_secret("acme", now=100.0, overlap_s=50.0)
    assert until == 150.0 and second != first
    assert outbox.webhook_secret("acme", now=100.0) == second
    assert outbox.signing_secrets("acme", now=149.0) == (second, first)
    assert outbox.signing_secrets("acme", now=150.0) == (second,)
    third, until = outbox.rotate_webhook_secret("acme", now=120.0, overlap_s=50.0)
    assert until == 170.0
    assert outbox.signing_secrets("acme", now=121.0) == (third, second)  # the first is gone
    assert outbox.signing_secrets("other", now=0.0) == (outbox.webhook_secret("other", now=0),)


def test_a_rotation_before_any_secret_has_nothing_to_overlap(services: Services) -> None:
    outbox = services.store.outbox
    secret, until = outbox.rotate_webhook_secret("acme", now=5.0, overlap_s=50.0)
    assert until is None and outbox.signing_secrets("acme", now=6.0) == (secret,)


def test_rotations_at_once_both_stand_and_no_secret_is_lost(services: Services) -> None:
    outbox = services.store.outbox
    outbox.webhook_secret("acme", now=0.0)
    made: list[str] = []
    start = threading.Barrier(4)

    def rotate() -> None:
        start.wait()
        made.append(outbox.rotate_webhook_secret("acme", now=10.0, overlap_s=100.0)[0])

    threads = [threading.Thread(target=rotate) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    current, previous = outbox.signing_secrets("acme", now=11.0)
    # each answered secret was current in turn: the last is current, the one before signs too
    assert current in made and previous in made and current != previous
    assert len(set(made)) == 4


def test_a_desk_session_lives_until_it_ends_or_expires(services: Services) -> None:
    tenancy = services.store.tenancy
    key_id, _key = tenancy.new_key("acme", now=10.0)
    other_id, _other = tenancy.new_key("acme", now=10.0)
    sid = tenancy.open_session(key_id, now=10.0, expires=100.0)
    assert len(sid) >= 32 and sid != tenancy.open_session(key_id, now=10.0, expires=100.0)
    assert tenancy.session_live(sid, key_id, now=50.0)
    assert not tenancy.session_live(sid, other_id, now=50.0)  # bound to the key it opened for
    assert not tenancy.session_live(sid, key_id, now=100.0)  # expired
    assert not tenancy.session_live("no-such-session", key_id, now=50.0)
    tenancy.end_session(sid, now=60.0)
    assert not tenancy.session_live(sid, key_id, now=61.0)
    assert tenancy.prune_sessions(before=99.0) == 0
    assert tenancy.prune_sessions(before=101.0) == 2
