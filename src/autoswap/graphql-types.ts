// The AutoSwap GraphQL type, apart from the rest of autoswap's schema: the invoice and deposit types import it for
// their `autoswaps` fields (features import each other in one direction only).
import { formatPlain } from '../domain/money.ts';
import { builder } from '../graphql/builder.ts';
import { PaymentCurrencyEnum } from '../graphql/enums.ts';
import { entryRate } from './rules.ts';

const AutoswapStatusEnum = builder.enumType('AutoswapStatus', {
  description: 'Where an autoswap stands.',
  values: {
    QUEUED: { value: 'queued', description: 'Held, waiting for its venue. REST: "queued".' },
    SUBMITTED: { value: 'submitted', description: 'The venue has the order. REST: "submitted".' },
    DONE: { value: 'done', description: 'Filled: the target amount is available. REST: "done".' },
    FAILED: { value: 'failed', description: 'Not filled; the source amount is available again. REST: "failed".' },
  } as const,
});

export const AutoswapType = builder.prismaObject('AutoSwap', {
  description: 'An autoswap of a credit (REST: an `invoiceTransactions` entry of kind autoswap; docs/autoswap.md).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The swap id (also the venue’s idempotency id).' }),
    from: t.field({ type: PaymentCurrencyEnum, description: 'The currency sold.', resolve: (s) => s.fromCurrency as never }),
    amount: t.field({ type: 'Decimal', description: 'Sold, in `from`.', resolve: (s) => formatPlain(s.amount) }),
    to: t.field({ type: PaymentCurrencyEnum, description: 'The currency bought.', resolve: (s) => s.toCurrency as never }),
    toAmount: t.field({ type: 'Decimal', nullable: true, description: 'Credited in `to` once done (after fees).', resolve: (s) => (s.toAmount === null ? null : formatPlain(s.toAmount)) }),
    rate: t.field({ type: 'Decimal', nullable: true, description: 'Once done toAmount / amount; before, the rate the minimum output was fixed from.', resolve: (s) => entryRate(s) }),
    status: t.field({ type: AutoswapStatusEnum, description: 'Where it stands.', resolve: (s) => s.status as never }),
    txHash: t.exposeString('ref', { nullable: true, description: 'The transaction hash on chain or the venue’s order id; null until submitted.' }),
    invoiceId: t.exposeString('invoiceId', { nullable: true, description: 'The invoice whose payment it swaps.' }),
    addressId: t.exposeString('addressId', { nullable: true, description: 'The address that received the swapped money.' }),
    reason: t.exposeString('failReason', { nullable: true, description: 'Why it failed.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the credit was held for it.' }),
  }),
});
