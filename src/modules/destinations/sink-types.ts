// The destination types a destination may be of, each with compiled validators for its
// config and credential. Built from SINK_TYPES (pipeline/sinks/index.ts); tests register
// fakes through register(). Validation takes the same stance as integration platforms:
// no coercion, nothing removed silently, every issue reported, defaults filled in.
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Credential } from '../../core/credentials.js';
import { SINK_TYPES } from '../../pipeline/sinks/index.js';
import type { SinkType } from '../../pipeline/sinks/types.js';
import { makeAjv } from '../../platform/ajv.js';
import { issueMessage } from '../../platform/validation-issues.js';

export interface Issue {
  location: string;
  message: string;
}

export interface RegisteredSinkType {
  readonly sinkType: SinkType;
  /** A copy of config with the schema's defaults applied, and every issue (empty when valid). */
  checkConfig(config: Record<string, unknown>): { config: Record<string, unknown>; issues: Issue[] };
  /** Issues of a credential against credentialSchema; a type without one takes no credential. */
  checkCredential(credential: Credential): Issue[];
}

// Ajv messages (and the schemas' own errorMessage) name the rule broken, never the value, so
// they are safe for credentials too.
function issues(where: string, errors: ErrorObject[] | null | undefined): Issue[] {
  return (errors ?? []).map((e) => {
    const missing = typeof e.params.missingProperty === 'string' ? `/${e.params.missingProperty}` : '';
    const extra = typeof e.params.additionalProperty === 'string' ? `/${e.params.additionalProperty}` : '';
    return {
      location: `${where}${e.instancePath}${missing}${extra}`,
      message: extra ? 'is not a known field of this destination type' : issueMessage(e),
    };
  });
}

export function createSinkTypeRegistry(initial: readonly SinkType[] = SINK_TYPES) {
  const ajv = makeAjv();
  const byType = new Map<string, RegisteredSinkType>();

  function register(sinkType: SinkType): RegisteredSinkType {
    if (byType.has(sinkType.type)) throw new Error(`destination type ${sinkType.type} is registered twice`);
    const config: ValidateFunction = ajv.compile(sinkType.configSchema as object);
    const credential: ValidateFunction | null = sinkType.credentialSchema
      ? ajv.compile(sinkType.credentialSchema as object)
      : null;
    const entry: RegisteredSinkType = {
      sinkType,
      checkConfig(input) {
        const copy = structuredClone(input);
        return { config: copy, issues: config(copy) ? [] : issues('body/config', config.errors) };
      },
      checkCredential(input) {
        if (!credential) return [{ location: 'body/credential', message: `type ${sinkType.type} takes no credential` }];
        return credential(structuredClone(input)) ? [] : issues('body/credential', credential.errors);
      },
    };
    byType.set(sinkType.type, entry);
    return entry;
  }

  for (const t of initial) register(t);

  return {
    register,
    get: (type: string): RegisteredSinkType | undefined => byType.get(type),
    list: (): RegisteredSinkType[] =>
      [...byType.values()].sort((a, b) => a.sinkType.type.localeCompare(b.sinkType.type)),
  };
}

export type SinkTypeRegistry = ReturnType<typeof createSinkTypeRegistry>;
