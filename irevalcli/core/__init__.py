"""Qrels + Run -> ranked table -> per-topic values -> summary."""
