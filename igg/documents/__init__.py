"""Documents as sources: a corpus of files read as documents, each fact kept with the documents that support
it, and updates that cost what changed (``igg run --documents``; see docs/documents.md)."""
