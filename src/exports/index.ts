// Reconciliation exports: the ledger and the invoices of a range as streamed CSV (REST), and download links (GraphQL).
import type { ConfigOf } from '../core/config-section.ts';
import type { Feature } from '../core/feature.ts';
import { intervalJob } from '../core/jobs.ts';
import type { exportConfig } from './config.ts';
import './graphql.ts';
import { exportRoutes } from './rest.ts';
import { pruneExportLinks, type ExportDeps } from './service.ts';

declare module '../core/feature.ts' {
  interface Services {
    exports: ExportDeps;
  }
}

const PRUNE_INTERVAL_MS = 3_600_000;

export function exportsFeature(config: ConfigOf<typeof exportConfig>): Feature {
  return {
    name: 'exports',
    services: (p) => ({
      exports: { db: p.db, clock: p.clock, batchSize: config.batchSize, linkTtlMs: config.linkTtlSeconds * 1000, publicBaseUrl: p.config.publicBaseUrl },
    }),
    routes: exportRoutes,
    jobs: (p) => [intervalJob('export-link-pruner', PRUNE_INTERVAL_MS, () => pruneExportLinks(p.db, p.clock.real()), p.logger)],
  };
}
