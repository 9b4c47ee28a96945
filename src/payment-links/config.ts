import { z } from 'zod';
import { configSection } from '../core/config-section.ts';

export const paymentLinkConfig = configSection('PAYMENT_LINK_', {
  /** Invoices one client address may make by opening payment links within a window (docs/payment-links.md). */
  PAYMENT_LINK_OPENS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(30),
  /** The window of that limit. */
  PAYMENT_LINK_OPEN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
});
