// What an integration collects and how a managed-provider parent adopts new tenants:
// collection filters (validated against the platform's streams and the condition language)
// and the auto-approve policy. Also the lookups the other operation services share.
import { RE2JS } from 're2js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import type { Scope } from '../../core/scope.js';
import { normalizeCollectionFilters, validateCollectionFilters } from '../../connectors/filters.js';
import { at, readCondition } from '../../pipeline/conditions/input.js';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import type { Connector } from '../../connectors/sdk.js';
import { setAuditTarget } from '../audit/service.js';
import type { PlatformRegistry } from './platforms.js';
import type { OpsStore } from './ops-store.js';
import type { IntegrationService } from './service.js';
import type { IntegrationRow } from './store.js';
import type { TenantStore } from './tenant-store.js';

export interface OpsDeps {
  integrations: Pick<IntegrationService, 'find' | 'get' | 'collectTarget'>;
  platforms: PlatformRegistry;
  connectorFor: (platform: string) => Connector | undefined;
  ops: OpsStore;
  tenants: TenantStore;
  runtime: ConnectorRuntime;
  editions: { isEnterprise(): Promise<boolean> };
  clock: Clock;
  /** Runs fn in one transaction (joins the request's when there is one). */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The connection test of a syslog integration: its listeners (modules/syslog/listener-test.ts). */
  listenerTest?: (row: IntegrationRow) => Promise<ListenerTestResult>;
  /** The connection test of a rabbitmq or nats integration: the broker, queue or stream and consumer (modules/buses/probe.ts). */
  brokerTest?: (row: IntegrationRow) => Promise<BrokerTestResult>;
}

/** The message bus platforms, whose connection test is brokerTest. */
export const BROKER_PLATFORMS: readonly string[] = ['rabbitmq', 'nats'];

export interface BrokerTestResult {
  ok: boolean;
  detail: string;
  errorKind: string | null;
  broker: {
    platform: string;
    source: string;
    queue_messages: number | null;
    queue_consumers: number | null;
    stream_messages: number | null;
    consumer_exists: boolean | null;
    consumer_pending: number | null;
    consumer_ack_pending: number | null;
  };
}

export interface ListenerTestResult {
  ok: boolean;
  detail: string;
  listeners: { protocol: string; port: number; ok: boolean; state: string; detail: string }[];
}

export const NAME_PATTERN_MAX = 512;
export const MAX_TENANTS_LIMIT = 100_000;

export interface AutoApprovePolicy {
  enabled: boolean;
  name_pattern: string | null;
  max_tenants: number | null;
  updated_at: string | null;
}

export interface PolicyPatch {
  enabled: boolean;
  name_pattern?: string | null;
  max_tenants?: number | null;
}

export const notFound = () => errors.notFound('Integration');

export async function findIntegration(
  deps: Pick<OpsDeps, 'integrations'>,
  scope: Scope,
  id: number,
): Promise<IntegrationRow> {
  const row = await deps.integrations.find(scope, id);
  if (!row) throw notFound();
  return row;
}

/** A parent that discovers customer tenants: its platform's connector can, and config.partner is on. */
export function isManagedProvider(
  row: IntegrationRow,
  connector: Connector | undefined,
): connector is Connector & { tenants: NonNullable<Connector['tenants']> } {
  return (
    Boolean(connector?.tenants) &&
    row.parent_id === null &&
    (row.config as Record<string, unknown> | null)?.partner === true
  );
}

export function requireManagedProvider(
  row: IntegrationRow,
  connector: Connector | undefined,
): Connector & { tenants: NonNullable<Connector['tenants']> } {
  if (!isManagedProvider(row, connector)) {
    const reason = !connector?.tenants
      ? `platform ${row.platform} has no tenant discovery`
      : row.parent_id !== null
        ? 'it is a child integration'
        : 'its config.partner is not true';
    throw new AppError('integration.not_managed_provider', {
      detail: `Integration ${row.id} is not a managed-provider parent: ${reason}`,
      details: { platform: row.platform },
    });
  }
  return connector as Connector & { tenants: NonNullable<Connector['tenants']> };
}

export function policyOf(row: Pick<IntegrationRow, 'auto_approve_policy'>): AutoApprovePolicy {
  const p = (row.auto_approve_policy ?? {}) as Record<string, unknown>;
  return {
    enabled: p.enabled === true,
    name_pattern: typeof p.name_pattern === 'string' ? p.name_pattern : null,
    max_tenants: typeof p.max_tenants === 'number' ? p.max_tenants : null,
    updated_at: typeof p.updated_at === 'string' ? p.updated_at : null,
  };
}

/** The RE2 matcher of a stored pattern (unanchored: use ^ and $ to anchor); everything matches without one. */
export function nameMatcher(pattern: string | null): (name: string) => boolean {
  if (pattern === null) return () => true;
  const re = RE2JS.compile(pattern);
  return (name) => re.test(name);
}

function invalid(location: string, message: string): AppError {
  return errors.validation(`${location} ${message}`, { errors: [{ location, message }] });
}

export function createCollectionSettings(deps: OpsDeps) {
  const { ops, clock, connectorFor } = deps;

  function streamsOf(row: IntegrationRow): string[] {
    return connectorFor(row.platform)?.streams.map((s) => s.name) ?? [];
  }

  return {
    async filters(scope: Scope, id: number) {
      const row = await findIntegration(deps, scope, id);
      return { ...normalizeCollectionFilters(row.collection_filters), available_streams: streamsOf(row) };
    },

    async setFilters(scope: Scope, id: number, body: { streams?: string[] | null; exclude?: unknown[] | null }) {
      const row = await findIntegration(deps, scope, id);
      if (!connectorFor(row.platform)) {
        throw new AppError('integration.not_collectable', {
          detail: `Platform ${row.platform} has no vendor connector: its events are pushed, there is nothing to filter at collection`,
          details: { platform: row.platform },
        });
      }
      // An exclude condition may be given as text (docs/conditions.md); the tree is stored.
      const exclude = body.exclude?.map((c, i) => {
        const input = readCondition(c);
        if (!input.syntax) return input.condition;
        const { message, ...where } = input.syntax;
        throw errors.validation(`body/exclude/${i} ${message}${at(where)}`, {
          errors: [{ location: `body/exclude/${i}`, message, ...where }],
        });
      });
      if (exclude) body = { ...body, exclude };
      const problems = validateCollectionFilters(body, streamsOf(row));
      if (problems.length > 0)
        throw errors.validation(`${problems[0]!.location} ${problems[0]!.message}`, { errors: problems });
      const stored = { streams: body.streams ?? null, exclude: body.exclude ?? [] };
      if (stored.streams) stored.streams = [...new Set(stored.streams)];
      await ops.setCollectionFilters(id, stored, clock.now());
      setAuditTarget({
        organizationId: row.organization_id,
        details: { streams: stored.streams, exclude_conditions: stored.exclude.length },
      });
      return { ...stored, available_streams: streamsOf(row) };
    },

    async setPolicy(scope: Scope, id: number, patch: PolicyPatch): Promise<AutoApprovePolicy> {
      const row = await findIntegration(deps, scope, id);
      requireManagedProvider(row, connectorFor(row.platform));
      const current = policyOf(row);
      const next: AutoApprovePolicy = { ...current, enabled: patch.enabled, updated_at: clock.now().toISOString() };
      if (patch.name_pattern !== undefined) {
        if (patch.name_pattern !== null) {
          if (patch.name_pattern === '' || patch.name_pattern.length > NAME_PATTERN_MAX)
            throw invalid('body/name_pattern', `must be 1 to ${NAME_PATTERN_MAX} characters (or null: every name)`);
          try {
            RE2JS.compile(patch.name_pattern);
          } catch (e) {
            throw invalid(
              'body/name_pattern',
              `is not a valid regular expression (RE2 syntax): ${(e as Error).message}`,
            );
          }
        }
        next.name_pattern = patch.name_pattern;
      }
      if (patch.max_tenants !== undefined) next.max_tenants = patch.max_tenants;
      await ops.setAutoApprovePolicy(id, next as unknown as Record<string, unknown>, clock.now());
      setAuditTarget({
        organizationId: row.organization_id,
        details: { enabled: next.enabled, name_pattern: next.name_pattern, max_tenants: next.max_tenants },
      });
      return next;
    },
  };
}
