// The platforms an integration may be of: each with the JSON Schema of its `config`.
// Connectors (collection) register their vendor platforms here (their definition:
// connectors/platform-definition.ts); `custom` is built in.
// A config field whose schema says `writeOnly: true` is a secret: it is accepted on
// create/update and never returned (the representation says `{"configured": true}`).
import type { ErrorObject, ValidateFunction } from 'ajv';
import { makeAjv } from '../../platform/ajv.js';
import { issueMessage } from '../../platform/validation-issues.js';
import {
  OCSF_STREAMS_PROPERTY,
  TEXT_STREAMS_PROPERTY,
  type PlatformDefinition,
} from '../../connectors/platform-definition.js';

/** The text streams of an integration: its platform's and its config's. */
export function textStreamsOf(
  platform: Pick<PlatformDefinition, 'text_streams'> | undefined,
  configured: unknown,
): Set<string> {
  const own = Array.isArray(configured) ? configured.filter((s): s is string => typeof s === 'string') : [];
  return new Set([...(platform?.text_streams ?? []), ...own]);
}

export interface ConfigIssue {
  location: string;
  message: string;
}

/**
 * A platform's checks of a valid config against what the schema cannot know: the deployment
 * (syslog ports allowed by WEIR_SYSLOG_PORTS) and the other integrations (a port already taken).
 */
export type ConfigCheck = (
  config: Record<string, unknown>,
  self: { integrationId?: number; organizationId: number; active: boolean },
) => Promise<ConfigIssue[]>;

/** What the service needs from a platform: its definition and a compiled validator. */
export interface Platform extends PlatformDefinition {
  /** Top-level and nested paths of the secret (writeOnly) fields, e.g. ['api_key', 'oauth.client_secret']. */
  secretFields: string[];
  validate(config: Record<string, unknown>): ConfigIssue[];
  check?: ConfigCheck;
}

export const CUSTOM_PLATFORM: PlatformDefinition = {
  name: 'custom',
  display_name: 'Custom source (push)',
  kind: 'push',
  description:
    "A push-only source: events arrive on the ingestion endpoint with the integration's ingestion token. " +
    'No vendor configuration is needed.',
  config_schema: {
    type: 'object',
    properties: {
      description: { type: 'string', maxLength: 1000, description: 'Free text about the source' },
      text_streams: TEXT_STREAMS_PROPERTY,
      ocsf_streams: OCSF_STREAMS_PROPERTY,
    },
    additionalProperties: false,
  },
};

function secretPaths(schema: Record<string, unknown>, prefix = ''): string[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const out: string[] = [];
  for (const [name, sub] of Object.entries(props)) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (sub.writeOnly === true) out.push(path);
    else if (sub.type === 'object') out.push(...secretPaths(sub, path));
  }
  return out;
}

function issues(errors: ErrorObject[] | null | undefined): ConfigIssue[] {
  return (errors ?? []).map((e) => {
    const missing = typeof e.params.missingProperty === 'string' ? `/${e.params.missingProperty}` : '';
    const extra = typeof e.params.additionalProperty === 'string' ? `/${e.params.additionalProperty}` : '';
    const location = `body/config${e.instancePath}${missing}${extra}`;
    return { location, message: extra ? 'is not a known field of this platform' : issueMessage(e) };
  });
}

export function createPlatformRegistry(definitions: PlatformDefinition[] = [CUSTOM_PLATFORM]) {
  const ajv = makeAjv();
  const byName = new Map<string, Platform>();

  function register(def: PlatformDefinition, check?: ConfigCheck): Platform {
    if (byName.has(def.name)) throw new Error(`platform ${def.name} is registered twice`);
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(def.name))
      throw new Error(`platform name "${def.name}" is not of the form [a-z][a-z0-9_]*`);
    const compiled: ValidateFunction = ajv.compile(def.config_schema);
    const platform: Platform = {
      ...def,
      secretFields: secretPaths(def.config_schema),
      validate(config) {
        return compiled(config) ? [] : issues(compiled.errors);
      },
      ...(check ? { check } : {}),
    };
    byName.set(def.name, platform);
    return platform;
  }

  for (const def of definitions) register(def);

  return {
    register,
    get: (name: string): Platform | undefined => byName.get(name),
    list: (): Platform[] => [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)),
  };
}

export type PlatformRegistry = ReturnType<typeof createPlatformRegistry>;

/** The placeholder a secret field reads as, and that a client sends back to keep it. */
export const SECRET_PLACEHOLDER = Object.freeze({ configured: true });

function isPlaceholder(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    (v as Record<string, unknown>).configured === true
  );
}

function getPath(obj: Record<string, unknown>, path: string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (typeof next !== 'object' || next === null) return;
    cur = next as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (last !== undefined) cur[last] = value;
}

/** A deep copy of config with every secret field that holds a value replaced by the placeholder. */
export function maskSecrets(
  platform: Pick<Platform, 'secretFields'> | undefined,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const copy = structuredClone(config);
  for (const field of platform?.secretFields ?? []) {
    const path = field.split('.');
    const value = getPath(copy, path);
    if (value !== undefined && value !== null) setPath(copy, path, { ...SECRET_PLACEHOLDER });
  }
  return copy;
}

/**
 * The config to store from what a client sent: a secret sent back as the placeholder keeps
 * the stored value. Returns the paths of placeholders that had nothing stored to keep.
 */
export function keepSecrets(
  platform: Pick<Platform, 'secretFields'>,
  incoming: Record<string, unknown>,
  stored: Record<string, unknown>,
): { config: Record<string, unknown>; unresolved: string[] } {
  const config = structuredClone(incoming);
  const unresolved: string[] = [];
  for (const field of platform.secretFields) {
    const path = field.split('.');
    if (!isPlaceholder(getPath(config, path))) continue;
    const kept = getPath(stored, path);
    if (kept === undefined || kept === null || isPlaceholder(kept)) unresolved.push(field);
    else setPath(config, path, kept);
  }
  return { config, unresolved };
}
