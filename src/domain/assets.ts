// The spec's asset vocabulary in one place: invoice currencies, payment currencies (asset plus network)
// and company assets. Every other module names these through the types below.

export const INVOICE_CURRENCIES = ['eur', 'usd', 'usdt', 'usdc', 'btc', 'eth', 'ton', 'sol', 'bnb', 'bch', 'ltc', 'trx'] as const;
export type InvoiceCurrency = (typeof INVOICE_CURRENCIES)[number];

export const PAYMENT_CURRENCIES = ['btc', 'eth', 'trc20usdt', 'usdterc20', 'sol', 'ton', 'usdc', 'bnb', 'ltc', 'trx', 'bch'] as const;
export type PaymentCurrency = (typeof PAYMENT_CURRENCIES)[number];

export const COMPANY_ASSETS = ['btc', 'eth', 'usdt', 'sol', 'ton', 'usdc', 'bnb', 'ltc', 'near', 'trx', 'bch'] as const;
export type CompanyAsset = (typeof COMPANY_ASSETS)[number];

/** Decimal places of item prices per invoice currency (the spec's precision table). */
export const PRICE_PRECISION: Record<InvoiceCurrency, number> = {
  usd: 2,
  eur: 2,
  usdt: 2,
  usdc: 2,
  sol: 4,
  ton: 4,
  btc: 6,
  eth: 6,
  bnb: 8,
  bch: 8,
  ltc: 8,
  trx: 8,
};

export const NETWORKS = ['bitcoin', 'litecoin', 'bitcoin-cash', 'ethereum', 'bsc', 'tron', 'solana', 'ton'] as const;
export type Network = (typeof NETWORKS)[number];

export interface PaymentCurrencyInfo {
  /** The company asset it pays in (company.assets[].asset). */
  asset: CompanyAsset;
  network: Network;
  /** Smallest unit on chain: amounts the client must send are rounded to this many places. */
  decimals: number;
  /** Deposits need a tag (memo) beside the address. */
  tagged: boolean;
  /** Minutes from proceed to expiredAt. */
  expiryMinutes: number;
  /** Confirmations after which a transfer counts as final. */
  confirmations: number;
  /** Network fee charged on each outgoing transfer (withdrawal, refund), in this currency. */
  withdrawalFee: string;
  /** Smallest outgoing transfer, in this currency. */
  minWithdrawal: string;
  /** Deposits to static addresses below this are dust: not recorded, not credited (docs/deposits.md). */
  depositDust: string;
}

export const PAYMENT_CURRENCY_INFO: Record<PaymentCurrency, PaymentCurrencyInfo> = {
  btc: { asset: 'btc', network: 'bitcoin', decimals: 8, tagged: false, expiryMinutes: 120, confirmations: 2, withdrawalFee: '0.00002', minWithdrawal: '0.0001', depositDust: '0.00001' },
  eth: { asset: 'eth', network: 'ethereum', decimals: 18, tagged: false, expiryMinutes: 30, confirmations: 12, withdrawalFee: '0.0005', minWithdrawal: '0.001', depositDust: '0.0001' },
  trc20usdt: { asset: 'usdt', network: 'tron', decimals: 6, tagged: false, expiryMinutes: 30, confirmations: 19, withdrawalFee: '1', minWithdrawal: '5', depositDust: '0.1' },
  usdterc20: { asset: 'usdt', network: 'ethereum', decimals: 6, tagged: false, expiryMinutes: 30, confirmations: 12, withdrawalFee: '5', minWithdrawal: '10', depositDust: '1' },
  sol: { asset: 'sol', network: 'solana', decimals: 9, tagged: false, expiryMinutes: 30, confirmations: 32, withdrawalFee: '0.00001', minWithdrawal: '0.01', depositDust: '0.001' },
  ton: { asset: 'ton', network: 'ton', decimals: 9, tagged: true, expiryMinutes: 30, confirmations: 1, withdrawalFee: '0.01', minWithdrawal: '0.1', depositDust: '0.01' },
  usdc: { asset: 'usdc', network: 'ethereum', decimals: 6, tagged: false, expiryMinutes: 30, confirmations: 12, withdrawalFee: '5', minWithdrawal: '10', depositDust: '1' },
  bnb: { asset: 'bnb', network: 'bsc', decimals: 18, tagged: false, expiryMinutes: 30, confirmations: 15, withdrawalFee: '0.0005', minWithdrawal: '0.001', depositDust: '0.0001' },
  ltc: { asset: 'ltc', network: 'litecoin', decimals: 8, tagged: false, expiryMinutes: 30, confirmations: 6, withdrawalFee: '0.0001', minWithdrawal: '0.001', depositDust: '0.0001' },
  trx: { asset: 'trx', network: 'tron', decimals: 6, tagged: false, expiryMinutes: 30, confirmations: 19, withdrawalFee: '1', minWithdrawal: '10', depositDust: '1' },
  bch: { asset: 'bch', network: 'bitcoin-cash', decimals: 8, tagged: false, expiryMinutes: 30, confirmations: 6, withdrawalFee: '0.00001', minWithdrawal: '0.0001', depositDust: '0.00001' },
};

/** Assets a new company accepts unless told otherwise: every asset a payment currency pays in. */
export const DEFAULT_ACCEPTED_ASSETS: CompanyAsset[] = COMPANY_ASSETS.filter((a) =>
  PAYMENT_CURRENCIES.some((p) => PAYMENT_CURRENCY_INFO[p].asset === a),
);

export const isInvoiceCurrency = (v: string): v is InvoiceCurrency => (INVOICE_CURRENCIES as readonly string[]).includes(v);
export const isPaymentCurrency = (v: string): v is PaymentCurrency => (PAYMENT_CURRENCIES as readonly string[]).includes(v);
/** Whether payments on a network are offered to a merchant (in its mode: docs/modes.md). */
export type OfferedNetwork = (network: Network) => boolean;

/** Whether an asset can be paid in: one of its payment currencies runs on an offered network. */
const assetOffered = (asset: CompanyAsset, offered: OfferedNetwork) =>
  PAYMENT_CURRENCIES.some((p) => PAYMENT_CURRENCY_INFO[p].asset === asset && offered(PAYMENT_CURRENCY_INFO[p].network));

/** company.assets: every spec asset with whether clients may pay in it (the company accepts it and it is offered). */
export const presentCompanyAssets = (acceptedAssets: string[], offered: OfferedNetwork): { asset: CompanyAsset; isAllowed: boolean }[] =>
  COMPANY_ASSETS.map((asset) => ({ asset, isAllowed: acceptedAssets.includes(asset) && assetOffered(asset, offered) }));
