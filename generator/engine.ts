import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync, writevSync } from "node:fs";
import path from "node:path";
import { TextMemo } from "./util/memo.ts";

/**
 * The one place that owns incremental work. A unit of emission (a file, or a piece of one) is a
 * pure function of a typed slice of the model, its only input, declared once at module level
 * with `defineUnit` (so it closes over no run's state); the engine computes it, or answers with
 * the result it recorded for an equal slice. The key is derived from the slice itself (its JSON
 * text, hashed with the unit's name): nothing else can change the result, so no key is written by
 * hand, and a unit that starts reading one more field must first have it in its slice's type.
 *
 * Besides units, the engine owns the remembered results of pure functions of one text
 * (`memoByText`, util/memo.ts: rendered templates, identifiers a code text uses, laid-out pieces,
 * parsed documents) and of one object (`byObject`: a parsed definition file's validation). A
 * `canon dev` session keeps one engine for its life (session.ts); a run without one gets a fresh
 * engine, which still reads and writes the records on disk (`EngineRecords`).
 */
export class Engine {
  private results = new TextMemo<unknown>(65_536);
  private readonly texts = new WeakMap<object, string>();
  private readonly digests = new WeakMap<object, string>();
  private readonly memos = new Map<string, TextMemo<unknown>>();
  private readonly objects = new Map<string, WeakMap<object, unknown>>();
  private readonly states = new Map<string, unknown>();
  /** Units computed (not recalled) by the last run: what a test or a benchmark can count. */
  computed = 0;
  recalled = 0;
  private readonly records: EngineRecords | null;

  constructor(records: EngineRecords | null = null) {
    this.records = records;
  }

  /** The result of `unit` over `slice`: recorded for an equal slice, or else computed now. */
  run<S extends object, R, C>(unit: Unit<S, R, C>, slice: S, context: C): R {
    const key = this.keyOf(unit, slice);
    const known = this.results.peek(key);
    if (known !== undefined) {
      this.recalled++;
      this.records?.keep(key, known);
      return known as R;
    }
    const stored = this.records?.recall(key);
    if (stored !== undefined) {
      this.recalled++;
      this.results.get(key, () => stored);
      return stored as R;
    }
    this.computed++;
    const result = unit.compute(slice, context);
    this.results.get(key, () => result);
    this.records?.keep(key, result);
    return result;
  }

  /**
   * Tells the engine the text a file that a unit returned was written with (`formatted.content`,
   * read only if the record is written: a file recalled unread keeps its record), and `by` how
   * it was formatted: its record then names that text in the output folder instead of holding
   * the file (see `EngineRecords`). Without records, nothing to do.
   */
  written(file: object, formatted: { readonly content: string }, by: FormattedBy): void {
    this.records?.written(file, formatted, by);
  }

  /** Whether this engine keeps records on disk (a run without a `dev` session). */
  get recording(): boolean {
    return this.records !== null;
  }

  /**
   * Whether this engine read records from disk (a run after another one of this canon): work
   * that costs time and memory to key only pays where there is something to recall.
   */
  get recalling(): boolean {
    return (this.records?.size ?? 0) > 0;
  }

  /**
   * For work whose units are found while it runs (the changes at each path of two documents,
   * compat/remembered.ts): the result recorded under `name` and `digest`, a digest of everything
   * the work reads; undefined when there is none. `record` keeps one.
   */
  recalledBy(name: string, digest: string): unknown {
    const key = this.keyOf({ name }, { digest });
    const known = this.results.peek(key);
    if (known !== undefined) {
      this.records?.keep(key, known);
      return known;
    }
    const stored = this.records?.recall(key);
    if (stored !== undefined) this.results.get(key, () => stored);
    return stored;
  }

  /** Keeps `result` under `name` and `digest` (see `recalledBy`). */
  record(name: string, digest: string, result: unknown): void {
    const key = this.keyOf({ name }, { digest });
    this.results.get(key, () => result);
    this.records?.keep(key, result);
  }

  /**
   * The key of a unit's slice: a hash of the unit's name and of each field of the slice (its
   * name, and the digest of its value's JSON; a string's own text).
   */
  private keyOf(unit: { name: string }, slice: object): string {
    const hash = createHash("sha256").update(unit.name);
    for (const [name, value] of Object.entries(slice)) {
      hash.update("\0").update(name).update("\0");
      if (typeof value === "string") hash.update(`s${value.length}:`).update(value);
      else hash.update("j").update(this.digestOf(value));
    }
    return hash.digest("base64url");
  }

  /**
   * The sha256 of a value's JSON text (or the digest the engine was told, `knowDigest`). The
   * model's parts are never modified once built (model/intern.ts keeps an unchanged part the
   * same object from one save to the next), so an object's digest is computed once per engine,
   * and a slice holding unchanged parts costs a lookup per part.
   */
  private digestOf(value: unknown): string {
    if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "undefined";
    let digest = this.digests.get(value);
    if (digest === undefined) {
      const text = this.texts.get(value) ?? JSON.stringify(value);
      this.texts.delete(value);
      this.digests.set(value, (digest = createHash("sha256").update(text).digest("base64url")));
    }
    return digest;
  }

  /** Tells the engine the JSON text of a part that is already known (interning compared it). */
  knowText(value: object, text: string): void {
    if (!this.digests.has(value)) this.texts.set(value, text);
  }

  /**
   * Tells the engine a digest of a value's content that is cheaper to make than its JSON text's
   * (an OpenAPI document's, from the digests of its parts: compat/parts.ts, `documentDigest`),
   * for a slice holding the value to be keyed with. It must tell the value's content apart from
   * every other content (equal values, equal digests; different values, different ones), and be
   * made the same way in every run: the records of one run are recalled by the keys of the next.
   */
  knowDigest(value: object, digest: string): void {
    this.texts.delete(value);
    this.digests.set(value, digest);
  }

  /** The remembered results of the pure function of one text named `name`. */
  memo<T>(name: string, limit = 4096): TextMemo<T> {
    let memo = this.memos.get(name);
    if (!memo) this.memos.set(name, (memo = new TextMemo<unknown>(limit)));
    return memo as TextMemo<T>;
  }

  /** The result of the pure function `name` of one object (never modified), by that object. */
  byObject<T>(name: string, input: object, compute: () => T): T {
    let results = this.objects.get(name);
    if (!results) this.objects.set(name, (results = new WeakMap()));
    if (results.has(input)) return results.get(input) as T;
    const result = compute();
    results.set(input, result);
    return result;
  }

  /** The engine's state named `name` (a remembered comparison, a cache by object), made by `init` once. */
  state<T>(name: string, init: () => T): T {
    if (!this.states.has(name)) this.states.set(name, init());
    return this.states.get(name) as T;
  }

  /** Runs `work` with this engine as the current one (`Engine.current`), across its awaits. */
  within<T>(work: () => T): T {
    return current.run(this, work);
  }

  /** The engine of the run in progress, if any. */
  static current(): Engine | undefined {
    return current.getStore();
  }

  /** Writes the records this run used (an error is ignored: records only save time). */
  save(): void {
    this.records?.save();
  }
}

const current = new AsyncLocalStorage<Engine>();

/**
 * The current engine's state named `name` (see `Engine.state`); without an engine, a fresh one
 * that lasts as long as its caller keeps it.
 */
export function engineState<T>(name: string, init: () => T): T {
  const engine = current.getStore();
  return engine ? engine.state(name, init) : init();
}

/**
 * A pure function of one text, remembered by that text in the current run's engine (a `canon
 * dev` session's, for its life); without an engine, computed each time. The module that
 * declares it holds the function only, never a result.
 */
export function memoByText<T>(name: string, compute: (text: string) => T, limit?: number): (text: string) => T {
  return (text) => {
    const engine = current.getStore();
    return engine ? engine.memo<T>(name, limit).get(text, () => compute(text)) : compute(text);
  };
}

/**
 * A unit of work: a pure function of its slice and of `C`, what the unit may read besides, which
 * must be a function of canon's own sources alone (for emitters, templates and runtime files:
 * `UnitContext` in emit/emitter.ts).
 */
export interface Unit<S extends object, R, C = unknown> {
  readonly name: string;
  readonly compute: (slice: S, context: C) => R;
}

/**
 * Declares a unit. `compute` must read nothing but its slice and `context` (declared at module
 * level, it can close over no run's model); its result must be JSON data that no caller modifies.
 */
export function defineUnit<S extends object, R, C = unknown>(
  name: string,
  compute: (slice: S, context: C) => R,
  // Refused by the type checker: a slice with a Map, a Set or a function inside.
  ...plain: S extends PlainData<S> ? [] : ["a unit's slice is plain JSON data"]
): Unit<S, R, C> {
  void plain;
  return { name, compute };
}

/**
 * Data whose JSON text is all there is to it: no Map, Set or function anywhere inside (JSON
 * would write a Map as `{}`, and a key would miss what it holds). JSON values (`JsonData`, as
 * an OpenAPI document is typed) are plain data without looking inside them.
 */
export type PlainData<T> = T extends JsonData
  ? T
  : T extends Map<unknown, unknown> | Set<unknown> | WeakMap<object, unknown> | ((...args: never[]) => unknown)
    ? never
    : T extends object
      ? { [K in keyof T]: PlainData<T[K]> }
      : T;

/** A JSON value. */
type JsonData = null | boolean | number | string | JsonData[] | { [key: string]: JsonData };

/** The last line of a records file: what wrote it, how many records it holds, and a hash of the lines before. */
interface RecordsHeader {
  format: typeof RECORDS_FORMAT;
  canon: string;
  count: number;
  sha256: string;
}

const RECORDS_FORMAT = "canon-engine-records-4";

/** How a file's written text was made from the text its emitter gave (format/format.ts). */
export type FormattedBy = "laidOut" | "prettier" | "none";

/** A file's size and modification time (ms), as the file system gives them. */
export type FileStat = [size: number, mtimeMs: number];

/** Where the texts of recalled files are read: the output folder (`readOutputFolder`, emit/index.ts). */
export interface OutputTexts {
  read(path: string): string | undefined;
  /** The file's size and time now; undefined when there is none. */
  stat?(path: string): FileStat | undefined;
  /** The file's size and time taken right before `read` read its text from the disk. */
  readStat?(path: string): FileStat | undefined;
}

/**
 * A unit's result that is a file of the output (an `EmittedFile`), as a file record recalls it:
 * its content is the text the output folder holds, already formatted (`formatted` says how).
 */
export interface OutputFile {
  path: string;
  content: string;
  formatted?: FormattedBy;
  /** Recalled: the sha256 of `content` (base64url), which its record holds and the recall checked. */
  digest?: string;
  /**
   * Recalled by the size and time its file in the output folder still has (`EngineRecords`):
   * the folder holds it as written, and `content` is read from there only when asked.
   */
  onDisk?: boolean;
}

/**
 * The engine's records kept on disk beside the format cache, so that a new process (a cold
 * `canon generate`) recomputes only the units whose slice changed. One line per record
 * (`[key, result]` as JSON), then a line that says which canon wrote the file (a hash of canon's
 * sources and the formatter, and the Node version), how many records it holds and the sha256 of
 * the lines before it: a file from another canon, a damaged, cut-short or foreign one is
 * ignored as a whole (a full run), never half-read. Each run writes back the records it used, one
 * line at a time (no text of the whole file is ever built), so the file stays the size of one
 * output.
 *
 * A unit's result that is a file of the output, written by this run (`written`), is recorded
 * without its text: `[key, file without content, sha256 of the written text, how it was
 * formatted]`. The output folder holds that text; recalled, the record reads it there and answers
 * with the file as written (`OutputFile`, its content already formatted) when its hash is the
 * recorded one, and with nothing otherwise (an edited, removed or other output folder: the unit is
 * computed). So the records hold no second copy of the output, and a recalled file is neither
 * emitted nor formatted again.
 *
 * A file record also keeps the size and modification time its file had when a run read it and
 * found the recorded hash (`[…, by, [size, mtimeMs]]`). A later run whose file still has both,
 * and whose time is older than the records file's own (so that no write in the same tick of a
 * coarse clock can hide), recalls it without reading it (`onDisk`: its content is read when
 * asked; the comparison counts it unchanged). Any other file is read and hashed as before, and its
 * record then takes its size and time. As with make or git, a file edited with its size kept and
 * its time set back by hand is taken as it was.
 */
export class EngineRecords {
  private readonly file: string;
  private readonly canon: string;
  private readonly output: OutputTexts | null;
  /** The file's records by key, each as its line (its bytes, newline included) until it is recalled. */
  private loaded: Map<string, { line: Buffer; result?: unknown }> | null = null;
  /** The records this run used, with the line each came from when it came from the file unchanged. */
  private readonly used = new Map<string, { result: unknown; line?: Buffer }>();
  /** The text each file a unit returned was written with, and how it was formatted. */
  private readonly texts = new WeakMap<object, { formatted: { readonly content: string }; by: FormattedBy }>();
  /** Files recalled by their hash, with what their record is written again with (their size and time now). */
  private readonly verified = new WeakMap<object, { file: Omit<OutputFile, "content">; sha: string; by: FormattedBy; stat: FileStat }>();
  /** The records file's modification time when it was read: a file record's time must be older to stand for its content. */
  private recordedAt = -Infinity;
  private changed = false;

  /** `output`: where the written texts of file records are read (none: file records are never recalled). */
  constructor(file: string, canon: string, output: OutputTexts | null = null) {
    this.file = file;
    this.canon = `${canon} node ${process.version}`;
    this.output = output;
  }

  /** How many records the file holds (none when it is missing, another canon's or damaged). */
  get size(): number {
    return this.load().size;
  }

  recall(key: string): unknown {
    const record = this.load().get(key);
    if (!record) return undefined;
    if (!("result" in record)) {
      try {
        const [, result, sha, by, stat] = JSON.parse(record.line.toString("utf8")) as [string, unknown, string?, FormattedBy?, FileStat?];
        record.result = sha === undefined ? result : this.writtenFile(result as Omit<OutputFile, "content">, sha, by!, stat);
      } catch {
        return undefined; // the file's hash matched: only a canon bug could bring this here
      }
    }
    if (record.result === undefined) return undefined;
    // A file found by its hash is recorded again, with its size and time now.
    const again = this.verified.has(record.result as object);
    if (again) this.changed = true;
    this.used.set(key, { result: record.result, line: again ? undefined : record.line });
    return record.result;
  }

  /**
   * A file record's file as the output folder holds it: by its size and time when they are the
   * recorded ones (its content read when asked), else by its text when that hashes as recorded.
   */
  private writtenFile(file: Omit<OutputFile, "content">, sha: string, by: FormattedBy, stat: FileStat | undefined): OutputFile | undefined {
    const output = this.output;
    if (!output) return undefined;
    if (stat && stat[1] < this.recordedAt) {
      const now = output.stat?.(file.path);
      if (now && now[0] === stat[0] && now[1] === stat[1]) {
        const recalled = { ...file, formatted: by, digest: sha, onDisk: true } as OutputFile;
        Object.defineProperty(recalled, "content", { enumerable: true, get: () => output.read(file.path) ?? "" });
        return recalled;
      }
    }
    const text = output.read(file.path);
    if (text === undefined || digest(text) !== sha) return undefined;
    const found: OutputFile = { ...file, content: text, formatted: by, digest: sha };
    const read = output.readStat?.(file.path);
    if (read && (read[0] !== stat?.[0] || read[1] !== stat?.[1])) this.verified.set(found, { file, sha, by, stat: read });
    return found;
  }

  keep(key: string, result: unknown): void {
    if (!this.used.has(key)) {
      this.used.set(key, { result });
      this.changed = true;
    }
  }

  /** See `Engine.written`. */
  written(file: object, formatted: { readonly content: string }, by: FormattedBy): void {
    this.texts.set(file, { formatted, by });
  }

  /**
   * The file's records, read as bytes: its hash is taken over them, and each line is turned into
   * text only when it is recalled (and written back as the bytes it was read as).
   */
  private load(): Map<string, { line: Buffer; result?: unknown }> {
    if (this.loaded) return this.loaded;
    this.loaded = new Map();
    let bytes: Buffer;
    try {
      // Its time before its bytes: a file replaced in between is judged by the older time.
      this.recordedAt = statSync(this.file).mtimeMs;
      bytes = readFileSync(this.file);
    } catch {
      return this.loaded; // no records yet
    }
    try {
      const last = bytes.lastIndexOf(NEWLINE, bytes.length - 2);
      const body = bytes.subarray(0, last + 1);
      const header = JSON.parse(bytes.toString("utf8", last + 1)) as Partial<RecordsHeader>;
      if (header.format !== RECORDS_FORMAT || header.canon !== this.canon || header.sha256 !== createHash("sha256").update(body).digest("hex")) return this.loaded;
      const records = new Map<string, { line: Buffer; result?: unknown }>();
      for (let start = 0; start < body.length; ) {
        const end = body.indexOf(NEWLINE, start) + 1;
        // A line is `["<key>",<result>…]`: the key is read here, the rest when it is recalled.
        const close = body.indexOf(KEY_END, start + 2);
        if (body[start] !== 0x5b || body[start + 1] !== 0x22 || close < 0 || close >= end) return this.loaded;
        records.set(body.toString("latin1", start + 2, close), { line: body.subarray(start, end) });
        start = end;
      }
      if (records.size !== header.count) return this.loaded;
      this.loaded = records;
    } catch {
      // Damaged or foreign: every unit is computed.
    }
    return this.loaded;
  }

  /** The line of a record this run made: a file written by this run without its text. */
  private lineOf(key: string, result: unknown): string {
    if (typeof result !== "object" || result === null) return JSON.stringify([key, result]);
    const verified = this.verified.get(result);
    if (verified) return JSON.stringify([key, verified.file, verified.sha, verified.by, verified.stat]);
    const written = this.texts.get(result);
    if (!written) return JSON.stringify([key, result]);
    const { content, formatted, ...file } = result as OutputFile;
    void content;
    void formatted;
    return JSON.stringify([key, file, digest(written.formatted.content), written.by]);
  }

  save(): void {
    // Nothing new, and nothing of the old file left unused: the file on disk is this run's.
    if (!this.changed && this.loaded !== null && this.used.size === this.loaded.size) return;
    const temp = `${this.file}.${process.pid}.tmp`;
    let fd: number | null = null;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true });
      const out = (fd = openSync(temp, "w"));
      const hash = createHash("sha256");
      // Written in batches of lines (a recalled one's bytes as they were read), each batch handed
      // to the system as the lines are: no copy of them, nor of the whole file, is ever built.
      let batch: Buffer[] = [];
      let size = 0;
      const flush = () => {
        if (batch.length > 0 && writevSync(out, batch) !== size) throw new Error("short write");
        batch = [];
        size = 0;
      };
      for (const [key, record] of this.used) {
        const line = record.line ?? Buffer.from(`${this.lineOf(key, record.result)}\n`);
        hash.update(line);
        batch.push(line);
        size += line.length;
        if (batch.length === LINES_PER_WRITE) flush();
      }
      flush();
      const header: RecordsHeader = { format: RECORDS_FORMAT, canon: this.canon, count: this.used.size, sha256: hash.digest("hex") };
      writeSync(out, `${JSON.stringify(header)}\n`);
      closeSync(out);
      fd = null;
      // Written aside and renamed into place: a reader never sees half a file.
      renameSync(temp, this.file);
    } catch {
      // The records only save time.
      if (fd !== null) closeSync(fd);
      rmSync(temp, { force: true });
    }
  }
}

const NEWLINE = 0x0a;
/** Lines written by one `writev`: well under the system's limit of buffers per call (IOV_MAX, 1024 on Linux). */
const LINES_PER_WRITE = 512;
/** Where a line's key ends: `",` (a key is base64url: it holds no quote). */
const KEY_END = Buffer.from('",');

/** The digest a file record keeps of a written text. */
function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}

/**
 * The sha256 of a text (base64url), remembered by the text for the run: the gate keys a new
 * OpenAPI document's part digests by it, and the stamp of the same run takes it for that file
 * (generate.ts) instead of hashing its 2 MB again.
 */
export const textDigest: (text: string) => string = memoByText("sha256 of a text", digest, 1024);
