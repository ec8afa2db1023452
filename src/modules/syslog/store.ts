// The syslog receiver's reads and writes: the active syslog integrations (the receiver opens
// their secrets through the integrations service) and the listeners' state per process.
import { sql, type Kysely } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { activeIntegrationsOf, type IntegrationRow } from '../integrations/store.js';

export interface ListenerStateRow {
  integration_id: number;
  protocol: string;
  port: number;
  process: string;
  state: 'listening' | 'error' | 'stopped';
  error: string | null;
  received: number;
  accepted: number;
  dropped: number;
  dropped_kernel: number;
  refused: number;
  connections: number;
  /** UDP: the socket's receive buffer as the kernel set it. */
  receive_buffer_bytes: number | null;
  last_message_at: Date | null;
  started_at: Date;
  updated_at: Date;
}

export function createSyslogStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    /** Active syslog integrations of active organizations. */
    async integrations(): Promise<IntegrationRow[]> {
      return activeIntegrationsOf(db, ['syslog']);
    },

    /** Writes this process's listener states; rows of integrations deleted meanwhile are skipped. */
    async saveStates(rows: readonly ListenerStateRow[]): Promise<void> {
      for (const r of rows) {
        await sql`
          insert into syslog_listeners (integration_id, protocol, port, process, state, error, received, accepted, dropped, dropped_kernel, refused, connections, receive_buffer_bytes, last_message_at, started_at, updated_at)
          select ${r.integration_id}, ${r.protocol}, ${r.port}, ${r.process}, ${r.state}, ${r.error}, ${r.received}, ${r.accepted}, ${r.dropped}, ${r.dropped_kernel}, ${r.refused}, ${r.connections}, ${r.receive_buffer_bytes}, ${r.last_message_at}::timestamptz, ${r.started_at}::timestamptz, ${r.updated_at}::timestamptz
          where exists (select 1 from integrations where id = ${r.integration_id})
          on conflict (integration_id, protocol, port, process) do update set
            state = excluded.state, error = excluded.error, received = excluded.received, accepted = excluded.accepted,
            dropped = excluded.dropped, dropped_kernel = excluded.dropped_kernel, refused = excluded.refused, connections = excluded.connections,
            receive_buffer_bytes = excluded.receive_buffer_bytes, last_message_at = excluded.last_message_at,
            started_at = excluded.started_at, updated_at = excluded.updated_at`.execute(q());
      }
    },

    /** The listeners of an integration reported since `since`, newest first. */
    async states(integrationId: number, since: Date): Promise<ListenerStateRow[]> {
      const rows = await q()
        .selectFrom('syslog_listeners')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .where('updated_at', '>=', since)
        .orderBy('protocol')
        .orderBy('port')
        .orderBy('process')
        .execute();
      return rows.map((r) => ({
        ...r,
        state: r.state as ListenerStateRow['state'],
        received: Number(r.received),
        accepted: Number(r.accepted),
        dropped: Number(r.dropped),
        dropped_kernel: Number(r.dropped_kernel),
        refused: Number(r.refused),
      }));
    },
  };
}

export type SyslogStore = ReturnType<typeof createSyslogStore>;
