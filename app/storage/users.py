"""Personal accounts: a login, a role and an argon2id password hash (argon2-cffi's defaults, RFC 9106's
low-memory profile).

Roles: ``admin`` (every fund, uploads, runs, users, keys, the audit log), ``analyst`` (every fund, uploads,
runs; no user or key management), ``client`` (its companies and funds, exactly like a client key: the scope is
checked and turned into a :class:`Principal` by the same code as a key's).

Passwords: at least :data:`MIN_LENGTH` characters, not the login, not a short piece repeated
(``abcabcabcabc``), and neither one of the 30,000 commonest passwords nor one padded with digits or symbols
(``Password2026!``). That list comes from the ``zxcvbn`` package (its ranked password frequency list, the one
its strength estimator uses), so no list of our own is kept. A password change or disabling the account deletes
the account's sessions in the same transaction; every worker checks the session row on each request, so
they end everywhere at once.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import Engine, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import KeyCommandError, Principal, check_known_scope, check_scope, clean
from evaluator.app.storage.audit import record
from evaluator.app.storage.tables import User, WebSession

ROLES = ("admin", "analyst", "client")
MIN_LENGTH = 12
MAX_LENGTH = 1024
LOGIN_RE = re.compile(r"^[a-z0-9][a-z0-9.@-]{1,63}$")  # no "_" and no ":": never an API key or key:<id>
_hasher = PasswordHasher()


class UserCommandError(KeyCommandError):
    """A user command that cannot be done (bad login, weak password, unknown user …)."""


@lru_cache(maxsize=1)
def _common_passwords() -> frozenset[str]:
    from zxcvbn.frequency_lists import FREQUENCY_LISTS

    return frozenset(FREQUENCY_LISTS["passwords"])


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash("no account has this password")


def normal_login(login: str) -> str:
    return login.strip().lower()


def check_password(password: str, login: str) -> None:
    """Raise :class:`UserCommandError` saying why ``password`` is refused."""
    if len(password) < MIN_LENGTH:
        raise UserCommandError(f"the password needs at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise UserCommandError(f"the password has more than {MAX_LENGTH} characters")
    if password.strip().lower() == normal_login(login):
        raise UserCommandError("the password must not be the login")
    lower = password.lower()
    core = lower.strip("0123456789!@#$%^&*()-_=+.,?~ ")
    if lower in _common_passwords() or (len(core) >= 4 and core in _common_passwords()):
        raise UserCommandError("that password is among the commonest passwords; choose another")
    if any(len(lower) % n == 0 and lower == lower[:n] * (len(lower) // n) for n in range(1, len(lower) // 2 + 1)):
        raise UserCommandError("the password is a short piece repeated; choose another")


def principal_of_user(user: User) -> Principal:
    """The account as a caller: staff roles see every fund, a client exactly its stored scope."""
    staff = user.role in ("admin", "analyst")
    return Principal(f"user:{user.id}", user.client or user.role, staff, tuple(user.companies or ()), tuple(user.funds or ()),
                     manager=user.role == "admin", login=user.login)


def add_user(engine: Engine, login: str, role: str, password: str, *, client: str = "",
             companies: list[str] | None = None, funds: list[str] | None = None, allow_unknown: bool = False,
             actor: str | None = None) -> int:
    """Store a new account; return its id. A client needs a company or fund that a stored batch knows
    (unless ``allow_unknown``); staff roles take no scope."""
    login = normal_login(login)
    companies, funds = list(companies or ()), list(funds or ())
    if not LOGIN_RE.match(login):
        raise UserCommandError(f"login {login!r}: 2–64 characters, a–z, 0–9, '.', '@' or '-', starting with a "
                               "letter or digit")
    if role not in ROLES:
        raise UserCommandError(f"--role must be one of {', '.join(ROLES)}")
    staff = role != "client"
    check_scope(client or ("(staff)" if staff else ""), staff, companies, funds, "account")
    check_password(password, login)
    taken = UserCommandError(f"a user {login!r} already exists (see `evaluator users list`)")
    new = _NewUser(login, role, password, client, companies, funds)
    try:
        return _insert(engine, new, allow_unknown, actor, taken)
    except IntegrityError:  # the same login added at the same moment elsewhere: the unique index decides
        raise taken from None


@dataclass(frozen=True)
class _NewUser:
    """A checked account about to be stored."""

    login: str
    role: str
    password: str
    client: str
    companies: list[str]
    funds: list[str]


def _insert(engine: Engine, new: _NewUser, allow_unknown: bool, actor: str | None, taken: UserCommandError) -> int:
    login, role, client, companies, funds = new.login, new.role, new.client, new.companies, new.funds
    now = dt.datetime.now(dt.timezone.utc)
    with Session(engine) as session, session.begin():
        if session.scalar(select(User.id).where(User.login == login)) is not None:
            raise taken
        if not allow_unknown:
            check_known_scope(session, companies, funds)
        user = User(login=login, role=role, client=client.strip(), companies=clean(companies), funds=clean(funds),
                    password_hash=_hasher.hash(new.password), created_at=now, password_changed_at=now)
        session.add(user)
        session.flush()
        record(session, actor, "user.add", {"login": login, "role": role, "client": client.strip(),
                                            "companies": clean(companies), "funds": clean(funds)}, commit=False)
        return user.id


def list_users(engine: Engine) -> list[User]:
    with Session(engine) as session:
        return list(session.scalars(select(User).order_by(User.login)))


def _get(session: Session, login: str) -> User:
    user = session.scalar(select(User).where(User.login == normal_login(login)))
    if user is None:
        raise UserCommandError(f"no user {normal_login(login)!r} (see `evaluator users list`)")
    return user


def _end_sessions(session: Session, user_id: int) -> int:
    return int(session.execute(delete(WebSession).where(WebSession.user_id == user_id)).rowcount or 0)


def set_password(engine: Engine, login: str, password: str, actor: str | None = None) -> int:
    """Change the password and end every session of the account; return how many sessions ended."""
    with Session(engine) as session, session.begin():
        user = _get(session, login)
        check_password(password, user.login)
        user.password_hash = _hasher.hash(password)
        user.password_changed_at = dt.datetime.now(dt.timezone.utc)
        ended = _end_sessions(session, user.id)
        record(session, actor, "user.passwd", {"login": user.login, "sessions_ended": ended}, commit=False)
    return ended


def disable_user(engine: Engine, login: str, actor: str | None = None) -> int | None:
    """Disable the account and end its sessions; None when it was already disabled."""
    with Session(engine) as session, session.begin():
        user = _get(session, login)
        if user.disabled_at is not None:
            return None
        user.disabled_at = dt.datetime.now(dt.timezone.utc)
        ended = _end_sessions(session, user.id)
        record(session, actor, "user.disable", {"login": user.login, "sessions_ended": ended}, commit=False)
    return ended


def known_login(session: Session, login: str) -> bool:
    return session.scalar(select(User.id).where(User.login == normal_login(login))) is not None


def user_state(user: User) -> str:
    return "disabled" if user.disabled_at is not None else "active"


def authenticate_user(session: Session, login: str, password: str) -> Principal | None:
    """The account behind a login and password, or None (unknown, disabled, wrong password). An unknown
    login costs the same hash as a known one, so timing does not tell which logins exist."""
    user = session.scalar(select(User).where(User.login == normal_login(login))) if login.strip() else None
    stored = user.password_hash if user is not None else _dummy_hash()
    try:
        _hasher.verify(stored, password[:MAX_LENGTH])
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if user is None or user.disabled_at is not None:
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
        session.commit()
    return principal_of_user(user)


def active_user(session: Session, user_id: int) -> Principal | None:
    """The account's principal while it is enabled (read now: disabling takes effect at once)."""
    user = session.get(User, user_id)
    return principal_of_user(user) if user is not None and user.disabled_at is None else None
