"""Blobs in an S3-compatible bucket (AWS S3, MinIO, moto): the same keys under a prefix.

Streaming both ways (multipart upload from a file, download to a file, reads in blocks): no
whole object is held in memory. Put-if-absent is a conditional write (``If-None-Match: *``),
so two workers racing to publish the same artifact leave exactly one object. Network and
server errors are transient (the job is retried with backoff); a missing key is not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import urlsplit

from pressroom.errors import BlobNotFound, StorageUnavailable
from pressroom.labels import content_disposition
from pressroom.settings import StorageSettings
from pressroom.storage import check_key

# what counts as "the storage is down for a moment" rather than "this request is wrong"
_TRANSIENT_CODES = {
    "InternalError",
    "ServiceUnavailable",
    "SlowDown",
    "RequestTimeout",
    "RequestTimeTooSkewed",
    "ConditionalRequestConflict",  # another conditional write on the key is in flight
    "503",
    "500",
    "502",
    "504",
}
_MISSING_CODES = {"NoSuchKey", "404", "NotFound"}


def parse_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` → (bucket, prefix without slashes at either end)."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError("storage URL must look like s3://bucket/prefix")
    return parts.netloc, parts.path.strip("/")


def make_client(*, timeout_s: float = 30.0, **overrides: Any) -> Any:
    """A boto3 S3 client from the usual ``AWS_*`` variables (``AWS_ENDPOINT_URL`` for MinIO),
    with short timeouts: a storage outage must surface as a retry, not a hung worker."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=min(5.0, timeout_s),
        read_timeout=timeout_s,
        retries={"max_attempts": 3, "mode": "standard"},
        s3={"addressing_style": "path"},
        signature_version="s3v4",  # presigned links too (SigV2 is retired)
    )
    return boto3.session.Session().client("s3", config=config, **overrides)


def _code(exc: Exception) -> str:
    response = getattr(exc, "response", None) or {}
    error = response.get("Error", {})
    return str(error.get("Code") or response.get("ResponseMetadata", {}).get("HTTPStatusCode"))


@contextlib.contextmanager
def _mapped(action: str) -> Iterator[None]:
    """botocore's errors as ours: missing → BlobNotFound, outage → StorageUnavailable."""
    from boto3.exceptions import RetriesExceededError, S3UploadFailedError
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except (S3UploadFailedError, RetriesExceededError) as exc:
        # boto3's transfer manager wraps what went wrong (a 503, a stall mid-body): retry
        raise StorageUnavailable(f"object storage {action} failed ({type(exc).__name__})") from None
    except ClientError as exc:
        code = _code(exc)
        if code in _MISSING_CODES:
            raise BlobNotFound("no such blob") from None
        if code in _TRANSIENT_CODES:
            raise StorageUnavailable(f"object storage {action} failed ({code})") from None
        raise
    except BotoCoreError as exc:  # connection refused, timeouts, broken responses
        raise StorageUnavailable(f"object storage {action} failed ({type(exc).__name__})") from None


class _Body:
    """A streaming object body as a context-managed binary file (reads in blocks)."""

    def __init__(self, body: Any) -> None:
        self._body = body

    def read(self, n: int = -1) -> bytes:
        with _mapped("read"):
            return cast(bytes, self._body.read(None if n < 0 else n))

    def close(self) -> None:
        self._body.close()

    def __enter__(self) -> _Body:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class S3BlobStore:
    def __init__(
        self, bucket: str, prefix: str = "", client: Any = None, presign_client: Any = None
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.client = client if client is not None else make_client()
        # signs download links for clients outside: AWS itself, or the endpoint named by
        # PRESSROOM_S3_PUBLIC_ENDPOINT (SigV4 signs the host: an internal one would not work)
        self.presign_client = presign_client

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        timeout_s: float = 30.0,
        storage: StorageSettings | None = None,
    ) -> S3BlobStore:
        storage = StorageSettings() if storage is None else storage
        bucket, prefix = parse_s3_url(url)
        client = make_client(timeout_s=timeout_s)
        public = storage.s3_public_endpoint
        if public:
            presigner = make_client(timeout_s=timeout_s, endpoint_url=public)
        elif not storage.aws_endpoint_url and not storage.aws_endpoint_url_s3:
            presigner = client  # AWS S3: its endpoint is public
        else:
            presigner = None  # a private endpoint (MinIO in a network): the API streams
        return cls(bucket, prefix, client=client, presign_client=presigner)

    def _key(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def put_file(self, key: str, path: Path) -> None:
        with _mapped("write"):
            # multipart above 8 MiB, read from the file part by part
            self.client.upload_file(str(path), self.bucket, self._key(key))

    def put_if_absent(self, key: str, path: Path) -> bool:
        from botocore.exceptions import ClientError

        try:
            with _mapped("write"), path.open("rb") as body:
                self.client.put_object(
                    Bucket=self.bucket, Key=self._key(key), Body=body, IfNoneMatch="*"
                )
            return True
        except ClientError as exc:
            if _code(exc) in {"PreconditionFailed", "412"}:
                return False  # the key exists: someone published first
            raise

    def open_versioned(self, key: str) -> tuple[BinaryIO, str]:
        """``open`` and the version read: the object's ETag."""
        with _mapped("read"):
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
        return cast(BinaryIO, _Body(response["Body"])), str(response["ETag"])

    def replace_if_version(self, key: str, path: Path, version: str) -> bool:
        """Put ``path`` at ``key`` only if the object still has the ETag ``version``
        (``If-Match``, one atomic request); False when it was deleted (404) or replaced (412)
        meanwhile. One PutObject: up to 5 GiB, as S3 allows."""
        from botocore.exceptions import ClientError

        try:
            with _mapped("write"), path.open("rb") as body:
                self.client.put_object(
                    Bucket=self.bucket, Key=self._key(key), Body=body, IfMatch=version
                )
            return True
        except BlobNotFound:
            return False
        except ClientError as exc:
            if _code(exc) in {"PreconditionFailed", "412"}:
                return False
            raise

    def get_to_path(self, key: str, dest: Path) -> None:
        with _mapped("read"):
            self.client.download_file(self.bucket, self._key(key), str(dest))

    def open(self, key: str) -> BinaryIO:
        with _mapped("read"):
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
        return cast(BinaryIO, _Body(response["Body"]))

    def size(self, key: str) -> int:
        with _mapped("read"):
            head = self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        return int(head["ContentLength"])

    def exists(self, key: str) -> bool:
        try:
            self.size(key)
        except BlobNotFound:
            return False
        return True

    def reachable(self) -> None:
        from botocore.exceptions import ClientError

        try:
            with _mapped("check"):
                self.client.head_bucket(Bucket=self.bucket)
        except BlobNotFound:
            raise StorageUnavailable("object storage check failed (no such bucket)") from None
        except ClientError as exc:  # 403 and the like: not ready either
            raise StorageUnavailable(f"object storage check failed ({_code(exc)})") from None

    def delete(self, key: str) -> None:
        with _mapped("delete"):
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def list(self, prefix: str) -> Iterator[tuple[str, float]]:
        # a prefix is a folder, as on disk: "sources" must not match "sources-old/…"
        full = self._key(prefix) + "/" if prefix else (f"{self.prefix}/" if self.prefix else "")
        strip = len(self.prefix) + 1 if self.prefix else 0
        with _mapped("list"):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=full
            )
            for page in pages:
                for item in page.get("Contents", []):
                    yield item["Key"][strip:], item["LastModified"].timestamp()

    def download_url(
        self, key: str, ttl_s: float, filename: str, media_type: str = "application/pdf"
    ) -> str | None:
        """A short-lived presigned URL straight from the bucket; None without a public
        endpoint (the API streams instead)."""
        if self.presign_client is None:
            return None
        with _mapped("presign"):
            return cast(
                str,
                self.presign_client.generate_presigned_url(
                    "get_object",
                    Params={
                        "Bucket": self.bucket,
                        "Key": self._key(key),
                        "ResponseContentType": media_type,
                        "ResponseContentDisposition": content_disposition(filename),
                    },
                    ExpiresIn=max(1, int(ttl_s)),
                ),
            )
