// Progress of long work, on stderr: shown when stderr is a terminal or with --progress, so
// what a script reads on stdout (the final result) is the same either way.
export interface Progress {
  readonly enabled: boolean;
  line(text: string): void;
}

export function progressTo(
  flag: boolean | undefined,
  stream: { isTTY?: boolean; write(s: string): unknown } = process.stderr,
): Progress {
  const enabled = flag === true || Boolean(stream.isTTY);
  return {
    enabled,
    line: (text) => {
      if (enabled) stream.write(`${text}\n`);
    },
  };
}

/** Seconds since start, one decimal. */
export const elapsed = (start: number) => `${((Date.now() - start) / 1000).toFixed(1)} s`;
