-- The audit anchor (domain/audit_chain.py, ADR 0020): the sealer appends an HMAC per event and a
-- signed checkpoint per batch; verify walks the trail against them. The runtime role may only
-- SELECT and INSERT on these tables (storage/migrator.py), so none of this rewrites history.

-- name: audit_seal_lock
-- One sealer at a time across the cluster (normally only the leader runs one; this also covers
-- the moment two processes both believe they lead). Never waits: a busy lock means another
-- process is sealing right now.
SELECT pg_try_advisory_xact_lock(%(key)s) AS locked;

-- name: audit_last_seal
-- Where the MAC chain ends. Seals are appended in event id order, so the newest is the head.
SELECT event_id, mac FROM audit_seals ORDER BY event_id DESC LIMIT 1;

-- name: audit_seal_of
-- The seal of one event, to check that the head this process last anchored is still there.
SELECT mac FROM audit_seals WHERE event_id = %(event_id)s;

-- name: audit_events_after
-- The next events to seal, in id order. Ids follow commit order (the chain trigger assigns them
-- under a lock held until commit), so what a snapshot sees after the last seal is a gap-free
-- continuation: a later commit can only get a higher id. details as jsonb's canonical text: the
-- MAC covers what the database holds.
SELECT id, at, actor, actor_role, project, action, target_type, target_id,
       details::text AS details, request_id, ip, prev_hash, hash
  FROM audit_events
 WHERE id > %(after)s
 ORDER BY id
 LIMIT %(limit)s;

-- name: audit_insert_seals
INSERT INTO audit_seals (event_id, mac, key_id)
SELECT * FROM unnest(%(event_ids)s::bigint[], %(macs)s::text[], %(key_ids)s::text[]);

-- name: audit_insert_checkpoint
INSERT INTO audit_checkpoints (head_id, head_mac, at, key_id, signature)
VALUES (%(head_id)s, %(head_mac)s, %(at)s, %(key_id)s, %(signature)s);

-- name: audit_newest_checkpoints
-- The checkpoints reaching furthest. Verify takes the first valid one as the anchor and counts
-- forged ones above it; anything below the newest valid one adds nothing the seals do not say.
SELECT head_id, head_mac, at, key_id, signature
  FROM audit_checkpoints
 ORDER BY head_id DESC, id DESC
 LIMIT 64;

-- name: audit_walk
-- Every event in id order with the database's own verdict on its plain link (the trigger's
-- sha256 chain, recomputed with lag) and its seal. Read through a server-side cursor in one
-- REPEATABLE READ snapshot together with the two statements below.
SELECT e.id, e.at, e.actor, e.actor_role, e.project, e.action, e.target_type, e.target_id,
       e.details::text AS details, e.request_id, e.ip, e.prev_hash, e.hash,
       (e.hash IS NOT DISTINCT FROM encode(sha256(convert_to(
            coalesce(lag(e.hash) OVER w, '') || audit_canonical(e), 'UTF8')), 'hex')
        AND e.prev_hash IS NOT DISTINCT FROM lag(e.hash) OVER w) AS linked,
       s.mac, s.key_id
  FROM audit_events e
  LEFT JOIN audit_seals s ON s.event_id = e.id
WINDOW w AS (ORDER BY e.id)
 ORDER BY e.id;

-- name: audit_redactions
-- Attested redactions of literal credentials (migration 0039): verify accepts exactly these.
SELECT event_id, mac_before, digest_after, key_id, attestation FROM audit_redactions;

-- name: audit_orphan_seals
-- Seals whose event is gone: a deleted event (in the middle, or the newest ones).
SELECT s.event_id
  FROM audit_seals s
 WHERE NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.id = s.event_id)
 ORDER BY s.event_id;
