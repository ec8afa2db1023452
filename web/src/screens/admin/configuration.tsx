// Configuration as code: export one organization's bundle; import one, first as a dry run
// that shows the diff (what would be created, updated, left or is in conflict), then apply.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call, type Ok } from '../../api/client';
import { useSession } from '../../session';
import { Badge, DataTable, ErrorNote, Field, Notice, PageHeader } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';

type Result = Ok<'config_bundle.import'>;

export default function Configuration() {
  const session = useSession();
  const [organizationId, setOrganizationId] = useState<number | null>(
    session.organizationId ?? session.profile.organization_id,
  );
  const [text, setText] = useState('');
  const [preview, setPreview] = useState<Result>();
  const query = organizationId ? { organization_id: organizationId } : {};
  const exportBundle = useMutation({
    mutationFn: () => call(api.GET('/api/collectors/config/export', { params: { query } })),
    onSuccess: (bundle) => {
      const url = URL.createObjectURL(new Blob([JSON.stringify(bundle, null, 2)], { type: 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `weir-config-${bundle.organization.name}.json`;
      a.click();
      URL.revokeObjectURL(url);
    },
  });
  const run = useMutation({
    mutationFn: (dryRun: boolean) =>
      call(
        api.POST('/api/collectors/config/import', {
          params: { query },
          body: { document: JSON.parse(text) as Record<string, unknown>, dry_run: dryRun },
        }),
      ),
    onSuccess: (r) => setPreview(r),
  });
  return (
    <>
      <PageHeader title="Configuration export and import" />
      <OrgSelect value={organizationId} onChange={setOrganizationId} />
      <section className="panel" aria-labelledby="export">
        <h2 id="export">Export</h2>
        <p>
          Integrations, mappings, routes, destinations, enrichment and collector settings as one JSON document; secrets
          as markers, never values.
        </p>
        <button type="button" onClick={() => exportBundle.mutate()} disabled={exportBundle.isPending}>
          Download the bundle
        </button>
        <ErrorNote error={exportBundle.error} />
      </section>
      <section className="panel" aria-labelledby="import">
        <h2 id="import">Import</h2>
        <Field label="Bundle file">
          {(id) => (
            <input
              id={id}
              type="file"
              accept="application/json,.json"
              onChange={(e) => void e.target.files?.[0]?.text().then((t) => (setText(t), setPreview(undefined)))}
            />
          )}
        </Field>
        <Field label="Or paste the bundle">
          {(id) => (
            <textarea
              id={id}
              rows={8}
              value={text}
              onChange={(e) => (setText(e.target.value), setPreview(undefined))}
            />
          )}
        </Field>
        <div className="row">
          <button type="button" onClick={() => run.mutate(true)} disabled={!text || run.isPending}>
            Show the diff (dry run)
          </button>
          <button
            type="button"
            className="primary"
            disabled={!preview?.dry_run || preview.summary.conflict > 0 || run.isPending}
            onClick={() => run.mutate(false)}
          >
            Apply
          </button>
        </div>
        {run.isPending ? <progress aria-label="Importing" /> : null}
        <ErrorNote error={run.error} />
        {preview ? (
          <>
            {preview.applied ? <Notice>Applied in one transaction.</Notice> : null}
            <p>
              Create {preview.summary.create} · update {preview.summary.update} · unchanged {preview.summary.unchanged}{' '}
              · conflict {preview.summary.conflict}
            </p>
            <DataTable
              caption="Import diff"
              rows={preview.items}
              rowKey={(i) => `${i.kind}:${i.name}`}
              columns={[
                { header: 'Kind', cell: (i) => i.kind.replace(/_/g, ' ') },
                { header: 'Name', cell: (i) => i.name },
                { header: 'Action', cell: (i) => <Badge value={i.action === 'conflict' ? 'failed' : i.action} /> },
                { header: 'Changes', cell: (i) => (i.changes ?? []).join(', ') || i.reason || '' },
              ]}
            />
          </>
        ) : null}
      </section>
    </>
  );
}
