import path from "node:path";
import type { z } from "zod";
import { diagnostic } from "../diagnostics/catalog.ts";
import type { Diagnostic } from "../diagnostics/diagnostic.ts";
import { isJsonData, type SourceFile } from "../load/load.ts";
import { defineUnit, Engine } from "../engine.ts";
import { closest } from "../util/suggest.ts";
import { repairToSchema } from "./repair.ts";
import { ActionSchema, ApiSchema, FieldSchema, ResourceSchema, VersionSchema, type ApiDefinition, type ResourceDefinition } from "./schema.ts";

export interface Validated {
  api: { source: SourceFile; value: ApiDefinition } | null;
  resources: Array<{ source: SourceFile; value: ResourceDefinition }>;
  diagnostics: Diagnostic[];
}

/**
 * Checks every loaded file against its zod schema and reports every issue found. A file that
 * parses but breaks the schema goes on to the later checks with the refused parts cut away
 * (repair.ts), so one run reports its schema and lint problems together; only a file that is
 * not valid YAML stops its own later checks.
 */
export function validateSources(api: SourceFile | null, resources: SourceFile[]): Validated {
  const diagnostics: Diagnostic[] = [];
  const result: Validated = { api: null, resources: [], diagnostics };
  for (const source of [...(api ? [api] : []), ...resources]) if (!source.syntaxErrors) diagnostics.push(...protoKeys(source));
  if (api && !api.syntaxErrors) {
    const checked = validated(api, ApiSchema);
    diagnostics.push(...checked.diagnostics);
    if (checked.value) result.api = { source: api, value: checked.value };
  }
  for (const source of resources) {
    if (source.syntaxErrors) continue;
    const checked = validated(source, ResourceSchema);
    diagnostics.push(...checked.diagnostics);
    if (checked.value) result.resources.push({ source, value: checked.value });
  }
  return result;
}

/**
 * A key `__proto__` anywhere in a file (a field, an action, an enum value under transitions, a
 * map default's key): YAML reads it as a key like any other, but the schema's records drop it
 * without a word, so the field, the action or the transition would be silently ignored. Refused,
 * at the key.
 */
function protoKeys(source: SourceFile): Diagnostic[] {
  const out: Diagnostic[] = [];
  const walk = (value: unknown, where: Array<string | number>): void => {
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...where, i]));
    else if (value !== null && typeof value === "object") {
      for (const key of Object.keys(value)) {
        if (key === "__proto__") {
          out.push(
            diagnostic(
              "schema",
              source.locate([...where, key], "key"),
              `${where.length ? `${where.join(".")}: ` : ""}the key "__proto__" cannot be read: it would be dropped without a word`,
              "use another name: no field or action may be called __proto__, nor a key of transitions or of a map default",
            ),
          );
          continue;
        }
        walk((value as Record<string, unknown>)[key], [...where, key]);
      }
    }
  };
  walk(source.value, []);
  return out;
}

/**
 * How a definition file is checked: with the value of each issue, and without zod's compiled fast
 * path (`jitless`), which costs more to build than it saves over the few files a run checks (the
 * one file a change touched, or a hundred: about 5 ms and 25 ms of CPU without it, 10 ms and 31 ms
 * with it, on the machine of docs/benchmarks.md).
 */
const PARSE_OPTIONS = { reportInput: true, jitless: true } as const;

/**
 * One file checked against its schema: its value (repaired when it breaks the schema; null when
 * nothing is left) and its problems. Remembered by the parsed file, which a `canon dev` session
 * keeps while the file's text is the same.
 */
function validated<T>(source: SourceFile, schema: z.ZodType<T>): { value: T | null; diagnostics: Diagnostic[] } {
  const check = () => {
    const parsed = schema.safeParse(source.value ?? undefined, PARSE_OPTIONS);
    if (parsed.success) return { value: parsed.data, diagnostics: [] };
    return { value: repairToSchema(schema, source.value, parsed.error.issues) ?? null, diagnostics: issuesToDiagnostics(source, parsed.error.issues) };
  };
  // The parsed file and the schema are the whole input: remembered by the file object, per schema.
  const engine = Engine.current();
  if (!engine) return check();
  const name = (schema as unknown) === ApiSchema ? "validated api file" : "validated resource file";
  if (engine.recording) {
    // A run that keeps records (a cold `canon generate`): a file valid before is valid again.
    const context: ValidateContext = { check };
    const recorded = engine.run(validFile, { schema: name, text: source.text }, context);
    if (recorded) return context.checked ? (context.checked as ReturnType<typeof check>) : { value: recorded.value as T, diagnostics: [] };
    return (context.checked as ReturnType<typeof check> | undefined) ?? check();
  }
  return engine.byObject(name, source, check) as ReturnType<typeof check>;
}

interface ValidateContext {
  /** Checks the file (its text is the slice's) against the schema the slice names. */
  check: () => { value: unknown; diagnostics: Diagnostic[] };
  checked?: { value: unknown; diagnostics: Diagnostic[] };
}

/**
 * A definition file's value as its schema gives it, a unit of the schema's name and the file's
 * text: recorded only for a file with no problem and a value that is JSON data.
 */
const validFile = defineUnit<{ schema: string; text: string }, { value: unknown } | null, ValidateContext>("validate/valid file", (_slice, context) => {
  const checked = (context.checked = context.check());
  return checked.diagnostics.length === 0 && checked.value !== null && isJsonData(checked.value) ? { value: structuredClone(checked.value) } : null;
});

/** What an empty file (nothing but comments, or nothing) lacks, said once instead of per key. */
function emptyFile(source: SourceFile): Diagnostic {
  const name = path.basename(source.file);
  return source.kind === "api"
    ? diagnostic("schema", source.locate([]), `${name} is empty: it describes the API`, "write title:, base_url: and versions: (canon init writes a starter)")
    : diagnostic("schema", source.locate([]), `${name} is empty: a resource file describes one collection`, "write resource: <plural noun> and fields: (canon new <collection> writes one), or delete the file");
}

function issuesToDiagnostics(source: SourceFile, issues: z.core.$ZodIssue[]): Diagnostic[] {
  if (source.value === null || source.value === undefined) return [emptyFile(source)];
  const out: Diagnostic[] = [];
  for (const issue of issues) {
    const where = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const dotted = where.join(".") || "(file)";
    if (issue.code === "unrecognized_keys") {
      const known = knownKeys(source.kind, where);
      for (const key of issue.keys) {
        const guess = closest(key, known);
        out.push(
          diagnostic(
            "unknown-key",
            source.locate([...where, key], "key"),
            `unknown key "${key}"${where.length ? ` in ${dotted}` : ""}`,
            guess ? `did you mean "${guess}"?` : `remove it; known keys here: ${known.join(", ")}`,
          ),
        );
      }
      continue;
    }
    if (issue.code === "invalid_type" && issue.input === undefined) {
      const key = String(where[where.length - 1] ?? "");
      out.push(
        diagnostic("schema", source.locate(where.slice(0, -1)), `missing required key "${key}"${where.length > 1 ? ` in ${where.slice(0, -1).join(".")}` : ""}`, `add ${key}: (${issue.expected})`),
      );
      continue;
    }
    out.push(diagnostic("schema", source.locate(where), `${dotted}: ${messageFor(issue, where)}`, fixFor(issue)));
  }
  return out;
}

function messageFor(issue: z.core.$ZodIssue, where: ReadonlyArray<PropertyKey>): string {
  if (issue.code === "invalid_value" && typeof issue.input === "string") {
    return where[where.length - 1] === "type" ? `unknown type "${issue.input}"` : `"${issue.input}" is not one of the values allowed here`;
  }
  return issue.message;
}

function fixFor(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_value": {
      const allowed = issue.values.filter((v): v is string => typeof v === "string");
      const guess = typeof issue.input === "string" ? closest(issue.input, allowed) : undefined;
      const all = issue.values.map((v) => JSON.stringify(v)).join(", ");
      return guess ? `did you mean "${guess}"? (one of: ${all})` : `use one of: ${all}`;
    }
    case "invalid_type":
      return `give a value of type ${issue.expected}`;
    default:
      return "correct the value as the message says";
  }
}

function shapeKeys(schema: { shape: Record<string, unknown> }): string[] {
  return Object.keys(schema.shape).filter((k) => k !== "$schema");
}

/** The keys the format allows at a path, for did-you-mean. */
function knownKeys(kind: SourceFile["kind"], where: ReadonlyArray<PropertyKey>): string[] {
  const path = where.map(String);
  if (kind === "api") {
    if (path.length === 0) return shapeKeys(ApiSchema);
    if (path[0] === "versions") return shapeKeys(VersionSchema);
    if (path[0] === "rate_limit") return ["requests", "per_seconds"];
    return [];
  }
  if (path.length === 0) return shapeKeys(ResourceSchema);
  const last = path[path.length - 1];
  if (last === "renamed") return ["in", "from"];
  if (path[0] === "actions" && path.length === 2) return shapeKeys(ActionSchema);
  return shapeKeys(FieldSchema);
}
