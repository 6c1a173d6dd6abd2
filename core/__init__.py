"""The shared core every floor may import: atomic outputs, plotting plumbing, JSON Schema helpers, number readers."""
