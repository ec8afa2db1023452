// Regenerates src/ocsf/definitions.json (and its NOTICE) from the official compiled OCSF
// schema in third_party/ocsf-schema/. Run after editing src/ocsf/supported.ts:
//   npm run ocsf:extract [-- --schema <path to schema-1.8.0.json>]
// src/ocsf/definitions.test.ts fails while the committed file differs from this output.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { extractDefinitions, formatDefinitions } from '../src/ocsf/extract.js';
import type { OcsfDefinitions } from '../src/ocsf/format.js';
import { SUPPORTED_CLASS_UIDS } from '../src/ocsf/supported.js';

const { values } = parseArgs({ options: { schema: { type: 'string' } } });
const schemaPath = path.resolve(
  values.schema ?? fileURLToPath(new URL('../third_party/ocsf-schema/schema-1.8.0.json', import.meta.url)),
);
const outDir = new URL('../src/ocsf/', import.meta.url);

const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as OcsfDefinitions;
const defs = extractDefinitions(schema, SUPPORTED_CLASS_UIDS);
const text = formatDefinitions(defs);
writeFileSync(new URL('definitions.json', outDir), text);

// The schema's NOTICE asks derived works to carry its attribution (Apache-2.0, section 4d).
const source = defs.source;
writeFileSync(
  new URL('NOTICE', outDir),
  `src/ocsf/definitions.json is derived from the Open Cybersecurity Schema Framework (OCSF)
schema ${defs.ocsf_version} (${source?.repo ?? 'https://github.com/ocsf/ocsf-schema'}, tag ${source?.ref ?? defs.ocsf_version},
commit ${source?.commit ?? 'unknown'}), licensed under the Apache License, Version 2.0
(https://www.apache.org/licenses/LICENSE-2.0). It keeps a subset of the schema's classes,
objects and types, without descriptions. The schema's NOTICE follows.

-----
Open Cybersecurity Schema Framework

Copyright © OCSF a Series of LF Projects, LLC
For web site terms of use, trademark policy and other project policies please see https://lfprojects.org.

This project includes the ICD Schema developed by Symantec, a division of Broadcom.

Licensed under the Apache 2 license.
Refer to the Apache 2 license in the file LICENSE.
-----
The Apache License, Version 2.0: third_party/ocsf-schema/LICENSE.
`,
);

const counts = `${Object.keys(defs.classes).length} classes, ${Object.keys(defs.objects).length} objects, ${Object.keys(defs.types).length} types`;
console.log(`wrote src/ocsf/definitions.json (${counts}, ${Buffer.byteLength(text)} bytes) from ${schemaPath}`);
