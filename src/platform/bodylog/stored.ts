// What a row keeps of a compressed body: the base64 text of its bytes (PostgreSQL, and the
// embedded database without a body log), or a body-log reference to them. Writers call
// keepBodies before their insert; readers call loadBody on what they read.
import { afterSettle } from '../db/ambient.js';
import { BodyLogError, isBodyRef, type BodyLog } from './log.js';

/**
 * The values to store for these bodies (base64 text, or references already made by an
 * earlier keepBodies): with a log, each text not yet a reference is appended and its
 * reference returned, pinned until the open transaction ends (at once outside one).
 * '' (no events) stays ''.
 */
export async function keepBodies(
  bodies: BodyLog | undefined,
  values: readonly string[],
  pinUntilSettled = true,
): Promise<string[]> {
  if (!bodies) return [...values];
  const out = [...values];
  const fresh: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] !== '' && !isBodyRef(values[i])) fresh.push(i);
  if (fresh.length > 0) {
    const refs = await bodies.append(fresh.map((i) => Buffer.from(values[i]!, 'base64')));
    fresh.forEach((i, k) => (out[i] = refs[k]!));
  }
  if (pinUntilSettled) releaseWhenSettled(bodies, out.filter(isBodyRef));
  return out;
}

/** What a row keeps of one compressed body given as bytes: its base64 text, or with a log its reference, pinned until the open transaction ends. */
export async function keepBytes(bodies: BodyLog | undefined, gz: Buffer): Promise<string> {
  if (!bodies) return gz.toString('base64');
  const [ref] = await bodies.append([gz]);
  releaseWhenSettled(bodies, [ref!]);
  return ref!;
}

function releaseWhenSettled(bodies: BodyLog, refs: string[]): void {
  if (refs.length > 0) afterSettle(() => bodies.release(refs));
}

/** A stored value as the codec reads it: base64 text as it is, a reference as the bytes it names. */
export async function loadBody(bodies: BodyLog | undefined, value: string): Promise<string | Buffer> {
  if (!isBodyRef(value)) return value;
  if (!bodies) throw new BodyLogError(`the body is in the body log (${value}), which this process has not opened`);
  return bodies.read(value);
}
