"""`pressroom submit`: upload files, follow them to the end, fetch the results."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from pressroom.settings import Settings

EXIT = {"complete": 0, "rejected": 2, "review": 3}
EXIT_TEMPORARY = 75


@dataclass
class SubmitOptions:
    url: str
    key: str
    template: str | None = None
    title: str | None = None
    lane: str | None = None
    redact: str | None = None
    keep_pixels: bool = False
    wait: bool = False
    outdir: Path | None = None
    timeout_s: float = 3600.0


def find_key(explicit: str | None, settings: Settings) -> str | None:
    if explicit:
        return explicit
    if settings.api_key:
        return settings.api_key
    path = settings.data_dir / "api-key"
    return path.read_text().strip() if path.is_file() else None


def submit_one(client: httpx.Client, path: Path, opts: SubmitOptions) -> dict[str, Any]:
    data = {
        k: v
        for k, v in (
            ("template", opts.template),
            ("title", opts.title),
            ("lane", opts.lane),
            ("redact", opts.redact),
            ("keep_pixels", "true" if opts.keep_pixels else None),
        )
        if v
    }
    with path.open("rb") as fh:
        # the server never sees the local file name
        response = client.post("/v1/jobs", files={"file": ("upload", fh)}, data=data)
    if response.status_code != 202:
        raise RequestRefused(response)
    body: dict[str, Any] = response.json()
    return body


class RequestRefused(Exception):
    def __init__(self, response: httpx.Response) -> None:
        try:
            err = response.json()  # an RFC 9457 problem with our code
            self.code, self.message = str(err["code"]), str(err["detail"])
        except (ValueError, KeyError, TypeError):
            self.code, self.message = f"HTTP_{response.status_code}", response.text[:200]
        self.status = response.status_code
        super().__init__(f"{self.code}: {self.message}")


def follow(
    client: httpx.Client, job_id: str, label: str, opts: SubmitOptions, tty: bool
) -> dict[str, Any]:
    start = time.monotonic()
    delay = 0.5
    while True:
        response = client.get(f"/v1/jobs/{job_id}")
        if response.status_code != 200:
            raise RequestRefused(response)
        job: dict[str, Any] = response.json()
        if tty:
            stage = job.get("stage") or ""
            sys.stderr.write(
                f"\r{label[:32]:<32} {job['state']:<10} {stage:<10} "
                f"{time.monotonic() - start:6.1f}s"
            )
            sys.stderr.flush()
        if job["state"] in EXIT:
            if tty:
                sys.stderr.write("\r" + " " * 70 + "\r")
            return job
        if time.monotonic() - start > opts.timeout_s:
            raise TimeoutError(job_id)
        time.sleep(delay)
        delay = min(delay * 1.5, 3.0)


def download(client: httpx.Client, url: str, dest: Path) -> None:
    tmp = dest.with_name(f".{dest.name}.part")
    try:
        with client.stream("GET", url) as response:
            if response.status_code != 200:
                response.read()
                raise RequestRefused(response)
            with tmp.open("wb") as out:
                for block in response.iter_bytes():
                    out.write(block)
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)


def run_submit(files: list[Path], opts: SubmitOptions) -> int:
    """Upload every file first (the queue sees the whole batch at once), then follow each."""
    worst = 0
    tty = sys.stderr.isatty()
    headers = {"Authorization": f"Bearer {opts.key}"}
    accepted: list[tuple[Path, str]] = []

    def refused(path: Path, code: str, message: str, exit_code: int) -> None:
        nonlocal worst
        print(f"{code}: {path.name}: {message}", file=sys.stderr)
        worst = max(worst, exit_code)

    with httpx.Client(base_url=opts.url, headers=headers, timeout=60.0) as client:
        for path in files:
            try:
                job_id = str(submit_one(client, path, opts)["id"])
            except RequestRefused as exc:
                refused(
                    path, exc.code, exc.message, EXIT_TEMPORARY if exc.status in (429, 503) else 2
                )
                continue
            except httpx.TransportError as exc:
                refused(path, "UNAVAILABLE", type(exc).__name__, EXIT_TEMPORARY)
                continue
            except OSError as exc:
                refused(path, "NOT_FOUND", str(exc.strerror), 2)
                continue
            print(f"{path.name}: accepted as {job_id}")
            accepted.append((path, job_id))
        if not opts.wait:
            return worst
        for path, job_id in accepted:
            try:
                job = follow(client, job_id, path.name, opts, tty)
                if job["state"] != "complete":
                    refused(path, str(job["reason"]), str(job["message"]), EXIT[job["state"]])
                    continue
                if opts.outdir is not None:
                    opts.outdir.mkdir(parents=True, exist_ok=True)
                    dest = opts.outdir / (path.stem + ".pdf")
                    download(client, job["artifact_url"], dest)
                    print(f"{path.name}: complete, {job['pages']} page(s) -> {dest}")
                else:
                    print(f"{path.name}: complete, {job['pages']} page(s): {job['artifact_url']}")
            except RequestRefused as exc:
                refused(path, exc.code, exc.message, 2)
            except (httpx.TransportError, TimeoutError) as exc:
                refused(path, "UNAVAILABLE", type(exc).__name__, EXIT_TEMPORARY)
    return worst
