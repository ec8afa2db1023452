// A detection's ATT&CK techniques and tactics by name (the API names them from MITRE's
// Enterprise data), and its evidence: the fields that matched with their values, then each
// evidence event with its own values and a link that opens it in Search (?q= with the event's
// id, ?from=/&to= around its time).
import { Link } from 'wouter';
import type { Ok } from '../../api/client';
import { DataTable, Time } from '../../ui/kit';

type Detection = Ok<'detections.get'>;

const named = (id: string, name: string | null) => (name ? `${id} ${name}` : id);

export function Attack({ attack }: { attack: Detection['attack'] }) {
  return (
    <section className="panel" aria-labelledby="mitre">
      <h2 id="mitre">MITRE ATT&amp;CK</h2>
      {attack.tactics.length + attack.techniques.length === 0 ? <p className="empty">None named.</p> : null}
      {attack.techniques.length ? (
        <ul aria-label="Techniques">
          {attack.techniques.map((t) => (
            <li key={t.id}>
              <a
                href={`https://attack.mitre.org/techniques/${t.id.replace('.', '/')}/`}
                rel="noreferrer"
                target="_blank"
              >
                {named(t.id, t.parent_name && t.name ? `${t.parent_name}: ${t.name}` : t.name)}
              </a>
              {t.tactics.length ? <> ({t.tactics.map((x) => x.name ?? x.id).join(', ')})</> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {attack.tactics.length ? (
        <p>
          Tactics:{' '}
          {attack.tactics.map((t, i) => (
            <span key={t.id}>
              {i ? ', ' : ''}
              {named(t.id, t.name)}
            </span>
          ))}
        </p>
      ) : null}
    </section>
  );
}

/** The search screen with the event's id typed and a range around its time. */
export function searchLink(eventId: string, time: string | null): string {
  const q = new URLSearchParams({ q: `envelope.id = "${eventId}"` });
  if (time) {
    const at = new Date(time).getTime();
    q.set('from', new Date(at - 3_600_000).toISOString());
    q.set('to', new Date(at + 3_600_000).toISOString());
  }
  return `/search?${q.toString()}`;
}

export function EvidencePanel({ detection: d }: { detection: Detection }) {
  const { fields, events } = d.evidence;
  return (
    <section className="panel" aria-labelledby="evidence">
      <h2 id="evidence">Evidence</h2>
      <p className="hint">
        {d.event_ids.length < d.event_count
          ? `The first ${d.event_ids.length} of ${d.event_count} events.`
          : `${d.event_count} event(s).`}{' '}
        Each opens in Search.
      </p>
      <DataTable
        caption="Fields that matched"
        rows={fields}
        rowKey={(f) => f.field}
        empty="The evidence events name none of the usual fields (actor, addresses, host, process, file)."
        columns={[
          { header: 'Field', cell: (f) => <code>{f.field}</code> },
          { header: 'Values', cell: (f) => f.values.join(', ') },
        ]}
      />
      <ul aria-label="Evidence events" className="evidence">
        {events.map((e, i) => (
          <li key={e.event_id}>
            <Link href={searchLink(e.event_id, e.time)}>Event {i + 1}</Link>
            {e.time ? (
              <>
                {' '}
                at <Time value={e.time} />
              </>
            ) : null}
            {e.from === 'none' ? (
              ' (no longer in the event store)'
            ) : (
              <>
                :{' '}
                {e.fields
                  .slice(0, 8)
                  .map((f) => `${f.field}=${f.value}`)
                  .join(', ') || 'none of the usual fields'}
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
