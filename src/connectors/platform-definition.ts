// What a platform is: its name, kind and the JSON Schema of an integration's `config`. Defined
// here, below the modules, because connectors declare their platforms with it and the
// integrations module (modules/integrations/platforms.ts) registers and validates them.
export type PlatformKind = 'push' | 'pull';

/** A JSON Schema (draft 2020-12 subset Ajv understands), always of an object. */
export interface ConfigSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

export interface PlatformDefinition {
  name: string;
  display_name: string;
  kind: PlatformKind;
  description: string;
  config_schema: ConfigSchema;
  /** Streams of the platform whose events are text by nature (one per line), beside the integration's own `text_streams`. */
  text_streams?: readonly string[];
}

/**
 * The config field that declares streams as text: a push to one of them reads each line of
 * the body as one event, the raw message a mapping's parse steps read (docs/mappings.md).
 */
export const TEXT_STREAMS_PROPERTY = {
  type: 'array',
  maxItems: 100,
  uniqueItems: true,
  items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' },
  description:
    'Streams pushed as text: each non-blank line of a push is one event, {"message": "<line>"}, read by the mapping\'s parse steps',
} as const;

/**
 * The config field that declares streams as already OCSF (events another tool normalized): with
 * no mapping published for such a stream, each event is its own OCSF event, validated as a mapped
 * one (docs/mappings.md, "Streams that are already OCSF").
 */
export const OCSF_STREAMS_PROPERTY = {
  type: 'array',
  maxItems: 100,
  uniqueItems: true,
  items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' },
  description:
    'Streams whose events are already OCSF: without a published mapping, each event passes through as itself (it needs a class_uid Weir knows) and is validated like a mapped event',
} as const;
