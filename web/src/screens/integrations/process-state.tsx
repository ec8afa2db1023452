// What the panels of inputs run in Weir's processes (bus consumers, syslog listeners) share: the
// integration's status as those processes report it (GET /api/ingest/integrations/{id}, for
// user.manage, refreshed every few seconds) and the State column (a badge, and the error if any).
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { useSession } from '../../session';
import type { Column } from '../../ui/kit';

export function useProcessStatus(integrationId: number) {
  const { can } = useSession();
  return useQuery({
    queryKey: ['ingest-status', integrationId],
    queryFn: () =>
      call(
        api.GET('/api/ingest/integrations/{integration_id}', { params: { path: { integration_id: integrationId } } }),
      ),
    enabled: can('user.manage'),
    refetchInterval: 5_000,
  });
}

/** The State column: the state as a badge toned by `tones` (muted otherwise), then the error. */
export function stateColumn<R extends { state: string; error?: string | null }>(
  tones: Record<string, string>,
): Column<R> {
  return {
    header: 'State',
    cell: (r) => (
      <>
        <span className={`badge ${tones[r.state] ?? 'muted'}`}>{r.state}</span>
        {r.error ? <span className="error"> {r.error}</span> : null}
      </>
    ),
  };
}
