// Knex settings for tools that expect a knexfile; the service itself uses src/db.ts.
import { loadConfig } from './src/config.js';
import { knexConfig } from './src/db.js';
import { migrationSource } from './migrations/index.js';

const config = loadConfig();

export default {
  ...knexConfig(config),
  migrations: { migrationSource },
};
