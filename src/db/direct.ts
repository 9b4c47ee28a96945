// The payment path's two statements (the payee lookup and the one-statement booking) straight on the pg pool on
// PostgreSQL, past Prisma's raw-query path: for a statement of ~70 values and a ~20-column row that path cost about
// as much CPU as PostgreSQL's execution of it (docs/operations.md, "Direct statements"). The rows come back as
// $queryRaw gives them (numeric as Prisma.Decimal, int8 as bigint), so a caller cannot tell the two ways apart;
// anything else (PGlite, a transaction's client, a client opened without a pool) takes $queryRaw.
import type pg from 'pg';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from './client.ts';
import { statementNamer } from './prepared.ts';

type Runner = (sql: Prisma.Sql) => Promise<unknown[]>;

const runners = new WeakMap<object, Runner>();

// pg's type OIDs whose parsed value differs from $queryRaw's, and the ones that need nothing more.
const NUMERIC = 1700;
const INT8 = 20;
/** bool, int2, int4, text, json, float8, varchar, timestamptz, uuid, jsonb: pg already gives what $queryRaw does. */
const AS_PARSED = new Set([16, 21, 23, 25, 114, 701, 1043, 1184, 2950, 3802]);
/** The first OID of types a database defines (our enums): pg gives their text, as $queryRaw does. */
const FIRST_USER_OID = 16384;

/** A parameter as $queryRaw sends it: decimals in plain notation, instants in UTC, arrays element by element. */
function toParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof Prisma.Decimal) return value.toFixed();
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(toParam);
  return value;
}

type Decode = ((raw: unknown) => unknown) | null;

function decoderOf(field: pg.FieldDef): Decode {
  if (field.dataTypeID === NUMERIC) return (raw) => (raw === null ? null : new Prisma.Decimal(raw as string));
  if (field.dataTypeID === INT8) return (raw) => (raw === null ? null : BigInt(raw as string));
  if (AS_PARSED.has(field.dataTypeID) || field.dataTypeID >= FIRST_USER_OID) return null;
  // A type this module was not checked against: fail where it is added, not with a value of another shape.
  throw new Error(`direct statement: column "${field.name}" has type OID ${field.dataTypeID}, which it does not decode`);
}

/** Registers `pool` as the way to run `client`'s direct statements (`preparedStatements`: name the marked ones). */
export function registerDirect(client: Db, pool: pg.Pool, preparedStatements: boolean): void {
  // Its own names: a text pg parsed for this path is never taken for one Prisma's adapter parsed, or back.
  const nameOf = preparedStatements ? statementNamer(undefined, 'payrail_direct_') : () => undefined;
  runners.set(client, async (sql) => {
    const text = sql.text;
    const result = await pool.query({ text, values: sql.values.map(toParam), name: nameOf({ sql: text }) });
    const decoders = result.fields.map(decoderOf);
    if (decoders.every((d) => d === null)) return result.rows;
    return result.rows.map((row: Record<string, unknown>) => {
      result.fields.forEach((field, i) => {
        const decode = decoders[i];
        if (decode) row[field.name] = decode(row[field.name]);
      });
      return row;
    });
  });
}

/** One statement outside any transaction: on the pool when `db` has one registered, else through $queryRaw. */
export function queryDirect<T>(db: Db, sql: Prisma.Sql): Promise<T[]> {
  const run = runners.get(db);
  return run ? (run(sql) as Promise<T[]>) : db.$queryRaw<T[]>(sql);
}
