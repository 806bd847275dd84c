import { existsSync, readFileSync } from "node:fs";

/** The folder of canon's package.json (the sources run from generator/, the build from dist/generator/). */
export function packageRoot(from: string | URL = import.meta.url): URL {
  let dir = new URL(".", from);
  for (let i = 0; i < 8; i++) {
    if (existsSync(new URL("package.json", dir)) && existsSync(new URL("templates/", dir))) return dir;
    dir = new URL("..", dir);
  }
  throw new Error("canon: cannot find its package folder (templates/ beside package.json)");
}

/** canon's own package name and version, as its package.json says. */
export function canonPackage(): { name: string; version: string } {
  const { name, version } = JSON.parse(readFileSync(new URL("package.json", packageRoot()), "utf8")) as { name: string; version: string };
  return { name, version };
}
