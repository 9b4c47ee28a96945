// The features' declarations (src/features.ts `declared`): merged without a name declared twice, and the lists
// shown elsewhere (GraphQL's EventType enum, the docs) are exactly what the features declare.
import fs from 'node:fs';
import { buildSchema, type GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { declarationsOf } from '../../src/core/declarations.ts';
import { CREDENTIALS_CHANGED } from '../../src/domain/event-types.ts';
import { OutgoingListeners } from '../../src/chains/outgoing.ts';
import { declared, printedSchema } from '../../src/features.ts';
import { ACCOUNTS, balanceBuckets } from '../../src/ledger/ledger.ts';
import { enumValueName } from '../../src/graphql/enums.ts';

const enumName = enumValueName;

describe('feature declarations', () => {
  it('collects every feature’s names, core’s internal event included', () => {
    expect(Object.keys(declared.eventTypes)).toEqual(expect.arrayContaining(['invoice.created', 'withdrawal.done', 'deposit.frozen']));
    expect(declared.internalEventTypes).toEqual(expect.arrayContaining([CREDENTIALS_CHANGED, 'webhook.failing']));
    expect(declared.journalKinds).toEqual(expect.arrayContaining(['payment', 'fee', 'withdrawal_hold', 'deposit_fee']));
    expect(declared.ledgerChecks.map((c) => c.name)).toEqual(expect.arrayContaining(['invoice-status', 'withdrawal-status', 'deposit-status']));
    expect(Object.keys(declared.transitions)).toEqual(expect.arrayContaining(['invoice', 'withdrawal', 'deposit']));
    expect(declared.outgoingPurposes).toEqual(expect.arrayContaining(['withdrawal', 'refund', 'autoswap']));
    expect(declared.selfFollowedPurposes).toEqual(['autoswap']);
    expect(Object.keys(declared.ledgerAccounts).sort()).toEqual(['swap_hold', 'swap_venue', 'venue_fees']);
  });

  it('the merchant balance each account counts in: the ledger’s own, then what features declare', () => {
    const buckets = balanceBuckets(declared.ledgerAccounts);
    expect(Object.fromEntries(buckets)).toEqual({ merchant_available: 'available', merchant_held: 'held', merchant_suspense: 'suspense', swap_hold: 'held' });
  });

  it('a self-followed outgoing purpose has its outcomes go to no listener; a purpose nobody follows still fails', async () => {
    const listeners = new OutgoingListeners(new Set(declared.selfFollowedPurposes));
    const report = { network: 'ethereum', purpose: 'autoswap', id: 'autoswap:x', txHash: '0x1', outcome: 'confirmed' } as const;
    await expect(listeners.report(report, 'live')).resolves.toBeUndefined();
    expect(() => listeners.set('autoswap', async () => {})).toThrow('followed by their feature itself');
    expect(() => listeners.report({ ...report, purpose: 'withdrawal' }, 'live')).toThrow('no listener for outgoing withdrawals registered');
    const heard: string[] = [];
    listeners.set('withdrawal', async (r) => heard.push(r.id));
    await listeners.report({ ...report, purpose: 'withdrawal', id: 'w' }, 'test');
    expect(heard).toEqual(['w']);
  });

  it('refuses a name two features declare, and a metrics subject without event types to count', () => {
    const a = { name: 'a', declares: { eventTypes: { 'thing.done': 'x' }, journalKinds: ['thing'] } };
    expect(() => declarationsOf([a, { name: 'b', declares: { eventTypes: { 'thing.done': 'y' } } }])).toThrow('event type thing.done is declared by both a and b');
    expect(() => declarationsOf([a, { name: 'b', declares: { journalKinds: ['thing'] } }])).toThrow('journal kind thing is declared by both a and b');
    expect(() => declarationsOf([a, { name: 'b', declares: { outgoingPurposes: ['p'] } }, { name: 'c', declares: { outgoingPurposes: ['p'] } }])).toThrow('outgoing purpose p');
    expect(() => declarationsOf([{ name: 'b', declares: { internalEventTypes: [CREDENTIALS_CHANGED] } }])).toThrow('declared by both core and b');
    expect(() => declarationsOf([{ name: 'b', declares: { transitions: { thing: 'help' } } }])).toThrow('metrics subject thing of b has no event types');
    expect(() => declarationsOf([{ name: 'b', declares: { ledgerAccounts: { merchant_available: { description: 'x' } } } }])).toThrow('ledger account merchant_available is declared by both the ledger and b');
    expect(() => declarationsOf([{ name: 'a', declares: { ledgerAccounts: { x: { description: 'x' } } } }, { name: 'b', declares: { ledgerAccounts: { x: { description: 'y' } } } }])).toThrow('ledger account x');
    expect(() => declarationsOf([{ name: 'b', declares: { selfFollowedPurposes: ['p'] } }])).toThrow('self-followed purpose p of b is not one of its outgoing purposes');
    const check = { name: 'thing-status', problems: async () => [] };
    expect(() => declarationsOf([{ name: 'a', declares: { ledgerChecks: [check] } }, { name: 'b', declares: { ledgerChecks: [check] } }])).toThrow('ledger check thing-status');
  });

  it('GraphQL’s EventType enum is the declared event types with their descriptions', () => {
    const enumType = buildSchema(printedSchema()).getType('EventType') as GraphQLEnumType;
    const values = Object.fromEntries(enumType.getValues().map((v) => [v.name, v.description]));
    expect(Object.keys(values).sort()).toEqual(Object.keys(declared.eventTypes).map(enumName).sort());
    for (const [type, description] of Object.entries(declared.eventTypes)) expect(values[enumName(type)]).toBe(`${description} REST: "${type}".`);
  });

  it('the docs list exactly the declared event types (docs/graphql.md), journal kinds and ledger accounts (docs/exports.md)', () => {
    const eventRow = fs.readFileSync('docs/graphql.md', 'utf8').split('\n').find((l) => l.startsWith('| `EventType` |'))!;
    const listed = eventRow.split('|')[2]!.match(/`[A-Z0-9_]+`/g)!.map((v) => v.slice(1, -1));
    expect(listed.sort()).toEqual(Object.keys(declared.eventTypes).map(enumName).sort());
    const kindRow = fs.readFileSync('docs/exports.md', 'utf8').split('\n').find((l) => l.startsWith('| `journal_kind` |'))!;
    const kinds = kindRow.split('|')[2]!.match(/`[a-z_]+`/g)!.map((v) => v.slice(1, -1));
    expect(kinds.sort()).toEqual([...declared.journalKinds].sort());
    const accountRow = fs.readFileSync('docs/exports.md', 'utf8').split('\n').find((l) => l.startsWith('| `account` |'))!;
    const accounts = accountRow.split('|')[2]!.match(/`[a-z_]+`/g)!.map((v) => v.slice(1, -1));
    expect(accounts.sort()).toEqual([...Object.values(ACCOUNTS), ...Object.keys(declared.ledgerAccounts)].sort());
  });
  it('the worked example of docs/architecture.md is src/autoswap/declarations.ts as it is', () => {
    const doc = fs.readFileSync('docs/architecture.md', 'utf8');
    const block = /\*\*Worked example: what autoswap declares\*\*[\s\S]*?```ts no-check\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(fs.readFileSync('src/autoswap/declarations.ts', 'utf8'));
  });
});
