import type { Network, PaymentCurrency } from '../domain/assets.ts';

export interface AllocatedAddress {
  address: string;
  /** Deposit tag (memo) for tagged networks such as TON; null elsewhere. */
  tag: string | null;
}

export interface AddressRequest {
  companyId: string;
  invoiceId: string;
  paymentCurrency: PaymentCurrency;
}

/** One per network; the rest of the service talks to chains only through this. */
export interface ChainAdapter {
  readonly network: Network;
  allocateAddress(request: AddressRequest): Promise<AllocatedAddress>;
  isValidAddress(address: string): boolean;
}

export interface ChainRegistry {
  forNetwork(network: Network): ChainAdapter;
  readonly sandbox: boolean;
}
