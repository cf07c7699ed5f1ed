import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a chat session and an uploaded file may be reached by: the collections of the API key that made
 * them (null: every collection, a JWT or an unlimited key). A key limited to collections finds only
 * sessions and files made within its own collections, so a wider caller's answers and files never reach it.
 */
export class ReachOfSessionsAndFiles1795738079147 implements MigrationInterface {
  name = 'ReachOfSessionsAndFiles1795738079147';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE chat_sessions ADD COLUMN collection_ids uuid[]`);
    await queryRunner.query(`ALTER TABLE files ADD COLUMN collection_ids uuid[]`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE files DROP COLUMN collection_ids`);
    await queryRunner.query(`ALTER TABLE chat_sessions DROP COLUMN collection_ids`);
  }
}
