// Enrichment: lookup tables, sources (GeoIP, feeds, APIs) and the policies that apply them,
// with their versions; what a caller without user.manage cannot open is not in the menu.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { useOrgFilter } from '../../session';
import { Badge, DataTable, Dialog, ErrorNote, Field, Json, PageHeader, Time } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';

type Tab = 'tables' | 'sources' | 'policies';

export default function Enrichment() {
  const org = useOrgFilter();
  const [tab, setTab] = useState<Tab>('tables');
  const [creating, setCreating] = useState(false);
  const [showPolicy, setShowPolicy] = useState<string>();
  const tables = useQuery({
    queryKey: ['enrichment-tables', org],
    queryFn: () => call(api.GET('/api/collectors/enrichment/tables', { params: { query: org } })),
    enabled: tab === 'tables',
  });
  const sources = useQuery({
    queryKey: ['enrichment-sources', org],
    queryFn: () => call(api.GET('/api/collectors/enrichment/sources', { params: { query: org } })),
    enabled: tab === 'sources',
  });
  const policies = useQuery({
    queryKey: ['enrichment-policies', org],
    queryFn: () => call(api.GET('/api/collectors/enrichment/policies', { params: { query: org } })),
    enabled: tab === 'policies',
  });
  const versions = useQuery({
    queryKey: ['policy-versions', showPolicy],
    queryFn: () =>
      call(
        api.GET('/api/collectors/enrichment/policies/{policy_id}/versions', {
          params: { path: { policy_id: showPolicy ?? '' } },
        }),
      ),
    enabled: showPolicy !== undefined,
  });
  const client = useQueryClient();
  const enable = useMutation({
    mutationFn: (p: { id: string; enabled: boolean }) =>
      call(
        api.POST('/api/collectors/enrichment/policies/{policy_id}/enable', {
          params: { path: { policy_id: p.id } },
          body: { enabled: !p.enabled },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['enrichment-policies'] }),
  });
  const rollback = useMutation({
    mutationFn: (version: number) =>
      call(
        api.POST('/api/collectors/enrichment/policies/{policy_id}/rollback', {
          params: { path: { policy_id: showPolicy ?? '' } },
          body: { version },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['policy-versions', showPolicy] });
      void client.invalidateQueries({ queryKey: ['enrichment-policies'] });
    },
  });
  const tabs: [Tab, string][] = [
    ['tables', 'Tables'],
    ['sources', 'Sources'],
    ['policies', 'Policies'],
  ];
  return (
    <>
      <PageHeader title="Enrichment">
        {tab === 'tables' ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New table
          </button>
        ) : null}
      </PageHeader>
      <div className="tabs" role="tablist" aria-label="Enrichment">
        {tabs.map(([key, label]) => (
          <button
            key={key}
            type="button"
            role="tab"
            id={`tab-${key}`}
            aria-controls={`panel-${key}`}
            aria-selected={tab === key}
            onClick={() => setTab(key)}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        <ErrorNote error={tables.error ?? sources.error ?? policies.error ?? enable.error} />
        {tab === 'tables' ? (
          <DataTable
            caption="Lookup tables"
            rows={tables.data ?? []}
            rowKey={(t) => t.id}
            empty="No lookup table yet."
            columns={[
              { header: 'Name', cell: (t) => t.name },
              { header: 'Key column', cell: (t) => t.key_column },
              { header: 'Match', cell: (t) => t.match },
              { header: 'Rows', className: 'num', cell: (t) => t.row_count },
              { header: 'Version', cell: (t) => `v${t.version}` },
              { header: 'Updated', cell: (t) => <Time value={t.updated_at} /> },
            ]}
          />
        ) : null}
        {tab === 'sources' ? (
          <DataTable
            caption="Enrichment sources"
            rows={sources.data ?? []}
            rowKey={(s) => s.id}
            columns={[
              { header: 'Name', cell: (s) => s.name },
              { header: 'Kind', cell: (s) => s.kind },
              { header: 'Built-in', cell: (s) => <Badge value={s.builtin} /> },
              { header: 'Enabled', cell: (s) => <Badge value={s.enabled ? 'enabled' : 'disabled'} /> },
              { header: 'Credential', cell: (s) => (s.has_credential ? 'set' : 'none') },
              { header: 'Status', cell: (s) => <Badge value={String(s.status ?? '—')} /> },
            ]}
          />
        ) : null}
        {tab === 'policies' ? (
          <DataTable
            caption="Enrichment policies"
            rows={policies.data ?? []}
            rowKey={(p) => p.id}
            empty="No policy: events are not enriched."
            columns={[
              { header: 'Order', className: 'num', cell: (p) => p.order },
              { header: 'Name', cell: (p) => p.name },
              { header: 'Enabled', cell: (p) => <Badge value={p.enabled ? 'enabled' : 'disabled'} /> },
              { header: 'Version', cell: (p) => `v${p.version}` },
              {
                header: 'Actions',
                cell: (p) => (
                  <span className="row">
                    <button type="button" onClick={() => enable.mutate(p)}>
                      {p.enabled ? 'Disable' : 'Enable'} {p.name}
                    </button>
                    <button type="button" onClick={() => setShowPolicy(p.id)}>
                      Versions of {p.name}
                    </button>
                  </span>
                ),
              },
            ]}
          />
        ) : null}
      </div>
      <Dialog title="New lookup table" open={creating} onClose={() => setCreating(false)}>
        <CreateTable onDone={() => setCreating(false)} />
      </Dialog>
      <Dialog title="Policy versions" open={showPolicy !== undefined} onClose={() => setShowPolicy(undefined)}>
        <ErrorNote error={versions.error ?? rollback.error} />
        {(versions.data ?? []).map((v) => (
          <article key={v.id}>
            <h3>
              v{v.version} <Time value={v.created_at} /> {v.comment ?? ''}
            </h3>
            <button type="button" onClick={() => rollback.mutate(v.version)} disabled={rollback.isPending}>
              Roll back to v{v.version}
            </button>
            <Json label={`Version ${v.version} definition`} value={v.definition} />
          </article>
        ))}
      </Dialog>
    </>
  );
}

function CreateTable({ onDone }: { onDone: () => void }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [keyColumn, setKeyColumn] = useState('ip');
  const [match, setMatch] = useState<'exact' | 'case_insensitive' | 'cidr' | 'wildcard'>('exact');
  const [csv, setCsv] = useState('ip,owner\n10.0.0.1,finance\n');
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/collectors/enrichment/tables', {
          body: { name, key_column: keyColumn, match, format: 'csv', csv, organization_id: organizationId ?? 0 },
        }),
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['enrichment-tables'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="New lookup table">
      <Field label="Name">
        {(id) => <input id={id} required value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <OrgSelect value={organizationId} onChange={setOrganizationId} />
      <Field label="Key column">
        {(id) => <input id={id} required value={keyColumn} onChange={(e) => setKeyColumn(e.target.value)} />}
      </Field>
      <Field label="Match">
        {(id) => (
          <select id={id} value={match} onChange={(e) => setMatch(e.target.value as typeof match)}>
            {(['exact', 'case_insensitive', 'cidr', 'wildcard'] as const).map((m) => (
              <option key={m} value={m}>
                {m.replace('_', ' ')}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Rows (CSV with a header line)">
        {(id) => <textarea id={id} rows={8} value={csv} onChange={(e) => setCsv(e.target.value)} />}
      </Field>
      <ErrorNote error={create.error} />
      <button type="submit" className="primary" disabled={create.isPending}>
        Create table
      </button>
    </form>
  );
}
