// Creates the database when it is missing and applies every pending migration.
import knexFactory from 'knex';
import type { Config } from './config.js';
import { createDb, databaseName, knexConfig } from './db.js';
import { migrationSource } from '../migrations/index.js';

export async function ensureDatabase(config: Config): Promise<void> {
  const name = databaseName(config.databaseUrl);
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
    throw new Error('DATABASE_URL must name a database of letters, digits and _');
  }
  const server = knexFactory({
    ...knexConfig(config, { serverOnly: true }),
    pool: { min: 0, max: 1 },
  });
  try {
    await server.raw(
      `CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
  } finally {
    await server.destroy();
  }
}

export async function migrate(config: Config): Promise<string[]> {
  await ensureDatabase(config);
  const db = createDb(config);
  try {
    const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
    return applied;
  } finally {
    await db.destroy();
  }
}
