// A route's versions: its change history (audit) and a rollback to an earlier version.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call, type Ok } from '../../api/client';
import { useSession } from '../../session';
import { DataTable, ErrorNote, Field, Notice, Time } from '../../ui/kit';

export function RouteVersions({ route }: { route: Ok<'routes.get'> }) {
  const { can } = useSession();
  const client = useQueryClient();
  const [version, setVersion] = useState(Math.max(1, route.version - 1));
  const history = useQuery({
    queryKey: ['route-audit', route.id],
    queryFn: () =>
      call(
        api.GET('/api/collectors/routes/{route_id}/audit', {
          params: { path: { route_id: route.id }, query: { limit: 50 } },
        }),
      ),
  });
  const rollback = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/collectors/routes/{route_id}/rollback', {
          params: { path: { route_id: route.id } },
          body: { version },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['routes'] }),
  });
  return (
    <>
      <p>Current version: v{route.version}</p>
      {can('user.manage') && route.version > 1 ? (
        <div className="row">
          <Field label="Roll back to version">
            {(id) => (
              <input
                id={id}
                type="number"
                min={1}
                max={route.version - 1}
                value={version}
                onChange={(e) => setVersion(Number(e.target.value))}
              />
            )}
          </Field>
          <button type="button" onClick={() => rollback.mutate()} disabled={rollback.isPending}>
            Roll back
          </button>
        </div>
      ) : null}
      <ErrorNote error={history.error ?? rollback.error} />
      {rollback.data ? <Notice>Rolled back: now v{rollback.data.version}.</Notice> : null}
      <DataTable
        caption="Route history"
        rows={history.data?.items ?? []}
        rowKey={(e) => e.seq}
        columns={[
          { header: 'When', cell: (e) => <Time value={e.at} /> },
          { header: 'Who', cell: (e) => e.actor_name ?? e.actor_kind },
          { header: 'Change', cell: (e) => e.operation_id },
          { header: 'Outcome', cell: (e) => e.outcome },
        ]}
      />
    </>
  );
}
