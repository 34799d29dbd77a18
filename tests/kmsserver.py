"""moto's KMS as a real HTTP endpoint for the tests, behind a small front that the service talks
to (``KmsServer.url``).

moto_server runs as a subprocess (like ``tests/s3server.py``). The front does three things moto
alone cannot:

- it holds the key state as AWS does: moto 5.2 answers ``Decrypt`` and ``GenerateDataKey`` even
  for a disabled key or one pending deletion, so the front asks moto (``DescribeKey``) for the
  key's state and answers ``DisabledException`` / ``KMSInvalidStateException`` (the shapes of
  the AWS KMS API reference) — the key is disabled with moto's own ``DisableKey``;
- it can go down (its socket closed: connection refused) and come back on the same port, while
  the moto process behind it keeps its keys (a restarted moto would be another KMS, with none);
- it counts the calls by operation and keeps every plaintext data key the KMS handed out, so a
  test can look for them where they must never be.
"""

from __future__ import annotations

import base64
import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tests.s3server import CREDENTIALS, free_port, moto_endpoint

_STATE_ERRORS = {
    "Disabled": ("DisabledException", "{} is disabled."),
    "PendingDeletion": ("KMSInvalidStateException", "{} is pending deletion."),
}


class KmsServer:
    def __init__(self, moto_url: str) -> None:
        self.moto_url = moto_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.calls: Counter[str] = Counter()
        self.plaintexts: list[bytes] = []  # every data key the KMS handed out in the clear
        self.gone = threading.Event()  # set while the front is down
        self._http = httpx.Client(timeout=30)
        self._admin = self.client(moto_url)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.start()

    def client(self, endpoint: str | None = None) -> Any:
        from pressroom.storage.kms import make_client

        return make_client(endpoint or self.url, **CREDENTIALS)

    def new_key(self) -> str:
        """A fresh symmetric key; its ARN."""
        return str(self._admin.create_key()["KeyMetadata"]["Arn"])

    def disable(self, key: str) -> None:
        self._admin.disable_key(KeyId=key.rsplit("/", 1)[-1])  # moto wants the bare id here

    def enable(self, key: str) -> None:
        self._admin.enable_key(KeyId=key.rsplit("/", 1)[-1])

    def env(self, key: str) -> dict[str, str]:
        """What an operator would set for a process using this key."""
        return {
            "PRESSROOM_KMS_KEY_ID": key,
            "PRESSROOM_KMS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
            "AWS_DEFAULT_REGION": CREDENTIALS["region_name"],
        }

    def _refusal(self, body: dict[str, Any]) -> tuple[str, str] | None:
        key = body.get("KeyId")
        if not key:
            return None
        state = self._admin.describe_key(KeyId=key)["KeyMetadata"]["KeyState"]
        found = _STATE_ERRORS.get(state)
        return None if found is None else (found[0], found[1].format(key))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        front = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                operation = (self.headers.get("X-Amz-Target") or "").rsplit(".", 1)[-1]
                front.calls[operation] += 1
                try:
                    refusal = front._refusal(json.loads(raw or b"{}"))
                except Exception:  # an unknown key: moto answers that itself
                    refusal = None
                if refusal is not None:
                    self._answer(400, json.dumps({"__type": refusal[0], "message": refusal[1]}))
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                got = front._http.post(front.moto_url + self.path, content=raw, headers=headers)
                if got.status_code == 200 and "Plaintext" in got.text:
                    front.plaintexts.append(base64.b64decode(got.json()["Plaintext"]))
                self._answer(got.status_code, got.text)

            def _answer(self, status: int, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def start(self) -> None:
        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.gone.clear()

    def stop(self) -> None:
        """The KMS endpoint goes away: connections are refused until ``start``."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.gone.set()

    def close(self) -> None:
        self.stop()
        self._http.close()
        self._admin.close()


@contextmanager
def running_kms() -> Iterator[KmsServer]:
    with moto_endpoint() as url:
        kms = KmsServer(url)
        try:
            yield kms
        finally:
            kms.close()
