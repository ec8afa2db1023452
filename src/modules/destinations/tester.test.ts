import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { DeliveryError, type Sink, type SinkType } from '../../pipeline/sinks/types.js';
import { createLogger } from '../../platform/logger.js';
import { createNetPolicy } from '../../platform/net/ssrf.js';
import { failureKind, testDestination } from './tester.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const net = createNetPolicy({ allowCidrs: [] });

function typeWith(sink: Partial<Sink>, onClose?: () => void): SinkType {
  return {
    type: 'fake',
    title: 'Fake',
    description: '',
    configSchema: Type.Object({}),
    credentialSchema: null,
    credentialRequired: false,
    create: () => ({
      send: async () => ({}),
      test: async () => ({ ok: true, detail: 'ok', latency_ms: 0 }),
      close: async () => onClose?.(),
      ...sink,
    }),
  };
}

const run = (sinkType: SinkType, timeoutMs = 1000, credential: Record<string, string> | null = null) =>
  testDestination({
    destinationId: 'd1',
    organizationId: 1,
    sinkType,
    config: {},
    credential,
    net,
    fileRoot: '/tmp',
    logger,
    timeoutMs,
  });

describe('testDestination', () => {
  it('times out a sink that never answers, aborts its signal and still closes it', async () => {
    let aborted = false;
    let closed = false;
    const hanging = typeWith(
      {
        test: (signal) =>
          new Promise(() => {
            signal.addEventListener('abort', () => {
              aborted = true;
            });
          }),
      },
      () => {
        closed = true;
      },
    );
    const result = await run(hanging, 50);
    expect(result).toMatchObject({ ok: false, error_kind: 'timeout', detail: 'no answer within 0 s' });
    expect(aborted).toBe(true);
    expect(closed).toBe(true);
  });

  it('turns thrown errors into ok false with a kind, redacting the credential', async () => {
    const throwing = typeWith({
      test: async () => {
        throw new DeliveryError('http_4xx', 'server said: key hunter2-secret is unknown', { statusCode: 400 });
      },
    });
    const result = await run(throwing, 1000, { key: 'hunter2-secret' });
    expect(result).toMatchObject({ ok: false, error_kind: 'http_4xx' });
    expect(result.detail).not.toContain('hunter2-secret');
    expect(result.detail).toContain('[redacted]');
  });

  it('reports a sink that cannot even be built as a failure, and an ok result as is', async () => {
    const broken: SinkType = {
      ...typeWith({}),
      create: () => {
        throw new DeliveryError('config', 'url is not usable');
      },
    };
    expect(await run(broken)).toMatchObject({ ok: false, error_kind: 'config', detail: 'url is not usable' });
    expect(await run(typeWith({}))).toEqual({ ok: true, detail: 'ok', latency_ms: 0 });
    expect(await run(typeWith({ test: async () => ({ ok: false, detail: 'nope', latency_ms: 3 }) }))).toEqual({
      ok: false,
      detail: 'nope',
      latency_ms: 3,
      error_kind: 'protocol',
    });
  });

  it('classifies Node network errors', () => {
    expect(failureKind(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('connection');
    expect(
      failureKind(new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }) })),
    ).toBe('dns');
    expect(failureKind(new TypeError('fetch failed', { cause: new DeliveryError('blocked_address', 'no') }))).toBe(
      'blocked_address',
    );
    expect(failureKind(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toBe('tls');
    expect(failureKind(new Error('odd'))).toBe('protocol');
  });
});
