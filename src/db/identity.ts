import type { Db } from './client.ts';

/**
 * What tells this database apart from every other one, for names in a shared Redis: deployments (and test runs)
 * sharing a Redis never mix their keys or channels. The cluster's system identifier tells clusters apart where the
 * role may read it (managed PostgreSQL may not grant pg_control_system); the database's name and oid tell databases
 * of one cluster apart.
 */
export async function databaseIdentity(db: Db): Promise<string> {
  const [database] = await db.$queryRaw<{ id: string }[]>`
    SELECT current_database() || ':' || d."oid"::text AS "id" FROM pg_database d WHERE d."datname" = current_database()`;
  const cluster = await db.$queryRaw<{ id: string }[]>`SELECT "system_identifier"::text AS "id" FROM pg_control_system()`.then(
    ([row]) => row!.id,
    () => 'cluster',
  );
  return `${cluster}:${database!.id}`;
}
