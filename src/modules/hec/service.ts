// Splunk's HTTP Event Collector in front of Weir's accept path (docs/inputs-splunk-hec.md):
// the integration's ingestion token as `Authorization: Splunk <token>` (or Bearer), events
// accepted as a push's are (IngestService.receive), answers in HEC's shape, and indexer
// acknowledgement per data channel: an ackId answers true once every batch of its request is
// processed (normalized and routed), read from the batches' state, never assumed.
import type { Readable } from 'node:stream';
import type { Clock } from '../../core/clock.js';
import { AppError, isAppError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { IngestService, ProtocolEvent } from '../ingest/service.js';
import { ignoredParameters } from '../ingest/query.js';
import { hecAnswer, HecRefusal, refuse, type HecAnswer } from './answers.js';
import { decodeEvents, decodeRaw, type Decoded, type HecDefaults, type HecProblem } from './decode.js';
import type { HecStore } from './store.js';

/** A channel unused this long is forgotten with its unanswered acknowledgements (Splunk's default maxIdleTime). */
export const CHANNEL_IDLE_MS = 600_000;
/** Unanswered acknowledgements one channel may hold; beyond, requests on it get 503 code 9 until it drains. */
export const MAX_PENDING_ACKS = 10_000;
/** The most ackIds one ack query may ask about. */
export const MAX_ACK_QUERY = 10_000;
const EXPIRE_EVERY_MS = 60_000;
const EXPIRE_LIMIT = 1000;
const RETRY_AFTER_S = '5';

export interface HecDeps {
  ingest: Pick<IngestService, 'receive' | 'verifyToken'>;
  store: HecStore;
  clock: Clock;
  jsonMaxDepth: number;
  onError: (err: unknown, message: string) => void;
}

/** An HEC request as the routes hand it over: headers that matter, query, body unread. */
export interface HecRequest {
  authorization: string | undefined;
  /** X-Splunk-Request-Channel, else the `channel` query parameter. */
  channel: string | undefined;
  query: Record<string, unknown>;
  contentEncoding: string | undefined;
  contentLength: number | undefined;
  body: Readable | undefined;
}

/** The token of `Authorization: Splunk <token>` (or Bearer); undefined when there is none, 401 code 3 for another scheme. */
export function hecToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || authorization.trim() === '') return undefined;
  const m = /^\s*(?:splunk|bearer)\s+(\S+)\s*$/i.exec(authorization);
  if (!m) throw refuse(3, 'send the ingestion token as Authorization: Splunk <token> (or Bearer <token>)');
  return m[1];
}

/** HEC's query-string token (?token=) and any other credential in the URL: 400 code 16. */
function refuseQueryCredential(query: Record<string, unknown>): void {
  try {
    ignoredParameters(Object.keys(query));
  } catch (err) {
    if (!(isAppError(err) && err.code === 'ingest.token_in_query')) throw err;
    throw refuse(
      16,
      `Weir does not take tokens in URLs, where proxies and logs keep them (parameter '${String(err.details.parameter)}'): send Authorization: Splunk <token>`,
    );
  }
}

function channelOf(req: Pick<HecRequest, 'channel'>): string | undefined {
  const channel = req.channel?.trim();
  if (!channel) return undefined;
  if (!isUuid(channel)) throw refuse(11, 'the data channel (X-Splunk-Request-Channel or ?channel=) must be a UUID');
  return channel.toLowerCase();
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The metadata query parameters; a value that cannot be stored (NUL, a lone surrogate) is 400 code 6. */
function defaultsOf(query: Record<string, unknown>): HecDefaults {
  const out: HecDefaults = {};
  for (const key of ['sourcetype', 'source', 'host', 'index'] as const) {
    const v = text(query[key]);
    if (v === undefined) continue;
    if (v.includes('\u0000') || !v.isWellFormed())
      throw refuse(6, `query parameter ${key} holds a NUL or an unpaired surrogate, which cannot be stored`);
    out[key] = v;
  }
  return out;
}

function problemAnswer(p: HecProblem): HecAnswer {
  const a = hecAnswer(p.code, p.code === 5 ? {} : { 'invalid-event-number': p.at });
  return { ...a, body: { ...a.body, detail: p.code === 5 ? p.reason : `event ${p.at}: ${p.reason}` } };
}

export function createHecService(deps: HecDeps) {
  const { ingest, store, clock } = deps;
  let lastExpiry = 0;

  function expireIdle(): void {
    const now = clock.now().getTime();
    if (now - lastExpiry < EXPIRE_EVERY_MS) return;
    lastExpiry = now;
    store
      .expire(new Date(now - CHANNEL_IDLE_MS), EXPIRE_LIMIT)
      .catch((err: unknown) => deps.onError(err, 'could not expire idle HEC channels'));
  }

  async function accept(
    req: HecRequest,
    decoder: (defaults: HecDefaults) => (body: Buffer) => Decoded,
  ): Promise<HecAnswer> {
    refuseQueryCredential(req.query);
    const decode = decoder(defaultsOf(req.query));
    const token = hecToken(req.authorization);
    const channel = channelOf(req);
    if (channel) {
      const target = await ingest.verifyToken(token);
      if ((await store.pendingCount(target.integrationId, channel)) >= MAX_PENDING_ACKS) {
        const detail = `the channel holds ${MAX_PENDING_ACKS} unanswered acknowledgements: query them, then send again`;
        throw new HecRefusal(hecAnswer(9, { detail }, { 'retry-after': RETRY_AFTER_S }));
      }
    }
    let problem: HecProblem | undefined;
    let decoded: ProtocolEvent[] = [];
    const outcome = await ingest.receive(
      {
        token,
        contentEncoding: req.contentEncoding,
        contentLength: req.contentLength,
        body: req.body,
      },
      (body) => {
        const d = decode(body);
        problem = d.problem;
        decoded = d.events;
        return d.events;
      },
    );
    if (outcome.accepted_count < decoded.length) {
      // Accepted up to a pipeline failure: HEC cannot name the rest, so the sender resends all (duplicates possible).
      const a = hecAnswer(9, {}, { 'retry-after': RETRY_AFTER_S });
      return {
        ...a,
        body: {
          ...a.body,
          detail: `${outcome.accepted_count} of ${decoded.length} events were accepted before the pipeline failed: resend`,
        },
      };
    }
    if (problem) return problemAnswer(problem);
    if (!channel) return hecAnswer(0);
    const ackId = await store.issue(outcome.target.integrationId, channel, outcome.batch_ids, clock.now());
    expireIdle();
    return hecAnswer(0, { ackId });
  }

  return {
    /** POST /services/collector/event: concatenated JSON envelopes. */
    event: (req: HecRequest) => accept(req, (defaults) => (body) => decodeEvents(body, defaults, deps.jsonMaxDepth)),

    /** POST /services/collector/raw: one event per line, metadata from the query. */
    raw: (req: HecRequest) => accept(req, (defaults) => (body) => decodeRaw(body, defaults)),

    /** GET /services/collector/health: healthy while Weir answers; a token, when given, must be valid. */
    async health(req: Pick<HecRequest, 'authorization' | 'query'>): Promise<HecAnswer> {
      refuseQueryCredential(req.query);
      const token = hecToken(req.authorization);
      if (token !== undefined) await ingest.verifyToken(token);
      return hecAnswer(17);
    },

    /**
     * POST /services/collector/ack: {"acks":[ids]} -> {"acks":{"id":bool}}. True once every
     * batch of the request is processed; then forgotten (a later query of it answers false).
     * Unknown, expired and other channels' ids answer false.
     */
    async ack(req: Omit<HecRequest, 'body' | 'contentEncoding' | 'contentLength'>, body: Buffer): Promise<HecAnswer> {
      refuseQueryCredential(req.query);
      const token = hecToken(req.authorization);
      const channel = channelOf(req);
      const target = await ingest.verifyToken(token);
      if (!channel) throw refuse(10, 'send the channel of the events as X-Splunk-Request-Channel');
      const ids = ackIds(body);
      const pending = await store.pending(target.integrationId, channel, ids);
      const done = await store.processed([...pending.values()].flat());
      const acks: Record<string, boolean> = {};
      const answered: number[] = [];
      for (const id of ids) {
        const batches = pending.get(id);
        const ok = batches !== undefined && batches.every((b) => done.has(b));
        acks[String(id)] = ok;
        if (ok) answered.push(id);
      }
      await store.settle(target.integrationId, channel, answered, clock.now());
      return { status: 200, body: { acks } };
    },
  };
}

function ackIds(body: Buffer): number[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw refuse(6, 'the body must be {"acks": [ackId, ...]}', { 'invalid-event-number': 0 });
  }
  const acks = (parsed as { acks?: unknown } | null)?.acks;
  if (!Array.isArray(acks) || !acks.every((a) => Number.isSafeInteger(a) && (a as number) >= 0))
    throw refuse(6, 'the body must be {"acks": [ackId, ...]} with non-negative integer ids', {
      'invalid-event-number': 0,
    });
  if (acks.length > MAX_ACK_QUERY)
    throw new AppError('request.invalid', { detail: `at most ${MAX_ACK_QUERY} acks per query` });
  return acks as number[];
}

export type HecService = ReturnType<typeof createHecService>;
