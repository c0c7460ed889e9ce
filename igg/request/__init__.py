"""Loading a request and checking it whole before a run starts (``load``: ``load_request``, ``check_request``,
``build_state``)."""
