"""The engine: ``loop`` (observe -> reason -> act -> record -> check stop; ``Loop``, ``run``, ``arun``,
``stream``, ``astream``)."""
