/**
 * The user's type names where canon's code has the same name. A collection `stores` makes the
 * type `Store`, the runtime's store interface too; `clients` makes `Client`, the typed client's
 * interface; `records` makes `Record`, TypeScript's. The user's name wins wherever the user sees
 * it: `types.ts` declares `Store`, the OpenAPI document names its schema `Store`. A file that
 * imports the type beside canon's code (`routes.ts`, `pagination.ts`, `client.ts`) imports it
 * under an alias, `import type { Store as StoreRecord } from "./types.ts"`, so that canon's
 * `Store` stays canon's there. Only such names are aliased: every other import is written as it
 * is named.
 */
import type { RecordSymbols, ResourceSymbols } from "../../model/symbols.ts";
import type { VersionModel, VersionResource } from "../../model/types.ts";
import { source, type ImportSource } from "./imports.ts";

/** The local names of a version's record types, by their names: only those that are aliased. */
export type TypeAliases = ReadonlyMap<string, string>;

/** The names of `types.ts` a record type stands for: the record, and its bodies. */
type TypeNames = Pick<ResourceSymbols, "type" | "createBody" | "updateBody" | "replaceBody">;

/** The types `vN/<collection>/types.ts` declares: the record and its bodies, and its actions'. */
export function declaredTypes(r: VersionResource): string[] {
  return [r.symbols.type, r.symbols.createBody, r.symbols.updateBody, r.symbols.replaceBody, ...r.actions.flatMap((a) => [a.symbols.type, a.symbols.createBody])];
}

/**
 * The alias of each record or body type of `version` whose name canon's code uses too:
 * `StoreRecord` for a record `Store`, `ClientCreateBody` for a body, numbered on when that is a
 * name of the version or of canon's as well. `canon`: canon's own type names (`EmitContext.canonTypeNames`).
 */
export function typeAliases(version: VersionModel, canon: ReadonlySet<string>): TypeAliases {
  const aliases = new Map<string, string>();
  const records = new Set(version.resources.flatMap((r) => [r.symbols.type, ...r.actions.map((a) => a.symbols.type)]));
  const declared = version.resources.flatMap(declaredTypes);
  const taken = new Set([...canon, ...version.resources.flatMap((r) => [...declaredTypes(r), ...Object.values(r.symbols), ...r.actions.flatMap((a) => Object.values(a.symbols))])]);
  for (const name of declared) {
    if (!canon.has(name) || aliases.has(name)) continue;
    const stem = `${name}${records.has(name) ? "Record" : "Body"}`;
    let alias = stem;
    for (let n = 2; taken.has(alias); n++) alias = `${stem}${n}`;
    taken.add(alias);
    aliases.set(name, alias);
  }
  return aliases;
}

/** `name` as a file that imports it writes it. */
export function localName(aliases: TypeAliases, name: string): string {
  return aliases.get(name) ?? name;
}

/** A resource's or an action's symbols with its types as a file that imports them writes them. */
export function localSymbols<S extends RecordSymbols & Partial<TypeNames>>(aliases: TypeAliases, symbols: S): S {
  if (aliases.size === 0) return symbols;
  const local = { ...symbols, type: localName(aliases, symbols.type), createBody: localName(aliases, symbols.createBody) };
  if (symbols.updateBody !== undefined) local.updateBody = localName(aliases, symbols.updateBody);
  if (symbols.replaceBody !== undefined) local.replaceBody = localName(aliases, symbols.replaceBody);
  return local;
}

/** The source of a `types.ts` offering `names` (type names) as a file writes them: aliased ones under their alias. */
export function typesSource(from: string, names: readonly string[], aliases: TypeAliases): ImportSource {
  const offered = source(from, Object.fromEntries(names.map((n) => [localName(aliases, n), "type" as const])));
  const aliased = names.filter((n) => aliases.has(n));
  return aliased.length ? { ...offered, aliases: new Map(aliased.map((n) => [aliases.get(n)!, n])) } : offered;
}
