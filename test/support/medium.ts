import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource, type EntitySchema } from 'typeorm';
import { type AppConfig, loadConfig } from '../../src/config/env.schema.js';
import { dataSourceOptions } from '../../src/database/database.js';
import { installPgTypeParsers } from '../../src/database/pg-types.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * A "medium" test: one service against the real PostgreSQL, on a fresh database migrated as the
 * service migrates it, without booting the application (no HTTP, no Nest container). The unit under
 * test is built by hand from the data source, so a failure points at its SQL, not at the pipeline.
 */
export interface MediumDatabase {
  dataSource: DataSource;
  config: AppConfig;
  close(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for an entity class.
type EntityClass = Function | EntitySchema;

/** A migrated database of its own, with the service's data source options (and `entities` registered). */
export async function startMediumDatabase(
  env: Record<string, string> = {},
  entities: EntityClass[] = [],
): Promise<MediumDatabase> {
  installPgTypeParsers();
  const database: TestDatabase = await createTestDatabase();
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, ...env });
  const dataSource = new DataSource({
    ...dataSourceOptions(config, { url: database.url, embedded: false }),
    migrationsRun: true,
    logging: false,
    entities,
  });
  await dataSource.initialize();
  return {
    dataSource,
    config,
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

export interface Member {
  organizationId: string;
  userId: string;
}

/** An organization and its owner, as sign-up leaves them (the subscription is the caller's to open). */
export async function insertOrganization(dataSource: DataSource): Promise<Member> {
  const [{ id: organizationId }]: { id: string }[] = await dataSource.query(
    `INSERT INTO organizations (name) VALUES ($1) RETURNING id`,
    [`medium ${randomBytes(4).toString('hex')}`],
  );
  const [{ id: userId }]: { id: string }[] = await dataSource.query(
    `INSERT INTO users (email, password_hash, organization_id) VALUES ($1, 'not a hash', $2) RETURNING id`,
    [`medium-${randomUUID()}@example.com`, organizationId],
  );
  await dataSource.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'owner')`, [
    organizationId,
    userId,
  ]);
  return { organizationId, userId };
}
