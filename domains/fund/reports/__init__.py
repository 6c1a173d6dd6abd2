"""Report folders: per-fund reports, summaries, and the NAV series file (named here, read by storage)."""

SERIES_FILE = "nav_series.jsonl"
