// The one redactor of a destination: built from its type's secretValues (or every string of
// the credential) when a sink is created, shared by the sink (ctx.redact), the delivery
// lane (every error, reason and log text it stores) and the connection test.
import { credentialStrings, type Credential } from '../../core/credentials.js';
import { createRedactor, redactPatterns, type Redactor, type SecretValue } from '../../core/redaction.js';
import type { SinkType } from './types.js';

export function destinationSecrets(
  type: Pick<SinkType, 'secretValues'>,
  credential: Credential | null,
  config: Record<string, unknown>,
): (string | SecretValue)[] {
  if (!credential) return [];
  return type.secretValues ? type.secretValues(credential, config) : credentialStrings(credential);
}

/** The redactor of a destination; without a credential, the pattern layer alone. */
export function destinationRedactor(
  type: Pick<SinkType, 'secretValues'>,
  credential: Credential | null,
  config: Record<string, unknown>,
): Redactor {
  const secrets = destinationSecrets(type, credential, config);
  return secrets.length > 0 ? createRedactor(secrets) : redactPatterns;
}

/** `user:password` as a Basic header (or a URL's user info) carries it, the user name public; nothing without a password. */
export function basicPair(user: unknown, password: unknown): SecretValue[] {
  return typeof user === 'string' && typeof password === 'string' && password !== ''
    ? [{ value: `${user}:${password}`, publicPrefix: user.length + 1 }]
    : [];
}
