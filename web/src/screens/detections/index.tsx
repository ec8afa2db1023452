// Detections of your organizations, newest first: filtered by status, severity, time, rule,
// source and integration, and paged on the server (GET /api/detections). A title opens the
// detection with its evidence, history and triage.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Field, PageHeader, Pager, Time } from '../../ui/kit';
import { SeverityBadge, SEVERITIES, SOURCES, STATUSES, statusName } from './labels';

const LIMIT = 25;

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
  const filters = {
    ...org,
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
    };
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
      <ErrorNote error={list.error} />
      <DataTable
        caption="Detections"
        rows={list.data?.items ?? []}
        rowKey={(d) => d.id}
        empty="No detection matches these filters."
        columns={[
          { header: 'Title', cell: (d) => <Link href={`/detections/${d.id}`}>{d.title}</Link> },
          { header: 'Severity', cell: (d) => <SeverityBadge id={d.severity_id} /> },
          { header: 'Status', cell: (d) => <Badge value={d.status} /> },
          {
            header: 'Source',
            cell: (d) => (d.source === 'rule' ? `rule ${ruleName(d.rule_id)} v${d.rule_version ?? '?'}` : d.source),
          },
          { header: 'Events', className: 'num', cell: (d) => formatNumber(d.event_count) },
          { header: 'Last seen', cell: (d) => <Time value={d.last_seen_at} /> },
          { header: 'Assignee', cell: (d) => (d.assignee_id === null ? '—' : `user ${d.assignee_id}`) },
        ]}
      />
      {list.data ? (
        <Pager label="Detections" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
    </>
  );
}
