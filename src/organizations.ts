import type { Db } from './db.js';
import { newId } from './lib/ids.js';

export async function createOrganization(db: Db, name: string) {
  const org = { id: newId(), name, created_at: new Date() };
  await db('organizations').insert(org);
  return { id: org.id, name: org.name, created_at: org.created_at.toISOString() };
}

export async function organizationExists(db: Db, id: string): Promise<boolean> {
  return (await db('organizations').select('id').where({ id }).first()) !== undefined;
}
