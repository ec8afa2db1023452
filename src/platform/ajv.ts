// The one way Weir builds an Ajv instance: request parts, integration platform configs and
// destination configs/credentials. The shared stance: nothing removed silently, defaults
// filled in, formats known, and the schema kept on each error so that issueMessage can
// read its `errorMessage` (validation-issues.ts). Callers override what differs for them
// (request validation coerces text and stops at the first error).
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { ISSUE_OPTIONS } from './validation-issues.js';

export function makeAjv(overrides: Options = {}): Ajv {
  const ajv = new Ajv({
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    // Every issue at once, so that one round trip fixes a config.
    allErrors: true,
    strict: false,
    ...overrides,
    ...ISSUE_OPTIONS,
  });
  addFormats.default(ajv);
  return ajv;
}
