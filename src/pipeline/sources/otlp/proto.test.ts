// The committed protobufjs descriptor is what the vendored official .proto files give
// (scripts/otlp-proto.ts), and the decoder's limits hold for both encodings.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_FILE, otlpDescriptorText } from '../../../../scripts/otlp-proto.js';
import { decodeLogsJson, decodeLogsProtobuf } from './logs.js';
import { ExportLogsServiceRequest } from './messages.js';

type Json = Record<string, unknown>;

/** A kvlist AnyValue nested `levels` deep. */
function nested(levels: number): Json {
  let v: Json = { stringValue: 'leaf' };
  for (let i = 0; i < levels; i++) v = { kvlistValue: { values: [{ key: `k${i}`, value: v }] } };
  return v;
}

const request = (body: Json) => ({
  resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'ok' } }, { body }] }] }],
});

describe('OTLP definitions', () => {
  it('descriptor.json is generated from the vendored .proto files', () => {
    expect(readFileSync(DESCRIPTOR_FILE, 'utf8')).toBe(otlpDescriptorText());
  });

  it('refuses a record nested deeper than the limit, in both encodings, and keeps the others', () => {
    const deep = request(nested(25));
    const proto = Buffer.from(ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(deep)).finish());
    for (const out of [
      decodeLogsProtobuf(proto, { maxDepth: 10 }),
      decodeLogsJson(Buffer.from(JSON.stringify(deep)), { maxDepth: 10 }),
    ]) {
      expect(out.events.map((e) => (JSON.parse(e.text) as Json).body)).toEqual(['ok']);
      expect(out.rejected).toBe(1);
      expect(out.errorMessage).toContain('nested deeper than 10 levels');
    }
    expect(decodeLogsJson(Buffer.from(JSON.stringify(request(nested(3)))), { maxDepth: 32 }).rejected).toBe(0);
  });

  it('keeps 64-bit integers exact and names the stream from weir.stream or service.name', () => {
    const body = JSON.stringify({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: '  Payment Service/EU ' } }] },
          scopeLogs: [
            {
              logRecords: [
                { body: { intValue: '9007199254740993' }, severityNumber: 'SEVERITY_NUMBER_ERROR' },
                { body: { doubleValue: 'NaN' }, attributes: [{ key: 'weir.stream', value: { stringValue: 'audit' } }] },
              ],
            },
          ],
        },
      ],
    });
    const out = decodeLogsJson(Buffer.from(body), { maxDepth: 32 });
    expect(out.events.map((e) => [e.stream, (JSON.parse(e.text) as Json).body])).toEqual([
      ['Payment_Service_EU_', '9007199254740993'],
      ['audit', 'NaN'],
    ]);
    expect((JSON.parse(out.events[0]!.text) as Json).severity_number).toBe(17);
  });
});
