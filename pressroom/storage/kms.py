"""The key-encryption key held by a KMS: the AWS KMS API through boto3 (AWS KMS, or any KMS that
speaks its API — ``PRESSROOM_KMS_ENDPOINT_URL``), with boto3's usual credentials and region.

``GenerateDataKey`` (AES_256) makes each data key, ``Decrypt`` opens one, ``Encrypt`` wraps a
known one for a re-wrap; every call carries the encryption context. The plaintext a call
returns goes to memory only.

A wrapped key names the KMS key it was made under (its ARN, in the blob's key block or the
``s2:`` value), and whoever can write the bucket or the database writes that name too: so
``Decrypt`` is asked only for a key this process accepts — the current one (as configured,
and the ARN the KMS answered with) or one listed in ``PRESSROOM_KMS_KEYS_OLD`` — and always
names it (``KeyId``), so the KMS refuses a ciphertext made under another. Any other name is
``KmsKeyRefused`` before the KMS is asked: a value sealed under a key of someone else's
choosing (one the service's role may happen to decrypt with) never opens as ours.

Fail closed: botocore's errors become ours where they are raised — a KMS that does not answer
(connection refused, timeout, throttling, its internal errors) is ``KmsUnavailable``
(transient, retried with backoff); a KMS that refuses the key (disabled, pending deletion,
access denied, unknown key, no credentials) is ``KmsKeyRefused``; a wrapped key that does not
open under its context is ``EncryptionError``. No caller falls back to plaintext.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from pressroom.errors import BadConfig, EncryptionError, KmsKeyRefused, KmsUnavailable
from pressroom.kek import Context, DataKey, Keyring, LocalMasterKey
from pressroom.settings import StorageSettings

# the KMS did not answer this time (AWS says these may be retried)
_TRANSIENT = {
    "DependencyTimeoutException",
    "KMSInternalException",
    "KeyUnavailableException",
    "ThrottlingException",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "InternalFailure",
    "RequestTimeout",
    "RequestTimeoutException",
}
# the wrapped key is not one this key and context open: tampered or moved
_INTEGRITY = {"InvalidCiphertextException", "IncorrectKeyException"}
PROBE_CONTEXT = {"pressroom": "probe"}


def make_client(endpoint_url: str = "", *, timeout_s: float = 10.0, **overrides: Any) -> Any:
    """A boto3 KMS client with short timeouts: an outage must surface as a retry, not a hung
    worker."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=min(5.0, timeout_s),
        read_timeout=timeout_s,
        retries={"max_attempts": 2, "mode": "standard"},
    )
    return boto3.session.Session().client(
        "kms", endpoint_url=endpoint_url or None, config=config, **overrides
    )


@contextlib.contextmanager
def _mapped(action: str) -> Iterator[None]:
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
    )

    try:
        yield
    except ClientError as exc:
        response = getattr(exc, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in _TRANSIENT or status >= 500:
            raise KmsUnavailable(f"the KMS did not answer {action} ({code or status})") from None
        if code in _INTEGRITY:
            raise EncryptionError(f"a wrapped data key does not open ({code})") from None
        raise KmsKeyRefused(f"the KMS refused {action} ({code or status})") from None
    except (NoCredentialsError, PartialCredentialsError, NoRegionError) as exc:
        raise KmsKeyRefused(f"the KMS cannot be asked ({type(exc).__name__})") from None
    except BotoCoreError as exc:  # connection refused or reset, timeouts, a garbled answer
        raise KmsUnavailable(f"the KMS did not answer {action} ({type(exc).__name__})") from None


class KmsKey:
    """``KeyEncryptionKey`` over the AWS KMS API. ``key_id`` is what the operator configured
    (a key id, an ARN, an alias); wrapped keys carry the ARN the KMS answers with."""

    kind = "kms"

    def __init__(self, key_id: str, client: Any, old: Sequence[str] = ()) -> None:
        self.key_id = key_id
        self.client = client
        self.arn: str | None = None  # learned from the first answer
        # earlier keys still accepted for reading: ids or ARNs (an alias names no key for good)
        self.old = frozenset(k.strip() for k in old if k.strip())
        self.calls = 0  # requests made (the bench and the tests count them)

    @classmethod
    def from_settings(cls, storage: StorageSettings) -> KmsKey:
        from botocore.exceptions import NoRegionError

        try:
            client = make_client(storage.kms_endpoint_url)
        except NoRegionError:
            raise BadConfig(
                "PRESSROOM_KMS_KEY_ID is set but boto3 finds no region: set AWS_REGION or "
                "AWS_DEFAULT_REGION (or a profile's region)"
            ) from None
        return cls(storage.kms_key_id.strip(), client, storage.kms_keys_old)

    def generate(self, context: Context) -> DataKey:
        self.calls += 1
        with _mapped("GenerateDataKey"):
            got = self.client.generate_data_key(
                KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=dict(context)
            )
        self.arn = str(got["KeyId"])
        return DataKey(bytes(got["Plaintext"]), bytes(got["CiphertextBlob"]), self.kind, self.arn)

    def wrap(self, plaintext: bytes, context: Context) -> DataKey:
        self.calls += 1
        with _mapped("Encrypt"):
            got = self.client.encrypt(
                KeyId=self.key_id, Plaintext=plaintext, EncryptionContext=dict(context)
            )
        self.arn = str(got["KeyId"])
        return DataKey(plaintext, bytes(got["CiphertextBlob"]), self.kind, self.arn)

    def accepts(self, key_id: str) -> bool:
        """Whether a wrapped key naming ``key_id`` may be opened here: the current key or an
        older one listed. An ARN also matches its bare key id as listed."""
        bare = key_id.rsplit(":key/", 1)[-1] if ":key/" in key_id else None
        if key_id in self.old or (bare is not None and bare in self.old):
            return True
        if key_id == self.key_id or (bare is not None and bare == self.key_id):
            return True
        if ":key/" in self.key_id:
            return False  # a key's ARN configured: it is the only name the key answers to
        if self.arn is None:
            # an alias configured: one GenerateDataKey (the permission we need anyway) tells
            # the ARN it stands for; its key is dropped
            self.generate(PROBE_CONTEXT)
        return key_id == self.arn

    def unwrap(self, key_id: str, wrapped: bytes, context: Context) -> bytes:
        if not self.accepts(key_id):
            raise KmsKeyRefused(
                "a wrapped data key names a KMS key that is neither PRESSROOM_KMS_KEY_ID nor "
                "listed in PRESSROOM_KMS_KEYS_OLD"
            )
        self.calls += 1
        with _mapped("Decrypt"):
            got = self.client.decrypt(
                CiphertextBlob=wrapped, KeyId=key_id, EncryptionContext=dict(context)
            )
        return bytes(got["Plaintext"])

    def is_current(self, key_id: str) -> bool:
        if self.arn is None:
            # one GenerateDataKey (the permission we need anyway) tells the ARN an alias or a
            # bare id stands for, and that the key is usable at all; its key is dropped
            self.generate(PROBE_CONTEXT)
        return key_id in (self.arn, self.key_id)


def keyring_from_settings(storage: StorageSettings) -> Keyring | None:
    """The keyring the settings ask for, or None when nothing is sealed: with
    ``PRESSROOM_KMS_KEY_ID`` the KMS key makes every data key (a master key, if configured,
    still reads what it sealed before); else the master key does; else encryption is off."""
    from pressroom.storage.crypto import master_keys

    masters = master_keys(storage)
    local = [LocalMasterKey(masters[0], masters[1])] if masters is not None else []
    if storage.kms_key_id.strip():
        return Keyring(KmsKey.from_settings(storage), readers=local)
    return Keyring(local[0]) if local else None
