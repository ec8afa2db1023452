// Import a Sigma rule (docs/sigma.md): YAML pasted or read from a file, compiled by the API as
// it is typed (POST /api/detections/rules/sigma?dry_run=true): the rule it becomes (name,
// condition in the text form, severity, MITRE ids, log source) or the API's reason it cannot be
// compiled faithfully (the field, modifier or position). "Create rule" then imports it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ChangeEvent, type FormEvent } from 'react';
import { api, call, type ApiError } from '../../api/client';
import { useOrgFilter } from '../../session';
import { useDebounced } from '../../ui/debounce';
import { ErrorNote, Field } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';
import { severityName } from './labels';

interface Compiled {
  title?: string;
  severity_id?: number;
  mitre?: { tactics?: string[]; techniques?: string[] };
  origin?: { id?: string; logsource?: Record<string, string>; author?: string };
}

export function SigmaImport({ onDone }: { onDone: () => void }) {
  const client = useQueryClient();
  const org = useOrgFilter();
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  const [yaml, setYaml] = useState('');
  const [name, setName] = useState('');
  const owner = organizationId ?? org.organization_id;
  const draft = useDebounced(yaml.trim() ? yaml : undefined, 500);
  const body = {
    yaml: draft ?? '',
    ...(owner ? { organization_id: owner } : {}),
    ...(name.trim() ? { name: name.trim() } : {}),
  };
  const preview = useQuery<Awaited<ReturnType<typeof compile>>, ApiError>({
    queryKey: ['sigma-preview', body],
    queryFn: () => compile(),
    enabled: draft !== undefined,
    retry: false,
  });
  function compile() {
    return call(api.POST('/api/detections/rules/sigma', { params: { query: { dry_run: true } }, body }));
  }
  const create = useMutation({
    mutationFn: () => call(api.POST('/api/detections/rules/sigma', { body: { ...body, yaml } })),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['detection-rules'] });
      onDone();
    },
  });
  const read = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    if (file) setYaml(await file.text());
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const current = draft === (yaml.trim() ? yaml : undefined);
  const def = (preview.data?.definition ?? {}) as Compiled;
  return (
    <form onSubmit={submit} aria-label="Import a Sigma rule">
      <OrgSelect value={organizationId} onChange={setOrganizationId} />
      <Field label="Sigma rule (YAML)" hint="Paste one rule, or choose a .yml file below; see docs/sigma.md">
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            required
            rows={10}
            spellCheck={false}
            value={yaml}
            onChange={(e) => setYaml(e.target.value)}
          />
        )}
      </Field>
      <Field label="Or read a file">
        {(id) => <input id={id} type="file" accept=".yml,.yaml,text/yaml" onChange={(e) => void read(e)} />}
      </Field>
      <Field label="Rule name" hint="Default: the Sigma rule's title">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <div role="status" aria-live="polite" data-testid="sigma-preview">
        {!current || preview.isFetching ? null : preview.error ? (
          <p className="error">{preview.error.message}</p>
        ) : preview.data ? (
          <>
            <p className="notice">Compiles to the rule below.</p>
            <dl>
              <dt>Name</dt>
              <dd>{preview.data.name}</dd>
              <dt>Severity</dt>
              <dd>{def.severity_id ? severityName(def.severity_id) : '—'}</dd>
              <dt>MITRE</dt>
              <dd>{[...(def.mitre?.tactics ?? []), ...(def.mitre?.techniques ?? [])].join(', ') || '—'}</dd>
              <dt>Log source</dt>
              <dd>
                {Object.entries(def.origin?.logsource ?? {})
                  .map(([k, v]) => `${k}: ${v}`)
                  .join(', ') || '—'}
              </dd>
              <dt>Condition</dt>
              <dd>
                <code data-testid="sigma-condition">
                  {preview.data.condition_text ??
                    JSON.stringify((preview.data.definition as { condition?: unknown }).condition)}
                </code>
              </dd>
            </dl>
          </>
        ) : null}
      </div>
      <ErrorNote error={create.error} />
      <button
        type="submit"
        className="primary"
        disabled={create.isPending || !current || !preview.isSuccess || preview.isFetching}
      >
        Create rule
      </button>
    </form>
  );
}
