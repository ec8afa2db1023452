// Route dry run: OCSF events in, which routes match and what each destination would receive.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useSession } from '../../session';
import { ErrorNote, Field, Json } from '../../ui/kit';

export function RouteDryRun() {
  const { organizationId, profile } = useSession();
  const [text, setText] = useState('[{"class_uid": 3002, "activity_id": 1, "severity_id": 1}]');
  const run = useMutation({
    mutationFn: () => {
      const parsed = JSON.parse(text) as unknown;
      const events = (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
      const org = organizationId ?? profile.organization_id;
      return call(
        api.POST('/api/collectors/routes/dry-run', { body: { events, ...(org ? { organization_id: org } : {}) } }),
      );
    },
  });
  return (
    <section className="panel" aria-labelledby="route-dry-run">
      <h2 id="route-dry-run">Dry run</h2>
      <Field label="OCSF events (JSON object or array)">
        {(id) => (
          <textarea id={id} rows={5} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} />
        )}
      </Field>
      <button type="button" onClick={() => run.mutate()} disabled={run.isPending}>
        Try the saved routes
      </button>
      <ErrorNote error={run.error} />
      {run.data ? (
        <>
          <ul aria-label="Dry-run results">
            {run.data.results.map((r) => (
              <li key={r.index}>
                Event {r.index + 1}:{' '}
                {r.routes.length
                  ? `matched ${r.routes.map((id) => run.data.routes.find((x) => x.id === id)?.name ?? id).join(', ')}`
                  : `filtered (${r.filtered ?? 'no route'})`}
                ; {r.copies.length} {r.copies.length === 1 ? 'copy' : 'copies'}
              </li>
            ))}
          </ul>
          <Json label="Dry-run totals" value={run.data.totals} />
        </>
      ) : null}
    </section>
  );
}
