// The live tap: the events a destination receives, personal data masked (labels, codes and ids
// readable), streamed as NDJSON and shown as a scrolling view while it listens.
import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../../api/client';
import { ErrorNote } from '../../ui/kit';

export function Tap({ destinationId }: { destinationId: string }) {
  const [lines, setLines] = useState<string[]>([]);
  const [listening, setListening] = useState(false);
  const [error, setError] = useState<unknown>();
  const abort = useRef<AbortController>(undefined);
  const view = useRef<HTMLDivElement>(null);

  useEffect(() => () => abort.current?.abort(), []);
  useEffect(() => {
    view.current?.scrollTo({ top: view.current.scrollHeight });
  }, [lines]);

  async function listen() {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setError(undefined);
    setListening(true);
    try {
      const res = await fetch(
        `/api/collectors/destinations/${encodeURIComponent(destinationId)}/tap?seconds=60&limit=1000`,
        { credentials: 'same-origin', signal: controller.signal },
      );
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as { detail?: string };
        throw new ApiError(res.status, body.detail ?? `${res.status} ${res.statusText}`);
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let rest = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const parts = (rest + value).split('\n');
        rest = parts.pop() ?? '';
        const complete = parts.filter((l) => l.trim());
        if (complete.length) setLines((prev) => [...prev, ...complete].slice(-500));
      }
    } catch (err) {
      if (!controller.signal.aborted) setError(err);
    } finally {
      if (abort.current === controller) setListening(false);
    }
  }

  return (
    <section className="panel" aria-labelledby="tap">
      <h2 id="tap">Live tap (masked)</h2>
      <div className="row">
        {listening ? (
          <button type="button" onClick={() => abort.current?.abort()}>
            Stop
          </button>
        ) : (
          <button type="button" onClick={() => void listen()}>
            Watch for 60 s
          </button>
        )}
        <button type="button" onClick={() => setLines([])}>
          Clear
        </button>
        <span role="status">{listening ? `Listening… ${lines.length} events` : `${lines.length} events`}</span>
      </div>
      <p className="hint">
        Personal data (users, e-mail and IP addresses, hosts, messages) is masked for everyone; class names, captions,
        codes and ids are shown as the destination receives them.
      </p>
      <ErrorNote error={error} />
      <div ref={view} className="tap" tabIndex={0} role="log" aria-label="Tapped events" data-testid="tap">
        {lines.map((l, i) => (
          <div key={i}>{l}</div>
        ))}
      </div>
    </section>
  );
}
