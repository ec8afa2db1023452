// Value transformations of Sigma modifiers that can be computed exactly: windash (the dash
// variants Windows command lines accept for an option) and base64 / base64offset (a value as
// it appears base64-encoded, optionally of its UTF-16 text, at any alignment).

/** Characters Windows programs accept in place of `-` / `/` before an option. */
const DASHES = ['-', '/', '\u2013', '\u2014', '\u2015'];
const MAX_DASHES = 4;

/** Every variant of `value` with each option dash (a - or / starting a word) replaced by each dash character; undefined past MAX_DASHES. */
export function windashVariants(value: string): string[] | undefined {
  const at: number[] = [];
  for (const m of value.matchAll(/(?<![\w/-])[-/](?=\w)/g)) at.push(m.index);
  if (at.length > MAX_DASHES) return undefined;
  let out = [value];
  for (const i of at) out = out.flatMap((v) => DASHES.map((d) => v.slice(0, i) + d + v.slice(i + 1)));
  return [...new Set(out)];
}

function encode(text: string, utf16?: 'utf16le' | 'utf16be'): Buffer {
  if (utf16 === 'utf16le') return Buffer.from(text, 'utf16le');
  if (utf16 === 'utf16be') return Buffer.from(text, 'utf16le').swap16();
  return Buffer.from(text, 'utf8');
}

/**
 * base64: the value's encoding. base64offset: the three encodings of the value at byte offsets
 * 0, 1 and 2 of a longer text, cut to the characters that depend on the value alone (what
 * stays the same whatever surrounds it).
 */
export function base64Variants(value: string, offsets: boolean, utf16?: 'utf16le' | 'utf16be'): string[] {
  const bytes = encode(value, utf16);
  if (!offsets) return [bytes.toString('base64')];
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // A base64 character holds 6 bits: keep those whose bits all come from the value.
    out.push(b64.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6)));
  }
  return out;
}
