// `npm run sdk:generate`: starts the real stack the way tests do, fetches the OpenAPI document
// the gateway serves, and writes the SDK's types (src/schema.d.ts) from it. tests/sdk.test.ts
// fails while the committed file differs from what this would write.
import { writeFileSync } from 'node:fs';
import { startStack } from '@crm/testing';
import { SCHEMA_FILE, schemaSource } from './schema-source.ts';

const stack = await startStack();
try {
  const response = await fetch(`${stack.gatewayUrl}/openapi/v1.yaml`);
  if (!response.ok) throw new Error(`GET /openapi/v1.yaml → ${response.status}`);
  const source = await schemaSource(await response.text());
  writeFileSync(SCHEMA_FILE, source);
  console.log(`wrote ${SCHEMA_FILE} (${source.split('\n').length} lines)`);
} finally {
  await stack.stop();
}
