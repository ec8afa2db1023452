// The commands of `weir` that talk to a running Weir over its API (the roles start one):
//   weir config export|diff|import ...   weir tap <destination_id>   weir backfill start|status ...
// and two that run offline: weir test <dir> (mapping documents' test cases), weir validate <path>.
// Progress of long work (config import, backfill --wait) goes to stderr when it is a terminal
// or with --progress; stdout carries the same result either way.
// Flags: --url (WEIR_URL, default http://127.0.0.1:8080), --token (WEIR_TOKEN; never printed).
// Errors print `weir: <the API's detail>` on stderr and exit non-zero.
import { parseArgs } from 'node:util';
import { CliError, connection, DEFAULT_URL } from './api.js';
import { backfillStart, backfillStatus } from './backfill-command.js';
import { configDiff, configExport, configImport } from './config-commands.js';
import { progressTo } from './progress.js';
import { tap } from './tap-command.js';
import { testMappings } from './test-command.js';
import { validateFiles } from './validate-command.js';

export const COMMANDS = ['config', 'tap', 'test', 'validate', 'backfill'] as const;

export const COMMAND_SUMMARY: [string, string][] = [
  ['config export', "write an organization's configuration bundle (JSON) to a file or stdout"],
  ['config diff <file>', 'show what importing the file would change (exit 0: nothing, 1: changes, 2: error)'],
  ['config import <file>', 'apply the file (exit 0: applied, 1: conflicts or secrets needed, 2: error)'],
  ['tap <destination_id>', 'follow what a destination receives, masked, one JSON line per event, until Ctrl-C'],
  ['backfill start <integration_id>', 'start a backfill job; --wait follows its progress until it ends'],
  ['backfill status <job_id>', 'print a backfill job; --wait follows it until it ends'],
  [
    'validate <file|dir>...',
    'check configuration bundles and mapping documents (schema, compile, test cases) offline (exit 0: all valid, 1: any invalid)',
  ],
  [
    'test <dir|file>...',
    "run mapping documents' test cases and sample corpora offline, for CI (exit 0: all pass, 1: a failure)",
  ],
];

const CONNECTION_HELP = `
connection:
  --url URL        the Weir API (env WEIR_URL; default ${DEFAULT_URL})
  --token TOKEN    an API token, svcsk_... (env WEIR_TOKEN); never printed
  -h, --help       this help
`;

const PROGRESS_HELP = `  --progress       print progress on stderr even when it is not a terminal (it is printed on a terminal)\n`;

const HELP: Record<string, string> = {
  config: `usage: weir config <export|diff|import> [options]\n\n${COMMAND_SUMMARY.filter(([n]) =>
    n.startsWith('config'),
  )
    .map(([n, s]) => `  ${n.padEnd(22)}${s}`)
    .join('\n')}\n\nweir config <subcommand> --help for its options.\n`,
  'config export': `usage: weir config export [--organization N] [--out FILE]\n\nGET /api/collectors/config/export; writes the document, pretty-printed, to FILE or stdout.\n\n  --organization N  the organization (needed only when you can see several)\n  --out FILE        write here instead of stdout\n${CONNECTION_HELP}`,
  'config diff': `usage: weir config diff <file> [--organization N]\n\nPOST /api/collectors/config/import with {"document": <file>, "dry_run": true}; prints one line per\nitem (action, kind, name) with its reason and changes, then the summary.\nExit status: 0 nothing would change, 1 changes or conflicts, 2 error.\n\n  --organization N  the organization\n${CONNECTION_HELP}`,
  'config import': `usage: weir config import <file> [--organization N] [--secrets FILE] [--progress]\n\nPOST /api/collectors/config/import with {"document": <file>, "dry_run": false, "secrets": <FILE>};\nprints what was applied. With progress (stderr a terminal, or --progress) it first prints the\ndocument's objects per kind and the plan per kind (a dry run), then applies; stdout is the same.\nExit status: 0 applied, 1 conflicts or secrets needed (nothing applied), 2 error.\n\n  --organization N  the organization\n  --secrets FILE    a JSON object {"<secret ref>": "<value>"} for the document's secret references\n${PROGRESS_HELP}${CONNECTION_HELP}`,
  backfill: `usage: weir backfill start <integration_id> --streams S[,S...] --from TIME --to TIME [--wait]\n       weir backfill status <job_id> [--wait]\n\nstart: POST /api/integrations/{id}/backfill (re-collect a past window of some streams; TIME is ISO 8601 UTC).\nstatus: GET /api/backfill-jobs/{id}. Prints the job (JSON) on stdout; with --wait, once it has ended,\nits progress (status, pages, events, each stream's chunk) on stderr meanwhile.\nExit status: 0 started or read (with --wait: completed), 1 failed, cancelled or refused, 2 usage error.\n\n  --streams S,S    the streams to re-collect (start)\n  --from TIME      start of the window, inclusive (start)\n  --to TIME        end of the window, exclusive (start)\n  --wait           follow the job until it ends\n  --interval S     seconds between two reads while waiting (default 2)\n${PROGRESS_HELP}${CONNECTION_HELP}`,
  validate: `usage: weir validate <file|dir>...\n\nChecks configuration offline (no server, no database). A JSON file whose format is\n"weir.config-bundle" is a configuration bundle: checked as the import checks it (format, version,\nshape, names unique per kind, mapping histories), then each mapping document in it (schema,\ncompile, its test cases) and each detection rule definition. Any other JSON file is a mapping\ndocument: its schema, its compile and its own test cases (as weir test runs them). A directory:\nevery *.json file under it (*.expected.json and sample files are left to weir test).\nPrints one line per file, OK or INVALID with each error and its location (a JSON pointer) under it.\nExit status: 0 every file valid, 1 any invalid, 2 usage error.\n\n  -h, --help  this help\n`,
  test: `usage: weir test <dir|file>... [--verbose] [--update] [--summary]\n\nRuns the test cases (\`tests\`) of mapping documents offline, as publication runs them: every *.json file\nunder a directory is a mapping document; each is checked, then each case's input is mapped and validated\nas the pipeline would (strict OCSF policy) and compared with its output, expect or quarantine\n(docs/mappings.md, Test cases). Sample files (*.ndjson: JSON events, *.txt: text lines) in a folder\n<platform>/<stream> are a corpus: each event is mapped by that platform's mapping (a document of the run,\nelse the built-in) and compared with <name>.expected.json beside it (docs/mappings.md, A corpus of samples).\nNeeds no server.\nExit status: 0 every document valid and every case and sample as expected, 1 otherwise, 2 usage error.\n\n  --verbose   list passing cases and samples too\n  --update    write each sample's expected file from what Weir does now (review it before committing)\n  --summary   per source: events, valid, Base Event, quarantined, as expected\n  -h, --help  this help\n`,
  tap: `usage: weir tap <destination_id> [--seconds S] [--limit N] [--once]\n\nFollows GET /api/collectors/destinations/{id}/tap: prints each event the destination receives,\npersonal data masked, as one JSON line {"at", "event"}, until Ctrl-C (exit 0). A server session\nlasts S seconds; the next one opens when it ends.\n\n  --seconds S   length of each tap session, 1-60 (default 60)\n  --limit N     stop after N events\n  --once        one session only\n${CONNECTION_HELP}`,
};

export function commandsUsage(): string {
  return `commands (all but test and validate talk to a running Weir over its API):\n${COMMAND_SUMMARY.map(([n, s]) => `  ${n.padEnd(22)}${s}`).join('\n')}\n\nweir <command> --help for its options.\n`;
}

export function isCommand(name: string | undefined): boolean {
  return name !== undefined && (COMMANDS as readonly string[]).includes(name);
}

const connectionOptions = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse<T extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { ...connectionOptions, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}`, 2);
  }
}

function positiveInt(name: string, v: string | undefined, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max)
    throw new CliError(`--${name} must be an integer from 1 to ${max}`, 2);
  return Number(v);
}

/** Runs a command; resolves with the exit status. */
export async function runCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stdout = (line: string) => process.stdout.write(`${line}\n`);
  const [command, sub, ...rest] = argv;
  try {
    if (command === 'test') {
      let parsed;
      try {
        parsed = parseArgs({
          args: argv.slice(1),
          options: {
            verbose: { type: 'boolean' },
            update: { type: 'boolean' },
            summary: { type: 'boolean' },
            help: { type: 'boolean', short: 'h' },
          },
          allowPositionals: true,
          strict: true,
        });
      } catch (err) {
        throw new CliError((err as Error).message, 2);
      }
      if (parsed.values.help) return help('test');
      return testMappings(
        parsed.positionals,
        {
          verbose: parsed.values.verbose ?? false,
          update: parsed.values.update ?? false,
          summary: parsed.values.summary ?? false,
        },
        stdout,
      );
    }
    if (command === 'validate') {
      let parsed;
      try {
        parsed = parseArgs({
          args: argv.slice(1),
          options: { help: { type: 'boolean', short: 'h' } },
          allowPositionals: true,
          strict: true,
        });
      } catch (err) {
        throw new CliError((err as Error).message, 2);
      }
      if (parsed.values.help) return help('validate');
      return validateFiles(parsed.positionals, stdout);
    }
    if (command === 'backfill') return await backfill(argv.slice(1), env);
    if (command === 'tap') {
      const { values, positionals } = parse(argv.slice(1), {
        seconds: { type: 'string' },
        limit: { type: 'string' },
        once: { type: 'boolean' },
      });
      if (values.help) return help('tap');
      if (positionals.length !== 1) throw new CliError('usage: weir tap <destination_id> (see weir tap --help)', 2);
      const c = connection(values, env);
      const stop = new AbortController();
      const onSigint = () => stop.abort();
      process.once('SIGINT', onSigint);
      try {
        return await tap(
          c,
          positionals[0]!,
          {
            seconds: positiveInt('seconds', values.seconds, 60) ?? 60,
            limit: positiveInt('limit', values.limit, 1_000_000),
            once: values.once ?? false,
          },
          stdout,
          stop.signal,
        );
      } finally {
        process.off('SIGINT', onSigint);
      }
    }
    // config
    if (sub === undefined || sub === '--help' || sub === '-h') return help('config', sub === undefined ? 2 : 0);
    if (!['export', 'diff', 'import'].includes(sub))
      throw new CliError(`unknown config subcommand "${sub}" (export, diff, import)`, 2);
    const { values, positionals } = parse(rest, {
      organization: { type: 'string' },
      out: { type: 'string' },
      secrets: { type: 'string' },
      progress: { type: 'boolean' },
    });
    if (values.help) return help(`config ${sub}`);
    if (values.progress && sub !== 'import') throw new CliError('--progress belongs to weir config import', 2);
    if (sub === 'export') {
      if (positionals.length > 0 || values.secrets)
        throw new CliError('usage: weir config export [--organization N] [--out FILE]', 2);
      return await configExport(connection(values, env), { organization: values.organization, out: values.out }, (l) =>
        process.stderr.write(`${l}\n`),
      );
    }
    if (positionals.length !== 1 || values.out)
      throw new CliError(
        `usage: weir config ${sub} <file> [--organization N]${sub === 'import' ? ' [--secrets FILE]' : ''}`,
        2,
      );
    if (sub === 'diff') {
      if (values.secrets) throw new CliError('--secrets belongs to weir config import', 2);
      return await configDiff(connection(values, env), positionals[0]!, { organization: values.organization }, stdout);
    }
    return await configImport(
      connection(values, env),
      positionals[0]!,
      { organization: values.organization, secrets: values.secrets },
      stdout,
      progressTo(values.progress),
    );
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`weir: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

async function backfill(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parse(args, {
    streams: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    wait: { type: 'boolean' },
    interval: { type: 'string' },
    progress: { type: 'boolean' },
  });
  if (values.help) return help('backfill');
  const [sub, target, ...extra] = positionals;
  if ((sub !== 'start' && sub !== 'status') || target === undefined || extra.length)
    throw new CliError(
      'usage: weir backfill start <integration_id> ... | weir backfill status <job_id> (see weir backfill --help)',
      2,
    );
  const interval = values.interval === undefined ? 2 : Number(values.interval);
  if (!Number.isFinite(interval) || interval < 0.05 || interval > 3600)
    throw new CliError('--interval must be a number of seconds from 0.05 to 3600', 2);
  const opts = { wait: values.wait ?? false, intervalMs: interval * 1000 };
  const progress = progressTo(values.progress);
  if (sub === 'status') {
    if (values.streams || values.from || values.to)
      throw new CliError('--streams, --from and --to belong to weir backfill start', 2);
    return backfillStatus(connection(values, env), target, opts, progress);
  }
  if (!values.streams || !values.from || !values.to)
    throw new CliError('weir backfill start needs --streams, --from and --to', 2);
  const streams = values.streams
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  return backfillStart(
    connection(values, env),
    target,
    { streams, from_ts: values.from, to_ts: values.to },
    opts,
    progress,
  );
}

function help(topic: string, status = 0): number {
  (status === 0 ? process.stdout : process.stderr).write(HELP[topic] ?? commandsUsage());
  return status;
}
