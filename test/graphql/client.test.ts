// Every query and mutation through codegen's typed documents and a real GraphQL client (urql core) against the
// running server, switching on `__typename` of each result as a client team would.
import fs from 'node:fs';
import path from 'node:path';
import { Client, fetchExchange, type AnyVariables, type TypedDocumentNode } from '@urql/core';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AcceptInvoiceDocument,
  AdvanceSandboxClockDocument,
  BalancesDocument,
  ViewerDocument,
  ConfirmSandboxTransferDocument,
  CreateExportLinkDocument,
  CreateInvoiceDocument,
  CreateSandboxTransferDocument,
  DropSandboxTransferDocument,
  InvoiceDocument,
  InvoiceOverviewDocument,
  RatesDocument,
  InvoicesDocument,
  NodeDocument,
  NodesDocument,
  ProceedInvoiceDocument,
  RedeliverFailedDocument,
  RedeliverWebhookDocument,
  RefundInvoiceDocument,
  SendTestWebhookDocument,
  SetUnderpaymentLimitsDocument,
  SetWebhookUrlDocument,
  UnderpaymentLimitsDocument,
  WebhookDeliveriesDocument,
  WebhookSettingsDocument,
  AutoWithdrawalsDocument,
  ConfirmSandboxWithdrawalDocument,
  RejectSandboxWithdrawalDocument,
  UpdateAutoWithdrawalsDocument,
  WithdrawDocument,
  WithdrawalDocument,
  WithdrawalQuoteDocument,
  WithdrawalsDocument,
  CreateStaticAddressDocument,
  DepositsDocument,
  StaticAddressDocument,
  StaticAddressesDocument,
  NotificationSettingsDocument,
  SetNotificationSettingsDocument,
  EmailDeliveriesDocument,
  ApiKeysDocument,
  AuditLogDocument,
  AddPayoutAddressDocument,
  CreateApiKeyDocument,
  PayoutProtectionDocument,
  RemovePayoutAddressDocument,
  RevokeApiKeyDocument,
  SetPayoutPolicyDocument,
  StoreSettingsDocument,
  UpdateStoreSettingsDocument,
  CreatePaymentLinkDocument,
  PaymentLinkDocument,
  PaymentLinksDocument,
  DeactivatePaymentLinkDocument,
  AutoswapRulesDocument,
  InvoiceAutoswapsDocument,
  SetSandboxSwapVenueDocument,
  UpdateAutoswapRulesDocument,
} from '../../generated/gql/graphql.ts';
import { graphqlSchema } from '../../src/features.ts';
import { DATABASES } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer } from '../support/server.ts';

const DOCUMENTS = ['operations.graphql', 'subscriptions.graphql'].map((f) => path.resolve('test/graphql/documents', f));
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** The typed value of a result union once its `__typename` is known. */
function as<T extends { __typename?: string }, N extends string>(value: T | null | undefined, typename: N): Extract<T, { __typename?: N }> {
  expect(value?.__typename).toBe(typename);
  return value as Extract<T, { __typename?: N }>;
}

describe('the typed documents cover the schema', () => {
  it('every Query, Mutation and Subscription field is used by an operation in the documents', () => {
    const used = new Set<string>();
    for (const def of DOCUMENTS.flatMap((file) => parse(fs.readFileSync(file, 'utf8')).definitions)) {
      if (def.kind !== Kind.OPERATION_DEFINITION) continue;
      for (const sel of (def as OperationDefinitionNode).selectionSet.selections) if (sel.kind === Kind.FIELD) used.add(`${def.operation}.${sel.name.value}`);
    }
    const schema = graphqlSchema();
    const all = [
      ...Object.keys(schema.getQueryType()!.getFields()).map((f) => `query.${f}`),
      ...Object.keys(schema.getMutationType()!.getFields()).map((f) => `mutation.${f}`),
      ...Object.keys(schema.getSubscriptionType()!.getFields()).map((f) => `subscription.${f}`),
    ];
    expect(all.filter((f) => !used.has(f))).toEqual([]);
  });
});

describe.each(DATABASES)('GraphQL through a typed client on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });
  const receivers: Receiver[] = [];
  afterAll(async () => Promise.all(receivers.map((r) => r.close())));

  const executed = new Set<string>();
  const clientFor = (token?: string) => {
    const client = new Client({
      url: `${server.url}/graphql`,
      exchanges: [fetchExchange],
      preferGetMethod: false,
      requestPolicy: 'network-only',
      fetchOptions: (): RequestInit => ({ headers: token ? { authorization: `Bearer ${token}` } : ({} as Record<string, string>) }),
    });
    const run = async <D, V extends AnyVariables>(kind: 'query' | 'mutation', doc: TypedDocumentNode<D, V>, variables: V) => {
      const name = (doc.definitions[0] as OperationDefinitionNode).name!.value;
      executed.add(name);
      const result = await (kind === 'query' ? client.query(doc, variables) : client.mutation(doc, variables)).toPromise();
      return result;
    };
    return {
      query: <D, V extends AnyVariables>(doc: TypedDocumentNode<D, V>, variables: V) => run('query', doc, variables),
      mutate: async <D, V extends AnyVariables>(doc: TypedDocumentNode<D, V>, variables: V): Promise<D> => {
        const result = await run('mutation', doc, variables);
        expect(result.error).toBeUndefined();
        return result.data!;
      },
    };
  };

  it('serves GET /schema.graphql: the committed schema, for codegen against a deployment', async () => {
    const res = await fetch(`${server.url}/schema.graphql`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/graphql; charset=utf-8');
    expect(await res.text()).toBe(fs.readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
    const head = await fetch(`${server.url}/schema.graphql`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(fs.readFileSync(new URL('../../schema.graphql', import.meta.url))));
    expect((await fetch(`${server.url}/schema.graphql`, { method: 'POST' })).status).toBe(404);
  });

  it('runs every operation and switches on the result types', async () => {
    const m = await server.merchant({ name: 'Typed Co' });
    const merchant = clientFor(m.publicToken);
    const anonymous = clientFor();
    const receiver = await startReceiver(() => m.secretKey);
    receivers.push(receiver);

    // Webhook settings: a success object also when cleared, never null.
    const cleared = as((await merchant.mutate(SetWebhookUrlDocument, { input: { url: null } })).setWebhookUrl, 'SetWebhookUrlSuccess');
    expect(cleared.webhookSettings.url).toBeNull();
    const badUrl = as((await merchant.mutate(SetWebhookUrlDocument, { input: { url: 'ftp://example.com' } })).setWebhookUrl, 'ValidationError');
    expect(badUrl.code).toBe('VALIDATION_FAILED');
    expect(badUrl.details[0]!.path).toBe('webHookUrl');
    const set = as((await merchant.mutate(SetWebhookUrlDocument, { input: { url: receiver.url } })).setWebhookUrl, 'SetWebhookUrlSuccess');
    const settings = (await merchant.query(WebhookSettingsDocument, {})).data!.webhookSettings;
    expect(settings).toEqual({ id: set.webhookSettings.id, url: receiver.url });

    // Invoices.
    const refused = as(
      (await merchant.mutate(CreateInvoiceDocument, { input: { invoiceCurrency: 'USD', items: [{ name: 'x', price: '0' }] } })).createInvoice,
      'ValidationError',
    );
    expect(refused.details).toEqual([{ path: 'items', message: 'the total of all item prices must be greater than 0' }]);
    const createInvoice = async (price: string) =>
      as((await merchant.mutate(CreateInvoiceDocument, { input: { invoiceCurrency: 'USD', items: [{ name: 'Tea', price }, { name: 'Cake', price: '0.5' }] } })).createInvoice, 'CreateInvoiceSuccess')
        .invoice;
    const created = await createInvoice('99.495');
    expect(created).toMatchObject({ status: 'CREATED', total: { amount: '100.00', currency: 'USD' }, address: null, company: { name: 'Typed Co' } });
    const proceed = async (invoiceId: string) =>
      as((await anonymous.mutate(ProceedInvoiceDocument, { input: { invoiceId, clientEmail: 'c@example.com', paymentCurrency: 'TRC20USDT' } })).proceedInvoice, 'ProceedInvoiceSuccess')
        .invoice;
    const filled = await proceed(created.id);
    expect(filled.status).toBe('PENDING');
    expect(filled.paymentDetails!.amountMoney).toEqual({ amount: filled.paymentDetails!.amount, currency: 'TRC20USDT' });
    const missing = as((await anonymous.mutate(ProceedInvoiceDocument, { input: { invoiceId: '7NEVJPgnhf1LzX7p6296iF', clientEmail: 'c@example.com' } })).proceedInvoice, 'NotFoundError');
    expect(missing.code).toBe('NOT_FOUND');

    // Payments through the sandbox.
    const pay = async (invoiceId: string, amount: string, confirmations = 0) =>
      as((await merchant.mutate(CreateSandboxTransferDocument, { input: { invoiceId, amount, confirmations } })).createSandboxTransfer, 'CreateSandboxTransferSuccess')
        .transfer;
    const seen = await pay(created.id, filled.paymentDetails!.amount);
    expect(seen).toMatchObject({ state: 'SEEN', asset: 'TRC20USDT', invoice: { id: created.id, status: 'PROCESSING' } });
    const confirmed = as((await merchant.mutate(ConfirmSandboxTransferDocument, { input: { id: seen.id } })).confirmSandboxTransfer, 'ConfirmSandboxTransferSuccess').transfer;
    expect(confirmed).toMatchObject({ state: 'CONFIRMED', confirmations: confirmed.requiredConfirmations, invoice: { status: 'DONE' } });
    const paid = (await anonymous.query(InvoiceDocument, { id: created.id })).data!.invoice!;
    expect(paid.transactions).toHaveLength(1);
    // What the locked rate was made of: the static table on both sides (test mode).
    expect(paid.rateDetails).toMatchObject({ kind: 'STATIC', spreadPercent: '0', invoiceCurrency: { asset: 'USD', usdPrice: '1' }, paymentCurrency: { asset: 'USDT', usdPrice: '1', sources: [{ source: 'STATIC', market: 'RATES_FILE' }] } });
    expect(paid.transactions[0]).toMatchObject({ kind: 'PAYMENT', status: 'CONFIRMED', from: 'TRC20USDT', invoice: { id: created.id }, address: { id: filled.address!.id } });

    // Who is calling: the merchant behind the token; nobody without one.
    expect((await merchant.query(ViewerDocument, {})).data!.viewer).toMatchObject({ id: expect.any(String), name: expect.any(String) });
    expect((await anonymous.query(ViewerDocument, {})).error?.graphQLErrors[0]?.extensions['code']).toBe('UNAUTHENTICATED');

    const balances = (await merchant.query(BalancesDocument, {})).data!.balances;
    expect(balances).toEqual([{ id: expect.any(String), asset: 'TRC20USDT', available: '100', held: '0', pending: '0', suspense: '0' }]);

    // A short payment, refunded; another, accepted; a third, dropped.
    const limits = as((await merchant.mutate(SetUnderpaymentLimitsDocument, { input: { limits: [{ asset: 'USDT', percent: '1' }] } })).setUnderpaymentLimits, 'SetUnderpaymentLimitsSuccess');
    expect(limits.underpaymentLimits).toEqual([{ id: expect.any(String), asset: 'USDT', fixed: null, percent: '1' }]);
    expect((await merchant.query(UnderpaymentLimitsDocument, {})).data!.underpaymentLimits).toEqual(limits.underpaymentLimits);

    const short = (await createInvoice('49.5')).id;
    await proceed(short);
    await pay(short, '30', 19);
    const refundedResult = (await merchant.mutate(RefundInvoiceDocument, { input: { invoiceId: short, address: TRON } })).refundInvoice;
    const refunded = as(refundedResult, 'RefundInvoiceSuccess').invoice;
    expect(refunded.status).toBe('REFUNDED');
    expect(refunded.refund).toMatchObject({ status: 'SENT', address: TRON, amountMoney: { currency: 'TRC20USDT' }, networkFeeMoney: { currency: 'TRC20USDT' } });
    const again = as((await merchant.mutate(RefundInvoiceDocument, { input: { invoiceId: short, address: TRON } })).refundInvoice, 'ConflictError');
    expect(again.code).toBe('CONFLICT');

    const accepted = (await createInvoice('49.5')).id;
    await proceed(accepted);
    await pay(accepted, '40', 19);
    expect(as((await merchant.mutate(AcceptInvoiceDocument, { input: { invoiceId: accepted } })).acceptInvoice, 'AcceptInvoiceSuccess').invoice.status).toBe('DONE');
    expect(as((await merchant.mutate(AcceptInvoiceDocument, { input: { invoiceId: accepted } })).acceptInvoice, 'ConflictError').code).toBe('CONFLICT');

    const dropped = (await createInvoice('1')).id;
    await proceed(dropped);
    const toDrop = await pay(dropped, '1');
    const afterDrop = as((await merchant.mutate(DropSandboxTransferDocument, { input: { id: toDrop.id } })).dropSandboxTransfer, 'DropSandboxTransferSuccess').transfer;
    expect(afterDrop).toMatchObject({ state: 'DROPPED', invoice: { status: 'PROCESSING' } }); // statuses never go back; it expires

    // The list, forward and backward.
    const page = (await merchant.query(InvoicesDocument, { first: 2 })).data!.invoices;
    expect(page.totalCount).toBe(4);
    expect(page.nodes.map((n) => n.id)).toEqual([dropped, accepted]);
    const back = (await merchant.query(InvoicesDocument, { last: 2, before: page.pageInfo.endCursor })).data!.invoices;
    expect(back.nodes.map((n) => n.id)).toEqual([dropped]);
    expect(back.pageInfo.hasPreviousPage).toBe(false);
    const done = (await merchant.query(InvoicesDocument, { filter: { status: ['DONE'] } })).data!.invoices;
    expect(done.nodes.map((n) => n.id).sort()).toEqual([accepted, created.id].sort());

    const clock = as((await merchant.mutate(AdvanceSandboxClockDocument, { input: { minutes: 31 } })).advanceSandboxClock, 'AdvanceSandboxClockSuccess').clock;
    expect(clock.offsetMinutes).toBe(31);
    expect(clock.expired).toBeGreaterThanOrEqual(1);

    // Webhooks: the log, a redelivery, the failed ones, a test event.
    await expect.poll(async () => (await merchant.query(WebhookDeliveriesDocument, { filter: { status: ['DELIVERED'] } })).data!.webhookDeliveries.totalCount, { timeout: 10_000 }).toBeGreaterThan(5);
    const log = (await merchant.query(WebhookDeliveriesDocument, { first: 1 })).data!.webhookDeliveries;
    const delivery = log.edges[0]!.node;
    expect(JSON.parse(delivery.payload)).toHaveProperty('status');
    const redelivered = as((await merchant.mutate(RedeliverWebhookDocument, { input: { eventId: delivery.eventId } })).redeliverWebhook, 'RedeliverWebhookSuccess').delivery;
    expect(redelivered).toMatchObject({ eventId: delivery.eventId, status: 'PENDING', attempts: 0 });
    const unknownEvent = as((await merchant.mutate(RedeliverWebhookDocument, { input: { eventId: '2f1c7b4e-8a52-4c1e-9d6f-0b3a5e7c9d21' } })).redeliverWebhook, 'NotFoundError');
    expect(unknownEvent.code).toBe('NOT_FOUND');
    const failed = as((await merchant.mutate(RedeliverFailedDocument, { input: { since: '2020-01-01T00:00:00.000Z' } })).redeliverFailed, 'RedeliverFailedSuccess');
    expect(failed.redeliveredCount).toBe(0);
    const test = as((await merchant.mutate(SendTestWebhookDocument, {})).sendTestWebhook, 'SendTestWebhookSuccess').result;
    expect(test).toMatchObject({ ok: true, statusCode: 200, url: receiver.url });

    // Rates: test mode's static table, as proceed locks it.
    const rates = (await merchant.query(RatesDocument, { invoiceCurrency: 'USD' })).data!.rates;
    expect(rates.find((r) => r.paymentCurrency === 'ETH')).toEqual({ paymentCurrency: 'ETH', rate: '0.000285714285714286', sources: ['STATIC'], updatedAt: expect.any(String) });

    // E-mail settings and the e-mail log (no SMTP_URL here: nothing is planned, the log stays empty).
    const defaults = (await merchant.query(NotificationSettingsDocument, {})).data!.notificationSettings;
    expect(defaults.client).toEqual({ pending: true, done: true, wrong: true, refunded: true, closed: true });
    expect(defaults.merchant.emails).toEqual([]);
    const notified = as(
      (await merchant.mutate(SetNotificationSettingsDocument, { input: { client: { wrong: false }, merchant: { emails: ['shop@merchant.example'], done: true } } })).setNotificationSettings,
      'SetNotificationSettingsSuccess',
    ).notificationSettings;
    expect(notified).toMatchObject({ client: { done: true, wrong: false }, merchant: { emails: ['shop@merchant.example'], done: true } });
    const badEmail = as((await merchant.mutate(SetNotificationSettingsDocument, { input: { merchant: { emails: ['not an address'] } } })).setNotificationSettings, 'ValidationError');
    expect(badEmail.details[0]?.path).toMatch(/emails/);
    expect((await merchant.query(NotificationSettingsDocument, {})).data!.notificationSettings.client.wrong).toBe(false);
    const emails = (await merchant.query(EmailDeliveriesDocument, { first: 5 })).data!.emailDeliveries;
    expect(emails).toMatchObject({ totalCount: 0, nodes: [], pageInfo: { hasNextPage: false } });

    // The dashboard overview: the paid invoices of this run by day, every status counted.
    const overview = (await merchant.query(InvoiceOverviewDocument, { days: 7 })).data!.invoiceOverview;
    expect(overview).toMatchObject({ days: 7, timeZone: 'UTC' });
    expect(overview.invoicesByStatus).toHaveLength(7);
    expect(overview.received.length).toBeGreaterThan(0);

    // Withdrawals: a quote, a batch with one refused item, the sender, the chain's answers, the list, the rules.
    const quote = (await merchant.query(WithdrawalQuoteDocument, { asset: 'TRC20USDT', amount: '10' })).data!.withdrawalQuote;
    expect(quote).toMatchObject({ asset: 'TRC20USDT', amount: '10', fee: '1', total: '11', minimum: '5', covered: true });
    const overPrecise = await merchant.query(WithdrawalQuoteDocument, { asset: 'TRC20USDT', amount: '10.0000001' });
    expect(overPrecise.error?.graphQLErrors[0]?.extensions['code']).toBe('VALIDATION_FAILED');
    const withdrawn = as(
      (
        await merchant.mutate(WithdrawDocument, {
          input: { items: [{ asset: 'TRC20USDT', amount: '10', to: TRON }, { asset: 'TRC20USDT', amount: '1', to: TRON }, { asset: 'TRC20USDT', amount: '5', to: TRON }] },
        })
      ).withdraw,
      'WithdrawSuccess',
    ).results;
    expect(withdrawn.map((r) => [r.success, r.message])).toEqual([
      [true, 'Withdrawal accepted and processing'],
      [false, 'Amount is below the minimum withdrawal of 5 trc20usdt'],
      [true, 'Withdrawal accepted and processing'],
    ]);
    expect(withdrawn[1]).toMatchObject({ uid: null, withdrawal: null });
    expect(withdrawn[0]!.withdrawal).toMatchObject({ uid: withdrawn[0]!.uid, status: 'PROCESSING', asset: 'TRC20USDT', amount: '10', fee: '1', total: { amount: '11', currency: 'TRC20USDT' }, origin: 'API' });
    const noItems = as((await merchant.mutate(WithdrawDocument, { input: { items: [] } })).withdraw, 'ValidationError');
    expect(noItems.details[0]!.path).toBe('items');
    const [toConfirm, toReject] = [withdrawn[0]!.uid!, withdrawn[2]!.uid!];
    await expect.poll(async () => (await merchant.query(WithdrawalDocument, { uid: toReject })).data!.withdrawal!.txHash, { timeout: 10_000 }).toBeTruthy();
    await expect.poll(async () => (await merchant.query(WithdrawalDocument, { uid: toConfirm })).data!.withdrawal!.txHash, { timeout: 10_000 }).toBeTruthy();
    const doneWithdrawal = as((await merchant.mutate(ConfirmSandboxWithdrawalDocument, { input: { uid: toConfirm } })).confirmSandboxWithdrawal, 'ConfirmSandboxWithdrawalSuccess').withdrawal;
    expect(doneWithdrawal).toMatchObject({ status: 'DONE', completedAt: expect.any(String) });
    const rejectedWithdrawal = as((await merchant.mutate(RejectSandboxWithdrawalDocument, { input: { uid: toReject } })).rejectSandboxWithdrawal, 'RejectSandboxWithdrawalSuccess').withdrawal;
    expect(rejectedWithdrawal).toMatchObject({ status: 'REJECTED', rejectReason: 'Failed on the blockchain' });
    expect(as((await merchant.mutate(RejectSandboxWithdrawalDocument, { input: { uid: toConfirm } })).rejectSandboxWithdrawal, 'ConflictError').code).toBe('CONFLICT');
    expect(as((await merchant.mutate(ConfirmSandboxWithdrawalDocument, { input: { uid: 'nope' } })).confirmSandboxWithdrawal, 'NotFoundError').code).toBe('NOT_FOUND');
    const doneList = (await merchant.query(WithdrawalsDocument, { filter: { status: ['DONE'], asset: ['TRC20USDT'] } })).data!.withdrawals;
    expect([doneList.totalCount, doneList.nodes.map((w) => w.uid)]).toEqual([1, [toConfirm]]);
    expect((await merchant.query(WithdrawalsDocument, { first: 1 })).data!.withdrawals.pageInfo.hasNextPage).toBe(true);
    expect((await anonymous.query(WithdrawalDocument, { uid: toConfirm })).error?.graphQLErrors[0]?.extensions['code']).toBe('UNAUTHENTICATED');

    const rules = as(
      (await merchant.mutate(UpdateAutoWithdrawalsDocument, { input: { rules: [{ asset: 'TRC20USDT', threshold: '500', isEnabled: true, withdrawalAddress: TRON }] } })).updateAutoWithdrawals,
      'UpdateAutoWithdrawalsSuccess',
    ).autoWithdrawals;
    expect(rules.find((r) => r.asset === 'TRC20USDT')).toMatchObject({ threshold: '500', isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON });
    const badRule = as(
      (await merchant.mutate(UpdateAutoWithdrawalsDocument, { input: { rules: [{ asset: 'TON', threshold: '5', isEnabled: true, withdrawalAddress: TRON }] } })).updateAutoWithdrawals,
      'ValidationError',
    );
    expect(badRule.details.map((d) => d.path)).toEqual(['assets.ton.withdrawalAddress', 'assets.ton.withdrawalTag']);
    const autoRules = (await merchant.query(AutoWithdrawalsDocument, {})).data!.autoWithdrawals;
    expect(autoRules).toHaveLength(11);
    expect(autoRules).toEqual(rules);

    // Static addresses and a deposit to one.
    const staticAddress = as(
      (await merchant.mutate(CreateStaticAddressDocument, { input: { asset: 'LTC', internalUserId: 'client-user', email: 'cu@example.com' } })).createStaticAddress,
      'CreateStaticAddressSuccess',
    ).staticAddress;
    expect(staticAddress).toMatchObject({ asset: 'LTC', network: 'LITECOIN', tag: null, internalUserId: 'client-user', email: 'cu@example.com' });
    const sameAddress = as((await merchant.mutate(CreateStaticAddressDocument, { input: { asset: 'LTC', internalUserId: 'client-user' } })).createStaticAddress, 'CreateStaticAddressSuccess');
    expect(sameAddress.staticAddress.id).toBe(staticAddress.id);
    const badAddress = as((await merchant.mutate(CreateStaticAddressDocument, { input: { asset: 'LTC', internalUserId: '', email: 'x' } })).createStaticAddress, 'ValidationError');
    expect(badAddress.details.map((d) => d.path).sort()).toEqual(['email', 'internalUserId']);
    expect((await merchant.query(StaticAddressDocument, { id: staticAddress.addressId })).data!.staticAddress).toEqual(staticAddress);
    expect((await merchant.query(StaticAddressesDocument, { filter: { internalUserId: 'client-user' } })).data!.staticAddresses.nodes).toEqual([staticAddress]);
    const deposit = as(
      (await merchant.mutate(CreateSandboxTransferDocument, { input: { address: staticAddress.address, amount: '0.5', confirmations: 6 } })).createSandboxTransfer,
      'CreateSandboxTransferSuccess',
    ).transfer;
    expect(deposit).toMatchObject({ state: 'CONFIRMED', invoice: null });
    const deposits = (await merchant.query(DepositsDocument, { filter: { staticAddressId: staticAddress.addressId, status: ['DONE'] } })).data!.deposits;
    expect(deposits.totalCount).toBe(1);
    expect(deposits.nodes[0]).toMatchObject({ amount: '0.5', money: { amount: '0.5', currency: 'LTC' }, status: 'DONE', hash: deposit.txHash, staticAddress: { id: staticAddress.id } });

    // A download link for the ledger export: it serves the CSV without the token (docs/exports.md).
    const link = as(
      (await merchant.mutate(CreateExportLinkDocument, { input: { kind: 'LEDGER', from: '2000-01-01T00:00:00.000Z', to: '9999-01-01T00:00:00.000Z' } })).createExportLink,
      'CreateExportLinkSuccess',
    ).link;
    expect(link).toMatchObject({ kind: 'LEDGER', from: '2000-01-01T00:00:00.000Z', to: '9999-01-01T00:00:00.000Z', fileName: 'ledger_20000101T000000000Z_99990101T000000000Z.csv' });
    const csv = await fetch(`${server.url}${new URL(link.url).pathname}`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect((await csv.text()).split('\r\n')[0]).toMatch(/^entry_id,created_at,/);
    const backwards = as((await merchant.mutate(CreateExportLinkDocument, { input: { kind: 'INVOICES', from: '2001-01-01T00:00:00Z', to: '2000-01-01T00:00:00Z' } })).createExportLink, 'ValidationError');
    expect(backwards.details).toEqual([{ path: 'to', message: 'must be after `from`' }]);

    // Every Node refetches by its global id; merchant-only ones are null for anyone else.
    const delivered = (await merchant.query(WebhookDeliveriesDocument, { first: 1, filter: { status: ['DELIVERED'] } })).data!.webhookDeliveries.edges[0]!.node;
    const ids: Record<string, string> = {
      Invoice: created.id,
      Company: paid.company.id,
      PaymentAddress: filled.address!.id,
      InvoiceTransaction: paid.transactions[0]!.id,
      Refund: refunded.refund!.id,
      Balance: balances[0]!.id,
      UnderpaymentLimit: limits.underpaymentLimits[0]!.id,
      WebhookSettings: settings.id,
      WebhookDelivery: delivered.id,
      WebhookAttempt: delivered.attemptLog[0]!.id,
      SandboxTransfer: seen.id,
      Withdrawal: doneWithdrawal.id,
      AutoWithdrawalRule: autoRules[0]!.id,
      StaticAddress: staticAddress.id,
      Deposit: deposits.nodes[0]!.id,
    };
    const PUBLIC = ['Invoice', 'Company', 'PaymentAddress', 'InvoiceTransaction', 'Refund'];
    for (const [typename, id] of Object.entries(ids)) {
      const own = (await merchant.query(NodeDocument, { id })).data!.node;
      expect(own, typename).toMatchObject({ __typename: typename, id });
      const seenByAnyone = (await anonymous.query(NodeDocument, { id })).data!.node;
      expect(seenByAnyone?.__typename ?? null, typename).toBe(PUBLIC.includes(typename) ? typename : null);
    }
    expect(as((await merchant.query(NodeDocument, { id: created.id })).data!.node, 'Invoice').invoiceStatus).toBe('DONE');
    const many = (await merchant.query(NodesDocument, { ids: [...Object.values(ids), created.id] })).data!.nodes;
    expect(many.map((n) => n?.__typename)).toEqual([...Object.keys(ids), 'Invoice']);
    const garbage = await merchant.query(NodeDocument, { id: 'not a global id' });
    expect(garbage.error?.graphQLErrors[0]?.extensions['code']).toBe('VALIDATION_FAILED');
    const tooMany = await merchant.query(NodesDocument, { ids: Array.from({ length: 101 }, () => created.id) });
    expect(tooMany.error?.graphQLErrors[0]?.extensions['code']).toBe('VALIDATION_FAILED');
    const otherMerchant = clientFor((await server.merchant()).publicToken);
    expect((await otherMerchant.query(NodeDocument, { id: ids['Balance']! })).data!.node).toBeNull();

    // Keys, payout protection and the audit log (docs/security.md).
    const made = as((await merchant.mutate(CreateApiKeyDocument, { input: { name: 'Reader', scopes: ['INVOICES_READ', 'SETTINGS_READ'] } })).createApiKey, 'CreateApiKeySuccess').created;
    expect(made.apiKey).toMatchObject({ name: 'Reader', scopes: ['INVOICES_READ', 'SETTINGS_READ'], expiresAt: null, lastUsedAt: null });
    expect(as((await merchant.mutate(CreateApiKeyDocument, { input: { name: '', scopes: ['INVOICES_READ'] } })).createApiKey, 'ValidationError').details[0]!.path).toBe('name');
    const reader = clientFor(made.token);
    const keys = (await reader.query(ApiKeysDocument, {})).data!;
    expect(keys.viewerScopes).toEqual(['INVOICES_READ', 'SETTINGS_READ']);
    expect(keys.apiKeys.map((k) => k.id)).toEqual([made.apiKey.id]);
    expect(as((await merchant.mutate(SetPayoutPolicyDocument, { input: { allowListOnly: true, cooldownHours: 0 } })).setPayoutPolicy, 'SetPayoutPolicySuccess').payoutPolicy).toEqual({
      allowListOnly: true,
      cooldownHours: 24,
      pending: { cooldownHours: 0 },
    });
    const entry = as((await merchant.mutate(AddPayoutAddressDocument, { input: { asset: 'TRC20USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', label: 'Cold' } })).addPayoutAddress, 'AddPayoutAddressSuccess').payoutAddress;
    expect(as((await merchant.mutate(AddPayoutAddressDocument, { input: { asset: 'TRC20USDT', address: 'nope', label: 'x' } })).addPayoutAddress, 'ValidationError').details[0]!.path).toBe('address');
    const protection = (await merchant.query(PayoutProtectionDocument, {})).data!;
    expect(protection.payoutAddresses.nodes.map((a) => a.id)).toEqual([entry.id]);
    expect(protection.payoutPolicy.pending?.cooldownHours).toBe(0);
    const audit = (await reader.query(AuditLogDocument, { first: 2 })).data!.auditLog;
    expect(audit.nodes.map((n) => n.action)).toEqual(['PAYOUT_ADDRESS_ADDED', 'PAYOUT_POLICY_CHANGED']);
    expect((await reader.query(AuditLogDocument, { first: 2, after: audit.pageInfo.endCursor })).data!.auditLog.nodes[0]!.action).toBe('API_KEY_CREATED');
    for (const [typename, id] of [['ApiKey', made.apiKey.id], ['PayoutAddress', entry.id], ['AuditEntry', audit.nodes[0]!.id]] as const) {
      expect((await merchant.query(NodeDocument, { id })).data!.node?.__typename, typename).toBe(typename);
      expect((await anonymous.query(NodeDocument, { id })).data!.node, typename).toBeNull();
    }
    expect(as((await merchant.mutate(RemovePayoutAddressDocument, { input: { id: entry.id } })).removePayoutAddress, 'RemovePayoutAddressSuccess').payoutAddress.id).toBe(entry.id);
    expect(as((await merchant.mutate(RemovePayoutAddressDocument, { input: { id: entry.id } })).removePayoutAddress, 'NotFoundError').code).toBe('NOT_FOUND');
    expect(as((await merchant.mutate(RevokeApiKeyDocument, { input: { id: made.apiKey.id } })).revokeApiKey, 'RevokeApiKeySuccess').apiKey.id).toBe(made.apiKey.id);

    // Store settings and payment links (docs/api-decisions.md "Store settings", docs/payment-links.md).
    const store = as((await merchant.mutate(UpdateStoreSettingsDocument, { input: { name: 'Typed Shop', logoUrl: 'https://typed.example/logo.png' } })).updateStoreSettings, 'UpdateStoreSettingsSuccess').storeSettings;
    expect(store).toMatchObject({ name: 'Typed Shop', logoUrl: 'https://typed.example/logo.png' });
    expect(as((await merchant.mutate(UpdateStoreSettingsDocument, { input: { acceptedAssets: [] } })).updateStoreSettings, 'ValidationError').details[0]!.path).toBe('acceptedAssets');
    expect((await merchant.query(StoreSettingsDocument, {})).data!.storeSettings).toMatchObject({ ...store, mode: 'TEST' });
    const payLink = as((await merchant.mutate(CreatePaymentLinkDocument, { input: { name: 'Typed link', invoiceCurrency: 'USD', items: [{ name: 'Tea', price: '2' }] } })).createPaymentLink, 'CreatePaymentLinkSuccess').paymentLink;
    expect(payLink).toMatchObject({ name: 'Typed link', active: true, total: { amount: '2.00', currency: 'USD' }, url: expect.stringMatching(/\/l\/pl_/) });
    expect(as((await merchant.mutate(CreatePaymentLinkDocument, { input: { name: 'x', invoiceCurrency: 'USD', items: [] } })).createPaymentLink, 'ValidationError').details[0]!.path).toBe('items');
    const opened = await fetch(`${server.url}/l/${payLink.linkId}`, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const linkRead = await merchant.query(PaymentLinkDocument, { id: payLink.linkId });
    expect(linkRead.error, JSON.stringify(linkRead.error)).toBeUndefined();
    const read = linkRead.data!.paymentLink!;
    expect(read.invoices.totalCount).toBe(1);
    expect(read.invoices.nodes[0]!.paymentLinkId).toBe(payLink.linkId);
    expect((await merchant.query(PaymentLinksDocument, { first: 5, filter: { active: true } })).data!.paymentLinks.nodes.map((l) => l.linkId)).toEqual([payLink.linkId]);
    expect((await merchant.query(NodeDocument, { id: payLink.id })).data!.node?.__typename).toBe('PaymentLink');
    expect((await anonymous.query(NodeDocument, { id: payLink.id })).data!.node).toBeNull();
    expect(as((await merchant.mutate(DeactivatePaymentLinkDocument, { input: { id: payLink.linkId } })).deactivatePaymentLink, 'DeactivatePaymentLinkSuccess').paymentLink.active).toBe(false);
    const swapRules = as(
      (await merchant.mutate(UpdateAutoswapRulesDocument, { rules: [{ asset: 'BTC', isEnabled: true, toCurrency: 'TRC20USDT', maxSlippagePercent: '2' }] })).updateAutoswapRules,
      'UpdateAutoswapRulesSuccess',
    ).autoswapRules;
    expect(swapRules.find((r) => r.asset === 'BTC')).toEqual({ asset: 'BTC', isEnabled: true, toCurrency: 'TRC20USDT', maxSlippagePercent: '2' });
    const selfSwap = as((await merchant.mutate(UpdateAutoswapRulesDocument, { rules: [{ asset: 'BTC', isEnabled: true, toCurrency: 'BTC' }] })).updateAutoswapRules, 'ValidationError');
    expect(selfSwap.details.map((d) => d.path)).toEqual(['assets.btc.toCurrency']);
    expect((await merchant.query(AutoswapRulesDocument, {})).data!.autoswapRules).toEqual(swapRules);
    const venue = as((await merchant.mutate(SetSandboxSwapVenueDocument, { slippagePercent: '0.5', behaviour: 'HOLD' })).setSandboxSwapVenue, 'SetSandboxSwapVenueSuccess').venue;
    expect(venue).toEqual({ slippagePercent: '0.5', feePercent: '0', behaviour: 'HOLD' });
    expect((await merchant.query(InvoiceAutoswapsDocument, { id: created.id })).data!.invoice!.autoswaps).toEqual([]);

    // Every operation of the document ran (the subscriptions run in test/live/subscriptions.test.ts).
    const names = parse(fs.readFileSync(DOCUMENTS[0]!, 'utf8')).definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION ? [d.name!.value] : []));
    expect(names.filter((n) => !executed.has(n))).toEqual([]);
  }, 60_000);
});
