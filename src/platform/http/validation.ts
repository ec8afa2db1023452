// Request validation. Query strings, path parameters and headers arrive as text, so they
// are coerced to their declared types; JSON bodies are not: `{"name": 5}` for a string
// field is a 422, not a silently converted value. Unknown body fields are never removed
// silently either; a schema that forbids them says so.
import type { FastifySchemaCompiler } from 'fastify';
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { parseDate } from '../../core/dates.js';
import { ISSUE_OPTIONS } from '../validation-issues.js';

function makeAjv(coerce: boolean): Ajv {
  const options: Options = {
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    addUsedSchema: false,
    strict: false,
    ...ISSUE_OPTIONS,
  };
  const ajv = new Ajv(options);
  addFormats.default(ajv);
  // Dates in are parsed by one rule: offsets honoured, no zone read as UTC.
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseDate(s) !== null });
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const textual = makeAjv(true);
  const json = makeAjv(false);
  return ({ schema, httpPart }) => (httpPart === 'body' ? json : textual).compile(schema as object);
}
