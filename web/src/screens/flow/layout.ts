// The data-flow graph laid out left to right by elkjs (layered, orthogonal edges), with an
// enrichment stage between mappings and routes for each organization that has enabled
// enrichment policies. ELK sizes the nodes as drawn and places the edge labels itself, so
// neither nodes nor labels overlap; it loads with the first layout (a chunk of its own).
import type { ElkNode } from 'elkjs/lib/elk-api';
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
  count?: number;
}

export const NODE_WIDTH = 240;
/** Border and padding, the kind and status line, the label line. */
const NODE_BASE = 52;
export const COUNTER_ROW = 15;
const LABEL_HEIGHT = 18;

/** Counters are drawn two to a row. */
export function nodeHeight(n: FlowNode): number {
  return NODE_BASE + Math.ceil(Object.keys(n.counters ?? {}).length / 2) * COUNTER_ROW;
}

/** A label's box: 12px tabular digits and separators stay under 7.5px each. */
export function labelWidth(text: string): number {
  return Math.ceil(text.length * 7.5) + 12;
}

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
      // The mapping's events reach the stage once; the stage hands them to each route.
      if (!linked.has(`${e.from}>${stage}`)) out.push({ from: e.from, to: stage, count: e.count });
      if (!linked.has(`${stage}>${e.to}`)) out.push({ from: stage, to: e.to });
      linked.add(`${e.from}>${stage}`).add(`${stage}>${e.to}`);
    } else {
      out.push(e);
    }
  }
  return { nodes: [...nodes, ...extra], edges: out };
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface PlacedEdge {
  id: string;
  from: string;
  to: string;
  /** The orthogonal route, start to end. */
  points: { x: number; y: number }[];
  label?: Box & { text: string };
}
export interface Placed {
  width: number;
  height: number;
  nodes: Map<string, Box>;
  edges: PlacedEdge[];
}

/** Lays the graph out; `labels[i]` is the text of edge i's label, if it has one. */
export async function layout(nodes: FlowNode[], edges: FlowEdge[], labels: (string | undefined)[]): Promise<Placed> {
  const { default: ELK } = await import('elkjs/lib/elk.bundled.js');
  const elk = new ELK();
  const input: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.edgeRouting': 'ORTHOGONAL',
      // Disabled routes and their destinations stay in their columns, not in a row of their own.
      'elk.separateConnectedComponents': 'false',
      'elk.padding': '[top=16,left=16,bottom=16,right=16]',
      'elk.spacing.nodeNode': '24',
      'elk.spacing.edgeNode': '16',
      'elk.spacing.edgeEdge': '10',
      'elk.spacing.edgeLabel': '4',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      'elk.layered.spacing.edgeNodeBetweenLayers': '16',
      'elk.layered.spacing.edgeEdgeBetweenLayers': '10',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
    },
    children: nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: nodeHeight(n) })),
    edges: edges.map((e, i) => {
      const text = labels[i];
      return {
        id: `e${i}`,
        sources: [e.from],
        targets: [e.to],
        labels:
          text === undefined
            ? []
            : [
                {
                  id: `l${i}`,
                  text,
                  width: labelWidth(text),
                  height: LABEL_HEIGHT,
                  layoutOptions: { 'elk.edgeLabels.placement': 'CENTER' },
                },
              ],
      };
    }),
  };
  const graph = await elk.layout(input);
  const placed: Placed = {
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    nodes: new Map(
      (graph.children ?? []).map((c) => [
        c.id,
        { x: c.x ?? 0, y: c.y ?? 0, width: c.width ?? 0, height: c.height ?? 0 },
      ]),
    ),
    edges: [],
  };
  for (const e of graph.edges ?? []) {
    const i = Number(e.id.slice(1));
    const section = e.sections?.[0];
    const l = e.labels?.[0];
    placed.edges.push({
      id: e.id,
      from: edges[i]!.from,
      to: edges[i]!.to,
      points: section ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint] : [],
      label:
        l && labels[i] !== undefined
          ? { text: labels[i]!, x: l.x ?? 0, y: l.y ?? 0, width: l.width ?? 0, height: l.height ?? 0 }
          : undefined,
    });
  }
  return placed;
}
