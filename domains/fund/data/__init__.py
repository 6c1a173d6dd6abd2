"""Reading the analysts' files: NAV tables, META, benchmarks, share-class families, the sample universe.

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.data.class_families import INFERRED, infer_classes
from evaluator.domains.fund.data.loaders import Universe, load_meta, load_universe
from evaluator.domains.fund.data.readers import ALIASES, BLANKS, decode, parse_as_of
from evaluator.domains.fund.data.sample import generate_sample, sample_universe, write_sample
from evaluator.domains.fund.data.spreadsheets import html_sheets, kind_of, xls_sheets, xlsx_sheets

__all__ = [
    "ALIASES",
    "BLANKS",
    "INFERRED",
    "Universe",
    "decode",
    "generate_sample",
    "html_sheets",
    "infer_classes",
    "kind_of",
    "load_meta",
    "load_universe",
    "parse_as_of",
    "sample_universe",
    "write_sample",
    "xls_sheets",
    "xlsx_sheets",
]
