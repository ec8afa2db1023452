// Regenerates src/pipeline/sources/otlp/descriptor.json, the protobufjs JSON descriptor of the
// vendored OTLP logs definitions (src/pipeline/sources/otlp/proto/, see its README):
//   npx tsx scripts/otlp-proto.ts
// src/pipeline/sources/otlp/proto.test.ts fails while the committed file differs from this output.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';

const OTLP_DIR = fileURLToPath(new URL('../src/pipeline/sources/otlp/', import.meta.url));
export const DESCRIPTOR_FILE = path.join(OTLP_DIR, 'descriptor.json');
const PROTO_DIR = path.join(OTLP_DIR, 'proto');
const ENTRY_FILES = ['opentelemetry/proto/collector/logs/v1/logs_service.proto', 'google/rpc/status.proto'];

/** The descriptor's text as committed: protobufjs's JSON of the files, two-space indented. */
export function otlpDescriptorText(): string {
  const root = new protobuf.Root();
  // Imports name paths from the definitions' root; protobufjs supplies google/protobuf/*.
  root.resolvePath = (_origin, target) =>
    target.startsWith('google/protobuf/') ? target : path.join(PROTO_DIR, target);
  root.loadSync(ENTRY_FILES);
  return `${JSON.stringify(root.toJSON(), null, 2)}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(DESCRIPTOR_FILE, otlpDescriptorText());
  console.log(`wrote ${path.relative(process.cwd(), DESCRIPTOR_FILE)}`);
}
