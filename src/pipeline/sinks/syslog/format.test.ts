import { describe, expect, it } from 'vitest';
import { sinkBatch, sinkBatchFromLines } from '../../../../test/support/sink-batch.js';
import { createSinkTypeRegistry } from '../../../modules/destinations/sink-types.js';
import { DeliveryError } from '../types.js';
import { syslogSink } from './index.js';
import {
  encodeBatch,
  escapeSdValue,
  facilityNumber,
  formatMessage,
  headerField,
  sdIdProblem,
  messageHeader,
  syslogSeverity,
  timestamp,
} from './format.js';

const headerOptions = { facility: 16, hostname: 'weir-host', appName: 'weir', procId: '42', msgId: 'ocsf' };
const header = messageHeader(headerOptions);

describe('syslog message format', () => {
  it('maps OCSF severity_id to syslog severity, unknown values to Informational', () => {
    expect([1, 2, 3, 4, 5, 6].map(syslogSeverity)).toEqual([6, 5, 4, 3, 2, 0]);
    expect([0, 99, 7, undefined, '3'].map(syslogSeverity)).toEqual([6, 6, 6, 6, 6]);
  });

  it('accepts facility names and numbers, refuses others with a config error', () => {
    expect(facilityNumber('local0')).toBe(16);
    expect(facilityNumber('LOCAL7')).toBe(23);
    expect(facilityNumber('auth')).toBe(4);
    expect(facilityNumber(3)).toBe(3);
    expect(facilityNumber(undefined)).toBe(16);
    expect(() => facilityNumber(24)).toThrow(DeliveryError);
    expect(() => facilityNumber('local9')).toThrow(/facility/);
  });

  it('escapes SD-PARAM values and cleans header fields', () => {
    expect(escapeSdValue('a"b\\c]d')).toBe('a\\"b\\\\c\\]d');
    expect(escapeSdValue('plain')).toBe('plain');
    expect(headerField('my host é', 255)).toBe('my_host__');
    expect(headerField('', 10)).toBe('-');
    expect(headerField('x'.repeat(60), 48)).toHaveLength(48);
  });

  it('takes TIMESTAMP from OCSF time (ms), or now when it is absent or absurd', () => {
    expect(timestamp(Date.UTC(2024, 0, 15, 12, 0, 0, 250), 0)).toBe('2024-01-15T12:00:00.250Z');
    expect(timestamp('2024', Date.UTC(2025, 1, 1))).toBe('2025-02-01T00:00:00.000Z');
    expect(timestamp(1e20, Date.UTC(2025, 1, 1))).toBe('2025-02-01T00:00:00.000Z');
  });

  it('builds <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG, SD only under the operator SD-ID', () => {
    const line = '{"class_uid":3002,"severity_id":4,"time":1705320000000}';
    const event = JSON.parse(line) as Record<string, unknown>;
    expect(formatMessage(header, event, line, 'id"1]', 7, 0)).toBe(
      `<131>1 2024-01-15T12:00:00.000Z weir-host weir 42 ocsf - ${line}`,
    );
    const own = messageHeader({ ...headerOptions, sdId: 'acme@41234' });
    expect(formatMessage(own, event, line, 'id"1]', 7, 0)).toBe(
      `<131>1 2024-01-15T12:00:00.000Z weir-host weir 42 ocsf [acme@41234 event_id="id\\"1\\]" org="7" class_uid="3002"] ${line}`,
    );
  });

  it('takes only name@<private enterprise number> as SD-ID, never the documentation number 32473', () => {
    const registry = createSinkTypeRegistry([syslogSink]).get('syslog')!;
    const check = (id: string) => registry.checkConfig({ host: 'h', structured_data_id: id }).issues;
    expect(check('acme@41234')).toEqual([]);
    for (const bad of ['weir@32473', 'acme', 'acme@0123', 'ac me@1', 'a=b@1', 'a]b@1', `${'x'.repeat(30)}@12`])
      expect(check(bad), bad).toEqual([
        { location: 'body/config/structured_data_id', message: expect.stringContaining('RFC 5612') },
      ]);
    expect(sdIdProblem('weir@32473')).toMatch(/32473 is the example number reserved for documentation/);
    expect(sdIdProblem('acme@41234')).toBeUndefined();
  });

  it('frames with octet counting (byte length, not characters) or LF', () => {
    const batch = sinkBatch([{ class_uid: 1, message: 'héllo' }], { ids: ['e1'] });
    const [octet] = encodeBatch(batch, header, 'octet_counting', 10_000, 0).frames;
    const text = octet!.toString();
    const space = text.indexOf(' ');
    expect(Number(text.slice(0, space))).toBe(Buffer.byteLength(text.slice(space + 1)));
    expect(Number(text.slice(0, space))).toBe(octet!.length - space - 1);
    const [lf] = encodeBatch(batch, header, 'non_transparent', 10_000, 0).frames;
    expect(lf!.toString().endsWith('"}\n')).toBe(true);
    expect(lf!.toString().startsWith('<134>1 ')).toBe(true);
  });

  it('refuses events above the size limit and multi-line events under LF framing, never truncating', () => {
    const batch = sinkBatchFromLines(['{"a":1}', `{"a":"${'x'.repeat(500)}"}`, '{\n"a":3}'], { ids: ['a', 'b', 'c'] });
    const lf = encodeBatch(batch, header, 'non_transparent', 400, 0);
    expect(lf.frames).toHaveLength(1);
    expect(lf.rejected.map((r) => r.index)).toEqual([1, 2]);
    expect(lf.rejected[0]!.reason).toMatch(/above max_message_bytes \(400\)/);
    expect(lf.rejected[1]!.reason).toMatch(/line feed/);
    const octet = encodeBatch(batch, header, 'octet_counting', 400, 0);
    expect(octet.rejected.map((r) => r.index)).toEqual([1]);
    expect(octet.frames).toHaveLength(2);
  });
});
