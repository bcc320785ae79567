"""Readers: bytes -> Qrels / Run. Never imports the core, measures or output."""
