// Dashboard: events in and out and the ledger's terms over the last 24 hours, destinations by
// health, integrations by collection state, open drift, quarantine and detections.
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { TimeChart } from '../../ui/chart';
import { formatDate, formatNumber } from '../../ui/format';
import { ErrorNote, PageHeader, Stat, Time } from '../../ui/kit';
import { Onboarding } from './onboarding';

const TERMS = ['events_in', 'delivered', 'filtered', 'quarantined', 'dead_lettered', 'dlq_reprocessed'] as const;
const LABEL: Record<(typeof TERMS)[number], string> = {
  events_in: 'Events in',
  delivered: 'Delivered',
  filtered: 'Filtered',
  quarantined: 'Quarantined',
  dead_lettered: 'Dead-lettered',
  dlq_reprocessed: 'DLQ reprocessed',
};
// Without it, Delivered above Events in reads as a fault.
const DELIVERED_NOTE =
  'Delivered counts one per destination: an event routed to two destinations is delivered twice, so Delivered can exceed Events in.';
const COLORS = ['#2f7ed8', '#2e9e52', '#8a8f98', '#d98c00', '#d43c3c', '#8e5cc9'];

export default function Dashboard() {
  const org = useOrgFilter();
  const { can } = useSession();
  const summary = useQuery({
    queryKey: ['dashboard', org],
    queryFn: () => call(api.GET('/api/dashboard/summary', { params: { query: org } })),
    refetchInterval: 10_000,
  });
  const s = summary.data;
  const hourly = s?.traffic.hourly;
  const chart = useMemo(
    () =>
      hourly
        ? {
            times: hourly.map((p) => p.hour),
            series: TERMS.map((t, i) => ({
              label: LABEL[t],
              color: COLORS[i] ?? '#888',
              values: hourly.map((p) => p[t]),
            })),
          }
        : undefined,
    [hourly],
  );

  return (
    <>
      <PageHeader title="Dashboard">
        {s ? <span className="hint">Updated {formatDate(s.generated_at)}</span> : null}
      </PageHeader>
      <ErrorNote error={summary.error} />
      {s ? (
        <>
          <Onboarding summary={s} />
          <section className="panel" aria-labelledby="traffic">
            <h2 id="traffic">Last hour</h2>
            <dl className="stats" data-testid="last-hour">
              {TERMS.map((t) => (
                <Stat
                  key={t}
                  label={LABEL[t]}
                  value={formatNumber(s.traffic.last_hour[t])}
                  tone={t === 'dead_lettered' && s.traffic.last_hour[t] > 0 ? 'bad' : undefined}
                />
              ))}
              <Stat label="Pending now" value={formatNumber(s.traffic.pending.total)} />
            </dl>
            <p className="hint" data-testid="delivered-note">
              {DELIVERED_NOTE}
            </p>
          </section>
          <section className="panel" aria-labelledby="over-time">
            <h2 id="over-time">The ledger over the last 24 hours</h2>
            {chart ? <TimeChart title="Ledger terms per hour" times={chart.times} series={chart.series} /> : null}
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Ledger terms per window. {DELIVERED_NOTE}</caption>
                <thead>
                  <tr>
                    <th scope="col">Window</th>
                    {TERMS.map((t) => (
                      <th key={t} scope="col" className="num">
                        {LABEL[t]}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {(
                    [
                      ['Last hour', s.traffic.last_hour],
                      ['Last 24 hours', s.traffic.last_24_hours],
                      [`Today (UTC ${s.traffic.today.day})`, s.traffic.today],
                      [`Yesterday (UTC ${s.traffic.yesterday.day})`, s.traffic.yesterday],
                    ] as const
                  ).map(([label, w]) => (
                    <tr key={label}>
                      <th scope="row">{label}</th>
                      {TERMS.map((t) => (
                        <td key={t} className="num">
                          {formatNumber(w[t])}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <div className="grid">
            <section className="panel" aria-labelledby="dest-health">
              <h2 id="dest-health">Destinations by health</h2>
              <dl className="stats">
                <Stat label="Healthy" value={s.destinations.by_health.healthy} />
                <Stat
                  label="Degraded"
                  value={s.destinations.by_health.degraded}
                  tone={s.destinations.by_health.degraded ? 'warn' : undefined}
                />
                <Stat
                  label="Unhealthy"
                  value={s.destinations.by_health.unhealthy}
                  tone={s.destinations.by_health.unhealthy ? 'bad' : undefined}
                />
                <Stat label="Idle" value={s.destinations.by_health.idle} />
              </dl>
              {can('destination.read') ? <Link href="/destinations">All destinations</Link> : null}
            </section>
            <section className="panel" aria-labelledby="int-state">
              <h2 id="int-state">Integrations by collection state</h2>
              <dl className="stats">
                {Object.entries(s.integrations.by_collection_state).map(([state, count]) => (
                  <Stat
                    key={state}
                    label={state.replace(/_/g, ' ')}
                    value={count}
                    tone={state === 'failing' && count ? 'bad' : undefined}
                  />
                ))}
              </dl>
              {can('integration.read') ? <Link href="/integrations">All integrations</Link> : null}
            </section>
            <section className="panel" aria-labelledby="open-work">
              <h2 id="open-work">Open work</h2>
              <dl className="stats">
                <Stat label="New drift fields" value={s.drift.open} tone={s.drift.open ? 'warn' : undefined} />
                <Stat
                  label="Quarantined events"
                  value={s.quarantine.open}
                  tone={s.quarantine.open ? 'bad' : undefined}
                />
                <Stat label="Open detections" value={s.detections.available ? s.detections.open : 'n/a'} />
              </dl>
              <p>
                {can('drift.read') ? <Link href="/drift">Drift</Link> : null}{' '}
                {can('quarantine.read') ? <Link href="/quarantine">Quarantine</Link> : null}
              </p>
              <p className="hint">
                License: {s.license.edition} ({s.license.status.replace(/_/g, ' ')})
                {s.license.expires_at ? (
                  <>
                    , expires <Time value={s.license.expires_at} />
                  </>
                ) : null}
              </p>
            </section>
          </div>
        </>
      ) : null}
    </>
  );
}
