// The TypeSpec equivalent of the synthetic definitions (bench/synthetic.ts), for the generation
// comparison: the same resources, fields, constraints, child collections, actions, error
// responses and two versions (v2 adds `flagged` and renames `sum` to `total`), compiled by
// `tsp compile` with @typespec/openapi3 and @typespec/versioning into the two OpenAPI
// documents and nothing else.
//
//   node bench/typespec.ts <dir> <n>     writes <dir>/main.tsp and <dir>/tspconfig.yaml
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { syntheticResources, type SyntheticResource } from "./synthetic.ts";

/** `alpha-bravo-charlie-items` → `AlphaBravoCharlieItem` (model) / `AlphaBravoCharlieItems` (namespace). */
function pascal(name: string): string {
  return name
    .split("-")
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");
}
const modelName = (name: string) => pascal(name).replace(/s$/, "");

const PRELUDE = `import "@typespec/http";
import "@typespec/openapi";
import "@typespec/openapi3";
import "@typespec/versioning";

using Http;
using OpenAPI;
using Versioning;

@service(#{ title: "Synthetic API" })
@server("https://api.example.com", "Production")
@useAuth(BearerAuth)
@versioned(Versions)
namespace Synthetic;

enum Versions {
  v1,
  v2,
}

@format("uuid")
scalar uuid extends string;

model ErrorDetail {
  field: string;
  issue: string;
}

model ErrorBody {
  error: {
    code: string;
    message: string;
    details?: ErrorDetail[];
  };
}

/** On every response; the deprecation headers only in v1 (deprecated, sunset 2027-06-30). */
model RequestId {
  @header("X-Request-Id") requestId: uuid;
  @removed(Versions.v2) @header("Deprecation") deprecation: "true";
  @removed(Versions.v2) @header("Sunset") sunset: string;
  @removed(Versions.v2) @header("Link") link: string;
}

@error model BadRequest { @statusCode statusCode: 400; ...RequestId; @body body: ErrorBody; }
@error model Unauthorized { @statusCode statusCode: 401; ...RequestId; @header("WWW-Authenticate") authenticate: string; @body body: ErrorBody; }
@error model Forbidden { @statusCode statusCode: 403; ...RequestId; @body body: ErrorBody; }
@error model NotFound { @statusCode statusCode: 404; ...RequestId; @body body: ErrorBody; }
@error model Conflict { @statusCode statusCode: 409; ...RequestId; @body body: ErrorBody; }
@error model Unprocessable { @statusCode statusCode: 422; ...RequestId; @body body: ErrorBody; }
@error model TooManyRequests { @statusCode statusCode: 429; ...RequestId; @header("Retry-After") retryAfter: int32; @body body: ErrorBody; }
@error model InternalError { @statusCode statusCode: 500; ...RequestId; @body body: ErrorBody; }

alias CommonErrors = BadRequest | Unauthorized | Forbidden | TooManyRequests | InternalError;
alias RecordErrors = CommonErrors | NotFound;
alias WriteErrors = CommonErrors | Conflict | Unprocessable;

model CursorPagination {
  next_cursor: string | null;
  has_more: boolean;
}

model OffsetPagination {
  page: int32;
  per_page: int32;
  total: int32;
  total_pages: int32;
}

model CursorPage<T> {
  data: T[];
  pagination: CursorPagination;
}

model OffsetPage<T> {
  data: T[];
  pagination: OffsetPagination;
}

model CursorQuery {
  @query @minValue(1) @maxValue(100) limit?: int32 = 20;
  @query @maxLength(1024) cursor?: string;
  @query @maxLength(200) q?: string;
}

model OffsetQuery {
  @query @minValue(1) page?: int32 = 1;
  @query("per_page") @minValue(1) @maxValue(100) perPage?: int32 = 20;
}

model Ok<T> { @statusCode statusCode: 200; ...RequestId; @header("ETag") etag: string; @body body: T; }
model Created<T> { @statusCode statusCode: 201; ...RequestId; @header("ETag") etag: string; @header("Location") location: string; @body body: T; }
model Page<T> { @statusCode statusCode: 200; ...RequestId; @body body: T; }
model Deleted { @statusCode statusCode: 204; ...RequestId; }

@maxLength(20)
scalar Tag extends string;

enum State {
  draft,
  live,
  gone,
}
`;

function resourceTsp(r: SyntheticResource): string {
  const Model = modelName(r.name);
  const Ns = pascal(r.name);
  const page = r.pagination === "cursor" ? `CursorPage<${Model}>` : `OffsetPage<${Model}>`;
  const query =
    r.pagination === "cursor" ? "...CursorQuery" : "...OffsetQuery; @query @maxLength(200) q?: string";
  const lines = [
    "",
    `@doc("Synthetic resource ${r.index}.")`,
    `model ${Model} {`,
    `  @visibility(Lifecycle.Read) @doc("UUID v7, assigned by the server.") id: uuid;`,
    ...(r.parent ? [`  parent_id: uuid;`] : []),
    `  @minLength(1) @maxLength(200) title: string;`,
    `  state?: State = State.draft;`,
    `  @minValue(0) @maxValue(1000000) amount: int64;`,
    `  @minValue(0) @maxValue(1) ratio?: float64;`,
    `  active?: boolean = true;`,
    `  starts_on?: plainDate;`,
    `  @maxItems(10) tags?: Tag[] = #[];`,
    `  @added(Versions.v2) flagged?: boolean = false;`,
    `  @renamedFrom(Versions.v2, "sum") @minValue(0) total: int64;`,
    `  @visibility(Lifecycle.Read) created_at: utcDateTime;`,
    `  @visibility(Lifecycle.Read) updated_at: utcDateTime;`,
    `}`,
    "",
    `@route("/${r.name}")`,
    `@tag("${r.name}")`,
    `namespace ${Ns} {`,
    `  @get @operationId("list${Ns}") op list(${query}; @query state?: State): Page<${page}> | CommonErrors;`,
    `  @post @operationId("create${Model}") op create(@bodyRoot body: ${Model}): Created<${Model}> | WriteErrors;`,
    `  @get @route("{id}") @operationId("read${Model}") op read(@path id: uuid): Ok<${Model}> | RecordErrors;`,
    `  @patch @route("{id}") @operationId("update${Model}") op update(@path id: uuid, @header("If-Match") ifMatch?: string, @body body: MergePatchUpdate<${Model}>): Ok<${Model}> | RecordErrors | WriteErrors;`,
    `  @delete @route("{id}") @operationId("delete${Model}") op delete(@path id: uuid, @header("If-Match") ifMatch?: string): Deleted | RecordErrors | Conflict;`,
  ];
  if (r.action) {
    lines.push(
      `  model ${Model}Approval { @visibility(Lifecycle.Read) id: uuid; @maxLength(200) comment: string; @visibility(Lifecycle.Read) created_at: utcDateTime; }`,
      `  @post @route("{id}/approvals") @operationId("create${Model}Approval") op approve(@path id: uuid, @bodyRoot body: ${Model}Approval): Created<${Model}Approval> | RecordErrors | WriteErrors;`,
    );
  }
  lines.push(`}`);
  if (r.parent) {
    const ParentNs = pascal(r.parent);
    lines.push(
      "",
      `@route("/${r.parent}/{id}/${r.name}")`,
      `@tag("${r.name}")`,
      `namespace ${ParentNs}${Ns} {`,
      `  @get @operationId("list${ParentNs}${Ns}") op list(@path id: uuid, ${query}; @query state?: State): Page<${page}> | RecordErrors;`,
      `}`,
    );
  }
  return lines.join("\n");
}

/** The files of the TypeSpec project: main.tsp (shared models) importing one file per resource, as canon reads one YAML file per resource. */
export function typespecFiles(n: number): Map<string, string> {
  const resources = syntheticResources(n);
  const files = new Map<string, string>();
  const imports = resources.map((r) => `import "./resources/${r.name}.tsp";`).join("\n");
  files.set("main.tsp", PRELUDE.replace("using Http;", `${imports}\n\nusing Http;`));
  for (const r of resources) {
    files.set(
      `resources/${r.name}.tsp`,
      `using Http;\nusing OpenAPI;\nusing Versioning;\n\nnamespace Synthetic;\n${resourceTsp(r)}\n`,
    );
  }
  return files;
}

export const TSPCONFIG = `emit:
  - "@typespec/openapi3"
options:
  "@typespec/openapi3":
    file-type: json
    emitter-output-dir: "{output-dir}"
    output-file: "openapi.{version}.json"
`;

export function writeTypeSpec(dir: string, n: number): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  mkdirSync(path.join(dir, "resources"));
  for (const [name, text] of typespecFiles(n)) writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, "tspconfig.yaml"), TSPCONFIG);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, n] = process.argv.slice(2);
  writeTypeSpec(dir ?? ".bench/tsp", Number(n ?? 100));
}
