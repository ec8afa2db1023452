// Writes docs/config-bundle.schema.json: the configuration bundle's JSON Schema, the same
// object the API document publishes as #/components/schemas/ConfigBundle (a test compares).
// Run: npx tsx scripts/config-bundle-schema.ts
import { writeFileSync } from 'node:fs';
import { bundleJsonSchema } from '../src/modules/config-bundle/schema.js';

writeFileSync(
  new URL('../docs/config-bundle.schema.json', import.meta.url),
  `${JSON.stringify(bundleJsonSchema(), null, 2)}\n`,
);
