// The one condition language (docs/conditions.md) compiled to DuckDB SQL over the embedded
// store's `events` table (schema.ts), with the meaning of the in-memory compiler
// (pipeline/conditions, compileRecordCondition in pipeline/route/conditions.ts): the DuckDB twin of
// ../../query-sql.ts. Here the tree of a condition; fields.ts reads a field (and projects, sorts
// and counts fields), operators.ts tests its values, sql.ts holds the pieces they share.
//
// How a field is read:
// - time, class_uid, category_uid, activity_id, severity_id and envelope.* from their columns
//   (as query-sql.ts), compared so DuckDB can push the test into the scan;
// - a searched field (pipeline/delivery/stored-columns.ts) from its h_* column, the JSON text of
//   its value, never from `event`: eq/in of a string, number or boolean, exists and (mostly)
//   prefix compare that text directly (both sides JSON.stringify output, so canonical); the
//   other operators parse the small fragment (TRY_CAST(h_x AS JSON)). A path going on below a
//   searched field (`actor.user.name[0]`) starts from the column too;
// - any other path from `event` with DuckDB's JSON functions: a run of keys is one json_extract
//   (a JSON pointer, or a quoted JSONPath where a pointer would index an array), indexes and
//   `[*]` are list steps that follow the pass's path reader (normalize/paths.ts) exactly: a key
//   reads only objects, `a[0]`/`a[-1]` of a lone value is the value, `[*]` of a lone value is
//   the value, a list at the end of a `[*]` path is read element by element, nulls are dropped
//   where the reader drops them and kept where it keeps them.
// Every leaf asks whether any of the values a field has passes the value test (a plain field has
// at most one; a `[*]` field every element); the negative operators are NOT of their positive
// twin, so over a list they hold when no element does, and on a missing field. Values are
// compared strictly by JSON type (read from the first character of their JSON text), numbers by
// value (DuckDB re-writes 1e+21 as 1e21), strings by their JSON text when DuckDB writes it as
// JavaScript does (no control characters), else by their text.
//
// Every literal is inlined with sqlString (or is a number written by JavaScript), never
// interpolated otherwise. Each call of json_extract parses the whole event, so a test binds a
// value once in a lambda (list_transform([x], lambda v: ...)[1]) instead of repeating it, and
// the leaves of a condition that read two or more paths of `event` share one json_extract of
// all of them (one parse per row); the conjuncts that read no `event` stay outside, where
// DuckDB pushes them into the scan.
//
// Functions of the connection (registerConditionFunctions in operators.ts, once per database;
// DuckDB keeps them for every connection of the instance): weir_ip_key (an address's family and bytes, for `cidr`
// on text holding ':', i.e. IPv6 and IPv4-mapped IPv6, read by the pass's own parser) and
// weir_number (JavaScript's Number for numeric text that is not plain decimal: 0x1F, 0o17, 0b11,
// Unicode spaces). IPv4 is tested in SQL. Their callbacks run on the JavaScript thread: run the
// queries that use them asynchronously.
//
// Known differences from the pass (docs/search.md should list them):
// - `ignore_case` lower-cases with DuckDB's lower() (Unicode, utf8proc) where the pass uses
//   JavaScript's toLowerCase: they agree for ASCII and most scripts, not for every special case
//   ("İ" is "i" in DuckDB, "i̇" in JavaScript);
// - `regex` runs on DuckDB's RE2 (C++) where the pass runs re2js, its port: the same syntax and
//   semantics; named groups written (?<name>...) are passed as (?P<name>...), which DuckDB's
//   RE2 reads; a pattern DuckDB's RE2 still refuses makes the search fail with the reason;
// - a field read from a column (class_uid..., envelope.*, and the h_* searched fields) cannot
//   tell a JSON null from a missing field (both are NULL), so `eq null` (or null in an `in`
//   list) never holds there, and `ne null` always does; on other paths null is told apart;
// - `time` is the column: the event's own time, or its receipt when the event had none or an
//   absurd one (the store's rule), where the pass reads the event's `time` (as query-sql.ts);
// - text holding an unpaired UTF-16 surrogate: DuckDB's text is UTF-8, so a condition value
//   holding one is refused (sqlString throws) unless it is compared as JSON text (eq/in on an
//   h_* column), and a searched column holding one is missing to the operators that parse it
//   (DuckDB refuses such JSON; `event` cannot hold one at all).
import type { Condition, FieldCondition } from '../../../../pipeline/conditions/types.js';
import { fieldValue, fieldValues, planField } from './fields.js';
import { columnTest, hotTest, jsonTest } from './operators.js';
import { Ctx, sqlString } from './sql.js';

const NEGATIVE: Record<string, string> = { ne: 'eq', not_in: 'in', not_exists: 'exists' };

function leafSql(leaf: FieldCondition, ctx: Ctx): string {
  const op = NEGATIVE[leaf.op] ?? leaf.op;
  const ic = leaf.ignore_case === true;
  const plan = planField(leaf.field);
  let test: string;
  if (plan.t === 'column') test = columnTest(plan.column, plan.kind, op, leaf.value, ic, ctx);
  else if (plan.t === 'hot') test = hotTest(plan.column, op, leaf.value, ic, ctx);
  // Any of a [*] path's values; the one value of another (no value: every test is NULL, never true).
  else if (plan.many) test = ctx.any(fieldValues(plan, ctx), (e) => jsonTest(e, op, leaf.value, ic, ctx));
  else test = ctx.bind(fieldValue(plan, ctx), (e) => jsonTest(e, op, leaf.value, ic, ctx));
  const positive = test === 'FALSE' ? 'FALSE' : `coalesce(${test}, FALSE)`;
  return op === leaf.op ? positive : `(NOT ${positive})`;
}

function nodeSql(cond: Condition, ctx: Ctx): string {
  if ('all' in cond) return cond.all.length ? `(${cond.all.map((c) => nodeSql(c, ctx)).join(' AND ')})` : 'TRUE';
  if ('any' in cond) return cond.any.length ? `(${cond.any.map((c) => nodeSql(c, ctx)).join(' OR ')})` : 'FALSE';
  if ('not' in cond) return `(NOT ${nodeSql(cond.not, ctx)})`;
  return leafSql(cond, ctx);
}

function conjuncts(cond: Condition): Condition[] {
  return 'all' in cond ? cond.all.flatMap(conjuncts) : [cond];
}

/**
 * A condition (checked where it was saved or planned) as a SQL boolean over `events`; null
 * matches every event. Throws on what the store cannot answer (envelope.valid, [?k=v] paths).
 */
export function duckCondition(cond: Condition | null): string {
  if (cond === null) return 'TRUE';
  const parts = conjuncts(cond);
  if (parts.length === 0) return 'TRUE';
  // The conjuncts that read no event stay as they are (DuckDB pushes them into the scan); the
  // others share one json_extract of every event path they read, when they read two or more.
  const plain: string[] = [];
  const reading: Condition[] = [];
  for (const c of parts) {
    const probe = new Ctx('_we');
    const s = nodeSql(c, probe);
    if (probe.paths.length === 0) plain.push(s);
    else reading.push(c);
  }
  if (reading.length) {
    const shared = new Ctx('_we');
    const body = reading.map((c) => nodeSql(c, shared)).join(' AND ');
    if (shared.paths.length >= 2) {
      plain.push(
        `coalesce(list_transform([json_extract(event, [${shared.paths.map(sqlString).join(', ')}])], lambda _we: ${body})[1], FALSE)`,
      );
    } else {
      const inline = new Ctx(null);
      plain.push(...reading.map((c) => nodeSql(c, inline)));
    }
  }
  return plain.length === 1 ? plain[0]! : `(${plain.join(' AND ')})`;
}
