// A syslog integration's listeners, as the receiver processes report them (GET
// /api/ingest/integrations/{id}, its `syslog.listeners`): state and error, protocol and port,
// counters and the last message time; refreshed every few seconds. Beside it, the last
// connection test's answer per listener (bound, accepting connections).
import type { Ok } from '../../api/client';
import { useSession } from '../../session';
import { DataTable, ErrorNote, Time } from '../../ui/kit';
import { stateColumn, useProcessStatus } from './process-state';

type Listener = NonNullable<Ok<'ingest.status'>['syslog']>['listeners'][number];
type TestResult = Ok<'integrations.test_connection'>;

const TONE: Record<string, string> = { listening: 'ok', error: 'bad', stopped: 'muted', missing: 'warn' };

/** What the integration's config declares, for listeners no process has reported yet. */
function declared(config: Record<string, unknown>): { protocol: string; port: number }[] {
  const listeners = config.listeners;
  return Array.isArray(listeners)
    ? listeners.filter(
        (l): l is { protocol: string; port: number } =>
          typeof l === 'object' && l !== null && typeof (l as { port?: unknown }).port === 'number',
      )
    : [];
}

export function SyslogListeners({
  integrationId,
  config,
  test,
}: {
  integrationId: number;
  config: Record<string, unknown>;
  test?: TestResult;
}) {
  const { can } = useSession();
  const status = useProcessStatus(integrationId);
  const reported: Listener[] = status.data?.syslog?.listeners ?? [];
  const missing = declared(config).filter((d) => !reported.some((r) => r.protocol === d.protocol && r.port === d.port));

  return (
    <section className="panel" aria-labelledby="syslog-listeners">
      <h2 id="syslog-listeners">Syslog listeners</h2>
      <p>
        Senders send to these ports of the Weir host (the syslog role, or <code>weir all</code>). Ports must be allowed
        by <code>WEIR_SYSLOG_PORTS</code>.
      </p>
      <ErrorNote error={status.error} />
      {can('user.manage') ? (
        <DataTable
          caption="Syslog listeners: state and counters per process"
          rows={reported}
          rowKey={(r) => `${r.protocol}:${r.port}:${r.process}`}
          empty="No receiver process has reported these listeners in the last 5 minutes: is a process with the syslog role (or weir all) running?"
          columns={[
            { header: 'Listener', cell: (r) => `${r.protocol}/${r.port}` },
            stateColumn(TONE),
            { header: 'Received', className: 'num', cell: (r) => r.received },
            { header: 'Accepted', className: 'num', cell: (r) => r.accepted },
            { header: 'Dropped', className: 'num', cell: (r) => r.dropped + r.dropped_kernel },
            { header: 'Refused', className: 'num', cell: (r) => r.refused },
            { header: 'Connections', className: 'num', cell: (r) => (r.protocol === 'udp' ? '—' : r.connections) },
            { header: 'Last message', cell: (r) => <Time value={r.last_message_at} /> },
            { header: 'Process', cell: (r) => r.process },
          ]}
        />
      ) : (
        <p>Listener state needs the user.manage permission.</p>
      )}
      {status.data && missing.length > 0 && reported.length > 0 ? (
        <p role="status">Not reported yet: {missing.map((m) => `${m.protocol}/${m.port}`).join(', ')}.</p>
      ) : null}
      {test?.listeners ? (
        <>
          <h3>Last connection test</h3>
          <ul aria-label="Connection test per listener">
            {test.listeners.map((l) => (
              <li key={`${l.protocol}:${l.port}`}>
                <span className={`badge ${l.ok ? 'ok' : 'bad'}`}>{l.ok ? 'ok' : 'failed'}</span> {l.detail}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
