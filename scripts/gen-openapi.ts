import { writeFile } from 'node:fs/promises';
import { renderOpenApi, SWAGGER_FILE } from './openapi.ts';

// `npm run gen:openapi`: regenerates docs/swagger.yml; a test fails while the checked-in copy is stale.
await writeFile(SWAGGER_FILE, await renderOpenApi());
process.stdout.write(`wrote ${SWAGGER_FILE.pathname}\n`);
