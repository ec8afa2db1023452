// Exporting an organization's stored events of a time range to Parquet in Amazon Security
// Lake's layout (docs/search.md, Export; event-store/parquet-export.ts), into a directory of its
// own under WEIR_EXPORT_ROOT: `org-<id>/<export id>/ext/<source>/region=.../accountId=.../
// eventDay=.../*.parquet`, for Athena, Spark or DuckDB, or to copy into a Security Lake bucket.
import path from 'node:path';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { scopeOf, targetOrganization, type OrganizationLookup } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import type { EventStore } from './event-store/port.js';
import { planQuery, type TimeRange } from './query/definition.js';

export interface ExportBody {
  organization_id?: number;
  time: TimeRange;
  region?: string;
  account_id?: string;
}

export const EXPORT_DEFAULTS = { region: 'us-east-1', accountId: '000000000000' } as const;

export function createExportService(deps: {
  events: Pick<EventStore, 'exportParquet'>;
  store: OrganizationLookup;
  clock: Clock;
  root: string;
}) {
  return {
    async start(actor: Actor, body: ExportBody) {
      const organizationId = await targetOrganization(deps.store, scopeOf(actor), body.organization_id);
      const plan = planQuery(
        { organization_id: organizationId, time: body.time },
        { now: deps.clock.now(), maxRangeDays: 3650, maxLimit: Number.MAX_SAFE_INTEGER },
      );
      const id = newId();
      const directory = path.join(deps.root, `org-${organizationId}`, id);
      const region = body.region ?? EXPORT_DEFAULTS.region;
      const accountId = body.account_id ?? EXPORT_DEFAULTS.accountId;
      const started = Date.now();
      const out = await deps.events.exportParquet({
        organizationIds: [organizationId],
        from: plan.from,
        to: plan.to,
        dir: directory,
        region,
        accountId,
      });
      setAuditTarget({
        type: 'search_export',
        id,
        organizationId,
        details: { from: plan.from.toISOString(), to: plan.to.toISOString(), rows: out.rows, files: out.files.length },
      });
      return {
        id,
        organization_id: organizationId,
        from: plan.from.toISOString(),
        to: plan.to.toISOString(),
        region,
        account_id: accountId,
        directory,
        rows: out.rows,
        files: out.files,
        took_ms: Date.now() - started,
      };
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
