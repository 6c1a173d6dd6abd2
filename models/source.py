"""Where a model comes from: a local folder, the local Hugging Face cache, or the hub, checked in that order.

Many users work on separated networks (망분리) where the hub cannot be reached. There, ``from_pretrained``
spends most of a minute retrying and ends in a raw ``OSError`` traceback. Instead, a hub id that is not in
the local cache is refused before any download starts when the hub is unreachable (``HF_HUB_OFFLINE=1``, or a
quick request to the endpoint fails), with one message saying how to bring the model over. A name that
looks like a path (``runs/x/final``) but names no folder is reported as a missing folder, never tried on the hub.

The reachability probe uses the standard library's ``urllib`` (it honours ``HTTPS_PROXY``), so it needs no
particular version of the hub client's HTTP stack. Environment variables are read at call time.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_TIMEOUT_S = 4.0
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_TRUE = {"1", "true", "yes", "on"}


class ModelNotAvailable(FileNotFoundError):
    """A model (or tokenizer, judge, adapter) is neither on this machine nor reachable; the message says how to fix it."""


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` should be given for a name the user typed."""

    name: str
    path: str
    """A local folder (a cached hub model's snapshot folder too), or a hub id to download."""
    hub_id: str | None = None
    """The hub id the name stands for, when it stands for one."""
    cached: bool = False
    """The hub id was found in the local cache: ``path`` is its snapshot folder."""
    cache_dir: str | None = None

    def load_kwargs(self) -> dict[str, Any]:
        """``from_pretrained`` arguments: the cache the environment names, when downloading."""
        return {"cache_dir": self.cache_dir} if self.hub_id is not None and not self.cached else {}


def hub_cache_dir() -> str:
    """The Hugging Face hub cache as the environment names it now (``HF_HUB_CACHE``, ``HF_HOME``, XDG)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.path.expanduser(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "huggingface"
    )
    return os.path.join(os.path.expanduser(home), "hub")


def offline_requested() -> bool:
    return any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_unreachable_reason(hub_id: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the hub cannot be used now, or None when it answers as the hub does (whatever the status).

    A hub answer is JSON (a 404 for an unknown id too, with ``X-Error-Code``); a firewall or proxy page is
    not. The request runs in a daemon thread, so a resolver that hangs cannot hold the caller past ``timeout``.
    """
    if offline_requested():
        return "HF_HUB_OFFLINE=1 is set"
    endpoint = hub_endpoint()
    result: list[str | None] = []
    worker = threading.Thread(target=lambda: result.append(_probe(endpoint, hub_id, timeout)), daemon=True)
    worker.start()
    worker.join(timeout + 1.0)
    return result[0] if result else f"{endpoint} did not answer within {timeout + 1.0:.0f} s"


def _probe(endpoint: str, hub_id: str, timeout: float) -> str | None:
    url = f"{endpoint}/api/models/{hub_id}"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            status, headers = resp.status, resp.headers
    except urllib.error.HTTPError as exc:
        status, headers = exc.code, exc.headers
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"{endpoint} did not answer ({getattr(exc, 'reason', exc)})"
    if headers.get("X-Error-Code") or "json" in (headers.get("Content-Type") or ""):
        return None
    server = headers.get("Server")
    return (
        f"{endpoint} answered HTTP {status}{f' from {server}' if server else ''}, not as the hub does "
        "(a proxy or firewall in the way?)"
    )


def looks_like_path(name: str) -> bool:
    """A name meant as a folder: absolute, ./ ../ ~, a backslash, two or more slashes, or a first part that exists."""
    if name.startswith(("/", "./", "../", "~", ".\\")) or "\\" in name or name.endswith("/"):
        return True
    parts = name.split("/")
    if len(parts) > 2 or "" in parts:
        return True
    return len(parts) == 2 and Path(parts[0]).is_dir()


def cached_snapshot(hub_id: str, filename: str, cache_dir: str) -> str | None:
    """The snapshot folder of ``hub_id`` in the cache when it holds ``filename``; else None.

    Loading from this folder (not from the hub id with ``local_files_only``) keeps every lookup local:
    transformers 5 still asks the hub for ``adapter_config.json`` of a hub id, retrying for most of a minute.
    """
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(hub_id, filename, cache_dir=cache_dir)
    except Exception:  # an id the hub client rejects is simply not cached
        return None
    return str(Path(found).parent) if isinstance(found, str) else None


def missing_folder_message(name: str, role: str, flag: str) -> str:
    return (
        f"{role} folder {name} does not exist (looked for {Path(name).expanduser().absolute()}). "
        f"Pass {flag} an existing folder (e.g. a run's final/), a preset (`evaluator model presets`), "
        "`tiny`, or a hub id such as Qwen/Qwen3-0.6B"
    )


def unavailable_message(name: str, hub_id: str, reason: str, role: str, flag: str, cache_dir: str) -> str:
    folder = hub_id.rsplit("/", 1)[-1]
    shown = name if name == hub_id else f"{name} ({hub_id})"
    return (
        f"{role} {shown} is not on this machine (no such folder, not in the Hugging Face cache {cache_dir}) "
        f"and the Hugging Face hub cannot be reached: {reason}. On a machine with internet, run "
        f"`hf download {hub_id} --local-dir {folder}`, copy the folder here and pass {flag} /path/to/{folder}; "
        "or copy that machine's Hugging Face cache folder here and set HF_HOME to it"
    )


def locate(
    name: str, hub_id: str | None = None, *, role: str = "model", flag: str = "--model", need: str = "config.json"
) -> ModelSource:
    """Find ``name`` locally first; a hub id not in the cache must have a reachable hub, or this raises.

    ``hub_id`` is what a preset maps the name to; ``need`` is the file whose presence in the cache counts
    (``config.json`` for weights, ``tokenizer_config.json`` for a tokenizer).
    """
    target = hub_id or name
    local = Path(os.path.expanduser(target))
    if hub_id is None and local.exists():
        if not local.is_dir():
            raise ModelNotAvailable(f"{role} {name} is a file; pass the folder that holds config.json")
        return ModelSource(name=name, path=str(local))
    if hub_id is None and (looks_like_path(name) or not _HUB_ID.match(name)):
        raise ModelNotAvailable(missing_folder_message(name, role, flag))
    cache = hub_cache_dir()
    snapshot = cached_snapshot(target, need, cache)
    if snapshot is not None:
        return ModelSource(name=name, path=snapshot, hub_id=target, cached=True, cache_dir=cache)
    reason = hub_unreachable_reason(target)
    if reason is not None:
        raise ModelNotAvailable(unavailable_message(name, target, reason, role, flag, cache))
    return ModelSource(name=name, path=target, hub_id=target, cache_dir=cache)
