"""cronplane: a secure control plane for scheduled and ad-hoc work."""

__version__ = "0.1.0"
