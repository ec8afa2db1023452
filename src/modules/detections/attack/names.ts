// MITRE ATT&CK ids with their names (enterprise-attack.json, origin and licence in README.md):
// a technique or sub-technique with its name and tactics, a tactic with its name. An id the
// table does not know (another matrix, a newer release) keeps its id with a null name.
import table from './enterprise-attack.json' with { type: 'json' };

const TACTICS = table.tactics as Record<string, string>;
const TECHNIQUES = table.techniques as unknown as Record<string, [string, string[]]>;

export interface TacticName {
  id: string;
  name: string | null;
}
export interface TechniqueName {
  id: string;
  name: string | null;
  /** For a sub-technique (T1078.004): its parent's name. */
  parent_name: string | null;
  tactics: TacticName[];
}

const tactic = (id: string): TacticName => ({ id, name: TACTICS[id.toUpperCase()] ?? null });

export function techniqueName(id: string): TechniqueName {
  const key = id.trim().toUpperCase();
  const known = TECHNIQUES[key];
  const parent = key.includes('.') ? TECHNIQUES[key.split('.')[0]!] : undefined;
  return {
    id,
    name: known?.[0] ?? null,
    parent_name: parent?.[0] ?? null,
    tactics: (known?.[1] ?? parent?.[1] ?? []).map(tactic),
  };
}

/** A detection's ATT&CK ids, named; the tactics are those named plus those of its techniques. */
export function attackOf(mitre: { tactics?: string[]; techniques?: string[] } | null | undefined): {
  tactics: TacticName[];
  techniques: TechniqueName[];
} {
  const techniques = (mitre?.techniques ?? []).map(techniqueName);
  const ids = new Set((mitre?.tactics ?? []).map((t) => t.trim()));
  for (const t of techniques) for (const tac of t.tactics) ids.add(tac.id);
  return { tactics: [...ids].map(tactic), techniques };
}
