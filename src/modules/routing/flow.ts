// The routing picture: the topology (integrations → mapping definitions → routes →
// destinations, with each organization's detections as a stream of its own between the
// mappings whose events fired rules and the routes) of the caller's organizations, the same
// graph with live counters (flow), and per-route health and hourly metrics. Counters of hourly tables (route_stats,
// destination_stats) cover the window exactly; those kept per UTC day (stream_counters,
// ledger) cover every day the window touches.
//
// A global destination serves several organizations: an organization caller sees its own
// organizations' deliveries to it (ledger), never the destination's whole traffic.
import type { Clock } from '../../core/clock.js';
import type { Scope } from '../../core/scope.js';
import { FINDINGS_STREAM } from '../detections/recorder.js';
import type { RoutingService } from './service.js';
import type { RoutingStatsStore } from './stats-store.js';
import type { RouteRow, RoutingStore } from './store.js';

const HOUR_MS = 3_600_000;

type NodeKind = 'integration' | 'mapping' | 'detections' | 'route' | 'destination';

interface StreamCount {
  events_in: number;
  normalized: number;
  quarantined: number;
  quarantine_released: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** Events the edge carried in the window, where the ledger says it exactly. */
  count?: number;
}

export interface GraphNode {
  id: string;
  kind: NodeKind;
  label: string;
  status: string;
  ref_id: string | null;
  organization_id: number | null;
  counters?: Record<string, number>;
}

interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  routes: RouteRow[];
  /** Destination node ids by destination id (present ones only). */
  destinations: Map<string, { node: GraphNode; organization_id: number | null }>;
  /** Per integration node and per mapping (or detections) node: the stream rows it sums. */
  streamCounts: (StreamCount & { integration: string; mapping: string })[];
}

export function windowStart(now: Date, hours: number): Date {
  const hour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return new Date(hour - (hours - 1) * HOUR_MS);
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

function destinationStatus(enabled: boolean, breaker: string | null): string {
  if (!enabled) return 'disabled';
  if (breaker === 'open') return 'breaker_open';
  if (breaker === 'half_open') return 'breaker_half_open';
  return 'enabled';
}

export function createRoutingFlow(deps: {
  store: RoutingStore;
  stats: RoutingStatsStore;
  routes: Pick<RoutingService, 'route'>;
  clock: Clock;
}) {
  const { store, stats, clock } = deps;

  async function graph(scope: Scope, organizationId: number | undefined, sinceDay: string): Promise<Graph> {
    const [integrations, streams, routes] = await Promise.all([
      stats.integrations(scope, organizationId),
      stats.streams(scope, organizationId, sinceDay),
      store.list(scope, organizationId),
    ]);
    const platforms = [...new Set(integrations.map((i) => i.platform))];
    const referenced = [...new Set(routes.flatMap((r) => r.destination_ids))];
    const [definitions, destinations] = await Promise.all([
      stats.mappingDefinitions(scope, platforms),
      stats.destinations(scope, organizationId, referenced),
    ]);

    const nodes: GraphNode[] = [];
    const edges: Graph['edges'] = [];
    const seenEdges = new Set<string>();
    const edge = (from: string, to: string) => {
      const key = `${from}\n${to}`;
      if (seenEdges.has(key)) return;
      seenEdges.add(key);
      edges.push({ from, to });
    };

    const integrationNode = new Map<number, { id: string; organization_id: number; platform: string }>();
    for (const i of integrations) {
      const id = `integration:${i.id}`;
      integrationNode.set(i.id, { id, organization_id: i.organization_id, platform: i.platform });
      nodes.push({
        id,
        kind: 'integration',
        label: i.name,
        status: i.is_active ? 'active' : 'inactive',
        ref_id: String(i.id),
        organization_id: i.organization_id,
      });
    }

    // Mapping nodes are per organization: a built-in definition feeds each organization's own routes.
    const mappingNodes = new Map<string, GraphNode>();
    /** What each organization's enabled routes are fed by: its mapping nodes and its detections. */
    const feedsOfOrg = new Map<number, string[]>();
    const feed = (org: number, id: string) => feedsOfOrg.set(org, [...(feedsOfOrg.get(org) ?? []), id]);
    const mappingsOfIntegration = new Map<string, string[]>();
    const streamCounts: Graph['streamCounts'] = [];
    const counts = (s: StreamCount) => ({
      events_in: s.events_in,
      normalized: s.normalized,
      quarantined: s.quarantined,
      quarantine_released: s.quarantine_released,
    });
    for (const s of streams) {
      const integration = integrationNode.get(s.integration_id);
      if (!integration || s.stream === FINDINGS_STREAM) continue;
      const org = integration.organization_id;
      const def =
        definitions.find(
          (d) => d.organization_id === org && d.platform === integration.platform && d.stream === s.stream,
        ) ??
        definitions.find(
          (d) => d.organization_id === null && d.platform === integration.platform && d.stream === s.stream,
        );
      const id = def ? `mapping:${org}:${def.id}` : `mapping:${org}:unmapped:${integration.platform}:${s.stream}`;
      if (!mappingNodes.has(id)) {
        const node: GraphNode = {
          id,
          kind: 'mapping',
          label: def ? def.name : `${integration.platform}/${s.stream} (no mapping)`,
          status: def ? (def.live_version_id ? 'live' : 'no_live_version') : 'missing',
          ref_id: def?.id ?? null,
          organization_id: org,
        };
        mappingNodes.set(id, node);
        nodes.push(node);
        feed(org, id);
      }
      edge(integration.id, id);
      mappingsOfIntegration.set(integration.id, [...(mappingsOfIntegration.get(integration.id) ?? []), id]);
      streamCounts.push({ integration: integration.id, mapping: id, ...counts(s) });
    }
    // The findings rules made from an integration's events are counted under its findings
    // stream (docs/detections.md): they are the organization's detections, a stream of their
    // own fed by that integration's mappings, routed like any other; not a stream without a mapping.
    for (const s of streams) {
      const integration = integrationNode.get(s.integration_id);
      if (!integration || s.stream !== FINDINGS_STREAM) continue;
      const org = integration.organization_id;
      const id = `detections:${org}`;
      if (!nodes.some((n) => n.id === id)) {
        nodes.push({
          id,
          kind: 'detections',
          label: 'Detections',
          status: 'active',
          ref_id: null,
          organization_id: org,
        });
        feed(org, id);
      }
      for (const m of mappingsOfIntegration.get(integration.id) ?? []) edge(m, id);
      streamCounts.push({ integration: integration.id, mapping: id, ...counts(s) });
    }

    const destinationNodes: Graph['destinations'] = new Map();
    for (const d of destinations) {
      const node: GraphNode = {
        id: `destination:${d.id}`,
        kind: 'destination',
        label: d.name,
        status: destinationStatus(d.enabled, d.breaker_state),
        ref_id: d.id,
        organization_id: d.organization_id,
      };
      destinationNodes.set(d.id, { node, organization_id: d.organization_id });
    }
    for (const r of routes) {
      const id = `route:${r.id}`;
      nodes.push({
        id,
        kind: 'route',
        label: r.name,
        status: r.enabled ? 'enabled' : 'disabled',
        ref_id: r.id,
        organization_id: r.organization_id,
      });
      // Every stream reaches every enabled route; the condition decides per event.
      if (r.enabled) for (const m of feedsOfOrg.get(r.organization_id) ?? []) edge(m, id);
      for (const destId of r.destination_ids) {
        if (!destinationNodes.has(destId)) {
          const node: GraphNode = {
            id: `destination:${destId}`,
            kind: 'destination',
            label: destId,
            status: 'missing',
            ref_id: destId,
            organization_id: null,
          };
          destinationNodes.set(destId, { node, organization_id: null });
        }
        edge(id, `destination:${destId}`);
      }
    }
    for (const { node } of destinationNodes.values()) nodes.push(node);
    return { nodes, edges, routes, destinations: destinationNodes, streamCounts };
  }

  return {
    async topology(scope: Scope, organizationId?: number) {
      const g = await graph(scope, organizationId, dayOf(clock.now()));
      return { nodes: g.nodes, edges: g.edges };
    },

    async flow(scope: Scope, organizationId: number | undefined, hours: number) {
      const from = windowStart(clock.now(), hours);
      const sinceDay = dayOf(from);
      const g = await graph(scope, organizationId, sinceDay);
      const routeIds = g.routes.map((r) => r.id);
      const presentDestinations = [...g.destinations.entries()]
        .filter(([, d]) => d.node.status !== 'missing')
        .map(([id]) => id);
      const [routeTotals, destinationTotals, perDestination, ledger] = await Promise.all([
        stats.routeTotals(routeIds, from),
        stats.destinationTotals(presentDestinations, from),
        stats.ledgerByDestination(scope, organizationId, sinceDay),
        stats.ledgerTotals(scope, organizationId, sinceDay),
      ]);

      // integration and mapping nodes: events in = normalized + quarantined, where quarantined
      // is what stays in quarantine (net of reprocessing, as the ledger counts it) and
      // reprocessed the quarantined events a reprocess normalized (they are in normalized).
      const sums = new Map<string, Record<string, number>>();
      const zero = () => ({ events_in: 0, normalized: 0, quarantined: 0, reprocessed: 0 });
      const edgeCount = new Map<string, number>();
      for (const s of g.streamCounts) {
        const findings = s.mapping.startsWith('detections:');
        for (const key of findings ? [s.mapping] : [s.integration, s.mapping]) {
          const c = sums.get(key) ?? zero();
          c.events_in += s.events_in;
          c.normalized += s.normalized;
          c.quarantined += s.quarantined - s.quarantine_released;
          c.reprocessed += s.quarantine_released;
          sums.set(key, c);
        }
        if (!findings) {
          const key = `${s.integration}\n${s.mapping}`;
          edgeCount.set(key, (edgeCount.get(key) ?? 0) + s.events_in);
        }
      }
      const totals = { events_in: 0, findings: 0, quarantined: 0, reprocessed: 0 };
      const nodes = g.nodes.map((node) => {
        let counters: Record<string, number>;
        if (node.kind === 'integration' || node.kind === 'mapping') {
          counters = sums.get(node.id) ?? zero();
          if (node.kind === 'integration') {
            totals.events_in += counters.events_in!;
            totals.quarantined += counters.quarantined!;
            totals.reprocessed += counters.reprocessed!;
          }
        } else if (node.kind === 'detections') {
          counters = { findings: sums.get(node.id)?.normalized ?? 0 };
          totals.findings += counters.findings!;
        } else if (node.kind === 'route') {
          const t = routeTotals.get(node.ref_id!);
          counters = { matched: t?.matched ?? 0, sampled_out: t?.sampled_out ?? 0 };
        } else {
          const own = perDestination.get(node.ref_id!);
          counters = {
            copies: own?.copies ?? 0,
            delivered: own?.delivered ?? 0,
            dead_lettered: own?.dead_lettered ?? 0,
            dropped: own?.dropped ?? 0,
          };
          // Request failures are the destination's as a whole: shown for its owners and platform callers only.
          if (scope.global || node.organization_id !== null)
            counters.failed_requests = destinationTotals.get(node.ref_id!)?.failed_requests ?? 0;
        }
        return { ...node, counters };
      });
      const byId = new Map(nodes.map((n) => [n.id, n]));
      // An edge carries a count where the counters say it exactly: a stream's events in to its
      // mapping; what a mapping normalized (or the detections found) to each route, which is
      // offered every event of its organization that reached routing.
      const edges = g.edges.map((e): GraphEdge => {
        const from = byId.get(e.from)!;
        const to = byId.get(e.to);
        if (from.kind === 'integration') return { ...e, count: edgeCount.get(`${e.from}\n${e.to}`) ?? 0 };
        if (from.kind === 'mapping' && to?.kind === 'route') return { ...e, count: from.counters.normalized ?? 0 };
        if (from.kind === 'detections') return { ...e, count: from.counters.findings ?? 0 };
        return e;
      });
      return {
        window_hours: hours,
        from,
        nodes,
        edges,
        totals: {
          ...totals,
          filtered: ledger.filtered,
          routed: ledger.routed,
          copies: ledger.copies,
          delivered: ledger.delivered,
          dead_lettered: ledger.dead_lettered,
          dlq_reprocessed: ledger.dlq_reprocessed,
          dropped: ledger.dropped,
        },
      };
    },

    async health(scope: Scope, id: string, hours: number) {
      const route = await deps.routes.route(scope, id);
      const from = windowStart(clock.now(), hours);
      const ids = route.destination_ids;
      const [totals, found, dlq] = await Promise.all([
        stats.routeTotals([route.id], from),
        stats.destinationStates(ids),
        stats.dlqCounts(route.organization_id, ids, from),
      ]);
      const usable = new Map(
        found
          .filter((d) => d.organization_id === null || d.organization_id === route.organization_id)
          .map((d) => [d.id, d]),
      );
      const destinations = ids.map((destId) => {
        const d = usable.get(destId);
        return {
          id: destId,
          name: d?.name ?? null,
          enabled: d?.enabled ?? false,
          breaker_state: d?.breaker_state ?? 'closed',
          dlq_count: dlq.get(destId) ?? 0,
        };
      });
      const t = totals.get(route.id);
      const matched = t?.matched ?? 0;
      let status: 'disabled' | 'idle' | 'unhealthy' | 'degraded' | 'healthy';
      if (!route.enabled) status = 'disabled';
      else if (matched === 0) status = 'idle';
      else if (destinations.some((d) => d.name === null || !d.enabled || d.breaker_state === 'open'))
        status = 'unhealthy';
      else if (destinations.some((d) => d.dlq_count > 0)) status = 'degraded';
      else status = 'healthy';
      return {
        route_id: route.id,
        status,
        matched,
        sampled_out: t?.sampled_out ?? 0,
        window_hours: hours,
        destinations,
      };
    },

    async metrics(scope: Scope, id: string, hours: number) {
      const route = await deps.routes.route(scope, id);
      const from = windowStart(clock.now(), hours);
      const rows = new Map((await stats.routeSeries(route.id, from)).map((r) => [r.hour.getTime(), r]));
      const series = [];
      for (let i = 0; i < hours; i++) {
        const hour = new Date(from.getTime() + i * HOUR_MS);
        const r = rows.get(hour.getTime());
        series.push({ hour, matched: r?.matched ?? 0, sampled_out: r?.sampled_out ?? 0, copies: r?.copies ?? 0 });
      }
      return series;
    },
  };
}

export type RoutingFlow = ReturnType<typeof createRoutingFlow>;
