import type { DeliveryRecord } from './service.ts';

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
