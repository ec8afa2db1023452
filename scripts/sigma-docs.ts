// Rewrites the logsource tables of docs/sigma.md from src/pipeline/detect/sigma/logsources.ts:
//   npx tsx scripts/sigma-docs.ts
// The test "the published logsource mapping" fails when docs/sigma.md differs from the tables.
import { readFileSync, writeFileSync } from 'node:fs';
import { DOC_BEGIN, DOC_END, renderLogsources } from '../src/pipeline/detect/sigma/docs.js';

const path = new URL('../docs/sigma.md', import.meta.url);
const doc = readFileSync(path, 'utf8');
const [head, rest] = doc.split(DOC_BEGIN);
const tail = rest?.split(DOC_END)[1];
if (head === undefined || tail === undefined)
  throw new Error(`docs/sigma.md needs the markers ${DOC_BEGIN} and ${DOC_END}`);
writeFileSync(path, `${head}${DOC_BEGIN}\n\n${renderLogsources()}\n${DOC_END}${tail}`);
console.log('docs/sigma.md: logsource tables rewritten');
