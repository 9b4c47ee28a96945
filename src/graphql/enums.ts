import { COMPANY_ASSETS, INVOICE_CURRENCIES, PAYMENT_CURRENCIES } from '../domain/assets.ts';
import { builder } from './builder.ts';

/** GraphQL enum whose values are the spec strings: `TRC20USDT` <-> `trc20usdt`. */
export function specEnum<T extends string>(name: string, values: readonly T[], description: string) {
  return builder.enumType(name, {
    description,
    values: Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as Record<string, { value: T }>,
  });
}

export const InvoiceCurrencyEnum = specEnum('InvoiceCurrency', INVOICE_CURRENCIES, 'Currency of invoice prices.');
export const PaymentCurrencyEnum = specEnum('PaymentCurrency', PAYMENT_CURRENCIES, 'Asset plus network a client pays with.');
export const CompanyAssetEnum = specEnum('CompanyAsset', COMPANY_ASSETS, 'Asset a company may accept.');
