// Enums and small value types shared by several features' GraphQL types.
import { COMPANY_ASSETS, INVOICE_CURRENCIES, NETWORKS, PAYMENT_CURRENCIES } from '../domain/assets.ts';
import { LANGUAGES } from '../domain/languages.ts';
import { MODES } from '../domain/modes.ts';
import { builder } from './builder.ts';

/** The GraphQL name of a spec string: `trc20usdt` -> `TRC20USDT`, `invoice.created` -> `INVOICE_CREATED`. */
export const enumValueName = (spec: string) => spec.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** GraphQL enum whose values are the spec strings: `TRC20USDT` <-> `trc20usdt`; each value names its REST string. */
export function specEnum<T extends string>(name: string, values: readonly T[], description: string, describe: (value: T) => string = () => '') {
  return builder.enumType(name, {
    description,
    values: Object.fromEntries(
      values.map((v) => [enumValueName(v), { value: v, description: `${describe(v)}${describe(v) ? ' ' : ''}REST: "${v}".` }]),
    ) as Record<string, { value: T; description: string }>,
  });
}

export const InvoiceCurrencyEnum = specEnum('InvoiceCurrency', INVOICE_CURRENCIES, 'Currency of invoice prices.');
export const PaymentCurrencyEnum = specEnum('PaymentCurrency', PAYMENT_CURRENCIES, 'Asset plus network a client pays with.');
export const CompanyAssetEnum = specEnum('CompanyAsset', COMPANY_ASSETS, 'Asset a company may accept.');
export const ModeEnum = specEnum('Mode', MODES, 'Test mode (the simulated chain, a test clock) or live mode (real money on real nodes); docs/modes.md.', (m) =>
  m === 'test' ? 'Simulated payments: nothing here is real money.' : 'Real payments on real nodes.',
);
export const LanguageEnum = specEnum('Language', LANGUAGES, 'A language of the checkout page and the client’s e-mails.', (l) => (l === 'en' ? 'English.' : 'German.'));
export const NetworkEnum = specEnum('Network', NETWORKS, 'A blockchain network (the deposit webhook `network`).');

/** Every currency an amount can be in: invoice currencies and payment currencies (asset plus network). */
export const CURRENCIES = [...new Set<string>([...INVOICE_CURRENCIES, ...PAYMENT_CURRENCIES])].sort();
export const CurrencyEnum = specEnum('Currency', CURRENCIES, 'The currency of a Money amount: an invoice currency or a payment currency (asset plus network).');

let eventTypes: ReturnType<typeof specEnum<string>> | null = null;

/**
 * Defines the EventType enum from the features' event types and their descriptions (src/features.ts does, before
 * the schema is built): this layer knows no event type.
 */
export function defineEventTypeEnum(descriptions: Readonly<Record<string, string>>): void {
  if (eventTypes) throw new Error('the EventType enum is defined once');
  eventTypes = specEnum('EventType', Object.keys(descriptions), 'Kind of event; the REST and webhook `type` strings.', (t) => descriptions[t]!);
}

/** The EventType enum, for fields' types (read in a `fields` thunk: it is defined once the features are listed). */
export function eventTypeEnum(): NonNullable<typeof eventTypes> {
  if (!eventTypes) throw new Error('the EventType enum is used before src/features.ts defined it');
  return eventTypes;
}

export interface MoneyShape {
  amount: string;
  currency: string;
}

export const MoneyType = builder.objectRef<MoneyShape>('Money').implement({
  description: 'An exact amount with its currency.',
  fields: (t) => ({
    amount: t.field({ type: 'Decimal', description: 'The amount, exact.', resolve: (m) => m.amount }),
    currency: t.field({ type: CurrencyEnum, description: 'What the amount is counted in.', resolve: (m) => m.currency }),
  }),
});

export const TransferStateEnum = builder.enumType('TransferState', {
  description: 'Where an incoming transfer stands on its chain.',
  values: {
    SEEN: { value: 'seen', description: 'In a block or the mempool, not yet confirmed enough. REST: "seen".' },
    CONFIRMED: { value: 'confirmed', description: 'Has the confirmations its network requires; counted. REST: "confirmed".' },
    DROPPED: { value: 'dropped', description: 'Left the chain (replaced or reorganised away); never counted. REST: "dropped".' },
    FROZEN: { value: 'frozen', description: 'A deposit the risk checks hold; recorded, never credited. REST: "frozen".' },
  } as const,
});
