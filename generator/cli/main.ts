import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { canonPackage } from "../util/package-root.ts";
import { packageProblem } from "./environment.ts";
import { FORMATS } from "./output.ts";
import { servingOptions } from "../commands/serve-options.ts";

/** A setup canon cannot run in: one line, exit 2. */
class SetupError extends Error {}

/** Commands that work before the project is set up: `init` sets it up. */
const WITHOUT_SETUP = new Set(["init"]);

/** Runs the canon CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = new Command("canon")
    .description("Generate a convention-following HTTP API (Fastify, zod, OpenAPI 3.1) from resource definitions.")
    .version(canonPackage().version, "-V, --version", "print canon's version")
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) })
    .showHelpAfterError("(run canon --help for usage)");

  const definitions = () => new Option("--definitions <dir>", "folder of api.yaml and resource files").default("definitions");
  const out = () => new Option("--out <dir>", "output folder").default("generated");
  // SPEC §3: every command takes --out; one that reads and writes no output takes it and leaves it.
  const unusedOut = () => new Option("--out <dir>", "output folder (this command neither reads nor writes it)");
  const allowBreaking = () =>
    new Option("--allow-breaking", "let breaking changes to published versions through, as warnings: only for a version that has never shipped");
  const failOnSunset = () => new Option("--fail-on-sunset", "fail when a deprecated version's sunset date is near or past (default: a warning)");
  const format = () => new Option("--format <format>", "how diagnostics are printed: text, json (one array on stdout) or github (Actions annotations)").choices(FORMATS).default("text");
  const today = () =>
    new Option("--today <YYYY-MM-DD>", "the date sunsets are measured against (default: today, UTC)").argParser((value: string) => {
      const ms = Date.parse(`${value}T00:00:00Z`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
        throw new InvalidArgumentError("expected a date YYYY-MM-DD");
      }
      return value;
    });

  // Each command: its usage, what it does, its options in the order help lists them, and what
  // runs it, loaded only when it runs (`canon --help` loads no command). generate and check take
  // the same options: check runs the pipeline of generate, writing nothing.
  const generation = () => [definitions(), out(), allowBreaking(), failOnSunset(), today(), format()];
  const commands: Array<{ usage: string; description: string; options: Option[]; run: (...args: any[]) => Promise<number> }> = [
    {
      usage: "init [dir]",
      description: "write a starter api.yaml and one resource",
      options: [definitions(), unusedOut()],
      run: async (dir: string | undefined, o) => (await import("../commands/init.ts")).initCommand(dir ?? ".", o),
    },
    {
      usage: "new <collection>",
      description: "write definitions/<collection>.yaml from a template; refuses names that break the path rules",
      options: [
        new Option("--parent <collection>", "list it under this collection: GET /vN/<parent>/{id}/<collection>"),
        new Option("--pagination <mode>", "cursor (default) or offset"),
        definitions(),
        unusedOut(),
      ],
      run: async (collection: string, o) => (await import("../commands/scaffold.ts")).newCommand(collection, o),
    },
    {
      usage: "generate",
      description: "write the output; prints what changed and how long it took",
      options: generation(),
      run: async (o) => (await import("../commands/generate.ts")).generateCommand(o),
    },
    {
      usage: "check",
      description: "write nothing; fail if the output differs from what generate would write, or a published version would break",
      options: generation(),
      run: async (o) => (await import("../commands/generate.ts")).checkCommand(o),
    },
    {
      usage: "release",
      description: "freeze the pending migration (sql/NNNN_pending.sql) under its released name; the next change starts a new one",
      options: generation(),
      run: async (o) => (await import("../commands/release.ts")).releaseCommand(o),
    },
    {
      usage: "lint",
      description: "print diagnostics only",
      options: [definitions(), unusedOut(), failOnSunset(), today(), format()],
      run: async (o) => (await import("../commands/generate.ts")).lintCommand(o),
    },
    {
      usage: "serve",
      description: "generate, then serve every version on one port (dev credentials on loopback, else --auth)",
      options: [...servingOptions(), definitions(), out()],
      run: async (o) => (await import("../commands/serve.ts")).serveCommand(o),
    },
    {
      usage: "dev",
      description: "serve, and on every save of a definition regenerate and serve the new code over the same store",
      // serve's options, and those of generate that a watched regeneration heeds.
      options: [...servingOptions(), definitions(), out(), allowBreaking(), failOnSunset(), today()],
      run: async (o) => (await import("../commands/dev.ts")).devCommand(o),
    },
  ];
  for (const { usage, description, options, run } of commands) {
    const command = program.command(usage).description(description);
    for (const option of options) command.addOption(option);
    // Commander passes the arguments, then the options, then the command itself.
    command.action(async (...args: unknown[]) => {
      code = await run(...args.slice(0, -1));
    });
  }

  program.hook("preAction", (_program, command) => {
    if (WITHOUT_SETUP.has(command.name())) return;
    const out = command.getOptionValue("out") as string | undefined;
    const problem = packageProblem(out === undefined ? ["."] : [".", out]);
    if (problem) throw new SetupError(problem);
  });

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof SetupError) {
      process.stderr.write(`canon: ${error.message}\n`);
      return 2;
    }
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`canon: unexpected failure: ${(error as Error).message}\n`);
    if (process.env.CANON_DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
    return 1;
  }
  return code;
}
