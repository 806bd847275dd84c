// ---------------------------------------------------------------------------------------
// The part of the client that is the same for every API (canon's templates/client/core.ts):
// errors, requests with retries and request ids, deprecation notices, and list pagination.
// It needs nothing but the platform's fetch, so it runs in Node 24 and in browsers. The page
// types come from runtime/pages.ts, whose text the client holds too; the import below is
// canon's own and not placed into the client.
import {
  MAX_IN_VALUES,
  MAX_SORT_KEYS,
  SEARCH_MAX_LENGTH,
  type CursorPage,
  type CursorPagination,
  type OffsetPage,
  type OffsetPagination,
} from "../../runtime/pages.ts";

/** One problem of a request, as the service lists it: a body path or a parameter name, and what is wrong. */
export interface ErrorDetail {
  field: string;
  issue: string;
}

/** What an `ApiError` is made from. */
export interface ApiErrorInit {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[];
  requestId: string;
  headers?: Headers;
  cause?: unknown;
}

// A failed call: an answer outside 2xx (the service's error envelope: `code`, `message`,
// `details`), an answer that is not what the service sends, or no answer at all (status 0).
// Catch a subclass to handle one status: `ValidationError` (400), `NotFoundError` (404), …
export class ApiError extends Error {
  /** The HTTP status; 0 when no answer came (`NetworkError`). */
  readonly status: number;
  /** The envelope's `code` (`VALIDATION_ERROR`, `NOT_FOUND`, …), or `HTTP_<status>` for another body. */
  readonly code: string;
  /** One entry per problem (400); empty when the answer has none. */
  readonly details: ErrorDetail[];
  /** The answer's `X-Request-Id`, or the one sent when there was no answer. */
  readonly requestId: string;
  /** The answer's headers; empty when there was no answer. */
  readonly headers: Headers;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.headers = init.headers ?? new Headers();
  }
}

/** 400: the request is not valid; `details` names every problem. */
export class ValidationError extends ApiError {}

/** 401: credentials are missing or wrong. */
export class UnauthenticatedError extends ApiError {}

/** 403: the credentials do not allow this. */
export class ForbiddenError extends ApiError {}

/** 404: no such record (or parent, or path). */
export class NotFoundError extends ApiError {}

/** 409: a duplicate of a unique field, or an `If-Match` that is not the record's current ETag. */
export class ConflictError extends ApiError {}

/** 422: valid input that breaks a business rule, such as a reference to a record that does not exist. */
export class BusinessRuleError extends ApiError {}

/** 429: too many requests, still refused after the client's retries. */
export class RateLimitedError extends ApiError {
  /** Seconds the service asked to wait (`Retry-After`); null when it did not say. */
  readonly retryAfterSeconds: number | null;

  constructor(init: ApiErrorInit) {
    super(init);
    const ms = retryAfterMs(this.headers);
    this.retryAfterSeconds = ms === null ? null : Math.ceil(ms / 1000);
  }
}

/** 500: the service failed; the message says nothing of why, the request id finds it in the logs. */
export class InternalError extends ApiError {}

/** 503: the service cannot answer now (its store does not answer); retry after `Retry-After`. */
export class ServiceUnavailableError extends ApiError {}

/** No answer: the connection failed (after the retries of a GET) or the answer could not be read. */
export class NetworkError extends ApiError {}

// The class of each error status. Written from runtime/errors.ts `ERROR_STATUSES` when the
// client is generated (generator/emit/client/index.ts), so it names the server's statuses.
const ERROR_CLASSES: Record<number, typeof ApiError> = {
  400: ValidationError,
  401: UnauthenticatedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  422: BusinessRuleError,
  429: RateLimitedError,
  500: InternalError,
  503: ServiceUnavailableError,
};

/** What `onDeprecation` is told: the version, its sunset and its successor. */
export interface DeprecationNotice {
  /** The deprecated version this client calls, `v1`. */
  version: string;
  /** When the version goes away (`Sunset`); null when the answer did not say. */
  sunset: Date | null;
  /** Where the same collection lives in the next version (`Link: <…>; rel="successor-version"`). */
  successor: string | null;
  /** The call that got the answer. */
  method: string;
  path: string;
}

/** Options of `createClient`. */
export interface ClientOptions {
  /** Where the service is, without the version: `https://api.example.com`; `""` for the page's own origin. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; a function is asked before every request. */
  token?: string | (() => string | null | undefined | Promise<string | null | undefined>);
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries of a 429 (after `Retry-After`) and of a GET or a POST (with its `Idempotency-Key`) whose connection failed or that a balancer answered 502; default 2. */
  maxRetries?: number;
  /** The longest `Retry-After` the client waits for; a 429 asking for more is thrown at once. Default 60000. */
  maxRetryDelayMs?: number;
  /** Called for every answer with `Deprecation`; default: one console warning per version per process. */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** The fetch to call; default: the platform's. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

// Each kind of call takes only the options it honours: `ifMatch` where the service checks
// If-Match (update, replace, delete, an action), `idempotencyKey` on a POST (a create, an action,
// an export). Elsewhere they are typed `never`, so that one the service would ignore is an error
// of the compiler, whether written in place or passed in a variable.

/** Options of every call. */
interface BaseOptions {
  /** `X-Request-Id` to send (a UUID v7, or the service makes its own); default: a new UUID v7. */
  requestId?: string;
  /** Headers of this call, over the client's. */
  headers?: Record<string, string>;
  /** Cancels the call, its retries and waits included. */
  signal?: AbortSignal;
}

/** `If-Match`: the ETag of the record as you read it (`withResponse()`); a stale one throws `ConflictError`. */
interface IfMatchOption {
  ifMatch?: string;
}

/** A POST's `Idempotency-Key` (1–255 printable ASCII); default: a new UUID; repeated, the first answer. */
interface IdempotencyKeyOption {
  idempotencyKey?: string;
}

/** Options of a read or a list (`get`, `list`, `download`): neither `ifMatch` nor `idempotencyKey`. */
export interface CallOptions extends BaseOptions {
  /** Not taken: only `update`, `replace`, `delete` and an action's `create` send If-Match. */
  ifMatch?: never;
  /** Not taken: only a POST (a `create`, an action's, an export's) sends an Idempotency-Key. */
  idempotencyKey?: never;
}

/** Options of a create (`api.orders.create`, `api.exports.create`): `idempotencyKey`, no `ifMatch`. */
export interface CreateOptions extends BaseOptions, IdempotencyKeyOption {
  /** Not taken: a create has no record to match; only `update`, `replace`, `delete` and an action's `create` send If-Match. */
  ifMatch?: never;
}

/** Options of a write of one record (`update`, `replace`, `delete`): `ifMatch`, no `idempotencyKey`. */
export interface WriteOptions extends BaseOptions, IfMatchOption {
  /** Not taken: only a POST (a `create`, an action's, an export's) sends an Idempotency-Key. */
  idempotencyKey?: never;
}

/** Options of an action (`api.orders.payments.create`, a POST on one record): `ifMatch` and `idempotencyKey`. */
export interface ActionOptions extends BaseOptions, IfMatchOption, IdempotencyKeyOption {}

/** What the transport sends of any call's options. */
type SendOptions = BaseOptions & IfMatchOption & IdempotencyKeyOption;

/** What a call's answer carried besides its body. */
export interface ResponseInfo {
  status: number;
  headers: Headers;
  /** The answer's `X-Request-Id`. */
  requestId: string;
  /** The record's ETag (reads and writes of one record): send it back as `ifMatch`. */
  etag: string | null;
}

/** A call's result with its answer's status, headers, request id and ETag. */
export interface WithResponse<T> extends ResponseInfo {
  data: T;
}

/** A page of a list that answers in offset mode, or in cursor mode when searched with `q`. */
export type AnyPage<T> = OffsetPage<T> | CursorPage<T>;

/** An offset list's query: offset keys without `q`, or a search's with one that may be undefined. */
// Never one mode's keys in the other's (`limit` without `q`, `page` with it): the service answers 400.
export type EitherQuery<Q> = OffsetKeys<Exclude<Q, WithQ>> | SearchKeys<Extract<Q, WithQ>>;
type WithQ = { q: string };
type OffsetKeys<L> = L & { q?: undefined; limit?: never; cursor?: never };
type SearchKeys<S> = Omit<S, "q"> & { q: string | undefined; page?: never; per_page?: never };

type Scalar = string | number | boolean;
/** A query: a value, a list (sent comma-separated), or operators (`{ in: [...] }`: `name[op]=…`). */
type Query = Record<
  string,
  Scalar | readonly Scalar[] | Readonly<Record<string, Scalar | readonly Scalar[] | undefined>> | undefined
>;

// A call under way, started at once: `await` it for the result, or `.withResponse()` for the
// result with its answer's status, headers, request id and ETag. A Promise (so `instanceof
// Promise` and every API that takes one accept it) whose result comes from the call.
export class ApiCall<T> extends Promise<T> {
  readonly #response: Promise<WithResponse<T>>;

  constructor(response: Promise<WithResponse<T>>) {
    super((resolve) => resolve(undefined as T));
    this.#response = response;
  }

  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#response.then((r) => r.data).then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onfinally);
  }

  /** The result with its answer's status, headers, request id and ETag. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#response;
  }
}

// A list: `await` it for one page as the service answers it (one request), iterate it with
// `for await` for every record, or `.pages()` for every page; both follow `next_cursor` (cursor
// mode) or `page` (offset mode), one request per page. Nothing is requested until then.
export class ListCall<T, P extends { data: T[] }> extends Promise<P> implements AsyncIterable<T> {
  readonly #fetchPage: (query: Query) => Promise<WithResponse<P>>;
  readonly #query: Query;
  #first: Promise<WithResponse<P>> | undefined;

  constructor(fetchPage: (query: Query) => Promise<WithResponse<P>>, query: Query) {
    super((resolve) => resolve(undefined as unknown as P));
    this.#fetchPage = fetchPage;
    this.#query = query;
  }

  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  override then<A = P, B = never>(
    onfulfilled?: ((value: P) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.withResponse()
      .then((r) => r.data)
      .then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<P | B> {
    return this.then(undefined, onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<P> {
    return this.then().finally(onfinally);
  }

  /** The first page with its answer's status, headers and request id. */
  withResponse(): Promise<WithResponse<P>> {
    this.#first ??= this.#fetchPage(this.#query);
    return this.#first;
  }

  /** Every page, from the query's on: one request each. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let query: Query | null = this.#query;
    while (query !== null) {
      const page: P = (await this.#fetchPage(query)).data;
      yield page;
      query = nextPage(query, (page as { pagination?: unknown }).pagination);
    }
  }

  /** Every record, page after page. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }
}

/** The query of the page after one with `pagination`; null after the last. */
function nextPage(query: Query, pagination: unknown): Query | null {
  const p = (pagination ?? {}) as Partial<CursorPagination & OffsetPagination>;
  if (typeof p.next_cursor === "string") return { ...query, cursor: p.next_cursor };
  if (typeof p.page === "number" && typeof p.total_pages === "number" && p.page < p.total_pages) {
    return { ...query, page: p.page + 1 };
  }
  return null;
}

const warnedVersions = new Set<string>();

function warnOnce(notice: DeprecationNotice): void {
  if (warnedVersions.has(notice.version)) return;
  warnedVersions.add(notice.version);
  const sunset = notice.sunset ? ` and goes away on ${notice.sunset.toISOString().slice(0, 10)}` : "";
  const successor = notice.successor ? `; its successor: ${notice.successor}` : "";
  console.warn(`The API's ${notice.version} is deprecated${sunset}${successor}.`);
}

/** Sends the requests of one version's client: headers, retries, answers and errors. */
class Transport {
  readonly #options: ClientOptions;
  readonly #version: string;
  readonly #base: string;
  readonly #searchMinLength: number;

  /** `searchMinLength`: the shortest `q` the version takes (its `search_min_length`). */
  constructor(options: ClientOptions, version: string, searchMinLength: number) {
    this.#options = options;
    this.#version = version;
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#searchMinLength = searchMinLength;
  }

  /** A call with an optional JSON body; its answer's JSON body (undefined for 204) is the result. */
  call<T>(
    method: string,
    path: string,
    id: string | null,
    body: unknown,
    options: SendOptions = {},
  ): ApiCall<T> {
    return new ApiCall(this.#send<T>(method, withId(path, id), undefined, body, options));
  }

  list<T, P extends { data: T[] }>(
    path: string,
    id: string | null,
    query: object,
    options: CallOptions = {},
  ): ListCall<T, P> {
    const url = withId(path, id);
    // What the service would refuse of `sort` and `q` whatever the data: thrown as its 400 would
    // be, without sending (a page is asked for when the list is awaited or iterated).
    const problems = queryProblems(query as Query, this.#searchMinLength);
    const fetchPage = (q: Query): Promise<WithResponse<P>> =>
      problems.length > 0
        ? Promise.reject(refusal(problems, options))
        : this.#send<P>("GET", url, q, undefined, options);
    return new ListCall(fetchPage, query as Query);
  }

  /**
   * POST of an export job (`api.exports.create`): its `q` is the list's, and what the service
   * would refuse of it whatever the data (shorter than the version's minimum, longer than 200
   * characters) is thrown as its 400 would be, without sending, as for a list.
   */
  createExport<T>(path: string, body: { q?: string }, options: CreateOptions = {}): ApiCall<T> {
    const problems = queryProblems({ q: body.q } as Query, this.#searchMinLength);
    if (problems.length > 0) return new ApiCall(Promise.reject(refusal(problems, options)));
    return this.call<T>("POST", path, null, body, options);
  }

  /** A GET whose answer is text (a file), at a path of the API or an absolute URL it gave. */
  text(url: string | undefined, options: CallOptions = {}): ApiCall<string> {
    if (url === undefined) return new ApiCall(Promise.reject(new Error("There is no file to download yet.")));
    return new ApiCall(this.#send<string>("GET", url, undefined, undefined, options, true));
  }

  async #send<T>(
    method: string,
    path: string,
    query: Query | undefined,
    body: unknown,
    options: SendOptions,
    text = false,
  ): Promise<WithResponse<T>> {
    const requestId = options.requestId ?? uuidv7();
    const token = this.#options.token;
    const bearer = typeof token === "function" ? await token() : token;
    const headers = this.#headers(requestId, bearer, body !== undefined, options);
    // Every POST carries a key (the caller's, or a new one), so that it can be sent again safely.
    const idempotent = method === "POST";
    if (idempotent && options.idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(options.idempotencyKey)) {
      // Thrown as the service's 400 would be: fetch refuses some such keys (a control character,
      // anything past Latin-1) before sending, which would otherwise end as a NetworkError after retries.
      throw new ValidationError({
        status: 400,
        code: "VALIDATION_ERROR",
        message: "The Idempotency-Key header is not valid.",
        details: [{ field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" }],
        requestId,
      });
    }
    if (idempotent) headers["idempotency-key"] = options.idempotencyKey ?? uuidv7();
    if (text) headers.accept = "*/*";
    const absolute = /^https?:\/\//.test(path);
    // The credentials go only to this API: an absolute URL elsewhere gets none.
    if (absolute && !path.startsWith(`${this.#base}/`)) delete headers.authorization;
    const url = (absolute ? path : this.#base + path) + queryString(query);
    const init: RequestInit = {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    };
    if (options.signal) init.signal = options.signal;
    const maxRetries = this.#options.maxRetries ?? 2;
    const fetcher = this.#options.fetch ?? fetch;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetcher(url, init);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        // A GET, or a POST with its key, is sent again: the service runs a key's POST once.
        if ((method === "GET" || idempotent) && attempt < maxRetries) {
          await delay(200 * 2 ** attempt, options.signal);
          continue;
        }
        throw new NetworkError({
          status: 0,
          code: "NETWORK_ERROR",
          message: `${method} ${path}: ${String(error)}`,
          requestId,
          cause: error,
        });
      }
      if (response.headers.has("deprecation")) this.#deprecated(response.headers, method, path);
      // A balancer's 502: the instance it chose failed before answering (docs/scaling.md), as a
      // lost connection; sent again as one is.
      if (response.status === 502 && (method === "GET" || idempotent) && attempt < maxRetries) {
        await response.body?.cancel();
        await delay(200 * 2 ** attempt, options.signal);
        continue;
      }
      // A retried POST whose first attempt is still running on the service: wait for it.
      if (idempotent && attempt > 0 && attempt < maxRetries && (await stillRunning(response))) {
        await delay(200 * 2 ** attempt, options.signal);
        continue;
      }
      if (response.status === 429 && attempt < maxRetries) {
        const wait = retryAfterMs(response.headers) ?? 1000;
        if (wait <= (this.#options.maxRetryDelayMs ?? 60_000)) {
          await response.body?.cancel();
          await delay(wait, options.signal);
          continue;
        }
      }
      return answer<T>(response, requestId, method, path, text);
    }
  }

  #headers(
    requestId: string,
    token: string | null | undefined,
    json: boolean,
    options: SendOptions,
  ): Record<string, string> {
    const headers: Record<string, string> = {
      accept: "application/json",
      ...this.#options.headers,
      ...options.headers,
    };
    if (token) headers.authorization = `Bearer ${token}`;
    if (json) headers["content-type"] = "application/json";
    if (options.ifMatch !== undefined) headers["if-match"] = options.ifMatch;
    headers["x-request-id"] = requestId;
    return headers;
  }

  #deprecated(headers: Headers, method: string, path: string): void {
    const sunset = headers.get("sunset");
    const date = sunset === null ? null : new Date(sunset);
    const link = /<([^>]*)>\s*;[^,]*rel="?successor-version"?/.exec(headers.get("link") ?? "");
    const notice: DeprecationNotice = {
      version: this.#version,
      sunset: date === null || Number.isNaN(date.getTime()) ? null : date,
      successor: link ? link[1]! : null,
      method,
      path,
    };
    (this.#options.onDeprecation ?? warnOnce)(notice);
  }
}

/** A path of the API with its `{id}` filled in (`/v2/orders/{id}`), or as it is without an id. */
function withId(path: string, id: string | null): string {
  return id === null ? path : path.replace("{id}", encodeURIComponent(id));
}

/** The result of an answer, or its error. */
async function answer<T>(
  response: Response,
  sent: string,
  method: string,
  path: string,
  text: boolean,
): Promise<WithResponse<T>> {
  const info: ResponseInfo = {
    status: response.status,
    headers: response.headers,
    requestId: response.headers.get("x-request-id") ?? sent,
    etag: response.headers.get("etag"),
  };
  let raw: string;
  try {
    raw = await response.text();
  } catch (error) {
    const message = `${method} ${path}: the answer could not be read: ${String(error)}`;
    throw new NetworkError({
      status: 0,
      code: "NETWORK_ERROR",
      message,
      requestId: info.requestId,
      cause: error,
    });
  }
  if (text && response.ok) return { ...info, data: raw as T };
  const body = parseJson(raw);
  if (response.ok) {
    if (raw !== "" && body === undefined) {
      throw new ApiError({
        ...info,
        code: `HTTP_${response.status}`,
        message: `${method} ${path}: the answer is not JSON.`,
      });
    }
    return { ...info, data: body as T };
  }
  const error = (body as { error?: Partial<ApiErrorInit> } | undefined)?.error;
  const ErrorClass = ERROR_CLASSES[response.status] ?? ApiError;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    const details = Array.isArray(error.details) ? error.details : [];
    throw new ErrorClass({ ...info, code: error.code, message: error.message, details });
  }
  const excerpt = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  const status = `${response.status} ${response.statusText}`.trim();
  const message = `${method} ${path} answered ${status}${excerpt ? `: ${excerpt}` : ""}`;
  throw new ErrorClass({ ...info, code: `HTTP_${response.status}`, message });
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What the service takes as an `Idempotency-Key`: 1 to 255 printable ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** A 409 naming `Idempotency-Key`: a request with the key is still running. */
async function stillRunning(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const body = parseJson(await response.clone().text()) as
    { error?: { details?: Array<{ field?: unknown }> } } | undefined;
  const running = body?.error?.details?.some((d) => d.field === "Idempotency-Key") ?? false;
  if (running) await response.body?.cancel();
  return running;
}

/** `Retry-After` in milliseconds: seconds, or an HTTP date; null when absent or unreadable. */
function retryAfterMs(headers: Headers): number | null {
  const value = headers.get("retry-after");
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort(): void {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/** The service's 400 for `problems` it answers whatever its data, thrown without sending. */
function refusal(problems: ErrorDetail[], options: BaseOptions): ValidationError {
  return new ValidationError({
    status: 400,
    code: "VALIDATION_ERROR",
    message: "The request is not valid.",
    details: problems,
    requestId: options.requestId ?? uuidv7(),
  });
}

/**
 * The problems of a list's `q`, `sort` and `[in]` filters that the service answers 400 whatever
 * its data, in its words and order: `q` shorter than the version's minimum (trimmed, in code
 * points) or longer than 200 characters; `sort` naming more than 3 keys, or one field twice
 * (`["fee", "-fee"]`); an `{ in: [...] }` of more than 100 values, or of none. An empty list has
 * no query form (`status[in]=` is the one value "", which a text field may hold): the service
 * refuses it where it can be sent, as an export's filter, and so does the client, rather than
 * send a filter that asks for something else. And a list value holding a comma (COMMA_ISSUE).
 * The types refuse more than 3 keys but not a repeated field: a type that did would list every
 * ordered choice of distinct keys (56 for 4 sortable fields, 1,560 for 20), make tsc's message
 * for a mistake unreadable, and refuse `[column, "created_at"]` for any `column` variable.
 */
function queryProblems(query: Query, searchMinLength: number): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const { q, sort } = query;
  if (typeof q === "string") {
    if (q.length > SEARCH_MAX_LENGTH)
      problems.push({ field: "q", issue: `must be at most ${SEARCH_MAX_LENGTH} characters` });
    if ([...q.trim()].length < searchMinLength)
      problems.push({
        field: "q",
        issue: `must be at least ${searchMinLength} character${searchMinLength === 1 ? "" : "s"}`,
      });
  }
  if (Array.isArray(sort)) {
    const fields = sort.map((key) => String(key).replace(/^-/, ""));
    const twice = fields.find((field, i) => fields.indexOf(field) !== i);
    if (fields.length > MAX_SORT_KEYS)
      problems.push({ field: "sort", issue: `must name at most ${MAX_SORT_KEYS} keys` });
    else if (holdsComma(sort)) problems.push({ field: "sort", issue: COMMA_ISSUE });
    else if (twice !== undefined) problems.push({ field: "sort", issue: `names ${twice} twice` });
  }
  for (const [name, value] of Object.entries(query)) {
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      if (name !== "sort" && holdsComma(value)) problems.push({ field: name, issue: COMMA_ISSUE });
      continue;
    }
    for (const [op, list] of Object.entries(value as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      const field = `${name}[${op}]`;
      if (op === "in" && list.length === 0) problems.push({ field, issue: "must have at least 1 item" });
      else if (op === "in" && list.length > MAX_IN_VALUES)
        problems.push({ field, issue: `must list at most ${MAX_IN_VALUES} comma-separated values` });
      else if (holdsComma(list)) problems.push({ field, issue: COMMA_ISSUE });
    }
  }
  return problems;
}

/**
 * A list parameter is sent comma-separated, and the service splits it at every comma, a
 * percent-encoded one too (`?tag[in]=a%2Cb` is the two values `a` and `b`): a value holding a
 * comma cannot be asked for, and sent it would ask for something else. The service cannot tell,
 * so this issue is the client's own, on the parameter as it would be sent (`status[in]`, `sort`).
 */
const COMMA_ISSUE = "each value must not contain a comma: the values are sent comma-separated";

function holdsComma(list: readonly unknown[]): boolean {
  return list.some((item) => String(item).includes(","));
}

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  // A list is sent comma-separated; one holding a comma never gets here (queryProblems).
  const joined = (value: Scalar | readonly Scalar[]) =>
    Array.isArray(value) ? value.join(",") : String(value);
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value !== "object" || Array.isArray(value))
      params.append(name, joined(value as Scalar | readonly Scalar[]));
    else
      for (const [op, v] of Object.entries(value))
        if (v !== undefined) params.append(`${name}[${op}]`, joined(v));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A UUID v7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. */
function uuidv7(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  let text = "";
  for (let i = 0; i < 16; i++)
    text += (i === 4 || i === 6 || i === 8 || i === 10 ? "-" : "") + HEX[bytes[i]!];
  return text;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
