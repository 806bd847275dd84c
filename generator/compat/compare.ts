import { compareOperations } from "./operations.ts";
import { operationMemo } from "./remembered.ts";
import { obj } from "./resolve.ts";
import type { Change, Json, JsonObject } from "./types.ts";

/**
 * Every change from one OpenAPI document to another, each marked breaking or not for a client
 * of the old one. Pure: reads only the two documents. Operations are matched by method and path
 * without the version prefix, so two versions of one API compare as well as two releases of one
 * version.
 */
export function compareDocuments(oldDoc: Json, newDoc: Json, remember = false): Change[] {
  const a = obj(oldDoc);
  const b = obj(newDoc);
  // Remembering: the changes of paths compared before are taken as they were found (remembered.ts).
  const memo = remember ? operationMemo(a, b) : null;
  return [...compareServers(a, b), ...compareOperations(a, b, memo)];
}

function compareServers(a: JsonObject, b: JsonObject): Change[] {
  const urls = (doc: JsonObject) => (Array.isArray(doc.servers) ? doc.servers.map((s) => String(obj(s).url)) : []);
  const after = new Set(urls(b));
  return urls(a)
    .filter((url) => !after.has(url))
    .map((url) => ({
      kind: "servers-changed" as const,
      breaking: true,
      operation: null,
      part: { in: "operation" as const },
      field: "",
      pointer: "#/servers",
      subject: `the server ${url}`,
      detail: `is gone${after.size ? ` (now ${[...after].join(", ")})` : ""}`,
      text: `the server ${url} is gone${after.size ? ` (now ${[...after].join(", ")})` : ""}`,
    }));
}

export function breakingChanges(changes: Change[]): Change[] {
  return changes.filter((c) => c.breaking);
}
