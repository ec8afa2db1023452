// Search: a query in its text form over the event store (POST /api/search, docs/search.md),
// a time range, the result (polled while it runs) with its aggregations and CSV, the history
// of your searches, the saved queries and their schedules (schedules.tsx). A query can be saved and its result replayed into a
// destination. `?q=` opens the screen with a query typed, `?from=`/`?to=` (RFC 3339) with that
// time range (the detection screen's evidence).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearch } from 'wouter';
import { api, call, type ApiError } from '../../api/client';
import { useSession } from '../../session';
import { ErrorNote, Field, Notice, PageHeader } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';
import { SavedQueries, SearchHistory } from './history';
import { fromDefinition, INITIAL, QueryForm, toDefinition, type FormState } from './query-form';
import { PAGE, ResultView } from './result';
import { Schedules } from './schedules';

export default function Search() {
  const session = useSession();
  const client = useQueryClient();
  const params = new URLSearchParams(useSearch());
  const typed = params.get('q');
  const [from, to] = [params.get('from'), params.get('to')];
  const [form, setForm] = useState<FormState>(() => ({
    ...INITIAL,
    ...(typed ? { text: typed } : {}),
    ...(from || to
      ? { ...fromDefinition({ time: { ...(from ? { from } : {}), ...(to ? { to } : {}) } }), text: typed ?? '' }
      : {}),
  }));
  const [organizationId, setOrganizationId] = useState<number | null>(
    session.organizationId ?? session.profile.organization_id,
  );
  const [searchId, setSearchId] = useState<string>();
  const [name, setName] = useState('');

  const shown = (id: string) => {
    setSearchId(id);
    void client.invalidateQueries({ queryKey: ['search-history'] });
  };
  const run = useMutation<{ id: string }, ApiError, { query_id?: string }>({
    mutationFn: async ({ query_id }) => {
      const answer = await call(
        api.POST('/api/search', {
          body: query_id ? { query_id, wait_ms: 5000 } : { query: toDefinition(form, organizationId), wait_ms: 5000 },
        }),
      );
      // A search that completed within the wait answers its first page: no second call for it.
      if ('rows' in answer) client.setQueryData(['search-result', answer.id, 0], answer);
      return answer;
    },
    onSuccess: (r) => shown(r.id),
  });
  const save = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/queries/', {
          body: {
            name,
            ...(organizationId ? { organization_id: organizationId } : {}),
            query: toDefinition(form, null),
          },
        }),
      ),
    onSuccess: () => {
      setName('');
      void client.invalidateQueries({ queryKey: ['saved-queries'] });
    },
  });
  const edit = (query: unknown) => {
    setForm(fromDefinition(query));
    run.reset();
  };

  return (
    <>
      <PageHeader title="Search" />
      <OrgSelect value={organizationId} onChange={setOrganizationId} />
      <QueryForm
        state={form}
        onChange={setForm}
        onRun={() => run.mutate({})}
        running={run.isPending}
        error={run.error?.status === 422 ? run.error : null}
      />
      {run.error && run.error.status !== 422 ? <ErrorNote error={run.error} /> : null}
      {session.can('query.save') ? (
        <form
          className="row"
          aria-label="Save the query"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Field label="Save as">
            {(id) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <button type="submit" disabled={save.isPending}>
            Save query
          </button>
          <ErrorNote error={save.error} />
          {save.data ? <Notice>Saved "{save.data.name}".</Notice> : null}
        </form>
      ) : null}
      {searchId ? <ResultView key={searchId} searchId={searchId} /> : null}
      <div className="split">
        <SearchHistory onOpen={shown} onEdit={edit} />
        <SavedQueries onRun={(query_id) => run.mutate({ query_id })} onEdit={edit} />
      </div>
      <Schedules onOpen={shown} />
      <p className="hint">Results show {PAGE} rows a page; the CSV has every row kept.</p>
    </>
  );
}
