import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { diagnostic } from "../diagnostics/catalog.ts";
import { MINIMUM_NOTICE_DAYS } from "../diagnostics/sunset.ts";
import type { Diagnostic, SourceLocation } from "../diagnostics/diagnostic.ts";
import type { ApiModel, Definitions, VersionDef } from "../model/types.ts";
import { versionNumber } from "../model/snapshot.ts";
import { compareDocuments } from "./compare.ts";
import { exportOf, isExportFilters, isOneExport, listUnderOf, locateChange, versionedOwner } from "./locate.ts";
import { breakFix, breakMessage, representative, versionList, type FieldOwner, type VersionedChange } from "./messages.ts";
import { filterFieldOf, pathKey } from "./paths.ts";
import { Engine, textDigest } from "../engine.ts";
import { partDigests, type PartDigestTable } from "./parts.ts";
import { publishedDocument } from "./published.ts";
import { namesAllReferences } from "./schema.ts";
import { obj } from "./resolve.ts";
import { sunsetOf } from "./sunset.ts";
import { withoutUnchangedPaths } from "./unchanged.ts";
import type { Change, Json, JsonObject } from "./types.ts";

export interface GateInput {
  /** The output folder: a version whose `vN/openapi.json` is there is published. */
  out: string;
  /** The new output, by path relative to the output folder. */
  files: ReadonlyArray<{ path: string; content: string }>;
  definitions: Definitions;
  model: ApiModel;
  /** YYYY-MM-DD, for sunsets. */
  today: string;
  /** Report breaks as warnings and let them through (a version that has never shipped). */
  allowBreaking: boolean;
  /** The output folder's files as a `dev` session last left them: read from here, not from disk. */
  known?: ReadonlyMap<string, string> | null;
  /** Files of the output folder this run has read already (by path): not read again. */
  read?: ReadonlyMap<string, string>;
  /**
   * The document of this run's `vN/openapi.json`, by version, built from this run's model as the
   * OpenAPI emitter builds it: taken instead of parsing the text again (it is what `JSON.parse`
   * gives for the text; in a dev session the emit thread writes the text from the same model,
   * and test/dev-session.test.ts holds the two equal).
   */
  documentOf?: (version: string) => Json | undefined;
}

/** Why the gate refused a published version: what the summary after the diagnostics says. */
export type Refusal =
  /** A breaking change of its contract. */
  | "breaking-change"
  /** `draft: true` on it: a published version cannot become a draft again. */
  | "draft"
  /** `retired: true` before the sunset its published document announces (or with none announced). */
  | "retired-early"
  /** Gone from api.yaml's versions before the sunset its published document announces. */
  | "removed-early"
  /** A sunset earlier than its published document announced. */
  | "sunset-earlier"
  /** A deprecation first announced with a sunset under 90 days from today. */
  | "short-notice";

export interface GateResult {
  diagnostics: Diagnostic[];
  /** Published versions that this run would break (or remove early). */
  broken: string[];
  /** Why each of `broken` is refused (the published sunset where that is why); a version may have two reasons. */
  refusals: Array<{ version: string; reason: Refusal; sunset?: string }>;
  /** Published versions removed after their sunset: accepted. */
  retired: string[];
}

/**
 * The text of the published documents in the output folder, by version: from `known` (a `dev`
 * session's), else those in the folder, each taken from `read` when the run has read it already.
 */
export async function publishedDocuments(out: string, known?: ReadonlyMap<string, string> | null, read?: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const docs = new Map<string, string>();
  if (known) {
    for (const [file, text] of known) {
      const version = /^(v[1-9][0-9]*)\/openapi\.json$/.exec(file)?.[1];
      if (version) docs.set(version, text);
    }
    return docs;
  }
  let entries;
  try {
    entries = await readdir(out, { withFileTypes: true });
  } catch {
    return docs;
  }
  const versions = entries.filter((e) => e.isDirectory() && /^v[1-9][0-9]*$/.test(e.name)).map((e) => e.name);
  await Promise.all(
    versions.map(async (v) => {
      try {
        docs.set(v, read?.get(`${v}/openapi.json`) ?? (await readFile(path.join(out, v, "openapi.json"), "utf8")));
      } catch {
        // No document: the version is not published.
      }
    }),
  );
  return docs;
}

/**
 * The compatibility gate: every published version's new document is compared with the
 * published one; a breaking change, or a version removed before its sunset, is refused.
 */
export async function compatibilityGate(input: GateInput): Promise<GateResult> {
  const engine = Engine.current();
  const published = await publishedDocuments(input.out, input.known, input.read);
  const fresh = new Map(input.files.filter((f) => /^v[1-9][0-9]*\/openapi\.json$/.test(f.path)).map((f) => [f.path.split("/")[0]!, f.content]));
  const latest = Math.max(0, ...input.definitions.versions.map((v) => versionNumber(v.name)).filter((n) => !Number.isNaN(n)));
  // Where a break belongs: the first draft when there is one (SPEC §3: a draft is not published), else a new version.
  const firstDraft = input.definitions.versions.find((v) => v.draft && !v.retired)?.name;
  // Else the first version api.yaml lists that has no document in the output folder yet (added in
  // this very run, not published): the change belongs there, not in one more version after it.
  const unpublished = input.definitions.versions.find((v) => !v.retired && !published.has(v.name))?.name;
  const next = firstDraft ?? unpublished ?? `v${latest + 1}`;
  const drafts = new Set(input.definitions.versions.filter((v) => v.draft).map((v) => v.name));
  const result: GateResult = { diagnostics: [], broken: [], refusals: [], retired: [] };
  const severity = input.allowBreaking ? "warning" : "error";
  const push = (d: Diagnostic) => result.diagnostics.push({ ...d, severity });
  const breaking: VersionedChange[] = [];
  for (const version of [...published.keys()].sort((a, b) => versionNumber(a) - versionNumber(b))) {
    const text = published.get(version)!;
    const content = fresh.get(version);
    if (content === text) continue;
    // With the digests of its parts, which the run that wrote this very text recorded, the parts
    // that are the same in the new document are taken from it and only the others are parsed.
    const recorded = engine?.recording && content !== undefined ? (engine.recalledBy(PART_DIGESTS, textDigest(text)) as PartDigestTable | undefined) : undefined;
    const built = recorded && input.documentOf?.(version);
    const old = parsed(text, () => (built && typeof built === "object" && !Array.isArray(built) ? publishedDocument(text, recorded, built) : undefined) ?? parseJson(text));
    // A document canon cannot read is no contract to hold to; `check` lists it as differing.
    if (old === undefined) continue;
    // A draft's document was never a contract: it may change in any way, be published, or go.
    if (wasDraft(old)) continue;
    if (drafts.has(version)) {
      result.broken.push(version);
      result.refusals.push({ version, reason: "draft" });
      const at = input.definitions.versions.find((v) => v.name === version)!.at("draft");
      // Refused with --allow-breaking too: that flag lets a break of a version that never shipped
      // through, it does not make a published version unpublished (its document would lose
      // nothing a client could see, and the gate would stop holding it from then on).
      result.diagnostics.push(
        diagnostic(
          "version-draft-published",
          at,
          `${version} is published (its document in the output folder is no draft): it cannot become a draft again, its clients rely on it`,
          `remove draft: true from ${version}; make the change in a new version${firstDraft && firstDraft !== version ? ` or in the draft ${firstDraft}` : ""}${input.allowBreaking ? ` (--allow-breaking does not reopen a published version; if ${version} never shipped, change it in place with --allow-breaking instead)` : ""}`,
        ),
      );
      continue;
    }
    if (content === undefined) {
      const listed = input.definitions.versions.find((v) => v.name === version);
      const problem = removedVersion(version, old, input.today, listed);
      if (!problem) {
        result.retired.push(version);
        continue;
      }
      result.broken.push(version);
      result.refusals.push({ version, reason: listed?.retired ? "retired-early" : "removed-early", ...(problem.sunset ? { sunset: problem.sunset } : {}) });
      push(diagnostic("version-removed-early", listed?.retired ? listed.at("retired") : input.definitions.at("versions"), problem.message, problem.fix));
      continue;
    }
    const now = parsed(content, () => input.documentOf?.(version) ?? parseJson(content));
    if (now === undefined) throw new Error(`canon wrote a ${version}/openapi.json that is not JSON`);
    const shortened = sunsetShortened(version, old, now, input.today);
    if (shortened) {
      result.broken.push(version);
      result.refusals.push({ version, reason: shortened.promised ? "sunset-earlier" : "short-notice", sunset: shortened.sunset });
      const listed = input.definitions.versions.find((v) => v.name === version);
      push(diagnostic("version-sunset-earlier", listed?.at("sunset") ?? input.definitions.at("versions"), shortened.message, shortened.fix));
    }
    if (!namesAllReferences(obj(old)) && namesAllReferences(obj(now))) {
      const at = input.definitions.versions.find((v) => v.name === version)?.at() ?? input.definitions.at("versions");
      result.diagnostics.push(
        diagnostic(
          "references-not-compared",
          at,
          `${version}'s published document was written before canon named the collection each id references: a \`references\` added to an input id or changed in this run is not checked`,
          `regenerate once with no change to the definitions (the document it writes names them), then make the change`,
        ),
      );
    }
    // A resource made exportable, or an export offering another format, grows the version's
    // `/vN/exports`: the body's union takes a member, the job's `resource`, `format` and `filters`
    // a value or a shape. A job echoes what its caller asked for (a principal lists only its own
    // jobs), so a client that never asks for the new export never meets it: no break. A change
    // inside one resource's own export schemas still is one.
    const grown = exportsGrew(obj(old), obj(now));
    const breaks = compareDocuments(...withoutUnchangedPaths(obj(old), obj(now))).filter(
      (c) => c.breaking && !(grown && isExportEcho(c) && !isOneExport(input.model, version, c)),
    );
    if (breaks.length === 0) continue;
    if (!shortened) result.broken.push(version);
    result.refusals.push({ version, reason: "breaking-change" });
    breaking.push(...breaks.map((change) => ({ version, change })));
  }
  for (const group of groups(input, breaking)) {
    const versions = versionList([...new Set(group.map((g) => g.version))]);
    const first = representative(group.map((g) => g.change));
    push(diagnostic("breaking-change", group.location, breakMessage(group, group.exportFilter), breakFix(versions, next, first, firstDraft !== undefined ? true : unpublished !== undefined ? "listed" : false, group.exportFilter, group.listUnder, group.owner)));
  }
  // Each new document's part digests, by its text: the published document of the next run.
  if (engine?.recording) {
    for (const [version, content] of fresh) {
      const doc = input.documentOf?.(version);
      if (typeof doc === "object" && doc !== null && !Array.isArray(doc)) engine.record(PART_DIGESTS, textDigest(content), partDigests(doc));
    }
  }
  return result;
}

/** Whether `now` exports a collection, or offers a format, that `old` does not (the union of `ExportCreate`, the job's `format`). */
function exportsGrew(old: JsonObject, now: JsonObject): boolean {
  const schemas = (doc: JsonObject) => obj(obj(doc.components).schemas);
  const collections = (doc: JsonObject) => Object.keys(obj(obj(obj(schemas(doc).ExportCreate).discriminator).mapping));
  const formats = (doc: JsonObject) => {
    const values = obj(obj(obj(schemas(doc).Export).properties).format).enum;
    return Array.isArray(values) ? values.map(String) : [];
  };
  const grew = (a: string[], b: string[]) => b.some((x) => !a.includes(x));
  return grew(collections(old), collections(now)) || grew(formats(old), formats(now));
}

/**
 * Whether a change of an operation of `/vN/exports` is what a new exportable collection or format
 * makes of a job's echo of its request: a new value of its `resource` or `format`, a new member
 * of the union of its `filters` (or of the body's).
 */
function isExportEcho(change: Change): boolean {
  if (!/^\/v[0-9]+\/exports(\/|$)/.test(change.operation?.path ?? "")) return false;
  const field = (change.schema?.field || change.field).split(".").pop() ?? "";
  if (change.kind === "enum-value-added") return field === "resource" || field === "format";
  return change.kind === "schema-changed" && change.detail.startsWith("may also be");
}

/** The name of a document's part digests in the engine's records. */
const PART_DIGESTS = "compat/part digests of a document";

/**
 * Documents by their text: in `canon dev` the document one save writes is the published one
 * the next save is compared with, so it is neither parsed then nor now.
 */
function parsed(text: string, parse: () => Json | undefined): Json | undefined {
  const engine = Engine.current();
  return engine ? engine.memo<Json | undefined>("published documents", 2).get(text, parse) : parse();
}

/** Whether a published document is a draft's (`info.x-canon-draft`, which the OpenAPI emitter writes for `draft: true`). */
function wasDraft(doc: Json): boolean {
  const info = obj(doc).info;
  return typeof info === "object" && info !== null && !Array.isArray(info) && (info as Record<string, Json>)["x-canon-draft"] === true;
}

/** A document's JSON, or undefined when it is not JSON. */
function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/**
 * Why a published version that this run no longer generates may not go yet, or null when it may:
 * its published document announced a sunset (the `Sunset` header) that has come. A version still
 * listed with `retired: true` is said as retired (what the team did), one gone from `versions` as
 * removed; a sunset that api.yaml moved earlier than the published one is named, since the
 * published date is the promise the clients hold.
 */
function removedVersion(version: string, old: Json, today: string, listed: VersionDef | undefined): { message: string; fix: string; sunset?: string } | null {
  const sunset = sunsetOf(old);
  if (sunset !== undefined && today >= sunset) return null;
  if (listed?.retired) {
    if (sunset === undefined) {
      return {
        message: `${version} is published and marked retired: true, but its published document never announced a deprecation or sunset: its clients have had no notice`,
        fix: `remove retired: true from ${version}; give it deprecated and a sunset at least 90 days from today and generate, so that its responses announce them (Deprecation, Sunset); retire it once that sunset has passed`,
      };
    }
    const moved = listed.sunset !== undefined && listed.sunset !== sunset ? `; api.yaml now says sunset: ${listed.sunset}, but the published date is the one its clients were promised` : "";
    return {
      sunset,
      message: `${version} is published and marked retired: true before the sunset its published document announces, ${sunset} (today is ${today})${moved}`,
      fix: `remove retired: true from ${version}${moved ? ` and put back sunset: ${sunset}` : ""} (canon serves it until then); retire it on or after ${sunset}`,
    };
  }
  if (sunset === undefined) {
    return {
      message: `${version} is published and was removed from the definitions, but it was never deprecated: its clients have had no notice`,
      fix: `put ${version} back in versions in api.yaml; deprecate it with a sunset date at least 90 days later, and retire it (retired: true) once that date has passed`,
    };
  }
  return {
    sunset,
    message: `${version} is published and was removed from the definitions before its sunset on ${sunset} (today is ${today})`,
    fix: `keep ${version} in versions in api.yaml until ${sunset}; on or after that date write retired: true on it (a version stays listed once retired)`,
  };
}

/**
 * Whether a published version's new document announces a sunset its clients were not promised:
 * earlier than the one its published document announces (the `Sunset` header is the promise; a
 * sunset moved earlier in api.yaml, then `retired: true` once it passed, took the version away
 * before the promised date), or, for a deprecation announced in this run, less than 90 days
 * from today (deprecated and sunset dates written in the past gave its clients no notice, and the
 * next run could retire it). A later sunset, or none, is always accepted.
 */
function sunsetShortened(version: string, old: Json, now: Json, today: string): { message: string; fix: string; sunset: string; promised: boolean } | null {
  const promised = sunsetOf(old);
  const announced = sunsetOf(now);
  if (announced === undefined) return null;
  if (promised !== undefined) {
    if (announced >= promised) return null;
    return {
      promised: true,
      sunset: promised,
      message: `${version} is published with its sunset on ${promised}, and this moves it earlier to ${announced}: its clients were promised ${version} until ${promised}`,
      fix: `put back sunset: ${promised} on ${version} (a later date is fine); retire it on or after ${promised}`,
    };
  }
  const earliest = new Date(Date.parse(`${today}T00:00:00Z`) + MINIMUM_NOTICE_DAYS * 86_400_000).toISOString().slice(0, 10);
  if (announced >= earliest) return null;
  return {
    promised: false,
    sunset: earliest,
    message: `${version} is published and this run first announces its deprecation, with a sunset on ${announced}: less than ${MINIMUM_NOTICE_DAYS} days from today (${today}), so its clients would have less notice than a deprecated version promises (conventions §9.9)`,
    fix: `give ${version} a sunset on ${earliest} or later (deprecated: ${today}, the day the notice goes out, or later)`,
  };
}

/**
 * Breaks of one kind caused by one definition line, with the same words: one diagnostic for the
 * field that every operation, body and published version shows.
 */
function groups(input: GateInput, breaks: VersionedChange[]): Array<VersionedChange[] & { location: SourceLocation; exportFilter: boolean; listUnder?: string; owner?: FieldOwner }> {
  const byKey = new Map<string, VersionedChange[] & { location: SourceLocation; exportFilter: boolean; listUnder?: string; owner?: FieldOwner }>();
  const located = breaks.map((b) => ({ b, location: locateChange(input.definitions, input.model, b.version, b.change) }));
  const sameSort = (x: (typeof located)[number], y: (typeof located)[number]) =>
    x.b.version === y.b.version && x.b.change.sortKey === y.b.change.sortKey && x.location.file === y.location.file && x.location.line === y.location.line;
  for (const entry of located) {
    const { b, location } = entry;
    let c = b.change;
    // An export's sort key gone where the list's was renamed with its field (the export's keys
    // are names only): the same break, said as the rename.
    if (c.kind === "enum-value-removed" && c.sortKey !== undefined) {
      const rename = located.find((r) => r.b.change.kind === "sort-key-renamed" && sameSort(r, entry))?.b.change;
      if (rename) c = { ...c, kind: rename.kind, renamedTo: rename.renamedTo!, detail: rename.detail, text: `${c.subject} ${rename.detail}` };
    }
    // A field of an export's filters is one of the list's filters, and is said as one.
    const exportFilter = isExportFilters(input.model, b.version, c);
    // A filter's operators (`price[gte]`) are the filter's: one break of the field, not one per operator.
    // A constraint of the whole record (a composite unique, the tenant) is one break for every body that has it (create, update, replace).
    const wholeRecord = c.kind.startsWith("unique-") || c.kind.startsWith("tenant-");
    // The tenant is one break for bodies and records alike (records name it too, for a resource with no write body).
    const whole = c.kind.startsWith("tenant-") ? "record" : c.part.in;
    const place = c.schema?.field ? c.schema.field : c.part.in === "parameter" ? c.part.name : wholeRecord ? whole : `${c.operation?.method} ${pathKey(c.operation?.path ?? "")}`;
    // A filter renamed (`price` and `price[gte]` to `cost` and `cost[gte]`) is one break too.
    const detail = c.detail.replace(/\[[a-z]+\]"/g, '"');
    const key = `${location.file}:${location.line}:${location.column}|${c.kind}|${c.keyword ?? ""}|${filterFieldOf(place.split(".").pop()!)}|${detail}|${exportFilter}`;
    let group = byKey.get(key);
    if (!group) {
      // A list under a referenced record that is gone: its field's `list_under` (SPEC §12.3).
      const listUnder = listUnderOf(input.definitions, input.model, b.version, c);
      // An action's field, or one inside an object or a map, is versioned by its action or its top-level field.
      const exported = exportOf(input.model, b.version, c);
      const owner = versionedOwner(input.definitions, input.model, b.version, c) ?? (exported ? { export: exported } : undefined);
      group = Object.assign([] as VersionedChange[], { location, exportFilter, ...(listUnder ? { listUnder } : {}), ...(owner ? { owner } : {}) });
      byKey.set(key, group);
    }
    group.push(c === b.change ? b : { ...b, change: c });
  }
  return [...byKey.values()];
}
