"""The API's documentation pages, served from the package: Swagger UI 5 (``static/swagger-ui``)
at ``/docs`` and ReDoc (``static/redoc``) at ``/redoc``, both vendored from the npm registry by
``scripts/vendor-docs.sh`` with their licences. Nothing is loaded from
another origin, the favicon included, and the pages hold no inline script — their start-up
code is a file — so the Content-Security-Policy below allows scripts from this origin only.
Users paste API keys into Swagger UI: a CDN's copy of it would see them."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from pressroom import __version__
from pressroom.errors import NotFound

STATIC = Path(__file__).resolve().parent / "static"
# styles: both bundles set element styles from script; images: Swagger UI's icons are data:
# URLs; workers: ReDoc's search index runs in a worker made from a blob
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; "
    "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
ASSET_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=86400"}
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
}


def asset_path(name: str) -> Path:
    """The file behind ``/docs/assets/NAME``: a name from these lists only, never a path."""
    if name in ("swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"):
        return STATIC / "swagger-ui" / name
    if name == "redoc.standalone.js":
        return STATIC / "redoc" / name
    if name in ("swagger-init.js", "docs.css"):
        return STATIC / name
    raise NotFound("no such documentation asset")


def _page(title: str, styles: list[str], body: str, scripts: list[str]) -> str:
    links = "".join(f'<link rel="stylesheet" href="/docs/assets/{s}">' for s in styles)
    tags = "".join(f'<script src="/docs/assets/{s}"></script>' for s in scripts)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title>"
        '<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">'
        f"{links}</head><body>{body}{tags}</body></html>"
    )


SWAGGER_PAGE = _page(
    f"Pressroom {__version__} API",
    ["swagger-ui.css", "docs.css"],
    '<div id="swagger-ui" data-spec-url="/openapi.json"></div>',
    ["swagger-ui-bundle.js", "swagger-init.js"],
)
# ReDoc reads the spec-url attribute of its element by itself: no start-up script at all
REDOC_PAGE = _page(
    f"Pressroom {__version__} API",
    ["docs.css"],
    '<redoc spec-url="/openapi.json" hide-download-button="false"></redoc>',
    ["redoc.standalone.js"],
)

router = APIRouter(include_in_schema=False)


def _enabled(request: Request) -> None:
    if not request.app.state.services.settings.api_docs:
        raise NotFound("the documentation pages are turned off (PRESSROOM_API_DOCS)")


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    _enabled(request)
    return HTMLResponse(SWAGGER_PAGE, headers=PAGE_HEADERS)


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    _enabled(request)
    return HTMLResponse(REDOC_PAGE, headers=PAGE_HEADERS)


@router.get("/docs/assets/{name}")
async def asset(request: Request, name: str) -> Response:
    _enabled(request)
    path = asset_path(name)
    return FileResponse(path, media_type=TYPES[path.suffix], headers=ASSET_HEADERS)
