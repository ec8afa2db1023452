// Builds SinkBatch objects for sink tests the way the delivery lanes do: ids aligned with the
// OCSF JSON lines, one shared meta object per origin, events() parsed lazily once.
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { expect } from 'vitest';
import { createLogger } from '../../src/platform/logger.js';
import { createNetPolicy } from '../../src/platform/net/ssrf.js';
import type { Credential } from '../../src/core/credentials.js';
import { destinationRedactor } from '../../src/pipeline/sinks/secrets.js';
import {
  DeliveryError,
  type EventMeta,
  type SinkBatch,
  type SinkContext,
  type SinkType,
} from '../../src/pipeline/sinks/types.js';

/** Loopback allowed, as in test apps (WEIR_OUTBOUND_ALLOW_CIDRS). */
export const LOOPBACK_CIDRS = ['127.0.0.0/8', '::1/128'];

/** A SinkContext for sink tests: loopback allowed unless allowCidrs says otherwise, silent logger, the type's redactor. */
export function sinkContext(options: {
  config: Record<string, unknown>;
  credential?: Credential | null;
  /** Whose secretValues build the redactor (default: every string of the credential is secret). */
  type?: Pick<SinkType, 'secretValues'>;
  allowCidrs?: string[];
  fileRoot?: string;
  fileStaleMs?: number;
  destinationId?: string;
  /** Default 1; null: a global destination. */
  organizationId?: number | null;
}): SinkContext {
  return {
    destinationId: options.destinationId ?? '00000000-0000-7000-8000-000000000001',
    organizationId: options.organizationId === undefined ? 1 : options.organizationId,
    fileStaleMs: options.fileStaleMs,
    config: options.config,
    credential: options.credential ?? null,
    redact: destinationRedactor(options.type ?? {}, options.credential ?? null, options.config),
    net: createNetPolicy({ allowCidrs: options.allowCidrs ?? LOOPBACK_CIDRS }),
    fileRoot: options.fileRoot ?? tmpdir(),
    logger: createLogger({ level: 'silent', role: 'dispatcher' }),
  };
}

export const DEFAULT_META: EventMeta = Object.freeze({ organization_id: 1, integration_id: 1, stream: 'test' });

export interface SinkBatchOptions {
  /** Origin shared by every event (default DEFAULT_META). */
  meta?: EventMeta;
  /** Envelope ids; default: each event's metadata.uid when it is a string, else a random UUID. */
  ids?: string[];
}

/** A SinkBatch of the given events (each serialized with JSON.stringify). */
export function sinkBatch(events: object[], options: SinkBatchOptions = {}): SinkBatch {
  const meta = options.meta ?? DEFAULT_META;
  const ids =
    options.ids ??
    events.map((e) => {
      const uid = (e as { metadata?: { uid?: unknown } }).metadata?.uid;
      return typeof uid === 'string' ? uid : randomUUID();
    });
  if (ids.length !== events.length) throw new Error('sinkBatch: ids and events must have the same length');
  const lines = events.map((e) => JSON.stringify(e));
  return sinkBatchFromLines(lines, { meta, ids });
}

/** A SinkBatch of already serialized lines (for lines a test wants byte-exact). */
export function sinkBatchFromLines(lines: string[], options: SinkBatchOptions = {}): SinkBatch {
  const meta = options.meta ?? DEFAULT_META;
  const ids = options.ids ?? lines.map(() => randomUUID());
  let parsed: Record<string, unknown>[] | undefined;
  return {
    ids,
    lines,
    meta: lines.map(() => meta),
    events: () => (parsed ??= lines.map((l) => JSON.parse(l) as Record<string, unknown>)),
    bytes: lines.reduce((n, l) => n + Buffer.byteLength(l), 0),
  };
}

/** n OCSF-looking events (class 3002 authentication), time spaced one second apart from `start`. */
export function ocsfEvents(n: number, start = Date.UTC(2024, 0, 15, 12, 0, 0)): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      class_uid: 3002,
      category_uid: 3,
      activity_id: 1,
      severity_id: 1,
      time: start + i * 1000,
      message: `login ${i}`,
      metadata: { uid: randomUUID(), version: '1.3.0', product: { name: 'test', vendor_name: 'weir' } },
      user: { name: `user${i}` },
    });
  }
  return out;
}

/** The DeliveryError a send (or other sink call) rejects with; fails the test when it resolves or rejects with anything else. */
export async function failure(p: Promise<unknown>): Promise<DeliveryError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  return err as DeliveryError;
}
