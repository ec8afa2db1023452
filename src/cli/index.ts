// The commands of `weir` that talk to a running Weir over its API (the roles start one):
//   weir config export|diff|import ...   weir tap <destination_id>
// and one that runs offline: weir test <dir> (mapping documents' test cases).
// Flags: --url (WEIR_URL, default http://127.0.0.1:8080), --token (WEIR_TOKEN; never printed).
// Errors print `weir: <the API's detail>` on stderr and exit non-zero.
import { parseArgs } from 'node:util';
import { CliError, connection, DEFAULT_URL } from './api.js';
import { configDiff, configExport, configImport } from './config-commands.js';
import { tap } from './tap-command.js';
import { testMappings } from './test-command.js';

export const COMMANDS = ['config', 'tap', 'test'] as const;

export const COMMAND_SUMMARY: [string, string][] = [
  ['config export', "write an organization's configuration bundle (JSON) to a file or stdout"],
  ['config diff <file>', 'show what importing the file would change (exit 0: nothing, 1: changes, 2: error)'],
  ['config import <file>', 'apply the file (exit 0: applied, 1: conflicts or secrets needed, 2: error)'],
  ['tap <destination_id>', 'follow what a destination receives, masked, one JSON line per event, until Ctrl-C'],
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

const HELP: Record<string, string> = {
  config: `usage: weir config <export|diff|import> [options]\n\n${COMMAND_SUMMARY.filter(([n]) =>
    n.startsWith('config'),
  )
    .map(([n, s]) => `  ${n.padEnd(22)}${s}`)
    .join('\n')}\n\nweir config <subcommand> --help for its options.\n`,
  'config export': `usage: weir config export [--organization N] [--out FILE]\n\nGET /api/collectors/config/export; writes the document, pretty-printed, to FILE or stdout.\n\n  --organization N  the organization (required with platform scope or several organizations)\n  --out FILE        write here instead of stdout\n${CONNECTION_HELP}`,
  'config diff': `usage: weir config diff <file> [--organization N]\n\nPOST /api/collectors/config/import with {"document": <file>, "dry_run": true}; prints one line per\nitem (action, kind, name) with its reason and changes, then the summary.\nExit status: 0 nothing would change, 1 changes or conflicts, 2 error.\n\n  --organization N  the organization\n${CONNECTION_HELP}`,
  'config import': `usage: weir config import <file> [--organization N] [--secrets FILE]\n\nPOST /api/collectors/config/import with {"document": <file>, "dry_run": false, "secrets": <FILE>};\nprints what was applied.\nExit status: 0 applied, 1 conflicts or secrets needed (nothing applied), 2 error.\n\n  --organization N  the organization\n  --secrets FILE    a JSON object {"<secret ref>": "<value>"} for the document's secret references\n${CONNECTION_HELP}`,
  test: `usage: weir test <dir|file>... [--verbose] [--update] [--summary]\n\nRuns the test cases (\`tests\`) of mapping documents offline, as publication runs them: every *.json file\nunder a directory is a mapping document; each is checked, then each case's input is mapped and validated\nas the pipeline would (strict OCSF policy) and compared with its output, expect or quarantine\n(docs/mappings.md, Test cases). Sample files (*.ndjson: JSON events, *.txt: text lines) in a folder\n<platform>/<stream> are a corpus: each event is mapped by that platform's mapping (a document of the run,\nelse the built-in) and compared with <name>.expected.json beside it (docs/mappings.md, A corpus of samples).\nNeeds no server.\nExit status: 0 every document valid and every case and sample as expected, 1 otherwise, 2 usage error.\n\n  --verbose   list passing cases and samples too\n  --update    write each sample's expected file from what Weir does now (review it before committing)\n  --summary   per source: events, valid, Base Event, quarantined, as expected\n  -h, --help  this help\n`,
  tap: `usage: weir tap <destination_id> [--seconds S] [--limit N] [--once]\n\nFollows GET /api/collectors/destinations/{id}/tap: prints each event the destination receives,\npersonal data masked, as one JSON line {"at", "event"}, until Ctrl-C (exit 0). A server session\nlasts S seconds; the next one opens when it ends.\n\n  --seconds S   length of each tap session, 1-60 (default 60)\n  --limit N     stop after N events\n  --once        one session only\n${CONNECTION_HELP}`,
};

export function commandsUsage(): string {
  return `commands (all but test talk to a running Weir over its API):\n${COMMAND_SUMMARY.map(([n, s]) => `  ${n.padEnd(22)}${s}`).join('\n')}\n\nweir <command> --help for its options.\n`;
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
    });
    if (values.help) return help(`config ${sub}`);
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
    );
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`weir: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

function help(topic: string, status = 0): number {
  (status === 0 ? process.stdout : process.stderr).write(HELP[topic] ?? commandsUsage());
  return status;
}
