// REST for payout protection: the policy and the address book (docs/security.md, "Payout protection").
import { z } from 'zod';
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import {
  addPayoutAddress,
  getPayoutPolicy,
  listPayoutAddresses,
  payoutAddressInputSchema,
  payoutAddressListSchema,
  payoutAddressSchema,
  payoutPolicyAnswerSchema,
  payoutPolicySchema,
  presentPayoutAddress,
  presentPolicy,
  removePayoutAddress,
  setPayoutPolicy,
} from './protection.ts';

const TAG = 'Withdrawals';

export const protectionRoutes: Route<Services>[] = [
  route({
    method: 'GET',
    path: '/api/company/settings/payout-policy',
    auth: 'required',
    scope: 'payouts:read',
    doc: {
      operationId: 'getPayoutPolicy',
      summary: 'Read the payout policy',
      tag: TAG,
      responses: { 200: { description: 'The policy in force and a weakening that waits.', schema: payoutPolicyAnswerSchema } },
      errors: [403],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentPolicy(await getPayoutPolicy(ctx.withdrawals, req.company!)) }),
  }),
  route({
    method: 'PUT',
    path: '/api/company/settings/payout-policy',
    auth: 'required',
    scope: 'payouts:write',
    body: payoutPolicySchema,
    doc: {
      operationId: 'setPayoutPolicy',
      summary: 'Set the payout policy',
      description:
        'With `allowListOnly`, withdrawals and auto-withdrawal rules may pay only addresses of the payout address book that have been there for `cooldownHours` (on the tenant\'s clock: the test clock in test mode). Strengthening (turning it on, a longer cool-down) holds at once; weakening (turning it off, a shorter cool-down) only after the cool-down in force now (`pending`). `cooldownHours` 0 to 8760; 0 in test mode only. Refunds go to the client and are not affected.',
      tag: TAG,
      requestExample: { allowListOnly: true, cooldownHours: 24 },
      responses: { 200: { description: 'The policy after the change.', schema: payoutPolicyAnswerSchema } },
      errors: [403],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentPolicy(await setPayoutPolicy(ctx.withdrawals, req.company!, req.access!.actor, req.body)) }),
  }),
  route({
    method: 'POST',
    path: '/api/company/payout-addresses',
    auth: 'required',
    scope: 'payouts:write',
    body: payoutAddressInputSchema,
    doc: {
      operationId: 'addPayoutAddress',
      summary: 'Add an address to the payout address book',
      description: 'Validated like a withdrawal\'s receiver (the address of the asset\'s network, a tag where the asset takes one). Usable under `allowListOnly` once the cool-down has passed (`usableFrom`). At most 1000 entries.',
      tag: TAG,
      requestExample: { asset: 'trc20usdt', address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', tag: null, label: 'Cold wallet' },
      responses: { 201: { description: 'The entry.', schema: payoutAddressSchema } },
      errors: [403, 409],
    },
    handler: async (req, ctx) => {
      const row = await addPayoutAddress(ctx.withdrawals, req.company!, req.access!.actor, req.body);
      return { status: 201, body: presentPayoutAddress(row, await getPayoutPolicy(ctx.withdrawals, req.company!)) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/company/payout-addresses',
    auth: 'required',
    scope: 'payouts:read',
    doc: {
      operationId: 'listPayoutAddresses',
      summary: 'List the payout address book',
      description: 'Every entry (at most 1000), newest first.',
      tag: TAG,
      responses: { 200: { description: 'The entries.', schema: payoutAddressListSchema } },
      errors: [403],
    },
    handler: async (req, ctx) => {
      const [rows, policy] = await Promise.all([listPayoutAddresses(ctx.withdrawals, req.company!.id), getPayoutPolicy(ctx.withdrawals, req.company!)]);
      return { status: 200, body: { addresses: rows.map((r) => presentPayoutAddress(r, policy)) } };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/company/payout-addresses/:id',
    auth: 'required',
    scope: 'payouts:write',
    doc: {
      operationId: 'removePayoutAddress',
      summary: 'Remove an address from the payout address book',
      description: 'At once (a strengthening). Adding it again starts its cool-down anew.',
      tag: TAG,
      params: { id: z.uuid().meta({ description: 'The entry id.' }) },
      responses: { 204: { description: 'Removed.' } },
      errors: [403, 404],
    },
    handler: async (req, ctx) => {
      await removePayoutAddress(ctx.withdrawals, req.company!, req.access!.actor, req.params['id']!);
      return { status: 204 };
    },
  }),
];
