-- name: register_process
-- A serve/worker process announces itself; re-registering after a restart with the same id
-- (never happens: ids carry a random suffix) would simply refresh the row.
INSERT INTO workers (id, host, pid, kind, concurrency, running, started_at, heartbeat_at)
VALUES (%(id)s, %(host)s, %(pid)s, %(kind)s, %(concurrency)s, 0, cronplane_now(), cronplane_now())
ON CONFLICT (id) DO UPDATE
   SET heartbeat_at = cronplane_now(), stopped_at = NULL, concurrency = excluded.concurrency;

-- name: heartbeat_process
UPDATE workers SET heartbeat_at = cronplane_now(), running = %(running)s WHERE id = %(id)s;

-- name: stop_process
UPDATE workers SET stopped_at = cronplane_now(), running = 0 WHERE id = %(id)s;
