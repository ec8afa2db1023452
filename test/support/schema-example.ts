// A minimal value that satisfies a JSON schema: required properties only, the first enum
// value or const, the lower bound of numbers, formats honoured. Used by suites that call
// every operation generically.
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
}

export function exampleFor(schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema || depth > 8) return undefined;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt?.length) return exampleFor(alt.find((s) => s.type !== 'null') ?? alt[0], depth + 1);
  if (schema.allOf?.length) return Object.assign({}, ...schema.allOf.map((s) => exampleFor(s, depth + 1) as object));
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = exampleFor(schema.properties?.[name], depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => exampleFor(schema.items, depth + 1));
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return false;
    case 'string':
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.format === 'email') return 'someone@example.test';
      if (schema.format === 'uuid') return '00000000-0000-7000-8000-000000000000';
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 8));
    default:
      return schema.default ?? null;
  }
}
