// Withdrawals: payouts held in the ledger, sent by a worker through the chain adapters, and auto-withdrawals.
import { withdrawalWebhook } from './webhook-doc.ts';
import type { SandboxRegistry } from '../chains/sandbox.ts';
import type { ConfigOf } from '../core/config-section.ts';
import type { Feature } from '../core/feature.ts';
import { chainJob, intervalJob, wakingOn } from '../core/jobs.ts';
import { denyList } from '../core/risk.ts';
import { autoWithdrawOnCredit, autoWithdrawScope } from './auto.ts';
import type { withdrawalConfig } from './config.ts';
import { withdrawalDeclarations } from './declarations.ts';
import { withdrawalQueueGauge } from './metrics.ts';
import './graphql.ts';
import { withdrawalRoutes } from './rest.ts';
import { protectionRoutes } from './protection-rest.ts';
import './protection-graphql.ts';
import type { SandboxWithdrawalDeps } from './sandbox.ts';
import { applyOutgoingReport } from './outcomes.ts';
import { sendQueuedWithdrawals } from './sender.ts';

declare module '../core/feature.ts' {
  interface Services {
    withdrawals: SandboxWithdrawalDeps;
  }
}

export function withdrawalsFeature(config: ConfigOf<typeof withdrawalConfig>): Feature {
  return {
    name: 'withdrawals',
    declares: withdrawalDeclarations,
    services: (p, s) => {
      const withdrawals: SandboxWithdrawalDeps = {
        db: p.db,
        events: p.commits,
        chains: p.chains,
        clock: p.clock,
        risk: denyList(p.config.riskDenyList),
        logger: p.logger,
        idempotencyTtlMs: p.config.idempotencyKeyTtlHours * 3_600_000,
        sendLeaseMs: config.sendLeaseMs,
        unchargedFees: s.invoices.unchargedFees,
        sandbox: p.config.sandbox ? (p.chains as SandboxRegistry) : null,
      };
      p.chains.onOutgoing('withdrawal', (report, mode) => applyOutgoingReport(withdrawals, report, mode));
      p.credits.add(autoWithdrawOnCredit, autoWithdrawScope);
      withdrawalQueueGauge(p.metrics, p.db);
      return { withdrawals };
    },
    routes: [...withdrawalRoutes, ...protectionRoutes],
    webhooks: [withdrawalWebhook],
    jobs: (p, s) => [
      // Also woken as soon as a new withdrawal committed (its first event), not only on its interval.
      chainJob(
        wakingOn(intervalJob('withdrawal-sender', config.sendIntervalMs, () => sendQueuedWithdrawals(s.withdrawals), p.logger), p.bus, (m) => m.type === 'withdrawal.processing' && (m.payload as { txHash?: string }).txHash === ''),
      ),
    ],
  };
}
