import type { ApiModel } from "./types.ts";

/**
 * Keeps the model's parts the same objects from one generation to the next while they are equal
 * (`canon dev`, one process generating again and again): each resource of each version and each
 * storage resource is replaced by the object an earlier model had for the same JSON text. A save
 * that changes one resource then leaves every other part as it was, and an emitter can remember
 * what it built from a part by the object (a WeakMap) instead of comparing texts. Parts are never
 * modified after the model is built, so a shared object is as good as an equal one.
 */
export class ModelParts {
  private known = new Map<string, object>();

  /** The model with its parts replaced by the remembered equal ones; remembers this model's parts. */
  intern(model: ApiModel): ApiModel {
    const next = new Map<string, object>();
    const same = <T extends object>(part: T): T => {
      const text = JSON.stringify(part);
      const kept = (next.get(text) ?? this.known.get(text) ?? part) as T;
      next.set(text, kept);
      return kept;
    };
    for (const version of model.versions) version.resources = version.resources.map(same);
    model.storage = model.storage.map(same);
    // Only the last model's parts are kept: memory stays that of one model.
    this.known = next;
    return model;
  }
}
