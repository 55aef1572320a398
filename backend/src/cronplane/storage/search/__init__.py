"""Search: the SQL of the lists' search boxes (ADR 0041).

Job search — the one that must be bounded — is three parts: ``jobs.py`` builds the condition
(an id, or every word a prefix, over the GIN index of ``jobs.search``), ``budget.py`` bounds
what one search may use of the database (its own transaction, a ``statement_timeout`` and a
``work_mem``), ``slots.py`` bounds how many one user runs at once across every process. Their
named statements are ``search.sql``. ``schedules.py`` and ``users.py`` read the same box over
the small registries. The box's meaning (``#6``, ``6``, prefixes) is ``domain/job_search.py``.
"""
