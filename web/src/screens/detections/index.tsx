// Detections of your organizations, most severe first (then most recent; or by time): filtered
// by status, severity, time, rule, source and integration, and paged on the server. Shown
// grouped by default (identical findings about one entity as one row with its count, opened in
// place: triage.tsx) or one row per finding (GET /api/detections); selected groups or findings
// change status in one request. A title opens the detection with its evidence, history and triage.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { ErrorNote, Field, PageHeader, Pager } from '../../ui/kit';
import { SEVERITIES, SOURCES, STATUSES, statusName, type Status } from './labels';
import { BulkBar, FindingsTable, GroupsView, LIMIT } from './triage';

export default function Detections() {
  const org = useOrgFilter();
  const { can } = useSession();
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState('new,in_progress');
  const [severity, setSeverity] = useState(0);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [rule, setRule] = useState('');
  const [source, setSource] = useState<'' | (typeof SOURCES)[number]>('');
  const [integration, setIntegration] = useState(0);
  const [view, setView] = useState<'groups' | 'findings'>('groups');
  const [sort, setSort] = useState<'severity' | 'time'>('severity');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const filters = {
    ...org,
    sort,
    ...(status ? { status } : {}),
    ...(severity ? { severity_min: severity } : {}),
    ...(from ? { from: new Date(from).toISOString() } : {}),
    ...(to ? { to: new Date(to).toISOString() } : {}),
    ...(rule ? { rule_id: rule } : {}),
    ...(source ? { source } : {}),
    ...(integration ? { integration_id: integration } : {}),
  };
  const list = useQuery({
    queryKey: ['detections', filters, offset],
    queryFn: () => call(api.GET('/api/detections', { params: { query: { ...filters, limit: LIMIT, offset } } })),
    refetchInterval: 15_000,
    enabled: view === 'findings',
  });
  const rules = useQuery({
    queryKey: ['detection-rules', 'names', org],
    queryFn: () => call(api.GET('/api/detections/rules', { params: { query: { ...org, limit: 200 } } })),
    enabled: can('mapping.read'),
  });
  const integrations = useQuery({
    queryKey: ['integrations', 'names', org],
    queryFn: () => call(api.GET('/api/integrations/', { params: { query: { ...org, limit: 200 } } })),
    enabled: can('integration.read'),
  });
  const filter =
    <T,>(set: (v: T) => void) =>
    (v: T) => {
      set(v);
      setOffset(0);
      setSelected(new Set());
    };
  const whereStatus = status ? (status.split(',') as Status[]) : [];
  const ruleName = (id: string | null) => (id ? (rules.data?.items.find((r) => r.id === id)?.name ?? 'a rule') : '');

  return (
    <>
      <PageHeader title="Detections">
        {can('mapping.read') ? (
          <Link className="button" href="/detections/rules">
            Detection rules
          </Link>
        ) : null}
      </PageHeader>
      <form className="row" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Show">
          {(id) => (
            <select id={id} value={view} onChange={(e) => filter(setView)(e.target.value as typeof view)}>
              <option value="groups">Grouped (identical findings as one row)</option>
              <option value="findings">Every finding</option>
            </select>
          )}
        </Field>
        <Field label="Order">
          {(id) => (
            <select id={id} value={sort} onChange={(e) => filter(setSort)(e.target.value as typeof sort)}>
              <option value="severity">Most severe first</option>
              <option value="time">Most recent first</option>
            </select>
          )}
        </Field>
        <Field label="Status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => filter(setStatus)(e.target.value)}>
              <option value="new,in_progress">Open (new, in progress)</option>
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {statusName(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Severity at least">
          {(id) => (
            <select id={id} value={severity} onChange={(e) => filter(setSeverity)(Number(e.target.value))}>
              <option value={0}>Any</option>
              {SEVERITIES.map(([n, name]) => (
                <option key={n} value={n}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Seen since">
          {(id) => (
            <input id={id} type="datetime-local" value={from} onChange={(e) => filter(setFrom)(e.target.value)} />
          )}
        </Field>
        <Field label="Seen before">
          {(id) => <input id={id} type="datetime-local" value={to} onChange={(e) => filter(setTo)(e.target.value)} />}
        </Field>
        <Field label="Rule">
          {(id) => (
            <select id={id} value={rule} onChange={(e) => filter(setRule)(e.target.value)}>
              <option value="">Any</option>
              {(rules.data?.items ?? []).map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Source">
          {(id) => (
            <select id={id} value={source} onChange={(e) => filter(setSource)(e.target.value as typeof source)}>
              <option value="">Any</option>
              {SOURCES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Integration">
          {(id) => (
            <select id={id} value={integration} onChange={(e) => filter(setIntegration)(Number(e.target.value))}>
              <option value={0}>Any</option>
              {(integrations.data?.items ?? []).map((i) => (
                <option key={i.id} value={i.id}>
                  {i.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </form>
      {view === 'groups' ? (
        <GroupsView
          key={JSON.stringify(filters)}
          filters={filters}
          whereStatus={whereStatus}
          canChange={can('query.run')}
          ruleName={ruleName}
        />
      ) : (
        <>
          {can('query.run') ? (
            <BulkBar groups={[]} ids={[...selected]} whereStatus={[]} onDone={() => setSelected(new Set())} />
          ) : null}
          <ErrorNote error={list.error} />
          <FindingsTable
            rows={list.data?.items ?? []}
            caption="Detections"
            ruleName={ruleName}
            {...(can('query.run')
              ? {
                  selected,
                  onSelect: (id: string, on: boolean) =>
                    setSelected((cur) => {
                      const next = new Set(cur);
                      if (on) next.add(id);
                      else next.delete(id);
                      return next;
                    }),
                }
              : {})}
          />
          {list.data ? (
            <Pager label="Detections" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
          ) : null}
        </>
      )}
    </>
  );
}
