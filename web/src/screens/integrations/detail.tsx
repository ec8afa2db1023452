// One integration: its configuration, test connection, collector state per stream (cursor,
// watermark, lag, errors, reset and trigger), gaps, backfill, and the ingestion token.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'wouter';
import { api, call } from '../../api/client';
import { useSession } from '../../session';
import { formatSeconds } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Json, Notice, PageHeader, Time } from '../../ui/kit';
import { Backfill } from './backfill';
import { BusConsumers } from './bus-consumers';
import { HowToSend } from './how-to-send';
import { SyslogListeners } from './syslog-listener';

/** Platforms whose events Weir consumes from a message bus (no push, no ingestion token). */
const BUS_PLATFORMS = ['rabbitmq', 'nats'];

export default function IntegrationDetail() {
  const params = useParams<{ id: string }>();
  const id = Number(params.id);
  const { can } = useSession();
  const client = useQueryClient();
  const integration = useQuery({
    queryKey: ['integration', id],
    queryFn: () => call(api.GET('/api/integrations/{integration_id}', { params: { path: { integration_id: id } } })),
  });
  const state = useQuery({
    queryKey: ['collector-state', id],
    queryFn: () => call(api.GET('/api/collectors/state', { params: { query: { integration_id: id } } })),
    refetchInterval: 10_000,
  });
  const summary = useQuery({
    queryKey: ['collectors-summary'],
    queryFn: () => call(api.GET('/api/collectors/summary')),
  });
  const platforms = useQuery({
    queryKey: ['providers'],
    queryFn: () => call(api.GET('/api/providers/platforms')),
    staleTime: 300_000,
  });
  const [token, setToken] = useState<string>();

  const test = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/integrations/{integration_id}/test-connection', { params: { path: { integration_id: id } } }),
      ),
  });
  const issueToken = useMutation({
    mutationFn: () =>
      call(api.POST('/api/ingest/integrations/{integration_id}/token', { params: { path: { integration_id: id } } })),
    onSuccess: (t) => setToken(t.token),
  });
  const reset = useMutation({
    mutationFn: (stream: string) =>
      call(
        api.DELETE('/api/collectors/state/{integration_id}/{stream}/cursor', {
          params: { path: { integration_id: id, stream } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['collector-state', id] }),
  });
  const trigger = useMutation({
    mutationFn: (stream: string) =>
      call(
        api.POST('/api/collectors/state/{integration_id}/{stream}/trigger', {
          params: { path: { integration_id: id, stream } },
        }),
      ),
  });

  const i = integration.data;
  const provider = platforms.data?.find((p) => p.platform === i?.platform);
  const streams = provider?.streams.map((s) => s.name) ?? [];
  const gaps = summary.data?.gaps.filter((g) => g.integration_id === id) ?? [];

  return (
    <>
      <PageHeader title={i ? i.name : 'Integration'}>
        {can('integration.write') ? (
          <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
            Test connection
          </button>
        ) : null}
        {can('user.manage') && !(i && BUS_PLATFORMS.includes(i.platform)) ? (
          <button type="button" onClick={() => issueToken.mutate()} disabled={issueToken.isPending}>
            New ingestion token
          </button>
        ) : null}
      </PageHeader>
      <ErrorNote error={integration.error ?? test.error ?? issueToken.error ?? reset.error ?? trigger.error} />
      {test.data ? (
        test.data.ok ? (
          <Notice>Connection succeeded ({test.data.latency_ms} ms).</Notice>
        ) : (
          <p className="error" role="alert">
            Connection failed: {test.data.detail}
          </p>
        )
      ) : null}
      {token ? (
        <section className="panel" aria-labelledby="token-once">
          <h2 id="token-once">Ingestion token</h2>
          <p>Shown once: copy it now. Weir keeps only a keyed hash of it.</p>
          <p className="secret" data-testid="ingestion-token">
            {token}
          </p>
          <button type="button" onClick={() => void navigator.clipboard?.writeText(token)}>
            Copy
          </button>
        </section>
      ) : null}
      {trigger.data ? <Notice>Collection triggered ({trigger.data.status}).</Notice> : null}
      {i ? (
        <div className="grid">
          <section className="panel" aria-labelledby="facts">
            <h2 id="facts">Integration</h2>
            <p>
              {i.platform} · organization {i.organization_id} · <Badge value={i.is_active ? 'active' : 'inactive'} /> ·
              created <Time value={i.created_at} />
            </p>
            <Json label="Configuration (secrets shown as configured)" value={i.config} />
          </section>
        </div>
      ) : null}
      {i && i.platform !== 'syslog' && !BUS_PLATFORMS.includes(i.platform) ? (
        <HowToSend integration={i} token={token} />
      ) : null}
      {i && i.platform === 'syslog' ? <SyslogListeners integrationId={id} config={i.config} test={test.data} /> : null}
      {i && BUS_PLATFORMS.includes(i.platform) ? (
        <BusConsumers integrationId={id} platform={i.platform} test={test.data} />
      ) : null}
      <section className="panel" aria-labelledby="state">
        <h2 id="state">Collector state</h2>
        <DataTable
          caption="Collector state per stream"
          rows={state.data ?? []}
          rowKey={(r) => r.stream}
          empty="No collection yet: a push source, or no cycle has run."
          columns={[
            { header: 'Stream', cell: (r) => r.stream },
            { header: 'Watermark', cell: (r) => <Time value={r.watermark_at} /> },
            { header: 'Lag', cell: (r) => formatSeconds(r.lag_seconds) },
            { header: 'Last success', cell: (r) => <Time value={r.last_success_at} /> },
            { header: 'Failures', className: 'num', cell: (r) => r.consecutive_failures },
            { header: 'Capped', cell: (r) => <Badge value={r.last_run_capped} /> },
            { header: 'Last error', cell: (r) => r.last_error ?? '' },
            {
              header: 'Actions',
              cell: (r) => (
                <span className="row">
                  <button type="button" onClick={() => trigger.mutate(r.stream)}>
                    Collect now
                  </button>
                  {can('integration.reset') ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() =>
                        window.confirm(`Reset the cursor of ${r.stream}? Its default window is collected again.`) &&
                        reset.mutate(r.stream)
                      }
                    >
                      Reset cursor
                    </button>
                  ) : null}
                </span>
              ),
            },
          ]}
        />
        {gaps.length > 0 ? (
          <>
            <h3>Gaps</h3>
            <ul>
              {gaps.map((g) => (
                <li key={`${g.stream}${g.from}`}>
                  {g.stream}: <Time value={g.from} /> – <Time value={g.to} /> (backfill it below)
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </section>
      {i ? <Backfill integrationId={id} streams={streams} /> : null}
    </>
  );
}
