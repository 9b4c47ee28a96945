import { randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';

/** 128 random bits in base58: unguessable, URL-safe, no look-alike characters. */
export const newInvoiceId = (): string => base58.encode(randomBytes(16));

export const INVOICE_ID_PATTERN = /^[1-9A-HJ-NP-Za-km-z]{16,24}$/;
