import { Type } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const CaseHealth = Type.Object({
  configured: Type.Boolean({
    description: 'false: no case-management system is configured (WEIR_CASE_URL); a valid state, not an error',
  }),
  reachable: Type.Boolean({ description: 'The system answered its ping with the configured key' }),
  system: Type.Union([Type.Literal('dfir-iris'), Type.Null()]),
  version: Nullable(Type.String({ description: "The system's version (IRIS iris_current), when it said" })),
  api_version: Nullable(Type.String({ description: 'The API version it serves (IRIS api_current), when it said' })),
  latency_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Round trip of the ping; null when it failed or nothing is configured',
  }),
  checked_at: Timestamp({ description: 'When the probe ran (cached answers keep the time of their probe)' }),
  cached: Type.Boolean({ description: 'true: the answer of a probe of the last 30 s, shared by every api process' }),
  detail: Nullable(Type.String({ description: 'Why it is not reachable or not configured' })),
});
