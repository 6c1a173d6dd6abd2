"""The schema: runs (one per stored batch), fund_results + fund_documents (one per fund per run),
fund_series (one per rated fund per run),
company_ratings (one per 운용사 per run), api_keys, users (personal accounts), web_sessions (a user's or a
key's), audit_log.

``fund_results.is_current`` marks each fund's newest result (latest as-of, then latest run), kept in the
same transaction that stores a batch, so the API's default lists are a plain indexed filter. Migrations in
``migrations/versions`` create exactly these tables; change both together.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Boolean, Date, DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    identity: Mapped[str] = mapped_column(String(64), unique=True)
    as_of: Mapped[dt.date] = mapped_column(Date, index=True)
    rubric_name: Mapped[str] = mapped_column(String(200))
    rubric_version: Mapped[str] = mapped_column(String(100))
    rubric_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)  # None: folder predates it
    input_hashes: Mapped[dict[str, Any]] = mapped_column(JSON)
    engine_version: Mapped[str] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(20))  # "evaluate" or "import"
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    funds_total: Mapped[int] = mapped_column(Integer)
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)  # summary.json without its per-fund list
    model_run: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    grade_scale: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # None: 1등급-best five


class FundResult(Base):
    __tablename__ = "fund_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    as_of: Mapped[dt.date] = mapped_column(Date)
    is_current: Mapped[bool] = mapped_column(Boolean, default=False)
    fund_code: Mapped[str] = mapped_column(String(200))
    fund_name: Mapped[str | None] = mapped_column(String(500), nullable=True)
    company: Mapped[str | None] = mapped_column(String(200), nullable=True)
    type: Mapped[str | None] = mapped_column(String(100), nullable=True)
    status: Mapped[str] = mapped_column(String(20))
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)  # as the firm prints it (★ count)
    grade_rank: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 1 = the batch scale's best
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    percentile: Mapped[float | None] = mapped_column(Float, nullable=True)
    set_amount_krw: Mapped[float | None] = mapped_column(Float, nullable=True)

    __table_args__ = (
        Index("ix_fund_results_run_code", "run_id", "fund_code", unique=True),
        Index("ix_fund_results_code_asof", "fund_code", "as_of", "run_id"),
        # a client's funds and summary straight from the index
        Index("ix_fund_results_company", "company", "is_current", "status", "type", "grade", "score"),
        Index("ix_fund_results_run_status", "run_id", "status", "company"),
    )


# lists in their order (best grade of the batch's scale, best score first) without a sort, with and without a 유형
Index(
    "ix_fund_results_order",
    FundResult.is_current, FundResult.status, FundResult.grade_rank, FundResult.score.desc(), FundResult.fund_code,
)
Index(
    "ix_fund_results_type",
    FundResult.is_current, FundResult.status, FundResult.type, FundResult.grade_rank, FundResult.score.desc(),
    FundResult.fund_code,
)


class FundDocument(Base):
    """The bulky part of a result (metrics, report text, model evaluation), apart so list queries stay small."""

    __tablename__ = "fund_documents"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    fund_code: Mapped[str] = mapped_column(String(200), primary_key=True)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON)
    report: Mapped[str] = mapped_column(Text)  # the report JSON text, served as is
    model_evaluation: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class FundSeries(Base):
    """A rated fund's total-return NAV index and its benchmark over its evaluation window, for the fund
    page's chart: one ``nav_series.jsonl`` line (JSON text, at most ~260 points). Batches stored before it
    existed have none."""

    __tablename__ = "fund_series"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    fund_code: Mapped[str] = mapped_column(String(200), primary_key=True)
    series: Mapped[str] = mapped_column(Text)


class CompanyRating(Base):
    """One 운용사's rating in one batch (``fund companies --db``); ``document`` is its companies.json entry."""

    __tablename__ = "company_ratings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    as_of: Mapped[dt.date] = mapped_column(Date)
    is_current: Mapped[bool] = mapped_column(Boolean, default=False)
    company: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    grade_label: Mapped[str | None] = mapped_column(String(100), nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    quantitative_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    qualitative_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    funds_rated: Mapped[int] = mapped_column(Integer)
    aum_krw: Mapped[float | None] = mapped_column(Float, nullable=True)
    document: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        Index("ix_company_ratings_run_company", "run_id", "company", unique=True),
        Index("ix_company_ratings_company", "company", "is_current", "as_of"),
    )


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # public part of ev_<id>_<secret>
    client: Mapped[str] = mapped_column(String(200))
    secret_hash: Mapped[str] = mapped_column(String(300))  # scrypt$n$r$p$salt$hash, never the secret
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    companies: Mapped[list[str]] = mapped_column(JSON)
    funds: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    expires_on: Mapped[dt.date | None] = mapped_column(Date, nullable=True)  # last valid day (UTC)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class User(Base):
    """A person's account: a login, a role (admin, analyst, client) and, for a client, the same scope columns
    as an API key. Only an argon2id hash of the password is stored; a disabled account keeps its row (the
    audit log names it) but signs in no more."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    login: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    client: Mapped[str] = mapped_column(String(200))
    companies: Mapped[list[str]] = mapped_column(JSON)
    funds: Mapped[list[str]] = mapped_column(JSON)
    password_hash: Mapped[str] = mapped_column(String(300))  # $argon2id$…, never the password
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    password_changed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    disabled_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebSession(Base):
    """A signed-in browser: the cookie holds a random token, the row only its SHA-256 (so a copy of the
    database cannot be replayed as a cookie). It belongs to a user or to a key (exactly one); every worker
    reads it, and logout, a password change, disabling the user or revoking the key ends it."""

    __tablename__ = "web_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"), index=True,
                                               nullable=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True,
                                                nullable=True)
    csrf: Mapped[str] = mapped_column(String(64))  # compared with the token every state-changing form posts
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)
    last_seen_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))  # for the idle timeout


class AuditEvent(Base):
    """One audited action: who (a login or ``key:<id>``), what, from where, and details that never hold a
    password or a key (:mod:`evaluator.app.storage.audit`)."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)
    actor: Mapped[str] = mapped_column(String(100), index=True)
    action: Mapped[str] = mapped_column(String(40), index=True)
    address: Mapped[str | None] = mapped_column(String(100), nullable=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)


class RateCounter(Base):
    """A fixed-window counter per bucket ("key:<id>", "login:<address>"), shared by every worker."""

    __tablename__ = "rate_counters"

    bucket: Mapped[str] = mapped_column(String(120), primary_key=True)
    window: Mapped[int] = mapped_column(Integer)  # epoch seconds // window length
    count: Mapped[int] = mapped_column(Integer)


class Job(Base):
    """A background evaluation started by an upload: its state lives here so every worker can show it."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key_id: Mapped[str] = mapped_column(String(32), index=True)  # who started it
    kind: Mapped[str] = mapped_column(String(20))  # "evaluate"
    state: Mapped[str] = mapped_column(String(20))  # queued, running, done, failed
    progress: Mapped[float] = mapped_column(Float, default=0.0)  # 0..1
    stage: Mapped[str] = mapped_column(String(200), default="")
    message: Mapped[str | None] = mapped_column(Text, nullable=True)  # the loader's message on failure
    params: Mapped[dict[str, Any]] = mapped_column(JSON)  # as-of, file names and sizes (never contents)
    run_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    # written every few seconds while a worker runs the job; a stale one means the worker is gone (jobs.py)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
