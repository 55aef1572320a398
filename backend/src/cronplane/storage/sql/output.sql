-- name: append_output
-- One flush of the worker's output sink: every attempt's pending bytes as one chunk each, in one
-- statement. The DELETE drops the chunks that now lie wholly before the attempt's last
-- %(keep)s bytes; it runs on the snapshot before this INSERT, which is fine: a new chunk is never
-- older than the cut (the writer already dropped anything beyond %(keep)s bytes). ON CONFLICT:
-- a flush retried after a lost reply must not fail on the chunks it did write.
WITH chunk AS (
    SELECT * FROM unnest(%(attempt_ids)s::bigint[], %(offsets)s::bigint[], %(data)s::bytea[])
        AS c(attempt_id, start_offset, data)
), written AS (
    INSERT INTO attempt_output_chunks (attempt_id, start_offset, data)
    SELECT attempt_id, start_offset, data FROM chunk
    ON CONFLICT DO NOTHING
), cut AS (
    SELECT attempt_id, max(start_offset + length(data)) - %(keep)s AS before FROM chunk
    GROUP BY attempt_id
)
DELETE FROM attempt_output_chunks o USING cut
 WHERE o.attempt_id = cut.attempt_id AND o.start_offset + length(o.data) <= cut.before;
