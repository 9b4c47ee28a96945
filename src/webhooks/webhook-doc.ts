// The test event's body as the OpenAPI document publishes it (docs/webhooks.md); service.ts sendTestWebhook builds it.
import { z } from 'zod';
import type { WebhookDoc } from '../core/feature.ts';
import { isoInstant } from '../http/schemas.ts';

export const TEST_WEBHOOK_MESSAGE = 'Test webhook from Payrail';

export const testWebhookSchema = z
  .strictObject({
    type: z.literal('test'),
    message: z.literal(TEST_WEBHOOK_MESSAGE),
    eventId: z.string().meta({ description: '`test_` + a UUID; also the `webhook-id` header.' }),
    sentAt: isoInstant,
  })
  .meta({ id: 'TestWebhook', description: 'The test event: sent only on request, never retried or logged.' });

export const testWebhook: WebhookDoc = {
  name: 'test',
  summary: 'Test event',
  description: 'Sent by `POST /api/company/settings/webhook-url/test` (GraphQL `sendTestWebhook`) to check the endpoint and its signature checks.',
  schema: testWebhookSchema,
  example: { type: 'test', message: TEST_WEBHOOK_MESSAGE, eventId: 'test_0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', sentAt: '2026-11-26T12:00:00.000Z' },
};
