// The import's first gate: a document this Weir reads (format, version, shape, depth), with
// names unique per kind and mapping histories coherent, before anything is planned.
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';
import { canonicalJson } from '../../core/canonical.js';
import { AppError } from '../../core/errors.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION, ConfigBundle, MAX_DEPTH } from './schema.js';

type Json = Record<string, unknown>;

function depth(v: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [node, d] = stack.pop()!;
    if (d > limit) return false;
    if (typeof node === 'object' && node !== null) for (const c of Object.values(node)) stack.push([c, d + 1]);
  }
  return true;
}

/** 422 unless the document is a bundle of a format and version this Weir reads, of a valid shape. */
export function checkDocument(doc: Json): ConfigBundle {
  if (doc.format !== BUNDLE_FORMAT) {
    throw new AppError('config_bundle.unsupported_version', {
      detail: `document/format must be "${BUNDLE_FORMAT}"`,
      details: { errors: [{ location: 'body/document/format', message: `must be "${BUNDLE_FORMAT}"` }] },
    });
  }
  if (
    typeof doc.version !== 'number' ||
    !Number.isInteger(doc.version) ||
    doc.version < 1 ||
    doc.version > BUNDLE_VERSION
  ) {
    const newer = typeof doc.version === 'number' && doc.version > BUNDLE_VERSION;
    throw new AppError('config_bundle.unsupported_version', {
      detail: newer
        ? `document/version ${doc.version} is newer than this Weir reads (${BUNDLE_VERSION}); upgrade Weir or export with the version you run`
        : `document/version must be an integer from 1 to ${BUNDLE_VERSION}`,
      details: {
        supported: [BUNDLE_VERSION],
        errors: [{ location: 'body/document/version', message: `must be ${BUNDLE_VERSION}` }],
      },
    });
  }
  if (!depth(doc, MAX_DEPTH))
    throw invalid([{ location: 'body/document', message: `is nested deeper than ${MAX_DEPTH} levels` }]);
  const saved = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 20 });
  try {
    if (!Value.Check(ConfigBundle, doc)) {
      throw invalid(
        [...Value.Errors(ConfigBundle, doc)]
          .filter((e) => !e.schemaPath.includes('/anyOf/'))
          .slice(0, 20)
          .map((e) => ({ location: `body/document${e.instancePath}`, message: e.message })),
      );
    }
  } finally {
    Settings.Set({ maxErrors: saved });
  }
  const bundle = doc as unknown as ConfigBundle;
  const problems: { location: string; message: string }[] = [];
  for (const key of [
    'integrations',
    'mappings',
    'destinations',
    'routes',
    'enrichment_tables',
    'enrichment_sources',
    'enrichment_policies',
    'detection_rules',
    'saved_queries',
    'schedules',
  ] as const) {
    const seen = new Set<string>();
    (bundle[key] ?? []).forEach((o, i) => {
      const k = key === 'integrations' ? o.name.toLowerCase() : o.name;
      if (seen.has(k))
        problems.push({ location: `body/document/${key}/${i}/name`, message: `"${o.name}" is listed twice` });
      seen.add(k);
    });
  }
  bundle.mappings.forEach((m, i) => {
    if (!m.versions?.length) return;
    const numbers = m.versions.map((v) => v.version);
    if (numbers.some((n, j) => j > 0 && n <= numbers[j - 1]!))
      problems.push({
        location: `body/document/mappings/${i}/versions`,
        message: 'must be in increasing version order',
      });
    const live = m.versions.find((v) => v.version === m.version);
    if (!live)
      problems.push({
        location: `body/document/mappings/${i}/version`,
        message: 'must be the number of one of its versions (the live one)',
      });
    else if (canonicalJson(live.document) !== canonicalJson(m.document))
      problems.push({
        location: `body/document/mappings/${i}/document`,
        message: `must equal version ${live.version}'s document (the live one)`,
      });
  });
  if (problems.length) throw invalid(problems);
  return bundle;
}

function invalid(errors: { location: string; message: string }[]): AppError {
  const first = errors[0] ?? { location: 'body/document', message: 'is not valid' };
  return new AppError('config_bundle.invalid_document', {
    detail: `${first.location} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
    details: { errors },
  });
}
