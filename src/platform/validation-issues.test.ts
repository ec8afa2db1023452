import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { ISSUE_OPTIONS, issueMessage } from './validation-issues.js';

function firstIssue(schema: object, value: unknown): string {
  const validate = new Ajv({ strict: false, allErrors: false, ...ISSUE_OPTIONS }).compile(schema);
  expect(validate(value)).toBe(false);
  return issueMessage(validate.errors![0]!);
}

describe('issueMessage', () => {
  it("shows the schema's words for the keyword it names instead of the regular expression", () => {
    const schema = {
      type: 'string',
      pattern: '^[a-z]+$',
      maxLength: 3,
      errorMessage: { pattern: 'may hold only lowercase letters' },
    };
    expect(firstIssue(schema, 'AB')).toBe('may hold only lowercase letters');
    // Keywords the object does not name keep Ajv's message.
    expect(firstIssue(schema, 'abcd')).toBe('must NOT have more than 3 characters');
  });

  it('a string errorMessage stands for every keyword of its schema', () => {
    expect(firstIssue({ type: 'string', pattern: '^x', errorMessage: 'must start with x' }, 'y')).toBe(
      'must start with x',
    );
    expect(firstIssue({ type: 'string', pattern: '^x', errorMessage: 'must start with x' }, 5)).toBe(
      'must start with x',
    );
  });

  it("without one, Ajv's message (nested schemas read their own)", () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string', pattern: '^x', errorMessage: { pattern: 'must start with x' } },
        b: { type: 'integer' },
      },
    };
    expect(firstIssue(schema, { a: 'y' })).toBe('must start with x');
    expect(firstIssue(schema, { b: 'y' })).toBe('must be integer');
  });
});
