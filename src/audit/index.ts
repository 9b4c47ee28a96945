// The audit log's reading side: REST and GraphQL (the writer, core/audit.ts, is used by every feature).
import type { Feature } from '../core/feature.ts';
import './graphql.ts';
import { auditRoutes } from './rest.ts';

export function auditFeature(): Feature {
  return { name: 'audit', routes: auditRoutes };
}
