// Detection rules: the organization's rules (GET /api/detections/rules), created and edited
// in a dialog (rule-form.tsx), each with its versions and a rollback. Every change of a
// definition is a new version, live within seconds.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useSearch } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { Badge, DataTable, Dialog, ErrorNote, Json, Notice, PageHeader, Pager, Time } from '../../ui/kit';
import { SeverityBadge } from './labels';
import { RuleForm, type Rule } from './rule-form';
import { SigmaImport } from './sigma-import';

const LIMIT = 25;

function RuleVersions({ rule }: { rule: Rule }) {
  const { can } = useSession();
  const client = useQueryClient();
  const versions = useQuery({
    queryKey: ['detection-rule-versions', rule.id],
    queryFn: () =>
      call(api.GET('/api/detections/rules/{rule_id}/versions', { params: { path: { rule_id: rule.id } } })),
  });
  const rollback = useMutation({
    mutationFn: (version: number) =>
      call(
        api.POST('/api/detections/rules/{rule_id}/rollback', {
          params: { path: { rule_id: rule.id } },
          body: { version },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['detection-rules'] });
      void client.invalidateQueries({ queryKey: ['detection-rule-versions', rule.id] });
    },
  });
  return (
    <>
      <p>Live version: v{rule.version ?? '—'}</p>
      <ErrorNote error={versions.error ?? rollback.error} />
      {rollback.data ? <Notice>Rolled back: v{rollback.data.version} is live.</Notice> : null}
      <DataTable
        caption="Rule versions"
        rows={versions.data ?? []}
        rowKey={(v) => v.id}
        columns={[
          {
            header: 'Version',
            cell: (v) => (
              <>
                v{v.version} {v.version === rule.version ? <Badge value="live" /> : null}
              </>
            ),
          },
          { header: 'Comment', cell: (v) => v.comment },
          { header: 'Saved', cell: (v) => <Time value={v.created_at} /> },
          { header: 'Definition', cell: (v) => <Json label={`Definition of v${v.version}`} value={v.definition} /> },
          {
            header: 'Actions',
            cell: (v) =>
              can('query.save') && v.version !== rule.version ? (
                <button
                  type="button"
                  onClick={() =>
                    window.confirm(`Make v${v.version}'s definition live again?`) && rollback.mutate(v.version)
                  }
                >
                  Roll back to v{v.version}
                </button>
              ) : null,
          },
        ]}
      />
    </>
  );
}

export default function DetectionRules() {
  const org = useOrgFilter();
  const { can } = useSession();
  const canEdit = can('query.save');
  const wanted = new URLSearchParams(useSearch()).get('rule');
  const [offset, setOffset] = useState(0);
  const [editing, setEditing] = useState<Rule | 'new'>();
  const [versions, setVersions] = useState<Rule>();
  const [importing, setImporting] = useState(false);
  const rules = useQuery({
    queryKey: ['detection-rules', org, offset],
    queryFn: () => call(api.GET('/api/detections/rules', { params: { query: { ...org, limit: LIMIT, offset } } })),
  });
  useEffect(() => {
    // Opened from a detection with ?rule=<id>.
    const found = wanted ? rules.data?.items.find((r) => r.id === wanted) : undefined;
    if (found) setVersions(found);
  }, [rules.data, wanted]);
  return (
    <>
      <PageHeader title="Detection rules">
        <Link className="button" href="/detections">
          Detections
        </Link>
        {canEdit ? (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            New rule
          </button>
        ) : null}
        {canEdit ? (
          <button type="button" onClick={() => setImporting(true)}>
            Import Sigma rule
          </button>
        ) : null}
      </PageHeader>
      <p className="hint">
        A rule is tried on every normalized event of its organization; a match (or a threshold reached) raises a
        detection.
      </p>
      <ErrorNote error={rules.error} />
      <DataTable
        caption="Detection rules"
        rows={rules.data?.items ?? []}
        rowKey={(r) => r.id}
        empty="No detection rule yet."
        columns={[
          { header: 'Name', cell: (r) => <strong>{r.name}</strong> },
          { header: 'State', cell: (r) => <Badge value={r.enabled ? 'enabled' : 'disabled'} /> },
          {
            header: 'Severity',
            cell: (r) => <SeverityBadge id={(r.definition as { severity_id?: number } | null)?.severity_id ?? 0} />,
          },
          { header: 'Version', cell: (r) => (r.version ? `v${r.version}` : '—') },
          { header: 'Updated', cell: (r) => <Time value={r.updated_at} /> },
          {
            header: 'Actions',
            cell: (r) => (
              <span className="row">
                {canEdit ? (
                  <button type="button" onClick={() => setEditing(r)} aria-label={`Edit ${r.name}`}>
                    Edit
                  </button>
                ) : null}
                <button type="button" onClick={() => setVersions(r)} aria-label={`Versions of ${r.name}`}>
                  Versions
                </button>
              </span>
            ),
          },
        ]}
      />
      {rules.data ? (
        <Pager label="Detection rules" total={rules.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
      <Dialog
        title={editing === 'new' ? 'New detection rule' : `Edit ${editing?.name ?? ''}`}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        <RuleForm
          key={editing === 'new' ? 'new' : editing?.id}
          rule={editing === 'new' ? undefined : editing}
          onDone={() => setEditing(undefined)}
        />
      </Dialog>
      <Dialog title="Import a Sigma rule" open={importing} onClose={() => setImporting(false)}>
        <SigmaImport onDone={() => setImporting(false)} />
      </Dialog>
      <Dialog
        title={`Versions of ${versions?.name ?? ''}`}
        open={versions !== undefined}
        onClose={() => setVersions(undefined)}
      >
        {versions ? <RuleVersions rule={rules.data?.items.find((r) => r.id === versions.id) ?? versions} /> : null}
      </Dialog>
    </>
  );
}
