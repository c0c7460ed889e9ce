"""Batch runs on a Dask cluster: many requests, or many source trees, as independent sessions.

``run_requests`` and ``map_trees`` (``igg.batch.service``) are the jobs ``igg batch`` runs; the pieces are
``jobs`` (inputs -> jobs), ``cluster`` (connect or start one), ``tasks`` (what a worker runs), ``runner``
(submit, collect) and ``persist`` (the client, the store's one writer). Needs ``pip install 'igg[dask]'``.
"""

from igg.batch.cluster import SCHEDULER_ENV, ClusterInfo, open_cluster, parse_executor, require_distributed
from igg.batch.jobs import request_jobs, tree_jobs
from igg.batch.persist import SessionWriter
from igg.batch.runner import BatchReport, SessionReport, run_batch
from igg.batch.service import map_trees, run_requests
from igg.batch.tasks import SessionJob, SessionOutcome, TreeJob, map_tree, run_session

__all__ = [
    "SCHEDULER_ENV",
    "BatchReport",
    "ClusterInfo",
    "SessionJob",
    "SessionOutcome",
    "SessionReport",
    "SessionWriter",
    "TreeJob",
    "map_tree",
    "map_trees",
    "open_cluster",
    "parse_executor",
    "request_jobs",
    "require_distributed",
    "run_batch",
    "run_requests",
    "run_session",
    "tree_jobs",
]
