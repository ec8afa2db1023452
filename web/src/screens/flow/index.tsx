// Data-flow map: integrations → mappings → (enrichment, detections) → routes → destinations,
// laid out by ELK (layout.ts) and drawn here: an SVG of the orthogonal edges under the node
// cards and the edge labels, at the positions ELK gave. The map scrolls and zooms (fit to the
// width by default); every card is a link (keyboard: Tab, Enter) that opens the element.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { ErrorNote, Field, PageHeader, Stat } from '../../ui/kit';
import { layout, withEnrichment, type FlowEdge, type FlowNode, type Placed } from './layout';

const TONE: Record<string, string> = {
  active: 'ok',
  live: 'ok',
  enabled: 'ok',
  closed: 'ok',
  healthy: 'ok',
  half_open: 'warn',
  breaker_half_open: 'warn',
  no_live_version: 'warn',
  degraded: 'warn',
  open: 'bad',
  breaker_open: 'bad',
  missing: 'bad',
  unhealthy: 'bad',
};
const toneOf = (n: FlowNode | undefined) => (n ? (TONE[n.status] ?? 'muted') : 'muted');
const words = (s: string) => s.replace(/_/g, ' ');

function countersText(n: FlowNode): string {
  return Object.entries(n.counters ?? {})
    .map(([k, v]) => `${words(k)} ${formatNumber(v)}`)
    .join(' · ');
}

const HREF: Record<string, (n: FlowNode) => string | undefined> = {
  integration: (n) => (n.ref_id ? `/integrations/${n.ref_id}` : undefined),
  mapping: (n) => (n.ref_id ? `/mappings/${n.ref_id}` : undefined),
  detections: () => '/detections',
  enrichment: () => '/enrichment',
  route: (n) => (n.ref_id ? `/routes?route=${n.ref_id}` : '/routes'),
  destination: (n) => (n.ref_id && n.status !== 'missing' ? `/destinations/${n.ref_id}` : undefined),
};

function Card({ node }: { node: FlowNode }) {
  return (
    <>
      <span className="hint">
        {node.kind} · {words(node.status)}
      </span>
      <strong title={node.label}>{node.label}</strong>
      <span className="flow-counters">
        {Object.entries(node.counters ?? {}).map(([k, v]) => (
          <span key={k} title={`${words(k)} ${formatNumber(v)}`}>
            {words(k)} {formatNumber(v)}
          </span>
        ))}
      </span>
    </>
  );
}

const ZOOMS = [0.25, 0.35, 0.5, 0.65, 0.8, 1, 1.25, 1.5];

function Diagram({ graph, placed }: { graph: { nodes: FlowNode[] }; placed: Placed }) {
  const frame = useRef<HTMLDivElement>(null);
  const [scale, setScale] = useState<number>();
  const fit = () => {
    const width = frame.current?.clientWidth ?? placed.width;
    return Math.max(ZOOMS[0]!, Math.min(1, (width - 2) / Math.max(1, placed.width)));
  };
  // Fitted to the frame's width when first drawn; the reader's zoom is kept after that.
  useLayoutEffect(() => setScale((s) => s ?? fit()), [placed]); // eslint-disable-line react-hooks/exhaustive-deps
  const s = scale ?? 1;
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const step = (dir: 1 | -1) =>
    setScale(
      dir > 0 ? (ZOOMS.find((z) => z > s + 0.001) ?? s) : ([...ZOOMS].reverse().find((z) => z < s - 0.001) ?? s),
    );
  return (
    <>
      <div className="flow-toolbar" role="toolbar" aria-label="Zoom">
        <button type="button" onClick={() => step(-1)} disabled={s <= ZOOMS[0]!}>
          Zoom out
        </button>
        <button type="button" onClick={() => step(1)} disabled={s >= ZOOMS[ZOOMS.length - 1]!}>
          Zoom in
        </button>
        <button type="button" onClick={() => setScale(fit())}>
          Fit
        </button>
        <button type="button" onClick={() => setScale(1)}>
          Actual size
        </button>
        <span className="hint" aria-live="polite">
          {Math.round(s * 100)}%
        </span>
      </div>
      <div className="flow" data-testid="flow-map" ref={frame}>
        <div style={{ width: placed.width * s, height: placed.height * s, position: 'relative' }}>
          <div className="flow-canvas" style={{ width: placed.width, height: placed.height, transform: `scale(${s})` }}>
            <svg width={placed.width} height={placed.height} aria-hidden="true" focusable="false">
              <defs>
                {['ok', 'warn', 'bad', 'muted'].map((tone) => (
                  <marker
                    key={tone}
                    id={`flow-arrow-${tone}`}
                    className={`flow-arrow ${tone}`}
                    viewBox="0 0 8 8"
                    refX="8"
                    refY="4"
                    markerWidth="8"
                    markerHeight="8"
                    orient="auto-start-reverse"
                  >
                    <path d="M0,0 L8,4 L0,8 z" />
                  </marker>
                ))}
              </defs>
              {placed.edges.map((e) => {
                const tone = toneOf(byId.get(e.to));
                return (
                  <path
                    key={e.id}
                    className={`flow-edge ${tone}`}
                    d={e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ')}
                    markerEnd={`url(#flow-arrow-${tone})`}
                  />
                );
              })}
            </svg>
            {placed.edges.map((e) =>
              e.label ? (
                <span
                  key={e.id}
                  className="flow-label"
                  data-testid="flow-edge-label"
                  aria-hidden="true"
                  style={{ left: e.label.x, top: e.label.y, width: e.label.width, height: e.label.height }}
                >
                  {e.label.text}
                </span>
              ) : null,
            )}
            {graph.nodes.map((n) => {
              const box = placed.nodes.get(n.id);
              if (!box) return null;
              const href = HREF[n.kind]?.(n);
              const name = `${n.kind} ${n.label}, ${words(n.status)}${countersText(n) ? `, ${countersText(n)}` : ''}`;
              return (
                <div
                  key={n.id}
                  role="group"
                  aria-label={name}
                  data-testid="flow-node"
                  data-node-id={n.id}
                  className={`flow-node ${toneOf(n)}`}
                  style={{ left: box.x, top: box.y, width: box.width, height: box.height }}
                >
                  {href ? (
                    <Link href={href} className="flow-node-body">
                      <Card node={n} />
                    </Link>
                  ) : (
                    <div className="flow-node-body">
                      <Card node={n} />
                    </div>
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </>
  );
}

export default function FlowMap() {
  const org = useOrgFilter();
  const { can } = useSession();
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
  const labels = useMemo(
    () => (graph?.edges ?? []).map((e: FlowEdge) => (e.count === undefined ? undefined : formatNumber(e.count))),
    [graph],
  );

  const [placed, setPlaced] = useState<Placed>();
  const [layoutError, setLayoutError] = useState<unknown>();
  // Laid out again only when what is drawn changes (elements, edges, label texts, card sizes).
  const shape = graph
    ? [
        graph.nodes.map((n) => `${n.id}:${Object.keys(n.counters ?? {}).length}`).join(),
        graph.edges.map((e, i) => `${e.from}>${e.to}=${labels[i] ?? ''}`).join(),
      ].join('|')
    : '';
  const latest = useRef({ graph, labels });
  latest.current = { graph, labels };
  useEffect(() => {
    const { graph: g, labels: l } = latest.current;
    if (!g || !shape) return;
    let live = true;
    layout(g.nodes, g.edges, l).then(
      (p) => live && setPlaced(p),
      (err: unknown) => live && setLayoutError(err),
    );
    return () => {
      live = false;
    };
  }, [shape]);

  const totals = flow.data?.totals;
  const byId = new Map((graph?.nodes ?? []).map((n) => [n.id, n]));
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
      <ErrorNote error={flow.error ?? layoutError} />
      {totals ? (
        <dl className="stats" aria-label="Totals">
          <Stat label="Events in" value={formatNumber(totals.events_in)} />
          <Stat label="Findings" value={formatNumber(totals.findings)} />
          <Stat label="Quarantined" value={formatNumber(totals.quarantined)} />
          <Stat label="Delivered" value={formatNumber(totals.delivered)} />
          <Stat
            label="Dead-lettered"
            value={formatNumber(totals.dead_lettered)}
            tone={totals.dead_lettered ? 'bad' : undefined}
          />
        </dl>
      ) : null}
      {graph && graph.nodes.length > 0 ? (
        placed ? (
          <Diagram graph={graph} placed={placed} />
        ) : (
          <p role="status">Laying out…</p>
        )
      ) : null}
      {graph && graph.nodes.length === 0 ? <p className="empty">No integrations, routes or destinations yet.</p> : null}
      {graph && graph.nodes.length > 0 ? (
        <details className="panel">
          <summary>Elements as a list</summary>
          <ul>
            {graph.nodes.map((n) => {
              const href = HREF[n.kind]?.(n);
              const text = `${n.kind}: ${n.label} (${words(n.status)})`;
              return (
                <li key={n.id}>
                  {href ? <Link href={href}>{text}</Link> : text} {countersText(n)}
                </li>
              );
            })}
          </ul>
          <ul aria-label="Connections">
            {graph.edges.map((e, i) => (
              <li key={`${e.from}>${e.to}`}>
                {byId.get(e.from)?.label ?? e.from} → {byId.get(e.to)?.label ?? e.to}
                {labels[i] === undefined ? '' : `: ${labels[i]} events`}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </>
  );
}
