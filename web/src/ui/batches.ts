// Long bulk work in steps of at most `size` ids (the API's bulk limit), reporting progress.
export async function inBatches<T>(
  ids: string[],
  size: number,
  run: (chunk: string[]) => Promise<T>,
  progress: (done: number, total: number) => void,
): Promise<T[]> {
  const out: T[] = [];
  progress(0, ids.length);
  for (let i = 0; i < ids.length; i += size) {
    out.push(await run(ids.slice(i, i + size)));
    progress(Math.min(ids.length, i + size), ids.length);
  }
  return out;
}
