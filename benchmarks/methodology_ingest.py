"""Methodology ingest: how many corpus documents are read exactly (or refused honestly, where they should be).

Run: ``.venv/bin/python benchmarks/methodology_ingest.py``. The corpus is ``tests/methodology_corpus.py``: firm-style
methodology PDFs built with reportlab (different fonts, header words, units, merged cells, a split table,
English/Korean, prose-only rules, letter-spaced HWP-style text) and two that must be refused. "Exactly" means
every effective metric weight to 1e-9, the period weights, band shares, eligibility (with overrides) and peer
groups equal what the document says; for a refusal, the error names what the case expects.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from methodology_corpus import CORPUS, mismatches

from evaluator.methodology.pdf_ingest import IngestError, ingest_with_report


def main() -> None:
    exact = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for case in CORPUS:
            path = Path(tmp) / f"{case.name}.pdf"
            path.write_bytes(case.build())
            try:
                rubric, _ = ingest_with_report(path)
                problems = ["read, but it should have been refused"] if case.refusal else mismatches(case, rubric)
            except IngestError as exc:
                message = str(exc)
                missing = [w for w in case.refusal if w not in message]
                problems = missing if case.refusal else [message.splitlines()[1] if "\n" in message else message]
            ok = not problems
            exact += ok
            kind = "refused" if case.refusal else "read"
            print(f"{case.name:24s} {kind:8s} {'exact' if ok else 'WRONG: ' + '; '.join(problems)}")
    seconds = time.perf_counter() - started
    print(f"methodology_ingest exact={exact}/{len(CORPUS)} seconds={seconds:.1f}")


if __name__ == "__main__":
    main()
