// One detection: what was found (the OCSF finding), its evidence (the fields that matched, and
// each event with its fields, opened in Search), MITRE ATT&CK techniques and tactics by name, the
// whole history (status changes, assignments, comments), and triage: status, assignee (by name)
// and a comment in one PATCH /api/detections/{id}, for callers who may.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'wouter';
import { api, call, type Ok } from '../../api/client';
import { useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Field, Json, Notice, PageHeader, Stat, Time } from '../../ui/kit';
import { Attack, EvidencePanel } from './evidence';
import { SeverityBadge, STATUSES, statusName, type Status } from './labels';
import { assigneeName } from './triage';

type Detection = Ok<'detections.get'>;

function Triage({ detection }: { detection: Detection }) {
  const { can, profile } = useSession();
  const client = useQueryClient();
  const [status, setStatus] = useState<Status>(detection.status);
  const [assignee, setAssignee] = useState<string>(detection.assignee_id === null ? '' : String(detection.assignee_id));
  const [comment, setComment] = useState('');
  const users = useQuery({
    queryKey: ['users', 'assignees', detection.organization_id],
    queryFn: () =>
      call(api.GET('/api/auth/users', { params: { query: { organization_id: detection.organization_id } } })),
    enabled: can('user.manage'),
  });
  const me = profile.kind === 'user' ? profile.id : undefined;
  const candidates =
    users.data?.map((u) => ({ id: u.id, name: u.display_name ? `${u.display_name} (${u.username})` : u.username })) ??
    (me !== undefined ? [{ id: me, name: `${profile.name} (me)` }] : []);
  if (detection.assignee !== null && !candidates.some((c) => c.id === detection.assignee!.id))
    candidates.push({ id: detection.assignee.id, name: assigneeName(detection.assignee) });

  const patch = useMutation({
    mutationFn: () => {
      const assigneeId = assignee === '' ? null : Number(assignee);
      return call(
        api.PATCH('/api/detections/{detection_id}', {
          params: { path: { detection_id: detection.id } },
          body: {
            ...(status !== detection.status ? { status } : {}),
            ...(assigneeId !== detection.assignee_id ? { assignee_id: assigneeId } : {}),
            ...(comment.trim() ? { comment } : {}),
          },
        }),
      );
    },
    onSuccess: (d) => {
      setComment('');
      client.setQueryData(['detection', d.id], d);
      void client.invalidateQueries({ queryKey: ['detections'] });
    },
  });
  const changed =
    status !== detection.status ||
    assignee !== (detection.assignee_id === null ? '' : String(detection.assignee_id)) ||
    comment.trim() !== '';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (changed) patch.mutate();
  };
  if (!can('query.run')) return null;
  return (
    <form className="panel" aria-labelledby="triage" onSubmit={submit}>
      <h2 id="triage">Triage</h2>
      <div className="row">
        <Field label="Status">
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
        <Field label="Assignee">
          {(id) => (
            <select id={id} value={assignee} onChange={(e) => setAssignee(e.target.value)}>
              <option value="">Nobody</option>
              {candidates.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Comment" hint="Kept in the history">
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            rows={3}
            value={comment}
            onChange={(e) => setComment(e.target.value)}
          />
        )}
      </Field>
      <ErrorNote error={patch.error} />
      {patch.isSuccess ? <Notice>Saved.</Notice> : null}
      <button type="submit" className="primary" disabled={!changed || patch.isPending}>
        Save triage
      </button>
    </form>
  );
}

const shown = (v: unknown) =>
  v === null || v === undefined ? 'none' : typeof v === 'string' ? statusName(v) : JSON.stringify(v);

/** A history entry's change: {from, to} (status, assignee) or the fields that changed. */
function describe(change: Record<string, unknown>): string {
  if ('to' in change) return `${shown(change.from)} → ${shown(change.to)}`;
  return Object.entries(change)
    .map(([k, v]) => `${k}: ${shown(v)}`)
    .join('; ');
}

export default function DetectionDetail() {
  const { id } = useParams<{ id: string }>();
  const detection = useQuery({
    queryKey: ['detection', id],
    queryFn: () => call(api.GET('/api/detections/{detection_id}', { params: { path: { detection_id: id } } })),
  });
  const d = detection.data;
  return (
    <>
      <PageHeader title={d ? d.title : 'Detection'}>
        <Link className="button" href="/detections">
          All detections
        </Link>
      </PageHeader>
      <ErrorNote error={detection.error} />
      {d ? (
        <>
          <dl className="stats">
            <Stat label="Severity" value={<SeverityBadge id={d.severity_id} />} />
            <Stat label="Status" value={<Badge value={d.status} />} />
            <Stat label="Events" value={formatNumber(d.event_count)} />
            <Stat label="First seen" value={<Time value={d.first_seen_at} />} />
            <Stat label="Last seen" value={<Time value={d.last_seen_at} />} />
            <Stat label="Assignee" value={assigneeName(d.assignee)} />
          </dl>
          {d.description ? <p>{d.description}</p> : null}
          {d.entity ? (
            <p>
              About <code>{d.entity}</code>
            </p>
          ) : null}
          <p className="hint">
            Source: {d.source}
            {d.rule_id ? (
              <>
                {' '}
                (<Link href={`/detections/rules?rule=${d.rule_id}`}>rule</Link>, version {d.rule_version})
              </>
            ) : null}
            {d.integration_id !== null ? ` · integration ${d.integration_id}${d.stream ? ` / ${d.stream}` : ''}` : ''}
            {d.case_id ? ` · case ${d.case_id}` : ''}
            {d.search_id ? ' · from a scheduled search' : ''}
          </p>
          <div className="split">
            <Attack attack={d.attack} />
            <EvidencePanel detection={d} />
          </div>
          <Triage key={d.id} detection={d} />
          <section className="panel" aria-labelledby="history">
            <h2 id="history">History</h2>
            <DataTable
              caption="Detection history"
              rows={d.history}
              rowKey={(h) => h.id}
              columns={[
                { header: 'When', cell: (h) => <Time value={h.at} /> },
                { header: 'Who', cell: (h) => h.actor },
                { header: 'What', cell: (h) => <Badge value={h.kind} /> },
                { header: 'Change', cell: (h) => describe(h.change) },
                { header: 'Comment', cell: (h) => h.comment ?? '' },
              ]}
            />
          </section>
          <details className="panel">
            <summary>The OCSF finding</summary>
            <Json label="The OCSF finding" value={d.finding} />
          </details>
        </>
      ) : null}
    </>
  );
}
