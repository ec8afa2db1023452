// The push's query parameters: a credential in the URL is refused, others are ignored and named.
import { AppError } from '../../core/errors.js';

/**
 * Names that carry a credential in senders' URL conventions. A token in a URL lands in proxy
 * and access logs, so it is refused (before the token check: the sender learns why its push
 * is not authenticated) rather than honoured or ignored.
 */
const CREDENTIAL_PARAMETERS = new Set([
  'token',
  'access_token',
  'ingest_token',
  'x-ingest-token',
  'api_key',
  'apikey',
  'api-key',
  'key',
  'auth',
  'authorization',
  'password',
  'secret',
]);
const MAX_IGNORED_LISTED = 20;

/** The push's other query parameters, ignored (listed in the answer); 422 for a credential. */
export function ignoredParameters(names: readonly string[]): string[] {
  const credential = names.find((n) => CREDENTIAL_PARAMETERS.has(n.toLowerCase()));
  if (credential !== undefined) {
    throw new AppError('ingest.token_in_query', {
      detail: `Query parameter '${credential.slice(0, 64)}' would put a credential in the URL, where logs keep it; send the ingestion token as Authorization: Bearer <token> or X-Ingest-Token`,
      details: { parameter: credential.slice(0, 64) },
    });
  }
  return names.slice(0, MAX_IGNORED_LISTED).map((n) => n.slice(0, 64));
}
