"""What ingest found and where: every value with its page and cell or sentence, every gap in words.

The report written by ``methodology ingest --report`` is :meth:`Findings.report`, checked against
``ingest_report.schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REPORT_SCHEMA_FILE = "ingest_report.schema.json"


class IngestError(ValueError):
    """The PDF cannot become a rubric; the message says exactly why. ``draft``/``report`` keep what was read."""

    def __init__(self, message: str, draft: dict[str, Any] | None = None, report: dict[str, Any] | None = None):
        super().__init__(message)
        self.draft = draft
        self.report = report


@dataclass
class Findings:
    """Values read (with provenance) and problems met while reading one PDF."""

    source: str
    values: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0
    layout: str = "firm"

    def found(self, path: str, value: Any, page: int | None, where: str, text: str) -> None:
        self.values.append({"field": path, "value": value, "page": page, "where": where, "text": text})

    def problem(self, kind: str, path: str, message: str, looked_in: list[str] | None = None) -> None:
        self.problems.append({"kind": kind, "field": path, "message": message, "looked_in": looked_in or []})

    def has_problem(self, path_prefix: str) -> bool:
        return any(p["field"].startswith(path_prefix) for p in self.problems)

    def report(self, status: str) -> dict[str, Any]:
        return {
            "source": self.source,
            "status": status,
            "layout": self.layout,
            "pages": self.pages,
            "tables": self.tables,
            "values": self.values,
            "problems": self.problems,
            "notes": self.notes,
        }

    def message(self) -> str:
        lines = [f"{self.source} could not be read into a complete rubric ({len(self.problems)} problem(s)):"]
        for p in self.problems:
            lines.append(f"  - [{p['kind']}] {p['field']}: {p['message']}")
            if p["looked_in"]:
                lines.append(f"      looked in: {'; '.join(p['looked_in'])}")
        return "\n".join(lines)
