"""Test support: real local servers the tests start (an OpenAI-compatible one, ...)."""
