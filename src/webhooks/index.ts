// Signed webhooks: settings, the delivery log, redelivery, the events feed and the delivery worker.
import { testWebhook } from './webhook-doc.ts';
import type { Feature } from '../core/feature.ts';
import { intervalJob } from '../core/jobs.ts';
import './graphql.ts';
import { webhookQueueGauge } from './metrics.ts';
import { webhookRoutes } from './rest.ts';
import { createWebhookRuntime, type WebhookConfig } from './runtime.ts';
import { pruneDeliveries, type WebhookDeps } from './service.ts';

declare module '../core/feature.ts' {
  interface Services {
    webhooks: WebhookDeps;
  }
}

export function webhooksFeature(config: WebhookConfig): Feature {
  let runtime: ReturnType<typeof createWebhookRuntime> | null = null;
  return {
    name: 'webhooks',
    services: (platform) => {
      runtime = createWebhookRuntime(config, platform, config.worker);
      webhookQueueGauge(platform.metrics, platform.db);
      return { webhooks: runtime.deps };
    },
    routes: webhookRoutes,
    webhooks: [testWebhook],
    jobs: (platform) => [
      // WEBHOOK_WORKER=0: a separate `npm run webhooks:worker` process delivers.
      ...(config.worker && runtime ? [runtime.workerJob] : []),
      intervalJob(
        'webhook-pruner',
        config.pruneIntervalMs,
        () => pruneDeliveries(platform.db, new Date(Date.now() - config.retentionDays * 86_400_000)),
        platform.logger,
      ),
    ],
    close: async () => runtime?.close(),
  };
}
