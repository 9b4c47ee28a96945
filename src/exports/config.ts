import { z } from 'zod';
import { configSection } from '../core/config-section.ts';

export const exportConfig = configSection('EXPORT_', {
  /** Rows read per query (a keyset page); the server holds about one page of an export at a time. */
  EXPORT_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(1_000),
  /** How long a download link from createExportLink works. */
  EXPORT_LINK_TTL_SECONDS: z.coerce.number().int().min(10).max(86_400).default(900),
});
