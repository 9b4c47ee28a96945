// The features' declarations (src/features.ts `declared`): merged without a name declared twice, and the lists
// shown elsewhere (GraphQL's EventType enum, the docs) are exactly what the features declare.
import fs from 'node:fs';
import { buildSchema, type GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { declarationsOf } from '../../src/core/declarations.ts';
import { CREDENTIALS_CHANGED } from '../../src/domain/event-types.ts';
import { declared, printedSchema } from '../../src/features.ts';
import { enumValueName } from '../../src/graphql/enums.ts';

const enumName = enumValueName;

describe('feature declarations', () => {
  it('collects every feature’s names, core’s internal event included', () => {
    expect(Object.keys(declared.eventTypes)).toEqual(expect.arrayContaining(['invoice.created', 'withdrawal.done', 'deposit.frozen']));
    expect(declared.internalEventTypes).toEqual(expect.arrayContaining([CREDENTIALS_CHANGED, 'webhook.failing']));
    expect(declared.journalKinds).toEqual(expect.arrayContaining(['payment', 'fee', 'withdrawal_hold', 'deposit_fee']));
    expect(declared.ledgerChecks.map((c) => c.name)).toEqual(expect.arrayContaining(['invoice-status', 'withdrawal-status', 'deposit-status']));
    expect(Object.keys(declared.transitions)).toEqual(expect.arrayContaining(['invoice', 'withdrawal', 'deposit']));
    expect(declared.outgoingPurposes).toEqual(expect.arrayContaining(['withdrawal', 'refund']));
  });

  it('refuses a name two features declare, and a metrics subject without event types to count', () => {
    const a = { name: 'a', declares: { eventTypes: { 'thing.done': 'x' }, journalKinds: ['thing'] } };
    expect(() => declarationsOf([a, { name: 'b', declares: { eventTypes: { 'thing.done': 'y' } } }])).toThrow('event type thing.done is declared by both a and b');
    expect(() => declarationsOf([a, { name: 'b', declares: { journalKinds: ['thing'] } }])).toThrow('journal kind thing is declared by both a and b');
    expect(() => declarationsOf([a, { name: 'b', declares: { outgoingPurposes: ['p'] } }, { name: 'c', declares: { outgoingPurposes: ['p'] } }])).toThrow('outgoing purpose p');
    expect(() => declarationsOf([{ name: 'b', declares: { internalEventTypes: [CREDENTIALS_CHANGED] } }])).toThrow('declared by both core and b');
    expect(() => declarationsOf([{ name: 'b', declares: { transitions: { thing: 'help' } } }])).toThrow('metrics subject thing of b has no event types');
    const check = { name: 'thing-status', problems: async () => [] };
    expect(() => declarationsOf([{ name: 'a', declares: { ledgerChecks: [check] } }, { name: 'b', declares: { ledgerChecks: [check] } }])).toThrow('ledger check thing-status');
  });

  it('GraphQL’s EventType enum is the declared event types with their descriptions', () => {
    const enumType = buildSchema(printedSchema()).getType('EventType') as GraphQLEnumType;
    const values = Object.fromEntries(enumType.getValues().map((v) => [v.name, v.description]));
    expect(Object.keys(values).sort()).toEqual(Object.keys(declared.eventTypes).map(enumName).sort());
    for (const [type, description] of Object.entries(declared.eventTypes)) expect(values[enumName(type)]).toBe(`${description} REST: "${type}".`);
  });

  it('the docs list exactly the declared event types (docs/graphql.md) and journal kinds (docs/exports.md)', () => {
    const eventRow = fs.readFileSync('docs/graphql.md', 'utf8').split('\n').find((l) => l.startsWith('| `EventType` |'))!;
    const listed = eventRow.split('|')[2]!.match(/`[A-Z0-9_]+`/g)!.map((v) => v.slice(1, -1));
    expect(listed.sort()).toEqual(Object.keys(declared.eventTypes).map(enumName).sort());
    const kindRow = fs.readFileSync('docs/exports.md', 'utf8').split('\n').find((l) => l.startsWith('| `journal_kind` |'))!;
    const kinds = kindRow.split('|')[2]!.match(/`[a-z_]+`/g)!.map((v) => v.slice(1, -1));
    expect(kinds.sort()).toEqual([...declared.journalKinds].sort());
  });
  it('the worked example of docs/architecture.md is src/autoswap/declarations.ts as it is', () => {
    const doc = fs.readFileSync('docs/architecture.md', 'utf8');
    const block = /\*\*Worked example: what autoswap declares\*\*[\s\S]*?```ts no-check\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(fs.readFileSync('src/autoswap/declarations.ts', 'utf8'));
  });
});
