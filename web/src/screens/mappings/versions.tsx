// A definition's versions: diff any two, load one into the editor, roll back to one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useSession } from '../../session';
import { Badge, DataTable, ErrorNote, Field, Notice, Time } from '../../ui/kit';

export function Versions({ definitionId, onLoad }: { definitionId: string; onLoad: (document: unknown) => void }) {
  const { can } = useSession();
  const client = useQueryClient();
  const [a, setA] = useState('');
  const [b, setB] = useState('');
  const versions = useQuery({
    queryKey: ['mapping-versions', definitionId],
    queryFn: () =>
      call(
        api.GET('/api/mappings/{definition_id}/versions', {
          params: { path: { definition_id: definitionId }, query: { limit: 100 } },
        }),
      ),
  });
  const diff = useQuery({
    queryKey: ['mapping-diff', definitionId, a, b],
    queryFn: () =>
      call(
        api.GET('/api/mappings/{definition_id}/versions/{version_a_id}/diff/{version_b_id}', {
          params: { path: { definition_id: definitionId, version_a_id: a, version_b_id: b } },
        }),
      ),
    enabled: a !== '' && b !== '' && a !== b,
  });
  const load = useMutation({
    mutationFn: (versionId: string) =>
      call(
        api.GET('/api/mappings/{definition_id}/versions/{version_id}', {
          params: { path: { definition_id: definitionId, version_id: versionId } },
        }),
      ),
    onSuccess: (v) => onLoad(v.document),
  });
  const rollback = useMutation({
    mutationFn: (versionId: string) =>
      call(
        api.POST('/api/mappings/{definition_id}/rollback', {
          params: { path: { definition_id: definitionId } },
          body: { version_id: versionId },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['mapping-versions', definitionId] });
      void client.invalidateQueries({ queryKey: ['mapping', definitionId] });
    },
  });
  const items = versions.data?.items ?? [];
  const pick = (label: string, value: string, set: (v: string) => void) => (
    <Field label={label}>
      {(id) => (
        <select id={id} value={value} onChange={(e) => set(e.target.value)}>
          <option value="">Choose…</option>
          {items.map((v) => (
            <option key={v.id} value={v.id}>
              v{v.version}
              {v.is_live ? ' (live)' : ''}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
  return (
    <section className="panel" aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <ErrorNote error={versions.error ?? load.error ?? rollback.error} />
      {rollback.data ? <Notice>Rolled back: v{rollback.data.live_version?.version} is live.</Notice> : null}
      <DataTable
        caption="Mapping versions"
        rows={items}
        rowKey={(v) => v.id}
        empty="No version published yet."
        columns={[
          {
            header: 'Version',
            cell: (v) => (
              <>
                v{v.version} {v.is_live ? <Badge value="live" /> : null}
              </>
            ),
          },
          { header: 'Comment', cell: (v) => v.comment ?? '' },
          { header: 'Published', cell: (v) => <Time value={v.created_at} /> },
          {
            header: 'Actions',
            cell: (v) => (
              <span className="row">
                <button type="button" onClick={() => load.mutate(v.id)}>
                  Edit from v{v.version}
                </button>
                {can('mapping.rollback') && !v.is_live ? (
                  <button
                    type="button"
                    onClick={() => window.confirm(`Make v${v.version} live again?`) && rollback.mutate(v.id)}
                  >
                    Roll back to v{v.version}
                  </button>
                ) : null}
              </span>
            ),
          },
        ]}
      />
      {items.length > 1 ? (
        <>
          <h3>Diff</h3>
          <div className="row">
            {pick('From', a, setA)}
            {pick('To', b, setB)}
          </div>
          <ErrorNote error={diff.error} />
          {diff.data ? (
            diff.data.changes.length === 0 ? (
              <p>The two versions are the same.</p>
            ) : (
              <ul aria-label="Changes">
                {diff.data.changes.map((c) => (
                  <li key={`${c.op}${c.path}`}>
                    <code>{c.path}</code> {c.op}
                    {c.op !== 'add' ? <span className="diff-remove"> − {JSON.stringify(c.from)}</span> : null}
                    {c.op !== 'remove' ? <span className="diff-add"> + {JSON.stringify(c.to)}</span> : null}
                  </li>
                ))}
              </ul>
            )
          ) : null}
        </>
      ) : null}
    </section>
  );
}
