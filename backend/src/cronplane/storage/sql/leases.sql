-- name: lease_set_timeouts
-- A heartbeat must never queue behind a stuck transaction for longer than a renew interval:
-- failing fast lets the elector notice (and step down by its local deadline) instead. And a
-- process frozen (SIGSTOP) in the middle of its heartbeat must not hold the lease row locked
-- for everyone else: the server ends such a session after the same interval.
SELECT set_config('lock_timeout', %(lock_timeout_ms)s, true),
       set_config('idle_in_transaction_session_timeout', %(lock_timeout_ms)s, true);

-- name: lease_ensure
-- The first heartbeat ever for a name creates its row; everyone after that locks it.
-- expires_at defaults to -infinity, so a fresh row is immediately claimable.
INSERT INTO leases (name) VALUES (%(name)s) ON CONFLICT (name) DO NOTHING;

-- name: lease_lock
-- Lock the row and let the DATABASE clock make every comparison (cronplane_clock_now(), not cronplane_now():
-- the lock wait may have lasted, and cronplane_now() is frozen at transaction start). The caller decides
-- renew / claim / decline from these booleans (domain/lease.decide).
-- nullif: a never-claimed row expires at -infinity, which Python datetimes cannot hold.
-- FOR NO KEY UPDATE: one heartbeat at a time, but a renewal does not wait for the leader's
-- fenced transactions (FOR KEY SHARE, schedule_fence): a renewal does not end the term. With
-- 10,000 schedules the leader's back-to-back fenced transactions (fire batches, health and
-- fire-check chunks) held the row share-locked without a gap, so a FOR UPDATE here waited past
-- its lock timeout and the leader lost its own lease every few seconds (issue 43). A claim,
-- which does end a term, takes FOR UPDATE first (lease_lock_term).
SELECT owner, fencing_token, nullif(expires_at, '-infinity') AS expires_at, barred_owner,
       cronplane_clock_now() AS db_now,
       expires_at <= cronplane_clock_now() AS expired,
       (barred_owner IS NOT NULL AND barred_until > cronplane_clock_now()) AS barred
  FROM leases
 WHERE name = %(name)s
   FOR NO KEY UPDATE;

-- name: lease_lock_term
-- Before a claim: FOR UPDATE conflicts with the FOR KEY SHARE every fenced transaction holds,
-- so the claim waits until every transaction fenced by the old term has committed or rolled
-- back (a new fence fails: the lease has expired). The term cannot change under a fenced write.
SELECT fencing_token FROM leases WHERE name = %(name)s FOR UPDATE;

-- name: lease_renew
-- Only ever run after lease_lock showed a live lease that we own, in the same transaction;
-- the owner/token predicate is a second guard, so a renewal can never extend someone else's term.
UPDATE leases
   SET expires_at = cronplane_clock_now() + make_interval(secs => %(ttl)s::float8),
       renewed_at = cronplane_clock_now()
 WHERE name = %(name)s AND owner = %(owner)s AND fencing_token = %(fencing_token)s
RETURNING owner, fencing_token, expires_at, cronplane_clock_now() AS db_now;

-- name: lease_claim
-- Only ever run after lease_lock showed an expired lease. The fencing token strictly increases
-- with every claim, including our own re-claim after our lease expired: writes fenced with an
-- older token are rejected (see schedules.sql: schedule_fence).
UPDATE leases
   SET owner = %(owner)s,
       fencing_token = fencing_token + 1,
       acquired_at = cronplane_clock_now(),
       renewed_at = cronplane_clock_now(),
       expires_at = cronplane_clock_now() + make_interval(secs => %(ttl)s::float8)
 WHERE name = %(name)s AND expires_at <= cronplane_clock_now()
RETURNING owner, fencing_token, expires_at, cronplane_clock_now() AS db_now;

-- name: lease_resign
-- Graceful handoff: expire our own term now (the owner stays visible as the last holder), so a
-- standby's next heartbeat claims it; the caller NOTIFYs the leader channel in this transaction.
UPDATE leases
   SET expires_at = cronplane_clock_now()
 WHERE name = %(name)s AND owner = %(owner)s AND fencing_token = %(fencing_token)s
   AND expires_at > cronplane_clock_now()
RETURNING fencing_token;

-- name: lease_current
-- For /stats and the console: who leads, under which token, until when (null when expired).
SELECT name, owner, fencing_token, nullif(expires_at, '-infinity') AS expires_at,
       acquired_at, renewed_at,
       expires_at > cronplane_clock_now() AS live
  FROM leases
 WHERE name = %(name)s;

-- name: lease_audit
-- System audit events (leader.acquire / leader.lose). The execution plane cannot import the
-- management plane's audit module, so it appends through the same table and the same
-- hash-chain trigger with one statement. Installation events: project NULL (instance ADMINs).
INSERT INTO audit_events (project, actor, actor_role, action, target_type, target_id, details)
VALUES (NULL, 'system', 'ADMIN', %(action)s, 'lease', %(name)s, %(details)s);
