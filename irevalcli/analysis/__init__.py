"""Statistics over per-topic values: tests, intervals, risk."""
