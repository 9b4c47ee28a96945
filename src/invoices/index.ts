// Invoices: create, proceed, read, the lifecycle (expiry, accept, refund) and its jobs.
import { invoiceWebhook } from './webhook-doc.ts';
import type { ConfigOf } from '../core/config-section.ts';
import type { Feature, Platform } from '../core/feature.ts';
import { chainJob, intervalJob, wakingOn, type Job } from '../core/jobs.ts';
import { defaultFeeTable, loadFeeTable } from '../pricing/fees.ts';
import { RateBook, StaticRateSource } from '../pricing/rates.ts';
import { LiveRates } from '../pricing/live/service.ts';
import { buildSource } from '../pricing/live/sources.ts';
import type { invoiceConfig } from './config.ts';
import { invoiceDeclarations } from './declarations.ts';
import './graphql/types.ts';
import './graphql/queries.ts';
import './graphql/mutations.ts';
import './graphql/subscriptions.ts';
import './graphql/rates.ts';
import './graphql/overview.ts';
import { sweepExpired, type InvoiceDeps } from './lifecycle.ts';
import { refundQueueGauge } from './metrics.ts';
import { applyRefundOutcome, dispatchQueuedRefunds } from './refunds.ts';
import { invoiceRoutes } from './rest.ts';
import { unchargedInvoiceFees } from './uncharged-fees.ts';
import { rateRoutes } from './rates.ts';

declare module '../core/feature.ts' {
  interface Services {
    invoices: InvoiceDeps;
  }
}

export function invoicesFeature(config: ConfigOf<typeof invoiceConfig>): Feature {
  let live: LiveRates | null = null;
  return {
    name: 'invoices',
    declares: invoiceDeclarations,
    services: (p) => {
      refundQueueGauge(p.metrics, p.db);
      const table = config.ratesFile ? StaticRateSource.fromFile(config.ratesFile) : new StaticRateSource();
      live = config.rates ? new LiveRates(config.rates, config.rates.sources.map((s) => buildSource(s, table.usdPrices)), p.logger, p.metrics) : null;
      const invoices: InvoiceDeps = {
        db: p.db,
        events: p.commits,
        clock: p.clock,
        chains: p.chains,
        credits: p.credits,
        logger: p.logger,
        rates: new RateBook(table, live, config.testModeRates),
        fees: config.feesFile ? loadFeeTable(config.feesFile) : defaultFeeTable(),
        idempotencyTtlMs: p.config.idempotencyKeyTtlHours * 3_600_000,
        payUrl: p.config.payUrl,
        unchargedFees: unchargedInvoiceFees,
      };
      p.chains.onOutgoing('refund', (report, mode) => applyRefundOutcome(invoices, report, mode));
      return { invoices };
    },
    routes: [...invoiceRoutes, ...rateRoutes],
    webhooks: [invoiceWebhook],
    jobs: (p, s) => [
      // Prices are fetched here, in the background, never on a request (docs/rates.md).
      ...(live ? [intervalJob('rates-refresher', live.refreshMs, () => live!.refresh(), p.logger)] : []),
      intervalJob('expiry-sweeper', config.sweepIntervalMs, () => sweepExpired(s.invoices), p.logger),
      refundSender(p, intervalJob('refund-sender', config.refundRetryIntervalMs, () => dispatchQueuedRefunds(s.invoices), p.logger)),
    ],
  };
}

/**
 * A server sends a refund at once, in the request; this job retries what failed. The chains worker (CHAIN_WORKER=0
 * on the servers, which only queue) is also woken by each refund's event.
 */
const refundSender = (p: Platform, job: Job): Job => chainJob(p.chainsWorker ? wakingOn(job, p.bus, (m) => m.type === 'invoice.refunded') : job);
