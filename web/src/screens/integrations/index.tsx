// Integrations: the list (paged and filtered on the server) and the create form, built
// from the chosen platform's JSON Schema (secret fields write-only).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { Badge, DataTable, Dialog, ErrorNote, Field, PageHeader, Pager, Time } from '../../ui/kit';
import { OrgSelect, useOrganizations } from '../../ui/org-select';
import { SchemaForm, type JsonSchema } from '../../ui/schema-form';

const LIMIT = 25;

export default function Integrations() {
  const org = useOrgFilter();
  const { can } = useSession();
  const [offset, setOffset] = useState(0);
  const [platform, setPlatform] = useState('');
  const [creating, setCreating] = useState(false);
  const platforms = useQuery({
    queryKey: ['platforms'],
    queryFn: () => call(api.GET('/api/integrations/platforms')),
    staleTime: 300_000,
  });
  const list = useQuery({
    queryKey: ['integrations', org, platform, offset],
    queryFn: () =>
      call(
        api.GET('/api/integrations/', {
          params: { query: { ...org, limit: LIMIT, offset, ...(platform ? { platform } : {}) } },
        }),
      ),
  });

  return (
    <>
      <PageHeader title="Integrations">
        {can('integration.write') ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New integration
          </button>
        ) : null}
      </PageHeader>
      <div className="row">
        <Field label="Platform">
          {(id) => (
            <select
              id={id}
              value={platform}
              onChange={(e) => {
                setPlatform(e.target.value);
                setOffset(0);
              }}
            >
              <option value="">All platforms</option>
              {(platforms.data ?? []).map((p) => (
                <option key={p.name} value={p.name}>
                  {p.display_name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNote error={list.error} />
      {list.data ? (
        <>
          <DataTable
            caption="Integrations"
            rows={list.data.items}
            rowKey={(i) => i.id}
            columns={[
              { header: 'Name', cell: (i) => <Link href={`/integrations/${i.id}`}>{i.name}</Link> },
              { header: 'Platform', cell: (i) => i.platform },
              { header: 'Organization', cell: (i) => i.organization_id },
              { header: 'Active', cell: (i) => <Badge value={i.is_active ? 'active' : 'inactive'} /> },
              { header: 'Created', cell: (i) => <Time value={i.created_at} /> },
            ]}
          />
          <Pager label="Integrations" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
        </>
      ) : null}
      <Dialog title="New integration" open={creating} onClose={() => setCreating(false)}>
        <CreateIntegration platforms={platforms.data ?? []} onDone={() => setCreating(false)} />
      </Dialog>
    </>
  );
}

type PlatformInfo = { name: string; display_name: string; description: string; config_schema: unknown };

function CreateIntegration({ platforms, onDone }: { platforms: PlatformInfo[]; onDone: () => void }) {
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [platform, setPlatform] = useState('custom');
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  const [config, setConfig] = useState<Record<string, unknown>>({});
  const chosen = platforms.find((p) => p.name === platform);
  // A platform administrator's first integration needs an organization to belong to: say where to make one.
  const { profile } = useSession();
  const orgs = useOrganizations();
  const noOrganization = profile.global && orgs.data !== undefined && orgs.data.length === 0;
  const create = useMutation({
    mutationFn: () =>
      call(api.POST('/api/integrations/', { body: { name, platform, organization_id: organizationId ?? 0, config } })),
    onSuccess: async (created) => {
      await client.invalidateQueries({ queryKey: ['integrations'] });
      onDone();
      navigate(`/integrations/${created.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="New integration">
      <Field label="Name">
        {(id) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label="Platform" hint={chosen?.description}>
        {(id, hint) => (
          <select
            id={id}
            aria-describedby={hint}
            value={platform}
            onChange={(e) => {
              setPlatform(e.target.value);
              setConfig({});
            }}
          >
            {platforms.map((p) => (
              <option key={p.name} value={p.name}>
                {p.display_name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <OrgSelect value={organizationId} onChange={setOrganizationId} />
      {noOrganization ? (
        <p className="notice" role="status" data-testid="no-organization">
          There is no organization yet, and every integration belongs to one:{' '}
          <Link href="/admin/organizations">create an organization</Link> first, then come back here.
        </p>
      ) : null}
      {chosen ? (
        <fieldset>
          <legend>Configuration</legend>
          <SchemaForm schema={chosen.config_schema as JsonSchema} value={config} onChange={setConfig} />
        </fieldset>
      ) : null}
      <ErrorNote error={create.error} />
      <button type="submit" className="primary" disabled={create.isPending || noOrganization}>
        Create
      </button>
    </form>
  );
}
