// The shape of a stored credential: named secret fields, each a string or, for fields such
// as an HTTP destination's secret_headers, a flat map of names to strings. Validated against
// the destination type's credential schema before it is sealed; never returned or logged.

export type CredentialValue = string | Readonly<Record<string, string>>;
export type Credential = Readonly<Record<string, CredentialValue>>;

function isStringMap(v: unknown): v is Record<string, string> {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')
  );
}

export function isCredential(v: unknown): v is Credential {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === 'string' || isStringMap(x))
  );
}

/** A field of a credential when it is a non-empty string. */
export function credentialString(credential: Credential | null | undefined, field: string): string | undefined {
  const v = credential?.[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Every string of a credential, the values of nested maps included (fields named by `except` left out). */
export function credentialStrings(credential: Credential | null | undefined, except: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const [field, value] of Object.entries(credential ?? {})) {
    if (except.includes(field)) continue;
    if (typeof value === 'string') out.push(value);
    else for (const v of Object.values(value)) out.push(v);
  }
  return out.filter((v) => v !== '');
}
