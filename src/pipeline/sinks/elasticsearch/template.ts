// The index template Weir puts before its first _bulk (unless manage_template is false): the
// mappings that decide how OCSF events can be searched. Elasticsearch's dynamic mapping
// would map OCSF's epoch-millisecond times as long and IP addresses as text; this maps
// `@timestamp` (written from `time` into every document) and every `*_time` long as dates,
// and every field named `ip` as an ip (ignore_malformed, so one bad value never refuses a
// document). Everything else stays dynamic: correct rather than complete.
import { DeliveryError } from '../types.js';

/** The index pattern a template covers: the index with its {yyyy.MM.dd} parts as "*". */
export function templatePattern(index: string): string {
  return index.replace(/\{[^}]*\}/g, '*');
}

/** The template's name: weir- and the pattern, with what a name may not hold replaced. */
export function templateName(index: string): string {
  return `weir-${templatePattern(index).replace(/[*?"<>|, /\\#:]+/g, '-')}`.replace(/-+$/, '').slice(0, 255);
}

/** The composable index template (PUT /_index_template/{name}) for an index or a data stream. */
export function indexTemplate(index: string, dataStream: boolean): Record<string, unknown> {
  return {
    index_patterns: [templatePattern(index)],
    // Above the built-in logs-*-* (100), so a data stream named logs-... takes these mappings.
    priority: 200,
    ...(dataStream ? { data_stream: {} } : {}),
    template: {
      mappings: {
        dynamic_templates: [
          {
            ocsf_times: {
              match_mapping_type: 'long',
              match: '*_time',
              mapping: { type: 'date', format: 'epoch_millis' },
            },
          },
          { ocsf_ips: { match: 'ip', mapping: { type: 'ip', ignore_malformed: true } } },
        ],
        properties: {
          '@timestamp': { type: 'date' },
          time: { type: 'date', format: 'epoch_millis' },
          message: { type: 'text' },
          raw_data: { type: 'text', index: false },
        },
      },
    },
    _meta: { managed_by: 'weir', description: 'OCSF events delivered by Weir' },
  };
}

/** A data stream's name is fixed: no date parts (Elasticsearch rolls it over itself). */
export function checkDataStreamIndex(index: string): void {
  if (index.includes('{'))
    throw new DeliveryError(
      'config',
      `index "${index}": a data stream has one name, without date parts (Elasticsearch rolls its backing indices over)`,
    );
}

/**
 * `@timestamp` first in the document, from the OCSF `time` (epoch milliseconds) as ISO 8601;
 * the line as is when it has no number `time` or already has an `@timestamp`.
 */
export function withTimestamp(line: string, time: unknown): string {
  if (typeof time !== 'number' || !Number.isFinite(time) || line.includes('"@timestamp"')) return line;
  const d = new Date(time);
  if (Number.isNaN(d.getTime())) return line;
  const rest = line.slice(1).trimStart();
  return `{"@timestamp":"${d.toISOString()}"${rest.startsWith('}') ? '' : ','}${rest}`;
}
