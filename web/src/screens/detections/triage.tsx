// Triage at volume on the Detections screen: identical findings grouped (GET
// /api/detections/groups: the same rule or vendor finding about the same entity, with its count,
// first and last seen and highest severity), a group opened into its findings, and one status
// change for the selected groups or findings (POST /api/detections/bulk/update).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call, type Ok } from '../../api/client';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Field, Notice, Pager, Time } from '../../ui/kit';
import { SeverityBadge, STATUSES, statusName, type Status } from './labels';

export type Finding = Ok<'detections.list'>['items'][number];
export type Group = Ok<'detections.groups'>['items'][number];
export type ListFilters = Record<string, string | number>;

export const LIMIT = 25;

export function assigneeName(a: Finding['assignee']): string {
  if (!a) return '—';
  return a.display_name || a.username || `user ${a.id}`;
}

/** One change for what is selected: groups (with the list's status filter) or findings by id. */
export function BulkBar({
  groups,
  ids,
  whereStatus,
  onDone,
}: {
  groups: string[];
  ids: string[];
  whereStatus: Status[];
  onDone: () => void;
}) {
  const client = useQueryClient();
  const [status, setStatus] = useState<Status>('resolved');
  const apply = useMutation({
    mutationFn: async () => {
      let changed = 0;
      for (const group of groups) {
        const r = await call(
          api.POST('/api/detections/bulk/update', {
            body: { group, status, ...(whereStatus.length ? { where_status: whereStatus } : {}) },
          }),
        );
        changed += r.status_changed;
      }
      if (ids.length)
        changed += (await call(api.POST('/api/detections/bulk/update', { body: { ids, status } }))).status_changed;
      return changed;
    },
    onSuccess: () => {
      onDone();
      void client.invalidateQueries({ queryKey: ['detections'] });
      void client.invalidateQueries({ queryKey: ['detection-groups'] });
    },
  });
  const count = groups.length + ids.length;
  const what = groups.length ? `${groups.length} group(s)` : `${ids.length} finding(s)`;
  return (
    <form
      className="row"
      aria-label="Change the selected"
      onSubmit={(e) => {
        e.preventDefault();
        if (count) apply.mutate();
      }}
    >
      <Field label="Change the selected to">
        {(id) => (
          <select id={id} value={status} onChange={(e) => setStatus(e.target.value as Status)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusName(s)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="submit" className="primary" disabled={count === 0 || apply.isPending}>
        {count ? `Apply to ${what}` : 'Select groups or findings'}
      </button>
      <ErrorNote error={apply.error} />
      {apply.isSuccess ? <Notice>{formatNumber(apply.data)} finding(s) changed.</Notice> : null}
    </form>
  );
}

/** Findings in a table with a checkbox each (the flat list, and a group opened). */
export function FindingsTable({
  rows,
  caption,
  selected,
  onSelect,
  ruleName,
}: {
  rows: Finding[];
  caption: string;
  selected?: Set<string>;
  onSelect?: (id: string, on: boolean) => void;
  ruleName: (id: string | null) => string;
}) {
  return (
    <DataTable
      caption={caption}
      rows={rows}
      rowKey={(d) => d.id}
      empty="No detection matches these filters."
      columns={[
        ...(selected && onSelect
          ? [
              {
                header: 'Select',
                cell: (d: Finding) => (
                  <input
                    type="checkbox"
                    aria-label={`Select ${d.title} (${d.entity || 'no entity'}, ${new Date(d.last_seen_at).toISOString()})`}
                    checked={selected.has(d.id)}
                    onChange={(e) => onSelect(d.id, e.target.checked)}
                  />
                ),
              },
            ]
          : []),
        { header: 'Title', cell: (d) => <Link href={`/detections/${d.id}`}>{d.title}</Link> },
        { header: 'Entity', cell: (d) => (d.entity ? <code>{d.entity}</code> : '—') },
        { header: 'Severity', cell: (d) => <SeverityBadge id={d.severity_id} /> },
        { header: 'Status', cell: (d) => <Badge value={d.status} /> },
        {
          header: 'Source',
          cell: (d) => (d.source === 'rule' ? `rule ${ruleName(d.rule_id)} v${d.rule_version ?? '?'}` : d.source),
        },
        { header: 'Events', className: 'num', cell: (d) => formatNumber(d.event_count) },
        { header: 'Last seen', cell: (d) => <Time value={d.last_seen_at} /> },
        { header: 'Assignee', cell: (d) => assigneeName(d.assignee) },
      ]}
    />
  );
}

/** A group opened: its findings (within the list's filters), paged. */
function GroupFindings({
  group,
  filters,
  onClose,
  ruleName,
}: {
  group: Group;
  filters: ListFilters;
  onClose: () => void;
  ruleName: (id: string | null) => string;
}) {
  const [offset, setOffset] = useState(0);
  const list = useQuery({
    queryKey: ['detections', 'group', group.key, filters, offset],
    queryFn: () =>
      call(api.GET('/api/detections', { params: { query: { ...filters, group: group.key, limit: LIMIT, offset } } })),
  });
  return (
    <section className="panel" aria-labelledby="group-findings">
      <h2 id="group-findings">
        {group.title}
        {group.entity ? ` · ${group.entity}` : ''}
      </h2>
      <button type="button" onClick={onClose}>
        Close group
      </button>
      <ErrorNote error={list.error} />
      <FindingsTable rows={list.data?.items ?? []} caption={`Findings of ${group.title}`} ruleName={ruleName} />
      {list.data ? (
        <Pager
          label="Findings of the group"
          total={list.data.total}
          limit={LIMIT}
          offset={offset}
          onOffset={setOffset}
        />
      ) : null}
    </section>
  );
}

const statusSummary = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, n]) => `${formatNumber(n)} ${statusName(k)}`)
    .join(', ');

/** The grouped view: one row per group, most severe first, each selectable and opened in place. */
export function GroupsView({
  filters,
  whereStatus,
  canChange,
  ruleName,
}: {
  filters: ListFilters;
  whereStatus: Status[];
  canChange: boolean;
  ruleName: (id: string | null) => string;
}) {
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [open, setOpen] = useState<Group | null>(null);
  const groups = useQuery({
    queryKey: ['detection-groups', filters, offset],
    queryFn: () => call(api.GET('/api/detections/groups', { params: { query: { ...filters, limit: LIMIT, offset } } })),
    refetchInterval: 15_000,
  });
  const toggle = (key: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(key);
      else next.delete(key);
      return next;
    });
  return (
    <>
      {canChange ? (
        <BulkBar groups={[...selected]} ids={[]} whereStatus={whereStatus} onDone={() => setSelected(new Set())} />
      ) : null}
      <ErrorNote error={groups.error} />
      <DataTable
        caption="Detection groups"
        rows={groups.data?.items ?? []}
        rowKey={(g) => g.key}
        empty="No detection matches these filters."
        columns={[
          ...(canChange
            ? [
                {
                  header: 'Select',
                  cell: (g: Group) => (
                    <input
                      type="checkbox"
                      aria-label={`Select group ${g.title}${g.entity ? ` (${g.entity})` : ''}`}
                      checked={selected.has(g.key)}
                      onChange={(e) => toggle(g.key, e.target.checked)}
                    />
                  ),
                },
              ]
            : []),
          {
            header: 'Finding',
            cell: (g) =>
              g.count === 1 ? (
                <Link href={`/detections/${g.top_id}`}>{g.title}</Link>
              ) : (
                <button type="button" aria-expanded={open?.key === g.key} onClick={() => setOpen(g)}>
                  {g.title} ({formatNumber(g.count)} findings)
                </button>
              ),
          },
          { header: 'Entity', cell: (g) => (g.entity ? <code>{g.entity}</code> : '—') },
          { header: 'Severity', cell: (g) => <SeverityBadge id={g.severity_id} /> },
          { header: 'Count', className: 'num', cell: (g) => formatNumber(g.count) },
          { header: 'Statuses', cell: (g) => statusSummary(g.statuses) },
          {
            header: 'Source',
            cell: (g) => (g.source === 'rule' ? `rule ${ruleName(g.rule_id)}` : g.source),
          },
          { header: 'First seen', cell: (g) => <Time value={g.first_seen_at} /> },
          { header: 'Last seen', cell: (g) => <Time value={g.last_seen_at} /> },
        ]}
      />
      {groups.data ? (
        <Pager label="Detection groups" total={groups.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
      {open ? (
        <GroupFindings
          key={open.key}
          group={open}
          filters={filters}
          onClose={() => setOpen(null)}
          ruleName={ruleName}
        />
      ) : null}
    </>
  );
}
