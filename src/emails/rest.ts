// The notification settings and the e-mail log over REST (the same service as GraphQL).
import { z } from 'zod';
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { isoInstant, nextCursor } from '../http/schemas.ts';
import { CLIENT_KINDS } from './kinds.ts';
import {
  EMAIL_STATUSES,
  emailListSchema,
  getNotificationSettings,
  listEmails,
  notificationSettingsSchema,
  presentEmail,
  setNotificationSettings,
} from './service.ts';

const TAG = 'E-mails';

const on = (what: string) => z.boolean().meta({ description: what });

export const notificationSettingsAnswerSchema = z
  .strictObject({
    client: z
      .strictObject({
        pending: on('After proceed: how much to send, where, until when.'),
        done: on('The receipt.'),
        wrong: on('A short payment: what arrived, what was expected, what happens next.'),
        refunded: on('The payment is sent back.'),
        closed: on('Money arrived after the invoice expired: the merchant decides.'),
      })
      .meta({ description: 'E-mails to the paying client (to the invoice\'s clientEmail), each on or off.' }),
    merchant: z
      .strictObject({
        emails: z.array(z.string()).meta({ description: 'Where the merchant\'s e-mails go (at most 5; none: no merchant e-mails).' }),
        done: on('Payment received.'),
        wrong: on('A short payment waits for your decision.'),
        withdrawalDone: on('A withdrawal is done.'),
        withdrawalRejected: on('A withdrawal was rejected.'),
        depositFrozen: on('A deposit is frozen by the risk checks.'),
        webhookFailing: on('The webhook endpoint has been failing for more than an hour.'),
      })
      .meta({ description: 'E-mails to the merchant.' }),
  })
  .meta({ id: 'NotificationSettings', description: 'Which e-mails are sent (docs/emails.md).' });

export const emailRecordSchema = z
  .strictObject({
    id: z.string(),
    eventId: z.string().meta({ description: 'The event the e-mail is about (GET /api/company/events).' }),
    invoiceId: z.string().nullable(),
    kind: z.string().meta({ description: '`client.pending`, `client.done`, `client.wrong`, `client.refunded`, `client.closed`, `merchant.done`, `merchant.wrong`, `merchant.withdrawal_done`, `merchant.withdrawal_rejected`, `merchant.deposit_frozen`, `merchant.webhook_failing`.' }),
    recipient: z.string(),
    lang: z.enum(['en', 'de']),
    status: z.enum(EMAIL_STATUSES).meta({ description: '`pending` (retried on schedule), `sent` (the SMTP server accepted it), `failed` (a 5xx answer or every attempt failed), `suppressed` (a cap held it back; never sent).' }),
    attempts: z.int(),
    nextAttemptAt: isoInstant.nullable().meta({ description: 'When the next attempt is due, while pending.' }),
    lastResponseCode: z.int().nullable().meta({ description: 'The SMTP reply code of the last attempt.' }),
    lastError: z.string().nullable(),
    sentAt: isoInstant.nullable(),
    createdAt: isoInstant,
  })
  .meta({ id: 'EmailDelivery', description: 'One e-mail of one event to one recipient.' });

export const emailPageSchema = z
  .strictObject({ emails: z.array(emailRecordSchema).meta({ description: 'Newest first.' }), nextCursor })
  .meta({ id: 'EmailDeliveryList' });

export const emailRoutes: Route<Services>[] = [
  route({
    method: 'PUT',
    path: '/api/company/settings/notifications',
    auth: 'required',
    scope: 'settings:write',
    body: notificationSettingsSchema,
    doc: {
      operationId: 'setNotificationSettings',
      summary: 'Set the e-mail notification settings',
      description: 'Turns client e-mails on or off per kind and sets the merchant\'s addresses and kinds. What the body leaves out stays as it is (docs/emails.md).',
      tag: TAG,
      requestExample: { client: Object.fromEntries(CLIENT_KINDS.map((k) => [k, k !== 'pending'])), merchant: { emails: ['payments@shop.example'], webhookFailing: true } },
      responses: { 200: { description: 'The settings now in force.', schema: notificationSettingsAnswerSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: await setNotificationSettings(ctx.emails, req.company!, req.body) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/settings/notifications',
    auth: 'required',
    scope: 'settings:read',
    doc: {
      operationId: 'getNotificationSettings',
      summary: 'Read the e-mail notification settings',
      tag: TAG,
      responses: { 200: { description: 'The settings in force.', schema: notificationSettingsAnswerSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: await getNotificationSettings(ctx.emails, req.company!) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/emails',
    auth: 'required',
    scope: 'settings:read',
    query: emailListSchema,
    doc: {
      operationId: 'listEmails',
      summary: 'List e-mails',
      description: 'The e-mails recorded for your events, newest first, a page at a time (`after`: the last id of the previous page); `invoiceId` narrows them to one invoice.',
      tag: TAG,
      responses: { 200: { description: 'A page of e-mails.', schema: emailPageSchema } },
    },
    handler: async (req, ctx) => {
      const page = await listEmails(ctx.emails, req.company!, req.query);
      return { status: 200, body: { emails: page.emails.map(presentEmail), nextCursor: page.nextCursor } };
    },
  }),
];
