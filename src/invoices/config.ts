import { z } from 'zod';
import { configSection, milliseconds } from '../core/config-section.ts';
import { loadRatesConfig, type RatesConfig } from '../pricing/live/config.ts';

export const invoiceConfig = configSection(
  '',
  {
    /** JSON file of exchange rates (docs/payments.md); built-in sandbox rates otherwise. */
    RATES_FILE: z.string().min(1).optional(),
    /** JSON file naming the live rate sources and their rules (docs/rates.md); without it live proceed answers 503. */
    RATES_CONFIG: z.string().min(1).optional(),
    /** Test mode's rates: the static table (deterministic, default) or the live sources of RATES_CONFIG. */
    TEST_MODE_RATES: z.enum(['static', 'live']).default('static'),
    /** JSON file of per-currency invoice fees. */
    FEES_FILE: z.string().min(1).optional(),
    SWEEP_INTERVAL_MS: milliseconds(100, 3_600_000, 5_000),
    REFUND_RETRY_INTERVAL_MS: milliseconds(100, 3_600_000, 30_000),
  },
  (values): { rates: RatesConfig | null } | string => {
    if (values.testModeRates === 'live' && !values.ratesConfig) return 'TEST_MODE_RATES: live needs RATES_CONFIG (the live sources)';
    if (!values.ratesConfig) return { rates: null };
    try {
      return { rates: loadRatesConfig(values.ratesConfig) };
    } catch (e) {
      return `RATES_CONFIG: ${(e as Error).message}`;
    }
  },
);
