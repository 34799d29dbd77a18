"""A small typed client for the service's HTTP API (submit, get, wait, download, list, cancel),
and `pressroom submit` on top of it: upload files, follow them to the end, fetch the results."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from pressroom.fsutil import escaped
from pressroom.hints import for_cli
from pressroom.settings import Settings

EXIT = {"complete": 0, "rejected": 2, "review": 3}
EXIT_TEMPORARY = 75
TERMINAL = frozenset(EXIT)


class ApiError(Exception):
    """Every refusal the client meets, as one class: the problem's ``code`` and ``detail`` and
    the HTTP ``status``; a service it could not reach is ``UNAVAILABLE`` with status None."""

    def __init__(self, code: str, detail: str, status: int | None) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.status = status

    @classmethod
    def of(cls, response: httpx.Response) -> ApiError:
        try:
            problem = response.json()  # RFC 9457, with our code
            return cls(str(problem["code"]), str(problem["detail"]), response.status_code)
        except (ValueError, KeyError, TypeError):
            return cls(f"HTTP_{response.status_code}", response.text[:200], response.status_code)

    @property
    def temporary(self) -> bool:
        """Whether the same request may succeed later (unreachable, 429, 503)."""
        return self.status in (None, 429, 503)


@dataclass(frozen=True, slots=True)
class RemoteJob:
    """A job as ``GET /v1/jobs/{id}`` shows it; ``data`` holds every field of that JSON."""

    id: str
    state: str
    stage: str | None
    lane: str
    reason: str | None
    message: str | None
    attempts: int
    pages: int | None
    created_at: float
    finished_at: float | None
    artifact_url: str | None
    data: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, data: dict[str, Any]) -> RemoteJob:
        return cls(
            id=str(data["id"]),
            state=str(data["state"]),
            stage=data.get("stage"),
            lane=str(data.get("lane")),
            reason=data.get("reason"),
            message=data.get("message"),
            attempts=int(data.get("attempts") or 0),
            pages=data.get("pages"),
            created_at=float(data.get("created_at") or 0.0),
            finished_at=data.get("finished_at"),
            artifact_url=data.get("artifact_url"),
            data=data,
        )

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL


class PressroomClient:
    """One service, one API key. Every method raises ``ApiError`` for a refusal or an
    unreachable service (``wait`` raises ``TimeoutError`` past its time). ``http``: an
    ``httpx.Client`` to talk through instead (tests pass the app's test client)."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        timeout_s: float = 60.0,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._http = http or httpx.Client(base_url=url.rstrip("/"), timeout=timeout_s)
        # named in an unreachable service's error (never a link: a signed one is a secret)
        self.base_url = str(self._http.base_url).rstrip("/") or url.rstrip("/")
        self._auth = {"Authorization": f"Bearer {key}"}
        self._sleep = sleep

    def __enter__(self) -> PressroomClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, url: str, ok: tuple[int, ...] = (200,), **kw: Any) -> Any:
        """One request; the transport's failures become ``ApiError`` here and only here."""
        headers = {**self._auth, **kw.pop("headers", {})}
        try:
            response = self._http.request(method, url, headers=headers, **kw)
        except httpx.TransportError as exc:
            raise ApiError("UNAVAILABLE", _unreachable(self.base_url, exc), None) from exc
        if response.status_code not in ok:
            raise ApiError.of(response)
        return response

    def submit(
        self,
        file: Path | BinaryIO,
        *,
        template: str | None = None,
        title: str | None = None,
        lane: str | None = None,
        redact: str | None = None,
        keep_pixels: bool = False,
        review: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
        output_type: str | None = None,
        sidecar: bool | None = None,
        allow_no_text: bool = False,
        optimize: int = 0,
        label: str | None = None,
        languages: str | None = None,
        deadline: float | None = None,
        customer: str | None = None,
        ocr: str | None = None,
    ) -> RemoteJob:
        """Upload one file. Its local name is not sent, only ``label`` when given (``pressroom
        submit`` gives the file's name for a plain job unless told not to, see ``job_label``).
        ``output_type`` and ``sidecar`` None: the template's default."""
        fields = {
            "template": template,
            "title": title,
            "label": label,
            "lane": lane,
            "redact": redact,
            "keep_pixels": "true" if keep_pixels else None,
            "review": review,
            "webhook_url": webhook_url,
            "output_type": output_type,
            "sidecar": None if sidecar is None else ("true" if sidecar else "false"),
            "allow_no_text": "true" if allow_no_text else None,
            "optimize": str(optimize) if optimize else None,
            "languages": languages,
            "ocr": ocr if ocr != "skip" else None,
            "deadline": f"{deadline:g}" if deadline is not None else None,
            "customer": customer,
        }
        data = {k: v for k, v in fields.items() if v}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        if isinstance(file, Path):
            with file.open("rb") as fh:
                response = self._upload(fh, data, headers)
        else:
            response = self._upload(file, data, headers)
        return RemoteJob.of(response.json())

    def _upload(self, fh: BinaryIO, data: dict[str, str], headers: dict[str, str]) -> Any:
        return self._call(
            "POST",
            "/v1/jobs",
            ok=(200, 202),
            files={"file": ("upload", fh)},
            data=data,
            headers=headers,
        )

    def get(self, job_id: str) -> RemoteJob:
        return RemoteJob.of(self._call("GET", f"/v1/jobs/{job_id}").json())

    def wait(
        self,
        job_id: str,
        *,
        timeout_s: float = 3600.0,
        on_poll: Callable[[RemoteJob], None] | None = None,
    ) -> RemoteJob:
        """Poll until the job ends (complete, rejected or held for review), backing off from
        half a second to three; ``on_poll`` sees each answer."""
        start = time.monotonic()
        delay = 0.5
        while True:
            job = self.get(job_id)
            if on_poll is not None:
                on_poll(job)
            if job.terminal:
                return job
            if time.monotonic() - start > timeout_s:
                raise TimeoutError(job_id)
            self._sleep(delay)
            delay = min(delay * 1.5, 3.0)

    def download(
        self,
        job: RemoteJob | str,
        dest: Path,
        *,
        sidecar: bool = False,
        mode: int | None = None,
        group: int = -1,
    ) -> Path:
        """A complete job's output (or a signed link) to ``dest``, written whole or not at all;
        with ``sidecar``, the job's sidecar text instead. It is written to a file of a random
        name made beside ``dest`` (``O_EXCL|O_NOFOLLOW``: never through a link someone put
        there), given ``mode`` (None: a new file's, by the umask) and ``group`` on the open
        file, then renamed into place."""
        if isinstance(job, RemoteJob):
            url = job.data.get("sidecar_url") if sidecar else job.artifact_url
        else:
            url = job
        if url is None:
            raise ApiError("NOT_FOUND", "the job has no artifact", None)
        fd, name = tempfile.mkstemp(prefix=".pressroom-", suffix=".part", dir=dest.parent)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                # the link carries its own signature: no key goes with it, nor to a bucket
                # after a redirect
                with self._http.stream("GET", url, follow_redirects=True) as response:
                    if response.status_code != 200:
                        response.read()
                        raise ApiError.of(response)
                    for block in response.iter_bytes():
                        out.write(block)
                out.flush()
                os.fchmod(out.fileno(), _new_file_mode() if mode is None else mode)
                if group >= 0:
                    with contextlib.suppress(OSError):
                        os.fchown(out.fileno(), -1, group)
            tmp.replace(dest)
        except httpx.TransportError as exc:
            # a presigned link names the bucket's host: that, never the link's signature
            where = httpx.URL(url)
            host = f"{where.scheme}://{where.netloc.decode()}" if where.is_absolute_url else ""
            raise ApiError("UNAVAILABLE", _unreachable(host or self.base_url, exc), None) from exc
        finally:
            tmp.unlink(missing_ok=True)
        return dest

    def list(
        self,
        *,
        state: str | None = None,
        lane: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        page_size: int | None = None,
        label: str | None = None,
    ) -> Iterator[RemoteJob]:
        """The key's jobs, newest first, every page in turn (following ``next``)."""
        params = {
            "label": label,
            "state": state,
            "lane": lane,
            "created_after": created_after,
            "created_before": created_before,
            "limit": page_size,
        }
        url: str | None = "/v1/jobs"
        query: dict[str, Any] | None = {k: v for k, v in params.items() if v is not None}
        while url is not None:
            page = self._call("GET", url, params=query).json()
            for item in page["jobs"]:
                yield RemoteJob.of(item)
            url, query = page["next"], None  # the next link carries the query and the cursor

    def cancel(self, job_id: str) -> RemoteJob:
        """Cancel the job: it is ``rejected``/``CANCELLED`` when this returns, or (still
        running) stops at its next stage boundary; ``wait`` for its end."""
        return RemoteJob.of(self._call("DELETE", f"/v1/jobs/{job_id}", ok=(200, 202)).json())

    def delete_artifact(self, job_id: str) -> RemoteJob:
        """Delete a complete job's output before its retention ends."""
        return RemoteJob.of(self._call("DELETE", f"/v1/jobs/{job_id}/artifact").json())


# --- `pressroom submit` ---------------------------------------------------------------------


@dataclass
class SubmitOptions:
    url: str
    key: str
    template: str | None = None
    title: str | None = None
    lane: str | None = None
    redact: str | None = None
    keep_pixels: bool = False
    review: str | None = None
    wait: bool = False
    outdir: Path | None = None
    timeout_s: float = 3600.0
    output_type: str | None = None
    sidecar: bool | None = None
    allow_no_text: bool = False
    optimize: int = 0
    label: str | None = None  # every file's label, {name} its name; None: see job_label
    send_names: bool = True  # False (--no-label): no label at all
    languages: str | None = None  # -l: OCR languages; None: the template's or the service's
    ocr: str = "skip"  # --ocr: what OCR does with PDF pages that carry text
    webhook_url: str | None = None
    deadline: float | None = None  # seconds from acceptance
    customer: str | None = None
    # with several files, file N (from 1) is sent as KEY:N, so a retried batch repeats nothing
    idempotency_key: str | None = None


def job_label(label: str | None, name: str, *, redacts: bool) -> str | None:
    """The label sent with the file ``name``: ``label`` with ``{name}`` standing for the
    file's name; without one, the file's name for a plain job and none for a redaction (a
    file is often named after the person in it, and the label names the download)."""
    if label is None:
        return None if redacts else name
    return label.replace("{name}", name)


def find_key(explicit: str | None, settings: Settings) -> str | None:
    if explicit:
        return explicit
    if settings.api_key:
        return settings.api_key
    path = settings.data_dir / "api-key"
    return path.read_text().strip() if path.is_file() else None


def _progress(label: str, start: float) -> Callable[[RemoteJob], None]:
    """The one status line a terminal shows while a job runs."""

    def show(job: RemoteJob) -> None:
        if job.terminal:
            sys.stderr.write("\r" + " " * 70 + "\r")
        else:
            sys.stderr.write(
                f"\r{label[:32]:<32} {job.state:<10} {job.stage or '':<10} "
                f"{time.monotonic() - start:6.1f}s"
            )
        sys.stderr.flush()

    return show


def _new_file_mode() -> int:
    """The mode ``open`` gives a new file under this process's umask."""
    mask = os.umask(0o077)
    os.umask(mask)
    return 0o666 & ~mask


def _unreachable(base: str, exc: Exception) -> str:
    return f"cannot reach the service at {base} ({type(exc).__name__}); is it running?"


def run_submit(files: list[Path], opts: SubmitOptions, *, http: httpx.Client | None = None) -> int:
    """Upload every file first (the queue sees the whole batch at once), then follow each."""
    worst = 0
    tty = sys.stderr.isatty()
    accepted: list[tuple[Path, str]] = []

    def refused(path: Path, code: str, message: str, exit_code: int) -> None:
        nonlocal worst
        print(escaped(f"{code}: {path.name}: {message}"), file=sys.stderr)
        worst = max(worst, exit_code)

    with PressroomClient(opts.url, opts.key, http=http) as client:
        for number, path in enumerate(files, start=1):
            idempotency = opts.idempotency_key
            if idempotency is not None and len(files) > 1:
                idempotency = f"{idempotency}:{number}"
            try:
                job_id = client.submit(
                    path,
                    template=opts.template,
                    title=opts.title,
                    lane=opts.lane,
                    redact=opts.redact,
                    keep_pixels=opts.keep_pixels,
                    review=opts.review,
                    output_type=opts.output_type,
                    sidecar=opts.sidecar,
                    allow_no_text=opts.allow_no_text,
                    optimize=opts.optimize,
                    label=(
                        job_label(opts.label, path.name, redacts=bool(opts.redact))
                        if opts.send_names
                        else None
                    ),
                    languages=opts.languages,
                    ocr=opts.ocr,
                    webhook_url=opts.webhook_url,
                    deadline=opts.deadline,
                    customer=opts.customer,
                    idempotency_key=idempotency,
                ).id
            except ApiError as exc:
                refused(path, exc.code, exc.detail, EXIT_TEMPORARY if exc.temporary else 2)
                continue
            except OSError as exc:
                refused(path, "NOT_FOUND", str(exc.strerror), 2)
                continue
            print(escaped(f"{path.name}: accepted as {job_id}"))
            accepted.append((path, job_id))
        if not opts.wait:
            return worst
        for path, job_id in accepted:
            try:
                show = _progress(escaped(path.name), time.monotonic()) if tty else None
                job = client.wait(job_id, timeout_s=opts.timeout_s, on_poll=show)
                if job.state != "complete":
                    reason = str(job.reason)
                    refused(path, reason, for_cli(reason, str(job.message)), EXIT[job.state])
                    continue
                if opts.outdir is not None:
                    opts.outdir.mkdir(parents=True, exist_ok=True)
                    dest = client.download(job, opts.outdir / (path.stem + ".pdf"))
                    if job.data.get("sidecar_url"):
                        client.download(job, dest.with_suffix(".txt"), sidecar=True)
                    print(escaped(f"{path.name}: complete, {job.pages} page(s) -> {dest}"))
                else:
                    shown = escaped(f"{path.name}: complete, {job.pages} page(s)")
                    print(f"{shown}: {job.artifact_url}")
            except ApiError as exc:
                # following a job the service took: only an unreachable service is temporary
                refused(path, exc.code, exc.detail, EXIT_TEMPORARY if exc.status is None else 2)
            except TimeoutError as exc:
                refused(path, "UNAVAILABLE", type(exc).__name__, EXIT_TEMPORARY)
    return worst
