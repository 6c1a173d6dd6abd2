"""Static assets from installed packages (Swagger UI, Plotly.js, NanumGothic slices, the pages' CSS/JS),
served with a content hash in the URL, ``Cache-Control: immutable`` and a brotli and a gzip copy made once per
worker (brotli: Plotly.js 1.23 MB instead of 1.47 MB with gzip).

Starlette's GZipMiddleware would compress the 4.6 MiB Plotly bundle on every request; here each file is
read and compressed once, then served from memory with an ETag.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

import brotli
from fastapi import Request
from fastapi.responses import Response

LONG_CACHE = "public, max-age=31536000, immutable"


@dataclass
class _Asset:
    source: Traversable | Path
    media: str
    transform: Callable[[bytes], bytes] | None = None
    make: Callable[[], bytes] | None = None
    version: str = ""
    body: bytes | None = None
    gz: bytes | None = None
    br: bytes | None = None
    etag: str = ""


class AssetStore:
    """Name → file; the bytes are loaded (and gzipped) on first use."""

    def __init__(self) -> None:
        self._files: dict[str, _Asset] = {}

    def add(self, name: str, source: Traversable | Path, media: str,
            transform: Callable[[bytes], bytes] | None = None) -> None:
        """Serve ``source`` as ``name``; ``transform`` (run once) may rewrite the bytes first."""
        self._files[name] = _Asset(source, media, transform)

    def add_made(self, name: str, make: Callable[[], bytes], media: str, version: str) -> None:
        """Serve what ``make()`` returns (called on the first request, not before) under a version known now,
        so a page can link the file without building it (the Hangul font slices)."""
        self._files[name] = _Asset(Path(), media, make=make, version=version)

    def _load(self, name: str) -> _Asset | None:
        item = self._files.get(name)
        if item is not None and item.body is None:
            if item.make is not None:
                item.body = item.make()
                item.etag = f'"{item.version}"'
            else:
                raw = item.source.read_bytes()
                item.body = item.transform(raw) if item.transform else raw
                item.etag = '"' + hashlib.sha256(item.body).hexdigest()[:20] + '"'
            if not item.media.startswith(("image/png", "font/woff2")):
                item.gz = gzip.compress(item.body, compresslevel=6, mtime=0)
                item.br = brotli.compress(item.body, quality=9)
        return item

    def url(self, name: str) -> str:
        """The URL with a version (the content hash), so a cached copy is never stale."""
        made = self._files.get(name)
        if made is not None and made.make is not None:
            return f"/assets/{name}?v={made.version[:12]}"
        item = self._load(name)
        version = item.etag.strip('"')[:12] if item else "0"
        return f"/assets/{name}?v={version}"

    def response(self, name: str, request: Request) -> Response:
        item = self._load(name)
        if item is None or item.body is None:
            return Response('{"error":"not_found","detail":"no such resource"}', 404,
                            media_type="application/json")
        headers = {"Cache-Control": LONG_CACHE, "ETag": item.etag, "Vary": "Accept-Encoding"}
        if request.headers.get("if-none-match") == item.etag:
            return Response(status_code=304, headers=headers)
        accepted = request.headers.get("accept-encoding", "")
        if item.br is not None and "br" in accepted:  # browsers offer br over HTTPS and on localhost
            return Response(item.br, media_type=item.media, headers={**headers, "Content-Encoding": "br"})
        if item.gz is not None and "gzip" in accepted:
            return Response(item.gz, media_type=item.media, headers={**headers, "Content-Encoding": "gzip"})
        return Response(item.body, media_type=item.media, headers=headers)
