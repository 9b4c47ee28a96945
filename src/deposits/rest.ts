// Static deposit addresses and their deposits (the spec shows no endpoints; designed like the rest: docs/deposits.md).
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import {
  createStaticAddress,
  createStaticAddressSchema,
  depositListSchema,
  getStaticAddress,
  listDeposits,
  listStaticAddresses,
  presentDeposit,
  presentStaticAddress,
  staticAddressListSchema,
} from './service.ts';

export const depositRoutes: Route<Services>[] = [
  route({
    method: 'POST',
    path: '/api/static-addresses',
    auth: 'required',
    body: createStaticAddressSchema,
    handler: async (req, ctx) => {
      const { address, created } = await createStaticAddress(ctx.deposits, req.company!, req.body);
      return { status: created ? 201 : 200, body: presentStaticAddress(address) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/static-addresses',
    auth: 'required',
    query: staticAddressListSchema,
    handler: async (req, ctx) => {
      const { staticAddresses, nextCursor } = await listStaticAddresses(ctx.deposits, req.company!, req.query);
      return { status: 200, body: { staticAddresses: staticAddresses.map(presentStaticAddress), nextCursor } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/static-addresses/:id',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentStaticAddress(await getStaticAddress(ctx.deposits, req.company!, req.params['id']!)) }),
  }),
  route({
    method: 'GET',
    path: '/api/deposits',
    auth: 'required',
    query: depositListSchema,
    handler: async (req, ctx) => {
      const { deposits, nextCursor } = await listDeposits(ctx.deposits, req.company!, req.query);
      return { status: 200, body: { deposits: deposits.map(presentDeposit), nextCursor } };
    },
  }),
];
