// CreditHooks.mayAct: the SQL boolean that lets a credit skip the hooks (the one-statement payment, docs/payments.md).
import { describe, expect, it } from 'vitest';
import { Prisma } from '../../generated/prisma/client.ts';
import { CreditHooks } from '../../src/core/credits.ts';

const company = Prisma.sql`${'c1'}::uuid`;
const asset = Prisma.sql`${'trc20usdt'}::text`;
const noop = async () => {};

describe('CreditHooks.mayAct', () => {
  it('is FALSE without hooks, the OR of the scopes with them, and TRUE once a hook has no scope', () => {
    const hooks = new CreditHooks();
    expect(hooks.mayAct(company, asset).sql).toBe('FALSE');
    hooks.add(noop, (c, a) => Prisma.sql`EXISTS (SELECT 1 FROM "A" WHERE "c" = ${c} AND "a" = ${a})`);
    hooks.add(noop, (c, a) => Prisma.sql`EXISTS (SELECT 1 FROM "B" WHERE "c" = ${c} AND "a" = ${a})`);
    const both = hooks.mayAct(company, asset);
    expect(both.sql).toBe('(EXISTS (SELECT 1 FROM "A" WHERE "c" = ?::uuid AND "a" = ?::text) OR EXISTS (SELECT 1 FROM "B" WHERE "c" = ?::uuid AND "a" = ?::text))');
    expect(both.values).toEqual(['c1', 'trc20usdt', 'c1', 'trc20usdt']);
    hooks.add(noop);
    expect(hooks.mayAct(company, asset).sql).toBe('TRUE');
  });
});
