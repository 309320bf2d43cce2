// The one place that knows how to reach MySQL/MariaDB.
import knexFactory, { type Knex } from 'knex';
import { format } from 'mysql2';
import type { Config } from './config.js';

/** Dates are stored and read as UTC whatever the server's time zone. */
const TIME_ZONE = 'Z';

/**
 * mysql2's own formatting, except that a statement without values is sent as it is. The
 * driver would otherwise scan its whole text for placeholders even then, and the statements
 * written with literals (the multi-row INSERT of new runs) are the longest ones it sends.
 */
function queryFormat(sql: string, values: unknown): string {
  if (values === undefined || (Array.isArray(values) && values.length === 0)) return sql;
  return format(sql, values as Parameters<typeof format>[1], false, TIME_ZONE);
}

export type Db = Knex;

/** Connection settings shared by the service, the admin CLI, migrations and tests. */
export function knexConfig(
  config: Pick<Config, 'databaseUrl' | 'dbPoolMax' | 'dbAcquireTimeoutMs'>,
): Knex.Config {
  const url = new URL(config.databaseUrl);
  return {
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.replace(/^\//, ''),
      timezone: TIME_ZONE,
      queryFormat,
      charset: 'utf8mb4',
      // Fail fast when the server is unreachable rather than hanging a request.
      connectTimeout: config.dbAcquireTimeoutMs,
      supportBigNumbers: true,
    },
    pool: { min: 0, max: config.dbPoolMax },
    acquireConnectionTimeout: config.dbAcquireTimeoutMs,
  };
}

export function createDb(
  config: Pick<Config, 'databaseUrl' | 'dbPoolMax' | 'dbAcquireTimeoutMs'>,
): Db {
  return knexFactory(knexConfig(config));
}

/** The database name of a DATABASE_URL, for tools that create it. */
export function databaseName(databaseUrl: string): string {
  return new URL(databaseUrl).pathname.replace(/^\//, '');
}

/** A JS Date for a DATETIME(3) column read back by mysql2 (already a Date with timezone 'Z'). */
export function toIso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
