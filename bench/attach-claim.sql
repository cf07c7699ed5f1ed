-- The attach queue's claim (src/openai-compat/attach-queue.ts, $1 = 2, $2 = 15000) on 1,000 collections of one
-- organization with a file waiting in each (2 leased) and 19 more organizations with 3 each. Run on an empty,
-- migrated database: see docs/BENCHMARKS.md (Attach queue).
INSERT INTO organizations (name) SELECT 'org' || n FROM generate_series(1, 20) n;
INSERT INTO collections (organization_id, name) SELECT o.id, 'c' || n FROM organizations o, generate_series(1, 1000) n WHERE o.name = 'org1';
INSERT INTO collections (organization_id, name) SELECT o.id, 'c' FROM organizations o WHERE o.name <> 'org1';
INSERT INTO files (organization_id, filename, mimetype, purpose, bytes, content)
  SELECT o.id, 'f' || n, 'text/plain', 'assistants', 1, 'x' FROM organizations o, generate_series(1, 50) n;
-- org1: one file attached to each of its 1,000 collections (in_progress), 2 of them leased now
INSERT INTO vector_store_files (collection_id, file_id, organization_id, status)
  SELECT c.id, (SELECT f.id FROM files f WHERE f.organization_id = c.organization_id LIMIT 1), c.organization_id, 'in_progress'
    FROM collections c JOIN organizations o ON o.id = c.organization_id WHERE o.name = 'org1';
UPDATE vector_store_files SET claim = gen_random_uuid(), claimed_until = now() + interval '1 hour'
 WHERE (collection_id, file_id) IN (SELECT collection_id, file_id FROM vector_store_files LIMIT 2);
-- the other organizations: a few waiting each
INSERT INTO vector_store_files (collection_id, file_id, organization_id, status)
  SELECT c.id, f.id, c.organization_id, 'in_progress' FROM collections c JOIN organizations o ON o.id = c.organization_id
    JOIN files f ON f.organization_id = o.id WHERE o.name <> 'org1' AND f.filename IN ('f1','f2','f3');
ANALYZE;
\timing on
BEGIN;
EXPLAIN (ANALYZE, COSTS off)
WITH waiting AS MATERIALIZED (
         SELECT v.organization_id, v.collection_id, v.created_at,
                v.claim IS NOT NULL AND v.claimed_until >= clock_timestamp() AS leased,
                v.claimed_until IS NULL OR v.claimed_until < clock_timestamp() AS due
           FROM vector_store_files v WHERE v.status = 'in_progress'
       ),
       turns AS MATERIALIZED (
         SELECT w.organization_id, count(*) FILTER (WHERE w.leased) AS leased,
                min(w.created_at) FILTER (WHERE w.due AND c.deleted_at IS NULL) AS head
           FROM waiting w JOIN collections c ON c.id = w.collection_id
          GROUP BY w.organization_id
         HAVING count(*) FILTER (WHERE w.leased) < 2
            AND count(*) FILTER (WHERE w.due AND c.deleted_at IS NULL) > 0
          ORDER BY 2, 3
          LIMIT 1
       ),
       due AS (
         SELECT next.collection_id, next.file_id FROM turns t CROSS JOIN LATERAL (
           SELECT v.collection_id, v.file_id FROM vector_store_files v JOIN collections c ON c.id = v.collection_id
            WHERE v.organization_id = t.organization_id AND v.status = 'in_progress'
              AND (v.claimed_until IS NULL OR v.claimed_until < clock_timestamp()) AND c.deleted_at IS NULL
            ORDER BY v.created_at
            LIMIT 1
              FOR UPDATE OF v SKIP LOCKED) next
       )
       UPDATE vector_store_files v
          SET claim = gen_random_uuid(), attempts = v.attempts + 1,
              claimed_until = clock_timestamp() + 15000 * interval '1 millisecond'
         FROM due, collections c, files f
        WHERE v.collection_id = due.collection_id AND v.file_id = due.file_id
          AND c.id = v.collection_id AND f.id = v.file_id
       RETURNING v.collection_id, v.file_id, c.organization_id, v.claim, v.attempts, v.attributes,
                 f.filename, f.mimetype, f.bytes;
ROLLBACK;
