// A rabbitmq or nats integration's consumers, as the worker processes report them (GET
// /api/ingest/integrations/{id}, its `bus.consumers`): state and error, counters, the last
// rejection reason and the last message time; refreshed every few seconds. Beside it, what
// the last connection test read from the broker (queue, or stream and durable consumer).
import type { Ok } from '../../api/client';
import { useSession } from '../../session';
import { DataTable, ErrorNote, Stat, Time } from '../../ui/kit';
import { stateColumn, useProcessStatus } from './process-state';

type Consumer = NonNullable<Ok<'ingest.status'>['bus']>['consumers'][number];
type TestResult = Ok<'integrations.test_connection'>;
type Broker = NonNullable<TestResult['broker']>;

const TONE: Record<string, string> = { consuming: 'ok', error: 'bad', stopped: 'muted' };

/** The figures the broker answered with, as label/value pairs (those it has). */
function brokerFacts(b: Broker): [string, string][] {
  const rows: [string, number | boolean | null][] = [
    ['Messages ready in the queue', b.queue_messages],
    ['Consumers on the queue', b.queue_consumers],
    ['Messages in the stream', b.stream_messages],
    ['Durable consumer exists', b.consumer_exists],
    ['Pending on the consumer', b.consumer_pending],
    ['Delivered, not yet acknowledged', b.consumer_ack_pending],
  ];
  return rows
    .filter((r): r is [string, number | boolean] => r[1] !== null)
    .map(([label, v]) => [label, typeof v === 'boolean' ? (v ? 'yes' : 'no (Weir creates it)') : String(v)]);
}

export function BusConsumers({
  integrationId,
  platform,
  test,
}: {
  integrationId: number;
  platform: string;
  test?: TestResult;
}) {
  const { can } = useSession();
  const status = useProcessStatus(integrationId);
  const consumers: Consumer[] = status.data?.bus?.consumers ?? [];
  const what = platform === 'nats' ? 'JetStream durable consumer' : 'RabbitMQ queue';

  return (
    <section className="panel" aria-labelledby="bus-consumers">
      <h2 id="bus-consumers">Bus consumers</h2>
      <p>
        Weir&apos;s worker processes (the worker role, or <code>weir all</code>) consume this {what}; publish events to
        it (publishers need no Weir credential). A message is acknowledged only once its events are accepted.
      </p>
      <ErrorNote error={status.error} />
      {can('user.manage') ? (
        <DataTable
          caption="Bus consumers: state and counters per worker process"
          rows={consumers}
          rowKey={(r) => r.process}
          empty="No worker process has reported a consumer in the last 5 minutes: is the integration active, and a process with the worker role (or weir all) running?"
          columns={[
            { header: 'Source', cell: (r) => r.source },
            stateColumn(TONE),
            { header: 'Received', className: 'num', cell: (r) => r.received },
            { header: 'Accepted', className: 'num', cell: (r) => r.accepted },
            { header: 'Rejected', className: 'num', cell: (r) => r.rejected },
            { header: 'Released', className: 'num', cell: (r) => r.released },
            { header: 'Last rejection', cell: (r) => r.last_rejection ?? '' },
            { header: 'Last message', cell: (r) => <Time value={r.last_message_at} /> },
            { header: 'Process', cell: (r) => r.process },
          ]}
        />
      ) : (
        <p>Consumer state needs the user.manage permission.</p>
      )}
      {test?.broker ? (
        <>
          <h3>Last connection test</h3>
          <p>
            <span className={`badge ${test.ok ? 'ok' : 'bad'}`}>{test.ok ? 'ok' : (test.error_kind ?? 'failed')}</span>{' '}
            {test.detail}
          </p>
          {brokerFacts(test.broker).length > 0 ? (
            <dl className="stats" aria-label="What the broker reported">
              {brokerFacts(test.broker).map(([label, value]) => (
                <Stat key={label} label={label} value={value} />
              ))}
            </dl>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
