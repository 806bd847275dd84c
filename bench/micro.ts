// Micro-benchmarks of the run-time pieces, in operations per second, each beside the library it
// uses or replaces: UUID v7 generation and validation, the cursor codec, and validation of a
// typical request body (the generated zod schema against ajv on the same JSON Schema from the
// OpenAPI document, which is what Fastify validates with by default).
import { createHmac, createSecretKey, randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { v4, v7, validate, version } from "uuid";
import { z } from "zod";
import { createCursorCodec, listScope } from "../runtime/cursor.ts";
import { parseBody } from "../runtime/http.ts";
import { isAcceptedUuid, newId, uuidSchema } from "../runtime/uuid.ts";
import { fmtCount, log, median, repoRoot, table } from "./lib.ts";

export interface MicroResult {
  group: string;
  name: string;
  opsPerSecond: number;
  /** Relative to the first entry of its group. */
  relative: number;
}

let sink: unknown;

/**
 * CPU time of this thread in milliseconds: unlike wall time, it does not count the moments the
 * thread waits for a core that other processes hold, so figures stay comparable on a busy machine.
 */
function cpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** Median operations per second (of CPU time) over `samples` timed batches of about `sampleMs` each. */
export function opsPerSecond(fn: () => unknown, samples = 9, sampleMs = 60): number {
  // Calibrate a batch size that takes about sampleMs (after a warm-up that also lets the JIT settle).
  let batch = 1;
  for (;;) {
    const started = cpuMs();
    for (let i = 0; i < batch; i++) sink = fn();
    const took = cpuMs() - started;
    if (took >= sampleMs / 4) {
      batch = Math.max(1, Math.round((batch * sampleMs) / took));
      break;
    }
    batch *= 4;
  }
  const rates: number[] = [];
  // A sample whose CPU clock did not advance (seen once on this machine) is measured again.
  for (let s = 0, tries = 0; s < samples && tries < samples * 3; tries++) {
    const started = cpuMs();
    for (let i = 0; i < batch; i++) sink = fn();
    const took = cpuMs() - started;
    if (!(took > 0)) continue;
    rates.push(batch / (took / 1000));
    s++;
  }
  return median(rates);
}

interface Case {
  name: string;
  fn: () => unknown;
}

function groups(): Array<{ group: string; cases: Case[] }> {
  const ids = Array.from({ length: 256 }, () => newId());
  let k = 0;
  const nextId = () => ids[k++ & 255]!;
  const lax = z.uuid();

  const codec = createCursorCodec(randomBytes(32));
  const scope = listScope("v2/products", { category: "books" }, undefined);
  const cursors = ids.map((id) => codec.encode(scope, id));
  const secret = randomBytes(32);
  const secretKey = createSecretKey(secret);
  const unsigned = (id: string) => Buffer.from(JSON.stringify([scope, id])).toString("base64url");
  const unsignedCursors = ids.map(unsigned);

  const { productCreate } = loadValidators();
  const document = JSON.parse(
    readFileSync(path.join(repoRoot, "generated", "v2", "openapi.json"), "utf8"),
  ) as {
    components: { schemas: Record<string, object> };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true, useDefaults: true });
  addFormats.default(ajv);
  const ajvValidate = ajv.compile(document.components.schemas.ProductCreate!);
  const body = () => ({
    sku: "SKU-000123",
    name: "Product number 123",
    description: "A sturdy, well-made product that does what it says on the box.",
    price_cents: 1999,
    category: "tools",
    tags: ["bench", "tag-3"],
    dimensions: { width_mm: 120, height_mm: 240 },
    homepage: "https://example.com/products/123",
  });
  const bodies = Array.from({ length: 64 }, body);
  let b = 0;
  const nextBody = () => bodies[b++ & 63]!;

  return [
    {
      group: "UUID v7 generation",
      cases: [
        { name: "canon `newId()` (runtime/uuid.ts)", fn: () => newId() },
        { name: "`uuid` v7() (the library it uses)", fn: () => v7() },
        { name: "`uuid` v4()", fn: () => v4() },
        { name: "node:crypto randomUUID() (v4, reference)", fn: () => randomUUID() },
      ],
    },
    {
      group: "UUID validation",
      cases: [
        { name: "canon `isAcceptedUuid` (regex)", fn: () => isAcceptedUuid(nextId()) },
        {
          name: "`uuid` validate() + version()",
          fn: () => {
            const id = nextId();
            return validate(id) && version(id) > 1;
          },
        },
        {
          name: "canon `uuidSchema.safeParse` (zod, as handlers use it)",
          fn: () => uuidSchema.safeParse(nextId()),
        },
        { name: "zod `z.uuid().safeParse`", fn: () => lax.safeParse(nextId()) },
      ],
    },
    {
      group: "Cursor encode",
      cases: [
        { name: "canon codec.encode (HMAC-SHA256 signed)", fn: () => codec.encode(scope, nextId()) },
        { name: "unsigned base64url JSON (no integrity)", fn: () => unsigned(nextId()) },
        {
          name: "node:crypto HMAC-SHA256 alone, key as a Buffer (as canon does)",
          fn: () => createHmac("sha256", secret).update(nextId()).digest(),
        },
        {
          name: "node:crypto HMAC-SHA256 alone, key as a KeyObject made once",
          fn: () => createHmac("sha256", secretKey).update(nextId()).digest(),
        },
      ],
    },
    {
      group: "Cursor decode",
      cases: [
        { name: "canon codec.decode (verify + parse)", fn: () => codec.decode(scope, cursors[k++ & 255]!) },
        {
          name: "unsigned base64url JSON.parse",
          fn: () => JSON.parse(Buffer.from(unsignedCursors[k++ & 255]!, "base64url").toString("utf8")),
        },
      ],
    },
    {
      group: "Validation of a typical body (product create, 8 fields)",
      cases: [
        {
          name: "canon `parseBody(productCreate)` (zod 4, generated)",
          fn: () => parseBody(productCreate, nextBody()),
        },
        { name: "zod 4 `productCreate.safeParse`", fn: () => productCreate.safeParse(nextBody()) },
        {
          name: "ajv 8 (Fastify's default validator), same schema from openapi.json",
          fn: () => ajvValidate(nextBody()),
        },
      ],
    },
  ];
}

function loadValidators(): { productCreate: z.ZodType } {
  // Imported lazily so that a missing generated/ only fails this group.
  return validators!;
}

let validators: { productCreate: z.ZodType } | null = null;

export async function benchMicro(quick: boolean): Promise<MicroResult[]> {
  validators = (await import("../generated/v2/products/validators.ts")) as unknown as {
    productCreate: z.ZodType;
  };
  const results: MicroResult[] = [];
  for (const { group, cases } of groups()) {
    let base = NaN;
    for (const c of cases) {
      const ops = opsPerSecond(c.fn, quick ? 3 : 9, quick ? 30 : 80);
      if (Number.isNaN(base)) base = ops;
      results.push({ group, name: c.name, opsPerSecond: ops, relative: ops / base });
      log(`  ${group}: ${c.name}: ${fmtCount(ops)} ops/s`);
    }
  }
  void sink;
  return results;
}

export function microMarkdown(results: MicroResult[]): string {
  const out: string[] = [];
  for (const group of [...new Set(results.map((r) => r.group))]) {
    out.push(`**${group}**`, "");
    out.push(
      table(
        ["", "ops/s (median)", "relative"],
        results
          .filter((r) => r.group === group)
          .map((r) => [r.name, fmtCount(r.opsPerSecond), `${r.relative.toFixed(2)}×`]),
      ),
      "",
    );
  }
  return out.join("\n").trimEnd();
}
