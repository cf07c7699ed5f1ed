import type { MigrationInterface, QueryRunner } from 'typeorm';

const CURRENT_PERIOD = `date_trunc('month', now() AT TIME ZONE 'UTC')::date`;

/**
 * One monthly credit counter per key lineage (a key and every key that replaced it by rotation), so
 * that a rotation with a grace period no longer gives the old and the new key a cap each. `lineage_id`
 * is the id of the lineage's first key, whose `api_key_credits` row becomes the lineage's counter.
 */
export class KeyLineages1795723595478 implements MigrationInterface {
  name = 'KeyLineages1795723595478';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN lineage_id uuid`);
    await queryRunner.query(`
      WITH RECURSIVE chain AS (
        SELECT id, id AS root FROM api_keys WHERE rotated_from_id IS NULL
        UNION ALL
        SELECT k.id, chain.root FROM api_keys k JOIN chain ON k.rotated_from_id = chain.id
      )
      UPDATE api_keys SET lineage_id = chain.root FROM chain WHERE api_keys.id = chain.id`);
    await queryRunner.query(`UPDATE api_keys SET lineage_id = id WHERE lineage_id IS NULL`);
    await queryRunner.query(`ALTER TABLE api_keys ALTER COLUMN lineage_id SET NOT NULL`);
    await queryRunner.query(`CREATE INDEX api_keys_lineage_idx ON api_keys (lineage_id, created_at DESC)`);
    // This period's spend of each lineage: what its keys spent by the ledger (a grace period's double
    // spend included), never less than any of its counters said.
    await queryRunner.query(`
      WITH spent AS (
        SELECT k.lineage_id,
               GREATEST(
                 COALESCE((SELECT sum(u.credits) FROM usage_events u JOIN api_keys m ON m.id = u.api_key_id
                            WHERE m.lineage_id = k.lineage_id AND u.created_at >= ${CURRENT_PERIOD}), 0),
                 max(CASE WHEN c.period_start < ${CURRENT_PERIOD} THEN 0 ELSE c.credits_used END)
               )::int AS used
          FROM api_keys k JOIN api_key_credits c ON c.api_key_id = k.id
         GROUP BY k.lineage_id
      )
      INSERT INTO api_key_credits (api_key_id, period_start, credits_used)
      SELECT lineage_id, ${CURRENT_PERIOD}, used FROM spent
      ON CONFLICT (api_key_id) DO UPDATE SET period_start = EXCLUDED.period_start, credits_used = EXCLUDED.credits_used`);
    await queryRunner.query(
      `DELETE FROM api_key_credits c USING api_keys k WHERE k.id = c.api_key_id AND k.lineage_id <> k.id`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Every key gets its own counter back, starting from its lineage's.
    await queryRunner.query(`
      INSERT INTO api_key_credits (api_key_id, period_start, credits_used)
      SELECT k.id, c.period_start, c.credits_used FROM api_keys k JOIN api_key_credits c ON c.api_key_id = k.lineage_id
       WHERE k.id <> k.lineage_id`);
    await queryRunner.query(`DROP INDEX api_keys_lineage_idx`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN lineage_id`);
  }
}
