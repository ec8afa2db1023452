// Data-flow map: integrations → mappings → (enrichment) → routes → destinations, with the
// window's counts on each edge and each element's health; clicking an element opens it.
import { useQuery } from '@tanstack/react-query';
import { Background, Controls, Handle, Position, ReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { ErrorNote, Field, PageHeader, Stat } from '../../ui/kit';
import { layout, withEnrichment, type FlowNode } from './layout';

const TONE: Record<string, string> = {
  active: 'ok',
  live: 'ok',
  enabled: 'ok',
  closed: 'ok',
  healthy: 'ok',
  half_open: 'warn',
  no_live_version: 'warn',
  degraded: 'warn',
  open: 'bad',
  missing: 'bad',
  unhealthy: 'bad',
};

/** What flows out of a node: the count an edge leaving it carries. */
function outflow(n: FlowNode): number {
  const c = n.counters ?? {};
  if (n.kind === 'integration') return c.events_in ?? 0;
  if (n.kind === 'mapping') return c.normalized ?? c.events_in ?? 0;
  if (n.kind === 'route') return c.matched ?? 0;
  return 0;
}

function countersText(n: FlowNode): string {
  return Object.entries(n.counters ?? {})
    .map(([k, v]) => `${k.replace(/_/g, ' ')} ${formatNumber(v)}`)
    .join(' · ');
}

function FlowCard({ data }: NodeProps<Node<{ node: FlowNode }>>) {
  const n = data.node;
  return (
    <div className={`flow-node ${TONE[n.status] ?? 'muted'}`}>
      <Handle type="target" position={Position.Left} />
      <span className="hint">{n.kind}</span>
      <strong>{n.label}</strong>
      <span>{n.status.replace(/_/g, ' ')}</span>
      <div className="hint">{countersText(n)}</div>
      <Handle type="source" position={Position.Right} />
    </div>
  );
}
const nodeTypes = { card: FlowCard };

const HREF: Record<string, (n: FlowNode) => string | undefined> = {
  integration: (n) => (n.ref_id ? `/integrations/${n.ref_id}` : undefined),
  mapping: (n) => (n.ref_id ? `/mappings/${n.ref_id}` : undefined),
  enrichment: () => '/enrichment',
  route: (n) => (n.ref_id ? `/routes?route=${n.ref_id}` : '/routes'),
  destination: (n) => (n.ref_id && n.status !== 'missing' ? `/destinations/${n.ref_id}` : undefined),
};

export default function FlowMap() {
  const org = useOrgFilter();
  const { can } = useSession();
  const [, navigate] = useLocation();
  const [hours, setHours] = useState(24);
  const flow = useQuery({
    queryKey: ['flow', org, hours],
    queryFn: () => call(api.GET('/api/collectors/routes/flow', { params: { query: { ...org, hours } } })),
    refetchInterval: 10_000,
  });
  const policies = useQuery({
    queryKey: ['enrichment-policies', org],
    queryFn: () => call(api.GET('/api/collectors/enrichment/policies', { params: { query: org } })),
    enabled: can('user.manage'),
  });
  const graph = useMemo(() => {
    if (!flow.data) return undefined;
    const byOrg = new Map<number, number>();
    for (const p of policies.data ?? [])
      if (p.enabled) byOrg.set(p.organization_id, (byOrg.get(p.organization_id) ?? 0) + 1);
    return withEnrichment(flow.data.nodes, flow.data.edges, byOrg);
  }, [flow.data, policies.data]);

  const [positions, setPositions] = useState<Map<string, { x: number; y: number }>>();
  const shape = graph
    ? `${graph.nodes.map((n) => n.id).join()}|${graph.edges.map((e) => `${e.from}>${e.to}`).join()}`
    : '';
  // Laid out again only when the graph's shape changes, not on every counter refresh.
  const latest = useRef(graph);
  latest.current = graph;
  useEffect(() => {
    const g = latest.current;
    if (!g || !shape) return;
    let live = true;
    void layout(g.nodes, g.edges).then((p) => live && setPositions(p));
    return () => {
      live = false;
    };
  }, [shape]);

  const nodes: Node<{ node: FlowNode }>[] = useMemo(
    () =>
      (graph?.nodes ?? []).map((n) => ({
        id: n.id,
        type: 'card',
        position: positions?.get(n.id) ?? { x: 0, y: 0 },
        data: { node: n },
        ariaLabel: `${n.kind} ${n.label}, ${n.status.replace(/_/g, ' ')}${countersText(n) ? `, ${countersText(n)}` : ''}`,
        connectable: false,
        draggable: false,
      })),
    [graph, positions],
  );
  const edges: Edge[] = useMemo(() => {
    const byId = new Map((graph?.nodes ?? []).map((n) => [n.id, n]));
    return (graph?.edges ?? []).map((e, i) => {
      const from = byId.get(e.from);
      const to = byId.get(e.to);
      const tone = to ? (TONE[to.status] ?? 'muted') : 'muted';
      return {
        id: `e${i}`,
        source: e.from,
        target: e.to,
        label: from ? formatNumber(outflow(from)) : undefined,
        animated: from ? outflow(from) > 0 : false,
        className: `edge-${tone}`,
        ariaLabel: `${from?.label ?? e.from} to ${to?.label ?? e.to}: ${from ? formatNumber(outflow(from)) : 0} events, ${to?.status ?? ''}`,
      };
    });
  }, [graph]);

  const totals = flow.data?.totals;
  return (
    <>
      <PageHeader title="Data flow">
        <Field label="Window">
          {(id) => (
            <select id={id} value={hours} onChange={(e) => setHours(Number(e.target.value))}>
              {[1, 6, 24, 72, 168].map((h) => (
                <option key={h} value={h}>
                  Last {h} h
                </option>
              ))}
            </select>
          )}
        </Field>
      </PageHeader>
      <ErrorNote error={flow.error} />
      {totals ? (
        <dl className="stats" aria-label="Totals">
          <Stat label="Events in" value={formatNumber(totals.events_in)} />
          <Stat label="Quarantined" value={formatNumber(totals.quarantined)} />
          <Stat label="Delivered" value={formatNumber(totals.delivered)} />
          <Stat
            label="Dead-lettered"
            value={formatNumber(totals.dead_lettered)}
            tone={totals.dead_lettered ? 'bad' : undefined}
          />
        </dl>
      ) : null}
      <div className="flow" data-testid="flow-map">
        {positions ? (
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            fitView
            fitViewOptions={{ maxZoom: 1 }}
            nodesConnectable={false}
            nodesDraggable={false}
            onNodeClick={(_e, node) => {
              const href = HREF[node.data.node.kind]?.(node.data.node);
              if (href) navigate(href);
            }}
          >
            <Background />
            <Controls showInteractive={false} />
          </ReactFlow>
        ) : flow.data ? (
          <p role="status">Laying out…</p>
        ) : null}
      </div>
      {graph && graph.nodes.length === 0 ? <p className="empty">No integrations, routes or destinations yet.</p> : null}
      {graph && graph.nodes.length > 0 ? (
        <details className="panel">
          <summary>Elements as a list</summary>
          <ul>
            {graph.nodes.map((n) => {
              const href = HREF[n.kind]?.(n);
              const text = `${n.kind}: ${n.label} (${n.status.replace(/_/g, ' ')})`;
              return (
                <li key={n.id}>
                  {href ? <Link href={href}>{text}</Link> : text} {countersText(n)}
                </li>
              );
            })}
          </ul>
        </details>
      ) : null}
    </>
  );
}
