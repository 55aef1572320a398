-- name: enqueue_tokens_spend
-- The enqueue_per_minute quota as a token bucket kept in the project's row, so every API process
-- spends from one bucket (no per-process counter). Capacity is one minute's worth; it refills
-- continuously at quota/60 tokens a second, measured on the database's clock (clock_timestamp:
-- a transaction that waited for the row lock must not refill from its own, older start time).
-- The UPDATE takes the row lock (FOR NO KEY UPDATE: foreign-key checks of other inserts are not
-- blocked) and re-evaluates the WHERE on the newest row, so concurrent spenders in any number of
-- processes are ordered and never spend the same token. A refused spend changes nothing and
-- returns no row; the spend is undone with the caller's transaction if the enqueue fails.
UPDATE projects
   SET enqueue_tokens = least(enqueue_per_minute::float8,
                              coalesce(enqueue_tokens, enqueue_per_minute::float8)
                              + greatest(0, extract(epoch FROM cronplane_clock_now()
                                                    - coalesce(enqueue_refilled_at,
                                                               cronplane_clock_now())))
                                * enqueue_per_minute / 60.0) - %(n)s,
       enqueue_refilled_at = cronplane_clock_now()
 WHERE slug = %(project)s
   AND enqueue_per_minute IS NOT NULL
   AND least(enqueue_per_minute::float8,
             coalesce(enqueue_tokens, enqueue_per_minute::float8)
             + greatest(0, extract(epoch FROM cronplane_clock_now()
                                   - coalesce(enqueue_refilled_at, cronplane_clock_now())))
               * enqueue_per_minute / 60.0) >= %(n)s
RETURNING enqueue_tokens;

-- name: enqueue_tokens_wait
-- After a refused spend: seconds until `n` tokens will be in the bucket (the Retry-After).
-- NULL when the quota is 0 (nothing will ever be admitted) or `n` exceeds one minute's worth.
SELECT CASE WHEN enqueue_per_minute = 0 OR %(n)s > enqueue_per_minute THEN NULL
            ELSE (%(n)s - least(enqueue_per_minute::float8,
                                coalesce(enqueue_tokens, enqueue_per_minute::float8)
                                + greatest(0, extract(epoch FROM cronplane_clock_now()
                                                      - coalesce(enqueue_refilled_at,
                                                                 cronplane_clock_now())))
                                  * enqueue_per_minute / 60.0))
                 / (enqueue_per_minute / 60.0) END AS wait_seconds
  FROM projects WHERE slug = %(project)s;
