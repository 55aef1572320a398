"""The remote side of the ``cronplane`` command: talking to a running server's API."""
