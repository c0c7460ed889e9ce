"""One owner of a session in progress: ``Session`` (see ``igg.session.session``)."""

from igg.session.session import Session

__all__ = ["Session"]
