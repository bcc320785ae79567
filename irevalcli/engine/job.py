"""Job: what one evaluation asks of whichever engine does it, in one frozen object.

:func:`irevalcli.api.evaluate` makes it once (:meth:`Job.of`) and hands it to the engine
that takes the run (:mod:`.evaluate` for a table in memory, :mod:`.stream`, :mod:`.spill`,
:mod:`.dask_engine`, and :mod:`.parts` under the last three). Besides what was asked (the
requests and the table's options) it carries what no part of a run can see but every part
needs: the whole judgements, subtopics and ``-Z`` z-scores, and the facts of the whole qrels
(the judged topics, the judged relevant documents, the highest label), computed here once.
A new engine takes a Job and gives per-topic values; the summary is taken from them by
:func:`.evaluate.summarize`, the same for every engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.memo import once
from ..core.table import EvalOptions, count_distinct
from ..io.trec import Qrels

if TYPE_CHECKING:
    from ..io.subtopics import SubtopicQrels
    from ..io.trec import ZScores
    from ..measures.names import Request


@dataclass(frozen=True)
class Job:
    """One evaluation's work, the same for every engine.

    ``qrels``: the whole judgements (:class:`~irevalcli.io.trec.Qrels`, or a ``-R`` format's
    :class:`~irevalcli.io.judgements.Judgements`); None for a labelled table scored where it
    is read (the Dask engine), whose facts are then filled in from its parts.
    ``num_qrels_topics``: the judged topics (``-c``'s denominator); ``num_rel_complete``: the
    judgements with rel > 0 over all topics (``num_rel``'s summary under ``-c``; 0 for the
    ``-R`` formats); ``max_label``: the highest label of the whole qrels (0 when none), which a
    table of some topics cannot see in its own judgements.
    """

    qrels: Any
    requests: tuple[Request, ...]
    opts: EvalOptions
    subtopics: SubtopicQrels | None = None
    zscores: ZScores | None = None
    num_qrels_topics: int = 0
    num_rel_complete: int = 0
    max_label: int = 0

    @classmethod
    def of(
        cls,
        qrels: Any,
        requests: Sequence[Request],
        opts: EvalOptions,
        *,
        subtopics: SubtopicQrels | None = None,
        zscores: ZScores | None = None,
    ) -> Job:
        """The job for ``qrels``, with the whole-qrels facts computed from them (the one place)."""
        # (computed once for judgements that every run of a call is given: core.memo)
        facts = once(qrels, "whole_qrels_facts", lambda: whole_qrels_facts(qrels))
        return cls(qrels, tuple(requests), opts, subtopics, zscores, *facts)


def whole_qrels_facts(qrels: Any) -> tuple[int, int, int]:
    """``(num_qrels_topics, num_rel_complete, max_label)`` of the whole judgements (see
    :class:`Job`); zeros for None. Only plain qrels have labels to count."""
    if qrels is None:
        return 0, 0, 0

    topics = count_distinct(qrels.qid)
    if not isinstance(qrels, Qrels):  # a -R format: no rel column
        return topics, 0, 0
    import numpy as np

    num_rel = int(np.count_nonzero(qrels.rel > 0))
    max_label = int(qrels.rel.max()) if len(qrels.rel) else 0
    return topics, num_rel, max_label
