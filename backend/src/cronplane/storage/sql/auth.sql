-- name: authenticate_session
-- Every request with a session JWT: the user and the login (refresh family) in one primary-key
-- join, so logout, lock, disable, role and password changes take effect on the very next request
-- and the effective role is the database's, not the token's.
-- The user's project memberships ride along (effective roles, management/scope.py).
-- live_seconds: how long the login stays valid (the credential cache keeps it no longer).
SELECT u.id, u.username, u.role, u.token_version, u.locked, u.disabled, u.is_persona,
       (f.revoked_at IS NULL AND f.expires_at > cronplane_now()) AS session_live,
       extract(epoch FROM f.expires_at - cronplane_now())::float8 AS live_seconds,
       (SELECT coalesce(jsonb_object_agg(m.project, m.role), '{}'::jsonb)
          FROM project_members m WHERE m.user_id = u.id) AS memberships
  FROM users u
  JOIN refresh_families f ON f.user_id = u.id
 WHERE u.id = %(user_id)s AND f.id = %(session_id)s;

-- name: authenticate_api_token
-- Every request with an API token: one index probe on the hash, joined to the creator, so a token
-- stops working when deleted, expired, or when its creator is locked, disabled or demoted below
-- it. last_used_at is written at most once a minute per token, so a busy script does not turn
-- every read into a write. A token acts in its one project, or (project NULL) in every project
-- its creator is a member of, capped at the token's role (management/auth.py). The creator's role
-- in the token's project (its highest membership for an all-projects token; ADMIN for an
-- instance ADMIN) must still be at least the token's, so removing the creator from the project
-- or demoting it there stops the token. The creator's instance role rides along: a token never
-- passes an instance-level check (users, projects, chaos) its creator would not.
WITH hit AS (
  SELECT t.id AS token_id, t.role AS token_role, t.project AS token_project,
         u.id AS user_id, u.username, u.is_persona, u.role AS creator_role,
         extract(epoch FROM t.expires_at - cronplane_now())::float8 AS live_seconds,
         CASE WHEN t.project IS NULL AND u.role <> 'ADMIN' THEN
           (SELECT coalesce(jsonb_object_agg(a.project, a.role), '{}'::jsonb)
              FROM project_members a WHERE a.user_id = u.id) END AS memberships
    FROM api_tokens t
    JOIN users u ON u.id = t.user_id
    LEFT JOIN project_members m ON m.user_id = u.id AND m.project = t.project
   WHERE t.token_hash = %(token_hash)s
     AND t.revoked_at IS NULL
     AND (t.expires_at IS NULL OR t.expires_at > cronplane_now())
     AND NOT u.locked AND NOT u.disabled
     AND array_position(ARRAY['VIEWER', 'OPERATOR', 'ADMIN'], t.role)
         <= CASE WHEN u.role = 'ADMIN' THEN 3
                 WHEN t.project IS NULL THEN
                   (SELECT max(array_position(ARRAY['VIEWER', 'OPERATOR', 'ADMIN'], a.role))
                      FROM project_members a WHERE a.user_id = u.id)
                 ELSE array_position(ARRAY['VIEWER', 'OPERATOR', 'ADMIN'], m.role) END
), touched AS (
  UPDATE api_tokens SET last_used_at = cronplane_now()
   WHERE id = (SELECT token_id FROM hit)
     AND (last_used_at IS NULL OR last_used_at < cronplane_now() - interval '1 minute')
  RETURNING id
)
SELECT token_id, token_role, token_project, user_id, username, is_persona, creator_role,
       memberships, live_seconds
  FROM hit;

-- name: identity_of
-- GET /auth/me: the user's link to an identity provider (at most one: user_id is unique), or none.
SELECT issuer, subject, groups, role_source FROM user_identities WHERE user_id = %(user_id)s;
