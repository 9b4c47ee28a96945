// Writes openapi.json, the OpenAPI document of the REST API (docs/openapi.md). With --check: exit 1 if the file is stale.
import { apiReference } from '../src/features.ts';
import { writeOrCheck } from './committed-file.ts';

writeOrCheck('openapi.json', apiReference().text(), 'npm run openapi:print');
