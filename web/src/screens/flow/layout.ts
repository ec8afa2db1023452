// The data-flow graph laid out left to right by elkjs (layered), with an enrichment stage
// between mappings and routes for each organization that has enabled enrichment policies.
import ELK from 'elkjs/lib/elk.bundled.js';
import type { Ok } from '../../api/client';

export type FlowNode =
  | Ok<'routes.flow'>['nodes'][number]
  | {
      id: string;
      kind: 'enrichment';
      label: string;
      status: string;
      ref_id: null;
      organization_id: number | null;
      counters: Record<string, number>;
    };
export interface FlowEdge {
  from: string;
  to: string;
}

export const NODE_WIDTH = 190;
export const NODE_HEIGHT = 64;

/** Inserts `enrichment:<org>` between an organization's mappings and its routes. */
export function withEnrichment(
  nodes: FlowNode[],
  edges: FlowEdge[],
  policiesByOrg: Map<number, number>,
): { nodes: FlowNode[]; edges: FlowEdge[] } {
  if (policiesByOrg.size === 0) return { nodes, edges };
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const extra: FlowNode[] = [];
  for (const [org, count] of policiesByOrg) {
    extra.push({
      id: `enrichment:${org}`,
      kind: 'enrichment',
      label: `${count} enrichment ${count === 1 ? 'policy' : 'policies'}`,
      status: 'enabled',
      ref_id: null,
      organization_id: org,
      counters: {},
    });
  }
  const out: FlowEdge[] = [];
  const linked = new Set<string>();
  for (const e of edges) {
    const from = byId.get(e.from);
    const to = byId.get(e.to);
    const org = from?.organization_id ?? null;
    if (from?.kind === 'mapping' && to?.kind === 'route' && org !== null && policiesByOrg.has(org)) {
      const stage = `enrichment:${org}`;
      if (!linked.has(`${e.from}>${stage}`)) out.push({ from: e.from, to: stage });
      if (!linked.has(`${stage}>${e.to}`)) out.push({ from: stage, to: e.to });
      linked.add(`${e.from}>${stage}`).add(`${stage}>${e.to}`);
    } else {
      out.push(e);
    }
  }
  return { nodes: [...nodes, ...extra], edges: out };
}

export async function layout(nodes: FlowNode[], edges: FlowEdge[]): Promise<Map<string, { x: number; y: number }>> {
  const elk = new ELK();
  const graph = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': '24',
      'elk.layered.spacing.nodeNodeBetweenLayers': '80',
    },
    children: nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: edges.map((e, i) => ({ id: `e${i}`, sources: [e.from], targets: [e.to] })),
  });
  return new Map((graph.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}
