// Replay a result's query into a destination (POST /api/search/replay): the stored events
// that match the query over its range (made absolute when it ran) are delivered again,
// counted `replayed` in the ledger. Shown to callers who may (user.manage).
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { formatNumber } from '../../ui/format';
import { Badge, ErrorNote, Field, Progress } from '../../ui/kit';
import type { SearchResult } from './result';

export function Replay({ run }: { run: SearchResult }) {
  const [destination, setDestination] = useState('');
  const destinations = useQuery({
    queryKey: ['destinations', 'replay', run.organization_id],
    queryFn: () =>
      call(
        api.GET('/api/collectors/destinations', {
          params: { query: { organization_id: run.organization_id, limit: 200 } },
        }),
      ),
  });
  const q = (run.query ?? {}) as { time?: { from?: string; to?: string }; query?: string; where?: unknown };
  const start = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/search/replay', {
          body: {
            organization_id: run.organization_id,
            destination_id: destination,
            time: { ...(q.time?.from ? { from: q.time.from } : {}), ...(q.time?.to ? { to: q.time.to } : {}) },
            ...(q.query ? { query: q.query } : q.where !== undefined ? { where: q.where } : {}),
          },
        }),
      ),
  });
  const status = useQuery({
    queryKey: ['replay', start.data?.id],
    queryFn: () =>
      call(api.GET('/api/search/replay/{replay_id}', { params: { path: { replay_id: start.data?.id ?? '' } } })),
    enabled: start.data !== undefined,
    refetchInterval: (s) =>
      s.state.data && s.state.data.state !== 'queued' && s.state.data.state !== 'running' ? false : 1000,
  });
  const replay = status.data ?? start.data;
  return (
    <section className="panel" aria-labelledby="replay">
      <h2 id="replay">Replay into a destination</h2>
      <p className="hint">Delivers again every stored event this query matches over the same range, in time order.</p>
      <div className="row">
        <Field label="Destination">
          {(id) => (
            <select id={id} value={destination} onChange={(e) => setDestination(e.target.value)}>
              <option value="">Choose…</option>
              {(destinations.data?.items ?? [])
                .filter((d) => d.type !== 'event_store')
                .map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name} ({d.type})
                  </option>
                ))}
            </select>
          )}
        </Field>
        <button
          type="button"
          disabled={!destination || start.isPending || replay?.state === 'running' || replay?.state === 'queued'}
          onClick={() => start.mutate()}
        >
          Replay
        </button>
      </div>
      <ErrorNote error={destinations.error ?? start.error ?? status.error} />
      {replay ? (
        <p role="status">
          Replay <Badge value={replay.state} />: {formatNumber(replay.replayed)} of {formatNumber(replay.total)} events{' '}
          {replay.error ? `(${replay.error})` : ''}
        </p>
      ) : null}
      {replay && (replay.state === 'queued' || replay.state === 'running') ? (
        <Progress value={replay.progress} max={1} label="Replaying" />
      ) : null}
    </section>
  );
}
