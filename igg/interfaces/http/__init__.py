"""The HTTP adapter (``igg serve``) and the guards of every HTTP listener."""
