// What e-mails name that the layers below handle without knowing them (docs/architecture.md, "Adding a feature").
import type { Declarations } from '../core/feature.ts';

/**
 * A merchant's webhook endpoint has been failing for a while (webhook-watch.ts): the merchant gets an e-mail
 * (docs/emails.md). An internal event: never pushed, not in the feed.
 */
export const WEBHOOK_FAILING = 'webhook.failing';

export const emailDeclarations = { internalEventTypes: [WEBHOOK_FAILING] } satisfies Declarations;
