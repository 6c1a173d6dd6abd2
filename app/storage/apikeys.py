"""API keys: ``ev_<id>_<secret>``; only the id and a salted scrypt hash of the secret are stored.

scrypt (hashlib, a standard memory-hard KDF) with per-key salt; the comparison is constant-time. Each
verification in a worker is memoised by (key id, stored hash, HMAC of the presented secret under a random
per-process key), so the KDF runs once per key and worker; the key row itself (revoked, expiry, scope) is
read from the database on every request, so revoking takes effect at once in every worker.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from evaluator.app.storage.audit import record
from evaluator.app.storage.tables import ApiKey, FundResult

PREFIX = "ev"
KEY_RE = re.compile(r"^ev_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
_PROCESS_PEPPER = secrets.token_bytes(32)


class KeyCommandError(ValueError):
    """A key command that cannot be done (unknown id, bad date …)."""


@dataclass(frozen=True)
class Principal:
    """Who is calling and what it may see: the one declaration of scope, for keys and personal accounts alike.

    ``admin`` sees every fund and may upload and view runs (an admin key, an admin or analyst account);
    ``manager`` may also manage users and keys and read the audit log (an admin key or admin account);
    otherwise the caller sees only ``companies`` and ``funds``. ``key_id`` names the caller for rate limits
    and jobs (``user:<id>`` for an account); ``login`` is the account's login (None for a key).
    """

    key_id: str
    client: str
    admin: bool
    companies: tuple[str, ...]
    funds: tuple[str, ...]
    manager: bool = False
    login: str | None = None

    @property
    def actor(self) -> str:
        """How the audit log names the caller: the login, or ``key:<id>``."""
        return self.login if self.login else f"key:{self.key_id}"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_secret(secret: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(
        secret.encode("ascii"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32, maxmem=64 * 2**20
    )
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def _verify(secret: str, stored: str) -> bool:
    try:
        name, n, r, p, salt, digest = stored.split("$")
        if name != "scrypt":
            return False
        got = hashlib.scrypt(
            secret.encode("ascii"), salt=_unb64(salt), n=int(n), r=int(r), p=int(p), dklen=32,
            maxmem=64 * 2**20,
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, _unb64(digest))


def verify_secret(key_id: str, secret: str, stored: str) -> bool:
    tag = hmac.new(_PROCESS_PEPPER, secret.encode("ascii"), "sha256").digest()
    return _memo(key_id, stored, tag, secret)


_memo_cache: dict[tuple[str, str, bytes], bool] = {}


def _memo(key_id: str, stored: str, tag: bytes, secret: str) -> bool:
    slot = (key_id, stored, tag)
    hit = _memo_cache.get(slot)
    if hit is None:
        hit = _verify(secret, stored)
        if len(_memo_cache) > 4096:
            _memo_cache.clear()
        _memo_cache[slot] = hit
    return hit


def create_key(
    engine: Engine,
    *,
    client: str,
    companies: list[str],
    funds: list[str],
    admin: bool,
    expires_on: dt.date | None,
    allow_unknown: bool = False,
    actor: str | None = None,
) -> tuple[str, str]:
    """Store a new key; return (key id, the full key). The full key is never stored or shown again.
    A 운용사 or fund code that no stored batch knows is refused (a typo would make a key that sees nothing)
    unless ``allow_unknown`` (a key made before the client's first batch)."""
    check_scope(client, admin, companies, funds, "key")
    if expires_on is not None and expires_on < dt.datetime.now(dt.timezone.utc).date():
        raise KeyCommandError(f"--expires {expires_on} is in the past")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    with Session(engine) as session, session.begin():
        if not allow_unknown:
            check_known_scope(session, companies, funds)
        record(session, actor, "key.create", {"key_id": key_id, "client": client.strip(), "admin": admin,
                                              "companies": clean(companies), "funds": clean(funds)}, commit=False)
        session.add(
            ApiKey(
                id=key_id,
                client=client.strip(),
                secret_hash=hash_secret(secret),
                admin=admin,
                companies=clean(companies),
                funds=clean(funds),
                created_at=dt.datetime.now(dt.timezone.utc),
                expires_on=expires_on,
            )
        )
    return key_id, f"{PREFIX}_{key_id}_{secret}"


def clean(names: list[str]) -> list[str]:
    """A scope list as stored: stripped, without blanks or repeats, sorted."""
    return sorted({n.strip() for n in names if n.strip()})


def check_scope(client: str, admin: bool, companies: list[str], funds: list[str], what: str) -> None:
    """The rules a scope must follow, for a key or a client account: a client name, and either every fund
    (``admin``) or at least one company or fund."""
    if not client.strip():
        raise KeyCommandError("--client must not be empty")
    if admin and (clean(companies) or clean(funds)):
        raise KeyCommandError(f"an {what} that sees every fund takes no --company/--fund")
    if not admin and not clean(companies) and not clean(funds):
        raise KeyCommandError(f"a client {what} needs at least one --company or --fund")


def check_known_scope(session: Session, companies: list[str], funds: list[str]) -> None:
    """Raise :class:`KeyCommandError` naming every company or fund code absent from all stored batches."""
    wanted_c = {c.strip() for c in companies if c.strip()}
    wanted_f = {f.strip() for f in funds if f.strip()}
    known_c = set(session.scalars(select(FundResult.company).where(FundResult.company.in_(wanted_c)).distinct()))
    known_f = set(session.scalars(select(FundResult.fund_code).where(FundResult.fund_code.in_(wanted_f)).distinct()))
    unknown = [f"--company {c}" for c in sorted(wanted_c - known_c)] + [f"--fund {f}" for f in sorted(wanted_f - known_f)]
    if unknown:
        raise KeyCommandError(f"no stored batch knows {', '.join(unknown)} (check the spelling; "
                              "--allow-unknown to create it anyway)")


def list_keys(engine: Engine) -> list[ApiKey]:
    with Session(engine) as session:
        return list(session.scalars(select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)))


def revoke_key(engine: Engine, key_id: str, actor: str | None = None) -> bool:
    """Revoke; False when it was already revoked. Unknown ids raise."""
    with Session(engine) as session, session.begin():
        key = session.get(ApiKey, key_id)
        if key is None:
            raise KeyCommandError(f"no key with id {key_id!r} (see `evaluator keys list`)")
        if key.revoked_at is not None:
            return False
        key.revoked_at = dt.datetime.now(dt.timezone.utc)
        record(session, actor, "key.revoke", {"key_id": key_id, "client": key.client}, commit=False)
    return True


def key_state(key: ApiKey, today: dt.date | None = None) -> str:
    today = today or dt.datetime.now(dt.timezone.utc).date()
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_on is not None and key.expires_on < today:
        return "expired"
    return "active"


def authenticate(session: Session, token: str) -> Principal | None:
    """The caller behind a bearer token, or None for a malformed, unknown, revoked or expired key."""
    match = KEY_RE.match(token)
    if not match:
        return None
    key_id, secret = match.groups()
    key = session.get(ApiKey, key_id)
    if key is None or key_state(key) != "active":
        return None
    if not verify_secret(key_id, secret, key.secret_hash):
        return None
    return principal_of(key)


def principal_of(key: ApiKey) -> Principal:
    return Principal(key.id, key.client, bool(key.admin), tuple(key.companies or ()), tuple(key.funds or ()),
                     manager=bool(key.admin))


def active_principal(session: Session, key_id: str) -> Principal | None:
    """The key's principal when it is still active (read now: a revoked or expired key is None at once)."""
    key = session.get(ApiKey, key_id)
    return principal_of(key) if key is not None and key_state(key) == "active" else None
