// Writes schema.graphql (lexicographically sorted SDL). With --check: exit 1 if the file is stale.
import { printedSchema } from '../src/features.ts';
import { writeOrCheck } from './committed-file.ts';

writeOrCheck('schema.graphql', printedSchema() + '\n', 'npm run schema:print');
