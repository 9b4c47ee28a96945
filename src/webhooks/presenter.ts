import { z } from 'zod';
import { isoInstant, nextCursor } from '../http/schemas.ts';
import type { DeliveryRecord } from './service.ts';

// The REST bodies of the webhook settings, deliveries and events as the OpenAPI document shows them (docs/openapi.md).

const eventType = z.string().meta({ description: 'e.g. `invoice.done`, `withdrawal.processing`, `deposit.done`, `invoice.late_payment` (docs/webhooks.md).' });
const eventPayload = z
  .record(z.string(), z.unknown())
  .meta({ description: 'The event body exactly as sent (numbers with their exact digits): the spec\'s webhook payload of its kind.' });

export const webhookUrlAnswerSchema = z
  .strictObject({ webHookUrl: z.string().nullable().meta({ description: 'Where webhooks go; null when none is set.' }) })
  .meta({ id: 'WebhookUrl' });

export const webhookTestResultSchema = z
  .strictObject({
    ok: z.boolean().meta({ description: 'The endpoint answered 2xx.' }),
    statusCode: z.int().nullable().meta({ description: 'HTTP status of the answer; null when none came.' }),
    durationMs: z.int(),
    error: z.string().nullable(),
    responseBody: z.string().nullable().meta({ description: 'First 1 KiB of the answer.' }),
    eventId: z.string().meta({ description: 'The test event\'s id, the webhook-id header the receiver saw.' }),
    url: z.string(),
  })
  .meta({ id: 'WebhookTestResult', description: 'What happened to a test webhook (sent once, not retried, not logged).' });

const webhookAttemptSchema = z
  .strictObject({
    attempt: z.int(),
    startedAt: isoInstant,
    durationMs: z.int(),
    statusCode: z.int().nullable(),
    error: z.string().nullable(),
    responseBody: z.string().nullable().meta({ description: 'First 1 KiB of the answer.' }),
  })
  .meta({ id: 'WebhookAttempt' });

export const webhookDeliverySchema = z
  .strictObject({
    id: z.string(),
    eventId: z.string().meta({ description: 'The webhook-id header: the same on every retry and redelivery.' }),
    eventType,
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.int(),
    nextAttemptAt: isoInstant.nullable().meta({ description: 'When the next attempt is due, while pending.' }),
    deliveredAt: isoInstant.nullable(),
    lastStatusCode: z.int().nullable(),
    lastError: z.string().nullable(),
    createdAt: isoInstant,
    payload: eventPayload,
    attemptLog: z.array(webhookAttemptSchema),
  })
  .meta({ id: 'WebhookDelivery', description: 'One delivery of an event to the webhook URL, with its attempts.' });

export const webhookDeliveryPageSchema = z
  .strictObject({ deliveries: z.array(webhookDeliverySchema).meta({ description: 'Newest first.' }), nextCursor })
  .meta({ id: 'WebhookDeliveryList' });

export const redeliveredSchema = z.strictObject({ redelivered: z.int().meta({ description: 'Events sent again.' }) }).meta({ id: 'RedeliverFailedResult' });

export const eventPageSchema = z
  .strictObject({
    events: z.array(
      z
        .strictObject({
          id: z.string(),
          cursor: z.string().meta({ description: 'Its position in the feed.' }),
          type: eventType,
          createdAt: isoInstant,
          payload: eventPayload,
        })
        .meta({ id: 'Event' }),
    ),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `after` to read on; the same cursor again when nothing new came (null only for an empty feed read from the start).' }),
  })
  .meta({ id: 'EventList', description: 'The catch-up feed: every event of the merchant in order.' });

export const presentAttempt = (a: DeliveryRecord['attemptLog'][number]) => ({
  attempt: a.attempt,
  startedAt: a.startedAt.toISOString(),
  durationMs: a.durationMs,
  statusCode: a.statusCode,
  error: a.error,
  responseBody: a.responseBody,
});

/** `payload`: the event body with exact numbers (exactPayloads); the parsed column otherwise. */
export const presentDelivery = (d: DeliveryRecord, payloads?: Map<string, unknown>) => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.event.type,
  url: d.url,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
  deliveredAt: d.deliveredAt?.toISOString() ?? null,
  lastStatusCode: d.lastStatusCode,
  lastError: d.lastError,
  createdAt: d.createdAt.toISOString(),
  payload: payloads?.get(d.eventId) ?? d.event.payload,
  attemptLog: d.attemptLog.map(presentAttempt),
});
