// One destination: health, breaker and lag, delivery over time, the dead-letter queue with
// reprocess, the live masked tap, test, and credential rotate and revoke.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { useParams } from 'wouter';
import { api, call } from '../../api/client';
import { useSession } from '../../session';
import { TimeChart } from '../../ui/chart';
import { formatNumber, formatSeconds } from '../../ui/format';
import { Badge, DataTable, Dialog, ErrorNote, Notice, PageHeader, Pager, Stat, Time } from '../../ui/kit';
import { SchemaForm, type JsonSchema } from '../../ui/schema-form';
import { Tap } from './tap';

const DLQ_LIMIT = 20;

export default function DestinationDetail() {
  const { id } = useParams<{ id: string }>();
  const { can } = useSession();
  const admin = can('user.manage');
  const client = useQueryClient();
  const path = { params: { path: { destination_id: id } } };
  const destination = useQuery({
    queryKey: ['destination', id],
    queryFn: () => call(api.GET('/api/collectors/destinations/{destination_id}', path)),
  });
  const health = useQuery({
    queryKey: ['destination-health', id],
    queryFn: () => call(api.GET('/api/collectors/destinations/{destination_id}/health', path)),
    refetchInterval: 5_000,
  });
  const metrics = useQuery({
    queryKey: ['destination-metrics', id],
    queryFn: () =>
      call(
        api.GET('/api/collectors/destinations/{destination_id}/metrics', {
          params: { path: { destination_id: id }, query: { hours: 24 } },
        }),
      ),
  });
  const [dlqOffset, setDlqOffset] = useState(0);
  const dlq = useQuery({
    queryKey: ['dlq', id, dlqOffset],
    queryFn: () =>
      call(
        api.GET('/api/collectors/destinations/{destination_id}/dlq', {
          params: { path: { destination_id: id }, query: { limit: DLQ_LIMIT, offset: dlqOffset } },
        }),
      ),
  });
  const types = useQuery({
    queryKey: ['destination-types'],
    queryFn: () => call(api.GET('/api/collectors/destinations/destination-types')),
    staleTime: 300_000,
    enabled: admin,
  });
  const [rotating, setRotating] = useState(false);

  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['destination', id] });
    void client.invalidateQueries({ queryKey: ['destination-health', id] });
    void client.invalidateQueries({ queryKey: ['dlq', id] });
  };
  const test = useMutation({
    mutationFn: () => call(api.POST('/api/collectors/destinations/{destination_id}/test', path)),
  });
  const revoke = useMutation({
    mutationFn: () => call(api.POST('/api/collectors/destinations/{destination_id}/credential/revoke', path)),
    onSuccess: refresh,
  });
  const reprocess = useMutation({
    mutationFn: () =>
      call(api.POST('/api/collectors/destinations/{destination_id}/dlq/reprocess', { ...path, body: { all: true } })),
    onSuccess: refresh,
  });

  const d = destination.data;
  const h = health.data;
  const series = metrics.data?.series;
  const chart = useMemo(
    () =>
      series
        ? {
            times: series.map((p) => p.hour),
            series: [
              { label: 'Delivered', color: '#2e9e52', values: series.map((p) => p.delivered) },
              { label: 'Dead-lettered', color: '#d43c3c', values: series.map((p) => p.dead_lettered) },
              { label: 'Failed requests', color: '#d98c00', values: series.map((p) => p.failed_requests) },
            ],
          }
        : undefined,
    [series],
  );
  const credentialSchema = types.data?.find((t) => t.type === d?.type)?.credential_schema as
    JsonSchema | null | undefined;

  return (
    <>
      <PageHeader title={d ? d.name : 'Destination'}>
        {admin ? (
          <>
            <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
              Test
            </button>
            {credentialSchema ? (
              <button type="button" onClick={() => setRotating(true)}>
                Rotate credential
              </button>
            ) : null}
            {d?.has_credential ? (
              <button
                type="button"
                className="danger"
                onClick={() =>
                  window.confirm('Revoke the credential? Delivery stops until a new one is set.') && revoke.mutate()
                }
              >
                Revoke credential
              </button>
            ) : null}
          </>
        ) : null}
      </PageHeader>
      <ErrorNote error={destination.error ?? health.error ?? test.error ?? revoke.error} />
      {test.data ? (
        test.data.ok ? (
          <Notice>Test succeeded ({test.data.latency_ms} ms).</Notice>
        ) : (
          <p className="error" role="alert">
            Test failed: {test.data.detail}
          </p>
        )
      ) : null}
      {h ? (
        <section className="panel" aria-labelledby="health">
          <h2 id="health">Health</h2>
          <dl className="stats">
            <Stat label="Status" value={<Badge value={h.status} />} />
            <Stat label="Breaker" value={<Badge value={h.breaker_state} />} />
            <Stat label="Lag" value={formatSeconds(h.lag_seconds)} />
            <Stat label="Pending" value={formatNumber(h.pending_events)} />
            <Stat label="DLQ" value={formatNumber(h.dlq_count)} tone={h.dlq_count ? 'bad' : undefined} />
            <Stat label="Failures in a row" value={h.consecutive_failures} />
          </dl>
          <p>
            {d?.type} · {d?.enabled ? 'enabled' : `disabled${d?.disabled_reason ? `: ${d.disabled_reason}` : ''}`} ·
            credential {d?.has_credential ? 'set' : 'none'} · last success <Time value={h.last_success_at} />
            {h.last_error ? <> · last error: {h.last_error}</> : null}
          </p>
        </section>
      ) : null}
      {chart ? (
        <section className="panel" aria-labelledby="over-time">
          <h2 id="over-time">Last 24 hours</h2>
          <TimeChart title="Deliveries per hour" times={chart.times} series={chart.series} />
          {metrics.data?.totals ? (
            <p>
              Delivered {formatNumber(metrics.data.totals.delivered)} · dead-lettered{' '}
              {formatNumber(metrics.data.totals.dead_lettered)} · mean latency {metrics.data.totals.latency_ms_avg} ms
            </p>
          ) : null}
        </section>
      ) : null}
      <section className="panel" aria-labelledby="dlq">
        <h2 id="dlq">Dead-letter queue</h2>
        {admin && (dlq.data?.total ?? 0) > 0 ? (
          <button type="button" onClick={() => reprocess.mutate()} disabled={reprocess.isPending}>
            Reprocess all dead letters
          </button>
        ) : null}
        {reprocess.isPending ? <progress aria-label="Reprocessing dead letters" /> : null}
        {reprocess.data ? (
          <Notice>
            Sent {formatNumber(reprocess.data.reprocessed)} back to delivery; {formatNumber(reprocess.data.remaining)}{' '}
            remain.
          </Notice>
        ) : null}
        <ErrorNote error={dlq.error ?? reprocess.error} />
        <DataTable
          caption="Dead letters"
          rows={dlq.data?.items ?? []}
          rowKey={(x) => x.id}
          empty="No dead letters."
          columns={[
            { header: 'When', cell: (x) => <Time value={x.created_at} /> },
            { header: 'Kind', cell: (x) => <Badge value={x.error_kind} /> },
            { header: 'Reason', cell: (x) => x.reason },
            { header: 'Attempts', className: 'num', cell: (x) => x.attempts },
            { header: 'Stream', cell: (x) => `${x.integration_id} / ${x.stream}` },
          ]}
        />
        {dlq.data ? (
          <Pager
            label="Dead letters"
            total={dlq.data.total}
            limit={DLQ_LIMIT}
            offset={dlqOffset}
            onOffset={setDlqOffset}
          />
        ) : null}
      </section>
      {admin ? <Tap destinationId={id} /> : null}
      {credentialSchema ? (
        <Dialog title="Rotate credential" open={rotating} onClose={() => setRotating(false)}>
          <Rotate destinationId={id} schema={credentialSchema} onDone={() => (setRotating(false), refresh())} />
        </Dialog>
      ) : null}
    </>
  );
}

function Rotate({ destinationId, schema, onDone }: { destinationId: string; schema: JsonSchema; onDone: () => void }) {
  const [credential, setCredential] = useState<Record<string, unknown>>({});
  const rotate = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/collectors/destinations/{destination_id}/credential/rotate', {
          params: { path: { destination_id: destinationId } },
          body: { credential: credential as Record<string, string> },
        }),
      ),
    onSuccess: onDone,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    rotate.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Rotate credential">
      <p>The new credential replaces the old one at once; it is never shown again.</p>
      <SchemaForm schema={schema} value={credential} onChange={setCredential} />
      <ErrorNote error={rotate.error} />
      <button type="submit" className="primary" disabled={rotate.isPending}>
        Rotate
      </button>
    </form>
  );
}
