export { compareDocuments, breakingChanges } from "./compare.ts";
export type { Change, ChangeKind, Json, JsonObject, OperationRef, Part } from "./types.ts";
