// bench/profile-summary.ts counts a thread blocked in Atomics.wait (piscina's workers between
// tasks, sampled as their caller's self time) as idle, not CPU: a profile whose samples sit on
// the line of piscina's worker that calls Atomics.wait, beside samples of Weir's own code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { summarise, type CpuProfile } from '../../bench/profile-summary.js';

const WORKER = new URL('../../node_modules/piscina/dist/worker.js', import.meta.url);
/** The 1-based line of piscina's worker that calls Atomics.wait. */
const waitLine =
  readFileSync(WORKER, 'utf8')
    .split('\n')
    .findIndex((l) => /Atomics\.wait\(/.test(l)) + 1;

describe('bench/profile-summary', () => {
  it('finds the line of piscina that waits', () => expect(waitLine).toBeGreaterThan(0));

  it("leaves out the share of a node's ticks on a line calling Atomics.wait", () => {
    const profile: CpuProfile = {
      startTime: 0,
      endTime: 600,
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 } },
        // atomicsWaitLoop: 3 of its 4 ticks on the Atomics.wait line.
        {
          id: 2,
          callFrame: { functionName: 'atomicsWaitLoop', url: WORKER.href, lineNumber: waitLine - 10 },
          positionTicks: [
            { line: waitLine, ticks: 3 },
            { line: waitLine + 1, ticks: 1 },
          ],
        },
        { id: 3, callFrame: { functionName: 'work', url: 'file:///app/src/pipeline/normalize/x.js', lineNumber: 1 } },
      ],
      samples: [2, 2, 2, 2, 3, 3],
      timeDeltas: [100, 100, 100, 100, 100, 100],
    };
    const s = summarise([profile]);
    // 400 µs in atomicsWaitLoop of which 3/4 waiting: 100 µs count, with the 200 µs of work.
    expect(s.cpuSeconds).toBeCloseTo(300e-6, 9);
    expect(s.categories.find((c) => c.name.startsWith('normalize'))?.share).toBeCloseTo(2 / 3, 6);
  });
});
