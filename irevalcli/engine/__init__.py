"""Measures over tables: per-topic values, the summary, and the engines that produce them
(whole table, topic-block streaming, out of core, Dask), each taking one :class:`job.Job`.
Every engine gives the same per-topic values, and the summary is taken from them in one
place (:func:`evaluate.summarize`)."""
