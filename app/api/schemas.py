"""Response shapes, for the OpenAPI document (handlers return pre-serialised JSON for speed)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorBody(BaseModel):
    error: str = Field(
        description="unauthorized, not_found, invalid_request, method_not_allowed, unavailable"
    )
    detail: str | list[dict] = Field(description="What was wrong, in words (never an echo of the key).")


class FundItem(BaseModel):
    fund_code: str
    fund_name: str | None
    company: str | None
    type: str | None
    status: str = Field("ok", description="ok, provisional (가등급), not_rated or error.")
    grade: int | None = Field(description="The grade as the firm prints it (the number of stars on a star scale).")
    grade_label: str | None = Field(None, description="1등급, ★★★★★, 가2등급 …, on the fund's batch's scale.")
    grade_rank: int | None = Field(None, description="1 for the best grade of the batch's scale.")
    score: float | None
    peer_percentile: float | None
    as_of: str
    run_id: int


class GradeScaleDoc(BaseModel):
    grades: int
    best: str = Field(description="low: 1 is best (1등급); high: the top grade is best (★★★★★).")
    style: str


class ScaleInView(BaseModel):
    grade_scale: GradeScaleDoc = Field(description="The scale of the newest batch in view.")
    mixed_scales: bool = Field(description="True when the batches in view use different scales.")
    grade_scales: list[GradeScaleDoc]
    scale_note: str | None = Field(description="Why grades of different batches must not be compared.")


class FundPage(ScaleInView):
    total: int
    page: int
    page_size: int = Field(description="The page size used (the request's, capped at page_size_max).")
    page_size_max: int
    page_size_capped: bool = Field(description="True when the requested page_size was above page_size_max.")
    items: list[FundItem]


class RubricRef(BaseModel):
    name: str
    version: str
    sha256: str | None = None


class RunItem(BaseModel):
    run_id: int
    as_of: str
    rubric: RubricRef
    grade_scale: GradeScaleDoc | None = Field(None, description="The batch's grade scale.")
    engine_version: str
    source: str
    created_at: str
    funds: int = Field(description="Funds of this run the caller may see.")
    status_counts: dict[str, int]
    model_evaluated: bool
    input_hashes: dict[str, str] | None = Field(None, description="Admin keys only.")


class RunList(BaseModel):
    items: list[RunItem]


class HistoryItem(BaseModel):
    run_id: int
    as_of: str
    status: str
    grade: int | None
    grade_label: str | None = None
    grade_scale: GradeScaleDoc | None = None
    score: float | None
    peer_percentile: float | None
    type: str | None
    company: str | None
    rubric: RubricRef
    from_history: bool = False
    """A point of a stored `fund history` batch's grade path (no batch of that date is stored)."""


class History(BaseModel):
    fund_code: str
    items: list[HistoryItem]


class Summary(ScaleInView):
    as_of: str | None
    funds: int
    grade_distribution: dict[str, dict[str, int]]


class NavLines(BaseModel):
    window: str | None = Field(description="The longest period the grade weighs: 3y, 5y or 10y.")
    dates: list[str] = Field(description="Weekly (the window's first and last date always), at most ~260.")
    fund: list[float | None] = Field(description="Total-return NAV index (수정기준가 basis), 100 at the first date.")
    benchmark: list[float | None] | None = Field(description="The fund's benchmark, 100 at the first date.")
    benchmark_name: str | None


class NavSeries(BaseModel):
    fund_code: str
    as_of: str
    series: NavLines | None = Field(description="Null for a fund not rated, or a batch stored without series.")


class CompanyItem(BaseModel):
    company: str
    status: str = Field(description="ok or not_rated")
    grade: int | None
    grade_label: str | None
    score: float | None
    quantitative_score: float | None
    qualitative_score: float | None
    funds_rated: int = Field(description="Rated portfolios (share classes counted once).")
    aum_krw: float | None
    as_of: str
    run_id: int


class CompanyList(BaseModel):
    items: list[CompanyItem]

class JobStarted(BaseModel):
    job_id: int
    url: str


class JobState(BaseModel):
    job_id: int
    kind: str
    state: str = Field(description="queued, running, done or failed")
    progress: float = Field(description="0 to 1")
    stage: str
    message: str | None = Field(description="Why it failed (the loader's message), or a note when done.")
    run_id: int | None = Field(description="The stored batch, when done.")
    params: dict
    created_at: str
    updated_at: str
    heartbeat_at: str | None = Field(description="The worker's last sign of life while the job ran.")
