// The ordered rule table that maps an identity provider's claims to an organization and a
// role. Pure: the login, the sync and the config validation share it. First match wins; no
// match refuses the user.
import type { RoleName } from '../../core/roles.js';

export type RuleMatch = 'equals' | 'contains' | 'glob';

export interface RoleRule {
  claim: string;
  match: RuleMatch;
  value: string;
  /** null: a platform user (no organization). */
  organization_id: number | null;
  role: RoleName;
}

export type Claims = Readonly<Record<string, unknown>>;

/** The claim's values as strings: a scalar is one value, an array its scalar members. Dotted names read nested objects. */
export function claimValues(claims: Claims, name: string): string[] {
  let v: unknown = claims[name];
  if (v === undefined && name.includes('.')) {
    v = name
      .split('.')
      .reduce<unknown>(
        (o, k) => (o && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>)[k] : undefined),
        claims,
      );
  }
  const scalar = (x: unknown): string | undefined =>
    typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : undefined;
  if (Array.isArray(v)) return v.map(scalar).filter((x): x is string => x !== undefined);
  const s = scalar(v);
  return s === undefined ? [] : [s];
}

/** `*` any run of characters, `?` one character; the whole value must match; case-sensitive. */
export function globToRegExp(glob: string): RegExp {
  const body = [...glob]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 's');
}

export function ruleMatches(rule: Pick<RoleRule, 'claim' | 'match' | 'value'>, claims: Claims): boolean {
  const values = claimValues(claims, rule.claim);
  switch (rule.match) {
    case 'equals':
      return values.includes(rule.value);
    case 'contains':
      // A list claim contains the value as a member; a string claim as a substring.
      return Array.isArray(claims[rule.claim])
        ? values.includes(rule.value)
        : values.some((v) => v.includes(rule.value));
    case 'glob': {
      const re = globToRegExp(rule.value);
      return values.some((v) => re.test(v));
    }
  }
}

/** The first rule the claims match, with its position, or null. */
export function firstMatch(rules: readonly RoleRule[], claims: Claims): { index: number; rule: RoleRule } | null {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    if (ruleMatches(rule, claims)) return { index: i, rule };
  }
  return null;
}
