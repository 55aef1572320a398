"""the background pass that redacts literal credentials in finished jobs' payloads (issue 40)

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-06 07:30:00

Migration 0039 redacted schedule history and the audit trail, but not ``jobs.payload``: the job
history can be millions of rows, too many for one migration's transaction. The leader's
``PayloadRedactor`` (and ``cronplane redact-payloads``) walk it in keyset batches of a few
thousand ids, one short transaction each; this table is where the walk is, so a killed process
resumes where the last committed batch ended and two processes never redo a batch (each batch
holds this row's lock). ADR 0035 (amended), docs/operations.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0042"
down_revision: str | None = "0041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE payload_redaction_passes (
            target text PRIMARY KEY
                CONSTRAINT ck_payload_redaction_passes_target CHECK (target IN ('jobs.payload')),
            -- Every job id <= cursor has been looked at.
            cursor bigint NOT NULL DEFAULT 0,
            -- Unfinished jobs that held a literal credential when the walk passed them: they
            -- are redacted once finished (redacting a pending job would make it send ***).
            held bigint[] NOT NULL DEFAULT '{}',
            -- The round in progress (since the walk last caught up): counts, field paths
            -- (path -> jobs) and the first redacted ids; written to the audit at its end.
            round_started_at timestamptz,
            round_scanned bigint NOT NULL DEFAULT 0,
            round_redacted bigint NOT NULL DEFAULT 0,
            round_fields jsonb NOT NULL DEFAULT '{}',
            round_first_ids bigint[] NOT NULL DEFAULT '{}',
            -- Since the table was made.
            scanned bigint NOT NULL DEFAULT 0,
            redacted bigint NOT NULL DEFAULT 0,
            rounds integer NOT NULL DEFAULT 0,
            caught_up_at timestamptz,
            updated_at timestamptz NOT NULL DEFAULT cronplane_now()
        )""")
    op.execute("INSERT INTO payload_redaction_passes (target) VALUES ('jobs.payload')")


def downgrade() -> None:
    op.execute("DROP TABLE payload_redaction_passes")
