import type { VersionModel } from "../../model/types.ts";
import { errorResponses } from "./errors.ts";
import { ref, type Json, type JsonObject } from "./json.ts";
import { operationObject, type PathOperation } from "./operation.ts";
import { responseHeaders } from "./headers.ts";
import { closedObject } from "./schemas.ts";

/**
 * Health and readiness (runtime/health.ts), in every version: `GET /vN/health` and
 * `GET /vN/ready`, for a load balancer's checks. No credentials (`security: []`), no rate limit.
 */

export const healthTag = "health";

export function healthSchemas(): Array<[string, Json]> {
  return [
    ["Health", closedObject([["status", { type: "string", enum: ["ok"] }]], ["status"], "The instance serves.")],
    ["Readiness", closedObject([["status", { type: "string", enum: ["ready"] }]], ["status"], "The instance serves and its store answers.")],
  ];
}

export function healthOperations(version: VersionModel): PathOperation[] {
  const open = (operation: JsonObject): JsonObject => ({ ...operation, security: [] });
  return [
    {
      path: `/${version.name}/health`,
      method: "get",
      operation: open(
        operationObject(version, healthTag, "getHealth", "Health", {
          description:
            "200 as soon as the instance serves; touches neither the store nor Redis. Needs no credentials and is not rate-limited.",
          // 400 for what every path can get (an over-long target, no Host), 500 for the unexpected.
          responses: [ok(version, "health", "The instance serves.", "Health"), ...errorResponses([400, 500])],
        }),
      ),
    },
    {
      path: `/${version.name}/ready`,
      method: "get",
      operation: open(
        operationObject(version, healthTag, "getReadiness", "Readiness", {
          description:
            "200 when the store answers a trivial query within 2 seconds, else 503 with `Retry-After`. Needs no credentials and is not rate-limited.",
          responses: [
            ok(version, "ready", "The instance serves and its store answers.", "Readiness"),
            ...errorResponses([400, 500, 503]),
          ],
        }),
      ),
    },
  ];
}

/** A 200 with the shared headers; on a deprecated version, `Link` to the same path of the successor. */
function ok(version: VersionModel, path: string, description: string, schema: string): [string, JsonObject] {
  return ["200", { description, headers: responseHeaders(version, path), content: { "application/json": { schema: ref("schemas", schema) } } }];
}

export function healthTagObject(): JsonObject {
  return { name: healthTag, description: "Health and readiness of the instance, for load balancers." };
}
