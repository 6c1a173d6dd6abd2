"""Shared core: language-level helpers every pack may use (packs never import one another)."""
