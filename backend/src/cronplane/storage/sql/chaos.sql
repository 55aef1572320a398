-- Chaos experiments as the execution plane sees them (the management plane starts and stops
-- them with the ORM; see management/chaos.py). Every process polls chaos_active about once a
-- second, so these stay index-only on ix_chaos_experiments_active.

-- name: chaos_active
-- Experiments in force by the database clock. expires_at is compared here, not only by the
-- reaper, so an experiment stops acting at its expiry even if nothing has reaped it yet.
SELECT id, kind, params, started_at, expires_at,
       greatest(0, extract(epoch FROM expires_at - cronplane_clock_now()))::float8 AS seconds_left
  FROM chaos_experiments
 WHERE ended_at IS NULL AND expires_at > cronplane_clock_now()
 ORDER BY id;

-- name: chaos_expire
-- The reaper: end every experiment past its expiry and audit each as chaos.expire (actor
-- 'system') in the same statement. Every process runs it; SKIP LOCKED lets them race without
-- waiting on each other, and `ended_at IS NULL` under the row lock means an experiment is
-- expired (and audited) exactly once, even against a concurrent DELETE (stop), whichever wins.
WITH due AS (
  SELECT id FROM chaos_experiments
   WHERE ended_at IS NULL AND expires_at <= cronplane_clock_now()
   ORDER BY id
   LIMIT 100
     FOR UPDATE SKIP LOCKED
), ended AS (
  UPDATE chaos_experiments e
     SET ended_at = e.expires_at, end_reason = 'expired'
    FROM due
   WHERE e.id = due.id
  RETURNING e.id, e.kind, e.params, e.started_at, e.expires_at, e.created_by
), audited AS (
  INSERT INTO audit_events (project, actor, actor_role, action, target_type, target_id, details)
  SELECT NULL, 'system', 'ADMIN', 'chaos.expire', 'chaos_experiment', ended.id::text,
         jsonb_build_object('kind', ended.kind, 'params', ended.params,
                            'started_at', ended.started_at, 'expires_at', ended.expires_at,
                            'created_by', ended.created_by)
    FROM ended
   ORDER BY ended.id
  RETURNING target_id
)
SELECT id, kind FROM ended WHERE id IN (SELECT target_id::bigint FROM audited);

-- name: chaos_stepdown
-- leader_stepdown: expire the current leader's term now and bar its owner from the lease until
-- the experiment ends, so a standby claims it (a new fencing token) instead of the same process.
-- Idempotent per experiment: the bar is stamped with the experiment's expires_at, and a row
-- already barred until then is left alone, so every process may run this for the same
-- experiment and only the first acts. The leader channel is NOTIFYed so standbys claim at once;
-- the stepped-down elector audits leader.lose itself when its next renewal is declined.
WITH stepped AS (
  UPDATE leases l
     SET barred_owner = l.owner,
         barred_until = e.expires_at,
         expires_at = least(l.expires_at, cronplane_clock_now())
    FROM chaos_experiments e
   WHERE l.name = %(lease)s AND e.id = %(experiment_id)s
     AND e.ended_at IS NULL AND e.expires_at > cronplane_clock_now()
     AND l.owner IS NOT NULL
     AND l.barred_until IS DISTINCT FROM e.expires_at
  RETURNING l.barred_owner, l.fencing_token
), woken AS (
  SELECT pg_notify(%(channel)s, %(lease)s) FROM stepped
)
SELECT barred_owner, fencing_token, (SELECT count(*) FROM woken) AS woken
  FROM stepped;

-- name: chaos_lift_bars
-- A stepdown experiment stopped early lifts its bar at once (one that simply expires lifts by
-- itself: barred_until is then in the past). Only bars that no live stepdown experiment stamps.
UPDATE leases l
   SET barred_owner = NULL, barred_until = NULL
 WHERE l.barred_owner IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM chaos_experiments e
                    WHERE e.kind = 'leader_stepdown' AND e.ended_at IS NULL
                      AND e.expires_at > cronplane_clock_now() AND e.expires_at = l.barred_until)
RETURNING l.name;
