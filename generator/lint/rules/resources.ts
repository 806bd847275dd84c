import { namesOf } from "../../model/names.ts";
import { actionSymbols, resourceSymbols } from "../../model/symbols.ts";
import type { ResourceDef } from "../../model/types.ts";
import { singularOf, snakeCase } from "../../util/names.ts";
import { q, type LintContext } from "../context.ts";
import { canonTypeNames } from "../../emit/shared/canon-names.ts";

/**
 * operations, duplicate-resource, path-conflict, action-fields: each collection is defined
 * once and owns its paths; operations make sense together; action fields leave room for the
 * fields canon adds to every action record.
 */
export function resourceRules(ctx: LintContext): void {
  duplicates(ctx);
  sharedSymbols(ctx);
  for (const r of ctx.defs.resources) {
    operations(ctx, r);
    conflicts(ctx, r);
    actionFields(ctx, r);
  }
}

function duplicates(ctx: LintContext): void {
  const byCollection = new Map<string, ResourceDef>();
  const bySingular = new Map<string, ResourceDef>();
  for (const r of ctx.defs.resources) {
    const first = byCollection.get(r.collection);
    if (first) {
      ctx.report(
        "duplicate-resource",
        r.at("resource"),
        `collection ${q(r.collection)} is already defined in ${first.file}`,
        `rename one of them, or merge ${r.file} into ${first.file}`,
      );
      continue;
    }
    byCollection.set(r.collection, r);
    const sameSingular = bySingular.get(r.singular);
    if (sameSingular) {
      ctx.report(
        "duplicate-resource",
        r.singular !== singularOf(r.collection) ? r.at("singular") : r.at("resource"),
        `${r.collection} and ${sameSingular.collection} (${sameSingular.file}) share the singular ${q(r.singular)}, which names their types and events`,
        "give one of them another singular",
      );
    } else bySingular.set(r.singular, r);
  }
}

/**
 * The names canon generates for a collection (`TicketEscalation`, `TicketEscalationCreate`, the
 * service `ticketEscalations`, …) and for an action's records (the `escalations` of tickets:
 * `TicketEscalation`, …), and the bodies of an export (`TicketExportCreate`), must not meet: a
 * collection `ticket-escalations` beside that action would share its types, its schema and
 * operationId in OpenAPI, and its service, so that the action's records were listed as the
 * collection's. Collections sharing a singular are duplicate-resource already (above).
 *
 * A record type and its bodies may have a name canon's code uses for its own (`Store`,
 * `Client`, `Record`): `types.ts` declares it as it is, and the files that import it beside
 * canon's code alias it (emit/shared/local-names.ts). The names canon derives from them
 * (`StoreValues`, `StoresPage`, `StoresClient`, …) are declared beside canon's code, so those
 * may not be one of canon's.
 */
function sharedSymbols(ctx: LintContext): void {
  const owners = new Map<string, string>();
  // Names the generated code uses for its own types, and the TypeScript globals it relies on.
  const reserved = canonTypeNames();
  const canonOwner = "the generated code uses for a type of its own (canon's runtime and client, or TypeScript's)";
  // Another collection's or action's name always clashes; one of canon's only with the names
  // declared beside canon's code, not with the types' own (`own`).
  const clashOf = (names: string[], own: readonly string[]) => names.find((name) => owners.has(name) || (reserved.has(name) && !own.includes(name)));
  const ownerOf = (name: string) => owners.get(name) ?? canonOwner;
  const resourceNames = (r: ResourceDef) => {
    const names = namesOf(r.singular, r.collection);
    const s = resourceSymbols(names, r.collection);
    // The typed client's class and queries of the collection (emit/client/classes.ts).
    const client = [`${names.pluralPascal}Client`, `${names.pluralPascal}ListQuery`, `${names.pluralPascal}SearchQuery`];
    return [s.type, s.createBody, s.updateBody, s.replaceBody, s.values, s.service, s.page, ...(r.exportable ? [s.exportCreate, s.exportFilters] : []), ...client];
  };
  const bySingular = new Set<string>();
  // Names other rules refuse (empty, not text) name nothing here.
  const named = (x: unknown): x is string => typeof x === "string" && x.length > 0;
  for (const r of ctx.defs.resources) {
    if (!named(r.singular) || !named(r.collection) || bySingular.has(r.singular)) continue;
    bySingular.add(r.singular);
    const names = resourceNames(r);
    const s = resourceSymbols(namesOf(r.singular, r.collection), r.collection);
    const clash = clashOf(names, [s.type, s.createBody, s.updateBody, s.replaceBody]);
    if (clash !== undefined) {
      const ownSingular = r.singular !== singularOf(r.collection);
      if (!owners.has(clash)) {
        ctx.report(
          "duplicate-resource",
          ownSingular ? r.at("singular") : r.at("resource"),
          `collection ${q(r.collection)} would be generated with the name ${clash}, which ${ownerOf(clash)}: the generated code would not compile, or its client would type the records as that`,
          `give it another singular (singular: another noun, which names its types and events), or the collection another name`,
        );
        continue;
      }
      ctx.report(
        "duplicate-resource",
        r.at("resource"),
        `collection ${q(r.collection)} would be generated with the name ${clash}, which ${ownerOf(clash)} has too: their types and OpenAPI schemas would be one`,
        `give one of them another name (or another singular)`,
      );
      continue;
    }
    for (const name of names) owners.set(name, `collection ${q(r.collection)} (${r.file})`);
  }
  for (const r of ctx.defs.resources) {
    if (!named(r.singular)) continue;
    for (const a of r.actions) {
      if (!named(a.name)) continue;
      const s = actionSymbols(r.singular, singularOf(a.name), a.name);
      // The typed client's class of the action (emit/client/classes.ts).
      const client = `${namesOf(singularOf(a.name), a.name).pluralPascal}Of${namesOf(r.singular, r.collection).pascal}Client`;
      const names = [s.type, s.createBody, s.values, s.service, client];
      const clash = clashOf(names, [s.type, s.createBody]);
      if (clash === undefined) {
        for (const name of names) owners.set(name, `action ${q(a.name)} of ${r.collection} (${r.file})`);
        continue;
      }
      if (!owners.has(clash)) {
        ctx.report(
          "path-conflict",
          a.at(),
          `action ${q(a.name)} of ${r.collection} would be generated as ${clash}, a name ${ownerOf(clash)}: the generated code would not compile, or its client would type the records as that`,
          `give the action another plural noun, or the collection another singular`,
        );
        continue;
      }
      ctx.report(
        "path-conflict",
        a.at(),
        `action ${q(a.name)} of ${r.collection} would be generated as ${clash}, a name ${ownerOf(clash)} has too: their types, OpenAPI schemas, operationIds and services would be one`,
        `give the action another plural noun, or the collection another name`,
      );
    }
  }
}

/**
 * How many entries the operations list has as written (normalization drops repeats): as the
 * definition says, or else (a definition built by hand) counted in the YAML.
 */
function writtenCount(r: ResourceDef): number {
  if (r.operationsWritten !== undefined) return r.operationsWritten;
  const list = r.at("operations");
  let n = 0;
  while (n < 64) {
    const item = r.at("operations", n);
    if (item.line === list.line && item.column === list.column) break;
    n++;
  }
  return n;
}

function operations(ctx: LintContext, r: ResourceDef): void {
  const written = writtenCount(r);
  if (written > r.operations.length && r.operations.length > 0) {
    ctx.report(
      "operations",
      r.at("operations"),
      `operations of ${r.collection} lists an operation more than once (${written} entries, ${r.operations.length} different)`,
      `list each operation once: [${r.operations.join(", ")}]`,
    );
  }
  if (r.operations.length === 0) {
    ctx.report("operations", r.at("operations"), `${r.collection} offers no operation`, "list at least one of list, read, create, update, replace, delete (or remove operations for the default)");
  }
  if (r.actions.length > 0 && !r.operations.includes("read")) {
    ctx.report(
      "operations",
      r.at("operations"),
      `${r.collection} has actions (${r.actions.map((a) => a.name).join(", ")}) but no read operation: an action looks up its record first`,
      `add read to operations: [${[...r.operations, "read"].join(", ")}]`,
    );
  }
}

function conflicts(ctx: LintContext, r: ResourceDef): void {
  const owned: Record<string, string | undefined> = {
    docs: "canon serves the API reference page at /vN/docs",
    events: ctx.defs.events ? "canon serves /vN/events because api.yaml sets events: true" : undefined,
    exports: ctx.defs.resources.some((x) => x.exportable) ? "canon serves /vN/exports because a resource sets export: true" : undefined,
  };
  const reason = owned[r.collection];
  if (reason) ctx.report("path-conflict", r.at("resource"), `collection ${q(r.collection)} collides with a path canon provides: ${reason}`, "choose another plural noun for the collection");
  for (const a of r.actions) {
    const child = ctx.defs.resources.find((c) => c.parent === r.collection && c.collection === a.name);
    const listed = child ? undefined : ctx.defs.resources.find((c) => c.collection === a.name && listsUnder(c, r.collection));
    if (listed) {
      ctx.report(
        "path-conflict",
        a.at(),
        `action ${q(a.name)} of ${r.collection} uses the path /vN/${r.collection}/{id}/${a.name}, which lists ${listed.collection} under ${r.collection} (list_under in ${listed.file})`,
        "give the action another plural noun",
      );
    }
    if (!child) continue;
    ctx.report(
      "path-conflict",
      a.at(),
      `action ${q(a.name)} of ${r.collection} uses the path /vN/${r.collection}/{id}/${a.name}, which lists the child collection ${child.collection} (${child.file})`,
      "give the action another plural noun",
    );
  }
}

/** Whether `c` has a list_under field (a reference, or an array of them) naming `collection`. */
function listsUnder(c: ResourceDef, collection: string): boolean {
  return c.fields.some(
    (f) =>
      f.listUnder === true &&
      (f.type === "uuid" ? f.references : f.type === "array" && f.items?.type === "uuid" ? f.items.references : undefined) === collection,
  );
}

function actionFields(ctx: LintContext, r: ResourceDef): void {
  const target = `${snakeCase(r.singular)}_id`;
  for (const a of r.actions) {
    const record = singularOf(a.name);
    for (const f of a.fields) {
      if (f.name === target) {
        ctx.report(
          "action-fields",
          f.at(),
          `action field ${q(f.name)} collides with the field canon adds to every ${record}: the id of the ${r.singular}, taken from the path`,
          `remove ${q(f.name)}; POST /vN/${r.collection}/{id}/${a.name} fills it`,
        );
      }
      if (f.readOnly) {
        ctx.report("action-fields", f.at("read_only"), `action field ${q(`${a.name}.${f.name}`)} is read_only, but action fields are the action's input`, "remove read_only");
      }
      if (f.unique) {
        ctx.report("action-fields", f.at("unique"), `unique does not apply to action field ${q(`${a.name}.${f.name}`)}`, "remove unique");
      }
    }
  }
}
