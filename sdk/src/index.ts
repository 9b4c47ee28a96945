// @payrail/sdk: see README.md (the 5-minute integration guide).
export { createPayrailClient, type PayrailClient, type paths, type components } from './client.ts';
export {
  classify,
  verifySpecSignature,
  verifyStandardSignature,
  verifyWebhook,
  WebhookVerificationError,
  type DepositWebhook,
  type InvoiceWebhook,
  type TestWebhook,
  type VerifyOptions,
  type WebhookEvent,
  type WithdrawalWebhook,
} from './webhooks.ts';
export { webhookMiddleware, type WebhookRequest } from './middleware.ts';
export { followInvoice, type LiveInvoice } from './live.ts';
