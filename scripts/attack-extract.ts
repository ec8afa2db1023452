// Regenerates src/modules/detections/attack/enterprise-attack.json, the MITRE ATT&CK Enterprise
// technique and tactic names the detection screens show beside the ids, from a checkout of
// https://github.com/mitre/cti (its enterprise-attack/attack-pattern and x-mitre-tactic folders):
//   npx tsx scripts/attack-extract.ts --cti <path to the cti checkout> --commit <its commit>
// Revoked and deprecated objects are left out; descriptions are not kept.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { cti: { type: 'string' }, commit: { type: 'string' } } });
if (!values.cti) throw new Error('--cti <path to a checkout of github.com/mitre/cti> is required');
const root = path.join(values.cti, 'enterprise-attack');

interface StixObject {
  type: string;
  name?: string;
  revoked?: boolean;
  x_mitre_deprecated?: boolean;
  x_mitre_shortname?: string;
  external_references?: { source_name: string; external_id?: string }[];
  kill_chain_phases?: { kill_chain_name: string; phase_name: string }[];
}

function objects(folder: string): StixObject[] {
  const dir = path.join(root, folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => (JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { objects: StixObject[] }).objects);
}
const live = (o: StixObject) => !o.revoked && !o.x_mitre_deprecated;
const attackId = (o: StixObject) => o.external_references?.find((r) => r.source_name === 'mitre-attack')?.external_id;

const byShortname = new Map<string, string>();
const tactics: Record<string, string> = {};
for (const t of objects('x-mitre-tactic').filter(live)) {
  const id = attackId(t);
  if (!id || !t.name || !t.x_mitre_shortname) continue;
  byShortname.set(t.x_mitre_shortname, id);
  tactics[id] = t.name;
}
const techniques: Record<string, [string, string[]]> = {};
for (const p of objects('attack-pattern').filter(live)) {
  const id = attackId(p);
  const phases = (p.kill_chain_phases ?? [])
    .filter((k) => k.kill_chain_name === 'mitre-attack')
    .map((k) => byShortname.get(k.phase_name))
    .filter((t): t is string => t !== undefined);
  if (!id || !p.name || phases.length === 0) continue;
  techniques[id] = [p.name, [...new Set(phases)].sort()];
}
const sorted = <T>(o: Record<string, T>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const out = {
  source: {
    repo: 'https://github.com/mitre/cti',
    path: 'enterprise-attack/attack-pattern, enterprise-attack/x-mitre-tactic',
    commit: values.commit ?? 'unknown',
  },
  tactics: sorted(tactics),
  techniques: sorted(techniques),
};
const lines = [
  '{',
  `  "source": ${JSON.stringify(out.source)},`,
  `  "tactics": ${JSON.stringify(out.tactics)},`,
  '  "techniques": {',
  Object.entries(out.techniques)
    .map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(',\n'),
  '  }',
  '}',
  '',
];
writeFileSync(new URL('../src/modules/detections/attack/enterprise-attack.json', import.meta.url), lines.join('\n'));
console.log(`${Object.keys(tactics).length} tactics, ${Object.keys(techniques).length} techniques`);
