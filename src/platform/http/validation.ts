// Request validation. Query strings, path parameters and headers arrive as text, so they
// are coerced to their declared types; JSON bodies are not: `{"name": 5}` for a string
// field is a 422, not a silently converted value. Unknown body fields are never removed
// silently either; a schema that forbids them says so.
import type { FastifySchemaCompiler } from 'fastify';
import type { Ajv } from 'ajv';
import { parseDate } from '../../core/dates.js';
import { makeAjv } from '../ajv.js';

function requestAjv(coerce: boolean): Ajv {
  // Stops at the first error; a schema with an $id may serve several routes, so compiling
  // it must not register it.
  const ajv = makeAjv({ coerceTypes: coerce ? 'array' : false, allErrors: false, addUsedSchema: false });
  // Dates in are parsed by one rule: offsets honoured, no zone read as UTC.
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseDate(s) !== null });
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const textual = requestAjv(true);
  const json = requestAjv(false);
  return ({ schema, httpPart }) => (httpPart === 'body' ? json : textual).compile(schema as object);
}
