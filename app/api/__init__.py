"""The read-only HTTP API over stored fund evaluations (FastAPI)."""
