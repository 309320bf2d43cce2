// The databases of a test run: a template, migrated once per run, and for each test file a
// copy of it, made by copying its tables, which takes a fraction of what migrating does.
import knexFactory, { type Knex } from 'knex';
import { loadConfig } from '../../src/config.js';
import { knexConfig } from '../../src/db.js';
import { migrate } from '../../src/migrate.js';
import { databaseUrl } from './env.js';

interface Table {
  name: string;
  /** SHOW CREATE TABLE's statement: unlike CREATE TABLE … LIKE, it keeps the foreign keys. */
  create: string;
}

const quote = (name: string) => `\`${name}\``;

export class DatabaseTemplate {
  private copies = 0;
  /** The copy the next file gets, made while the file before it runs. */
  private spare: Promise<string> | undefined;
  /** Drops under way. */
  private readonly drops = new Set<Promise<void>>();

  private constructor(
    /** Connections to the server, outside any database, that send several statements. */
    private readonly server: Knex,
    readonly name: string,
    private readonly tables: Table[],
  ) {}

  /** Creates the template database (again, if a run of the same pid left it) and migrates it. */
  static async create(name: string): Promise<DatabaseTemplate> {
    // A copy, a drop and the sweep at the end may wait on each other for a while on a busy
    // machine: more time than the service's DB_ACQUIRE_TIMEOUT_MS.
    const config = loadConfig({ DATABASE_URL: databaseUrl(name), DB_ACQUIRE_TIMEOUT_MS: '60000' });
    const base = knexConfig(config, { multipleStatements: true });
    const server = knexFactory({
      ...base,
      connection: { ...(base.connection as object), database: undefined },
      pool: { min: 0, max: 2 },
    });
    try {
      await server.raw(`DROP DATABASE IF EXISTS ${quote(name)}`);
      await migrate(config);
      // Tables only: the schema has no views, triggers or routines to copy.
      const [rows] = (await server.raw(
        `SELECT TABLE_NAME AS name FROM information_schema.TABLES
          WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`,
        [name],
      )) as [Array<{ name: string }>];
      const tables: Table[] = [];
      for (const { name: table } of rows) {
        const [[shown]] = (await server.raw(
          `SHOW CREATE TABLE ${quote(name)}.${quote(table)}`,
        )) as [Array<{ 'Create Table': string }>];
        tables.push({ name: table, create: shown!['Create Table'] });
      }
      return new DatabaseTemplate(server, name, tables);
    } catch (err) {
      await server.destroy();
      throw err;
    }
  }

  /**
   * A new copy of the template, for one test file. The copy the next call returns is started
   * at once, so a file seldom waits for its database: it was made while the file before ran.
   */
  take(): Promise<string> {
    const ready = this.spare ?? this.copy();
    this.spare = this.copy();
    return ready;
  }

  /**
   * Makes a database that is a copy of the template: its tables, and their rows, which are
   * knex's records of the migrations applied, so that a migration run against the copy finds
   * nothing to do. One round trip.
   */
  private copy(): Promise<string> {
    const database = `${this.name}_${++this.copies}`;
    const made = this.server
      .raw(
        [
          `DROP DATABASE IF EXISTS ${quote(database)}`,
          `CREATE DATABASE ${quote(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
          // The statements name their tables, and the tables their foreign keys refer to,
          // without a database: they are made in the one in use.
          `USE ${quote(database)}`,
          'SET FOREIGN_KEY_CHECKS = 0',
          ...this.tables.map((t) => t.create),
          ...this.tables.map(
            (t) =>
              `INSERT INTO ${quote(t.name)} SELECT * FROM ${quote(this.name)}.${quote(t.name)}`,
          ),
          'SET FOREIGN_KEY_CHECKS = 1',
        ].join(';\n'),
      )
      .then(() => database);
    // A spare nobody takes must not fail the run as an unhandled rejection; whoever takes it
    // still gets the error.
    made.catch(() => undefined);
    return made;
  }

  /** Drops a file's database in the background: the next file need not wait for it. */
  release(database: string): void {
    const dropped = this.drop(database).catch((err: Error) => {
      process.stderr.write(`  could not drop test database ${database}: ${err.message}\n`);
    });
    this.drops.add(dropped);
    void dropped.finally(() => this.drops.delete(dropped));
  }

  private async drop(database: string): Promise<void> {
    // A process a test failed to stop may hold a transaction open in the database: give up
    // after a while rather than wait for it.
    await this.server.raw(
      `SET SESSION lock_wait_timeout = 20; DROP DATABASE IF EXISTS ${quote(database)}`,
    );
  }

  /**
   * Waits for the drops under way, drops the spare copy, and with `all`, the template and every
   * copy of it still there (one a failed step left, say); then closes the connections.
   */
  async close({ all }: { all: boolean }): Promise<void> {
    try {
      const spare = await this.spare?.catch(() => undefined);
      if (spare) await this.drop(spare);
      await Promise.all(this.drops);
      if (all) {
        const [rows] = (await this.server.raw('SHOW DATABASES WHERE `Database` LIKE ?', [
          `${this.name.replace(/_/g, '\\_')}\\_%`,
        ])) as [Array<{ Database: string }>];
        for (const { Database } of rows) await this.drop(Database);
        await this.drop(this.name);
      }
    } finally {
      await this.server.destroy();
    }
  }
}
