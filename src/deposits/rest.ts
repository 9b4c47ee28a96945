// Static deposit addresses and their deposits (the spec shows no endpoints; designed like the rest: docs/deposits.md).
import type { Services } from '../core/feature.ts';
import { z } from 'zod';
import { route, type Route } from '../http/router.ts';
import {
  createStaticAddress,
  createStaticAddressSchema,
  depositListSchema,
  depositPageSchema,
  getStaticAddress,
  listDeposits,
  listStaticAddresses,
  presentDeposit,
  presentStaticAddress,
  staticAddressListSchema,
  staticAddressPageSchema,
  staticAddressSchema,
} from './service.ts';

const TAG = 'Deposits';

export const depositRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/static-addresses',
    auth: 'required',
    scope: 'deposits:write',
    body: createStaticAddressSchema,
    doc: {
      operationId: 'createStaticAddress',
      summary: 'Get a static deposit address for a user',
      description:
        "The user's address for the payment currency: a new one (201), or the one they already have (200), so a retry is safe. Deposits to it are credited (less the deposit fee) and reported by `deposit.*` webhooks (docs/deposits.md).",
      tag: TAG,
      requestExample: { asset: 'trc20usdt', internalUserId: 'user-1042', email: 'user@example.com' },
      responses: {
        201: { description: 'A new address.', schema: staticAddressSchema },
        200: { description: 'The address this user already has for the currency.', schema: staticAddressSchema },
      },
    },
    handler: async (req, ctx) => {
      const { address, created } = await createStaticAddress(ctx.deposits, req.company!, req.body);
      return { status: created ? 201 : 200, body: presentStaticAddress(address) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/static-addresses',
    auth: 'required',
    scope: 'deposits:read',
    query: staticAddressListSchema,
    doc: {
      operationId: 'listStaticAddresses',
      summary: 'List static deposit addresses',
      description: 'Newest first, a page at a time (`after`: the last id of the previous page).',
      tag: TAG,
      responses: { 200: { description: 'A page of addresses.', schema: staticAddressPageSchema } },
    },
    handler: async (req, ctx) => {
      const { staticAddresses, nextCursor } = await listStaticAddresses(ctx.deposits, req.company!, req.query);
      return { status: 200, body: { staticAddresses: staticAddresses.map(presentStaticAddress), nextCursor } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/static-addresses/:id',
    auth: 'required',
    scope: 'deposits:read',
    doc: {
      operationId: 'getStaticAddress',
      summary: 'Read a static deposit address',
      tag: TAG,
      params: { id: z.string().meta({ description: 'The static address id.' }) },
      responses: { 200: { description: 'The address.', schema: staticAddressSchema } },
      errors: [404],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentStaticAddress(await getStaticAddress(ctx.deposits, req.company!, req.params['id']!)) }),
  }),
  route({
    method: 'GET',
    path: '/api/deposits',
    auth: 'required',
    scope: 'deposits:read',
    query: depositListSchema,
    doc: {
      operationId: 'listDeposits',
      summary: 'List deposits to static addresses',
      description: 'Newest first, a page at a time (`after`: the last id of the previous page).',
      tag: TAG,
      responses: { 200: { description: 'A page of deposits.', schema: depositPageSchema } },
    },
    handler: async (req, ctx) => {
      const { deposits, nextCursor } = await listDeposits(ctx.deposits, req.company!, req.query);
      return { status: 200, body: { deposits: deposits.map(presentDeposit), nextCursor } };
    },
  }),
];
