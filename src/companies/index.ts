// The merchant's settings and money: underpayment limits and balances (merchants themselves are made by the CLI).
import type { Feature } from '../core/feature.ts';
import './graphql.ts';
import { companyRoutes } from './rest.ts';

export function companiesFeature(): Feature {
  return { name: 'companies', routes: companyRoutes };
}
