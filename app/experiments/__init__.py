"""Experiments: arms × seeds trained, evaluated on the same items and compared with paired statistics."""
