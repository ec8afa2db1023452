// Where and how to send to an integration: the ingest URL of each stream its platform's
// built-in mappings read (any name for a custom source), a copyable curl command with one of
// the platform's own sample events, and "Send sample events", which pushes the samples the
// built-in mappings carry (POST /api/integrations/{id}/sample-events) through the ingest path.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call, type Ok } from '../../api/client';
import { useSession } from '../../session';
import { ErrorNote, Field, Notice } from '../../ui/kit';

type Samples = Ok<'integrations.sample_events'>;
type Stream = Samples['streams'][number];

/** The stream a custom source's example pushes to: any name works, each stream has its own mapping. */
const CUSTOM_STREAM = 'events';
const CUSTOM_EXAMPLE = '{"time": "2026-01-01T12:00:00Z", "user": "alice", "action": "login", "result": "success"}';

export const TOKEN_PLACEHOLDER = '$INGEST_TOKEN';

/** The push URL of a stream on this server. */
export function ingestUrl(stream: string): string {
  return `${window.location.origin}/api/ingest/${stream}`;
}

/** A POSIX shell single-quoted word. */
function quoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The curl command that pushes `body` to a stream: NDJSON for JSON streams, text/plain lines for text ones. */
export function curlCommand(stream: string, body: string, text: boolean, token?: string): string {
  return [
    `curl -X POST ${quoted(ingestUrl(stream))}`,
    `  -H "Authorization: Bearer ${token ?? TOKEN_PLACEHOLDER}"`,
    `  -H 'Content-Type: ${text ? 'text/plain' : 'application/x-ndjson'}'`,
    `  --data-binary ${quoted(body)}`,
  ].join(' \\\n');
}

export function useSampleStreams(integrationId: number | undefined) {
  return useQuery({
    queryKey: ['sample-events', integrationId],
    queryFn: () =>
      call(
        api.GET('/api/integrations/{integration_id}/sample-events', {
          params: { path: { integration_id: integrationId ?? 0 } },
        }),
      ),
    enabled: integrationId !== undefined,
    staleTime: 300_000,
  });
}

/** The command and a Copy button, for one stream (or a custom source's example). */
export function SendCommand({ stream, token, label }: { stream: Stream | undefined; token?: string; label: string }) {
  const name = stream?.stream ?? CUSTOM_STREAM;
  const command = curlCommand(name, stream?.example ?? CUSTOM_EXAMPLE, stream?.text ?? false, token);
  const [copied, setCopied] = useState(false);
  const copy = () =>
    void navigator.clipboard?.writeText(command).then(
      () => setCopied(true),
      () => undefined,
    );
  return (
    <>
      <pre className="json" tabIndex={0} aria-label={label} data-testid="send-command">
        {command}
      </pre>
      <p className="row">
        <button type="button" onClick={copy}>
          Copy command
        </button>
        {copied ? <span role="status">Copied.</span> : null}
      </p>
      {token ? (
        <p className="hint">The command carries the ingestion token made on this page: keep it out of shared notes.</p>
      ) : (
        <p className="hint">
          Set <code>INGEST_TOKEN</code> to the integration&apos;s ingestion token first (
          <code>export INGEST_TOKEN=svcik_…</code>): it is shown once, when made with New ingestion token on the
          integration&apos;s page.
        </p>
      )}
    </>
  );
}

export function HowToSend({
  integration,
  token,
}: {
  integration: { id: number; platform: string; is_active: boolean };
  token?: string | undefined;
}) {
  const { can } = useSession();
  const client = useQueryClient();
  const samples = useSampleStreams(integration.id);
  const streams = samples.data?.streams ?? [];
  const [chosen, setChosen] = useState('');
  const stream = streams.find((s) => s.stream === chosen) ?? streams[0];
  const total = streams.reduce((n, s) => n + s.events, 0);
  const send = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/integrations/{integration_id}/sample-events', {
          params: { path: { integration_id: integration.id } },
          body: {},
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['dashboard'] }),
  });

  return (
    <section className="panel" aria-labelledby="how-to-send">
      <h2 id="how-to-send">Where and how to send</h2>
      <ErrorNote error={samples.error ?? send.error} />
      {samples.data ? (
        <>
          <dl>
            <dt>Ingest URL</dt>
            <dd>
              <code data-testid="ingest-url">{ingestUrl(stream?.stream ?? '<stream>')}</code>
            </dd>
            <dt>Streams</dt>
            <dd data-testid="ingest-streams">
              {streams.length > 0 ? (
                <>
                  {streams.map((s, i) => (
                    <span key={s.stream}>
                      {i > 0 ? ', ' : ''}
                      <code>{s.stream}</code> ({s.text ? 'text, one event per line' : 'JSON objects'})
                    </span>
                  ))}
                  <span className="hint"> (read by the built-in {integration.platform} mappings)</span>
                </>
              ) : (
                <span>
                  Any name you choose (letters, digits, <code>_ . -</code>), such as <code>{CUSTOM_STREAM}</code>: each
                  stream gets its own mapping, written under <Link href="/mappings">Mappings</Link> from the events it
                  receives.
                </span>
              )}
            </dd>
            <dt>Authentication</dt>
            <dd>
              The integration&apos;s ingestion token, as <code>Authorization: Bearer</code> or{' '}
              <code>X-Ingest-Token</code>. A body is one JSON object, a JSON array or NDJSON.
            </dd>
          </dl>
          {streams.length > 1 ? (
            <Field label="Example stream">
              {(id) => (
                <select id={id} value={stream?.stream ?? ''} onChange={(e) => setChosen(e.target.value)}>
                  {streams.map((s) => (
                    <option key={s.stream} value={s.stream}>
                      {s.stream}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          ) : null}
          <SendCommand stream={stream} token={token} label="Example command" />
          {total > 0 && can('integration.write') ? (
            <>
              <h3>Sample events</h3>
              <p>
                The built-in {integration.platform} mappings carry {total} sample events, written from the vendor&apos;s
                documentation. Sent to this integration as a sender would send them, they are counted, normalized,
                routed and searchable like any other event. Each send adds them again.
              </p>
              <button
                type="button"
                className="primary"
                onClick={() => send.mutate()}
                disabled={send.isPending || !integration.is_active}
              >
                Send sample events
              </button>
              {send.data ? (
                <Notice>
                  Accepted {send.data.accepted} sample events (
                  {send.data.streams.map((s) => `${s.stream}: ${s.accepted}`).join(', ')}).{' '}
                  {can('mapping.read') ? <Link href="/search">Search them</Link> : null}
                </Notice>
              ) : null}
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
