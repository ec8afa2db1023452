// Destinations with their health in one call (status, breaker, lag, pending, DLQ), and the
// create form from the destination type's JSON Schemas (the credential write-only).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { formatNumber, formatSeconds } from '../../ui/format';
import { Badge, DataTable, Dialog, ErrorNote, Field, PageHeader, Time } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';
import { SchemaForm, type JsonSchema } from '../../ui/schema-form';

export default function Destinations() {
  const org = useOrgFilter();
  const { can } = useSession();
  const [creating, setCreating] = useState(false);
  const health = useQuery({
    queryKey: ['destinations-health'],
    queryFn: () => call(api.GET('/api/collectors/destinations/health')),
    refetchInterval: 10_000,
  });
  const rows = (health.data?.items ?? []).filter(
    (d) => org.organization_id === undefined || d.organization_id === org.organization_id || d.organization_id === null,
  );
  return (
    <>
      <PageHeader title="Destinations">
        {can('user.manage') ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New destination
          </button>
        ) : null}
      </PageHeader>
      <ErrorNote error={health.error} />
      <DataTable
        caption="Destinations and their health"
        rows={rows}
        rowKey={(d) => d.destination_id}
        columns={[
          { header: 'Name', cell: (d) => <Link href={`/destinations/${d.destination_id}`}>{d.name}</Link> },
          { header: 'Type', cell: (d) => d.type },
          { header: 'Health', cell: (d) => <Badge value={d.status} /> },
          { header: 'Breaker', cell: (d) => <Badge value={d.breaker_state} /> },
          { header: 'Lag', cell: (d) => formatSeconds(d.lag_seconds) },
          { header: 'Pending', className: 'num', cell: (d) => formatNumber(d.pending_events) },
          { header: 'Delivered (hour)', className: 'num', cell: (d) => formatNumber(d.delivered_last_hour) },
          { header: 'DLQ', className: 'num', cell: (d) => formatNumber(d.dlq_count) },
          { header: 'Last success', cell: (d) => <Time value={d.last_success_at} /> },
          { header: 'Error', cell: (d) => d.current_error ?? d.disabled_reason ?? '' },
        ]}
      />
      <Dialog title="New destination" open={creating} onClose={() => setCreating(false)}>
        <CreateDestination onDone={() => setCreating(false)} />
      </Dialog>
    </>
  );
}

function CreateDestination({ onDone }: { onDone: () => void }) {
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const types = useQuery({
    queryKey: ['destination-types'],
    queryFn: () => call(api.GET('/api/collectors/destinations/destination-types')),
    staleTime: 300_000,
  });
  const [type, setType] = useState('file');
  const [name, setName] = useState('');
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  const [config, setConfig] = useState<Record<string, unknown>>({});
  const [credential, setCredential] = useState<Record<string, unknown>>({});
  const chosen = types.data?.find((t) => t.type === type);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/collectors/destinations', {
          body: {
            name,
            type,
            config,
            ...(organizationId !== null ? { organization_id: organizationId } : {}),
            ...(Object.keys(credential).length ? { credential: credential as Record<string, string> } : {}),
          },
        }),
      ),
    onSuccess: async (d) => {
      await client.invalidateQueries({ queryKey: ['destinations-health'] });
      onDone();
      navigate(`/destinations/${d.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="New destination">
      <Field label="Name">
        {(id) => <input id={id} required value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label="Type" hint={chosen?.description}>
        {(id, hint) => (
          <select
            id={id}
            aria-describedby={hint}
            value={type}
            onChange={(e) => (setType(e.target.value), setConfig({}), setCredential({}))}
          >
            {(types.data ?? []).map((t) => (
              <option key={t.type} value={t.type}>
                {t.title}
              </option>
            ))}
          </select>
        )}
      </Field>
      <OrgSelect value={organizationId} onChange={setOrganizationId} allowGlobal />
      {chosen ? (
        <>
          <fieldset>
            <legend>Configuration</legend>
            <SchemaForm schema={chosen.config_schema as JsonSchema} value={config} onChange={setConfig} />
          </fieldset>
          {chosen.credential_schema ? (
            <fieldset>
              <legend>
                Credential{chosen.credential_required ? ' (required)' : ''}: write-only, never shown again
              </legend>
              <SchemaForm
                schema={{ ...(chosen.credential_schema as JsonSchema) }}
                value={credential}
                onChange={setCredential}
              />
            </fieldset>
          ) : null}
        </>
      ) : null}
      <ErrorNote error={create.error} />
      <button type="submit" className="primary" disabled={create.isPending}>
        Create destination
      </button>
    </form>
  );
}
