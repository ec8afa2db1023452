// The bus consumers' reads and writes: the active rabbitmq and nats integrations (the runner
// opens their secrets through the integrations service) and the consumers' state per process.
import { sql, type Kysely } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { activeIntegrationsOf, type IntegrationRow } from '../integrations/store.js';
import { BUS_PLATFORMS } from './config.js';

export interface ConsumerStateRow {
  integration_id: number;
  process: string;
  platform: string;
  source: string;
  state: 'consuming' | 'error' | 'stopped';
  error: string | null;
  received: number;
  accepted: number;
  rejected: number;
  released: number;
  last_rejection: string | null;
  last_message_at: Date | null;
  started_at: Date;
  updated_at: Date;
}

export function createBusStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    /** Active bus integrations of active organizations. */
    async integrations(): Promise<IntegrationRow[]> {
      return activeIntegrationsOf(db, BUS_PLATFORMS);
    },

    /** Writes this process's consumer states; rows of integrations deleted meanwhile are skipped. */
    async saveStates(rows: readonly ConsumerStateRow[]): Promise<void> {
      for (const r of rows) {
        await sql`
          insert into bus_consumers (integration_id, process, platform, source, state, error, received, accepted, rejected, released, last_rejection, last_message_at, started_at, updated_at)
          select ${r.integration_id}, ${r.process}, ${r.platform}, ${r.source}, ${r.state}, ${r.error}, ${r.received}, ${r.accepted}, ${r.rejected}, ${r.released}, ${r.last_rejection}, ${r.last_message_at}::timestamptz, ${r.started_at}::timestamptz, ${r.updated_at}::timestamptz
          where exists (select 1 from integrations where id = ${r.integration_id})
          on conflict (integration_id, process) do update set
            platform = excluded.platform, source = excluded.source, state = excluded.state, error = excluded.error,
            received = excluded.received, accepted = excluded.accepted, rejected = excluded.rejected, released = excluded.released,
            last_rejection = excluded.last_rejection, last_message_at = excluded.last_message_at,
            started_at = excluded.started_at, updated_at = excluded.updated_at`.execute(q());
      }
    },

    /** The consumers of an integration reported since `since`. */
    async states(integrationId: number, since: Date): Promise<ConsumerStateRow[]> {
      const rows = await q()
        .selectFrom('bus_consumers')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .where('updated_at', '>=', since)
        .orderBy('process')
        .execute();
      return rows.map((r) => ({
        ...r,
        state: r.state as ConsumerStateRow['state'],
        received: Number(r.received),
        accepted: Number(r.accepted),
        rejected: Number(r.rejected),
        released: Number(r.released),
      }));
    },
  };
}

export type BusStore = ReturnType<typeof createBusStore>;
