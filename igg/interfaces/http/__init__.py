"""The HTTP adapter (``igg serve``), the guards of every HTTP listener, and the ``/ui`` viewer's routes
(``ui``) and browser login (``ui_auth``)."""
