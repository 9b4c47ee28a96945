// The standard payment request URI of each network, for QR codes and "open in wallet" links: BIP-21 (bitcoin,
// litecoin, bitcoin cash), EIP-681 (ether, BNB on BSC, ERC-20 tokens), TON transfer links and Solana Pay. Tron has
// no standard URI: null (wallets scan the bare address).
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { Money } from '../domain/money.ts';

/** EIP-155 chain ids of the EVM networks. */
const CHAIN_ID = { ethereum: 1, bsc: 56 } as const;

/** ERC-20 contracts of the tokens paid on Ethereum (mainnet). */
const TOKEN_CONTRACT: Partial<Record<PaymentCurrency, string>> = {
  usdterc20: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
};

const BIP21_SCHEME = { bitcoin: 'bitcoin', litecoin: 'litecoin', 'bitcoin-cash': 'bitcoincash' } as const;

export interface PaymentRequest {
  currency: PaymentCurrency;
  address: string;
  /** The deposit tag (TON memo), when the network needs one. */
  tag: string | null;
  /** In units of the currency, as a plain decimal string (e.g. "0.00123400"). */
  amount: string;
}

/** `amount` in the currency's smallest unit (wei, nanoton, ...), as an integer string. */
const baseUnits = (amount: string, decimals: number) => new Money(amount).times(new Money(10).pow(decimals)).toFixed(0, Money.ROUND_UP);

/** The amount without trailing zeros, as wallets expect it in BIP-21 and Solana Pay. */
const plain = (amount: string) => new Money(amount).toFixed();

/** The payment URI for `request`, or null where the network has no standard one. */
export function paymentUri(request: PaymentRequest): string | null {
  const info = PAYMENT_CURRENCY_INFO[request.currency];
  const { address, amount } = request;
  switch (info.network) {
    case 'bitcoin':
    case 'litecoin':
    case 'bitcoin-cash': {
      const scheme = BIP21_SCHEME[info.network];
      // A CashAddr already carries its prefix, which is the scheme.
      const target = address.startsWith(`${scheme}:`) ? address : `${scheme}:${address}`;
      return `${target}?amount=${plain(amount)}`;
    }
    case 'ethereum':
    case 'bsc': {
      const chain = CHAIN_ID[info.network];
      const token = TOKEN_CONTRACT[request.currency];
      return token
        ? `ethereum:${token}@${chain}/transfer?address=${address}&uint256=${baseUnits(amount, info.decimals)}`
        : `ethereum:${address}@${chain}?value=${baseUnits(amount, info.decimals)}`;
    }
    case 'ton': {
      const text = request.tag ? `&text=${encodeURIComponent(request.tag)}` : '';
      return `ton://transfer/${address}?amount=${baseUnits(amount, info.decimals)}${text}`;
    }
    case 'solana': {
      // The payment's reference key (its tag) lets the watcher find it among the wallet's transactions.
      const reference = request.tag ? `&reference=${encodeURIComponent(request.tag)}` : '';
      return `solana:${address}?amount=${plain(amount)}${reference}`;
    }
    case 'tron':
      return null;
  }
}

/** What a QR code of the payment carries: its URI, or the bare address where the network has none. */
export const qrContent = (request: PaymentRequest): string => paymentUri(request) ?? request.address;
