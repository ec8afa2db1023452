// `weir backfill start <integration_id> --streams a,b --from T --to T [--wait]` and
// `weir backfill status <job_id> [--wait]`: a backfill job through POST
// /api/integrations/{id}/backfill and GET /api/backfill-jobs/{id}. With --wait the command
// follows the job until it ends, its progress (status, pages, events, each stream's chunk) on
// stderr when stderr is a terminal or with --progress; stdout gets the job (JSON) once, at the
// end. Exit status: 0 created / read (with --wait: completed), 1 failed or cancelled or an API
// refusal, 2 usage error.
import { CliError, detailOf, jsonRequest, type Connection } from './api.js';
import type { Progress } from './progress.js';

interface Job {
  id: string;
  status: string;
  events?: number;
  pages?: number;
  error?: string | null;
  warnings?: string[];
  resume_at?: string | null;
  progress?: Record<string, { chunk_from?: string; events?: number; pages?: number; done?: boolean }>;
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

export interface FollowOptions {
  wait: boolean;
  intervalMs: number;
}

function progressLine(job: Job): string {
  const streams = Object.entries(job.progress ?? {})
    .map(([s, p]) => `${s} ${p.done ? 'done' : `from ${p.chunk_from ?? '?'}`} (${p.events ?? 0} events)`)
    .join('; ');
  const wait = job.status === 'queued' && job.resume_at ? ` until ${job.resume_at}` : '';
  return `backfill ${job.id}: ${job.status}${wait}, ${job.pages ?? 0} pages, ${job.events ?? 0} events${streams ? `; ${streams}` : ''}`;
}

async function getJob(c: Connection, id: string): Promise<Job> {
  const answer = await jsonRequest(c, 'GET', `/api/backfill-jobs/${encodeURIComponent(id)}`);
  if (answer.status !== 200) throw new CliError(detailOf(answer));
  return answer.json as Job;
}

async function follow(c: Connection, first: Job, opts: FollowOptions, progress: Progress): Promise<number> {
  let job = first;
  let last = '';
  const show = () => {
    const line = progressLine(job);
    if (line !== last) progress.line(line);
    last = line;
  };
  show();
  while (opts.wait && !FINISHED.has(job.status)) {
    await new Promise((r) => setTimeout(r, opts.intervalMs));
    job = await getJob(c, job.id);
    show();
  }
  for (const w of job.warnings ?? []) progress.line(`warning: ${w}`);
  process.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
  if (opts.wait && job.status !== 'completed') {
    process.stderr.write(`weir: backfill ${job.id} ${job.status}${job.error ? `: ${job.error}` : ''}\n`);
    return 1;
  }
  return 0;
}

export async function backfillStart(
  c: Connection,
  integration: string,
  body: { streams: string[]; from_ts: string; to_ts: string },
  opts: FollowOptions,
  progress: Progress,
): Promise<number> {
  if (!/^\d{1,10}$/.test(integration))
    throw new CliError(`the integration is its id (a number), got "${integration}"`, 2);
  const answer = await jsonRequest(c, 'POST', `/api/integrations/${integration}/backfill`, body);
  if (answer.status !== 201) throw new CliError(detailOf(answer));
  return follow(c, answer.json as Job, opts, progress);
}

export async function backfillStatus(c: Connection, id: string, opts: FollowOptions, progress: Progress) {
  return follow(c, await getJob(c, id), opts, progress);
}
