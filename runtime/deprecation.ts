/**
 * The headers of a deprecated version: `Deprecation`, `Sunset` and `Link` to the successor on
 * every response whose request target is in that version, errors included.
 */
import type { FastifyReply } from "fastify";

export interface Deprecation {
  /** IMF-fixdate of the sunset, `Wed, 30 Jun 2027 00:00:00 GMT`. */
  sunset: string;
  /** The successor version, `v2`. */
  successor: string;
}

/** What the headers are made from: the API's base URL and each version's deprecation. */
export interface DeprecationSettings {
  baseUrl: string;
  versions: ReadonlyArray<{ name: string; deprecation: Deprecation | null }>;
  /**
   * By version, the first path segments of its routes (`orders`, `events`, `openapi.json`): the
   * `Link` names the successor's resource only when it is one of these, else the successor
   * itself, so no character of a request's path is ever copied into the header.
   */
  resources?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Sets the deprecation headers on `reply` when `url` is in a deprecated version. */
export function addDeprecationHeaders(reply: FastifyReply, settings: DeprecationSettings, url: string): void {
  const deprecated = deprecatedVersion(settings, url);
  if (deprecated) {
    reply.header("deprecation", "true");
    reply.header("sunset", deprecated.deprecation.sunset);
    reply.header("link", successorLink(settings, deprecated));
  }
}

/** The deprecation headers of `url` as name and value pairs; none when its version is not deprecated. */
export function deprecationHeaders(settings: DeprecationSettings, url: string): Array<[string, string]> {
  const deprecated = deprecatedVersion(settings, url);
  if (!deprecated) return [];
  return [
    ["deprecation", "true"],
    ["sunset", deprecated.deprecation.sunset],
    ["link", successorLink(settings, deprecated)],
  ];
}

function successorLink(settings: DeprecationSettings, { deprecation, resource }: DeprecatedTarget): string {
  const known = resource !== "" && settings.resources?.get(deprecation.successor)?.has(resource) === true;
  return `<${settings.baseUrl}/${deprecation.successor}${known ? `/${resource}` : ""}>; rel="successor-version"`;
}

interface DeprecatedTarget {
  deprecation: Deprecation;
  /** The path segment after the version, `orders` of `/v1/orders/…`; empty when there is none. */
  resource: string;
}

/** The deprecated version a request target is in, with the segment after it; null in any other version. */
function deprecatedVersion(settings: DeprecationSettings, url: string): DeprecatedTarget | null {
  // Most requests are plain `/vN/…` targets: read without regular expressions or splitting.
  // Only an unusual target (absolute form, percent-encoding, a fragment) is parsed like the router does.
  let path: string | null = null;
  for (const version of settings.versions) {
    const deprecation = version.deprecation;
    if (!deprecation) continue;
    if (path === null) {
      const plain = url.charCodeAt(0) === 47 && !url.includes("%") && !url.includes("#");
      const query = plain ? url.indexOf("?") : -1;
      path = plain ? (query === -1 ? url : url.slice(0, query)) : routedPath(url);
    }
    // `path` starts with "/": its first segment is this version's name when the name is followed by "/" or the end.
    const after = version.name.length + 1;
    if (!path.startsWith(version.name, 1)) continue;
    if (path.length === after) return { deprecation, resource: "" };
    if (path.charCodeAt(after) !== 47) continue;
    const next = path.indexOf("/", after + 1);
    return { deprecation, resource: next === -1 ? path.slice(after + 1) : path.slice(after + 1, next) };
  }
  return null;
}

/**
 * The path of a request target as the router reads it: an absolute-form target
 * (`http://host/v1/orders`) without its scheme and authority, without query or fragment, and
 * with percent-encoded unreserved characters decoded (`/v1/%6Frders` is `/v1/orders`).
 */
function routedPath(url: string): string {
  let path = url;
  const authority = /^https?:\/\/[^/?#]*/i.exec(path);
  if (authority) path = path.slice(authority[0].length);
  const end = path.search(/[?#]/);
  if (end !== -1) path = path.slice(0, end);
  if (!path.startsWith("/")) path = `/${path}`;
  return path.replace(/%([0-9a-f]{2})/gi, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /^[A-Za-z0-9._~-]$/.test(char) ? char : escape;
  });
}
