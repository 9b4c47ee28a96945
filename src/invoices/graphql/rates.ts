// GraphQL of the rates: Invoice.rateDetails (the locked rate's audit) and the `rates(invoiceCurrency:)` read.
import { builder } from '../../graphql/builder.ts';
import { InvoiceCurrencyEnum, PaymentCurrencyEnum, specEnum } from '../../graphql/enums.ts';
import { presentRateDetails, RATE_SOURCE_NAMES, type PresentedRateDetails, type PresentedRatePrice, type PresentedRateSource } from '../../pricing/audit.ts';
import { listRates, type RateView } from '../rates.ts';

const SOURCE_DESCRIPTIONS: Record<(typeof RATE_SOURCE_NAMES)[number], string> = {
  kraken: 'Kraken’s public ticker (through ccxt).',
  bitstamp: 'Bitstamp’s public ticker (through ccxt).',
  coinbase: 'Coinbase’s public ticker (through ccxt).',
  binance: 'Binance’s public ticker (through ccxt).',
  coingecko: 'CoinGecko’s simple/price.',
  static: 'The static table (RATES_FILE or the built-in demo prices).',
};

export const RateSourceNameEnum = specEnum('RateSourceName', RATE_SOURCE_NAMES, 'Where a price came from (docs/rates.md).', (s) => SOURCE_DESCRIPTIONS[s]);
const RateKindEnum = specEnum('RateKind', ['live', 'static'] as const, 'How a rate was made.', (k) =>
  k === 'live' ? 'Aggregated from the sources of RATES_CONFIG.' : 'The static table (test mode by default).',
);

const RateSourcePriceType = builder.objectRef<PresentedRateSource>('RateSourcePrice').implement({
  description: 'One source’s price that went into a rate.',
  fields: (t) => ({
    source: t.field({ type: RateSourceNameEnum, description: 'The source.', resolve: (s) => s.source }),
    market: t.exposeString('market', { description: 'The market or id it priced, e.g. BTC/USD, BTC/USDT, bitcoin.usd, RATES_FILE.' }),
    price: t.field({ type: 'Decimal', description: 'The price as the source gave it, in the market’s quote currency.', resolve: (s) => s.price }),
    usdPrice: t.field({ type: 'Decimal', description: 'The same in USD.', resolve: (s) => s.usdPrice }),
    fetchedAt: t.field({ type: 'DateTime', description: 'When the source answered.', resolve: (s) => new Date(s.fetchedAt) }),
  }),
});

const RatePriceType = builder.objectRef<PresentedRatePrice>('RatePrice').implement({
  description: 'The USD price of one side of a rate and the sources that made it.',
  fields: (t) => ({
    asset: t.field({ type: InvoiceCurrencyEnum, description: 'The currency or asset priced.', resolve: (p) => p.asset as never }),
    usdPrice: t.field({ type: 'Decimal', description: 'The median of the sources used (1 for USD).', resolve: (p) => p.usdPrice }),
    sources: t.field({ type: [RateSourcePriceType], description: 'The prices used (none for USD).', resolve: (p) => p.sources }),
  }),
});

export const RateDetailsType = builder.objectRef<PresentedRateDetails>('RateDetails').implement({
  description: 'What an invoice’s locked rate was made of (REST paymentDetails.rateSources): rate = invoiceCurrency.usdPrice / paymentCurrency.usdPrice × (1 + spreadPercent/100).',
  fields: (t) => ({
    kind: t.field({ type: RateKindEnum, description: 'Live sources or the static table.', resolve: (d) => d.kind }),
    invoiceCurrency: t.field({ type: RatePriceType, description: 'The invoice currency’s side.', resolve: (d) => d.invoiceCurrency }),
    paymentCurrency: t.field({ type: RatePriceType, description: 'The payment asset’s side.', resolve: (d) => d.paymentCurrency }),
    spreadPercent: t.field({ type: 'Decimal', description: 'Added to the mid rate (the client pays it).', resolve: (d) => d.spreadPercent }),
    computedAt: t.field({ type: 'DateTime', description: 'When the rate was locked (proceed).', resolve: (d) => new Date(d.computedAt) }),
  }),
});

builder.prismaObjectField('Invoice', 'rateDetails', (t) =>
  t.field({
    type: RateDetailsType,
    nullable: true,
    description: 'What the locked rate was made of, once filled; null before, and for invoices filled before it was recorded.',
    select: { rateDetails: true },
    resolve: (i) => presentRateDetails(i.rateDetails),
  }),
);

const RateType = builder.objectRef<RateView>('ExchangeRate').implement({
  description: 'What one unit of an invoice currency converts to in a payment currency now.',
  fields: (t) => ({
    paymentCurrency: t.field({ type: PaymentCurrencyEnum, description: 'The payment currency.', resolve: (r) => r.paymentCurrency as never }),
    rate: t.field({ type: 'Decimal', description: 'Units of the payment currency per unit of the invoice currency (spread included), as proceed would lock it now.', resolve: (r) => r.rate }),
    sources: t.field({ type: [RateSourceNameEnum], description: 'The sources whose prices made it.', resolve: (r) => r.sources as never }),
    updatedAt: t.field({ type: 'DateTime', description: 'When the oldest of those prices was fetched.', resolve: (r) => r.updatedAt }),
  }),
});

builder.queryField('rates', (t) =>
  t.field({
    type: [RateType],
    description:
      'Public (REST GET /api/rates). The rates proceed would lock now from `invoiceCurrency`, in the token’s mode, or live mode without a token; a currency without a good rate now is left out.',
    args: { invoiceCurrency: t.arg({ type: InvoiceCurrencyEnum, required: true, description: 'The currency the prices are in.' }) },
    resolve: (_root, { invoiceCurrency }, ctx) => listRates(ctx.invoices.rates, ctx.company?.mode ?? 'live', invoiceCurrency as never),
  }),
);
