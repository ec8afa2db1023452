// Mapping editor: a version's JSON document, checked as you type (JSON syntax at once, the
// mapping language and OCSF catalog by a dry run on the stream's recent samples a moment
// later), with each sample's input beside its OCSF output; publish, versions, diff, rollback.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useParams } from 'wouter';
import type { ApiError } from '../../api/client';
import { api, call, type Ok } from '../../api/client';
import { useSession } from '../../session';
import { useDebounced } from '../../ui/debounce';
import { Badge, ErrorNote, Field, Json, Notice, PageHeader } from '../../ui/kit';
import { TestCases } from './test-cases';
import { Versions } from './versions';

const TEMPLATE = {
  product: { name: 'My source', vendor_name: 'My vendor' },
  rules: [{ name: 'everything', class_uid: 1001, activity_id: 99, set: [] }],
};

type DryRun = Ok<'mappings.dry_run'>;

export default function MappingEditor() {
  const { id } = useParams<{ id: string }>();
  const { can, organizationId } = useSession();
  const client = useQueryClient();
  const definition = useQuery({
    queryKey: ['mapping', id],
    queryFn: () => call(api.GET('/api/mappings/{definition_id}', { params: { path: { definition_id: id } } })),
  });
  const def = definition.data;
  const [text, setText] = useState<string>();
  const [comment, setComment] = useState('');
  const [integrationId, setIntegrationId] = useState<number>();

  useEffect(() => {
    if (def && text === undefined) setText(JSON.stringify(def.document ?? TEMPLATE, null, 2));
  }, [def, text]);

  const sourceOrg = def?.organization_id ?? organizationId ?? undefined;
  const integrations = useQuery({
    queryKey: ['integrations', 'for-mapping', def?.platform, sourceOrg],
    queryFn: () =>
      call(
        api.GET('/api/integrations/', {
          params: {
            query: { platform: def?.platform ?? '', limit: 50, ...(sourceOrg ? { organization_id: sourceOrg } : {}) },
          },
        }),
      ),
    enabled: def !== undefined,
  });
  useEffect(() => {
    const first = integrations.data?.items[0];
    if (integrationId === undefined && first) setIntegrationId(first.id);
  }, [integrations.data, integrationId]);

  let parsed: Record<string, unknown> | undefined;
  let syntax: string | undefined;
  try {
    if (text !== undefined) parsed = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    syntax = `JSON: ${(err as Error).message}`;
  }
  const draft = useDebounced(syntax ? undefined : text, 500);
  const check = useQuery<DryRun, ApiError>({
    queryKey: ['mapping-check', id, draft, integrationId],
    queryFn: () =>
      call(
        api.POST('/api/mappings/dry-run', {
          body: {
            document: JSON.parse(draft ?? '{}') as Record<string, unknown>,
            sample: { integration_id: integrationId ?? 0, stream: def?.stream ?? '', limit: 10 },
          },
        }),
      ),
    enabled: draft !== undefined && integrationId !== undefined && def !== undefined,
    placeholderData: (previous) => previous,
  });

  const publish = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/mappings/{definition_id}/versions', {
          params: { path: { definition_id: id } },
          body: { document: parsed ?? {}, ...(comment ? { comment } : {}) },
        }),
      ),
    onSuccess: () => {
      setComment('');
      void client.invalidateQueries({ queryKey: ['mapping', id] });
      void client.invalidateQueries({ queryKey: ['mapping-versions', id] });
    },
  });

  const problems = (check.error?.details?.problems as { at?: string; message?: string }[] | undefined) ?? [];
  const result = check.error ? undefined : check.data;
  return (
    <>
      <PageHeader title={def ? `Mapping: ${def.name}` : 'Mapping'}>
        {def ? (
          <span className="hint">
            {def.platform} / {def.stream} · {def.builtin ? 'built-in' : `organization ${def.organization_id}`} · live{' '}
            {def.live_version ? `v${def.live_version.version}` : 'none'}
          </span>
        ) : null}
      </PageHeader>
      <ErrorNote error={definition.error} />
      <div className="split">
        <section className="panel" aria-labelledby="doc">
          <h2 id="doc">Document</h2>
          <Field label="Mapping document (JSON)" hint="Checked as you type; see docs/mappings.md for the language.">
            {(fid, hint) => (
              <textarea
                id={fid}
                aria-describedby={hint}
                rows={24}
                spellCheck={false}
                value={text ?? ''}
                onChange={(e) => setText(e.target.value)}
                readOnly={!can('mapping.write')}
              />
            )}
          </Field>
          <div role="status" aria-live="polite" data-testid="validation">
            {syntax ? (
              <p className="error">{syntax}</p>
            ) : check.error ? (
              <p className="error">{check.error.message}</p>
            ) : result ? (
              <p className="notice">
                Valid: {result.summary.ok} of {result.summary.total} samples map cleanly
                {result.summary.quarantined ? `, ${result.summary.quarantined} would be quarantined` : ''}.
              </p>
            ) : null}
          </div>
          {problems.length > 1 ? (
            <ul aria-label="Problems">
              {problems.map((p, i) => (
                <li key={i}>
                  <code>{p.at || '/'}</code> {p.message}
                </li>
              ))}
            </ul>
          ) : null}
          {can('mapping.write') && !def?.builtin ? (
            <div className="row">
              <Field label="Comment">
                {(fid) => <input id={fid} value={comment} onChange={(e) => setComment(e.target.value)} />}
              </Field>
              <button
                type="button"
                className="primary"
                disabled={!parsed || publish.isPending}
                onClick={() => publish.mutate()}
              >
                Publish
              </button>
            </div>
          ) : null}
          <ErrorNote error={publish.error} />
          {publish.data ? <Notice>Published v{publish.data.version}: live within seconds.</Notice> : null}
          <TestCases document={syntax ? undefined : parsed} />
        </section>
        <section className="panel" aria-labelledby="dry">
          <h2 id="dry">Dry run on recent samples</h2>
          <Field label="Samples of integration">
            {(fid) => (
              <select id={fid} value={integrationId ?? ''} onChange={(e) => setIntegrationId(Number(e.target.value))}>
                {(integrations.data?.items ?? []).map((i) => (
                  <option key={i.id} value={i.id}>
                    {i.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {integrations.data && integrations.data.items.length === 0 ? (
            <p className="empty">No integration of this platform: no samples to try.</p>
          ) : null}
          {result && result.results.length > 0 ? (
            <p className="hint" data-testid="dry-run-masking">
              {result.masked
                ? 'Personal data (users, e-mail and IP addresses, hosts, messages) is masked; captions, codes and ids are shown as mapped. Reading samples unmasked needs the quarantine.read permission.'
                : 'Shown unmasked: you may read raw events (quarantine.read).'}
            </p>
          ) : null}
          {result && result.results.length === 0 ? (
            <p className="empty">No recent samples of this stream yet.</p>
          ) : null}
          {result?.results.map((r) => (
            <article key={r.index} className="panel" aria-label={`Sample ${r.index + 1}`}>
              <p>
                Sample {r.index + 1}: <Badge value={r.ok ? 'ok' : r.quarantine ? 'quarantined' : 'degraded'} />{' '}
                {r.error_detail ?? ''}
              </p>
              <div className="split">
                <Json label={`Sample ${r.index + 1} input`} value={r.input} />
                <Json label={`Sample ${r.index + 1} OCSF output`} value={r.ocsf ?? null} />
              </div>
              {r.issues.length ? (
                <ul>
                  {r.issues.map((issue, i) => (
                    <li key={i}>
                      <code>{issue.path}</code> {issue.message}
                    </li>
                  ))}
                </ul>
              ) : null}
            </article>
          ))}
        </section>
      </div>
      {def ? <Versions definitionId={id} onLoad={(doc) => setText(JSON.stringify(doc, null, 2))} /> : null}
    </>
  );
}
