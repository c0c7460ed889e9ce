"""What a run produces and how it is told: stop reasons, ``IterationRecord``, ``Event`` and ``RunResult``
(``records``), and the structured log lines made from those events (``logs``: ``EventLogger``,
``configure_logging``)."""
