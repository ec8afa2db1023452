// Events built from a Sigma rule's own detection, for the end-to-end test
// (test/sigma/semantic.test.ts): a `positive` event the rule matches, and for each filter (an
// identifier the condition negates) a `negative`: the positive event with values that make the
// filter hold, which the rule must not match. Events are flat and keyed by Sigma field names;
// the reference matcher (matcher.ts) decides what "matches" means, never Weir's compiler.
//
// How: the condition is turned into alternatives (a disjunctive normal form over identifiers,
// each either required to hold or to fail); alternatives are tried in order. For every
// identifier required to hold, one of its maps and one value of each item are chosen, the
// values each field must take are combined into one (contains: padded before and after,
// startswith: after, endswith: before, wildcards filled, cidr: an address inside, gt: a larger
// number, re: a string generated from the expression, base64: the encoded text, null: the field
// left out), and the event is kept when the matcher accepts it. Fields only identifiers
// required to fail name are left out, unless their absence makes such an identifier hold
// (`filter: {Field: null}`), in which case they get a value.
import RandExpModule from 'randexp';
import ipaddr from 'ipaddr.js';
import { seededRandom } from '../webhook-receiver.js';
import {
  encodedForms,
  identifierHolds,
  isRecord,
  itemHolds,
  matches,
  parseDetection,
  plainText,
  sigmaPieces,
  UnsupportedSigma,
  type Cond,
  type Item,
  type Json,
  type ParsedDetection,
  type SigmaEvent,
} from './matcher.js';

// randexp is CommonJS (module.exports = RandExp); its typings describe an ES default export.
const RandExp = ((RandExpModule as unknown as { default?: unknown }).default ??
  RandExpModule) as unknown as typeof RandExpModule.default;

export interface GenerateOptions {
  /** The rule's detection already parsed (parseDetection), to parse it once for several calls. */
  parsed?: ParsedDetection;
  /** Only these fields may be given a value (the fields a logsource variant's events have); by Sigma name as the rule writes it. */
  allowField?: (field: string) => boolean;
  /** The EventIDs the event may have (a variant's `eventIds`). */
  eventIds?: readonly string[];
  /** Whether a plain value of a field can occur in these events (an enum value the variant never has cannot). */
  allowValue?: (field: string, value: unknown) => boolean;
  /** The text a field's values are padded with (before, between parts, after) and wildcards filled with; default `x` everywhere. */
  pad?: (field: string) => Pad | undefined;
}

export interface Pad {
  before: string;
  between: string;
  after: string;
  /** What `*` and `?` stand for inside a value. */
  fill: string;
}

const PAD: Pad = { before: 'x', between: 'x', after: 'x', fill: 'x' };

export interface Negative {
  /** The negated identifier made to hold. */
  filter: string;
  event: SigmaEvent;
}

export type Generated =
  | {
      ok: true;
      positive: SigmaEvent;
      negatives: Negative[];
      /** Filters for which no event makes the filter hold while the rule does not match (with why). */
      skipped: { filter: string; why: string }[];
    }
  | { ok: false; reason: string };

/** A literal of the normal form: an identifier that must hold (neg false) or fail. */
interface Lit {
  id: string;
  neg: boolean;
}

const MAX_TERMS = 256;
const ATTEMPTS = 24;

/** The condition as alternatives (OR) of conjunctions of literals, in the order the condition writes them. */
export function normalForm(c: Cond, neg = false): Lit[][] {
  if ('id' in c) return [[{ id: c.id, neg }]];
  if ('not' in c) return normalForm(c.not, !neg);
  const parts = 'and' in c ? c.and : c.or;
  const conjunction = 'and' in c !== neg;
  const forms = parts.map((p) => normalForm(p, neg));
  if (!conjunction) return forms.flat().slice(0, MAX_TERMS);
  let acc: Lit[][] = [[]];
  for (const f of forms) {
    const next: Lit[][] = [];
    for (const a of acc) {
      for (const b of f) {
        const term = [...a];
        let contradiction = false;
        for (const l of b) {
          const same = term.find((x) => x.id === l.id);
          if (!same) term.push(l);
          else if (same.neg !== l.neg) contradiction = true;
        }
        if (!contradiction) next.push(term);
        if (next.length >= MAX_TERMS) break;
      }
      if (next.length >= MAX_TERMS) break;
    }
    acc = next;
  }
  return acc;
}

/** One item with the values chosen for it (one value, or every value under `|all`). */
interface Chosen {
  item: Item;
  values: unknown[];
}

const lower = (s: string) => s.toLowerCase();
const isEventId = (field: string) => lower(field) === 'eventid';
const absentValue = (item: Item, value: unknown) =>
  item.mods.has('exists') ? value === false || value === 'false' : value === null;

/**
 * Chooses a map of the identifier and a value for each of its items (attempt 0: the first of
 * each; later attempts: drawn from `rand`), within the options; undefined when the map cannot be
 * satisfied there (a field not allowed, no allowed EventID).
 */
function choose(maps: Item[][], attempt: number, rand: () => number, opts: GenerateOptions): Chosen[] | undefined {
  const order = maps.map((_, i) => i);
  if (attempt > 0) order.sort(() => rand() - 0.5);
  for (const mi of order) {
    const out: Chosen[] = [];
    let ok = true;
    for (const item of maps[mi]!) {
      let values = item.values;
      if (opts.allowField && !opts.allowField(item.field)) {
        // A field the events lack: only an item that asks for its absence can hold.
        values = values.filter((v) => absentValue(item, v));
        if (item.mods.has('all') && values.length !== item.values.length) values = [];
      }
      if (isEventId(item.field) && opts.eventIds && !item.mods.has('exists')) {
        values = values.filter((v) => v !== null && opts.eventIds!.includes(String(v)));
      }
      if (opts.allowValue && item.mods.size === 0)
        values = values.filter((v) => v === null || opts.allowValue!(item.field, v));
      if (item.mods.has('all') && values.length !== item.values.length) values = [];
      if (!values.length) {
        ok = false;
        break;
      }
      if (item.mods.has('all')) out.push({ item, values });
      else out.push({ item, values: [attempt === 0 ? values[0] : values[Math.floor(rand() * values.length)]] });
    }
    if (ok) return out;
  }
  return undefined;
}

/** A text value's shape: anchored at the start and/or end, and its text with wildcards filled. */
interface Shape {
  start: boolean;
  end: boolean;
  text: string;
  /** The YAML value, when it is the whole value (a number or boolean keeps its type). */
  typed?: string | number | boolean;
}

function shapeOf(item: Item, value: unknown, pad: Pad): Shape {
  const m = item.mods;
  const { forms, literal } = encodedForms(String(value), m);
  const form = forms[0]!;
  const pieces = literal ? [{ lit: form }] : sigmaPieces(form);
  let start = !(m.has('contains') || m.has('endswith'));
  let end = !(m.has('contains') || m.has('startswith'));
  if (pieces.length && 'any' in pieces[0]!) start = false;
  if (pieces.length && 'any' in pieces[pieces.length - 1]!) end = false;
  const inner = pieces.slice(pieces.length && 'any' in pieces[0]! ? 1 : 0);
  if (inner.length && 'any' in inner[inner.length - 1]!) inner.pop();
  const text = inner.map((p) => ('lit' in p ? p.lit : 'any' in p ? pad.fill : pad.fill.slice(0, 1) || 'x')).join('');
  const whole = start && end && !literal && plainText(String(value)) !== undefined && typeof value !== 'string';
  return { start, end, text, ...(whole ? { typed: value as number | boolean } : {}) };
}

/**
 * A value for the text shapes: an exact one alone, else the longest prefix (or the pad before),
 * the inner parts and the longest suffix (or the pad after), joined by the pad between.
 */
function fromShapes(shapes: Shape[], pad: Pad): string | number | boolean | undefined {
  if (!shapes.length) return undefined;
  const exact = shapes.find((s) => s.start && s.end);
  if (exact) return exact.typed ?? exact.text;
  const longest = (xs: Shape[]) => xs.sort((a, b) => b.text.length - a.text.length)[0]?.text;
  const prefix = longest(shapes.filter((s) => s.start));
  const suffix = longest(shapes.filter((s) => s.end));
  const mids = [...new Set(shapes.filter((s) => !s.start && !s.end).map((s) => s.text))];
  const parts = [...(prefix !== undefined ? [prefix] : []), ...mids, ...(suffix !== undefined ? [suffix] : [])];
  return (prefix === undefined ? pad.before : '') + parts.join(pad.between) + (suffix === undefined ? pad.after : '');
}

function addressIn(cidr: string): string | undefined {
  try {
    const [addr, bits] = ipaddr.parseCIDR(cidr);
    const bytes = addr.toByteArray();
    const total = bytes.length * 8;
    // The network address, then the first host when the range has more than one address.
    for (let b = bits; b < total; b++) bytes[b >> 3]! &= ~(0x80 >> (b & 7));
    if (total - bits >= 2) bytes[bytes.length - 1]! |= 1;
    return ipaddr.fromByteArray(bytes).toString();
  } catch {
    return undefined;
  }
}

/** Strings the regular expression generates (randexp; JavaScript syntax, leading inline flags read as flags). */
function regexSamples(pattern: string, ci: boolean, rand: () => number, n: number): string[] {
  let p = pattern;
  let ignoreCase = ci;
  const inline = /^\(\?([imsx]+)\)/.exec(p);
  if (inline) {
    if (inline[1]!.includes('i')) ignoreCase = true;
    p = p.slice(inline[0].length);
  }
  let gen: InstanceType<typeof RandExp>;
  try {
    gen = new RandExp(p, ignoreCase ? 'i' : '');
  } catch {
    return [];
  }
  gen.max = 3;
  gen.randInt = (a: number, b: number) => a + Math.floor(rand() * (b - a + 1));
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push(gen.gen());
    } catch {
      break;
    }
  }
  return out;
}

const ABSENT = Symbol('absent');
type FieldValue = string | number | boolean | typeof ABSENT;

/** A value of one field that every chosen item on it holds for; undefined when none was found. */
function fieldValueFor(
  field: string,
  chosen: Chosen[],
  rand: () => number,
  opts: GenerateOptions,
): FieldValue | undefined {
  const pad = opts.pad?.(field) ?? PAD;
  const holds = (v: FieldValue) => {
    const ev: SigmaEvent = v === ABSENT ? {} : { [field]: v };
    return chosen.every((c) => itemHolds({ ...c.item, values: c.values }, ev));
  };
  const wantsAbsent = chosen.filter((c) => c.values.some((v) => absentValue(c.item, v)));
  if (wantsAbsent.length) return holds(ABSENT) ? ABSENT : undefined;
  const candidates: FieldValue[] = [];
  const compare = chosen.filter((c) => ['gt', 'gte', 'lt', 'lte'].some((m) => c.item.mods.has(m as never)));
  const cidr = chosen.filter((c) => c.item.mods.has('cidr'));
  const re = chosen.filter((c) => c.item.mods.has('re'));
  const text = chosen.filter(
    (c) => !compare.includes(c) && !cidr.includes(c) && !re.includes(c) && !c.item.mods.has('exists'),
  );
  if (compare.length) {
    let lo = -Infinity;
    let hi = Infinity;
    for (const c of compare) {
      for (const v of c.values) {
        const n = Number(v);
        if (c.item.mods.has('gt')) lo = Math.max(lo, n + 1);
        else if (c.item.mods.has('gte')) lo = Math.max(lo, n);
        else if (c.item.mods.has('lt')) hi = Math.min(hi, n - 1);
        else hi = Math.min(hi, n);
      }
    }
    candidates.push(lo > -Infinity ? lo : hi < Infinity ? hi : 1);
  }
  for (const c of cidr)
    for (const v of c.values) {
      const a = addressIn(String(v));
      if (a) candidates.push(a);
    }
  const shapes = text.flatMap((c) => c.values.map((v) => shapeOf(c.item, v, pad)));
  const base = fromShapes(shapes, pad);
  if (base !== undefined) candidates.push(base);
  if (re.length) {
    const samples = re.flatMap((c) => c.values.flatMap((v) => regexSamples(String(v), c.item.mods.has('i'), rand, 6)));
    for (const s of samples) {
      if (base !== undefined) candidates.push(`${base} ${s}`, `${s} ${base}`);
      candidates.push(s);
    }
  }
  if (!candidates.length) candidates.push(pad.fill); // only `exists: true`
  return candidates.find(holds);
}

/** An event in which every chosen item holds (fields grouped ignoring case, named as first written); undefined when some field has no such value. */
function build(chosen: Chosen[], rand: () => number, opts: GenerateOptions): SigmaEvent | undefined {
  const byField = new Map<string, { name: string; chosen: Chosen[] }>();
  for (const c of chosen) {
    const k = lower(c.item.field);
    const g = byField.get(k) ?? { name: c.item.field, chosen: [] };
    g.chosen.push(c);
    byField.set(k, g);
  }
  const ev: SigmaEvent = {};
  for (const { name, chosen: cs } of byField.values()) {
    const v = fieldValueFor(name, cs, rand, opts);
    if (v === undefined) return undefined;
    if (v !== ABSENT) ev[name] = v;
  }
  return ev;
}

/** Gives a value to fields whose absence makes an identifier that must fail hold (`Field: null`, `Field|exists: false`). */
function breakAbsences(
  d: ParsedDetection,
  ev: SigmaEvent,
  mustFail: string[],
  fixed: Set<string>,
  opts: GenerateOptions,
): SigmaEvent {
  const out = { ...ev };
  for (let round = 0; round < 4; round++) {
    const holding = mustFail.filter((id) => identifierHolds(d, id, out));
    if (!holding.length) break;
    let changed = false;
    for (const id of holding) {
      for (const items of d.ids.get(id)!) {
        for (const item of items) {
          const k = lower(item.field);
          if (fixed.has(k) || Object.keys(out).some((f) => lower(f) === k)) continue;
          if (opts.allowField && !opts.allowField(item.field)) continue;
          if (item.values.some((v) => absentValue(item, v))) {
            out[item.field] = (opts.pad?.(item.field) ?? PAD).fill;
            changed = true;
          }
        }
      }
    }
    if (!changed) break;
  }
  return out;
}

/** The positive event and the negatives of a rule (parsed YAML), within the options. */
export function generate(rule: Json, opts: GenerateOptions = {}): Generated {
  let d: ParsedDetection;
  try {
    d = opts.parsed ?? parseDetection(rule.detection);
  } catch (e) {
    return { ok: false, reason: `the reference does not evaluate it: ${(e as Error).message}` };
  }
  let terms: Lit[][];
  try {
    terms = normalForm(d.condition);
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  let why = 'no alternative of the condition could be satisfied';
  for (const term of terms) {
    const must = term.filter((l) => !l.neg).map((l) => l.id);
    const mustFail = term.filter((l) => l.neg).map((l) => l.id);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const rand = seededRandom(attempt * 7919 + 17);
      let chosen: Chosen[] = [];
      let ok = true;
      for (const id of must) {
        const c = choose(d.ids.get(id)!, attempt, rand, opts);
        if (!c) {
          ok = false;
          why = `identifier "${id}" cannot hold in these events (its fields are not written, or no EventID of it is mapped)`;
          break;
        }
        chosen = chosen.concat(c);
      }
      if (!ok) break; // the same on every attempt for this term when nothing varies; next term
      let ev: SigmaEvent | undefined;
      try {
        ev = build(chosen, rand, opts);
      } catch (e) {
        if (e instanceof UnsupportedSigma) return { ok: false, reason: e.message };
        throw e;
      }
      if (!ev) {
        why = 'no value satisfies all the items on one field';
        continue;
      }
      const fixed = new Set(chosen.map((c) => lower(c.item.field)));
      ev = breakAbsences(d, ev, mustFail, fixed, opts);
      if (!matches(d, ev)) {
        why = 'the event built does not match (a filter holds on it)';
        continue;
      }
      const { negatives, skipped } = negativesOf(d, ev, chosen, mustFail, opts);
      return { ok: true, positive: ev, negatives, skipped };
    }
  }
  return { ok: false, reason: why };
}

/** For each identifier the alternative negates: the positive event with values making it hold, which the rule does not match. */
function negativesOf(
  d: ParsedDetection,
  positive: SigmaEvent,
  chosen: Chosen[],
  mustFail: string[],
  opts: GenerateOptions,
): { negatives: Negative[]; skipped: { filter: string; why: string }[] } {
  const negatives: Negative[] = [];
  const skipped: { filter: string; why: string }[] = [];
  for (const id of mustFail) {
    let found: SigmaEvent | undefined;
    for (let attempt = 0; attempt < ATTEMPTS && !found; attempt++) {
      const rand = seededRandom(attempt * 104729 + 3);
      const f = choose(d.ids.get(id)!, attempt, rand, opts);
      if (!f) break;
      const ok = (ev: SigmaEvent | undefined) => ev !== undefined && identifierHolds(d, id, ev) && !matches(d, ev);
      // The filter's values combined with what the positive event holds on the same fields.
      let ev = build([...chosen, ...f], rand, opts);
      if (ok(ev)) found = ev;
      else {
        // Else the filter's values replace the positive event's on those fields.
        const only = build(f, rand, opts);
        if (only) {
          ev = { ...positive };
          for (const c of f) for (const k of Object.keys(ev)) if (lower(k) === lower(c.item.field)) delete ev[k];
          Object.assign(ev, only);
          if (ok(ev)) found = ev;
        }
      }
    }
    if (found) negatives.push({ filter: id, event: found });
    else
      skipped.push({ filter: id, why: 'no event makes it hold without another part of the condition still matching' });
  }
  return { negatives, skipped };
}

/** The Sigma fields a rule's detection names (as first written), for choosing a variant. */
export function namedFields(rule: Json): string[] {
  const out = new Map<string, string>();
  if (!isRecord(rule.detection)) return [];
  for (const [id, body] of Object.entries(rule.detection)) {
    if (id === 'condition' || id === 'timeframe') continue;
    const maps = isRecord(body) ? [body] : Array.isArray(body) ? body.filter(isRecord) : [];
    for (const m of maps)
      for (const k of Object.keys(m)) {
        const f = k.split('|')[0]!;
        if (!out.has(lower(f))) out.set(lower(f), f);
      }
  }
  return [...out.values()];
}
