import { MINIMUM_NOTICE_DAYS } from "../../diagnostics/sunset.ts";
import { addDays, dateValue, daysBetween, q, type LintContext } from "../context.ts";

/**
 * version-name, version-sunset, sunset-near, base-url: the versions of api.yaml are v1, v2, …
 * consecutive; deprecations are announced with a sunset at least 90 days later and only when
 * a successor exists; base_url can prefix every path.
 */
const sunsetWarningDays = 30;

export function versionRules(ctx: LintContext): void {
  versionNames(ctx);
  sunsets(ctx);
  sunsetNear(ctx);
  baseUrl(ctx);
  retired(ctx);
  drafts(ctx);
}

/**
 * version-draft: drafts (`draft: true`) come after every published version (clients move from
 * a published version to the next one, never to a draft and back), and a draft is neither
 * deprecated nor retired: it was never published.
 */
function drafts(ctx: LintContext): void {
  const versions = ctx.defs.versions;
  versions.forEach((v, i) => {
    if (!v.draft) {
      const draft = versions.slice(0, i).find((d) => d.draft);
      if (draft) {
        ctx.report("version-draft", draft.at("draft"), `${draft.name} is a draft but ${v.name}, after it, is published`, `publish ${draft.name} first (remove draft: true), or mark ${v.name} draft too`);
      }
      return;
    }
    for (const key of ["deprecated", "retired"] as const) {
      if (v[key]) ctx.report("version-draft", v.at(key), `${v.name} is a draft: it was never published, so it cannot be ${key}`, `remove ${key} from ${v.name}, or remove ${v.name} itself`);
    }
  });
}

function versionNames(ctx: LintContext): void {
  const versions = ctx.defs.versions;
  if (versions.length === 0) {
    ctx.report("version-name", ctx.defs.at("versions"), "api.yaml defines no version", "add versions: { v1: {} }");
    return;
  }
  // Malformed names are reported one by one; the well-formed ones must run v1, v2, … in order.
  let wellFormed = 0;
  let previous: string | undefined;
  for (const v of versions) {
    const name = v.name;
    const next = `v${wellFormed + 1}`;
    if (/^v[1-9]\d*$/.test(name)) {
      wellFormed++;
      if (name !== next) {
        ctx.report(
          "version-name",
          v.at(),
          previous === undefined
            ? `versions are consecutive from v1: the first version must be v1, not ${q(name)}`
            : previous === `v${wellFormed - 1}`
              ? `versions are consecutive from v1 in order: after ${previous} comes ${next}, not ${q(name)}`
              : `versions are consecutive from v1 in order: version number ${wellFormed} must be ${next}, not ${q(name)}`,
          `rename it ${next} (and every added, removed and renamed.in that names it)`,
        );
      }
      previous = name;
      continue;
    }
    let problem: string;
    let fix = `rename it ${next}`;
    if (/^[vV]?\d+[._-]\d+/.test(name)) {
      problem = `${q(name)} is a minor version; minor versions are not allowed, every version is a major version vN`;
      fix = previous === undefined ? `rename it ${next}` : `make it the next major version ${next}, or fold its changes into ${previous}`;
    } else if (/^V[1-9]\d*$/.test(name)) {
      problem = `${q(name)} must be a lowercase v followed by a number`;
      fix = `rename it ${name.toLowerCase()}`;
    } else if (/^[vV]0+$/.test(name)) {
      problem = `${q(name)}: versions start at v1`;
      fix = "remove it, or number the versions from v1";
    } else if (/^[vV]0\d+$/.test(name)) {
      problem = `${q(name)} has a leading zero`;
      fix = `rename it v${Number(name.slice(1))}`;
    } else problem = `${q(name)} is not a version name; versions are v1, v2, … (v followed by a number)`;
    ctx.report("version-name", v.at(), problem, `${fix} (and every added, removed and renamed.in that names it)`);
  }
}

function sunsets(ctx: LintContext): void {
  const versions = ctx.defs.versions;
  versions.forEach((v, i) => {
    const { deprecated, sunset } = v;
    let datesOk = true;
    for (const [key, value] of [["deprecated", deprecated], ["sunset", sunset]] as const) {
      if (value !== undefined && dateValue(value) === undefined) {
        datesOk = false;
        ctx.report("version-sunset", v.at(key), `${key} ${q(value)} of ${v.name} is not a real calendar date`, "write an existing date as YYYY-MM-DD");
      }
    }
    if (deprecated !== undefined && sunset === undefined) {
      ctx.report(
        "version-sunset",
        v.at("deprecated"),
        `${v.name} is deprecated but has no sunset date`,
        datesOk ? `add sunset: ${addDays(deprecated, MINIMUM_NOTICE_DAYS)} (or later) to ${v.name}` : `add a sunset at least ${MINIMUM_NOTICE_DAYS} days after deprecated`,
      );
    }
    if (sunset !== undefined && deprecated === undefined) {
      ctx.report(
        "version-sunset",
        v.at("sunset"),
        `${v.name} has a sunset date but is not deprecated`,
        datesOk ? `add deprecated: with a date no later than ${addDays(sunset, -MINIMUM_NOTICE_DAYS)}, or remove sunset` : "add deprecated:, or remove sunset",
      );
    }
    const lifetime = daysBetween(deprecated, sunset);
    if (lifetime !== undefined && lifetime < MINIMUM_NOTICE_DAYS) {
      ctx.report(
        "version-sunset",
        v.at("sunset"),
        `sunset ${sunset} of ${v.name} is ${lifetime} days after its deprecation on ${deprecated}; a deprecated version stays at least ${MINIMUM_NOTICE_DAYS} days`,
        `use sunset: ${addDays(deprecated!, MINIMUM_NOTICE_DAYS)} or later`,
      );
    }
    if (i === versions.length - 1 && (deprecated !== undefined || sunset !== undefined)) {
      ctx.report(
        "version-sunset",
        v.at(deprecated !== undefined ? "deprecated" : "sunset"),
        `${v.name} is the last version and cannot be deprecated: it has no successor for clients to move to`,
        `add the successor v${i + 2} to versions, or remove deprecated and sunset from ${v.name}`,
      );
    }
  });
}

/** A retired version was deprecated with a sunset, comes before every live version, and is not the last. */
function retired(ctx: LintContext): void {
  const versions = ctx.defs.versions;
  versions.forEach((v, i) => {
    if (!v.retired) return;
    if (!v.deprecated || !v.sunset) {
      ctx.report("version-sunset", v.at("retired"), `${v.name} is retired but was never deprecated with a sunset date`, `add deprecated and sunset dates to ${v.name}; retire it once the sunset has passed`);
    }
    // Checked on the definitions, not only on the output: once a run with a later --today has
    // taken the version's folder away, the gate has no published document left to hold it to.
    const early = v.sunset !== undefined ? daysBetween(ctx.today, v.sunset) : undefined;
    if (v.deprecated && early !== undefined && early > 0) {
      ctx.report(
        "version-sunset",
        v.at("retired"),
        `${v.name} is retired before its sunset on ${v.sunset} (today is ${ctx.today}): its clients were promised it until then`,
        `remove retired: true from ${v.name} (canon serves it until then); retire it on or after ${v.sunset}`,
      );
    }
    if (i === versions.length - 1) {
      ctx.report("version-sunset", v.at("retired"), `${v.name} is the last version and cannot be retired`, "add the next version first");
    } else if (i > 0 && !versions[i - 1]!.retired) {
      ctx.report("version-sunset", v.at("retired"), `${v.name} is retired but ${versions[i - 1]!.name}, before it, is not`, "retire versions from the oldest on");
    }
  });
}

function sunsetNear(ctx: LintContext): void {
  for (const v of ctx.defs.versions) {
    if (v.deprecated === undefined || v.sunset === undefined || v.retired) continue;
    const days = daysBetween(ctx.today, v.sunset);
    if (days === undefined || days > sunsetWarningDays) continue;
    const when =
      days < 0
        ? `passed on ${v.sunset}, ${-days} day${days === -1 ? "" : "s"} ago`
        : days === 0
          ? `is today, ${v.sunset}`
          : `is on ${v.sunset}, in ${days} day${days === 1 ? "" : "s"}`;
    ctx.report(
      "sunset-near",
      v.at("sunset"),
      `the sunset of ${v.name} ${when}`,
      `once clients have moved to its successor, write retired: true on ${v.name} in api.yaml (canon serves it until then)`,
    );
  }
}

function baseUrl(ctx: LintContext): void {
  const value = ctx.defs.baseUrl;
  const at = ctx.defs.at("base_url");
  const example = "https://api.example.com";
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || !/^https?:\/\//i.test(value)) {
    ctx.report("base-url", at, `base_url ${q(value)} is not an absolute http(s) URL`, `write it like ${example}`);
    return;
  }
  if (url.username || url.password) {
    ctx.report("base-url", at, `base_url ${q(value)} contains credentials`, `remove them: ${url.origin}`);
    return;
  }
  if (url.search || url.hash || value.includes("?") || value.includes("#")) {
    ctx.report("base-url", at, `base_url ${q(value)} has a query or fragment; paths are appended to it`, `use ${url.origin}${url.pathname.replace(/\/+$/, "")}`);
    return;
  }
  const segments = url.pathname.split("/").filter(Boolean);
  if (segments.length > 0 && /^v\d+/i.test(segments[0]!)) {
    ctx.report(
      "base-url",
      at,
      `base_url ${q(value)} has a path that starts with a version (/${segments[0]}); canon puts the version first in every path itself`,
      `use ${url.origin}`,
    );
    return;
  }
  if (value.endsWith("/")) {
    ctx.report("base-url", at, `base_url ${q(value)} ends with a slash`, `use ${q(value.replace(/\/+$/, ""))}`);
  }
}
