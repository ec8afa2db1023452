// The first-run checklist the dashboard keeps until every step is done: an organization, an
// integration, where and how to send to it, a destination beyond the built-in event store, a
// route to it, and the first events. Each step reads the real state through the API and links
// to the screen that does it. Done, or dismissed, it is not shown again in this browser.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { Link } from 'wouter';
import { api, call, type Ok } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { SendCommand, useSampleStreams } from '../integrations/how-to-send';

const KEY = 'weir.onboarding';
/** The destination every organization starts with: the checklist asks for one that forwards events elsewhere. */
const BUILT_IN = 'event_store';

type Summary = Ok<'dashboard.summary'>;

interface Step {
  id: string;
  title: string;
  done: boolean;
  detail: ReactNode;
}

function useChecklistState(summary: Summary) {
  const org = useOrgFilter();
  const { can } = useSession();
  const integrations = useQuery({
    queryKey: ['integrations', org, 'onboarding'],
    queryFn: () => call(api.GET('/api/integrations/', { params: { query: { ...org, limit: 1, offset: 0 } } })),
  });
  const first = integrations.data?.items[0];
  const ingest = useQuery({
    queryKey: ['ingest-status', first?.id],
    queryFn: () =>
      call(
        api.GET('/api/ingest/integrations/{integration_id}', {
          params: { path: { integration_id: first?.id ?? 0 } },
        }),
      ),
    enabled: first !== undefined && can('user.manage'),
    refetchInterval: 10_000,
  });
  const destinations = useQuery({
    queryKey: ['destinations', org, 'onboarding'],
    queryFn: () => call(api.GET('/api/collectors/destinations', { params: { query: { ...org, limit: 200 } } })),
    enabled: can('destination.read'),
  });
  const routes = useQuery({
    queryKey: ['routes', org, 'onboarding'],
    queryFn: () => call(api.GET('/api/collectors/routes', { params: { query: org } })),
    enabled: can('route.read'),
  });
  const forwarding = new Set((destinations.data?.items ?? []).filter((d) => d.type !== BUILT_IN).map((d) => d.id));
  const t = summary.traffic;
  return {
    loaded: integrations.isSuccess && (destinations.isSuccess || !can('destination.read')),
    first,
    organization: summary.organizations > 0,
    integration: summary.integrations.total > 0,
    sending: Boolean(ingest.data?.token.configured) || (ingest.data?.stats.events_in ?? 0) > 0,
    destination: forwarding.size > 0,
    route: (routes.data ?? []).some((r) => r.enabled && r.destination_ids.some((id) => forwarding.has(id))),
    events:
      t.last_24_hours.events_in + t.today.events_in + t.yesterday.events_in > 0 ||
      (ingest.data?.stats.events_in ?? 0) > 0,
  };
}

export function Onboarding({ summary }: { summary: Summary }) {
  const { can } = useSession();
  const [hidden, setHidden] = useState(() => localStorage.getItem(KEY) !== null);
  const state = useChecklistState(summary);
  const samples = useSampleStreams(state.first?.id);
  const stream = samples.data?.streams[0];
  const first = state.first;
  const steps: Step[] = [
    {
      id: 'organization',
      title: 'Create an organization',
      done: state.organization,
      detail: (
        <>
          Every integration, destination and route belongs to one.{' '}
          <Link href="/admin/organizations">Organizations</Link>
        </>
      ),
    },
    {
      id: 'integration',
      title: 'Add an integration',
      done: state.integration,
      detail: (
        <>
          A source of events: a vendor Weir collects from, or a sender that pushes (custom, syslog).{' '}
          <Link href="/integrations">Integrations</Link>
        </>
      ),
    },
    {
      id: 'send',
      title: 'Send events to it',
      done: state.sending,
      detail: first ? (
        <>
          <p>
            Make its ingestion token on <Link href={`/integrations/${first.id}`}>{first.name}</Link>, then push, or send
            the platform&apos;s sample events from there.
          </p>
          {samples.data ? <SendCommand stream={stream} label={`Example command for ${first.name}`} /> : null}
        </>
      ) : (
        'Once there is an integration: its ingest URL, a command to push, and sample events to send.'
      ),
    },
    {
      id: 'destination',
      title: 'Add a destination',
      done: state.destination,
      detail: (
        <>
          Where events go besides Weir&apos;s own event store, which every organization starts with (a SIEM, a data
          lake, a file). <Link href="/destinations">Destinations</Link>
        </>
      ),
    },
    {
      id: 'route',
      title: 'Route events to it',
      done: state.route,
      detail: (
        <>
          A route picks the events a destination receives. <Link href="/routes">Routes</Link>
        </>
      ),
    },
    {
      id: 'events',
      title: 'See the first events',
      done: state.events,
      detail: (
        <>
          Counted on this dashboard once accepted;{' '}
          {first ? (
            <>
              try <Link href={`/integrations/${first.id}`}>Send sample events</Link>, then{' '}
            </>
          ) : null}
          find them in <Link href="/search">Search</Link>.
        </>
      ),
    },
  ];
  const complete = state.loaded && steps.every((s) => s.done);
  useEffect(() => {
    if (complete) {
      localStorage.setItem(KEY, 'done');
      setHidden(true);
    }
  }, [complete]);

  if (hidden || complete || !state.loaded || !can('integration.write')) return null;
  const left = steps.filter((s) => !s.done).length;
  return (
    <section className="panel" aria-labelledby="onboarding" data-testid="onboarding">
      <h2 id="onboarding">Get started</h2>
      <p className="hint">
        {left} of {steps.length} steps left. This list stays until every step is done.
      </p>
      <ol>
        {steps.map((s) => (
          <li key={s.id} data-step={s.id}>
            <strong>{s.title}</strong>{' '}
            <span className={`badge ${s.done ? 'ok' : 'warn'}`}>{s.done ? 'done' : 'not done'}</span>
            <div className="hint">{s.detail}</div>
          </li>
        ))}
      </ol>
      <button
        type="button"
        onClick={() => {
          localStorage.setItem(KEY, 'dismissed');
          setHidden(true);
        }}
      >
        Dismiss
      </button>
    </section>
  );
}
